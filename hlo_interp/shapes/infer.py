"""Shape rules: for every opcode, the result shape XLA infers from the operands and attributes.

One rule per opcode (families share helpers), after XLA's ShapeInference
(xla/service/shape_inference.cc) and the checks HloVerifier (xla/service/hlo_verifier.cc) makes with
it.  Used by the verifier (declared vs inferred), by the parser (a result shape the text omits) and
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


def _dyn(s: ir.ArrayShape) -> tuple[bool, ...]:
    return s.dynamic if len(s.dynamic) == len(s.dims) else (False,) * len(s.dims)


def strip_layout(shape: Shape) -> Shape:
    if isinstance(shape, ir.TupleShape):
        return ir.TupleShape(tuple(strip_layout(s) for s in shape.elements))
    if isinstance(shape, ir.BufferShape):
        return ir.BufferShape(strip_layout(shape.element))
    return array(shape.element_type, shape.dims, _dyn(shape)) if shape.layout is not None or \
        len(shape.dynamic) != len(shape.dims) else shape


def with_type(s: ir.ArrayShape, et: PrimitiveType) -> ir.ArrayShape:
    """ShapeUtil::ChangeElementType: keeps dimensions, dynamism and layout."""
    return ir.ArrayShape(et, s.dims, _dyn(s), s.layout)


def _keep(shape: Shape) -> Shape:
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


def _compatible(a: Shape, b: Shape) -> bool:
    return shapes_compatible(a, b)


def _compatible_fp(a: Shape, b: Shape) -> bool:
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


def _tn(t: PrimitiveType) -> str:
    return t.name


# --------------------------------------------------------------------------------------------------
# Rule context

class _Ctx:
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
        return _computation(self.module, name)

    def dims_attr(self, name: str = "dimensions", default=()) -> tuple[int, ...]:
        v = self.attrs.get(name, default)
        return tuple(v) if v is not None else ()


def _computation(module: Optional[ir.Module], name) -> ir.Computation:
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


def _sig(params, result) -> str:
    return "(" + ", ".join(human(p) for p in params) + ") -> " + human(result)


# --------------------------------------------------------------------------------------------------
# Elementwise

_FLOAT_ONLY = opcodes_where(lambda o: o.types == "float")
_FLOAT_OR_COMPLEX = opcodes_where(lambda o: o.types == "float|complex")


def _unary(c: _Ctx) -> Shape:
    c.arity(1)
    op = c.opcode
    if op in ("copy", "domain"):
        return _keep(c.ops[0])
    s = c.array_op(0)
    t = s.element_type
    if op in _FLOAT_ONLY:
        if not t.is_float:
            raise ShapeError(f"expected a floating-point operand for {op}, got {_tn(t)}")
        return _keep(s)
    if op in _FLOAT_OR_COMPLEX:
        if not (t.is_float or t.is_complex):
            raise ShapeError(f"expected a floating-point or complex operand for {op}, got {_tn(t)}")
        return _keep(s)
    if op in ("real", "imag"):
        if t.is_complex:
            return with_type(s, F32 if t.name == "c64" else F64)
        if t.is_float:
            return _keep(s)
        raise ShapeError(f"expected a floating-point or complex operand for {op}, got {_tn(t)}")
    if op == "abs":
        if t.is_complex:
            return with_type(s, F32 if t.name == "c64" else F64)
        if t.kind == "sint" or t.is_float:
            return _keep(s)
        raise ShapeError(f"expected a signed, floating-point or complex operand for abs, got {_tn(t)}")
    if op in ("count-leading-zeros", "popcnt"):
        if not t.is_integral:
            raise ShapeError(f"expected an integral operand for {op}, got {_tn(t)}")
        return _keep(s)
    if op == "negate":
        if not (t.is_integral or t.is_float or t.is_complex):
            raise ShapeError(f"expected an integral, floating-point or complex operand for negate, got {_tn(t)}")
        return _keep(s)
    if op == "sign":
        if not (t.kind == "sint" or t.is_float or t.is_complex):
            raise ShapeError(f"expected a signed or complex operand for sign, got {_tn(t)}")
        return _keep(s)
    if op == "not":
        if not (t == PRED or t.is_integral):
            raise ShapeError(f"expected a pred or integral operand for not, got {_tn(t)}")
        return _keep(s)
    if op == "is-finite":
        if not t.is_float:
            raise ShapeError(f"expected a floating-point operand for is-finite, got {_tn(t)}")
        return with_type(s, PRED)
    raise ShapeError(f"no unary shape rule for {op}")


def _elementwise_shape(c: _Ctx, lhs: ir.ArrayShape, rhs: ir.ArrayShape) -> ir.ArrayShape:
    """Two operands of one shape (HLO has no implicit broadcast)."""
    if not same_type_ignoring_fp(lhs.element_type, rhs.element_type):
        raise ShapeError(f"binary op {c.opcode} with different element types: {human(lhs)} and {human(rhs)}")
    if not same_dims(lhs, rhs):
        raise ShapeError(f"binary op {c.opcode} with incompatible shapes: {human(lhs)} and {human(rhs)} "
                         f"(implicit broadcast is not allowed in HLO)")
    dyn = tuple(a or b for a, b in zip(_dyn(lhs), _dyn(rhs)))
    return ir.ArrayShape(higher_precision(lhs.element_type, rhs.element_type), lhs.dims, dyn, lhs.layout)


_NO_PRED_BINARY = opcodes_where(lambda o: o.types == "no-pred")


def _binary(c: _Ctx) -> Shape:
    c.arity(2)
    lhs, rhs = c.array_op(0, "lhs"), c.array_op(1, "rhs")
    op = c.opcode
    lt, rt = lhs.element_type, rhs.element_type
    if op in _NO_PRED_BINARY and (lt == PRED or rt == PRED):
        raise ShapeError(f"expected an arithmetic element type for {op}, got pred")
    if op == "atan2" and not (lt.is_float or lt.is_complex):
        raise ShapeError(f"expected floating-point or complex operands for atan2, got {_tn(lt)}")
    if op in ("and", "or", "xor") and not (lt == PRED or lt.is_integral):
        raise ShapeError(f"expected pred or integral operands for {op}, got {_tn(lt)}")
    # mulhi: XLA's shape inference puts no type restriction on it (jaxlib 0.10.2 infers pred/f32/c64)
    if op == "complex":
        if not lt.is_float:
            raise ShapeError(f"expected floating-point operands for complex, got {_tn(lt)}")
        shape = _elementwise_shape(c, lhs, rhs)
        if lt == F32 and rt == F32:
            return with_type(shape, C64)
        if lt == F64 and rt == F64:
            return with_type(shape, C128)
        raise ShapeError(f"complex needs f32 or f64 operands, got {_tn(lt)} and {_tn(rt)}")
    shape = _elementwise_shape(c, lhs, rhs)
    if op == "compare":
        return with_type(shape, PRED)
    return shape


def _select(c: _Ctx) -> Shape:
    c.arity(3)
    pred, t, f = c.array_op(0, "predicate"), c.array_op(1, "on-true"), c.array_op(2, "on-false")
    if not (same_dims(t, f) and same_type_ignoring_fp(t.element_type, f.element_type)):
        raise ShapeError(f"operands to select must be the same shape; got {human(t)} and {human(f)}")
    if pred.element_type != PRED:
        raise ShapeError(f"select's predicate must have pred element type; got {human(pred)}")
    if pred.dims and not same_dims(pred, t):
        raise ShapeError(f"operands to select and predicate must be the same shape; got {human(t)} and "
                         f"{human(pred)}")
    base = pred if pred.dims else t
    return ir.ArrayShape(higher_precision(t.element_type, f.element_type), t.dims, _dyn(t), base.layout)


def _clamp(c: _Ctx) -> Shape:
    c.arity(3)
    lo, x, hi = c.array_op(0, "min"), c.array_op(1, "operand"), c.array_op(2, "max")
    for b in (lo, hi):
        if not same_type_ignoring_fp(b.element_type, x.element_type) or (b.dims and not same_dims(b, x)):
            raise ShapeError(f"clamp with incompatible shapes: {human(lo)}, {human(x)}, {human(hi)}")
    return _keep(x)


def _convert(c: _Ctx) -> Optional[Shape]:
    c.arity(1)
    s = c.ops[0]
    d = c.declared
    if not is_array(s):
        raise ShapeError(f"convert does not allow non-arrays, so cannot convert from {human(s)}")
    if d is None:
        return None
    if not is_array(d):
        raise ShapeError(f"convert does not allow non-arrays, so cannot convert to {human(d)}")
    return with_type(s, d.element_type)


def _bitcast_convert(c: _Ctx) -> Optional[Shape]:
    c.arity(1)
    s = c.ops[0]
    d = c.declared
    if d is None:
        return None
    if not is_array(s) or not is_array(d):
        raise ShapeError(f"cannot bitcast-convert from or to a non-array: {human(s)} => {human(d)}")
    old, new = s.element_type, d.element_type
    if old.is_complex != new.is_complex:
        raise ShapeError(f"bitcast-convert between complex and real types: {human(s)} => {_tn(new)}")
    ib, ob = old.bits, new.bits
    if max(ib, ob) % min(ib, ob):
        raise ShapeError(f"cannot bitcast types with indivisible bit widths: {_tn(old)} => {_tn(new)}")
    ratio = max(ib, ob) // min(ib, ob)
    if ib > ob:
        return array(new, s.dims + (ratio,), _dyn(s) + (False,))
    if ib < ob:
        if not s.dims or s.dims[-1] != ratio:
            last = s.dims[-1] if s.dims else "none"
            raise ShapeError(f"last dimension of the operand ({last}) must equal the ratio of bit widths "
                             f"({ratio}) for bitcast-convert from {human(s)} to {_tn(new)}")
        return array(new, s.dims[:-1], _dyn(s)[:-1])
    return with_type(s, new)


def _reduce_precision(c: _Ctx) -> Shape:
    c.arity(1)
    s = c.array_op(0)
    if not s.element_type.is_float:
        raise ShapeError(f"expected a floating-point operand for reduce-precision, got {_tn(s.element_type)}")
    e, m = c.attr("exponent_bits", 1), c.attr("mantissa_bits", 0)
    if e < 1:
        raise ShapeError(f"expected exponent_bits >= 1, got {e}")
    if m < 0:
        raise ShapeError(f"expected non-negative mantissa_bits, got {m}")
    return _keep(s)


def _stochastic_convert(c: _Ctx) -> Optional[Shape]:
    c.arity(2)
    s, r = c.array_op(0), c.array_op(1, "random bits")
    if r.element_type.kind != "uint":
        raise ShapeError(f"random numbers for stochastic-convert must be unsigned integers, got {human(r)}")
    if not s.element_type.is_float:
        raise ShapeError(f"stochastic-convert supports only floating-point operands, got {human(s)}")
    if s.element_type.bits != r.element_type.bits:
        raise ShapeError(f"the random bits must have as many bits as the operand: {human(r)} vs {human(s)}")
    if not same_dims(s, r):
        raise ShapeError(f"stochastic-convert operand shape does not match the random bits: "
                         f"{human(s)} vs {human(r)}")
    d = c.declared
    if d is None:
        return None
    if not is_array(d):
        raise ShapeError(f"stochastic-convert produces an array, not {human(d)}")
    return with_type(s, d.element_type)


# --------------------------------------------------------------------------------------------------
# Data movement

def _declared_only(c: _Ctx) -> Optional[Shape]:
    return None


def _parameter(c: _Ctx) -> Optional[Shape]:
    c.arity(0)
    return None


def _constant(c: _Ctx) -> Optional[Shape]:
    c.arity(0)
    lit = c.ins.literal
    if lit is not None and lit.shape is not None:
        return _keep(lit.shape)
    return None


def _iota(c: _Ctx) -> Optional[Shape]:
    c.arity(0)
    d = c.declared_array()
    if d is None:
        return None
    if not d.element_type.is_array_type:
        raise ShapeError(f"iota produces an array, not {human(d)}")
    dim = c.attr("iota_dimension", 0)
    if d.rank == 0:
        raise ShapeError("iota needs a shape of rank at least 1")
    if not 0 <= dim < d.rank:
        raise ShapeError(f"iota dimension {dim} out of range for rank {d.rank}")
    return _keep(d)


def _broadcast(c: _Ctx) -> Optional[Shape]:
    c.arity(1)
    s = c.array_op(0)
    d = c.declared_array()
    dims = c.dims_attr()
    if d is None:
        # What XLA's parser infers without a written shape: InferBroadcastShape(operand,
        # broadcast_sizes=dimensions), i.e. `dimensions` read as sizes prepended to the operand's
        # dimensions (right for the common scalar `dimensions={}` case; otherwise the verifier
        # then reports the mismatch, as XLA's does).
        return array(s.element_type, dims + s.dims, (False,) * len(dims) + _dyn(s))
    if len(dims) != s.rank:
        raise ShapeError(f"broadcast dimensions {{{','.join(map(str, dims))}}} must have one entry per "
                         f"operand dimension (operand rank {s.rank})")
    for i, od in enumerate(dims):
        if not 0 <= od < d.rank:
            raise ShapeError(f"broadcast dimension {od} out of range for rank {d.rank}")
        if s.dims[i] != d.dims[od]:
            raise ShapeError(f"broadcast operand dimension {i} has size {s.dims[i]}, but result dimension "
                             f"{od} has size {d.dims[od]}")
    return array(s.element_type, d.dims, _dyn(d))


def _reshape(c: _Ctx) -> Optional[Shape]:
    c.arity(1)
    s = c.array_op(0)
    d = c.declared_array()
    if d is None:
        return None
    if s.num_elements() != d.num_elements():
        raise ShapeError(f"reshape has mismatched element counts: from={s.num_elements()} ({human(s)}) "
                         f"to={d.num_elements()} ({human(d)})")
    return array(s.element_type, d.dims, _dyn(d))


def _dynamic_reshape(c: _Ctx) -> Optional[Shape]:
    c.at_least(1)
    s = c.array_op(0)
    d = c.declared_array()
    if d is None:
        return None
    if len(c.ops) - 1 != d.rank:
        raise ShapeError(f"dynamic-reshape needs one size operand per result dimension: {d.rank}, "
                         f"got {len(c.ops) - 1}")
    for i, x in enumerate(c.ops[1:], 1):
        if not (is_scalar(x) and x.element_type == S32):
            raise ShapeError(f"dynamic-reshape's dimension sizes must be s32 scalars, got {human(x)}")
    if s.num_elements() != d.num_elements():
        raise ShapeError(f"dynamic-reshape has mismatched element counts: from={s.num_elements()} "
                         f"({human(s)}) to={d.num_elements()} ({human(d)})")
    return array(s.element_type, d.dims, _dyn(d))


def _transpose(c: _Ctx) -> Shape:
    c.arity(1)
    s = c.array_op(0)
    perm = c.dims_attr()
    if sorted(perm) != list(range(s.rank)):
        raise ShapeError(f"transpose dimensions [{','.join(map(str, perm))}] are not a permutation of the "
                         f"operand dimensions (operand shape is {human(s)})")
    dyn = _dyn(s)
    layout = None
    if s.layout is not None and len(s.layout.minor_to_major) == s.rank and not s.layout.has_extras:
        inv = [0] * s.rank
        for j, p in enumerate(perm):
            inv[p] = j
        layout = ir.Layout(tuple(inv[d] for d in s.layout.minor_to_major))
    return ir.ArrayShape(s.element_type, tuple(s.dims[p] for p in perm),
                         tuple(dyn[p] for p in perm), layout)


def _reverse(c: _Ctx) -> Shape:
    c.arity(1)
    s = c.array_op(0)
    dims = c.dims_attr()
    if len(set(dims)) != len(dims):
        raise ShapeError("a dimension number is duplicated in reverse")
    for d in dims:
        if not 0 <= d < s.rank:
            raise ShapeError(f"reverse dimension {d} out of range for rank {s.rank}")
    return _keep(s)


def _slice(c: _Ctx) -> Shape:
    c.arity(1)
    s = c.array_op(0)
    sl = c.attr("slice", ())
    if len(sl) != s.rank:
        raise ShapeError(f"slice index count does not match argument rank: {len(sl)} vs {s.rank}")
    sizes, dyn = [], []
    sdyn = _dyn(s)
    for i, sd in enumerate(sl):
        if sd.start < 0:
            raise ShapeError(f"negative start index to slice: {sd.start}")
        if sd.limit > s.dims[i]:
            raise ShapeError(f"slice limit index ({sd.limit}) must be less than or equal to dimension "
                             f"size ({s.dims[i]}) in dimension {i}")
        if sd.start > sd.limit:
            raise ShapeError(f"slice limit index ({sd.limit}) must be greater or equal to start index "
                             f"({sd.start}) in dimension {i}")
        if sd.stride <= 0:
            raise ShapeError(f"slice stride ({sd.stride}) must be positive")
        n = (sd.limit - sd.start + sd.stride - 1) // sd.stride
        sizes.append(n)
        dyn.append(sdyn[i] and n != 1)
    return array(s.element_type, sizes, dyn)


def _check_start_indices(c: _Ctx, idx: list, rank: int, what: str) -> None:
    if len(idx) == 1 and is_array(idx[0]) and idx[0].rank == 1:
        x = idx[0]
        if not x.element_type.is_integral:
            raise ShapeError(f"{what} start indices must be of integral type, got {human(x)}")
        if x.dims[0] != rank:
            raise ShapeError(f"{what} start index vector {human(x)} must have rank {rank} entries")
        return
    if len(idx) != rank:
        raise ShapeError(f"{what} needs {rank} start indices (the operand's rank), got {len(idx)}")
    for x in idx:
        if not is_scalar(x):
            raise ShapeError(f"{what} start indices must be scalars, not {human(x)}")
        if not x.element_type.is_integral:
            raise ShapeError(f"{what} start indices must be of integral type, got {human(x)}")
        if x.element_type != idx[0].element_type:
            raise ShapeError(f"{what} start indices must all have the same type, got {human(idx[0])} and "
                             f"{human(x)}")


def _dynamic_slice(c: _Ctx) -> Shape:
    c.at_least(1)
    s = c.array_op(0)
    _check_start_indices(c, c.ops[1:], s.rank, "dynamic-slice")
    sizes = c.dims_attr("dynamic_slice_sizes")
    if len(sizes) != s.rank:
        raise ShapeError(f"dynamic-slice sizes count does not match argument rank: {len(sizes)} vs {s.rank}")
    for i, n in enumerate(sizes):
        if n < 0:
            raise ShapeError(f"negative size index to dynamic-slice: {n}")
        if n > s.dims[i]:
            raise ShapeError(f"slice dim size {n} greater than dynamic-slice dimension: {s.dims[i]}")
    return array(s.element_type, sizes)


def _dynamic_update_slice(c: _Ctx) -> Shape:
    c.at_least(2)
    s, u = c.array_op(0), c.array_op(1, "update")
    _check_start_indices(c, c.ops[2:], s.rank, "dynamic-update-slice")
    if u.rank != s.rank:
        raise ShapeError(f"dynamic-update-slice update rank does not match argument rank: {u.rank} vs {s.rank}")
    if not same_type_ignoring_fp(s.element_type, u.element_type):
        raise ShapeError(f"dynamic-update-slice update element type does not match the operand: "
                         f"{_tn(u.element_type)} vs {_tn(s.element_type)}")
    for i in range(s.rank):
        if u.dims[i] > s.dims[i]:
            raise ShapeError(f"update dim size {u.dims[i]} greater than dynamic-update-slice dimension: "
                             f"{s.dims[i]}")
    return _keep(s)


def _concatenate(c: _Ctx) -> Shape:
    c.at_least(1)
    dims = c.dims_attr()
    if len(dims) != 1:
        raise ShapeError("concatenate needs exactly one dimension")
    d = dims[0]
    first = c.array_op(0)
    if not 0 <= d < first.rank:
        raise ShapeError(f"concatenate dimension {d} out of range for rank {first.rank}")
    et = first.element_type
    out = list(first.dims)
    dyn = list(_dyn(first))
    for i in range(1, len(c.ops)):
        s = c.array_op(i)
        if s.rank != first.rank:
            raise ShapeError(f"cannot concatenate arrays with different ranks: {first.rank} ({human(first)}) "
                             f"vs {s.rank} ({human(s)})")
        if not same_type_ignoring_fp(et, s.element_type):
            raise ShapeError(f"cannot concatenate arrays with different element types: {_tn(et)} vs "
                             f"{_tn(s.element_type)}")
        for k in range(first.rank):
            if k != d and s.dims[k] != first.dims[k]:
                raise ShapeError(f"cannot concatenate arrays that differ in dimensions other than the one "
                                 f"being concatenated; dimension {k} in both shapes must be equal: "
                                 f"{human(first)} vs {human(s)}")
        out[d] += s.dims[d]
        dyn = [a or b for a, b in zip(dyn, _dyn(s))]
        et = higher_precision(et, s.element_type)
    return array(et, out, dyn)


def _pad(c: _Ctx) -> Shape:
    c.arity(2)
    s = c.array_op(0)
    v = c.ops[1]
    if not is_scalar(v):
        raise ShapeError(f"pad does not support non-scalar padding values, got {human(v)}")
    cfg = c.attr("padding", ())
    if len(cfg) != s.rank:
        raise ShapeError(f"the rank of the operand and the padding configuration do not match: "
                         f"{human(s)} vs {len(cfg)} dimensions")
    if not same_type_ignoring_fp(s.element_type, v.element_type):
        raise ShapeError(f"the element types of the operands to pad do not match: {_tn(s.element_type)} "
                         f"vs {_tn(v.element_type)}")
    out = []
    for i, p in enumerate(cfg):
        if p.interior < 0:
            raise ShapeError(f"interior padding cannot be negative: {p.interior} in dimension {i}")
        n = s.dims[i] + p.low + p.high + max(s.dims[i] - 1, 0) * p.interior
        if n < 0:
            raise ShapeError(f"padding results in negative size {n} for dimension {i}")
        out.append(n)
    return array(higher_precision(s.element_type, v.element_type), out, _dyn(s))


def _tiled(s: ir.ArrayShape) -> bool:
    lay = s.layout
    return lay is not None and bool(lay.tiles or lay.tail_padding_alignment or lay.element_size_bits
                                    or lay.physical_shape is not None)


def _bitcast(c: _Ctx) -> Optional[Shape]:
    c.arity(1)
    s = c.ops[0]
    d = c.declared
    if d is None:
        return None
    if not is_array(s) or not is_array(d) or _tiled(s) or _tiled(d):
        # Tiled layouts pad the buffer: equal physical sizes need not mean equal logical ones
        # (layout.py computes physical sizes; the layout-sensitive check belongs there).
        return _keep(d)
    sb = s.num_elements() * s.element_type.bits
    db = d.num_elements() * d.element_type.bits
    if sb != db:
        raise ShapeError(f"bitcast cannot change the size in bytes: {human(s)} ({sb // 8 if sb % 8 == 0 else sb / 8} "
                         f"bytes) to {human(d)} ({db // 8 if db % 8 == 0 else db / 8} bytes)")
    return _keep(d)


def _tuple(c: _Ctx) -> Shape:
    return tuple_of([_keep(s) for s in c.ops])


def _get_tuple_element(c: _Ctx) -> Shape:
    c.arity(1)
    s = c.ops[0]
    idx = c.attr("index", 0)
    if not isinstance(s, ir.TupleShape):
        raise ShapeError(f"cannot infer shape: attempting to index into non-tuple: {human(s)}")
    if not 0 <= idx < len(s.elements):
        raise ShapeError(f"tuple index {idx} out of range for {human(s)} ({len(s.elements)} elements)")
    return _keep(s.elements[idx])


def _get_dimension_size(c: _Ctx) -> Shape:
    c.arity(1)
    s = c.array_op(0)
    dims = c.dims_attr()
    if len(dims) != 1 or not 0 <= dims[0] < s.rank:
        raise ShapeError(f"get-dimension-size dimension {dims[0] if dims else '?'} out of range for rank {s.rank}")
    if s.dims[dims[0]] > 2**31 - 1:
        raise ShapeError(f"get-dimension-size: dimension {dims[0]} of {human(s)} exceeds the INT_MAX limit")
    return array(S32, ())


def _set_dimension_size(c: _Ctx) -> Shape:
    c.arity(2)
    s = c.array_op(0)
    v = c.ops[1]
    dims = c.dims_attr()
    if len(dims) != 1 or not 0 <= dims[0] < s.rank:
        raise ShapeError(f"set-dimension-size dimension {dims[0] if dims else '?'} out of range for rank {s.rank}")
    if not (is_scalar(v) and v.element_type == S32):
        raise ShapeError(f"set-dimension-size's value has to be an s32 scalar, got {human(v)}")
    dyn = list(_dyn(s))
    dyn[dims[0]] = True
    return array(s.element_type, s.dims, dyn)


# --------------------------------------------------------------------------------------------------
# Reductions and windows

def _verify_reducer(c: _Ctx, comp: ir.Computation, init_shapes: Sequence[Shape],
                    input_types: Sequence[PrimitiveType]) -> Shape:
    """XLA's VerifyReducerShape: (T0..Tn-1, S0..Sn-1) -> (T0..Tn-1) with scalars; returns the result."""
    params, result = program_shape(comp)
    n = len(input_types)
    if len(params) != 2 * n:
        raise ShapeError(f"reduction function {comp.name} must take {2 * n} parameters, but takes "
                         f"{len(params)} parameter(s)")
    if isinstance(result, ir.TupleShape):
        if len(result.elements) != n:
            raise ShapeError(f"reduction function {comp.name} must produce a tuple with {n} elements, but has "
                             f"{len(result.elements)} elements")
        accs = list(result.elements)
    else:
        if n != 1:
            raise ShapeError(f"reduction function {comp.name} must produce a tuple with {n} elements, but "
                             f"produces a scalar")
        accs = [result]
    for a in accs:
        if not is_scalar(a):
            raise ShapeError(f"reduction function {comp.name} must return a scalar or tuple of scalars but "
                             f"returns shape: {human(result)}")
    for i in range(n):
        if not _compatible(accs[i], params[i]):
            raise ShapeError(f"reduction function {comp.name}'s {i}-th parameter shape differs from the "
                             f"result shape: {human(params[i])} vs {human(accs[i])}")
        if not _compatible_fp(accs[i], init_shapes[i]):
            raise ShapeError(f"reduction function {comp.name}'s accumulator shape at index {i} differs from "
                             f"the init_value shape: {human(accs[i])} vs {human(init_shapes[i])}")
        elem = array(input_types[i], ())
        if not _compatible_fp(elem, params[n + i]):
            raise ShapeError(f"reduction function {comp.name}'s {n + i}-th parameter shape differs from the "
                             f"input element type: {human(params[n + i])} vs {human(elem)}")
        if not _compatible_fp(accs[i], params[n + i]):
            raise ShapeError(f"reduction function {comp.name}'s {n + i}-th parameter shape must match the "
                             f"result shape, but got {human(params[n + i])} vs {human(accs[i])}")
    return result


