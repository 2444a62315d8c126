"""`hlo graph` and hlo_interp.graph: DOT structure, Graphviz acceptance, the self-contained HTML view
(rendered by a headless browser when one is installed), --around/--depth, --max-nodes, the CLI."""
from __future__ import annotations

import html
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
from hlo_interp import graph, graph_layout, graph_view
from hlo_interp.cli import main as cli_main

from synthetic import train_step

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
# The HTML view's data: nesting, copies of constants, layouts

def _html_data(page, key="graph-data"):
    return json.loads(re.search(rf'<script type="application/json" id="{key}">(.*?)</script>', page,
                                re.S).group(1))


def _view(name, engine="browser", expand=None, **kw):
    m = _module(name)
    return m, graph_view.view_model(m, graph.build(m, max_nodes=None, **kw), engine=engine, expand=expand)


def test_view_nests_every_called_computation():
    m, V = _view("while_loop_tuple_carry.after.hlo")
    assert V["top"] == "main.6"
    # main.6 -> call.1 -> while.6_computation -> while.1 -> condition region_2.5, body region_0.4 -> fusions
    calls = {n["nm"]: n["c"] for cm in V["comps"].values() for n in cm["n"] if n.get("c")}
    assert calls["call.1"] == [["calls", "while.6_computation"]]
    assert calls["while.1"] == [["condition", "region_2.5"], ["body", "region_0.4"]]
    fusions = [i for i in m.computation("region_0.4").instructions if i.opcode == "fusion"]
    assert len(fusions) == 3 and all(calls[f.name] == [["fused", f.attrs["calls"]]] for f in fusions)
    assert set(V["comps"]) == {"main.6", "while.6_computation", "region_2.5", "region_0.4"} | \
        {f.attrs["calls"] for c in m.computations for f in c.instructions if f.opcode == "fusion"}
    # Collapsed, an opening node says its size and main opcodes.
    w = next(n for n in V["comps"]["while.6_computation"]["n"] if n["nm"] == "while.1")
    body = m.computation("region_0.4")
    assert [t for t, s in w["l"] if s == "detail"][1].startswith(f"body: {len(body.instructions)} instr: ")


def test_constants_and_scalar_broadcasts_are_copied_next_to_each_user():
    m, V = _view("grad_transformer_block.before.hlo")
    comp, cm = m.entry, V["comps"][m.entry.name]
    users = {i.name: 0 for i in comp.instructions}
    for i in comp.instructions:
        for o in dict.fromkeys(i.operands):
            users[o] += sum(1 for x in i.operands if x == o)
    by = {}
    for n in cm["n"]:
        by.setdefault(n["nm"], []).append(n)
    consts = [i for i in comp.instructions if i.opcode == "constant" and users[i.name] > 1]
    assert len(consts) == 1 and users[consts[0].name] == 20  # constant.37: 20 uses
    for c in consts:  # one copy per use, no original
        assert len(by[c.name]) == users[c.name] and all(n.get("dup") for n in by[c.name])
    idx = {id(n): k for k, n in enumerate(cm["n"])}
    outs = {}
    for e in cm["e"]:
        outs.setdefault(e[0], []).append(e)
    for c in consts:
        assert all(len(outs[idx[id(n)]]) == 1 for n in by[c.name])
    bcast = [i for i in comp.instructions if i.opcode == "broadcast" and users[i.name] > 1
             and not comp.instruction(i.operands[0]).shape.dims]
    assert bcast and all(len(by[b.name]) == users[b.name] for b in bcast)
    # Every use is still an edge; each broadcast copy has its own operand edge.
    assert sum(1 for e in cm["e"] if not e[3]) == sum(len(i.operands) for i in comp.instructions) + \
        sum(users[b.name] - 1 for b in bcast)


@needs_dot
def test_dot_layout_parameters_top_root_bottom_no_overlaps():
    m, V = _view("grad_transformer_block.before.hlo", engine="dot")
    assert V["dot"]["laid_out"] == len(V["comps"]) and V["dot"]["left_to_browser"] == 0
    cm = V["comps"][m.entry.name]
    L = cm["L"][0]
    assert L["engine"] == "dot" and L["open"] == []
    ys = L["y"]
    params = [k for k, n in enumerate(cm["n"]) if n["o"] == "parameter"]
    root = next(k for k, n in enumerate(cm["n"]) if n.get("r"))
    assert len(params) == sum(1 for i in m.entry.instructions if i.opcode == "parameter")
    assert all(ys[k] == min(ys) for k in params) and ys[root] == max(ys)
    boxes = [(L["x"][k] - n["w"] / 2, L["y"][k] - n["h"] / 2, L["x"][k] + n["w"] / 2, L["y"][k] + n["h"] / 2)
             for k, n in enumerate(cm["n"])]
    assert _overlaps(boxes) == []
    for e, p in zip(cm["e"], L["p"]):  # operands above users; every edge routed (none is far here)
        assert len(e) == 5 and ys[e[0]] < ys[e[1]] and len(p) >= 8


