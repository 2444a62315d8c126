"""reduce-window speed on 1e6 elements: hlo_interp's fast path against the same NumPy kernel called
directly, an idiomatic NumPy one-liner, and hlo_interp's general path (the same reducer written so that
it is not recognized: `copy(add(a, b))`, which calls the computation once per window offset).

    python3 bench/window.py [--rounds 15] [--out bench/out/window.json]

Cases (f32, 1e6 input elements):
  max3x3     f32[1000,1000], window 3x3, stride 1, SAME padding, max    (max-pool)
  sum2x2s2   f32[1000,1000], window 2x2, stride 2, sum                  (avg-pool numerator)
  sum5_1d    f32[1000000], window 5, stride 1, sum

"numpy same kernel" = what the fast path does, written by hand: pad with the identity, strided views
(sliding_window_view), one ufunc call per window offset in XLA's row-major order (so the result is
bit-identical).  "numpy idiomatic" = sliding_window_view(...).max/sum(axis=window axes).  Rounds
interleave the systems; figures are medians (ms); ratios are medians of per-round ratios.
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import hlo_interp

COMPS = """
add { a = f32[] parameter(0)  b = f32[] parameter(1)  ROOT s = f32[] add(a, b) }
mx { a = f32[] parameter(0)  b = f32[] parameter(1)  ROOT s = f32[] maximum(a, b) }
addc { a = f32[] parameter(0)  b = f32[] parameter(1)  s = f32[] add(a, b)  ROOT c = f32[] copy(s) }
mxc { a = f32[] parameter(0)  b = f32[] parameter(1)  s = f32[] maximum(a, b)  ROOT c = f32[] copy(s) }
"""


def module(shape, out, init, window, comp):
    return hlo_interp.parse(f"""HloModule bench
{COMPS}
ENTRY e {{
  x = f32[{shape}] parameter(0)
  i = f32[] constant({init})
  ROOT r = f32[{out}] reduce-window(x, i), window={{{window}}}, to_apply={comp}
}}""")


def np_same_max3x3(x):
    xp = np.pad(x, 1, constant_values=-np.inf)
    v = sliding_window_view(xp, (3, 3))
    acc = np.full(v.shape[:2], -np.inf, np.float32)
    for i in range(3):
        for j in range(3):
            acc = np.maximum(acc, v[:, :, i, j])
    return acc


def np_idiom_max3x3(x):
    return sliding_window_view(np.pad(x, 1, constant_values=-np.inf), (3, 3)).max(axis=(2, 3))


def np_same_sum2x2s2(x):
    v = sliding_window_view(x, (2, 2))[::2, ::2]
    acc = np.zeros(v.shape[:2], np.float32)
    for i in range(2):
        for j in range(2):
            acc = acc + v[:, :, i, j]
    return acc


def np_idiom_sum2x2s2(x):
    return sliding_window_view(x, (2, 2))[::2, ::2].sum(axis=(2, 3))


def np_same_sum5(x):
    v = sliding_window_view(x, 5)
    acc = np.zeros(v.shape[0], np.float32)
    for i in range(5):
        acc = acc + v[:, i]
    return acc


def np_idiom_sum5(x):
    return sliding_window_view(x, 5).sum(axis=1)


CASES = {
    "max3x3": (lambda: np.random.default_rng(0).standard_normal((1000, 1000)).astype(np.float32),
               ("1000,1000", "1000,1000", "-inf", "size=3x3 pad=1_1x1_1"), "mx", "mxc",
               np_same_max3x3, np_idiom_max3x3),
    "sum2x2s2": (lambda: np.random.default_rng(1).standard_normal((1000, 1000)).astype(np.float32),
                 ("1000,1000", "500,500", "0", "size=2x2 stride=2x2"), "add", "addc",
                 np_same_sum2x2s2, np_idiom_sum2x2s2),
    "sum5_1d": (lambda: np.random.default_rng(2).standard_normal(1_000_000).astype(np.float32),
                ("1000000", "999996", "0", "size=5"), "add", "addc", np_same_sum5, np_idiom_sum5),
}


def timed(f):
    t = time.perf_counter()
    r = f()
    return (time.perf_counter() - t) * 1e3, r


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--out")
    a = ap.parse_args()
    report = {}
    for name, (mk, (shape, out, init, win), fast, slow, same, idiom) in CASES.items():
        x = mk()
        mf = module(shape, out, init, win, fast)
        ms = module(shape, out, init, win, slow)
        rf = hlo_interp.run(mf, x)[0]
        rs = hlo_interp.run(ms, x)[0]
        ref = same(x)
        assert np.array_equal(rf, ref) and np.array_equal(rs, ref), name  # bit-identical
        assert np.allclose(idiom(x), ref, rtol=1e-5, atol=1e-5), name
        t = {"hlo_interp": [], "numpy_same": [], "numpy_idiomatic": [], "general_path": []}
        systems = {"hlo_interp": lambda mf=mf, x=x: hlo_interp.run(mf, x),
                   "numpy_same": lambda same=same, x=x: same(x),
                   "numpy_idiomatic": lambda idiom=idiom, x=x: idiom(x),
                   "general_path": lambda ms=ms, x=x: hlo_interp.run(ms, x)}
        for _ in range(a.rounds):
            for k, f in systems.items():
                t[k].append(timed(f)[0])
        med = {k: statistics.median(v) for k, v in t.items()}
        ratio = {f"vs_{k}": statistics.median(h / o for h, o in zip(t["hlo_interp"], v))
                 for k, v in t.items() if k != "hlo_interp"}
        report[name] = {"median_ms": med, "ratio_hlo_interp": ratio}
        print(f"{name:10s} " + "  ".join(f"{k} {v:7.2f} ms" for k, v in med.items()))
        print(f"{'':10s} hlo_interp / numpy_same {ratio['vs_numpy_same']:.2f}x   / numpy_idiomatic "
              f"{ratio['vs_numpy_idiomatic']:.2f}x   / general_path {ratio['vs_general_path']:.2f}x")
    if a.out:
        Path(a.out).write_text(json.dumps(report, indent=1) + "\n")


if __name__ == "__main__":
    main()
