"""The `hlo` command: argument handling and presentation only; the work is in the Python API.

Exit codes: 0 ok, 1 findings (check) or "not formatted" (fmt --check), 2 usage or input error.
"""
from __future__ import annotations

import os
import re
import sys
from typing import Optional

import click

from .version import __version__
from .diagnostics import HloError

EXIT_OK, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2
EXIT_BROKEN_PIPE = 128 + 13  # the reader of our output left (`hlo fmt x | head`): as if killed by SIGPIPE


# --------------------------------------------------------------------------------------------------
# Presentation helpers

def _stdout_to_devnull() -> None:
    """Nothing more can be written: point standard output at /dev/null so that the interpreter's final
    flush cannot fail again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass


def exit_broken_pipe():
    """Stop quietly with status 141, like a Unix tool killed by SIGPIPE: no message, no traceback."""
    _stdout_to_devnull()
    sys.exit(EXIT_BROKEN_PIPE)


class _OutputErrors:
    """Failures to write standard output, as the user should see them: a reader that left (a closed
    pipe) ends quietly with 141; any other (a full disk, /dev/full, an I/O error) is one line and
    status 2, never a traceback.  Click alone would exit 1 ("findings" here) or show a traceback."""

    def __enter__(self):
        return self

    def __exit__(self, kind, e, tb):
        if kind is None or not issubclass(kind, OSError):
            return False
        if isinstance(e, BrokenPipeError):
            exit_broken_pipe()
        try:
            sys.stderr.write(f"error: cannot write the output: {e.strerror or e}\n")
            sys.stderr.flush()
        except (OSError, ValueError):
            pass
        _stdout_to_devnull()
        sys.exit(EXIT_ERROR)


def _reliable_stdout() -> None:
    """With PYTHONUNBUFFERED=1 (or -u), sys.stdout writes straight to a raw file, whose short writes
    (a full disk, a file-size limit, a pipe whose reader left) the text layer silently ignores: put a
    BufferedWriter back in between, which writes every byte or raises."""
    import io
    out = sys.stdout
    raw = getattr(out, "buffer", None)
    if isinstance(raw, io.RawIOBase) and isinstance(out, io.TextIOWrapper):
        try:
            sys.stdout = io.TextIOWrapper(io.BufferedWriter(raw), encoding=out.encoding, errors=out.errors,
                                          line_buffering=out.line_buffering or out.isatty(), write_through=False)
        except (ValueError, OSError):
            pass


class PipeSafe:
    """Mixin for click commands and groups: errors writing standard output from anywhere in the
    command (click.echo, sys.stdout.write, rich, --help and --version while the arguments are parsed)
    end it as _OutputErrors says.  Output still buffered when the command ends is flushed here, so
    that its failure is reported too, not left to the interpreter's exit."""

    def make_context(self, *args, **kwargs):
        _reliable_stdout()
        with _OutputErrors():
            try:
                return super().make_context(*args, **kwargs)
            except BaseException:
                sys.stdout.flush()  # --help / --version end with an exit: flush while we can report
                raise

    def invoke(self, ctx):
        with _OutputErrors():
            try:
                return super().invoke(ctx)
            except MemoryError:
                _fail_internal(ctx, "out of memory (the input is too large for this machine)")
            except (click.exceptions.ClickException, click.exceptions.Exit, click.exceptions.Abort,
                    OSError, KeyboardInterrupt, SystemExit):
                raise
            except Exception as e:  # noqa: BLE001 - a bug of ours: one line and exit 2, not a traceback
                if os.environ.get("HLO_INTERP_DEBUG"):
                    raise
                _fail_internal(ctx, f"internal error: {type(e).__name__}: {e} (rerun with HLO_INTERP_DEBUG=1 "
                                    f"for the traceback)")
            finally:
                sys.stdout.flush()


def _fail_internal(ctx, message: str) -> None:
    """A failure that is not the input's fault (a bug, no memory left): one line on stderr, exit 2
    (never 1: that is "findings")."""
    name = ctx.command_path if ctx is not None else "hlo"
    sys.stderr.write(f"{name}: error: {message}\n")
    sys.exit(EXIT_ERROR)


_CONSOLE_CLASS = None


def make_console(stderr: bool = False, color: str = "auto"):
    """A rich Console for the commands' output (stderr=True: for messages), honouring --color and
    NO_COLOR; a closed pipe raises BrokenPipeError for PipeSafe to handle."""
    global _CONSOLE_CLASS
    if _CONSOLE_CLASS is None:
        from rich.console import Console

        class _Console(Console):
            def on_broken_pipe(self) -> None:  # rich would exit 1: let PipeSafe decide
                self.quiet = True
                raise BrokenPipeError(32, "Broken pipe")
        _CONSOLE_CLASS = _Console
    force = {"always": True, "never": False}.get(color)
    no_color = color == "never" or (color == "auto" and "NO_COLOR" in os.environ)
    return _CONSOLE_CLASS(stderr=stderr, force_terminal=force, no_color=no_color, highlight=False,
                          soft_wrap=True)


