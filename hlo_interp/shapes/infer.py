"""Shape inference: for every opcode, the result shape XLA infers from the operands and attributes.

This module is the driver, the rule context (Ctx) and the shape helpers the rules share; the rules
themselves live in one module per opcode family beside it (elementwise.py, movement.py, reduce.py,
...): the module each opcode's entry in the opcode table names (OpSpec.rule_module).  One rule per
opcode, after XLA's ShapeInference (xla/service/shape_inference.cc) and the checks HloVerifier
(xla/service/hlo_verifier.cc) makes with it.  Used by the verifier (declared vs inferred), by the parser (a result shape the text omits) and
by composite evaluators.

    infer_shape(ins, operand_shapes, module) -> Shape | None
        The inferred shape, without layouts.  Where XLA takes part of the result from the
        instruction itself (convert's element type, reshape's dimensions, dot's preferred element
        type, the shard count of all-gather, rng's dimensions, ...), that part is read from
        `ins.shape`.  None when XLA does not infer the shape at all (parameter, constant,
        custom-call, or when the needed declared part is missing).  Raises ShapeError when the
        operands or attributes are invalid for the opcode.

    shapes_compatible(declared, inferred, *, ignore_fp_precision=False) -> bool
        XLA's ShapeUtil::Compatible (what HloVerifier's CheckShape uses when not layout-sensitive):
        same tuple structure, element types and dimensions; layouts and dynamic-dimension markers
        are ignored.  ignore_fp_precision=True is CompatibleIgnoringFpPrecision (the verifier's
        allow_mixed_precision mode).

    fill_omitted_shapes(module)
        The parser's use: infers the result shape of every instruction whose text omits it, for the
        opcodes XLA's parser infers (PARSER_CAN_INFER), keeping the layouts XLA's inference carries
        over (so the printout matches XLA's).

Where XLA's inference and its verifier differ from older documentation, the rule follows what
jaxlib 0.10.2 (XLA:CPU) does; e.g. mulhi has no type rule, an integral dot may narrow, HLO has no
implicit broadcast (an elementwise op needs equal dimensions; only select's predicate and clamp's
bounds may be scalars).
"""
from __future__ import annotations

import importlib
import struct
from typing import Callable, Optional, Sequence

from .. import ir
from ..opcodes import OPCODES, opcodes_where, split_async
from ..types import PRIMITIVE_TYPES, PrimitiveType

Shape = ir.Shape

PRED = PRIMITIVE_TYPES["pred"]
S32 = PRIMITIVE_TYPES["s32"]
U32 = PRIMITIVE_TYPES["u32"]
U64 = PRIMITIVE_TYPES["u64"]
F32 = PRIMITIVE_TYPES["f32"]
F64 = PRIMITIVE_TYPES["f64"]
C64 = PRIMITIVE_TYPES["c64"]
C128 = PRIMITIVE_TYPES["c128"]
TOKEN = PRIMITIVE_TYPES["token"]

TOKEN_SHAPE = ir.ArrayShape(TOKEN, (), ())
U32_SCALAR = ir.ArrayShape(U32, (), ())


class ShapeError(Exception):
    """The operands or attributes of an instruction are invalid for its opcode."""

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message


# --------------------------------------------------------------------------------------------------
# Shape helpers

def human(shape: Optional[Shape]) -> str:
    """XLA's ShapeUtil::HumanString: `f32[4,<=3]`, `(f32[], s32[2])` (no layouts)."""
    if shape is None:
        return "<unknown>"
    return shape.text(layouts=False)


def array(et: PrimitiveType, dims: Sequence[int], dynamic: Optional[Sequence[bool]] = None) -> ir.ArrayShape:
    dims = tuple(int(d) for d in dims)
    if dynamic is None or not any(dynamic):
        dyn = (False,) * len(dims)
    else:
        dyn = tuple(bool(x) for x in dynamic)
    return ir.ArrayShape(et, dims, dyn)


def dynamic_of(s: ir.ArrayShape) -> tuple[bool, ...]:
    return s.dynamic if len(s.dynamic) == len(s.dims) else (False,) * len(s.dims)


