"""The tokenizer: one compiled regular expression built from the grammar's terminals.

Lark's own lexers try terminals one by one in Python; HLO dumps are megabytes, so instead the terminals
of grammar/hlo.lark are joined, in the order the grammar file writes them, into a single alternation
that `re` runs in C.  Identifiers that spell a keyword of the grammar ("ENTRY", "true", ...) become
that keyword, as in XLA's lexer.  Two tokens are scanned by hand because no regular expression can:
the brace-balanced value of backend_config= and of frontend attributes (JSON, or anything with
balanced braces, kept verbatim as XLA's LexJsonDict does), and the body of `constant(...)`.
"""
from __future__ import annotations

import re
from typing import Iterator

from lark import Token
from lark.lexer import Lexer

from ..diagnostics import HloError, SourceText

MAX_NESTING = 500  # XLA's HloParserOptions max_recursion_depth

# Terminals that are skipped.
_IGNORED = ("WS", "BLOCK_COMMENT", "LINE_COMMENT")


class LexInput:
    """What the parser is handed: the whole source (for locations) and the span to tokenize."""
    __slots__ = ("source", "start", "end")

    def __init__(self, source: SourceText, start: int = 0, end: int | None = None):
        self.source = source
        self.start = start
        self.end = len(source.text) if end is None else end


class HloToken(Token):
    """A lark Token without line/column bookkeeping: locations are computed from start_pos only when
    a message needs one (SourceText.line_col)."""
    line = None
    column = None
    end_line = None
    end_column = None
    end_pos = None


_new_str = str.__new__


def _scan_balanced(text: str, pos: int, end: int, open_ch: str, close_ch: str, strings: bool) -> int:
    """Offset just past the bracket that closes the one at `pos`, or -1."""
    depth = 0
    i = pos
    find_any = re.compile(
        ('["{}]' if open_ch == "{" else r'["()]') if strings else ("[{}]" if open_ch == "{" else "[()]")
    ).search
    while True:
        m = find_any(text, i, end)
        if m is None:
            return -1
        ch = m.group()
        i = m.end()
        if ch == '"':
            # skip a JSON string
            while True:
                j = text.find('"', i, end)
                if j < 0:
                    return -1
                k = j - 1
                backslashes = 0
                while text[k] == "\\":
                    backslashes += 1
                    k -= 1
                i = j + 1
                if backslashes % 2 == 0:
                    break
        elif ch == open_ch:
            depth += 1
        else:
            depth -= 1
            if depth == 0:
                return i


_BUILT: dict[tuple, dict] = {}


class _Dispatch(dict):
    """char -> compiled alternation of the terminals that can start with it (None: no terminal can)."""

    def __init__(self, firsts):
        super().__init__()
        self.firsts = firsts

    def __missing__(self, ch: str):
        if ch in " \t\f\r\n" or ord(ch) > 127:
            sub = []
        else:
            sub = [part for fc, part in self.firsts if fc is None or ch in fc]
        pat = re.compile("|".join(sub)) if sub else None
        self[ch] = pat
        return pat


