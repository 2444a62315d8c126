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

Texts where the pipeline's verdict is known to be wrong are listed in BLIND_SPOTS below, each with the
reason (checked by converting the text to StableHLO and back, or against hlo_verifier.cc); the summary
gives the agreement rate with and without them.  xla_rejects/ texts that another XLA version's parser
takes (OTHER_XLA below) are accepted on purpose: they count as disagreements, listed with the reason.

    python3 tools/xla_verify_compare.py [--auto N] [--show N] [--json FILE] [--only corpus,cases,auto]
                                        [--match SUBSTRING]
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
# Texts whose XLA verdict (through this pipeline) is known to be wrong: name -> why

_LAYOUT = "the round trip drops entry_computation_layout (XLA's VerifyEntryComputationLayout rejects it)"
BLIND_SPOTS = {
    # mutation cases (tests/test_verify.py CASES ids)
    "dot-extra-operand": "the round trip drops the extra dot operand (XLA's CheckOperandCount rejects it)",
    "entry-layout-param-shape": _LAYOUT,
    "entry-layout-second-param": _LAYOUT,
    "entry-layout-result": _LAYOUT,
    "entry-layout-bad-layout": _LAYOUT + "; its layout is never read",
    "buffer-donor-out-of-range": "the round trip drops buffer_donor (HloBufferDonorConfig::Verify rejects it)",
    "buffer-donor-tuple": "the round trip drops buffer_donor (HloBufferDonorConfig::Verify: dense arrays only)",
    "buffer-donor-aliased": "the round trip drops buffer_donor (HloBufferDonorConfig::Verify: not also aliased)",
    "fusion-dead-instruction": "the round trip removes the dead fused instruction (CheckFusionInstruction: "
                               "non-root instructions must have users)",
    "recv-done-host-transfer": "the round trip drops is_host_transfer from recv-done (CheckSameIsHostTransfer)",
    "channel-shared-with-collective": "the round trip reorders the instructions, so the collective-permute comes "
                                      "first on the channel and VerifyChannels checks nothing",
    "permute-id-beyond-partitions": "the round trip drops num_partitions (CheckDuplicatedSourceOrTarget's limit)",
    "replica-groups-vs-partitions": "the round trip drops num_partitions (CheckReplicaGroups' id count)",
    # corpus texts (relative to tests/corpus)
    "handwritten/computation_execution_thread.hlo": "the round trip wraps the async result in a tuple",
    "handwritten/domain_op.hlo": "mhlo.domain takes no tuple operand; XLA's verifier accepts domain of a tuple",
    "handwritten/fusion_kinds_and_aliasing.hlo": "the round trip flattens nested tuples, leaving a fused "
                                                 "parameter without users",
    "handwritten/header_input_output_alias.hlo": "the round trip flattens the nested output tuple the alias "
                                                 "index points into",
    "handwritten/replica_groups_forms.hlo": "StableHLO does not take mesh sub-axes ({'b':(2)2})",
    "handwritten/shape_manipulation_ops.hlo": "StableHLO takes scalar start indices only; XLA's shape inference "
                                              "also takes the legacy index vector of dynamic-slice",
}

# xla_rejects/ texts that this jaxlib's parser refuses but another XLA version's parser takes (its
# hlo_opcode.h / hlo_parser.cc): accepted on purpose, so they stay disagreements (not blind spots:
# this XLA's verdict is right for this XLA); the listing says why.
OTHER_XLA = {
    "handwritten/xla_rejects/atan_opcode.hlo": "newer XLA's HLO_OPCODE_LIST has atan",
    "handwritten/xla_rejects/collective_reduce_opcode.hlo": "newer XLA's HLO_OPCODE_LIST has collective-reduce",
    "handwritten/xla_rejects/conv_kind_attribute.hlo": "another XLA's parser registers conv_kind= for "
                                                       "convolution (this one spells it convolution_kind=)",
    "handwritten/xla_rejects/named_sharding_bare_axis_names.hlo": "another XLA's parser reads mesh axis names "
                                                                  "unquoted (ParseAttributeName, ParseName)",
}


