"""THE opcode table: for each of XLA's 136 opcodes (xla/hlo/ir/hlo_opcode.h) its entry, an `OpSpec`,
holds everything that is a property of the opcode (text name, arity, attribute schema, legal element
types, flags the evaluator, the cost and memory analyses, the verifier and the parser read).  The
attribute kinds are decoded from the generic syntax of grammar/hlo.lark by syntax/attributes.py and
printed by syntax/printer.py.  Every opcode set elsewhere in the package is derived from this table.

An attribute is written in a schema as `name:kind` (`!` = required).  The schema order is the order
XLA prints attributes in, which is the canonical order our printer uses.
"""
from __future__ import annotations

from typing import Callable, Optional

from .records import record

VARIADIC = -1


@record(frozen=True)
class AttrSpec:
    name: str
    kind: str
    required: bool = False


@record(frozen=True)
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
    # numerics: its float result is always a value of its operands' type (an operand's value, its sign
    # changed, or an integer): computing it in a wider type and rounding back changes nothing
    exact: bool = False
    async_done: str = ""        # the *-done opcode that completes this *-start
    async_sugar: bool = True    # `<op>-start/-update/-done` wrap it in an async computation
    group_checked: bool = False  # XLA's CheckReplicaGroups counts its replica groups' ids
    same_size_groups: bool = True  # its replica groups must all have one size
    # multi-device runs: the device ids its replica groups (or source_target_pairs) name say how many
    # devices a module whose header names none needs (ops/collectives.py implied_device_counts)
    names_devices: bool = False
    # call graph: the role of the computation its `to_apply` names (reduce-apply, comparator, ...);
    # the other computation attributes say their role themselves (analysis/calls.py)
    callee_role: str = ""
    # outside the elementwise family yet elementwise on scalars: a computation made of such opcodes,
    # called on whole arrays, gives the elementwise result (ops/reducers.py)
    scalar_safe: bool = False
    plumbing: bool = False      # parameters, constants, tuples: graph summaries leave it out
    label_attrs: tuple[str, ...] = ()  # attributes that tell its instances apart in a graph label
    # Where its code lives, by module name (so that importing the table imports neither):
    rule_module: str = ""       # hlo_interp/shapes/<rule_module>.py registers its shape rule
    kernel_module: str = ""     # hlo_interp/ops/<kernel_module>.py registers its kernel ("" = none, ...)
    no_kernel: str = ""         # ... and why, when it has none
    # README's opcode table (tools/opcode_table.py): the element types it runs, and a note
    types_doc: str = ""
    note: str = ""

    @property
    def attr_names(self) -> tuple[str, ...]:
        return tuple(a.name for a in self.attrs)


def _specs(text: str) -> tuple[AttrSpec, ...]:
    out = []
    for part in text.split():
        name, kind = part.split(":")
        req = kind.endswith("!")
        out.append(AttrSpec(name, kind.rstrip("!"), req))
    return tuple(out)


OPCODES: dict[str, OpSpec] = {}


# Element types as README's opcode table writes them
_ALL = "all"
_FLOATS = "f8*, bf16, f16, f32, f64, c64, c128"
_REAL_FLOATS = "f8*, bf16, f16, f32, f64"
_INTS = "pred, s2-s64, u2-u64"
_NUMBERS = "s2-s64, u2-u64, f8*, bf16, f16, f32, f64, c64, c128"
_TYPE_CLASS_DOC = {"float": _REAL_FLOATS, "float|complex": _FLOATS}

# family -> (rule_module, kernel_module, types_doc): an entry's defaults, unless it says otherwise
_FAMILY_DEFAULTS = {
    "elementwise": ("elementwise", "elementwise", _NUMBERS), "movement": ("movement", "movement", _ALL),
    "reduce": ("reduce", "reduce", _ALL), "dot": ("dot", "dot", _NUMBERS), "linalg": ("linalg", "linalg", ""),
    "gather_scatter": ("gather_scatter", "gather_scatter", _ALL), "sort": ("sort", "sort", _ALL),
    "control": ("control", "control", _ALL), "async": ("async_ops", "async_ops", _ALL),
    "rng": ("rng", "rng", ""), "io": ("io", "io", ""), "batchnorm": ("batchnorm", "batchnorm", _REAL_FLOATS),
    "collective": ("collectives", "collectives", _ALL),
}


