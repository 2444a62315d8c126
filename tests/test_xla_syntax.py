"""Texts XLA's parser accepts (or refuses), found in XLA's own test suite by tools/xla_testsuite.py.

Each case is a minimal text of one form seen there; the comment names the XLA test source where the form
occurs.  What XLA makes of each text was checked with jaxlib's parser (hlo_module_from_text) and, for
the values, XLA:CPU (the values are also golden cases: tests/golden/xla_testsuite/).
"""
from __future__ import annotations

import numpy as np
import pytest

import hlo_interp
from hlo_interp import HloError


def _one(text: str):
    m = hlo_interp.parse(text)
    return m, m.entry


# ---- item 1: a scalar literal for an array constant

@pytest.mark.parametrize("shape, lit, want", [
    # XLA:CPU: f32[3] constant(7) -> {7, 0, 0}; its parser sets element 0 and leaves the rest zero
    ("f32[3]", "7", np.array([7, 0, 0], np.float32)),
    ("f32[2,3]{0,1}", "7", np.array([[7, 0, 0], [0, 0, 0]], np.float32)),
    ("s32[4]", "-3", np.array([-3, 0, 0, 0], np.int32)),
    ("pred[3]", "true", np.array([True, False, False])),
    ("f64[2]", "1.5", np.array([1.5, 0], np.float64)),
])
def test_scalar_literal_for_array(shape, lit, want):
    m, e = _one(f"HloModule m\nENTRY e {{\n  ROOT c = {shape} constant({lit})\n}}\n")
    got = hlo_interp.run(m)[0]
    assert got.dtype == want.dtype and np.array_equal(got, want)
    # printed back as XLA prints it: the whole array
    assert "constant({" in hlo_interp.to_text(m)


@pytest.mark.parametrize("shape, lit, col", [
    ("f32[0]", "7", 28),             # XLA: "expects nested array in rank 1, but sees 0"
    ("c64[2]", "(1, 2)", 28),        # XLA refuses a complex scalar for an array
])
def test_scalar_literal_for_array_refused(shape, lit, col):
    with pytest.raises(HloError) as ei:
        hlo_interp.parse(f"HloModule m\nENTRY e {{\n  ROOT c = {shape} constant({lit})\n}}\n")
    assert (ei.value.line, ei.value.column) == (3, col)


# ---- item 2: whitespace between a shape and its layout (xla/service/gpu/...: `f32[..] {2,1,3,0}`)

def test_layout_after_whitespace():
    text = ("HloModule m\nENTRY e {\n  p0 = f32[3,6,128,12]{3,2,1,0} parameter(0)\n"
            "  ROOT b = f32[3, 6, 128, 12] {2, 1, 3, 0} bitcast(p0)\n}\n")
    m, e = _one(text)
    assert e.root.shape.layout.minor_to_major == (2, 1, 3, 0)
    # a `{` after `]` that is followed by neither an integer nor ':' is not a layout (XLA's ParseShape)
    m2, e2 = _one("HloModule m\nENTRY main() -> f32[2]{\n  ROOT c = f32[2] constant({1, 2})\n}\n")
    assert e2.name == "main" and e2.root.shape.dims == (2,)


# ---- items 3 and 23: more forms of XLA's test texts

def test_module_name_with_colon():
    # xla/hlo/parser/hlo_parser_test.cc: `HloModule TupleCreate_module:`
    m, _ = _one("HloModule TupleCreate_module:\nENTRY e {\n  ROOT c = f32[] constant(1)\n}\n")
    assert m.name == "TupleCreate_module"


def test_entry_without_space_before_params():
    # `ENTRY main() -> f32[] {`: `main()` is one token of ours (an opcode call with no operands)
    m, e = _one("HloModule m\nENTRY main() -> f32[] {\n  ROOT c = f32[] constant(1)\n}\n")
    assert e.name == "main" and e.params == []
    with pytest.raises(HloError) as ei:
        hlo_interp.parse("HloModule m\nENTRY main(a) -> f32[] {\n  ROOT c = f32[] constant(1)\n}\n")
    assert (ei.value.line, ei.value.column) == (2, 12)


def test_parameter_named_like_a_type():
    # a parameter called `pred` (xla/service/*_test.cc)
    m, e = _one("HloModule m\nENTRY e (pred: pred[], x: f32[2]) -> f32[2] {\n  x = f32[2] parameter(1)\n"
                "  %pred = pred[] parameter(0)\n  ROOT s = f32[2] negate(x)\n}\n")
    assert [p[0] for p in e.params] == ["pred", "x"]


def test_parameter_without_colon():
    # xla/backends/gpu/transforms/conv_padding_legalization_test.cc: `(operand f64[2,2])`
    m, e = _one("HloModule m\nENTRY %c (input f32[2]{0}, kernel f32[2]{0}) -> f32[2] {\n"
                "  input = f32[2]{0} parameter(0)\n  kernel = f32[2]{0} parameter(1)\n"
                "  ROOT a = f32[2]{0} add(input, kernel)\n}\n")
    assert [p[0] for p in e.params] == ["input", "kernel"]


def test_literal_commas_optional():
    # xla/backends/gpu/transforms/cudnn_simplify_padding_test.cc: `{ {1} {2} }` (XLA skips commas)
    m, _ = _one("HloModule m\nENTRY e {\n  ROOT c = f32[3,1] constant({ /*i=0*/ {1}, {2} {3} })\n}\n")
    assert np.array_equal(hlo_interp.run(m)[0], np.array([[1], [2], [3]], np.float32))


def test_operand_layout_constraints_buffer_shape():
    # xla/service/layout_assignment_test.cc
    text = """HloModule test
ENTRY t {
  init = s32[2,8] parameter(0)
  b0 = b(s32[2,8]) custom-call(init), custom_call_target="Pin", output_to_operand_aliasing={{}: (0, {})}
  b1 = b(s32[2,8]{0,1}) custom-call(b0), custom_call_target="CallBack_AddOne",
    output_to_operand_aliasing={{}: (0, {})}, operand_layout_constraints={b(s32[2,8]{0,1})}
  ROOT v = s32[2,8] custom-call(b1), custom_call_target="Unpin", output_to_operand_aliasing={{}: (0, {})}
}
"""
    m = hlo_interp.parse(text)
    b1 = next(i for i in m.entry.instructions if i.name == "b1")
    assert len(b1.attrs["operand_layout_constraints"]) == 1
