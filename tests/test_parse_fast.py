"""The parser's fast tokens (a whole instruction line, a whole computation signature as one token:
syntax/lexer.py, syntax/driver.py) give exactly what token-by-token parsing gives: the same IR,
locations included, and the same error messages."""
from __future__ import annotations

import hashlib
import re
from pathlib import Path

import pytest

import hlo_interp
from hlo_interp import HloError
from hlo_interp.syntax import lexer as L
from hlo_interp.syntax import parser as P

CORPUS = Path(__file__).parent / "corpus"


def _key(m) -> str:
    """Every field of the parsed module, instruction locations and literal bytes included."""
    def off(loc):
        return None if loc is None else loc.offset

    def offs(locs):
        return None if locs is None else [x.offset for x in locs]

    out = [repr((m.name, m.attrs, m.has_header, m.stack_frames._key(), off(m.loc),
                 {k: v.offset for k, v in m.attr_locs.items()}, offs(m.entry_layout_param_locs),
                 off(m.entry_layout_result_loc)))]
    for c in m.computations:
        out.append(repr((c.name, c.is_entry, c.params, c.result_shape, c.attrs, off(c.loc),
                         offs(c.param_locs), off(c.result_loc), c.root_marked)))
        for i in c.instructions:
            out.append(repr((i.name, i.opcode, i.shape, i.operands, i.attrs, i.parameter_number, i.is_root,
                             off(i.loc), {k: v.offset for k, v in i.attr_locs.items()},
                             i.unknown_attrs, i.operand_shapes,
                             [off(i.operand_loc(k)) for k in range(len(i.operands))])))
            lit = i.literal
            if lit is not None:
                vals = lit.value if isinstance(lit.value, tuple) else (lit,)
                out.append(repr(lit.shape) + "".join(
                    "None" if v.value is None else f"{v.value.dtype}{hashlib.md5(v.value.tobytes()).hexdigest()}"
                    for v in vals if not isinstance(v.value, tuple)))
    return re.sub(r" at 0x[0-9a-f]+", "", "\n".join(out))  # reprs of objects kept in unknown attributes


def _outcome(text: str, fast: bool, monkeypatch) -> str:
    monkeypatch.setattr(P, "FAST_TOKENS", fast)
    try:
        return "\n=====\n".join(_key(m) for m in hlo_interp.parse_all(text))
    except HloError as e:
        return f"error: {e}"


def _count_fast(text: str) -> dict[str, int]:
    from hlo_interp.diagnostics import SourceText
    _, lexer = P._driver()
    source = SourceText(text, "x")
    P._BUILDER.ctx = P._Ctx(source)  # fast lines are built as they are read

    State = type("State", (), {"text": L.LexInput(source, 0, None, True)})

    counts = {"instruction": 0, "signature": 0}
    for tok in lexer.lex(State, None):
        if tok.type == L.FAST:
            counts[tok.goto] += len(tok.value.instrs) if tok.goto == "instruction" else 1
    return counts


DUMP = """HloModule m, is_scheduled=true, entry_computation_layout={(f32[2,3]{1,0}, s32[])->f32[2,3]{1,0}}

%fused_computation (param_0: f32[2,3], param_1.2: s32[]) -> f32[2,3] {
  %param_0 = f32[2,3]{1,0} parameter(0)
  %param_1.2 = s32[] parameter(1)
  %constant.1 = f32[] constant(0.5)
  %broadcast.2 = f32[2,3]{1,0} broadcast(%constant.1), dimensions={}
  ROOT %multiply.3 = f32[2,3]{1,0} multiply(%param_0, %broadcast.2), metadata={op_name="jit(f)/mul" source_file="a\\tb.py" source_line=3}
}

ENTRY %main.4 (Arg_0.1: f32[2,3], Arg_1.2: s32[]) -> f32[2,3] {
  %Arg_0.1 = f32[2,3]{1,0} parameter(0), metadata={op_name="x"}
  %Arg_1.2 = s32[] parameter(1)
  %c = s32[2]{0} constant({1, -2})
  %t = f32[2,3]{0,1} transpose(%Arg_0.1), dimensions={1,0}, sharding={replicated}
  %cmp = pred[] compare(%Arg_1.2, %Arg_1.2), direction=LT, custom_attr=true, other=-3, label="q", k2=%main.4
  ROOT %fusion = f32[2,3]{1,0} fusion(%Arg_0.1, %Arg_1.2), kind=kLoop, calls=%fused_computation, metadata={op_name="jit(f)/mul" source_file="a\\tb.py" source_line=3}
}
"""


