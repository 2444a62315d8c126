"""Collectives: replica-id, partition-id, all-reduce, all-gather, reduce-scatter, all-to-all,
collective-permute, collective-broadcast, and their asynchronous forms.

Devices are simulated by hlo_interp/spmd.py: `ctx.device` (a Device, below) gives this device's replica
and partition and the communicator every participant of a group meets at.  On a plain single-device
run there is no device: ids are 0, and a collective whose group is only device 0 returns its own value.

Who takes part (XLA's CollectiveOpGroupMode, from channel_id and use_global_device_ids):
  * no channel_id (use_global_device_ids absent or false): cross-replica: replica_groups hold replica
    ids; the participants are those replicas, in this device's partition;
  * channel_id, use_global_device_ids absent: cross-partition: groups hold partition ids, in this
    device's replica (all-to-all, collective-permute and collective-broadcast always use one of these
    two, by channel_id);
  * channel_id, use_global_device_ids=false: cross-replica-and-partition: groups hold replica ids; the
    participants are every partition of those replicas (replica-major);
  * channel_id, use_global_device_ids=true: flattened ids: groups hold global device ids
    (replica * num_partitions + partition);
  * empty replica_groups: one group of all the ids of the mode.
The order of a group is the order of its participants (all-gather's concatenation, reduce-scatter's
and all-to-all's chunks).

Semantics:
  * all-reduce: every participant gets the reduction of all participants' values, folded in group order
    (see xla_cpu_fold for XLA:CPU's exact order and types); recognized reducers
    (reduce.py's recognizer: add, multiply, maximum, minimum, and, or, xor, the rounding forms of
    narrow floats) run as NumPy ufuncs with reduce's semantics (integers wrap, NaN propagates,
    max(-0, +0) = +0); any other reducer computation is called on whole arrays (element by element if
    it refuses arrays).  Several operands: each reduced on its own, a tuple result;
  * all-gather: concatenation along `dimensions` in group order;
  * reduce-scatter: the all-reduce, split along `dimensions` into group-size blocks; participant k
    gets block k;
  * all-to-all: array form (`dimensions={d}`): each operand is split along d into group-size blocks,
    block j goes to participant j, and the received blocks are concatenated along d in group order;
    tuple form (no dimensions, one operand per participant): operand j goes to participant j, result
    element i is what participant i sent;
  * collective-permute: source_target_pairs of replica ids (no channel) or partition ids (channel); a
    device that is no pair's target gets zeros;
  * collective-broadcast: every participant gets the first participant's value;
  * all-reduce-start (the result shape) / all-reduce-done (identity); all-gather-start ((operands),
    (results)) / -done (element 1); collective-permute-start (operand, result, contexts...) / -done
    (element 1); the async sugar `reduce-scatter-start`, `all-to-all-start`,
    `collective-broadcast-start` with -update / -done.
  * ragged-all-to-all: see its kernel (XLA's and JAX's documented semantics; XLA:CPU does not run it);
  * replica groups in all three forms: explicit, iota (`[2,4]<=[8]T(1,0)`), and the mesh-axes form
    (`mesh['a'=2,'b'=4] {'b'}`, sub-axes `'b':(2)2`, `device_ids=([2,2,2]T(0,2,1)) {...}`).
  * collective-permute's in-place form (input, output, input offsets, output offsets, slice_sizes):
    see _permute_in_place.
  * collective-reduce: the all-reduce of the group, written to its first participant only (the
    others get zeros: XLA leaves them unwritten); see _k_collective_reduce.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import ml_dtypes
import numpy as np

from .. import ir
from ..opcodes import opcodes_where
from ..types import dtype_kind
from .async_ops import add_async_sugar, zero_value
from .reducers import PRED_UFUNCS, UFUNCS, recognize_reducer
from .registry import error_at, kernel, unsupported
from ..syntax.printer import shape_text

# --------------------------------------------------------------------------------------------------
# Devices and groups

@dataclass
class Device:
    """One simulated device: its ids, the device counts, and the shared communicator."""
    replica: int
    partition: int
    num_replicas: int
    num_partitions: int
    communicator: Any = None  # an spmd.Communicator (None: a single-device run)
    _counts: dict = field(default_factory=dict)

    @property
    def id(self) -> int:
        return self.replica * self.num_partitions + self.partition

    @property
    def num_devices(self) -> int:
        return self.num_replicas * self.num_partitions

    def next_key(self, key: Any) -> tuple:
        """(key, k): the k-th execution of collective `key` on this device."""
        k = self._counts.get(key, 0)
        self._counts[key] = k + 1
        return (key, k)

    def exchange(self, key: Any, participants: tuple, value: Any, what: str = "") -> list:
        """Meet the other participants at collective `key` (the same on every device: e.g. the
        instruction); `what` names it in errors."""
        if len(participants) == 1:
            return [value]
        if self.communicator is None:
            raise TimeoutError(f"this collective needs devices {list(participants)}; a single-device "
                               f"run has only device 0 (run every device: run_spmd / hlo-run --replicas "
                               f"N --partitions M)")
        return self.communicator.exchange(self.next_key(key), participants, self.id, value, what)


SINGLE = Device(0, 0, 1, 1, None)


def _device(ctx):
    dev = getattr(ctx, "device", None)
    return SINGLE if dev is None else dev


CROSS_REPLICA, CROSS_PARTITION, CROSS_REPLICA_AND_PARTITION, FLATTENED_ID = (
    "cross-replica", "cross-partition", "cross-replica-and-partition", "flattened-id")


def group_mode(ins, has_global_flag: bool = True) -> str:
    """XLA's CollectiveOpGroupMode of a collective instruction."""
    has_channel = ins.attrs.get("channel_id") is not None
    ugdi = ins.attrs.get("use_global_device_ids") if has_global_flag else None
    if not has_channel:
        if ugdi:
            raise error_at(ins, f"'{ins.opcode}': use_global_device_ids=true needs a channel_id")
        return CROSS_REPLICA
    if ugdi is None:
        return CROSS_PARTITION
    return CROSS_REPLICA_AND_PARTITION if not ugdi else FLATTENED_ID


