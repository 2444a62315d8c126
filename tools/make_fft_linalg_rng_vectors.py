#!/usr/bin/env python3
"""Regenerate tests/golden/fft_linalg_rng/: XLA:CPU-computed cases for fft, triangular-solve, cholesky,
rng-bit-generator, rng and rng-get-and-update-state (dev-only: needs JAX; jax/jaxlib 0.10.2 when made).

Each case is one case directory (tools/oracle/writer.py; tests/golden/README.md): `before.hlo` (hand-written,
or jax.jit(f).lower(...).as_text(dialect="hlo")), `after.hlo` (XLA:CPU's optimized module), inputs,
XLA:CPU's outputs and case.json.  `compare` is "exact" (bit for bit; NaN matches NaN), {"rtol": r, "atol": a} (|got - want| <= atol +
rtol*|want|, NaN/inf positions equal) or {"scaled": s} (|got - want| <= s * max|want| elementwise).

Hand-written HLO is parsed by XLA's own parser, converted to StableHLO and compiled by the XLA:CPU
client JAX uses.  Real JAX programs: FFTs and lax.rng_bit_generator / jax.random with the "rbg" key
(jax.jit on CPU, before and after optimization), and linalg programs (`jaxtpu_*`) lowered for TPU,
where cholesky/triangular_solve stay HLO ops (on CPU JAX emits LAPACK custom calls), then compiled
and run by XLA:CPU like hand-written text.  Cases of the `rng` op run each in a fresh process: XLA keys them with a value that
depends on what the process compiled before (see hlo_interp/ops/rng.py).

Usage:  python3 tools/make_fft_linalg_rng_vectors.py [--only REGEX]
"""
from __future__ import annotations

import os
import sys

os.environ.setdefault("JAX_PLATFORMS", "cpu")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import argparse
import re
import subprocess
import warnings
from pathlib import Path

import ml_dtypes
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from oracle import runner  # noqa: E402
from oracle.writer import GOLDEN, write_case  # noqa: E402

warnings.filterwarnings("ignore")
REPO = Path(__file__).resolve().parent.parent
FAMILY = "fft_linalg_rng"  # tests/golden/fft_linalg_rng/
OUT = GOLDEN / FAMILY

HLO = {"float32": "f32", "float64": "f64", "complex64": "c64", "complex128": "c128", "uint8": "u8",
       "uint16": "u16", "uint32": "u32", "uint64": "u64", "int8": "s8", "int16": "s16", "int32": "s32",
       "int64": "s64", "float16": "f16", "bfloat16": "bf16", "uint4": "u4", "int4": "s4", "uint2": "u2",
       "int2": "s2", "float8_e4m3fn": "f8e4m3fn", "float8_e5m2": "f8e5m2", "float4_e2m1fn": "f4e2m1fn"}
NP = {v: k for k, v in HLO.items()}
NATIVE = {"float32", "float64", "complex64", "complex128", "uint8", "uint16", "uint32", "uint64", "int8",
          "int16", "int32", "int64", "float16", "bool"}

EXACT = "exact"
TOL32 = {"rtol": 2e-5, "atol": 2e-5}
TOL64 = {"rtol": 1e-11, "atol": 1e-11}


def dt(name: str) -> np.dtype:
    n = NP.get(name, name)
    return np.dtype(getattr(ml_dtypes, n)) if n not in NATIVE else np.dtype(n)


def shp(t: str, s) -> str:
    return f"{t}[{','.join(str(int(d)) for d in s)}]"


# --------------------------------------------------------------------------------------------------
# running XLA

def _jax():
    import jax
    jax.config.update("jax_enable_x64", True)
    jax.config.update("jax_traceback_in_locations_limit", 0)
    return jax


def run_hlo(text: str, args):
    _jax()
    return runner.run_hlo(text, args)


def run_jax(fn, args):
    _jax()
    return runner.run_jax(fn, args, keep_unused=False)


RBG_BITS = ("XLA's StableHLO round trip turns rng-bit-generator's signed/float results into unsigned ones "
            "(the optimized text declares u32 where the hand-written one says s32): same bits")
