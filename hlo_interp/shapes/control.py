"""Shape rules of control flow and calls: while, conditional, call, fusion, custom-call (its shape is
the declared one), opt-barrier, after-all, add-dependency."""
from __future__ import annotations

from typing import Optional

from .. import ir
from .infer import (PRED, S32, TOKEN_SHAPE, Ctx, Shape, ShapeError, array, compatible, computation_named,
                   human, is_scalar, is_token, kept, program_shape, register, register_check,
                   shape_str, signature, subshape)


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


# --------------------------------------------------------------------------------------------------
# Verifier checks beyond the shape rule (run by shapes/verify.py's checker, `chk`)

# custom-call enumerations as XLA's parser takes them (any case; API_VERSION_UNSPECIFIED is refused)
_CC_SCHEDULES = frozenset({"SCHEDULE_NONE", "SCHEDULE_LATEST", "SCHEDULE_EARLIEST"})
_CC_API_VERSIONS = frozenset({"API_VERSION_ORIGINAL", "API_VERSION_STATUS_RETURNING",
                              "API_VERSION_STATUS_RETURNING_UNIFIED", "API_VERSION_TYPED_FFI"})


def _check_custom_call(chk, comp, ins, operand_shapes, shape) -> None:
    # E115: enumerations XLA's parser checks (custom-call schedule and api_version)
    for attr, known_values in (("schedule", _CC_SCHEDULES), ("api_version", _CC_API_VERSIONS)):
        v = ins.attrs.get(attr)
        if isinstance(v, str) and v.upper() not in known_values:
            chk.add("E115", f"custom-call {attr}={v} is not one of {', '.join(sorted(known_values))}",
                    chk.attr_loc(ins, attr), comp, ins)
    _check_output_to_operand_aliasing(chk, comp, ins, operand_shapes, shape)


def _check_output_to_operand_aliasing(chk, comp, ins, operand_shapes, shape) -> None:
    # E114: output_to_operand_aliasing of custom-call and fusion
    alias = ins.attrs.get("output_to_operand_aliasing")
    if alias and shape is not None:
        loc = chk.attr_loc(ins, "output_to_operand_aliasing")
        for e in alias:
            oi, pn, pi = tuple(e.output_index or ()), e.param_number, tuple(e.param_index or ())
            where = f"output_to_operand_aliasing {{{','.join(map(str, oi))}}}: ({pn}, {{{','.join(map(str, pi))}}})"
            if not 0 <= pn < len(operand_shapes):
                chk.add("E114", f"{where}: operand {pn} does not exist ({ins.name} has {len(operand_shapes)} "
                                f"operand(s))", loc, comp, ins)
                break
            osub, psub = subshape(shape, oi), subshape(operand_shapes[pn], pi) \
                if operand_shapes[pn] is not None else None
            if psub is None and operand_shapes[pn] is not None:
                chk.add("E114", f"{where}: operand {pn} ({shape_str(operand_shapes[pn])}) has no element "
                                f"{{{','.join(map(str, pi))}}}", loc, comp, ins)
                break
            if osub is None:
                chk.add("E114", f"{where}: the output {shape_str(shape)} has no element "
                                f"{{{','.join(map(str, oi))}}}", loc, comp, ins)
                break
            if psub is not None and not chk.compat(osub, psub):
                chk.add("E114", f"{where}: the output {shape_str(osub)} and the operand {shape_str(psub)} "
                                f"have different shapes", loc, comp, ins)
                break


def _check_after_all(chk, comp, ins, operand_shapes, shape) -> None:
    # E102: every operand of after-all is a token (XlaBuilder and StableHLO require it)
    for name, s_ in zip(ins.operands, operand_shapes):
        if s_ is not None and not (isinstance(s_, ir.ArrayShape) and s_.element_type.name == "token"):
            chk.add("E102", f"after-all: operand {name} is {shape_str(s_)}; every operand of after-all "
                            f"must be a token", chk.operand_loc(ins, name), comp, ins)
            break


def _check_call(chk, comp, ins, operand_shapes, shape) -> None:
    # E113: composite calls (ShapeVerifier::HandleCall)
    if ins.attrs.get("is_composite") is True:
        fa = ins.attrs.get("frontend_attributes")
        fa = fa if isinstance(fa, dict) else {}
        loc = chk.attr_loc(ins, "frontend_attributes") if fa else chk.attr_loc(ins, "is_composite")
        name, attrs_, version = fa.get("composite.name"), fa.get("composite.attributes"), \
            fa.get("composite.version")
        problem = None
        if not name:
            problem = "a composite call needs frontend_attributes with a non-empty composite.name"
        elif attrs_ is not None and not (getattr(attrs_, "text", attrs_) or ""):
            problem = "composite.attributes must be non-empty (or left out: the default is {})"
        elif version is not None and not (str(getattr(version, "text", version)).isdigit()):
            problem = (f"composite.version must be a non-negative integer, is "
                       f"\"{getattr(version, 'text', version)}\"")
        if problem:
            chk.add("E113", f"{ins.name}: {problem}", loc, comp, ins)


