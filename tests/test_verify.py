"""The verifier (hlo_interp.check): the corpus checks clean, and mutated real modules are caught with
the right code at the right place.

Each mutation case takes a REAL corpus text, replaces one snippet (`old`, which must occur exactly
once) by `new`, and expects a finding with `code` located at the first occurrence of `at` in the
mutated text, whose message contains `msg`.
"""
from __future__ import annotations

from dataclasses import dataclass

import pytest

import hlo_interp
from conftest import CORPUS, corpus_files
from hlo_interp.shapes.verify import CODES, Finding, check

# Hand-written texts that XLA's parser accepts (the corpus README's criterion) but XLA's verifier
# rejects (checked with tools/xla_verify_compare.py, which compiles through XLA): file -> the lines
# of the instructions at fault.  The checker must find an error on exactly those lines.
KNOWN_INVALID = {
    # reduce-scatter with channel_id and no use_global_device_ids is cross-replica-and-partition:
    # 2 replicas x 2 partitions = 4 shards of 128, not 64; and the all-reduce with
    # use_global_device_ids=true (flattened ids) names 4 ids, not replica_count*num_partitions = 8
    # (and the all-reduces mix constrain_layout=true with unconstrained ones, line 13)
    "collectives_all.hlo": {12, 13, 18},
    # b(...) buffer shapes: "Seen buffers while buffers aren't allowed in this context"
    "shapes_buffer.hlo": {5, 6},
    # after-all of f32 values: "'stablehlo.after_all' op operand #0 must be variadic of token"
    "misc_tokens_barriers.hlo": {7, 9},
    # triangular-solve without transpose_a: "Invalid transpose option value for triangular solve"
    "linalg_triangular_cholesky.hlo": {9},
    # recv/recv-done without channel_id: "'stablehlo.recv' op requires attribute 'channel_handle'"
    "send_recv.hlo": {15, 16},
    # an async wrapped computation with a copy besides its parameters and root
    # (VerifyAsyncComputation: "expected to contain only the root and parameter instructions")
    "async_generic_forms.hlo": {8},
    # batch_group_count=8 does not divide the input batch dimension (4)
    "conv_dim_labels_groups.hlo": {15},
    # a variadic scatter of f32 and bf16 operands: "Seen floating point types of different precisions"
    "gather_scatter.hlo": {37},
    # #(u32) index types on dense arrays: "layout has a index_primitive_type, but is not a sparse array"
    "layout_all_fields.hlo": {9, 17},
    # devices=[2,2,1] for a rank-2 array, and devices=[4,2,2]<=... last_tile_dim_replicate for rank 2:
    # "Number of tile assignment dimensions (excluding subgroups) is different than the input rank"
    "sharding_basic_forms.hlo": {11},
    "sharding_iota_and_subgroups.hlo": {7},
    # f32[?,784]: "Unbounded dynamism is disabled for instruction"
    "shapes_dynamic.hlo": {6, 12},
    # pad 1_2_2 of f32[3] is f32[1+3+2*2+2] = f32[10], not f32[9]
    "pad_configs.hlo": {7},
    # the reduce-window's result is f32[4,8] (XLA: "inferred type(s) 'tensor<4x8xf32>' are incompatible")
    "reduce_window_select_scatter.hlo": {31},
}
VALID = [p for p in corpus_files() if "xla_rejects" not in p.parts]


# --------------------------------------------------------------------------------------------------
# (a) zero false alarms on real XLA output

def test_corpus_checks_clean():
    assert len(VALID) > 1000
    bad = []
    notes = 0
    known: dict[str, set] = {}
    for p in VALID:
        for m in hlo_interp.parse_all(p.read_text(encoding="utf-8"), str(p)):
            for f in check(m):
                if f.severity == "error":
                    if "handwritten" in p.parts and p.name in KNOWN_INVALID:
                        known.setdefault(p.name, set()).add(f.line)
                    else:
                        bad.append(f.render())
                elif f.severity == "note":
                    notes += 1
    assert not bad, f"{len(bad)} false alarm(s):\n" + "\n".join(bad[:20])
    assert known == KNOWN_INVALID
    assert notes > 0  # elided constants in the corpus are noted


def test_public_api_returns_findings_as_data():
    m = hlo_interp.parse("HloModule m\nENTRY e {\n  p = f32[4] parameter(0)\n  ROOT n = f32[4] negate(p, p)\n}\n",
                         "x.hlo")
    fs = hlo_interp.check(m)
    assert [f.code for f in fs] == ["E103"]
    f = fs[0]
    assert isinstance(f, Finding)
    assert (f.severity, f.filename, f.line, f.column, f.computation, f.instruction) == \
        ("error", "x.hlo", 4, 8, "e", "n")
    assert f.message == "negate expects 1 operand(s), but has 2"
    assert f.render() == ("x.hlo:4:8: error[E103]: negate expects 1 operand(s), but has 2\n"
                          "    ROOT n = f32[4] negate(p, p)\n"
                          "         ^")
    d = f.to_dict()
    assert d["code"] == "E103" and d["name"] == "operand-count" and d["file"] == "x.hlo"
    assert hlo_interp.check(m, ignore=["E103"]) == []
    assert hlo_interp.check(m, ignore=["operand-count"]) == []


def test_every_code_is_documented():
    from pathlib import Path
    doc = (Path(__file__).resolve().parents[1] / "docs" / "check-codes.md").read_text()
    for code, (name, sev, _) in CODES.items():
        assert f"{code}" in doc and name in doc, code
        assert sev in ("error", "warning", "note")
        assert code[0] == {"error": "E", "warning": "W", "note": "N"}[sev]


# --------------------------------------------------------------------------------------------------
# (b) mutations of real modules

@dataclass(frozen=True)
class Case:
    id: str
    file: str  # relative to tests/corpus
    old: str
    new: str
    code: str
    at: str  # the finding's location = first occurrence of this in the mutated text
    msg: str
    infer: bool = False  # a declared-vs-inferred finding (the shape rules')

    def param(self):
        return pytest.param(self, id=self.id)


