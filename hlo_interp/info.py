"""What a module holds and costs: `module_info(module)` -> ModuleInfo (`hlo info` prints it).

- computations: name, instruction count and kind (entry, fusion, while-body, while-condition,
  conditional-branch, call, reduce-apply, scatter-apply, map-apply, select, comparator, scan-body,
  async, custom-call; `unused` when nothing calls it), with the instructions that call them;
- instruction counts per opcode;
- the signature of the entry (or of `computation=`): parameters and result, with their sizes;
- cost estimates counted as XLA's HloCostAnalysis counts them (xla/service/hlo_cost_analysis.cc):
  flops (dot and convolution 2 per multiply-add over the taps that read real input, elementwise 1
  per element), transcendentals apart (exp, log, logistic, power, sqrt, cbrt, rsqrt, tan(h), sin,
  cos, expm1, log1p, atan2, erf, and on XLA:CPU the hyperbolic and inverse trigonometric ones; rng 1
  per element), reductions as the reducer's cost times the number of reduction steps, fusions as
  their fused instructions, while loops as one iteration of body and condition, conditionals as
  their costliest branch, async `*-start` as the wrapped work; bytes accessed as XLA counts them
  (each array of the result plus the operands, with its rules for slices, gathers, scatters,
  dynamic-update-slice, fusion parameters and nested fusions, bitcasts, tuples, ...), at XLA:CPU's
  shape sizes (ShapeUtil::ByteSizeOf: E(n) packing counts, tiles do not, a tuple operand is its
  8-byte-per-element index table, a dynamic array carries 4 bytes per dimension).  Checked against
  XLA:CPU's own analysis on 1432 modules: equal (XLA sums in float32, so huge totals differ in the
  last float32 digit).  Custom calls have no known cost: XLA marks them -1; here they count 0 and
  are listed in `unknown`.
- a memory report from the PHYSICAL layouts (layout.py: tiles, padding L(n), packing E(n), M(n)
  prefixes), next to the logical sizes: the bytes of every buffer an instruction defines (results
  that only view or forward their operands or callees, like bitcast, get-tuple-element, tuple,
  while or call, define none), the largest first, and the totals per memory space S(n).  The
  totals add buffers up without reuse (no liveness analysis): an upper bound on the footprint, not
  XLA's buffer assignment.
"""
from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass, field

from . import ir, layout
from .diagnostics import HloError
from .opcodes import OPCODES as _OPCODES
from .opcodes import opcodes_where as _opcodes_where

__all__ = ["SCHEMA", "ModuleInfo", "cost_of", "human_bytes", "module_info", "to_text"]

SCHEMA = "hlo-info/1"
POINTER_SIZE = 8  # XLA:CPU's sizeof(void*): a tuple's index table entry, an opaque value

# --------------------------------------------------------------------------------------------------
# Result records


@dataclass
class ComputationInfo:
    name: str
    kind: str
    instructions: int
    callers: list[str] = field(default_factory=list)  # "instruction (computation)"


@dataclass
class Value:
    """A parameter or result: its shape as written and its sizes."""
    name: str
    shape: str
    logical_bytes: int
    physical_bytes: int
    memory_spaces: list[int]
    number: int | None = None


@dataclass
class Cost:
    flops: float = 0.0
    transcendentals: float = 0.0
    bytes_accessed: float = 0.0

    def add(self, other: Cost, times: float = 1.0, with_bytes: bool = True) -> None:
        self.flops += other.flops * times
        self.transcendentals += other.transcendentals * times
        if with_bytes:
            self.bytes_accessed += other.bytes_accessed * times

    def as_dict(self) -> dict:
        return {"flops": _num(self.flops), "transcendentals": _num(self.transcendentals),
                "bytes_accessed": _num(self.bytes_accessed)}


@dataclass
class InstructionCost:
    name: str
    opcode: str
    flops: float
    transcendentals: float
    bytes_accessed: float


@dataclass
class Buffer:
    name: str
    computation: str
    opcode: str
    shape: str
    logical_bytes: int
    physical_bytes: int
    memory_space: int  # S(n); -1 when the arrays of a tuple result live in different spaces


@dataclass
class SpaceTotal:
    memory_space: int
    name: str
    buffers: int
    logical_bytes: int
    physical_bytes: int
    peak_bytes: int = 0  # the most physical bytes live at once (see `_peak_live`)


@dataclass
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
    instruction_costs: list[InstructionCost]  # the computation's own instructions, costliest first
    buffers: list[Buffer]  # largest physical size first
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
                     "top": [{**asdict(c), "flops": _num(c.flops), "transcendentals": _num(c.transcendentals),
                              "bytes_accessed": _num(c.bytes_accessed)} for c in cut(self.instruction_costs)]},
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
        return json.dumps(self.to_dict(top), indent=indent)


def _num(x: float):
    """Whole numbers as ints in JSON (XLA's costs are whole except a few halves)."""
    return int(x) if float(x).is_integer() else x


# --------------------------------------------------------------------------------------------------
# Call graph

# attribute -> the role of the called computation; reducer-like `to_apply` depends on the opcode
_ROLE_BY_ATTR = {"calls": None, "condition": "while-condition", "body": "while-body",
                 "true_computation": "conditional-branch", "false_computation": "conditional-branch",
                 "branch_computations": "conditional-branch", "select": "select",
                 "scatter": "scatter-apply", "called_computations": "custom-call", "to_apply": None}
