"""The tokenizer: one compiled regular expression built from the grammar's terminals.

Lark's own lexers try terminals one by one in Python; HLO dumps are megabytes, so instead the terminals
of grammar/hlo.lark are joined, in the order the grammar file writes them, into a single alternation
that `re` runs in C.  Identifiers that spell a keyword of the grammar ("ENTRY", "true", ...) become
that keyword, as in XLA's lexer.  Two tokens are scanned by hand because no regular expression can:
the brace-balanced value of backend_config= and of frontend attributes (JSON, or anything with
balanced braces, kept verbatim as XLA's LexJsonDict does), and the body of `constant(...)`.

Fast tokens.  Most lines of a dump are `%name = f32[4]{0} op(%a, %b), metadata={...}`, and every
computation starts with a signature `(p0: f32[4], ...) -> f32[4]`.  Where the token-by-token lexer
would start one of these (INSTR_DEF, ROOT; `(`) and a single regex made of the grammar's own
terminal patterns matches the whole of it, one FAST token stands for all its tokens; the driver
pushes it as the nonterminal (`instruction`, `signature`) and the parser builds from its pieces
exactly what its rules build from the tokens.  Result shapes may be tuples of plain shapes; an
attribute value without a pattern of its own (window, sharding, padding, replica groups, ...) is kept as
its text and read with the grammar's `value` rule (once per distinct text).  Anything unusual on the
line (comments, nested operands, operands written with shapes, frontend attribute values in braces, a
line break inside) is lexed token by token, and a parse that fails with fast tokens is redone without
them (parser._parse), so that errors are those of the grammar.
Consecutive instruction lines make one FAST token (_fast_block), each line built by the parser as it is
read.  Measured on a 28.8 MB XLA:CPU dump: 2.0 MB/s token by token, 6 MB/s with one token per line;
one per block, with metadata kept as text: 8-12 MB/s (bench/parse.py).  A line with no attribute or
with metadata alone (most lines of a dump) is read by the one regex match that reads its head.
"""
from __future__ import annotations

import re
from typing import Iterator, Optional

from ..diagnostics import HloError, SourceText

MAX_NESTING = 500  # XLA's HloParserOptions max_recursion_depth

# Terminals that are skipped.
_IGNORED = ("WS", "BLOCK_COMMENT", "LINE_COMMENT")


class LexInput:
    """What the parser is handed: the whole source (for locations) and the span to tokenize."""
    __slots__ = ("source", "start", "end", "fast", "canonical")

    def __init__(self, source: SourceText, start: int = 0, end: int | None = None, fast: bool = False,
                 canonical: bool = False):
        self.source = source
        self.start = start
        self.end = len(source.text) if end is None else end
        self.fast = fast  # whole-instruction tokens (FastInstr); see HloLexer._fast_instruction
        self.canonical = canonical  # fast lines tell where they are written as the printer writes them


class HloToken(str):
    """A token: its text (a str), terminal name (`type`), `value` and offset (`start_pos`), the
    interface of a lark Token without line/column bookkeeping (locations are computed from start_pos
    only when a message needs one, SourceText.line_col) and without importing Lark."""
    __slots__ = ("type", "value", "start_pos", "first_type", "goto")
    line = None
    column = None
    end_line = None
    end_column = None
    end_pos = None

    def __new__(cls, type_: str, value, start_pos=None):
        t = _new_str(cls, value)
        t.type = type_
        t.value = value
        t.start_pos = start_pos
        return t

    def __reduce__(self):
        return (self.__class__, (self.type, self.value, self.start_pos))

    def __repr__(self) -> str:
        return f"Token({self.type!r}, {self.value!r})"

    def __deepcopy__(self, memo):
        return HloToken(self.type, self.value, self.start_pos)


Token = HloToken  # the parser's name for it


def _fast_token(first_type: str, goto: str, value, pos: int) -> "HloToken":
    """A FAST token: a whole instruction line or signature already built (the driver pushes `value` as
    nonterminal `goto`, choosing its action as if `first_type` had come)."""
    t = _new_str(HloToken, "")
    t.type = FAST
    t.first_type = first_type
    t.goto = goto
    t.value = value
    t.start_pos = pos
    return t


_new_str = str.__new__


# A quoted string as the grammar writes it, `"(?:[^"\\]|\\.)*"` (one alternation per character), and the
# same language as a loop over runs of ordinary characters, which `re` matches several times faster.
# (Only the first unescaped quote can end either: an escaped one follows a backslash, which no run
# takes.)
_STRING_FORMS = [(f"{q}(?:[^{q}\\\\{nl}]|\\\\.)*{q}", f"{q}[^{q}\\\\{nl}]*(?:\\\\.[^{q}\\\\{nl}]*)*{q}")
                 for q in "\"'" for nl in ("\n", "")]


