"""xla_suite: XLA:CPU's results for the classes of difference the differential run over XLA's own test
suite found (tools/xla_testsuite.py run; tests/golden/README.md, "XLA's own test suite").

Dev-only (needs jax/jaxlib); the tests (tests/test_golden.py, tests/test_xla_suite.py) only read the
committed files.  Each case is a minimal hand-written text of one class (the XLA test source where it was
found is named), parsed by XLA's parser, converted to StableHLO, compiled and run by the XLA:CPU client
JAX uses (tools/oracle/runner.py).

Each case is one case directory (tools/oracle/writer.py; tests/golden/README.md).

    python -m tools.oracle regen xla_suite
"""
from __future__ import annotations

import ml_dtypes
import numpy as np

from ..core import Decl

FAMILY = "xla_suite"  # tests/golden/xla_suite/
R = np.random.default_rng(29)
CASES = []


def case(cid, source, text, *args, compare="bits"):
    CASES.append((cid, source, text, args, compare))


def _f32(*shape):
    return R.standard_normal(shape).astype(np.float32)


# A reduce-window of scalars is its operands (XLA:CPU's algebraic simplifier): the init value is not
# applied (xla/hlo/parser/hlo_parser_test.cc, reduce_window_variadic)
_RW2 = """HloModule m
r {
  a1 = f32[] parameter(0)  a2 = f32[] parameter(1)  b1 = f32[] parameter(2)  b2 = f32[] parameter(3)
  v1 = f32[] add(a1, b1)  v2 = f32[] multiply(a2, b2)
  ROOT t = (f32[], f32[]) tuple(v1, v2)
}
ENTRY e {
  x = f32[] parameter(0)  y = f32[] parameter(1)  i = f32[] constant(1)  j = f32[] constant(3)
  ROOT w = (f32[], f32[]) reduce-window(x, y, i, j), to_apply=r
}"""
case("reduce_window_scalar_variadic", "xla/hlo/parser/hlo_parser_test.cc", _RW2,
     np.float32(42), np.float32(-2.5))
case("reduce_window_scalar", "xla/hlo/parser/hlo_parser_test.cc", """HloModule m
r { a = s32[] parameter(0)  b = s32[] parameter(1)  ROOT s = s32[] add(a, b) }
ENTRY e { x = s32[] parameter(0)  i = s32[] constant(5)
  ROOT w = s32[] reduce-window(x, i), to_apply=r }""", np.int32(7))


# Float operands with an integer result: the dot/convolution in the operands' type (bf16 rounds), then
# the float->int convert (xla/hlo/transforms/expanders/convolution_type_canonicalizer_test.cc)
for T, dt in (("bf16", ml_dtypes.bfloat16), ("f16", np.float16)):
    for out in ("s32", "u8", "s8"):
        case(f"dot_{T}_to_{out}", "xla/hlo/transforms/expanders/convolution_type_canonicalizer_test.cc",
             f"""HloModule m
ENTRY e {{ a = {T}[200,12] parameter(0)  b = {T}[12,3] parameter(1)
  ROOT c = {out}[200,3] dot(a, b), lhs_contracting_dims={{1}}, rhs_contracting_dims={{0}} }}""",
             (R.standard_normal((200, 12)) * 4).astype(dt), R.standard_normal((12, 3)).astype(dt))
    case(f"convolution_{T}_to_s32", "xla/hlo/transforms/expanders/convolution_type_canonicalizer_test.cc",
         f"""HloModule m
ENTRY e {{ a = {T}[1,200,4] parameter(0)  b = {T}[3,4,2] parameter(1)
  ROOT c = s32[1,198,2] convolution(a, b), window={{size=3}}, dim_labels=b0f_0io->b0f }}""",
         (R.standard_normal((1, 200, 4)) * 4).astype(dt), R.standard_normal((3, 4, 2)).astype(dt))
case("convolution_bf16_to_s32_1x1", "xla/hlo/transforms/expanders/convolution_type_canonicalizer_test.cc",
     """HloModule m
ENTRY e { a = bf16[1,64,64,1] parameter(0)  b = bf16[1,1,1,1] parameter(1)
  ROOT c = s32[1,64,64,1] convolution(a, b), window={size=1x1}, dim_labels=b01f_01io->b01f }""",
     (R.standard_normal((1, 64, 64, 1)) * 4).astype(ml_dtypes.bfloat16), np.array(-1.75, ml_dtypes.bfloat16).reshape(1, 1, 1, 1))


