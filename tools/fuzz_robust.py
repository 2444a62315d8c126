#!/usr/bin/env python3
"""Long fuzz run: every command on mutated modules, under a memory limit.

Each mutant (a corpus module after 1-4 random edits: numbers made huge, negative or zero, opcodes,
operands and shapes swapped, text deleted, duplicated or cut, hostile pieces inserted) goes through

- in worker processes (each under RLIMIT_AS, default 4 GiB; one mutant at a time, timed out and
  restarted when it hangs): the Python API behind every command: parse, fmt (to_text and re-parse),
  check, info, diff (against the original), graph, and hlo-run's path (verify, build, random inputs,
  run with --max-bytes 256M);  anything raised that is not the located HloError / InputError is a
  failure ("internal"), a MemoryError too ("oom");
- every --cli-every'th mutant also through the real commands as a user runs them
  (`hlo fmt|check|info|graph`, `hlo diff`, `hlo-run --random-inputs`) in subprocesses under the same
  limit: a traceback on stderr, a timeout, or an exit status outside {0, 1, 2, 141} is a failure.

    nice -n 10 python3 tools/fuzz_robust.py --mutants 20000 [--jobs 2] [--seed 1] [--cli-every 250]

Prints progress, then the counts, the time, and every distinct failure (with a reproducer written to
--out, default /tmp/hlo-fuzz).  Exit status 1 when anything failed.
"""
from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import random
import re
import resource
import subprocess
import sys
import time
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

OK_EXITS = {0, 1, 2, 141}
PIECES = ["{", "}", "(", ")", "[", "]", ",", "=", "%", "->", ":", "\"", "/*", "*/", "//", "\n", " ", "0", "-1",
          "1e9", "nan", "inf", "true", "false", "f32[]", "ROOT", "ENTRY", "HloModule", "{...}", "x", "T(8,128)",
          "{1,0:T(2)}", "constant(", "parameter(", "3x3", "0_0x1_1", "b01f_01io->b01f", "\\", "\t", "\u00e9",
          "\x00", "99999999999999999999999", "9" * 5000, "-9223372036854775808", "18446744073709551616",
          "2147483648", "<=", "?", "s64[]", "pred[]", "c64[]", "(f32[], s32[])", "replica_groups={{0,1}}",
          "channel_id=1", "dimensions={0}", "index=7", "slice={[0:99999]}", "padding=0_99999",
          "window={size=999999}", "to_apply=e", "calls=e", "body=e", "condition=e", "frontend_attributes={a=b}"]
NUMBERS = ["0", "1", "-1", "2", "3", "7", "64", "65", "1000", "65535", "2147483647", "2147483648", "4294967296",
           "100000000", "9223372036854775807", "9223372036854775808", "18446744073709551615",
           "99999999999999999999"]
OPCODES = ["add", "negate", "exponential", "tuple", "get-tuple-element", "broadcast", "reshape", "transpose",
           "slice", "concatenate", "dot", "convolution", "reduce", "reduce-window", "pad", "iota", "while",
           "call", "fusion", "select", "compare", "convert", "bitcast", "gather", "scatter", "sort",
           "dynamic-slice", "dynamic-update-slice", "all-reduce", "custom-call", "copy", "rng", "fft",
           "cholesky", "triangular-solve", "reduce-precision", "clamp", "map", "conditional"]


# --------------------------------------------------------------------------------------------------
# Mutation

