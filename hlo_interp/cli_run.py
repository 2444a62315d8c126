"""`hlo-run`: execute an HLO module on NumPy inputs, print, save and compare its results.

Argument handling and presentation only; the work is `hlo_interp.evaluator` (and `hlo_interp.debug` for
--trace, --dump-intermediates, --profile and the progress line).  Exit status: 0 ok, 1 the results differ
from --compare or --trace found a NaN/Inf, 2 usage or input error (including a module that cannot run),
130 interrupted.  NumPy and rich are imported only when needed, so `--help` and errors stay quick.
"""
from __future__ import annotations

import os
import re
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Optional

import click

from .version import __version__
from .diagnostics import HloError
from .cli import PipeSafe, exit_broken_pipe, make_console, module_options, report_error
from .files import InputError, end_process, load_arrays, save_results, write_atomic
from .records import record

EXIT_OK, EXIT_MISMATCH, EXIT_ERROR, EXIT_INTERRUPTED = 0, 1, 2, 130


# --------------------------------------------------------------------------------------------------
# Inputs for the entry's parameters

def _leaf_paths(shape, prefix: str) -> list:
    from . import ir
    if isinstance(shape, ir.TupleShape):
        out = []
        for k, s in enumerate(shape.elements):
            out.extend(_leaf_paths(s, f"{prefix}.{k}"))
        return out
    return [prefix]


def _assemble(shape, get, prefix: str):
    from . import ir
    from .ops.registry import TOKEN
    if isinstance(shape, ir.TupleShape):
        return tuple(_assemble(s, get, f"{prefix}.{k}") for k, s in enumerate(shape.elements))
    if isinstance(shape, ir.ArrayShape) and shape.element_type.dtype is None:
        return TOKEN
    return get(prefix)


def _leaf_bytes(params: list) -> dict:
    """{npz key: bytes of that parameter leaf} for every key gather_inputs accepts."""
    from . import ir
    from .evaluator import shape_bytes
    sizes = {}

    def walk(shape, suffix, k, p):
        if isinstance(shape, ir.TupleShape):
            for j, s in enumerate(shape.elements):
                walk(s, f"{suffix}.{j}", k, p)
            return
        for key in (f"arg{k}{suffix}", f"{p.name}{suffix}", f"arr_{k}{suffix}"):
            sizes[key] = max(sizes.get(key, 0), shape_bytes(shape))
    for k, p in enumerate(params):
        walk(p.shape, "", k, p)
    return sizes


def _random_args(params: list, rng, max_bytes: Optional[int]) -> list:
    """--random-inputs: one value per parameter, each refused up front past max_bytes."""
    from .ops.random_values import random_value
    out = []
    for p in params:
        try:
            out.append(random_value(p.shape, rng, max_bytes))
        except HloError as e:
            raise InputError(f"--random-inputs: parameter '{p.name}': {e.message}") from None
    return out


def gather_inputs(files: list[str], params: list, max_bytes: Optional[int] = None, copies: int = 1) -> list:
    """Arguments for the entry's parameters from .npy files (one per parameter, in order) or one .npz
    (keys arg0, arg1, ... or the parameter names; a tuple parameter's leaves as arg0.0, arg0.1, ...).
    Nothing larger than a parameter needs (times `copies`: a leading device axis) or than max_bytes is
    read or inflated."""
    from . import ir
    from .ops.registry import TOKEN
    data_params = [p for p in params
                   if not (isinstance(p.shape, ir.ArrayShape) and p.shape.element_type.dtype is None)]
    from .evaluator import shape_bytes
    sizes = {k: v * copies for k, v in _leaf_bytes(params).items()}
    headers = 4096 * (1 + len(sizes))
    total = sum(shape_bytes(p.shape) for p in params) * copies + headers
    first = load_arrays(files[0], max_bytes, sizes.get, total) if len(files) == 1 else None
    if isinstance(first, dict):
        arrays = first
        used = set()
        args = []
        for k, p in enumerate(params):
            def get(path, k=k, p=p):
                rest = path[len(f"arg{k}"):]
                alt = p.name + rest
                tree = pytree_path(p)  # JAX's name for the argument: p['emb'] (from the metadata)
                keys = [path, alt] + ([tree + rest] if tree else []) + [f"arr_{k}" + rest]  # arr_k: np.savez
                for key in keys:
                    if key in arrays:
                        used.add(key)
                        return arrays[key]
                forms = " or ".join(repr(x) for x in keys[:-1])
                have = ", ".join(sorted(arrays)) or "none"
                raise InputError(f"{files[0]}: no array for parameter {k} '{p.name}': give {forms}; "
                                 f"the file has: {have}")
            args.append(_assemble(p.shape, get, f"arg{k}"))
        unused = sorted(set(arrays) - used)
        if unused:
            raise InputError(f"{files[0]}: arrays {', '.join(unused)} match no parameter (expected keys "
                             f"arg0..arg{len(params) - 1}, the parameter names or JAX's argument paths "
                             f"from the parameters' metadata, like p['w'])")
        return args
    if any(f.lower().endswith(".npz") for f in files):
        raise InputError("give either one .npz file or one .npy file per parameter")
    if len(files) != len(data_params):
        names = ", ".join(p.name for p in data_params) or "none"
        raise InputError(f"the computation has {len(data_params)} parameter(s) ({names}); "
                         f"got {len(files)} .npy file(s)")
    args = []
    it = iter(files)
    for p in params:
        if p not in data_params:
            args.append(TOKEN)
            continue
        f = next(it)
        if isinstance(p.shape, ir.TupleShape):
            raise InputError(f"parameter '{p.name}' is a tuple: give its leaves in one .npz "
                             f"(keys {', '.join(_leaf_paths(p.shape, 'arg' + str(params.index(p))))})")
        a = first if first is not None else load_arrays(f, max_bytes, None, shape_bytes(p.shape) * copies + 4096)
        if isinstance(a, dict):
            raise InputError(f"{f}: expected a .npy array")
        args.append(a)
    return args


