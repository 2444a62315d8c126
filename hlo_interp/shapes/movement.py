"""Shape rules of data movement: iota, broadcast, reshape, transpose, slices, concatenate, pad, tuples,
dimension sizes."""
from __future__ import annotations

from typing import Optional

from .. import ir
from .infer import (S32, Ctx, Shape, ShapeError, array, dynamic_of, higher_precision, human, is_array,
                   is_scalar, kept, register, register_check, same_type_ignoring_fp, tuple_of, type_name)


def _parameter(c: Ctx) -> Optional[Shape]:
    c.arity(0)
    return None


def _constant(c: Ctx) -> Optional[Shape]:
    c.arity(0)
    lit = c.ins.literal
    if lit is not None and lit.shape is not None:
        return kept(lit.shape)
    return None


def _iota(c: Ctx) -> Optional[Shape]:
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
    return kept(d)


def _broadcast(c: Ctx) -> Optional[Shape]:
    c.arity(1)
    s = c.array_op(0)
    d = c.declared_array()
    dims = c.dims_attr()
    if d is None:
        # What XLA's parser infers without a written shape: InferBroadcastShape(operand,
        # broadcast_sizes=dimensions), i.e. `dimensions` read as sizes prepended to the operand's
        # dimensions (right for the common scalar `dimensions={}` case; otherwise the verifier
        # then reports the mismatch, as XLA's does).
        return array(s.element_type, dims + s.dims, (False,) * len(dims) + dynamic_of(s))
    if len(dims) != s.rank:
        raise ShapeError(f"broadcast dimensions {{{','.join(map(str, dims))}}} must have one entry per "
                         f"operand dimension (operand rank {s.rank})")
    for i, od in enumerate(dims):
        if not 0 <= od < d.rank:
            raise ShapeError(f"broadcast dimension {od} out of range for rank {d.rank}")
        if s.dims[i] != d.dims[od]:
            raise ShapeError(f"broadcast operand dimension {i} has size {s.dims[i]}, but result dimension "
                             f"{od} has size {d.dims[od]}")
    return array(s.element_type, d.dims, dynamic_of(d))


def _reshape(c: Ctx) -> Optional[Shape]:
    c.arity(1)
    s = c.array_op(0)
    d = c.declared_array()
    if d is None:
        return None
    if s.num_elements() != d.num_elements():
        raise ShapeError(f"reshape has mismatched element counts: from={s.num_elements()} ({human(s)}) "
                         f"to={d.num_elements()} ({human(d)})")
    return array(s.element_type, d.dims, dynamic_of(d))


def _dynamic_reshape(c: Ctx) -> Optional[Shape]:
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
    return array(s.element_type, d.dims, dynamic_of(d))


def _transpose(c: Ctx) -> Shape:
    c.arity(1)
    s = c.array_op(0)
    perm = c.dims_attr()
    if sorted(perm) != list(range(s.rank)):
        raise ShapeError(f"transpose dimensions [{','.join(map(str, perm))}] are not a permutation of the "
                         f"operand dimensions (operand shape is {human(s)})")
    dyn = dynamic_of(s)
    layout = None
    if s.layout is not None and len(s.layout.minor_to_major) == s.rank and not s.layout.has_extras:
        inv = [0] * s.rank
        for j, p in enumerate(perm):
            inv[p] = j
        layout = ir.Layout(tuple(inv[d] for d in s.layout.minor_to_major))
    return ir.ArrayShape(s.element_type, tuple(s.dims[p] for p in perm),
                         tuple(dyn[p] for p in perm), layout)


def _reverse(c: Ctx) -> Shape:
    c.arity(1)
    s = c.array_op(0)
    dims = c.dims_attr()
    if len(set(dims)) != len(dims):
        raise ShapeError("a dimension number is duplicated in reverse")
    for d in dims:
        if not 0 <= d < s.rank:
            raise ShapeError(f"reverse dimension {d} out of range for rank {s.rank}")
    return kept(s)


def _slice(c: Ctx) -> Shape:
    c.arity(1)
    s = c.array_op(0)
    sl = c.attr("slice", ())
    if len(sl) != s.rank:
        raise ShapeError(f"slice index count does not match argument rank: {len(sl)} vs {s.rank}")
    sizes, dyn = [], []
    sdyn = dynamic_of(s)
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


