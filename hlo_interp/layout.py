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

Bytes (XLA's ShapeUtil::ByteSizeOf / ArraySize, xla/layout.h):

- each element takes `storage_bits`: `E(n)` (element size in bits) when the layout gives one, else the
  type's width rounded up to whole bytes (a sub-byte type without `E(n)` takes a byte per element);
- `L(n)` (tail padding alignment, in elements) rounds the tiled element count up to a multiple of n;
- the buffer is ceil(elements x storage_bits / 8) bytes, plus `M(n)` bytes of dynamic-shape metadata
  in front of the data;
- packed elements (storage_bits < 8) fill each byte from its low-order bits up: the first element in
  bits 0..n-1 (what XLA:CPU does: `u8[4] bitcast-convert(s4[4,2]{1,0:E(4)})` of [1,2,...] gives 0x21);
- `#(type)` / `*(type)` (index and pointer types of sparse layouts) and `SC(..)` (split configs) do not
  change a dense buffer's size; `S(n)` only says which memory holds it (`memory_space_name`).

XLA's ShapeUtil::ArraySize pads only for the first tile ("sub-tiles won't cause additional padding");
`physical_size` applies every tile, which is the same whenever the sub-tiles divide the first tile (as
in every TPU layout, e.g. T(8,128)(2,1)) and the true buffer size otherwise.

`to_bytes` / `from_bytes` give and read a shape's whole physical buffer as bytes (tiles, padding,
packing), which is what `bitcast` reinterprets.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from . import ir

if TYPE_CHECKING:  # NumPy loads only when an array is converted: hlo check/info/fmt use the shape half
    import numpy as np

__all__ = [
    "MEMORY_SPACES",
    "from_bytes",
    "from_physical",
    "is_plain",
    "is_supported",
    "leaf_shapes",
    "logical_bytes",
    "major_to_minor",
    "memory_space",
    "memory_space_name",
    "physical_bytes",
    "physical_size",
    "storage_bits",
    "tiled_dims",
    "to_bytes",
    "to_physical",
]


def major_to_minor(shape: ir.ArrayShape) -> tuple[int, ...]:
    lay = shape.layout
    if lay is None or (not lay.minor_to_major and shape.rank):
        return tuple(range(shape.rank))
    m2m = lay.minor_to_major
    if sorted(m2m) != list(range(shape.rank)):  # not a permutation (the verifier's finding): as if default
        return tuple(range(shape.rank))
    return tuple(reversed(m2m))


def is_supported(shape: ir.ArrayShape) -> str | None:
    """None if this module can compute the physical buffer of `shape`, else what is missing."""
    lay = shape.layout
    if lay is None:
        return None
    if lay.physical_shape is not None:
        return "layouts with a physical shape P(...)"
    if lay.dim_level_types is not None:
        return "sparse layouts (dim level types)"
    if lay.dynamic_prefix_bytes:
        return "a dynamic-shape metadata prefix M(n)"
    e = lay.element_size_bits
    if e and e not in (1, 2, 4) and e != _type_storage_bits(shape.element_type):
        return f"element size E({e}) for {shape.element_type.name} (packing needs 1, 2 or 4 bits)"
    if e and e < shape.element_type.bits:
        return f"element size E({e}) narrower than {shape.element_type.name}"
    for t in lay.tiles:
        if not t:
            return "an empty tile"
        if any(d != ir.TILE_COMBINE and d <= 0 for d in t):
            return f"tile {t} with a non-positive size"
    return None


def is_plain(shape: ir.ArrayShape) -> bool:
    """True when the buffer is the elements in minor_to_major order and nothing else: no tiles, tail
    padding, physical shape, sparsity or metadata prefix, and whole-byte elements of the type's width.
    (Sub-byte types count as plain too: with or without packing, their elements keep their order.)"""
    lay = shape.layout
    if lay is None:
        return True
    if (lay.tiles or (lay.tail_padding_alignment or 1) > 1 or lay.physical_shape is not None
            or lay.dim_level_types is not None or lay.dynamic_prefix_bytes):
        return False
    bits = shape.element_type.bits
    return lay.element_size_bits in (None, 0, bits) or bits % 8 != 0


