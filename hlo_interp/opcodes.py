"""THE opcode table: for each of XLA's 136 opcodes (xla/hlo/ir/hlo_opcode.h) its entry, an `OpSpec`,
holds everything that is a property of the opcode (text name, arity, attribute schema, legal element
types, flags the evaluator, the cost and memory analyses, the verifier and the parser read); and the
attribute kinds, each with the decoder that turns the generic syntax of grammar/hlo.lark into a typed
value.  (Printing of each kind lives in syntax/printer.py.)  Every opcode set elsewhere in the package
is derived from this table.

An attribute is written in a schema as `name:kind` (`!` = required).  The schema order is the order
XLA prints attributes in, which is the canonical order our printer uses.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Callable, Optional

from . import ir
from .diagnostics import HloError

VARIADIC = -1


@dataclass(frozen=True)
class AttrSpec:
    name: str
    kind: str
    required: bool = False


@dataclass(frozen=True)
class OpSpec:
    """One opcode's entry.  Flags default to what a plain computing opcode is; an effectful opcode is
    safe by default (not folded) until declared otherwise."""
    name: str
    arity: int  # VARIADIC for any number
    attrs: tuple[AttrSpec, ...] = ()
    family: str = ""
    # Element types the elementwise shape rule takes (the result keeps the operand's type):
    # "float" (real floating point), "float|complex", "no-pred" (any but pred); "" = the rule decides.
    types: str = ""
    # evaluator: effects beyond its value (kept in a plan even when nothing uses its result)
    side_effect: bool = False
    # evaluator: evaluated once while a plan is built when its operands are constants
    foldable: bool = False
    # evaluator: makes a new value (False: its result is, or is made of, existing values)
    allocates: bool = True
    # memory analysis: defines a buffer of its own (False: views or forwards its operands')
    own_buffer: bool = True
    # cost analysis (XLA's HloCostAnalysis): "free" = no work and no memory traffic, "elementwise" =
    # one flop (or transcendental) per result element, "" = its own rule or the default
    cost: str = ""
    transcendental: bool = False  # counted as transcendentals, not flops
    # XLA's parser infers its result shape when the text omits it (hlo_parser.cc CanInferShape)
    parser_infers: bool = False
    # verifier: its operands may mix floating-point types (CheckMixedPrecisionOperands skips it)
    mixed_precision: bool = False
    # numerics: its float results are computed in their type (False: data movement, conversions,
    # calls), so they say which precision the module computes in
    arithmetic: bool = True
    async_done: str = ""        # the *-done opcode that completes this *-start
    async_sugar: bool = True    # `<op>-start/-update/-done` wrap it in an async computation
    group_checked: bool = False  # XLA's CheckReplicaGroups counts its replica groups' ids
    same_size_groups: bool = True  # its replica groups must all have one size
    plumbing: bool = False      # parameters, constants, tuples: graph summaries leave it out
    label_attrs: tuple[str, ...] = ()  # attributes that tell its instances apart in a graph label

    @property
    def attr_names(self) -> tuple[str, ...]:
        return tuple(a.name for a in self.attrs)


Op = OpSpec  # the older name


def _specs(text: str) -> tuple[AttrSpec, ...]:
    out = []
    for part in text.split():
        name, kind = part.split(":")
        req = kind.endswith("!")
        out.append(AttrSpec(name, kind.rstrip("!"), req))
    return tuple(out)


OPCODES: dict[str, OpSpec] = {}


def _op(names: str, arity: int, attrs: str = "", base: Optional[dict] = None, **fields) -> None:
    """Enter the opcodes `names` (same arity, schema and properties); `base` is a preset of fields
    that `fields` may override."""
    for n in names.split():
        OPCODES[n] = OpSpec(n, arity, _specs(attrs), **{**(base or {}), **fields})


def opcodes_where(pred: Callable[[OpSpec], bool]) -> frozenset[str]:
    """The opcodes whose entry satisfies `pred` (how the package's opcode sets are derived)."""
    return frozenset(n for n, o in OPCODES.items() if pred(o))


# ---- elementwise
# presets: every elementwise opcode folds on constants and costs one flop (or transcendental) per element
_EW = dict(family="elementwise", foldable=True, cost="elementwise", parser_infers=True)
_MOVE = dict(family="elementwise", foldable=True, cost="elementwise", arithmetic=False)  # selects, conversions
_ACCURACY = "result_accuracy:generic"
_op("count-leading-zeros not popcnt", 1, base=_EW)
_op("abs imag is-finite negate real sign", 1, base=_EW, arithmetic=False)
_op("floor ceil round-nearest-afz round-nearest-even", 1, base=_EW, types="float")
_op("copy", 1, family="elementwise", foldable=True, allocates=False, parser_infers=True, arithmetic=False)
_op("cbrt erf", 1, _ACCURACY, base=_EW, types="float", transcendental=True)
_op("cosine cosh exponential exponential-minus-one log log-plus-one logistic rsqrt sine sinh sqrt tan tanh "
    "acos acosh asin asinh atan atanh", 1, _ACCURACY, base=_EW, types="float|complex", transcendental=True)
_op("add multiply mulhi and or xor", 2, base=_EW)
_op("subtract divide remainder shift-left shift-right-arithmetic shift-right-logical", 2, base=_EW,
    types="no-pred")
_op("atan2 power", 2, base=_EW, types="no-pred", transcendental=True)
_op("complex maximum minimum", 2, base=_EW, arithmetic=False)
_op("stochastic-convert", 2, base=_MOVE)
_op("compare", 2, "direction:enum! type:enum", base=_MOVE, parser_infers=True, label_attrs=("direction",))
_op("select clamp", 3, base=_MOVE, parser_infers=True)
_op("convert bitcast-convert", 1, base=_MOVE)
_op("reduce-precision", 1, "exponent_bits:int! mantissa_bits:int!", base=_MOVE, mixed_precision=True)

# ---- data movement
_MV = dict(family="movement", foldable=True, arithmetic=False)
_op("parameter", 0, "parameter_replication:bools", family="movement", allocates=False, cost="free",
    mixed_precision=True, arithmetic=False, plumbing=True)
_op("constant", 0, family="movement", cost="free", mixed_precision=True, arithmetic=False, plumbing=True)
_op("iota", 0, "iota_dimension:int!", base=_MV, label_attrs=("iota_dimension",))
_op("broadcast", 1, "dimensions:ints", base=_MV, parser_infers=True)
_op("reshape", 1, "inferred_dimension:int", base=_MV)
_op("dynamic-reshape", VARIADIC, family="movement", foldable=True)
_op("transpose", 1, "dimensions:ints!", base=_MV, parser_infers=True)
_op("reverse", 1, "dimensions:ints!", base=_MV, parser_infers=True)
_op("slice", 1, "slice:slice!", base=_MV)
_op("dynamic-slice", VARIADIC, "dynamic_slice_sizes:ints!", base=_MV)
_op("dynamic-update-slice", VARIADIC, base=_MV)
_op("concatenate", VARIADIC, "dimensions:ints!", base=_MV, parser_infers=True)
_op("pad", 2, "padding:padding!", base=_MV, parser_infers=True)
_op("bitcast", 1, base=_MV, allocates=False, own_buffer=False, cost="free")
_op("tuple", VARIADIC, base=_MV, allocates=False, own_buffer=False, parser_infers=True, mixed_precision=True,
    plumbing=True)
_op("get-tuple-element", 1, "index:int!", base=_MV, allocates=False, own_buffer=False, cost="free",
    parser_infers=True, mixed_precision=True, plumbing=True, label_attrs=("index",))
_op("get-dimension-size", 1, "dimensions:ints!", family="movement", foldable=True, parser_infers=True)
_op("set-dimension-size", 2, "dimensions:ints!", family="movement", foldable=True, parser_infers=True)
_op("domain", 1, "domain:generic!", base=_MV, allocates=False, own_buffer=False, cost="free",
    parser_infers=True, mixed_precision=True)

# ---- reductions, contractions, windows
# (reductions, maps and scans call a computation: not folded)
_op("reduce", VARIADIC, "dimensions:ints! to_apply:comp!", family="reduce", parser_infers=True)
_op("reduce-window", VARIADIC, "window:window! to_apply:comp!", family="reduce", parser_infers=True,
    mixed_precision=True)
_op("select-and-scatter", 3, "window:window! select:comp! scatter:comp!", family="reduce", parser_infers=True)
_op("map", VARIADIC, "dimensions:ints to_apply:comp!", family="reduce", parser_infers=True)
_op("scan", VARIADIC, "dimensions:ints! num_carries:int! is_reverse:bool is_associative:bool "
                      "to_apply:comp!", family="reduce")
_DOT = ("lhs_batch_dims:ints lhs_contracting_dims:ints rhs_batch_dims:ints rhs_contracting_dims:ints "
        "operand_precision:enums algorithm:enum sparsity:raw")
_CONTRACT = dict(family="dot", foldable=True, parser_infers=True, mixed_precision=True)
_op("dot", 2, _DOT, base=_CONTRACT)  # older sparse dots have a third (metadata) operand: see sparsity
_op("scaled-dot", 4, _DOT, base=_CONTRACT, parser_infers=False)
_op("ragged-dot", 3, _DOT + " lhs_ragged_dims:ints rhs_group_dims:ints", base=_CONTRACT)
_op("convolution", VARIADIC, "window:window dim_labels:dim_labels! feature_group_count:int "
                             "batch_group_count:int operand_precision:enums convolution_kind:enum conv_kind:enum",
    base=_CONTRACT)
_LINALG = dict(family="linalg", foldable=True, parser_infers=True)
_op("fft", 1, "fft_type:enum! fft_length:ints!", base=_LINALG)
_op("triangular-solve", 2, "left_side:bool lower:bool unit_diagonal:bool transpose_a:enum", base=_LINALG)
_op("cholesky", 1, "lower:bool", base=_LINALG)
_op("gather", 2, "offset_dims:ints collapsed_slice_dims:ints start_index_map:ints "
                 "operand_batching_dims:ints start_indices_batching_dims:ints index_vector_dim:int "
                 "slice_sizes:ints! indices_are_sorted:bool", family="gather_scatter", foldable=True,
    parser_infers=True, arithmetic=False)
_op("scatter", VARIADIC, "update_window_dims:ints inserted_window_dims:ints "
                         "scatter_dims_to_operand_dims:ints input_batching_dims:ints "
                         "scatter_indices_batching_dims:ints index_vector_dim:int "
                         "indices_are_sorted:bool unique_indices:bool to_apply:comp!",
    family="gather_scatter", parser_infers=True)
_op("sort", VARIADIC, "dimensions:ints! is_stable:bool to_apply:comp!", family="sort", parser_infers=True,
    mixed_precision=True, arithmetic=False)
_op("topk", 1, "k:int! largest:bool to_apply:comp", family="sort", foldable=True, parser_infers=True)

# ---- control flow and calls
# (calls may loop for long or have effects: not folded; their results are their callees')
_CALL = dict(family="control", allocates=False, parser_infers=True, mixed_precision=True, arithmetic=False)
_op("while", 1, "condition:comp! body:comp!", base=_CALL, own_buffer=False)
_op("conditional", VARIADIC, "true_computation:comp false_computation:comp branch_computations:comps",
    base=_CALL)
_op("call", VARIADIC, "to_apply:comp! is_composite:bool", base=_CALL, own_buffer=False)
_op("fusion", VARIADIC, "kind:enum! calls:comp! output_to_operand_aliasing:alias_compact", base=_CALL,
    parser_infers=False)
_op("custom-call", VARIADIC,
    "custom_call_target:string! window:window dim_labels:dim_labels feature_group_count:int "
    "batch_group_count:int operand_layout_constraints:shapes custom_call_has_side_effect:bool "
    "output_to_operand_aliasing:alias_compact literal:generic schedule:enum padding_type:enum "
    "operand_precision:enums api_version:enum to_apply:comp called_computations:comps",
    family="control", side_effect=True, mixed_precision=True, arithmetic=False,
    label_attrs=("custom_call_target",))
_op("opt-barrier", 1, base=_CALL, foldable=True, own_buffer=False)
_op("after-all", VARIADIC, family="control", allocates=False, own_buffer=False, cost="free", parser_infers=True,
    arithmetic=False)
_op("add-dependency", 2, family="control", foldable=True, allocates=False, own_buffer=False, cost="free",
    parser_infers=True)
# (async pairs: never folded; their -start/-done forms are their own)
_ASYNC = dict(family="async", mixed_precision=True, arithmetic=False, async_sugar=False)
_op("async-start", VARIADIC, "calls:comp! async_execution_thread:string output_to_operand_aliasing:alias_compact",
    base=_ASYNC)
_op("async-update", VARIADIC, "calls:comp async_execution_thread:string", base=_ASYNC)
_op("async-done", 1, "calls:comp async_execution_thread:string", base=_ASYNC)
_op("copy-start", 1, "cross_program_prefetch_index:int", base=_ASYNC, async_done="copy-done")
_op("copy-done", 1, base=_ASYNC)

# ---- randomness, feeds, misc
# (random and stateful: not folded, else one draw would serve every run; rng and its state have no
# async form, left unsupported)
_op("rng", VARIADIC, "distribution:enum!", family="rng", side_effect=True, async_sugar=False)
_op("rng-bit-generator", 1, "algorithm:enum!", family="rng")
_op("rng-get-and-update-state", 0, "delta:int!", family="rng", side_effect=True, async_sugar=False)
_IO = dict(family="io", side_effect=True, mixed_precision=True, arithmetic=False, async_sugar=False)
_op("infeed", 1, "infeed_config:string", base=_IO)
_op("outfeed", 2, "outfeed_shape:shape outfeed_config:string", base=_IO, arithmetic=True)
_op("send", 2, "channel_id:int is_host_transfer:bool", base=_IO)
_op("recv", 1, "channel_id:int is_host_transfer:bool", base=_IO)
_op("send-done recv-done", 1, "channel_id:int is_host_transfer:bool", base=_IO)
_BN = dict(family="batchnorm", foldable=True, parser_infers=True)
_op("batch-norm-training", 3, "epsilon:float! feature_index:int!", base=_BN)
_op("batch-norm-inference", 5, "epsilon:float! feature_index:int!", base=_BN)
_op("batch-norm-grad", 5, "epsilon:float! feature_index:int!", base=_BN)
_op("partition-id replica-id", 0, family="collective", parser_infers=True, async_sugar=False)

# ---- collectives (never folded: their value depends on the other devices; their -start/-done forms
# are their own)
_COLL = "channel_id:int replica_groups:replica_groups device_ids:generic constrain_layout:bool"
_CO = dict(family="collective", async_sugar=False)
_op("all-reduce", VARIADIC, _COLL + " use_global_device_ids:bool to_apply:comp! mode:generic", base=_CO,
    side_effect=True, mixed_precision=True, group_checked=True, same_size_groups=False)
_op("all-reduce-start", VARIADIC, _COLL + " use_global_device_ids:bool to_apply:comp! mode:generic", base=_CO,
    mixed_precision=True, group_checked=True, same_size_groups=False, async_done="all-reduce-done")
_op("all-reduce-done all-gather-done", 1, base=_CO, mixed_precision=True)
_op("collective-permute-done", 1, base=_CO)
_op("all-gather", VARIADIC, _COLL + " dimensions:ints use_global_device_ids:bool", base=_CO,
    side_effect=True, mixed_precision=True, group_checked=True)
_op("all-gather-start", VARIADIC, _COLL + " dimensions:ints use_global_device_ids:bool", base=_CO,
    mixed_precision=True, group_checked=True, async_done="all-gather-done")
_op("reduce-scatter", VARIADIC, _COLL + " use_global_device_ids:bool dimensions:ints to_apply:comp!", base=_CO,
    side_effect=True, group_checked=True)
_op("all-to-all", VARIADIC, _COLL + " dimensions:ints", base=_CO, side_effect=True, group_checked=True)
_op("ragged-all-to-all", 6, _COLL, base=_CO, group_checked=True)
_op("collective-permute", VARIADIC, "channel_id:int source_target_pairs:int_lists! slice_sizes:int_lists",
    base=_CO, side_effect=True)
_op("collective-permute-start", VARIADIC, "channel_id:int source_target_pairs:int_lists! slice_sizes:int_lists",
    base=_CO, async_done="collective-permute-done")
_op("collective-broadcast", VARIADIC, _COLL, base=_CO, side_effect=True)
_op("collective-reduce", VARIADIC, _COLL + " to_apply:comp", base=_CO)
# shuffle (xla/shuffle.h; HloShuffleInstruction): `dimensions={0,1}, mode=rotate, shifts={1,2}`,
# `dimensions={0}, mode=permute, indices=s32[3,1]{1,0} { {2}, {0}, {1} }`, and
# `dimensions={1}, mode=multi_rotate, multi_shifts=s32[2,1]{1,0} { {1}, {2} }`.
_op("shuffle", 1, "dimensions:ints! mode:enum! shifts:ints indices:int_literal multi_shifts:int_literal",
    family="movement")

# Attributes any instruction may carry, in XLA's printing order (after the opcode's own ones).
COMMON_ATTRS = _specs("sharding:sharding frontend_attributes:frontend control-predecessors:names "
                      "statistics:generic origin:generic metadata:metadata backend_config:backend_config")
_COMMON_BY_NAME = {a.name: a for a in COMMON_ATTRS}
# result_accuracy is printed after statistics: keep it there for ops that have it.
_LATE_OPCODE_ATTRS = {"result_accuracy"}

HEADER_ATTRS = _specs(
    "is_scheduled:bool input_output_alias:alias buffer_donor:alias alias_passthrough_params:bool "
    "entry_computation_layout:program_shape "
    "allow_spmd_sharding_propagation_to_parameters:bools "
    "allow_spmd_sharding_propagation_to_output:bools replica_count:int num_partitions:int "
    "frontend_attributes:frontend origin_recovery_table:generic")
COMPUTATION_ATTRS = _specs("execution_thread:string")

ASYNC_SUFFIXES = ("-start", "-update", "-done")


def lookup(opcode: str) -> Optional[Op]:
    return OPCODES.get(opcode)


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
    if isinstance(v, ir.GBraces) and v.items and all(isinstance(x, _InlineInstr) for x in v.items):
        return v  # an inline computation; the parser turns it into a computation
    raise _Bad("expected a computation name")


def _d_names(v):
    if isinstance(v, ir.GBraces) and all(isinstance(x, ir.GName) for x in v.items):
        return tuple(x.text for x in v.items)
    raise _Bad("expected a list of names like {%a, %b}")


def _d_comps(v):
    if isinstance(v, ir.GBraces) and all(
            isinstance(x, ir.GName) or (isinstance(x, ir.GBraces) and x.items and
                                        all(isinstance(i, _InlineInstr) for i in x.items))
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
        from .syntax.parser import BadAliasEntry, _alias_of_paren
        out = []
        for x in v.items:
            if isinstance(x, BadAliasEntry):
                raise _Bad(x.message)
            if isinstance(x, ir.GParen):
                x = _alias_of_paren(x)
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
        from .syntax.literals import format_literal
        from .syntax.printer import shape_text
        return shape_text(self.shape) + " " + format_literal(self)


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
    from .syntax.literals import int_range
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


class _InlineInstr:
    """Marker base: the parser's instruction results inside braces (inline computations)."""


# --------------------------------------------------------------------------------------------------
# Decoding an instruction's attributes

def split_async(opcode: str) -> tuple[str, Optional[str]]:
    """`all-reduce-start` is an opcode of its own; `custom-call-start` is sugar for async-start
    wrapping custom-call.  Returns (wrapped opcode, suffix) for sugar, else (opcode, None)."""
    if opcode in OPCODES:
        return opcode, None
    for suf in ASYNC_SUFFIXES:
        if opcode.endswith(suf) and opcode[: -len(suf)] in OPCODES:
            return opcode[: -len(suf)], suf
    return opcode, None


def schema_for(opcode: str) -> tuple[tuple[AttrSpec, ...], bool]:
    """The attribute specs for an opcode (async sugar: the wrapped op's plus async-start's), and
    whether the opcode is known."""
    op = OPCODES.get(opcode)
    if op is not None:
        return op.attrs, True
    base, suf = split_async(opcode)
    if suf is not None:
        wrapper = OPCODES["async-start" if suf == "-start" else "async-done"]
        extra = tuple(a for a in wrapper.attrs if a.name != "calls" and a.name not in OPCODES[base].attr_names)
        return OPCODES[base].attrs + extra, True
    return (), False


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
