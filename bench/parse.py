"""Parse speed: MB/s of hlo_interp.parse on real and synthetic HLO text, against XLA's C++ parser.

    python3 bench/parse.py [--repeat 5] [--out bench/out/parse.json]

Inputs (made on the fly, not committed):
  * a >= 10 MB and a ~1 MB real post-optimization dump, by tools/make_big_dump.py (needs jax);
  * a synthetic module of 100,000 instructions (no dependencies).
XLA's parser is jaxlib's `_hlo.hlo_module_from_text`, timed on the same texts in the same run; it is
skipped (ratio "n/a") when jaxlib is not installed.  Figures are medians of --repeat runs; the
ratio is ours / XLA's time per input (lower is better).
"""
from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import hlo_interp  # noqa: E402

CACHE = ROOT / "bench" / "out"


def synthetic(n: int) -> str:
    """A chain of n elementwise/shape instructions with metadata, like a post-optimization dump."""
    lines = ["HloModule synthetic, entry_computation_layout={(f32[128,256]{1,0})->f32[128,256]{1,0}}", "",
             "ENTRY %main (p0: f32[128,256]) -> f32[128,256] {",
             '  %p0 = f32[128,256]{1,0} parameter(0), metadata={op_name="x"}']
    prev = "p0"
    ops = ["add", "multiply", "subtract", "maximum"]
    for i in range(1, n):
        name = f"v.{i}"
        if i % 7 == 0:
            lines.append(f'  %{name} = f32[128,256]{{1,0}} exponential(%{prev}), '
                         f'metadata={{op_name="jit(f)/exp" source_file="model.py" source_line={i}}}')
        elif i % 11 == 0:
            lines.append(f"  %{name} = f32[128,256]{{1,0}} transpose(%{prev}), dimensions={{0,1}}")
        else:
            op = ops[i % 4]
            lines.append(f'  %{name} = f32[128,256]{{1,0}} {op}(%{prev}, %p0), '
                         f'metadata={{op_name="jit(f)/{op}" source_file="model.py" source_line={i}}}')
        prev = name
    lines[-1] = "  ROOT " + lines[-1].lstrip()
    lines.append("}")
    return "\n".join(lines) + "\n"


def real_dump(min_mb: float) -> Path | None:
    path = CACHE / f"dump_{min_mb:g}mb.hlo"
    if path.exists():
        return path
    CACHE.mkdir(parents=True, exist_ok=True)
    r = subprocess.run([sys.executable, str(ROOT / "tools" / "make_big_dump.py"), "--out", str(path),
                        "--min-mb", str(min_mb)], capture_output=True, text=True)
    if r.returncode != 0 or not path.exists():
        print(f"(skipping the {min_mb:g} MB real dump: tools/make_big_dump.py needs jax)\n{r.stderr[-500:]}",
              file=sys.stderr)
        return None
    return path


def xla_parser():
    try:
        from jaxlib import _hlo
    except ImportError:
        return None
    return _hlo.hlo_module_from_text


def median_time(fn, text: str, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn(text)
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--out", type=Path, default=CACHE / "parse.json")
    args = ap.parse_args()

    inputs = []
    for mb in (10, 1):
        p = real_dump(mb)
        if p is not None:
            inputs.append((f"real post-optimization dump ({p.stat().st_size / 1e6:.1f} MB)", p.read_text()))
    inputs.append(("synthetic 100,000 instructions", synthetic(100_000)))

    xla = xla_parser()
    hlo_interp.parse("HloModule warm\nENTRY e {\n  ROOT p = f32[] parameter(0)\n}\n")  # build tables once
    rows = []
    for label, text in inputs:
        mb = len(text.encode()) / 1e6
        ours = median_time(hlo_interp.parse, text, args.repeat)
        theirs = median_time(xla, text, args.repeat) if xla else None
        row = {"input": label, "mb": round(mb, 2), "ours_s": round(ours, 3), "ours_mb_s": round(mb / ours, 2),
               "xla_s": None if theirs is None else round(theirs, 3),
               "xla_mb_s": None if theirs is None else round(mb / theirs, 2),
               "ratio_ours_over_xla": None if theirs is None else round(ours / theirs, 2)}
        rows.append(row)
        print(f"{label:45s} {mb:6.2f} MB  ours {row['ours_mb_s']:5.2f} MB/s ({ours:.2f} s)  "
              + (f"XLA {row['xla_mb_s']:5.2f} MB/s ({theirs:.2f} s)  ratio {row['ratio_ours_over_xla']:.2f}x"
                 if theirs else "XLA n/a"))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"repeat": args.repeat, "results": rows}, indent=2))


if __name__ == "__main__":
    main()
