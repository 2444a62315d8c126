"""complex_dot: c64/c128 dots, where XLA:CPU's (Eigen's) summation order shows in every element (random
complex operands, whose real and imaginary parts cancel); see hlo_interp/ops/dot.py for the order and
where hlo-run follows it.  Cases whose results hlo-run computes with BLAS in some columns are compared
with a tolerance on those leaves' texts only where named; the others byte for byte.

    python -m tools.oracle regen complex_dot
"""
from __future__ import annotations

import ml_dtypes
import numpy as np

from ..core import Decl
from ..dot_text import dot_module

FAMILY = "complex_dot"
rng = np.random.default_rng(909)
CASES: list[Decl] = []
_TYPES = {"c64": np.complex64, "c128": np.complex128}


def cplx(shape, t):
    return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(_TYPES[t])


def _dims(shape):
    return ",".join(map(str, shape))


def case(name, text, *args, known=None):
    extra = {"known": known} if known else {}
    CASES.append(Decl(FAMILY, name, args, hlo=text, compare="exact", extra=extra))


for t in ("c64", "c128"):
    for (m, k, n) in ((8, 8, 8), (16, 64, 16), (2, 3, 8), (8, 300, 16), (12, 40, 8), (12, 40, 12), (6, 40, 20),
                      (13, 48, 12), (7, 24, 4)):
        a, b = cplx((m, k), t), cplx((k, n), t)
        case(f"matmul_{t}_{m}x{k}x{n}", f"""HloModule m
ENTRY e {{
  a = {t}[{m},{k}] parameter(0)
  b = {t}[{k},{n}] parameter(1)
  ROOT r = {t}[{m},{n}] dot(a, b), lhs_contracting_dims={{1}}, rhs_contracting_dims={{0}}
}}""", a, b)
    a, b = cplx((3, 8, 16), t), cplx((3, 16, 8), t)
    case(f"batch_{t}_3x8x16x8", f"""HloModule m
ENTRY e {{
  a = {t}[3,8,16] parameter(0)
  b = {t}[3,16,8] parameter(1)
  ROOT r = {t}[3,8,8] dot(a, b), lhs_batch_dims={{0}}, rhs_batch_dims={{0}}, lhs_contracting_dims={{2}}, rhs_contracting_dims={{1}}
}}""", a, b)
    a, b = cplx((20, 8), t), cplx((16, 20), t)
    case(f"transposed_operands_{t}", f"""HloModule m
ENTRY e {{
  a = {t}[20,8] parameter(0)
  b = {t}[16,20] parameter(1)
  ROOT r = {t}[8,16] dot(a, b), lhs_contracting_dims={{0}}, rhs_contracting_dims={{1}}
}}""", a, b)
    real = "f32" if t == "c64" else "f64"
    a = rng.standard_normal((8, 24)).astype(np.float32 if t == "c64" else np.float64)
    b = cplx((24, 16), t)
    case(f"real_converted_{t}", f"""HloModule m
ENTRY e {{
  a = {real}[8,24] parameter(0)
  ac = {t}[8,24] convert(a)
  b = {t}[24,16] parameter(1)
  ROOT r = {t}[8,16] dot(ac, b), lhs_contracting_dims={{1}}, rhs_contracting_dims={{0}}
}}""", a, b)
    # the column remainders, vector x matrix (Eigen's gemv), K cut into panels (Eigen's kc)
    for name, (m, k, n) in (("column_remainder", (12, 40, 13)), ("vector_matrix", (1, 20, 16)),
                            ("k_panels", (8, 600, 8))):
        a, b = cplx((m, k), t), cplx((k, n), t)
        case(f"{name}_{t}_{m}x{k}x{n}", f"""HloModule m
ENTRY e {{
  a = {t}[{m},{k}] parameter(0)
  b = {t}[{k},{n}] parameter(1)
  ROOT r = {t}[{m},{n}] dot(a, b), lhs_contracting_dims={{1}}, rhs_contracting_dims={{0}}
}}""", a, b)


# Every path XLA:CPU takes for complex dots (hlo_interp/ops/complex_dot.py), from a second stream so that
# the cases above keep their inputs
rng2 = np.random.default_rng(910)


def cplx2(shape, t):
    return (rng2.standard_normal(shape) + 1j * rng2.standard_normal(shape)).astype(_TYPES[t])


