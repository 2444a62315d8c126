"""gather and scatter (hlo_interp/ops/gather_scatter.py).

  * XLA golden cases (tests/golden/gather_scatter/, run by tests/test_golden.py; written by tools/make_gather_sort_vectors.py with
    JAX/XLA:CPU, dev-only): JAX programs (x[i], .at[].add/max/min/multiply/set/apply, vmap'ed gathers
    and scatters with batching dims, segment_sum, the gradient of a gather) in every element type,
    pre- AND post-optimization HLO, plus hand-written modules (non-commutative and variadic update
    computations, duplicate indices, the spec's batching examples); all compared bit for bit;
  * the operation-semantics documents' worked examples EX-41 / EX-42 on the plain functions;
  * the fast paths against the general path; located errors.
"""
from __future__ import annotations

import sys
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import hlo_interp
from hlo_interp.diagnostics import HloError
from hlo_interp.ops import gather_scatter as gs

from casedata import cases  # noqa: E402

pytestmark = pytest.mark.filterwarnings("error::RuntimeWarning")


def test_golden_coverage():
    """The XLA:CPU cases (tests/golden/gather_scatter/, run by tests/test_golden.py) cover every scatter kind."""
    names = [c.short for c in cases("gather_scatter")]
    assert len(names) >= 90
    for op in ("add", "max", "min", "mul", "set"):
        assert sum(n.startswith(f"scatter_{op}_") for n in names) >= 10, op
    assert sum(n.startswith("take_rows_") for n in names) >= 12


# ---- the operation-semantics documents' examples (EX-41, EX-42)

OPERAND = np.arange(1, 49, dtype=np.int32).reshape(2, 3, 4, 2)
INDICES = np.array([[[[0, 0], [1, 0], [2, 1]], [[0, 1], [1, 1], [0, 9]]],
                    [[[0, 0], [2, 1], [2, 2]], [[1, 2], [0, 1], [1, 0]]]], np.int64)


def test_ex41_gather_batching():
    got = gs.gather(OPERAND, INDICES, offset_dims=(3, 4), collapsed_slice_dims=(1,), start_index_map=(2, 1),
                    index_vector_dim=3, slice_sizes=(1, 1, 2, 2), operand_batching_dims=(0,),
                    start_indices_batching_dims=(1,))
    want = [[[[[1, 2], [3, 4]], [[3, 4], [5, 6]], [[13, 14], [15, 16]]],
             [[[33, 34], [35, 36]], [[35, 36], [37, 38]], [[41, 42], [43, 44]]]],
            [[[[1, 2], [3, 4]], [[13, 14], [15, 16]], [[21, 22], [23, 24]]],
             [[[43, 44], [45, 46]], [[33, 34], [35, 36]], [[27, 28], [29, 30]]]]]
    assert got.tolist() == want


EX42 = """HloModule ex42
add { a = s32[] parameter(0)  b = s32[] parameter(1)  ROOT r = s32[] add(a, b) }
ENTRY e { o = s32[2,3,4,2] parameter(0)  i = s64[2,2,3,2] parameter(1)  u = s32[2,2,3,2,2] parameter(2)
  ROOT s = s32[2,3,4,2] scatter(o, i, u), update_window_dims={3,4}, inserted_window_dims={1},
    input_batching_dims={0}, scatter_indices_batching_dims={1}, scatter_dims_to_operand_dims={2,1},
    index_vector_dim=3, to_apply=add }"""


def test_ex42_scatter_batching():
    got = hlo_interp.run(EX42, OPERAND, INDICES, np.ones((2, 2, 3, 2, 2), np.int32))[0]
    want = [[[[3, 4], [6, 7], [6, 7], [7, 8]], [[9, 10], [11, 12], [15, 16], [17, 18]],
             [[17, 18], [19, 20], [22, 23], [24, 25]]],
            [[[25, 26], [28, 29], [30, 31], [31, 32]], [[35, 36], [38, 39], [38, 39], [39, 40]],
             [[41, 42], [44, 45], [46, 47], [47, 48]]]]
    assert got.tolist() == want


def test_ex40_gather_nd_rows():
    x = np.arange(16 * 11).reshape(16, 11)
    idx = np.array([[[3], [15]], [[0], [99]]], np.int32)
    got = gs.gather(x, idx, offset_dims=(2,), collapsed_slice_dims=(0,), start_index_map=(0,),
                    index_vector_dim=2, slice_sizes=(1, 11))
    assert got.shape == (2, 2, 11)
    assert np.array_equal(got[0, 0], x[3]) and np.array_equal(got[1, 1], x[15])  # 99 clamped to 15


