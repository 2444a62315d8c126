"""Kernels: infeed, outfeed, send, send-done, recv, recv-done.

send / recv within one module: a `send` puts its data on the channel named by its channel_id (a FIFO per
channel, per evaluation context), `recv-done` takes the oldest value of its channel.  Shapes (XLA's):
    send(data, token)  -> (data, u32[] context, token)      send-done(send) -> token
    recv(token)        -> (data, u32[] context, token)      recv-done(recv) -> (data, token)
The data of `recv`'s own result is zeros (XLA gives no value before recv-done).

infeed / outfeed read and write process-wide queues that the caller fills and empties (hlo-run's
`--infeed FILE.npz` and `--outfeed FILE.npz`):
    infeed(token) -> (data, token)        each array leaf of data consumes the next queued array
    outfeed(data, token) -> token         each array leaf of data is appended to the outfeed list

send / recv with is_host_transfer=true talk to the host, per channel_id, through two process-wide
tables the caller fills and empties (like infeed/outfeed; files: load_host_recv / save_host_sends,
keys `ch<channel_id>_<k>`):
    send(data, token), is_host_transfer=true   each array leaf of data is appended to the channel's
                                               list of sent arrays (take_host_sends())
    recv-done(recv), is_host_transfer=true     each array leaf of the received data takes the next
                                               array queued for the channel (set_host_recv())
One device only: a multi-device run refuses host transfers (whose device sent what is not kept).
"""
from __future__ import annotations

from collections import deque
from typing import Any

import numpy as np

from .. import ir
from .registry import TOKEN, error_at, kernel, unsupported

__all__ = [
    "host_recv_remaining",
    "infeed_remaining",
    "load_host_recv",
    "save_host_sends",
    "set_host_recv",
    "set_infeed",
    "take_host_sends",
    "take_outfeed",
]

_INFEED: deque = deque()
_OUTFEED: list = []


_COUNT = [0]  # how many infeed arrays were consumed since set_infeed (names in messages)


def set_infeed(values) -> None:
    """Replace the infeed queue with `values` (arrays, consumed in order)."""
    _INFEED.clear()
    _INFEED.extend(values)
    _COUNT[0] = 0


def infeed_remaining() -> int:
    return len(_INFEED)


def take_outfeed() -> list:
    """The arrays outfed since the last call (in order), emptying the list."""
    out = list(_OUTFEED)
    _OUTFEED.clear()
    return out


_HOST_RECV: dict = {}   # channel_id -> deque of arrays the host sends to the program
_HOST_SENT: dict = {}   # channel_id -> list of arrays the program sent to the host


def set_host_recv(values: dict) -> None:
    """Replace the host-to-device queues: {channel_id: [arrays, consumed in order]}."""
    _HOST_RECV.clear()
    for cid, arrays in values.items():
        _HOST_RECV[int(cid)] = deque(arrays)


def host_recv_remaining() -> dict:
    """{channel_id: arrays not yet received}."""
    return {cid: len(q) for cid, q in _HOST_RECV.items() if q}


def take_host_sends() -> dict:
    """{channel_id: [arrays sent to the host, in order]} since the last call, emptying the table."""
    out = {cid: list(v) for cid, v in _HOST_SENT.items() if v}
    _HOST_SENT.clear()
    return out


def _host_key(key: str):
    import re
    m = re.fullmatch(r"ch(\d+)_(\d+)", key)
    return (int(m.group(1)), int(m.group(2))) if m else None


def load_host_recv(path) -> dict:
    """Read a .npz of host-to-device arrays (keys `ch<channel_id>_<k>`, k = 0, 1, ... in order) and
    install it with set_host_recv; returns the {channel_id: [arrays]} installed.  ValueError (an
    hlo_interp.files.InputError) on an unreadable file, other keys or a gap in k."""
    from ..files import InputError, load_arrays
    data = load_arrays(path)
    if not isinstance(data, dict):
        raise InputError(f"{path}: expected a .npz file with keys ch<channel_id>_<k>")
    items = {}
    for key, arr in data.items():
        ck = _host_key(key)
        if ck is None:
            raise InputError(f"{path}: key {key!r} is not ch<channel_id>_<k>")
        items[ck] = arr
    values: dict = {}
    for (cid, k) in sorted(items):
        lst = values.setdefault(cid, [])
        if k != len(lst):
            raise InputError(f"{path}: channel {cid} has no array ch{cid}_{len(lst)}")
        lst.append(items[(cid, k)])
    set_host_recv(values)
    return values


