"""get-dimension-size, set-dimension-size, dynamic-reshape.

Dynamic dimensions: a value of a shape with a dynamic dimension (`f32[<=16,4]`) is an array whose
extent in that dimension is the dynamic size (at most the bound): the evaluator's convention for
parameters and results (hlo_interp/evaluator.py).  So:

  * get-dimension-size(x), dimensions={d}: s32[] holding x's extent in d (the dynamic size, or the
    static one);
  * set-dimension-size(x, n), dimensions={d}: x with its dynamic size in d set to n: when the result's
    dimension d is dynamic, the value keeps the first n entries in d, as a view of the operand's
    buffer (XLA keeps the buffer: an op that reads past the dynamic size, such as a reshape to a static
    shape, or a larger size set again, sees the operand's elements there).  A reduce over d combines
    the first n, get-dimension-size gives n: both as XLA:CPU does.  n outside [0, bound] is refused
    (unsupported): XLA:CPU keeps such a size as given (get-dimension-size returns 11 or -2 for a bound
    of 8) while its ops clamp it, which an array cannot represent.  When the declared result keeps d
    static, the values are returned unchanged;
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
    in_shape = ctx.operand_shapes(ins)[0]
    in_bounds = tuple(in_shape.dims) if isinstance(in_shape, ir.ArrayShape) else None
    if in_bounds is None or ir.UNBOUNDED in in_bounds:
        in_bounds = None

    def run(x, n):
        k = int(n)
        if not 0 <= k <= bound:
            raise unsupported(ins, f"dynamic size {k} outside [0, {bound}] (XLA:CPU keeps such a size as "
                                   f"given; an array cannot represent it)")
        if k == x.shape[d]:
            return x
        # XLA keeps the operand's buffer: the result is a view of its corner, so that an op reading the
        # buffer past the dynamic size (one XLA does not mask) sees what XLA's buffer holds there
        full = buffer_of(x, in_bounds) if in_bounds is not None else x
        if full.base is not None:  # a view of another array: own the buffer (views collapse to their base)
            full = full.copy()
        if k > full.shape[d]:
            raise unsupported(ins, f"dynamic size {k} past the operand's {full.shape[d]} elements")
        idx = [slice(0, m) for m in x.shape]
        idx[d] = slice(0, k)
        return full[tuple(idx)]
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


# --------------------------------------------------------------------------------------------------
# Dynamic sizes through other ops (XLA's DynamicDimensionInference, xla/service/dynamic_dimension_inference.cc)
#
# Values of dynamic shapes are arrays of the dynamic size (see the module docstring), so most kernels
# give XLA's sizes by themselves (transpose, reverse, reduce, concatenate, pad, sort, elementwise ops,
# a dot's batch and free dimensions).  `adapt_dynamic` wraps the kernels of the ops that need XLA's
# rules spelled out, when an operand has a dynamic dimension:
#   * broadcast: an operand dimension's dynamic size goes to the result dimension it maps to;
#   * slice: the size becomes (size - start + stride - 1) / stride (XLA's formula, which ignores the
#     limit), at most the result's bound; a slice of one element is static;
#   * reshape: the dynamic size follows the group of dimensions (common factors) it belongs to: a group
#     merging into one result dimension gives it bound / input bound * size (XLA's scaling); a group
#     splitting one dimension into several keeps their bounds (what XLA:CPU gives); several into
#     several is refused (XLA flattens and unflattens);
#   * dot: contracting dimensions of different sizes are cut to the smaller (XLA pads the dynamic
#     operand with zeros there);
#   * reduce: a reduced dynamic dimension is padded to its bound with the init value (XLA reduces the
#     padded buffer so masked: the tree, hence the rounding, of the bound's size);
# and every result dimension the module declares static gets its full size (the padded buffer: XLA's
# values past a dynamic size are whatever the buffer holds, zeros here; get-dimension-size gives the
# static size).

_NOT_ADAPTED = frozenset({"parameter", "tuple", "get-tuple-element", "get-dimension-size", "set-dimension-size",
                          "dynamic-reshape", "constant", "iota", "rng", "rng-bit-generator", "after-all",
                          "infeed", "outfeed", "send", "recv", "send-done", "recv-done", "while", "conditional",
                          "call", "custom-call", "fusion", "opt-barrier", "domain", "copy-start", "copy-done",
                          "async-start", "async-update", "async-done", "partition-id", "replica-id"})


def _cut(x: np.ndarray, sizes) -> np.ndarray:
    if tuple(sizes) == x.shape:
        return x
    return x[tuple(slice(0, k) for k in sizes)]


def _corner_base(x: np.ndarray, dims):
    """The array of shape `dims` whose leading corner `x` is (a view of it), or None."""
    b = x.base
    if not isinstance(b, np.ndarray) or b.shape != dims or b.dtype != x.dtype or b.strides != x.strides:
        return None
    if b.__array_interface__["data"][0] != x.__array_interface__["data"][0]:
        return None
    return b


def buffer_of(x: np.ndarray, dims) -> np.ndarray:
    """`x` (a value of a dynamic shape: the array of its dynamic sizes) in its buffer of the bounds'
    shape `dims`: the buffer it was cut from when there is one (set-dimension-size keeps its operand's
    buffer; the ops adapted below compute on buffers and cut), zeros past the sizes otherwise (XLA's
    buffer holds whatever an earlier op left there)."""
    dims = tuple(dims)
    if x.shape == dims:
        return x
    b = _corner_base(x, dims)
    return b if b is not None else _pad(x, dims, None)


def _pad(x: np.ndarray, dims, value=None) -> np.ndarray:
    """`x` padded to `dims` with `value` (XLA's masking of a dynamic operand: the reducer's init, the
    dot's zero), or with what its buffer holds when `value` is None (see buffer_of)."""
    dims = tuple(dims)
    if x.shape == dims:
        return x
    if value is None:
        b = _corner_base(x, dims)
        if b is not None:
            return b
    out = np.zeros(dims, x.dtype) if value is None else np.full(dims, value, x.dtype)
    out[tuple(slice(0, min(a, b)) for a, b in zip(x.shape, dims))] = _cut(x, [min(a, b) for a, b in zip(x.shape, dims)])
    return out


def _static_dims(shape: ir.ArrayShape):
    dyn = tuple(shape.dynamic) if shape.dynamic else (False,) * len(shape.dims)
    return tuple(shape.dims), dyn


def _pad_static_result(x, shape: ir.ArrayShape):
    """The declared static dimensions at their full size (the padded buffer)."""
    if not isinstance(x, np.ndarray) or x.ndim != len(shape.dims):
        return x
    dims, dyn = _static_dims(shape)
    want = tuple(k if (f or n == ir.UNBOUNDED) else max(k, n) for k, n, f in zip(x.shape, dims, dyn))
    return x if want == x.shape else _pad(x, want)


def _common_factors(a, b) -> list:
    """[(i, j)] where the products of a[:i] and b[:j] agree: the boundaries of the groups of dimensions
    a reshape maps onto each other (XLA's CommonFactors, for the non-degenerate cases used here)."""
    out = [(0, 0)]
    i = j = 0
    pa = pb = 1
    while i < len(a) or j < len(b):
        if i < len(a) and (pa <= pb or j == len(b)):
            pa *= a[i]
            i += 1
        else:
            pb *= b[j]
            j += 1
        if pa == pb and (i, j) != out[-1]:
            out.append((i, j))
    if out[-1] != (len(a), len(b)):
        out.append((len(a), len(b)))
    return out


def _reshape_sizes(in_bounds, in_sizes, out_bounds, out_dyn, ins):
    """XLA's dynamic sizes of a reshape's result (see above)."""
    out = list(out_bounds)
    factors = _common_factors(tuple(in_bounds), tuple(out_bounds))
    for d, (b, s) in enumerate(zip(in_bounds, in_sizes)):
        if s == b:
            continue
        g = next(k for k in range(len(factors) - 1) if factors[k][0] <= d < factors[k + 1][0])
        (i0, o0), (i1, o1) = factors[g], factors[g + 1]
        if i1 - i0 > 1 and o1 - o0 > 1:
            raise unsupported(ins, "reshape of a dynamic dimension whose group maps several dimensions to "
                                   "several (XLA flattens and unflattens it)")
        if o1 - o0 > 1:
            # split into several result dimensions: XLA:CPU keeps their bounds (measured: a [<=4,3] of
            # size 1..4 reshaped to [<=2,2,3] has size 2; the size is not carried over)
            continue
        od = o0
        ob = out_bounds[od]
        if b == ob:
            out[od] = s
        elif b > ob:
            out[od] = s // (b // ob)
        else:
            out[od] = out[od] // b * s
    return out


def _shape_is_dynamic(shape) -> bool:
    if isinstance(shape, ir.TupleShape):
        return any(_shape_is_dynamic(e) for e in shape.elements)
    return isinstance(shape, ir.ArrayShape) and any(shape.dynamic)


def has_bounded_dynamic(shape) -> bool:
    """Whether a shape has a dynamic dimension with a bound (`<=N`) in any of its leaves."""
    if isinstance(shape, ir.TupleShape):
        return any(has_bounded_dynamic(e) for e in shape.elements)
    return isinstance(shape, ir.ArrayShape) and any(
        d and n != ir.UNBOUNDED for d, n in zip(shape.dynamic, shape.dims))


def entry_result_buffers(v, shape):
    """XLA:CPU's output convention for the entry's results of dynamic shapes: the buffer of the bounds'
    size holding the elements of the dynamic sizes compact, in row-major order, at its start (an
    `s32[<=3,<=4]` of sizes [2,3] comes back as s32[3,4] whose first 6 elements are the 2x3 values);
    the rest of the buffer is undefined in XLA (uninitialized memory), zeros here.  Unbounded
    dimensions keep their size."""
    if isinstance(shape, ir.TupleShape):
        return tuple(entry_result_buffers(x, s) for x, s in zip(v, shape.elements))
    if not isinstance(shape, ir.ArrayShape) or not isinstance(v, np.ndarray):
        return v
    want = tuple(n if (d and n != ir.UNBOUNDED) else k for k, n, d in zip(v.shape, shape.dims, shape.dynamic))
    if want == v.shape:
        return v
    out = np.zeros(want, v.dtype)
    out.reshape(-1)[:v.size] = v.reshape(-1)
    return out


def module_has_dynamic(module: ir.Module) -> bool:
    """Whether any instruction of the module has a dynamic dimension in its shape."""
    return any(_shape_is_dynamic(i.shape) for c in module.computations for i in c.instructions)


def adapt_dynamic(ins, ctx, fn):
    """`fn` (the kernel of `ins`) with XLA's dynamic-size rules applied when an operand has a dynamic
    dimension (see above); `fn` itself otherwise."""
    if ins.opcode in _NOT_ADAPTED or not isinstance(ins.shape, ir.ArrayShape):
        return fn
    try:
        shapes = ctx.operand_shapes(ins)
    except Exception:  # noqa: BLE001 - shapes unknown: nothing to adapt
        return fn
    if not any(isinstance(s, ir.ArrayShape) and any(s.dynamic) for s in shapes):
        return fn
    if any(isinstance(s, ir.ArrayShape) and ir.UNBOUNDED in s.dims for s in [*shapes, ins.shape]):
        return fn  # unbounded (`?`) dimensions have no buffer size to pad to
    out_shape = ins.shape
    out_bounds, out_dyn = _static_dims(out_shape)
    op = ins.opcode

    if op == "broadcast":
        in_bounds = tuple(shapes[0].dims)
        bdims = tuple(ins.attrs.get("dimensions", ()))

        def run_broadcast(x):
            if x.shape == in_bounds:
                return fn(x)
            r = fn(_pad(x, in_bounds))
            sizes = list(r.shape)
            for i, j in enumerate(bdims):
                if x.shape[i] < in_bounds[i] and out_dyn[j]:
                    sizes[j] = x.shape[i]
            return _cut(r, sizes)
        return run_broadcast

    if op == "slice":
        in_bounds = tuple(shapes[0].dims)
        spec = ins.attrs.get("slice", ())

        def run_slice(x):
            if x.shape == in_bounds:
                return _pad_static_result(fn(x), out_shape)
            r = fn(_pad(x, in_bounds))
            sizes = list(r.shape)
            for i, sd in enumerate(spec):
                start, stride = sd.start, sd.stride
                if -(-(sd.limit - start) // stride) == 1:
                    continue  # one element: no longer dynamic (XLA)
                if x.shape[i] < in_bounds[i] and out_dyn[i]:
                    num = x.shape[i] - start + stride - 1
                    k = abs(num) // stride * (1 if num >= 0 else -1)  # C's truncating division
                    sizes[i] = min(max(k, 0), r.shape[i])
            return _cut(r, sizes)
        return run_slice

    if op == "reshape":
        in_bounds = tuple(shapes[0].dims)

        def run_reshape(x):
            if x.shape == in_bounds:
                return fn(x)
            sizes = _reshape_sizes(in_bounds, x.shape, out_bounds, out_dyn, ins)
            sizes = [s if f else b for s, b, f in zip(sizes, out_bounds, out_dyn)]
            if math.prod(sizes) == x.size:
                return np.ascontiguousarray(x).reshape(sizes)
            return _cut(np.ascontiguousarray(_pad(x, in_bounds)).reshape(out_bounds), sizes)
        return run_reshape

    if op == "reduce":
        k = len(ins.operands) // 2
        rdims = set(ins.attrs.get("dimensions", ()))
        bounds = [tuple(sh.dims) for sh in shapes[:k]]

        def run_reduce(*xs):
            # XLA reduces the padded buffer, the padding set to the init value: the same tree as the
            # bound's size (a sum of 9 of [<=12] is added as 12 terms)
            xs = list(xs)
            for i in range(k):
                x = xs[i]
                want = tuple(b if (j in rdims and b != ir.UNBOUNDED) else x.shape[j] for j, b in enumerate(bounds[i]))
                if want != x.shape:
                    xs[i] = _pad(x, want, xs[k + i])
            return _pad_static_result(fn(*xs), out_shape) if k == 1 else fn(*xs)
        return run_reduce

    if op == "dot":
        dn = ins.attrs
        lc = tuple(dn.get("lhs_contracting_dims", ()))
        rc = tuple(dn.get("rhs_contracting_dims", ()))

        def run_dot(a, b):
            if any(a.shape[i] != b.shape[j] for i, j in zip(lc, rc)):
                ka, kb = list(a.shape), list(b.shape)
                for i, j in zip(lc, rc):
                    ka[i] = kb[j] = min(a.shape[i], b.shape[j])
                a, b = _cut(a, ka), _cut(b, kb)
            return _pad_static_result(fn(a, b), out_shape)
        return run_dot

    def run_padded(*xs):
        return _pad_static_result(fn(*xs), out_shape)
    return run_padded
