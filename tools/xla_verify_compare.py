#!/usr/bin/env python3
"""How often does our verdict (`hlo check`) agree with XLA's?  (dev-only: needs jax/jaxlib)

Texts compared:
  corpus     every text of tests/corpus (jax/, handwritten/ with xla_rejects/ and special/)
  cases      the hand-written mutations of tests/test_verify.py (real modules, one small change each)
  auto       seeded random mutations of corpus modules: change a dimension of a result shape, swap the
             operands of a binary instruction, change an element type, drop an attribute, rename an
             operand, change a parameter number (--auto N per kind)

Our verdict: "reject" when the text does not parse or any finding has severity error.

XLA's verdict, in a helper process (XLA aborts the process on some inputs: that counts as a
rejection and the helper is restarted):
  1. `jaxlib._hlo.hlo_module_from_text` (XLA's parser; it does NOT run the verifier);
  2. the module is converted to StableHLO (MLIR verifies every op's types) and compiled for the CPU,
     which runs XLA's HloVerifier first ("during context [hlo verifier]").
  A parse error (or an abort in the parser), an error of the round trip's op verifiers, of the proto
  validation or of the HloVerifier is a rejection.  A failure in the CPU backend (e.g. a TPU fusion it
  cannot emit, an unknown custom-call target) means the verifier passed: "accept".  What the round trip cannot carry (tuples in async ops, opaque
  types, after-layout-assignment layouts, aborts inside the converter) is "n/a": XLA gave no verdict
  on the module, so the text is left out of the agreement rate (as are multi-module files).

Known blind spots of this pipeline (XLA's verdict is wrong there, so they count as disagreements
although we follow XLA's verifier): the StableHLO round trip drops entry_computation_layout and
buffer_donor, re-derives get-tuple-element result shapes from the operand, drops extra dot operands,
and flattens nested tuples (parameters and results), which can make a valid module look invalid
(a fused parameter left without users, an alias index that no longer exists).

    python3 tools/xla_verify_compare.py [--auto N] [--show N] [--json FILE] [--only corpus,cases,auto]
"""
from __future__ import annotations

import argparse
import json
import random
import re
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

import hlo_interp  # noqa: E402
from hlo_interp.diagnostics import HloError  # noqa: E402

# --------------------------------------------------------------------------------------------------
# XLA's side: a helper process that answers one text per request

_HELPER = r'''
import os, sys, json
os.environ["TF_CPP_MIN_LOG_LEVEL"] = "3"
from jax._src.lib import xla_client as xc
from jax._src import xla_bridge
from jaxlib import _hlo
be = xla_bridge.get_backend("cpu")
# failures in the CPU backend, after the verifier passed
BACKEND = ("service/cpu/", "backends/cpu/", "thunk", "No registered implementation for",
           "No FFI handler registered", "custom call target", "CustomCall", "backend config",
           "during layout assignment")
# limits of the StableHLO round trip, not verdicts on the module
UNSUPPORTED = ("unregistered operation", "not supported", "Unsupported", "UNIMPLEMENTED",
               "minor_to_major field contains", "LayoutModeToXlaShape", "must have frontend attributes",
               "Failed to get shape", "failed to satisfy constraint", "new_producer->shape()",
               "unsupported shape", "layout.h:")
def say(*x):
    print(json.dumps(list(x)), flush=True)
for line in sys.stdin:
    text = json.loads(line)
    say("step", "parse")
    try:
        m = _hlo.hlo_module_from_text(text)
    except Exception as e:
        say("reject", "parse: " + " ".join(str(e).split())[:300])
        continue
    say("step", "compile")
    try:
        comp = _hlo.XlaComputation(m.as_serialized_hlo_module_proto())
        mlir = xc._xla.mlir.xla_computation_to_mlir_module(comp)
        be.compile_and_load(mlir, xc.DeviceList(tuple(be.devices()[:1])), xc.CompileOptions())
        say("accept", "")
    except Exception as e:
        msg = " ".join(str(e).split())
        if any(k in msg for k in UNSUPPORTED):
            say("n/a", "round trip: " + msg[:300])
        elif any(k in msg for k in BACKEND):
            say("accept", "backend (after the verifier): " + msg[:300])
        else:
            say("reject", "verify: " + msg[:300])
'''