def strip_layout(shape: Shape) -> Shape:
    if isinstance(shape, ir.TupleShape):
        return ir.TupleShape(tuple(strip_layout(s) for s in shape.elements))
    if isinstance(shape, ir.BufferShape):
        return ir.BufferShape(strip_layout(shape.element))
    return array(shape.element_type, shape.dims, dynamic_of(shape)) if shape.layout is not None or \
        len(shape.dynamic) != len(shape.dims) else shape


def with_type(s: ir.ArrayShape, et: PrimitiveType) -> ir.ArrayShape:
    """ShapeUtil::ChangeElementType: keeps dimensions, dynamism and layout."""
    return ir.ArrayShape(et, s.dims, dynamic_of(s), s.layout)


def kept(shape: Shape) -> Shape:
    """An operand's shape as a result, layout kept (rules keep layouts where XLA's inference does;
    infer_shape strips them, the parser's fill-in keeps them as XLA's parser does)."""
    return shape


def tuple_of(shapes: Sequence[Shape]) -> ir.TupleShape:
    return ir.TupleShape(tuple(shapes))


def is_array(s: Shape) -> bool:
    return isinstance(s, ir.ArrayShape) and s.element_type.is_array_type


def is_scalar(s: Shape) -> bool:
    return is_array(s) and not s.dims


def is_token(s: Shape) -> bool:
    return isinstance(s, ir.ArrayShape) and s.element_type.kind == "token"


def same_dims(a: ir.ArrayShape, b: ir.ArrayShape) -> bool:
    return tuple(a.dims) == tuple(b.dims)


def same_type_ignoring_fp(a: PrimitiveType, b: PrimitiveType) -> bool:
    return a == b or (a.is_float and b.is_float)


def shapes_compatible(declared: Shape, inferred: Shape, *, ignore_fp_precision: bool = False) -> bool:
    """Equal ignoring layouts and dynamic-dimension markers (XLA's ShapeUtil::Compatible);
    with ignore_fp_precision, floating-point types of different widths also match."""
    if isinstance(declared, ir.TupleShape) or isinstance(inferred, ir.TupleShape):
        return (isinstance(declared, ir.TupleShape) and isinstance(inferred, ir.TupleShape)
                and len(declared.elements) == len(inferred.elements)
                and all(shapes_compatible(a, b, ignore_fp_precision=ignore_fp_precision)
                        for a, b in zip(declared.elements, inferred.elements)))
    if isinstance(declared, ir.BufferShape) or isinstance(inferred, ir.BufferShape):
        return (isinstance(declared, ir.BufferShape) and isinstance(inferred, ir.BufferShape)
                and shapes_compatible(declared.element, inferred.element,
                                      ignore_fp_precision=ignore_fp_precision))
    a, b = declared.element_type, inferred.element_type
    if a != b and not (ignore_fp_precision and a.is_float and b.is_float):
        return False
    if not a.is_array_type:
        return True
    return tuple(declared.dims) == tuple(inferred.dims)


def compatible(a: Shape, b: Shape) -> bool:
    return shapes_compatible(a, b)


def compatible_fp(a: Shape, b: Shape) -> bool:
    return shapes_compatible(a, b, ignore_fp_precision=True)


_FP_RANK_CACHE: dict[str, tuple] = {}

# (maxexp, significand bits incl. the implicit one) of each float type: ml_dtypes.finfo's, written out
# so that shape inference needs no NumPy (tests/test_startup.py checks them against ml_dtypes).
FLOAT_FORMATS = {"f16": (16, 11), "f32": (128, 24), "f64": (1024, 53), "bf16": (128, 8),
                 "f8e5m2": (16, 3), "f8e4m3": (8, 4), "f8e4m3fn": (9, 4), "f8e4m3b11fnuz": (5, 4),
                 "f8e3m4": (4, 5), "f8e5m2fnuz": (16, 3), "f8e4m3fnuz": (8, 4), "f4e2m1fn": (3, 2),
                 "f8e8m0fnu": (128, 1)}


