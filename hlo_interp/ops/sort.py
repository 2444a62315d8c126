"""sort (multi-operand, any dimension, stable or not, any comparator) and topk.

The comparator is first *recognized*: its root is `compare(f(p[2k]), f(p[2k+1]))` with direction LT
or GT (either operand order), where f is any elementwise expression of one parameter and the same
expression of its partner, or a lexicographic chain of such keys, `or(lt(k0), and(eq(k0), <rest>))`
(JAX's sort with num_keys > 1, lexsort).  That covers the plain `compare(p0, p1), direction=LT`, JAX's
float form (NaN and -0 canonicalized, then `type=TOTALORDER`) and XLA:CPU's post-optimization rewrite
of it into integer compares of `s32[] bitcast(f32[])` values (also the sub-byte `s4[] bitcast(f4e2m1fn[])`
form).  Each key f(operand k) is then computed once on the whole operand (the expression's kernels run
on arrays) and the sort is one stable `np.argsort` (`np.lexsort` for several keys) of an integer image
of the key that preserves the compare's order:
  * integers and pred: themselves (SIGNED/UNSIGNED as the type says);
  * floats with type=TOTALORDER: XLA's total order -NaN < -inf < ... < -0 < +0 < ... < inf < NaN;
  * floats with the default FLOAT comparison: -0 and +0 are equal (stable sorts keep their order);
    NaN compares false with everything, so no order is defined; NaNs are put where the total order
    puts them (+NaN last, -NaN first).
GT sorts descending, equal keys in their original order.

Anything else (LE/GE, selects, keys mixing operands, ...) goes through the general path, where the
comparator is evaluated on whole arrays (all rows at once).  First a few guessed orders are tried
(candidate_order: each operand read, ascending or descending, in JAX's canonical float order or XLA's
total order, lexicographically in parameter order or the first two swapped; a NumPy argsort each),
every guess checked by two comparator evaluations on neighbours, which decide for a strict weak order
(XLA's sort requires one; only irreflexive comparators are tried).  A guess that passes IS the stable
sort.  Otherwise a bottom-up merge sort where each merge pass places every element by a binary search
in its partner run: about log2(n)^2 / 2 comparator evaluations (bench/sort_comparator.py, f32[64,8732]
with an s32 iota: 0.07 s CPU when a guess passes, 0.6 s merged).  It is stable: the result equals a stable sort by the comparator (XLA:CPU's with is_stable=true).  With
is_stable=false XLA leaves the order of equal elements unspecified (XLA:CPU's differs from the stable
one); we return the stable order.  Comparators run on arrays also through `call`s of scalar
computations (vectorized in turn), tuples, get-tuple-element and scalar reshape/broadcast/bitcast/bitcast-convert.
Only a comparator whose instructions cannot run on arrays at all (a while loop, a non-elementwise
opcode on non-scalars) is called once per comparison (functools.cmp_to_key, row by row).

topk(x), k, largest (default true): the k largest (smallest) along the last dimension in XLA's total
order for floats (+NaN largest, -NaN smallest, -0 < +0), the lower index first among equal values.
topk(x), k, to_apply=comparator: the comparator alone orders (comp(a, b) true: a before b): a stable
sort by it, the first k, so elements it does not order keep the lower index first (XLA's TopK
decomposition; the custom-call TopK of non-f32 types shares the code).  largest=false together with a
comparator is refused (which of the two decides is not pinned down).
"""
from __future__ import annotations

import functools
from collections.abc import Callable, Sequence

import numpy as np

from .. import ir
from ..types import dtype_kind
from .reducers import ELEMENTWISE_SAFE_OPS
from .registry import KERNELS, error_at, kernel, unsupported


class ComparatorError(ValueError):
    """A comparator this module cannot evaluate on whole arrays (callers fall back or report it)."""


# --------------------------------------------------------------------------------------------------
# Order-preserving integer images


