#!/usr/bin/env python3
"""Differential harness over the HLO texts of XLA's own test suite (dev-only: needs jax/jaxlib and a
git mirror of XLA's sources; nothing here is imported by hlo_interp or its tests).

    python3 tools/xla_testsuite.py extract --repo DIR [--rev REV] [--out DIR]
    python3 tools/xla_testsuite.py parse   [--out DIR] [--match SUBSTR] [--show N]
    python3 tools/xla_testsuite.py run     [--out DIR] [--match SUBSTR] [--show N] [--limit N] [--every N]
                                           [--timeout S] [--our-timeout S] [--redo OUTCOMES]
    python3 tools/xla_testsuite.py table   [--out DIR]

extract  reads, at one revision of XLA's sources (`git show`, no checkout needed), the files
         xla/tests/*.cc, xla/service/**/*_test.cc, xla/hlo/**/*_test.cc, xla/backends/**/tests/*.hlo,
         xla/tools/**/data/*.hlo, xla/**/*_test.cc holding `HloModule`, and writes every HLO text found
         in them to OUT/texts/NNNNN.hlo, with OUT/manifest.json giving each text's source file and line.
         In C++ sources a text is a raw string literal `R"delim(...)delim"` that holds `ENTRY` or
         `HloModule`; an .hlo file is one text per `// -----` piece.
parse    gives each text to XLA's parser (jaxlib `hlo_module_from_text`, in a helper process that is
         restarted when XLA aborts) and to `hlo check --syntax-only` (hlo_interp.cli.check_text), and
         sorts the texts: both accept / both reject / we reject what XLA accepts / we accept what XLA
         rejects.  Results in OUT/parse.json.
run      runs each text XLA's parser accepts on XLA:CPU (the module converted to StableHLO and compiled
         as tools/oracle/runner.py does; one device) and with hlo_interp.run, both on the same seeded inputs
         (hlo_interp.ops.random_values.random_value, seed 0), and sorts the outcomes:
           pass          the results agree (ints/pred exactly, floats within hlo-run's --compare defaults);
           mismatch      both ran, the results differ;
           our error     XLA:CPU ran it, hlo_interp raised (an HloError or an internal error);
           multi-device  an `our error` saying the module needs several devices (its collectives name
                         them; hlo-run runs them on that many simulated devices, hlo_interp.run refuses);
           xla-cannot    XLA:CPU cannot compile/run it on the CPU (TPU/GPU-only ops, several devices, ...);
           both-error    neither runs it.
         Results in OUT/run.json.
table    prints the summary tables (markdown) of parse.json and run.json.

DIR is a git repository (or bare mirror) of XLA's sources; --repo may be left out when the environment
variable XLA_REPO names one.  OUT defaults to build/xla_testsuite (ignored by git).  The texts are XLA's: they are not committed;
the regression cases derived from them are (tests/golden/, tests/corpus/).
"""
from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

REPO_ENV = "XLA_REPO"  # a git repository of XLA's sources, when --repo is not given
DEFAULT_REV = "upstream-jax-v0.9.2"
DEFAULT_OUT = ROOT / "build" / "xla_testsuite"
MAX_INPUT_BYTES = 64 << 20   # texts with larger inputs (benchmarks) are skipped
MAX_RUN_BYTES = 512 << 20    # hlo_interp.run's --max-bytes guard

_RAW = re.compile(r'R"([^()\\\s"]{0,16})\((.*?)\)\1"', re.S)


def _wanted(path: str) -> bool:
    if path.endswith(".hlo"):
        return ("/tests/" in path and path.startswith("xla/backends/")) or \
               (path.startswith("xla/tools/") and "/data/" in path)
    if not path.endswith(".cc"):
        return False
    if path.startswith("xla/tests/"):
        return True
    return path.endswith("_test.cc") and path.startswith("xla/")


def extract(args) -> None:
    repo, rev, out = args.repo, args.rev, Path(args.out)
    files = subprocess.run(["git", "-C", repo, "ls-tree", "-r", "--name-only", rev], check=True,
                           capture_output=True, text=True).stdout.split()
    files = [f for f in files if _wanted(f)]
    texts_dir = out / "texts"
    texts_dir.mkdir(parents=True, exist_ok=True)
    for old in texts_dir.glob("*.hlo"):
        old.unlink()
    manifest = []
    for f in files:
        try:
            src = subprocess.run(["git", "-C", repo, "show", f"{rev}:{f}"], check=True,
                                 capture_output=True).stdout.decode("utf-8", "replace")
        except subprocess.CalledProcessError:
            continue
        pieces = []
        if f.endswith(".hlo"):
            line = 1
            for piece in re.split(r"(?m)^// -----.*\n", src):
                if "ENTRY" in piece or "HloModule" in piece:
                    pieces.append((line, piece))
                line += piece.count("\n") + 1
        else:
            if "ENTRY" not in src and "HloModule" not in src:
                continue
            for m in _RAW.finditer(src):
                body = m.group(2)
                if "ENTRY" in body or "HloModule" in body:
                    pieces.append((src.count("\n", 0, m.start(2)) + 1, body))
        for line, body in pieces:
            i = len(manifest)
            (texts_dir / f"{i:05d}.hlo").write_text(body)
            manifest.append({"id": f"{i:05d}", "source": f, "line": line})
    (out / "manifest.json").write_text(json.dumps({"repo": repo, "rev": rev, "texts": manifest}, indent=0))
    print(f"{len(manifest)} texts from {len({m['source'] for m in manifest})} files of {rev} -> {texts_dir}")