def _type_rank(t: PrimitiveType) -> tuple:
    """The order of XLA's primitive_util::HigherPrecisionType."""
    got = _FP_RANK_CACHE.get(t.name)
    if got is None:
        comp = t
        if t.is_complex:
            comp = F32 if t.name == "c64" else F64
        if comp.is_float:
            exp, sig = FLOAT_FORMATS[comp.name]
        else:
            exp = sig = -1
        got = (t.is_complex, exp, sig, comp.bits, t.kind == "sint")
        _FP_RANK_CACHE[t.name] = got
    return got


def higher_precision(a: PrimitiveType, b: PrimitiveType) -> PrimitiveType:
    if a == b:
        return a
    return a if _type_rank(a) >= _type_rank(b) else b


def type_name(t: PrimitiveType) -> str:
    return t.name


def shape_str(s) -> str:
    """A shape in the verifier's messages: `f32[4,<=3]`, `?` when unknown."""
    if s is None:
        return "?"
    if isinstance(s, ir.TupleShape):
        return "(" + ", ".join(shape_str(e) for e in s.elements) + ")"
    if isinstance(s, ir.BufferShape):
        return f"b({shape_str(s.element)})"
    dims = []
    for i, d in enumerate(s.dims):
        dyn = bool(s.dynamic and s.dynamic[i])
        dims.append("?" if d == ir.UNBOUNDED and dyn else (f"<={d}" if dyn else str(d)))
    return f"{s.element_type.name}[{','.join(dims)}]"


def subshape(s, index: tuple[int, ...]):
    """The element of a tuple shape at `index` (None when there is none)."""
    for i in index:
        if not isinstance(s, ir.TupleShape) or not 0 <= i < len(s.elements):
            return None
        s = s.elements[i]
    return s


def value_text(v) -> str:
    """An attribute's value as the text wrote it (a verifier message's)."""
    if isinstance(v, ir.GName):
        return v.text
    return str(getattr(v, "text", v))


def check_enum(chk, comp, ins, attr: str, known_values) -> None:
    """E115: an enumeration attribute with a value XLA's parser refuses (a verifier check's helper)."""
    v = ins.attrs.get(attr)
    if v is None:
        return
    text = v.text if isinstance(v, ir.GName) else v if isinstance(v, str) else None
    if text is None or text not in known_values:
        chk.add("E115", f"{ins.opcode} {attr}={value_text(v)} is not one of {', '.join(sorted(known_values))}",
                chk.attr_loc(ins, attr), comp, ins)


# --------------------------------------------------------------------------------------------------
# Signature keys: the verifier and the analyses remember their per-instruction result by the
# instruction's signature (opcode, shapes, attributes), which a large module repeats thousands of times

# attributes no shape rule, verifier check or cost rule reads
UNREAD_ATTRS = frozenset({"metadata", "backend_config", "statistics", "origin"})
_UNKEYED = object()
_FIELDS: dict[type, tuple] = {}


def attrs_key(attrs: dict, skip=UNREAD_ATTRS) -> Optional[tuple]:
    """The attributes (but those named in `skip`) as a hashable key, equal only for values equal in
    type too; None when a value is of a type it cannot key."""
    items = []
    for k, v in attrs.items():
        if k in skip:
            continue
        t = type(v)
        if t is not str and t is not int:
            v = _frozen(v)
            if v is _UNKEYED:
                return None
        items.append((k, v))
    return tuple(items)


