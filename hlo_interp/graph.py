"""Pictures of HLO computations: Graphviz DOT text, a self-contained HTML page, SVG/PNG via Graphviz.

    >>> from hlo_interp import graph
    >>> dot_text = graph.to_dot(module)                          # the entry computation, fusions collapsed
    >>> dot_text = graph.to_dot(module, expand_fusions=True)     # fused computations as clusters
    >>> html = graph.to_html(module, around="add.3", depth=2)    # a page that needs nothing installed
    >>> graph.save(module, "out.svg")                            # by extension: .dot .html .svg .png

Nodes are instructions (opcode first, then name and shape; parameters, constants, fusions, control flow
and ROOT styled apart); edges run from operand to user and carry the operand's shape.  A collapsed
fusion is one node labelled with its kind and a summary of the fused opcodes; an expanded one is a
cluster holding the fused computation.  The computations called by while, conditional, call, reduce,
sort, scatter, ... are summarized in their caller's label.

The HTML view lays the graph out itself (a layered, Sugiyama-style layout: longest-path layers, dummy
nodes on long edges, barycentric ordering, order-preserving least-squares x placement) and embeds it
as SVG, with a few lines of inline JavaScript for pan/zoom, hover details and expanding fusions in place.
"""
from __future__ import annotations

import difflib
import html as _html
import json
import os
import re
import shutil
import subprocess
from collections import deque
from dataclasses import dataclass, field
from typing import Optional

from . import ir
from .diagnostics import HloError

__all__ = ["Graph", "Node", "Edge", "Cluster", "build", "to_dot", "to_html", "render", "save",
           "FORMATS", "DEFAULT_MAX_NODES"]

DEFAULT_MAX_NODES = 500
FORMATS = ("dot", "html", "svg", "png")
_TEXT_LIMIT = 3000  # characters of instruction text kept for hover/tooltips


# --------------------------------------------------------------------------------------------------
# The graph model

@dataclass
class Node:
    id: str
    ins: ir.Instruction
    comp: ir.Computation
    cluster: Optional[str] = None  # id of the expanded fusion cluster that holds this node
    hidden_operands: int = 0  # neighbours left out by --around
    hidden_users: int = 0

    @property
    def is_root(self) -> bool:
        return self.ins is self.comp.root

    @property
    def kind(self) -> str:
        """parameter, constant, fusion, control, or the opcode family (elementwise, movement, ...)."""
        op = self.ins.opcode
        if op in ("parameter", "constant", "fusion"):
            return op
        return _family(op)


@dataclass
class Edge:
    src: str  # node ids
    dst: str
    label: str  # the operand's shape, short
    operand_index: int = 0
    control: bool = False  # a control-predecessors edge (drawn dashed, no value flows)


@dataclass
class Cluster:
    id: str
    fusion: ir.Instruction  # the fusion instruction drawn as this cluster
    comp: ir.Computation  # its fused computation
    parent: Optional[str] = None


@dataclass
class Graph:
    module: ir.Module
    computation: ir.Computation
    nodes: dict = field(default_factory=dict)  # id -> Node, in drawing order
    edges: list = field(default_factory=list)
    clusters: dict = field(default_factory=dict)  # id -> Cluster
    omitted: int = 0  # instructions left out because of max_nodes
    max_nodes: int = DEFAULT_MAX_NODES
    around: Optional[str] = None
    depth: Optional[int] = None
    notes: list = field(default_factory=list)

    def node_for(self, name: str, comp: Optional[ir.Computation] = None) -> Optional[Node]:
        comp = comp or self.computation
        for n in self.nodes.values():
            if n.ins.name == name and n.comp is comp:
                return n
        return None


# --------------------------------------------------------------------------------------------------
# Building

def _family(opcode: str) -> str:
    from .opcodes import OPCODES, split_async
    op = OPCODES.get(opcode)
    if op is None:
        base, suf = split_async(opcode)
        op = OPCODES.get(base) if suf else None
        if op is not None:
            return "async"
    return op.family if op is not None else "other"


def _similar(name: str, names: list) -> list:
    close = difflib.get_close_matches(name, names, n=3)
    for n in names:
        if len(close) < 3 and n not in close and (n.startswith(name) or name in n):
            close.append(n)
    return close


def _find_computation(module: ir.Module, name: str) -> ir.Computation:
    name = name.lstrip("%")
    for c in module.computations:
        if c.name == name:
            return c
    names = [c.name for c in module.computations]
    close = _similar(name, names)
    hint = f"; did you mean {', '.join(close)}?" if close else \
        f"; the module has {len(names)}: {', '.join(names[:8])}{', ...' if len(names) > 8 else ''}"
    raise HloError(f"no computation named '{name}' in module {module.name}{hint}",
                   filename=module.filename)


def _find_instruction(module: ir.Module, comp: Optional[ir.Computation], name: str) -> ir.Computation:
    """The computation that holds instruction `name` (the given one, else the entry first, then
    computations that are not fused, then any)."""
    name = name.lstrip("%")
    if comp is not None:
        cands = [comp]
    else:
        fused = {_fused_name(i) for c in module.computations for i in c.instructions if i.opcode == "fusion"}
        cands = sorted(module.computations, key=lambda c: (not c.is_entry, c.name in fused))
    for c in cands:
        if any(i.name == name for i in c.instructions):
            return c
    names = [i.name for c in cands for i in c.instructions]
    close = _similar(name, names)
    where = f"computation {comp.name}" if comp is not None else f"module {module.name}"
    raise HloError(f"no instruction named '{name}' in {where}"
                   + (f"; did you mean {', '.join(close)}?" if close else ""), filename=module.filename)


def _fused_name(ins: ir.Instruction) -> Optional[str]:
    v = ins.attrs.get("calls")
    return v if isinstance(v, str) else None


def _fused_comp(module: ir.Module, ins: ir.Instruction) -> Optional[ir.Computation]:
    name = _fused_name(ins)
    if name is None:
        return None
    for c in module.computations:
        if c.name == name:
            return c
    return None


def _users(comp: ir.Computation) -> dict:
    users: dict = {i.name: [] for i in comp.instructions}
    for ins in comp.instructions:
        for o in dict.fromkeys(ins.operands):
            if o in users:
                users[o].append(ins.name)
    return users


def _neighbourhood(comp: ir.Computation, center: str, depth: int) -> dict:
    """{name: hops} for the instructions within `depth` operand/user hops of `center`."""
    users = _users(comp)
    by_name = {i.name: i for i in comp.instructions}
    dist = {center: 0}
    queue = deque([center])
    while queue:
        n = queue.popleft()
        if dist[n] >= depth:
            continue
        ins = by_name.get(n)
        for m in list(ins.operands if ins else ()) + users.get(n, []):
            if m in by_name and m not in dist:
                dist[m] = dist[n] + 1
                queue.append(m)
    return dist