def _overlaps(boxes, tol=0.5):
    out = []
    order = sorted(range(len(boxes)), key=lambda k: boxes[k][0])
    active = []
    for k in order:
        x0, y0, x1, y1 = boxes[k]
        active = [j for j in active if boxes[j][2] > x0 + tol]
        for j in active:
            if boxes[j][1] < y1 - tol and y0 < boxes[j][3] - tol:
                out.append((j, k))
        active.append(k)
    return out


@needs_dot
def test_dot_lays_out_the_opened_state_with_frame_sizes():
    m, V = _view("grad_cnn.after.hlo", engine="dot", expand="fusion")
    cm = V["comps"][m.entry.name]
    assert len(cm["L"]) == 2
    opened = cm["L"][1]
    fusions = [k for k, n in enumerate(cm["n"]) if n["o"] == "fusion"]
    assert opened["open"] == fusions and len(fusions) == 30
    for k in fusions:  # each opened fusion's box is its frame: the fused computation's own layout + margins
        n = cm["n"][k]
        inner = V["comps"][n["c"][0][1]]["L"][0]
        w, h = opened["sz"][str(k)]
        assert w >= inner["W"] and h == pytest.approx(inner["H"] + 26 + 16 + 12)
        assert w == pytest.approx(graph_layout.frame_size(n, [(f"fused: {n['c'][0][1]}", (inner["W"], inner["H"]))])[0])


def _long_skip_module(n):
    """x feeds the first add and the last: in an n-long chain, one edge spans n layers."""
    lines = ["HloModule chain", "ENTRY e {", "  x = f32[8] parameter(0)", "  a0 = f32[8] negate(x)"]
    lines += [f"  a{k} = f32[8] negate(a{k - 1})" for k in range(1, n)]
    lines += [f"  ROOT r = f32[8] add(a{n - 1}, x)", "}"]
    return hlo_interp.parse("\n".join(lines))


def test_far_edges_left_out_of_big_layouts():
    m = _long_skip_module(graph_view.FAR_MIN_NODES)
    V = graph_view.view_model(m, graph.build(m, max_nodes=None), engine="browser")
    cm = V["comps"][V["top"]]
    far = [e for e in cm["e"] if len(e) > 5]
    assert len(far) == 1 and cm["n"][far[0][0]]["nm"] == "x" and cm["n"][far[0][1]]["nm"] == "r"
    assert cm["n"][far[0][1]]["l"][-1] == ["+1 far operand", "far"]
    assert cm["n"][far[0][0]]["l"][-1] == ["+1 far user", "far"]
    small = _long_skip_module(20)
    cm = graph_view.view_model(small, graph.build(small), engine="browser")["comps"]["e"]
    assert all(len(e) == 5 for e in cm["e"])  # small computations draw every edge
    if DOT:
        V = graph_view.view_model(m, graph.build(m, max_nodes=None), engine="dot")
        L = V["comps"]["e"]["L"][0]
        assert sum(1 for p in L["p"] if not p) == 1  # the far edge was not given to dot


