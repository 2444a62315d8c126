"""reduce (variadic, any computation) and map.

Reducers
--------
A reducer computation is first *recognized*: each of its N outputs is `op(acc_k, x_k)` of its own two
parameters (either order), op one of add, multiply, maximum, minimum, and, or, xor, optionally wrapped
in converts (XLA's float normalization writes a bf16 reducer as f32 `add` followed by
`convert(bf16)` + `convert(f32)`: a rounding to bf16 after every step).  Recognized reducers run as
NumPy ufunc reductions, with XLA's semantics:

  * integers wrap (computed in 64 bits, converted back: exact modular arithmetic); pred add/or/maximum
    are logical or, multiply/and/minimum logical and;
  * maximum/minimum propagate NaN; maximum(-0, +0) = +0 and minimum(-0, +0) = -0 as in XLA (NumPy
    keeps the first); the sign of a NaN result is not reproduced (XLA:CPU's depends on its codegen);
  * c64/c128 products: XLA:CPU's order (below) with its fma-contracted complex product
    (numerics.complex_multiply), bit-exact; a reducer written multiply(x, acc) goes through the
    general path (the contraction is not symmetric);
  * c64/c128 sums: XLA:CPU's order (below), bit-exact (measured on rows of 7 to 1001 elements);
  * f32/f64 sums and f32/f64 products: one NumPy reduction (pairwise summation).  XLA:CPU adds in
    another order, so results agree to a few ulps, not bit for bit (rtol 1e-5 in the tests; relative
    to the largest |value| when there is cancellation).  EXACT_WIDE_FLOAT_ORDER = True switches to
    XLA's order (below): bit-exact in the 1-D and most one-dimension cases tested, 2-7x slower;
  * bf16, f16, f8 types (and the rounding form above) follow XLA:CPU's order exactly, because every
    step rounds: a sequential bf16 sum of 1000 ones stalls at 256, XLA gives 1000, and so do we.
    XLA's order (`xla_order_reduce`): a non-variadic reduce whose reduced dimensions are not all ≤ 32
    is first reduce-windowed as XLA's TreeReductionRewriter does (window = stride = min(n, 32), SAME
    padding that is skipped, every window starting from init), repeatedly; then a sequential fold
    from init, row-major over the reduced dimensions; variadic reduces are one sequential fold.  Each
    step computes in f32 and rounds to the type (the type's own ml_dtypes/NumPy arithmetic).
    Bit-exact against XLA:CPU for reductions over one dimension in all cases tested (bf16, f8, f16);
    over several dimensions f16 may differ by an ulp;
  * an init value that is not the identity (add 5, ...; XLA requires an identity, `hlo check` warns
    W110) is applied as many times as XLA:CPU applies it, measured: an f32/f64 `add` reduce of an
    operand with 4096 elements or more (XLA:CPU's library reduction path) applies it once; every other
    reduce (other types and ops, smaller operands) as XLA's tree does: once per window of every level
    plus once in the final fold (f32[2,1051] over dimension 1: 36 times; f32[13,1051,321]: once);
  * a reduce inside a fusion computation the text gives: XLA's TreeReductionRewriter (like its other
    passes) leaves fusion computations alone, so XLA:CPU folds it sequentially from init, row-major
    over the reduced dimensions, and applies the init once (measured: bf16/f32 [1000], [30,40],
    [4,100,3] over every dimension set: bf16 bit-exact as one sequential fold, 1000 bf16 ones stall at
    256 there; f32 vectorized, so within the tolerance above).

Anything else goes through the general path: the reducer computation is called (ctx.call) on whole
vectors, once per reduction step, vectorized over all kept positions.  The fold is sequential
(row-major over the reduced dimensions, as XLA:CPU does a variadic reduce) up to 32 steps or when
more than 1024 positions are kept; otherwise it folds adjacent pairs in a tree (log2(R) calls), which
assumes the reducer is associative (argmax/argmin reducers are; the order of the pairs is kept).  A
computation that is not elementwise (or that fails on vectors) is called once per element.

map applies its computation to whole arrays when the computation is elementwise, else per element.
XLA: a reduce over no dimension returns its operand (the init value is not applied); so does any reduce
outside a fusion computation whose result has as many elements as its operand (dimensions of size 1
reduced: XLA's algebraic simplifier makes it a reshape, measured: bf16[1] with init 1 gives the element).
"""
from __future__ import annotations

import weakref
from typing import Callable, Sequence

import numpy as np

from .. import ir

