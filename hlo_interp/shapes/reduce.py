"""Shape rules of reductions and windows: reduce, reduce-window, select-and-scatter, map, scan."""
from __future__ import annotations

from typing import Sequence

from .. import ir
from ..types import PrimitiveType
from .infer import (PRED, Ctx, Shape, ShapeError, array, compatible, compatible_fp, dynamic_of, human,
                   is_array, is_scalar, kept, program_shape, register, register_check, same_dims,
                   same_type_ignoring_fp, shape_str, tuple_of)


def verify_reducer(c: Ctx, comp: ir.Computation, init_shapes: Sequence[Shape],
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
        if not compatible(accs[i], params[i]):
            raise ShapeError(f"reduction function {comp.name}'s {i}-th parameter shape differs from the "
                             f"result shape: {human(params[i])} vs {human(accs[i])}")
        if not compatible_fp(accs[i], init_shapes[i]):
            raise ShapeError(f"reduction function {comp.name}'s accumulator shape at index {i} differs from "
                             f"the init_value shape: {human(accs[i])} vs {human(init_shapes[i])}")
        elem = array(input_types[i], ())
        if not compatible_fp(elem, params[n + i]):
            raise ShapeError(f"reduction function {comp.name}'s {n + i}-th parameter shape differs from the "
                             f"input element type: {human(params[n + i])} vs {human(elem)}")
        if not compatible_fp(accs[i], params[n + i]):
            raise ShapeError(f"reduction function {comp.name}'s {n + i}-th parameter shape must match the "
                             f"result shape, but got {human(params[n + i])} vs {human(accs[i])}")
    return result


def _split_inputs_inits(c: Ctx) -> tuple[list, list]:
    if not c.ops or len(c.ops) % 2:
        raise ShapeError(f"{c.opcode} must have an even, nonzero number of operands (inputs then init "
                         f"values), has {len(c.ops)}")
    n = len(c.ops) // 2
    return c.ops[:n], c.ops[n:]


def _same_dims_inputs(c: Ctx):
    """reduce's and reduce-window's (inputs, inits): the inputs arrays of one set of dimensions."""
    inputs, inits = _split_inputs_inits(c)
    for i in range(len(inputs)):
        c.array_op(i, f"input {i}")
    first = inputs[0]
    for i, s in enumerate(inputs[1:], 1):
        if not same_dims(first, s):
            raise ShapeError(f"all reduced tensors must have the same dimensions; tensor 0 has shape "
                             f"{human(first)}, tensor {i} has shape {human(s)}")
    return inputs, inits


def _reduce(c: Ctx) -> Shape:
    inputs, inits = _same_dims_inputs(c)
    first = inputs[0]
    dims = c.dims_attr()
    for d in dims:
        if not 0 <= d < first.rank:
            raise ShapeError(f"reducing out-of-bounds dimension {d} in shape {human(first)}")
    if len(set(dims)) != len(dims):
        raise ShapeError(f"duplicate reduction dimension in {{{','.join(map(str, dims))}}}")
    result = verify_reducer(c, c.computation("to_apply"), inits, [s.element_type for s in inputs])
    keep = [i for i in range(first.rank) if i not in dims]
    out_dims = [first.dims[i] for i in keep]
    dyn = [dynamic_of(first)[i] for i in keep]
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


def _reduce_window(c: Ctx) -> Shape:
    inputs, inits = _same_dims_inputs(c)
    first = inputs[0]
    result = verify_reducer(c, c.computation("to_apply"), inits, [s.element_type for s in inputs])
    window = c.attr("window") or ir.Window(())
    dims = window_output_dims(first.dims, window, "reduce-window")
    outs = [array(init.element_type, dims, dynamic_of(s)) for s, init in zip(inputs, inits)]
    if isinstance(result, ir.TupleShape):
        return tuple_of(outs)
    return outs[0]


def _select_and_scatter(c: Ctx) -> Shape:
    c.arity(3)
    s, src, init = c.array_op(0), c.array_op(1, "source"), c.ops[2]
    sel = c.computation("select")
    params, result = program_shape(sel)
    if len(params) != 2:
        raise ShapeError(f"select function {sel.name} must take 2 parameters, but takes {len(params)}")
    if not compatible(result, array(PRED, ())):
        raise ShapeError(f"select function {sel.name} must have a rank-0 pred result, got {human(result)}")
    elem = array(s.element_type, ())
    for k in range(2):
        if not compatible_fp(elem, params[k]):
            raise ShapeError(f"select function {sel.name}'s parameter {k} must match the operand element "
                             f"shape: {human(params[k])} vs {human(elem)}")
    verify_reducer(c, c.computation("scatter"), [init], [src.element_type])
    window = c.attr("window") or ir.Window(())
    dims = window_output_dims(s.dims, window, "select-and-scatter")
    if list(src.dims) != dims:
        raise ShapeError(f"source shape does not match the shape of the window-reduced operand: "
                         f"source({human(src)}), window-reduced operand({human(array(s.element_type, dims))})")
    return kept(s)


def _map(c: Ctx) -> Shape:
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
    return array(result.element_type, arg.dims, dynamic_of(arg))


def _scan(c: Ctx) -> Shape:
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
        if not compatible(params[i], want):
            raise ShapeError(f"scan computation {comp.name}'s parameter {i} must be {human(want)} (input "
                             f"{human(s)} without the scan dimension), got {human(params[i])}")
    for j, s in enumerate(inits):
        if not compatible(params[m + j], s):
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
        if not compatible(o, inits[j]):
            raise ShapeError(f"scan computation {comp.name}'s carry result {j} {human(o)} must match the init "
                             f"{human(inits[j])}")
        res.append(kept(o))
    return tuple_of(res)


register("reduce", _reduce)
register("reduce-window", _reduce_window)
register("select-and-scatter", _select_and_scatter)
register("map", _map)
register("scan", _scan)


# --------------------------------------------------------------------------------------------------
# Verifier checks beyond the shape rule (run by shapes/verify.py's checker, `chk`)

def _signature_reduce(chk, comp, ins, callee, ops, et, shape) -> None:
    if "to_apply" in callee:
        n = len(ops) // 2
        chk.check_reducer(comp, ins, "to_apply", callee["to_apply"], n, et[n:])


def _signature_select_and_scatter(chk, comp, ins, callee, ops, et, shape) -> None:
    if "select" in callee:
        chk.check_predicate(comp, ins, "select", callee["select"], 2, [et[0], et[0]] if et else None)
    if "scatter" in callee:
        chk.check_reducer(comp, ins, "scatter", callee["scatter"], 1, [et[1]] if len(et) > 1 else None)


def _signature_map(chk, comp, ins, callee, ops, et, shape) -> None:
    if "to_apply" in callee:
        ps = chk.expect_params(comp, ins, "to_apply", callee["to_apply"], len(ops))
        for i, p in enumerate(ps):
            if p is not None and not (isinstance(p, ir.ArrayShape) and not p.dims):
                chk.sig_error(comp, ins, "to_apply", f"to_apply={callee['to_apply'].name}: parameter {i} "
                                                     f"must be a scalar, is {shape_str(p)}")


register_check("reduce reduce-window", _signature_reduce, phase="calls")
register_check("select-and-scatter", _signature_select_and_scatter, phase="calls")
register_check("map", _signature_map, phase="calls")


def _count_reduce(chk, comp, ins) -> None:
    n = len(ins.operands)
    if n == 0 or n % 2:
        chk.add("E103", f"{ins.opcode} takes N inputs and N init values (an even, positive number), but has {n}",
                ins.loc, comp, ins)


def _count_map(chk, comp, ins) -> None:
    if not ins.operands:
        chk.add("E103", "map needs at least one operand", ins.loc, comp, ins)


register_check("reduce reduce-window", _count_reduce, phase="operands")


def _values_reduce_init(chk, comp, ins, by_name) -> None:
    """W110: an add/multiply reducer (its root the op of its two parameters) whose init value is a
    constant other than 0 / 1."""
    try:
        reducer = chk.m.computation(ins.attrs.get("to_apply"))
    except (KeyError, TypeError):
        return
    root = reducer.root if reducer.instructions else None
    n = len(ins.operands) // 2
    if n != 1 or root is None or root.opcode not in ("add", "multiply") or len(root.operands) != 2:
        return
    rby = {i.name: i for i in reducer.instructions}
    if any(rby.get(o) is None or rby[o].opcode != "parameter" for o in root.operands):
        return
    init = by_name.get(ins.operands[1])
    lit = init.literal if init is not None and init.opcode == "constant" else None
    if lit is None or lit.elided or not isinstance(lit.shape, ir.ArrayShape) or lit.shape.dims:
        return
    try:  # the parser's Python number when it has one (`hlo check` imports no NumPy)
        raw = lit.flat[0] if lit.flat is not None else lit.value.reshape(()).item()
        v = complex(raw)
    except (TypeError, ValueError, AttributeError, IndexError):
        return
    ident = 0 if root.opcode == "add" else 1
    if v != ident and v == v:  # (a NaN init is its own finding's business)
        chk.add("W110", f"{ins.name}: the init value of this {root.opcode} {ins.opcode} is "
                        f"{raw}, not the reducer's identity {ident}: XLA requires "
                        f"an identity and applies other values a shape-dependent number of times",
                chk.operand_loc(ins, ins.operands[1]), comp, ins)


register_check("reduce reduce-window", _values_reduce_init, phase="values")
register_check("map", _count_map, phase="operands")
