"""`hlo graph` and hlo_interp.graph: DOT structure, Graphviz acceptance, the self-contained HTML view
(rendered by a headless browser when one is installed), --around/--depth, --max-nodes, the CLI."""
from __future__ import annotations

import json
import re
import shutil
import struct
import subprocess
import zlib
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

import hlo_interp
from hlo_interp import graph
from hlo_interp.cli import main as cli_main

ROOT = Path(__file__).resolve().parents[1]
JAX = ROOT / "tests" / "corpus" / "jax"
HAND = ROOT / "tests" / "corpus" / "handwritten"

DOT = shutil.which("dot")
BROWSER = next((shutil.which(b) for b in ("chromium", "chromium-browser", "google-chrome") if shutil.which(b)),
               None)
needs_dot = pytest.mark.skipif(DOT is None, reason="Graphviz 'dot' is not installed")
needs_browser = pytest.mark.skipif(BROWSER is None, reason="no headless browser (chromium) installed")

# Real XLA dumps: before/after optimization, fusions (kLoop, kCustom), while/call, conditional.
REAL = ["grad_transformer_block.after.hlo", "grad_transformer_block.before.hlo", "fori_loop_static.after.hlo",
        "cond_simple.after.hlo", "argsort_stable.after.hlo", "random_threefry_randint.after.hlo"]

CHAIN = """HloModule chain
ENTRY main {
  p = f32[4] parameter(0)
  a = f32[4] negate(p)
  b = f32[4] exponential(a)
  c = f32[4] add(b, b)
  d = f32[4] sqrt(c)
  ROOT e = f32[4] multiply(d, p)
}
"""


def _module(name):
    path = JAX / name if (JAX / name).exists() else HAND / name
    return hlo_interp.parse(path.read_text(), str(path))


_NODE = re.compile(r"^\s*(n\d+) \[", re.M)
_EDGE = re.compile(r"^\s*(n\d+) -> (n\d+) \[(.*)\];$", re.M)


def _dot_counts(text):
    nodes = _NODE.findall(text)
    edges = [(a, b, rest) for a, b, rest in _EDGE.findall(text)]
    data = [e for e in edges if "style=dashed" not in e[2]]
    return nodes, data, [e for e in edges if "style=dashed" in e[2]]


# --------------------------------------------------------------------------------------------------
# Structure

@pytest.mark.parametrize("name", REAL)
def test_dot_counts_match_the_computation(name):
    m = _module(name)
    comp = m.entry
    nodes, edges, _ = _dot_counts(graph.to_dot(m))
    assert len(nodes) == len(comp.instructions)
    names = {i.name for i in comp.instructions}
    assert len(edges) == sum(1 for i in comp.instructions for o in i.operands if o in names)
    # Each edge is labelled with its operand's shape, written without layout.
    shapes = sorted(graph.short_shape(comp.instruction(o).shape) for i in comp.instructions for o in i.operands)
    assert sorted(re.search(r'label="([^"]*)"', r).group(1) for _, _, r in edges) == shapes


def test_expanded_fusions_are_clusters_with_their_bodies():
    m = _module("grad_transformer_block.after.hlo")
    comp = m.entry
    fusions = [i for i in comp.instructions if i.opcode == "fusion"]
    assert len(fusions) == 49
    text = graph.to_dot(m, expand_fusions=True, max_nodes=1000)
    nodes, edges, _ = _dot_counts(text)
    fused = sum(len(m.computation(f.attrs["calls"]).instructions) for f in fusions)
    assert not any(i.opcode == "fusion" for f in fusions for i in m.computation(f.attrs["calls"]).instructions)
    assert len(nodes) == len(comp.instructions) - len(fusions) + fused
    assert text.count("subgraph cluster_") == 49
    inner = sum(len(i.operands) for f in fusions for i in m.computation(f.attrs["calls"]).instructions)
    outer = sum(len(i.operands) for i in comp.instructions)
    assert len(edges) == inner + outer


