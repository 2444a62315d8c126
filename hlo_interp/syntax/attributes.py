"""Attribute decoding: the generic attribute syntax of grammar/hlo.lark (the `G*` values of ir.py) ->
typed values, per the attribute kinds of the opcode table (opcodes.py: an opcode's `attrs`,
COMMON_ATTRS, HEADER_ATTRS, COMPUTATION_ATTRS).  The parser calls decode_instruction_attrs,
decode_header_attrs and decode_computation_attrs; printing each kind back is syntax/printer.py's.
An attribute the table does not know is kept as its generic syntax tree.
"""
from __future__ import annotations

import re
from typing import Any, Callable, Optional

from .. import ir
from ..diagnostics import HloError
from ..opcodes import COMMON_ATTRS, COMPUTATION_ATTRS, HEADER_ATTRS, AttrSpec, schema_for
from .literals import format_literal, int_range

_COMMON_BY_NAME = {a.name: a for a in COMMON_ATTRS}
# result_accuracy is printed after statistics: keep it there for ops that have it.
_LATE_OPCODE_ATTRS = {"result_accuracy"}


# --------------------------------------------------------------------------------------------------
# Decoders: generic syntax -> typed value.  Each raises _Bad(message) on a wrong form.

class _Bad(Exception):
    pass