J = "jax/"
H = "handwritten/"
CASES = [
    # ---- elementwise
    Case("add-unexpected-attr", J + "arith_s4.before.hlo", "add(a.1, b.1)", "add(a.1, b.1), dimensions={0}",
         "E104", "dimensions={0}", "unexpected attribute dimensions for add; allowed: backend_config"),
    Case("add-unknown-opcode", J + "arith_s4.before.hlo", "add(a.1, b.1)", "addd(a.1, b.1)",
         "E100", "add.1 = s4", "unknown opcode 'addd'"),
    Case("compare-missing-direction", J + "unary_isnan_f32.before.hlo", "compare(x.1, x.1), direction=NE",
         "compare(x.1, x.1)", "E105", "ne.1 = pred", "attribute direction is expected but not seen"),
    Case("negate-extra-operand", J + "unary_neg_s8.before.hlo", "negate(args_0_.1)",
         "negate(args_0_.1, args_0_.1)", "E103", "neg.1 = s8", "negate expects 1 operand(s), but has 2"),
    Case("select-missing-operand", J + "select_f32.before.hlo", "select(pred_.1, on_true.1, on_false.1)",
         "select(pred_.1, on_true.1)", "E103", "select_n.1 = f32", "select expects 3 operand(s), but has 2"),
    Case("clamp-undefined-operand", J + "clamp_s32_array.before.hlo", "clamp(min.1, x.1, max.1)",
         "clamp(min.1, x.1, mux.1)", "E106", "mux.1", "instruction does not exist: mux.1"),
    Case("reduce-precision-missing-attr", J + "reduce_precision_e8m7.before.hlo",
         "exponent_bits=8, mantissa_bits=7", "exponent_bits=8", "E105", "reduce_precision.1 = f32",
         "attribute mantissa_bits is expected"),
    Case("exp-accuracy-on-abs", J + "unary_abs_s8.before.hlo", "abs(x.1)", "abs(x.1), result_accuracy={mode=highest}",
         "E104", "result_accuracy", "unexpected attribute result_accuracy for abs"),
    Case("add-result-dim", J + "arith_s4.before.hlo", "ROOT add.1 = s4[8]{0}", "ROOT add.1 = s4[9]{0}",
         "E101", "add.1 = s4", "expected s4[9], inferred s4[8]", infer=True),
    Case("and-result-type", J + "binary_and_u8.before.hlo", "ROOT and.1 = u8[4]{0}", "ROOT and.1 = s8[4]{0}",
         "E101", "and.1 = s8", "expected s8[4], inferred u8[4]", infer=True),
    Case("compare-result-type", J + "unary_isnan_f32.before.hlo", "ROOT ne.1 = pred[8]{0}",
         "ROOT ne.1 = f32[8]{0}", "E101", "ne.1 = f32", "inferred pred[8]", infer=True),
    Case("bitcast-convert-size", J + "bitcast_convert_f16_s16.before.hlo", "ROOT bitcast_convert_type.1 = s16[3]{0}",
         "ROOT bitcast_convert_type.1 = s16[4]{0}", "E101", "bitcast_convert_type.1 = s16", "expected s16[4]",
         infer=True),
    # ---- data movement
    Case("broadcast-misspelt-attr", J + "iota_2d.before.hlo", "broadcast(iota.2), dimensions={1}",
         "broadcast(iota.2), dimension={1}", "E104", "dimension={1}", "unexpected attribute dimension for broadcast"),
    Case("transpose-missing-dims", J + "transpose.before.hlo", "transpose(x.1), dimensions={2,0,1}",
         "transpose(x.1)", "E105", "transpose.1 = f32", "attribute dimensions is expected"),
    Case("slice-missing-slice", J + "slice.before.hlo", "slice(x.1), slice={[1:3:1], [0:6:2]}", "slice(x.1)",
         "E105", "slice.1 = f32", "attribute slice is expected"),
    Case("gte-missing-index", J + "top_k.before.hlo", "get-tuple-element(top_k.3), index=0",
         "get-tuple-element(top_k.3)", "E105", "top_k.4 = f32", "attribute index is expected"),
    Case("iota-missing-dimension", J + "iota_s64.before.hlo", "iota(), iota_dimension=0", "iota()",
         "E105", "iota.1 = s64", "attribute iota_dimension is expected"),
    Case("reshape-extra-operand", J + "reshape.before.hlo", "reshape(x.1)", "reshape(x.1, x.1)",
         "E103", "reshape.1 = f32", "reshape expects 1 operand(s), but has 2"),
    Case("pad-missing-padding", J + "pad_edge.before.hlo", "pad(x.1, constant.1), padding=1_2x0_3",
         "pad(x.1, constant.1)", "E105", "pad.1 = f32", "attribute padding is expected"),
    Case("concatenate-undefined-operand", J + "concatenate.before.hlo", "concatenate(a.1, b.1, c.1)",
         "concatenate(a.1, b.2, c.1)", "E106", "b.2", "instruction does not exist: b.2"),
    Case("dynamic-slice-missing-sizes", J + "dynamic_slice.before.hlo", ", dynamic_slice_sizes={2,3}", "",
         "E105", "dynamic_slice.1 = f32", "attribute dynamic_slice_sizes is expected"),
    Case("tuple-forward-reference", J + "constant_tuple_like.before.hlo", "tuple(constant.5, constant.3, constant.4)",
         "tuple(constant.5, constant.3, tuple.1)", "E106", "tuple.1)", "instruction does not exist: tuple.1"),
    Case("transpose-result-dims", J + "transpose.before.hlo", "ROOT transpose.1 = f32[4,2,3]{0,2,1}",
         "ROOT transpose.1 = f32[4,3,2]{0,2,1}", "E101", "transpose.1 = f32", "expected f32[4,3,2], inferred f32[4,2,3]",
         infer=True),
    Case("slice-result-dims", J + "slice.before.hlo", "ROOT slice.1 = f32[2,3]{1,0}", "ROOT slice.1 = f32[2,4]{1,0}",
         "E101", "slice.1 = f32", "inferred f32[2,3]", infer=True),
    Case("reshape-element-count", J + "reshape.before.hlo", "ROOT reshape.1 = f32[6,4]{1,0}",
         "ROOT reshape.1 = f32[6,5]{1,0}", "E102", "reshape.1 = f32", "reshape", infer=True),
    Case("broadcast-dims-out-of-range", J + "iota_2d.before.hlo", "broadcast(iota.2), dimensions={1}",
         "broadcast(iota.2), dimensions={2}", "E102", "iota.3 = f32", "broadcast", infer=True),
    Case("pad-result-dims", J + "pad_edge.before.hlo", "ROOT pad.1 = f32[5,6]{1,0}", "ROOT pad.1 = f32[5,7]{1,0}",
         "E101", "pad.1 = f32", "inferred f32[5,6]", infer=True),
    Case("concatenate-dimension", J + "concatenate.before.hlo", "c.1), dimensions={1}", "c.1), dimensions={0}",
         "E10", "concatenate.1 = f32", "concatenate", infer=True),
    Case("gte-index-out-of-range", J + "top_k.before.hlo", "get-tuple-element(top_k.3), index=1",
         "get-tuple-element(top_k.3), index=2", "E102", "top_k.5 = s32", "get-tuple-element", infer=True),
    Case("reverse-dims-out-of-range", J + "rev.before.hlo", "reverse(x.1), dimensions={0,2}",
         "reverse(x.1), dimensions={0,3}", "E102", "rev.1 = f32", "reverse", infer=True),
    Case("dynamic-slice-sizes", J + "dynamic_slice.before.hlo", "dynamic_slice_sizes={2,3}",
         "dynamic_slice_sizes={2,2}", "E101", "dynamic_slice.1 = f32", "inferred f32[2,2]", infer=True),
    Case("iota-result-type-ok-dim-bad", J + "iota_s64.before.hlo", "iota(), iota_dimension=0",
         "iota(), iota_dimension=1", "E102", "iota.1 = s64", "iota", infer=True),
    # ---- reductions and windows
    Case("reduce-reducer-param-type", J + "reduce_min_u8.before.hlo", "reduce_min.4 = u8[] parameter(1)",
         "reduce_min.4 = s8[] parameter(1)", "E206", "to_apply=region_0.1",
         "to_apply=region_0.1: parameters 0 and 1 must have the same type"),
    Case("reduce-reducer-missing", J + "reduce_min_u8.before.hlo", "to_apply=region_0.1", "to_apply=region_9.1",
         "E201", "to_apply=region_9.1", "computation does not exist: region_9.1"),
    Case("reduce-no-to-apply", J + "reduce_min_u8.before.hlo", ", to_apply=region_0.1", "",
         "E105", "reduce_min.7 = u8", "attribute to_apply is expected"),
    Case("reduce-odd-operands", J + "reduce_min_u8.before.hlo", "reduce(x.1, constant.1)", "reduce(x.1)",
         "E103", "reduce_min.7 = u8", "reduce takes N inputs and N init values"),
    Case("reduce-reducer-result", J + "reduce_min_u8.before.hlo",
         "ROOT reduce_min.5 = u8[] minimum(reduce_min.3, reduce_min.4)",
         "ROOT reduce_min.5 = (u8[], u8[]) tuple(reduce_min.3, reduce_min.4)", "E206", "to_apply=region_0.1",
         "must return u8[] (the type of its accumulator parameters), returns (u8[], u8[])"),
    Case("reduce-window-reducer-params", J + "reduce_window_min_s32.before.hlo",
         "reduce_window_min.4 = s32[] parameter(1)", "reduce_window_min.4 = s32[2] parameter(1)",
         "E206", "to_apply=region_0.1", "parameter 1 must be a scalar, is s32[2]"),
    Case("select-and-scatter-select-returns", J + "select_and_scatter_maxpool_grad.before.hlo",
         "select=region_0.1, scatter=region_1.2", "select=region_1.2, scatter=region_1.2",
         "E206", "select=region_1.2", "select=region_1.2 must return pred[], returns f32[]"),
    Case("select-and-scatter-scatter-params", J + "select_and_scatter_maxpool_grad.before.hlo",
         "select=region_0.1, scatter=region_1.2", "select=region_0.1, scatter=region_0.1",
         "E206", "scatter=region_0.1", "scatter=region_0.1 must return f32[]"),
    Case("map-arity", H + "call_map_composite.hlo", "map(p0, p1), dimensions={0}", "map(p0, p1, p1), dimensions={0}",
         "E205", "to_apply=add_f32", "to_apply=add_f32 called from map must have 3 parameter(s), has 2"),
    Case("scan-missing-num-carries", H + "scan_op.hlo", "num_carries=1, is_reverse=true", "is_reverse=true",
         "E105", "rev = (f32", "attribute num_carries is expected"),
    Case("reduce-result-shape", J + "reduce_min_u8.before.hlo", "ROOT reduce_min.7 = u8[]",
         "ROOT reduce_min.7 = u8[7]", "E101", "reduce_min.7 = u8", "expected u8[7], inferred u8[]", infer=True),
    Case("reduce-window-result", J + "reduce_window_min_s32.before.hlo", "ROOT reduce_window_min.7 = s32[5]{0}",
         "ROOT reduce_window_min.7 = s32[4]{0}", "E101", "reduce_window_min.7 = s32", "inferred s32[5]", infer=True),
    # ---- dot and convolution
    Case("dot-extra-operand", J + "dot_matmul.before.hlo", "dot(a.1, b.1)", "dot(a.1, b.1, b.1)",
         "E103", "dot_general.1 = f32", "dot expects 2 operand(s), but has 3"),
    Case("conv-missing-dim-labels", J + "conv1d.before.hlo", ", dim_labels=b0f_0io->b0f", "",
         "E105", "conv_general_dilated.1 = f32", "attribute dim_labels is expected"),
    Case("conv-unexpected-attr", J + "conv1d.before.hlo", "dim_labels=b0f_0io->b0f",
         "dim_labels=b0f_0io->b0f, dimensions={0}", "E104", "dimensions={0}",
         "unexpected attribute dimensions for convolution"),
    Case("dot-contracting-dims", J + "dot_matmul.before.hlo", "rhs_contracting_dims={0}", "rhs_contracting_dims={1}",
         "E102", "dot_general.1 = f32", "dot", infer=True),
    Case("dot-result-dims", J + "dot_matmul.before.hlo", "ROOT dot_general.1 = f32[4,3]{1,0}",
         "ROOT dot_general.1 = f32[3,4]{1,0}", "E101", "dot_general.1 = f32", "expected f32[3,4], inferred f32[4,3]",
         infer=True),
    Case("conv-result-dims", J + "conv1d.before.hlo", "ROOT conv_general_dilated.1 = f32[2,16,4]{2,1,0}",
         "ROOT conv_general_dilated.1 = f32[2,15,4]{2,1,0}", "E101", "conv_general_dilated.1 = f32",
         "inferred f32[2,16,4]", infer=True),
    Case("conv-feature-groups", J + "conv1d.before.hlo", "dim_labels=b0f_0io->b0f",
         "dim_labels=b0f_0io->b0f, feature_group_count=2", "E102", "conv_general_dilated.1 = f32", "convolution",
         infer=True),
    # ---- linear algebra
    Case("fft-missing-length", J + "fft_c64.before.hlo", "fft_type=FFT, fft_length={16}", "fft_type=FFT",
         "E105", "fft.1 = c64[16]{0} fft", "attribute fft_length is expected"),
    Case("triangular-solve-extra-operand", J + "tpu_linalg_triangular_solve.before.hlo",
         "triangular-solve(a.1, b.1)", "triangular-solve(a.1, b.1, b.1)", "E103", "triangular_solve.1 = f32",
         "triangular-solve expects 2 operand(s), but has 3"),
    Case("cholesky-unexpected-attr", J + "tpu_linalg_cholesky.before.hlo", "cholesky(div.1), lower=true",
         "cholesky(div.1), lower=true, left_side=true", "E104", "left_side=true",
         "unexpected attribute left_side for cholesky"),
    Case("fft-type", J + "fft_c64.before.hlo", "fft_type=FFT", "fft_type=RFFT", "E10",
         "fft.1 = c64[16]{0} fft", "fft", infer=True),
    Case("cholesky-result", J + "tpu_linalg_cholesky.before.hlo", "cholesky.1 = f32[4,4]{1,0} cholesky",
         "cholesky.1 = f32[4,3]{1,0} cholesky", "E101", "cholesky.1 = f32[4,3]", "inferred f32[4,4]", infer=True),
    # ---- gather / scatter
    Case("gather-missing-slice-sizes", J + "gather_lax_direct.before.hlo", ", slice_sizes={1,3}", "",
         "E105", "gather.1 = f32", "attribute slice_sizes is expected"),
    Case("scatter-reducer-type", J + "scatter_lax_variadic.before.hlo", "scatter-add.3 = f32[] parameter(1)",
         "scatter-add.3 = s32[] parameter(1)", "E206", "to_apply=region_0.1", "parameters 0 and 1 must have the same type"),
    Case("scatter-even-operands", J + "scatter_lax_variadic.before.hlo", "scatter(x.1, i.1, u.1)", "scatter(x.1, i.1)",
         "E103", "scatter-add.5 = f32", "scatter takes N operands, indices and N updates"),
    Case("gather-slice-sizes", J + "gather_lax_direct.before.hlo", "slice_sizes={1,3}", "slice_sizes={1,2}",
         "E101", "gather.1 = f32", "inferred f32[4,2]", infer=True),
    Case("scatter-updates-shape", J + "scatter_lax_variadic.before.hlo", "u.1 = f32[2]{0} parameter(3)",
         "u.1 = f32[3]{0} parameter(3)", "E102", "scatter-add.5 = f32", "scatter", infer=True),
    # ---- sort / topk
    Case("sort-comparator-param-type", J + "sort_u8.before.hlo", "sort.3 = u8[] parameter(1)",
         "sort.3 = s8[] parameter(1)", "E206", "to_apply=region_0.1", "parameter 1 is s8[], the operand elements are u8"),
    Case("sort-missing-dimensions", J + "sort_u8.before.hlo", "sort(Arg_0.1), dimensions={0}, ", "sort(Arg_0.1), ",
         "E105", "sort.5 = u8", "attribute dimensions is expected"),
    Case("topk-missing-k", J + "top_k.before.hlo", "topk(x.1), k=3, largest=true", "topk(x.1), largest=true",
         "E105", "top_k.3 = (f32", "attribute k is expected"),
    Case("topk-k", J + "top_k.before.hlo", "k=3, largest=true", "k=4, largest=true", "E101", "top_k.3 = (f32",
         "inferred (f32[4], s32[4])", infer=True),
    # ---- control flow and calls
    Case("while-condition-not-pred", J + "while_loop_scalar.before.hlo", "condition=region_1.2, body=region_0.1",
         "condition=region_0.1, body=region_0.1", "E206", "condition=region_0.1",
         "condition=region_0.1 must return pred[], returns (s32[], s32[])"),
    Case("while-body-missing", J + "while_loop_scalar.before.hlo", "body=region_0.1", "body=region_7.1",
         "E201", "body=region_7.1", "computation does not exist: region_7.1"),
    Case("while-body-changes-state", J + "while_loop_scalar.before.hlo",
         "ROOT tuple.1 = (s32[], s32[]) tuple(add.1, get-tuple-element.3)",
         "ROOT tuple.1 = (s32[], s32[], s32[]) tuple(add.1, get-tuple-element.3, add.1)", "E206", "body=region_0.1",
         "body=region_0.1 returns (s32[], s32[], s32[]), but the operand (the loop state) of while.4 is (s32[], s32[])"),
    Case("while-calls-entry", J + "while_loop_scalar.before.hlo", "body=region_0.1", "body=main.3",
         "E207", "body=main.3", "while.4 calls the entry computation main.3"),
    Case("conditional-operand-count", J + "cond_simple.before.hlo", "conditional(convert_element_type.1, x.5, x.5)",
         "conditional(convert_element_type.1, x.5)", "E103", "cond.1 = f32",
         "conditional with 2 branch(es) expects 3 operands, but has 2"),
    Case("conditional-branch-param", J + "cond_simple.before.hlo", "x.4 = f32[4]{0} parameter(0)",
         "x.4 = f32[5]{0} parameter(0)", "E206", "branch_computations=",
         "branch_computations=region_1.2: parameter 0 has shape f32[5], but cond.1 passes f32[4]"),
    Case("conditional-branch-result", J + "cond_simple.before.hlo", "ROOT cos.1 = f32[4]{0} cosine(x.2)",
         "ROOT cos.1 = pred[4]{0} is-finite(x.2)", "E206", "branch_computations=",
         "branch_computations=region_0.1 returns pred[4], but the result of cond.1 is f32[4]"),
    Case("call-extra-operand", J + "unary_rint_f32.before.hlo", "call(x.1), to_apply=rint.1",
         "call(x.1, x.1), to_apply=rint.1", "E205", "to_apply=rint.1",
         "to_apply=rint.1 called from jit_rint_.1 must have 2 parameter(s), has 1"),
    Case("call-missing-to-apply", J + "unary_rint_f32.before.hlo", "call(x.1), to_apply=rint.1", "call(x.1)",
         "E105", "jit_rint_.1 = f32", "attribute to_apply is expected"),
    Case("call-result-shape", J + "unary_rint_f32.before.hlo", "ROOT jit_rint_.1 = f32[8]{0} call",
         "ROOT jit_rint_.1 = f32[9]{0} call", "E206", "to_apply=rint.1",
         "to_apply=rint.1 returns f32[8], but the result of jit_rint_.1 is f32[9]"),
    Case("call-cycle", J + "unary_rint_f32.before.hlo", "ROOT round.1 = f32[8]{0} round-nearest-even(Arg_0.1)",
         "ROOT round.1 = f32[8]{0} call(Arg_0.1), to_apply=rint.1", "E202", "rint.1 {",
         "computations call each other in a cycle: rint.1 -> rint.1"),
    Case("fusion-missing-computation", J + "composite.after.hlo", "calls=%fused_computation", "calls=%fused_comp",
         "E201", "calls=%fused_comp", "computation does not exist: fused_comp"),
    Case("fusion-missing-kind", J + "composite.after.hlo", "kind=kLoop, calls", "calls", "E105",
         "%broadcast_add_fusion", "attribute kind is expected"),
    Case("fusion-param-shape", J + "composite.after.hlo", "%param_0.1 = f32[4]{0} parameter(0)",
         "%param_0.1 = f32[5]{0} parameter(0)", "E206", "calls=%fused_computation",
         "calls=fused_computation: parameter 0 has shape f32[5], but broadcast_add_fusion passes f32[4]"),
    Case("opt-barrier-extra-operand", J + "checkpoint_grad.before.hlo", "opt-barrier(remat2.4)",
         "opt-barrier(remat2.4, remat2.4)", "E103", "remat2.5 = (f32", "opt-barrier expects 1 operand(s), but has 2"),
    Case("add-dependency-count", H + "misc_tokens_barriers.hlo", "add-dependency(p, joined)", "add-dependency(p)",
         "E103", "p_after_token = f32", "add-dependency expects 2 operand(s), but has 1"),
    Case("custom-call-missing-target", J + "gspmd_jit_sharded_2d_constraint.before.hlo",
         'custom-call(mul.3), custom_call_target="Sharding", ', "custom-call(mul.3), ", "E105",
         "sharding_constraint.1 = f32", "attribute custom_call_target is expected"),
    Case("custom-call-unexpected-attr", J + "gspmd_jit_sharded_2d_constraint.before.hlo",
         'custom_call_target="Sharding", ', 'custom_call_target="Sharding", kind=kLoop, ', "E104", "kind=kLoop",
         "unexpected attribute kind for custom-call"),
    Case("tuple-result", J + "constant_tuple_like.before.hlo", "ROOT tuple.1 = (s8[], pred[2]{0}, c64[1]{0})",
         "ROOT tuple.1 = (s8[], pred[2]{0}, c64[2]{0})", "E101", "tuple.1 = (s8", "inferred (s8[], pred[2], c64[1])",
         infer=True),
    # ---- asynchronous pairs
    Case("all-gather-done-wrong-operand", H + "async_collective_start_done.hlo", "all-gather-done(ags)",
         "all-gather-done(ars)", "E601", "all-gather-done(^ars)", "all-gather-done agd must consume a all-gather-start"),
    Case("all-reduce-start-unconsumed", H + "async_collective_start_done.hlo", "all-reduce-done(ars)",
         "all-reduce-done(ags)", "E601", "ars = f32", "all-reduce-start ars must have exactly one user"),
    Case("async-done-other-computation", H + "async_generic_forms.hlo",
         "%async-done = s32[1024]{0} async-done(((s32[1024]{0}, s32[256]{0}, s32[]), s32[1024]{0}, u32[]) "
         "%async-update), calls=%async_wrapped",
         "%async-done = s32[1024]{0} async-done(((s32[1024]{0}, s32[256]{0}, s32[]), s32[1024]{0}, u32[]) "
         "%async-update), calls=%single_op", "E602", "calls=%single_op",
         "async-done async-done calls single_op, but its chain's start async-start calls async_wrapped"),
    # what XLA's parser itself refuses (hlo_parser_test.cc's error cases)
    Case("typed-operand-wrong-shape", H + "header_is_scheduled.hlo", "add(f32[4]{0} %multiply, f32[4]{0} %y)",
         "add(f32[4]{0} %multiply, f32[5]{0} %y)", "E116", "%y)",
         "the declared operand shape f32[5] is not compatible with the shape of the operand instruction y"),
    Case("conditional-pred-branch-computations", H + "control_flow_conditional_while.hlo",
         "true_computation=Negate, false_computation=Identity", "branch_computations={Negate, Identity}", "E117",
         "branch_computations={Negate, Identity}", "a conditional with a pred[] selector takes true_computation="),
    Case("global-device-ids-without-channel", H + "async_collective_start_done.hlo",
         "all-gather-start(input, input), channel_id=3, ", "all-gather-start(input, input), ", "E407",
         "use_global_device_ids=true", "all-gather-start: use_global_device_ids=true needs a channel_id"),
    Case("async-wrapped-computation-shared", H + "async_generic_forms.hlo",
         "async-start(f32[10]{0} %f), async_execution_thread=\"parallel_thread\", calls=%threaded",
         "async-start(f32[10]{0} %f), async_execution_thread=\"parallel_thread\", calls=%single_op", "E603",
         "%start.2 = ", "computation single_op is called by more than one async op"),
    Case("async-done-other-thread", H + "async_generic_forms.hlo",
         "async-done(((f32[10]{0}), f32[10]{0}, s32[]) %start.2)",
         "async-done(((f32[10]{0}), f32[10]{0}, s32[]) %start.2), async_execution_thread=\"main\"", "E603",
         "async_execution_thread=\"main\"", "names async_execution_thread=main, but its start start.2 runs on "
         "parallel_thread"),
    Case("copy-done-wrong-operand", H + "layout_scalar_and_memory_space.hlo", "copy-done(cs)", "copy-done(v)",
         "E601", "copy-done(^v)", "copy-done cd must consume a copy-start"),
    Case("async-start-param-count", H + "computation_execution_thread.hlo", "async-start(f32[10]{0} %p0)",
         "async-start(f32[10]{0} %p0, f32[10]{0} %p0)", "E205", "calls=%wrapped",
         "calls=wrapped called from start must have 2 parameter(s), has 1"),
    Case("call-done-wrong-operand", H + "async_collective_start_done.hlo", "call-done(cls)", "call-done(ags)",
         "E601", "call-done(^ags)", "call-done cld must consume a call-start or call-update"),
    # ---- randomness, feeds, batch norm
    Case("rng-missing-distribution", J + "rng_uniform_stateful.before.hlo", "rng(a.1, constant.2), distribution=rng_uniform",
         "rng(a.1, constant.2)", "E105", "rng_uniform.1 = f32", "attribute distribution is expected"),
    Case("rng-bit-generator-missing-algorithm", J + "rng_bit_generator_u64.before.hlo",
         "rng-bit-generator(rng_bit_generator.8), algorithm=rng_default", "rng-bit-generator(rng_bit_generator.8)",
         "E105", "rng_bit_generator.9 = (u64", "attribute algorithm is expected"),
    Case("rng-state-missing-delta", J + "rng_uniform_s32.after.hlo", "rng-get-and-update-state(), delta=5",
         "rng-get-and-update-state()", "E105", "%rng-get-and-update-state = u64", "attribute delta is expected"),
    Case("infeed-extra-operand", H + "infeed_outfeed.hlo", "infeed = ((u32[3], pred[]), token[]) infeed(token0)",
         "infeed = ((u32[3], pred[]), token[]) infeed(token0, token0)",
         "E103", "infeed = ((u32", "infeed expects 1 operand(s), but has 2"),
    Case("send-done-unexpected-attr", J + "smap_psend_precv_cuda.before.hlo", "send-done(psend.4), channel_id=1",
         "send-done(psend.4), channel_id=1, dimensions={0}", "E104", "dimensions={0}",
         "unexpected attribute dimensions for send-done"),
    Case("batch-norm-training-missing-epsilon", H + "batch_norm_ops.hlo",
         "batch-norm-training(x, scale, offset), epsilon=0.001, feature_index=3",
         "batch-norm-training(x, scale, offset), feature_index=3", "E105", "train = (f32",
         "attribute epsilon is expected"),
    Case("batch-norm-inference-count", H + "batch_norm_ops.hlo", "batch-norm-inference(input, off, sc, mean, var)",
         "batch-norm-inference(input, off, sc, mean)", "E103", "infer = f32",
         "batch-norm-inference expects 5 operand(s), but has 4"),
    Case("batch-norm-training-result", H + "batch_norm_ops.hlo", "train = (f32[2,2,1,2], f32[2], f32[2])",
         "train = (f32[2,2,1,2], f32[3], f32[2])", "E101", "train = (f32", "inferred (f32[2,2,1,2], f32[2], f32[2])",
         infer=True),
    Case("rng-bit-generator-state", J + "rng_bit_generator_u64.before.hlo",
         "rng_bit_generator.9 = (u64[2]{0}, u64[8]{0})", "rng_bit_generator.9 = (u64[3]{0}, u64[8]{0})",
         "E10", "rng_bit_generator.9 = (u64", "rng-bit-generator", infer=True),
    # ---- collectives
    Case("all-reduce-repeated-replica", J + "gspmd_smap_psum.before.hlo", "replica_groups={{0,1,2,3,4,5,6,7}}",
         "replica_groups={{0,1,2,3,4,5,6,6}}", "E401", "replica_groups={{0,1,2,3,4,5,6,6}}",
         "all-reduce: replica 6 is repeated in the replica groups"),
    Case("all-gather-unequal-groups", J + "smap_all_gather_tiled.before.hlo", "replica_groups={{0,1,2,3,4,5,6,7}}",
         "replica_groups={{0,1,2},{3,4,5,6,7}}", "E401", "replica_groups=",
         "replica groups of all-gather must all have the same size; sizes are 3, 5"),
    Case("all-to-all-missing-replica", J + "gspmd_smap_all_to_all.before.hlo", "replica_groups={{0,1,2,3,4,5,6,7}}",
         "replica_groups={{0,1,2,3,4,5,6,8}}", "E401", "replica_groups=",
         "replica 7 is not named in the replica groups"),
    Case("all-reduce-non-uniform-ok-but-empty", J + "gspmd_smap_psum.before.hlo",
         "replica_groups={{0,1,2,3,4,5,6,7}}", "replica_groups={{0,1,2,3,4,5,6,7},{}}", "E401", "replica_groups=",
         "a replica group is empty"),
    Case("collective-permute-repeated-source", J + "smap_pshuffle.before.hlo", "{{7,0},{6,1},",
         "{{7,0},{7,1},", "E402", "source_target_pairs=", "source 7 appears more than once"),
    Case("collective-permute-repeated-target", J + "smap_pshuffle.before.hlo", "{{7,0},{6,1},",
         "{{7,0},{6,0},", "E402", "source_target_pairs=", "target 0 appears more than once"),
    Case("all-reduce-channel-zero", J + "gspmd_smap_psum.before.hlo",
         "all-reduce(a__x_____None_.1), channel_id=1", "all-reduce(a__x_____None_.1), channel_id=0",
         "E403", "channel_id=0", "all-reduce: channel_id must be positive, is 0"),
    Case("reduce-scatter-reducer", J + "smap_psum_scatter.before.hlo", "reduce_scatter.3 = f32[] parameter(1)",
         "reduce_scatter.3 = f32[2] parameter(1)", "E206", "to_apply=region_0.1", "parameter 1 must be a scalar"),
    Case("all-reduce-missing-to-apply", J + "gspmd_smap_psum.before.hlo", ", to_apply=region_0.1", "",
         "E105", "psum_invariant.5 = f32", "attribute to_apply is expected"),
    Case("collective-broadcast-unexpected-attr", J + "smap_pbroadcast_cuda.before.hlo",
         "collective-broadcast(shard_map.2), channel_id=1", "collective-broadcast(shard_map.2), channel_id=1, to_apply=x",
         "E104", "to_apply=x", "unexpected attribute to_apply for collective-broadcast"),
    Case("ragged-all-to-all-count", J + "smap_ragged_all_to_all.before.hlo",
         "ragged-all-to-all(shard_map.13, shard_map.14, shard_map.15, shard_map.16, shard_map.17, shard_map.18)",
         "ragged-all-to-all(shard_map.13, shard_map.14, shard_map.15, shard_map.16, shard_map.17)",
         "E103", "ragged_all_to_all.1 = f32", "ragged-all-to-all expects 6 operand(s), but has 5"),
    Case("all-gather-result", J + "smap_all_gather_tiled.before.hlo", "ROOT all_gather.1 = f32[8,32]{1,0}",
         "ROOT all_gather.1 = f32[8,16]{1,0}", "E102", "all_gather.1 = f32",
         "the result gathers 4 shards along dimension 1, but the replica group size is 8", infer=True),
    Case("iota-replica-groups-repeat", H + "replica_groups_forms.hlo", "replica_groups=[2,4]<=[8]",
         "replica_groups={{0,1},{1,2}}", "E401", "replica_groups={{0,1},{1,2}}", "replica 1 is repeated"),
    Case("sharding-rank", J + "gspmd_jit_sharded_2d_constraint.before.hlo", "sharding={devices=[2,4]<=[4,2]T(1,0)}",
         "sharding={devices=[2,2,2]<=[4,2]T(1,0)}", "E404", "sharding={devices=[2,2,2]",
         "sharding_constraint.1: the sharding has 3 tile dimension(s), but f32[8,8] has rank 2"),
    Case("sharding-device-count", J + "gspmd_smap_psum.before.hlo",
         "x.1 = f32[64,4]{1,0} parameter(0), sharding={devices=[8,1]<=[8]}",
         "x.1 = f32[64,4]{1,0} parameter(0), sharding={devices=[8,2]<=[8]}", "E404", "sharding={devices=[8,2]",
         "x.1: devices=[8,2] names 16 tile(s), but the iota list has 8 device(s)"),
    # ---- computations: parameters, ROOT, signatures
    Case("parameter-gap", J + "dot_matmul.before.hlo", "b.1 = f32[8,3]{1,0} parameter(1)",
         "b.1 = f32[8,3]{1,0} parameter(2)", "E203", "b.1 = f32",
         "parameter number 2 is out of range: computation main.1 has 2 parameter(s), numbered 0..1"),
    Case("parameter-duplicate", J + "dot_matmul.before.hlo", "b.1 = f32[8,3]{1,0} parameter(1)",
         "b.1 = f32[8,3]{1,0} parameter(0)", "E203", "b.1 = f32", "parameter number 0 is used twice"),
    Case("drop-root", J + "dot_matmul.before.hlo", "ROOT dot_general.1", "dot_general.1", "N002",
         "dot_general.1 = f32", "marks no instruction ROOT; the last one, dot_general.1, is the root"),
    Case("signature-result", J + "composite.after.hlo", "ENTRY %main.2 (x.1: f32[4]) -> f32[4] {",
         "ENTRY %main.2 (x.1: f32[4]) -> f32[5] {", "E204", "-> ^f32[5] {",
         "computation main.2 declares result f32[5], but its ROOT broadcast_add_fusion (line 28) has shape f32[4]"),
    Case("signature-parameter", J + "composite.after.hlo", "ENTRY %main.2 (x.1: f32[4]) -> f32[4] {",
         "ENTRY %main.2 (x.1: s32[4]) -> f32[4] {", "W201", "(^x.1: s32[4])",
         "gives parameter x.1 shape s32[4], but parameter(0) x.1 (line 27) has shape f32[4]"),
    Case("signature-parameter-count", J + "composite.after.hlo", "ENTRY %main.2 (x.1: f32[4]) -> f32[4] {",
         "ENTRY %main.2 (x.1: f32[4], y: f32[]) -> f32[4] {", "W201", "%main.2 (x.1",
         "the signature of main.2 lists 2 parameter(s), the computation has 1"),
    Case("non-identity-init", J + "reduce_sum_axis_bf16.before.hlo", "constant.1 = f32[] constant(0)",
         "constant.1 = f32[] constant(2)", "W110", "constant.1),",
         "the init value of this add reduce is 2.0, not the reducer's identity 0"),
    Case("control-predecessor-undefined", J + "dot_matmul.before.hlo", "rhs_contracting_dims={0}",
         "rhs_contracting_dims={0}, control-predecessors={c.9}", "E106", "control-predecessors",
         "control predecessor does not exist: c.9"),
    # ---- layouts
    Case("layout-repeated-dim", J + "dot_matmul.before.hlo", "a.1 = f32[4,8]{1,0}", "a.1 = f32[4,8]{1,1}",
         "E301", "a.1 = f32", "a.1: layout {1,1} of f32[4,8] repeats a dimension"),
    Case("layout-out-of-range", J + "transpose.before.hlo", "ROOT transpose.1 = f32[4,2,3]{0,2,1}",
         "ROOT transpose.1 = f32[4,2,3]{0,3,1}", "E301", "transpose.1 = f32",
         "names a dimension outside 0..2"),
    Case("layout-zero-tile", H + "layout_tiled_tpu.hlo", "%param_0.1 = bf16[8,1,1280,16384]{3,2,0,1:T(8,128)(2,1)}",
         "%param_0.1 = bf16[8,1,1280,16384]{3,2,0,1:T(8,0)(2,1)}", "E302", "%param_0.1 =",
         "param_0.1: tile (8,0) of bf16[8,1,1280,16384] must have positive sizes"),
    # ---- module header
    Case("entry-layout-param-shape", J + "dot_matmul.before.hlo",
         "entry_computation_layout={(f32[4,8]{1,0}, f32[8,3]{1,0})", "entry_computation_layout={(f32[4,9]{1,0}, f32[8,3]{1,0})",
         "E501", "={(^f32[4,9]", "gives parameter 0 shape f32[4,9], but parameter(0) a.1 of main.1 (line 4) is f32[4,8]"),
    Case("entry-layout-param-count", J + "dot_matmul.before.hlo",
         "entry_computation_layout={(f32[4,8]{1,0}, f32[8,3]{1,0})", "entry_computation_layout={(f32[4,8]{1,0})",
         "E501", "entry_computation_layout=", "entry_computation_layout has 1 parameter(s), the entry computation main.1 has 2"),
    Case("entry-layout-result", J + "dot_matmul.before.hlo", "->f32[4,3]{1,0}}", "->f32[4,3,1]{2,1,0}}",
         "E501", "->^f32[4,3,1]", "gives result f32[4,3,1], but the ROOT dot_general.1 of main.1 (line 6) is f32[4,3]"),
    Case("entry-layout-bad-layout", J + "dot_matmul.before.hlo", "->f32[4,3]{1,0}}", "->f32[4,3]{0,0}}",
         "E301", "->^f32[4,3]{0,0}", "entry_computation_layout: layout {0,0} of f32[4,3] repeats a dimension"),
    Case("alias-param-out-of-range", J + "donate_inplace.after.hlo", "{0}: (0, {}, may-alias)", "{0}: (2, {}, may-alias)",
         "E502", "input_output_alias=", "parameter 2 does not exist (main.1 has 2 parameter(s))"),
    Case("alias-output-out-of-range", J + "donate_inplace.after.hlo", "{0}: (0, {}, may-alias)",
         "{2}: (0, {}, may-alias)", "E502", "input_output_alias=", "the output has no element {2}"),
    Case("alias-size-mismatch", J + "donate_inplace.after.hlo", "%a.1 = f32[16]{0} parameter(0)",
         "%a.1 = f32[8]{0} parameter(0)", "E502", "input_output_alias=",
         "the output f32[16] and the parameter f32[8] differ in size"),
    Case("alias-param-index", J + "donate_inplace.after.hlo", "{0}: (0, {}, may-alias)", "{0}: (0, {1}, may-alias)",
         "E502", "input_output_alias=", "parameter 0 has no element {1}"),
    Case("buffer-donor-out-of-range", H + "header_buffer_donor.hlo", "buffer_donor={ (0, {}), (1, {0}), (1, {1}) }",
         "buffer_donor={ (0, {}), (3, {0}), (1, {1}) }", "E503", "buffer_donor=", "parameter 3 does not exist"),
    # ---- rules XLA's verifier adds on top of the shape rules
    Case("mixed-precision", J + "binary_add_f32.before.hlo", "args_1_.1 = f32[3]{0} parameter(1)",
         "args_1_.1 = bf16[3]{0} parameter(1)", "E108", "add.1 = f32",
         "add mixes floating-point types bf16, f32 in its operands"),
    Case("unbounded-dynamism", J + "dot_matmul.before.hlo", "a.1 = f32[4,8]{1,0}", "a.1 = f32[?,8]{1,0}",
         "E109", "a.1 = f32", "a.1: f32[?,8] has an unbounded dimension"),
    Case("operand-layout-constraint", J + "linalg_triangular_solve_right_upper_t.before.hlo",
         "operand_layout_constraints={f32[4,4]{0,1}, f32[2,4]{0,1}}",
         "operand_layout_constraints={f32[4,4]{0,1}, f32[4,2]{0,1}}", "E110", "custom-call(a.1, ^b.1)",
         "operand layout constraint f32[4,2] for operand 1 is not compatible with the operand shape f32[2,4]"),
    Case("operand-layout-constraint-count", J + "linalg_triangular_solve_right_upper_t.before.hlo",
         "operand_layout_constraints={f32[4,4]{0,1}, f32[2,4]{0,1}}",
         "operand_layout_constraints={f32[4,4]{0,1}}", "E110", "operand_layout_constraints=",
         "custom-call has 2 operand(s) but 1 operand layout constraint(s)"),
    Case("fusion-dead-instruction", J + "composite.after.hlo", "%constant.4 = f32[] constant(1)",
         "%constant.4 = f32[] constant(1)\n  %dead = f32[] negate(%constant.4)", "E209", "%dead",
         "non-root instruction dead of fused computation fused_computation (called by broadcast_add_fusion) "
         "has no users"),
    Case("sparse-layout-field", J + "dot_matmul.before.hlo", "a.1 = f32[4,8]{1,0}", "a.1 = f32[4,8]{1,0:#(u32)}",
         "E303", "a.1 = f32", "a.1: layout of f32[4,8] has #(index type), but the array is not sparse"),
    # ---- rules added from XLA's HloVerifier (the entry signature, channels, buffers, ...)
    Case("entry-layout-second-param", J + "dot_matmul.before.hlo",
         "entry_computation_layout={(f32[4,8]{1,0}, f32[8,3]{1,0})", "entry_computation_layout={(f32[4,8]{1,0}, f32[3,8]{1,0})",
         "E501", ", ^f32[3,8]{1,0})", "gives parameter 1 shape f32[3,8], but parameter(1) b.1 of main.1 (line 5) is f32[8,3]"),
    Case("signature-second-param", H + "computation_signatures_mixed.hlo", "(lhs: f32[], rhs: f32[]) -> f32[]",
         "(lhs: f32[], rhs: s32[]) -> f32[]", "W201", "^rhs: s32[]",
         "the signature of max_f32 gives parameter rhs shape s32[], but parameter(1) rhs (line 6) has shape f32[]"),
    Case("compare-type", J + "binary_fmax_f32.before.hlo", "compare(Arg_0.3, Arg_1.3), direction=GT",
         "compare(Arg_0.3, Arg_1.3), direction=GT, type=SIGNED", "E111", "type=SIGNED",
         "compare of f32 operands takes type=FLOAT or TOTALORDER, not type=SIGNED"),
    Case("compare-type-unsigned", J + "binary_pow_s32.before.hlo", "compare(Arg_0.3, broadcast.3), direction=NE",
         "compare(Arg_0.3, broadcast.3), direction=NE, type=UNSIGNED", "E111", "type=UNSIGNED",
         "compare of s32 operands takes type=SIGNED, not type=UNSIGNED"),
    Case("buffer-shape", J + "dot_matmul.before.hlo", "a.1 = f32[4,8]{1,0} parameter(0)",
         "a.1 = b(f32[4,8]{1,0}) parameter(0)", "E112", "a.1 = b(",
         "a.1 has the buffer shape b(f32[4,8]); XLA's verifier rejects buffer shapes"),
    Case("buffer-of-tuple", J + "dot_matmul.before.hlo", "a.1 = f32[4,8]{1,0} parameter(0)",
         "a.1 = b((f32[4,8]{1,0}, f32[2])) parameter(0)", "E112", "a.1 = b(",
         "a.1: b((f32[4,8], f32[2])): a buffer shape must wrap an array shape (XLA's parser rejects b() of a tuple)"),
    Case("composite-without-name", H + "call_map_composite.hlo", 'frontend_attributes={composite.name="foo.baz"}',
         'frontend_attributes={composite.nam="foo.baz"}', "E113", "frontend_attributes={composite.nam",
         "comp2: a composite call needs frontend_attributes with a non-empty composite.name"),
    Case("composite-version", H + "call_map_composite.hlo", 'composite.version="1"', 'composite.version="v1"',
         "E113", "frontend_attributes={composite.attributes", 'composite.version must be a non-negative integer, is "v1"'),
    Case("output-operand-aliasing-operand", H + "custom_call_all_attrs.hlo",
         "output_to_operand_aliasing={{0}: (1, {}), {1}: (0, {0})}", "output_to_operand_aliasing={{0}: (2, {}), {1}: (0, {0})}",
         "E114", "output_to_operand_aliasing=", "output_to_operand_aliasing {0}: (2, {}): operand 2 does not exist "
         "(aliasing has 2 operand(s))"),
    Case("output-operand-aliasing-shape", H + "custom_call_all_attrs.hlo",
         "output_to_operand_aliasing={{0}: (1, {}), {1}: (0, {0})}", "output_to_operand_aliasing={{2}: (1, {}), {1}: (0, {0})}",
         "E114", "output_to_operand_aliasing=", "output_to_operand_aliasing {2}: (1, {}): the output f32[1,2,3] and "
         "the operand f32[123,4] have different shapes"),
    Case("after-all-f32-operand", J + "create_token_after_all.before.hlo", "create_token.3 = token[] after-all()",
         "create_token.3 = f32[] constant(0)", "E102", "create_token.3)",
         "after-all: operand create_token.3 is f32[]; every operand of after-all must be a token"),
    Case("triangular-solve-no-transpose", J + "tpu_linalg_triangular_solve.before.hlo", ", transpose_a=TRANSPOSE", "",
         "E105", "triangular_solve.1 = f32", "attribute transpose_a is expected but not seen (triangular-solve)"),
    Case("send-without-channel", J + "smap_psend_precv_cuda.before.hlo", "send(shard_map.2, psend.3), channel_id=1,",
         "send(shard_map.2, psend.3),", "E405", "psend.4 = (f32", "send psend.4 has no channel_id"),
    Case("send-done-other-channel", J + "smap_psend_precv_cuda.before.hlo", "send-done(psend.4), channel_id=1",
         "send-done(psend.4), channel_id=2", "E405", "channel_id=2",
         "send-done psend.5 has channel_id=2, but its send psend.4 has channel_id=1 (XLA's parser rejects this)"),
    Case("recv-done-host-transfer", J + "smap_psend_precv_cuda.before.hlo", "recv-done(precv.4), channel_id=1",
         "recv-done(precv.4), channel_id=1, is_host_transfer=true", "E405", "is_host_transfer=true",
         "recv-done precv.5 and its recv precv.4 must agree on is_host_transfer"),
    Case("channel-shared-with-collective", J + "smap_psend_precv_cuda.before.hlo",
         "ROOT precv.6 = f32[8,4]{1,0} get-tuple-element(precv.5), index=0",
         "ROOT precv.6 = f32[8,4]{1,0} collective-permute(shard_map.2), channel_id=1, source_target_pairs={{0,1}}",
         "E405", "channel_id=1, source_target_pairs",
         "channel 1 is used by send psend.4 and by collective-permute precv.6"),
    Case("send-two-users", J + "smap_psend_precv_cuda.before.hlo", "  psend.5 = token[] send-done(psend.4)",
         "  psend.x = (f32[8,4]{1,0}, u32[], token[]) copy(psend.4)\n  psend.5 = token[] send-done(psend.4)", "E601",
         "psend.4 = (f32", "send psend.4 must have exactly one user, a send-done (or a tuple); its users: psend.x "
         "(copy), psend.5 (send-done)"),
    Case("send-done-wrong-operand", J + "smap_psend_precv_cuda.before.hlo", "send-done(psend.4)", "send-done(psend.3)",
         "E601", "send-done(^psend.3)", "send-done psend.5 must consume a send (or a get-tuple-element), but its "
         "operand psend.3 is after-all"),
    Case("async-wrapped-extra-instruction", H + "computation_execution_thread.hlo",
         '  ROOT %cc = f32[20]{0} custom-call(f32[10]{0} %p), custom_call_target="foo"',
         '  %n = f32[10]{0} negate(%p)\n  ROOT %cc = f32[20]{0} custom-call(f32[10]{0} %n), custom_call_target="foo"',
         "E604", "%n = f32", "async wrapped computation wrapped must hold only its parameters and its root cc, but "
         "also has n (negate)"),
    Case("replica-groups-vs-partitions", J + "gspmd_smap_psum.before.hlo", "HloModule jit_gspmd_smap_psum, ",
         "HloModule jit_gspmd_smap_psum, num_partitions=4, ", "E401", "replica_groups={{0,1,2,3,4,5,6,7}}",
         "all-reduce: in flattened-id mode the replica groups must name 4 ids (replica_count*num_partitions=1*4), "
         "but they name 8"),
    Case("permute-id-beyond-partitions", J + "smap_pshuffle.before.hlo", "HloModule jit_smap_pshuffle, ",
         "HloModule jit_smap_pshuffle, num_partitions=4, ", "E402", "source_target_pairs=",
         "source 7 in source_target_pairs must be < 4 (the module's num_partitions)"),
    Case("permute-in-place-repeats", H + "collectives_all.hlo", "source_target_pairs={{0,1},{1,2},{2,3}}, slice_sizes",
         "source_target_pairs={{0,1},{0,2},{0,3}}, slice_sizes", "E402", "source_target_pairs={{0,1},{0,2},{0,3}}",
         "source 0 appears more than 2 times in source_target_pairs"),
    Case("all-reduce-layout-mix", H + "replica_groups_forms.hlo",
         "iota = f32[8] all-reduce(p), replica_groups=[2,4]<=[8], to_apply=add",
         "iota = f32[8] all-reduce(p), replica_groups=[2,4]<=[8], constrain_layout=true, to_apply=add", "E406",
         "constrain_layout=true", "all-reduce iota has constrain_layout=true, but empty (line 11) does not"),
    Case("iota-pred", J + "iota_s64.before.hlo", "iota.1 = s64", "iota.1 = pred", "E102", "iota.1 = pred",
         "iota of pred: XLA makes iotas of integral, floating-point and complex types only"),
    Case("alias-param-twice", J + "donate_inplace.after.hlo", "{0}: (0, {}, may-alias)",
         "{0}: (0, {}, may-alias), {1}: (0, {}, may-alias)", "E502", "input_output_alias=",
         "input_output_alias {1}: (0, {}): parameter 0 {} is already aliased with output {0}"),
    Case("alias-tuple-output", J + "donate_inplace.after.hlo", "{0}: (0, {}, may-alias)", "{}: (0, {}, may-alias)",
         "E502", "input_output_alias=", "aliased buffers must be arrays, but the output is the tuple (f32[16], f32[16])"),
    Case("buffer-donor-tuple", H + "header_buffer_donor.hlo", "buffer_donor={ (0, {}), (1, {0}), (1, {1}) }",
         "buffer_donor={ (0, {}), (1, {}), (1, {1}) }", "E503", "buffer_donor=",
         "buffer_donor (1, {}): a donated buffer must be an array, this one is the tuple (f32[2], f32[3])"),
    Case("buffer-donor-aliased", J + "donate_inplace.after.hlo", "input_output_alias={ {0}: (0, {}, may-alias) }",
         "input_output_alias={ {0}: (0, {}, may-alias) }, buffer_donor={ (0, {}) }", "E503", "buffer_donor=",
         "buffer_donor (0, {}): the buffer is also in input_output_alias"),
    Case("tuple-sharding-on-array", J + "gspmd_smap_psum.before.hlo",
         "x.1 = f32[64,4]{1,0} parameter(0), sharding={devices=[8,1]<=[8]}",
         "x.1 = f32[64,4]{1,0} parameter(0), sharding={{devices=[8,1]<=[8]}, {replicated}}", "E404", "sharding={{",
         "x.1: a tuple sharding (2 element(s)) for f32[64,4], which is not a tuple"),
    Case("custom-call-api-version", J + "cuda_linalg_cholesky.before.hlo", "api_version=API_VERSION_TYPED_FFI",
         "api_version=API_VERSION_TYPED", "E115", "api_version=API_VERSION_TYPED",
         "custom-call api_version=API_VERSION_TYPED is not one of API_VERSION_ORIGINAL"),
    # ---- constants
    Case("elided-constant", J + "constant_small.before.hlo", "constant({1, 2, 3, 4})", "constant({...})",
         "N001", "constant.1 = f32", "constant constant.1 has an elided value {...}"),
]

