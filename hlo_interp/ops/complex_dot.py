"""Complex (c64/c128) dots in XLA:CPU's order, bit for bit.

XLA:CPU gives every complex dot whose canonical form has rank-2 operands (after DotDecomposer: [batch,] M x K
times K x N) to its DotThunk, which runs Eigen's tensor contraction per batch matrix on its intra-op thread
pool (complex types are left out of XLA's LLVM IR dot emitters).  With the row-major result XLA's layout
assignment gives it, the thunk computes C^T = B^T A^T: Eigen's rows are our result columns (j < N) and
Eigen's columns our result rows (i < M).  Facts used here, from Eigen's sources at the commit XLA pins
(GeneralBlockPanelKernel.h, GeneralMatrixVector.h, TensorContraction*.h) as compiled into jaxlib (AVX,
no FMA: 4 c64 or 2 c128 values per packet, P below), and measured against XLA:CPU (tests/golden/complex_dot):

* Every path keeps the four real sums  Σ ar·br, Σ ai·bi, Σ ar·bi, Σ ai·br  with rounded products, except the
  scalar paths, which add rounded complex products (ar·br − ai·bi, ar·bi + ai·br).
* gemm (M > 1; the gebp kernel), by result position:
    - columns j < 2P·floor(N/2P) (the 2-packet panels): one accumulator per sum, k in order;
    - the next P columns (when P are left) and, for c64, the next 2 (when 2 are left), rows in full panels of
      4 (i < 4·floor(M/4)): two accumulators, even and odd k, over the first 8·floor(K/8) k, added, then the
      remaining k into the sum; the other rows: one accumulator;
    - the last column when one is left (c64 only), rows in full panels of 4: four accumulators (k mod 4)
      over the first 4·floor(K/4) k, combined (s0 + s1) + (s2 + s3), then the remaining k; the other rows:
      the scalar path;
    - the sums are assembled as re = Σar·br + (−Σai·bi), im = Σai·br + Σar·bi, multiplied by alpha = 1 + 0i
      as a complex product (so an infinite component makes the other NaN), and added to the result, which
      starts at +0;
    - K longer than Eigen's kc is cut into panels [0, kc), [kc, 2kc), ..., each computed as above (with its
      own 8·floor(len/8)) and added to the result in order.  kc comes from Eigen's blocking heuristics:
      sequentially (one thread) from the L1 cache size (balanced panels of at most 504 for c64, 376 for
      c128 with a 48 KiB L1); when Eigen's cost model runs the contraction on 2 threads, 320.
    - on 2 threads the kernel runs on blocks of bm result columns, and the positions above count from each
      block's start: sharding by row, bm is a multiple of 4 (c64: a block may end in a 1-packet panel);
      when the cost model shards the contraction over k instead, each part of K (ceil(K/2) rounded up to
      8) is summed into its own buffer as above and the buffers are added at the end (k_plan).
* gemv (M == 1, Eigen's matrix x vector): each column is a scalar-path sum over k in blocks (all K when
  K < 128, else 16 k per block when N·itemsize < 32000, else 4), each block's sum times alpha added to the
  result in order.
* a 1 x 1 result (vector . vector, also per batch): XLA rewrites the dot into reduce(multiply(a, b)).  Up to 32
  products the reduce loop is fused with the multiply and LLVM contracts both into the sum:
  re += fma(ar, br, −ai·bi), im = fma(ai, br, fma(ar, bi, im)).  Longer, the products are XLA's complex
  multiply (re = fma(ar, br, −ai·bi), im = fma(ai, br, ar·bi)), which XLA's tree reduction rewriter sums in
  windows of 32 (zero padding split evenly, the extra one after), again while more than 32 partial sums
  are left, then one sequential sum; every sum starts at +0 and adds in order.
The thread count and the cache sizes are the measuring machine's (2 threads, L1 48 KiB, L2 2 MiB, L3 large):
XLA:CPU on other machines may cut K elsewhere for large dots (THREADS, L1_BYTES ... below).
"""
from __future__ import annotations

import numpy as np

from .numerics import complex_multiply, fma

# The measuring machine: XLA's intra-op pool size and the cache sizes Eigen reads (cpuid)
THREADS = 2
L1_BYTES = 48 * 1024
L3_BYTES = 480 * 1024 * 1024
NR = 4  # Eigen's gebp register block: 4 columns (our rows)
_LOAD = _STORE = 11.0 / 64  # TensorCostModel's cycles per byte


def _packet(dtype) -> int:
    """complex values per AVX packet"""
    return 4 if np.dtype(dtype) == np.complex64 else 2


# --------------------------------------------------------------------------------------------------
# Eigen's choice of the contraction panel length kc

