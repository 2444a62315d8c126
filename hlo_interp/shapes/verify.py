"""Module checks in the manner of XLA's HloVerifier (xla/service/hlo_verifier.cc).

`check(module)` returns a list of `Finding`s (empty when the module is valid).  Every finding has a
stable code (docs/check-codes.md lists them all with an example):

    E0xx  the text itself (syntax; used by `hlo check`)
    E1xx  instructions: opcode, operands, attributes, shapes
    E2xx  computations: names, parameters, ROOT, signatures, called computations
    E3xx  layouts
    E4xx  collectives (replica groups, channels, source-target pairs)
    E5xx  the module header (entry_computation_layout, input_output_alias, buffer_donor)
    E6xx  asynchronous pairs (*-start / *-update / *-done)
    Wxxx  suspicious but accepted by XLA;  Nxxx  notes (information, never a failure)

This module holds the finding codes, the driver and the module-level rules (names, parameters and
ROOT, layouts, collectives, called computations, async pairs, channels, the header).  Shape agreement
(declared vs inferred) uses the shape rules (infer.py and the family modules beside it); an opcode's
own checks beyond its shape rule (ShapeVerifier's per-opcode handlers) and the checks of the
computations it calls live beside its shape rule too (infer.register_check).
"""
from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Iterable, Optional

from .. import ir
from ..diagnostics import caret_excerpt, location_text
from ..opcodes import COMMON_ATTRS, OPCODES, opcodes_where, schema_for, split_async
from .infer import (UNREAD_ATTRS, ShapeError, attrs_key, check_for, infer_shape, shape_str, shapes_compatible,
                    subshape, value_text)

# --------------------------------------------------------------------------------------------------
# Codes

CODES: dict[str, tuple[str, str, str]] = {
    # code: (name, severity, summary)
    "E000": ("internal-error", "error", "hlo check itself failed on this input (a bug of ours: please "
                                        "report it with the file)"),
    "E001": ("syntax", "error", "the text does not parse (located syntax error)"),
    "E100": ("unknown-opcode", "error", "the opcode is not one of XLA's"),
    "E101": ("shape-mismatch", "error", "the declared result shape differs from the inferred one"),
    "E102": ("invalid-operands", "error", "shape inference rejects the operands or attributes"),
    "E103": ("operand-count", "error", "wrong number of operands for the opcode"),
    "E104": ("unexpected-attribute", "error", "an attribute the opcode does not take"),
    "E105": ("missing-attribute", "error", "a required attribute is missing"),
    "E106": ("undefined-operand", "error", "an operand or control predecessor names no earlier "
                                           "instruction of the computation"),
    "E107": ("missing-shape", "error", "the result shape is omitted and cannot be inferred"),
    "E108": ("mixed-precision", "error", "operands of different floating-point types (XLA's verifier "
                                         "disallows mixed precision by default)"),
    "E109": ("unbounded-dynamism", "error", "a shape has an unbounded dimension `?` (XLA's verifier "
                                            "rejects unbounded dynamism by default)"),
    "E110": ("operand-layout-constraint", "error", "custom-call operand_layout_constraints do not match "
                                                   "the operands"),
    "E111": ("comparison-type", "error", "a compare's type= does not fit its operands (FLOAT or TOTALORDER "
                                         "for floats, SIGNED for signed and UNSIGNED for unsigned integers)"),
    "E112": ("buffer-shape", "error", "a buffer shape b(...): XLA's verifier rejects them outside compiler "
                                      "passes, and its parser takes only b(array)"),
    "E113": ("composite-call", "error", "a composite call lacks composite.name, or has an empty "
                                        "composite.attributes or a bad composite.version"),
    "E114": ("output-operand-aliasing", "error", "output_to_operand_aliasing names a missing operand or "
                                                 "index, or aliases buffers of different shapes"),
    "E115": ("attribute-value", "error", "an attribute value XLA's parser does not know (custom-call "
                                         "schedule, api_version, compare direction and type, dot algorithm, "
                                         "result_accuracy, input_output_alias kind)"),
    "E116": ("operand-shape", "error", "an operand written with a shape (add(f32[2] %a, ...)) whose shape "
                                       "is not that of the instruction it names"),
    "E117": ("conditional-branches", "error", "a conditional's selector and its branch attributes disagree "
                                              "(pred[] takes true_computation/false_computation, s32[] takes "
                                              "branch_computations)"),
    "E201": ("undefined-computation", "error", "a called computation does not exist"),
    "E202": ("call-cycle", "error", "computations call each other in a cycle"),
    "E203": ("parameter-numbers", "error", "parameter numbers are not 0..n-1, each once"),
    "E204": ("signature-result", "error", "the computation's declared result differs from its ROOT"),
    "E205": ("called-parameter-count", "error", "a called computation has the wrong number of "
                                                "parameters"),
    "E206": ("called-signature", "error", "a called computation's parameter or result shapes do not "
                                          "fit the caller (reducer (T,T)->T, comparator ->pred[], "
                                          "while body S->S, branches, ...)"),
    "E207": ("entry-called", "error", "the entry computation is called by an instruction"),
    "E208": ("empty-computation", "error", "a computation has no instructions"),
    "E209": ("fusion-dead-instruction", "error", "a non-root instruction of a fused computation has no "
                                                 "users"),
    "W110": ("non-identity-init", "warning", "a reduce/reduce-window add or multiply starts from a "
                                             "value that is not the reducer's identity: XLA requires one, "
                                             "and applies a non-identity init a shape-dependent number of "
                                             "times (hlo-run follows XLA:CPU's count, see ops/reduce.py)"),
    "W201": ("signature-parameters", "warning", "the computation's signature disagrees with its "
                                                "parameter instructions (XLA ignores the signature)"),
    "E301": ("invalid-layout", "error", "minor_to_major is not a permutation of the dimensions"),
    "E302": ("invalid-tile", "error", "a layout tile has a size that is not positive"),
    "E303": ("invalid-layout-field", "error", "a layout field that only sparse arrays may have "
                                              "(#(index type), *(pointer type), P(physical shape)) on a dense "
                                              "array"),
    "E401": ("replica-groups", "error", "replica groups are empty, repeat an id, skip an id, differ in "
                                        "size, or name more or fewer ids than the header's replica_count/"
                                        "num_partitions give the group mode"),
    "E402": ("source-target-pairs", "error", "collective-permute pairs repeat a source or target (once "
                                             "per slice for the in-place form), use a negative id, or an "
                                             "id beyond the header's replica_count/num_partitions"),
    "E403": ("channel-id", "error", "channel_id must be positive"),
    "E404": ("sharding", "error", "a tiled sharding does not fit the shape (tile dimensions vs rank, "
                                  "device count, repeated devices, tuple element count), or a tuple sharding "
                                  "for a non-tuple shape"),
    "E405": ("send-recv-channel", "error", "send/recv without a channel_id, a *-done whose channel_id or "
                                           "is_host_transfer differs from its send/recv, or a channel id shared "
                                           "by send/recv and other instructions"),
    "E407": ("global-device-ids", "error", "use_global_device_ids=true without a channel_id"),
    "E406": ("all-reduce-layout-mix", "error", "some all-reduce instructions of the module have "
                                               "constrain_layout=true and others do not"),
    "E501": ("entry-layout", "error", "entry_computation_layout does not match the entry "
                                      "computation's parameters or ROOT"),
    "E502": ("input-output-alias", "error", "input_output_alias refers to a missing output or "
                                            "parameter, to a tuple, to buffers of different sizes, or "
                                            "aliases one parameter buffer twice"),
    "E503": ("buffer-donor", "error", "buffer_donor refers to a missing parameter buffer or a tuple, or "
                                      "to a buffer that input_output_alias also names"),
    "E601": ("async-pair", "error", "a *-done does not consume its *-start, or a *-start has no "
                                    "single *-done (send/recv included)"),
    "E602": ("async-computation", "error", "async-start/update/done of one chain call different "
                                           "computations"),
    "E603": ("async-shared-computation", "error", "a wrapped computation is called by more than one "
                                                  "async-start, or an async-update/done names another "
                                                  "execution thread than its start"),
    "E604": ("async-wrapped-computation", "error", "an async wrapped computation has instructions other than its "
                                                   "parameters and root"),
    "N001": ("elided-constant", "note", "a constant's value is elided as {...}; XLA fills it with "
                                        "arbitrary values"),
    "N002": ("implicit-root", "note", "no instruction is marked ROOT: the last one is the root"),
}

SEVERITIES = ("error", "warning", "note")


@dataclass(frozen=True)
class Finding:
    code: str
    severity: str  # error | warning | note
    message: str
    filename: Optional[str] = None
    line: Optional[int] = None
    column: Optional[int] = None
    computation: Optional[str] = None
    instruction: Optional[str] = None
    source_line: Optional[str] = None

    @property
    def name(self) -> str:
        return CODES.get(self.code, (self.code,))[0]

    @property
    def location(self) -> str:
        return location_text(self.filename, self.line, self.column)

    def render(self) -> str:
        """`FILE:LINE:COL: error[E101]: message`, the source line and a caret (like HloError)."""
        out = [f"{self.location}: {self.severity}[{self.code}]: {self.message}"]
        out += caret_excerpt(self.source_line, self.column)
        return "\n".join(out)

    def to_dict(self) -> dict:
        d = asdict(self)
        d.pop("source_line")
        d["file"] = d.pop("filename")
        d["name"] = self.name
        return d

    @classmethod
    def from_error(cls, err, code: str = "E001") -> "Finding":
        """A parse error (HloError) as a finding."""
        return cls(code, "error", err.message, err.filename, err.line, err.column,
                   source_line=err.source_line)


