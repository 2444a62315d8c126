"""reduce, map and dot kernels (hlo_interp/ops/reduce.py, hlo_interp/ops/dot.py).

  * the operation-semantics documents' worked examples (EX-24, EX-25, EX-29..EX-32) on the plain functions;
  * the general (any-computation) reduce path and map with Python reducers, on the plain functions;
  * XLA golden cases (tests/golden/reduce_dot_hlo/: HLO text, inputs and XLA:CPU's outputs) run
    through the kernels with the stand-alone mini interpreter of test_ops_movement.py, and end to end
    through hlo_interp.run.  Exact (bit for bit) for integers, pred, max/min, bf16/f8 reductions and
    small dots; f32/c64 sums and dots within rtol 2e-6·sqrt(K) (XLA:CPU's summation order differs
    from NumPy's pairwise sum / BLAS).

Regenerate the golden data (dev-only, needs jax):  python -m tools.oracle regen reduce_dot_hlo
"""
from __future__ import annotations

import sys
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import hlo_interp  # noqa: E402
from hlo_interp.ops import dot as dt  # noqa: E402
from hlo_interp.ops import reduce as rd  # noqa: E402
from casedata import cases, compare_leaf  # noqa: E402
from test_ops_movement import golden_cases, mini_run  # noqa: E402

pytestmark = pytest.mark.filterwarnings("error::RuntimeWarning")  # no NumPy warning may leak
BF = ml_dtypes.bfloat16

# --------------------------------------------------------------------------------------------------
# Spec worked examples


def test_ex24_dot_general_contracting():
    lhs = np.array([[1, 2, 3], [4, 5, 6]], np.float32)
    rhs = np.array([[1, 1, 1], [2, 2, 2]], np.float32)
    r = dt.dot_general(lhs, rhs, np.float32, lhs_contracting=(1,), rhs_contracting=(1,))
    assert r.tolist() == [[6, 12], [15, 30]]


def test_ex25_dot_general_batch():
    lhs = np.array([[[1, 2], [3, 4]], [[5, 6], [7, 8]]], np.float32)
    rhs = np.array([[[1, 0], [0, 1]], [[1, 0], [0, 1]]], np.float32)
    r = dt.dot_general(lhs, rhs, np.float32, lhs_batch=(0,), rhs_batch=(0,), lhs_contracting=(2,),
                       rhs_contracting=(1,))
    assert r.tolist() == lhs.tolist()


def test_ex26_dot_shapes():
    assert dt.dot_general(np.ones(4), np.ones(4), np.float64, lhs_contracting=(0,), rhs_contracting=(0,)).shape == ()
    assert dt.dot_general(np.ones((3, 4)), np.ones(4), np.float64, lhs_contracting=(1,),
                          rhs_contracting=(0,)).shape == (3,)
    assert dt.dot_general(np.ones((3, 4)), np.ones((4, 5)), np.float64, lhs_contracting=(1,),
                          rhs_contracting=(0,)).shape == (3, 5)


def test_dot_result_order_batch_lhs_free_rhs_free():
    lhs = np.arange(2 * 3 * 4, dtype=np.float64).reshape(3, 2, 4)  # batch dim 1, contracting 2
    rhs = np.arange(4 * 2 * 5, dtype=np.float64).reshape(4, 5, 2)  # batch dim 2, contracting 0
    r = dt.dot_general(lhs, rhs, np.float64, lhs_batch=(1,), rhs_batch=(2,), lhs_contracting=(2,),
                       rhs_contracting=(0,))
    assert r.shape == (2, 3, 5)
    assert np.array_equal(r, np.einsum("mbk,knb->bmn", lhs, rhs))


def test_dot_integer_wraps_and_bf16_rounds_once():
    a = np.full((1, 3), 2 ** 20, np.int32)
    b = np.full((3, 1), 2 ** 12, np.int32)
    assert int(dt.dot_general(a, b, np.int32, lhs_contracting=(1,), rhs_contracting=(0,))[0, 0]) == \
        np.int64(3 * 2 ** 32).astype(np.int32)
    a8 = np.full((1, 300), 127, np.int8)
    assert int(dt.dot_general(a8, a8.T, np.int32, lhs_contracting=(1,), rhs_contracting=(0,))[0, 0]) == 300 * 127 * 127
    assert int(dt.dot_general(a8, a8.T, np.int8, lhs_contracting=(1,), rhs_contracting=(0,))[0, 0]) == \
        np.int64(300 * 127 * 127).astype(np.int8)
    x = np.array([[1, 2 ** -8, 2 ** -8]], BF)  # f32 sum 1+2**-7, one rounding; per-step bf16 gives 1.0
    y = np.ones((3, 1), BF)
    assert float(dt.dot_general(x, y, BF, lhs_contracting=(1,), rhs_contracting=(0,))[0, 0]) == 1.0078125