def _frozen(v):
    """An attribute value as a hashable key (1, 1.0 and True are equal in Python, 0.0 and -0.0 too;
    they differ here): ints and strings as they are, tuples as tuples of keys, other values tagged
    with their type; _UNKEYED for a value of an unexpected type."""
    t = type(v)
    if t is int or t is str or v is None:
        return v
    if t is tuple:
        for x in v:
            if type(x) is not int:
                break
        else:
            return v
        out = []
        for x in v:
            x = _frozen(x)
            if x is _UNKEYED:
                return _UNKEYED
            out.append(x)
        return tuple(out)
    if t is bool:
        return t, v
    if t is float:  # by its bits: -0.0 == 0.0, and NaN != NaN
        return t, struct.pack("<d", v)
    if t is list:
        got = _frozen(tuple(v))
        return _UNKEYED if got is _UNKEYED else (list, got)
    if t is dict:
        out = []
        for k, x in v.items():
            x = _frozen(x)
            if x is _UNKEYED or type(k) is not str:
                return _UNKEYED
            out.append((k, x))
        return dict, tuple(out)
    names = _FIELDS.get(t)
    if names is None:
        fields = getattr(t, "__dataclass_fields__", None)
        params = getattr(t, "__dataclass_params__", None)
        if fields is None or params is None or not params.frozen:
            return _UNKEYED
        names = _FIELDS[t] = tuple(fields)
    out = [t]
    for n in names:
        x = _frozen(getattr(v, n))
        if x is _UNKEYED:
            return _UNKEYED
        out.append(x)
    return tuple(out)


# --------------------------------------------------------------------------------------------------
# Rule context

class Ctx:
    __slots__ = ("ins", "ops", "module", "attrs", "opcode")

    def __init__(self, ins: ir.Instruction, ops: list, module: Optional[ir.Module], opcode: str):
        self.ins = ins
        self.ops = ops
        self.module = module
        self.attrs = ins.attrs
        self.opcode = opcode

    @property
    def declared(self) -> Optional[Shape]:
        return self.ins.shape

    def attr(self, name, default=None):
        return self.attrs.get(name, default)

    def arity(self, n: int) -> None:
        if len(self.ops) != n:
            raise ShapeError(f"{self.opcode} expects {n} operand{'s' if n != 1 else ''}, "
                             f"but has {len(self.ops)}")

    def at_least(self, n: int) -> None:
        if len(self.ops) < n:
            raise ShapeError(f"{self.opcode} expects at least {n} operand{'s' if n != 1 else ''}, "
                             f"but has {len(self.ops)}")

    def array_op(self, i: int, what: str = "operand") -> ir.ArrayShape:
        s = self.ops[i]
        if not is_array(s):
            raise ShapeError(f"expected an array for {what} of {self.opcode}, got {human(s)}")
        return s

    def declared_array(self) -> Optional[ir.ArrayShape]:
        d = self.declared
        if d is None:
            return None
        if not isinstance(d, ir.ArrayShape):
            raise ShapeError(f"{self.opcode} produces an array, but the instruction's shape is {human(d)}")
        return d

    def declared_tuple(self, n: Optional[int] = None) -> Optional[ir.TupleShape]:
        d = self.declared
        if d is None:
            return None
        if not isinstance(d, ir.TupleShape) or (n is not None and len(d.elements) != n):
            what = f"a tuple of {n} elements" if n is not None else "a tuple"
            raise ShapeError(f"{self.opcode} produces {what}, but the instruction's shape is {human(d)}")
        return d

    def computation(self, attr: str) -> ir.Computation:
        name = self.attrs.get(attr)
        if name is None:
            raise ShapeError(f"{self.opcode} needs a computation ({attr}=)")
        return computation_named(self.module, name)

    def dims_attr(self, name: str = "dimensions", default=()) -> tuple[int, ...]:
        v = self.attrs.get(name, default)
        return tuple(v) if v is not None else ()


def computation_named(module: Optional[ir.Module], name) -> ir.Computation:
    if not isinstance(name, str):
        raise ShapeError("called computation is not resolved")
    if module is None:
        raise ShapeError(f"computation {name} is not known (no module)")
    try:
        return module.computation(name)
    except KeyError:
        raise ShapeError(f"computation does not exist: {name}") from None


def program_shape(comp: ir.Computation) -> tuple[list[Shape], Shape]:
    """(parameter shapes by number, root shape) of a computation."""
    params = [p.shape for p in comp.parameters()]
    root = comp.root.shape
    if root is None or any(p is None for p in params):
        raise ShapeError(f"the shape of computation {comp.name} is not known")
    return params, root


def signature(params, result) -> str:
    return "(" + ", ".join(human(p) for p in params) + ") -> " + human(result)


