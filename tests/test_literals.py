"""Constants: parsing to NumPy with XLA's conversions, and printing in XLA's exact format.
Expected texts are what XLA's own printer wrote for the same inputs (jaxlib 0.10.2)."""

import ml_dtypes
import numpy as np
import pytest

import hlo_interp


def roundtrip_constant(shape: str, body: str) -> str:
    m = hlo_interp.parse(f"HloModule m\nENTRY e {{\n  ROOT c = {shape} constant({body})\n}}\n")
    line = [l for l in hlo_interp.to_text(m).splitlines() if "constant(" in l][0]
    return line[line.index("constant(") + len("constant("):-1]


# (shape, input literal, XLA's printed literal)
XLA_PRINTED = [
    ("f32[3]", "{1, 0.1, 1e-05}", "{1, 0.1, 1e-05}"),
    ("bf16[3]", "{1, 0.1, 3.14159}", "{1, 0.1001, 3.141}"),
    ("f64[3]", "{1, 0.1, 3.141592653589793}", "{1, 0.1, 3.1415926535897931}"),
    ("f32[4]", "{inf, -inf, nan, -nan}", "{inf, -inf, nan, -nan}"),
    ("c64[2]", "{(1, 2), (3.5, -4)}", "{(1, 2), (3.5, -4)}"),
    ("pred[2]", "{true, false}", "{1, 0}"),
    ("pred[]", "true", "true"),
    ("f16[2]", "{nan(0x1), 65504}", "{nan(0x1), 65504}"),
    ("bf16[]", "nan(0x1)", "nan(0x1)"),
    ("f32[2,2]", "{{1,2},{3,4}}", "{ { 1, 2 }, { 3, 4 } }"),
    ("f32[2,2,2]", "{{{1,2},{3,4}},{{5,6},{7,8}}}", "{ { { 1, 2 }, { 3, 4 } }, { { 5, 6 }, { 7, 8 } } }"),
    ("s8[2]", "{-128, 127}", "{-128, 127}"),
    ("f32[]", "123456789", "123456792"),
    ("f32[]", "0.000123", "0.000123"),
    # XLA prints -0.0 as "-0" but reads "-0" back as the integer 0 (+0.0); we print "-0.0".
    ("f32[]", "-0.0", "-0.0"),
    ("f32[0]", "{}", "{}"),
    ("f32[2,0]", "{{},{}}", "{ {}, {} }"),
    ("f32[1,1]", "{{-0}}", "{ {0} }"),
    ("u64[1]", "{18446744073709551615}", "{18446744073709551615}"),
    ("c128[]", "(1e300, -0)", "(1e+300, 0)"),
    ("f8e4m3fn[3]", "{1.5, 448, nan}", "{1.5, 448, nan}"),
    ("f8e5m2[2]", "{0.3, 57344}", "{0.31, 5.7e+04}"),
    ("s4[3]", "{-8, 7, 1}", "{-8, 7, 1}"),
    ("u1[2]", "{0,1}", "{0, 1}"),
    ("f4e2m1fn[2]", "{0.5, 6}", "{0.5, 6}"),
    ("f8e8m0fnu[2]", "{1, 0.5}", "{1, 0.5}"),
    ("f64[]", "1e-300", "1e-300"),
]


@pytest.mark.parametrize("shape,body,expected", XLA_PRINTED, ids=[f"{s}:{b}" for s, b, _ in XLA_PRINTED])
def test_printed_like_xla(shape, body, expected):
    assert roundtrip_constant(shape, body) == expected


def literal(shape, body):
    m = hlo_interp.parse(f"HloModule m\nENTRY e {{\n  ROOT c = {shape} constant({body})\n}}\n")
    return m.entry.root.literal


def test_values_and_dtypes():
    lit = literal("bf16[2]", "{1.5, 3}")
    assert lit.value.dtype == ml_dtypes.bfloat16
    assert lit.value.astype(np.float32).tolist() == [1.5, 3.0]
    assert literal("s4[2]", "{-8, 7}").value.dtype == ml_dtypes.int4
    assert literal("u64[]", "18446744073709551615").value == np.uint64(2**64 - 1)


def test_decimal_goes_through_double_then_rounds_to_nearest_even():
    # 16777217 is halfway between two f32 values; round-to-nearest-even gives 16777216.
    assert literal("f32[]", "16777217").value == np.float32(16777216)
    # bf16: 1 + 2^-8 is halfway between 1 and 1 + 2^-7 -> even mantissa (1).
    assert float(literal("bf16[]", "1.00390625").value) == 1.0


