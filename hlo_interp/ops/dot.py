"""dot (dot_general): batch and contracting dimensions, any number of each.

Result dimensions: batch dims (in lhs_batch_dims order), then the lhs free dims, then the rhs free
dims, each in operand order.  The result element type is the instruction's (XLA's
preferred_element_type); operands may be of different types.

How each type computes (XLA:CPU's behaviour):
  * f32, f64: BLAS through np.matmul on (batch, M, K) x (batch, K, N) views.  The summation order differs
    from XLA:CPU's (Eigen/oneDNN), so results agree to a few ulps (rtol ~1e-6·sqrt(K)).
  * c64, c128 in XLA:CPU's order (complex_matmul; ops/complex_dot.py): Eigen's gemm kernel (four real sums
    per result, rounded products, no fma, accumulators by result position, K cut into Eigen's panels) for
    results of 2 or more rows, Eigen's matrix x vector kernel for one row (vector x matrix), XLA's reduce of
    products for a 1 x 1 result (vector . vector), XLA's multiply for K = 1.  BLAS's order only for dots
    beyond EIGEN_ORDER_MAX_WORK.
  * bf16, f16, f8 types, f4: operands converted to f32, f32 accumulation, ONE rounding to the result
    type at the end.
  * integers: exact modular arithmetic — operands converted to the result type and multiplied with
    wrap-around (computed in 64-bit, exact through float64 BLAS when the products cannot exceed 2**53,
    then wrapped to the result type).  s8 x s8 -> s32 etc.
  * pred x pred -> pred: OR of ANDs.  Other operands with a pred result: the dot in the operands' type,
    then `!= 0`.  Float operands with an integer result: the dot in the operands' type (a bf16 dot
    rounds to bf16), then XLA's float->int convert (measured on bf16/f16/f32 dots and convolutions).
  * integer operands with a float result: operands converted to the result's compute type first.
  * operand_precision and algorithm= are accepted and ignored: XLA:CPU computes f32 dots in f32 for
    every precision setting (DEFAULT/HIGH/HIGHEST are for TPU/GPU), so does this evaluator.

scaled-dot (at the end): XLA's own lowering of it, each operand times its scale, then a dot.
"""
from __future__ import annotations

import functools
import math
from typing import Sequence

import ml_dtypes
import numpy as np

from ..types import dtype_kind, from_dtype
from . import complex_dot
from .numerics import complex_multiply
from .registry import error_at, kernel, unsupported


_kind = dtype_kind


def _compute_dtype(lt, rt, out):
    """The dtype operands are converted to before the contraction."""
    ko = _kind(out)
    kinds = {_kind(lt), _kind(rt)}
    if ko in ("sint", "uint"):
        if kinds <= {"sint", "uint", "pred"}:
            return "int"
        return np.float64  # float operands, integer result: compute wide, convert at the end
    if ko == "pred":
        return "pred"
    types = {np.dtype(lt), np.dtype(rt), np.dtype(out)}
    wide = bool(types & {np.dtype(np.float64), np.dtype(np.complex128)})
    if ko == "complex" or "complex" in kinds:
        return np.complex128 if wide else np.complex64
    return np.float64 if wide else np.float32


@functools.lru_cache(maxsize=1024)
def _plan(lshape, rshape, ldt, rdt, out_dtype, lb, rb, lc, rc):
    """Everything about a dot that depends only on shapes, types and dimension numbers."""
    lf = tuple(d for d in range(len(lshape)) if d not in lb and d not in lc)
    rf = tuple(d for d in range(len(rshape)) if d not in rb and d not in rc)
    bshape = tuple(lshape[d] for d in lb)
    B = math.prod(bshape)
    M = math.prod(lshape[d] for d in lf)
    N = math.prod(rshape[d] for d in rf)
    K = math.prod(lshape[d] for d in lc)
    out_shape = bshape + tuple(lshape[d] for d in lf) + tuple(rshape[d] for d in rf)
    if lb:
        lperm, ash = lb + lf + lc, (B, M, K)
        rperm, bsh = rb + rc + rf, (B, K, N)
    else:  # 2-D operands: NumPy hands transposed views to BLAS without copying
        lperm, ash = lf + lc, (M, K)
        rperm, bsh = rc + rf, (K, N)
    cd = _compute_dtype(ldt, rdt, out_dtype)
    fast = not isinstance(cd, str) and np.dtype(cd) == ldt == rdt == out_dtype
    return lperm, ash, rperm, bsh, out_shape, K, cd, fast