# ---- fast paths = general path

def _scatter_text(comp_body, ty="f32"):
    return f"""HloModule m
f {{ a = {ty}[] parameter(0)  b = {ty}[] parameter(1)  {comp_body} }}
ENTRY e {{ x = {ty}[8] parameter(0)  i = s32[40,1] parameter(1)  u = {ty}[40] parameter(2)
  ROOT s = {ty}[8] scatter(x, i, u), update_window_dims={{}}, inserted_window_dims={{0}},
    scatter_dims_to_operand_dims={{0}}, index_vector_dim=1, to_apply=f }}"""


@pytest.mark.parametrize("op", ["add", "maximum", "minimum", "multiply"])
def test_fast_path_matches_general(op):
    rng = np.random.default_rng(0)
    x = rng.integers(-3, 4, 8).astype(np.int32)
    i = rng.integers(-2, 10, (40, 1)).astype(np.int32)
    u = rng.integers(-3, 4, 40).astype(np.int32)
    fast = hlo_interp.run(_scatter_text(f"ROOT r = s32[] {op}(a, b)", "s32"), x, i, u)[0]
    # the same computation with a no-op in it is not recognized: the general path (rounds)
    general = hlo_interp.run(_scatter_text(f"c = s32[] {op}(a, b)  z = s32[] constant(0)  "
                                           "ROOT r = s32[] xor(c, z)", "s32"), x, i, u)[0]
    ref = x.astype(np.int64).copy()
    uf = {"add": np.add, "maximum": np.maximum, "minimum": np.minimum, "multiply": np.multiply}[op]
    for k in range(40):
        if 0 <= i[k, 0] < 8:
            ref[i[k, 0]] = uf(ref[i[k, 0]], u[k])
    assert np.array_equal(fast, ref.astype(np.int32))
    assert np.array_equal(general, fast)


def test_subtract_duplicates_in_order():
    text = _scatter_text("ROOT r = f32[] subtract(b, a)")
    x = np.zeros(8, np.float32)
    i = np.array([[1]] * 40, np.int32)
    u = np.arange(40, dtype=np.float32)
    got = hlo_interp.run(text, x, i, u)[0]
    acc = 0.0
    for v in u:
        acc = v - acc
    assert got[1] == acc and got[0] == 0


# ---- errors

def test_bad_index_vector_size_is_located():
    text = """HloModule m
ENTRY e { x = f32[4,4] parameter(0)  i = s32[3,3] parameter(1)
  ROOT g = f32[3,4] gather(x, i), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0},
    index_vector_dim=1, slice_sizes={1,4} }"""
    with pytest.raises(HloError) as e:
        hlo_interp.run(text, np.zeros((4, 4), np.float32), np.zeros((3, 3), np.int32))
    assert "gather" in str(e.value)


# ---- edge forms

SCALAR_INDEX = """HloModule m
add { a = f32[] parameter(0)  b = f32[] parameter(1)  ROOT r = f32[] add(a, b) }
ENTRY e { x = f32[4,3] parameter(0)  i = u8[] parameter(1)  u = f32[3] parameter(2)
  ROOT s = f32[4,3] scatter(x, i, u), update_window_dims={0}, inserted_window_dims={0},
    scatter_dims_to_operand_dims={0}, index_vector_dim=0, to_apply=add }"""


@pytest.mark.parametrize("index,row", [(2, 2), (3, 3), (4, None), (250, None)])
def test_scatter_scalar_u8_index(index, row):
    got = hlo_interp.run(SCALAR_INDEX, np.zeros((4, 3), np.float32), np.uint8(index), np.ones(3, np.float32))[0]
    want = np.zeros((4, 3), np.float32)
    if row is not None:
        want[row] = 1
    assert np.array_equal(got, want)


def test_empty_updates_and_indices():
    t = """HloModule m
add { a = f32[] parameter(0)  b = f32[] parameter(1)  ROOT r = f32[] add(a, b) }
ENTRY e { x = f32[4,3] parameter(0)  i = s32[0,1] parameter(1)  u = f32[0,3] parameter(2)
  ROOT s = f32[4,3] scatter(x, i, u), update_window_dims={1}, inserted_window_dims={0},
    scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add }"""
    x = np.arange(12, dtype=np.float32).reshape(4, 3)
    assert np.array_equal(hlo_interp.run(t, x, np.zeros((0, 1), np.int32), np.ones((0, 3), np.float32))[0], x)
    g = """HloModule m
ENTRY e { x = f32[4,3] parameter(0)  i = s32[0,1] parameter(1)
  ROOT g = f32[0,3] gather(x, i), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0},
    index_vector_dim=1, slice_sizes={1,3} }"""
    assert hlo_interp.run(g, x, np.zeros((0, 1), np.int32))[0].shape == (0, 3)


