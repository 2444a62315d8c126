"""window: XLA:CPU's results for convolution, reduce-window and select-and-scatter (case declarations;
python -m tools.oracle regen window).

Two kinds of cases:
  * JAX programs: `jax.jit(f).lower(*args)`; both the pre-optimization text (`as_text(dialect="hlo")`)
    and XLA:CPU's optimized module (`.compile().as_text()`) are stored, with XLA's outputs;
  * hand-written HLO (window reversal, batch groups with several batches per group, general select
    and scatter computations, ...): parsed by XLA's parser, converted to StableHLO, compiled and run
    by the same XLA:CPU client JAX uses; the text and XLA's optimized module are stored.

Each case is one case directory (tools/oracle/writer.py; tests/golden/README.md).
"""
from __future__ import annotations

import ml_dtypes
import numpy as np

from .. import runner  # noqa: F401  (sets up XLA:CPU before JAX is imported)
from ..core import Decl

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
from jax import lax  # noqa: E402

jax.config.update("jax_enable_x64", True)
jax.config.update("jax_traceback_in_locations_limit", 0)

FAMILY = "window"  # tests/golden/window/
F32 = {"rtol": 1e-5, "atol": 1e-5}
F64 = {"rtol": 1e-12, "atol": 1e-12}
rng = np.random.default_rng(5)


def rnd(shape, dtype, lo=-4, hi=4):
    dt = np.dtype(dtype)
    if dt == np.bool_:
        return rng.random(shape) < 0.5
    if dt.kind in "iu" or dt.name in ("int4", "uint4", "int2", "uint2"):
        return rng.integers(lo, hi, size=shape).astype(dt)
    if dt.kind == "c":
        return (rng.integers(lo, hi, size=shape) + 1j * rng.integers(lo, hi, size=shape)).astype(dt)
    # small integers and halves: exactly representable, so sums are exact in any order
    return (rng.integers(2 * lo, 2 * hi, size=shape) / 2).astype(dt)


def rndf(shape, dtype):
    return rng.standard_normal(shape).astype(dtype)


CASES = []


def jcase(cid, fn, *args, compare="exact"):
    CASES.append({"id": cid, "kind": "jax", "fn": fn, "args": args, "compare": compare})


def hcase(cid, text, *args, compare="exact"):
    CASES.append({"id": cid, "kind": "hlo", "text": text, "args": args, "compare": compare})


# ---------------------------------------------------------------------------------------------- conv
def conv(**kw):
    def f(x, w):
        return lax.conv_general_dilated(x, w, **kw)
    return f


NHWC = ("NHWC", "HWIO", "NHWC")
NCHW = ("NCHW", "OIHW", "NCHW")
jcase("conv_nhwc_same_f32", conv(window_strides=(1, 1), padding="SAME", dimension_numbers=NHWC),
      rndf((2, 6, 7, 3), np.float32), rndf((3, 3, 3, 4), np.float32), compare=F32)
jcase("conv_nchw_stride_f32", conv(window_strides=(2, 3), padding=((1, 2), (0, 1)), dimension_numbers=NCHW),
      rndf((2, 3, 9, 10), np.float32), rndf((5, 3, 3, 2), np.float32), compare=F32)
jcase("conv_dilations_f32", conv(window_strides=(1, 2), padding=((2, 1), (1, 1)), lhs_dilation=(2, 1),
                                 rhs_dilation=(1, 2), dimension_numbers=NCHW),
      rndf((1, 2, 5, 8), np.float32), rndf((3, 2, 3, 2), np.float32), compare=F32)
jcase("conv_negative_pad_f32", conv(window_strides=(1,), padding=((-1, 2),), dimension_numbers=("NWC", "WIO", "NWC")),
      rndf((2, 9, 3), np.float32), rndf((3, 3, 2), np.float32), compare=F32)
jcase("conv_feature_groups_f32", conv(window_strides=(1, 1), padding="VALID", feature_group_count=3,
                                      dimension_numbers=NHWC),
      rndf((2, 5, 5, 6), np.float32), rndf((2, 2, 2, 9), np.float32), compare=F32)
jcase("conv_depthwise_f32", conv(window_strides=(2, 2), padding="SAME", feature_group_count=4,
                                 dimension_numbers=NHWC),
      rndf((1, 6, 6, 4), np.float32), rndf((3, 3, 1, 4), np.float32), compare=F32)
