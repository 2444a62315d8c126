"""Shape rules (hlo_interp/shapes/: infer.py and the family modules).

1. The corpus: for every instruction of every real module (tests/corpus/jax, tests/corpus/handwritten),
   the inferred shape agrees with the declared one, except for the few handwritten instructions listed
   in HANDWRITTEN_INVALID (texts XLA's parser accepts but its verifier/shape inference rejects).
2. Worked examples of XLA's operation-semantics documents (numbered EX-nn here) and
   shapes XLA's own parser infers when the result shape is omitted (checked against jaxlib 0.10.2).
3. Wrong operands raise ShapeError with the message asserted; the parser reports them located.
"""
from __future__ import annotations

import glob
import os

import pytest

import hlo_interp
from hlo_interp import ir
from hlo_interp.diagnostics import HloError
from hlo_interp.shapes.infer import ShapeError, infer_shape, shapes_compatible
from hlo_interp.syntax.printer import shape_text

ROOT = os.path.dirname(__file__)
CORPUS = sorted(glob.glob(os.path.join(ROOT, "corpus", "jax", "*.hlo"))
                + glob.glob(os.path.join(ROOT, "corpus", "handwritten", "*.hlo"))
                + glob.glob(os.path.join(ROOT, "corpus", "handwritten", "special", "*.hlo")))

# Handwritten texts that XLA's *parser* accepts (jaxlib's hlo_module_from_text does not run the
# verifier) but that are invalid: each confirmed with XLA's own shape inference (the text with the
# result shape removed) or StableHLO's verifier through jaxlib.
HANDWRITTEN_INVALID = {
    # 2 shards declared; group size 2 x num_partitions 2 = 4 (channel_id without global ids: XLA's
    # hlo_verifier.cc GetSubgroupSize/HandleReduceScatter; jaxlib's 1-device CPU compile can't show it)
    ("collectives_all.hlo", "rs"): "the result scatters into 2 shards along dimension 0, but the replica group size is 4",
    # XLA: "Expected LHS feature dimension (value 8) to be a multiple of feature_group_count ..."
    ("conv_dim_labels_groups.hlo", "bgc"): "expected lhs feature dimension (value 8) to be a multiple of feature_group_count",
    # f32[3] with padding 1_2_2 is f32[10] (StableHLO: inferred tensor<10xf32>)
    ("pad_configs.hlo", "interior"): "declared f32[9], inferred f32[10]",
    # f32[8,8], window 2 dilated by 2 over 1+8+1 -> 8 (StableHLO: inferred tensor<4x8xf32>)
    ("reduce_window_select_scatter.hlo", "rw_full"): "declared f32[4,9], inferred f32[4,8]",
}


def _check_module(m: ir.Module, base: str, found: dict) -> int:
    count = 0
    for comp in m.computations:
        shapes = {i.name: i.shape for i in comp.instructions}
        for ins in comp.instructions:
            count += 1
            try:
                got = infer_shape(ins, [shapes[o] for o in ins.operands], m)
            except ShapeError as e:
                found[(base, ins.name)] = e.message
                continue
            if got is not None and not shapes_compatible(ins.shape, got):
                found[(base, ins.name)] = (f"declared {shape_text(ins.shape, False)}, "
                                           f"inferred {shape_text(got, False)}")
    return count


def _corpus_findings():
    found: dict = {}
    count = 0
    for path in CORPUS:
        for m in hlo_interp.parse_all(open(path).read()):
            count += _check_module(m, os.path.basename(path), found)
    return found, count


def test_corpus_declared_shapes_agree_with_inference():
    found, count = _corpus_findings()
    assert count > 45000  # the loop really ran over the corpus
    unexpected = {k: v for k, v in found.items() if k not in HANDWRITTEN_INVALID}
    assert not unexpected, "\n".join(f"{f}: {n}: {m}" for (f, n), m in sorted(unexpected.items()))
    for key, want in HANDWRITTEN_INVALID.items():
        assert key in found, f"{key} no longer flagged"
        assert want in found[key], (key, found[key])


# --------------------------------------------------------------------------------------------------
# Helpers: a module whose ROOT omits its shape (the parser fills it with the rule), or a module
# whose ROOT declares its shape (infer_shape called directly).

def _module(body: str, comps: str = "", header: str = "") -> str:
    return f"HloModule t{header}\n{comps}\nENTRY e {{\n{body}\n}}\n"


def inferred(body: str, comps: str = "", header: str = "") -> str:
    m = hlo_interp.parse(_module(body, comps, header))
    return shape_text(m.entry.root.shape, layouts=False)


def parse_error(body: str, comps: str = "", header: str = "") -> HloError:
    with pytest.raises(HloError) as e:
        hlo_interp.parse(_module(body, comps, header))
    return e.value


def root_rule(body: str, comps: str = "", header: str = ""):
    """infer_shape on the ROOT of a module with all shapes declared: (shape text or None)."""
    m = hlo_interp.parse(_module(body, comps, header))
    comp = m.entry
    shapes = {i.name: i.shape for i in comp.instructions}
    root = comp.root
    got = infer_shape(root, [shapes[o] for o in root.operands], m)
    return None if got is None else shape_text(got, layouts=False)


def rule_error(body: str, comps: str = "", header: str = "") -> str:
    with pytest.raises(ShapeError) as e:
        root_rule(body, comps, header)
    return e.value.message


ADD = "add {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT c = f32[] add(a, b)\n}\n"
ADD_S32 = "adds {\n  a = s32[] parameter(0)\n  b = s32[] parameter(1)\n  ROOT c = s32[] add(a, b)\n}\n"
GE = "ge {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT c = pred[] compare(a, b), direction=GE\n}\n"
LT = "lt {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT c = pred[] compare(a, b), direction=LT\n}\n"


# --------------------------------------------------------------------------------------------------
# Spec worked examples and XLA-inferred shapes

