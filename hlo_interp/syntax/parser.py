"""HLO text -> IR: Lark LALR over grammar/hlo.lark with the tokenizer of lexer.py and a transformer
applied during parsing (no parse tree is built).  Every syntax error becomes a located HloError.

Speed (28.8 MB XLA:CPU dump, median of 5): stock Lark 0.55 MB/s; own LALR loop, first-character
dispatch lexer, whole-shape and other fast tokens 2.0 MB/s; whole instruction lines and signatures
as single tokens (lexer.py, built by fast_instruction/fast_signature below with the rules'
callbacks), metadata and int lists decoded once per distinct text (_Ctx.brace_cache) 6 MB/s;
consecutive lines as one token, each built directly (_Builder.fast_line: attribute values decoded once
per distinct text, metadata kept as text until read, attribute locations made when asked for) about
10 MB/s (bench/parse.py: 1 MB dump and the synthetic 100k-instruction module); the common line (no
attribute, or metadata alone) read by one regex match and built without an attribute plan, instance
dicts holding only the fields not at their default, canonical lines marked only for fmt
(canonical_lines): the synthetic module (12.5 MB) in 0.50 s, 25 MB/s (hlo fmt 0.56 s, 0.79x XLA's parser).
"""
from __future__ import annotations

import functools
import os
import re
from itertools import compress
from operator import attrgetter, is_
from typing import TYPE_CHECKING, Any, Callable, Optional

from .driver import UnexpectedCharacters, UnexpectedEOF, UnexpectedInput, UnexpectedToken, VisitError
from .lexer import Token

from .. import ir
from ..diagnostics import HloError, SourceText
from ..types import PRIMITIVE_TYPES
from . import lexer as _lexer
from ..opcodes import schema_for
from .attributes import (BadAliasEntry, BadAttribute, InlineInstruction, alias_of_paren, decode_computation_attrs,
                         decode_header_attrs, decode_instruction_attrs, decode_value, schema)
from .literals import ELIDED, LitTuple, parse_literal_body
from .printer import attr_value_text, canonical_metadata

MAX_NESTING = 500  # XLA's HloParserOptions max_recursion_depth

# What fills in the result shapes a text omits: module -> None, or (instruction, message) for the
# first one it cannot infer (shapes.infer.fill_omitted_shapes, passed in by hlo_interp.frontend).
FillShapes = Callable[[ir.Module], Optional[tuple[ir.Instruction, str]]]


if TYPE_CHECKING:
    from pathlib import Path

    import lark


def _grammar_file() -> str:
    """grammar/hlo.lark: inside the installed package, or at the top of a source checkout."""
    here = os.path.dirname(os.path.realpath(__file__))
    packaged = os.path.join(os.path.dirname(here), "grammar", "hlo.lark")
    if os.path.isfile(packaged):
        return packaged
    checkout = os.path.join(os.path.dirname(os.path.dirname(here)), "grammar", "hlo.lark")
    if os.path.isfile(checkout):
        return checkout
    from importlib import resources  # (another kind of install: a zip, ...)
    res = resources.files("hlo_interp") / "grammar" / "hlo.lark"
    return str(res) if res.is_file() else checkout


def grammar_path() -> "Path":
    from pathlib import Path
    return Path(_grammar_file())


@functools.lru_cache(maxsize=1)
def grammar_text() -> str:
    with open(_grammar_file(), encoding="utf-8") as f:
        return f.read()


# --------------------------------------------------------------------------------------------------
# The transformer: grammar rules -> IR objects.  Per-parse state lives in `_Ctx`.

class _Root:
    pass


class _Entry:
    pass


_ROOT = _Root()
_ENTRY = _Entry()


class _Nested:
    """An operand written as a nested instruction: hoisted before its user."""
    __slots__ = ("ins", "hoisted")

    def __init__(self, ins: ir.Instruction, hoisted: list):
        self.ins = ins
        self.hoisted = hoisted


class _Ref:
    """An operand written as a name (with its shape before it, `f32[4] %a`, when the text has one)."""
    __slots__ = ("name", "shape", "pos")

    def __init__(self, name: str, shape, pos: int):
        self.name, self.shape, self.pos = name, shape, pos


class _InstrResult(InlineInstruction):
    __slots__ = ("ins", "hoisted")

    def __init__(self, ins, hoisted):
        self.ins = ins
        self.hoisted = hoisted


class _InstrBlock(_InstrResult):
    """Consecutive instruction lines read by the lexer's fast path (lexer.HloLexer._fast_block), pushed
    as one `instruction`: the last one is `ins`, those before it come first (`hoisted`)."""
    __slots__ = ("instrs",)

    def __init__(self, instrs: list):
        self.instrs = instrs
        self.ins = instrs[-1]
        self.hoisted = instrs[:-1]


class _FastFallback(Exception):
    """The fast path met what only token-by-token parsing reports properly (parse again without it)."""


class _Ctx:
    def __init__(self, source: SourceText, fill_shapes: Optional[FillShapes] = None):
        self.source = source
        self.fill_shapes = fill_shapes
        self.inline_computations: list[ir.Computation] = []
        self.anon_counts: dict[str, int] = {}
        self.last_operand_shapes = None
        # KV_FAST / INTS_FAST token text -> its GBraces (immutable): dumps repeat the same metadata
        # thousands of times.
        self.brace_cache: dict[str, ir.GBraces] = {}
        # (opcode, attribute) -> {value text: decoded value} for the fast path (immutable values only)
        self.value_cache: dict[tuple[str, str], dict] = {}
        self.line_plans: dict[tuple, tuple] = {}  # (opcode, attribute names) -> _Builder._line_plan
        self.kv_item_cache: dict[tuple, ir.GKeyVal] = {}

    def builder_inline_computation(self, braces: ir.GBraces, attr: str, ins_name: str) -> str:
        """`to_apply={ ... }`: the instructions become a computation of their own."""
        instrs: list[ir.Instruction] = []
        for r in braces.items:
            instrs.extend(r.hoisted)
            instrs.append(r.ins)
        # a provisional name no text can spell ('#'), unique even when nested blocks reuse instruction
        # names (`call.0 = call(..), to_apply={ ... call.0 = call(..), to_apply={...} }`); renamed `_`,
        # `_.1`, ... in order of completion (inner first), as XLA names them
        name = f"{ins_name}.{attr}#{len(self.inline_computations)}"
        comp = ir.Computation(name=name, instructions=instrs, loc=instrs[0].loc if instrs else None)
        _BUILDER._check_instructions(comp)
        self.inline_computations.append(comp)
        return name


def _name_inline_computations(inline: list[ir.Computation], named: list[ir.Computation]) -> None:
    """XLA names `to_apply={...}` computations `_`, `_.1`, `_.2`, ... (skipping names in use);
    rename ours so and update the instructions that call them."""
    taken = {c.name for c in named}
    renames: dict[str, str] = {}
    n = 0
    for comp in inline:
        while True:
            cand = "_" if n == 0 else f"_.{n}"
            n += 1
            if cand not in taken:
                break
        renames[comp.name] = cand
        comp.name = cand
    for comp in inline + named:
        for ins in comp.instructions:
            kinds = {a.name: a.kind for a in schema_for(ins.opcode)[0]}
            for key, val in list(ins.attrs.items()):
                kind = kinds.get(key)
                if kind == "comp" and val in renames:
                    ins.attrs[key] = renames[val]
                elif kind == "comps" and isinstance(val, (list, tuple)):
                    ins.attrs[key] = type(val)(renames.get(v, v) for v in val)


def _strip(name: str) -> str:
    return name[1:] if name[0] == "%" else str(name)


def _int(tok: Token, source: SourceText | None = None) -> int:
    return int(tok)


_DEFAULT_LAYOUTS: dict[int, ir.Layout] = {}

_INT64_MAX = (1 << 63) - 1


