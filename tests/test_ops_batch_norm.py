"""batch-norm-training/-inference/-grad: XLA:CPU cases in tests/golden/batch_norm/ (every float type;
tools/make_misc_vectors.py, run by tests/test_golden.py), the spec's formulas, worked example, errors."""
from __future__ import annotations

import numpy as np
import pytest

import hlo_interp
from hlo_interp.diagnostics import HloError
from casedata import cases

CASES = cases("batch_norm")  # run by tests/test_golden.py


def test_cases_cover_the_ops():
    before = "".join(c.text("before") for c in CASES)
    for op in ("batch-norm-training(", "batch-norm-inference(", "batch-norm-grad("):
        assert op in before, op
    kinds = {c.short.split("_")[2] for c in CASES if c.short.startswith("bn_")}
    assert {"f32", "f64", "f16", "bf16", "f8e4m3fn", "f8e5m2", "f8e4m3fnuz", "f8e3m4", "f8e4m3", "f8e8m0fnu",
            "f4e2m1fn", "f8e4m3b11fnuz", "f8e5m2fnuz"} <= kinds
    assert len(CASES) >= 90


def _bn_reference(x, scale, offset, fi, eps):
    """The formulas of XLA's operation semantics (BatchNormTraining/Grad), in float64."""
    axes = tuple(d for d in range(x.ndim) if d != fi)
    shp = [1] * x.ndim
    shp[fi] = x.shape[fi]
    mean = x.mean(axis=axes)
    var = ((x - mean.reshape(shp)) ** 2).mean(axis=axes)  # biased
    y = scale.reshape(shp) * (x - mean.reshape(shp)) / np.sqrt(var.reshape(shp) + eps) + offset.reshape(shp)
    return y, mean, var


def test_batch_norm_training_matches_spec_formulas():
    r = np.random.default_rng(1)
    x = r.standard_normal((3, 4, 5)) * 2 + 1
    scale, offset = r.standard_normal(4), r.standard_normal(4)
    text = """HloModule m
ENTRY e {
  x = f64[3,4,5] parameter(0)
  s = f64[4] parameter(1)
  o = f64[4] parameter(2)
  ROOT t = (f64[3,4,5], f64[4], f64[4]) batch-norm-training(x, s, o), epsilon=0.25, feature_index=1
}"""
    got = hlo_interp.run(text, x, scale, offset)
    want = _bn_reference(x, scale, offset, 1, np.float64(np.float32(0.25)))
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-12)


def test_batch_norm_grad_matches_spec_formulas():
    r = np.random.default_rng(2)
    x = r.standard_normal((6, 3))
    scale, mean, var = r.standard_normal(3), r.standard_normal(3), r.random(3) + 0.5
    dy = r.standard_normal((6, 3))
    eps = np.float64(np.float32(0.01))
    text = """HloModule m
ENTRY e {
  x = f64[6,3] parameter(0)
  s = f64[3] parameter(1)
  m = f64[3] parameter(2)
  v = f64[3] parameter(3)
  dy = f64[6,3] parameter(4)
  ROOT t = (f64[6,3], f64[3], f64[3]) batch-norm-grad(x, s, m, v, dy), epsilon=0.01, feature_index=1
}"""
    dx, dscale, doffset = hlo_interp.run(text, x, scale, mean, var, dy)
    n = x.shape[0]
    c = (dy * (x - mean) / (var + eps)).sum(0) / n
    d = dy.sum(0) / n
    np.testing.assert_allclose(dx, scale / np.sqrt(var + eps) * (dy - d - c * (x - mean)), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(dscale, (dy * (x - mean) / np.sqrt(var + eps)).sum(0), rtol=1e-12)
    np.testing.assert_allclose(doffset, dy.sum(0), rtol=1e-12)


def test_batch_norm_inference_example():
    # x = {1, 2, 3, 4} in one feature, mean 2.5, var 1.25, eps 0 -> (x - 2.5) / sqrt(1.25) * 2 + 1
    text = """HloModule m
ENTRY e {
  x = f32[4,1] parameter(0)
  s = f32[1] constant({2})
  o = f32[1] constant({1})
  m = f32[1] constant({2.5})
  v = f32[1] constant({1.25})
  ROOT y = f32[4,1] batch-norm-inference(x, s, o, m, v), epsilon=0, feature_index=1
}"""
    x = np.array([[1], [2], [3], [4]], np.float32)
    got = hlo_interp.run(text, x)[0]
    np.testing.assert_allclose(got, (x - 2.5) / np.sqrt(1.25) * 2 + 1, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("attrs,operands,msg", [
    ("epsilon=0.1, feature_index=2", "x, s, o", "feature_index=2 is out of range"),
    ("epsilon=0.1, feature_index=0", "x, s, o", r"operand 1 has dimensions \[3\], expected \[4\]"),
])
def test_batch_norm_errors(attrs, operands, msg):
    text = f"""HloModule m
ENTRY e {{
  x = f32[4,3] parameter(0)
  s = f32[3] parameter(1)
  o = f32[3] parameter(2)
  ROOT t = (f32[4,3], f32[3], f32[3]) batch-norm-training({operands}), {attrs}
}}"""
    with pytest.raises(HloError, match=msg) as e:
        hlo_interp.run(text, np.ones((4, 3), np.float32), np.ones(3, np.float32), np.ones(3, np.float32))
    assert ":6:" in str(e.value)


def test_batch_norm_integer_operand_refused():
    text = """HloModule m
ENTRY e {
  x = s32[4,3] parameter(0)
  s = s32[3] parameter(1)
  ROOT y = s32[4,3] batch-norm-inference(x, s, s, s, s), epsilon=0.1, feature_index=1
}"""
    with pytest.raises(HloError, match="floating-point"):
        hlo_interp.run(text, np.ones((4, 3), np.int32), np.ones(3, np.int32))