def _loc_of(text: str, needle: str) -> tuple[int, int]:
    """Line and column of `needle` in `text` (of the `^` in it, when it has one)."""
    before, caret, after = needle.partition("^")
    i = text.index(before + after) + (len(before) if caret else 0)
    line = text.count("\n", 0, i) + 1
    return line, i - (text.rfind("\n", 0, i) + 1) + 1


@pytest.mark.parametrize("case", [c.param() for c in CASES])
def test_mutation_is_caught(case: Case):
    path = CORPUS / case.file
    text = path.read_text(encoding="utf-8")
    assert text.count(case.old) == 1, f"{case.old!r} occurs {text.count(case.old)} times in {case.file}"
    # the original is clean of this code (so the finding is caused by the mutation)
    before = [f for m in hlo_interp.parse_all(text, str(path)) for f in check(m)]
    assert not any(f.code == case.code and f.severity == "error" for f in before), before
    mutated = text.replace(case.old, case.new)
    findings = [f for m in hlo_interp.parse_all(mutated, case.file) for f in check(m)]
    got = [f for f in findings if f.code.startswith(case.code) and case.msg in f.message]
    assert got, f"no {case.code} finding containing {case.msg!r}; findings:\n" + \
        "\n".join(f.render() for f in findings)
    f = got[0]
    assert f.filename == case.file
    if case.at:
        assert (f.line, f.column) == _loc_of(mutated, case.at), f.render()
    else:
        assert f.line is not None and f.column is not None
    assert f.source_line is not None and f.render().startswith(f"{case.file}:{f.line}:{f.column}: ")