def _check_dims(dims, dynamic, et, source: SourceText, pos: int) -> None:
    """XLA's rules for dimension sizes: the parser refuses a negative size (only a dynamic `<=` bound
    may be -1, the unbounded size), and ShapeUtil::ValidateShape an element count or a byte size
    that overflows int64 ("Dimensions overflow", "Shape size may overflow int64_t")."""
    count = 1
    for d, dyn in zip(dims, dynamic):
        if d < 0 and not (dyn and d == ir.UNBOUNDED):
            raise HloError.at(source, pos, f"negative dimension size {d}")
        if d > _INT64_MAX:  # XLA's lexer reads it as a uint64 bit-cast to a negative int64
            raise HloError.at(source, pos, f"dimension size {d} is beyond int64 (a negative size to XLA)")
        count *= max(d, 0)
    if count > _INT64_MAX:
        raise HloError.at(source, pos, f"dimensions overflow: {et.name}[{','.join(map(str, dims))}] has more "
                                       f"than 2^63-1 elements")
    if count * max(1, et.bits // 8) > _INT64_MAX:
        raise HloError.at(source, pos, f"shape size may overflow int64: {et.name}"
                                       f"[{','.join(map(str, dims))}] is more than 2^63-1 bytes")


# An integer token beyond int64 and uint64 (XLA's lexer refuses it).  Python's int() of a very long
# one fails differently from place to place (more than 4,300 digits: ValueError): find them first.
_LONG_DIGITS = re.compile(r"[0-9]{19,}")


_ZERO_DIGITS = str.maketrans("123456789", "000000000")
_LAST_ZEROED: list = [None, ""]  # [a text, that text with every digit 0]


def _digits_zeroed(text: str) -> str:
    """The text with every digit a 0 (remembered for the last text): where digit runs of a given
    shape are can then be looked for as a plain substring, far faster than with a regex."""
    if _LAST_ZEROED[0] is not text:
        _LAST_ZEROED[0], _LAST_ZEROED[1] = text, text.translate(_ZERO_DIGITS)
    return _LAST_ZEROED[1]


def _refuse_huge_integers(source: SourceText, begin: int, end: int | None) -> None:
    text = source.text
    if "0000000000000000000" not in _digits_zeroed(text[begin:end]):  # no run of 19 digits
        return
    for m in _LONG_DIGITS.finditer(text, begin, len(text) if end is None else end):
        a, b = m.span()
        before = text[a - 1] if a else " "
        after = text[b] if b < len(text) else " "
        if before.isalnum() or before in "._" or after.isalnum() or after in "._":
            continue  # part of a name, a float (1.5e999...), a hex payload: not an integer token
        line_start = text.rfind("\n", 0, a) + 1
        head = text[line_start:a]
        if head.count('"') % 2 or "//" in head or "/*" in head:
            continue  # inside a string or a comment
        if before in "+-":
            prev = text[a - 2] if a >= 2 else " "
            if prev.isalnum() or prev in "._-":
                continue  # a name like add-123...
            a -= 1
        digits = m.group().lstrip("0")
        if len(digits) > 20 or int(digits or "0") >= (1 << 64) or (before == "-" and int(digits) > 1 << 63):
            shown = text[a:b] if b - a <= 40 else text[a:a + 20] + f"... ({b - a} characters)"
            raise HloError.at(source, a, f"integer {shown} is out of range: integers are int64 or uint64")


def _default_layout(rank: int) -> ir.Layout:
    lay = _DEFAULT_LAYOUTS.get(rank)
    if lay is None:
        lay = _DEFAULT_LAYOUTS[rank] = ir.Layout(tuple(range(rank - 1, -1, -1)))
    return lay


class _Builder:
    """Callbacks named after the grammar's rules and aliases; each gets the list of children."""

    ctx: _Ctx

    # ---- module
    def hlo(self, c):
        return c[0]

    def headerless(self, c):
        comps = [x for x in c if isinstance(x, ir.Computation)]
        first = comps[0]
        if not first.is_entry and first.params is not None:
            # XLA's parser (HloParserImpl::Run) reads a text as computations only when it starts with
            # HloModule, ENTRY or `name {`; anything else is parsed as a single instruction.
            raise self._err_at_loc(first.loc, f"expects '=' in instruction: a text without the HloModule "
                                              f"header must start with ENTRY or with a computation "
                                              f"written without its signature ({first.name} {{ ...); "
                                              f"XLA's parser reads this one as a single instruction")
        entry = next((x for x in comps if x.is_entry), comps[-1])
        entry.is_entry = True
        m = ir.Module(name=f"module_{entry.name}", computations=comps, has_header=False)
        return self._finish_module(m)

    def single_instruction(self, c):
        """A lone instruction (as pasted from a dump): its operands become the entry's parameters,
        named and shaped as written, like XLA's parser does (module `_`, scheduled)."""
        r = c[0]
        if type(r) is _InstrBlock and len(r.instrs) > 1:
            raise _FastFallback  # lines of instructions without a computation: the grammar's error
        ins = r.ins
        ins.is_root = True
        ins.__dict__.pop("canonical_end", None)
        defined = {h.name for h in r.hoisted}
        params = []
        shapes = ins.operand_shapes or [None] * len(ins.operands)
        for name, shape in zip(ins.operands, shapes):
            if name in defined or any(p.name == name for p in params):
                continue
            if shape is None:
                raise self._err_at_loc(ins.loc, f"operand %{name} is not defined: write its shape before "
                                                f"it (f32[4] %{name}) to make it a parameter")
            params.append(ir.Instruction(name=name, opcode="parameter", shape=shape,
                                         parameter_number=len(params), loc=ins.loc))
        comp = ir.Computation(name="_", instructions=params + r.hoisted + [ins], is_entry=True, loc=ins.loc)
        self._check_instructions(comp)
        m = ir.Module(name="_", computations=[comp], attrs={"is_scheduled": True}, has_header=False)
        return self._finish_module(m)

    def module(self, c):
        name = _strip(c[0][:-1] if c[0].type == "PARAM_NAME" else c[0])
        attrs = {}
        tables = ir.StackFrameTables()
        comps = []
        raw_attrs = []
        for x in c[1:]:
            if isinstance(x, ir.Computation):
                comps.append(x)
            elif isinstance(x, tuple) and x and x[0] == "table":
                _, tname, rows = x
                {"FileNames": tables.file_names, "FunctionNames": tables.function_names,
                 "FileLocations": tables.file_locations, "StackFrames": tables.stack_frames}[tname].extend(rows)
            else:
                raw_attrs.append(x)
        attrs = decode_header_attrs(raw_attrs, self.ctx)
        if comps and not any(x.is_entry for x in comps):
            comps[-1].is_entry = True
        m = ir.Module(name=name, computations=comps, attrs=attrs, stack_frames=tables)
        source = self.ctx.source
        keyword = source.text.rfind("HloModule", 0, c[0].start_pos)
        m.loc = self._loc(keyword) if keyword >= 0 else None
        m.attr_locs = {n: self._loc(pos) for n, pos, _ in raw_attrs}
        layout = m.attr_locs.get("entry_computation_layout")
        if layout is not None:
            m.entry_layout_param_locs, m.entry_layout_result_loc = self._signature_locs(
                layout.offset + len("entry_computation_layout="))
        return self._finish_module(m)

    def _signature_locs(self, start: int):
        """(locations of the parameters, location of the result) of the program shape `(A, ...) -> R`
        whose '(' is at or after `start` on its line; (None, None) when there is none."""
        got = signature_offsets(self.ctx.source.text, start)
        if got is None:
            return None, None
        params, result = got
        return [self._loc(o) for o in params], (self._loc(result) if result is not None else None)

    def _finish_module(self, m: ir.Module) -> ir.Module:
        # [shape inference] Result shapes the text omits are inferred, as XLA's parser does, by the
        # shape rules the caller passes (the syntax knows no shape rules; hlo_interp.frontend does).
        comps = self.ctx.inline_computations + m.computations
        fill = self.ctx.fill_shapes
        if fill is not None and any(any(map(_is_none, map(_shape_of, c.instructions))) for c in comps):  # rare
            failed = fill(ir.Module(m.name, comps, m.attrs))
            if failed is not None:
                raise self._err_at_loc(failed[0].loc, failed[1])
        if "entry_computation_layout" not in m.attrs and m.computations:
            layout = _entry_layout(m.entry)
            if layout is not None:
                # XLA's parser derives it from the entry computation; printing it keeps parse∘print exact.
                m.attrs = _insert_after(m.attrs, "entry_computation_layout", layout,
                                        ("is_scheduled", "input_output_alias", "buffer_donor",
                                         "alias_passthrough_params"))
        if self.ctx.inline_computations:
            _name_inline_computations(self.ctx.inline_computations, m.computations)
            m.computations = self.ctx.inline_computations + m.computations
        entries = [x for x in m.computations if x.is_entry]
        if len(entries) > 1:
            second = entries[1]
            raise HloError("expects only one ENTRY computation", filename=self.ctx.source.filename,
                           line=second.loc.line if second.loc else None,
                           column=second.loc.column if second.loc else None,
                           source_line=self.ctx.source.line_text(second.loc.line) if second.loc else None)
        seen: dict[str, ir.Computation] = {}
        for comp in m.computations:
            if comp.name in seen:
                raise self._err_at_loc(comp.loc, f"computation already exists: {comp.name}")
            seen[comp.name] = comp
        return m

    def header_attr(self, c):
        return _attr_triple(c[0], c[1])

    def stack_table(self, c):
        return ("table", str(c[0]), c[1:])

    def table_string(self, c):
        return (int(c[0]), _unescape(c[1], self.ctx, c[1].start_pos))

    def table_record(self, c):
        return (int(c[0]), c[1])

    # ---- computations
    def computation(self, c):
        is_entry = c[0] is _ENTRY
        i = 1 if is_entry else 0
        name_tok = c[i]
        i += 1
        params = result = None
        if i < len(c) and isinstance(c[i], tuple) and c[i] and c[i][0] == "sig":
            _, params, result = c[i]
            i += 1
        instrs: list[ir.Instruction] = []
        attrs_raw = []
        for x in c[i:]:
            if type(x) is _InstrBlock:
                instrs.extend(x.instrs)
            elif isinstance(x, _InstrResult):
                instrs.extend(x.hoisted)
                instrs.append(x.ins)
            else:
                attrs_raw.append(x)
        loc = self._loc(name_tok.start_pos)
        comp = ir.Computation(name=_strip(name_tok), instructions=instrs, is_entry=is_entry,
                              params=params, result_shape=result, loc=loc)
        if params is not None:
            text = self.ctx.source.text
            brace, paren = text.find("{", loc.offset), text.find("(", loc.offset)
            if paren >= 0 and not 0 <= brace < paren:
                comp.param_locs, comp.result_loc = self._signature_locs(loc.offset)
        if attrs_raw:
            comp.attrs = decode_computation_attrs(attrs_raw, self.ctx)
        self._check_instructions(comp)
        return comp

    def computation_no_params(self, c):
        """`ENTRY main() -> f32[4] {`: the name and `()` came as one OP_CALL_FAST token."""
        i = 1 if c[0] is _ENTRY else 0
        tok = c[i]
        paren = tok.index("(")
        if tok[paren + 1:-1].strip():
            raise self._err_at_loc(self._loc(tok.start_pos + paren + 1),
                                   "expected ')' or a parameter (name: shape)")
        name = _lexer.HloToken("NAME", str(tok[:paren]))
        name.start_pos = tok.start_pos
        return self.computation(c[:i] + [name, ("sig", [], c[i + 1])] + c[i + 2:])

    def _check_instructions(self, comp: ir.Computation) -> None:
        instrs = comp.instructions
        if len(set(map(_name_of, instrs))) != len(instrs):  # (the common case in one C-level pass)
            seen: dict[str, ir.Instruction] = {}
            for ins in instrs:
                if ins.name in seen:
                    prev = seen[ins.name]
                    err = self._err_at_loc(ins.loc, f"instruction already exists: {ins.name}")
                    if prev.loc:
                        err.notes.append(f"previously defined at line {prev.loc.line}")
                    raise err
                seen[ins.name] = ins
        roots = list(compress(instrs, map(_is_root_of, instrs)))
        comp.root_marked = bool(roots)
        if len(roots) > 1:
            raise self._err_at_loc(roots[1].loc, f"computation {comp.name} has more than one ROOT")
        if not roots and comp.instructions:
            last = comp.instructions[-1]
            last.is_root = True
            last.__dict__.pop("canonical_end", None)  # printed with `ROOT `, written without

    def entry_kw(self, c):
        return _ENTRY

    def root_kw(self, c):
        return _ROOT

    def signature(self, c):
        params = [p for p in c[:-1] if p is not None]
        return ("sig", params, c[-1])

    def param(self, c):
        return (_strip(c[0][:-1]), c[1])

    def param_no_colon(self, c):
        return (_strip(c[0]), c[1])

    def comp_attr(self, c):
        return _attr_triple(c[0], c[1])

    # ---- instructions
    def instruction(self, c):
        is_root = c[0] is _ROOT
        name_tok = c[1] if is_root else c[0]
        rhs = c[-1]
        if name_tok.type == "INSTR_DEF":
            name = name_tok[:name_tok.index("=")].rstrip()
            return self._make_instruction(_strip(name), name_tok.start_pos, is_root, rhs)
        return self._make_instruction(_strip(name_tok), name_tok.start_pos, is_root, rhs)

    def instruction_attr_name(self, c):
        is_root = c[0] is _ROOT
        name_tok = c[1] if is_root else c[0]
        rhs = c[-1]
        return self._make_instruction(_strip(name_tok[:-1]), name_tok.start_pos, is_root, rhs)

    def _make_instruction(self, name, pos, is_root, rhs):
        shape, opcode, opcode_pos, operands, literal, param_no, attrs, hoisted, offsets = rhs
        ins = ir.Instruction(name=name, opcode=opcode, shape=shape, operands=operands,
                             literal=literal, parameter_number=param_no, is_root=is_root,
                             loc=self._loc(pos), operand_offsets=offsets)
        if opcode not in ("constant", "parameter") and self.ctx.last_operand_shapes is not None:
            ins.operand_shapes = self.ctx.last_operand_shapes
        self.ctx.last_operand_shapes = None
        decode_instruction_attrs(ins, attrs, self.ctx)
        if ins.attrs:
            _check_attr_forms(ins, self)
        return _InstrResult(ins, hoisted)

    def fast_block(self, lines: list) -> _InstrBlock:
        return _InstrBlock(lines)

    def fast_line(self, data) -> ir.Instruction:
        """The instruction of one line read by lexer.HloLexer._fast_instruction: what the rules make
        of its tokens (instruction, rhs_fast/rhs_op/rhs_constant, the attributes decoded per the
        opcode table), built directly.  A metadata={...} value of keys and plain strings or integers
        stays text until the instruction's attrs are first read (ir.Instruction.pending_metadata).
        A line that is exactly what the printer writes for it gets `canonical_end`."""
        (is_root, name, name_pos, shape_text, shape_pos, form, opcode, args, args_pos, raw_attrs, end, _) = data
        got = _LINE_SHAPES.get(shape_text)
        source = self.ctx.source
        if got is None:
            if shape_text[0] == "(":  # a tuple of SHAPE_FASTs: what tuple_shape makes of them
                shape = ir.TupleShape(tuple(_fast_shape(m.group(), shape_pos + m.start(), source)
                                            for m in _FAST_SHAPE_RE.finditer(shape_text)))
            else:
                shape = _fast_shape(shape_text, shape_pos, source)
            got = _LINE_SHAPES[shape_text] = (shape, ir.shape_text(shape) == shape_text)
        shape, canonical = got
        if name[0] == "%":
            name = name[1:]
        else:
            canonical = False
        if end < 0:
            canonical = False
        literal = param_no = None
        if form == _FAST_CALL_CANON:  # `%a, %b` as the printer writes it
            operands = args[1:].split(", %") if args else []
            offsets = args_pos
        elif form == _FAST_CALL:  # `%a, %b`: where each name is, is worked out when asked for
            if args:  # (names have no '%' or ' ' in them)
                operands = args.replace("%", "").replace(" ", "").split(",")
                n = len(operands)
                if canonical and (n > 5 or args.count("%") != n or args.count(" ") != n - 1):
                    canonical = False
            else:
                operands = []
            offsets = args_pos
        elif form == _FAST_PARAMETER:
            operands = []
            param_no = int(args)
            offsets = ()
            if canonical and str(param_no) != args:
                canonical = False
        elif form == _FAST_OPERANDS:  # what rhs_op makes of plain operand names
            found = [(m.group(1), args_pos + m.start()) for m in _OPERAND_NAMES.finditer(args)]
            operands = [n for n, _ in found]
            offsets = tuple(o for _, o in found)
            if canonical and args != ", ".join(("%" if i % 5 or not i else f"/*index={i}*/%") + o
                                               for i, o in enumerate(operands)):
                canonical = False
        else:
            literal = parse_literal_body(args, args_pos, shape, source, _parse_literal_tree)
            operands = []
            offsets = ()
            canonical = False  # printed by the printer, not checked here
        if not raw_attrs:
            ins = _new_instruction(name, opcode, shape, operands, {}, literal, param_no, is_root,
                                   ir.Location(source, name_pos), (), offsets)
            if canonical:
                ins.canonical_end = end
            return ins
        if len(raw_attrs) == 1:
            key, _, kind, vtext, _ = raw_attrs[0]
            if key == "metadata" and kind <= _V_KV and "\\" not in vtext:
                # The common line of a dump: its only attribute is metadata, kept as text (what the
                # loop below does with it: every opcode takes metadata, the one common attribute of
                # its kind).
                if canonical and kind == _V_KV and (_CANONICAL_METADATA or _canonical_metadata())(vtext) is None:
                    canonical = False
                ins = _new_instruction(name, opcode, shape, operands, _PENDING_METADATA, literal, param_no,
                                       is_root, ir.Location(source, name_pos), raw_attrs, offsets)
                ins.pending_metadata = vtext
                if canonical:
                    ins.canonical_end = end
                return ins
        keys = (raw_attrs[0][0],) if len(raw_attrs) == 1 else tuple([a[0] for a in raw_attrs])
        line_plan = self.ctx.line_plans.get((opcode, keys))
        if line_plan is None:
            line_plan = self._line_plan(opcode, keys)
        plan, caches = line_plan
        if plan is False:  # unknown or repeated attributes: the general decoding (and its messages)
            ins = ir.Instruction(name, opcode, shape, operands, {}, literal, param_no, is_root,
                                 ir.Location(source, name_pos), {}, (), None, offsets)
            decode_instruction_attrs(ins, [(key, key_pos, self._fast_generic(kind, vtext, vpos))
                                           for key, key_pos, kind, vtext, vpos in raw_attrs], self.ctx)
            if ins.attrs:
                _check_attr_forms(ins, self)
            return ins
        specs, perm, check, in_order = plan
        if not in_order:
            canonical = False
        vals = []
        pending = None
        for (key, key_pos, kind, vtext, vpos), spec, cache in zip(raw_attrs, specs, caches):
            if kind <= _V_KV and spec.kind == "metadata" and "\\" not in vtext:
                pending = vtext
                vals.append(None)
                if canonical and kind == _V_KV and (_CANONICAL_METADATA or _canonical_metadata())(vtext) is None:
                    canonical = False
                continue
            ckey = vtext if vtext is not None else kind
            got = cache.get(ckey)
            if got is None:
                try:
                    v = decode_value(spec, self._fast_generic(kind, vtext, vpos), opcode)
                except BadAttribute as e:
                    raise HloError.at(source, key_pos, str(e)) from None
                got = (v, vtext is not None and attr_value_text(spec.kind, v) == vtext)
                if spec.kind not in ("metadata", "frontend"):  # dicts: one per instruction
                    cache[ckey] = got
            vals.append(got[0])
            if not got[1]:
                canonical = False
        attrs = {keys[0]: vals[0]} if len(vals) == 1 else dict(zip(keys, vals)) if in_order else \
            {keys[i]: vals[i] for i in perm}
        ins = _new_instruction(name, opcode, shape, operands, attrs, literal, param_no, is_root,
                               ir.Location(source, name_pos), raw_attrs, offsets)
        if pending is not None:
            ins.pending_metadata = pending
        if check:
            _check_attr_forms(ins, self)
        if canonical:
            ins.canonical_end = end
        return ins

    def _line_plan(self, opcode: str, keys: tuple) -> tuple:
        """(the attribute plan of an opcode with these attribute names, this parse's cache of decoded
        values for each of them), remembered per parse under (opcode, keys)."""
        plan = _FAST_PLANS.get((opcode, keys))
        if plan is None:
            plan = _FAST_PLANS[(opcode, keys)] = _fast_attr_plan(opcode, keys)
        value_cache = self.ctx.value_cache
        caches = [value_cache.setdefault((opcode, k), {}) for k in keys]
        got = self.ctx.line_plans[(opcode, keys)] = (plan, caches)
        return got

    def _fast_generic(self, kind: int, vtext: Optional[str], vpos: int):
        """The generic value (what the attribute rules make) of a fast attribute value."""
        if kind <= _lexer.V_INTS:
            cache = self.ctx.brace_cache
            v = cache.get(vtext)
            if v is None:
                v = self._kv_braces(vtext, vpos) if kind != _lexer.V_INTS else _ints_braces(vtext)
                cache[vtext] = v
            return v
        if kind == _lexer.V_NAME:
            return ir.GName(vtext[1:] if vtext[0] == "%" else vtext)
        if kind == _lexer.V_INT:
            return int(vtext)
        if kind == _lexer.V_STRING:
            return ir.GString(_unescape(vtext, self.ctx, vpos), vtext[0])
        if kind == _lexer.V_EMPTY:
            return ir.GBraces((), ())
        if kind == _lexer.V_JSON:
            return ir.GRaw("json", vtext)
        if kind == _lexer.V_RAW:  # what `attr` makes of the value's tokens
            return _gval(_run(self.ctx.source, "value", vpos, vpos + len(vtext)))
        if kind == _lexer.V_SLICE:
            items = tuple(ir.GBrackets((ir.GSliceRange(tuple(int(x) for x in r if x)),))
                          for r in _SLICE_RANGES.findall(vtext))
            return ir.GBraces(items, (True,) * (len(items) - 1))
        return kind == _lexer.V_TRUE

    def fast_instruction(self, block: _InstrBlock) -> _InstrBlock:
        """The value of a FAST token of instruction lines (built as the lexer read them)."""
        return block

    def rhs_constant(self, c):
        shape = c[0] if isinstance(c[0], (ir.ArrayShape, ir.TupleShape, ir.BufferShape)) else None
        i = 1 if shape is not None else 0
        op_tok, body = c[i], c[i + 1]
        if shape is None:
            raise HloError.at(self.ctx.source, op_tok.start_pos,
                              "constant needs a result shape: e.g. f32[] constant(1)")
        literal = parse_literal_body(body, body.start_pos, shape, self.ctx.source, _parse_literal_tree)
        return (shape, "constant", op_tok.start_pos, [], literal, None, c[i + 2:], [], ())

    def rhs_op(self, c):
        shape = c[0] if isinstance(c[0], (ir.ArrayShape, ir.TupleShape, ir.BufferShape)) else None
        i = 1 if shape is not None else 0
        op_tok = c[i]
        opcode = str(op_tok)
        operands: list[str] = []
        offsets: list[int] = []
        hoisted: list[ir.Instruction] = []
        attrs = []
        param_no = None
        operand_shapes = None
        for x in c[i + 1:]:
            if x is None:
                continue
            if isinstance(x, _Ref):
                if x.shape is not None:
                    if operand_shapes is None:
                        operand_shapes = [None] * len(operands)
                    operand_shapes.append(x.shape)
                    operands.append(x.name)
                    offsets.append(x.pos)
                    continue
                operands.append(x.name)
                offsets.append(x.pos)
            elif isinstance(x, tuple):
                attrs.append(x)
            elif isinstance(x, _Nested):
                hoisted.extend(x.hoisted)
                hoisted.append(x.ins)
                operands.append(x.ins.name)
                offsets.append(x.ins.loc.offset)
            elif isinstance(x, Token) and x.type == "INT":
                if opcode != "parameter" or param_no is not None:
                    raise HloError.at(self.ctx.source, x.start_pos,
                                      "expected an operand name, found an integer"
                                      + ("" if opcode == "parameter" else
                                         " (only parameter(N) takes a number)"))
                param_no = int(x)
            else:  # pragma: no cover - every operand form is one of the above
                raise TypeError(f"unexpected operand {x!r}")
            if operand_shapes is not None and len(operand_shapes) < len(operands):
                operand_shapes.append(None)
        if opcode == "parameter":
            if param_no is None:
                raise HloError.at(self.ctx.source, op_tok.start_pos,
                                  "parameter needs its number: parameter(0)")
        self.ctx.last_operand_shapes = operand_shapes
        return (shape, opcode, op_tok.start_pos, operands, None, param_no, attrs, hoisted, tuple(offsets))

    def rhs_fast(self, c):
        shape = c[0] if isinstance(c[0], (ir.ArrayShape, ir.TupleShape, ir.BufferShape)) else None
        i = 1 if shape is not None else 0
        tok = c[i]
        text = str(tok)
        paren = text.index("(")
        if text.startswith("parameter("):
            raise HloError.at(self.ctx.source, tok.start_pos, "parameter needs its number: parameter(0)")
        operands, offsets = _split_operands(text[paren + 1:-1], tok.start_pos + paren + 1)
        return (shape, text[:paren], tok.start_pos, operands, None, None, c[i + 1:], [], offsets)

    def fast_signature(self, data):
        """The value of the `signature` rule for a FAST token (lexer.HloLexer._fast_signature)."""
        params, results, is_tuple = data
        shapes = _FAST_SHAPES
        source = self.ctx.source
        out = []
        for name, text in params:
            shape = shapes.get(text)
            if shape is None:
                shape = shapes[text] = _decode_fast_shape(text, 0, source)
            out.append((name[1:] if name[0] == "%" else name, shape))
        res = []
        for text in results:
            shape = shapes.get(text)
            if shape is None:
                shape = shapes[text] = _decode_fast_shape(text, 0, source)
            res.append(shape)
        return ("sig", out, ir.TupleShape(tuple(res)) if is_tuple else res[0])

    def ints_fast(self, c):
        text = str(c[0])
        cache = self.ctx.brace_cache
        v = cache.get(text)
        if v is None:
            v = cache[text] = _ints_braces(text)
        return v

    def kv_fast(self, c):
        tok = c[0]
        text = str(tok)
        cache = self.ctx.brace_cache
        v = cache.get(text)
        if v is None:
            v = cache[text] = self._kv_braces(text, tok.start_pos)
        return v

    def _kv_braces(self, text: str, pos: int) -> ir.GBraces:
        """The KV_FAST token `{op_name="a" source_line=3}` (items, immutable, cached per text)."""
        items = []
        commas = []
        cache = self.ctx.kv_item_cache
        for item in _KV_ITEM.findall(text):
            kv = cache.get(item)
            if kv is None:
                key, sval, ival, sep = item
                if sval:
                    v = ir.GString(_unescape(sval, self.ctx, pos))
                else:
                    v = int(ival)
                kv = cache[item] = ir.GKeyVal(key, v)
            items.append(kv)
            if item[3]:
                commas.append(item[3] == ",")
        return ir.GBraces(tuple(items), tuple(commas))

    def operand_ref(self, c):
        if len(c) == 2:
            return _Ref(_strip(c[1]), c[0], c[1].start_pos)
        return _Ref(_strip(c[-1]), None, c[-1].start_pos)

    def operand_int(self, c):
        return c[0]

    def _anon_name(self, opcode: str) -> str:
        """XLA's name for a nested operand: `<opcode>.anon`, then `.1`, `.2`, ... per name."""
        base = f"{opcode}.anon"
        n = self.ctx.anon_counts.get(base, 0)
        self.ctx.anon_counts[base] = n + 1
        return base if n == 0 else f"{base}.{n}"

    def operand_nested(self, c):
        shape = c[0] if isinstance(c[0], (ir.ArrayShape, ir.TupleShape, ir.BufferShape)) else None
        rhs = self.rhs_op(c)
        _, opcode, pos, operands, _, param_no, attrs, hoisted, offsets = rhs
        ins = ir.Instruction(name=self._anon_name(opcode), opcode=opcode, shape=shape,
                             operands=operands, parameter_number=param_no, loc=self._loc(pos),
                             operand_offsets=offsets)
        return _Nested(ins, hoisted)

    def operand_nested_fast(self, c):
        shape = c[0] if isinstance(c[0], (ir.ArrayShape, ir.TupleShape, ir.BufferShape)) else None
        _, opcode, pos, operands, _, param_no, _, _, offsets = self.rhs_fast(c)
        ins = ir.Instruction(name=self._anon_name(opcode), opcode=opcode, shape=shape,
                             operands=operands, parameter_number=param_no, loc=self._loc(pos),
                             operand_offsets=offsets)
        return _Nested(ins, [])

    def operand_constant(self, c):
        rhs = self.rhs_constant(c)
        shape, _, pos, _, literal, _, _, _, _ = rhs
        ins = ir.Instruction(name=self._anon_name("constant"), opcode="constant", shape=shape,
                             literal=literal, loc=self._loc(pos))
        return _Nested(ins, [])

    def attr(self, c):
        return _attr_triple(c[0], c[1])

    # ---- generic attribute values
    def int(self, c):
        return int(c[0])

    def float(self, c):
        return ir.GRaw("float", str(c[0]))

    def string(self, c):
        tok = c[0]
        return ir.GString(_unescape(tok, self.ctx, tok.start_pos), tok[0])

    def true(self, c):
        return True

    def false(self, c):
        return False

    def dxd(self, c):
        return ir.GRaw("dxd", str(c[0]))

    def pad(self, c):
        return ir.GRaw("pad", str(c[0]))

    def dim_labels(self, c):
        return ir.GRaw("dim_labels", str(c[0]))

    def sparsity(self, c):
        return ir.GRaw("sparsity", str(c[0]))

    def json(self, c):
        return ir.GRaw("json", str(c[0]))

    def braces(self, c):
        items = []
        commas = []
        pending_comma = False
        key = None
        for x in c:
            if x is None:
                continue
            if isinstance(x, Token):
                if x.type == "COMMA":
                    pending_comma = True
                    continue
                if x.type == "ATTR_NEXT":
                    pending_comma = True
                    key = _attr_name(x)
                    continue
                if x.type == "NAME":
                    x = ir.GName(_strip(x))
            if key is not None:
                x = ir.GKeyVal(key, _gval(x) if not isinstance(x, Token) or x.type != "INT" else int(x))
                key = None
            if items:
                commas.append(pending_comma)
            pending_comma = False
            items.append(x)
        return ir.GBraces(tuple(items), tuple(commas))

    def keyval(self, c):
        v = c[1]
        if isinstance(v, Token):
            v = int(v) if v.type == "INT" else ir.GName(_strip(v))
        return ir.GKeyVal(str(c[0])[:-1], v)

    def keyval_empty(self, c):
        return ir.GKeyVal(str(c[0])[:-1], None)

    def program_shape(self, c):
        params = c[0].elements if isinstance(c[0], ir.TupleShape) else (c[0],)
        return ir.GProgramShape(tuple(params), c[1])

    def alias_entry(self, c):
        # a malformed entry is reported by the attribute's decoder, located at the attribute
        try:
            idx = _int_tuple(c[0], self.ctx)
        except HloError as e:
            return BadAliasEntry(f"output index: {e.message}")
        t = alias_of_paren(c[1])
        if t is None:
            return BadAliasEntry("expected an aliasing entry like {0}: (0, {}, may-alias)")
        return ir.GAliasEntry(idx, t.param_number, t.param_index, t.kind)

    def colon_pair(self, c):
        return ir.GColonPair(c[0], c[1])

    def paren_list(self, c):
        return ir.GParen(tuple(_gval(x) for x in c if x is not None))

    def paren_value(self, c):
        return ir.GParen(c[0].items, c[1]) if c[1] is not None else c[0]

    def paren_iota(self, c):
        dims = tuple(c[0].items)
        perm = None
        for x in c[1:]:
            if isinstance(x, tuple) and x and x[0] == "m2m":
                perm = x[1]
        return ir.GParenIota(dims, perm)

    def shaped_value(self, c):
        v = c[1]
        if isinstance(v, Token):
            v = int(v) if v.type == "INT" else ir.GRaw("float", str(v))
        return ir.GShapedValue(c[0], v)

    def shaped_true(self, c):
        return ir.GShapedValue(c[0], True)

    def shaped_false(self, c):
        return ir.GShapedValue(c[0], False)

    def mesh(self, c):
        return ir.GMesh(_strip(c[0]), c[1], c[2] if len(c) > 2 else None)

    def sub_axis(self, c):
        return ir.GSubAxis(self.string([c[0]]), c[1], int(c[2]))

    def keyval_quoted(self, c):
        return ir.GKeyVal(str(c[0]), int(c[1]))

    def unknown_dim(self, c):
        return ir.GUnknownDim()

    def brackets(self, c):
        items = []
        key = None
        for x in c:
            if x is None:
                continue
            if isinstance(x, Token):
                if x.type == "ATTR_NEXT":
                    key = _attr_name(x)
                    continue
                if x.type == "NAME":
                    x = ir.GName(_strip(x))
                elif x.type == "INT":
                    x = int(x)
            if key is not None:
                x = ir.GKeyVal(key, x)
                key = None
            items.append(x)
        return ir.GBrackets(tuple(items))

    def slice_range(self, c):
        return ir.GSliceRange(tuple(int(x) for x in c))

    def iota_list(self, c):
        dims = tuple(c[0].items)
        reshape = tuple(c[1].items)
        perm = None
        if len(c) > 2 and isinstance(c[-1], tuple) and c[-1] and c[-1][0] == "m2m":
            perm = c[-1][1]
        for part in (dims, reshape):
            if not all(isinstance(v, int) for v in part):
                raise HloError("iota list dimensions must be integers", filename=self.ctx.source.filename)
        return ir.GIotaList(dims, reshape, perm)

    # ---- shapes
    def array_shape(self, c):
        tok = c[0]
        et = PRIMITIVE_TYPES[str(tok)]
        layout = c[-1] if isinstance(c[-1], ir.Layout) else None
        dims = []
        dyn = []
        any_dyn = False
        for d in c[1:]:
            if d is None or isinstance(d, ir.Layout):
                continue
            size, is_dyn = d
            dims.append(size)
            dyn.append(is_dyn)
            any_dyn = any_dyn or is_dyn
        dims_t = tuple(dims)
        if layout is None:
            if et.is_array_type:
                layout = _default_layout(len(dims_t))
        elif layout.minor_to_major and len(layout.minor_to_major) != len(dims_t) or (
                not layout.minor_to_major and dims_t and not layout.has_extras):
            raise HloError.at(self.ctx.source, tok.start_pos,
                              f"layout has {len(layout.minor_to_major)} dimensions, "
                              f"but the shape has {len(dims_t)}")
        _check_dims(dims_t, dyn, et, self.ctx.source, tok.start_pos)
        return ir.ArrayShape(et, dims_t, tuple(dyn) if any_dyn else (False,) * len(dims_t), layout)

    def shape_fast(self, c):
        text = str(c[0])
        shape = _FAST_SHAPES.get(text)
        if shape is None:
            shape = _FAST_SHAPES[text] = _decode_fast_shape(text, c[0].start_pos, self.ctx.source)
        return shape

    def tuple_shape(self, c):
        return ir.TupleShape(tuple(x for x in c if x is not None))

    def buffer_shape(self, c):
        return ir.BufferShape(c[1])

    def dim_static(self, c):
        return (int(c[0]), False)

    def dim_bounded(self, c):
        return (int(c[-1]), True)

    def dim_unbounded(self, c):
        return (ir.UNBOUNDED, True)

    def layout(self, c):
        m2m: tuple[int, ...] = ()
        kw: dict[str, Any] = {}
        for x in c[1:]:
            if x is None:
                continue
            if isinstance(x, tuple) and x and x[0] == "m2m":
                m2m = x[1]
            else:
                key, val = x
                kw[key] = val
        return ir.Layout(m2m, **kw)

    def int_list(self, c):
        return ("m2m", tuple(int(x) for x in c))

    def layout_dim_levels(self, c):
        return ("dim_level_types", str(c[0]))

    def layout_tiles(self, c):
        return ("tiles", tuple(x for x in c[1:] if isinstance(x, tuple)))

    def tile_dims(self, c):
        return tuple(int(x) for x in c if x is not None)  # `*` arrives as ir.TILE_COMBINE

    def tile_combine(self, c):
        return ir.TILE_COMBINE

    def layout_fn(self, c):
        key = {"L": "tail_padding_alignment", "E": "element_size_bits", "S": "memory_space",
               "M": "dynamic_prefix_bytes"}[str(c[0])[0]]
        return (key, int(c[1]))

    def layout_index_type(self, c):
        return ("index_type", PRIMITIVE_TYPES[str(c[-1])])

    def layout_pointer_type(self, c):
        return ("pointer_type", PRIMITIVE_TYPES[str(c[-1])])

    def layout_split_configs(self, c):
        return ("split_configs", tuple(x for x in c[1:] if isinstance(x, tuple)))

    def split_config(self, c):
        return (int(c[0]), tuple(int(x) for x in c[1:]))

    def layout_physical_shape(self, c):
        return ("physical_shape", c[1])

    # ---- literals (start="literal"; see literals.py)
    def literal(self, c):
        return c[0]

    def lit_int(self, c):
        return ("i", str(c[0]))

    def lit_float(self, c):
        return ("f", str(c[0]))

    def lit_true(self, c):
        return True

    def lit_false(self, c):
        return False

    def lit_array(self, c):
        return [x for x in c if x is not None]

    def lit_ints_fast(self, c):
        return [("i", x) for x in str(c[0])[1:-1].split(",")]

    def lit_tuple(self, c):
        return LitTuple(x for x in c if x is not None)

    def lit_elided(self, c):
        return ELIDED

    def lit_with_shape(self, c):
        return ("shaped", c[0], c[1])

    # ---- helpers
    def _loc(self, pos: int) -> ir.Location:
        return ir.Location(self.ctx.source, pos)

    def _err_at_loc(self, loc: Optional[ir.Location], message: str) -> HloError:
        src = self.ctx.source
        if loc is None:
            return HloError(message, filename=src.filename)
        return HloError(message, filename=src.filename, line=loc.line, column=loc.column,
                        source_line=src.line_text(loc.line))


# (loops over every instruction of a computation, run in C)
_name_of, _is_root_of, _shape_of = attrgetter("name"), attrgetter("is_root"), attrgetter("shape")
_is_none = functools.partial(is_, None)
_OPERAND_NAMES = re.compile(r"%([A-Za-z_][\w.-]*)")
_FAST_CALL, _FAST_PARAMETER, _FAST_OPERANDS = _lexer.FAST_CALL, _lexer.FAST_PARAMETER, _lexer.FAST_OPERANDS
_FAST_CALL_CANON = _lexer.FAST_CALL_CANON
_V_KV = _lexer.V_KV
_SLICE_RANGES = re.compile(r"\[([-+]?[0-9]+):([-+]?[0-9]+)(?::([-+]?[0-9]+))?\]")
_new_instruction = ir.parsed_instruction
# The attributes of every instruction whose only attribute is metadata left as text: one dict, never
# changed (ir.Instruction.attrs copies it when it decodes the text; attrs_as_parsed is read only).
_PENDING_METADATA = {"metadata": None}
_MISSING = object()
# (opcode, attribute names as written) -> (their specs, the order of their indices in canonical
# order, whether _check_attr_forms has something to check), or False: unknown or repeated names
_FAST_PLANS: dict[tuple, Any] = {}
_FORM_CHECKED = frozenset({"control-predecessors", "padding", "replica_groups"})


def _fast_attr_plan(opcode: str, keys: tuple[str, ...]):
    by_name, order = schema(opcode)
    if len(set(keys)) != len(keys) or any(k not in by_name for k in keys):
        return False
    specs = tuple(by_name[k] for k in keys)
    perm = tuple(keys.index(n) for n in order if n in keys)
    return specs, perm, any(k in _FORM_CHECKED for k in keys), perm == tuple(range(len(keys)))


def _split_operands(args: str, start: int) -> tuple[list[str], tuple[int, ...]]:
    """The names in `%a, %b` (the text inside an operand list, at offset `start`) and where each is."""
    if not args:
        return [], ()
    names, offsets = [], []
    k = start
    for piece in args.split(","):
        name = piece.lstrip()
        offsets.append(k + len(piece) - len(name))
        names.append(_strip(name.rstrip()))
        k += len(piece) + 1
    return names, tuple(offsets)


# Positions inside a program shape `(A, B, ...) -> R` (computation signatures, entry_computation_layout)

def _skip_space_comments(text: str, k: int) -> int:
    while True:
        while k < len(text) and text[k] in " \t\r\n":
            k += 1
        if text.startswith("/*", k) and text.find("*/", k) > 0:
            k = text.find("*/", k) + 2
        else:
            return k


_GROUP_CHARS = re.compile(r"[][(){},]")


def _group_items(text: str, i: int) -> Optional[tuple[list[int], int]]:
    """Offsets of the top-level, comma-separated items of the group opening at text[i] ('(' or '{'),
    and the offset just past its closing bracket; None when it does not close."""
    depth = 0
    items: list[int] = []
    start = i + 1
    for m in _GROUP_CHARS.finditer(text, i):  # (the characters that matter, found in C)
        c = m.group()
        j = m.start()
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
            if depth == 0:
                if text[start:j].strip():
                    items.append(_skip_space_comments(text, start))
                return items, j + 1
        elif c == "," and depth == 1:
            items.append(_skip_space_comments(text, start))
            start = j + 1
    return None


def signature_offsets(text: str, i: int) -> Optional[tuple[list[int], Optional[int]]]:
    """For a program shape `(A, B, ...) -> R` whose '(' is at or after text[i] (on the same line): the
    offsets of each parameter item and of the result shape (None when there is no `->`)."""
    end = text.find("\n", i)
    open_ = text.find("(", i, end if end >= 0 else len(text))
    if open_ < 0:
        return None
    got = _group_items(text, open_)
    if got is None:
        return None
    items, after = got
    k = after
    while k < len(text) and text[k] in " \t":
        k += 1
    if not text.startswith("->", k):
        return items, None
    k += 2
    while k < len(text) and text[k] in " \t":
        k += 1
    return items, k


def _check_attr_forms(ins: ir.Instruction, builder: "_Builder") -> None:
    """Attribute values our generic syntax reads but XLA's parser refuses (hlo_parser.cc):
    an empty control-predecessors list (ParseInstructionNames wants at least one name), an empty
    padding config (ParsePaddingConfig wants a token like 0_0; a rank-0 pad cannot be written), and
    mesh replica groups with unquoted axis names (their axis names are strings: 'a'=2, {'a'})."""
    attrs = ins.attrs
    if "control-predecessors" in attrs and not attrs["control-predecessors"]:
        raise builder._err_at_loc(ins.attr_locs.get("control-predecessors", ins.loc),
                                  "expects an instruction name: control-predecessors={} is empty (XLA's "
                                  "parser wants at least one name; leave the attribute out instead)")
    if "padding" in attrs and ins.opcode == "pad" and attrs["padding"] == ():
        raise builder._err_at_loc(ins.attr_locs.get("padding", ins.loc),
                                  "expects padding config, e.g., '0_0_0x3_3_1': padding={} is not one "
                                  "(XLA's parser cannot read a pad of a rank-0 operand)")
    rg = attrs.get("replica_groups")
    mesh = getattr(rg, "mesh", None)
    if isinstance(mesh, ir.GMesh):
        bare = [x.key for x in getattr(mesh.brackets, "items", ())
                if isinstance(x, ir.GKeyVal) and not x.key.startswith(("'", '"'))]
        bare += [x.text for x in getattr(mesh.axes, "items", ()) if isinstance(x, ir.GName)]
        if bare:
            raise builder._err_at_loc(ins.attr_locs.get("replica_groups", ins.loc),
                                      f"expects string: the axis names of mesh replica groups are "
                                      f"quoted ('{bare[0]}', not {bare[0]})")


def _ints_braces(text: str) -> ir.GBraces:
    """The INTS_FAST token `{0,1}`."""
    vals = tuple(int(x) for x in text[1:-1].split(","))
    return ir.GBraces(vals, (True,) * (len(vals) - 1))


_KV_ITEM = re.compile(r'([A-Za-z_][\w.-]*)=(?:("(?:[^"\\\n]|\\.)*")|(-?[0-9]+))([ ,]?)')
_CANONICAL_METADATA = None  # canonical_metadata().fullmatch, once compiled


def _canonical_metadata():
    global _CANONICAL_METADATA
    _CANONICAL_METADATA = canonical_metadata().fullmatch
    return _CANONICAL_METADATA


_FAST_SHAPES: dict[str, ir.ArrayShape] = {}
_LINE_SHAPES: dict[str, tuple[ir.Shape, bool]] = {}  # and whether the text is the printer's
_FAST_SHAPE_RE = re.compile(r"(\w+)\[([0-9,]*)\](?:\{([0-9,]*)\})?")


def _fast_shape(text: str, pos: int, source: SourceText) -> ir.ArrayShape:
    """The shape of a SHAPE_FAST token's text (one object per text)."""
    shape = _FAST_SHAPES.get(text)
    if shape is None:
        shape = _FAST_SHAPES[text] = _decode_fast_shape(text, pos, source)
    return shape


def _decode_fast_shape(text: str, pos: int, source: SourceText) -> ir.ArrayShape:
    """The SHAPE_FAST token `f32[4,8]{1,0}`: type, static dimensions, minor_to_major."""
    et_name, dims_s, m2m_s = _FAST_SHAPE_RE.fullmatch(text).groups()
    et = PRIMITIVE_TYPES[et_name]
    dims = tuple(int(d) for d in dims_s.split(",")) if dims_s else ()
    _check_dims(dims, (False,) * len(dims), et, source, pos)
    if m2m_s is None:
        layout = _default_layout(len(dims))
    else:
        layout = ir.Layout(tuple(int(d) for d in m2m_s.split(",")) if m2m_s else ())
        if len(layout.minor_to_major) != len(dims):
            raise HloError.at(source, pos, f"layout has {len(layout.minor_to_major)} dimensions, "
                                           f"but the shape has {len(dims)}")
    return ir.ArrayShape(et, dims, (False,) * len(dims), layout)


def _attr_name(tok) -> str:
    """The name in an ATTR (`name=`) or ATTR_NEXT (`, name=`) token."""
    if tok.type == "ATTR_NEXT":
        return tok[1:-1].lstrip()
    return tok[:-1]


def _attr_triple(tok, value):
    """(name, offset of the name, value) of an attribute."""
    name = _attr_name(tok)
    pos = tok.start_pos
    if tok.type == "ATTR_NEXT":
        pos += len(tok) - len(name) - 1
    return (name, pos, _gval(value))


def _gval(v):
    if isinstance(v, Token) and v.type == "NAME":
        return ir.GName(_strip(v))
    return v


def _entry_layout(entry: ir.Computation):
    params = entry.parameters()
    if any(p.shape is None for p in params) or entry.root.shape is None:
        return None
    return ir.GProgramShape(tuple(p.shape for p in params), entry.root.shape)


def _insert_after(attrs: dict, key: str, value, before_keys) -> dict:
    out = {}
    placed = False
    for k, v in attrs.items():
        if not placed and k not in before_keys:
            out[key] = value
            placed = True
        out[k] = v
    if not placed:
        out[key] = value
    return out


def _int_tuple(braces, ctx) -> tuple[int, ...]:
    items = braces.items if isinstance(braces, ir.GBraces) else braces
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in items):
        raise HloError("expected a list of integers like {0,1}", filename=ctx.source.filename)
    return tuple(items)


