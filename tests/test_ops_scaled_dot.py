"""scaled-dot: XLA:CPU cases in tests/golden/scaled_dot/ (each case's `ref` is the decomposition XLA ran;
tools/make_scaled_dot_vectors.py), run by tests/test_golden.py; worked example and refusals."""
from __future__ import annotations


import numpy as np
import pytest

import hlo_interp
from hlo_interp import HloError

from casedata import cases



# --------------------------------------------------------------------------------------------------
# scaled-dot

SCALED = cases("scaled_dot")  # run by tests/test_golden.py


@pytest.mark.parametrize("case", [pytest.param(c, id=c.short) for c in SCALED])
def test_scaled_dot_decomposition_xla_ran(case):
    """The decomposed module XLA:CPU ran (case.json's `ref`) gives XLA's values through hlo_interp too."""
    case.check(hlo_interp.run(case.info["ref"], *case.inputs), "before")


def test_scaled_dot_worked_example_and_refusals():
    # lhs [1, 2, 3, 4] with block scales [10, 100] (blocks of 2), rhs [1, 1, 1, 1] with scalar scale 0.5:
    # (1*10 + 2*10 + 3*100 + 4*100) * 0.5 = 365
    text = """HloModule m
ENTRY e {
  a = f32[1,4] parameter(0)
  b = f32[4,1] parameter(1)
  sa = f32[1,2] parameter(2)
  sb = f32[] parameter(3)
  ROOT d = f32[1,1] scaled-dot(a, b, sa, sb), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}"""
    (r,) = hlo_interp.run(text, np.array([[1, 2, 3, 4]], np.float32), np.ones((4, 1), np.float32),
                          np.array([[10, 100]], np.float32), np.float32(0.5))
    assert r[0, 0] == 365
    with pytest.raises(HloError, match="does not divide"):
        hlo_interp.run(text.replace("sa = f32[1,2]", "sa = f32[1,3]"), np.zeros((1, 4), np.float32),
                       np.zeros((4, 1), np.float32), np.zeros((1, 3), np.float32), np.float32(1))
