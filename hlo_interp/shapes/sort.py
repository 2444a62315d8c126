"""Shape rules of sort and topk."""
from __future__ import annotations

from .infer import (PRED, S32, Ctx, Shape, ShapeError, array, compatible, compatible_fp, dynamic_of, human,
                   kept, program_shape, register, register_check, same_dims, tuple_of, type_name)


def _sort(c: Ctx) -> Shape:
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
        if not compatible(result, array(PRED, ())):
            raise ShapeError(f"sort comparator {comp.name} must return pred[], but returns {human(result)}")
        for i, s in enumerate(c.ops):
            for k in (2 * i, 2 * i + 1):
                if not compatible_fp(params[k], array(s.element_type, ())):
                    raise ShapeError(f"sort comparator {comp.name}'s parameter {k} must be "
                                     f"{type_name(s.element_type)}[], got {human(params[k])}")
    if len(c.ops) == 1:
        return kept(first)
    return tuple_of([kept(s) for s in c.ops])


def _topk(c: Ctx) -> Shape:
    c.arity(1)
    s = c.array_op(0)
    k = c.attr("k", 0)
    if s.rank < 1:
        raise ShapeError(f"topk needs an operand of rank >= 1, got {human(s)}")
    if k < 0 or k > s.dims[-1]:
        raise ShapeError(f"topk: k={k} must be between 0 and the last dimension ({s.dims[-1]}) of {human(s)}")
    dims = s.dims[:-1] + (k,)
    dyn = dynamic_of(s)[:-1] + (False,)
    return tuple_of([array(s.element_type, dims, dyn), array(S32, dims, dyn)])


register("sort", _sort)
register("topk", _topk)


# --------------------------------------------------------------------------------------------------
# Verifier checks beyond the shape rule (run by shapes/verify.py's checker, `chk`)

def _signature_sort(chk, comp, ins, callee, ops, et, shape) -> None:
    if "to_apply" in callee:
        chk.check_predicate(comp, ins, "to_apply", callee["to_apply"], 2 * len(ops), [t for t in et for _ in (0, 1)])


def _signature_topk(chk, comp, ins, callee, ops, et, shape) -> None:
    if "to_apply" in callee:
        chk.check_predicate(comp, ins, "to_apply", callee["to_apply"], 2, [et[0], et[0]] if et else None)


register_check("sort", _signature_sort, phase="calls")
register_check("topk", _signature_topk, phase="calls")


def _count_sort(chk, comp, ins) -> None:
    if not ins.operands:
        chk.add("E103", "sort needs at least one operand", ins.loc, comp, ins)


register_check("sort", _count_sort, phase="operands")