# absl::CUnescape: `\x` takes ALL the hex digits that follow (the value must fit in a byte), an octal
# escape up to three digits, `\u` four and `\U` eight hex digits (a code point).
_ESCAPES = re.compile(r"\\(x[0-9a-fA-F]+|[0-7]{1,3}|u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8}|.)", re.S)
_SIMPLE_ESC = {"n": "\n", "t": "\t", "r": "\r", "\\": "\\", '"': '"', "'": "'", "a": "\a", "b": "\b",
               "f": "\f", "v": "\v", "?": "?"}


def _unescape(tok: str, ctx, pos: int) -> str:
    """C-style unescaping of a quoted string token (absl::CUnescape)."""
    body = tok[1:-1]
    if "\\" not in body:
        return body

    def rep(m):
        e = m.group(1)
        if e[0] in "xuU" and len(e) > 1:
            v = int(e[1:], 16)
            if e[0] == "x" and v > 0xFF or v > 0x10FFFF:
                raise HloError.at(ctx.source, pos, f"value of '\\{e}' exceeds {'0xff' if e[0] == 'x' else 'U+10FFFF'}")
            return chr(v)
        if e[0] in "01234567":
            v = int(e, 8)
            if v > 0xFF:
                raise HloError.at(ctx.source, pos, f"value of '\\{e}' exceeds 0xff")
            return chr(v)
        if e in _SIMPLE_ESC:
            return _SIMPLE_ESC[e]
        raise HloError.at(ctx.source, pos, f"invalid escape sequence '\\{e}' in string")

    return _ESCAPES.sub(rep, body)


