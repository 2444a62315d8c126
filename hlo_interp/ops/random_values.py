"""Random values of a shape: hlo-run --random-inputs, and the stand-ins of --fake-constants for constants
whose values a dump elided (`{...}`)."""
from __future__ import annotations

import warnings
from typing import Any, Optional

import numpy as np

from .. import ir
from ..diagnostics import HloError, format_bytes
from ..files import half_of_memory
from .registry import TOKEN


def random_value(shape: ir.Shape, rng: "np.random.Generator", max_bytes: Optional[int] = None) -> Any:
    """A random value of `shape`: floats ~ N(0, 1) rounded to the type, integers small (signed in
    [-8, 8), unsigned in [0, 16), clipped to the type's range), pred fair coin flips, tuples of those.
    A value whose making (its NumPy temporaries included) would pass max_bytes (default: half the
    memory) is refused before anything is allocated."""
    if max_bytes is None:
        max_bytes = half_of_memory()
    if isinstance(shape, ir.TupleShape):
        return tuple(random_value(s, rng, max_bytes) for s in shape.elements)
    if not isinstance(shape, ir.ArrayShape) or shape.element_type.dtype is None:
        return TOKEN
    et = shape.element_type
    dims = tuple(max(d, 0) for d in shape.dims)
    dtype = et.dtype
    n = shape.num_elements()
    # the result, and the int64 draws (integers, pred) or the float32/complex parts it is made from
    temp = 8 if et.kind in ("pred", "sint", "uint") else (dtype.itemsize if et.kind == "complex" else 4)
    need = n * (dtype.itemsize + temp)
    if need > max_bytes:
        need_text, limit_text = format_bytes(need, "bytes"), format_bytes(max_bytes, "bytes")
        raise HloError(f"a random {et.name}[{','.join(map(str, shape.dims))}] input needs {need_text} "
                       f"to make, over the limit of {limit_text} (max_bytes / --max-bytes)")
    if et.kind == "pred":
        return rng.integers(0, 2, size=dims).astype(np.bool_)
    if et.kind in ("sint", "uint"):
        if et.kind == "sint":
            lo, hi = max(-8, -(1 << (et.bits - 1))), min(8, (1 << (et.bits - 1)))
        else:
            lo, hi = 0, min(16, 1 << et.bits)
        return rng.integers(lo, hi, size=dims).astype(dtype)
    if et.kind == "complex":
        out = np.empty(dims, dtype)
        out.real = rng.standard_normal(dims, dtype=np.float32 if dtype == np.complex64 else np.float64)
        out.imag = rng.standard_normal(dims, dtype=np.float32 if dtype == np.complex64 else np.float64)
        return out
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        x = rng.standard_normal(dims, dtype=np.float32)
        if et.name == "f8e8m0fnu":  # powers of two only, no sign
            x = np.abs(x) + np.float32(0.25)
        return x.astype(dtype)