def _split_inputs_inits(c: _Ctx) -> tuple[list, list]:
    if not c.ops or len(c.ops) % 2:
        raise ShapeError(f"{c.opcode} must have an even, nonzero number of operands (inputs then init "
                         f"values), has {len(c.ops)}")
    n = len(c.ops) // 2
    return c.ops[:n], c.ops[n:]


def _reduce(c: _Ctx) -> Shape:
    inputs, inits = _split_inputs_inits(c)
    for i in range(len(inputs)):
        c.array_op(i, f"input {i}")
    first = inputs[0]
    for i, s in enumerate(inputs[1:], 1):
        if not same_dims(first, s):
            raise ShapeError(f"all reduced tensors must have the same dimensions; tensor 0 has shape "
                             f"{human(first)}, tensor {i} has shape {human(s)}")
    dims = c.dims_attr()
    for d in dims:
        if not 0 <= d < first.rank:
            raise ShapeError(f"reducing out-of-bounds dimension {d} in shape {human(first)}")
    if len(set(dims)) != len(dims):
        raise ShapeError(f"duplicate reduction dimension in {{{','.join(map(str, dims))}}}")
    result = _verify_reducer(c, c.computation("to_apply"), inits, [s.element_type for s in inputs])
    keep = [i for i in range(first.rank) if i not in dims]
    out_dims = [first.dims[i] for i in keep]
    dyn = [_dyn(first)[i] for i in keep]
    if isinstance(result, ir.TupleShape):
        return tuple_of([array(e.element_type, out_dims, dyn) for e in result.elements])
    return array(result.element_type, out_dims, dyn)


