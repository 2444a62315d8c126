#!/usr/bin/env python3
"""Regenerate tests/golden/custom_call/: XLA:CPU-computed cases for the custom-call targets (dev-only:
needs JAX; made with jax/jaxlib 0.10.2).

Each case is one case directory (tools/oracle/writer.py; tests/golden/README.md): `before.hlo`
(jax.jit(f).lower(...).as_text(dialect="hlo"), or hand-written HLO text), `after.hlo` (XLA:CPU's optimized
module, where the LAPACK / TopK custom calls are), inputs, XLA:CPU's outputs and case.json.
`compare`: "exact" (bit for bit, NaN matches NaN) or {"rtol": r, "atol": a}.  `check` (optional) names
what tests/test_ops_custom_call.py verifies instead of elementwise equality, for results LAPACK does
not determine uniquely (e.g. "qr": Q·R = A and Qᴴ·Q = I, R = Rᵀ's triangle up to the signs of rows).

Hand-written HLO is parsed by XLA's own parser, converted to StableHLO and compiled by the XLA:CPU
client JAX uses (as tools/make_golden.py does).

Usage:  python3 tools/make_custom_call_vectors.py [--only REGEX]
"""
from __future__ import annotations

import os

os.environ.setdefault("JAX_PLATFORMS", "cpu")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import argparse
import json
import re
import sys
import warnings
from pathlib import Path

import ml_dtypes
import numpy as np

warnings.filterwarnings("ignore")
REPO = Path(__file__).resolve().parent.parent
FAMILY = "custom_call"  # tests/golden/custom_call/
NATIVE = {"float32", "float64", "complex64", "complex128", "int32", "int64", "uint32", "int8", "uint8",
          "int16", "uint16", "float16", "bool"}
TOL32 = {"rtol": 1e-4, "atol": 1e-5}
TOL64 = {"rtol": 1e-10, "atol": 1e-12}

import jax
import jax.numpy as jnp

jax.config.update("jax_enable_x64", True)
sys.path.insert(0, str(Path(__file__).resolve().parent))
from oracle import runner  # noqa: E402
from oracle.writer import GOLDEN, write_case  # noqa: E402


def save(name, before, after, args, outs, compare, check=None, note="", source="jax.jit"):
    extra = {}
    if note:
        extra["note"] = note
    if check:
        extra["check"] = check  # what tests/test_ops_custom_call.py verifies instead of elementwise equality
    write_case(FAMILY, name, {"before": before, "after": after}, args, outs, source=source, compare=compare,
               extra=extra)


def jax_case(name, fn, args, compare, check=None, note=""):
    before, after, leaves = runner.run_jax(fn, args, keep_unused=False)
    save(name, before, after, args, leaves, compare, check, note)


def hlo_case(name, text, args, compare, check=None, note=""):
    after, leaves = runner.run_hlo(text, args)
    save(name, text, after, args, leaves, compare, check, note, source="hand-written HLO")


def gpu_case(name, fn, a, check, compare, many=False):
    args = list(a) if many else [a]
    texts = [runner.lower_for_platform(fn, args, p) for p in ("cuda", "rocm")]
    _, _, leaves = runner.run_jax(fn, args, keep_unused=False)
    save(name, texts[0], texts[1], args, leaves, compare, check,
         "JAX lowered for CUDA (before) and ROCm (after), not optimized; expected: the same function on XLA:CPU",
         source=GPU_SOURCE)


GPU_SOURCE = "jax.jit lowered for CUDA (before) and ROCm (after); outputs: the same function on XLA:CPU"


RNG = np.random.default_rng(5)


def rand(shape, dtype):
    dtype = np.dtype(dtype)
    if dtype.kind == "c":
        return (RNG.standard_normal(shape) + 1j * RNG.standard_normal(shape)).astype(dtype)
    return RNG.standard_normal(shape).astype(dtype)


def spd(n, dtype, batch=()):
    a = rand(batch + (n, n), dtype)
    return (a @ np.conj(np.swapaxes(a, -1, -2)) + n * np.eye(n)).astype(dtype)


def tol(dtype):
    return TOL64 if np.dtype(dtype) in (np.float64, np.complex128) else TOL32


def _geqrf(m):
    from jax._src.lax.linalg import geqrf
    return geqrf(m)


def _qrp(m):
    import jax.scipy.linalg as jsl
    return jsl.qr(m, pivoting=True, mode="economic")


