"""In-place loop buffers: which while-loop tuple elements the evaluator may update in place.

A while loop whose body writes one slice per iteration into a loop-carried buffer (every
jax.lax.scan / fori_loop that stacks its outputs) would copy the whole buffer in every iteration if
dynamic-update-slice always made a new array: O(iterations x buffer).  XLA updates such buffers in
place; so do we, where it is provably invisible.  Values are otherwise never mutated, so arrays are
shared freely: between tuple elements, with the caller's inputs, with constants (read-only), and as
NumPy views (reshape, bitcast, slice, transpose, broadcast, dynamic-slice may return views).  The
buffer written must therefore be reachable by nothing but the one chain of instructions that
writes it.  The recognition is static, made when the plans are built; running costs nothing more.

Element k of a while loop is updated in place when, in the body computation B (in_place_elements):
  1. B's root is a `tuple` that nothing uses, and B's parameter is used by get-tuple-element
     instructions only (not passed whole to a call, a tuple, ...), exactly one of them, g, with
     index k (every instruction of B counts, reachable or not);
  2. from g, a chain of instructions each of which is the ONLY user (one operand position, once) of
     the previous one, leads to the root tuple at position k (so the chain's result becomes element k
     of the next iteration, and of the loop's result, and nothing else).  Links of the chain:
       dynamic-update-slice, the chain at operand 0: writes the update into its operand in place;
       copy: the value itself (our copy is an identity);
       call / fusion, the chain at operand j: its computation C takes parameter j through the same
         kind of chain (_callee_chain: the parameter's only user, ... ) to C's root: either the root
         itself (then the call's result continues the chain), or the root tuple of C (used by
         nothing) at position m: then every user of the call is a get-tuple-element and exactly one
         has index m; it continues the chain.  C gets its own in-place variant of its plan (C may be
         called elsewhere too, e.g. a `dynamic_update_index_in_dim` computation shared by calls:
         there it stays the ordinary, copying plan);
     and at least one link is a dynamic-update-slice (otherwise there is nothing to gain).
  3. The while kernel copies element k of the loop's initial tuple ONCE, when the loop starts, into a
     new array of its own (the caller's array, a constant, a broadcast view, an array that is also
     another element of the same tuple: none of them is ever written), and runs the in-place variant
     of B (B's ordinary plan is unchanged: another while loop or a call of B gets its own).
Why nothing can observe the writes: by induction over iterations, when an iteration starts the only
reference to the buffer is element k of the carried tuple (true of the fresh copy; the body's
param tuple and the condition also hold the tuple, but in B only g reads element k, and the
condition's value is a pred consumed before the body runs).  In B, every value derived from the
buffer is on the chain, since every link has one user; the updates, start indices and other
operands of the links are not derived from it (it has no other user); so when a link writes, the
array it writes is referenced by no other live value, no view of it exists, and the chain's end is
element k of the next tuple and nothing else of it.  When the loop ends the buffer is handed out and
never written again (each run of the while instruction copies its initial value afresh).  Updates
are written with the same clamped starts and element conversion as the copying kernel: results
are bit-identical.
Observers (hlo_interp.debug) may keep values or read a step's operands after it ran: plans built
with an observer use no in-place update unless it sets allows_in_place (Observer).  The in-place
kernel also falls back to a copy if ever handed an array it cannot write (a read-only one).

The evaluator asks in_place_elements(body) when it builds a while loop's plan, and callee_marks(...) for
the computations an in-place chain goes through; IN_PLACE_LOOPS (evaluator) turns it all off.
"""
from __future__ import annotations

from typing import Any, Optional

from . import ir

DUS = -1  # the mark of a dynamic-update-slice that writes into its operand 0
_MAX_CALL_DEPTH = 8


def _uses(comp: ir.Computation) -> dict[str, list[tuple[ir.Instruction, int]]]:
    """name -> [(user, operand position)], one entry per operand occurrence, in every instruction."""
    out: dict[str, list[tuple[ir.Instruction, int]]] = {}
    for ins in comp.instructions:
        for pos, name in enumerate(ins.operands):
            out.setdefault(name, []).append((ins, pos))
    return out


