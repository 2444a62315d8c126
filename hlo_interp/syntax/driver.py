"""A tight LALR(1) loop over the parse table Lark computes from grammar/hlo.lark.

Lark's own loop is general (interactive parsing, lexer callbacks, error recovery); HLO dumps are
megabytes, so this module runs the same table and the same rule callbacks (the transformer, with
Lark's child filtering) with as little work per token as Python allows.  The grammar stays the
single definition of the syntax: only the driving loop is ours.

A FAST token (lexer.py) stands for a whole instruction or signature: the loop does the reductions
the table calls for on its first token, then takes the nonterminal's goto with the value the
parser builds (_fast_nonterminal), as if the tokens had been read one by one.

Start-up: the table ships precomputed (lalr_table.py, written by tools/make_lalr_table.py from Lark's
analysis of the grammar; tests/test_startup.py fails when it no longer matches grammar/hlo.lark), and
Driver.from_table wraps the rule callbacks as Lark's ParseTreeBuilder would (child filtering,
`_rule` inlining, `?rule` single-child expansion, [..] placeholders), so no Lark is imported to parse.
"""
from __future__ import annotations

from typing import Any, Iterable


# Exceptions with the interface of Lark's (the parser reports them as located HloErrors).
class UnexpectedInput(Exception):
    pos_in_stream = None


class UnexpectedToken(UnexpectedInput):
    def __init__(self, token, expected):
        super().__init__(f"unexpected token {token!r}")
        self.token = token
        self.expected = expected
        self.pos_in_stream = getattr(token, "start_pos", None)


class UnexpectedEOF(UnexpectedInput):
    def __init__(self, expected):
        super().__init__("unexpected end of input")
        self.expected = expected


class UnexpectedCharacters(UnexpectedInput):
    def __init__(self, pos_in_stream: int):
        super().__init__("unexpected character")
        self.pos_in_stream = pos_in_stream


class VisitError(Exception):
    def __init__(self, rule, obj, orig_exc):
        super().__init__(f"error in {rule}: {orig_exc}")
        self.orig_exc = orig_exc


class Tree:
    """What a rule without a callback builds (as Lark's Tree: `data`, `children`)."""
    __slots__ = ("data", "children")

    def __init__(self, data: str, children: list):
        self.data = data
        self.children = children

    def __repr__(self) -> str:
        return f"Tree({self.data!r}, {self.children!r})"

    def __eq__(self, other) -> bool:
        return isinstance(other, Tree) and (self.data, self.children) == (other.data, other.children)


def rule_callback(builder, name: str, expand1: bool, child_filter) -> Any:
    """The function a reduction calls with the rule's children, as Lark's ParseTreeBuilder composes
    it: the builder's method `name` (or a Tree), after ExpandSingleChild (`?rule`), after the child
    filter: None, ("lalr", [(index, inline, nones before)], nones after) with placeholders, or
    ("plain", [(index, inline)])."""
    f = getattr(builder, name, None)
    if f is None:
        f = lambda children, _name=name: Tree(_name, children)
    if expand1:
        inner = f

        def f(children, inner=inner):
            return children[0] if len(children) == 1 else inner(children)
    if child_filter is not None:
        kind, include = child_filter[0], child_filter[1]
        node = f
        if kind == "lalr":
            append_none = child_filter[2]

            def f(children, node=node, include=include, append_none=append_none):
                filtered = []
                for i, to_expand, add_none in include:
                    if add_none:
                        filtered += [None] * add_none
                    if to_expand:
                        if filtered:
                            filtered += children[i].children
                        else:
                            filtered = children[i].children
                    else:
                        filtered.append(children[i])
                if append_none:
                    filtered += [None] * append_none
                return node(filtered)
        else:
            def f(children, node=node, include=include):
                filtered = []
                for i, to_expand in include:
                    if to_expand:
                        if filtered:
                            filtered += children[i].children
                        else:
                            filtered = children[i].children
                    else:
                        filtered.append(children[i])
                return node(filtered)
    return f


class SyntaxErrorAt(Exception):
    """The token the table had no action for, and the terminals it would have accepted."""

    def __init__(self, token, expected: set[str]):
        super().__init__(f"unexpected {token!r}")
        self.token = token
        self.expected = expected


# Lark has no public API for its LALR table: Driver.__init__ (the grammar changed since
# tools/make_lalr_table.py ran) and that tool read Lark's internals, as laid out in these versions
# (pyproject.toml pins the same range; tests/test_syntax_internals.py checks the layout).
LARK_VERIFIED = ">=1.2,<2"


class LarkLayoutError(RuntimeError):
    """The installed Lark lays out its parse table differently from the versions this was written for."""


