"""Shape rules of fft, triangular-solve and cholesky."""
from __future__ import annotations

from .infer import (C128, C64, F32, F64, Ctx, Shape, ShapeError, array, dynamic_of, human, kept, register,
                   register_check, type_name)


def _fft(c: Ctx) -> Shape:
    c.arity(1)
    s = c.array_op(0)
    t = c.attr("fft_type", "FFT")
    ln = c.dims_attr("fft_length")
    r = len(ln)
    et = s.element_type
    if not 1 <= r <= 3:
        raise ShapeError(f"fft only supports ranks 1-3; got {r}")
    if s.rank < r:
        raise ShapeError(f"fft of rank {r} requires an input of at least the same rank; got {human(s)}")
    if t in ("FFT", "IFFT"):
        if not et.is_complex:
            raise ShapeError(f"{t} requires a complex input type, found {type_name(et)}")
        return kept(s)
    if t == "RFFT":
        if et not in (F32, F64):
            raise ShapeError(f"RFFT requires an f32 or f64 input type, found {type_name(et)}")
        for i in range(r):
            k = s.rank - r + i
            if s.dims[k] != ln[i]:
                raise ShapeError(f"RFFT requires the innermost dimensions to match fft_length, but dimension "
                                 f"{k} is {s.dims[k]} and should be {ln[i]}")
        dims = list(s.dims)
        if ln[-1] != 0:
            dims[-1] = ln[-1] // 2 + 1
        return array(C64 if et == F32 else C128, dims, dynamic_of(s))
    if t == "IRFFT":
        if not et.is_complex:
            raise ShapeError(f"IRFFT requires a complex input type, found {type_name(et)}")
        for i in range(r - 1):
            k = s.rank - r + i
            if s.dims[k] != ln[i]:
                raise ShapeError(f"IRFFT requires all but one innermost dimensions to match fft_length, but "
                                 f"dimension {k} is {s.dims[k]} and should be {ln[i]}")
        last = s.dims[-1]
        if (last != 0 or ln[-1] != 0) and last != ln[-1] // 2 + 1:
            raise ShapeError(f"IRFFT requires the innermost dimension to match fft_length/2+1, but dimension "
                             f"{s.rank - 1} is {last} and should be {ln[-1] // 2 + 1}")
        dims = list(s.dims)
        dims[-1] = ln[-1]
        return array(F32 if et == C64 else F64, dims, dynamic_of(s))
    raise ShapeError(f"unknown fft_type {t}")


def _triangular_solve(c: Ctx) -> Shape:
    c.arity(2)
    a, b = c.array_op(0, "a"), c.array_op(1, "b")
    if not (a.element_type.is_float or a.element_type.is_complex) or a.element_type != b.element_type:
        raise ShapeError(f"expected identical floating-point or complex element types for triangular-solve; "
                         f"got {type_name(a.element_type)} and {type_name(b.element_type)}")
    if a.rank < 2:
        raise ShapeError(f"the 'a' argument to triangular-solve must have rank >= 2, got {human(a)}")
    if b.rank != a.rank:
        raise ShapeError(f"arguments to triangular-solve must have equal rank; got {human(b)} and {human(a)}")
    if a.dims[-2] != a.dims[-1]:
        raise ShapeError(f"the two minor dimensions of 'a' must have equal size, got {human(a)}")
    left = c.attr("left_side", False)
    if a.dims[-1] != b.dims[-2 if left else -1]:
        raise ShapeError(f"the shared dimension of 'a' and 'b' does not match, got shapes {human(a)} and "
                         f"{human(b)}")
    if a.dims[:-2] != b.dims[:-2]:
        raise ShapeError(f"the leading batch dimensions of the arguments to triangular-solve must be equal; "
                         f"got {human(b)} and {human(a)}")
    ta = c.attr("transpose_a", "NO_TRANSPOSE")
    if ta not in ("NO_TRANSPOSE", "TRANSPOSE", "ADJOINT"):
        raise ShapeError(f"invalid transpose option value for triangular-solve: {ta}")
    return kept(b)


def _cholesky(c: Ctx) -> Shape:
    c.arity(1)
    a = c.array_op(0, "a")
    if not (a.element_type.is_float or a.element_type.is_complex):
        raise ShapeError(f"expected a floating-point or complex element type for cholesky; got "
                         f"{type_name(a.element_type)}")
    if a.rank < 2:
        raise ShapeError(f"the 'a' argument to cholesky must have rank >= 2, got {human(a)}")
    if a.dims[-2] != a.dims[-1]:
        raise ShapeError(f"the two minor dimensions of 'a' must have equal size, got {human(a)}")
    return kept(a)


register("fft", _fft)
register("triangular-solve", _triangular_solve)
register("cholesky", _cholesky)


# --------------------------------------------------------------------------------------------------
# Verifier checks beyond the shape rule (run by shapes/verify.py's checker, `chk`)

def _check_triangular_solve(chk, comp, ins, operand_shapes, shape) -> None:
    # E105: triangular-solve's transpose_a has no usable default (TRANSPOSE_INVALID)
    if "transpose_a" not in ins.attrs:
        chk.add("E105", "attribute transpose_a is expected but not seen (triangular-solve): XLA's shape "
                        "inference rejects the default TRANSPOSE_INVALID (write transpose_a=NO_TRANSPOSE)",
                ins.loc, comp, ins)


register_check("triangular-solve", _check_triangular_solve)