def save_host_sends(path, sends: dict) -> None:
    """Write {channel_id: [arrays]} (take_host_sends()) as a .npz with keys `ch<channel_id>_<k>`,
    atomically, keeping bf16/f8 element types (hlo_interp.files.save_arrays)."""
    from ..files import save_arrays
    save_arrays(path, {f"ch{cid}_{k}": np.asarray(a) for cid, arrs in sends.items() for k, a in enumerate(arrs)})


def _single_device(ins, ctx) -> None:
    dev = getattr(ctx, "device", None)
    if dev is not None and getattr(dev, "num_replicas", 1) * getattr(dev, "num_partitions", 1) > 1:
        raise unsupported(ins, "host transfers (is_host_transfer=true) in a multi-device run")


def _leaves(shape: ir.Shape) -> list:
    if isinstance(shape, ir.TupleShape):
        return [leaf for s in shape.elements for leaf in _leaves(s)]
    return [shape]


def _is_array(shape) -> bool:
    return isinstance(shape, ir.ArrayShape) and shape.element_type.dtype is not None


def _zeros(shape: ir.Shape) -> Any:
    if isinstance(shape, ir.TupleShape):
        return tuple(_zeros(s) for s in shape.elements)
    if not _is_array(shape):
        return TOKEN
    return np.zeros(shape.dims, shape.element_type.dtype)


def _fill(shape: ir.Shape, take) -> Any:
    """A value of `shape` whose array leaves are take(leaf_shape), depth-first (infeed, host recv)."""
    if isinstance(shape, ir.TupleShape):
        return tuple(_fill(e, take) for e in shape.elements)
    return take(shape) if _is_array(shape) else TOKEN


def _append_leaves(value: Any, out: list) -> None:
    """Append copies of the array leaves of `value`, depth-first (outfeed, host send)."""
    if isinstance(value, tuple):
        for e in value:
            _append_leaves(e, out)
    elif value is not TOKEN:
        out.append(np.array(value, copy=True))


def _check_static(ins, shape) -> None:
    for leaf in _leaves(shape):
        if isinstance(leaf, ir.ArrayShape) and any(leaf.dynamic):
            raise unsupported(ins, "dynamic shapes")


# --------------------------------------------------------------------------------------------------
# infeed / outfeed

def _conform(ins, value, shape: ir.ArrayShape, k: int, what: str = "") -> np.ndarray:
    what = what or f"infeed value in{k}"
    a = np.asarray(value)
    if a.shape != tuple(shape.dims):
        raise error_at(ins, f"{what} has shape {list(a.shape)}, the {ins.opcode} expects "
                            f"{shape.element_type.name}{list(shape.dims)}")
    dt = shape.element_type.dtype
    if a.dtype != dt:
        ok = (np.can_cast(a.dtype, dt, casting="same_kind") or a.dtype.itemsize == np.dtype(dt).itemsize
              and a.dtype.kind in "fV" and np.dtype(dt).kind in "fV")
        if not ok:
            raise error_at(ins, f"{what} has element type {a.dtype}, the {ins.opcode} expects "
                                f"{shape.element_type.name}")
        a = a.astype(dt)
    return a


@kernel("infeed")
def _infeed(ins, ctx):
    shape = ins.shape
    if not (isinstance(shape, ir.TupleShape) and len(shape.elements) == 2):
        raise error_at(ins, "infeed must produce a (data, token) tuple")
    data_shape = shape.elements[0]
    _check_static(ins, data_shape)

    def take(s):
        if not _INFEED:
            raise error_at(ins, "infeed: no more infeed data (give values with hlo-run --infeed FILE.npz, "
                                "keys in0, in1, ... consumed in order)")
        k = _COUNT[0]
        _COUNT[0] += 1
        return _conform(ins, _INFEED.popleft(), s, k)

    def run(token):
        return (_fill(data_shape, take), TOKEN)
    return run