def _follow(comp: ir.Computation, start: ir.Instruction, uses: dict, comps: dict, memo: dict,
            depth: int) -> tuple[dict, Any, int]:
    """Follow the single-user chain from `start` (2. above).  Returns (marks, end, writes): marks =
    {instruction name: DUS, or the callee parameters (a tuple) a call/fusion passes on}; end = "root" (the chain's last value is the
    root, which nothing uses), ("tuple", m) (it is operand m of the root tuple, once, and nothing else
    uses it or the root), or None (anything else: the chain escapes); writes = dynamic-update-slices
    on the chain, callees included."""
    marks: dict[str, int] = {}
    writes = 0
    cur = start
    root = comp.root
    for _ in range(len(comp.instructions) + 1):
        us = uses.get(cur.name, ())
        if not us:
            return marks, ("root" if cur is root else None), writes
        if len(us) != 1:
            return marks, None, writes
        user, pos = us[0]
        op = user.opcode
        if op == "dynamic-update-slice" and pos == 0:
            marks[user.name] = DUS
            writes += 1
            cur = user
        elif op == "copy":
            cur = user
        elif op == "tuple":
            ok = user is root and not uses.get(user.name)
            return marks, (("tuple", pos) if ok else None), writes
        elif op in ("call", "fusion") and depth < _MAX_CALL_DEPTH:
            cname = user.attrs.get("to_apply" if op == "call" else "calls")
            callee = comps.get(cname) if isinstance(cname, str) else None
            if callee is None or callee is comp:
                return marks, None, writes
            _, end, n = _callee_chain(callee, pos, comps, memo, depth + 1)
            if end is None:
                return marks, None, writes
            if n:
                marks[user.name] = (pos,)
                writes += n
            if end == "root":
                cur = user
                continue
            m = end[1]
            users = uses.get(user.name, ())
            if any(u.opcode != "get-tuple-element" for u, _ in users):
                return marks, None, writes
            picks = [u for u, _ in users if u.attrs.get("index") == m]
            if len(picks) != 1:
                return marks, None, writes
            cur = picks[0]
        else:
            return marks, None, writes
    return marks, None, writes  # pragma: no cover - a chain cannot be longer than the computation


def _callee_chain(comp: ir.Computation, param: int, comps: dict, memo: dict, depth: int) -> tuple:
    """(marks, end, writes) of the chain from parameter `param` of a called computation (_follow)."""
    key = (comp.name, param)
    got = memo.get(key)
    if got is None:
        memo[key] = ({}, None, 0)  # a computation reached again while being analysed: no chain
        ps = [i for i in comp.instructions if i.opcode == "parameter" and i.parameter_number == param]
        got = ({}, None, 0) if len(ps) != 1 else _follow(comp, ps[0], _uses(comp), comps, memo, depth)
        memo[key] = got
    return got


def _merge_marks(marks: dict, more: dict) -> None:
    """Chains are disjoint, but two may go through the same call (as different operands)."""
    for name, v in more.items():
        old = marks.get(name)
        marks[name] = v if old is None or v == DUS else tuple(sorted(set(old) | set(v)))


def in_place_elements(body: ir.Computation, comps: dict) -> Optional[tuple[dict, tuple[int, ...]]]:
    """(marks of the body's in-place variant, the tuple elements it updates in place) of a while body,
    or None when no element qualifies (conditions above)."""
    root = body.root
    params = [i for i in body.instructions if i.opcode == "parameter"]
    if root is None or root.opcode != "tuple" or len(params) != 1:
        return None
    uses = _uses(body)
    if uses.get(root.name):
        return None
    param = params[0]
    gtes: dict[int, list[ir.Instruction]] = {}
    for user, _ in uses.get(param.name, ()):
        if user.opcode != "get-tuple-element":
            return None  # the whole tuple goes somewhere: any element may be read there
        gtes.setdefault(user.attrs.get("index"), []).append(user)
    marks: dict[str, int] = {}
    elements = []
    memo: dict = {}
    for k, gs in sorted((k, gs) for k, gs in gtes.items() if isinstance(k, int)):
        shape = gs[0].shape
        if len(gs) != 1 or not isinstance(shape, ir.ArrayShape) or shape.element_type.dtype is None:
            continue
        m, end, writes = _follow(body, gs[0], uses, comps, memo, 0)
        if end == ("tuple", k) and writes:
            _merge_marks(marks, m)
            elements.append(k)
    if not elements:
        return None
    return marks, tuple(elements)


def callee_marks(comp: ir.Computation, params: tuple, comps: dict) -> dict:
    """The marks of the in-place variant of a called computation that updates its parameters `params`
    in place (in_place_elements verified the chains before marking the caller)."""
    marks: dict = {}
    memo: dict = {}
    for p in params:
        _merge_marks(marks, _callee_chain(comp, p, comps, memo, 0)[0])
    return marks