def test_ex29_reduce_3d():
    x = np.tile(np.array([[1, 2, 3], [4, 5, 6]], np.int32), (4, 1, 1))
    assert rd.reduce_simple(x, 0, (0,), "add").tolist() == [[4, 8, 12], [16, 20, 24]]
    assert rd.reduce_simple(x, 0, (2,), "add").tolist() == [[6, 15]] * 4
    assert rd.reduce_simple(x, 0, (0, 1), "add").tolist() == [20, 28, 36]


def test_ex30_ex31_reduce_2d_1d():
    x = np.array([[1, 2, 3], [4, 5, 6]], np.int32)
    assert rd.reduce_simple(x, 0, (1,), "add").tolist() == [6, 15]
    assert rd.reduce_simple(x, 0, (0,), "add").tolist() == [5, 7, 9]
    assert int(rd.reduce_simple(np.array([10, 11, 12, 13], np.int32), 0, (0,), "add")) == 46


def _argmax_reducer(acc_v, acc_i, v, i):
    """EX-32: (value, index) if value >= max, else (max, argmax)."""
    take = v >= acc_v
    return np.where(take, v, acc_v), np.where(take, i, acc_i)


def test_ex32_variadic_argmax_general_path():
    v = np.array([3, 9, 2, 7, 1], np.float32)
    k = np.arange(5, dtype=np.int32)
    m, i = rd.reduce_general([v, k], [np.float32(-np.inf), np.int32(-1)], (0,), _argmax_reducer)
    assert float(m) == 9 and int(i) == 1
    # sequential left fold: with >= the later equal value wins
    m, i = rd.reduce_general([np.array([3, 7, 2, 7, 1], np.float32), k], [np.float32(-np.inf), np.int32(-1)],
                             (0,), _argmax_reducer)
    assert float(m) == 7 and int(i) == 3


def test_general_path_vectorized_equals_per_element_and_tree():
    rs = np.random.RandomState(0)
    for r in (7, 32, 300, 1001):  # sequential, sequential (= SEQUENTIAL_LIMIT), tree, odd tree
        v = rs.randint(0, 50, size=(3, r)).astype(np.float32)  # many ties
        k = np.broadcast_to(np.arange(r, dtype=np.int32), (3, r))

        def first_max(av, ai, bv, bi):  # associative: ties keep the lower index
            take = (bv > av) | ((bv == av) & (bi < ai))
            return np.where(take, bv, av), np.where(take, bi, ai)
        a = rd.reduce_general([v, k], [np.float32(-np.inf), np.int32(-1)], (1,), first_max, True)
        b = rd.reduce_general([v, k], [np.float32(-np.inf), np.int32(-1)], (1,), first_max, False)
        assert np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1])
        assert a[1].tolist() == np.argmax(v, axis=1).tolist()


def test_reduce_simple_semantics():
    assert int(rd.reduce_simple(np.array([2 ** 31 - 1, 1], np.int32), 0, (0,), "add")) == -2 ** 31
    assert int(rd.reduce_simple(np.array([200, 100], np.uint8), 0, (0,), "add")) == 44
    assert int(rd.reduce_simple(np.array([7, 7], ml_dtypes.int4), 0, (0,), "add").astype(np.int32)) == -2
    assert bool(rd.reduce_simple(np.array([True, False]), True, (0,), "and")) is False
    assert bool(rd.reduce_simple(np.array([True, False]), False, (0,), "add")) is True
    assert np.isnan(rd.reduce_simple(np.array([1, np.nan, 3], np.float32), -np.inf, (0,), "maximum"))
    assert np.isnan(rd.reduce_simple(np.array([1, np.nan, 3], BF), np.inf, (0,), "minimum").astype(np.float32))
    # an empty reduction gives the init value (its sign too)
    assert rd.reduce_simple(np.zeros((0, 3), np.float32), -0.0, (0,), "add").tobytes() == \
        np.full(3, -0.0, np.float32).tobytes()
    # bf16: XLA's tree of 32-wide windows, not a sequential bf16 sum (which stalls at 256)
    assert float(rd.reduce_simple(np.ones(1000, BF), 0, (0,), "add")) == 1000.0
    assert float(rd.reduce_simple(np.ones(100000, BF), 0, (0,), "add")) == 100352.0  # XLA:CPU's value


def test_map_plain():
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    assert rd.map_general([x, x], lambda a, b: a * b + 1, np.float32).tolist() == [[1, 2, 5], [10, 17, 26]]
    assert rd.map_general([x], lambda a: np.float32(a * 2), np.float32, vectorized=False).tolist() == \
        [[0, 2, 4], [6, 8, 10]]


# --------------------------------------------------------------------------------------------------
# Recognizing reducers

_RED = """HloModule m
{body}
ENTRY e {{
 x = {t}[8] parameter(0)
 z = {t}[] constant(0)
 ROOT r = {t}[] reduce(x, z), dimensions={{0}}, to_apply=f
}}"""


