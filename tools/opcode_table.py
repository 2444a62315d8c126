#!/usr/bin/env python3
"""Write the README's opcode table (between the `<!-- opcode-table -->` markers) from the code itself:
each opcode's entry in the opcode table (hlo_interp/opcodes.py: family, element types, note), its
shape rule (hlo_interp/shapes/) and its kernel (hlo_interp/ops/).  `--check` exits 1 when the README
is out of date (tests/test_opcodes.py).

    python3 tools/opcode_table.py [--check]
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

BEGIN, END = "<!-- opcode-table -->", "<!-- /opcode-table -->"


def rows() -> list[str]:
    from hlo_interp.opcodes import OPCODES
    from hlo_interp.ops import load_all
    from hlo_interp.ops.registry import KERNELS
    from hlo_interp.shapes.infer import RULES
    from hlo_interp.shapes.infer import load_all as load_all_rules
    load_all()
    load_all_rules()
    out = ["| opcode | family | runs | shape rule | element types | notes |", "|---|---|---|---|---|---|"]
    for name in sorted(OPCODES):
        op = OPCODES[name]
        runs = "yes" if name in KERNELS else "not yet"
        out.append(f"| `{name}` | {op.family} | {runs} | {'yes' if name in RULES else 'no'} | "
                   f"{op.types_doc if name in KERNELS else ''} | {op.note} |")
    n = sum(1 for x in OPCODES if x in KERNELS)
    out.append("")
    out.append(f"{n} of {len(OPCODES)} opcodes run; every one has a shape rule and is checked by `hlo check`. "
               "`f8*` = every f8 variant (and f4e2m1fn where XLA allows it).")
    return out


def render(readme: str) -> str:
    a, b = readme.index(BEGIN) + len(BEGIN), readme.index(END)
    return readme[:a] + "\n" + "\n".join(rows()) + "\n" + readme[b:]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--check", action="store_true")
    args = ap.parse_args(argv)
    path = ROOT / "README.md"
    text = path.read_text()
    new = render(text)
    if args.check:
        if new != text:
            print("README.md's opcode table is out of date: run python3 tools/opcode_table.py")
            return 1
        return 0
    path.write_text(new)
    return 0


if __name__ == "__main__":
    sys.exit(main())