def _cost(module, ins, expand, seen=()) -> int:
    """Nodes an instruction takes in the picture (a fusion drawn expanded takes its body)."""
    if expand and ins.opcode == "fusion":
        fc = _fused_comp(module, ins)
        if fc is not None and fc.name not in seen:
            return sum(_cost(module, i, expand, seen + (fc.name,)) for i in fc.instructions)
    return 1


def build(module: ir.Module, computation: Optional[str] = None, *, around: Optional[str] = None,
          depth: int = 2, expand_fusions: bool = False, max_nodes: int = DEFAULT_MAX_NODES,
          control_edges: bool = True) -> Graph:
    """The nodes, edges and clusters of one computation's picture (default: the entry computation;
    with `around` and no `computation`, the computation that holds that instruction).

    around/depth keep the instructions within `depth` operand/user hops of `around`.  Beyond
    `max_nodes` nodes the picture is truncated, keeping those nearest the ROOT (or `around`) and
    noting how many were left out (`Graph.omitted`)."""
    if depth is None or depth < 0:
        raise HloError(f"depth must be 0 or more, got {depth}")
    if max_nodes is not None and max_nodes < 1:
        raise HloError(f"max_nodes must be 1 or more, got {max_nodes}")
    comp = _find_computation(module, computation) if computation else None
    if around:
        comp = _find_instruction(module, comp, around)
        around = around.lstrip("%")
    comp = comp or module.entry
    g = Graph(module, comp, max_nodes=max_nodes or 0, around=around, depth=depth if around else None)
    by_name = {i.name: i for i in comp.instructions}

    # Which instructions, in which priority (for truncation): nearest the centre first.
    if around:
        dist = _neighbourhood(comp, around, depth)
        order = sorted(dist, key=lambda n: dist[n])
    else:
        order, seen = [], set()
        queue = deque([comp.root.name])
        seen.add(comp.root.name)
        while queue:  # backwards from the root: what the result depends on first
            n = queue.popleft()
            order.append(n)
            for o in by_name[n].operands:
                if o in by_name and o not in seen:
                    seen.add(o)
                    queue.append(o)
        order += [i.name for i in comp.instructions if i.name not in seen]
    # Every instruction first (as one node each), then fusion bodies while there is room.
    keep = set(order[:max_nodes] if max_nodes else order)
    budget = (max_nodes - len(keep)) if max_nodes else None
    expand, collapsed = set(), 0
    if expand_fusions:
        for n in order:
            c = _cost(module, by_name[n], True) if n in keep else 1
            if c > 1:
                if budget is None or c - 1 <= budget:
                    expand.add(n)
                    budget = None if budget is None else budget - (c - 1)
                else:
                    collapsed += 1
    g.omitted = len(order) - len(keep)
    if g.omitted:
        g.notes.append(f"{g.omitted} of {len(order)} instructions not shown (more than {max_nodes} nodes; "
                       f"use --around INSTR --depth K, --computation, or raise --max-nodes)")
    if collapsed:
        g.notes.append(f"{collapsed} fusion{'s' if collapsed > 1 else ''} drawn collapsed: no room for "
                       f"{'their' if collapsed > 1 else 'its'} body within --max-nodes {max_nodes}")

    counter = iter(range(10 ** 9))

    def add_comp(c: ir.Computation, names: list, cluster: Optional[str], seen: tuple):
        """Nodes for `names` of computation c; returns {ins name: (out node, [in node per operand])}."""
        ports = {}
        c_by = by_name if c is comp else {i.name: i for i in c.instructions}
        for name in names:
            ins = c_by[name]
            fc = _fused_comp(module, ins) if (expand_fusions and ins.opcode == "fusion" and
                                              (c is not comp or name in expand)) else None
            if fc is not None and fc.name not in seen:
                cid = f"c{next(counter)}"
                g.clusters[cid] = Cluster(cid, ins, fc, cluster)
                inner = add_comp(fc, [i.name for i in fc.instructions], cid, seen + (fc.name,))
                inner_by = {i.name: i for i in fc.instructions}
                add_edges(fc, inner, inner_by, set(inner))
                params = {i.parameter_number: inner[i.name][0] for i in fc.instructions
                          if i.opcode == "parameter"}
                ins_ports = [params.get(j) for j in range(len(ins.operands))]
                ports[name] = (inner[fc.root.name][0], ins_ports)
            else:
                nid = f"n{next(counter)}"
                g.nodes[nid] = Node(nid, ins, c, cluster)
                ports[name] = (nid, [nid] * len(ins.operands))
        return ports

    def add_edges(c, ports, c_by, kept):
        for name in ports:
            ins = c_by[name]
            for j, o in enumerate(ins.operands):
                if o in kept and ports[name][1][j] is not None:
                    src = c_by[o]
                    g.edges.append(Edge(ports[o][0], ports[name][1][j], short_shape(src.shape), j))
            if control_edges:
                for p in ins.attrs.get("control-predecessors", ()) or ():
                    if p in kept:
                        g.edges.append(Edge(ports[p][0], ports[name][0], "", -1, control=True))

    names = [i.name for i in comp.instructions if i.name in keep]
    top = add_comp(comp, names, None, (comp.name,))
    add_edges(comp, top, by_name, keep)
    if around or g.omitted:
        users = _users(comp)
        for name, (out, _) in top.items():
            ins = by_name[name]
            n = g.nodes.get(out)
            if n is None:
                continue
            n.hidden_operands = sum(1 for o in dict.fromkeys(ins.operands) if o in by_name and o not in keep)
            n.hidden_users = sum(1 for u in users[name] if u not in keep)
    return g


# --------------------------------------------------------------------------------------------------
# Labels

def short_shape(shape, limit: int = 3) -> str:
    """`f32[16,32]` (no layout); tuples as `(f32[2], s32[])`, long ones cut: `(f32[2], s32[], … +4)`."""
    if shape is None:
        return ""
    if isinstance(shape, ir.TupleShape):
        parts = [short_shape(s, limit) for s in shape.elements[:limit]]
        if len(shape.elements) > limit:
            parts.append(f"… +{len(shape.elements) - limit}")
        return "(" + ", ".join(parts) + ")"
    if isinstance(shape, ir.BufferShape):
        return f"b({short_shape(shape.element, limit)})"
    from .syntax.printer import shape_text
    return shape_text(shape, layouts=False)


