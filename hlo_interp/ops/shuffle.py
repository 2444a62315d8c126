"""shuffle: moves the elements of an array along some of its dimensions, in one of three modes.

No spec document describes it; these are the facts of XLA's sources (xla/shuffle.h and .cc, their
test shuffle_test.cc, xla/hlo/transforms/expanders/shuffle_expander.cc and its test):

  * `dimensions={d0,d1,...}`: the shuffled dimensions; the result has the operand's shape.
  * `mode=rotate, shifts={s0,s1,...}`: each shuffled dimension di is rotated to the LEFT by si:
    result[.., i, ..] = operand[.., (i + si) mod n, ..].  The shift is first normalized into [0, n)
    (shuffle::NormalizeShift: ((s mod n) + n) mod n, 0 for an empty dimension), and the expander
    lowers it to concatenate(slice [s:n], slice [0:s]) along di, one dimension after the other.
    This is np.roll(x, -s, axis=di).
  * `mode=permute, indices=<integer literal>`: for every element of the result, the indices hold the
    coordinates (one per shuffled dimension, in the order of `dimensions`, in an innermost dimension
    that a shuffle of one dimension may leave out) of the operand element it takes; the other
    dimensions keep the result's coordinate.  A dimension of size 1 in the indices is shared by
    every position along that dimension (the expander broadcasts it).  The expander lowers this to a
    gather of one element per result element with start indices converted to s32 (s64 when a
    dimension exceeds int32), so an out-of-range coordinate is clamped into [0, n-1] as gather does.
  * `mode=multi_rotate, multi_shifts=<integer literal>` (exactly one shuffled dimension d): each
    1-D slice along d is rotated left by its own shift: result[.., i, ..] =
    operand[.., (i + shift[.., 0, ..]) mod n, ..] (shuffle::GetMultiRotatePermuteIndices); the
    shifts have the operand's shape with size 1 along d, and size 1 elsewhere shares a shift.
    The text form `multi_shifts=` follows the proto field name (ShuffleMode.multi_rotate.multi_shifts):
    the XLA sources at hand contain no printed example of this mode.

Every element type moves bit-exactly (it is pure data movement: NaN payloads and -0 are kept).
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..shapes import infer
from .registry import error_at, kernel

_INT32_MAX = 2**31 - 1


def normalize_shift(shift: int, size: int) -> int:
    """shuffle::NormalizeShift: the shift in [0, size); 0 for an empty dimension."""
    if size < 0:
        raise ValueError("a dimension cannot have a negative size")
    return 0 if size == 0 else ((shift % size) + size) % size


def rotate(x: np.ndarray, dimensions: Sequence[int], shifts: Sequence[int]) -> np.ndarray:
    """Rotate each dimension dimensions[k] of x to the left by shifts[k]."""
    out = x
    for d, s in zip(dimensions, shifts):
        k = normalize_shift(int(s), out.shape[d])
        if k:
            out = np.concatenate((out[(slice(None),) * d + (slice(k, None),)],
                                  out[(slice(None),) * d + (slice(0, k),)]), axis=d)
    return out if out is not x else x.copy()


def _coordinate_type(shape: Sequence[int]):
    """The type the expander converts the indices to: s32, or s64 when a dimension exceeds int32."""
    return np.int32 if max(shape, default=0) <= _INT32_MAX else np.int64


def permute_sources(shape: Sequence[int], dimensions: Sequence[int], indices: np.ndarray) -> tuple:
    """For an operand of `shape`, the index arrays (one per dimension, broadcastable to `shape`) of
    the operand element each result element takes, per the permute `indices`."""
    rank = len(shape)
    shape = tuple(shape)
    idx = np.asarray(indices)
    if idx.ndim == rank + 1:
        comps = [idx[..., k] for k in range(idx.shape[-1])]
    else:  # one shuffled dimension, its coordinate held directly
        comps = [idx]
    ctype = _coordinate_type(shape)
    out = []
    for d in range(rank):
        if d in dimensions:
            c = comps[list(dimensions).index(d)]
            # XLA's convert to the coordinate type wraps, then gather clamps the start index.
            c = np.clip(c.astype(ctype).astype(np.int64), 0, max(shape[d] - 1, 0))
        else:
            c = np.arange(shape[d], dtype=np.int64).reshape((-1,) + (1,) * (rank - 1 - d))
        out.append(np.broadcast_to(c, shape))
    return tuple(out)


def permute(x: np.ndarray, dimensions: Sequence[int], indices: np.ndarray) -> np.ndarray:
    if x.size == 0:
        return x.copy()
    return _Gather(x.shape, permute_sources(x.shape, dimensions, indices))(x)


def multi_rotate_sources(size: int, dimension: int, multi_shifts: np.ndarray) -> np.ndarray:
    """shuffle::GetMultiRotatePermuteIndices: the source coordinate along `dimension` (of `size`) of
    every result element, shaped like multi_shifts with `size` along `dimension`."""
    ms = np.asarray(multi_shifts)
    shifts = ms.astype(np.int64)  # GetIntegralAsS64 (u64 wraps)
    if size == 0:
        shape = list(ms.shape)
        shape[dimension] = 0
        return np.zeros(shape, np.int64)
    pos = np.arange(size, dtype=np.int64).reshape((-1,) + (1,) * (ms.ndim - 1 - dimension))
    return (pos + np.mod(shifts, size)) % size


def multi_rotate(x: np.ndarray, dimension: int, multi_shifts: np.ndarray) -> np.ndarray:
    if x.size == 0:
        return x.copy()
    return _Gather(x.shape, _multi_rotate_sources_nd(x.shape, dimension, multi_shifts))(x)


def shuffle(x: np.ndarray, *, dimensions: Sequence[int], mode: str, shifts: Sequence[int] = (),
            indices: np.ndarray | None = None, multi_shifts: np.ndarray | None = None) -> np.ndarray:
    """XLA's shuffle on an array (attributes decoded; see the module docstring)."""
    if mode == "rotate":
        return rotate(x, dimensions, shifts)
    if mode == "permute":
        return permute(x, dimensions, indices)
    if mode == "multi_rotate":
        return multi_rotate(x, dimensions[0], multi_shifts)
    raise ValueError(f"unknown shuffle mode {mode}")


