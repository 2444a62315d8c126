"""Shape inference and module checks: infer.py (the driver, the rule context and helpers), one module
per opcode family with its shape rules and verifier checks (the module each opcode's entry in the
opcode table names), and verify.py (the finding codes, the driver and the module-level rules)."""
from .infer import RULES, ShapeError, infer_shape, shapes_compatible

__all__ = ["RULES", "ShapeError", "infer_shape", "shapes_compatible"]
