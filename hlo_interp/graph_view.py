"""The interactive HTML view of `hlo graph` (and the pictures of `hlo diff --format html`).

The page is self-contained (inline data, CSS and JavaScript; nothing fetched).  Every computation the
drawn one calls (fusions, while bodies and conditions, conditional branches, calls, async wrapped
computations; recursively) goes into it as data, and is drawn only when opened, in place.

Layout is per computation, by a well-kept layered layout engine, not our own code:

* Graphviz `dot` (`-Tjson`), run here when it is installed (graph_layout.py): it gets boxes of the
  labels' sizes and gives centres and spline control points.  Parameters are on the top rank, the ROOT on the bottom.
* Otherwise (or for a computation dot did not finish in the time budget), the page lays it out
  itself, when the computation is first shown, with dagre (@dagrejs/dagre, MIT license, bundled as
  hlo_interp/assets/dagre.min.js with its license file beside it): the established JavaScript
  port of the same Sugiyama pipeline (barycentric crossing reduction, Brandes-Koepf placement),
  49 KB, no dependencies.  Its layering is given (graph_view.js: parameters on the top layer, the
  ROOT on the bottom one, every other node just above its highest user), in linear time, in place
  of its network simplex.
* A big computation that fits the window badly (a deep model: a long chain between a row of weights
  and a row of their updates) is rearranged in the page for the window: layers centred, very wide
  ones wrapped, the result folded into side-by-side columns (graph_view.js, Inst.arrange).

Constants, and broadcasts of scalars, used by several instructions are drawn once next to each user
(dashed: a copy), as XLA's own graph dumps do, instead of as long edges across the picture.
"""
from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import Optional

from . import ir
from .graph_labels import (called_computations, fill_color, fusion_kind, instruction_text, label_head, label_tail,
                           short_shape, summarize)
from .graph_layout import DOT_BUDGET_S, lay_out
from .graph_model import Graph, Node, build
from .sources import SourceLocations

__all__ = ["view_model", "page", "to_html", "ENGINES", "asset", "comp_model", "reachable", "script_json", "scripts"]

ASSETS = Path(__file__).resolve().parent / "assets"
ENGINES = ("auto", "dot", "browser")
EXPANDABLE = {"fusion", "while", "conditional", "call", "async-start", "custom-call"}
FAR_MIN_NODES = 500  # in computations this big, edges longer than REF_SPAN layers are "far"
REF_SPAN = 6
FAR_DUMMIES = 6000  # ... and in smaller ones whose edges cross more layers than this in all

# Label geometry: monospace text, so the sizes given to the layout engine are the drawn ones.
CHAR_W = {"op": 7.4, "name": 6.8, "shape": 6.8, "detail": 6.8, "warn": 6.8, "far": 6.8}
LINE_H = {"op": 15, "name": 13, "shape": 13, "detail": 13, "warn": 12, "far": 13}
_LABEL_MAX = 60


@lru_cache(maxsize=None)
def asset(name: str) -> str:
    """The text of a bundled file under hlo_interp/assets/ (the page's CSS and JavaScript)."""
    return (ASSETS / name).read_text(encoding="utf-8")


def _callees(module: ir.Module, ins: ir.Instruction) -> list:
    """[(caption, computation name)] an instruction opens into, [] when it is not expandable."""
    op = ins.opcode
    if op not in EXPANDABLE and not op.endswith("-start"):
        return []
    out = []
    for attr, cname in called_computations(ins):
        cap = {"calls": "fused" if op == "fusion" else "calls", "true_computation": "true",
               "false_computation": "false", "to_apply": "calls"}.get(attr, attr)
        if cap.startswith("branch_computations["):
            cap = "branch " + cap[len("branch_computations["):-1]
        elif cap.startswith("called_computations["):
            cap = "calls " + cap[len("called_computations["):-1]
        out.append((cap, cname))
    return out


def _cut(t: str, n: int = _LABEL_MAX) -> str:
    return t if len(t) <= n else t[:n - 1] + "…"