jcase("conv_batch_groups_f32", conv(window_strides=(1, 1), padding="VALID", batch_group_count=2,
                                    dimension_numbers=NCHW),
      rndf((4, 3, 5, 5), np.float32), rndf((6, 3, 2, 2), np.float32), compare=F32)
jcase("conv_3d_f64", conv(window_strides=(1, 2, 1), padding="SAME", dimension_numbers=("NCDHW", "OIDHW", "NCDHW")),
      rndf((1, 2, 4, 5, 3), np.float64), rndf((2, 2, 2, 3, 2), np.float64), compare=F64)
jcase("conv_transpose_f32", lambda x, w: lax.conv_transpose(x, w, (2, 2), "SAME", dimension_numbers=NHWC),
      rndf((1, 4, 4, 2), np.float32), rndf((3, 3, 2, 3), np.float32), compare=F32)
jcase("conv_bf16", conv(window_strides=(1, 1), padding="SAME", dimension_numbers=NHWC),
      rnd((1, 5, 5, 4), ml_dtypes.bfloat16), rnd((3, 3, 4, 2), ml_dtypes.bfloat16))
jcase("conv_bf16_rounding", conv(window_strides=(1, 1), padding="VALID", dimension_numbers=NHWC),
      rndf((1, 4, 4, 8), ml_dtypes.bfloat16), rndf((3, 3, 8, 2), ml_dtypes.bfloat16),
      compare={"rtol": 1e-2, "atol": 1e-2})
jcase("conv_f16", conv(window_strides=(1, 1), padding="SAME", dimension_numbers=NHWC),
      rnd((1, 5, 5, 3), np.float16), rnd((3, 3, 3, 2), np.float16))
jcase("conv_bf16_to_f32", conv(window_strides=(1, 1), padding="SAME", dimension_numbers=NHWC,
                               preferred_element_type=jnp.float32),
      rndf((1, 5, 5, 3), ml_dtypes.bfloat16), rndf((3, 3, 3, 2), ml_dtypes.bfloat16), compare=F32)
jcase("conv_s8_to_s32", conv(window_strides=(1, 1), padding="SAME", dimension_numbers=NHWC,
                             preferred_element_type=jnp.int32),
      rnd((1, 5, 5, 3), np.int8, -128, 128), rnd((3, 3, 3, 2), np.int8, -128, 128))
jcase("conv_s32_wrap", conv(window_strides=(1,), padding="VALID", dimension_numbers=("NWC", "WIO", "NWC")),
      rnd((1, 6, 2), np.int32, -2**31, 2**31 - 1), rnd((3, 2, 2), np.int32, -2**31, 2**31 - 1))
jcase("conv_s8_wrap", conv(window_strides=(1,), padding="SAME", dimension_numbers=("NWC", "WIO", "NWC")),
      rnd((1, 6, 2), np.int8, -128, 128), rnd((3, 2, 2), np.int8, -128, 128))
jcase("conv_u8", conv(window_strides=(1,), padding="SAME", dimension_numbers=("NWC", "WIO", "NWC")),
      rnd((1, 6, 2), np.uint8, 0, 256), rnd((3, 2, 2), np.uint8, 0, 256))
jcase("conv_s64", conv(window_strides=(1,), padding="SAME", dimension_numbers=("NWC", "WIO", "NWC")),
      rnd((1, 6, 2), np.int64, -1000, 1000), rnd((3, 2, 2), np.int64, -1000, 1000))
jcase("conv_c64", conv(window_strides=(1,), padding="SAME", dimension_numbers=("NWC", "WIO", "NWC")),
      rnd((1, 6, 2), np.complex64), rnd((3, 2, 2), np.complex64))
jcase("conv_c128", conv(window_strides=(1,), padding="SAME", dimension_numbers=("NWC", "WIO", "NWC")),
      rnd((1, 6, 2), np.complex128), rnd((3, 2, 2), np.complex128))
jcase("conv_inf_kernel_padding", conv(window_strides=(1,), padding=((2, 2),), lhs_dilation=(2,),
                                      dimension_numbers=("NWC", "WIO", "NWC")),
      rnd((1, 4, 1), np.float32), np.array([[[np.inf]], [[1.0]], [[2.0]]], np.float32))