def lark_table(lark_instance):
    """(parse table, rule callbacks, Lark's Shift action) of a Lark LALR instance, after checking the
    layout read here: table.states = {state: {symbol: (Shift, state) | (Reduce, rule)}} with
    rule.origin.name and rule.expansion, table.start_states / end_states = {start rule: state}, and a
    callback per rule.  Raises LarkLayoutError, saying which Lark versions work, when it differs."""
    try:
        import lark
        version = lark.__version__
    except ImportError as e:  # pragma: no cover - lark is a dependency
        raise LarkLayoutError(f"Lark is not installed ({e}): pip install 'lark{LARK_VERIFIED}'") from None
    try:
        from lark.parsers.lalr_analysis import Shift
        lalr = lark_instance.parser.parser
        table = lalr._parse_table
        callbacks = lalr.parser.callbacks
        if not (isinstance(table.start_states, dict) and isinstance(table.end_states, dict)
                and set(table.start_states) == set(table.end_states) and isinstance(table.states, dict)):
            raise TypeError("start_states/end_states/states are not dictionaries keyed alike")
        for actions in table.states.values():
            for sym, (action, arg) in actions.items():
                if action is Shift:
                    if arg not in table.states:
                        raise TypeError(f"a shift on {sym} to an unknown state {arg!r}")
                else:
                    name, _ = arg.origin.name, len(arg.expansion)
                    if not isinstance(name, str) or arg not in callbacks:
                        raise TypeError(f"a reduce on {sym} by a rule without an origin name or a callback")
    except (ImportError, AttributeError, TypeError, ValueError, KeyError) as e:
        raise LarkLayoutError(
            f"Lark {version} lays out its LALR parse table differently from the versions "
            f"hlo_interp/syntax/driver.py reads (lark{LARK_VERIFIED}): {type(e).__name__}: {e}. "
            f"Install a Lark in that range (pip install 'lark{LARK_VERIFIED}').") from None
    return table, callbacks, Shift


class Driver:
    @classmethod
    def from_table(cls, table, builder) -> "Driver":
        """From the precomputed table (module lalr_table) and the object whose methods build the
        rules' values."""
        self = cls.__new__(cls)
        self.start_states = dict(table.START_STATES)
        self.end_states = dict(table.END_STATES)
        reduces = [(False, (origin, size, rule_callback(builder, name, expand1, child_filter)))
                   for origin, size, name, expand1, child_filter in table.RULES]
        self.states = {state: {sym: (True, a) if a >= 0 else reduces[-1 - a] for sym, a in row.items()}
                       for state, row in enumerate(table.STATES)}
        return self

    def __init__(self, lark_instance):
        table, callbacks, shift = lark_table(lark_instance)
        self.start_states = table.start_states
        self.end_states = table.end_states
        # state -> {symbol: (is_shift, target state | (origin name, size, callback))}
        self.states: dict[Any, dict[str, tuple]] = {}
        for state, actions in table.states.items():
            row = {}
            for sym, (action, arg) in actions.items():
                if action is shift:
                    row[str(sym)] = (True, arg)
                else:
                    row[str(sym)] = (False, (str(arg.origin.name), len(arg.expansion), callbacks[arg]))
            self.states[state] = row

    # Set by the parser: nonterminal -> the function that builds its value from a FAST token's.
    fast_builders: dict = {}

    def _fast_nonterminal(self, tok, state_stack: list, value_stack: list, state) -> Any:
        """A FAST token stands for the tokens of one whole nonterminal (tok.goto: an instruction,
        a signature; see lexer.HloLexer._fast_instruction).  Do what the table does on the first
        of those tokens (tok.first_type): the reductions it calls for, up to the point where it
        would be shifted; there, instead, push the nonterminal (its goto) with the value its rule
        builds, as if its tokens had been read."""
        states = self.states
        first = tok.first_type
        row = states[state]
        while True:
            act = row.get(first)
            if act is None:
                raise SyntaxErrorAt(tok, {s for s in row if s.isupper()})
            if act[0]:
                break
            origin, size, callback = act[1]
            if size:
                children = value_stack[-size:]
                del state_stack[-size:]
                del value_stack[-size:]
            else:
                children = []
            value = callback(children)
            state = states[state_stack[-1]][origin][1]
            state_stack.append(state)
            value_stack.append(value)
            row = states[state]
        goto = row.get(tok.goto)
        if goto is None or not goto[0]:
            raise SyntaxErrorAt(tok, {s for s in row if s.isupper()})
        state = goto[1]
        state_stack.append(state)
        value_stack.append(self.fast_builders[tok.goto](tok.value))
        return state

    def parse(self, tokens: Iterable, start: str, end_token) -> Any:
        states = self.states
        state = self.start_states[start]
        end_state = self.end_states[start]
        state_stack = [state]
        value_stack: list = []
        push_state = state_stack.append
        push_value = value_stack.append
        row = states[state]
        for tok in tokens:
            typ = tok.type
            while True:
                act = row.get(typ)
                if act is None:
                    if typ == "FAST":
                        state = self._fast_nonterminal(tok, state_stack, value_stack, state)
                        row = states[state]
                        break
                    raise SyntaxErrorAt(tok, {s for s in row if s.isupper()})
                if act[0]:
                    state = act[1]
                    push_state(state)
                    push_value(tok)
                    row = states[state]
                    break
                origin, size, callback = act[1]
                if size:
                    children = value_stack[-size:]
                    del state_stack[-size:]
                    del value_stack[-size:]
                else:
                    children = []
                value = callback(children)
                state = states[state_stack[-1]][origin][1]
                push_state(state)
                push_value(value)
                row = states[state]
        # end of input
        while True:
            act = row.get("$END")
            if act is None:
                raise SyntaxErrorAt(end_token, {s for s in row if s.isupper()})
            if act[0]:
                raise AssertionError("shift on $END")
            origin, size, callback = act[1]
            if size:
                children = value_stack[-size:]
                del state_stack[-size:]
                del value_stack[-size:]
            else:
                children = []
            value = callback(children)
            state = states[state_stack[-1]][origin][1]
            push_state(state)
            push_value(value)
            if state == end_state:
                return value_stack[-1]
            row = states[state]