@pytest.mark.parametrize("body,want", [
    # elementwise type rules
    ("p = c64[3] parameter(0)\n ROOT r = abs(p)", "f32[3]"),
    ("p = c128[3] parameter(0)\n ROOT r = real(p)", "f64[3]"),
    ("p = c64[2,2] parameter(0)\n ROOT r = imag(p)", "f32[2,2]"),
    ("p = f16[3] parameter(0)\n ROOT r = real(p)", "f16[3]"),
    ("p = bf16[3] parameter(0)\n ROOT r = is-finite(p)", "pred[3]"),
    ("p = s8[3] parameter(0)\n q = s8[3] parameter(1)\n ROOT r = compare(p, q), direction=LT", "pred[3]"),
    ("p = f32[3] parameter(0)\n q = f32[3] parameter(1)\n ROOT r = complex(p, q)", "c64[3]"),
    ("p = f64[] parameter(0)\n ROOT r = complex(p, p)", "c128[]"),
    ("p = bf16[4] parameter(0)\n q = f32[4] parameter(1)\n ROOT r = add(p, q)", "f32[4]"),  # XLA: higher precision
    ("p = pred[4] parameter(0)\n ROOT r = add(p, p)", "pred[4]"),
    ("p = u16[4] parameter(0)\n ROOT r = shift-left(p, p)", "u16[4]"),
    ("p = s4[4] parameter(0)\n ROOT r = not(p)", "s4[4]"),
    ("p = c64[4] parameter(0)\n ROOT r = remainder(p, p)", "c64[4]"),  # XLA infers it
    ("p = c64[4] parameter(0)\n ROOT r = acosh(p)", "c64[4]"),
    ("p = c128[4] parameter(0)\n ROOT r = logistic(p)", "c128[4]"),
    ("p = f32[4] parameter(0)\n ROOT r = mulhi(p, p)", "f32[4]"),  # no type rule in XLA's inference
    ("p = u32[4] parameter(0)\n ROOT r = negate(p)", "u32[4]"),
    # EX-01 clamp with scalar bounds; EX-02/03 select
    ("lo = s32[] parameter(0)\n x = s32[3] parameter(1)\n hi = s32[] parameter(2)\n ROOT c = clamp(lo, x, hi)", "s32[3]"),
    ("p = pred[4] parameter(0)\n a = s32[4] parameter(1)\n ROOT s = select(p, a, a)", "s32[4]"),
    ("p = pred[] parameter(0)\n a = s32[4] parameter(1)\n ROOT s = select(p, a, a)", "s32[4]"),
    # EX-16 concatenate
    ("a = s32[3,2] parameter(0)\n b = s32[1,2] parameter(1)\n ROOT c = concatenate(a, b), dimensions={0}", "s32[4,2]"),
    ("a = f32[3,2,8] parameter(0)\n b = f32[3,2,4] parameter(1)\n ROOT c = concatenate(a, b), dimensions={2}", "f32[3,2,12]"),
    # EX-22 pad (a)-(d), negative and interior
    ("x = s32[2,3] parameter(0)\n z = s32[] constant(0)\n ROOT p = pad(x, z), padding=0_0_1x0_0_1", "s32[3,5]"),
    ("x = s32[2,3] parameter(0)\n z = s32[] constant(0)\n ROOT p = pad(x, z), padding=0_1x1_2", "s32[3,6]"),
    ("x = s32[2,3] parameter(0)\n z = s32[] constant(0)\n ROOT p = pad(x, z), padding=0_1_1x1_2_1", "s32[4,8]"),
    ("x = s32[2,3] parameter(0)\n z = s32[] constant(0)\n ROOT p = pad(x, z), padding=0_0x-1_0_1", "s32[2,4]"),
    ("x = f32[0] parameter(0)\n z = f32[] constant(0)\n ROOT p = pad(x, z), padding=1_2_5", "f32[3]"),
    # transpose and reverse
    ("x = f32[2,3,4] parameter(0)\n ROOT t = transpose(x), dimensions={1,2,0}", "f32[3,4,2]"),
    ("x = f32[2,3] parameter(0)\n ROOT t = reverse(x), dimensions={0,1}", "f32[2,3]"),
    # EX-24..26 dot
    ("a = f32[2,3] parameter(0)\n b = f32[2,3] parameter(1)\n ROOT d = dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={1}", "f32[2,2]"),
    ("a = f32[2,2,2] parameter(0)\n ROOT d = dot(a, a), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1}", "f32[2,2,2]"),
    ("a = f32[7] parameter(0)\n ROOT d = dot(a, a), lhs_contracting_dims={0}, rhs_contracting_dims={0}", "f32[]"),
    ("a = f32[5,7] parameter(0)\n b = f32[7] parameter(1)\n ROOT d = dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}", "f32[5]"),
    ("a = f32[2,3,5,7] parameter(0)\n b = f32[2,3,7,4] parameter(1)\n ROOT d = dot(a, b), lhs_batch_dims={0,1}, lhs_contracting_dims={3}, rhs_batch_dims={0,1}, rhs_contracting_dims={2}", "f32[2,3,5,4]"),
    ("a = bf16[4,8] parameter(0)\n b = f32[8,2] parameter(1)\n ROOT d = dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}", "f32[4,2]"),
    # EX-27 fft
    ("x = f32[16] parameter(0)\n ROOT f = fft(x), fft_type=RFFT, fft_length={16}", "c64[9]"),
    ("x = f32[17] parameter(0)\n ROOT f = fft(x), fft_type=RFFT, fft_length={17}", "c64[9]"),
    ("x = c64[9] parameter(0)\n ROOT f = fft(x), fft_type=IRFFT, fft_length={16}", "f32[16]"),
    ("x = c128[3,9] parameter(0)\n ROOT f = fft(x), fft_type=IRFFT, fft_length={3,17}", "f64[3,17]"),
    ("x = c64[4,8] parameter(0)\n ROOT f = fft(x), fft_type=IFFT, fft_length={4,8}", "c64[4,8]"),
    ("x = f64[5,4,6] parameter(0)\n ROOT f = fft(x), fft_type=RFFT, fft_length={4,6}", "c128[5,4,4]"),
    # cholesky, triangular-solve
    ("a = f32[3,4,4] parameter(0)\n ROOT c = cholesky(a), lower=true", "f32[3,4,4]"),
    ("a = f32[4,4] parameter(0)\n b = f32[4,3] parameter(1)\n ROOT x = triangular-solve(a, b), left_side=true, lower=true, transpose_a=NO_TRANSPOSE", "f32[4,3]"),
    ("a = c64[4,4] parameter(0)\n b = c64[3,4] parameter(1)\n ROOT x = triangular-solve(a, b), lower=true, transpose_a=ADJOINT", "c64[3,4]"),
    # topk EX-39
    ("x = f32[2,3] parameter(0)\n ROOT t = topk(x), k=1, largest=true", "(f32[2,1], s32[2,1])"),
    # get-dimension-size, tuple, get-tuple-element EX-21
    ("x = f32[<=8,3] parameter(0)\n ROOT s = get-dimension-size(x), dimensions={0}", "s32[]"),
    ("a = f32[10] parameter(0)\n b = s32[] parameter(1)\n t = tuple(a, b)\n ROOT g = get-tuple-element(t), index=1", "s32[]"),
    ("a = f32[10] parameter(0)\n b = s32[] parameter(1)\n ROOT t = tuple(a, b, a)", "(f32[10], s32[], f32[10])"),
    ("x = f32[] parameter(0)\n ROOT b = broadcast(x), dimensions={}", "f32[]"),
    # XLA's parser reads `dimensions` as sizes to prepend when the shape is omitted (jaxlib 0.10.2)
    ("x = f32[4] parameter(0)\n ROOT b = broadcast(x), dimensions={0}", "f32[0,4]"),
])
def test_inferred_shapes(body, want):
    assert inferred(body) == want


@pytest.mark.parametrize("body,comps,want", [
    # EX-29 reduce 3-D
    ("x = s32[4,2,3] parameter(0)\n z = s32[] constant(0)\n ROOT r = reduce(x, z), dimensions={0}, to_apply=adds", ADD_S32, "s32[2,3]"),
    ("x = s32[4,2,3] parameter(0)\n z = s32[] constant(0)\n ROOT r = reduce(x, z), dimensions={2}, to_apply=adds", ADD_S32, "s32[4,2]"),
    ("x = s32[4,2,3] parameter(0)\n z = s32[] constant(0)\n ROOT r = reduce(x, z), dimensions={0,1}, to_apply=adds", ADD_S32, "s32[3]"),
    ("x = s32[4,2,3] parameter(0)\n z = s32[] constant(0)\n ROOT r = reduce(x, z), dimensions={0,1,2}, to_apply=adds", ADD_S32, "s32[]"),
    # EX-32 variadic reduce -> tuple
    ("v = f32[5] parameter(0)\n k = s32[5] iota(), iota_dimension=0\n iv = f32[] constant(-inf)\n ik = s32[] constant(-1)\n"
     " ROOT r = reduce(v, k, iv, ik), dimensions={0}, to_apply=argmax",
     "argmax {\n  m = f32[] parameter(0)\n  am = s32[] parameter(1)\n  v = f32[] parameter(2)\n  i = s32[] parameter(3)\n"
     "  ge = pred[] compare(v, m), direction=GE\n  a = f32[] select(ge, v, m)\n  b = s32[] select(ge, i, am)\n"
     "  ROOT t = (f32[], s32[]) tuple(a, b)\n}\n", "(f32[], s32[])"),
    # EX-33 reduce-window VALID and SAME
    ("x = f32[5] parameter(0)\n i = f32[] constant(3.4e38)\n ROOT r = reduce-window(x, i), window={size=3 stride=2}, to_apply=add", ADD, "f32[2]"),
    ("x = f32[5] parameter(0)\n i = f32[] constant(3.4e38)\n ROOT r = reduce-window(x, i), window={size=3 stride=2 pad=1_1}, to_apply=add", ADD, "f32[3]"),
    # EX-34 base and window dilation
    ("x = s32[3,2] parameter(0)\n z = s32[] constant(0)\n ROOT r = reduce-window(x, z), window={size=2x1 stride=4x1 pad=2_1x0_0 lhs_dilate=2x1 rhs_dilate=3x1}, to_apply=adds", ADD_S32, "s32[2,2]"),
    # EX-35 strides
    ("x = f32[4,6] parameter(0)\n z = f32[] constant(0)\n ROOT r = reduce-window(x, z), window={size=2x3 stride=2x3}, to_apply=add", ADD, "f32[2,2]"),
    ("x = f32[4,6] parameter(0)\n z = f32[] constant(0)\n ROOT r = reduce-window(x, z), window={size=2x3}, to_apply=add", ADD, "f32[3,4]"),
    # EX-37 select-and-scatter keeps the operand shape
    ("x = f32[4,5] parameter(0)\n s = f32[2,2] parameter(1)\n z = f32[] constant(0)\n"
     " ROOT r = select-and-scatter(x, s, z), window={size=2x3 stride=2x2}, select=ge, scatter=add", ADD + GE, "f32[4,5]"),
    # EX-38 multi-operand sort -> tuple
    ("a = s32[2] parameter(0)\n b = s32[2] parameter(1)\n c = f32[2] parameter(2)\n ROOT s = sort(a, b, c), dimensions={0}, to_apply=cmp",
     "cmp {\n  p0 = s32[] parameter(0)\n  p1 = s32[] parameter(1)\n  p2 = s32[] parameter(2)\n  p3 = s32[] parameter(3)\n"
     "  p4 = f32[] parameter(4)\n  p5 = f32[] parameter(5)\n  ROOT lt = pred[] compare(p0, p1), direction=LT\n}\n",
     "(s32[2], s32[2], f32[2])"),
    ("a = f32[3,7] parameter(0)\n ROOT s = sort(a), dimensions={1}, to_apply=lt", LT, "f32[3,7]"),
    # map: element type from the computation
    ("a = f32[2,3] parameter(0)\n ROOT m = map(a, a), dimensions={0,1}, to_apply=ge", GE, "pred[2,3]"),
    # call / while / conditional
    ("a = f32[] parameter(0)\n ROOT c = call(a, a), to_apply=ge", GE, "pred[]"),
    ("i = s32[] parameter(0)\n ROOT w = while(i), condition=cond, body=body",
     "cond {\n  p = s32[] parameter(0)\n  k = s32[] constant(10)\n  ROOT lt = pred[] compare(p, k), direction=LT\n}\n"
     "body {\n  p = s32[] parameter(0)\n  one = s32[] constant(1)\n  ROOT n = s32[] add(p, one)\n}\n", "s32[]"),
    ("i = s32[] parameter(0)\n a = f32[] parameter(1)\n ROOT c = conditional(i, a, a, a), branch_computations={b0, b1, b2}",
     "b0 {\n  p = f32[] parameter(0)\n  ROOT r = f32[] negate(p)\n}\nb1 {\n  p = f32[] parameter(0)\n  ROOT r = f32[] abs(p)\n}\n"
     "b2 {\n  p = f32[] parameter(0)\n  ROOT r = f32[] copy(p)\n}\n", "f32[]"),
    # scatter with batching dims (EX-42) and gather (EX-40, EX-41)
    ("o = s32[2,3,4,2] parameter(0)\n i = s64[2,2,3,2] parameter(1)\n u = s32[2,2,3,2,2] parameter(2)\n"
     " ROOT s = scatter(o, i, u), update_window_dims={3,4}, inserted_window_dims={1}, input_batching_dims={0},"
     " scatter_indices_batching_dims={1}, scatter_dims_to_operand_dims={2,1}, index_vector_dim=3, to_apply=adds",
     ADD_S32, "s32[2,3,4,2]"),
])
def test_inferred_shapes_with_computations(body, comps, want):
    assert inferred(body, comps) == want


