"""SliceToDynamic / PadToStatic (XLA's dynamic padder): between static arrays and dynamic ones."""
from __future__ import annotations

import numpy as np

from ..registry import error_at, unsupported
from .registry import shape_text, target

# --------------------------------------------------------------------------------------------------
# dynamic shapes: SliceToDynamic, PadToStatic (what XLA's dynamic padder leaves at the boundaries)

@target("SliceToDynamic")
def _t_slice_to_dynamic(ins, ctx):
    """SliceToDynamic(x, size_0, ..., size_{r-1}) -> x with dynamic sizes: the leading size_d entries of
    each dimension d (XLA's runtime compacts them into the dynamic layout: xla/service/gpu's
    EmitSliceToDynamic; values are logical arrays here, so it is the slice x[:size_0, ...]).  A size
    outside [0, the result's bound] is refused, as set-dimension-size does; a static result dimension
    keeps its size."""
    shapes = ctx.operand_shapes(ins)
    out = ins.shape
    if out is None or out.is_tuple or not shapes or shapes[0].is_tuple:
        raise error_at(ins, "custom-call SliceToDynamic takes an array and returns an array")
    r = len(shapes[0].dims)
    if len(shapes) != r + 1 or any(s.is_tuple or s.dims for s in shapes[1:]):
        raise error_at(ins, f"custom-call SliceToDynamic takes the array and {r} scalar sizes, got "
                            f"{len(shapes) - 1} more operand(s)")
    if tuple(out.dims) != tuple(shapes[0].dims):
        raise error_at(ins, f"custom-call SliceToDynamic: the result's bounds {list(out.dims)} are not the "
                            f"operand's dimensions {list(shapes[0].dims)}")
    dyn = tuple(out.dynamic) if out.dynamic else (False,) * r

    def run(x, *sizes):
        idx = []
        for d, (n, sz) in enumerate(zip(x.shape, sizes)):
            k = int(np.asarray(sz))
            if not dyn[d]:
                idx.append(slice(None))
                continue
            if not 0 <= k <= n:
                raise unsupported(ins, f"SliceToDynamic size {k} for dimension {d} outside [0, {n}]")
            idx.append(slice(0, k))
        return np.ascontiguousarray(x[tuple(idx)])
    return run


@target("PadToStatic")
def _t_pad_to_static(ins, ctx):
    """PadToStatic(x) -> (x in an array of the static bounds, s32 size of each dimension): the inverse of
    SliceToDynamic (xla/service/gpu's EmitPadToStatic: the dynamic data spread into the padded layout).
    XLA leaves the padding unspecified; it is zeros here."""
    (s,) = ctx.operand_shapes(ins)
    out = ins.shape
    if s is None or s.is_tuple or out is None or not out.is_tuple or len(out.elements) != len(s.dims) + 1:
        raise error_at(ins, f"custom-call PadToStatic: the result must be (array, one s32 per dimension), got "
                            f"{shape_text(out)}")
    data, sizes = out.elements[0], out.elements[1:]
    if data.is_tuple or tuple(data.dims) != tuple(s.dims) or any(z.is_tuple or z.dims for z in sizes):
        raise error_at(ins, f"custom-call PadToStatic: result {shape_text(out)} does not fit operand {shape_text(s)}")
    bounds = tuple(data.dims)
    odt = data.element_type.dtype

    def run(x):
        x = np.asarray(x)
        if x.ndim != len(bounds) or any(a > b for a, b in zip(x.shape, bounds)):
            raise error_at(ins, f"custom-call PadToStatic: operand {list(x.shape)} exceeds the bounds {list(bounds)}")
        full = np.zeros(bounds, odt)
        full[tuple(slice(0, a) for a in x.shape)] = x
        return (full,) + tuple(np.asarray(a, z.element_type.dtype) for a, z in zip(x.shape, sizes))
    return run

