"""triangular-solve and cholesky, decomposed as XLA:CPU decomposes them.

XLA:CPU has no kernel for either op: its TriangularSolveExpander and CholeskyExpander rewrite them
into dots, divides and loops before code generation.  This module follows the same algorithms on
NumPy arrays (vectorized over the batch dimensions; Python loops only over matrix rows/columns),
so the values XLA gives in the corner cases come out the same:

triangular-solve(a, b), options left_side, lower, unit_diagonal, transpose_a:
  * Solves op(a)·x = b (left_side) or x·op(a) = b, op = identity / transpose / conjugate transpose.
    Only the `lower` (or upper) triangle of a is read; with unit_diagonal the diagonal is not read
    (taken as 1).  Batch (leading) dimensions of a and b must be equal.
  * An empty b gives b; a 1x1 a gives b / a (b itself with unit_diagonal).
  * Batches of more than 8 matrices smaller than 32x32: row-by-row substitution ("solve directly").
  * Otherwise: the masked a is cut into diagonal blocks of 128 (the last padded with the identity);
    each block is scaled to unit diagonal, inverted row by row, unscaled; then the solution is built
    block by block with matrix products.
  * A singular a (a zero on the diagonal) is not an error: the divisions by zero give inf/NaN that
    spread through the products, as on XLA:CPU.
cholesky(a), option lower:
  * lower=true: L with a = L·Lᴴ from a's lower triangle (the diagonal's real part for complex);
    lower=false: the same on transpose(a), transposed back (a = Uᴴ·U from the upper triangle).
    The other triangle of the result is zero.
  * Blocked (128) left-looking Cholesky with an unblocked column-by-column kernel, as XLA's.
  * If a square root in a matrix's factorization is NaN (a not positive definite, or NaN input),
    the whole matrix of the result is NaN (per batch element).  A zero pivot is not flagged (sqrt(0)
    is 0): the divisions by it then give NaN entries, exactly as in XLA.
Element types: f32, f64, c64, c128, computed in their own precision: results agree with XLA:CPU to
rounding (the summation order of the products differs).  f16/bf16 are computed in f32 and rounded
once at the end, while XLA rounds every step of its expansion to the type: equal on small
well-conditioned inputs (tested), a few ulps of the type apart otherwise.  Other types are refused.
"""
from __future__ import annotations

import numpy as np

from .registry import error_at, kernel, unsupported

BLOCK = 128

_COMPUTE = {"f32": np.float32, "f64": np.float64, "c64": np.complex64, "c128": np.complex128,
            "f16": np.float32, "bf16": np.float32}


def _bdot(x: np.ndarray, tx: bool, y: np.ndarray, ty: bool) -> np.ndarray:
    """XLA's BatchDot: (x or xᵀ) @ (y or yᵀ) over the two minor dimensions (no conjugation)."""
    if tx:
        x = np.swapaxes(x, -1, -2)
    if ty:
        y = np.swapaxes(y, -1, -2)
    if x.shape[-1] == 0:
        return np.zeros(x.shape[:-1] + (y.shape[-1],), np.result_type(x, y))
    return np.matmul(x, y)


def _conj(x: np.ndarray, c: bool) -> np.ndarray:
    return np.conj(x) if c and np.iscomplexobj(x) else x


def _triangle(a: np.ndarray, lower: bool) -> np.ndarray:
    n = a.shape[-1]
    keep = np.tri(n, n, 0, dtype=bool) if lower else ~np.tri(n, n, -1, dtype=bool)
    return np.where(keep, a, np.zeros((), a.dtype))


def _invert_diagonal_blocks(blocks: np.ndarray, lower: bool) -> np.ndarray:
    """Inverse of each triangular block [..., bs, bs] (XLA's InvertDiagonalBlocks)."""
    shape = blocks.shape
    bs = shape[-1]
    blk = _triangle(blocks.reshape((-1, bs, bs)), lower)
    diags = np.diagonal(blk, axis1=-2, axis2=-1)  # [nb, bs]
    scaled = blk / diags[:, None, :]
    out = np.broadcast_to(-np.eye(bs, dtype=blk.dtype), blk.shape).copy()
    start = 0 if lower else bs - 1
    out[:, start, start] = 1
    for i in range(1, bs):
        j = i if lower else bs - 1 - i
        row = scaled[:, j:j + 1, :]  # [nb, 1, bs]
        out[:, j:j + 1, :] = -np.matmul(row, out)
    out = out / diags[:, :, None]
    return out.reshape(shape)