@pytest.mark.parametrize("body,want", [
    # EX-40 gather shape vectors
    ("o = f32[16,11] parameter(0)\n i = s64[5,2] parameter(1)\n ROOT g = gather(o, i), offset_dims={1,2},"
     " collapsed_slice_dims={}, start_index_map={0,1}, index_vector_dim=1, slice_sizes={8,6}", "f32[5,8,6]"),
    ("o = f32[16,11] parameter(0)\n i = s64[4,5,2] parameter(1)\n ROOT g = gather(o, i), offset_dims={2,3},"
     " collapsed_slice_dims={}, start_index_map={0,1}, index_vector_dim=2, slice_sizes={8,6}", "f32[4,5,8,6]"),
    ("o = f32[16,11] parameter(0)\n i = s64[4,5,1] parameter(1)\n ROOT g = gather(o, i), offset_dims={2},"
     " collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=2, slice_sizes={1,11}", "f32[4,5,11]"),
    # implicit trailing index vector dimension
    ("o = f32[16,11] parameter(0)\n i = s32[4,5] parameter(1)\n ROOT g = gather(o, i), offset_dims={2},"
     " collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=2, slice_sizes={1,11}", "f32[4,5,11]"),
    # EX-41 gather with batching dims
    ("o = s32[2,3,4,2] parameter(0)\n i = s64[2,2,3,2] parameter(1)\n ROOT g = gather(o, i), offset_dims={3,4},"
     " collapsed_slice_dims={1}, start_index_map={2,1}, operand_batching_dims={0}, start_indices_batching_dims={1},"
     " index_vector_dim=3, slice_sizes={1,1,2,2}", "s32[2,2,3,2,2]"),
    # convolution: NHWC with padding and stride, feature groups, batch groups, dilations
    ("x = f32[1,8,8,3] parameter(0)\n w = f32[3,3,3,16] parameter(1)\n ROOT c = convolution(x, w),"
     " window={size=3x3 stride=2x2 pad=1_1x1_1}, dim_labels=b01f_01io->b01f", "f32[1,4,4,16]"),
    ("x = f32[2,8,10,10] parameter(0)\n w = f32[16,4,3,3] parameter(1)\n ROOT c = convolution(x, w),"
     " window={size=3x3}, dim_labels=bf01_oi01->bf01, feature_group_count=2", "f32[2,16,8,8]"),
    ("x = f32[8,5,5,4] parameter(0)\n w = f32[3,3,4,8] parameter(1)\n ROOT c = convolution(x, w),"
     " window={size=3x3}, dim_labels=b01f_01io->b01f, batch_group_count=4", "f32[2,3,3,8]"),
    ("x = f32[1,7,7,2] parameter(0)\n w = f32[3,3,2,4] parameter(1)\n ROOT c = convolution(x, w),"
     " window={size=3x3 lhs_dilate=2x2 rhs_dilate=2x1}, dim_labels=b01f_01io->b01f", "f32[1,9,11,4]"),
    ("x = f32[3,5,2] parameter(0)\n w = f32[2,2,6] parameter(1)\n ROOT c = convolution(x, w),"
     " window={size=2 pad=1_0}, dim_labels=b0f_0io->bf0", "f32[3,6,5]"),
])
def test_gather_and_convolution_shapes(body, want):
    assert inferred(body) == want


def test_omitted_shapes_match_xla_printout():
    """tests/corpus/handwritten/instr_inferred_shapes.hlo omits result shapes; XLA's parser
    (jaxlib 0.10.2, hlo_module_from_text().to_string()) prints these shapes for them."""
    m = hlo_interp.parse(open(os.path.join(ROOT, "corpus", "handwritten", "instr_inferred_shapes.hlo")).read())
    assert shape_text(m.entry.root.shape) == (
        "(f32[2,10]{1,0}, f32[2,10]{1,0}, f32[2,10]{1,0}, f32[2,2]{1,0}, f32[], /*index=5*/f32[4,10]{1,0}, "
        "f32[2]{0}, f32[2,10]{1,0}, (f32[2,3]{1,0}, s32[2,3]{1,0}), f32[], /*index=10*/(s32[], f32[]), f32[], "
        "f32[2,10]{1,0}, f32[10,2]{0,1}, f32[2,10]{1,0}, /*index=15*/s32[])")


# --------------------------------------------------------------------------------------------------
# Shapes XLA takes partly from the instruction (declared), checked by the rule