def test_far_edges_where_the_layers_crossed_are_many():
    """Below FAR_MIN_NODES, a computation whose edges cross more than FAR_DUMMIES layers in all
    (the layout engines' cost) has its long edges left out too; a constant's copies sit over their
    users, so their edges are never far."""
    n = 160
    lines = ["HloModule skips", "ENTRY e {", "  x = f32[8] parameter(0)", "  c = f32[8] constant({1, 2, 3, 4, 5, 6, 7, 8})",
             "  a0 = f32[8] negate(x)"]
    for k in range(1, n):
        op = "add" if k >= 60 else "negate"
        extra = ", c" if k in (100, 150) else ", x" if k >= 60 else ""
        lines.append(f"  a{k} = f32[8] {op}(a{k - 1}{extra})")
    lines += [f"  ROOT r = f32[8] negate(a{n - 1})", "}"]
    m = hlo_interp.parse("\n".join(lines))
    cm = graph_view.view_model(m, graph.build(m, max_nodes=None), engine="browser")["comps"]["e"]
    assert len(cm["n"]) < graph_view.FAR_MIN_NODES
    names = [nd["nm"] for nd in cm["n"]]
    far = sorted(names[e[1]] for e in cm["e"] if len(e) > 5)
    assert all(names[e[0]] == "x" for e in cm["e"] if len(e) > 5)
    assert far == sorted(f"a{k}" for k in range(60, n) if k not in (100, 150) and k - 0 > graph_view.REF_SPAN)
    copies = [k for k, nd in enumerate(cm["n"]) if nd["nm"] == "c"]
    assert len(copies) == 2 and all(cm["n"][k].get("dup") for k in copies)
    assert [len(e) for e in cm["e"] if e[0] in copies] == [5, 5]
    fewer = _long_skip_module(60)  # one long edge: 60 layers crossed, drawn
    cm = graph_view.view_model(fewer, graph.build(fewer), engine="browser")["comps"]["e"]
    assert all(len(e) == 5 for e in cm["e"])


def test_html_is_self_contained():
    m = _module("grad_transformer_block.after.hlo")
    page = graph.to_html(m, engine="browser")
    assert page.startswith("<!DOCTYPE html>")
    assert re.findall(r"https?://[^\s\"'<>]+", page) == ["http://www.w3.org/2000/svg"]  # the SVG namespace
    assert "<link" not in page and not re.search(r"<script[^>]*\bsrc=", page) and "@import" not in page
    assert "@dagrejs/dagre 3.1.3 (npm), MIT license" in page  # the bundled layout engine, named
    assert (Path(graph_view.__file__).parent / "assets" / "dagre.LICENSE").read_text().startswith("Copyright")
    V = _html_data(page)
    main = V["comps"][V["top"]]
    dups = [n for n in main["n"] if n.get("dup")]  # a constant used 4 times: 4 copies
    assert len(dups) == 4 and len({n["nm"] for n in dups}) == 1
    assert len(main["n"]) == 67 + 3 and sum(1 for e in main["e"] if not e[3]) == 149
    assert len(V["comps"]) == 1 + 49  # each fusion's computation, laid out in the page when opened
    assert 'data-nodes="67"' in page
    n0 = main["n"][0]
    assert n0["t"].startswith("%") and n0["on"] and n0["sh"]


def test_html_around_and_max_nodes():
    page = graph.to_html(hlo_interp.parse(CHAIN), around="c", depth=1, engine="browser")
    assert 'data-nodes="3"' in page and "around c (depth 1)" in page
    m = _module("grad_transformer_block.after.hlo")
    V = _html_data(graph.to_html(m, max_nodes=10, engine="browser"))
    assert len(V["comps"][V["top"]]["n"]) == 10


def test_metadata_source_line_from_stack_frames():
    m, V = _view("grad_cnn.after.hlo")
    srcs = [n.get("src") for cm in V["comps"].values() for n in cm["n"]]
    assert any(s and re.search(r"\.py:\d+", s) for s in srcs)


# --------------------------------------------------------------------------------------------------
# The headless browser renders the pages: whole graph fitted at load, labels apart at 1:1

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


def _browser(args, tmp_path, size=(1200, 800)):
    prof = tmp_path / f"profile{len(list(tmp_path.iterdir()))}"
    cmd = [BROWSER, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
           "--disable-background-networking", "--disable-component-update", "--disable-sync",
           f"--user-data-dir={prof}", f"--window-size={size[0]},{size[1]}"] + args
    return subprocess.run(cmd, capture_output=True, timeout=180)


