"""Regression cases where hlo-run once differed from XLA:CPU, with XLA:CPU-computed expected values
(tests/golden/xla_regressions/, written by tools/oracle/families/xla_regressions.py and run by
tests/test_golden.py), plus the checks no data file holds."""
from __future__ import annotations

import numpy as np
import pytest

import hlo_interp
from casedata import cases

CASES = cases("xla_regressions")  # run by tests/test_golden.py


def test_cases_cover_the_items():
    assert {8, 13, 19, 20, 22} <= {c.info["item"] for c in CASES}


# --------------------------------------------------------------------------------------------------
# What XLA:CPU cannot give a reproducible value for

def test_allocate_buffer_is_zeros():
    # XLA leaves the buffer uninitialized (XLA:CPU refuses AllocateBuffer at the entry): zeros here
    text = """HloModule m
ENTRY e { p = f32[2,3] parameter(0)  b = f32[2,3] custom-call(), custom_call_target="AllocateBuffer"
  ROOT r = f32[2,3] add(b, p) }"""
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    np.testing.assert_array_equal(hlo_interp.run(text, x)[0], x)


def test_get_rng_seed_is_u64_and_advances():
    # XLA:CPU returns another u64 on every execution; ours comes from the module's rng counter
    m = hlo_interp.parse("""HloModule m
ENTRY e { ROOT r = u64[] custom-call(), custom_call_target="GetRngSeed" }""")
    a = hlo_interp.run(m)[0]
    b = hlo_interp.run(m)[0]
    assert a.dtype == np.uint64 and a.shape == () and a != b


# XLA:CPU returns an entry's dynamic result as its bound-sized buffer (f32[<=4] of size 1 -> f32[4]);
# past the dynamic size the buffer holds whatever it held (XLA:CPU gave 4.589533e-41, 4.538676e-10, ...
# in one run): the valid prefix is XLA's, the rest zeros here.
@pytest.mark.parametrize("n,want", [(1, [1.0]), (3, [1.0, 2.0, 3.0]), (0, [])])
def test_dynamic_root_is_the_padded_buffer(n, want):
    text = """HloModule m
ENTRY e { p = f32[4] parameter(0)  n = s32[] parameter(1)
  ROOT r = f32[<=4] set-dimension-size(p, n), dimensions={0} }"""
    (out,) = hlo_interp.run(text, np.arange(1, 5, dtype=np.float32), np.int32(n))
    assert out.shape == (4,)
    np.testing.assert_array_equal(out[:n], np.array(want, np.float32))
    np.testing.assert_array_equal(out[n:], 0)


def test_dynamic_root_in_a_tuple_and_after_an_op():
    text = """HloModule m
ENTRY e { p = f32[4,3] parameter(0)  n = s32[] parameter(1)
  d = f32[<=4,3] set-dimension-size(p, n), dimensions={0}
  g = f32[<=4,3] negate(d)
  ROOT t = (f32[<=4,3], s32[]) tuple(g, n) }"""
    x = np.arange(12, dtype=np.float32).reshape(4, 3)
    out, size = hlo_interp.run(text, x, np.int32(3))
    assert out.shape == (4, 3) and size == 3  # XLA:CPU: f32[4,3], its first 3 rows -x
    np.testing.assert_array_equal(out[:3], -x[:3])


def test_check_warns_on_a_non_identity_init():
    from hlo_interp.shapes.verify import check
    text = """HloModule m
add { a = f32[] parameter(0)  b = f32[] parameter(1)  ROOT s = f32[] add(a, b) }
mx { a = f32[] parameter(0)  b = f32[] parameter(1)  ROOT s = f32[] maximum(a, b) }
ENTRY e {
  p = f32[2,1051] parameter(0)
  i = f32[] constant(0.5)
  z = f32[] constant(0)
  r = f32[2] reduce(p, i), dimensions={1}, to_apply=add
  s = f32[2] reduce(p, z), dimensions={1}, to_apply=add
  ROOT m = f32[2] reduce(p, i), dimensions={1}, to_apply=mx
}"""
    found = [(f.code, f.severity, f.line, f.column) for f in check(hlo_interp.parse(text))]
    assert found == [("W110", "warning", 8, 24)]  # at the init operand  # max with 0.5 is harmless: any count gives one value


def test_unrecognized_comparators_run_on_arrays():
    """Item 24: comparators with `call`s, tuples and get-tuple-element inside are evaluated on whole
    arrays (the vectorized merge sort), not one comparison at a time."""
    from hlo_interp.ops.sort import ComparatorSort
    for case in CASES:
        if case.info["item"] != 24:
            continue
        m = hlo_interp.parse(case.text())
        calls = []
        import hlo_interp.ops.sort as sort_mod
        orig = sort_mod.ComparatorSort.scalar_order
        sort_mod.ComparatorSort.scalar_order = lambda self, flat: calls.append(1) or orig(self, flat)
        try:
            hlo_interp.run(m, *case.inputs)
        finally:
            sort_mod.ComparatorSort.scalar_order = orig
        assert not calls, case.id
    assert ComparatorSort is not None
