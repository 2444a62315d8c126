#!/usr/bin/env python3
"""Regenerate tests/golden/{batch_norm,async,dynamic_shape,ragged_dot}/: XLA:CPU's results for
batch-norm-training/-inference/-grad, the async wrappers (async-start/-update/-done, `<op>-start/-done` sugar, copy-start/-done), get-/set-dimension-size,
dynamic-reshape and ragged-dot (dev-only: needs jax/jaxlib; the tests only read the committed files).

Two kinds of cases:
  * JAX programs (`jax.jit(f).lower(*args)`): the pre-optimization text (`as_text(dialect="hlo")`) and
    XLA:CPU's optimized module (`.compile().as_text()`) are stored with XLA's outputs;
  * hand-written HLO (JAX emits no batch-norm op): parsed by XLA's parser, converted to StableHLO,
    compiled and run by the XLA:CPU client JAX uses; the text and XLA's optimized module are stored.

Each case is one case directory (tools/oracle/writer.py; tests/golden/README.md).

    python3 tools/make_misc_vectors.py [--only REGEX]
"""
from __future__ import annotations

import argparse
import json
import os
import re
import sys
from pathlib import Path

os.environ.setdefault("JAX_PLATFORMS", "cpu")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import ml_dtypes
import numpy as np

try:
    import jax
    import jax.numpy as jnp
    from jax import lax
except ImportError:  # pragma: no cover
    sys.exit("make_misc_vectors.py needs JAX (dev-only tool)")

jax.config.update("jax_enable_x64", True)
jax.config.update("jax_traceback_in_locations_limit", 0)

ROOT = Path(__file__).resolve().parent.parent
F32 = {"rtol": 2e-5, "atol": 2e-5}
F64 = {"rtol": 1e-12, "atol": 1e-12}
HALF = {"rtol": 0, "atol": 0, "ulps": 1}
rng = np.random.default_rng(11)

CASES = []


def jcase(cid, fn, *args, compare="exact"):
    CASES.append({"id": cid, "kind": "jax", "fn": fn, "args": args, "compare": compare})


def hcase(cid, text, *args, compare="exact", ref=None, jref=None, defined=None):
    """`ref`: an equivalent text XLA:CPU can run (when it cannot run `text` itself: async wrappers,
    copy-start); XLA's results and optimized module ("after") are then those of `ref`.  `defined`:
    {output: n} for entry results of dynamic shapes, whose buffers hold n defined elements (the rest
    is uninitialized memory: stored as zeros and not compared)."""
    CASES.append({"id": cid, "kind": "hlo", "text": text, "args": args, "compare": compare, "ref": ref,
                  "jref": jref, "defined": defined})


def rndf(shape, dtype, scale=1.0, loc=0.0):
    return (rng.standard_normal(shape) * scale + loc).astype(dtype)


def rnd(shape, dtype, lo=-4, hi=4):
    return rng.integers(lo, hi, size=shape).astype(dtype)


TYPES = [("f32", np.float32, F32), ("f64", np.float64, F64), ("f16", np.float16, "tol_f16"),
         ("bf16", ml_dtypes.bfloat16, "tol_bf16")]
# bf16/f16 batch norms compute as XLA:CPU does (per-step rounding, XLA's reduction order): bit-exact
TOL = {"tol_f16": "exact", "tol_bf16": "exact"}


def dims(d):
    return ",".join(map(str, d))


# ---------------------------------------------------------------------------------------- batch norm
def bn_training(t, shape, fi, eps):
    F = shape[fi]
    return f"""HloModule bn_training
ENTRY e {{
  x = {t}[{dims(shape)}] parameter(0)
  scale = {t}[{F}] parameter(1)
  offset = {t}[{F}] parameter(2)
  ROOT bn = ({t}[{dims(shape)}], {t}[{F}], {t}[{F}]) batch-norm-training(x, scale, offset), epsilon={eps}, feature_index={fi}
}}"""


def bn_inference(t, shape, fi, eps):
    F = shape[fi]
    return f"""HloModule bn_inference
ENTRY e {{
  x = {t}[{dims(shape)}] parameter(0)
  scale = {t}[{F}] parameter(1)
  offset = {t}[{F}] parameter(2)
  mean = {t}[{F}] parameter(3)
  var = {t}[{F}] parameter(4)
  ROOT bn = {t}[{dims(shape)}] batch-norm-inference(x, scale, offset, mean, var), epsilon={eps}, feature_index={fi}
}}"""


def bn_grad(t, shape, fi, eps):
    F = shape[fi]
    return f"""HloModule bn_grad
ENTRY e {{
  x = {t}[{dims(shape)}] parameter(0)
  scale = {t}[{F}] parameter(1)
  mean = {t}[{F}] parameter(2)
  var = {t}[{F}] parameter(3)
  dy = {t}[{dims(shape)}] parameter(4)
  ROOT bn = ({t}[{dims(shape)}], {t}[{F}], {t}[{F}]) batch-norm-grad(x, scale, mean, var, dy), epsilon={eps}, feature_index={fi}
}}"""


BN_SHAPES = [((2, 3, 4, 5), 3), ((6, 3, 5), 1), ((7, 2), 0), ((5,), 0), ((2, 3, 3, 4), 1)]
for t, dt, tol in TYPES:
    cmp = TOL[tol] if isinstance(tol, str) else tol
    for k, (shape, fi) in enumerate(BN_SHAPES):
        F = shape[fi]
        x = rndf(shape, dt, 2.0, 1.0)
        hcase(f"bn_training_{t}_{k}", bn_training(t, shape, fi, 0.001), x, rndf((F,), dt), rndf((F,), dt),
              compare=cmp)
        hcase(f"bn_inference_{t}_{k}", bn_inference(t, shape, fi, 1e-05), x, rndf((F,), dt), rndf((F,), dt),
              rndf((F,), dt), np.abs(rndf((F,), dt)) + dt(0.1), compare=cmp)
        hcase(f"bn_grad_{t}_{k}", bn_grad(t, shape, fi, 0.01), x, rndf((F,), dt), rndf((F,), dt),
              np.abs(rndf((F,), dt)) + dt(0.1), rndf(shape, dt), compare=cmp)
