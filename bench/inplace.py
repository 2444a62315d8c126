"""In-place dynamic-update-slice of while-loop buffers (hlo_interp/in_place.py): each
case run with the in-place path (evaluator.IN_PLACE_LOOPS = True, the default) and with the copying
path (False: every dynamic-update-slice copies the whole buffer), in the same process.

    python3 bench/inplace.py [--rounds 5] [--cases fori,fori_after,scan,scan_after,gru,gru_after]
                             [--out bench/out/inplace.json]

Cases (JAX programs; their HLO texts are made with JAX when it is installed, dev-only, and cached in
bench/out/, else read from there; `_after` = XLA:CPU's optimized HLO, where the update sits in a fusion):
  fori    lax.fori_loop(0, 10000, lambda i, buf: dynamic_update_slice(buf, full((1, 128), i) * n0,
          (i, 0)), zeros((10000, 128)))                       10,000 rows of 128 f32 into f32[10000,128]
  scan    lax.scan(lambda c, x: (c * 0.5 + x, c), zeros(128), xs) with xs: f32[10000,128]
                                                              (stacks 10,000 carries: f32[10000,128])
  gru     tests/golden/models/gru_scan_f32 (a 6-step GRU scan and its gradient: tiny buffers, here
          to show that small loops lose nothing)
Plans are built outside the timed region; rounds interleave the two paths; figures are medians (ms),
the ratio is the median of per-round ratios (copying / in place).  Results are checked bit-identical.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
OUT = ROOT / "bench" / "out"

import hlo_interp  # noqa: E402
from hlo_interp import evaluator  # noqa: E402

N, W = 10_000, 128


def _jax_text(case: str, after: bool) -> str:
    os.environ.setdefault("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false")
    import jax
    import jax.numpy as jnp
    if case == "fori":
        def f(n0):
            def body(i, buf):
                return jax.lax.dynamic_update_slice(buf, jnp.full((1, W), i, jnp.float32) * n0, (i, 0))
            return jax.lax.fori_loop(0, N, body, jnp.zeros((N, W), jnp.float32))
        lowered = jax.jit(f).lower(jnp.float32(1.5))
    else:
        def f(xs):
            return jax.lax.scan(lambda c, x: (c * 0.5 + x, c), jnp.zeros(W, jnp.float32), xs)
        lowered = jax.jit(f).lower(jnp.zeros((N, W), jnp.float32))
    return lowered.compile().as_text() if after else lowered.as_text(dialect="hlo")


def case_text_and_inputs(name: str):
    base, after = name.split("_")[0], name.endswith("_after")
    if base == "gru":
        d = ROOT / "tests" / "golden" / "models" / "gru_scan_f32"
        meta = json.loads((d / "case.json").read_text())
        z = np.load(d / "inputs.npz")
        return (d / ("after.hlo" if after else "before.hlo")).read_text(), [z[i["key"]] for i in meta["inputs"]]
    path = OUT / f"inplace_{base}{'.after' if after else ''}.hlo"
    try:
        text = _jax_text(base, after)
        OUT.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    except ImportError:
        text = path.read_text()
    rs = np.random.RandomState(0)
    args = [np.float32(1.5)] if base == "fori" else [rs.randn(N, W).astype(np.float32)]
    return text, args


def _build(module, in_place: bool):
    evaluator.IN_PLACE_LOOPS = in_place
    try:
        return evaluator.compile(module)
    finally:
        evaluator.IN_PLACE_LOOPS = True


def bench_case(name: str, rounds: int) -> dict:
    text, args = case_text_and_inputs(name)
    module = hlo_interp.parse(text, name)
    fast, slow = _build(module, True), _build(module, False)
    assert fast.ctx.in_place_loops and not slow.ctx.in_place_loops, name
    t_fast, t_slow, ratios = [], [], []
    ref = None
    for _ in range(rounds):
        t0 = time.perf_counter()
        a = fast(*args)
        t1 = time.perf_counter()
        b = slow(*args)
        t2 = time.perf_counter()
        t_fast.append(t1 - t0)
        t_slow.append(t2 - t1)
        ratios.append((t2 - t1) / (t1 - t0))
        if ref is None:
            ref = b
            assert all(x.dtype == y.dtype and x.tobytes() == y.tobytes() for x, y in zip(a, b)), name
    return {"case": name, "in_place_loops": {k: list(v) for k, v in fast.ctx.in_place_loops.items()},
            "in_place_ms": 1e3 * statistics.median(t_fast), "copying_ms": 1e3 * statistics.median(t_slow),
            "ratio": statistics.median(ratios), "rounds": rounds}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--cases", default="fori,fori_after,scan,scan_after,gru,gru_after")
    ap.add_argument("--out", type=Path, default=OUT / "inplace.json")
    args = ap.parse_args(argv)
    rows = []
    print(f"{'case':12} {'in place ms':>12} {'copying ms':>12} {'copying/in place':>17}   loops")
    for name in args.cases.split(","):
        r = bench_case(name, args.rounds)
        rows.append(r)
        print(f"{name:12} {r['in_place_ms']:12.2f} {r['copying_ms']:12.2f} {r['ratio']:17.2f}   "
              f"{r['in_place_loops']}", flush=True)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(rows, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