def total_order_key(x: np.ndarray) -> np.ndarray:
    """An int64 image of floats in XLA's total order (-NaN < -inf < ... < -0 < +0 < ... < inf < NaN)."""
    x = np.asarray(x)
    if x.dtype.itemsize <= 4 and x.dtype != np.float32:
        with np.errstate(all="ignore"):
            x = x.astype(np.float32)  # exact for every narrower float, NaN signs kept
        # XLA:CPU compares these after converting to f32 with denormals flushed: a bf16 subnormal ties
        # with a zero of its sign (measured on the sweep's sort_bf16_totalorder)
        tiny = np.abs(x) < np.float32(2.0 ** -126)
        if tiny.any():
            x = np.where(tiny, np.copysign(np.float32(0), x), x)
    if x.dtype == np.float32:
        s = np.ascontiguousarray(x).view(np.int32).astype(np.int64)
        return np.where(s < 0, s ^ 0x7FFFFFFF, s)
    s = np.ascontiguousarray(x.astype(np.float64, copy=False)).view(np.int64)
    return np.where(s < 0, s ^ np.int64(0x7FFFFFFFFFFFFFFF), s)


def order_key(x: np.ndarray, cmp_type: str | None) -> np.ndarray:
    """An integer image of x (int64 or uint64) whose natural order is the compare's order."""
    x = np.asarray(x)
    kind = dtype_kind(x.dtype)
    if kind == "pred":
        if cmp_type not in (None, "UNSIGNED", "SIGNED"):
            raise ComparatorError("pred compare type")
        return x.astype(np.int64)
    if kind in ("sint", "uint"):
        want = "SIGNED" if kind == "sint" else "UNSIGNED"
        if cmp_type not in (None, want):
            raise ComparatorError(f"{cmp_type} compare of {kind} values")
        return x.astype(np.uint64 if x.dtype == np.uint64 else np.int64)
    if kind == "float":
        if cmp_type == "TOTALORDER":
            return total_order_key(x)
        if cmp_type not in (None, "FLOAT"):
            raise ComparatorError(f"{cmp_type} compare of floats")
        with np.errstate(all="ignore"):
            x = np.where(x == 0, np.zeros((), x.dtype), x)  # -0 == +0
        return total_order_key(x)
    raise ComparatorError(f"no order for {x.dtype}")


def stable_order(key: np.ndarray, descending: bool) -> np.ndarray:
    """Stable argsort along the last axis; descending keeps equal keys in their original order."""
    if descending:
        key = ~key  # order-reversing on int64 and uint64
    return np.argsort(key, axis=-1, kind="stable")


# --------------------------------------------------------------------------------------------------
# Evaluating a scalar computation on arrays


_IGNORED_ATTRS = {"metadata", "frontend_attributes", "sharding", "statistics_viz", "backend_config",
                  "origin", "result_accuracy"}


# scalar elementwise opcodes whose kernels give the elementwise result on arrays
_VECTOR_SAFE = ELEMENTWISE_SAFE_OPS - {"tuple", "get-tuple-element", "opt-barrier"}