# large epsilon, zero variance (constant feature), NaN and inf inputs
x = np.ones((4, 3), np.float32)
x[:, 1] = rndf((4,), np.float32)
x[2, 2] = np.nan
hcase("bn_training_constant_nan", bn_training("f32", (4, 3), 1, 0.5), x, rndf((3,), np.float32),
      rndf((3,), np.float32), compare=F32)
x = rndf((4, 3), np.float32)
x[1, 0] = np.inf
hcase("bn_inference_inf", bn_inference("f32", (4, 3), 1, 0.5), x, rndf((3,), np.float32), rndf((3,), np.float32),
      rndf((3,), np.float32), np.array([0.0, 1.0, -0.25], np.float32), compare=F32)
for t in ("f8e4m3fn", "f8e5m2", "f8e4m3fnuz", "f8e3m4", "f8e4m3"):
    dt = getattr(ml_dtypes, {"f8e4m3fn": "float8_e4m3fn", "f8e5m2": "float8_e5m2", "f8e4m3fnuz": "float8_e4m3fnuz",
                             "f8e3m4": "float8_e3m4", "f8e4m3": "float8_e4m3"}[t])
    x = rndf((6, 3), dt)
    hcase(f"bn_training_{t}", bn_training(t, (6, 3), 1, 0.001), x, rndf((3,), dt), rndf((3,), dt))
    hcase(f"bn_inference_{t}", bn_inference(t, (6, 3), 1, 0.001), x, rndf((3,), dt), rndf((3,), dt), rndf((3,), dt),
          np.abs(rndf((3,), dt)))
    hcase(f"bn_grad_{t}", bn_grad(t, (6, 3), 1, 0.001), x, rndf((3,), dt), rndf((3,), dt),
          np.abs(rndf((3,), dt)) + dt(0.5), rndf((6, 3), dt))
# XLA:CPU computes these in f16 (f8e8m0fnu in f32): positive inputs (f8e8m0fnu has no sign, no zero)
for t, dt in (("f8e8m0fnu", ml_dtypes.float8_e8m0fnu), ("f4e2m1fn", ml_dtypes.float4_e2m1fn),
              ("f8e4m3b11fnuz", ml_dtypes.float8_e4m3b11fnuz), ("f8e5m2fnuz", ml_dtypes.float8_e5m2fnuz)):
    def pos(shape, dt=dt):
        return (np.abs(rndf(shape, np.float32)) + 0.25).astype(dt)
    x = pos((6, 3))
    hcase(f"bn_training_{t}", bn_training(t, (6, 3), 1, 0.001), x, pos((3,)), pos((3,)))
    hcase(f"bn_inference_{t}", bn_inference(t, (6, 3), 1, 0.001), x, pos((3,)), pos((3,)), pos((3,)), pos((3,)))
    hcase(f"bn_grad_{t}", bn_grad(t, (6, 3), 1, 0.001), x, pos((3,)), pos((3,)), pos((3,)), pos((6, 3)))
hcase("bn_training_bf16_long", bn_training("bf16", (300, 2), 1, 0.001), rndf((300, 2), ml_dtypes.bfloat16, 1.0, 3.0),
      rndf((2,), ml_dtypes.bfloat16), rndf((2,), ml_dtypes.bfloat16))
hcase("bn_training_f16_long", bn_training("f16", (3, 700), 0, 0.001), rndf((3, 700), np.float16, 1.0, 3.0),
      rndf((3,), np.float16), rndf((3,), np.float16))
hcase("bn_grad_f16_long", bn_grad("f16", (40, 2, 13), 1, 0.001), rndf((40, 2, 13), np.float16, 1.0, 3.0),
      rndf((2,), np.float16), rndf((2,), np.float16, 1.0, 3.0), np.abs(rndf((2,), np.float16)) + np.float16(0.5),
      rndf((40, 2, 13), np.float16))


# ----------------------------------------------------------------------------------------------- async
hcase("async_generic_forms", (ROOT / "tests/corpus/handwritten/async_generic_forms.hlo").read_text().replace(
    """%single_op (x: f32[10]) -> f32[20] {
  %x = f32[10]{0} parameter(0)
  ROOT %cc = f32[20]{0} custom-call(f32[10]{0} %x), custom_call_target="foo"
}""", """%single_op (x: f32[10]) -> f32[20] {
  %x = f32[10]{0} parameter(0)
  ROOT %cc = f32[20]{0} concatenate(f32[10]{0} %x, f32[10]{0} %x), dimensions={0}
}"""), rnd((256,), np.int32, -100, 100), np.int32(300), rndf((10,), np.float32), compare=F32,
    ref="""HloModule async_generic_ref
wrapped {
  p1 = s32[1024] parameter(0)
  c = s32[1024] copy(p1)
  p2 = s32[256] parameter(1)
  p3 = s32[] parameter(2)
  ROOT dus = s32[1024] dynamic-update-slice(c, p2, p3)
}
single {
  x = f32[10] parameter(0)
  ROOT cc = f32[20] concatenate(x, x), dimensions={0}
}
ENTRY main {
  i5 = s32[] parameter(1)
  b = s32[1024] broadcast(i5), dimensions={}
  i0 = s32[256] parameter(0)
  d1 = s32[1024] call(b, i0, i5), to_apply=wrapped
  f = f32[10] parameter(2)
  d2 = f32[20] call(f), to_apply=single
  d3 = f32[10] exponential(f)
  ROOT t = (s32[1024], f32[20], f32[10]) tuple(d1, d2, d3)
}""")