def use_color(stderr: bool = False, color: str = "auto") -> bool:
    """Whether to write colors: --color always/never, else a terminal (FORCE_COLOR forces one, as
    for rich) that is not dumb, and no NO_COLOR in the environment."""
    if color == "always":
        return True
    if color == "never" or "NO_COLOR" in os.environ:
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    if os.environ.get("TERM", "").lower() in ("dumb", "unknown"):
        return False
    try:
        return (sys.stderr if stderr else sys.stdout).isatty()
    except (AttributeError, ValueError, OSError):
        return False


# ANSI SGR codes of the few styles the plain-text commands use (fmt, check, error messages): no rich
# import on their path.
_SGR = {"dim": "2", "green": "32", "bold magenta": "1;35", "cyan": "36", "yellow": "33", "blue": "34",
        "bold": "1", "bold red": "1;31", "bold yellow": "1;33", "bold cyan": "1;36"}


def ansi(text: str, style: str) -> str:
    return f"\x1b[{_SGR[style]}m{text}\x1b[0m" if text else text


def _styled_message(text: str, label_at: int, label_len: int, label_style: str) -> str:
    """A located message: first line bold with its `error:`-like label colored, caret line green."""
    lines = text.split("\n")
    first = lines[0]
    if label_at >= 0:
        first = ansi(first[:label_at], "bold") + ansi(first[label_at:label_at + label_len], label_style) + \
            ansi(first[label_at + label_len:], "bold")
    else:
        first = ansi(first, "bold")
    rest = [ansi(line, "green") if line.strip() == "^" else line for line in lines[1:]]
    return "\n".join([first] + rest)


def report_error(err: HloError, color: str = "auto") -> None:
    """Print a located error (file:line:column, caret excerpt) to stderr, `error:` in red on a terminal."""
    text = err.render()
    if use_color(stderr=True, color=color):
        text = _styled_message(text, text.split("\n")[0].find("error:"), 6, "bold red")
    sys.stderr.write(text + "\n")


_HIGHLIGHT = re.compile(
    r'(?P<comment>/\*.*?\*/|//[^\n]*)|(?P<string>"(?:[^"\\\n]|\\.)*")'
    r"|(?P<keyword>\b(?:HloModule|ENTRY|ROOT)\b)"
    r"|(?P<shape>\b(?:pred|[suf]\d+|bf16|c64|c128|f8e\w+|f4e2m1fn|token|opaque)\[[^\]]*\](?:\{[^{}]*\})?)"
    r"|(?P<name>%[\w.-]+)|(?P<attr>\b[A-Za-z_][\w.-]*(?==))|(?P<opcode>\b[a-z][a-z0-9-]*(?=\())")
_STYLES = {"comment": "dim", "string": "green", "keyword": "bold magenta", "shape": "cyan",
           "name": "yellow", "attr": "blue", "opcode": "bold"}


def highlight(text: str) -> str:
    """Syntax colors for HLO text on a terminal (ANSI escapes)."""
    out = []
    pos = 0
    for m in _HIGHLIGHT.finditer(text):
        out.append(text[pos:m.start()])
        # line by line: a pager or terminal resets attributes at line ends
        out.append("\n".join(ansi(part, _STYLES[m.lastgroup]) for part in m.group().split("\n")))
        pos = m.end()
    out.append(text[pos:])
    return "".join(out)


def _read(path: str) -> tuple[str, str]:
    """(text, display name); '-' is standard input."""
    from .diagnostics import read_source
    return read_source(path)


def load_module_arg(path: str, module: Optional[str] = None, stage: Optional[str] = None, prog: str = "hlo"):
    """The module a command reads for PATH: HLO text, a .pb proto or snapshot, '-', or an XLA dump folder
    (then --module NAME and --stage choose; the file taken is named on stderr).  A hlo_interp.dumps.Loaded;
    raises HloError (a clear list of the choices when a folder's choice is ambiguous)."""
    from .dumps import load_path
    return load_path(path, module, stage, announce=lambda msg: sys.stderr.write(f"{prog}: {msg}\n"))


def module_options(f):
    """--module / --stage: choose within a dump folder (shared by the commands that read one module)."""
    f = click.option("--stage", metavar="STAGE", default=None,
                     help="With a dump folder: before_optimizations, after_optimizations (default when "
                          "present), cpu_after_optimizations, a pass number or name, or snapshot.")(f)
    return click.option("--module", "module_name", metavar="NAME", default=None,
                        help="With a dump folder: the module to read (name like jit_f, or id like 6); "
                             "default: the folder's only module that is not one of JAX's helpers.")(f)