jcase("conv_empty_output", conv(window_strides=(1,), padding="VALID", dimension_numbers=("NWC", "WIO", "NWC")),
      rnd((1, 2, 1), np.float32), rnd((3, 1, 2), np.float32))

HCONV = """HloModule m
ENTRY e {{
  x = {lt} parameter(0)
  w = {rt} parameter(1)
  ROOT c = {ot} convolution(x, w), {attrs}
}}"""
hcase("conv_window_reversal", HCONV.format(lt="f32[1,7,2]", rt="f32[3,2,3]", ot="f32[1,7,3]",
                                           attrs="window={size=3 pad=1_1 rhs_reversal=1}, dim_labels=b0f_0io->b0f"),
      rnd((1, 7, 2), np.float32), rnd((3, 2, 3), np.float32))
hcase("conv_reversal_2d_dilated", HCONV.format(
    lt="f32[2,9,7,3]", rt="f32[3,2,3,4]", ot="f32[2,3,6,4]",
    attrs="window={size=3x2 stride=2x1 pad=1_0x0_1 lhs_dilate=1x1 rhs_dilate=2x2 rhs_reversal=1x0}, "
          "dim_labels=b01f_01io->b01f"),
    rnd((2, 9, 7, 3), np.float32), rnd((3, 2, 3, 4), np.float32))
hcase("conv_reversal_lhs_dilate_groups", HCONV.format(
    lt="f32[1,4,5]", rt="f32[2,2,3]", ot="f32[1,2,10]",
    attrs="window={size=3 pad=2_1 lhs_dilate=2 rhs_reversal=1}, dim_labels=bf0_oi0->bf0, feature_group_count=2"),
    rnd((1, 4, 5), np.float32), rnd((2, 2, 3), np.float32))
hcase("conv_s8_batch_groups_to_s32", HCONV.format(
    lt="s8[6,5,2]", rt="s8[2,2,6]", ot="s32[2,4,6]",
    attrs="window={size=2}, dim_labels=b0f_0io->b0f, batch_group_count=3"),
    rnd((6, 5, 2), np.int8, -128, 128), rnd((2, 2, 6), np.int8, -128, 128))
hcase("conv_s8_to_f32", HCONV.format(
    lt="s8[1,5,2]", rt="s8[2,2,3]", ot="f32[1,4,3]", attrs="window={size=2}, dim_labels=b0f_0io->b0f"),
    rnd((1, 5, 2), np.int8, -128, 128), rnd((2, 2, 3), np.int8, -128, 128))
hcase("conv_batch_groups_nb2", HCONV.format(lt="f32[4,5,2]", rt="f32[2,2,4]", ot="f32[2,4,4]",
                                            attrs="window={size=2}, dim_labels=b0f_0io->b0f, batch_group_count=2"),
      rnd((4, 5, 2), np.float32), rnd((2, 2, 4), np.float32))
hcase("conv_odd_labels", HCONV.format(lt="f32[2,6,3,5]", rt="f32[2,2,4,3]", ot="f32[3,4,4,3]",
                                      attrs="window={size=3x2 stride=1x2 pad=0_0x1_0}, dim_labels=f0b1_i1o0->1f0b"),
      rnd((2, 6, 3, 5), np.float32), rnd((2, 2, 4, 3), np.float32))
hcase("conv_neg_pad_lhs_dilate", HCONV.format(lt="f32[1,5,1]", rt="f32[2,1,1]", ot="f32[1,9,1]",
                                              attrs="window={size=2 pad=-1_2 lhs_dilate=2}, dim_labels=b0f_0io->b0f"),
      rnd((1, 5, 1), np.float32), rnd((2, 1, 1), np.float32))
hcase("conv_no_spatial", HCONV.format(lt="f32[3,4]", rt="f32[4,2]", ot="f32[3,2]", attrs="dim_labels=bf_io->bf"),
      rnd((3, 4), np.float32), rnd((4, 2), np.float32))
hcase("conv_s16_to_s32_wrap", HCONV.format(lt="s16[1,4,2]", rt="s16[2,2,2]", ot="s32[1,3,2]",
                                           attrs="window={size=2}, dim_labels=b0f_0io->b0f"),
      rnd((1, 4, 2), np.int16, -2**15, 2**15), rnd((2, 2, 2), np.int16, -2**15, 2**15))
