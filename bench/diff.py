"""Benchmark `hlo diff`: structural diff of a large real dump against a renumbered copy of itself
(every `name.N` becomes `name.N+1`, as when one more instruction was created earlier), which must be
reported as the same module with every numbered name renamed.

    python3 bench/diff.py [--big] [--repeat N]

--big adds the 28.8 MB dump (about 45 s per repetition, parsing both copies dominates).  Prints the median
times of parsing both modules and of the diff itself, and writes bench/out/diff.json.
"""
from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import hlo_interp
from hlo_interp.diff import diff_modules

_NUMBERED = re.compile(r"(%?)\b([A-Za-z_][\w-]*(?:\.[A-Za-z_][\w-]*)*)\.(\d+)\b(?=[\s,)(:=}]|$)")


def renumber(text: str) -> str:
    """name.N -> name.N+1 for every numbered name: a bijection, so the module stays valid."""
    out = []
    for line in text.splitlines(True):
        head, sep, tail = line.partition(", metadata=")
        head = _NUMBERED.sub(lambda m: f"{m.group(1)}{m.group(2)}.{int(m.group(3)) + 1}", head)
        out.append(head + sep + tail)
    return "".join(out)


def bench(path: Path, repeat: int) -> dict:
    text = path.read_text()
    other = renumber(text)
    parse_t, diff_t = [], []
    result = None
    for _ in range(repeat):
        t0 = time.perf_counter()
        a = hlo_interp.parse(text, str(path))
        b = hlo_interp.parse(other, str(path) + " (renumbered)")
        t1 = time.perf_counter()
        result = diff_modules(a, b)
        t2 = time.perf_counter()
        parse_t.append(t1 - t0)
        diff_t.append(t2 - t1)
    s = result.summary()
    n = s["instructions"]["matched"] + s["instructions"]["removed"]
    return {"input": path.name, "mb": round(len(text) / 1e6, 2), "instructions": n,
            "same": result.same, "renamed": s["instructions"]["renamed"],
            "parse_both_s": round(statistics.median(parse_t), 3),
            "diff_s": round(statistics.median(diff_t), 3),
            "diff_instructions_per_s": round(n / statistics.median(diff_t))}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--big", action="store_true", help="also the 28.8 MB dump")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    paths = [ROOT / "bench/out/dump_1mb.hlo"] + ([ROOT / "bench/out/dump_10mb.hlo"] if args.big else [])
    results = []
    for p in paths:
        if not p.exists():
            print(f"{p}: missing (make it with tools/make_big_dump.py)")
            continue
        r = bench(p, args.repeat)
        results.append(r)
        print(json.dumps(r))
    out = ROOT / "bench/out/diff.json"
    out.write_text(json.dumps({"repeat": args.repeat, "results": results}, indent=2) + "\n")


if __name__ == "__main__":
    main()
