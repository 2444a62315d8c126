#!/usr/bin/env python3
"""Regenerate tests/golden/elementwise_edges/: XLA:CPU's results for the elementwise ops on edge
inputs, for every element type (dev-only: needs jax/jaxlib; the tests only read the committed data).

Each case is a one-instruction HLO module run by XLA:CPU (HLO text -> XLA's parser -> StableHLO ->
PJRT CPU compile); a few opcodes this XLA cannot take as text (acos...sinh for f16/f32/f64/complex)
use JAX's lax.* instead, and mulhi (not exposed by JAX) its exact integer definition.  Each case is one
case directory (tools/oracle/writer.py); its `tag` (exact, trans, cplx) and `compare` (rule_of) say how
tests/test_ops_elementwise.py compares it.

    python3 tools/make_elementwise_vectors.py [--only REGEX]
"""
from __future__ import annotations

import argparse
import os
import re
import sys
import time
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ.setdefault("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1")

import ml_dtypes  # noqa: E402
import numpy as np  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tools"))
from oracle import runner  # noqa: E402
from oracle.writer import write_case  # noqa: E402

FAMILY = "elementwise_edges"  # tests/golden/elementwise_edges/

from hlo_interp.types import PRIMITIVE_TYPES  # noqa: E402

FLOATS = ["f16", "f32", "f64", "bf16", "f8e5m2", "f8e4m3", "f8e4m3fn", "f8e4m3b11fnuz", "f8e3m4",
          "f8e5m2fnuz", "f8e4m3fnuz", "f4e2m1fn", "f8e8m0fnu"]
SINTS = ["s2", "s4", "s8", "s16", "s32", "s64"]
UINTS = ["u2", "u4", "u8", "u16", "u32", "u64"]
INTS = SINTS + UINTS
COMPLEX = ["c64", "c128"]
ALL = ["pred"] + INTS + FLOATS + COMPLEX


def dt(name):
    return PRIMITIVE_TYPES[name].dtype


# ---- input values per type

def float_specials(name: str) -> np.ndarray:
    d = dt(name)
    if d.itemsize == 1:  # every bit pattern of an 8-bit (or 4-bit) float
        n = 16 if name == "f4e2m1fn" else 256
        return np.arange(n, dtype=np.uint8).view(d)
    fi = ml_dtypes.finfo(d) if name in ("bf16",) else np.finfo(d)
    vals = [0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 1.5, -1.5, 2.5, -2.5, 3.7, -3.7, 0.49999997, 0.1, -0.1,
            2.0, 3.0, 7.0, 100.0, -100.0, 1e-3, np.pi, -np.e, 65504.0, 65520.0, 1e10, -1e10, 3e38,
            float(fi.max), -float(fi.max), float(fi.tiny), float(fi.tiny) / 4, -float(fi.tiny) / 4,
            float(fi.smallest_subnormal) if hasattr(fi, "smallest_subnormal") else 0.0,
            np.nan, -np.nan, np.inf, -np.inf, 2.0**31, -(2.0**31), 2.0**63, -(2.0**63), 2.0**64, 300.0,
            -300.0, 128.0, -129.0, 255.5, 1.00146484375, 1.0001, 65519.0, -70000.0, 1e-5, 0.75, -0.75]
    with np.errstate(all="ignore"):
        return np.array(vals, np.float64).astype(np.float32 if d.itemsize < 4 else d).astype(d)


