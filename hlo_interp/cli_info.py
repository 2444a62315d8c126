"""`hlo info MODULE`: what a module holds, what it costs and where its memory goes (hlo_interp.info)."""
from __future__ import annotations

import sys

import click

from .cli import EXIT_ERROR, EXIT_OK, _console, _read, _report_error
from .diagnostics import HloError


@click.command("info", context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.argument("module", type=click.Path(allow_dash=True))
@click.option("--json", "as_json", is_flag=True, help="One JSON object (schema hlo-info/1) instead of tables.")
@click.option("--top", type=click.IntRange(min=0), default=10, show_default=True, metavar="N",
              help="How many computations, costliest instructions and largest buffers to list (0: all).")
@click.option("-c", "--computation", metavar="NAME",
              help="Report on this computation instead of the entry (its opcodes, signature, cost, buffers).")
@click.option("--color", type=click.Choice(["auto", "always", "never"]), default="auto", show_default=True)
def command(module, as_json, top, computation, color):
    """Summarize an HLO module: its computations (and what calls them), instructions per opcode,
    the entry's parameters and result, FLOP and byte estimates as XLA's HloCostAnalysis counts them,
    and a memory report from the physical layouts.

    Physical sizes follow the layouts as written: tiles T(8,128)(2,1) with their padding, tail
    padding L(n), packed elements E(n), metadata prefixes M(n); buffers are grouped by memory space
    S(n) (S(0) HBM, S(1) VMEM on a TPU, S(5) host), so a TPU dump's real footprint shows next to the
    logical size.  Buffers are added up without reuse: an upper bound, not XLA's buffer assignment.

    \b
    Examples:
      hlo info module.after_optimizations.txt
      hlo info --top 20 -c fused_computation.3 dump.hlo
      hlo info --json - < dump.hlo | jq .cost

    \b
    Exit status: 0 ok, 2 usage or input error.
    """
    from .info import module_info, sections
    name = module
    try:
        text, name = _read(module)
        from . import parse
        info = module_info(parse(text, name), computation)
    except HloError as e:
        _report_error(e, color)
        sys.exit(EXIT_ERROR)
    except Exception as e:  # noqa: BLE001 - a bug of ours: a located message, never a traceback
        _report_error(HloError(f"internal error in hlo info: {type(e).__name__}: {e}", filename=name), color)
        sys.exit(EXIT_ERROR)
    if as_json:
        click.echo(info.to_json(top=top or None))
        sys.exit(EXIT_OK)
    console = _console(color=color)
    if not console.is_terminal:
        from .info import to_text
        sys.stdout.write(to_text(info, top))
        sys.exit(EXIT_OK)
    from rich.table import Table
    from rich.text import Text
    styled = not console.no_color
    console.print(Text(f"module {info.module}", style="bold" if styled else "")
                  + Text(f"  ({info.filename})" if info.filename else "", style="dim" if styled else ""))
    for title, head, rows, notes in sections(info, top):
        table = Table(title=title, title_justify="left", title_style="bold" if styled else "",
                      header_style="bold cyan" if styled else "", box=None, padding=(0, 2, 0, 0),
                      show_edge=False)
        numeric = {"instructions", "count", "#", "logical", "physical", "flops", "transcendentals", "peak live",
                   "bytes accessed", "buffers", "logical bytes", "physical bytes"}
        for h in head:
            table.add_column(h, justify="right" if h in numeric else "left", overflow="fold")
        for r in rows:
            table.add_row(*r)
        console.print()
        console.print(table)
        for n in notes:
            console.print(Text("  " + n, style="yellow" if styled else ""))
    sys.exit(EXIT_OK)