# --------------------------------------------------------------------------------------------------
# A helper process running XLA (it may abort on some inputs: then it is restarted)

def _worker() -> None:
    """Reads one JSON request per line on stdin, answers one JSON line on stdout."""
    from jax._src.lib import hlo
    real_stdout = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)  # XLA's own prints must not garble the protocol
    for line in sys.stdin:
        req = json.loads(line)
        try:
            text = Path(req["path"]).read_text()
        except OSError as e:  # the harness's own mistake: say so (the worker stays up)
            real_stdout.write(json.dumps({"ok": False, "error": f"harness: {e}", "harness": True}) + "\n")
            real_stdout.flush()
            continue
        if req["op"] == "parse":
            try:
                hlo.hlo_module_from_text(text)
                ans = {"ok": True}
            except Exception as e:  # noqa: BLE001
                ans = {"ok": False, "error": _xla_message(str(e))}
        else:
            ans = _xla_run(text, req["inputs"])
        real_stdout.write(json.dumps(ans) + "\n")
        real_stdout.flush()


def _xla_message(msg: str) -> str:
    """The first located error of XLA's parser message ("was parsing L:C: error: ..."), or its first line."""
    m = re.search(r"was parsing (\d+:\d+: error: [^\n]*)", msg)
    if m:
        return m.group(1)[:300]
    msg = msg.strip()
    return (msg.splitlines()[0] if msg else "(no message)")[:300]


def _xla_run(text: str, inputs_path: str) -> dict:
    import numpy as np
    from tools.oracle.runner import run_hlo
    try:
        data = np.load(inputs_path, allow_pickle=False)
        keys = sorted((k for k in data.files if k.startswith("arg")), key=lambda k: int(k[3:]))
        args = [_unstore(data, k) for k in keys]
        _, leaves = run_hlo(text, args)
    except Exception as e:  # noqa: BLE001
        msg = str(e).strip()
        return {"ok": False, "error": (msg.splitlines()[0] if msg else repr(e))[:300]}
    out = inputs_path.replace(".inputs.npz", ".xla.npz")
    stored = {}
    meta = []
    for i, leaf in enumerate(leaves):
        from tools.oracle.writer import store
        arr, m = store(leaf)
        stored[f"out{i}"] = arr
        meta.append(m)
    np.savez(out, **stored)
    return {"ok": True, "out": out, "meta": meta}


def _unstore(data, key):
    import ml_dtypes  # noqa: F401
    arr = data[key]
    meta = json.loads(str(data["__meta__"]))[key] if "__meta__" in data.files else None
    if meta and "stored_as" in meta:
        import ml_dtypes as md
        arr = arr.view(getattr(md, meta["dtype"])).reshape(meta["shape"])
    return arr


class Xla:
    def __init__(self, timeout: float):
        self.timeout = timeout
        self.proc = None

    def _start(self):
        self.proc = subprocess.Popen([sys.executable, __file__, "_worker"], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                                     cwd=str(ROOT), env={**os.environ, "PYTHONPATH": str(ROOT)})

    def ask(self, req: dict) -> dict:
        if self.proc is None or self.proc.poll() is not None:
            self._start()
        import select
        self.proc.stdin.write(json.dumps(req) + "\n")
        self.proc.stdin.flush()
        ready, _, _ = select.select([self.proc.stdout], [], [], self.timeout)
        line = self.proc.stdout.readline() if ready else ""
        if not line:
            rc = self.proc.poll()
            if rc is None and ready:  # end of output: the worker is exiting (a crash), not stuck
                try:
                    rc = self.proc.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    rc = None
            if rc is None:
                self.proc.kill()
                self.proc.wait()
                self.proc = None
                return {"ok": False, "error": f"timeout after {self.timeout:g} s", "timeout": True}
            self.proc = None
            return {"ok": False, "error": f"XLA aborted (exit {rc})", "abort": True}
        return json.loads(line)

    def close(self):
        if self.proc is not None and self.proc.poll() is None:
            self.proc.stdin.close()
            self.proc.wait()


