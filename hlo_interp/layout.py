"""Physical layouts: where each element of an array lives in its buffer.

An array shape's layout gives `minor_to_major` (the order of the dimensions in memory) and optional tiles
`T(a,b)(c,d)` (XLA's tiled layouts).  The physical element order is obtained by:

1. permuting the logical dimensions to major-to-minor order (the reverse of minor_to_major);
2. applying each tile in turn to the minor-most dimensions of the current shape: a tile (t1..tk) splits
   each of the k minor-most dimensions d_i into (ceil(d_i / t_i), t_i), padding the dimension up to a
   multiple of t_i, and orders the tile counts before the tile contents:
   (..., d1, .., dk) -> (..., ceil(d1/t1), .., ceil(dk/tk), t1, .., tk).
   A `*` entry (combine) merges that dimension into the next more minor one before tiling; a tile entry
   of 1 leaves the dimension as it is (its tile count is the dimension itself).
   Later tiles apply to the minor-most dimensions of the result, i.e. within the previous tile.
3. reading the result in row-major order.

`to_physical` gives that linear array (padding filled with zeros), `from_physical` reads a linear array
back into the logical array; `physical_size` is the element count including padding.
"""
from __future__ import annotations

import numpy as np

from . import ir

__all__ = [
    "from_physical",
    "is_supported",
    "major_to_minor",
    "physical_size",
    "tiled_dims",
    "to_physical",
]


def major_to_minor(shape: ir.ArrayShape) -> tuple[int, ...]:
    lay = shape.layout
    if lay is None or (not lay.minor_to_major and shape.rank):
        return tuple(range(shape.rank))
    return tuple(reversed(lay.minor_to_major))


def is_supported(shape: ir.ArrayShape) -> str | None:
    """None if this module can compute the physical order of `shape`, else what is missing."""
    lay = shape.layout
    if lay is None:
        return None
    if lay.physical_shape is not None:
        return "layouts with a physical shape P(...)"
    if lay.dim_level_types is not None:
        return "sparse layouts (dim level types)"
    if lay.element_size_bits not in (None, 0, shape.element_type.bits):
        return "packed layouts (element size E(n) differs from the type's width)"
    if lay.tiles and shape.element_type.bits % 8:
        return "tiled layouts of sub-byte element types"
    for t in lay.tiles:
        if not t:
            return "an empty tile"
        if any(d != ir.TILE_COMBINE and d <= 0 for d in t):
            return f"tile {t} with a non-positive size"
    return None


def _tile_step(dims: tuple[int, ...], tile: tuple[int, ...]):
    """How one tile transforms a shape: (combined dims, padded dims, tiled dims)."""
    k = len(tile)
    if k > len(dims):
        # a tile with more entries than the rank: the missing major dimensions count as 1
        dims = (1,) * (k - len(dims)) + tuple(dims)
    head, minor = list(dims[:len(dims) - k]), list(dims[len(dims) - k:])
    t = list(tile)
    # `*`: combine the dimension with the next more minor one
    cm, ct = [], []
    carry = 1
    for d, s in zip(minor, t):
        if s == ir.TILE_COMBINE:
            carry *= d
            continue
        cm.append(d * carry)
        ct.append(s)
        carry = 1
    if carry != 1:  # a trailing `*`: nothing more minor to merge into
        cm.append(carry)
        ct.append(1)
    combined = tuple(head + cm)
    counts = [-(-d // s) for d, s in zip(cm, ct)]
    padded = tuple(head + [c * s for c, s in zip(counts, ct)])
    tiled = tuple(head + counts + ct)
    return combined, padded, tiled, len(head), ct


def tiled_dims(shape: ir.ArrayShape) -> tuple[int, ...]:
    """The dimensions of the physical (tiled) array, major to minor."""
    dims = tuple(shape.dims[d] for d in major_to_minor(shape))
    for tile in (shape.layout.tiles if shape.layout is not None else ()):
        dims = _tile_step(dims, tile)[2]
    return dims


def physical_size(shape: ir.ArrayShape) -> int:
    """Number of elements of the physical buffer, padding included."""
    n = 1
    for d in tiled_dims(shape):
        n *= d
    lay = shape.layout
    if lay is not None and lay.tail_padding_alignment:
        a = lay.tail_padding_alignment
        n = -(-n // a) * a
    return n


def _apply_tile(x: np.ndarray, tile: tuple[int, ...]) -> np.ndarray:
    combined, padded, tiled, h, ct = _tile_step(x.shape, tile)
    x = x.reshape(combined)
    if padded != combined:
        x = np.pad(x, [(0, p - c) for p, c in zip(padded, combined)])
    k = len(ct)
    inter = padded[:h] + tuple(v for c, s in zip(tiled[h:h + k], ct) for v in (c, s))
    x = x.reshape(inter)
    perm = tuple(range(h)) + tuple(h + 2 * i for i in range(k)) + tuple(h + 2 * i + 1 for i in range(k))
    return x.transpose(perm)


def _undo_tile(x: np.ndarray, tile: tuple[int, ...], before: tuple[int, ...]) -> np.ndarray:
    combined, padded, tiled, h, ct = _tile_step(before, tile)
    k = len(ct)
    x = x.reshape(tiled)
    perm = list(range(h))
    for i in range(k):
        perm += [h + i, h + k + i]
    x = x.transpose(perm).reshape(padded)
    if padded != combined:
        x = x[tuple(slice(0, c) for c in combined)]
    return x.reshape(before)


def to_physical(x: np.ndarray, shape: ir.ArrayShape) -> np.ndarray:
    """The physical buffer of logical array `x` of `shape`: a 1-D array (padding = zeros)."""
    order = major_to_minor(shape)
    p = x.transpose(order) if order != tuple(range(x.ndim)) else x
    for tile in (shape.layout.tiles if shape.layout is not None else ()):
        p = _apply_tile(p, tile)
    flat = np.ascontiguousarray(p).reshape(-1)
    n = physical_size(shape)
    if n != flat.size:
        flat = np.concatenate([flat, np.zeros(n - flat.size, flat.dtype)])
    return flat


def from_physical(flat: np.ndarray, shape: ir.ArrayShape) -> np.ndarray:
    """The logical array of `shape` stored in the 1-D physical buffer `flat`."""
    order = major_to_minor(shape)
    dims = tuple(shape.dims[d] for d in order)
    stages = [dims]
    tiles = shape.layout.tiles if shape.layout is not None else ()
    for tile in tiles:
        stages.append(_tile_step(stages[-1], tile)[2])
    n = int(np.prod(stages[-1], dtype=np.int64))
    p = flat[:n].reshape(stages[-1])
    for i in range(len(tiles) - 1, -1, -1):
        p = _undo_tile(p, tiles[i], stages[i])
    p = p.reshape(dims)
    if order != tuple(range(len(order))):
        p = p.transpose(np.argsort(order))
    return p