class HloLexer(Lexer):
    """Custom Lark lexer (interface 2): lex(lexer_state, parser_state) -> tokens."""
    __future_interface__ = 2

    def __init__(self, lexer_conf):
        terminals = list(lexer_conf.terminals)
        # Lark builds one lexer and the parser driver another: compile the regexes once per process.
        key = tuple((str(t.name), t.pattern.to_regexp()) for t in terminals)
        built = _BUILT.get(key)
        if built is not None:
            self.__dict__.update(built)
            return
        self._build(terminals)
        _BUILT[key] = dict(self.__dict__)

    def _build(self, terminals) -> None:
        order = _GRAMMAR_TERMINAL_ORDER
        named = [t for t in terminals if t.name in order]
        named.sort(key=lambda t: order[t.name])
        anonymous = [t for t in terminals if t.name not in order]
        self.keywords: dict[str, str] = {}
        puncts = []
        for t in anonymous:
            if t.pattern.type != "str":
                raise ValueError(f"terminal {t.name} must be defined in the grammar's terminal list")
            if re.fullmatch(r"[A-Za-z_][\w.-]*", t.pattern.value):
                self.keywords[t.pattern.value] = str(t.name)
            else:
                puncts.append(t)
        puncts.sort(key=lambda t: -len(t.pattern.value))
        parts = []
        self.group_type: dict[str, str | None] = {}
        for t in named + puncts:
            group = str(t.name)
            parts.append(f"(?P<{group}>{t.pattern.to_regexp()})")
            self.group_type[group] = None if group in _IGNORED else group
        # First-character dispatch: for each character, the alternation restricted (in the same
        # order) to the terminals that can start with it.  Same tokens, far fewer failed attempts.
        # Compiled on first use of each character (start-up: a text uses a few dozen of them).
        self.dispatch = _Dispatch([(_first_chars(part), part) for part in parts])
        self.lbrace = next((str(t.name) for t in puncts if t.pattern.value == "{"), None)
        self.rpar = next((str(t.name) for t in puncts if t.pattern.value == ")"), None)
        self.rbrace = next((str(t.name) for t in puncts if t.pattern.value == "}"), None)
        self.terminal_names = {t.name for t in terminals}
        by_value = {t.pattern.value: str(t.name) for t in puncts}
        self.openers = frozenset(by_value[v] for v in "([{" if v in by_value) | {
            n for n in ("LAYOUT_OPEN", "TILE_OPEN", "SPLIT_OPEN", "PHYSICAL_OPEN", "BUFFER_OPEN",
                        "LAYOUT_FN", "OPCODE_CONSTANT") if n in self.terminal_names}
        self.closers = frozenset(by_value[v] for v in ")]}" if v in by_value)

    def lex(self, lexer_state, parser_state) -> Iterator[Token]:
        inp: LexInput = lexer_state.text
        source = inp.source
        text = source.text
        pos, end = inp.start, inp.end
        group_type = self.group_type
        keywords = self.keywords
        lbrace = self.lbrace
        new = _new_str
        Tok = HloToken
        dispatch = self.dispatch
        skip_ws = _WS.match
        rbrace = self.rbrace
        # frontend_attributes={k={...}}: XLA reads a value that opens a brace as one brace-balanced
        # raw string (LexJsonDict), JSON or not (e.g. MLIR attribute dicts of composites).
        depth = 0
        fa_pending = False
        fa_level = -1
        nest = 0  # (, [ and { open now: XLA's parser refuses more than MAX_NESTING
        openers = self.openers
        closers = self.closers
        while pos < end:
            ch = text[pos]
            if ch in " \t\r\n\f":
                pos = skip_ws(text, pos).end()
                if pos >= end:
                    return
                ch = text[pos]
            sub = dispatch[ch]
            m = sub.match(text, pos, end) if sub is not None else None
            if m is None:
                raise _lex_error(source, pos, end)
            group = m.lastgroup
            typ = group_type[group]
            mend = m.end()
            if typ is None:
                pos = mend
                continue
            value = m.group()
            if typ in openers:
                nest += 1
                if nest > MAX_NESTING:
                    raise HloError.at(source, pos, f"nesting deeper than {MAX_NESTING} levels")
            elif typ in closers:
                nest -= 1
            pending, fa_pending = fa_pending, False
            if typ == "NAME":
                typ = keywords.get(value, "NAME")
            elif typ == "ATTR" or typ == "ATTR_NEXT":
                key = value if typ == "ATTR" else value[1:].lstrip()
                if key == "frontend_attributes=":
                    fa_pending = True
                elif key in _RAW_BRACE_ATTRS or depth == fa_level:
                    # backend_config={...} and frontend attribute values: brace-balanced raw text
                    j = mend
                    while j < end and text[j] in " \t":
                        j += 1
                    if j < end and text[j] == "{":
                        t = new(Tok, value)
                        t.type = typ
                        t.value = value
                        t.start_pos = pos
                        yield t
                        close = _scan_balanced(text, j, end, "{", "}", strings=True)
                        if close < 0:
                            raise HloError.at(source, j, f"unterminated {key[:-1]} value: no matching '}}'")
                        raw = text[j:close]
                        t = new(Tok, raw)
                        t.type = "JSON_DICT"
                        t.value = raw
                        t.start_pos = j
                        yield t
                        pos = close
                        continue
            elif typ == rbrace:
                depth -= 1
                if depth < fa_level:
                    fa_level = -1
            elif typ == "LAYOUT_OPEN":
                depth += 1
            elif typ == lbrace:
                depth += 1
                if pending:
                    fa_level = depth
            elif typ == "OPCODE_CONSTANT":
                close = _scan_balanced(text, mend - 1, end, "(", ")", strings=False)
                if close < 0:
                    raise HloError.at(source, mend - 1, "unterminated constant(...): no matching ')'")
                t = new(Tok, value)
                t.type = typ
                t.value = value
                t.start_pos = pos
                yield t
                body = text[mend:close - 1]
                t = new(Tok, body)
                t.type = "LITERAL_BODY"
                t.value = body
                t.start_pos = mend
                yield t
                nest -= 1  # the `(` of constant( is closed here
                t = new(Tok, ")")
                t.type = self.rpar
                t.value = ")"
                t.start_pos = close - 1
                yield t
                pos = close
                continue
            t = new(Tok, value)
            t.type = typ
            t.value = value
            t.start_pos = pos
            yield t
            pos = mend