# A gather from a zero-element operand (a collapsed dimension of size 0, slice size 0) whose result has
# elements: zeros (xla/hlo/transforms/simplifiers/gather_simplifier_test.cc)
case("gather_from_zero_element_operand", "xla/hlo/transforms/simplifiers/gather_simplifier_test.cc",
     """HloModule m
ENTRY e { operand = f32[0,2] parameter(0)  indices = s32[3] parameter(1)
  ROOT g = f32[3,2] gather(operand, indices), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0},
    index_vector_dim=1, slice_sizes={0,2} }""", np.zeros((0, 2), np.float32), np.array([0, 5, -1], np.int32))


# bf16 excess precision: a bf16 arithmetic result read as f32 (an f32 convert of it, or an operand of a
# dot/convolution with an f32 result) is XLA:CPU's f32 value before the rounding
# (xla/hlo/transforms/simplifiers/float_normalization_test.cc, cublas_gemm_rewriter_test.cc,
# fusion_emitter_int4_device_test.cc)
_BF = ml_dtypes.bfloat16
# f32 transcendentals and sums agree to an ulp or two (ours are not XLA's polynomials and order): the
# rounding to bf16 this class is about is 2**-8 relative
_F32_TOL = {"rtol": 1e-6, "atol": 1e-6}
case("excess_precision_convert_of_dot", "xla/hlo/transforms/simplifiers/float_normalization_test.cc",
     """HloModule m
ENTRY e { a = bf16[8,16] parameter(0)  b = bf16[16,8] parameter(1)
  d = bf16[8,8] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  c = f32[8,8] convert(d)
  ROOT t = (f32[8,8], bf16[8,8]) tuple(c, d) }""", R.standard_normal((8, 16)).astype(_BF),
     R.standard_normal((16, 8)).astype(_BF), compare=_F32_TOL)
case("excess_precision_dot_operand", "xla/backends/gpu/codegen/triton/fusion_emitter_int4_device_test.cc",
     """HloModule m
ENTRY e { a = bf16[16,8] parameter(0)  w = s4[16,8] parameter(1)  b = bf16[16,4] parameter(2)
  wb = bf16[16,8] convert(w)
  m = bf16[16,8] multiply(a, wb)
  ROOT d = f32[8,4] dot(m, b), lhs_contracting_dims={0}, rhs_contracting_dims={0} }""",
     R.standard_normal((16, 8)).astype(_BF), R.integers(-8, 8, (16, 8)).astype(ml_dtypes.int4),
     R.standard_normal((16, 4)).astype(_BF))
for op in ("add", "multiply", "divide", "power"):
    case(f"excess_precision_convert_of_{op}", "xla/hlo/transforms/simplifiers/float_normalization_test.cc",
         f"""HloModule m
ENTRY e {{ a = bf16[64] parameter(0)  b = bf16[64] parameter(1)
  r = bf16[64] {op}(a, b)
  ROOT c = f32[64] convert(r) }}""", np.abs(R.standard_normal(64)).astype(_BF) + _BF(0.5),
         R.standard_normal(64).astype(_BF), compare=_F32_TOL if op == "power" else "bits")
for op in ("exponential", "tanh", "sqrt"):
    case(f"excess_precision_convert_of_{op}", "xla/hlo/transforms/simplifiers/float_normalization_test.cc",
         f"""HloModule m
ENTRY e {{ a = bf16[64] parameter(0)
  r = bf16[64] {op}(a)
  ROOT c = f32[64] convert(r) }}""", np.abs(R.standard_normal(64)).astype(_BF),
         compare="bits" if op == "sqrt" else _F32_TOL)
# what keeps its rounding: a convert to f64, an f16 result; in a chain, each bf16 operation rounds before
# the next one reads it (only the convert's own operand is read wide)
case("excess_precision_not_f64", "xla/hlo/transforms/simplifiers/float_normalization_test.cc", """HloModule m
ENTRY e { a = bf16[64] parameter(0)  b = bf16[64] parameter(1)
  r = bf16[64] multiply(a, b)
  ROOT c = f64[64] convert(r) }""", R.standard_normal(64).astype(_BF), R.standard_normal(64).astype(_BF))