def _load(out: Path, match: str | None, ids: str | None = None):
    man = json.loads((out / "manifest.json").read_text())["texts"]
    if match:
        man = [m for m in man if match in m["source"] or match == m["id"]]
    if ids:
        wanted = set(Path(ids).read_text().split())
        man = [m for m in man if m["id"] in wanted]
    return man


def _where(m) -> str:
    return f"{m['source']}:{m['line']}"


# --------------------------------------------------------------------------------------------------

def parse_stage(args) -> None:
    from hlo_interp.cli import check_text
    out = Path(args.out).resolve()  # the XLA worker runs in ROOT: it is given absolute paths
    man = _load(out, args.match, args.ids)
    old = {}
    pj = out / "parse.json"
    if pj.exists() and (args.match or args.ids):
        old = {r["id"]: r for r in json.loads(pj.read_text())}
    xla = Xla(args.timeout)
    results = []
    t_ours = 0.0
    for m in man:
        path = out / "texts" / f"{m['id']}.hlo"
        text = path.read_text()
        x = xla.ask({"op": "parse", "path": str(path)})
        t = time.perf_counter()
        try:
            fs = check_text(text, f"{m['source']}", syntax_only=True)
            ours = {"ok": not fs, "error": f"{fs[0].line}:{fs[0].column}: {fs[0].message}" if fs else None}
        except Exception as e:  # noqa: BLE001
            ours = {"ok": False, "error": f"INTERNAL {type(e).__name__}: {e}"[:300]}
        t_ours += time.perf_counter() - t
        rec = {"id": m["id"], "where": _where(m), "xla": x.get("ok"), "xla_error": x.get("error"),
               "ours": ours["ok"], "our_error": ours.get("error")}
        if not x.get("ok") and ours["ok"]:
            # XLA's parser also checks what `hlo check` (not --syntax-only) checks: does that reject it?
            try:
                errs = [f for f in check_text(text, m["source"]) if f.severity == "error"]
                rec["check"] = not errs
                rec["check_error"] = f"{errs[0].line}:{errs[0].column}: [{errs[0].code}] {errs[0].message}" \
                    if errs else None
            except Exception as e:  # noqa: BLE001
                rec["check"] = False
                rec["check_error"] = f"INTERNAL {type(e).__name__}: {e}"[:300]
        results.append(rec)
    xla.close()
    if old:
        old.update({r["id"]: r for r in results})
        allres = sorted(old.values(), key=lambda r: r["id"])
    else:
        allres = results
    pj.write_text(json.dumps(allres, indent=0))
    _parse_summary(results, args.show)
    print(f"(our parse time {t_ours:.1f} s for {len(results)} texts)")


def _parse_summary(results, show: int) -> None:
    c = Counter((r["xla"], r["ours"]) for r in results)
    print("| XLA's parser | hlo check --syntax-only | texts |\n|---|---|---:|")
    for (x, o), n in sorted(c.items(), key=lambda kv: (not kv[0][0], not kv[0][1])):
        print(f"| {'accepts' if x else 'rejects'} | {'accepts' if o else 'rejects'} | {n} |")
    bad = [r for r in results if r["xla"] and not r["ours"]]
    if bad and show:
        print(f"\nwe reject, XLA accepts ({len(bad)}):")
        for r in bad[:show]:
            print(f"  {r['id']} {r['where']}: {r['our_error']}")
    lax = [r for r in results if not r["xla"] and r["ours"]]
    if lax:
        c2 = Counter("accepts" if r.get("check") else "rejects" for r in lax)
        print(f"\nOf the {len(lax)} texts XLA's parser rejects and our syntax check passes, `hlo check` "
              f"rejects {c2['rejects']}, accepts {c2['accepts']}.")
        acc = [r for r in lax if r.get("check")]
        for r in acc[:show]:
            print(f"  {r['id']} {r['where']}: XLA: {r['xla_error']}")


# --------------------------------------------------------------------------------------------------

def _defined_counts(module, value) -> list[int] | None:
    """For an entry whose result has bounded dynamic dimensions: per result leaf, how many leading
    elements (row-major) are defined.  XLA:CPU returns such a result as its bound-sized buffer with the
    elements of the dynamic sizes compact at the start and the rest uninitialized (hlo_interp gives
    zeros there); the count is the size of the root's `value` itself (Executable.value), before that
    padding."""
    import numpy as np
    from hlo_interp.evaluator import flatten_result
    from hlo_interp.ops.dynamic import has_bounded_dynamic
    root = module.entry.root
    if root.shape is None or not has_bounded_dynamic(root.shape):
        return None
    return [int(np.asarray(leaf).size) for leaf in flatten_result(value)]