def _unrolled_strings(pattern: str) -> str:
    for slow, fast in _STRING_FORMS:
        pattern = pattern.replace(slow, fast)
    return pattern


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
            # Every letter gets the alternation of all the terminals that can start with a letter
            # (in the same order: those that cannot start with this one fail at once), compiled
            # once: most of a text's characters are letters, and each alternation costs ~0.3 ms to
            # compile (start-up); the token-by-token path is the rare one.
            chars = _LETTERS if ch in _LETTERS else {ch}
            sub = [part for fc, part in self.firsts if fc is None or not chars.isdisjoint(fc)]
        pat = None
        if sub:
            text = "|".join(sub)
            pat = _DISPATCH_PATTERNS.get(text)  # (characters with the same alternation share it)
            if pat is None:
                pat = _DISPATCH_PATTERNS[text] = re.compile(text)
        self[ch] = pat
        return pat


_DISPATCH_PATTERNS: dict[str, "re.Pattern"] = {}
_LETTERS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_")


class Pattern:
    """A terminal's pattern: what the lexer needs of a lark PatternStr/PatternRE."""
    __slots__ = ("type", "value", "regexp")

    def __init__(self, type_: str, value: str, regexp: str):
        self.type, self.value, self.regexp = type_, value, regexp

    def to_regexp(self) -> str:
        return self.regexp


class Terminal:
    __slots__ = ("name", "pattern")

    def __init__(self, name: str, pattern: Pattern):
        self.name, self.pattern = name, pattern


