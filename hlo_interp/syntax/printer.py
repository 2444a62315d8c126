"""IR -> canonical HLO text, in the style of XLA's HloModule::ToString (default print options):
`%` names, computation signatures, layouts, `/*index=5*/` markers, attributes in XLA's order.

Differences from XLA, on purpose: instructions stay in the order written (XLA re-sorts them
post-order unless the module is scheduled), and constants are always printed in full (XLA elides
those over 10 elements as `{...}`, which loses data).
"""
from __future__ import annotations

import functools
import re
from typing import Any, Optional

from .. import ir
from ..records import record
from ..opcodes import COMMON_ATTRS, HEADER_ATTRS, schema_for
from .literals import format_literal


@record(frozen=True)
class PrintOptions:
    strip_metadata: bool = False
    strip_backend_config: bool = False
    canonical_names: bool = False
    # Copy the source text of instructions the parser found written exactly as printed
    # (ir.Instruction.canonical_end): only for a module not changed since it was parsed.
    reuse_source: bool = False


# --------------------------------------------------------------------------------------------------
# Shapes and layouts

# The text form of shapes and layouts lives on the IR (`str(shape)`, `shape.text(layouts=False)`);
# these names stay importable from here for the printer's callers.
shape_text = ir.shape_text
layout_text = ir.layout_text


# --------------------------------------------------------------------------------------------------
# Attribute values

_NEEDS_ESCAPE = re.compile(r"[\x00-\x1f\x7f\"'\\]")


def _str(s: str, quote: str = '"') -> str:
    """A C-escaped quoted string (absl::CEscape)."""
    if _NEEDS_ESCAPE.search(s) is None:
        return quote + s + quote  # the common case: nothing to escape
    out = []
    for ch in s:
        o = ord(ch)
        if ch == '"':
            out.append('\\"')
        elif ch == "'":
            out.append("\\'")
        elif ch == "\\":
            out.append("\\\\")
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\t":
            out.append("\\t")
        elif ch == "\r":
            out.append("\\r")
        elif o < 0x20 or o == 0x7F:
            out.append(f"\\{o:03o}")
        else:
            out.append(ch)
    return quote + "".join(out) + quote


def _name(n: str) -> str:
    return "%" + n


def _ints(v) -> str:
    return "{" + ",".join(str(x) for x in v) + "}"


def _window(w: ir.Window) -> str:
    if not w.dims:
        return "{}"
    parts = ["size=" + "x".join(str(d.size) for d in w.dims)]
    if any(d.stride != 1 for d in w.dims):
        parts.append("stride=" + "x".join(str(d.stride) for d in w.dims))
    if any(d.pad_low or d.pad_high for d in w.dims):
        parts.append("pad=" + "x".join(f"{d.pad_low}_{d.pad_high}" for d in w.dims))
    if any(d.lhs_dilate != 1 for d in w.dims):
        parts.append("lhs_dilate=" + "x".join(str(d.lhs_dilate) for d in w.dims))
    if any(d.rhs_dilate != 1 for d in w.dims):
        parts.append("rhs_dilate=" + "x".join(str(d.rhs_dilate) for d in w.dims))
    if any(d.reversal for d in w.dims):
        parts.append("rhs_reversal=" + "x".join(str(int(d.reversal)) for d in w.dims))
    return "{" + " ".join(parts) + "}"


def _padding(p: tuple[ir.PaddingDim, ...]) -> str:
    if not p:
        return "{}"
    interior = any(d.interior for d in p)
    if interior:
        return "x".join(f"{d.low}_{d.high}_{d.interior}" for d in p)
    return "x".join(f"{d.low}_{d.high}" for d in p)


def _slice(s: tuple[ir.SliceDim, ...]) -> str:
    # XLA writes every stride as soon as one of them is not 1.
    strided = any(d.stride != 1 for d in s)
    parts = [f"[{d.start}:{d.limit}:{d.stride}]" if strided else f"[{d.start}:{d.limit}]" for d in s]
    return "{" + ", ".join(parts) + "}"