def _check_conditional(chk, comp, ins, operand_shapes, shape) -> None:
    # E117: a pred[] selector takes true/false computations, an s32[] one branch_computations
    if operand_shapes and isinstance(operand_shapes[0], ir.ArrayShape):
        kind = operand_shapes[0].element_type.kind
        if kind == "pred" and "branch_computations" in ins.attrs:
            chk.add("E117", "a conditional with a pred[] selector takes true_computation= and "
                            "false_computation=, not branch_computations= (XLA's parser: unexpected "
                            "attribute \"branch_computations\")", chk.attr_loc(ins, "branch_computations"),
                    comp, ins)
        elif kind != "pred" and ("true_computation" in ins.attrs or "false_computation" in ins.attrs):
            a = "true_computation" if "true_computation" in ins.attrs else "false_computation"
            chk.add("E117", f"a conditional with an integer selector takes branch_computations=, not {a}=",
                    chk.attr_loc(ins, a), comp, ins)


def _signature_while(chk, comp, ins, callee, ops, et, shape) -> None:
    s = ops[0] if ops else None
    if "condition" in callee:
        chk.match_params(comp, ins, "condition", callee["condition"], [s])
        chk.check_predicate(comp, ins, "condition", callee["condition"], 1, scalars=False)
    if "body" in callee:
        chk.match_params(comp, ins, "body", callee["body"], [s])
        chk.match_result(comp, ins, "body", callee["body"], s, "the operand (the loop state)")


def _signature_conditional(chk, comp, ins, callee, ops, et, shape) -> None:
    if "branch_computations" in ins.attrs:
        names = [x for x in ins.attrs["branch_computations"]]
        branches = [("branch_computations", chk.comps.get(n)) for n in names]
    else:
        branches = [("true_computation", callee.get("true_computation")),
                    ("false_computation", callee.get("false_computation"))]
    for i, (attr, c) in enumerate(branches):
        if c is None or i + 1 >= len(ops):
            continue
        chk.match_params(comp, ins, attr, c, [ops[i + 1]])
        chk.match_result(comp, ins, attr, c, shape)


def _signature_call(chk, comp, ins, callee, ops, et, shape) -> None:
    attr = "to_apply" if ins.opcode == "call" else "calls"
    if attr in callee:
        chk.match_params(comp, ins, attr, callee[attr], ops)
        chk.match_result(comp, ins, attr, callee[attr], shape)


def _signature_fusion(chk, comp, ins, callee, ops, et, shape) -> None:
    fused = callee.get("calls")
    if fused is not None:
        # E209: every non-root instruction of a fused computation has a user (CheckFusionInstruction)
        used = {o for i in fused.instructions for o in i.operands}
        for i in fused.instructions:
            if i is not fused.root and i.name not in used:
                chk.add("E209", f"non-root instruction {i.name} of fused computation {fused.name} (called by "
                                f"{ins.name}) has no users", i.loc, fused, i)
                break
    _signature_call(chk, comp, ins, callee, ops, et, shape)


register_check("custom-call", _check_custom_call)
register_check("fusion", _check_output_to_operand_aliasing)
register_check("after-all", _check_after_all)
register_check("call", _check_call)
register_check("conditional", _check_conditional)
register_check("while", _signature_while, phase="calls")
register_check("conditional", _signature_conditional, phase="calls")
register_check("call", _signature_call, phase="calls")
register_check("fusion", _signature_fusion, phase="calls")


def _attributes_conditional(chk, comp, ins) -> None:
    has_tf = "true_computation" in ins.attrs or "false_computation" in ins.attrs
    if has_tf and "branch_computations" in ins.attrs:
        chk.add("E104", "conditional takes either true_computation/false_computation or "
                        "branch_computations, not both", chk.attr_loc(ins, "branch_computations"),
                comp, ins)
    elif has_tf and not ("true_computation" in ins.attrs and "false_computation" in ins.attrs):
        chk.add("E105", "conditional needs both true_computation and false_computation",
                ins.loc, comp, ins)
    elif not has_tf and "branch_computations" not in ins.attrs:
        chk.add("E105", "conditional needs branch_computations (or true_computation and "
                        "false_computation)", ins.loc, comp, ins)


def _count_conditional(chk, comp, ins) -> None:
    n = len(ins.operands)
    if "branch_computations" in ins.attrs:
        want = 1 + len(ins.attrs["branch_computations"])
    elif "true_computation" in ins.attrs:
        want = 3
    else:
        want = None
    if want is not None and n != want:
        chk.add("E103", f"conditional with {want - 1} branch(es) expects {want} operands, but has {n}",
                ins.loc, comp, ins)


register_check("conditional", _attributes_conditional, phase="attributes")
register_check("conditional", _count_conditional, phase="operands")
