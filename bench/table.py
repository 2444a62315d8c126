"""The speed table in one command: start-up, hlo-run against hand-written NumPy, check/info against
fmt on a 100k-instruction module, and fmt throughput against XLA's C++ parser, all in one run.

    python3 bench/table.py                        # this checkout
    python3 bench/table.py --base f8d9abb         # and a git revision of it, measured in the same run
    python3 bench/table.py --tree old=/path/to/other/checkout --quick

Every tree (this checkout, --base REV made with `git worktree add` in a temporary folder, --tree
NAME=PATH) is installed the way pip installs it (the package with its grammar inside, bytecode
compiled) in a temporary folder and run from a neutral directory, so that it is that tree's code, and
not the source checkout's, that each process imports.  Rounds interleave the trees and the systems.
Figures are medians; ratios are medians of per-round (paired) ratios.  Whole-process figures are wall
time and, in brackets, the CPU time (user + system) of the process: on a loaded machine the CPU time is
what the process itself cost.

Rows (with the project's targets):
  start-up     `hlo fmt` / `hlo check` of samples/mlp.before_optimizations.hlo (60 lines), whole process;
               `python -c "import numpy"` for scale
  hlo-run      whole process `hlo-run M --inputs in.npz --output out.npz --print none` over a NumPy
               script doing the same with the same .npz I/O (bench/run.py --worker numpy): mlp,
               transformer, train, sort_gather, bf16_matmul, cnn (bench/run.py); loop: a
               10,000-iteration fori_loop
  100k module  `hlo check` / `hlo fmt` and `hlo info` / `hlo fmt` (whole process) on a generated
               100,000-instruction module (bench/parse.py's synthetic)
  vs XLA       XLA's parser time / our parse+print time (hlo_interp.format_text) in-process, i.e. our
               throughput as a fraction of XLA's (jaxlib's _hlo.hlo_module_from_text), on a 1 MB
               post-optimization dump (tools/make_big_dump.py, needs jax; cached in bench/out/) and on
               the 100k module
The HLO of the hlo-run workloads is made by JAX (dev-only), as in bench/run.py; without jax those rows
use bench/out/<model>.hlo if present.  Output: the table (markdown) and bench/out/table.json.
"""
from __future__ import annotations

import os

for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "BLIS_NUM_THREADS"):
    os.environ[_v] = "1"
os.environ["HLO_INTERP_CACHE"] = "0"  # every row is a cold run: no module cache (bench/run.py --cache-gain measures it)
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ.setdefault("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false")

import argparse  # noqa: E402
import json  # noqa: E402
import resource  # noqa: E402
import shutil  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT / "tools"))

OUT = ROOT / "bench" / "out"
SMALL = ROOT / "samples" / "mlp.before_optimizations.hlo"
RUN_MODELS = ["mlp", "transformer", "train", "sort_gather", "bf16_matmul", "cnn"]
PY = sys.executable


# --------------------------------------------------------------------------------------------------
# Trees and processes

def install(src: Path, dest: Path) -> Path:
    """The package of checkout `src` laid out as pip installs it (grammar inside, .pyc compiled)."""
    pkg = dest / "hlo_interp"
    shutil.copytree(src / "hlo_interp", pkg, ignore=shutil.ignore_patterns("__pycache__"))
    (pkg / "grammar").mkdir(exist_ok=True)
    shutil.copy(src / "grammar" / "hlo.lark", pkg / "grammar" / "hlo.lark")
    subprocess.run([PY, "-m", "compileall", "-q", str(pkg)], check=True, capture_output=True)
    return dest


def timed_process(cmd, env, cwd, stdout=subprocess.DEVNULL):
    """(wall s, cpu s, CompletedProcess) of one process."""
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    p = subprocess.run(cmd, env=env, cwd=cwd, stdout=stdout, stderr=subprocess.PIPE, text=True)
    wall = time.perf_counter() - t
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime), p


def tree_env(site: Path) -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(site)
    env.pop("NO_COLOR", None)
    return env


