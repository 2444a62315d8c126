"""get-/set-dimension-size, dynamic-reshape and dynamic sizes through other ops: XLA:CPU cases in
tests/golden/dynamic_shape/ (tools/make_misc_vectors.py, run by tests/test_golden.py), the spec's worked
example EX-36, error cases (ops XLA's dynamic dimension inference has no rule for)."""
from __future__ import annotations

import numpy as np
import pytest

import hlo_interp
from hlo_interp.diagnostics import HloError
from casedata import cases

CASES = cases("dynamic_shape")  # run by tests/test_golden.py


def test_cases_cover_the_ops():
    before = "".join(c.text("before") for c in CASES)
    for op in ("get-dimension-size(", "set-dimension-size(", "dynamic-reshape("):
        assert op in before, op


# --------------------------------------------------------------------------------------------------
# Worked examples and independent formulas


def _run1(text, *args):
    return hlo_interp.run(text, *args)


EX36 = """HloModule ex36
add {{ a = f32[] parameter(0)  b = f32[] parameter(1)  ROOT s = f32[] {op}(a, b) }}
ENTRY e {{
  v = f32[10] parameter(0)
  n = s32[] parameter(1)
  d = f32[<=10] set-dimension-size(v, n), dimensions={{0}}
  i = f32[] constant({init})
  ROOT r = f32[] reduce(d, i), dimensions={{0}}, to_apply=add
}}"""


@pytest.mark.parametrize("op,init,n,want", [("add", 0, 5, 15), ("multiply", 1, 5, 120), ("add", 0, 6, 21)])
def test_ex36_set_dimension_size_reduce(op, init, n, want):
    v = np.arange(1, 11, dtype=np.float32)
    got = _run1(EX36.format(op=op, init=init), v, np.int32(n))[0]
    assert got == np.float32(want)


def test_dynamic_sizes_flow_through():
    text = """HloModule m
ENTRY e {
  p = f32[<=6,4] parameter(0)
  n = s32[] parameter(1)
  a = s32[] get-dimension-size(p), dimensions={0}
  b = s32[] get-dimension-size(p), dimensions={1}
  d = f32[<=6,4] set-dimension-size(p, n), dimensions={0}
  c = s32[] get-dimension-size(d), dimensions={0}
  r = f32[<=24] dynamic-reshape(d, s), dimensions={}
  ROOT t = (s32[], s32[], s32[], f32[<=6,4]) tuple(a, b, c, d)
}""".replace("  r = f32[<=24] dynamic-reshape(d, s), dimensions={}\n", "")
    x = np.arange(20, dtype=np.float32).reshape(5, 4)  # dynamic size 5 of bound 6
    a, b, c, d = _run1(text, x, np.int32(3))
    assert (a, b, c) == (5, 4, 3)
    # XLA:CPU's output convention: a dynamic entry result is its bound-sized buffer (rows past the
    # dynamic size undefined in XLA, zeros here)
    assert d.shape == (6, 4)
    np.testing.assert_array_equal(d[:3], x[:3])


def test_dynamic_reshape_values_and_errors():
    text = """HloModule m
ENTRY e {
  p = s32[2,6] parameter(0)
  a = s32[] parameter(1)
  b = s32[] parameter(2)
  ROOT r = s32[<=4,<=12] dynamic-reshape(p, a, b)
}""".replace("<=4,<=12", "<=12,<=1")
    x = np.arange(12, dtype=np.int32).reshape(2, 6)
    np.testing.assert_array_equal(_run1(text, x, np.int32(12), np.int32(1))[0], x.reshape(12, 1))
    with pytest.raises(HloError, match=r"sizes \[6, 1\] hold 6 elements.*has 12") as e:
        _run1(text, x, np.int32(6), np.int32(1))
    assert ":6:" in str(e.value)  # located at the dynamic-reshape line
    with pytest.raises(HloError, match="size 2 for result dimension 1"):
        _run1(text, x, np.int32(6), np.int32(2))
    bad = text.replace("<=12,<=1", "<=8,3")
    with pytest.raises(HloError, match="XLA requires equal static sizes"):
        _run1(bad, x, np.int32(4), np.int32(3))