class HloLexer:
    """The lexer (Lark's custom-lexer interface 2): lex(lexer_state, parser_state) -> tokens.
    `lexer_conf.terminals`: the grammar's terminals (name, pattern: type, value, to_regexp())."""
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
            parts.append(f"(?P<{group}>{_unrolled_strings(t.pattern.to_regexp())})")
            self.group_type[group] = None if group in _IGNORED else group
        # First-character dispatch: for each character, the alternation restricted (in the same
        # order) to the terminals that can start with it.  Same tokens, far fewer failed attempts.
        # Compiled on first use of each character (start-up: a text uses a few dozen of them).
        self.dispatch = _Dispatch([(_first_chars(part), part) for part in parts])
        self.lbrace = next((str(t.name) for t in puncts if t.pattern.value == "{"), None)
        self.lpar = next((str(t.name) for t in puncts if t.pattern.value == "("), None)
        self.rpar = next((str(t.name) for t in puncts if t.pattern.value == ")"), None)
        self.rbrace = next((str(t.name) for t in puncts if t.pattern.value == "}"), None)
        self.terminal_names = {t.name for t in terminals}
        by_value = {t.pattern.value: str(t.name) for t in puncts}
        self.openers = frozenset(by_value[v] for v in "([{" if v in by_value) | {
            n for n in ("LAYOUT_OPEN", "TILE_OPEN", "SPLIT_OPEN", "PHYSICAL_OPEN", "BUFFER_OPEN",
                        "LAYOUT_FN", "OPCODE_CONSTANT") if n in self.terminal_names}
        self.closers = frozenset(by_value[v] for v in ")]}" if v in by_value)
        self._build_fast({str(t.name): t.pattern.to_regexp() for t in terminals})

    def _build_fast(self, pats: dict) -> None:
        """The regexes of the whole-instruction fast path (see _fast_instruction), made of the
        grammar's own terminal patterns so that they match exactly what those terminals match."""
        need = ("SHAPE_FAST", "OP_CALL_FAST", "KV_FAST", "INTS_FAST", "STRING", "INSTR_DEF", "PARAM_NAME")
        pats = {name: _unrolled_strings(p) for name, p in pats.items()}
        self.fast_ok = all(n in pats for n in need) and "ROOT" in self.keywords and self.lpar is not None
        if not self.fast_ok:
            return
        self.root_type = self.keywords["ROOT"]
        # The line up to its operand list (groups 1-10, see _fast_instruction), then the end of the line
        # when nothing else is written on it (group 13, empty), or when the only attribute is metadata
        # written as the printer writes `, metadata={...}` (group 11: its canonical form, as in fast_attr;
        # group 12: any KV_FAST): the common lines of a dump in one match.  Otherwise the attributes
        # are read one by one with fast_attr.
        # The result shape: text of the form of a SHAPE_FAST (a word, static dimensions, a plain layout)
        # or of a tuple of them written on the line (without nested parentheses), which _fast_instruction
        # takes when SHAPE_FAST or fast_tuple_pattern matches it exactly (checked once per distinct text:
        # SHAPE_FAST's list of type names would cost a quarter of this regex on every line).  What
        # SHAPE_FAST looks ahead for cannot follow here: a space does.
        head = (
            r"[ \t\f\r\n]*(?:(ROOT)[ \t]+)?(%?[A-Za-z_][\w.-]*)[ \t]+=[ \t]+"
            r"([a-z][a-z0-9]*\[(?:[0-9]+(?:,[0-9]+)*)?\](?:\{(?:[0-9]+(?:,[0-9]+)*)?\})?|\([^()\n]*\))[ \t]+"
            # `add(%a, %b)` as the printer writes it (at most 5 operands: no index comments), which
            # OP_CALL_FAST matches too; then any OP_CALL_FAST (`constant(` is OPCODE_CONSTANT, which the
            # lexer tries first: `constant(true)` is a literal)
            r"(?:(?!constant\()([a-z][a-z0-9-]*)\(((?:%[A-Za-z_][\w.-]*(?:, %[A-Za-z_][\w.-]*){0,4})?)\)"
            rf"|(?!constant\()({pats['OP_CALL_FAST']})|parameter\(([-+]?[0-9]+)\)|constant\(([^()]*)\)"
            # `fusion(%a, %b, %c, %d, %e, /*index=5*/%f)`: operands with XLA's index comments
            r"|([a-z][a-z0-9-]*)\((%[A-Za-z_][\w.-]*(?:,[ \t]*(?:/\*index=[0-9]+\*/)?[ \t]*%[A-Za-z_][\w.-]*)*)\))")
        eol = r"(?=[ \t\r]*(?:\n|\Z))"
        head += rf"(?:, metadata=(?:({{}})|({pats['KV_FAST']})){eol}|(){eol})?"
        # A value of metadata's canonical form (printer.canonical_metadata_pattern, not empty: a part
        # of KV_FAST's language) first, so that a canonical line's metadata is read once.  Parses that
        # do not record canonical lines, and texts without metadata, use the same regexes with that
        # alternative never matching (lex(); its compilation is most of the cost: start-up).
        from .printer import canonical_metadata_pattern
        attr = (r",[ \t]*([A-Za-z_][\w.-]*)="
                rf"(?:({{}})|({pats['KV_FAST']})|({pats['INTS_FAST']})|(\{{\}})|([-+]?[0-9]+)|({pats['STRING']})"
                r"|(%?[A-Za-z_][\w.-]*)"
                # slice={[0:2], [4:8:2]}
                r"|(\{\[[-+]?[0-9]+:[-+]?[0-9]+(?::[-+]?[0-9]+)?\](?:,[ \t]*\[[-+]?[0-9]+:[-+]?[0-9]+(?::[-+]?[0-9]+)?\])*\})"
                r")(?=,|[ \t\r]*(?:\n|\Z))")
        canonical = rf"((?=\{{[a-z]){canonical_metadata_pattern()})"
        self.fast_sources = tuple((h.replace("({})", c, 1), a.replace("({})", c, 1))
                                  for h, a in ((head, attr),) for c in ("((?!))", canonical))
        self.fast_by_metadata: list = [None, None]  # (fast_head, fast_attr) [without, with] the metadata alternative
        self.fast_head = self.fast_attr = None
        self.fast_canonical = False  # whether this parse records canonical lines (lex())
        # backend_config={...}: the brace-balanced raw text the lexer makes a JSON_DICT of
        self.fast_json_attr = re.compile(r",[ \t]*(backend_config)=(?=\{)")
        # any other `, name=value` on the line: the value's text, up to a `,` outside brackets and
        # strings, parsed with the grammar's `value` rule when the parser builds the line (V_RAW)
        self.fast_raw_attr = re.compile(r",[ \t]*([A-Za-z_][\w.-]*)=(?=[^ \t\r\n,])")
        self.fast_eol = re.compile(r"[ \t\r]*(?:\n|\Z)")
        self.fast_instr_names: dict[str, bool] = {}  # name -> `name = ` lexes as INSTR_DEF
        self.fast_words: dict[str, str | None] = {}  # attribute value word -> its terminal, if NAME/TRUE/FALSE
        self.fast_opcodes: dict[str, bool] = {}  # opcode -> `op(%a)` lexes as OP_CALL_FAST
        self.fast_opnames: dict[str, bool] = {}  # opcode -> `op(%a, /*c*/%b)` lexes as NAME `(` ...
        # Computation signatures `(p0: f32[4], p1: s32[]) -> f32[4]` (see _fast_signature).
        shape = re.sub(r"\(\?P<\w+>", "(?:", pats["SHAPE_FAST"])
        # A tuple result shape `(f32[4]{0}, /*index=5*/s32[])`: `(`, SHAPE_FASTs separated by `,` with
        # XLA's index comments, `)` (compiled when a line first has one: start-up)
        elem = r"[ \t]*(?:/\*index=[0-9]+\*/[ \t]*)?" + shape
        self.fast_tuple_pattern = rf"\((?:{elem}(?:[ \t]*,{elem})*)?[ \t]*\)"
        self.fast_shape_pattern = pats["SHAPE_FAST"]
        self.fast_shapes: dict[str, bool] = {}  # result shape text -> SHAPE_FAST or fast_tuple_pattern matches it
        # (one SHAPE_FAST matches at most one way where it starts, so the signature is read piece by
        # piece with these, as one regex would read it)
        # (compiled when a signature first comes: texts before optimization have none; start-up)
        self.fast_sig_sources = (rf"(%?[A-Za-z_][\w.-]*):[ \t]*({shape})", shape)
        self.fast_sig_params = self.fast_sig_shapes = None
        self.fast_param_names: dict[str, bool] = {}  # name -> `name: f32[]` lexes as PARAM_NAME

    def lex(self, lexer_state, parser_state) -> Iterator[HloToken]:
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
        fast = inp.fast and self.fast_ok
        if fast:
            # (the canonical form of metadata matters only to a parse that records canonical lines)
            self.fast_canonical = inp.canonical
            md = int(inp.canonical and ("metadata={" in text[pos:end] if pos or end < len(text)
                                        else "metadata={" in text))
            self.fast_head, self.fast_attr = self.fast_by_metadata[md] or self._fast_regexes(md)
        fast_block = self._fast_block
        fast_signature = self._fast_signature
        root_type = self.keywords.get("ROOT")
        lpar = self.lpar
        layout_after_ws = _LAYOUT_AFTER_WS.match
        while pos < end:
            ch = text[pos]
            if ch in " \t\r\n\f":
                ws_start = pos
                pos = skip_ws(text, pos).end()
                if pos >= end:
                    return
                ch = text[pos]
                if ch == "{" and ws_start > 0 and text[ws_start - 1] == "]" and layout_after_ws(text, pos, end):
                    # `f32[4] {0}`: XLA takes a `{` after a shape's `]` as its layout when an integer or
                    # a colon follows, whitespace or not (the grammar's LAYOUT_OPEN sees no whitespace)
                    nest += 1
                    if nest > MAX_NESTING:
                        raise HloError.at(source, pos, f"nesting deeper than {MAX_NESTING} levels")
                    depth += 1
                    t = new(Tok, "{")
                    t.type = "LAYOUT_OPEN"
                    t.value = "{"
                    t.start_pos = pos
                    yield t
                    pos += 1
                    continue
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
            if fast and (typ == "INSTR_DEF" or value == "ROOT" and typ == "NAME") and fa_level < 0 \
                    and not fa_pending and nest < MAX_NESTING:
                got = fast_block(text, pos, end, AT_NAME if typ == "INSTR_DEF" else AT_ROOT)
                if got is not None:
                    yield _fast_token("INSTR_DEF" if typ == "INSTR_DEF" else root_type, "instruction",
                                      got[0], pos)
                    pos = got[1]
                    continue
            elif fast and typ == lpar and fa_level < 0 and not fa_pending and nest < MAX_NESTING:
                got = fast_signature(text, pos, end)
                if got is not None:
                    yield _fast_token(lpar, "signature", got[0], pos)
                    pos = got[1]
                    continue
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

    # What the token-by-token lexer would make of the text where a fast instruction is tried:
    # AT_NAME an INSTR_DEF, AT_ROOT the keyword ROOT, AT_LINE either (the next line of a block).
    def _fast_block(self, text: str, pos: int, end: int, mode: int):
        """Consecutive instruction lines read by _fast_instruction (the first where the lexer found
        `mode`, each next one where it would find INSTR_DEF or ROOT), each built at once by
        `build_line` (the parser's): (the parser's value for the block, offset after it), or None
        when the first line is not one."""
        got = self._fast_instruction(text, pos, end, mode)
        if got is None:
            return None
        build = self.build_line
        lines = [build(got)]
        p = got[-1]
        fast_instruction = self._fast_instruction
        while True:
            got = fast_instruction(text, p, end, AT_LINE)  # from the end of the line before
            if got is None:
                break
            lines.append(build(got))
            p = got[-1]
        return self.build_block(lines), p

    def _fast_instruction(self, text: str, pos: int, end: int, mode: int):
        """The common instruction line, `[ROOT] %name = f32[4]{0} op(%a, %b), key=value, ...` up to
        the end of its line: (pieces, offset after it), or None to lex the line token by token.  It is taken only where the token-by-token lexer would produce
        INSTR_DEF (or ROOT then INSTR_DEF), SHAPE_FAST (or `(` SHAPE_FASTs `)`), then OP_CALL_FAST,
        `parameter ( INT )`, `constant( LITERAL_BODY )` or NAME `(` %NAMEs separated by `,` and
        /*index=N*/ `)`, then per attribute ATTR_NEXT and one KV_FAST, INTS_FAST, STRING, INT or NAME
        token (or `{` `}`, a JSON_DICT of backend_config, or the tokens of any other value on the line:
        V_RAW), and nothing more on the line.  The pieces are the text and offset of each of those
        tokens; the parser (_Builder.fast_instruction) makes of them what its rules make of the tokens.  The last piece is the offset where the line's text ends when it is written with
        single spaces as the printer writes it (-1 otherwise, and in a parse that does not record canonical lines)."""
        m = self.fast_head.match(text, pos, end)
        if m is None:
            return None
        root, name, shape, opcode, args, call, pnum, const, opname, opargs, md_canon, md, _ = m.groups()
        ok = self.fast_shapes.get(shape)
        if ok is None:
            ok = self.fast_shapes[shape] = re.fullmatch(
                self.fast_tuple_pattern if shape[0] == "(" else self.fast_shape_pattern, shape) is not None
        if not ok:
            return None
        if mode == AT_NAME:
            if root is not None:
                return None
        elif root is None and mode == AT_ROOT:
            return None
        elif name[0] != "%":
            ok = self.fast_instr_names.get(name)
            if ok is None:
                ok = self.fast_instr_names[name] = (self.dispatch[name[0]].match(name + " = x")
                                                    or _NO).lastgroup == "INSTR_DEF"
            if not ok:
                return None
        name_pos = m.start(2)
        shape_pos = m.start(3)
        p = m.end()  # (after the operands when the line goes on: its attributes follow)
        # the form of the operands, their text (inside the parentheses) and where it starts
        if opcode is not None:
            ok = self.fast_opcodes.get(opcode)
            if ok is None:
                ok = self._fast_opcode(opcode)
            if not ok:
                return None
            form, args_pos = FAST_CALL_CANON, m.start(5)
        elif call is not None:
            paren = call.index("(")
            opcode = call[:paren]
            ok = self.fast_opcodes.get(opcode)
            if ok is None:
                ok = self._fast_opcode(opcode)
            if not ok:
                return None
            form, args, args_pos = FAST_CALL, call[paren + 1:-1], m.start(6) + paren + 1
        elif pnum is not None:
            form, opcode, args, args_pos = FAST_PARAMETER, "parameter", pnum, m.start(7)
        elif const is not None:
            form, opcode, args, args_pos = FAST_CONSTANT, "constant", const, m.start(8)
        else:  # NAME `(` NAME (`,` NAME)* `)`, with comments between: the grammar's rhs_op
            ok = self.fast_opnames.get(opname)
            if ok is None:
                probe = self.dispatch[opname[0]].match(opname + "(%a, /*index=5*/%b)")
                ok = self.fast_opnames[opname] = (opname != "parameter" and opname not in self.keywords
                                                  and probe is not None and probe.lastgroup == "NAME"
                                                  and probe.end() == len(opname))
            if not ok:
                return None
            form, opcode, args, args_pos = FAST_OPERANDS, opname, opargs, m.start(10)
        # written with single spaces, as the printer writes it: `ROOT %n = f32[] op(...), k=v`
        spaced = self.fast_canonical and (shape_pos == name_pos + len(name) + 3
                                          and args_pos == shape_pos + len(shape) + len(opcode) + 2
                                          and (root is None or name_pos == m.start(1) + 5))
        tail = m.lastindex  # (the group that closed last: one of the line's end, if it matched)
        if tail >= _TAIL_METADATA_CANON:  # nothing more on the line, or only `, metadata={...}`
            if tail == _TAIL_EOL:
                attrs = ()
            else:
                vpos = m.start(tail)
                attrs = (("metadata", vpos - 9, V_KV if md is not None else V_KV_CANON,
                          md if md is not None else md_canon, vpos),)
            return (root is not None, name, name_pos, shape, shape_pos, form, opcode, args, args_pos, attrs,
                    p if spaced else -1, p)
        attrs = []
        if text.startswith(",", p):
            attr_match = self.fast_attr.match
            words = self.fast_words
            while True:
                a_pos = p
                a = attr_match(text, p, end)
                key = a.group(1) if a is not None else None
                if key == "frontend_attributes":  # read as a raw value (the lexer has a state for it)
                    key = None
                if key is None or key == "backend_config":
                    j = self.fast_json_attr.match(text, p, end)
                    if j is not None:  # what the lexer reads as JSON_DICT
                        close = _scan_balanced(text, j.end(), end, "{", "}", strings=True)
                        if close < 0:
                            return None
                        key_pos = j.start(1)
                        attrs.append(("backend_config", key_pos, V_JSON, text[j.end():close], j.end()))
                        if spaced and key_pos != p + 2:
                            spaced = False
                        p = close
                        if text.startswith(",", p):
                            continue
                        if self.fast_eol.match(text, p, end) is None:
                            return None
                        break
                    if key is None:
                        r = self.fast_raw_attr.match(text, p, end)
                        if r is None:
                            return None  # the lexer reads the rest of the line
                        key = r.group(1)
                        vpos = r.end()
                        close = _value_end(text, vpos, end, key == "frontend_attributes")
                        if close < 0 or key == "backend_config":
                            return None
                        key_pos = r.start(1)
                        value = text[vpos:close].rstrip(" \t\r")
                        attrs.append((key, key_pos, V_RAW, value, vpos))
                        if spaced and key_pos != p + 2:
                            spaced = False
                        p = close
                        if text.startswith(",", p):
                            continue
                        break
                k = a.lastindex
                if k == V_NAME:  # a word: a NAME, or the keyword true or false
                    word = a.group(k)
                    kind = words.get(word, 0)
                    if kind == 0:
                        probe = self.dispatch[word[0]].match(word + ",")
                        kind = None
                        if probe is not None and probe.lastgroup == "NAME" and probe.end() == len(word):
                            kw = self.keywords.get(word)
                            if kw is None:
                                kind = V_NAME
                            elif word == "true":
                                kind = V_TRUE
                            elif word == "false":
                                kind = V_FALSE
                        words[word] = kind
                    if kind is None:
                        return None
                    k = kind
                key_pos = a.start(1)
                p = a.end()
                if k < V_TRUE:
                    value = a.group(k)
                    attrs.append((key, key_pos, k, value, p - len(value)))
                else:
                    attrs.append((key, key_pos, k, None, 0))
                if spaced and key_pos != a_pos + 2:
                    spaced = False
                if not text.startswith(",", p):
                    break  # the end of the line (fast_attr looked ahead for it)
        elif self.fast_eol.match(text, p, end) is None:
            return None
        return (root is not None, name, name_pos, shape, shape_pos, form, opcode, args, args_pos, attrs,
                p if spaced else -1, p)

    def _fast_regexes(self, with_metadata: int) -> tuple:
        got = self.fast_by_metadata[with_metadata] = tuple(re.compile(x) for x in self.fast_sources[with_metadata])
        return got

    def _fast_opcode(self, opcode: str) -> bool:
        """Whether `opcode(%a)` lexes as one OP_CALL_FAST (remembered in fast_opcodes)."""
        probe = self.dispatch[opcode[0]].match(opcode + "(%a)")
        ok = self.fast_opcodes[opcode] = (opcode != "parameter" and probe is not None
                                          and probe.lastgroup == "OP_CALL_FAST")
        return ok

    def _fast_signature(self, text: str, pos: int, end: int):
        """A computation's signature `(p0: f32[4], p1: s32[]) -> f32[4]` (before its `{`) as one
        FAST token, where the token-by-token lexer would produce `(`, PARAM_NAME SHAPE_FAST pairs
        separated by `,`, `)`, `->` and a SHAPE_FAST or a `(...)` list of them: ((params, result
        shapes, result is a tuple), offset after it), or None."""
        # `(` [param (`,` param)*] `)` `->` (shape | `(` [shape (`,` shape)*] `)`), then a `{`
        if self.fast_sig_params is None:
            if _SIG_START.match(text, pos, end) is None:  # (not a signature: nothing to compile yet)
                return None
            self.fast_sig_params, self.fast_sig_shapes = (re.compile(x) for x in self.fast_sig_sources)
        got = _sig_list(text, pos, end, self.fast_sig_params.match)
        if got is None:
            return None
        params, p = got
        arrow = _SIG_ARROW.match(text, p, end)
        if arrow is None:
            return None
        p = arrow.end()
        if text.startswith("(", p):
            got = _sig_list(text, p, end, self.fast_sig_shapes.match)
            if got is None:
                return None
            result, p = got
            result = tuple(result)
        else:
            r = self.fast_sig_shapes.match(text, p, end)
            if r is None:
                return None
            result, p = (r.group(),), r.end()
        if _SIG_BODY.match(text, p, end) is None:
            return None
        names = self.fast_param_names
        for name, _ in params:
            ok = names.get(name)
            if ok is None:
                probe = self.dispatch[name[0]].match(name + ": f32[]")
                ok = names[name] = probe is not None and probe.lastgroup == "PARAM_NAME"
            if not ok:
                return None
        return (params, result, text[p - 1] == ")"), p