# HLO's name of an operand's NumPy type (the one other type the cases use is bf16)
_TYPE_NAME = {np.dtype(np.complex64): "c64", np.dtype(np.complex128): "c128", np.dtype(np.float32): "f32",
              np.dtype(np.float64): "f64", np.dtype(np.int32): "s32"}


def dot_case(name, t, ashape, bshape, dims, out_shape, a=None, b=None, pre=""):
    a = cplx2(ashape, t) if a is None else a
    b = cplx2(bshape, t) if b is None else b
    at, bt = _TYPE_NAME.get(a.dtype, "bf16"), _TYPE_NAME.get(b.dtype, "bf16")
    case(name, dot_module(at, ashape, bt, bshape, t, out_shape, dims), a, b)


_MM = "lhs_contracting_dims={1}, rhs_contracting_dims={0}"
for t in ("c64", "c128"):
    # result columns and rows off the kernel's blocks (last columns: one/half packet, the single last
    # column's four accumulators and scalar products)
    for (m, k, n) in ((5, 7, 3), (13, 19, 15), (9, 13, 11), (7, 5, 31), (6, 9, 2), (3, 3, 3), (2, 2, 2)):
        dot_case(f"blocks_{t}_{m}x{k}x{n}", t, (m, k), (k, n), _MM, (m, n))
    # contraction lengths: K = 1 is XLA's multiply; K > kc is cut into Eigen's panels
    for (m, k, n) in ((6, 1, 11), (6, 2, 11), (6, 7, 11), (6, 300, 11), (6, 301, 11), (6, 500, 11), (6, 1000, 11),
                      (5, 3000, 9), (9, 1, 1)):
        dot_case(f"k_{t}_{m}x{k}x{n}", t, (m, k), (k, n), _MM, (m, n))
    # vector x matrix (Eigen's gemv, blocks of 16 k from K = 128), matrix x vector, vector . vector
    # (XLA's reduce of products: fused up to 32, tree-reduced in windows of 32 beyond)
    for (m, k, n) in ((1, 7, 17), (1, 300, 17), (19, 300, 1), (1, 7, 1), (1, 32, 1), (1, 33, 1), (1, 1001, 1),
                      (1, 3000, 1)):
        dot_case(f"vector_{t}_{m}x{k}x{n}", t, (m, k), (k, n), _MM, (m, n))
    dot_case(f"vector_rank1_{t}_40", t, (40,), (40,), "lhs_contracting_dims={0}, rhs_contracting_dims={0}", ())
    dot_case(f"vector_rank1_{t}_40x9", t, (40,), (40, 9), "lhs_contracting_dims={0}, rhs_contracting_dims={0}",
             (9,))
    # batch dimensions (a matrix per batch element: gemm, gemv, reduce), several contracting / free dims
    _B = "lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_contracting_dims={1}"
    dot_case(f"batch_{t}_4x5x33x7", t, (4, 5, 33), (4, 33, 7), _B, (4, 5, 7))
    dot_case(f"batch_{t}_4x1x9x3", t, (4, 1, 9), (4, 9, 3), _B, (4, 1, 3))
    dot_case(f"batch_{t}_4x9x9x1", t, (4, 9, 9), (4, 9, 1), _B, (4, 9, 1))
    dot_case(f"batch_{t}_4x1x100x1", t, (4, 1, 100), (4, 100, 1), _B, (4, 1, 1))
    dot_case(f"contracting2_{t}", t, (4, 3, 5), (3, 5, 6), "lhs_contracting_dims={1,2}, rhs_contracting_dims={0,1}",
             (4, 6))
    dot_case(f"free2_{t}", t, (2, 3, 8), (8, 5), "lhs_contracting_dims={2}, rhs_contracting_dims={0}", (2, 3, 5))
    # operands converted from real and integer types (the texts: f32/bf16/int converted, then dot)
    real = (np.float32, ml_dtypes.bfloat16) if t == "c64" else (np.float64, np.float32)
    for r in real + (np.int32,):
        rn = np.dtype(r).name
        ra = rng2.integers(-50, 50, (7, 40)).astype(r) if r is np.int32 else rng2.standard_normal((7, 40)).astype(r)
        rb = rng2.integers(-50, 50, (40, 13)).astype(r) if r is np.int32 else rng2.standard_normal((40, 13)).astype(r)
        dot_case(f"converted_{rn}_{t}_7x40x13", t, (7, 40), (40, 13), _MM, (7, 13), a=ra, b=rb)
    # inf, NaN, signed zeros: alpha's complex product turns an infinite component's partner into NaN
    e = cplx2((9, 13), t)
    e[0, 0], e[1, 3], e[2, 5], e[3, 1] = np.inf, complex(0, -np.inf), np.nan, complex(-0.0, -0.0)
    dot_case(f"edges_{t}_9x13x11", t, (9, 13), (13, 11), _MM, (9, 11), a=e)