def pytree_path(param) -> Optional[str]:
    """JAX's name of the argument a parameter holds, from its metadata (op_name="p['emb']" or "x"):
    a key an inputs .npz may use.  None when the metadata names none."""
    md = param.attrs.get("metadata") if hasattr(param, "attrs") else None
    name = md.get("op_name") if isinstance(md, dict) else None
    if not name or "/" in name or name.startswith(("jit(", "pjit(")):
        return None
    return name


# --------------------------------------------------------------------------------------------------
# Presentation

def verify_for_run(mod) -> None:
    """Refuse to run a module the verifier rejects (wrong arity, operand shapes, attributes: what XLA
    would never compile), as a located error: the first error found, and how many more there are."""
    from .shapes.verify import check
    errors = [f for f in check(mod, notes=False) if f.severity == "error" and f.code != "E000"]
    if errors:
        f = errors[0]
        more = f" ({len(errors) - 1} more: see `hlo check`)" if len(errors) > 1 else ""
        raise HloError(f"{f.message} ({f.code} {f.name}){more}", filename=f.filename or mod.filename or None, line=f.line,
                       column=f.column, source_line=f.source_line,
                       notes=["hlo-run verifies a module before running it; --no-verify runs it anyway"])


def _fail(msg: str) -> None:
    sys.stderr.write(f"hlo-run: error: {msg}\n")


def _fmt(x) -> str:
    return f"{x:.6g}" if isinstance(x, float) else str(x)


def leaf_stats(a) -> str:
    """One line: min/max/mean of the finite values, NaN and Inf counts (pred: the number of trues)."""
    import numpy as np
    if a.size == 0:
        return "empty"
    kind = a.dtype.kind
    if a.dtype == np.bool_:
        return f"true {int(a.sum())} of {a.size}"
    if kind in "iu" or (kind == "V" and "int" in a.dtype.name):
        w = a.astype(np.int64) if not (kind == "u" and a.dtype.itemsize == 8) else a
        return f"min {int(w.min())}  max {int(w.max())}  mean {float(w.mean(dtype=np.float64)):.6g}"
    if kind == "c":
        re_, im = a.real.astype(np.float64), a.imag.astype(np.float64)
        bad = np.isnan(re_) | np.isnan(im)
        inf = (np.isinf(re_) | np.isinf(im)) & ~bad
        ok = ~(bad | inf)
        mag = np.abs(re_[ok] + 1j * im[ok])
        s = (f"max|x| {_fmt(float(mag.max()))}  mean {complex(np.mean(re_[ok] + 1j * im[ok])):.6g}"
             if ok.any() else "no finite values")
        return f"{s}  NaN {int(bad.sum())}  Inf {int(inf.sum())}"
    f = a.astype(np.float64)
    nan = np.isnan(f)
    inf = np.isinf(f)
    fin = f[~(nan | inf)]
    s = (f"min {_fmt(float(fin.min()))}  max {_fmt(float(fin.max()))}  mean {_fmt(float(fin.mean()))}"
         if fin.size else "no finite values")
    return f"{s}  NaN {int(nan.sum())}  Inf {int(inf.sum())}"


def preview(a, full: bool = False) -> str:
    import numpy as np
    if full:
        return np.array2string(a, threshold=sys.maxsize, max_line_width=120)
    edge = 3 if a.ndim <= 2 else 2 if a.ndim == 3 else 1
    text = np.array2string(a, threshold=64, edgeitems=edge, max_line_width=120, precision=6)
    lines = [ln for ln in text.split("\n") if ln.strip()]  # numpy separates blocks with blank lines
    if len(lines) > _PREVIEW_LINES:
        half = _PREVIEW_LINES // 2
        lines = lines[:half] + [" ..."] + lines[-half:]
    return "\n".join(lines)


_PREVIEW_LINES = 16


def print_results(leaves: list, mode: str, color: str) -> None:
    if mode == "none":
        return
    from rich.markup import escape

    from .evaluator import describe_value
    console = make_console(color=color)
    for k, a in enumerate(leaves):
        console.print(f"[bold]out{k}[/bold] [cyan]{escape(describe_value(a))}[/cyan]  {escape(leaf_stats(a))}")
        text = preview(a, full=(mode == "full"))
        console.print("  " + escape(text).replace("\n", "\n  "))


# --------------------------------------------------------------------------------------------------
# --compare

def compare_results(leaves: list, expected_path, rtol, atol, color: str, module=None) -> bool:
    """Compare the result leaves with EXPECTED (a file, or the leaves themselves: a snapshot's recorded
    result) by hlo_interp.compare's rule (the module, when given, says which precision each leaf is
    computed in and its longest reduction); print one line per leaf."""
    from .compare import compare_leaf, leaf_numerics
    numerics = leaf_numerics(module) if module is not None else []
    if not isinstance(expected_path, str):  # the leaves themselves (a snapshot's recorded result)
        expected_path, loaded = "the recorded result", {f"out{k}": a for k, a in enumerate(expected_path)}
    else:
        loaded = load_arrays(expected_path)
    if isinstance(loaded, dict):
        expected = []
        prefix = "arr_" if "out0" not in loaded and "arr_0" in loaded else "out"  # arr_k: np.savez(f, a, b)
        for k in range(len(loaded)):
            if f"{prefix}{k}" not in loaded:
                raise InputError(f"{expected_path}: expected keys out0..out{len(loaded) - 1}; "
                                 f"found {', '.join(sorted(loaded))}")
            expected.append(loaded[f"{prefix}{k}"])
    else:
        expected = [loaded]
    console = make_console(color=color)
    ok_all = True
    if len(expected) != len(leaves):
        console.print(f"[bold red]MISMATCH[/bold red] the result has {len(leaves)} leaves, "
                      f"{expected_path} has {len(expected)}")
        ok_all = False
    from rich.markup import escape

    from .evaluator import describe_value
    for k, (a, e) in enumerate(zip(leaves, expected)):
        res = compare_leaf(a, e, rtol, atol, numerics=numerics[k] if k < len(numerics) else None)
        ok, line = res.ok, res.line
        ok_all &= ok
        tag = "[green]ok[/green]      " if ok else "[bold red]MISMATCH[/bold red]"
        console.print(f"{tag} out{k} {escape(describe_value(a))}: {escape(line)}")
    return ok_all


