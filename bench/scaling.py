#!/usr/bin/env python3
"""How every pass over a module grows with its size: parse, check, plan+run (a module's first run,
which builds its plan), run (later runs), info (the whole report as JSON, every row), diff and graph on
chains of N instructions (N = 10k, 20k, 40k, 100k by default), in-process through the Python API.

Each module is one computation: a parameter, then N-1 instructions, each using the previous one
(negate, add of the value with itself, a tuple/get-tuple-element pair every 100 steps and a
broadcast every 1000, so that more than one opcode and shape are seen).  The diff compares the module
with a copy where every 1000th negate became an abs.

    python3 bench/scaling.py [--sizes 10000,20000,40000,100000] [--repeat 3] [--ops parse,check,...]

Prints, per pass, the median time at each size and the ratio of each time to the previous one,
divided by the ratio of the sizes: about 1.0 is linear; 2.0 for doubling sizes would be quadratic.
"""
from __future__ import annotations

import argparse
import gc
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np  # noqa: E402

import hlo_interp  # noqa: E402


def chain(n: int, variant: bool = False) -> str:
    lines = ["HloModule chain", "", "ENTRY main {", "  v0 = f32[8]{0} parameter(0)"]
    for i in range(1, n):
        prev = f"v{i - 1}"
        if i % 100 == 50:
            lines.append(f"  t{i} = (f32[8]{{0}}, f32[8]{{0}}) tuple({prev}, {prev})")
            lines.append(f"  v{i} = f32[8]{{0}} get-tuple-element(t{i}), index=1")
        elif i % 1000 == 500:
            lines.append(f"  s{i} = f32[] constant(0.5)")
            lines.append(f"  b{i} = f32[8]{{0}} broadcast(s{i}), dimensions={{}}")
            lines.append(f"  v{i} = f32[8]{{0}} multiply({prev}, b{i})")
        elif i % 2:
            op = "abs" if variant and i % 1000 == 1 else "negate"
            lines.append(f"  v{i} = f32[8]{{0}} {op}({prev})")
        else:
            lines.append(f"  v{i} = f32[8]{{0}} add({prev}, {prev})")
    lines[-1] = lines[-1].replace(f"  v{n - 1} =", f"  ROOT v{n - 1} =")
    lines.append("}")
    return "\n".join(lines) + "\n"


def timed(fn) -> float:
    gc.collect()
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", default="10000,20000,40000,100000")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--ops", default="parse,check,plan+run,run,info,diff,graph")
    a = ap.parse_args()
    sizes = [int(s) for s in a.sizes.split(",")]
    ops = a.ops.split(",")
    x = np.linspace(-1, 1, 8, dtype=np.float32)
    results: dict[str, list[float]] = {op: [] for op in ops}
    for n in sizes:
        text = chain(n)
        text_b = chain(n, variant=True)
        m = hlo_interp.parse(text)
        mb = hlo_interp.parse(text_b)
        count = sum(len(c.instructions) for c in m.computations)
        passes = {
            "parse": lambda: hlo_interp.parse(text),
            "check": lambda: hlo_interp.check(m),
            # the first run of a module builds its plan (then kept with the module): each timed run
            # takes a module parsed for it beforehand; `run` times later runs of one module
            "plan+run": lambda: hlo_interp.run(fresh.pop(), x),
            "run": lambda: hlo_interp.run(m, x),
            "info": lambda: hlo_interp.module_info(m).to_json(),
            "diff": lambda: hlo_interp.diff_modules(m, mb).to_json(),
            "graph": lambda: _graph(m),
        }
        fresh = [hlo_interp.parse(text) for _ in range(a.repeat)] if "plan+run" in ops else []
        if "run" in ops:
            hlo_interp.run(m, x)  # (its plan built before `run` is timed)
        for op in ops:
            t = statistics.median(timed(passes[op]) for _ in range(a.repeat))
            results[op].append(t)
            print(f"  {op:9s} N={n:>7} ({count} instructions): {t:8.3f} s", flush=True)
    print()
    head = "pass       " + "".join(f"{n:>10}" for n in sizes) + "   growth per size ratio (1.0 = linear)"
    print(head)
    for op in ops:
        ts = results[op]
        ratios = [(ts[i] / ts[i - 1]) / (sizes[i] / sizes[i - 1]) for i in range(1, len(ts))]
        print(f"{op:10s} " + "".join(f"{t:9.3f}s" for t in ts) + "   " + "  ".join(f"{r:.2f}" for r in ratios))


def _graph(m):
    from hlo_interp import graph
    return graph.graph_to_dot(graph.build(m))


if __name__ == "__main__":
    main()