def cases():
    L = jax.lax.linalg
    # ---- TopK (f32: XLA:CPU's runtime top-k; ties, NaN, -0)
    x = np.array([[1, 3, 3, np.nan, -0.0, 0.0, -np.inf, 2], [5, 5, 5, 5, -1, -np.nan, 7, 7]], np.float32)
    yield "topk_f32_ties_nan", lambda: jax_case("topk_f32_ties_nan", lambda v: jax.lax.top_k(v, 5), [x], "exact")
    yield "topk_f32_batch", lambda: jax_case("topk_f32_batch", lambda v: jax.lax.top_k(v, 3),
                                             [rand((2, 3, 10), np.float32)], "exact")
    yield "approx_max_k", lambda: jax_case("approx_max_k", lambda v: jax.lax.approx_max_k(v, 4),
                                           [rand((3, 50), np.float32)], "exact")
    for dt in ("float64", "int32", "bfloat16"):
        v = (RNG.integers(-4, 4, (3, 9))).astype(getattr(ml_dtypes, dt, None) or np.dtype(dt))
        yield f"topk_{dt}", (lambda v=v, dt=dt: jax_case(f"topk_{dt}", lambda a: jax.lax.top_k(a, 4), [v], "exact"))
    # hand-written TopK on s32 and f64 with a 4-parameter comparator
    # (XLA:CPU accepts the TopK custom call for f32 only: "TopK expects F32 data type for input")
    for et, npdt in (("f32", np.float32),):
        text = f"""HloModule topk_{et}

cmp {{
  a = {et}[] parameter(0)
  b = {et}[] parameter(1)
  ia = s32[] parameter(2)
  ib = s32[] parameter(3)
  ROOT gt = pred[] compare(a, b), direction=GT
}}

ENTRY main {{
  x = {et}[4,7] parameter(0)
  ROOT t = ({et}[4,3], s32[4,3]) custom-call(x), custom_call_target="TopK", called_computations={{cmp}}
}}
"""
        v = RNG.integers(-3, 3, (4, 7)).astype(npdt)
        yield f"topk_hlo_{et}", (lambda text=text, v=v, et=et: hlo_case(f"topk_hlo_{et}", text, [v], "exact"))
    # ---- sharding annotations on one device
    text = """HloModule sharding

ENTRY main {
  x = f32[4,3] parameter(0)
  s = f32[4,3] custom-call(x), custom_call_target="Sharding", sharding={replicated}
  f = f32[4,3] custom-call(s), custom_call_target="SPMDFullToShardShape", sharding={manual}
  n = f32[4,3] negate(f)
  ROOT g = f32[4,3] custom-call(n), custom_call_target="SPMDShardToFullShape", sharding={replicated}
}
"""
    yield "sharding_identity", lambda: hlo_case("sharding_identity", text, [rand((4, 3), np.float32)], "exact")
    # ---- potrf
    for dt in ("float32", "float64", "complex64", "complex128"):
        for lower in (True, False):
            nm = f"potrf_{dt}_{'lower' if lower else 'upper'}"
            a = spd(4, dt, (2,))
            yield nm, (lambda nm=nm, a=a, lower=lower, dt=dt: jax_case(
                nm, lambda m: (L.cholesky(m, symmetrize_input=False) if lower else
                               jnp.conj(jnp.swapaxes(L.cholesky(jnp.conj(jnp.swapaxes(m, -1, -2)),
                                                                symmetrize_input=False), -1, -2))), [a], tol(dt)))
    nm = "potrf_not_pd"
    a = np.array([[[4, 2, 0], [2, 1, 0], [0, 0, 1]], [[1, 0, 0], [0, 2, 0], [0, 0, 3]]], np.float32)
    yield nm, lambda: jax_case(nm, lambda m: L.cholesky(m, symmetrize_input=False), [a], TOL32)
    # ---- trsm: every side/uplo/trans/diag
    for dt in ("float32", "complex128"):
        for left in (True, False):
            for lower in (True, False):
                for ta in (0, 1, 2):
                    for unit in (False, True):
                        nm = f"trsm_{dt}_{'L' if left else 'R'}{'l' if lower else 'u'}{'NTC'[ta]}{'U' if unit else 'N'}"
                        a = (rand((2, 4, 4), dt) + 3 * np.eye(4)).astype(dt)
                        b = rand((2, 4, 3) if left else (2, 3, 4), dt)
                        yield nm, (lambda nm=nm, a=a, b=b, left=left, lower=lower, ta=ta, unit=unit, dt=dt: jax_case(
                            nm, lambda p, q: L.triangular_solve(p, q, left_side=left, lower=lower,
                                                                transpose_a=ta > 0, conjugate_a=ta == 2,
                                                                unit_diagonal=unit), [a, b], tol(dt)))
    # ---- getrf (lu) and solve (getrf + trsm)
    for dt in ("float32", "float64", "complex64", "complex128"):
        for shp in ((4, 4), (2, 5, 3), (3, 6)):
            nm = f"getrf_{dt}_{'x'.join(map(str, shp))}"
            a = rand(shp, dt)
            yield nm, (lambda nm=nm, a=a, dt=dt: jax_case(nm, lambda m: L.lu(m), [a], tol(dt)))
    a = np.array([[0, 0, 1], [0, 0, 2], [1, 2, 3]], np.float32)
    yield "getrf_singular", lambda: jax_case("getrf_singular", lambda m: L.lu(m), [a], TOL32)
    yield "solve_f32", lambda: jax_case("solve_f32", jnp.linalg.solve, [rand((3, 3), np.float32),
                                                                         rand((3, 2), np.float32)], TOL32)
    yield "inv_f64", lambda: jax_case("inv_f64", jnp.linalg.inv, [rand((2, 5, 5), np.float64)], TOL64)
    # ---- qr (geqrf + orgqr/ungqr)
    for dt in ("float32", "float64", "complex64", "complex128"):
        for shp, mode in (((5, 3), "reduced"), ((5, 3), "complete"), ((3, 5), "reduced"), ((2, 4, 4), "reduced")):
            nm = f"qr_{dt}_{'x'.join(map(str, shp))}_{mode}"
            a = rand(shp, dt)
            yield nm, (lambda nm=nm, a=a, mode=mode, dt=dt: jax_case(
                nm, lambda m: jnp.linalg.qr(m, mode=mode), [a], tol(dt), check="qr"))
        nm = f"geqrf_{dt}"
        a = rand((5, 3), dt)
        yield nm, (lambda nm=nm, a=a, dt=dt: jax_case(nm, lambda m: _geqrf(m), [a], tol(dt)))
    # ---- eigh
    for dt in ("float32", "float64", "complex64", "complex128"):
        for lower in (True, False):
            nm = f"eigh_{dt}_{'lower' if lower else 'upper'}"
            a = rand((2, 4, 4), dt)
            a = a + np.conj(np.swapaxes(a, -1, -2))
            yield nm, (lambda nm=nm, a=a, lower=lower, dt=dt: jax_case(
                nm, lambda m: L.eigh(m, lower=lower, symmetrize_input=False), [a], tol(dt), check="eigh"))
    nm = "eigvalsh_f64"
    a = rand((5, 5), np.float64)
    yield nm, lambda: jax_case(nm, lambda m: jnp.linalg.eigvalsh(m + m.T), [a], TOL64)
    # ---- svd
    for dt in ("float32", "float64", "complex64", "complex128"):
        for shp, full in (((5, 3), False), ((3, 5), True), ((2, 4, 4), False)):
            nm = f"svd_{dt}_{'x'.join(map(str, shp))}_{'full' if full else 'econ'}"
            a = rand(shp, dt)
            yield nm, (lambda nm=nm, a=a, full=full, dt=dt: jax_case(
                nm, lambda m: jnp.linalg.svd(m, full_matrices=full), [a], tol(dt), check="svd"))
        nm = f"svdvals_{dt}"
        a = rand((4, 6), dt)
        yield nm, (lambda nm=nm, a=a, dt=dt: jax_case(nm, lambda m: jnp.linalg.svd(m, compute_uv=False),
                                                      [a], tol(dt)))
    # ---- eig (geev): right eigenvectors / values only
    for dt in ("float32", "float64", "complex64", "complex128"):
        nm = f"eig_{dt}"
        a = rand((2, 4, 4), dt)
        yield nm, (lambda nm=nm, a=a, dt=dt: jax_case(
            nm, lambda m: L.eig(m, compute_left_eigenvectors=False), [a], tol(dt), check="eig"))
        nm = f"eigvals_{dt}"
        a = rand((5, 5), dt)
        yield nm, (lambda nm=nm, a=a, dt=dt: jax_case(nm, jnp.linalg.eigvals, [a], tol(dt), check="eigvals"))
    # ---- hessenberg (gehrd)
    for dt in ("float32", "float64", "complex64", "complex128"):
        nm = f"gehrd_{dt}"
        a = rand((2, 5, 5), dt)
        yield nm, (lambda nm=nm, a=a, dt=dt: jax_case(nm, L.hessenberg, [a], tol(dt)))
    # ---- tridiagonal solve (gtsv): with and without row interchanges, a singular system
    for dt in ("float32", "float64", "complex64", "complex128"):
        nm = f"gtsv_{dt}"
        n = 6
        dl, d, du = rand((2, n), dt), rand((2, n), dt), rand((2, n), dt)
        dl[..., 0] = 0
        du[..., -1] = 0
        b = rand((2, n, 3), dt)
        yield nm, (lambda nm=nm, dl=dl, d=d, du=du, b=b, dt=dt: jax_case(
            nm, lambda *v: L.tridiagonal_solve(*v), [dl, d, du, b], tol(dt)))
    dl = np.array([0, 1, 1, 1], np.float32)
    d = np.array([0, 0, 2, 3], np.float32)
    du = np.array([0, 1, 1, 0], np.float32)
    b = np.array([[1], [2], [3], [4]], np.float32)
    yield "gtsv_singular", lambda: jax_case("gtsv_singular", lambda *v: L.tridiagonal_solve(*v),
                                            [dl, d, du, b], TOL32)
    # ---- sytrd / hetrd (lax.linalg.tridiagonal)
    for dt in ("float32", "float64", "complex64", "complex128"):
        for lower in (True, False):
            nm = f"sytrd_{dt}_{'lower' if lower else 'upper'}"
            a = rand((2, 5, 5), dt)
            yield nm, (lambda nm=nm, a=a, lower=lower, dt=dt: jax_case(
                nm, lambda m: L.tridiagonal(m, lower=lower), [a], tol(dt)))
    # ---- geqp3 (QR with column pivoting, jax.scipy.linalg.qr(pivoting=True))
    for dt in ("float32", "float64", "complex64", "complex128"):
        for shp in ((5, 3), (3, 5), (6, 6)):
            nm = f"geqp3_{dt}_{'x'.join(map(str, shp))}"
            a = rand(shp, dt)
            yield nm, (lambda nm=nm, a=a, dt=dt: jax_case(nm, lambda m: _qrp(m), [a], tol(dt)))
    a = np.array([[1, 2, 2, 0], [1, 2, 2, 0], [0, 0, 0, 1]], np.float64)  # ties: the first column of largest norm
    yield "geqp3_ties", lambda: jax_case("geqp3_ties", lambda m: _qrp(m), [a], TOL64)
    # (fixed columns, jpvt != 0, are tested in tests/test_ops_custom_call.py: a hand-written
    # lapack_dgeqp3_ffi with a non-zero jpvt crashed XLA:CPU's FFI handler here)
    # ---- gesvd (lax.linalg.svd with algorithm=QR)
    for dt in ("float32", "float64", "complex64", "complex128"):
        for shp, full in (((5, 3), False), ((3, 5), True)):
            nm = f"gesvd_{dt}_{'x'.join(map(str, shp))}_{'full' if full else 'econ'}"
            a = rand(shp, dt)
            yield nm, (lambda nm=nm, a=a, full=full, dt=dt: jax_case(
                nm, lambda m: L.svd(m, full_matrices=full, algorithm=L.SvdAlgorithm.QR), [a], tol(dt),
                check="svd"))
        nm = f"gesvd_values_{dt}"
        a = rand((4, 6), dt)
        yield nm, (lambda nm=nm, a=a, dt=dt: jax_case(
            nm, lambda m: L.svd(m, compute_uv=False, algorithm=L.SvdAlgorithm.QR), [a], tol(dt)))
    # ---- corner cases: NaN/inf inputs, zero columns, empty matrices
    an = np.array([[1, 2, 3], [np.nan, 1, 0], [4, 5, 7]], np.float32)
    ai = np.array([[1, np.inf, 3], [2, 1, 0], [4, 5, 7]], np.float32)
    for nm, f, args in (
            ("edge_cholesky_nan", lambda m: L.cholesky(m), [an]),
            ("edge_lu_inf", lambda m: L.lu(m), [ai]),
            ("edge_lu_zero_column", lambda m: L.lu(m), [np.array([[0, 1], [0, 2]], np.float64)]),
            ("edge_lu_empty", lambda m: L.lu(m), [np.zeros((0, 0), np.float32)]),
            ("edge_eigh_nan", lambda m: L.eigh(m), [an]),
            ("edge_svd_nan", lambda m: jnp.linalg.svd(m), [an]),
            ("edge_svd_empty", lambda m: jnp.linalg.svd(m), [np.zeros((2, 0, 3), np.float32)]),
            ("edge_qr_nan", lambda m: jnp.linalg.qr(m), [an]),
            ("edge_qr_zero", lambda m: jnp.linalg.qr(m), [np.zeros((3, 2), np.float32)]),
            ("edge_eig_nan", lambda m: jnp.linalg.eig(m), [an]),
            ("edge_gtsv_zero_pivot", lambda *v: L.tridiagonal_solve(*v),
             [np.array([0, 0, 1], np.float32), np.array([0, 0, 1], np.float32), np.array([1, 1, 0], np.float32),
              np.ones((3, 1), np.float32)])):
        yield nm, (lambda nm=nm, f=f, args=args: jax_case(nm, f, args, TOL32))
    # ---- GPU programs (cuSOLVER / hipSOLVER targets): JAX lowered for CUDA ("before") and ROCm ("after");
    # expected values: the same function on XLA:CPU
    for nm, fn, chk, batch in (("gpu_cholesky", jnp.linalg.cholesky, None, (2,)),
                               ("gpu_eigh", jnp.linalg.eigh, "eigh", ()),
                               ("gpu_lu", L.lu, None, (2,)),
                               ("gpu_solve", lambda m: jnp.linalg.solve(m, m[..., :1] + 1), None, ()),
                               ("gpu_qr", jnp.linalg.qr, "qr", (2,)),
                               ("gpu_tridiagonal", L.tridiagonal, None, ()),
                               ("gpu_svd", lambda m: jnp.linalg.svd(m[..., :3], full_matrices=False), "svd", (2,)),
                               ("gpu_svd_full", lambda m: jnp.linalg.svd(m[..., :3]), "svd", ()),
                               ("gpu_svdvals", lambda m: jnp.linalg.svd(m, compute_uv=False), None, ()),
                               ("gpu_eig", lambda m: L.eig(m, compute_left_eigenvectors=False), "eig", ()),
                               ("gpu_qr_pivoting", _qrp, None, ())):
        for dt in ("float32", "complex64"):
            a = spd(4, dt, batch) if nm not in ("gpu_eig", "gpu_qr_pivoting") else rand(batch + (4, 4), dt)
            yield f"{nm}_{dt}", (lambda nm=nm, fn=fn, chk=chk, a=a, dt=dt: gpu_case(f"{nm}_{dt}", fn, a, chk, tol(dt)))
    for dt in ("float32", "complex64"):
        n = 5
        dl, d, du, b = rand((2, n), dt), rand((2, n), dt), rand((2, n), dt), rand((2, n, 3), dt)
        dl[..., 0] = 0
        du[..., -1] = 0
        yield f"gpu_gtsv2_{dt}", (lambda dt=dt, args=(dl, d, du, b): gpu_case(
            f"gpu_gtsv2_{dt}", lambda *v: L.tridiagonal_solve(*v), args, None, tol(dt), many=True))
    a = rand((6, 3), np.float32)
    b = rand((6,), np.float32)
    yield "lstsq_f32", lambda: jax_case("lstsq_f32", lambda p, q: jnp.linalg.lstsq(p, q)[0], [a, b],
                                        {"rtol": 1e-3, "atol": 1e-4})