# --------------------------------------------------------------------------------------------------
# Shapes: text and compatibility (layout-insensitive, like ShapeUtil::Compatible)

def _compatible_local(a, b) -> bool:
    if isinstance(a, ir.TupleShape) or isinstance(b, ir.TupleShape):
        return (isinstance(a, ir.TupleShape) and isinstance(b, ir.TupleShape)
                and len(a.elements) == len(b.elements)
                and all(_compatible_local(x, y) for x, y in zip(a.elements, b.elements)))
    if isinstance(a, ir.BufferShape) or isinstance(b, ir.BufferShape):
        return (isinstance(a, ir.BufferShape) and isinstance(b, ir.BufferShape)
                and _compatible_local(a.element, b.element))
    return a.element_type == b.element_type and tuple(a.dims) == tuple(b.dims)


def _is_scalar(s) -> bool:
    return isinstance(s, ir.ArrayShape) and not s.dims


def _leaves(s) -> list:
    if isinstance(s, ir.TupleShape):
        return list(s.elements)
    return [s]


def _leaf_count(shape) -> int:
    if isinstance(shape, ir.TupleShape):
        return sum(_leaf_count(e) for e in shape.elements) if shape.elements else 1
    return 1


def _leaves_flat(shape) -> list:
    if isinstance(shape, ir.TupleShape):
        out = []
        for e in shape.elements:
            out.extend(_leaves_flat(e))
        return out
    return [shape]


def _same_dims(a, b) -> bool:
    """ShapeUtil::Compatible: the same element types and dimensions, layouts aside."""
    if isinstance(a, ir.TupleShape) or isinstance(b, ir.TupleShape):
        return (isinstance(a, ir.TupleShape) and isinstance(b, ir.TupleShape)
                and len(a.elements) == len(b.elements)
                and all(_same_dims(x, y) for x, y in zip(a.elements, b.elements)))
    if isinstance(a, ir.ArrayShape) and isinstance(b, ir.ArrayShape):
        return a.element_type == b.element_type and tuple(a.dims) == tuple(b.dims)
    return type(a) is type(b)


def _result_accuracy_problem(v) -> Optional[str]:
    """ParseResultAccuracy: `{mode=default|highest}` or `{tolerance={atol=..,rtol=..,ulps=..}}`."""
    if not isinstance(v, ir.GBraces) or len(v.items) != 1 or not isinstance(v.items[0], ir.GKeyVal):
        return "expects {mode=...} or {tolerance={...}} (XLA: \"expects attribute name\")"
    kv = v.items[0]
    if kv.key == "mode":
        mode = kv.value.text if isinstance(kv.value, ir.GName) else None
        if mode is None or mode.lower() not in ("default", "highest"):
            return f"unknown accuracy mode {value_text(kv.value)} (XLA knows default and highest)"
        return None
    if kv.key == "tolerance":
        return None
    return f"invalid attribute name: {kv.key} (XLA knows mode and tolerance)"


def _sharding_problem(shape, sh) -> Optional[str]:
    """What is wrong with sharding `sh` (generic syntax) for `shape`, as HloSharding::Validate sees it;
    None when it fits or the form is one this check does not read (named meshes, ...)."""
    items = sh.items
    if items and all(isinstance(x, ir.GBraces) for x in items):  # a tuple sharding
        if not isinstance(shape, ir.TupleShape):
            return (f"a tuple sharding ({len(items)} element(s)) for {shape_str(shape)}, which is not a tuple "
                    f"(\"Sharding is tuple-shaped but validation shape is not\")")
        leaves = _leaves_flat(shape)
        if len(items) != _leaf_count(shape):
            return (f"tuple sharding has {len(items)} element(s), but the shape {shape_str(shape)} has "
                    f"{_leaf_count(shape)} leaf shape(s)")
        for k, (leaf, sub) in enumerate(zip(leaves, items)):
            problem = _sharding_problem(leaf, sub)
            if problem:
                return f"element {k} of the tuple sharding: {problem}"
        return None
    devices = next((x for x in items if isinstance(x, ir.GKeyVal) and x.key == "devices"), None)
    if devices is None:
        return None
    v = devices.value
    if isinstance(v, ir.GBrackets) and all(isinstance(d, int) for d in v.items):
        dims = tuple(v.items)
        ids = [x for x in items if isinstance(x, int) and not isinstance(x, bool)]
        n = 1
        for d in dims:
            n *= d
        if len(ids) != n:
            return f"devices=[{','.join(map(str, dims))}] names {n} tile(s), but lists {len(ids)} device(s)"
        if len(set(ids)) != len(ids):
            dup = next(i for i in ids if ids.count(i) > 1)
            return f"device {dup} appears more than once in the sharding"
    elif isinstance(v, ir.GIotaList):
        dims = v.dims
        n = m = 1
        for d in dims:
            n *= d
        for d in v.reshape_dims:
            m *= d
        if n != m:
            return (f"devices=[{','.join(map(str, dims))}] names {n} tile(s), but the iota list has {m} "
                    f"device(s)")
    else:
        return None
    subgroups = 0
    for x in items:
        if isinstance(x, ir.GName) and x.text == "last_tile_dim_replicate":
            subgroups += 1
        elif isinstance(x, ir.GKeyVal) and x.key == "last_tile_dims" and isinstance(x.value, ir.GBraces):
            subgroups += len(x.value.items)
    if isinstance(shape, ir.ArrayShape) and shape.element_type.is_array_type:
        if len(dims) - subgroups != shape.rank:
            extra = f" ({len(dims) - subgroups} without the {subgroups} subgroup dimension(s))" if subgroups else ""
            return (f"the sharding has {len(dims)} tile dimension(s){extra}, but {shape_str(shape)} has rank "
                    f"{shape.rank}")
    return None


def _first_buffer(s):
    if isinstance(s, ir.BufferShape):
        return s
    if isinstance(s, ir.TupleShape):
        for e in s.elements:
            b = _first_buffer(e)
            if b is not None:
                return b
    return None


def _shape_kind(s) -> str:
    if isinstance(s, ir.TupleShape):
        return "tuple"
    if isinstance(s, ir.BufferShape):
        return "buffer"
    if isinstance(s, ir.ArrayShape) and not s.element_type.is_array_type:
        return s.element_type.name
    return "array"


def _tile_int(d) -> Optional[int]:
    try:
        return int(d)
    except (TypeError, ValueError):
        return ir.TILE_COMBINE if str(d) == "*" else None


def _byte_size(s) -> Optional[int]:
    if isinstance(s, ir.ArrayShape):
        return s.num_elements() * s.element_type.bits
    return None


# --------------------------------------------------------------------------------------------------
# The checker

_CALLERS_WITH_COMPS = {"comp", "comps"}
_ASYNC_PAIRS = {n: o.async_done for n, o in OPCODES.items() if o.async_done}
_DONE_OF = {v: k for k, v in _ASYNC_PAIRS.items()}
_UNIFORM_GROUPS_EXEMPT = opcodes_where(lambda o: not o.same_size_groups)
# CheckReplicaGroups runs for these; the first five pass use_global_device_ids to the group mode
_GROUP_CHECKED = opcodes_where(lambda o: o.group_checked)
_GLOBAL_IDS_FLAG = opcodes_where(lambda o: "use_global_device_ids" in o.attr_names)
# Opcodes whose operands may mix floating-point types (data pass-through, tuples, contractions):
# XLA's CheckMixedPrecisionOperands skips them.
_MIXED_PRECISION_OK = opcodes_where(lambda o: o.mixed_precision)
# send/recv and their -done: the feed opcodes with a channel (their channel ids need not be positive)
_SEND_RECV = opcodes_where(lambda o: o.family == "io" and "channel_id" in o.attr_names)


# The memo of instruction checks (see _Checker.check_computation): per opcode, whether its checks read only the
# instruction's opcode, shapes and attributes (not the operand instructions, as a "values" check does);
# the attributes no check reads (their names are not part of the key).
_MEMO_OPCODES: dict[str, bool] = {}
_UNCHECKED_ATTRS = UNREAD_ATTRS | {"control-predecessors"}


_ASYNC_OPS = frozenset(("async-start", "async-update", "async-done"))
_ALL_REDUCE_OPS = frozenset(("all-reduce", "all-reduce-start"))
_SEND_RECV_OPS = frozenset(("send", "recv", "send-done", "recv-done"))
_CALL_SPECS: dict[str, tuple] = {}
_ASYNC_ROLE: dict[str, bool] = {}


