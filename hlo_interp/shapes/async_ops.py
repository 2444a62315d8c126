"""Shape rules of the asynchronous pairs: async-start/-update/-done (and the `<op>-start` sugar),
copy-start/-done."""
from __future__ import annotations

from typing import Callable

from .. import ir
from .control import check_args
from .infer import (U32_SCALAR, Ctx, Shape, ShapeError, compatible, human, kept, program_shape, register,
                   register_check, rule_for, tuple_of)


def _async_start_shape(c: Ctx, wrapped: Shape) -> Shape:
    d = c.declared
    rest: tuple = ()
    if d is not None:
        if not isinstance(d, ir.TupleShape) or len(d.elements) < 2:
            raise ShapeError(f"{c.opcode} must produce ((operands), result, context...), but its shape is "
                             f"{human(d)}")
        rest = tuple(kept(e) for e in d.elements[2:])
    return tuple_of((tuple_of([kept(s) for s in c.ops]), kept(wrapped)) + rest)


def _async_start(c: Ctx) -> Shape:
    comp = c.computation("calls")
    params, result = program_shape(comp)
    check_args(c, comp, params, c.ops, "async computation")
    return _async_start_shape(c, result)


def _async_operand(c: Ctx) -> ir.TupleShape:
    c.arity(1)
    s = c.ops[0]
    if not isinstance(s, ir.TupleShape) or len(s.elements) < 2:
        raise ShapeError(f"the operand of {c.opcode} must be the tuple an async start produces, got {human(s)}")
    return s


def _async_update(c: Ctx) -> Shape:
    return kept(_async_operand(c))


def _async_done(c: Ctx) -> Shape:
    s = _async_operand(c)
    if "calls" in c.attrs and c.module is not None:
        comp = c.computation("calls")
        _, result = program_shape(comp)
        if not compatible(result, s.elements[1]):
            raise ShapeError(f"async-done: the operand's result element {human(s.elements[1])} does not match "
                             f"the result of {comp.name}: {human(result)}")
    return kept(s.elements[1])


def sugar_start(base: str) -> Callable[[Ctx], Shape]:
    """`add-start(a, b)`: async-start wrapping one `add`; the wrapped op's rule gives element 1."""
    def rule(c: Ctx) -> Shape:
        d = c.declared
        wrapped_decl = d.elements[1] if isinstance(d, ir.TupleShape) and len(d.elements) >= 2 else None
        inner = ir.Instruction(name=c.ins.name, opcode=base, shape=wrapped_decl, operands=c.ins.operands,
                               attrs=c.ins.attrs, literal=c.ins.literal)
        wrapped = rule_for(base)(Ctx(inner, c.ops, c.module, base))
        if wrapped is None:
            if wrapped_decl is None:
                raise ShapeError(f"cannot infer the shape of {c.opcode}")
            wrapped = wrapped_decl
        return _async_start_shape(c, wrapped)
    return rule


def _copy_start(c: Ctx) -> Shape:
    c.arity(1)
    s = kept(c.ops[0])
    return tuple_of([s, s, U32_SCALAR])


def _copy_done(c: Ctx) -> Shape:
    c.arity(1)
    s = c.ops[0]
    if not isinstance(s, ir.TupleShape) or len(s.elements) != 3:
        raise ShapeError(f"the operand of copy-done must be the (dest, src, u32[]) tuple of a copy-start, got "
                         f"{human(s)}")
    return kept(s.elements[0])


register("async-start", _async_start)
register("async-update", _async_update)
register("async-done", _async_done)
register("copy-start", _copy_start)
register("copy-done", _copy_done)


# --------------------------------------------------------------------------------------------------
# Verifier checks beyond the shape rule (run by shapes/verify.py's checker, `chk`)

def _signature_async_start(chk, comp, ins, callee, ops, et, shape) -> None:
    if "calls" in callee:
        chk.match_params(comp, ins, "calls", callee["calls"], ops)
        if isinstance(shape, ir.TupleShape) and len(shape.elements) >= 2:
            chk.match_result(comp, ins, "calls", callee["calls"], shape.elements[1], "the output (element {1})")


def _signature_async_done(chk, comp, ins, callee, ops, et, shape) -> None:
    if "calls" in callee:
        chk.match_result(comp, ins, "calls", callee["calls"], shape)


register_check("async-start", _signature_async_start, phase="calls")
register_check("async-done", _signature_async_done, phase="calls")
