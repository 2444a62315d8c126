"""Shape rules of control flow and calls: while, conditional, call, fusion, custom-call (its shape is
the declared one), opt-barrier, after-all, add-dependency."""
from __future__ import annotations

from typing import Optional

from .. import ir
from .infer import (PRED, S32, TOKEN_SHAPE, Ctx, Shape, ShapeError, array, compatible, computation_named,
                   human, is_scalar, is_token, kept, program_shape, register, signature)


def _declared_only(c: Ctx) -> Optional[Shape]:
    return None


def check_args(c: Ctx, comp: ir.Computation, params: list, args: list, what: str) -> None:
    if len(params) != len(args):
        raise ShapeError(f"{what} {comp.name} takes {len(params)} parameter(s), but {c.opcode} passes "
                         f"{len(args)} argument(s)")
    for i, (p, a) in enumerate(zip(params, args)):
        if not compatible(p, a):
            raise ShapeError(f"{what} {comp.name}'s parameter {i} has shape {human(p)}, but the argument has "
                             f"shape {human(a)}")


def _call(c: Ctx) -> Shape:
    comp = c.computation("to_apply")
    params, result = program_shape(comp)
    check_args(c, comp, params, c.ops, "called computation")
    return kept(result)


def _fusion(c: Ctx) -> Shape:
    comp = c.computation("calls")
    params, result = program_shape(comp)
    check_args(c, comp, params, c.ops, "fused computation")
    return kept(result)


def _while(c: Ctx) -> Shape:
    c.arity(1)
    init = c.ops[0]
    cond, body = c.computation("condition"), c.computation("body")
    cp, cr = program_shape(cond)
    bp, br = program_shape(body)
    if len(cp) != 1:
        raise ShapeError(f"while condition {cond.name} must take 1 parameter; takes {len(cp)}")
    if len(bp) != 1:
        raise ShapeError(f"while body {body.name} must take 1 parameter; takes {len(bp)}")
    if not compatible(cr, array(PRED, ())):
        raise ShapeError(f"while condition {cond.name} must return pred[]; returns {human(cr)}")
    if not (compatible(br, cp[0]) and compatible(br, bp[0]) and compatible(br, init)):
        raise ShapeError(f"the parameter of condition and body, the result of the body, and init must all have "
                         f"the same shape; got condition: {signature(cp, cr)}; body: {signature(bp, br)}; init: {human(init)}")
    return kept(init)


def _conditional(c: Ctx) -> Shape:
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
        comp = computation_named(c.module, name)
        params, result = program_shape(comp)
        if len(params) != 1:
            raise ShapeError(f"branch computation {comp.name} must take 1 parameter; takes {len(params)}")
        if not compatible(params[0], c.ops[j + 1]):
            raise ShapeError(f"branch operand {j} must match the shape of the only parameter of branch "
                             f"computation {comp.name}: got operand {human(c.ops[j + 1])}, parameter "
                             f"{human(params[0])}")
        if results and not compatible(results[0], result):
            raise ShapeError(f"the results of all branches must have the same shape: branch 0 returns "
                             f"{human(results[0])}, branch {j} returns {human(result)}")
        results.append(result)
    return kept(results[0])


def _opt_barrier(c: Ctx) -> Shape:
    c.arity(1)
    return kept(c.ops[0])


def _after_all(c: Ctx) -> Shape:
    return TOKEN_SHAPE


def _add_dependency(c: Ctx) -> Shape:
    c.arity(2)
    if not is_token(c.ops[1]):
        raise ShapeError(f"the second operand of add-dependency must be a token, got {human(c.ops[1])}")
    return kept(c.ops[0])


register("while", _while)
register("conditional", _conditional)
register("call", _call)
register("fusion", _fusion)
register("custom-call", _declared_only)
register("opt-barrier", _opt_barrier)
register("after-all", _after_all)
register("add-dependency", _add_dependency)
