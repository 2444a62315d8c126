"""batch-norm-training/-inference/-grad, async wrappers (async-start/-update/-done, `<op>-start/-done`
sugar, copy-start/-done), get-/set-dimension-size, dynamic-reshape, ragged-dot: XLA:CPU-computed cases
(tests/golden/{batch_norm,ragged_dot,dynamic_shape,async}/, written by tools/make_misc_vectors.py
and run by tests/test_golden.py) before and after optimization, plus worked
examples and error cases."""
from __future__ import annotations

from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

import hlo_interp
from hlo_interp.diagnostics import HloError
from casedata import cases

CASES = cases(("batch_norm", "ragged_dot", "dynamic_shape", "async"))  # run by tests/test_golden.py


def test_cases_cover_the_ops():
    before = "".join(c.text("before") for c in CASES)
    for op in ("batch-norm-training(", "batch-norm-inference(", "batch-norm-grad(", "async-start(",
               "async-update(", "async-done(", "negate-start(", "add-done(", "copy-start(", "copy-done(",
               "get-dimension-size(", "set-dimension-size(", "dynamic-reshape(", "ragged-dot("):
        assert op in before, op
    kinds = {c.short.split("_")[2] for c in CASES if c.short.startswith("bn_")}
    assert {"f32", "f64", "f16", "bf16", "f8e4m3fn", "f8e5m2", "f8e4m3fnuz", "f8e3m4", "f8e4m3", "f8e8m0fnu",
            "f4e2m1fn", "f8e4m3b11fnuz", "f8e5m2fnuz"} <= kinds
    assert sum(c.info["source"] == "jax.jit" for c in CASES) >= 9  # real JAX programs (ragged_dot)
    assert len(CASES) >= 130


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


def _bn_reference(x, scale, offset, fi, eps):
    """Spec formulas (op-checklist BatchNormTraining/Grad), in float64."""
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
    got = _run1(text, x, scale, offset)
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
    dx, dscale, doffset = _run1(text, x, scale, mean, var, dy)
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
    got = _run1(text, x)[0]
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
        _run1(text, np.ones((4, 3), np.float32), np.ones(3, np.float32), np.ones(3, np.float32))
    assert ":6:" in str(e.value)


def test_batch_norm_integer_operand_refused():
    text = """HloModule m
ENTRY e {
  x = s32[4,3] parameter(0)
  s = s32[3] parameter(1)
  ROOT y = s32[4,3] batch-norm-inference(x, s, s, s, s), epsilon=0.1, feature_index=1
}"""
    with pytest.raises(HloError, match="floating-point"):
        _run1(text, np.ones((4, 3), np.int32), np.ones(3, np.int32))


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
    dn, d2, d3, ox, oy, res, ctx = _run1(text, x, y)
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
        _run1(text, np.ones(3, np.float32))


def test_async_sugar_of_unsupported_op_is_located():
    text = """HloModule m
ENTRY e {
  x = f32[3] parameter(0)
  st = ((f32[3]), f32[3], s32[]) custom-call-start(x), custom_call_target="no_such_target_xyz"
  ROOT dn = f32[3] custom-call-done(st)
}"""
    with pytest.raises(HloError) as e:
        _run1(text, np.ones(3, np.float32))
    assert ":4:" in str(e.value) and "custom-call" in str(e.value)


def test_copy_start_done_corpus_file():
    text = (Path(__file__).parent / "corpus" / "handwritten" / "copy_start_done.hlo").read_text()
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    a, b = _run1(text, np.float32(-2.5), x)
    assert a == np.float32(-2.5)
    np.testing.assert_array_equal(b, x)


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
    outs = _run1(text, a, b, g, a2, b2, g2, np.zeros((16, 64), f8), np.zeros((64, 8), f8),
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
        _run1(text, np.ones((6, 2), np.float32), np.ones((3, 2, 4), np.float32), np.ones(2, np.int32))


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
        _run1(text, np.ones((6, 2), np.float32), np.ones((3, 2, 4), np.float32), np.ones(3, np.int32))