# --------------------------------------------------------------------------------------------------
# Commands

# Run as the `hlo` process (not called from Python): a command whose data lives to its end (check's
# last module, info's report) may end the process without the interpreter's teardown (files.end_process).
_AS_PROCESS = False
_QUICK_EXIT = False
_KEEP: list = []  # what a command keeps alive to the end of the process, not to free it one object at a time


def quick_exit_at_end(keep=None) -> None:
    """For a command run as the `hlo` process: end the process, once the command is done, with
    files.end_process (its data not freed object by object, no interpreter teardown); `keep`, if given,
    is held to the end instead of what an earlier call kept (which is freed now)."""
    global _QUICK_EXIT
    if _AS_PROCESS:
        _QUICK_EXIT = True
        if keep is not None:
            _KEEP[:] = [keep]


class _LazyGroup(PipeSafe, click.Group):
    """Subcommands that live in their own modules are imported only when used (start-up time).  Run
    as the `hlo` process, a command may end it quickly (quick_exit_at_end)."""

    def main(self, args=None, prog_name=None, complete_var=None, standalone_mode=True, **extra):
        if args is not None or not standalone_mode:  # called from Python (click's CliRunner, a caller)
            return super().main(args, prog_name, complete_var, standalone_mode, **extra)
        global _AS_PROCESS
        _AS_PROCESS = True
        try:
            super().main(None, prog_name, complete_var, standalone_mode, **extra)
            code = 0
        except SystemExit as e:
            code = e.code
        if _QUICK_EXIT:
            from .files import end_process
            end_process(code)
        raise SystemExit(code)

    LAZY = {
        "run": "hlo_interp.cli_run:main",
        "diff": "hlo_interp.cli_diff:command",
        "info": "hlo_interp.cli_info:command",
        "graph": "hlo_interp.cli_graph:command",
        "bisect": "hlo_interp.cli_bisect:command",
    }

    def list_commands(self, ctx):
        return sorted(set(super().list_commands(ctx)) | set(self.LAZY))

    def get_command(self, ctx, name):
        if name in self.LAZY and name not in self.commands:
            import importlib
            module, attr = self.LAZY[name].split(":")
            self.add_command(getattr(importlib.import_module(module), attr), name=name)
        return super().get_command(ctx, name)


