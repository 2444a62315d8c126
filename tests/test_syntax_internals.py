"""What the syntax layer takes from its tools: the layout of Lark's LALR parse table that driver.py and
tools/make_lalr_table.py read (Lark has no public API for it), and the first characters of the grammar's
terminal patterns that the lexer's dispatch uses (read from the pattern text, no private `re` modules).
"""
from __future__ import annotations

import re
from pathlib import Path
from types import SimpleNamespace

import pytest

from hlo_interp.syntax import driver, lalr_table
from hlo_interp.syntax.lexer import _first_chars

ROOT = Path(__file__).resolve().parents[1]


# --------------------------------------------------------------------------------------------------
# Lark's parse-table layout

def _version(text: str) -> tuple[int, ...]:
    return tuple(int(x) for x in re.findall(r"\d+", text)[:3])


def test_lark_pin_is_the_verified_range():
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    lark_dep = re.search(r'^\s*"(lark[^"]*)"', text, re.M).group(1)  # in [project] dependencies
    assert lark_dep == "lark" + driver.LARK_VERIFIED, \
        f"pyproject.toml pins {lark_dep!r}; driver.py was checked with lark{driver.LARK_VERIFIED}"


def test_installed_lark_is_in_the_verified_range():
    import lark
    low, high = (m.group(1) for m in re.finditer(r"[<>]=?([\d.]+)", driver.LARK_VERIFIED))
    assert _version(low) <= _version(lark.__version__) < _version(high), (
        f"Lark {lark.__version__} is outside lark{driver.LARK_VERIFIED}, the versions whose parse-table "
        f"layout hlo_interp/syntax/driver.py reads")


def test_lark_table_layout_is_the_one_driver_reads():
    """On the installed Lark: the table reads, and it is the committed one (same rules, same number
    of states), so a Lark that changed its layout or its analysis fails here with a clear message."""
    from hlo_interp.syntax import parser as P
    table, callbacks, shift = driver.lark_table(P._lark())
    assert set(table.start_states) == set(lalr_table.START_STATES) == {"hlo", "literal", "shape", "value"}
    assert len(table.states) == len(lalr_table.STATES)
    shifts = sum(action is shift for actions in table.states.values() for action, _ in actions.values())
    assert shifts == sum(a >= 0 for row in lalr_table.STATES for a in row.values())


@pytest.mark.parametrize("broken", [
    SimpleNamespace(),  # no .parser
    SimpleNamespace(parser=SimpleNamespace(parser=SimpleNamespace(parser=SimpleNamespace(callbacks={})))),
    SimpleNamespace(parser=SimpleNamespace(parser=SimpleNamespace(
        _parse_table=SimpleNamespace(states={0: {"X": ("shift?", 1)}}, start_states={"hlo": 0},
                                     end_states={"hlo": 0}),
        parser=SimpleNamespace(callbacks={})))),  # an action that is neither Shift nor a rule
])
def test_a_changed_lark_layout_fails_clearly(broken):
    with pytest.raises(driver.LarkLayoutError, match=r"lays out its LALR parse table differently .*"
                                                     r"lark>=1\.2,<2"):
        driver.lark_table(broken)


# --------------------------------------------------------------------------------------------------
# First characters of the terminals (the lexer's dispatch)

@pytest.mark.parametrize("pattern, chars", [
    (r"abc", "a"),
    (r"a*b", "ab"),
    (r"(?:x|y?)z", "xyz"),
    (r"[-+]?[0-9]+", "+-0123456789"),
    (r"%?[A-Za-z_][\w.-]*", "%" + "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_"),
    (r"(?<=\])\{(?=[ \t]*[0-9:])", "{"),  # lookarounds are zero-width
    (r"\{-?[0-9]+(?:,-?[0-9]+)*\}", "{"),
    (r"a{0,3}b", "ab"),
    (r"a{2}", "a"),
    (r"[a\-z]", "a-z"),
    (r"\x41", "A"),
    (r"a[^b].", "a"),  # what follows the first character does not matter
    (r"(?P<NAME>\\/\\*(.|\n)*?)", "\\"),
    (r"\d|\s", "0123456789 \t\n\r\f\v"),
])
def test_first_chars(pattern, chars):
    assert _first_chars(pattern) == set(chars)


@pytest.mark.parametrize("pattern", [r"[^a]", r".", r"\D", r"a?", r"(?i:abc)", r"(a)\1", r"a|"])
def test_first_chars_any(pattern):
    """Any character (None): a negated class, `.`, an empty match, syntax not read here."""
    assert _first_chars(pattern) is None


def test_every_grammar_terminal_has_first_chars():
    """Each terminal gets a dispatch set (none falls back to 'any character'), and every set holds
    the first character of an example of the terminal."""
    examples = {"WS": " ", "BLOCK_COMMENT": "/* x */", "LINE_COMMENT": "// x", "STRING": '"a"',
                "INT": "12", "FLOAT": "1.5", "NAME": "%a.1", "ATTR": "x=", "SHAPE_FAST": "f32[2]{0}",
                "KV_FAST": '{a="b"}', "INTS_FAST": "{1,2}", "OP_CALL_FAST": "add(%a, %b)"}
    for name, kind, value, regexp in lalr_table.TERMINALS:
        chars = _first_chars(f"(?P<{name}>{regexp})")
        assert chars, f"terminal {name} ({regexp!r}) has no first-character set"
        ex = examples.get(name, value if kind == "str" else None)
        if ex is not None:
            assert re.fullmatch(regexp, ex), (name, ex)
            assert ex[0] in chars, (name, ex, sorted(chars))


def test_no_private_regex_modules():
    """The lexer reads patterns itself: no module imports CPython's private regex parser."""
    import ast
    private = {"re._parser", "re._constants", "re._compiler", "sre_parse", "sre_constants", "sre_compile"}
    found = []
    for path in sorted((ROOT / "hlo_interp").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [f"{node.module}.{a.name}" for a in node.names] + [node.module or ""] \
                if isinstance(node, ast.ImportFrom) else []
            found += [f"{path.relative_to(ROOT)}:{node.lineno}: {n}" for n in names if n in private]
    assert not found, "private regex modules imported:\n" + "\n".join(found)