def _check_start_indices(c: Ctx, idx: list, rank: int, what: str) -> None:
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


def _dynamic_slice(c: Ctx) -> Shape:
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


def _dynamic_update_slice(c: Ctx) -> Shape:
    c.at_least(2)
    s, u = c.array_op(0), c.array_op(1, "update")
    _check_start_indices(c, c.ops[2:], s.rank, "dynamic-update-slice")
    if u.rank != s.rank:
        raise ShapeError(f"dynamic-update-slice update rank does not match argument rank: {u.rank} vs {s.rank}")
    if not same_type_ignoring_fp(s.element_type, u.element_type):
        raise ShapeError(f"dynamic-update-slice update element type does not match the operand: "
                         f"{type_name(u.element_type)} vs {type_name(s.element_type)}")
    for i in range(s.rank):
        if u.dims[i] > s.dims[i]:
            raise ShapeError(f"update dim size {u.dims[i]} greater than dynamic-update-slice dimension: "
                             f"{s.dims[i]}")
    return kept(s)


def _concatenate(c: Ctx) -> Shape:
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
    dyn = list(dynamic_of(first))
    for i in range(1, len(c.ops)):
        s = c.array_op(i)
        if s.rank != first.rank:
            raise ShapeError(f"cannot concatenate arrays with different ranks: {first.rank} ({human(first)}) "
                             f"vs {s.rank} ({human(s)})")
        if not same_type_ignoring_fp(et, s.element_type):
            raise ShapeError(f"cannot concatenate arrays with different element types: {type_name(et)} vs "
                             f"{type_name(s.element_type)}")
        for k in range(first.rank):
            if k != d and s.dims[k] != first.dims[k]:
                raise ShapeError(f"cannot concatenate arrays that differ in dimensions other than the one "
                                 f"being concatenated; dimension {k} in both shapes must be equal: "
                                 f"{human(first)} vs {human(s)}")
        out[d] += s.dims[d]
        dyn = [a or b for a, b in zip(dyn, dynamic_of(s))]
        et = higher_precision(et, s.element_type)
    return array(et, out, dyn)


def _pad(c: Ctx) -> Shape:
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
        raise ShapeError(f"the element types of the operands to pad do not match: {type_name(s.element_type)} "
                         f"vs {type_name(v.element_type)}")
    out = []
    for i, p in enumerate(cfg):
        if p.interior < 0:
            raise ShapeError(f"interior padding cannot be negative: {p.interior} in dimension {i}")
        n = s.dims[i] + p.low + p.high + max(s.dims[i] - 1, 0) * p.interior
        if n < 0:
            raise ShapeError(f"padding results in negative size {n} for dimension {i}")
        out.append(n)
    return array(higher_precision(s.element_type, v.element_type), out, dynamic_of(s))


def _tiled(s: ir.ArrayShape) -> bool:
    lay = s.layout
    return lay is not None and bool(lay.tiles or lay.tail_padding_alignment or lay.element_size_bits
                                    or lay.physical_shape is not None)


def _bitcast(c: Ctx) -> Optional[Shape]:
    c.arity(1)
    s = c.ops[0]
    d = c.declared
    if d is None:
        return None
    if not is_array(s) or not is_array(d) or _tiled(s) or _tiled(d):
        # Tiled layouts pad the buffer: equal physical sizes need not mean equal logical ones
        # (layout.py computes physical sizes; the layout-sensitive check belongs there).
        return kept(d)
    sb = s.num_elements() * s.element_type.bits
    db = d.num_elements() * d.element_type.bits
    if sb != db:
        raise ShapeError(f"bitcast cannot change the size in bytes: {human(s)} ({sb // 8 if sb % 8 == 0 else sb / 8} "
                         f"bytes) to {human(d)} ({db // 8 if db % 8 == 0 else db / 8} bytes)")
    return kept(d)


def _tuple(c: Ctx) -> Shape:
    return tuple_of([kept(s) for s in c.ops])


