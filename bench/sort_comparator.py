"""sort with comparators that no fast path recognizes, on (f32[64,8732], s32 iota) as in XLA's
permutation_sort_expander_test (XLA:CPU: about 0.4 s for such a sort).

    python3 bench/sort_comparator.py [--rounds 5] [--base /path/to/other/checkout] [--out bench/out/sort_comparator.json]

Cases (each comparator written so that the key recognizer does not take it)
  total_noop   compare(p0, p1) LT TOTALORDER, and-ed with a constant true: a guessed key order
               (candidate_order) verified on neighbours.
  xla_noop     XLA:CPU's optimized jnp.sort comparator (NaN/-0 canonicalization, s32 bitcast compare),
               and-ed with true; the data has NaNs and -0s.
  abs_desc     |p0| descending, and-ed with true: no guessed order fits, the vectorized merge sort.
  mixed_key    p0 + f32(p2) < p1 + f32(p3): a key mixing two operands, the vectorized merge sort.
With --base, every round runs the cases once in a subprocess importing hlo_interp from the base
checkout and once from this one, interleaved; figures are medians of CPU time (user+sys of the sort
call) and wall time.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))
from xla_comparator import F32_KEY_LINES  # noqa: E402  (imports nothing)

R, M = 64, 8732
HEAD = """HloModule m
cmp {{
  p0 = f32[] parameter(0)  p1 = f32[] parameter(1)  p2 = s32[] parameter(2)  p3 = s32[] parameter(3)
  {body}
}}
ENTRY e {{
  keys = f32[{r},{m}] parameter(0)
  values = s32[{r},{m}] iota(), iota_dimension=1
  ROOT s = (f32[{r},{m}], s32[{r},{m}]) sort(keys, values), dimensions={{1}}, is_stable=true, to_apply=cmp
}}"""
TRUE = "t = pred[] constant(true)  ROOT r = pred[] and(lt, t)"
CASES = {
    "total_noop": "lt = pred[] compare(p0, p1), direction=LT, type=TOTALORDER  " + TRUE,
    "xla_noop": F32_KEY_LINES + """
  lt = pred[] compare(k0, k1), direction=LT  """ + TRUE,
    "abs_desc": "a0 = f32[] abs(p0)  a1 = f32[] abs(p1)  lt = pred[] compare(a0, a1), direction=GT  " + TRUE,
    "mixed_key": """c2 = f32[] convert(p2)  c3 = f32[] convert(p3)  k0 = f32[] add(p0, c2)  k1 = f32[] add(p1, c3)
  ROOT lt = pred[] compare(k0, k1), direction=LT""",
}


def keys():
    import numpy as np
    rng = np.random.default_rng(0)
    x = rng.standard_normal((R, M)).astype(np.float32)
    x[rng.random((R, M)) < 0.001] = np.nan
    x[rng.random((R, M)) < 0.001] = -0.0
    return x


def worker():
    """One round of every case with the hlo_interp on sys.path; prints {case: [cpu, wall, digest]}."""
    import hashlib

    import hlo_interp
    from hlo_interp.evaluator import compile as hlo_compile
    x = keys()
    out = {}
    for name, body in CASES.items():
        fn = hlo_compile(hlo_interp.parse(HEAD.format(body=body, r=R, m=M)))
        c0, w0 = time.process_time(), time.perf_counter()
        res = fn(x)
        cpu, wall = time.process_time() - c0, time.perf_counter() - w0
        h = hashlib.sha256(b"".join(a.tobytes() for a in res)).hexdigest()[:16]
        out[name] = [cpu, wall, h]
    print(json.dumps(out))


def run_round(tree: Path) -> dict:
    env = dict(os.environ, PYTHONPATH=str(tree))
    p = subprocess.run([sys.executable, __file__, "--worker"], env=env, capture_output=True, text=True,
                       check=True, cwd=str(tree))
    return json.loads(p.stdout.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--base", help="another checkout to compare with (e.g. main before a change)")
    ap.add_argument("--out", default=str(ROOT / "bench" / "out" / "sort_comparator.json"))
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.worker:
        worker()
        return
    trees = {"this": ROOT} | ({"base": Path(a.base).resolve()} if a.base else {})
    runs: dict = {t: [] for t in trees}
    for _ in range(a.rounds):
        for t, path in trees.items():
            runs[t].append(run_round(path))
    result = {}
    for name in CASES:
        row = {}
        for t in trees:
            row[t] = {"cpu_s": statistics.median(r[name][0] for r in runs[t]),
                      "wall_s": statistics.median(r[name][1] for r in runs[t]),
                      "digest": runs[t][0][name][2]}
        if "base" in row:
            row["same_result"] = row["base"]["digest"] == row["this"]["digest"]
            row["cpu_speedup"] = row["base"]["cpu_s"] / row["this"]["cpu_s"]
        result[name] = row
        print(f"{name:11s} " + "  ".join(f"{t}: cpu {row[t]['cpu_s']:.3f} s wall {row[t]['wall_s']:.3f} s"
                                          for t in trees)
              + (f"  speedup {row['cpu_speedup']:.1f}x same={row['same_result']}" if "base" in row else ""))
    Path(a.out).parent.mkdir(parents=True, exist_ok=True)
    Path(a.out).write_text(json.dumps({"rounds": a.rounds, "shape": [R, M], "cases": result}, indent=1))


if __name__ == "__main__":
    main()
