#!/usr/bin/env python3
"""The README's pictures of `hlo graph` / `hlo diff` HTML pages: headless Chromium screenshots, written
to docs/img/*.png (needs chromium; Graphviz dot for the same layouts as a user with it installed).

    python3 tools/make_graph_screenshots.py
"""
from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import hlo_interp  # noqa: E402
from hlo_interp import diff, graph  # noqa: E402

JAX = ROOT / "tests" / "corpus" / "jax"
OUT = ROOT / "docs" / "img"


def shot(page: str, name: str, size=(1100, 700), fragment: str = "") -> None:
    exe = next(shutil.which(b) for b in ("chromium", "chromium-browser", "google-chrome") if shutil.which(b))
    tmp = Path(tempfile.mkdtemp())
    f = tmp / "page.html"
    f.write_text(page)
    png = OUT / name
    subprocess.run([exe, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                    "--disable-background-networking", "--disable-component-update", "--disable-sync",
                    f"--user-data-dir={tmp / 'profile'}", f"--window-size={size[0]},{size[1]}",
                    "--hide-scrollbars", f"--screenshot={png}", f.as_uri() + fragment],
                   capture_output=True, timeout=300, check=True)
    shutil.rmtree(tmp, ignore_errors=True)
    print(f"wrote {png.relative_to(ROOT)} ({png.stat().st_size // 1024} KB)")


def parse(name: str):
    return hlo_interp.parse((JAX / name).read_text(), str(JAX / name))


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    shot(graph.to_html(parse("grad_transformer_block.before.hlo")), "graph_overview.png")
    shot(graph.to_html(parse("grad_cnn.after.hlo"), expand_fusions=True), "graph_fusions.png")
    sys.path.insert(0, str(ROOT / "tests"))
    from synthetic import train_step  # the generated 1,015-instruction training step
    shot(graph.to_html(hlo_interp.parse(train_step(56))), "graph_deep.png")
    shot(graph.to_html(parse("while_loop_tuple_carry.after.hlo"), expand_all=True), "graph_while.png",
         fragment="#region_0.4/copy.4")
    a, b = (ROOT / "tests" / "data" / "diff" / f"fusion.{s}.hlo" for s in "ab")
    res = diff.diff_modules(hlo_interp.parse(a.read_text()), hlo_interp.parse(b.read_text()),
                            a_name="fusion.a.hlo", b_name="fusion.b.hlo")
    shot(res.to_html(), "diff.png", size=(1400, 700))


if __name__ == "__main__":
    main()
