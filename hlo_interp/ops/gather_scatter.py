"""gather and scatter (all dimension numbers incl. batching dims; variadic scatter; any update computation).

gather: start indices are clamped so the whole slice is in bounds (XLA: start = clamp(start, 0,
dim - slice_size)), for every index type incl. u64 values beyond s64 and negative ones.  Gathers whose
slices are single elements or whole dimensions (x[i], embedding lookups, take_along_axis) are one
NumPy advanced-indexing read on the transposed operand; any other slice shape builds the full index
arrays (one fancy-indexing read).

scatter: the update windows are turned into flat operand positions with one vectorized computation.
A window that does not fit in the operand AS A WHOLE is skipped (XLA), even if part of it would fit.
Updates are applied in row-major order of the updates array, as XLA:CPU does (checked: with duplicate
targets a `subtract` computation folds in that order, and "replace" keeps the last update).
  * recognized computations (reduce.py's recognizer: add, multiply, maximum, minimum, and, or, xor)
    run as one `ufunc.at` per operand (integers in 64 bits, wrapped back; pred add/or/max = logical
    or, multiply/and/min = logical and; float max/min propagate NaN, and max(-0, +0) = +0,
    min(-0, +0) = -0 as in XLA);  bf16/f16/f8 sums round at every step, like XLA:CPU's;
  * "replace" (the computation returns its update parameters): one fancy-indexing assignment, the
    last duplicate winning;
  * anything else (incl. XLA's float-normalized `f32 add` + converts form): the computation runs on
    whole vectors, in rounds: round r applies the r-th update of every target position (so duplicates
    are applied in order), one evaluation per round (as many rounds as the most repeated target);
    a computation that cannot run on arrays is called once per update.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from ..types import dtype_kind
from .numerics import complex_multiply_scatter_ufunc
from .reducers import PRED_UFUNCS, UFUNCS, is_elementwise_computation, recognize_reducer
from .registry import error_at, kernel


class _DimError(ValueError):
    pass


# --------------------------------------------------------------------------------------------------
# index helpers


def _as_int64(idx: np.ndarray) -> np.ndarray:
    """Indices as int64; u64 values beyond s64 saturate (they are clamped/out of bounds anyway)."""
    idx = np.asarray(idx)
    if idx.dtype == np.bool_:
        return idx.astype(np.int64)
    if idx.dtype.kind not in "iu":
        raise _DimError(f"indices must be integers, got {idx.dtype}")
    if idx.dtype == np.uint64:
        return np.minimum(idx, np.uint64(2 ** 62)).astype(np.int64)
    if idx.dtype in _NATIVE_INDEX:
        return idx  # converted to int64 where multiplied by a stride (no int32 overflow)
    return idx.astype(np.int64)


_NATIVE_INDEX = {np.dtype(t) for t in (np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32)}


def _index_batches(indices: np.ndarray, index_vector_dim: int):
    """(idx [batch..., n], batch_dims_of_indices): the index vectors moved to the last axis."""
    idx = _as_int64(indices)
    if index_vector_dim == idx.ndim:
        idx = idx[..., None]
    if not 0 <= index_vector_dim < idx.ndim:
        raise _DimError(f"index_vector_dim {index_vector_dim} is out of range for indices of rank {indices.ndim}")
    batch_src = [d for d in range(idx.ndim) if d != index_vector_dim]
    return np.moveaxis(idx, index_vector_dim, -1), batch_src


def _check_dims(name, dims, rank):
    for d in dims:
        if not 0 <= d < rank:
            raise _DimError(f"{name} {list(dims)} out of range for rank {rank}")
    if len(set(dims)) != len(dims):
        raise _DimError(f"{name} {list(dims)} has repeated dimensions")


def _starts(idx, batch_src, operand_shape, index_map, op_batch, idx_batch, sizes, clamp: bool):
    """Per operand dimension, the start index as an array over the batch shape (or a 0 int)."""
    bshape = idx.shape[:-1]
    rank = len(operand_shape)
    if idx.shape[-1] != len(index_map):
        raise _DimError(f"index vectors have {idx.shape[-1]} components but the index map has "
                        f"{len(index_map)} entries")
    starts: list = [0] * rank
    for k, d in enumerate(index_map):
        starts[d] = idx[..., k]
    for od, ib in zip(op_batch, idx_batch):
        if ib not in batch_src:
            raise _DimError(f"indices batching dimension {ib} is the index vector dimension")
        pos = batch_src.index(ib)
        shp = [1] * len(bshape)
        shp[pos] = bshape[pos]
        starts[od] = np.arange(bshape[pos], dtype=np.int64).reshape(shp)
    if clamp:
        for d in range(rank):
            if isinstance(starts[d], np.ndarray):
                hi = max(operand_shape[d] - sizes[d], 0)
                starts[d] = np.clip(starts[d].astype(np.int64, copy=False), 0, hi)
    return starts


# --------------------------------------------------------------------------------------------------
# gather


def gather(operand: np.ndarray, indices: np.ndarray, *, offset_dims: Sequence[int],
           collapsed_slice_dims: Sequence[int], start_index_map: Sequence[int], index_vector_dim: int,
           slice_sizes: Sequence[int], operand_batching_dims: Sequence[int] = (),
           start_indices_batching_dims: Sequence[int] = ()) -> np.ndarray:
    rank = operand.ndim
    if len(slice_sizes) != rank:
        raise _DimError(f"slice_sizes has {len(slice_sizes)} entries for an operand of rank {rank}")
    for d, s in enumerate(slice_sizes):
        if not 0 <= s <= operand.shape[d]:
            raise _DimError(f"slice size {s} of dimension {d} exceeds the operand's {operand.shape[d]}")
    _check_dims("start_index_map", start_index_map, rank)
    _check_dims("collapsed_slice_dims", collapsed_slice_dims, rank)
    _check_dims("operand_batching_dims", operand_batching_dims, rank)
    removed = set(collapsed_slice_dims) | set(operand_batching_dims)
    for d in removed:
        if slice_sizes[d] > 1:
            raise _DimError(f"collapsed/batching dimension {d} must have slice size 1, not {slice_sizes[d]}")
    idx, batch_src = _index_batches(indices, index_vector_dim)
    bshape = idx.shape[:-1]
    starts = _starts(idx, batch_src, operand.shape, start_index_map, operand_batching_dims,
                     start_indices_batching_dims, slice_sizes, clamp=True)
    window = [d for d in range(rank) if d not in removed]
    out_rank = len(bshape) + len(window)
    if len(offset_dims) != len(window):
        raise _DimError(f"offset_dims has {len(offset_dims)} entries; expected {len(window)}")
    _check_dims("offset_dims", offset_dims, out_rank)
    nb, nw = len(bshape), len(window)
    wshape = bshape + tuple(slice_sizes[d] for d in window)
    if operand.size == 0 or any(slice_sizes[d] == 0 for d in range(rank)):
        full = np.zeros(wshape, dtype=operand.dtype)  # XLA:CPU: zeros where a slice has no source
    elif all(slice_sizes[d] in (1, operand.shape[d]) for d in range(rank)):
        # rows/columns (embedding lookups, x[i]): index the single-element dimensions, take the whole
        # others with a basic slice
        point = [d for d in range(rank) if slice_sizes[d] != operand.shape[d]]
        whole = [d for d in range(rank) if slice_sizes[d] == operand.shape[d]]
        op_t = np.transpose(operand, point + whole)
        if point:
            full = op_t[tuple(np.broadcast_to(np.asarray(starts[d], dtype=np.intp), bshape) for d in point)]
        else:
            full = np.broadcast_to(op_t, bshape + op_t.shape).copy()
        full = full.reshape(wshape)
    else:
        full = None
    if full is not None:
        return _gather_out(full, nb, offset_dims, out_rank)
    # index arrays over [batch..., window...]
    arrays = []
    for d in range(rank):
        s = starts[d]
        s = np.asarray(s, dtype=np.int64).reshape(np.shape(s) + (1,) * nw) if isinstance(s, np.ndarray) \
            else np.int64(s)
        if d in window:
            w = window.index(d)
            shp = [1] * (nb + nw)
            shp[nb + w] = slice_sizes[d]
            s = s + np.arange(slice_sizes[d], dtype=np.int64).reshape(shp)
        arrays.append(s)
    full = operand[tuple(np.broadcast_arrays(*arrays))].reshape(wshape)
    return _gather_out(full, nb, offset_dims, out_rank)


def _gather_out(full, nb, offset_dims, out_rank):
    """[batch..., window...] -> the output order: batch dims where offset_dims are not, window dims at
    offset_dims (in order)."""
    batch_pos = [p for p in range(out_rank) if p not in offset_dims]
    offs = sorted(offset_dims)
    perm = [0] * out_rank
    for i, p in enumerate(batch_pos):
        perm[p] = i
    for i, p in enumerate(offs):
        perm[p] = nb + i
    return np.transpose(full, perm)


@kernel("gather")
def _k_gather(ins, ctx):
    a = ins.attrs
    kw = {"offset_dims": tuple(a.get("offset_dims", ())),
          "collapsed_slice_dims": tuple(a.get("collapsed_slice_dims", ())),
          "start_index_map": tuple(a.get("start_index_map", ())),
          "index_vector_dim": int(a["index_vector_dim"]) if a.get("index_vector_dim") is not None else None,
          "slice_sizes": tuple(a["slice_sizes"]),
          "operand_batching_dims": tuple(a.get("operand_batching_dims", ())),
          "start_indices_batching_dims": tuple(a.get("start_indices_batching_dims", ()))}

    def run(operand, indices):
        k = dict(kw)
        if k["index_vector_dim"] is None:
            k["index_vector_dim"] = np.ndim(indices)
        try:
            return gather(operand, indices, **k)
        except _DimError as e:
            raise error_at(ins, f"gather: {e}") from None
    return run


# --------------------------------------------------------------------------------------------------
# scatter


def scatter_targets(operand_shape, indices, update_shape, *, update_window_dims, inserted_window_dims,
                    scatter_dims_to_operand_dims, index_vector_dim, input_batching_dims=(),
                    scatter_indices_batching_dims=()):
    """(flat operand positions, flat update positions) of the in-bounds update elements, in row-major
    order of the updates (windows that do not fit as a whole are dropped); the update positions are
    None when every update is in bounds."""
    rank = len(operand_shape)
    urank = len(update_shape)
    _check_dims("update_window_dims", update_window_dims, urank)
    _check_dims("inserted_window_dims", inserted_window_dims, rank)
    _check_dims("input_batching_dims", input_batching_dims, rank)
    _check_dims("scatter_dims_to_operand_dims", scatter_dims_to_operand_dims, rank)
    idx, batch_src = _index_batches(indices, index_vector_dim)
    bshape = idx.shape[:-1]
    removed = set(inserted_window_dims) | set(input_batching_dims)
    window = [d for d in range(rank) if d not in removed]
    if len(window) != len(update_window_dims):
        raise _DimError(f"update_window_dims has {len(update_window_dims)} entries; expected {len(window)}")
    scatter_upd = [d for d in range(urank) if d not in update_window_dims]
    if tuple(update_shape[d] for d in scatter_upd) != tuple(bshape):
        raise _DimError(f"updates' scatter dimensions {[update_shape[d] for d in scatter_upd]} do not match "
                        f"the indices' batch dimensions {list(bshape)}")
    wsizes = [update_shape[d] for d in sorted(update_window_dims)]
    sizes = [1] * rank
    for d, s in zip(window, wsizes):
        sizes[d] = s
        if s > operand_shape[d]:
            raise _DimError(f"update window size {s} exceeds operand dimension {d} ({operand_shape[d]})")
    starts = _starts(idx, batch_src, operand_shape, scatter_dims_to_operand_dims, input_batching_dims,
                     scatter_indices_batching_dims, sizes, clamp=False)
    ok = None
    for d in range(rank):
        s = starts[d]
        if isinstance(s, np.ndarray):
            good = (s >= 0) & (s <= operand_shape[d] - sizes[d])
            ok = good if ok is None else ok & good
    all_ok = ok is None or bool(ok.all())
    if ok is not None:
        ok = np.broadcast_to(ok, bshape)
    nb, nw = len(bshape), len(window)
    strides = [int(np.prod(operand_shape[d + 1:], dtype=np.int64)) for d in range(rank)]
    base = None
    for d in range(rank):
        s = starts[d]
        if isinstance(s, np.ndarray):
            if not all_ok:
                s = np.where(ok, s, 0)
            term = s if strides[d] == 1 else s.astype(np.int64) * strides[d]
            base = term if base is None else base.astype(np.int64) + term
    base = np.zeros(bshape, dtype=np.int64) if base is None else np.broadcast_to(base, bshape)
    perm = [0] * urank
    for i, p in enumerate(scatter_upd):
        perm[p] = i
    for i, p in enumerate(sorted(update_window_dims)):
        perm[p] = nb + i
    if nw == 0 or all(w == 1 for w in wsizes):
        # one element per update window: the positions are the bases, in the updates' order
        pos = np.ascontiguousarray(np.transpose(base.reshape(bshape + (1,) * nw), perm)).reshape(-1)
        if all_ok:
            return pos, None
        valid = np.transpose(ok.reshape(bshape + (1,) * nw), perm).reshape(-1)
        upos = np.flatnonzero(valid)
        return pos[upos], upos
    woff = np.zeros(tuple(wsizes), dtype=np.int64)
    for i, d in enumerate(window):
        shp = [1] * nw
        shp[i] = wsizes[i]
        woff = woff + np.arange(wsizes[i], dtype=np.int64).reshape(shp) * strides[d]
    # positions over [batch..., window...], then to the updates' own dimension order
    pos = base.reshape(bshape + (1,) * nw) + woff.reshape((1,) * nb + woff.shape)
    pos = np.transpose(pos, perm).reshape(-1)
    if all_ok:
        return pos, None
    valid = np.broadcast_to(ok.reshape(bshape + (1,) * nw), bshape + tuple(wsizes))
    valid = np.transpose(valid, perm).reshape(-1)
    upos = np.flatnonzero(valid)
    return pos[upos], upos


def _sel(u, upos):
    flat = np.asarray(u).reshape(-1)
    return flat if upos is None else flat[upos]


def _replace_form(module, name: str, n: int) -> bool:
    """The computation returns its update parameters (N..2N-1), in order."""
    try:
        comp = module.computation(name)
    except KeyError:
        return False
    root = comp.root
    outs = list(root.operands) if (root.opcode == "tuple" and n > 1) else [root.name]
    if len(outs) != n:
        return False
    by = {i.name: i for i in comp.instructions}
    for k, o in enumerate(outs):
        i = by.get(o)
        if i is None or i.opcode != "parameter" or i.parameter_number != n + k:
            return False
    return True


def _ufunc_for(op: str, dtype):
    kind = dtype_kind(dtype)
    if kind == "pred":
        return PRED_UFUNCS[op]
    if kind == "float" and op in ("and", "or", "xor"):
        raise _DimError(f"{op} is not defined for floating-point numbers")
    if kind == "complex" and op in ("and", "or", "xor", "maximum", "minimum"):
        raise _DimError(f"{op} is not defined for complex numbers")
    if kind == "complex" and op == "multiply":
        return complex_multiply_scatter_ufunc  # XLA:CPU's fma-contracted complex product
    return UFUNCS[op]


def _fix_zero_signs(out, o, pos, uv, op):
    """XLA: maximum(-0, +0) = +0 and minimum(-0, +0) = -0 in either order (NumPy keeps the first)."""
    z = out == 0
    if not z.any():
        return out
    o32 = np.asarray(o).reshape(-1).astype(np.float32)
    u32 = uv.astype(np.float32)
    want_sign = op == "minimum"  # minimum: -0 wins; maximum: +0 wins
    has = (o32 == 0) & (np.signbit(o32) == want_sign)
    np.logical_or.at(has, pos, (u32 == 0) & (np.signbit(u32) == want_sign))
    sign = has if want_sign else ~has
    zero = np.where(sign, np.asarray(-0.0, np.float32), np.asarray(0.0, np.float32)).astype(out.dtype)
    return np.where(z, zero, out)


def _scatter_recognized(operands, updates, recog, pos, upos):
    """One ufunc.at per operand; None when a rounding form's values are not representable in its
    narrow type (the general path then)."""
    outs = []
    for o, u, (op, rd) in zip(operands, updates, recog):
        uf = _ufunc_for(op, o.dtype)
        kind = dtype_kind(o.dtype)
        uv = _sel(u, upos).astype(o.dtype, copy=False)
        out = np.array(o, copy=True).reshape(-1)
        with np.errstate(all="ignore"):
            if rd is not None and np.dtype(rd) != o.dtype:
                on, un = out.astype(rd), uv.astype(rd)
                if not (np.array_equal(on.astype(o.dtype), out, equal_nan=True)
                        and np.array_equal(un.astype(o.dtype), uv, equal_nan=True)):
                    return None
                uf.at(on, pos, un)
                if op in ("maximum", "minimum"):
                    on = _fix_zero_signs(on, out, pos, un, op)
                outs.append(on.astype(o.dtype))
                continue
            if kind in ("sint", "uint"):  # exact modular arithmetic in 64 bits
                w = np.uint64 if kind == "uint" else np.int64
                wide = out.astype(w)
                uf.at(wide, pos, uv.astype(w))
                out = wide.astype(o.dtype)
            else:
                uf.at(out, pos, uv)
                if op in ("maximum", "minimum") and kind == "float":
                    out = _fix_zero_signs(out, o, pos, uv, op)
        outs.append(out)
    return outs


def _occurrence_rounds(pos: np.ndarray):
    """Split update positions into rounds: round r holds the r-th update (in order) of each target."""
    if pos.size == 0:
        return []
    order = np.argsort(pos, kind="stable")
    sp = pos[order]
    start = np.r_[True, sp[1:] != sp[:-1]]
    grp_start = np.maximum.accumulate(np.where(start, np.arange(sp.size), 0))
    rank = np.empty(pos.size, dtype=np.int64)
    rank[order] = np.arange(sp.size) - grp_start
    if rank.max() == 0:
        return [np.arange(pos.size)]
    o2 = np.argsort(rank, kind="stable")
    counts = np.bincount(rank)
    return np.split(o2, np.cumsum(counts)[:-1])


def scatter_apply(operands, pos, upos, updates, fn: Callable, out_dtypes, vectorized: bool):
    """General path: out[pos] = fn(*out[pos], *updates[upos]) for each update, in order."""
    outs = [np.array(o, copy=True).reshape(-1) for o in operands]
    ups = [_sel(u, upos) for u in updates]
    n = len(outs)
    if not vectorized:
        for j in range(pos.size):
            p = pos[j]
            r = fn(*[o[p] for o in outs], *[u[j] for u in ups])
            r = r if isinstance(r, tuple) else (r,)
            for o, v in zip(outs, r):
                o[p] = v
        return outs
    for sel in _occurrence_rounds(pos):
        p = pos[sel]
        r = fn(*[o[p] for o in outs], *[u[sel] for u in ups])
        r = r if isinstance(r, tuple) else (r,)
        if len(r) != n:
            raise _DimError(f"the update computation returns {len(r)} values for {n} operands")
        for o, v, dt in zip(outs, r, out_dtypes):
            o[p] = np.broadcast_to(np.asarray(v).astype(dt, copy=False), p.shape)
    return outs


@kernel("scatter")
def _k_scatter(ins, ctx):
    a = ins.attrs
    nops = len(ins.operands)
    if nops < 3 or (nops - 1) % 2:
        raise error_at(ins, f"scatter needs N operands, the indices and N updates (has {nops} operands)")
    n = (nops - 1) // 2
    name = a["to_apply"]
    kw = {"update_window_dims": tuple(a.get("update_window_dims", ())),
          "inserted_window_dims": tuple(a.get("inserted_window_dims", ())),
          "scatter_dims_to_operand_dims": tuple(a.get("scatter_dims_to_operand_dims", ())),
          "input_batching_dims": tuple(a.get("input_batching_dims", ())),
          "scatter_indices_batching_dims": tuple(a.get("scatter_indices_batching_dims", ()))}
    ivd = a.get("index_vector_dim")
    recog = recognize_reducer(ctx.module, name, n)
    # XLA's float-normalized form (f32 op, rounded to bf16/f16/f8 after every step): the narrow type's
    # own ufunc.at when the values are representable in it, else the general path
    rounding = recog is not None and any(rd is not None for _, rd in recog)
    replace = recog is None and _replace_form(ctx.module, name, n)
    state = {"vectorized": is_elementwise_computation(ctx.module, name), "fn": None, "vc": None}
    if (recog is None and not replace) or rounding:
        try:  # the computation's kernels run on arrays (also scalar bitcasts of post-optimization forms)
            from .sort import VectorComputation
            state["vc"] = VectorComputation(ctx.computation(name, ins), ctx)
        except Exception:  # noqa: BLE001 - not evaluable on arrays: ctx.call
            state["vc"] = None

    def run(*args):
        operands, indices, updates = args[:n], args[n], args[n + 1:]
        try:
            shape = operands[0].shape
            for o in operands[1:]:
                if o.shape != shape:
                    raise _DimError("scatter operands have different shapes")
            for u in updates[1:]:
                if u.shape != updates[0].shape:
                    raise _DimError("scatter updates have different shapes")
            pos, upos = scatter_targets(shape, indices, updates[0].shape,
                                        index_vector_dim=np.ndim(indices) if ivd is None else int(ivd), **kw)
            dts = [o.dtype for o in operands]
            outs = _scatter_recognized(operands, updates, recog, pos, upos) if recog is not None else None
            if outs is None and replace:
                outs = []
                for o, u in zip(operands, updates):
                    out = np.array(o, copy=True).reshape(-1)
                    out[pos] = _sel(u, upos)  # NumPy: the last duplicate wins
                    outs.append(out)
            elif outs is None:
                if state["fn"] is None:
                    state["fn"] = ctx.call(name, ins)
                with np.errstate(all="ignore"):
                    if state["vc"] is not None:
                        try:
                            outs = scatter_apply(operands, pos, upos, updates, state["vc"], dts, True)
                        except _DimError:
                            raise
                        except Exception:  # noqa: BLE001
                            state["vc"] = None
                    if outs is None and state["vectorized"]:
                        try:
                            outs = scatter_apply(operands, pos, upos, updates, state["fn"], dts, True)
                        except _DimError:
                            raise
                        except Exception:  # noqa: BLE001 - the computation refused vectors
                            state["vectorized"] = False
                    if outs is None:
                        outs = scatter_apply(operands, pos, upos, updates, state["fn"], dts, False)
        except _DimError as e:
            raise error_at(ins, f"scatter: {e}") from None
        outs = tuple(np.asarray(o).reshape(shape).astype(dt, copy=False) for o, dt in zip(outs, dts))
        return outs if n > 1 else outs[0]
    return run