def test_nan_payload_and_sign_are_kept():
    v = literal("f32[2]", "{-nan(0x1234), nan}").value
    bits = v.view(np.uint32)
    assert bits[0] == 0xFF801234
    assert bits[1] == 0x7FC00000
    assert roundtrip_constant("f32[2]", "{-nan(0x1234), nan}") == "{-nan(0x1234), nan}"


def test_rank4_index_comments_like_xla():
    assert roundtrip_constant("s32[1,1,1,2]", "{{{{1,2}}}}") == "{ { /*i0=0*/ { /*i1=0*/ { 1, 2 } } } }"
    assert roundtrip_constant("s32[2,1,2,2]", "{{{{1,2},{3,4}}},{{{5,6},{7,8}}}}") == (
        "{ { /*i0=0*/ { /*i1=0*/ { 1, 2 }, { 3, 4 } } }, { /*i0=1*/ { /*i1=0*/ { 5, 6 }, { 7, 8 } } } }")


def test_elided_constant_kept_as_elided():
    lit = literal("f32[100]", "{...}")
    assert lit.elided and lit.value is None
    assert roundtrip_constant("f32[100]", "{...}") == "{...}"


def test_tuple_literal():
    lit = literal("(f32[], (s32[], pred[]))", "(1, (2, true))")
    assert isinstance(lit.value, tuple)
    assert lit.value[1].value[1].value == np.True_
    assert roundtrip_constant("(f32[], (s32[], pred[]))", "(1, (2, true))") == "( 1, ( 2, true ) )"


def test_large_constant_fast_path_matches_grammar_path():
    vals = np.linspace(-3, 3, 1000).astype(np.float32)
    body = "{" + ", ".join(repr(float(x)) for x in vals) + "}"
    fast = literal("f32[1000]", body).value
    slow = literal("f32[1000]", body.replace("{", "{ /*c*/ ", 1)).value  # a comment forces the grammar path
    assert fast.tobytes() == slow.tobytes() == vals.tobytes()


def test_constant_printing_parses_back_bit_exact():
    rng = np.random.default_rng(0)
    for shape, dtype in [("f32[64]", np.float32), ("f64[64]", np.float64), ("f16[64]", np.float16),
                         ("bf16[64]", ml_dtypes.bfloat16), ("f8e4m3fn[64]", ml_dtypes.float8_e4m3fn),
                         ("f8e5m2[64]", ml_dtypes.float8_e5m2)]:
        vals = (rng.standard_normal(64) * 10).astype(dtype)
        body = "{" + ", ".join(repr(float(x)) for x in vals.astype(np.float64)) + "}"
        text = roundtrip_constant(shape, body)
        again = literal(shape, text).value
        assert again.tobytes() == vals.tobytes(), shape


@pytest.mark.parametrize("text,want", [
    # XLA's lexer reads an integer token as an int64, a uint64 above 2^63 - 1 wrapping (checked with
    # jaxlib 0.10.2's hlo_module_from_text: 18446744073709551615 prints back as -1).
    ("f32[] constant(18446744073709551615)", -1.0),
    ("f32[] constant(9223372036854775808)", -9.223372036854775808e18),
    ("f32[2] constant({1, 18446744073709551615})", [1.0, -1.0]),
    ("c64[] constant((18446744073709551615, 1))", complex(-1, 1)),
    ("f32[] constant(100000000000000000000.0)", 1e20),  # a float token: as written
])
def test_integer_tokens_in_float_literals_as_xla(text, want):
    m = hlo_interp.parse(f"HloModule m\nENTRY e {{\n  ROOT c = {text}\n}}\n")
    np.testing.assert_array_equal(m.entry.root.literal.value, np.asarray(want, m.entry.root.literal.value.dtype))


@pytest.mark.parametrize("num", ["18446744073709551616", "-9223372036854775809", "9" * 400])
def test_integer_tokens_beyond_64_bits_are_located_errors(num):
    for text in (f"f32[] constant({num})", f"c64[] constant(({num}, 1))", f"f32[2] constant({{1, {num}}})"):
        with pytest.raises(hlo_interp.HloError, match="integers are int64 or uint64") as e:
            hlo_interp.parse(f"HloModule m\nENTRY e {{\n  ROOT c = {text}\n}}\n")
        assert e.value.line == 3