def _call_specs(opcode: str) -> tuple:
    """The attribute specs of `opcode` that name called computations."""
    got = _CALL_SPECS.get(opcode)
    if got is None:
        got = _CALL_SPECS[opcode] = tuple(s for s in schema_for(opcode)[0] if s.kind in _CALLERS_WITH_COMPS)
    return got


def _async_role(opcode: str) -> bool:
    """Whether `opcode` is one side of an asynchronous pair (check_async_pairs looks at it)."""
    got = _ASYNC_ROLE.get(opcode)
    if got is None:
        got = _ASYNC_ROLE[opcode] = (opcode in _ASYNC_OPS or opcode in _DONE_OF or opcode in _ASYNC_PAIRS
                                     or split_async(opcode)[1] is not None)
    return got


def _float_types(shape, out: set) -> None:
    if isinstance(shape, ir.TupleShape):
        for e in shape.elements:
            _float_types(e, out)
    elif isinstance(shape, ir.ArrayShape) and shape.element_type.kind == "float":
        out.add(shape.element_type.name)


class _Checker:
    def __init__(self, module: ir.Module, infer_fn, compat, shape_error, filename: Optional[str]):
        self.m = module
        self.infer = infer_fn
        self.compat = compat
        self.ShapeError = shape_error
        self.filename = filename or module.filename
        self.out: list[Finding] = []
        self.comps = {c.name: c for c in module.computations}
        self.source = None
        for c in module.computations:
            loc = c.loc or next((i.loc for i in c.instructions if i.loc is not None), None)
            if loc is not None:
                self.source = loc.source
                if self.filename is None:
                    self.filename = loc.filename
                break
        # effective shapes (declared, or inferred when the text omits them)
        # per computation name: instruction name -> shape (present once the instruction is checked)
        self.shapes: dict[str, dict[str, object]] = {}
        self.flagged: set[int] = set()  # id(ins) with a structural error: skip shape agreement
        self.memo: dict[tuple, tuple] = {}  # signature -> (effective shape,) of a check with no finding
        # per computation (by id), made once and shared by the passes: its opcodes, parameters, users
        self._opcodes: dict[int, set] = {}
        self._params_of: dict[int, list] = {}
        self._channel_ins: dict[int, list] = {}  # the instructions writing a channel_id (check_computation)
        self._users: dict[int, dict] = {}
        self._by_name: dict[int, dict] = {}
        # computations called by async-start/update/done (their root send/recv needs no user)
        self.async_wrapped: set[str] = {
            i.attrs["calls"] for c in module.computations if not _ASYNC_OPS.isdisjoint(self.opcodes_in(c))
            for i in c.instructions if i.opcode in _ASYNC_OPS and isinstance(i.attrs.get("calls"), str)}

    def opcodes_in(self, comp: ir.Computation) -> set:
        """The opcodes of a computation: a pass skips the computations that have none of its opcodes."""
        got = self._opcodes.get(id(comp))
        if got is None:
            got = self._opcodes[id(comp)] = {i.opcode for i in comp.instructions}
        return got

    def parameters_in(self, comp: ir.Computation) -> list:
        """The parameter instructions of a computation, in text order."""
        got = self._params_of.get(id(comp))
        if got is None:
            got = self._params_of[id(comp)] = [i for i in comp.instructions if i.opcode == "parameter"] \
                if "parameter" in self.opcodes_in(comp) else []
        return got

    def users_in(self, comp: ir.Computation) -> dict:
        """Operand name -> the instructions of `comp` that use it, in text order."""
        got = self._users.get(id(comp))
        if got is None:
            got = self._users[id(comp)] = {}
            for ins in comp.instructions:
                for o in ins.operands:
                    got.setdefault(o, []).append(ins)
        return got

    def by_name_in(self, comp: ir.Computation) -> dict:
        """Instruction name -> instruction (the last of a repeated name)."""
        got = self._by_name.get(id(comp))
        if got is None:
            got = self._by_name[id(comp)] = {i.name: i for i in comp.instructions}
        return got

    def shapes_in(self, comp: ir.Computation) -> dict:
        """The effective shapes of a computation's checked instructions, by name (computations of
        the same name share one)."""
        got = self.shapes.get(comp.name)
        if got is None:
            got = self.shapes[comp.name] = {}
        return got

    # ---- reporting
    def add(self, code: str, message: str, loc: Optional[ir.Location] = None, comp=None, ins=None):
        sev = CODES[code][1]
        if loc is not None:
            f = Finding(code, sev, message, self.filename, loc.line, loc.column,
                        comp.name if comp else None, ins.name if ins else None, loc.source_line)
        else:
            f = Finding(code, sev, message, self.filename, None, None,
                        comp.name if comp else None, ins.name if ins else None)
        self.out.append(f)
        if ins is not None and sev == "error":
            self.flagged.add(id(ins))

    def loc_at(self, offset: int) -> Optional[ir.Location]:
        if self.source is None or offset < 0:
            return None
        return ir.Location(self.source, offset)

    def header_loc(self, attr: str) -> Optional[ir.Location]:
        """Where a header attribute is written, else the `HloModule` keyword."""
        return self.m.attr_locs.get(attr) or self.m.loc

    def _header_has(self, attr: str) -> bool:
        """Whether the text's header writes `attr` (the parser derives entry_computation_layout from the
        entry computation when the text has none: nothing to check then)."""
        return self.source is None or attr in self.m.attr_locs

    @staticmethod
    def _comp_signature(comp: ir.Computation):
        """Offsets of the parameters and the result in a computation's written signature."""
        if comp.param_locs is None:
            return None
        return [p.offset for p in comp.param_locs], (comp.result_loc.offset if comp.result_loc else None)

    def _entry_layout_signature(self):
        """Offsets of the parameters and the result in the header's entry_computation_layout."""
        m = self.m
        if m.entry_layout_param_locs is None:
            return None
        return ([p.offset for p in m.entry_layout_param_locs],
                m.entry_layout_result_loc.offset if m.entry_layout_result_loc else None)

    @staticmethod
    def _line_of(ins) -> str:
        return f" (line {ins.loc.line})" if ins is not None and ins.loc is not None else ""

    @staticmethod
    def operand_loc(ins: ir.Instruction, name: str) -> Optional[ir.Location]:
        """Where operand `name` is written (its first occurrence), else the instruction."""
        if name not in ins.operands:
            return ins.loc
        return ins.operand_loc(ins.operands.index(name)) or ins.loc

    def attr_loc(self, ins: ir.Instruction, attr: str) -> Optional[ir.Location]:
        return ins.attr_locs.get(attr) or ins.loc

    # ---- driver
    def run(self) -> list[Finding]:
        self.check_calls_exist_and_acyclic()
        for comp in self.m.computations:
            self.check_computation(comp)
        for comp in self.m.computations:
            self.check_callees(comp)
        self.check_async_pairs()
        self.check_async_shared()
        self.check_async_computations()
        self.check_channels()
        self.check_all_reduce_layouts()
        self.check_header()
        return self.out

    # ---- computations
    def check_computation(self, comp: ir.Computation) -> None:
        if not comp.instructions:
            self.add("E208", f"computation {comp.name} has no instructions", comp.loc, comp)
            return
        cshapes = self.shapes_in(comp)
        # the names defined so far: those of cshapes, unless another computation of the same name
        # filled it before
        defined = cshapes if not cshapes else {}
        alone = defined is not cshapes
        memo = self.memo
        out = self.out
        memo_ok = _MEMO_OPCODES
        flagged = self.flagged
        skip = _UNCHECKED_ATTRS
        params = []  # (gathered here for check_parameters and the callers' checks: no second scan)
        channels = []  # the instructions that write a channel_id, for check_channels
        plain = UNREAD_ATTRS
        for ins in comp.instructions:
            # An instruction whose operands and control predecessors are all defined earlier is checked
            # once per signature: what check_instruction reads of it, the opcode, the declared shape,
            # the operands' shapes and the shapes written before them (shapes by identity: the module
            # and `self.shapes` hold them for the whole run) and the attributes the checks read (by
            # value, see infer.attrs_key), gives the same findings and the same shape.  Only signatures
            # that gave no finding are remembered, so every finding is still made (and located) at its
            # own instruction.  (The key is made inline, the common case first: this loop runs once per
            # instruction.)
            d = ins.__dict__
            op = d["opcode"]
            ok = memo_ok.get(op)
            if ok is None:
                ok = memo_ok[op] = op in OPCODES and check_for(op, "values") is None
            if op == "parameter":
                params.append(ins)
            attrs = d["_attrs"]  # (attrs_as_parsed: metadata left undecoded, the key skips it)
            if not attrs or attrs.keys() <= plain:
                attrs = ()  # what most instructions have: no attribute a check reads
            else:
                if "channel_id" in attrs:
                    channels.append(ins)
                preds = attrs.get("control-predecessors")
                if preds and any(p not in cshapes for p in preds):
                    attrs = None  # not defined (yet): E106
                elif attrs.keys() <= skip:
                    attrs = ()
                else:
                    attrs = attrs_key(attrs, skip)
            key = None
            if ok and attrs is not None and not d.get("unknown_attrs") and not (flagged and id(ins) in flagged):
                operands = d["operands"]
                try:
                    if len(operands) == 2:
                        ops = (id(cshapes[operands[0]]), id(cshapes[operands[1]]))
                    elif len(operands) == 1:
                        ops = id(cshapes[operands[0]])
                    else:
                        ops = tuple([id(cshapes[o]) for o in operands])
                except KeyError:  # not defined (yet): E106
                    ops = None
                if ops is not None:
                    written = d.get("operand_shapes")  # (parsed instructions leave defaults to the class)
                    if written is not None:
                        written = tuple([id(w) for w in written])
                    key = (op, id(d["shape"]), ops, written, attrs)
                    got = memo.get(key)
                    if got is not None:
                        cshapes[d["name"]] = got[0]
                        if alone:
                            defined[d["name"]] = ins
                        continue
                    n = len(out)
            self.check_instruction(comp, ins, defined)
            if key is not None and len(out) == n:
                memo[key] = (cshapes[d["name"]],)
            if alone:
                defined[d["name"]] = ins
        self._params_of.setdefault(id(comp), params)
        self._channel_ins[id(comp)] = channels
        self.check_parameters(comp)
        self.check_root(comp)

    def check_root(self, comp: ir.Computation) -> None:
        root = comp.root
        if comp.root_marked is False and root.loc is not None and (self.m.has_header or comp.name != "_"):
            if len(comp.instructions) > 1:
                self.add("N002", f"computation {comp.name} marks no instruction ROOT; the last one, "
                                 f"{root.name}, is the root", root.loc, comp, root)
        if comp.result_shape is not None:
            rs = self.shapes_in(comp).get(root.name)
            if rs is not None and not self.compat(comp.result_shape, rs):
                sig = self._comp_signature(comp)
                loc = self.loc_at(sig[1]) if sig and sig[1] is not None else comp.loc
                self.add("E204", f"computation {comp.name} declares result {shape_str(comp.result_shape)}, "
                                 f"but its ROOT {root.name}{self._line_of(root)} has shape {shape_str(rs)}",
                         loc, comp)

    def check_parameters(self, comp: ir.Computation) -> None:
        params = self.parameters_in(comp)
        seen: dict[int, ir.Instruction] = {}
        for p in params:
            n = p.parameter_number
            if n is None:
                continue
            if n in seen:
                self.add("E203", f"parameter number {n} is used twice in computation {comp.name} "
                                 f"(also by {seen[n].name})", p.loc, comp, p)
            else:
                seen[n] = p
        for p in params:
            n = p.parameter_number
            if n is not None and (n < 0 or n >= len(params)):
                self.add("E203", f"parameter number {n} is out of range: computation {comp.name} has "
                                 f"{len(params)} parameter(s), numbered 0..{len(params) - 1}", p.loc, comp, p)
        if comp.params is not None:
            sig = self._comp_signature(comp)
            if len(comp.params) != len(params):
                self.add("W201", f"the signature of {comp.name} lists {len(comp.params)} parameter(s), "
                                 f"the computation has {len(params)}", comp.loc, comp)
            else:
                for k, ((pname, pshape), p) in enumerate(
                        zip(comp.params, sorted(params, key=lambda x: x.parameter_number or 0))):
                    if p.shape is not None and not self.compat(pshape, p.shape):
                        loc = self.loc_at(sig[0][k]) if sig and k < len(sig[0]) else comp.loc
                        self.add("W201", f"the signature of {comp.name} gives parameter {pname} shape "
                                         f"{shape_str(pshape)}, but parameter({p.parameter_number}) "
                                         f"{p.name}{self._line_of(p)} has shape {shape_str(p.shape)}", loc, comp)

    # ---- instructions
    def check_instruction(self, comp, ins, defined) -> None:
        opcode = ins.opcode
        op = OPCODES.get(opcode)
        base, suffix = split_async(opcode)
        known = op is not None or suffix is not None
        if not known:
            self.add("E100", f"unknown opcode '{opcode}'", ins.loc, comp, ins)
        # attributes
        specs, _ = schema_for(opcode)
        for a in ins.unknown_attrs:
            allowed = [s.name for s in specs] + [s.name for s in COMMON_ATTRS]
            if known:
                msg = f"unexpected attribute {a} for {opcode}; allowed: {', '.join(sorted(allowed))}"
            else:
                msg = f"unknown attribute '{a}' for {opcode}"
            self.add("E104", msg, self.attr_loc(ins, a), comp, ins)
        if known:
            self.check_required_attrs(comp, ins, specs, base, suffix)
        # operands defined, earlier
        ok_operands = True
        for name in ins.operands:
            if name not in defined:
                ok_operands = False
                by_name = self.by_name_in(comp)
                if name in by_name:
                    self.add("E106", f"instruction does not exist: {name} (it is defined later, at line "
                                     f"{by_name[name].loc.line if by_name[name].loc else '?'}; operands must "
                                     f"come first)", self.operand_loc(ins, name), comp, ins)
                else:
                    self.add("E106", f"instruction does not exist: {name}", self.operand_loc(ins, name),
                             comp, ins)
        for name in ins.attrs.get("control-predecessors", ()) or ():
            if name not in defined:
                self.add("E106", f"control predecessor does not exist: {name}"
                         + (" (it is defined later)" if name in self.by_name_in(comp) else ""),
                         self.attr_loc(ins, "control-predecessors"), comp, ins)
        # operand count: the table's arity, or the opcode's own count beside its shape rule
        count = check_for(opcode, "operands")
        if count is not None:
            if count(self, comp, ins) is False:
                ok_operands = False
        elif op is not None and op.arity >= 0:
            n = len(ins.operands)
            if n != op.arity:
                self.add("E103", f"{opcode} expects {op.arity} operand(s), but has {n}", ins.loc, comp, ins)
                ok_operands = False
        # the opcode's checks of the instruction and its operand instructions (beside its shape rule)
        values = check_for(opcode, "values") if ok_operands else None
        if values is not None:
            values(self, comp, ins, self.by_name_in(comp))
        # layouts
        if ins.shape is not None:
            self.check_layouts(ins.shape, comp, ins)
        # collectives and shardings
        self.check_collective(comp, ins)
        sh = ins.attrs.get("sharding")
        if isinstance(sh, ir.GBraces) and ins.shape is not None:
            problem = _sharding_problem(ins.shape, sh)
            if problem:
                self.add("E404", f"{ins.name}: {problem}", self.attr_loc(ins, "sharding"), comp, ins)
        # shapes
        declared = ins.shape
        cshapes = self.shapes_in(comp)
        operand_shapes = [cshapes.get(o) for o in ins.operands] if ok_operands else None
        olc = ins.attrs.get("operand_layout_constraints")
        if isinstance(olc, (list, tuple)) and operand_shapes is not None:  # (undecoded on other opcodes)
            if len(olc) != len(operand_shapes):
                self.add("E110", f"custom-call has {len(operand_shapes)} operand(s) but {len(olc)} operand layout "
                                 f"constraint(s)", self.attr_loc(ins, "operand_layout_constraints"), comp, ins)
            else:
                for i, (c, o) in enumerate(zip(olc, operand_shapes)):
                    if o is not None and not self.compat(c, o):
                        self.add("E110", f"operand layout constraint {shape_str(c)} for operand {i} is not "
                                         f"compatible with the operand shape {shape_str(o)}",
                                 self.operand_loc(ins, ins.operands[i]), comp, ins)
                        break
        if operand_shapes and opcode not in _MIXED_PRECISION_OK and suffix is None:
            fts: set = set()
            for s_ in operand_shapes:
                _float_types(s_, fts)
            if len(fts) > 1:
                self.add("E108", f"{opcode} mixes floating-point types {', '.join(sorted(fts))} in its operands; "
                                 f"XLA's verifier disallows mixed precision (convert first)", ins.loc, comp, ins)
        inferred = None
        if (self.infer is not None and ok_operands and id(ins) not in self.flagged and known
                and all(s is not None for s in operand_shapes)):
            try:
                inferred = self.infer(ins, operand_shapes, self.m)
            except self.ShapeError as e:
                msg = str(e)
                self.add("E102", msg if msg.startswith(opcode) else f"{opcode}: {msg}", ins.loc, comp, ins)
            except Exception:  # noqa: BLE001 - a bug in a shape rule must not hide other findings
                inferred = None
            if inferred is not None and declared is not None and not self.compat(declared, inferred):
                self.add("E101", f"{opcode}: expected {shape_str(declared)}, inferred {shape_str(inferred)} "
                                 f"from the operands", ins.loc, comp, ins)
        if declared is None and inferred is None and ok_operands and self.infer is not None:
            self.add("E107", f"{ins.name}: the result shape of {opcode} is omitted and cannot be inferred",
                     ins.loc, comp, ins)
        cshapes[ins.name] = declared if declared is not None else inferred
        if ok_operands and known:
            self.check_instruction_rules(comp, ins, operand_shapes)

    # ---- rules of XLA's ShapeVerifier / InstructionVerifier beyond the shape rules
    def check_instruction_rules(self, comp, ins, operand_shapes) -> None:
        op = ins.opcode
        shape = self.shapes_in(comp).get(ins.name)
        # E112: buffer shapes (ShapeUtil::MakeBufferShape wants an array; the verifier wants none)
        buf = _first_buffer(ins.shape) if ins.shape is not None else None
        if buf is not None:
            el = buf.element
            if not (isinstance(el, ir.ArrayShape) and el.element_type.is_array_type):
                self.add("E112", f"{ins.name}: {shape_str(buf)}: a buffer shape must wrap an array shape "
                                 f"(XLA's parser rejects b() of a {_shape_kind(el)})", ins.loc, comp, ins)
            else:
                self.add("E112", f"{ins.name} has the buffer shape {shape_str(buf)}; XLA's verifier rejects "
                                 f"buffer shapes (\"buffers aren't allowed in this context\"): they exist only "
                                 f"inside compiler passes", ins.loc, comp, ins)
        if operand_shapes is None:
            return
        self.check_parser_rules(comp, ins, operand_shapes)
        # the opcode's own checks (beside its shape rule, as XLA's ShapeVerifier has a handler per opcode)
        check = check_for(op)
        if check is not None:
            check(self, comp, ins, operand_shapes, shape)

    def check_parser_rules(self, comp, ins, operand_shapes) -> None:
        """What XLA's parser itself refuses in a module that parses as text (hlo_parser.cc)."""
        op = ins.opcode
        # E116: FindInstruction: a declared operand shape must be compatible with the operand's
        for name, written, actual in zip(ins.operands, ins.operand_shapes or (), operand_shapes):
            if written is not None and actual is not None and not _same_dims(written, actual):
                self.add("E116", f"the declared operand shape {shape_str(written)} is not compatible with the "
                                 f"shape of the operand instruction {name}, {shape_str(actual)}",
                         self.operand_loc(ins, name), comp, ins)
        # E115: ParseResultAccuracy (the opcodes' own enumerations are checked beside their shape rules)
        ra = ins.attrs.get("result_accuracy")
        if ra is not None:
            problem = _result_accuracy_problem(ra)
            if problem:
                self.add("E115", f"result_accuracy: {problem}", self.attr_loc(ins, "result_accuracy"), comp, ins)
        # E407: ParseInstruction refuses use_global_device_ids=true without a channel_id
        if ins.attrs.get("use_global_device_ids") is True and ins.attrs.get("channel_id") is None:
            self.add("E407", f"{op}: use_global_device_ids=true needs a channel_id (XLA's parser: \"Cannot have "
                             f"use_global_device_ids=true without channel_id\")",
                     self.attr_loc(ins, "use_global_device_ids"), comp, ins)

    def check_required_attrs(self, comp, ins, specs, base, suffix) -> None:
        for s in specs:
            if not s.required or s.name in ins.attrs:
                continue
            if suffix is not None and (s.name == "calls" or suffix != "-start"):
                continue  # sugar: the wrapped op's attributes are written on the -start only
            if s.kind == "window" and ins.operands:
                first = self.shapes_in(comp).get(ins.operands[0])
                if first is None or _is_scalar(first):
                    continue  # XLA takes a missing window for rank-0 operands
            if ins.opcode == "async-update" or (ins.opcode == "async-done" and s.name == "calls"):
                continue
            self.add("E105", f"attribute {s.name} is expected but not seen ({ins.opcode})",
                     ins.loc, comp, ins)
        check = check_for(ins.opcode, "attributes")
        if check is not None:
            check(self, comp, ins)

    # ---- layouts
    def check_layouts(self, shape, comp, ins, where: str = "", loc=None) -> None:
        if isinstance(shape, ir.TupleShape):
            for e in shape.elements:
                self.check_layouts(e, comp, ins, where, loc)
            return
        if isinstance(shape, ir.BufferShape):
            self.check_layouts(shape.element, comp, ins, where, loc)
            return
        if loc is None:
            loc = ins.loc if ins is not None else (comp.loc if comp is not None else None)
        if ins is not None and shape.dynamic and any(d == ir.UNBOUNDED and dyn
                                                     for d, dyn in zip(shape.dims, shape.dynamic)):
            what = f"{ins.name}: "
            self.add("E109", f"{what}{shape_str(shape)} has an unbounded dimension; XLA's verifier rejects "
                             f"unbounded dynamism (use a bound: <=N)", loc, comp, ins)
        lay = shape.layout
        if lay is None:
            return
        m2m = lay.minor_to_major
        if sorted(m2m) != list(range(shape.rank)) and shape.element_type.is_array_type:
            what = f"{ins.name}: " if ins is not None else where
            if len(m2m) != shape.rank:
                why = f"has {len(m2m)} entries for {shape.rank} dimension(s)"
            elif len(set(m2m)) != len(m2m):
                why = "repeats a dimension"
            else:
                why = f"names a dimension outside 0..{shape.rank - 1}"
            self.add("E301", f"{what}layout {{{','.join(map(str, m2m))}}} of {shape_str(shape)} {why}; "
                             f"minor_to_major must be a permutation of 0..{shape.rank - 1}", loc, comp, ins)
        for t in lay.tiles:
            t = tuple(_tile_int(d) for d in t)
            if not t or any(d is None or (d != ir.TILE_COMBINE and d <= 0) for d in t):
                what = f"{ins.name}: " if ins is not None else where
                self.add("E302", f"{what}tile ({','.join('*' if d == ir.TILE_COMBINE else str(d) for d in t)}) "
                                 f"of {shape_str(shape)} must have positive sizes", loc, comp, ins)
        if (lay.index_type is not None or lay.pointer_type is not None or lay.physical_shape is not None) \
                and lay.dim_level_types is None:
            what = f"{ins.name}: " if ins is not None else where
            field = ("#(index type)" if lay.index_type is not None else "*(pointer type)"
                     if lay.pointer_type is not None else "a physical shape P(...)")
            self.add("E303", f"{what}layout of {shape_str(shape)} has {field}, but the array is not sparse",
                     loc, comp, ins)
        if lay.element_size_bits is not None and lay.element_size_bits < 0:
            self.add("E302", f"element size E({lay.element_size_bits}) must not be negative", loc, comp, ins)

    # ---- collectives
    def check_collective(self, comp, ins) -> None:
        attrs = ins.attrs
        rg = attrs.get("replica_groups")
        if isinstance(rg, ir.ReplicaGroups) and rg.mesh is None:
            try:
                groups = rg.expand()
            except Exception:  # noqa: BLE001 - an iota list that does not reshape
                self.add("E401", "replica_groups: the iota list does not reshape to its dimensions",
                         self.attr_loc(ins, "replica_groups"), comp, ins)
                groups = ()
            loc = self.attr_loc(ins, "replica_groups")
            seen: set[int] = set()
            problem = None
            for g in groups:
                if not g:
                    problem = "a replica group is empty"
                    break
                for r in g:
                    if r in seen:
                        problem = f"replica {r} is repeated in the replica groups"
                        break
                    seen.add(r)
                if problem:
                    break
            if problem is None and seen:
                missing = [i for i in range(len(seen)) if i not in seen]
                if missing:
                    problem = (f"replica {missing[0]} is not named in the replica groups (ids must be "
                               f"0..{len(seen) - 1})")
            if (problem is None and groups and ins.opcode not in _UNIFORM_GROUPS_EXEMPT
                    and len({len(g) for g in groups}) > 1):
                problem = (f"replica groups of {ins.opcode} must all have the same size; sizes are "
                           f"{', '.join(str(len(g)) for g in groups)}")
            if problem is None and seen:
                problem = self._replica_count_problem(ins, len(seen))
            if problem:
                self.add("E401", f"{ins.opcode}: {problem}", loc, comp, ins)
        pairs = attrs.get("source_target_pairs")
        if pairs is not None and ins.opcode.startswith("collective-permute"):
            self.check_source_target_pairs(comp, ins, pairs)
        ch = attrs.get("channel_id")
        if ch is not None and isinstance(ch, int) and ch <= 0 and ins.opcode not in _SEND_RECV:
            self.add("E403", f"{ins.opcode}: channel_id must be positive, is {ch}",
                     self.attr_loc(ins, "channel_id"), comp, ins)

    def _replica_count_problem(self, ins, n: int) -> Optional[str]:
        """The replica groups name n ids: as many as the replicas, partitions or both take part in the
        instruction's group mode, when the header sets those counts (CheckReplicaGroups)."""
        op = ins.opcode
        if op not in _GROUP_CHECKED:
            return None
        rc = self.m.attrs.get("replica_count")
        npart = self.m.attrs.get("num_partitions")
        rc = rc if isinstance(rc, int) and rc > 0 else 1
        npart = npart if isinstance(npart, int) and npart > 0 else 1
        has_channel = ins.attrs.get("channel_id") is not None
        ugdi = bool(ins.attrs.get("use_global_device_ids")) if op in _GLOBAL_IDS_FLAG else None
        if not has_channel:
            mode, want, what = "cross-replica", rc, f"replica_count={rc}"
        elif ugdi is None:
            mode, want, what = "cross-partition", npart, f"num_partitions={npart}"
        elif not ugdi:
            mode, want, what = "cross-replica-and-partition", rc, f"replica_count={rc}"
        else:
            mode, want, what = ("flattened-id", rc * npart,
                                f"replica_count*num_partitions={rc}*{npart}")
        if want == 1 or n == want:
            return None
        return (f"in {mode} mode the replica groups must name {want} ids ({what}), but they name {n}")

    def _permute_allowed_repeats(self, comp, ins) -> int:
        """How often an id may appear as a source (or a target) of a collective-permute: once, or once per
        slice for the in-place form (4 operands), as XLA's CheckDuplicatedSourceOrTarget counts them."""
        if len(ins.operands) != 4:
            return 1
        buf = self.shapes_in(comp).get(ins.operands[0])
        offs = self.shapes_in(comp).get(ins.operands[2])
        if not isinstance(offs, ir.TupleShape):
            return 1
        if not isinstance(buf, ir.TupleShape):
            return max(1, len(offs.elements))
        first = offs.elements[0] if offs.elements else None
        return max(1, len(first.elements)) if isinstance(first, ir.TupleShape) else 1

    def check_source_target_pairs(self, comp, ins, pairs) -> None:
        loc = self.attr_loc(ins, "source_target_pairs")
        allowed = self._permute_allowed_repeats(comp, ins)
        # ids must be below the replica count (no channel_id: cross-replica) or the partition count
        # (with a channel_id: cross-partition) when the header gives it (XLA's default 1 checks nothing)
        if ins.attrs.get("channel_id") is None:
            limit, what = self.m.attrs.get("replica_count"), "replica_count"
        else:
            limit, what = self.m.attrs.get("num_partitions"), "num_partitions"
        limit = limit if isinstance(limit, int) and limit > 1 else None
        n_src: dict[int, int] = {}
        n_tgt: dict[int, int] = {}
        times = "once" if allowed == 1 else f"{allowed} times"
        for p in pairs:
            if len(p) != 2 or min(p) < 0:
                self.add("E402", f"source_target_pairs entry {{{','.join(map(str, p))}}} must be two "
                                 f"non-negative ids", loc, comp, ins)
                return
            for role, i, seen in (("source", p[0], n_src), ("target", p[1], n_tgt)):
                if limit is not None and i >= limit:
                    self.add("E402", f"{role} {i} in source_target_pairs must be < {limit} (the module's "
                                     f"{what})", loc, comp, ins)
                    return
                if seen.get(i, 0) == allowed:
                    self.add("E402", f"{role} {i} appears more than {times} in source_target_pairs", loc, comp, ins)
                    return
                seen[i] = seen.get(i, 0) + 1

    # ---- called computations
    def called(self, ins) -> list[tuple[str, str]]:
        """[(attribute, computation name)] of an instruction."""
        specs = _call_specs(ins.opcode)
        out = []
        for s in specs:
            if s.name not in ins.attrs:
                continue
            v = ins.attrs[s.name]
            if s.kind == "comp":
                if isinstance(v, str):
                    out.append((s.name, v))
            else:
                out.extend((s.name, x) for x in v if isinstance(x, str))
        return out

    def check_calls_exist_and_acyclic(self) -> None:
        graph: dict[str, list[str]] = {}
        entry = self.m.entry if self.m.computations else None
        for comp in self.m.computations:
            edges = graph.setdefault(comp.name, [])
            if not self.calls_in(comp):
                continue
            for ins in comp.instructions:
                for attr, name in self.called(ins):
                    if name not in self.comps:
                        self.add("E201", f"computation does not exist: {name}", self.attr_loc(ins, attr),
                                 comp, ins)
                        continue
                    edges.append(name)
                    if entry is not None and name == entry.name:
                        self.add("E207", f"{ins.name} calls the entry computation {name}",
                                 self.attr_loc(ins, attr), comp, ins)
        # cycles (iterative DFS)
        state: dict[str, int] = {}
        for start in graph:
            if state.get(start):
                continue
            stack = [(start, iter(graph[start]))]
            path = [start]
            state[start] = 1
            while stack:
                node, it = stack[-1]
                nxt = next(it, None)
                if nxt is None:
                    state[node] = 2
                    stack.pop()
                    path.pop()
                    continue
                st = state.get(nxt, 0)
                if st == 1:
                    cyc = path[path.index(nxt):] + [nxt]
                    c = self.comps[nxt]
                    self.add("E202", "computations call each other in a cycle: " + " -> ".join(cyc),
                             c.loc, c)
                    state[nxt] = 2
                elif st == 0:
                    state[nxt] = 1
                    path.append(nxt)
                    stack.append((nxt, iter(graph.get(nxt, ()))))

    def calls_in(self, comp: ir.Computation) -> bool:
        """Whether an opcode of `comp` may call a computation."""
        return any(_call_specs(op) for op in self.opcodes_in(comp))

    def _params(self, comp: ir.Computation) -> list:
        """Parameter shapes of a computation, by number (None where unknown)."""
        ps = self.parameters_in(comp)
        out = [None] * len(ps)
        for p in ps:
            n = p.parameter_number
            if n is not None and 0 <= n < len(ps):
                out[n] = p.shape
        return out

    def _root_shape(self, comp: ir.Computation):
        if not comp.instructions:
            return None
        return self.shapes_in(comp).get(comp.root.name, comp.root.shape)

    def check_callees(self, comp: ir.Computation) -> None:
        if not self.calls_in(comp):
            return
        for ins in comp.instructions:
            calls = [(a, self.comps[n]) for a, n in self.called(ins) if n in self.comps]
            if not calls:
                continue
            cshapes = self.shapes_in(comp)
            ops = [cshapes.get(o) for o in ins.operands]
            try:
                self.check_signature(comp, ins, calls, ops)
            except _Stop:
                pass

    def sig_error(self, comp, ins, attr, message, code="E206"):
        self.add(code, message, self.attr_loc(ins, attr), comp, ins)
        raise _Stop

    def expect_params(self, comp, ins, attr, callee, n):
        ps = self._params(callee)
        if len(ps) != n:
            self.sig_error(comp, ins, attr, f"{attr}={callee.name} called from {ins.name} must have {n} "
                                            f"parameter(s), has {len(ps)}", "E205")
        return ps

    def check_reducer(self, comp, ins, attr, callee, n_args, elem_types=None, result=True):
        """A reducer of n_args values: 2N scalar parameters, result the N accumulators."""
        ps = self.expect_params(comp, ins, attr, callee, 2 * n_args)
        if any(p is None for p in ps):
            return
        for i, p in enumerate(ps):
            if not _is_scalar(p):
                self.sig_error(comp, ins, attr, f"{attr}={callee.name}: parameter {i} must be a scalar, is "
                                                f"{shape_str(p)}")
        for i in range(n_args):
            a, b = ps[i], ps[n_args + i]
            if a.element_type != b.element_type:
                self.sig_error(comp, ins, attr, f"{attr}={callee.name}: parameters {i} and {n_args + i} must "
                                                f"have the same type, are {shape_str(a)} and {shape_str(b)}")
            if elem_types is not None and i < len(elem_types) and elem_types[i] is not None \
                    and elem_types[i] != a.element_type:
                self.sig_error(comp, ins, attr, f"{attr}={callee.name}: parameter {i} is {shape_str(a)}, but "
                                                f"the values reduced are {elem_types[i].name}")
        if not result:
            return
        rs = self._root_shape(callee)
        if rs is None:
            return
        want = ps[:n_args]
        got = _leaves(rs) if n_args > 1 or isinstance(rs, ir.TupleShape) else [rs]
        if len(got) != n_args or not all(_is_scalar(g) and g.element_type == w.element_type
                                         for g, w in zip(got, want)):
            expected = shape_str(want[0]) if n_args == 1 else shape_str(ir.TupleShape(tuple(want)))
            self.sig_error(comp, ins, attr, f"{attr}={callee.name} must return {expected} (the type of its "
                                            f"accumulator parameters), returns {shape_str(rs)}")

    def check_predicate(self, comp, ins, attr, callee, n_params, elem_types=None, scalars=True):
        ps = self.expect_params(comp, ins, attr, callee, n_params)
        for i, p in enumerate(ps):
            if scalars and p is not None and not _is_scalar(p):
                self.sig_error(comp, ins, attr, f"{attr}={callee.name}: parameter {i} must be a scalar, is "
                                                f"{shape_str(p)}")
            if elem_types is not None and p is not None and elem_types[i] is not None \
                    and p.element_type != elem_types[i]:
                self.sig_error(comp, ins, attr, f"{attr}={callee.name}: parameter {i} is {shape_str(p)}, "
                                                f"the operand elements are {elem_types[i].name}")
        rs = self._root_shape(callee)
        if rs is not None and not (_is_scalar(rs) and rs.element_type.name == "pred"):
            self.sig_error(comp, ins, attr, f"{attr}={callee.name} must return pred[], returns {shape_str(rs)}")

    def match_params(self, comp, ins, attr, callee, shapes):
        ps = self.expect_params(comp, ins, attr, callee, len(shapes))
        for i, (p, s) in enumerate(zip(ps, shapes)):
            if p is not None and s is not None and not self.compat(p, s):
                self.sig_error(comp, ins, attr, f"{attr}={callee.name}: parameter {i} has shape {shape_str(p)}, "
                                                f"but {ins.name} passes {shape_str(s)}")

    def match_result(self, comp, ins, attr, callee, shape, what="the result"):
        rs = self._root_shape(callee)
        if rs is not None and shape is not None and not self.compat(rs, shape):
            self.sig_error(comp, ins, attr, f"{attr}={callee.name} returns {shape_str(rs)}, but {what} of "
                                            f"{ins.name} is {shape_str(shape)}")

    def check_signature(self, comp, ins, calls, ops) -> None:
        """The computations an instruction calls fit it: the opcode's signature check, beside its shape
        rule (it reports through sig_error and the helpers above)."""
        check = check_for(ins.opcode, "calls")
        if check is None:
            return
        shape = self.shapes_in(comp).get(ins.name)
        et = [s.element_type if isinstance(s, ir.ArrayShape) else None for s in ops]
        check(self, comp, ins, {a: c for a, c in calls}, ops, et, shape)

    # ---- async pairs (VerifyAsynchronousInstructionPairs)
    def check_async_pairs(self) -> None:
        for comp in self.m.computations:
            if not any(_async_role(op) for op in self.opcodes_in(comp)):
                continue
            by_name = self.by_name_in(comp)
            users = self.users_in(comp)
            for ins in comp.instructions:
                op = ins.opcode
                base, suffix = split_async(op)
                # the done/update side: its operand must be the matching start (or update)
                if op in ("async-done", "async-update") or suffix in ("-done", "-update") or op in _DONE_OF:
                    if len(ins.operands) != 1:
                        continue
                    src = by_name.get(ins.operands[0])
                    if src is None:
                        continue
                    if op in _DONE_OF:
                        ok = src.opcode == _DONE_OF[op]
                        want = _DONE_OF[op]
                    elif op in ("async-done", "async-update"):
                        ok = src.opcode in ("async-start", "async-update")
                        want = "async-start or async-update"
                    else:
                        ok = src.opcode in (base + "-start", base + "-update")
                        want = f"{base}-start or {base}-update"
                    if not ok:
                        self.add("E601", f"{op} {ins.name} must consume a {want}, but its operand "
                                         f"{src.name} is {src.opcode}", self.operand_loc(ins, src.name), comp, ins)
                    elif op not in _DONE_OF:
                        # the chain's start: updates inherit its computation and thread (XLA's parser
                        # checks what an update/done writes against what it inherits)
                        start = src
                        for _ in range(len(comp.instructions)):
                            if start.opcode.endswith("-start") or len(start.operands) != 1:
                                break
                            nxt = by_name.get(start.operands[0])
                            if nxt is None:
                                break
                            start = nxt
                        a, b = ins.attrs.get("calls"), start.attrs.get("calls")
                        if isinstance(a, str) and isinstance(b, str) and a != b:
                            self.add("E602", f"{op} {ins.name} calls {a}, but its chain's start {start.name} "
                                             f"calls {b}", self.attr_loc(ins, "calls"), comp, ins)
                        ta, tb = ins.attrs.get("async_execution_thread"), start.attrs.get("async_execution_thread")
                        tb = tb if isinstance(tb, str) else "main"
                        if isinstance(ta, str) and tb != ta:
                            self.add("E603", f"{op} {ins.name} names async_execution_thread={ta}, but its start "
                                             f"{start.name} runs on {tb} (XLA's parser: \"Expect "
                                             f"async_execution_thread to be {tb}\")",
                                     self.attr_loc(ins, "async_execution_thread"), comp, ins)
                # the start side: exactly one done/update user
                if op in _ASYNC_PAIRS or op in ("async-start", "async-update") or suffix in ("-start", "-update"):
                    us = users.get(ins.name, [])
                    if op in _ASYNC_PAIRS:
                        good = [u for u in us if u.opcode == _ASYNC_PAIRS[op]]
                        want = _ASYNC_PAIRS[op]
                    elif op in ("async-start", "async-update"):
                        good = [u for u in us if u.opcode in ("async-update", "async-done")]
                        want = "async-update or async-done"
                    else:
                        good = [u for u in us if u.opcode in (base + "-update", base + "-done")]
                        want = f"{base}-update or {base}-done"
                    if len(good) != 1 or len(us) != 1:
                        how = "none" if not us else ", ".join(f"{u.name} ({u.opcode})" for u in us)
                        self.add("E601", f"{op} {ins.name} must have exactly one user, a {want}; its users: "
                                         f"{how}", ins.loc, comp, ins)

    def check_async_shared(self) -> None:
        """E603: each async wrapped computation has exactly one async-start caller (HloParser::Run:
        "Computation X is called by more than one async op")."""
        starts: dict[str, list] = {}
        for comp in self.m.computations:
            if "async-start" not in self.opcodes_in(comp):
                continue
            for ins in comp.instructions:
                if ins.opcode == "async-start" and isinstance(ins.attrs.get("calls"), str):
                    starts.setdefault(ins.attrs["calls"], []).append((comp, ins))
        for name, callers in starts.items():
            if len(callers) > 1:
                comp, ins = callers[1]
                self.add("E603", f"computation {name} is called by more than one async op ({callers[0][1].name} "
                                 f"and {ins.name}); each async-start needs its own wrapped computation",
                         ins.loc, comp, ins)

    def check_async_computations(self) -> None:
        """E604: a computation wrapped by async-start holds its parameters and one root (VerifyAsyncComputation),
        unless it groups send/recv instructions."""
        for name in sorted(self.async_wrapped):
            c = self.comps.get(name)
            if c is None or not c.instructions:
                continue
            if any(i.opcode in ("send", "recv", "send-done", "recv-done") for i in c.instructions):
                continue
            root = c.root
            extra = [i for i in c.instructions if i is not root and i.opcode != "parameter"]
            if extra:
                self.add("E604", f"async wrapped computation {c.name} must hold only its parameters and its root "
                                 f"{root.name}, but also has {extra[0].name} ({extra[0].opcode})"
                                 + (f" and {len(extra) - 1} more" if len(extra) > 1 else ""),
                         extra[0].loc, c, extra[0])

    def check_all_reduce_layouts(self) -> None:
        """E406: all-reduces are all layout-constrained or none is (VerifyLayoutConstrainedAllReduce)."""
        first = None
        for comp in self.m.computations:
            if _ALL_REDUCE_OPS.isdisjoint(self.opcodes_in(comp)):
                continue
            for ins in comp.instructions:
                if ins.opcode not in _ALL_REDUCE_OPS:
                    continue
                cl = bool(ins.attrs.get("constrain_layout"))
                if first is None:
                    first = (ins, cl)
                elif cl != first[1]:
                    self.add("E406", f"{ins.opcode} {ins.name} {'has' if cl else 'lacks'} constrain_layout=true, "
                                     f"but {first[0].name}{self._line_of(first[0])} "
                                     f"{'has' if first[1] else 'does not'}: XLA wants all all-reduces of a module "
                                     f"layout-constrained or none", self.attr_loc(ins, "constrain_layout"), comp, ins)
                    return

    # ---- channels (VerifyChannels, and the send/recv pairs of VerifyAsynchronousInstructionPairs)
    def check_channels(self) -> None:
        by_channel: dict[int, list] = {}
        for comp in self.m.computations:
            if _SEND_RECV_OPS.isdisjoint(self.opcodes_in(comp)):
                # no send/recv: only the channel ids (any instruction may write one)
                chans = self._channel_ins.get(id(comp))
                if chans is None:
                    chans = [i for i in comp.instructions if "channel_id" in i.attrs_as_parsed()[0]]
                for ins in chans:
                    ch = ins.attrs["channel_id"]
                    if isinstance(ch, int) and not isinstance(ch, bool):
                        by_channel.setdefault(ch, []).append((comp, ins))
                continue
            by_name = self.by_name_in(comp)
            users = self.users_in(comp)
            for ins in comp.instructions:
                op = ins.opcode
                ch = ins.attrs.get("channel_id")
                if op in ("send", "recv", "send-done", "recv-done"):
                    if ch is None:
                        self.add("E405", f"{op} {ins.name} has no channel_id (XLA gives every send/recv one; "
                                         f"StableHLO requires it: \"requires attribute 'channel_handle'\")",
                                 ins.loc, comp, ins)
                    elif isinstance(ch, int) and ch <= 0:
                        self.add("E405", f"{op} {ins.name}: channel_id must be positive, is {ch}",
                                 self.attr_loc(ins, "channel_id"), comp, ins)
                if isinstance(ch, int) and not isinstance(ch, bool):
                    by_channel.setdefault(ch, []).append((comp, ins))
                if op in ("send", "recv"):
                    done = op + "-done"
                    us = users.get(ins.name, [])
                    if ins is comp.root and comp.name in self.async_wrapped:
                        continue  # wrapped in an async op: no users
                    if len(us) != 1 or us[0].opcode not in (done, "tuple"):
                        how = "none" if not us else ", ".join(f"{u.name} ({u.opcode})" for u in us)
                        self.add("E601", f"{op} {ins.name} must have exactly one user, a {done} (or a tuple); "
                                         f"its users: {how}", ins.loc, comp, ins)
                        continue
                    d = us[0]
                    if d.opcode == done:
                        dch = d.attrs.get("channel_id")
                        if dch != ch:
                            show = lambda c: "none" if c is None else f"channel_id={c}"  # noqa: E731
                            self.add("E405", f"{done} {d.name} has {show(dch)}, but its {op} {ins.name} has "
                                             f"{show(ch)} (XLA's parser rejects this)",
                                     self.attr_loc(d, "channel_id"), comp, d)
                        if bool(d.attrs.get("is_host_transfer")) != bool(ins.attrs.get("is_host_transfer")):
                            self.add("E405", f"{done} {d.name} and its {op} {ins.name} must agree on "
                                             f"is_host_transfer", d.attr_locs.get("is_host_transfer") or d.loc,
                                     comp, d)
                elif op in ("send-done", "recv-done") and len(ins.operands) == 1:
                    src = by_name.get(ins.operands[0])
                    start = op[:-5]
                    if src is not None and src.opcode not in (start, "get-tuple-element"):
                        self.add("E601", f"{op} {ins.name} must consume a {start} (or a get-tuple-element), but "
                                         f"its operand {src.name} is {src.opcode}",
                                 self.operand_loc(ins, src.name), comp, ins)
        # a channel whose first instruction (in text order, as XLA's parser adds them) is a send/recv
        # is for send/recv only; other channels are not checked (verify_unique_channel_ids is off by default)
        sendrecv = _SEND_RECV
        for ch, items in by_channel.items():
            first = items[0][1]
            if first.opcode not in sendrecv:
                continue
            other = next(((c, i) for c, i in items if i.opcode not in sendrecv), None)
            if other is not None:
                comp, ins = other
                self.add("E405", f"channel {ch} is used by {first.opcode} {first.name} and by {ins.opcode} "
                                 f"{ins.name}: send/recv channels cannot be shared with other kinds of "
                                 f"instructions", self.attr_loc(ins, "channel_id"), comp, ins)

    # ---- header
    def check_header(self) -> None:
        if not self.m.computations:
            return
        entry = self.m.entry
        params = self._params(entry)
        root = self._root_shape(entry)
        ecl = self.m.attrs.get("entry_computation_layout")
        if isinstance(ecl, ir.GProgramShape) and self._header_has("entry_computation_layout"):
            loc = self.header_loc("entry_computation_layout")
            sig = None
            if loc is not None:
                sig = self._entry_layout_signature()
            p_locs = [self.loc_at(o) for o in sig[0]] if sig and len(sig[0]) == len(ecl.params) else None
            r_loc = self.loc_at(sig[1]) if sig and sig[1] is not None else None
            for k, s_ in enumerate(list(ecl.params) + [ecl.result]):
                at = (p_locs[k] if p_locs and k < len(p_locs) else r_loc if k == len(ecl.params) and r_loc else loc)
                self.check_layouts(s_, None, None, "entry_computation_layout: ", at)
            by_number = {p.parameter_number: p for p in self.parameters_in(entry)}
            if len(ecl.params) != len(params):
                self.add("E501", f"entry_computation_layout has {len(ecl.params)} parameter(s), the entry "
                                 f"computation {entry.name} has {len(params)}", loc)
            else:
                for i, (a, b) in enumerate(zip(ecl.params, params)):
                    if b is not None and not self.compat(a, b):
                        p = by_number.get(i)
                        self.add("E501", f"entry_computation_layout gives parameter {i} shape {shape_str(a)}, "
                                         f"but parameter({i}){' ' + p.name if p is not None else ''} of "
                                         f"{entry.name}{self._line_of(p)} is {shape_str(b)}",
                                 p_locs[i] if p_locs else loc)
            if root is not None and not self.compat(ecl.result, root):
                self.add("E501", f"entry_computation_layout gives result {shape_str(ecl.result)}, but the ROOT "
                                 f"{entry.root.name} of {entry.name}{self._line_of(entry.root)} is "
                                 f"{shape_str(root)}", r_loc or loc)
        alias = self.m.attrs.get("input_output_alias")
        if alias:
            loc = self.header_loc("input_output_alias")
            outs: set = set()
            seen_params: dict = {}
            for e in alias:
                oi = tuple(e.output_index or ())
                where = f"input_output_alias {{{','.join(map(str, oi))}}}: ({e.param_number}, " \
                        f"{{{','.join(map(str, e.param_index))}}})"
                if oi in outs:
                    self.add("E502", f"{where}: output {{{','.join(map(str, oi))}}} is aliased twice", loc)
                    continue
                outs.add(oi)
                osub = subshape(root, oi) if root is not None else None
                if root is not None and osub is None:
                    self.add("E502", f"{where}: the output has no element {{{','.join(map(str, oi))}}} "
                                     f"(output shape {shape_str(root)})", loc)
                    continue
                if not 0 <= e.param_number < len(params):
                    self.add("E502", f"{where}: parameter {e.param_number} does not exist ({entry.name} has "
                                     f"{len(params)} parameter(s))", loc)
                    continue
                psub = subshape(params[e.param_number], tuple(e.param_index)) \
                    if params[e.param_number] is not None else None
                if params[e.param_number] is not None and psub is None:
                    self.add("E502", f"{where}: parameter {e.param_number} has no element "
                                     f"{{{','.join(map(str, e.param_index))}}} (shape "
                                     f"{shape_str(params[e.param_number])})", loc)
                    continue
                pkey = (e.param_number, tuple(e.param_index))
                if pkey in seen_params:
                    self.add("E502", f"{where}: parameter {e.param_number} {{{','.join(map(str, e.param_index))}}} "
                                     f"is already aliased with output {{{','.join(map(str, seen_params[pkey]))}}}",
                             loc)
                    continue
                seen_params[pkey] = oi
                tup = next(((what, s_) for what, s_ in (("output", osub), ("parameter", psub))
                            if isinstance(s_, ir.TupleShape)), None)
                if tup is not None:
                    self.add("E502", f"{where}: aliased buffers must be arrays, but the {tup[0]} is the tuple "
                                     f"{shape_str(tup[1])}", loc)
                    continue
                if osub is not None and psub is not None:
                    bo, bp = _byte_size(osub), _byte_size(psub)
                    if bo is None or bp is None or bo != bp:
                        self.add("E502", f"{where}: the output {shape_str(osub)} and the parameter "
                                         f"{shape_str(psub)} differ in size", loc)
        donors = self.m.attrs.get("buffer_donor")
        if donors:
            loc = self.header_loc("buffer_donor")
            for e in donors:
                if not 0 <= e.param_number < len(params):
                    self.add("E503", f"buffer_donor ({e.param_number}, ...): parameter {e.param_number} does "
                                     f"not exist ({entry.name} has {len(params)} parameter(s))", loc)
                elif params[e.param_number] is not None and \
                        subshape(params[e.param_number], tuple(e.param_index)) is None:
                    self.add("E503", f"buffer_donor ({e.param_number}, {{{','.join(map(str, e.param_index))}}}): "
                                     f"parameter {e.param_number} has no such element", loc)
                elif isinstance(subshape(params[e.param_number], tuple(e.param_index)), ir.TupleShape):
                    self.add("E503", f"buffer_donor ({e.param_number}, {{{','.join(map(str, e.param_index))}}}): "
                                     f"a donated buffer must be an array, this one is the tuple "
                                     f"{shape_str(subshape(params[e.param_number], tuple(e.param_index)))}", loc)
                elif any(a.param_number == e.param_number and tuple(a.param_index) == tuple(e.param_index)
                         for a in (alias or ())):
                    self.add("E503", f"buffer_donor ({e.param_number}, {{{','.join(map(str, e.param_index))}}}): "
                                     f"the buffer is also in input_output_alias (a buffer is aliased or donated, "
                                     f"not both)", loc)