# --------------------------------------------------------------------------------------------------
# cuDNN convolution targets (XLA:GPU dumps): the hand-written GPU form is `before`; the expected values
# are the same computation as plain JAX convolutions (forward, its VJPs) on XLA:CPU, whose optimized
# module is `after`.

def _spec(labels: str, kinds: str) -> tuple:
    """dim_labels part -> lax spec (index of kinds[0], of kinds[1], spatial indices in digit order)."""
    sp = sorted((c, i) for i, c in enumerate(labels) if c.isdigit())
    return (labels.index(kinds[0]), labels.index(kinds[1])) + tuple(i for _, i in sp)


def _window_text(size, stride, pads, rd):
    t = "size=" + "x".join(map(str, size))
    if any(x != 1 for x in stride):
        t += " stride=" + "x".join(map(str, stride))
    if any(p != (0, 0) for p in pads):
        t += " pad=" + "x".join(f"{lo}_{hi}" for lo, hi in pads)
    if any(x != 1 for x in rd):
        t += " rhs_dilate=" + "x".join(map(str, rd))
    return "{" + t + "}"


_HLO_T = {"float32": "f32", "float64": "f64", "float16": "f16", "bfloat16": "bf16"}


def cudnn_case(name, kind, labels, x_shape, size, stride, pads, rd, G, dt, cfg, fused=None, tol_=None):
    """kind: fwd | fused | bwd_input | bwd_filter.  fused = (activation, alpha, beta, with_side)."""
    from jax import lax
    lhs_l, rest = labels.split("_")
    ker_l, out_l = rest.split("->")
    dn = lax.ConvDimensionNumbers(_spec(lhs_l, "bf"), _spec(ker_l, "oi"), _spec(out_l, "bf"))
    int8 = dt == "int8"  # s8 x s8 -> f32: XLA's convert<f32>(conv<s32>(x, w)) pattern
    npdt = np.dtype(np.float32) if int8 else np.dtype(getattr(ml_dtypes, dt)) if dt == "bfloat16" else np.dtype(dt)
    C = x_shape[dn.lhs_spec[1]]
    k = len(size)
    O = 2 * G + 2 * G  # divisible by G
    kshape = [0] * (k + 2)
    kshape[dn.rhs_spec[0]], kshape[dn.rhs_spec[1]] = O, C // G
    for j in range(k):
        kshape[dn.rhs_spec[2 + j]] = size[j]
    if int8:
        x = RNG.integers(-128, 128, tuple(x_shape)).astype(np.int8)
        w = RNG.integers(-128, 128, tuple(kshape)).astype(np.int8)
    else:
        x = rand(tuple(x_shape), np.float32).astype(npdt)
        w = rand(tuple(kshape), np.float32).astype(npdt)

    ct = jnp.float64 if dt == "float64" else jnp.float32

    def conv(a, b):
        if int8:
            return lax.conv_general_dilated(a, b, stride, list(pads), rhs_dilation=rd, dimension_numbers=dn,
                                            feature_group_count=G, preferred_element_type=jnp.int32).astype(ct)
        return lax.conv_general_dilated(a, b, stride, list(pads), rhs_dilation=rd, dimension_numbers=dn,
                                        feature_group_count=G, preferred_element_type=ct)
    y_shape = tuple(jax.eval_shape(conv, x, w).shape)
    t = "f32" if int8 else _HLO_T[dt]
    shp = lambda s: f"{t}[{','.join(map(str, s))}]"
    shp_in = (lambda s: f"s8[{','.join(map(str, s))}]") if int8 else shp
    win = _window_text(size, stride, pads, rd)
    bc = json.dumps({"operation_queue_id": "0", "wait_on_operation_queues": [], "cudnn_conv_backend_config": cfg}) \
        if isinstance(cfg, dict) else cfg
    attrs = f"window={win}, dim_labels={labels}" + (f", feature_group_count={G}" if G > 1 else "")
    if kind in ("fwd", "fused"):
        act, alpha, beta, with_side = fused if fused else ("kNone", cfg.get("conv_result_scale", 1) if isinstance(cfg, dict) else 1, 0, False)
        bias = rand((O,), np.float32).astype(npdt)
        side = rand(y_shape, np.float32).astype(npdt)
        params = [f"x = {shp_in(x_shape)} parameter(0)", f"w = {shp_in(kshape)} parameter(1)"]
        ops, args = "x, w", [x, w]
        if kind == "fused":
            params.append(f"b = {shp((O,))} parameter(2)")
            ops += ", b"
            args.append(bias)
            if with_side:
                params.append(f"s = {shp(y_shape)} parameter(3)")
                ops += ", s"
                args.append(side)
        target = "__cudnn$convBiasActivationForward" if kind == "fused" else "__cudnn$convForward"
        res = shp(y_shape)

        def fn(*a):
            r = conv(a[0], a[1]) * alpha
            if kind == "fused":
                if with_side:
                    r = r + beta * a[3].astype(ct)
                bshape = [1] * len(y_shape)
                bshape[dn.out_spec[1]] = O
                r = r + a[2].astype(ct).reshape(bshape)
                r = {"kNone": lambda v: v, "kRelu": jax.nn.relu, "kRelu6": jax.nn.relu6, "kElu": jax.nn.elu,
                     "kTanh": jnp.tanh, "kSigmoid": jax.nn.sigmoid,
                     "kLeakyRelu": lambda v: jnp.where(v > 0, v, v * cfg.get("leakyrelu_alpha", 0))}[act](r)
            return r.astype(npdt)
    elif kind == "bwd_input":
        dy = rand(y_shape, np.float32).astype(npdt)
        params = [f"dy = {shp(y_shape)} parameter(0)", f"w = {shp(kshape)} parameter(1)"]
        ops, args, target, res = "dy, w", [dy, w], "__cudnn$convBackwardInput", shp(x_shape)

        def fn(g, b):
            _, vjp = jax.vjp(lambda a: conv(a, b.astype(ct)), x.astype(ct))
            return vjp(g.astype(ct))[0].astype(npdt)
    else:
        dy = rand(y_shape, np.float32).astype(npdt)
        params = [f"x = {shp(x_shape)} parameter(0)", f"dy = {shp(y_shape)} parameter(1)"]
        ops, args, target, res = "x, dy", [x, dy], "__cudnn$convBackwardFilter", shp(kshape)

        def fn(a, g):
            _, vjp = jax.vjp(lambda b: conv(a.astype(ct), b), w.astype(ct))
            return vjp(g.astype(ct))[0].astype(npdt)
    body = "\n  ".join(params)
    before = (f"HloModule {name}\n\nENTRY main {{\n  {body}\n  c = ({res}, u8[0]) custom-call({ops}), {attrs}, "
              f"custom_call_target=\"{target}\", backend_config={bc}\n  ROOT r = {res} get-tuple-element(c), index=0\n}}\n")
    _, after, outs = runner.run_jax(fn, args, keep_unused=False)
    save(name, before, after, args, [np.asarray(outs[0])], tol_ or (TOL64 if dt == "float64" else
                                                                    {"rtol": 2e-2, "atol": 2e-2} if dt in ("float16", "bfloat16") else
                                                                    {"rtol": 1e-4, "atol": 1e-4}),
         note=f"{target}: expected = the equivalent JAX convolution on XLA:CPU",
         source="hand-written HLO (cuDNN form); outputs and after: the equivalent JAX convolution on XLA:CPU")