case("excess_precision_chain", "xla/hlo/transforms/simplifiers/float_normalization_test.cc",
     """HloModule m
ENTRY e { a = bf16[64] parameter(0)  b = bf16[64] parameter(1)
  r = bf16[64] multiply(a, b)  s = bf16[64] add(r, a)  n = bf16[64] negate(r)
  c = f32[64] convert(s)  d = f32[64] convert(n)
  ROOT t = (f32[64], f32[64]) tuple(c, d) }""", R.standard_normal(64).astype(_BF),
     R.standard_normal(64).astype(_BF))
case("excess_precision_not_f16", "xla/hlo/transforms/simplifiers/float_normalization_test.cc", """HloModule m
ENTRY e { a = f16[64] parameter(0)  b = f16[64] parameter(1)
  r = f16[64] multiply(a, b)
  ROOT c = f32[64] convert(r) }""", R.standard_normal(64).astype(np.float16), R.standard_normal(64).astype(np.float16))
case("excess_precision_convolution_operand", "xla/hlo/transforms/simplifiers/float_normalization_test.cc",
     """HloModule m
ENTRY e { a = bf16[1,20,4] parameter(0)  s = bf16[1,20,4] parameter(1)  k = bf16[3,4,2] parameter(2)
  m = bf16[1,20,4] multiply(a, s)
  ROOT c = f32[1,18,2] convolution(m, k), window={size=3}, dim_labels=b0f_0io->b0f }""",
     R.standard_normal((1, 20, 4)).astype(_BF), R.standard_normal((1, 20, 4)).astype(_BF),
     R.standard_normal((3, 4, 2)).astype(_BF), compare=_F32_TOL)


# XLA's ProductOfElementaryHouseholderReflectors after its Qr: Q of the QR decomposition
# (xla/tests/matmul_test.cc, MatrixInverse)
for T, dt, shape in (("f32", np.float32, (2, 6, 2, 2)), ("f32", np.float32, (3, 5, 3)), ("f64", np.float64, (4, 4))):
    dims = ",".join(map(str, shape))
    tdims = ",".join(map(str, shape[:-2] + (min(shape[-2:]),)))
    case(f"householder_product_{T}_{'x'.join(map(str, shape))}", "xla/tests/matmul_test.cc", f"""HloModule m
ENTRY e {{ a = {T}[{dims}] parameter(0)
  qr = ({T}[{dims}], {T}[{tdims}]) custom-call(a), custom_call_target="Qr"
  r = {T}[{dims}] get-tuple-element(qr), index=0
  t = {T}[{tdims}] get-tuple-element(qr), index=1
  q = {T}[{dims}] custom-call(r, t), custom_call_target="ProductOfElementaryHouseholderReflectors"
  ROOT o = ({T}[{dims}], {T}[{dims}]) tuple(q, r) }}""", R.standard_normal(shape).astype(dt),
         compare=_F32_TOL if T == "f32" else {"rtol": 1e-12, "atol": 1e-12})



# A get-tuple-element of a tuple reads the tuple's operand (XLA's tuple simplification), so what only
# the unread elements need is dead and never runs: here a rng-bit-generator with an f32 state, which no
# kernel takes (xla/tools/hlo_extractor_test.cc)
case("dead_rng_bit_generator_f32_state", "xla/tools/hlo_extractor_test.cc", """HloModule m
ENTRY e { p = f32[4] parameter(0)
  r = (f32[4], f32[4]) rng-bit-generator(p), algorithm=rng_default
  n = f32[4] negate(p)
  t = ((f32[4], f32[4]), f32[4]) tuple(r, n)
  g = f32[4] get-tuple-element(t), index=1
  ROOT a = f32[4] multiply(g, p) }""", _f32(4))


# FFT of an operand with no elements: an empty result, whatever fft_length says
# (xla/hlo/evaluator/hlo_evaluator_test.cc, 1D_FFT_1_on_c64x1x1x1x0 and 3D_FFT_1x1x1_on_c64x0x1x0x1)
for dims, lens in (((1, 1, 1, 0), (1,)), ((0, 1, 0, 1), (1, 1, 1)), ((3, 0), (4,))):
    d = ",".join(map(str, dims))
    case(f"fft_zero_elements_{'x'.join(map(str, dims))}", "xla/hlo/evaluator/hlo_evaluator_test.cc", f"""HloModule m
ENTRY e {{ p = c64[{d}] parameter(0)
  ROOT f = c64[{d}] fft(p), fft_type=FFT, fft_length={{{",".join(map(str, lens))}}} }}""",
         np.zeros(dims, np.complex64))


