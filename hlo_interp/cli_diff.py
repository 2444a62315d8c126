"""`hlo diff A B`: the command-line face of hlo_interp.diff (argument handling and presentation only)."""
from __future__ import annotations

import json
import sys

import click

from .cli import (
    EXIT_ERROR,
    EXIT_FINDINGS,
    EXIT_OK,
    load_module_arg,
    make_console,
    module_options,
    report_error,
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
@module_options
@click.option("--color", type=click.Choice(["auto", "always", "never"]), default="auto", show_default=True,
              help="Colors on a terminal (NO_COLOR=1 turns them off too).")
def command(a, b, ignore, fmt, unified, context, verbose, output, color, module_name=None, stage=None):
    """Structural diff of two HLO modules: what changed, not which names moved.

    Computations and instructions are matched by graph structure (opcode, shape, attributes, operands'
    matches), the way XLA's hlo_diff does, so renumbering (add.936 vs add.937), reordering and
    metadata churn do not count.  Reports added, removed and changed instructions (changes shown as
    before -> after), renamed counts, and added/removed/changed computations.  A or B may be '-'
    (standard input), an XLA .pb proto or snapshot, or a dump folder.

    Two dump folders: their modules are paired by name and stage (not by their numbers, which differ
    between runs), one line per pair: same, changed (with counts), only in A, only in B; -v adds each
    changed pair's report.  With --module NAME (and --stage) one pair is diffed as two files.

    \b
    Exit status: 0 same, 1 different, 2 usage or input error.

    \b
    Examples:
      hlo diff before.hlo after.hlo
      hlo diff dump_run1/ dump_run2/            every module, paired by name and stage
      hlo diff dump_run1/ dump_run2/ --module jit_f --stage after
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
    from pathlib import Path
    dirs = [p != "-" and Path(p).is_dir() for p in (a, b)]
    if all(dirs) and module_name is None and stage is None:
        sys.exit(_diff_folders(a, b, ig, verbose, fmt, color))
    modules, names = [], []
    for path in (a, b):
        try:
            loaded = load_module_arg(path, module_name if Path(path).is_dir() else None,
                                     stage if Path(path).is_dir() else None, "hlo diff")
            modules.append(loaded.module)
            names.append(loaded.name)
        except HloError as e:
            report_error(e, color)
            sys.exit(EXIT_ERROR)
    try:
        result = diff_modules(modules[0], modules[1], ig, a_name=names[0], b_name=names[1])
    except MemoryError:  # the group's handler says it: out of memory, exit 2
        raise
    except Exception as e:  # noqa: BLE001 - a bug of ours: a message, not a traceback
        report_error(HloError(f"internal error in hlo diff: {type(e).__name__}: {e}"), color)
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
            console = make_console(color=color)
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
            console = make_console(color=color)
            if console.is_terminal and not console.no_color:
                from rich.text import Text

                from .diff_render import text_lines
                t = Text()
                for piece, style in text_lines(result, verbose):
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
            report_error(e)
            sys.exit(EXIT_ERROR)
    else:
        sys.stdout.write(text)


def _diff_folders(a: str, b: str, ignore, verbose: bool, fmt: str, color: str) -> int:
    """`hlo diff DIR_A DIR_B`: modules paired by name and stage, one summary line per pair."""
    from .diff import diff_modules
    from .dumps import load, no_module_error, pair_modules, scan
    da, db = scan(a), scan(b)
    for d, p in ((da, a), (db, b)):
        if not d.modules:
            report_error(no_module_error(d, p), color)
            return EXIT_ERROR
    rows, details = [], []
    for name, stage, fa, fb in pair_modules(da, db):
        row = {"module": name, "stage": stage, "a": str(fa.path) if fa else None, "b": str(fb.path) if fb else None}
        if fa is None or fb is None:
            row["status"] = "only in A" if fb is None else "only in B"
        else:
            try:
                ma, mb = load(fa).module, load(fb).module
                res = diff_modules(ma, mb, ignore, a_name=str(fa.path), b_name=str(fb.path))
            except HloError as e:
                row.update(status="error", message=e.render())
                rows.append(row)
                continue
            except Exception as e:  # noqa: BLE001 - a bug of ours: a message, not a traceback
                row.update(status="error", message=f"internal error: {type(e).__name__}: {e}")
                rows.append(row)
                continue
            if res.same:
                row["status"] = "same"
            else:
                s = res.summary()["instructions"]
                row["status"] = "changed"
                row["counts"] = {k: s[k] for k in ("added", "removed", "changed", "moved")}
                details.append(res)
        rows.append(row)
    status = EXIT_OK if all(r["status"] == "same" for r in rows) else EXIT_FINDINGS
    if any(r["status"] == "error" for r in rows):
        status = EXIT_ERROR
    if fmt == "json":
        sys.stdout.write(json.dumps({"a": a, "b": b, "pairs": rows,
                                     "details": [d.to_json() for d in details] if verbose else []},
                                    indent=2) + "\n")
        return status
    width = max(len(f"{r['module']} {r['stage']}") for r in rows)
    console = make_console(color=color)
    styled = console.is_terminal and not console.no_color
    from rich.text import Text
    for r in rows:
        label = f"{r['module']} {r['stage']}".ljust(width)
        if r["status"] == "changed":
            c = r["counts"]
            what = (f"changed: {c['added']} added, {c['removed']} removed, {c['changed']} changed"
                    + (f", {c['moved']} moved" if c["moved"] else "") + " instruction(s)")
        elif r["status"] == "error":
            what = "unreadable: " + r["message"].split("\n")[0]
        else:
            what = r["status"]
        style = {"same": "green", "changed": "yellow", "error": "bold red"}.get(r["status"], "cyan")
        if styled:
            console.print(Text(label + "  ") + Text(what, style=style))
        else:
            sys.stdout.write(f"{label}  {what}\n")
    n = {k: sum(1 for r in rows if r["status"] == k) for k in ("same", "changed", "only in A", "only in B", "error")}
    sys.stderr.write(f"hlo diff: {len(rows)} pair(s): {n['same']} same, {n['changed']} changed, "
                     f"{n['only in A']} only in A, {n['only in B']} only in B"
                     + (f", {n['error']} unreadable" if n["error"] else "") + "\n")
    if verbose:
        for res in details:
            sys.stdout.write("\n" + res.to_text(verbose=False))
    return status
