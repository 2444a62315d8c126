"""Shape rules of the elementwise opcodes: unary and binary arithmetic, compare, select, clamp and the
conversions."""
from __future__ import annotations

from typing import Optional

from .. import ir
from ..opcodes import opcodes_where
from .infer import (C128, C64, F32, F64, PRED, Ctx, Shape, ShapeError, array, check_enum, dynamic_of,
                   higher_precision, human, is_array, kept, register, register_check, same_dims,
                   same_type_ignoring_fp, type_name, with_type)


_FLOAT_ONLY = opcodes_where(lambda o: o.types == "float")
_FLOAT_OR_COMPLEX = opcodes_where(lambda o: o.types == "float|complex")


def _unary(c: Ctx) -> Shape:
    c.arity(1)
    op = c.opcode
    if op in ("copy", "domain"):
        return kept(c.ops[0])
    s = c.array_op(0)
    t = s.element_type
    if op in _FLOAT_ONLY:
        if not t.is_float:
            raise ShapeError(f"expected a floating-point operand for {op}, got {type_name(t)}")
        return kept(s)
    if op in _FLOAT_OR_COMPLEX:
        if not (t.is_float or t.is_complex):
            raise ShapeError(f"expected a floating-point or complex operand for {op}, got {type_name(t)}")
        return kept(s)
    if op in ("real", "imag"):
        if t.is_complex:
            return with_type(s, F32 if t.name == "c64" else F64)
        if t.is_float:
            return kept(s)
        raise ShapeError(f"expected a floating-point or complex operand for {op}, got {type_name(t)}")
    if op == "abs":
        if t.is_complex:
            return with_type(s, F32 if t.name == "c64" else F64)
        if t.kind == "sint" or t.is_float:
            return kept(s)
        raise ShapeError(f"expected a signed, floating-point or complex operand for abs, got {type_name(t)}")
    if op in ("count-leading-zeros", "popcnt"):
        if not t.is_integral:
            raise ShapeError(f"expected an integral operand for {op}, got {type_name(t)}")
        return kept(s)
    if op == "negate":
        if not (t.is_integral or t.is_float or t.is_complex):
            raise ShapeError(f"expected an integral, floating-point or complex operand for negate, got {type_name(t)}")
        return kept(s)
    if op == "sign":
        if not (t.kind == "sint" or t.is_float or t.is_complex):
            raise ShapeError(f"expected a signed or complex operand for sign, got {type_name(t)}")
        return kept(s)
    if op == "not":
        if not (t == PRED or t.is_integral):
            raise ShapeError(f"expected a pred or integral operand for not, got {type_name(t)}")
        return kept(s)
    if op == "is-finite":
        if not t.is_float:
            raise ShapeError(f"expected a floating-point operand for is-finite, got {type_name(t)}")
        return with_type(s, PRED)
    raise ShapeError(f"no unary shape rule for {op}")


def _elementwise_shape(c: Ctx, lhs: ir.ArrayShape, rhs: ir.ArrayShape) -> ir.ArrayShape:
    """Two operands of one shape (HLO has no implicit broadcast)."""
    if not same_type_ignoring_fp(lhs.element_type, rhs.element_type):
        raise ShapeError(f"binary op {c.opcode} with different element types: {human(lhs)} and {human(rhs)}")
    if not same_dims(lhs, rhs):
        raise ShapeError(f"binary op {c.opcode} with incompatible shapes: {human(lhs)} and {human(rhs)} "
                         f"(implicit broadcast is not allowed in HLO)")
    dyn = tuple(a or b for a, b in zip(dynamic_of(lhs), dynamic_of(rhs)))
    return ir.ArrayShape(higher_precision(lhs.element_type, rhs.element_type), lhs.dims, dyn, lhs.layout)


_NO_PRED_BINARY = opcodes_where(lambda o: o.types == "no-pred")


def _binary(c: Ctx) -> Shape:
    c.arity(2)
    lhs, rhs = c.array_op(0, "lhs"), c.array_op(1, "rhs")
    op = c.opcode
    lt, rt = lhs.element_type, rhs.element_type
    if op in _NO_PRED_BINARY and (lt == PRED or rt == PRED):
        raise ShapeError(f"expected an arithmetic element type for {op}, got pred")
    if op == "atan2" and not (lt.is_float or lt.is_complex):
        raise ShapeError(f"expected floating-point or complex operands for atan2, got {type_name(lt)}")
    if op in ("and", "or", "xor") and not (lt == PRED or lt.is_integral):
        raise ShapeError(f"expected pred or integral operands for {op}, got {type_name(lt)}")
    # mulhi: XLA's shape inference puts no type restriction on it (jaxlib 0.10.2 infers pred/f32/c64)
    if op == "complex":
        if not lt.is_float:
            raise ShapeError(f"expected floating-point operands for complex, got {type_name(lt)}")
        shape = _elementwise_shape(c, lhs, rhs)
        if lt == F32 and rt == F32:
            return with_type(shape, C64)
        if lt == F64 and rt == F64:
            return with_type(shape, C128)
        raise ShapeError(f"complex needs f32 or f64 operands, got {type_name(lt)} and {type_name(rt)}")
    shape = _elementwise_shape(c, lhs, rhs)
    if op == "compare":
        return with_type(shape, PRED)
    return shape