_SIG_START = re.compile(r"\([ \t]*(?:\)|%?[A-Za-z_][\w.-]*:)")
_SIG_OPEN = re.compile(r"\([ \t]*")
_SIG_NEXT = re.compile(r"[ \t]*,[ \t]*")
_SIG_CLOSE = re.compile(r"[ \t]*\)")
_SIG_ARROW = re.compile(r"[ \t]*->[ \t]*")
_SIG_BODY = re.compile(r"[ \t]*\{")


def _sig_list(text: str, pos: int, end: int, item):
    """`(` [item (`,` item)*] `)` at pos, spaces and tabs around the punctuation: (the items, as
    item(...).groups() or the matched text when it has no groups, offset after the `)`), or None."""
    m = _SIG_OPEN.match(text, pos, end)
    if m is None:
        return None
    p = m.end()
    items = []
    if not text.startswith(")", p):
        while True:
            a = item(text, p, end)
            if a is None:
                return None
            items.append(a.groups() or a.group())
            p = a.end()
            sep = _SIG_NEXT.match(text, p, end)
            if sep is None:
                break
            p = sep.end()
    m = _SIG_CLOSE.match(text, p, end)
    return None if m is None else (items, m.end())


# FAST pieces: how the operands are written, and the kinds of attribute values (the group
# numbers of HloLexer.fast_attr).
FAST_CALL, FAST_PARAMETER, FAST_CONSTANT, FAST_OPERANDS, FAST_CALL_CANON = 0, 1, 2, 3, 4  # (the last: `%a, %b` as printed)
AT_NAME, AT_ROOT, AT_LINE = 0, 1, 2
V_KV_CANON, V_KV, V_INTS, V_EMPTY, V_INT, V_STRING, V_NAME, V_SLICE = 2, 3, 4, 5, 6, 7, 8, 9
# the groups of HloLexer.fast_head that end a line: its metadata (canonical, any KV_FAST), or nothing
_TAIL_METADATA_CANON, _TAIL_METADATA, _TAIL_EOL = 11, 12, 13
V_JSON, V_TRUE, V_FALSE = 10, 11, 12  # not groups: a brace-balanced raw value, the keywords true and false
V_RAW = 13  # any other value: its text, read by the grammar's `value` rule (_value_end finds where it ends)
# (V_KV_CANON: a KV_FAST written as the printer writes metadata)
FAST = "FAST"  # the type of tokens that stand for a whole nonterminal (never a grammar terminal)
_NO = re.match("(?P<_>)", "")  # a match whose lastgroup is no terminal


