"""The `hlo` command: argument handling and presentation only; the work is in the Python API.

Exit codes: 0 ok, 1 findings (check) or "not formatted" (fmt --check), 2 usage or input error.
"""
from __future__ import annotations

import json
import os
import re
import sys
import tempfile
from pathlib import Path
from typing import Optional

import click

from . import __version__
from .diagnostics import HloError

EXIT_OK, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2


# --------------------------------------------------------------------------------------------------
# Presentation helpers

def _console(stderr: bool = False, color: str = "auto"):
    from rich.console import Console
    force = {"always": True, "never": False}.get(color)
    no_color = color == "never" or (color == "auto" and "NO_COLOR" in os.environ)
    return Console(stderr=stderr, force_terminal=force, no_color=no_color, highlight=False,
                   soft_wrap=True)


def _report_error(err: HloError, color: str = "auto") -> None:
    console = _console(stderr=True, color=color)
    if console.is_terminal and not console.no_color:
        from rich.text import Text
        lines = err.render().split("\n")
        first = Text(lines[0])
        first.stylize("bold")
        idx = lines[0].find("error:")
        if idx >= 0:
            first.stylize("bold red", idx, idx + 6)
        console.print(first)
        for line in lines[1:]:
            console.print(Text(line, style="green" if line.strip() == "^" else ""))
    else:
        sys.stderr.write(err.render() + "\n")


_HIGHLIGHT = re.compile(
    r'(?P<comment>/\*.*?\*/|//[^\n]*)|(?P<string>"(?:[^"\\\n]|\\.)*")'
    r"|(?P<keyword>\b(?:HloModule|ENTRY|ROOT)\b)"
    r"|(?P<shape>\b(?:pred|[suf]\d+|bf16|c64|c128|f8e\w+|f4e2m1fn|token|opaque)\[[^\]]*\](?:\{[^{}]*\})?)"
    r"|(?P<name>%[\w.-]+)|(?P<attr>\b[A-Za-z_][\w.-]*(?==))|(?P<opcode>\b[a-z][a-z0-9-]*(?=\())")
_STYLES = {"comment": "dim", "string": "green", "keyword": "bold magenta", "shape": "cyan",
           "name": "yellow", "attr": "blue", "opcode": "bold"}


def highlight(text: str):
    """Syntax colors for HLO text on a terminal (rich Text)."""
    from rich.text import Text
    t = Text(text)
    for m in _HIGHLIGHT.finditer(text):
        t.stylize(_STYLES[m.lastgroup], m.start(), m.end())
    return t


def _read(path: str) -> tuple[str, str]:
    """(text, display name); '-' is standard input."""
    if path == "-":
        data = sys.stdin.buffer.read()
        name = "<stdin>"
    else:
        p = Path(path)
        if p.is_dir():
            raise HloError("is a directory (give HLO text files)", filename=path)
        try:
            data = p.read_bytes()
        except FileNotFoundError:
            raise HloError("no such file", filename=path) from None
        except OSError as e:
            raise HloError(f"cannot read: {e.strerror}", filename=path) from None
        name = path
    try:
        return data.decode("utf-8"), name
    except UnicodeDecodeError as e:
        raise HloError(f"not a text file (invalid UTF-8 at byte {e.start})", filename=name) from None


def write_atomic(path: Path, text: str) -> None:
    """Write via a temporary file in the same folder, then rename: never a half-written file."""
    path = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=str(path.parent or "."))
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        if path.exists():
            os.chmod(tmp, path.stat().st_mode & 0o7777)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


# --------------------------------------------------------------------------------------------------
# Commands

@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, prog_name="hlo")
def main() -> None:
    """Tools for XLA's HLO text: format it, check it.

    HLO text is what XLA_FLAGS=--xla_dump_to=DIR writes (*.before_optimizations.txt,
    *.after_optimizations.txt) and what JAX prints with jax.jit(f).lower(...).as_text("hlo") or
    .compile().as_text().  Every command reads files or '-' for standard input.

    \b
    Exit status: 0 ok, 1 findings, 2 usage or input error.
    Colors follow the terminal; NO_COLOR=1 or --color never turns them off.
    """


@main.command("fmt")
@click.argument("files", nargs=-1, required=True, type=click.Path(allow_dash=True))
@click.option("--strip-metadata", is_flag=True, help="Drop metadata={...} (and the stack-frame tables).")
@click.option("--strip-backend-config", is_flag=True, help="Drop backend_config=... attributes.")
@click.option("--canonical-names", is_flag=True,
              help="Rename computations and instructions by position, like XLA's canonical printing, "
                   "so two dumps that differ only in numbering print the same.")
