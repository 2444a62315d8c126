#!/usr/bin/env python3
"""Regenerate tests/golden/: XLA:CPU-computed golden cases for the evaluator (dev-only).

This script is a developer tool.  It needs JAX (``pip install jax``), which is NOT a dependency of
hlo-interp: the package and its tests only read the files written here.

For each small program ("case", named ``<family>/<name>``) it writes ``tests/golden/<family>/<name>/``:

    before.hlo     jax.jit(f).lower(*args).as_text(dialect="hlo")        (pre-optimization)
                   or, for hand-written cases, the hand-written HLO text
    after.hlo      the XLA:CPU post-optimization module text
    inputs.npz     arg0, arg1, ...   (the entry parameters, in order)
    expected.npz   out0, out1, ...   (XLA:CPU's result leaves, flattened depth-first)
    case.json      family, opcodes exercised, dtypes, the comparison rule, and per array its dtype
                   and how it is stored (see tests/golden/README.md)

The `models` family holds whole programs (a CNN, a transformer, a GRU, linalg, fft, jax.random, ...;
the networks are defined in tools/jax_models.py, which bench/run.py shares); ``Case.x64=False`` traces a
case with jax_enable_x64 off (JAX's default), every other case with it on.

Hand-written cases (``hlo=`` below) cover HLO that JAX never emits (TOTALORDER compares, `map`,
`stochastic-convert`, integer `power`, the raw `conditional` out-of-range rule, negative dynamic-slice
starts, `logistic`, ...).  They are parsed by XLA's own parser, converted to StableHLO and compiled
and run by the same XLA:CPU client JAX uses.

Arrays of types NumPy cannot store (bf16, f8, f4, s4/u4/s2/u2: ml_dtypes types) are stored as their raw
bits in an unsigned integer array of the same width; case.json records the real dtype.

Usage:
    python3 tools/make_golden.py [--only REGEX] [--list] [--out DIR]
"""
from __future__ import annotations

import os
import sys

os.environ.setdefault("JAX_PLATFORMS", "cpu")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import argparse  # noqa: E402
import importlib.util  # noqa: E402
import json  # noqa: E402
import re  # noqa: E402
import shutil  # noqa: E402
import time  # noqa: E402
import traceback  # noqa: E402
import warnings  # noqa: E402
from dataclasses import dataclass  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any, Callable, Optional  # noqa: E402

import ml_dtypes  # noqa: E402
import numpy as np  # noqa: E402

try:
    import jax  # noqa: E402
    import jax.numpy as jnp  # noqa: E402
    from jax import lax  # noqa: E402
except ImportError:  # pragma: no cover
    sys.exit("make_golden.py needs JAX (dev-only tool): pip install jax")

warnings.filterwarnings("ignore")
jax.config.update("jax_enable_x64", True)
# No stack-frame tables: the texts then do not change each time this script's line numbers do.
jax.config.update("jax_traceback_in_locations_limit", 0)

REPO = Path(__file__).resolve().parent.parent
DEFAULT_OUT = REPO / "tests" / "golden"
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tools"))
import jax_models as jm  # the networks of the `models` family, shared with bench/run.py  # noqa: E402
from oracle import runner  # noqa: E402
from oracle.writer import write_case  # noqa: E402

# --------------------------------------------------------------------------------------------------
# element types

HLO_NAME = {
    "bool": "pred", "int2": "s2", "int4": "s4", "int8": "s8", "int16": "s16", "int32": "s32",
    "int64": "s64", "uint2": "u2", "uint4": "u4", "uint8": "u8", "uint16": "u16", "uint32": "u32",
    "uint64": "u64", "float16": "f16", "bfloat16": "bf16", "float32": "f32", "float64": "f64",
    "complex64": "c64", "complex128": "c128", "float8_e4m3fn": "f8e4m3fn", "float8_e5m2": "f8e5m2",
    "float8_e4m3": "f8e4m3", "float8_e3m4": "f8e3m4", "float8_e4m3fnuz": "f8e4m3fnuz",
    "float8_e5m2fnuz": "f8e5m2fnuz", "float8_e4m3b11fnuz": "f8e4m3b11fnuz",
    "float8_e8m0fnu": "f8e8m0fnu", "float4_e2m1fn": "f4e2m1fn",
}
NATIVE = {"bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float16",
          "float32", "float64", "complex64", "complex128"}


def D(name: str) -> np.dtype:
    return np.dtype(getattr(ml_dtypes, name)) if name not in NATIVE else np.dtype(name)


PRED = D("bool")
S2, S4, S8, S16, S32, S64 = (D(n) for n in ("int2", "int4", "int8", "int16", "int32", "int64"))
U2, U4, U8, U16, U32, U64 = (D(n) for n in ("uint2", "uint4", "uint8", "uint16", "uint32", "uint64"))
BF16, F16, F32, F64 = D("bfloat16"), D("float16"), D("float32"), D("float64")
C64, C128 = D("complex64"), D("complex128")
F8 = [D(n) for n in ("float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz",
                     "float8_e4m3b11fnuz", "float8_e3m4", "float8_e4m3", "float8_e8m0fnu")]
F8E8M0 = D("float8_e8m0fnu")
F4 = D("float4_e2m1fn")
FLOATS = [F32, F64, BF16, F16]
SINTS = [S8, S16, S32, S64, S4, S2]
UINTS = [U8, U16, U32, U64, U4, U2]
INTS = SINTS + UINTS


def hname(dt) -> str:
    return HLO_NAME[np.dtype(dt).name]


def is_float(dt) -> bool:
    dt = np.dtype(dt)
    return dt.kind == "f" or (dt.kind == "V" and "float" in dt.name)


def is_int(dt) -> bool:
    dt = np.dtype(dt)
    return dt.kind in "iu" or (dt.kind == "V" and "int" in dt.name)


def finfo(dt):
    return ml_dtypes.finfo(dt)


def iinfo(dt):
    return ml_dtypes.iinfo(dt)


def bits(dt) -> int:
    dt = np.dtype(dt)
    n = dt.name
    for k, w in (("int2", 2), ("int4", 4), ("float4", 4)):
        if k in n:
            return w
    return dt.itemsize * 8


# --------------------------------------------------------------------------------------------------
# deterministic inputs with edge cases

def _seed(*key) -> np.random.Generator:
    s = 0
    for ch in json.dumps([str(k) for k in key]):
        s = (s * 131 + ord(ch)) % (2 ** 32)
    return np.random.default_rng(s)


def fcast(vals, dt) -> np.ndarray:
    """float64 values -> dt (round-to-nearest-even; out-of-range as ml_dtypes casts)."""
    with np.errstate(all="ignore"):
        return np.asarray(vals, np.float64).astype(dt)


def float_specials(dt) -> list[float]:
    fi = finfo(dt)
    return [np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 1.5, 2.5, -2.5,
            float(fi.max), -float(fi.max), float(fi.smallest_normal), -float(fi.smallest_normal),
            float(fi.smallest_subnormal), -float(fi.smallest_subnormal), 3.0, -7.25]


def fvals(dt, n: int = 48, key: Any = "", lo: float = -4.0, hi: float = 4.0, specials=True) -> np.ndarray:
    """Edge cases (NaN, ±inf, ±0, max, normal/subnormal minimum, halves) then random values."""
    r = _seed("f", np.dtype(dt).name, key)
    sp = float_specials(dt) if specials else []
    k = max(n - len(sp), 0)
    k1 = k // 2
    rnd = list(r.uniform(lo, hi, k1))
    mag = 10.0 ** r.uniform(-6, 6, k - k1) * r.choice([-1.0, 1.0], k - k1)
    vals = sp + rnd + list(mag)
    fi = finfo(dt)
    vals = [v if (not np.isfinite(v) or abs(v) <= float(fi.max)) else np.sign(v) * float(fi.max) * 0.5
            for v in vals]
    return fcast(vals[:n], dt)


def rand_ints(r: np.random.Generator, lo: int, hi: int, n: int) -> list[int]:
    """n integers uniform in [lo, hi] (any 64-bit range)."""
    if hi > 2 ** 63 - 1:
        return [int(v) for v in r.integers(0, 2 ** 64 - 1, n, dtype=np.uint64, endpoint=True)]
    return [int(v) for v in r.integers(lo, hi, n, dtype=np.int64, endpoint=True)]


