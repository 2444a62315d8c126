"""Windowed ops: convolution, reduce-window, select-and-scatter.

Windows
-------
Every op here slides a window over an operand that is first base-dilated (`lhs_dilate`: holes between
elements) and then padded (`pad_low`/`pad_high`, negative values crop), with `stride` between window
positions and `rhs_dilate` (window dilation) between the window's own elements.  The windowed operand
is a strided NumPy view (`np.lib.stride_tricks.sliding_window_view` + slicing): shape
`out_dims + window_sizes`, nothing copied.

convolution
-----------
im2col: the view of the dilated, padded input (batch, feature, output positions..., window
positions...) is contracted with the kernel by `dot.dot_general`, so every element type computes as a
dot does in XLA:CPU (integers exact with wrap-around, bf16/f16/f8 in f32 with one rounding at the end,
pred as OR of ANDs, the instruction's result type = preferred_element_type); an f8/f4 result is
rounded to f16 first, then to the type, as XLA:CPU (which runs such convolutions as f16 -> f32
converts, an f32 convolution, and converts back through f16) does.  Any dim_labels,
window reversal (the kernel is flipped), feature_group_count (features split into groups, results
concatenated on the output feature) and batch_group_count (the input batch split into groups, each
convolved with its slice of output features).  Holes and padding contribute nothing: where the kernel
holds inf or NaN (whose product with a padding zero would be NaN) the padded positions are masked out
explicitly.  f32/f64 sums run in BLAS order (a few ulps from XLA:CPU's).

reduce-window
-------------
Per window offset: the accumulator (one value per output position, starting from init) is combined
with the view's elements at that offset, in row-major window order, as XLA:CPU does (so bf16/f16/f8
sums round at every step as in XLA, and f32 sums are in XLA's order: bit-exact in every unpadded
case tested).  Padding and holes are skipped (XLA:CPU skips them too: an init that is not the
identity counts once per window): recognized reducers (add, multiply, maximum, minimum, and, or,
xor; see reducers.recognize_reducer) fill them with the op's identity (max/min/and/or: with init, which
is the same) and run as NumPy ufuncs on the strided views; large windows of order-insensitive
reducers (max/min/and/or, integers) take one `ufunc.reduce` over the window axes.  Any other
computation (variadic argmax, ...), and f8/f4 sums and products (whose arithmetic the elementwise
kernels define as XLA:CPU does it), is called on whole arrays once per window offset with a
validity mask (or once per element when it is not elementwise).

Known difference: with some paddings XLA:CPU's generated loop visits the window in another order
(not a fixed permutation of the dimensions nor a reversal; e.g. `pad=0_0x0_1` on a 2-D window goes
column by column); sums that round at every step (bf16, f16, f8) can then differ by an ulp or two
(f8e8m0fnu: a binade).  Max/min/and/or/integer results are exact whatever the order.

select-and-scatter
------------------
For each window (same windowing as reduce-window; padding is never selected) the first element in
row-major window order is selected, then each later element `e` replaces the selection when
`select(selected, e)` is false (XLA's rule: ties keep the first).  Vectorized over all windows, one
step per window offset; `select` recognized as compare GE/GT/LE/LT (either parameter order) runs as
a NumPy comparison, anything else is called on whole arrays.  Then the source values are scattered
into `init`-filled output with the scatter computation, in window order: windows whose selected
positions coincide are applied one after the other (a recognized add/max/... applies `ufunc.at`
when many windows collide).
"""
from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from .. import ir
from ..types import dtype_kind
from .dot import dot_general
from .elementwise import float_max, float_min
from .movement import pad
from .numerics import complex_multiply_ufunc
from .reducers import (
    PRED_UFUNCS,
    UFUNCS,
    fix_zero_signs,
    identity,
    is_elementwise_computation,
    recognize_reducer,
    strip_converts,
    wide_int,
)
from .registry import error_at, kernel, unsupported

_kind = dtype_kind
# Above this many window positions, order-insensitive recognized reducers take one ufunc.reduce over
# the window axes instead of one ufunc call per offset.
BIG_WINDOW = 64
# select-and-scatter: above this many windows sharing a selected position, a recognized scatter
# reducer uses ufunc.at (sequential, in window order) instead of one step per collision rank.
MANY_COLLISIONS = 16
_UINT_OF = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


# --------------------------------------------------------------------------------------------------
# Windowing


class WindowError(ValueError):
    pass


def _wdims(window: ir.Window | None, rank: int) -> tuple:
    dims = tuple(window.dims) if window is not None else ()
    if not dims and rank:
        dims = tuple(ir.WindowDim() for _ in range(rank))
    if len(dims) != rank:
        raise WindowError(f"window has {len(dims)} dimensions, operand rank is {rank}")
    for d in dims:
        if d.size < 1 or d.stride < 1 or d.lhs_dilate < 1 or d.rhs_dilate < 1:
            raise WindowError(f"invalid window dimension (size={d.size}, stride={d.stride}, "
                              f"lhs_dilate={d.lhs_dilate}, rhs_dilate={d.rhs_dilate})")
    return dims