def _compare(got, want, module=None, defined=None) -> tuple[bool, str]:
    """hlo-run --compare's default rule: per result leaf, the tolerance its module's numerics give
    (coarsest float type, longest reduction) when `module` is given.  `defined`: per leaf, how many
    leading elements to compare (results of dynamic shapes, see _defined_counts)."""
    from hlo_interp.compare import compare_leaf, leaf_numerics
    import numpy as np
    if len(got) != len(want):
        return False, f"{len(got)} leaves, XLA {len(want)}"
    numerics = leaf_numerics(module) if module is not None else []
    for i, (g, w) in enumerate(zip(got, want)):
        g, w = np.asarray(g), np.asarray(w)
        if defined is not None and g.shape == w.shape:
            g, w = g.reshape(-1)[:defined[i]], w.reshape(-1)[:defined[i]]
        c = compare_leaf(g, w, numerics=numerics[i] if i < len(numerics) else None)
        if not c.ok:
            return False, f"out{i}: {c.line}"[:300]
    return True, ""


def run_stage(args) -> None:
    import numpy as np
    import hlo_interp
    from hlo_interp import ir
    from hlo_interp.evaluator import Executable, make_options
    from hlo_interp.ops.random_values import random_value
    from tools.oracle.writer import store
    out = Path(args.out).resolve()  # the XLA worker runs in ROOT: it is given absolute paths
    parsed = {r["id"]: r for r in json.loads((out / "parse.json").read_text())}
    man = [m for m in _load(out, args.match, args.ids) if parsed.get(m["id"], {}).get("xla")]
    if args.no_header_counts:
        man = [m for m in man if not re.search(r"replica_count|num_partitions",
                                               (out / "texts" / f"{m['id']}.hlo").read_text())]
    if args.grep:
        pat = re.compile(args.grep)
        man = [m for m in man if pat.search((out / "texts" / f"{m['id']}.hlo").read_text())]
    rj = out / "run.json"
    if args.redo:  # only the texts an earlier run sorted as one of these outcomes (XLA's side is cached)
        want = {w.strip() for w in args.redo.split(",")}
        before = {r["id"]: _outcome(r) for r in json.loads(rj.read_text())} if rj.exists() else {}
        man = [m for m in man if before.get(m["id"]) in want]
    if args.every > 1:  # an even sample: every N-th text XLA parses
        man = man[args.every_offset::args.every]
    if args.limit:
        man = man[:args.limit]
    work = out / "run"
    work.mkdir(exist_ok=True)
    partial = (args.match or args.limit or args.ids or args.grep or args.every > 1 or args.no_header_counts
               or args.redo)
    old = {r["id"]: r for r in json.loads(rj.read_text())} if rj.exists() and partial else {}
    xla = Xla(args.timeout)
    results = []
    for k, m in enumerate(man):
        path = out / "texts" / f"{m['id']}.hlo"
        text = path.read_text()
        rec = {"id": m["id"], "where": _where(m)}
        # inputs from the entry signature, as hlo-run --random-inputs --seed 0 makes them
        try:
            mod = hlo_interp.parse(text, m["source"])
            entry = mod.entry
            rng = np.random.default_rng(0)
            params = [i for i in entry.instructions if i.opcode == "parameter"]
            params.sort(key=lambda i: i.parameter_number)
            if any(not isinstance(p.shape, ir.ArrayShape) or p.shape.element_type.dtype is None for p in params):
                raise ValueError("tuple/token parameters")
            nbytes = sum(int(np.prod(p.shape.dims, dtype=np.int64)) * 8 for p in params)
            if nbytes > MAX_INPUT_BYTES:
                raise ValueError(f"inputs of {nbytes / 2**20:.0f} MiB (over {MAX_INPUT_BYTES >> 20} MiB)")
            args_ = [random_value(p.shape, rng) for p in params]
        except Exception as e:  # noqa: BLE001
            rec.update(outcome="skip", detail=f"no inputs: {type(e).__name__}: {e}"[:200])
            results.append(rec)
            continue
        stored, meta = {}, {}
        for i, a in enumerate(args_):
            arr, md = store(a)
            stored[f"arg{i}"] = arr
            meta[f"arg{i}"] = md
        inp = work / f"{m['id']}.inputs.npz"
        cached = work / f"{m['id']}.xla.json"
        if cached.exists() and not args.fresh:  # XLA's outcome of an earlier run (same seeded inputs)
            x = json.loads(cached.read_text())
        else:
            np.savez(inp, __meta__=np.array(json.dumps(meta)), **stored)
            x = xla.ask({"op": "run", "path": str(path), "inputs": str(inp)})
            if x.get("harness"):
                raise SystemExit(f"the XLA worker could not read its input: {x['error']}")
            if not x.get("timeout"):
                cached.write_text(json.dumps(x))
        t = time.perf_counter()
        try:
            with _deadline(args.our_timeout):
                exe = Executable(mod, make_options(MAX_RUN_BYTES, None, False, False, "flush", None))
                value = exe.value(*args_)
                got, defined = exe.outputs(value), _defined_counts(mod, value)
            ours = {"ok": True}
        except _OurTimeout:
            ours = {"ok": False, "error": f"timeout after {args.our_timeout:g} s (hlo_interp.run)"}
        except hlo_interp.HloError as e:
            if isinstance(e.__cause__, _OurTimeout):  # the evaluator locates any exception of a kernel
                ours = {"ok": False, "error": f"timeout after {args.our_timeout:g} s (hlo_interp.run)"}
            else:
                ours = {"ok": False, "error": str(e).splitlines()[0][:300]}
        except Exception as e:  # noqa: BLE001
            ours = {"ok": False, "error": f"INTERNAL {type(e).__name__}: {e}"[:300]}
        rec["our_time"] = round(time.perf_counter() - t, 3)
        if not x.get("ok"):
            rec.update(outcome="xla-cannot" if ours["ok"] else "both-error", xla_error=x.get("error"),
                       our_error=ours.get("error"))
        elif not ours["ok"]:
            rec.update(outcome="our error", our_error=ours["error"])
        else:
            # (XLA's outputs are the .npz beside the cached outcome: the path recorded in it may be
            # relative to where an earlier run's --out was)
            data = np.load(work / f"{m['id']}.xla.npz")
            want = []
            for i, md in enumerate(x["meta"]):
                a = data[f"out{i}"]
                if "stored_as" in md:
                    import ml_dtypes
                    a = a.view(getattr(ml_dtypes, md["dtype"])).reshape(md["shape"])
                want.append(a)
            ok, why = _compare(got, want, mod, defined)
            rec.update(outcome="pass" if ok else "mismatch", detail=why)
        results.append(rec)
        if k % 50 == 49:  # save as we go: a long run can be stopped and read
            _save_run(rj, old, results)
        if args.progress and k % 100 == 0:
            print(f"  {k}/{len(man)}", file=sys.stderr)
    xla.close()
    _save_run(rj, old, results)
    _run_summary(results, args.show)


