#!/usr/bin/env python3
"""Throughput of `hlo check` on an XLA-dump-like directory of 200 files, with -j 1 and -j 2 (more with
--jobs), as a user runs it (`python -m hlo_interp check DIR`, a fresh process each run).

The directory is made from the corpus (tests/corpus/jax): 200 files named like XLA's dumps
(`module_0001.jit_f.before_optimizations.txt`), an even spread over the larger half of the corpus
(before and after optimization texts, about 3.5 MB).  Each run includes the start of the process
(about 0.5 s: Python, NumPy, the grammar), which -j does not divide.

    python3 bench/check.py [--files 200] [--repeat 3] [--jobs 1,2]

Prints, per job count, the median wall time of `repeat` runs, files/s and MB/s, and the speed-up
over -j 1.
"""
from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def make_dump_dir(dest: Path, n: int) -> int:
    """n corpus texts under dest, named like XLA dumps; returns the total size in bytes."""
    # Real dumps are mostly mid-sized modules: take an even spread of the larger half of the corpus.
    src = sorted((ROOT / "tests" / "corpus" / "jax").glob("*.hlo"), key=lambda p: (-p.stat().st_size, p.name))
    src = src[: max(n, len(src) // 2)]
    step = max(1, len(src) // n)
    total = 0
    for i in range(n):
        f = src[(i * step) % len(src)]
        stage = "after_optimizations" if f.name.endswith(".after.hlo") else "before_optimizations"
        name = f.name.rsplit(".", 2)[0]
        target = dest / f"module_{i:04d}.jit_{name}.{stage}.txt"
        shutil.copy(f, target)
        total += target.stat().st_size
    return total


def run(dump: Path, jobs: int) -> tuple[float, float]:
    """(wall seconds, CPU seconds of the process and its workers)"""
    import resource
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    r = subprocess.run([sys.executable, "-m", "hlo_interp", "check", "--no-notes", "-j", str(jobs), str(dump)],
                       cwd=ROOT, capture_output=True, text=True)
    dt = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if r.returncode not in (0, 1):
        raise SystemExit(f"hlo check failed ({r.returncode}): {r.stderr[-2000:]}")
    return dt, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--files", type=int, default=200)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--jobs", default="1,2")
    args = ap.parse_args(argv)
    jobs = [int(j) for j in args.jobs.split(",")]
    with tempfile.TemporaryDirectory(prefix="hlo-check-bench-") as tmp:
        dump = Path(tmp) / "dump"
        dump.mkdir()
        size = make_dump_dir(dump, args.files)
        load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
        print(f"{args.files} dump files, {size / 1e6:.2f} MB, {os.cpu_count()} CPU(s), load average {load:.2f} "
              f"before the runs; median of {args.repeat} runs")
        if load > 0.5:
            print("  (other processes are running: the speed-up of -j is limited by the free cores)")
        run(dump, 1)  # warm the file cache and Python's bytecode cache
        base = None
        for j in jobs:
            runs = [run(dump, j) for _ in range(args.repeat)]
            med = statistics.median(t for t, _ in runs)
            cpu = statistics.median(c for _, c in runs)
            base = base or med
            print(f"  -j {j}: {med:6.2f} s wall, {cpu:5.2f} s CPU ({args.files / med:6.1f} files/s, "
                  f"{size / 1e6 / med:5.2f} MB/s)  speed-up x{base / med:.2f}   "
                  f"runs: {', '.join(f'{t:.2f}' for t, _ in runs)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
