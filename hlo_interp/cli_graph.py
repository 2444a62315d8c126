"""`hlo graph`: draw a computation (argument handling only; the work is hlo_interp.graph)."""
from __future__ import annotations

import sys

import click

from .cli import EXIT_ERROR, EXIT_OK, load_module_arg, make_console, module_options, report_error
from .diagnostics import HloError
from .files import write_atomic


@click.command("graph", context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.argument("module", type=click.Path(allow_dash=True))
@click.option("-o", "--output", type=click.Path(dir_okay=False, writable=True), metavar="OUT",
              help="Write here; the format follows the extension: .dot, .html, .svg, .png "
                   "(svg and png need Graphviz's 'dot').  Default: DOT text on standard output.")
@click.option("--format", "fmt", type=click.Choice(["dot", "html", "svg", "png"]),
              help="Output format, when it should not follow OUT's extension (or for standard output).")
@click.option("-c", "--computation", metavar="C", help="Draw this computation (default: the entry one).")
@click.option("--around", metavar="INSTR",
              help="Keep only the instructions within --depth operand/user hops of INSTR "
                   "(searched in every computation when --computation is not given).")
@click.option("--depth", type=click.IntRange(min=0), default=None, metavar="K",
              help="Hops kept around --around (default 2).")
@click.option("--expand-fusions", is_flag=True,
              help="Draw fusions as clusters of their fused instructions (HTML: open them at first). "
                   "Default: one node per fusion, labelled with its kind and fused opcodes.")
@click.option("--expand-all", is_flag=True,
              help="HTML: open every fusion, while, conditional, call and async computation at first, "
                   "recursively.")
@click.option("--layout", "engine", type=click.Choice(["auto", "dot", "browser"]), default="auto",
              show_default=True,
              help="HTML: who lays the computations out: Graphviz 'dot' when installed (auto), or the "
                   "page itself with its bundled dagre library (browser).")
@click.option("--max-nodes", type=click.IntRange(min=1), default=None, metavar="N",
              help="Draw at most N nodes; beyond, keep those nearest the ROOT (or INSTR) and say how "
                   "many were left out.  Default 500 for dot/svg/png, no limit for html.")
@click.option("--no-control-edges", is_flag=True, help="Do not draw control-predecessors edges.")
@module_options
@click.option("--color", type=click.Choice(["auto", "always", "never"]), default="auto", show_default=True,
              help="Colors in messages.")
def command(module, output, fmt, computation, around, depth, expand_fusions, expand_all, engine, max_nodes,
            no_control_edges, color, module_name=None, stage=None):
    """Draw a computation of an HLO module: instructions as nodes (opcode, name, short shape),
    operand -> user edges labelled with shapes, fusions collapsed or expanded, the computations called
    by while/conditional/call/reduce summarized.

    \b
    Formats (from -o's extension or --format):
      .dot   Graphviz text (pure Python)
      .html  a self-contained page: the whole graph fitted to the window, minimap, zoom (wheel;
             labels appear as you zoom in), pan (drag), click a node for its text, metadata,
             operands and users, click a fusion/while/call to open it in place; find by name,
             opcode or op_name; #NAME in the URL selects; works offline (laid out by Graphviz
             'dot' when installed, else in the page)
      .svg .png  rendered by Graphviz's 'dot' program (apt-get install graphviz)

    \b
    Examples:
      hlo graph module.hlo -o graph.html
      hlo graph module.hlo --expand-fusions -o graph.svg
      hlo graph dump.after_optimizations.txt --around multiply.12 --depth 3 -o near.png
      hlo graph module.hlo --computation fused_computation.3 | dot -Tpdf > f.pdf
    """
    from . import graph
    if depth is not None and not around:
        raise click.UsageError("--depth needs --around INSTR")
    if fmt is None:
        try:
            fmt = graph.format_for_path(output) if output else "dot"
        except HloError as e:
            raise click.UsageError(e.message) from None
    if output is None and fmt == "png" and sys.stdout.isatty():
        raise click.UsageError("PNG is binary: write it to a file with -o OUT.png")
    status = EXIT_OK
    try:
        m = load_module_arg(module, module_name, stage, "hlo graph").module
        if max_nodes is None and fmt != "html":
            max_nodes = graph.DEFAULT_MAX_NODES
        g = graph.build(m, computation, around=around, depth=2 if depth is None else depth,
                        expand_fusions=expand_fusions and fmt != "html", max_nodes=max_nodes,
                        control_edges=not no_control_edges)
        if fmt == "html":
            data = graph.graph_to_html(g, expand_fusions, expand_all=expand_all, engine=engine).encode("utf-8")
        else:
            dot_text = graph.graph_to_dot(g)
            data = dot_text.encode("utf-8") if fmt == "dot" else graph.run_dot(dot_text, fmt)
        from rich.text import Text
        console = make_console(stderr=True, color=color)
        for note in g.notes:
            console.print(Text.assemble(("note:", "bold cyan"), f" {note}"))
        if output:
            write_atomic(output, data)
            edges = sum(1 for e in g.edges if not e.control)
            console.print(Text.assemble("wrote ", (output, "bold"), f" ({fmt}): {g.computation.name}, "
                                        f"{len(g.nodes)} nodes, {edges} edges"
                                        + (f", {len(g.clusters)} fusion clusters" if g.clusters else "")))
        else:
            sys.stdout.buffer.write(data)
            sys.stdout.flush()
    except HloError as e:
        if e.filename is None:  # about the output (Graphviz missing or failing): name the file
            e.filename = output or ("<stdout>" if module != "-" else "<stdin>")
        report_error(e, color)
        status = EXIT_ERROR
    except BrokenPipeError:
        raise  # the reader of standard output left: PipeSafe ends quietly
    except MemoryError:  # the group's handler says it: out of memory, exit 2
        raise
    except Exception as e:  # noqa: BLE001 - a bug of ours: a message, not a traceback
        report_error(HloError(f"internal error while drawing: {type(e).__name__}: {e}",
                               filename=None if module == "-" else module), color)
        status = EXIT_ERROR
    sys.exit(status)