# --------------------------------------------------------------------------------------------------
# The rules: each opcode's entry in the opcode table names the module of this package that holds its
# shape rule (OpSpec.rule_module); that module registers the rule when it is imported, which happens
# the first time the opcode is looked up.

RULES: dict[str, Callable[[Ctx], Optional[Shape]]] = {}


def register(names: str, rule: Callable[[Ctx], Optional[Shape]]) -> None:
    """Register `rule` as the shape rule of the opcodes `names` (a family module's use)."""
    for n in names.split():
        RULES[n] = rule


def rule_module(name: str):
    """The family module `name` of this package (imported once, on first use)."""
    return importlib.import_module(f"{__package__}.{name}")


_LOADED: dict[str, object] = {}


def _load_family(spec):
    """The family module an entry names, or None when there is no such module (a half-added opcode:
    its rule is reported missing, located, instead of an import traceback)."""
    module = _LOADED.get(spec.rule_module)
    if module is None:
        try:
            module = _LOADED[spec.rule_module] = rule_module(spec.rule_module)
        except ModuleNotFoundError as e:
            if e.name != f"{__package__}.{spec.rule_module}":
                raise
    return module


def load_all() -> None:
    """Import every family module the opcode table names (then RULES holds every rule)."""
    for name in sorted({o.rule_module for o in OPCODES.values()}):
        rule_module(name)


def rule_for(opcode: str) -> Optional[Callable[[Ctx], Optional[Shape]]]:
    """The shape rule of `opcode` (an `<op>-start/-update/-done` async form: the async ops' rules), or
    None for a name that is no opcode.  Raises ShapeError for an opcode whose entry names a module
    that registers no rule for it (an opcode added to the table without its rule)."""
    spec = OPCODES.get(opcode)
    if spec is not None:
        rule = RULES.get(opcode)
        if rule is None and _load_family(spec) is None:
            raise ShapeError(f"{opcode} has no shape rule: its entry in the opcode table names "
                             f"hlo_interp/shapes/{spec.rule_module}.py, which does not exist")
        rule = RULES.get(opcode)
        if rule is None:
            raise ShapeError(f"{opcode} has no shape rule: its entry in the opcode table names "
                             f"hlo_interp/shapes/{spec.rule_module}.py, which registers none for it")
        return rule
    base, suf = split_async(opcode)
    if suf == "-start":
        return rule_module(OPCODES["async-start"].rule_module).sugar_start(base)
    if suf == "-update":
        return rule_for("async-update")
    if suf == "-done":
        return rule_for("async-done")
    return None


# Verifier checks beside the rules: a family module may register, for an opcode, the checks XLA's
# verifier makes beyond its shape rule (as XLA's ShapeVerifier has a handler per opcode).  verify.py's
# checker (`chk`, which reports through chk.add) runs them at five points, each with its arguments:
#   "attributes"  check(chk, comp, ins)                 after the schema's required attributes
#   "operands"    check(chk, comp, ins)                 the operand count (E103) of an opcode whose count is
#                 not its fixed arity (variadic ones, dot's sparsity); False: the operands are unusable
#   "values"      check(chk, comp, ins, by_name)        after the operand count, when the operands are
#                 defined: the instruction and its operand instructions (by_name: its computation's)
#   "rules"       check(chk, comp, ins, operand_shapes, shape)          after the shape rule
#   "calls"       check(chk, comp, ins, callees, operand_shapes, operand_element_types, shape)
#                 the computations it calls (callees: attribute -> computation)
PHASES = ("attributes", "operands", "values", "rules", "calls")
CHECKS: dict[tuple[str, str], Callable] = {}


def register_check(names: str, check: Callable, phase: str = "rules") -> None:
    assert phase in PHASES, phase
    for n in names.split():
        CHECKS[(phase, n)] = check


def check_for(opcode: str, phase: str = "rules") -> Optional[Callable]:
    """The verifier's check of `opcode` at `phase` (see PHASES), beside its shape rule, or None."""
    spec = OPCODES.get(opcode)
    if spec is None or _load_family(spec) is None:
        return None
    return CHECKS.get((phase, opcode))


