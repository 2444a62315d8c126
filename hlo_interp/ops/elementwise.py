"""Elementwise kernels: unary, binary and ternary arithmetic, logic, comparisons, conversions.

Semantics are XLA:CPU's, measured through JAX (tests/test_ops_elementwise.py runs ~1800 vectors made
by tools/make_elementwise_vectors.py), where they differ from NumPy's:
  * integers wrap; signed x/0 = -1, unsigned x/0 = all ones, INT_MIN/-1 = INT_MIN; x%0 = x,
    INT_MIN%-1 = 0; division truncates, remainder takes the dividend's sign;
  * shift amounts are read as unsigned: >= the bit width gives 0 (logical, left) or the sign
    (arithmetic, which also reads unsigned operands as signed);
  * integer power: squaring over the low 6 exponent bits, 0 for negative exponents unless |base| = 1;
  * maximum/minimum propagate NaN and order -0 < +0; round-nearest-afz keeps the sign of zero;
  * float->int conversion truncates, saturates and sends NaN to 0; int/float conversions round half to
    even once (no double rounding through f32); 8-bit float results get XLA's canonical NaNs;
  * bf16 and f16 compute in f32, the f8/f4 types in f32 rounded through f16 (XLA's path), then round
    to the result type;
  * f32/f64 denormals: XLA:CPU flushes them (FTZ+DAZ); numerics.flush_denormals() reproduces that
    around an evaluation, and the few ops that return tiny inputs unchanged (tan, sine, tanh f32,
    exponential-minus-one, asin, ...) do so here too.

Speed: the common f32/f64 paths are one ufunc call (add, subtract, multiply, divide, exponential,
compare, convert f32<->f64/bf16), maximum/minimum add one read-only min-reduction over the result's
bits (the -0/+0 rule), select on 4-byte types is a branch-free bit blend (np.where branches per element).

The plain functions take and return NumPy arrays; each `@kernel` builder decodes attributes once,
binds the implementation for the operand type, and returns a closure (see registry.py).  NumPy's
floating-point warnings are silenced by the evaluator, which runs a whole computation under one
`np.errstate(all="ignore")` (entering it per instruction would cost more than a small add); the
slower paths here silence their own.
"""
from __future__ import annotations

import math
from typing import Callable, Optional

import numpy as np

from . import numerics as nx
from .registry import error_at, kernel

F32 = nx.F32
F64 = nx.F64
BOOL = nx.BOOL

_QUIET = dict(all="ignore")


# --------------------------------------------------------------------------------------------------
# Type classes

def _kind(dt: np.dtype) -> str:
    """'pred', 'sint', 'uint', 'float', 'complex'."""
    return nx.ptype(dt).kind


def _is_float(dt):
    return _kind(dt) == "float"


def _is_int(dt):
    return _kind(dt) in ("sint", "uint")


# --------------------------------------------------------------------------------------------------
# Builders shared by the kernels

Impl = Callable[[np.dtype], Optional[Callable]]


def _result_dtype(ins) -> np.dtype:
    return ins.shape.element_type.dtype


def _is_scalar(ins) -> bool:
    shape = ins.shape
    return getattr(shape, "dims", None) == ()


def _finish(ins, f: Callable, ctx=None) -> Callable:
    """Rank-0 results: NumPy ufuncs return scalars; the evaluator's values are 0-d arrays.  Dynamic
    shapes (XLA's dynamic dimension inference): where operands differ in size (a dynamic one and a
    static one of the bound's size), a dynamic result is computed on the dynamic size (every operand
    cut to the smallest); a static result on the full size (a dynamic operand padded with zeros: XLA
    reads whatever its buffer holds past the dynamic size there)."""
    if _is_scalar(ins):
        def run0(*xs):
            return np.asarray(f(*xs))
        return run0
    sh = ins.shape
    if len(ins.operands) > 1 and sh is not None and not sh.is_tuple and (any(sh.dynamic) or _dynamic_operand(ins, ctx)):
        static = None if any(sh.dynamic) else tuple(sh.dims)

        def run_dyn(*xs):
            shapes = {np.shape(x) for x in xs if np.ndim(x)}
            if len(shapes) > 1 and len({len(s) for s in shapes}) == 1:
                if static is None:
                    size = tuple(min(d) for d in zip(*shapes))
                    xs = tuple(x[tuple(slice(0, k) for k in size)] if np.ndim(x) else x for x in xs)
                else:
                    xs = tuple(_pad_to(x, static) if np.ndim(x) else x for x in xs)
            return f(*xs)
        return run_dyn
    return f


def _dynamic_operand(ins, ctx) -> bool:
    if ctx is None:
        return False
    try:
        shapes = ctx.operand_shapes(ins)
    except Exception:  # noqa: BLE001 - shapes unknown: no dynamic handling
        return False
    return any(s is not None and not s.is_tuple and any(getattr(s, "dynamic", ())) for s in shapes)


def _pad_to(x: np.ndarray, dims: tuple) -> np.ndarray:
    if x.shape == dims or any(a > b for a, b in zip(x.shape, dims)):
        return x
    out = np.zeros(dims, x.dtype)
    out[tuple(slice(0, k) for k in x.shape)] = x
    return out


def _type_error(ins, dt) -> Exception:
    return error_at(ins, f"{ins.opcode}: element type {nx.ptype(dt).name} is not supported")


def _by_operand_dtype(ins, impl: Impl, ctx=None) -> Callable:
    """A closure that picks the implementation by the first operand's dtype: bound now when the
    evaluator can tell the operand's type, else on first use (cached per dtype)."""
    odt = _operand_dtype(ins, ctx) if ctx is not None else None
    if odt is not None:
        try:
            f0 = impl(odt)
        except KeyError:
            f0 = None
        if f0 is None:
            raise _type_error(ins, odt)
        return _finish(ins, f0, ctx)
    cache: dict = {}

    def run(*xs):
        dt = xs[0].dtype
        f = cache.get(dt)
        if f is None:
            try:
                f = impl(dt)
            except KeyError:
                f = None
            if f is None:
                raise _type_error(ins, dt)
            cache[dt] = f
        return f(*xs)
    return _finish(ins, run)


def _operand_dtype(ins, ctx, k: int = 0) -> Optional[np.dtype]:
    """Operand k's element dtype when the evaluator can tell it while building the plan."""
    try:
        shapes = ctx.operand_shapes(ins)
        return shapes[k].element_type.dtype
    except Exception:  # noqa: BLE001 - no context (direct use) or no shape: fall back
        return None