@click.option("--check", "check_only", is_flag=True,
              help="Write nothing; exit 1 and list the files that are not already formatted.")
@click.option("-i", "--in-place", is_flag=True, help="Rewrite the files (atomically) instead of printing.")
@click.option("--color", type=click.Choice(["auto", "always", "never"]), default="auto", show_default=True,
              help="Syntax colors when printing to a terminal.")
def fmt_cmd(files, strip_metadata, strip_backend_config, canonical_names, check_only, in_place, color):
    """Pretty-print HLO text canonically, in XLA's own style.

    Names get their % prefix, computations their signatures, shapes their layouts and attributes
    XLA's order.  Formatting is idempotent, and the result parses to the same module.

    \b
    Examples:
      hlo fmt module.hlo                  print the formatted module
      hlo fmt --strip-metadata - < dump.txt
      hlo fmt --check dumps/*.txt         CI: fail if any file is not formatted
      hlo fmt -i module.hlo               rewrite in place
    """
    from . import format_text
    if len(files) > 1 and not (check_only or in_place):
        raise click.UsageError("several files need --check or --in-place")
    if in_place and "-" in files:
        raise click.UsageError("--in-place cannot rewrite standard input")
    unformatted = []
    status = EXIT_OK
    for path in files:
        try:
            text, name = _read(path)
            out = format_text(text, name, strip_metadata=strip_metadata,
                              strip_backend_config=strip_backend_config, canonical_names=canonical_names)
        except HloError as e:
            _report_error(e, color)
            status = EXIT_ERROR
            continue
        if check_only:
            if out != text:
                unformatted.append(name)
                click.echo(f"{name}: not formatted", err=True)
        elif in_place:
            if out != text:
                write_atomic(Path(path), out)
        else:
            console = _console(color=color)
            if console.is_terminal and not console.no_color:
                console.print(highlight(out), end="")
            else:
                sys.stdout.write(out)
    if status == EXIT_OK and unformatted:
        status = EXIT_FINDINGS
    sys.exit(status)


@main.command("check")
@click.argument("paths", nargs=-1, required=True, type=click.Path(allow_dash=True))
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True,
              help="Findings as located text messages, or as JSON for tools.")
@click.option("--color", type=click.Choice(["auto", "always", "never"]), default="auto", show_default=True)
def check_cmd(paths, fmt, color):
    """Check HLO files: syntax (with located errors) and names the opcode table does not know.

    PATHS are files, directories (their *.txt and *.hlo files, recursively) or '-' for standard
    input.  Exit 0 when every file is valid, 1 when there are findings, 2 when a file cannot be read.
    """
    from . import parse_all
    from .opcodes import lookup, split_async
    files = []
    for p in paths:
        if p != "-" and Path(p).is_dir():
            files.extend(sorted(str(f) for f in Path(p).rglob("*") if f.suffix in (".txt", ".hlo")))
        else:
            files.append(p)
    findings = []
    status = EXIT_OK
    for path in files:
        try:
            text, name = _read(path)
        except HloError as e:
            _report_error(e, color)
            status = EXIT_ERROR
            continue
        try:
            modules = parse_all(text, name)
        except HloError as e:
            findings.append(e)
            continue
        for comp in (c for m in modules for c in m.computations):
            for ins in comp.instructions:
                if lookup(ins.opcode) is None and split_async(ins.opcode)[1] is None:
                    findings.append(_finding(ins.loc, name, f"unknown opcode '{ins.opcode}'",
                                             "unknown-opcode"))
                for attr in ins.unknown_attrs:
                    findings.append(_finding(ins.attr_locs.get(attr), name,
                                             f"unknown attribute '{attr}' for {ins.opcode}",
                                             "unknown-attribute"))
    if fmt == "json":
        click.echo(json.dumps({"files": len(files), "findings": [f.to_dict() for f in findings]}, indent=2))
    else:
        for f in findings:
            _report_error(f, color)
        click.echo(f"{len(files)} file(s) checked, {len(findings)} finding(s)", err=True)
    if findings and status == EXIT_OK:
        status = EXIT_FINDINGS
    sys.exit(status)


def _finding(loc, filename: str, message: str, code: str) -> HloError:
    if loc is None:
        return HloError(message, filename=filename, code=code)
    return HloError(message, filename=filename, line=loc.line, column=loc.column,
                    source_line=loc.source_line, code=code)


if __name__ == "__main__":  # pragma: no cover
    main()