def cudnn_cases():
    cfg0 = {"activation_mode": "kNone", "conv_result_scale": 1, "side_input_scale": 0, "leakyrelu_alpha": 0}
    C = []
    C.append(("cudnn_fwd_b01f_f32", "fwd", "b01f_01io->b01f", (2, 5, 6, 3), (3, 3), (1, 1), ((1, 1), (1, 1)), (1, 1), 1,
              "float32", cfg0, None))
    C.append(("cudnn_fwd_bf01_groups_f64", "fwd", "bf01_oi01->bf01", (2, 4, 7, 6), (3, 2), (2, 1), ((0, 1), (1, 0)),
              (1, 2), 2, "float64", dict(cfg0, conv_result_scale=0.5), None))
    C.append(("cudnn_fwd_f16", "fwd", "b01f_o01i->b01f", (1, 6, 6, 4), (3, 3), (2, 2), ((1, 1), (1, 1)), (1, 1), 1,
              "float16", cfg0, None))
    C.append(("cudnn_fwd_bf16_1d", "fwd", "b0f_0io->b0f", (2, 9, 4), (4,), (2,), ((2, 1),), (1,), 2,
              "bfloat16", cfg0, None))
    C.append(("cudnn_fused_relu_f32", "fused", "bf01_oi01->bf01", (2, 3, 6, 6), (3, 3), (1, 1), ((1, 1), (1, 1)),
              (1, 1), 1, "float32", dict(cfg0, activation_mode="kRelu"), ("kRelu", 1, 0, False)))
    C.append(("cudnn_fused_side_elu_f32", "fused", "b01f_01io->b01f", (2, 5, 5, 4), (3, 3), (1, 1), ((0, 0), (2, 0)),
              (1, 1), 2, "float32", dict(cfg0, activation_mode="kElu", conv_result_scale=2, side_input_scale=0.25),
              ("kElu", 2, 0.25, True)))
    C.append(("cudnn_fused_oldconfig_relu6_f64", "fused", "b01f_01io->b01f", (1, 4, 4, 2), (2, 2), (1, 1),
              ((1, 0), (0, 1)), (1, 1), 1, "float64",
              '"{\\"activationMode\\":\\"3\\",\\"convResultScale\\":1.5,\\"sideInputScale\\":1}"',
              ("kRelu6", 1.5, 1.0, True)))
    C.append(("cudnn_fused_leaky_f16", "fused", "b01f_01io->b01f", (1, 5, 5, 2), (3, 3), (1, 1), ((1, 1), (1, 1)),
              (1, 1), 1, "float16", dict(cfg0, activation_mode="kLeakyRelu", leakyrelu_alpha=0.2),
              ("kLeakyRelu", 1, 0, False)))
    C.append(("cudnn_fused_int8_f32", "fused", "b01f_01io->b01f", (2, 6, 6, 8), (3, 3), (1, 1), ((1, 1), (1, 1)),
              (1, 1), 1, "int8", dict(cfg0, activation_mode="kRelu", conv_result_scale=0.5, side_input_scale=0.25),
              ("kRelu", 0.5, 0.25, True)))
    C.append(("cudnn_fwd_int8_f32", "fwd", "b01f_o01i->b01f", (1, 5, 5, 4), (2, 2), (1, 1), ((0, 0), (0, 0)),
              (1, 1), 2, "int8", cfg0, None))
    C.append(("cudnn_bwd_input_b01f_f32", "bwd_input", "b01f_01io->b01f", (2, 7, 6, 3), (3, 3), (2, 2),
              ((1, 1), (0, 1)), (1, 1), 1, "float32", cfg0, None))
    C.append(("cudnn_bwd_input_groups_dil_f64", "bwd_input", "bf01_oi01->bf01", (1, 4, 8, 7), (3, 2), (1, 2),
              ((2, 1), (0, 0)), (2, 1), 2, "float64", cfg0, None))
    C.append(("cudnn_bwd_input_1d_f32", "bwd_input", "b0f_0oi->b0f", (1, 23, 6), (7,), (2,), ((5, 5),), (1,), 1,
              "float32", '"{conv_result_scale:1}"', None))
    C.append(("cudnn_bwd_input_bf16", "bwd_input", "b01f_o01i->b01f", (2, 5, 5, 4), (2, 2), (1, 1), ((0, 0), (0, 0)),
              (1, 1), 1, "bfloat16", cfg0, None))
    C.append(("cudnn_bwd_filter_b01f_f32", "bwd_filter", "b01f_01io->b01f", (2, 7, 6, 3), (3, 3), (2, 2),
              ((1, 1), (0, 1)), (1, 1), 1, "float32", cfg0, None))
    C.append(("cudnn_bwd_filter_groups_dil_f64", "bwd_filter", "bf01_oi01->bf01", (3, 4, 8, 7), (3, 2), (1, 2),
              ((2, 1), (0, 0)), (2, 1), 2, "float64", cfg0, None))
    C.append(("cudnn_bwd_filter_f16", "bwd_filter", "b01f_o01i->b01f", (2, 5, 5, 2), (2, 2), (1, 1),
              ((1, 0), (0, 0)), (1, 1), 1, "float16", cfg0, None))
    for c in C:
        yield c[0], (lambda c=c: cudnn_case(*c))