@pytest.mark.parametrize("body,want", [
    ("x = f32[10] parameter(0)\n ROOT y = f16[10,2] bitcast-convert(x)", "f16[10,2]"),  # EX-23
    ("x = f32[] parameter(0)\n ROOT y = f16[2] bitcast-convert(x)", "f16[2]"),
    ("x = f16[10,2] parameter(0)\n ROOT y = f32[10] bitcast-convert(x)", "f32[10]"),
    ("x = s32[7] parameter(0)\n ROOT y = s8[7,4] bitcast-convert(x)", "s8[7,4]"),
    ("x = u64[3] parameter(0)\n ROOT y = f64[3] bitcast-convert(x)", "f64[3]"),
    ("x = s32[3] parameter(0)\n ROOT y = f32[3] convert(x)", "f32[3]"),  # EX-04
    ("x = f32[4,2,3] parameter(0)\n ROOT y = f32[8,3] reshape(x)", "f32[8,3]"),  # EX-11
    ("x = f32[1,1] parameter(0)\n ROOT y = f32[] reshape(x)", "f32[]"),  # EX-14
    ("x = f32[] parameter(0)\n ROOT y = f32[2,3] broadcast(x), dimensions={}", "f32[2,3]"),  # EX-10
    ("x = f32[3] parameter(0)\n ROOT y = f32[2,3] broadcast(x), dimensions={1}", "f32[2,3]"),
    ("x = f32[4,6] parameter(0)\n ROOT y = f32[24] bitcast(x)", "f32[24]"),
    ("x = f32[4,6] parameter(0)\n ROOT y = s32[6,4] bitcast(x)", "s32[6,4]"),
    # tiled layouts: the logical sizes may differ (padding); not checked here
    ("x = f32[3,128]{1,0:T(8,128)} parameter(0)\n ROOT y = f32[8,128]{1,0:T(8,128)} bitcast(x)", "f32[8,128]"),
    ("ROOT y = s32[4,8] iota(), iota_dimension=1", "s32[4,8]"),  # EX-20
    ("x = f32[10] parameter(0)\n ROOT y = f32[10] reduce-precision(x), exponent_bits=5, mantissa_bits=10",
     "f32[10]"),
    ("a = f32[4,8] parameter(0)\n b = f32[8,2] parameter(1)\n ROOT d = f64[4,2] dot(a, b),"
     " lhs_contracting_dims={1}, rhs_contracting_dims={0}", "f64[4,2]"),  # preferred element type
    ("a = s8[4,8] parameter(0)\n b = s8[8,2] parameter(1)\n ROOT d = s32[4,2] dot(a, b),"
     " lhs_contracting_dims={1}, rhs_contracting_dims={0}", "s32[4,2]"),
    # XLA:CPU (jaxlib 0.10.2) compiles a narrowing integral dot too
    ("a = s32[2,3] parameter(0)\n b = s32[3,2] parameter(1)\n ROOT d = s8[2,2] dot(a, b),"
     " lhs_contracting_dims={1}, rhs_contracting_dims={0}", "s8[2,2]"),
    ("a = f32[] constant(0)\n b = f32[] constant(1)\n ROOT r = f32[3,5] rng(a, b), distribution=rng_uniform",
     "f32[3,5]"),
    ("s = u64[2] parameter(0)\n ROOT r = (u64[2], u32[11,17]) rng-bit-generator(s), algorithm=rng_three_fry",
     "(u64[2], u32[11,17])"),
    ("ROOT r = u64[2] rng-get-and-update-state(), delta=4",  "u64[2]"),
    ("ROOT r = u32[] replica-id()", "u32[]"),
    ("ROOT r = u32[] partition-id()", "u32[]"),
    ("t = token[] after-all()\n ROOT i = ((f32[2], s32[]), token[]) infeed(t)", "((f32[2], s32[]), token[])"),
    ("x = f32[3] parameter(0)\n t = token[] after-all()\n ROOT o = token[] outfeed(x, t), outfeed_shape=f32[3]{0}",
     "token[]"),
    ("x = f32[3] parameter(0)\n t = token[] after-all()\n s = (f32[3], u32[], token[]) send(x, t), channel_id=1\n"
     " ROOT d = token[] send-done(s), channel_id=1", "token[]"),
    ("t = token[] after-all()\n r = (f32[3], u32[], token[]) recv(t), channel_id=1\n"
     " ROOT d = (f32[3], token[]) recv-done(r), channel_id=1", "(f32[3], token[])"),
    ("x = f32[2,3] parameter(0)\n ROOT c = (f32[2,3], f32[2,3], u32[]) copy-start(x)", "(f32[2,3], f32[2,3], u32[])"),
    ("x = f32[2,3] parameter(0)\n t = token[] after-all()\n ROOT a = f32[2,3] add-dependency(x, t)", "f32[2,3]"),
    ("x = f32[<=16,4] parameter(0)\n n = s32[] parameter(1)\n ROOT s = f32[<=16,4] set-dimension-size(x, n),"
     " dimensions={0}", "f32[<=16,4]"),
    ("x = f32[64] parameter(0)\n a = s32[] parameter(1)\n ROOT r = f32[<=8,8] dynamic-reshape(x, a, a)",
     "f32[<=8,8]"),
    ("a = f32[4,3] parameter(0)\n ROOT s = f32[2,2] slice(a), slice={[2:4], [1:3]}", "f32[2,2]"),  # EX-17
    ("a = f32[10] parameter(0)\n ROOT s = f32[3] slice(a), slice={[1:10:4]}", "f32[3]"),
    ("x = f32[8] parameter(0)\n i = s32[] parameter(1)\n ROOT d = f32[3] dynamic-slice(x, i),"
     " dynamic_slice_sizes={3}", "f32[3]"),
    ("x = f32[5] parameter(0)\n u = f32[2] parameter(1)\n i = s32[] parameter(2)\n"
     " ROOT d = f32[5] dynamic-update-slice(x, u, i)", "f32[5]"),  # EX-19
    ("x = f32[16,8] parameter(0)\n ROOT s = f32[16,8] custom-call(x), custom_call_target=\"foo\"", None),
    ("x = f32[8] parameter(0)\n s = u32[8] parameter(1)\n ROOT c = bf16[8] stochastic-convert(x, s)", "bf16[8]"),
    ("x = f32[4,6] parameter(0)\n ROOT c = (f32[4,6], f32[4,6]) opt-barrier((f32[4,6], f32[4,6]) tuple(x, x))",
     "(f32[4,6], f32[4,6])"),
])
def test_declared_part_rules(body, want):
    assert root_rule(body) == want


COLL_HEADER = ", replica_count=4"


@pytest.mark.parametrize("body,want", [
    ("x = f32[8,2] parameter(0)\n ROOT a = f32[32,2] all-gather(x), replica_groups={}, dimensions={0}", "f32[32,2]"),
    ("x = f32[8,2] parameter(0)\n ROOT a = f32[8,4] all-gather(x), replica_groups={{0,1},{2,3}}, dimensions={1}",
     "f32[8,4]"),
    ("x = f32[8] parameter(0)\n ROOT a = (f32[8], f32[32]) all-gather-start(x), replica_groups={{0,1,2,3}},"
     " dimensions={0}", "(f32[8], f32[32])"),
    ("x = f32[8] parameter(0)\n s = (f32[8], f32[32]) all-gather-start(x), replica_groups={}, dimensions={0}\n"
     " ROOT d = f32[32] all-gather-done(s)", "f32[32]"),
    ("x = f32[8,2] parameter(0)\n ROOT a = f32[2,2] reduce-scatter(x), replica_groups={}, dimensions={0},"
     " to_apply=add", "f32[2,2]"),
    ("x = f32[8,2] parameter(0)\n ROOT a = (f32[8,2], f32[8,2]) all-reduce(x, x), replica_groups={}, to_apply=add",
     "(f32[8,2], f32[8,2])"),
    ("x = f32[8,2] parameter(0)\n ROOT a = f32[8,2] all-to-all(x), replica_groups={{0,1,2,3}}, dimensions={0}",
     "f32[8,2]"),
    ("x = f32[8,2] parameter(0)\n ROOT a = (f32[8,2], f32[8,2]) all-to-all(x, x), replica_groups={{0,1},{2,3}}",
     "(f32[8,2], f32[8,2])"),
    ("x = f32[8] parameter(0)\n ROOT c = (f32[8], f32[8], u32[], u32[]) collective-permute-start(x),"
     " source_target_pairs={{0,1},{1,0}}", "(f32[8], f32[8], u32[], u32[])"),
    ("x = f32[8] parameter(0)\n ROOT c = f32[8] collective-broadcast(x), replica_groups={{0,1}}", "f32[8]"),
    ("i = bf16[16,4] parameter(0)\n o = bf16[16,4] parameter(1)\n s = s32[4] parameter(2)\n"
     " ROOT r = bf16[16,4] ragged-all-to-all(i, o, s, s, s, s), replica_groups={}", "bf16[16,4]"),
])
def test_collective_rules(body, want):
    assert root_rule(body, ADD, COLL_HEADER) == want


ASYNC_COMPS = ("callee {\n  z = f32[8] parameter(0)\n  ROOT n = f32[8] negate(z)\n}\n")


@pytest.mark.parametrize("body,want", [
    ("x = f32[8] parameter(0)\n ROOT s = ((f32[8]), f32[8], s32[]) async-start(x), calls=callee",
     "((f32[8]), f32[8], s32[])"),
    ("x = f32[8] parameter(0)\n s = ((f32[8]), f32[8], s32[]) async-start(x), calls=callee\n"
     " ROOT d = f32[8] async-done(s), calls=callee", "f32[8]"),
    ("x = f32[8] parameter(0)\n s = ((f32[8]), f32[8], s32[]) call-start(x), to_apply=callee\n"
     " ROOT d = f32[8] call-done(s)", "f32[8]"),
    ("a = s32[] parameter(0)\n ROOT s = ((s32[], s32[]), s32[], s32[]) add-start(a, a)", "((s32[], s32[]), s32[], s32[])"),
    ("x = f32[10] parameter(0)\n ROOT s = ((f32[10]), f32[20], s32[]) custom-call-start(x),"
     " custom_call_target=\"foo\"", "((f32[10]), f32[20], s32[])"),
])
def test_async_rules(body, want):
    assert root_rule(body, ASYNC_COMPS) == want


