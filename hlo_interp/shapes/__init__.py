"""Shape rules (infer.py) and module checks (verify.py)."""
from .infer import RULES, ShapeError, infer_shape, shapes_compatible

__all__ = ["RULES", "ShapeError", "infer_shape", "shapes_compatible"]
