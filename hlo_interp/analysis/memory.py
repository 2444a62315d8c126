"""A module's buffers from its PHYSICAL layouts (layout.py: tiles, padding L(n), packing E(n), M(n)
prefixes): the buffers every instruction defines (results that only view or forward their operands
or callees, like bitcast, get-tuple-element, tuple, while or call, define none), their logical and
physical bytes, and the most physical bytes live at once while a computation runs.  No buffer reuse
beyond that liveness: an upper bound on the footprint, not XLA's buffer assignment.
"""
from __future__ import annotations

from itertools import accumulate

from .. import ir, layout
from ..opcodes import opcodes_where
from .calls import SEQUENTIAL_ROLES, ModuleIndex
from .memo import by_shape

# results that only view or forward operands (a loop's state is its operand's; a call's result its
# callee's root); so do the *-done / *-update of an async pair: the buffers of their *-start
_NO_BUFFER = opcodes_where(lambda o: not o.own_buffer)


_BUFFER_KIND: dict[str, int] = {}
_NO_OWNER = frozenset()


def _buffer_kind(op: str) -> int:
    """What buffer_shape does for opcode `op`: 0 no buffer, 1 the instruction's shape, 2 more."""
    if op in _NO_BUFFER or op.endswith(("-done", "-update")):
        return 0
    return 2 if op.endswith("-start") or op == "send" else 1


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
        # name -> the buffers its value lives in: the number of the one it defines, or a view's set
        owners: dict[str, int | frozenset] = {}
        pers: list[dict[int, int]] = []  # per buffer: memory space -> bytes
        totals: list[int] = []  # per buffer: its bytes
        born: list[int] = []
        last: list[int] = []  # the last step using each buffer (steps only grow: no max needed)
        inputs: list[int] = []  # the parameters' buffers, live throughout
        kinds = _BUFFER_KIND
        spaces: set[int] = set()
        sized: dict[int, tuple] = {}  # id(shape) -> (per, total), for shapes the module holds
        for i, ins in enumerate(comp.instructions):
            operands = ins.operands
            for o in operands:
                b = owners.get(o)
                if b.__class__ is int:
                    last[b] = i
                elif b:
                    for x in b:
                        last[x] = i
            op = ins.opcode
            held = False
            if op == "parameter":
                shape = buffer_shape(ins) if with_parameters else None
            elif op in ("call", "conditional"):
                shape = ins.shape
                held = True
            else:
                k = kinds.get(op)
                if k is None:
                    k = kinds[op] = _buffer_kind(op)
                if k == 1:
                    shape = ins.shape
                    held = True
                else:
                    shape = buffer_shape(ins) if k == 2 else None
            if shape is None:
                per = None
            else:
                got = sized.get(id(shape)) if held else None
                if got is None:
                    per = _space_bytes(shape)
                    got = (per, sum(per.values()))
                    spaces.update(per)
                    if held:
                        sized[id(shape)] = got
                per = got[0]
            if per:
                b = owners[ins.name] = len(pers)
                pers.append(per)
                totals.append(got[1])
                last.append(i)
                if op == "parameter":
                    born.append(0)
                    inputs.append(b)
                else:
                    born.append(i)
            elif operands:
                view = set()
                for o in operands:
                    b = owners.get(o)
                    if b.__class__ is int:
                        view.add(b)
                    elif b:
                        view.update(b)
                owners[ins.name] = frozenset(view)
            else:
                owners[ins.name] = _NO_OWNER
        for b in inputs:
            last[b] = n
        transient: dict[int, tuple[dict[int, int], int]] = {}
        mod_comps = self.mod.comps
        for i, _ins, calls in self.mod.calling(comp):
            inner = [self.peak(mod_comps[c], False) for _a, c, role in calls
                     if role in SEQUENTIAL_ROLES and c in mod_comps]
            if inner:
                extra = {sp for d, _t in inner for sp in d}
                transient[i] = ({sp: max(d.get(sp, 0) for d, _t in inner) for sp in extra},
                                max(t for _d, t in inner))
        root = owners.get(comp.root.name)
        for b in ((root,) if root.__class__ is int else root or ()):
            last[b] = n  # the result outlives the computation
        # the bytes live after each step: +size at birth, -size after the last use, summed up
        def live_after(sizes) -> list[int]:
            delta = [0] * (n + 2)
            for s, e, v in zip(born, last, sizes):
                delta[s] += v
                delta[e + 1] -= v
            return list(accumulate(delta[:n + 1]))
        live_total = live_after(totals)
        if len(spaces) == 1:
            live = {sp: live_total for sp in spaces}
        else:
            live = {sp: live_after([per.get(sp, 0) for per in pers]) for sp in sorted(spaces)}
        peaks: dict[int, int] = {}
        for sp, xs in live.items():
            top = max(xs, default=0)
            if top > 0:
                peaks[sp] = top
        peak_total = max(0, max(live_total, default=0))
        # a loop, branch or call adds, at its step, what its computations need at their peak
        for i, (extra, extra_total) in transient.items():
            for sp in set(live) | set(extra):
                now = live[sp][i] if sp in live else 0
                peaks[sp] = max(peaks.get(sp, 0), now + extra.get(sp, 0))
            peak_total = max(peak_total, live_total[i] + extra_total)
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