def _op(names: str, arity: int, attrs: str = "", base: Optional[dict] = None, **fields) -> None:
    """Enter the opcodes `names` (same arity, schema and properties); `base` is a preset of fields
    that `fields` may override."""
    fields = {**(base or {}), **fields}
    rules, kernels, types_doc = _FAMILY_DEFAULTS[fields["family"]]
    fields.setdefault("rule_module", rules)
    if not fields.get("no_kernel"):
        fields.setdefault("kernel_module", kernels)
    fields.setdefault("types_doc", _TYPE_CLASS_DOC.get(fields.get("types", "")) or types_doc)
    for n in names.split():
        OPCODES[n] = OpSpec(n, arity, _specs(attrs), **fields)


def opcodes_where(pred: Callable[[OpSpec], bool]) -> frozenset[str]:
    """The opcodes whose entry satisfies `pred` (how the package's opcode sets are derived)."""
    return frozenset(n for n, o in OPCODES.items() if pred(o))


# ---- elementwise
# presets: every elementwise opcode folds on constants and costs one flop (or transcendental) per element
_EW = dict(family="elementwise", foldable=True, cost="elementwise", parser_infers=True)
_MOVE = dict(family="elementwise", foldable=True, cost="elementwise", arithmetic=False)  # selects, conversions
_ACCURACY = "result_accuracy:generic"
_UINTS = "s2-s64, u2-u64"  # (README's text: signed and unsigned integers)
_op("count-leading-zeros popcnt", 1, base=_EW, types_doc=_UINTS)
_op("not", 1, base=_EW, types_doc=_INTS)
_op("abs negate sign", 1, base=_EW, arithmetic=False, exact=True)
_op("real imag", 1, base=_EW, arithmetic=False, exact=True, types_doc="c64, c128 (and real types)")
_op("is-finite", 1, base=_EW, arithmetic=False, types_doc=_REAL_FLOATS)
_op("floor ceil round-nearest-afz round-nearest-even", 1, base=_EW, types="float", exact=True)
_op("copy", 1, family="elementwise", kernel_module="control", foldable=True, allocates=False, parser_infers=True,
    arithmetic=False, exact=True)
_op("cbrt erf", 1, _ACCURACY, base=_EW, types="float", transcendental=True)
_op("cosine cosh exponential exponential-minus-one log log-plus-one logistic rsqrt sine sinh sqrt tan tanh "
    "acos acosh asin asinh atan atanh", 1, _ACCURACY, base=_EW, types="float|complex", transcendental=True)
_op("add multiply", 2, base=_EW)
_op("mulhi", 2, base=_EW, types_doc="s8-s64, u8-u64")
_op("and or xor", 2, base=_EW, types_doc=_INTS)
_op("subtract", 2, base=_EW, types="no-pred")
_op("divide", 2, base=_EW, types="no-pred", note="x/0 = -1 (signed) or all ones, INT_MIN/-1 = INT_MIN, as XLA")
_op("remainder", 2, base=_EW, types="no-pred", note="x%0 = x, INT_MIN%-1 = 0")
_op("shift-left", 2, base=_EW, types="no-pred", types_doc=_UINTS, note="shift >= width or negative gives 0")
_op("shift-right-arithmetic", 2, base=_EW, types="no-pred", types_doc=_UINTS,
    note="unsigned types shift in the sign bit, as XLA:CPU")
_op("shift-right-logical", 2, base=_EW, types="no-pred", types_doc=_UINTS)
_op("atan2", 2, base=_EW, types="no-pred", transcendental=True, types_doc=_FLOATS)
_op("power", 2, base=_EW, types="no-pred", transcendental=True,
    note="integer exponents: low 6 bits, negative -> 0 unless |base| = 1 (XLA:CPU)")
_op("complex", 2, base=_EW, arithmetic=False, types_doc="f32, f64")
_op("maximum", 2, base=_EW, arithmetic=False, exact=True, note="NaN propagates; max(-0, +0) = +0")
_op("minimum", 2, base=_EW, arithmetic=False, exact=True, note="NaN propagates; min(-0, +0) = -0")
_op("stochastic-convert", 2, base=_MOVE, types_doc="f32/f16/bf16 -> s8-s64, f8*")
_op("compare", 2, "direction:enum! type:enum", base=_MOVE, parser_infers=True, label_attrs=("direction",),
    note="all directions, TOTALORDER")