@click.group(cls=_LazyGroup, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, prog_name="hlo")
def main() -> None:
    """Tools for XLA's HLO text: format, check, run, diff, inspect and draw it.

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
@click.option("-i", "--in-place", is_flag=True,
              help="Rewrite the files (atomically) instead of printing; 'reformatted FILE' on stderr for each.")
@click.option("--diff", "show_diff", is_flag=True,
              help="Write nothing; print a unified diff of each file against its formatted text.")
@click.option("-v", "--verbose", is_flag=True, help="List the files of a folder that were skipped (not HLO text).")
@click.option("--color", type=click.Choice(["auto", "always", "never"]), default="auto", show_default=True,
              help="Syntax colors when printing to a terminal.")
def fmt_cmd(files, strip_metadata, strip_backend_config, canonical_names, check_only, in_place, color,
            verbose=False, show_diff=False):
    """Pretty-print HLO text canonically, in XLA's own style.

    Names get their % prefix, computations their signatures, shapes their layouts and attributes
    XLA's order.  Formatting is idempotent, and the result parses to the same module.

    \b
    Examples:
      hlo fmt module.hlo                  print the formatted module
      hlo fmt --strip-metadata - < dump.txt
      hlo fmt --check dump_dir/           CI: fail if any HLO text of an XLA dump is not formatted
      hlo fmt module.hlo.pb               the text of an XLA proto (or snapshot) dump
      hlo fmt -i module.hlo               rewrite in place (stderr: reformatted module.hlo)
      hlo fmt --diff a.hlo b.hlo          show what -i would change

    Exit status: 0 ok (also after rewriting, and with --diff), 1 with --check when a file is not
    formatted, 2 usage or input error.
    """
    files = _fmt_inputs(files, check_only or in_place or show_diff, verbose)
    if len(files) > 1 and not (check_only or in_place or show_diff):
        raise click.UsageError("several files need --check, --in-place or --diff")
    if in_place and "-" in files:
        raise click.UsageError("--in-place cannot rewrite standard input")
    if in_place and show_diff:
        raise click.UsageError("give --in-place or --diff, not both")
    from .syntax.printer import PrintOptions, to_text
    options = PrintOptions(strip_metadata, strip_backend_config, canonical_names)
    unformatted = []
    rewritten = unchanged = 0
    status = EXIT_OK
    for path in files:
        try:
            if path.endswith(".pb") and path != "-":  # a binary dump: print the text XLA would print
                if check_only or in_place or show_diff:
                    raise HloError("a binary proto cannot be formatted in place or checked; print its text "
                                   "with `hlo fmt FILE.pb`", filename=path)
                from .dumps import classify, load
                text, name = "", path
                out = to_text(load(classify(path)).module, options)
            else:
                from .frontend import parse_all_text
                from .syntax.parser import SPLIT_MARKER
                text, name = _read(path)
                fresh = PrintOptions(strip_metadata, strip_backend_config, canonical_names, reuse_source=True)
                modules = parse_all_text(text, name, canonical_lines=True)  # (lines copied when canonical)
                out = (SPLIT_MARKER + "\n\n").join(to_text(m, fresh) for m in modules)
        except HloError as e:
            report_error(e, color)
            status = EXIT_ERROR
            continue
        if show_diff or check_only:
            if out != text:
                unformatted.append(name)
                if check_only:
                    click.echo(f"{name}: not formatted", err=True)
                if show_diff:
                    _print_unified_diff(text, out, name, color)
        elif in_place:
            if out != text:
                try:
                    from .files import write_atomic
                    write_atomic(path, out)
                except HloError as e:
                    report_error(e, color)
                    status = EXIT_ERROR
                    continue
                rewritten += 1
                click.echo(f"reformatted {name}", err=True)
            else:
                unchanged += 1
        else:
            sys.stdout.write(highlight(out) if use_color(color=color) else out)
    if in_place and rewritten + unchanged:
        click.echo(f"{_plural(rewritten, 'file')} reformatted, {unchanged} left unchanged", err=True)
    if status == EXIT_OK and unformatted and check_only:
        status = EXIT_FINDINGS
    sys.exit(status)


def _fmt_inputs(paths, several_ok: bool, verbose: bool) -> list:
    """fmt's files: a folder stands for its HLO texts (hlo_interp.dumps; protos, snapshots and reports
    are skipped, listed with -v); a folder without any is a usage error (exit 2)."""
    out = []
    for p in paths:
        if p == "-" or not os.path.isdir(p):
            if p != "-" and several_ok and not p.endswith(".pb"):
                from .dumps import REPORT, classify
                f = classify(p)
                if f.kind == REPORT and f.module_name is not None:  # dumps/*.txt: XLA's reports
                    if verbose:
                        click.echo(f"skipped {p} (not HLO: {f.what})", err=True)
                    continue
            out.append(p)
            continue
        from .dumps import HLO_TEXT, no_module_error, scan
        dump = scan(p)
        texts = [f for f in dump.module_files() if f.kind == HLO_TEXT]
        if not texts:
            if not dump.module_files():
                raise click.UsageError(f"{p}: {no_module_error(dump, p).message}")
            raise click.UsageError(f"{p}: no HLO text in this folder, only binary protos (print one with "
                                   f"`hlo fmt FILE.pb`)")
        out += [str(f.path) for f in texts]
        others = len(dump.module_files()) - len(texts) + len(dump.skipped)
        click.echo(f"hlo fmt: {p}: {len(texts)} HLO text(s)"
                   + (f", {others} other file(s) skipped (protos, snapshots, reports; -v lists them)"
                      if others else ""), err=True)
        if verbose:
            for f in [f for f in dump.module_files() if f.kind != HLO_TEXT] + dump.skipped:
                click.echo(f"skipped {f.path} (not HLO text: {f.kind if f.kind != 'report' else f.what})",
                           err=True)
    return out


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


def _print_unified_diff(text: str, out: str, name: str, color: str) -> None:
    """A unified diff of a file against its formatted text, on stdout (colored on a terminal)."""
    import difflib
    styled = use_color(color=color)
    for line in difflib.unified_diff(text.splitlines(keepends=True), out.splitlines(keepends=True),
                                     fromfile=f"{name}\t(original)", tofile=f"{name}\t(formatted)"):
        if not line.endswith("\n"):
            line += "\n\\ No newline at end of file\n"
        if styled:
            style = ("bold" if line.startswith(("+++", "---")) else "cyan" if line.startswith("@@")
                     else "green" if line.startswith("+") else "bold red" if line.startswith("-") else None)
            if style:
                line = ansi(line.rstrip("\n"), style) + "\n"
        sys.stdout.write(line)


@main.command("check")
@click.argument("paths", nargs=-1, required=True, type=click.Path(allow_dash=True))
@click.option("--format", "fmt", type=click.Choice(["text", "json", "github"]), default="text",
              show_default=True,
              help="Located messages with the source line; JSON for tools; or GitHub workflow annotations.")
@click.option("--syntax-only", is_flag=True, help="Only parse: report syntax errors, run no module checks.")
@click.option("-j", "--jobs", type=int, default=1, show_default=True, metavar="N",
              help="Check files in N processes (0: one per CPU).")
@click.option("--shard", metavar="K/N",
              help="Check only part K of N (K = 1..N): files K, K+N, K+2N, ... of the sorted file "
                   "list, so that N CI jobs split a large dump set deterministically.")
@click.option("--ignore", multiple=True, metavar="CODE[,CODE...]",
              help="Drop findings with these codes or names (E101, shape-mismatch); repeatable.")
@click.option("--strict", is_flag=True, help="Warnings fail too (exit 1).")
@click.option("--no-notes", is_flag=True, help="Do not show notes (elided constants, implicit ROOT).")
@click.option("-v", "--verbose", is_flag=True, help="List the files of a folder that were skipped (not HLO).")
@click.option("--cache/--no-cache", "cache", default=None,
              help="Keep the findings of a file in the user's cache folder and read them back when the same "
                   "text is checked again (default: for files of 256 KiB or more; HLO_INTERP_CACHE=0/1 "
                   "turns it off/on for every file).")
@click.option("--color", type=click.Choice(["auto", "always", "never"]), default="auto", show_default=True)
def check_cmd(paths, fmt, syntax_only, jobs, shard, ignore, strict, no_notes, color, verbose, cache):
    """Check HLO files the way XLA's verifier would: syntax, opcodes, operands, attributes, shapes,
    parameters, called computations, layouts, replica groups, the module header, async pairs.

    PATHS are files, XLA dump folders (every module in them, recursively: HLO texts, .pb protos,
    snapshots, per-pass texts; reports like buffer-assignment, LLVM IR and MLIR are skipped, listed
    with -v; a folder with no module at all is an error), glob patterns ('dumps/**/*.txt') or '-'
    for standard input.  Every finding has a code (docs/check-codes.md) usable with --ignore.

    \b
    Exit status: 0 no errors, 1 errors (or warnings with --strict), 2 usage error, unreadable input,
    no module found, or an internal error (E000).

    \b
    Examples:
      hlo check dump_dir/                   every module XLA dumped
      hlo check -j 0 --format github dumps/ CI annotations, all cores
      hlo check --shard 2/4 dumps/          files 2, 6, 10, ... of the sorted list
      hlo check --ignore N001,W201 m.hlo
    """
    ignored = [c.strip() for item in ignore for c in item.split(",") if c.strip()]
    from .shapes.verify import CODES
    names = {v[0] for v in CODES.values()}
    for c in ignored:
        if c.upper() not in CODES and c.lower() not in names:
            raise click.UsageError(f"--ignore: unknown code '{c}' (see docs/check-codes.md)")
    shard_k = shard_n = None
    if shard is not None:
        m = re.fullmatch(r"\s*(\d+)\s*/\s*(\d+)\s*", shard)
        if not m or not (1 <= int(m.group(1)) <= int(m.group(2))):
            raise click.UsageError(f"--shard must be K/N with 1 <= K <= N, got '{shard}'")
        shard_k, shard_n = int(m.group(1)), int(m.group(2))
    if jobs < 0:
        raise click.UsageError("-j must be 0 (one per CPU) or more")
    if paths.count("-") > 1:
        raise click.UsageError("standard input ('-') can be read only once")

    inputs, problems = expand_paths(paths)
    found_any = bool(inputs)
    if shard_n is not None:
        inputs = [x for i, x in enumerate(inputs) if i % shard_n == shard_k - 1]
    options = {"syntax_only": syntax_only, "ignore": tuple(ignored), "notes": not no_notes, "cache": cache}
    stdin_text = None
    if any(p == "-" for p, _ in inputs):
        from .diagnostics import MAX_MODULE_BYTES, TooLarge, read_limited
        try:
            stdin_text = bytes(read_limited(sys.stdin.buffer, MAX_MODULE_BYTES, text=True))
        except TooLarge as e:
            problems.append({"file": "<stdin>", "error": str(e), "findings": []})
            inputs = [x for x in inputs if x[0] != "-"]

    results = run_checks(inputs, options, jobs, stdin_text)
    results = problems + results
    if verbose and fmt == "text":
        for r in results:
            if r.get("skipped"):
                click.echo(f"skipped {r['file']} (not HLO: {r.get('what') or 'not an HLO module'})", err=True)
    # No module at all (an empty folder, a dump of protos only) is an input error, not a pass; an
    # empty shard of a non-empty set is fine (more CI jobs than files).
    none_found = not found_any if shard_n is not None else not any(
        not r.get("error") and not r.get("skipped") for r in results)
    _present_check(results, fmt, color, strict, none_found)


def _plain_path(p: str) -> bool:
    """A path that pathlib would not rewrite (no empty or '.' components)."""
    parts = p.split("/")
    return bool(p) and all(x not in ("", ".") for x in (parts[1:] if p.startswith("/") else parts))


def expand_paths(paths) -> tuple[list[tuple[str, bool]], list[dict]]:
    """[(path, from_directory)] sorted and without duplicates, and the paths that match nothing.
    Folders are read as XLA dump folders (hlo_interp.dumps): every file, those holding no module
    (reports, LLVM IR, MLIR, ...) to be skipped; a folder without any module is a problem."""
    found: dict[str, bool] = {}
    problems = []
    for p in paths:
        if p == "-":
            found.setdefault("-", False)
            continue
        if not os.path.isdir(p) and _plain_path(p) and (os.path.exists(p) or not any(ch in p for ch in "*?[")):
            found[p] = False  # the common case, without pathlib (start-up time): str(Path(p)) == p
            continue
        from pathlib import Path
        path = Path(p)
        if path.is_dir():
            from .dumps import no_module_error, scan
            dump = scan(path)
            files = dump.module_files()
            if not files:
                problems.append({"file": p, "error": no_module_error(dump, p).message, "findings": []})
            for f in files + dump.skipped:  # the skipped ones too: they are listed (-v) and sharded
                found.setdefault(str(f.path), True)
        elif path.exists() or not any(ch in p for ch in "*?["):
            found[str(path)] = False
        else:
            import glob
            matches = sorted(glob.glob(p, recursive=True))
            files = [m for m in matches if Path(m).is_file()]
            if not files:
                problems.append({"file": p, "error": "no file matches this pattern", "findings": []})
            for m in files:
                found.setdefault(m, True)  # like a folder's files: XLA's reports are skipped
    order = sorted((k for k in found if k != "-"))
    out = [(k, found[k]) for k in order]
    if "-" in found:
        out.append(("-", False))
    return out, problems




def _looks_like_hlo(text: str) -> bool:
    head = text[:20000]
    return "HloModule" in head or bool(re.search(r"^\s*ENTRY\b", head, re.M))


def check_text(text: str, name: str, syntax_only: bool = False, ignore=(), notes: bool = True) -> list:
    """Findings (verify.Finding) for one file's text; a syntax error is one E001 finding."""
    from .frontend import parse_all_text
    from .shapes.verify import Finding, check
    try:
        modules = parse_all_text(text, name)
    except HloError as e:
        f = Finding.from_error(e)
        skip = {c.upper() for c in ignore} | {c.lower() for c in ignore}
        return [] if ("E001" in skip or "syntax" in skip) else [f]
    if syntax_only:
        return []
    out = []
    for m in modules:
        out.extend(check(m, ignore=ignore, notes=notes, filename=name))
    quick_exit_at_end(keep=modules)  # (run as a process: the last file's modules are never freed)
    return out