hcase("async_sugar", """HloModule async_sugar
ENTRY main {
  p0 = f32[10] parameter(0)
  a = s32[] parameter(1)
  b = s32[] parameter(2)
  add-start = ((s32[], s32[]), s32[], s32[]) add-start(a, b)
  add-done = s32[] add-done(add-start)
  ne-start = ((f32[10]), f32[10], s32[]) negate-start(p0)
  ne-update = ((f32[10]), f32[10], s32[]) negate-update(ne-start)
  ne-done = f32[10] negate-done(ne-update)
  ROOT t = (s32[], f32[10]) tuple(add-done, ne-done)
}""", rndf((10,), np.float32), np.int32(2**31 - 1), np.int32(5), ref="""HloModule async_sugar_ref
ENTRY main {
  p0 = f32[10] parameter(0)
  a = s32[] parameter(1)
  b = s32[] parameter(2)
  s = s32[] add(a, b)
  n = f32[10] negate(p0)
  ROOT t = (s32[], f32[10]) tuple(s, n)
}""")

hcase("copy_start_done", """HloModule copy_start_done
ENTRY main {
  v1 = f32[] parameter(0)
  cs1 = (f32[], f32[], u32[]) copy-start(v1), cross_program_prefetch_index=0
  cd1 = f32[] copy-done(cs1)
  v2 = f32[2,3]{1,0} parameter(1)
  cs2 = (f32[2,3]{0,1}, f32[2,3]{1,0}, u32[]) copy-start(v2)
  cd2 = f32[2,3]{0,1} copy-done(cs2)
  ROOT t = (f32[], f32[2,3]{0,1}) tuple(cd1, cd2)
}""", np.float32(3.5), rndf((2, 3), np.float32), ref="""HloModule copy_ref
ENTRY main {
  v1 = f32[] parameter(0)
  c1 = f32[] copy(v1)
  v2 = f32[2,3]{1,0} parameter(1)
  c2 = f32[2,3]{0,1} copy(v2)
  ROOT t = (f32[], f32[2,3]{0,1}) tuple(c1, c2)
}""")


# ------------------------------------------------------------------------------------ dynamic shapes
hcase("get_dimension_size", """HloModule gds
ENTRY main {
  p = f32[7,4,3] parameter(0)
  a = s32[] get-dimension-size(p), dimensions={0}
  b = s32[] get-dimension-size(p), dimensions={1}
  c = s32[] get-dimension-size(p), dimensions={2}
  ROOT t = (s32[], s32[], s32[]) tuple(a, b, c)
}""", rndf((7, 4, 3), np.float32))

hcase("set_dimension_size_reduce", """HloModule sds
add { a = f32[] parameter(0)  b = f32[] parameter(1)  ROOT s = f32[] add(a, b) }
ENTRY main {
  p = f32[8,3] parameter(0)
  n = s32[] parameter(1)
  d = f32[<=8,3] set-dimension-size(p, n), dimensions={0}
  z = f32[] constant(0)
  r = f32[3] reduce(d, z), dimensions={0}, to_apply=add
  g = s32[] get-dimension-size(d), dimensions={0}
  ROOT t = (f32[3], s32[]) tuple(r, g)
}""", rnd((8, 3), np.float32), np.int32(5))

for n in (0, 3, 8):  # outside [0, 8]: XLA:CPU keeps the size as given (see the tests)
    hcase(f"set_dimension_size_n{n}", """HloModule sds
add { a = s32[] parameter(0)  b = s32[] parameter(1)  ROOT s = s32[] add(a, b) }
ENTRY main {
  p = s32[3,8] parameter(0)
  n = s32[] parameter(1)
  d = s32[3,<=8] set-dimension-size(p, n), dimensions={1}
  z = s32[] constant(0)
  r = s32[3] reduce(d, z), dimensions={1}, to_apply=add
  g = s32[] get-dimension-size(d), dimensions={1}
  ROOT t = (s32[3], s32[]) tuple(r, g)
}""", rnd((3, 8), np.int32, 1, 100), np.int32(n))

hcase("dynamic_reshape", """HloModule dr
add { a = f32[] parameter(0)  b = f32[] parameter(1)  ROOT s = f32[] add(a, b) }
ENTRY main {
  p = f32[6,4] parameter(0)
  a = s32[] parameter(1)
  b = s32[] parameter(2)
  r = f32[<=8,3] dynamic-reshape(p, a, b)
  g0 = s32[] get-dimension-size(r), dimensions={0}
  g1 = s32[] get-dimension-size(r), dimensions={1}
  z = f32[] constant(0)
  s = f32[3] reduce(r, z), dimensions={0}, to_apply=add
  ROOT t = (s32[], s32[], f32[3]) tuple(g0, g1, s)
}""", rndf((6, 4), np.float32), np.int32(8), np.int32(3), compare=F32)
hcase("dynamic_reshape_of_dynamic", """HloModule dr2
add { a = f32[] parameter(0)  b = f32[] parameter(1)  ROOT s = f32[] add(a, b) }
ENTRY main {
  p = f32[8,3] parameter(0)
  n = s32[] parameter(1)
  d = f32[<=8,3] set-dimension-size(p, n), dimensions={0}
  m = s32[] parameter(2)
  r = f32[<=24] dynamic-reshape(d, m)
  g = s32[] get-dimension-size(r), dimensions={0}
  z = f32[] constant(0)
  s = f32[] reduce(r, z), dimensions={0}, to_apply=add
  ROOT t = (s32[], f32[]) tuple(g, s)
}""", rnd((8, 3), np.float32), np.int32(4), np.int32(12))
hcase("dynamic_reshape_static", """HloModule dr
ENTRY main {
  p = s32[2,3,4] parameter(0)
  a = s32[] parameter(1)
  b = s32[] parameter(2)
  ROOT r = s32[4,6] dynamic-reshape(p, a, b)
}""", rnd((2, 3, 4), np.int32, -50, 50), np.int32(4), np.int32(6))