class Xla:
    def __init__(self):
        self.proc = None

    def _start(self):
        self.proc = subprocess.Popen([sys.executable, "-c", _HELPER], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)

    def verdict(self, text: str) -> tuple[str, str]:
        if self.proc is None or self.proc.poll() is not None:
            self._start()
        step = None
        try:
            self.proc.stdin.write(json.dumps(text) + "\n")
            self.proc.stdin.flush()
            while True:
                line = self.proc.stdout.readline()
                if not line:
                    break
                v, why = json.loads(line)
                if v != "step":
                    return v, why
                step = why
        except (BrokenPipeError, OSError):
            pass
        self.proc.wait()
        self.proc = None
        if step == "parse":
            return "reject", "XLA's parser aborted the process (CHECK failure)"
        # an abort in the StableHLO round trip or the CPU compiler: no verdict on the module itself
        return "n/a", f"XLA aborted the process during {step}"

    def close(self):
        if self.proc is not None and self.proc.poll() is None:
            self.proc.stdin.close()
            self.proc.wait(timeout=30)


# --------------------------------------------------------------------------------------------------
# Our side

def ours(text: str, name: str) -> tuple[str, str]:
    try:
        modules = hlo_interp.parse_all(text, name)
    except HloError as e:
        return "reject", f"E001 {e.message}"
    if len(modules) != 1:
        return "n/a", "several modules"
    errs = [f for f in hlo_interp.check(modules[0]) if f.severity == "error"]
    if errs:
        return "reject", f"{errs[0].code} {errs[0].message}"
    return "accept", ""


# --------------------------------------------------------------------------------------------------
# Texts

def corpus_texts():
    from conftest import CORPUS, corpus_files
    for p in corpus_files():
        rel = str(p.relative_to(CORPUS))
        text = p.read_text(encoding="utf-8")
        if "split_input_file" in rel or "glog_prefixed" in rel:
            continue  # inputs for XLA's tools, not for hlo_module_from_text
        yield "corpus", rel, text


def case_texts():
    from conftest import CORPUS
    import test_verify
    for c in test_verify.CASES:
        text = (CORPUS / c.file).read_text(encoding="utf-8")
        if text.count(c.old) == 1:
            yield "cases", f"{c.id} ({c.code})", text.replace(c.old, c.new)


_INSTR = re.compile(r"^(\s*(?:ROOT\s+)?%?[\w.-]+\s*=\s*)([a-z]\w*)\[([\d,]*)\](\{[^}]*\})?\s+([a-z][\w-]*)\(([^)]*)\)",
                    re.M)


def auto_texts(n: int, seed: int = 1):
    """Seeded small mutations of .before corpus modules (at most n of each kind)."""
    from conftest import CORPUS
    rng = random.Random(seed)
    files = sorted((CORPUS / "jax").glob("*.before.hlo"))
    rng.shuffle(files)
    kinds = Counter()

    def take(kind, name, text):
        if kinds[kind] < n:
            kinds[kind] += 1
            return [("auto", f"{kind}: {name}", text)]
        return []

    for f in files:
        text = f.read_text(encoding="utf-8")
        ms = [m for m in _INSTR.finditer(text) if m.group(5) not in ("parameter", "constant")]
        if not ms:
            continue
        m = rng.choice(ms)
        dims = m.group(3)
        out = []
        if dims:
            ds = dims.split(",")
            i = rng.randrange(len(ds))
            ds[i] = str(int(ds[i]) + 1)
            out += take("dim+1", f.name, text[:m.start(3)] + ",".join(ds) + text[m.end(3):])
        t = m.group(2)
        new_t = {"f32": "f16", "s32": "u32", "pred": "s8", "u8": "s8", "f64": "f32"}.get(t, "f32")
        out += take("type", f.name, text[:m.start(2)] + new_t + text[m.end(2):])
        ops = [o.strip() for o in m.group(6).split(",") if o.strip()]
        if len(ops) == 2 and ops[0] != ops[1]:
            out += take("swap", f.name, text[:m.start(6)] + f"{ops[1]}, {ops[0]}" + text[m.end(6):])
        if ops:
            out += take("rename-operand", f.name, text[:m.start(6)] + m.group(6).replace(ops[0], ops[0] + "x", 1)
                        + text[m.end(6):])
        line_end = text.find("\n", m.end())
        line = text[m.end():line_end]
        attrs = list(re.finditer(r", ([a-z_]+)=(\{[^{}]*\}|[\w.-]+)", line))
        attrs = [a for a in attrs if a.group(1) not in ("metadata", "sharding", "frontend_attributes")]
        if attrs:
            a = rng.choice(attrs)
            out += take("drop-attr", f.name, text[:m.end() + a.start()] + text[m.end() + a.end():])
        pm = list(re.finditer(r"parameter\((\d+)\)", text))
        if len(pm) >= 2:
            p = rng.choice(pm)
            out += take("param-number", f.name, text[:p.start(1)] + str(int(p.group(1)) + len(pm)) + text[p.end(1):])
        yield from out
        if all(kinds[k] >= n for k in ("dim+1", "type", "swap", "rename-operand", "drop-attr", "param-number")):
            break


