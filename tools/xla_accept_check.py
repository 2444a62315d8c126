#!/usr/bin/env python3
"""Does XLA's own parser accept what we print, and read it as the same module? (dev-only: needs jaxlib)

For every corpus text (tests/corpus by default; `xla_rejects/` is skipped: XLA refuses those originals):

  1. we parse it and print it (hlo_interp.format_text);
  2. XLA parses the ORIGINAL and OUR PRINT (`jaxlib._hlo.hlo_module_from_text`: XLA's parser only,
     not its verifier) and re-prints both (`to_string()`);
  3. verdict:
       same       XLA accepts ours and its re-print of ours equals its re-print of the original;
       accepted   XLA accepts ours, but the original has elided `{...}` constants (XLA fills those with
                  random values, so only acceptance can be compared);
       DIFFERENT  XLA accepts both but reads them as different modules (a bug of ours);
       REJECTED   XLA accepts the original but not our print (a bug of ours);
       n/a        XLA rejects the original itself (e.g. log-pasted text): nothing to compare.

    python3 tools/xla_accept_check.py [PATHS...] [--show N] [--json]

Exit status 1 when any DIFFERENT or REJECTED case exists.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections import Counter
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import hlo_interp  # noqa: E402
from hlo_interp.syntax.parser import SPLIT_MARKER  # noqa: E402


def _xla_text(hlo, text: str):
    """XLA's re-print of `text`, or None with the error when XLA refuses it."""
    try:
        return hlo.hlo_module_from_text(text).to_string(), None
    except Exception as e:  # noqa: BLE001 - XLA raises RuntimeError/ValueError variants
        return None, str(e).splitlines()[0][:200]


def _pieces(text: str) -> list[str]:
    """A text with `// -----` separators holds several modules; XLA reads one at a time."""
    if SPLIT_MARKER not in text:
        return [text]
    return [p for p in text.split(SPLIT_MARKER) if p.strip()]


def check_file(hlo, path: Path) -> list[tuple[str, str]]:
    text = path.read_text()
    out = []
    for piece in _pieces(text):
        try:
            ours = hlo_interp.format_text(piece, str(path))
        except hlo_interp.HloError as e:
            out.append(("OURS-FAIL", e.render().splitlines()[0]))
            continue
        orig_x, orig_err = _xla_text(hlo, piece)
        ours_x, ours_err = _xla_text(hlo, ours)
        if orig_x is None:
            out.append(("n/a", f"XLA rejects the original: {orig_err}"))
        elif ours_x is None:
            out.append(("REJECTED", ours_err))
        elif "{...}" in piece:
            out.append(("accepted", ""))
        elif ours_x == orig_x:
            out.append(("same", ""))
        else:
            a, b = orig_x.splitlines(), ours_x.splitlines()
            first = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
            out.append(("DIFFERENT", f"first differing line {first + 1}: "
                        f"{(a[first] if first < len(a) else '')[:120]!r} vs "
                        f"{(b[first] if first < len(b) else '')[:120]!r}"))
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("paths", nargs="*", default=[str(ROOT / "tests" / "corpus")])
    ap.add_argument("--show", type=int, default=20, help="how many problem cases to list")
    ap.add_argument("--json", action="store_true", help="print the tally as JSON")
    args = ap.parse_args(argv)
    from jaxlib import _hlo as hlo

    files: list[Path] = []
    for p in map(Path, args.paths):
        if p.is_dir():
            files += sorted(q for q in p.rglob("*") if q.suffix in (".hlo", ".txt") and q.is_file())
        else:
            files.append(p)
    files = [f for f in files if "xla_rejects" not in f.parts and f.name != "README.md"]
    tally: Counter = Counter()
    problems = []
    t0 = time.perf_counter()
    for f in files:
        for verdict, detail in check_file(hlo, f):
            tally[verdict] += 1
            if verdict not in ("same", "accepted"):
                problems.append((verdict, f, detail))
    secs = time.perf_counter() - t0
    compared = tally["same"] + tally["accepted"] + tally["DIFFERENT"] + tally["REJECTED"]
    good = tally["same"] + tally["accepted"]
    if args.json:
        print(json.dumps({"files": len(files), "tally": dict(tally), "compared": compared, "good": good,
                          "seconds": round(secs, 1)}, indent=2))
    else:
        for verdict, f, detail in problems[:args.show]:
            print(f"{verdict:10s} {f.relative_to(ROOT) if f.is_relative_to(ROOT) else f}: {detail}")
        print(f"{len(files)} files, {sum(tally.values())} modules in {secs:.1f} s: " +
              ", ".join(f"{k} {v}" for k, v in sorted(tally.items())))
        if compared:
            print(f"XLA accepts our print and reads the same module: {good}/{compared} "
                  f"({100.0 * good / compared:.2f}%) of the modules XLA itself accepts")
    return 1 if tally["DIFFERENT"] or tally["REJECTED"] or tally["OURS-FAIL"] else 0


if __name__ == "__main__":
    sys.exit(main())
