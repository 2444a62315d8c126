"""`hlo info MODULE`: what a module holds, what it costs and where its memory goes (hlo_interp.info)."""
from __future__ import annotations

import os
import sys

import click

from pathlib import Path

from .cli import EXIT_ERROR, EXIT_OK, load_module_arg, make_console, module_options, quick_exit_at_end, report_error
from .diagnostics import HloError


@click.command("info", context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.argument("module", type=click.Path(allow_dash=True))
@click.option("--json", "as_json", is_flag=True, help="One JSON object (schema hlo-info/1) instead of tables.")
@click.option("--top", type=click.IntRange(min=0), default=10, show_default=True, metavar="N",
              help="How many computations, costliest instructions and largest buffers to list (0: all).")
@click.option("-c", "--computation", metavar="NAME",
              help="Report on this computation instead of the entry (its opcodes, signature, cost, buffers).")
@module_options
@click.option("--cache/--no-cache", "cache", default=None,
              help="Keep the report on a file in the user's cache folder and print it from there when the same "
                   "text is asked about again with the same options (default: for files of 256 KiB or more; "
                   "HLO_INTERP_CACHE=0/1 turns it off/on for every file).")
@click.option("--color", type=click.Choice(["auto", "always", "never"]), default="auto", show_default=True)
def command(module, as_json, top, computation, color, module_name=None, stage=None, cache=None):
    """Summarize an HLO module: its computations (and what calls them), instructions per opcode,
    the entry's parameters and result, FLOP and byte estimates as XLA's HloCostAnalysis counts them,
    and a memory report from the physical layouts.

    Physical sizes follow the layouts as written: tiles T(8,128)(2,1) with their padding, tail
    padding L(n), packed elements E(n), metadata prefixes M(n); buffers are grouped by memory space
    S(n) (S(0) HBM, S(1) VMEM on a TPU, S(5) host), so a TPU dump's real footprint shows next to the
    logical size.  Buffers are added up without reuse: an upper bound, not XLA's buffer assignment.

    MODULE is HLO text, an XLA .pb proto or snapshot, '-', or a dump folder: alone, a table of its
    modules (id, name, stages, instructions per stage, entry signature; JAX's own helper modules
    marked); with --module NAME (and --stage) the report on one of them.

    \b
    Examples:
      hlo info dump_dir/                      which module is mine?
      hlo info dump_dir/ --module jit_f --stage before
      hlo info module.after_optimizations.txt
      hlo info --top 20 -c fused_computation.3 dump.hlo
      hlo info --json - < dump.hlo | jq .cost

    \b
    Exit status: 0 ok, 2 usage or input error.
    """
    from .info import module_info, sections
    quick_exit_at_end()  # (run as a process: the module and the report are never freed)
    name = module
    if module != "-" and Path(module).is_dir() and module_name is None and stage is None:
        sys.exit(_folder_table(module, as_json, color))
    kept = None  # (cache, key, reports, this report's options) when the report goes through the cache
    if module != "-" and module_name is None and stage is None and cache is not False and (as_json or _plain(color)):
        kept = _kept_reports(module, cache, f"{'json' if as_json else 'text'} {top} {computation!r}")
        if kept is not None and kept[3] in kept[2]:
            sys.stdout.write(kept[2][kept[3]])
            sys.exit(EXIT_OK)
    try:
        loaded = load_module_arg(module, module_name, stage, "hlo info")
        name = loaded.name
        info = module_info(loaded.module, computation)
    except HloError as e:
        report_error(e, color)
        sys.exit(EXIT_ERROR)
    except MemoryError:  # the group's handler says it: out of memory, exit 2
        raise
    except Exception as e:  # noqa: BLE001 - a bug of ours: a located message, never a traceback
        report_error(HloError(f"internal error in hlo info: {type(e).__name__}: {e}", filename=name), color)
        sys.exit(EXIT_ERROR)
    if as_json:
        _print_report(info.to_json(top=top or None) + "\n", kept)
        sys.exit(EXIT_OK)
    console = None if _plain(color) else make_console(color=color)
    if console is None or not console.is_terminal:
        from .info import to_text
        _print_report(to_text(info, top), kept)
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


def _kept_reports(path: str, choice, options: str):
    """(cache, key, {options: report} kept for the text of file `path`, `options`) when the file goes
    through the module cache (hlo_interp.cache: by size, --cache/--no-cache, HLO_INTERP_CACHE), else None."""
    from .cache import for_path
    found = for_path(path, choice)
    if found is None:
        return None
    cache, key = found
    reports = cache.get_record(key, "info")
    if not (isinstance(reports, dict) and all(isinstance(k, str) and isinstance(v, str) for k, v in reports.items())):
        reports = {}
    return cache, key, reports, options


_KEPT_REPORTS = 8  # per text: the reports of this many sets of options (the latest)


def _print_report(text: str, kept) -> None:
    """Print a report (text or JSON), and keep it in the cache when it goes through it."""
    sys.stdout.write(text)
    if kept is not None:
        cache, key, reports, options = kept
        reports = {k: v for k, v in reports.items() if k != options}
        reports = dict(list(reports.items())[-(_KEPT_REPORTS - 1):])
        reports[options] = text
        cache.put_record(key, "info", reports)


def _plain(color: str) -> bool:
    """Whether the output is surely no terminal for rich (its Console.is_terminal would be False:
    --color never, or no tty and none of the variables that make rich assume one), decided without
    importing rich (start-up time); False when unsure (then rich decides)."""
    if color == "never":
        return True
    if color != "auto" or "FORCE_COLOR" in os.environ or "TTY_COMPATIBLE" in os.environ:
        return False
    try:
        return not sys.stdout.isatty()
    except (AttributeError, ValueError, OSError):
        return False


def _folder_table(path: str, as_json: bool, color: str) -> int:
    """`hlo info DIR`: one row per module of a dump folder."""
    import json
    from .dumps import module_summary, no_module_error, scan
    dump = scan(path)
    if not dump.modules:
        report_error(no_module_error(dump, path), color)
        return EXIT_ERROR
    try:
        rows = [module_summary(m) for m in dump.modules]
    except Exception as e:  # noqa: BLE001 - a bug of ours: a message, never a traceback
        report_error(HloError(f"internal error in hlo info: {type(e).__name__}: {e}", filename=path), color)
        return EXIT_ERROR
    if as_json:
        click.echo(json.dumps({"folder": path, "modules": rows, "skipped": [str(f.path) for f in dump.skipped]},
                              indent=2))
        return EXIT_OK
    head = ["id", "module", "stages (instructions)", "entry signature", ""]
    body = []
    for r in rows:
        stages = ", ".join(f"{s} ({n})" if isinstance(n, int) else f"{s} (unreadable)"
                           for s, n in r["instructions"].items())
        extra = []
        if r["pass_files"]:
            extra.append(f"{r['pass_files']} pass files")
        if r["snapshots"]:
            extra.append(f"{len(r['snapshots'])} snapshot(s)")
        if extra:
            stages += (", " if stages else "") + ", ".join(extra)
        body.append(["" if r["id"] is None else f"{r['id']:04d}", r["name"], stages, r["signature"] or "",
                     "JAX helper" if r["helper"] else ""])
    console = make_console(color=color)
    if console.is_terminal:
        from rich.table import Table
        styled = not console.no_color
        t = Table(title=f"{len(rows)} module(s) in {path}", title_justify="left", box=None, padding=(0, 2, 0, 0),
                  header_style="bold cyan" if styled else "", title_style="bold" if styled else "")
        for h in head:
            t.add_column(h, overflow="fold")
        for b in body:
            t.add_row(*b, style="dim" if (styled and b[-1]) else "")
        console.print(t)
    else:
        widths = [max(len(str(x[i])) for x in [head] + body) for i in range(len(head))]
        sys.stdout.write(f"{len(rows)} module(s) in {path}\n")
        for line in [head] + body:
            sys.stdout.write("  ".join(str(x).ljust(w) for x, w in zip(line, widths)).rstrip() + "\n")
    skipped = len(dump.skipped)
    if skipped:
        sys.stderr.write(f"hlo info: {skipped} file(s) that hold no module skipped (reports, LLVM IR, MLIR)\n")
    return EXIT_OK