def lapack_extra_cases():
    """gees (jax.scipy.linalg.schur) and geev with left eigenvectors."""
    import jax.scipy.linalg as jsl
    L = jax.lax.linalg
    for dt in ("float32", "float64", "complex64", "complex128"):
        nm = f"gees_{dt}"
        a = rand((2, 5, 5), dt)
        yield nm, (lambda nm=nm, a=a, dt=dt: jax_case(nm, lambda m: L.schur(m), [a], tol(dt), check="schur"))
        nm = f"eig_left_{dt}"
        a = rand((2, 4, 4), dt)
        yield nm, (lambda nm=nm, a=a, dt=dt: jax_case(
            nm, lambda m: L.eig(m, compute_left_eigenvectors=True, compute_right_eigenvectors=True), [a], tol(dt),
            check="eig_left"))
    a = rand((6, 6), "float64")
    yield "gees_scipy_complex_f64", (lambda a=a: jax_case("gees_scipy_complex_f64",
                                                          lambda m: jsl.schur(m, output="complex"), [a], TOL64,
                                                          check="schur"))
    a = rand((4, 4), "float64")
    yield "gees_values_only_f64", (lambda a=a: jax_case(
        "gees_values_only_f64", lambda m: L.schur(m, compute_schur_vectors=False)[0], [a], TOL64, check="schur_t"))
    a = rand((3, 3), "complex128")
    yield "eig_left_only_c128", (lambda a=a: jax_case(
        "eig_left_only_c128", lambda m: L.eig(m, compute_left_eigenvectors=True, compute_right_eigenvectors=False),
        [a], TOL64, check="eig_left"))


