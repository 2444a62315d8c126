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

The HTML view (graph_view.py) is laid out per computation by Graphviz dot when installed, else in
the page by the bundled dagre library; nested computations open in place.
"""
from __future__ import annotations

import difflib
import html as _html
import os
import re
import shutil
import subprocess
from collections import deque
from dataclasses import dataclass, field
from typing import Optional

from . import ir
from .diagnostics import HloError
from .opcodes import OPCODES, opcodes_where

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
    return shape.text(layouts=False)


_TRIVIAL = opcodes_where(lambda o: o.plumbing)


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


# (a parameter's label is its number, see label_head)
_SHORT_ATTR = {n: o.label_attrs for n, o in OPCODES.items() if o.label_attrs}


def label_head(node: Node) -> list:
    """The first lines of a node's label, shared by the DOT and HTML views: the opcode line (ROOT,
    parameter number, fusion kind, the attribute that tells e.g. compares apart) and a small constant's
    value."""
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
    return lines


def label_tail(node: Node) -> list:
    """The last lines of a node's label, shared by the DOT and HTML views: name, shape, and how many
    operands/users the drawing leaves out."""
    ins = node.ins
    lines = [(ins.name, "name"), (short_shape(ins.shape), "shape")]
    hidden = []
    if node.hidden_operands:
        hidden.append(f"+{node.hidden_operands} operand{'s' if node.hidden_operands > 1 else ''}")
    if node.hidden_users:
        hidden.append(f"+{node.hidden_users} user{'s' if node.hidden_users > 1 else ''}")
    if hidden:
        lines.append((" ".join(hidden) + " hidden", "warn"))
    return lines


def label_lines(node: Node, module: ir.Module, collapsed_fusion: bool = True) -> list:
    """[(text, style)] lines of a node's label; style is one of op, name, shape, detail, warn."""
    ins = node.ins
    op = ins.opcode
    lines = label_head(node)
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
    lines += label_tail(node)
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
# HTML (the page itself is graph_view's)

def graph_to_html(g: Graph, expand_fusions: bool = False, *, expand_all: bool = False,
                  engine: str = "auto") -> str:
    """A self-contained page (inline data, CSS and JS; nothing fetched) showing graph g and every
    computation it opens into; expand_fusions/expand_all open those at load."""
    from .graph_view import graph_page
    return graph_page(g, "all" if expand_all else "fusion" if expand_fusions else None, engine)


def to_html(module: ir.Module, computation: Optional[str] = None, **options) -> str:
    """A self-contained HTML page (no network) with the computation's graph: fitted to the window,
    minimap, zoom (labels appear as you zoom in), click a node for its text, metadata, operands and
    users, click a fusion/while/conditional/call to open it in place (recursively), find by name,
    opcode or op_name, `#name` in the URL selects.  expand_fusions=True / expand_all=True open
    fusions / everything at load; engine="auto"|"dot"|"browser" chooses the layout engine."""
    expand = options.pop("expand_fusions", False)
    expand_all = options.pop("expand_all", False)
    engine = options.pop("engine", "auto")
    options.setdefault("max_nodes", None)
    return graph_to_html(build(module, computation, expand_fusions=False, **options), expand,
                         expand_all=expand_all, engine=engine)


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