# dynamic sizes through other ops (XLA's dynamic dimension inference): get-dimension-size after broadcast,
# slice, reshape, dot, reduce, concatenate, transpose, reverse, pad and convert, and the values of
# reductions over what they produce (only defined elements are outputs: past a dynamic size XLA's buffers
# hold anything).  The reshape case sums integers: XLA:CPU adds a plain f32[12] reduce sequentially, which
# hlo-run's reduce does not reproduce for every input (a separate difference)
_DYN = """HloModule dyn
add {{ a = f32[] parameter(0)  b = f32[] parameter(1)  ROOT s = f32[] add(a, b) }}
ENTRY main {{
  p = f32[4,3] parameter(0)
  n = s32[] parameter(1)
  d = f32[<=4,3] set-dimension-size(p, n), dimensions={{0}}
  z = f32[] constant(0)
  {body}
}}"""
for _n in (1, 3):
    hcase(f"dynamic_infer_broadcast_n{_n}", _DYN.format(body="""b = f32[2,<=4,3] broadcast(d), dimensions={1,2}
  g = s32[] get-dimension-size(b), dimensions={1}
  bs = f32[2,4,3] broadcast(d), dimensions={1,2}
  gs = s32[] get-dimension-size(bs), dimensions={1}
  r = f32[2,3] reduce(b, z), dimensions={1}, to_apply=add
  ROOT t = (s32[], s32[], f32[2,3]) tuple(g, gs, r)"""), rndf((4, 3), np.float32), np.int32(_n))
    hcase(f"dynamic_infer_slice_n{_n}", _DYN.format(body="""sl0 = f32[<=4,2] slice(d), slice={[0:4], [0:2]}
  sl1 = f32[<=3,3] slice(d), slice={[1:4], [0:3]}
  sl2 = f32[<=2,3] slice(d), slice={[0:4:2], [0:3]}
  sl3 = f32[1,3] slice(d), slice={[3:4], [0:3]}
  g0 = s32[] get-dimension-size(sl0), dimensions={0}
  g1 = s32[] get-dimension-size(sl1), dimensions={0}
  g2 = s32[] get-dimension-size(sl2), dimensions={0}
  g3 = s32[] get-dimension-size(sl3), dimensions={0}
  r1 = f32[3] reduce(sl1, z), dimensions={0}, to_apply=add
  r2 = f32[3] reduce(sl2, z), dimensions={0}, to_apply=add
  ROOT t = (s32[], s32[], s32[], s32[], f32[3], f32[3]) tuple(g0, g1, g2, g3, r1, r2)"""),
          rndf((4, 3), np.float32), np.int32(_n))
    hcase(f"dynamic_infer_reshape_n{_n}", _DYN.format(body="""m = f32[<=12] reshape(d)
  gm = s32[] get-dimension-size(m), dimensions={0}
  sm = f32[] reduce(m, z), dimensions={0}, to_apply=add
  t = f32[3,<=4] transpose(d), dimensions={1,0}
  mt = f32[<=12] reshape(t)
  gt = s32[] get-dimension-size(mt), dimensions={0}
  sp = f32[<=2,2,3] reshape(d)
  gs = s32[] get-dimension-size(sp), dimensions={0}
  ROOT r = (s32[], f32[], s32[], s32[]) tuple(gm, sm, gt, gs)"""), rnd((4, 3), np.float32), np.int32(_n))
    hcase(f"dynamic_infer_dot_n{_n}", _DYN.format(body="""q = f32[4,5] parameter(2)
  c = f32[3,5] dot(d, q), lhs_contracting_dims={0}, rhs_contracting_dims={0}
  w = f32[3,5] parameter(3)
  o = f32[<=4,5] dot(d, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  g = s32[] get-dimension-size(o), dimensions={0}
  os = f32[4,5] dot(d, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  gs = s32[] get-dimension-size(os), dimensions={0}
  r = f32[5] reduce(o, z), dimensions={0}, to_apply=add
  ROOT t = (f32[3,5], s32[], s32[], f32[5]) tuple(c, g, gs, r)"""), rndf((4, 3), np.float32), np.int32(_n),
          rndf((4, 5), np.float32), rndf((3, 5), np.float32))
    hcase(f"dynamic_infer_misc_n{_n}", _DYN.format(body="""r = f32[<=4] reduce(d, z), dimensions={1}, to_apply=add
  g0 = s32[] get-dimension-size(r), dimensions={0}
  rs = f32[4] reduce(d, z), dimensions={1}, to_apply=add
  g1 = s32[] get-dimension-size(rs), dimensions={0}
  c = f32[<=8,3] concatenate(d, d), dimensions={0}
  g2 = s32[] get-dimension-size(c), dimensions={0}
  v = f32[<=4,3] reverse(d), dimensions={0}
  g3 = s32[] get-dimension-size(v), dimensions={0}
  pd = f32[<=6,3] pad(d, z), padding=1_1x0_0
  g4 = s32[] get-dimension-size(pd), dimensions={0}
  cv = s32[<=4,3] convert(d)
  g5 = s32[] get-dimension-size(cv), dimensions={0}
  ng = f32[4,3] negate(d)
  g6 = s32[] get-dimension-size(ng), dimensions={0}
  sc = f32[3] reduce(c, z), dimensions={0}, to_apply=add
  sv = f32[3] reduce(v, z), dimensions={0}, to_apply=add
  ROOT t = (s32[], s32[], s32[], s32[], s32[], s32[], s32[], f32[3], f32[3]) tuple(g0, g1, g2, g3, g4, g5, g6, sc, sv)"""),
          rndf((4, 3), np.float32), np.int32(_n))