RNG_FMA = ("XLA:CPU contracts the fused `u * (b - a) + a` of its expansion into one FMA; the optimized text "
           "spells a multiply and an add, which the evaluator rounds separately: 1 ulp of the product apart "
           "(one ulp of the largest |a|, |b|, here <= 3)")


def save(name, before, after, args, outs, compare, source, note="", want_types=None):
    outs = [np.asarray(o) for o in outs]
    for i, o in enumerate(outs):
        if want_types and want_types[i] is not None and o.dtype != want_types[i]:
            # XLA's StableHLO round trip returns rng-bit-generator bits as unsigned: same bits
            outs[i] = o.view(want_types[i])
    extra = {"note": note} if note else {}
    if name.startswith("rbg_"):
        extra["same_bits_types"] = RBG_BITS
    if name.startswith("rng_") and compare == EXACT:
        extra["compare_variants"] = {"after": {"rtol": 2.5e-7, "atol": 2.5e-7 * 4}}
        extra["compare_variants_reason"] = RNG_FMA
    write_case(FAMILY, name, {"before": before, "after": after}, args, outs, source=source, compare=compare,
               extra=extra)


# --------------------------------------------------------------------------------------------------
# cases

def _rand(rng, shape, t):
    v = rng.normal(size=shape)
    if t[0] == "c":
        v = v + 1j * rng.normal(size=shape)
    return v.astype(dt(t))


def cases_rbg():
    """rng-bit-generator: every algorithm, both state sizes, output types and shapes (hand-written)."""
    states = {2: np.array([0x123456789ABCDEF0, 0xFFFFFFFFFFFFFFFE], np.uint64),
              3: np.array([0x0F1E2D3C4B5A6978, 0xFFFFFFFFFFFFFFFF, 7], np.uint64)}
    outs = ["u32[5]", "u32[3,4]", "u32[]", "u32[3,5]", "u32[5,3,7]", "u64[5]", "u64[2,3]", "u64[]",
            "u16[7]", "u8[3,3]", "s32[4]", "s64[3]", "s16[5]", "s8[6]", "f32[4]", "f64[2]", "f16[3]", "u32[0]",
            "u4[5]", "s4[5]", "u32[1,5]", "u32[7,1,3]", "f8e4m3fn[5]", "f8e5m2[3,3]", "f4e2m1fn[6]", "bf16[5]",
            "u2[5]", "s2[4]"]
    for alg in ("rng_three_fry", "rng_philox", "rng_default"):
        for ns in ((2,) if alg == "rng_three_fry" else (2, 3)):
            for ty in outs:
                name = f"rbg_{alg[4:]}_s{ns}_{re.sub(r'[^a-z0-9]+', '_', ty).strip('_')}"
                text = (f"HloModule {name}\n\nENTRY main {{\n  s = u64[{ns}] parameter(0)\n"
                        f"  ROOT r = (u64[{ns}], {ty}) rng-bit-generator(s), algorithm={alg}\n}}\n")
                yield name, text, [states[ns]], [None, dt(ty.split("[")[0])], EXACT, ""