def test_fast_tokens_are_used_on_dump_text():
    # the point of the fast path: most lines of a dump are read as one token (here every line)
    counts = _count_fast(DUMP)
    assert counts == {"instruction": 11, "signature": 2}


def test_dump_text_same_ir(monkeypatch):
    fast = _outcome(DUMP, True, monkeypatch)
    assert not fast.startswith("error")
    assert fast == _outcome(DUMP, False, monkeypatch)
    m = hlo_interp.parse(DUMP)
    mul = m.computation("fused_computation").root
    assert mul.attrs["metadata"] == {"op_name": "jit(f)/mul", "source_file": "a\tb.py", "source_line": 3}
    assert m.entry.params[1][0] == "Arg_1.2" and m.entry.params[1][1].element_type.name == "s32"
    cmp = m.entry.instruction("cmp")
    assert cmp.unknown_attrs == ("custom_attr", "other", "label", "k2")
    assert cmp.attrs["custom_attr"] is True and cmp.attrs["other"] == -3
    assert m.entry.instruction("c").literal.value.tolist() == [1, -2]


# Lines the fast path must hand back to the token-by-token lexer (or reproduce exactly), and
# malformed ones whose error message must not change.
CASES = {
    "type_name_as_instruction_name": "ENTRY e {\n  f32 = f32[] parameter(0)\n  ROOT f32 = f32[] negate(f32)\n}\n",
    "root_named_root": "ENTRY e {\n  ROOT = f32[] parameter(0)\n  ROOT ROOT.1 = f32[] negate(ROOT)\n}\n",
    "root_without_percent": "ENTRY e {\n  p = f32[] parameter(0)\n  ROOT n = f32[] negate(p)\n}\n",
    "opcode_inf": "ENTRY e {\n  p = f32[] parameter(0)\n  ROOT n = f32[] inf(p)\n}\n",
    "opcode_b": "ENTRY e {\n  p = f32[] parameter(0)\n  ROOT n = f32[] b(p)\n}\n",
    "opcode_constant_with_name": "ENTRY e {\n  p = f32[] parameter(0)\n  ROOT n = f32[] constant(p)\n}\n",
    "parameter_with_name": "ENTRY e {\n  p = f32[] parameter(0)\n  ROOT n = f32[] parameter(p)\n}\n",
    "parameter_plus": "ENTRY e {\n  ROOT p = f32[] parameter(+0)\n}\n",
    "value_keyword_entry": "ENTRY e {\n  p = f32[] parameter(0)\n  ROOT n = f32[] negate(p), foo=ENTRY\n}\n",
    "value_type_name": "ENTRY e {\n  p = f32[] parameter(0)\n  ROOT n = f32[] negate(p), foo=f32\n}\n",
    "value_inf": "ENTRY e {\n  p = f32[] parameter(0)\n  ROOT n = f32[] negate(p), foo=inf\n}\n",
    "value_false": "ENTRY e {\n  p = f32[] parameter(0)\n  ROOT n = f32[] negate(p), foo=false\n}\n",
    "bad_escape": 'ENTRY e {\n  p = f32[] parameter(0)\n  ROOT n = f32[] negate(p), metadata={op_name="\\q"}\n}\n',
    "bad_escape_in_string": 'ENTRY e {\n  p = f32[] parameter(0)\n  ROOT n = f32[] negate(p), x="\\xfff"\n}\n',
    "duplicate_attribute": "ENTRY e {\n  p = f32[2]{0} parameter(0)\n  ROOT n = f32[2]{0} reverse(p), dimensions={0}, dimensions={0}\n}\n",
    "bad_layout": "ENTRY e {\n  p = f32[2]{0} parameter(0)\n  ROOT n = f32[2]{1,0} negate(p)\n}\n",
    "attribute_on_next_line": "ENTRY e {\n  p = f32[] parameter(0)\n  ROOT n = f32[] negate(p)\n    , metadata={op_name=\"a\"}\n}\n",
    "trailing_comment": "ENTRY e {\n  p = f32[] parameter(0) // the input\n  ROOT n = f32[] negate(p) /* out */\n}\n",
    "frontend_attributes": 'ENTRY e {\n  p = f32[] parameter(0), frontend_attributes={a={"b":1}}\n  ROOT n = f32[] negate(p)\n}\n',
    "backend_config": 'ENTRY e {\n  p = f32[] parameter(0)\n  ROOT n = f32[] negate(p), backend_config={"x":{}}\n}\n',
    "constant_array": "ENTRY e {\n  ROOT c = f32[2,2]{1,0} constant({ {1, 2}, {3, 4.5} })\n}\n",
    "constant_out_of_range": "ENTRY e {\n  ROOT c = s8[] constant(300)\n}\n",
    "instruction_then_brace": "ENTRY e {\n  ROOT p = f32[] parameter(0)}\n",
    "two_roots": "ENTRY e {\n  ROOT p = f32[] parameter(0)\n  ROOT q = f32[] parameter(1)\n}\n",
    "duplicate_name": "ENTRY e {\n  p = f32[] parameter(0)\n  p = f32[] negate(p)\n}\n",
    "nested_operands": "ENTRY e {\n  p = f32[] parameter(0)\n  ROOT a = f32[] add(f32[] negate(p), p)\n}\n",
    "operand_shapes": "ENTRY e {\n  p = f32[] parameter(0)\n  n = f32[] negate(f32[] p)\n  ROOT a = f32[] add(n, p)\n}\n",
    "signature_param_type_name": "ENTRY e (f32: f32[]) -> f32[] {\n  ROOT f32.1 = f32[] parameter(0)\n}\n",
    "signature_tuple_result": "ENTRY e (a: f32[], b: s32[2]{0}) -> (f32[], s32[2]) {\n"
                              "  a = f32[] parameter(0)\n  b = s32[2]{0} parameter(1)\n  ROOT t = (f32[], s32[2]{0}) tuple(a, b)\n}\n",
    "signature_empty": "ENTRY e () -> f32[] {\n  ROOT c = f32[] constant(1)\n}\n",
    "signature_newline": "ENTRY e (a: f32[],\n   b: f32[]) -> f32[] {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT s = f32[] add(a, b)\n}\n",
    "signature_bad_layout": "ENTRY e (a: f32[2]{1,0}) -> f32[2] {\n  ROOT a = f32[2]{0} parameter(0)\n}\n",
    "inline_to_apply": "ENTRY e {\n  p = f32[4]{0} parameter(0)\n  z = f32[] constant(0)\n  ROOT r = f32[] reduce(p, z), dimensions={0}, to_apply={\n"
                       "    a = f32[] parameter(0)\n    b = f32[] parameter(1)\n    ROOT s = f32[] add(a, b)\n  }\n}\n",
    "missing_operand": "ENTRY e {\n  ROOT n = f32[] negate(q)\n}\n",
    "crlf": "ENTRY e {\r\n  p = f32[] parameter(0)\r\n  ROOT n = f32[] negate(p), metadata={op_name=\"a\"}\r\n}\r\n",
    "no_final_newline": "HloModule m\nENTRY e {\n  ROOT p = f32[] parameter(0)\n}",
    "instruction_at_end": "ENTRY e {\n  ROOT p = f32[] parameter(0)\n",
    "index_comments": "ENTRY e {\n  a = f32[1]{0} parameter(0)\n  b = f32[1]{0} parameter(1)\n"
                      "  ROOT t = f32[3]{0} concatenate(%a, %b,  /*index=2*/%a), dimensions={0}, metadata={op_name=\"t\"}\n}\n",
    "index_comments_after_operand_shapes": "ENTRY e {\n  a = f32[1]{0} parameter(0)\n  n = f32[1]{0} negate(f32[1]{0} a)\n"
                                           "  ROOT t = f32[2]{0} concatenate(%n, /*index=1*/%a), dimensions={0}\n}\n",
    "index_comments_keyword_opcode": "ENTRY e {\n  a = f32[] parameter(0)\n  ROOT t = f32[] true(%a, /*index=1*/%a)\n}\n",
    "index_comments_other_comment": "ENTRY e {\n  a = f32[] parameter(0)\n  ROOT t = f32[] add(%a, /*x=1*/%a)\n}\n",
    "single_instruction": "  %n = f32[] negate(f32[] %p), metadata={op_name=\"a\"}",
    # forms XLA's parser refuses (tests/test_errors.py has their messages)
    "control_predecessors_empty": "ENTRY e {\n  %p = f32[] parameter(0)\n  ROOT %n = f32[] negate(f32[] %p), control-predecessors={}\n}\n",
    "control_predecessors_one": "ENTRY e {\n  %p = f32[] parameter(0)\n  %c = f32[] copy(f32[] %p)\n"
                                "  ROOT %n = f32[] negate(f32[] %p), control-predecessors={%c}\n}\n",
    "pad_padding_empty": "ENTRY e {\n  %s = f32[] parameter(0)\n  %z = f32[] constant(0)\n  ROOT %p = f32[] pad(f32[] %s, f32[] %z), padding={}\n}\n",
    "headerless_signature_first": "%c (x: f32[]) -> f32[] {\n  ROOT %x = f32[] parameter(0)\n}\n\n"
                                  "ENTRY %e (y: f32[]) -> f32[] {\n  ROOT %y = f32[] parameter(0)\n}\n",
    "constant_f32_rounds_to_inf": "ENTRY e {\n  ROOT %c = f32[3]{0} constant({1, 2, 1e39})\n}\n",
    "constant_c64_part_beyond_f32": "ENTRY e {\n  ROOT %c = c64[1]{0} constant({(0, -3.40282347e+38)})\n}\n",
    # values the fast path reads besides key=value braces and integer lists
    "backend_config_json": 'ENTRY e {\n  %p = f32[] parameter(0)\n  ROOT %n = f32[] negate(%p), '
                           'backend_config={"a":{"b":[1,"}"]}}, metadata={op_name="n"}\n}\n',
    "backend_config_empty": "ENTRY e {\n  %p = f32[] parameter(0)\n  ROOT %n = f32[] negate(%p), backend_config={}\n}\n",
    "backend_config_string": 'ENTRY e {\n  %p = f32[] parameter(0)\n  ROOT %n = f32[] negate(%p), backend_config="x"\n}\n',
    "backend_config_unbalanced": 'ENTRY e {\n  %p = f32[] parameter(0)\n  ROOT %n = f32[] negate(%p), backend_config={"a":1\n}\n',
    "backend_config_then_junk": 'ENTRY e {\n  %p = f32[] parameter(0)\n  ROOT %n = f32[] negate(%p), backend_config={} x\n}\n',
    "slice_attr": "ENTRY e {\n  %p = f32[4,8]{1,0} parameter(0)\n  ROOT %s = f32[2,4]{1,0} slice(%p), slice={[0:2], [0:8:2]}\n}\n",
    "slice_attr_signs": "ENTRY e {\n  %p = f32[4]{0} parameter(0)\n  ROOT %s = f32[2]{0} slice(%p), slice={[+0:2]}\n}\n",
    "slice_attr_bad": "ENTRY e {\n  %p = f32[4]{0} parameter(0)\n  ROOT %s = f32[2]{0} slice(%p), slice={[0:2], 3}\n}\n",
    # tuple-shaped results (a tuple of plain shapes, with index comments)
    "tuple_result_index_comments": "ENTRY e {\n  a = f32[] parameter(0)\n  ROOT t = (f32[], f32[], f32[], f32[], f32[], "
                                   "/*index=5*/f32[]{}, f32[]) tuple(%a, %a, %a, %a, %a, /*index=5*/%a, %a)\n}\n",
    "tuple_result_spaces": "ENTRY e {\n  a = f32[2]{0} parameter(0)\n  ROOT t = ( f32[2]{0} ,f32[2] ) tuple(a, a)\n}\n",
    "tuple_result_empty": "ENTRY e {\n  ROOT t = () tuple()\n}\n",
    "tuple_result_nested": "ENTRY e {\n  a = f32[] parameter(0)\n  ROOT t = ((f32[]), f32[]) tuple(a, a)\n}\n",
    "tuple_result_spaced_layout": "ENTRY e {\n  a = f32[2]{0} parameter(0)\n  ROOT t = (f32[2] {0}) tuple(a)\n}\n",
    "tuple_result_bad_layout": "ENTRY e {\n  a = f32[2]{0} parameter(0)\n  ROOT t = (f32[], f32[2]{1,0}) tuple(a, a)\n}\n",
    "tuple_result_other_comment": "ENTRY e {\n  a = f32[] parameter(0)\n  ROOT t = (f32[], /*x*/f32[]) tuple(a, a)\n}\n",
    "tuple_result_type_name": "ENTRY e {\n  a = f32[] parameter(0)\n  ROOT t = (f33[]) tuple(a)\n}\n",
    # other attribute values, read by the grammar's `value` rule
    "convolution_window_dim_labels": "ENTRY e {\n  p = f32[1,4,4,2]{3,2,1,0} parameter(0)\n  f = f32[3,3,2,2]{3,2,1,0} parameter(1)\n"
                                     "  ROOT c = f32[1,4,4,2]{3,2,1,0} convolution(p, f), window={size=3x3 pad=1_1x1_1}, "
                                     "dim_labels=b01f_01io->b01f, metadata={op_name=\"c\"}\n}\n",
    "window_bad": "ENTRY e {\n  p = f32[4]{0} parameter(0)\n  z = f32[] constant(0)\n"
                  "  ROOT r = f32[2]{0} reduce-window(p, z), window={size=2x stride=2}, to_apply=add\n}\n",
    "padding": "ENTRY e {\n  p = f32[4]{0} parameter(0)\n  z = f32[] constant(0)\n  ROOT q = f32[7]{0} pad(p, z), padding=2_1\n}\n",
    "padding_then_comment": "ENTRY e {\n  p = f32[4]{0} parameter(0)\n  z = f32[] constant(0)\n"
                            "  ROOT q = f32[7]{0} pad(p, z), padding=2_1 // c, padding=0_0\n}\n",
    "sharding": "ENTRY e {\n  p = f32[8,8]{1,0} parameter(0), sharding={devices=[2,1]<=[2]}\n"
                "  ROOT n = f32[8,8]{1,0} negate(p), sharding={replicated}\n}\n",
    "sharding_tuple": "ENTRY e {\n  p = f32[] parameter(0)\n  ROOT t = (f32[], f32[]) tuple(p, p), "
                      "sharding={{maximal device=1}, {replicated}}\n}\n",
    "sharding_unbalanced": "ENTRY e {\n  p = f32[8]{0} parameter(0), sharding={replicated\n  ROOT n = f32[8]{0} negate(p)\n}\n",
    "replica_groups": "HloModule m, replica_count=4\nadd {\n  x = f32[] parameter(0)\n  y = f32[] parameter(1)\n"
                      "  ROOT s = f32[] add(x, y)\n}\nENTRY e {\n  p = f32[8]{0} parameter(0)\n"
                      "  ROOT r = f32[8]{0} all-reduce(p), channel_id=1, replica_groups={{0,1},{2,3}}, to_apply=add\n}\n",
    "frontend_attributes_strings": 'ENTRY e {\n  p = f32[] parameter(0), frontend_attributes={a="1,2",b="{x}"}\n'
                                   '  ROOT n = f32[] negate(p)\n}\n',
    "frontend_attributes_kv": 'ENTRY e {\n  p = f32[] parameter(0), frontend_attributes={a="1"}\n  ROOT n = f32[] negate(p)\n}\n',
    "string_with_comma": 'ENTRY e {\n  p = f32[] parameter(0)\n  ROOT c = f32[] custom-call(p), custom_call_target="a,b", '
                         'api_version=API_VERSION_TYPED_FFI\n}\n',
    "string_unterminated": 'ENTRY e {\n  p = f32[] parameter(0)\n  ROOT c = f32[] custom-call(p), custom_call_target="a, x=[1\n}\n',
    "control_predecessors": "ENTRY e {\n  p = f32[] parameter(0)\n  a = f32[] negate(p)\n"
                            "  ROOT b = f32[] exponential(p), control-predecessors={a}\n}\n",
    "value_space_after_equals": "ENTRY e {\n  p = f32[4]{0} parameter(0)\n  z = f32[] constant(0)\n  ROOT q = f32[7]{0} pad(p, z), padding= 2_1\n}\n",
    # metadata written otherwise than the printer writes it (order, separators)
    "metadata_other_order": 'ENTRY e {\n  p = f32[] parameter(0)\n  ROOT n = f32[] negate(p), metadata={source_line=3 op_name="n"}\n}\n',
    "metadata_commas": 'ENTRY e {\n  p = f32[] parameter(0)\n  ROOT n = f32[] negate(p), metadata={op_name="n",source_line=3}\n}\n',
    # operands written as the printer writes them, and otherwise
    "operands_six": "ENTRY e {\n  a = f32[1]{0} parameter(0)\n  ROOT c = f32[6]{0} concatenate(%a, %a, %a, %a, %a, %a), dimensions={0}\n}\n",
    "constant_word_literals": "ENTRY e {\n  t = pred[] constant(true)\n  f = pred[] constant(false)\n  n = f32[] constant(nan)\n"
                              "  i = f32[] constant(inf)\n  ROOT r = (pred[], pred[], f32[], f32[]) tuple(t, f, n, i)\n}\n",
    "constant_name_literal": "ENTRY e {\n  a = f32[] parameter(0)\n  ROOT c = f32[] constant(a)\n}\n",
    "operands_no_space": "ENTRY e {\n  a = f32[] parameter(0)\n  ROOT c = f32[] add(%a,%a)\n}\n",
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_same_outcome_as_token_by_token(name, monkeypatch):
    text = CASES[name]
    assert _outcome(text, True, monkeypatch) == _outcome(text, False, monkeypatch)


def test_cases_exercise_both_outcomes(monkeypatch):
    outcomes = {k: _outcome(t, True, monkeypatch) for k, t in CASES.items()}
    errors = [k for k, o in outcomes.items() if o.startswith("error")]
    assert 10 <= len(errors) < len(outcomes) - 10
    # errors found while building a fast token are those of the grammar path, at the same place
    with pytest.raises(HloError, match="invalid escape"):  # met while the fast line is built
        _count_fast(CASES["bad_escape"])
    assert outcomes["bad_escape"].startswith("error: <string>:3:38: error: invalid escape sequence '\\q' in string")
    assert _count_fast(CASES["signature_bad_layout"])["signature"] == 1
    assert outcomes["signature_bad_layout"].startswith(
        "error: <string>:1:13: error: layout has 2 dimensions, but the shape has 1")
    assert outcomes["duplicate_attribute"].startswith("error: <string>:3:50: error: attribute dimensions already exists")
    assert outcomes["constant_out_of_range"].startswith("error: <string>:2:26: error: value 300 is out of range")


def test_fast_path_reads_tuple_results_and_any_attribute_value():
    # every instruction line of these is read by the fast path; the others' odd line is not
    def lines(text):
        return sum(" = " in line for line in text.splitlines() if not line.startswith(("HloModule", "ENTRY")))
    for name in ("tuple_result_index_comments", "tuple_result_spaces", "convolution_window_dim_labels", "padding",
                 "sharding", "sharding_tuple", "replica_groups", "frontend_attributes_strings",
                 "frontend_attributes_kv", "string_with_comma", "control_predecessors", "metadata_other_order",
                 "operands_six", "constant_word_literals"):
        assert _count_fast(CASES[name])["instruction"] == lines(CASES[name]), name
    for name in ("tuple_result_nested", "tuple_result_spaced_layout", "tuple_result_other_comment",
                 "padding_then_comment", "frontend_attributes", "value_space_after_equals"):
        assert _count_fast(CASES[name])["instruction"] == lines(CASES[name]) - 1, name


def test_corpus_same_ir(monkeypatch):
    # every 4th corpus text (the whole corpus is checked the same way by hand when the lexer changes)
    files = sorted(CORPUS.rglob("*.hlo"))[::4]
    assert len(files) > 300
    used = 0
    for f in files:
        text = f.read_text()
        assert _outcome(text, True, monkeypatch) == _outcome(text, False, monkeypatch), f
    for f in files[:40]:
        try:
            used += _count_fast(f.read_text())["instruction"]
        except HloError:  # an invalid text (found while its fast lines are built)
            pass
    assert used > 100


def test_dense_float_literal_values():
    # integers are read as integers (XLA's lexer): -0 is +0.0; -0.0 stays -0.0
    m = hlo_interp.parse("ENTRY e {\n  ROOT c = f32[5]{0} constant({-0, -0.0, 1e-0, 0.1, -00})\n}\n")
    v = m.entry.root.literal.value
    assert v.view("uint32").tolist() == [0, 0x80000000, 0x3F800000, 0x3DCCCCCD, 0]


def test_big_dense_literals_exact():
    import numpy as np
    rng = np.random.default_rng(7)
    # within every type's range: XLA's parser refuses finite values that round to infinity
    x = np.clip(rng.standard_normal(3000) * 10.0 ** rng.integers(-40, 39, 3000), -3e38, 3e38)
    common = [repr(float(a)) for a in x] + ["1", "-7", "inf", "-nan", "65504.5"]
    for et, dtype in (("f32", np.float32), ("f64", np.float64), ("bf16", None)):
        # rounds to f32's largest finite value (accepted); to infinity in bf16 (refused)
        texts = common + ([] if et == "bf16" else ["3.4028235e+38"])
        body = ", ".join(texts)
        m = hlo_interp.parse(f"ENTRY e {{\n  ROOT c = {et}[{len(texts)}]{{0}} constant({{{body}}})\n}}\n")
        got = m.entry.root.literal.value
        expect = np.array([float(t) for t in texts])
        if dtype is None:
            import ml_dtypes
            dtype = ml_dtypes.bfloat16
        with np.errstate(over="ignore"):
            expect = expect.astype(dtype)
        assert got.dtype == dtype and got.tobytes() == expect.tobytes()
    ints = rng.integers(-2**31, 2**31, 5000)
    m = hlo_interp.parse("ENTRY e {\n  ROOT c = s32[5000]{0} constant({" + ",".join(map(str, ints)) + "})\n}\n")
    assert m.entry.root.literal.value.tolist() == ints.tolist()


@pytest.mark.parametrize("fast", [True, False])
def test_locations_point_at_what_is_written(fast, monkeypatch):
    """Operands, header attributes and signature parts are located where the text writes them (the
    verifier reports there without reading the text again)."""
    monkeypatch.setattr(P, "FAST_TOKENS", fast)
    nested = DUMP.replace("%t = f32[2,3]{0,1} transpose(%Arg_0.1)",
                          "%t = f32[2,3]{0,1} transpose(f32[2,3] negate(f32[2,3] %Arg_0.1))")
    for text in (DUMP, nested):
        m = hlo_interp.parse(text)
        assert text.startswith("HloModule", m.loc.offset)
        for name, loc in m.attr_locs.items():
            assert text.startswith(name + "=", loc.offset)
        assert [text[x.offset:x.offset + 7] for x in m.entry_layout_param_locs] == ["f32[2,3", "s32[])-"]
        assert text.startswith("f32[2,3]{1,0}}", m.entry_layout_result_loc.offset)
        for c in m.computations:
            assert [text[x.offset:].split(":")[0] for x in c.param_locs] == [p for p, _ in c.params]
            assert text.startswith("f32[2,3] {", c.result_loc.offset)
            assert c.root_marked
            for ins in c.instructions:
                for k, name in enumerate(ins.operands):
                    at = ins.operand_loc(k).offset
                    if name.endswith(".anon"):  # a nested operand: its opcode
                        assert text.startswith(name[:-len(".anon")] + "(", at)
                    else:
                        assert text.startswith("%" + name, at), (ins.name, name, text[at:at + 20])
    m = hlo_interp.parse(DUMP.replace("ROOT %fusion", "%fusion"))
    assert m.entry.root_marked is False and m.computations[0].root_marked


def test_quoted_strings_escape_like_absl_cescape():
    """The printer's quoted strings: text with nothing to escape as it is (the common case, taken
    without a per-character loop), else C escapes as absl::CEscape writes them."""
    from hlo_interp.syntax.printer import _str
    assert _str("jit(f)/add") == '"jit(f)/add"'
    assert _str("naïve 日本") == '"naïve 日本"'  # non-ASCII is kept as it is
    assert _str("") == '""'
    assert _str("x", "'") == "'x'"
    assert _str('a"b') == '"a\\"b"'
    assert _str("it's") == '"it\\\'s"'
    assert _str("a\\b") == '"a\\\\b"'
    assert _str("l1\nl2\t\r") == '"l1\\nl2\\t\\r"'
    assert _str("\x01\x1f\x7f") == '"\\001\\037\\177"'


def test_parsed_instruction_is_the_dataclass_instance():
    # the fast path's constructor sets exactly the fields Instruction(...) sets
    import dataclasses

    from hlo_interp import ir
    from hlo_interp.diagnostics import SourceText
    loc = ir.Location(SourceText("n = f32[] add(a, b), x=1", "t"), 0)
    fast = ir.parsed_instruction("n", "add", None, ["a", "b"], {"x": 1}, None, None, True, loc, [("x", 21)], 7)
    slow = ir.Instruction("n", "add", None, ["a", "b"], {"x": 1}, None, None, True, loc, {"x": ir.Location(None, 21)},
                          operand_offsets=7)
    for f in dataclasses.fields(ir.Instruction):
        a, b = getattr(fast, f.name), getattr(slow, f.name)
        if f.name == "attr_locs":
            a, b = {k: v.offset for k, v in a.items()}, {k: v.offset for k, v in b.items()}
        assert a == b, f.name
    assert fast == slow
    # the fields it leaves to the class are at their default there
    for f in dataclasses.fields(ir.Instruction):
        if f.name not in fast.__dict__ and "_" + f.name not in fast.__dict__:
            assert f.default is not dataclasses.MISSING and getattr(ir.Instruction, f.name) == f.default, f.name
    plain = ir.parsed_instruction("n", "add", None, [], {}, None, None, False, loc, (), ())
    assert (plain.is_root, plain.literal, plain.parameter_number, plain.unknown_attrs, plain.operand_shapes,
            plain.attr_locs) == (False, None, None, (), None, {})
    param = ir.parsed_instruction("p", "parameter", None, [], {}, None, 3, False, loc, (), ())
    assert param.parameter_number == 3 and param == ir.Instruction("p", "parameter", None, parameter_number=3)


def test_metadata_text_decoded_when_attrs_are_read():
    m = hlo_interp.parse(DUMP)
    ins = m.entry.instruction("Arg_0.1")
    assert ins.pending_metadata == '{op_name="x"}'
    assert ins.attrs_as_parsed() == ({"metadata": None}, '{op_name="x"}')
    assert ins.attrs == {"metadata": {"op_name": "x"}} and ins.pending_metadata is None
    # instructions left pending may share their attribute dict: decoding one leaves the others as they were
    text = ('HloModule m\n\nENTRY %e (a: f32[]) -> f32[] {\n  %a = f32[] parameter(0), metadata={op_name="a"}\n'
            '  ROOT %b = f32[] negate(%a), metadata={op_name="b"}\n}\n\n')
    a, b = hlo_interp.parse(text).entry.instructions
    assert a.attrs_as_parsed() == ({"metadata": None}, '{op_name="a"}')
    assert b.attrs_as_parsed() == ({"metadata": None}, '{op_name="b"}')
    a.attrs["metadata"]["op_name"] = "changed"
    assert b.attrs_as_parsed() == ({"metadata": None}, '{op_name="b"}')
    assert (a.attrs, b.attrs) == ({"metadata": {"op_name": "changed"}}, {"metadata": {"op_name": "b"}})
    assert hlo_interp.parse(text).entry.instructions[1].attrs_as_parsed()[0] == {"metadata": None}
    # escapes are decoded at once (their errors are the parser's)
    mul = m.computation("fused_computation").root
    assert mul.pending_metadata is None and mul.attrs_as_parsed()[0]["metadata"]["source_file"] == "a\tb.py"


def test_reused_source_lines_print_as_the_printer_prints(monkeypatch):
    # fmt copies the lines the parser found in printed form (parsed with canonical_lines): the same
    # text as printing them; other parses mark none, and the module is otherwise the same
    from hlo_interp.frontend import parse_all_text, parse_text
    from hlo_interp.syntax.printer import PrintOptions, to_text
    files = sorted(CORPUS.rglob("*.hlo"))[1::5]
    reused = 0
    for f in files:
        text = f.read_text()
        try:
            mods = parse_all_text(text, canonical_lines=True)
        except HloError:
            continue
        plain = hlo_interp.parse_all(text)
        assert [_key(m) for m in mods] == [_key(m) for m in plain], f
        assert not any(i.canonical_end is not None for m in plain for c in m.computations for i in c.instructions)
        for m, p in zip(mods, plain):
            reused += sum(i.canonical_end is not None for c in m.computations for i in c.instructions)
            assert to_text(m, PrintOptions(reuse_source=True)) == to_text(m) == \
                to_text(p, PrintOptions(reuse_source=True)), f
    assert reused > 1000
    marked = parse_text(DUMP, canonical_lines=True)
    # constants are printed, `cmp` has unknown attributes (`t`'s sharding={replicated} is read as written)
    assert [i.name for c in marked.computations for i in c.instructions if i.canonical_end is None] == [
        "constant.1", "c", "cmp"]
    # metadata, operands and tuple shapes are copied only when written as the printer writes them
    text = ('HloModule m\n\nENTRY %e (a: f32[]) -> (f32[], f32[]) {\n  %a = f32[] parameter(0)\n'
            '  %b = f32[] add(%a, %a), metadata={op_name="b" source_line=3}\n'
            '  %c = f32[] add(%a, %b), metadata={source_line=3 op_name="c"}\n'
            '  %d = f32[] add(%a,%b)\n'
            '  ROOT %t = (f32[], f32[]) tuple(%c, %d), sharding={{replicated}, {maximal device=0}}\n}\n\n')
    m = parse_text(text, canonical_lines=True)
    assert [i.name for i in m.entry.instructions if i.canonical_end is None] == ["c", "d"]
    assert to_text(m, PrintOptions(reuse_source=True)) == to_text(m) == hlo_interp.format_text(text)


def test_metadata_is_the_same_attribute_for_every_opcode():
    # the fast path keeps a line's lone metadata as text without the opcode's attribute plan
    from hlo_interp.opcodes import OPCODES
    from hlo_interp.syntax.attributes import schema
    for op in list(OPCODES) + ["no-such-opcode"]:
        by_name, _ = schema(op)
        assert by_name["metadata"].kind == "metadata", op