def test_partly_out_of_bounds_window_is_skipped_whole():
    # window of 3 rows starting at row 2 of 4: rows 2..4 do not fit, nothing is written
    t = """HloModule m
add { a = s32[] parameter(0)  b = s32[] parameter(1)  ROOT r = s32[] add(a, b) }
ENTRY e { x = s32[4] parameter(0)  i = s32[2,1] parameter(1)  u = s32[2,3] parameter(2)
  ROOT s = s32[4] scatter(x, i, u), update_window_dims={1}, inserted_window_dims={},
    scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add }"""
    got = hlo_interp.run(t, np.zeros(4, np.int32), np.array([[2], [1]], np.int32),
                         np.array([[1, 2, 3], [10, 20, 30]], np.int32))[0]
    assert got.tolist() == [0, 10, 20, 30]


# ---- random dimension numbers against a per-element reading of the spec's algorithm

def _ref_gather(x, idx, offset_dims, collapsed, sim, ivd, sizes, obd=(), sibd=()):
    if ivd == idx.ndim:
        idx = idx[..., None]
    rank = x.ndim
    batch_shape = [n for d, n in enumerate(idx.shape) if d != ivd]
    removed = set(collapsed) | set(obd)
    window = [d for d in range(rank) if d not in removed]
    out_rank = len(batch_shape) + len(window)
    bdims = [p for p in range(out_rank) if p not in offset_dims]
    out_shape = [0] * out_rank
    for p, n in zip(bdims, batch_shape):
        out_shape[p] = n
    for p, d in zip(sorted(offset_dims), window):
        out_shape[p] = sizes[d]
    out = np.zeros(out_shape, x.dtype)
    for o in np.ndindex(*out_shape):
        g = [o[p] for p in bdims]
        start = [0] * rank
        for k, d in enumerate(sim):
            full = list(g)
            full.insert(ivd, k)
            start[d] = int(idx[tuple(full)])
        for od, ib in zip(obd, sibd):
            src = [d for d in range(idx.ndim) if d != ivd]
            start[od] = g[src.index(ib)]
        start = [min(max(s, 0), x.shape[d] - sizes[d]) for d, s in enumerate(start)]
        off = [0] * rank
        for p, d in zip(sorted(offset_dims), window):
            off[d] = o[p]
        out[o] = x[tuple(s + f for s, f in zip(start, off))]
    return out


def _random_gather_config(rng):
    rank = int(rng.integers(1, 4))
    shape = tuple(int(n) for n in rng.integers(1, 5, rank))
    dims = list(range(rank))
    sim = [int(d) for d in rng.permutation(dims)[:int(rng.integers(1, rank + 1))]]
    sizes = [int(rng.integers(0, n + 1)) if rng.random() < 0.7 else n for n in shape]
    collapsed = [d for d in dims if sizes[d] == 1 and rng.random() < 0.5]
    nbatch = int(rng.integers(0, 3))
    batch_shape = [int(n) for n in rng.integers(1, 4, nbatch)]
    ivd = int(rng.integers(0, nbatch + 1))
    ishape = list(batch_shape)
    ishape.insert(ivd, len(sim))
    idx = rng.integers(-3, 7, ishape).astype(np.int32)
    nwin = rank - len(collapsed)
    out_rank = nbatch + nwin
    offset_dims = sorted(int(d) for d in rng.permutation(out_rank)[:nwin])
    return shape, idx, {"offset_dims": tuple(offset_dims), "collapsed_slice_dims": tuple(collapsed),
                        "start_index_map": tuple(sim), "index_vector_dim": ivd, "slice_sizes": tuple(sizes)}


@pytest.mark.parametrize("seed", range(60))
def test_gather_random_against_reference(seed):
    rng = np.random.default_rng(seed)
    shape, idx, kw = _random_gather_config(rng)
    x = rng.integers(0, 100, shape).astype(np.int32)
    want = _ref_gather(x, idx, kw["offset_dims"], kw["collapsed_slice_dims"], kw["start_index_map"],
                       kw["index_vector_dim"], kw["slice_sizes"])
    got = gs.gather(x, idx, **kw)
    assert got.shape == want.shape and np.array_equal(got, want), kw