# --------------------------------------------------------------------------------------------------
# The parser object (built once, LALR tables cached by Lark)

_BUILDER = _Builder()


@functools.lru_cache(maxsize=1)
def _lark() -> "lark.Lark":
    """Lark's analysis of the grammar (tools/make_lalr_table.py writes it out as lalr_table.py; the
    parser uses it directly only while that table is stale, i.e. during grammar development)."""
    from lark import Lark
    from lark.lexer import Lexer

    class _LarkHloLexer(_lexer.HloLexer, Lexer):
        pass

    text = grammar_text()
    _lexer.set_grammar_text(text)
    kw = dict(parser="lalr", lexer=_LarkHloLexer, start=["hlo", "literal", "shape", "value"],
              transformer=_BUILDER, maybe_placeholders=True, propagate_positions=False)
    cache = _cache_file(text)
    if cache is not None:
        try:  # the grammar analysis, cached: 0.2 s -> 0.015 s of every process's start-up
            return Lark(text, cache=cache, **kw)
        except Exception:  # noqa: BLE001 - an unwritable or corrupt cache only costs time
            pass
    return Lark(text, **kw)


@functools.lru_cache(maxsize=1)
def _table():
    """The precomputed LALR table (syntax/lalr_table.py) if it is that of the grammar file, else None."""
    import zlib
    from . import lalr_table
    text = grammar_text()
    if zlib.crc32(text.encode()) != lalr_table.GRAMMAR_CRC32 or len(text) != lalr_table.GRAMMAR_LENGTH:
        return None
    _lexer.set_grammar_text(text)
    return lalr_table


