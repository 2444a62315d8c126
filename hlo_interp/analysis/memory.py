"""A module's buffers from its PHYSICAL layouts (layout.py: tiles, padding L(n), packing E(n), M(n)
prefixes): the buffers every instruction defines (results that only view or forward their operands
or callees, like bitcast, get-tuple-element, tuple, while or call, define none), their logical and
physical bytes, and the most physical bytes live at once while a computation runs.  No buffer reuse
beyond that liveness: an upper bound on the footprint, not XLA's buffer assignment.
"""
from __future__ import annotations

from .. import ir, layout
from ..opcodes import opcodes_where
from .calls import SEQUENTIAL_ROLES, ModuleIndex, callees
from .memo import by_shape

# results that only view or forward operands (a loop's state is its operand's; a call's result its
# callee's root); so do the *-done / *-update of an async pair: the buffers of their *-start
_NO_BUFFER = opcodes_where(lambda o: not o.own_buffer)


def buffer_leaves(ins: ir.Instruction):
    """The array shapes of the buffers `ins` defines."""
    op = ins.opcode
    if op in _NO_BUFFER or op.endswith(("-done", "-update")) or ins.shape is None:
        return []
    shape = ins.shape
    if isinstance(shape, ir.TupleShape) and (op.endswith("-start") or op == "send"):
        # (operands, results, context...): the operands are the operand's own buffers; copy-start
        # is (destination, source, context)
        skip = 1 if op == "copy-start" else 0
        shape = ir.TupleShape(tuple(s for k, s in enumerate(shape.elements) if k != skip))
    return [s for s in layout.leaf_shapes(shape) if isinstance(s, ir.ArrayShape) and s.element_type.is_array_type]


class PeakLive:
    """The most physical bytes live at once while a computation runs its instructions in the order
    written (the schedule, in a scheduled module): a buffer lives from the instruction defining it to
    its last use; views (bitcast, get-tuple-element, tuple, while, ...) keep their operands' buffers
    alive; the computation's parameters (its inputs) and its result live throughout; a loop, branch
    or call adds, at that instruction, the peak of the buffers its computations define (loop body
    and condition, or the branches, the larger one).  No other reuse: an estimate of what XLA's
    buffer assignment needs, above it where XLA shares or updates buffers in place."""

    def __init__(self, mod: ModuleIndex):
        self.mod = mod
        self.memo: dict[str, tuple[dict[int, int], int]] = {}

    def peak(self, comp: ir.Computation, with_parameters: bool) -> tuple[dict[int, int], int]:
        key = f"{comp.name}/{with_parameters}"
        if key in self.memo:
            return self.memo[key]
        self.memo[key] = ({}, 0)  # a computation that (wrongly) calls itself adds nothing more
        n = len(comp.instructions)
        owners: dict[str, frozenset] = {}
        sizes: list[dict[int, int]] = []
        born: list[int] = []
        last: list[int] = []
        transient: dict[int, tuple[dict[int, int], int]] = {}
        for i, ins in enumerate(comp.instructions):
            for o in ins.operands:
                for b in owners.get(o, ()):
                    if last[b] < i:
                        last[b] = i
            op = ins.opcode
            if op == "parameter":
                leaves = buffer_leaves(ins) if with_parameters else []
                start = -1
            elif op in ("call", "conditional"):
                leaves = [x for x in layout.leaf_shapes(ins.shape)
                          if isinstance(x, ir.ArrayShape) and x.element_type.is_array_type]
                start = i
            else:
                leaves = buffer_leaves(ins)
                start = i
            if leaves:
                per: dict[int, int] = {}
                for x in leaves:
                    sp = layout.memory_space(x)
                    per[sp] = per.get(sp, 0) + buffer_physical_bytes(x)
                owners[ins.name] = frozenset((len(sizes),))
                sizes.append(per)
                born.append(start)
                last.append(i if start >= 0 else n)
            else:
                owners[ins.name] = frozenset(b for o in ins.operands for b in owners.get(o, ()))
            inner = [self.peak(self.mod.comps[c], False) for _a, c, role in callees(ins)
                     if role in SEQUENTIAL_ROLES and c in self.mod.comps]
            if inner:
                spaces = {sp for d, _t in inner for sp in d}
                transient[i] = ({sp: max(d.get(sp, 0) for d, _t in inner) for sp in spaces},
                                max(t for _d, t in inner))
        for b in owners.get(comp.root.name, ()):
            last[b] = n  # the result outlives the computation
        # sweep: +size at birth, -size after the last use
        delta: dict[int, dict[int, int]] = {}
        for b, per in enumerate(sizes):
            for sp, v in per.items():
                delta.setdefault(max(born[b], 0), {}).setdefault(sp, 0)
                delta[max(born[b], 0)][sp] += v
                delta.setdefault(last[b] + 1, {}).setdefault(sp, 0)
                delta[last[b] + 1][sp] -= v
        live: dict[int, int] = {}
        peaks: dict[int, int] = {}
        peak_total = 0
        live_total = 0
        for i in range(n + 1):
            d = delta.get(i)
            ex = transient.get(i)
            if not d and ex is None:
                continue  # nothing changed since the last step: no new peak
            if d:
                for sp, v in d.items():
                    live[sp] = live.get(sp, 0) + v
                    live_total += v
            extra, extra_total = ex if ex is not None else ({}, 0)
            for sp in set(live) | set(extra):
                peaks[sp] = max(peaks.get(sp, 0), live.get(sp, 0) + extra.get(sp, 0))
            peak_total = max(peak_total, live_total + extra_total)
        self.memo[key] = (peaks, peak_total)
        return peaks, peak_total


def _physical(s: ir.ArrayShape, ins: ir.Instruction) -> int:
    return buffer_physical_bytes(s)


@by_shape
def buffer_physical_bytes(s: ir.ArrayShape) -> int:
    if s.layout is not None and s.layout.physical_shape is not None:
        return layout.physical_bytes(s.layout.physical_shape)  # P(shape): the buffer's own shape
    return layout.physical_bytes(s)


buffer_logical_bytes = by_shape(layout.logical_bytes)
