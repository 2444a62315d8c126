"""Texts XLA's parser accepts (or refuses), found in XLA's own test suite by tools/xla_testsuite.py.

Each case is a minimal text of one form seen there; the comment names the XLA test source where the form
occurs.  What XLA makes of each text was checked with jaxlib's parser (hlo_module_from_text) and, for
the values, XLA:CPU (the values are also golden cases: tests/golden/xla_testsuite/).
"""
from __future__ import annotations

import numpy as np
import pytest

import hlo_interp
from casedata import cases
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


# ---- XLA:CPU's values for these forms: tests/golden/xla_syntax (tools/oracle/families/xla_syntax.py), run bit
# for bit by tests/test_golden.py

_VECTORS = cases("xla_syntax")


def test_vectors_cover_the_items():
    assert len(_VECTORS) >= 10
    assert sum(c.short.startswith("scalar_for") for c in _VECTORS) >= 5


# ---- items 15 and 17: collectives in a module whose header gives no replica_count/num_partitions

_AG = """HloModule ag
ENTRY e {
  p = f32[2,3] parameter(0)
  ROOT ag = f32[2,12] all-gather(p), replica_groups={}, dimensions={1}
}
"""
_AR = """HloModule ar
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  p = f32[4] parameter(0)
  ROOT r = f32[4] all-reduce(p), replica_groups={{0,1},{2,3}}, to_apply=add
}
"""


def test_single_device_run_names_the_device_count():
    # item 17: no "internal error: the result does not match the entry's shape"
    with pytest.raises(HloError) as ei:
        hlo_interp.run(hlo_interp.parse(_AG), np.ones((2, 3), np.float32))
    e = ei.value
    assert (e.line, e.column) == (4, 8) and "--replicas 4" in str(e) and "internal error" not in str(e)
    # item 15: the groups name replicas 0..3
    with pytest.raises(HloError) as ei:
        hlo_interp.run(hlo_interp.parse(_AR), np.ones(4, np.float32))
    assert (ei.value.line, ei.value.column) == (9, 8) and "--replicas 4" in str(ei.value)


def test_implied_device_counts():
    from hlo_interp.ops.collectives import implied_device_counts
    assert implied_device_counts(hlo_interp.parse(_AG))[:2] == (4, 1)
    assert implied_device_counts(hlo_interp.parse(_AR))[:2] == (4, 1)
    permute = ("HloModule p\nENTRY e {\n  p = f32[2] parameter(0)\n  ROOT c = f32[2] collective-permute(p), "
               "channel_id=1, source_target_pairs={{0,1},{1,2},{2,0}}\n}\n")
    assert implied_device_counts(hlo_interp.parse(permute))[:2] == (1, 3)  # a channel: partitions
    assert implied_device_counts(hlo_interp.parse("HloModule h, replica_count=2\n" + _AR.split("\n", 1)[1])) is None
    # xla/backends/gpu/transforms/collectives/convert_async_collectives_to_sync_test.cc: the start's tuple
    start = ("HloModule t\nENTRY e {\n  a1 = u32[1, 2] parameter(0)\n  ags = (u32[1, 2], u32[2, 2]) "
             "all-gather-start(a1), dimensions={0}, channel_id=3\n  ROOT g = u32[2,2] all-gather-done(ags)\n}\n")
    got = implied_device_counts(hlo_interp.parse(start))
    assert got is not None and got[0] * got[1] == 2
    with pytest.raises(HloError) as ei:
        hlo_interp.run(hlo_interp.parse(start), np.zeros((1, 2), np.uint32))
    assert "internal error" not in str(ei.value) and ei.value.line == 4 and "--partitions 2" in str(ei.value)


def test_hlo_run_defaults_to_the_devices_the_groups_name(tmp_path):
    import subprocess
    import sys
    f = tmp_path / "ar.hlo"
    f.write_text(_AR)
    x = np.arange(16, dtype=np.float32).reshape(4, 4)
    np.save(tmp_path / "x.npy", x)
    out = tmp_path / "out.npy"
    r = subprocess.run([sys.executable, "-m", "hlo_interp", "run", str(f), "--inputs", str(tmp_path / "x.npy"),
                        "-o", str(out)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert f"{f}:9:8: note: the header gives no replica_count/num_partitions" in r.stderr
    assert "--replicas 4" in r.stderr
    got = np.load(out)
    # every device's result: replicas {0,1} and {2,3} sum their rows
    want = np.stack([x[0] + x[1], x[0] + x[1], x[2] + x[3], x[2] + x[3]])
    np.testing.assert_array_equal(got, want)


# ---- item 7: errors in the header's input_output_alias are located

@pytest.mark.parametrize("alias, col, msg", [
    ("{ {0, a}: (0, {0}) }", 14, "output index: expected a list of integers"),   # hlo_parser_test.cc
    ("{ {0}: (0, {}, bogus) }", 14, "unexpected aliasing kind bogus"),          # XLA: "Unexpected aliasing kind"
    ("{ {0}: 0 }", 40, "expected '(' or '{'"),
])
def test_input_output_alias_errors_are_located(alias, col, msg):
    text = f"HloModule m, input_output_alias={alias}\nENTRY e {{\n  p0 = f32[2] parameter(0)\n" \
           f"  ROOT t = (f32[2]) tuple(p0)\n}}\n"
    with pytest.raises(HloError) as ei:
        hlo_interp.parse(text)
    assert (ei.value.line, ei.value.column) == (1, col) and msg in str(ei.value)