def _cache_file(grammar: str) -> Optional[str]:
    """Where Lark keeps its analysis of this grammar (per grammar text, Lark and Python version), or
    None when HLO_INTERP_NO_CACHE is set or no cache directory can be made."""
    import hashlib
    import os
    import sys
    import lark
    if os.environ.get("HLO_INTERP_NO_CACHE"):
        return None
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    key = hashlib.sha256(f"{grammar}\0{lark.__version__}\0{sys.version}".encode()).hexdigest()[:16]
    d = os.path.join(base, "hlo-interp")
    try:
        os.makedirs(d, exist_ok=True)
    except OSError:
        return None
    return os.path.join(d, f"grammar-{key}.lark-cache")


_GLOG_PREFIX = re.compile(r"^[IWEF][0-9]{4} [0-9][0-9]:[0-9][0-9]:[0-9][0-9]\.[0-9]+ +[0-9]+ [^\]\n]*\] ", re.M)


def strip_log_prefixes(text: str) -> str:
    """Blank out glog prefixes (`I1123 08:47:03.123456  12345 file.cc:12] `) of HLO pasted from logs.
    The prefix is replaced by spaces, so line and column numbers stay those of the original."""
    if "0000 00:00:00." not in _digits_zeroed(text) or not _GLOG_PREFIX.search(text):
        return text
    return _GLOG_PREFIX.sub(lambda m: " " * len(m.group()), text)