def med(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def paired(a, b):
    return med([x / y for x, y in zip(a, b) if x and y])


# --------------------------------------------------------------------------------------------------
# Measurements

def startup(trees, work: Path, rounds: int) -> dict:
    small = work / "small.hlo"
    shutil.copy(SMALL, small)
    cmds = {"fmt": ["-m", "hlo_interp", "fmt", str(small)], "check": ["-m", "hlo_interp", "check", str(small)]}
    res = {name: {k: {"wall": [], "cpu": []} for k in cmds} for name in trees}
    numpy_wall, numpy_cpu = [], []
    for r in range(rounds):
        for name, site in trees.items():
            for k, c in cmds.items():
                w, cpu, p = timed_process([PY] + c, tree_env(site), work)
                if p.returncode not in (0, 1):
                    raise SystemExit(f"{name}: hlo {k} failed: {p.stderr[-500:]}")
                res[name][k]["wall"].append(w)
                res[name][k]["cpu"].append(cpu)
        w, cpu, _ = timed_process([PY, "-c", "import numpy"], dict(os.environ), work)
        numpy_wall.append(w)
        numpy_cpu.append(cpu)
    out = {name: {k: {"wall_s": med(v["wall"]), "cpu_s": med(v["cpu"])} for k, v in d.items()}
           for name, d in res.items()}
    out["import numpy"] = {"wall_s": med(numpy_wall), "cpu_s": med(numpy_cpu)}
    return out


def hlo_texts(models, work: Path) -> dict:
    import numpy as np
    import run as R
    try:
        import jax  # noqa: F401
        have_jax = True
    except ImportError:
        have_jax = False
    out = {}
    for m in models:
        inputs = R.make_inputs(m)
        cached = OUT / f"{m}.hlo"
        if have_jax:
            text = R.hlo_text(m, inputs, False)
            OUT.mkdir(parents=True, exist_ok=True)
            cached.write_text(text)
        elif cached.exists():
            text = cached.read_text()
        else:
            print(f"(skipping {m}: needs jax once to make its HLO)", file=sys.stderr)
            continue
        (work / f"{m}.hlo").write_text(text)
        np.savez(work / f"{m}.in.npz", **{f"arg{i}": a for i, a in enumerate(inputs)})
        out[m] = work / f"{m}.hlo"
    return out


def hlo_run(trees, work: Path, models, rounds: int) -> dict:
    paths = hlo_texts(models, work)
    res = {}
    for m, hlo in paths.items():
        inp = work / f"{m}.in.npz"
        np_cmd = [PY, str(ROOT / "bench" / "run.py"), "--worker", "numpy", "--model", m, "--inputs", str(inp),
                  "--output", str(work / f"{m}.np.npz")]
        times = {name: {"wall": [], "cpu": []} for name in list(trees) + ["numpy"]}
        for r in range(rounds):
            for name, site in list(trees.items()) + [("numpy", None)]:
                if site is None:
                    cmd, env = np_cmd, dict(os.environ)
                else:
                    cmd = [PY, "-m", "hlo_interp.cli_run", str(hlo), "--inputs", str(inp),
                           "--output", str(work / f"{m}.{name}.npz"), "--print", "none"]
                    env = tree_env(site)
                w, cpu, p = timed_process(cmd, env, work)
                if p.returncode != 0:
                    print(f"({name} {m} failed: {p.stderr.strip().splitlines()[-1:]})", file=sys.stderr)
                    w = cpu = None
                times[name]["wall"].append(w)
                times[name]["cpu"].append(cpu)
        row = {"numpy_wall_s": med(times["numpy"]["wall"]), "numpy_cpu_s": med(times["numpy"]["cpu"])}
        for name in trees:
            row[name] = {"wall_s": med(times[name]["wall"]), "cpu_s": med(times[name]["cpu"]),
                         "over_numpy": paired(times[name]["wall"], times["numpy"]["wall"]),
                         "over_numpy_cpu": paired(times[name]["cpu"], times["numpy"]["cpu"])}
        res[m] = row
        print(f"  hlo-run {m}: {json.dumps(row)}", file=sys.stderr)
    return res


def big_module(trees, work: Path, rounds: int) -> dict:
    from parse import synthetic
    big = work / "big100k.hlo"
    big.write_text(synthetic(100_000))
    cmds = {"fmt": ["fmt", str(big)], "check": ["check", str(big)], "info": ["info", str(big)]}
    t = {name: {k: {"wall": [], "cpu": []} for k in cmds} for name in trees}
    for r in range(rounds):
        for name, site in trees.items():
            for k, c in cmds.items():
                w, cpu, p = timed_process([PY, "-m", "hlo_interp"] + c, tree_env(site), work)
                if p.returncode not in (0, 1):
                    raise SystemExit(f"{name}: hlo {k} failed: {p.stderr[-500:]}")
                t[name][k]["wall"].append(w)
                t[name][k]["cpu"].append(cpu)
    out = {"mb": round(big.stat().st_size / 1e6, 2)}
    for name in trees:
        d = t[name]
        out[name] = {**{f"{k}_s": med(d[k]["wall"]) for k in cmds}, **{f"{k}_cpu_s": med(d[k]["cpu"]) for k in cmds},
                     "check_over_fmt": paired(d["check"]["wall"], d["fmt"]["wall"]),
                     "info_over_fmt": paired(d["info"]["wall"], d["fmt"]["wall"]),
                     "check_over_fmt_cpu": paired(d["check"]["cpu"], d["fmt"]["cpu"]),
                     "info_over_fmt_cpu": paired(d["info"]["cpu"], d["fmt"]["cpu"])}
    return out


_INPROC = r"""
import json, sys, time
import hlo_interp
text = open(sys.argv[1], encoding="utf-8").read()
hlo_interp.format_text("HloModule w\nENTRY e {\n  ROOT p = f32[] parameter(0)\n}\n")
ts = []
for _ in range(int(sys.argv[2])):
    t = time.process_time()
    hlo_interp.format_text(text)
    ts.append(time.process_time() - t)
print(json.dumps(ts))
"""

_XLA = r"""
import json, sys, time
from jaxlib import _hlo
text = open(sys.argv[1], encoding="utf-8").read()
ts = []
for _ in range(int(sys.argv[2])):
    t = time.process_time()
    _hlo.hlo_module_from_text(text)
    ts.append(time.process_time() - t)
print(json.dumps(ts))
"""


def real_dump(min_mb: float):
    path = OUT / f"dump_{min_mb:g}mb.hlo"
    if path.exists():
        return path
    OUT.mkdir(parents=True, exist_ok=True)
    r = subprocess.run([PY, str(ROOT / "tools" / "make_big_dump.py"), "--out", str(path), "--min-mb", str(min_mb)],
                       capture_output=True, text=True)
    if r.returncode != 0 or not path.exists():
        print(f"(no {min_mb:g} MB dump: tools/make_big_dump.py needs jax)", file=sys.stderr)
        return None
    return path


def vs_xla(trees, work: Path, repeat: int) -> dict:
    inputs = {}
    d1 = real_dump(1)
    if d1 is not None:
        inputs["1 MB post-optimization dump"] = d1
    inputs["100k module"] = work / "big100k.hlo"
    out = {}
    for label, path in inputs.items():
        row = {"mb": round(path.stat().st_size / 1e6, 2)}
        p = subprocess.run([PY, "-c", _XLA, str(path), str(repeat)], capture_output=True, text=True, cwd=work)
        xla = med(json.loads(p.stdout)) if p.returncode == 0 else None
        if xla is None:
            print(f"(XLA's parser unavailable: {p.stderr.strip().splitlines()[-1:]})", file=sys.stderr)
        row["xla_s"] = xla
        for name, site in trees.items():
            p = subprocess.run([PY, "-c", _INPROC, str(path), str(repeat)], capture_output=True, text=True,
                               cwd=work, env=tree_env(site))
            ours = med(json.loads(p.stdout)) if p.returncode == 0 else None
            row[name] = {"fmt_s": ours, "throughput_over_xla": (xla / ours) if xla and ours else None}
        out[label] = row
    return out


# --------------------------------------------------------------------------------------------------
# The table

def _f(v, unit="s"):
    if v is None:
        return "-"
    return f"{v:.3f} s" if unit == "s" else f"{v:.2f}x"


def render(res: dict, names) -> str:
    cols = " | ".join(names)
    lines = [f"| what | {cols} | target |", "|---|" + "---|" * len(names) + "---|"]
    st = res["startup"]
    for k in ("fmt", "check"):
        cells = " | ".join(f"{_f(st[n][k]['wall_s'])} ({_f(st[n][k]['cpu_s'])} cpu)" for n in names)
        lines.append(f"| `hlo {k}`, 60-line module, whole process | {cells} | <= 0.10 s |")
    npy = st["import numpy"]
    lines.append("| `python -c \"import numpy\"` (for scale) | " + " | ".join(
        [f"{_f(npy['wall_s'])} ({_f(npy['cpu_s'])} cpu)"] * len(names)) + " | |")
    run = res.get("hlo_run", {})
    for m, row in run.items():
        cells = " | ".join(f"{_f(row[n]['over_numpy'], 'x')} ({_f(row[n]['over_numpy_cpu'], 'x')} cpu; "
                           f"{_f(row[n]['wall_s'])} vs {_f(row['numpy_wall_s'])})" for n in names)
        target = "<= 3x" if m == "loop" else "<= 1.3x"
        what = "10,000-iteration fori_loop" if m == "loop" else m
        lines.append(f"| `hlo-run` / NumPy script, whole process: {what} | {cells} | {target} |")
    big = res.get("big")
    if big:
        for k, label in (("check", "`hlo check` / `hlo fmt`"), ("info", "`hlo info` / `hlo fmt`")):
            cells = " | ".join(f"{_f(big[n][f'{k}_s'])} / {_f(big[n]['fmt_s'])} = {_f(big[n][f'{k}_over_fmt'], 'x')} "
                               f"({_f(big[n][f'{k}_over_fmt_cpu'], 'x')} cpu)" for n in names)
            lines.append(f"| {label}, 100k-instruction module ({big['mb']} MB) | {cells} | <= 1.0x |")
    for label, row in res.get("vs_xla", {}).items():
        cells = " | ".join(f"{_f(row[n]['throughput_over_xla'], 'x')} ({_f(row[n]['fmt_s'])} vs "
                           f"{_f(row['xla_s'])})" for n in names)
        target = ">= 0.3x" if "1 MB" in label else ">= 0.6x"
        lines.append(f"| `hlo fmt` throughput / XLA's C++ parser, in-process, {label} ({row['mb']} MB) | {cells} "
                     f"| {target} |")
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--base", help="a git revision of this checkout to measure too (as 'base')")
    ap.add_argument("--tree", action="append", default=[], metavar="NAME=PATH", help="another checkout")
    ap.add_argument("--rounds", type=int, default=11, help="start-up rounds")
    ap.add_argument("--run-rounds", type=int, default=5)
    ap.add_argument("--big-rounds", type=int, default=3)
    ap.add_argument("--repeat", type=int, default=3, help="in-process repeats against XLA's parser")
    ap.add_argument("--models", default=",".join(RUN_MODELS + ["loop"]))
    ap.add_argument("--skip", default="", help="comma list of sections to skip: startup,run,big,xla")
    ap.add_argument("--quick", action="store_true", help="few rounds (a smoke run, not a measurement)")
    ap.add_argument("--out", type=Path, default=OUT / "table.json")
    args = ap.parse_args(argv)
    if args.quick:
        args.rounds, args.run_rounds, args.big_rounds, args.repeat = 3, 1, 1, 1
    skip = set(filter(None, args.skip.split(",")))
    srcs = {}
    worktree = None
    with tempfile.TemporaryDirectory() as d:
        d = Path(d)
        if args.base:
            worktree = d / "base-src"
            subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", str(worktree), args.base],
                           check=True, capture_output=True)
            srcs["base"] = worktree
        for t in args.tree:
            name, _, path = t.partition("=")
            srcs[name] = Path(path).resolve()
        srcs["now"] = ROOT
        try:
            trees = {name: install(src, d / "site" / name) for name, src in srcs.items()}
            work = d / "work"
            work.mkdir()
            res: dict = {"trees": {n: str(s) for n, s in srcs.items()}, "load_avg": os.getloadavg()}
            if "startup" not in skip:
                res["startup"] = startup(trees, work, args.rounds)
                print(f"  start-up: {json.dumps(res['startup'])}", file=sys.stderr)
            if "run" not in skip:
                res["hlo_run"] = hlo_run(trees, work, [m for m in args.models.split(",") if m], args.run_rounds)
            if "big" not in skip:
                res["big"] = big_module(trees, work, args.big_rounds)
                print(f"  100k module: {json.dumps(res['big'])}", file=sys.stderr)
            elif "xla" not in skip:
                from parse import synthetic
                (work / "big100k.hlo").write_text(synthetic(100_000))
            if "xla" not in skip:
                res["vs_xla"] = vs_xla(trees, work, args.repeat)
            res["load_avg_end"] = os.getloadavg()
        finally:
            if worktree is not None:
                subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(worktree)],
                               capture_output=True)
    names = list(srcs)
    if "startup" not in res:
        res["startup"] = None
    print(f"\nmedians; whole-process figures: wall (cpu = user+system of the process); "
          f"load average {res['load_avg'][0]:.1f} at start, {res['load_avg_end'][0]:.1f} at the end on "
          f"{os.cpu_count()} CPUs; trees: " + ", ".join(f"{n} = {s}" for n, s in res["trees"].items()) + "\n")
    if res["startup"] is not None:
        print(render(res, names))
    else:
        res2 = dict(res)
        res2["startup"] = {n: {"fmt": {"wall_s": None, "cpu_s": None}, "check": {"wall_s": None, "cpu_s": None}}
                           for n in names}
        res2["startup"]["import numpy"] = {"wall_s": None, "cpu_s": None}
        print(render(res2, names))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(res, indent=2, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