# A sort comparator that reads its bf16 keys through f32 `bitcast-convert`s (XLA's TopK comparator,
# descending in the total order, ties by the s32 operand): evaluated on whole arrays, not one comparison
# at a time (xla/service/spmd/spmd_partitioner_test.cc)
_TOPK_CMP = """HloModule m
cmp { a = bf16[] parameter(0)  ca = f32[] convert(a)  ia = s32[] bitcast-convert(ca)  z = s32[] constant(0)
  na = pred[] compare(ia, z), direction=LT  mx = u32[] constant(2147483647)
  ua = u32[] bitcast-convert(ca)  sa = u32[] subtract(mx, ua)  ja = s32[] bitcast-convert(sa)
  ka = s32[] select(na, ja, ia)
  b = bf16[] parameter(1)  cb = f32[] convert(b)  ib = s32[] bitcast-convert(cb)
  nb = pred[] compare(ib, z), direction=LT  ub = u32[] bitcast-convert(cb)  sb = u32[] subtract(mx, ub)
  jb = s32[] bitcast-convert(sb)  kb = s32[] select(nb, jb, ib)
  gt = pred[] compare(ka, kb), direction=GT  lt = pred[] compare(kb, ka), direction=GT
  eq = pred[] compare(gt, lt), direction=EQ
  x = s32[] parameter(2)  y = s32[] parameter(3)  xy = pred[] compare(x, y), direction=LT
  ROOT r = pred[] select(eq, xy, gt) }
ENTRY e { k = bf16[2,3000] parameter(0)  i = s32[2,3000] parameter(1)
  ROOT s = (bf16[2,3000], s32[2,3000]) sort(k, i), dimensions={1}, is_stable=true, to_apply=cmp }"""
_k = (R.standard_normal((2, 3000)) * 3).astype(_BF)
_k[0, :8] = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, -np.nan, 0.0, -0.0], np.float32).astype(_BF)
case("sort_comparator_bitcast_convert_bf16", "xla/service/spmd/spmd_partitioner_test.cc", _TOPK_CMP, _k,
     R.permutation(6000).astype(np.int32).reshape(2, 3000))


# A reduce inside a fusion computation the text gives: XLA's TreeReductionRewriter does not go there, so
# the fold is sequential from init, row-major, the init applied once (bf16: bit-exact; f32: vectorized,
# within the tolerance) (xla/hlo/utils/hlo_traversal_test.cc)
_FUSED_REDUCE = """HloModule m
add { a = {T}[] parameter(0)  b = {T}[] parameter(1)  ROOT s = {T}[] add(a, b) }
fc { x = {T}[{S}] parameter(0)  i = {T}[] parameter(1)
  ROOT r = {T}[{R}] reduce(x, i), dimensions={{D}}, to_apply=add }
ENTRY e { x = {T}[{S}] parameter(0)  i = {T}[] parameter(1)
  ROOT f = {T}[{R}] fusion(x, i), kind=kLoop, calls=fc }"""
for T, dt, S, D, init in (("bf16", _BF, (1000,), (0,), 0.5), ("bf16", _BF, (30, 40), (0, 1), 0.0),
                          ("bf16", _BF, (4, 100, 3), (1,), -1.25), ("f32", np.float32, (2, 1051), (1,), 0.5),
                          ("f32", np.float32, (128,), (0,), 1.117622)):
    R_ = ",".join(str(n) for a, n in enumerate(S) if a not in D)
    x = np.ones(S, dt) if S == (1000,) else (R.standard_normal(S) * 2).astype(dt)
    case(f"fused_reduce_{T}_{'x'.join(map(str, S))}", "xla/hlo/utils/hlo_traversal_test.cc",
         _FUSED_REDUCE.replace("{T}", T).replace("{S}", ",".join(map(str, S))).replace("{R}", R_)
         .replace("{D}", ",".join(map(str, D))), x, np.array(init, dt),
         compare="bits" if T == "bf16" else _F32_TOL)