class _Stop(Exception):
    """One signature error per call site is enough."""


def check(module: ir.Module, *, ignore: Iterable[str] = (), notes: bool = True,
          shapes: bool = True, filename: Optional[str] = None) -> list[Finding]:
    """Verify a module as XLA's HloVerifier would.  Returns the findings (empty when valid), in text order
    within each kind of check.  `ignore`: codes to drop; `notes`: keep severity-note findings;
    `shapes`: run the shape rules (declared vs inferred)."""
    infer_fn, compat, shape_error = (infer_shape, shapes_compatible, ShapeError) if shapes else \
        (None, _compatible_local, None)
    with ir.gc_paused():
        findings = _Checker(module, infer_fn, compat, shape_error, filename).run()
    out = filter_findings(findings, ignore, notes)
    out.sort(key=lambda f: (f.line is None, f.line or 0, f.column or 0))
    return out


def filter_findings(findings: Iterable[Finding], ignore: Iterable[str] = (), notes: bool = True) -> list[Finding]:
    """The findings, in order, but those whose code or name is in `ignore` and, unless `notes`, the notes."""
    skip = {c.strip().upper() for c in ignore if c and c.strip()}
    names = {v[0]: k for k, v in CODES.items()}
    skip |= {names[c.lower()] for c in list(skip) if c.lower() in names}
    return [f for f in findings if f.code not in skip and (notes or f.severity != "note")]