_op("select clamp", 3, base=_MOVE, parser_infers=True, exact=True)
_op("convert", 1, base=_MOVE,
    note="float->int saturates, NaN -> 0; f64 -> bf16/f16 through f32 (XLA rounds twice)")
_op("bitcast-convert", 1, base=_MOVE, note="size-changing too")
_op("reduce-precision", 1, "exponent_bits:int! mantissa_bits:int!", base=_MOVE, mixed_precision=True,
    types_doc=_REAL_FLOATS)

# ---- data movement
_MV = dict(family="movement", foldable=True, arithmetic=False)
# (parameters, constants and tuples' plumbing: their kernels are the evaluator's basics, in ops/control.py)
_op("parameter", 0, "parameter_replication:bools", family="movement", kernel_module="control",
    allocates=False, cost="free", mixed_precision=True, arithmetic=False, plumbing=True, scalar_safe=True)
_op("constant", 0, family="movement", kernel_module="control", cost="free", mixed_precision=True,
    arithmetic=False, plumbing=True, scalar_safe=True)
_op("iota", 0, "iota_dimension:int!", base=_MV, label_attrs=("iota_dimension",))
_op("broadcast", 1, "dimensions:ints", base=_MV, parser_infers=True)
_op("reshape", 1, "inferred_dimension:int", base=_MV)
_op("dynamic-reshape", VARIADIC, family="movement", kernel_module="dynamic", foldable=True)
_op("transpose", 1, "dimensions:ints!", base=_MV, parser_infers=True)
_op("reverse", 1, "dimensions:ints!", base=_MV, parser_infers=True)
_op("slice", 1, "slice:slice!", base=_MV)
_op("dynamic-slice", VARIADIC, "dynamic_slice_sizes:ints!", base=_MV,
    note="start indices clamped (signed/unsigned per index type)")
_op("dynamic-update-slice", VARIADIC, base=_MV, note="start indices clamped")
_op("concatenate", VARIADIC, "dimensions:ints!", base=_MV, parser_infers=True)
_op("pad", 2, "padding:padding!", base=_MV, parser_infers=True, note="negative and interior padding")
_op("bitcast", 1, base=_MV, kernel_module="control", allocates=False, own_buffer=False, cost="free",
    note="physical layouts: tiles T(..)(..), *, packed E(n), sub-byte tiles, L(n) padding; M(n)/sparse refused")
_op("tuple", VARIADIC, base=_MV, kernel_module="control", allocates=False, own_buffer=False, parser_infers=True,
    mixed_precision=True, plumbing=True, scalar_safe=True)
_op("get-tuple-element", 1, "index:int!", base=_MV, kernel_module="control", allocates=False, own_buffer=False,
    cost="free", parser_infers=True, mixed_precision=True, plumbing=True, label_attrs=("index",),
    scalar_safe=True)
_op("get-dimension-size", 1, "dimensions:ints!", family="movement", kernel_module="dynamic", foldable=True,
    parser_infers=True, types_doc="s32")
_op("set-dimension-size", 2, "dimensions:ints!", family="movement", kernel_module="dynamic", foldable=True,
    parser_infers=True, note="size outside [0, bound] refused")
_op("domain", 1, "domain:generic!", base=_MV, rule_module="elementwise", kernel_module="control",
    allocates=False, own_buffer=False, cost="free", parser_infers=True, mixed_precision=True)

# ---- reductions, contractions, windows
# (reductions, maps and scans call a computation: not folded)
_op("reduce", VARIADIC, "dimensions:ints! to_apply:comp!", family="reduce", parser_infers=True, callee_role="reduce-apply",
    note="add/mul/max/min/and/or/xor run as NumPy reductions; low-precision sums in XLA:CPU's order")
_op("reduce-window", VARIADIC, "window:window! to_apply:comp!", family="reduce", kernel_module="window",
    parser_infers=True, mixed_precision=True, callee_role="reduce-apply",
    note="XLA:CPU's window order; padded bf16/f16/f8 sums may differ by 1-2 ulp")
_op("select-and-scatter", 3, "window:window! select:comp! scatter:comp!", family="reduce",
    kernel_module="window", parser_infers=True, note="ties keep the first; dilated windows not yet")
_op("map", VARIADIC, "dimensions:ints to_apply:comp!", family="reduce", parser_infers=True,
    callee_role="map-apply")