@pytest.mark.parametrize("body, t, want", [
    ("f { a = f32[] parameter(0)\n b = f32[] parameter(1)\n ROOT c = f32[] add(a, b) }", "f32", [("add", None)]),
    ("f { a = f32[] parameter(0)\n b = f32[] parameter(1)\n ROOT c = f32[] maximum(b, a) }", "f32",
     [("maximum", None)]),
    ("f { a = f32[] parameter(0)\n b = f32[] parameter(1)\n c = f32[] add(a, b)\n d = bf16[] convert(c)\n"
     " ROOT e = f32[] convert(d) }", "f32", [("add", np.dtype(BF))]),
    ("f { a = bf16[] parameter(0)\n b = bf16[] parameter(1)\n c = f32[] convert(a)\n d = f32[] convert(b)\n"
     " s = f32[] add(c, d)\n ROOT e = bf16[] convert(s) }", "bf16", [("add", np.dtype(BF))]),
    ("f { a = f32[] parameter(0)\n b = f32[] parameter(1)\n ROOT c = f32[] subtract(a, b) }", "f32", None),
    ("f { a = f32[] parameter(0)\n b = f32[] parameter(1)\n ROOT c = f32[] add(a, a) }", "f32", None),
    ("f { a = s32[] parameter(0)\n b = s32[] parameter(1)\n c = s32[] constant(1)\n d = s32[] add(a, b)\n"
     " ROOT e = s32[] add(d, c) }", "s32", None),
])
def test_recognize_reducer(body, t, want):
    m = hlo_interp.parse(_RED.format(body=body, t=t))
    got = rd.recognize_reducer(m, "f", 1)
    assert got == want


# --------------------------------------------------------------------------------------------------
# XLA golden cases

GOLDEN = golden_cases("reduce_dot_hlo")  # tools/oracle/families/reduce_dot_hlo.py

# f32/c64 sums that XLA:CPU computes in exactly the order of reduce.EXACT_WIDE_FLOAT_ORDER
EXACT_IN_XLA_ORDER = ("reduce_add_f32_small", "reduce_variadic_add_add_long", "reduce_variadic_add_max",
                      "reduce_add_c64_tol", "reduce_mul_f32_tol")


def test_golden_data_present():
    assert len(GOLDEN) >= 50, "tests/golden/reduce_dot_hlo/ is missing or incomplete"


@pytest.mark.parametrize("case", [pytest.param(c, id=c.short) for c in cases("reduce_dot_hlo")])
def test_golden_kernels(case):
    """Through the kernels alone, by the case's rules (tests/test_golden.py runs the same cases end to end)."""
    case.check(mini_run(case.text(), *case.inputs), "before")


@pytest.mark.parametrize("name", EXACT_IN_XLA_ORDER)
def test_exact_wide_float_order(name, monkeypatch):
    monkeypatch.setattr(rd, "EXACT_WIDE_FLOAT_ORDER", True)
    (_, text, inputs, expected), = [c for c in GOLDEN if c[0] == name]
    for g, w in zip(mini_run(text, *inputs), expected):
        assert compare_leaf(g, w, "bits") is None  # byte for byte


# --------------------------------------------------------------------------------------------------
# Located errors


@pytest.mark.parametrize("text, args, msg", [
    ("ENTRY e { a = f32[2,3] parameter(0)\n b = f32[4,5] parameter(1)\n"
     " ROOT d = f32[2,5] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0} }",
     (np.zeros((2, 3), np.float32), np.zeros((4, 5), np.float32)), "contracting dimension sizes differ"),
    ("ENTRY e { a = f32[2,3] parameter(0)\n b = f32[3,5] parameter(1)\n"
     " ROOT d = f32[2,5] dot(a, b), lhs_contracting_dims={2}, rhs_contracting_dims={0} }",
     (np.zeros((2, 3), np.float32), np.zeros((3, 5), np.float32)), "invalid for rank 2"),
    ("f { a = f32[] parameter(0)\n b = f32[] parameter(1)\n ROOT c = f32[] add(a, b) }\n"
     "ENTRY e { x = f32[3] parameter(0)\n z = f32[] constant(0)\n"
     " ROOT r = f32[] reduce(x, z), dimensions={1}, to_apply=f }",
     (np.zeros(3, np.float32),), "invalid for rank 1"),
])
def test_errors_are_located(text, args, msg):
    with pytest.raises(hlo_interp.HloError) as ei:
        mini_run("HloModule m\n" + text, *args)
    rendered = ei.value.render()
    assert msg in rendered
    line = next(i for i, t in enumerate(("HloModule m\n" + text).splitlines(), 1) if "ROOT" in t and "(x, z)" in t
                or "ROOT d" in t)
    assert f":{line}:" in rendered.splitlines()[0]
