"""DEV-ONLY: expected values for scaled-dot (tests/golden/scaled_dot/; tests/test_ops_scaled_dot.py).

jaxlib 0.10.2's XLA:CPU cannot run scaled-dot (its StableHLO round trip has no such op), so each case
runs, on XLA:CPU, the module XLA's own ScaledDotRewriter (xla/backends/gpu/transforms/
scaled_dot_rewriter.cc) turns it into: each operand and its scale converted to their common type
(GetTargetType), the scale broadcast over blocks (broadcast + reshape) or as a scalar, a multiply;
both operands converted to one type; a dot in GetTargetType(that type, the result type); a convert
to the result type.  The test runs the scaled-dot form through hlo_interp.

Output: one case directory per case, tests/golden/scaled_dot/scaled_dot_<n>/ (tools/oracle/writer.py):
before.hlo is the scaled-dot module, case.json's `ref` the decomposition XLA:CPU ran.
Run: python3 tools/make_scaled_dot_vectors.py
"""
from __future__ import annotations

import os
import sys
from pathlib import Path

os.environ.setdefault("JAX_PLATFORMS", "cpu")
sys.path.insert(0, str(Path(__file__).resolve().parent))

import ml_dtypes
import numpy as np
from oracle.runner import run_hlo
from oracle.writer import write_case

FAMILY = "scaled_dot"  # tests/golden/scaled_dot/
SOURCE = ("hand-written HLO; XLA:CPU ran the equivalent text in 'ref' (scaled-dot decomposed: jaxlib 0.10.2's "
          "StableHLO round trip has no scaled-dot)")
RNG = np.random.default_rng(11)
T = {"f8e4m3fn": (ml_dtypes.float8_e4m3fn, 8), "f8e5m2": (ml_dtypes.float8_e5m2, 8),
     "f8e8m0fnu": (ml_dtypes.float8_e8m0fnu, 8), "f4e2m1fn": (ml_dtypes.float4_e2m1fn, 4),
     "bf16": (ml_dtypes.bfloat16, 16), "f16": (np.float16, 16), "f32": (np.float32, 32), "f64": (np.float64, 64)}


def target(t1, t2):
    b1, b2 = T[t1][1], T[t2][1]
    if b1 < 16 and b2 < 16:
        return "bf16"
    if t1 == t2:
        return t1
    if b1 == b2:
        return "f32"
    return t1 if b1 > b2 else t2


def shp(t, dims):
    return f"{t}[{','.join(map(str, dims))}]"