# A variadic scatter (add into one operand, multiply into the other) whose indices repeat and fall out of
# bounds; two different constant operands (with two equal ones XLA:CPU writes both outputs into one
# buffer: tests/test_xla_suite.py) (xla/backends/gpu/transforms/scatter_slice_simplifier_test.cc)
case("variadic_scatter_add_multiply", "xla/backends/gpu/transforms/scatter_slice_simplifier_test.cc", """HloModule m
f { a0 = f32[] parameter(0)  a1 = f32[] parameter(1)  b0 = f32[] parameter(2)  b1 = f32[] parameter(3)
  s = f32[] add(a0, b0)  p = f32[] multiply(a1, b1)
  ROOT t = (f32[], f32[]) tuple(s, p) }
ENTRY e { i = s32[4] parameter(0)  v0 = f32[4] parameter(1)  v1 = f32[4] parameter(2)
  a = f32[9] constant(0)  b = f32[9] constant(1)
  ROOT r = (f32[9], f32[9]) scatter(a, b, i, v0, v1), update_window_dims={}, inserted_window_dims={0},
    scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=f }""",
     np.array([5, 2, 0, -4], np.int32), np.array([0.5, -0.25, 2.0, 3.0], np.float32),
     np.array([4.0, 1.5, -1.0, 7.0], np.float32))


# A custom call without side effects whose result has no elements: XLA's ZeroSizedHloElimination makes it
# an empty constant, so even an unknown target runs (xla/service/gpu/ir_emission_utils_test.cc)
case("zero_size_unknown_custom_call", "xla/service/gpu/ir_emission_utils_test.cc", """HloModule m
ENTRY e { p = f32[3] parameter(0)
  c = u8[0] custom-call(p), custom_call_target="no_such_target"
  ROOT t = (u8[0], f32[3]) tuple(c, p) }""", _f32(3))


# Complex division with inf/NaN parts at run time (XLA:CPU's EmitComplexDivide: Smith's algorithm, then
# its infinite-numerator and zero-denominator cases); the same constants only are folded while compiling
# and give nan+nan j for (nan+inf j)/(1+1j) (xla/service/elemental_ir_emitter_test.cc)
_cd = np.array([complex(1, np.inf), complex(np.inf, 1), complex(np.inf, np.nan), complex(np.inf, np.inf),
                complex(np.nan, np.inf), complex(1, 1), complex(np.inf, 2), complex(-np.inf, np.nan)], np.complex64)
case("complex_divide_inf_nan_parts", "xla/service/elemental_ir_emitter_test.cc", """HloModule m
ENTRY e { a = c64[8] parameter(0)  b = c64[8] parameter(1)  ROOT d = c64[8] divide(a, b) }""",
     _cd, np.array([1 + 1j, 1 + 1j, 2 - 1j, 1 + 1j, 1 + 1j, 0, 0.5 + 3j, -1 + 0j], np.complex64))


# A reduce with as many result elements as operand elements (dimensions of size 1 reduced) is a reshape:
# XLA's algebraic simplifier drops the init value and the reducer (a non-identity init shows it)
# (xla/service/debug/unstable_reduction_detector_test.cc)
case("reduce_size_one_dims_bf16", "xla/service/debug/unstable_reduction_detector_test.cc", """HloModule m
red { p0 = bf16[] parameter(0)  p1 = bf16[] parameter(1)  ROOT red = bf16[] add(p0, p1) }
ENTRY main { p0 = bf16[1] parameter(0)  init = bf16[] constant(1.0)
  ROOT red = bf16[] reduce(p0, init), to_apply=red, dimensions={0} }""", np.array([1.125], _BF))
case("reduce_size_one_dims_f32", "xla/service/debug/unstable_reduction_detector_test.cc", """HloModule m
red { p0 = f32[] parameter(0)  p1 = f32[] parameter(1)  ROOT red = f32[] multiply(p0, p1) }
ENTRY main { p0 = f32[3,1,2] parameter(0)  init = f32[] constant(5)
  ROOT red = f32[3,2] reduce(p0, init), to_apply=red, dimensions={1} }""", _f32(3, 1, 2))


# rng-bit-generator with the values alone as its result (no state): the tuple form's values
# (xla/service/sharding_propagation_test.cc)
for alg in ("rng_default", "rng_three_fry", "rng_philox"):
    case(f"rng_bit_generator_values_only_{alg}", "xla/service/sharding_propagation_test.cc", f"""HloModule m
ENTRY e {{ s = u64[2] parameter(0)  ROOT r = u32[4,8] rng-bit-generator(s), algorithm={alg} }}""",
         np.array([3, 7], np.uint64))

def declare() -> list[Decl]:
    return [Decl(FAMILY, cid, args, hlo=text, compare=compare, keep_after=False, extra={"xla_test_source": source})
            for cid, source, text, args, compare in CASES]