def test_mutation_cases_cover_every_family():
    from hlo_interp.opcodes import OPCODES
    families = {op.family for op in OPCODES.values()}
    text = " ".join(c.old + " " + c.new for c in CASES)
    covered = {OPCODES[name].family for name in OPCODES if f" {name}(" in " " + text.replace("=", " ")
               or f"{name}(" in text}
    assert families <= covered, families - covered
    assert len(CASES) >= 80
    assert len([c for c in CASES if not c.infer]) >= 80  # 80 cases that are not declared-vs-inferred findings
    codes = {c.code for c in CASES}
    # every code has a mutation case, except the parser's (E001) and ones no parsed text reaches
    unreachable = {"E000", "E001", "E107", "E208"}
    assert set(CODES) - unreachable <= codes, set(CODES) - unreachable - codes


def test_modules_built_in_python():
    """E107 and E208 cannot come from text (the parser rejects it first), only from built modules."""
    from hlo_interp import ir
    from hlo_interp.types import primitive_type
    f32 = ir.ArrayShape(primitive_type("f32"), (4,))
    p = ir.Instruction("p", "parameter", f32, parameter_number=0)
    cc = ir.Instruction("cc", "custom-call", None, ["p"], attrs={"custom_call_target": "foo"}, is_root=True)
    empty = ir.Computation("nothing", [])
    m = ir.Module("m", [empty, ir.Computation("e", [p, cc], is_entry=True)])
    got = sorted((f.code, f.computation, f.instruction, f.line) for f in check(m))
    expected = [("E107", "e", "cc", None), ("E208", "nothing", None, None)]
    assert got == expected