def test_collapsed_fusion_label_names_kind_and_fused_opcodes():
    m = _module("fori_loop_static.after.hlo")
    text = graph.to_dot(m, "region_0.2.clone.clone.clone")
    # fused_computation: param_0, param_1.3, convert, broadcast, multiply, add
    assert "<B>fusion · kLoop</B>" in text
    assert ">convert, broadcast, multiply, add</FONT>" in text
    assert ">multiply_add_fusion</FONT>" in text
    m2 = _module("grad_transformer_block.after.hlo")
    assert "<B>fusion · kCustom __ynn_fusion</B>" in graph.to_dot(m2)


def test_called_computations_are_summarized():
    m = _module("control_flow_conditional_while.hlo")
    text = graph.to_dot(m)
    assert "true: Negate [negate]" in text and "false: Identity [copy]" in text
    assert "branch 2: Floor [floor]" in text
    assert "condition: condition.v3 [compare]" in text and "body: body.v3 [add]" in text
    m2 = _module("fori_loop_static.after.hlo")
    assert "to_apply: while.1_computation [while]" in graph.to_dot(m2)


def test_styles_parameters_constants_root():
    text = graph.to_dot(hlo_interp.parse(CHAIN))
    line = {m.group(1): m.group(0) for m in re.finditer(r"^\s*(n\d+) \[.*$", text, re.M)}
    assert "shape=ellipse" in line["n0"] and "<B>parameter 0</B>" in line["n0"]
    assert "penwidth=2.5" in line["n5"] and "<B>ROOT multiply</B>" in line["n5"]
    assert all("penwidth" not in line[f"n{k}"] for k in range(5))
    c = graph.to_dot(hlo_interp.parse("ENTRY e {\n ROOT k = f32[] constant(0.5)\n}\n"))
    assert '#eeeeee' in c and ">0.5</FONT>" in c


def test_control_edges_dashed_and_optional():
    m = _module("control_predecessors.hlo")
    _, data, ctl = _dot_counts(graph.to_dot(m))
    assert len(ctl) == 5  # a->b, a->c, b->c, c->d, tok->d
    assert len(data) == 8
    _, data2, ctl2 = _dot_counts(graph.to_dot(m, control_edges=False))
    assert ctl2 == [] and len(data2) == 8


# --------------------------------------------------------------------------------------------------
# --around / --depth, --max-nodes

def _names(text):
    return re.findall(r'<FONT POINT-SIZE="9">([^<]*)</FONT>', text)


@pytest.mark.parametrize("depth, expect", [(0, {"c"}), (1, {"b", "c", "d"}), (2, {"a", "b", "c", "d", "e"}),
                                           (3, {"p", "a", "b", "c", "d", "e"})])
def test_around_keeps_the_neighbourhood(depth, expect):
    m = hlo_interp.parse(CHAIN)
    g = graph.build(m, around="c", depth=depth)
    assert {n.ins.name for n in g.nodes.values()} == expect
    text = graph.graph_to_dot(g)
    assert len(_NODE.findall(text)) == len(expect)
    assert f"around c (depth {depth})" in text


def test_around_marks_hidden_neighbours():
    g = graph.build(hlo_interp.parse(CHAIN), around="%c", depth=1)
    by = {n.ins.name: n for n in g.nodes.values()}
    assert (by["b"].hidden_operands, by["b"].hidden_users) == (1, 0)
    assert (by["d"].hidden_operands, by["d"].hidden_users) == (0, 1)
    assert (by["c"].hidden_operands, by["c"].hidden_users) == (0, 0)
    text = graph.graph_to_dot(g)
    assert text.count("+1 operand hidden") == 1 and text.count("+1 user hidden") == 1
    # c = add(b, b): two edges from b
    assert len(_dot_counts(text)[1]) == 3


