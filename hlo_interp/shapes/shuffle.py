"""Shape rule of shuffle."""
from __future__ import annotations

from .. import ir
from .infer import Ctx, Shape, ShapeError, human, kept, register


# Shuffle (xla/shuffle.h, xla/hlo/transforms/expanders/shuffle_expander.cc): the result has the
# operand's shape; the mode's attributes must fit the operand and the shuffled dimensions.

SHUFFLE_MODES = {"rotate": "shifts", "permute": "indices", "multi_rotate": "multi_shifts"}


def _shuffle_literal_shape(c: Ctx, name: str):
    lit = c.attr(name)
    shape = getattr(lit, "shape", None)
    if not (isinstance(shape, ir.ArrayShape) and shape.element_type.kind in ("sint", "uint")):
        raise ShapeError(f"shuffle {name} must be an integer array literal")
    return shape


def _shuffle(c: Ctx) -> Shape:
    c.arity(1)
    s = c.array_op(0)
    for name in ("dimensions", "mode"):
        if name not in c.attrs:
            raise ShapeError(f"shuffle needs {name}=")
    dims = c.dims_attr()
    if len(set(dims)) != len(dims):
        raise ShapeError(f"shuffle dimensions {{{','.join(map(str, dims))}}} repeat a dimension")
    for d in dims:
        if not 0 <= d < s.rank:
            raise ShapeError(f"shuffle dimension {d} is out of range for the operand {human(s)} (rank {s.rank})")
    mode = c.attr("mode")
    if mode not in SHUFFLE_MODES:
        raise ShapeError(f"unknown shuffle mode {mode}; expected one of {', '.join(SHUFFLE_MODES)}")
    own = SHUFFLE_MODES[mode]
    for other in SHUFFLE_MODES.values():
        if other != own and other in c.attrs:
            raise ShapeError(f"shuffle in {mode} mode takes {own}=, not {other}=")
    if mode == "rotate":
        shifts = c.attr("shifts", ())
        if len(shifts) != len(dims):
            raise ShapeError(f"shuffle rotate has {len(shifts)} shifts for {len(dims)} dimensions")
    elif mode == "permute":
        if "indices" not in c.attrs:
            raise ShapeError("shuffle in permute mode needs indices=")
        idx_shape = _shuffle_literal_shape(c, "indices")
        idx = idx_shape.dims
        # One coordinate per shuffled dimension in an innermost dimension (which a shuffle of one
        # dimension may leave out); every other dimension is the operand's or 1 (shared).
        lead = idx[:-1] if len(idx) == s.rank + 1 else idx
        if not (len(idx) == s.rank + 1 and idx[-1] == len(dims)) and \
                not (len(dims) == 1 and len(idx) == s.rank):
            raise ShapeError(f"shuffle indices {human(idx_shape)} do not fit the operand {human(s)} and "
                             f"{len(dims)} shuffled dimension(s): expected the operand's dimensions (or 1) "
                             f"followed by {len(dims)}")
        for k, (n, m) in enumerate(zip(lead, s.dims)):
            if n not in (m, 1):
                raise ShapeError(f"shuffle indices dimension {k} has size {n}; expected {m} (the operand's) or 1")
    else:
        if len(dims) != 1:
            raise ShapeError(f"shuffle in multi_rotate mode rotates one dimension, not {len(dims)}")
        if "multi_shifts" not in c.attrs:
            raise ShapeError("shuffle in multi_rotate mode needs multi_shifts=")
        ms_shape = _shuffle_literal_shape(c, "multi_shifts")
        ms = ms_shape.dims
        if len(ms) != s.rank:
            raise ShapeError(f"shuffle multi_shifts {human(ms_shape)} must have the operand's rank {s.rank}")
        for k, (n, m) in enumerate(zip(ms, s.dims)):
            if k == dims[0] and n != 1:
                raise ShapeError(f"shuffle multi_shifts must have size 1 along the rotated dimension {k}, not {n}")
            if n not in (m, 1):
                raise ShapeError(f"shuffle multi_shifts dimension {k} has size {n}; expected {m} (the operand's) or 1")
    return kept(s)


register("shuffle", _shuffle)
