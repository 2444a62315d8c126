"""Data movement: iota, broadcast, reshape, transpose, slice, dynamic-slice, dynamic-update-slice,
concatenate, pad, reverse.

Plain functions on NumPy arrays (logical, row-major values) with decoded attributes, then the kernel
builders that bind them to instructions (see registry.py for the contract).  Views are returned where
NumPy gives them (broadcast, transpose, slice, reverse): values are never written in place by kernels,
with one exception: a dynamic-update-slice the evaluator marked (ctx.in_place) writes into a while-loop
buffer that nothing else can see (hlo_interp.in_place).

XLA's semantics where NumPy's differ:
  * dynamic-slice / dynamic-update-slice: every start index is clamped into [0, dim - size] (XLA's
    evaluator and backends; the obsolete modulo rule of the 2017 document is not used).  Indices of
    unsigned types are read as unsigned; negative signed indices clamp to 0.
  * pad: interior padding is applied first, then the edges; a negative edge removes elements (of the
    interior-padded array).
  * iota of a float type is the conversion of the integer iota (one rounding, to nearest even); of a
    narrow integer type it wraps like a conversion.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

from .registry import error_at, kernel

# --------------------------------------------------------------------------------------------------
# Plain functions


def _is_int(dtype) -> bool:
    dtype = np.dtype(dtype)
    if dtype.kind in "iu":
        return True
    try:
        from ..types import from_dtype
        return from_dtype(dtype).is_integral
    except KeyError:
        return False


def iota(dims: Sequence[int], dtype, iota_dimension: int) -> np.ndarray:
    dims = tuple(dims)
    dtype = np.dtype(dtype)
    if 0 in dims:  # no element: nothing to allocate (f32[1000000000000,0] is empty, not 7 TiB of line)
        return np.empty(dims, dtype)
    n = dims[iota_dimension]
    line = np.arange(n, dtype=np.int64)
    if dtype == np.bool_:
        line = line != 0
    elif _is_int(dtype):
        line = line.astype(dtype)  # wraps for narrow ints (as convert does)
    else:
        # float/complex/ml_dtypes floats: int64 -> float64 is exact below 2**53, then one rounding.
        with np.errstate(all="ignore"):  # f8/f16 iota past the type's range: inf or NaN, like convert
            line = line.astype(np.float64).astype(dtype)
    shape = [1] * len(dims)
    shape[iota_dimension] = n
    return np.broadcast_to(line.reshape(shape), dims)


def broadcast(x: np.ndarray, out_dims: Sequence[int], dimensions: Sequence[int]) -> np.ndarray:
    """Operand dimension i becomes result dimension dimensions[i]; the others are replicated."""
    out_dims = tuple(out_dims)
    dimensions = tuple(dimensions)
    if list(dimensions) != sorted(dimensions):
        order = sorted(range(len(dimensions)), key=lambda i: dimensions[i])
        x = np.transpose(x, order)
        dimensions = tuple(dimensions[i] for i in order)
    shape = [1] * len(out_dims)
    for i, d in enumerate(dimensions):
        shape[d] = x.shape[i]
    return np.broadcast_to(np.reshape(x, shape), out_dims)


def reshape(x: np.ndarray, out_dims: Sequence[int]) -> np.ndarray:
    return np.reshape(x, tuple(out_dims))


_TRANSPOSE_COPY_MIN = 1 << 16  # elements: below this a view is cheaper than any copy
_TRANSPOSE_BLOCK = 64


def transpose(x: np.ndarray, dimensions: Sequence[int]) -> np.ndarray:
    """Result dimension i is operand dimension dimensions[i].

    Small results and transposes that keep the minor dimension are views.  A large transpose that
    moves the minor dimension is copied to a row-major array, strip by strip (64 columns of the result
    at a time, so that reads and writes both stay in cache): NumPy's own strided copy and any
    elementwise op mixing such a view with row-major arrays run 4-5x slower than this copy."""
    perm = tuple(dimensions)
    y = np.transpose(x, perm)
    if y.size < _TRANSPOSE_COPY_MIN or not perm or perm[-1] == len(perm) - 1 or y.flags.c_contiguous:
        return y
    out = np.empty(y.shape, dtype=y.dtype)
    n = y.shape[-1]
    for j in range(0, n, _TRANSPOSE_BLOCK):
        out[..., j:j + _TRANSPOSE_BLOCK] = y[..., j:j + _TRANSPOSE_BLOCK]
    return out


def slice_(x: np.ndarray, starts: Sequence[int], limits: Sequence[int], strides: Sequence[int]) -> np.ndarray:
    return x[tuple(slice(s, l, st) for s, l, st in zip(starts, limits, strides))]


def _clamped_starts(starts: Sequence, dims: Sequence[int], sizes: Sequence[int]) -> list[int]:
    out = []
    for s, d, n in zip(starts, dims, sizes):
        v = int(np.asarray(s).reshape(()).item()) if not isinstance(s, int) else s
        out.append(min(max(v, 0), max(d - n, 0)))
    return out


def dynamic_slice(x: np.ndarray, starts: Sequence, sizes: Sequence[int]) -> np.ndarray:
    st = _clamped_starts(starts, x.shape, sizes)
    return x[tuple(slice(s, s + n) for s, n in zip(st, sizes))]


def dynamic_update_slice(x: np.ndarray, update: np.ndarray, starts: Sequence) -> np.ndarray:
    st = _clamped_starts(starts, x.shape, update.shape)
    out = np.array(x, copy=True)
    out[tuple(slice(s, s + n) for s, n in zip(st, update.shape))] = update
    return out


def dynamic_update_slice_in_place(x: np.ndarray, update: np.ndarray, starts: Sequence) -> np.ndarray:
    """dynamic_update_slice writing into x itself (x must be an array nothing else can see: the
    evaluator proves it for while-loop buffers, see hlo_interp.in_place)."""
    st = _clamped_starts(starts, x.shape, update.shape)
    x[tuple(slice(s, s + n) for s, n in zip(st, update.shape))] = update
    return x


def concatenate(xs: Sequence[np.ndarray], dimension: int) -> np.ndarray:
    return np.concatenate(list(xs), axis=dimension)


def pad_sizes(dims: Sequence[int], low: Sequence[int], high: Sequence[int], interior: Sequence[int]) -> tuple:
    return tuple(lo + hi + n + max(n - 1, 0) * it for n, lo, hi, it in zip(dims, low, high, interior))


def pad(x: np.ndarray, value, low: Sequence[int], high: Sequence[int], interior: Sequence[int]) -> np.ndarray:
    """XLA's pad: interior padding first, then edge padding (negative edges crop)."""
    out_dims = pad_sizes(x.shape, low, high, interior)
    if any(d < 0 for d in out_dims):
        raise ValueError(f"pad gives a negative dimension: {out_dims}")
    out = np.full(out_dims, np.asarray(value).reshape(()), dtype=x.dtype)
    src, dst = [], []
    for n, lo, it, size in zip(x.shape, low, interior, out_dims):
        step = it + 1
        # element i lands at lo + i*step; keep those inside [0, size)
        i0 = 0 if lo >= 0 else (-lo + step - 1) // step
        i1 = min(n, (size - 1 - lo) // step + 1)
        if i1 <= i0:
            return out
        src.append(slice(i0, i1))
        dst.append(slice(lo + i0 * step, lo + (i1 - 1) * step + 1, step))
    out[tuple(dst)] = x[tuple(src)]
    return out


def reverse(x: np.ndarray, dimensions: Sequence[int]) -> np.ndarray:
    if not dimensions:
        return x
    return np.flip(x, axis=tuple(dimensions))


# --------------------------------------------------------------------------------------------------
# Kernel builders


def _array_shape(ins):
    sh = ins.shape
    if sh is None or sh.is_tuple or not hasattr(sh, "dims"):
        raise error_at(ins, f"{ins.opcode} needs an array result shape")
    return sh


def _frozen(a: np.ndarray) -> np.ndarray:
    a = np.ascontiguousarray(a)
    a.setflags(write=False)
    return a


@kernel("iota")
def _k_iota(ins, ctx):
    sh = _array_shape(ins)
    d = ins.attrs["iota_dimension"]
    if not 0 <= d < len(sh.dims):
        raise error_at(ins, f"iota_dimension {d} is out of range for rank {len(sh.dims)}")
    value = _frozen(iota(sh.dims, sh.element_type.dtype, d))

    def run():
        return value
    return run


@kernel("broadcast")
def _k_broadcast(ins, ctx):
    sh = _array_shape(ins)
    out_dims = tuple(sh.dims)
    dims = tuple(ins.attrs.get("dimensions", ()))
    if len(set(dims)) != len(dims) or any(not 0 <= d < len(out_dims) for d in dims):
        raise error_at(ins, f"broadcast dimensions {list(dims)} are invalid for rank {len(out_dims)}")

    def run(x):
        if x.ndim != len(dims) or any(x.shape[i] != out_dims[d] for i, d in enumerate(dims)):
            raise error_at(ins, f"broadcast of an operand of shape {list(x.shape)} to {list(out_dims)} "
                                f"with dimensions={{{','.join(map(str, dims))}}}: sizes do not match")
        return broadcast(x, out_dims, dims)
    return run


@kernel("reshape")
def _k_reshape(ins, ctx):
    sh = _array_shape(ins)
    out_dims = tuple(sh.dims)
    n_out = int(np.prod(out_dims, dtype=np.int64))

    def run(x):
        if x.size != n_out:
            raise error_at(ins, f"reshape of {x.size} elements {list(x.shape)} to {list(out_dims)} "
                                f"({n_out} elements)")
        return np.reshape(x, out_dims)
    return run


@kernel("transpose")
def _k_transpose(ins, ctx):
    perm = tuple(ins.attrs["dimensions"])
    if sorted(perm) != list(range(len(perm))):
        raise error_at(ins, f"transpose dimensions {list(perm)} are not a permutation")

    def run(x):
        if x.ndim != len(perm):
            raise error_at(ins, f"transpose dimensions {list(perm)} for an operand of rank {x.ndim}")
        return transpose(x, perm)
    return run


@kernel("slice")
def _k_slice(ins, ctx):
    sl = ins.attrs["slice"]
    index = tuple(slice(d.start, d.limit, d.stride) for d in sl)
    bad = [d for d in sl if d.stride <= 0 or d.start < 0 or d.limit < d.start]
    if bad:
        raise error_at(ins, f"invalid slice [{bad[0].start}:{bad[0].limit}:{bad[0].stride}]")

    def run(x):
        if x.ndim != len(sl) or any(d.limit > n for d, n in zip(sl, x.shape)):
            raise error_at(ins, f"slice {[(d.start, d.limit, d.stride) for d in sl]} is out of bounds "
                                f"for an operand of shape {list(x.shape)}")
        return x[index]
    return run


@kernel("dynamic-slice")
def _k_dynamic_slice(ins, ctx):
    sizes = tuple(ins.attrs["dynamic_slice_sizes"])

    def run(x, *starts):
        if len(starts) != x.ndim or len(sizes) != x.ndim:
            raise error_at(ins, f"dynamic-slice of a rank-{x.ndim} operand needs {x.ndim} start indices "
                                f"and sizes (has {len(starts)} and {len(sizes)})")
        if any(n > d or n < 0 for n, d in zip(sizes, x.shape)):
            raise error_at(ins, f"dynamic_slice_sizes {list(sizes)} exceed the operand shape {list(x.shape)}")
        return dynamic_slice(x, starts, sizes)
    return run


@kernel("dynamic-update-slice")
def _k_dynamic_update_slice(ins, ctx):
    # Marked by the evaluator when operand 0 is a while-loop buffer only this instruction can see.
    in_place = ins.name in getattr(ctx, "in_place", ())

    def run(x, update, *starts):
        if len(starts) != x.ndim or update.ndim != x.ndim:
            raise error_at(ins, f"dynamic-update-slice of a rank-{x.ndim} operand needs a rank-{x.ndim} "
                                f"update and {x.ndim} start indices")
        if any(u > d for u, d in zip(update.shape, x.shape)):
            raise error_at(ins, f"update shape {list(update.shape)} exceeds the operand shape {list(x.shape)}")
        if in_place and type(x) is np.ndarray and x.flags.writeable:
            return dynamic_update_slice_in_place(x, update.astype(x.dtype, copy=False), starts)
        return dynamic_update_slice(x, update.astype(x.dtype, copy=False), starts)
    run.in_place = in_place
    return run


@kernel("concatenate")
def _k_concatenate(ins, ctx):
    (d,) = tuple(ins.attrs["dimensions"])[:1] or (None,)
    if d is None or len(ins.attrs["dimensions"]) != 1:
        raise error_at(ins, "concatenate needs exactly one dimension")

    def run(*xs):
        if not xs or xs[0].ndim == 0 or not 0 <= d < xs[0].ndim:
            raise error_at(ins, f"concatenate dimension {d} is out of range")
        try:
            return np.concatenate(xs, axis=d)
        except ValueError as e:
            raise error_at(ins, f"concatenate: {e}") from None
    return run


@kernel("pad")
def _k_pad(ins, ctx):
    cfg = ins.attrs["padding"]
    low = tuple(p.low for p in cfg)
    high = tuple(p.high for p in cfg)
    interior = tuple(p.interior for p in cfg)
    if any(i < 0 for i in interior):
        raise error_at(ins, "interior padding must not be negative")

    def run(x, value):
        if x.ndim != len(cfg):
            raise error_at(ins, f"padding has {len(cfg)} dimensions, the operand {x.ndim}")
        if any(d < 0 for d in pad_sizes(x.shape, low, high, interior)):
            raise error_at(ins, f"padding gives a negative dimension for operand shape {list(x.shape)}")
        return pad(x, value, low, high, interior)
    return run


@kernel("reverse")
def _k_reverse(ins, ctx):
    dims = tuple(ins.attrs["dimensions"])

    def run(x):
        if any(not 0 <= d < x.ndim for d in dims):
            raise error_at(ins, f"reverse dimensions {list(dims)} are out of range for rank {x.ndim}")
        return reverse(x, dims)
    return run