def _dilated(n: int, dilation: int) -> int:
    return 0 if n == 0 else (n - 1) * dilation + 1


def _strided(bound: int, window: int, stride: int) -> int:
    if bound < window or bound == 0:
        return 0
    return (bound - window) // stride + 1


def window_output_dims(base: Sequence[int], window: ir.Window, what: str) -> list[int]:
    if len(window.dims) != len(base):
        raise ShapeError(f"{what}: the window has {len(window.dims)} dimensions but the base shape has "
                         f"{len(base)}")
    out = []
    for i, (n, w) in enumerate(zip(base, window.dims)):
        if w.size <= 0:
            raise ShapeError(f"{what}: window dimension {i} has a non-positive size {w.size}")
        if w.stride <= 0:
            raise ShapeError(f"{what}: window dimension {i} has a non-positive stride {w.stride}")
        if w.lhs_dilate < 1:
            raise ShapeError(f"{what}: window dimension {i} has a non-positive base dilation {w.lhs_dilate}")
        if w.rhs_dilate < 1:
            raise ShapeError(f"{what}: window dimension {i} has a non-positive window dilation {w.rhs_dilate}")
        padded = w.pad_low + _dilated(n, w.lhs_dilate) + w.pad_high
        out.append(_strided(padded, _dilated(w.size, w.rhs_dilate), w.stride))
    return out


def _reduce_window(c: _Ctx) -> Shape:
    inputs, inits = _split_inputs_inits(c)
    for i in range(len(inputs)):
        c.array_op(i, f"input {i}")
    first = inputs[0]
    for i, s in enumerate(inputs[1:], 1):
        if not same_dims(first, s):
            raise ShapeError(f"all reduced tensors must have the same dimensions; tensor 0 has shape "
                             f"{human(first)}, tensor {i} has shape {human(s)}")
    result = _verify_reducer(c, c.computation("to_apply"), inits, [s.element_type for s in inputs])
    window = c.attr("window") or ir.Window(())
    dims = window_output_dims(first.dims, window, "reduce-window")
    outs = [array(init.element_type, dims, _dyn(s)) for s, init in zip(inputs, inits)]
    if isinstance(result, ir.TupleShape):
        return tuple_of(outs)
    return outs[0]


def _select_and_scatter(c: _Ctx) -> Shape:
    c.arity(3)
    s, src, init = c.array_op(0), c.array_op(1, "source"), c.ops[2]
    sel = c.computation("select")
    params, result = program_shape(sel)
    if len(params) != 2:
        raise ShapeError(f"select function {sel.name} must take 2 parameters, but takes {len(params)}")
    if not _compatible(result, array(PRED, ())):
        raise ShapeError(f"select function {sel.name} must have a rank-0 pred result, got {human(result)}")
    elem = array(s.element_type, ())
    for k in range(2):
        if not _compatible_fp(elem, params[k]):
            raise ShapeError(f"select function {sel.name}'s parameter {k} must match the operand element "
                             f"shape: {human(params[k])} vs {human(elem)}")
    _verify_reducer(c, c.computation("scatter"), [init], [src.element_type])
    window = c.attr("window") or ir.Window(())
    dims = window_output_dims(s.dims, window, "select-and-scatter")
    if list(src.dims) != dims:
        raise ShapeError(f"source shape does not match the shape of the window-reduced operand: "
                         f"source({human(src)}), window-reduced operand({human(array(s.element_type, dims))})")
    return _keep(s)


def _map(c: _Ctx) -> Shape:
    c.at_least(1)
    arg = c.array_op(0)
    for i in range(1, len(c.ops)):
        s = c.array_op(i)
        if not same_dims(s, arg):
            raise ShapeError("map requires all operands to have the same shape; got: "
                             + ", ".join(human(x) for x in c.ops))
    dims = c.attrs.get("dimensions")
    if dims is not None and tuple(dims) != tuple(range(arg.rank)):
        raise ShapeError(f"map requires dimensions {{0..rank-1}}; got {{{','.join(map(str, dims))}}}")
    comp = c.computation("to_apply")
    params, result = program_shape(comp)
    if len(params) != len(c.ops):
        raise ShapeError(f"map applied function arity must match number of arguments; got arity "
                         f"{len(params)}, arguments {len(c.ops)}")
    if not is_scalar(result):
        raise ShapeError(f"mapped computation's result has to be a scalar; got {human(result)}")
    for i, p in enumerate(params):
        if not is_scalar(p):
            raise ShapeError(f"mapped computation's parameter has to be a scalar; got parameter {i} shape "
                             f"{human(p)}")
        if not same_type_ignoring_fp(p.element_type, c.ops[i].element_type):
            raise ShapeError(f"mapped computation's parameter type has to match the argument element type; "
                             f"got parameter {i} shape {human(p)}, argument shape {human(c.ops[i])}")
    return array(result.element_type, arg.dims, _dyn(arg))


def _scan(c: _Ctx) -> Shape:
    k = c.attr("num_carries", 0)
    n_ops = len(c.ops)
    if k < 0 or k > n_ops:
        raise ShapeError(f"scan has {n_ops} operands but num_carries={k}")
    m = n_ops - k
    dims = c.dims_attr()
    if len(dims) != 1:
        raise ShapeError("scan needs exactly one scan dimension")
    d = dims[0]
    inputs, inits = c.ops[:m], c.ops[m:]
    length = None
    for i, s in enumerate(inputs):
        s = c.array_op(i, f"input {i}")
        if not 0 <= d < s.rank:
            raise ShapeError(f"scan dimension {d} out of range for input {i} of rank {s.rank}")
        if length is None:
            length = s.dims[d]
        elif s.dims[d] != length:
            raise ShapeError(f"scan inputs must have the same size along the scan dimension: {human(inputs[0])} "
                             f"vs {human(s)}")
    comp = c.computation("to_apply")
    params, result = program_shape(comp)
    if len(params) != n_ops:
        raise ShapeError(f"scan computation {comp.name} must take {n_ops} parameters, but takes {len(params)}")
    for i, s in enumerate(inputs):
        want = array(s.element_type, s.dims[:d] + s.dims[d + 1:])
        if not _compatible(params[i], want):
            raise ShapeError(f"scan computation {comp.name}'s parameter {i} must be {human(want)} (input "
                             f"{human(s)} without the scan dimension), got {human(params[i])}")
    for j, s in enumerate(inits):
        if not _compatible(params[m + j], s):
            raise ShapeError(f"scan computation {comp.name}'s carry parameter {m + j} must match the init "
                             f"{human(s)}, got {human(params[m + j])}")
    outs = list(result.elements) if isinstance(result, ir.TupleShape) else [result]
    if len(outs) < k:
        raise ShapeError(f"scan computation {comp.name} must return at least the {k} carries")
    n_out = len(outs) - k
    res = []
    for o in outs[:n_out]:
        if not is_array(o):
            raise ShapeError(f"scan outputs must be arrays, got {human(o)}")
        dd = min(d, o.rank)
        res.append(array(o.element_type, o.dims[:dd] + (length or 0,) + o.dims[dd:]))
    for j, o in enumerate(outs[n_out:]):
        if not _compatible(o, inits[j]):
            raise ShapeError(f"scan computation {comp.name}'s carry result {j} {human(o)} must match the init "
                             f"{human(inits[j])}")
        res.append(_keep(o))
    return tuple_of(res)


