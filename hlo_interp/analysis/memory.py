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


def buffer_shape(ins: ir.Instruction):
    """The shape whose array leaves are the buffers `ins` defines (None: it defines none)."""
    op = ins.opcode
    if op in _NO_BUFFER or op.endswith(("-done", "-update")) or ins.shape is None:
        return None
    shape = ins.shape
    if isinstance(shape, ir.TupleShape) and (op.endswith("-start") or op == "send"):
        # (operands, results, context...): the operands are the operand's own buffers; copy-start
        # is (destination, source, context)
        skip = 1 if op == "copy-start" else 0
        shape = ir.TupleShape(tuple(s for k, s in enumerate(shape.elements) if k != skip))
    return shape


@by_shape
def array_leaves(shape) -> tuple:
    """The array leaves of `shape` that are buffers (not tokens), in order (shared: do not change)."""
    return tuple(s for s in layout.leaf_shapes(shape)
                 if isinstance(s, ir.ArrayShape) and s.element_type.is_array_type)


def buffer_leaves(ins: ir.Instruction):
    """The array shapes of the buffers `ins` defines."""
    shape = buffer_shape(ins)
    return [] if shape is None else list(array_leaves(shape))


@by_shape
def _space_bytes(shape) -> dict[int, int]:
    """memory space -> physical bytes of the array leaves of `shape` (shared: do not change)."""
    per: dict[int, int] = {}
    for x in array_leaves(shape):
        sp = layout.memory_space(x)
        per[sp] = per.get(sp, 0) + buffer_physical_bytes(x)
    return per


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
        no_owner = ()
        mod_comps = self.mod.comps
        for i, ins in enumerate(comp.instructions):
            for o in ins.operands:
                for b in owners.get(o, no_owner):
                    if last[b] < i:
                        last[b] = i
            op = ins.opcode
            if op == "parameter":
                shape = buffer_shape(ins) if with_parameters else None
                start = -1
            elif op in ("call", "conditional"):
                shape = ins.shape
                start = i
            else:
                shape = buffer_shape(ins)
                start = i
            per = _space_bytes(shape) if shape is not None else None
            if per:
                owners[ins.name] = (len(sizes),)
                sizes.append(per)
                born.append(start)
                last.append(i if start >= 0 else n)
            elif ins.operands:
                owners[ins.name] = frozenset(b for o in ins.operands for b in owners.get(o, no_owner))
            else:
                owners[ins.name] = no_owner
            calls = callees(ins)
            if calls:
                inner = [self.peak(mod_comps[c], False) for _a, c, role in calls
                         if role in SEQUENTIAL_ROLES and c in mod_comps]
                if inner:
                    spaces = {sp for d, _t in inner for sp in d}
                    transient[i] = ({sp: max(d.get(sp, 0) for d, _t in inner) for sp in spaces},
                                    max(t for _d, t in inner))
        for b in owners.get(comp.root.name, no_owner):
            last[b] = n  # the result outlives the computation
        # sweep: +size at birth, -size after the last use
        delta: dict[int, dict[int, int]] = {}
        for b, per in enumerate(sizes):
            s = born[b]
            if s < 0:
                s = 0
            e = last[b] + 1
            ds = delta.get(s)
            if ds is None:
                ds = delta[s] = {}
            de = delta.get(e)
            if de is None:
                de = delta[e] = {}
            for sp, v in per.items():
                ds[sp] = ds.get(sp, 0) + v
                de[sp] = de.get(sp, 0) - v
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
            if ex is None:
                for sp, v in live.items():
                    if v > peaks.get(sp, 0):
                        peaks[sp] = v
                if live_total > peak_total:
                    peak_total = live_total
                continue
            extra, extra_total = ex
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