def dot_general(lhs: np.ndarray, rhs: np.ndarray, out_dtype, *,
                lhs_batch: Sequence[int] = (), rhs_batch: Sequence[int] = (),
                lhs_contracting: Sequence[int] = (), rhs_contracting: Sequence[int] = ()) -> np.ndarray:
    lb, rb, lc, rc = (tuple(int(d) for d in v) for v in (lhs_batch, rhs_batch, lhs_contracting, rhs_contracting))
    out_dtype = np.dtype(out_dtype)
    ko, kl, kr = _kind(out_dtype), _kind(lhs.dtype), _kind(rhs.dtype)
    if (ko == "pred" and "pred" not in (kl, kr)) or (ko in ("sint", "uint") and kl == kr == "float"):
        # XLA:CPU computes the dot in the operands' type (wrapping, rounding, overflowing as that
        # type does), then tests the result against zero: f32 .5*.5 + .25*2 is true, s8 16*16 false;
        # or converts it to the integer type (a bf16 dot rounds to bf16 first, then truncates)
        wide = lhs.dtype if lhs.dtype == rhs.dtype else np.result_type(lhs.dtype, rhs.dtype)
        r = dot_general(lhs, rhs, wide, lhs_batch=lb, rhs_batch=rb, lhs_contracting=lc, rhs_contracting=rc)
        return r != 0 if ko == "pred" else _float_to_int(r, out_dtype)
    lperm, ash, rperm, bsh, out_shape, K, cd, fast = _plan(lhs.shape, rhs.shape, lhs.dtype, rhs.dtype, out_dtype,
                                                           lb, rb, lc, rc)
    a = lhs.transpose(lperm).reshape(ash)
    b = rhs.transpose(rperm).reshape(bsh)
    if fast:  # f32/f64/c64/c128 throughout: straight to BLAS
        with np.errstate(all="ignore"):  # inf * 0 -> NaN, as in XLA, without NumPy's warning
            if K == 1:  # no sum: the plain product (BLAS would add it to +0 and lose a -0); XLA's multiply
                bb = b.reshape(b.shape[:-2] + (1, b.shape[-1]))
                if a.dtype.kind == "c":  # XLA: multiply(a, broadcast(b)); b invariant when N == 1
                    inv = bb.shape[-1] == 1 and a.shape[-2] > 1
                    return complex_multiply(a, bb, y_invariant=inv).reshape(out_shape)
                return np.multiply(a, bb).reshape(out_shape)
            if a.dtype.kind == "c":
                return complex_matmul(a, b).reshape(out_shape)
            return np.matmul(a, b).reshape(out_shape)
    if cd == "pred":
        r = np.matmul(a.astype(np.int64) != 0, b.astype(np.int64) != 0)  # bool matmul = OR of ANDs
        return r.reshape(out_shape).astype(out_dtype)
    if cd == "int":
        wide = np.uint64 if _kind(out_dtype) == "uint" else np.int64
        # operands converted to the result type first (wrapping), as XLA does
        ai = a.astype(out_dtype).astype(wide) if a.dtype != out_dtype else a.astype(wide)
        bi = b.astype(out_dtype).astype(wide) if b.dtype != out_dtype else b.astype(wide)
        r = None
        if K > 0 and ai.size and bi.size:
            amax = float(np.max(np.abs(ai.astype(np.float64))))
            bmax = float(np.max(np.abs(bi.astype(np.float64))))
            if amax * bmax * K < 2.0 ** 53:  # exact in float64: use BLAS
                r = np.matmul(ai.astype(np.float64), bi.astype(np.float64))
                r = r.astype(np.int64)
        if r is None:
            with np.errstate(all="ignore"):
                r = np.matmul(ai, bi)  # wraps modulo 2**64; only the low bits matter
        return r.reshape(out_shape).astype(out_dtype)
    with np.errstate(all="ignore"):
        if K == 1 and np.dtype(cd).kind == "c":
            inv = b.shape[-1] == 1 and a.shape[-2] > 1
            r = complex_multiply(a.astype(cd, copy=False), b.astype(cd, copy=False), y_invariant=inv)
        elif K == 1:
            r = np.multiply(a.astype(cd, copy=False), b.astype(cd, copy=False))
        elif np.dtype(cd).kind == "c":
            r = complex_matmul(a.astype(cd, copy=False), b.astype(cd, copy=False))
        else:
            r = np.matmul(a.astype(cd, copy=False), b.astype(cd, copy=False))
        ko = _kind(out_dtype)
        if ko == "float" and _kind(r.dtype) == "complex":
            r = r.real
        if ko in ("sint", "uint"):
            r = _float_to_int(r, out_dtype)
        elif r.dtype != out_dtype:
            r = r.astype(out_dtype)  # one rounding (bf16/f16/f8 results)
    return r.reshape(out_shape)


