"""DEV-ONLY: expected values for `topk(x), k=K, to_apply=cmp` (tests/golden/topk/; tests/test_ops_topk.py).

XLA:CPU (jaxlib 0.10.2) does not parse topk with a comparator, so each case runs the same computation
as XLA's TopK decomposition writes it, `sort((x, iota)), to_apply=cmp` then a slice of the first K
along the last dimension, on XLA:CPU; the test runs the `topk` form through hlo_interp.  Covered: the
recognized comparators (GT, LT, TOTALORDER, integers, pred; |a| > |b|, an elementwise key of each
parameter), one the recognizer does not know (a - b > 0: the general path) and 4-parameter
comparators (value, index pairs), in every element type a comparator takes.

Output: one case directory per case, tests/golden/topk/<name>/ (tools/oracle/writer.py): before.hlo is the
topk module, case.json's `ref` the decomposed module XLA:CPU ran.
Run: python3 tools/make_topk_comparator_vectors.py
"""
from __future__ import annotations

import os
import sys
from pathlib import Path

os.environ.setdefault("JAX_PLATFORMS", "cpu")
sys.path.insert(0, str(Path(__file__).resolve().parent))

import jax
import ml_dtypes
import numpy as np

jax.config.update("jax_enable_x64", True)
from oracle.runner import run_hlo
from oracle.writer import write_case

FAMILY = "topk"  # tests/golden/topk/
SOURCE = ("hand-written HLO; XLA:CPU ran the equivalent text in 'ref' (its decomposition: a stable sort of "
          "(x, iota) by the comparator, then the first k)")
RNG = np.random.default_rng(7)

TYPES = {"f32": np.float32, "f64": np.float64, "f16": np.float16, "bf16": ml_dtypes.bfloat16,
         "s8": np.int8, "s32": np.int32, "s64": np.int64, "u8": np.uint8, "u32": np.uint32, "pred": np.bool_,
         "f8e4m3fn": ml_dtypes.float8_e4m3fn, "f8e5m2": ml_dtypes.float8_e5m2, "s16": np.int16, "u16": np.uint16,
         "u64": np.uint64, "s4": ml_dtypes.int4, "u4": ml_dtypes.uint4}


def values(t, shape):
    dt = np.dtype(TYPES[t])
    if t == "pred":
        return RNG.integers(0, 2, shape).astype(bool)
    if dt.kind in "iu" or t in ("s4", "u4"):
        lo, hi = (0, 6) if t.startswith("u") else (-4, 4)
        return RNG.integers(lo, hi, shape).astype(dt)        # many ties: lower index first
    x = np.round(RNG.standard_normal(shape) * 2) / 2          # ties too
    x = x.astype(np.float32)
    flat = x.reshape(-1)
    if flat.size > 6:
        flat[1], flat[4] = -0.0, 0.0
        if t not in ("f8e4m3fn",):
            flat[3] = np.inf
    return x.astype(dt)


def comparator(kind, t, four):
    p = [f"a = {t}[] parameter(0)", f"b = {t}[] parameter(1)"]
    if four:
        p += ["ia = s32[] parameter(2)", "ib = s32[] parameter(3)"]
    body = "\n  ".join(p)
    if kind == "diff":  # a - b > 0: mixes both parameters, so not a recognized form (the general path)
        return f"""cmp {{
  {body}
  d = {t}[] subtract(a, b)
  z = {t}[] constant(0)
  ROOT c = pred[] compare(d, z), direction=GT
}}
"""
    if kind == "abs":  # |a| > |b|: an elementwise key of each parameter (recognized: one argsort)
        return f"""cmp {{
  {body}
  aa = {t}[] abs(a)
  ab = {t}[] abs(b)
  ROOT c = pred[] compare(aa, ab), direction=GT
}}
"""
    if kind == "index_tiebreak":  # a > b, or equal and the higher index first
        return f"""cmp {{
  {body}
  gt = pred[] compare(a, b), direction=GT
  eq = pred[] compare(a, b), direction=EQ
  hi = pred[] compare(ia, ib), direction=GT
  both = pred[] and(eq, hi)
  ROOT c = pred[] or(gt, both)
}}
"""
    d, ty = kind.split("_") if "_" in kind else (kind, None)
    extra = f", type={ty}" if ty else ""
    return f"""cmp {{
  {body}
  ROOT c = pred[] compare(a, b), direction={d}{extra}
}}
"""