def _lines(node: Node, module: ir.Module, comps: dict) -> list:
    """[(text, style)]: opcode line, then what it computes/calls (size and main opcodes), name, shape."""
    ins = node.ins
    op = ins.opcode
    lines = label_head(node)
    called = _callees(module, ins)
    for cap, cname in called[:4]:
        c = comps.get(cname)
        if c is None:
            lines.append((f"{cap}: {cname}", "detail"))
            continue
        what = f"{len(c.instructions)} instr: {summarize(c, 3)}"
        lines.append((what if op == "fusion" else f"{cap}: {what}", "detail"))
    if len(called) > 4:
        lines.append((f"… +{len(called) - 4} more computations", "detail"))
    if not called:
        for attr, cname in called_computations(ins)[:2]:  # reduce, sort, scatter, ...: what they apply
            c = comps.get(cname)
            lines.append((f"{attr}: {summarize(c, 3) if c is not None else cname}", "detail"))
    lines += label_tail(node)
    return [(_cut(t), s) for t, s in lines]


def _size(lines) -> tuple:
    w = max(len(t) * CHAR_W[s] for t, s in lines) + 16
    h = sum(LINE_H[s] for _, s in lines) + 8
    return round(max(w, 56.0), 1), float(h)


def _dupable(ins: ir.Instruction, by_name: dict) -> bool:
    if ins.opcode == "constant" and not ins.operands:
        return True
    if ins.opcode == "broadcast" and len(ins.operands) == 1:
        src = by_name.get(ins.operands[0])
        return src is not None and isinstance(src.shape, ir.ArrayShape) and not src.shape.dims
    return False


def comp_model(g: Graph, comps: dict, sources: SourceLocations, status: Optional[dict] = None) -> dict:
    """One computation as the page's data: nodes (labels, sizes, text, metadata) and edges."""
    m = g.module
    ids = list(g.nodes)
    index = {nid: k for k, nid in enumerate(ids)}
    out_edges: dict = {k: [] for k in range(len(ids))}
    in_edges: dict = {k: [] for k in range(len(ids))}
    edges = []
    for e in g.edges:
        k = len(edges)
        edges.append([index[e.src], index[e.dst], e.operand_index, int(e.control), "" if e.control else e.label])
        out_edges[index[e.src]].append(k)
        in_edges[index[e.dst]].append(k)
    by_name = {i.name: i for i in g.computation.instructions}
    nodes = []
    for nid in ids:
        n = g.nodes[nid]
        nodes.append(_node_data(n, m, comps, sources, status))
    # Copies next to each user, users first so a constant feeding copied broadcasts is copied too.
    dead = set()
    for k in range(len(ids) - 1, -1, -1):
        n = g.nodes[ids[k]]
        outs = out_edges[k]
        if n.is_root or len(outs) < 2 or n.cluster is not None or not _dupable(n.ins, by_name) \
                or any(edges[j][3] for j in outs) or any(edges[j][3] for j in in_edges[k]):
            continue
        for j in outs:
            c = len(nodes)
            copy = dict(nodes[k])
            copy["dup"] = 1
            nodes.append(copy)
            edges[j][0] = c
            out_edges[c] = [j]
            in_edges[c] = []
            for i in in_edges[k]:  # its own operand edges, once per copy
                e2 = list(edges[i])
                e2[1] = c
                in_edges[c].append(len(edges))
                out_edges[e2[0]].append(len(edges))
                edges.append(e2)
        for i in in_edges[k]:
            out_edges[edges[i][0]].remove(i)
            edges[i] = None
        dead.add(k)
    if dead:  # renumber without the originals
        keep = [k for k in range(len(nodes)) if k not in dead]
        new = {k: i for i, k in enumerate(keep)}
        nodes = [nodes[k] for k in keep]
        edges = [[new[e[0]], new[e[1]]] + e[2:] for e in edges if e is not None]
    _far(nodes, edges)
    return {"n": nodes, "e": edges, "size": len(g.computation.instructions), "L": None}