_TO_APPLY_ROLE = {"reduce": "reduce-apply", "reduce-window": "reduce-apply", "all-reduce": "reduce-apply",
                  "all-reduce-start": "reduce-apply", "reduce-scatter": "reduce-apply",
                  "collective-reduce": "reduce-apply", "scatter": "scatter-apply", "map": "map-apply",
                  "sort": "comparator", "topk": "comparator", "call": "call", "scan": "scan-body",
                  "custom-call": "custom-call"}
# roles whose computation runs as a sequence of real instructions (its results are buffers); an
# async computation's result is the buffer its *-start holds, counted there
_SEQUENTIAL = {"entry", "while-body", "while-condition", "conditional-branch", "call"}


def _callees(ins: ir.Instruction):
    """(attribute, computation name, role) for every computation `ins` calls."""
    if ins.attrs.keys().isdisjoint(_ROLE_BY_ATTR):
        return ()  # most instructions call nothing: no generator to start
    return list(_callees_of(ins))


def _callees_of(ins: ir.Instruction):
    base = ins.opcode
    for attr, role in _ROLE_BY_ATTR.items():
        v = ins.attrs.get(attr)
        if v is None:
            continue
        names = v if isinstance(v, tuple) else (v,)
        if attr == "calls":
            role = "fusion" if base == "fusion" else "async"
        elif attr == "to_apply":
            role = _TO_APPLY_ROLE.get(base, "to-apply")
            if base.endswith(("-start", "-update", "-done")) and role == "to-apply":
                role = _TO_APPLY_ROLE.get(base.rsplit("-", 1)[0], "to-apply")
        for n in names:
            if isinstance(n, str):
                yield attr, n, role


def _error(where, message: str) -> HloError:
    loc = getattr(where, "loc", None)
    if loc is not None:
        return HloError(message, filename=loc.filename, line=loc.line, column=loc.column,
                        source_line=loc.source_line)
    return HloError(message)


class _Module:
    """Name tables of a module: computations by name, instructions by name per computation."""

    def __init__(self, m: ir.Module):
        self.m = m
        self.comps = {c.name: c for c in m.computations}
        self._by_name: dict[str, dict[str, ir.Instruction]] = {}
        self.callers: dict[str, list[tuple[ir.Instruction, str, str]]] = {c.name: [] for c in m.computations}
        for c in m.computations:
            for ins in c.instructions:
                for _attr, n, role in _callees(ins):
                    if n in self.callers:
                        self.callers[n].append((ins, c.name, role))

    def ins(self, comp: ir.Computation) -> dict[str, ir.Instruction]:
        t = self._by_name.get(comp.name)
        if t is None:
            t = self._by_name[comp.name] = {i.name: i for i in comp.instructions}
        return t

    def operand_shapes(self, comp: ir.Computation, ins: ir.Instruction) -> list:
        t = self.ins(comp)
        out = []
        for k, n in enumerate(ins.operands):
            o = t.get(n)
            if o is not None and o.shape is not None:
                out.append(o.shape)
            elif ins.operand_shapes and k < len(ins.operand_shapes) and ins.operand_shapes[k] is not None:
                out.append(ins.operand_shapes[k])
            else:
                raise _error(ins, f"operand {n} of {ins.name} is not defined in computation {comp.name}")
        return out

    def comp(self, name: str, ins: ir.Instruction) -> ir.Computation:
        c = self.comps.get(name)
        if c is None:
            raise _error(ins, f"{ins.name} calls computation {name}, which the module does not define")
        return c

    def kinds(self, name: str) -> str:
        if self.comps[name].is_entry:
            return "entry"
        roles = []
        for _ins, _c, role in self.callers[name]:
            if role not in roles:
                roles.append(role)
        return ",".join(roles) if roles else "unused"


# --------------------------------------------------------------------------------------------------
# XLA's HloCostAnalysis rules

# The table's cost classes: ops HloCostAnalysis counts as one flop (or transcendental) per result
# element (XLA:CPU counts cosh, sinh, acos, ... as transcendentals too: measured, 1 per element);
# ops with no work and no memory traffic.
_TRANSCENDENTAL = _opcodes_where(lambda o: o.transcendental)
_ELEMENTWISE = _opcodes_where(lambda o: o.cost == "elementwise")
_FREE = _opcodes_where(lambda o: o.cost == "free")


def _elements(shape) -> int:
    if isinstance(shape, ir.ArrayShape):
        return shape.num_elements()
    return 0


def _elements_recursive(shape) -> int:
    return sum(_elements(s) for s in layout.leaf_shapes(shape) if isinstance(s, ir.ArrayShape))


def _by_shape(fn):
    """fn(shape), remembered per shape object: the parser hands the same object to every instruction
    written with the same shape text, and a module repeats a few shapes thousands of times.  (By
    identity: hashing a shape dataclass costs about as much as the functions cached here.)"""
    cache: dict = {}

    def cached(shape):
        got = cache.get(id(shape))
        if got is not None and got[0] is shape:
            return got[1]
        if len(cache) > 65536:
            cache.clear()
        v = fn(shape)
        cache[id(shape)] = (shape, v)  # holding the shape keeps its id from being reused
        return v
    cached.__doc__ = fn.__doc__
    cached.__wrapped__ = fn
    return cached