from ..types import dtype_kind
from .numerics import complex_multiply_ufunc
from .reducers import (
    PRED_UFUNCS,
    UFUNCS,
    WIDE_FLOATS,
    fix_zero_signs,
    identity,
    is_elementwise_computation,
    recognize_reducer,
    wide_int,
)
from .registry import error_at, kernel

# f32/f64 add reduces of this many operand elements or more: XLA:CPU applies a non-identity init value
# once (not through the tree of TREE_WINDOW windows); measured threshold (4095 elements: tree; 4096: once)
LIBRARY_REDUCE_MIN_ELEMENTS = 4096
TREE_WINDOW = 32  # XLA:CPU's TreeReductionRewriter window size
# General path: a sequential fold (one call per step, on vectors of the K kept positions) when the
# reduction is short or the vectors long; else adjacent pairs in a tree (log2(R) calls on larger
# vectors).  Measured: argmax of f32[128,256] 4.8 ms sequential, 0.7 ms tree; f32[4096,50] 2.4 ms
# sequential, 6.4 ms tree.
SEQUENTIAL_LIMIT = 32
SEQUENTIAL_MIN_WIDTH = 1024
# f32/f64/c64/c128 sums and products in XLA:CPU's exact order (bit-exact in the 1-D and most
# single-dimension cases, but 2-7x slower than NumPy's pairwise reduction); off: pairwise, which
# agrees to a few ulps.
EXACT_WIDE_FLOAT_ORDER = False


_kind = dtype_kind



def _is_narrow_float(dtype) -> bool:
    return _kind(dtype) == "float" and np.dtype(dtype) not in WIDE_FLOATS


# --------------------------------------------------------------------------------------------------
# Plain functions


def _axes_info(shape, dims):
    dims = tuple(sorted(set(int(d) for d in dims)))
    r = 1
    for d in dims:
        r *= shape[d]
    return dims, r


def reduce_simple(x: np.ndarray, init, dims: Sequence[int], op: str,
                  round_dtype=None, tree: bool = True) -> np.ndarray:
    """One operand, one recognized reducer `op` (see reducers.REDUCER_OPS), in XLA:CPU's order (see
    `xla_order_reduce`; `tree=False` for the sequential fold of variadic reduces).  `round_dtype`: a
    narrow float type every step is rounded to (XLA's normalized bf16/f16/f8 reducers)."""
    dims = tuple(sorted(set(int(d) for d in dims)))
    dtype = x.dtype
    init = np.asarray(init).astype(dtype).reshape(())
    if not dims:
        return x  # XLA: a reduce over no dimension is the operand (init unused)
    kind = _kind(dtype)
    if any(x.shape[d] == 0 for d in dims):
        return np.full(tuple(n for i, n in enumerate(x.shape) if i not in dims), init, dtype=dtype)
    # Where the order cannot change the result (max/min/and/or, integer arithmetic) or only by rounding
    # (f32/f64/complex sums and products: NumPy's pairwise order, within the stated tolerance), one
    # plain NumPy reduction.  XLA's order (`xla_order_reduce`) where it matters: narrow floats, whose
    # every step rounds; and an init value that is not the identity, which XLA's tree applies once per
    # window.
    idempotent = op in ("maximum", "minimum", "and", "or")
    if kind == "pred":
        uf = PRED_UFUNCS[op]
        ident = identity(op, dtype, dtype)
        if idempotent or op in ("add", "multiply") or bool(init) == ident:
            return uf(init, uf.reduce(x, axis=dims))
        return xla_order_reduce(x, init, dims, uf, ident, tree)
    if kind in ("sint", "uint"):
        w = wide_int(dtype)
        # exact modular arithmetic in 64 bits, wrapped back at the end
        ident = np.asarray(identity(op, w, dtype)).astype(w)
        xw, iw, uf = x.astype(w), init.astype(w), UFUNCS[op]
        if idempotent or iw == ident:
            r = uf(iw, uf.reduce(xw, axis=dims))
        else:
            r = xla_order_reduce(xw, iw, dims, uf, ident, tree)
        return r.astype(dtype)
    if op not in ("add", "multiply", "maximum", "minimum"):
        raise ValueError(f"{op} is not defined for floating-point numbers")
    if kind == "complex" and op in ("maximum", "minimum"):
        raise ValueError(f"{op} is not defined for complex numbers")
    uf = UFUNCS[op]
    if kind == "complex" and op == "multiply":
        uf = complex_multiply_ufunc  # XLA:CPU's fma-contracted product, in XLA's order
    ident = np.asarray(identity(op, dtype, dtype)).astype(dtype)
    with np.errstate(all="ignore"):
        if idempotent:
            r = uf(init, uf.reduce(x, axis=dims)).astype(dtype, copy=False)
            r = fix_zero_signs(r, x, init, dims, op)
            if round_dtype is not None:
                # every step rounds (max then convert(bf16) then convert back); rounding is monotonic,
                # so rounding the maximum once gives the same value
                r = np.asarray(r).astype(round_dtype).astype(dtype)
            return r
        narrow = round_dtype is not None or _is_narrow_float(dtype)
        identity_init = init == (0 if op == "add" else 1)
        if (op == "add" and not identity_init and round_dtype is None and dtype in WIDE_FLOATS
                and x.size >= LIBRARY_REDUCE_MIN_ELEMENTS):
            # XLA:CPU's library path for large f32/f64 sums: the init value is added once
            return uf(init, uf.reduce(x, axis=dims)).astype(dtype, copy=False)
        if not narrow and identity_init and not EXACT_WIDE_FLOAT_ORDER and kind != "complex":
            return uf(init, uf.reduce(x, axis=dims)).astype(dtype, copy=False)
        if round_dtype is not None and np.dtype(round_dtype) != dtype:
            rdt = np.dtype(round_dtype)
            xr = x.astype(rdt)
            ir_ = init.astype(rdt)
            if np.array_equal(xr.astype(dtype), x, equal_nan=True) and ir_.astype(dtype) == init:
                # values are representable: the narrow type's own arithmetic (f32 op, one rounding)
                r = xla_order_reduce(xr, ir_, dims, uf, ident.astype(rdt), tree)
            else:
                r = xla_order_reduce(x, init, dims, uf, ident, tree, round_dtype=rdt)
            return r.astype(dtype)
        return xla_order_reduce(x, init, dims, uf, ident, tree)