def _type_storage_bits(t) -> int:
    """XLA's ByteSizeOfPrimitiveType x 8: sub-byte types take a whole byte unless packed by E(n)."""
    return -(-t.bits // 8) * 8


def storage_bits(shape: ir.ArrayShape) -> int:
    """Bits one element takes in the buffer: E(n) when given, else the type's width in whole bytes."""
    lay = shape.layout
    if lay is not None and lay.element_size_bits:
        return lay.element_size_bits
    return _type_storage_bits(shape.element_type)


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


def physical_bytes(shape: ir.Shape, pointer_size: int = 8, *, tuple_table: bool = False) -> int:
    """Bytes of the buffer(s) of `shape` as laid out: tiles, padding, L(n), E(n) packing, M(n) prefix.

    A tuple counts its elements' buffers (plus its own index table of `pointer_size` per element when
    `tuple_table`); a token 0; an opaque value one pointer."""
    if isinstance(shape, ir.TupleShape):
        return sum(physical_bytes(s, pointer_size, tuple_table=tuple_table) for s in shape.elements) + (
            pointer_size * len(shape.elements) if tuple_table else 0)
    if isinstance(shape, ir.BufferShape):
        return physical_bytes(shape.element, pointer_size, tuple_table=tuple_table)
    k = shape.element_type.kind
    if k == "token":
        return 0
    if k == "opaque":
        return pointer_size
    n = physical_size(shape) * storage_bits(shape)
    prefix = (shape.layout.dynamic_prefix_bytes or 0) if shape.layout is not None else 0
    return -(-n // 8) + prefix


def logical_bytes(shape: ir.Shape) -> int:
    """Bytes of the values themselves: elements x the type's width in bits / 8, rounded up (no layout:
    no padding, sub-byte types packed); a tuple the sum of its elements."""
    if isinstance(shape, ir.TupleShape):
        return sum(logical_bytes(s) for s in shape.elements)
    if isinstance(shape, ir.BufferShape):
        return logical_bytes(shape.element)
    if not shape.element_type.is_array_type:
        return 0
    return -(-shape.num_elements() * shape.element_type.bits // 8)


def leaf_shapes(shape: ir.Shape):
    """The array (and token) shapes of a possibly nested tuple shape, in order."""
    if isinstance(shape, ir.TupleShape):
        for s in shape.elements:
            yield from leaf_shapes(s)
    elif isinstance(shape, ir.BufferShape):
        yield from leaf_shapes(shape.element)
    else:
        yield shape


# XLA's constants (xla/layout.h): kDefaultMemorySpace = 0, kGenericFastMemorySpace = 1,
# kHostMemorySpace = 5; the shapes-and-layout doc: S(0) HBM, S(1) VMEM on a TPU, S(5) host memory.
MEMORY_SPACES = {0: "HBM (default)", 1: "VMEM (fast)", 5: "host"}


def memory_space(shape: ir.ArrayShape) -> int:
    lay = getattr(shape, "layout", None)
    return (lay.memory_space or 0) if lay is not None else 0


def memory_space_name(space: int) -> str:
    """`S(1) VMEM (fast)`; memory spaces without a known name are just `S(n)`."""
    name = MEMORY_SPACES.get(space)
    return f"S({space}) {name}" if name else f"S({space})"


def _apply_tile(x: np.ndarray, tile: tuple[int, ...]) -> np.ndarray:
    import numpy as np
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
    import numpy as np
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
    import numpy as np
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


def _codes_dtype(bits: int):
    import numpy as np
    return {8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.uint64, 128: None}[bits]


def to_bytes(x: np.ndarray, shape: ir.ArrayShape) -> np.ndarray:
    """The whole physical buffer of logical array `x` of `shape` as a 1-D uint8 array (tiles, padding
    and L(n) zero-filled, sub-byte elements packed by E(n) or one per byte)."""
    import numpy as np
    flat = to_physical(np.asarray(x), shape)
    t = shape.element_type
    bits = storage_bits(shape)
    if t.bits % 8 == 0 and bits == t.bits:
        return np.ascontiguousarray(flat).view(np.uint8).reshape(-1)
    # sub-byte types: ml_dtypes keeps the n-bit code in the low bits of a byte
    codes = np.ascontiguousarray(flat).view(np.uint8) & np.uint8((1 << t.bits) - 1) \
        if t.bits < 8 else np.ascontiguousarray(flat).view(np.uint8)
    if bits >= 8:
        return codes.reshape(-1)
    per = 8 // bits
    n = codes.size
    padded = np.zeros(-(-n // per) * per, np.uint8)
    padded[:n] = codes
    lanes = padded.reshape(-1, per).astype(np.uint16)
    shifts = (np.arange(per, dtype=np.uint16) * bits)
    return np.bitwise_or.reduce(lanes << shifts, axis=1).astype(np.uint8)


def from_bytes(buf: np.ndarray, shape: ir.ArrayShape) -> np.ndarray:
    """The logical array of `shape` stored in the physical byte buffer `buf` (see `to_bytes`)."""
    import numpy as np
    buf = np.ascontiguousarray(buf, dtype=np.uint8).reshape(-1)
    t = shape.element_type
    bits = storage_bits(shape)
    n = physical_size(shape)
    if t.bits % 8 == 0 and bits == t.bits:
        flat = buf[:n * bits // 8].view(t.dtype)
    else:
        if bits >= 8:
            codes = buf[:n]
        else:
            per = 8 // bits
            shifts = (np.arange(per, dtype=np.uint8) * bits)
            codes = ((buf[:, None] >> shifts) & np.uint8((1 << bits) - 1)).reshape(-1)[:n]
        if t.bits < 8:
            codes = codes & np.uint8((1 << t.bits) - 1)
        flat = codes.view(t.dtype) if t.dtype.itemsize == 1 else codes.astype(t.dtype)
    return np.ascontiguousarray(from_physical(flat, shape))