class _OurTimeout(BaseException):
    """Raised by the alarm in hlo_interp.run's frames (a BaseException: no `except Exception` there eats it)."""


class _deadline:
    def __init__(self, seconds: float):
        self.seconds = seconds

    def __enter__(self):
        import signal

        def ring(signum, frame):
            raise _OurTimeout()
        self.old = signal.signal(signal.SIGALRM, ring)
        signal.setitimer(signal.ITIMER_REAL, self.seconds)

    def __exit__(self, *exc):
        import signal
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, self.old)
        return False


def _save_run(rj: Path, old: dict, results: list) -> None:
    merged = dict(old)
    merged.update({r["id"]: r for r in results})
    rj.write_text(json.dumps(sorted(merged.values(), key=lambda r: r["id"]), indent=0))


_MULTI_DEVICE = ("single-device run", "the entry's shape on one device", "is out of range: there are 1 ")
# The texts whose `our error` or `mismatch` stays, each with the class of its reason (source:line ->
# class); `table` lists them by class under the counts.  Keep in step with tests/golden/README.md.
REASONS = {
    "elided": "a constant printed as `{...}`: XLA's parser leaves its buffer uninitialized (XLA:CPU gave "
              "0, 1, 2, ... from a counter that runs across texts); we refuse it, located, and offer "
              "--fake-constants",
    "endless": "a while loop whose condition never turns false and whose body, once simplified, leaves "
               "its state as it was: it never ends in HLO (XLA's own while_loop_simplifier keeps such a "
               "loop: while_loop_simplifier_test.cc, LoopWithEmptyTupleNotSimplified); the harness reaches "
               "XLA:CPU through StableHLO, whose simplifier (run when XLA converts StableHLO to HLO) reads "
               "loop results that do not change as the loop's inputs and deletes the unused loop before "
               "any HLO pass; we stop at the iteration budget, located",
    "aliasing": "a fusion declaring output_to_operand_aliasing its computation does not honour: XLA:CPU "
                "writes the aliased buffer, so its result depends on its buffer assignment",
    "layout-bitcast": "a bitcast between layouts (a transpose in memory): XLA:CPU's result is the "
                      "operand as it is (the bitcast a no-op; the harness reaches XLA through StableHLO, "
                      "where the entry's layouts are not kept), we transpose as the layouts say",
    "dot-order": "f32 dot accumulation order (XLA:CPU's Eigen/oneDNN blocking vs BLAS), amplified past the "
                 "tolerance by what follows (sine of sums near 1e3, a clamp that hides the magnitudes)",
    "tied-sort": "an unstable sort with tied keys (the seeded inputs repeat values): the order of ties is "
                 "unspecified",
    "dynamic-bound": "a dynamic size the seeded inputs put outside its bound or its operand (5 or 7 for "
                     "s32[<=4], -4, 6 elements from an operand of 0): outside XLA's contract; XLA:CPU keeps "
                     "the size as given (get-dimension-size gives 5); we refuse it, located",
    "fft-empty": "FFT with fft_length 0 on an operand with elements: XLA:CPU leaves its result buffer "
                 "uninitialized (1.5e24+4.6e-41j seen); we give zeros, as XLA's HloEvaluator does "
                 "(hlo_evaluator_test.cc expects them)",
    "scatter-alias": "a variadic scatter whose operands are one buffer (the same instruction, or two "
                     "equal constants XLA merges): XLA:CPU writes all its outputs into that buffer, so they "
                     "repeat one another (checked: with different constants XLA:CPU agrees with us)",
    "weak-order": "a sort comparator that is not a strict weak order (`compare(rhs_key, lhs_value)` mixes "
                  "the operands): XLA leaves the sort's result undefined",
    "folded": "complex division of constants only: XLA folds it while compiling and gets nan+nan j for "
              "(nan+inf j)/(1+1j); its run-time kernel (EmitComplexDivide) gives inf+inf j, as we do "
              "(checked with the same values as parameters: golden case complex_divide_inf_nan_parts)",
    "conv-speed": "a convolution of 6e10 multiply-adds over an input that is mostly padding (3x3 input, "
                  "30x30 window, padding 29): over the 60 s deadline",
    "clamp-order": "a clamp whose lower bound exceeds its upper one (the seeded inputs): XLA's simplifier "
                   "rewrites maximum(lo, clamp(lo, x, hi)) to the clamp, which holds only for lo <= hi; we "
                   "compute the text (clamp = min(max(x, lo), hi))",
    "dead-call-operand": "a custom call with an unknown target whose result only an unused parameter of a "
                         "`call` reads: XLA inlines the call and deletes the then-dead custom call; we "
                         "evaluate the call's operands and refuse the target",
    "invalid": "a module XLA's verifier rejects (hlo_verifier_test.cc expects the error: an "
               "all-reduce-start with a tuple result) and the harness's StableHLO path still runs: we "
               "refuse it, located",
    "loop-budget": "a loop that ends only when its s32 counter wraps around (counting down from 42 while "
                   "< 100: 2^31 iterations): XLA:CPU runs them; we stop at the iteration budget "
                   "(--max-iterations, 10^6 by default), located",
    "solve-order": "a triangular solve of a random, ill-conditioned f32 matrix (values up to 5e31): 78 of "
                   "49152 elements differ in the third digit, the substitution's rounding order amplified",
    "rng": "the `rng` opcode: random values from XLA:CPU's own generator (its RngExpander's), ours from a "
           "seeded NumPy generator; neither is defined by the text",
    "xla-garbage": "XLA:CPU returns uninitialized memory for one output of a multi-output loop fusion "
                   "whose other output is a parameter (values like -7e22 and 4.6e-41)",
}
_DIR = "xla/service/"
KNOWN = {
    **{w: "elided" for w in (
        "xla/hlo/parser/hlo_parser_test.cc:3303", "xla/hlo/tools/hlo_diff/hlo_diff_result_test.cc:291",
        "xla/hlo/transforms/simplifiers/reshape_mover_test.cc:78",
        "xla/hlo/transforms/simplifiers/reshape_mover_test.cc:125",
        "xla/hlo/transforms/simplifiers/reshape_mover_test.cc:170", _DIR + "cpu/cpu_instruction_fusion_test.cc:979",
        _DIR + "cpu/small_while_loop_hoisting_pass_test.cc:82", _DIR + "cpu/tests/onednn_matmul_test.cc:1071",
        _DIR + "cpu/tests/onednn_matmul_test.cc:1701", _DIR + "cpu/tests/onednn_matmul_test.cc:1770",
        _DIR + "gpu/tests/swap_conv_operands_test.cc:111",
        _DIR + "memory_space_assignment/memory_space_assignment_test.cc:8535",
        _DIR + "while_loop_unroller_test.cc:1131",
        "xla/backends/gpu/codegen/triton/triton_gemm_fusion_test.cc:1440",
        "xla/backends/gpu/transforms/priority_fusion_test.cc:846",
        "xla/hlo/tools/hlo_diff/hlo_diff_result_test.cc:315", _DIR + "cpu/parallel_task_assignment_test.cc:236",
        "xla/hlo/transforms/simplifiers/reshape_mover_test.cc:156",
        _DIR + "while_loop_all_reduce_code_motion_test.cc:967", _DIR + "cpu/cpu_compiler_test.cc:65",
        _DIR + "cpu/cpu_instruction_fusion_test.cc:959",
        _DIR + "memory_space_assignment/memory_space_assignment_test.cc:8503",
        _DIR + "while_loop_all_reduce_code_motion_test.cc:806")},
    **{w: "endless" for w in (
        _DIR + "gpu/gpu_latency_hiding_scheduler_test.cc:280", _DIR + "sharding_propagation_test.cc:11161",
        _DIR + "while_loop_simplifier_test.cc:405", _DIR + "while_loop_simplifier_test.cc:744",
        "xla/hlo/transforms/collectives/all_gather_combiner_test.cc:125", "xla/hlo/analysis/hlo_ordering_test.cc:551",
        _DIR + "copy_insertion_test.cc:3284", _DIR + "sharding_propagation_test.cc:1390",
        _DIR + "value_range_test.cc:130", _DIR + "while_loop_simplifier_test.cc:797",
        _DIR + "while_loop_simplifier_test.cc:1650", _DIR + "while_util_test.cc:45",
        _DIR + "while_loop_simplifier_test.cc:823", _DIR + "while_util_test.cc:145")},
    _DIR + "while_loop_simplifier_test.cc:281": "loop-budget",
    _DIR + "triangular_solve_expander_test.cc:41": "solve-order",
    **{w: "dynamic-bound" for w in (
        "xla/hlo/evaluator/hlo_evaluator_test.cc:6117", _DIR + "dynamic_padder_test.cc:2375",
        _DIR + "dynamic_padder_test.cc:724", _DIR + "dynamic_padder_test.cc:2396",
        "xla/tests/dynamic_reshape_test.cc:31", "xla/tests/dynamic_reshape_test.cc:122",
        "xla/tests/dynamic_reshape_test.cc:61")},
    _DIR + "elemental_ir_emitter_test.cc:210": "folded",
    _DIR + "gpu/tests/swap_conv_operands_test.cc:49": "conv-speed",
    **{w: "fft-empty" for w in (
        "xla/hlo/evaluator/hlo_evaluator_test.cc:3652", "xla/hlo/evaluator/hlo_evaluator_test.cc:3706")},
    **{w: "dot-order" for w in (
        "xla/backends/gpu/codegen/triton/triton_gemm_fusion_test.cc:1520", _DIR + "cpu/tests/onednn_matmul_test.cc:1441")},
    "xla/hlo/analysis/hlo_dataflow_analysis_test.cc:3231": "aliasing",
    **{w: "layout-bitcast" for w in (
        "xla/hlo/evaluator/hlo_evaluator_test.cc:6237", "xla/hlo/evaluator/hlo_evaluator_test.cc:6194",
        "xla/hlo/evaluator/hlo_evaluator_test.cc:6216", _DIR + "gpu/tests/gpu_kernel_tiling_test.cc:239",
        "xla/hlo/transforms/simplifiers/algebraic_simplifier_test.cc:13310")},
    **{w: "tied-sort" for w in (
        "xla/hlo/transforms/expanders/permutation_sort_expander_test.cc:111",
        "xla/backends/gpu/transforms/sort_rewriter_test.cc:256", "xla/backends/gpu/transforms/sort_rewriter_test.cc:202",
        "xla/hlo/transforms/expanders/permutation_sort_expander_test.cc:34",
        "xla/hlo/transforms/expanders/permutation_sort_expander_test.cc:147",
        "xla/hlo/transforms/expanders/permutation_sort_expander_test.cc:77",
        "xla/hlo/transforms/expanders/permutation_sort_expander_test.cc:175",
        "xla/hlo/transforms/simplifiers/sort_simplifier_test.cc:105", "xla/tests/test_utils_test.cc:129")},
    **{w: "rng" for w in ("xla/hlo/transforms/simplifiers/hlo_element_type_converter_test.cc:150",
                          _DIR + "spmd/spmd_partitioner_test.cc:8020",
                          _DIR + "spmd/stateful_rng_spmd_partitioner_test.cc:110")},
    **{w: "scatter-alias" for w in ("xla/backends/gpu/transforms/scatter_slice_simplifier_test.cc:267",
                                    _DIR + "copy_insertion_test.cc:2884", _DIR + "spmd/spmd_partitioner_test.cc:8863")},
    _DIR + "hlo_verifier_test.cc:1792": "invalid",
    "xla/backends/gpu/transforms/sort_rewriter_test.cc:409": "weak-order",
    **{w: "xla-garbage" for w in (_DIR + "hlo_instruction_test.cc:3183", _DIR + "hlo_instruction_test.cc:3117",
                                  _DIR + "hlo_instruction_test.cc:3147")},
    "xla/hlo/transforms/simplifiers/algebraic_simplifier_test.cc:10265": "clamp-order",
    _DIR + "buffer_assignment_test.cc:2942": "dead-call-operand",
}