def mutate(text: str, rng: random.Random) -> str:
    for _ in range(rng.randint(1, 4)):
        if not text:
            break
        kind = rng.choice(["number", "number", "number", "opcode", "operand", "dims", "delete", "insert",
                           "duplicate", "swap_lines", "truncate", "drop_line"])
        n = len(text)
        i = rng.randrange(n)
        if kind == "number":
            ms = list(re.finditer(r"(?<![\w.])-?\d+(?![\w.])", text))
            if ms:
                m = rng.choice(ms)
                text = text[:m.start()] + rng.choice(NUMBERS) + text[m.end():]
        elif kind == "opcode":
            ms = list(re.finditer(r"\b([a-z][a-z0-9-]*)\(", text))
            if ms:
                m = rng.choice(ms)
                text = text[:m.start(1)] + rng.choice(OPCODES) + text[m.end(1):]
        elif kind == "operand":  # duplicate or drop an operand of a call
            ms = list(re.finditer(r"\((%?[\w.-]+)((?:, *%?[\w.-]+)*)\)", text))
            if ms:
                m = rng.choice(ms)
                first, rest = m.group(1), m.group(2)
                new = rng.choice([f"({first}, {first}{rest})", f"({rest.lstrip(', ')})" if rest else "()",
                                  f"({first})"])
                text = text[:m.start()] + new + text[m.end():]
        elif kind == "dims":
            ms = list(re.finditer(r"\[([0-9,]*)\]", text))
            if ms:
                m = rng.choice(ms)
                dims = m.group(1).split(",") if m.group(1) else []
                op = rng.choice(["add", "drop", "change"])
                if op == "add" or not dims:
                    dims.insert(rng.randint(0, len(dims)), rng.choice(NUMBERS[:9]))
                elif op == "drop":
                    dims.pop(rng.randrange(len(dims)))
                else:
                    dims[rng.randrange(len(dims))] = rng.choice(NUMBERS)
                text = text[:m.start()] + "[" + ",".join(dims) + "]" + text[m.end():]
        elif kind == "delete":
            text = text[:i] + text[min(n, i + rng.randint(1, 20)):]
        elif kind == "insert":
            text = text[:i] + rng.choice(PIECES) + text[i:]
        elif kind == "duplicate":
            j = min(n, i + rng.randint(1, 60))
            text = text[:j] + text[i:j] + text[j:]
        elif kind == "swap_lines":
            lines = text.split("\n")
            a, b = rng.randrange(len(lines)), rng.randrange(len(lines))
            lines[a], lines[b] = lines[b], lines[a]
            text = "\n".join(lines)
        elif kind == "drop_line":
            lines = text.split("\n")
            lines.pop(rng.randrange(len(lines)))
            text = "\n".join(lines)
        else:
            text = text[:i]
    return text


# --------------------------------------------------------------------------------------------------
# In-process: the API behind every command

def _limit(gb: float) -> None:
    n = int(gb * (1 << 30))
    resource.setrlimit(resource.RLIMIT_AS, (n, n))


def api_commands(text: str, original: str) -> list[tuple[str, str]]:
    """[(command, failure)] for the failures (internal errors) of every command on `text`."""
    import numpy as np
    import hlo_interp
    from hlo_interp import HloError
    from hlo_interp.files import InputError
    fails = []

    def guard(name, fn):
        try:
            return fn()
        except (HloError, InputError):
            return None
        except MemoryError:
            fails.append((name, "oom: MemoryError"))
        except RecursionError:
            fails.append((name, "internal: RecursionError"))
        except Exception as e:  # noqa: BLE001 - what we are looking for
            tb = traceback.extract_tb(e.__traceback__)
            where = next((f"{Path(f.filename).name}:{f.lineno}" for f in reversed(tb)
                          if "hlo_interp" in f.filename), "?")
            fails.append((name, f"internal: {type(e).__name__} at {where}: {str(e)[:120]}"))
        return None

    mods = guard("parse", lambda: hlo_interp.parse_all(text, "fuzz.hlo"))
    if not mods:
        return fails
    fails.append(("parsed", ""))
    m = mods[0]
    guard("fmt", lambda: [hlo_interp.parse_all(hlo_interp.format_text(text, "fuzz.hlo"))])
    guard("check", lambda: [hlo_interp.check(x) for x in mods])
    guard("info", lambda: hlo_interp.module_info(m).to_json())

    def diff():
        b = hlo_interp.parse(original, "orig.hlo")
        d = hlo_interp.diff_modules(m, b)
        d.to_json()
        d.to_text()
        d.unified()
    guard("diff", diff)

    def graph():
        from hlo_interp import graph as g
        gr = g.build(m)
        g.graph_to_dot(gr)
    guard("graph", graph)

    def run():
        from hlo_interp.cli_run import _random_args, verify_for_run
        from hlo_interp.evaluator import compile as build
        verify_for_run(m)
        exe = build(m, max_bytes=256 << 20, max_iterations=10000)
        args = _random_args(exe.params, np.random.default_rng(0), 256 << 20)
        exe(*args)
    guard("hlo-run", run)
    return fails


