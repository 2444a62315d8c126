"""The LAPACK FFI custom-call targets JAX's linalg emits on CPU (`lapack_<t><routine>_ffi`, t = s, d,
c, z for f32, f64, c64, c128).  Operands and results are (batches of) matrices: the leading
`num_batch_dims` dimensions are batch dimensions, the last two the matrix (the column-major layouts
LAPACK needs are physical only: values here are logical arrays).  backend_config holds the LAPACK
character flags as integers (`{uplo = 76 : ui8}`: 'L').

  potrf   (a) -> (factor, info s32[batch]); uplo L/U.  The selected triangle holds the factor, the
          other keeps a's values.  info = the 1-based column of the first pivot <= 0 (the values from
          there on are not meaningful: JAX replaces them with NaN).  A NaN pivot is not a failure
          (OpenBLAS, which XLA:CPU's LAPACK is, tests `<= 0` only): NaN spreads, info 0.
  trsm    (a, b) -> x; side L/R, uplo L/U, trans_x N/T/C, diag U/N: BLAS ?trsm with alpha 1.
  getrf   (a) -> (lu, pivots s32[batch, min(m,n)] 1-based, info s32[batch]): LU with partial pivoting
          (pivot: the first entry of largest |x|, |re|+|im| for complex, as i?amax), whole-row
          swaps; a zero pivot sets info (its 1-based column, the first one) and the factorization
          goes on.  With a NaN in a pivot column OpenBLAS's SIMD i?amax picks a pivot that depends on
          the type and the vector length (the same here, as it is the same code on the same CPU; the
          NumPy form the GPU targets use takes the first NaN).
  geqrf   (a) -> (packed QR, tau[batch, min(m,n)]): Householder reflectors as LAPACK's ?larfg makes
          them (beta = -sign(Re alpha)·‖(alpha, x)‖, tau = (beta - alpha)/beta, v = x/(alpha - beta),
          tau = 0 when x = 0 and alpha is real); R in the upper triangle, v below the diagonal.
  orgqr / ungqr  (a, tau) -> Q, the first n columns of H1·H2···Hk, Hi = I - tau_i v_i v_iᴴ.
  potrf, trsm, getrf, geqrf, orgqr / ungqr, gehrd, sytrd / hetrd: LAPACK's (BLAS's) routine itself
          through scipy.linalg.lapack / .blas, as for syevd below (lwork from a workspace query where
          LAPACK takes one, as jaxlib): XLA:CPU's results bit for bit.  Empty matrices, and the GPU
          targets, use this module's NumPy forms of the same (unblocked) algorithms: equal to rounding.
  geqp3   (a, jpvt) -> (packed QR, jpvt 1-based, tau): QR with column pivoting as ?laqp2 (columns with
          jpvt != 0 first, then the first column of largest partial norm, norms downdated as LAPACK
          does and recomputed when tol3z = sqrt(eps) says so).
  gehrd   (a) -> (packed Hessenberg form, tau[batch, n-1], info); backend_config low/high = ilo/ihi.
  sytrd / hetrd  (a) -> (packed, d, e, tau, info); uplo L/U: Householder tridiagonal reduction (the
          other strict triangle keeps a's values).
  geqp3 and gtsv are computed here in NumPy (SciPy's ?geqp3 takes no jpvt): step for step as LAPACK's
          unblocked ?laqp2 / ?gtsv, equal to XLA's to rounding (not bit for bit).
  gtsv    (dl, d, du, b) -> (dl', d', du', x, info): ?gtsv's elimination with row interchanges, step
          for step (the overwritten diagonals are LAPACK's); info = the first exactly-zero pivot.
  syevd, heevd, gesdd, gesvd, geev, gees: LAPACK's routine itself through scipy.linalg.lapack, with
          the target's precision letter and the arguments jaxlib passes (job letters, uplo, workspace
          sizes: the documented minimums for ?syevd/?heevd, a workspace query for the others).  jaxlib's
          CPU kernels call SciPy's LAPACK (scipy.linalg.cython_lapack), so the results are XLA:CPU's bit
          for bit, including what LAPACK alone decides: the signs/phases of singular vectors and
          eigenvectors, the eigenvalue order of ?geev/?gees, the Schur vectors.  info is LAPACK's; a
          matrix with info != 0 gets NaN results (XLA's are unspecified there; JAX replaces them with
          NaN).  Batches: one LAPACK call per matrix, as jaxlib loops.
  syevd / heevd  (a) -> (eigenvectors, eigenvalues ascending (real), info); mode V/N, uplo L/U (only
          that triangle is read).  With mode N the first result is a as LAPACK leaves it.
  geev    (a) -> real: (wr, wi, vl, vr, info); complex: (w, vl, vr, info) (vectors complex, as JAX's
          FFI returns them: a real matrix's packed conjugate pairs unpacked as jaxlib does);
          compute_left/compute_right V/N (vectors not computed are zeros).  A matrix with a non-finite
          entry is not given to LAPACK (jaxlib's check): info -4, NaN results.
  gees    (a) -> real: (t, vs, wr, wi, sdim, info); complex: (t, vs, w, sdim, info); mode V/N, sort N:
          a = vs t vs^H, t (quasi) triangular with LAPACK's standardized 2x2 blocks for real matrices;
          vs zeros for mode N.  A matrix with a non-finite entry is not given to LAPACK (its ?gebal
          rejects NaN with a console message): NaN results, info 1.
  gesdd / gesvd  (a) -> (a', s, u, vt, info); mode A (full) / S (economy) / N (values only: u, vt
          zero); a' is a as LAPACK leaves it (destroyed).
  GPU (what JAX lowers linalg to for CUDA / ROCm; the element type is the operand's):
          cusolver_/hipsolver_ potrf_ffi, syevd_ffi (backend_config lower=bool), getrf_ffi, geqrf_ffi,
          orgqr_ffi, sytrd_ffi: as the LAPACK ones; cu_/hip_lu_pivots_to_permutation: 0-based row swaps
          -> permutation of the result's length; cusolver_/hipsolver_gesvdj_ffi (compute_uv,
          full_matrices): as gesdd but returning V (not Vᴴ); cuhybrid_/hiphybrid_ eig_real / eig_comp
          (left, right) as geev; cuhybrid_/hiphybrid_geqp3 as geqp3; cusparse_/hipsparse_gtsv2_ffi
          (dl, d, du, b) -> x as gtsv (NaN for a singular system).  (cuSOLVER's own results, e.g.
          gesvdj's Jacobi vectors, are not reproduced: these are LAPACK's.)
  Qr      XLA's own target (QrExpander's input): (a) -> (packed QR, taus), as geqrf.
Refused (an unsupported-feature error): gees with sort S (JAX never emits it), gesdd/gesvd mode O.
"""
from __future__ import annotations

import numpy as np

from ..registry import error_at, unsupported
from .registry import backend_config_dict, shape_text, target

_TYPES = {"s": "f32", "d": "f64", "c": "c64", "z": "c128"}
_REAL = {"f32": "f32", "f64": "f64", "c64": "f32", "c128": "f64"}


def _names(routine: str, letters: str = "sdcz") -> list[str]:
    return [f"lapack_{t}{routine}_ffi" for t in letters]


def _check_matrix(ins, shape, what, square=False):
    name = ins.attrs.get("custom_call_target")
    if shape is None or shape.is_tuple or len(shape.dims) < 2 or (square and shape.dims[-1] != shape.dims[-2]):
        raise error_at(ins, f"custom-call {name}: {what} must be a (batch of) {'square ' if square else ''}"
                            f"matrices, got {shape_text(shape)}")
    want = _TYPES[name[len("lapack_")]]
    if shape.element_type.name != want:
        raise error_at(ins, f"custom-call {name}: {what} must be {want}, got {shape_text(shape)}")
    return shape.element_type.dtype


def _flag(ins, cfg, key, allowed: str, default: str | None = None) -> str:
    v = cfg.get(key)
    if v is None:
        if default is not None:
            return default
        raise error_at(ins, f"custom-call {ins.attrs.get('custom_call_target')}: backend_config has no {key}")
    c = chr(v) if isinstance(v, int) and 0 <= v < 128 else str(v)
    if c not in allowed:
        raise unsupported(ins, f"{ins.attrs.get('custom_call_target')} with {key}={c!r}")
    return c


def _result_shapes(ins, n):
    out = ins.shape
    if out is None or not out.is_tuple or len(out.elements) != n:
        raise error_at(ins, f"custom-call {ins.attrs.get('custom_call_target')}: the result must be a "
                            f"{n}-tuple, got {shape_text(out)}")
    return out.elements


# --------------------------------------------------------------------------------------------------
# potrf, trsm

