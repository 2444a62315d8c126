"""`hlo diff A B`: the command-line face of hlo_interp.diff (argument handling and presentation only)."""
from __future__ import annotations

import json
import sys

import click

from .cli import (
    EXIT_ERROR,
    EXIT_FINDINGS,
    EXIT_OK,
    _console,
    _read,
    _report_error,
)
from .diagnostics import HloError
from .files import write_atomic

_STYLES = {"head": "bold", "add": "green", "remove": "red", "change": "yellow", "dim": "dim",
           "same": "bold green", "diff": "bold red", "": ""}


@click.command("diff", context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.argument("a", type=click.Path(allow_dash=True))
@click.argument("b", type=click.Path(allow_dash=True))
@click.option("--ignore", multiple=True, metavar="WHAT[,WHAT...]",
              help="Leave out of the comparison: metadata (and stack frames), backend_config, layouts, "
                   "names (do not list renames).  Comma list; repeatable.")
@click.option("--format", "fmt", type=click.Choice(["text", "json", "html"]), default="text",
              show_default=True, help="Report format; html is one self-contained page.")
@click.option("-u", "--unified", is_flag=True,
              help="A plain unified diff of the canonical texts (B printed under A's names where they "
                   "match) instead of the text report; added to json and html reports.")
@click.option("-U", "--context", type=click.IntRange(min=0), default=3, show_default=True, metavar="N",
              help="Lines of context in the unified diff.")
@click.option("-v", "--verbose", is_flag=True, help="Also list the computations that are the same.")
@click.option("-o", "--output", type=click.Path(dir_okay=False, writable=True), metavar="FILE",
              help="Write the report to FILE (atomically) instead of standard output.")
@click.option("--color", type=click.Choice(["auto", "always", "never"]), default="auto", show_default=True,
              help="Colors on a terminal (NO_COLOR=1 turns them off too).")
def command(a, b, ignore, fmt, unified, context, verbose, output, color):
    """Structural diff of two HLO modules: what changed, not which names moved.

    Computations and instructions are matched by graph structure (opcode, shape, attributes, operands'
    matches), the way XLA's hlo_diff does, so renumbering (add.936 vs add.937), reordering and
    metadata churn do not count.  Reports added, removed and changed instructions (changes shown as
    before -> after), renamed counts, and added/removed/changed computations.  A or B may be '-'
    (standard input).

    \b
    Exit status: 0 same, 1 different, 2 usage or input error.

    \b
    Examples:
      hlo diff before.hlo after.hlo
      hlo diff --ignore metadata,backend_config run1.txt run2.txt
      hlo diff -u a.hlo b.hlo | less -R
      hlo diff --format html -o diff.html a.hlo b.hlo
      hlo diff --format json a.hlo - < b.hlo
    """
    from .diff import IGNORABLE, diff_modules, normalize_ignore
    if a == "-" and b == "-":
        raise click.UsageError("standard input ('-') can be read only once")
    try:
        ig = normalize_ignore(ignore)
    except ValueError:
        bad = [p.strip() for item in ignore for p in item.split(",") if p.strip() and p.strip().lower() not in IGNORABLE]
        raise click.UsageError(f"--ignore: unknown item '{bad[0]}' (allowed: {', '.join(IGNORABLE)})")
    from . import parse
    modules, names = [], []
    for path in (a, b):
        try:
            text, name = _read(path)
            modules.append(parse(text, name))
            names.append(name)
        except HloError as e:
            _report_error(e, color)
            sys.exit(EXIT_ERROR)
    try:
        result = diff_modules(modules[0], modules[1], ig, a_name=names[0], b_name=names[1])
    except Exception as e:  # noqa: BLE001 - a bug of ours: a message, not a traceback
        _report_error(HloError(f"internal error in hlo diff: {type(e).__name__}: {e}"), color)
        sys.exit(EXIT_ERROR)
    status = EXIT_OK if result.same else EXIT_FINDINGS

    if fmt == "json":
        data = result.to_json()
        if unified:
            data["unified"] = result.unified(context)
        _emit(json.dumps(data, indent=2) + "\n", output)
    elif fmt == "html":
        _emit(result.to_html(unified=unified, context=context), output)
    elif unified:
        text = result.unified(context)
        if output:
            _emit(text, output)
        else:
            console = _console(color=color)
            if console.is_terminal and not console.no_color:
                from rich.text import Text
                for line in text.splitlines():
                    style = ("bold" if line.startswith(("+++", "---")) else "green" if line.startswith("+")
                             else "red" if line.startswith("-") else "cyan" if line.startswith("@@") else "")
                    console.print(Text(line, style=style))
            else:
                sys.stdout.write(text)
    else:
        if output:
            _emit(result.to_text(verbose=verbose), output)
        else:
            console = _console(color=color)
            if console.is_terminal and not console.no_color:
                from rich.text import Text
                t = Text()
                for piece, style in result._text_lines(verbose):
                    t.append(piece, style=_STYLES.get(style, ""))
                console.print(t, end="")
            else:
                sys.stdout.write(result.to_text(verbose=verbose))
    sys.exit(status)


def _emit(text: str, output) -> None:
    if output:
        try:
            write_atomic(output, text)
        except HloError as e:
            _report_error(e)
            sys.exit(EXIT_ERROR)
    else:
        sys.stdout.write(text)
