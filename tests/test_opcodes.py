"""The opcode table and the typed decoding of attributes."""
import pytest

import hlo_interp
from hlo_interp import ir
from hlo_interp.opcodes import OPCODES, VARIADIC

# xla/hlo/ir/hlo_opcode.h (HLO_OPCODE_LIST), by arity (digest: ../shared/reference/xla-anchors.md §1b)
XLA_OPCODES = {
    0: "constant iota parameter partition-id replica-id rng-get-and-update-state",
    1: "abs acos acosh all-gather-done all-reduce-done asin asinh async-done atan atanh bitcast "
       "bitcast-convert broadcast cbrt ceil cholesky count-leading-zeros collective-permute-done convert "
       "copy copy-done copy-start cosine cosh domain erf exponential exponential-minus-one fft floor "
       "get-dimension-size get-tuple-element imag infeed is-finite log log-plus-one logistic negate not "
       "opt-barrier popcnt real recv recv-done reduce-precision reshape reverse rng-bit-generator "
       "round-nearest-afz round-nearest-even rsqrt send-done shuffle sign sine sinh slice sqrt tan tanh "
       "topk transpose while",
    2: "add add-dependency and atan2 compare complex divide dot gather maximum minimum mulhi multiply or "
       "outfeed pad power remainder send set-dimension-size shift-left shift-right-arithmetic "
       "shift-right-logical stochastic-convert subtract triangular-solve xor",
    3: "batch-norm-training clamp ragged-dot select select-and-scatter",
    4: "scaled-dot",
    5: "batch-norm-grad batch-norm-inference",
    6: "ragged-all-to-all",
    VARIADIC: "after-all all-gather all-gather-start all-reduce all-reduce-start all-to-all async-start "
              "async-update call collective-broadcast collective-permute collective-permute-start "
              "collective-reduce concatenate conditional convolution custom-call dynamic-reshape "
              "dynamic-slice dynamic-update-slice fusion map reduce reduce-scatter reduce-window rng scan "
              "scatter sort tuple",
}


def test_table_has_xlas_136_opcodes_with_their_arity():
    expected = {name: arity for arity, names in XLA_OPCODES.items() for name in names.split()}
    assert len(expected) == 136
    assert {n: op.arity for n, op in OPCODES.items()} == expected


def instr(line: str, extra: str = "") -> ir.Instruction:
    m = hlo_interp.parse("HloModule m\n" + extra + "ENTRY e {\n  " + line + "\n}\n")
    return m.entry.root


def test_window_padding_slice_dim_labels():
    ins = instr("ROOT c = f32[1,8,8,4] convolution(f32[1,9,9,3] a, f32[3,3,3,4] b), "
                "window={size=3x3 stride=2x1 pad=0_1x1_1 rhs_dilate=1x2 rhs_reversal=0x1}, dim_labels=b01f_01io->b01f")
    w = ins.attrs["window"]
    assert [d.size for d in w.dims] == [3, 3]
    assert [(d.stride, d.pad_low, d.pad_high, d.rhs_dilate, d.reversal) for d in w.dims] == [
        (2, 0, 1, 1, False), (1, 1, 1, 2, True)]
    dl = ins.attrs["dim_labels"]
    assert (dl.input_batch, dl.input_feature, dl.input_spatial) == (0, 3, (1, 2))
    assert (dl.kernel_input_feature, dl.kernel_output_feature, dl.kernel_spatial) == (2, 3, (0, 1))
    p = instr("ROOT p = f32[9] pad(f32[4] a, f32[] z), padding=-1_2_1").attrs["padding"]
    assert p == (ir.PaddingDim(-1, 2, 1),)
    s = instr("ROOT s = f32[2,3] slice(f32[4,6] a), slice={[1:3], [0:6:2]}").attrs["slice"]
    assert s == (ir.SliceDim(1, 3, 1), ir.SliceDim(0, 6, 2))


def test_replica_groups_both_forms_expand_the_same():
    add = "add {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT c = f32[] add(a, b)\n}\n"
    a = instr("ROOT r = f32[4] all-reduce(f32[4] p), replica_groups=[2,4]<=[4,2]T(1,0), to_apply=add", add)
    b = instr("ROOT r = f32[4] all-reduce(f32[4] p), replica_groups={{0,2,4,6},{1,3,5,7}}, to_apply=add", add)
    assert a.attrs["replica_groups"].expand() == b.attrs["replica_groups"].expand() == (
        (0, 2, 4, 6), (1, 3, 5, 7))


def test_dot_and_gather_dimension_numbers():
    d = instr("ROOT d = f32[2,3,5] dot(f32[2,3,4] a, f32[2,4,5] b), lhs_batch_dims={0}, "
              "lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1}, "
              "operand_precision={highest,default}")
    assert d.attrs["lhs_contracting_dims"] == (2,) and d.attrs["operand_precision"] == ("highest", "default")
    g = instr("ROOT g = f32[2,4] gather(f32[8,4] x, s32[2,1] i), offset_dims={1}, collapsed_slice_dims={0}, "
              "start_index_map={0}, index_vector_dim=1, slice_sizes={1,4}, indices_are_sorted=true")
    assert (g.attrs["slice_sizes"], g.attrs["index_vector_dim"], g.attrs["indices_are_sorted"]) == ((1, 4), 1, True)


def test_common_attributes_decoded():
    ins = instr('ROOT a = f32[2] add(f32[2] x, f32[2] y), sharding={devices=[2]0,1}, '
                'frontend_attributes={b="1",a="2"}, metadata={op_type="Add" op_name="jit(f)/add" source_line=3}, '
                'backend_config={"k": [1, 2]}')
    assert ins.attrs["metadata"] == {"op_type": "Add", "op_name": "jit(f)/add", "source_line": 3}
    assert ins.attrs["frontend_attributes"] == {"b": "1", "a": "2"}
    assert ins.attrs["backend_config"].text == '{"k": [1, 2]}'
    text = hlo_interp.to_text(hlo_interp.parse(hlo_interp.to_text(instr_module := hlo_interp.parse(
        "HloModule m\nENTRY e {\n  x = f32[2] parameter(0)\n  ROOT a = f32[2] add(x, x), "
        'frontend_attributes={b="1",a="2"}\n}\n'))))
    assert 'frontend_attributes={a="2",b="1"}' in text  # XLA sorts the keys
    assert instr_module is not None


@pytest.mark.parametrize("attr,bad", [("index", "{0}"), ("dimensions", "0"), ("to_apply", '"add"'),
                                      ("slice", "{0:1}"), ("window", "{stride=2}")])
def test_wrong_attribute_forms_are_located_errors(attr, bad):
    op = {"index": "get-tuple-element", "dimensions": "reverse", "to_apply": "reduce",
          "slice": "slice", "window": "reduce-window"}[attr]
    with pytest.raises(hlo_interp.HloError) as ei:
        instr(f"ROOT r = f32[2] {op}(f32[2] x), {attr}={bad}")
    assert ei.value.line == 3