def _needs_pad(dims) -> bool:
    return any(d.pad_low or d.pad_high or d.lhs_dilate != 1 for d in dims)


def _dilate_pad(x: np.ndarray, dims, fill, axes: Sequence[int]) -> np.ndarray:
    """Base dilation then padding (negative crops) on `axes` of x (one window dim per axis)."""
    if not _needs_pad(dims):
        return x
    low = [0] * x.ndim
    high = [0] * x.ndim
    interior = [0] * x.ndim
    for a, d in zip(axes, dims):
        low[a], high[a], interior[a] = d.pad_low, d.pad_high, d.lhs_dilate - 1
    try:
        return pad(x, fill, low, high, interior)
    except ValueError:
        raise WindowError("window padding gives a negative dimension") from None


def out_sizes(in_dims: Sequence[int], dims) -> tuple:
    """Output positions per dimension (XLA's ShapeInference::InferWindowOutputShape)."""
    out = []
    for n, d in zip(in_dims, dims):
        dil = (n - 1) * d.lhs_dilate + 1 if n > 0 else 0
        padded = d.pad_low + dil + d.pad_high
        eff = (d.size - 1) * d.rhs_dilate + 1 if d.size > 0 else 0
        if padded < 0:
            raise WindowError("window padding gives a negative dimension")
        out.append(0 if padded < eff else (padded - eff) // d.stride + 1)
    return tuple(out)


def _window_view(xp: np.ndarray, dims, axes: Sequence[int], outs: Sequence[int]) -> np.ndarray:
    """View of xp (already dilated and padded): xp's axes with the windowed `axes` replaced by output
    positions, followed by one axis per window dimension (in `axes` order)."""
    effs = [(d.size - 1) * d.rhs_dilate + 1 for d in dims]
    dt = xp.dtype
    if dt.isbuiltin != 1:  # ml_dtypes types: NumPy's stride tricks cannot rebuild them
        xp = xp.view(_UINT_OF[dt.itemsize])
    v = sliding_window_view(xp, effs, axis=list(axes))
    if v.dtype != dt:
        v = v.view(dt)
    sl = [slice(None)] * xp.ndim
    for a, d, o in zip(axes, dims, outs):
        sl[a] = slice(0, (o - 1) * d.stride + 1, d.stride)
    sl += [slice(None, None, d.rhs_dilate) for d in dims]
    return v[tuple(sl)]


def _valid_mask(shape, dims, outs) -> np.ndarray | None:
    """Bool view (outs + window sizes): True where a window element is a real operand element (not
    padding, not a hole); None when every element is real."""
    if not _needs_pad(dims):
        return None
    axes = list(range(len(shape)))
    real = _dilate_pad(np.ones(shape, dtype=bool), dims, False, axes)
    return _window_view(real, dims, axes, outs)


# --------------------------------------------------------------------------------------------------
# convolution


IM2COL_BYTES = 64 << 20  # the largest im2col temporary of a convolution (larger ones run in slabs)


def convolution(lhs: np.ndarray, rhs: np.ndarray, out_dtype, window: ir.Window | None,
                dl: ir.ConvDims, feature_group_count: int = 1, batch_group_count: int = 1) -> np.ndarray:
    k = len(dl.input_spatial)
    if lhs.ndim != k + 2 or rhs.ndim != k + 2:
        raise WindowError(f"convolution: dim_labels {dl.text} need rank {k + 2} operands, got "
                          f"{lhs.ndim} and {rhs.ndim}")
    out_dtype = np.dtype(out_dtype)
    x = lhs.transpose((dl.input_batch, dl.input_feature) + tuple(dl.input_spatial))      # N C S...
    w = rhs.transpose((dl.kernel_output_feature, dl.kernel_input_feature) + tuple(dl.kernel_spatial))  # O I K...
    dims = _wdims(window, k)
    N, C = x.shape[:2]
    O, I = w.shape[:2]
    G, B = int(feature_group_count), int(batch_group_count)
    if G < 1 or B < 1:
        raise WindowError("convolution: group counts must be positive")
    if G > 1 and B > 1:
        raise WindowError("convolution: feature_group_count and batch_group_count cannot both be > 1")
    if C != I * G:
        raise WindowError(f"convolution: input feature size {C} != kernel input feature size {I} "
                          f"x feature_group_count {G}")
    if O % G or O % B or N % B:
        raise WindowError(f"convolution: output feature size {O} / batch size {N} not divisible by the "
                          f"group counts ({G}, {B})")
    for d, ks in zip(dims, w.shape[2:]):
        if d.size != ks:
            raise WindowError(f"convolution: window size {d.size} != kernel spatial size {ks}")
    rev = tuple(2 + i for i, d in enumerate(dims) if d.reversal)
    if rev:
        w = np.flip(w, rev)
    sp = tuple(range(2, 2 + k))
    outs = out_sizes(x.shape[2:], dims)
    Nout = N // B
    canon_shape = (Nout, O) + outs
    order = [0] * (k + 2)
    order[dl.output_batch] = 0
    order[dl.output_feature] = 1
    for i, a in enumerate(dl.output_spatial):
        order[a] = 2 + i
    if 0 in canon_shape:
        return np.zeros(canon_shape, dtype=out_dtype).transpose(order)
    zero = np.zeros((), dtype=x.dtype)
    if _needs_pad(dims) and _kind(x.dtype) == "float" and float(zero.astype(np.float64)) != 0:
        x = x.astype(np.float32)  # f8e8m0fnu has no zero: pad in f32 (exact for every f8 value)
        zero = np.zeros((), dtype=np.float32)
    xp = _dilate_pad(x, dims, zero, sp)
    v = _window_view(xp, dims, sp, outs)                 # N C outs... K...
    mask = None
    if _needs_pad(dims) and _kind(w.dtype) in ("float", "complex"):
        with np.errstate(all="ignore"):
            bad = not bool(np.isfinite(w.astype(np.complex128 if _kind(w.dtype) == "complex" else np.float64)).all())
        if bad:  # inf/NaN * padding zero would be NaN: padding must contribute nothing
            mask = _valid_mask(x.shape[2:], dims, outs)  # outs... K...
    kk = tuple(range(3 + k, 3 + 2 * k))                   # window axes after the group axis

    def contract(v, mask):
        if mask is None:
            if B > 1:
                lp = v.reshape((B, Nout, C) + v.shape[2:])
                wp = w.reshape((B, O // B, I) + w.shape[2:])
            else:
                lp = v.reshape((N, G, C // G) + v.shape[2:]).swapaxes(0, 1)
                wp = w.reshape((G, O // G, I) + w.shape[2:])
            via_f16 = _kind(out_dtype) == "float" and out_dtype.itemsize == 1
            r = dot_general(lp, wp, np.dtype(np.float32) if via_f16 else out_dtype, lhs_batch=(0,),
                            rhs_batch=(0,), lhs_contracting=(2,) + kk, rhs_contracting=tuple(range(2, 3 + k)))
            if via_f16:  # XLA:CPU: an f8 convolution runs in f32 and is converted to f16, then to f8
                r = r.astype(np.float16).astype(out_dtype)
            return r  # (G|B, N', outs..., O/G|O/B)
        return _masked_conv(v, w, mask, out_dtype, G, B, k)

    # The im2col copy holds every window of every output position: bounded by computing the output
    # in slabs of its first spatial dimension (`f32[1,1,600,600]` by a 60x60 kernel: 4.2 GB at once).
    cols = v.size * max(v.dtype.itemsize, 4)
    parts = min(outs[0], -(-cols // IM2COL_BYTES)) if k else 1
    if parts <= 1:
        r = contract(v, mask)
    else:
        step = -(-outs[0] // parts)
        r = np.concatenate([contract(v[:, :, a:a + step], None if mask is None else mask[a:a + step])
                            for a in range(0, outs[0], step)], axis=2)
    r = np.moveaxis(r, -1, 1)                             # G, O/G, N', outs...
    r = np.moveaxis(r, 2, 0)                              # N', G, O/G, outs...
    r = r.reshape(canon_shape)
    return r.transpose(order)


def _masked_conv(v, w, mask, out_dtype, G, B, k):
    """Per-window-offset accumulation where padded positions are skipped (kernel holds inf/NaN).
    Accumulates in f64/c128 and converts once (float and complex types only)."""
    N, C = v.shape[:2]
    O, I = w.shape[:2]
    outs = v.shape[2:2 + k]
    ksz = w.shape[2:]
    acc_dt = np.complex128 if _kind(v.dtype) == "complex" or _kind(w.dtype) == "complex" else np.float64
    GB = B if B > 1 else G
    Nout = N // B
    acc = np.zeros((GB, Nout) + outs + (O // GB,), dtype=acc_dt)
    for off in itertools.product(*[range(s) for s in ksz]):
        xs = v[(Ellipsis,) + off].astype(acc_dt)           # N C outs
        ws = w[(slice(None), slice(None)) + off].astype(acc_dt)  # O I
        if B > 1:
            lp = xs.reshape((B, Nout, C) + outs)
        else:
            lp = xs.reshape((N, G, C // G) + outs).swapaxes(0, 1)
        wp = ws.reshape(GB, O // GB, I)
        with np.errstate(all="ignore"):
            t = np.einsum("gnc...,goc->gn...o", lp, wp)
            m = mask[(Ellipsis,) + off][None, None, ..., None]
            acc += np.where(m, t, 0)
    ko = np.dtype(out_dtype)
    with np.errstate(all="ignore"):
        if _kind(ko) == "float" and np.iscomplexobj(acc):
            acc = acc.real
        return acc.astype(ko)


# --------------------------------------------------------------------------------------------------
# reduce-window


def _step_fn(op: str, dtype, round_dtype):
    """The binary step of a recognized reducer on arrays of `dtype` (already widened for integers)."""
    kind = _kind(dtype)
    if kind == "pred":
        return PRED_UFUNCS[op]
    if kind in ("sint", "uint"):
        return UFUNCS[op]
    if op == "maximum":
        f = float_max
    elif op == "minimum":
        f = float_min
    elif op == "multiply" and kind == "complex":
        f = complex_multiply_ufunc  # XLA:CPU's fma-contracted complex product
    elif op in ("add", "multiply"):
        f = UFUNCS[op]
    else:
        raise WindowError(f"{op} is not defined for floating-point numbers")
    if kind == "complex" and op in ("maximum", "minimum"):
        raise WindowError(f"{op} is not defined for complex numbers")
    if round_dtype is not None and np.dtype(round_dtype) != np.dtype(dtype):
        rd = np.dtype(round_dtype)
        return lambda a, b: f(a, b).astype(rd).astype(dtype)
    return f


def reduce_window_simple(x: np.ndarray, init, dims, op: str, round_dtype=None) -> np.ndarray:
    """One operand, recognized reducer `op`: XLA:CPU's order (init, then the window's elements in
    row-major order), padding and holes skipped."""
    dtype = x.dtype
    kind = _kind(dtype)
    dims = _wdims(None if not dims else ir.Window(tuple(dims)), x.ndim)
    outs = out_sizes(x.shape, dims)
    init = np.asarray(init).astype(dtype).reshape(())
    if kind in ("sint", "uint"):
        cd = np.dtype(wide_int(dtype))
    else:
        cd = dtype
    ident = np.asarray(identity(op, cd, dtype)).astype(cd)
    step = _step_fn(op, cd, round_dtype)
    if 0 in outs:
        return np.full(outs, init, dtype=dtype)
    xc = x.astype(cd, copy=False)
    idempotent = op in ("maximum", "minimum", "and", "or")
    if idempotent:
        fill = init.astype(cd)  # max(init, x, init) = max(init, x): padding with init = skipping it
    else:
        fill = ident
        if _needs_pad(dims) and kind in ("float", "complex"):
            with np.errstate(all="ignore"):
                back = ident.astype(np.complex128 if kind == "complex" else np.float64)
            if np.isnan(back) or back != (0 if op in ("add", "xor") else 1):
                # the type has no identity (f8e8m0fnu has no zero): skip padding with a mask instead
                return reduce_window_general([x], [init], dims, step, [dtype])[0]
    xp = _dilate_pad(xc, dims, fill, range(x.ndim))
    v = _window_view(xp, dims, range(x.ndim), outs)
    sizes = tuple(d.size for d in dims)
    nwin = int(np.prod(sizes, dtype=np.int64))
    acc = np.broadcast_to(init.astype(cd), outs)
    order_free = op in ("maximum", "minimum", "and", "or") or kind in ("sint", "uint", "pred")
    with np.errstate(all="ignore"):
        if nwin > BIG_WINDOW and order_free:
            waxes = tuple(range(x.ndim, 2 * x.ndim))
            uf = PRED_UFUNCS[op] if kind == "pred" else UFUNCS[op]
            r = uf.reduce(v, axis=waxes)
            if kind in ("float",) and op in ("maximum", "minimum"):
                r = fix_zero_signs(r, v, init, waxes, op)
            acc = step(acc, r)
        elif kind == "float" and op in ("maximum", "minimum"):
            # NaN-propagating NumPy max/min per offset; the sign of zero results fixed once at the end
            uf = UFUNCS[op]
            for off in np.ndindex(*sizes):
                acc = uf(acc, v[(Ellipsis,) + off])
            acc = np.asarray(acc)
            if acc.size and (acc == 0).any():
                waxes = tuple(range(x.ndim, 2 * x.ndim))
                acc = fix_zero_signs(acc, v, init, waxes, op)
            if round_dtype is not None:  # each step rounds; rounding is monotonic: once at the end
                acc = acc.astype(round_dtype).astype(dtype)
        else:
            for off in np.ndindex(*sizes):
                acc = step(acc, v[(Ellipsis,) + off])
        acc = np.asarray(acc)
    return np.broadcast_to(acc, outs).astype(dtype)


def reduce_window_general(xs: Sequence[np.ndarray], inits: Sequence, dims, fn: Callable,
                          out_dtypes, vectorized: bool = True) -> tuple:
    """Variadic reduce-window with any computation fn(*accs, *values): called on whole arrays (one
    call per window offset, masked where the offset falls on padding or a hole), or per element."""
    x0 = xs[0]
    dims = _wdims(None if not dims else ir.Window(tuple(dims)), x0.ndim)
    outs = out_sizes(x0.shape, dims)
    inits = [np.asarray(i).reshape(()) for i in inits]
    if 0 in outs:
        return tuple(np.full(outs, i, dtype=dt) for i, dt in zip(inits, out_dtypes))
    views = []
    for x, i in zip(xs, inits):
        xp = _dilate_pad(x, dims, np.asarray(i).astype(x.dtype), range(x.ndim))
        views.append(_window_view(xp, dims, range(x.ndim), outs))
    mask = _valid_mask(x0.shape, dims, outs)
    sizes = tuple(d.size for d in dims)

    def cast(vals):
        return [np.asarray(v).astype(dt, copy=False) for v, dt in zip(vals, out_dtypes)]

    def call(args):
        out = fn(*args)
        return out if isinstance(out, tuple) else (out,)

    if vectorized:
        acc = [np.broadcast_to(i.astype(dt), outs) for i, dt in zip(inits, out_dtypes)]
        for off in np.ndindex(*sizes):
            vals = [v[(Ellipsis,) + off] for v in views]
            new = [np.broadcast_to(a, outs) for a in cast(call(acc + vals))]
            if mask is not None:
                m = mask[(Ellipsis,) + off]
                new = [np.where(m, n, a) for n, a in zip(new, acc)]
            acc = new
        return tuple(np.array(a, dtype=dt) for a, dt in zip(acc, out_dtypes))
    res = [np.empty(outs, dtype=dt) for dt in out_dtypes]
    for p in np.ndindex(*outs):
        acc = cast(list(inits))
        for off in np.ndindex(*sizes):
            if mask is not None and not mask[p + off]:
                continue
            acc = cast(call(acc + [v[p + off] for v in views]))
        for r, a in zip(res, acc):
            r[p] = a
    return tuple(res)


# --------------------------------------------------------------------------------------------------
# select-and-scatter

_SELECT = {"GE": np.greater_equal, "GT": np.greater, "LE": np.less_equal, "LT": np.less}
_SWAP = {"GE": "LE", "GT": "LT", "LE": "GE", "LT": "GT"}


def recognize_select(module, name: str) -> str | None:
    """'GE'/'GT'/'LE'/'LT' when the computation is `compare(p0, p1)` (converts allowed around the
    parameters) with that direction, as `select(selected, candidate)`; else None."""
    try:
        comp = module.computation(name)
    except KeyError:
        return None
    root = comp.root
    if root.opcode != "compare" or len(root.operands) != 2:
        return None
    params = [i for i in comp.instructions if i.opcode == "parameter"]
    if len(params) != 2:
        return None
    direction = str(root.attrs.get("direction", "")).upper()
    ctype = root.attrs.get("type")
    if direction not in _SELECT or (ctype is not None and str(ctype).upper() == "TOTALORDER"):
        return None
    nums = []
    for o in root.operands:
        leaf, chain = strip_converts(comp, o)
        if leaf is None or leaf.opcode != "parameter":
            return None
        if chain:  # only widening float converts keep the comparison's meaning
            pt = leaf.shape.element_type.dtype
            if _kind(pt) != "float" or any(_kind(t) != "float" or np.dtype(t).itemsize < np.dtype(pt).itemsize
                                           for t in chain):
                return None
        nums.append(leaf.parameter_number)
    if nums == [0, 1]:
        return direction
    if nums == [1, 0]:
        return _SWAP[direction]
    return None


def _compare_fn(direction: str, dtype):
    f = _SELECT[direction]
    if _kind(dtype) == "float" and np.dtype(dtype).itemsize < 4:
        return lambda a, b: f(a.astype(np.float32), b.astype(np.float32))
    if _kind(dtype) == "complex":
        raise WindowError("select: complex numbers have no order")
    return f


def select_and_scatter(operand: np.ndarray, source: np.ndarray, init, window, select: Callable,
                       scatter_step: Callable, ufunc_at=None) -> np.ndarray:
    """select(a, b) -> bool array (vectorized); scatter_step(acc, src) -> values (vectorized);
    ufunc_at(out_flat, idx, src): an optional sequential scatter for many collisions."""
    dims = _wdims(window, operand.ndim)
    if any(d.lhs_dilate != 1 or d.rhs_dilate != 1 for d in dims):
        raise NotImplementedError("select-and-scatter with base or window dilation")
    outs = out_sizes(operand.shape, dims)
    if tuple(source.shape) != outs:
        raise WindowError(f"select-and-scatter: source shape {list(source.shape)} != window output "
                          f"shape {list(outs)}")
    dtype = operand.dtype
    out = np.full(operand.shape, np.asarray(init).astype(dtype).reshape(()), dtype=dtype)
    if 0 in outs or operand.size == 0:
        return out
    axes = range(operand.ndim)
    xp = _dilate_pad(operand, dims, np.zeros((), dtype), axes)
    v = _window_view(xp, dims, axes, outs)
    idx = np.arange(operand.size, dtype=np.int64).reshape(operand.shape)
    iv = _window_view(_dilate_pad(idx, dims, np.int64(-1), axes), dims, axes, outs)
    mask = _valid_mask(operand.shape, dims, outs)
    sizes = tuple(d.size for d in dims)
    sel_val = None
    sel_idx = np.full(outs, -1, dtype=np.int64)
    has = np.zeros(outs, dtype=bool)
    with np.errstate(all="ignore"):
        for off in np.ndindex(*sizes):
            cand = v[(Ellipsis,) + off]
            cidx = iv[(Ellipsis,) + off]
            valid = mask[(Ellipsis,) + off] if mask is not None else None
            if sel_val is None:
                sel_val = np.array(cand)
                sel_idx = np.array(cidx)
                has = np.array(valid) if valid is not None else np.ones(outs, dtype=bool)
                continue
            keep = np.broadcast_to(np.asarray(select(sel_val, cand)).astype(bool), outs)
            take = ~(has & keep)
            if valid is not None:
                take &= valid
                has = has | valid
            sel_val = np.where(take, cand, sel_val)
            sel_idx = np.where(take, cidx, sel_idx)
    tgt = sel_idx[has]           # row-major window order
    src = source[has]
    flat = out.reshape(-1)
    if tgt.size == 0:
        return out
    order = np.argsort(tgt, kind="stable")
    st = tgt[order]
    first = np.r_[True, st[1:] != st[:-1]]
    starts = np.maximum.accumulate(np.where(first, np.arange(st.size), 0))
    rank = np.empty(st.size, dtype=np.int64)
    rank[order] = np.arange(st.size) - starts
    maxr = int(rank.max())
    with np.errstate(all="ignore"):
        if maxr >= MANY_COLLISIONS and ufunc_at is not None:
            ufunc_at(flat, tgt, src)
            return out
        for r in range(maxr + 1):
            sel = rank == r
            t = tgt[sel]
            flat[t] = np.asarray(scatter_step(flat[t], src[sel])).astype(dtype, copy=False)
    return out


# --------------------------------------------------------------------------------------------------
# Kernel builders


def _tiny_float(dtype) -> bool:
    """f8/f4 types: their sums and products run through the reducer computation itself (the
    elementwise kernels hold XLA:CPU's rules for them: computed in f16, f8e8m0fnu's rounding, ...)."""
    return _kind(dtype) == "float" and np.dtype(dtype).itemsize == 1


def _lazy(ctx, name):
    state = {"fn": None}

    def get():
        if state["fn"] is None:
            state["fn"] = ctx.call(name)
        return state["fn"]
    return get


def _array_dtype(ins):
    sh = ins.shape
    if sh is None or sh.is_tuple:
        raise error_at(ins, f"{ins.opcode} needs an array result shape")
    return sh.element_type.dtype


@kernel("convolution")
def _k_convolution(ins, ctx):
    a = ins.attrs
    if len(ins.operands) != 2:
        raise unsupported(ins, f"convolution with {len(ins.operands)} operands (sparse convolution)")
    dl = a["dim_labels"]
    window = a.get("window")
    fgc = int(a.get("feature_group_count") or 1)
    bgc = int(a.get("batch_group_count") or 1)
    out_dtype = _array_dtype(ins)
    want = tuple(ins.shape.dims)

    def run(lhs, rhs):
        try:
            r = convolution(lhs, rhs, out_dtype, window, dl, fgc, bgc)
        except WindowError as e:
            raise error_at(ins, str(e)) from None
        if r.shape != want:
            raise error_at(ins, f"convolution: result shape {list(r.shape)} does not match the "
                                f"instruction's {list(want)}")
        return r
    return run


SCAN_BASE_LENGTH = 16  # XLA's xla_reduce_window_rewrite_base_length (its default, which XLA:CPU uses)


def _trivial(d) -> bool:
    return (d.size == 1 and d.stride == 1 and d.pad_low == 0 and d.pad_high == 0 and d.lhs_dilate == 1
            and d.rhs_dilate == 1)


def cumulative_split(xs, inits, wd, direct: Callable, combine: Callable) -> tuple:
    """reduce-window as XLA:CPU computes it: a cumulative reduction (one non-trivial window dimension of
    length N > 16 with window N, stride 1, padding N-1 or N on one side: a scan) is rewritten by XLA's
    ReduceWindowRewriter into a two-level scan, and the order of the steps changes with it (what makes
    a c64 cumprod or an f32 cumsum bit-exact).  Along the scan dimension, padded with init to a multiple
    K of 16: scans of each row of 16 (`direct`), an exclusive scan of the rows' last (first, for a
    reverse scan) elements (itself split again when longer than 16), and the two combined with the
    reducer (`combine(row_scans, row_prefixes)`); an exclusive scan gets init at its start.  Any other
    window goes to `direct(xs, inits, wd)` unchanged."""
    x0 = xs[0]
    dims = _wdims(None if not wd else ir.Window(tuple(wd)), x0.ndim)
    nontrivial = [i for i, d in enumerate(dims) if not _trivial(d)]
    if len(nontrivial) != 1:
        return direct(xs, inits, wd)
    sd = nontrivial[0]
    d = dims[sd]
    N = x0.shape[sd]
    B = SCAN_BASE_LENGTH
    forward = d.pad_low in (N - 1, N) and d.pad_high == 0
    reverse = d.pad_high in (N - 1, N) and d.pad_low == 0
    if (N <= B or d.stride != 1 or d.size != N or not (forward or reverse) or d.reversal
            or d.lhs_dilate != 1 or d.rhs_dilate != 1):
        return direct(xs, inits, wd)
    exclusive = (d.pad_low if forward else d.pad_high) == N
    K = -(-N // B) * B
    ncols = K // B
    rank = x0.ndim
    perm = list(range(rank))
    perm[sd], perm[rank - 1] = rank - 1, sd  # XLA swaps the scan dimension with the last one
    tiled = []
    for x, i in zip(xs, inits):
        t = np.transpose(x, perm)
        if K != N:
            t = np.concatenate([t, np.broadcast_to(np.asarray(i).astype(x.dtype), t.shape[:-1] + (K - N,))],
                               axis=-1)
        tiled.append(np.ascontiguousarray(t).reshape(t.shape[:-1] + (ncols, B)))
    W = ir.WindowDim
    outer_wd = tuple([W()] * rank + [W(size=B, pad_low=B - 1) if forward else W(size=B, pad_high=B - 1)])
    outer = cumulative_split(tiled, inits, outer_wd, direct, combine)
    last = [np.ascontiguousarray(o[..., B - 1] if forward else o[..., 0]) for o in outer]
    inner_wd = tuple([W()] * (rank - 1) + [W(size=ncols, pad_low=ncols) if forward
                                           else W(size=ncols, pad_high=ncols)])
    inner = cumulative_split(last, inits, inner_wd, direct, combine)
    prefix = [np.broadcast_to((i[..., :ncols] if forward else i[..., 1:])[..., None], o.shape)
              for i, o in zip(inner, outer)]
    scans = combine(tuple(outer), tuple(prefix))
    res = []
    for sc, x, i in zip(scans, xs, inits):
        sc = np.transpose(sc.reshape(sc.shape[:-2] + (K,)), perm)
        if K != N:
            sc = sc[(slice(None),) * sd + (slice(0, N),)]
        if exclusive:
            width = [(0, 0)] * rank
            width[sd] = (1, 0) if forward else (0, 1)
            sc = np.pad(sc, width, constant_values=np.asarray(i).astype(sc.dtype))
        res.append(np.ascontiguousarray(sc))
    return tuple(res)


def _recognized_step(op, rd, dtype):
    kind = _kind(dtype)
    if kind in ("sint", "uint"):
        w = np.dtype(wide_int(dtype))
        f = UFUNCS[op]
        return lambda a, b: f(a.astype(w), b.astype(w)).astype(dtype)
    return _step_fn(op, dtype, rd)


def _call_elementwise(fn, args, dts, vectorized):
    """fn(*args) elementwise over equally shaped arrays: once on whole arrays when the computation is
    elementwise, else once per element; a tuple of results."""
    if vectorized:
        r = fn(*args)
        r = r if isinstance(r, tuple) else (r,)
        if all(np.shape(v) == args[0].shape for v in r):
            return r
    outs = [np.empty(args[0].shape, dt) for dt in dts]
    for idx in np.ndindex(*args[0].shape):
        r = fn(*[a[idx] for a in args])
        r = r if isinstance(r, tuple) else (r,)
        for o, v in zip(outs, r):
            o[idx] = v
    return tuple(outs)


@kernel("reduce-window")
def _k_reduce_window(ins, ctx):
    if len(ins.operands) % 2 or not ins.operands:
        raise error_at(ins, "reduce-window needs as many init values as operands")
    n = len(ins.operands) // 2
    window = ins.attrs.get("window")
    wd = tuple(window.dims) if window is not None else ()
    name = ins.attrs["to_apply"]
    recog = recognize_reducer(ctx.module, name, n)
    sh = ins.shape
    if sh is None:
        raise error_at(ins, "reduce-window needs a result shape")
    dts = [s.element_type.dtype for s in sh.elements] if sh.is_tuple else [sh.element_type.dtype]
    if len(dts) != n:
        raise error_at(ins, f"reduce-window has {n} operands but {len(dts)} results")
    fn = _lazy(ctx, name)
    state = {"vectorized": is_elementwise_computation(ctx.module, name)}
    want = tuple((sh.elements[0] if sh.is_tuple else sh).dims)
    try:
        scalar_is_operand = not sh.is_tuple or ctx.module.computation(name).root.opcode == "tuple"
    except Exception:  # noqa: BLE001 - a missing computation is reported when it is called
        scalar_is_operand = False

    def direct(xs, inits, wd):
        outs = None
        if recog is not None and all(x.dtype == dt for x, dt in zip(xs, dts)) and not any(
                _tiny_float(x.dtype) and op in ("add", "multiply") for x, (op, _) in zip(xs, recog)):
            outs = tuple(reduce_window_simple(x, i, wd, op, rd)
                         for x, i, (op, rd) in zip(xs, inits, recog))
        if outs is None and state["vectorized"]:
            try:
                outs = reduce_window_general(xs, inits, wd, fn(), dts, True)
            except WindowError:
                raise
            except Exception:  # noqa: BLE001 - the computation refused arrays: per element
                state["vectorized"] = False
        if outs is None:
            outs = reduce_window_general(xs, inits, wd, fn(), dts, False)
        return tuple(np.asarray(o).astype(dt, copy=False) for o, dt in zip(outs, dts))

    def combine(accs, vals):
        """The reducer applied elementwise to (accs..., vals...) (XLA's `map` of the scan rewrite)."""
        if recog is not None:
            try:
                return tuple(np.asarray(_recognized_step(op, rd, a.dtype)(a, v)).astype(a.dtype, copy=False)
                             for a, v, (op, rd) in zip(accs, vals, recog))
            except WindowError:
                pass
        out = _call_elementwise(fn(), list(accs) + list(vals), dts, state["vectorized"])
        return tuple(np.asarray(o).astype(dt, copy=False) for o, dt in zip(out, dts))

    def run(*args):
        xs, inits = args[:n], args[n:]
        for x in xs[1:]:
            if x.shape != xs[0].shape:
                raise error_at(ins, f"reduce-window operands have different shapes: {list(xs[0].shape)} "
                                    f"and {list(x.shape)}")
        if any(np.ndim(i) for i in inits):
            raise error_at(ins, "reduce-window init values must be scalars")
        if xs[0].ndim == 0 and scalar_is_operand:
            # XLA:CPU's algebraic simplifier replaces a reduce-window of scalars by its operands: the
            # init value is not applied (XLA's contract has it be the reducer's identity)
            outs = tuple(np.asarray(x).astype(dt, copy=False) for x, dt in zip(xs, dts))
            return outs if sh.is_tuple else outs[0]
        try:
            outs = cumulative_split(xs, inits, wd, direct, combine)
        except WindowError as e:
            raise error_at(ins, f"reduce-window: {e}") from None
        if outs[0].shape != want:
            raise error_at(ins, f"reduce-window: the window gives shape {list(outs[0].shape)}, the "
                                f"instruction says {list(want)}")
        return outs if sh.is_tuple else outs[0]
    return run


@kernel("select-and-scatter")
def _k_select_and_scatter(ins, ctx):
    window = ins.attrs.get("window")
    sel_name, sc_name = ins.attrs["select"], ins.attrs["scatter"]
    direction = recognize_select(ctx.module, sel_name)
    recog = recognize_reducer(ctx.module, sc_name, 1)
    sel_fn = _lazy(ctx, sel_name)
    sc_fn = _lazy(ctx, sc_name)
    out_dtype = _array_dtype(ins)
    want = tuple(ins.shape.dims)
    sel_vec = is_elementwise_computation(ctx.module, sel_name)
    sc_vec = is_elementwise_computation(ctx.module, sc_name)
    if window is not None and any(d.lhs_dilate != 1 or d.rhs_dilate != 1 for d in window.dims):
        raise unsupported(ins, "select-and-scatter with base or window dilation (XLA has none)")

    def per_element(f, n_out_bool):
        def g(a, b):
            a = np.asarray(a)
            b = np.asarray(b)
            shape = np.broadcast_shapes(a.shape, b.shape)
            a, b = np.broadcast_to(a, shape), np.broadcast_to(b, shape)
            out = np.empty(shape, dtype=bool if n_out_bool else a.dtype)
            for p in np.ndindex(*shape):
                out[p] = f(a[p], b[p])
            return out
        return g

    def run(operand, source, init):
        if np.ndim(init):
            raise error_at(ins, "select-and-scatter init value must be a scalar")
        dt = operand.dtype
        try:
            if direction is not None:
                select = _compare_fn(direction, dt)
            else:
                select = sel_fn() if sel_vec else per_element(sel_fn(), True)
            ufunc_at = None
            if (recog is not None and recog[0][1] is None and dt == out_dtype
                    and not (_tiny_float(dt) and recog[0][0] in ("add", "multiply"))):
                op = recog[0][0]
                kind = _kind(dt)
                if kind in ("sint", "uint"):
                    w = np.dtype(wide_int(dt))
                    base = UFUNCS[op]
                    step = lambda acc, s: base(acc.astype(w), np.asarray(s).astype(w)).astype(dt)
                else:
                    step = _step_fn(op, dt, None)
                    if kind == "pred" or (dt.kind in "fc" and op in ("add", "multiply")):
                        uf = PRED_UFUNCS[op] if kind == "pred" else UFUNCS[op]
                        ufunc_at = uf.at
            else:
                step = sc_fn() if sc_vec else per_element(sc_fn(), False)
            r = select_and_scatter(operand, source, init, window, select, step, ufunc_at).astype(
                out_dtype, copy=False)
        except WindowError as e:
            raise error_at(ins, str(e)) from None
        if r.shape != want:
            raise error_at(ins, f"select-and-scatter: result shape {list(r.shape)} does not match the "
                                f"instruction's {list(want)}")
        return r
    return run
