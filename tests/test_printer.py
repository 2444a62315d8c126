"""Printer behaviours beyond the corpus round trip: XLA's non-round-trip forms, options."""
import pytest

import hlo_interp

SAMPLE = """HloModule m

add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = f32[] add(a, b)
}

ENTRY e {
  p = f32[8]{0} parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[] reduce(p, z), dimensions={0}, to_apply=add, metadata={op_name="sum"}
}
"""


def test_canonical_names_ignore_numbering():
    a = hlo_interp.parse(SAMPLE)
    renamed = (SAMPLE.replace("add {", "add.77 {").replace("to_apply=add", "to_apply=add.77")
               .replace("p = ", "param.3 = ").replace("(p, z)", "(param.3, z)")
               .replace("z = ", "zero.9 = ").replace(", z)", ", zero.9)"))
    b = hlo_interp.parse(renamed)
    assert hlo_interp.to_text(a) != hlo_interp.to_text(b)
    ca = hlo_interp.to_text(a, canonical_names=True)
    assert ca == hlo_interp.to_text(b, canonical_names=True)
    assert "to_apply=%computation.0" in ca and "%tmp_2 = f32[] reduce(%tmp_0, %tmp_1)" in ca
    assert hlo_interp.parse(ca)  # still valid HLO


def test_strip_options():
    m = hlo_interp.parse(SAMPLE)
    assert "metadata" not in hlo_interp.to_text(m, strip_metadata=True)
    assert "metadata" in hlo_interp.to_text(m)


def test_nested_instructions_are_hoisted():
    m = hlo_interp.parse("HloModule m\nENTRY e {\n  x = f32[4] parameter(0)\n"
                         "  ROOT a = f32[4] add(f32[4] negate(x), f32[4] constant({1,2,3,4}))\n}\n")
    ops = [i.opcode for i in m.entry.instructions]
    assert ops == ["parameter", "negate", "constant", "add"]
    assert m.entry.root.operands == ["negate.anon", "constant.anon"]
    assert hlo_interp.parse(hlo_interp.to_text(m)) == m
    # XLA's names for repeated nested opcodes: negate.anon, negate.anon.1, ...
    m = hlo_interp.parse("HloModule m\nENTRY e {\n  x = f32[4] parameter(0)\n"
                         "  ROOT a = f32[4] add(f32[4] negate(x), f32[4] negate(x))\n}\n")
    assert m.entry.root.operands == ["negate.anon", "negate.anon.1"]


def test_inline_computation_becomes_a_computation():
    m = hlo_interp.parse("""HloModule m
ENTRY e {
  p = f32[8] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[] reduce(p, z), dimensions={0}, to_apply={
    a = f32[] parameter(0)
    b = f32[] parameter(1)
    ROOT c = f32[] add(a, b)
  }
}
""")
    # XLA names inline computations `_`, `_.1`, ...
    assert [c.name for c in m.computations] == ["_", "e"]
    assert m.entry.root.attrs["to_apply"] == "_"
    assert hlo_interp.parse(hlo_interp.to_text(m)) == m


def test_string_escapes_like_absl():
    m = hlo_interp.parse('HloModule m\nENTRY e {\n  ROOT t = token[] after-all(), '
                         'frontend_attributes={k="\\x01\\x02b\\101\\n"}\n}\n')
    # \x takes every hex digit that follows (\x02b is '+'), octal up to three digits
    assert m.entry.root.attrs["frontend_attributes"] is not None
    text = hlo_interp.to_text(m)
    assert '\\001+A\\n' in text, text
    with pytest.raises(hlo_interp.HloError, match="exceeds 0xff"):
        hlo_interp.parse('HloModule m\nENTRY e {\n  ROOT t = token[] after-all(), '
                         'frontend_attributes={k="\\x100"}\n}\n')


def test_c64_flt_max_prints_so_that_xla_reads_it_back():
    m = hlo_interp.parse("HloModule m\nENTRY e {\n  ROOT c = c64[] constant((3.4028234663852886e+38, -1))\n}\n")
    assert "constant((3.4028234663852886e+38, -1))" in hlo_interp.to_text(m)


