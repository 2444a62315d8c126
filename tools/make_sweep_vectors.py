#!/usr/bin/env python3
"""Regenerate tests/golden/sweep/: the op x dtype sweep -- every opcode below over every element
type XLA:CPU accepts for it, on edge values (signed zeros, infinities, NaNs with payloads, subnormals,
the type's extremes, integer minima and maxima, cancellation-prone complex values), with XLA:CPU's
results as the expected values.

Dev-only (needs jax/jaxlib); the tests only read the committed files.  Each case is one
hand-written module `ENTRY e { p = T[n] parameter(0) ... ROOT r = op(...) }`, parsed by XLA's parser,
converted to StableHLO, compiled and run by the XLA:CPU client JAX uses (tools/oracle/runner.py).  A type
XLA:CPU refuses for an op is not a case (the summary lists the refusals).

Each case is one case directory (tools/oracle/writer.py; tests/golden/README.md); `refused.json`
beside them: (op, dtype) -> XLA's message.

    python3 tools/make_sweep_vectors.py [--only REGEX]
"""
from __future__ import annotations

import argparse
import json
import os
import re
import sys
from pathlib import Path

os.environ.setdefault("JAX_PLATFORMS", "cpu")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import ml_dtypes  # noqa: E402
import numpy as np  # noqa: E402

try:
    import jax  # noqa: E402
except ImportError:  # pragma: no cover
    sys.exit("make_sweep_vectors.py needs JAX (dev-only tool)")

jax.config.update("jax_enable_x64", True)
sys.path.insert(0, str(Path(__file__).resolve().parent))
from oracle.runner import run_hlo  # noqa: E402
from oracle.writer import GOLDEN, write_case  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
FAMILY = "sweep"
OUT = GOLDEN / FAMILY
rng = np.random.default_rng(2013)

BF16 = np.dtype(ml_dtypes.bfloat16)
TYPES = {"pred": np.dtype(bool), "s8": np.dtype(np.int8), "s16": np.dtype(np.int16), "s32": np.dtype(np.int32),
         "s64": np.dtype(np.int64), "u8": np.dtype(np.uint8), "u16": np.dtype(np.uint16),
         "u32": np.dtype(np.uint32), "u64": np.dtype(np.uint64), "bf16": BF16, "f16": np.dtype(np.float16),
         "f32": np.dtype(np.float32), "f64": np.dtype(np.float64), "c64": np.dtype(np.complex64),
         "c128": np.dtype(np.complex128)}
FLOATS = ("bf16", "f16", "f32", "f64")
COMPLEX = ("c64", "c128")
INTS = ("s8", "s16", "s32", "s64", "u8", "u16", "u32", "u64")
_UINT = {2: np.uint16, 4: np.uint32, 8: np.uint64}
_NAN_PAYLOADS = {"bf16": (0x7FC1, 0xFFA0), "f16": (0x7E01, 0xFD00), "f32": (0x7FC00001, 0xFFC12345),
                 "f64": (0x7FF8000000000001, 0xFFF8123456789ABC)}


def float_edges(t):
    dt = TYPES[t]
    fi = ml_dtypes.finfo(dt)
    vals = [0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 1.5, 2.5, -2.5, 3.0, 0.1, 7.25, 1e-3, 100.0, -100.0,
            np.inf, -np.inf, np.nan, float(fi.max), float(fi.min), float(fi.tiny), -float(fi.tiny),
            float(fi.smallest_subnormal), -float(fi.smallest_subnormal), float(fi.tiny) * 0.5, 0.75, -3.5]
    with np.errstate(all="ignore"):
        a = np.array(vals, np.float64).astype(dt)
    nans = np.array(_NAN_PAYLOADS[t], _UINT[dt.itemsize]).view(dt)
    return np.concatenate([a, nans])


