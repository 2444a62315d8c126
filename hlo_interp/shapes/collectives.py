"""Shape rules of the collectives, partition-id and replica-id."""
from __future__ import annotations

from typing import Optional

from .. import ir
from .infer import (U32_SCALAR, Ctx, Shape, ShapeError, array, compatible, dynamic_of, human, kept, register,
                   register_check, same_dims, tuple_of)


def _group_mode(c: Ctx, *, has_global_ids: bool = True) -> str:
    chan = c.attrs.get("channel_id") is not None
    glob = bool(c.attrs.get("use_global_device_ids", False)) if has_global_ids else None
    if glob is None:
        return "cross_partition" if chan else "cross_replica"
    if not chan:
        if glob:
            raise ShapeError("use_global_device_ids=true requires a channel_id")
        return "cross_replica"
    return "flattened_id" if glob else "cross_replica_and_partition"


def _subgroup_size(c: Ctx, mode: str) -> int:
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


def _collective_arrays(c: Ctx, what: str) -> list:
    c.at_least(1)
    for i in range(len(c.ops)):
        c.array_op(i, what)
    return c.ops


def _all_reduce(c: Ctx) -> Shape:
    ops = _collective_arrays(c, f"operand of {c.opcode}")
    if len(ops) == 1:
        return kept(ops[0])
    return tuple_of([kept(s) for s in ops])


def _all_reduce_done(c: Ctx) -> Shape:
    c.arity(1)
    return kept(c.ops[0])


def _shard_count_gather(c: Ctx, ops: list, out: Optional[Shape], dim: int) -> Optional[int]:
    if out is None:
        return None
    o0 = out if len(ops) == 1 else (out.elements[0] if isinstance(out, ir.TupleShape) and out.elements else None)
    if not isinstance(o0, ir.ArrayShape) or dim >= o0.rank:
        raise ShapeError(f"{c.opcode}: the result {human(out)} does not have dimension {dim}")
    a = ops[0].dims[dim]
    b = o0.dims[dim]
    return -(-b // a) if a else 0


def _all_gather_shapes(c: Ctx, out: Optional[Shape]) -> Optional[Shape]:
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
        outs.append(array(s.element_type, dd, dynamic_of(s)))
    return outs[0] if len(outs) == 1 else tuple_of(outs)


def _all_gather(c: Ctx) -> Optional[Shape]:
    return _all_gather_shapes(c, c.declared)


def _all_gather_start(c: Ctx) -> Optional[Shape]:
    d = c.declared
    if d is None:
        return None
    if not isinstance(d, ir.TupleShape) or len(d.elements) != 2:
        raise ShapeError(f"all-gather-start produces an (operands, results) tuple, not {human(d)}")
    res = _all_gather_shapes(c, d.elements[1])
    inp = kept(c.ops[0]) if len(c.ops) == 1 else tuple_of([kept(s) for s in c.ops])
    return tuple_of([inp, res])


def _all_gather_done(c: Ctx) -> Shape:
    c.arity(1)
    s = c.ops[0]
    if not isinstance(s, ir.TupleShape) or len(s.elements) != 2:
        raise ShapeError(f"the operand of all-gather-done must be an all-gather-start tuple, got {human(s)}")
    return kept(s.elements[1])


def _reduce_scatter(c: Ctx) -> Optional[Shape]:
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
        outs.append(array(s.element_type, dd, dynamic_of(s)))
    return outs[0] if len(outs) == 1 else tuple_of(outs)


def _all_to_all(c: Ctx) -> Shape:
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
        return kept(s)
    for i, s in enumerate(ops):
        if not compatible(s, ops[0]):
            raise ShapeError(f"all-to-all has operands with different shapes: operand 0 is {human(ops[0])}, "
                             f"operand {i} is {human(s)}")
    return tuple_of([kept(s) for s in ops])


def _collective_permute_result(c: Ctx) -> Shape:
    ops = c.ops
    if "slice_sizes" in c.attrs or (len(ops) == 4 and isinstance(ops[2], ir.TupleShape)):
        c.arity(4)
        return kept(ops[1])
    c.at_least(1)
    for i in range(len(ops)):
        c.array_op(i, f"operand of {c.opcode}")
    if len(ops) == 1:
        return kept(ops[0])
    return tuple_of([kept(s) for s in ops])


def _collective_permute(c: Ctx) -> Shape:
    return _collective_permute_result(c)


def _collective_permute_start(c: Ctx) -> Shape:
    res = _collective_permute_result(c)
    ops = c.ops
    in_place = "slice_sizes" in c.attrs or (len(ops) == 4 and isinstance(ops[2], ir.TupleShape))
    inp = kept(ops[0]) if in_place or len(ops) == 1 else tuple_of([kept(s) for s in ops])
    d = c.declared
    rest: tuple = (U32_SCALAR, U32_SCALAR)
    if isinstance(d, ir.TupleShape) and len(d.elements) >= 2:
        rest = tuple(kept(e) for e in d.elements[2:])
    return tuple_of((inp, res) + rest)


def _collective_permute_done(c: Ctx) -> Shape:
    c.arity(1)
    s = c.ops[0]
    if not isinstance(s, ir.TupleShape) or len(s.elements) < 2:
        raise ShapeError(f"the operand of collective-permute-done must be a collective-permute-start tuple, got "
                         f"{human(s)}")
    return kept(s.elements[1])


def _collective_broadcast(c: Ctx) -> Shape:
    ops = _collective_arrays(c, "operand of collective-broadcast")
    if len(ops) == 1:
        return kept(ops[0])
    return tuple_of([kept(s) for s in ops])


def _ragged_all_to_all(c: Ctx) -> Shape:
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
    return kept(out)


def _u32_scalar(c: Ctx) -> Shape:
    c.arity(0)
    return U32_SCALAR


register("partition-id replica-id", _u32_scalar)
register("all-reduce all-reduce-start collective-reduce", _all_reduce)
register("all-reduce-done", _all_reduce_done)
register("all-gather", _all_gather)
register("all-gather-start", _all_gather_start)
register("all-gather-done", _all_gather_done)
register("reduce-scatter", _reduce_scatter)
register("all-to-all", _all_to_all)
register("ragged-all-to-all", _ragged_all_to_all)
register("collective-permute", _collective_permute)
register("collective-permute-start", _collective_permute_start)
register("collective-permute-done", _collective_permute_done)
register("collective-broadcast", _collective_broadcast)


# --------------------------------------------------------------------------------------------------
# Verifier checks beyond the shape rule (run by shapes/verify.py's checker, `chk`)

def _signature_reducer(chk, comp, ins, callee, ops, et, shape) -> None:
    if "to_apply" in callee:
        chk.check_reducer(comp, ins, "to_apply", callee["to_apply"], 1)


register_check("all-reduce all-reduce-start reduce-scatter", _signature_reducer, phase="calls")


def _count_collective_permute(chk, comp, ins) -> None:
    n = len(ins.operands)
    if "slice_sizes" in ins.attrs and n != 4:
        chk.add("E103", f"collective-permute with slice_sizes expects 4 operands, but has {n}", ins.loc, comp, ins)


register_check("collective-permute", _count_collective_permute, phase="operands")