# complex_matmul follows XLA:CPU's order up to this much work (batch x M x N x K multiply-adds, about 4 s of
# CPU here), BLAS's beyond
EIGEN_ORDER_MAX_WORK = 1 << 30


def complex_matmul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a @ b for complex (..., M, K) x (..., K, N) arrays of one type, K > 1, in XLA:CPU's order
    (ops/complex_dot.py) where it is modelled, BLAS's elsewhere."""
    M, K, N = a.shape[-2], a.shape[-1], b.shape[-1]
    batch = math.prod(np.broadcast_shapes(a.shape[:-2], b.shape[:-2]))
    if batch * M * N * K == 0:  # XLA: a broadcast of +0 (no sum at all when K is 0)
        return np.zeros(np.broadcast_shapes(a.shape[:-2], b.shape[:-2]) + (M, N), a.dtype)
    if batch * M * N * K > EIGEN_ORDER_MAX_WORK:
        return np.matmul(a, b)
    if M == 1 and N == 1:
        return complex_dot.vdot(a, b)
    if M == 1:
        return complex_dot.gemv(a, b)
    return complex_dot.gemm(a, b, complex_dot.k_plan(M, K, N, a.dtype))


def _float_to_int(r: np.ndarray, dtype) -> np.ndarray:
    """XLA's float->int convert: truncation toward zero, saturation, NaN -> 0."""
    r = np.real(r).astype(np.float64)
    r = np.where(np.isnan(r), 0.0, np.trunc(r))
    kind = _kind(dtype)
    bits = from_dtype(dtype).bits
    lo, hi = (-(2 ** (bits - 1)), 2 ** (bits - 1) - 1) if kind == "sint" else (0, 2 ** bits - 1)
    out = np.empty(r.shape, dtype=np.uint64 if kind == "uint" else np.int64)
    big = r >= float(hi)
    small = r <= float(lo)
    mid = ~(big | small)
    out[mid] = r[mid]
    out[big] = hi
    out[small] = lo
    return out.astype(dtype)


@kernel("dot")
def _k_dot(ins, ctx):
    a = ins.attrs
    lb = tuple(a.get("lhs_batch_dims", ()))
    rb = tuple(a.get("rhs_batch_dims", ()))
    lc = tuple(a.get("lhs_contracting_dims", ()))
    rc = tuple(a.get("rhs_contracting_dims", ()))
    if a.get("sparsity") is not None:
        raise unsupported(ins, "sparse dot (sparsity=)")
    sh = ins.shape
    if sh is None or sh.is_tuple:
        raise error_at(ins, "dot needs an array result shape")
    out_dtype = sh.element_type.dtype
    if len(lb) != len(rb) or len(lc) != len(rc):
        raise error_at(ins, "dot: lhs and rhs need as many batch dimensions and as many contracting "
                            "dimensions as each other")

    def run(lhs, rhs):
        for name, x, dims in (("lhs", lhs, lb + lc), ("rhs", rhs, rb + rc)):
            if len(set(dims)) != len(dims) or any(not 0 <= d < x.ndim for d in dims):
                raise error_at(ins, f"dot: {name} dimensions {list(dims)} are invalid for rank {x.ndim}")
        for x, y, what in ((lb, rb, "batch"), (lc, rc, "contracting")):
            if any(lhs.shape[i] != rhs.shape[j] for i, j in zip(x, y)):
                raise error_at(ins, f"dot: {what} dimension sizes differ: lhs {list(lhs.shape)}, "
                                    f"rhs {list(rhs.shape)}")
        return dot_general(lhs, rhs, out_dtype, lhs_batch=lb, rhs_batch=rb,
                           lhs_contracting=lc, rhs_contracting=rc)
    return run


# --------------------------------------------------------------------------------------------------
# scaled-dot

def _scaled_target_type(t1, t2) -> np.dtype:
    """XLA's GetTargetType (xla/backends/gpu/transforms/scaled_dot_rewriter.cc): both narrower than 16
    bits -> bf16; equal -> that type; equal widths -> f32; else the wider one."""
    b1, b2 = from_dtype(t1).bits, from_dtype(t2).bits
    if b1 < 16 and b2 < 16:
        return np.dtype(ml_dtypes.bfloat16)
    if np.dtype(t1) == np.dtype(t2):
        return np.dtype(t1)
    if b1 == b2:
        return np.dtype(np.float32)
    return np.dtype(t1) if b1 > b2 else np.dtype(t2)