_TRIVIAL = {"parameter", "tuple", "get-tuple-element", "constant"}


def summarize(comp: ir.Computation, limit: int = 4) -> str:
    """The opcodes a computation computes, most frequent first: `multiply×3, add, exponential`."""
    counts: dict = {}
    for i in comp.instructions:
        if i.opcode not in _TRIVIAL:
            counts[i.opcode] = counts.get(i.opcode, 0) + 1
    if not counts:
        return comp.root.opcode
    items = sorted(counts.items(), key=lambda kv: -kv[1])
    text = ", ".join(f"{k}×{v}" if v > 1 else k for k, v in items[:limit])
    if len(items) > limit:
        text += f", … +{len(items) - limit}"
    return text


def _fusion_kind(ins: ir.Instruction) -> str:
    kind = ins.attrs.get("kind")
    kind = getattr(kind, "text", kind) or "fusion"
    bc = ins.attrs.get("backend_config")
    text = getattr(bc, "text", bc) if bc is not None else None
    if isinstance(text, str):
        m = re.search(r'"fusion_config"\s*:\s*\{[^}]*"kind"\s*:\s*"([^"]+)"', text)
        if m:
            kind = f"{kind} {m.group(1)}"
    return str(kind)


def _comp_attrs(ins: ir.Instruction):
    """[(attr, computation name)] for the computations an instruction calls."""
    from .opcodes import schema_for
    specs, _ = schema_for(ins.opcode)
    out = []
    for s in specs:
        v = ins.attrs.get(s.name)
        if v is None:
            continue
        if s.kind == "comp" and isinstance(v, str):
            out.append((s.name, v))
        elif s.kind == "comps":
            out += [(f"{s.name}[{k}]", x) for k, x in enumerate(v)
                    if isinstance(x, str)]
    return out


def _scalar_text(lit: Optional[ir.Literal]) -> Optional[str]:
    if lit is None or lit.value is None or isinstance(lit.value, tuple):
        return None
    if lit.value.size > 4:
        return None
    from .syntax.literals import format_literal
    t = format_literal(lit)
    return t if len(t) <= 40 else None


_SHORT_ATTR = {"compare": ("direction",), "get-tuple-element": ("index",), "parameter": (),
               "custom-call": ("custom_call_target",), "iota": ("iota_dimension",)}


def label_lines(node: Node, module: ir.Module, collapsed_fusion: bool = True) -> list:
    """[(text, style)] lines of a node's label; style is one of op, name, shape, detail, warn."""
    ins = node.ins
    op = ins.opcode
    head = op
    if op == "parameter":
        head = f"parameter {ins.parameter_number}"
    elif op == "fusion":
        head = f"fusion · {_fusion_kind(ins)}"
    elif op in _SHORT_ATTR:
        vals = [ins.attrs.get(a) for a in _SHORT_ATTR[op]]
        vals = [getattr(v, "text", v) for v in vals if v is not None]
        if vals:
            head += " " + " ".join(str(v) for v in vals)
    if node.is_root:
        head = "ROOT " + head
    lines = [(head, "op")]
    if op == "constant":
        t = _scalar_text(ins.literal)
        if t is not None:
            lines.append((t, "detail"))
    if op == "fusion" and collapsed_fusion:
        fc = _fused_comp(module, ins)
        if fc is not None:
            lines.append((summarize(fc), "detail"))
    elif op != "fusion":
        called = _comp_attrs(ins)
        if len(called) > 4:
            called = called[:3]
        for attr, cname in called:
            attr = {"true_computation": "true", "false_computation": "false"}.get(attr, attr)
            attr = re.sub(r"^branch_computations\[(\d+)\]$", r"branch \1", attr)
            try:
                c = module.computation(cname)
                lines.append((f"{attr}: {cname} [{summarize(c, 3)}]", "detail"))
            except KeyError:
                lines.append((f"{attr}: {cname}", "detail"))
        if len(_comp_attrs(ins)) > 4:
            lines.append((f"… +{len(_comp_attrs(ins)) - 3} more computations", "detail"))
    lines.append((ins.name, "name"))
    lines.append((short_shape(ins.shape), "shape"))
    hidden = []
    if node.hidden_operands:
        hidden.append(f"+{node.hidden_operands} operand{'s' if node.hidden_operands > 1 else ''}")
    if node.hidden_users:
        hidden.append(f"+{node.hidden_users} user{'s' if node.hidden_users > 1 else ''}")
    if hidden:
        lines.append((" ".join(hidden) + " hidden", "warn"))
    return [(t if len(t) <= 80 else t[:77] + "…", s) for t, s in lines]


def instruction_text(ins: ir.Instruction) -> str:
    from .syntax.printer import instruction_text as _text
    t = _text(ins)
    return t if len(t) <= _TEXT_LIMIT else t[:_TEXT_LIMIT] + " …"


_FILL = {"parameter": "#d9f2d0", "constant": "#eeeeee", "fusion": "#dbe9fb", "control": "#fff1b8",
         "async": "#fff1b8", "reduce": "#fde0c5", "dot": "#e6d7f7", "linalg": "#e6d7f7",
         "gather_scatter": "#fbd6e6", "sort": "#fbd6e6", "collective": "#f8cfcf", "movement": "#f4f7fb",
         "rng": "#e0f4f4", "io": "#e0f4f4", "batchnorm": "#fde0c5", "elementwise": "#ffffff",
         "other": "#ffffff"}
_FUSION_FILL = {"kLoop": "#dbe9fb", "kInput": "#fde0c5", "kOutput": "#e6d7f7", "kCustom": "#e3dcf7"}


def fill_color(node: Node) -> str:
    if node.ins.opcode == "fusion":
        return _FUSION_FILL.get(_fusion_kind(node.ins).split()[0], _FILL["fusion"])
    return _FILL.get(node.kind, "#ffffff")


# --------------------------------------------------------------------------------------------------
# DOT