def _is_int(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _d_int(v):
    if _is_int(v):
        return v
    raise _Bad("expected an integer")


def _d_bool(v):
    if isinstance(v, bool):
        return v
    raise _Bad("expected true or false")


_FLT_MAX = 3.4028234663852886e38


def _d_float(v):
    """A float attribute (epsilon=): read as a double, and refused beyond f32's range as XLA's parser
    does (kFloat: "value out of range for float"); NaN passes, as there."""
    if _is_int(v):
        x = float(v)
    elif isinstance(v, ir.GRaw) and v.kind == "float":
        x = float(v.text)
    else:
        raise _Bad("expected a number")
    if x > _FLT_MAX or x < -_FLT_MAX:
        raise _Bad("value out of range for float")
    return x


def _d_string(v):
    if isinstance(v, ir.GString):
        return v.text
    raise _Bad('expected a string in double quotes')


def _d_enum(v):
    if isinstance(v, ir.GName):
        return v.text
    raise _Bad("expected a name")


def _d_comp(v):
    if isinstance(v, ir.GName):
        return v.text
    if isinstance(v, ir.GBraces) and v.items and all(isinstance(x, InlineInstruction) for x in v.items):
        return v  # an inline computation; the parser turns it into a computation
    raise _Bad("expected a computation name")


def _d_names(v):
    if isinstance(v, ir.GBraces) and all(isinstance(x, ir.GName) for x in v.items):
        return tuple(x.text for x in v.items)
    raise _Bad("expected a list of names like {%a, %b}")


def _d_comps(v):
    if isinstance(v, ir.GBraces) and all(
            isinstance(x, ir.GName) or (isinstance(x, ir.GBraces) and x.items and
                                        all(isinstance(i, InlineInstruction) for i in x.items))
            for x in v.items):
        return tuple(x.text if isinstance(x, ir.GName) else x for x in v.items)
    raise _Bad("expected a list of computation names like {%a, %b}")


def _d_ints(v):
    if isinstance(v, ir.GBraces) and all(_is_int(x) for x in v.items):
        return tuple(v.items)
    raise _Bad("expected a list of integers like {0,1}")


def _d_bools(v):
    if isinstance(v, ir.GBraces) and all(isinstance(x, bool) for x in v.items):
        return tuple(v.items)
    if isinstance(v, bool):
        return v
    raise _Bad("expected {true,false,...}")


def _d_enums(v):
    if isinstance(v, ir.GBraces) and all(isinstance(x, ir.GName) for x in v.items):
        return tuple(x.text for x in v.items)
    raise _Bad("expected a list of names like {default,default}")


def _d_int_lists(v):
    if isinstance(v, ir.GBraces) and all(
            isinstance(g, ir.GBraces) and all(_is_int(x) for x in g.items) for g in v.items):
        return tuple(tuple(g.items) for g in v.items)
    raise _Bad("expected a list of integer lists like {{0,1},{1,0}}")


def _d_replica_groups(v):
    if isinstance(v, ir.GMesh):
        return ir.ReplicaGroups(mesh=v)
    if isinstance(v, ir.GIotaList):
        if v.transpose is not None and sorted(v.transpose) != list(range(len(v.reshape_dims))):
            raise _Bad("the T(...) of an iota list must be a permutation of the reshape dimensions")
        return ir.ReplicaGroups(iota=v)
    return ir.ReplicaGroups(groups=_d_int_lists(v))


def _dxd(text_or_int) -> tuple[int, ...]:
    if _is_int(text_or_int):
        return (text_or_int,)
    if isinstance(text_or_int, ir.GRaw) and text_or_int.kind == "dxd":
        return tuple(int(x) for x in text_or_int.text.split("x"))
    raise _Bad("expected sizes like 3x3")


def _pads(v) -> list[tuple[int, ...]]:
    if isinstance(v, ir.GBraces) and not v.items:
        return []  # rank 0
    if isinstance(v, ir.GRaw) and v.kind == "pad":
        return [tuple(int(p) for p in re.findall(r"-?\d+", part)) for part in v.text.split("x")]
    raise _Bad("expected padding like 0_0x1_1")


_WINDOW_KEYS = ("size", "stride", "pad", "lhs_dilate", "rhs_dilate", "rhs_reversal")


def _d_window(v):
    if not isinstance(v, ir.GBraces):
        raise _Bad("expected a window like {size=3x3 stride=1x1}")
    fields: dict[str, Any] = {}
    for it in v.items:
        if not isinstance(it, ir.GKeyVal) or it.key not in _WINDOW_KEYS:
            raise _Bad(f"unexpected window item; allowed: {', '.join(_WINDOW_KEYS)}")
        if it.key in fields:
            raise _Bad(f"window item {it.key} given twice")
        fields[it.key] = _pads(it.value) if it.key == "pad" else _dxd(it.value)
    if "size" not in fields:
        if not v.items:
            return ir.Window(())
        raise _Bad("window needs size=")
    n = len(fields["size"])
    for k, vals in fields.items():
        if len(vals) != n:
            raise _Bad(f"window {k} has {len(vals)} dimensions, size has {n}")
    dims = []
    for i in range(n):
        pad = fields.get("pad", [(0, 0)] * n)[i]
        if len(pad) != 2:
            raise _Bad("window pad entries are low_high")
        dims.append(ir.WindowDim(
            size=fields["size"][i], stride=fields.get("stride", [1] * n)[i], pad_low=pad[0],
            pad_high=pad[1], lhs_dilate=fields.get("lhs_dilate", [1] * n)[i],
            rhs_dilate=fields.get("rhs_dilate", [1] * n)[i],
            reversal=bool(fields.get("rhs_reversal", [0] * n)[i])))
    return ir.Window(tuple(dims))


def _d_padding(v):
    dims = []
    for p in _pads(v):
        if len(p) not in (2, 3):
            raise _Bad("padding entries are low_high or low_high_interior")
        dims.append(ir.PaddingDim(*p))
    return tuple(dims)


def _d_slice(v):
    if not isinstance(v, ir.GBraces):
        raise _Bad("expected a slice like {[0:4], [1:8:2]}")
    out = []
    for it in v.items:
        if isinstance(it, ir.GBrackets) and len(it.items) == 1 and isinstance(it.items[0], ir.GSliceRange):
            parts = it.items[0].parts
            out.append(ir.SliceDim(*parts))
        else:
            raise _Bad("expected a slice like {[0:4], [1:8:2]}")
    return tuple(out)


_LABEL_RE = re.compile(r"([0-9bf?]+)_([0-9io?]+)->([0-9bf?]+)")


def _d_dim_labels(v):
    if not (isinstance(v, ir.GRaw) and v.kind == "dim_labels"):
        raise _Bad("expected dimension labels like b01f_01io->b01f")
    m = _LABEL_RE.fullmatch(v.text)
    lhs, rhs, out = m.groups()

    def spatial(s: str) -> tuple[int, ...]:
        digits = sorted((int(ch), i) for i, ch in enumerate(s) if ch.isdigit())
        if [d for d, _ in digits] != list(range(len(digits))):
            raise _Bad(f"spatial dimensions of '{s}' must be 0..{len(digits) - 1}")
        return tuple(i for _, i in digits)

    def pos(s: str, ch: str, what: str) -> int:
        if s.count(ch) != 1:
            raise _Bad(f"'{s}' must contain exactly one '{ch}' ({what})")
        return s.index(ch)

    ls, rs, os_ = spatial(lhs), spatial(rhs), spatial(out)
    if not (len(ls) == len(rs) == len(os_)):
        raise _Bad("input, kernel and output must have the same number of spatial dimensions")
    return ir.ConvDims(v.text, pos(lhs, "b", "batch"), pos(lhs, "f", "feature"), ls,
                       pos(rhs, "i", "input feature"), pos(rhs, "o", "output feature"), rs,
                       pos(out, "b", "batch"), pos(out, "f", "feature"), os_)


def _d_shape(v):
    if isinstance(v, (ir.ArrayShape, ir.TupleShape, ir.BufferShape)):
        return v
    raise _Bad("expected a shape")


def _d_shapes(v):
    if isinstance(v, ir.GBraces) and all(isinstance(x, (ir.ArrayShape, ir.TupleShape, ir.BufferShape))
                                         for x in v.items):
        return tuple(v.items)
    raise _Bad("expected a list of shapes like {f32[2]{0}, s32[]}")


def _d_program_shape(v):
    if isinstance(v, ir.GBraces) and len(v.items) == 1 and isinstance(v.items[0], ir.GProgramShape):
        return v.items[0]
    raise _Bad("expected a program shape like {(f32[4]{0})->f32[4]{0}}")


def _d_alias(v):
    if isinstance(v, ir.GBraces):
        out = []
        for x in v.items:
            if isinstance(x, BadAliasEntry):
                raise _Bad(x.message)
            if isinstance(x, ir.GParen):
                x = alias_of_paren(x)
            if not isinstance(x, ir.GAliasEntry):
                break
            if x.kind is not None and x.kind not in ("may-alias", "must-alias"):
                raise _Bad(f"unexpected aliasing kind {x.kind}: XLA knows may-alias and must-alias")
            out.append(x)
        else:
            return tuple(out)
    raise _Bad("expected aliasing entries like { {0}: (0, {}, may-alias) }")


def _d_metadata(v):
    if not isinstance(v, ir.GBraces):
        raise _Bad('expected metadata like {op_name="..." source_line=1}')
    out = {}
    for it in v.items:
        if not isinstance(it, ir.GKeyVal):
            raise _Bad("metadata items are key=value")
        val = it.value
        if isinstance(val, ir.GString):
            val = val.text
        elif _is_int(val) or isinstance(val, bool):
            pass
        elif isinstance(val, ir.GBraces):
            val = tuple(x.text if isinstance(x, ir.GName) else x for x in val.items)
        elif isinstance(val, ir.GName):
            val = ir.GName(val.text)
        elif val is None:
            raise _Bad(f"metadata item {it.key}= has no value")
        out[it.key] = val
    return out


def _d_frontend(v):
    if not isinstance(v, ir.GBraces):
        raise _Bad('expected frontend attributes like {key="value"}')
    out = {}
    for it in v.items:
        if not isinstance(it, ir.GKeyVal):
            raise _Bad("frontend attributes are key=value")
        val = it.value
        if isinstance(val, ir.GString):
            out[it.key] = val.text
        elif isinstance(val, ir.GRaw) and val.kind == "json":
            out[it.key] = val  # a JSON dict, printed as written
        elif isinstance(val, ir.GBraces) and not val.items:
            out[it.key] = ir.GRaw("json", "{}")
        else:
            raise _Bad('frontend attribute values are strings or JSON dicts')
    return out


def _d_backend_config(v):
    if isinstance(v, ir.GString):
        return v.text
    if isinstance(v, ir.GRaw) and v.kind == "json":
        return v
    if isinstance(v, ir.GBraces) and not v.items:
        return ir.GRaw("json", "{}")
    raise _Bad("expected a string or a JSON dict")


def _d_raw(v):
    if isinstance(v, ir.GRaw):
        return v
    raise _Bad("unexpected value")


def _d_generic(v):
    return v


def _d_sharding(v):
    if isinstance(v, ir.GBraces):
        return v
    raise _Bad("expected a sharding like {replicated}")


class AttrLiteral(ir.Literal):
    """An integer array literal written as an attribute value (shuffle's indices= and multi_shifts=).
    It prints as XLA prints such a literal, shape with layout then the one-line body:
    `s32[3,1]{1,0} { {2}, {0}, {1} }`."""

    def __str__(self) -> str:
        return str(self.shape) + " " + format_literal(self)


def _d_int_literal(v):
    """`s32[3,1]{1,0} { {2}, {0}, {1} }` -> AttrLiteral (an integer array; default layout if none)."""
    if not (isinstance(v, ir.GShapedValue) and isinstance(v.shape, ir.ArrayShape)):
        raise _Bad("expected an integer array literal like s32[2]{0} {1, 0}")
    shape = ir.with_default_layouts(v.shape)
    et = shape.element_type
    if et.kind not in ("sint", "uint") or et.dtype is None:
        raise _Bad(f"expected an integer literal, got element type {et.name}")
    if any(shape.dynamic):
        raise _Bad("a literal cannot have dynamic dimensions")
    flat: list[int] = []

    rank = len(shape.dims)

    def walk(x, level: int) -> None:
        if level == rank:
            if not _is_int(x):
                raise _Bad(f"expected an integer at nesting level {level}")
            flat.append(x)
            return
        if not isinstance(x, ir.GBraces):
            raise _Bad(f"expected a nested list of rank {rank} (dimensions "
                       f"{list(shape.dims)}), found a scalar at nesting level {level}")
        if len(x.items) != shape.dims[level]:
            raise _Bad(f"expected {shape.dims[level]} elements at nesting level {level} (dimensions "
                       f"{list(shape.dims)}), found {len(x.items)}")
        if level == rank - 1 and set(map(type, x.items)) <= {int}:
            flat.extend(x.items)  # the innermost list, all integers (bool is not int's type)
            return
        for item in x.items:
            walk(item, level + 1)

    walk(v.value, 0)
    lo, hi = int_range(et)
    bad = next((x for x in flat if not lo <= x <= hi), None)
    if bad is not None:
        raise _Bad(f"value {bad} is out of range for {et.name} [{lo}, {hi}]")
    import numpy as np
    if et.bits == 64:
        arr = np.array([x & 0xFFFFFFFFFFFFFFFF for x in flat], dtype=np.uint64).view(et.dtype)
    else:
        arr = np.array(flat, dtype=np.int64).astype(et.dtype)
    return AttrLiteral(shape, arr.reshape(shape.dims))


DECODERS: dict[str, Callable[[Any], Any]] = {
    "int": _d_int, "bool": _d_bool, "float": _d_float, "string": _d_string, "enum": _d_enum,
    "comp": _d_comp, "comps": _d_comps, "names": _d_names, "ints": _d_ints, "bools": _d_bools,
    "enums": _d_enums, "int_lists": _d_int_lists, "replica_groups": _d_replica_groups,
    "window": _d_window, "padding": _d_padding, "slice": _d_slice, "dim_labels": _d_dim_labels,
    "shape": _d_shape, "shapes": _d_shapes, "program_shape": _d_program_shape, "alias": _d_alias,
    "alias_compact": _d_alias,
    "metadata": _d_metadata, "frontend": _d_frontend, "backend_config": _d_backend_config,
    "raw": _d_raw, "generic": _d_generic, "sharding": _d_sharding, "int_literal": _d_int_literal,
}


class InlineInstruction:
    """Marker base of the parser's instruction results inside braces (an inline computation,
    `to_apply={ ... }`): the `comp` and `comps` decoders let such a brace list through."""


# --------------------------------------------------------------------------------------------------
# Aliasing entries (input_output_alias=, buffer_donor=)

class BadAliasEntry:
    """An aliasing entry `{..}: (...)` that does not parse as one; the attribute's decoder
    (_d_alias) reports it at the attribute's position."""
    __slots__ = ("message",)

    def __init__(self, message: str):
        self.message = message


def alias_of_paren(p) -> Optional[ir.GAliasEntry]:
    """(param_number, {shape index}[, kind]) -> GAliasEntry, or None if it is not of that form."""
    items = p.items if isinstance(p, ir.GParen) else ()
    if not items or not isinstance(items[0], int) or isinstance(items[0], bool) or len(items) > 3:
        return None
    index: tuple[int, ...] = ()
    kind = None
    for x in items[1:]:
        if isinstance(x, ir.GBraces) and all(isinstance(i, int) for i in x.items):
            index = tuple(x.items)
        elif isinstance(x, ir.GName):
            kind = x.text
        else:
            return None
    return ir.GAliasEntry(None, items[0], index, kind)


# --------------------------------------------------------------------------------------------------
# Decoding an instruction's, a module header's and a computation's attributes

def _decode_one(spec: AttrSpec, value, where: str):
    try:
        return DECODERS[spec.kind](value)
    except _Bad as e:
        raise _Bad(f"attribute {spec.name} of {where}: {e}") from None


_SCHEMA_CACHE: dict[str, tuple[dict[str, AttrSpec], tuple[str, ...]]] = {}


def _schema_cached(opcode: str):
    got = _SCHEMA_CACHE.get(opcode)
    if got is None:
        specs, _ = schema_for(opcode)
        by_name = dict(_COMMON_BY_NAME)
        by_name.update({s.name: s for s in specs})
        order = [s.name for s in specs if s.name not in _LATE_OPCODE_ATTRS]
        for s in COMMON_ATTRS:
            if s.name == "origin":
                order.extend(n for n in _LATE_OPCODE_ATTRS if n in by_name and n not in _COMMON_BY_NAME)
            order.append(s.name)
        got = _SCHEMA_CACHE[opcode] = (by_name, tuple(order))
    return got


BadAttribute = _Bad  # what decode_value raises, with the message (without the attribute's name)


def schema(opcode: str) -> tuple[dict[str, AttrSpec], tuple[str, ...]]:
    """(the opcode's attribute specs by name, common ones included; every name in canonical order)."""
    return _schema_cached(opcode)


def decode_value(spec: AttrSpec, value, where: str):
    """One attribute value of the generic syntax, decoded per its spec; raises BadAttribute."""
    return _decode_one(spec, value, where)


def decode_instruction_attrs(ins: ir.Instruction, raw: list, ctx) -> None:
    """Decode `raw` = [(name, offset, value)] onto ins.attrs, in canonical order."""
    if not raw:
        return
    by_name, order = _schema_cached(ins.opcode)
    decoded: dict[str, Any] = {}
    unknown: dict[str, Any] = {}
    attr_locs = ins.attr_locs
    for name, pos, value in raw:
        if name in attr_locs:
            raise HloError.at(ctx.source, pos, f"attribute {name} already exists")
        attr_locs[name] = ir.Location(ctx.source, pos)
        spec = by_name.get(name)
        if spec is None:
            unknown[name] = value
            continue
        try:
            val = _decode_one(spec, value, ins.opcode)
        except _Bad as e:
            raise HloError.at(ctx.source, pos, str(e)) from None
        if spec.kind == "comp" and isinstance(val, ir.GBraces):
            val = ctx.builder_inline_computation(val, name, ins.name)
        elif spec.kind == "comps" and any(isinstance(x, ir.GBraces) for x in val):
            val = tuple(ctx.builder_inline_computation(x, f"{name}.{i}", ins.name)
                        if isinstance(x, ir.GBraces) else x for i, x in enumerate(val))
        decoded[name] = val
    if unknown:
        # unknown attributes go right after the opcode's own ones
        ordered = {}
        placed = False
        for n in order:
            if not placed and n in _COMMON_BY_NAME:
                ordered.update(unknown)
                placed = True
            if n in decoded:
                ordered[n] = decoded[n]
        if not placed:
            ordered.update(unknown)
        ins.unknown_attrs = tuple(unknown)
    else:
        ordered = {n: decoded[n] for n in order if n in decoded}
    ins.attrs = ordered


def _decode_list(raw: list, specs: tuple[AttrSpec, ...], ctx, where: str) -> dict[str, Any]:
    by_name = {s.name: s for s in specs}
    decoded: dict[str, Any] = {}
    unknown: dict[str, Any] = {}
    for name, pos, value in raw:
        if name in decoded or name in unknown:
            raise HloError.at(ctx.source, pos, f"attribute {name} already exists")
        spec = by_name.get(name)
        if spec is None:
            unknown[name] = value
            continue
        try:
            decoded[name] = _decode_one(spec, value, where)
        except _Bad as e:
            raise HloError.at(ctx.source, pos, str(e)) from None
    out = {s.name: decoded[s.name] for s in specs if s.name in decoded}
    out.update(unknown)
    return out


def decode_header_attrs(raw: list, ctx) -> dict[str, Any]:
    return _decode_list(raw, HEADER_ATTRS, ctx, "HloModule")


def decode_computation_attrs(raw: list, ctx) -> dict[str, Any]:
    return _decode_list(raw, COMPUTATION_ATTRS, ctx, "computation")