@kernel("outfeed")
def _outfeed(ins, ctx):
    operands = ctx.operand_shapes(ins)
    if len(operands) != 2:
        raise error_at(ins, "outfeed takes (data, token)")
    _check_static(ins, operands[0])

    def run(data, token):
        _append_leaves(data, _OUTFEED)
        return TOKEN
    return run


# --------------------------------------------------------------------------------------------------
# send / recv within one module

def _channels(ctx) -> dict:
    ch = getattr(ctx, "_io_channels", None)
    if ch is None:
        ch = {}
        try:
            ctx._io_channels = ch
        except AttributeError:  # pragma: no cover - a context without a __dict__
            pass
    return ch


def _channel_id(ins) -> Any:
    return ins.attrs.get("channel_id")


@kernel("send")
def _send(ins, ctx):
    if ins.attrs.get("is_host_transfer"):
        return _host_send(ins, ctx)
    cid = _channel_id(ins)
    queue = _channels(ctx).setdefault(cid, deque())

    def run(data, token):
        queue.append(data)
        return (data, np.uint32(0), TOKEN)
    return run


@kernel("send-done")
def _send_done(ins, ctx):
    def run(s):
        return TOKEN
    return run


@kernel("recv")
def _recv(ins, ctx):
    if ins.attrs.get("is_host_transfer"):
        _single_device(ins, ctx)
    shape = ins.shape
    if not (isinstance(shape, ir.TupleShape) and len(shape.elements) == 3):
        raise error_at(ins, "recv must produce a (data, u32[], token) tuple")
    _check_static(ins, shape.elements[0])
    placeholder = _zeros(shape.elements[0])

    def run(token):
        return (placeholder, np.uint32(0), TOKEN)
    return run


@kernel("recv-done")
def _recv_done(ins, ctx):
    cid = _channel_id(ins)
    if ins.attrs.get("is_host_transfer"):
        return _host_recv_done(ins, ctx)
    queue = _channels(ctx).setdefault(cid, deque())

    def run(r):
        if not queue:
            raise error_at(ins, f"recv-done: nothing was sent on channel {cid} (a send with "
                                f"channel_id={cid} must run before this recv-done)")
        return (queue.popleft(), TOKEN)
    return run


def _host_send(ins, ctx):
    _single_device(ins, ctx)
    cid = _channel_id(ins)
    if cid is None:
        raise error_at(ins, "send to the host needs a channel_id")
    operands = ctx.operand_shapes(ins)
    if len(operands) != 2:
        raise error_at(ins, "send takes (data, token)")
    _check_static(ins, operands[0])

    def run(data, token):
        _append_leaves(data, _HOST_SENT.setdefault(int(cid), []))
        return (data, np.uint32(0), TOKEN)
    return run


def _host_recv_done(ins, ctx):
    _single_device(ins, ctx)
    cid = _channel_id(ins)
    if cid is None:
        raise error_at(ins, "recv-done from the host needs a channel_id")
    shape = ins.shape
    if not (isinstance(shape, ir.TupleShape) and len(shape.elements) == 2):
        raise error_at(ins, "recv-done must produce a (data, token) tuple")
    data_shape = shape.elements[0]
    _check_static(ins, data_shape)

    def take(s):
        q = _HOST_RECV.get(int(cid))
        if not q:
            raise error_at(ins, f"recv-done: the host sent nothing (more) on channel {cid} (give arrays with "
                                f"hlo_interp.ops.io.set_host_recv, or a .npz with keys ch{cid}_0, ch{cid}_1, ...)")
        return _conform(ins, q.popleft(), s, 0, f"host value on channel {cid}")

    def run(r):
        return (_fill(data_shape, take), TOKEN)
    return run