# --------------------------------------------------------------------------------------------------
# Wrong operands: ShapeError with the message

@pytest.mark.parametrize("body,msg", [
    ("p = s32[4] parameter(0)\n ROOT r = f32[4] sine(p)", "expected a floating-point or complex operand for sine, got s32"),
    ("p = s32[4] parameter(0)\n ROOT r = s32[4] erf(p)", "expected a floating-point operand for erf, got s32"),
    ("p = c64[4] parameter(0)\n ROOT r = c64[4] cbrt(p)", "expected a floating-point operand for cbrt, got c64"),
    ("p = f32[4] parameter(0)\n ROOT r = f32[4] popcnt(p)", "expected an integral operand for popcnt, got f32"),
    ("p = u8[4] parameter(0)\n ROOT r = u8[4] sign(p)", "expected a signed or complex operand for sign, got u8"),
    ("p = u8[4] parameter(0)\n ROOT r = u8[4] abs(p)", "expected a signed, floating-point or complex operand for abs, got u8"),
    ("p = f32[4] parameter(0)\n ROOT r = f32[4] not(p)", "expected a pred or integral operand for not, got f32"),
    ("p = s32[4] parameter(0)\n ROOT r = pred[4] is-finite(p)", "expected a floating-point operand for is-finite, got s32"),
    ("p = f32[4] parameter(0)\n q = s32[4] parameter(1)\n ROOT r = f32[4] add(p, q)",
     "binary op add with different element types: f32[4] and s32[4]"),
    ("p = f32[4] parameter(0)\n q = f32[1] parameter(1)\n ROOT r = f32[4] multiply(p, q)",
     "binary op multiply with incompatible shapes: f32[4] and f32[1]"),
    ("p = f32[4] parameter(0)\n q = f32[] parameter(1)\n ROOT r = f32[4] add(p, q)",
     "implicit broadcast is not allowed in HLO"),
    ("p = pred[4] parameter(0)\n ROOT r = pred[4] subtract(p, p)", "expected an arithmetic element type for subtract, got pred"),
    ("p = s32[4] parameter(0)\n ROOT r = s32[4] atan2(p, p)", "expected floating-point or complex operands for atan2, got s32"),
    ("p = f32[4] parameter(0)\n ROOT r = f32[4] and(p, p)", "expected pred or integral operands for and, got f32"),
    ("p = bf16[4] parameter(0)\n ROOT r = c64[4] complex(p, p)", "complex needs f32 or f64 operands, got bf16 and bf16"),
    ("p = s32[4] parameter(0)\n a = f32[4] parameter(1)\n ROOT r = f32[4] select(p, a, a)",
     "select's predicate must have pred element type; got s32[4]"),
    ("p = pred[3] parameter(0)\n a = f32[4] parameter(1)\n ROOT r = f32[4] select(p, a, a)",
     "operands to select and predicate must be the same shape"),
    ("a = f32[4] parameter(0)\n lo = f32[2] parameter(1)\n ROOT r = f32[4] clamp(lo, a, a)",
     "clamp with incompatible shapes: f32[2], f32[4], f32[4]"),
    ("x = c64[4] parameter(0)\n ROOT y = f32[4,2] bitcast-convert(x)", "bitcast-convert between complex and real types"),
    ("x = f32[4,3] parameter(0)\n ROOT y = f64[4] bitcast-convert(x)",
     "last dimension of the operand (3) must equal the ratio of bit widths (2)"),
    ("x = f32[4] parameter(0)\n ROOT y = f32[4] reduce-precision(x), exponent_bits=0, mantissa_bits=3",
     "expected exponent_bits >= 1, got 0"),
    ("x = s32[4] parameter(0)\n ROOT y = s32[4] reduce-precision(x), exponent_bits=5, mantissa_bits=3",
     "expected a floating-point operand for reduce-precision, got s32"),
    ("x = f32[2,3] parameter(0)\n ROOT y = f32[7] reshape(x)", "reshape has mismatched element counts: from=6 (f32[2,3]) to=7 (f32[7])"),
    ("x = f32[3] parameter(0)\n ROOT y = f32[2,4] broadcast(x), dimensions={1}",
     "broadcast operand dimension 0 has size 3, but result dimension 1 has size 4"),
    ("x = f32[3] parameter(0)\n ROOT y = f32[2,3] broadcast(x), dimensions={2}", "broadcast dimension 2 out of range for rank 2"),
    ("x = f32[3] parameter(0)\n ROOT y = f32[2,3] broadcast(x), dimensions={}",
     "broadcast dimensions {} must have one entry per operand dimension (operand rank 1)"),
    ("x = f32[2,3] parameter(0)\n ROOT y = f32[3,2] transpose(x), dimensions={0,0}",
     "transpose dimensions [0,0] are not a permutation of the operand dimensions (operand shape is f32[2,3])"),
    ("x = f32[2,3] parameter(0)\n ROOT y = f32[2,3] reverse(x), dimensions={2}", "reverse dimension 2 out of range for rank 2"),
    ("x = f32[5] parameter(0)\n ROOT y = f32[2] slice(x), slice={[4:6]}",
     "slice limit index (6) must be less than or equal to dimension size (5) in dimension 0"),
    ("x = f32[5] parameter(0)\n ROOT y = f32[0] slice(x), slice={[3:2]}", "slice limit index (2) must be greater or equal to start index (3)"),
    ("x = f32[5] parameter(0)\n i = s32[] parameter(1)\n ROOT y = f32[6] dynamic-slice(x, i), dynamic_slice_sizes={6}",
     "slice dim size 6 greater than dynamic-slice dimension: 5"),
    ("x = f32[5,2] parameter(0)\n i = s32[] parameter(1)\n ROOT y = f32[1,1] dynamic-slice(x, i), dynamic_slice_sizes={1,1}",
     "dynamic-slice needs 2 start indices (the operand's rank), got 1"),
    ("x = f32[5] parameter(0)\n i = f32[] parameter(1)\n ROOT y = f32[1] dynamic-slice(x, i), dynamic_slice_sizes={1}",
     "dynamic-slice start indices must be of integral type, got f32[]"),
    ("x = f32[5] parameter(0)\n u = f32[6] parameter(1)\n i = s32[] parameter(2)\n ROOT y = f32[5] dynamic-update-slice(x, u, i)",
     "update dim size 6 greater than dynamic-update-slice dimension: 5"),
    ("a = f32[2,3] parameter(0)\n b = f32[2,4] parameter(1)\n ROOT c = f32[4,3] concatenate(a, b), dimensions={0}",
     "dimension 1 in both shapes must be equal: f32[2,3] vs f32[2,4]"),
    ("a = f32[2] parameter(0)\n b = s32[2] parameter(1)\n ROOT c = f32[4] concatenate(a, b), dimensions={0}",
     "cannot concatenate arrays with different element types: f32 vs s32"),
    ("a = f32[2] parameter(0)\n ROOT c = f32[4] concatenate(a, a), dimensions={1}", "concatenate dimension 1 out of range for rank 1"),
    ("x = f32[3] parameter(0)\n z = f32[2] parameter(1)\n ROOT p = f32[5] pad(x, z), padding=1_1",
     "pad does not support non-scalar padding values, got f32[2]"),
    ("x = f32[3] parameter(0)\n z = f32[] parameter(1)\n ROOT p = f32[0] pad(x, z), padding=-3_-1",
     "padding results in negative size -1 for dimension 0"),
    ("x = f32[3] parameter(0)\n z = f32[] parameter(1)\n ROOT p = f32[5] pad(x, z), padding=1_1x1_1",
     "the rank of the operand and the padding configuration do not match: f32[3] vs 2 dimensions"),
    ("x = f32[4,6] parameter(0)\n ROOT y = f32[25] bitcast(x)",
     "bitcast cannot change the size in bytes: f32[4,6] (96 bytes) to f32[25] (100 bytes)"),
    ("x = f32[3] parameter(0)\n ROOT g = f32[3] get-tuple-element(x), index=0",
     "cannot infer shape: attempting to index into non-tuple: f32[3]"),
    ("x = f32[3] parameter(0)\n t = (f32[3]) tuple(x)\n ROOT g = f32[3] get-tuple-element(t), index=1",
     "tuple index 1 out of range for (f32[3]) (1 elements)"),
    ("a = f32[2,3] parameter(0)\n b = f32[4,3] parameter(1)\n ROOT d = f32[2,4] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}",
     "dot: contracting dimension sizes do not match: lhs dimension 1 (3) vs rhs dimension 0 (4)"),
    ("a = f32[2,3] parameter(0)\n ROOT d = f32[2,2] dot(a, a), lhs_contracting_dims={2}, rhs_contracting_dims={1}",
     "dot: lhs dimension number 2 out of range for rank 2"),
    ("a = f32[2,3] parameter(0)\n b = f32[3,2] parameter(1)\n ROOT d = f32[2,3,2] dot(a, b), lhs_batch_dims={0}, rhs_batch_dims={0}",
     "dot: batch dimension sizes must match for lhs/rhs: lhs dimension 0 (2) vs rhs dimension 0 (3)"),
    ("x = f32[16] parameter(0)\n ROOT f = c64[9] fft(x), fft_type=FFT, fft_length={16}", "FFT requires a complex input type, found f32"),
    ("x = f32[16] parameter(0)\n ROOT f = c64[9] fft(x), fft_type=RFFT, fft_length={8}",
     "RFFT requires the innermost dimensions to match fft_length, but dimension 0 is 16 and should be 8"),
    ("x = c64[8] parameter(0)\n ROOT f = f32[16] fft(x), fft_type=IRFFT, fft_length={16}",
     "IRFFT requires the innermost dimension to match fft_length/2+1, but dimension 0 is 8 and should be 9"),
    ("x = c64[8] parameter(0)\n ROOT f = c64[8] fft(x), fft_type=FFT, fft_length={2,2,2,2}", "fft only supports ranks 1-3; got 4"),
    ("a = f32[4,3] parameter(0)\n ROOT c = f32[4,3] cholesky(a), lower=true", "the two minor dimensions of 'a' must have equal size, got f32[4,3]"),
    ("a = s32[4,4] parameter(0)\n ROOT c = s32[4,4] cholesky(a), lower=true", "expected a floating-point or complex element type for cholesky; got s32"),
    ("a = f32[4,4] parameter(0)\n b = f32[3,3] parameter(1)\n ROOT x = f32[3,3] triangular-solve(a, b), left_side=true, transpose_a=NO_TRANSPOSE",
     "the shared dimension of 'a' and 'b' does not match, got shapes f32[4,4] and f32[3,3]"),
    ("a = f32[4,4] parameter(0)\n b = f64[4,4] parameter(1)\n ROOT x = f64[4,4] triangular-solve(a, b), transpose_a=NO_TRANSPOSE",
     "expected identical floating-point or complex element types for triangular-solve; got f32 and f64"),
    ("x = f32[2,3] parameter(0)\n ROOT t = (f32[2,4], s32[2,4]) topk(x), k=4", "topk: k=4 must be between 0 and the last dimension (3) of f32[2,3]"),
    ("o = f32[16,11] parameter(0)\n i = f32[5,2] parameter(1)\n ROOT g = f32[5,8,6] gather(o, i), offset_dims={1,2},"
     " collapsed_slice_dims={}, start_index_map={0,1}, index_vector_dim=1, slice_sizes={8,6}",
     "gather indices parameter must be an integral tensor; got f32[5,2]"),
    ("o = f32[16,11] parameter(0)\n i = s32[5,2] parameter(1)\n ROOT g = f32[5,8,6] gather(o, i), offset_dims={1,2},"
     " collapsed_slice_dims={}, start_index_map={0}, index_vector_dim=1, slice_sizes={8,6}",
     "gather has 1 elements in start_index_map and the bound of dimension index_vector_dim=1 of start_indices is 2"),
    ("o = f32[16,11] parameter(0)\n i = s32[5,2] parameter(1)\n ROOT g = f32[5,8,12] gather(o, i), offset_dims={1,2},"
     " collapsed_slice_dims={}, start_index_map={0,1}, index_vector_dim=1, slice_sizes={8,12}",
     "slice size at index 1 in gather is out of range, must be within [0, 12), got 12"),
    ("o = f32[16,11] parameter(0)\n i = s32[5,1] parameter(1)\n ROOT g = f32[5,11] gather(o, i), offset_dims={1},"
     " collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={2,11}",
     "gather can only collapse slice dimensions of size 1 or 0, but size is 2 for dimension 0"),
    ("x = f32[2,4] parameter(0)\n w = f32[3,3,3,16] parameter(1)\n ROOT c = f32[1] convolution(x, w), window={size=3x3},"
     " dim_labels=b01f_01io->b01f", "the lhs of a convolution should have rank 4; lhs: f32[2,4]"),
    ("x = f32[1,8,8,3] parameter(0)\n w = f32[3,3,4,16] parameter(1)\n ROOT c = f32[1,6,6,16] convolution(x, w), window={size=3x3},"
     " dim_labels=b01f_01io->b01f", "expected lhs feature dimension (value 3) to be a multiple of feature_group_count (value 1)"),
    ("x = f32[1,8,8,3] parameter(0)\n w = f32[3,3,3,16] parameter(1)\n ROOT c = f32[1,6,6,16] convolution(x, w), window={size=2x2},"
     " dim_labels=b01f_01io->b01f", "window dimensions 2x2 do not match the rhs spatial dimensions 3x3"),
    ("x = f32[1,8,8,4] parameter(0)\n w = f32[3,3,2,6] parameter(1)\n ROOT c = f32[1,6,6,6] convolution(x, w), window={size=3x3},"
     " dim_labels=b01f_01io->b01f, feature_group_count=2, batch_group_count=2",
     "both batch_group_count 2 and feature_group_count 2 cannot be greater than 1"),
])
def test_wrong_operands(body, msg):
    assert msg in rule_error(body)


