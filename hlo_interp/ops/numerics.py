"""Element-type helpers shared by the evaluator kernels: which dtype a value is computed in, integer
wrap-around and saturation, bit views of every type, XLA:CPU's conversion rules, and its denormal
flushing.

XLA:CPU computes bf16 and f16 in f32 and the f8/f4 types in f16 (itself computed in f32), rounding
half-to-even at each step (ml_dtypes rounds the same way); the sub-byte integers (s1/s2/s4,
u1/u2/u4: one element per byte in ml_dtypes) are computed in a wider NumPy integer and wrapped back.
XLA:CPU runs with FTZ+DAZ: `flush_denormals()` sets the same mode for NumPy (x86-64).
"""
from __future__ import annotations

from functools import lru_cache

from typing import Callable

import ml_dtypes
import numpy as np

from ..types import PRIMITIVE_TYPES, PrimitiveType

F32 = np.dtype(np.float32)
F64 = np.dtype(np.float64)
BOOL = np.dtype(np.bool_)

UINT_OF_SIZE = {1: np.dtype(np.uint8), 2: np.dtype(np.uint16), 4: np.dtype(np.uint32),
                8: np.dtype(np.uint64)}
SINT_OF_SIZE = {1: np.dtype(np.int8), 2: np.dtype(np.int16), 4: np.dtype(np.int32),
                8: np.dtype(np.int64)}

_BY_DTYPE: dict[np.dtype, PrimitiveType] = {t.dtype: t for t in PRIMITIVE_TYPES.values()
                                            if t.dtype is not None}


def contig(x: np.ndarray) -> np.ndarray:
    """A C-contiguous array of the same shape (np.ascontiguousarray turns 0-d into 1-d)."""
    x = np.asarray(x)
    return x if x.flags.c_contiguous else x.copy(order="C")


def ptype(dtype) -> PrimitiveType:
    """The primitive type of a NumPy dtype."""
    return _BY_DTYPE[np.dtype(dtype)]


@lru_cache(maxsize=None)
def is_low_float(dtype: np.dtype) -> bool:
    """Floats that XLA computes in f32 (bf16, f16, f8 and f4 variants)."""
    t = _BY_DTYPE.get(dtype)
    return t is not None and t.kind == "float" and t.bits < 32


@lru_cache(maxsize=None)
def is_sub_byte_int(dtype: np.dtype) -> bool:
    t = _BY_DTYPE.get(dtype)
    return t is not None and t.is_integral and t.bits < 8


@lru_cache(maxsize=None)
def compute_dtype(dtype: np.dtype) -> np.dtype:
    """The dtype arithmetic on `dtype` is carried out in (f32 for the low floats, int16/uint16 for
    sub-byte ints, the dtype itself otherwise)."""
    t = _BY_DTYPE[dtype]
    if t.kind == "float" and t.bits < 32:
        return F32
    if t.is_integral and t.bits < 8:
        return np.dtype(np.int16) if t.kind == "sint" else np.dtype(np.uint16)
    return dtype


def to_compute(x: np.ndarray) -> np.ndarray:
    cd = compute_dtype(x.dtype)
    return x if cd == x.dtype else x.astype(cd)


@lru_cache(maxsize=None)
def int_range(dtype: np.dtype) -> tuple[int, int]:
    """(min, max) of an integer (or pred) type, including the sub-byte ones."""
    t = _BY_DTYPE[dtype]
    if t.kind == "pred":
        return 0, 1
    if t.kind == "sint":
        return -(1 << (t.bits - 1)), (1 << (t.bits - 1)) - 1
    return 0, (1 << t.bits) - 1


def bit_width(dtype: np.dtype) -> int:
    return _BY_DTYPE[np.dtype(dtype)].bits


@lru_cache(maxsize=None)
def bits_dtype(dtype: np.dtype) -> np.dtype:
    """The unsigned NumPy integer type holding one element's bit pattern (uint8 for sub-byte types)."""
    return UINT_OF_SIZE[np.dtype(dtype).itemsize]


def to_bits(x: np.ndarray) -> np.ndarray:
    """The bit pattern of each element, as an unsigned integer array (sub-byte types: the low bits of
    a byte, zero-extended; pred: 0/1)."""
    x = np.asarray(x)
    dt = x.dtype
    t = _BY_DTYPE[dt]
    if t.bits < 8 and t.kind != "pred":
        if t.is_integral:
            return (x.astype(np.int16) & ((1 << t.bits) - 1)).astype(np.uint8)
        return contig(x).view(np.uint8) & np.uint8((1 << t.bits) - 1)
    return contig(x).view(UINT_OF_SIZE[dt.itemsize])