def test_doc_examples_are_real_output():
    """docs/check-codes.md: each code's example text gives exactly the output printed below it."""
    import re
    from pathlib import Path
    from hlo_interp.cli import check_text
    doc = (Path(__file__).resolve().parents[1] / "docs" / "check-codes.md").read_text()
    sections = re.split(r"^### ", doc, flags=re.M)[1:]
    checked = 0
    for sec in sections:
        code = sec.split()[0]
        blocks = re.findall(r"```\n(.*?)```", sec, flags=re.S)
        if len(blocks) != 2:
            continue
        text, expected = blocks
        got = [f.render() for f in check_text(text, "example.hlo") if f.code == code]
        assert got and got[0] == expected.rstrip("\n"), (code, got)
        checked += 1
    assert checked >= len(CODES) - 6


def test_in_place_permute_ids_repeat_once_per_slice():
    """XLA's CheckDuplicatedSourceOrTarget: the in-place collective-permute (4 operands) moves one slice per
    offset entry, so an id may appear that many times (array buffers: the length of the offsets tuple;
    tuple buffers: the length of its first element's tuple)."""
    text = (CORPUS / H / "collectives_all.hlo").read_text(encoding="utf-8")
    old = "source_target_pairs={{0,1},{1,2},{2,3}}, slice_sizes"
    assert text.count(old) == 1
    ok = text.replace(old, "source_target_pairs={{0,1},{0,2},{2,1}}, slice_sizes")  # 0 and 1 twice: allowed
    assert not [f for f in check(hlo_interp.parse(ok)) if f.code == "E402"]
    tuple_form = """HloModule m, replica_count=4
ENTRY e {
  b0 = u32[2,3] parameter(0)
  inp = (u32[2,3], u32[2,3]) tuple(b0, b0)
  o1 = u32[4,3] parameter(1)
  out = (u32[2,3], u32[4,3]) tuple(b0, o1)
  z = s32[] constant(0)
  a = (s32[], s32[]) tuple(z, z)
  ab = ((s32[], s32[]), (s32[], s32[])) tuple(a, a)
  off = (((s32[], s32[]), (s32[], s32[])), ((s32[], s32[]), (s32[], s32[]))) tuple(ab, ab)
  ROOT cp = (u32[2,3], u32[4,3]) collective-permute(inp, out, off, off), source_target_pairs={{0,1},{1,2},{2,3},{3,0},{0,3},{3,2},{2,1},{1,0}}, slice_sizes={{1,3},{1,3},{2,3},{2,3}}
}
"""
    assert not [f for f in check(hlo_interp.parse(tuple_form)) if f.code == "E402"]
    three = tuple_form.replace("{{0,1},{1,2},{2,3},{3,0},{0,3}", "{{0,1},{0,2},{2,3},{3,0},{0,3}")  # 0 thrice
    got = [f for f in check(hlo_interp.parse(three, "x.hlo")) if f.code == "E402"]
    assert [f.message for f in got] == ["source 0 appears more than 2 times in source_target_pairs"]
    assert (got[0].filename, got[0].line, got[0].column) == ("x.hlo", 11, 74)  # source_target_pairs=