def _convert(x, dt):
    from .elementwise import convert
    return convert(x, dt)


def _dequantize(x, scale, side, err):
    """operand * scale, both first converted to their target type; a non-scalar scale must divide
    the operand's dimensions and each scale element covers a block of consecutive elements."""
    t = _scaled_target_type(x.dtype, scale.dtype)
    x, scale = _convert(x, t), _convert(scale, t)
    if scale.ndim:
        if scale.ndim != x.ndim or any(n % m for n, m in zip(x.shape, scale.shape)):
            raise err(f"scaled-dot: the {side} scale {list(scale.shape)} does not divide the {side} "
                      f"{list(x.shape)} dimension by dimension")
        for ax, (n, m) in enumerate(zip(x.shape, scale.shape)):
            if n != m:
                scale = np.repeat(scale, n // m, axis=ax)
    with np.errstate(all="ignore"):
        wide = np.complex128 if t.kind == "c" else np.float64 if t.kind in "fV" or t.name == "bfloat16" else None
        if wide is None:  # integers: the type's own (wrapping) product
            return (x * scale).astype(t)
        return (x.astype(wide) * scale.astype(wide)).astype(t)  # exact product, one rounding


@kernel("scaled-dot")
def _k_scaled_dot(ins, ctx):
    """scaled-dot(lhs, rhs, lhs_scale, rhs_scale), dot dimension numbers: XLA's own lowering
    (ScaledDotRewriter, xla/backends/gpu/transforms/scaled_dot_rewriter.cc: Dequantize(dot, 0, 2),
    Dequantize(dot, 1, 3), UpscaleBoth, a dot in GetTargetType(operand type, result type), then a
    convert to the result type): each operand times its scale (a scalar scale multiplies every
    element; a block scale is repeated over operand_dim / scale_dim consecutive elements), in the
    common type of operand and scale; both operands then converted to one type; the dot.  The NVFP4
    form with global scales (6 operands) is refused.  (Older XLA ordered the operands lhs, lhs_scale,
    rhs, rhs_scale and ignored scalar scales: this follows the current order, which hlo_interp's
    shape rule checks.)"""
    if len(ins.operands) != 4:
        raise unsupported(ins, f"scaled-dot with {len(ins.operands)} operands (the global-scale form)")
    a = ins.attrs
    if a.get("sparsity") is not None:
        raise unsupported(ins, "sparse scaled-dot")
    lb, rb = tuple(a.get("lhs_batch_dims", ())), tuple(a.get("rhs_batch_dims", ()))
    lc, rc = tuple(a.get("lhs_contracting_dims", ())), tuple(a.get("rhs_contracting_dims", ()))
    sh = ins.shape
    if sh is None or sh.is_tuple:
        raise error_at(ins, "scaled-dot needs an array result shape")
    out_dt = np.dtype(sh.element_type.dtype)

    def err(msg):
        return error_at(ins, msg)

    def run(lhs, rhs, ls, rs):
        x = _dequantize(np.asarray(lhs), np.asarray(ls), "lhs", err)
        y = _dequantize(np.asarray(rhs), np.asarray(rs), "rhs", err)
        t = _scaled_target_type(x.dtype, y.dtype)
        x, y = _convert(x, t), _convert(y, t)
        for name, v, dims in (("lhs", x, lb + lc), ("rhs", y, rb + rc)):
            if len(set(dims)) != len(dims) or any(not 0 <= d < v.ndim for d in dims):
                raise err(f"scaled-dot: {name} dimensions {list(dims)} are invalid for rank {v.ndim}")
        if any(x.shape[i] != y.shape[j] for i, j in zip(lb + lc, rb + rc)):
            raise err(f"scaled-dot: batch/contracting sizes differ: lhs {list(x.shape)}, rhs {list(y.shape)}")
        dt = _scaled_target_type(t, out_dt)
        r = dot_general(x, y, dt, lhs_batch=lb, rhs_batch=rb, lhs_contracting=lc, rhs_contracting=rc)
        r = _convert(r, out_dt)
        if tuple(r.shape) != tuple(sh.dims):
            raise err(f"scaled-dot: result {list(r.shape)} does not match the instruction's {list(sh.dims)}")
        return r
    return run
