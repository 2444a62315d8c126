"""reduce, map and dot kernels (hlo_interp/ops/reduce.py, hlo_interp/ops/dot.py).

  * spec worked examples (op-checklist.md §2: EX-24, EX-25, EX-29..EX-32) on the plain functions;
  * the general (any-computation) reduce path and map with Python reducers, on the plain functions;
  * XLA golden cases (tests/data/ops_reduce_dot_xla.npz: HLO text, inputs and XLA:CPU's outputs) run
    through the kernels with the stand-alone mini interpreter of test_ops_movement.py, and end to end
    through hlo_interp.run.  Exact (bit for bit) for integers, pred, max/min, bf16/f8 reductions and
    small dots; f32/c64 sums and dots within rtol 2e-6·sqrt(K) (XLA:CPU's summation order differs
    from NumPy's pairwise sum / BLAS).

Regenerate the golden data (dev-only, needs jax):  python3 tests/test_ops_reduce_dot.py
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
from test_ops_movement import (ROOT, _np, assert_same, golden_cases,  # noqa: E402
                               mini_run, regenerate)

DATA = ROOT / "tests" / "data" / "ops_reduce_dot_xla.npz"
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

GOLDEN = golden_cases(DATA)

# f32/c64 sums that XLA:CPU computes in exactly the order of reduce.EXACT_WIDE_FLOAT_ORDER
EXACT_IN_XLA_ORDER = ("reduce_add_f32_small", "reduce_variadic_add_add_long", "reduce_variadic_add_max",
                      "reduce_add_c64_tol", "reduce_mul_f32_tol")


def _tol(name, want):
    """Cases named *_tol: f32/f64/c64 sums and dots whose summation order in XLA:CPU is not ours
    (BLAS for dots, several reduced dimensions for sums: see reduce.py / dot.py): relative 1e-5, and
    absolute 1e-5 of the largest result (cancellation).  All others: bit-exact (NaN sign aside)."""
    if name.endswith("_tol") or name in EXACT_IN_XLA_ORDER:
        scale = float(np.max(np.abs(want.astype(np.complex128)))) if want.size else 1.0
        return 1e-5, 1e-5 * max(scale, 1.0)
    return 0.0, 0.0


def test_golden_data_present():
    assert len(GOLDEN) >= 50, "tests/data/ops_reduce_dot_xla.npz is missing or incomplete"


@pytest.mark.parametrize("name,text,inputs,expected", GOLDEN, ids=[c[0] for c in GOLDEN])
def test_golden_kernels(name, text, inputs, expected):
    got = mini_run(text, *inputs)
    assert len(got) == len(expected)
    for g, w in zip(got, expected):
        assert_same(g, w, *_tol(name, w), nan_sign=False)


@pytest.mark.parametrize("name", EXACT_IN_XLA_ORDER)
def test_exact_wide_float_order(name, monkeypatch):
    monkeypatch.setattr(rd, "EXACT_WIDE_FLOAT_ORDER", True)
    (_, text, inputs, expected), = [c for c in GOLDEN if c[0] == name]
    for g, w in zip(mini_run(text, *inputs), expected):
        assert_same(g, w)


@pytest.mark.parametrize("name,text,inputs,expected", GOLDEN, ids=[c[0] for c in GOLDEN])
def test_golden_end_to_end(name, text, inputs, expected):
    got = hlo_interp.run(text, *inputs)
    assert len(got) == len(expected)
    for g, w in zip(got, expected):
        assert_same(g, w, *_tol(name, w), nan_sign=False)


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


# --------------------------------------------------------------------------------------------------
# Golden-data generator (dev-only)

_BIN = "{n} {{\n a = {t}[] parameter(0)\n b = {t}[] parameter(1)\n ROOT c = {t}[] {op}(a, b)\n}}\n"

_ARGMAX = """argmax {{
 av = {t}[] parameter(0)
 ai = s32[] parameter(1)
 bv = {t}[] parameter(2)
 bi = s32[] parameter(3)
 gt = pred[] compare(av, bv), direction={d}
 eq = pred[] compare(av, bv), direction=EQ
 lt = pred[] compare(ai, bi), direction=LT
 tie = pred[] and(eq, lt)
 keep = pred[] or(gt, tie)
 isn = pred[] compare(av, av), direction=NE
 keepa = pred[] or(keep, isn)
 v = {t}[] select(keepa, av, bv)
 i = s32[] select(keepa, ai, bi)
 ROOT r = ({t}[], s32[]) tuple(v, i)
}}
"""


def _shape(t, dims):
    return f"{t}[{','.join(map(str, dims))}]"


def _cases():
    rs = np.random.RandomState(7)
    C = []

    def add(name, text, *inputs):
        C.append((name, "HloModule " + name + "\n\n" + text, list(inputs)))

    def data(t, dims, lo=-3, hi=3):
        d = _np(t)
        if d == np.bool_:
            return rs.rand(*dims) > 0.5
        if np.dtype(d).kind in "iu":
            return np.frombuffer(rs.bytes(int(np.prod(dims)) * np.dtype(d).itemsize), d).reshape(dims).copy()
        if t in ("s4", "u4", "s2", "u2"):
            info = np.iinfo(d) if np.dtype(d).kind in "iu" else ml_dtypes.iinfo(d)
            return rs.randint(int(info.min), int(info.max) + 1, size=dims, dtype=np.int64).astype(d)
        if t in ("c64", "c128"):
            return (rs.uniform(lo, hi, dims) + 1j * rs.uniform(lo, hi, dims)).astype(d)
        return rs.uniform(lo, hi, dims).astype(d)

    def red(name, t, dims, rdims, op, init, x=None):
        out = [n for i, n in enumerate(dims) if i not in rdims]
        add(name, _BIN.format(n="f", t=t, op=op) +
            f"ENTRY e {{\n x = {_shape(t, dims)} parameter(0)\n z = {t}[] constant({init})\n"
            f" ROOT r = {_shape(t, out)} reduce(x, z), dimensions={{{','.join(map(str, rdims))}}}, to_apply=f\n}}",
            data(t, dims) if x is None else x)

    # integers: exact, wrapping
    for t in ("s8", "s16", "s32", "s64", "u8", "u16", "u32", "u64"):
        for op, init in (("add", 0), ("multiply", 1), ("maximum", 0), ("minimum", 0), ("and", -1 if t[0] == "s" else 0),
                         ("or", 0), ("xor", 0)):
            if op == "and" and t[0] == "u":
                init = np.iinfo(_np(t)).max
            red(f"reduce_{op}_{t}", t, (6, 37), (1,), op, init)
    red("reduce_add_s32_overflow", "s32", (4,), (0,), "add", 5, np.array([2 ** 31 - 1, 2 ** 31 - 1, 7, 9], np.int32))
    for op, init in (("and", "true"), ("or", "false"), ("add", "false"), ("multiply", "true"),
                     ("maximum", "false"), ("minimum", "true"), ("xor", "false")):
        red(f"reduce_{op}_pred", "pred", (5, 9), (0,), op, init)
    # floats
    x = data("f32", (3, 40))
    x[0, 5] = np.nan
    x[1, 7] = np.inf
    red("reduce_max_f32_nan", "f32", (3, 40), (1,), "maximum", "-inf", x)
    red("reduce_min_f32_nan", "f32", (3, 40), (1,), "minimum", "inf", x)
    x = data("bf16", (4, 50))
    x[2, 3] = np.nan
    red("reduce_max_bf16_nan", "bf16", (4, 50), (1,), "maximum", "-inf", x)
    red("reduce_max_f64", "f64", (3, 5, 7), (0, 2), "maximum", "-inf")
    red("reduce_min_f16", "f16", (70,), (0,), "minimum", "inf")
    red("reduce_add_f32_small", "f32", (5, 20), (1,), "add", 0)  # ≤ 32 terms: exact
    red("reduce_add_f32_tol", "f32", (3, 2000), (1,), "add", 0)
    red("reduce_add_f32_multi_tol", "f32", (2, 40, 3, 35), (1, 3), "add", 0)
    red("reduce_add_f64_tol", "f64", (300, 10), (0,), "add", 0)
    red("reduce_add_c64_tol", "c64", (4, 100), (1,), "add", "(0, 0)")
    red("reduce_mul_f32_tol", "f32", (50,), (0,), "multiply", 1, (1 + rs.uniform(-.1, .1, 50)).astype(np.float32))
    for t in ("bf16", "f8e4m3fn", "f8e5m2"):
        red(f"reduce_add_{t}_ones", t, (2, 1000), (1,), "add", 0, np.ones((2, 1000), _np(t)))
        red(f"reduce_add_{t}", t, (2, 40, 3, 35), (1, 3), "add", 0, data(t, (2, 40, 3, 35), 0, 1))
        red(f"reduce_add_{t}_major", t, (300, 7), (0,), "add", 0, data(t, (300, 7), 0, 1))
        red(f"reduce_mul_{t}", t, (3, 100), (1,), "multiply", 1, data(t, (3, 100), 0.97, 1.03))
    red("reduce_add_f16_1d", "f16", (3000,), (0,), "add", 0, data("f16", (3000,), 0, 1))
    # padding of XLA's tree must not use -inf/-0 for types that have none (fn/fnuz f8)
    red("reduce_max_f8e4m3fn_pad", "f8e4m3fn", (3, 100), (1,), "maximum", "-448", data("f8e4m3fn", (3, 100), -400, -1))
    red("reduce_min_f8e4m3fnuz_pad", "f8e4m3fnuz", (3, 100), (1,), "minimum", "240",
        data("f8e4m3fnuz", (3, 100), 1, 200))
    red("reduce_add_f8e5m2fnuz_pad", "f8e5m2fnuz", (3, 100), (1,), "add", "0", data("f8e5m2fnuz", (3, 100), -1, 1))
    red("reduce_max_f32_signed_zeros", "f32", (4,), (0,), "maximum", "-inf",
        np.array([-0.0, 0.0, -0.0, -1], np.float32))
    red("reduce_min_f32_signed_zeros", "f32", (4,), (0,), "minimum", "inf", np.array([0.0, -0.0, 0.0, 1], np.float32))
    red("reduce_add_f16_rows", "f16", (7, 300), (1,), "add", 0, data("f16", (7, 300), 0, 1))
    red("reduce_add_bf16_100000", "bf16", (100000,), (0,), "add", 0, np.ones(100000, BF))
    red("reduce_no_dims", "s32", (3, 4), (), "add", 10)
    red("reduce_empty_dim", "f32", (0, 4), (0,), "add", "-0")
    red("reduce_all_dims_s32", "s32", (3, 4, 5), (0, 1, 2), "add", 0)
    red("reduce_nonidentity_init", "s32", (4, 40), (1,), "add", 1000)
    # XLA's normalized form: f32 reducer that rounds through bf16 at every step
    add("reduce_rounding_form", "f {\n a = f32[] parameter(0)\n b = f32[] parameter(1)\n c = f32[] add(a, b)\n"
        " d = bf16[] convert(c)\n ROOT e = f32[] convert(d)\n}\n"
        "ENTRY e {\n x = bf16[4,300] parameter(0)\n y = f32[4,300] convert(x)\n z = f32[] constant(0)\n"
        " ROOT r = f32[4] reduce(y, z), dimensions={1}, to_apply=f\n}", data("bf16", (4, 300), 0, 1))
    # variadic
    add("reduce_variadic_add_max", "f {\n a = f32[] parameter(0)\n b = s32[] parameter(1)\n c = f32[] parameter(2)\n"
        " d = s32[] parameter(3)\n s = f32[] add(a, c)\n m = s32[] maximum(b, d)\n"
        " ROOT t = (f32[], s32[]) tuple(s, m)\n}\n"
        "ENTRY e {\n x = f32[3,20] parameter(0)\n y = s32[3,20] parameter(1)\n z = f32[] constant(0)\n"
        " w = s32[] constant(-2147483648)\n"
        " ROOT r = (f32[3], s32[3]) reduce(x, y, z, w), dimensions={1}, to_apply=f\n}",
        data("f32", (3, 20)), data("s32", (3, 20)))
    add("reduce_variadic_add_add_long", "f {\n a = f32[] parameter(0)\n b = f32[] parameter(1)\n"
        " c = f32[] parameter(2)\n"
        " d = f32[] parameter(3)\n s = f32[] add(a, c)\n m = f32[] add(b, d)\n ROOT t = (f32[], f32[]) tuple(s, m)\n}\n"
        "ENTRY e {\n x = f32[3,500] parameter(0)\n y = f32[3,500] parameter(1)\n z = f32[] constant(0)\n"
        " ROOT r = (f32[3], f32[3]) reduce(x, y, z, z), dimensions={1}, to_apply=f\n}",
        data("f32", (3, 500)), data("f32", (3, 500)))
    for t, d, dims, rdim in (("f32", "GT", (4, 300), 1), ("s32", "LT", (5, 40), 1), ("bf16", "GT", (3, 1000), 1),
                             ("f32", "GT", (600, 3), 0), ("f32", "GT", (2, 7, 9), 2)):
        x = data(t, dims, -4, 4) if t != "s32" else rs.randint(-5, 5, size=dims).astype(np.int32)
        if t == "f32":
            x = np.round(x)  # ties
            x.flat[5] = np.nan
        k = np.broadcast_to(np.arange(dims[rdim], dtype=np.int32).reshape(
            [-1 if i == rdim else 1 for i in range(len(dims))]), dims).copy()
        out = [n for i, n in enumerate(dims) if i != rdim]
        init = "-inf" if d == "GT" and t != "s32" else ("2147483647" if t == "s32" else "inf")
        add(f"reduce_arg{'max' if d == 'GT' else 'min'}_{t}_{'x'.join(map(str, dims))}", _ARGMAX.format(t=t, d=d) +
            f"ENTRY e {{\n x = {_shape(t, dims)} parameter(0)\n k = {_shape('s32', dims)} parameter(1)\n"
            f" z = {t}[] constant({init})\n m = s32[] constant(-1)\n"
            f" ROOT r = ({_shape(t, out)}, {_shape('s32', out)}) reduce(x, k, z, m), dimensions={{{rdim}}}, "
            f"to_apply=argmax\n}}", x, k)
    # map
    add("map_fma", "f {\n a = f32[] parameter(0)\n b = f32[] parameter(1)\n c = f32[] constant(2)\n"
        " m = f32[] multiply(a, c)\n ROOT s = f32[] add(m, b)\n}\n"
        "ENTRY e {\n x = f32[4,5] parameter(0)\n y = f32[4,5] parameter(1)\n"
        " ROOT r = f32[4,5] map(x, y), dimensions={0,1}, to_apply=f\n}", data("f32", (4, 5)), data("f32", (4, 5)))
    add("map_convert_s32_to_bf16", "f {\n a = s32[] parameter(0)\n ROOT c = bf16[] convert(a)\n}\n"
        "ENTRY e {\n x = s32[300] parameter(0)\n ROOT r = bf16[300] map(x), dimensions={0}, to_apply=f\n}",
        rs.randint(-100000, 100000, 300).astype(np.int32))
    add("map_compare_select", "f {\n a = s8[] parameter(0)\n b = s8[] parameter(1)\n p = pred[] compare(a, b), "
        "direction=GT\n d = s8[] subtract(a, b)\n e = s8[] subtract(b, a)\n ROOT s = s8[] select(p, d, e)\n}\n"
        "ENTRY e {\n x = s8[50] parameter(0)\n y = s8[50] parameter(1)\n"
        " ROOT r = s8[50] map(x, y), dimensions={0}, to_apply=f\n}", data("s8", (50,)), data("s8", (50,)))

    # computations that are not elementwise: per-element calls
    add("map_not_elementwise", "f {\n a = f32[] parameter(0)\n r = f32[1] reshape(a)\n b = f32[1,2] broadcast(r), "
        "dimensions={0}\n s = f32[1,1] slice(b), slice={[0:1], [1:2]}\n t = f32[] reshape(s)\n"
        " ROOT m = f32[] multiply(t, a)\n}\n"
        "ENTRY e {\n x = f32[3,4] parameter(0)\n ROOT r = f32[3,4] map(x), dimensions={0,1}, to_apply=f\n}",
        data("f32", (3, 4)))
    add("reduce_not_elementwise", "f {\n a = s32[] parameter(0)\n b = s32[] parameter(1)\n r = s32[1] reshape(b)\n"
        " t = s32[] reshape(r)\n c = s32[] constant(3)\n m = s32[] multiply(a, c)\n ROOT s = s32[] add(m, t)\n}\n"
        "ENTRY e {\n x = s32[4,6] parameter(0)\n z = s32[] constant(1)\n"
        " ROOT r = s32[4] reduce(x, z), dimensions={1}, to_apply=f\n}", rs.randint(-9, 9, (4, 6)).astype(np.int32))
    add("reduce_sub_sequential", "f {\n a = s32[] parameter(0)\n b = s32[] parameter(1)\n"
        " ROOT s = s32[] subtract(a, b)\n}\n"
        "ENTRY e {\n x = s32[3,20] parameter(0)\n z = s32[] constant(100)\n"
        " ROOT r = s32[3] reduce(x, z), dimensions={1}, to_apply=f\n}", rs.randint(-9, 9, (3, 20)).astype(np.int32))

    # dot
    def dot(name, lt, ldims, rt, rdims, ot, odims, attrs, a=None, b=None, lo=-3, hi=3):
        add(name, f"ENTRY e {{\n a = {_shape(lt, ldims)} parameter(0)\n b = {_shape(rt, rdims)} parameter(1)\n"
                  f" ROOT d = {_shape(ot, odims)} dot(a, b){', ' + attrs if attrs else ''}\n}}",
            data(lt, ldims, lo, hi) if a is None else a, data(rt, rdims, lo, hi) if b is None else b)

    mm = "lhs_contracting_dims={1}, rhs_contracting_dims={0}"
    dot("dot_matmul_f32_tol", "f32", (8, 300), "f32", (300, 12), "f32", (8, 12), mm)
    dot("dot_matmul_f32_small", "f32", (3, 4), "f32", (4, 5), "f32", (3, 5), mm,
        rs.randint(-8, 8, (3, 4)).astype(np.float32), rs.randint(-8, 8, (4, 5)).astype(np.float32))
    dot("dot_f64_tol", "f64", (5, 50), "f64", (50, 6), "f64", (5, 6), mm)
    dot("dot_vec_vec_tol", "f32", (100,), "f32", (100,), "f32", (),
        "lhs_contracting_dims={0}, rhs_contracting_dims={0}")
    dot("dot_mat_vec_tol", "f32", (7, 100), "f32", (100,), "f32", (7,), mm)
    dot("dot_batch_tol", "f32", (2, 3, 4, 40), "f32", (2, 3, 40, 5), "f32", (2, 3, 4, 5),
        "lhs_batch_dims={0,1}, lhs_contracting_dims={3}, rhs_batch_dims={0,1}, rhs_contracting_dims={2}")
    dot("dot_batch_not_leading_tol", "f32", (4, 2, 30), "f32", (30, 5, 2), "f32", (2, 4, 5),
        "lhs_batch_dims={1}, lhs_contracting_dims={2}, rhs_batch_dims={2}, rhs_contracting_dims={0}")
    dot("dot_multi_contract_tol", "f32", (3, 4, 5, 6), "f32", (6, 7, 4), "f32", (3, 5, 7),
        "lhs_contracting_dims={1,3}, rhs_contracting_dims={2,0}")
    dot("dot_rhs_transposed_tol", "f32", (8, 64), "f32", (10, 64), "f32", (8, 10),
        "lhs_contracting_dims={1}, rhs_contracting_dims={1}")
    dot("dot_outer", "s32", (3,), "s32", (4,), "s32", (3, 4), "")
    dot("dot_precision_tol", "f32", (4, 64), "f32", (64, 3), "f32", (4, 3),
        mm + ", operand_precision={highest,highest}")
    dot("dot_algorithm_tol", "f32", (4, 64), "f32", (64, 3), "f32", (4, 3), mm + ", algorithm=dot_bf16_bf16_f32")
    for t in ("bf16", "f16", "f8e4m3fn", "f8e5m2"):
        dot(f"dot_{t}", t, (6, 64), t, (64, 5), t, (6, 5), mm)
        dot(f"dot_{t}_to_f32_tol", t, (6, 64), t, (64, 5), "f32", (6, 5), mm)
    dot("dot_bf16_f32_mixed_tol", "bf16", (6, 64), "f32", (64, 5), "f32", (6, 5), mm)
    dot("dot_s8_s32", "s8", (6, 300), "s8", (300, 5), "s32", (6, 5), mm)
    dot("dot_s8_s8_wrap", "s8", (6, 300), "s8", (300, 5), "s8", (6, 5), mm)
    dot("dot_s32_wrap", "s32", (4, 50), "s32", (50, 3), "s32", (4, 3), mm)
    dot("dot_s64_wrap", "s64", (4, 50), "s64", (50, 3), "s64", (4, 3), mm)
    dot("dot_u8", "u8", (4, 50), "u8", (50, 3), "u8", (4, 3), mm)
    dot("dot_u32", "u32", (4, 50), "u32", (50, 3), "u32", (4, 3), mm)
    dot("dot_s16_u8_mixed_s32", "s16", (4, 20), "u8", (20, 3), "s32", (4, 3), mm)
    dot("dot_s8_f32", "s8", (4, 20), "s8", (20, 3), "f32", (4, 3), mm)
    dot("dot_pred", "pred", (5, 8), "pred", (8, 4), "pred", (5, 4), mm)
    dot("dot_c64_tol", "c64", (4, 30), "c64", (30, 3), "c64", (4, 3), mm)
    dot("dot_c128_tol", "c128", (4, 30), "c128", (30, 3), "c128", (4, 3), mm)
    dot("dot_empty_contract", "f32", (3, 0), "f32", (0, 2), "f32", (3, 2), mm)
    x = data("f32", (3, 4))
    x[1, 2] = np.nan
    x[0, 0] = np.inf
    dot("dot_nan_inf", "f32", (3, 4), "f32", (4, 2), "f32", (3, 2), mm, x,
        rs.randint(-3, 3, (4, 2)).astype(np.float32))
    return C


if __name__ == "__main__":
    regenerate(_cases(), DATA)