def _same_type(ins, impl: Impl, ctx=None) -> Callable:
    """Ops whose operands have the result's element type: bind the implementation now (on the
    operand's type when known, so a mistyped module fails here rather than computing garbage)."""
    dt = _result_dtype(ins)
    odt = _operand_dtype(ins, ctx) if ctx is not None else None
    if odt is not None and odt != dt:
        raise error_at(ins, f"{ins.opcode}: operand element type {nx.ptype(odt).name} differs from "
                            f"the result's {nx.ptype(dt).name}")
    f = impl(dt)
    if f is None:
        raise _type_error(ins, dt)
    return _finish(ins, f, ctx)


def _quiet(f: Callable) -> Callable:
    def g(*xs):
        with np.errstate(**_QUIET):
            return f(*xs)
    return g


def _via_f32(fn: Callable, dt: np.dtype) -> Callable:
    """Compute a float function in f32 and round once to the low-precision type `dt`."""
    def g(*xs):
        with np.errstate(**_QUIET):
            return nx.from_f32(fn(*[x.astype(F32) for x in xs]), dt)
    return g


def _via_int(fn: Callable, dt: np.dtype) -> Callable:
    """Compute an integer function in a wider integer and wrap back to sub-byte type `dt`."""
    cd = nx.compute_dtype(dt)

    def g(*xs):
        return nx.wrap_int(fn(*[x.astype(cd) for x in xs]), dt)
    return g


def _float_fn(fn: Callable, complex_fn: Optional[Callable] = None, allow_complex: bool = True) -> Impl:
    """Float (and optionally complex) elementwise function given on f32/f64 arrays."""
    def impl(dt):
        k = _kind(dt)
        if k == "float":
            if dt == F32 or dt == F64:
                return fn
            return _via_f32(fn, dt)
        if k == "complex" and allow_complex:
            return complex_fn or fn
        return None
    return impl


def _arith(int_fn: Callable, float_fn: Callable, complex_fn: Optional[Callable] = None,
           pred_fn: Optional[Callable] = None, unsigned_fn: Optional[Callable] = None) -> Impl:
    def impl(dt):
        k = _kind(dt)
        if k == "pred":
            return pred_fn
        if k in ("sint", "uint"):
            f = unsigned_fn if (k == "uint" and unsigned_fn is not None) else int_fn
            if f is None:
                return None
            return _via_int(f, dt) if nx.is_sub_byte_int(dt) else f
        if k == "float":
            if float_fn is None:
                return None
            if dt == F32 or dt == F64:
                return float_fn
            return _via_f32(float_fn, dt)
        if k == "complex":
            return complex_fn
        return None
    return impl


def _register_same(opcode: str, impl: Impl):
    @kernel(opcode)
    def build(ins, ctx, _impl=impl):
        return _same_type(ins, _impl, ctx)
    return build


# --------------------------------------------------------------------------------------------------
# Unary arithmetic

def round_afz(x: np.ndarray) -> np.ndarray:
    """Round half away from zero, keeping the sign of zero."""
    t = np.trunc(x)
    frac = x - t
    return np.where(np.abs(frac) >= 0.5, t + np.copysign(1.0, x).astype(x.dtype), t)


def sign(x: np.ndarray) -> np.ndarray:
    if x.dtype.kind in "iu":
        return np.sign(x)
    if x.dtype.kind == "c":
        a = complex_abs(x)  # XLA's |x| (no overflow for huge parts)
        nz = a != 0
        d = np.where(nz, a, 1)
        out = np.zeros(x.shape, x.dtype)
        out.real = np.where(nz, x.real / d, 0)
        out.imag = np.where(nz, x.imag / d, 0)
        return out
    keep = (x == 0) | np.isnan(x)
    # x * 0 rather than x: a denormal that reads as zero (flushed) gives a signed zero
    return np.where(keep, x * np.zeros((), x.dtype), np.copysign(np.ones_like(x), x))


def logistic(x: np.ndarray) -> np.ndarray:
    one = np.ones((), x.dtype)
    return one / (one + np.exp(-x))


def rsqrt(x: np.ndarray) -> np.ndarray:
    return np.ones((), x.dtype) / np.sqrt(x)


_SQRT_PI = math.sqrt(math.pi)


_LIBM_ERF = np.frompyfunc(math.erf, 1, 1)


def erf(x: np.ndarray) -> np.ndarray:
    """erf.  f64: the C library's erf (math.erf calls it), which is what XLA:CPU calls for f64 (its
    elemental emitter emits a call to libm's `erf`): bit-exact against XLA:CPU, where SciPy's differs
    in a quarter of the last bits.  Other types: float64 (about 10 ulp of f64) from a positive-term
    series below 2.5, erfc's continued fraction above, rounded to x's float dtype."""
    if np.asarray(x).dtype == F64:
        xa = np.asarray(x)
        return _LIBM_ERF(xa).astype(F64).reshape(xa.shape)
    xd = np.asarray(x, F64)
    a = np.abs(xd)
    out = np.empty_like(a)
    small = a < 2.5
    if small.any():
        xs = a[small]
        term = xs.copy()
        acc = xs.copy()
        x2 = 2.0 * xs * xs
        for n in range(1, 48):
            term = term * x2 / (2 * n + 1)
            acc += term
        out[small] = (2.0 / _SQRT_PI) * np.exp(-xs * xs) * acc
    large = ~small
    if large.any():
        xl = np.minimum(a[large], 7.0)
        f = xl.copy()
        for k in range(70, 0, -1):
            f = xl + (k * 0.5) / f
        out[large] = 1.0 - np.exp(-xl * xl) / _SQRT_PI / f
    out = np.where(np.isnan(xd), xd, np.copysign(out, xd))
    return out.astype(np.asarray(x).dtype)


def _abs_impl(dt):
    k = _kind(dt)
    if k == "sint":
        return _via_int(np.abs, dt) if nx.is_sub_byte_int(dt) else np.abs
    if k == "uint":
        return lambda x: x
    if k == "float":
        return np.abs if dt in (F32, F64) else _via_f32(np.abs, dt)
    if k == "complex":
        return _quiet(complex_abs)  # XLA's max * sqrt(1 + (min/max)^2): no overflow, NaN beats inf
    return None


@kernel("abs")
def _k_abs(ins, ctx):
    return _by_operand_dtype(ins, _abs_impl, ctx)


_register_same("negate", _arith(np.negative, np.negative, np.negative))
def _sign_impl(dt):
    if nx.ptype(dt).name == "f8e8m0fnu":  # no zero, no sign: 1 (NaN stays NaN)
        return lambda x: np.where(nx.to_bits(x) == 255, x, np.ones((), dt))
    return _arith(np.sign, sign, _quiet(sign))(dt)