def _select(c: Ctx) -> Shape:
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
    return ir.ArrayShape(higher_precision(t.element_type, f.element_type), t.dims, dynamic_of(t), base.layout)


def _clamp(c: Ctx) -> Shape:
    c.arity(3)
    lo, x, hi = c.array_op(0, "min"), c.array_op(1, "operand"), c.array_op(2, "max")
    for b in (lo, hi):
        if not same_type_ignoring_fp(b.element_type, x.element_type) or (b.dims and not same_dims(b, x)):
            raise ShapeError(f"clamp with incompatible shapes: {human(lo)}, {human(x)}, {human(hi)}")
    return kept(x)


def _convert(c: Ctx) -> Optional[Shape]:
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


def _bitcast_convert(c: Ctx) -> Optional[Shape]:
    c.arity(1)
    s = c.ops[0]
    d = c.declared
    if d is None:
        return None
    if not is_array(s) or not is_array(d):
        raise ShapeError(f"cannot bitcast-convert from or to a non-array: {human(s)} => {human(d)}")
    old, new = s.element_type, d.element_type
    if old.is_complex != new.is_complex:
        raise ShapeError(f"bitcast-convert between complex and real types: {human(s)} => {type_name(new)}")
    ib, ob = old.bits, new.bits
    if max(ib, ob) % min(ib, ob):
        raise ShapeError(f"cannot bitcast types with indivisible bit widths: {type_name(old)} => {type_name(new)}")
    ratio = max(ib, ob) // min(ib, ob)
    if ib > ob:
        return array(new, s.dims + (ratio,), dynamic_of(s) + (False,))
    if ib < ob:
        if not s.dims or s.dims[-1] != ratio:
            last = s.dims[-1] if s.dims else "none"
            raise ShapeError(f"last dimension of the operand ({last}) must equal the ratio of bit widths "
                             f"({ratio}) for bitcast-convert from {human(s)} to {type_name(new)}")
        return array(new, s.dims[:-1], dynamic_of(s)[:-1])
    return with_type(s, new)


def _reduce_precision(c: Ctx) -> Shape:
    c.arity(1)
    s = c.array_op(0)
    if not s.element_type.is_float:
        raise ShapeError(f"expected a floating-point operand for reduce-precision, got {type_name(s.element_type)}")
    e, m = c.attr("exponent_bits", 1), c.attr("mantissa_bits", 0)
    if e < 1:
        raise ShapeError(f"expected exponent_bits >= 1, got {e}")
    if m < 0:
        raise ShapeError(f"expected non-negative mantissa_bits, got {m}")
    return kept(s)


def _stochastic_convert(c: Ctx) -> Optional[Shape]:
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


register("abs ceil count-leading-zeros floor imag is-finite negate not popcnt real round-nearest-afz "
         "round-nearest-even sign copy domain cbrt cosine cosh erf exponential exponential-minus-one log "
         "log-plus-one logistic rsqrt sine sinh sqrt tan tanh acos acosh asin asinh atan atanh", _unary)
register("add atan2 complex divide maximum minimum mulhi multiply power remainder subtract and or xor "
         "shift-left shift-right-arithmetic shift-right-logical compare", _binary)
register("select", _select)
register("clamp", _clamp)
register("convert", _convert)
register("bitcast-convert", _bitcast_convert)
register("reduce-precision", _reduce_precision)
register("stochastic-convert", _stochastic_convert)


# --------------------------------------------------------------------------------------------------
# Verifier checks beyond the shape rule (run by shapes/verify.py's checker, `chk`)

_COMPARE_DIRECTIONS = frozenset({"EQ", "NE", "GE", "GT", "LE", "LT"})
_COMPARE_TYPES = frozenset({"FLOAT", "TOTALORDER", "SIGNED", "UNSIGNED"})


def _check_compare(chk, comp, ins, operand_shapes, shape) -> None:
    # E115: ParseComparisonDirection/Type refuse other values
    check_enum(chk, comp, ins, "direction", _COMPARE_DIRECTIONS)
    check_enum(chk, comp, ins, "type", _COMPARE_TYPES)
    # E111: the comparison type fits the operands (CheckElementwiseInstruction)
    if isinstance(ins.attrs.get("type"), str) and len(operand_shapes) == 2:
        o = operand_shapes[1]
        if isinstance(o, ir.ArrayShape):
            t = ins.attrs["type"].upper()
            kind = o.element_type.kind
            if kind == "float":
                ok, want = t in ("FLOAT", "TOTALORDER"), "FLOAT or TOTALORDER"
            else:
                want = {"sint": "SIGNED", "uint": "UNSIGNED", "pred": "UNSIGNED", "complex": "FLOAT"}.get(kind)
                ok = want is None or t == want
            if not ok:
                chk.add("E111", f"compare of {o.element_type.name} operands takes type={want}, not type={t}",
                        chk.attr_loc(ins, "type"), comp, ins)


register_check("compare", _check_compare)