@pytest.mark.parametrize("body,comps,msg", [
    ("x = f32[4] parameter(0)\n z = f32[] constant(0)\n ROOT r = f32[] reduce(x, z), dimensions={1}, to_apply=add", ADD,
     "reducing out-of-bounds dimension 1 in shape f32[4]"),
    ("x = f32[4] parameter(0)\n z = s32[] constant(0)\n ROOT r = f32[] reduce(x, z), dimensions={0}, to_apply=add", ADD,
     "reduction function add's accumulator shape at index 0 differs from the init_value shape: f32[] vs s32[]"),
    ("x = f32[4] parameter(0)\n z = f32[] constant(0)\n ROOT r = f32[] reduce(x, z), dimensions={0}, to_apply=ge", GE,
     "reduction function ge's 0-th parameter shape differs from the result shape: f32[] vs pred[]"),
    ("x = f32[4] parameter(0)\n z = f32[] constant(0)\n ROOT r = f32[] reduce(x, z, z), dimensions={0}, to_apply=add", ADD,
     "reduce must have an even, nonzero number of operands"),
    ("x = f32[4] parameter(0)\n z = f32[] constant(0)\n ROOT r = f32[] reduce(x, z), dimensions={0}, to_apply=nope", ADD,
     "computation does not exist: nope"),
    ("x = f32[4] parameter(0)\n z = f32[] constant(0)\n ROOT r = f32[2] reduce-window(x, z), window={size=3x1}, to_apply=add", ADD,
     "reduce-window: the window has 2 dimensions but the base shape has 1"),
    ("x = f32[4] parameter(0)\n z = f32[] constant(0)\n ROOT r = f32[2] reduce-window(x, z), window={size=3 stride=0}, to_apply=add", ADD,
     "reduce-window: window dimension 0 has a non-positive stride 0"),
    ("x = f32[4,5] parameter(0)\n s = f32[2,3] parameter(1)\n z = f32[] constant(0)\n"
     " ROOT r = f32[4,5] select-and-scatter(x, s, z), window={size=2x3 stride=2x2}, select=ge, scatter=add", ADD + GE,
     "source shape does not match the shape of the window-reduced operand: source(f32[2,3]), window-reduced operand(f32[2,2])"),
    ("x = f32[4,5] parameter(0)\n s = f32[2,2] parameter(1)\n z = f32[] constant(0)\n"
     " ROOT r = f32[4,5] select-and-scatter(x, s, z), window={size=2x3 stride=2x2}, select=add, scatter=add", ADD,
     "select function add must have a rank-0 pred result, got f32[]"),
    ("a = f32[3] parameter(0)\n b = f32[4] parameter(1)\n ROOT s = (f32[3], f32[4]) sort(a, b), dimensions={0}, to_apply=lt", LT,
     "sort keys and values dimensions must match; keys shape is f32[3], values shape (operand index 1) is f32[4]"),
    ("a = f32[3] parameter(0)\n b = f32[3] parameter(1)\n ROOT s = (f32[3], f32[3]) sort(a, b), dimensions={0}, to_apply=lt", LT,
     "sort comparator lt must take 4 parameters, but takes 2"),
    ("a = f32[3] parameter(0)\n ROOT m = f32[3] map(a), dimensions={0}, to_apply=add", ADD,
     "map applied function arity must match number of arguments; got arity 2, arguments 1"),
    ("a = f32[3] parameter(0)\n ROOT c = f32[] call(a, a), to_apply=add", ADD,
     "called computation add's parameter 0 has shape f32[], but the argument has shape f32[3]"),
    ("a = f32[] parameter(0)\n ROOT c = f32[] call(a), to_apply=add", ADD,
     "called computation add takes 2 parameter(s), but call passes 1 argument(s)"),
    ("i = f32[] parameter(0)\n ROOT w = f32[] while(i), condition=add, body=add", ADD,
     "while condition add must take 1 parameter; takes 2"),
    ("i = s32[] parameter(0)\n ROOT w = s32[] while(i), condition=c, body=b",
     "c {\n  p = s32[] parameter(0)\n  ROOT r = s32[] copy(p)\n}\nb {\n  p = s32[] parameter(0)\n  ROOT r = s32[] copy(p)\n}\n",
     "while condition c must return pred[]; returns s32[]"),
    ("i = s32[] parameter(0)\n ROOT w = s32[] while(i), condition=c, body=b",
     "c {\n  p = s32[] parameter(0)\n  ROOT r = pred[] constant(true)\n}\nb {\n  p = s32[] parameter(0)\n  ROOT r = f32[] convert(p)\n}\n",
     "the parameter of condition and body, the result of the body, and init must all have the same shape"),
    ("i = f32[] parameter(0)\n a = f32[] parameter(1)\n ROOT c = f32[] conditional(i, a, a), true_computation=n, false_computation=n",
     "n {\n  p = f32[] parameter(0)\n  ROOT r = f32[] negate(p)\n}\n",
     "the branch index of conditional must be pred[] or s32[]; got f32[]"),
    ("i = pred[] parameter(0)\n a = f32[] parameter(1)\n b = s32[] parameter(2)\n"
     " ROOT c = f32[] conditional(i, a, b), true_computation=n, false_computation=n",
     "n {\n  p = f32[] parameter(0)\n  ROOT r = f32[] negate(p)\n}\n",
     "branch operand 1 must match the shape of the only parameter of branch computation n: got operand s32[], parameter f32[]"),
    ("o = f32[4,3] parameter(0)\n i = s32[2,1] parameter(1)\n u = f32[2,5] parameter(2)\n"
     " ROOT s = f32[4,3] scatter(o, i, u), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0},"
     " index_vector_dim=1, to_apply=add", ADD,
     "bounds of the window dimensions of updates must not exceed the bounds of the corresponding dimensions of operand"),
    ("o = f32[4,3] parameter(0)\n i = s32[2,1] parameter(1)\n u = f32[3,3] parameter(2)\n"
     " ROOT s = f32[4,3] scatter(o, i, u), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0},"
     " index_vector_dim=1, to_apply=add", ADD,
     "for scatter dimension 0, updates bound is 3, scatter_indices bound is 2"),
    ("o = f32[4,3] parameter(0)\n i = s32[2,1] parameter(1)\n u = f32[2,3] parameter(2)\n"
     " ROOT s = f32[4,3] scatter(o, i, u), update_window_dims={1}, inserted_window_dims={}, scatter_dims_to_operand_dims={0},"
     " index_vector_dim=1, to_apply=add", ADD,
     "scatter has a window of size 1; it doesn't match the operand of rank 2"),
    ("x = f32[8,2] parameter(0)\n ROOT a = f32[24,2] all-gather(x), replica_groups={{0,1},{2,3}}, dimensions={0}", "",
     "all-gather: the result gathers 3 shards along dimension 0, but the replica group size is 2"),
    ("x = f32[6,2] parameter(0)\n ROOT a = f32[6,2] all-to-all(x), replica_groups={{0,1,2,3}}, dimensions={0}", "",
     "all-to-all split dimension size 6 must be divisible by the split count 4"),
    ("x = f32[8] parameter(0)\n ROOT s = ((f32[8]), f32[8], s32[]) async-start(x, x), calls=callee", ASYNC_COMPS,
     "async computation callee takes 1 parameter(s), but async-start passes 2 argument(s)"),
    ("x = f32[8] parameter(0)\n ROOT d = f32[8] async-done(x), calls=callee", ASYNC_COMPS,
     "the operand of async-done must be the tuple an async start produces, got f32[8]"),
    ("x = f32[4] parameter(0)\n t = token[] after-all()\n ROOT o = token[] outfeed(x, t), outfeed_shape=f32[5]{0}", "",
     "outfeed_shape f32[5] is not compatible with the operand shape f32[4]"),
    ("x = f32[4] parameter(0)\n ROOT i = ((f32[4]), token[]) infeed(x)", "", "the operand of infeed must be a token, got f32[4]"),
    ("a = f32[] constant(0)\n b = s32[] constant(1)\n ROOT r = f32[3] rng(a, b), distribution=rng_uniform", "",
     "rng parameters must have the same type, got f32[] and s32[]"),
    ("x = f32[2,3] parameter(0)\n s = f32[4] parameter(1)\n ROOT b = (f32[2,3], f32[3], f32[3]) batch-norm-training(x, s, s),"
     " epsilon=0.001, feature_index=1", "", "batch-norm-training: the size of scale (4) must equal the feature count 3"),
    ("x = f32[2,3] parameter(0)\n s = f32[3] parameter(1)\n ROOT b = f32[2,3] batch-norm-inference(x, s, s, s, s),"
     " epsilon=0.001, feature_index=2", "", "batch-norm-inference: feature_index 2 out of range for operand rank 2"),
])
def test_wrong_operands_with_computations(body, comps, msg):
    assert msg in rule_error(body, comps, COLL_HEADER)


