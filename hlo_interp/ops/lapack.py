"""The LAPACK FFI custom-call targets JAX's linalg emits on CPU (`lapack_<t><routine>_ffi`, t = s, d,
c, z for f32, f64, c64, c128).  Operands and results are (batches of) matrices: the leading
`num_batch_dims` dimensions are batch dimensions, the last two the matrix (the column-major layouts
LAPACK needs are physical only: values here are logical arrays).  backend_config holds the LAPACK
character flags as integers (`{uplo = 76 : ui8}`: 'L').

  potrf   (a) -> (factor, info s32[batch]); uplo L/U.  Column-by-column Cholesky; the selected triangle
          holds the factor, the other keeps a's values.  info = the 1-based column of the first pivot
          <= 0 (the values from there on are not meaningful: JAX replaces them with NaN).  A NaN pivot
          is not a failure (OpenBLAS, which XLA:CPU's LAPACK is, tests `<= 0` only): NaN spreads, info 0.
  trsm    (a, b) -> x; side L/R -> left_side, uplo L/U -> lower, trans_x N/T/C -> NO_TRANSPOSE/
          TRANSPOSE/ADJOINT, diag U -> unit diagonal (linalg.triangular_solve; alpha is 1).
  getrf   (a) -> (lu, pivots s32[batch, min(m,n)] 1-based, info s32[batch]): LU with partial pivoting
          (pivot: the first entry of largest |x|, |re|+|im| for complex, as i?amax), whole-row
          swaps, multipliers scaled by the pivot's reciprocal; a zero pivot sets info (its 1-based
          column, the first one) and the factorization goes on, as LAPACK's.  Known difference: with a
          NaN in a pivot column OpenBLAS's SIMD i?amax picks a pivot that depends on the type and the
          vector length (not reproducible); here the first NaN is the pivot.  The factor is NaN there
          either way.
  geqrf   (a) -> (packed QR, tau[batch, min(m,n)]): Householder reflectors as LAPACK's ?larfg makes
          them (beta = -sign(Re alpha)·‖(alpha, x)‖, tau = (beta - alpha)/beta, v = x/(alpha - beta),
          tau = 0 when x = 0 and alpha is real); R in the upper triangle, v below the diagonal.
  orgqr / ungqr  (a, tau) -> Q, the first n columns of H1·H2···Hk, Hi = I - tau_i v_i v_iᴴ.
  geqp3   (a, jpvt) -> (packed QR, jpvt 1-based, tau): QR with column pivoting as ?laqp2 (columns with
          jpvt != 0 first, then the first column of largest partial norm, norms downdated as LAPACK
          does and recomputed when tol3z = sqrt(eps) says so).
  gehrd   (a) -> (packed Hessenberg form, tau[batch, n-1], info); backend_config low/high = ilo/ihi.
  sytrd / hetrd  (a) -> (packed, d, e, tau, info); uplo L/U: Householder tridiagonal reduction as
          ?sytd2/?hetd2 (the other strict triangle keeps a's values).
  gtsv    (dl, d, du, b) -> (dl', d', du', x, info): ?gtsv's elimination with row interchanges, step
          for step (the overwritten diagonals are LAPACK's); info = the first exactly-zero pivot.
  syevd / heevd  (a) -> (eigenvectors, eigenvalues ascending (real), info); mode V/N, uplo L/U (only
          that triangle is read).  numpy.linalg.eigh (LAPACK ?syevd/?heevd itself); a matrix whose
          iteration fails (NaN input) gets info = 1 and NaN values, as JAX then reports.  With mode N
          the first result (LAPACK leaves a destroyed) is a unchanged.
  geev    (a) -> real: (wr, wi, vl, vr, info); complex: (w, vl, vr, info) (vectors complex, as JAX's
          FFI returns them): numpy.linalg.eig (LAPACK ?geev).  compute_left=V: the rows of V^-1,
          normalized as ?geev does (left_eigenvectors; a matrix whose eigenvectors are not a basis is
          refused); otherwise vl is zeros.  The order of the eigenvalues and the phases of the vectors
          are LAPACK's when NumPy's LAPACK takes the same path (real matrices: up to sign).
  gees    (a) -> real: (t, vs, wr, wi, sdim, info); complex: (t, vs, w, sdim, info): a Schur form
          a = vs t vs^H (schur(): t quasi-triangular with LAPACK's standardized 2x2 blocks for real
          matrices); not unique: equal to ?gees's when the eigenvalue order matches, up to the signs
          of the Schur vectors.
  gesdd / gesvd  (a) -> (a', s, u, vt, info); mode A (full) / S (economy) / N (values only: u, vt
          zero).  numpy.linalg.svd (LAPACK ?gesdd).  a' (destroyed by LAPACK) is a unchanged.  The
          singular values are determined; the vectors' signs/phases may differ from ?gesvd's.
  GPU (what JAX lowers linalg to for CUDA / ROCm; the element type is the operand's):
          cusolver_/hipsolver_ potrf_ffi, syevd_ffi (backend_config lower=bool), getrf_ffi, geqrf_ffi,
          orgqr_ffi, sytrd_ffi: as the LAPACK ones; cu_/hip_lu_pivots_to_permutation: 0-based row swaps
          -> permutation of the result's length; cusolver_/hipsolver_gesvdj_ffi (compute_uv,
          full_matrices): as gesdd but returning V (not Vᴴ); cuhybrid_/hiphybrid_ eig_real / eig_comp
          (left, right) as geev; cuhybrid_/hiphybrid_geqp3 as geqp3; cusparse_/hipsparse_gtsv2_ffi
          (dl, d, du, b) -> x as gtsv (NaN for a singular system).
Results agree with LAPACK to rounding; the signs of eigen/singular vectors are LAPACK's when NumPy's
LAPACK takes the same path (tests compare what is mathematically determined).
Not implemented (the unknown-target message): gees (Schur); geev's left eigenvectors are refused.
"""
from __future__ import annotations