_VALUE_STOPS = re.compile(r"""[][(){},"'\n/]""")


def _value_end(text: str, pos: int, end: int, no_inner_braces: bool) -> int:
    """Where the attribute value starting at `pos` ends: the offset of the `,` outside brackets and
    strings that follows it, or of the end of its line; -1 when the value spans lines, has a comment,
    unbalanced brackets or an unterminated string (or, with `no_inner_braces`, a `{` inside its
    outer braces: frontend attributes, whose inner braces the lexer reads as raw text)."""
    depth = 0
    braces = 0
    find = _VALUE_STOPS.search
    i = pos
    while True:
        m = find(text, i, end)
        if m is None:
            return end if depth == 0 else -1
        ch = m.group()
        i = m.end()
        if ch in "([{":
            depth += 1
            if ch == "{":
                braces += 1
                if no_inner_braces and braces > 1:
                    return -1
        elif ch in ")]}":
            depth -= 1
            if depth < 0:
                return -1
        elif ch == "," or ch == "\n":
            if depth == 0:
                return i - 1
            if ch == "\n":
                return -1
        elif ch == "/":
            if text.startswith("/*", i - 1) or text.startswith("//", i - 1):
                return -1
        else:  # a quoted string, its escapes skipped
            j = i
            while True:
                k = text.find(ch, j, end)
                nl = text.find("\n", j, k if k >= 0 else end)
                if k < 0 or nl >= 0:
                    return -1
                b = k - 1
                while text[b] == "\\":
                    b -= 1
                if (k - 1 - b) % 2 == 0:
                    break
                j = k + 1
            i = k + 1