# --------------------------------------------------------------------------------------------------
# Dot and convolution

def _maybe_upcast(from_type: PrimitiveType, preferred: Optional[PrimitiveType]) -> PrimitiveType:
    """The result type of dot/convolution: the instruction's own element type when it has one.
    (Older XLA refused an integral result narrower than the operands; XLA:CPU of jaxlib 0.10.2
    compiles s32 x s32 -> s8, so no such rule here.)"""
    if preferred is None or preferred == from_type:
        return from_type
    return preferred


def _preferred(c: _Ctx) -> Optional[PrimitiveType]:
    d = c.declared
    if isinstance(d, ir.ArrayShape) and d.element_type.is_array_type:
        return d.element_type
    return None


def _dot_dims(c: _Ctx, lhs: ir.ArrayShape, rhs: ir.ArrayShape, *, rhs_skip: Sequence[int] = ()):
    lc, rc = c.dims_attr("lhs_contracting_dims"), c.dims_attr("rhs_contracting_dims")
    lb, rb = c.dims_attr("lhs_batch_dims"), c.dims_attr("rhs_batch_dims")
    for name, ds, s in (("lhs", lc + lb, lhs), ("rhs", rc + rb, rhs)):
        for x in ds:
            if not 0 <= x < s.rank:
                raise ShapeError(f"{c.opcode}: {name} dimension number {x} out of range for rank {s.rank}")
        if len(set(ds)) != len(ds):
            raise ShapeError(f"{c.opcode}: a {name} dimension number is not unique in "
                             f"{{{','.join(map(str, ds))}}}")
    if len(lc) != len(rc):
        raise ShapeError(f"{c.opcode}: must specify the same number of contracting dimensions for lhs and rhs "
                         f"({human(lhs)} <dot> {human(rhs)})")
    for a, b in zip(lc, rc):
        if lhs.dims[a] != rhs.dims[b]:
            raise ShapeError(f"{c.opcode}: contracting dimension sizes do not match: lhs dimension {a} "
                             f"({lhs.dims[a]}) vs rhs dimension {b} ({rhs.dims[b]}) in {human(lhs)} <dot> "
                             f"{human(rhs)}")
    if len(lb) != len(rb):
        raise ShapeError(f"{c.opcode}: must specify the same number of batch dimensions for lhs and rhs")
    for a, b in zip(lb, rb):
        if lhs.dims[a] != rhs.dims[b]:
            raise ShapeError(f"{c.opcode}: batch dimension sizes must match for lhs/rhs: lhs dimension {a} "
                             f"({lhs.dims[a]}) vs rhs dimension {b} ({rhs.dims[b]})")
    ld, rd = _dyn(lhs), _dyn(rhs)
    dims = [lhs.dims[a] for a in lb]
    dyn = [ld[a] for a in lb]
    for i in range(lhs.rank):
        if i not in lc and i not in lb:
            dims.append(lhs.dims[i])
            dyn.append(ld[i])
    for i in range(rhs.rank):
        if i not in rc and i not in rb and i not in rhs_skip:
            dims.append(rhs.dims[i])
            dyn.append(rd[i])
    return dims, dyn


def _dot(c: _Ctx) -> Shape:
    if len(c.ops) not in (2, 3):  # older sparse dots carry a metadata operand
        c.arity(2)
    lhs, rhs = c.array_op(0, "lhs"), c.array_op(1, "rhs")
    dims, dyn = _dot_dims(c, lhs, rhs)
    et = _maybe_upcast(higher_precision(lhs.element_type, rhs.element_type), _preferred(c))
    return array(et, dims, dyn)


def _scaled_dot(c: _Ctx) -> Shape:
    c.arity(4)
    lhs, rhs = c.array_op(0, "lhs"), c.array_op(1, "rhs")
    for i, what in ((2, "lhs scale"), (3, "rhs scale")):
        sc = c.array_op(i, what)
        base = lhs if i == 2 else rhs
        if sc.rank not in (0, base.rank):
            raise ShapeError(f"scaled-dot: the {what} {human(sc)} must be a scalar or have the rank of "
                             f"{human(base)}")
    dims, dyn = _dot_dims(c, lhs, rhs)
    et = _maybe_upcast(higher_precision(lhs.element_type, rhs.element_type), _preferred(c))
    return array(et, dims, dyn)


def _ragged_dot(c: _Ctx) -> Shape:
    c.arity(3)
    lhs, rhs, groups = c.array_op(0, "lhs"), c.array_op(1, "rhs"), c.array_op(2, "group sizes")
    # (XLA's inference puts no type rule on the group sizes; jaxlib 0.10.2 infers with f32 ones)
    if groups.rank < 1:
        raise ShapeError(f"ragged-dot group sizes must have rank >= 1, got {human(groups)}")
    lr = c.dims_attr("lhs_ragged_dims")
    rg = c.dims_attr("rhs_group_dims")
    if len(lr) != 1:
        raise ShapeError("ragged-dot needs exactly one lhs ragged dimension")
    r = lr[0]
    if not 0 <= r < lhs.rank:
        raise ShapeError(f"ragged-dot: lhs ragged dimension {r} out of range for rank {lhs.rank}")
    lc, lb = c.dims_attr("lhs_contracting_dims"), c.dims_attr("lhs_batch_dims")
    g = groups.dims[-1]
    if r not in lc and r not in lb:
        # ragged non-contracting dimension: rhs has a group dimension
        if len(rg) != 1:
            raise ShapeError("ragged-dot with a ragged non-contracting lhs dimension needs one rhs group "
                             "dimension")
        if not 0 <= rg[0] < rhs.rank:
            raise ShapeError(f"ragged-dot: rhs group dimension {rg[0]} out of range for rank {rhs.rank}")
        if rhs.dims[rg[0]] != g:
            raise ShapeError(f"ragged-dot: rhs group dimension size {rhs.dims[rg[0]]} must equal the number of "
                             f"groups {g}")
        dims, dyn = _dot_dims(c, lhs, rhs, rhs_skip=rg)
    else:
        if rg:
            raise ShapeError("ragged-dot with a ragged contracting or batch dimension takes no rhs group "
                             "dimensions")
        dims, dyn = _dot_dims(c, lhs, rhs)
        if r in lc:
            nb = len(lb)
            dims = dims[:nb] + [g] + dims[nb:]
            dyn = dyn[:nb] + [False] + dyn[nb:]
    et = _maybe_upcast(higher_precision(lhs.element_type, rhs.element_type), _preferred(c))
    return array(et, dims, dyn)


def _convolution(c: _Ctx) -> Shape:
    c.arity(2)
    lhs, rhs = c.array_op(0, "lhs"), c.array_op(1, "rhs")
    dn: ir.ConvDims = c.attr("dim_labels")
    if dn is None:
        raise ShapeError("convolution needs dim_labels=")
    window = c.attr("window") or ir.Window(())
    fgc = c.attr("feature_group_count", 1)
    bgc = c.attr("batch_group_count", 1)
    return conv_shape(lhs, rhs, dn, window, fgc, bgc, _preferred(c))


def conv_shape(lhs: ir.ArrayShape, rhs: ir.ArrayShape, dn: ir.ConvDims, window: ir.Window, fgc: int,
               bgc: int, preferred: Optional[PrimitiveType]) -> ir.ArrayShape:
    if fgc <= 0:
        raise ShapeError(f"feature_group_count must be a positive number, got {fgc}")
    if bgc <= 0:
        raise ShapeError(f"batch_group_count must be a positive number, got {bgc}")
    if fgc > 1 and bgc > 1:
        raise ShapeError(f"both batch_group_count {bgc} and feature_group_count {fgc} cannot be greater than 1")
    nsp = len(dn.input_spatial)
    if len(window.dims) != nsp:
        raise ShapeError(f"the window has {len(window.dims)} dimensions but the convolution has {nsp} spatial "
                         f"dimensions ({dn.text})")
    nd = nsp + 2
    if lhs.rank != nd:
        raise ShapeError(f"the lhs of a convolution should have rank {nd}; lhs: {human(lhs)}")
    if rhs.rank != nd:
        raise ShapeError(f"the rhs of a convolution should have rank {nd}; rhs: {human(rhs)}")
    in_sp = [lhs.dims[i] for i in dn.input_spatial]
    in_f = lhs.dims[dn.input_feature]
    in_b = lhs.dims[dn.input_batch]
    k_sp = [rhs.dims[i] for i in dn.kernel_spatial]
    k_in = rhs.dims[dn.kernel_input_feature]
    k_out = rhs.dims[dn.kernel_output_feature]
    if k_out % bgc:
        raise ShapeError(f"expected output feature dimension size ({k_out}) to be a multiple of batch group "
                         f"count {bgc}; got <conv>({human(lhs)}, {human(rhs)})")
    if in_f % fgc or in_f // fgc != k_in:
        raise ShapeError(f"expected lhs feature dimension (value {in_f}) to be a multiple of "
                         f"feature_group_count (value {fgc}), and lhs feature dimension / feature_group_count = "
                         f"rhs feature dimension (value {k_in}); got <conv>({human(lhs)}, {human(rhs)})")
    if k_out % fgc:
        raise ShapeError(f"expected output feature dimension (value {k_out}) to be divisible by "
                         f"feature_group_count (value {fgc}); got <conv>({human(lhs)}, {human(rhs)})")
    if in_b % bgc:
        raise ShapeError(f"expected input batch dimension (value {in_b}) to be divisible by batch_group_count "
                         f"(value {bgc}); got <conv>({human(lhs)}, {human(rhs)})")
    w_sizes = [w.size for w in window.dims]
    if k_sp != w_sizes:
        raise ShapeError(f"window dimensions {'x'.join(map(str, w_sizes))} do not match the rhs spatial "
                         f"dimensions {'x'.join(map(str, k_sp))} (rhs {human(rhs)}, {dn.text})")
    out_sp = window_output_dims(in_sp, window, "convolution")
    dims = [0] * nd
    dims[dn.output_batch] = in_b // bgc
    dims[dn.output_feature] = k_out
    for i, o in enumerate(dn.output_spatial):
        dims[o] = out_sp[i]
    dyn = [False] * nd
    ld = _dyn(lhs)
    if ld[dn.input_batch]:
        dyn[dn.output_batch] = True
    for j, i in enumerate(dn.input_spatial):
        if ld[i]:
            dyn[dn.output_spatial[j]] = True
    et = _maybe_upcast(higher_precision(lhs.element_type, rhs.element_type), preferred)
    return array(et, dims, dyn)


# --------------------------------------------------------------------------------------------------
# FFT and linear algebra