_op("scan", VARIADIC, "dimensions:ints! num_carries:int! is_reverse:bool is_associative:bool "
                      "to_apply:comp!", family="reduce", kernel_module="control", callee_role="scan-body",
    note="is_reverse, several inputs and carries")
_DOT = ("lhs_batch_dims:ints lhs_contracting_dims:ints rhs_batch_dims:ints rhs_contracting_dims:ints "
        "operand_precision:enums algorithm:enum sparsity:raw")
_CONTRACT = dict(family="dot", foldable=True, parser_infers=True, mixed_precision=True)
# (older sparse dots have a third (metadata) operand: see sparsity)
_op("dot", 2, _DOT, base=_CONTRACT, note="batch dims, preferred type; bf16/f8 computed in f32, rounded once")
_op("scaled-dot", 4, _DOT, base=_CONTRACT, parser_infers=False,
    note="XLA's ScaledDotRewriter lowering: scale, then dot")
_op("ragged-dot", 3, _DOT + " lhs_ragged_dims:ints rhs_group_dims:ints", base=_CONTRACT, kernel_module="ragged",
    note="all 3 modes, as JAX's masked-dot lowering")
_op("convolution", VARIADIC, "window:window dim_labels:dim_labels! feature_group_count:int "
                             "batch_group_count:int operand_precision:enums convolution_kind:enum conv_kind:enum",
    base=_CONTRACT, kernel_module="window",
    note="im2col + dot; any dim_labels, padding, dilations, groups; f8 rounded through f16 (XLA:CPU)")
_LINALG = dict(family="linalg", foldable=True, parser_infers=True, types_doc="f16, bf16, f32, f64, c64, c128")
_op("fft", 1, "fft_type:enum! fft_length:ints!", base=_LINALG, kernel_module="fft",
    types_doc="c64, c128, f32, f64", note="FFT, IFFT, RFFT, IRFFT over 1-3 dims")
_op("triangular-solve", 2, "left_side:bool lower:bool unit_diagonal:bool transpose_a:enum", base=_LINALG,
    note="singular -> inf/NaN")
_op("cholesky", 1, "lower:bool", base=_LINALG, note="not positive definite -> NaN per matrix")
_op("gather", 2, "offset_dims:ints collapsed_slice_dims:ints start_index_map:ints "
                 "operand_batching_dims:ints start_indices_batching_dims:ints index_vector_dim:int "
                 "slice_sizes:ints! indices_are_sorted:bool", family="gather_scatter", foldable=True,
    parser_infers=True, arithmetic=False, note="start indices clamped; batching dims")
_op("scatter", VARIADIC, "update_window_dims:ints inserted_window_dims:ints "
                         "scatter_dims_to_operand_dims:ints input_batching_dims:ints "
                         "scatter_indices_batching_dims:ints index_vector_dim:int "
                         "indices_are_sorted:bool unique_indices:bool to_apply:comp!",
    family="gather_scatter", parser_infers=True, callee_role="scatter-apply",
    note="variadic, any computation; out-of-bounds windows skipped; ufunc.at fast paths")
_op("sort", VARIADIC, "dimensions:ints! is_stable:bool to_apply:comp!", family="sort", parser_infers=True,
    mixed_precision=True, arithmetic=False, callee_role="comparator",
    note="any comparator, stable; XLA's comparator forms run as argsort/lexsort")
_op("topk", 1, "k:int! largest:bool to_apply:comp", family="sort", foldable=True, parser_infers=True,
    callee_role="comparator", note="ties -> lower index; with to_apply the comparator orders (stable)")

# ---- control flow and calls
# (calls may loop for long or have effects: not folded; their results are their callees')
_CALL = dict(family="control", allocates=False, parser_infers=True, mixed_precision=True, arithmetic=False)
_op("while", 1, "condition:comp! body:comp!", base=_CALL, own_buffer=False, note="--max-iterations guard")
_op("conditional", VARIADIC, "true_computation:comp false_computation:comp branch_computations:comps",
    base=_CALL, note="out-of-range index runs the last branch")
_op("call", VARIADIC, "to_apply:comp! is_composite:bool", base=_CALL, own_buffer=False, callee_role="call")
_op("fusion", VARIADIC, "kind:enum! calls:comp! output_to_operand_aliasing:alias_compact", base=_CALL,
    parser_infers=False)