class _Gather:
    """A permute or multi_rotate bound to one operand shape: the source of every result element,
    computed once.  A coordinate that varies along its own dimension only (a permutation of rows,
    say) runs as np.take along that axis; anything else as one take of precomputed flat indices."""

    def __init__(self, shape: tuple, sources: tuple):
        self.shape = shape
        rank = len(shape)
        moved = [d for d in range(rank) if not _is_iota(sources[d], d)]
        self.axis = None
        if len(moved) == 1:
            d = moved[0]
            base = sources[d]
            strides = base.strides
            # the coordinate depends on position d only: stride 0 (broadcast) along every other axis
            if all(strides[k] == 0 or shape[k] == 1 for k in range(rank) if k != d):
                self.axis, self.vec = d, np.ascontiguousarray(base[(0,) * d + (slice(None),) + (0,) * (rank - 1 - d)])
        if self.axis is None:
            self.flat = np.ravel_multi_index(sources, shape).astype(np.intp).reshape(-1)

    def __call__(self, x: np.ndarray) -> np.ndarray:
        if self.axis is not None:
            return np.take(x, self.vec, axis=self.axis)
        return x.reshape(-1).take(self.flat).reshape(self.shape)


def _is_iota(a: np.ndarray, d: int) -> bool:
    """Whether index array `a` (broadcast to the operand's shape) is the identity along d."""
    rank = a.ndim
    if any(a.strides[k] != 0 and a.shape[k] != 1 for k in range(rank) if k != d):
        return False
    line = a[(0,) * d + (slice(None),) + (0,) * (rank - 1 - d)]
    return bool(np.array_equal(line, np.arange(line.shape[0])))


def _multi_rotate_sources_nd(shape: tuple, dimension: int, multi_shifts: np.ndarray) -> tuple:
    src = np.broadcast_to(multi_rotate_sources(shape[dimension], dimension, multi_shifts), shape)
    rank = len(shape)
    out = []
    for d in range(rank):
        if d == dimension:
            out.append(src)
        else:
            out.append(np.broadcast_to(np.arange(shape[d], dtype=np.int64).reshape(
                (-1,) + (1,) * (rank - 1 - d)), shape))
    return tuple(out)


@kernel("shuffle")
def _k_shuffle(ins, ctx):
    try:
        infer.infer_shape(ins, ctx.operand_shapes(ins), ctx.module)
    except infer.ShapeError as e:
        raise error_at(ins, e.message) from None
    a = ins.attrs
    dims = tuple(a["dimensions"])
    mode = a["mode"]
    if mode == "rotate":
        shifts = tuple(a.get("shifts", ()))

        def run(x):
            return rotate(x, dims, shifts)
        return run
    if mode == "permute":
        indices = a["indices"].value

        def sources(shape):
            return permute_sources(shape, dims, indices)
    else:
        multi_shifts = a["multi_shifts"].value

        def sources(shape):
            return _multi_rotate_sources_nd(shape, dims[0], multi_shifts)
    cache: dict = {}

    def run(x):
        if x.size == 0:
            return x.copy()
        g = cache.get(x.shape)
        if g is None:
            g = cache[x.shape] = _Gather(x.shape, sources(x.shape))
        return g(x)
    return run
