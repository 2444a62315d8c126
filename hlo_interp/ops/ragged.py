"""ragged-dot: a dot_general whose lhs has one ragged dimension split into g contiguous groups by
group_sizes (operand 2, an integer array [..., g]).  With the dot dimension numbers plus
lhs_ragged_dims={r} and rhs_group_dims (at most one), three modes, by the kind of lhs dimension r:

  1. r is a non-contracting lhs dimension (m): rhs has a group dimension of size g;
     [b..,m..,k..] x [g,b..,k..,n..] -> [b..,m..,n..]: the rows of group i use rhs's slice i.
  2. r is a contracting dimension (k); no rhs group dimension:
     [b..,m..,k..] x [b..,k..,n..] -> [g,b..,m..,n..]: result i contracts only group i's k entries.
  3. r is a batch dimension; no rhs group dimension: [b..,m..,k..] x [b..,k..,n..] -> [b..,m..,n..]:
     every group multiplies its own batch entries, which is the plain dot_general; group_sizes is not
     read (as JAX's lowering, which XLA:CPU runs: batch entries outside every group are computed too).

group_sizes is [g] (the same groups everywhere) or [d.., g] where d.. are, in order, the lhs batch
dimensions (modes 1 and 2) followed by the lhs dimensions of the ragged one's kind that come before it
(mode 1: non-contracting, mode 2: contracting; mode 3: the batch dimensions before it).  Group i covers
positions [start_i, start_i + size_i) along r, start_i the sum of the sizes before it; positions past
the last group belong to no group (their rows are zero in mode 1).

Computed as XLA:CPU does after its rewrite, by masking: the lhs is expanded to [g, lhs...] with the
entries outside group i zeroed, then one dot_general (hlo_interp/ops/dot.py: the same types,
accumulation and result-type rules as dot; the result type is the instruction's, i.e. the preferred
element type) contracts the group dimension with rhs's (mode 1), keeps it as a batch dimension (mode 2,
rhs broadcast over it), or is not needed (mode 3).  (XLA:CPU itself has no ragged-dot kernel: it
refuses the op; the reference is JAX's lax.ragged_dot_general lowering, which XLA:CPU runs.)
"""
from __future__ import annotations

import numpy as np

from .. import ir
from .dot import dot_general
from .registry import error_at, kernel, unsupported


def _group_masks(gs: np.ndarray, lhs_shape, r: int, gs_dims) -> np.ndarray:
    """pred[g, *lhs_shape broadcastable]: entry i is True where the lhs position is in group i."""
    g = gs.shape[-1]
    rank = len(lhs_shape)
    gs = gs.astype(np.int64)
    ends = np.cumsum(gs, axis=-1)
    starts = ends - gs
    # move gs's leading axes onto the lhs dimensions they index, group axis first
    shape = [1] * (rank + 1)
    shape[0] = g
    for k, d in enumerate(gs_dims):
        shape[d + 1] = gs.shape[k]
    order = sorted(range(len(gs_dims)), key=lambda k: gs_dims[k])
    perm = [gs.ndim - 1] + order
    starts = np.transpose(starts, perm).reshape(shape)
    ends = np.transpose(ends, perm).reshape(shape)
    pos_shape = [1] * (rank + 1)
    pos_shape[r + 1] = lhs_shape[r]
    pos = np.arange(lhs_shape[r]).reshape(pos_shape)
    return (starts <= pos) & (pos < ends)


def _zeros_like_dtype(dtype):
    return np.zeros((), dtype)


def sh1(dims) -> tuple:
    """Dimension numbers shifted past a new leading (group) axis."""
    return tuple(d + 1 for d in dims)