# --------------------------------------------------------------------------------------------------
# The command

@record(frozen=True, eq=False)  # (never compared: no __eq__ to generate at import)
class RunRequest:
    """What one hlo-run command line asks for: click's parameters, by name, built once in `main`."""

    module: str
    inputs: tuple = ()               # -i/--inputs FILE...
    inputs_from: Optional[str] = None
    random_inputs: bool = False
    seed: int = 0
    output: Optional[str] = None
    print_mode: str = "summary"      # --print
    compare: Optional[str] = None
    rtol: Optional[float] = None
    atol: Optional[float] = None
    max_bytes: Optional[str] = None  # the text given (4G, 512M, ...)
    max_iterations: Optional[int] = None
    no_verify: bool = False
    cache: Optional[bool] = None     # --cache / --no-cache (None: by size, see hlo_interp.cache)
    fake_constants: bool = False
    keep_denormals: bool = False
    computation: Optional[str] = None
    replicas: Optional[int] = None
    partitions: Optional[int] = None
    same_inputs: bool = False
    infeed: Optional[str] = None
    outfeed: Optional[str] = None
    host_recv: Optional[str] = None
    host_send: Optional[str] = None
    trace: bool = False
    trace_range: bool = False
    dump_dir: Optional[str] = None   # --dump-intermediates
    only: Optional[str] = None
    dump_max_bytes: str = "1G"
    profile: bool = False
    profile_json: Optional[str] = None
    repeat: int = 1
    threads: Optional[int] = None
    progress: Optional[bool] = None
    show_time: bool = False          # --time
    color: str = "auto"
    module_name: Optional[str] = None  # --module
    stage: Optional[str] = None


class _RunCommand(PipeSafe, click.Command):
    """`--inputs a.npy b.npy` takes every following .npy/.npz argument (click options take one value).
    Run as a process (the `hlo-run` script, `python -m hlo_interp.cli_run`: the arguments come from
    sys.argv), the process ends as soon as the command is done, see files.end_process."""

    def main(self, args=None, prog_name=None, complete_var=None, standalone_mode=True, **extra):
        if args is not None or not standalone_mode:  # called from Python (click's CliRunner, a caller)
            return super().main(args, prog_name, complete_var, standalone_mode, **extra)
        _hold_gc()
        try:
            super().main(None, prog_name, complete_var, standalone_mode, **extra)
            code = 0
        except SystemExit as e:
            code = e.code
        end_process(code)

    def parse_args(self, ctx, args):
        out = []
        i = 0
        while i < len(args):
            a = args[i]
            out.append(a)
            if a in ("--inputs", "-i") and i + 1 < len(args):
                out.append(args[i + 1])
                i += 2
                while i < len(args) and args[i].lower().endswith((".npy", ".npz")) and not args[i].startswith("-"):
                    out += [a, args[i]]
                    i += 1
                continue
            i += 1
        return super().parse_args(ctx, out)


_GC_HELD = False


def _hold_gc() -> None:
    """A process of its own: no cyclic garbage collection while the module is read and its plans are
    built (imports, parsing and plan building allocate much and free little, and each collection walks
    everything made so far: ~40 collections, ~7 ms of a short run); _release_gc turns it back on
    before the plans run."""
    global _GC_HELD
    import gc
    if gc.isenabled():
        gc.disable()
        _GC_HELD = True


def _release_gc() -> None:
    """The collector back on (if _hold_gc turned it off), with what exists so far counted as old."""
    global _GC_HELD
    if _GC_HELD:
        import gc

        from .ir import age_new_objects
        _GC_HELD = False
        age_new_objects()
        gc.enable()


def _parse_bytes(text: str) -> int:
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([kmgt]?i?b?)?\s*", text.lower())
    if not m:
        raise click.BadParameter(f"{text!r} is not a size like 4G, 512M or 1000000")
    mult = {"": 1, "b": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}
    unit = (m.group(2) or "").replace("i", "").rstrip("b") or ""
    return int(float(m.group(1)) * mult[unit])