_OVER_LIMIT = "(max_bytes / --max-bytes)"


def _outcome(r) -> str:
    """`our error` on a module written for several devices is its own class: XLA:CPU runs it on one
    device (a collective over a group naming absent devices then returns its operand, or leaves the part
    of its result the absent devices would give uninitialized), we say which --replicas/--partitions run
    it (hlo-run runs them by default).  A result over the harness's MAX_RUN_BYTES is a skip."""
    err = r.get("our_error") or ""
    if r["outcome"] == "our error" and any(m in err for m in _MULTI_DEVICE):
        return "multi-device"
    if r["outcome"] == "our error" and _OVER_LIMIT in err:
        return "skip"
    return r["outcome"]


def _run_summary(results, show: int) -> None:
    c = Counter(_outcome(r) for r in results)
    print("| outcome | texts |\n|---|---:|")
    for k in ("pass", "mismatch", "our error", "multi-device", "xla-cannot", "both-error", "skip"):
        print(f"| {k} | {c.get(k, 0)} |")
    for kind, key in (("our error", "our_error"), ("mismatch", "detail")):
        bad = [r for r in results if _outcome(r) == kind]
        if not bad:
            continue
        print(f"\n{kind} ({len(bad)}):")
        by_class: dict = {}
        for r in bad:
            if r["where"] in KNOWN:
                by_class.setdefault(KNOWN[r["where"]], []).append(r["where"])
        for cls, wheres in sorted(by_class.items(), key=lambda kv: -len(kv[1])):
            print(f"- {len(wheres)} x {REASONS[cls]}: " + ", ".join(f"`{w}`" for w in sorted(wheres)))
        unknown = [r for r in bad if r["where"] not in KNOWN]
        if unknown:
            print(f"  ({len(unknown)} without a reason in KNOWN)")
        for r in unknown[:show]:
            print(f"  {r['id']} {r['where']}: {r.get(key)}")