def _check_one(job) -> dict:
    """Worker: read and check one file; never raises (an internal error becomes a finding)."""
    path, from_dir, options, data = job
    name = "<stdin>" if path == "-" else path
    try:
        if data is None:
            from .diagnostics import MAX_MODULE_BYTES, TooLarge, read_limited
            try:
                with open(path, "rb") as f:
                    data = read_limited(f, MAX_MODULE_BYTES, text=not path.endswith(".pb"))
            except OSError as e:
                return {"file": name, "error": f"cannot read: {e.strerror}", "findings": []}
            except TooLarge as e:
                if from_dir:
                    return {"file": name, "skipped": True, "findings": [], "what": str(e)}
                return {"file": name, "error": str(e), "findings": []}
        if from_dir:
            from .dumps import classify
            f = classify(path)
            if not f.is_module:
                return {"file": name, "skipped": True, "findings": [],
                        "what": f.what if f.kind == "report" else f.kind}
        if path.endswith(".pb"):
            return _check_proto(path, options)
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as e:
            if from_dir:
                return {"file": name, "skipped": True, "findings": []}
            return {"file": name, "error": f"not a text file (invalid UTF-8 at byte {e.start})", "findings": []}
        if from_dir and path.endswith(".txt") and not _looks_like_hlo(text):
            return {"file": name, "skipped": True, "findings": []}
        from .frontend import looks_like_mlir, mlir_error
        if looks_like_mlir(text) and not _looks_like_hlo(text):
            return {"file": name, "error": mlir_error(text, name).message, "findings": []}
        return {"file": name, "findings": _findings(path, data, text, name, options)}
    except Exception as e:  # noqa: BLE001 - a bug of ours must not lose the other files' results
        from .shapes.verify import Finding
        return {"file": name, "findings": [Finding("E000", "error", f"internal error while checking: "
                                                                 f"{type(e).__name__}: {e}", name)]}


