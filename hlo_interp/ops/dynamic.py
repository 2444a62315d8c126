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
from ..opcodes import opcodes_where
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
# Dynamic sizes through other ops (XLA's DynamicDimensionInference, xla/service/dynamic_dimension_inference.cc,
# and its DynamicPadder, xla/service/dynamic_padder.cc)
#
# A value of a dynamic shape is the array of its dynamic sizes (see the module docstring); XLA's is the
# buffer of the bounds, which an op computes on whole.  `adapt_dynamic` wraps the kernel of an op with a
# dynamic operand so that it computes as XLA does: on the operands' buffers (`buffer_of`: what an earlier
# op left past the sizes when known, zeros otherwise), masked where the padder masks (reduce and
# reduce-window with the init value, dot and convolution with zeros, pad with the padding value,
# select-and-scatter's operand with the type's lowest value and its source with the init value, scatter's
# indices with the largest index), and then cut to the result's dynamic sizes, which follow XLA's rules:
#   * elementwise ops: equal sizes stay; a size 1 against a larger one broadcasts; otherwise the smaller;
#   * broadcast, transpose: the size moves with its dimension;
#   * slice: (size - start + stride - 1) / stride (XLA's formula, which ignores the limit), at most the
#     result's bound; a slice of one element is static;
#   * reshape: the size follows the group of dimensions (common factors) it belongs to: a group merging
#     into one result dimension gives it bound / input bound * size (XLA's scaling); a group splitting one
#     dimension into several keeps their bounds (what XLA:CPU gives); several into several is refused;
#   * dot: contracting dimensions of different sizes are cut to the smaller (XLA's zeros); reduce: the
#     kept dimensions keep their sizes (the reduction runs over the masked buffer: the tree, hence the
#     rounding, of the bound's size);
#   * pad: low + high + size + max(size - 1, 0) * interior;
#   * dynamic-slice, gather: a whole dynamic dimension keeps its size, one element of it is static, a
#     part of it is refused (XLA's rule); a gather's batch dimensions take the indices' sizes; the
#     starts clamp to the bounds;
#   * dynamic-update-slice: the operand's sizes (an update as large as the operand sets them); an
#     update smaller than the operand writes only its dynamic size;
#   * scatter, select-and-scatter: the operand's sizes;
#   * reduce-window: (size + stride - dilated window) / stride (XLA's VALID formula, whatever the
#     padding) for a non-trivial window dimension; a negative size is refused (XLA:CPU crashes);
#   * convolution: the batch dimension keeps its size; dynamic feature dimensions are masked; any other
#     dynamic dimension is refused (XLA's rule);
#   * concatenate, reverse, sort: on the values of the sizes (what XLA's rewrites of them give);
#   * while, conditional, call, tuples: the values flow through with their sizes.
# A result dimension the module declares static has its full size (the op on the buffers); so has a
# result that is static as a whole (XLA infers nothing for it).  Any other opcode with a dynamic operand
# is a located error (XLA's inference has no rule for it).

_NOT_ADAPTED = frozenset({"parameter", "tuple", "get-tuple-element", "get-dimension-size", "set-dimension-size",
                          "dynamic-reshape", "constant", "iota", "rng", "rng-bit-generator", "after-all",
                          "infeed", "outfeed", "send", "recv", "send-done", "recv-done", "while", "conditional",
                          "call", "custom-call", "fusion", "opt-barrier", "domain", "copy-start", "copy-done",
                          "async-start", "async-update", "async-done", "partition-id", "replica-id"})