import numpy as np

from .custom_call import _shape_str, backend_config_dict, target
from .linalg import triangular_solve
from .registry import error_at, unsupported

_TYPES = {"s": "f32", "d": "f64", "c": "c64", "z": "c128"}
_REAL = {"f32": "f32", "f64": "f64", "c64": "f32", "c128": "f64"}


def _names(routine: str, letters: str = "sdcz") -> list[str]:
    return [f"lapack_{t}{routine}_ffi" for t in letters]


def _check_matrix(ins, shape, what, square=False):
    name = ins.attrs.get("custom_call_target")
    if shape is None or shape.is_tuple or len(shape.dims) < 2 or (square and shape.dims[-1] != shape.dims[-2]):
        raise error_at(ins, f"custom-call {name}: {what} must be a (batch of) {'square ' if square else ''}"
                            f"matrices, got {_shape_str(shape)}")
    want = _TYPES[name[len("lapack_")]]
    if shape.element_type.name != want:
        raise error_at(ins, f"custom-call {name}: {what} must be {want}, got {_shape_str(shape)}")
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
                            f"{n}-tuple, got {_shape_str(out)}")
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
        f, info = potrf_openblas(np.asarray(a, dt), lower)
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
                            f"{_shape_str(sa)} and {_shape_str(sb)}")

    def run(a, b):
        with np.errstate(all="ignore"):
            x = triangular_solve(np.asarray(a, dt), np.asarray(b, dt), left_side=left, lower=lower,
                                 unit_diagonal=unit, transpose_a=trans)
        return np.asarray(x).astype(dt, copy=False)
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
        lu, piv, info = getrf(np.asarray(a, dt))
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
        r, tau = geqrf(np.asarray(a, dt))
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
        raise error_at(ins, f"custom-call {ins.attrs.get('custom_call_target')}: tau {_shape_str(st)} does "
                            f"not fit a {_shape_str(sa)}")
    if sa.dims[-1] > sa.dims[-2]:
        raise error_at(ins, f"custom-call {ins.attrs.get('custom_call_target')}: a {_shape_str(sa)} has more "
                            f"columns than rows")

    def run(a, tau):
        return orgqr(np.asarray(a, dt), np.asarray(tau, dt)).astype(dt, copy=False)
    return run


# --------------------------------------------------------------------------------------------------
# syevd / heevd, gesdd (NumPy's LAPACK)

