"""Malformed inputs: each gives one located HloError (line, column, message), never a traceback."""
import pytest

import hlo_interp
from hlo_interp import HloError

OK = """HloModule m

ENTRY e {
  p = f32[4]{0} parameter(0)
  ROOT a = f32[4]{0} add(p, p)
}
"""


def body(*lines: str) -> str:
    return "HloModule m\n\nENTRY e {\n" + "\n".join("  " + l for l in lines) + "\n}\n"


P = "p = f32[4]{0} parameter(0)"
ALL_REDUCE = ("HloModule m\n\nadd {\n  x = f32[] parameter(0)\n  y = f32[] parameter(1)\n  ROOT s = f32[] add(x, y)\n}\n\n"
              "ENTRY e {\n  p = f32[4]{0} parameter(0)\n"
              "  ROOT r = f32[4]{0} all-reduce(p), replica_groups=%s, to_apply=add\n}\n")

# (id, text, line, column, message fragment)
CASES = [
    ("empty", "", 1, 1, "empty input"),
    ("only-spaces", "   \n\n  ", 1, 1, "empty input"),
    ("no-computation", "HloModule m\n", 1, 11, "unexpected end of input"),
    ("header-typo", "HloModul m\nENTRY e {\n}\n", 1, 10, "expected '(', '=' or '{', found 'm'"),
    ("missing-equals", body(P, "ROOT a f32[4]{0} add(p, p)"), 5, 10, "expected '='"),
    ("space-before-attr-equals", body(P, "ROOT a = f32[4]{0} reverse(p), dimensions ={0}"), 5, 34,
     "no space is allowed between an attribute name and '='"),
    ("operands-no-comma", body(P, "ROOT a = f32[4]{0} add(p p)"), 5, 28, "found 'p'"),
    ("unclosed-operands", body(P, "ROOT a = f32[4]{0} add(p, p"), 6, 1, "found '}'"),
    ("unclosed-computation", "HloModule m\nENTRY e {\n  ROOT p = f32[] parameter(0)\n", 3, 29,
     "unexpected end of input"),
    ("name-starts-with-digit", body("%1x = f32[4] parameter(0)"), 4, 3,
     "a name must start with a letter or '_'"),
    ("unknown-type", body("p = f33[4] parameter(0)"), 4, 7, "'f33' is not an element type"),
    ("bad-dim", body("p = f32[4x] parameter(0)"), 4, 11, "unexpected '4x'"),
    ("negative-dims-word", body("p = f32[a] parameter(0)"), 4, 11, "expected"),
    ("layout-rank-mismatch", body("p = f32[4,2]{0} parameter(0)"), 4, 7, "layout has 1 dimensions, but the shape has 2"),
    ("bad-layout-item", body("p = f32[4]{0:Q(1)} parameter(0)"), 4, 16, "expected"),
    ("unterminated-comment", body(P, "/* oops"), 5, 3, "unterminated comment"),
    ("unterminated-string", body(P, 'ROOT a = f32[4]{0} custom-call(p), custom_call_target="x'), 5, 57,
     "unterminated string"),
    ("stray-char", body(P, "ROOT a = f32[4]{0} add(p, p) $"), 5, 32, "unexpected character '$'"),
    ("non-ascii", body(P, "ROOT a = f32[4]{0} add(p, p) \u00e9"), 5, 32, "unexpected character"),
    ("duplicate-instruction", body(P, "p = f32[4]{0} parameter(1)", "ROOT a = f32[4]{0} add(p, p)"), 5, 3,
     "instruction already exists: p"),
    ("two-roots", body(P, "ROOT a = f32[4]{0} add(p, p)", "ROOT b = f32[4]{0} add(p, p)"), 6, 8,
     "more than one ROOT"),
    ("two-entries", "HloModule m\nENTRY a {\n  ROOT p = f32[] parameter(0)\n}\nENTRY b {\n  ROOT q = f32[] parameter(0)\n}\n",
     5, 7, "only one ENTRY"),
    ("duplicate-computation", "HloModule m\nc {\n  ROOT p = f32[] parameter(0)\n}\nc {\n  ROOT q = f32[] parameter(0)\n}\nENTRY e {\n  ROOT r = f32[] parameter(0)\n}\n",
     5, 1, "computation already exists: c"),
    ("duplicate-attribute", body(P, "ROOT a = f32[4]{0} reverse(p), dimensions={0}, dimensions={0}"), 5, 50,
     "attribute dimensions already exists"),
    ("dimensions-not-ints", body(P, "ROOT a = f32[4]{0} reverse(p), dimensions={x}"), 5, 34,
     "attribute dimensions of reverse: expected a list of integers"),
    ("index-not-int", body("p = (f32[]) parameter(0)", "ROOT a = f32[] get-tuple-element(p), index=x"), 5, 40,
     "attribute index of get-tuple-element: expected an integer"),
    ("to-apply-not-name", body(P, "ROOT a = f32[] reduce(p, p), dimensions={0}, to_apply=1"), 5, 48,
     "attribute to_apply of reduce: expected a computation name"),
    ("window-bad-key", body(P, "ROOT a = f32[4]{0} reduce-window(p, p), window={size=2 strde=1}, to_apply=x"),
     5, 43, "unexpected window item"),
    ("window-rank-mismatch", body(P, "ROOT a = f32[4]{0} reduce-window(p, p), window={size=2x2 stride=1}, to_apply=x"),
     5, 43, "window stride has 1 dimensions, size has 2"),
    ("padding-garbage", body(P, "ROOT a = f32[4]{0} pad(p, p), padding=abc"), 5, 33, "expected padding"),
    ("slice-bad", body(P, "ROOT a = f32[2]{0} slice(p), slice={0:2}"), 5, 40, "found ':'"),
    ("dim-labels-bad", body(P, "ROOT a = f32[4]{0} convolution(p, p), dim_labels=b0f_0io->bx"), 5, 60, "unexpected character '>'"),
    ("compare-direction-string", body(P, 'ROOT a = pred[4]{0} compare(p, p), direction="LT"'), 5, 38,
     "attribute direction of compare: expected a name"),
    ("constant-wrong-count", body("ROOT c = f32[3]{0} constant({1, 2})"), 4, 31, "expects 3 elements"),
    ("constant-wrong-rank", body("ROOT c = f32[2,2]{1,0} constant({1, 2})"), 4, 35, "expects"),
    ("constant-out-of-range", body("ROOT c = s8[2]{0} constant({1, 300})"), 4, 30,
     "value 300 is out of range for literal's primitive type s8 namely [-128, 127]"),
    ("constant-unsigned-negative", body("ROOT c = u8[] constant(-1)"), 4, 26, "out of range"),
    ("constant-float-for-int", body("ROOT c = s32[] constant(1.5)"), 4, 27, "expected an integer"),
    ("constant-unclosed", body("ROOT c = f32[2]{0} constant({1, 2}"), 4, 30, "no matching ')'"),
    ("constant-no-shape", body("ROOT c = constant(1)"), 4, 12, "constant needs a result shape"),
    ("constant-payload-unsupported", body("ROOT c = f8e4m3fn[1]{0} constant({nan(0x1)})"), 4, 36, "NaN payloads"),
    ("constant-pred-bad", body("ROOT c = pred[] constant(2)"), 4, 28, "expected true, false"),
    ("parameter-no-number", body("ROOT p = f32[] parameter()"), 4, 18, "parameter needs its number"),
    ("int-operand", body(P, "ROOT a = f32[4]{0} add(p, 3)"), 5, 29, "expected an operand name, found an integer"),
    ("nested-attributes", body(P, "ROOT a = f32[4]{0} add(f32[4]{0} reverse(p), dimensions={0}, p)"), 5, 48,
     "found attribute 'dimensions='"),
    ("json-unterminated", body(P, 'ROOT a = f32[4]{0} add(p, p), backend_config={"a": 1'), 6, 1, "unexpected end of input"),
    ("bad-escape", body(P, 'ROOT a = f32[4]{0} custom-call(p), custom_call_target="\\q"'), 5, 57, "invalid escape"),
    ("signature-bad", "HloModule m\nENTRY e (p: f32[]) f32[] {\n  ROOT p = f32[] parameter(0)\n}\n", 2, 20,
     "expected '->'"),
    ("attr-missing-value", body(P, "ROOT a = f32[4]{0} reverse(p), dimensions="), 6, 1, "found '}'"),
    # XLA's parser refuses these (xla/hlo/parser/hlo_parser.cc); the messages are ours, in full
    ("control-predecessors-empty", body(P, "ROOT a = f32[4]{0} copy(p), control-predecessors={}"), 5, 31,
     "expects an instruction name: control-predecessors={} is empty (XLA's parser wants at least one name; "
     "leave the attribute out instead)"),
    ("pad-padding-empty", body("s = f32[] parameter(0)", "z = f32[] constant(0)", "ROOT a = f32[] pad(s, z), padding={}"),
     6, 29, "expects padding config, e.g., '0_0_0x3_3_1': padding={} is not one (XLA's parser cannot read a pad "
     "of a rank-0 operand)"),
    ("mesh-replica-groups-bare-axis", ALL_REDUCE % "mesh[a=2,b=2] {b}", 11, 37,
     "expects string: the axis names of mesh replica groups are quoted ('a', not a)"),
    ("mesh-replica-groups-bare-ref", ALL_REDUCE % "mesh['a'=2,'b'=2] {b}", 11, 37,
     "expects string: the axis names of mesh replica groups are quoted ('b', not b)"),
    ("headerless-signature-first", "add (x: f32[]) -> f32[] {\n  ROOT x = f32[] parameter(0)\n}\n\n"
                                   "ENTRY e {\n  ROOT y = f32[] parameter(0)\n}\n", 1, 1,
     "expects '=' in instruction: a text without the HloModule header must start with ENTRY or with a "
     "computation written without its signature (add { ...); XLA's parser reads this one as a single "
     "instruction"),
    ("float-attribute-beyond-f32", body("x = f32[2,3]{1,0} parameter(0)", "s = f32[3]{0} parameter(1)",
                                        "ROOT b = f32[2,3]{1,0} batch-norm-inference(x, s, s, s, s), "
                                        "epsilon=-1e39, feature_index=1"), 6, 63,
     "attribute epsilon of batch-norm-inference: value out of range for float"),
    ("constant-f32-rounds-to-inf", body("ROOT c = f32[2]{0} constant({1, 1e39})"), 4, 31,
     "value 1e39 is out of range for literal's primitive type f32 namely [-3.40282e+38, 3.40282e+38]"),
    ("constant-f16-rounds-to-inf", body("ROOT c = f16[] constant(65520)"), 4, 27,
     "value 65520 is out of range for literal's primitive type f16 namely [-65504, 65504]"),
    ("constant-beyond-double", body("ROOT c = f64[] constant(1e309)"), 4, 27,
     "constant 1e309 is out of range for double (+/-1.79769e+308) and so is unparsable"),
    ("constant-c64-part-beyond-f32", body("ROOT c = c64[] constant((3.40282347e+38, 0))"), 4, 27,
     "real part 3.40282347e+38 is out of range for literal's primitive type c64 namely "
     "[-3.40282e+38, 3.40282e+38]"),
]

