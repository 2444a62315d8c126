"""Cost estimates counted as XLA's HloCostAnalysis counts them (xla/service/hlo_cost_analysis.cc):
flops (dot and convolution 2 per multiply-add over the taps that read real input, elementwise 1 per
element), transcendentals apart (exp, log, logistic, power, sqrt, cbrt, rsqrt, tan(h), sin, cos,
expm1, log1p, atan2, erf, and on XLA:CPU the hyperbolic and inverse trigonometric ones; rng 1 per
element), reductions as the reducer's cost times the number of reduction steps, fusions as their
fused instructions, while loops as one iteration of body and condition, conditionals as their
costliest branch, async `*-start` as the wrapped work; bytes accessed as XLA counts them (each array
of the result plus the operands, with its rules for slices, gathers, scatters, dynamic-update-slice,
fusion parameters and nested fusions, bitcasts, tuples, ...), at XLA:CPU's shape sizes
(ShapeUtil::ByteSizeOf: E(n) packing counts, tiles do not, a tuple operand is its 8-byte-per-element
index table, a dynamic array carries 4 bytes per dimension).  Checked against XLA:CPU's own analysis
on 1432 modules: equal (XLA sums in float32, so huge totals differ in the last float32 digit).
Custom calls have no known cost: XLA marks them -1; here they count 0 and are listed in `unknown`.
"""
from __future__ import annotations

import math

from .. import ir, layout
from ..opcodes import OPCODES, opcodes_where, split_async
from ..records import record
from .calls import located_error
from .index import ComputationIndex, ModuleIndex, signature
from .memo import by_shape

POINTER_SIZE = 8  # XLA:CPU's sizeof(void*): a tuple's index table entry, an opaque value


@record
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
        return {"flops": json_number(self.flops), "transcendentals": json_number(self.transcendentals),
                "bytes_accessed": json_number(self.bytes_accessed)}


def json_number(x: float):
    """Whole numbers as ints in JSON (XLA's costs are whole except a few halves)."""
    return int(x) if float(x).is_integer() else x


def total_cost(costs: list[Cost], x: ComputationIndex) -> Cost:
    """The sum of the costs of a computation's instructions (`costs` by signature, x its index),
    exactly as adding them one by one in order gives: by signature, as count x cost, when every
    partial sum is exact (whole or half numbers, far below 2**53), else one by one."""
    counts = x.counts()
    out = []
    for name in ("flops", "transcendentals", "bytes_accessed"):
        values = [getattr(c, name) for c in costs]
        if all(float(2 * v).is_integer() for v in values) and \
                sum(abs(v) * n for v, n in zip(values, counts)) < _EXACT_BELOW:
            out.append(float(sum(v * n for v, n in zip(values, counts))))
        else:
            total = 0.0
            for s in x.sig:
                total += values[s] * 1.0
            out.append(total)
    return Cost(*out)


_EXACT_BELOW = 2.0 ** 50


# The table's cost classes: ops HloCostAnalysis counts as one flop (or transcendental) per result
# element (XLA:CPU counts cosh, sinh, acos, ... as transcendentals too: measured, 1 per element);
# ops with no work and no memory traffic.
_TRANSCENDENTAL = opcodes_where(lambda o: o.transcendental)
_ELEMENTWISE = opcodes_where(lambda o: o.cost == "elementwise")
_FREE = opcodes_where(lambda o: o.cost == "free")
_NO_COST = Cost()  # shared: never changed
# The cost of an instruction is remembered by its signature (index.py: its opcode, its shape and its
# operands' by identity, and the attributes the rules below read), in the whole module.  Not for
# custom calls, which are listed by name in `unknown`.
_BY_SIGNATURE = frozenset(OPCODES) - _FREE - {"custom-call"}


def _elements(shape) -> int:
    if isinstance(shape, ir.ArrayShape):
        return shape.num_elements()
    return 0


def _elements_recursive(shape) -> int:
    return sum(_elements(s) for s in layout.leaf_shapes(shape) if isinstance(s, ir.ArrayShape))



@by_shape
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


class CostAnalysis:
    def __init__(self, mod: ModuleIndex):
        self.mod = mod
        self.memo: dict[str, Cost] = {}
        self.by_signature: dict[tuple, Cost] = {}
        self.unknown: list[str] = []
        self._active: set[str] = set()

    # one computation: the sum of its instructions' costs
    def computation(self, comp: ir.Computation) -> Cost:
        got = self.memo.get(comp.name)
        if got is not None:
            return got
        if comp.name in self._active:
            raise located_error(comp, f"computation {comp.name} calls itself")
        self._active.add(comp.name)
        total = total_cost(self.signature_costs(comp), self.mod.of(comp))
        self._active.discard(comp.name)
        self.memo[comp.name] = total
        return total

    def _sub(self, ins: ir.Instruction, attr: str) -> Cost:
        return self.computation(self.mod.comp(ins.attrs[attr], ins))

    def instruction(self, comp: ir.Computation, ins: ir.Instruction) -> Cost:
        """The cost of `ins` (instructions of the same signature share it: do not change it)."""
        op = ins.opcode
        if op in _FREE:
            return _NO_COST
        key = signature(ins, self.mod.of(comp)) if op in _BY_SIGNATURE else None
        if key is not None:
            got = self.by_signature.get(key)
            if got is not None:
                return got
        return self._costed(comp, ins, key)

    def _costed(self, comp: ir.Computation, ins: ir.Instruction, key) -> Cost:
        try:
            c = self._instruction(comp, ins)
        except (IndexError, KeyError, TypeError, AttributeError, ValueError) as e:
            # an instruction whose shapes or attributes do not fit its opcode (hlo check says more)
            raise located_error(ins, f"cannot estimate the cost of {ins.name} ({ins.opcode}): its operands or "
                              f"attributes do not fit the opcode ({type(e).__name__}: {e}); "
                              f"`hlo check` tells what is wrong") from None
        if key is not None:
            self.by_signature[key] = c
        return c

    def signature_costs(self, comp: ir.Computation) -> list[Cost]:
        """The cost of the instructions of each signature of `comp` (its index's numbers), worked
        out in the order of their first instructions (shared: do not change them)."""
        x = self.mod.of(comp)
        instrs = comp.instructions
        memo = self.by_signature
        out = []
        for k, key in zip(x.reps, x.keys):
            ins = instrs[k]
            if ins.opcode in _FREE:
                c = _NO_COST
            elif key is None:
                c = self._costed(comp, ins, None)  # an instruction of its own (a custom call, ...)
            else:
                c = memo.get(key)
                if c is None:
                    c = self._costed(comp, ins, key)
            out.append(c)
        return out

    def instructions(self, comp: ir.Computation) -> list[Cost]:
        """The cost of each instruction of `comp`, in order: instruction(comp, i) for each."""
        costs = self.signature_costs(comp)
        return [costs[s] for s in self.mod.of(comp).sig]

    def _instruction(self, comp: ir.Computation, ins: ir.Instruction) -> Cost:
        op = ins.opcode
        shape = ins.shape
        if op in _FREE:
            return Cost()
        ops = self.mod.operand_shapes(comp, ins)
        if op not in OPCODES:
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
        table = self.mod.of(fused)  # (name -> instruction)
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
            c.bytes_accessed += self._param_read_bytes(p, users)
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

    def _param_read_bytes(self, p: ir.Instruction, users) -> float:
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
    mod = ModuleIndex(module)
    comp = module.entry if computation is None else mod.comps[computation]
    return CostAnalysis(mod).computation(comp)