# The test's own measurement, appended to the page (not the page's opinion of itself): the fitted
# graph's box against each pane's box and the window, no scrolling; then every viewer at 1:1 and
# the bounding boxes of the visible nodes' label text, pairwise.
_MEASURE = r"""<script>(function(){
var out={panes:[]};
var vs=window.hloViewers||[window.hloViewer];
vs.forEach(function(v){var s=v.svg.getBoundingClientRect(),g=v.vp.getBoundingClientRect(),hs=[],ink=0;
 v.svg.querySelectorAll('.node>rect').forEach(function(r){var b=r.getBoundingClientRect();
  if(b.width>0){hs.push(b.height);ink+=b.width*b.height;}});
 hs.sort(function(a,b){return a-b;});
 out.panes.push({view:[s.left,s.top,s.right,s.bottom],graph:[g.left,g.top,g.right,g.bottom],S:v.S,
  open:+v.svg.getAttribute('data-open'),low:v.svg.classList.contains('low'),cols:+v.svg.getAttribute('data-cols'),
  block_h:hs.length?hs[hs.length>>1]:0,ink:ink/((s.right-s.left)*(s.bottom-s.top))});});
vs.forEach(function(v){var C=v.root.C,L=v.root.L,ys=L.y,par=[],root=-1;
 C.n.forEach(function(n,i){if(n.o==='parameter'&&!n.dup)par.push(ys[i]);if(n.r)root=ys[i];});
 out.panes[vs.indexOf(v)].layers={engine:L.engine,params_top:par.every(function(y){return y===Math.min.apply(null,ys);}),
  root_bottom:root===Math.max.apply(null,ys),params:par.length};});
out.scroll=[document.documentElement.scrollWidth,document.documentElement.scrollHeight,innerWidth,innerHeight];
out.ready=document.body.getAttribute('data-ready');
out.ms=+document.body.getAttribute('data-load-ms');
vs.forEach(function(v){v.S=1;v.TX=0;v.TY=0;v.apply();});
out.labels=0;out.overlaps=0;out.example=null;
vs.forEach(function(v){var boxes=[];
v.svg.querySelectorAll('.node').forEach(function(n){var l=n.querySelector('g.lab');if(!l)return;
 var r=l.getBoundingClientRect();if(r.width>0&&r.height>0)boxes.push([r.left,r.top,r.right,r.bottom]);});
out.labels+=boxes.length;
var order=boxes.map(function(b,i){return i;}).sort(function(a,b){return boxes[a][0]-boxes[b][0];}),act=[];
order.forEach(function(k){var b=boxes[k];act=act.filter(function(j){return boxes[j][2]>b[0]+0.5;});
 act.forEach(function(j){var c=boxes[j];if(c[1]<b[3]-0.5&&b[1]<c[3]-0.5){out.overlaps++;if(!out.example)out.example=[c,b];}});
 act.push(k);});});
out.hidden_text=0;
document.querySelectorAll('.node text').forEach(function(t){if(getComputedStyle(t).display==='none')out.hidden_text++;});
var p=document.createElement('pre');p.id='measure';p.textContent=JSON.stringify(out);document.body.appendChild(p);
})();</script>"""


def _measure(page: str, tmp_path, size=(1200, 800), hash=""):
    f = tmp_path / f"m{len(list(tmp_path.iterdir()))}.html"
    f.write_text(page.replace("</body></html>", _MEASURE + "</body></html>"))
    dom = _browser(["--dump-dom", f.as_uri() + hash], tmp_path, size).stdout.decode()
    return json.loads(html.unescape(re.search(r'<pre id="measure">(.*?)</pre>', dom, re.S).group(1)))


def _check_fitted(r, min_scale=None):
    assert r["ready"] == "1"
    sw, sh, iw, ih = r["scroll"]
    assert sw <= iw and sh <= ih  # no scrolling
    for p in r["panes"]:
        v, g = p["view"], p["graph"]
        assert v[0] - 1 <= g[0] and g[2] <= v[2] + 1 and v[1] - 1 <= g[1] and g[3] <= v[3] + 1, p
        # and it fills the pane along one side (fitted, not just small)
        assert max((g[2] - g[0]) / (v[2] - v[0]), (g[3] - g[1]) / (v[3] - v[1])) > 0.85, p
    assert r["labels"] > 0 and r["overlaps"] == 0, r["example"]


def _screenshot(page: str, tmp_path, size=(1200, 800)):
    f = tmp_path / f"s{len(list(tmp_path.iterdir()))}.html"
    f.write_text(page)
    shot = tmp_path / "shot.png"
    _browser([f"--screenshot={shot}", f.as_uri()], tmp_path, size)
    px = _png_pixels(shot.read_bytes())
    assert px.shape == (size[1], size[0], 3)
    return px


def _colour_px(px, hexcolour):
    rgb = tuple(int(hexcolour[k:k + 2], 16) for k in (1, 3, 5))
    return int((px == rgb).all(axis=2).sum())


