"""HLO text -> a complete IR module: the syntax (syntax/parser.py), then the result shapes the text
omits, inferred by the shape rules as XLA's parser infers them (shapes/infer.py).  This is what
`hlo_interp.parse` and the tools call; the syntax itself knows no shape rules.
"""
from __future__ import annotations

from typing import Optional

from . import ir
from .syntax import parser as _parser


def fill_omitted_shapes(module: ir.Module) -> Optional[tuple[ir.Instruction, str]]:
    """The shape pass for omitted result shapes (imported only when a text omits one)."""
    from .shapes.infer import fill_omitted_shapes as fill
    return fill(module)


def parse_module(text: str, filename: str = "<string>") -> ir.Module:
    """Parse HLO text: a module (`HloModule ...`), headerless computations, or log-pasted text."""
    return _parser.parse_module(text, filename, fill_omitted_shapes)


def parse_modules(text: str, filename: str = "<string>") -> list[ir.Module]:
    """Parse a text holding one or more modules separated by `// -----` lines."""
    return _parser.parse_modules(text, filename, fill_omitted_shapes)