def int_edges(t):
    dt = TYPES[t]
    ii = np.iinfo(dt)
    vals = [0, 1, 2, 3, 7, 100, ii.max, ii.max - 1, ii.min, ii.min + 1, ii.max // 2, 31, 32, 33, 63, 64]
    if ii.min < 0:
        vals += [-1, -2, -3, -100, -7, ii.min // 2]
    return np.array(sorted(set(int(v) for v in vals)), dtype=object).astype(dt)


def complex_edges(t):
    ft = "f32" if t == "c64" else "f64"
    re = float_edges(ft)[[0, 1, 2, 3, 4, 7, 13, 15, 16, 17, 18, 20, 22]]
    im = float_edges(ft)[[0, 1, 2, 3, 5, 8, 12, 15, 16, 17, 19, 21, 22]]
    out = (re[:, None].astype(TYPES[t]) + 1j * im[None, :].astype(TYPES[t])).reshape(-1)
    # cancellation-prone values: |x| near 1 at angles whose products cancel
    x = rng.standard_normal(24) + 1j * rng.standard_normal(24)
    return np.concatenate([out, x.astype(TYPES[t]), (x.imag + 1j * x.real).astype(TYPES[t])])


def edges(t):
    if t == "pred":
        return np.array([False, True])
    if t in FLOATS:
        return float_edges(t)
    if t in INTS:
        return int_edges(t)
    return complex_edges(t)


def pairs(t):
    e = edges(t)
    if len(e) > 40:  # complex: a sample of all pairs, plus each value with itself and its swap
        i = rng.integers(0, len(e), 1200)
        j = rng.integers(0, len(e), 1200)
        x, y = e[i], e[j]
        x = np.concatenate([x, e, e[:24]])
        y = np.concatenate([y, e, np.conj(e[:24])])
        return x, y
    return np.repeat(e, len(e)), np.tile(e, len(e))


UNARY = ["abs", "negate", "sign", "floor", "ceil", "round-nearest-afz", "round-nearest-even", "sqrt", "rsqrt",
         "cbrt", "exponential", "exponential-minus-one", "log", "log-plus-one", "logistic", "tanh", "tan",
         "sine", "cosine", "erf", "is-finite", "not", "popcnt", "count-leading-zeros", "real", "imag"]
BINARY = ["add", "subtract", "multiply", "divide", "remainder", "maximum", "minimum", "power", "atan2", "and",
          "or", "xor", "shift-left", "shift-right-arithmetic", "shift-right-logical"]
COMPARE = ["EQ", "NE", "LT", "LE", "GT", "GE"]
# transcendental (not correctly rounded in XLA): compared with a tolerance
APPROX = {"rsqrt", "cbrt", "exponential", "exponential-minus-one", "log", "log-plus-one", "logistic", "tanh",
          "tan", "sine", "cosine", "erf", "power", "atan2"}
TOL = {"bf16": {"rtol": 8e-3, "atol": 1e-30}, "f16": {"rtol": 1e-3, "atol": 1e-7},
       "f32": {"rtol": 2e-6, "atol": 1e-30}, "f64": {"rtol": 1e-14, "atol": 1e-300},
       "c64": {"rtol": 2e-6, "atol": 1e-6}, "c128": {"rtol": 1e-14, "atol": 1e-14}}

# case id -> why we differ from XLA:CPU there (each measured on the sweep; see the summary in
# tests/golden/README.md): written into the case's case.json as `known`, which makes it a strict xfail
_ORDER = ("XLA's HLO emitter has no ordering of complex numbers (EmitComplexBinaryOp: only EQ/NE); what "
          "XLA:CPU returns through StableHLO is not one consistent order (LT/GT nearly lexicographic, "
          "LE/GE nearly real parts only, NaN/inf cases neither): refused here")
_NAN_SORT = ("a LT comparator with NaNs is not a strict weak order: where NaNs and -0/+0 end up is an "
             "artifact of XLA:CPU's sort algorithm; we place NaNs as the total order does")
_CPLX_EDGE = ("inf/NaN/subnormal parts of a complex {op}: XLA's formula (ElementalIrEmitter) differs from "
              "NumPy's C99 handling on {n} of the 217 edge values; finite values agree within tolerance")
_SUBNORMAL_IN = ("XLA:CPU's {op} reads a subnormal input unflushed (its own implementation works on the bits) "
                 "while every other op sees it as zero (DAZ); we flush it like the rest")
KNOWN: dict[str, str] = {
    **{f"compare_{d}_{t}": _ORDER for d in ("LT", "LE", "GT", "GE") for t in ("c64", "c128")},
    **{f"{op}_{t}": _ORDER for op in ("maximum", "minimum") for t in ("c64", "c128")},
    **{f"atan2_{t}": "complex atan2 (XLA: -i log((x+iy)/sqrt(x^2+y^2)) through its complex sqrt/log/divide) "
                     "is not implemented: refused here" for t in ("c64", "c128")},
    **{f"sort_{t}": _NAN_SORT for t in ("bf16", "f16", "f32", "f64")},
    **{f"{op}_{t}": _CPLX_EDGE.format(op=op, n="some")
       for op in ("sqrt", "rsqrt", "exponential", "exponential-minus-one", "log", "log-plus-one", "logistic")
       for t in ("c64", "c128")},
    "cbrt_f32": "XLA:CPU's f32 cbrt returns -5.6e-16 for subnormal inputs (and 0); NumPy's gives +-0",
    "cbrt_bf16": "XLA:CPU's cbrt (in f32) returns -5.6e-16 for subnormal inputs; NumPy's gives +-0",
    "power_f32": _SUBNORMAL_IN.format(op="power"),
    "power_f64": _SUBNORMAL_IN.format(op="power") + "; and 3 results 1 ulp off (libm pow vs NumPy's)",
    "power_bf16": _SUBNORMAL_IN.format(op="power") + "; and pow(1, NaN) is NaN in XLA's bf16 power",
    "power_c64": "x^100 of a c64 value: XLA's f32 steps and ours (f64-rounded parts) differ by 1.7e-6 relative",
    "power_c128": "x^y of c128 edge values (inf/NaN/huge parts): XLA's cutoffs and libm differ from ours",
    "dot_edges_f64": ("OpenBLAS's dgemm fuses multiply-adds: inf + max*(-3.5) stays inf (the exact product is "
                      "finite), where XLA:CPU's dot rounds the product to -inf first and gives NaN"),
}



CASES = []


def case(cid, op, t, text, args, compare="exact"):
    CASES.append({"id": cid, "op": op, "dtype": t, "text": text, "args": args, "compare": compare})


def comp_type(t):
    return {"c64": "f32", "c128": "f64"}.get(t, t)


for t in TYPES:
    e = edges(t)
    n = len(e)
    for op in UNARY:
        rt = {"is-finite": "pred", "real": comp_type(t), "imag": comp_type(t)}.get(op, t)
        if op == "abs" and t in COMPLEX:
            rt = comp_type(t)
        cmp = TOL[t] if (op in APPROX or (t in COMPLEX and op in ("abs", "sqrt", "sign"))) and t in TOL else "exact"
        case(f"{op}_{t}", op, t, f"""HloModule m
ENTRY e {{ p = {t}[{n}] parameter(0)  ROOT r = {rt}[{n}] {op}(p) }}""", [e], cmp)
    x, y = pairs(t)
    n2 = len(x)
    for op in BINARY:
        cmp = TOL[t] if op in APPROX and t in TOL else "exact"
        case(f"{op}_{t}", op, t, f"""HloModule m
ENTRY e {{ p = {t}[{n2}] parameter(0)  q = {t}[{n2}] parameter(1)  ROOT r = {t}[{n2}] {op}(p, q) }}""",
             [x, y], cmp)
    for d in COMPARE:
        case(f"compare_{d}_{t}", "compare", t, f"""HloModule m
ENTRY e {{ p = {t}[{n2}] parameter(0)  q = {t}[{n2}] parameter(1)
  ROOT r = pred[{n2}] compare(p, q), direction={d} }}""", [x, y])
        if t in FLOATS:
            case(f"compare_{d}_totalorder_{t}", "compare", t, f"""HloModule m
ENTRY e {{ p = {t}[{n2}] parameter(0)  q = {t}[{n2}] parameter(1)
  ROOT r = pred[{n2}] compare(p, q), direction={d}, type=TOTALORDER }}""", [x, y])
    if t in FLOATS or t in COMPLEX:
        ft = comp_type(t)
        if t in FLOATS and t in ("f32", "f64"):
            case(f"complex_{t}", "complex", t, f"""HloModule m
ENTRY e {{ p = {t}[{n2}] parameter(0)  q = {t}[{n2}] parameter(1)
  ROOT r = {"c64" if t == "f32" else "c128"}[{n2}] complex(p, q) }}""", [x, y])
    sel = rng.integers(0, 2, n2).astype(bool)
    case(f"select_{t}", "select", t, f"""HloModule m
ENTRY e {{ s = pred[{n2}] parameter(0)  p = {t}[{n2}] parameter(1)  q = {t}[{n2}] parameter(2)
  ROOT r = {t}[{n2}] select(s, p, q) }}""", [sel, x, y])
    if t not in COMPLEX:
        lo = np.minimum(x, y) if t != "pred" else (x & y)
        hi = np.maximum(x, y) if t != "pred" else (x | y)
        z = e[rng.integers(0, n, n2)]
        case(f"clamp_{t}", "clamp", t, f"""HloModule m
ENTRY e {{ a = {t}[{n2}] parameter(0)  x = {t}[{n2}] parameter(1)  b = {t}[{n2}] parameter(2)
  ROOT r = {t}[{n2}] clamp(a, x, b) }}""", [lo, z, hi])
    for u in TYPES:
        case(f"convert_{t}_to_{u}", "convert", t, f"""HloModule m
ENTRY e {{ p = {t}[{n}] parameter(0)  ROOT r = {u}[{n}] convert(p) }}""", [e])
        if u != t and TYPES[u].itemsize == TYPES[t].itemsize and "pred" not in (t, u) \
                and (t in COMPLEX) == (u in COMPLEX):
            case(f"bitcast-convert_{t}_to_{u}", "bitcast-convert", t, f"""HloModule m
ENTRY e {{ p = {t}[{n}] parameter(0)  ROOT r = {u}[{n}] bitcast-convert(p) }}""", [e])
    # reductions over one dimension of [k, m] (m > 32 for the tree) and of all of a small array
    m = 40
    xr = e[rng.integers(0, n, 3 * m)].reshape(3, m)
    xs = e[rng.integers(0, n, 12)].reshape(3, 4)
    for rop in ("add", "multiply", "maximum", "minimum", "and", "or"):
        init = {"add": "0", "multiply": "1", "maximum": "-inf" if t in FLOATS else None,
                "minimum": "inf" if t in FLOATS else None, "and": None, "or": "0"}[rop]
        if t in COMPLEX:
            init = {"add": "(0,0)", "multiply": "(1,0)"}.get(rop)
        if t == "pred":
            init = {"add": "false", "multiply": "true", "maximum": "false", "minimum": "true", "and": "true",
                    "or": "false"}[rop]
        if t in INTS and init is None:
            ii = np.iinfo(TYPES[t])
            init = {"maximum": str(ii.min), "minimum": str(ii.max), "and": str(-1 if ii.min < 0 else ii.max)}[rop]
        if init is None:
            continue
        cmp = "exact"
        if rop in ("add", "multiply") and t in TOL:
            cmp = TOL[t]
        for shp, xv, dims, rs in (("3x40", xr, "1", "3"), ("3x4", xs, "0,1", "")):
            sh = "[3,40]" if shp == "3x40" else "[3,4]"
            case(f"reduce_{rop}_{t}_{shp}", "reduce", t, f"""HloModule m
r {{ a = {t}[] parameter(0)  b = {t}[] parameter(1)  ROOT c = {t}[] {rop}(a, b) }}
ENTRY e {{ p = {t}{sh} parameter(0)  i = {t}[] constant({init})
  ROOT o = {t}[{rs}] reduce(p, i), dimensions={{{dims}}}, to_apply=r }}""", [xv], cmp)
    # dot of small values (exact in every type but low floats' rounding, which XLA does once)
    if t != "pred":
        small = {"f32": np.float32, "f64": np.float64}.get(t)
        a = rng.integers(-3, 4, (4, 8))
        b = rng.integers(-3, 4, (8, 3))
        if t.startswith("u"):
            a, b = np.abs(a), np.abs(b)
        if t in COMPLEX:
            av = (a + 1j * rng.integers(-3, 4, (4, 8))).astype(TYPES[t])
            bv = (b - 1j * rng.integers(-3, 4, (8, 3))).astype(TYPES[t])
        else:
            av, bv = a.astype(TYPES[t]), b.astype(TYPES[t])
        case(f"dot_{t}", "dot", t, f"""HloModule m
ENTRY e {{ p = {t}[4,8] parameter(0)  q = {t}[8,3] parameter(1)
  ROOT r = {t}[4,3] dot(p, q), lhs_contracting_dims={{1}}, rhs_contracting_dims={{0}} }}""", [av, bv])
        if t in FLOATS:  # edge values through a dot: inf * 0, NaN, -0 sums
            ev = e[rng.integers(0, n, (4, 8))]
            fv = e[rng.integers(0, n, (8, 3))]
            case(f"dot_edges_{t}", "dot", t, f"""HloModule m
ENTRY e {{ p = {t}[4,8] parameter(0)  q = {t}[8,3] parameter(1)
  ROOT r = {t}[4,3] dot(p, q), lhs_contracting_dims={{1}}, rhs_contracting_dims={{0}} }}""", [ev, fv],
                 TOL[t])
    # sort with the plain LT comparator (and TOTALORDER for floats), stable
    if t not in COMPLEX:
        for ctype in (("",) if t not in FLOATS else ("", ", type=TOTALORDER")):
            xs2 = e[rng.integers(0, n, (3, 50))]
            case(f"sort_{t}{ctype.replace(', type=', '_').lower()}", "sort", t, f"""HloModule m
lt {{ a = {t}[] parameter(0)  b = {t}[] parameter(1)  ROOT c = pred[] compare(a, b), direction=LT{ctype} }}
ENTRY e {{ p = {t}[3,50] parameter(0)
  ROOT s = {t}[3,50] sort(p), dimensions={{1}}, is_stable=true, to_apply=lt }}""", [xs2])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--only")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    a = ap.parse_args()
    OUT.mkdir(parents=True, exist_ok=True)
    cases, refused = [], {}
    # XLA:CPU aborts the whole process on some (op, type) pairs: each case runs once in a worker process
    # that appends to a cache; a crash marks the case and the next worker resumes after it.
    import pickle
    import subprocess
    cache = OUT / ".cache.pkl"
    if not a.worker:
        if cache.exists():
            cache.unlink()
        while True:
            r = subprocess.run([sys.executable, __file__, "--worker"] + (["--only", a.only] if a.only else []),
                               capture_output=True, text=True)
            if r.returncode == 0:
                break
            done = pickle.loads(cache.read_bytes()) if cache.exists() else {}
            last = [ln.split(" ", 1)[1] for ln in r.stdout.splitlines() if ln.startswith("run ")][-1]
            done[last] = ("crash", "XLA:CPU aborts the process (a CHECK failure) instead of refusing")
            cache.write_bytes(pickle.dumps(done))
            print("XLA:CPU crashed on", last)
        results = pickle.loads(cache.read_bytes())
        cache.unlink()
        for cs in CASES:
            if cs["id"] not in results:
                continue
            kind, val = results[cs["id"]]
            if kind != "ok":
                refused[cs["id"]] = val
                continue
            extra = {"op": cs["op"], "dtype": cs["dtype"]}
            if cs["id"] in KNOWN:
                extra["known"] = {"before": KNOWN[cs["id"]]}
            write_case(FAMILY, cs["id"], {"before": cs["text"]}, [np.asarray(x) for x in cs["args"]], val,
                       source="hand-written HLO", compare=cs["compare"], extra=extra)
            cases.append(cs["id"])
        (OUT / "refused.json").write_text(json.dumps(refused, indent=0, sort_keys=True) + "\n")
        print(f"{len(cases)} cases, {len(refused)} (op, type) pairs XLA:CPU refuses -> {OUT}")
        return
    done = pickle.loads(cache.read_bytes()) if cache.exists() else {}
    for cs in CASES:
        if a.only and not re.search(a.only, cs["id"]):
            continue
        if cs["id"] in done:
            continue
        print("run", cs["id"], flush=True)
        try:
            _, outs = run_hlo(cs["text"], [np.asarray(x) for x in cs["args"]])
            done[cs["id"]] = ("ok", [np.asarray(o) for o in outs])
        except Exception as e:  # noqa: BLE001 - XLA:CPU refuses the op for this type: not a case
            done[cs["id"]] = ("refused", (str(e).strip().splitlines() or [""])[0][:200])
        if len(done) % 50 == 0:
            cache.write_bytes(pickle.dumps(done))
    cache.write_bytes(pickle.dumps(done))


if __name__ == "__main__":
    main()