def _fft(c: _Ctx) -> Shape:
    c.arity(1)
    s = c.array_op(0)
    t = c.attr("fft_type", "FFT")
    ln = c.dims_attr("fft_length")
    r = len(ln)
    et = s.element_type
    if not 1 <= r <= 3:
        raise ShapeError(f"fft only supports ranks 1-3; got {r}")
    if s.rank < r:
        raise ShapeError(f"fft of rank {r} requires an input of at least the same rank; got {human(s)}")
    if t in ("FFT", "IFFT"):
        if not et.is_complex:
            raise ShapeError(f"{t} requires a complex input type, found {_tn(et)}")
        return _keep(s)
    if t == "RFFT":
        if et not in (F32, F64):
            raise ShapeError(f"RFFT requires an f32 or f64 input type, found {_tn(et)}")
        for i in range(r):
            k = s.rank - r + i
            if s.dims[k] != ln[i]:
                raise ShapeError(f"RFFT requires the innermost dimensions to match fft_length, but dimension "
                                 f"{k} is {s.dims[k]} and should be {ln[i]}")
        dims = list(s.dims)
        if ln[-1] != 0:
            dims[-1] = ln[-1] // 2 + 1
        return array(C64 if et == F32 else C128, dims, _dyn(s))
    if t == "IRFFT":
        if not et.is_complex:
            raise ShapeError(f"IRFFT requires a complex input type, found {_tn(et)}")
        for i in range(r - 1):
            k = s.rank - r + i
            if s.dims[k] != ln[i]:
                raise ShapeError(f"IRFFT requires all but one innermost dimensions to match fft_length, but "
                                 f"dimension {k} is {s.dims[k]} and should be {ln[i]}")
        last = s.dims[-1]
        if (last != 0 or ln[-1] != 0) and last != ln[-1] // 2 + 1:
            raise ShapeError(f"IRFFT requires the innermost dimension to match fft_length/2+1, but dimension "
                             f"{s.rank - 1} is {last} and should be {ln[-1] // 2 + 1}")
        dims = list(s.dims)
        dims[-1] = ln[-1]
        return array(F32 if et == C64 else F64, dims, _dyn(s))
    raise ShapeError(f"unknown fft_type {t}")


def _triangular_solve(c: _Ctx) -> Shape:
    c.arity(2)
    a, b = c.array_op(0, "a"), c.array_op(1, "b")
    if not (a.element_type.is_float or a.element_type.is_complex) or a.element_type != b.element_type:
        raise ShapeError(f"expected identical floating-point or complex element types for triangular-solve; "
                         f"got {_tn(a.element_type)} and {_tn(b.element_type)}")
    if a.rank < 2:
        raise ShapeError(f"the 'a' argument to triangular-solve must have rank >= 2, got {human(a)}")
    if b.rank != a.rank:
        raise ShapeError(f"arguments to triangular-solve must have equal rank; got {human(b)} and {human(a)}")
    if a.dims[-2] != a.dims[-1]:
        raise ShapeError(f"the two minor dimensions of 'a' must have equal size, got {human(a)}")
    left = c.attr("left_side", False)
    if a.dims[-1] != b.dims[-2 if left else -1]:
        raise ShapeError(f"the shared dimension of 'a' and 'b' does not match, got shapes {human(a)} and "
                         f"{human(b)}")
    if a.dims[:-2] != b.dims[:-2]:
        raise ShapeError(f"the leading batch dimensions of the arguments to triangular-solve must be equal; "
                         f"got {human(b)} and {human(a)}")
    ta = c.attr("transpose_a", "NO_TRANSPOSE")
    if ta not in ("NO_TRANSPOSE", "TRANSPOSE", "ADJOINT"):
        raise ShapeError(f"invalid transpose option value for triangular-solve: {ta}")
    return _keep(b)


def _cholesky(c: _Ctx) -> Shape:
    c.arity(1)
    a = c.array_op(0, "a")
    if not (a.element_type.is_float or a.element_type.is_complex):
        raise ShapeError(f"expected a floating-point or complex element type for cholesky; got "
                         f"{_tn(a.element_type)}")
    if a.rank < 2:
        raise ShapeError(f"the 'a' argument to cholesky must have rank >= 2, got {human(a)}")
    if a.dims[-2] != a.dims[-1]:
        raise ShapeError(f"the two minor dimensions of 'a' must have equal size, got {human(a)}")
    return _keep(a)


# --------------------------------------------------------------------------------------------------
# Gather and scatter

def _sorted_unique(xs: Sequence[int]) -> bool:
    return all(a < b for a, b in zip(xs, xs[1:]))


def _gather(c: _Ctx) -> Shape:
    c.arity(2)
    s, idx = c.array_op(0, "input"), c.array_op(1, "start indices")
    if not idx.element_type.is_integral:
        raise ShapeError(f"gather indices parameter must be an integral tensor; got {human(idx)}")
    offset = c.dims_attr("offset_dims")
    collapsed = c.dims_attr("collapsed_slice_dims")
    sim = c.dims_attr("start_index_map")
    obd = c.dims_attr("operand_batching_dims")
    sibd = c.dims_attr("start_indices_batching_dims")
    ivd = c.attr("index_vector_dim", idx.rank)
    sizes = c.dims_attr("slice_sizes")
    if not 0 <= ivd <= idx.rank:
        raise ShapeError(f"gather index_vector_dim must be within [0, rank(start_indices) + 1); rank is "
                         f"{idx.rank} and index_vector_dim is {ivd}")
    ex = list(idx.dims)
    exd = list(_dyn(idx))
    if ivd == idx.rank:
        ex.append(1)
        exd.append(False)
    if not _sorted_unique(offset):
        raise ShapeError(f"offset_dims in gather must be sorted and unique; got {{{','.join(map(str, offset))}}}")
    out_rank = len(offset) + len(ex) - 1
    for d in offset:
        if not 0 <= d < out_rank:
            raise ShapeError(f"offset dimension {d} in gather is out of bounds [0, {out_rank})")
    if len(sim) != ex[ivd]:
        raise ShapeError(f"gather has {len(sim)} elements in start_index_map and the bound of dimension "
                         f"index_vector_dim={ivd} of start_indices is {ex[ivd]}; these must be equal")
    for d in sim:
        if not 0 <= d < s.rank:
            raise ShapeError(f"invalid start_index_map; domain is [0, {s.rank}), got {d}")
    if len(set(sim)) != len(sim):
        raise ShapeError(f"repeated dimensions are not allowed in start_index_map; got "
                         f"{{{','.join(map(str, sim))}}}")
    for name, ds in (("collapsed_slice_dims", collapsed), ("operand_batching_dims", obd)):
        for d in ds:
            if not 0 <= d < s.rank:
                raise ShapeError(f"invalid {name} in gather; valid range is [0, {s.rank}), got {d}")
        if not _sorted_unique(ds):
            raise ShapeError(f"{name} in gather must be sorted and unique; got {{{','.join(map(str, ds))}}}")
    if set(collapsed) & set(obd):
        raise ShapeError("collapsed_slice_dims and operand_batching_dims must not overlap")
    if len(obd) != len(sibd):
        raise ShapeError(f"operand_batching_dims and start_indices_batching_dims must have the same size: "
                         f"{len(obd)} vs {len(sibd)}")
    for d in sibd:
        if not 0 <= d < len(ex) or d == ivd:
            raise ShapeError(f"invalid start_indices_batching_dims entry {d}")
    if len(sizes) != s.rank:
        raise ShapeError(f"gather must have one slice size for every input dimension; got "
                         f"len(slice_sizes)={len(sizes)}, input rank={s.rank}")
    if len(sizes) != len(offset) + len(collapsed) + len(obd):
        raise ShapeError(f"all components of the offset index in a gather must either be an offset dimension "
                         f"or explicitly collapsed/batching; got len(slice_sizes)={len(sizes)}, "
                         f"offset_dims={{{','.join(map(str, offset))}}}, collapsed_slice_dims="
                         f"{{{','.join(map(str, collapsed))}}}")
    for i, n in enumerate(sizes):
        if n < 0 or n > s.dims[i]:
            raise ShapeError(f"slice size at index {i} in gather is out of range, must be within "
                             f"[0, {s.dims[i] + 1}), got {n}")
    for d in collapsed + obd:
        if sizes[d] > 1:
            raise ShapeError(f"gather can only collapse slice dimensions of size 1 or 0, but size is "
                             f"{sizes[d]} for dimension {d}")
    for a, b in zip(obd, sibd):
        if s.dims[a] != ex[b]:
            raise ShapeError(f"gather operand batching dimension {a} (size {s.dims[a]}) must match start "
                             f"indices batching dimension {b} (size {ex[b]})")
    window = [i for i in range(s.rank) if i not in collapsed and i not in obd]
    batch = [i for i in range(len(ex)) if i != ivd]
    dims, dyn = [], []
    wi = bi = 0
    sd = _dyn(s)
    for i in range(out_rank):
        if i in offset:
            k = window[wi]
            wi += 1
            dims.append(sizes[k])
            dyn.append(sizes[k] == s.dims[k] and sd[k])
        else:
            k = batch[bi]
            bi += 1
            dims.append(ex[k])
            dyn.append(exd[k])
    return array(s.element_type, dims, dyn)


def _scatter(c: _Ctx) -> Shape:
    n = len(c.ops) // 2
    if not c.ops or n * 2 + 1 != len(c.ops):
        raise ShapeError(f"scatter needs an odd number of operands (operands, indices, updates); has {len(c.ops)}")
    idx = c.array_op(n, "scatter indices")
    if not idx.element_type.is_integral:
        raise ShapeError(f"scatter indices parameter must be an integral tensor; got {human(idx)}")
    uwd = c.dims_attr("update_window_dims")
    iwd = c.dims_attr("inserted_window_dims")
    sdo = c.dims_attr("scatter_dims_to_operand_dims")
    ibd = c.dims_attr("input_batching_dims")
    sibd = c.dims_attr("scatter_indices_batching_dims")
    ivd = c.attr("index_vector_dim", idx.rank)
    if not 0 <= ivd <= idx.rank:
        raise ShapeError(f"scatter index_vector_dim must be within [0, rank(scatter_indices) + 1); rank is "
                         f"{idx.rank} and index_vector_dim is {ivd}")
    ex = list(idx.dims)
    if ivd == idx.rank:
        ex.append(1)
    operands = [c.array_op(i, f"operand {i}") for i in range(n)]
    updates = [c.array_op(n + 1 + i, f"updates {i}") for i in range(n)]
    for i in range(1, n):
        if not same_dims(operands[0], operands[i]):
            raise ShapeError(f"scatter operands must have the same dimensions: {human(operands[0])} vs "
                             f"{human(operands[i])}")
        if not same_dims(updates[0], updates[i]):
            raise ShapeError(f"scatter updates must have the same dimensions: {human(updates[0])} vs "
                             f"{human(updates[i])}")
    for op, up in zip(operands, updates):
        want_rank = len(ex) - 1 + len(uwd)
        if up.rank != want_rank:
            raise ShapeError(f"updates tensor must be of rank {want_rank}; got {up.rank} ({human(up)})")
        if not _sorted_unique(uwd):
            raise ShapeError(f"update_window_dims in scatter must be sorted and unique; got "
                             f"{{{','.join(map(str, uwd))}}}")
        for d in uwd:
            if not 0 <= d < up.rank:
                raise ShapeError(f"invalid update_window_dims in scatter; valid range is [0, {up.rank}), got {d}")
        for name, ds in (("inserted_window_dims", iwd), ("input_batching_dims", ibd)):
            if not _sorted_unique(ds):
                raise ShapeError(f"{name} in scatter must be sorted and unique; got {{{','.join(map(str, ds))}}}")
            for d in ds:
                if not 0 <= d < op.rank:
                    raise ShapeError(f"invalid {name} in scatter; valid range is [0, {op.rank}), got {d}")
        if set(iwd) & set(ibd):
            raise ShapeError("inserted_window_dims and input_batching_dims must not overlap")
        if len(uwd) + len(iwd) + len(ibd) != op.rank:
            raise ShapeError(f"scatter has a window of size {len(uwd) + len(iwd) + len(ibd)}; it doesn't "
                             f"match the operand of rank {op.rank}")
        if len(sdo) != ex[ivd]:
            raise ShapeError(f"scatter has {len(sdo)} elements in scatter_dims_to_operand_dims and the bound "
                             f"of dimension index_vector_dim={ivd} of scatter_indices is {ex[ivd]}; these "
                             f"must be equal")
        for d in sdo:
            if not 0 <= d < op.rank:
                raise ShapeError(f"invalid scatter_dims_to_operand_dims mapping; domain is [0, {op.rank}), "
                                 f"got {d}")
        if len(set(sdo)) != len(sdo):
            raise ShapeError(f"repeated dimensions not allowed in scatter_dims_to_operand_dims; got "
                             f"{{{','.join(map(str, sdo))}}}")
        if len(ibd) != len(sibd):
            raise ShapeError("input_batching_dims and scatter_indices_batching_dims must have the same size")
        for d in sibd:
            if not 0 <= d < len(ex) or d == ivd:
                raise ShapeError(f"invalid scatter_indices_batching_dims entry {d}")
        max_sizes = [op.dims[i] for i in range(op.rank) if i not in iwd and i not in ibd]
        for i, d in enumerate(uwd):
            if up.dims[d] > max_sizes[i]:
                raise ShapeError(f"bounds of the window dimensions of updates must not exceed the bounds of the "
                                 f"corresponding dimensions of operand; for dimension {d}, updates bound is "
                                 f"{up.dims[d]}, operand bound is {max_sizes[i]}")
        seen = 0
        for i in range(up.rank):
            if i in uwd:
                continue
            if seen == ivd:
                seen += 1
            if up.dims[i] != ex[seen]:
                raise ShapeError(f"bounds of the scatter dimensions of updates must be the same as the bounds "
                                 f"of the corresponding dimensions of scatter indices; for scatter dimension {i}, "
                                 f"updates bound is {up.dims[i]}, scatter_indices bound is {ex[seen]}")
            seen += 1
    _verify_reducer(c, c.computation("to_apply"), [array(o.element_type, ()) for o in operands],
                    [u.element_type for u in updates])
    if n == 1:
        return _keep(operands[0])
    return tuple_of([_keep(o) for o in operands])