def _replica_groups(rg: ir.ReplicaGroups) -> str:
    if rg.mesh is not None:
        return generic(rg.mesh)
    if rg.iota is not None:
        return _iota(rg.iota)
    return "{" + ",".join(_ints(g) for g in rg.groups) + "}"


def _iota(it: ir.GIotaList) -> str:
    s = f"[{','.join(map(str, it.dims))}]<=[{','.join(map(str, it.reshape_dims))}]"
    if it.transpose is not None:
        s += f"T({','.join(map(str, it.transpose))})"
    return s


def _alias(entries, compact: bool = False) -> str:
    """input_output_alias / buffer_donor print as `{ {0}: (0, {}, may-alias) }`;
    output_to_operand_aliasing as `{{0}: (0, {})}`."""
    parts = []
    for e in entries:
        t = f"({e.param_number}, {_ints(e.param_index)}" + (f", {e.kind}" if e.kind else "") + ")"
        parts.append(t if e.output_index is None else f"{_ints(e.output_index)}: {t}")
    if not parts:
        return "{}"
    return "{" + ", ".join(parts) + "}" if compact else "{ " + ", ".join(parts) + " }"


_METADATA_ORDER = ("op_type", "op_name", "source_file", "source_line", "source_end_line",
                   "source_column", "source_end_column", "profile_type", "deduplicated_name",
                   "preserve_layout", "scheduling_name", "stack_frame_id")


def canonical_metadata_pattern() -> str:
    """The regex of `{op_name="a" source_line=3}` as _metadata prints it: known keys in its order,
    one space between items, strings with nothing to escape, integers without leading zeros."""
    value = r'(?:"[^"\'\\\x00-\x1f\x7f]*"|-?[1-9][0-9]*|0)'
    items = "".join(rf"(?:{k}={value}(?: (?=[a-z])|(?=\}})))?" for k in _METADATA_ORDER)
    return r"\{" + items + r"\}"


@functools.lru_cache(maxsize=None)
def canonical_metadata() -> "re.Pattern":
    """canonical_metadata_pattern, compiled when first needed (start-up)."""
    return re.compile(canonical_metadata_pattern())


def _metadata(md: dict) -> str:
    keys = [k for k in _METADATA_ORDER if k in md] + [k for k in md if k not in _METADATA_ORDER]
    parts = []
    for k in keys:
        v = md[k]
        if isinstance(v, str):
            parts.append(f"{k}={_str(v)}")
        elif isinstance(v, bool):
            parts.append(f"{k}={'true' if v else 'false'}")
        elif isinstance(v, tuple):
            parts.append(f"{k}={{{','.join(str(x) for x in v)}}}")
        elif isinstance(v, ir.GName):
            parts.append(f"{k}={v.text}")
        else:
            parts.append(f"{k}={v}")
    return "{" + " ".join(parts) + "}"


def _frontend(fa: dict) -> str:
    parts = []
    for k in sorted(fa):
        v = fa[k]
        parts.append(f"{k}={v.text if isinstance(v, ir.GRaw) else _str(v)}")
    return "{" + ",".join(parts) + "}"


def _backend_config(v) -> str:
    return v.text if isinstance(v, ir.GRaw) else _str(v)


def _program_shape(ps: ir.GProgramShape) -> str:
    return "{" + shape_text(ir.TupleShape(ps.params)) + "->" + shape_text(ps.result) + "}"


def _sharding(v: ir.GBraces) -> str:
    """XLA's HloSharding::ToString forms: {replicated}, {maximal device=0},
    {devices=[2,1]0,1 last_tile_dim_replicate}, {devices=[4,2]<=[8]}, tuples {{..}, {..}}."""
    if v.items and all(isinstance(x, ir.GBraces) for x in v.items):
        return "{" + ", ".join(_sharding(x) for x in v.items) + "}"
    out = ""
    items = list(v.items)
    i = 0
    while i < len(items):
        it = items[i]
        if i:
            comma = v.commas[i - 1] if i - 1 < len(v.commas) else False
            out += ", " if comma else " "
        if isinstance(it, ir.GKeyVal) and it.key == "devices" and isinstance(it.value, ir.GBrackets):
            text = f"devices={generic(it.value)}"
            nums = []
            while i + 1 < len(items) and isinstance(items[i + 1], int) and not isinstance(items[i + 1], bool):
                nums.append(str(items[i + 1]))
                i += 1
            out += text + ",".join(nums)
        else:
            out += generic(it)
        i += 1
    return "{" + out + "}"