# the entry's results of dynamic shapes: XLA:CPU returns each buffer of the bounds' size with the
# elements of the dynamic sizes compact (row-major) at its start; the rest is uninitialized memory
hcase("dynamic_output_compact", """HloModule dyn_out
ENTRY main {
  p = s32[3,4] parameter(0)
  a = s32[] parameter(1)
  b = s32[] parameter(2)
  d0 = s32[<=3,4] set-dimension-size(p, a), dimensions={0}
  d1 = s32[<=3,<=4] set-dimension-size(d0, b), dimensions={1}
  r = s32[<=3,<=4] reverse(d1), dimensions={0,1}
  q = s32[4] parameter(3)
  e = s32[<=4] set-dimension-size(q, b), dimensions={0}
  ROOT t = (s32[<=3,<=4], s32[<=3,<=4], s32[<=4], s32[<=3,4]) tuple(d1, r, e, d0)
}""", np.arange(100, 112, dtype=np.int32).reshape(3, 4), np.int32(2), np.int32(3),
      np.arange(4, dtype=np.int32) + 7, defined={0: 6, 1: 6, 2: 3, 3: 8})

# set-dimension-size keeps its operand's buffer: an op with a static result reads the elements past
# the dynamic size (a reshape to a static shape), and a larger size set again shows them
hcase("dynamic_buffer_reads", """HloModule dyn_buf
add { a = s32[] parameter(0)  b = s32[] parameter(1)  ROOT s = s32[] add(a, b) }
ENTRY main {
  p = s32[6,2] parameter(0)
  n = s32[] parameter(1)
  d = s32[<=6,2] set-dimension-size(p, n), dimensions={0}
  r = s32[3,2,2] reshape(d)
  z = s32[] constant(0)
  s = s32[3,2] reduce(r, z), dimensions={1}, to_apply=add
  m = s32[] constant(5)
  e = s32[<=6,2] set-dimension-size(d, m), dimensions={0}
  se = s32[2] reduce(e, z), dimensions={0}, to_apply=add
  ROOT t = (s32[3,2], s32[2]) tuple(s, se)
}""", rnd((6, 2), np.int32, -50, 50), np.int32(2))

# dynamic sizes through indexing, windows, convolution, elementwise ops and control flow: each `rK` of a
# body is returned with its two get-dimension-sizes; XLA:CPU's buffer of rK holds size0 x size1 defined
# elements (outputs 3K+1 and 3K+2 give them), the rest is uninitialized memory
_DYN2 = """HloModule dyn2
add {{ a = f32[] parameter(0)  b = f32[] parameter(1)  ROOT s = f32[] add(a, b) }}
ge {{ a = f32[] parameter(0)  b = f32[] parameter(1)  ROOT c = pred[] compare(a, b), direction=GE }}
ENTRY main {{
  p = f32[4,3] parameter(0)
  n = s32[] parameter(1)
  i = s32[] parameter(2)
  d = f32[<=4,3] set-dimension-size(p, n), dimensions={{0}}
  z = f32[] constant(0)
  {params}
  {body}
  ROOT t = tuple({outs})
}}"""


def dyn2(cid, params, body, nres, *args):
    outs = []
    gds = []
    for k in range(nres):
        gds.append(f"g{k}0 = s32[] get-dimension-size(r{k}), dimensions={{0}}\n  "
                   f"g{k}1 = s32[] get-dimension-size(r{k}), dimensions={{1}}")
        outs += [f"r{k}", f"g{k}0", f"g{k}1"]
    text = _DYN2.format(params="\n  ".join(params), body=body + "\n  " + "\n  ".join(gds), outs=", ".join(outs))
    hcase(cid, text, *args, defined={3 * k: (3 * k + 1, 3 * k + 2) for k in range(nres)})


