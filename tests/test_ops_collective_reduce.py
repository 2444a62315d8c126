"""collective-reduce (XLA:GPU only in XLA; hand-derived from its semantics)."""
from __future__ import annotations

import numpy as np
import pytest

import hlo_interp
from hlo_interp.spmd import run_spmd

from casedata import small_values


# --------------------------------------------------------------------------------------------------
# collective-reduce (XLA:GPU only in XLA; hand-derived from its semantics)

_CR = """HloModule m, replica_count=4
add {{
  a = {t}[] parameter(0)
  b = {t}[] parameter(1)
  ROOT c = {t}[] {op}(a, b)
}}
ENTRY e {{
  x = {t}[3] parameter(0)
  ROOT r = {t}[3] collective-reduce(x), replica_groups={{{{1,0}},{{2,3}}}}, to_apply=add
}}
"""


@pytest.mark.parametrize("t,dtype,op", [("f32", np.float32, "add"), ("s32", np.int32, "add"),
                                        ("u8", np.uint8, "add"), ("f64", np.float64, "maximum"),
                                        ("s8", np.int8, "multiply"), ("pred", np.bool_, "or")])
def test_collective_reduce(t, dtype, op):
    xs = [small_values(dtype, (3,), 40 + d) for d in range(4)]
    got = run_spmd(hlo_interp.parse(_CR.format(t=t, op=op)), [[x] for x in xs], 4, 1, timeout=20)
    f = {"add": np.add, "maximum": np.maximum, "multiply": np.multiply, "or": np.logical_or}[op]
    with np.errstate(over="ignore"):
        # roots: the first replica of each group (1 and 2); the others are not written (zeros here)
        np.testing.assert_array_equal(got[1][0], f(xs[1], xs[0]).astype(dtype))
        np.testing.assert_array_equal(got[2][0], f(xs[2], xs[3]).astype(dtype))
    for d in (0, 3):
        np.testing.assert_array_equal(got[d][0], np.zeros(3, dtype))
    assert got[1][0].dtype == np.dtype(dtype)