def from_bits(u: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """Inverse of to_bits: reinterpret unsigned bit patterns as `dtype`."""
    dtype = np.dtype(dtype)
    t = _BY_DTYPE[dtype]
    if t.kind == "pred":
        return np.asarray(u) != 0
    if t.bits < 8:
        mask = (1 << t.bits) - 1
        v = np.asarray(u).astype(np.int16) & mask
        if t.kind == "sint":
            v = np.where(v >= (1 << (t.bits - 1)), v - (1 << t.bits), v)
            return v.astype(dtype)
        if t.kind == "uint":
            return v.astype(dtype)
        return contig(v.astype(np.uint8)).view(dtype)
    return contig(np.asarray(u).astype(UINT_OF_SIZE[dtype.itemsize])).view(dtype)


def wrap_int(x: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """Two's complement wrap of integer values `x` (any NumPy integer dtype) into integer `dtype`."""
    dtype = np.dtype(dtype)
    t = _BY_DTYPE[dtype]
    x = np.asarray(x)
    if t.bits >= 8:
        return x.astype(dtype)
    mask = (1 << t.bits) - 1
    v = x.astype(np.int64) & mask
    if t.kind == "sint":
        v = np.where(v >= (1 << (t.bits - 1)), v - (1 << t.bits), v)
    return v.astype(np.int8 if t.kind == "sint" else np.uint8).astype(dtype)


@lru_cache(maxsize=None)
def via_f16(dtype: np.dtype) -> bool:
    """8- and 4-bit floats that fit f16's range: XLA:CPU computes them in f16 (itself upcast to f32),
    so results round to f16 first, then to the f8 type."""
    t = _BY_DTYPE.get(dtype)
    return t is not None and t.kind == "float" and t.bits <= 8 and t.name != "f8e8m0fnu"


F16 = np.dtype(np.float16)


def from_f32(x: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """Round an f32 result to a low-precision float type the way XLA:CPU does."""
    if via_f16(dtype):
        return to_low_float(x.astype(F16), dtype)
    return x.astype(dtype)


def to_low_float(x: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """ml_dtypes' cast plus XLA:CPU's NaN rules for 8-bit results: f8e5m2 writes its positive
    canonical NaN (0x7f); the other f8 types keep the sign with a canonical payload; f4e2m1fn, which
    has no NaN, gets -0.  (ml_dtypes keeps sign and payload.)"""
    r = x.astype(dtype)
    if dtype.itemsize == 1:
        nan = np.isnan(x)
        if nan.any():
            if dtype == _E5M2 and x.dtype.itemsize < 4:
                # from f16 (XLA's path for f16/bf16/f8 sources and f8e5m2 arithmetic): 0x7f
                return np.where(nan, _E5M2_NAN_FROM_F16, r)
            pos, neg = _canonical_nans(dtype)
            r = np.where(nan, np.where(np.signbit(x), neg, pos), r)
    return r


@lru_cache(maxsize=None)
def _canonical_nans(dtype: np.dtype) -> tuple:
    if dtype == _F4:
        z = np.array(-0.0, dtype)
        return z, z
    pos = np.array(np.float32(np.nan), dtype)
    if _BY_DTYPE[dtype].name == "f8e8m0fnu" or _BY_DTYPE[dtype].name.endswith("fnuz"):
        return pos, pos
    neg = (pos.view(np.uint8) | np.uint8(0x80)).view(dtype)
    return pos, neg


_F4 = np.dtype(ml_dtypes.float4_e2m1fn)
_E5M2 = np.dtype(ml_dtypes.float8_e5m2)
_E5M2_NAN_FROM_F16 = np.array(0x7F, np.uint8).view(_E5M2)
_E8M0 = np.dtype(ml_dtypes.float8_e8m0fnu)


def e8m0_to_f64(x: np.ndarray) -> np.ndarray:
    """f8e8m0fnu (2^(bits-127), 0xFF = NaN) to f64 without passing through f32 (whose denormal
    2^-127 would be flushed)."""
    b = to_bits(x).astype(np.int64)
    return np.where(b == 255, np.nan, np.ldexp(1.0, b - 127))


def low_float_nonzero(x: np.ndarray) -> np.ndarray:
    """x != 0 for bf16/f8/f4 read from the bits (XLA:CPU does not flush these to zero here)."""
    t = _BY_DTYPE[x.dtype]
    b = to_bits(x)
    if t.name == "f8e8m0fnu":  # no zero, but 2^-127 is an f32 denormal that XLA reads as 0
        return x.astype(F32) != 0
    nz = (b & b.dtype.type((1 << (t.bits - 1)) - 1)) != 0
    if t.name.endswith("fnuz"):
        nz |= b == b.dtype.type(1 << (t.bits - 1))  # the NaN
    return nz


def round_to(x: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """Round a computed value (f32/f64/complex or wide int) once to the result dtype."""
    if x.dtype == dtype:
        return x
    t = _BY_DTYPE[dtype]
    if t.is_integral:
        return wrap_int(x, dtype)
    return x.astype(dtype)


# --------------------------------------------------------------------------------------------------
# Float -> integer conversion (XLA: truncate toward zero, NaN -> 0, saturate at the type's bounds)

def float_to_int(x: np.ndarray, dtype: np.dtype) -> np.ndarray:
    dtype = np.dtype(dtype)
    lo, hi = int_range(dtype)
    xf = np.asarray(x)
    if xf.dtype == _F4:
        # XLA:CPU reads f4e2m1fn's largest magnitude (6) as infinity when converting to integers.
        xf = xf.astype(F64)
        xf = np.where(np.abs(xf) == 6.0, np.copysign(np.inf, xf), xf)
    elif xf.dtype == _E8M0:
        xf = e8m0_to_f64(xf)
    elif xf.dtype != F64:
        xf = xf.astype(F64) if xf.dtype.kind != "c" else xf.real.astype(F64)
    t = np.trunc(xf)
    t = np.where(np.isnan(t), 0.0, t)
    if hi >= 2**63 - 1:
        # 64-bit bounds are not f64 values: compare against powers of two.
        if lo < 0:
            big = t >= 2.0**63
            small = t < -(2.0**63)
            r = np.where(big | small, 0.0, t).astype(np.int64)
            r = np.where(big, np.int64(hi), r)
            r = np.where(small, np.int64(lo), r)
            return r.astype(dtype)
        big = t >= 2.0**64
        neg = t <= 0
        r = np.where(big | neg, 0.0, t).astype(np.uint64)
        r = np.where(big, np.uint64(hi), r)
        return r.astype(dtype)
    t = np.clip(t, lo, hi)
    return wrap_int(t.astype(np.int64), dtype)


def int_to_float(x: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """Integer -> float as XLA:CPU converts: to f32/f64 (and f16) with one round-half-even; to bf16
    through f32 (so a 25+-bit integer can round twice, as XLA's does); to the 8-bit floats with a
    single rounding."""
    dtype = np.dtype(dtype)
    x = np.asarray(x)
    t = _BY_DTYPE[x.dtype]
    if t.bits < 8:
        x = x.astype(np.int16 if t.kind == "sint" else np.uint16)
    if dtype in (F32, F64, F16) or dtype.kind == "c":
        return x.astype(dtype)
    if dtype.itemsize == 2:  # bf16: through f32
        return x.astype(F32).astype(dtype)
    if t.bits <= 16:
        return to_low_float(x.astype(F32), dtype)  # exact in f32
    return f64_to_low(_int_to_f64_odd(x), dtype)


def _int_to_f64_odd(x: np.ndarray) -> np.ndarray:
    """Integers to f64 rounded to odd (exact for |x| < 2^53), so that a later rounding to a type with
    at most 51 mantissa bits is correctly rounded."""
    signed = x.dtype.kind == "i"
    xi = x.astype(np.int64) if signed else x.astype(np.uint64)
    f = xi.astype(F64)
    if x.dtype.itemsize < 8:
        return f
    # Truncate toward zero to 53 bits, then set the sticky bit when bits were dropped.
    mag = np.abs(xi.astype(np.int64)).astype(np.uint64) if signed else xi
    if signed:
        mag = np.where(xi == np.iinfo(np.int64).min, np.uint64(1 << 63), mag)
    big = mag >= np.uint64(1 << 53)
    if not big.any():
        return f
    nb = np.floor(np.log2(np.where(big, mag, 1).astype(F64))).astype(np.int64)  # approx bit length - 1
    shift = np.maximum(nb - 52, 0).astype(np.uint64)
    kept = mag >> shift
    # log2 rounding may overshoot by one: normalise so kept < 2^53
    over = kept >= np.uint64(1 << 53)
    shift = np.where(over, shift + np.uint64(1), shift)
    kept = mag >> shift
    dropped = mag - (kept << shift)
    kept = np.where(dropped != 0, kept | np.uint64(1), kept)
    val = np.ldexp(kept.astype(F64), shift.astype(np.int64))
    if signed:
        val = np.where(xi < 0, -val, val)
    return np.where(big, val, f)


def f64_to_low(x: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """f64 -> an 8-bit float (or bf16) rounded once (ml_dtypes rounds f64 through f32: double
    rounding).  Rounds f64 to f32 with round-to-odd first, which makes the second rounding exact."""
    dtype = np.dtype(dtype)
    if dtype == np.dtype(np.float16):
        return x.astype(dtype)
    x = np.asarray(x, F64)
    if dtype == _E8M0:
        return x.astype(F32).astype(dtype)
    f = x.astype(F32)
    back = f.astype(F64)
    inexact = (back != x) & np.isfinite(x) & np.isfinite(f)
    if inexact.any():
        fb = f.view(np.uint32)
        # truncated toward zero: if |back| > |x| step one ulp toward zero, then force the low bit
        toward = np.abs(back) > np.abs(x)
        fb = np.where(inexact & toward, fb - np.uint32(1), fb)
        fb = np.where(inexact, fb | np.uint32(1), fb)
        f = fb.view(F32)
    return to_low_float(f, dtype)


def float_convert(x: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """Float -> float conversion as XLA:CPU does it: half to even, once, except f64 -> bf16/f16,
    which XLA rounds through f32 (twice)."""
    dtype = np.dtype(dtype)
    if x.dtype == _E8M0 and dtype == F64:
        return e8m0_to_f64(x)
    if x.dtype == F64 and is_low_float(dtype):
        if dtype.itemsize == 2:
            return x.astype(F32).astype(dtype)
        return f64_to_low(x, dtype)
    if _BY_DTYPE[x.dtype].name.endswith("fnuz") and dtype != F64:
        # their single NaN (0x80, sign bit set) reads as +NaN
        xf = x.astype(F32)
        xf = np.where(np.isnan(xf), np.float32(np.nan), xf)
        if dtype == F32:
            return xf
        return to_low_float(xf.astype(F16) if dtype == _E5M2 else xf, dtype) if is_low_float(dtype) \
            and dtype != F16 else xf.astype(dtype)
    if is_low_float(x.dtype) and is_low_float(dtype) and x.dtype != dtype:
        if dtype == _E5M2:
            return to_low_float(x.astype(F32).astype(F16), dtype)
        return to_low_float(x.astype(F32), dtype)
    if dtype.itemsize == 1:
        return to_low_float(x, dtype)
    r = x.astype(dtype)
    if _BY_DTYPE[x.dtype].name.endswith("fnuz"):  # their NaN (0x80) widens to +NaN
        nan = np.isnan(r)
        if nan.any():
            r = np.where(nan, np.array(np.nan, dtype), r)
    return r


# --------------------------------------------------------------------------------------------------
# Bit counting

def popcount(u: np.ndarray) -> np.ndarray:
    """Number of set bits of unsigned integer array `u` (as the same dtype)."""
    if hasattr(np, "bitwise_count"):
        return np.bitwise_count(u).astype(u.dtype)
    b = contig(u).view(np.uint8).reshape(u.shape + (u.dtype.itemsize,))
    return np.unpackbits(b, axis=-1).sum(axis=-1).astype(u.dtype)


def bit_length(u: np.ndarray, width: int) -> np.ndarray:
    """Index of the highest set bit + 1 (0 for 0), for unsigned integer array `u` of `width` bits."""
    v = u.copy() if isinstance(u, np.ndarray) else np.asarray(u)
    s = 1
    while s < width:
        v |= v >> v.dtype.type(s)
        s <<= 1
    return popcount(v)


# --------------------------------------------------------------------------------------------------
# Float formats: exponent and mantissa widths of each float type (for reduce-precision)

@lru_cache(maxsize=None)
def float_format(dtype: np.dtype) -> tuple[int, int]:
    """(exponent_bits, mantissa_bits) of a float dtype."""
    if dtype == F32:
        return 8, 23
    if dtype == F64:
        return 11, 52
    fi = ml_dtypes.finfo(dtype)
    return int(fi.nexp), int(fi.nmant)


# --------------------------------------------------------------------------------------------------
# Denormals: XLA:CPU runs with the SSE "flush to zero" and "denormals are zero" modes on, so f32/f64
# (and bf16, computed in f32) denormal inputs read as ±0 and denormal results become ±0.  NumPy's
# loops honour the same MXCSR bits, so setting them around an evaluation reproduces XLA bit for bit
# at no cost per operation.  Only on x86-64 (elsewhere this is a no-op and denormals are kept).

_MXCSR_FTZ_DAZ = 0x8040
_mxcsr_funcs = None


def _mxcsr():
    """(get, set) callables for the MXCSR register, or None when unavailable."""
    global _mxcsr_funcs
    if _mxcsr_funcs is not None:
        return _mxcsr_funcs or None
    _mxcsr_funcs = False
    try:
        import ctypes
        import mmap
        import os
        import platform
        if platform.machine().lower() not in ("x86_64", "amd64") or os.name != "posix":
            return None
        # get: stmxcsr [rsp-4]; mov eax, [rsp-4]; ret     set: mov [rsp-4], edi; ldmxcsr [rsp-4]; ret
        code = bytes([0x0F, 0xAE, 0x5C, 0x24, 0xFC, 0x8B, 0x44, 0x24, 0xFC, 0xC3,
                      0x89, 0x7C, 0x24, 0xFC, 0x0F, 0xAE, 0x54, 0x24, 0xFC, 0xC3])
        buf = mmap.mmap(-1, mmap.PAGESIZE, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)
        buf.write(code)
        addr = ctypes.addressof(ctypes.c_char.from_buffer(buf))
        get = ctypes.CFUNCTYPE(ctypes.c_uint32)(addr)
        set_ = ctypes.CFUNCTYPE(None, ctypes.c_uint32)(addr + 10)
        tiny = np.array([1e-40], np.float32)
        old = get()
        set_(old | _MXCSR_FTZ_DAZ)
        ok = bool((tiny * np.float32(1))[0] == 0)
        set_(old)
        if not ok or (tiny * np.float32(1))[0] == 0 or (get() & 0xFFC0) != (old & 0xFFC0):
            return None
        _mxcsr_funcs = (get, set_, buf)
    except Exception:  # noqa: BLE001 - no executable memory (hardened kernels), no ctypes: keep IEEE
        _mxcsr_funcs = False
        return None
    return _mxcsr_funcs


class flush_denormals:
    """Context manager: evaluate with XLA:CPU's denormal flushing (FTZ+DAZ) on this thread.
    Re-entrant; restores the previous mode on exit.  `flush_denormals.available` tells whether the
    platform supports it."""
    __slots__ = ("_old",)

    def __enter__(self):
        f = _mxcsr()
        if f is None:
            self._old = None
            return self
        self._old = f[0]()
        f[1](self._old | _MXCSR_FTZ_DAZ)
        return self

    def __exit__(self, *exc):
        if self._old is not None:
            _mxcsr()[1](self._old)
        return False


def denormal_flushing_available() -> bool:
    return _mxcsr() is not None




def same_width_bitcast(dst_dtype, bits: int, dst_kind: str):
    """f(x) -> x's bits read as dst_dtype, element by element, for element types of equal width `bits`
    (any array shape; sub-byte types are stored one element per byte, as ml_dtypes keeps them)."""
    dt = np.dtype(dst_dtype)
    if bits % 8 == 0:
        def run(x):
            return contig(x).view(dt)  # (np.ascontiguousarray would make a scalar 1-d)
        return run
    mask = (1 << bits) - 1

    def run_sub(x):
        raw = contig(x).view(np.uint8) & mask
        if dst_kind == "sint":
            return (raw.astype(np.int8) - ((raw >> (bits - 1)).astype(np.int8) << bits)).astype(dt)
        if dst_kind == "uint":
            return raw.astype(dt)
        return raw.view(dt)
    return run_sub


# --------------------------------------------------------------------------------------------------
# Fused multiply-add and XLA:CPU's complex product

_SPLITTER = 134217729.0  # 2**27 + 1: Veltkamp's split of a float64 into two 26-bit halves


def _round_odd_sum(s, err):
    """s (a rounded-to-nearest sum) moved to round-to-odd: when the exact sum is not s (err != 0) and s's
    last significand bit is even, the neighbour of s on err's side (which is odd)."""
    fix = (err != 0) & ((s.view(np.int64) & 1) == 0) & np.isfinite(s)
    if fix.any():
        s = np.where(fix, np.nextafter(s, np.where(err > 0, np.inf, -np.inf)), s)
    return s


def fma(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    """a*b + c with one rounding (IEEE fusedMultiplyAdd), elementwise on f16, f32 or f64 arrays; NumPy has
    no fma ufunc.  f32: the product is exact in f64 and the f64 sum s is rounded once more to f32; that
    second rounding can differ from a single one only when s lies exactly halfway between two f32 values
    (or is below f32's normal range), and only those elements take the exact path: the f64 sum rounded
    to odd (error-free TwoSum), whose one conversion to f32 is correctly rounded (53 >= 2*24 + 2).
    f16: XLA:CPU computes a half fma as an f32 one rounded to f16 (the product of two halves is exact
    in f32).  f64: Dekker's exact product and Boldo-Melquiond's emulation (TwoSum, then the low parts
    added with rounding to odd).  Infinite or NaN operands, and products that overflow, give a*b + c (the
    same value an fma gives there)."""
    a, b, c = np.asarray(a), np.asarray(b), np.asarray(c)
    with np.errstate(all="ignore"):
        return fma_of(np.result_type(a, b, c))(a, b, c)


def fma_of(dtype) -> Callable:
    """The fma of one element type (f16, f32, f64), for arrays of that type: kernels that run under
    the evaluator's np.errstate(all="ignore") call it directly."""
    dt = np.dtype(dtype)
    return _fma32 if dt == F32 else _fma16 if dt == F16 else _fma64_ranged


def _fma16(a, b, c):
    return (np.multiply(a, b, dtype=F32) + np.asarray(c).astype(F32)).astype(F16)


def _fma64_ranged(a, b, c):
    a, b, c = (np.asarray(x).astype(F64, copy=False) for x in (a, b, c))
    r = _fma64(a, b, c)
    # Dekker's split needs every part in the normal range (XLA:CPU flushes subnormals, and so do we
    # while evaluating) and no overflow: elsewhere the operands are rescaled by powers of two
    # (exact), and the result back (which rounds only the result):
    #   a product below the normal range: a and c up, the result down;
    #   a product that overflows where the exact sum need not: the larger factor and c down;
    #   a factor near either end of the range (split parts that would underflow or overflow) with
    #   a product in range: the smaller factor up and the larger down, the same product.
    p = np.abs(a * b)
    aa, ab = np.abs(a), np.abs(b)
    small = (p < 2.0 ** -900) & (np.abs(c) < 2.0 ** 400) & (a != 0) & (b != 0)
    big = p > 2.0 ** 1000
    edge = ((aa > 2.0 ** 995) | (ab > 2.0 ** 995) | (aa < 2.0 ** -950) | (ab < 2.0 ** -950)) & \
        (a != 0) & (b != 0)
    redo = (small | big | edge) & np.isfinite(a) & np.isfinite(b) & np.isfinite(c)
    if redo.any():
        shape = r.shape
        a, b, c, aa, ab, small, big = (np.broadcast_to(x, shape)[redo] for x in (a, b, c, aa, ab, small, big))
        r = np.array(r, copy=True).reshape(shape)
        a_larger = aa >= ab
        up, down = 2.0 ** 600, 2.0 ** -600
        fc = np.where(small, up, np.where(big, down, 1.0))
        f_larger = np.where(small, 1.0, down)
        f_smaller = np.where(small, up, np.where(big, 1.0, up))
        fa = np.where(a_larger, f_larger, f_smaller)
        fb = np.where(a_larger, f_smaller, f_larger)
        r[redo] = _fma64(a * fa, b * fb, c * fc) / fc
    return r


_F32_TAIL = np.int64((1 << 29) - 1)  # the f64 significand bits below f32's last one
_F32_HALF = np.int64(1 << 28)  # ... when they say "exactly halfway between two f32 values"


_FMA32_BLOCK = 32768  # elements per pass over a large array: the f64 temporaries stay in cache


def _fma32(a, b, c):
    a, b, c = np.asarray(a), np.asarray(b), np.asarray(c)
    if not a.shape == b.shape == c.shape:
        a, b, c = np.broadcast_arrays(a, b, c)
    flush = _flushing()
    # (NumPy's mixed f64-f32 in-place ops are several times slower than a conversion and an f64 op)
    if a.size <= _FMA32_BLOCK:
        s = a.astype(F64)
        t = b.astype(F64)
        s *= t  # exact: 48 significant bits
        np.copyto(t, c)
        s += t
        r = s.astype(F32)
        _fma32_fix(a, b, c, s, r, flush)
        return r
    shape = a.shape
    a, b, c = a.reshape(-1), b.reshape(-1), c.reshape(-1)
    r = np.empty(a.size, F32)
    buf, buf2 = np.empty(_FMA32_BLOCK, F64), np.empty(_FMA32_BLOCK, F64)
    for i in range(0, a.size, _FMA32_BLOCK):
        j = min(a.size, i + _FMA32_BLOCK)
        s, t = buf[:j - i], buf2[:j - i]
        np.copyto(s, a[i:j])
        np.copyto(t, b[i:j])
        s *= t
        np.copyto(t, c[i:j])
        s += t
        np.copyto(r[i:j], s, casting="same_kind")
        _fma32_fix(a[i:j], b[i:j], c[i:j], s, r[i:j], flush)
    return r.reshape(shape)


def _fma32_fix(a, b, c, s, r, flush: bool) -> None:
    """r = f32(s), s = f64(a*b + c): redo exactly (in place) where that double rounding may differ from
    one: s halfway between two f32 values (its low 29 bits 100...0), and, unless XLA:CPU's denormal
    flushing is on, s below f32's normal range (another halfway point).  Overwrites s."""
    tiny = None if flush else ((np.abs(r) < np.float32(2.0 ** -125)) & (s != 0))
    bits = s.view(np.int64)
    bits &= _F32_TAIL
    hard = bits == _F32_HALF
    if tiny is not None:
        hard |= tiny
    if hard.any():
        a64, b64, c64 = (x[hard].astype(F64) for x in (a, b, c))
        p = a64 * b64
        t = p + c64
        bb = t - p
        err = (p - (t - bb)) + (c64 - bb)
        r[hard] = _round_odd_sum(t, err).astype(F32)


def _flushing() -> bool:
    """Whether this thread flushes denormals (FTZ: flush_denormals is active)."""
    f = _mxcsr()
    return f is not None and (f[0]() & _MXCSR_FTZ_DAZ) == _MXCSR_FTZ_DAZ


def _fma64(a, b, c):
    with np.errstate(all="ignore"):
        t = _SPLITTER * a
        ah = t - (t - a)
        al = a - ah
        t = _SPLITTER * b
        bh = t - (t - b)
        bl = b - bh
        p = a * b
        e = ((ah * bh - p) + ah * bl + al * bh) + al * bl  # p + e == a*b exactly
        s = p + c
        bb = s - p
        t = (p - (s - bb)) + (c - bb)  # s + t == p + c exactly
        v = t + e
        bv = v - t
        ve = (t - (v - bv)) + (e - bv)
        v = _round_odd_sum(v, ve)
        r = np.where(v == 0, s, s + v)  # (v == 0: s is exact; keeps the sign of a zero s)
        bad = ~(np.isfinite(r) & np.isfinite(e) & np.isfinite(v)) | (np.abs(a) > 1e300) | (np.abs(b) > 1e300)
        if bad.any():
            # an infinite c with finite a, b: the exact product is finite, so the sum is c (a*b + c would
            # give NaN when a*b overflows to the other infinity)
            fin_ab = np.isfinite(a) & np.isfinite(b)
            r = np.where(bad, np.where(fin_ab & np.isinf(c), c, a * b + c), r)
        return r


def complex_multiply(x: np.ndarray, y: np.ndarray, *, y_invariant: bool = False) -> np.ndarray:
    """x*y for c64/c128 as XLA:CPU computes it: LLVM contracts the textbook formula into two fmas,
    re = fma(xr, yr, -(xi*yi)), im = fma(xi, yr, xr*yi) (measured bit for bit against XLA:CPU, also with
    cancellation, where NumPy's product can be off by many ulps).  No C99 Annex G inf/NaN recovery.
    y_invariant: y is the same all along the innermost loop of XLA's loop (a broadcast scalar, or a
    broadcast along the minor dimension); then LLVM fuses the other product: im = fma(xr, yi, xi*yr)
    (measured for the multiply XLA makes of a dot with K = 1 and one result column)."""
    x, y = np.asarray(x), np.asarray(y)
    dt = np.result_type(x, y)
    xr, xi, yr, yi = x.real, x.imag, y.real, y.imag
    with np.errstate(all="ignore"):
        re = fma(xr, yr, -(xi * yi))
        im = fma(xr, yi, xi * yr) if y_invariant else fma(xi, yr, xr * yi)
    out = np.empty(np.broadcast_shapes(x.shape, y.shape), dt)
    out.real = re
    out.imag = im
    return out


class _ComplexMultiplyUfunc:
    """np.multiply's ufunc interface (call, reduce, accumulate, at) with XLA:CPU's complex product
    (complex_multiply), for the reducers of reduce, reduce-window, scatter and all-reduce.  reduce and
    accumulate fold sequentially along one axis, first element first, as XLA:CPU's loops do."""

    __name__ = "complex_multiply"

    def __init__(self, swapped_at: bool = False):
        self.swapped_at = swapped_at

    def __call__(self, a, b):
        return complex_multiply(a, b)

    def accumulate(self, x, axis=0):
        x = np.moveaxis(np.asarray(x), axis, 0)
        out = np.empty_like(x)
        if len(x):
            acc = x[0]
            out[0] = acc
            for k in range(1, len(x)):
                acc = complex_multiply(acc, x[k])
                out[k] = acc
        return np.moveaxis(out, 0, axis)

    def reduce(self, x, axis=0, initial=None):
        x = np.asarray(x)
        axes = tuple(range(x.ndim)) if axis is None else (axis if isinstance(axis, tuple) else (axis,))
        axes = tuple(a % x.ndim for a in axes)
        rest = [a for a in range(x.ndim) if a not in axes]
        y = np.transpose(x, list(axes) + rest)
        y = y.reshape((-1,) + y.shape[len(axes):])  # reduced positions row-major, first
        acc = np.full(y.shape[1:], 1 if initial is None else initial, x.dtype)
        for k in range(len(y)):
            acc = complex_multiply(acc, y[k]) if (k or initial is not None) else np.array(y[0], copy=True)
        return acc

    def at(self, a, indices, b):
        """a[indices] = a[indices] * b in order, repeated indices applied one after the other."""
        b = np.broadcast_to(np.asarray(b, a.dtype), np.shape(a[indices]))
        idx = indices if isinstance(indices, tuple) else (indices,)
        flat = np.ravel_multi_index(tuple(np.broadcast_arrays(*[np.asarray(i) for i in idx])), a.shape[:len(idx)]) \
            if all(np.ndim(i) for i in idx) else None
        mul = (lambda x, y: complex_multiply(y, x)) if self.swapped_at else complex_multiply
        if flat is None:
            a[indices] = mul(a[indices], b)
            return
        sub = a.reshape((-1,) + a.shape[len(idx):])
        for k, f in enumerate(flat.reshape(-1)):
            sub[f] = mul(sub[f], b.reshape((-1,) + b.shape[flat.ndim:])[k])


complex_multiply_ufunc = _ComplexMultiplyUfunc()
# XLA:CPU's scatter loop contracts the other product of the imaginary part (as multiply(update, current)
# would), measured against XLA:CPU
complex_multiply_scatter_ufunc = _ComplexMultiplyUfunc(swapped_at=True)


def complex_divide(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a/b for c64/c128 as XLA:CPU computes it (ElementalIrEmitter::EmitComplexDivide): Smith's
    algorithm, whose multiply-adds LLVM contracts to fmas, then, where both parts came out NaN, the
    corner cases: zero denominator (inf with b_r's sign times a), infinite numerator over a finite
    denominator, finite numerator over an infinite denominator ((1+1j)/(nan+inf j) = 0-0j,
    (inf+nan j)/(1+1j) = inf-inf j, where NumPy gives nan+nan j)."""
    a, b = np.asarray(a), np.asarray(b)
    dt = np.result_type(a, b)
    ar, ai, br, bi = a.real, a.imag, b.real, b.imag
    ft = ar.dtype
    with np.errstate(all="ignore"):
        r1 = br / bi
        d1 = fma(r1, br, bi)
        r2 = bi / br
        d2 = fma(r2, bi, br)
        bra, bia = np.abs(br), np.abs(bi)
        lt = bra < bia
        cr = np.where(lt, fma(r1, ar, ai) / d1, fma(r2, ai, ar) / d2)
        ci = np.where(lt, fma(r1, ai, -ar) / d1, fma(-r2, ar, ai) / d2)
        c_nan = np.isnan(cr) & np.isnan(ci)
        if c_nan.any():
            zero, one, inf = ft.type(0), ft.type(1), ft.type(np.inf)
            ara, aia = np.abs(ar), np.abs(ai)
            zero_den = (bra == 0) & (bia == 0) & (~np.isnan(ar) | ~np.isnan(ai))
            infb = np.copysign(inf, br)
            z_r, z_i = infb * ar, infb * ai
            b_fin = (bra != inf) & ~np.isnan(br) & (bia != inf) & ~np.isnan(bi)
            ar_inf, ai_inf = ara == inf, aia == inf
            inf_num = (ar_inf | ai_inf) & b_fin
            ars = np.copysign(np.where(ar_inf, one, zero), ar)
            ais = np.copysign(np.where(ai_inf, one, zero), ai)
            n_r = inf * fma(ars, br, ais * bi)
            n_i = inf * fma(ais, br, -(ars * bi))
            a_fin = (ara != inf) & ~np.isnan(ar) & (aia != inf) & ~np.isnan(ai)
            br_inf, bi_inf = bra == inf, bia == inf
            inf_den = (br_inf | bi_inf) & a_fin
            brs = np.copysign(np.where(br_inf, one, zero), br)
            bis = np.copysign(np.where(bi_inf, one, zero), bi)
            f_r = zero * fma(ar, brs, ai * bis)
            f_i = zero * fma(ai, brs, -(ar * bis))
            sel_r = np.where(zero_den, z_r, np.where(inf_num, n_r, np.where(inf_den, f_r, cr)))
            sel_i = np.where(zero_den, z_i, np.where(inf_num, n_i, np.where(inf_den, f_i, ci)))
            cr = np.where(c_nan, sel_r, cr)
            ci = np.where(c_nan, sel_i, ci)
    out = np.empty(np.broadcast_shapes(a.shape, b.shape), dt)
    out.real = cr
    out.imag = ci
    return out