_WS = re.compile(r"[ \t\f\r\n]+")
# Attributes whose `{...}` value XLA's lexer takes as one brace-balanced string (LexJsonDict).
_RAW_BRACE_ATTRS = frozenset({"backend_config="})


def _first_chars(pattern: str):
    """The characters a regex can start with (a superset), or None for 'any'."""
    try:
        import re._parser as sre_parse  # Python >= 3.11
        from re import _constants as C
    except ImportError:  # pragma: no cover
        import sre_parse
        import sre_constants as C

    def first(items) -> tuple[set | None, bool]:
        """(chars, nullable) of a sequence of parsed items."""
        out: set = set()
        for op, av in items:
            if op == C.LITERAL:
                out.add(chr(av))
                return out, False
            if op == C.NOT_LITERAL or op == C.ANY:
                return None, False
            if op == C.IN:
                chars = _charset(av)
                if chars is None:
                    return None, False
                out |= chars
                return out, False
            if op == C.SUBPATTERN:
                sub, nullable = first(av[-1])
                if sub is None:
                    return None, False
                out |= sub
                if not nullable:
                    return out, False
                continue
            if op == C.BRANCH:
                nullable_any = False
                for alt in av[1]:
                    sub, nullable = first(alt)
                    if sub is None:
                        return None, False
                    out |= sub
                    nullable_any = nullable_any or nullable
                if not nullable_any:
                    return out, False
                continue
            if op in (C.MAX_REPEAT, C.MIN_REPEAT, C.POSSESSIVE_REPEAT):
                lo, _, sub_items = av
                sub, nullable = first(sub_items)
                if sub is None:
                    return None, False
                out |= sub
                if lo > 0 and not nullable:
                    return out, False
                continue
            if op in (C.ASSERT, C.ASSERT_NOT, C.AT):
                continue  # zero-width
            return None, False
        return out, True

    def _charset(av):
        chars: set = set()
        negate = False
        for op, v in av:
            if op == C.NEGATE:
                negate = True
            elif op == C.LITERAL:
                chars.add(chr(v))
            elif op == C.RANGE:
                chars.update(chr(c) for c in range(v[0], v[1] + 1))
            elif op == C.CATEGORY:
                name = str(v)
                if "DIGIT" in name and "NOT" not in name:
                    chars.update("0123456789")
                elif "WORD" in name and "NOT" not in name:
                    chars.update("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")
                elif "SPACE" in name and "NOT" not in name:
                    chars.update(" \t\n\r\f\v")
                else:
                    return None
            else:
                return None
        return None if negate else chars

    try:
        chars, nullable = first(sre_parse.parse(pattern))
    except Exception:
        return None
    if chars is None or nullable:
        return None
    # non-ASCII starts (e.g. \w matching letters beyond ASCII) are handled by the full pattern
    return chars


def _lex_error(source: SourceText, pos: int, end: int) -> HloError:
    text = source.text
    ch = text[pos]
    if text.startswith("/*", pos):
        return HloError.at(source, pos, "unterminated comment: '/*' without '*/'")
    if ch in "\"'":
        return HloError.at(source, pos, "unterminated string")
    if ch == "%":
        return HloError.at(source, pos, "a name must start with a letter or '_' (as in XLA)")
    word = re.match(r"[\w.-]+", text[pos:pos + 80])
    if word and len(word.group()) > 1:
        return HloError.at(source, pos, f"unexpected '{word.group()}': not a name, number or keyword")
    shown = repr(ch) if ch.isprintable() else f"U+{ord(ch):04X}"
    return HloError.at(source, pos, f"unexpected character {shown}")


def _terminal_order(grammar_text: str) -> dict[str, int]:
    names = re.findall(r"^([A-Z_][A-Z0-9_]*)\s*:", grammar_text, flags=re.M)
    return {n: i for i, n in enumerate(names)}


_GRAMMAR_TERMINAL_ORDER: dict[str, int] = {}


def set_grammar_text(grammar_text: str) -> None:
    _GRAMMAR_TERMINAL_ORDER.clear()
    _GRAMMAR_TERMINAL_ORDER.update(_terminal_order(grammar_text))