class VectorComputation:
    """The instructions of a scalar (elementwise) computation run with their kernels on arrays."""

    def __init__(self, comp: ir.Computation, ctx):
        self.comp = comp
        self.by = {i.name: i for i in comp.instructions}
        self.ctx = ctx
        self.fns: dict[str, Callable] = {}
        scopes = getattr(ctx, "_scopes", None)
        if scopes is not None:
            scopes.append(dict(self.by))
        try:
            for ins in comp.instructions:
                if ins.opcode == "parameter":
                    continue
                if ins.opcode in ("bitcast", "bitcast-convert"):  # (its kernel reshapes to the scalar shape)
                    self.fns[ins.name] = self._bitcast(ins)
                    continue
                if ins.opcode == "tuple":
                    self.fns[ins.name] = lambda *xs: tuple(xs)
                    continue
                if ins.opcode == "get-tuple-element":
                    k = int(ins.attrs.get("index", 0))
                    self.fns[ins.name] = lambda t, k=k: t[k]
                    continue
                if ins.opcode == "call":
                    # a called scalar computation runs on the same arrays (vectorized in turn)
                    sub = VectorComputation(ctx.computation(ins.attrs["to_apply"], ins), ctx)
                    self.fns[ins.name] = sub
                    continue
                if ins.opcode in ("reshape", "broadcast", "bitcast") and ins.shape is not None \
                        and not ins.shape.is_tuple and ins.shape.dims == () and \
                        self._scalar_operand(ins):
                    self.fns[ins.name] = lambda x: x  # scalar to scalar: the value itself
                    continue
                if ins.shape is None or ins.shape.is_tuple:
                    raise ComparatorError(f"{ins.opcode} has a tuple shape")
                if ins.opcode not in _VECTOR_SAFE or ins.shape.dims != ():
                    raise ComparatorError(f"{ins.opcode} cannot run on arrays here")
                builder = KERNELS.get(ins.opcode)
                if builder is None:
                    raise ComparatorError(f"no kernel for {ins.opcode}")
                self.fns[ins.name] = builder(ins, ctx)
        finally:
            if scopes is not None:
                scopes.pop()

    def _scalar_operand(self, ins) -> bool:
        src = self.by.get(ins.operands[0]) if ins.operands else None
        return (src is not None and src.shape is not None and not src.shape.is_tuple and src.shape.dims == ()
                and src.shape.element_type == ins.shape.element_type)

    def _bitcast(self, ins):
        """Scalar same-width bitcast on arrays (incl. sub-byte types, one element per byte)."""
        src = self.by.get(ins.operands[0])
        if src is None or src.shape is None or src.shape.is_tuple or ins.shape.is_tuple or \
                src.shape.dims != () or ins.shape.dims != () or \
                src.shape.element_type.bits != ins.shape.element_type.bits or \
                ins.shape.element_type.dtype is None or src.shape.element_type.dtype is None or \
                "pred" in (src.shape.element_type.kind, ins.shape.element_type.kind):
            raise ComparatorError("bitcast that is not scalar same-width")
        from .numerics import same_width_bitcast
        et = ins.shape.element_type
        return same_width_bitcast(et.dtype, et.bits, dtype_kind(et.dtype))

    def params_of(self, name: str, _memo=None) -> frozenset:
        memo = _memo if _memo is not None else {}
        if name in memo:
            return memo[name]
        ins = self.by[name]
        if ins.opcode == "parameter":
            r = frozenset([ins.parameter_number])
        else:
            r = frozenset()
            for o in ins.operands:
                r |= self.params_of(o, memo)
        memo[name] = r
        return r

    def evaluate(self, root: str, params: dict, shape) -> np.ndarray:
        vals: dict[str, object] = {}
        stack = [(root, False)]
        while stack:
            name, ready = stack.pop()
            if name in vals:
                continue
            ins = self.by[name]
            if ins.opcode == "parameter":
                if ins.parameter_number not in params:
                    raise ComparatorError("parameter not bound")
                vals[name] = params[ins.parameter_number]
                continue
            if not ready:
                stack.append((name, True))
                stack.extend((o, False) for o in ins.operands if o not in vals)
                continue
            vals[name] = self.fns[name](*[vals[o] for o in ins.operands])
        out = vals[root]
        if isinstance(out, tuple):
            return out
        out = np.asarray(out)
        if out.shape != shape:
            out = np.broadcast_to(out, shape)
        return out

    def __call__(self, *args):
        """The computation on arrays: its root's value (a tuple for a tuple root)."""
        params = dict(enumerate(args))
        shape = np.broadcast_shapes(*[np.shape(a) for a in args]) if args else ()
        root = self.comp.root
        if root.opcode == "tuple":
            return tuple(self.evaluate(o, params, shape) for o in root.operands)
        return self.evaluate(root.name, params, shape)

    def same_expr(self, a: str, b: str, swap: dict) -> bool:
        """b is a's expression with parameters renamed by `swap`."""
        if a == b:
            return not (self.params_of(a) & set(swap))
        x, y = self.by[a], self.by[b]
        if x.opcode != y.opcode:
            return False
        if x.opcode == "parameter":
            return swap.get(x.parameter_number, x.parameter_number) == y.parameter_number
        if x.opcode == "constant":
            return x.literal == y.literal and x.shape == y.shape
        if len(x.operands) != len(y.operands):
            return False
        if x.shape is None or y.shape is None or x.shape != y.shape:
            return False
        xa = {k: v for k, v in x.attrs.items() if k not in _IGNORED_ATTRS}
        ya = {k: v for k, v in y.attrs.items() if k not in _IGNORED_ATTRS}
        if xa != ya:
            return False
        return all(self.same_expr(p, q, swap) for p, q in zip(x.operands, y.operands))


def _attr_name(v):
    return getattr(v, "name", v)