def _per_matrix(fn, a, outs_like):
    """fn on the whole batch; if LAPACK fails (LinAlgError), matrix by matrix: failed ones -> NaN, info 1."""
    batch = a.shape[:-2]
    try:
        with np.errstate(all="ignore"):
            res = fn(a)
        return res, np.zeros(batch, np.int32)
    except np.linalg.LinAlgError:
        pass
    flat = a.reshape((-1,) + a.shape[-2:])
    outs = [np.full((flat.shape[0],) + s, np.nan, d) for s, d in outs_like]
    info = np.zeros(flat.shape[0], np.int32)
    for i in range(flat.shape[0]):
        try:
            with np.errstate(all="ignore"):
                r = fn(flat[i])
            for o, v in zip(outs, r):
                o[i] = v
        except np.linalg.LinAlgError:
            info[i] = 1
    return tuple(o.reshape(batch + o.shape[1:]) for o in outs), info.reshape(batch)


@target(*(_names("syevd", "sd") + _names("heevd", "cz")))
def _t_syevd(ins, ctx):
    (s,) = ctx.operand_shapes(ins)
    dt = _check_matrix(ins, s, "the operand", square=True)
    cfg = backend_config_dict(ins)
    vectors = _flag(ins, cfg, "mode", "VN", "V") == "V"
    uplo = _flag(ins, cfg, "uplo", "LU", "L")
    _, sw, si = _result_shapes(ins, 3)
    rdt = sw.element_type.dtype
    n = s.dims[-1]

    def run(a):
        a = np.asarray(a, dt)
        if a.size == 0:
            return (a.copy(), np.zeros(tuple(sw.dims), rdt), np.zeros(tuple(si.dims), si.element_type.dtype))
        if vectors:
            (w, v), info = _per_matrix(lambda x: np.linalg.eigh(x, UPLO=uplo), a, [((n,), rdt), ((n, n), dt)])
        else:
            (w,), info = _per_matrix(lambda x: (np.linalg.eigvalsh(x, UPLO=uplo),), a, [((n,), rdt)])
            v = a
        return (np.asarray(v).astype(dt, copy=False), np.asarray(w).astype(rdt, copy=False).reshape(tuple(sw.dims)),
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
                                f"matrices, got {_shape_str(s)}")
        dt = s.element_type.dtype
        mode = ("A" if bool(cfg.get("full_matrices", True)) else "S") if bool(cfg.get("compute_uv", True)) \
            else "N"
    v_not_vt = not name.startswith("lapack_")  # gesvdj returns V itself (JAX takes its adjoint)
    if mode == "O":
        raise unsupported(ins, f"{ins.attrs.get('custom_call_target')} with mode 'O'")
    _, ss, su, svt, si = _result_shapes(ins, 5)
    m, n = s.dims[-2:]
    k = min(m, n)
    if mode != "N":
        um, vn = (m, n) if mode == "A" else (k, k)
        if tuple(su.dims[-2:]) != (m, um) or tuple(svt.dims[-2:]) != ((n, vn) if v_not_vt else (vn, n)):
            raise error_at(ins, f"custom-call {ins.attrs.get('custom_call_target')}: u {_shape_str(su)} / vt "
                                f"{_shape_str(svt)} do not fit mode {mode!r} for {_shape_str(s)}")
    rdt = ss.element_type.dtype

    def run(a):
        a = np.asarray(a, dt)
        zeros_u = np.zeros(tuple(su.dims), dt)
        zeros_vt = np.zeros(tuple(svt.dims), dt)
        if a.size == 0:
            return (a.copy(), np.zeros(tuple(ss.dims), rdt), zeros_u, zeros_vt,
                    np.zeros(tuple(si.dims), si.element_type.dtype))
        if mode == "N":
            (sv,), info = _per_matrix(lambda x: (np.linalg.svd(x, compute_uv=False),), a, [((k,), rdt)])
            u, vt = zeros_u, zeros_vt
        else:
            full = mode == "A"
            um, vn = (m, n) if full else (k, k)
            (u, sv, vt), info = _per_matrix(lambda x: tuple(np.linalg.svd(x, full_matrices=full)), a,
                                            [((m, um), dt), ((k,), rdt), ((vn, n), dt)])
            if v_not_vt:
                vt = np.conj(np.swapaxes(vt, -1, -2))
        return (a.copy(), np.asarray(sv).astype(rdt, copy=False).reshape(tuple(ss.dims)),
                np.asarray(u).astype(dt, copy=False).reshape(tuple(su.dims)),
                np.asarray(vt).astype(dt, copy=False).reshape(tuple(svt.dims)),
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
        h, tau = gehrd(np.asarray(a, dt), ilo, ihi)
        return (h.astype(dt, copy=False), tau.astype(dt, copy=False).reshape(tuple(st.dims)),
                np.zeros(tuple(si.dims), si.element_type.dtype))
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
            raise error_at(ins, f"custom-call {name}: operand {_shape_str(s)} has the wrong element type")
        left, right = bool(cfg.get("left", False)), bool(cfg.get("right", True))
    real = np.dtype(dt).kind == "f"
    outs = _result_shapes(ins, 5 if real else 4)
    svl, svr, si = outs[-3:]
    n = s.dims[-1]
    cdt = np.result_type(dt, np.complex64)

    def run(a):
        a = np.asarray(a, dt)
        if a.size == 0:
            w, v, info = np.zeros(a.shape[:-1], cdt), np.zeros(a.shape, cdt), np.zeros(a.shape[:-2], np.int32)
        elif right or left:
            (w, v), info = _per_matrix(lambda x: tuple(np.linalg.eig(x)), a, [((n,), cdt), ((n, n), cdt)])
        else:
            (w,), info = _per_matrix(lambda x: (np.linalg.eigvals(x),), a, [((n,), cdt)])
            v = np.zeros(a.shape, cdt)
        w = np.asarray(w).astype(cdt, copy=False)
        if left and a.size:
            try:
                u = left_eigenvectors(np.asarray(v).astype(cdt, copy=False))
            except np.linalg.LinAlgError:
                raise unsupported(ins, f"{name}: left eigenvectors of a defective matrix (its eigenvectors do not "
                                       f"form a basis)") from None
            vl = u.astype(svl.element_type.dtype, copy=False).reshape(tuple(svl.dims))
        else:
            vl = np.zeros(tuple(svl.dims), svl.element_type.dtype)
        if not right:
            v = np.zeros(a.shape, cdt)
        vr = np.asarray(v).astype(svr.element_type.dtype, copy=False).reshape(tuple(svr.dims))
        info = info.astype(si.element_type.dtype).reshape(tuple(si.dims))
        if real:
            return (w.real.astype(dt), w.imag.astype(dt), vl, vr, info)
        return (w.astype(dt), vl, vr, info)
    return run


def left_eigenvectors(v: np.ndarray) -> np.ndarray:
    """LAPACK ?geev's left eigenvectors from the right ones: the rows of V^-1 are the left eigenvectors
    (u_j^H A = lambda_j u_j^H, paired with the same eigenvalue), normalized as ?geev does: unit
    Euclidean norm, the component of largest modulus (the first such) made real and positive.  For
    complex matrices that fixes LAPACK's vectors (up to rounding); for real ones LAPACK may flip a
    vector's sign.  NaN where the eigenvectors do not form a basis (LinAlgError)."""
    n = v.shape[-1]
    eye = np.broadcast_to(np.eye(n, dtype=v.dtype), v.shape)
    with np.errstate(all="ignore"):
        cond = np.linalg.cond(v) if v.size else np.zeros(v.shape[:-2])
        if not np.all(np.isfinite(cond)) or np.any(cond * np.finfo(v.real.dtype).eps > 1e-3):
            raise np.linalg.LinAlgError("ill-conditioned eigenvector basis")
        u = np.conj(np.swapaxes(np.linalg.solve(v, eye), -1, -2))
        u = u / np.linalg.norm(u, axis=-2, keepdims=True)
        mag = np.abs(u) ** 2
        k = np.argmax(mag, axis=-2)[..., None, :]
        top = np.take_along_axis(u, k, axis=-2)
        u = u * (np.conj(top) / np.abs(top))
        fixed = np.take_along_axis(u, k, axis=-2)
        np.put_along_axis(u, k, fixed.real.astype(u.dtype), axis=-2)
    return u

# --------------------------------------------------------------------------------------------------
# gees (Schur decomposition)

def _null_vector(m: np.ndarray) -> np.ndarray:
    """The unit vector m maps closest to zero (the last right singular vector): an eigenvector of S
    when m = S - lambda I, accurate even when lambda is defective."""
    _, _, vh = np.linalg.svd(m)
    return np.conj(vh[-1])


def _standardize_2x2(t: np.ndarray, z: np.ndarray, k: int) -> None:
    """Rotate rows/columns k, k+1 of t (and columns of z) so the 2x2 block t[k:k+2, k:k+2] has equal
    diagonal entries (LAPACK's standard form of a complex-conjugate pair: [[a, b], [c, a]], b*c < 0)."""
    a, b, c, d = t[k, k], t[k, k + 1], t[k + 1, k], t[k + 1, k + 1]
    theta = 0.5 * np.arctan2(d - a, b + c)
    cs, sn = np.cos(theta), np.sin(theta)
    r = np.array([[cs, -sn], [sn, cs]], t.dtype)
    t[k:k + 2, :] = r.T @ t[k:k + 2, :]
    t[:, k:k + 2] = t[:, k:k + 2] @ r
    z[:, k:k + 2] = z[:, k:k + 2] @ r
    m = 0.5 * (t[k, k] + t[k + 1, k + 1])
    t[k, k] = t[k + 1, k + 1] = m


def schur(a: np.ndarray, real: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Schur decomposition a = z t z^H of one square matrix: (t, z, eigenvalues in t's diagonal order).
    Complex: t upper triangular.  Real (real=True): t quasi upper triangular, 1x1 blocks for real
    eigenvalues and standardized 2x2 blocks [[a, b], [c, a]] (b*c < 0) for complex-conjugate pairs,
    (a + i sqrt(-b c)) first, as ?gees returns them.  Made by deflation in the order of
    numpy.linalg.eigvals (LAPACK ?geev's, usually ?gees's own): at each step an eigenvector of the
    trailing block (the last singular vector of S - lambda I, so defective eigenvalues are fine) or,
    for a complex pair, the real 2-dimensional invariant subspace [Re x, Im x] is rotated to the front
    by an orthogonal (unitary) Householder factor."""
    n = a.shape[-1]
    wdt = a.dtype if a.dtype.kind == "c" else np.result_type(a.dtype, np.complex64)
    t = np.array(a, dtype=a.dtype if real else wdt, copy=True)
    z = np.eye(n, dtype=t.dtype)
    if n == 0:
        return t, z, np.zeros(0, wdt)
    if not np.all(np.isfinite(t)):
        raise np.linalg.LinAlgError("non-finite matrix")
    target = list(np.linalg.eigvals(a))
    k = 0
    while k < n:
        sub = t[k:, k:]
        m = n - k
        lam_all = np.linalg.eigvals(sub) if m > 1 else np.array([sub[0, 0]], wdt)
        want = target[k] if k < len(target) else lam_all[0]
        lam = lam_all[np.argmin(np.abs(lam_all - want))]
        pair = real and m > 1 and lam.imag != 0 and abs(lam.imag) > 8 * np.finfo(t.real.dtype).eps * max(1.0, abs(lam))
        if m == 1:
            break
        if not pair:
            if real:
                lam = lam.real
            x = _null_vector(sub - lam * np.eye(m, dtype=sub.dtype))
            basis = x[:, None].astype(t.dtype) if not real else np.real(x)[:, None].astype(t.dtype)
            width = 1
        else:
            if lam.imag < 0:
                lam = np.conj(lam)
            x = _null_vector(sub.astype(wdt) - lam * np.eye(m, dtype=wdt))
            basis = np.stack([x.real, x.imag], axis=1).astype(t.dtype)
            width = 2
        q, _ = np.linalg.qr(basis, mode="complete")
        t[k:, :] = np.conj(q.T) @ t[k:, :]
        t[:, k:] = t[:, k:] @ q
        z[:, k:] = z[:, k:] @ q
        t[k + width:, k:k + width] = 0
        if width == 2:
            _standardize_2x2(t, z, k)
        k += width
    # eigenvalues from t's diagonal (blocks)
    w = np.zeros(n, wdt)
    k = 0
    while k < n:
        if real and k + 1 < n and t[k + 1, k] != 0:
            a_, b_, c_ = t[k, k], t[k, k + 1], t[k + 1, k]
            im = np.sqrt(abs(b_)) * np.sqrt(abs(c_))
            w[k], w[k + 1] = a_ + 1j * im, a_ - 1j * im
            k += 2
        else:
            w[k] = t[k, k]
            k += 1
    return t, z, w


@target(*_names("gees"))
def _t_gees(ins, ctx):
    """lapack_?gees_ffi (a) -> real: (t, vs, wr, wi, sdim, info); complex: (t, vs, w, sdim, info);
    backend_config mode V (Schur vectors) / N, sort N (sort S, with a selection function, is refused:
    JAX never emits it).  See schur(): a Schur form is not unique; ours equals ?gees's when the
    eigenvalue order matches and up to the signs (phases) of the Schur vectors."""
    (s,) = ctx.operand_shapes(ins)
    dt = _check_matrix(ins, s, "the operand", square=True)
    cfg = backend_config_dict(ins)
    vectors = _flag(ins, cfg, "mode", "VN", "V") == "V"
    _flag(ins, cfg, "sort", "N", "N")
    real = np.dtype(dt).kind == "f"
    outs = _result_shapes(ins, 6 if real else 5)
    si, sinfo = outs[-2], outs[-1]
    n = s.dims[-1]

    def run(a):
        a = np.asarray(a, dt)
        batch = a.shape[:-2]
        flat = a.reshape((int(np.prod(batch, dtype=np.int64)), n, n))
        T = np.empty_like(flat)
        Z = np.zeros_like(flat)
        W = np.zeros((flat.shape[0], n), np.result_type(dt, np.complex64))
        info = np.zeros(flat.shape[0], np.int32)
        for i in range(flat.shape[0]):
            try:
                with np.errstate(all="ignore"):
                    t, z, w = schur(flat[i], real)
                T[i], W[i] = t.astype(dt, copy=False), w
                if vectors:
                    Z[i] = z.astype(dt, copy=False)
            except np.linalg.LinAlgError:
                T[i], W[i], info[i] = np.nan, np.nan, 1
                if vectors:
                    Z[i] = np.nan
        T, Z, W = T.reshape(a.shape), Z.reshape(a.shape), W.reshape(batch + (n,))
        sdim = np.zeros(tuple(si.dims), si.element_type.dtype)
        inf = info.reshape(batch).astype(sinfo.element_type.dtype).reshape(tuple(sinfo.dims))
        if real:
            return (T, Z, W.real.astype(dt), W.imag.astype(dt), sdim, inf)
        return (T, Z, W.astype(dt), sdim, inf)
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
            raise error_at(ins, f"custom-call {name}: {w} {_shape_str(sh)} does not fit b {_shape_str(sb)}")
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
    name = ins.attrs.get("custom_call_target")
    if shape is None or shape.is_tuple or len(shape.dims) < 2 or shape.dims[-1] != shape.dims[-2] or \
            shape.element_type.name not in _FLOATS:
        raise error_at(ins, f"custom-call {name}: the operand must be a (batch of) square f32/f64/c64/c128 "
                            f"matrices, got {_shape_str(shape)}")
    return shape.element_type.dtype


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
    cfg = backend_config_dict(ins)
    uplo = "L" if bool(cfg.get("lower", True)) else "U"
    _, sw, si = _result_shapes(ins, 3)
    rdt = sw.element_type.dtype
    n = s.dims[-1]

    def run(a):
        a = np.asarray(a, dt)
        if a.size == 0:
            return (a.copy(), np.zeros(tuple(sw.dims), rdt), np.zeros(tuple(si.dims), si.element_type.dtype))
        (w, v), info = _per_matrix(lambda x: np.linalg.eigh(x, UPLO=uplo), a, [((n,), rdt), ((n, n), dt)])
        return (np.asarray(v).astype(dt, copy=False), np.asarray(w).astype(rdt, copy=False).reshape(tuple(sw.dims)),
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
        out, d, e, tau = sytrd(np.asarray(a, dt), lower)
        return (out.astype(dt, copy=False), d.astype(sd.element_type.dtype).reshape(tuple(sd.dims)),
                e.astype(se.element_type.dtype).reshape(tuple(se.dims)),
                tau.astype(dt, copy=False).reshape(tuple(st.dims)),
                np.zeros(tuple(si.dims), si.element_type.dtype))
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

def _gpu_any_matrix(ins, shape, what="the operand"):
    name = ins.attrs.get("custom_call_target")
    if shape is None or shape.is_tuple or len(shape.dims) < 2 or shape.element_type.name not in _FLOATS:
        raise error_at(ins, f"custom-call {name}: {what} must be a (batch of) f32/f64/c64/c128 matrices, got "
                            f"{_shape_str(shape)}")
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
        raise error_at(ins, f"custom-call {name}: pivots {_shape_str(s)} do not fit the result {_shape_str(out)}")
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
        raise error_at(ins, f"custom-call {name}: tau {_shape_str(st)} does not fit a {_shape_str(sa)}")

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