def worker(conn, mem_gb: float) -> None:
    _limit(mem_gb)
    import warnings
    warnings.simplefilter("ignore")
    import hlo_interp  # noqa: F401 - warm up before the first mutant
    while True:
        job = conn.recv()
        if job is None:
            return
        text, original = job
        conn.send(api_commands(text, original))


class Worker:
    def __init__(self, mem_gb: float):
        self.mem_gb = mem_gb
        self.start()

    def start(self):
        ctx = mp.get_context("fork")
        self.conn, child = ctx.Pipe()
        self.proc = ctx.Process(target=worker, args=(child, self.mem_gb), daemon=True)
        self.proc.start()

    def run(self, text, original, timeout):
        """failures, or None on a hang (the worker is killed and restarted), or 'died'."""
        try:
            self.conn.send((text, original))
        except (BrokenPipeError, OSError):
            self.restart()
            return "died"
        if self.conn.poll(timeout):
            try:
                return self.conn.recv()
            except EOFError:
                self.restart()
                return "died"
        self.restart()
        return None

    def restart(self):
        try:
            self.proc.kill()
            self.proc.join(5)
        except Exception:  # noqa: BLE001
            pass
        self.start()


# --------------------------------------------------------------------------------------------------
# Subprocess: the real commands

def cli_commands(path: Path, original: Path, mem_gb: float, timeout: float) -> list[tuple[str, str]]:
    env = dict(os.environ, NO_COLOR="1", PYTHONPATH=str(ROOT))
    env.pop("HLO_INTERP_DEBUG", None)
    cmds = [("fmt", ["-m", "hlo_interp", "fmt", str(path)]),
            ("check", ["-m", "hlo_interp", "check", str(path)]),
            ("info", ["-m", "hlo_interp", "info", str(path)]),
            ("diff", ["-m", "hlo_interp", "diff", str(path), str(original)]),
            ("graph", ["-m", "hlo_interp", "graph", str(path), "-o", str(path) + ".dot"]),
            ("hlo-run", ["-m", "hlo_interp.cli_run", "--random-inputs", "--max-bytes", "256M",
                         "--max-iterations", "10000", "--print", "none", str(path)])]
    fails = []
    for name, args in cmds:
        try:
            r = subprocess.run([sys.executable, *args], capture_output=True, text=True, env=env, timeout=timeout,
                               preexec_fn=lambda: _limit(mem_gb), errors="replace")
        except subprocess.TimeoutExpired:
            fails.append((f"cli {name}", "hang: timeout"))
            continue
        if "Traceback" in r.stderr:
            last = r.stderr.strip().splitlines()[-1][:120]
            fails.append((f"cli {name}", f"traceback: {last}"))
        elif r.returncode not in OK_EXITS:
            fails.append((f"cli {name}", f"exit {r.returncode}: {r.stderr.strip()[-120:]}"))
        elif "internal error" in r.stderr or "out of memory" in r.stderr:
            fails.append((f"cli {name}", f"internal: {r.stderr.strip().splitlines()[0][:140]}"))
    return fails


# --------------------------------------------------------------------------------------------------