def parse_module(text: str, filename: str = "<string>", fill_shapes: Optional[FillShapes] = None, *,
                 canonical_lines: bool = False) -> ir.Module:
    """Parse HLO module text (with or without the `HloModule` header).  Result shapes the text omits
    are filled in by `fill_shapes` (module -> None, or (instruction, message) for one it cannot infer,
    reported as a parse error there); without it they stay None.  hlo_interp.frontend passes the
    shape rules.  `canonical_lines`: mark the instructions written exactly as the printer writes them
    (ir.Instruction.canonical_end), for a printer that copies them (PrintOptions.reuse_source: what
    `hlo fmt` does); the module is otherwise the same."""
    text = strip_log_prefixes(text)
    source = SourceText(text, filename)
    try:
        m = _parse(source, "hlo", fill_shapes=fill_shapes, canonical_lines=canonical_lines)
    except HloError:
        _refuse_several_modules(text, filename, source, fill_shapes)
        raise
    m.filename = filename
    return m


def _refuse_several_modules(text: str, filename: str, source: "SourceText", fill_shapes=None) -> None:
    """A text of several `// -----`-separated modules where one is expected: say so (at the first
    separator) instead of reporting the second module's header as a syntax error."""
    first = _SPLIT.search(text) if SPLIT_MARKER in text else None
    if first is None:
        return
    try:
        n = len(parse_modules(text, filename, fill_shapes))
    except HloError:
        return  # a real syntax error in one of them: report that
    if n > 1:
        line = text.count("\n", 0, first.start()) + 1
        raise HloError(f"this text holds {n} modules separated by '// -----' lines, and one module is "
                       f"expected here: split the file (hlo fmt and hlo check read every module; in "
                       f"Python, hlo_interp.parse_all)", filename=filename, line=line, column=1,
                       source_line=source.line_text(line)) from None