def test_around_finds_the_instruction_in_any_computation():
    m = _module("fori_loop_static.after.hlo")
    g = graph.build(m, around="mul.10", depth=1)
    assert g.computation.name == "fused_computation"
    assert {n.ins.name for n in g.nodes.values()} == {"mul.10", "mul.11", "param_0", "add.17"}


def test_around_on_real_dump_respects_depth():
    m = _module("grad_transformer_block.after.hlo")
    comp = m.entry
    users = {i.name: set() for i in comp.instructions}
    for i in comp.instructions:
        for o in i.operands:
            users[o].add(i.name)
    ops = {i.name: set(i.operands) for i in comp.instructions}
    ring = {"ynn_fusion.8"}
    for depth in (1, 2):
        ring = ring | {x for n in ring for x in ops[n] | users[n]}
        g = graph.build(m, around="ynn_fusion.8", depth=depth)
        assert {n.ins.name for n in g.nodes.values()} == ring
    assert len(ring) == 12


def test_max_nodes_truncates_with_a_message():
    m = _module("grad_transformer_block.after.hlo")
    g = graph.build(m, max_nodes=10)
    assert len(g.nodes) == 10 and g.omitted == 57
    assert any(n.ins.is_root for n in g.nodes.values())
    text = graph.graph_to_dot(g)
    assert "57 of 67 instructions not shown" in text
    assert "… 57 more instructions not shown (--max-nodes 10)" in text
    # Expanded fusions count their bodies against the limit.
    ge = graph.build(m, expand_fusions=True, max_nodes=40)
    assert len(ge.nodes) == 40 and ge.omitted == 27 and not ge.clusters
    # Within the default 500: every instruction, and fusion bodies while they fit (4 of 49 do not).
    ge = graph.build(m, expand_fusions=True)
    assert ge.omitted == 0 and len(ge.clusters) == 45 and len(ge.nodes) == 499
    assert ge.notes == ["4 fusions drawn collapsed: no room for their body within --max-nodes 500"]


def test_unknown_names_are_located_errors():
    m = _module("fori_loop_static.after.hlo")
    with pytest.raises(hlo_interp.HloError, match=r"no computation named 'region_0' .*did you mean"):
        graph.to_dot(m, "region_0")
    with pytest.raises(hlo_interp.HloError, match=r"no instruction named 'mul.1' .*did you mean mul.11"):
        graph.to_dot(m, around="mul.1")
    with pytest.raises(hlo_interp.HloError, match=r"in computation main.4"):
        graph.to_dot(m, "main.4", around="mul.10")


# --------------------------------------------------------------------------------------------------
# Graphviz accepts what we write

@needs_dot
@pytest.mark.parametrize("name, expand", [("grad_transformer_block.after.hlo", False),
                                          ("grad_transformer_block.after.hlo", True),
                                          ("grad_mlp.before.hlo", False),
                                          ("linalg_lstsq.before.hlo", False),
                                          ("cond_simple.after.hlo", True),
                                          ("argsort_stable.after.hlo", True),
                                          ("control_predecessors.hlo", False)])
def test_dot_accepts_output(name, expand):
    m = _module(name)
    g = graph.build(m, expand_fusions=expand)
    svg = graph.run_dot(graph.graph_to_dot(g), "svg").decode()
    assert svg.lstrip().startswith("<?xml") and "<svg" in svg
    assert svg.count('class="node"') == len(g.nodes) + (1 if g.omitted else 0)  # + the note
    assert svg.count('class="edge"') == len(g.edges)
    assert svg.count('class="cluster"') == len(g.clusters)


@needs_dot
def test_dot_accepts_awkward_text():
    text = ('HloModule m\nENTRY e {\n  p = f32[2] parameter(0), metadata={op_name="a<b>&\\"c\\" \\\\ {x}"}\n'
            '  ROOT n = f32[2] negate(p), metadata={op_name="<tag> & \\\\n"}\n}\n')
    m = hlo_interp.parse(text)
    svg = graph.run_dot(graph.to_dot(m), "svg").decode()
    assert svg.count('class="node"') == 2
    assert "a&lt;b&gt;&amp;" in svg  # the tooltip keeps the text, escaped