hcase("conv_f16_to_f32", HCONV.format(lt="f16[1,4,2]", rt="f16[2,2,2]", ot="f32[1,3,2]",
                                      attrs="window={size=2}, dim_labels=b0f_0io->b0f"),
      rndf((1, 4, 2), np.float16), rndf((2, 2, 2), np.float16), compare=F32)


# ---------------------------------------------------------------------------------------- reduce-window
def rw(init, op, dims, strides, padding, base=None, wdil=None):
    def f(x):
        return lax.reduce_window(x, np.asarray(init, x.dtype), op, dims, strides, padding, base, wdil)
    return f


for dt, nm in ((np.float32, "f32"), (np.float64, "f64"), (np.float16, "f16"), (ml_dtypes.bfloat16, "bf16"),
               (np.int32, "s32"), (np.int8, "s8"), (np.uint8, "u8"), (np.int64, "s64"), (np.uint32, "u32")):
    x = rnd((6, 7), dt, 0 if nm.startswith("u") else -4, 8)
    jcase(f"rw_max_{nm}", rw(-np.inf if np.dtype(dt).kind == "f" or nm == "bf16" else np.iinfo(dt).min,
                              lax.max, (2, 3), (2, 1), ((0, 1), (1, 1))), x)
    jcase(f"rw_sum_{nm}", rw(0, lax.add, (3, 2), (1, 2), ((1, 1), (0, 1))), x)
for dt, nm in ((ml_dtypes.float8_e4m3fn, "f8e4m3fn"), (ml_dtypes.float8_e5m2, "f8e5m2"),
               (ml_dtypes.float8_e4m3fnuz, "f8e4m3fnuz"), (ml_dtypes.float8_e4m3b11fnuz, "f8e4m3b11fnuz"),
               (ml_dtypes.float8_e5m2fnuz, "f8e5m2fnuz"), (ml_dtypes.float8_e4m3, "f8e4m3"),
               (ml_dtypes.float8_e3m4, "f8e3m4"), (ml_dtypes.int4, "s4"), (ml_dtypes.uint4, "u4"),
               (np.int16, "s16"), (np.uint16, "u16"), (np.uint64, "u64")):
    x = rnd((5, 6), dt, 0 if nm.startswith("u") else -4, 7)
    if nm.startswith("f8"):  # sums exact in the type: XLA's order with padding is not row-major
        x = rnd((5, 6), dt, -1, 1)
    jcase(f"rw_sum_{nm}", rw(0, lax.add, (2, 2), (1, 1), ((1, 0), (0, 1))), x)
    jcase(f"rw_max_{nm}", rw(0, lax.max, (2, 3), (1, 2), "SAME"), x)
    if nm.startswith("f8"):
        jcase(f"rw_sum_{nm}_rounding", rw(0, lax.add, (3, 4), (1, 2), "VALID"), rndf((6, 9), dt) * dt(8))
        jcase(f"conv_{nm}", conv(window_strides=(1,), padding="SAME", dimension_numbers=("NWC", "WIO", "NWC")),
              rnd((1, 6, 2), dt, -2, 2), rnd((3, 2, 2), dt, -2, 2))
        jcase(f"conv_{nm}_rounding", conv(window_strides=(1, 1), padding="SAME", dimension_numbers=NHWC),
              rndf((1, 5, 5, 8), dt), rndf((3, 3, 8, 4), dt))
        jcase(f"conv_{nm}_to_f32", conv(window_strides=(1,), padding="SAME", preferred_element_type=jnp.float32,
                                       dimension_numbers=("NWC", "WIO", "NWC")),
              rnd((1, 6, 2), dt, -2, 2), rnd((3, 2, 2), dt, -2, 2))
    if nm in ("s4", "u4", "s16", "u16", "u64"):
        jcase(f"conv_{nm}", conv(window_strides=(1,), padding="SAME", dimension_numbers=("NWC", "WIO", "NWC")),
              rnd((1, 6, 2), dt, 0 if nm.startswith("u") else -8, 8), rnd((3, 2, 2), dt, 0 if nm.startswith("u") else -8, 8))
jcase("conv_pred", conv(window_strides=(1,), padding="SAME", dimension_numbers=("NWC", "WIO", "NWC")),
      rnd((1, 6, 2), np.bool_), rnd((3, 2, 2), np.bool_))
jcase("conv_f64_to_f32_pref", conv(window_strides=(1,), padding="SAME", dimension_numbers=("NWC", "WIO", "NWC"),
                                   preferred_element_type=jnp.float64),
      rnd((1, 6, 2), np.float32), rnd((3, 2, 2), np.float32))
