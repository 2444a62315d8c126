"""What a module holds and costs: `module_info(module)` -> ModuleInfo (`hlo info` prints it).

- computations: name, instruction count and kind (entry, fusion, while-body, while-condition,
  conditional-branch, call, reduce-apply, scatter-apply, map-apply, select, comparator, scan-body,
  async, custom-call; `unused` when nothing calls it), with the instructions that call them;
- instruction counts per opcode;
- the signature of the entry (or of `computation=`): parameters and result, with their sizes;
- cost estimates counted as XLA's HloCostAnalysis counts them (analysis/cost.py);
- a memory report from the PHYSICAL layouts, next to the logical sizes: the bytes of every buffer
  an instruction defines, the largest first, the totals per memory space S(n) and the peak live
  bytes (analysis/memory.py).

The analyses live in hlo_interp.analysis; the text and table rendering in info_text.py.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, field
from heapq import nsmallest
from itertools import repeat

from . import ir, layout
from .analysis.calls import SEQUENTIAL_ROLES
from .analysis.cost import Cost, CostAnalysis, cost_of, json_number, total_cost
from .analysis.index import ModuleIndex
from .analysis.memo import by_shape
from .analysis.memory import PeakLive, array_leaves, buffer_logical_bytes, buffer_physical_bytes, buffer_shape
from .diagnostics import HloError
from .diagnostics import format_bytes as human_bytes
from .info_text import sections, to_text
from .records import record

__all__ = ["SCHEMA", "ModuleInfo", "Ranked", "cost_of", "human_bytes", "module_info", "sections", "to_text"]

SCHEMA = "hlo-info/1"

# --------------------------------------------------------------------------------------------------
# Result records


@record
class ComputationInfo:
    name: str
    kind: str
    instructions: int
    callers: list[str] = field(default_factory=list)  # "instruction (computation)"


@record
class Value:
    """A parameter or result: its shape as written and its sizes."""
    name: str
    shape: str
    logical_bytes: int
    physical_bytes: int
    memory_spaces: list[int]
    number: int | None = None


@record
class InstructionCost:
    name: str
    opcode: str
    flops: float
    transcendentals: float
    bytes_accessed: float


@record
class Buffer:
    name: str
    computation: str
    opcode: str
    shape: str
    logical_bytes: int
    physical_bytes: int
    memory_space: int  # S(n); -1 when the arrays of a tuple result live in different spaces


@record
class SpaceTotal:
    memory_space: int
    name: str
    buffers: int
    logical_bytes: int
    physical_bytes: int
    peak_bytes: int = 0  # the most physical bytes live at once (see `_peak_live`)


class Ranked(Sequence):
    """Rows in their report order, made and ordered only when asked: `rows[:10]` orders and makes
    ten (a report shows the top few of 100,000 instructions or buffers), len() costs nothing,
    iterating makes them all.  The rows are instructions of the computations indexed in `tables`
    (analysis.index.ComputationIndex), in groups whose members share one value (the cost of their
    signature, the sizes of their buffers): a group is [value, {computation number: signature
    numbers}, number of rows].  `rank(value)` orders the groups, and within equal ranks the rows go
    by name, then by computation number and position; make(computation number, position) makes one."""

    def __init__(self, groups: list, rank, tables: list, make):
        self._groups = groups
        self._rank = rank
        self._tables = tables
        self._make = make
        self._n = sum(g[2] for g in groups)
        self._done: list = []  # the first rows, made
        self._all = False

    def __len__(self) -> int:
        return self._n

    def _first(self, k: int) -> list:
        if self._all or k <= len(self._done):
            return self._done
        out: list = []
        groups = sorted(self._groups, key=lambda g: self._rank(g[0]))
        i = 0
        while i < len(groups) and len(out) < k:
            rank = self._rank(groups[i][0])
            same = [groups[i]]
            i += 1
            while i < len(groups) and self._rank(groups[i][0]) == rank:
                same.append(groups[i])
                i += 1
            wanted: dict[int, set] = {}
            for g in same:
                for ci, sigs in g[1].items():
                    wanted.setdefault(ci, set()).update(sigs)
            need = k - len(out)
            rows = None
            if need < sum(g[2] for g in same):
                rows = self._smallest(wanted, need)
            if rows is None:
                rows = sorted(self._rows(wanted, None))[:need]
            out.extend(self._make(ci, p) for _name, ci, p in rows)
        self._done = out
        self._all = len(out) == self._n
        return out

    def _rows(self, wanted: dict, bound) -> list:
        """(name, computation number, position) of the members, those named `bound` or less when given."""
        out: list = []
        for ci, sigs in wanted.items():
            x = self._tables[ci]
            names, sig = x.names(), x.sig
            if bound is None:
                at = x.positions(sigs)
            else:
                at = [p for p in x.named_at_most(bound) if sig[p] in sigs]
            out.extend(zip(map(names.__getitem__, at), repeat(ci), at))
        return out

    def _smallest(self, wanted: dict, need: int):
        """The first `need` rows of the members: those named at most the need-th smallest name of a
        sample of them (no more than the need-th smallest of all), ordered; None when the sample is
        too small to tell."""
        sample: list = []
        for ci, sigs in wanted.items():
            x = self._tables[ci]
            names, sig = x.names(), x.sig
            step = max(1, len(sig) // 1024)
            sample.extend(names[p] for p in range(0, len(sig), step) if sig[p] in sigs)
        if len(sample) < need:
            return None
        return sorted(self._rows(wanted, nsmallest(need, sample)[-1]))[:need]

    def __getitem__(self, i):
        if isinstance(i, slice):
            start, stop, step = i.indices(self._n)
            if step != 1:
                return self._first(self._n)[i]
            return self._first(stop)[start:stop] if start < stop else []
        if i < 0:
            i += self._n
        if not 0 <= i < self._n:
            raise IndexError(i)
        return self._first(i + 1)[i]

    def __iter__(self):
        return iter(self._first(self._n))

    def __repr__(self) -> str:
        return f"Ranked({self._n} rows)"


@record
class ModuleInfo:
    module: str
    computation: str  # the computation the signature, cost and memory report are about
    computations: list[ComputationInfo]
    opcode_counts: dict[str, int]  # over every computation, or over `computation` when one was asked
    instruction_count: int
    parameters: list[Value]
    result: Value
    cost: Cost
    unknown_cost: list[str]  # instructions whose cost XLA does not know (custom calls)
    instruction_costs: Sequence[InstructionCost]  # the computation's own instructions, costliest first (Ranked)
    buffers: Sequence[Buffer]  # largest physical size first (Ranked)
    memory_spaces: list[SpaceTotal]
    filename: str | None = None
    scoped: bool = False  # opcode counts are of `computation` only (it was asked for)
    peak_bytes: int = 0  # the most physical bytes live at once, all memory spaces together

    @property
    def physical_bytes(self) -> int:
        return sum(s.physical_bytes for s in self.memory_spaces)

    @property
    def logical_bytes(self) -> int:
        return sum(s.logical_bytes for s in self.memory_spaces)

    def to_dict(self, top: int | None = None) -> dict:
        cut = (lambda xs: xs) if top is None else (lambda xs: xs[:top])
        return {
            "schema": SCHEMA,
            "module": self.module,
            "file": self.filename,
            "computation": self.computation,
            "computations": [asdict(c) for c in self.computations],
            "instruction_count": self.instruction_count,
            "opcode_counts": dict(self.opcode_counts),
            "parameters": [asdict(p) for p in self.parameters],
            "result": asdict(self.result),
            "cost": {**self.cost.as_dict(), "unknown": list(self.unknown_cost),
                     "top": [{**asdict(c), "flops": json_number(c.flops), "transcendentals": json_number(c.transcendentals),
                              "bytes_accessed": json_number(c.bytes_accessed)} for c in cut(self.instruction_costs)]},
            "memory": {
                "logical_bytes": self.logical_bytes,
                "physical_bytes": self.physical_bytes,
                "peak_bytes": self.peak_bytes,
                "buffer_count": len(self.buffers),
                "memory_spaces": [asdict(s) for s in self.memory_spaces],
                "buffers": [asdict(b) for b in cut(self.buffers)],
            },
        }

    def to_json(self, top: int | None = None, indent: int | None = 2) -> str:
        import json
        return json.dumps(self.to_dict(top), indent=indent)


# --------------------------------------------------------------------------------------------------
# The report

def module_info(module: ir.Module, computation: str | None = None) -> ModuleInfo:
    """Everything `hlo info` shows, for the entry computation or the named one."""
    with ir.gc_paused():
        return _module_info(module, computation)


def _module_info(module: ir.Module, computation: str | None) -> ModuleInfo:
    mod = ModuleIndex(module)
    if computation is not None and computation not in mod.comps:
        names = ", ".join(c.name for c in module.computations[:20])
        raise HloError(f"no computation named '{computation}' in module {module.name} (it has: {names}"
                       f"{', ...' if len(module.computations) > 20 else ''})", filename=module.filename)
    comp = module.entry if computation is None else mod.comps[computation]
    x = mod.of(comp)

    comps = [ComputationInfo(c.name, mod.kinds(c.name), len(c.instructions),
                             [f"{i.name} ({cn})" for i, cn, _r in mod.callers[c.name]])
             for c in module.computations]
    counts: dict[str, int] = {}
    for c in (module.computations if computation is None else [comp]):
        instrs = c.instructions
        xc = mod.of(c)
        for k, n in zip(xc.reps, xc.counts()):
            op = instrs[k].opcode
            counts[op] = counts.get(op, 0) + n
    counts = dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))

    params = [_value(p.name, p.shape, p.parameter_number) for p in mod.parameters(comp)]
    result = _value(comp.root.name, comp.root.shape)

    # the cost, and the instructions that cost something, grouped by their signature's (shared) cost
    analysis = CostAnalysis(mod)
    costs = analysis.signature_costs(comp)
    total = total_cost(costs, x)
    costly: dict[int, list] = {}  # id(cost) -> [cost, {0: [signatures]}, instructions]
    for s, (c, n) in enumerate(zip(costs, x.counts())):
        if c.flops or c.transcendentals or c.bytes_accessed:
            g = costly.get(id(c))
            if g is None:
                g = costly[id(c)] = [c, {0: []}, 0]
            g[1][0].append(s)
            g[2] += n

    # the buffers of the computation and of the computations it runs in sequence (loops, branches,
    # calls, async bodies), not of fused or reducer computations, whose values never reach memory
    order, seen, todo = [], {comp.name}, [comp]
    while todo:
        c = todo.pop(0)
        order.append(c)
        for _k, _ins, calls in mod.calling(c):
            for _attr, n, role in calls:
                if role in SEQUENTIAL_ROLES and n in mod.comps and n not in seen:
                    seen.add(n)
                    todo.append(mod.comps[n])
    indexes = [mod.of(c) for c in order]
    # buffers grouped by their (shared) sizes: id(sizes) -> [sizes, {computation number: signatures},
    # buffers]; per computation of `order`, the sizes of each signature's buffers (None: it has none)
    sized: dict[int, list] = {}
    sizes_by_sig: list[list] = []
    for ci, c in enumerate(order):
        instrs = c.instructions
        xc = indexes[ci]
        sizes_of: list = []
        sizes_by_sig.append(sizes_of)
        for s, (k, n) in enumerate(zip(xc.reps, xc.counts())):
            ins = instrs[k]
            sizes = None
            if ins.opcode != "parameter" or c is comp:  # a loop's, branch's or callee's parameter is its caller's buffer
                shape = buffer_shape(ins)
                if shape is not None:
                    sizes = _buffer_sizes(shape)
                    if not sizes[0]:
                        sizes = None
            sizes_of.append(sizes)
            if sizes is None:
                continue
            g = sized.get(id(sizes))
            if g is None:
                g = sized[id(sizes)] = [sizes, {}, 0]
            g[1].setdefault(ci, []).append(s)
            g[2] += n
    spaces: dict[int, list[int]] = {}
    for (per_leaf, _lg, _ph, _sp), _m, count in sized.values():
        for sp, p, lg in per_leaf:
            t = spaces.get(sp)
            if t is None:
                t = spaces[sp] = [0, 0, 0]
            t[0] += count
            t[1] += lg * count
            t[2] += p * count
    peaks, peak_total = PeakLive(mod).peak(comp, with_parameters=True)
    space_totals = [SpaceTotal(s, layout.memory_space_name(s), *spaces[s], peaks.get(s, 0)) for s in sorted(spaces)]

    def cost_row(_ci: int, k: int) -> InstructionCost:
        ins = comp.instructions[k]
        c = costs[x.sig[k]]
        return InstructionCost(ins.name, ins.opcode, c.flops, c.transcendentals, c.bytes_accessed)

    def buffer_row(ci: int, k: int) -> Buffer:
        c = order[ci]
        ins = c.instructions[k]
        sizes = sizes_by_sig[ci][indexes[ci].sig[k]]
        return Buffer(ins.name, c.name, ins.opcode, _shape_text(ins.shape), sizes[1], sizes[2], sizes[3])

    return ModuleInfo(
        module=module.name, computation=comp.name, computations=comps, opcode_counts=counts,
        instruction_count=sum(counts.values()), parameters=params, result=result, cost=total,
        unknown_cost=list(analysis.unknown),
        instruction_costs=Ranked(list(costly.values()), _cost_rank, [x], cost_row),
        buffers=Ranked(list(sized.values()), _buffer_rank, indexes, buffer_row),
        memory_spaces=space_totals, filename=module.filename, scoped=computation is not None,
        peak_bytes=peak_total)


def _cost_rank(c: Cost) -> tuple:
    return -(c.flops + c.transcendentals), -c.bytes_accessed


def _buffer_rank(sizes) -> tuple:
    return -sizes[2], -sizes[1]


@by_shape
def _buffer_sizes(shape):
    """((memory space, physical, logical bytes) per buffer, logical total, physical total, the one
    memory space or -1) of the buffers that are the array leaves of `shape`."""
    leaves = array_leaves(shape)
    phys = [buffer_physical_bytes(s) for s in leaves]
    logi = [buffer_logical_bytes(s) for s in leaves]
    ms = [layout.memory_space(s) for s in leaves]
    return (tuple(zip(ms, phys, logi)), sum(logi), sum(phys),
            (ms[0] if len(set(ms)) == 1 else -1) if ms else -1)


@by_shape
def _shape_text(shape) -> str:
    return str(shape)


def _value(name: str, shape, number: int | None = None) -> Value:
    leaves = [s for s in layout.leaf_shapes(shape) if isinstance(s, ir.ArrayShape)]
    spaces = sorted({layout.memory_space(s) for s in leaves if s.element_type.is_array_type})
    return Value(name, _shape_text(shape), layout.logical_bytes(shape), layout.physical_bytes(shape),
                 spaces, number)
