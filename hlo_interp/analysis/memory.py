"""A module's buffers from its PHYSICAL layouts (layout.py: tiles, padding L(n), packing E(n), M(n)
prefixes): the buffers every instruction defines (results that only view or forward their operands
or callees, like bitcast, get-tuple-element, tuple, while or call, define none), their logical and
physical bytes, and the most physical bytes live at once while a computation runs.  No buffer reuse
beyond that liveness: an upper bound on the footprint, not XLA's buffer assignment.
"""
from __future__ import annotations

from itertools import accumulate

from .. import ir, layout
from .calls import SEQUENTIAL_ROLES
from .index import ModuleIndex, array_leaves, buffer_shape
from .memo import by_shape


def buffer_leaves(ins: ir.Instruction):
    """The array shapes of the buffers `ins` defines."""
    shape = buffer_shape(ins)
    return [] if shape is None else list(array_leaves(shape))


@by_shape
def space_bytes(shape) -> dict[int, int]:
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
    buffer assignment needs, above it where XLA shares or updates buffers in place.  (Which buffer
    each value lives in and each buffer's last use come from the module's index.)"""

    def __init__(self, mod: ModuleIndex):
        self.mod = mod
        self.memo: dict[str, tuple[dict[int, int], int]] = {}

    def peak(self, comp: ir.Computation, with_parameters: bool) -> tuple[dict[int, int], int]:
        key = f"{comp.name}/{with_parameters}"
        if key in self.memo:
            return self.memo[key]
        self.memo[key] = ({}, 0)  # a computation that (wrongly) calls itself adds nothing more
        x = self.mod.of(comp)
        n = len(comp.instructions)
        instrs = comp.instructions
        # by signature: memory space -> bytes of the buffer each of its instructions defines (None: none)
        pers: list = []
        spaces: set[int] = set()
        for k, shape in zip(x.reps, x.live):
            if shape is None or (not with_parameters and instrs[k].opcode == "parameter"):
                pers.append(None)
            else:
                per = space_bytes(shape)
                spaces.update(per)
                pers.append(per)
        last = list(x.last)
        # the parameters (the inputs) live from the start, and the result to the end
        born_first = [k for k in x.param_positions if x.live[x.sig[k]] is not None] if with_parameters else []
        for b in born_first:
            last[b] = n
        r = x.at.get(comp.root.name)
        for b in (x.owner(r) if r is not None else ()):
            last[b] = n  # the result outlives the computation
        transient: dict[int, tuple[dict[int, int], int]] = {}
        mod_comps = self.mod.comps
        for i, _ins, calls in x.calling:
            inner = [self.peak(mod_comps[c], False) for _a, c, role in calls
                     if role in SEQUENTIAL_ROLES and c in mod_comps]
            if inner:
                extra = {sp for d, _t in inner for sp in d}
                transient[i] = ({sp: max(d.get(sp, 0) for d, _t in inner) for sp in extra},
                                max(t for _d, t in inner))

        # the bytes live after each step: +size at birth, -size after the last use, summed up
        def live_after(by_sig: list) -> list[int]:
            sizes = list(map(by_sig.__getitem__, x.sig))  # by position: the bytes of the buffer it defines, or 0
            delta = sizes + [0, 0]
            for b in born_first:  # a parameter is born at the start
                delta[b] -= sizes[b]
                delta[0] += sizes[b]
            for e, v in zip(last, sizes):
                if v:
                    delta[e + 1] -= v
            return list(accumulate(delta[:n + 1]))
        live_total = live_after([0 if per is None else sum(per.values()) for per in pers])
        if len(spaces) == 1:
            live = {sp: live_total for sp in spaces}
        else:
            live = {sp: live_after([0 if per is None else per.get(sp, 0) for per in pers]) for sp in sorted(spaces)}
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


@by_shape
def buffer_physical_bytes(s: ir.ArrayShape) -> int:
    if s.layout is not None and s.layout.physical_shape is not None:
        return layout.physical_bytes(s.layout.physical_shape)  # P(shape): the buffer's own shape
    return layout.physical_bytes(s)


buffer_logical_bytes = by_shape(layout.logical_bytes)