def _key_compare(vc: VectorComputation, name: str, n: int, directions):
    """(k, key expression, swapped, direction, compare type) when `name` is compare(f(p[2k]), f(p[2k+1]))
    (either order) with a direction in `directions`, else None."""
    ins = vc.by.get(name)
    if ins is None or ins.opcode != "compare" or len(ins.operands) != 2:
        return None
    direction = _attr_name(ins.attrs.get("direction"))
    if direction not in directions:
        return None
    a, b = ins.operands
    pa, pb = vc.params_of(a), vc.params_of(b)
    if len(pa) != 1 or len(pb) != 1:
        return None
    (i,), (j,) = tuple(pa), tuple(pb)
    if i // 2 != j // 2 or i == j or i // 2 >= n:
        return None
    if not vc.same_expr(a, b, {i: j, j: i}):
        return None
    swapped = i % 2 == 1
    return i // 2, (b if swapped else a), swapped, direction, _attr_name(ins.attrs.get("type"))


def recognize_comparator(vc: VectorComputation, n: int, root: str | None = None):
    """[(k, key expression name, descending, compare type)], primary key first, for a comparator that
    is a one-key LT/GT compare or a lexicographic chain `or(lt(k0), and(eq(k0), <rest>))`; else None."""
    root = vc.comp.root.name if root is None else root
    one = _key_compare(vc, root, n, ("LT", "GT"))
    if one is not None:
        k, expr, swapped, direction, ctype = one
        return [(k, expr, (direction == "GT") != swapped, ctype)]
    ins = vc.by.get(root)
    if ins is None or ins.opcode != "or" or len(ins.operands) != 2:
        return None
    for first, other in (ins.operands, ins.operands[::-1]):
        lt = _key_compare(vc, first, n, ("LT", "GT"))
        conj = vc.by.get(other)
        if lt is None or conj is None or conj.opcode != "and" or len(conj.operands) != 2:
            continue
        for eqn, restn in (conj.operands, conj.operands[::-1]):
            eq = _key_compare(vc, eqn, n, ("EQ",))
            if eq is None or eq[0] != lt[0] or eq[4] != lt[4]:
                continue
            if not vc.same_expr(eq[1], lt[1], {}):
                continue
            rest = recognize_comparator(vc, n, restn)
            if rest is None:
                continue
            k, expr, swapped, direction, ctype = lt
            return [(k, expr, (direction == "GT") != swapped, ctype)] + rest
    return None


# --------------------------------------------------------------------------------------------------
# Sorting