def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--mutants", type=int, default=20000)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--mem-gb", type=float, default=4.0)
    ap.add_argument("--timeout", type=float, default=60.0, help="seconds per mutant (all API commands)")
    ap.add_argument("--cli-every", type=int, default=250, help="every Nth mutant also through the real CLI")
    ap.add_argument("--max-seed-bytes", type=int, default=6000)
    ap.add_argument("--out", default="/tmp/hlo-fuzz")
    a = ap.parse_args()
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    seeds = [p.read_text() for p in sorted((ROOT / "tests" / "corpus").rglob("*"))
             if p.suffix in (".hlo", ".txt") and p.is_file() and p.stat().st_size <= a.max_seed_bytes]
    rng = random.Random(a.seed)
    jobs = [(k, rng.randrange(len(seeds)), rng.getrandbits(64)) for k in range(a.mutants)]
    print(f"{len(seeds)} seed modules, {a.mutants} mutants, {a.jobs} workers, RLIMIT_AS {a.mem_gb} GiB", flush=True)
    t0 = time.time()
    counts = {"mutants": 0, "parsed": 0, "internal": 0, "oom": 0, "hangs": 0, "died": 0, "cli_runs": 0,
              "cli_tracebacks": 0, "cli_bad_exit": 0, "cli_hangs": 0, "cli_internal": 0}
    distinct: dict[str, tuple[int, str]] = {}

    def record(k, text, name, failure):
        key = f"{name}: {failure}"
        if key not in distinct:
            path = out / f"fail_{len(distinct):04d}.hlo"
            path.write_text(text)
            path.with_suffix(".txt").write_text(key + "\n")
            distinct[key] = (k, str(path))
            print(f"  new failure (mutant {k}): {key}  [{path}]", flush=True)

    import concurrent.futures as cf
    import threading
    lock = threading.Lock()
    workers = [Worker(a.mem_gb) for _ in range(a.jobs)]

    def one(w, k, seed_i, bits):
        r = random.Random(bits)
        original = seeds[seed_i]
        text = mutate(original, r)
        res = w.run(text, original, a.timeout)
        cli = []
        if a.cli_every and k % a.cli_every == 0:
            p = out / f"cur_{k % 1000}.hlo"
            o = out / f"orig_{k % 1000}.hlo"
            p.write_text(text)
            o.write_text(original)
            cli = cli_commands(p, o, a.mem_gb, max(a.timeout, 60))
        with lock:
            counts["mutants"] += 1
            if isinstance(res, list) and ("parsed", "") in res:
                counts["parsed"] += 1
                res = [x for x in res if x != ("parsed", "")]
            if res is None:
                counts["hangs"] += 1
                record(k, text, "api", "hang")
            elif res == "died":
                counts["died"] += 1
                record(k, text, "api", "worker died")
            else:
                for name, f in res:
                    counts["oom" if f.startswith("oom") else "internal"] += 1
                    record(k, text, name, f)
            if a.cli_every and k % a.cli_every == 0:
                counts["cli_runs"] += 1
            for name, f in cli:
                kind = {"traceback": "cli_tracebacks", "hang": "cli_hangs", "exit": "cli_bad_exit"}.get(
                    f.split(":")[0].split(" ")[0], "cli_internal")
                counts[kind] += 1
                record(k, text, name, f)
            if counts["mutants"] % 500 == 0:
                el = time.time() - t0
                print(f"  {counts['mutants']} mutants in {el:.0f} s ({counts['mutants'] / el:.1f}/s): "
                      + ", ".join(f"{k}={v}" for k, v in counts.items() if k != "mutants"), flush=True)

    queue = list(jobs)
    qlock = threading.Lock()

    def loop(w):
        while True:
            with qlock:
                if not queue:
                    return
                k, s, b = queue.pop(0)
            one(w, k, s, b)

    with cf.ThreadPoolExecutor(len(workers)) as ex:
        list(ex.map(loop, workers))
    for w in workers:
        try:
            w.conn.send(None)
        except Exception:  # noqa: BLE001
            pass
    el = time.time() - t0
    print(f"\n{counts['mutants']} mutants ({counts['parsed']} parse) in {el:.0f} s "
          f"({el / max(1, counts['mutants']) * 1000:.1f} ms each), {counts['cli_runs']} of them through the "
          f"CLI ({6 * counts['cli_runs']} command runs)")
    for k, v in counts.items():
        print(f"  {k:16s} {v}")
    if distinct:
        print(f"\n{len(distinct)} distinct failures:")
        for key, (k, path) in sorted(distinct.items()):
            print(f"  {key}  [mutant {k}: {path}]")
    bad = sum(v for k, v in counts.items() if k not in ("mutants", "parsed", "cli_runs"))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