def infer_shape(ins: ir.Instruction, operand_shapes: Sequence[Shape], module: Optional[ir.Module]) -> Optional[Shape]:
    """The shape XLA infers for `ins` given its operands' shapes (see the module docstring),
    without layouts."""
    got = _infer(ins, operand_shapes, module)
    return None if got is None else strip_layout(got)


def _infer(ins: ir.Instruction, operand_shapes: Sequence[Shape], module: Optional[ir.Module]) -> Optional[Shape]:
    """As infer_shape, keeping the layouts XLA's inference carries over from operands."""
    rule = rule_for(ins.opcode)
    if rule is None:
        raise ShapeError(f"unknown opcode {ins.opcode}")
    ops = list(operand_shapes)
    for i, s in enumerate(ops):
        if s is None:
            raise ShapeError(f"the shape of operand {i} of {ins.opcode} is not known")
    try:
        return rule(Ctx(ins, ops, module, ins.opcode))
    except ShapeError:
        raise
    except (KeyError, IndexError, TypeError, AttributeError, ValueError, ZeroDivisionError) as e:
        # A malformed attribute value the decoders let through: report it, never a traceback.
        raise ShapeError(f"invalid operands or attributes for {ins.opcode}: {e!r}") from None


# --------------------------------------------------------------------------------------------------
# Filling omitted shapes (the parser's use)

# The opcodes whose result shape XLA's parser infers when the text omits it (hlo_parser.cc
# CanInferShape, plus the newer elementwise opcodes): the table's `parser_infers`.  Others must be
# written ("cannot infer shape").
PARSER_CAN_INFER = opcodes_where(lambda o: o.parser_infers)


def fill_omitted_shapes(module: ir.Module) -> Optional[tuple[ir.Instruction, str]]:
    """Infer the result shape of every instruction whose text omitted it, in dependency order
    (called computations first).  Returns (instruction, message) for the first failure, else None."""
    by_comp: dict[str, ir.Computation] = {c.name: c for c in module.computations}
    done: set[str] = set()
    visiting: set[str] = set()

    def called(ins: ir.Instruction) -> list[str]:
        out = []
        for v in ins.attrs.values():
            if isinstance(v, str) and v in by_comp:
                out.append(v)
            elif isinstance(v, tuple):
                out.extend(x for x in v if isinstance(x, str) and x in by_comp)
        return out

    def visit(comp: ir.Computation):
        if comp.name in done or comp.name in visiting:
            return None
        visiting.add(comp.name)
        shapes: dict[str, Shape] = {i.name: i.shape for i in comp.instructions if i.shape is not None}
        pending = [i for i in comp.instructions if i.shape is None]
        while pending:
            left = []
            first_err = None
            for ins in pending:
                if ins.opcode not in PARSER_CAN_INFER:
                    return ins, f"cannot infer shape for opcode: {ins.opcode}; write its result shape"
                for name in called(ins):
                    err = visit(by_comp[name])
                    if err is not None:
                        return err
                ops = []
                for i, name in enumerate(ins.operands):
                    s = shapes.get(name)
                    if s is None and ins.operand_shapes and i < len(ins.operand_shapes):
                        s = ins.operand_shapes[i]
                    if s is None:
                        break
                    ops.append(s)
                if len(ops) != len(ins.operands):
                    # an operand whose own shape is still to be inferred (written later)
                    left.append(ins)
                    if first_err is None:
                        first_err = (ins, f"cannot infer shape for opcode: {ins.opcode}: the shape of "
                                          f"operand %{ins.operands[len(ops)]} is not known")
                    continue
                try:
                    got = _infer(ins, ops, module)
                except ShapeError as e:
                    return ins, f"failed to infer shape for opcode: {ins.opcode}, error: {e.message}"
                if got is None:
                    return ins, f"cannot infer shape for opcode: {ins.opcode}; write its result shape"
                ins.shape = ir.with_default_layouts(got)
                shapes[ins.name] = ins.shape
            if len(left) == len(pending):
                return first_err
            pending = left
        visiting.discard(comp.name)
        done.add(comp.name)
        return None

    for comp in module.computations:
        err = visit(comp)
        if err is not None:
            return err
    return None