# --------------------------------------------------------------------------------------------------
# Sort, top-k

def _sort(c: _Ctx) -> Shape:
    c.at_least(1)
    first = c.array_op(0, "keys")
    for i in range(1, len(c.ops)):
        s = c.array_op(i, f"operand {i}")
        if not same_dims(first, s):
            raise ShapeError(f"sort keys and values dimensions must match; keys shape is {human(first)}, "
                             f"values shape (operand index {i}) is {human(s)}")
    dims = c.dims_attr()
    if len(dims) != 1 or not 0 <= dims[0] < max(first.rank, 1):
        raise ShapeError(f"sort dimension {dims[0] if dims else '?'} out of range for rank {first.rank}")
    if "to_apply" in c.attrs:
        comp = c.computation("to_apply")
        params, result = program_shape(comp)
        if len(params) != 2 * len(c.ops):
            raise ShapeError(f"sort comparator {comp.name} must take {2 * len(c.ops)} parameters, but takes "
                             f"{len(params)}")
        if not _compatible(result, array(PRED, ())):
            raise ShapeError(f"sort comparator {comp.name} must return pred[], but returns {human(result)}")
        for i, s in enumerate(c.ops):
            for k in (2 * i, 2 * i + 1):
                if not _compatible_fp(params[k], array(s.element_type, ())):
                    raise ShapeError(f"sort comparator {comp.name}'s parameter {k} must be "
                                     f"{_tn(s.element_type)}[], got {human(params[k])}")
    if len(c.ops) == 1:
        return _keep(first)
    return tuple_of([_keep(s) for s in c.ops])


def _topk(c: _Ctx) -> Shape:
    c.arity(1)
    s = c.array_op(0)
    k = c.attr("k", 0)
    if s.rank < 1:
        raise ShapeError(f"topk needs an operand of rank >= 1, got {human(s)}")
    if k < 0 or k > s.dims[-1]:
        raise ShapeError(f"topk: k={k} must be between 0 and the last dimension ({s.dims[-1]}) of {human(s)}")
    dims = s.dims[:-1] + (k,)
    dyn = _dyn(s)[:-1] + (False,)
    return tuple_of([array(s.element_type, dims, dyn), array(S32, dims, dyn)])


# --------------------------------------------------------------------------------------------------
# Control flow and calls

def _check_args(c: _Ctx, comp: ir.Computation, params: list, args: list, what: str) -> None:
    if len(params) != len(args):
        raise ShapeError(f"{what} {comp.name} takes {len(params)} parameter(s), but {c.opcode} passes "
                         f"{len(args)} argument(s)")
    for i, (p, a) in enumerate(zip(params, args)):
        if not _compatible(p, a):
            raise ShapeError(f"{what} {comp.name}'s parameter {i} has shape {human(p)}, but the argument has "
                             f"shape {human(a)}")


def _call(c: _Ctx) -> Shape:
    comp = c.computation("to_apply")
    params, result = program_shape(comp)
    _check_args(c, comp, params, c.ops, "called computation")
    return _keep(result)


def _fusion(c: _Ctx) -> Shape:
    comp = c.computation("calls")
    params, result = program_shape(comp)
    _check_args(c, comp, params, c.ops, "fused computation")
    return _keep(result)


def _while(c: _Ctx) -> Shape:
    c.arity(1)
    init = c.ops[0]
    cond, body = c.computation("condition"), c.computation("body")
    cp, cr = program_shape(cond)
    bp, br = program_shape(body)
    if len(cp) != 1:
        raise ShapeError(f"while condition {cond.name} must take 1 parameter; takes {len(cp)}")
    if len(bp) != 1:
        raise ShapeError(f"while body {body.name} must take 1 parameter; takes {len(bp)}")
    if not _compatible(cr, array(PRED, ())):
        raise ShapeError(f"while condition {cond.name} must return pred[]; returns {human(cr)}")
    if not (_compatible(br, cp[0]) and _compatible(br, bp[0]) and _compatible(br, init)):
        raise ShapeError(f"the parameter of condition and body, the result of the body, and init must all have "
                         f"the same shape; got condition: {_sig(cp, cr)}; body: {_sig(bp, br)}; init: {human(init)}")
    return _keep(init)


def _conditional(c: _Ctx) -> Shape:
    c.at_least(1)
    idx = c.ops[0]
    if "branch_computations" in c.attrs:
        names = list(c.attrs["branch_computations"])
    else:
        names = [c.attrs.get("true_computation"), c.attrs.get("false_computation")]
        if None in names:
            raise ShapeError("conditional needs true_computation= and false_computation=, or "
                             "branch_computations=")
    if not (is_scalar(idx) and idx.element_type in (PRED, S32)):
        raise ShapeError(f"the branch index of conditional must be pred[] or s32[]; got {human(idx)}")
    if idx.element_type == PRED and len(names) != 2:
        raise ShapeError(f"a conditional with a pred index has 2 branches, not {len(names)}")
    if not names:
        raise ShapeError("conditional needs at least one branch")
    if len(names) != len(c.ops) - 1:
        raise ShapeError(f"conditional has {len(names)} branch computations but {len(c.ops) - 1} branch operands")
    results = []
    for j, name in enumerate(names):
        comp = _computation(c.module, name)
        params, result = program_shape(comp)
        if len(params) != 1:
            raise ShapeError(f"branch computation {comp.name} must take 1 parameter; takes {len(params)}")
        if not _compatible(params[0], c.ops[j + 1]):
            raise ShapeError(f"branch operand {j} must match the shape of the only parameter of branch "
                             f"computation {comp.name}: got operand {human(c.ops[j + 1])}, parameter "
                             f"{human(params[0])}")
        if results and not _compatible(results[0], result):
            raise ShapeError(f"the results of all branches must have the same shape: branch 0 returns "
                             f"{human(results[0])}, branch {j} returns {human(result)}")
        results.append(result)
    return _keep(results[0])


def _opt_barrier(c: _Ctx) -> Shape:
    c.arity(1)
    return _keep(c.ops[0])


def _after_all(c: _Ctx) -> Shape:
    return TOKEN_SHAPE


def _add_dependency(c: _Ctx) -> Shape:
    c.arity(2)
    if not is_token(c.ops[1]):
        raise ShapeError(f"the second operand of add-dependency must be a token, got {human(c.ops[1])}")
    return _keep(c.ops[0])


# --------------------------------------------------------------------------------------------------
# Asynchronous pairs

def _async_start_shape(c: _Ctx, wrapped: Shape) -> Shape:
    d = c.declared
    rest: tuple = ()
    if d is not None:
        if not isinstance(d, ir.TupleShape) or len(d.elements) < 2:
            raise ShapeError(f"{c.opcode} must produce ((operands), result, context...), but its shape is "
                             f"{human(d)}")
        rest = tuple(_keep(e) for e in d.elements[2:])
    return tuple_of((tuple_of([_keep(s) for s in c.ops]), _keep(wrapped)) + rest)


def _async_start(c: _Ctx) -> Shape:
    comp = c.computation("calls")
    params, result = program_shape(comp)
    _check_args(c, comp, params, c.ops, "async computation")
    return _async_start_shape(c, result)


def _async_operand(c: _Ctx) -> ir.TupleShape:
    c.arity(1)
    s = c.ops[0]
    if not isinstance(s, ir.TupleShape) or len(s.elements) < 2:
        raise ShapeError(f"the operand of {c.opcode} must be the tuple an async start produces, got {human(s)}")
    return s


def _async_update(c: _Ctx) -> Shape:
    return _keep(_async_operand(c))


def _async_done(c: _Ctx) -> Shape:
    s = _async_operand(c)
    if "calls" in c.attrs and c.module is not None:
        comp = c.computation("calls")
        _, result = program_shape(comp)
        if not _compatible(result, s.elements[1]):
            raise ShapeError(f"async-done: the operand's result element {human(s.elements[1])} does not match "
                             f"the result of {comp.name}: {human(result)}")
    return _keep(s.elements[1])


def _sugar_start(base: str) -> Callable[[_Ctx], Shape]:
    """`add-start(a, b)`: async-start wrapping one `add`; the wrapped op's rule gives element 1."""
    def rule(c: _Ctx) -> Shape:
        d = c.declared
        wrapped_decl = d.elements[1] if isinstance(d, ir.TupleShape) and len(d.elements) >= 2 else None
        inner = ir.Instruction(name=c.ins.name, opcode=base, shape=wrapped_decl, operands=c.ins.operands,
                               attrs=c.ins.attrs, literal=c.ins.literal)
        wrapped = RULES[base](_Ctx(inner, c.ops, c.module, base))
        if wrapped is None:
            if wrapped_decl is None:
                raise ShapeError(f"cannot infer the shape of {c.opcode}")
            wrapped = wrapped_decl
        return _async_start_shape(c, wrapped)
    return rule


def _copy_start(c: _Ctx) -> Shape:
    c.arity(1)
    s = _keep(c.ops[0])
    return tuple_of([s, s, U32_SCALAR])


def _copy_done(c: _Ctx) -> Shape:
    c.arity(1)
    s = c.ops[0]
    if not isinstance(s, ir.TupleShape) or len(s.elements) != 3:
        raise ShapeError(f"the operand of copy-done must be the (dest, src, u32[]) tuple of a copy-start, got "
                         f"{human(s)}")
    return _keep(s.elements[0])


# --------------------------------------------------------------------------------------------------
# Randomness, feeds, channels

def _rng(c: _Ctx) -> Optional[Shape]:
    c.arity(2)
    a, b = c.array_op(0), c.array_op(1)
    dist = c.attr("distribution", "rng_uniform")
    for s in (a, b):
        if not is_scalar(s):
            raise ShapeError(f"rng parameters must be scalars, got {human(s)}")
    if a.element_type != b.element_type:
        raise ShapeError(f"rng parameters must have the same type, got {human(a)} and {human(b)}")
    t = a.element_type
    if dist == "rng_normal" and not t.is_float:
        raise ShapeError(f"rng_normal needs floating-point parameters, got {_tn(t)}")
    if dist == "rng_uniform" and not (t == PRED or t.is_integral or t.is_float):
        raise ShapeError(f"rng_uniform needs pred, integral or floating-point parameters, got {_tn(t)}")
    d = c.declared_array()
    if d is None:
        return None
    return array(t, d.dims, _dyn(d))