# --------------------------------------------------------------------------------------------------
# Layout and HTML

def test_isotonic_place_keeps_order_and_gaps():
    xs = graph._isotonic_place([10.0, 0.0, 5.0, 100.0], [20.0, 20.0, 20.0, 20.0], 10.0)
    assert all(b - a >= 30.0 - 1e-9 for a, b in zip(xs, xs[1:]))
    # The first three violate the order: pooled around their mean (5) with 30 apart.
    assert xs[:3] == pytest.approx([-25.0, 5.0, 35.0]) and xs[3] == pytest.approx(100.0)


def test_layout_puts_operands_above_users_without_overlaps():
    m = _module("grad_transformer_block.after.hlo")
    g = graph.build(m)
    scene = graph._SvgScene(g, "")
    pos, sizes = scene.lay["pos"], scene.sizes
    for e in g.edges:
        assert pos[e.src][1] < pos[e.dst][1]
    rows = {}
    for nid, (x, y) in pos.items():
        rows.setdefault(y, []).append((x - sizes[nid][0] / 2, x + sizes[nid][0] / 2))
    for spans in rows.values():
        spans.sort()
        assert all(a[1] <= b[0] + 1e-6 for a, b in zip(spans, spans[1:]))
    assert len(scene.lay["paths"]) == len(g.edges)


def test_layout_budget_keeps_wide_fanout_graphs_small():
    # x feeds every one of 500 chained adds: per-layer dummies would be 125,000 bends (9 s, 8 MB).
    lines = ["HloModule fan", "ENTRY e {", "  x = f32[8] parameter(0)", "  a0 = f32[8] negate(x)"]
    lines += [f"  a{k} = f32[8] add(a{k - 1}, x)" for k in range(1, 400)]
    lines += ["  ROOT r = f32[8] add(a399, x)", "}"]
    m = hlo_interp.parse("\n".join(lines))
    g = graph.build(m)
    scene = graph._SvgScene(g, "")
    bends = sum(len(p) for p in scene.lay["paths"])
    assert 0 < bends <= max(2000, 6 * len(g.nodes))
    assert all(scene.lay["pos"][e.src][1] < scene.lay["pos"][e.dst][1] for e in g.edges)
    page = graph.graph_to_html(g)
    assert len(page) < 1_000_000 and 'data-nodes="402"' in page


def _html_data(page):
    return json.loads(re.search(r'<script type="application/json" id="graph-data">(.*?)</script>', page,
                                re.S).group(1).replace("<\\/", "</"))


def test_html_is_self_contained():
    m = _module("grad_transformer_block.after.hlo")
    page = graph.to_html(m)
    assert page.startswith("<!DOCTYPE html>")
    assert re.findall(r"https?://[^\s\"'<>]+", page) == ["http://www.w3.org/2000/svg"]  # the SVG namespace
    assert "<link" not in page and not re.search(r"<script[^>]*\bsrc=", page) and "@import" not in page
    data = _html_data(page)
    main = [k for k in data["main"]]
    assert len(main) == 67 and len(data["edges"]) == 149
    assert len(data["fusions"]) == 49
    assert 'data-nodes="67"' in page
    assert len(re.findall(r'<g class="node[ "][^>]*id="n\d+"', page)) == 67
    # Hover text is the full instruction.
    assert data["nodes"]["n0"]["t"].startswith("%")
    # Each fusion body is laid out, hidden until opened.
    assert page.count('<g class="body" id="body-') == 49


def test_html_expanded_and_around():
    m = _module("fori_loop_static.after.hlo")
    page = graph.to_html(m, "region_0.2.clone.clone.clone", expand_fusions=True)
    data = _html_data(page)
    assert data["expand"] is True and len(data["fusions"]) == 2
    f = data["fusions"]["n5"]  # multiply_add_fusion: operands param 0 and 1 drawn inside
    assert set(f["params"]) == {"0", "1"}
    page2 = graph.to_html(hlo_interp.parse(CHAIN), around="c", depth=1)
    assert 'data-nodes="3"' in page2 and "around c (depth 1)" in page2