def _findings(path: str, data, text: str, name: str, options: dict) -> list:
    """check_text's findings for a file's text, through the module cache when the file goes through it
    (hlo_interp.cache: by size, --cache/--no-cache, HLO_INTERP_CACHE): the findings of the text with
    nothing ignored are kept under the key of its bytes and name, and read back by the next check of
    the same text; a module hlo-run left there spares the parsing."""
    choice = options.get("cache")
    rest = {k: v for k, v in options.items() if k != "cache"}
    found = None
    if choice is not False and not rest.get("syntax_only") and (
            choice or len(data) >= _CACHE_MIN_BYTES or os.environ.get(_CACHE_ENV, "").strip() == "1"):
        from .cache import for_data  # (not imported for a small file: start-up time)
        found = for_data(path, data, choice)
    if found is None:
        return check_text(text, name, **rest)
    from .shapes.verify import Finding, filter_findings
    cache, key = found
    findings = _findings_from(cache.get_record(key, "check"), Finding)
    if findings is None:
        from .syntax.parser import SPLIT_MARKER
        if SPLIT_MARKER not in text:  # one module: hlo-run's entry of it, if there is one
            hit = cache.get(key)
            if hit is not None:
                from .shapes.verify import check
                findings = check(hit[0], filename=name)
                quick_exit_at_end(keep=hit)
        if findings is None:
            findings = check_text(text, name)
        cache.put_record(key, "check", [tuple(getattr(f, k) for k in _FINDING_FIELDS) for f in findings])
    return filter_findings(findings, rest.get("ignore", ()), rest.get("notes", True))