def test_headerless_and_log_pasted_input():
    body = "ENTRY e {\n  p = f32[] parameter(0)\n  ROOT n = f32[] negate(p)\n}\n"
    m = hlo_interp.parse(body)
    assert m.name == "module_e" and not m.has_header
    logged = "".join(f"I1123 08:47:03.123456   12345 hlo_pass.cc:123] {line}\n" for line in body.splitlines())
    m2 = hlo_interp.parse(logged, "log.txt")
    assert m2 == m
    # line and column stay those of the log file (the 47-character prefix is blanked, not cut)
    with pytest.raises(hlo_interp.HloError) as ei:
        hlo_interp.parse(logged.replace("negate(p)", "negate(p p)"), "log.txt")
    assert (ei.value.line, ei.value.column) == (3, 47 + 27)


def test_unknown_opcode_and_attribute_are_kept_verbatim():
    text = ("HloModule m\nENTRY e {\n  p = f32[4]{0} parameter(0)\n"
            "  ROOT a = f32[4]{0} frobnicate(p), wibble={1,2}, flavour=strawberry, metadata={op_name=\"x\"}\n}\n")
    m = hlo_interp.parse(text)
    root = m.entry.root
    assert root.opcode == "frobnicate" and root.unknown_attrs == ("wibble", "flavour")
    out = hlo_interp.to_text(m)
    assert 'frobnicate(%p), wibble={1,2}, flavour=strawberry, metadata={op_name="x"}' in out


def test_async_sugar_takes_the_wrapped_ops_attributes():
    m = hlo_interp.parse("""HloModule m
ENTRY e {
  p = f32[4]{0} parameter(0)
  s = ((f32[4]{0}), f32[4]{0}, u32[]) custom-call-start(p), custom_call_target="foo", async_execution_thread="t"
  ROOT d = f32[4]{0} custom-call-done(s)
}
""")
    s = m.entry.instruction("s")
    assert s.unknown_attrs == () and s.attrs["custom_call_target"] == "foo"


def test_single_instruction_like_xla():
    # XLA's parser makes the undefined operands parameters of a module `_` (and marks it scheduled).
    m = hlo_interp.parse("%multiply = f32[2,4]{1,0} multiply(f32[2,4]{1,0} %broadcast, f32[2,4]{1,0} %x)")
    assert hlo_interp.to_text(m) == (
        "HloModule _, is_scheduled=true, entry_computation_layout={(f32[2,4]{1,0}, f32[2,4]{1,0})->f32[2,4]{1,0}}\n\n"
        "ENTRY %_ (broadcast: f32[2,4], x: f32[2,4]) -> f32[2,4] {\n"
        "  %broadcast = f32[2,4]{1,0} parameter(0)\n"
        "  %x = f32[2,4]{1,0} parameter(1)\n"
        "  ROOT %multiply = f32[2,4]{1,0} multiply(%broadcast, %x)\n}\n\n")
    with pytest.raises(hlo_interp.HloError, match="operand %y is not defined"):
        hlo_interp.parse("a = f32[] add(f32[] %x, %y)")


def test_several_modules_split_by_marker():
    text = ("HloModule first\nENTRY main {\n  ROOT p = f32[2] parameter(0)\n}\n\n// -----\n\n"
            "HloModule second\nENTRY main {\n  p = s32[3] parameter(0)\n  ROOT n = s32[3] negate(p q)\n}\n")
    with pytest.raises(hlo_interp.HloError) as ei:
        hlo_interp.parse_all(text, "two.hlo")
    assert (ei.value.line, ei.value.column) == (11, 28)  # located in the whole file
    good = text.replace("negate(p q)", "negate(p)")
    ms = hlo_interp.parse_all(good)
    assert [m.name for m in ms] == ["first", "second"]
    out = hlo_interp.format_text(good)
    assert out.count("// -----") == 1 and hlo_interp.parse_all(out) == ms
    with pytest.raises(hlo_interp.HloError, match="this text holds 2 modules separated by '// -----' lines") as ei:
        hlo_interp.parse(good)
    assert (ei.value.line, ei.value.column) == (6, 1)  # at the separator
    # parse() of the text with a syntax error in the second module reports that error, not the count
    with pytest.raises(hlo_interp.HloError, match="a second module"):
        hlo_interp.parse(text)
