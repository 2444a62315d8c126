"""Graphviz DOT text of a graph_model.Graph, and running Graphviz `dot` for SVG/PNG."""
from __future__ import annotations

import html as _html
import shutil
import subprocess
from typing import Optional

from .diagnostics import HloError
from .graph_labels import fill_color, fusion_fill, fusion_kind, instruction_text, label_lines, short_shape
from .graph_model import Graph, Node


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
            lab = (f"<<B>{_h(cl.fusion.name)}</B> · fusion {_h(fusion_kind(cl.fusion))}"
                   f"<BR/><FONT POINT-SIZE=\"9\">{_h(cl.comp.name)} → "
                   f"{_h(short_shape(cl.fusion.shape))}</FONT>>")
            fill = fusion_fill(cl.fusion)
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