def _dot_str(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def _h(s: str) -> str:
    return _html.escape(s, quote=True)


def _dot_label(lines) -> str:
    parts = []
    for text, style in lines:
        t = _h(text)
        if style == "op":
            parts.append(f"<B>{t}</B>")
        elif style == "name":
            parts.append(f'<FONT POINT-SIZE="9">{t}</FONT>')
        elif style == "shape":
            parts.append(f'<FONT POINT-SIZE="9" COLOR="#1f5fa8">{t}</FONT>')
        elif style == "warn":
            parts.append(f'<FONT POINT-SIZE="8" COLOR="#b00000">{t}</FONT>')
        else:
            parts.append(f'<FONT POINT-SIZE="9" COLOR="#555555">{t}</FONT>')
    return "<" + "<BR/>".join(parts) + ">"


def graph_to_dot(g: Graph) -> str:
    m, comp = g.module, g.computation
    title = f"{m.name} · {comp.name}"
    if g.around:
        title += f" · around {g.around} (depth {g.depth})"
    lines = [f"digraph {_dot_str(comp.name)} {{",
             f"  graph [rankdir=TB, fontname=\"Helvetica\", fontsize=12, labelloc=t, "
             f"label={_dot_str(title + ''.join(chr(10) + n for n in g.notes))}, "
             f"nodesep=0.25, ranksep=0.45, tooltip={_dot_str(title)}];",
             '  node [shape=box, style="rounded,filled", fontname="Helvetica", fontsize=11, '
             'fillcolor="#ffffff", color="#444444", margin="0.12,0.04"];',
             '  edge [fontname="Helvetica", fontsize=8, color="#666666", fontcolor="#1f5fa8", '
             'arrowsize=0.6];']
    children: dict = {}
    for cid, cl in g.clusters.items():
        children.setdefault(cl.parent, []).append(cid)
    members: dict = {}
    for n in g.nodes.values():
        members.setdefault(n.cluster, []).append(n)

    def node_line(n: Node, indent: str) -> str:
        attrs = [f"label={_dot_label(label_lines(n, m))}", f"tooltip={_dot_str(instruction_text(n.ins))}",
                 f'fillcolor="{fill_color(n)}"']
        if n.ins.opcode == "parameter":
            attrs.append("shape=ellipse, style=filled")
        elif n.ins.opcode == "constant":
            attrs.append("fontsize=9")
        if n.is_root:  # the drawn computation's ROOT stands out more than a fused computation's
            attrs.append(f"penwidth={2.5 if n.cluster is None else 1.8}, color=\"#000000\"")
        if n.hidden_operands or n.hidden_users:
            attrs.append('style="rounded,filled,dashed"' if n.ins.opcode != "parameter"
                         else 'style="filled,dashed"')
        return f"{indent}{n.id} [{', '.join(attrs)}];"

    def emit(cluster: Optional[str], indent: str):
        for n in members.get(cluster, []):
            lines.append(node_line(n, indent))
        for cid in children.get(cluster, []):
            cl = g.clusters[cid]
            lab = (f"<<B>{_h(cl.fusion.name)}</B> · fusion {_h(_fusion_kind(cl.fusion))}"
                   f"<BR/><FONT POINT-SIZE=\"9\">{_h(cl.comp.name)} → "
                   f"{_h(short_shape(cl.fusion.shape))}</FONT>>")
            fill = _FUSION_FILL.get(_fusion_kind(cl.fusion).split()[0], "#dbe9fb")
            lines.append(f"{indent}subgraph cluster_{cid} {{")
            lines.append(f'{indent}  label={lab}; style="rounded,filled"; fillcolor="{fill}80"; '
                         f'color="#6b8fc7"; tooltip={_dot_str(instruction_text(cl.fusion))};'
                         + (' penwidth=2.5;' if cl.fusion is g.computation.root else ''))
            emit(cid, indent + "  ")
            lines.append(f"{indent}}}")

    emit(None, "  ")
    if g.omitted:
        lines.append(f'  omitted [shape=note, style=filled, fillcolor="#fff4d6", fontsize=10, '
                     f'label={_dot_str(f"… {g.omitted} more instructions not shown (--max-nodes {g.max_nodes})")}];')
    # Edge labels as `label` make dot route them as nodes: fine for small graphs, slow for big ones
    # (18 s for 355 edges); `xlabel`s are placed after layout (2.7 s for the same graph).
    lab = "label" if sum(1 for e in g.edges if not e.control) <= 150 else "xlabel"
    for e in g.edges:
        if e.control:
            lines.append(f'  {e.src} -> {e.dst} [style=dashed, color="#b00000", arrowhead=odot, '
                         f'tooltip="control dependency"];')
        else:
            lines.append(f"  {e.src} -> {e.dst} [{lab}={_dot_str(e.label)}, "
                         f"tooltip={_dot_str(f'operand {e.operand_index}: {e.label}')}];")
    lines.append("}")
    return "\n".join(lines) + "\n"


def to_dot(module: ir.Module, computation: Optional[str] = None, **options) -> str:
    """Graphviz DOT text of one computation (see `build` for the options)."""
    return graph_to_dot(build(module, computation, **options))


# --------------------------------------------------------------------------------------------------
# Layout (for the HTML view): layered, top to bottom, operands above users

_CHAR_W = {"op": 7.4, "name": 6.2, "shape": 6.2, "detail": 6.2, "warn": 6.0}
_LINE_H = {"op": 15, "name": 13, "shape": 13, "detail": 13, "warn": 12}
_LAYER_GAP = 46
_NODE_GAP = 18
_DUMMY_W = 10


def _isotonic_place(desired: list, widths: list, gap: float) -> list:
    """x centres keeping the order and a minimum gap, as close as possible (least squares) to
    `desired`: pool-adjacent-violators on desired minus the cumulative offsets."""
    n = len(desired)
    if n == 0:
        return []
    off = [0.0] * n
    for i in range(1, n):
        off[i] = off[i - 1] + (widths[i - 1] + widths[i]) / 2 + gap
    y = [d - o for d, o in zip(desired, off)]
    blocks = []  # [sum, count]
    for v in y:
        blocks.append([v, 1])
        while len(blocks) > 1 and blocks[-2][0] / blocks[-2][1] > blocks[-1][0] / blocks[-1][1]:
            s, c = blocks.pop()
            blocks[-1][0] += s
            blocks[-1][1] += c
    fit = []
    for s, c in blocks:
        fit += [s / c] * c
    return [f + o for f, o in zip(fit, off)]


def layout(sizes: dict, edges: list, fixed_top: set = frozenset()) -> dict:
    """Positions for a DAG.  sizes: {node: (w, h)}; edges: [(src, dst)] (multi-edges allowed);
    fixed_top: nodes kept in the first layer (parameters).  Returns {"pos": {node: (x, y)} centres,
    "paths": [list of (x, y) points per edge, dummy bends included], "width", "height"}."""
    nodes = list(sizes)
    succ = {n: [] for n in nodes}
    pred = {n: [] for n in nodes}
    for s, d in edges:
        if s in succ and d in succ and s != d:
            succ[s].append(d)
            pred[d].append(s)
    # Longest-path layers (Kahn order; any cycle member gets the layer of what it has seen).
    indeg = {n: len(set(pred[n])) for n in nodes}
    layer = {n: 0 for n in nodes}
    ready = deque(n for n in nodes if indeg[n] == 0)
    done, topo = set(), []
    while ready:
        n = ready.popleft()
        done.add(n)
        topo.append(n)
        for d in dict.fromkeys(succ[n]):
            layer[d] = max(layer[d], layer[n] + 1)
            indeg[d] -= 1
            if indeg[d] == 0:
                ready.append(d)
    for n in nodes:  # cycles (should not happen in HLO): leave them where they are
        if n not in done:
            layer[n] = max([layer[p] + 1 for p in pred[n] if p in done] or [0])
    # Then, last node first, move a node down to just above its first user when that shortens more
    # edges than it stretches (sources: parameters, constants; broadcasts of constants; ...).
    for n in reversed(topo):
        if succ[n] and n not in fixed_top and len(succ[n]) >= len(pred[n]):
            low = min(layer[d] for d in succ[n]) - 1
            if low > layer[n]:
                layer[n] = low
    # Dummy nodes on long edges.
    nlayers = max(layer.values(), default=0) + 1
    rows = [[] for _ in range(nlayers)]
    for n in nodes:
        rows[layer[n]].append(n)
    width = dict((n, sizes[n][0]) for n in nodes)
    up = {n: [] for n in nodes}  # neighbours in the layer above / below, for ordering
    down = {n: [] for n in nodes}
    chains = []
    # Dummies cost time and page size: with a budget, the longest edges (a parameter used by every
    # layer) go without them and are drawn as one curve.
    spans = sorted((layer[d] - layer[s], k) for k, (s, d) in enumerate(edges)
                   if s in succ and d in succ and layer[d] - layer[s] > 1)
    budget, routed = max(2000, 6 * len(nodes)), set()
    for span, k in spans:
        if span - 1 > budget:
            break
        budget -= span - 1
        routed.add(k)
    for k, (s, d) in enumerate(edges):
        if s not in succ or d not in succ:
            chains.append(None)
            continue
        chain = [s]
        ls, ld = layer[s], layer[d]
        if ld > ls + 1 and k in routed:
            for L in range(ls + 1, ld):
                v = ("d", k, L)
                width[v] = _DUMMY_W
                rows[L].append(v)
                up[v], down[v] = [], []
                chain.append(v)
        chain.append(d)
        for a, b in zip(chain, chain[1:]):
            down[a].append(b)
            up[b].append(a)
        chains.append(chain)
    lay = {}
    for n in nodes:
        lay[n] = layer[n]
    for chain in chains:
        if chain:
            for v in chain[1:-1]:
                lay[v] = v[2]
    # Ordering: barycentric sweeps.
    pos = {}
    for row in rows:
        for i, v in enumerate(row):
            pos[v] = i

    def sweep(rng, nbrs):
        for L in rng:
            row = rows[L]
            def key(v):
                ps = [pos[u] for u in nbrs[v] if lay[u] != lay[v]]
                return (sum(ps) / len(ps)) if ps else pos[v]
            row.sort(key=key)
            for i, v in enumerate(row):
                pos[v] = i

    for _ in range(6):
        sweep(range(1, nlayers), up)
        sweep(range(nlayers - 2, -1, -1), down)
    sweep(range(1, nlayers), up)
    # x placement: start packed, then pull towards neighbours (dummies weigh more: straight edges).
    x = {}
    for row in rows:
        cur = 0.0
        for v in row:
            x[v] = cur + width[v] / 2
            cur += width[v] + _NODE_GAP
    for it in range(8):
        order = range(1, nlayers) if it % 2 == 0 else range(nlayers - 2, -1, -1)
        nbrs = up if it % 2 == 0 else down
        for L in order:
            row = rows[L]
            desired = []
            for v in row:
                ns = nbrs[v]
                if ns:
                    w = [3.0 if isinstance(u, tuple) else 1.0 for u in ns]
                    desired.append(sum(x[u] * wi for u, wi in zip(ns, w)) / sum(w))
                else:
                    desired.append(x[v])
            xs = _isotonic_place(desired, [width[v] for v in row], _NODE_GAP)
            for v, xv in zip(row, xs):
                x[v] = xv
    minx = min((x[v] - width[v] / 2 for v in x), default=0.0)
    for v in x:
        x[v] -= minx
    # y: layers stacked, each as tall as its tallest node.
    ys, cur = [], 0.0
    for row in rows:
        h = max((sizes[v][1] for v in row if not isinstance(v, tuple)), default=10)
        ys.append((cur, h))
        cur += h + _LAYER_GAP
    out_pos = {}
    for n in nodes:
        top, h = ys[layer[n]]
        out_pos[n] = (x[n], top + h / 2)
    paths = []
    for chain in chains:
        if chain is None:
            paths.append(None)
            continue
        pts = []
        for v in chain[1:-1]:
            top, h = ys[v[2]]
            pts.append((x[v], top + h / 2))
        paths.append(pts)
    total_w = max((x[v] + width[v] / 2 for v in x), default=0.0)
    return {"pos": out_pos, "paths": paths, "width": total_w, "height": max(cur - _LAYER_GAP, 0.0)}


# --------------------------------------------------------------------------------------------------
# HTML

def _node_size(lines) -> tuple:
    w = max(len(t) * _CHAR_W[s] for t, s in lines) + 18
    h = sum(_LINE_H[s] for _, s in lines) + 10
    return (round(max(w, 60.0), 1), float(h))


def _r(v: float) -> float:
    return round(v, 1)


def _edge_path(pts: list) -> str:
    """A smooth path through the points, vertical tangents at each (a top-to-bottom flow)."""
    (x0, y0) = pts[0]
    d = [f"M{_r(x0)},{_r(y0)}"]
    for (x1, y1) in pts[1:]:
        my = (y1 - y0) / 2
        d.append(f"C{_r(x0)},{_r(y0 + my)} {_r(x1)},{_r(y1 - my)} {_r(x1)},{_r(y1)}")
        x0, y0 = x1, y1
    return "".join(d)


class _SvgScene:
    """One laid-out computation: SVG for its nodes and edges plus the data the page script needs."""

    def __init__(self, g: Graph, prefix: str):
        self.g = g
        self.prefix = prefix
        m = g.module
        self.lines = {nid: label_lines(n, m) for nid, n in g.nodes.items()}
        sizes = {nid: _node_size(ls) for nid, ls in self.lines.items()}
        self.sizes = sizes
        self.lay = layout(sizes, [(e.src, e.dst) for e in g.edges])
        self.width = self.lay["width"]
        self.height = self.lay["height"]
        # Entry points spread over the top of a node by operand index (operand order visible).
        self.nin = {}
        for e in g.edges:
            if not e.control:
                self.nin[e.dst] = max(self.nin.get(e.dst, 0), e.operand_index + 1)

    def endpoints(self, e: Edge):
        pos, sizes = self.lay["pos"], self.sizes
        (sx, sy), (_, sh) = pos[e.src], sizes[e.src]
        (dx, dy), (dw, dh) = pos[e.dst], sizes[e.dst]
        n = self.nin.get(e.dst, 1)
        if e.control or n <= 1:
            ex = dx
        else:
            span = min(dw - 16, 24.0 * (n - 1))
            ex = dx - span / 2 + span * e.operand_index / (n - 1)
        return (sx, sy + sh / 2), (ex, dy - dh / 2)

    def svg(self, ox: float = 0.0, oy: float = 0.0, node_data: Optional[dict] = None) -> list:
        out = []
        g, pos = self.g, self.lay["pos"]
        edges_data = []
        out.append('<g class="edges">')
        for k, e in enumerate(g.edges):
            a, b = self.endpoints(e)
            pts = [a] + list(self.lay["paths"][k] or ()) + [b]
            pts = [(x + ox, y + oy) for x, y in pts]
            eid = f"{self.prefix}e{k}"
            cls = "edge ctl" if e.control else "edge"
            out.append(f'<g class="{cls}" id="{eid}"><path d="{_edge_path(pts)}"/>')
            if e.label and not e.control:
                lx, ly = pts[-2] if len(pts) > 2 else pts[0]
                bx, by = pts[-1]
                tx, ty = (lx + bx) / 2, (ly + by) / 2
                out.append(f'<text x="{_r(tx + 4)}" y="{_r(ty)}">{_h(e.label)}</text>')
            out.append("</g>")
            edges_data.append({"id": eid, "s": e.src, "d": e.dst, "i": e.operand_index,
                               "p": [[_r(x), _r(y)] for x, y in pts], "c": int(e.control)})
        out.append("</g>")
        out.append('<g class="nodes">')
        for nid, n in g.nodes.items():
            (x, y), (w, h) = pos[nid], self.sizes[nid]
            x, y = x + ox, y + oy
            cls = ["node", n.kind.replace("_", "-")]
            if n.is_root:
                cls.append("root")
            if n.hidden_operands or n.hidden_users:
                cls.append("partial")
            fus = n.ins.opcode == "fusion" and _fused_comp(g.module, n.ins) is not None
            if fus and not self.prefix:
                cls.append("fusion-node")
            rx = h / 2 if n.ins.opcode == "parameter" else 6
            out.append(f'<g class="{" ".join(cls)}" id="{self.prefix}{nid}" data-x="{_r(x)}" data-y="{_r(y)}">'
                       f'<rect x="{_r(x - w / 2)}" y="{_r(y - h / 2)}" width="{_r(w)}" height="{_r(h)}" '
                       f'rx="{_r(rx)}" fill="{fill_color(n)}"/>')
            ty = y - h / 2 + 5
            for text, style in self.lines[nid]:
                ty += _LINE_H[style]
                out.append(f'<text class="t-{style}" x="{_r(x)}" y="{_r(ty - 3)}">{_h(text)}</text>')
            out.append("</g>")
            if node_data is not None:
                node_data[self.prefix + nid] = {
                    "x": _r(x), "y": _r(y), "w": _r(w), "h": _r(h),
                    "t": instruction_text(n.ins)}
        out.append("</g>")
        self.edges_data = edges_data
        return out


_CSS = """
html,body{margin:0;height:100%;font-family:Helvetica,Arial,sans-serif;background:#fafafa;color:#222}
#bar{position:fixed;top:0;left:0;right:0;height:34px;display:flex;align-items:center;gap:10px;
 padding:0 10px;background:#fff;border-bottom:1px solid #ddd;font-size:13px;z-index:2}
#bar b{font-size:14px} #bar .sp{flex:1} #bar button{font-size:12px;padding:2px 8px}
#bar>*{white-space:nowrap;flex-shrink:0}
#bar #note{color:#a05000;font-size:12px;overflow:hidden;text-overflow:ellipsis;flex-shrink:1;min-width:0}
#view{position:absolute;top:35px;left:0;right:0;bottom:0;overflow:hidden;cursor:grab}
#view svg{width:100%;height:100%;display:block}
#info{position:fixed;left:8px;bottom:8px;max-width:70%;max-height:35%;overflow:auto;background:#fff;
 border:1px solid #bbb;border-radius:4px;padding:6px 8px;font:12px/1.35 monospace;white-space:pre-wrap;
 word-break:break-all;display:none;z-index:3;box-shadow:0 1px 4px rgba(0,0,0,.2)}
.node rect{stroke:#444;stroke-width:1}
.node.root rect{stroke:#000;stroke-width:3}
.node.partial rect{stroke-dasharray:4 3}
.node.fusion-node{cursor:pointer}
.node.fusion-node rect{stroke:#3a64a8;stroke-width:1.5}
.node:hover rect,.node.found rect{stroke:#d04000;stroke-width:2.5}
.node text{text-anchor:middle;font-size:11px;pointer-events:none}
.node text.t-op{font-weight:bold;font-size:12px}
.node text.t-name{fill:#333}
.node text.t-shape{fill:#1f5fa8}
.node text.t-detail{fill:#555}
.node text.t-warn{fill:#b00000;font-size:10px}
.edge path{fill:none;stroke:#777;stroke-width:1.1;marker-end:url(#arrow)}
.edge.ctl path{stroke:#b00000;stroke-dasharray:5 3}
.edge text{font-size:9px;fill:#1f5fa8;paint-order:stroke;stroke:#fafafa;stroke-width:3px}
.body>rect.frame{fill:#eef4fd;stroke:#3a64a8;stroke-width:1.5;rx:8}
.body>text.title{font-size:12px;font-weight:bold;fill:#1c3d70;cursor:pointer}
.body .edge text{stroke:#eef4fd}
"""

_JS = r"""
(function(){
var D=JSON.parse(document.getElementById('graph-data').textContent);
var svg=document.getElementById('svg'), vp=document.getElementById('viewport');
var info=document.getElementById('info');
var open={};  // fusion node id -> true
var S=1,TX=0,TY=0;
function apply(){vp.setAttribute('transform','translate('+TX+','+TY+') scale('+S+')');}
svg.removeAttribute('viewBox');
function fit(){var r=svg.getBoundingClientRect(),b=vp.getBBox();if(!b.width)return;
 S=Math.min(1.5,r.width/(b.width+40),Math.max(r.height/(b.height+40),0.6));
 TX=Math.max(20,(r.width-b.width*S)/2)-b.x*S;TY=20-b.y*S;apply();}
function shifts(){var L=[];for(var id in open){var f=D.fusions[id],n=D.nodes[id];
 L.push({x:n.x,y:n.y,dw:Math.max(0,f.w-n.w),dh:Math.max(0,f.h-n.h)});}return L;}
function sh(L,x,y){var dx=0,dy=0;for(var i=0;i<L.length;i++){if(x>L[i].x+0.01)dx+=L[i].dw;if(y>L[i].y+0.01)dy+=L[i].dh;}return [dx,dy];}
function path(p){var d='M'+p[0][0]+','+p[0][1];for(var i=1;i<p.length;i++){var a=p[i-1],b=p[i],m=(b[1]-a[1])/2;
 d+='C'+a[0]+','+(a[1]+m)+' '+b[0]+','+(b[1]-m)+' '+b[0]+','+b[1];}return d;}
function relayout(){var L=shifts();
 for(var id in D.main){var n=D.nodes[id],s=sh(L,n.x,n.y),g=document.getElementById(id);
  g.setAttribute('transform','translate('+s[0]+','+s[1]+')');g.style.display=open[id]?'none':'';
  if(D.fusions[id]){var b=document.getElementById('body-'+id),f=D.fusions[id];
   var o=sh(L,n.x-n.w/2,n.y-n.h/2);
   b.setAttribute('transform','translate('+(n.x-n.w/2+o[0]-f.ox)+','+(n.y-n.h/2+o[1]-f.oy)+')');
   b.style.display=open[id]?'':'none';}}
 D.edges.forEach(function(e){var p=e.p.map(function(q){var s=sh(L,q[0],q[1]);return [q[0]+s[0],q[1]+s[1]];});
  var n,f,o,last=p.length-1;
  if(open[e.d]&&!e.c){f=D.fusions[e.d];n=D.nodes[e.d];var pp=f.params[e.i];if(pp){o=sh(L,n.x-n.w/2,n.y-n.h/2);
   p[last]=[n.x-n.w/2+o[0]+pp[0],n.y-n.h/2+o[1]+pp[1]];}}
  if(open[e.s]&&!e.c){f=D.fusions[e.s];n=D.nodes[e.s];o=sh(L,n.x-n.w/2,n.y-n.h/2);
   p[0]=[n.x-n.w/2+o[0]+f.root[0],n.y-n.h/2+o[1]+f.root[1]];}
  var g=document.getElementById(e.id);g.firstChild.setAttribute('d',path(p));
  var t=g.querySelector('text');if(t){var a=p.length>2?p[last-1]:p[0],b=p[last];
   t.setAttribute('x',(a[0]+b[0])/2+4);t.setAttribute('y',(a[1]+b[1])/2);}});
 document.body.setAttribute('data-open',Object.keys(open).length);}
function toggle(id){if(!D.fusions[id])return;if(open[id])delete open[id];else open[id]=true;relayout();}
document.getElementById('expand').onclick=function(){for(var id in D.fusions)if(D.main[id])open[id]=true;relayout();};
document.getElementById('collapse').onclick=function(){open={};relayout();};
document.getElementById('fit').onclick=fit;
var found=null;
document.getElementById('find').addEventListener('keydown',function(ev){if(ev.key!=='Enter')return;
 var q=this.value.trim().replace(/^%/,'');if(!q)return;var hit=null;
 for(var id in D.main){var t=D.nodes[id].t,m=/^(?:ROOT )?%(\S+) =/.exec(t);if(m&&m[1]===q){hit=id;break;}
  if(!hit&&m&&m[1].indexOf(q)>=0)hit=id;}
 if(found)found.classList.remove('found');if(!hit){this.style.background='#fdd';return;}this.style.background='';
 var g=document.getElementById(hit),b=g.getBBox(),r=svg.getBoundingClientRect();
 var tr=g.getAttribute('transform')||'',mm=/translate\(([-\d.e]+),([-\d.e]+)\)/.exec(tr),dx=mm?+mm[1]:0,dy=mm?+mm[2]:0;
 S=Math.max(S,1);TX=r.width/2-(b.x+b.width/2+dx)*S;TY=r.height/2-(b.y+b.height/2+dy)*S;apply();
 g.classList.add('found');found=g;info.textContent=D.nodes[hit].t;info.style.display='block';});
svg.addEventListener('click',function(ev){var g=ev.target.closest('.node');
 if(g&&D.fusions[g.id]){toggle(g.id);return;}
 var b=ev.target.closest('.body');if(b&&ev.target.classList.contains('title'))toggle(b.id.slice(5));});
svg.addEventListener('mouseover',function(ev){var g=ev.target.closest('.node');
 if(g&&D.nodes[g.id]){info.textContent=D.nodes[g.id].t;info.style.display='block';}});
svg.addEventListener('mouseout',function(ev){if(ev.target.closest('.node'))info.style.display='none';});
var drag=null;
svg.addEventListener('mousedown',function(ev){drag=[ev.clientX-TX,ev.clientY-TY];});
window.addEventListener('mouseup',function(){drag=null;});
window.addEventListener('mousemove',function(ev){if(drag){TX=ev.clientX-drag[0];TY=ev.clientY-drag[1];apply();}});
svg.addEventListener('wheel',function(ev){ev.preventDefault();var r=svg.getBoundingClientRect();
 var mx=ev.clientX-r.left,my=ev.clientY-r.top,k=Math.exp(-ev.deltaY*0.0015);
 TX=mx-(mx-TX)*k;TY=my-(my-TY)*k;S*=k;apply();},{passive:false});
if(D.expand){for(var id in D.fusions)if(D.main[id])open[id]=true;}
relayout();fit();
document.body.setAttribute('data-ready','1');
})();
"""


def graph_to_html(g: Graph, expand_fusions: bool = False) -> str:
    """A self-contained page (inline CSS, JS and SVG; nothing fetched) showing the graph."""
    m = g.module
    main = _SvgScene(g, "")
    node_data: dict = {}
    parts = main.svg(0.0, 0.0, node_data)
    edges_data = list(main.edges_data)
    fusions = {}
    bodies = []
    pad, head = 12.0, 26.0
    for nid, n in list(g.nodes.items()):
        if n.ins.opcode != "fusion":
            continue
        fc = _fused_comp(m, n.ins)
        if fc is None:
            continue
        sub = build(m, fc.name, expand_fusions=False, max_nodes=max(g.max_nodes, 1))
        scene = _SvgScene(sub, f"{nid}-")
        title = f"▾ {n.ins.name} · fusion {_fusion_kind(n.ins)} · {fc.name} → {short_shape(n.ins.shape)}"
        w = max(scene.width + 2 * pad, len(title) * 6.4 + 24)
        h = scene.height + 2 * pad + head
        inner = scene.svg(pad, pad + head, node_data)
        # Body drawn in its own coordinates (0,0 = top-left); the script moves it into place.
        params = {}
        for sid, sn in sub.nodes.items():
            if sn.ins.opcode == "parameter":
                (x, y), (_, sh) = scene.lay["pos"][sid], scene.sizes[sid]
                params[sn.ins.parameter_number] = [_r(x + pad), _r(y + pad + head - sh / 2)]
        rid = next((sid for sid, sn in sub.nodes.items() if sn.is_root), None) or \
            next((sid for sid, sn in sub.nodes.items() if sn.ins.name == fc.root.name), None)
        if rid is not None:
            (x, y), (_, sh) = scene.lay["pos"][rid], scene.sizes[rid]
            root = [_r(x + pad), _r(y + pad + head + sh / 2)]
        else:
            root = [_r(w / 2), _r(h)]
        fusions[nid] = {"w": _r(w), "h": _r(h), "ox": 0, "oy": 0, "params": params, "root": root}
        bodies.append(f'<g class="body" id="body-{nid}" style="display:none">'
                      f'<rect class="frame" x="0" y="0" width="{_r(w)}" height="{_r(h)}" rx="8"/>'
                      f'<text class="title" x="10" y="18">{_h(title)}</text>')
        bodies += inner
        bodies.append("</g>")
    main_ids = {nid: 1 for nid in g.nodes}
    title = f"{m.name} · {g.computation.name}"
    if g.around:
        title += f" · around {g.around} (depth {g.depth})"
    counts = f"{len(g.nodes)} nodes, {sum(1 for e in g.edges if not e.control)} edges"
    if fusions:
        counts += f", {len(fusions)} fusions (click to open)"
    data = {"nodes": node_data, "edges": edges_data, "fusions": fusions, "main": main_ids,
            "expand": bool(expand_fusions)}
    data_json = json.dumps(data, separators=(",", ":")).replace("</", "<\\/")
    note = _h("; ".join(g.notes)) if g.notes else ""
    note = f'<span id="note" title="{note}">{note}</span>' if note else '<span id="note"></span>'
    vw, vh = _r(main.width + 40), _r(main.height + 40)
    page = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>{_h(title)}</title>",
        f"<style>{_CSS}</style></head>",
        f'<body data-nodes="{len(g.nodes)}" data-edges="{len(g.edges)}" data-ready="0">',
        f'<div id="bar"><b>{_h(title)}</b><span>{_h(counts)}</span>{note}'
        '<span class="sp"></span><input id="find" placeholder="find instruction" size="18">'
        '<button id="fit">Fit</button><button id="expand">Expand fusions</button>'
        '<button id="collapse">Collapse</button></div>',
        f'<div id="view"><svg id="svg" xmlns="http://www.w3.org/2000/svg" viewBox="-20 -20 {vw} {vh}">',
        '<defs><marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" '
        'orient="auto-start-reverse"><path d="M0,0L10,5L0,10z" fill="#777"/></marker></defs>',
        '<g id="viewport">',
    ]
    page += parts
    page += bodies
    if g.omitted:
        page.append(f'<text x="0" y="{_r(main.height + 24)}" fill="#a05000" font-size="13">'
                    f'… {g.omitted} more instructions not shown (--max-nodes {g.max_nodes})</text>')
    page += ["</g></svg></div>", '<div id="info"></div>',
             f'<script type="application/json" id="graph-data">{data_json}</script>',
             f"<script>{_JS}</script>", "</body></html>"]
    return "\n".join(page) + "\n"