def float_pairs(name: str):
    d = dt(name)
    if d.itemsize == 1:
        base = float_specials(name)
        sel = base[:: max(1, len(base) // 24)]
    else:
        sel = float_specials(name)[[0, 1, 2, 3, 4, 7, 9, 10, 11, 18, 19, 20, 28, 29, 30, 32, 34, 35, 36,
                                    37]]
    a, b = np.meshgrid(sel, sel, indexing="ij")
    return a.ravel(), b.ravel()


def int_specials(name: str) -> np.ndarray:
    d = dt(name)
    t = PRIMITIVE_TYPES[name]
    if t.bits <= 4:
        lo = -(1 << (t.bits - 1)) if t.kind == "sint" else 0
        return np.arange(lo, lo + (1 << t.bits)).astype(d)
    info = np.iinfo(d)
    vals = {0, 1, 2, 3, 5, 7, 8, 100, int(info.max), int(info.max) - 1, int(info.min), int(info.min) + 1,
            t.bits - 1, t.bits, t.bits + 1, 255, 256}
    if t.kind == "sint":
        vals |= {-1, -2, -3, -7, -8, -100}
    vals = sorted(v for v in vals if info.min <= v <= info.max)
    return np.array(vals, dtype=np.int64 if t.kind == "sint" else np.uint64).astype(d)


def int_pairs(name: str):
    v = int_specials(name)
    a, b = np.meshgrid(v, v, indexing="ij")
    return a.ravel(), b.ravel()


def complex_values(name: str) -> np.ndarray:
    d = dt(name)
    re = np.array([0.0, -0.0, 1.0, -1.0, 0.5, 2.0, -3.0, 1e-3, 100.0, 0.3, -0.7, 4.0])
    im = np.array([0.0, 0.0, 0.0, 1.0, -0.5, 2.0, 4.0, 1.0, -50.0, 0.4, 0.2, -3.0])
    return (re + 1j * im).astype(d)


def specials(name: str) -> np.ndarray:
    if name == "pred":
        return np.array([False, True])
    if name in FLOATS:
        return float_specials(name)
    if name in INTS:
        return int_specials(name)
    return complex_values(name)


def pairs(name: str):
    if name == "pred":
        return np.array([False, False, True, True]), np.array([False, True, False, True])
    if name in FLOATS:
        return float_pairs(name)
    if name in INTS:
        return int_pairs(name)
    v = complex_values(name)
    a, b = np.meshgrid(v, v, indexing="ij")
    return a.ravel(), b.ravel()


def transcendental_inputs(name: str) -> np.ndarray:
    d = dt(name)
    if d.itemsize == 1:
        return float_specials(name)
    rng = np.random.default_rng(0)
    v = np.concatenate([rng.uniform(-4, 4, 96), rng.uniform(-0.999, 0.999, 32), rng.uniform(1, 30, 32),
                        10.0 ** rng.uniform(-6, 2, 32)])
    with np.errstate(all="ignore"):
        v = np.concatenate([v, float_specials(name).astype(np.float64)])
        return v.astype(np.float32 if d.itemsize < 4 else d).astype(d)


# ---- module text

def shape(t, n):
    return f"{t}[{n}]"


def module(params: list[tuple[str, int]], op: str, out: str, attrs: str = "", out_dims: str = "") -> str:
    lines = [f"  p{i} = {shape(t, n)} parameter({i})" for i, (t, n) in enumerate(params)]
    args = ", ".join(f"p{i}" for i in range(len(params)))
    od = out_dims or str(params[0][1])
    lines.append(f"  ROOT r = {out}[{od}] {op}({args}){attrs}")
    return "HloModule m\n\nENTRY e {\n" + "\n".join(lines) + "\n}\n"


UNARY_EXACT = ["abs", "negate", "sign", "floor", "ceil", "round-nearest-afz", "round-nearest-even",
               "sqrt", "is-finite", "not", "popcnt", "count-leading-zeros", "real", "imag"]
UNARY_TRANS = ["exponential", "exponential-minus-one", "log", "log-plus-one", "logistic", "rsqrt", "cbrt",
               "tanh", "tan", "sine", "cosine", "acos", "acosh", "asin", "asinh", "atan", "atanh", "cosh",
               "sinh", "erf"]
BINARY = ["add", "subtract", "multiply", "divide", "remainder", "maximum", "minimum", "power", "atan2",
          "and", "or", "xor", "shift-left", "shift-right-arithmetic", "shift-right-logical", "mulhi"]


def unary_types(op):
    if op in ("not",):
        return ["pred"] + INTS
    if op in ("popcnt", "count-leading-zeros"):
        return INTS
    if op in ("abs", "sign"):
        return SINTS + FLOATS + COMPLEX
    if op == "negate":
        return SINTS + UINTS + FLOATS + COMPLEX
    if op in ("real", "imag"):
        return COMPLEX + ["f32"]
    if op == "is-finite":
        return FLOATS
    if op == "sqrt":
        return FLOATS + COMPLEX
    return FLOATS


def binary_types(op):
    if op in ("and", "or", "xor"):
        return ["pred"] + INTS
    if op.startswith("shift") or op == "mulhi":
        return INTS
    if op == "atan2":
        return FLOATS
    if op in ("maximum", "minimum"):
        return ["pred"] + INTS + FLOATS
    if op == "remainder":
        return INTS + FLOATS
    return ["pred"] + INTS + FLOATS + COMPLEX if op in ("add", "multiply", "power") else INTS + FLOATS + COMPLEX


def out_type(op, t):
    if op == "is-finite":
        return "pred"
    if op in ("abs", "real", "imag") and t in COMPLEX:
        return "f32" if t == "c64" else "f64"
    return t


def cases():
    """(id, text, inputs, tag) for every case; tag says how the tests compare ("exact" or "trans")."""
    for op in UNARY_EXACT:
        for t in unary_types(op):
            x = specials(t)
            tag = "cplx" if t in COMPLEX and op in ("sign", "sqrt") else "exact"
            yield f"{op}.{t}", module([(t, len(x))], op, out_type(op, t)), [x], tag
    for op in UNARY_TRANS:
        for t in FLOATS + (COMPLEX if op not in ("cbrt", "erf") else []):
            x = transcendental_inputs(t) if t in FLOATS else complex_values(t)
            yield f"{op}.{t}", module([(t, len(x))], op, t), [x], "trans" if t in FLOATS else "cplx"
    for op in BINARY:
        for t in binary_types(op):
            a, b = pairs(t)
            tag = "trans" if op in ("atan2",) or (op == "power" and t in FLOATS) else "exact"
            if t in COMPLEX and op in ("multiply", "divide", "power"):
                tag = "cplx"
            yield f"{op}.{t}", module([(t, len(a)), (t, len(b))], op, t), [a, b], tag
    # compare: every direction, default and explicit comparison types
    for t in ["pred"] + INTS + FLOATS + COMPLEX:
        a, b = pairs(t)
        types = [None]
        if t in FLOATS:
            types = [None, "TOTALORDER"]
        for direction in (["EQ", "NE"] if t in COMPLEX else ["EQ", "NE", "LT", "LE", "GT", "GE"]):
            for ct in types:
                attrs = f", direction={direction}" + (f", type={ct}" if ct else "")
                yield (f"compare.{direction}.{ct or 'default'}.{t}",
                       module([(t, len(a)), (t, len(b))], "compare", "pred", attrs), [a, b], "exact")
    # select and clamp
    for t in ["pred", "s4", "s32", "u8", "f32", "bf16", "f8e4m3fn", "c64"]:
        a, b = pairs(t)
        p = (np.arange(len(a)) % 3 == 0)
        yield f"select.{t}", module([("pred", len(a)), (t, len(a)), (t, len(a))], "select", t), [p, a, b], "exact"
    for t in ["s4", "u4", "s8", "s32", "u32", "s64", "f16", "f32", "f64", "bf16", "f8e5m2", "f8e4m3fn"]:
        a, b = pairs(t)
        x = np.resize(specials(t), len(a))
        yield f"clamp.{t}", module([(t, len(a)), (t, len(a)), (t, len(a))], "clamp", t), [a, x, b], "exact"
    # convert: every pair of types
    for s in ALL:
        x = specials(s)
        for d in ALL:
            if s == d:
                continue
            if s in COMPLEX and d not in COMPLEX:
                continue
            yield f"convert.{s}.{d}", module([(s, len(x))], "convert", d), [x], "exact"
    # bitcast-convert
    same = [("f32", "s32"), ("f32", "u32"), ("s32", "f32"), ("bf16", "s16"), ("f16", "u16"), ("u16", "bf16"),
            ("f64", "s64"), ("u64", "f64"), ("s8", "u8"), ("u8", "f8e4m3fn"), ("f8e5m2", "s8"), ("s4", "u4"),
            ("u4", "s4"), ("c64", "u64"), ("s64", "c64"), ("u8", "pred"), ("pred", "u8")]
    for s, d in same:
        x = specials(s)
        if s == "u8" and d == "pred":
            x = np.array([0, 1], np.uint8)
        yield f"bitcast-convert.{s}.{d}", module([(s, len(x))], "bitcast-convert", d), [x], "exact"
    changing = [("f32", "u8", 4), ("s32", "s16", 2), ("f64", "f32", 2), ("u64", "u8", 8), ("c64", "f32", 2),
                ("c128", "u32", 4), ("s16", "s8", 2), ("f16", "u8", 2), ("bf16", "s8", 2), ("u8", "u4", 2),
                ("s8", "s4", 2), ("u8", "u2", 4), ("u16", "s4", 4)]
    for s, d, k in changing:
        x = specials(s)[:16] if s not in COMPLEX else complex_values(s)
        n = len(x)
        text = module([(s, n)], "bitcast-convert", d, out_dims=f"{n},{k}")
        yield f"bitcast-convert.{s}.{d}", text, [x], "exact"
        # and back: d[n, k] -> s[n]
        pass
    for d, s, k in changing:  # narrower -> wider
        rng = np.random.default_rng(k)
        n = 6
        raw = rng.integers(0, 256, size=n * k * PRIMITIVE_TYPES[s].dtype.itemsize, dtype=np.uint8)
        if PRIMITIVE_TYPES[s].bits < 8:
            raw = raw & np.uint8((1 << PRIMITIVE_TYPES[s].bits) - 1)
            x = raw[: n * k].view(np.uint8).astype(np.int16)
            from hlo_interp.ops.numerics import from_bits
            x = from_bits(x, dt(s)).reshape(n, k)
        else:
            x = raw.view(dt(s)).reshape(n, k)
        text = ("HloModule m\n\nENTRY e {\n"
                f"  p0 = {s}[{n},{k}] parameter(0)\n  ROOT r = {d}[{n}] bitcast-convert(p0)\n}}\n")
        yield f"bitcast-convert.{s}.{d}.join", text, [x], "exact"
    # reduce-precision
    for t, e, m in [("f32", 5, 10), ("f32", 8, 7), ("f32", 4, 3), ("f32", 5, 2), ("f32", 2, 1), ("f32", 8, 23),
                    ("f32", 3, 0), ("f32", 11, 30), ("f64", 11, 52), ("f64", 8, 23), ("f64", 5, 10),
                    ("f64", 1, 0), ("f16", 5, 3), ("f16", 4, 10), ("bf16", 5, 2), ("bf16", 8, 3),
                    ("f8e4m3fn", 3, 1), ("f8e5m2", 4, 1)]:
        x = specials(t)
        yield (f"reduce-precision.{t}.e{e}m{m}",
               module([(t, len(x))], "reduce-precision", t, f", exponent_bits={e}, mantissa_bits={m}"), [x],
               "exact")
    # stochastic-convert
    rng = np.random.default_rng(7)
    for s, r, d in [("f32", "u32", "s32"), ("f32", "u32", "s8"), ("f16", "u16", "s16"), ("bf16", "u16", "s32"),
                    ("f64", "u64", "s64"), ("f32", "u32", "s64")]:
        base = specials(s)
        x = np.concatenate([base, (rng.uniform(-10, 10, 64)).astype(np.float32).astype(dt(s))])
        rb = rng.integers(0, 2**63, size=len(x), dtype=np.uint64).astype(dt(r))
        text = ("HloModule m\n\nENTRY e {\n"
                f"  p0 = {s}[{len(x)}] parameter(0)\n  p1 = {r}[{len(x)}] parameter(1)\n"
                f"  ROOT r = {d}[{len(x)}] stochastic-convert(p0, p1)\n}}\n")
        yield f"stochastic-convert.{s}.{d}", text, [x, rb], "exact"
    # complex()
    for t, c in [("f32", "c64"), ("f64", "c128")]:
        a, b = pairs(t)
        yield f"complex.{t}", module([(t, len(a)), (t, len(b))], "complex", c), [a, b], "exact"


# The comparison rules written into each case.json (tests/test_ops_elementwise.py applies them by the case's
# tag).  Max error in ulps of the result type (transcendentals), measured against XLA:CPU; default 2.
ULPS = {
    ("exponential-minus-one", "f32"): 3, ("tanh", "f32"): 3, ("erf", "f32"): 3, ("erf", "f64"): 8,
    ("tanh", "f64"): 8, ("log-plus-one", "f64"): 48,
    # acos..sinh: this XLA's HLO->StableHLO path refuses the opcodes for f16/f32/f64, so their vectors
    # come from JAX's lax.* (XLA's decompositions), which are less accurate than libm.
    ("cosh", "f32"): 32, ("sinh", "f32"): 32, ("cosh", "f64"): 16, ("sinh", "f64"): 16,
    ("atanh", "f64"): 64,
}
ULPS_DEFAULT = 2
CPLX_TOL = 16  # units of the component type's epsilon, times the scale
NAN_SIGN_FREE = ("maximum", "minimum", "clamp")


def rule_of(op: str, tname: str, tag: str):
    if tag == "exact":
        return "exact" if op in NAN_SIGN_FREE else "bits"
    if tag == "trans":
        return {"ulp": ULPS.get((op, tname), ULPS_DEFAULT)}
    eps = float(np.finfo(np.float32 if tname == "c64" else np.float64).eps)
    return {"rtol": CPLX_TOL * eps, "atol": 0.0}


# ---- XLA:CPU

def xla_runner():
    def run(text, args):
        return runner.run_hlo(text, args)[1][0]
    return run


JAX_UNARY = {"acos": "acos", "acosh": "acosh", "asin": "asin", "asinh": "asinh", "atan": "atan",
             "atanh": "atanh", "cosh": "cosh", "sinh": "sinh"}


def jax_fallback(cid: str, args):
    """Ops this XLA's HLO->StableHLO path refuses: XLA:CPU's result for the same op through JAX
    (lax.asin etc.), or the exact integer result for mulhi (which JAX does not expose)."""
    op = cid.split(".")[0]
    if op in JAX_UNARY:
        from jax import lax
        return runner.run_jax(getattr(lax, JAX_UNARY[op]), [args[0]], keep_unused=False)[2][0]
    if op == "mulhi":
        a, b = args
        t = PRIMITIVE_TYPES[cid.split(".")[1]]
        w = t.bits
        out = []
        for x, y in zip(a.astype(object).tolist() if t.bits >= 8 else [int(v) for v in a.astype(np.int64)],
                        b.astype(object).tolist() if t.bits >= 8 else [int(v) for v in b.astype(np.int64)]):
            hi = (int(x) * int(y)) >> w
            hi &= (1 << w) - 1
            if t.kind == "sint" and hi >> (w - 1):
                hi -= 1 << w
            out.append(hi)
        return np.array(out, dtype=np.int64 if t.kind == "sint" else np.uint64).astype(t.dtype)
    raise KeyError(op)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", default="", help="regex on case ids")
    a = ap.parse_args()
    run = xla_runner()
    n, failed = 0, []
    t0 = time.time()
    for cid, text, args, tag in cases():
        if a.only and not re.search(a.only, cid):
            continue
        op, tname = cid.split(".")[0], cid.split(".")[-1]
        source = "hand-written HLO"
        try:
            out = run(text, args)
        except Exception as e:  # noqa: BLE001 - XLA refuses some type/op pairs
            try:
                out = jax_fallback(cid, args)
                source = (f"hand-written HLO; values: jax.lax.{op} on XLA:CPU (XLA's HLO->StableHLO path refuses "
                          "the opcode)" if op != "mulhi" else
                          "hand-written HLO; values: mulhi's exact integer definition (XLA's HLO->StableHLO path "
                          "refuses it)")
                if cid.startswith("mulhi"):
                    tag = "exact"
            except Exception:  # noqa: BLE001
                failed.append((cid, str(e).splitlines()[0][:150]))
                continue
        write_case(FAMILY, cid, {"before": text}, args, [out], source=source, compare=rule_of(op, tname, tag),
                   extra={"check": "elementwise", "tag": tag})
        n += 1
    print(f"{n} cases written to tests/golden/{FAMILY}/ in {time.time() - t0:.0f}s; {len(failed)} refused by XLA")
    for cid, msg in failed:
        print(f"  refused {cid}: {msg}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