@pytest.mark.parametrize("n", [9, -1])
def test_set_dimension_size_out_of_range_refused(n):
    # XLA:CPU keeps such a size (get-dimension-size returns it, reductions clamp): not representable
    text = """HloModule m
ENTRY e {
  p = f32[8] parameter(0)
  n = s32[] parameter(1)
  ROOT d = f32[<=8] set-dimension-size(p, n), dimensions={0}
}"""
    with pytest.raises(HloError, match="unsupported opcode 'set-dimension-size'.*outside"):
        _run1(text, np.ones(8, np.float32), np.int32(n))


def test_get_dimension_size_bad_dimension():
    text = """HloModule m
ENTRY e {
  p = f32[8] parameter(0)
  ROOT d = s32[] get-dimension-size(p), dimensions={1}
}"""
    with pytest.raises(HloError, match="dimension 1 is out of range"):
        _run1(text, np.ones(8, np.float32))


# --------------------------------------------------------------------------------------------------
# What XLA's dynamic dimension inference has no rule for is a located error, never a silent answer

_DYN_ERR = """HloModule m
add {{ a = f32[] parameter(0)  b = f32[] parameter(1)  ROOT s = f32[] add(a, b) }}
lt {{ a = f32[] parameter(0)  b = f32[] parameter(1)  ROOT c = pred[] compare(a, b), direction=LT }}
ENTRY e {{
  p = f32[4,3] parameter(0)
  n = s32[] parameter(1)
  d = f32[<=4,3] set-dimension-size(p, n), dimensions={{0}}
  z = f32[] constant(0)
  {body}
}}"""


@pytest.mark.parametrize("body,match", [
    # XLA:CPU refuses these too ("Asked to propagate a dynamic dimension ... which is not implemented")
    ("ROOT r = f32[<=4,3] all-reduce(d), to_apply=add", r"unsupported opcode 'all-reduce'.*operand 0 "
                                                         r"\(f32\[<=4,3\]\) has a dynamic dimension"),
    ("ROOT r = f32[3,<=4] bitcast(d)", "unsupported opcode 'bitcast'"),
    ("i = s32[] constant(0)\n  ROOT r = f32[<=4,2] dynamic-slice(d, i, i), dynamic_slice_sizes={3,2}",
     "a slice of 3 of the dynamic dimension 0"),
    ("k = f32[2,3] parameter(2)\n  d3 = f32[<=4,3,1] reshape(d)\n  k3 = f32[2,1,1] broadcast(z), dimensions={}\n"
     "  ROOT r = f32[<=3,3,1] convolution(d3, k3), window={size=2}, dim_labels=0bf_0io->0bf",
     "dynamic operand dimension 0"),
    ("s = f32[2,3] parameter(2)\n  ROOT r = f32[<=4,3] select-and-scatter(d, s, z), window={size=2x1 stride=2x1}, "
     "select=lt, scatter=add", "select other than compare"),
])
def test_unmodelled_dynamic_operands_are_located_errors(body, match):
    text = _DYN_ERR.format(body=body)
    args = [np.ones((4, 3), np.float32), np.int32(2)]
    if "parameter(2)" in body:
        args.append(np.ones((2, 3), np.float32))
    with pytest.raises(HloError, match=match) as e:
        _run1(text, *args)
    assert f":{8 + body.count(chr(10)) + 1}:" in str(e.value)  # at the instruction's line


def test_negative_window_size_refused():
    # XLA:CPU crashes on it (a reduce-window of a size-0 dimension with a window of 2 gives size -1)
    text = _DYN_ERR.format(body="ROOT r = f32[<=3,3] reduce-window(d, z), window={size=2x1}, to_apply=add")
    _run1(text, np.ones((4, 3), np.float32), np.int32(1))  # size 0: fine
    with pytest.raises(HloError, match="makes a dynamic size negative"):
        _run1(text, np.ones((4, 3), np.float32), np.int32(0))