jcase("rw_min_f32", rw(np.inf, lax.min, (2, 2), (1, 1), "SAME"), rnd((5, 5), np.float32))
jcase("rw_mul_s32", rw(1, lax.mul, (2, 2), (1, 1), "VALID"), rnd((4, 5), np.int32, -100, 100))
jcase("rw_sum_s8_wrap", rw(0, lax.add, (3,), (1,), "VALID"), rnd((20,), np.int8, -128, 128))
jcase("rw_sum_init5_pad", rw(5.0, lax.add, (3,), (2,), ((2, 2),)), rnd((9,), np.float32))
jcase("rw_max_base_window_dilation", rw(-np.inf, lax.max, (2, 2), (1, 2), ((1, 0), (2, 1)), (2, 1), (1, 2)),
      rnd((4, 6), np.float32))
jcase("rw_sum_base_dilation", rw(0.0, lax.add, (3,), (1,), ((1, 1),), (3,), (2,)), rnd((5,), np.float32))
jcase("rw_sum_bf16_rounding", rw(0.0, lax.add, (64,), (16,), "VALID"),
      (rng.random(256) * 3 + 1).astype(ml_dtypes.bfloat16))
# XLA:CPU's window order is not row-major for every padding (see hlo_interp/ops/window.py): with
# rounding at every step the results then differ by a few ulps: compared with a tolerance.
jcase("rw_sum_bf16_pad_order", rw(0.0, lax.add, (3, 3), (1, 1), ((0, 0), (0, 1))),
      (rng.random((6, 6)) * 3 + 1).astype(ml_dtypes.bfloat16), compare={"rtol": 0.03, "atol": 0})
jcase("rw_sum_f32_order", rw(0.0, lax.add, (5, 5), (1, 1), "SAME"), rndf((12, 12), np.float32))
jcase("rw_sum_f16_rounding", rw(0.0, lax.add, (40,), (8,), "VALID"), (rng.random(200) * 50).astype(np.float16))
jcase("rw_max_nan_negzero", rw(-np.inf, lax.max, (2,), (1,), "VALID"),
      np.array([0.0, -0.0, -0.0, np.nan, 1.0, -0.0, 0.0, -np.inf], np.float32))
jcase("rw_min_negzero", rw(np.inf, lax.min, (2,), (1,), "VALID"),
      np.array([0.0, -0.0, 0.0, 0.0, 1.0, -0.0, np.nan, 2.0], np.float32))
jcase("rw_and_pred", rw(True, lax.bitwise_and, (2, 2), (1, 1), "SAME"), rnd((4, 4), np.bool_))
jcase("rw_or_pred", rw(False, lax.bitwise_or, (3,), (1,), "SAME"), rnd((8,), np.bool_))
jcase("rw_sum_c64", rw(0, lax.add, (2, 2), (1, 1), "SAME"), rnd((3, 4), np.complex64))
jcase("rw_global_max", rw(-np.inf, lax.max, (1, 10, 10, 1), (1, 1, 1, 1), "VALID"), rndf((2, 10, 10, 3), np.float32))
jcase("rw_avgpool", lambda x: lax.reduce_window(x, 0.0, lax.add, (1, 2, 2, 1), (1, 2, 2, 1), "VALID") / 4.0,
      rndf((2, 6, 6, 3), np.float32), compare=F32)


def argmax_pool(x):
    idx = lax.broadcasted_iota(jnp.int32, x.shape, 0)

    def red(a, b):
        av, ai = a
        bv, bi = b
        pick = (av > bv) | ((av == bv) & (ai < bi))
        return lax.select(pick, av, bv), lax.select(pick, ai, bi)
    return lax.reduce_window((x, idx), (np.float32(-np.inf), np.int32(0)), red, (3,), (2,), ((1, 1),))


jcase("rw_variadic_argmax", argmax_pool, rnd((11,), np.float32))

HRW = """HloModule m
{comp}
ENTRY e {{
  x = {xt} parameter(0)
  i = {it} constant({iv})
  ROOT r = {ot} reduce-window(x, i), window={{{win}}}, to_apply=f
}}"""
hcase("rw_general_sumsq", HRW.format(
    comp="f { a = f32[] parameter(0)  b = f32[] parameter(1)  m = f32[] multiply(b, b)  ROOT s = f32[] add(a, m) }",
    xt="f32[7]", it="f32[]", iv="0", ot="f32[4]", win="size=3 stride=2 pad=1_1"), rnd((7,), np.float32))