for _n in (2, 3):
    for _i in (1, 3):
        _p = rndf((4, 3), np.float32)
        dyn2(f"dynamic_infer_indexing_n{_n}_i{_i}", [
            "idx = s32[2,1] parameter(3)", "u = f32[4,1] parameter(4)", "ii = s32[3,1] parameter(5)",
            "uu = f32[1,2,3] parameter(6)", "si = s32[1,1] parameter(7)"],
            """r0 = f32[<=4,2] dynamic-slice(d, i, i), dynamic_slice_sizes={4,2}
  r1 = f32[2,2] dynamic-slice(d, i, i), dynamic_slice_sizes={2,2}
  r2 = f32[<=4,3] dynamic-update-slice(d, u, i, i)
  r3 = f32[2,<=4] gather(d, idx), offset_dims={1}, collapsed_slice_dims={1}, start_index_map={1}, index_vector_dim=1, slice_sizes={4,1}
  m = s32[] constant(2)
  id2 = s32[<=3,1] set-dimension-size(ii, m), dimensions={0}
  r4 = f32[<=3,3] gather(p, id2), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,3}
  r5 = f32[<=4,3] scatter(d, si, uu), update_window_dims={1,2}, inserted_window_dims={}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add""",
            6, _p, np.int32(_n), np.int32(_i), np.array([[_i], [0]], np.int32), rndf((4, 1), np.float32),
            np.array([[3], [_i], [0]], np.int32), rndf((1, 2, 3), np.float32), np.array([[_i - 1]], np.int32))
    dyn2(f"dynamic_infer_windows_n{_n}", ["s0 = f32[2,3] parameter(3)", "k = f32[3,2] parameter(4)"],
         """r0 = f32[<=3,3] reduce-window(d, z), window={size=2x1}, to_apply=add
  r1 = f32[<=2,3] reduce-window(d, z), window={size=2x1 stride=2x1}, to_apply=add
  r2 = f32[<=4,3] reduce-window(d, z), window={size=3x1 pad=1_1x0_0}, to_apply=add
  one = s32[] constant(1)
  sd = f32[<=2,3] set-dimension-size(s0, one), dimensions={0}
  r3 = f32[<=4,3] select-and-scatter(d, sd, z), window={size=2x1 stride=2x1}, select=ge, scatter=add
  r4 = f32[<=4,2] convolution(d, k), dim_labels=bf_io->bf""",
         5, rndf((4, 3), np.float32), np.int32(_n), np.int32(0), rndf((2, 3), np.float32),
         rndf((3, 2), np.float32))
    dyn2(f"dynamic_infer_elementwise_n{_n}", ["q = f32[4,3] parameter(3)"],
         """t0 = f32[3,<=4] transpose(d), dimensions={1,0}
  r0 = f32[3,<=4] negate(t0)
  cv = f32[] constant(7)
  r1 = f32[<=7,3] pad(d, cv), padding=1_2x0_0
  r2 = f32[<=7,3] pad(d, cv), padding=0_0_1x0_0
  one = s32[] constant(1)
  q1 = f32[<=4,3] set-dimension-size(q, one), dimensions={0}
  r3 = f32[<=4,3] multiply(d, q1)
  r4 = f32[<=4,3] sort(d), dimensions={0}, to_apply=ge
  r5 = f32[<=4,3] add(d, q)""",
         6, rndf((4, 3), np.float32), np.int32(_n), np.int32(0), rndf((4, 3), np.float32))

# a dynamic size carried through a while loop's state (the body grows it with set-dimension-size, and
# what the buffer held past the old size becomes visible, doubled with the rest), and through the
# branches of a conditional
hcase("dynamic_control_while", """HloModule dyn_while
add { a = f32[] parameter(0)  b = f32[] parameter(1)  ROOT s = f32[] add(a, b) }
body {
  st = (s32[], f32[<=4,3]) parameter(0)
  k = s32[] get-tuple-element(st), index=0
  x = f32[<=4,3] get-tuple-element(st), index=1
  one = s32[] constant(1)
  k1 = s32[] add(k, one)
  g = s32[] get-dimension-size(x), dimensions={0}
  g1 = s32[] add(g, one)
  four = s32[] constant(4)
  g2 = s32[] minimum(g1, four)
  y = f32[<=4,3] add(x, x)
  y2 = f32[<=4,3] set-dimension-size(y, g2), dimensions={0}
  ROOT t = (s32[], f32[<=4,3]) tuple(k1, y2)
}
cond {
  st = (s32[], f32[<=4,3]) parameter(0)
  k = s32[] get-tuple-element(st), index=0
  lim = s32[] constant(3)
  ROOT c = pred[] compare(k, lim), direction=LT
}
ENTRY main {
  p = f32[4,3] parameter(0)
  n = s32[] parameter(1)
  d = f32[<=4,3] set-dimension-size(p, n), dimensions={0}
  z = s32[] constant(0)
  init = (s32[], f32[<=4,3]) tuple(z, d)
  w = (s32[], f32[<=4,3]) while(init), condition=cond, body=body
  r = f32[<=4,3] get-tuple-element(w), index=1
  zf = f32[] constant(0)
  s = f32[3] reduce(r, zf), dimensions={0}, to_apply=add
  g0 = s32[] get-dimension-size(r), dimensions={0}
  ROOT t = (f32[3], s32[]) tuple(s, g0)
}""", rnd((4, 3), np.float32), np.int32(1))
for _b in (True, False):
    hcase(f"dynamic_control_conditional_{str(_b).lower()}", """HloModule dyn_cond
add { a = f32[] parameter(0)  b = f32[] parameter(1)  ROOT s = f32[] add(a, b) }
tb {
  x = f32[<=4,3] parameter(0)
  ROOT y = f32[<=4,3] negate(x)
}
fb {
  x = f32[<=4,3] parameter(0)
  m = s32[] constant(1)
  ROOT y = f32[<=4,3] set-dimension-size(x, m), dimensions={0}
}
ENTRY main {
  p = f32[4,3] parameter(0)
  n = s32[] parameter(1)
  b = pred[] parameter(2)
  d = f32[<=4,3] set-dimension-size(p, n), dimensions={0}
  r = f32[<=4,3] conditional(b, d, d), true_computation=tb, false_computation=fb
  zf = f32[] constant(0)
  s = f32[3] reduce(r, zf), dimensions={0}, to_apply=add
  g0 = s32[] get-dimension-size(r), dimensions={0}
  ROOT t = (f32[3], s32[], f32[<=4,3]) tuple(s, g0, r)
}""", rnd((4, 3), np.float32), np.int32(3), np.bool_(_b), defined={2: 3 if _b else 1})

# --------------------------------------------------------------------------------------------- ragged
def rdot(**kw):
    def f(a, b, g):
        return lax.ragged_dot(a, b, g, **kw)
    return f


def rdot_general(dn, **kw):
    def f(a, b, g):
        return lax.ragged_dot_general(a, b, g, dn, **kw)
    return f