_register_same("sign", _sign_impl)
_register_same("floor", _float_fn(np.floor, allow_complex=False))
def _ceil_impl(dt):
    if nx.ptype(dt).name == "f8e8m0fnu":  # XLA:CPU does not flush 2^-127 here
        return lambda x: nx.f64_to_low(np.ceil(nx.e8m0_to_f64(x)), dt)
    return _float_fn(np.ceil, allow_complex=False)(dt)


_register_same("ceil", _ceil_impl)
_register_same("round-nearest-even", _float_fn(np.rint, allow_complex=False))
_register_same("round-nearest-afz", _float_fn(round_afz, allow_complex=False))
def _tiny_identity(fn: Callable, types=("float32", "float64")) -> Callable:
    """f(x) = x for |x| below the smallest normal (odd functions with f'(0) = 1, zero only at 0):
    XLA:CPU returns such x unchanged for these types, even while denormal arithmetic is flushed.
    A zero result marks them (one cheap pass)."""
    def g(x):
        r = fn(x)
        if x.dtype.name in types:
            z = r == 0
            if z.any():
                r = np.where(z, x, r)
        return r
    return g


_register_same("exponential", _float_fn(np.exp, _quiet(np.exp)))
_register_same("exponential-minus-one", _float_fn(_tiny_identity(np.expm1), _quiet(np.expm1)))
_register_same("log", _float_fn(np.log, _quiet(np.log)))
_register_same("log-plus-one", _float_fn(np.log1p, _quiet(np.log1p)))
_register_same("logistic", _float_fn(logistic, _quiet(logistic)))
_register_same("sqrt", _float_fn(np.sqrt, _quiet(np.sqrt)))
_register_same("rsqrt", _float_fn(rsqrt, _quiet(rsqrt)))
_register_same("cbrt", _float_fn(np.cbrt, allow_complex=False))
_register_same("tanh", _float_fn(_tiny_identity(np.tanh, ("float32",)), _quiet(np.tanh)))
_register_same("tan", _float_fn(_tiny_identity(np.tan), _quiet(np.tan)))
_register_same("acos", _float_fn(np.arccos, _quiet(np.arccos)))
_register_same("acosh", _float_fn(np.arccosh, _quiet(np.arccosh)))
_register_same("asin", _float_fn(_tiny_identity(np.arcsin), _quiet(np.arcsin)))
_register_same("asinh", _float_fn(_tiny_identity(np.arcsinh), _quiet(np.arcsinh)))
_register_same("atan", _float_fn(_tiny_identity(np.arctan), _quiet(np.arctan)))
_register_same("atanh", _float_fn(_tiny_identity(np.arctanh), _quiet(np.arctanh)))
_register_same("cosh", _float_fn(np.cosh, _quiet(np.cosh)))
_register_same("sinh", _float_fn(_tiny_identity(np.sinh), _quiet(np.sinh)))
_register_same("erf", _float_fn(erf, allow_complex=False))


def _isfinite_impl(dt):
    if _kind(dt) != "float":
        return None
    if dt in (F32, F64, np.dtype(np.float16)):
        return np.isfinite
    return lambda x: np.isfinite(x.astype(F32))


@kernel("is-finite")
def _k_isfinite(ins, ctx):
    return _by_operand_dtype(ins, _isfinite_impl, ctx)


def _real_impl(dt):
    k = _kind(dt)
    if k == "complex":
        return lambda x: nx.contig(x.real)
    if k == "float":
        return lambda x: x
    return None


def _imag_impl(dt):
    k = _kind(dt)
    if k == "complex":
        return lambda x: nx.contig(x.imag)
    if k == "float":
        return lambda x: np.zeros_like(x)
    return None


@kernel("real")
def _k_real(ins, ctx):
    return _by_operand_dtype(ins, _real_impl, ctx)


@kernel("imag")
def _k_imag(ins, ctx):
    return _by_operand_dtype(ins, _imag_impl, ctx)


def _not_impl(dt):
    k = _kind(dt)
    if k == "pred":
        return np.logical_not
    if k in ("sint", "uint"):
        return _via_int(np.invert, dt) if nx.is_sub_byte_int(dt) else np.invert
    return None


_register_same("not", _not_impl)


def popcnt(x: np.ndarray) -> np.ndarray:
    if nx.ptype(x.dtype).name == "s4":
        # XLA:CPU counts the bits of s4 values sign-extended to 8 bits (popcnt(-1) = 8).
        return nx.popcount(x.astype(np.int8).view(np.uint8)).astype(np.int64)
    return nx.popcount(nx.to_bits(x)).astype(np.int64)


def clz(x: np.ndarray) -> np.ndarray:
    w = nx.bit_width(x.dtype)
    return w - nx.bit_length(nx.to_bits(x), w).astype(np.int64)


def _bitcount_impl(fn):
    def impl(dt):
        if not _is_int(dt):
            return None
        return lambda x: nx.wrap_int(fn(np.asarray(x)), dt)
    return impl


_register_same("popcnt", _bitcount_impl(popcnt))
_register_same("count-leading-zeros", _bitcount_impl(clz))


# --------------------------------------------------------------------------------------------------
# Binary arithmetic