def _groups(ins):
    rg = ins.attrs.get("replica_groups")
    if rg is None:
        return ()
    if isinstance(rg, ir.ReplicaGroups):
        if rg.groups is None and rg.iota is None:
            if rg.mesh is None:
                return ()
            return mesh_groups(ins, rg.mesh, ins.attrs.get("device_ids"))
        try:
            groups = rg.expand()
        except Exception as e:  # noqa: BLE001
            raise error_at(ins, f"'{ins.opcode}': cannot expand replica_groups: {e}") from None
    else:
        groups = tuple(tuple(int(x) for x in g) for g in rg)
    return tuple(tuple(int(x) for x in g) for g in groups if len(g))


# collectives whose replica groups (or source_target_pairs) name the devices a module needs
_GROUPED = opcodes_where(lambda o: o.names_devices)


def implied_device_counts(module) -> "tuple | None":
    """(replicas, partitions, instruction, why) that the collectives of a module whose header gives no
    replica_count/num_partitions need, or None when one device is what they name.  The count is the
    largest id their replica groups or source_target_pairs name, plus one, or the group size an
    all-gather/reduce-scatter over all devices (replica_groups={}) declares by its shapes
    (`f32[128,128] all-gather(f32[128,32]), dimensions={1}`: 4 devices).  Groups that name partitions
    (a channel_id without use_global_device_ids, or a collective-permute with a channel_id) give
    partitions; replica and flattened device ids give replicas."""
    attrs = getattr(module, "attrs", None) or {}
    if "replica_count" in attrs or "num_partitions" in attrs:
        return None
    best = None
    for comp in module.computations:
        shapes = {i.name: i.shape for i in comp.instructions}
        for ins in comp.instructions:
            op = ins.opcode
            base = op[:-len("-start")] if op.endswith("-start") else op
            if base not in _GROUPED:
                continue
            try:
                mode = group_mode(ins, has_global_flag=base not in ("collective-permute", "collective-broadcast"))
                what = {CROSS_PARTITION: "partition", FLATTENED_ID: "device"}.get(mode, "replica")
                n, why = 0, ""
                if base == "collective-permute":
                    ids = [int(x) for pair in (ins.attrs.get("source_target_pairs") or ()) for x in pair]
                    if ids:
                        n, why = max(ids) + 1, f"its source_target_pairs name {what} {max(ids)}"
                else:
                    ids = [x for g in _groups(ins) for x in g]
                    if ids:
                        n, why = max(ids) + 1, f"its replica_groups name {what} {max(ids)}"
                    elif base in ("all-gather", "reduce-scatter") and ins.operands:
                        src, dst = shapes.get(ins.operands[0]), ins.shape
                        if op != base and isinstance(dst, ir.TupleShape) and len(dst.elements) >= 2:
                            dst = dst.elements[1]  # all-gather-start: (operand(s), result(s))
                        if isinstance(dst, ir.TupleShape) and dst.elements:
                            dst = dst.elements[0]  # several operands: the first one's result
                        d = ins.attrs.get("dimensions")
                        d = d[0] if isinstance(d, (list, tuple)) and len(d) == 1 else None
                        if isinstance(src, ir.ArrayShape) and isinstance(dst, ir.ArrayShape) and d is not None \
                                and 0 <= d < min(src.rank, dst.rank):
                            a, b = (dst.dims[d], src.dims[d]) if base == "all-gather" else (src.dims[d], dst.dims[d])
                            if b > 0 and a % b == 0 and a // b > 1:
                                n = a // b
                                why = (f"it makes {shape_text(dst)} of {shape_text(src)} along dimension {d} "
                                       f"over all {what}s (replica_groups={{}})")
            except Exception:  # noqa: BLE001 - a malformed collective is reported when it runs
                continue
            if n > 1 and (best is None or n > best[0]):
                best = (n, mode == CROSS_PARTITION, ins, f"{op} {ins.name}: {why}")
    if best is None:
        return None
    n, partitions, ins, why = best
    return (1, n, ins, why) if partitions else (n, 1, ins, why)


def device_count_hint(module) -> str:
    """` (run it with --replicas N ...)`: what to give a single-device run of a module whose collectives
    need more devices than its header says, or ''."""
    got = implied_device_counts(module)
    if got is None:
        return ""
    r, p, _, why = got
    flag, kw = (f"--partitions {p}", f"partitions={p}") if p > 1 else (f"--replicas {r}", f"replicas={r}")
    return (f"; the module's header gives no replica_count/num_partitions, but {why}: it runs on {r * p} "
            f"devices: hlo-run {flag} (hlo_interp.run_spmd(module, per_device_inputs, {kw}))")


def _gname(x) -> str:
    text = getattr(x, "text", None)
    if text is not None:
        return text
    return str(x).strip("'\"")