def to_html(module: ir.Module, computation: Optional[str] = None, **options) -> str:
    """A self-contained HTML page (no network: inline SVG, CSS and JS) with the computation's graph:
    pan (drag) and zoom (wheel), hover for an instruction's full text, click a fusion to open it in
    place.  expand_fusions=True opens every fusion at first."""
    expand = options.pop("expand_fusions", False)
    return graph_to_html(build(module, computation, expand_fusions=False, **options), expand)


# --------------------------------------------------------------------------------------------------
# Rendering and files

def format_for_path(path: str) -> str:
    ext = os.path.splitext(str(path))[1].lower().lstrip(".")
    if ext == "htm":
        ext = "html"
    if ext == "gv":
        ext = "dot"
    if ext not in FORMATS:
        raise HloError(f"cannot tell the output format from '{path}': use a name ending in "
                       f".dot, .html, .svg or .png", filename=str(path))
    return ext


def run_dot(dot_text: str, fmt: str, timeout: float = 300.0) -> bytes:
    """Graphviz `dot -T<fmt>` on the text; HloError naming the program when it is missing."""
    exe = shutil.which("dot")
    if exe is None:
        raise HloError(f"{fmt.upper()} output needs Graphviz's 'dot' program, which is not on PATH; "
                       f"install Graphviz (e.g. apt-get install graphviz), or write .dot "
                       f"or .html, which need nothing")
    try:
        proc = subprocess.run([exe, f"-T{fmt}"], input=dot_text.encode("utf-8"), capture_output=True,
                              timeout=timeout)
    except subprocess.TimeoutExpired:
        raise HloError(f"Graphviz 'dot' took more than {timeout:.0f} s; draw less (--around INSTR "
                       f"--depth K, --max-nodes) or write .html") from None
    except OSError as e:
        raise HloError(f"cannot run Graphviz 'dot' ({exe}): {e.strerror}") from None
    if proc.returncode != 0:
        msg = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        raise HloError(f"Graphviz 'dot' failed (exit {proc.returncode}): {msg[0] if msg else 'no message'}")
    return proc.stdout


def render(module: ir.Module, fmt: str = "dot", computation: Optional[str] = None, **options) -> bytes:
    """The picture as bytes in `fmt`: dot, html (pure Python) or svg, png (Graphviz)."""
    if fmt not in FORMATS:
        raise HloError(f"unknown graph format '{fmt}'; expected one of {', '.join(FORMATS)}")
    if fmt == "html":
        return to_html(module, computation, **options).encode("utf-8")
    text = to_dot(module, computation, **options)
    if fmt == "dot":
        return text.encode("utf-8")
    return run_dot(text, fmt)


def save(module: ir.Module, path, computation: Optional[str] = None, **options) -> str:
    """Write the picture to `path` (format from the extension); returns the format."""
    fmt = format_for_path(str(path))
    from .files import write_atomic
    write_atomic(path, render(module, fmt, computation, **options))
    return fmt