def _far(nodes: list, edges: list, span: int = REF_SPAN) -> None:
    """In a big computation, an edge spanning more than `span` layers (a weight read by the 30th
    layer of a model, an activation saved for the backward pass) is marked far (a 6th field, 1): the
    layout engines leave it out (long edges cost them time quadratic in their length and draw bundles
    of lines across the whole picture), its ends say "+k far operands/users", and the page draws it
    only while one of its ends is selected.  This is done in computations of FAR_MIN_NODES nodes or
    more, and in smaller ones where the edges cross more than FAR_DUMMIES layers in all (the layout
    engines' cost grows with that sum: a 400-node training step whose every weight is read far down
    takes dot over 90 s and dagre a minute with its 80,000 crossings, 1.4 s without its far edges)."""
    n = len(nodes)
    preds: list = [[] for _ in range(n)]
    for e in edges:
        if not e[3]:
            preds[e[1]].append(e[0])
    layer = [-1] * n
    for k in range(n):
        if layer[k] >= 0:
            continue
        stack = [k]
        while stack:
            v = stack[-1]
            todo = [u for u in preds[v] if layer[u] < 0 and u != v and u not in stack]
            if todo:
                stack += todo
                continue
            stack.pop()
            if layer[v] < 0:
                layer[v] = 1 + max((layer[u] for u in preds[v] if u != v and layer[u] >= 0), default=-1)
    # Then every node but a parameter moves down next to its highest user (users first), as the
    # layouts place them: a constant or its copy sits over its user, not on the top layer.
    succs: list = [[] for _ in range(n)]
    for v in range(n):
        for u in preds[v]:
            if u != v:
                succs[u].append(v)
    for v in sorted(range(n), key=lambda k: -layer[k]):
        if succs[v] and not (nodes[v]["o"] == "parameter" and not nodes[v].get("dup")):
            layer[v] = min(layer[w] for w in succs[v]) - 1
    if n < FAR_MIN_NODES and sum(max(0, layer[e[1]] - layer[e[0]] - 1) for e in edges if not e[3]) <= FAR_DUMMIES:
        return
    far_in = [0] * n
    far_out = [0] * n
    for e in edges:
        if not e[3] and layer[e[1]] - layer[e[0]] > span:
            e.append(1)
            far_in[e[1]] += 1
            far_out[e[0]] += 1
    for k, nd in enumerate(nodes):
        parts = []
        if far_in[k]:
            parts.append(f"+{far_in[k]} far operand{'s' if far_in[k] > 1 else ''}")
        if far_out[k]:
            parts.append(f"+{far_out[k]} far user{'s' if far_out[k] > 1 else ''}")
        if parts:
            nd["l"] = nd["l"] + [[" ".join(parts), "far"]]
            nd["w"], nd["h"] = _size(nd["l"])


def _node_data(n: Node, m: ir.Module, comps: dict, sources: SourceLocations, status: Optional[dict]) -> dict:
    ins = n.ins
    lines = _lines(n, m, comps)
    w, h = _size(lines)
    d = {"o": ins.opcode, "nm": ins.name, "k": n.kind, "f": fill_color(n), "w": w, "h": h,
         "l": [list(x) for x in lines], "t": instruction_text(ins), "sh": short_shape(ins.shape)}
    if ins.opcode == "fusion":
        d["fk"] = fusion_kind(ins).split()[0]
    if n.is_root:
        d["r"] = 1
    called = [[cap, c] for cap, c in _callees(m, ins) if c in comps]
    if called:
        d["c"] = called
    if n.hidden_operands or n.hidden_users:
        d["p"] = 1
    on, src = sources(ins)
    if on:
        d["on"] = on
    if src:
        d["src"] = src
    if status:
        st = status.get(ins.name)
        if st:
            d["ds"] = st[0]
            if len(st) > 1 and st[1]:
                d["dc"] = st[1]
    return d


# --------------------------------------------------------------------------------------------------
# The data of a page

def reachable(module: ir.Module, top: ir.Computation) -> list:
    """Computation names reachable from `top` through expandable instructions, breadth first."""
    comps = {c.name: c for c in module.computations}
    seen, order = {top.name}, [top.name]
    k = 0
    while k < len(order):
        for ins in comps[order[k]].instructions:
            for _, c in _callees(module, ins):
                if c in comps and c not in seen:
                    seen.add(c)
                    order.append(c)
        k += 1
    return order


