"""async wrappers (async-start/-update/-done, `<op>-start/-done` sugar, copy-start/-done): XLA:CPU cases in
tests/golden/async/ (tools/make_misc_vectors.py, run by tests/test_golden.py), values and errors."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import hlo_interp
from hlo_interp.diagnostics import HloError
from casedata import cases

CASES = cases("async")  # run by tests/test_golden.py


def test_cases_cover_the_ops():
    before = "".join(c.text("before") for c in CASES)
    for op in ("async-start(", "async-update(", "async-done(", "negate-start(", "add-done(", "copy-start(",
               "copy-done("):
        assert op in before, op


# --------------------------------------------------------------------------------------------------
# async wrappers


def test_async_generic_and_sugar_values():
    text = """HloModule m
wrapped {
  a = f32[3] parameter(0)
  b = f32[3] parameter(1)
  ROOT m = f32[3] multiply(a, b)
}
ENTRY e {
  x = f32[3] parameter(0)
  y = f32[3] parameter(1)
  st = ((f32[3], f32[3]), f32[3], s32[]) async-start(x, y), calls=wrapped
  up = ((f32[3], f32[3]), f32[3], s32[]) async-update(st), calls=wrapped
  dn = f32[3] async-done(up), calls=wrapped
  st2 = ((f32[3]), pred[3], u32[], token[]) is-finite-start(dn)
  d2 = pred[3] is-finite-done(st2)
  st3 = ((f32[3], f32[3]), f32[3], u32[]) maximum-start(x, dn)
  d3 = f32[3] maximum-done(st3)
  ROOT t = (f32[3], pred[3], f32[3], ((f32[3], f32[3]), f32[3], s32[])) tuple(dn, d2, d3, up)
}"""
    x = np.array([1, 2, np.inf], np.float32)
    y = np.array([3, -4, 0], np.float32)
    dn, d2, d3, ox, oy, res, ctx = hlo_interp.run(text, x, y)
    np.testing.assert_array_equal(dn, [3, -8, np.nan])
    np.testing.assert_array_equal(d2, [True, True, False])
    np.testing.assert_array_equal(d3, [3, 2, np.nan])
    np.testing.assert_array_equal(ox, x)
    np.testing.assert_array_equal(oy, y)
    np.testing.assert_array_equal(res, dn)
    assert ctx.dtype == np.int32 and ctx == 0


def test_async_wrong_parameter_count():
    text = """HloModule m
wrapped {
  a = f32[3] parameter(0)
  ROOT n = f32[3] negate(a)
}
ENTRY e {
  x = f32[3] parameter(0)
  st = ((f32[3], f32[3]), f32[3], s32[]) async-start(x, x), calls=wrapped
  ROOT dn = f32[3] async-done(st)
}"""
    with pytest.raises(HloError, match="passes 2 operand.*takes 1"):
        hlo_interp.run(text, np.ones(3, np.float32))


def test_async_sugar_of_unsupported_op_is_located():
    text = """HloModule m
ENTRY e {
  x = f32[3] parameter(0)
  st = ((f32[3]), f32[3], s32[]) custom-call-start(x), custom_call_target="no_such_target_xyz"
  ROOT dn = f32[3] custom-call-done(st)
}"""
    with pytest.raises(HloError) as e:
        hlo_interp.run(text, np.ones(3, np.float32))
    assert ":4:" in str(e.value) and "custom-call" in str(e.value)


def test_copy_start_done_corpus_file():
    text = (Path(__file__).parent / "corpus" / "handwritten" / "copy_start_done.hlo").read_text()
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    a, b = hlo_interp.run(text, np.float32(-2.5), x)
    assert a == np.float32(-2.5)
    np.testing.assert_array_equal(b, x)