def lapack_sign_cases():
    """Decompositions whose vectors LAPACK does not determine (signs of singular/eigen vectors, phases,
    Schur vectors), compared elementwise: hlo_interp calls SciPy's LAPACK as jaxlib does, so they are
    XLA's.  Batches where NumPy's linalg (f32 computed in f64) flips some vectors.  Own RNG: the inputs
    of the cases above do not move."""
    import jax.scipy.linalg as jsl
    rng = np.random.default_rng(2026)

    def r(shape, dtype):
        x = rng.standard_normal(shape)
        if np.dtype(dtype).kind == "c":
            x = x + 1j * rng.standard_normal(shape)
        return x.astype(dtype)

    note = "vectors compared elementwise: their signs/phases are LAPACK's (SciPy's, as jaxlib calls it)"
    for dt, shape in (("float32", (12, 6, 6)), ("complex64", (8, 5, 5))):
        nm, a = f"signs_svd_{dt}", r(shape, dt)
        yield nm, (lambda nm=nm, a=a: jax_case(nm, jnp.linalg.svd, [a], TOL32, note=note))
    for dt in ("float32", "complex64"):
        x = r((8, 5, 5), dt)
        nm, a = f"signs_eigh_{dt}", ((x + np.conj(np.swapaxes(x, -1, -2))) / 2).astype(dt)
        yield nm, (lambda nm=nm, a=a: jax_case(nm, jnp.linalg.eigh, [a], TOL32, note=note))
    nm, a = "signs_eig_float32", r((6, 4, 4), "float32")
    yield nm, (lambda nm=nm, a=a: jax_case(nm, jnp.linalg.eig, [a], TOL32, note=note))
    nm, a = "signs_gees_float32", r((4, 5, 5), "float32")
    yield nm, (lambda nm=nm, a=a: jax_case(nm, jsl.schur, [a], TOL32, note=note))