jcase("ragged_dot_f32", rdot(), rndf((12, 5), np.float32), rndf((3, 5, 4), np.float32),
      np.array([4, 0, 6], np.int32), compare=F32)
jcase("ragged_dot_f32_short_groups", rdot(), rndf((10, 3), np.float32), rndf((4, 3, 2), np.float32),
      np.array([2, 3, 1, 1], np.int32), compare=F32)
jcase("ragged_dot_s32", rdot(), rnd((9, 4), np.int32), rnd((2, 4, 3), np.int32), np.array([5, 4], np.int32))
jcase("ragged_dot_bf16_f32", rdot(preferred_element_type=jnp.float32), rndf((8, 6), ml_dtypes.bfloat16),
      rndf((2, 6, 3), ml_dtypes.bfloat16), np.array([3, 5], np.int32), compare=F32)
jcase("ragged_dot_bf16", rdot(), rnd((8, 6), ml_dtypes.bfloat16), rnd((2, 6, 3), ml_dtypes.bfloat16),
      np.array([3, 5], np.int32))
jcase("ragged_dot_f64_s64groups", rdot(), rndf((7, 3), np.float64), rndf((3, 3, 2), np.float64),
      np.array([2, 2, 3], np.int64), compare=F64)
try:
    RDN = lax.RaggedDotDimensionNumbers
    DDN = (((1,), (0,)), ((), ()))
    jcase("ragged_contracting_f32", rdot_general(RDN(DDN, lhs_ragged_dimensions=[1], rhs_group_dimensions=[])),
          rndf((4, 10), np.float32), rndf((10, 3), np.float32), np.array([3, 3, 4], np.int32), compare=F32)
    BDN = (((2,), (1,)), ((0,), (0,)))
    jcase("ragged_batch_f32", rdot_general(RDN(BDN, lhs_ragged_dimensions=[0], rhs_group_dimensions=[])),
          rndf((2, 5, 4), np.float32), rndf((2, 4, 3), np.float32), np.array([1, 1], np.int32), compare=F32)
    NDN = (((2,), (1,)), ((0,), (0,)))
    jcase("ragged_noncontracting_batched_f32",
          rdot_general(RDN(((( 2,), (2,)), ((0,), (0,))), lhs_ragged_dimensions=[1], rhs_group_dimensions=[1])),
          rndf((2, 7, 4), np.float32), rndf((2, 3, 4, 5), np.float32), np.array([[2, 3, 2], [0, 7, 0]], np.int32),
          compare=F32)
except AttributeError as e:  # pragma: no cover
    print("no ragged_dot_general:", e)

JT = {"f32": jnp.float32, "f64": jnp.float64, "bf16": jnp.bfloat16, "f16": jnp.float16, "s32": jnp.int32,
      "s8": jnp.int8, "u32": jnp.uint32, "c64": jnp.complex64}


def jr(lc, rc, lb, rb, lr, rg, ot):
    dn = lax.RaggedDotDimensionNumbers(((lc, rc), (lb, rb)), lhs_ragged_dimensions=lr, rhs_group_dimensions=rg)

    def f(a, b, g):
        return lax.ragged_dot_general(a, b, g, dn, preferred_element_type=JT[ot])
    return f


HRAGGED = """HloModule ragged
ENTRY e {{
  a = {lt} parameter(0)
  b = {rt} parameter(1)
  g = {gt} parameter(2)
  ROOT r = {ot} ragged-dot(a, b, g), {attrs}
}}"""
NONC = "lhs_contracting_dims={1}, rhs_contracting_dims={1}, lhs_ragged_dims={0}, rhs_group_dims={0}"
for t, dt, ot, cmp in (("f32", np.float32, "f32", F32), ("f64", np.float64, "f64", F64),
                       ("bf16", ml_dtypes.bfloat16, "bf16", "exact"), ("f16", np.float16, "f16", "exact"),
                       ("bf16", ml_dtypes.bfloat16, "f32", F32), ("s32", np.int32, "s32", "exact"),
                       ("s8", np.int8, "s32", "exact"), ("s8", np.int8, "s8", "exact"),
                       ("u8", np.uint8, "u32", "exact"), ("c64", np.complex64, "c64", F32)):
    small = t in ("bf16", "f16", "s8", "u8")
    if small or t == "s32":
        def mk(sh, dt=dt, lo=0 if t == "u8" else -4):
            return rnd(sh, dt, lo, 4)
    else:
        def mk(sh, dt=dt):
            return rndf(sh, dt)
    hcase(f"hragged_noncontracting_{t}_{ot}", HRAGGED.format(
        lt=f"{t}[11,6]", rt=f"{t}[3,6,4]", gt="s32[3]", ot=f"{ot}[11,4]", attrs=NONC),
        mk((11, 6)), mk((3, 6, 4)), np.array([4, 0, 5], np.int32), compare=cmp,
        jref=jr([1], [1], [], [], [0], [0], ot))
    hcase(f"hragged_contracting_{t}_{ot}", HRAGGED.format(
        lt=f"{t}[5,9]", rt=f"{t}[9,3]", gt="s64[4]", ot=f"{ot}[4,5,3]",
        attrs="lhs_contracting_dims={1}, rhs_contracting_dims={0}, lhs_ragged_dims={1}"),
        mk((5, 9)), mk((9, 3)), np.array([2, 3, 0, 3], np.int64), compare=cmp,
        jref=jr([1], [0], [], [], [1], [], ot))