# the opcodes whose dynamic operands hlo-run models (XLA's dynamic dimension inference has a rule for
# each); any other opcode given a dynamic operand is a located error
_ELEMENTWISE = opcodes_where(lambda o: o.family == "elementwise") | frozenset({"map"})
_MODELLED = _ELEMENTWISE | frozenset({
    "transpose", "reverse", "concatenate", "pad", "sort", "broadcast", "slice", "reshape", "reduce", "dot", "dynamic-slice", "dynamic-update-slice", "gather", "scatter", "reduce-window", "select-and-scatter",
    "convolution"})


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
    if ins.opcode in _NOT_ADAPTED or not isinstance(ins.shape, (ir.ArrayShape, ir.TupleShape)):
        return fn
    if isinstance(ins.shape, ir.TupleShape) and (
            ins.opcode not in ("reduce", "reduce-window", "sort", "scatter")
            or not all(isinstance(e, ir.ArrayShape) for e in ins.shape.elements)):
        return fn
    try:
        shapes = ctx.operand_shapes(ins)
    except Exception:  # noqa: BLE001 - shapes unknown: nothing to adapt
        return fn
    if not any(isinstance(s, ir.ArrayShape) and any(s.dynamic) for s in shapes):
        return fn
    leaves = list(ins.shape.elements) if isinstance(ins.shape, ir.TupleShape) else [ins.shape]
    if any(isinstance(s, ir.ArrayShape) and ir.UNBOUNDED in s.dims for s in [*shapes, *leaves]):
        return fn  # unbounded (`?`) dimensions have no buffer size to pad to
    op = ins.opcode
    if op not in _MODELLED:
        k = next(i for i, sh in enumerate(shapes) if isinstance(sh, ir.ArrayShape) and any(sh.dynamic))
        raise unsupported(ins, f"operand {k} ({shapes[k].text(layouts=False)}) has a dynamic dimension: "
                               f"XLA's dynamic dimension inference has no rule for {op}, and hlo-run "
                               f"models none")
    out_shape = ins.shape
    if isinstance(out_shape, ir.TupleShape):  # variadic: the leaves share their dimensions
        out_shape = out_shape.elements[0]
    out_bounds, out_dyn = _static_dims(out_shape)
    out_static = not any(out_dyn)
    in_bounds_all = [tuple(sh.dims) if isinstance(sh, ir.ArrayShape) else None for sh in shapes]
    in_dyn_all = [_static_dims(sh)[1] if isinstance(sh, ir.ArrayShape) else () for sh in shapes]

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
        rdims = sorted(set(ins.attrs.get("dimensions", ())))
        bounds = in_bounds_all[:k]
        kept = [j for j in range(len(bounds[0])) if j not in rdims]

        def run_reduce(*xs):
            # XLA reduces the buffers with every dynamic dimension masked with the init value (so the
            # tree, hence the rounding, is the bound's: a sum of 9 of [<=12] is added as 12 terms)
            sizes = [xs[0].shape[j] for j in kept]
            r = fn(*[_pad(xs[i], bounds[i], xs[k + i]) for i in range(k)], *xs[k:])
            if out_static:
                return r
            sizes = [s if f else b for s, b, f in zip(sizes, out_bounds, out_dyn)]
            return tuple(_cut(v, sizes) for v in r) if isinstance(r, tuple) else _cut(r, sizes)
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

    if op == "dynamic-slice":
        b0 = in_bounds_all[0]
        want = tuple(ins.attrs.get("dynamic_slice_sizes", ()))
        if not out_static and len(want) == len(b0):
            for d, f in enumerate(in_dyn_all[0]):
                if f and want[d] not in (1, b0[d]):
                    raise unsupported(ins, f"a slice of {want[d]} of the dynamic dimension {d} (bound {b0[d]}): "
                                           f"XLA's dynamic dimension inference takes a whole dynamic "
                                           f"dimension or one element of it")

        def run_dynamic_slice(x, *starts):
            # XLA slices the buffer (starts clamped to the bounds); a whole dynamic dimension keeps
            # its dynamic size
            r = fn(buffer_of(x, b0), *starts)
            if out_static:
                return r
            sizes = [x.shape[d] if (f and out_dyn[d] and want[d] == b0[d] != 1) else r.shape[d]
                     for d, f in enumerate(in_dyn_all[0])]
            return _cut(r, sizes)
        return run_dynamic_slice

    if op == "dynamic-update-slice":
        b0, b1 = in_bounds_all[0], in_bounds_all[1]

        def run_dynamic_update_slice(x, u, *starts):
            # XLA writes the update's buffer at the starts clamped to the bounds, except where the
            # update is dynamic and smaller than the operand: there only its dynamic size is written
            # (the rest keeps the operand's elements)
            r = buffer_of(x, b0).copy()
            ub = buffer_of(u, b1)
            at = [min(max(int(s), 0), n - m) for s, n, m in zip(starts, b0, b1)]
            ext = [u.shape[d] if (in_dyn_all[1][d] and b1[d] < b0[d]) else b1[d] for d in range(len(b0))]
            r[tuple(slice(a, a + e) for a, e in zip(at, ext))] = ub[tuple(slice(0, e) for e in ext)]
            if out_static:
                return r
            sizes = list(r.shape)
            for d in range(len(b0)):
                if in_dyn_all[0][d]:
                    sizes[d] = x.shape[d]
                if in_dyn_all[1][d] and b1[d] == b0[d]:
                    sizes[d] = u.shape[d]  # a whole-dimension update sets the size (XLA)
                if not out_dyn[d]:
                    sizes[d] = r.shape[d]
            return _cut(r, sizes)
        return run_dynamic_update_slice

    if op == "gather":
        b0, b1 = in_bounds_all[0], in_bounds_all[1]
        a = ins.attrs
        slice_sizes = tuple(a.get("slice_sizes", ()))
        removed = set(a.get("collapsed_slice_dims", ())) | set(a.get("operand_batching_dims", ()))
        offset_dims = tuple(a.get("offset_dims", ()))
        ivd = a.get("index_vector_dim")
        ivd = len(b1) if ivd is None else int(ivd)
        src = {}  # result dimension -> (operand number, its dimension) whose dynamic size it takes
        kept = [d for d in range(len(b0)) if d not in removed]
        for d, f in enumerate(in_dyn_all[0]):
            if not f or slice_sizes[d] == 1:
                continue  # one element of a dynamic dimension: static (XLA)
            if slice_sizes[d] != b0[d]:
                if out_static:
                    continue
                raise unsupported(ins, f"a slice of {slice_sizes[d]} of the dynamic dimension {d} (bound "
                                       f"{b0[d]}): XLA's dynamic dimension inference takes a whole dynamic "
                                       f"dimension or one element of it")
            if d in kept and kept.index(d) < len(offset_dims):
                src[offset_dims[kept.index(d)]] = (0, d)
        batch_out = [o for o in range(len(out_bounds)) if o not in offset_dims]
        batch_in = [d for d in range(len(b1)) if d != ivd]
        for o, d in zip(batch_out, batch_in):
            if in_dyn_all[1][d]:
                src[o] = (1, d)

        def run_gather(x, idx):
            # XLA gathers from the buffers (start indices clamped to the bounds)
            r = fn(buffer_of(x, b0), buffer_of(idx, b1))
            if out_static:
                return r
            sizes = list(r.shape)
            for o, (k, d) in src.items():
                if out_dyn[o]:
                    sizes[o] = (x, idx)[k].shape[d]
            return _cut(r, sizes)
        return run_gather

    if op == "scatter":
        n = (len(ins.operands) - 1) // 2
        bx, bi, bu = in_bounds_all[:n], in_bounds_all[n], in_bounds_all[n + 1:]

        def run_scatter(*xs):
            # XLA scatters into the operands' buffers; the indices past their dynamic sizes are set
            # to the largest index (out of bounds: those updates are skipped)
            idx = xs[n]
            big = np.iinfo(idx.dtype).max if idx.dtype.kind in "iu" else None
            r = fn(*[buffer_of(x, b) for x, b in zip(xs[:n], bx)], _pad(idx, bi, big),
                   *[buffer_of(u, b) for u, b in zip(xs[n + 1:], bu)])
            if out_static:
                return r
            sizes = [xs[0].shape[d] if out_dyn[d] else out_bounds[d] for d in range(len(out_bounds))]
            return tuple(_cut(v, sizes) for v in r) if isinstance(r, tuple) else _cut(r, sizes)
        return run_scatter

    if op == "reduce-window":
        k = len(ins.operands) // 2
        bounds = in_bounds_all[:k]
        win = ins.attrs.get("window")
        wdims = tuple(win.dims) if win is not None else tuple(ir.WindowDim() for _ in bounds[0])

        def run_reduce_window(*xs):
            # XLA reduces the buffers masked with the init values; a dynamic dimension's size becomes
            # (size + stride - dilated window) / stride (XLA's VALID formula, whatever the padding;
            # C division), or stays for a trivial window dimension
            sizes = []
            for d, w in enumerate(wdims):
                s = xs[0].shape[d]
                if in_dyn_all[0][d] and not (w.size == 1 and w.stride == 1 and w.pad_low == 0 and w.pad_high == 0
                                             and w.lhs_dilate == 1 and w.rhs_dilate == 1):
                    num = s + w.stride - ((w.size - 1) * w.rhs_dilate + 1)
                    s = abs(num) // w.stride * (1 if num >= 0 else -1)
                sizes.append(s)
            r = fn(*[_pad(xs[i], bounds[i], xs[k + i]) for i in range(k)], *xs[k:])
            if out_static:
                return r
            leaf = r[0] if isinstance(r, tuple) else r
            if any(s < 0 for s in sizes):
                raise unsupported(ins, f"the window makes a dynamic size negative ({sizes}): XLA keeps such "
                                       f"a size, which an array cannot represent")
            sizes = [min(s, m) if f else m for s, m, f in zip(sizes, leaf.shape, out_dyn)]
            return tuple(_cut(v, sizes) for v in r) if isinstance(r, tuple) else _cut(r, sizes)
        return run_reduce_window

    if op == "select-and-scatter":
        b0, b1 = in_bounds_all[0], in_bounds_all[1]
        if any(in_dyn_all[0]):
            comp = ctx.module.computation(ins.attrs["select"])
            root = comp.root
            if not (root.opcode == "compare" and str(root.attrs.get("direction", "")).upper() == "GE"
                    and len(root.operands) == 2
                    and all(comp.instruction(o).opcode == "parameter" for o in root.operands)):
                raise unsupported(ins, "a dynamic operand with a select other than compare(p0, p1), "
                                       "direction=GE: XLA's dynamic padder masks only for that select")

        def run_select_and_scatter(x, src, init):
            # XLA masks the operand with the type's lowest value and the source with the init value
            dt = x.dtype
            low = -np.inf if dt.kind in "fc" else (np.iinfo(dt).min if dt.kind in "iu" else False)
            r = fn(_pad(x, b0, low), _pad(src, b1, init), init)
            if out_static:
                return r
            return _cut(r, [x.shape[d] if out_dyn[d] else r.shape[d] for d in range(r.ndim)])
        return run_select_and_scatter

    if op == "convolution":
        b0, b1 = in_bounds_all[0], in_bounds_all[1]
        dl = ins.attrs.get("dim_labels")
        if dl is not None and not out_static:
            bad = [("operand", d) for d, f in enumerate(in_dyn_all[0])
                   if f and d not in (dl.input_batch, dl.input_feature)]
            bad += [("kernel", d) for d, f in enumerate(in_dyn_all[1]) if f and d != dl.kernel_input_feature]
            if bad:
                raise unsupported(ins, f"dynamic {bad[0][0]} dimension {bad[0][1]}: XLA's dynamic dimension "
                                       f"inference takes dynamic batch and input-feature dimensions only")

        def run_convolution(a, b):
            # XLA masks both operands with zeros; the batch dimension keeps its dynamic size
            zero = np.zeros((), a.dtype)
            r = fn(_pad(a, b0, zero), _pad(b, b1, np.zeros((), b.dtype)))
            if out_static or dl is None:
                return r
            sizes = list(r.shape)
            if in_dyn_all[0][dl.input_batch] and out_dyn[dl.output_batch]:
                sizes[dl.output_batch] = a.shape[dl.input_batch]
            return _cut(r, sizes)
        return run_convolution

    if op in _ELEMENTWISE:
        rank = len(out_bounds)

        def run_elementwise(*xs):
            # XLA computes on the buffers (what lies past a dynamic size is computed too, and stays in
            # the result's buffer); a dynamic size combines as XLA's does: equal sizes stay, a size 1
            # against a larger one broadcasts, otherwise the smaller one
            ys = list(xs)
            sizes = [None] * rank
            arrays = []
            for i, (x, b, f) in enumerate(zip(xs, in_bounds_all, in_dyn_all)):
                if isinstance(x, np.ndarray) and b is not None and x.ndim == len(b) == rank:
                    ys[i] = buffer_of(x, b)
                    arrays.append(i)
                    for d in range(rank):
                        if f[d]:
                            s, c = x.shape[d], sizes[d]
                            sizes[d] = s if c is None or c == s else (
                                max(s, c) if (s == 1 and s < c) or (c == 1 and c < s) else min(s, c))
            for i in arrays:
                for d in range(rank):
                    if in_dyn_all[i][d] and xs[i].shape[d] == 1 and (sizes[d] or 0) > 1:
                        idx = [slice(None)] * rank
                        idx[d] = slice(0, 1)
                        ys[i] = np.ascontiguousarray(np.broadcast_to(ys[i][tuple(idx)], ys[i].shape))
            r = fn(*ys)
            if out_static:
                return r
            return _cut(r, [sizes[d] if (sizes[d] is not None and out_dyn[d]) else r.shape[d] for d in range(rank)])
        return run_elementwise

    if op == "transpose":
        b0 = in_bounds_all[0]
        perm = tuple(ins.attrs.get("dimensions", ()))

        def run_transpose(x):
            r = fn(buffer_of(x, b0))  # the buffer, transposed (XLA)
            if out_static:
                return r
            return _cut(r, [x.shape[perm[j]] if out_dyn[j] else r.shape[j] for j in range(r.ndim)])
        return run_transpose

    if op == "pad":
        b0 = in_bounds_all[0]
        cfg = ins.attrs.get("padding", ())

        def run_pad(x, v):
            # XLA pads the buffer masked with the padding value; a dynamic size becomes
            # low + high + size + max(size - 1, 0) * interior
            r = fn(_pad(x, b0, v), v)
            if out_static:
                return r
            sizes = list(r.shape)
            for d, p in enumerate(cfg):
                if in_dyn_all[0][d] and out_dyn[d]:
                    s = x.shape[d]
                    sizes[d] = p.low + p.high + s + max(s - 1, 0) * p.interior
                    if not 0 <= sizes[d] <= r.shape[d]:
                        raise unsupported(ins, f"the padding makes the dynamic size {sizes[d]}, outside "
                                               f"[0, {r.shape[d]}]")
            return _cut(r, sizes)
        return run_pad

    if out_static and op not in ("sort", "reverse"):
        # a static result: XLA computes on the buffers (pad masks its operand with the padding value)
        def run_buffers(*xs):
            ys = [buffer_of(x, b) if isinstance(x, np.ndarray) and b is not None and x.ndim == len(b) else x
                  for x, b in zip(xs, in_bounds_all)]
            if op == "pad":
                ys[0] = _pad(xs[0], in_bounds_all[0], xs[1])
            return fn(*ys)
        return run_buffers

    def run_padded(*xs):
        return _pad_static_result(fn(*xs), out_shape)
    return run_padded
