"""Property: whatever is done to a real HLO text, parsing either succeeds or raises our located
HloError: never another exception, never a traceback."""
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import hlo_interp
from conftest import corpus_files

_SEED_TEXTS = [p.read_text() for p in corpus_files()[::7]][:60] or [
    "HloModule m\n\nENTRY e {\n  p = f32[4]{0} parameter(0)\n  ROOT a = f32[4]{0} add(p, p)\n}\n"]
_SEED_TEXTS = [t for t in _SEED_TEXTS if len(t) < 20000] or _SEED_TEXTS[:1]

_PIECES = ["{", "}", "(", ")", "[", "]", ",", "=", "%", "->", "<=", ":", "\"", "'", "/*", "*/", "//", "\n",
           " ", "0", "-1", "1e9", "nan", "inf", "f32[]", "ROOT", "ENTRY", "HloModule", "{...}", "x", "_",
           "T(8,128)", "{1,0:T(2)}", "constant(", "parameter(", "3x3", "0_0x1_1", "b01f_01io->b01f",
           "\\", "\t", "\u00e9", "\x00", "{\"a\":", "99999999999999999999999"]


@st.composite
def mutated(draw):
    text = draw(st.sampled_from(_SEED_TEXTS))
    for _ in range(draw(st.integers(1, 4))):
        kind = draw(st.sampled_from(["delete", "insert", "duplicate", "swap_lines", "truncate"]))
        n = len(text)
        if n == 0:
            break
        i = draw(st.integers(0, n - 1))
        if kind == "delete":
            j = min(n, i + draw(st.integers(1, 20)))
            text = text[:i] + text[j:]
        elif kind == "insert":
            text = text[:i] + draw(st.sampled_from(_PIECES)) + text[i:]
        elif kind == "duplicate":
            j = min(n, i + draw(st.integers(1, 40)))
            text = text[:j] + text[i:j] + text[j:]
        elif kind == "swap_lines":
            lines = text.split("\n")
            a = draw(st.integers(0, len(lines) - 1))
            b = draw(st.integers(0, len(lines) - 1))
            lines[a], lines[b] = lines[b], lines[a]
            text = "\n".join(lines)
        else:
            text = text[:i]
    return text


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutated())
def test_mutated_text_parses_or_fails_with_a_located_error(text):
    try:
        m = hlo_interp.parse(text, "fuzz.hlo")
    except hlo_interp.HloError as e:
        assert e.filename == "fuzz.hlo"
        rendered = e.render()
        assert rendered.startswith("fuzz.hlo:")
        assert "error:" in rendered
        return
    # What parses also prints, and the print parses back to the same module.
    out = hlo_interp.to_text(m)
    assert hlo_interp.parse(out) == m


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(_PIECES + list("abcdefxyz0123456789 .-")), max_size=80).map("".join))
def test_random_token_soup(text):
    try:
        hlo_interp.parse(text, "soup.hlo")
    except hlo_interp.HloError:
        pass