_op("custom-call", VARIADIC,
    "custom_call_target:string! window:window dim_labels:dim_labels feature_group_count:int "
    "batch_group_count:int operand_layout_constraints:shapes custom_call_has_side_effect:bool "
    "output_to_operand_aliasing:alias_compact literal:generic schedule:enum padding_type:enum "
    "operand_precision:enums api_version:enum to_apply:comp called_computations:comps",
    family="control", kernel_module="custom_calls", side_effect=True, mixed_precision=True, arithmetic=False,
    label_attrs=("custom_call_target",), callee_role="custom-call",
    note="registry: TopK, sharding markers, LAPACK (incl. gees, geev left vectors) and cuSOLVER linalg, "
         "cuBLAS GEMM, cuDNN convolutions, SliceToDynamic/PadToStatic; hlo_interp.register_custom_call "
         "for others")
_op("opt-barrier", 1, base=_CALL, foldable=True, own_buffer=False, scalar_safe=True)
_op("after-all", VARIADIC, family="control", allocates=False, own_buffer=False, cost="free", parser_infers=True,
    arithmetic=False, types_doc="token")
_op("add-dependency", 2, family="control", foldable=True, allocates=False, own_buffer=False, cost="free",
    parser_infers=True)
# (async pairs: never folded; their -start/-done forms are their own)
_ASYNC = dict(family="async", mixed_precision=True, arithmetic=False, async_sugar=False)
_op("async-start", VARIADIC, "calls:comp! async_execution_thread:string output_to_operand_aliasing:alias_compact",
    base=_ASYNC, note="wrapped computation evaluated at start")
_op("async-update", VARIADIC, "calls:comp async_execution_thread:string", base=_ASYNC)
_op("async-done", 1, "calls:comp async_execution_thread:string", base=_ASYNC)
_op("copy-start", 1, "cross_program_prefetch_index:int", base=_ASYNC, async_done="copy-done")
_op("copy-done", 1, base=_ASYNC)

# ---- randomness, feeds, misc
# (random and stateful: not folded, else one draw would serve every run; rng and its state have no
# async form, left unsupported)
_op("rng", VARIADIC, "distribution:enum!", family="rng", side_effect=True, async_sugar=False,
    types_doc="f16, bf16, f32, f64, s32, u32, s64, u64", note="XLA's method with its first-process key: reproducible")
_op("rng-bit-generator", 1, "algorithm:enum!", family="rng", types_doc="2-64-bit ints, all floats (as bits)",
    note="three_fry, philox bit-exact; rng_default = philox (XLA:CPU)")
_op("rng-get-and-update-state", 0, "delta:int!", family="rng", side_effect=True, async_sugar=False,
    types_doc="u64[2]")
_IO = dict(family="io", side_effect=True, mixed_precision=True, arithmetic=False, async_sugar=False)
_op("infeed", 1, "infeed_config:string", base=_IO, note="hlo-run --infeed FILE.npz")
_op("outfeed", 2, "outfeed_shape:shape outfeed_config:string", base=_IO, arithmetic=True,
    note="hlo-run --outfeed OUT.npz")
_op("send", 2, "channel_id:int is_host_transfer:bool", base=_IO,
    note="within one module by channel_id; is_host_transfer: host queues (--host-send)")
_op("recv", 1, "channel_id:int is_host_transfer:bool", base=_IO,
    note="within one module by channel_id; is_host_transfer: host queues (--host-recv)")
_op("send-done recv-done", 1, "channel_id:int is_host_transfer:bool", base=_IO)
_BN = dict(family="batchnorm", foldable=True, parser_infers=True,
           note="XLA's expansion; bf16 in f32, f8/f4 in f16 (XLA:CPU)")
_op("batch-norm-training", 3, "epsilon:float! feature_index:int!", base=_BN)
_op("batch-norm-inference", 5, "epsilon:float! feature_index:int!", base=_BN)
_op("batch-norm-grad", 5, "epsilon:float! feature_index:int!", base=_BN)
_op("partition-id replica-id", 0, family="collective", parser_infers=True, async_sugar=False, types_doc="u32")

# ---- collectives (never folded: their value depends on the other devices; their -start/-done forms
# are their own)
_COLL = "channel_id:int replica_groups:replica_groups device_ids:generic constrain_layout:bool"
_CO = dict(family="collective", async_sugar=False)
_op("all-reduce", VARIADIC, _COLL + " use_global_device_ids:bool to_apply:comp! mode:generic", base=_CO,
    side_effect=True, mixed_precision=True, group_checked=True, same_size_groups=False, names_devices=True,
    callee_role="reduce-apply", note="XLA:CPU order: fold from +0/1 in group order; max/min skip NaN; bf16 in f32, f8 in f16")