def _diagonal_blocks(a: np.ndarray, bs: int) -> np.ndarray:
    """[..., n, n] -> [..., nb, bs, bs]: the diagonal blocks, the last padded with the identity."""
    n = a.shape[-1]
    nb = -(-n // bs)
    out = np.zeros(a.shape[:-2] + (nb, bs, bs), a.dtype)
    for j in range(nb):
        k = min(bs, n - j * bs)
        out[..., j, :k, :k] = a[..., j * bs:j * bs + k, j * bs:j * bs + k]
        if k < bs:
            out[..., j, range(k, bs), range(k, bs)] = 1
    return out


def _solve_inverting(a, b, left, lower, transpose, conjugate, unit, block):
    n = a.shape[-1]
    if unit:
        a = np.where(np.tri(n, n, -1, dtype=bool) if lower else ~np.tri(n, n, 0, dtype=bool),
                     a, np.zeros((), a.dtype)) + np.eye(n, dtype=a.dtype)
    else:
        a = _triangle(a, lower)
    bs = min(block, n)
    inv = _invert_diagonal_blocks(_diagonal_blocks(a, bs), lower)
    nb = n // bs + (n % bs != 0)
    m = b.shape[-1] if left else b.shape[-2]
    backward = left ^ lower ^ transpose
    x = None
    for i in range(nb):
        j = nb - 1 - i if backward else i
        blk = n % bs if (n % bs != 0 and j + 1 == nb) else bs
        inv_block = _conj(inv[..., j, :blk, :blk], conjugate)
        k = min((j + 1) * bs, n)
        if left:
            b_row = b[..., j * bs:k, 0:m]
        else:
            b_row = b[..., 0:m, j * bs:k]
        if i == 0:
            rem = b_row
        else:
            if backward:
                s, e = [j * bs, max(0, (nb - i) * bs)], [k, n]
            else:
                s, e = [j * bs, 0], [k, min(i * bs, n)]
            if (not left) ^ transpose:
                s.reverse()
                e.reverse()
            a_row = _conj(a[..., s[0]:e[0], s[1]:e[1]], conjugate)
            rem = b_row - (_bdot(a_row, transpose, x, False) if left else _bdot(x, False, a_row, transpose))
        upd = _bdot(inv_block, transpose, rem, False) if left else _bdot(rem, False, inv_block, transpose)
        if x is None:
            x = upd
        else:
            axis = -2 if left else -1
            x = np.concatenate([upd, x] if backward else [x, upd], axis=axis)
    return x


def _solve_directly(a, b, left, lower, transpose, conjugate, unit):
    b = b.copy()
    m, nn = b.shape[-2], b.shape[-1]
    size = a.shape[-1]
    a = _conj(a, conjugate)
    backwards = transpose ^ lower ^ (not left)
    for i in range(size):
        j = i if backwards else size - i - 1
        if left:
            rs = (slice(j, j + 1), slice(0, nn))
        else:
            rs = (slice(0, m), slice(j, j + 1))
        b_row = b[(Ellipsis,) + rs]
        s = [j, 0 if backwards else j + 1]
        e = [j + 1, j if backwards else size]
        if transpose ^ (not left):
            s.reverse()
            e.reverse()
        a_chunk = a[..., s[0]:e[0], s[1]:e[1]]
        if left:
            which = transpose ^ lower
            b_chunk = b[..., (0 if which else j + 1):(j if which else m), :]
            b_row = b_row - _bdot(a_chunk, transpose, b_chunk, False)
        else:
            which = transpose ^ (not lower)
            b_chunk = b[..., :, (0 if which else j + 1):(j if which else nn)]
            b_row = b_row - _bdot(b_chunk, False, a_chunk, transpose)
        if not unit:
            b_row = b_row / a[..., j:j + 1, j:j + 1]
        b[(Ellipsis,) + rs] = b_row
    return b


def triangular_solve(a: np.ndarray, b: np.ndarray, *, left_side: bool = False, lower: bool = False,
                     unit_diagonal: bool = False, transpose_a: str = "NO_TRANSPOSE",
                     block: int = BLOCK) -> np.ndarray:
    """XLA's TriangularSolve (see the module docstring); a and b of one float/complex dtype."""
    transpose = transpose_a in ("TRANSPOSE", "ADJOINT")
    conjugate = transpose_a == "ADJOINT"
    if b.size == 0:
        return b.copy()
    size = a.shape[-1]
    if size == 1:
        with np.errstate(all="ignore"):
            return b.copy() if unit_diagonal else b / _conj(a, conjugate)
    batch = int(np.prod(a.shape[:-2], dtype=np.int64))
    with np.errstate(all="ignore"):  # a singular a: inf/NaN as in XLA, no warning
        if batch > block // 16 and size < block // 4:
            return _solve_directly(a, b, left_side, lower, transpose, conjugate, unit_diagonal)
        return _solve_inverting(a, b, left_side, lower, transpose, conjugate, unit_diagonal, block)


def _cholesky_unblocked(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Column-by-column Cholesky of the lower triangle of x [..., k, k]: (L, error flag [..., 1, 1])."""
    k = x.shape[-1]
    cplx = np.iscomplexobj(x)
    l = np.zeros_like(x)
    err = np.zeros(x.shape[:-2] + (1, 1), bool)
    for i in range(k):
        # column i of x - L·Lᴴ (columns >= i of L are still zero)
        col = x[..., :, i:i + 1] - np.matmul(l[..., :, :i], np.conj(l[..., i:i + 1, :i]).swapaxes(-1, -2)) \
            if i else x[..., :, i:i + 1].copy()
        d = col[..., i:i + 1, :]
        if cplx:
            s = np.sqrt(d.real)
            err |= np.isnan(s)
            d = s.astype(x.dtype)
        else:
            d = np.sqrt(d)
            err |= np.isnan(d)
        l[..., i:, i:i + 1] = col[..., i:, :] / d
    return l, err


def cholesky_lower(a: np.ndarray, block: int = BLOCK) -> np.ndarray:
    """XLA's blocked left-looking Cholesky of the lower triangle of a [..., n, n]."""
    l, err = _cholesky_factor(a, block)
    return np.where(err, np.array(np.nan, a.dtype), l)


def _cholesky_factor(a: np.ndarray, block: int = BLOCK) -> tuple[np.ndarray, np.ndarray]:
    """(L before the NaN fill, per-matrix error flag [..., 1, 1])."""
    n = a.shape[-1]
    l = np.zeros_like(a)
    err = np.zeros(a.shape[:-2] + (1, 1), bool)
    for i in range(0, n, block):
        k = min(block, n - i)
        panel = a[..., i:n, i:i + k]
        if i > 0:
            lhs = l[..., i:n, 0:i]
            rhs = l[..., i:i + k, 0:i]
            panel = panel - _bdot(lhs, False, np.conj(rhs) if np.iscomplexobj(rhs) else rhs, True)
        x = panel[..., 0:k, 0:k]
        if k == 1:
            if np.iscomplexobj(x):
                s = np.sqrt(x.real)
                fact, ferr = s.astype(x.dtype), np.isnan(s)
            else:
                fact = np.sqrt(x)
                ferr = np.isnan(fact)
        else:
            fact, ferr = _cholesky_unblocked(x)
        err |= ferr
        l[..., i:i + k, i:i + k] = fact
        if i + k < n:
            upd = triangular_solve(fact, panel[..., k:n - i, 0:k], left_side=False, lower=True,
                                   unit_diagonal=False, transpose_a="ADJOINT", block=block)
            l[..., i + k:n, i:i + k] = upd
    return l, err


def cholesky(a: np.ndarray, lower: bool = True) -> np.ndarray:
    """XLA's Cholesky (see the module docstring)."""
    if a.size == 0:
        return a.copy()
    with np.errstate(all="ignore"):  # sqrt of a negative pivot, 0/0: NaN as in XLA, no warning
        if lower:
            return cholesky_lower(a)
        return np.swapaxes(cholesky_lower(np.swapaxes(a, -1, -2)), -1, -2)


def potrf(a: np.ndarray, lower: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """LAPACK ?potrf semantics (for the lapack_?potrf custom-call targets JAX emits on CPU), on a
    batch [..., n, n]: (factor, info).  The selected triangle holds the Cholesky factor, the other
    triangle keeps the input's values (LAPACK does not touch it); info (int32, per matrix) is 0, or
    the 1-based order of the first leading minor that is not positive definite (the factor's values
    are then not meaningful: JAX replaces them with NaN)."""
    n = a.shape[-1]
    batch = a.shape[:-2]
    if a.size == 0:
        return a.copy(), np.zeros(batch, np.int32)
    with np.errstate(all="ignore"):
        x = a if lower else np.conj(np.swapaxes(a, -1, -2))
        l, _ = _cholesky_factor(x)
        diag = np.diagonal(l, axis1=-2, axis2=-1).real
        bad = ~(diag > 0)
        info = np.where(bad.any(axis=-1), np.argmax(bad, axis=-1) + 1, 0).astype(np.int32)
        f = l if lower else np.conj(np.swapaxes(l, -1, -2))
    keep = np.tri(n, n, 0, dtype=bool) if lower else ~np.tri(n, n, -1, dtype=bool)
    return np.where(keep, f, a), info


def _dtype_of(ins, shape):
    name = shape.element_type.name
    if name not in _COMPUTE:
        raise unsupported(ins, f"element type {name} (f16, bf16, f32, f64, c64, c128 only)")
    return np.dtype(_COMPUTE[name]), shape.element_type.dtype


@kernel("triangular-solve")
def _k_triangular_solve(ins, ctx):
    at = ins.attrs
    left = bool(at.get("left_side", False))
    lower = bool(at.get("lower", False))
    unit = bool(at.get("unit_diagonal", False))
    trans = at.get("transpose_a", "NO_TRANSPOSE") or "NO_TRANSPOSE"
    if trans not in ("NO_TRANSPOSE", "TRANSPOSE", "ADJOINT"):
        raise unsupported(ins, f"transpose_a={trans}")
    sa, sb = ctx.operand_shapes(ins)
    if sa.is_tuple or sb.is_tuple:
        raise error_at(ins, "triangular-solve: operands must be arrays")
    da, db = tuple(sa.dims), tuple(sb.dims)
    if len(da) < 2 or len(da) != len(db) or da[-1] != da[-2] or da[:-2] != db[:-2] or \
            (db[-2] if left else db[-1]) != da[-1]:
        raise error_at(ins, f"triangular-solve: incompatible shapes a{list(da)} and b{list(db)} "
                            f"(left_side={'true' if left else 'false'})")
    if sa.element_type != sb.element_type:
        raise error_at(ins, "triangular-solve: a and b must have the same element type")
    cd, out = _dtype_of(ins, sa)

    def run(a, b):
        with np.errstate(all="ignore"):
            r = triangular_solve(a.astype(cd, copy=False), b.astype(cd, copy=False), left_side=left,
                                 lower=lower, unit_diagonal=unit, transpose_a=trans)
            return np.asarray(r).astype(out, copy=False)
    return run


@kernel("cholesky")
def _k_cholesky(ins, ctx):
    lower = bool(ins.attrs.get("lower", False))
    (sa,) = ctx.operand_shapes(ins)
    if sa.is_tuple or len(sa.dims) < 2 or sa.dims[-1] != sa.dims[-2]:
        raise error_at(ins, "cholesky: the operand must be a (batch of) square matrices")
    cd, out = _dtype_of(ins, sa)

    def run(a):
        with np.errstate(all="ignore"):
            return np.asarray(cholesky(a.astype(cd, copy=False), lower)).astype(out, copy=False)
    return run