def merge_sort_order(cols: Sequence[np.ndarray], less: Callable) -> np.ndarray:
    """Stable sort permutation along the last axis of rows [R, m] by `less(lhs_cols, rhs_cols) -> bool
    array`, evaluated on whole arrays: bottom-up merge sort, each element placed by a binary search
    in its partner run, all elements of all rows searched at once (per search step one `less` call for
    the elements of left runs, `less(partner, element)`, and one for those of right runs,
    `less(element, partner)`)."""
    R, m = cols[0].shape
    it = np.int32 if R * m < 2 ** 31 else np.int64  # index arithmetic in the narrowest type that fits
    perm = np.broadcast_to(np.arange(m, dtype=it), (R, m)).copy()
    c = np.arange(m, dtype=it)
    rowoff = (np.arange(R, dtype=it) * it(m))[:, None]
    flat_cols = [col.ravel() for col in cols]
    w = 1
    while w < m:
        cur = [np.take(col, perm + rowoff) for col in flat_cols]
        flat = [x.ravel() for x in cur]
        run = c // w
        is_a = (run % 2) == 0
        pstart = (run ^ 1) * w
        plen = np.clip(m - pstart, 0, w)
        newperm = perm.copy()
        dests = []
        for left in (True, False):
            q = np.nonzero((plen > 0) & (is_a if left else ~is_a))[0]  # columns with a partner run
            if not q.size:
                continue
            ql = plen[q]
            lo = np.zeros((R, q.size), dtype=it)
            hi = np.broadcast_to(ql, (R, q.size)).copy()
            base = rowoff + pstart[q]
            last = ql - 1
            mine = [x[:, q] for x in cur]
            mid = np.empty_like(lo)
            pos = np.empty_like(lo)
            for _ in range(int(ql.max()).bit_length()):
                act = lo < hi
                if not act.any():
                    break
                np.add(lo, hi, out=mid)
                mid >>= 1
                np.minimum(mid, last, out=pos)
                pos += base
                other = [np.take(x, pos) for x in flat]
                res = np.asarray(less(other, mine) if left else less(mine, other), dtype=bool)
                # left runs: b < a counts; right runs: not (a < b) counts
                right = np.broadcast_to(res if left else ~res, act.shape)
                np.copyto(hi, mid, where=act & ~right)
                act &= right
                mid += 1
                np.copyto(lo, mid, where=act)
            dest = (run[q] // 2) * 2 * w + (c[q] - run[q] * w) + lo  # [R, q]
            np.put_along_axis(newperm, dest, perm[:, q], axis=1)
            dests.append((q, dest))
        if dests and not _is_permutation(dests, R, m):
            # `less` is not a strict weak order (XLA leaves such a sort undefined): two elements were
            # placed at one position.  Still a permutation: order the pair's elements by their places.
            key = np.broadcast_to(c.astype(np.int64) * 2, (R, m)).copy()
            for side, (q, dest) in enumerate(dests):
                key[:, q] = dest.astype(np.int64) * 2 + side
            newperm = np.take_along_axis(perm, np.argsort(key, axis=1, kind="stable"), axis=1)
        perm = newperm
        w *= 2
    return perm.astype(np.int64, copy=False)


def _is_permutation(dests, R: int, m: int) -> bool:
    """Whether the merge pass's destinations (per side: columns q, positions [R, q]) with every other
    column staying put hit each position once."""
    hit = np.zeros((R, m), dtype=np.int8)
    moved = np.zeros(m, dtype=bool)
    for q, dest in dests:
        np.put_along_axis(hit, dest, 1, axis=1)
        moved[q] = True
    hit[:, ~moved] += 1
    return bool(hit.all()) and int(hit.sum()) == R * m


def _candidate_images(x: np.ndarray) -> list:
    """Integer images of x whose orders a comparator is likely to follow: for floats JAX's canonical
    order (-0 == +0, every NaN one value, last) and XLA's total order; integers and pred themselves."""
    kind = dtype_kind(x.dtype)
    if kind in ("sint", "uint", "pred"):
        return [order_key(x, None)]
    if kind != "float":
        return []
    with np.errstate(all="ignore"):
        canon = np.where(x == 0, np.zeros((), x.dtype), x)
        canon = np.where(np.isnan(canon), np.array(np.nan, x.dtype), canon)
    return [total_order_key(canon), total_order_key(x)]


def _candidate_keys(cols: Sequence[np.ndarray]):
    """Lexicographic key lists (primary first) to try as the comparator's order: each operand's images,
    ascending or descending, the operands in parameter order or the first two swapped, with and without
    the later operands as tie-breakers."""
    images = [_candidate_images(c) for c in cols]
    if not images or not all(images):
        return
    n = len(cols)
    orders = [list(range(n))] + ([[1, 0] + list(range(2, n))] if n >= 2 else [])
    for order in orders:
        for v in range(max(len(im) for im in images)):
            img = [images[k][min(v, len(images[k]) - 1)] for k in order]
            for d0 in (False, True):
                yield [~img[0] if d0 else img[0]]
                if n >= 2:
                    for d1 in (False, True):
                        yield [~img[0] if d0 else img[0]] + [~x if d1 else x for x in img[1:]]


def _is_stable_sorted(cols: Sequence[np.ndarray], perm: np.ndarray, less: Callable) -> bool:
    """The rows of `cols` permuted by `perm` [R, m] are in the stable order of a strict weak order
    `less`: no neighbour precedes its predecessor, and neighbours that `less` does not order keep their
    original index order.  (For a strict weak order the neighbours decide: equivalence classes are
    contiguous and non-decreasing, ties by index is the one stable order.)"""
    srt = [np.take_along_axis(c, perm, axis=1) for c in cols]
    a, b = [x[:, :-1] for x in srt], [x[:, 1:] for x in srt]
    if np.asarray(less(b, a), dtype=bool).any():
        return False
    ahead = np.asarray(less(a, b), dtype=bool)
    return bool((ahead | (perm[:, :-1] < perm[:, 1:])).all())


def candidate_order(cols: Sequence[np.ndarray], less: Callable, sample: int = 2048):
    """The stable sort permutation [R, m] by `less` if one of a few guessed key orders
    (_candidate_keys, a NumPy argsort/lexsort each) is it, else None.  Each guess is checked with two
    array evaluations of `less` on neighbours (_is_stable_sorted), first on a sample of row 0 (a guess
    wrong on a subsequence is wrong), then on everything.  Only for an irreflexive `less` (checked on
    all elements); a strict weak order is assumed, as XLA's sort requires (its result is defined by
    `less(a, b)` or `a`, `b` equal for every i < j)."""
    R, m = cols[0].shape
    if m < 2 or np.asarray(less(cols, cols), dtype=bool).any():
        return None
    step = max(1, m // sample)
    sub = [c[:1, ::step] for c in cols]

    def order(keys):
        if len(keys) == 1:
            return np.argsort(keys[0], axis=-1, kind="stable")
        return np.lexsort(keys[::-1], axis=-1)
    for keys in _candidate_keys(cols):
        if not _is_stable_sorted(sub, order([k[:1, ::step] for k in keys]), less):
            continue
        perm = order(keys)
        if _is_stable_sorted(cols, perm, less):
            return perm
    return None


def tournament_topk_order(cols: Sequence[np.ndarray], less: Callable, k: int) -> np.ndarray:
    """The first k positions [R, k] of a stable sort of rows [R, m] by `less`, without sorting: k rounds
    of a knockout tournament (log2(m) vectorized `less` calls per round, m comparisons in all), the
    right player winning only when it strictly precedes the left one, so each round's winner is the
    lowest index among the elements nothing precedes -- the next element of the stable order for a
    strict weak order.  Winners leave the game."""
    R, m = cols[0].shape
    rows = np.arange(R)[:, None]
    alive = np.ones((R, m), dtype=bool)
    out = np.empty((R, k), dtype=np.int64)
    base = np.broadcast_to(np.arange(m, dtype=np.int64), (R, m))
    for r in range(k):
        idx, ok = base, alive
        while idx.shape[1] > 1:
            if idx.shape[1] % 2:
                idx = np.concatenate([idx, idx[:, :1]], axis=1)
                ok = np.concatenate([ok, np.zeros((R, 1), dtype=bool)], axis=1)
            li, ri, lo, ro = idx[:, 0::2], idx[:, 1::2], ok[:, 0::2], ok[:, 1::2]
            before = np.asarray(less([c[rows, ri] for c in cols], [c[rows, li] for c in cols]), dtype=bool)
            right = ro & (~lo | np.broadcast_to(before, ro.shape))
            idx, ok = np.where(right, ri, li), lo | ro
        out[:, r] = idx[:, 0]
        alive = alive.copy() if r == 0 else alive
        alive[np.arange(R), idx[:, 0]] = False
    return out


def sort_arrays(xs: Sequence[np.ndarray], dim: int, order_fn: Callable) -> tuple:
    """Sort every 1-D slice along `dim` of all operands together; order_fn(flat rows [R, m] per operand)
    returns the permutation [R, m]."""
    shape = xs[0].shape
    moved = [np.moveaxis(x, dim, -1) for x in xs]
    mshape = moved[0].shape
    m = mshape[-1] if mshape else 1
    if m <= 1 or any(d == 0 for d in mshape):
        return tuple(np.array(x) for x in xs)
    flat = [np.ascontiguousarray(x).reshape(-1, m) for x in moved]
    perm = order_fn(flat)
    rows = np.arange(flat[0].shape[0])[:, None]
    out = [f[rows, perm].reshape(mshape) for f in flat]
    return tuple(np.moveaxis(o, -1, dim).reshape(shape) for o in out)


class ComparatorSort:
    """Sorting by a comparator computation: `ComparatorSort(ctx, name, n, ins)(arrays, dim)` returns the
    n arrays sorted together along `dim` (stable).  The recognized-key fast path, else the vectorized
    merge sort, else one comparator call per comparison (see the module docstring).  Reusable by other
    kernels that sort with a comparator (e.g. the TopK custom call: sort (x, iota) and slice)."""

    def __init__(self, ctx, name: str, n: int, ins=None):
        self.ctx, self.name, self.n, self.ins = ctx, name, n, ins
        self.comp = ctx.computation(name, ins)
        nparams = sum(1 for i in self.comp.instructions if i.opcode == "parameter")
        if nparams != 2 * n:
            raise error_at(ins, f"the comparator {name} has {nparams} parameters; sorting {n} operand(s) "
                                f"needs {2 * n}")
        try:
            self.vc = VectorComputation(self.comp, ctx)
        except Exception:  # noqa: BLE001 - not evaluable on arrays: per-comparison calls
            self.vc = None
        try:
            self.recog = recognize_comparator(self.vc, n) if self.vc is not None else None
        except Exception:  # noqa: BLE001 - not a recognized form: the vectorized merge sort
            self.recog = None
        self.fn = None

    def key_order(self, flat):
        keys = []
        for k, expr, desc, ctype in self.recog:
            with np.errstate(all="ignore"):
                key = order_key(self.vc.evaluate(expr, {2 * k: flat[k]}, flat[k].shape), ctype)
            keys.append(~key if desc else key)
        if len(keys) == 1:
            return np.argsort(keys[0], axis=-1, kind="stable")
        return np.lexsort(keys[::-1], axis=-1)  # stable; the last key given is the primary one

    def less_vec(self, lhs, rhs):
        params = {}
        for k in range(self.n):
            params[2 * k] = lhs[k]
            params[2 * k + 1] = rhs[k]
        with np.errstate(all="ignore"):
            return self.vc.evaluate(self.comp.root.name, params, lhs[0].shape)

    def general_order(self, flat):
        # only the operands the comparator reads are gathered at each merge step (a sort of (keys, iota)
        # by the keys moves half the data)
        root = self.comp.root
        names = root.operands if root.opcode == "tuple" else [root.name]
        used = set()
        for nm in names:
            used |= {p // 2 for p in self.vc.params_of(nm)}
        need = sorted(used) or [0]

        def less(lhs, rhs):
            params = {}
            for i, k in enumerate(need):
                params[2 * k] = lhs[i]
                params[2 * k + 1] = rhs[i]
            with np.errstate(all="ignore"):
                return self.vc.evaluate(root.name, params, lhs[0].shape)
        cols = [flat[k] for k in need]
        perm = candidate_order(cols, less)
        return perm if perm is not None else merge_sort_order(cols, less)

    def scalar_order(self, flat):
        if self.fn is None:
            self.fn = self.ctx.call(self.name, self.ins)
        f = self.fn
        R, m = flat[0].shape
        perm = np.empty((R, m), dtype=np.int64)
        for r in range(R):
            def cmp(i, j, r=r):
                args = []
                for x in flat:
                    args += [x[r, i], x[r, j]]
                if bool(f(*args)):
                    return -1
                args = []
                for x in flat:
                    args += [x[r, j], x[r, i]]
                return 1 if bool(f(*args)) else 0
            perm[r] = sorted(range(m), key=functools.cmp_to_key(cmp))
        return perm

    def __call__(self, xs: Sequence[np.ndarray], dim: int) -> tuple:
        xs = [np.asarray(x) for x in xs]
        if self.recog is not None:
            try:
                return sort_arrays(xs, dim, self.key_order)
            except Exception:  # noqa: BLE001 - a kernel refused arrays: the general path from now on
                self.recog = None
        if self.vc is not None:
            try:
                return sort_arrays(xs, dim, self.general_order)
            except Exception:  # noqa: BLE001
                self.vc = None
        return sort_arrays(xs, dim, self.scalar_order)


@kernel("sort")
def _k_sort(ins, ctx):
    n = len(ins.operands)
    if n == 0:
        raise error_at(ins, "sort needs at least one operand")
    dims = tuple(ins.attrs["dimensions"])
    if len(dims) != 1:
        raise error_at(ins, f"sort takes one dimension, got {list(dims)}")
    dim = int(dims[0])
    sorter = ComparatorSort(ctx, ins.attrs["to_apply"], n, ins)

    def run(*xs):
        shape = np.shape(xs[0])
        for x in xs[1:]:
            if np.shape(x) != shape:
                raise error_at(ins, f"sort operands have different shapes: {list(shape)} and {list(np.shape(x))}")
        if not 0 <= dim < max(len(shape), 1):
            raise error_at(ins, f"sort dimension {dim} is out of range for rank {len(shape)}")
        out = sorter(xs, dim)
        return out if n > 1 else out[0]
    return run


# --------------------------------------------------------------------------------------------------
# topk


def topk(x: np.ndarray, k: int, largest: bool = True):
    """(values, s32 indices) of the k largest/smallest along the last axis; lower index first on ties."""
    x = np.asarray(x)
    kind = dtype_kind(x.dtype)
    if kind == "float":
        key = total_order_key(x)
    elif kind in ("sint", "uint", "pred"):
        key = order_key(x, None)
    else:
        raise ComparatorError(f"topk of {x.dtype} values")
    order = stable_order(key, largest)[..., :k]
    vals = np.take_along_axis(x, order, axis=-1)
    return vals, order.astype(np.int32)


def comparator_topk(ins, ctx, comp_name: str, k: int, idx_dtype, what: str = "topk"):
    """run(x) -> (values, indices): the first k along the last dimension of a stable sort by the
    comparator (XLA's TopK decomposition, xla/service/topk_rewriter.cc TopkDecomposer: sort of
    (values, iota) by the comparator, then a slice), so among elements the comparator does not order
    the lower index comes first.  The comparator takes 2 parameters (values) or 4 (values, s32
    indices).  Recognized comparators run as one NumPy argsort (ComparatorSort's fast path); other
    comparators that run on arrays, with k <= 64 and the dimension > 16 k, pick the k by a
    tournament (tournament_topk_order) instead of a full sort."""
    comp = ctx.computation(comp_name, ins)
    nparams = sum(1 for i in comp.instructions if i.opcode == "parameter")
    if nparams not in (2, 4):
        raise error_at(ins, f"{what}: the comparator {comp_name} has {nparams} parameters (2 or 4 expected)")
    sorter = ComparatorSort(ctx, comp_name, nparams // 2, ins)

    def order(flat):
        if sorter.recog is not None:
            try:
                return sorter.key_order(flat)
            except Exception:  # noqa: BLE001 - as ComparatorSort: the next path
                sorter.recog = None
        if sorter.vc is not None:
            try:
                return sorter.general_order(flat)
            except Exception:  # noqa: BLE001
                sorter.vc = None
        return sorter.scalar_order(flat)

    def tournament(x, iota):
        m = x.shape[-1]
        flat = [np.ascontiguousarray(a).reshape(-1, m) for a in ([x, iota] if nparams == 4 else [x])]
        perm = tournament_topk_order(flat, sorter.less_vec, k)
        rows = np.arange(perm.shape[0])[:, None]
        shape = x.shape[:-1] + (k,)
        return flat[0][rows, perm].reshape(shape), perm.reshape(shape)

    def run(x):
        x = np.asarray(x)
        last = x.ndim - 1
        iota = np.broadcast_to(np.arange(x.shape[-1], dtype=np.int32), x.shape)
        if sorter.recog is None and sorter.vc is not None and 0 < k <= 64 and x.shape[-1] > 16 * k:
            try:  # a comparator evaluated on arrays, few of many: a tournament instead of a full sort
                v, i = tournament(x, iota)
                return (np.ascontiguousarray(v), np.ascontiguousarray(i).astype(idx_dtype))
            except Exception:  # noqa: BLE001 - the comparator refused arrays: the sort's own paths
                sorter.vc = None
        if nparams == 4:
            v, i = sorter([x, iota], last)
        else:
            v, i = sort_arrays([x, iota], last, lambda flat: order(flat[:1]))
        return (np.ascontiguousarray(v[..., :k]), np.ascontiguousarray(i[..., :k]).astype(idx_dtype))
    return run


@kernel("topk")
def _k_topk(ins, ctx):
    k = int(ins.attrs["k"])
    largest = ins.attrs.get("largest")
    largest = True if largest is None else bool(largest)
    idx_dtype = None
    if ins.shape is not None and ins.shape.is_tuple and len(ins.shape.elements) == 2:
        idx_dtype = ins.shape.elements[1].element_type.dtype
    cmp_name = ins.attrs.get("to_apply")
    if cmp_name is not None:
        if ins.attrs.get("largest") is False:
            # the comparator alone orders; which of the two would win is not pinned down anywhere
            raise unsupported(ins, "topk with both largest=false and a comparator (to_apply)")
        by_cmp = comparator_topk(ins, ctx, cmp_name, k, idx_dtype or np.int32)

        def run_cmp(x):
            if np.ndim(x) < 1:
                raise error_at(ins, "topk needs an operand of rank >= 1")
            if not 0 <= k <= np.shape(x)[-1]:
                raise error_at(ins, f"topk k={k} exceeds the last dimension ({np.shape(x)[-1]})")
            return by_cmp(x)
        return run_cmp

    def run(x):
        if np.ndim(x) < 1:
            raise error_at(ins, "topk needs an operand of rank >= 1")
        if not 0 <= k <= np.shape(x)[-1]:
            raise error_at(ins, f"topk k={k} exceeds the last dimension ({np.shape(x)[-1]})")
        try:
            v, i = topk(x, k, largest)
        except ComparatorError as e:
            raise error_at(ins, f"topk: {e}") from None
        if idx_dtype is not None:
            i = i.astype(idx_dtype)
        return (v, i)
    return run