SPLIT_MARKER = "// -----"
_SPLIT = re.compile(r"^// -----[ \t]*$", re.M)


def parse_modules(text: str, filename: str = "<string>", fill_shapes: Optional[FillShapes] = None, *,
                  canonical_lines: bool = False) -> list[ir.Module]:
    """Parse a text of one or more modules separated by `// -----` lines (hlo-opt
    --split-input-file style).  Locations stay those of the whole text.  `fill_shapes` and
    `canonical_lines` as for parse_module."""
    text = strip_log_prefixes(text)
    source = SourceText(text, filename)
    cuts = [m.start() for m in _SPLIT.finditer(text)] if SPLIT_MARKER in text else []
    if not cuts:
        m = _parse(source, "hlo", fill_shapes=fill_shapes, canonical_lines=canonical_lines)
        m.filename = filename
        return [m]
    bounds = []
    start = 0
    for c in cuts:
        bounds.append((start, c))
        start = text.index("\n", c) + 1 if "\n" in text[c:] else len(text)
    bounds.append((start, len(text)))
    modules = []
    for a, b in bounds:
        chunk = re.sub(r"//[^\n]*|/\*.*?\*/", "", text[a:b], flags=re.S)
        if not chunk.strip():
            continue
        m = _parse(source, "hlo", a, b, fill_shapes=fill_shapes, canonical_lines=canonical_lines)
        m.filename = filename
        modules.append(m)
    if not modules:
        raise HloError("empty input: expected an HloModule or a computation", filename=filename,
                       line=1, column=1, source_line=source.line_text(1))
    return modules