def _rng_bit_generator(c: _Ctx) -> Optional[Shape]:
    c.arity(1)
    state = c.array_op(0, "state")
    d = c.declared_tuple(2)
    if d is None:
        return None
    out = d.elements[1]
    if not is_array(out) or not out.element_type.is_integral:
        raise ShapeError(f"rng-bit-generator's output must be an integral array, got {human(out)}")
    return tuple_of([_keep(state), _keep(out)])


def _rng_get_and_update_state(c: _Ctx) -> Shape:
    c.arity(0)
    return array(U64, (2,))


def _infeed(c: _Ctx) -> Optional[Shape]:
    c.arity(1)
    if not is_token(c.ops[0]):
        raise ShapeError(f"the operand of infeed must be a token, got {human(c.ops[0])}")
    d = c.declared_tuple(2)
    if d is None:
        return None
    return tuple_of([_keep(d.elements[0]), TOKEN_SHAPE])


def _outfeed(c: _Ctx) -> Shape:
    c.arity(2)
    if not is_token(c.ops[1]):
        raise ShapeError(f"the second operand of outfeed must be a token, got {human(c.ops[1])}")
    osh = c.attr("outfeed_shape")
    if osh is not None and not _compatible(osh, c.ops[0]):
        raise ShapeError(f"outfeed_shape {human(osh)} is not compatible with the operand shape "
                         f"{human(c.ops[0])}")
    return TOKEN_SHAPE


def _send(c: _Ctx) -> Shape:
    c.arity(2)
    if not is_token(c.ops[1]):
        raise ShapeError(f"the second operand of send must be a token, got {human(c.ops[1])}")
    return tuple_of([_keep(c.ops[0]), U32_SCALAR, TOKEN_SHAPE])


def _recv(c: _Ctx) -> Optional[Shape]:
    c.arity(1)
    if not is_token(c.ops[0]):
        raise ShapeError(f"the operand of recv must be a token, got {human(c.ops[0])}")
    d = c.declared_tuple(3)
    if d is None:
        return None
    return tuple_of([_keep(d.elements[0]), U32_SCALAR, TOKEN_SHAPE])


def _channel_context(c: _Ctx) -> ir.TupleShape:
    c.arity(1)
    s = c.ops[0]
    if not isinstance(s, ir.TupleShape) or len(s.elements) != 3:
        raise ShapeError(f"the operand of {c.opcode} must be the (data, u32[], token[]) tuple of a "
                         f"{c.opcode[:-5]}, got {human(s)}")
    return s


def _send_done(c: _Ctx) -> Shape:
    _channel_context(c)
    return TOKEN_SHAPE


def _recv_done(c: _Ctx) -> Shape:
    s = _channel_context(c)
    return tuple_of([_keep(s.elements[0]), TOKEN_SHAPE])


# --------------------------------------------------------------------------------------------------
# Batch norm

def _bn_common(c: _Ctx, names: Sequence[str]) -> tuple[ir.ArrayShape, int]:
    c.arity(len(names))
    x = c.array_op(0, names[0])
    fi = c.attr("feature_index", 0)
    if fi < 0 or fi >= x.rank:
        raise ShapeError(f"{c.opcode}: feature_index {fi} out of range for operand rank {x.rank}")
    if not x.element_type.is_float:
        raise ShapeError(f"the operand to {c.opcode} must have a floating-point element type, got "
                         f"{_tn(x.element_type)}")
    n = x.dims[fi]
    for i, name in enumerate(names[1:], 1):
        s = c.array_op(i, name)
        if name == "grad_output":
            if not same_dims(s, x):
                raise ShapeError(f"{c.opcode}: grad_output {human(s)} must have the operand's dimensions "
                                 f"{human(x)}")
        else:
            if s.rank != 1:
                raise ShapeError(f"{c.opcode}: {name} must have rank 1, but has rank {s.rank}")
            if s.dims[0] != n:
                raise ShapeError(f"{c.opcode}: the size of {name} ({s.dims[0]}) must equal the feature count {n}")
        if not same_type_ignoring_fp(s.element_type, x.element_type):
            raise ShapeError(f"{c.opcode}: the inputs should have the same element type, but {name} is "
                             f"{_tn(s.element_type)} and the operand is {_tn(x.element_type)}")
    return x, n


def _bn_training(c: _Ctx) -> Shape:
    x, n = _bn_common(c, ("operand", "scale", "offset"))
    f = array(x.element_type, (n,))
    return tuple_of([_keep(x), f, f])


def _bn_inference(c: _Ctx) -> Shape:
    x, _ = _bn_common(c, ("operand", "scale", "offset", "mean", "variance"))
    return _keep(x)


def _bn_grad(c: _Ctx) -> Shape:
    x, n = _bn_common(c, ("operand", "scale", "mean", "variance", "grad_output"))
    f = array(x.element_type, (n,))
    return tuple_of([_keep(x), f, f])


# --------------------------------------------------------------------------------------------------
# Collectives

def _group_mode(c: _Ctx, *, has_global_ids: bool = True) -> str:
    chan = c.attrs.get("channel_id") is not None
    glob = bool(c.attrs.get("use_global_device_ids", False)) if has_global_ids else None
    if glob is None:
        return "cross_partition" if chan else "cross_replica"
    if not chan:
        if glob:
            raise ShapeError("use_global_device_ids=true requires a channel_id")
        return "cross_replica"
    return "flattened_id" if glob else "cross_replica_and_partition"


def _subgroup_size(c: _Ctx, mode: str) -> int:
    m = c.module.attrs if c.module is not None else {}
    replicas = m.get("replica_count", 1) or 1
    partitions = m.get("num_partitions", 1) or 1
    rg: Optional[ir.ReplicaGroups] = c.attrs.get("replica_groups")
    first = None
    if rg is not None:
        if rg.iota is not None:
            first = rg.iota.dims[-1] if rg.iota.dims else 1
        elif rg.groups:
            first = len(rg.groups[0])
        elif rg.mesh is not None:
            return 1  # mesh-axes device lists: not modelled here
    if mode in ("cross_replica", "cross_replica_and_partition"):
        n = replicas if first is None else first
        return n * partitions if mode == "cross_replica_and_partition" else n
    if mode == "flattened_id":
        return first if first is not None else 1
    return partitions if first is None else first


def _collective_arrays(c: _Ctx, what: str) -> list:
    c.at_least(1)
    for i in range(len(c.ops)):
        c.array_op(i, what)
    return c.ops


def _all_reduce(c: _Ctx) -> Shape:
    ops = _collective_arrays(c, f"operand of {c.opcode}")
    if len(ops) == 1:
        return _keep(ops[0])
    return tuple_of([_keep(s) for s in ops])


def _all_reduce_done(c: _Ctx) -> Shape:
    c.arity(1)
    return _keep(c.ops[0])


