"""The picture of a computation as `hlo graph` draws it: nodes (instructions), edges (operand to
user, with the operand's short shape; control dependencies apart) and clusters (expanded fusions),
built with the --around/--depth neighbourhood and the --max-nodes cut."""
from __future__ import annotations

import difflib
from collections import deque
from dataclasses import dataclass, field
from typing import Optional

from . import ir
from .diagnostics import HloError
from .graph_labels import fused_computation, fused_name, short_shape
from .opcodes import OPCODES, split_async

DEFAULT_MAX_NODES = 500


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


def _family(opcode: str) -> str:
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
        fused = {fused_name(i) for c in module.computations for i in c.instructions if i.opcode == "fusion"}
        cands = sorted(module.computations, key=lambda c: (not c.is_entry, c.name in fused))
    for c in cands:
        if any(i.name == name for i in c.instructions):
            return c
    names = [i.name for c in cands for i in c.instructions]
    close = _similar(name, names)
    where = f"computation {comp.name}" if comp is not None else f"module {module.name}"
    raise HloError(f"no instruction named '{name}' in {where}"
                   + (f"; did you mean {', '.join(close)}?" if close else ""), filename=module.filename)


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
        fc = fused_computation(module, ins)
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
            fc = fused_computation(module, ins) if (expand_fusions and ins.opcode == "fusion" and
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