def test_enumeration_attributes_xla_parser_refuses():
    """E115 for the values ParseComparisonDirection/Type and ParseAlgorithm refuse (checked beside the
    compare and dot shape rules), each at its attribute; the comparison type's E111 follows."""
    text = """HloModule m

ENTRY e {
  a = f32[2] parameter(0)
  b = f32[2] parameter(1)
  c = pred[2] compare(a, b), direction=XX, type=TOTAL
  m = f32[2,2] parameter(2)
  d = f32[2,2] dot(m, m), lhs_contracting_dims={1}, rhs_contracting_dims={0}, algorithm=dot_f32_f32_f99
  ROOT r = (pred[2], f32[2,2]) tuple(c, d)
}
"""
    got = [(f.code, f.line, f.column, f.message) for f in check(hlo_interp.parse(text))]
    assert got == [
        ("E115", 6, 30, "compare direction=XX is not one of EQ, GE, GT, LE, LT, NE"),
        ("E115", 6, 44, "compare type=TOTAL is not one of FLOAT, SIGNED, TOTALORDER, UNSIGNED"),
        ("E111", 6, 44, "compare of f32 operands takes type=FLOAT or TOTALORDER, not type=TOTAL"),
        ("E115", 8, 79, "dot algorithm=dot_f32_f32_f99 is not one of dot_any_f8_any_f8_f32, "
                        "dot_any_f8_any_f8_f32_fast_accum, dot_bf16_bf16_bf16, dot_bf16_bf16_f32, "
                        "dot_bf16_bf16_f32_x3, dot_bf16_bf16_f32_x6, dot_bf16_bf16_f32_x9, dot_f16_f16_f16, "
                        "dot_f16_f16_f32, dot_f32_f32_f32, dot_f64_f64_f64, dot_tf32_tf32_f32, "
                        "dot_tf32_tf32_f32_x3, unset")]


