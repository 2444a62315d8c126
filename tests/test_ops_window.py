"""convolution, reduce-window, select-and-scatter: XLA:CPU-computed cases (tests/golden/window/, run by tests/test_golden.py; written
by tools/oracle/families/window.py), before and after optimization, plus the operation-semantics documents' worked examples,
fast-path vs general-path agreement and error cases."""
from __future__ import annotations

import numpy as np
import pytest

import hlo_interp
from hlo_interp.diagnostics import HloError
from casedata import cases

CASES = cases("window")  # run by tests/test_golden.py


def test_cases_cover_the_ops():
    text = "".join(c.text("before") + c.text("after") for c in CASES)
    for op in ("convolution(", "reduce-window(", "select-and-scatter("):
        assert op in text
    assert len(CASES) >= 70
    # the optimized modules hold the ops too (not only fusions of something else)
    after = "".join(c.text("after") for c in CASES)
    assert "reduce-window(" in after and "convolution(" in after


# --------------------------------------------------------------------------------------------------
# The operation-semantics documents' worked examples

ADD_S32 = "add { a = s32[] parameter(0)  b = s32[] parameter(1)  ROOT s = s32[] add(a, b) }"
ADD_F32 = "add { a = f32[] parameter(0)  b = f32[] parameter(1)  ROOT s = f32[] add(a, b) }"
MIN_F32 = "mn { a = f32[] parameter(0)  b = f32[] parameter(1)  ROOT s = f32[] minimum(a, b) }"
MAX_F32 = "mx { a = f32[] parameter(0)  b = f32[] parameter(1)  ROOT s = f32[] maximum(a, b) }"
GE_F32 = "ge { a = f32[] parameter(0)  b = f32[] parameter(1)  ROOT c = pred[] compare(a, b), direction=GE }"


def module(comps, entry):
    return "HloModule m\n" + "\n".join(comps) + "\nENTRY e {\n" + entry + "\n}\n"


@pytest.mark.parametrize("win,out,want", [
    ("size=3 stride=2", 2, [100, 1]),              # EX-33 VALID
    ("size=3 stride=2 pad=1_1", 3, [1000, 10, 1]),  # EX-33 SAME
])
def test_ex33_reduce_window_min(win, out, want):
    text = module([MIN_F32], f"""  x = f32[5] parameter(0)
  i = f32[] constant(3.40282347e+38)
  ROOT r = f32[{out}] reduce-window(x, i), window={{{win}}}, to_apply=mn""")
    got = hlo_interp.run(text, np.array([10000, 1000, 100, 10, 1], np.float32))[0]
    np.testing.assert_array_equal(got, np.array(want, np.float32))


def test_ex34_reduce_window_base_and_window_dilation():
    text = module([ADD_S32], """  x = s32[3,2] parameter(0)
  z = s32[] constant(0)
  ROOT r = s32[2,2] reduce-window(x, z), window={size=2x1 stride=4x1 pad=2_1x0_0 lhs_dilate=2x1 rhs_dilate=3x1}, to_apply=add""")
    got = hlo_interp.run(text, np.array([[1, 2], [3, 4], [5, 6]], np.int32))[0]
    np.testing.assert_array_equal(got, [[0, 0], [3, 4]])


EX37_OP1 = np.array([[7, 2, 5, 3, 10, 2], [3, 8, 9, 3, 4, 2], [1, 5, 7, 5, 6, 1], [0, 6, 2, 7, 2, 8]], np.float32)
EX37_OP2 = np.array([[7, 2, 5, 3, 8], [3, 8, 9, 3, 4], [1, 5, 7, 5, 6], [0, 6, 2, 10, 2]], np.float32)
EX37_SRC = np.array([[2, 6], [3, 1]], np.float32)


def test_ex35_reduce_window_max():
    text = module([MAX_F32], """  x = f32[4,6] parameter(0)
  i = f32[] constant(-inf)
  ROOT r = f32[2,2] reduce-window(x, i), window={size=2x3 stride=2x3}, to_apply=mx""")
    np.testing.assert_array_equal(hlo_interp.run(text, EX37_OP1)[0], [[9, 10], [7, 8]])