# Near misses of the rules above that XLA's parser accepts (checked with jaxlib 0.10.2's parser; the
# named sharding with bare axis names is the syntax of the other XLA version, whose hlo_parser.cc reads
# mesh axis names with ParseAttributeName/ParseName: we take both spellings there).
ACCEPTED = [
    ("control-predecessors", body(P, "c = f32[4]{0} copy(p)", "ROOT a = f32[4]{0} copy(p), control-predecessors={c}")),
    ("pad-rank-1", body(P, "z = f32[] constant(0)", "ROOT a = f32[5]{0} pad(p, z), padding=0_1")),
    ("mesh-replica-groups-quoted", ALL_REDUCE % "mesh['a'=2,'b'=2] {'b'}"),
    ("named-sharding-bare-axis", body(P, "ROOT a = f32[4]{0} copy(p), sharding={mesh[a=2,b=2], [{a}]}")),
    ("headerless-entry-with-signature", "ENTRY e (x: f32[]) -> f32[] {\n  ROOT x = f32[] parameter(0)\n}\n"),
    ("headerless-signature-later", "add {\n  ROOT x = f32[] parameter(0)\n}\n\n"
                                   "e (y: f32[]) -> f32[] {\n  ROOT y = f32[] parameter(0)\n}\n"),
    ("constant-f32-rounds-to-max", body("ROOT c = f32[3]{0} constant({3.4028235e+38, inf, -nan})")),
    ("constant-f16-rounds-to-max", body("ROOT c = f16[] constant(65519)")),
    ("constant-f8e4m3fn-rounds-to-max", body("ROOT c = f8e4m3fn[] constant(464)")),
    ("constant-f4e2m1fn-saturates", body("ROOT c = f4e2m1fn[] constant(100)")),
    ("constant-c64-part-max", body("ROOT c = c64[] constant((3.4028234663852886e+38, -inf))")),
    ("constant-c128-part-max", body("ROOT c = c128[] constant((1.7976931348623157e+308, 0))")),
]