_COUNT_MODULE_HEAD = """HloModule m
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
lt {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = pred[] compare(x, y), direction=LT
}
id {
  ROOT x = f32[2] parameter(0)
}
ENTRY e {
  a = f32[2] parameter(0)
  """
_COUNT_CASES = [
    ('ROOT r = f32[] reduce(a, a, a), dimensions={0}, to_apply=add',
     [('E103', 'reduce takes N inputs and N init values (an even, positive number), but has 3')]),
    ('ROOT r = f32[2] reduce-window(a), window={size=1}, to_apply=add',
     [('E103', 'reduce-window takes N inputs and N init values (an even, positive number), but has 1')]),
    ('ROOT r = f32[2] scatter(a, a), update_window_dims={}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add',
     [('E103', 'scatter takes N operands, indices and N updates (an odd number >= 3), but has 2')]),
    ('ROOT r = f32[1] dynamic-slice(), dynamic_slice_sizes={1}',
     [('E103', 'dynamic-slice needs an operand')]),
    ('ROOT r = f32[2] dynamic-update-slice(a)',
     [('E103', 'dynamic-update-slice needs an operand and an update, but has 1 operand(s)')]),
    ('p = pred[] parameter(1)\n  ROOT r = f32[2] conditional(p, a), true_computation=id, false_computation=id',
     [('E103', 'conditional with 2 branch(es) expects 3 operands, but has 2')]),
    ('p = pred[] parameter(1)\n  ROOT r = f32[2] conditional(p, a, a), true_computation=id',
     [('E105', 'conditional needs both true_computation and false_computation')]),
    ('p = s32[] parameter(1)\n  ROOT r = f32[2] conditional(p, a), true_computation=id, branch_computations={id, id}',
     [('E103', 'conditional with 2 branch(es) expects 3 operands, but has 2'), ('E104', 'conditional takes either true_computation/false_computation or branch_computations, not both')]),
    ('p = s32[] parameter(1)\n  ROOT r = f32[2] conditional(p, a)',
     [('E105', 'conditional needs branch_computations (or true_computation and false_computation)')]),
    ('ROOT r = f32[2] sort(), dimensions={0}, to_apply=lt',
     [('E103', 'sort needs at least one operand')]),
    ('ROOT r = f32[2] concatenate(), dimensions={0}',
     [('E103', 'concatenate needs at least one operand')]),
    ('ROOT r = f32[2] map(), to_apply=add',
     [('E103', 'map needs at least one operand')]),
    ('ROOT r = f32[2] collective-permute(a, a), source_target_pairs={{0,1}}, slice_sizes={{1}}',
     [('E103', 'collective-permute with slice_sizes expects 4 operands, but has 2')]),
]