# --------------------------------------------------------------------------------------------------
# The headless browser renders the page

def _png_pixels(data: bytes) -> np.ndarray:
    """Decode an 8-bit RGB/RGBA PNG (what Chromium writes) to an (h, w, c) array."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    i, idat, hdr = 8, b"", None
    while i < len(data):
        n, kind = struct.unpack(">I4s", data[i:i + 8])
        body = data[i + 8:i + 8 + n]
        if kind == b"IHDR":
            hdr = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        i += 12 + n
    w, h, bits, ctype, _, _, interlace = hdr
    assert bits == 8 and ctype in (2, 6) and interlace == 0
    bpp = 3 if ctype == 2 else 4
    raw = np.frombuffer(zlib.decompress(idat), np.uint8).reshape(h, 1 + w * bpp)
    out = np.zeros((h, w * bpp), np.uint8)
    prev = np.zeros(w * bpp, np.uint8)
    for r in range(h):
        f, line = raw[r, 0], raw[r, 1:]
        if f == 0:
            cur = line.copy()
        elif f == 2:
            cur = line + prev
        elif f == 1:
            cur = np.cumsum(line.reshape(w, bpp).astype(np.int64), axis=0).astype(np.uint8).reshape(-1)
        else:
            cur = bytearray(line.tobytes())
            up = prev.tobytes()
            for k in range(len(cur)):
                a = cur[k - bpp] if k >= bpp else 0
                b = up[k]
                if f == 3:
                    cur[k] = (cur[k] + ((a + b) >> 1)) & 0xFF
                else:
                    c = up[k - bpp] if k >= bpp else 0
                    p = a + b - c
                    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                    cur[k] = (cur[k] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 0xFF
            cur = np.frombuffer(bytes(cur), np.uint8)
        out[r] = cur
        prev = cur
    return out.reshape(h, w, bpp)[:, :, :3]


def _browser(args, tmp_path):
    cmd = [BROWSER, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
           "--disable-component-update", "--disable-sync", "--no-first-run",
           f"--user-data-dir={tmp_path / 'profile'}", "--window-size=1200,800"] + args
    return subprocess.run(cmd, capture_output=True, timeout=120)


@needs_browser
def test_browser_renders_the_html(tmp_path):
    m = _module("fori_loop_static.after.hlo")
    page = tmp_path / "g.html"
    page.write_text(graph.to_html(m, "region_0.2.clone.clone.clone"))
    shot = tmp_path / "g.png"
    _browser([f"--screenshot={shot}", page.as_uri()], tmp_path)
    px = _png_pixels(shot.read_bytes())
    assert px.shape == (800, 1200, 3)
    colors = np.unique(px.reshape(-1, 3), axis=0)
    assert len(colors) > 50  # text, fills, edges: not a blank page
    background = (px == px[400, 1199]).all(axis=2)
    assert 0.02 < 1 - background.mean() < 0.9
    # Parameter fill (#d9f2d0) and fusion fill (#dbe9fb) are on screen.
    for rgb in ((0xd9, 0xf2, 0xd0), (0xdb, 0xe9, 0xfb)):
        assert (px == rgb).all(axis=2).sum() > 200, rgb


@needs_browser
def test_browser_dom_after_script(tmp_path):
    m = _module("grad_transformer_block.after.hlo")
    page = tmp_path / "g.html"
    page.write_text(graph.to_html(m, expand_fusions=True))
    dom = _browser(["--dump-dom", page.as_uri()], tmp_path).stdout.decode()
    body = re.search(r"<body[^>]*>", dom).group(0)
    assert 'data-ready="1"' in body  # the script ran to its end
    assert 'data-open="49"' in body  # every fusion opened in place
    assert len(re.findall(r'<g class="node[ "][^>]*id="n\d+"', dom)) == 67
    # Opened fusions are shown, their collapsed nodes hidden.
    assert len(re.findall(r'<g class="body" id="body-n\d+"[^>]*style="display: none', dom)) == 0


# --------------------------------------------------------------------------------------------------
# The command

def _run(args, **kw):
    return CliRunner().invoke(cli_main, ["graph"] + args, catch_exceptions=False, **kw)


def test_cli_dot_to_stdout_and_files(tmp_path):
    src = str(JAX / "fori_loop_static.after.hlo")
    r = _run([src])
    assert r.exit_code == 0 and r.output.startswith('digraph "main.4" {')
    assert len(_NODE.findall(r.output)) == 7
    out = tmp_path / "g.dot"
    r = _run([src, "--expand-fusions", "-c", "region_0.2.clone.clone.clone", "-o", str(out)])
    assert r.exit_code == 0
    assert "wrote" in r.output and "15 nodes, 17 edges, 2 fusion clusters" in r.output
    assert out.read_text().count("subgraph cluster_") == 2
    html = tmp_path / "g.html"
    assert _run([src, "-o", str(html)]).exit_code == 0
    assert 'data-nodes="7"' in html.read_text()
    r = _run(["-", "--format", "html"], input=CHAIN)
    assert r.exit_code == 0 and r.output.startswith("<!DOCTYPE html>") and 'data-nodes="6"' in r.output
    r = _run(["-", "--around", "c", "--depth", "1"], input=CHAIN)
    assert r.exit_code == 0 and len(_NODE.findall(r.output)) == 3
    assert sorted(p.name for p in tmp_path.iterdir()) == ["g.dot", "g.html"]  # no temporary files left


@needs_dot
def test_cli_svg_and_png(tmp_path):
    src = str(JAX / "cond_simple.after.hlo")
    svg, png = tmp_path / "g.svg", tmp_path / "g.png"
    assert _run([src, "-o", str(svg)]).exit_code == 0
    assert "<svg" in svg.read_text()
    assert _run([src, "--expand-fusions", "-o", str(png)]).exit_code == 0
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_cli_errors(tmp_path, monkeypatch):
    src = str(JAX / "fori_loop_static.after.hlo")
    r = _run([src, "--depth", "2"])
    assert r.exit_code == 2 and "--depth needs --around" in r.output
    r = _run([src, "-o", str(tmp_path / "g.pdf")])
    assert r.exit_code == 2 and "cannot tell the output format" in r.output
    r = _run([src, "--around", "nope"])
    assert r.exit_code == 2 and f"{src}: error: no instruction named 'nope'" in r.output
    bad = tmp_path / "bad.hlo"
    bad.write_text("HloModule m\nENTRY e {\n  ROOT x = f32[] negate(\n}\n")
    r = _run([str(bad)])
    assert r.exit_code == 2 and re.search(rf"{re.escape(str(bad))}:4:1: error: expected", r.output)
    assert "Traceback" not in r.output
    r = _run([src, "-o", str(tmp_path / "no" / "g.dot")])
    assert r.exit_code == 2 and f"{tmp_path / 'no' / 'g.dot'}: error: cannot write" in r.output
    r = _run([str(tmp_path / "missing.hlo")])
    assert r.exit_code == 2 and "error: no such file" in r.output
    # Without Graphviz: a clear message naming the program, exit 2, nothing written.
    monkeypatch.setattr(graph.shutil, "which", lambda name: None)
    out = tmp_path / "g.svg"
    r = _run([src, "-o", str(out)])
    assert r.exit_code == 2
    assert f"{out}: error: SVG output needs Graphviz's 'dot' program, which is not on PATH" in r.output
    assert not out.exists()
    assert _run([src, "-o", str(tmp_path / "ok.html")]).exit_code == 0  # HTML needs nothing