def onednn_cases():
    """`__onednn$layernorm` as XLA:CPU (jaxlib's oneDNN) runs it: y = scale * (x - mean) / sqrt(var + eps)
    + shift over the last dimension; the tolerance is oneDNN's summation order (see xla_cpu.py)."""
    import struct

    def ln_text(T, shape, eps):
        bits = struct.unpack("<i", struct.pack("<f", np.float32(eps)))[0]
        sh, C = ",".join(map(str, shape)), shape[-1]
        return f"""HloModule onednn_layernorm
ENTRY main {{
  x = {T}[{sh}] parameter(0)
  g = f32[{C}] parameter(1)
  b = f32[{C}] parameter(2)
  ROOT r = {T}[{sh}] custom-call(x, g, b), custom_call_target="__onednn$layernorm",
    backend_config={{"onednn_layer_norm_config":{{"rescale":"SCALE_AND_SHIFT","epsilon_typecast":"{bits}"}}}}
}}"""
    for name, T, dt, shape, eps, loc, compare in (
            ("onednn_layernorm_f32_2x3", "f32", np.float32, (2, 3), 1e-5, 1.0, {"scaled": 5e-7}),
            ("onednn_layernorm_f32_16x768", "f32", np.float32, (16, 768), 1e-12, 3.0, {"scaled": 5e-7}),
            ("onednn_layernorm_f32_4x3x37", "f32", np.float32, (4, 3, 37), 1e-3, -2.0, {"scaled": 5e-7}),
            ("onednn_layernorm_bf16_8x64", "bf16", ml_dtypes.bfloat16, (8, 64), 1e-5, 0.5, {"ulp": 1})):
        def make(name=name, T=T, dt=dt, shape=shape, eps=eps, loc=loc, compare=compare):
            x = (RNG.standard_normal(shape) * 2 + loc).astype(dt)
            g = RNG.standard_normal(shape[-1]).astype(np.float32)
            b = RNG.standard_normal(shape[-1]).astype(np.float32)
            hlo_case(name, ln_text(T, shape, eps), [x, g, b], compare)
        yield name, make


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", default=None)
    opts = ap.parse_args()
    n = 0
    import itertools
    for name, make in itertools.chain(cases(), cudnn_cases(), lapack_extra_cases(), lapack_sign_cases(),
                                    onednn_cases()):
        if opts.only and not re.search(opts.only, name):
            continue
        make()
        n += 1
    print(f"{n} cases written to {GOLDEN / FAMILY}")


if __name__ == "__main__":
    main()