hcase("hragged_batch_f32", HRAGGED.format(
    lt="f32[4,3,5]", rt="f32[4,5,2]", gt="s32[2]", ot="f32[4,3,2]",
    attrs="lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_contracting_dims={1}, "
          "lhs_ragged_dims={0}"),
    rndf((4, 3, 5), np.float32), rndf((4, 5, 2), np.float32), np.array([1, 2], np.int32), compare=F32,
    jref=jr([2], [1], [0], [0], [0], [], "f32"))
hcase("hragged_noncontracting_batched_f32", HRAGGED.format(
    lt="f32[2,7,4]", rt="f32[3,2,4,5]", gt="s32[2,3]", ot="f32[2,7,5]",
    attrs="lhs_batch_dims={0}, rhs_batch_dims={1}, lhs_contracting_dims={2}, rhs_contracting_dims={2}, "
          "lhs_ragged_dims={1}, rhs_group_dims={0}"),
    rndf((2, 7, 4), np.float32), rndf((3, 2, 4, 5), np.float32), np.array([[2, 3, 1], [0, 7, 0]], np.int32),
    compare=F32, jref=jr([2], [2], [0], [1], [1], [0], "f32"))
hcase("hragged_contracting_batched_f32", HRAGGED.format(
    lt="f32[2,3,6]", rt="f32[2,6,4]", gt="s32[2,3]", ot="f32[3,2,3,4]",
    attrs="lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_contracting_dims={1}, "
          "lhs_ragged_dims={2}"),
    rndf((2, 3, 6), np.float32), rndf((2, 6, 4), np.float32), np.array([[1, 2, 3], [6, 0, 0]], np.int32),
    compare=F32, jref=jr([2], [1], [0], [0], [2], [], "f32"))
hcase("hragged_overfull_groups_f32", HRAGGED.format(
    lt="f32[5,3]", rt="f32[2,3,2]", gt="s32[2]", ot="f32[5,2]", attrs=NONC),
    rndf((5, 3), np.float32), rndf((2, 3, 2), np.float32), np.array([3, 4], np.int32), compare=F32,
    jref=jr([1], [1], [], [], [0], [0], "f32"))


# ---------------------------------------------------------------------------------------------- running

sys.path.insert(0, str(Path(__file__).resolve().parent))
from oracle import runner  # noqa: E402
from oracle.writer import write_case  # noqa: E402


def family(cid: str) -> str:
    """The case's family (tests/golden/<family>/), by the opcode it is about."""
    if cid.startswith("bn_"):
        return "batch_norm"
    if "ragged" in cid:
        return "ragged_dot"
    if cid.startswith(("set_dimension", "get_dimension", "dynamic_reshape", "dynamic_infer", "dynamic_output", "dynamic_buffer", "dynamic_control")):
        return "dynamic_shape"
    return "async"  # async-start/-update/-done, copy-start/-done


# named differences of ours (case id -> {variant: reason}): strict xfails (tests/casedata.py)
KNOWN = {
    "bn_training_f16_2": {v: "XLA:CPU sums the two-element rows of x*x as fma(x0, x0, round(x1*x1)) (LLVM "
                             "drops the loop's first `+ 0` for a square, then fuses the other product): a "
                             "codegen detail hlo-run does not model (ops/contraction.py)"
                          for v in ("before", "after")},
}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--only")
    a = ap.parse_args()
    n = 0
    for c in CASES:
        if a.only and not re.search(a.only, c["id"]):
            continue
        args = [np.asarray(x) for x in c["args"]]
        try:
            if c["kind"] == "jax":
                before, after, outs = runner.run_jax(c["fn"], args, keep_unused=False)
            else:
                before = c["text"]
                if c.get("jref") is not None:  # XLA:CPU cannot run the op: JAX's equivalent program
                    _, after, outs = runner.run_jax(c["jref"], args, keep_unused=False)
                else:
                    after, outs = runner.run_hlo(c["ref"] or before, args)
        except Exception as e:  # noqa: BLE001 - report and skip: XLA refused the case
            print(f"SKIP {c['id']}: {type(e).__name__}: {str(e).splitlines()[0][:300]}")
            continue
        src = "jax.jit" if c["kind"] == "jax" else "hand-written HLO"
        if c.get("ref"):
            src += "; XLA ran the equivalent text in 'ref', 'after' is its optimized module"
        if c.get("jref") is not None:
            src += "; XLA:CPU has no ragged-dot: outputs and 'after' from jax.lax.ragged_dot_general"
        c["defined"] = {k: (int(np.prod([int(outs[j]) for j in nd])) if isinstance(nd, tuple) else nd)
                        for k, nd in (c.get("defined") or {}).items()}
        for k, nd in c["defined"].items():
            outs[k] = outs[k].copy()
            outs[k].reshape(-1)[nd:] = 0  # uninitialized memory in XLA's buffer
        extra = ({"ref": c["ref"]} if c.get("ref") else {}) | ({"known": KNOWN[c["id"]]} if c["id"] in KNOWN else {})
        write_case(family(c["id"]), c["id"], {"before": before, "after": after}, args, outs, source=src,
                   compare=c["compare"], extra=extra or None)
        if c.get("defined"):
            cj = ROOT / "tests" / "golden" / family(c["id"]) / c["id"] / "case.json"
            info = json.loads(cj.read_text())
            for k, m in c["defined"].items():
                info["outputs"][k]["defined"] = m
                info["outputs"][k]["defined_reason"] = (
                    "an entry result of a dynamic shape: XLA:CPU's buffer of the bounds' size starts with "
                    "the elements of the dynamic sizes (row-major); the rest is uninitialized memory")
            cj.write_text(json.dumps(info, indent=1) + "\n")
        n += 1
        print("ok", c["id"])
    print(f"{n} cases written")

if __name__ == "__main__":
    main()
