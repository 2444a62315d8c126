"""hlo-interp: parse, check, print and run XLA's HLO text on NumPy.

    >>> import hlo_interp
    >>> m = hlo_interp.parse(text)          # -> hlo_interp.ir.Module (raises HloError, located)
    >>> print(hlo_interp.to_text(m))        # canonical text
    >>> outs = hlo_interp.run(m, x, w)      # list of NumPy arrays: the result's leaves
    >>> hlo_interp.check(m)                 # verifier findings (empty: valid)
    >>> hlo_interp.diff_modules(a, b).same  # structural diff of two modules
    >>> hlo_interp.module_info(m)           # opcodes, costs, physical memory report
    >>> hlo_interp.trace(m, x, w)           # first instruction that produced a NaN/Inf

Submodules with more: hlo_interp.diff, .info, .graph, .debug, .layout.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Union

from . import ir
from .diagnostics import HloError
from .version import __version__

if TYPE_CHECKING:
    from pathlib import Path

__all__ = ["parse", "parse_all", "parse_file", "to_text", "format_text", "check", "run", "run_spmd",
           "register_custom_call", "trace", "module_info", "diff_modules", "HloError", "ir", "__version__"]


def parse(text: str, filename: str = "<string>") -> ir.Module:
    """Parse HLO text: a module (`HloModule ...`), headerless computations, or log-pasted text
    (StableHLO text gets an error that says how to get HLO from JAX)."""
    from .frontend import parse_text
    return parse_text(text, filename)


def parse_all(text: str, filename: str = "<string>") -> list[ir.Module]:
    """Parse a text holding one or more modules separated by `// -----` lines."""
    from .frontend import parse_all_text
    return parse_all_text(text, filename)


def parse_file(path: Union[str, "Path"]) -> ir.Module:
    from .diagnostics import read_source
    text, name = read_source(str(path))  # bounded: an endless stream is an error, not a hang
    return parse(text, name)


def to_text(module: ir.Module, *, strip_metadata: bool = False, strip_backend_config: bool = False,
            canonical_names: bool = False) -> str:
    """Canonical HLO text of a module (XLA's printing style)."""
    from .syntax.printer import PrintOptions, to_text as _to_text
    return _to_text(module, PrintOptions(strip_metadata, strip_backend_config, canonical_names))


def format_text(text: str, filename: str = "<string>", **options) -> str:
    """Canonical text of every module in `text` (modules separated by `// -----` stay so)."""
    from .frontend import parse_all_text
    from .syntax.parser import SPLIT_MARKER
    from .syntax.printer import PrintOptions, to_text as _to_text
    opts = PrintOptions(**{"reuse_source": True, **options})  # the modules are printed as parsed
    modules = parse_all_text(text, filename, canonical_lines=opts.reuse_source)
    return (SPLIT_MARKER + "\n\n").join(_to_text(m, opts) for m in modules)


def check(module: ir.Module, **options):
    """Verify a module as XLA's HloVerifier would; returns the findings (a list, empty when valid)."""
    from .shapes.verify import check as _check
    return _check(module, **options)


def run(module: Union[ir.Module, str], *args, **options):
    """Execute the entry computation on NumPy arrays; returns the leaves of the result as a list of
    arrays (a non-tuple result is a one-element list)."""
    from .evaluator import run as _run
    if isinstance(module, str):
        module = parse(module)
    return _run(module, *args, **options)


def run_spmd(module: Union[ir.Module, str], per_device_inputs, replicas: int = None, partitions: int = None,
             **options):
    """Execute an SPMD module on every simulated device (replicas x partitions, device index =
    replica * partitions + partition); per_device_inputs[d] are device d's arguments.  Returns each
    device's result leaves."""
    from .spmd import run_spmd as _run_spmd
    if isinstance(module, str):
        module = parse(module)
    return _run_spmd(module, per_device_inputs, replicas=replicas, partitions=partitions, **options)


def register_custom_call(name: str, fn) -> None:
    """Register a Python implementation of custom-call target `name` (fn=None removes it):
    fn(*arrays, backend_config=str|None, shape=ir.Shape) -> array, or a tuple for a tuple shape."""
    from .ops.custom_call import register
    register(name, fn)


def trace(module: Union[ir.Module, str], *args, **options):
    """Run and stop at the first instruction that produced a NaN or Inf: a hlo_interp.debug.TraceReport
    (.found, .finding with .instruction/.source/.path/.iterations, .render())."""
    from .debug import trace as _trace
    if isinstance(module, str):
        module = parse(module)
    return _trace(module, *args, **options)


def module_info(module: Union[ir.Module, str], computation: str = None):
    """Computations, opcode counts, signature, XLA-style costs and the physical memory report
    (a hlo_interp.info.ModuleInfo; .to_json())."""
    from .info import module_info as _module_info
    if isinstance(module, str):
        module = parse(module)
    return _module_info(module, computation)


def diff_modules(a: Union[ir.Module, str], b: Union[ir.Module, str], ignore=(), **options):
    """Structural diff of two modules, robust to renumbering and reordering (a hlo_interp.diff.DiffResult:
    .same, .to_json(), the text and HTML renderings).  ignore: metadata, backend_config, layouts, names."""
    from .diff import diff_modules as _diff_modules
    a = parse(a) if isinstance(a, str) else a
    b = parse(b) if isinstance(b, str) else b
    return _diff_modules(a, b, ignore, **options)