def view_model(module: ir.Module, g: Graph, *, engine: str = "auto", expand: Optional[str] = None,
               status: Optional[dict] = None, view_id: str = "g", budget_s: float = DOT_BUDGET_S) -> dict:
    """The page's data for graph g (its computation as built, with --around/--max-nodes applied) and
    every computation it opens into.  engine: auto (dot when installed, else the browser), dot, or
    browser (dagre in the page).  expand: None, "fusion" or "all" (opened at load).  status: per
    computation name, {instruction name: (diff status, [change lines])} for the diff view."""
    if engine not in ENGINES:
        from .diagnostics import HloError
        raise HloError(f"unknown layout engine '{engine}'; expected one of {', '.join(ENGINES)}")
    comps = {c.name: c for c in module.computations}
    sources = SourceLocations(module)
    order = reachable(module, g.computation)
    models = {}
    for c in order:
        sub = g if c == g.computation.name else build(module, c, max_nodes=None)
        models[c] = comp_model(sub, comps, sources, (status or {}).get(c))
    stats = {"laid_out": 0, "left_to_browser": len(order)}
    if engine in ("auto", "dot"):
        stats = lay_out(models, order, expand, budget_s)
    else:
        for cm in models.values():
            cm["L"] = []
    return {"id": view_id, "top": g.computation.name, "comps": models, "expand": expand,
            "lineH": LINE_H, "dot": stats}


def script_json(data) -> str:
    """`data` as JSON that is safe inside a <script> element (no `<`, `>` or `&`)."""
    text = json.dumps(data, separators=(",", ":"), ensure_ascii=False)
    return text.replace("&", "\\u0026").replace("<", "\\u003c").replace(">", "\\u003e")


def _h(s: str) -> str:
    import html
    return html.escape(s, quote=True)


def scripts() -> str:
    """The inline scripts of a page: dagre (computations dot did not lay out, and the layouts of
    states made by opening nodes), then the viewer."""
    return f"<script>{asset('dagre.min.js')}</script>\n<script>{asset('graph_view.js')}</script>"


def page(g: Graph, V: dict) -> str:
    m = g.module
    title = f"{m.name} · {g.computation.name}"
    if g.around:
        title += f" · around {g.around} (depth {g.depth})"
    total = sum(len(cm["n"]) for cm in V["comps"].values())
    counts = f"{len(g.nodes)} instructions"
    if len(V["comps"]) > 1:
        counts += f" · {len(V['comps']) - 1} nested computations ({total} nodes)"
    notes = list(g.notes)
    note = _h("; ".join(notes))
    return "\n".join([
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>{_h(title)}</title>",
        f"<style>{asset('graph_view.css')}</style></head>",
        f'<body data-nodes="{len(g.nodes)}" data-edges="{len(g.edges)}" data-ready="0">',
        f'<div id="bar"><b>{_h(title)}</b><span class="counts">{_h(counts)}</span>'
        f'<span id="note" title="{note}">{note}</span>'
        '<span class="sp"></span><input id="find" placeholder="find: name, opcode, op_name" size="24">'
        '<span id="found"></span><button id="fit">Fit</button><button id="expand" title="open every fusion">'
        'Open fusions</button><button id="expandall" title="open every fusion, while, conditional, call, '
        'recursively">Open all</button><button id="collapse">Close all</button></div>',
        '<div id="view"></div><div id="info"></div>',
        f'<script type="application/json" id="graph-data">{script_json(V)}</script>',
        scripts(),
        "<script>hloGraphPage();</script>",
        "</body></html>", ""])


def to_html(module: ir.Module, computation: Optional[str] = None, *, expand_fusions: bool = False,
            expand_all: bool = False, engine: str = "auto", around: Optional[str] = None, depth: int = 2,
            max_nodes: Optional[int] = None, control_edges: bool = True) -> str:
    """A self-contained page of one computation and everything it calls (see the module doc)."""
    g = build(module, computation, around=around, depth=depth, max_nodes=max_nodes,
              control_edges=control_edges)
    return graph_page(g, expand="all" if expand_all else "fusion" if expand_fusions else None, engine=engine)


def graph_page(g: Graph, expand: Optional[str] = None, engine: str = "auto") -> str:
    return page(g, view_model(g.module, g, engine=engine, expand=expand))