hcase("rw_general_sub_init", HRW.format(
    comp="f { a = f32[] parameter(0)  b = f32[] parameter(1)  ROOT s = f32[] subtract(a, b) }",
    xt="f32[6]", it="f32[]", iv="10", ot="f32[6]", win="size=3 pad=1_1 lhs_dilate=1"), rnd((6,), np.float32))
hcase("rw_negative_padding", HRW.format(
    comp="f { a = s32[] parameter(0)  b = s32[] parameter(1)  ROOT s = s32[] add(a, b) }",
    xt="s32[8]", it="s32[]", iv="0", ot="s32[3]", win="size=2 stride=2 pad=-1_-1"), rnd((8,), np.int32))
hcase("rw_bf16_normalized", HRW.format(
    comp="f { a = bf16[] parameter(0)  b = bf16[] parameter(1)  ca = f32[] convert(a)  cb = f32[] convert(b)\n"
         "  s = f32[] add(ca, cb)  ROOT r = bf16[] convert(s) }",
    xt="bf16[100]", it="bf16[]", iv="0", ot="bf16[2]", win="size=50 stride=50"),
    (rng.random(100) * 3 + 1).astype(ml_dtypes.bfloat16))
hcase("rw_xor_u8", HRW.format(
    comp="f { a = u8[] parameter(0)  b = u8[] parameter(1)  ROOT s = u8[] xor(a, b) }",
    xt="u8[9]", it="u8[]", iv="255", ot="u8[4]", win="size=3 stride=2"), rnd((9,), np.uint8, 0, 256))


# ---------------------------------------------------------------------------------- select-and-scatter
def sas(window, strides, padding):
    from jax._src.lax.windowed_reductions import _select_and_scatter_add

    def f(src, x):
        return _select_and_scatter_add(src, x, lax.ge_p, window, strides, padding)
    return f


def maxpool_grad(x, g):
    def pool(x):
        return lax.reduce_window(x, -np.inf, lax.max, (1, 3, 3, 1), (1, 2, 2, 1), "SAME")
    return jax.vjp(pool, x)[1](g)[0]


jcase("sas_maxpool_grad", maxpool_grad, rnd((1, 7, 7, 2), np.float32), rnd((1, 4, 4, 2), np.float32))
jcase("sas_ge_overlap_ties", sas((3,), (1,), ((0, 0),)), rnd((6,), np.float32),
      np.array([1, 1, 3, 3, 1, 1, 0, 2], np.float32))
jcase("sas_ge_pad", sas((2, 3), (2, 1), ((1, 0), (1, 1))), rnd((2, 5), np.float32), rnd((3, 5), np.float32, -2, 2))
jcase("sas_bf16", sas((2,), (2,), ((0, 0),)), rnd((4,), ml_dtypes.bfloat16), rnd((8,), ml_dtypes.bfloat16))
jcase("sas_s32", sas((3,), (1,), ((1, 1),)), rnd((7,), np.int32), rnd((7,), np.int32, -3, 3))

for dt, nm in ((np.float16, "f16"), (np.float64, "f64"), (np.int8, "s8"), (np.uint8, "u8"), (np.int64, "s64"),
               (np.uint32, "u32"), (np.int16, "s16"), (ml_dtypes.float8_e4m3fn, "f8e4m3fn"),
               (ml_dtypes.float8_e5m2, "f8e5m2"), (ml_dtypes.int4, "s4"), (ml_dtypes.uint4, "u4")):
    lo = 0 if nm.startswith("u") else -3
    jcase(f"sas_{nm}", sas((3,), (2,), ((1, 1),)), rnd((5,), dt, lo, 3), rnd((9,), dt, lo, 3))