def int_specials(dt) -> list[int]:
    ii = iinfo(dt)
    lo, hi = int(ii.min), int(ii.max)
    base = [lo, hi, 0, 1, lo + 1, hi - 1, 2, hi // 2, (hi // 2) + 1]
    if lo < 0:
        base += [-1, -2, lo // 2, 3, -3, 7, -7]
    else:
        base += [3, 7, 5, hi - 2]
    return [min(max(v, lo), hi) for v in base]


def ivals(dt, n: int = 48, key: Any = "") -> np.ndarray:
    ii = iinfo(dt)
    r = _seed("i", np.dtype(dt).name, key)
    sp = int_specials(dt)
    k = max(n - len(sp), 0)
    full = rand_ints(r, int(ii.min), int(ii.max), k // 2)
    small = r.integers(max(int(ii.min), -20), min(int(ii.max), 20), k - k // 2, endpoint=True)
    vals = [int(v) for v in sp] + [int(v) for v in full] + [int(v) for v in small]
    if np.dtype(dt) == U64:
        return np.array([v % 2 ** 64 for v in vals[:n]], dtype=np.uint64)
    return np.array(vals[:n], dtype=np.int64).astype(dt) if bits(dt) < 64 else \
        np.array(vals[:n], dtype=np.int64).astype(dt)


def vals(dt, n=48, key=""):
    dt = np.dtype(dt)
    if dt == PRED:
        return _seed("p", key).integers(0, 2, n).astype(bool)
    if is_float(dt):
        return fvals(dt, n, key)
    if dt.kind == "c":
        re_ = fvals(F64, n, (key, "re"))
        im_ = fvals(F64, n, (key, "im"))[::-1]
        return (re_ + 1j * im_).astype(dt)
    return ivals(dt, n, key)


def float_pairs(dt, key="") -> tuple[np.ndarray, np.ndarray]:
    """Every pair of 8 special values (64) + 16 random pairs."""
    fi = finfo(dt)
    s = [np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -2.5, float(fi.max)]
    a = [x for x in s for _ in s]
    b = [y for _ in s for y in s]
    r = _seed("fp", np.dtype(dt).name, key)
    a += list(r.uniform(-10, 10, 12)) + [float(fi.smallest_subnormal), 7.0, -7.0, 5.5]
    b += list(r.uniform(-10, 10, 12)) + [2.0, -2.0, 3.0, -2.0]
    return fcast(a, dt), fcast(b, dt)


def int_pairs(dt, key="", rhs=None) -> tuple[np.ndarray, np.ndarray]:
    ii = iinfo(dt)
    lo, hi = int(ii.min), int(ii.max)
    if lo < 0:
        s = [lo, hi, -1, 0, 1, 3, -3, lo + 1]
    else:
        s = [0, 1, hi, hi - 1, 3, 7 if hi >= 7 else 2, (hi + 1) // 2, 2]
    s = [min(max(v, lo), hi) for v in s]
    t = rhs if rhs is not None else s
    a = [x for x in s for _ in t]
    b = [y for _ in s for y in t]
    r = _seed("ip", np.dtype(dt).name, key)
    a += rand_ints(r, lo, hi, 8) + [7, 7, -7 if lo < 0 else 5, 100 % (hi + 1)]
    b += rand_ints(r, lo, hi, 8) + [3, 0, 3 if lo < 0 else 2, 9 % (hi + 1)]

    def cv(v):
        if np.dtype(dt) == U64:
            return np.array([x % 2 ** 64 for x in v], np.uint64)
        return np.array([min(max(x, lo), hi) for x in v], np.int64).astype(dt)
    return cv(a), cv(b)


def shift_amounts(dt) -> list[int]:
    w = bits(dt)
    ii = iinfo(dt)
    s = [0, 1, w - 1, w, w + 1, 2 * w, 3]
    s = [v for v in s if v <= int(ii.max)]
    s = list(dict.fromkeys(s))
    if int(ii.min) < 0:
        s += [-1, int(ii.min)]
    else:
        s += [int(ii.max)]
    while len(s) < 8:
        s.append(1)
    return s[:8]


# --------------------------------------------------------------------------------------------------
# comparison rules

EXACT = "exact"


def tol_for(dt) -> Any:
    """The stated tolerance for transcendental functions of element type dt."""
    dt = np.dtype(dt)
    if dt in (F64, C128):
        return {"rtol": 1e-12, "atol": 1e-300}
    if dt in (F32, C64):
        return {"rtol": 1e-5, "atol": 1e-30}
    # bf16/f16/f8: XLA computes in f32 (keeping f32 intermediates inside fusions: excess precision) and
    # rounds; one or two ulps, or an absolute bound of the type's smallest normal near zero (FTZ)
    return {"ulp": 2, "atol": float(finfo(dt).smallest_normal)}


# --------------------------------------------------------------------------------------------------
# case registry

@dataclass
class Case:
    name: str                      # "<family>/<case>"
    fn: Optional[Callable]         # JAX function (None for hand-written HLO)
    args: list                     # concrete NumPy arrays
    compare: Any = EXACT           # "exact" | {"rtol":..,"atol":..} | {"ulp": n}
    hlo: Optional[str] = None      # hand-written HLO text
    labels: Optional[list] = None  # a label per output leaf
    expect: Optional[list] = None  # values the spec documents state (checked when generating)
    note: str = ""
    # per-output rules that override `compare`: {output index: (rule, reason)}
    out_compare: Optional[dict] = None
    # {"before"|"after": reason}: XLA's result for that text is an optimizer/codegen artefact that the
    # HLO as written does not have; tests/test_golden.py makes that variant a strict xfail
    xla_artifact: Optional[dict] = None
    # False: traced with jax_enable_x64 off (JAX's default: s32 indices, 32-bit random bits)
    x64: bool = True

    @property
    def family(self) -> str:
        return self.name.split("/")[0]


CASES: dict[str, Case] = {}


def add(name, fn, args, compare=EXACT, **kw) -> None:
    if name in CASES:
        raise RuntimeError(f"duplicate case {name}")
    CASES[name] = Case(name, fn, [np.asarray(a) if not isinstance(a, np.ndarray) else a for a in args],
                       compare, **kw)


def add_hlo(name, text, args, compare=EXACT, **kw) -> None:
    add(name, None, args, compare, hlo=text, **kw)


# ==================================================================================================
# elementwise

# Optimizer artefacts (see tests/golden/README.md, "Variants XLA itself does not follow"): LLVM folds
# float compares with zero and float functions of constants as IEEE arithmetic, while XLA:CPU runs
# with denormals flushed.  The `after.hlo` text then no longer describes XLA's result.
BF16_PRED_ARTIFACT = (
    "after.hlo converts bf16 to f32 and compares the f32 with 0 inside a fusion; a bf16 subnormal is an "
    "f32 subnormal, which XLA:CPU's f32 compare reads as 0 (DAZ: compare(f32 1e-40, 0, NE) = false), "
    "but LLVM folds convert+compare into an integer test of the bf16 bits, so XLA's compiled fusion "
    "gives true. The HLO as written gives false; before.hlo (bf16 compare/convert) gives XLA's true.")
E8M0_ARTIFACT = (
    "after.hlo converts f8e8m0fnu 0x00 (2^-127, an f32 subnormal) to f32 and applies sign/ceil in "
    "f32 inside a fusion; XLA:CPU's f32 sign/ceil flush that subnormal (sign(f32 2^-127) = 0, then "
    "convert 0 -> f8e8m0fnu = NaN), but LLVM folds sign/ceil of the converted constant with IEEE "
    "arithmetic and XLA's compiled fusion gives 1. The HLO as written gives NaN; before.hlo (the "
    "f8e8m0fnu ops themselves) gives XLA's 1.")

def rnd_afz(x):
    return lax.round(x, lax.RoundingMethod.AWAY_FROM_ZERO)


def rnd_even(x):
    return lax.round(x, lax.RoundingMethod.TO_NEAREST_EVEN)


# op name -> (function, exact?, domain (lo, hi) of the random part)
FLOAT_UNARY = {
    "abs": (lax.abs, True, None), "negate": (lax.neg, True, None), "sign": (lax.sign, True, None),
    "floor": (lax.floor, True, None), "ceil": (lax.ceil, True, None),
    "round_afz": (rnd_afz, True, None), "round_even": (rnd_even, True, None),
    "is_finite": (lax.is_finite, True, None), "sqrt": (lax.sqrt, True, None),
    "exp": (lax.exp, False, None), "expm1": (lax.expm1, False, None), "log": (lax.log, False, None),
    "log1p": (lax.log1p, False, None), "logistic": (lax.logistic, False, None),
    "rsqrt": (lax.rsqrt, False, None), "cbrt": (lax.cbrt, False, None), "tanh": (lax.tanh, False, None),
    "tan": (lax.tan, False, None), "sin": (lax.sin, False, None), "cos": (lax.cos, False, None),
    "erf": (lax.erf, False, None),
    "acos": (lax.acos, False, (-1.2, 1.2)), "asin": (lax.asin, False, (-1.2, 1.2)),
    "atan": (lax.atan, False, None), "cosh": (lax.cosh, False, None), "sinh": (lax.sinh, False, None),
    "atanh": (lax.atanh, False, (-1.2, 1.2)), "acosh": (lax.acosh, False, (0.5, 12.0)),
    "asinh": (lax.asinh, False, None),
}


def unary_input(dt, op):
    dom = FLOAT_UNARY[op][2]
    if op == "cbrt":  # XLA:CPU's cbrt of a subnormal (DAZ) gives -5.6e-16: a quirk not worth copying
        x = fvals(dt, 48, op)
        x[np.abs(x.astype(np.float64)) < float(finfo(dt).smallest_normal)] = 0.0
        x[16:18] = fcast([1e-3, -1e-3], dt)
        return x
    if dom is None:
        return fvals(dt, 48, op)
    return fvals(dt, 48, op, lo=dom[0], hi=dom[1])


def gen_elementwise():
    fam = "elementwise"
    # ---- float unary: every op x f32, f64, bf16, f16
    for dt in FLOATS:
        for op, (f, exact, _) in FLOAT_UNARY.items():
            add(f"{fam}/{op}_{hname(dt)}", f, [unary_input(dt, op)], EXACT if exact else tol_for(dt))
    # rounding ties and a 2-D shape
    ties = np.array([[0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 3.5, -3.5],
                     [0.49999997, -0.49999997, 4503599627370497.0, 8388609.0, -0.0, 0.0, 1e30, -1e-30]])
    for dt in (F32, F64, BF16, F16):
        x = fcast(ties, dt)
        add(f"{fam}/round_ties_{hname(dt)}", lambda x: (rnd_afz(x), rnd_even(x), lax.floor(x), lax.ceil(x)),
            [x], labels=["round-nearest-afz", "round-nearest-even", "floor", "ceil"])
    # ---- subnormals (XLA:CPU flushes them: FTZ + DAZ); one case per type, every kind of op
    for dt in (F32, F64, BF16, F16):
        fi = finfo(dt)
        sub = [float(fi.smallest_subnormal), -float(fi.smallest_subnormal),
               float(fi.smallest_normal) - float(fi.smallest_subnormal), float(fi.smallest_normal),
               float(fi.smallest_normal) * 1.5, 3 * float(fi.smallest_subnormal), 1.0, 0.0]
        x = fcast(sub, dt)
        z = np.zeros_like(x)
        o = np.ones_like(x)
        # (ones and zeros are parameters: XLA's simplifier deletes `x * 1`, and the deleted multiply
        # would not flush)
        exp_rule = None
        if dt in (F32, F64):  # exp(1) is in the data: XLA's exp is not correctly rounded everywhere
            exp_rule = {25: ({"ulp": 1}, "exp is a transcendental: XLA:CPU's exp and NumPy's differ by 1 ulp "
                                         "(f32 exp(1): XLA 0x402df854, NumPy 0x402df855)")}
        add(f"{fam}/subnormals_{hname(dt)}",
            lambda x, z, o: (x + z, x * o, x - x, x * 0.5, x / 2, lax.max(x, z), lax.min(x, z), lax.eq(x, z),
                          lax.lt(z, x), lax.abs(x), lax.neg(x), lax.select(lax.lt(z, x), x, z), lax.sign(x),
                          lax.sqrt(lax.abs(x)), lax.floor(x), lax.ceil(-x), lax.convert_element_type(x, F64),
                          lax.convert_element_type(x, F32), lax.convert_element_type(x, BF16),
                          lax.convert_element_type(x, F16), lax.convert_element_type(x, PRED),
                          lax.convert_element_type(x, S32),
                          lax.bitcast_convert_type(x, {4: U32, 8: U64, 2: U16}[dt.itemsize]),
                          lax.reduce_precision(x, 8, 7), lax.is_finite(x), lax.exp(x)),
            [x, z, o], labels=["add 0", "mul 1", "x - x", "mul 0.5", "div 2", "max 0", "min 0", "eq 0", "0 lt x",
                            "abs", "negate", "select(0 < x)", "sign", "sqrt", "floor", "ceil(-x)", "to f64", "to f32",
                            "to bf16", "to f16", "to pred", "to s32", "bitcast", "reduce-precision e8m7",
                            "is-finite", "exp"],
            out_compare=exp_rule,
            xla_artifact=None if dt != BF16 else {"after": BF16_PRED_ARTIFACT})
    # ---- f8 / f4 unary: exact ops + a few transcendentals (computed via f32 by XLA)
    for dt in F8 + [F4]:
        x = vals(dt, 32, "f8u")
        add(f"{fam}/unary_exact_{hname(dt)}",
            lambda x: (lax.abs(x), lax.neg(x), lax.sign(x), lax.floor(x), lax.ceil(x), rnd_even(x),
                       lax.is_finite(x), lax.sqrt(x)),
            [x], labels=["abs", "negate", "sign", "floor", "ceil", "round-nearest-even", "is-finite", "sqrt"],
            xla_artifact={"after": E8M0_ARTIFACT} if dt == F8E8M0 else None)
        if dt != F4:
            add(f"{fam}/unary_transc_{hname(dt)}",
                lambda x: (lax.exp(x), lax.log(x), lax.tanh(x), lax.sin(x)), [x], {"ulp": 1},
                labels=["exponential", "log", "tanh", "sine"])
    # ---- complex unary
    for dt in (C64, C128):
        x = vals(dt, 24, "cu")
        # keep complex inputs finite: special complex values are another subject
        x = np.where(np.isfinite(x), x, np.asarray(1.5 - 0.5j, dt)).astype(dt)
        x = np.where(np.abs(x) > 50, x / np.abs(x) * 3, x).astype(dt)
        add(f"{fam}/complex_exact_{hname(dt)}",
            lambda x: (lax.neg(x), lax.real(x), lax.imag(x), lax.conj(x), lax.abs(x) * 0 + lax.real(x),
                       lax.is_finite(lax.real(x))),
            [x], labels=["negate", "real", "imag", "conj", "real2", "is-finite(real)"])
        for op, f in (("abs", lax.abs), ("sign", lax.sign), ("exp", lax.exp), ("log", lax.log),
                      ("sqrt", lax.sqrt), ("rsqrt", lax.rsqrt), ("expm1", lax.expm1), ("log1p", lax.log1p),
                      ("tanh", lax.tanh), ("sin", lax.sin), ("cos", lax.cos), ("tan", lax.tan),
                      ("logistic", lax.logistic)):
            add(f"{fam}/{op}_{hname(dt)}", f, [x], tol_for(dt))
        y = vals(dt, 24, "cu2")
        y = np.where(np.isfinite(y) & (np.abs(y) < 50), y, np.asarray(-0.75 + 2j, dt)).astype(dt)
        add(f"{fam}/binary_{hname(dt)}",
            lambda a, b: (a + b, a - b, a * b, a / b, lax.pow(a, b), lax.atan2(lax.real(a), lax.real(b))),
            [x, y], tol_for(dt), labels=["add", "subtract", "multiply", "divide", "power", "atan2(real)"])
        fdt = F32 if dt == C64 else F64
        re_, im_ = fvals(fdt, 24, "re"), fvals(fdt, 24, "im")
        add(f"{fam}/complex_build_{hname(dt)}", lambda a, b: lax.complex(a, b), [re_, im_])

    # ---- float binary
    bin_exact = {"add": lax.add, "subtract": lax.sub, "multiply": lax.mul, "divide": lax.div,
                 "remainder": lax.rem, "maximum": lax.max, "minimum": lax.min}
    bin_tol = {"power": lax.pow, "atan2": lax.atan2}
    for dt in FLOATS:
        a, b = float_pairs(dt, "bin")
        for op, f in bin_exact.items():
            add(f"{fam}/{op}_{hname(dt)}", f, [a, b])
        for op, f in bin_tol.items():
            add(f"{fam}/{op}_{hname(dt)}", f, [a, b], tol_for(dt))
    for dt in F8:
        a, b = float_pairs(dt, "bin8")
        add(f"{fam}/binary_{hname(dt)}",
            lambda a, b: (a + b, a - b, a * b, a / b, lax.max(a, b), lax.min(a, b), lax.rem(a, b)),
            [a, b], labels=["add", "subtract", "multiply", "divide", "maximum", "minimum", "remainder"])
    # pow specials (f32): 0^0, 1^nan, nan^0, (-2)^0.5, (-8)^(1/3), inf^-1, (-inf)^3, ...
    pa = fcast([0, 1, np.nan, -2, -8, np.inf, -np.inf, -0.0, -0.0, 2, 2, -1, -1, 0.5, 10, 1e-30], F32)
    pb = fcast([0, np.nan, 0, 0.5, 1 / 3, -1, 3, -1, -2, 128, -150, np.inf, 3, np.inf, 38.5, 2], F32)
    add(f"{fam}/power_specials_f32", lax.pow, [pa, pb], {"rtol": 1e-5, "atol": 1e-30})

    # ---- integer ops: per op for s32/u32, grouped per type for the others
    arith = {"add": lax.add, "subtract": lax.sub, "multiply": lax.mul, "divide": lax.div, "remainder": lax.rem,
             "maximum": lax.max, "minimum": lax.min}
    bitw = {"and": lax.bitwise_and, "or": lax.bitwise_or, "xor": lax.bitwise_xor}
    shifts = {"shift_left": lax.shift_left, "shift_right_arithmetic": lax.shift_right_arithmetic,
              "shift_right_logical": lax.shift_right_logical}
    un_s = {"abs": lax.abs, "negate": lax.neg, "sign": lax.sign, "not": lax.bitwise_not,
            "popcnt": lax.population_count, "clz": lax.clz}
    for dt in INTS:
        a, b = int_pairs(dt, "arith")
        sa, sb = int_pairs(dt, "shift", rhs=shift_amounts(dt))
        x = ivals(dt, 32, "unary")
        unary_ops = {k: v for k, v in un_s.items() if not (k == "abs" and dt.kind == "u")}
        if dt in (S32, U32, S64, U8):
            for op, f in {**arith, **bitw}.items():
                add(f"{fam}/{op}_{hname(dt)}", f, [a, b])
            for op, f in shifts.items():
                add(f"{fam}/{op}_{hname(dt)}", f, [sa, sb])
            for op, f in unary_ops.items():
                add(f"{fam}/{op}_{hname(dt)}", f, [x])
        else:
            add(f"{fam}/int_arith_{hname(dt)}", lambda a, b: tuple(f(a, b) for f in arith.values()),
                [a, b], labels=list(arith))
            add(f"{fam}/int_bits_{hname(dt)}",
                lambda a, b: tuple(f(a, b) for f in bitw.values()), [a, b], labels=list(bitw))
            add(f"{fam}/int_shifts_{hname(dt)}",
                lambda a, b: tuple(f(a, b) for f in shifts.values()), [sa, sb], labels=list(shifts))
            if bits(dt) >= 8:
                add(f"{fam}/int_unary_{hname(dt)}",
                    lambda x, _u=tuple(unary_ops.values()): tuple(f(x) for f in _u), [x], labels=list(unary_ops))
            else:  # JAX refuses most unary ops on s4/u4/s2/u2: hand-written
                t = hname(dt)
                hops = ["abs", "negate", "sign", "not", "popcnt", "count-leading-zeros"]
                if dt.kind == "u" or "uint" in dt.name:
                    hops = [o for o in hops if o not in ("abs", "sign")]  # stablehlo has no unsigned abs/sign
                if dt == S4:
                    hops.remove("popcnt")  # XLA:CPU counts the bits of the sign-extended byte (README)
                lines = "\n".join(f"  r{k} = {t}[32] {o}(x)" for k, o in enumerate(hops))
                add_hlo(f"{fam}/int_unary_{t}", f"""HloModule int_unary_{t}

ENTRY main {{
  x = {t}[32] parameter(0)
{lines}
  ROOT r = ({", ".join([f"{t}[32]"] * len(hops))}) tuple({", ".join(f"r{k}" for k in range(len(hops)))})
}}
""", [x], labels=hops)
    # pred logic
    p = np.array([True, True, False, False]); q = np.array([True, False, True, False])
    add(f"{fam}/logic_pred", lambda p, q: (p & q, p | q, p ^ q, ~p, lax.max(p, q), lax.min(p, q)),
        [p, q], labels=["and", "or", "xor", "not", "maximum", "minimum"])
    # integer power (hand-written: JAX lowers integer powers to multiplies)
    for dt in (S32, S8, U8, S64):
        base = [-3, -2, -1, 0, 1, 2, 3, 7] if dt.kind == "i" else [0, 1, 2, 3, 5, 7, 255, 16]
        ex = [-2, -1, 0, 1, 2, 3, 8, 31] if dt.kind == "i" else [0, 1, 2, 3, 7, 8, 31, 200]
        a = np.array([x for x in base for _ in ex], np.int64).astype(dt)
        b = np.array([y for _ in base for y in ex], np.int64).astype(dt)
        t = hname(dt)
        add_hlo(f"{fam}/power_{t}", f"""HloModule power_{t}

ENTRY main {{
  a = {t}[64] parameter(0)
  b = {t}[64] parameter(1)
  ROOT r = {t}[64] power(a, b)
}}
""", [a, b])
    # logistic as an HLO opcode (JAX decomposes lax.logistic)
    for dt in (F32, F64, BF16, F16):
        t = hname(dt)
        add_hlo(f"{fam}/logistic_opcode_{t}", f"""HloModule logistic_{t}

ENTRY main {{
  a = {t}[48] parameter(0)
  ROOT r = {t}[48] logistic(a)
}}
""", [fvals(dt, 48, "logistic")], tol_for(dt))
    # compare: every direction, per type (JAX's FLOAT/SIGNED/UNSIGNED types)
    cmps = {"EQ": lax.eq, "NE": lax.ne, "LT": lax.lt, "LE": lax.le, "GT": lax.gt, "GE": lax.ge}
    for dt in FLOATS + F8 + INTS + [PRED]:
        if dt == PRED:
            a, b = np.array([1, 1, 0, 0], bool), np.array([1, 0, 1, 0], bool)
        elif is_float(dt):
            a, b = float_pairs(dt, "cmp")
        else:
            a, b = int_pairs(dt, "cmp")
        add(f"{fam}/compare_{hname(dt)}", lambda a, b: tuple(f(a, b) for f in cmps.values()), [a, b],
            labels=list(cmps))
    for dt in (C64, C128):
        a = vals(dt, 16, "ceq")
        b = a.copy(); b[::3] = b[::3] + 1
        add(f"{fam}/compare_{hname(dt)}", lambda a, b: (lax.eq(a, b), lax.ne(a, b)), [a, b], labels=["EQ", "NE"])
    # TOTALORDER (hand-written: JAX's own total-order compares are internal to sort)
    for dt in (F32, F64, BF16, F16, F8[0]):
        t = hname(dt)
        s = [np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0]
        a = fcast([x for x in s for _ in s], dt)
        b = fcast([y for _ in s for y in s], dt)
        # a negative NaN: set the sign bit of the NaN's bit pattern
        ubits = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[dt.itemsize]
        sign = ubits(1 << (dt.itemsize * 8 - 1))
        av, bv = a.view(ubits), b.view(ubits)
        av[8:16] |= sign
        bv[1::8] |= sign
        lines = "\n".join(f"  {d.lower()} = pred[64] compare(a, b), direction={d}, type=TOTALORDER"
                          for d in cmps)
        add_hlo(f"{fam}/compare_totalorder_{t}", f"""HloModule totalorder_{t}

ENTRY main {{
  a = {t}[64] parameter(0)
  b = {t}[64] parameter(1)
{lines}
  ROOT r = (pred[64], pred[64], pred[64], pred[64], pred[64], pred[64]) tuple(eq, ne, lt, le, gt, ge)
}}
""", [a, b], labels=[f"{d} TOTALORDER" for d in cmps])
    # select / clamp
    for dt in (S32, F32, BF16, C64, PRED, U8, F8[0], S4, F64):
        a, b = vals(dt, 16, "sa"), vals(dt, 16, "sb")
        p = _seed("sel", hname(dt)).integers(0, 2, 16).astype(bool)
        add(f"{fam}/select_{hname(dt)}", lax.select, [p, a, b])
    for dt in (S32, U8, F32, BF16, F64, S64, F16):
        if is_float(dt):
            lo = fcast([0, 0, 0, np.nan, 1, -1, 2, 0, -np.inf, 0], dt)
            x = fcast([-1, 5, np.nan, 3, 0.5, -0.0, 1, np.inf, 4, 0.0], dt)
            hi = fcast([6, 3, 1, 4, np.nan, 0.0, 0, 7, np.inf, -0.0], dt)
        else:
            lo = np.array([0, 0, 2, 5, 1, 0, 3, 0, 0, 9]).astype(dt)
            x = np.array([1, 9, 0, 3, 2, 7, 4, 200 % int(iinfo(dt).max), 5, 1]).astype(dt)
            hi = np.array([6, 6, 5, 4, 1, 7, 3, 100, 0, 2]).astype(dt)  # lo > hi in places
            if dt.kind == "i":
                lo[0], x[0] = -5, -9
        add(f"{fam}/clamp_{hname(dt)}", lax.clamp, [lo, x, hi])
    add(f"{fam}/clamp_scalar_bounds_f32", lambda x: lax.clamp(np.float32(-1.5), x, np.float32(2.0)),
        [fvals(F32, 24, "clampsc")])
    add(f"{fam}/clamp_scalar_params_s32", lambda lo, x, hi: lax.clamp(lo, x, hi),
        [np.int32(-3), ivals(S32, 16, "cs"), np.int32(40)])


# ==================================================================================================
# conversions

def gen_convert():
    fam = "convert"
    all_ints = INTS
    all_floats = FLOATS + F8 + [F4]

    def conv_to(targets):
        return lambda x: tuple(lax.convert_element_type(x, t) for t in targets)

    # floats -> every int type (truncation, NaN, saturation), -> every float type (rounding)
    for src in FLOATS + F8:
        x = fvals(src, 48, "conv")
        if src in (F32, F64):   # add values in/around every integer range
            extra = fcast([127.5, 128, -128.5, -129, 255.5, 256, 32767.9, 32768, -32769, 65535.5, 65536,
                           2147483520, 2147483648.0, -2147483904.0, 4294967040, 4294967296.0,
                           9.2233715e18, 9.3e18, -9.3e18, 1.8446743e19, 1.9e19, 0.999, -0.999, 300, -300.7],
                          src)
            x = np.concatenate([x, extra])
        add(f"{fam}/{hname(src)}_to_ints", conv_to(all_ints), [x], labels=[hname(t) for t in all_ints])
        add(f"{fam}/{hname(src)}_to_floats", conv_to([t for t in all_floats if t != src]), [x],
            labels=[hname(t) for t in all_floats if t != src])
        add(f"{fam}/{hname(src)}_to_pred_complex", conv_to([PRED, C64, C128]), [x], labels=["pred", "c64", "c128"],
            xla_artifact={"after": BF16_PRED_ARTIFACT} if src == BF16 else None)
    for src in [F4]:
        x = vals(src, 16, "f4")
        add(f"{fam}/{hname(src)}_to_all", conv_to([F32, BF16, F16, S32, U8, F8[0], PRED]), [x],
            labels=["f32", "bf16", "f16", "s32", "u8", "f8e4m3fn", "pred"])
    # ints -> everything
    for src in all_ints:
        x = ivals(src, 40, "conv")
        if src in (S64, U64, S32, U32):  # rounding of big ints to floats (ties and near-ties)
            big = [2 ** 24 + 1, 2 ** 24 + 3, 2 ** 25 + 2, 2 ** 31 - 1, 2 ** 53 + 1, 2 ** 62 + 2 ** 38 + 1,
                   2 ** 63 - 1, 16777217, 65520, 65519, 3 * 2 ** 30 + 2 ** 6 + 1]
            ii = iinfo(src)
            big = [v for v in big if v <= int(ii.max)]
            x = np.concatenate([x, np.array(big, dtype=np.uint64 if src == U64 else np.int64).astype(src)])
        add(f"{fam}/{hname(src)}_to_ints", conv_to([t for t in all_ints if t != src]), [x],
            labels=[hname(t) for t in all_ints if t != src])
        add(f"{fam}/{hname(src)}_to_floats", conv_to(all_floats + [C64, C128, PRED]), [x],
            labels=[hname(t) for t in all_floats + [C64, C128, PRED]])
    p = np.array([True, False, True, True, False])
    add(f"{fam}/pred_to_all", conv_to(all_ints + all_floats + [C64, C128]), [p],
        labels=[hname(t) for t in all_ints + all_floats + [C64, C128]])
    for src in (C64, C128):
        x = vals(src, 24, "cconv")
        other = C128 if src == C64 else C64
        add(f"{fam}/{hname(src)}_to_{hname(other)}", conv_to([other]), [x])
        add(f"{fam}/{hname(src)}_real_to_floats",
            lambda x: tuple(lax.convert_element_type(lax.real(x), t) for t in (F32, F64, BF16, S32)), [x],
            labels=["f32", "f64", "bf16", "s32"])
    # f64 -> f32 / bf16 / f16 rounding at the edges: halfway cases, overflow, subnormals
    x = np.array([1 + 2 ** -24, 1 + 3 * 2 ** -24, 1 + 2 ** -24 + 2 ** -40, 3.4028235677973366e38,
                  3.4028235677973367e38, 3.4028236e38, 1e-45, 7e-46, 7.006e-46, 1.4e-45, -1e-46,
                  65504, 65520, 65519.99, 6e-8, 2.98e-8, 2.99e-8, 1 + 2 ** -8, 1 + 3 * 2 ** -8,
                  3.3895313892515355e38, 3.3961775292304e38, 9.2e-41, 1e-300, -1e-300], np.float64)
    # f64 -> narrow types: XLA:CPU rounds f64 -> bf16 and f64 -> f16 through f32 (double rounding:
    # 1 + 2^-11 + 2^-40 -> f16 gives 1.0, not 1.0009765625) but f64 -> f8 directly (1 + 2^-4 + 2^-40 ->
    # f8e4m3fn gives 1.125, where ml_dtypes' astype gives 1.0)
    x = np.array([1 + 2 ** -8 + 2 ** -40, 1 + 2 ** -11 + 2 ** -40, 1 + 2 ** -4 + 2 ** -40, 1 + 2 ** -3 + 2 ** -40,
                  1 + 2 ** -5 + 2 ** -40, -(1 + 2 ** -8 + 2 ** -40), 1 + 2 ** -8 - 2 ** -40, 1 + 2 ** -2 + 2 ** -40,
                  1 + 2 ** -1 + 2 ** -40, 1 + 2 ** -4 + 2 ** -30], np.float64)
    add(f"{fam}/f64_double_rounding", conv_to([BF16, F16] + F8 + [F4]), [x],
        labels=[hname(t) for t in [BF16, F16] + F8 + [F4]])
    add(f"{fam}/f64_rounding_edges", conv_to([F32, BF16, F16, F8[0], F8[1]]), [x],
        labels=["f32", "bf16", "f16", "f8e4m3fn", "f8e5m2"])
    x = fcast([1 + 2 ** -8, 1 + 3 * 2 ** -8, 1 + 2 ** -8 + 2 ** -20, 3.3961775e38, 3.4e38, 65520, 65519,
               1e-40, 2.98e-8, 448, 464, 480, 240, 248, 57344, 61440, 61439, 15.5, 15.75, 16, 30, 31, 1e-7,
               -464, 0.0009765625, 0.00048828125], F32)
    add(f"{fam}/f32_rounding_edges", conv_to([BF16, F16] + F8 + [F4]), [x],
        labels=[hname(t) for t in [BF16, F16] + F8 + [F4]])

    # bitcast-convert: same width, and size-changing (a minor dimension of the ratio)
    fam = "bitcast_convert"

    def bc(t):
        return lambda x: lax.bitcast_convert_type(x, t)
    same = [(F32, S32), (F32, U32), (S32, F32), (U32, F32), (F64, S64), (U64, F64), (F16, S16), (BF16, U16),
            (U16, BF16), (S16, F16), (F16, BF16), (F8[0], S8), (U8, F8[1]), (F8[2], F8[3]), (S8, U8)]
    for src, dst in same:
        x = vals(src, 24, "bc")
        add(f"{fam}/{hname(src)}_to_{hname(dst)}", bc(dst), [x])
    changing = [(F64, S32), (F64, F32), (S32, S8), (S32, U8), (F32, BF16), (F32, F8[0]), (U64, U16), (S64, F16),
                (U32, U8)]
    for src, dst in changing:
        x = vals(src, 12, "bcw").reshape(3, 4)
        add(f"{fam}/{hname(src)}_to_{hname(dst)}_widen", bc(dst), [x])
    narrowing = [(S8, S32), (U8, F32), (S32, F64), (F32, F64), (BF16, F32), (F8[1], F16), (U16, U64), (F16, S64)]
    for src, dst in narrowing:
        ratio = np.dtype(dst).itemsize // np.dtype(src).itemsize
        x = vals(src, 3 * ratio * 2, "bcn").reshape(3, 2, ratio)
        add(f"{fam}/{hname(src)}_to_{hname(dst)}_narrow", bc(dst), [x])

    # reduce-precision
    fam = "reduce_precision"
    rp_in = fcast([1.0001, 65504, 65519, 65520, np.nan, -70000, 1.00048828125, 1.00146484375, 1e-5,
                   -0.0, np.inf, -np.inf, 6e-5, 6.1e-5, 5.96e-8, 3e-8, 1.5, 0.1, 3.14159265, 1e38, -3.4e38, 1e-40,
                   2.5, 0.3333333], F64)
    for dt in (F32, F64, BF16, F16):
        x = rp_in.astype(dt)
        nanbits = {4: (np.uint32, 0x7FC01234), 8: (np.uint64, 0x7FF8000000001234), 2: (np.uint16, 0x7E12)}
        ub, nb = nanbits[dt.itemsize]
        xv = x.copy().view(ub)
        xv[4] = ub(nb)  # a NaN with a payload
        x = xv.view(dt)
        for e, m in ((5, 10), (8, 7), (8, 23), (4, 3), (5, 2), (11, 52), (2, 0), (1, 1), (8, 0), (3, 30)):
            if dt != F64 and m > 23 and e > 8:
                continue
            add(f"{fam}/{hname(dt)}_e{e}m{m}", lambda x, e=e, m=m: lax.reduce_precision(x, e, m), [x])
    # stochastic-convert (hand-written: JAX does not emit it)
    fam = "stochastic_convert"
    x = fcast([0.25, 0.5, 0.75, -0.25, -0.5, -0.75, 1.5, -1.5, 2.5, 126.9, 127.5, 128.0, -128.9, -129, 1e10, -1e10,
               np.nan, np.inf, -np.inf, 0.0, -0.0, 3.999, -3.999, 100.3], F32)
    rb = np.array([0, 0x80000000, 0xFFFFFFFF, 0x40000000, 0xC0000000, 0x7FFFFFFF, 1, 0x3FFFFFFF] * 3, np.uint32)
    for t in ("s8", "s16", "s32"):
        add_hlo(f"{fam}/f32_to_{t}", f"""HloModule stochastic_{t}

ENTRY main {{
  x = f32[24] parameter(0)
  r = u32[24] parameter(1)
  ROOT c = {t}[24] stochastic-convert(x, r)
}}
""", [x, rb])
    xb = x.astype(BF16)
    add_hlo(f"{fam}/bf16_to_s8", """HloModule stochastic_bf16

ENTRY main {
  x = bf16[24] parameter(0)
  r = u16[24] parameter(1)
  ROOT c = s8[24] stochastic-convert(x, r)
}
""", [xb, (rb >> 16).astype(np.uint16)])
    x64 = x.astype(F64)
    add_hlo(f"{fam}/f64_to_s32", """HloModule stochastic_f64

ENTRY main {
  x = f64[24] parameter(0)
  r = u64[24] parameter(1)
  ROOT c = s32[24] stochastic-convert(x, r)
}
""", [x64, rb.astype(np.uint64) << np.uint64(32)])


# ==================================================================================================
# data movement

def gen_movement():
    fam = "movement"
    types = [S32, F32, BF16, PRED, F8[0], C64, S4, U64, F64, F16, S8]
    for dt in types:
        t = hname(dt)
        x = vals(dt, 24, "mv").reshape(2, 3, 4)
        add(f"{fam}/transpose_{t}", lambda x: (lax.transpose(x, (2, 0, 1)), lax.transpose(x, (1, 0, 2))), [x])
        add(f"{fam}/reshape_{t}", lambda x: (x.reshape(24), x.reshape(4, 6), x.reshape(1, 2, 12, 1),
                                              x.reshape(6, 4)[None]), [x])
        add(f"{fam}/slice_{t}", lambda x: (lax.slice(x, (0, 1, 0), (2, 3, 4), (1, 1, 2)),
                                            lax.slice(x, (1, 0, 1), (2, 3, 4), (1, 2, 3)),
                                            lax.slice(x, (0, 0, 3), (2, 3, 3))), [x])
        add(f"{fam}/reverse_{t}", lambda x: (lax.rev(x, (0, 2)), lax.rev(x, (1,))), [x])
        add(f"{fam}/broadcast_{t}", lambda x: (lax.broadcast_in_dim(x[0, 0], (3, 4, 2), (1,)),
                                                lax.broadcast(x[0, 1, 2], (2, 3)),
                                                lax.broadcast_in_dim(x[:, :1, :], (2, 5, 4), (0, 1, 2))),
            [x])
        y = vals(dt, 8, "mv2").reshape(2, 1, 4)
        add(f"{fam}/concatenate_{t}", lambda x, y: (lax.concatenate([x, y, x], 1),
                                                     lax.concatenate([x.reshape(24), y.reshape(8)], 0)), [x, y])
        pv = vals(dt, 1, "pv").reshape(())
        add(f"{fam}/pad_{t}", lambda x, v: (lax.pad(x, v, ((0, 1, 0), (1, -1, 1), (-1, 2, 2))),
                                             lax.pad(x, v, ((-1, 0, 0), (0, 0, 0), (2, -3, 0))),
                                             lax.pad(x, v, ((0, 0, 3), (-2, -2, 1), (0, 0, 0)))), [x, pv])
    for dt in (S32, F32, BF16, U8, F8[1], S64, C128, F16, U4, S8):
        t = hname(dt)
        add(f"{fam}/iota_{t}", lambda dt=dt: (lax.broadcasted_iota(dt, (4, 8), 0), lax.broadcasted_iota(dt, (4, 8), 1),
                                              lax.iota(dt, 5), lax.broadcasted_iota(dt, (2, 20, 2), 1)), [])
    # dynamic-slice / dynamic-update-slice: in range, out of range (clamped), negative (JAX wraps them once)
    for dt in (S32, F32, BF16, U8, C64, PRED):
        t = hname(dt)
        x = vals(dt, 30, "ds").reshape(5, 6)
        u = vals(dt, 6, "dsu").reshape(2, 3)
        for it in (S32, S64, U32, S8):
            if dt not in (S32, F32) and it != S32:
                continue
            starts = np.array([[1, 2], [4, 5], [7, -1], [-3, 100], [-100, 3]]
                              if it.kind == "i" else [[1, 2], [4, 5], [7, 1], [3, 100], [4000000000, 3]])
            starts = starts.astype(np.int64).astype(it) if it.kind == "i" else starts.astype(np.uint64).astype(it)
            sfx = "" if it == S32 else f"_idx{hname(it)}"
            add(f"{fam}/dynamic_slice_{t}{sfx}",
                lambda x, s: tuple(lax.dynamic_slice(x, (s[k, 0], s[k, 1]), (2, 3)) for k in range(5)), [x, starts])
            add(f"{fam}/dynamic_update_slice_{t}{sfx}",
                lambda x, u, s: tuple(lax.dynamic_update_slice(x, u, (s[k, 0], s[k, 1])) for k in range(5)),
                [x, u, starts])
    # raw HLO semantics of negative and out-of-range starts (JAX adds the dimension size to negative
    # starts before emitting dynamic-slice; here the HLO sees the raw value)
    for it in ("s32", "s64", "u32", "s8"):
        lines = []
        starts = [(1, 2), (4, 5), (7, -1), (-3, 100), (-100, 3), (-1, -1)]
        if it[0] == "u":
            starts = [(1, 2), (4, 5), (7, 1), (3, 100), (4000000000, 3), (4294967295, 0)]
        outs = []
        scalars = []
        idt = {"s32": S32, "s64": S64, "u32": U32, "s8": S8}[it]
        for k, (i, j) in enumerate(starts):
            # starts are parameters: with constants XLA folds the dynamic-slice into a slice, and its
            # folding reads a u32 start >= 2^31 as negative (clamped to 0) while the runtime clamps it
            # as unsigned (to dim - size)
            lines.append(f"  i{k} = {it}[] parameter({2 + 2 * k})\n  j{k} = {it}[] parameter({3 + 2 * k})")
            scalars += [np.array(i, dtype=np.int64 if it[0] == "s" else np.uint64).astype(idt),
                        np.array(j, dtype=np.int64 if it[0] == "s" else np.uint64).astype(idt)]
            lines.append(f"  ds{k} = f32[2,3] dynamic-slice(x, i{k}, j{k}), dynamic_slice_sizes={{2,3}}")
            lines.append(f"  dus{k} = f32[5,6] dynamic-update-slice(x, u, i{k}, j{k})")
            outs += [f"ds{k}", f"dus{k}"]
        shp = ", ".join(["f32[2,3]", "f32[5,6]"] * len(starts))
        body = "\n".join(lines)
        add_hlo(f"{fam}/dynamic_slice_raw_{it}", f"""HloModule dynamic_slice_raw_{it}

ENTRY main {{
  x = f32[5,6] parameter(0)
  u = f32[2,3] parameter(1)
{body}
  ROOT r = ({shp}) tuple({", ".join(outs)})
}}
""", [np.arange(30, dtype=np.float32).reshape(5, 6), -np.arange(1, 7, dtype=np.float32).reshape(2, 3)] + scalars)
    # copy, tuple / get-tuple-element, bitcast (hand-written)
    add_hlo(f"{fam}/copy_tuple_gte", """HloModule copy_tuple_gte

ENTRY main {
  x = f32[2,3] parameter(0)
  y = s8[4] parameter(1)
  c = f32[2,3] copy(x)
  t = (f32[2,3], (s8[4], f32[2,3])) tuple(c, (s8[4], f32[2,3]) tuple(y, x))
  g = (s8[4], f32[2,3]) get-tuple-element(t), index=1
  g0 = s8[4] get-tuple-element(g), index=0
  ROOT r = (f32[2,3], (s8[4], f32[2,3]), s8[4]) tuple(c, g, g0)
}
""", [fvals(F32, 6, "cp").reshape(2, 3), ivals(S8, 4, "cp")])
    add_hlo(f"{fam}/copy_layout_change", """HloModule copy_layout

ENTRY main {
  x = s32[3,4]{1,0} parameter(0)
  c = s32[3,4]{0,1} copy(x)
  n = s32[3,4]{0,1} negate(c)
  ROOT r = (s32[3,4]{0,1}, s32[3,4]{1,0}) tuple(c, s32[3,4]{1,0} copy(n))
}
""", [np.arange(12, dtype=np.int32).reshape(3, 4)])


# ==================================================================================================
# reductions, map

def gen_reduce():
    fam = "reduce"
    for dt in (S32, F32, BF16, F16, U8, S64, F64, S8, U32, F8[0], C64):
        t = hname(dt)
        if is_float(dt):
            x = fcast(_seed("red", t).integers(-8, 9, 24) / 2.0, dt).reshape(2, 3, 4)  # sums are exact
        elif dt.kind == "c":
            x = (_seed("red", t).integers(-8, 9, 24) + 1j * _seed("redi", t).integers(-8, 9, 24)).astype(dt)
            x = x.reshape(2, 3, 4)
        else:
            x = ivals(dt, 24, "red").reshape(2, 3, 4)
        add(f"{fam}/sum_{t}", lambda x: (lax.reduce(x, np.zeros((), x.dtype), lax.add, (0,)),
                                          lax.reduce(x, np.zeros((), x.dtype), lax.add, (1, 2)),
                                          lax.reduce(x, np.zeros((), x.dtype), lax.add, (0, 1, 2))), [x])
        if dt.kind != "c":
            add(f"{fam}/max_min_{t}", lambda x: (lax.reduce_max(x, (0,)), lax.reduce_max(x, (2,)),
                                                  lax.reduce_min(x, (1,)), lax.reduce_min(x, (0, 1, 2))), [x])
        add(f"{fam}/prod_{t}", lambda x: (lax.reduce(x, np.ones((), x.dtype), lax.mul, (2,)),), [x])
    # NaN / inf / -0 in max and min reductions
    for dt in (F32, BF16, F64):
        x = fcast([[1, np.nan, 3, -np.inf], [-0.0, 0.0, -1, 2], [np.inf, 5, np.nan, -7], [0.0, -0.0, 0.0, -0.0]], dt)
        add(f"{fam}/max_min_specials_{hname(dt)}",
            lambda x: (lax.reduce_max(x, (1,)), lax.reduce_min(x, (1,)), lax.reduce_max(x, (0,)),
                       lax.reduce_min(x, (0,))), [x])
    p = _seed("and").integers(0, 2, 24).astype(bool).reshape(4, 6)
    p[0] = True
    p[1] = False
    add(f"{fam}/and_or_pred", lambda p: (lax.reduce_and(p, (1,)), lax.reduce_or(p, (1,)), lax.reduce_and(p, (0,)),
                                          lax.reduce_or(p, (0, 1)), lax.reduce_xor(p, (1,))), [p])
    for dt in (U32, S8):
        x = ivals(dt, 24, "bits").reshape(4, 6)
        add(f"{fam}/and_or_xor_{hname(dt)}", lambda x: (lax.reduce_and(x, (1,)), lax.reduce_or(x, (1,)),
                                                         lax.reduce_xor(x, (0,))), [x])
    # sums with rounding (tolerance: the association order is the implementation's)
    for dt in (F32, BF16, F16):
        x = fvals(dt, 64, "sumr", specials=False).reshape(4, 16)
        add(f"{fam}/sum_rounding_{hname(dt)}", lambda x: (jnp.sum(x, axis=1), jnp.sum(x.astype(F32), axis=0)), [x],
            {"rtol": 2e-2 if dt != F32 else 1e-5, "atol": 1e-5 if dt == F32 else 0.05})
    # variadic: argmax / argmin (ties: first index; NaN wins), over each axis
    for dt in (F32, S32, BF16, U8, F64, F16):
        if is_float(dt):
            x = fcast([[3, 9, 2, 9, 1, 0], [np.nan, 1, np.nan, 4, 4, -1], [-0.0, 0.0, -np.inf, 0, -1, np.inf],
                       [5, 5, 5, 5, 5, 5]], dt)
        else:
            x = np.array([[3, 9, 2, 9, 1, 0], [7, 1, 7, 4, 4, 0], [0, 0, 200, 0, 1, 100],
                          [5, 5, 5, 5, 5, 5]]).astype(dt)
        add(f"{fam}/argmax_argmin_{hname(dt)}",
            lambda x: (jnp.argmax(x, axis=1), jnp.argmin(x, axis=1), jnp.argmax(x, axis=0), jnp.argmin(x, axis=0),
                       jnp.argmax(x)), [x])
    # a generic variadic reduce: (sum, max) in one reduce with two accumulators
    x = np.arange(24, dtype=np.float32).reshape(4, 6) - 7
    y = (np.arange(24, dtype=np.int32).reshape(4, 6) * 7) % 11
    add(f"{fam}/variadic_sum_max",
        lambda x, y: lax.reduce((x, y), (np.float32(0), np.int32(-1)),
                                lambda a, b: (a[0] + b[0], lax.max(a[1], b[1])), (1,)), [x, y])
    # reduce to a scalar with a non-zero init, and an empty reduce (dims {})
    x = np.arange(12, dtype=np.int32).reshape(3, 4)
    add(f"{fam}/init_and_empty", lambda x: (lax.reduce(x, np.int32(100), lax.add, (0, 1)),
                                             lax.reduce(x, np.int32(0), lax.add, ()),
                                             lax.reduce(x[:, :0], np.int32(-5), lax.add, (1,))), [x])
    # map (hand-written: JAX does not emit it)
    add_hlo("map/map_add_mul", """HloModule map

f {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  s = f32[] add(a, b)
  ROOT m = f32[] multiply(s, b)
}

ENTRY main {
  x = f32[2,3] parameter(0)
  y = f32[2,3] parameter(1)
  ROOT r = f32[2,3] map(x, y), dimensions={0,1}, to_apply=f
}
""", [np.array([[1, 2, 3], [4, 5, 6]], np.float32), np.array([[0.5, -1, 2], [0, 3, -0.25]], np.float32)])
    add_hlo("map/map_unary_s32", """HloModule map1

g {
  a = s32[] parameter(0)
  c = s32[] constant(3)
  ROOT m = s32[] shift-left(a, c)
}

ENTRY main {
  x = s32[5] parameter(0)
  ROOT r = s32[5] map(x), dimensions={0}, to_apply=g
}
""", [np.array([1, -1, 2 ** 30, -(2 ** 31), 7], np.int32)])


# ==================================================================================================
# dot

def gen_dot():
    fam = "dot"
    r = _seed("dot")
    a = r.integers(-4, 5, (3, 5)).astype(np.float32)
    b = r.integers(-4, 5, (5, 4)).astype(np.float32)
    for dt in (F32, F64, BF16, F16, S32, S8, U8, S64, U32, C64, C128, S16):
        add(f"{fam}/matmul_{hname(dt)}", lambda a, b: lax.dot(a, b), [a.astype(dt) if dt.kind != "u" else
                                                                   np.abs(a).astype(dt), np.abs(b).astype(dt)
                                                                   if dt.kind == "u" else b.astype(dt)])
    af = r.standard_normal((4, 16)).astype(np.float32)
    bf = r.standard_normal((16, 8)).astype(np.float32)
    add(f"{fam}/matmul_random_f32", lambda a, b: a @ b, [af, bf], {"rtol": 1e-5, "atol": 1e-5})
    add(f"{fam}/matmul_random_f64", lambda a, b: a @ b, [af.astype(F64), bf.astype(F64)],
        {"rtol": 1e-12, "atol": 1e-12})
    add(f"{fam}/matmul_random_bf16", lambda a, b: a @ b, [af.astype(BF16), bf.astype(BF16)], {"ulp": 1})
    add(f"{fam}/bf16_pref_f32", lambda a, b: lax.dot(a, b, preferred_element_type=F32),
        [af.astype(BF16), bf.astype(BF16)], {"rtol": 1e-5, "atol": 1e-5})
    add(f"{fam}/f16_pref_f32", lambda a, b: lax.dot(a, b, preferred_element_type=F32),
        [af.astype(F16), bf.astype(F16)], {"rtol": 1e-5, "atol": 1e-5})
    i8a = ivals(S8, 32, "da").reshape(4, 8)
    i8b = ivals(S8, 48, "db").reshape(8, 6)
    add(f"{fam}/s8_pref_s32", lambda a, b: lax.dot(a, b, preferred_element_type=S32), [i8a, i8b])
    add(f"{fam}/s8_wrap_s8", lambda a, b: lax.dot(a, b), [i8a, i8b])
    add(f"{fam}/u8_pref_s32", lambda a, b: lax.dot(a, b, preferred_element_type=S32),
        [i8a.view(np.uint8), i8b.view(np.uint8)])
    add(f"{fam}/s32_wrap", lambda a, b: lax.dot(a, b), [ivals(S32, 32, "w").reshape(4, 8),
                                                          ivals(S32, 48, "w2").reshape(8, 6)])
    add(f"{fam}/s8_pref_f32", lambda a, b: lax.dot(a, b, preferred_element_type=F32), [i8a, i8b])
    # dot_general: batch dims, several contracting dims, vector forms
    x = r.integers(-3, 4, (2, 3, 4, 5)).astype(np.float32)
    y = r.integers(-3, 4, (2, 5, 4, 6)).astype(np.float32)
    add(f"{fam}/general_batch2_contract2",
        lambda x, y: lax.dot_general(x, y, (((2, 3), (2, 1)), ((0,), (0,)))), [x, y])
    add(f"{fam}/general_batch_last",
        lambda x, y: lax.dot_general(x, y, (((3,), (1,)), ((0, 2), (0, 2)))), [x, y])
    add(f"{fam}/general_outer_no_contract", lambda a, b: lax.dot_general(a, b, (((), ()), ((), ()))),
        [a[0], b[:, 0]])
    add(f"{fam}/vector_vector", lambda a, b: jnp.dot(a, b), [a[0], b[:, 1]])
    add(f"{fam}/matrix_vector", lambda a, b: jnp.dot(a, b), [a, b[:, 2]])
    add(f"{fam}/vector_matrix", lambda a, b: jnp.dot(a, b), [a[1], b])
    add(f"{fam}/ex_contract_lhs0",
        lambda x, y: lax.dot_general(x, y, (((0,), (0,)), ((), ()))), [a, a])
    add(f"{fam}/specials_f32", lambda a, b: a @ b,
        [fcast([[np.inf, 1, 0], [np.nan, 0, 1], [0, 0, 0], [1e38, 1e38, 0]], F32),
         fcast([[0, 1], [1, -0.0], [-0.0, 2]], F32)])
    add(f"{fam}/empty_contract", lambda a, b: a @ b, [np.zeros((3, 0), np.float32), np.zeros((0, 2), np.float32)])


# ==================================================================================================
# control flow

def gen_control():
    fam = "control"

    @jax.jit
    def inner(x, y):
        return x * y + 1

    add(f"{fam}/call_nested_jit", lambda x, y: inner(inner(x, y), y) - x, [fvals(F32, 8, "c1"), fvals(F32, 8, "c2")])
    add(f"{fam}/fori_loop", lambda x: lax.fori_loop(0, 10, lambda i, v: v * 2 + i, x), [ivals(S32, 8, "fl")])
    add(f"{fam}/fori_loop_f32",
        lambda x: lax.fori_loop(0, 7, lambda i, v: v * 0.5 + lax.convert_element_type(i, F32), x),
        [fvals(F32, 8, "flf")])
    add(f"{fam}/while_loop_data_dependent",
        lambda n, x: lax.while_loop(lambda c: c[0] < n, lambda c: (c[0] + 1, c[1] * 3 % 1000, c[2] + c[1]),
                                    (np.int32(0), x, jnp.zeros_like(x))), [np.int32(13), ivals(S32, 6, "wl")])
    add(f"{fam}/while_loop_zero_trips",
        lambda n, x: lax.while_loop(lambda c: c[0] < n, lambda c: (c[0] + 1, c[1] + 1.0), (np.int32(5), x)),
        [np.int32(3), fvals(F32, 4, "wz")])
    add(f"{fam}/scan_cumsum", lambda x: lax.scan(lambda c, v: (c + v, c * v), np.float32(0), x),
        [fcast(np.arange(10) - 4.5, F32)])
    for p in (True, False):
        add(f"{fam}/cond_{str(p).lower()}",
            lambda p, x, y: lax.cond(p, lambda a, b: (a + b, a), lambda a, b: (a - b, b * 2), x, y),
            [np.bool_(p), ivals(S32, 5, "cx"), ivals(S32, 5, "cy")])
    branches = [lambda x: x + 1, lambda x: x * 2, lambda x: -x]
    idx = np.array([-5, 0, 1, 2, 3, 100], np.int32)
    add(f"{fam}/switch_clamped_index",
        lambda i, x: jnp.stack([lax.switch(i[k], branches, x) for k in range(6)]), [idx, ivals(S32, 4, "sw")])
    # raw conditional: the index form with out-of-range indices runs the last branch; pred form
    for i in (-1, 0, 1, 2, 3, 7, -2147483648):
        nm = str(i).replace("-", "m")
        add_hlo(f"{fam}/conditional_index_{nm}", """HloModule conditional_index

b0 {
  p = (s32[3], f32[]) parameter(0)
  x = s32[3] get-tuple-element(p), index=0
  ROOT r = s32[3] add(x, x)
}

b1 {
  p = s32[3] parameter(0)
  ROOT r = s32[3] multiply(p, p)
}

b2 {
  p = s32[3] parameter(0)
  ROOT r = s32[3] negate(p)
}

ENTRY main {
  i = s32[] parameter(0)
  x = s32[3] parameter(1)
  f = f32[] constant(1.5)
  t = (s32[3], f32[]) tuple(x, f)
  ROOT c = s32[3] conditional(i, t, x, x), branch_computations={b0, b1, b2}
}
""", [np.int32(i), np.array([3, -4, 5], np.int32)])
    for p in (True, False):
        add_hlo(f"{fam}/conditional_pred_{str(p).lower()}", """HloModule conditional_pred

t {
  p = f32[2] parameter(0)
  ROOT r = f32[2] exponential(p)
}

f {
  p = (f32[2], s32[]) parameter(0)
  a = f32[2] get-tuple-element(p), index=0
  ROOT r = f32[2] negate(a)
}

ENTRY main {
  c = pred[] parameter(0)
  x = f32[2] parameter(1)
  n = s32[] constant(1)
  fx = (f32[2], s32[]) tuple(x, n)
  ROOT r = f32[2] conditional(c, x, fx), true_computation=t, false_computation=f
}
""", [np.bool_(p), np.array([0.0, 1.0], np.float32)], {"rtol": 1e-6, "atol": 0})
    add(f"{fam}/optimization_barrier",
        lambda x, y: (lambda t: (t[0] * 2, t[1] + 1))(lax.optimization_barrier((x, y))),
        [fvals(F32, 6, "ob"), ivals(S32, 3, "ob")])
    add_hlo(f"{fam}/after_all_add_dependency", """HloModule tokens

ENTRY main {
  x = f32[3] parameter(0)
  t0 = token[] after-all()
  t1 = token[] after-all(t0, t0)
  d = f32[3] add-dependency(x, t1)
  ROOT r = f32[3] add(d, d)
}
""", [np.array([1, 2, -0.0], np.float32)])
    add_hlo(f"{fam}/call_tuple", """HloModule call_tuple

g {
  a = s32[2] parameter(0)
  b = f32[] parameter(1)
  ROOT t = (f32[], s32[2]) tuple(b, a)
}

ENTRY main {
  x = s32[2] parameter(0)
  y = f32[] parameter(1)
  ROOT c = (f32[], s32[2]) call(x, y), to_apply=g
}
""", [np.array([7, -8], np.int32), np.float32(2.5)])


# ==================================================================================================
# the operation-semantics documents' worked examples for these families

def gen_examples():
    fam = "examples"
    f32, s32 = np.float32, np.int32
    add(f"{fam}/ex01_clamp", lambda lo, x, hi: lax.clamp(lo, x, hi), [s32(0), np.array([-1, 5, 9], s32), s32(6)],
        expect=[[0, 5, 6]])
    add(f"{fam}/ex02_select", lax.select, [np.array([1, 0, 0, 1], bool), np.array([1, 2, 3, 4], s32),
                                           np.array([100, 200, 300, 400], s32)], expect=[[1, 200, 300, 4]])
    add(f"{fam}/ex03_select_scalar_pred", lambda p, a, b: lax.select(jnp.broadcast_to(p, a.shape), a, b),
        [np.bool_(True), np.array([1, 2, 3, 4], s32), np.array([100, 200, 300, 400], s32)], expect=[[1, 2, 3, 4]])
    add(f"{fam}/ex04_convert", lambda x: lax.convert_element_type(x, F32), [np.array([0, 1, 2], s32)],
        expect=[[0.0, 1.0, 2.0]])
    add(f"{fam}/ex05_sign", lambda x, y: (lax.sign(x), lax.sign(y)),
        [np.array([-2.0, -0.0, 0.0, 3.0, np.nan], f32), np.array([-5, 0, 5], s32)],
        expect=[[-1.0, -0.0, 0.0, 1.0, np.nan], [-1, 0, 1]])
    add(f"{fam}/ex06_round", lambda x: (rnd_afz(x), rnd_even(x)), [np.array([0.5, 1.5, 2.5, -0.5, -2.5], f32)],
        expect=[[1, 2, 3, -1, -3], [0, 2, 2, -0.0, -2]])
    add_hlo(f"{fam}/ex07_totalorder", """HloModule ex07

ENTRY main {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  t = pred[] compare(a, b), direction=LT, type=TOTALORDER
  f = pred[] compare(a, b), direction=LT, type=FLOAT
  ROOT r = (pred[], pred[]) tuple(t, f)
}
""", [f32(-0.0), f32(0.0)], expect=[True, False])
    imin = -2 ** 31
    add(f"{fam}/ex08_int_div_rem", lambda a, b: (lax.div(a, b), lax.rem(a, b)),
        [np.array([7, -7, imin, 7, -7, 7, -7], s32), np.array([0, 0, -1, 3, 3, -3, -3], s32)],
        expect=[[-1, -1, imin, 2, -2, -2, 2], [7, -7, 0, 1, -1, 1, -1]])
    add(f"{fam}/ex08_uint_div_rem", lambda a, b: (lax.div(a, b), lax.rem(a, b)),
        [np.array([7], np.uint32), np.array([0], np.uint32)], expect=[[4294967295], [7]])
    add(f"{fam}/ex08_float_rem", lax.rem, [np.array([5.5, -5.5], f32), np.array([2.0, 2.0], f32)],
        expect=[[1.5, -1.5]])
    add(f"{fam}/ex08_shifts", lambda a, b, c, d, e, f: (lax.shift_left(a, b), lax.shift_right_arithmetic(c, d),
                                                        lax.shift_right_logical(e, f)),
        [np.array([1, 1, 1], s32), np.array([32, 33, -1], s32), np.array([-8, -8, 8], s32),
         np.array([32, 40, 32], s32), np.array([-8, 8], s32), np.array([32, 1], s32)],
        expect=[[0, 0, 0], [-1, -1, 0], [0, 4]])
    add(f"{fam}/ex08_max_min_nan", lambda a, b: (lax.max(a, b), lax.max(b, a), lax.min(a, b), lax.min(b, a)),
        [np.array([np.nan], f32), np.array([1.0], f32)], expect=[[np.nan]] * 4)
    add(f"{fam}/ex08_clz_popcnt", lambda x: (lax.clz(x), lax.population_count(x)), [np.array([0, 1, -1, 255], s32)],
        expect=[[32, 31, 0, 24], [0, 1, 32, 8]])
    add(f"{fam}/ex08_convert_f32_s32", lambda x: lax.convert_element_type(x, S32),
        [np.array([np.nan, np.inf, -np.inf, 3.7, -3.7], f32)], expect=[[0, 2147483647, -2147483648, 3, -3]])
    add(f"{fam}/ex08_convert_f32_pred", lambda x: lax.convert_element_type(x, PRED),
        [np.array([0.0, -0.0, 0.5, np.nan], f32)], expect=[[False, False, True, True]])
    add(f"{fam}/ex09_reduce_precision", lambda x: lax.reduce_precision(x, 5, 10),
        [np.array([1.0001, 65504, 65519, 65520, np.nan, -70000, 1.00048828125, 1.00146484375, 1e-5], f32)],
        expect=[[1.0, 65504, 65504, np.inf, np.nan, -np.inf, 1.0, 1.001953125, 0.0]])
    add(f"{fam}/ex10_broadcast", lambda s: lax.broadcast(s, (2, 3)), [f32(2.0)], expect=[[[2.0] * 3] * 2])
    v = np.array([[[10, 11, 12], [15, 16, 17]], [[20, 21, 22], [25, 26, 27]], [[30, 31, 32], [35, 36, 37]],
                  [[40, 41, 42], [45, 46, 47]]], f32)
    flat = v.reshape(-1).tolist()
    add(f"{fam}/ex11_ex12_collapse_reshape", lambda v: (v.reshape(24), v.reshape(4, 6), v.reshape(8, 3)), [v],
        expect=[flat, np.reshape(flat, (4, 6)).tolist(), np.reshape(flat, (8, 3)).tolist()])
    t_ = [10, 20, 30, 40, 11, 21, 31, 41, 12, 22, 32, 42, 15, 25, 35, 45, 16, 26, 36, 46, 17, 27, 37, 47]
    add(f"{fam}/ex13_reshape_out_of_order",
        lambda v: (lax.transpose(v, (1, 2, 0)).reshape(24), lax.transpose(v, (1, 2, 0)).reshape(8, 3),
                   lax.transpose(v, (1, 2, 0)).reshape(2, 6, 2)), [v],
        expect=[t_, np.reshape(t_, (8, 3)).tolist(), np.reshape(t_, (2, 6, 2)).tolist()])
    add(f"{fam}/ex14_reshape_scalar", lambda x, s: (x.reshape(()), s.reshape(1, 1)),
        [np.array([[5]], f32), f32(5)], expect=[5.0, [[5.0]]])
    add(f"{fam}/ex15_concatenate_1d", lambda a, b, c: lax.concatenate([a, b, c], 0),
        [np.array([2, 3], s32), np.array([4, 5], s32), np.array([6, 7], s32)], expect=[[2, 3, 4, 5, 6, 7]])
    add(f"{fam}/ex16_concatenate_2d", lambda a, b: lax.concatenate([a, b], 0),
        [np.array([[1, 2], [3, 4], [5, 6]], s32), np.array([[7, 8]], s32)], expect=[[[1, 2], [3, 4], [5, 6], [7, 8]]])
    a5 = np.arange(5, dtype=f32)
    b43 = np.arange(12, dtype=f32).reshape(4, 3)
    add(f"{fam}/ex17_slice", lambda a, b: (lax.slice(a, (2,), (4,)), lax.slice(b, (2, 1), (4, 3))), [a5, b43],
        expect=[[2.0, 3.0], [[7, 8], [10, 11]]])
    add(f"{fam}/ex18_dynamic_slice",
        lambda a, b, i, j, k: (lax.dynamic_slice(a, (i,), (2,)), lax.dynamic_slice(b, (i, j), (2, 2)),
                               lax.dynamic_slice(a, (k,), (2,))),
        [a5, b43, s32(2), s32(1), s32(4)], expect=[[2.0, 3.0], [[7, 8], [10, 11]], [3.0, 4.0]])
    add(f"{fam}/ex19_dynamic_update_slice",
        lambda a, u, b, w, i, j: (lax.dynamic_update_slice(a, u, (i,)), lax.dynamic_update_slice(b, w, (j, j))),
        [a5, np.array([5, 6], f32), b43, np.array([[12, 13], [14, 15], [16, 17]], f32), s32(2), s32(1)],
        expect=[[0, 1, 5, 6, 4], [[0, 1, 2], [3, 12, 13], [6, 14, 15], [9, 16, 17]]])
    add(f"{fam}/ex20_iota", lambda: (lax.broadcasted_iota(S32, (4, 8), 0), lax.broadcasted_iota(S32, (4, 8), 1)), [],
        expect=[[[i] * 8 for i in range(4)], [list(range(8))] * 4])
    add(f"{fam}/ex21_tuple_gte", lambda a, b: (a, b), [np.arange(10, dtype=f32), s32(5)],
        expect=[list(range(10)), 5])
    x = np.array([[1, 2, 3], [4, 5, 6]], s32)
    add(f"{fam}/ex22_pad", lambda x, z: (lax.pad(x, z, ((0, 0, 1), (0, 0, 1))), lax.pad(x, z, ((0, 1, 0), (1, 2, 0))),
                                          lax.pad(x, z, ((0, 1, 1), (1, 2, 1))),
                                          lax.pad(x, z, ((0, 0, 0), (-1, 0, 1)))),
        [x, s32(0)], expect=[[[1, 0, 2, 0, 3], [0, 0, 0, 0, 0], [4, 0, 5, 0, 6]],
                             [[0, 1, 2, 3, 0, 0], [0, 4, 5, 6, 0, 0], [0, 0, 0, 0, 0, 0]],
                             [[0, 1, 0, 2, 0, 3, 0, 0], [0] * 8, [0, 4, 0, 5, 0, 6, 0, 0], [0] * 8],
                             [[0, 2, 0, 3], [0, 5, 0, 6]]])
    add(f"{fam}/ex23_bitcast_convert_shapes",
        lambda a, b, c: (lax.bitcast_convert_type(a, F16), lax.bitcast_convert_type(b, F16),
                         lax.bitcast_convert_type(c, F32)),
        [np.linspace(-3, 3, 10).astype(f32), f32(1.0), np.linspace(-2, 2, 20).astype(np.float16).reshape(10, 2)])
    add(f"{fam}/ex24_dot_general_contract",
        lambda a, b: lax.dot_general(a, b, (((1,), (1,)), ((), ()))),
        [np.array([[1, 2, 3], [4, 5, 6]], f32), np.array([[1, 1, 1], [2, 2, 2]], f32)], expect=[[[6, 12], [15, 30]]])
    lhs = np.array([[[1, 2], [3, 4]], [[5, 6], [7, 8]]], f32)
    add(f"{fam}/ex25_dot_general_batch", lambda a, b: lax.dot_general(a, b, (((2,), (1,)), ((0,), (0,)))),
        [lhs, np.array([[[1, 0], [0, 1]], [[1, 0], [0, 1]]], f32)], expect=[lhs.tolist()])
    x = np.tile(np.array([[1, 2, 3], [4, 5, 6]], s32), (4, 1, 1))

    def red(x, d):
        return lax.reduce(x, s32(0), lax.add, d)
    add(f"{fam}/ex29_reduce_3d", lambda x: (red(x, (0,)), red(x, (2,)), red(x, (0, 1)), red(x, (0, 1, 2))), [x],
        expect=[[[4, 8, 12], [16, 20, 24]], [[6, 15]] * 4, [20, 28, 36], 84])
    add(f"{fam}/ex30_reduce_2d", lambda x: (red(x, (1,)), red(x, (0,))), [np.array([[1, 2, 3], [4, 5, 6]], s32)],
        expect=[[6, 15], [5, 7, 9]])
    add(f"{fam}/ex31_reduce_1d", lambda x: red(x, (0,)), [np.array([10, 11, 12, 13], s32)], expect=[46])
    add(f"{fam}/ex32_variadic_argmax",
        lambda v: lax.reduce((v, lax.iota(S32, 5)), (f32(-np.inf), s32(-1)),
                             lambda a, b: (lax.select(b[0] >= a[0], b[0], a[0]), lax.select(b[0] >= a[0], b[1], a[1])),
                             (0,)),
        [np.array([3, 9, 2, 7, 1], f32)], expect=[9.0, 1])
    add(f"{fam}/ex43_while", lambda v: lax.while_loop(lambda c: c[0] < 1000, lambda c: (c[0] + 1, c[1] + 1.0),
                                                      (s32(0), v)), [np.zeros(10, f32)],
        expect=[1000, [1000.0] * 10])
    for i, want in ((1, 1), (-1, 2), (7, 2)):
        nm = str(i).replace("-", "m")
        add_hlo(f"{fam}/ex44_conditional_index_{nm}", """HloModule ex44

b0 {
  p = s32[] parameter(0)
  ROOT c = s32[] constant(0)
}

b1 {
  p = s32[] parameter(0)
  ROOT c = s32[] constant(1)
}

b2 {
  p = s32[] parameter(0)
  ROOT c = s32[] constant(2)
}

ENTRY main {
  i = s32[] parameter(0)
  x = s32[] constant(0)
  ROOT r = s32[] conditional(i, x, x, x), branch_computations={b0, b1, b2}
}
""", [s32(i)], expect=[want])


# ==================================================================================================
# whole programs: real JAX models, run from both the pre-optimization text and
# XLA:CPU's optimized text (fusions, bitcasts, copies, LAPACK/DUCC custom calls)

# Stated tolerances of the model family (each case's `note` says why it needs one).
# f32 models: XLA's dots/convolutions accumulate in another order than NumPy's BLAS, XLA:CPU contracts
# multiply+add into FMAs (one rounding instead of two: fact 24 of tests/golden/README.md), and its
# exp/log/tanh/erf/rsqrt are approximations: a few f32 ulps per op, carried through the layers and the
# backward pass.  Measured: every f32 model here agrees within rtol 2e-5 + atol 1e-6 (2.5x margin).
MODEL_F32 = {"rtol": 5e-5, "atol": 2e-6}
# bf16 activations (before.hlo only: XLA:CPU computes bf16 ops in f32 and keeps f32 intermediates inside
# its fusions, excess precision, fact 13, while the text rounds each op to bf16; after.hlo spells the
# converts out and matches exactly): 2 bf16 ulps, or an absolute 2e-2 (about one bf16 ulp of the
# magnitude-2..4 activations, carried into outputs near zero)
MODEL_BF16 = {"ulp": 2, "atol": 2e-2}


# case name -> (jax PRNG implementation, _rng_program level): unsafe_rbg samples like rbg (both draw
# their bits from rng-bit-generator) and differs in split/fold_in only
RNG_IMPLS = {"threefry": ("threefry2x32", 2), "rbg": ("rbg", 1), "unsafe_rbg": ("unsafe_rbg", 0)}


def _rng_program(impl, level):
    """Key derivation and samplers of jax.random: level 0 key derivation and uniform f32 only, 1 adds
    permutation (a sort on random keys) and normal (erf_inv), 2 every other sampler and more element
    types (the optimized HLO of every sampler is long on CPU: each rng-bit-generator is expanded into its
    Philox rounds, each threefry into its 20 rounds)."""
    def f(raw):
        key = jax.random.wrap_key_data(raw, impl=impl)
        k1, k2, k3, k4, k5, k6 = jax.random.split(key, 6)
        kf = jax.random.fold_in(key, 7)
        out = {"split(3)": jax.random.key_data(jax.random.split(key, 3)), "fold_in(7)": jax.random.key_data(kf),
               "uniform f32": jax.random.uniform(k1, (4, 8), F32)}
        if level >= 1:
            out.update({"permutation(16)": jax.random.permutation(k5, 16),
                        "normal f32": jax.random.normal(kf, (4, 8), F32)})
        if level >= 2:
            out.update({"uniform f64 [-2,3)": jax.random.uniform(k2, (8,), F64, minval=-2.0, maxval=3.0),
                        "randint s32": jax.random.randint(k3, (20,), -5, 100, dtype=np.int32),
                        "bernoulli(0.3)": jax.random.bernoulli(k4, 0.3, (32,)),
                        "categorical": jax.random.categorical(k6, jnp.log(jnp.array([0.1, 0.2, 0.3, 0.4], F32)),
                                                              shape=(24,)),
                        "normal bf16": jax.random.normal(k6, (8,), BF16)})
        return tuple(out.values())
    labels = ["split(3)", "fold_in(7)", "uniform f32"] + (["permutation(16)", "normal f32"] if level >= 1 else []) + \
        (["uniform f64 [-2,3)", "randint s32", "bernoulli(0.3)", "categorical", "normal bf16"] if level >= 2 else [])
    return f, labels


def gen_models():
    fam = "models"
    r = np.random.default_rng(20261123)

    # ---- CNN: conv NHWC + bias + relu, max pool, conv, batch norm (training mode), relu, avg pool, dense
    p = jm.cnn_params(r)
    x = r.standard_normal((4, 8, 8, 3)).astype(F32)
    y = np.array([3, 0, 9, 5], np.int32)
    note_f32 = ("f32 model: dots/convolutions accumulate in XLA's order (not NumPy's), XLA:CPU fuses "
                "multiply+add into FMAs and exp/log/rsqrt are XLA's approximations; a few ulps per op, "
                "carried through the layers (and the backward pass): rtol 5e-5, atol 2e-6")
    fwd, leaves = jm.flat_fn(lambda p, x, y: (jm.cnn_logits(p, x), jm.cnn_loss(p, x, y)), p)
    add(f"{fam}/cnn_forward_f32", fwd, leaves + [x, y], MODEL_F32, labels=["logits", "loss"], note=note_f32)

    fn, leaves = jm.flat_fn(jm.cnn_train_step, p)
    add(f"{fam}/cnn_train_step_f32", fn, leaves + [x, y], MODEL_F32, note=note_f32 +
        "; grad of max pool (select-and-scatter), of avg pool and of batch norm")
    pb = jax.tree_util.tree_map(lambda a: a.astype(BF16), p)
    fwd, leaves = jm.flat_fn(lambda p, x, y: (jm.cnn_logits(p, x), jm.cnn_loss(p, x, y)), pb)
    add(f"{fam}/cnn_forward_bf16", fwd, leaves + [x.astype(BF16), y], MODEL_BF16, labels=["logits", "loss"],
        note="bf16 model: before.hlo rounds every op to bf16, XLA:CPU keeps f32 intermediates inside its "
             "fusions (excess precision), so a value may land one bf16 ulp away and the next layers carry "
             "it: 2 ulps or atol 2e-2 (after.hlo spells XLA's converts out and matches exactly)")

    # ---- transformer block: embedding gather, layer norm, causal MHA, GELU MLP, residuals, xent
    tp = jm.tf_params(r)
    tokens = r.integers(0, 16, (2, 8)).astype(np.int32)
    targets = np.concatenate([tokens[:, 1:], r.integers(0, 16, (2, 1)).astype(np.int32)], axis=1)
    fwd, leaves = jm.flat_fn(lambda p, t, y: jm.tf_loss(p, t, y)[::-1], tp)
    add(f"{fam}/transformer_forward_f32", fwd, leaves + [tokens, targets], MODEL_F32,
        labels=["logits", "loss"], note=note_f32 + "; erf GELU")

    fn, leaves = jm.flat_fn(jm.tf_train_step, jm.tf_train_state(r, tp))
    add(f"{fam}/transformer_train_step_f32", fn, leaves + [tokens, targets], MODEL_F32,
        note=note_f32 + "; value_and_grad, Adam update (sqrt/divide of small second moments)")

    def tf_mixed(p, t, y):
        (loss, logits), g = jax.value_and_grad(
            lambda p: jm.tf_loss(p, t, y, bf16=True, approximate_gelu=True), has_aux=True)(p)
        return logits, loss, jax.tree_util.tree_map(lambda a, b: a - 0.05 * b, p, g)
    fn, leaves = jm.flat_fn(tf_mixed, tp)
    add(f"{fam}/transformer_mixed_bf16", fn, leaves + [tokens, targets], MODEL_F32,
        note="mixed precision (tanh GELU): matmul operands rounded to bf16, f32 accumulation and f32 results; "
             "the bf16 roundings are exact conversions, the rest is an f32 model: rtol 5e-5, atol 2e-6")

    # ---- GRU over time with lax.scan; a loss and its gradient (scan backwards)
    gp = jm.gru_params(r)
    xs = r.standard_normal((6, 2, 3)).astype(F32)
    h0 = np.zeros((2, 4), F32)

    def gru(p, xs, h0):
        h, ys = jm.gru_run(p, xs, h0)
        loss, g = jax.value_and_grad(lambda p: jnp.mean(jnp.square(jm.gru_run(p, xs, h0)[1])))(p)
        return h, ys, loss, g
    fn, leaves = jm.flat_fn(gru, gp)
    add(f"{fam}/gru_scan_f32", fn, leaves + [xs, h0], MODEL_F32,
        note="f32 GRU (sigmoid, tanh) over 6 steps and its gradient: XLA's tanh/logistic approximations, "
             "carried through the recurrence: rtol 5e-5, atol 2e-6")

    # ---- depthwise (feature_group_count) strided and dilated convolutions, and their gradients
    #      (the backward pass of a grouped conv is a batch_group_count conv; of a strided one, lhs dilation)
    dp = {"dw": (r.standard_normal((3, 3, 1, 8)) * 0.4).astype(F32),
          "pw": (r.standard_normal((2, 2, 8, 6)) * 0.3).astype(F32),
          "dense": (r.standard_normal((6, 3)) * 0.5).astype(F32)}
    xd = r.standard_normal((2, 9, 9, 4)).astype(F32)
    yd = np.array([2, 0], np.int32)

    def dw_loss(p, x, y):
        dn = ("NHWC", "HWIO", "NHWC")
        h = lax.conv_general_dilated(x, p["dw"], (2, 2), "SAME", dimension_numbers=dn, feature_group_count=4)
        h = jnp.tanh(h)
        h = lax.conv_general_dilated(h, p["pw"], (1, 1), ((1, 0), (0, 1)), rhs_dilation=(2, 2),
                                     dimension_numbers=dn)
        h = jnp.mean(jax.nn.relu(h), axis=(1, 2))
        return jm.xent(h @ p["dense"], y)
    fn, leaves = jm.flat_fn(lambda p, x, y: jax.value_and_grad(dw_loss)(p, x, y), dp)
    add(f"{fam}/cnn_depthwise_strided_grad_f32", fn, leaves + [xd, yd], MODEL_F32,
        note=note_f32 + "; depthwise (feature_group_count=4, multiplier 2) stride-2 conv, rhs-dilated conv "
        "with asymmetric padding, and their gradients (batch_group_count convolutions, lhs dilation)")

    # ---- greedy decoding: a while loop until an end token (data-dependent trip count), embedding
    #      gather, argmax, dynamic-update-slice into the output buffer
    dec = {"emb": (r.standard_normal((12, 6)) * 0.8).astype(F32),
           "wh": (r.standard_normal((6, 6)) * 0.5).astype(F32),
           "wx": (r.standard_normal((6, 6)) * 0.5).astype(F32),
           "out": (r.standard_normal((6, 12)) * 1.5).astype(F32)}

    def decode(p, h0, start, eos):
        def cond(c):
            i, tok, _, buf = c
            return jnp.logical_and(i < buf.shape[0], tok != eos)

        def body(c):
            i, tok, h, buf = c
            h = jnp.tanh(h @ p["wh"] + p["emb"][tok] @ p["wx"])
            nxt = jnp.argmax(h @ p["out"]).astype(np.int32)
            return i + 1, nxt, h, lax.dynamic_update_index_in_dim(buf, nxt, i, 0)
        return lax.while_loop(cond, body, (np.int32(0), start, h0, jnp.full((16,), -1, np.int32)))
    fn, leaves = jm.flat_fn(decode, dec)
    for k, (st, eos) in enumerate(((3, 7), (5, 0))):
        h0 = (r.standard_normal(6) * 0.5).astype(F32)
        add(f"{fam}/greedy_decode_{k}", fn, leaves + [h0, np.int32(st), np.int32(eos)], MODEL_F32,
            labels=["steps", "last token", "state", "tokens"],
            note="a while loop that stops at an end token: the integer outputs (steps, tokens) are exact, "
                 "the f32 state is an f32 model (tanh): rtol 5e-5, atol 2e-6")
    add(f"{fam}/greedy_decode_0_x32", fn, leaves + [CASES[f"{fam}/greedy_decode_0"].args[-3], np.int32(3),
                                                     np.int32(7)], MODEL_F32, x64=False,
        labels=["steps", "last token", "state", "tokens"],
        note="greedy_decode_0 traced with jax_enable_x64 off (JAX's default: s32 gather indices and argmax); "
             "f32 state: rtol 5e-5, atol 2e-6")

    # ---- sorting and scans in a program: sort with NaN and -0 (XLA:CPU rewrites the float comparator into
    #      integer compares of bitcast values), stable argsort, top_k, median, cumulative sum/product/max
    xs_ = fcast([3.5, -1.0, np.nan, 0.0, -0.0, 2.0, -7.25, np.inf, 2.0, -np.inf, 1e-3, 5.0, -1.0, 0.25, 9.0, 4.0],
                F32).reshape(2, 8)
    add(f"{fam}/sort_topk_scan_f32",
        lambda x: (jnp.sort(x, axis=-1), jnp.argsort(x, axis=-1, stable=True), lax.top_k(x, 3),
                   jnp.median(jnp.nan_to_num(x, posinf=50.0, neginf=-50.0), axis=-1),
                   jnp.cumsum(x[:, :5], axis=-1), jnp.cumprod(x[:, :5], axis=-1), lax.cummax(x, axis=1),
                   jnp.argmax(x, axis=-1), jnp.argmin(x, axis=-1)),
        [xs_], EXACT, labels=["sort", "argsort", "top_k values", "top_k indices", "median", "cumsum", "cumprod",
                              "cummax", "argmax", "argmin"],
        note="sorting, selection and short scans of exactly representable values: exact")

    # ---- while loop with a data-dependent trip count: Newton's sqrt until converged, Collatz steps
    def newton(a, n):
        def cond(c):
            i, _, done = c
            return jnp.logical_and(i < 50, jnp.logical_not(done))

        def body(c):
            i, x, _ = c
            nx = 0.5 * (x + a / x)
            return i + 1, nx, jnp.all(jnp.abs(nx - x) <= 1e-6 * jnp.abs(nx))
        i, x, _ = lax.while_loop(cond, body, (np.int32(0), jnp.maximum(a, 1.0), False))

        def ccond(c):
            return jnp.any(c[0] != 1)

        def cbody(c):
            v, k = c
            nv = jnp.where(v % 2 == 0, v // 2, 3 * v + 1)
            return jnp.where(v == 1, v, nv), k + (v != 1).astype(np.int32)
        _, k = lax.while_loop(ccond, cbody, (n, jnp.zeros_like(n)))
        return i, x, k
    add(f"{fam}/while_dynamic_trip_count", newton,
        [np.array([2.0, 9.0, 1e4, 0.25, 3.0, 1e-3, 7.5, 100.0], F32), np.array([1, 6, 7, 27, 97, 871], np.int32)],
        EXACT, labels=["newton iterations", "sqrt", "collatz steps"],
        note="add/multiply/divide/compare only: exact")

    # ---- linalg (LAPACK custom calls on CPU)
    def spd(n, dt, key):
        rr = _seed("spd", key)
        a = rr.standard_normal((n, n))
        if np.dtype(dt).kind == "c":
            a = a + 1j * rr.standard_normal((n, n))
        return (a @ a.conj().T + n * np.eye(n)).astype(dt)

    def gen(n, dt, key, m=None):
        rr = _seed("gen", key)
        a = rr.standard_normal((n, m or n))
        if np.dtype(dt).kind == "c":
            a = a + 1j * rr.standard_normal((n, m or n))
        return (a + 2 * np.eye(n, m or n)).astype(dt)

    # measured: every linalg case agrees within a twentieth of these (f32/c64) or a hundredth (f64)
    linalg_tol = {F32: {"rtol": 2e-5, "atol": 2e-6}, F64: {"rtol": 1e-11, "atol": 1e-13},
                  C64: {"rtol": 2e-5, "atol": 2e-6}}
    lnote = ("LAPACK factorizations: the same algorithm in another blocking or BLAS (and NumPy's linalg "
             "computes f32 in f64) gives results within a few ulps times the condition number (matrices "
             "here are well conditioned)")
    for dt in (F32, F64, C64):
        tol = linalg_tol[dt]
        nm = hname(dt)
        every_op = dt != C64  # c64: a few
        a = gen(5, dt, "qr" + nm, 4)
        add(f"{fam}/linalg_qr_{nm}", lambda a: (jnp.linalg.qr(a), jnp.linalg.qr(a, mode="complete")), [a], tol,
            labels=["Q reduced", "R reduced", "Q complete", "R complete"], note=lnote)
        add(f"{fam}/linalg_cholesky_{nm}", jnp.linalg.cholesky, [spd(5, dt, "chol" + nm)], tol, note=lnote)
        b = gen(5, dt, "rhs" + nm, 2)
        add(f"{fam}/linalg_solve_{nm}", jnp.linalg.solve, [gen(5, dt, "solve" + nm), b], tol, note=lnote)
        add(f"{fam}/linalg_eigh_{nm}", lambda a: jnp.linalg.eigh(a), [spd(4, dt, "eigh" + nm)], tol,
            labels=["eigenvalues", "eigenvectors"], note=lnote)
        if not every_op:
            continue
        add(f"{fam}/linalg_svd_{nm}",
            lambda a: (jnp.linalg.svd(a, full_matrices=False), jnp.linalg.svd(a, compute_uv=False)),
            [gen(5, dt, "svd" + nm, 3)], tol, labels=["U", "S", "Vh", "S only"], note=lnote)
        add(f"{fam}/linalg_lu_{nm}", jax.scipy.linalg.lu, [gen(4, dt, "lu" + nm)], tol, labels=["P", "L", "U"],
            note=lnote)
        add(f"{fam}/linalg_inv_{nm}", jnp.linalg.inv, [gen(4, dt, "inv" + nm)], tol, note=lnote)
        add(f"{fam}/linalg_det_slogdet_{nm}",
            lambda a, b: (jnp.linalg.det(a), jnp.linalg.slogdet(a), jnp.linalg.slogdet(b)),
            [gen(4, dt, "det" + nm), -gen(3, dt, "det2" + nm)], tol,
            labels=["det", "sign", "logabsdet", "sign2", "logabsdet2"], note=lnote)
        tri = np.tril(gen(4, dt, "tri" + nm))
        add(f"{fam}/linalg_triangular_solve_{nm}",
            lambda l, b: (jax.scipy.linalg.solve_triangular(l, b, lower=True),
                          jax.scipy.linalg.solve_triangular(l, b, lower=True, trans=1),
                          jax.scipy.linalg.solve_triangular(l.T, b, lower=False, unit_diagonal=True)),
            [tri, gen(4, dt, "trib" + nm, 3)], tol, labels=["L x = b", "L^T x = b", "unit U x = b"], note=lnote)

    # ---- batched linalg: a leading batch dimension (num_batch_dims=1; the LAPACK custom calls loop over
    #      it).  svd included: hlo_interp calls SciPy's sgesdd as jaxlib does, so the singular vectors'
    #      signs are XLA's (NumPy's linalg, which computes f32 in f64, flipped some of them)
    rr = _seed("batched", "f32")
    a = (rr.standard_normal((3, 4, 4)) + 3 * np.eye(4)).astype(F32)
    h = (a @ np.swapaxes(a, -1, -2) + 4 * np.eye(4)).astype(F32)
    add(f"{fam}/linalg_batched_f32",
        lambda a, h: (jnp.linalg.qr(a), jnp.linalg.eigh(h), jnp.linalg.det(a),
                      jax.scipy.linalg.solve_triangular(jnp.linalg.cholesky(h), a, lower=True),
                      jnp.linalg.svd(a)),
        [a, h], linalg_tol[F32], labels=["Q", "R", "eigenvalues", "eigenvectors", "det", "cholesky solve",
                                         "svd U", "svd S", "svd Vh"],
        note=lnote + "; a batch of 3 matrices")

    # ---- fft (DUCC on CPU)
    fnote = ("FFT: XLA's DUCC and NumPy's pocketfft sum in other orders; the error of a bin is relative to "
             "the input's norm, not to the bin, so small bins need an absolute bound: atol 2e-5 (f32) or "
             "1e-13 (f64), for inputs of norm ~14; measured within a twentieth (f32), a hundredth (f64)")
    for dt in (F32, F64):
        tol = {"rtol": 1e-5, "atol": 2e-5} if dt == F32 else {"rtol": 1e-12, "atol": 1e-13}
        nm = hname(dt)
        cdt = C64 if dt == F32 else C128
        rr = _seed("fft", nm)
        xr = rr.standard_normal((4, 8, 6)).astype(dt)
        xc = (rr.standard_normal((4, 8, 6)) + 1j * rr.standard_normal((4, 8, 6))).astype(cdt)
        add(f"{fam}/fft_real_{nm}",
            lambda x: (jnp.fft.fft(x), jnp.fft.rfft(x), jnp.fft.irfft(jnp.fft.rfft(x), n=6), jnp.fft.fft2(x),
                       jnp.fft.fftn(x), jnp.fft.rfftn(x), jnp.fft.irfftn(jnp.fft.rfftn(x), s=x.shape),
                       jnp.fft.rfft(x, n=10), jnp.fft.ifft(x, axis=1)),
            [xr], tol, labels=["fft", "rfft", "irfft(rfft)", "fft2", "fftn", "rfftn", "irfftn(rfftn)",
                               "rfft n=10", "ifft axis 1"], note=fnote)
        add(f"{fam}/fft_complex_{hname(cdt)}",
            lambda x: (jnp.fft.fft(x), jnp.fft.ifft(x), jnp.fft.fft2(x), jnp.fft.ifft2(x), jnp.fft.fftn(x),
                       jnp.fft.ifftn(x), jnp.fft.irfft(x), jnp.fft.irfft(x, n=7), jnp.fft.fft(x, n=5, axis=0)),
            [xc], tol, labels=["fft", "ifft", "fft2", "ifft2", "fftn", "ifftn", "irfft", "irfft n=7",
                               "fft n=5 axis 0"], note=fnote)

    # ---- random numbers: threefry (default) and the rbg / unsafe_rbg implementations
    for nm, (impl, level) in RNG_IMPLS.items():
        f, labels = _rng_program(impl, level)
        kd = np.asarray(jax.random.key_data(jax.random.key(42, impl=impl)))
        rule_n32 = ({"rtol": 1e-5, "atol": 1e-6}, ("normal = sqrt(2) * erf_inv(uniform): erf_inv is a "
                                                   "polynomial approximation (XLA's and ours agree to a few "
                                                   "f32 ulps)"))
        rule_nb = ({"ulp": 1, "atol": 0}, ("normal bf16: computed in f32 then rounded; one f32 ulp of "
                                           "erf_inv may flip the bf16 rounding"))
        rule_u64 = ({"rtol": 0, "atol": 1e-15}, ("uniform f64 in [-2, 3) is u * 5 + -2 with u in [0, 1): "
                                                 "XLA:CPU fuses the multiply-add into one FMA (one rounding; "
                                                 "checked: all 8 values equal the exactly rounded u * 5 - 2), "
                                                 "the text says two roundings: |error| <= half an ulp of 5 "
                                                 "plus half an ulp of 3 < 1e-15"))
        add(f"{fam}/random_{nm}", f, [kd], EXACT, labels=labels,
            out_compare={k: rule for k, rule in ((4, rule_n32), (5, rule_u64), (9, rule_nb)) if k < len(labels)},
            note=f"jax.random with impl={impl}: key derivation and the samplers are bit-exact, except normal "
                 "(erf_inv) and f64 uniform with a scale (FMA): tolerance per output")


GENERATORS = [gen_elementwise, gen_convert, gen_movement, gen_reduce, gen_dot, gen_control, gen_examples, gen_models]


# ==================================================================================================
# running XLA

def run_case(case: Case):
    """(before text, after text, XLA:CPU's result leaves) of one case (tools/oracle/runner.py)."""
    if case.hlo:
        after, leaves = runner.run_hlo(case.hlo, case.args)
        return case.hlo, after, leaves
    return runner.run_jax(case.fn, case.args, x64=case.x64)


# --------------------------------------------------------------------------------------------------
# storing (tools/oracle/writer.py)

def _load_compare():
    spec = importlib.util.spec_from_file_location("_casedata", REPO / "tests" / "casedata.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _check_expect(case: Case, leaves, cmp) -> Optional[str]:
    if case.expect is None:
        return None
    if len(case.expect) != len(leaves):
        return f"spec example: {len(case.expect)} values stated, XLA gives {len(leaves)} leaves"
    for k, (want, got) in enumerate(zip(case.expect, leaves)):
        if got.dtype.kind != "V":
            w = np.asarray(want, dtype=got.dtype)
        else:
            w = np.asarray(want, np.float64).astype(got.dtype)
        msg = cmp.compare_leaf(got, w.reshape(got.shape) if w.size == got.size else w, EXACT)
        if msg:
            return f"spec example out{k}: {msg}"
    return None


def write_golden_case(case: Case, out_dir: Path, cmp) -> dict:
    before, after, leaves = run_case(case)
    extra = {}
    if case.expect is not None:
        extra["spec_example"] = True
    if case.note:
        extra["note"] = case.note
    if case.xla_artifact:
        extra["xla_artifact"] = dict(case.xla_artifact)
    if not case.x64:
        extra["x64"] = False  # traced with jax_enable_x64 off
    write_case(case.family, case.name.split("/", 1)[1], {"before": before, "after": after}, case.args, leaves,
               source="hand-written HLO" if case.hlo else "jax.jit", compare=case.compare, root=out_dir,
               labels=case.labels, out_compare=case.out_compare, extra=extra, compress=False)
    return {"problem": _check_expect(case, leaves, cmp)}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT)
    ap.add_argument("--only", help="regex on case names (family/name)")
    ap.add_argument("--list", action="store_true")
    opts = ap.parse_args(argv)
    for g in GENERATORS:
        g()
    names = [n for n in CASES if not opts.only or re.search(opts.only, n)]
    if opts.list:
        print("\n".join(names))
        return 0
    t0 = time.time()
    cmp = _load_compare()
    opts.out.mkdir(parents=True, exist_ok=True)
    if not opts.only:  # a full run owns the directories of its families (others: tools/oracle list)
        for fam in sorted({c.family for c in CASES.values()}):
            if (opts.out / fam).is_dir():
                shutil.rmtree(opts.out / fam)
    failed, problems = [], []
    for n in names:
        try:
            r = write_golden_case(CASES[n], opts.out, cmp)
            if r["problem"]:
                problems.append((n, r["problem"]))
        except Exception as e:  # noqa: BLE001 - report and go on
            failed.append((n, f"{type(e).__name__}: {str(e).splitlines()[0][:200]}"))
            if os.environ.get("GOLDEN_DEBUG"):
                traceback.print_exc()
    for n, msg in failed:
        print(f"SKIPPED {n}: {msg}", file=sys.stderr)
    for n, msg in problems:
        print(f"SPEC-MISMATCH {n}: {msg}", file=sys.stderr)
    size = sum(p.stat().st_size for p in opts.out.rglob("*") if p.is_file())
    print(f"{len(names) - len(failed)} cases written, {len(failed)} skipped, {size / 1e6:.2f} MB, "
          f"{time.time() - t0:.1f} s")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
