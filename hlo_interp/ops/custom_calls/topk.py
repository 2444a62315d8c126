"""TopK: (values, s32 indices) of the k largest along the last dimension, k = the result's last
dimension.  For f32, XLA:CPU runs its runtime TopK, which ignores the comparator: total order (+NaN
largest, -0 < +0), lower index first on ties.  For other types XLA decomposes TopK into a sort by the
comparator (2 parameters: values; 4: values and s32 indices), then a slice: the same here (stable sort
by the comparator, the first k).
"""
from __future__ import annotations

from ..registry import error_at
from .registry import called, shape_text, target

# --------------------------------------------------------------------------------------------------
# TopK

@target("TopK")
def _t_topk(ins, ctx):
    from ..sort import ComparatorError, comparator_topk, topk
    if len(ins.operands) != 1:
        raise error_at(ins, f"custom-call TopK takes one operand, got {len(ins.operands)}")
    (s,) = ctx.operand_shapes(ins)
    out = ins.shape
    if s is None or s.is_tuple or not s.dims:
        raise error_at(ins, "custom-call TopK: the operand must be an array of rank >= 1")
    if out is None or not out.is_tuple or len(out.elements) != 2 or out.elements[0].is_tuple or \
            out.elements[1].is_tuple:
        raise error_at(ins, f"custom-call TopK: the result must be (values, indices), got {shape_text(out)}")
    vs, ix = out.elements
    k = vs.dims[-1] if vs.dims else -1
    if tuple(vs.dims) != tuple(s.dims[:-1]) + (k,) or tuple(ix.dims) != tuple(vs.dims) or \
            not 0 <= k <= s.dims[-1] or vs.element_type != s.element_type:
        raise error_at(ins, f"custom-call TopK: result {shape_text(out)} does not fit operand {shape_text(s)}")
    idx_dt = ix.element_type.dtype
    comps = called(ins)
    if s.element_type.name == "f32" or not comps:
        # XLA:CPU's runtime TopK (f32): total order, lower index first; the comparator is not called
        if s.element_type.name != "f32":
            raise error_at(ins, "custom-call TopK needs a comparator (called_computations) for "
                                f"{s.element_type.name}")

        def run(x):
            try:
                v, i = topk(x, k, True)
            except ComparatorError as e:
                raise error_at(ins, f"TopK: {e}") from None
            return (v, i.astype(idx_dt))
        return run

    return comparator_topk(ins, ctx, comps[0], k, idx_dt, "custom-call TopK")

