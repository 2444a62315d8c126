"""scatter-add and sort on 1e6 elements: hlo_interp's fast paths against the same NumPy kernel called
directly, and against hlo_interp's general path (the computation evaluated on vectors).

    python3 bench/scatter_sort.py [--rounds 5] [--n 1000000] [--general-rounds 1] [--out bench/out/scatter_sort.json]

Cases
  scatter_add   f32[100000] operand, 1e6 updates at random indices (~10 per target), to_apply=add.
                NumPy: np.add.at(copy, idx, upd).  General: the same scatter whose computation is
                `add` followed by a no-op (not recognized): rounds of vectorized calls.
  sort_f32      f32[1e6] sorted with XLA:CPU's post-optimization comparator (JAX's NaN/-0 canonicalization
                then the `s32[] bitcast(f32[])` integer total-order compare), is_stable=true.
                NumPy: np.argsort(x, kind="stable") + take (a stable sort of the values with the index
                permutation applied, which is what a stable sort of an array gives).
                General: the same comparator with a no-op (not recognized): the vectorized merge sort.
  argsort_f32   (f32[1e6], s32[1e6] iota) sort, i.e. jnp.argsort: NumPy np.argsort(kind="stable").
Figures are medians over the rounds; the ratio is hlo_interp / NumPy (target <= 1.5).
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import hlo_interp
from hlo_interp.evaluator import compile as hlo_compile
from xla_comparator import F32_KEY_LINES  # noqa: E402

SCATTER = """HloModule scatter_add
add {{ a = f32[] parameter(0)  b = f32[] parameter(1)  {body} }}
ENTRY e {{ x = f32[{m}] parameter(0)  i = s32[{n},1] parameter(1)  u = f32[{n}] parameter(2)
  ROOT s = f32[{m}] scatter(x, i, u), update_window_dims={{}}, inserted_window_dims={{0}},
    scatter_dims_to_operand_dims={{0}}, index_vector_dim=1, to_apply=add }}"""

# XLA:CPU's optimized comparator of jnp.sort / jnp.argsort on f32 (bench/xla_comparator.py)
CMP = """cmp {{
  p0 = f32[] parameter(0)  p1 = f32[] parameter(1) {extra_params}
  """ + F32_KEY_LINES.replace("{", "{{").replace("}", "}}") + """
  {root}
}}"""
ROOT_FAST = "ROOT lt = pred[] compare(k0, k1), direction=LT"
ROOT_GENERAL = "lt = pred[] compare(k0, k1), direction=LT  t = pred[] constant(true)  ROOT r = pred[] and(lt, t)"

SORT = """HloModule sort_f32
{cmp}
ENTRY e {{ x = f32[{n}] parameter(0)
  ROOT s = f32[{n}] sort(x), dimensions={{0}}, is_stable=true, to_apply=cmp }}"""
ARGSORT = """HloModule argsort_f32
{cmp}
ENTRY e {{ x = f32[{n}] parameter(0)  i = s32[{n}] iota(), iota_dimension=0
  s = (f32[{n}], s32[{n}]) sort(x, i), dimensions={{0}}, is_stable=true, to_apply=cmp
  ROOT r = s32[{n}] get-tuple-element(s), index=1 }}"""


def timed(fn, rounds):
    ts = []
    out = None
    for _ in range(rounds):
        t = time.perf_counter()
        out = fn()
        ts.append(time.perf_counter() - t)
    return statistics.median(ts), out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--general-rounds", type=int, default=1)
    ap.add_argument("--n", type=int, default=1_000_000)
    ap.add_argument("--out", default=str(ROOT / "bench" / "out" / "scatter_sort.json"))
    a = ap.parse_args()
    n, m = a.n, max(a.n // 10, 1)
    rng = np.random.default_rng(0)
    results = {}

    # scatter-add
    x = rng.standard_normal(m).astype(np.float32)
    idx = rng.integers(0, m, (n, 1)).astype(np.int32)
    upd = rng.standard_normal(n).astype(np.float32)
    fast = hlo_compile(hlo_interp.parse(SCATTER.format(m=m, n=n, body="ROOT r = f32[] add(a, b)")))
    gen = hlo_compile(hlo_interp.parse(SCATTER.format(
        m=m, n=n, body="c = f32[] add(a, b)  z = f32[] constant(-0)  ROOT r = f32[] add(c, z)")))

    def numpy_scatter():
        out = x.copy()
        np.add.at(out, idx[:, 0], upd)
        return out
    results["scatter_add"] = bench_case(lambda: fast(x, idx, upd)[0], numpy_scatter,
                                        lambda: gen(x, idx, upd)[0], a)

    # sort / argsort
    v = rng.standard_normal(n).astype(np.float32)
    v[rng.integers(0, n, 100)] = np.nan
    v[rng.integers(0, n, 100)] = -0.0
    cmp_fast, cmp_gen = CMP.format(extra_params="", root=ROOT_FAST), CMP.format(extra_params="", root=ROOT_GENERAL)
    sfast = hlo_compile(hlo_interp.parse(SORT.format(n=n, cmp=cmp_fast)))
    sgen = hlo_compile(hlo_interp.parse(SORT.format(n=n, cmp=cmp_gen)))

    def numpy_sort():
        return v[np.argsort(v, kind="stable")]
    results["sort_f32"] = bench_case(lambda: sfast(v)[0], numpy_sort, lambda: sgen(v)[0], a, nan_ok=True)
    ip = "p2 = s32[] parameter(2)  p3 = s32[] parameter(3)"
    afast = hlo_compile(hlo_interp.parse(ARGSORT.format(n=n, cmp=CMP.format(extra_params=ip, root=ROOT_FAST))))
    results["argsort_f32"] = bench_case(lambda: afast(v)[0], lambda: np.argsort(v, kind="stable").astype(np.int32),
                                        None, a)
    for k, r in results.items():
        print(f"{k:12s} hlo_interp {r['hlo_interp_s'] * 1e3:9.1f} ms   numpy {r['numpy_s'] * 1e3:9.1f} ms   "
              f"ratio {r['ratio_vs_numpy']:.2f}" +
              (f"   general {r['general_s']:.2f} s ({r['fast_speedup_vs_general']:.0f}x slower than fast)"
               if r.get("general_s") else ""))
    Path(a.out).parent.mkdir(parents=True, exist_ok=True)
    Path(a.out).write_text(json.dumps({"n": n, "rounds": a.rounds, "results": results}, indent=1) + "\n")


def bench_case(ours, numpy_fn, general, a, nan_ok=False):
    ours()  # warm-up (plans, first allocation)
    t_np, want = timed(numpy_fn, a.rounds)
    t_ours, got = timed(ours, a.rounds)
    assert np.array_equal(got, want, equal_nan=nan_ok) or np.allclose(got, want, rtol=1e-5, atol=1e-5), "mismatch"
    r = {"hlo_interp_s": t_ours, "numpy_s": t_np, "ratio_vs_numpy": t_ours / t_np}
    if general is not None and a.general_rounds > 0:
        t_gen, g = timed(general, a.general_rounds)
        assert np.allclose(g, want, rtol=1e-4, atol=1e-4, equal_nan=nan_ok), "general path mismatch"
        r["general_s"] = t_gen
        r["fast_speedup_vs_general"] = t_gen / t_ours
    return r


if __name__ == "__main__":
    main()
