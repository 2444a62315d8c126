"""get-dimension-size, set-dimension-size, dynamic-reshape.

Dynamic dimensions: a value of a shape with a dynamic dimension (`f32[<=16,4]`) is an array whose
extent in that dimension is the dynamic size (at most the bound): the evaluator's convention for
parameters and results (hlo_interp/evaluator.py).  So:

  * get-dimension-size(x), dimensions={d}: s32[] holding x's extent in d (the dynamic size, or the
    static one);
  * set-dimension-size(x, n), dimensions={d}: x with its dynamic size in d set to n: when the result's
    dimension d is dynamic, the value keeps the first n entries in d (XLA treats the rest as padding,
    which no later op reads: a reduce over d sums the first n, get-dimension-size gives n: both as
    XLA:CPU does).  n outside [0, bound] is refused (unsupported): XLA:CPU keeps such a size as given
    (get-dimension-size returns 11 or -2 for a bound of 8) while its ops clamp it, which an array
    cannot represent.  When the declared result keeps d static, the values are returned unchanged;
  * dynamic-reshape(x, s_0, ..., s_{r-1}): x reshaped (row-major, over its actual elements) to the
    sizes given by the s32 scalar operands; a located error when their product is not x's element
    count, or a size exceeds the result's bound or is negative (and, when the plan is built, when the
    result's bounds and the operand's static shape hold different numbers of elements, as XLA checks).
"""
from __future__ import annotations

import math

import numpy as np

from .. import ir
from .registry import error_at, kernel, unsupported


def _dimension(ins, ctx, rank: int) -> int:
    dims = ins.attrs.get("dimensions")
    if not dims or len(dims) != 1:
        raise error_at(ins, f"{ins.opcode} needs exactly one dimension in dimensions={{...}}")
    d = dims[0]
    if not 0 <= d < rank:
        raise error_at(ins, f"{ins.opcode}: dimension {d} is out of range for a rank-{rank} operand")
    return d


def _operand_rank(ins, ctx) -> int:
    s = ctx.operand_shapes(ins)[0]
    if not isinstance(s, ir.ArrayShape):
        raise error_at(ins, f"{ins.opcode}: the operand must be an array")
    return len(s.dims)


@kernel("get-dimension-size")
def _k_get_dimension_size(ins, ctx):
    d = _dimension(ins, ctx, _operand_rank(ins, ctx))

    def run(x):
        return np.asarray(x.shape[d], np.int32)
    return run


@kernel("set-dimension-size")
def _k_set_dimension_size(ins, ctx):
    d = _dimension(ins, ctx, _operand_rank(ins, ctx))
    out = ins.shape
    dynamic = isinstance(out, ir.ArrayShape) and len(out.dynamic) > d and out.dynamic[d]

    if not dynamic:
        def run_static(x, n):
            return x
        return run_static

    bound = out.dims[d]

    def run(x, n):
        k = int(n)
        if not 0 <= k <= bound or k > x.shape[d]:
            raise unsupported(ins, f"dynamic size {k} outside [0, {min(bound, x.shape[d])}] (XLA:CPU keeps "
                                   f"such a size as given; an array cannot represent it)")
        if k == x.shape[d]:
            return x
        idx = [slice(None)] * x.ndim
        idx[d] = slice(0, k)
        return x[tuple(idx)]
    return run


@kernel("dynamic-reshape")
def _k_dynamic_reshape(ins, ctx):
    out = ins.shape
    if not isinstance(out, ir.ArrayShape):
        raise error_at(ins, "dynamic-reshape: the result must be an array")
    rank = len(out.dims)
    nops = len(ins.operands)
    if nops != rank + 1:
        raise error_at(ins, f"dynamic-reshape to rank {rank} takes the operand and {rank} s32 sizes; "
                            f"got {nops - 1} sizes")
    bounds = tuple(out.dims)
    dyn = tuple(out.dynamic) if out.dynamic else (False,) * rank
    xs = ctx.operand_shapes(ins)
    if not isinstance(xs[0], ir.ArrayShape):
        raise error_at(ins, "dynamic-reshape: the operand must be an array")
    for k, s in enumerate(xs[1:], 1):
        if not isinstance(s, ir.ArrayShape) or s.dims or s.element_type.kind not in ("sint", "uint"):
            raise error_at(ins, f"dynamic-reshape: size operand {k} must be an integer scalar")
    if ir.UNBOUNDED not in bounds and ir.UNBOUNDED not in xs[0].dims and \
            math.prod(bounds) != math.prod(xs[0].dims):
        raise error_at(ins, f"dynamic-reshape: the result's bounds {list(bounds)} hold {math.prod(bounds)} "
                            f"elements, the operand's {list(xs[0].dims)} {math.prod(xs[0].dims)} (XLA requires "
                            f"equal static sizes)")

    def run(x, *sizes):
        ss = [int(s) for s in sizes]
        for k, (s, b, f) in enumerate(zip(ss, bounds, dyn)):
            if s < 0 or (b != ir.UNBOUNDED and (s > b if f else s != b)):
                want = f"at most {b}" if f else f"{b}"
                raise error_at(ins, f"dynamic-reshape: size {s} for result dimension {k} "
                                    f"(the result allows {want})")
        if math.prod(ss) != x.size:
            raise error_at(ins, f"dynamic-reshape: sizes {ss} hold {math.prod(ss)} elements; the operand "
                                f"{list(x.shape)} has {x.size}")
        return np.ascontiguousarray(x).reshape(ss)
    return run