@needs_browser
@pytest.mark.parametrize("engine", ["dot", "browser"])
@pytest.mark.parametrize("size", [(1200, 800), (640, 1000)])
def test_browser_transformer_whole_graph_at_load(tmp_path, engine, size):
    if engine == "dot" and DOT is None:
        pytest.skip("Graphviz 'dot' is not installed")
    m = _module("grad_transformer_block.before.hlo")
    page = graph.to_html(m, engine=engine)
    r = _measure(page, tmp_path, size)
    _check_fitted(r)
    assert r["panes"][0]["low"] and r["panes"][0]["S"] < 0.4  # an overview: opcode-coloured blocks
    assert r["labels"] >= 241  # every node's label measured at 1:1
    lay = r["panes"][0]["layers"]  # dot's rank=source / rank=sink, and dagre given the same layering
    assert lay["engine"] == ("dot" if engine == "dot" else "dagre") and lay["params"] == sum(i.opcode == "parameter" for i in m.entry.instructions)
    assert lay["params_top"] and lay["root_bottom"]
    px = _screenshot(page, tmp_path, size)
    assert _colour_px(px, "#3fa34d") > 50  # parameter blocks (low zoom colours)
    assert _colour_px(px, "#e07b22") + _colour_px(px, "#8a55c7") > 50  # reduce / dot blocks


@needs_browser
@pytest.mark.parametrize("engine", ["dot", "browser"])
def test_browser_deep_model_overview(tmp_path, engine):
    """A 1,015-instruction training step (56 layers, 114 parameters): laid out as is, its fitted
    picture is a diagonal line between two very wide rows, blocks under 2 px tall.  The page wraps the
    wide layers and folds the tall result into columns: at load, in a 1200x800 window, the median
    block is at least 5 px tall and the blocks cover at least 8% of the pane."""
    if engine == "dot" and DOT is None:
        pytest.skip("Graphviz 'dot' is not installed")
    m = hlo_interp.parse(train_step(56))
    assert len(m.entry.instructions) == 1015
    page = graph.to_html(m, engine=engine)
    r = _measure(page, tmp_path)
    _check_fitted(r)
    p = r["panes"][0]
    assert p["cols"] >= 4 and p["block_h"] >= 5 and p["ink"] >= 0.08, p
    assert p["layers"]["params_top"] and p["layers"]["root_bottom"]
    if engine == "dot":  # with its 56 activations as fusions, opened at load: still folded
        r = _measure(graph.to_html(hlo_interp.parse(train_step(56, fused=True)), expand_fusions=True, engine=engine),
                     tmp_path)
        _check_fitted(r)
        p = r["panes"][0]
        assert p["open"] == 56 and p["cols"] >= 4 and p["block_h"] >= 4, p


@needs_browser
def test_browser_cnn_with_fusions_expanded(tmp_path):
    m = _module("grad_cnn.after.hlo")
    page = graph.to_html(m, expand_fusions=True)
    r = _measure(page, tmp_path)
    _check_fitted(r)
    assert r["panes"][0]["open"] == 30
    px = _screenshot(page, tmp_path)
    assert _colour_px(px, "#eef4fd") > 2000  # the opened fusions' frames


@needs_browser
def test_browser_while_with_body_expanded(tmp_path):
    m = _module("while_loop_tuple_carry.after.hlo")
    page = graph.to_html(m, expand_all=True)
    r = _measure(page, tmp_path)
    _check_fitted(r)
    # main's fusion, call.1, while.1, the 3 fusions of the body and the 1 of the condition (region_2.5)
    assert r["panes"][0]["open"] == 1 + 2 + 3 + 1
    px = _screenshot(page, tmp_path)
    for frame in ("#eef4fd", "#f3eefc", "#eefaf0"):  # nesting depths 0, 1, 2
        assert _colour_px(px, frame) > 1000, frame


@needs_browser
def test_browser_url_fragment_selects_and_reveals(tmp_path):
    m = _module("while_loop_tuple_carry.after.hlo")
    body = m.computation("region_0.4")
    fused = next(i for i in body.instructions if i.opcode == "fusion")
    inner = m.computation(fused.attrs["calls"]).root.name
    page = graph.to_html(m)
    f = tmp_path / "g.html"
    f.write_text(page)
    dom = _browser(["--dump-dom", f.as_uri() + f"#{fused.attrs['calls']}/{inner}"], tmp_path).stdout.decode()
    # The callers were opened down to the fused computation, the node selected, its text shown.
    assert re.search(r'<g class="node[^"]*\bsel\b[^"]*"', dom)
    assert re.search(r'data-open="3"', dom)  # call.1, while.1, the fusion
    assert f"<b>%{inner}</b> in {fused.attrs['calls']}" in dom