def potrf_openblas(a: np.ndarray, lower: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """?potrf as the LAPACK XLA:CPU calls (OpenBLAS) computes it, on [..., n, n]: (factor, info).
    Column by column; a pivot a_jj - Σ|l_jk|² that is <= 0 stops the factorization (info = j+1, 1-based;
    the values from there on are not meaningful: JAX replaces the whole matrix with NaN).  A NaN pivot is
    NOT a failure (OpenBLAS tests `<= 0` only): NaN spreads through the factor and info stays 0.  The
    other triangle keeps a's values."""
    n = a.shape[-1]
    batch = a.shape[:-2]
    if a.size == 0:
        return a.copy(), np.zeros(batch, np.int32)
    x = a if lower else np.conj(np.swapaxes(a, -1, -2))
    x = np.array(x).reshape((-1, n, n))
    nb = x.shape[0]
    l = np.zeros_like(x)
    info = np.zeros(nb, np.int32)
    with np.errstate(all="ignore"):
        for j in range(n):
            lj = l[:, j, :j]
            ajj = np.real(x[:, j, j]) - np.sum((lj * np.conj(lj)).real, axis=-1)
            bad = (info == 0) & (ajj <= 0)
            info = np.where(bad, j + 1, info).astype(np.int32)
            d = np.sqrt(ajj).astype(x.dtype)
            l[:, j, j] = d
            if j + 1 < n:
                col = x[:, j + 1:, j] - np.einsum("bik,bk->bi", l[:, j + 1:, :j], np.conj(lj))
                l[:, j + 1:, j] = col / d[:, None]
    f = l if lower else np.conj(np.swapaxes(l, -1, -2))
    keep = np.tri(n, n, 0, dtype=bool) if lower else ~np.tri(n, n, -1, dtype=bool)
    return np.where(keep, f.reshape(a.shape), a), info.reshape(batch)


@target(*_names("potrf"))
def _t_potrf(ins, ctx):
    (s,) = ctx.operand_shapes(ins)
    dt = _check_matrix(ins, s, "the operand", square=True)
    lower = _flag(ins, backend_config_dict(ins), "uplo", "LU") == "L"
    _, si = _result_shapes(ins, 2)

    def run(a):
        f, info = lapack_potrf(np.asarray(a, dt), lower)
        return (f.astype(dt, copy=False), info.astype(si.element_type.dtype).reshape(tuple(si.dims)))
    return run


@target(*_names("trsm"))
def _t_trsm(ins, ctx):
    if len(ins.operands) != 2:
        raise unsupported(ins, f"{ins.attrs.get('custom_call_target')} with {len(ins.operands)} operands "
                               f"(a, b expected)")
    sa, sb = ctx.operand_shapes(ins)
    dt = _check_matrix(ins, sa, "a", square=True)
    _check_matrix(ins, sb, "b")
    cfg = backend_config_dict(ins)
    left = _flag(ins, cfg, "side", "LR") == "L"
    lower = _flag(ins, cfg, "uplo", "LU") == "L"
    trans = {"N": "NO_TRANSPOSE", "T": "TRANSPOSE", "C": "ADJOINT"}[_flag(ins, cfg, "trans_x", "NTC")]
    unit = _flag(ins, cfg, "diag", "UN") == "U"
    da, db = tuple(sa.dims), tuple(sb.dims)
    if da[:-2] != db[:-2] or (db[-2] if left else db[-1]) != da[-1]:
        raise error_at(ins, f"custom-call {ins.attrs.get('custom_call_target')}: incompatible shapes "
                            f"{shape_text(sa)} and {shape_text(sb)}")

    def run(a, b):
        return lapack_trsm(np.asarray(a, dt), np.asarray(b, dt), left, lower, trans, unit).astype(dt, copy=False)
    return run


# --------------------------------------------------------------------------------------------------
# getrf

def _abs1(x: np.ndarray) -> np.ndarray:
    return np.abs(x.real) + np.abs(x.imag) if np.iscomplexobj(x) else np.abs(x)


def getrf(a: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """LU with partial pivoting of [..., m, n]: (lu, 1-based pivots int32 [..., k], info int32 [...])."""
    a = np.array(a)
    m, n = a.shape[-2:]
    batch = a.shape[:-2]
    k = min(m, n)
    a = a.reshape((-1, m, n))
    nb = a.shape[0]
    piv = np.zeros((nb, k), np.int32)
    info = np.zeros(nb, np.int32)
    rows = np.arange(nb)
    tiny = np.finfo(a.real.dtype).tiny
    with np.errstate(all="ignore"):
        for j in range(k):
            mag = _abs1(a[:, j:, j])
            p = np.argmax(mag, axis=-1) + j
            piv[:, j] = p + 1
            rj, rp = a[rows, j, :].copy(), a[rows, p, :].copy()
            a[rows, p, :] = rj
            a[rows, j, :] = rp
            pivot = a[:, j, j]
            zero = pivot == 0
            info = np.where((info == 0) & zero, j + 1, info).astype(np.int32)
            if j + 1 < m:
                big = _abs1(pivot) >= tiny
                col = a[:, j + 1:, j]
                scaled = np.where(big[:, None], col * (1 / pivot)[:, None], col / pivot[:, None])
                a[:, j + 1:, j] = np.where(zero[:, None], col, scaled)
                if j + 1 < n:
                    a[:, j + 1:, j + 1:] -= a[:, j + 1:, j:j + 1] * a[:, j:j + 1, j + 1:]
    return a.reshape(batch + (m, n)), piv.reshape(batch + (k,)), info.reshape(batch)


@target(*_names("getrf"))
def _t_getrf(ins, ctx):
    (s,) = ctx.operand_shapes(ins)
    dt = _check_matrix(ins, s, "the operand")
    _, sp, si = _result_shapes(ins, 3)

    def run(a):
        lu, piv, info = lapack_getrf(np.asarray(a, dt))
        return (lu.astype(dt, copy=False), piv.astype(sp.element_type.dtype).reshape(tuple(sp.dims)),
                info.astype(si.element_type.dtype).reshape(tuple(si.dims)))
    return run


# --------------------------------------------------------------------------------------------------
# geqrf, orgqr / ungqr

def larfg(alpha: np.ndarray, x: np.ndarray):
    """LAPACK ?larfg on a batch: alpha [B], x [B, r] -> (beta, tau, v tail [B, r]) with
    (I - tau v vᴴ)ᴴ (alpha, x) = (beta, 0), v = (1, v tail); tau = 0 (H = I) when x = 0 and alpha is real."""
    cplx = np.iscomplexobj(alpha)
    with np.errstate(all="ignore"):
        xnorm = np.sqrt(np.sum((x * np.conj(x)).real, axis=-1)) if x.shape[-1] else \
            np.zeros(alpha.shape, alpha.real.dtype)
        ar = alpha.real
        ai = alpha.imag if cplx else np.zeros_like(ar)
        skip = (xnorm == 0) & (ai == 0)
        norm = np.sqrt(ar * ar + ai * ai + xnorm * xnorm).astype(ar.dtype)
        beta = -np.copysign(norm, ar)
        if cplx:
            t = ((beta - ar) / beta - 1j * (ai / beta)).astype(alpha.dtype)
        else:
            t = (beta - alpha) / beta
        scale = np.where(skip, 1, 1 / np.where(skip, 1, alpha - beta)).astype(alpha.dtype)
        v_tail = x * scale[:, None]
        t = np.where(skip, 0, t).astype(alpha.dtype)
        beta = np.where(skip, alpha, beta).astype(alpha.dtype)
    return beta, t, v_tail


def _apply_left(c: np.ndarray, v: np.ndarray, tau: np.ndarray) -> np.ndarray:
    """(I - tau v vᴴ) c for a batch: c [B, r, q], v [B, r], tau [B]."""
    w = np.einsum("bi,bij->bj", np.conj(v), c)
    return c - (tau[:, None, None] * v[:, :, None]) * w[:, None, :]


def _apply_right(c: np.ndarray, v: np.ndarray, tau: np.ndarray) -> np.ndarray:
    """c (I - tau v vᴴ) for a batch: c [B, q, r], v [B, r], tau [B]."""
    w = np.einsum("bij,bj->bi", c, v)
    return c - (tau[:, None, None] * w[:, :, None]) * np.conj(v)[:, None, :]


def _with_one(v_tail: np.ndarray) -> np.ndarray:
    return np.concatenate([np.ones((v_tail.shape[0], 1), v_tail.dtype), v_tail], axis=-1)


def geqrf(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Householder QR of [..., m, n] as LAPACK packs it: (a with R and the reflectors, tau [..., k])."""
    a = np.array(a)
    m, n = a.shape[-2:]
    batch = a.shape[:-2]
    k = min(m, n)
    a = a.reshape((-1, m, n))
    tau = np.zeros((a.shape[0], k), a.dtype)
    with np.errstate(all="ignore"):
        for j in range(k):
            beta, t, v_tail = larfg(a[:, j, j].copy(), a[:, j + 1:, j])
            a[:, j + 1:, j] = v_tail
            a[:, j, j] = beta
            tau[:, j] = t
            if j + 1 < n:  # H(j)ᴴ from the left on the trailing columns
                a[:, j:, j + 1:] = _apply_left(a[:, j:, j + 1:], _with_one(v_tail), np.conj(t))
    return a.reshape(batch + (m, n)), tau.reshape(batch + (k,))


def gehrd(a: np.ndarray, ilo: int, ihi: int) -> tuple[np.ndarray, np.ndarray]:
    """Householder reduction of [..., n, n] to upper Hessenberg form, LAPACK ?gehrd's packing: (a with H
    and the reflectors below the subdiagonal, tau [..., n-1]); ilo, ihi 1-based (rows/columns outside
    ilo..ihi are taken as already reduced: their tau is 0)."""
    a = np.array(a)
    n = a.shape[-1]
    batch = a.shape[:-2]
    a = a.reshape((-1, n, n))
    tau = np.zeros((a.shape[0], max(n - 1, 0)), a.dtype)
    lo, hi = ilo - 1, ihi  # 0-based start, exclusive end
    with np.errstate(all="ignore"):
        for i in range(lo, hi - 1):
            beta, t, v_tail = larfg(a[:, i + 1, i].copy(), a[:, i + 2:hi, i])
            a[:, i + 1, i] = 1
            a[:, i + 2:hi, i] = v_tail
            v = _with_one(v_tail)
            a[:, :hi, i + 1:hi] = _apply_right(a[:, :hi, i + 1:hi], v, t)           # H from the right
            a[:, i + 1:hi, i + 1:] = _apply_left(a[:, i + 1:hi, i + 1:], v, np.conj(t))  # Hᴴ from the left
            a[:, i + 1, i] = beta
            tau[:, i] = t
    return a.reshape(batch + (n, n)), tau.reshape(batch + (max(n - 1, 0),))


def orgqr(a: np.ndarray, tau: np.ndarray) -> np.ndarray:
    """The first n columns of H1···Hk from geqrf's reflectors (a [..., m, n], tau [..., k])."""
    m, n = a.shape[-2:]
    k = tau.shape[-1]
    batch = a.shape[:-2]
    a = np.asarray(a).reshape((-1, m, n))
    tau = np.asarray(tau).reshape((-1, k))
    q = np.broadcast_to(np.eye(m, n, dtype=a.dtype), a.shape).copy()
    with np.errstate(all="ignore"):
        for i in range(min(k, n) - 1, -1, -1):
            q[:, i:, :] = _apply_left(q[:, i:, :], _with_one(a[:, i + 1:, i]), tau[:, i])
    return q.reshape(batch + (m, n))


@target(*_names("geqrf"))
def _t_geqrf(ins, ctx):
    (s,) = ctx.operand_shapes(ins)
    dt = _check_matrix(ins, s, "the operand")
    _, st = _result_shapes(ins, 2)

    def run(a):
        r, tau = lapack_geqrf(np.asarray(a, dt))
        return (r.astype(dt, copy=False), tau.astype(dt, copy=False).reshape(tuple(st.dims)))
    return run


@target(*(_names("orgqr", "sd") + _names("ungqr", "cz")))
def _t_orgqr(ins, ctx):
    if len(ins.operands) != 2:
        raise error_at(ins, f"custom-call {ins.attrs.get('custom_call_target')} takes (a, tau)")
    sa, st = ctx.operand_shapes(ins)
    dt = _check_matrix(ins, sa, "a")
    if st is None or st.is_tuple or tuple(st.dims[:-1]) != tuple(sa.dims[:-2]) or \
            not st.dims or st.dims[-1] > min(sa.dims[-2:]) or st.element_type != sa.element_type:
        raise error_at(ins, f"custom-call {ins.attrs.get('custom_call_target')}: tau {shape_text(st)} does "
                            f"not fit a {shape_text(sa)}")
    if sa.dims[-1] > sa.dims[-2]:
        raise error_at(ins, f"custom-call {ins.attrs.get('custom_call_target')}: a {shape_text(sa)} has more "
                            f"columns than rows")

    def run(a, tau):
        return lapack_orgqr(np.asarray(a, dt), np.asarray(tau, dt)).astype(dt, copy=False)
    return run


# --------------------------------------------------------------------------------------------------
# syevd / heevd, gesdd / gesvd, geev, gees: the LAPACK routines themselves, through scipy.linalg.lapack.
# jaxlib's CPU kernels call SciPy's LAPACK (scipy.linalg.cython_lapack): the same routine with the same
# arguments (job letters, workspace sizes) gives XLA:CPU's bits, including the signs/phases of the
# vectors, which are not otherwise determined.  (numpy.linalg would not do: it computes f32/c64 in
# f64/c128, and its LAPACK is another build.)

_PREFIX = {"float32": "s", "float64": "d", "complex64": "c", "complex128": "z"}


def _lapack_fn(routine: str, dtype):
    """scipy.linalg.lapack's ?<routine> for dtype (f32 -> s, f64 -> d, c64 -> c, c128 -> z)."""
    from scipy.linalg import lapack  # on first use: SciPy is slow to import
    return getattr(lapack, _PREFIX[np.dtype(dtype).name] + routine)


def _lwork(work) -> int:
    """A workspace query's answer as jaxlib reads it: the real part, truncated to an integer."""
    return max(int(np.real(np.asarray(work).reshape(-1)[0])), 1)


def _fortran(x: np.ndarray) -> np.ndarray:
    """A column-major copy of one matrix for LAPACK to overwrite (with overwrite_a=1 SciPy's wrappers work
    in place on it, so it ends as LAPACK leaves its argument)."""
    return np.array(x, order="F", copy=True)


def _complex_of(re: np.ndarray, im: np.ndarray, cdt) -> np.ndarray:
    out = np.empty(np.shape(re), cdt)
    out.real, out.imag = re, im
    return out


def lapack_potrf(a: np.ndarray, lower: bool):
    """LAPACK ?potrf on [..., n, n] (uplo L/U; the other triangle keeps a's values): (factor, info)."""
    if a.size == 0:
        return potrf_openblas(a, lower)
    n = a.shape[-1]
    flat = np.array(a).reshape((-1, n, n))
    info = np.zeros(flat.shape[0], np.int32)
    fn = _lapack_fn("potrf", a.dtype)
    for i in range(flat.shape[0]):
        flat[i], info[i] = fn(_fortran(flat[i]), lower=int(lower), clean=0, overwrite_a=1)
    return flat.reshape(a.shape), info.reshape(a.shape[:-2])


def lapack_trsm(a: np.ndarray, b: np.ndarray, left: bool, lower: bool, trans: str, unit: bool) -> np.ndarray:
    """BLAS ?trsm (alpha 1) on a [..., k, k], b [..., m, n]: x with op(a) x = b (left) or x op(a) = b;
    trans NO_TRANSPOSE / TRANSPOSE / ADJOINT."""
    if b.size == 0 or a.size == 0:
        return np.array(b)
    from scipy.linalg import blas
    fn = getattr(blas, _PREFIX[a.dtype.name] + "trsm")
    fa = a.reshape((-1,) + a.shape[-2:])
    x = np.array(b).reshape((-1,) + b.shape[-2:])
    t = {"NO_TRANSPOSE": 0, "TRANSPOSE": 1, "ADJOINT": 2}[trans]
    for i in range(x.shape[0]):
        x[i] = fn(1, np.asfortranarray(fa[i]), _fortran(x[i]), side=int(not left), lower=int(lower), trans_a=t,
                  diag=int(unit), overwrite_b=1)
    return x.reshape(b.shape)


def lapack_getrf(a: np.ndarray):
    """LAPACK ?getrf on [..., m, n]: (lu, 1-based pivots int32 [..., min(m,n)], info int32 [...])."""
    if a.size == 0:
        return getrf(a)
    m, n = a.shape[-2:]
    k = min(m, n)
    flat = np.array(a).reshape((-1, m, n))
    piv = np.zeros((flat.shape[0], k), np.int32)
    info = np.zeros(flat.shape[0], np.int32)
    fn = _lapack_fn("getrf", a.dtype)
    for i in range(flat.shape[0]):
        lu, p, info[i] = fn(_fortran(flat[i]), overwrite_a=1)
        flat[i], piv[i] = lu, p + 1  # SciPy returns them 0-based
    return flat.reshape(a.shape), piv.reshape(a.shape[:-2] + (k,)), info.reshape(a.shape[:-2])


def lapack_geqrf(a: np.ndarray):
    """LAPACK ?geqrf on [..., m, n] (lwork from a workspace query, as jaxlib): (packed QR, tau [..., k])."""
    if a.size == 0:
        return geqrf(a)
    m, n = a.shape[-2:]
    k = min(m, n)
    flat = np.array(a).reshape((-1, m, n))
    tau = np.zeros((flat.shape[0], k), a.dtype)
    fn = _lapack_fn("geqrf", a.dtype)
    lwork = _lwork(_lapack_fn("geqrf_lwork", a.dtype)(m, n)[0])
    for i in range(flat.shape[0]):
        flat[i], tau[i], _, _ = fn(_fortran(flat[i]), lwork=lwork, overwrite_a=1)
    return flat.reshape(a.shape), tau.reshape(a.shape[:-2] + (k,))


def lapack_orgqr(a: np.ndarray, tau: np.ndarray) -> np.ndarray:
    """LAPACK ?orgqr / ?ungqr on a [..., m, n], tau [..., k] (lwork from a workspace query, as jaxlib)."""
    if a.size == 0 or tau.shape[-1] == 0:
        return orgqr(a, tau)
    m, n = a.shape[-2:]
    k = tau.shape[-1]
    flat = np.array(a).reshape((-1, m, n))
    ft = np.asarray(tau).reshape((-1, k))
    fn = _lapack_fn("ungqr" if a.dtype.kind == "c" else "orgqr", a.dtype)
    lwork = _lwork(fn(_fortran(flat[0]), ft[0].copy(), lwork=-1)[1])
    for i in range(flat.shape[0]):
        flat[i], _, _ = fn(_fortran(flat[i]), ft[i].copy(), lwork=lwork, overwrite_a=1)
    return flat.reshape(a.shape)


def lapack_gehrd(a: np.ndarray, ilo: int, ihi: int):
    """LAPACK ?gehrd on [..., n, n] (ilo, ihi 1-based; lwork from a workspace query, as jaxlib):
    (packed Hessenberg form, tau [..., n-1], info)."""
    n = a.shape[-1]
    batch = a.shape[:-2]
    if a.size == 0 or n < 2:
        h, tau = gehrd(a, ilo, ihi)
        return h, tau, np.zeros(batch, np.int32)
    flat = np.array(a).reshape((-1, n, n))
    tau = np.zeros((flat.shape[0], n - 1), a.dtype)
    info = np.zeros(flat.shape[0], np.int32)
    fn = _lapack_fn("gehrd", a.dtype)
    lwork = _lwork(_lapack_fn("gehrd_lwork", a.dtype)(n, lo=ilo - 1, hi=ihi - 1)[0])
    for i in range(flat.shape[0]):  # SciPy takes lo, hi 0-based
        flat[i], tau[i], info[i] = fn(_fortran(flat[i]), lo=ilo - 1, hi=ihi - 1, lwork=lwork, overwrite_a=1)
    return flat.reshape(a.shape), tau.reshape(batch + (n - 1,)), info.reshape(batch)


def lapack_sytrd(a: np.ndarray, lower: bool):
    """LAPACK ?sytrd / ?hetrd on [..., n, n] (lwork from a workspace query, as jaxlib): (packed, d, e, tau,
    info)."""
    n = a.shape[-1]
    batch = a.shape[:-2]
    k = max(n - 1, 0)
    if a.size == 0 or n < 2:
        return sytrd(a, lower) + (np.zeros(batch, np.int32),)
    flat = np.array(a).reshape((-1, n, n))
    nb = flat.shape[0]
    rdt = np.empty(0, a.dtype).real.dtype
    d, e, tau = np.zeros((nb, n), rdt), np.zeros((nb, k), rdt), np.zeros((nb, k), a.dtype)
    info = np.zeros(nb, np.int32)
    name = "hetrd" if a.dtype.kind == "c" else "sytrd"
    fn = _lapack_fn(name, a.dtype)
    lwork = _lwork(_lapack_fn(name + "_lwork", a.dtype)(n, lower=int(lower))[0])
    for i in range(nb):
        flat[i], d[i], e[i], tau[i], info[i] = fn(_fortran(flat[i]), lower=int(lower), lwork=lwork, overwrite_a=1)
    return (flat.reshape(a.shape), d.reshape(batch + (n,)), e.reshape(batch + (k,)), tau.reshape(batch + (k,)),
            info.reshape(batch))


def syevd(a: np.ndarray, vectors: bool = True, lower: bool = True):
    """LAPACK ?syevd / ?heevd on [..., n, n], as jaxlib calls it (jobz V/N, uplo L/U: only that triangle is
    read; lwork/lrwork/liwork the documented minimums jaxlib passes): (the eigenvectors as columns, or with
    vectors=False a as LAPACK leaves it; the eigenvalues ascending (real); info int32 [...]).  A matrix with
    info != 0 gets NaN eigenvalues (and vectors)."""
    dt = a.dtype
    n = a.shape[-1]
    batch = a.shape[:-2]
    flat = a.reshape((-1, n, n))
    nb = flat.shape[0]
    rdt = np.empty(0, dt).real.dtype
    out = flat.copy()
    w_out = np.zeros((nb, n), rdt)
    info = np.zeros(nb, np.int32)
    if a.size:
        if dt.kind == "c":
            fn = _lapack_fn("heevd", dt)
            kw = {"lwork": 2 * n + n * n, "lrwork": 1 + 5 * n + 2 * n * n, "liwork": 3 + 5 * n} if vectors else \
                {"lwork": n + 1, "lrwork": n, "liwork": 1}
        else:
            fn = _lapack_fn("syevd", dt)
            kw = {"lwork": 1 + 6 * n + 2 * n * n, "liwork": 3 + 5 * n} if vectors else {"lwork": 2 * n + 1, "liwork": 1}
        for i in range(nb):
            w, v, inf = fn(_fortran(flat[i]), compute_v=int(vectors), lower=int(lower), overwrite_a=1, **kw)
            out[i], w_out[i], info[i] = v, w, inf
            if inf != 0:
                w_out[i] = np.nan
                if vectors:
                    out[i] = np.nan
    return out.reshape(a.shape), w_out.reshape(batch + (n,)), info.reshape(batch)


def gesdd(a: np.ndarray, mode: str, driver: str = "gesdd"):
    """LAPACK ?gesdd (driver="gesvd": ?gesvd) on [..., m, n], as jaxlib calls it (jobz = mode: A full, S
    economy, N values only; lwork from a workspace query): (a as LAPACK leaves it, s, u, vt, info); u and vt
    are None for mode N.  A matrix with info != 0 gets NaN s, u, vt."""
    dt = a.dtype
    m, n = a.shape[-2:]
    k = min(m, n)
    batch = a.shape[:-2]
    flat = a.reshape((-1, m, n))
    nb = flat.shape[0]
    rdt = np.empty(0, dt).real.dtype
    uv, full = mode != "N", mode == "A"
    um, vn = (m, n) if full else (k, k)
    a_out = flat.copy()
    s_out = np.zeros((nb, k), rdt)
    u_out = np.zeros((nb, m, um), dt) if uv else None
    vt_out = np.zeros((nb, vn, n), dt) if uv else None
    info = np.zeros(nb, np.int32)
    if a.size:
        fn = _lapack_fn(driver, dt)
        work, _ = _lapack_fn(driver + "_lwork", dt)(m, n, compute_uv=int(uv), full_matrices=int(full))
        lwork = _lwork(work)
        for i in range(nb):
            x = _fortran(flat[i])
            u, s, vt, inf = fn(x, compute_uv=int(uv), full_matrices=int(full), lwork=lwork, overwrite_a=1)
            a_out[i], s_out[i], info[i] = x, s, inf
            if uv:
                u_out[i], vt_out[i] = u, vt
            if inf != 0:
                s_out[i] = np.nan
                if uv:
                    u_out[i] = vt_out[i] = np.nan
    return (a_out.reshape(a.shape), s_out.reshape(batch + (k,)),
            None if u_out is None else u_out.reshape(batch + (m, um)),
            None if vt_out is None else vt_out.reshape(batch + (vn, n)), info.reshape(batch))


def _unpack_eigenvectors(wi: np.ndarray, v: np.ndarray, cdt) -> np.ndarray:
    """Real ?geev's packed vectors -> complex ones, as jaxlib unpacks them: for a complex pair (wi[j] != 0,
    not NaN) columns j, j+1 hold Re, Im of the first vector; the second is its conjugate."""
    n = v.shape[-1]
    out = _complex_of(v, np.zeros_like(v), cdt)
    j = 0
    while j < n:
        if wi[j] == 0 or np.isnan(wi[j]) or j + 1 == n:
            j += 1
            continue
        out[:, j] = _complex_of(v[:, j], v[:, j + 1], cdt)
        out[:, j + 1] = _complex_of(v[:, j], -v[:, j + 1], cdt)
        j += 2
    return out


def geev(a: np.ndarray, left: bool, right: bool):
    """LAPACK ?geev on [..., n, n], as jaxlib calls it (jobvl/jobvr V/N, lwork from a workspace query; a
    matrix with a non-finite entry is not given to LAPACK: info -4): (w complex, vl, vr complex (real
    matrices: LAPACK's packed conjugate pairs unpacked as jaxlib does), info int32 [...]).  Vectors not
    asked for are zeros; a matrix with info != 0 gets NaN eigenvalues and vectors."""
    dt = a.dtype
    n = a.shape[-1]
    batch = a.shape[:-2]
    flat = a.reshape((-1, n, n))
    nb = flat.shape[0]
    real = dt.kind == "f"
    cdt = np.result_type(dt, np.complex64)
    w_out = np.zeros((nb, n), cdt)
    vl_out = np.zeros((nb, n, n), cdt)
    vr_out = np.zeros((nb, n, n), cdt)
    info = np.zeros(nb, np.int32)
    if a.size:
        fn = _lapack_fn("geev", dt)
        work, _ = _lapack_fn("geev_lwork", dt)(n, compute_vl=int(left), compute_vr=int(right))
        kw = {"compute_vl": int(left), "compute_vr": int(right), "lwork": _lwork(work), "overwrite_a": 1}
        for i in range(nb):
            x = flat[i]
            inf = -4
            if np.all(np.isfinite(x)):
                if real:
                    wr, wi, vl, vr, inf = fn(_fortran(x), **kw)
                    w_out[i] = _complex_of(wr, wi, cdt)
                    if inf == 0:
                        if left:
                            vl_out[i] = _unpack_eigenvectors(wi, vl, cdt)
                        if right:
                            vr_out[i] = _unpack_eigenvectors(wi, vr, cdt)
                else:
                    w, vl, vr, inf = fn(_fortran(x), **kw)
                    w_out[i] = w
                    if left:
                        vl_out[i] = vl
                    if right:
                        vr_out[i] = vr
            info[i] = inf
            if inf != 0:
                w_out[i] = np.nan
                if left:
                    vl_out[i] = np.nan
                if right:
                    vr_out[i] = np.nan
    return (w_out.reshape(batch + (n,)), vl_out.reshape(a.shape), vr_out.reshape(a.shape),
            info.reshape(batch))


def gees(a: np.ndarray, vectors: bool):
    """LAPACK ?gees on [..., n, n], as jaxlib calls it (jobvs V/N, sort N, lwork from a workspace query):
    (t: upper triangular, or for real matrices quasi-triangular with LAPACK's standardized 2x2 blocks;
    vs (zeros unless vectors); w complex in t's diagonal order; sdim (0: no sorting); info int32 [...]).
    A matrix with info != 0 gets NaN t, w (and vs).  A matrix with a non-finite entry is not given to LAPACK
    (its ?gebal rejects NaN with a console message, and what follows is not meaningful): NaN t, w (and vs),
    info 1."""
    dt = a.dtype
    n = a.shape[-1]
    batch = a.shape[:-2]
    flat = a.reshape((-1, n, n))
    nb = flat.shape[0]
    real = dt.kind == "f"
    cdt = np.result_type(dt, np.complex64)
    t_out = flat.copy()
    vs_out = np.zeros_like(flat)
    w_out = np.zeros((nb, n), cdt)
    sdim = np.zeros(nb, np.int32)
    info = np.zeros(nb, np.int32)
    if a.size:
        fn = _lapack_fn("gees", dt)
        select = (lambda re, im: 0) if real else (lambda w: 0)  # not called: sort N
        query = fn(select, np.zeros((n, n), dt, order="F"), compute_v=int(vectors), sort_t=0, lwork=-1)
        kw = {"compute_v": int(vectors), "sort_t": 0, "lwork": _lwork(query[-2]), "overwrite_a": 1}
        for i in range(nb):
            if not np.all(np.isfinite(flat[i])):  # ?gebal would reject it (printing a message): not called
                t_out[i] = w_out[i] = np.nan
                if vectors:
                    vs_out[i] = np.nan
                info[i] = 1
                continue
            if real:
                t, sd, wr, wi, vs, _, inf = fn(select, _fortran(flat[i]), **kw)
                w_out[i] = _complex_of(wr, wi, cdt)
            else:
                t, sd, w, vs, _, inf = fn(select, _fortran(flat[i]), **kw)
                w_out[i] = w
            t_out[i], sdim[i], info[i] = t, sd, inf
            if vectors:
                vs_out[i] = vs
            if inf != 0:
                t_out[i] = w_out[i] = np.nan
                if vectors:
                    vs_out[i] = np.nan
    return (t_out.reshape(a.shape), vs_out.reshape(a.shape), w_out.reshape(batch + (n,)), sdim.reshape(batch),
            info.reshape(batch))


@target(*(_names("syevd", "sd") + _names("heevd", "cz")))
def _t_syevd(ins, ctx):
    (s,) = ctx.operand_shapes(ins)
    dt = _check_matrix(ins, s, "the operand", square=True)
    cfg = backend_config_dict(ins)
    vectors = _flag(ins, cfg, "mode", "VN", "V") == "V"
    lower = _flag(ins, cfg, "uplo", "LU", "L") == "L"
    _, sw, si = _result_shapes(ins, 3)

    def run(a):
        v, w, info = syevd(np.asarray(a, dt), vectors, lower)
        return (v.astype(dt, copy=False), w.astype(sw.element_type.dtype, copy=False).reshape(tuple(sw.dims)),
                info.astype(si.element_type.dtype).reshape(tuple(si.dims)))
    return run


@target(*_names("gesdd"), *_names("gesvd"), "cusolver_gesvdj_ffi", "hipsolver_gesvdj_ffi")
def _t_gesdd(ins, ctx):
    name = ins.attrs.get("custom_call_target")
    (s,) = ctx.operand_shapes(ins)
    cfg = backend_config_dict(ins)
    if name.startswith("lapack_"):
        dt = _check_matrix(ins, s, "the operand")
        mode = _flag(ins, cfg, "mode", "ASNO", "S")
    else:  # cuSOLVER's Jacobi SVD: compute_uv / full_matrices bools
        if s is None or s.is_tuple or len(s.dims) < 2 or s.element_type.name not in _FLOATS:
            raise error_at(ins, f"custom-call {name}: the operand must be a (batch of) f32/f64/c64/c128 "
                                f"matrices, got {shape_text(s)}")
        dt = s.element_type.dtype
        mode = ("A" if bool(cfg.get("full_matrices", True)) else "S") if bool(cfg.get("compute_uv", True)) \
            else "N"
    v_not_vt = not name.startswith("lapack_")  # gesvdj returns V itself (JAX takes its adjoint)
    driver = "gesvd" if "gesvd_ffi" in name and name.startswith("lapack_") else "gesdd"
    if mode == "O":
        raise unsupported(ins, f"{ins.attrs.get('custom_call_target')} with mode 'O'")
    _, ss, su, svt, si = _result_shapes(ins, 5)
    m, n = s.dims[-2:]
    k = min(m, n)
    if mode != "N":
        um, vn = (m, n) if mode == "A" else (k, k)
        if tuple(su.dims[-2:]) != (m, um) or tuple(svt.dims[-2:]) != ((n, vn) if v_not_vt else (vn, n)):
            raise error_at(ins, f"custom-call {ins.attrs.get('custom_call_target')}: u {shape_text(su)} / vt "
                                f"{shape_text(svt)} do not fit mode {mode!r} for {shape_text(s)}")

    def run(a):
        a_out, sv, u, vt, info = gesdd(np.asarray(a, dt), mode, driver)
        if mode == "N":
            u, vt = np.zeros(tuple(su.dims), dt), np.zeros(tuple(svt.dims), dt)
        elif v_not_vt:
            vt = np.conj(np.swapaxes(vt, -1, -2))
        return (a_out.astype(dt, copy=False), sv.astype(ss.element_type.dtype, copy=False).reshape(tuple(ss.dims)),
                u.astype(dt, copy=False).reshape(tuple(su.dims)), vt.astype(dt, copy=False).reshape(tuple(svt.dims)),
                info.astype(si.element_type.dtype).reshape(tuple(si.dims)))
    return run


# --------------------------------------------------------------------------------------------------
# gehrd, geev, gtsv

@target(*_names("gehrd"))
def _t_gehrd(ins, ctx):
    (s,) = ctx.operand_shapes(ins)
    dt = _check_matrix(ins, s, "the operand", square=True)
    n = s.dims[-1]
    cfg = backend_config_dict(ins)
    ilo, ihi = int(cfg.get("low", 1)), int(cfg.get("high", n))
    if not (1 <= ilo <= max(1, ihi) and ihi <= n) and n > 0:
        raise error_at(ins, f"custom-call {ins.attrs.get('custom_call_target')}: low={ilo}, high={ihi} out of "
                            f"range for n={n}")
    _, st, si = _result_shapes(ins, 3)

    def run(a):
        h, tau, info = lapack_gehrd(np.asarray(a, dt), ilo, ihi)
        return (h.astype(dt, copy=False), tau.astype(dt, copy=False).reshape(tuple(st.dims)),
                info.astype(si.element_type.dtype).reshape(tuple(si.dims)))
    return run


@target(*_names("geev"), "cuhybrid_eig_real", "cuhybrid_eig_comp", "hiphybrid_eig_real", "hiphybrid_eig_comp")
def _t_geev(ins, ctx):
    name = ins.attrs.get("custom_call_target")
    (s,) = ctx.operand_shapes(ins)
    cfg = backend_config_dict(ins)
    if name.startswith("lapack_"):
        dt = _check_matrix(ins, s, "the operand", square=True)
        left = _flag(ins, cfg, "compute_left", "NV", "N") == "V"
        right = _flag(ins, cfg, "compute_right", "NV", "V") == "V"
    else:  # JAX's GPU "hybrid" eig: LAPACK's geev (or MAGMA's) on the host; flags left/right bools
        dt = _gpu_matrix(ins, s)
        if (np.dtype(dt).kind == "c") != name.endswith("_comp"):
            raise error_at(ins, f"custom-call {name}: operand {shape_text(s)} has the wrong element type")
        left, right = bool(cfg.get("left", False)), bool(cfg.get("right", True))
    real = np.dtype(dt).kind == "f"
    outs = _result_shapes(ins, 5 if real else 4)
    svl, svr, si = outs[-3:]

    def run(a):
        w, vl, vr, info = geev(np.asarray(a, dt), left, right)
        vl = vl.astype(svl.element_type.dtype, copy=False).reshape(tuple(svl.dims))
        vr = vr.astype(svr.element_type.dtype, copy=False).reshape(tuple(svr.dims))
        info = info.astype(si.element_type.dtype).reshape(tuple(si.dims))
        if real:
            return (w.real.astype(dt), w.imag.astype(dt), vl, vr, info)
        return (w.astype(dt), vl, vr, info)
    return run


# --------------------------------------------------------------------------------------------------
# gees (Schur decomposition)

@target(*_names("gees"))
def _t_gees(ins, ctx):
    """lapack_?gees_ffi (a) -> real: (t, vs, wr, wi, sdim, info); complex: (t, vs, w, sdim, info);
    backend_config mode V (Schur vectors) / N, sort N (sort S, with a selection function, is refused:
    JAX never emits it).  LAPACK's ?gees itself (see gees())."""
    (s,) = ctx.operand_shapes(ins)
    dt = _check_matrix(ins, s, "the operand", square=True)
    cfg = backend_config_dict(ins)
    vectors = _flag(ins, cfg, "mode", "VN", "V") == "V"
    _flag(ins, cfg, "sort", "N", "N")
    real = np.dtype(dt).kind == "f"
    outs = _result_shapes(ins, 6 if real else 5)
    si, sinfo = outs[-2], outs[-1]

    def run(a):
        t, z, w, sdim, info = gees(np.asarray(a, dt), vectors)
        sdim = sdim.astype(si.element_type.dtype).reshape(tuple(si.dims))
        inf = info.astype(sinfo.element_type.dtype).reshape(tuple(sinfo.dims))
        if real:
            return (t, z, w.real.astype(dt), w.imag.astype(dt), sdim, inf)
        return (t, z, w.astype(dt), sdim, inf)
    return run


def gtsv(dl, d, du, b):
    """LAPACK ?gtsv (Gaussian elimination with partial pivoting, row interchanges) on a batch:
    dl, d, du [..., n] (dl[0] and du[n-1] unused, as JAX passes them), b [..., n, nrhs] ->
    (dl', d', du', x, info): the overwritten diagonals hold the factorization as LAPACK leaves it;
    info = i (1-based) when U(i, i) is exactly zero: the solve stops there and b keeps what it had."""
    n = d.shape[-1]
    batch = d.shape[:-1]
    dl = np.array(dl).reshape((-1, n))
    d = np.array(d).reshape((-1, n))
    du = np.array(du).reshape((-1, n))
    b = np.array(b).reshape((-1,) + b.shape[-2:])
    nb = d.shape[0]
    info = np.zeros(nb, np.int32)
    L = dl[:, 1:]  # LAPACK's DL(1..n-1)
    with np.errstate(all="ignore"):
        for i in range(n - 1):
            act = info == 0
            nop = np.abs(d[:, i]) >= np.abs(L[:, i])
            sing = act & nop & (d[:, i] == 0)
            info = np.where(sing, i + 1, info).astype(np.int32)
            go = act & ~sing
            # no interchange
            f1 = L[:, i] / d[:, i]
            d1 = d[:, i + 1] - f1 * du[:, i]
            b1 = b[:, i + 1] - f1[:, None] * b[:, i]
            # interchange rows i and i+1
            f2 = d[:, i] / L[:, i]
            di2 = L[:, i].copy()
            temp = d[:, i + 1].copy()
            d12 = du[:, i] - f2 * temp
            if i < n - 2:
                li2 = du[:, i + 1].copy()
                du12 = -f2 * li2
            dui2 = temp
            bi2 = b[:, i + 1].copy()
            b12 = b[:, i] - f2[:, None] * b[:, i + 1]
            m1, m2 = go & nop, go & ~nop
            d[:, i + 1] = np.where(m1, d1, np.where(m2, d12, d[:, i + 1]))
            b[:, i + 1] = np.where(m1[:, None], b1, np.where(m2[:, None], b12, b[:, i + 1]))
            b[:, i] = np.where(m2[:, None], bi2, b[:, i])
            d[:, i] = np.where(m2, di2, d[:, i])
            du[:, i] = np.where(m2, dui2, du[:, i])
            if i < n - 2:
                L[:, i] = np.where(m1, 0, np.where(m2, li2, L[:, i]))
                du[:, i + 1] = np.where(m2, du12, du[:, i + 1])
        if n:
            info = np.where((info == 0) & (d[:, n - 1] == 0), n, info).astype(np.int32)
        ok = (info == 0)[:, None]
        x = b.copy()
        if n:
            x[:, n - 1] = x[:, n - 1] / d[:, n - 1, None]
        if n > 1:
            x[:, n - 2] = (x[:, n - 2] - du[:, n - 2, None] * x[:, n - 1]) / d[:, n - 2, None]
        for i in range(n - 3, -1, -1):
            x[:, i] = (x[:, i] - du[:, i, None] * x[:, i + 1] - L[:, i, None] * x[:, i + 2]) / d[:, i, None]
        b = np.where(ok[:, :, None], x, b)
    return (dl.reshape(batch + (n,)), d.reshape(batch + (n,)), du.reshape(batch + (n,)),
            b.reshape(batch + b.shape[-2:]), info.reshape(batch))


def _tridiagonal_operands(ins, ctx, check_matrix):
    """Check (dl, d, du, b) of a tridiagonal solve; returns the dtype `check_matrix` gives b."""
    name = ins.attrs.get("custom_call_target")
    if len(ins.operands) != 4:
        raise error_at(ins, f"custom-call {name} takes (dl, d, du, b)")
    sdl, sd, sdu, sb = ctx.operand_shapes(ins)
    dt = check_matrix(ins, sb, "b")
    for sh, w in ((sdl, "dl"), (sd, "d"), (sdu, "du")):
        if sh is None or sh.is_tuple or sh.element_type != sb.element_type or \
                tuple(sh.dims) != tuple(sb.dims[:-1]):
            raise error_at(ins, f"custom-call {name}: {w} {shape_text(sh)} does not fit b {shape_text(sb)}")
    return dt


@target(*_names("gtsv"))
def _t_gtsv(ins, ctx):
    dt = _tridiagonal_operands(ins, ctx, _check_matrix)
    si = _result_shapes(ins, 5)[4]

    def run(dl, d, du, b):
        r = gtsv(np.asarray(dl, dt), np.asarray(d, dt), np.asarray(du, dt), np.asarray(b, dt))
        return tuple(x.astype(dt, copy=False) for x in r[:4]) + (
            r[4].astype(si.element_type.dtype).reshape(tuple(si.dims)),)
    return run


# --------------------------------------------------------------------------------------------------
# cuSOLVER targets JAX emits for GPU (the element type is the operand's): the same results as LAPACK's
# (cusolverDn potrf leaves the other triangle as it was; syevd: ascending eigenvalues)

_FLOATS = ("f32", "f64", "c64", "c128")


def _gpu_matrix(ins, shape):
    return _gpu_any_matrix(ins, shape, square=True)


@target("cusolver_potrf_ffi", "hipsolver_potrf_ffi")
def _t_cusolver_potrf(ins, ctx):
    (s,) = ctx.operand_shapes(ins)
    dt = _gpu_matrix(ins, s)
    lower = bool(backend_config_dict(ins).get("lower", True))
    _, si = _result_shapes(ins, 2)

    def run(a):
        f, info = potrf_openblas(np.asarray(a, dt), lower)
        return (f.astype(dt, copy=False), info.astype(si.element_type.dtype).reshape(tuple(si.dims)))
    return run


@target("cusolver_syevd_ffi", "hipsolver_syevd_ffi")
def _t_cusolver_syevd(ins, ctx):
    (s,) = ctx.operand_shapes(ins)
    dt = _gpu_matrix(ins, s)
    lower = bool(backend_config_dict(ins).get("lower", True))
    _, sw, si = _result_shapes(ins, 3)

    def run(a):
        v, w, info = syevd(np.asarray(a, dt), True, lower)
        return (v.astype(dt, copy=False), w.astype(sw.element_type.dtype, copy=False).reshape(tuple(sw.dims)),
                info.astype(si.element_type.dtype).reshape(tuple(si.dims)))
    return run


# --------------------------------------------------------------------------------------------------
# sytrd / hetrd

def sytrd(a: np.ndarray, lower: bool):
    """LAPACK ?sytrd/?hetrd: Householder reduction of a Hermitian [..., n, n] (only the `lower`/upper
    triangle read) to real symmetric tridiagonal form: (a with d, e and the reflectors in that triangle,
    the other strict triangle as it was; d [..., n]; e [..., n-1]; tau [..., n-1])."""
    a0 = np.array(a)
    n = a0.shape[-1]
    batch = a0.shape[:-2]
    cplx = np.iscomplexobj(a0)
    x = a0.reshape((-1, n, n))
    nb = x.shape[0]
    if not lower:  # the upper case is the lower one on the reversed matrix (reflectors reversed too)
        x = x[:, ::-1, ::-1]
    tri = np.tril(x, -1)
    diag = np.real(np.diagonal(x, axis1=-2, axis2=-1)) if cplx else np.diagonal(x, axis1=-2, axis2=-1)
    h = tri + np.conj(np.swapaxes(tri, -1, -2))
    idx = np.arange(n)
    h[:, idx, idx] = diag
    e = np.zeros((nb, max(n - 1, 0)), x.real.dtype)
    tau = np.zeros((nb, max(n - 1, 0)), x.dtype)
    with np.errstate(all="ignore"):
        for i in range(n - 1):
            beta, t, v_tail = larfg(h[:, i + 1, i].copy(), h[:, i + 2:, i].copy())
            v = _with_one(v_tail)                                   # [B, n-i-1]
            sub = h[:, i + 1:, i + 1:]
            xv = t[:, None] * np.einsum("bij,bj->bi", sub, v)        # tau·A·v
            al = -0.5 * t * np.einsum("bi,bi->b", np.conj(xv), v)    # -tau/2 · xᴴv
            xv = xv + al[:, None] * v
            h[:, i + 1:, i + 1:] = sub - v[:, :, None] * np.conj(xv)[:, None, :] - \
                xv[:, :, None] * np.conj(v)[:, None, :]
            h[:, i + 2:, i] = v_tail
            h[:, i, i + 2:] = np.conj(v_tail)
            h[:, i + 1, i] = beta
            h[:, i, i + 1] = np.conj(beta)
            e[:, i] = np.real(beta)
            tau[:, i] = t
    d = np.real(np.diagonal(h, axis1=-2, axis2=-1)).astype(x.real.dtype)
    out = np.where(np.tri(n, n, 0, dtype=bool), h, x)  # the other strict triangle: the input's
    if cplx:
        out[:, idx, idx] = d
    if not lower:
        out = out[:, ::-1, ::-1]
        d, e, tau = d[:, ::-1], e[:, ::-1], tau[:, ::-1]
    k = max(n - 1, 0)
    return (out.reshape(batch + (n, n)), d.reshape(batch + (n,)), e.reshape(batch + (k,)),
            tau.reshape(batch + (k,)))


@target(*(_names("sytrd", "sd") + _names("hetrd", "cz")))
def _t_sytrd(ins, ctx):
    (s,) = ctx.operand_shapes(ins)
    dt = _check_matrix(ins, s, "the operand", square=True)
    lower = _flag(ins, backend_config_dict(ins), "uplo", "LU", "L") == "L"
    _, sd, se, st, si = _result_shapes(ins, 5)

    def run(a):
        out, d, e, tau, info = lapack_sytrd(np.asarray(a, dt), lower)
        return (out.astype(dt, copy=False), d.astype(sd.element_type.dtype).reshape(tuple(sd.dims)),
                e.astype(se.element_type.dtype).reshape(tuple(se.dims)),
                tau.astype(dt, copy=False).reshape(tuple(st.dims)),
                info.astype(si.element_type.dtype).reshape(tuple(si.dims)))
    return run


# --------------------------------------------------------------------------------------------------
# geqp3 (QR with column pivoting)

def geqp3(a: np.ndarray, jpvt: np.ndarray):
    """LAPACK ?geqp3 (unblocked ?laqp2 path): QR with column pivoting on [..., m, n]; jpvt [..., n]
    (non-zero: a column fixed in front) -> (packed QR, jpvt 1-based, tau [..., min(m,n)]).  The pivot is
    the first column of largest partial norm; norms downdated as LAPACK does, recomputed when the
    downdate loses accuracy (tol3z = sqrt(eps))."""
    a = np.array(a)
    m, n = a.shape[-2:]
    batch = a.shape[:-2]
    k = min(m, n)
    x = a.reshape((-1, m, n))
    nb = x.shape[0]
    jp = np.array(jpvt).reshape((-1, n)).astype(np.int64)
    rows = np.arange(nb)
    rdt = x.real.dtype
    tau = np.zeros((nb, k), x.dtype)
    # fixed columns (jpvt != 0) are swapped to the front in order, as LAPACK does
    fixed = jp != 0
    counts = fixed.sum(axis=-1)
    if np.any(counts != counts[0]):  # matrix by matrix
        res = [geqp3(x[b], jp[b]) for b in range(nb)]
        return tuple(np.stack([r[i] for r in res]).reshape(batch + res[0][i].shape) for i in range(3))
    nfxd = int(counts[0]) if nb else 0
    perm = np.broadcast_to(np.arange(n), (nb, n)).copy()
    cnt = np.zeros(nb, np.int64)
    for j in range(n):
        sw = fixed[:, j] & (cnt != j)
        if sw.any():
            r, t = rows[sw], cnt[sw]
            pj = perm[r, j].copy()
            perm[r, j] = perm[r, t]
            perm[r, t] = pj
            xj = x[r, :, j].copy()
            x[r, :, j] = x[r, :, t]
            x[r, :, t] = xj
        cnt = cnt + fixed[:, j]
    jp = perm + 1
    eps = np.finfo(rdt).eps / 2
    tol3z = np.sqrt(eps)
    with np.errstate(all="ignore"):
        for j in range(min(nfxd, k)):  # fixed columns: plain Householder QR, applied to the rest
            beta, t, v_tail = larfg(x[:, j, j].copy(), x[:, j + 1:, j])
            x[:, j + 1:, j] = v_tail
            x[:, j, j] = beta
            tau[:, j] = t
            if j + 1 < n:
                x[:, j:, j + 1:] = _apply_left(x[:, j:, j + 1:], _with_one(v_tail), np.conj(t))
        off = nfxd
        vn1 = np.sqrt(np.sum(np.abs(x[:, off:, :]) ** 2, axis=-2)).astype(rdt)  # [B, n]
        vn2 = vn1.copy()
        for i in range(nfxd, k):
            pvt = i + np.argmax(vn1[:, i:], axis=-1)
            sw = pvt != i
            if sw.any():
                r, p = rows[sw], pvt[sw]
                xi = x[r, :, i].copy()
                x[r, :, i] = x[r, :, p]
                x[r, :, p] = xi
                ji = jp[r, i].copy()
                jp[r, i] = jp[r, p]
                jp[r, p] = ji
                vn1[r, p] = vn1[r, i]
                vn2[r, p] = vn2[r, i]
            beta, t, v_tail = larfg(x[:, i, i].copy(), x[:, i + 1:, i])
            x[:, i + 1:, i] = v_tail
            x[:, i, i] = beta
            tau[:, i] = t
            if i + 1 < n:
                x[:, i:, i + 1:] = _apply_left(x[:, i:, i + 1:], _with_one(v_tail), np.conj(t))
                v1 = vn1[:, i + 1:]
                nz = v1 != 0
                temp = 1 - (np.abs(x[:, i, i + 1:]) / np.where(nz, v1, 1)) ** 2
                temp = np.maximum(temp, 0)
                temp2 = temp * (v1 / np.where(nz, vn2[:, i + 1:], 1)) ** 2
                recompute = nz & (temp2 <= tol3z)
                if i + 1 < m:
                    fresh = np.sqrt(np.sum(np.abs(x[:, i + 1:, i + 1:]) ** 2, axis=-2)).astype(rdt)
                else:
                    fresh = np.zeros_like(v1)
                new1 = np.where(recompute, fresh, np.where(nz, v1 * np.sqrt(temp), v1))
                vn2[:, i + 1:] = np.where(recompute, fresh, vn2[:, i + 1:])
                vn1[:, i + 1:] = new1.astype(rdt)
    return x.reshape(batch + (m, n)), jp.astype(np.int32).reshape(batch + (n,)), tau.reshape(batch + (k,))


@target(*_names("geqp3"), "cuhybrid_geqp3", "hiphybrid_geqp3")
def _t_geqp3(ins, ctx):
    if len(ins.operands) != 2:
        raise error_at(ins, f"custom-call {ins.attrs.get('custom_call_target')} takes (a, jpvt)")
    sa, _ = ctx.operand_shapes(ins)
    if ins.attrs.get("custom_call_target", "").startswith("lapack_"):
        dt = _check_matrix(ins, sa, "a")
    else:
        dt = _gpu_any_matrix(ins, sa, "a")
    _, spv, st = _result_shapes(ins, 3)

    def run(a, jpvt):
        r, jp, tau = geqp3(np.asarray(a, dt), np.asarray(jpvt))
        return (r.astype(dt, copy=False), jp.astype(spv.element_type.dtype).reshape(tuple(spv.dims)),
                tau.astype(dt, copy=False).reshape(tuple(st.dims)))
    return run


# --------------------------------------------------------------------------------------------------
# more GPU targets (cuSOLVER / hipSOLVER as JAX lowers lu, qr, tridiagonal for CUDA and ROCm): the same
# factorizations as the LAPACK ones above; the element type is the operand's

def _gpu_any_matrix(ins, shape, what="the operand", square=False):
    name = ins.attrs.get("custom_call_target")
    if shape is None or shape.is_tuple or len(shape.dims) < 2 or shape.element_type.name not in _FLOATS or \
            (square and shape.dims[-1] != shape.dims[-2]):
        raise error_at(ins, f"custom-call {name}: {what} must be a (batch of) {'square ' if square else ''}"
                            f"f32/f64/c64/c128 matrices, got {shape_text(shape)}")
    return shape.element_type.dtype


@target("cusolver_getrf_ffi", "hipsolver_getrf_ffi")
def _t_gpu_getrf(ins, ctx):
    (s,) = ctx.operand_shapes(ins)
    dt = _gpu_any_matrix(ins, s)
    _, sp, si = _result_shapes(ins, 3)

    def run(a):
        lu, piv, info = getrf(np.asarray(a, dt))
        return (lu.astype(dt, copy=False), piv.astype(sp.element_type.dtype).reshape(tuple(sp.dims)),
                info.astype(si.element_type.dtype).reshape(tuple(si.dims)))
    return run


def lu_pivots_to_permutation(pivots: np.ndarray, size: int) -> np.ndarray:
    """0-based LAPACK-style row swaps [..., k] -> the permutation [..., size] they make of 0..size-1."""
    batch = pivots.shape[:-1]
    piv = pivots.reshape((-1, pivots.shape[-1])).astype(np.int64)
    perm = np.broadcast_to(np.arange(size, dtype=np.int64), (piv.shape[0], size)).copy()
    rows = np.arange(piv.shape[0])
    for i in range(min(piv.shape[-1], size)):
        p = piv[:, i]
        pi, pp = perm[rows, i].copy(), perm[rows, p].copy()
        perm[rows, i] = pp
        perm[rows, p] = pi
    return perm.reshape(batch + (size,))


@target("cu_lu_pivots_to_permutation", "hip_lu_pivots_to_permutation")
def _t_pivots_to_permutation(ins, ctx):
    name = ins.attrs.get("custom_call_target")
    (s,) = ctx.operand_shapes(ins)
    out = ins.shape
    if s is None or s.is_tuple or not s.dims or out is None or out.is_tuple or not out.dims or \
            tuple(out.dims[:-1]) != tuple(s.dims[:-1]):
        raise error_at(ins, f"custom-call {name}: pivots {shape_text(s)} do not fit the result {shape_text(out)}")
    size = out.dims[-1]

    def run(p):
        p = np.asarray(p)
        if p.size and (p.min() < 0 or p.max() >= size):
            raise error_at(ins, f"custom-call {name}: a pivot is outside [0, {size})")
        return lu_pivots_to_permutation(p, size).astype(out.element_type.dtype)
    return run


@target("cusolver_geqrf_ffi", "hipsolver_geqrf_ffi")
def _t_gpu_geqrf(ins, ctx):
    (s,) = ctx.operand_shapes(ins)
    dt = _gpu_any_matrix(ins, s)
    _, st = _result_shapes(ins, 2)

    def run(a):
        r, tau = geqrf(np.asarray(a, dt))
        return (r.astype(dt, copy=False), tau.astype(dt, copy=False).reshape(tuple(st.dims)))
    return run


@target("cusolver_orgqr_ffi", "hipsolver_orgqr_ffi")
def _t_gpu_orgqr(ins, ctx):
    name = ins.attrs.get("custom_call_target")
    if len(ins.operands) != 2:
        raise error_at(ins, f"custom-call {name} takes (a, tau)")
    sa, st = ctx.operand_shapes(ins)
    dt = _gpu_any_matrix(ins, sa, "a")
    if st is None or st.is_tuple or tuple(st.dims[:-1]) != tuple(sa.dims[:-2]) or not st.dims or \
            st.dims[-1] > min(sa.dims[-2:]) or st.element_type != sa.element_type or sa.dims[-1] > sa.dims[-2]:
        raise error_at(ins, f"custom-call {name}: tau {shape_text(st)} does not fit a {shape_text(sa)}")

    def run(a, tau):
        return orgqr(np.asarray(a, dt), np.asarray(tau, dt)).astype(dt, copy=False)
    return run


@target("cusolver_sytrd_ffi", "hipsolver_sytrd_ffi")
def _t_gpu_sytrd(ins, ctx):
    (s,) = ctx.operand_shapes(ins)
    dt = _gpu_any_matrix(ins, s)
    if s.dims[-1] != s.dims[-2]:
        raise error_at(ins, f"custom-call {ins.attrs.get('custom_call_target')}: the operand must be square")
    lower = bool(backend_config_dict(ins).get("lower", True))
    _, sd, se, st, si = _result_shapes(ins, 5)

    def run(a):
        out, d, e, tau = sytrd(np.asarray(a, dt), lower)
        return (out.astype(dt, copy=False), d.astype(sd.element_type.dtype).reshape(tuple(sd.dims)),
                e.astype(se.element_type.dtype).reshape(tuple(se.dims)),
                tau.astype(dt, copy=False).reshape(tuple(st.dims)),
                np.zeros(tuple(si.dims), si.element_type.dtype))
    return run


@target("cusparse_gtsv2_ffi", "hipsparse_gtsv2_ffi")
def _t_gtsv2(ins, ctx):
    """cuSPARSE gtsv2 (JAX's tridiagonal_solve on GPU): (dl, d, du, b) -> x, solved as ?gtsv solves it
    (equal to rounding).  A singular system (no info output on GPU) gives NaN here."""
    dt = _tridiagonal_operands(ins, ctx, _gpu_any_matrix)

    def run(dl, d, du, b):
        *_, x, info = gtsv(np.asarray(dl, dt), np.asarray(d, dt), np.asarray(du, dt), np.asarray(b, dt))
        return np.where((info != 0)[..., None, None], np.array(np.nan, dt), x).astype(dt, copy=False)
    return run


# --------------------------------------------------------------------------------------------------
# XLA's Qr

@target("Qr")
def _t_qr(ins, ctx):
    """XLA's Qr (QrExpander's input): (a [..., m, n], taus [..., min(m, n)]) with R above the diagonal
    and the Householder vectors below it, LAPACK ?geqrf's packing (which XLA:CPU's values match to
    rounding)."""
    (s,) = ctx.operand_shapes(ins)
    if s is None or s.is_tuple or s.rank < 2 or s.element_type.name not in ("f32", "f64", "c64", "c128"):
        raise error_at(ins, "custom-call Qr takes one f32/f64/c64/c128 array of rank >= 2")

    def run(a):
        return lapack_geqrf(np.asarray(a))
    return run


@target("ProductOfElementaryHouseholderReflectors")
def _t_householder_product(ins, ctx):
    """XLA's ProductOfElementaryHouseholderReflectors (what QrExpander lowers Q's computation from):
    (a [..., m, n], taus [..., k]) -> [..., m, n], the first n columns of H1···Hk with
    Hi = I - tau_i v_i v_iᴴ, v_i below a's diagonal (unit diagonal): ?orgqr / ?ungqr."""
    sa, st = ctx.operand_shapes(ins)
    if sa is None or sa.is_tuple or sa.rank < 2 or sa.element_type.name not in ("f32", "f64", "c64", "c128"):
        raise error_at(ins, "custom-call ProductOfElementaryHouseholderReflectors takes an f32/f64/c64/c128 "
                            "array of rank >= 2 and its taus")
    if st is None or st.is_tuple or tuple(st.dims[:-1]) != tuple(sa.dims[:-2]) or not st.dims or \
            st.dims[-1] > min(sa.dims[-2:]) or st.element_type != sa.element_type:
        raise error_at(ins, f"custom-call ProductOfElementaryHouseholderReflectors: taus {shape_text(st)} do "
                            f"not fit a {shape_text(sa)}")
    dt = sa.element_type.dtype

    def run(a, taus):
        return orgqr(np.asarray(a, dt), np.asarray(taus, dt)).astype(dt, copy=False)
    return run
