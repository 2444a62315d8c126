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
    dims are empty), whatever the operand's transformed dims are: XLA's HloEvaluator gives zeros
    (hlo_evaluator_test.cc, 1D_FFT_0_on_c64x1x1x1x1), XLA:CPU leaves its result buffer uninitialized.
    An operand with no elements gives an empty result whatever fft_length is (as XLA:CPU does).
Precision.  XLA:CPU's FFT is DUCC (xla/backends/cpu/runtime/fft_thunk.cc: ducc0::c2c / r2c / c2r over all
transformed axes in one call, scale 1 forward and the f32/f64 rounding of the double 1/N inverse, DUCC
commit aa46a4c2 = ducc0 0.34.0) compiled with XLA's flags: no -ffast-math, and no FMA on jaxlib's AVX
x86-64 baseline (-ffp-contract=fast has nothing to contract into).  That build reproduces XLA:CPU bit
for bit (measured through ducc0's C++ API called as fft_thunk.cc calls it: c64/c128 FFT, IFFT,
RFFT, IRFFT of lengths 1-20, 32, 64, 97, 100, 128, 1000 and [14,15,16,17]: 0 differing components;
without -mavx, long c64 transforms differ, DUCC vectorizing them by the SIMD width).  The `ducc0`
wheels on PyPI are built differently: 0.34.0 with -ffast-math (c64 length 4: 45 of 400 components
differ), 0.42 with FMA (58-80% of [14,15,16,17] differ).  So:
  * an installed `ducc0` is used when it passes a self-check against XLA:CPU's outputs
    (_SELF_CHECK, written by tools/make_fft_selfcheck.py): then results are XLA:CPU's bit for bit.
    A build from source with XLA's flags should pass it (`DUCC0_OPTIMIZATION=portable-strip
    DUCC0_CFLAGS="-mavx -fno-fast-math -ffp-contract=off" pip install --no-binary ducc0
    ducc0==0.34.0`); that recipe itself was not run to completion here (the harness above was built
    from the same sources and flags); the self-check decides either way;
  * otherwise (no ducc0, or a wheel that fails the check) NumPy's pocketfft, in the operand's
    precision (complex64 stays single precision); results agree with XLA:CPU within
    |got - want| <= 1e-5·max|want| (+ the same relative bound) in f32/c64 and 1e-12 in f64/c128, not
    bit for bit (other summation orders).
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .registry import error_at, kernel, unsupported

# --------------------------------------------------------------------------------------------------
# ducc0, when it is XLA:CPU's DUCC

# (fft_type, operand dtype, operand shape, fft_length): transforms whose XLA:CPU outputs _SELF_CHECK holds
SELF_CHECK_CASES = (
    ("FFT", "complex64", (4, 3), (3,)),
    ("FFT", "complex64", (3, 8), (8,)),
    ("FFT", "complex64", (2, 1000), (1000,)),
    ("FFT", "complex64", (2, 5, 6, 7), (5, 6, 7)),
    ("IFFT", "complex64", (3, 15), (15,)),
    ("RFFT", "float32", (3, 16), (16,)),
    ("RFFT", "float32", (2, 5, 17), (5, 17)),
    ("IRFFT", "complex64", (3, 9), (16,)),
    ("FFT", "complex128", (2, 17), (17,)),
    ("IFFT", "complex128", (2, 12), (12,)),
)
# sha256 (first 16 hex digits) of XLA:CPU's output bytes for each SELF_CHECK_CASES entry
_SELF_CHECK = (
    "d98d3d53cca39624", "3201f4f616780fb4", "0aa4fb5ce5572fbd", "188ab3395e7f854f", "a50984de65eaaffb",
    "95b8911414186f51", "f40bb06202958a12", "b80e0ac9e1b2997e", "7c88ff98166deef4", "db561058d750a445",
)


def self_check_input(dtype, shape) -> np.ndarray:
    """The self-check's operand: exact rationals, the same on every platform."""
    n = int(np.prod(shape))
    k = np.arange(2 * n, dtype=np.float64)
    v = ((k * 7919) % 1009) / 1009 - 0.5
    dt = np.dtype(dtype)
    if dt.kind == "c":
        return (v[:n] + 1j * v[n:]).astype(dt).reshape(shape)
    return v[:n].astype(dt).reshape(shape)


_DUCC: list = []  # [module or None] once decided


def ducc_backend():
    """The `ducc0` module when it is importable and reproduces XLA:CPU's FFT on SELF_CHECK_CASES bit for
    bit, else None (decided once per process)."""
    if not _DUCC:
        _DUCC.append(_checked_ducc())
    return _DUCC[0]


def _checked_ducc():
    import hashlib
    try:
        import ducc0
    except ImportError:
        return None
    if len(_SELF_CHECK) != len(SELF_CHECK_CASES):
        return None
    try:
        for (kind, dtype, shape, lens), want in zip(SELF_CHECK_CASES, _SELF_CHECK):
            got = _ducc_fft(ducc0, self_check_input(dtype, shape), kind, lens)
            if got is None or hashlib.sha256(np.ascontiguousarray(got).tobytes()).hexdigest()[:16] != want:
                return None
    except Exception:  # noqa: BLE001 - an incompatible ducc0: NumPy
        return None
    return ducc0


def _scale_matches(n: int, real_dtype) -> bool:
    """ducc0's Python API scales an inverse by T(1 / (long double)N); XLA by T((double)1 / N).  They
    agree except for double roundings that need N's reciprocal to have a long run of equal bits."""
    rt = np.dtype(real_dtype).type
    return rt(1.0 / n) == rt(np.longdouble(1) / np.longdouble(n))


def _ducc_fft(ducc0, x: np.ndarray, fft_type: str, lens: tuple):
    """XLA:CPU's DuccFft through the ducc0 package (None when its inverse scale would differ)."""
    axes = tuple(range(x.ndim - len(lens), x.ndim))
    x = np.ascontiguousarray(x)
    if fft_type == "FFT":
        return ducc0.fft.c2c(x, axes=axes, forward=True)
    n = int(np.prod(lens))
    real = np.float32 if x.dtype in (np.complex64, np.float32) else np.float64
    if not _scale_matches(n, real):
        return None
    if fft_type == "IFFT":
        return ducc0.fft.c2c(x, axes=axes, forward=False, inorm=2)
    if fft_type == "RFFT":
        return ducc0.fft.r2c(x, axes=axes, forward=True)
    return ducc0.fft.c2r(x, axes=axes, lastsize=lens[-1], forward=False, inorm=2)


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
    ducc = ducc_backend()
    if ducc is not None:
        r = _ducc_fft(ducc, x, fft_type, lens)
        if r is not None:
            return np.asarray(r).astype(out_dtype, copy=False)
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
    if tuple(tail) != tuple(expect) and 0 not in lens and 0 not in dims:  # (those: zeros, see above)
        raise error_at(ins, f"fft: {ftype} with fft_length={{{','.join(map(str, lens))}}} needs innermost "
                            f"dimensions {list(expect)}, the operand has {list(tail)}")
    ctx.check_alloc(ins, ins.shape)

    def run(x):
        return fft(x, ftype, lens)
    return run