@_by_shape
def shape_size(shape) -> int:
    """XLA's shape size for costs (ShapeUtil::ByteSizeOf with 8-byte pointers): elements x element
    size (E(n) packing counts; tiles do not), a tuple its index table, a token 0, opaque a pointer."""
    if isinstance(shape, ir.TupleShape):
        return POINTER_SIZE * len(shape.elements)
    if isinstance(shape, ir.BufferShape):
        return shape_size(shape.element)
    k = shape.element_type.kind
    if k == "token":
        return 0
    if k == "opaque":
        return POINTER_SIZE
    n = -(-shape.num_elements() * layout.storage_bits(shape) // 8)
    if any(shape.dynamic):
        n += 4 * shape.rank  # XLA:CPU keeps a dynamic array's sizes (s32 each) with its data
    return n


def _leaves_size(shape) -> int:
    if isinstance(shape, ir.TupleShape):
        return sum(_leaves_size(s) for s in shape.elements)
    return shape_size(shape)


def _leaf_paths(shape, prefix=()):
    if isinstance(shape, ir.TupleShape):
        for i, e in enumerate(shape.elements):
            yield from _leaf_paths(e, prefix + (i,))
    else:
        yield prefix


def _first_array(shape):
    return shape.elements[0] if isinstance(shape, ir.TupleShape) else shape


def _log2_floor(n: int) -> int:
    return max(n, 1).bit_length() - 1


def _log2_ceil(n: int) -> int:
    return 0 if n <= 1 else (n - 1).bit_length()


def _transpose_is_bitcast(src: ir.ArrayShape, dst: ir.ArrayShape, dims) -> bool:
    """XLA's IsEffectiveBitcast for a transpose: the result walks memory in the operand's order
    (dimensions of size 1 included, as XLA checks them), with the same tiles and element size."""
    if not (isinstance(src, ir.ArrayShape) and isinstance(dst, ir.ArrayShape)):
        return False
    ls, ld = src.layout, dst.layout
    if (ls.tiles if ls else ()) != (ld.tiles if ld else ()) or \
            layout.storage_bits(src) != layout.storage_bits(dst):
        return False
    in_m2m = tuple(reversed(layout.major_to_minor(src)))
    out_m2m = tuple(reversed(layout.major_to_minor(dst)))
    # the result's dimension i is the operand's dims[i]
    return tuple(dims[d] for d in out_m2m) == in_m2m


class _CostAnalysis:
    def __init__(self, mod: _Module):
        self.mod = mod
        self.memo: dict[str, Cost] = {}
        self.unknown: list[str] = []
        self._active: set[str] = set()

    # one computation: the sum of its instructions' costs
    def computation(self, comp: ir.Computation) -> Cost:
        got = self.memo.get(comp.name)
        if got is not None:
            return got
        if comp.name in self._active:
            raise _error(comp, f"computation {comp.name} calls itself")
        self._active.add(comp.name)
        total = Cost()
        for ins in comp.instructions:
            total.add(self.instruction(comp, ins))
        self._active.discard(comp.name)
        self.memo[comp.name] = total
        return total

    def _sub(self, ins: ir.Instruction, attr: str) -> Cost:
        return self.computation(self.mod.comp(ins.attrs[attr], ins))

    def instruction(self, comp: ir.Computation, ins: ir.Instruction) -> Cost:
        try:
            return self._instruction(comp, ins)
        except (IndexError, KeyError, TypeError, AttributeError, ValueError) as e:
            # an instruction whose shapes or attributes do not fit its opcode (hlo check says more)
            raise _error(ins, f"cannot estimate the cost of {ins.name} ({ins.opcode}): its operands or "
                              f"attributes do not fit the opcode ({type(e).__name__}: {e}); "
                              f"`hlo check` tells what is wrong") from None

    def _instruction(self, comp: ir.Computation, ins: ir.Instruction) -> Cost:
        op = ins.opcode
        shape = ins.shape
        if op in _FREE:
            return Cost()
        ops = self.mod.operand_shapes(comp, ins)
        if op not in _OPCODES:
            from .opcodes import split_async
            base, suffix = split_async(op)
            if suffix == "-start" and isinstance(shape, ir.TupleShape) and len(shape.elements) > 1:
                # `add-start` sugar: an async-start of a computation holding the wrapped op alone,
                # which costs what that op costs (its parameters nothing)
                inner = ir.Instruction(ins.name, base, shape.elements[1], list(ins.operands), dict(ins.attrs),
                                       loc=ins.loc)
                return self._instruction(comp, inner)
        # XLA's default: the result's arrays (each leaf of a tuple result) plus the operands as they
        # are (a tuple operand is its index table)
        c = Cost(bytes_accessed=_leaves_size(shape) + sum(shape_size(s) for s in ops))
        out_n = _elements(shape)
        a = ins.attrs
        if op in _ELEMENTWISE:
            if op in _TRANSCENDENTAL:
                c.transcendentals = out_n
            else:
                c.flops = out_n
        elif op == "transpose":
            if _transpose_is_bitcast(ops[0], shape, a.get("dimensions", ())):
                return Cost()
        elif op == "slice":
            c.bytes_accessed = 2 * shape_size(shape)
        elif op == "dynamic-slice":
            c.bytes_accessed = 2 * shape_size(shape) + (shape_size(ops[1]) if len(ops) > 1 else 0)
        elif op == "dynamic-update-slice":
            c.bytes_accessed = 2 * shape_size(ops[1]) + (shape_size(ops[2]) if len(ops) > 2 else 0)
        elif op == "tuple":
            c.bytes_accessed = shape_size(shape)
        elif op in ("dot", "scaled-dot", "ragged-dot"):
            width = 1
            lhs = ops[0]
            for d in a.get("lhs_contracting_dims", ()) or ():
                width *= lhs.dims[d]
            n = out_n
            if op == "ragged-dot" and a.get("rhs_group_dims"):
                # XLA drops as many leading result dimensions as the rhs has group dimensions
                n = math.prod(shape.dims[len(a["rhs_group_dims"]):])
            c.flops = 2 * n * width
        elif op == "scan":
            # XLA counts the body once (flops and transcendentals; bytes as any instruction)
            c.add(self._sub(ins, "to_apply"), 1, with_bytes=False)
        elif op == "infeed":
            c.bytes_accessed = _leaves_size(shape)  # what it writes; its token operand is nothing
        elif op == "outfeed":
            c.bytes_accessed = sum(_leaves_size(s) for s in ops)
        elif op == "convolution":
            c.flops = _conv_flops(ins, ops[0], ops[1], shape)
        elif op == "fft":
            log_factors = 1
            for n in a.get("fft_length", ()):
                log_factors *= _log2_floor(n)
            c.flops = 2 * 4 * log_factors * _elements(_first_array(ops[0]))
        elif op == "reduce":
            sub = self._sub(ins, "to_apply")
            c.add(sub, _elements(ops[0]) - _elements(_first_array(shape)), with_bytes=False)
        elif op == "reduce-window":
            c.add(self._sub(ins, "to_apply"), _reduce_window_count(ins, ops, shape), with_bytes=False)
        elif op == "select-and-scatter":
            window = a.get("window") or ir.Window(())
            wn = math.prod(d.size for d in window.dims)
            src_n = _elements(ops[1])
            c.add(self._sub(ins, "select"), src_n * (wn - 1), with_bytes=False)
            c.add(self._sub(ins, "scatter"), src_n, with_bytes=False)
        elif op == "map":
            c.add(self._sub(ins, "to_apply"), out_n, with_bytes=False)
        elif op == "sort":
            n = _elements(ops[0])
            c.flops = n * _log2_ceil(n)
        elif op == "while":
            c = Cost()
            c.add(self._sub(ins, "body"))
            c.add(self._sub(ins, "condition"))
        elif op == "conditional":
            names = a.get("branch_computations") or tuple(
                a[k] for k in ("true_computation", "false_computation") if k in a)
            costs = [self.computation(self.mod.comp(n, ins)) for n in names]
            c = Cost(max((x.flops for x in costs), default=0.0),
                     max((x.transcendentals for x in costs), default=0.0),
                     max((x.bytes_accessed for x in costs), default=0.0))
        elif op == "call":
            c = Cost()
            c.add(self._sub(ins, "to_apply"))
        elif op == "fusion":
            c = self._fusion(ins, ops)
        elif op == "custom-call":
            self.unknown.append(ins.name)
            return Cost()
        elif op == "gather":
            c.bytes_accessed = 2 * shape_size(shape) + shape_size(ops[1])
        elif op == "scatter":
            n = len(ops) // 2
            upd = sum(shape_size(s) for s in ops[n + 1:])
            c.bytes_accessed = 3 * upd + shape_size(ops[n])
            c.add(self._sub(ins, "to_apply"), _elements(ops[n + 1]), with_bytes=False)
        elif op == "rng":
            c.transcendentals = out_n
        elif op == "rng-bit-generator":
            c.transcendentals = _elements_recursive(shape)
        elif op in ("all-reduce", "all-reduce-start"):
            leaves = [s for s in layout.leaf_shapes(shape) if isinstance(s, ir.ArrayShape)]
            c.flops = sum(_elements(s) for s in leaves)
            c.bytes_accessed = sum(shape_size(s) for s in leaves) + sum(shape_size(s) for s in ops)
        elif op == "triangular-solve":
            c.bytes_accessed = shape_size(shape) + shape_size(ops[0]) / 2 + shape_size(ops[1])
            c.flops = 2 * ops[0].dims[-1] * _elements(ops[1])
        elif op == "cholesky":
            c.bytes_accessed = shape_size(ops[0]) / 2 + shape_size(ops[0]) / 2
            c.flops = ops[0].dims[-1] * _elements(ops[0]) // 3
        elif op == "async-start":
            c = Cost()
            c.add(self._sub(ins, "calls"))
        return c

    def _fusion(self, ins: ir.Instruction, ops) -> Cost:
        fused = self.mod.comp(ins.attrs["calls"], ins)
        if ins.attrs.get("kind") == "kCustom":
            # XLA costs a custom fusion holding a gather or scatter as that instruction alone
            for f in fused.instructions:
                if f.opcode in ("gather", "scatter"):
                    return self._instruction(fused, f)
        sub = self.computation(fused)
        c = Cost(sub.flops, sub.transcendentals, 0.0)
        table = self.mod.ins(fused)
        root = fused.root
        # the result: what the fusion writes (a dynamic-update-slice root writes only its update)
        shape = ins.shape
        if isinstance(shape, ir.TupleShape):
            for k, s in enumerate(shape.elements):
                r = table.get(root.operands[k]) if root.opcode == "tuple" and k < len(root.operands) else None
                if r is not None and r.opcode == "dynamic-update-slice":
                    c.bytes_accessed += shape_size(table[r.operands[1]].shape)
                else:
                    c.bytes_accessed += sum(shape_size(x) for x in layout.leaf_shapes(s)
                                            if isinstance(x, ir.ArrayShape) and x.element_type.is_array_type)
        elif root.opcode == "dynamic-update-slice":
            c.bytes_accessed += shape_size(table[root.operands[1]].shape)
        else:
            c.bytes_accessed += shape_size(shape)
        # constants of more than one element are read from memory
        for f in fused.instructions:
            if f.opcode == "constant" and _elements_recursive(f.shape) > 1:
                c.bytes_accessed += shape_size(f.shape)
        # each parameter: what its users read
        users = self._users(fused)
        for p in fused.parameters():
            c.bytes_accessed += self._param_read_bytes(p, users, table)
        return c

    def _users(self, comp: ir.Computation) -> dict[str, list[ir.Instruction]]:
        """name -> the instructions using it, each once, in instruction order."""
        users: dict[str, list[ir.Instruction]] = {}
        for f in comp.instructions:
            seen = set()
            for o in f.operands:
                if o not in seen:
                    seen.add(o)
                    users.setdefault(o, []).append(f)
        return users

    def _param_read_bytes(self, p: ir.Instruction, users, table) -> float:
        if isinstance(p.shape, ir.TupleShape):
            # each leaf: follow get-tuple-element users down its index path as far as they go, and
            # count what the instruction reached reads (the tuple parameter itself: its index table)
            total = 0.0
            for path in _leaf_paths(p.shape):
                node = p
                for k in path:
                    for u in users.get(node.name, []):
                        if u.opcode == "get-tuple-element" and u.attrs.get("index") == k:
                            node = u
                            break
                total += self._read_bytes(node, users)
            return total
        return self._read_bytes(p, users)

    def _nested_fusion_read_bytes(self, p: ir.Instruction, nested: ir.Instruction, users) -> float:
        """What `p` costs when a fusion nested in the fused computation reads it (XLA's rule: by the
        nested fusion's own users when the parameter feeds its root directly, else by what the
        nested parameter's users read, counted once)."""
        comp = self.mod.comp(nested.attrs["calls"], nested)
        params = {q.parameter_number: q for q in comp.parameters()}
        root = comp.root
        size = 0.0
        for idx, o in enumerate(nested.operands):
            if o != p.name or idx not in params:
                continue
            fp = params[idx]
            simple = not root.operands or root.operands[0] == fp.name
            seen = False
            for fu in users.get(nested.name, []):
                if simple and fu.opcode == "slice":
                    size += shape_size(fu.shape)
                elif simple and fu.opcode == "dynamic-slice":
                    if fu.operands and fu.operands[0] == nested.name:
                        size += shape_size(fu.shape)
                    elif not seen:
                        seen = True
                        size += shape_size(nested.shape)
                elif simple and fu.opcode == "dynamic-update-slice":
                    if fu.operands and fu.operands[0] != nested.name and not seen:
                        seen = True
                        size += shape_size(nested.shape)
                elif not seen:
                    seen = True
                    size += self._read_bytes(fp, self._users(comp))
        return size

    def _read_bytes(self, p: ir.Instruction, users) -> float:
        size = 0.0
        trivial = False
        for u in users.get(p.name, []):
            op = u.opcode
            if op == "fusion":
                size += self._nested_fusion_read_bytes(p, u, users)
            elif op == "slice":
                size += shape_size(u.shape)
            elif op == "dynamic-slice":
                if u.operands and u.operands[0] == p.name:
                    size += shape_size(u.shape)
                elif not trivial:
                    trivial = True
                    size += shape_size(p.shape)
            elif op == "dynamic-update-slice":
                if u.operands and u.operands[0] != p.name and not trivial:
                    trivial = True
                    size += shape_size(p.shape)
            elif op in ("broadcast", "reshape"):
                size += shape_size(p.shape)
            elif not trivial:
                trivial = True
                size += shape_size(p.shape)
        return size


def _conv_flops(ins: ir.Instruction, lhs: ir.ArrayShape, rhs: ir.ArrayShape, out: ir.ArrayShape) -> int:
    a = ins.attrs
    dn: ir.ConvDims = a["dim_labels"]
    window = a.get("window")
    wdims = list(window.dims) if window is not None else []
    in_f = lhs.dims[dn.input_feature]
    out_f = _first_array(out).dims[dn.output_feature]
    batch = lhs.dims[dn.input_batch]
    counts = []
    if not wdims:
        counts = [1]
    for i, wd in enumerate(wdims):
        k_lim = rhs.dims[dn.kernel_spatial[i]]
        o_lim = _first_array(out).dims[dn.output_spatial[i]]
        i_lim = lhs.dims[dn.input_spatial[i]]
        if (i_lim == o_lim and k_lim == o_lim and i_lim == wd.lhs_dilate and wd.rhs_dilate == 1
                and max(1, i_lim - 1) == wd.stride and wd.pad_low == 0 and wd.pad_high == 0):
            counts.append(i_lim)
            continue
        if (i_lim == 1 and k_lim == o_lim and wd.rhs_dilate == 1 and wd.lhs_dilate == 1 and wd.stride == 1
                and wd.pad_high == o_lim - 1 and wd.pad_low == o_lim - 1):
            counts.append(o_lim)
            continue
        if k_lim != wd.size:
            k_lim = wd.size  # an invalid module (the verifier says so): the window's size
        if k_lim > 1 << 20:  # an absurd window: the bound, not one array entry per tap
            counts.append(k_lim * o_lim)
            continue
        counts.append(_valid_positions(k_lim, o_lim, i_lim, wd))
    fgc = a.get("feature_group_count") or 1
    bgc = a.get("batch_group_count") or 1
    return 2 * (in_f // fgc) * out_f * (batch // bgc) * math.prod(counts)


def _valid_positions(k_lim: int, o_lim: int, i_lim: int, wd: ir.WindowDim) -> int:
    """How many (kernel tap, output position) pairs of one spatial dimension read a real input
    element (not padding, not a hole of the base dilation)."""
    import numpy as np
    k = np.arange(k_lim, dtype=np.int64)
    c = k * wd.rhs_dilate - wd.pad_low  # input index (dilated coordinates) of output 0 for each tap
    s, d = wd.stride, wd.lhs_dilate
    # outputs o with 0 <= o*s + c < i_lim*d (inside the base-dilated input): an interval per tap
    lo = np.maximum(-(c // s), 0)  # ceil(-c / s)
    hi = np.minimum((i_lim * d - 1 - c) // s, o_lim - 1)
    if d == 1:
        return int(np.maximum(hi - lo + 1, 0).sum())
    # ... of which those landing on a real element: o*s + c = 0 (mod d), i.e. o = o0 (mod d/g) with
    # g = gcd(s, d), when g divides c
    g = math.gcd(s, d)
    m = d // g
    ok = (c % g) == 0
    o0 = ((-c // g) * (pow(s // g, -1, m) if m > 1 else 0)) % m
    n = (hi - o0) // m - (lo - 1 - o0) // m
    return int(np.where(ok & (hi >= lo), n, 0).sum())


def _reduce_window_count(ins: ir.Instruction, ops, shape) -> int:
    window: ir.Window = ins.attrs.get("window") or ir.Window(())  # a scalar's window is empty
    wn = math.prod(d.size for d in window.dims)
    out_n = _elements(_first_array(shape))
    count = (wn - 1) * out_n
    reducing = [d for d in window.dims if d.size != 1]
    padded = [d for d in window.dims if d.pad_low or d.pad_high]
    if len(reducing) == 1 and len(padded) == 1 and isinstance(shape, ir.ArrayShape):
        # XLA spots a reduce-window that is a reduce then a broadcast along one dimension
        for i, d in enumerate(window.dims):
            if (d.size != 1 and d.pad_low and d.pad_high and d.pad_low == d.pad_high
                    and d.size == 2 * d.pad_low + 1):
                if d.pad_low == shape.dims[i] - 1:
                    n = shape.dims[i]
                    count = out_n // n + (n - 1)
                break
    return count


def cost_of(module: ir.Module, computation: str | None = None) -> Cost:
    """XLA's HloCostAnalysis totals for the entry computation (or `computation`)."""
    mod = _Module(module)
    comp = module.entry if computation is None else mod.comps[computation]
    return _CostAnalysis(mod).computation(comp)


# --------------------------------------------------------------------------------------------------
# Memory

# results that only view or forward operands (a loop's state is its operand's; a call's result its
# callee's root); so do the *-done / *-update of an async pair: the buffers of their *-start
_NO_BUFFER = _opcodes_where(lambda o: not o.own_buffer)


def _buffer_leaves(ins: ir.Instruction):
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


class _PeakLive:
    """The most physical bytes live at once while a computation runs its instructions in the order
    written (the schedule, in a scheduled module): a buffer lives from the instruction defining it to
    its last use; views (bitcast, get-tuple-element, tuple, while, ...) keep their operands' buffers
    alive; the computation's parameters (its inputs) and its result live throughout; a loop, branch
    or call adds, at that instruction, the peak of the buffers its computations define (loop body
    and condition, or the branches, the larger one).  No other reuse: an estimate of what XLA's
    buffer assignment needs, above it where XLA shares or updates buffers in place."""

    def __init__(self, mod: _Module):
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
                leaves = _buffer_leaves(ins) if with_parameters else []
                start = -1
            elif op in ("call", "conditional"):
                leaves = [x for x in layout.leaf_shapes(ins.shape)
                          if isinstance(x, ir.ArrayShape) and x.element_type.is_array_type]
                start = i
            else:
                leaves = _buffer_leaves(ins)
                start = i
            if leaves:
                per: dict[int, int] = {}
                for x in leaves:
                    sp = layout.memory_space(x)
                    per[sp] = per.get(sp, 0) + _physical(x, ins)
                owners[ins.name] = frozenset((len(sizes),))
                sizes.append(per)
                born.append(start)
                last.append(i if start >= 0 else n)
            else:
                owners[ins.name] = frozenset(b for o in ins.operands for b in owners.get(o, ()))
            inner = [self.peak(self.mod.comps[c], False) for _a, c, role in _callees(ins)
                     if role in _SEQUENTIAL and c in self.mod.comps]
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


@_by_shape
def _shape_text(shape) -> str:
    return str(shape)


def _value(name: str, shape, number: int | None = None) -> Value:
    leaves = [s for s in layout.leaf_shapes(shape) if isinstance(s, ir.ArrayShape)]
    spaces = sorted({layout.memory_space(s) for s in leaves if s.element_type.is_array_type})
    return Value(name, _shape_text(shape), layout.logical_bytes(shape), layout.physical_bytes(shape),
                 spaces, number)


def _physical(s: ir.ArrayShape, ins: ir.Instruction) -> int:
    return _physical_bytes(s)


@_by_shape
def _physical_bytes(s: ir.ArrayShape) -> int:
    if s.layout is not None and s.layout.physical_shape is not None:
        return layout.physical_bytes(s.layout.physical_shape)  # P(shape): the buffer's own shape
    return layout.physical_bytes(s)


_logical_bytes = _by_shape(layout.logical_bytes)


# --------------------------------------------------------------------------------------------------

def module_info(module: ir.Module, computation: str | None = None) -> ModuleInfo:
    """Everything `hlo info` shows, for the entry computation or the named one."""
    with ir.gc_paused():
        return _module_info(module, computation)


def _module_info(module: ir.Module, computation: str | None) -> ModuleInfo:
    mod = _Module(module)
    if computation is not None and computation not in mod.comps:
        names = ", ".join(c.name for c in module.computations[:20])
        raise HloError(f"no computation named '{computation}' in module {module.name} (it has: {names}"
                       f"{', ...' if len(module.computations) > 20 else ''})", filename=module.filename)
    comp = module.entry if computation is None else mod.comps[computation]

    comps = [ComputationInfo(c.name, mod.kinds(c.name), len(c.instructions),
                             [f"{i.name} ({cn})" for i, cn, _r in mod.callers[c.name]])
             for c in module.computations]
    counts: dict[str, int] = {}
    for c in (module.computations if computation is None else [comp]):
        for i in c.instructions:
            counts[i.opcode] = counts.get(i.opcode, 0) + 1
    counts = dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))

    params = [_value(p.name, p.shape, p.parameter_number) for p in comp.parameters()]
    result = _value(comp.root.name, comp.root.shape)

    analysis = _CostAnalysis(mod)
    per = []
    total = Cost()
    for ins in comp.instructions:
        c = analysis.instruction(comp, ins)
        total.add(c)
        if c.flops or c.transcendentals or c.bytes_accessed:
            per.append(InstructionCost(ins.name, ins.opcode, c.flops, c.transcendentals, c.bytes_accessed))
    per.sort(key=lambda x: (-(x.flops + x.transcendentals), -x.bytes_accessed, x.name))

    # the buffers of the computation and of the computations it runs in sequence (loops, branches,
    # calls, async bodies), not of fused or reducer computations, whose values never reach memory
    order, seen, todo = [], {comp.name}, [comp]
    while todo:
        c = todo.pop(0)
        order.append(c)
        for ins in c.instructions:
            for _attr, n, role in _callees(ins):
                if role in _SEQUENTIAL and n in mod.comps and n not in seen:
                    seen.add(n)
                    todo.append(mod.comps[n])
    buffers = []
    spaces: dict[int, list[int]] = {}
    for c in order:
        for ins in c.instructions:
            if ins.opcode == "parameter" and c is not comp:
                continue  # a loop's, branch's or callee's parameter is its caller's buffer
            leaves = _buffer_leaves(ins)
            if not leaves:
                continue
            phys = [_physical(s, ins) for s in leaves]
            logi = [_logical_bytes(s) for s in leaves]
            ms = [layout.memory_space(s) for s in leaves]
            for s, p, lg in zip(ms, phys, logi):
                t = spaces.setdefault(s, [0, 0, 0])
                t[0] += 1
                t[1] += lg
                t[2] += p
            buffers.append(Buffer(ins.name, c.name, ins.opcode, _shape_text(ins.shape), sum(logi), sum(phys),
                                  ms[0] if len(set(ms)) == 1 else -1))
    buffers.sort(key=lambda b: (-b.physical_bytes, -b.logical_bytes, b.name))
    peaks, peak_total = _PeakLive(mod).peak(comp, with_parameters=True)
    space_totals = [SpaceTotal(s, layout.memory_space_name(s), *spaces[s], peaks.get(s, 0)) for s in sorted(spaces)]

    return ModuleInfo(
        module=module.name, computation=comp.name, computations=comps, opcode_counts=counts,
        instruction_count=sum(counts.values()), parameters=params, result=result, cost=total,
        unknown_cost=list(analysis.unknown), instruction_costs=per, buffers=buffers,
        memory_spaces=space_totals, filename=module.filename, scoped=computation is not None,
        peak_bytes=peak_total)


# --------------------------------------------------------------------------------------------------
# Presentation as plain text and as table rows (the CLI draws the same rows with rich)

def human_bytes(n: float) -> str:
    """`320.0 MiB`; exact below 1 KiB."""
    n = float(n)
    if abs(n) < 1024:
        return f"{int(n)} B" if n.is_integer() else f"{n} B"
    for unit in ("KiB", "MiB", "GiB", "TiB", "PiB"):
        n /= 1024.0
        if abs(n) < 1024 or unit == "PiB":
            return f"{n:.1f} {unit}"
    return f"{n:.1f} PiB"  # pragma: no cover


def _count(x: float) -> str:
    return f"{int(x):,}" if float(x).is_integer() else f"{x:,.1f}"


def _space(v: int) -> str:
    return "mixed" if v < 0 else f"S({v})"


def sections(info: ModuleInfo, top: int | None = 10) -> list[tuple[str, list[str], list[list[str]], list[str]]]:
    """(title, column headers, rows, notes) for each part of the report; `top` (0 or None: all) cuts
    the lists of computations, costliest instructions and largest buffers."""
    top = top or None
    out = []
    kinds: dict[str, int] = {}
    for c in info.computations:
        kinds[c.kind] = kinds.get(c.kind, 0) + 1
    comps = sorted(info.computations, key=lambda c: (c.kind != "entry", -c.instructions))
    shown = comps[:top] if top else comps
    out.append((f"computations ({len(comps)}: " + ", ".join(f"{n} {k}" for k, n in kinds.items()) + ")"
                + (f", {len(shown)} shown" if len(shown) < len(comps) else ""),
                ["name", "kind", "instructions", "called by"],
                [[c.name, c.kind, str(c.instructions), ", ".join(c.callers[:3]) + (
                    f", ... ({len(c.callers)} callers)" if len(c.callers) > 3 else "")]
                 for c in shown], []))
    scope = "all computations" if info.computation == _entry_name(info) and not info.scoped else info.computation
    out.append((f"instructions per opcode ({scope}: {info.instruction_count})", ["opcode", "count"],
                [[k, str(v)] for k, v in info.opcode_counts.items()], []))
    out.append((f"parameters of {info.computation}", ["#", "name", "shape", "logical", "physical", "memory"],
                [[str(p.number), p.name, p.shape, human_bytes(p.logical_bytes), human_bytes(p.physical_bytes),
                  ",".join(f"S({m})" for m in p.memory_spaces)] for p in info.parameters], []))
    r = info.result
    out.append(("result", ["name", "shape", "logical", "physical", "memory"],
                [[r.name, r.shape, human_bytes(r.logical_bytes), human_bytes(r.physical_bytes),
                  ",".join(f"S({m})" for m in r.memory_spaces)]], []))
    notes = []
    if info.unknown_cost:
        shown = ", ".join(info.unknown_cost[:5]) + (", ..." if len(info.unknown_cost) > 5 else "")
        notes.append(f"not counted (custom calls, cost unknown to XLA): {len(info.unknown_cost)}: {shown}")
    out.append((f"cost of {info.computation} (XLA's HloCostAnalysis rules; a while loop counts one iteration)",
                ["flops", "transcendentals", "bytes accessed"],
                [[_count(info.cost.flops), _count(info.cost.transcendentals), _count(info.cost.bytes_accessed)
                  + f" ({human_bytes(info.cost.bytes_accessed)})"]], notes))
    if info.instruction_costs:
        title = f"costliest instructions (top {len(info.instruction_costs[:top])} of {len(info.instruction_costs)})"
        out.append((title, ["name", "opcode", "flops", "transcendentals", "bytes accessed"],
                    [[c.name, c.opcode, _count(c.flops), _count(c.transcendentals), _count(c.bytes_accessed)]
                     for c in info.instruction_costs[:top]], []))
    def both(n: int) -> str:
        return _count(n) + f" ({human_bytes(n)})"
    rows = [[s.name, str(s.buffers), both(s.logical_bytes), both(s.physical_bytes), both(s.peak_bytes)]
            for s in info.memory_spaces]
    if len(info.memory_spaces) > 1:
        rows.append(["total", str(sum(s.buffers for s in info.memory_spaces)), both(info.logical_bytes),
                     both(info.physical_bytes), both(info.peak_bytes)])
    out.append(("memory per space (physical layouts: tiles, padding, packing)",
                ["memory space", "buffers", "logical bytes", "physical bytes", "peak live"], rows,
                [("physical bytes: every buffer added up; peak live: the most live at once in the written "
                  "order (each buffer from its definition to its last use)")]))
    if info.buffers:
        out.append((f"largest buffers (top {len(info.buffers[:top])} of {len(info.buffers)})",
                    ["name", "opcode", "shape", "logical", "physical", "memory"],
                    [[b.name if b.computation == info.computation else f"{b.name} ({b.computation})", b.opcode,
                      b.shape, human_bytes(b.logical_bytes), human_bytes(b.physical_bytes), _space(b.memory_space)]
                     for b in info.buffers[:top]], []))
    return out


def _entry_name(info: ModuleInfo) -> str:
    for c in info.computations:
        if c.kind == "entry":
            return c.name
    return info.computation


def to_text(info: ModuleInfo, top: int | None = 10) -> str:
    """The report as plain text (aligned columns)."""
    lines = [f"module {info.module}" + (f"  ({info.filename})" if info.filename else "")]
    for title, head, rows, notes in sections(info, top):
        lines.append("")
        lines.append(title)
        table = [head] + rows
        widths = [max(len(r[i]) for r in table) for i in range(len(head))]
        for r in table:
            lines.append("  " + "  ".join(v.ljust(w) for v, w in zip(r, widths)).rstrip())
        for n in notes:
            lines.append("  " + n)
    return "\n".join(lines) + "\n"