def _get_tuple_element(c: Ctx) -> Shape:
    c.arity(1)
    s = c.ops[0]
    idx = c.attr("index", 0)
    if not isinstance(s, ir.TupleShape):
        raise ShapeError(f"cannot infer shape: attempting to index into non-tuple: {human(s)}")
    if not 0 <= idx < len(s.elements):
        raise ShapeError(f"tuple index {idx} out of range for {human(s)} ({len(s.elements)} elements)")
    return kept(s.elements[idx])


def _get_dimension_size(c: Ctx) -> Shape:
    c.arity(1)
    s = c.array_op(0)
    dims = c.dims_attr()
    if len(dims) != 1 or not 0 <= dims[0] < s.rank:
        raise ShapeError(f"get-dimension-size dimension {dims[0] if dims else '?'} out of range for rank {s.rank}")
    if s.dims[dims[0]] > 2**31 - 1:
        raise ShapeError(f"get-dimension-size: dimension {dims[0]} of {human(s)} exceeds the INT_MAX limit")
    return array(S32, ())


def _set_dimension_size(c: Ctx) -> Shape:
    c.arity(2)
    s = c.array_op(0)
    v = c.ops[1]
    dims = c.dims_attr()
    if len(dims) != 1 or not 0 <= dims[0] < s.rank:
        raise ShapeError(f"set-dimension-size dimension {dims[0] if dims else '?'} out of range for rank {s.rank}")
    if not (is_scalar(v) and v.element_type == S32):
        raise ShapeError(f"set-dimension-size's value has to be an s32 scalar, got {human(v)}")
    dyn = list(dynamic_of(s))
    dyn[dims[0]] = True
    return array(s.element_type, s.dims, dyn)


register("parameter", _parameter)
register("constant", _constant)
register("iota", _iota)
register("broadcast", _broadcast)
register("reshape", _reshape)
register("dynamic-reshape", _dynamic_reshape)
register("transpose", _transpose)
register("reverse", _reverse)
register("slice", _slice)
register("dynamic-slice", _dynamic_slice)
register("dynamic-update-slice", _dynamic_update_slice)
register("concatenate", _concatenate)
register("pad", _pad)
register("bitcast", _bitcast)
register("tuple", _tuple)
register("get-tuple-element", _get_tuple_element)
register("get-dimension-size", _get_dimension_size)
register("set-dimension-size", _set_dimension_size)


# --------------------------------------------------------------------------------------------------
# Verifier checks beyond the shape rule (run by shapes/verify.py's checker, `chk`)

def _check_iota(chk, comp, ins, operand_shapes, shape) -> None:
    # E102: iota makes integral, floating-point or complex arrays (ShapeVerifier::HandleIota)
    if isinstance(shape, ir.ArrayShape) and shape.element_type.kind not in ("sint", "uint", "float", "complex"):
        chk.add("E102", f"iota of {shape.element_type.name}: XLA makes iotas of integral, floating-point and "
                        f"complex types only", ins.loc, comp, ins)


register_check("iota", _check_iota)


def _values_constant(chk, comp, ins, by_name) -> None:
    if ins.literal is not None and ins.literal.elided:
        chk.add("N001", f"constant {ins.name} has an elided value {{...}}: XLA fills it with "
                        f"arbitrary values, so results that depend on it are not reproducible",
                ins.loc, comp, ins)


register_check("constant", _values_constant, phase="values")


def _count_dynamic_slice(chk, comp, ins) -> None:
    if len(ins.operands) < 1:
        chk.add("E103", "dynamic-slice needs an operand", ins.loc, comp, ins)


def _count_dynamic_update_slice(chk, comp, ins) -> None:
    n = len(ins.operands)
    if n < 2:
        chk.add("E103", f"dynamic-update-slice needs an operand and an update, but has {n} operand(s)",
                ins.loc, comp, ins)


def _count_concatenate(chk, comp, ins) -> None:
    if not ins.operands:
        chk.add("E103", "concatenate needs at least one operand", ins.loc, comp, ins)


register_check("dynamic-slice", _count_dynamic_slice, phase="operands")
register_check("dynamic-update-slice", _count_dynamic_update_slice, phase="operands")
register_check("concatenate", _count_concatenate, phase="operands")
