"""What XLA never computes: a `get-tuple-element` of a `tuple` instruction reads that tuple's operand.

XLA replaces `get-tuple-element(tuple(a, b, ...)), index=i` by the operand itself (TupleSimplifier and
AlgebraicSimplifier::HandleGetTupleElement) before HloDCE removes every instruction that nothing uses
and that has no side effect.  The evaluator already runs only what the root needs (and the
side-effecting instructions: opcodes.py's `side_effect`), so what is dead is decided by who reads what:
after `rewrite(module)` the users of such a get-tuple-element read the tuple's operand directly, and a
tuple read only that way is not evaluated, nor are its other operands.  Example (XLA's
hlo_extractor_test.cc): `tuple.1 = tuple(rng-bit-generator(f32 state), negate)`, only element 1 of
it used; XLA runs no rng-bit-generator, so its state type (which no kernel takes) is no error.

Only the readers change: every instruction stays (a get-tuple-element that is itself the root keeps
its tuple alive, as its value is the same), so names, locations and observers are as written.  A
module without the pattern is returned unchanged (the same object).
"""
from __future__ import annotations

import dataclasses
from typing import Optional

from .. import ir

_GTE = "get-tuple-element"


def rewrite(module: ir.Module) -> ir.Module:
    """The module whose get-tuple-elements of tuple instructions are read through (the same object when
    there are none)."""
    comps = None
    for k, c in enumerate(module.computations):
        r = _forward(c)
        if r is not None:
            if comps is None:
                comps = list(module.computations)
            comps[k] = r
    return module if comps is None else dataclasses.replace(module, computations=comps)


def _forward(comp: ir.Computation) -> Optional[ir.Computation]:
    instrs = comp.instructions
    tuples = {i.name: i for i in instrs if i.opcode == "tuple"}
    if not tuples:
        return None
    through = {}  # get-tuple-element name -> (tuple name, index)
    for i in instrs:
        if i.opcode == _GTE and len(i.operands) == 1 and i.operands[0] in tuples:
            k = i.attrs.get("index")
            if isinstance(k, int) and 0 <= k < len(tuples[i.operands[0]].operands):
                through[i.name] = tuples[i.operands[0]].operands[k]
    if not through:
        return None

    def source(name: str) -> str:
        for _ in range(len(through) + 1):  # gte(tuple(gte(tuple(...)))) chains; a cycle is left as written
            nxt = through.get(name)
            if nxt is None:
                return name
            name = nxt
        return name

    out = []
    changed = False
    for ins in instrs:
        if any(o in through for o in ins.operands):
            ins = dataclasses.replace(ins, operands=[source(o) for o in ins.operands])
            changed = True
        out.append(ins)
    return dataclasses.replace(comp, instructions=out) if changed else None