def _ref_scatter(x, idx, u, uwd, iwd, sdod, ivd, fn):
    if ivd == idx.ndim:
        idx = idx[..., None]
    out = x.copy()
    rank = x.ndim
    scatter_dims = [d for d in range(u.ndim) if d not in uwd]
    window = [d for d in range(rank) if d not in iwd]
    wsize = {d: u.shape[w] for d, w in zip(window, sorted(uwd))}
    for ui in np.ndindex(*u.shape):
        g = [ui[d] for d in scatter_dims]
        start = [0] * rank
        for k, d in enumerate(sdod):
            full = list(g)
            full.insert(ivd, k)
            start[d] = int(idx[tuple(full)])
        if any(start[d] < 0 or start[d] + wsize.get(d, 1) > x.shape[d] for d in range(rank)):
            continue  # the whole window is out of bounds
        tgt = list(start)
        for d, w in zip(window, sorted(uwd)):
            tgt[d] += ui[w]
        out[tuple(tgt)] = fn(out[tuple(tgt)], u[ui])
    return out


@pytest.mark.parametrize("seed", range(40))
@pytest.mark.parametrize("op", ["add", "subtract", "maximum"])
def test_scatter_random_against_reference(seed, op):
    rng = np.random.default_rng(seed)
    shape, idx, kw = _random_gather_config(rng)
    sizes = list(kw["slice_sizes"])
    # scatter's update windows: the gather's output shape with window sizes >= 1 where not inserted
    iwd = kw["collapsed_slice_dims"]
    sizes = [max(s, 1) if d not in iwd else 1 for d, s in enumerate(sizes)]
    kw["slice_sizes"] = tuple(sizes)
    x = rng.integers(0, 100, shape).astype(np.int32)
    u_shape = gs.gather(x, idx, **kw).shape
    u = rng.integers(-9, 10, u_shape).astype(np.int32)
    ushape = ",".join(map(str, u_shape))
    xshape = ",".join(map(str, shape))
    ishape = ",".join(map(str, idx.shape))
    body = {"add": "add(a, b)", "subtract": "subtract(a, b)", "maximum": "maximum(a, b)"}[op]
    text = f"""HloModule m
f {{ a = s32[] parameter(0)  b = s32[] parameter(1)  ROOT r = s32[] {body} }}
ENTRY e {{ x = s32[{xshape}] parameter(0)  i = s32[{ishape}] parameter(1)  u = s32[{ushape}] parameter(2)
  ROOT s = s32[{xshape}] scatter(x, i, u), update_window_dims={{{",".join(map(str, kw["offset_dims"]))}}},
    inserted_window_dims={{{",".join(map(str, iwd))}}},
    scatter_dims_to_operand_dims={{{",".join(map(str, kw["start_index_map"]))}}},
    index_vector_dim={kw["index_vector_dim"]}, to_apply=f }}"""
    fn = {"add": np.add, "subtract": np.subtract, "maximum": np.maximum}[op]
    want = _ref_scatter(x, idx, u, kw["offset_dims"], iwd, kw["start_index_map"], kw["index_vector_dim"], fn)
    got = hlo_interp.run(text, x, idx, u)[0]
    assert np.array_equal(got, want), text


ROUNDING = """HloModule m
f { a = f32[] parameter(0)  b = f32[] parameter(1)  s = f32[] add(a, b)  c = bf16[] convert(s)
  ROOT r = f32[] convert(c) }
ENTRY e { x = f32[3] parameter(0)  i = s32[50,1] parameter(1)  u = f32[50] parameter(2)
  ROOT s = f32[3] scatter(x, i, u), update_window_dims={}, inserted_window_dims={0},
    scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=f }"""


@pytest.mark.parametrize("representable", [True, False])
def test_scatter_bf16_rounding_form(representable):
    # XLA:CPU's float-normalized bf16 scatter-add: f32 add, rounded to bf16 after every step
    rng = np.random.default_rng(2)
    x = np.array([1.0, 256.0, -3.0], np.float32)
    u = rng.standard_normal(50).astype(np.float32)
    if representable:
        u = u.astype(ml_dtypes.bfloat16).astype(np.float32)
    i = rng.integers(0, 3, (50, 1)).astype(np.int32)
    ref = x.copy()
    for k in range(50):
        ref[i[k, 0]] = np.float32(ref[i[k, 0]] + u[k]).astype(ml_dtypes.bfloat16).astype(np.float32)
    got = hlo_interp.run(ROUNDING, x, i, u)[0]
    assert np.array_equal(got, ref)