# --------------------------------------------------------------------------------------------------
# XLA's side: a helper process that answers one text per request

_HELPER = r'''
import os, sys, json
os.environ["TF_CPP_MIN_LOG_LEVEL"] = "3"
sys.path.insert(0, TOOLS)
from oracle import runner
runner.cpu_backend()
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
        runner.parse_hlo(text)
    except Exception as e:
        say("reject", "parse: " + " ".join(str(e).split())[:300])
        continue
    say("step", "compile")
    try:
        runner.compile_hlo(text)
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
        helper = f"TOOLS = {str(Path(__file__).resolve().parent)!r}\n" + _HELPER
        self.proc = subprocess.Popen([sys.executable, "-c", helper], stdin=subprocess.PIPE,
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


# findings the pipeline cannot see, whatever the text: our reason's prefix -> why
BLIND_FINDINGS = {
    "E501": _LAYOUT,
    "E503": "the round trip drops buffer_donor",
    "E101 get-tuple-element": "the round trip re-derives get-tuple-element shapes from the operand",
    "E101 call:": "the round trip types a call by its callee's signature (ShapeVerifier::HandleCall rejects it)",
}


def _blind(row: dict):
    name = row["name"]
    why = BLIND_SPOTS.get(name.split(" (")[0])
    if why is None and row["ours"] == "reject" and row["xla"] == "accept":
        why = next((w for k, w in BLIND_FINDINGS.items() if row["ours_why"].startswith(k)), None)
    return why


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
    ap.add_argument("--match", help="only texts whose name contains this")
    args = ap.parse_args(argv)
    groups = set(args.only.split(","))
    texts = []
    if "corpus" in groups:
        texts += list(corpus_texts())
    if "cases" in groups:
        texts += list(case_texts())
    if "auto" in groups:
        texts += list(auto_texts(args.auto))
    if args.match:
        texts = [t for t in texts if args.match in t[1]]
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
    print(f"{'group':8} {'texts':>6} {'judged':>6} {'agree':>6} {'rate':>7}   ours/xla: acc/acc acc/rej rej/acc rej/rej"
          f"   blind spots  rate without")
    total_j = total_a = total_b = 0
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
        blind = [r for r in judged if r["ours"] != r["xla"] and _blind(r)]
        rest = len(judged) - len(blind)
        rate_b = 100.0 * len(agree) / rest if rest else 0.0
        total_b += len(blind)
        print(f"{g:8} {len(rs):6} {len(judged):6} {len(agree):6} {rate:6.1f}%   "
              f"{c['acc', 'acc']:7} {c['acc', 'rej']:7} {c['rej', 'acc']:7} {c['rej', 'rej']:7}"
              f"   {len(blind):11} {rate_b:11.1f}%")
    if total_j:
        rest = total_j - total_b
        print(f"{'all':8} {len(rows):6} {total_j:6} {total_a:6} {100.0 * total_a / total_j:6.1f}%"
              f"{'':36}   {total_b:11} {100.0 * total_a / rest if rest else 0.0:11.1f}%")
    dis = [r for r in rows if "n/a" not in (r["ours"], r["xla"]) and r["ours"] != r["xla"]]
    if dis and args.show:
        print(f"\ndisagreements ({len(dis)}; first {min(args.show, len(dis))}):")
        for r in dis[:args.show]:
            why = _blind(r)
            print(f"  [{r['group']}] {r['name']}: ours={r['ours']} ({r['ours_why'][:120]}) "
                  f"xla={r['xla']} ({r['xla_why'][:160]})" + (f"\n      blind spot: {why}" if why else "")
                  + (f"\n      other XLA version: {OTHER_XLA[r['name']]}" if r["name"] in OTHER_XLA else ""))
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