for dt, nm in ((ml_dtypes.int2, "s2"), (ml_dtypes.uint2, "u2"), (ml_dtypes.float4_e2m1fn, "f4e2m1fn"),
               (ml_dtypes.float8_e8m0fnu, "f8e8m0fnu")):
    x = rnd((4, 5), dt, 0 if nm.startswith("u") else -2, 2) if nm[0] in "su" else \
        np.asarray(rng.choice([0.5, 1.0, 2.0, 4.0], (4, 5))).astype(dt)
    jcase(f"rw_max_{nm}", rw(x.min(), lax.max, (2, 2), (1, 1), "SAME"), x)
    jcase(f"rw_sum_{nm}", rw(0, lax.add, (2, 1), (1, 1), "VALID"), x)
    if nm not in ("f8e8m0fnu", "f4e2m1fn"):  # XLA's window order with padding is not row-major: no
        # exact comparison for a type that rounds by whole binades
        jcase(f"rw_sum_{nm}_pad", rw(x.min(), lax.add, (2, 2), (1, 1), ((1, 0), (1, 0))), x)
    jcase(f"conv_{nm}", conv(window_strides=(1,), padding="SAME", dimension_numbers=("NWC", "WIO", "NWC")),
          np.ascontiguousarray(x.reshape(1, 4, 5)[:, :, :2]), np.ascontiguousarray(x[:3, :4].reshape(3, 2, 2)))
jcase("rw_sum_c128", rw(0, lax.add, (2, 2), (1, 2), "SAME"), rnd((3, 5), np.complex128))
jcase("rw_mul_c64", rw(1, lax.mul, (2,), (1,), "VALID"), rnd((6,), np.complex64, -2, 2))
jcase("conv_u32", conv(window_strides=(1,), padding="SAME", dimension_numbers=("NWC", "WIO", "NWC")),
      rnd((1, 6, 2), np.uint32, 0, 2**32 - 1), rnd((3, 2, 2), np.uint32, 0, 2**32 - 1))

HSAS = """HloModule m
sel {{ a = {t}[] parameter(0)  b = {t}[] parameter(1)  ROOT c = pred[] compare({x}, {y}), direction={d} }}
sc {{ a = {t}[] parameter(0)  b = {t}[] parameter(1)  ROOT s = {t}[] {sop}(a, b) }}
ENTRY e {{
  x = {t}[{n}] parameter(0)
  s = {t}[{m}] parameter(1)
  i = {t}[] constant({iv})
  ROOT r = {t}[{n}] select-and-scatter(x, s, i), window={{{win}}}, select=sel, scatter=sc
}}"""
hcase("sas_lt_min_select", HSAS.format(t="f32", x="a", y="b", d="LT", sop="add", n=8, m=6, iv=0,
                                       win="size=3"),
      np.array([3, 1, 1, 4, 0, 0, 2, 2], np.float32), rnd((6,), np.float32))
hcase("sas_swapped_gt_mul", HSAS.format(t="f32", x="b", y="a", d="GT", sop="multiply", n=8, m=4, iv=1,
                                        win="size=3 stride=2 pad=1_0"),
      rnd((8,), np.float32), rnd((4,), np.float32))
hcase("sas_max_scatter_s32", HSAS.format(t="s32", x="a", y="b", d="GE", sop="maximum", n=9, m=7, iv=-100,
                                         win="size=3"),
      rnd((9,), np.int32), rnd((7,), np.int32, -50, 50))
hcase("sas_ne_general", HSAS.format(t="s32", x="a", y="b", d="NE", sop="add", n=6, m=4, iv=0,
                                    win="size=3"),
      np.array([1, 1, 2, 2, 3, 3], np.int32), rnd((4,), np.int32))

# A small CNN: conv + relu + max pool + avg pool, its loss and gradient (before and after optimization).


def cnn_loss(params, x):
    w1, w2 = params
    h = lax.conv_general_dilated(x, w1, (1, 1), "SAME", dimension_numbers=NHWC)
    h = jnp.maximum(h, 0)
    h = lax.reduce_window(h, -np.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")
    h = lax.conv_general_dilated(h, w2, (2, 2), "SAME", dimension_numbers=NHWC)
    return jnp.mean(h ** 2)


jcase("cnn_grad", lambda w1, w2, x: jax.grad(cnn_loss)((w1, w2), x),
      rndf((3, 3, 2, 4), np.float32), rndf((3, 3, 4, 3), np.float32), rndf((2, 8, 8, 2), np.float32),
      compare={"rtol": 1e-4, "atol": 1e-5})


# ---------------------------------------------------------------------------------------------- running

def declare() -> list[Decl]:
    return [Decl(FAMILY, c["id"], c["args"], hlo=c.get("text"), fn=c.get("fn"), compare=c["compare"], keep_unused=False)
            for c in CASES]