_CACHE_MIN_BYTES, _CACHE_ENV = 256 << 10, "HLO_INTERP_CACHE"  # cache.MIN_BYTES, cache.ENV (tests check)
_FINDING_FIELDS = ("code", "severity", "message", "filename", "line", "column", "computation", "instruction",
                   "source_line")


def _findings_from(rows, finding) -> Optional[list]:
    """Findings from the rows a cache entry holds; None when they are not rows of findings."""
    if not isinstance(rows, list):
        return None
    out = []
    for r in rows:
        if not (isinstance(r, tuple) and len(r) == len(_FINDING_FIELDS) and all(
                isinstance(x, str) for x in r[:3]) and all(x is None or isinstance(x, (str, int)) for x in r[3:])):
            return None
        out.append(finding(*r))
    return out


def _check_proto(path: str, options: dict) -> dict:
    """An HloModuleProto / HloProto / HloSnapshot file: the module it holds, checked like text."""
    from .dumps import classify, load
    from .shapes.verify import check
    try:
        loaded = load(classify(path))
    except HloError as e:
        return {"file": path, "error": e.message, "findings": []}
    if options.get("syntax_only"):
        return {"file": path, "findings": []}
    return {"file": path, "findings": check(loaded.module, ignore=options.get("ignore", ()),
                                            notes=options.get("notes", True), filename=path)}