def table(args) -> None:
    out = Path(args.out)
    if (out / "parse.json").exists():
        _parse_summary(json.loads((out / "parse.json").read_text()), args.show)
    if (out / "run.json").exists():
        print()
        _run_summary(json.loads((out / "run.json").read_text()), args.show)


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "_worker":
        _worker()
        return
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    for name in ("extract", "parse", "run", "table"):
        p = sub.add_parser(name)
        p.add_argument("--out", default=str(DEFAULT_OUT))
        p.add_argument("--show", type=int, default=40)
        if name == "extract":
            repo = os.environ.get(REPO_ENV)
            p.add_argument("--repo", default=repo, required=not repo,
                           help=f"a git repository (or bare mirror) of XLA's sources (default: ${REPO_ENV})")
            p.add_argument("--rev", default=DEFAULT_REV)
        else:
            p.add_argument("--match", help="only texts whose source path contains this (or this text id)")
            p.add_argument("--ids", help="only the text ids listed in this file")
            p.add_argument("--grep", help="only texts matching this regular expression (run)")
            p.add_argument("--no-header-counts", action="store_true",
                           help="(run) only texts whose header gives no replica_count/num_partitions")
            p.add_argument("--timeout", type=float, default=60.0, help="seconds XLA gets per text")
            p.add_argument("--our-timeout", type=float, default=60.0,
                           help="(run) seconds hlo_interp.run gets per text (then `our error`: timeout)")
            p.add_argument("--limit", type=int, default=0)
            p.add_argument("--every", type=int, default=1, help="(run) only every N-th text XLA parses")
            p.add_argument("--every-offset", type=int, default=0, help="(run) the first of those (0..N-1)")
            p.add_argument("--progress", action="store_true")
            p.add_argument("--fresh", action="store_true", help="(run) ignore XLA outcomes cached in OUT/run/")
            p.add_argument("--redo", help="(run) only the texts run.json sorts as one of these outcomes "
                                          "(comma-separated, e.g. 'our error,mismatch'); XLA's are cached")
    args = ap.parse_args()
    {"extract": extract, "parse": parse_stage, "run": run_stage, "table": table}[args.cmd](args)


if __name__ == "__main__":
    main()