def _shard_count_gather(c: _Ctx, ops: list, out: Optional[Shape], dim: int) -> Optional[int]:
    if out is None:
        return None
    o0 = out if len(ops) == 1 else (out.elements[0] if isinstance(out, ir.TupleShape) and out.elements else None)
    if not isinstance(o0, ir.ArrayShape) or dim >= o0.rank:
        raise ShapeError(f"{c.opcode}: the result {human(out)} does not have dimension {dim}")
    a = ops[0].dims[dim]
    b = o0.dims[dim]
    return -(-b // a) if a else 0


def _all_gather_shapes(c: _Ctx, out: Optional[Shape]) -> Optional[Shape]:
    ops = _collective_arrays(c, f"operand of {c.opcode}")
    dims = c.dims_attr()
    if len(dims) != 1:
        raise ShapeError(f"{c.opcode} needs exactly one dimension (dimensions={{d}})")
    d = dims[0]
    for s in ops:
        if not 0 <= d < s.rank:
            raise ShapeError(f"{c.opcode} dimension {d} out of range for operand {human(s)}")
    if out is not None and len(ops) > 1 and not (isinstance(out, ir.TupleShape) and len(out.elements) == len(ops)):
        raise ShapeError(f"{c.opcode} of {len(ops)} operands produces a tuple of {len(ops)} arrays, not {human(out)}")
    shards = _shard_count_gather(c, ops, out, d)
    if shards is None:
        return None
    sub = _subgroup_size(c, _group_mode(c))
    if sub != 1 and shards != sub:
        raise ShapeError(f"{c.opcode}: the result gathers {shards} shards along dimension {d}, but the replica "
                         f"group size is {sub}")
    outs = []
    for s in ops:
        dd = list(s.dims)
        dd[d] *= shards
        outs.append(array(s.element_type, dd, _dyn(s)))
    return outs[0] if len(outs) == 1 else tuple_of(outs)


def _all_gather(c: _Ctx) -> Optional[Shape]:
    return _all_gather_shapes(c, c.declared)


def _all_gather_start(c: _Ctx) -> Optional[Shape]:
    d = c.declared
    if d is None:
        return None
    if not isinstance(d, ir.TupleShape) or len(d.elements) != 2:
        raise ShapeError(f"all-gather-start produces an (operands, results) tuple, not {human(d)}")
    res = _all_gather_shapes(c, d.elements[1])
    inp = _keep(c.ops[0]) if len(c.ops) == 1 else tuple_of([_keep(s) for s in c.ops])
    return tuple_of([inp, res])


def _all_gather_done(c: _Ctx) -> Shape:
    c.arity(1)
    s = c.ops[0]
    if not isinstance(s, ir.TupleShape) or len(s.elements) != 2:
        raise ShapeError(f"the operand of all-gather-done must be an all-gather-start tuple, got {human(s)}")
    return _keep(s.elements[1])


def _reduce_scatter(c: _Ctx) -> Optional[Shape]:
    ops = _collective_arrays(c, "operand of reduce-scatter")
    dims = c.dims_attr()
    if len(dims) != 1:
        raise ShapeError("reduce-scatter needs exactly one dimension (dimensions={d})")
    d = dims[0]
    for s in ops:
        if not 0 <= d < s.rank:
            raise ShapeError(f"reduce-scatter dimension {d} out of range for operand {human(s)}")
    out = c.declared
    if out is None:
        return None
    o0 = out if len(ops) == 1 else (out.elements[0] if isinstance(out, ir.TupleShape) and out.elements else None)
    if not isinstance(o0, ir.ArrayShape) or d >= o0.rank:
        raise ShapeError(f"reduce-scatter: the result {human(out)} does not have dimension {d}")
    shards = -(-ops[0].dims[d] // o0.dims[d]) if o0.dims[d] else 0
    sub = _subgroup_size(c, _group_mode(c))
    if sub != 1 and shards != sub:
        raise ShapeError(f"reduce-scatter: the result scatters into {shards} shards along dimension {d}, but "
                         f"the replica group size is {sub}")
    if shards <= 0:
        return None
    outs = []
    for s in ops:
        if s.dims[d] % shards:
            raise ShapeError(f"reduce-scatter operand scatter dimension size {s.dims[d]} must be divisible by the "
                             f"shard count {shards}")
        dd = list(s.dims)
        dd[d] //= shards
        outs.append(array(s.element_type, dd, _dyn(s)))
    return outs[0] if len(outs) == 1 else tuple_of(outs)


def _all_to_all(c: _Ctx) -> Shape:
    ops = _collective_arrays(c, "operand of all-to-all")
    dims = c.attrs.get("dimensions")
    if dims and len(ops) == 1:
        s = ops[0]
        d = dims[0]
        if len(dims) != 1:
            raise ShapeError("all-to-all takes one split dimension")
        if not 0 <= d < s.rank:
            raise ShapeError(f"all-to-all split dimension {d} is out of bounds in shape {human(s)}")
        n = _subgroup_size(c, _group_mode(c, has_global_ids=False))
        if n > 0 and s.dims[d] % n:
            raise ShapeError(f"all-to-all split dimension size {s.dims[d]} must be divisible by the split count {n}")
        return _keep(s)
    for i, s in enumerate(ops):
        if not _compatible(s, ops[0]):
            raise ShapeError(f"all-to-all has operands with different shapes: operand 0 is {human(ops[0])}, "
                             f"operand {i} is {human(s)}")
    return tuple_of([_keep(s) for s in ops])


def _collective_permute_result(c: _Ctx) -> Shape:
    ops = c.ops
    if "slice_sizes" in c.attrs or (len(ops) == 4 and isinstance(ops[2], ir.TupleShape)):
        c.arity(4)
        return _keep(ops[1])
    c.at_least(1)
    for i in range(len(ops)):
        c.array_op(i, f"operand of {c.opcode}")
    if len(ops) == 1:
        return _keep(ops[0])
    return tuple_of([_keep(s) for s in ops])


def _collective_permute(c: _Ctx) -> Shape:
    return _collective_permute_result(c)


def _collective_permute_start(c: _Ctx) -> Shape:
    res = _collective_permute_result(c)
    ops = c.ops
    in_place = "slice_sizes" in c.attrs or (len(ops) == 4 and isinstance(ops[2], ir.TupleShape))
    inp = _keep(ops[0]) if in_place or len(ops) == 1 else tuple_of([_keep(s) for s in ops])
    d = c.declared
    rest: tuple = (U32_SCALAR, U32_SCALAR)
    if isinstance(d, ir.TupleShape) and len(d.elements) >= 2:
        rest = tuple(_keep(e) for e in d.elements[2:])
    return tuple_of((inp, res) + rest)


def _collective_permute_done(c: _Ctx) -> Shape:
    c.arity(1)
    s = c.ops[0]
    if not isinstance(s, ir.TupleShape) or len(s.elements) < 2:
        raise ShapeError(f"the operand of collective-permute-done must be a collective-permute-start tuple, got "
                         f"{human(s)}")
    return _keep(s.elements[1])


def _collective_broadcast(c: _Ctx) -> Shape:
    ops = _collective_arrays(c, "operand of collective-broadcast")
    if len(ops) == 1:
        return _keep(ops[0])
    return tuple_of([_keep(s) for s in ops])


def _ragged_all_to_all(c: _Ctx) -> Shape:
    c.arity(6)
    for i in range(6):
        c.array_op(i, ("input", "output", "input_offsets", "send_sizes", "output_offsets", "recv_sizes")[i])
    out = c.ops[1]
    first = c.ops[2]
    if first.rank not in (1, 2):
        raise ShapeError(f"ragged-all-to-all offsets and sizes must have rank 1 or 2, got {human(first)}")
    for i, name in ((2, "input_offsets"), (3, "send_sizes"), (4, "output_offsets"), (5, "recv_sizes")):
        s = c.ops[i]
        if not s.element_type.is_integral:
            raise ShapeError(f"ragged-all-to-all {name} must be integral, got {human(s)}")
        if not same_dims(s, first) or s.element_type != first.element_type:
            raise ShapeError(f"ragged-all-to-all offsets and sizes must all have the same shape: "
                             f"{human(first)} vs {name} {human(s)}")
    return _keep(out)


def _u32_scalar(c: _Ctx) -> Shape:
    c.arity(0)
    return U32_SCALAR


# --------------------------------------------------------------------------------------------------
# Shuffle (xla/shuffle.h, xla/hlo/transforms/expanders/shuffle_expander.cc): the result has the
# operand's shape; the mode's attributes must fit the operand and the shuffled dimensions.

SHUFFLE_MODES = {"rotate": "shifts", "permute": "indices", "multi_rotate": "multi_shifts"}


def _shuffle_literal_shape(c: _Ctx, name: str):
    lit = c.attr(name)
    shape = getattr(lit, "shape", None)
    if not (isinstance(shape, ir.ArrayShape) and shape.element_type.kind in ("sint", "uint")):
        raise ShapeError(f"shuffle {name} must be an integer array literal")
    return shape


def _shuffle(c: _Ctx) -> Shape:
    c.arity(1)
    s = c.array_op(0)
    for name in ("dimensions", "mode"):
        if name not in c.attrs:
            raise ShapeError(f"shuffle needs {name}=")
    dims = c.dims_attr()
    if len(set(dims)) != len(dims):
        raise ShapeError(f"shuffle dimensions {{{','.join(map(str, dims))}}} repeat a dimension")
    for d in dims:
        if not 0 <= d < s.rank:
            raise ShapeError(f"shuffle dimension {d} is out of range for the operand {human(s)} (rank {s.rank})")
    mode = c.attr("mode")
    if mode not in SHUFFLE_MODES:
        raise ShapeError(f"unknown shuffle mode {mode}; expected one of {', '.join(SHUFFLE_MODES)}")
    own = SHUFFLE_MODES[mode]
    for other in SHUFFLE_MODES.values():
        if other != own and other in c.attrs:
            raise ShapeError(f"shuffle in {mode} mode takes {own}=, not {other}=")
    if mode == "rotate":
        shifts = c.attr("shifts", ())
        if len(shifts) != len(dims):
            raise ShapeError(f"shuffle rotate has {len(shifts)} shifts for {len(dims)} dimensions")
    elif mode == "permute":
        if "indices" not in c.attrs:
            raise ShapeError("shuffle in permute mode needs indices=")
        idx_shape = _shuffle_literal_shape(c, "indices")
        idx = idx_shape.dims
        # One coordinate per shuffled dimension in an innermost dimension (which a shuffle of one
        # dimension may leave out); every other dimension is the operand's or 1 (shared).
        lead = idx[:-1] if len(idx) == s.rank + 1 else idx
        if not (len(idx) == s.rank + 1 and idx[-1] == len(dims)) and \
                not (len(dims) == 1 and len(idx) == s.rank):
            raise ShapeError(f"shuffle indices {human(idx_shape)} do not fit the operand {human(s)} and "
                             f"{len(dims)} shuffled dimension(s): expected the operand's dimensions (or 1) "
                             f"followed by {len(dims)}")
        for k, (n, m) in enumerate(zip(lead, s.dims)):
            if n not in (m, 1):
                raise ShapeError(f"shuffle indices dimension {k} has size {n}; expected {m} (the operand's) or 1")
    else:
        if len(dims) != 1:
            raise ShapeError(f"shuffle in multi_rotate mode rotates one dimension, not {len(dims)}")
        if "multi_shifts" not in c.attrs:
            raise ShapeError("shuffle in multi_rotate mode needs multi_shifts=")
        ms_shape = _shuffle_literal_shape(c, "multi_shifts")
        ms = ms_shape.dims
        if len(ms) != s.rank:
            raise ShapeError(f"shuffle multi_shifts {human(ms_shape)} must have the operand's rank {s.rank}")
        for k, (n, m) in enumerate(zip(ms, s.dims)):
            if k == dims[0] and n != 1:
                raise ShapeError(f"shuffle multi_shifts must have size 1 along the rotated dimension {k}, not {n}")
            if n not in (m, 1):
                raise ShapeError(f"shuffle multi_shifts dimension {k} has size {n}; expected {m} (the operand's) or 1")
    return _keep(s)


# --------------------------------------------------------------------------------------------------
# The table

RULES: dict[str, Callable[[_Ctx], Optional[Shape]]] = {}


def _reg(names: str, rule) -> None:
    for n in names.split():
        RULES[n] = rule


_reg("abs ceil count-leading-zeros floor imag is-finite negate not popcnt real round-nearest-afz "
     "round-nearest-even sign copy domain cbrt cosine cosh erf exponential exponential-minus-one log "
     "log-plus-one logistic rsqrt sine sinh sqrt tan tanh acos acosh asin asinh atan atanh", _unary)
_reg("add atan2 complex divide maximum minimum mulhi multiply power remainder subtract and or xor "
     "shift-left shift-right-arithmetic shift-right-logical compare", _binary)
_reg("select", _select)
_reg("clamp", _clamp)
_reg("convert", _convert)
_reg("bitcast-convert", _bitcast_convert)
_reg("reduce-precision", _reduce_precision)
_reg("stochastic-convert", _stochastic_convert)
_reg("parameter", _parameter)
_reg("constant", _constant)
_reg("iota", _iota)
_reg("broadcast", _broadcast)
_reg("reshape", _reshape)
_reg("dynamic-reshape", _dynamic_reshape)
_reg("transpose", _transpose)
_reg("reverse", _reverse)
_reg("slice", _slice)
_reg("dynamic-slice", _dynamic_slice)
_reg("dynamic-update-slice", _dynamic_update_slice)
_reg("concatenate", _concatenate)
_reg("pad", _pad)
_reg("bitcast", _bitcast)
_reg("tuple", _tuple)
_reg("get-tuple-element", _get_tuple_element)
_reg("get-dimension-size", _get_dimension_size)
_reg("set-dimension-size", _set_dimension_size)
_reg("reduce", _reduce)
_reg("reduce-window", _reduce_window)
_reg("select-and-scatter", _select_and_scatter)
_reg("map", _map)
_reg("scan", _scan)
_reg("dot", _dot)
_reg("scaled-dot", _scaled_dot)
_reg("ragged-dot", _ragged_dot)
_reg("convolution", _convolution)
_reg("fft", _fft)
_reg("triangular-solve", _triangular_solve)
_reg("cholesky", _cholesky)
_reg("gather", _gather)
_reg("scatter", _scatter)
_reg("sort", _sort)
_reg("topk", _topk)
_reg("while", _while)
_reg("conditional", _conditional)
_reg("call", _call)
_reg("fusion", _fusion)
_reg("custom-call", _declared_only)
_reg("opt-barrier", _opt_barrier)
_reg("after-all", _after_all)
_reg("add-dependency", _add_dependency)
_reg("async-start", _async_start)
_reg("async-update", _async_update)
_reg("async-done", _async_done)
_reg("copy-start", _copy_start)
_reg("copy-done", _copy_done)
_reg("rng", _rng)
_reg("rng-bit-generator", _rng_bit_generator)
_reg("rng-get-and-update-state", _rng_get_and_update_state)
_reg("infeed", _infeed)
_reg("outfeed", _outfeed)
_reg("send", _send)
_reg("recv", _recv)
_reg("send-done", _send_done)
_reg("recv-done", _recv_done)
_reg("batch-norm-training", _bn_training)
_reg("batch-norm-inference", _bn_inference)
_reg("batch-norm-grad", _bn_grad)
_reg("partition-id replica-id", _u32_scalar)
_reg("all-reduce all-reduce-start collective-reduce", _all_reduce)
_reg("all-reduce-done", _all_reduce_done)
_reg("all-gather", _all_gather)
_reg("all-gather-start", _all_gather_start)
_reg("all-gather-done", _all_gather_done)
_reg("reduce-scatter", _reduce_scatter)
_reg("all-to-all", _all_to_all)
_reg("ragged-all-to-all", _ragged_all_to_all)
_reg("collective-permute", _collective_permute)
_reg("collective-permute-start", _collective_permute_start)
_reg("collective-permute-done", _collective_permute_done)
_reg("collective-broadcast", _collective_broadcast)
_reg("shuffle", _shuffle)

assert set(RULES) == set(OPCODES), sorted(set(OPCODES) ^ set(RULES))


def rule_for(opcode: str) -> Optional[Callable[[_Ctx], Optional[Shape]]]:
    rule = RULES.get(opcode)
    if rule is not None:
        return rule
    base, suf = split_async(opcode)
    if suf == "-start":
        return _sugar_start(base)
    if suf == "-update":
        return _async_update
    if suf == "-done":
        return _async_done
    return None


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
        return rule(_Ctx(ins, ops, module, ins.opcode))
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