def run_checks(inputs, options: dict, jobs: int = 1, stdin_text: Optional[bytes] = None) -> list[dict]:
    """Check files in order, in `jobs` processes (0 = one per CPU)."""
    work = [(p, d, options, stdin_text if p == "-" else None) for p, d in inputs]
    if jobs == 0:
        jobs = os.cpu_count() or 1
    jobs = min(jobs, len(work))
    if jobs <= 1:
        return [_check_one(w) for w in work]
    from concurrent.futures import ProcessPoolExecutor
    import multiprocessing
    # Warm up here (grammar, opcode table, shape rules), then fork: the workers start ready to parse.
    check_text("HloModule warm\nENTRY e {\n  ROOT p = f32[] parameter(0)\n}\n", "<warm-up>")
    methods = multiprocessing.get_all_start_methods()
    ctx = multiprocessing.get_context("fork" if "fork" in methods else methods[0])
    # Largest files first, in small chunks, keep the processes evenly loaded (dump files range from a
    # few hundred bytes to megabytes); the results come back in the input order.
    def size(w):
        try:
            return -os.path.getsize(w[0]) if w[3] is None else -len(w[3])
        except OSError:
            return 0
    order = sorted(range(len(work)), key=lambda i: size(work[i]))
    chunk = max(1, min(8, len(work) // (jobs * 8)))
    results: list = [None] * len(work)
    from concurrent.futures.process import BrokenProcessPool
    batches = [order[k:k + chunk] for k in range(0, len(order), chunk)]
    lost: list[int] = []
    with ProcessPoolExecutor(max_workers=jobs, mp_context=ctx) as pool:
        futures = [(b, pool.submit(_check_batch, [work[i] for i in b])) for b in batches]
        for b, fut in futures:
            try:
                for i, r in zip(b, fut.result()):
                    results[i] = r
            except BrokenProcessPool:
                lost.extend(b)
    if lost:
        # A worker died (the OOM killer, a signal) and the pool with it: every file it had not
        # finished is checked again, each in a process of its own, so that only the file that kills
        # its process is lost, reported as an error; the others keep their findings.
        from concurrent.futures import ThreadPoolExecutor

        def alone(i):
            with ProcessPoolExecutor(max_workers=1, mp_context=ctx) as one:
                try:
                    return i, one.submit(_check_one, work[i]).result()
                except BrokenProcessPool:
                    name = "<stdin>" if work[i][0] == "-" else work[i][0]
                    return i, {"file": name, "findings": [], "error": "the checking process died (killed by "
                                                                      "a signal: out of memory?)"}
        with ThreadPoolExecutor(max_workers=jobs) as threads:
            for i, r in threads.map(alone, sorted(lost)):
                results[i] = r
    return results


def _check_batch(jobs: list) -> list[dict]:
    return [_check_one(j) for j in jobs]


def _gh_escape(s: str, prop: bool = False) -> str:
    s = s.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    if prop:
        s = s.replace(":", "%3A").replace(",", "%2C")
    return s


def _present_check(results: list[dict], fmt: str, color: str, strict: bool, none_found: bool = False) -> None:
    counts = {"error": 0, "warning": 0, "note": 0}
    unreadable = [r for r in results if r.get("error")]
    skipped = sum(1 for r in results if r.get("skipped"))
    checked = len(results) - len(unreadable) - skipped
    bad_files = 0
    for r in results:
        sev = [f.severity for f in r["findings"]]
        for s in sev:
            counts[s] = counts.get(s, 0) + 1
        if "error" in sev or (strict and "warning" in sev):
            bad_files += 1
    failing = counts["error"] + (counts["warning"] if strict else 0)
    # An internal error (E000) says the tool broke, not the dump: exit 2 like an unreadable file, so
    # that CI tells the two apart.
    internal = any(f.code == "E000" for r in results for f in r["findings"])
    status = EXIT_ERROR if unreadable or internal or none_found else (EXIT_FINDINGS if failing else EXIT_OK)
    summary = (f"{checked} file(s) checked: {counts['error']} error(s), {counts['warning']} warning(s), "
               f"{counts['note']} note(s)" + (f"; {bad_files} file(s) failing" if bad_files else "")
               + (f"; {len(unreadable)} unreadable" if unreadable else "")
               + (f"; {skipped} skipped (not HLO)" if skipped else ""))
    if none_found and not unreadable:
        summary = "error: no HLO module found (directories are searched for *.hlo and *.txt files); " + summary
    if fmt == "json":
        data = {"files": checked + len(unreadable), "summary": {
                    "checked": checked, "errors": counts["error"], "warnings": counts["warning"],
                    "notes": counts["note"], "unreadable": len(unreadable), "skipped": skipped,
                    "exit_status": status},
                "unreadable": [{"file": r["file"], "message": r["error"]} for r in unreadable],
                "checked": [r["file"] for r in results if not r.get("error") and not r.get("skipped")],
                "skipped": [r["file"] for r in results if r.get("skipped")],
                "findings": [f.to_dict() for r in results for f in r["findings"]]}
        import json
        click.echo(json.dumps(data, indent=2))
    elif fmt == "github":
        kinds = {"error": "error", "warning": "warning", "note": "notice"}
        for r in unreadable:
            click.echo(f"::error file={_gh_escape(r['file'], True)},title=hlo check::{_gh_escape(r['error'])}")
        for r in results:
            for f in r["findings"]:
                props = [f"file={_gh_escape(f.filename or r['file'], True)}"]
                if f.line is not None:
                    props.append(f"line={f.line}")
                    if f.column is not None:
                        props.append(f"col={f.column}")
                props.append(f"title={_gh_escape(f'{f.code} {f.name}', True)}")
                click.echo(f"::{kinds[f.severity]} {','.join(props)}::{_gh_escape(f.message)}")
        click.echo(summary, err=True)
    else:
        styled = use_color(color=color)
        for r in unreadable:
            report_error(HloError(r["error"], filename=r["file"]), color)
        for r in results:
            for f in r["findings"]:
                text = f.render()
                if styled:
                    i = text.split("\n")[0].find(f": {f.severity}[")
                    style = {"error": "bold red", "warning": "bold yellow", "note": "bold cyan"}[f.severity]
                    text = _styled_message(text, i + 2 if i >= 0 else -1, len(f.severity) + len(f.code) + 2,
                                           style)
                sys.stdout.write(text + "\n")
        click.echo(summary, err=True)
    sys.exit(status)


if __name__ == "__main__":  # pragma: no cover
    main()