def _parse_literal_tree(source: SourceText, start: int, end: int):
    """Parse source.text[start:end] with the `literal` rule (called while a module is being parsed)."""
    return _run(source, "literal", start, end)


@functools.lru_cache(maxsize=1)
def _driver():
    from .driver import Driver
    table = _table()
    if table is not None:
        driver = Driver.from_table(table, _BUILDER)
        lexer = _lexer.HloLexer(_TableTerminals(table))
    else:  # the grammar changed since tools/make_lalr_table.py ran: Lark's analysis, as before
        lk = _lark()
        lexer = _lexer.HloLexer(lk.lexer_conf)
        driver = Driver(lk)
    driver.fast_builders = {"instruction": _BUILDER.fast_instruction, "signature": _BUILDER.fast_signature}
    lexer.build_line = _BUILDER.fast_line
    lexer.build_block = _BUILDER.fast_block
    return driver, lexer


class _TableTerminals:
    """The lexer configuration (its terminals) from the precomputed table."""

    def __init__(self, table):
        self.terminals = [_lexer.Terminal(name, _lexer.Pattern(kind, value, regexp))
                          for name, kind, value, regexp in table.TERMINALS]


def _run(source: SourceText, start_rule: str, start: int = 0, end: int | None = None, fast: bool = False,
         canonical: bool = False):
    driver, lexer = _driver()
    from .driver import SyntaxErrorAt

    class _State:
        text = _lexer.LexInput(source, start, end, fast, canonical)

    end_pos = len(source.text) if end is None else end
    end_tok = _lexer.HloToken("$END", "")
    end_tok.start_pos = end_pos
    try:
        return driver.parse(lexer.lex(_State, None), start_rule, end_tok)
    except SyntaxErrorAt as e:
        raise _syntax_error(source, UnexpectedToken(e.token, e.expected)) from None


def parse_shape(text: str) -> ir.Shape:
    return _parse(SourceText(text, "<shape>"), "shape")


# Read common instruction lines and computation signatures as one token each (lexer.py, driver.py);
# False: token by token, as the grammar reads them.  Both give the same IR and the same errors.
FAST_TOKENS = True


def _parse(source: SourceText, start: str, begin: int = 0, end: int | None = None,
           fill_shapes: Optional[FillShapes] = None, canonical_lines: bool = False):
    ctx = _Ctx(source, fill_shapes)
    _BUILDER.ctx = ctx
    if not source.text[begin:end].strip():
        raise HloError("empty input: expected an HloModule or a computation", filename=source.filename,
                       line=1, column=1, source_line="")
    _refuse_huge_integers(source, begin, end)
    import gc
    gc_was_enabled = gc.isenabled()
    gc.disable()  # the IR is acyclic-heavy allocation; collections during a parse only cost time
    try:
        if start == "hlo" and FAST_TOKENS:
            # Whole-nonterminal tokens (lexer.HloLexer._fast_instruction).  Any failure parses
            # again token by token, so that every message is the one the grammar gives.
            try:
                return _run(source, start, begin, end, fast=True, canonical=canonical_lines)
            except Exception:  # noqa: BLE001 - reported by the second run
                ctx = _Ctx(source, fill_shapes)
                _BUILDER.ctx = ctx
        return _run(source, start, begin, end)
    except HloError:
        raise
    except VisitError as e:  # an error raised inside a callback
        if isinstance(e.orig_exc, HloError):
            raise e.orig_exc from None
        raise
    except UnexpectedInput as e:
        raise _syntax_error(source, e) from None
    except RecursionError:
        raise HloError(f"input nested too deeply (more than {MAX_NESTING} levels)",
                       filename=source.filename) from None
    finally:
        _LAST_ZEROED[:] = [None, ""]
        if gc_was_enabled:
            ir.age_new_objects()  # the module's objects: old from now on
            gc.enable()


# Words for the grammar's terminals, for "expected ..." messages.
_TERMINAL_WORDS = {
    "NAME": "a name", "INT": "an integer", "FLOAT": "a number", "SPECIAL_FLOAT": "inf or nan",
    "STRING": "a string", "ATTR": "an attribute (name=value)", "PARAM_NAME": "a parameter (name: shape)",
    "PRIMITIVE_TYPE": "a shape such as f32[4]", "DXD": "a size like 3x3", "PAD": "a padding like 0_0x1_1",
    "DIM_LABELS": "dimension labels like b01f_01io->b01f", "JSON_DICT": "a JSON dict",
    "LITERAL_BODY": "a literal", "OPCODE_CONSTANT": "constant(", "TABLE_NAME": "a table name",
    "LAYOUT_OPEN": "a layout '{'", "TILE_OPEN": "a tile T(...)", "SPARSITY": "a sparsity descriptor",
    "DIM_LEVELS": "D(...)", "LAYOUT_FN": "a layout item", "SPLIT_OPEN": "SC(", "PHYSICAL_OPEN": "P(",
    "BUFFER_OPEN": "b(", "ARROW": "'->'", "LE": "'<='", "DOTS": "'...'", "$END": "end of input",
    "SHAPE_FAST": "a shape such as f32[4]", "OP_CALL_FAST": "an instruction such as add(%a, %b)",
    "INTS_FAST": "'{'", "KV_FAST": "'{'", "COMMA": "','", "INSTR_DEF": "an instruction (name = ...)",
    "ATTR_NEXT": "', name='",
}


@functools.lru_cache(maxsize=1)
def _terminal_strings() -> dict[str, str]:
    out = {}
    table = _table()
    terminals = _TableTerminals(table).terminals if table is not None else _lark().terminals
    for t in terminals:
        if t.pattern.type == "str":
            out[t.name] = f"'{t.pattern.value}'"
    return out


def _describe_terminal(name: str) -> str:
    if name in _TERMINAL_WORDS:
        return _TERMINAL_WORDS[name]
    return _terminal_strings().get(name, name)


def _describe_expected(expected) -> str:
    words = sorted({_describe_terminal(n) for n in expected})
    # Prefer the few most useful alternatives; long lists help nobody.
    if len(words) > 6:
        words = words[:6] + ["..."]
    if len(words) == 1:
        return words[0]
    return ", ".join(words[:-1]) + " or " + words[-1]


def _describe_token(tok) -> str:
    if tok.type == "$END":
        return "end of input"
    value = str(tok)
    if len(value) > 40:
        value = value[:37] + "..."
    if tok.type in ("NAME", "ATTR", "PARAM_NAME"):
        return f"'{value}'"
    return f"'{value}'"


def _syntax_error(source: SourceText, e: UnexpectedInput) -> HloError:
    if isinstance(e, UnexpectedToken):
        tok = e.token
        pos = tok.start_pos if tok.type != "$END" or tok.start_pos is not None else len(source.text)
        if tok.type == "$END":
            pos = len(source.text.rstrip())
            return HloError.at(source, max(pos - 1, 0) if pos else 0,
                               f"unexpected end of input; expected {_describe_expected(e.expected)}")
        if tok.type == "LSQB":
            m = re.search(r"[A-Za-z_][\w.-]*$", source.text[:pos])
            if m:
                return HloError.at(source, m.start(), f"'{m.group()}' is not an element type "
                                                      "(pred, s8..s64, u8..u64, f16, bf16, f32, f64, c64, ...)")
        if tok.type == "ATTR_NEXT":
            name = _attr_name(tok)
            pos = tok.start_pos + len(tok) - len(name) - 1
            msg = f"expected {_describe_expected(e.expected)}, found attribute '{name}='"
            if "RPAR" in e.expected:
                msg += " (attributes come after the closing ')', and nested instructions take none)"
            return HloError.at(source, pos, msg)
        msg = f"expected {_describe_expected(e.expected)}, found {_describe_token(tok)}"
        hint = _hint(source, tok, e.expected)
        if hint:
            msg += f" ({hint})"
        return HloError.at(source, pos, msg)
    if isinstance(e, UnexpectedEOF):
        return HloError.at(source, max(len(source.text.rstrip()) - 1, 0),
                           f"unexpected end of input; expected {_describe_expected(e.expected)}")
    if isinstance(e, UnexpectedCharacters):
        return HloError.at(source, e.pos_in_stream, f"unexpected character {source.text[e.pos_in_stream]!r}")
    return HloError(str(e), filename=source.filename)


def _hint(source: SourceText, tok, expected) -> str:
    text = source.text
    if tok.type == "HLOMODULE":
        return "a second module: separate modules with a '// -----' line (hlo_interp.parse_all)"
    if tok.type == "OP_CALL_FAST" and "PRIMITIVE_TYPE" in expected:
        return "a nested instruction needs its shape: add(f32[] sqrt(%x), %y)"
    if tok.type in ("NAME", "INSTR_DEF") and "ATTR" in expected:
        rest = text[tok.start_pos + len(tok.split("=")[0]):][:3]
        if rest.lstrip().startswith("="):
            return "no space is allowed between an attribute name and '='"
    if tok.type == "ATTR" and any(text[tok.start_pos:].startswith(k) for k in ()):
        return ""
    return ""