def dequant(lines, name, x, xt, xs, s, st, ss):
    tt = target(xt, st)
    xc, sc = name, f"{name}_s"
    if xt != tt:
        lines.append(f"  {name}_c = {shp(tt, xs)} convert({xc})")
        xc = f"{name}_c"
    if st != tt:
        lines.append(f"  {name}_sc = {shp(tt, ss)} convert({sc})")
        sc = f"{name}_sc"
    if not ss:
        lines.append(f"  {name}_b = {shp(tt, xs)} broadcast({sc}), dimensions={{}}")
    else:
        dims, bdims, k = [], [], 0
        for n, m in zip(xs, ss):
            bdims.append(k)
            dims.append(m)
            k += 1
            if n != m:
                dims.append(n // m)
                k += 1
        lines.append(f"  {name}_bb = {shp(tt, dims)} broadcast({sc}), dimensions={{{','.join(map(str, bdims))}}}")
        lines.append(f"  {name}_b = {shp(tt, xs)} reshape({name}_bb)")
    lines.append(f"  {name}_q = {shp(tt, xs)} multiply({xc}, {name}_b)")
    return f"{name}_q", tt


def case(lt, rt, lst, rst, ls, rs, lss, rss, dn, out_t, out_dims):
    dn_text = ", ".join(f"{k}={{{','.join(map(str, v))}}}" for k, v in dn.items() if v)
    scaled = (f"HloModule scaled_dot\n\nENTRY main {{\n  a = {shp(lt, ls)} parameter(0)\n  b = {shp(rt, rs)} parameter(1)\n"
              f"  a_s = {shp(lst, lss)} parameter(2)\n  b_s = {shp(rst, rss)} parameter(3)\n"
              f"  ROOT d = {shp(out_t, out_dims)} scaled-dot(a, b, a_s, b_s), {dn_text}\n}}\n")
    lines = []
    x, xt = dequant(lines, "a", None, lt, ls, None, lst, lss)
    y, yt = dequant(lines, "b", None, rt, rs, None, rst, rss)
    ct = target(xt, yt)
    for v, vt, vs, nm in ((x, xt, ls, "xa"), (y, yt, rs, "xb")):
        if vt != ct:
            lines.append(f"  {nm} = {shp(ct, vs)} convert({v})")
        else:
            lines.append(f"  {nm} = {shp(ct, vs)} copy({v})")
    dt = target(ct, out_t)
    lines.append(f"  dd = {shp(dt, out_dims)} dot(xa, xb), {dn_text}")
    lines.append(f"  ROOT r = {shp(out_t, out_dims)} convert(dd)" if dt != out_t else
                 f"  ROOT r = {shp(out_t, out_dims)} copy(dd)")
    params = (f"  a = {shp(lt, ls)} parameter(0)\n  b = {shp(rt, rs)} parameter(1)\n"
              f"  a_s = {shp(lst, lss)} parameter(2)\n  b_s = {shp(rst, rss)} parameter(3)\n")
    decomposed = "HloModule scaled_dot_decomposed\n\nENTRY main {\n" + params + "\n".join(lines) + "\n}\n"

    def vals(t, dims, scale=False):
        if scale:
            return (2.0 ** RNG.integers(-3, 4, dims)).astype(np.float32).astype(T[t][0]) if t == "f8e8m0fnu" \
                else (RNG.integers(1, 5, dims) * 0.5).astype(np.float32).astype(T[t][0])
        return RNG.standard_normal(dims).astype(np.float32).astype(T[t][0])
    args = [vals(lt, ls), vals(rt, rs), vals(lst, lss, True), vals(rst, rss, True)]
    _, (out,) = run_hlo(decomposed, args)
    return scaled, decomposed, args, out


def main():
    C = [
        # MX: f8 operands, e8m0 block scales of 32 along the contracting dimension
        ("f8e4m3fn", "f8e4m3fn", "f8e8m0fnu", "f8e8m0fnu", (4, 64), (3, 64), (4, 2), (3, 2),
         {"lhs_contracting_dims": (1,), "rhs_contracting_dims": (1,)}, "f32", (4, 3)),
        ("f8e5m2", "f8e4m3fn", "f8e8m0fnu", "f8e8m0fnu", (2, 5, 32), (2, 32, 6), (2, 5, 1), (2, 1, 6),
         {"lhs_batch_dims": (0,), "rhs_batch_dims": (0,), "lhs_contracting_dims": (2,), "rhs_contracting_dims": (1,)},
         "bf16", (2, 5, 6)),
        ("f4e2m1fn", "f4e2m1fn", "f8e4m3fn", "f8e4m3fn", (3, 32), (32, 2), (3, 2), (2, 2),
         {"lhs_contracting_dims": (1,), "rhs_contracting_dims": (0,)}, "f32", (3, 2)),
        # scalar scales (multiply every element); bf16 with f32 scales -> f32 arithmetic
        ("bf16", "bf16", "f32", "f32", (3, 8), (8, 4), (), (), {"lhs_contracting_dims": (1,), "rhs_contracting_dims": (0,)},
         "bf16", (3, 4)),
        # f16 operand, bf16 scales (equal widths -> f32); f64 result
        ("f16", "f8e4m3fn", "bf16", "f8e8m0fnu", (2, 16), (16, 3), (1, 4), (8, 1),
         {"lhs_contracting_dims": (1,), "rhs_contracting_dims": (0,)}, "f64", (2, 3)),
    ]
    for n, c in enumerate(C):
        scaled, decomposed, args, out = case(*c)
        write_case(FAMILY, f"scaled_dot_{n}", {"before": scaled}, args, [out], source=SOURCE,
                   compare={"rtol": 1e-6, "atol": 1e-6}, extra={"ref": decomposed})
    print(f"{len(C)} cases written to tests/golden/{FAMILY}/")

if __name__ == "__main__":
    main()
