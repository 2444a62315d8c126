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

The modules behind it: graph_model.py (nodes, edges, clusters: `build`), graph_labels.py (what a node
says), graph_dot.py (DOT text, Graphviz), graph_view.py (the HTML page) with graph_layout.py (its
Graphviz layouts).
"""
from __future__ import annotations

import os
from typing import Optional

from . import ir
from .diagnostics import HloError
from .graph_dot import graph_to_dot, run_dot
from .graph_labels import short_shape
from .graph_model import DEFAULT_MAX_NODES, Cluster, Edge, Graph, Node, build

__all__ = ["Graph", "Node", "Edge", "Cluster", "build", "to_dot", "to_html", "render", "save",
           "FORMATS", "DEFAULT_MAX_NODES", "graph_to_dot", "graph_to_html", "run_dot", "short_shape",
           "format_for_path"]

FORMATS = ("dot", "html", "svg", "png")


def to_dot(module: ir.Module, computation: Optional[str] = None, **options) -> str:
    """Graphviz DOT text of one computation (see `build` for the options)."""
    return graph_to_dot(build(module, computation, **options))


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
