#!/usr/bin/env python3
"""How fast `hlo graph -o page.html` is made and opens in headless Chromium, for a big module.

    python3 tools/make_big_dump.py --out /tmp/big.hlo --layers 12     # 30,292 instructions (needs JAX)
    python3 bench/graph_page.py /tmp/big.hlo [--repeat 3] [--layout auto|dot|browser]

Prints the time to parse and write the page (Graphviz dot runs included), its size, and, per run,
Chromium's wall time to open it and take a screenshot (start of the browser included; a trivial
page's time is printed for comparison) and the page's own numbers: JSON parse, build and layout of
the drawn computation, and ready (since navigation start).  Writes bench/out/graph_page.json.
"""
from __future__ import annotations

import argparse
import json
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
          "--disable-background-networking", "--disable-component-update", "--disable-sync",
          "--window-size=1200,800"]


def chromium(args, tmp: Path) -> float:
    exe = next((shutil.which(b) for b in ("chromium", "chromium-browser", "google-chrome") if shutil.which(b)))
    prof = Path(tempfile.mkdtemp(dir=tmp))
    t0 = time.perf_counter()
    subprocess.run([exe, *_FLAGS, f"--user-data-dir={prof}", *args], capture_output=True, timeout=600)
    return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("module", type=Path)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--layout", default="auto", choices=("auto", "dot", "browser"))
    a = ap.parse_args()
    import hlo_interp
    from hlo_interp import graph
    tmp = Path(tempfile.mkdtemp())
    t0 = time.perf_counter()
    m = hlo_interp.parse(a.module.read_text(), str(a.module))
    t_parse = time.perf_counter() - t0
    t0 = time.perf_counter()
    page = graph.to_html(m, engine=a.layout)
    t_page = time.perf_counter() - t0
    n = sum(len(c.instructions) for c in m.computations)
    f = tmp / "page.html"
    f.write_text(page)
    dot = json.loads(re.search(r'"dot":(\{[^}]*\})', page).group(1))
    print(f"{a.module.name}: {n} instructions, {len(m.computations)} computations, entry "
          f"{len(m.entry.instructions)}; parse {t_parse:.1f} s, page {t_page:.1f} s "
          f"({len(page) / 1e6:.1f} MB; dot: {dot})")
    triv = tmp / "trivial.html"
    triv.write_text("<!DOCTYPE html><html><body>hello</body></html>")
    runs = []
    for _ in range(a.repeat):
        wall = chromium([f"--screenshot={tmp / 'shot.png'}", f.as_uri()], tmp)
        base = chromium([f"--screenshot={tmp / 'shot0.png'}", triv.as_uri()], tmp)
        dom = subprocess.run([next(shutil.which(b) for b in ("chromium", "chromium-browser", "google-chrome")
                                   if shutil.which(b)), *_FLAGS, f"--user-data-dir={tempfile.mkdtemp(dir=tmp)}",
                              "--dump-dom", f.as_uri()], capture_output=True, timeout=600).stdout.decode()
        body = re.search(r"<body[^>]*>", dom).group(0)
        got = {k: int(v) for k, v in re.findall(r'data-(parse-ms|load-ms|ready-ms)="(\d+)"', body)}
        runs.append({"screenshot_s": round(wall, 2), "trivial_s": round(base, 2), **got})
        print(f"  open + screenshot {wall:.2f} s (trivial page {base:.2f} s); in the page: JSON "
              f"{got.get('parse-ms')} ms, drawn {got.get('load-ms')} ms, ready {got.get('ready-ms')} ms "
              f"after navigation start")
    med = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
    print(f"median: {med}")
    out = ROOT / "bench" / "out"
    out.mkdir(parents=True, exist_ok=True)
    (out / "graph_page.json").write_text(json.dumps({"module": str(a.module), "instructions": n,
                                                     "parse_s": t_parse, "page_s": t_page,
                                                     "page_mb": len(page) / 1e6, "dot": dot,
                                                     "runs": runs, "median": med}, indent=1))
    shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