@kernel("ragged-dot")
def _k_ragged_dot(ins, ctx):
    a = ins.attrs
    lb = tuple(a.get("lhs_batch_dims", ()))
    rb = tuple(a.get("rhs_batch_dims", ()))
    lc = tuple(a.get("lhs_contracting_dims", ()))
    rc = tuple(a.get("rhs_contracting_dims", ()))
    lr = tuple(a.get("lhs_ragged_dims", ()))
    rg = tuple(a.get("rhs_group_dims", ()))
    sh = ins.shape
    if sh is None or not isinstance(sh, ir.ArrayShape):
        raise error_at(ins, "ragged-dot needs an array result shape")
    out_dtype = sh.element_type.dtype
    shapes = ctx.operand_shapes(ins)
    if len(shapes) != 3 or not all(isinstance(s, ir.ArrayShape) for s in shapes):
        raise error_at(ins, "ragged-dot takes three array operands (lhs, rhs, group_sizes)")
    lshape, rshape, gshape = (tuple(s.dims) for s in shapes)
    if shapes[2].element_type.kind not in ("sint", "uint"):
        raise error_at(ins, "ragged-dot: group_sizes must be integers")
    if len(lr) != 1:
        raise error_at(ins, f"ragged-dot needs exactly one lhs_ragged_dims, got {list(lr)}")
    if len(rg) > 1:
        raise error_at(ins, f"ragged-dot allows at most one rhs_group_dims, got {list(rg)}")
    if len(lb) != len(rb) or len(lc) != len(rc):
        raise error_at(ins, "ragged-dot: lhs and rhs need as many batch and contracting dimensions as each other")
    r = lr[0]
    lrank, rrank = len(lshape), len(rshape)
    for name, dims, rank, extra in (("lhs", lb + lc, lrank, lr), ("rhs", rb + rc + rg, rrank, ())):
        if any(not 0 <= d < rank for d in dims + extra) or len(set(dims)) != len(dims):
            raise error_at(ins, f"ragged-dot: {name} dimensions {list(dims)} are invalid for rank {rank}")
    if not gshape:
        raise error_at(ins, "ragged-dot: group_sizes must have at least one dimension (the groups)")
    g = gshape[-1]
    if r in lb:
        mode, kind = 3, [d for d in lb if d < r]
        if rg:
            raise error_at(ins, "ragged-dot: a ragged batch dimension allows no rhs_group_dims")
        gs_dims_full = kind
    elif r in lc:
        mode = 2
        if rg:
            raise error_at(ins, "ragged-dot: a ragged contracting dimension allows no rhs_group_dims")
        gs_dims_full = list(lb) + [d for d in lc if d < r]
    else:
        mode = 1
        if len(rg) != 1:
            raise error_at(ins, "ragged-dot: a ragged non-contracting dimension needs one rhs_group_dims")
        if rshape[rg[0]] != g:
            raise error_at(ins, f"ragged-dot: the rhs group dimension has size {rshape[rg[0]]}, group_sizes "
                                f"has {g} groups")
        free = [d for d in range(lrank) if d not in lb and d not in lc]
        gs_dims_full = list(lb) + [d for d in free if d < r]
    if len(gshape) == 1:
        gs_dims = []
    elif len(gshape) - 1 == len(gs_dims_full):
        gs_dims = gs_dims_full
        if any(gshape[k] != lshape[d] for k, d in enumerate(gs_dims)):
            raise error_at(ins, f"ragged-dot: group_sizes {list(gshape)} does not match the lhs dimensions "
                                f"{[lshape[d] for d in gs_dims]} it is indexed by")
    else:
        raise unsupported(ins, f"group_sizes of shape {list(gshape)} for this ragged mode")

    def run(lhs, rhs, gsz):
        if mode == 3:
            return dot_general(lhs, rhs, out_dtype, lhs_batch=lb, rhs_batch=rb,
                               lhs_contracting=lc, rhs_contracting=rc)
        mask = _group_masks(np.asarray(gsz), lhs.shape, r, gs_dims)
        lm = np.where(mask, lhs[None], _zeros_like_dtype(lhs.dtype))
        if mode == 1:
            return dot_general(lm, rhs, out_dtype, lhs_batch=sh1(lb), rhs_batch=rb,
                               lhs_contracting=sh1(lc) + (0,), rhs_contracting=rc + rg)
        rm = np.broadcast_to(rhs[None], (g,) + rhs.shape)
        return dot_general(lm, rm, out_dtype, lhs_batch=(0,) + sh1(lb), rhs_batch=(0,) + sh1(rb),
                           lhs_contracting=sh1(lc), rhs_contracting=sh1(rc))
    return run