def int_divide(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """XLA's integer division: truncating; x/0 = -1 (all ones for unsigned); INT_MIN/-1 = INT_MIN."""
    dt = a.dtype
    zero = b == 0
    if dt.kind == "i":
        lo = np.iinfo(dt).min
        ovf = (a == lo) & (b == -1)
        safe = np.where(zero | ovf, np.ones((), dt), b)
        r = np.fmod(a, safe)
        q = (a - r) // safe
        q = np.where(zero, np.array(-1, dt), q)
        return np.where(ovf, a, q)
    safe = np.where(zero, np.ones((), dt), b)
    q = a // safe
    return np.where(zero, np.array(np.iinfo(dt).max, dt), q)


def int_remainder(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """XLA's integer remainder: the dividend's sign; x%0 = x; INT_MIN%-1 = 0."""
    dt = a.dtype
    zero = b == 0
    if dt.kind == "i":
        ovf = (a == np.iinfo(dt).min) & (b == -1)
        safe = np.where(zero | ovf, np.ones((), dt), b)
        r = np.fmod(a, safe)
        r = np.where(ovf, np.zeros((), dt), r)
    else:
        safe = np.where(zero, np.ones((), dt), b)
        r = np.fmod(a, safe)
    return np.where(zero, a, r)


def _sub_byte_div(fn):
    """Sub-byte ints divide in int8/uint8 with the sub-type's own INT_MIN/-1 and x/0 rules."""
    def impl(dt):
        hi = nx.int_range(dt)[1]
        signed = _kind(dt) == "sint"

        def g(a, b):
            a8 = a.astype(np.int8 if signed else np.uint8)
            b8 = b.astype(np.int8 if signed else np.uint8)
            r = fn(a8, b8)
            if fn is int_divide:
                r = np.where(b8 == 0, np.array(-1 if signed else hi, r.dtype), r)
            return nx.wrap_int(r, dt)
        return g
    return impl


def _divide_impl(dt):
    k = _kind(dt)
    if k in ("sint", "uint"):
        if nx.is_sub_byte_int(dt):
            return _sub_byte_div(int_divide)(dt)
        return _quiet(int_divide)
    if k == "float":
        # f32/f64: the bare ufunc (x/0 and 0/0 warnings are silenced by the evaluator's errstate)
        return np.true_divide if dt in (F32, F64) else _via_f32(np.true_divide, dt)
    if k == "complex":
        return nx.complex_divide  # XLA's Smith division with its inf/NaN corner cases
    return None


def _remainder_impl(dt):
    k = _kind(dt)
    if k in ("sint", "uint"):
        if nx.is_sub_byte_int(dt):
            return _sub_byte_div(int_remainder)(dt)
        return _quiet(int_remainder)
    if k == "float":
        return _quiet(np.fmod) if dt in (F32, F64) else _via_f32(np.fmod, dt)
    return None


_register_same("add", _arith(np.add, np.add, np.add, pred_fn=np.logical_or))
_register_same("subtract", _arith(np.subtract, np.subtract, np.subtract, pred_fn=np.logical_xor))
_register_same("multiply", _arith(np.multiply, np.multiply, nx.complex_multiply, pred_fn=np.logical_and))
_register_same("divide", _divide_impl)
_register_same("remainder", _remainder_impl)
_SIGNED_OF = {np.dtype(np.float32): np.dtype(np.int32), np.dtype(np.float64): np.dtype(np.int64)}
_UNSIGNED_OF = {np.dtype(np.float32): np.dtype(np.uint32), np.dtype(np.float64): np.dtype(np.uint64)}


def float_max(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """NaN-propagating maximum with -0 < +0 (XLA:CPU), f32/f64.

    np.maximum propagates NaN and returns one operand when they compare equal, so only a -0 result
    can be wrong (the maximum is +0 when either operand is +0).  -0's bit pattern is the smallest
    signed integer, so one read-only min-reduction finds it (cheaper than comparing with 0); the fix
    (rare: -0 results) takes the sign bit from both operands.  Under denormal flushing NumPy's result
    holds no subnormal (it reads and writes them as zeros like XLA), so its zeros are exactly these."""
    r = np.maximum(a, b)
    sdt = _SIGNED_OF.get(r.dtype)
    if sdt is None or r.size == 0:  # other types: the plain comparison path
        return _max_fix_slow(a, b, r)
    neg0 = np.iinfo(sdt).min
    rb = r.view(sdt)
    if rb.min() == neg0:
        udt = _UNSIGNED_OF[r.dtype]
        # at a -0 result: -0 iff both operands have the sign bit (they are <= -0)
        sign = udt.type(1 << (8 * udt.itemsize - 1))
        both = np.bitwise_and(np.asarray(a).view(udt), np.asarray(b).view(udt)) & sign
        r = np.where(rb == neg0, both.view(r.dtype), r)
    return r


def float_min(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """NaN-propagating minimum with -0 < +0 (XLA:CPU), f32/f64: the mirror of float_max (only a +0
    result can be wrong; +0 is the smallest unsigned bit pattern)."""
    r = np.minimum(a, b)
    udt = _UNSIGNED_OF.get(r.dtype)
    if udt is None or r.size == 0:
        return _min_fix_slow(a, b, r)
    rb = r.view(udt)
    if rb.min() == 0:
        sign = udt.type(1 << (8 * udt.itemsize - 1))
        either = np.bitwise_or(np.asarray(a).view(udt), np.asarray(b).view(udt)) & sign
        r = np.where(rb == 0, either.view(r.dtype), r)
    return r


def _max_fix_slow(a, b, r):
    z = r == 0
    if np.any(z):
        r = np.where(z & (a == b), a + b, r)  # both zero: +0 unless both are -0
    return r


def _min_fix_slow(a, b, r):
    z = r == 0
    if np.any(z):
        r = np.where(z & (a == b), -((-a) + (-b)), r)  # both zero: -0 unless both are +0
    return r


_register_same("maximum", _arith(np.maximum, float_max, pred_fn=np.logical_or))
_register_same("minimum", _arith(np.minimum, float_min, pred_fn=np.logical_and))
def atan2(y: np.ndarray, x: np.ndarray) -> np.ndarray:
    """atan2 as XLA:CPU computes it while denormals are flushed (the libm call sees the raw bits of
    a subnormal y, the arithmetic reads them as zero).  Measured through JAX: a nonzero subnormal y
    over x = +-0 (f32; and over a flushed subnormal x in f64) gives +-pi/2 with y's sign, and in f64
    over a finite negative x with |x| >= 2^-966 it gives -pi whatever y's sign.  Without flushing, y == 0 only for real
    zeros and this is plain np.arctan2."""
    r = np.arctan2(y, x)
    z = y == 0
    if not z.any():
        return r
    ub = nx.bits_dtype(y.dtype)
    mag = np.array(np.iinfo(ub).max >> 1, ub)
    sub = z & ((y.view(ub) & mag) != 0)
    if sub.any():
        if y.dtype == F64:
            xz = x == 0
            r = np.where(sub & (x <= -2.0 ** -966) & (x > -np.inf), np.array(-math.pi, r.dtype), r)
        else:
            xz = (x.view(ub) & mag) == 0
        r = np.where(sub & xz, np.copysign(np.array(math.pi / 2, r.dtype), y), r)
    return r


_register_same("atan2", _float_fn(atan2, allow_complex=False))
_register_same("and", _arith(np.bitwise_and, None, pred_fn=np.logical_and))
_register_same("or", _arith(np.bitwise_or, None, pred_fn=np.logical_or))
_register_same("xor", _arith(np.bitwise_xor, None, pred_fn=np.logical_xor))


def int_power(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """XLA:CPU's integer power: exponentiation by squaring over the low 6 bits of the exponent's bit
    pattern (so e and e mod 64 agree), products wrapping; an exponent that is negative when its bits
    are read as signed (even for u8..u64; u2/u4 are zero-extended bytes, never negative) gives 0
    unless the base is 1 or -1 (bits read as signed as well)."""
    dt = a.dtype
    w = nx.bit_width(dt)
    a, b = np.broadcast_arrays(a, b)
    eb = nx.to_bits(b).astype(np.uint64)
    if dt.kind == "i" or nx.ptype(dt).kind == "sint":
        neg = b.astype(np.int64) < 0
    elif w >= 8:
        neg = eb >= np.uint64(1 << (w - 1))
    else:  # u2/u4 live zero-extended in a byte: never negative
        neg = np.zeros(eb.shape, bool)
    e = eb & np.uint64(63)
    cd = nx.compute_dtype(dt) if nx.is_sub_byte_int(dt) else dt
    base = a.astype(cd)
    result = np.ones(a.shape, cd)
    for _ in range(6):
        odd = (e & np.uint64(1)).astype(bool)
        if not odd.any() and not e.any():
            break
        result = np.where(odd, result * base, result)
        e = e >> np.uint64(1)
        base = base * base
    result = nx.wrap_int(result, dt) if cd != dt else result
    if neg.any():
        sa = nx.to_bits(a).astype(np.uint64)
        unit = (sa == np.uint64(1)) | (sa == np.uint64((1 << w) - 1))  # 1 or -1 (signed reading)
        result = np.where(neg & ~unit, np.zeros((), dt), result)
    return result


def float_power(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """IEEE pow; XLA:CPU does not flush a denormal exponent (0 ** -tiny = inf, (-1) ** tiny = NaN),
    so such exponents are replaced by the smallest normal of the same sign, which gives the same
    results."""
    r = np.power(a, b)
    if b.dtype in (F32, F64):
        ub = nx.to_bits(b)
        fi = np.finfo(b.dtype)
        mant = ub.dtype.type((1 << fi.nmant) - 1)
        expo = ~mant & ~ub.dtype.type(1 << (8 * b.dtype.itemsize - 1))
        den = ((ub & expo) == 0) & ((ub & mant) != 0)
        if den.any():
            bt = np.where(den, np.copysign(np.array(fi.tiny, b.dtype), b), b)
            r = np.where(den, np.power(a, bt), r)
        # nor a negative denormal base: with a non-integer exponent the result is NaN
        ua = nx.to_bits(a)
        negden = ((ua & expo) == 0) & ((ua & mant) != 0) & np.signbit(a)
        if negden.any():
            nonint = (np.trunc(b) != b) | den
            r = np.where(negden & nonint, np.array(np.nan, r.dtype), r)
    return r


def _power_impl(dt):
    k = _kind(dt)
    if k == "pred":
        return lambda a, b: np.logical_or(a, np.logical_not(b))
    if k in ("sint", "uint"):
        return int_power
    if k == "float":
        if nx.ptype(dt).name == "f8e8m0fnu":  # XLA keeps 2^-127 (an f32 denormal) here
            return lambda a, b: nx.f64_to_low(np.power(nx.e8m0_to_f64(a), nx.e8m0_to_f64(b)), dt)
        return _quiet(float_power) if dt in (F32, F64) else _via_f32(float_power, dt)
    if k == "complex":
        return _quiet(complex_power)
    return None


def _component_fn(fn):
    """A real transcendental for the parts of a complex value: f32 computed in f64 and rounded once
    (closer to XLA:CPU's own f32 functions than NumPy's f32 ones: measured on sine, 47 of 4000 results
    differ instead of 552)."""
    def g(*xs):
        if xs[0].dtype == F32:
            return fn(*[v.astype(F64) for v in xs]).astype(F32)
        return fn(*xs)
    return g


_C_POW, _C_ATAN2, _C_EXP, _C_LOG = (_component_fn(f) for f in (np.power, np.arctan2, np.exp, np.log))
_C_SIN, _C_COS = _component_fn(np.sin), _component_fn(np.cos)


def complex_abs(z: np.ndarray) -> np.ndarray:
    """|z| as XLA computes it: max * sqrt(1 + (min/max)^2), min where that is NaN."""
    re, im = np.abs(z.real), np.abs(z.imag)
    mx, mn = np.maximum(re, im), np.minimum(re, im)
    div = mn / mx
    r = mx * np.sqrt(1 + div * div)
    return np.where(np.isnan(r), mn, r)


def complex_power(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """x**y for complex as XLA:CPU computes it (ElementalIrEmitter::EmitComplexPower): with x = a+bi,
    y = c+di: |x|^c * exp(-d*arg x) * (cos q + i sin q), q = c*arg x + d*ln|x| (an fma); then 0^y = 0
    (1 for y = 0) when y is real and >= 0, x^0 = 1, 1^y = 1, inf^c = inf (c > 0) or 0 (c < 0)."""
    a, b, c, d = x.real, x.imag, y.real, y.imag
    ft = a.dtype.type
    ab = complex_abs(x)
    arg = _C_ATAN2(b, a)
    coeff = _C_POW(ab, c) * _C_EXP(-d * arg)
    q = nx.fma(c, arg, d * _C_LOG(ab))
    re, im = coeff * _C_COS(q), coeff * _C_SIN(q)
    zero, one, inf = ft(0), ft(1), ft(np.inf)
    for cond, r, i in (((ab == 0) & (d == 0) & (zero <= c), np.where(c == 0, one, zero), zero),
                       ((c == 0) & (d == 0), one, zero),
                       ((a == 1) & (b == 0), one, zero),
                       ((a == inf) & (b == 0) & (d == 0) & (c > 0), inf, zero),
                       ((a == inf) & (b == 0) & (d == 0) & (c < 0), zero, zero)):
        re, im = np.where(cond, r, re), np.where(cond, i, im)
    out = np.empty(np.broadcast_shapes(x.shape, y.shape), x.dtype)
    out.real = re
    out.imag = im
    return out


def _complex_sin_cos(cos: bool):
    """sine/cosine of x+iy as XLA:CPU computes them: sinh/cosh from exp(y) (0.5*e^y -/+ 0.5/e^y), then
    sin x cosh y + i cos x sinh y (cosine: cos x cosh y - i sin x sinh y)."""
    def f(z):
        x, y = z.real, z.imag
        ft = x.dtype.type
        ey = _C_EXP(y)
        h, hn = ft(0.5) * ey, ft(0.5) / ey
        sx, cx = _C_SIN(x), _C_COS(x)
        sh, ch = h - hn, h + hn
        out = np.empty(z.shape, z.dtype)
        if cos:
            out.real, out.imag = cx * ch, -(sx * sh)
        else:
            out.real, out.imag = sx * ch, cx * sh
        return out
    return _quiet(f)


_register_same("power", _power_impl)
_register_same("sine", _float_fn(_tiny_identity(_C_SIN), _complex_sin_cos(False)))
_register_same("cosine", _float_fn(_C_COS, _complex_sin_cos(True)))


def complex_from(re: np.ndarray, im: np.ndarray) -> np.ndarray:
    dt = np.complex64 if re.dtype == F32 else np.complex128
    re, im = np.broadcast_arrays(re, im)
    out = np.empty(re.shape, dt)
    out.real = re
    out.imag = im
    return out


@kernel("complex")
def _k_complex(ins, ctx):
    return _finish(ins, complex_from)


# ---- shifts: the amount is read as unsigned; >= bit width saturates

def _shift_impl(which: str):
    def impl(dt):
        if not _is_int(dt):
            return None
        w = nx.bit_width(dt)
        ct = nx.SINT_OF_SIZE[8]  # compute in int64 / uint64
        signed = _kind(dt) == "sint"

        def g(a, b):
            with np.errstate(**_QUIET):
                return _g(a, b)

        def _g(a, b):
            ub = nx.to_bits(b).astype(np.uint64)  # unsigned amount, of b's own width
            big = ub >= np.uint64(w)
            amt = np.where(big, np.uint64(0), ub)
            if which == "left":
                v = nx.to_bits(a).astype(np.uint64) << amt
                r = np.where(big, np.uint64(0), v)
                return nx.from_bits(r & np.uint64((1 << w) - 1), dt)
            if which == "logical":
                v = nx.to_bits(a).astype(np.uint64) >> amt
                r = np.where(big, np.uint64(0), v)
                return nx.from_bits(r, dt)
            # arithmetic: on the bits read as signed (XLA does this for unsigned types too)
            if signed:
                av = a.astype(ct)
            elif w == 64:
                av = a.view(np.int64)
            else:
                u = nx.to_bits(a).astype(np.int64)
                av = np.where(u >= (1 << (w - 1)), u - (1 << w), u)
            r = av >> np.where(big, np.uint64(w - 1), amt).astype(ct)
            return nx.from_bits(r.astype(np.uint64) & np.uint64((1 << w) - 1), dt) if not signed \
                else nx.wrap_int(r, dt)
        return g
    return impl


_register_same("shift-left", _shift_impl("left"))
_register_same("shift-right-logical", _shift_impl("logical"))
_register_same("shift-right-arithmetic", _shift_impl("arith"))


def mulhi(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The high half of the double-width product."""
    dt = a.dtype
    t = nx.ptype(dt)
    w = t.bits
    signed = t.kind == "sint"
    if w <= 32:
        wide = np.int64 if signed else np.uint64
        p = a.astype(wide) * b.astype(wide)
        return nx.wrap_int(p >> wide(w), dt)
    # 64-bit: schoolbook on 32-bit limbs of the unsigned values, then fix the sign.
    ua = a.view(np.uint64) if signed else a
    ub = b.view(np.uint64) if signed else b
    m32 = np.uint64(0xFFFFFFFF)
    s32 = np.uint64(32)
    al, ah = ua & m32, ua >> s32
    bl, bh = ub & m32, ub >> s32
    ll = al * bl
    lh = al * bh
    hl = ah * bl
    hh = ah * bh
    mid = (ll >> s32) + (lh & m32) + (hl & m32)
    hi = hh + (lh >> s32) + (hl >> s32) + (mid >> s32)
    if signed:
        # signed high = unsigned high - (a<0 ? b : 0) - (b<0 ? a : 0)  (mod 2^64)
        hi = hi - np.where(a < 0, ub, np.uint64(0)) - np.where(b < 0, ua, np.uint64(0))
        return hi.view(np.int64)
    return hi


def _mulhi_impl(dt):
    if not _is_int(dt):
        return None
    if nx.is_sub_byte_int(dt):
        return lambda a, b: _sub_mulhi(a, b, dt)
    return mulhi


def _sub_mulhi(a, b, dt):
    w = nx.bit_width(dt)
    p = a.astype(np.int64) * b.astype(np.int64)
    return nx.wrap_int(p >> np.int64(w), dt)


_register_same("mulhi", _mulhi_impl)


# --------------------------------------------------------------------------------------------------
# Comparison

_DIRECTIONS = {"EQ": np.equal, "NE": np.not_equal, "LT": np.less, "LE": np.less_equal,
               "GT": np.greater, "GE": np.greater_equal}


def total_order_key(x: np.ndarray) -> np.ndarray:
    """A signed integer per float whose order is IEEE's totalOrder:
    -NaN < -inf < ... < -0 < +0 < ... < +inf < +NaN."""
    u = nx.to_bits(x)
    w = nx.bit_width(x.dtype)
    if nx.ptype(x.dtype).name == "f8e8m0fnu":  # unsigned format: the bits are the order
        return u.astype(np.int16)
    sdt = nx.SINT_OF_SIZE[max(u.dtype.itemsize, 1)]
    if w < 8:
        v = u.astype(np.int16)
        sign = (v >> (w - 1)) & 1
        mag = v & ((1 << (w - 1)) - 1)
        return np.where(sign == 1, -mag - 1, mag)
    s = u.view(sdt)
    # negative floats: flip the magnitude bits so that larger magnitudes sort lower
    return np.where(s < 0, s ^ np.array(np.iinfo(sdt).max, sdt), s)


def compare(a: np.ndarray, b: np.ndarray, direction: str, ctype: Optional[str] = None) -> np.ndarray:
    fn = _DIRECTIONS[direction]
    return _compare_impl(a.dtype, fn, ctype, direction)(a, b)


def _compare_impl(dt, fn, ctype, direction):
    k = _kind(dt)
    if k == "complex":
        if direction not in ("EQ", "NE"):
            return None
        return fn
    if k == "float":
        if ctype == "TOTALORDER":
            return lambda a, b: fn(total_order_key(a), total_order_key(b))
        if dt in (F32, F64, np.dtype(np.float16)):
            return fn
        return lambda a, b: fn(a.astype(F32), b.astype(F32))
    if k in ("sint", "uint", "pred"):
        if ctype == "UNSIGNED" and k == "sint":
            return lambda a, b: fn(nx.to_bits(a), nx.to_bits(b))
        if ctype == "SIGNED" and k == "uint":
            sdt = nx.SINT_OF_SIZE[dt.itemsize]
            if nx.is_sub_byte_int(dt):
                w = nx.bit_width(dt)
                return lambda a, b: fn(*(np.where(v >= 1 << (w - 1), v - (1 << w), v)
                                         for v in (a.astype(np.int16), b.astype(np.int16))))
            return lambda a, b: fn(a.view(sdt), b.view(sdt))
        if nx.is_sub_byte_int(dt):
            return lambda a, b: fn(a.astype(np.int16), b.astype(np.int16))
        return fn
    return None


def _is_zero_constant(ctx, name: str) -> bool:
    """Whether operand `name` is a literal zero (a constant, or a broadcast of one)."""
    scope = getattr(ctx, "_scopes", None)
    if not scope:
        return False
    op = scope[-1].get(name)
    for _ in range(3):
        if op is None:
            return False
        if op.opcode == "constant":
            v = getattr(op.literal, "value", None)
            if not isinstance(v, np.ndarray) or v.size == 0 or v.dtype.kind not in "fV":
                return False
            try:
                return not v.astype(np.float32).any()
            except (TypeError, ValueError):
                return False
        if op.opcode not in ("broadcast", "copy", "reshape") or not op.operands:
            return False
        op = scope[-1].get(op.operands[0])
    return False


def _nonzero_bits(x: np.ndarray) -> np.ndarray:
    """x != 0 on the bits (a denormal counts as nonzero, NaN too; -0 is zero)."""
    u = nx.to_bits(x)
    return (u & u.dtype.type((1 << (8 * u.dtype.itemsize - 1)) - 1)) != 0


@kernel("compare")
def _k_compare(ins, ctx):
    direction = ins.attrs.get("direction")
    if direction not in _DIRECTIONS:
        raise error_at(ins, f"compare: unknown direction {direction!r}")
    fn = _DIRECTIONS[direction]
    ctype = ins.attrs.get("type")
    if ctype is not None and ctype not in ("FLOAT", "TOTALORDER", "SIGNED", "UNSIGNED"):
        raise error_at(ins, f"compare: unknown comparison type {ctype!r}")
    if direction in ("EQ", "NE") and ctype != "TOTALORDER" and len(ins.operands) == 2:
        # XLA:CPU turns a bf16 `x ==/!= 0` against a literal zero into a test of the bits, which
        # sees a denormal as nonzero (measured: JAX's astype(bool) on bf16); f32/f64 flush there.
        zero_side = 1 if _is_zero_constant(ctx, ins.operands[1]) else \
            0 if _is_zero_constant(ctx, ins.operands[0]) else None
        odt = _operand_dtype(ins, ctx)
        if zero_side is not None and odt is not None and nx.ptype(odt).name == "bf16":
            ne = direction == "NE"

            def cmp0(a, b, _k=1 - zero_side):
                nz = _nonzero_bits((a, b)[_k])
                return nz if ne else ~nz
            return _finish(ins, cmp0)
    return _by_operand_dtype(ins, lambda dt: _compare_impl(dt, fn, ctype, direction), ctx)


# --------------------------------------------------------------------------------------------------
# Ternary

def select(p: np.ndarray, t: np.ndarray, f: np.ndarray) -> np.ndarray:
    """np.where, or for large 4-byte arrays a branch-free blend of the bit patterns,
    f ^ ((t ^ f) * p): np.where branches per element and costs ~6x more on an unpredictable mask
    (e.g. a ReLU gradient's x > 0); the blend costs about np.where's best case on any mask."""
    if t.dtype.itemsize == 4 and t.size >= 1024 and t.shape == f.shape and (p.shape == t.shape or p.ndim == 0):
        o = np.bitwise_xor(t.view(np.uint32), f.view(np.uint32))
        np.multiply(o, p, out=o)
        np.bitwise_xor(o, f.view(np.uint32), out=o)
        return o.view(t.dtype)
    return np.where(p, t, f)


def clamp(lo: np.ndarray, x: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """min(max(x, lo), hi) with NaN propagation (maximum/minimum semantics)."""
    if x.dtype.kind == "f":
        return float_min(float_max(x, lo), hi)
    return np.minimum(np.maximum(x, lo), hi)


@kernel("select")
def _k_select(ins, ctx):
    if getattr(ins.shape, "is_tuple", False):
        return lambda p, t, f: t if bool(p) else f
    return _finish(ins, select)


def _clamp_impl(dt):
    k = _kind(dt)
    if k in ("sint", "uint", "pred"):
        if nx.is_sub_byte_int(dt):
            return lambda lo, x, hi: clamp(lo.astype(np.int16), x.astype(np.int16),
                                           hi.astype(np.int16)).astype(dt)
        return clamp
    if k == "float":
        if dt in (F32, F64, np.dtype(np.float16)):
            return clamp
        return lambda lo, x, hi: clamp(lo.astype(F32), x.astype(F32), hi.astype(F32)).astype(dt)
    return None


_register_same("clamp", _clamp_impl)


# --------------------------------------------------------------------------------------------------
# Conversions

def convert(x: np.ndarray, dst: np.dtype) -> np.ndarray:
    """XLA's convert: RNE rounding once, float->int truncating with saturation and NaN -> 0,
    int->int wrap, x != 0 for pred."""
    dst = np.dtype(dst)
    x = np.asarray(x)
    src = x.dtype
    if src == dst:
        return x
    ks, kd = _kind(src), _kind(dst)
    with np.errstate(**_QUIET):
        if kd == "pred":
            if ks == "float" and nx.is_low_float(src):
                return nx.low_float_nonzero(x)
            return x != 0
        if ks == "pred":
            return x.astype(np.uint8).astype(dst) if kd != "float" or not nx.is_low_float(dst) \
                else x.astype(F32).astype(dst)
        if ks in ("sint", "uint"):
            if kd in ("sint", "uint"):
                xi = x.astype(np.int16 if ks == "sint" else np.uint16) if nx.is_sub_byte_int(src) else x
                return nx.wrap_int(xi, dst)
            if kd == "float":
                return nx.int_to_float(x, dst)
            if kd == "complex":
                return nx.int_to_float(x, F64 if dst == np.complex128 else F32).astype(dst)
        if ks == "float":
            if kd in ("sint", "uint"):
                return nx.float_to_int(x, dst)
            if kd == "float":
                return nx.float_convert(x, dst)
            if kd == "complex":
                if nx.ptype(src).name == "f8e8m0fnu":
                    return (nx.e8m0_to_f64(x) if dst == np.complex128 else x.astype(F32)).astype(dst)
                xf = nx.float_convert(x, F32) if nx.is_low_float(src) else x
                return xf.astype(dst)
        if ks == "complex":
            if kd == "complex":
                return x.astype(dst)
            return convert(nx.contig(x.real), dst)
    raise TypeError(f"convert {src} -> {dst}")


@kernel("convert")
def _k_convert(ins, ctx):
    dst = _result_dtype(ins)

    def impl(dt):
        try:
            _kind(dt)
        except KeyError:
            return None
        if (dt, dst) in _PLAIN_CASTS:  # one cast, nothing for convert() to adjust
            return lambda x: x.astype(dst)
        return lambda x: convert(x, dst)
    return _by_operand_dtype(ins, impl, ctx)


# Conversions for which convert() reduces to `x.astype(dst)`: f32 <-> f64 (the hardware cast, which
# honours the flushing mode like XLA) and f32 <-> bf16 (ml_dtypes' integer rounding, which keeps bf16
# subnormals like XLA).  Bound directly, they cost one cast.
_BF16 = np.dtype(nx.ml_dtypes.bfloat16)
_PLAIN_CASTS = {(F32, F64), (F64, F32), (F32, _BF16), (_BF16, F32)}


def bitcast_convert(x: np.ndarray, dst: np.dtype, dims: tuple) -> np.ndarray:
    """Reinterpret the bits of each element; a size change adds/removes a minor dimension whose
    elements are the little-endian pieces (XLA's order)."""
    dst = np.dtype(dst)
    x = np.asarray(x)
    ws, wd = nx.bit_width(x.dtype), nx.bit_width(dst)
    if x.dtype == dst:  # same type (c128 -> c128 too: no 16-byte integer holds its bits)
        return nx.contig(x).copy().reshape(dims)
    if ws == wd and wd <= 64:
        return nx.from_bits(nx.to_bits(x), dst).reshape(dims)
    if ws >= 8 and wd >= 8:
        if x.dtype == BOOL:
            x = x.astype(np.uint8)
        if dst.kind == "c":  # 8/16-byte pieces joined into c64/c128: NumPy views them directly
            return nx.contig(x).reshape(-1).view(dst).reshape(dims)
        raw = nx.contig(x).reshape(-1).view(nx.bits_dtype(dst))
        return nx.from_bits(raw, dst).reshape(dims)
    # sub-byte pieces: split or join bit fields, least significant first
    if ws > wd:
        n = ws // wd
        u = nx.to_bits(x).astype(np.uint64)[..., None]
        shifts = (np.arange(n, dtype=np.uint64) * np.uint64(wd))
        pieces = (u >> shifts) & np.uint64((1 << wd) - 1)
        return nx.from_bits(pieces, dst).reshape(dims)
    n = wd // ws
    u = nx.to_bits(x).astype(np.uint64)
    shifts = (np.arange(n, dtype=np.uint64) * np.uint64(ws))
    joined = np.bitwise_or.reduce(u << shifts, axis=-1)
    return nx.from_bits(joined, dst).reshape(dims)


@kernel("bitcast-convert")
def _k_bitcast_convert(ins, ctx):
    dst = _result_dtype(ins)
    dims = tuple(ins.shape.dims)
    return lambda x: bitcast_convert(x, dst, dims)


def reduce_precision(x: np.ndarray, exponent_bits: int, mantissa_bits: int) -> np.ndarray:
    """Round to a float format with the given exponent/mantissa widths and back (XLA's algorithm:
    round-to-nearest-even on the bit pattern; overflow -> inf; values below the reduced format's
    normal range flush to zero; NaN stays NaN, or becomes inf when mantissa_bits is 0)."""
    x = np.asarray(x)
    dt = x.dtype
    if not (dt in (F32, F64, np.dtype(np.float16)) or nx.ptype(dt).name == "bf16"):
        # f8/f4: work in f32 and round back.
        return nx.from_f32(reduce_precision(x.astype(F32), exponent_bits, mantissa_bits), dt)
    src_e, src_m = nx.float_format(dt)
    w = nx.bit_width(dt)
    ut = nx.bits_dtype(dt)
    U = ut.type
    bits = nx.to_bits(x).copy()
    if mantissa_bits < src_m:
        shift = src_m - mantissa_bits
        last = U(1 << shift)
        base_bias = U((1 << (shift - 1)) - 1)
        lsb = (bits & last) >> U(shift)
        bits = (bits + lsb + base_bias) & ~U((1 << shift) - 1)
    if exponent_bits < src_e:
        sign_mask = U(1 << (w - 1))
        exp_mask = U(((1 << src_e) - 1) << src_m)
        bias = (1 << (src_e - 1)) - 1
        rbias = (1 << (exponent_bits - 1)) - 1
        max_e = bias + rbias
        min_e = bias - rbias
        e = bits & exp_mask
        overflow = e > U(max_e << src_m)
        underflow = e <= U(min_e << src_m)
        signed_zero = bits & sign_mask
        signed_inf = signed_zero | exp_mask
        bits = np.where(overflow, signed_inf, np.where(underflow, signed_zero, bits))
    out = nx.from_bits(bits, dt)
    nan = np.isnan(x)
    if nan.any():  # XLA:CPU keeps the NaN (also when mantissa_bits is 0)
        out = np.where(nan, x, out)
    return out


@kernel("reduce-precision")
def _k_reduce_precision(ins, ctx):
    e = ins.attrs.get("exponent_bits")
    m = ins.attrs.get("mantissa_bits")
    if not isinstance(e, int) or not isinstance(m, int) or e < 1 or m < 0:
        raise error_at(ins, "reduce-precision: needs exponent_bits >= 1 and mantissa_bits >= 0")

    def impl(dt):
        if not _is_float(dt):
            return None
        return lambda x: reduce_precision(x, e, m)
    return _by_operand_dtype(ins, impl, ctx)


def stochastic_convert(x: np.ndarray, rnd: np.ndarray, dst: np.dtype) -> np.ndarray:
    """Float -> signed int, rounding |x| up when the random bits are below its scaled fraction
    (XLA's StochasticConvertDecomposer); saturates at the type's bounds; NaN -> 0."""
    dst = np.dtype(dst)
    lo, hi = nx.int_range(dst)
    rw = nx.bit_width(rnd.dtype)
    with np.errstate(**_QUIET):
        xf = x.astype(F64)
        neg = xf < 0
        a = np.abs(xf)
        t = np.floor(a)
        frac = a - t
        # the fraction, scaled to the random bits' range, converted like XLA's convert (saturating)
        fixed = nx.float_to_int(frac * float(2 ** rw), nx.bits_dtype(rnd.dtype) if rw >= 8
                                else np.dtype(np.uint8))
        up = nx.to_bits(rnd).astype(np.uint64) < fixed.astype(np.uint64)
        ti = nx.float_to_int(t, np.int64).astype(np.int64)
        ti = np.where(up, ti + 1, ti)
        r = np.where(neg, -ti, ti)
        r = np.where(xf <= lo, lo, r)
        r = np.where(xf >= hi, hi, r)
        return nx.wrap_int(r, dst)


@kernel("stochastic-convert")
def _k_stochastic_convert(ins, ctx):
    dst = _result_dtype(ins)
    if _kind(dst) != "sint":
        raise error_at(ins, f"stochastic-convert: unsupported result type {nx.ptype(dst).name} "
                            "(XLA converts floats to signed integers only)")

    def impl(dt):
        if not _is_float(dt):
            return None
        return lambda x, r: stochastic_convert(x, r, dst)
    return _by_operand_dtype(ins, impl, ctx)
