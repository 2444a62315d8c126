"""python -m tools.oracle regen FAMILY [--opcode OPCODE] | list

Regenerates the XLA:CPU-computed cases of one family (tests/golden/FAMILY/), or only its committed cases
whose texts use OPCODE (dev-only: needs jax/jaxlib).  `list` prints the families and what writes them."""
from __future__ import annotations

import argparse
import importlib
import json
import re
import subprocess
import sys
from pathlib import Path

TOOLS = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(TOOLS))

from oracle.writer import GOLDEN  # noqa: E402

# families written by a declaration module of tools/oracle/families/
DECLARED = ("complex_dot", "contraction", "domain", "movement_hlo", "reduce_dot_hlo", "scan", "window", "xla_regressions", "xla_syntax",
            "xla_suite")
# families written by a generator script of tools/ (declarations + the oracle's runner and writer):
# family -> (script, "regex": its --only takes a regex on case names; None: it regenerates the whole family)
SCRIPTS = {
    "gather_scatter": ("make_gather_sort_vectors.py", "regex"),
    "sort": ("make_gather_sort_vectors.py", "regex"),
    "batch_norm": ("make_misc_vectors.py", "regex"),
    "async": ("make_misc_vectors.py", "regex"),
    "dynamic_shape": ("make_misc_vectors.py", "regex"),
    "ragged_dot": ("make_misc_vectors.py", "regex"),
    "sweep": ("make_sweep_vectors.py", "regex"),
    "fft_linalg_rng": ("make_fft_linalg_rng_vectors.py", "regex"),
    "custom_call": ("make_custom_call_vectors.py", "regex"),
    "elementwise_edges": ("make_elementwise_vectors.py", "regex"),
    "layout": ("make_io_layout_vectors.py", None),  # all of its programs (and scan, xla_verdicts.json)
    "spmd": ("make_spmd_vectors.py", None),  # all of it (or: make_spmd_vectors.py smap|jit|hlo)
    "topk": ("make_topk_comparator_vectors.py", None),
    "scaled_dot": ("make_scaled_dot_vectors.py", None),
}
GOLDEN_SCRIPT = "make_golden.py"  # every other family: --only '^FAMILY/NAME$'


def committed(family: str, opcode: str | None) -> list[str]:
    """Names of the committed cases of a family (those whose texts use `opcode`, if given)."""
    out = []
    for p in sorted((GOLDEN / family).glob("*/case.json")):
        if opcode is None or opcode in json.loads(p.read_text())["opcodes"]:
            out.append(p.parent.name)
    return out


def regen(family: str, opcode: str | None) -> int:
    names = committed(family, opcode) if opcode else None
    if opcode and not names:
        print(f"no committed case of {family} uses {opcode}", file=sys.stderr)
        return 2
    if family in DECLARED:
        mod = importlib.import_module(f"oracle.families.{family}")
        n = 0
        for d in mod.declare():
            if names is None or d.name in names:
                try:
                    d.write()
                    n += 1
                except Exception as e:  # noqa: BLE001 - XLA:CPU refuses the case: not written
                    print(f"SKIP {family}/{d.name}: {type(e).__name__}: {str(e).splitlines()[0][:200]}",
                          file=sys.stderr)
        print(f"{n} cases written to {GOLDEN / family}")
        return 0
    sel = None if names is None else "^(" + "|".join(re.escape(n) for n in names) + ")$"
    if family in SCRIPTS:
        script, how = SCRIPTS[family]
        if sel and how is None:
            print(f"{script} regenerates all of {family} (no --opcode)", file=sys.stderr)
            return 2
        cmd = [sys.executable, str(TOOLS / script)] + (["--only", sel] if sel else [])
    elif (GOLDEN / family).is_dir():
        cmd = [sys.executable, str(TOOLS / GOLDEN_SCRIPT), "--only",
               f"^{re.escape(family)}/" + (sel[1:] if sel else "")]
    else:
        print(f"unknown family {family!r} (python -m tools.oracle list)", file=sys.stderr)
        return 2
    print(" ".join(cmd[1:]), file=sys.stderr)
    return subprocess.run(cmd).returncode


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tools.oracle", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("regen", help="regenerate a family, or its cases that use one opcode")
    r.add_argument("family")
    r.add_argument("--opcode")
    sub.add_parser("list", help="the families and what writes them")
    a = ap.parse_args(argv)
    if a.cmd == "list":
        for fam in sorted(p.name for p in GOLDEN.iterdir() if p.is_dir()):
            how = ("tools/oracle/families/" + fam + ".py" if fam in DECLARED else
                   "tools/" + SCRIPTS[fam][0] if fam in SCRIPTS else "tools/" + GOLDEN_SCRIPT)
            print(f"{fam:20} {len(committed(fam, None)):5} cases  {how}")
        return 0
    return regen(a.family, a.opcode)


if __name__ == "__main__":
    sys.exit(main())