# Eigen's cost model runs these on 2 threads (kc 320; for c64 (31, 321, 72) result columns in blocks of
# 36) or shards K over the threads (buffers added at the end)
for t, (m, k, n) in (("c64", (31, 321, 72)), ("c64", (44, 400, 44)), ("c128", (27, 321, 40)),
                     ("c128", (28, 400, 33))):
    dot_case(f"threads_{t}_{m}x{k}x{n}", t, (m, k), (k, n), _MM, (m, n))


# transpose(dot(a, b)) of the last two dimensions: XLA computes dot(b, a) (its algebraic simplifier), unless
# the dot has another user or the transpose only moves a dimension of 1 (a reshape)
for t in ("c64", "c128"):
    for name, (ash, bsh, ds, dims, tsh, perm, root) in {
            "transposed_result": ((13, 20), (20, 11), (13, 11), _MM, (11, 13), "1,0", "t"),
            "transposed_result_batch": ((3, 13, 20), (3, 20, 11), (3, 13, 11),
                                        "lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2}, "
                                        "rhs_contracting_dims={1}", (3, 11, 13), "0,2,1", "t"),
            "transposed_result_shared": ((13, 20), (20, 11), (13, 11), _MM, (11, 13), "1,0", "both"),
            "transposed_result_row": ((1, 20), (20, 11), (1, 11), _MM, (11, 1), "1,0", "t")}.items():
        root_line = (f"  ROOT t = {t}[{_dims(tsh)}] transpose(d), dimensions={{{perm}}}" if root == "t" else
                     f"  t = {t}[{_dims(tsh)}] transpose(d), dimensions={{{perm}}}\n"
                     f"  ROOT r = ({t}[{_dims(tsh)}], {t}[{_dims(ds)}]) tuple(t, d)")
        case(f"{name}_{t}", f"""HloModule m
ENTRY e {{
  a = {t}[{_dims(ash)}] parameter(0)
  b = {t}[{_dims(bsh)}] parameter(1)
  d = {t}[{_dims(ds)}] dot(a, b), {dims}
{root_line}
}}""", cplx2(ash, t), cplx2(bsh, t))


# zero-element dots: XLA makes them a broadcast of +0
for t, (m, k, n) in (("c64", (4, 0, 3)), ("c64", (0, 5, 3)), ("c128", (1, 0, 5)), ("c128", (5, 0, 1))):
    dot_case(f"empty_{t}_{m}x{k}x{n}", t, (m, k), (k, n), _MM, (m, n))


# the products after a dot: a broadcast second factor constant along the innermost dimension contracts
# the imaginary part the other way; a constant with equal parts contracts nothing (XLA's gemm_rewriter_test
# texts multiply a dot by (3, 3))
for t in ("c64", "c128"):
    for name, (cr, ci) in (("dot_times_constant", (3, 3)), ("dot_times_constant_unequal", (3, 2))):
        case(f"{name}_{t}", f"""HloModule m
ENTRY e {{
  x = {t}[6,5] parameter(0)
  y = {t}[5,7] parameter(1)
  k = {t}[] constant(({cr}, {ci}))
  kb = {t}[6,7] broadcast(k), dimensions={{}}
  d = {t}[6,7] dot(x, y), lhs_contracting_dims={{1}}, rhs_contracting_dims={{0}}
  ROOT m = {t}[6,7] multiply(d, kb)
}}""", cplx2((6, 5), t), cplx2((5, 7), t))
    case(f"multiply_row_broadcast_{t}", f"""HloModule m
ENTRY e {{
  x = {t}[64,8] parameter(0)
  v = {t}[64] parameter(1)
  vb = {t}[64,8] broadcast(v), dimensions={{0}}
  ROOT m = {t}[64,8] multiply(x, vb)
}}""", cplx2((64, 8), t), cplx2((64,), t))


def declare() -> list[Decl]:
    return list(CASES)