@pytest.mark.parametrize("op,shape,stride,want", [
    (EX37_OP1, "4,6", "2x3", [[0, 0, 0, 0, 6, 0], [0, 0, 2, 0, 0, 0], [0, 0, 3, 0, 0, 0], [0, 0, 0, 0, 0, 1]]),
    (EX37_OP2, "4,5", "2x2", [[0, 0, 0, 0, 0], [0, 0, 8, 0, 0], [0, 0, 3, 0, 0], [0, 0, 0, 1, 0]]),
])
def test_ex37_select_and_scatter(op, shape, stride, want):
    text = module([GE_F32, ADD_F32], f"""  x = f32[{shape}] parameter(0)
  s = f32[2,2] parameter(1)
  z = f32[] constant(0)
  ROOT r = f32[{shape}] select-and-scatter(x, s, z), window={{size=2x3 stride={stride}}}, select=ge, scatter=add""")
    np.testing.assert_array_equal(hlo_interp.run(text, op, EX37_SRC)[0], np.array(want, np.float32))


def test_conv_reference_pseudocode():
    """EX-28: convolution = a sum over windows (direct loops, NumPy reference), with strides, padding,
    both dilations, feature groups and an unusual dim_labels order."""
    rng = np.random.default_rng(0)
    x = rng.integers(-3, 4, (2, 4, 7, 6)).astype(np.float32)       # b f 0 1
    w = rng.integers(-3, 4, (6, 2, 3, 2)).astype(np.float32)       # o i 0 1, feature_group_count=2
    text = module([], """  x = f32[2,4,7,6] parameter(0)
  w = f32[6,2,3,2] parameter(1)
  ROOT c = f32[2,6,3,6] convolution(x, w), window={size=3x2 stride=2x2 pad=1_2x0_1 lhs_dilate=1x2 rhs_dilate=2x1}, dim_labels=bf01_oi01->bf01, feature_group_count=2""")
    got = hlo_interp.run(text, x, w)[0]
    # reference: explicit loops over output and window positions, skipping padding and holes
    want = np.zeros((2, 6, 3, 6), np.float32)
    for b, o, p, q in np.ndindex(*want.shape):
        g = o // 3
        for i, ky, kx in np.ndindex(2, 3, 2):
            yd = p * 2 + ky * 2 - 1        # position in the (dilated) base, padding removed
            xd = q * 2 + kx - 0
            if not (0 <= yd < 7) or xd % 2 or not (0 <= xd // 2 < 6):
                continue
            want[b, o, p, q] += x[b, g * 2 + i, yd, xd // 2] * w[o, i, ky, kx]
    np.testing.assert_array_equal(got, want)


# --------------------------------------------------------------------------------------------------
# fast paths and general paths agree

ADD_COPY = "addc { a = f32[] parameter(0)  b = f32[] parameter(1)  s = f32[] add(a, b)  ROOT c = f32[] copy(s) }"
MAX_COPY = "mxc { a = f32[] parameter(0)  b = f32[] parameter(1)  s = f32[] maximum(a, b)  ROOT c = f32[] copy(s) }"
GE_COPY = "gec { a = f32[] parameter(0)  b = f32[] parameter(1)  c = pred[] compare(a, b), direction=GE  ROOT r = pred[] copy(c) }"


@pytest.mark.parametrize("fast,slow,init", [("add", "addc", "0"), ("mx", "mxc", "-inf"), ("add", "addc", "2.5")])
def test_reduce_window_general_path_agrees(fast, slow, init):
    rng = np.random.default_rng(1)
    x = rng.standard_normal((9, 8)).astype(np.float32)
    x[1, 1] = np.nan
    res = []
    for name in (fast, slow):
        text = module([ADD_F32, MAX_F32, ADD_COPY, MAX_COPY], f"""  x = f32[9,8] parameter(0)
  i = f32[] constant({init})
  ROOT r = f32[5,5] reduce-window(x, i), window={{size=3x2 stride=2x2 pad=1_1x1_2 lhs_dilate=1x1 rhs_dilate=1x2}}, to_apply={name}""")
        res.append(hlo_interp.run(text, x)[0])
    np.testing.assert_array_equal(res[0], res[1])   # same order: bit-identical, NaN included
    assert np.isnan(res[0][0, 0])


def test_select_and_scatter_general_path_agrees():
    rng = np.random.default_rng(2)
    x = rng.integers(0, 3, (7, 9)).astype(np.float32)    # many ties
    s = rng.standard_normal((4, 4)).astype(np.float32)
    res = []
    for sel, sc in (("ge", "add"), ("gec", "addc")):
        text = module([GE_F32, ADD_F32, GE_COPY, ADD_COPY], f"""  x = f32[7,9] parameter(0)
  s = f32[4,4] parameter(1)
  z = f32[] constant(0.5)
  ROOT r = f32[7,9] select-and-scatter(x, s, z), window={{size=3x3 stride=2x2 pad=1_1x0_0}}, select={sel}, scatter={sc}""")
        res.append(hlo_interp.run(text, x, s)[0])
    np.testing.assert_array_equal(res[0], res[1])
    # every source value lands somewhere: the total is preserved
    assert np.isclose(res[0].sum() - 0.5 * x.size, s.sum(), rtol=1e-5)


def test_select_and_scatter_many_collisions_ufunc_at():
    """A window far larger than its stride: every window picks the same maximum; ufunc.at path."""
    x = np.zeros(40, np.float32)
    x[20] = 1
    s = np.arange(1, 33, dtype=np.float32)
    text = module([GE_F32, ADD_F32], """  x = f32[40] parameter(0)
  s = f32[32] parameter(1)
  z = f32[] constant(0)
  ROOT r = f32[40] select-and-scatter(x, s, z), window={size=9}, select=ge, scatter=add""")
    got = hlo_interp.run(text, x, s)[0]
    want = np.zeros(40, np.float32)
    for k in range(32):              # window k covers x[k:k+9]; the first maximum in it
        win = x[k:k + 9]
        want[k + int(np.argmax(win))] += s[k]
    np.testing.assert_array_equal(got, want)


def test_variadic_reduce_window_argmax_general():
    text = module(["""am {
  av = f32[] parameter(0)  ai = s32[] parameter(1)  bv = f32[] parameter(2)  bi = s32[] parameter(3)
  gt = pred[] compare(av, bv), direction=GT
  ROOT t = (f32[], s32[]) tuple(f32[] select(gt, av, bv), s32[] select(gt, ai, bi))
}"""], """  x = f32[6] parameter(0)
  i = s32[6] iota(), iota_dimension=0
  a = f32[] constant(-inf)
  b = s32[] constant(-1)
  ROOT r = (f32[3], s32[3]) reduce-window(x, i, a, b), window={size=3 stride=2 pad=1_0}, to_apply=am""")
    v, i = hlo_interp.run(text, np.array([3, 9, 2, 7, 7, 1], np.float32))
    np.testing.assert_array_equal(v, [9, 9, 7])
    np.testing.assert_array_equal(i, [1, 1, 4])   # ties: the later one (select picks b when not a > b)


# --------------------------------------------------------------------------------------------------
# errors are located HloErrors


@pytest.mark.parametrize("entry,msg", [
    ("""  x = f32[8] parameter(0)
  s = f32[5] parameter(1)
  z = f32[] constant(0)
  ROOT r = f32[8] select-and-scatter(x, s, z), window={size=3 stride=2}, select=ge, scatter=add""",
     "source shape"),
    ("""  x = f32[4,6,2] parameter(0)
  w = f32[3,5,2] parameter(1)
  ROOT c = f32[4,4,2] convolution(x, w), window={size=3}, dim_labels=b0f_0io->b0f""", "feature"),
    ("""  x = f32[4] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[4] reduce-window(x, z), window={size=1 pad=-3_-3}, to_apply=add""", "negative"),
])
def test_errors(entry, msg):
    text = module([GE_F32, ADD_F32], entry)
    args = [np.zeros(8, np.float32), np.zeros(5, np.float32)] if "select" in entry else (
        [np.zeros((4, 6, 2), np.float32), np.zeros((3, 5, 2), np.float32)] if "conv" in entry else [np.zeros(4, np.float32)])
    with pytest.raises(HloError) as e:
        hlo_interp.run(text, *args)
    assert msg in str(e.value)


def test_select_and_scatter_dilation_is_unsupported():
    text = module([GE_F32, ADD_F32], """  x = f32[8] parameter(0)
  s = f32[3] parameter(1)
  z = f32[] constant(0)
  ROOT r = f32[8] select-and-scatter(x, s, z), window={size=2 stride=2 rhs_dilate=2}, select=ge, scatter=add""")
    with pytest.raises(HloError) as e:
        hlo_interp.run(text, np.zeros(8, np.float32), np.zeros(3, np.float32))
    assert "unsupported opcode 'select-and-scatter'" in str(e.value) and "dilation" in str(e.value)


def test_reduce_window_non_elementwise_computation_per_element():
    """A reducer that is not elementwise on arrays (it reshapes its scalars) runs element by element."""
    text = module(["""rs {
  a = f32[] parameter(0)  b = f32[] parameter(1)
  ra = f32[1] reshape(a)  rb = f32[1] reshape(b)
  s = f32[1] add(ra, rb)
  ROOT r = f32[] reshape(s)
}"""], """  x = f32[6] parameter(0)
  z = f32[] constant(1)
  ROOT r = f32[3] reduce-window(x, z), window={size=2 stride=2}, to_apply=rs""")
    got = hlo_interp.run(text, np.arange(6, dtype=np.float32))[0]
    np.testing.assert_array_equal(got, [2, 6, 10])
