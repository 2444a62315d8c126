"""HLO text -> a complete IR module: the syntax (syntax/parser.py), then the result shapes the text
omits, inferred by the shape rules as XLA's parser infers them (shapes/infer.py).  This is what
`hlo_interp.parse` and the tools call; the syntax itself knows no shape rules.  StableHLO (MLIR) text
given where HLO is expected gets an error that says how to ask JAX for HLO (parse_text).
"""
from __future__ import annotations

import functools
import re
from typing import Optional

from . import ir
from .diagnostics import HloError
from .syntax import parser as _parser


def fill_omitted_shapes(module: ir.Module) -> Optional[tuple[ir.Instruction, str]]:
    """The shape pass for omitted result shapes (imported only when a text omits one)."""
    from .shapes.infer import fill_omitted_shapes as fill
    return fill(module)


def parse_module(text: str, filename: str = "<string>", *, canonical_lines: bool = False) -> ir.Module:
    """Parse HLO text: a module (`HloModule ...`), headerless computations, or log-pasted text.
    `canonical_lines`: for printing with PrintOptions.reuse_source (syntax.parser.parse_module)."""
    return _parser.parse_module(text, filename, fill_omitted_shapes, canonical_lines=canonical_lines)


def parse_modules(text: str, filename: str = "<string>", *, canonical_lines: bool = False) -> list[ir.Module]:
    """Parse a text holding one or more modules separated by `// -----` lines."""
    return _parser.parse_modules(text, filename, fill_omitted_shapes, canonical_lines=canonical_lines)


# --------------------------------------------------------------------------------------------------
# StableHLO (MLIR) text where HLO text is expected

@functools.lru_cache(maxsize=1)
def _mlir() -> "re.Pattern":
    """What MLIR text has and HLO text has not (compiled when first needed: start-up)."""
    return re.compile(r"^\s*(module\b.*\{|func\.func\b|#loc\d*\s*=)|\b(stablehlo|mhlo|chlo|sdy)\.[a-z_]+\b|"
                      r"^\s*%\w+\s*=\s*\"?(stablehlo|mhlo|func|tensor|arith)\.", re.M)


def looks_like_mlir(text: str) -> bool:
    """StableHLO / MHLO (MLIR) text, which JAX's .as_text() prints by default."""
    head = text[:20000]
    if "HloModule" in head and not re.search(r"^\s*module\b", head, re.M):
        return False
    return bool(_mlir().search(head))


MLIR_HINT = ("this is StableHLO (MLIR) text, not HLO text.  Ask JAX for HLO: "
             "jax.jit(f).lower(*args).as_text(dialect=\"hlo\") (before XLA's optimizations) or "
             "jax.jit(f).lower(*args).compile().as_text() (after them), or let XLA write every module: "
             "XLA_FLAGS=--xla_dump_to=DIR (files *.before_optimizations.txt, *.after_optimizations.txt)")


def mlir_error(text: str, filename: str) -> HloError:
    """The error for MLIR text given where HLO is expected, located at its `module` line (else the first
    MLIR-looking line)."""
    m = re.search(r"^\s*module\b", text[:200000], re.M) or _mlir().search(text[:20000])
    offset = m.start() if m else 0
    while offset < len(text) and text[offset] in " \t\n":
        offset += 1
    line = text.count("\n", 0, offset) + 1
    col = offset - (text.rfind("\n", 0, offset) + 1) + 1
    return HloError(MLIR_HINT, filename=filename, line=line, column=col,
                    source_line=text.split("\n")[line - 1] if text else None)


def parse_text(text: str, filename: str = "<string>", *, canonical_lines: bool = False):
    """Parse HLO text (a module, headerless computations, or log-pasted text) into an ir.Module;
    StableHLO (MLIR) text given instead gets an error that says how to get HLO from JAX."""
    try:
        return parse_module(text, filename, canonical_lines=canonical_lines)
    except HloError:
        if looks_like_mlir(text):
            raise mlir_error(text, filename) from None
        raise


def parse_all_text(text: str, filename: str = "<string>", *, canonical_lines: bool = False) -> list:
    """`parse_text` for a text of one or more modules separated by `// -----` lines."""
    try:
        return parse_modules(text, filename, canonical_lines=canonical_lines)
    except HloError:
        if looks_like_mlir(text):
            raise mlir_error(text, filename) from None
        raise