def modules(t, shape, k, kind, four):
    sh = ",".join(map(str, shape))
    osh = ",".join(map(str, shape[:-1] + (k,)))
    cmp = comparator(kind, t, four)
    topk = f"""HloModule topk_cmp

{cmp}
ENTRY main {{
  x = {t}[{sh}] parameter(0)
  ROOT r = ({t}[{osh}], s32[{osh}]) topk(x), k={k}, to_apply=cmp
}}
"""
    if not four:  # the sort over (values, iota) needs a 4-parameter comparator: the same on the values
        lines = cmp.splitlines()
        lines.insert(3, "  ia = s32[] parameter(2)\n  ib = s32[] parameter(3)")
        cmp_sort = "\n".join(lines) + "\n"
    else:
        cmp_sort = cmp
    nd = len(shape)
    starts = ",".join([f"[0:{n}]" for n in shape[:-1]] + [f"[0:{k}]"])
    sort = f"""HloModule topk_decomposed

{cmp_sort}
ENTRY main {{
  x = {t}[{sh}] parameter(0)
  i = s32[{sh}] iota(), iota_dimension={nd - 1}
  s = ({t}[{sh}], s32[{sh}]) sort(x, i), dimensions={{{nd - 1}}}, is_stable=true, to_apply=cmp
  v = {t}[{sh}] get-tuple-element(s), index=0
  j = s32[{sh}] get-tuple-element(s), index=1
  sv = {t}[{osh}] slice(v), slice={{{starts}}}
  sj = s32[{osh}] slice(j), slice={{{starts}}}
  ROOT r = ({t}[{osh}], s32[{osh}]) tuple(sv, sj)
}}
"""
    return topk, sort


def main():
    plan = []
    for t in TYPES:
        kinds = ["GT", "LT"]
        if t in ("f32", "f64", "bf16", "f16", "f8e4m3fn", "f8e5m2"):
            kinds += ["GT_TOTALORDER", "LT_TOTALORDER"]
        if t not in ("pred", "u8", "u16", "u32", "u64", "u4"):
            kinds += ["abs", "diff"]
        for kind in kinds:
            plan.append((t, kind, False))
        plan.append((t, "GT", True))
    plan.append(("s32", "index_tiebreak", True))
    plan.append(("f32", "index_tiebreak", True))
    # long rows, small k: the general path's tournament (k <= 64, dimension > 16 k)
    big = {len(plan) + i: p for i, p in enumerate([("f32", "diff", False), ("s32", "diff", False),
                                                   ("bf16", "diff", False), ("f32", "index_tiebreak", True),
                                                   ("s8", "diff", True)])}
    plan += list(big.values())
    for n, (t, kind, four) in enumerate(plan):
        shape = (3, 9) if n % 2 else (11,)
        k = 4 if n % 3 else shape[-1]
        if n in big:
            shape, k = (2, 333), 7
        x = values(t, shape)
        topk, sort = modules(t, shape, k, kind, four)
        _, (v, i) = run_hlo(sort, [x])
        name = f"topk_{n}_{t}_{kind}" + ("_4params" if four else "")
        write_case(FAMILY, name, {"before": topk}, [x], [v, i], source=SOURCE, compare="bits",
                   extra={"ref": sort, "element_type": t, "comparator": kind, "four_params": four, "k": k})
    print(f"{len(plan)} cases written to tests/golden/{FAMILY}/")

if __name__ == "__main__":
    main()