def mesh_groups(ins, mesh, device_ids=None) -> tuple:
    """The groups of `replica_groups=mesh['a'=2,'b'=4] {'b'}` (XLA's mesh-axes form): device ids laid
    out row-major over the mesh's axes; a group is the devices that differ only along the listed axes
    (in the listed order, major first), one group per position along the others.  A sub-axis
    `'b':(k)m` is the factor of size m of axis b after its first (major) factor k.  With
    `device_ids=([2,2,2]T(0,2,1)) {axes}` (or an explicit id list) the mesh positions hold those ids
    and the axes come from there."""
    try:
        order = None
        axes_list = mesh.axes
        if device_ids is not None:
            items = device_ids.items
            if len(items) == 1 and isinstance(items[0], ir.GParenIota):
                it = items[0]
                order = np.arange(int(np.prod(it.dims))).reshape(it.dims)
                if it.transpose is not None:
                    order = order.transpose(it.transpose)
                order = order.ravel()
            else:
                order = np.array([int(x) for x in items])
            if device_ids.axes is not None:
                axes_list = device_ids.axes
        axes = []
        for item in mesh.brackets.items:
            axes.append((_gname(item.key), int(item.value)))
        names = [a for a, _ in axes]
        sizes = dict(axes)
        listed = []  # (axis, lo, hi): the factor range [lo, hi) of cumulative sizes, from the major end
        for item in (axes_list.items if axes_list is not None else ()):
            if isinstance(item, ir.GSubAxis):
                name = _gname(item.name)
                pre = int(item.pre.items[0])
                listed.append((name, pre, pre * int(item.size)))
            else:
                name = _gname(item)
                listed.append((name, 1, sizes[name]))
        for name, lo, hi in listed:
            if name not in sizes or sizes[name] % hi or hi % lo:
                raise ValueError(f"axis {name!r}")
        # split every axis at the boundaries its sub-axes need
        factors = []  # (axis, lo, hi) in mesh order, major to minor
        for name in names:
            cuts = sorted({1, sizes[name]} | {b for a, lo, hi in listed if a == name for b in (lo, hi)})
            factors += [(name, cuts[k], cuts[k + 1]) for k in range(len(cuts) - 1)]
        gdims = []
        for name, lo, hi in listed:
            gdims += [k for k, (a, f_lo, f_hi) in enumerate(factors) if a == name and lo <= f_lo and f_hi <= hi]
        other = [k for k in range(len(factors)) if k not in gdims]
        n = 1
        for _, s in axes:
            n *= s
        ids = np.arange(n).reshape([hi // lo for _, lo, hi in factors] or [1])
        g = 1
        for k in gdims:
            g *= factors[k][2] // factors[k][1]
        ids = ids.transpose(other + gdims).reshape(-1, g)
        if order is not None:
            if order.size != n:
                raise ValueError(f"{order.size} device ids for a mesh of {n}")
            ids = order[ids]
    except (ValueError, KeyError, AttributeError, IndexError, TypeError) as e:
        raise unsupported(ins, f"replica groups in this mesh form ({e})") from None
    return tuple(tuple(int(x) for x in row) for row in ids)


def participants(ins, dev, mode: str) -> tuple:
    """The global device ids of this device's group, in group order."""
    nr, npart = dev.num_replicas, dev.num_partitions
    if mode in (CROSS_REPLICA, CROSS_REPLICA_AND_PARTITION):
        my, n, what = dev.replica, nr, "replica"
    elif mode == CROSS_PARTITION:
        my, n, what = dev.partition, npart, "partition"
    else:
        my, n, what = dev.id, nr * npart, "device"
    groups = _groups(ins) or (tuple(range(n)),)
    mine = None
    seen = set()
    for g in groups:
        for x in g:
            if not 0 <= x < n:
                hint = ""
                if dev.communicator is None:
                    ids = max(y for gg in groups for y in gg) + 1
                    flag = {"partition": f"--partitions {ids}", "replica": f"--replicas {ids}"}.get(
                        what, f"--replicas R --partitions P with R x P = {ids} (by default hlo-run takes the "
                              f"header's replica_count and num_partitions)")
                    hint = (f": this is a single-device run; the groups name {ids} {what}s: simulate them with "
                            f"hlo-run {flag} (or hlo_interp.run_spmd)")
                raise error_at(ins, f"'{ins.opcode}': replica_groups name {what} {x}, but there are {n} "
                                    f"{what}s ({nr} replica(s) x {npart} partition(s), {mode}){hint}")
            if x in seen:
                raise error_at(ins, f"'{ins.opcode}': {what} {x} is in more than one replica group")
            seen.add(x)
        if my in g:
            mine = g
    if mine is None:
        raise error_at(ins, f"'{ins.opcode}': {what} {my} is in no replica group ({mode})")
    if mode == CROSS_REPLICA:
        return tuple(r * npart + dev.partition for r in mine)
    if mode == CROSS_PARTITION:
        return tuple(dev.replica * npart + p for p in mine)
    if mode == CROSS_REPLICA_AND_PARTITION:
        return tuple(r * npart + p for r in mine for p in range(npart))
    return tuple(mine)


def _exchange(ins, dev, parts, value):
    try:  # keyed by the instruction's name and place in the text: the same on every device
        loc = getattr(ins, "loc", None)
        what = f"'{ins.name}'" + (f" (line {loc.line})" if loc is not None else "")
        return dev.exchange((ins.name, loc.offset if loc is not None else None), parts, value, what)
    except TimeoutError as e:
        raise error_at(ins, f"'{ins.opcode}': {e}") from None


def _leaves_shapes(shape):
    return list(shape.elements) if isinstance(shape, ir.TupleShape) else [shape]


# --------------------------------------------------------------------------------------------------
# ids

@kernel("replica-id")
def _k_replica_id(ins, ctx):
    v = np.array(_device(ctx).replica, np.uint32)
    v.flags.writeable = False
    return lambda: v


@kernel("partition-id")
def _k_partition_id(ins, ctx):
    v = np.array(_device(ctx).partition, np.uint32)
    v.flags.writeable = False
    return lambda: v


# --------------------------------------------------------------------------------------------------
# Reductions across devices

def make_combiner(ins, ctx):
    """f(list of arrays in group order) -> their reduction by to_apply, folded in group order."""
    name = ins.attrs.get("to_apply")
    if not isinstance(name, str):
        raise error_at(ins, f"'{ins.opcode}' needs to_apply=<computation>")
    recog = recognize_reducer(ctx.module, name, 1)
    fn = ctx.call(name, ins)
    if ctx.num_parameters(name, ins) != 2:
        raise error_at(ins, f"'{ins.opcode}': the reducer '{name}' must take two parameters")
    op, rd = recog[0] if recog else (None, None)
    state = {"vector": True}

    def general(vals):
        acc = vals[0]
        for v in vals[1:]:
            if state["vector"]:
                try:
                    r = np.asarray(fn(acc, v))
                    if r.shape == acc.shape:
                        acc = r.astype(acc.dtype, copy=False)
                        continue
                except Exception:  # noqa: BLE001, S110 - the computation refused arrays
                    pass
                state["vector"] = False
            out = np.empty(acc.shape, acc.dtype)
            for idx in np.ndindex(acc.shape):
                out[idx] = fn(acc[idx], v[idx])
            acc = out
        return acc

    def combine(vals):
        if len(vals) == 1:
            return vals[0]
        x = np.asarray(vals[0])
        if op is not None and (rd is None or np.dtype(rd) == x.dtype):
            try:
                return xla_cpu_fold([np.asarray(v) for v in vals], op)
            except (TypeError, ValueError):  # a type NumPy cannot do this in: the computation decides
                pass
        return general(vals)
    return combine


def _extreme(dtype, high: bool):
    dtype = np.dtype(dtype)
    kind = dtype_kind(dtype)
    if kind == "float":
        fi = ml_dtypes.finfo(dtype)
        with np.errstate(all="ignore"):
            inf = np.asarray(np.inf if high else -np.inf).astype(dtype)
        if np.isinf(inf.astype(np.float32)):
            return inf
        return np.asarray(fi.max if high else fi.min).astype(dtype)
    ii = ml_dtypes.iinfo(dtype) if kind in ("sint", "uint") else None
    return np.asarray(ii.max if high else ii.min).astype(dtype)


def xla_cpu_fold(vals, op):
    """XLA:CPU's in-process all-reduce / reduce-scatter: acc = the kind's initial value (+0 for add, 1
    for multiply, -inf/+inf or the type's lowest/highest for max/min); then acc = op(acc, v) for each
    participant in group order, in the element type's own arithmetic (bf16 in f32 and f8 types in f16,
    rounded once at the end, as XLA:CPU's compiler rewrites them).  max is `acc < v ? v : acc` and
    min `v < acc ? v : acc` (std::max/min): a NaN is skipped, the first zero of either sign is kept.
    and/or/xor (which XLA:CPU refuses) fold from the first value."""
    dtype = vals[0].dtype
    kind = dtype_kind(dtype)
    if kind == "pred":
        uf = PRED_UFUNCS[op]
        acc = vals[0]
        for v in vals[1:]:
            acc = uf(acc, v)
        return np.asarray(acc)
    if op in ("and", "or", "xor"):
        if kind not in ("sint", "uint"):
            raise ValueError(f"{op} is not defined for {dtype}")
        w = np.uint64 if kind == "uint" else np.int64
        acc = vals[0].astype(w)
        for v in vals[1:]:
            acc = UFUNCS[op](acc, v.astype(w))
        return acc.astype(dtype)
    if op in ("maximum", "minimum"):
        if kind == "complex":
            raise ValueError(f"{op} is not defined for complex numbers")
        acc = np.broadcast_to(_extreme(dtype, op == "minimum"), vals[0].shape)
        for v in vals:
            take = (acc < v) if op == "maximum" else (v < acc)
            acc = np.where(take, v, acc)
        return np.asarray(acc, dtype)
    if kind in ("sint", "uint"):  # wrap: exact in 64 bits, converted back
        w = np.uint64 if kind == "uint" else np.int64
        acc = np.full(vals[0].shape, 0 if op == "add" else 1, w)
        for v in vals:
            acc = UFUNCS[op](acc, v.astype(w))
        return acc.astype(dtype)
    # XLA:CPU's pipeline: AllReducePromotion computes a bf16 all-reduce in f32, and float normalization
    # an f8 one in f16; each rounds to the type once, at the end.  Other types: their own arithmetic.
    wide = dtype
    if dtype == _BF16:
        wide = np.dtype(np.float32)
    elif kind == "float" and dtype.itemsize == 1:
        wide = np.dtype(np.float16)
    acc = np.full(vals[0].shape, 0 if op == "add" else 1, wide)
    for v in vals:
        acc = UFUNCS[op](acc, v.astype(wide))
    return np.asarray(acc).astype(dtype, copy=False)


_BF16 = np.dtype(ml_dtypes.bfloat16)


@kernel("all-reduce", "all-reduce-start")
def _k_all_reduce(ins, ctx):
    dev = _device(ctx)
    mode = group_mode(ins)
    parts = participants(ins, dev, mode)
    combine = make_combiner(ins, ctx)
    tuple_out = isinstance(ins.shape, ir.TupleShape)

    def run(*xs):
        vals = _exchange(ins, dev, parts, xs)
        outs = tuple(combine([v[k] for v in vals]) for k in range(len(xs)))
        return outs if tuple_out else outs[0]
    return run


@kernel("all-reduce-done")
def _k_all_reduce_done(ins, ctx):
    return lambda x: x


def _one_dim(ins, what="dimensions"):
    dims = ins.attrs.get("dimensions")
    if dims is None or len(dims) != 1:
        raise error_at(ins, f"'{ins.opcode}' needs {what}={{d}} (one dimension)")
    return int(dims[0])


def _check_dim(ins, x, d):
    if not 0 <= d < np.ndim(x):
        raise error_at(ins, f"'{ins.opcode}': dimension {d} is out of range for rank {np.ndim(x)}")


def _group_size_error(ins, ctx, dev, parts, d, src, declared):
    """The error for an all-gather/reduce-scatter whose declared shape needs another group size than
    the run gives it (`f32[2048] all-gather(f32[128])` over one device): on a single-device run XLA:CPU
    leaves the rest of the result undefined; here, the device count that fits."""
    a, b = (declared, src) if ins.opcode.startswith("all-gather") else (src, declared)
    need = a // b if b and a % b == 0 else None
    msg = (f"'{ins.opcode}': its group has {len(parts)} device(s), but dimension {d} goes from {src} to "
           f"{declared}" + (f", which takes {need}" if need else ""))
    if dev.communicator is None and dev.num_devices == 1 and need:
        attrs = getattr(getattr(ctx, "module", None), "attrs", None) or {}
        header = [f"{k}={attrs[k]}" for k in ("replica_count", "num_partitions") if k in attrs]
        mode = group_mode(ins)
        flag = {CROSS_REPLICA: f"--replicas {need}", CROSS_PARTITION: f"--partitions {need}"}.get(
            mode, f"--replicas R --partitions P with R x P = {need}")
        msg += (": this is a single-device run" + (f" (the header gives {', '.join(header)})" if header else "")
                + f"; the shapes need {need} devices in the group: simulate them with hlo-run {flag} "
                  f"(or hlo_interp.run_spmd)")
    return error_at(ins, msg)


def _all_gather(ins, ctx, declared=None):
    """`declared`: the result leaves' shapes (checked along the gathered dimension)."""
    dev = _device(ctx)
    parts = participants(ins, dev, group_mode(ins))
    d = _one_dim(ins)

    def compute(*xs):
        for x in xs:
            _check_dim(ins, x, d)
        vals = _exchange(ins, dev, parts, xs)
        outs = tuple(np.concatenate([v[k] for v in vals], axis=d) for k in range(len(xs)))
        if declared is not None and len(declared) == len(outs):
            for x, o, s in zip(xs, outs, declared):
                if isinstance(s, ir.ArrayShape) and s.rank == o.ndim and s.dims[d] != o.shape[d] \
                        and not s.dynamic[d]:
                    raise _group_size_error(ins, ctx, dev, parts, d, x.shape[d], s.dims[d])
        return outs
    return compute


@kernel("all-gather")
def _k_all_gather(ins, ctx):
    compute = _all_gather(ins, ctx, _leaves_shapes(ins.shape) if ins.shape is not None else None)
    tuple_out = isinstance(ins.shape, ir.TupleShape)

    def run(*xs):
        outs = compute(*xs)
        return outs if tuple_out else outs[0]
    return run


@kernel("all-gather-start")
def _k_all_gather_start(ins, ctx):
    s = ins.shape
    if not isinstance(s, ir.TupleShape) or len(s.elements) < 2:
        raise error_at(ins, "all-gather-start must have the shape (operand(s), result(s))")
    compute = _all_gather(ins, ctx, _leaves_shapes(s.elements[1]))
    packed = isinstance(s.elements[1], ir.TupleShape)
    ctx_vals = tuple(zero_value(c) for c in s.elements[2:])

    def run(*xs):
        outs = compute(*xs)
        if packed:
            return (tuple(xs), outs) + ctx_vals
        return (xs[0], outs[0]) + ctx_vals
    return run


@kernel("all-gather-done", "collective-permute-done")
def _k_bundle_done(ins, ctx):
    def run(v):
        if not isinstance(v, tuple) or len(v) < 2:
            raise error_at(ins, f"'{ins.opcode}': the operand is not the value of its -start")
        return v[1]
    return run


@kernel("reduce-scatter")
def _k_reduce_scatter(ins, ctx):
    dev = _device(ctx)
    parts = participants(ins, dev, group_mode(ins))
    d = _one_dim(ins)
    combine = make_combiner(ins, ctx)
    tuple_out = isinstance(ins.shape, ir.TupleShape)
    g = len(parts)
    pos = parts.index(dev.id)
    declared = _leaves_shapes(ins.shape) if ins.shape is not None else []

    def run(*xs):
        for x, s in zip(xs, declared if len(declared) == len(xs) else [None] * len(xs)):
            _check_dim(ins, x, d)
            if isinstance(s, ir.ArrayShape) and s.rank == x.ndim and not s.dynamic[d] \
                    and s.dims[d] * g != x.shape[d]:
                raise _group_size_error(ins, ctx, dev, parts, d, x.shape[d], s.dims[d])
            if x.shape[d] % g:
                raise error_at(ins, f"reduce-scatter: dimension {d} of size {x.shape[d]} does not split "
                                    f"into {g} equal blocks")
        vals = _exchange(ins, dev, parts, xs)
        outs = []
        for k, x in enumerate(xs):
            r = combine([v[k] for v in vals])
            b = x.shape[d] // g
            sl = [slice(None)] * x.ndim
            sl[d] = slice(pos * b, (pos + 1) * b)
            outs.append(np.ascontiguousarray(r[tuple(sl)]))
        return tuple(outs) if tuple_out else outs[0]
    return run


@kernel("all-to-all")
def _k_all_to_all(ins, ctx):
    dev = _device(ctx)
    parts = participants(ins, dev, group_mode(ins, has_global_flag=False))
    g = len(parts)
    pos = parts.index(dev.id)
    dims = ins.attrs.get("dimensions")
    tuple_out = isinstance(ins.shape, ir.TupleShape)
    if dims:
        d = _one_dim(ins)

        def run(*xs):
            for x in xs:
                _check_dim(ins, x, d)
                if x.shape[d] % g:
                    raise error_at(ins, f"all-to-all: dimension {d} of size {x.shape[d]} does not split "
                                        f"into {g} equal blocks")
            blocks = tuple(np.split(x, g, axis=d) for x in xs)
            vals = _exchange(ins, dev, parts, blocks)
            outs = tuple(np.concatenate([v[k][pos] for v in vals], axis=d) for k in range(len(xs)))
            return outs if tuple_out else outs[0]
        return run
    if len(ins.operands) != g:
        raise error_at(ins, f"all-to-all without dimensions (the tuple form) needs one operand per "
                            f"participant: {g} participants, {len(ins.operands)} operand(s)")

    def run_tuple(*xs):
        vals = _exchange(ins, dev, parts, xs)
        outs = tuple(v[pos] for v in vals)
        return outs if tuple_out else outs[0]
    return run_tuple


def _permute_setup(ins, ctx, max_seen: int = 1):
    """(device, mode, this device's id in the mode, the mode's participants, pairs): pairs checked as
    XLA's verifier does (hlo_verifier.cc, CheckDuplicatedSourceOrTarget): ids in range, each id a
    source (and a target) at most `max_seen` times (1, or the in-place form's number of slices)."""
    dev = _device(ctx)
    mode = CROSS_PARTITION if ins.attrs.get("channel_id") is not None else CROSS_REPLICA
    n = dev.num_partitions if mode == CROSS_PARTITION else dev.num_replicas
    my = dev.partition if mode == CROSS_PARTITION else dev.replica
    pairs = []
    seen_s: dict = {}
    seen_t: dict = {}
    for p in ins.attrs.get("source_target_pairs") or ():
        if len(p) != 2:
            raise error_at(ins, f"collective-permute: source_target_pairs must be pairs, got {list(p)}")
        s, t = int(p[0]), int(p[1])
        for x in (s, t):
            if not 0 <= x < n:
                raise error_at(ins, f"collective-permute: id {x} is out of range: there are {n} "
                                    f"{'partitions' if mode == CROSS_PARTITION else 'replicas'}")
        for what, x, seen in (("source", s, seen_s), ("target", t, seen_t)):
            seen[x] = seen.get(x, 0) + 1
            if seen[x] > max_seen:
                times = "more than once" if max_seen == 1 else f"more than {max_seen} times"
                raise error_at(ins, f"collective-permute: {what} {x} appears {times} in source_target_pairs")
        pairs.append((s, t))
    if mode == CROSS_PARTITION:
        parts = tuple(dev.replica * dev.num_partitions + p for p in range(n))
    else:
        parts = tuple(r * dev.num_partitions + dev.partition for r in range(n))
    return dev, my, parts, pairs


def _permute(ins, ctx, result_shapes):
    if is_in_place_permute(ins, ctx):
        return _permute_in_place(ins, ctx)
    dev, my, parts, pairs = _permute_setup(ins, ctx)
    src = next((s for s, t in pairs if t == my), None)
    ends = {x for p in pairs for x in p}
    zeros = [zero_value(s) for s in result_shapes]
    # only the devices that take part in some pair need to meet
    involved = tuple(p for k, p in enumerate(parts) if k in ends)

    def compute(*xs):
        if dev.id not in involved:
            return tuple(z.copy() for z in zeros)
        vals = _exchange(ins, dev, involved, xs)
        if src is None:
            return tuple(z.copy() for z in zeros)
        return tuple(vals[involved.index(parts[src])])
    return compute


def is_in_place_permute(ins, ctx=None) -> bool:
    """XLA's in-place form: collective-permute(input, output, input_offsets, output_offsets),
    slice_sizes={...} (HloCollectivePermuteInstruction's 4-operand constructor, hlo_instructions.cc)."""
    return ins.attrs.get("slice_sizes") is not None or len(ins.operands) == 4 and \
        isinstance(_operand_shape(ins, 2, ctx), ir.TupleShape)


def _operand_shape(ins, k, ctx=None):
    if ctx is None:
        return None
    shapes = ctx.operand_shapes(ins)
    return shapes[k] if k < len(shapes) else None


def _offset_sets(ins, off, nbuf, tuple_bufs, what):
    """The offsets operand as [buffer][slice] -> tuple of ints; and the number of slices K.
    Forms (hlo_verifier.cc, CheckBufferOffset): per buffer, a tuple of rank scalars (one slice) or a
    tuple of such tuples (K slices); for tuple buffers, a tuple of those, one per buffer."""
    per_buf = list(off) if tuple_bufs else [off]
    if not isinstance(off, tuple) or len(per_buf) != nbuf:
        raise error_at(ins, f"collective-permute: the {what} offsets must be a tuple with one entry per buffer")
    out = []
    for b in per_buf:
        if not isinstance(b, tuple):
            raise error_at(ins, f"collective-permute: the {what} offsets of a buffer must be a tuple")
        if b and all(isinstance(e, tuple) for e in b):
            out.append([tuple(int(np.asarray(v)) for v in e) for e in b])
        elif all(not isinstance(e, tuple) for e in b):
            out.append([tuple(int(np.asarray(v)) for v in b)])
        else:
            raise error_at(ins, f"collective-permute: the {what} offsets must be a tuple of scalars or a tuple "
                                f"of tuples, not a mix")
    return out


def _in_place_slices(ins, ctx):
    """K, the number of slices (1, or the length of the offsets' tuple of tuples), from the operand shape."""
    s = _operand_shape(ins, 2, ctx)
    if s is None:
        return 1
    if isinstance(_operand_shape(ins, 0, ctx), ir.TupleShape) and isinstance(s, ir.TupleShape) and s.elements:
        s = s.elements[0]
    if isinstance(s, ir.TupleShape) and s.elements and isinstance(s.elements[0], ir.TupleShape):
        return len(s.elements)
    return 1


def _permute_in_place(ins, ctx):
    """collective-permute(input, output, input_offsets, output_offsets), slice_sizes={...}: every target
    gets its own `output` buffer (a copy) in which, for each pair (s, t), the slice of s's `input` at
    s's input offsets, of the slice size, is written at the output offsets.

    From XLA's sources (no XLA backend in this jaxlib runs this form; XLA:CPU's StableHLO round trip
    refuses it): operand order and slice_sizes from HloCollectivePermuteInstruction's in-place
    constructor (hlo_instructions.cc); the offset forms and the rule that an id may be a source (and a
    target) as many times as there are slices from hlo_verifier.cc (CheckInplaceCollectivePermute,
    CheckBufferOffset, CheckDuplicatedSourceOrTarget); tuple buffers take slice_sizes buffer-major
    (entry b*K + k), as XLA's parser tests write them.  With K slices the pairs fall into K consecutive
    equal groups, group k moving slice k (the only reading under which XLA's multi-slice test modules
    write each output region once).  Offsets are the values on each device: the sender's input
    offsets; the output offsets must agree between sender and receiver (whose apply is not pinned down
    by XLA's sources: a disagreement is refused).  A slice outside its buffer is an error (XLA's
    sources do not say whether it clamps)."""
    if len(ins.operands) != 4:
        raise error_at(ins, f"the in-place collective-permute takes 4 operands (input, output, input offsets, "
                            f"output offsets), got {len(ins.operands)}")
    K = _in_place_slices(ins, ctx)
    dev, my, parts, pairs = _permute_setup(ins, ctx, max_seen=K)
    if len(pairs) % K:
        raise error_at(ins, f"collective-permute: {len(pairs)} source_target_pairs do not fall into {K} equal "
                            f"groups (one per slice)")
    per = len(pairs) // K if K else 0
    sizes_attr = [tuple(int(v) for v in s) for s in (ins.attrs.get("slice_sizes") or ())]
    tuple_bufs = isinstance(_operand_shape(ins, 0, ctx), ir.TupleShape)
    incoming = [(k // per if per else 0, s) for k, (s, t) in enumerate(pairs) if t == my]
    ends = {x for p in pairs for x in p}
    involved = tuple(p for k, p in enumerate(parts) if k in ends)

    def compute(inp, out, in_off, out_off):
        bufs_in = list(inp) if tuple_bufs else [inp]
        bufs_out = list(out) if tuple_bufs else [out]
        nbuf = len(bufs_out)
        if len(bufs_in) != nbuf:
            raise error_at(ins, f"collective-permute: {len(bufs_in)} input buffer(s) but {nbuf} output buffer(s)")
        ioff = _offset_sets(ins, in_off, nbuf, tuple_bufs, "input")
        ooff = _offset_sets(ins, out_off, nbuf, tuple_bufs, "output")
        if len(sizes_attr) != nbuf * K:
            raise error_at(ins, f"collective-permute: slice_sizes has {len(sizes_attr)} entries; {nbuf} buffer(s) "
                                f"x {K} slice(s) need {nbuf * K}")
        for b in range(nbuf):
            for offs, what in ((ioff[b], "input"), (ooff[b], "output")):
                if len(offs) != K:
                    raise error_at(ins, f"collective-permute: buffer {b} has {len(offs)} {what} offset set(s), "
                                        f"expected {K}")
        results = [np.array(o, copy=True) for o in bufs_out]
        if dev.id not in involved:
            return results
        vals = _exchange(ins, dev, involved, (bufs_in, ioff, ooff))
        for k, s in incoming:
            s_in, s_ioff, s_ooff = vals[involved.index(parts[s])]
            for b in range(nbuf):
                size = sizes_attr[b * K + k]
                src, dst = s_in[b], results[b]
                lo_in, lo_out = s_ioff[b][k], ooff[b][k]
                if s_ooff[b][k] != lo_out:
                    raise unsupported(ins, f"output offsets that differ between sender {s} {list(s_ooff[b][k])} "
                                           f"and receiver {my} {list(lo_out)} (XLA's sources do not say whose apply)")
                for arr, lo, what in ((src, lo_in, "input"), (dst, lo_out, "output")):
                    if len(lo) != arr.ndim or len(size) != arr.ndim or any(
                            o < 0 or z < 0 or o + z > n for o, z, n in zip(lo, size, arr.shape)):
                        raise error_at(ins, f"collective-permute: the slice of size {list(size)} at {what} offsets "
                                            f"{list(lo)} does not fit the {what} buffer {list(arr.shape)}")
                piece = src[tuple(slice(o, o + z) for o, z in zip(lo_in, size))]
                dst[tuple(slice(o, o + z) for o, z in zip(lo_out, size))] = piece.astype(dst.dtype, copy=False)
        return results
    return compute


@kernel("collective-permute")
def _k_collective_permute(ins, ctx):
    tuple_out = isinstance(ins.shape, ir.TupleShape)
    compute = _permute(ins, ctx, _leaves_shapes(ins.shape))

    def run(*xs):
        outs = compute(*xs)
        return tuple(outs) if tuple_out else outs[0]
    return run


@kernel("collective-permute-start")
def _k_collective_permute_start(ins, ctx):
    s = ins.shape
    if not isinstance(s, ir.TupleShape) or len(s.elements) < 2:
        raise error_at(ins, "collective-permute-start must have the shape (operand, result, context...)")
    res = s.elements[1]
    tuple_out = isinstance(res, ir.TupleShape)
    compute = _permute(ins, ctx, _leaves_shapes(res))
    ctx_vals = tuple(zero_value(c) for c in s.elements[2:])

    first = (lambda xs: xs[0]) if is_in_place_permute(ins, ctx) else (lambda xs: tuple(xs) if len(xs) != 1 else xs[0])

    def run(*xs):
        outs = compute(*xs)
        return (first(xs), (tuple(outs) if tuple_out else outs[0])) + ctx_vals
    return run


@kernel("collective-broadcast")
def _k_collective_broadcast(ins, ctx):
    dev = _device(ctx)
    parts = participants(ins, dev, group_mode(ins, has_global_flag=False))
    tuple_out = isinstance(ins.shape, ir.TupleShape)

    def run(*xs):
        vals = _exchange(ins, dev, parts, xs)
        outs = tuple(np.array(v, copy=True) for v in vals[0])
        return outs if tuple_out else outs[0]
    return run


@kernel("ragged-all-to-all")
def _k_ragged_all_to_all(ins, ctx):
    """ragged-all-to-all(input, output, input_offsets, send_sizes, output_offsets, recv_sizes): with K =
    len(offsets) = G * k, update u of a participant (u // k = destination) sends input rows
    [input_offsets[u], +send_sizes[u]) to the destination, which writes them at the SENDER's
    output_offsets[u] into (a copy of) its `output`; recv_sizes[u] must match what source u // k
    sends.  (XLA:CPU does not run this op; semantics from XLA's and JAX's documentation.)"""
    dev = _device(ctx)
    parts = participants(ins, dev, group_mode(ins, has_global_flag=False))
    g = len(parts)
    pos = parts.index(dev.id)
    if len(ins.operands) != 6:
        raise error_at(ins, f"ragged-all-to-all takes 6 operands, got {len(ins.operands)}")

    def run(x, out, in_off, send, out_off, recv):
        in_off, send, out_off, recv = (np.asarray(a, np.int64).ravel() for a in (in_off, send, out_off, recv))
        n = len(in_off)
        if not (len(send) == len(out_off) == len(recv) == n) or n % g:
            raise error_at(ins, f"ragged-all-to-all: offsets and sizes must have one length, a multiple of "
                                f"the group size {g}")
        k = n // g
        if x.shape[1:] != out.shape[1:]:
            raise error_at(ins, f"ragged-all-to-all: input {list(x.shape)} and output {list(out.shape)} differ "
                                f"beyond the first dimension")
        sends = []
        for u in range(n):
            lo, m = int(in_off[u]), int(send[u])
            if m < 0 or lo < 0 or lo + m > x.shape[0]:
                raise error_at(ins, f"ragged-all-to-all: update {u} reads input rows [{lo}, {lo + m}) of "
                                    f"{x.shape[0]}")
            sends.append((x[lo:lo + m], int(out_off[u])))
        vals = _exchange(ins, dev, parts, sends)
        res = np.array(out, copy=True)
        for src in range(g):
            for j in range(k):
                data, at = vals[src][pos * k + j]
                want = int(recv[src * k + j])
                if data.shape[0] != want:
                    raise error_at(ins, f"ragged-all-to-all: recv_sizes[{src * k + j}] is {want}, but "
                                        f"participant {src} sends {data.shape[0]} row(s)")
                if at < 0 or at + want > res.shape[0]:
                    raise error_at(ins, f"ragged-all-to-all: rows [{at}, {at + want}) from participant "
                                        f"{src} fall outside the output's {res.shape[0]}")
                res[at:at + want] = data
        return res
    return run


@kernel("collective-reduce")
def _k_collective_reduce(ins, ctx):
    """collective-reduce: a reduce to one device (NCCL's ncclReduce), from XLA's sources
    (xla/backends/gpu/runtime/collective_reduce_thunk.h/.cc, CollectiveReduceThunk): the operands of
    the group's participants are reduced with `to_apply` (the all-reduce combiner here) and the result
    is written only to the root, rank 0 of the replica group (its first participant).  The other
    participants' results are not written by XLA (unspecified): zeros here.  Groups and modes as
    all-reduce.  The dynamic-root form (has_dynamic_root, a trailing s32 operand of roots) is not in
    this parser's schema."""
    dev = _device(ctx)
    parts = participants(ins, dev, group_mode(ins, has_global_flag=False))
    combine = make_combiner(ins, ctx)
    tuple_out = isinstance(ins.shape, ir.TupleShape)
    zeros = [zero_value(sh) for sh in _leaves_shapes(ins.shape)]
    is_root = dev.id == parts[0]

    def run(*xs):
        vals = _exchange(ins, dev, parts, xs)
        if is_root:
            outs = tuple(combine([v[k] for v in vals]) for k in range(len(xs)))
        else:
            outs = tuple(z.copy() for z in zeros)
        return outs if tuple_out else outs[0]
    return run


# --------------------------------------------------------------------------------------------------
# shard_map's global/local boundaries (spmd.prepare_global_view turns the xla.sdy custom calls into these)

def _shard_index(desc, dev_id, shape):
    """The index of device `dev_id`'s shard: desc = ("tiles", tile dims, device order) (GSPMD's
    `devices=[...]`) or (mesh axes, dims' axis names) (Shardy)."""
    if desc[0] == "tiles":
        _, tdims, order = desc
        if order is None:  # replicated
            return tuple(slice(None) for _ in shape)
        where = np.argwhere(np.asarray(order).reshape(tdims) == dev_id)
        if len(where) != 1:
            raise ValueError(f"device {dev_id} is not in the sharding's device list")
        coords = where[0]
        idx = []
        for k, n in enumerate(shape):
            t = tdims[k] if k < len(tdims) else 1
            if n % t:
                raise ValueError(f"dimension {k} of size {n} does not split into {t} tiles")
            b = n // t
            idx.append(slice(int(coords[k]) * b, (int(coords[k]) + 1) * b))
        return tuple(idx)
    return _shard_slices(desc[0], desc[1], dev_id, shape)


def _shard_slices(mesh, dims, dev_id, shape):
    """The index of this device's shard of a value of global `shape` sharded as `dims`."""
    names = [a for a, _ in mesh]
    sizes = [n for _, n in mesh]
    coords = dict(zip(names, np.unravel_index(dev_id, sizes) if sizes else ()))
    size_of = dict(mesh)
    idx = []
    for k, n in enumerate(shape):
        axes = dims[k] if k < len(dims) else ()
        count, pos = 1, 0
        for a in axes:
            pos = pos * size_of[a] + int(coords[a])
            count *= size_of[a]
        if n % count:
            raise ValueError(f"dimension {k} of size {n} does not split into {count} shards")
        b = n // count
        idx.append(slice(pos * b, (pos + 1) * b))
    return tuple(idx)


@kernel("spmd-global-to-local")
def _k_global_to_local(ins, ctx):
    dev = _device(ctx)
    shardings = ins.attrs["sdy_shardings"]
    tuple_out = isinstance(ins.shape, ir.TupleShape)

    def run(*xs):
        outs = []
        for x, desc in zip(xs, shardings):
            try:
                outs.append(np.array(x[_shard_index(desc, dev.partition, x.shape)], copy=True))
            except ValueError as e:
                raise error_at(ins, f"shard_map input: {e}") from None
        return tuple(outs) if tuple_out else outs[0]
    return run


@kernel("spmd-local-to-global")
def _k_local_to_global(ins, ctx):
    dev = _device(ctx)
    shardings = ins.attrs["sdy_shardings"]
    shapes = _leaves_shapes(ins.shape)
    tuple_out = isinstance(ins.shape, ir.TupleShape)
    parts = tuple(range(dev.replica * dev.num_partitions, (dev.replica + 1) * dev.num_partitions))

    def run(*xs):
        vals = _exchange(ins, dev, parts, xs)
        outs = []
        for k, (shape, desc) in enumerate(zip(shapes, shardings)):
            full = np.zeros(tuple(shape.dims), shape.element_type.dtype)
            for p, v in enumerate(vals):
                try:
                    idx = _shard_index(desc, p, full.shape)
                    full[idx] = v[k]
                except ValueError as e:
                    raise error_at(ins, f"shard_map output: {e}") from None
            outs.append(full)
        return tuple(outs) if tuple_out else outs[0]
    return run


# The async sugar of the collectives that have no -start opcode of their own.
for _base in ("reduce-scatter", "all-to-all", "collective-broadcast", "ragged-all-to-all"):
    add_async_sugar(_base)