def generic(v: Any) -> str:
    """Print a value of the generic attribute syntax back as written."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, ir.GName):
        return _name(v.text) if _looks_like_instruction_ref(v.text) else v.text
    if isinstance(v, ir.GString):
        return _str(v.text, v.quote)
    if isinstance(v, ir.GRaw):
        return v.text
    if isinstance(v, ir.GKeyVal):
        return f"{v.key}=" + ("" if v.value is None else generic(v.value))
    if isinstance(v, ir.GBraces):
        if not v.items:
            return "{}"
        out = [generic(v.items[0])]
        for i, item in enumerate(v.items[1:]):
            comma = v.commas[i] if i < len(v.commas) else True
            out.append(("," if comma else " ") + generic(item))
        return "{" + "".join(out) + "}"
    if isinstance(v, ir.GBrackets):
        return "[" + ",".join(generic(x) for x in v.items) + "]"
    if isinstance(v, ir.GSliceRange):
        return ":".join(str(x) for x in v.parts)
    if isinstance(v, ir.GIotaList):
        return _iota(v)
    if isinstance(v, ir.GProgramShape):
        return shape_text(ir.TupleShape(v.params)) + "->" + shape_text(v.result)
    if isinstance(v, ir.GAliasEntry):
        return _alias([v])[2:-2]
    if isinstance(v, ir.GMesh):
        return v.name + generic(v.brackets) + ("" if v.axes is None else " " + generic(v.axes))
    if isinstance(v, ir.GParen):
        return "(" + ",".join(generic(x) for x in v.items) + ")" + (
            "" if v.axes is None else " " + generic(v.axes))
    if isinstance(v, ir.GColonPair):
        return f"{generic(v.left)} : {generic(v.right)}"
    if isinstance(v, ir.GShapedValue):
        return shape_text(v.shape) + " " + generic(v.value)
    if isinstance(v, ir.GParenIota):
        return "[" + ",".join(map(str, v.dims)) + "]" + (
            "" if v.transpose is None else "T(" + ",".join(map(str, v.transpose)) + ")")
    if isinstance(v, ir.GSubAxis):
        return f"{generic(v.name)}:{generic(v.pre)}{v.size}"
    if isinstance(v, ir.GUnknownDim):
        return "?"
    if isinstance(v, (ir.ArrayShape, ir.TupleShape, ir.BufferShape)):
        return shape_text(v)
    if isinstance(v, tuple):
        return "{" + ",".join(generic(x) for x in v) + "}"
    return str(v)


def _looks_like_instruction_ref(text: str) -> bool:
    return False


def attr_value_text(kind: str, v: Any) -> str:
    if kind in ("int", "enum", "raw", "dim_labels") or (kind == "float" and not isinstance(v, float)):
        return v.text if isinstance(v, ir.GRaw) else (v.text if isinstance(v, ir.ConvDims) else str(v))
    if kind == "float":
        return _float_attr(v)
    if kind == "bool":
        return "true" if v else "false"
    if kind == "string":
        return _str(v)
    if kind == "comp":
        return _name(v)
    if kind in ("comps", "names"):
        return "{" + ", ".join(_name(x) for x in v) + "}"
    if kind == "ints":
        return _ints(v)
    if kind == "bools":
        if isinstance(v, bool):
            return "true" if v else "false"
        return "{" + ",".join("true" if x else "false" for x in v) + "}"
    if kind == "enums":
        return "{" + ",".join(v) + "}"
    if kind == "int_lists":
        return "{" + ",".join(_ints(g) for g in v) + "}"
    if kind == "replica_groups":
        return _replica_groups(v)
    if kind == "window":
        return _window(v)
    if kind == "padding":
        return _padding(v)
    if kind == "slice":
        return _slice(v)
    if kind == "shape":
        return shape_text(v)
    if kind == "shapes":
        return "{" + ", ".join(shape_text(s) for s in v) + "}"
    if kind == "program_shape":
        return _program_shape(v)
    if kind == "alias":
        return _alias(v)
    if kind == "alias_compact":
        return _alias(v, compact=True)
    if kind == "metadata":
        return _metadata(v)
    if kind == "frontend":
        return _frontend(v)
    if kind == "backend_config":
        return _backend_config(v)
    if kind == "sharding":
        return _sharding(v)
    return generic(v)


def _float_attr(v: float) -> str:
    s = "%g" % v
    if float(s) != v:
        s = repr(v)
    return s


# --------------------------------------------------------------------------------------------------
# Instructions, computations, modules

def _attr_kinds(opcode: str) -> dict[str, str]:
    specs, _ = schema_for(opcode)
    kinds = {s.name: s.kind for s in COMMON_ATTRS}
    kinds.update({s.name: s.kind for s in specs})
    return kinds


_KINDS_CACHE: dict[str, dict[str, str]] = {}


def instruction_text(ins: ir.Instruction, opts: PrintOptions = PrintOptions(), names=None,
                     comp_names=None) -> str:
    """`names`: instruction renaming within this computation; `comp_names`: computation renaming."""
    nm = (lambda n: names.get(n, n)) if names else (lambda n: n)
    cn = (lambda n: comp_names.get(n, n)) if comp_names else (lambda n: n)
    parts = ["ROOT " if ins.is_root else "", "%", nm(ins.name), " = "]
    if ins.shape is not None:
        parts.append(shape_text(ins.shape))
        parts.append(" ")
    parts.append(ins.opcode)
    parts.append("(")
    if ins.opcode == "constant" and ins.literal is not None:
        parts.append(format_literal(ins.literal))
    elif ins.opcode == "parameter" and ins.parameter_number is not None:
        parts.append(str(ins.parameter_number))
    else:
        ops = []
        for i, o in enumerate(ins.operands):
            t = "%" + nm(o)
            if i and i % 5 == 0:
                t = f"/*index={i}*/" + t
            ops.append(t)
        parts.append(", ".join(ops))
    parts.append(")")
    kinds = _KINDS_CACHE.get(ins.opcode)
    if kinds is None:
        kinds = _KINDS_CACHE[ins.opcode] = _attr_kinds(ins.opcode)
    attrs, pending = ins.attrs_as_parsed()
    if pending is not None and (opts.strip_metadata or canonical_metadata().fullmatch(pending) is None):
        attrs, pending = ins.attrs, None  # decoded (and printed as any metadata)
    for key, val in attrs.items():
        if opts.strip_metadata and key == "metadata":
            continue
        if pending is not None and key == "metadata":
            parts.append(", metadata=")
            parts.append(pending)  # the text as written: what _metadata prints
            continue
        if opts.strip_backend_config and key == "backend_config":
            continue
        kind = "generic" if key in ins.unknown_attrs else kinds.get(key, "generic")
        if kind == "comp":
            val = cn(val)
        elif kind == "comps":
            val = tuple(cn(x) for x in val)
        elif kind == "names":
            val = tuple(nm(x) for x in val)
        parts.append(f", {key}={attr_value_text(kind, val)}")
    return "".join(parts)


def computation_text(comp: ir.Computation, opts: PrintOptions = PrintOptions(), names=None) -> str:
    imap = names.instructions.get(comp.name) if names else None
    cmap = names.computations if names else None
    nm = (lambda n: imap.get(n, n)) if imap else (lambda n: n)
    head = "ENTRY " if comp.is_entry else ""
    params = comp.parameters()
    sig = ""
    if all(p.shape is not None for p in params) and comp.root.shape is not None:
        sig = " (" + ", ".join(f"{nm(p.name)}: {shape_text(p.shape, layouts=False)}" for p in params) + \
              ") -> " + shape_text(comp.root.shape, layouts=False)
    cname = cmap.get(comp.name, comp.name) if cmap else comp.name
    lines = [f"{head}%{cname}{sig} {{"]
    if opts.reuse_source and not (names or opts.strip_metadata or opts.strip_backend_config):
        # Canonical lines are copied from the source; consecutive ones written there as the printer
        # joins them ("\n  " between) are copied as one span.
        run_source = run_text = None
        run_start = run_end = 0
        for ins in comp.instructions:
            end = ins.canonical_end
            if end is not None:
                loc = ins.loc
                start = loc.offset
                # (the common case first: the line right after the run's last one, in the same text)
                if start == run_end + 3 and loc.source is run_source and not ins.is_root \
                        and run_text.startswith("\n  ", run_end):
                    run_end = end
                    continue
                text = loc.source_text
                if ins.is_root:
                    start -= 5
                if not ins.is_root or text.startswith("ROOT ", start):
                    if text is run_text and start == run_end + 3 and text.startswith("\n  ", run_end):
                        run_end = end
                        continue
                    if run_text is not None:
                        lines.append(_indented_span(run_text, run_start, run_end))
                    run_source, run_text, run_start, run_end = loc.source, text, start, end
                    continue
            if run_text is not None:
                lines.append(_indented_span(run_text, run_start, run_end))
                run_source = run_text = None
            lines.append("  " + instruction_text(ins, opts, imap, cmap))
        if run_text is not None:
            lines.append(_indented_span(run_text, run_start, run_end))
    else:
        for ins in comp.instructions:
            lines.append("  " + instruction_text(ins, opts, imap, cmap))
    tail = "}"
    for key, val in comp.attrs.items():
        tail += f", {key}={_str(val) if isinstance(val, str) else generic(val)}"
    lines.append(tail)
    return "\n".join(lines)


def _indented_span(text: str, start: int, end: int) -> str:
    """`  ` + text[start:end], copied once when the text has the two spaces there (a span of lines of
    a large module is most of the output)."""
    if start >= 2 and text.startswith("  ", start - 2):
        return text[start - 2:end]
    return "  " + text[start:end]


def header_text(m: ir.Module) -> str:
    """The `HloModule name, key=value, ...` line."""
    kinds = {s.name: s.kind for s in HEADER_ATTRS}
    parts = [f"HloModule {m.name}"]
    for key, val in m.attrs.items():
        parts.append(f"{key}={attr_value_text(kinds.get(key, 'generic'), val)}")
    return ", ".join(parts)


def tables_text(t: ir.StackFrameTables) -> str:
    """The stack-frame tables (FileNames, FunctionNames, FileLocations, StackFrames) as XLA prints them."""
    blocks = []
    for title, rows in (("FileNames", t.file_names), ("FunctionNames", t.function_names),
                        ("FileLocations", t.file_locations), ("StackFrames", t.stack_frames)):
        if not rows:
            continue
        lines = [title]
        for idx, val in rows:
            lines.append(f"{idx} {_str(val) if isinstance(val, str) else generic(val)}")
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)


@record
class Names:
    """Renaming for --canonical-names: computations by position, instructions tmp_N per computation."""
    computations: dict[str, str]
    instructions: dict[str, dict[str, str]]


def canonical_names(m: ir.Module) -> Names:
    """Names that depend only on structure and order, like XLA's canonical printing (tmp_0, tmp_1,
    ... in each computation), so two dumps that differ only in numbering print the same."""
    comps: dict[str, str] = {}
    n = 0
    for comp in m.computations:
        if comp.is_entry:
            comps[comp.name] = "main"
        else:
            comps[comp.name] = f"computation.{n}"
            n += 1
    instrs = {comp.name: {ins.name: f"tmp_{i}" for i, ins in enumerate(comp.instructions)}
              for comp in m.computations}
    return Names(comps, instrs)


def to_text(m: ir.Module, opts: Optional[PrintOptions] = None, **kw) -> str:
    """The module as canonical HLO text."""
    if opts is None:
        opts = PrintOptions(**kw)
    names = canonical_names(m) if opts.canonical_names else None
    out = [header_text(m), ""]
    if m.stack_frames and not opts.strip_metadata:
        out.append(tables_text(m.stack_frames))
        out.append("")
        out.append("")
    for comp in m.computations:
        out.append(computation_text(comp, opts, names))
        out.append("")
    out.append("")  # (the text ends with a blank line: joined once, not copied again)
    return "\n".join(out)