_FIND = r"""<script>(function(){
var out=[],inp=document.getElementById('find');
QUERIES.forEach(function(q){inp.value=q;inp.dispatchEvent(new Event('input'));
 inp.dispatchEvent(new KeyboardEvent('keydown',{key:'Enter'}));
 var v=window.hloViewer;out.push([q,document.getElementById('found').textContent,v.selected,location.hash]);});
var p=document.createElement('pre');p.id='find-out';p.textContent=JSON.stringify(out);document.body.appendChild(p);
})();</script>"""


@needs_browser
def test_browser_find_by_name_opcode_and_op_name(tmp_path):
    m = _module("grad_cnn.after.hlo")
    # an op_name only found inside a fused computation, so finding it opens the fusion
    fused = {f.attrs["calls"] for f in m.entry.instructions if f.opcode == "fusion"}
    target = next(i for c in m.computations if c.name in fused for i in c.instructions
                  if i.opcode == "compare" and i.attrs.get("metadata", {}).get("op_name"))
    op_name = target.attrs["metadata"]["op_name"]
    holders = {c.name for c in m.computations for i in c.instructions
               if i.attrs.get("metadata", {}).get("op_name") == op_name}
    queries = [m.entry.root.name, "convolution", op_name]
    page = graph.to_html(m).replace("</body></html>", _FIND.replace("QUERIES", json.dumps(queries)) + "</body></html>")
    f = tmp_path / "g.html"
    f.write_text(page)
    dom = _browser(["--dump-dom", f.as_uri()], tmp_path).stdout.decode()
    out = json.loads(html.unescape(re.search(r'<pre id="find-out">(.*?)</pre>', dom, re.S).group(1)))
    (q0, n0, sel0, h0), (q1, n1, sel1, _), (q2, n2, sel2, h2) = out
    assert sel0 == [m.entry.name, m.entry.root.name] and h0 == f"#{m.entry.root.name}" and n0.startswith("1 of ")
    convs = sum(1 for c in m.computations for i in c.instructions if i.opcode == "convolution")
    assert n1 == f"1 of {convs}" and sel1[1] in {i.name for c in m.computations for i in c.instructions
                                                  if i.opcode == "convolution"}
    same = sum(1 for c in m.computations for i in c.instructions
               if op_name.lower() in str(i.attrs.get("metadata", {}).get("op_name", "")).lower())
    assert n2 == f"1 of {same}" and sel2[0] in holders and h2 == f"#{sel2[0]}/{sel2[1]}"
    assert 'data-open="' in dom


@needs_browser
def test_browser_diff_page(tmp_path):
    from hlo_interp import diff
    a, b = (ROOT / "tests" / "data" / "diff" / f"fusion.{s}.hlo" for s in "ab")
    res = diff.diff_modules(hlo_interp.parse(a.read_text()), hlo_interp.parse(b.read_text()), a_name="a", b_name="b")
    page = res.to_html()
    D = _html_data(page, "diff-data")
    st = {n.get("ds") for s in "AB" for cm in D[s]["comps"].values() for n in cm["n"]}
    assert {"add", "rm", "ch"} <= st
    r = _measure(page, tmp_path, (1400, 800))
    assert len(r["panes"]) == 2
    _check_fitted(r)
    px = _screenshot(page, tmp_path, (1400, 800))
    for fill in ("#c9f0d1", "#fdf0c2"):  # added and changed nodes on screen
        assert _colour_px(px, fill) > 300, fill
    # Selecting a node selects its match on the other side.
    f = tmp_path / "d.html"
    f.write_text(page)
    pair = next((x, y) for c in res.computations if c.a is not None and c.b is not None and c.a.is_entry
                for x, y in c.pairs if x != y)
    dom = _browser(["--dump-dom", f.as_uri() + f"#A:{pair[0]}"], tmp_path, (1400, 800)).stdout.decode()
    assert f"matched with <b>%{pair[1]}</b> in B" in dom
    assert len(re.findall(r'class="node[^"]*\blinked\b', dom)) == 1


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
    page = tmp_path / "g.html"
    assert _run([src, "-o", str(page)]).exit_code == 0
    assert 'data-nodes="7"' in page.read_text()
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
    monkeypatch.setattr(shutil, "which", lambda name: None)
    out = tmp_path / "g.svg"
    r = _run([src, "-o", str(out)])
    assert r.exit_code == 2
    assert f"{out}: error: SVG output needs Graphviz's 'dot' program, which is not on PATH" in r.output
    assert not out.exists()
    assert _run([src, "-o", str(tmp_path / "ok.html")]).exit_code == 0  # HTML needs nothing