def xla_order_reduce(x: np.ndarray, init, dims: Sequence[int], uf, ident, tree: bool = True,
                     round_dtype=None) -> np.ndarray:
    """Reduce `dims` of x with the binary ufunc `uf` in XLA:CPU's order.

    XLA:CPU's TreeReductionRewriter turns a (non-variadic) reduce whose reduced dimensions are not all
    ≤ 32 into a reduce-window (window = stride = min(n, 32) on every reduced dimension, SAME padding;
    padded positions are skipped, each window starts from init), repeated until all are ≤ 32; then a
    sequential fold from init in row-major order.  Here padding uses `ident` (an identity of uf) and
    each fold is one NumPy reduction over the leading axis of a contiguous array, which NumPy does
    sequentially (np.ufunc.accumulate when there is a single output, where NumPy would sum pairwise).
    `round_dtype`: compute in x's type but round to this type after every step (slow path)."""
    dims = tuple(sorted(dims))
    init = np.asarray(init).astype(x.dtype).reshape(())
    if any(x.shape[d] == 0 for d in dims):
        return np.full(tuple(n for i, n in enumerate(x.shape) if i not in dims), init, dtype=x.dtype)
    while True:
        sizes = [x.shape[d] for d in dims]
        final = not tree or all(n <= TREE_WINDOW for n in sizes)
        windows = sizes if final else [max(min(n, TREE_WINDOW), 1) for n in sizes]
        width = [(0, 0)] * x.ndim
        for d, n, w in zip(dims, sizes, windows):
            if w:
                total = -(-n // w) * w - n
                width[d] = (total // 2, total - total // 2)
        if any(p != (0, 0) for p in width):
            x = np.pad(x, width, constant_values=ident)
        shape, win_axes, rest_axes = [], [], []
        for i, n in enumerate(x.shape):
            if i in dims:
                w = windows[dims.index(i)]
                shape += [n // w if w else 0, w]
                rest_axes.append(len(shape) - 2)
                win_axes.append(len(shape) - 1)
            else:
                shape.append(n)
                rest_axes.append(len(shape) - 1)
        y = x.reshape(shape).transpose(win_axes + rest_axes)
        rest = y.shape[len(win_axes):]
        W = int(np.prod(y.shape[:len(win_axes)], dtype=np.int64))
        y = np.ascontiguousarray(y).reshape((W,) + rest)
        k = int(np.prod(rest, dtype=np.int64))
        if round_dtype is not None:
            acc = np.broadcast_to(init, rest).astype(x.dtype)
            for j in range(W):
                acc = uf(acc, y[j]).astype(round_dtype).astype(x.dtype)
        elif W == 0:
            acc = np.broadcast_to(init, rest).astype(x.dtype)
        elif k >= 2:
            acc = uf.reduce(y, axis=0, initial=init[()])
        else:
            acc = uf.accumulate(np.concatenate([np.broadcast_to(init, (1,) + rest).astype(x.dtype), y]),
                                axis=0)[-1]
        acc = np.asarray(acc).astype(x.dtype, copy=False)
        if final:
            return acc.reshape(tuple(n for i, n in enumerate(x.shape) if i not in dims))
        x = acc


def _call_values(fn, args):
    out = fn(*args)
    return out if isinstance(out, tuple) else (out,)


def reduce_general(xs: Sequence[np.ndarray], inits: Sequence, dims: Sequence[int], fn: Callable,
                   vectorized: bool = True, out_dtypes=None) -> tuple:
    """Variadic reduce with any reducer `fn(*accs, *values) -> value or tuple` (N accs, N values).
    Vectorized: fn is called on whole vectors (one per reduction step), so fn must be elementwise."""
    shape = xs[0].shape
    dims, r = _axes_info(shape, dims)
    kept = [i for i in range(len(shape)) if i not in dims]
    out_shape = tuple(shape[i] for i in kept)
    k = int(np.prod(out_shape, dtype=np.int64))
    dts = out_dtypes or [x.dtype for x in xs]
    flat = [np.transpose(x, kept + list(dims)).reshape(k, r) for x in xs]
    inits = [np.asarray(i).reshape(()) for i in inits]

    def cast(vals):
        return [np.asarray(v).astype(dt, copy=False) for v, dt in zip(vals, dts)]

    if not vectorized:
        outs = [np.empty(k, dtype=dt) for dt in dts]
        for p in range(k):
            acc = list(inits)
            for j in range(r):
                acc = cast(_call_values(fn, acc + [f[p, j] for f in flat]))
            for o, a in zip(outs, acc):
                o[p] = a
        return tuple(o.reshape(out_shape) for o in outs)

    if r == 0:
        return tuple(np.full(out_shape, i, dtype=dt) for i, dt in zip(inits, dts))
    if r <= SEQUENTIAL_LIMIT or k >= SEQUENTIAL_MIN_WIDTH:
        acc = [np.broadcast_to(i, (k,)) for i in inits]
        for j in range(r):
            acc = cast(_call_values(fn, acc + [f[:, j] for f in flat]))
            acc = [np.broadcast_to(a, (k,)) for a in acc]
    else:
        cur = flat
        while cur[0].shape[1] > 1:
            m = cur[0].shape[1]
            h = m // 2
            res = cast(_call_values(fn, [c[:, 0:2 * h:2] for c in cur] + [c[:, 1:2 * h:2] for c in cur]))
            res = [np.broadcast_to(a, (k, h)) for a in res]
            if m % 2:
                res = [np.concatenate([a, c[:, m - 1:]], axis=1) for a, c in zip(res, cur)]
            cur = res
        acc = cast(_call_values(fn, [np.broadcast_to(i, (k,)) for i in inits] + [c[:, 0] for c in cur]))
    return tuple(np.broadcast_to(a, (k,)).reshape(out_shape) for a in acc)


def map_general(xs: Sequence[np.ndarray], fn: Callable, out_dtype, vectorized: bool = True) -> np.ndarray:
    if vectorized:
        out = fn(*xs)
        return np.broadcast_to(np.asarray(out).astype(out_dtype, copy=False), xs[0].shape if xs else ())
    shape = xs[0].shape if xs else ()
    out = np.empty(shape, dtype=out_dtype)
    for idx in np.ndindex(*shape):
        out[idx] = fn(*[x[idx] for x in xs])
    return out


# --------------------------------------------------------------------------------------------------
# Kernel builders


_FUSED: dict[int, tuple] = {}  # id(module) -> (weak reference to it, ids of its fused instructions)


def in_fusion_computation(ins: ir.Instruction, module: ir.Module) -> bool:
    """Whether `ins` is an instruction of a computation that a `fusion` calls (`calls=`), where XLA's
    HLO passes do not go (they run on the non-fusion computations)."""
    key = id(module)
    hit = _FUSED.get(key)
    if hit is None or hit[0]() is not module:
        names = {i.attrs.get("calls") for c in module.computations for i in c.instructions if i.opcode == "fusion"}
        ids = frozenset(id(i) for c in module.computations if c.name in names for i in c.instructions)
        hit = _FUSED[key] = (weakref.ref(module, lambda _, k=key: _FUSED.pop(k, None)), ids)
    return id(ins) in hit[1]


def _result_dtypes(ins, n):
    sh = ins.shape
    if sh is None:
        return None
    if sh.is_tuple:
        return [s.element_type.dtype for s in sh.elements]
    return [sh.element_type.dtype] * n


@kernel("reduce")
def _k_reduce(ins, ctx):
    if len(ins.operands) % 2:
        raise error_at(ins, f"reduce needs as many init values as operands (has {len(ins.operands)} operands)")
    n = len(ins.operands) // 2
    dims = tuple(ins.attrs["dimensions"])
    name = ins.attrs["to_apply"]
    recog = recognize_reducer(ctx.module, name, n)
    dts = _result_dtypes(ins, n)
    as_tuple = ins.shape is not None and ins.shape.is_tuple  # (f32[3]) reduce(...): a 1-tuple result
    fused = in_fusion_computation(ins, ctx.module)
    tree = n == 1 and recog is not None and not fused  # XLA's tree rewrite
    # XLA's algebraic simplifier (not in fusion computations): a reduce with as many result elements as
    # operand elements is a reshape of its operands (the init value and the reducer unused)
    out_shapes = (ins.shape.elements if as_tuple else [ins.shape]) if ins.shape is not None else []
    out_dims = [tuple(o.dims) for o in out_shapes if isinstance(o, ir.ArrayShape)]
    if fused or len(out_dims) != n:
        out_dims = None
    state = {"vectorized": is_elementwise_computation(ctx.module, name), "fn": None}

    def fn():
        if state["fn"] is None:
            state["fn"] = ctx.call(name)
        return state["fn"]

    def check(xs, inits):
        shape = xs[0].shape
        for x in xs[1:]:
            if x.shape != shape:
                raise error_at(ins, f"reduce operands have different shapes: {list(shape)} and {list(x.shape)}")
        for i in inits:
            if np.ndim(i) != 0:
                raise error_at(ins, "reduce init values must be scalars")
        if len(set(dims)) != len(dims) or any(not 0 <= d < len(shape) for d in dims):
            raise error_at(ins, f"reduce dimensions {list(dims)} are invalid for rank {len(shape)}")

    def run(*args):
        xs, inits = args[:n], args[n:]
        check(xs, inits)
        if out_dims is not None and all(np.size(x) == int(np.prod(d, dtype=np.int64)) for x, d in zip(xs, out_dims)):
            outs = tuple(np.asarray(x).reshape(d) for x, d in zip(xs, out_dims))
            if dts is not None:
                outs = tuple(o.astype(dt, copy=False) for o, dt in zip(outs, dts))
            return outs if n > 1 or as_tuple else outs[0]
        if recog is not None:
            try:
                outs = tuple(reduce_simple(x, i, dims, op, rd, tree=tree)
                             for x, i, (op, rd) in zip(xs, inits, recog))
            except ValueError as e:
                raise error_at(ins, f"reduce: {e}") from None
        else:
            outs = None
            if state["vectorized"]:
                try:
                    outs = reduce_general(xs, inits, dims, fn(), True, dts)
                except Exception:  # noqa: BLE001 - a kernel refused vectors: go element by element
                    state["vectorized"] = False
                    outs = None
            if outs is None:
                outs = reduce_general(xs, inits, dims, fn(), False, dts)
        if dts is not None:
            outs = tuple(np.asarray(o).astype(dt, copy=False) for o, dt in zip(outs, dts))
        return outs if n > 1 or as_tuple else outs[0]
    return run


@kernel("map")
def _k_map(ins, ctx):
    name = ins.attrs["to_apply"]
    sh = ins.shape
    out_dtype = sh.element_type.dtype if sh is not None and not sh.is_tuple else None
    state = {"vectorized": is_elementwise_computation(ctx.module, name), "fn": None}

    def run(*xs):
        if state["fn"] is None:
            state["fn"] = ctx.call(name)
        for x in xs[1:]:
            if x.shape != xs[0].shape:
                raise error_at(ins, f"map operands have different shapes: {list(xs[0].shape)} and {list(x.shape)}")
        dt = out_dtype
        if state["vectorized"]:
            try:
                out = map_general(xs, state["fn"], dt, True)
                if out.shape == (xs[0].shape if xs else ()):
                    return out
            except Exception:  # noqa: BLE001
                pass
            state["vectorized"] = False
        return map_general(xs, state["fn"], dt, False)
    return run
