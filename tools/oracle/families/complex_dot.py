"""complex_dot: c64/c128 dots, where XLA:CPU's (Eigen's) summation order shows in every element (random
complex operands, whose real and imaginary parts cancel); see hlo_interp/ops/dot.py for the order and
where hlo-run follows it.  Cases whose results hlo-run computes with BLAS in some columns are compared
with a tolerance on those leaves' texts only where named; the others byte for byte.

    python -m tools.oracle regen complex_dot
"""
from __future__ import annotations

import numpy as np

from ..core import Decl

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


def declare() -> list[Decl]:
    return list(CASES)
