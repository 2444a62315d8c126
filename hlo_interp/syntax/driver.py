"""A tight LALR(1) loop over the parse table Lark computes from grammar/hlo.lark.

Lark's own loop is general (interactive parsing, lexer callbacks, error recovery); HLO dumps are
megabytes, so this module runs the same table and the same rule callbacks (the transformer, with
Lark's child filtering) with as little work per token as Python allows.  The grammar stays the
single definition of the syntax: only the driving loop is ours.

A FAST token (lexer.py) stands for a whole instruction or signature: the loop does the reductions
the table calls for on its first token, then takes the nonterminal's goto with the value the
parser builds (_fast_nonterminal), as if the tokens had been read one by one.
"""
from __future__ import annotations

from typing import Any, Iterable

from lark.parsers.lalr_analysis import Shift


class SyntaxErrorAt(Exception):
    """The token the table had no action for, and the terminals it would have accepted."""

    def __init__(self, token, expected: set[str]):
        super().__init__(f"unexpected {token!r}")
        self.token = token
        self.expected = expected


class Driver:
    def __init__(self, lark_instance):
        lalr = lark_instance.parser.parser  # lark.parsers.lalr_parser.LALR_Parser
        table = lalr._parse_table
        callbacks = lalr.parser.callbacks
        self.start_states = table.start_states
        self.end_states = table.end_states
        # state -> {symbol: (is_shift, target state | (origin name, size, callback))}
        self.states: dict[Any, dict[str, tuple]] = {}
        for state, actions in table.states.items():
            row = {}
            for sym, (action, arg) in actions.items():
                if action is Shift:
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
