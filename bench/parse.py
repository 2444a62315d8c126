"""Parse and fmt speed against XLA's C++ parser, in-process, all measured in one run.

    python3 bench/parse.py [--rounds 5] [--base REV] [--tree NAME=PATH] [--out bench/out/parse.json]

Inputs (made on the fly, not committed):
  * a >= 10 MB and a ~1 MB real post-optimization dump, by tools/make_big_dump.py (needs jax;
    cached in bench/out/);
  * bench/parse.py's synthetic module of 100,000 instructions (no dependencies).
Systems: XLA's parser (jaxlib's `_hlo.hlo_module_from_text`; skipped when jaxlib is missing), and for
each tree -- this checkout, `--base REV` (a git revision of it, unpacked in a temporary folder) and
every `--tree NAME=PATH` -- `hlo_interp.parse` and `hlo_interp.format_text` (parse + print, what
`hlo fmt` does).  Each round runs every system on every input in a fresh process (after a warm-up
parse of a tiny module), so trees and XLA are interleaved.  Figures are medians over rounds of CPU
time (user + system of the process) and wall time; "x XLA" is XLA's parse time over ours (our
throughput as a fraction of XLA's: higher is better), from CPU times.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
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


# One measurement in a fresh process: prints [cpu s, wall s] of fn(text) (the result freed inside).
_WORKER = r"""
import json, os, sys, time
what, path = sys.argv[1], sys.argv[2]
text = open(path, encoding="utf-8").read()
if what == "xla":
    from jaxlib import _hlo
    fn = _hlo.hlo_module_from_text
else:
    import hlo_interp
    fn = hlo_interp.parse if what == "parse" else hlo_interp.format_text
    fn("HloModule w\nENTRY e {\n  ROOT p = f32[] parameter(0)\n}\n")
def run():
    fn(text)
c, w = time.process_time(), time.perf_counter()
run()
print(json.dumps([time.process_time() - c, time.perf_counter() - w]))
"""


def measure(what: str, path: Path, tree: Path | None) -> tuple[float, float] | None:
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
    if tree is not None:
        env["PYTHONPATH"] = str(tree)
    p = subprocess.run([sys.executable, "-c", _WORKER, what, str(path)], capture_output=True, text=True, env=env,
                       cwd=tempfile.gettempdir())
    if p.returncode != 0:
        if what == "xla":
            return None
        raise SystemExit(f"{what} failed in {tree}:\n{p.stderr[-2000:]}")
    return tuple(json.loads(p.stdout.strip().splitlines()[-1]))


def unpack_revision(rev: str, dest: Path) -> Path:
    """The package of git revision `rev` of this checkout, unpacked under `dest`."""
    archive = dest / "rev.tar"
    subprocess.run(["git", "-C", str(ROOT), "archive", "-o", str(archive), rev, "hlo_interp", "grammar"], check=True)
    with tarfile.open(archive) as t:
        t.extractall(dest / "tree", filter="data")
    return dest / "tree"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", "--repeat", type=int, default=5, dest="rounds")
    ap.add_argument("--base", help="a git revision of this checkout, measured in the same run")
    ap.add_argument("--tree", action="append", default=[], metavar="NAME=PATH", help="another checkout")
    ap.add_argument("--only", choices=("10mb", "1mb", "100k"), action="append", help="inputs (default: all)")
    ap.add_argument("--out", type=Path, default=CACHE / "parse.json")
    args = ap.parse_args()

    work = Path(tempfile.mkdtemp(prefix="hlo-parse-bench-"))
    trees: dict[str, Path] = {"this": ROOT}
    if args.base:
        trees[f"base {args.base}"] = unpack_revision(args.base, work)
    for spec in args.tree:
        name, _, path = spec.partition("=")
        trees[name] = Path(path).resolve()
    inputs: dict[str, Path] = {}
    only = set(args.only or ("10mb", "1mb", "100k"))
    for mb, key in ((10, "10mb"), (1, "1mb")):
        p = real_dump(mb) if key in only else None
        if p is not None:
            inputs[f"{p.stat().st_size / 1e6:.1f} MB post-optimization dump"] = p
    if "100k" in only:
        big = work / "synthetic100k.hlo"
        big.write_text(synthetic(100_000))
        inputs[f"synthetic 100,000 instructions ({big.stat().st_size / 1e6:.1f} MB)"] = big

    times: dict = {label: {"xla": []} for label in inputs}
    for label in inputs:
        for name in trees:
            times[label][(name, "parse")] = []
            times[label][(name, "fmt")] = []
    for r in range(args.rounds):
        for label, path in inputs.items():
            got = measure("xla", path, None)
            if got is not None:
                times[label]["xla"].append(got)
            for name, tree in trees.items():
                for what in ("parse", "fmt"):
                    times[label][(name, what)].append(measure(what, path, tree))
        print(f"round {r + 1}/{args.rounds} done", file=sys.stderr)

    def med(rows, k):
        return statistics.median(x[k] for x in rows) if rows else None

    results = []
    for label, path in inputs.items():
        mb = path.stat().st_size / 1e6
        xla_cpu, xla_wall = med(times[label]["xla"], 0), med(times[label]["xla"], 1)
        print(f"\n{label}: XLA's parser " + (f"{xla_cpu:.3f} s cpu, {xla_wall:.3f} s wall ({mb / xla_cpu:.1f} MB/s)"
                                           if xla_cpu else "n/a"))
        for name in trees:
            for what in ("parse", "fmt"):
                rows = times[label][(name, what)]
                cpu, wall = med(rows, 0), med(rows, 1)
                ratio = xla_cpu / cpu if xla_cpu else None
                results.append({"input": label, "mb": round(mb, 2), "tree": name, "what": what,
                                "cpu_s": round(cpu, 4), "wall_s": round(wall, 4), "mb_per_s_cpu": round(mb / cpu, 2),
                                "xla_cpu_s": None if xla_cpu is None else round(xla_cpu, 4),
                                "xla_wall_s": None if xla_wall is None else round(xla_wall, 4),
                                "x_xla": None if ratio is None else round(ratio, 3)})
                print(f"  {name:22s} {what:5s} {cpu:7.3f} s cpu {wall:7.3f} s wall  {mb / cpu:6.2f} MB/s"
                      + (f"  {ratio:.2f}x XLA" if ratio else ""))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"rounds": args.rounds, "results": results}, indent=2))


if __name__ == "__main__":
    main()