@pytest.mark.parametrize("body,want", _COUNT_CASES)
def test_operand_counts_and_conditional_attributes(body, want):
    """E103 for a variadic opcode's operand count and E104/E105 for conditional's computations (checked
    beside the shape rules), with their messages."""
    got = [(f.code, f.message) for f in check(hlo_interp.parse(_COUNT_MODULE_HEAD + body + "\n}\n"))
           if f.code in ("E103", "E104", "E105")]
    assert got == want


def test_repeated_instructions_are_each_checked():
    """The verifier checks an instruction signature (opcode, shapes, attributes) once when it gives no
    finding; every instruction still gets its own findings at its own line: the same wrong signature
    twice, the same right signature with an undefined operand or with an unknown attribute, the
    same opcode and shapes with other attribute values."""
    text = """HloModule m

ENTRY e {
  p = f32[2,3] parameter(0)
  a = f32[2,3] add(p, p)
  b = f32[2,3] add(p, p)
  c = f32[3,2] add(p, p)
  d = f32[3,2] add(p, p)
  e = f32[2,3] add(p, q)
  f = f32[2,3] add(p, p), foo=1
  g = f32[3,2] transpose(p), dimensions={1,0}
  h = f32[3,2] transpose(p), dimensions={1,0}
  i = f32[3,2] transpose(p), dimensions={0,0}
  ROOT q = f32[2,3] add(p, p)
}
"""
    got = [(f.code, f.line, f.instruction) for f in check(hlo_interp.parse(text))]
    assert got == [("E101", 7, "c"), ("E101", 8, "d"), ("E106", 9, "e"), ("E104", 10, "f"),
                   ("E102", 13, "i")]
    # the memo keeps the whole result a function of the text: the same findings as checking each
    # instruction in a module of its own
    alone = []
    for line in (7, 8, 13):
        ins = text.splitlines()[line - 1]
        m = hlo_interp.parse("HloModule m\n\nENTRY e {\n  p = f32[2,3] parameter(0)\n" + ins + "\n}\n")
        alone += [f.message for f in check(m) if f.code in ("E101", "E102")]
    assert [f.message for f in check(hlo_interp.parse(text)) if f.code in ("E101", "E102")] == alone