@pytest.mark.parametrize("name,text", ACCEPTED, ids=[c[0] for c in ACCEPTED])
def test_accepted_near_misses(name, text):
    hlo_interp.parse(text, "ok.hlo")


@pytest.mark.parametrize("name,text,line,col,fragment", CASES, ids=[c[0] for c in CASES])
def test_malformed(name, text, line, col, fragment):
    with pytest.raises(HloError) as ei:
        hlo_interp.parse(text, "bad.hlo")
    err = ei.value
    assert fragment in err.message, err.render()
    assert (err.line, err.column) == (line, col), err.render()
    rendered = err.render()
    assert rendered.startswith(f"bad.hlo:{line}:{col}: error: ")
    lines = rendered.split("\n")
    if err.source_line is not None and len(err.source_line) <= 160:
        # The caret sits under the reported column of the quoted source line.
        assert lines[2].index("^") - 2 == col - 1


def test_enough_malformed_cases():
    assert len(CASES) >= 40


def test_reference_module_parses():
    assert hlo_interp.parse(OK).entry.root.opcode == "add"


def test_nesting_guard_counts_only_open_brackets():
    # 600 constants and tiled layouts in a row are not nesting (the guard once leaked on constant(...))
    lines = [f"  k{i} = f32[2]{{0:T(128)}} constant({{1, 2}})" for i in range(600)]
    text = "HloModule m\n\nENTRY e {\n" + "\n".join(lines) + "\n  ROOT r = f32[2]{0} copy(k0)\n}\n"
    assert len(hlo_interp.parse(text).entry.instructions) == 601


@pytest.mark.parametrize("opener,closer", [("(", ")"), ("{", "}")])
def test_nesting_deeper_than_xla_allows_is_refused(opener, closer):
    shape = opener * 501 + "f32[]" + closer * 501 if opener == "(" else "f32[]"
    lit = "1" if opener == "(" else opener * 501 + "1" + closer * 501
    text = f"HloModule m\nENTRY e {{\n  ROOT p = {shape} constant({lit})\n}}\n"
    with pytest.raises(HloError, match="nest"):
        hlo_interp.parse(text)
