"""Shape rules of gather and scatter."""
from __future__ import annotations

from typing import Sequence

from .reduce import verify_reducer
from .infer import (Ctx, Shape, ShapeError, array, dynamic_of, human, kept, register, register_check,
                   same_dims, tuple_of)


def _sorted_unique(xs: Sequence[int]) -> bool:
    return all(a < b for a, b in zip(xs, xs[1:]))


def _gather(c: Ctx) -> Shape:
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
    exd = list(dynamic_of(idx))
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
    sd = dynamic_of(s)
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


def _scatter(c: Ctx) -> Shape:
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
    verify_reducer(c, c.computation("to_apply"), [array(o.element_type, ()) for o in operands],
                    [u.element_type for u in updates])
    if n == 1:
        return kept(operands[0])
    return tuple_of([kept(o) for o in operands])


register("gather", _gather)
register("scatter", _scatter)


# --------------------------------------------------------------------------------------------------
# Verifier checks beyond the shape rule (run by shapes/verify.py's checker, `chk`)

def _signature_scatter(chk, comp, ins, callee, ops, et, shape) -> None:
    if "to_apply" in callee:
        n = (len(ops) - 1) // 2
        chk.check_reducer(comp, ins, "to_apply", callee["to_apply"], n, et[:n])


register_check("scatter", _signature_scatter, phase="calls")


def _count_scatter(chk, comp, ins) -> None:
    n = len(ins.operands)
    if n < 3 or n % 2 == 0:
        chk.add("E103", f"scatter takes N operands, indices and N updates (an odd number >= 3), but has {n}",
                ins.loc, comp, ins)


register_check("scatter", _count_scatter, phase="operands")