def _sequential_kc(k: int, m: int, n: int, P: int, esize: int) -> int:
    """evaluateProductBlockingSizesHeuristic, one thread (k only)."""
    if max(k, m, n) < 48:
        return k
    mr = 2 * P
    k_div = mr * esize + NR * esize
    k_sub = mr * NR * esize
    max_kc = max(((L1_BYTES - k_sub) // k_div) & ~7, 1)
    if k > max_kc:
        if k % max_kc == 0:
            return max_kc
        return max_kc - 8 * ((max_kc - 1 - (k % max_kc)) // (8 * (k // max_kc + 1)))
    return k


def _threaded_kc(k: int, P: int, esize: int) -> int:
    mr = 2 * P
    k_div = mr * esize + NR * esize
    k_sub = mr * NR * esize
    k_cache = max(8, min((L1_BYTES - k_sub) // k_div, 320))
    return k_cache - k_cache % 8 if k_cache < k else k


def _shard_by_col(m: int, n: int, t: int) -> bool:
    if m // t >= NR and (n // t < NR or (n // t < 4 * NR and n % (t * NR) != 0
                                          and (m % (t * NR) == 0 or m // n >= 6))):
        return False
    if n // t < 16 * NR and m > n * 32:
        return False
    return True


def _blocking_mn(k: int, m: int, n: int, t: int, P: int, esize: int, by_col: bool):
    """(bm, bn, bk) of TensorContractionBlocking with t > 1 threads."""
    l2 = 2 * 1024 * 1024
    mr = 2 * P
    bk = _threaded_kc(k, P, esize)
    # computeProductBlockingSizes(k, m, n) for ShardByCol, (k, n, m) for ShardByRow: rows are 'm' there
    rows, cols = (m, n) if by_col else (n, m)
    n_cache = (l2 - L1_BYTES) // (NR * esize * bk)
    n_per = -(-cols // t)
    if n_cache <= n_per:
        cols = n_cache - n_cache % NR
    else:
        cols = min(cols, (n_per + NR - 1) - ((n_per + NR - 1) % NR))
    if L3_BYTES > l2:
        m_cache = (L3_BYTES - l2) // (esize * bk * t)
        m_per = -(-rows // t)
        if mr <= m_cache < m_per:
            rows = m_cache - m_cache % mr
        else:
            rows = min(rows, (m_per + mr - 1) - ((m_per + mr - 1) % mr))
    return (rows, cols, bk) if by_col else (cols, rows, bk)


def _bandwidth(shard_by_col: bool, bm: int, bn: int, bk: int, P: int) -> float:
    if bk == 1:
        return 4.0
    if (bn if shard_by_col else bm) < NR or (bm if shard_by_col else bn) < 2 * P:
        return 2.0
    return 1.0  # 0.5 with FMA; jaxlib's Eigen has none


def _threads(m: int, n: int, k: int, P: int, esize: int) -> int:
    """1 or THREADS, as TensorContractionThreadPool's evalProductImpl decides (Eigen m, n, k); 0 for the
    contraction sharded over k (not modelled)."""
    by_col = _shard_by_col(m, n, 2)
    bm, bn, bk = _blocking_mn(k, m, n, 2, P, esize, by_col)
    per = bk * _bandwidth(False, bm, bn, bk, P) / P + _STORE * esize
    per += _LOAD * esize * bk / (m if by_col else n)  # rhs loads (lhs dropped) or lhs loads
    total = m * n * per
    t = min(THREADS, max(1, int((total - 100000) / 100000 + 0.9)))
    # threads by k
    inner = (_bandwidth(True, m, n, k, P) * m * n) / P + _STORE * esize + _LOAD * esize * n
    parallel = k * inner
    reduction = m * n * (_LOAD * 2 + _STORE * 1 + 1.0 / P)
    tk = 1
    best = parallel
    for nt in range(2, THREADS + 1, 2):
        cost = parallel / nt + 100000 + nt * (reduction + 3000)
        if cost < best:
            tk, best = nt, cost
    if not (n == 1 or tk < 2 or tk < t or m * n * esize > L3_BYTES // tk or k // tk < 2 * NR):
        if max(m, n) // t < NR or (k // tk > 8 * NR and (min(m, n) < 2 * NR or tk > t)):
            return 0
    if n == 1:
        t = 1
    return t


def _panels(k0: int, k1: int, kc: int) -> list[range]:
    return [range(k, min(k1, k + kc)) for k in range(k0, k1, kc)]


def _ceil(x: int, y: int) -> int:
    return -(-x // y)


def k_plan(M: int, K: int, N: int, dtype) -> tuple[list[list[range]], int]:
    """How Eigen cuts our M x K x N dot (Eigen m = N, n = M): (k blocks, column block).  The k blocks: one,
    but when the contraction is sharded over k (then each block is computed into its own buffer and the
    buffers are added in order), each a list of panels of kc.  The column block: Eigen's bm, the width of
    the result column blocks the kernel runs on one by one (N when not cut)."""
    P = _packet(dtype)
    esize = np.dtype(dtype).itemsize
    t = _threads(N, M, K, P, esize)
    if t == 0:  # EvalShardedByInnerDimContext: blocks of ceil(K / THREADS) rounded up to 8, at least 12 P
        bs = min(K, max(12 * P, _ceil(_ceil(K, THREADS), 8) * 8))
        starts = range(0, K, bs)
        out = []
        for k0 in starts:
            k1 = min(K, k0 + bs)
            kc = _threaded_kc(k1 - k0, P, esize) if len(starts) > 1 else _sequential_kc(k1 - k0, N, M, P, esize)
            out.append(_panels(k0, k1, kc))
        return out, N  # the column blocks of each buffer's evaluation are multiples of 2P: no effect
    if t > 1:  # EvalParallelContext: blocks bm x bn x bk
        bm, _, bk = _blocking_mn(K, N, M, t, P, esize, _shard_by_col(N, M, t))
        return [_panels(0, K, bk)], bm
    return [_panels(0, K, _sequential_kc(K, N, M, P, esize))], N  # mc: a multiple of 2P


# --------------------------------------------------------------------------------------------------
# the sums

def _sums(ar, ai, br, bi, ks, init=None):
    """Σ ar·br, Σ ai·bi, Σ ar·bi, Σ ai·br over k in ks, in that order, from `init` (or +0)."""
    if init is None:
        shape = np.broadcast_shapes(ar.shape[:-1], br.shape[:-2] + (1,))[:-1] + (ar.shape[-2], br.shape[-1])
        init = [np.zeros(shape, ar.dtype) for _ in range(4)]
    rr, ii, ri, ir = init
    for k in ks:
        xr, xi = ar[..., :, k:k + 1], ai[..., :, k:k + 1]
        yr, yi = br[..., k:k + 1, :], bi[..., k:k + 1, :]
        rr = rr + xr * yr
        ii = ii + xi * yi
        ri = ri + xr * yi
        ir = ir + xi * yr
    return [rr, ii, ri, ir]


def _interleaved(ar, ai, br, bi, ks, n):
    """n accumulators taking k in turn over the first n·floor(len/n) ks; combined (n == 2: s0 + s1; n == 4:
    (s0 + s1) + (s2 + s3)); then the remaining ks."""
    full = (len(ks) // n) * n
    parts = [_sums(ar, ai, br, bi, ks[j:full:n]) for j in range(n)]
    if n == 2:
        acc = [parts[0][q] + parts[1][q] for q in range(4)]
    else:
        acc = [(parts[0][q] + parts[1][q]) + (parts[2][q] + parts[3][q]) for q in range(4)]
    return _sums(ar, ai, br, bi, ks[full:], acc)


def _assemble(s):
    rr, ii, ri, ir = s
    return rr + (-ii), ir + ri


def _scalar(ar, ai, br, bi, ks):
    """Σ of rounded complex products (the scalar paths)."""
    shape = np.broadcast_shapes(ar.shape[:-1], br.shape[:-2] + (1,))[:-1] + (ar.shape[-2], br.shape[-1])
    re = np.zeros(shape, ar.dtype)
    im = np.zeros(shape, ar.dtype)
    for k in ks:
        xr, xi = ar[..., :, k:k + 1], ai[..., :, k:k + 1]
        yr, yi = br[..., k:k + 1, :], bi[..., k:k + 1, :]
        re = re + (yr * xr - yi * xi)
        im = im + (yr * xi + yi * xr)
    return re, im


def _add_alpha(re, im, t_re, t_im):
    """result += (t · (1 + 0i)), the complex product as Eigen's packet multiply computes it"""
    one = np.ones((), re.dtype)
    zero = np.zeros((), re.dtype)
    return re + (t_re * one - t_im * zero), im + (t_re * zero + t_im * one)


def gemm(a: np.ndarray, b: np.ndarray, plan: tuple[list[list[range]], int]) -> np.ndarray:
    """(..., M, K) x (..., K, N) complex, M > 1: Eigen's gebp order (module docstring); plan from k_plan."""
    blocks, col_block = plan
    M = a.shape[-2]
    N = b.shape[-1]
    P = _packet(a.dtype)
    ar, ai, br, bi = a.real, a.imag, b.real, b.imag
    shape = np.broadcast_shapes(a.shape[:-2], b.shape[:-2]) + (M, N)
    m4 = 4 * (M // 4)
    regions = []  # rows, columns, how
    for j0 in range(0, N, col_block):
        n = min(N, j0 + col_block) - j0
        c2 = 2 * P * (n // (2 * P))  # 2-packet panels
        c1 = c2 + P * ((n - c2) // P)  # one packet
        ch = c1 + (P // 2) * ((n - c1) // (P // 2)) if P > 2 else n  # half packet (c64: 2; c128: 1)
        c2, c1, ch, n = j0 + c2, j0 + c1, j0 + ch, j0 + n
        regions += [
            (slice(0, M), slice(j0, c2), "one"),
            (slice(0, m4), slice(c2, ch), "two"),
            (slice(m4, M), slice(c2, ch), "one"),
            (slice(0, m4), slice(ch, n), "four"),
            (slice(m4, M), slice(ch, n), "scalar"),
        ]
    total = None
    for panels in blocks:
        re, im = _block(ar, ai, br, bi, shape, regions, panels)
        total = (re, im) if total is None else (total[0] + re, total[1] + im)
    out = np.empty(shape, a.dtype)
    out.real, out.imag = total
    return out


def _block(ar, ai, br, bi, shape, regions, panels):
    """one buffer: +0, then each panel's sums times alpha added in order"""
    ft = ar.dtype
    re = np.zeros(shape, ft)
    im = np.zeros(shape, ft)
    for ks in panels:
        t_re = np.empty(shape, ft)
        t_im = np.empty(shape, ft)
        for rows, cols, how in regions:
            if rows.start >= rows.stop or cols.start >= cols.stop:
                continue
            x = (ar[..., rows, :], ai[..., rows, :], br[..., :, cols], bi[..., :, cols])
            if how == "one":
                r = _assemble(_sums(*x, ks))
            elif how == "two":  # even/odd k over the first 8·floor(len/8), then the rest into the sum
                pk = len(ks) & ~7
                r = _assemble(_sums(*x, ks[pk:], _interleaved(*x, ks[:pk], 2)))
            elif how == "four":
                r = _assemble(_interleaved(*x, ks, 4))
            elif how == "scalar":
                r = _scalar(*x, ks)
            t_re[..., rows, cols], t_im[..., rows, cols] = r
        re, im = _add_alpha(re, im, t_re, t_im)
    return re, im


def gemv(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """(..., 1, K) x (..., K, N) complex: Eigen's column-major matrix x vector (module docstring)."""
    K = a.shape[-1]
    N = b.shape[-1]
    ar, ai, br, bi = a.real, a.imag, b.real, b.imag
    shape = np.broadcast_shapes(a.shape[:-2], b.shape[:-2]) + (1, N)
    block = K if K < 128 else (16 if N * a.itemsize < 32000 else 4)
    re = np.zeros(shape, ar.dtype)
    im = np.zeros(shape, ar.dtype)
    for k0 in range(0, K, block):
        re, im = _add_alpha(re, im, *_scalar(ar, ai, br, bi, range(k0, min(K, k0 + block))))
    out = np.empty(shape, a.dtype)
    out.real = re
    out.imag = im
    return out


def vdot(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """(..., 1, K) x (..., K, 1) complex: XLA's reduce of products (module docstring)."""
    K = a.shape[-1]
    x = a[..., 0, :]
    y = b[..., :, 0]
    x, y = np.broadcast_arrays(x, y)
    ft = x.real.dtype
    if K <= 32:
        ar, ai, br, bi = x.real, x.imag, y.real, y.imag
        re = np.zeros(x.shape[:-1], ft)
        im = np.zeros(x.shape[:-1], ft)
        for k in range(K):
            re = re + fma(ar[..., k], br[..., k], -(ai[..., k] * bi[..., k]))
            im = fma(ai[..., k], br[..., k], fma(ar[..., k], bi[..., k], im))
        parts = (re, im)
    else:
        p = complex_multiply(x, y)
        re, im = p.real, p.imag
        while re.shape[-1] > 32:
            n = re.shape[-1]
            w = -(-n // 32)
            lo = (32 * w - n) // 2
            pad = [(0, 0)] * (re.ndim - 1) + [(lo, 32 * w - n - lo)]
            re = _window_sums(np.pad(re, pad).reshape(re.shape[:-1] + (w, 32)))
            im = _window_sums(np.pad(im, pad).reshape(im.shape[:-1] + (w, 32)))
        parts = (_window_sums(re), _window_sums(im))
    out = np.empty(x.shape[:-1] + (1, 1), a.dtype)
    out.real = parts[0][..., None, None]
    out.imag = parts[1][..., None, None]
    return out


def _window_sums(v: np.ndarray) -> np.ndarray:
    """sequential sums over the last axis, from +0"""
    s = np.zeros(v.shape[:-1], v.dtype)
    for k in range(v.shape[-1]):
        s = s + v[..., k]
    return s