SCAN_COMPS = ("add_carry {\n  lhs = f32[] parameter(0)\n  rhs = f32[] parameter(1)\n  add = f32[] add(lhs, rhs)\n"
              "  ROOT t = (f32[], f32[]) tuple(add, add)\n}\n")


@pytest.mark.parametrize("body,want", [
    # ragged-dot: ragged non-contracting (rhs group dim), ragged contracting (groups prepended), batch
    ("a = f32[16,64] parameter(0)\n b = f32[4,64,8] parameter(1)\n g = s64[4] parameter(2)\n"
     " ROOT r = ragged-dot(a, b, g), lhs_contracting_dims={1}, rhs_contracting_dims={1}, lhs_ragged_dims={0},"
     " rhs_group_dims={0}", "f32[16,8]"),
    ("a = f32[16,64] parameter(0)\n b = f32[64,8] parameter(1)\n g = s32[4] parameter(2)\n"
     " ROOT r = ragged-dot(a, b, g), lhs_contracting_dims={1}, rhs_contracting_dims={0}, lhs_ragged_dims={1}",
     "f32[4,16,8]"),
    ("a = f32[2,16,64] parameter(0)\n b = f32[2,64,8] parameter(1)\n g = s32[2] parameter(2)\n"
     " ROOT r = ragged-dot(a, b, g), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2},"
     " rhs_contracting_dims={1}, lhs_ragged_dims={0}", "f32[2,16,8]"),
])
def test_ragged_dot_modes(body, want):
    assert inferred(body) == want


@pytest.mark.parametrize("body,comps,want", [
    ("x = f32[4] parameter(0)\n i = f32[] constant(0)\n ROOT s = (f32[4], f32[]) scan(x, i), dimensions={0},"
     " num_carries=1, to_apply=add_carry", SCAN_COMPS, "(f32[4], f32[])"),
    ("x = f32[5,3] parameter(0)\n i = f32[3] parameter(1)\n ROOT s = (f32[5,3], f32[3]) scan(x, i), dimensions={0},"
     " num_carries=1, to_apply=vadd",
     "vadd {\n  a = f32[3] parameter(0)\n  b = f32[3] parameter(1)\n  c = f32[3] add(a, b)\n"
     "  ROOT t = (f32[3], f32[3]) tuple(c, c)\n}\n", "(f32[5,3], f32[3])"),
    ("qa = f8e4m3fn[16,64] parameter(0)\n qb = f8e4m3fn[64,8] parameter(1)\n sa = f8e8m0fnu[16,2] parameter(2)\n"
     " sb = f8e8m0fnu[2,8] parameter(3)\n ROOT d = f32[16,8] scaled-dot(qa, qb, sa, sb), lhs_contracting_dims={1},"
     " rhs_contracting_dims={0}", "", "f32[16,8]"),
])
def test_scan_and_scaled_dot(body, comps, want):
    assert root_rule(body, comps) == want