@click.command(cls=_RunCommand, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.argument("module", type=click.Path(allow_dash=True))
@click.option("-i", "--inputs", "inputs", multiple=True, metavar="FILE...",
              help="One .npy per entry parameter, in order, or one .npz with keys arg0, arg1, ... "
                   "(or the parameter names).")
@click.option("--inputs-from", "inputs_from", metavar="SNAPSHOT", default=None,
              help="The arguments recorded in an XLA snapshot (*.snapshot.N.pb, --xla_dump_hlo_snapshots).")
@click.option("--random-inputs", is_flag=True, help="Generate random inputs (floats N(0,1), small integers).")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed for --random-inputs.")
@click.option("-o", "--output", metavar="OUT", help="Save the results: OUT.npz (keys out0, out1, ...) or "
                                                     "OUT.npy (a single result).")
@click.option("--print", "print_mode", type=click.Choice(["summary", "full", "none"]), default="summary",
              show_default=True, help="What to print of each result.")
@click.option("--compare", "compare", metavar="EXPECTED",
              help="Compare with EXPECTED.npz (out0, ...) or .npy; exit 1 on mismatch. Floats pass when "
                   "|got-expected| <= rtol*|expected| + atol, rtol = 4*eps, atol = 2*sqrt(max(K,16))*eps*"
                   "max|expected| (eps: the leaf's type or a coarser one it is computed from; K: the longest "
                   "dot/convolution/reduce/fft sum it depends on). Integers exactly.")
@click.option("--rtol", type=float, default=None, help="Replace the rule's relative tolerance for --compare.")
@click.option("--atol", type=float, default=None, help="Replace the rule's absolute tolerance for --compare.")
@click.option("--max-bytes", metavar="SIZE", default=None,
              help="Refuse any single result larger than SIZE (e.g. 2G) [default: half the RAM].")
@click.option("--max-iterations", type=int, default=None, metavar="N",
              help="Stop the run after N while-loop iterations in all: a budget for the whole run, nested "
                   "loops included [default: 1000000].")
@click.option("--no-verify", "no_verify", is_flag=True,
              help="Run without verifying the module first (by default what `hlo check` calls an error "
                   "stops the run, exit 2: a module XLA would refuse has no right answer).")
@click.option("--cache/--no-cache", "cache", default=None,
              help="Keep the parsed and verified module in the user's cache folder and reuse it when the "
                   "same text is run again [default: for texts of 256 KiB or more; HLO_INTERP_CACHE=0 "
                   "turns it off, =1 on for any size].")
@click.option("--fake-constants", is_flag=True,
              help="Run modules whose large constants were elided as {...}, with deterministic random values.")
@click.option("--keep-denormals", is_flag=True,
              help="Keep f32/f64 denormals (IEEE). By default they are flushed to zero, as XLA:CPU does.")
@click.option("--computation", metavar="NAME", default=None,
              help="Run the computation NAME instead of the entry (e.g. one fusion of a dump, to bisect).")
@click.option("--replicas", type=int, default=None, metavar="N",
              help="Simulate N replicas [default: the module's replica_count, else 1].")
@click.option("--partitions", type=int, default=None, metavar="M",
              help="Simulate M partitions [default: the module's num_partitions, else 1].  With D = N*M > 1 "
                   "devices every argK and outK has a leading axis of length D (device = replica*M + "
                   "partition).")
@click.option("--same-inputs", is_flag=True,
              help="With several devices: give every device the same inputs (no leading device axis).")
@click.option("--infeed", "infeed", metavar="FILE.npz", default=None,
              help="Values for the module's infeed instructions: keys in0, in1, ... consumed in order "
                   "(one per array leaf infed).")
@click.option("--outfeed", "outfeed", metavar="OUT.npz", default=None,
              help="Save what the module's outfeed instructions emit, as out0, out1, ... in order.")
@click.option("--host-recv", "host_recv", metavar="FILE.npz", default=None,
              help="Values for recv instructions with is_host_transfer=true: keys ch<channel_id>_<k>, "
                   "k = 0, 1, ... in the order they are received on that channel.")
@click.option("--host-send", "host_send", metavar="OUT.npz", default=None,
              help="Save what send instructions with is_host_transfer=true emit, as ch<channel_id>_<k>.")
@click.option("--trace", is_flag=True,
              help="Check every instruction's result for NaN/Inf and stop at the first instruction that "
                   "produced one (its operands had none; a fusion or loop whose NaN/Inf came from a constant "
                   "inside is not one): print it, its computation and loop iteration, its source location, its "
                   "operands and the path from the parameters. Exit 1 when found. With --compare the run goes "
                   "on to the end and both are reported.")
@click.option("--trace-range", is_flag=True,
              help="With --trace: also stop at a convert to f16/bf16/f8 that saturates (reaches the type's "
                   "largest finite magnitude) or overflows.")
@click.option("--dump-intermediates", "dump_dir", metavar="DIR", default=None,
              help="Save every instruction's value as DIR/NNNNN_NAME[_itK][_LEAF].npy with DIR/index.json.")
@click.option("--only", "only", metavar="REGEX", default=None,
              help="With --dump-intermediates: only instructions whose name or opcode matches REGEX (whole).")
@click.option("--dump-max-bytes", metavar="SIZE", default="1G", show_default=True,
              help="Stop (exit 2) before the dump passes SIZE bytes in total.")
@click.option("--profile", "profile", is_flag=True,
              help="Time and bytes per instruction and per opcode: the top 20 as tables, with totals.")
@click.option("--profile-json", metavar="FILE", default=None, help="Write the whole profile as JSON to FILE.")
@click.option("--repeat", type=int, default=1, show_default=True, metavar="N",
              help="With --profile: run N times and report each instruction's and opcode's median time "
                   "(single runs are noisy).")
@click.option("--threads", type=int, default=None, metavar="N",
              help="Use at most N BLAS threads (dots, convolutions, LAPACK; through threadpoolctl) "
                   "[default: the BLAS library's own, usually one per core]. --profile says which it used.")
@click.option("--progress/--no-progress", "progress", default=None,
              help="Live instruction and loop-iteration counts on stderr [default: when stderr is a terminal].")
@click.option("--time", "show_time", is_flag=True, help="Print parse, build and run times to stderr.")
@click.option("--color", type=click.Choice(["auto", "always", "never"]), default="auto", show_default=True)
@module_options
@click.version_option(__version__, "--version", prog_name="hlo-run")
def main(**params):
    """Run an HLO module on NumPy: XLA's results, on any machine.

    MODULE is HLO text (what XLA_FLAGS=--xla_dump_to=DIR writes, or jax.jit(f).lower(...).as_text("hlo")),
    an XLA .pb proto, a snapshot (*.snapshot.N.pb: run on its recorded arguments and compared with its
    recorded result), a dump folder (--module, --stage; the module's snapshot gives the inputs when none
    are given) or '-' for standard input.  Results are the leaves of the entry's result, depth-first.

    \b
    Examples:
      hlo-run model.hlo --inputs x.npy w.npy          one .npy per parameter
      hlo-run model.hlo --inputs args.npz -o out.npz  keys arg0, ..., parameter names or p['w']
      hlo-run dump/ --module jit_f --stage before      a module of a dump folder, on its snapshot's inputs
      hlo-run dump/module_0004.jit_f.snapshot.0.pb    the recorded arguments; compared with the result
      hlo-run model.hlo --random-inputs --seed 1 --print full
      hlo-run model.hlo -i args.npz --compare expected.npz --rtol 1e-4
      hlo-run spmd.hlo --partitions 8 -i args.npz -o out.npz   args/outs: [8, ...] per device
      hlo-run shard_map_before_opt.hlo -i x.npy       a shard_map global view: plain global inputs

    \b
    bf16 and f8 results are saved so that np.load (after `import ml_dtypes`) gives their real type.
    \b
    Debugging numbers:
      hlo-run model.hlo -i args.npz --trace           where does the first NaN/Inf come from?
      hlo-run model.hlo -i args.npz --dump-intermediates dump/ --only 'dot|fusion.*'
      hlo-run model.hlo -i args.npz --profile --print none
      hlo-run model.hlo -i args.npz --profile --repeat 5 --threads 1 --print none

    Exit status: 0 ok, 1 results differ from --compare or --trace found a NaN/Inf, 2 usage or input error.
    """
    opts = RunRequest(**params)
    try:
        _setup_feeds(opts.infeed, opts.outfeed)
        _setup_host_transfers(opts.host_recv, opts.host_send)
        dbg = _DebugOptions(opts.trace or opts.trace_range, opts.trace_range, opts.dump_dir, opts.only,
                            opts.dump_max_bytes, opts.profile, opts.profile_json, opts.progress, opts.repeat)
        if opts.threads is not None and opts.threads < 1:
            raise click.UsageError("--threads must be >= 1")
        import contextlib
        limit = contextlib.nullcontext()
        if opts.threads is not None:
            from .debug import thread_limit  # (NumPy: only when asked, --help and errors stay quick)
            limit = thread_limit(opts.threads)
        with limit:
            status = _main(opts, dbg)
        if opts.outfeed is not None:
            from .ops.io import take_outfeed
            save_results(opts.outfeed, take_outfeed())
        if opts.host_send is not None:
            from .ops.io import save_host_sends, take_host_sends
            save_host_sends(opts.host_send, take_host_sends())
    except HloError as e:
        report_error(e, opts.color)
        status = EXIT_ERROR
    except InputError as e:
        _fail(str(e))
        status = EXIT_ERROR
    except KeyboardInterrupt:
        sys.stderr.write("hlo-run: interrupted\n")
        status = EXIT_INTERRUPTED
    except BrokenPipeError:  # `hlo-run ... | head`: the reader left; stop quietly
        exit_broken_pipe()
    except MemoryError:
        _fail("out of memory (lower the sizes, or see --max-bytes)")
        status = EXIT_ERROR
    except OSError as e:
        _fail(f"{e.filename or ''}: {e.strerror or e}".lstrip(": "))
        status = EXIT_ERROR
    except (click.ClickException, click.exceptions.Exit, click.exceptions.Abort):
        raise
    except Exception as e:  # a bug of ours: still no traceback for the user (HLO_INTERP_DEBUG=1 shows it)
        if os.environ.get("HLO_INTERP_DEBUG"):
            raise
        _fail(f"internal error: {type(e).__name__}: {e} (rerun with HLO_INTERP_DEBUG=1 for details)")
        status = EXIT_ERROR
    sys.exit(status)


def _setup_host_transfers(host_recv, host_send) -> None:
    """Fill the host-to-device queues from --host-recv and empty the device-to-host table."""
    if host_send is not None and Path(host_send).suffix.lower() != ".npz":
        raise click.UsageError(f"--host-send must end in .npz: {host_send}")
    from .ops.io import load_host_recv, set_host_recv, take_host_sends
    take_host_sends()
    set_host_recv({})
    if host_recv is not None:
        try:
            load_host_recv(host_recv)
        except ValueError as e:
            raise InputError(str(e)) from None


def _setup_feeds(infeed, outfeed) -> None:
    """Fill the infeed queue from --infeed FILE.npz (keys in0, in1, ...) and empty the outfeed list."""
    if outfeed is not None and Path(outfeed).suffix.lower() != ".npz":
        raise click.UsageError(f"--outfeed must end in .npz: {outfeed}")
    from .ops.io import set_infeed, take_outfeed
    take_outfeed()
    values = []
    if infeed is not None:
        data = load_arrays(infeed)
        if not isinstance(data, dict):
            values = [data]
        else:
            bad = [k for k in data if not (k.startswith("in") and k[2:].isdigit())]
            if bad:
                raise InputError(f"{infeed}: infeed keys must be in0, in1, ...; found {bad[0]!r}")
            n = len(data)
            missing = [f"in{k}" for k in range(n) if f"in{k}" not in data]
            if missing:
                raise InputError(f"{infeed}: key {missing[0]} is missing (keys in0 .. in{n - 1} expected)")
            values = [data[f"in{k}"] for k in range(n)]
    set_infeed(values)


class _DebugOptions:
    """--trace, --dump-intermediates, --profile, --progress (hlo_interp.debug does the work)."""

    def __init__(self, trace=False, trace_range=False, dump_dir=None, only=None, dump_max_bytes="1G",
                 profile=False, profile_json=None, progress=None, repeat=1):
        self.trace = trace
        self.trace_range = trace_range
        self.dump_dir = dump_dir
        self.only = only
        self.dump_max_bytes = _parse_bytes(dump_max_bytes) if isinstance(dump_max_bytes, str) else dump_max_bytes
        self.profile = profile or profile_json is not None
        self.profile_json = profile_json
        self.progress = progress
        self.repeat = repeat
        if repeat < 1:
            raise click.UsageError("--repeat must be >= 1")
        if repeat > 1 and not self.profile:
            raise click.UsageError("--repeat N runs the module N times for --profile: give --profile")
        if repeat > 1 and (self.trace or dump_dir is not None):
            raise click.UsageError("--repeat works with --profile alone, not with --trace or --dump-intermediates")
        if only is not None and dump_dir is None:
            raise click.UsageError("--only selects what --dump-intermediates writes: give --dump-intermediates DIR")
        if only is not None:
            try:
                re.compile(only)
            except re.error as e:
                raise click.UsageError(f"--only: not a regular expression: {only!r} ({e})") from None
        if dump_dir is not None and Path(dump_dir).exists() and not Path(dump_dir).is_dir():
            raise click.UsageError(f"--dump-intermediates: {dump_dir} exists and is not a directory")

    @property
    def observing(self) -> bool:
        return bool(self.trace or self.dump_dir is not None or self.profile)

    def wants_progress(self) -> bool:
        if self.progress is not None:
            return self.progress
        try:
            return sys.stderr.isatty()
        except (AttributeError, ValueError):
            return False


def _load_module(opts: RunRequest):
    """(module, the dumps.Loaded it came from, (cache, key) or None) for the run, verified unless
    --no-verify.  A text file may come from the module cache (hlo_interp.cache; then Loaded is None: a
    plain text file has no snapshot, recorded result or folder around it), and a text parsed here goes
    into it; (cache, key) is where its plans' code goes."""
    cache = None
    path = opts.module
    if opts.cache is not False and opts.module_name is None and opts.stage is None:
        from .cache import for_file
        found = for_file(path, opts.cache)
        if found is not None:
            cache, key, hit = found
            if hit is not None:
                mod, verified = hit
                if not opts.no_verify and not verified:
                    verify_for_run(mod)
                    cache.put(key, mod, True)
                return mod, None, (cache, key)
    from .cli import load_module_arg
    loaded = load_module_arg(opts.module, opts.module_name, opts.stage, "hlo-run")
    mod = loaded.module
    if not opts.no_verify:
        verify_for_run(mod)
    if cache is not None and loaded.text is not None and loaded.arguments is None and loaded.name == path:
        key = cache.key(loaded.text.encode("utf-8"), path)
        if cache.put(key, mod, not opts.no_verify):
            return mod, loaded, (cache, key)
    return mod, loaded, None


def _snapshot_inputs(loaded, path, module_name, inputs_from, given: bool):
    """(recorded result or None, snapshot arguments or None) for a run: from the snapshot file being run,
    from --inputs-from SNAPSHOT, or (a dump folder, no inputs given) from the module's first snapshot."""
    from .dumps import classify, load, resolve
    if inputs_from is not None:
        if given:
            raise click.UsageError("give --inputs-from, --inputs or --random-inputs, not several")
        snap = load(classify(inputs_from)) if not Path(inputs_from).is_dir() else \
            load(resolve(inputs_from, module_name, "snapshot"))
        if snap.arguments is None:
            raise InputError(f"{inputs_from}: not an HloSnapshot (--xla_dump_hlo_snapshots writes "
                             f"*.snapshot.N.pb): it holds no arguments")
        return None, snap.arguments
    if given or loaded is None:
        return None, None
    snap = loaded if loaded.arguments is not None else None
    if snap is None and path != "-" and Path(path).is_dir() and loaded.file.module_name is not None:
        from .dumps import find_modules, scan
        mods = [m for m in find_modules(scan(path), loaded.file.module_name)
                if m.module_id == loaded.file.module_id and m.snapshots]
        if mods:
            snap = load(mods[0].snapshots[0])
            sys.stderr.write(f"hlo-run: inputs from {snap.name}\n")
    if snap is None or snap.arguments is None:
        return None, None
    recorded = (snap.name, snap.result) if snap.result is not None else None
    return recorded, snap.arguments


def _match_snapshot_args(arguments: list, params: list) -> list:
    if len(arguments) != len(params):
        raise InputError(f"the snapshot holds {len(arguments)} argument(s); the computation has "
                         f"{len(params)} parameter(s)")
    return list(arguments)


def _main(opts: RunRequest, dbg: _DebugOptions) -> int:
    if opts.inputs and opts.random_inputs:
        raise click.UsageError("give --inputs or --random-inputs, not both")
    if opts.output is not None and Path(opts.output).suffix.lower() not in (".npz", ".npy"):
        raise click.UsageError(f"--output must end in .npz or .npy: {opts.output}")
    limit = _parse_bytes(opts.max_bytes) if opts.max_bytes is not None else None
    if opts.max_iterations is not None and opts.max_iterations < 0:
        raise click.UsageError("--max-iterations must be >= 0")
    t0 = time.perf_counter()
    mod, loaded, cached = _load_module(opts)
    recorded, snapshot_args = _snapshot_inputs(loaded, opts.module, opts.module_name, opts.inputs_from,
                                               given=bool(opts.inputs or opts.random_inputs))
    t1 = time.perf_counter()
    from . import ir
    from .evaluator import compile as build
    from .spmd import module_device_counts
    for flag, v in (("--replicas", opts.replicas), ("--partitions", opts.partitions)):
        if v is not None and v < 1:
            raise click.UsageError(f"{flag} must be >= 1")
    from .spmd import is_global_view
    global_view = (is_global_view(mod) and opts.computation is None and opts.replicas is None
                   and opts.partitions is None)
    r0, p0 = module_device_counts(mod)
    if dbg.observing and (global_view or (r0 if opts.replicas is None else opts.replicas) *
                          (p0 if opts.partitions is None else opts.partitions) > 1):
        raise click.UsageError("--trace, --dump-intermediates and --profile watch a single-device run: give "
                               "--replicas 1 --partitions 1 (or --computation NAME)")
    if global_view:
        # shard_map's global view (before optimization): plain global inputs, every device simulated
        return _main_spmd(mod, replace(opts, same_inputs=True, computation=None), 1, 1, limit, (t0, t1),
                          global_view=True)
    n_rep = r0 if opts.replicas is None else opts.replicas
    n_part = p0 if opts.partitions is None else opts.partitions
    if opts.replicas is None and opts.partitions is None and opts.computation is None:
        from .ops.collectives import implied_device_counts
        implied = implied_device_counts(mod)
        if implied is not None:
            # collectives written for several devices in a module whose header gives no counts: run on
            # the devices they name, and say so
            n_rep, n_part, ins, why = implied
            where = f"{ins.loc.line}:{ins.loc.column}: " if ins.loc is not None else ""
            src = ((ins.loc.filename if ins.loc is not None else None) or getattr(mod, "filename", None)
                   or opts.module)
            flag = f"--partitions {n_part}" if n_part > 1 else f"--replicas {n_rep}"
            sys.stderr.write(f"{src}:{where}note: the header gives no replica_count/num_partitions, but {why}: "
                             f"running on {n_rep * n_part} simulated devices (as with {flag}; give --replicas/"
                             f"--partitions to choose)\n")
    if n_rep * n_part > 1:
        return _main_spmd(mod, opts, n_rep, n_part, limit, (t0, t1))
    session = observer = None
    show_progress = dbg.wants_progress()
    if dbg.observing:
        from .debug import Session
        try:
            # with --compare the run goes on after a --trace finding, to the results to compare
            session = observer = Session(mod, trace=dbg.trace, trace_range=dbg.trace_range,
                                         dump_dir=dbg.dump_dir, only=dbg.only,
                                         dump_max_bytes=dbg.dump_max_bytes, profile=dbg.profile,
                                         trace_continue=opts.compare is not None)
        except OSError as e:
            raise InputError(f"--dump-intermediates: cannot create {dbg.dump_dir}: {e.strerror or e}") from None
    elif show_progress:
        from .debug import ProgressObserver
        observer = ProgressObserver(mod)
    plan_code = cached[0].get_plans(cached[1]) if cached is not None else None
    known = len(plan_code) if plan_code is not None else 0
    exe = build(mod, max_bytes=limit, max_iterations=opts.max_iterations, fake_constants=opts.fake_constants,
                computation=opts.computation, denormals="keep" if opts.keep_denormals else "flush",
                observer=observer, plan_code=plan_code)
    if cached is not None and len(plan_code) > known:
        cached[0].put_plans(cached[1], plan_code)
    params = exe.params
    root_shape = exe.entry.root.shape
    if opts.output is not None and Path(opts.output).suffix.lower() == ".npy":
        nleaves = len(_leaf_paths(root_shape, "")) if root_shape is not None else 1
        if nleaves != 1:
            raise InputError(f"the result has {nleaves} leaves: save it as .npz, not .npy")
    t2 = time.perf_counter()
    if opts.random_inputs:
        import numpy as np
        rng = np.random.default_rng(opts.seed)
        args = _random_args(params, rng, limit)
    elif opts.inputs:
        args = gather_inputs(opts.inputs, params, limit)
    elif snapshot_args is not None:
        args = _match_snapshot_args(snapshot_args, params)
    elif params and any(not (isinstance(p.shape, ir.ArrayShape) and p.shape.element_type.dtype is None)
                        for p in params):
        names = ", ".join(p.name for p in params)
        raise click.UsageError(f"the computation takes {len(params)} parameter(s) ({names}): give "
                               f"--inputs or --random-inputs")
    else:
        from .ops.registry import TOKEN
        args = [TOKEN for _ in params]
    t3 = time.perf_counter()
    if show_progress or session is not None:
        from .debug import live_progress
    else:
        live_progress = _no_progress  # hlo_interp.debug (and what it imports) only when asked for
    _release_gc()
    with live_progress(observer if show_progress else None, opts.color):
        if session is not None:
            from .debug import Profile, execute
            profiles = []
            for _ in range(dbg.repeat):  # --repeat N (with --profile only): the medians of N runs
                session.reset_run()
                got = execute(exe, session, args)
                profiles.append(got.profile)
            if dbg.repeat > 1:
                got.profile = Profile.median(profiles)
            leaves = got.results
        else:
            leaves = exe(*args)
    t4 = time.perf_counter()
    status = EXIT_OK
    if leaves is not None:
        if opts.output is not None:
            save_results(opts.output, leaves)
        print_results(leaves, opts.print_mode, opts.color)
        if opts.compare is not None:
            same = compare_results(leaves, opts.compare, opts.rtol, opts.atol, opts.color, mod)
            status = EXIT_OK if same else EXIT_MISMATCH
        elif recorded is not None:
            source, expected = recorded
            sys.stderr.write(f"hlo-run: comparing with the result recorded in {source}\n")
            same = compare_results(leaves, expected, opts.rtol, opts.atol, opts.color, mod)
            status = EXIT_OK if same else EXIT_MISMATCH
    if session is not None:
        status = max(status, _report_debug(got, dbg, opts.color))
    if opts.show_time:
        sys.stderr.write(f"parse {1e3 * (t1 - t0):.1f} ms, build {1e3 * (t2 - t1):.1f} ms, "
                         f"inputs {1e3 * (t3 - t2):.1f} ms, run {1e3 * (t4 - t3):.1f} ms\n")
    return status


class _no_progress:
    def __init__(self, obs, color):
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def _report_debug(got, dbg: _DebugOptions, color: str) -> int:
    """Print what --trace / --dump-intermediates / --profile found; the exit status so far."""
    import json
    status = EXIT_OK
    if got.profile is not None:
        print_profile(got.profile, color)
        if dbg.profile_json is not None:
            data = (json.dumps(got.profile.to_json(), indent=1) + "\n").encode()
            write_atomic(Path(dbg.profile_json), data)
    if got.dump is not None:
        sys.stderr.write(f"hlo-run: dumped {len(got.dump.entries)} value(s), {got.dump.bytes} bytes, to "
                         f"{got.dump.directory} (index.json)\n")
    if got.error:
        _fail(got.error)
        return EXIT_ERROR
    if got.trace is not None:
        if got.trace.found:
            print_finding(got.trace, color)
            status = EXIT_MISMATCH
        else:
            sys.stderr.write(got.trace.render() + "\n")
    return status


def print_finding(report, color: str) -> None:
    from rich.markup import escape
    console = make_console(color=color)
    for k, line in enumerate(report.render().split("\n")):
        if k == 0:
            console.print(f"[bold red]{escape(line)}[/bold red]")
        elif line.startswith("  ") and line[2:3] != " ":
            head, rest = line[:15], line[15:]
            console.print(f"[bold]{escape(head)}[/bold]{escape(rest)}")
        else:
            console.print(escape(line))


def print_profile(prof, color: str, top: int = 20) -> None:
    """The profile: rich tables on a terminal, plain text otherwise (or with NO_COLOR / --color never)."""
    plain = color == "never" or (color == "auto" and ("NO_COLOR" in os.environ or not sys.stdout.isatty()))
    if plain:
        sys.stdout.write(prof.table(top) + "\n")
        return
    from rich.table import Table
    from .debug import format_ms
    from .diagnostics import format_bytes
    console = make_console(color=color)
    tot = prof.total_time or 1e-300
    from rich.markup import escape
    head = prof.headline
    console.print("[bold]profile[/bold]" + escape(head[len("profile"):]))
    t = Table(title=f"top {top} opcodes by time", title_justify="left")
    for col, just in (("opcode", "left"), ("instrs", "right"), ("runs", "right"), ("time", "right"),
                      ("%", "right"), ("bytes", "right")):
        t.add_column(col, justify=just)
    for r in prof.by_opcode(top):
        t.add_row(r["opcode"], str(r["instructions"]), str(r["count"]), format_ms(r["seconds"]),
                  f"{100 * r['seconds'] / tot:.1f}", format_bytes(r["bytes"]))
    t.add_row("[bold]total[/bold]", str(len(prof.rows)), str(prof.executed), format_ms(prof.total_time), "100.0",
              format_bytes(prof.total_bytes))
    console.print(t)
    t = Table(title=f"top {top} instructions by time", title_justify="left")
    for col, just in (("computation", "left"), ("instruction", "left"), ("opcode", "left"), ("runs", "right"),
                      ("time", "right"), ("%", "right"), ("bytes", "right")):
        t.add_column(col, justify=just, overflow="fold")
    for r in prof.by_instruction(top):
        t.add_row(r["computation"], r["name"], r["opcode"], str(r["count"]), format_ms(r["seconds"]),
                  f"{100 * r['seconds'] / tot:.1f}", format_bytes(r["bytes"]))
    console.print(t)


def _main_spmd(mod, opts: RunRequest, n_rep: int, n_part: int, limit: Optional[int], times: tuple,
               global_view: bool = False) -> int:
    """Several simulated devices: inputs and results carry a leading device axis (unless --same-inputs).
    global_view: a shard_map global-view module, run on plain global inputs (spmd.run_global)."""
    import numpy as np
    from . import ir
    from .evaluator import ordered_parameters
    from .ops.registry import TOKEN
    from .spmd import run_spmd
    ndev = n_rep * n_part
    t0, t1 = times
    if opts.computation is not None:
        try:
            comp = mod.computation(opts.computation)
        except KeyError:
            raise HloError(f"no computation named '{opts.computation}'", filename=mod.filename or None) from None
    else:
        comp = mod.entry
    params = ordered_parameters(comp)
    root_shape = comp.root.shape
    if opts.output is not None and Path(opts.output).suffix.lower() == ".npy":
        nleaves = len(_leaf_paths(root_shape, "")) if root_shape is not None else 1
        if nleaves != 1:
            raise InputError(f"the result has {nleaves} leaves: save it as .npz, not .npy")
    from .evaluator import default_max_bytes, shape_bytes
    from .spmd import check_device_count
    check_device_count(n_rep, n_part, sum(shape_bytes(p.shape) for p in params) + shape_bytes(root_shape),
                       default_max_bytes() if limit is None else limit, filename=mod.filename or None)

    def is_token(shape):
        return isinstance(shape, ir.ArrayShape) and shape.element_type.dtype is None

    def split(value, shape, what):
        """value (with a leading device axis) -> [value on device d]."""
        if isinstance(shape, ir.TupleShape):
            parts = [split(v, s, f"{what}.{k}") for k, (v, s) in enumerate(zip(value, shape.elements))]
            return [tuple(p[d] for p in parts) for d in range(ndev)]
        if is_token(shape):
            return [TOKEN] * ndev
        a = np.asarray(value)
        if a.ndim < 1 or a.shape[0] != ndev:
            raise InputError(f"{what}: with {ndev} devices ({n_rep} replica(s) x {n_part} partition(s)) every "
                             f"input needs a leading device axis of length {ndev}; got shape {list(a.shape)} "
                             f"(or give --same-inputs to feed the same inputs to every device)")
        return [a[d] for d in range(ndev)]

    if opts.random_inputs:
        rng = np.random.default_rng(opts.seed)
        if opts.same_inputs:
            one = _random_args(params, rng, limit)
            per_dev = [list(one) for _ in range(ndev)]
        else:
            per_dev = [_random_args(params, rng, None if limit is None else limit // ndev) for _ in range(ndev)]
    elif opts.inputs:
        args = gather_inputs(opts.inputs, params, limit, 1 if opts.same_inputs else ndev)
        if opts.same_inputs:
            per_dev = [list(args) for _ in range(ndev)]
        else:
            cols = [split(a, p.shape, f"argument {k} ('{p.name}')") for k, (a, p) in enumerate(zip(args, params))]
            per_dev = [[c[d] for c in cols] for d in range(ndev)]
    elif params and any(not is_token(p.shape) for p in params):
        names = ", ".join(p.name for p in params)
        raise click.UsageError(f"the computation takes {len(params)} parameter(s) ({names}): give "
                               f"--inputs or --random-inputs")
    else:
        per_dev = [[TOKEN for _ in params] for _ in range(ndev)]
    t2 = t3 = time.perf_counter()
    _release_gc()
    run_opts = dict(max_bytes=limit, max_iterations=opts.max_iterations, fake_constants=opts.fake_constants,
                    denormals="keep" if opts.keep_denormals else "flush")
    if global_view:
        from .spmd import run_global
        leaves = run_global(mod, *per_dev[0], **run_opts)
    else:
        results = run_spmd(mod, per_dev, n_rep, n_part, computation=opts.computation, **run_opts)
        leaves = [np.stack([results[d][k] for d in range(ndev)]) for k in range(len(results[0]))]
    t4 = time.perf_counter()
    if opts.output is not None:
        save_results(opts.output, leaves)
    print_results(leaves, opts.print_mode, opts.color)
    status = EXIT_OK
    if opts.compare is not None:
        same = compare_results(leaves, opts.compare, opts.rtol, opts.atol, opts.color, mod)
        status = EXIT_OK if same else EXIT_MISMATCH
    if opts.show_time:
        sys.stderr.write(f"parse {1e3 * (t1 - t0):.1f} ms, inputs {1e3 * (t3 - t2):.1f} ms, "
                         f"build and run on {ndev} devices {1e3 * (t4 - t3):.1f} ms\n")
    return status


if __name__ == "__main__":  # pragma: no cover
    main()
