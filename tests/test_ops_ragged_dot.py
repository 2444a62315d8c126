"""ragged-dot: XLA:CPU cases in tests/golden/ragged_dot/ (XLA:CPU has no ragged-dot: its values come from
jax.lax.ragged_dot_general; tools/make_misc_vectors.py, run by tests/test_golden.py), the corpus file's
modes against per-group loops, errors."""
from __future__ import annotations

from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

import hlo_interp
from hlo_interp.diagnostics import HloError
from casedata import cases

CASES = cases("ragged_dot")  # run by tests/test_golden.py


def test_cases_cover_the_ops():
    assert sum("ragged-dot(" in c.text("before") for c in CASES) >= 20  # hand-written; JAX lowers its own way
    assert sum(c.info["source"] == "jax.jit" for c in CASES) >= 9  # real JAX programs
    assert len(CASES) >= 30


# --------------------------------------------------------------------------------------------------
# ragged-dot: the corpus file's two modes against per-group loops


def test_ragged_dot_corpus_modes():
    text = (Path(__file__).parent / "corpus" / "handwritten" / "ragged_and_scaled_dot.hlo").read_text()
    text = text.replace("scaled = f32[16,8] scaled-dot(qa, qb, sa, sb), lhs_contracting_dims={1}, "
                        "rhs_contracting_dims={0}", "z = f32[] constant(0)\n  scaled = f32[16,8] broadcast(z), "
                        "dimensions={}")
    r = np.random.default_rng(3)
    a = r.integers(-4, 4, (16, 64)).astype(np.float32)
    b = r.integers(-4, 4, (4, 64, 8)).astype(np.float32)
    g = np.array([3, 5, 0, 6], np.int64)  # 14 rows: the last 2 belong to no group -> zero
    a2 = r.integers(-4, 4, (16, 64)).astype(np.float32)
    b2 = r.integers(-4, 4, (64, 8)).astype(np.float32)
    g2 = np.array([10, 20, 30, 4], np.int32)
    f8 = ml_dtypes.float8_e4m3fn
    e8 = ml_dtypes.float8_e8m0fnu
    outs = hlo_interp.run(text, a, b, g, a2, b2, g2, np.zeros((16, 64), f8), np.zeros((64, 8), f8),
                 np.zeros((16, 2), e8), np.zeros((2, 8), e8))
    want = np.zeros((16, 8), np.float32)
    s = 0
    for i, n in enumerate(g):
        want[s:s + n] = a[s:s + n] @ b[i]
        s += n
    np.testing.assert_array_equal(outs[0], want)
    want2 = np.zeros((4, 16, 8), np.float32)
    s = 0
    for i, n in enumerate(g2):
        want2[i] = a2[:, s:s + n] @ b2[s:s + n]
        s += n
    np.testing.assert_array_equal(outs[1], want2)


def test_ragged_dot_errors():
    text = """HloModule m
ENTRY e {
  a = f32[6,2] parameter(0)
  b = f32[3,2,4] parameter(1)
  g = s32[2] parameter(2)
  ROOT r = f32[6,4] ragged-dot(a, b, g), lhs_contracting_dims={1}, rhs_contracting_dims={1},
    lhs_ragged_dims={0}, rhs_group_dims={0}
}"""
    with pytest.raises(HloError, match="group dimension has size 3, group_sizes has 2 groups"):
        hlo_interp.run(text, np.ones((6, 2), np.float32), np.ones((3, 2, 4), np.float32), np.ones(2, np.int32))


def test_ragged_dot_repeated_dimension_refused():
    text = """HloModule m
ENTRY e {
  a = f32[6,2] parameter(0)
  b = f32[3,2,4] parameter(1)
  g = s32[3] parameter(2)
  ROOT r = f32[6,4] ragged-dot(a, b, g), lhs_contracting_dims={1,1}, rhs_contracting_dims={1,1},
    lhs_ragged_dims={0}, rhs_group_dims={0}
}"""
    with pytest.raises(HloError, match=r"lhs dimensions \[1, 1\] are invalid"):
        hlo_interp.run(text, np.ones((6, 2), np.float32), np.ones((3, 2, 4), np.float32), np.ones(3, np.int32))