_op("all-reduce-start", VARIADIC, _COLL + " use_global_device_ids:bool to_apply:comp! mode:generic", base=_CO,
    mixed_precision=True, group_checked=True, same_size_groups=False, async_done="all-reduce-done",
    callee_role="reduce-apply")
_op("all-reduce-done all-gather-done", 1, base=_CO, mixed_precision=True)
_op("collective-permute-done", 1, base=_CO)
_op("all-gather", VARIADIC, _COLL + " dimensions:ints use_global_device_ids:bool", base=_CO,
    side_effect=True, mixed_precision=True, group_checked=True, names_devices=True)
_op("all-gather-start", VARIADIC, _COLL + " dimensions:ints use_global_device_ids:bool", base=_CO,
    mixed_precision=True, group_checked=True, async_done="all-gather-done")
_op("reduce-scatter", VARIADIC, _COLL + " use_global_device_ids:bool dimensions:ints to_apply:comp!", base=_CO,
    side_effect=True, group_checked=True, names_devices=True, callee_role="reduce-apply")
_op("all-to-all", VARIADIC, _COLL + " dimensions:ints", base=_CO, side_effect=True, group_checked=True,
    names_devices=True)
_op("ragged-all-to-all", 6, _COLL, base=_CO, group_checked=True, names_devices=True,
    note="documented semantics (XLA:CPU does not run it)")
_op("collective-permute", VARIADIC, "channel_id:int source_target_pairs:int_lists! slice_sizes:int_lists",
    base=_CO, side_effect=True, names_devices=True, note="non-targets get zeros; in-place form (buffers, offsets, slice sizes)")
_op("collective-permute-start", VARIADIC, "channel_id:int source_target_pairs:int_lists! slice_sizes:int_lists",
    base=_CO, async_done="collective-permute-done")
_op("collective-broadcast", VARIADIC, _COLL, base=_CO, side_effect=True, names_devices=True)
_op("collective-reduce", VARIADIC, _COLL + " to_apply:comp", base=_CO, callee_role="reduce-apply",
    note="result on each group's first device, zeros elsewhere (XLA leaves them unwritten)")
# shuffle (xla/shuffle.h; HloShuffleInstruction): `dimensions={0,1}, mode=rotate, shifts={1,2}`,
# `dimensions={0}, mode=permute, indices=s32[3,1]{1,0} { {2}, {0}, {1} }`, and
# `dimensions={1}, mode=multi_rotate, multi_shifts=s32[2,1]{1,0} { {1}, {2} }`.
_op("shuffle", 1, "dimensions:ints! mode:enum! shifts:ints indices:int_literal multi_shifts:int_literal",
    family="movement", rule_module="shuffle", kernel_module="shuffle",
    note="rotate, permute (out-of-range coordinates clamp, as its gather lowering), multi_rotate; "
         "from XLA's sources and tests (jaxlib 0.10.2 has no shuffle)")

# Attributes any instruction may carry, in XLA's printing order (after the opcode's own ones).
COMMON_ATTRS = _specs("sharding:sharding frontend_attributes:frontend control-predecessors:names "
                      "statistics:generic origin:generic metadata:metadata backend_config:backend_config")

HEADER_ATTRS = _specs(
    "is_scheduled:bool input_output_alias:alias buffer_donor:alias alias_passthrough_params:bool "
    "entry_computation_layout:program_shape "
    "allow_spmd_sharding_propagation_to_parameters:bools "
    "allow_spmd_sharding_propagation_to_output:bools replica_count:int num_partitions:int "
    "frontend_attributes:frontend origin_recovery_table:generic")
COMPUTATION_ATTRS = _specs("execution_thread:string")


def called_computation_attrs() -> frozenset[str]:
    """The attributes that name called computations: those of kind `comp` or `comps` in any entry's
    schema (to_apply, calls, condition, body, branches, select, scatter, called_computations)."""
    return frozenset(a.name for o in OPCODES.values() for a in o.attrs if a.kind in ("comp", "comps"))

ASYNC_SUFFIXES = ("-start", "-update", "-done")


# --------------------------------------------------------------------------------------------------
# Async sugar and the attribute schema of an opcode

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