# --------------------------------------------------------------------------------------------------

def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--auto", type=int, default=40, help="random mutations per kind (default 40)")
    ap.add_argument("--only", default="corpus,cases,auto")
    ap.add_argument("--show", type=int, default=20, help="disagreements to print")
    ap.add_argument("--json", help="write every verdict to this file")
    args = ap.parse_args(argv)
    groups = set(args.only.split(","))
    texts = []
    if "corpus" in groups:
        texts += list(corpus_texts())
    if "cases" in groups:
        texts += list(case_texts())
    if "auto" in groups:
        texts += list(auto_texts(args.auto))
    xla = Xla()
    rows = []
    t0 = time.time()
    try:
        for i, (group, name, text) in enumerate(texts):
            o, why_o = ours(text, name)
            x, why_x = ("n/a", "") if o == "n/a" else xla.verdict(text)
            rows.append({"group": group, "name": name, "ours": o, "xla": x, "ours_why": why_o, "xla_why": why_x})
            if (i + 1) % 100 == 0:
                print(f"  {i + 1}/{len(texts)} texts, {time.time() - t0:.0f} s", file=sys.stderr)
    finally:
        xla.close()
    print(f"{len(rows)} texts in {time.time() - t0:.0f} s\n")
    print(f"{'group':8} {'texts':>6} {'judged':>6} {'agree':>6} {'rate':>7}   ours/xla: acc/acc acc/rej rej/acc rej/rej")
    total_j = total_a = 0
    for g in ["corpus", "cases", "auto"]:
        rs = [r for r in rows if r["group"] == g]
        if not rs:
            continue
        judged = [r for r in rs if "n/a" not in (r["ours"], r["xla"])]
        agree = [r for r in judged if r["ours"] == r["xla"]]
        c = Counter((r["ours"][:3], r["xla"][:3]) for r in judged)
        total_j += len(judged)
        total_a += len(agree)
        rate = 100.0 * len(agree) / len(judged) if judged else 0.0
        print(f"{g:8} {len(rs):6} {len(judged):6} {len(agree):6} {rate:6.1f}%   "
              f"{c['acc', 'acc']:7} {c['acc', 'rej']:7} {c['rej', 'acc']:7} {c['rej', 'rej']:7}")
    if total_j:
        print(f"{'all':8} {len(rows):6} {total_j:6} {total_a:6} {100.0 * total_a / total_j:6.1f}%")
    dis = [r for r in rows if "n/a" not in (r["ours"], r["xla"]) and r["ours"] != r["xla"]]
    if dis and args.show:
        print(f"\ndisagreements ({len(dis)}; first {min(args.show, len(dis))}):")
        for r in dis[:args.show]:
            print(f"  [{r['group']}] {r['name']}: ours={r['ours']} ({r['ours_why'][:120]}) "
                  f"xla={r['xla']} ({r['xla_why'][:160]})")
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