_WS = re.compile(r"[ \t\f\r\n]+")
_LAYOUT_AFTER_WS = re.compile(r"\{[ \t\r\n]*[0-9:]")  # what LAYOUT_OPEN looks ahead for
# Attributes whose `{...}` value XLA's lexer takes as one brace-balanced string (LexJsonDict).
_RAW_BRACE_ATTRS = frozenset({"backend_config="})


_DIGITS = frozenset("0123456789")
_WORD = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")
_SPACE = frozenset(" \t\n\r\f\v")
_CHAR_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "f": "\f", "v": "\v", "a": "\a", "0": "\0"}


class _AnyChar(Exception):
    """A construct not read here: the pattern may start with any character."""


class _FirstChars:
    """The characters a regex can start with, read from its text.  Covers the syntax the grammar's
    terminals use (literals, escapes, classes, groups, lookarounds, alternation, quantifiers).  A
    set of None stands for 'any character' (`.`, a negated class); syntax not read here makes the
    whole pattern 'any character', which is always safe."""

    def __init__(self, pattern: str):
        self.p = pattern
        self.i = 0

    def peek(self) -> str:
        return self.p[self.i] if self.i < len(self.p) else ""

    def take(self) -> str:
        ch = self.peek()
        if not ch:
            raise _AnyChar
        self.i += 1
        return ch

    def alternation(self) -> tuple[Optional[set], bool]:
        """(first chars, can match empty) of `a|b|...` up to a ')' or the end."""
        chars, nullable = self.sequence()
        while self.peek() == "|":
            self.i += 1
            more, n = self.sequence()
            chars = None if chars is None or more is None else chars | more
            nullable = nullable or n
        return chars, nullable

    def sequence(self) -> tuple[Optional[set], bool]:
        chars: Optional[set] = set()
        nullable = True
        while self.peek() not in ("", "|", ")"):
            first, n = self.quantified()
            if nullable:  # what follows a part that cannot match empty does not start the match
                chars = None if chars is None or first is None else chars | first
                nullable = n
        return chars, nullable

    def quantified(self) -> tuple[Optional[set], bool]:
        first, nullable = self.atom()
        ch = self.peek()
        if ch in ("*", "?"):
            self.i += 1
            nullable = True
        elif ch == "+":
            self.i += 1
        elif ch == "{" and (m := re.match(r"\{([0-9]*)(,[0-9]*)?\}", self.p[self.i:])):
            self.i += m.end()
            nullable = nullable or not m.group(1) or int(m.group(1)) == 0
        else:
            return first, nullable
        if self.peek() in ("?", "+"):  # lazy or possessive
            self.i += 1
        return first, nullable

    def atom(self) -> tuple[Optional[set], bool]:
        ch = self.take()
        if ch == "(":
            if self.peek() == "?":
                self.i += 1
                kind = self.take()
                if kind == "P" and self.peek() == "<":
                    self.i = self.p.index(">", self.i) + 1
                elif kind in "=!" or (kind == "<" and self.peek() in "=!"):  # lookaround: zero-width
                    if kind == "<":
                        self.i += 1
                    self.alternation()
                    self.close()
                    return set(), True
                elif kind != ":":
                    raise _AnyChar  # flags, conditionals, ...
            got = self.alternation()
            self.close()
            return got
        if ch == "[":
            return self.char_class(), False
        if ch == "\\":
            return self.escape(in_class=False)
        if ch == ".":
            return None, False
        if ch in "^$":
            return set(), True
        return {ch}, False

    def close(self) -> None:
        if self.take() != ")":
            raise _AnyChar

    def escape(self, in_class: bool):
        ch = self.take()
        if ch == "d":
            return set(_DIGITS), False
        if ch == "w":
            return set(_WORD), False  # non-ASCII letters: handled by the full pattern
        if ch == "s":
            return set(_SPACE), False
        if ch in "bBAZ" and not in_class:
            return set(), True
        if ch in _CHAR_ESCAPES:
            return {_CHAR_ESCAPES[ch]}, False
        if ch == "x":
            code = self.p[self.i:self.i + 2]
            self.i += 2
            return {chr(int(code, 16))}, False
        if ch in "DWS":
            return None, False
        if ch.isalnum():
            raise _AnyChar  # back-references, \u, ...: not read here
        return {ch}, False

    def char_class(self) -> Optional[set]:
        negated = self.peek() == "^"
        if negated:
            self.i += 1
        chars: Optional[set] = set()
        first = True
        while True:
            ch = self.take()
            if ch == "]" and not first:
                return None if negated else chars
            first = False
            if ch == "\\":
                got, _ = self.escape(in_class=True)
                if got is None or len(got) != 1:
                    chars = None if chars is None or got is None else chars | got
                    continue
                (ch,) = got
            if self.peek() == "-" and self.p[self.i + 1:self.i + 2] not in ("]", ""):
                self.i += 1
                hi = self.take()
                if hi == "\\":
                    got, _ = self.escape(in_class=True)
                    if got is None or len(got) != 1:
                        raise _AnyChar
                    (hi,) = got
                if chars is not None:
                    chars.update(chr(c) for c in range(ord(ch), ord(hi) + 1))
            elif chars is not None:
                chars.add(ch)


def _first_chars(pattern: str):
    """The characters a regex can start with (a superset), or None for 'any'."""
    reader = _FirstChars(pattern)
    try:
        chars, nullable = reader.alternation()
    except (_AnyChar, ValueError):
        return None
    if chars is None or nullable or reader.i != len(pattern) or not chars:
        return None
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
