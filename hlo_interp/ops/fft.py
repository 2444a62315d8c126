"""fft: FFT, IFFT, RFFT and IRFFT over the innermost 1 to 3 dimensions.

Semantics (XLA's; checked against XLA:CPU through jaxlib 0.10.2):
  * FFT / IFFT: complex -> complex over the last len(fft_length) dims, which must equal fft_length.
    IFFT is normalised by 1/N (NumPy's convention): ifft(fft(x)) = x.
  * RFFT: f32 -> c64 / f64 -> c128; the operand's last dims equal fft_length; the innermost result
    dimension is fft_length[-1] // 2 + 1 (0 when fft_length[-1] is 0).
  * IRFFT: c64 -> f32 / c128 -> f64; the operand's innermost dimension is fft_length[-1] // 2 + 1,
    the other transformed dims equal fft_length; the complex transforms run over the outer axes first,
    then the complex-to-real one over the innermost axis, which ignores the imaginary parts of the
    zero-frequency (and, for even lengths, the Nyquist) terms, as XLA:CPU (DUCC) does.
  * IRFFT with fft_length[-1] = 0 accepts any innermost operand dimension (XLA's shape rule).
  * A zero fft_length gives an all-zero result of the right shape (an empty one when the transformed
    dims are empty).
Precision: computed by NumPy's pocketfft in the operand's precision (complex64 stays single
precision, as XLA:CPU's DUCC); results agree with XLA:CPU within |got - want| <= 1e-5·max|want|
(+ the same relative bound) in f32/c64 and 1e-12 in f64/c128, not bit for bit (the summation order of
the two FFT libraries differs).
Why not DUCC: XLA:CPU calls DUCC (ducc0::google::c2c/r2c/c2r, forward scale 1, inverse
1/N), but the `ducc0` Python package (0.42) is not bit-exact against it either: on c64 [14,15,16,17]
it differs from XLA:CPU in 58-80% of the result components (NumPy: 66-81%), on a 1-D c64 FFT of
length 3 in 5 of 24 (NumPy 13), and it loses NumPy's exact agreement on 1-D IFFT/IRFFT and on the
f64/c128 transforms (0 differing components with NumPy, 37-92k with ducc0), presumably because
jaxlib's DUCC is compiled with FMA contraction and the package's generic x86-64 build is not.  So
ducc0 is not a dependency; NumPy stays, within the tolerance above.
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .registry import error_at, kernel, unsupported

_REAL = {np.dtype(np.complex64): np.dtype(np.float32), np.dtype(np.complex128): np.dtype(np.float64)}
_CPLX = {v: k for k, v in _REAL.items()}


def fft(x: np.ndarray, fft_type: str, fft_length: Sequence[int]) -> np.ndarray:
    """XLA's Fft on a NumPy array (see the module docstring)."""
    lens = tuple(int(n) for n in fft_length)
    k = len(lens)
    axes = tuple(range(x.ndim - k, x.ndim))
    if fft_type in ("FFT", "IFFT"):
        out_dtype = x.dtype
        out_shape = x.shape
    elif fft_type == "RFFT":
        out_dtype = _CPLX[np.dtype(x.dtype)]
        out_shape = x.shape[:-1] + ((lens[-1] // 2 + 1) if lens[-1] else 0,)
    else:  # IRFFT
        out_dtype = _REAL[np.dtype(x.dtype)]
        out_shape = x.shape[:-1] + (lens[-1],)
    if x.size == 0 or 0 in lens or any(d == 0 for d in out_shape):
        return np.zeros(out_shape, out_dtype)
    if fft_type == "FFT":
        r = np.fft.fftn(x, axes=axes)
    elif fft_type == "IFFT":
        r = np.fft.ifftn(x, axes=axes)
    elif fft_type == "RFFT":
        r = np.fft.rfftn(x, axes=axes)
    else:
        r = np.fft.irfftn(x, s=lens, axes=axes)
    return np.asarray(r).astype(out_dtype, copy=False)


@kernel("fft")
def _k_fft(ins, ctx):
    a = ins.attrs
    ftype = a.get("fft_type")
    lens = tuple(int(n) for n in a.get("fft_length", ()))
    if ftype not in ("FFT", "IFFT", "RFFT", "IRFFT"):
        raise unsupported(ins, f"fft_type {ftype}")
    if not 1 <= len(lens) <= 3:
        raise error_at(ins, f"fft: fft_length must have 1 to 3 entries, got {len(lens)}")
    (shape,) = ctx.operand_shapes(ins)
    if shape.is_tuple:
        raise error_at(ins, "fft: the operand must be an array")
    et = shape.element_type.name
    want_in = ("c64", "c128") if ftype != "RFFT" else ("f32", "f64")
    if et not in want_in:
        raise error_at(ins, f"fft: {ftype} needs a {' or '.join(want_in)} operand, got {et}")
    dims = tuple(shape.dims)
    if len(dims) < len(lens):
        raise error_at(ins, f"fft: the operand has rank {len(dims)}, fewer than the {len(lens)} "
                            "transformed dimensions")
    tail = dims[len(dims) - len(lens):]
    expect = lens if ftype != "IRFFT" else lens[:-1] + ((lens[-1] // 2 + 1) if lens[-1] else tail[-1],)
    if tuple(tail) != tuple(expect):
        raise error_at(ins, f"fft: {ftype} with fft_length={{{','.join(map(str, lens))}}} needs innermost "
                            f"dimensions {list(expect)}, the operand has {list(tail)}")
    ctx.check_alloc(ins, ins.shape)

    def run(x):
        return fft(x, ftype, lens)
    return run