def cases_fft():
    rng = np.random.default_rng(5)
    specs = [("FFT", "c64", (3, 8), (8,)), ("FFT", "c128", (2, 4, 6), (4, 6)), ("IFFT", "c64", (2, 3, 4, 5), (3, 4, 5)),
             ("IFFT", "c128", (6,), (6,)), ("RFFT", "f32", (3, 16), (16,)), ("RFFT", "f64", (17,), (17,)),
             ("RFFT", "f32", (2, 6, 7), (6, 7)), ("RFFT", "f64", (2, 3, 4, 5), (3, 4, 5)),
             ("IRFFT", "c64", (3, 9), (16,)), ("IRFFT", "c128", (9,), (17,)), ("IRFFT", "c64", (2, 5, 6, 4), (5, 6, 7)),
             ("IRFFT", "c128", (5, 6, 4), (5, 6, 6)), ("FFT", "c64", (3, 0), (0,)), ("RFFT", "f32", (3, 0), (0,)),
             ("IRFFT", "c64", (3, 1), (0,)), ("FFT", "c64", (1,), (1,)), ("IRFFT", "c64", (4, 1), (1,))]
    for ft, it, ish, L in specs:
        if ft in ("FFT", "IFFT"):
            ot, osh = it, ish
        elif ft == "RFFT":
            ot = {"f32": "c64", "f64": "c128"}[it]
            osh = ish[:-1] + ((L[-1] // 2 + 1) if L[-1] else 0,)
        else:
            ot = {"c64": "f32", "c128": "f64"}[it]
            osh = ish[:-1] + (L[-1],)
        name = f"fft_{ft.lower()}_{it}_{'x'.join(map(str, ish))}_L{'x'.join(map(str, L))}"
        text = (f"HloModule {name}\n\nENTRY main {{\n  p = {shp(it, ish)} parameter(0)\n"
                f"  ROOT r = {shp(ot, osh)} fft(p), fft_type={ft}, fft_length={{{','.join(map(str, L))}}}\n}}\n")
        cmp = {"scaled": 2e-6 * max(1, len(L))} if it in ("c64", "f32") else {"scaled": 1e-13}
        yield name, text, [_rand(rng, ish, it)], None, cmp, ""


def cases_fft_special():
    """IRFFT ignores the imaginary parts of the DC and Nyquist terms; NaN and inf spread."""
    x = np.array([[1 + 5j, 2 - 1j, 3 + 2j, 4 + 7j, -1 + 0.5j]], np.complex64)  # L=8: DC, Nyquist have imag
    text = ("HloModule fft_irfft_dc_imag\n\nENTRY main {\n  p = c64[1,5] parameter(0)\n"
            "  ROOT r = f32[1,8] fft(p), fft_type=IRFFT, fft_length={8}\n}\n")
    yield "fft_irfft_dc_nyquist_imag", text, [x], None, {"scaled": 2e-6}, "imag parts of DC/Nyquist ignored"
    spec = np.array([0.5, 1, 2, -1, 0.25, 3, -2, 1], np.float32)
    text = ("HloModule fft_rfft_exact\n\nENTRY main {\n  p = f32[8] parameter(0)\n"
            "  ROOT r = c64[5] fft(p), fft_type=RFFT, fft_length={8}\n}\n")
    yield "fft_rfft_small_values", text, [spec], None, {"scaled": 2e-6}, ""
    for nm, v in (("nan", np.nan), ("inf", np.inf)):
        x = np.array([[1, 2, v, 4, 5, 6, 7, 8], [1, 2, 3, 4, 5, 6, 7, 8]], np.float32)
        text = (f"HloModule fft_rfft_{nm}\n\nENTRY main {{\n  p = f32[2,8] parameter(0)\n"
                "  ROOT r = c64[2,5] fft(p), fft_type=RFFT, fft_length={8}\n}\n")
        yield f"fft_rfft_{nm}", text, [x], None, {"scaled": 2e-6}, f"{nm} spreads to the row's NaN/inf pattern"
        xc = x.astype(np.complex64)
        text = (f"HloModule fft_fft_{nm}\n\nENTRY main {{\n  p = c64[2,8] parameter(0)\n"
                "  ROOT r = c64[2,8] fft(p), fft_type=FFT, fft_length={8}\n}\n")
        yield f"fft_fft_{nm}", text, [xc], None, {"scaled": 2e-6}, ""


def _ts_text(name, t, ash, bsh, left, lower, unit, tr):
    return (f"HloModule {name}\n\nENTRY main {{\n  a = {shp(t, ash)} parameter(0)\n  b = {shp(t, bsh)} parameter(1)\n"
            f"  ROOT r = {shp(t, bsh)} triangular-solve(a, b), left_side={str(left).lower()}, "
            f"lower={str(lower).lower()}, unit_diagonal={str(unit).lower()}, transpose_a={tr}\n}}\n")


def cases_triangular_solve():
    rng = np.random.default_rng(7)
    n_case = 0
    for t in ("f32", "f64", "c64", "c128"):
        for batch, n, k in (((), 4, 3), ((2,), 5, 2), ((10,), 4, 3), ((), 1, 3)):
            for left in (True, False):
                for lower in (True, False):
                    for unit in (False, True):
                        for tr in ("NO_TRANSPOSE", "TRANSPOSE", "ADJOINT"):
                            n_case += 1
                            # a subset, so every flag combination appears for every type / shape family
                            if (n_case % 3) and not (t == "f32" and batch == ()):
                                continue
                            a = (_rand(rng, batch + (n, n), t) * 0.3 + np.eye(n, dtype=dt(t)) * 2).astype(dt(t))
                            if n > 1:  # garbage in the triangle the op does not read
                                if lower:
                                    a[..., 0, -1] = 1e4
                                else:
                                    a[..., -1, 0] = 1e4
                                if unit:
                                    a[..., 1, 1] = 0  # unit_diagonal: the diagonal is not read
                            bsh = batch + ((n, k) if left else (k, n))
                            b = _rand(rng, bsh, t)
                            name = (f"tsolve_{t}_{'x'.join(map(str, batch)) or 's'}_{n}_{'L' if left else 'R'}"
                                    f"{'lo' if lower else 'up'}{'_unit' if unit else ''}_{tr.lower()}")
                            cmp = TOL32 if t in ("f32", "c64") else TOL64
                            yield name, _ts_text(name, t, a.shape, b.shape, left, lower, unit, tr), [a, b], None, cmp, ""
    # large (blocked, 130 > 128): well conditioned
    for t, tr in (("f64", "NO_TRANSPOSE"), ("f32", "TRANSPOSE"), ("c64", "ADJOINT")):
        n = 130
        a = _rand(rng, (n, n), t) * (0.5 / n) + np.eye(n, dtype=dt(t))
        b = _rand(rng, (n, 2), t)
        for lower in ((True, False) if t == "f64" else (t == "f32",)):
            name = f"tsolve_{t}_130_L{'lo' if lower else 'up'}_{tr.lower()}"
            cmp = TOL32 if t in ("f32", "c64") else TOL64
            yield name, _ts_text(name, t, a.shape, b.shape, True, lower, False, tr), [a.astype(dt(t)), b], None, cmp, ""
    # singular: zeros on the diagonal give inf/NaN, not an error
    for batch in ((), (10,)):
        a = _rand(rng, batch + (4, 4), "f32")
        a[..., 1, 1] = 0
        a[..., 2, 2] = 0
        b = _rand(rng, batch + (4, 3), "f32")
        for lower in (True, False):
            name = f"tsolve_singular_{'x'.join(map(str, batch)) or 's'}_{'lo' if lower else 'up'}"
            yield (name, _ts_text(name, "f32", a.shape, b.shape, True, lower, False, "NO_TRANSPOSE"), [a, b], None,
                   TOL32, "singular a: inf/NaN")
    for t in ("f16", "bf16"):
        a = np.array([[4, 0, 0], [2, 2, 0], [1, -1, 8]], np.float32).astype(dt(t))
        b = np.array([[1, 2], [3, 4], [5, 6]], np.float32).astype(dt(t))
        name = f"tsolve_{t}_small"
        yield name, _ts_text(name, t, a.shape, b.shape, True, True, False, "NO_TRANSPOSE"), [a, b], None, EXACT, ""


def cases_cholesky():
    rng = np.random.default_rng(11)
    for t in ("f32", "f64", "c64", "c128"):
        for batch, n in (((), 4), ((3,), 5), ((), 1), ((), 130), ((), 0)):
            for lower in (True, False):
                if n == 130 and (t in ("f64", "c128") or (t == "c64" and not lower)):
                    continue  # blocked (n > 128): f32 both ways and c64 are enough (keeps the data small)
                x = _rand(rng, batch + (n, n), t)
                a = (np.matmul(x, np.conj(np.swapaxes(x, -1, -2))) + n * np.eye(n)).astype(dt(t))
                ignored = np.triu(np.ones((n, n), bool), 1) if lower else np.tril(np.ones((n, n), bool), -1)
                a = np.where(ignored, np.asarray(777, dt(t)), a)
                if batch == (3,):
                    a[1, 2, 2] = -50  # batch element 1 is not positive definite: all NaN
                name = f"cholesky_{t}_{'x'.join(map(str, batch)) or 's'}_{n}_{'lower' if lower else 'upper'}"
                text = (f"HloModule {name}\n\nENTRY main {{\n  a = {shp(t, a.shape)} parameter(0)\n"
                        f"  ROOT r = {shp(t, a.shape)} cholesky(a), lower={str(lower).lower()}\n}}\n")
                cmp = TOL32 if t in ("f32", "c64") else TOL64
                yield name, text, [a], None, cmp, ""
    specials = {"zero_last_pivot": [[4, 0, 0], [2, 1, 0], [0, 0, 0]], "zero_first_pivot": [[0, 0], [0, 1]],
                "zero_1x1": [[0]], "nan": [[np.nan, 0], [1, 1]], "inf": [[np.inf, 0], [1, 1]],
                "spec_example": [[4, 0, 0], [12, 37, 0], [-16, -43, 98]]}
    for nm, v in specials.items():
        a = np.array(v, np.float32)
        for lower in (True, False):
            aa = a if lower else a.T.copy()
            name = f"cholesky_{nm}_{'lower' if lower else 'upper'}"
            text = (f"HloModule {name}\n\nENTRY main {{\n  a = {shp('f32', aa.shape)} parameter(0)\n"
                    f"  ROOT r = {shp('f32', aa.shape)} cholesky(a), lower={str(lower).lower()}\n}}\n")
            yield name, text, [aa], None, TOL32, ""
    for t in ("f16", "bf16"):
        a = np.array([[4, 0], [2, 3]], np.float32).astype(dt(t))
        name = f"cholesky_{t}"
        text = (f"HloModule {name}\n\nENTRY main {{\n  a = {t}[2,2] parameter(0)\n"
                f"  ROOT r = {t}[2,2] cholesky(a), lower=true\n}}\n")
        yield name, text, [a], None, EXACT, ""


RNG_CASES = [
    ("rng_uniform_f32_6", "rng_uniform", "f32[6]", (-2.0, 3.0), EXACT),
    ("rng_uniform_f32_3x5", "rng_uniform", "f32[3,5]", (0.0, 1.0), EXACT),
    ("rng_uniform_f64_2x3", "rng_uniform", "f64[2,3]", (-2.0, 3.0), {"rtol": 4.5e-16, "atol": 1e-15}),
    ("rng_uniform_f16_7", "rng_uniform", "f16[7]", (-2.0, 3.0), EXACT),
    ("rng_uniform_bf16_5", "rng_uniform", "bf16[5]", (0.0, 1.0), EXACT),
    ("rng_uniform_s32_7", "rng_uniform", "s32[7]", (-2, 3), EXACT),
    ("rng_uniform_u32_9", "rng_uniform", "u32[9]", (10, 1000000), EXACT),
    ("rng_uniform_s64_4", "rng_uniform", "s64[4]", (-(2 ** 40), 2 ** 50), EXACT),
    ("rng_uniform_u64_5", "rng_uniform", "u64[5]", (5, 2 ** 63 + 5), EXACT),
    ("rng_uniform_s32_empty_range", "rng_uniform", "s32[5]", (3, 3), EXACT),
    ("rng_normal_f32_6", "rng_normal", "f32[6]", (1.0, 2.0), {"rtol": 2e-6, "atol": 2e-6}),
    ("rng_normal_f32_3x5", "rng_normal", "f32[3,5]", (0.0, 1.0), {"rtol": 2e-6, "atol": 2e-6}),
    ("rng_normal_f32_scalar", "rng_normal", "f32[]", (0.0, 1.0), {"rtol": 2e-6, "atol": 2e-6}),
    ("rng_normal_f64_4", "rng_normal", "f64[4]", (1.0, 2.0), {"rtol": 1e-14, "atol": 1e-14}),
    ("rng_normal_f16_7", "rng_normal", "f16[7]", (0.0, 1.0), {"rtol": 1e-3, "atol": 1e-3}),
]


def rng_case(i: int) -> None:
    """Run RNG_CASES[i] (in a fresh process: XLA's key depends on what the process compiled before)."""
    name, dist, ty, (a, b), cmp = RNG_CASES[i]
    t = ty.split("[")[0]
    text = (f"HloModule {name}\n\nENTRY main {{\n  a = {t}[] parameter(0)\n  b = {t}[] parameter(1)\n"
            f"  ROOT r = {ty} rng(a, b), distribution={dist}\n}}\n")
    args = [np.array(a).astype(dt(t)), np.array(b).astype(dt(t))]
    after, outs = run_hlo(text, args)
    save(name, text, after, args, outs, cmp, "hand-written HLO (fresh process)",
         "XLA's rng key depends on the process; this is the first module compiled in a fresh process")


def cases_rng_state():
    text = ("HloModule rng_get_and_update_state\n\nENTRY main {\n"
            "  ROOT g = u64[2] rng-get-and-update-state(), delta=8\n}\n")
    yield "rng_get_and_update_state", text, [], None, EXACT, "XLA:CPU's initial state 0x7012395"


def jax_cases():
    """Real JAX programs (before and after optimization)."""
    jax = _jax()
    import jax.numpy as jnp
    from jax import lax
    rng = np.random.default_rng(3)
    x32 = rng.normal(size=(4, 16)).astype(np.float32)
    x64 = rng.normal(size=(3, 6, 10))
    c64 = (rng.normal(size=(4, 8)) + 1j * rng.normal(size=(4, 8))).astype(np.complex64)
    c128 = rng.normal(size=(2, 4, 6)) + 1j * rng.normal(size=(2, 4, 6))
    S = {"scaled": 4e-6}
    D = {"scaled": 1e-13}
    yield "jax_fft_c64", (lambda x: jnp.fft.fft(x)), [c64], S
    yield "jax_ifft2_c128", (lambda x: jnp.fft.ifft2(x)), [c128], D
    yield "jax_fftn_c128", (lambda x: jnp.fft.fftn(x)), [c128], D
    yield "jax_rfft_f32", (lambda x: jnp.fft.rfft(x)), [x32], S
    yield "jax_rfftn_f64", (lambda x: jnp.fft.rfftn(x)), [x64], D
    yield "jax_irfft_f32", (lambda x: jnp.fft.irfft(jnp.fft.rfft(x), n=16)), [x32], S
    yield "jax_irfftn_odd_f64", (lambda x: jnp.fft.irfftn(x, s=(6, 9))), [x64.astype(np.complex128)[:, :, :5]], D
    yield "jax_fft_spectrum_power", (lambda x: jnp.abs(jnp.fft.rfft(x * jnp.hanning(16))) ** 2), [x32], S
    key = np.array([1, 2, 3, 4], np.uint32)
    for alg in ("RNG_DEFAULT", "RNG_THREE_FRY", "RNG_PHILOX"):
        a = getattr(lax.RandomAlgorithm, alg)
        yield (f"jax_rbg_{alg.lower()}_u32", (lambda k, a=a: lax.rng_bit_generator(k, (3, 5), np.uint32, a)), [key],
               EXACT)
        yield (f"jax_rbg_{alg.lower()}_u64", (lambda k, a=a: lax.rng_bit_generator(k, (7,), np.uint64, a)), [key],
               EXACT)
        yield (f"jax_rbg_{alg.lower()}_u8", (lambda k, a=a: lax.rng_bit_generator(k, (2, 3), np.uint8, a)), [key],
               EXACT)
    k = jax.random.key_data(jax.random.key(42, impl="rbg"))
    impl = "rbg"
    yield ("jax_random_uniform_rbg", (lambda kd: jax.random.uniform(jax.random.wrap_key_data(kd, impl=impl), (3, 4))),
           [np.asarray(k)], {"rtol": 1e-6, "atol": 1e-7})
    yield ("jax_random_normal_rbg", (lambda kd: jax.random.normal(jax.random.wrap_key_data(kd, impl=impl), (5,))),
           [np.asarray(k)], {"rtol": 1e-5, "atol": 1e-6})


def jax_tpu_cases():
    """Real JAX linalg programs.  On CPU JAX lowers cholesky/triangular_solve to LAPACK custom calls,
    so these are lowered for TPU (where they stay the HLO ops `cholesky` and `triangular-solve`) and
    the text is then compiled and run by XLA:CPU like a hand-written module."""
    import jax.numpy as jnp
    import jax.scipy.linalg as jsl
    from jax import lax
    r = np.random.default_rng(13)

    def spd(n, dtype, batch=()):
        x = r.normal(size=batch + (n, n))
        if np.dtype(dtype).kind == "c":
            x = x + 1j * r.normal(size=batch + (n, n))
        return (x @ np.conj(np.swapaxes(x, -1, -2)) + n * np.eye(n)).astype(dtype)

    def chol_solve(a, b):
        lo = lax.linalg.cholesky(a)
        return lax.linalg.triangular_solve(lo, b, left_side=True, lower=True)

    yield "jaxtpu_cholesky_then_solve_f32", chol_solve, [spd(4, np.float32), r.normal(size=(4, 2)).astype(np.float32)]
    yield "jaxtpu_cholesky_then_solve_f64_batch", chol_solve, [spd(5, np.float64, (3,)), r.normal(size=(3, 5, 2))]
    yield ("jaxtpu_cho_solve_c64", (lambda a, b: jsl.cho_solve(jsl.cho_factor(a, lower=False), b)),
           [spd(4, np.complex64), (r.normal(size=(4, 3)) + 1j * r.normal(size=(4, 3))).astype(np.complex64)])
    yield "jaxtpu_linalg_cholesky_f32", (lambda a: jnp.linalg.cholesky(a)), [spd(6, np.float32, (2,))]
    tri = (np.tril(r.normal(size=(5, 5))) * 0.3 + 2 * np.eye(5)).astype(np.float32)
    bb = r.normal(size=(5, 3)).astype(np.float32)
    for trans in (0, 1, 2):
        yield (f"jaxtpu_solve_triangular_trans{trans}_f32",
               (lambda a, b, trans=trans: jsl.solve_triangular(a, b, trans=trans, lower=True)), [tri, bb])
    yield ("jaxtpu_solve_triangular_upper_unit_f64",
           (lambda a, b: jsl.solve_triangular(a, b, lower=False, unit_diagonal=True)),
           [tri.T.astype(np.float64), bb.astype(np.float64)])
    yield ("jaxtpu_triangular_solve_right_c128",
           (lambda a, b: lax.linalg.triangular_solve(a, b, left_side=False, lower=True, conjugate_a=True,
                                                      transpose_a=True)),
           [(tri + 0.5j * np.tril(r.normal(size=(5, 5)))).astype(np.complex128), r.normal(size=(2, 5)) + 0j])
    yield ("jaxtpu_cholesky_not_pd_f32", (lambda a: lax.linalg.cholesky(a)),
           [np.array([[1, 2, 3], [2, 1, 4], [3, 4, 1]], np.float32)])


# --------------------------------------------------------------------------------------------------

def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", default=None)
    ap.add_argument("--rng-case", type=int, default=None, help=argparse.SUPPRESS)
    opts = ap.parse_args()
    if opts.rng_case is not None:
        rng_case(opts.rng_case)
        return
    only = re.compile(opts.only) if opts.only else None
    n = 0
    for gen in (cases_rbg, cases_fft, cases_fft_special, cases_triangular_solve, cases_cholesky, cases_rng_state):
        for name, text, args, types, cmp, note in gen():
            if only and not only.search(name):
                continue
            try:
                after, outs = run_hlo(text, args)
            except Exception as e:  # noqa: BLE001 - a variant XLA:CPU rejects is left out
                print(f"skipped {name}: XLA: {str(e).splitlines()[0][:160]}")
                continue
            save(name, text, after, args, outs, cmp, "hand-written HLO", note, types)
            n += 1
    for name, fn, args, cmp in jax_cases():
        if only and not only.search(name):
            continue
        before, after, outs = run_jax(fn, args)
        save(name, before, after, args, outs, cmp, "jax.jit")
        n += 1
    _jax()
    for name, fn, args in jax_tpu_cases():
        if only and not only.search(name):
            continue
        text = runner.lower_for_platform(fn, args, "tpu")
        try:
            after, outs = run_hlo(text, args)
        except Exception as e:  # noqa: BLE001
            print(f"skipped {name}: XLA: {str(e).splitlines()[0][:160]}")
            continue
        cmp = TOL64 if all(np.asarray(a).dtype in (np.float64, np.complex128) for a in args) else \
            {"rtol": 1e-4, "atol": 1e-4}
        save(name, text, after, args, outs, cmp, "jax.jit lowered for TPU, run by XLA:CPU")
        n += 1
    for i, c in enumerate(RNG_CASES):
        if only and not only.search(c[0]):
            continue
        subprocess.run([sys.executable, __file__, "--rng-case", str(i)], check=True)
        n += 1
    print(f"{n} cases written to {OUT}")


if __name__ == "__main__":
    main()