@pytest.mark.parametrize("body,comps,msg", [
    ("a = f32[16,64] parameter(0)\n b = f32[3,64,8] parameter(1)\n g = s64[4] parameter(2)\n"
     " ROOT r = f32[16,8] ragged-dot(a, b, g), lhs_contracting_dims={1}, rhs_contracting_dims={1}, lhs_ragged_dims={0},"
     " rhs_group_dims={0}", "", "ragged-dot: rhs group dimension size 3 must equal the number of groups 4"),
    ("x = f32[4] parameter(0)\n i = f32[] constant(0)\n ROOT s = (f32[4], f32[]) scan(x, i), dimensions={1},"
     " num_carries=1, to_apply=add_carry", SCAN_COMPS, "scan dimension 1 out of range for input 0 of rank 1"),
    ("x = f32[4] parameter(0)\n i = s32[] constant(0)\n ROOT s = (f32[4], f32[]) scan(x, i), dimensions={0},"
     " num_carries=1, to_apply=add_carry", SCAN_COMPS,
     "scan computation add_carry's carry parameter 1 must match the init s32[], got f32[]"),
    ("x = f32[64] parameter(0)\n a = s32[] parameter(1)\n ROOT r = f32[<=8,9] dynamic-reshape(x, a, a)", "",
     "dynamic-reshape has mismatched element counts: from=64 (f32[64]) to=72 (f32[<=8,9])"),
    ("x = f32[64] parameter(0)\n a = s32[] parameter(1)\n ROOT r = f32[<=8,8] dynamic-reshape(x, a)", "",
     "dynamic-reshape needs one size operand per result dimension: 2, got 1"),
    ("x = f32[16,4] parameter(0)\n n = s64[] parameter(1)\n ROOT s = f32[<=16,4] set-dimension-size(x, n), dimensions={0}",
     "", "set-dimension-size's value has to be an s32 scalar, got s64[]"),
    ("x = f32[16,4] parameter(0)\n ROOT s = s32[] get-dimension-size(x), dimensions={2}", "",
     "get-dimension-size dimension 2 out of range for rank 2"),
    ("ROOT y = s32[4,8] iota(), iota_dimension=2", "", "iota dimension 2 out of range for rank 2"),
    ("s = u64[2] parameter(0)\n ROOT r = (u64[2], f32[4]) rng-bit-generator(s), algorithm=rng_default", "",
     "rng-bit-generator's output must be an integral array, got f32[4]"),
    ("s = u64[2] parameter(0)\n ROOT r = f32[4] rng-bit-generator(s), algorithm=rng_default", "",
     "rng-bit-generator's output must be an integral array, got f32[4]"),
    ("s = u64[2] parameter(0)\n ROOT r = (u64[2], u32[4], u32[4]) rng-bit-generator(s), algorithm=rng_default", "",
     "rng-bit-generator produces a tuple of 2 elements, but the instruction's shape is (u64[2], u32[4], u32[4])"),
    ("x = f32[3] parameter(0)\n ROOT d = token[] send-done(x), channel_id=1", "",
     "the operand of send-done must be the (data, u32[], token[]) tuple of a send, got f32[3]"),
    ("x = f32[2,3] parameter(0)\n t = token[] after-all()\n ROOT s = (f32[2,3], u32[], token[]) send(x, x), channel_id=1",
     "", "the second operand of send must be a token, got f32[2,3]"),
    ("x = f32[8] parameter(0)\n ROOT d = f32[8] all-gather-done(x)", "",
     "the operand of all-gather-done must be an all-gather-start tuple, got f32[8]"),
    ("x = f32[6,2] parameter(0)\n ROOT a = f32[2,2] reduce-scatter(x), replica_groups={{0,1,2,3}}, dimensions={0},"
     " to_apply=add", ADD, "the result scatters into 3 shards along dimension 0, but the replica group size is 4"),
    ("x = f32[8] parameter(0)\n ROOT c = (f32[8], f32[8], u32[]) copy-done(x)", "",
     "the operand of copy-done must be the (dest, src, u32[]) tuple of a copy-start, got f32[8]"),
    ("x = f32[2,3] parameter(0)\n m = f32[3] parameter(1)\n g = f32[2,4] parameter(2)\n"
     " ROOT b = (f32[2,3], f32[3], f32[3]) batch-norm-grad(x, m, m, m, g), epsilon=0.001, feature_index=1", "",
     "batch-norm-grad: grad_output f32[2,4] must have the operand's dimensions f32[2,3]"),
    ("x = f32[4] parameter(0)\n ROOT f = f32[4] fusion(x, x), kind=kLoop, calls=fused",
     "fused {\n  p = f32[4] parameter(0)\n  ROOT n = f32[4] negate(p)\n}\n",
     "fused computation fused takes 1 parameter(s), but fusion passes 2 argument(s)"),
])
def test_wrong_operands_more_families(body, comps, msg):
    assert msg in rule_error(body, comps, COLL_HEADER)


# --------------------------------------------------------------------------------------------------
# The parser: omitted shapes and located errors

def test_parser_reports_failed_inference_at_the_instruction():
    err = parse_error("p = f32[4] parameter(0)\n q = s32[4] parameter(1)\n r = add(p, q)\n ROOT t = tuple(r)")
    assert err.line == 6
    assert err.message == ("failed to infer shape for opcode: add, error: binary op add with different element "
                           "types: f32[4] and s32[4]")


@pytest.mark.parametrize("body,opcode", [
    ("p = f32[4] parameter(0)\n ROOT r = reshape(p)", "reshape"),
    ("p = f32[4] parameter(0)\n ROOT r = slice(p), slice={[0:2]}", "slice"),  # XLA: "always written"
    ("p = f32[4] parameter(0)\n ROOT r = convert(p)", "convert"),
    ("p = f32[4] parameter(0)\n ROOT r = custom-call(p), custom_call_target=\"x\"", "custom-call"),
])
def test_parser_needs_shape_when_not_inferable(body, opcode):
    err = parse_error(body)
    assert err.line == 5
    assert err.message.startswith(f"cannot infer shape for opcode: {opcode}")


def test_parser_infers_through_called_computations_defined_later():
    text = ("HloModule t\nENTRY e {\n  x = f32[4] parameter(0)\n  z = f32[] constant(0)\n"
            "  ROOT r = reduce(x, z), dimensions={0}, to_apply=add\n}\n"
            "add {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT c = add(a, b)\n}\n")
    m = hlo_interp.parse(text)
    assert shape_text(m.entry.root.shape) == "f32[]"
    assert shape_text(m.computation("add").root.shape) == "f32[]"


def test_inferred_transpose_keeps_permuted_layout_like_xla():
    # XLA's parser prints f32[3,2]{0,1} for transpose of f32[2,3]{1,0}
    assert shape_text(hlo_interp.parse(_module("x = f32[2,3] parameter(0)\n ROOT t = transpose(x), dimensions={1,0}"))
                      .entry.root.shape) == "f32[3,2]{0,1}"


# --------------------------------------------------------------------------------------------------
# shapes_compatible

def test_shapes_compatible():
    from hlo_interp.syntax.parser import parse_shape
    assert shapes_compatible(parse_shape("f32[2,3]{0,1}"), parse_shape("f32[2,3]{1,0}"))
    assert shapes_compatible(parse_shape("f32[<=4,3]"), parse_shape("f32[4,3]"))
    assert shapes_compatible(parse_shape("(f32[2], (s32[], token[]))"), parse_shape("(f32[2], (s32[], token[]))"))
    assert not shapes_compatible(parse_shape("f32[2,3]"), parse_shape("f32[3,2]"))
    assert not shapes_compatible(parse_shape("f32[2]"), parse_shape("bf16[2]"))
    assert shapes_compatible(parse_shape("f32[2]"), parse_shape("bf16[2]"), ignore_fp_precision=True)
    assert not shapes_compatible(parse_shape("s32[2]"), parse_shape("f32[2]"), ignore_fp_precision=True)
    assert not shapes_compatible(parse_shape("(f32[2])"), parse_shape("f32[2]"))
    assert not shapes_compatible(parse_shape("(f32[2], s32[])"), parse_shape("(f32[2])"))


def test_infer_shape_returns_no_layouts():
    m = hlo_interp.parse(_module("x = f32[2,3]{0,1} parameter(0)\n ROOT n = f32[2,3]{0,1} negate(x)"))
    got = infer_shape(m.entry.root, [m.entry.instructions[0].shape], m)
    assert got == ir.ArrayShape(hlo_interp.types.PRIMITIVE_TYPES["f32"], (2, 3), (False, False), None)
