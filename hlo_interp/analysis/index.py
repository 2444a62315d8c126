"""A module's index: one pass over each computation that the analyses share (cost.py, memory.py, the
report in info.py), so that none of them walks the instructions or resolves operand names again.

For each computation, in one loop: where each name is defined, the parameters, the instructions
that call a computation (with their callees and roles), each instruction's *signature* (its opcode,
its shape and its operands' shapes, by identity, and the attributes the analyses read: a module
repeats a few signatures thousands of times, and what depends on them only is worked out once per
signature), and the buffers' liveness: which buffer each value lives in (its own, or, for a view
like bitcast, get-tuple-element or tuple, its operands') and the last instruction using each.
"""
from __future__ import annotations

from collections import Counter
from itertools import compress

from .. import ir, layout
from ..opcodes import OPCODES, opcodes_where
from ..shapes.infer import UNREAD_ATTRS, attrs_key
from .calls import CALL_ATTRS, callees, located_error
from .memo import by_shape

# The attributes no analysis reads (beside those no shape rule reads): not part of a signature.
SIGNATURE_UNREAD = UNREAD_ATTRS | {"control-predecessors", "sharding", "frontend_attributes"}
# Opcodes whose instructions are grouped by signature; the others (custom calls, whose cost is
# listed by name, and unknown opcodes) each have a signature of their own.
_KEYED = frozenset(OPCODES) - {"custom-call"}
# results that only view or forward operands (a loop's state is its operand's; a call's result its
# callee's root); so do the *-done / *-update of an async pair: the buffers of their *-start
_NO_BUFFER = opcodes_where(lambda o: not o.own_buffer)
_NO_OWNER: frozenset = frozenset()


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


def live_shape(ins: ir.Instruction):
    """The shape whose array leaves are the buffers liveness counts for `ins` (None: none): its
    buffers (buffer_shape), but a call's or conditional's result counts as its own (the callee's
    buffers are counted inside it, while it runs).  (Whether a parameter's count is the caller's
    choice: memory.PeakLive's `with_parameters`.)"""
    op = ins.opcode
    if op == "call" or op == "conditional":
        return ins.shape
    return buffer_shape(ins)


class ComputationIndex:
    """One pass over the instructions of a computation (see the module's docstring).

    By position (the instruction's number in the computation): `sig`, the number of its signature;
    `last`, the last position using its value, or a value it lives in (a view's: see `views`).
    By signature number: `reps`, the position of its first instruction; `keys`, the key it was
    grouped by (None: an instruction of its own); `live`, live_shape() of its instructions (None:
    no buffer).  An instruction whose signature has a live shape defines a buffer (numbered by its
    position); `views` maps the position of each other instruction with operands to the buffers
    its value lives in (its operands'), and owner(position) says which."""

    def __init__(self, comp: ir.Computation):
        self.comp = comp
        instrs = comp.instructions
        n = len(instrs)
        self.at: dict[str, int] = {}  # name -> position (of its last definition)
        self.last: list[int] = list(range(n))
        self.reps: list[int] = []
        self.keys: list = []
        self.live: list = []
        self.views: dict[int, frozenset] = {}
        self.param_positions: list[int] = []
        self.calling: list = []  # (position, instruction, callees(instruction)) of the calling ones
        self.forward = False  # an operand named before its definition (or never defined)
        self._names: list | None = None
        self._counts: list | None = None
        self._named: tuple = (None, [])  # (a bound, the positions of the names up to it)
        at, last, live = self.at, self.last, self.live
        sig = self.sig = [0] * n
        numbers: dict[tuple, int] = {}
        shape_ids: list = [0] * n  # by position: id(shape), id(None) without one
        shapeless = id(None)  # an operand without a shape: its user has no signature (of its own only)
        unread = SIGNATURE_UNREAD
        keyed = _KEYED
        for i, ins in enumerate(instrs):
            op = ins.opcode
            operands = ins.operands
            # the operands: their shapes for the signature; their values are used here
            try:
                if len(operands) == 2:
                    a, b = operands
                    ja = at[a]
                    jb = at[b]
                    last[ja] = i
                    last[jb] = i
                    ids = (shape_ids[ja], shape_ids[jb])
                elif len(operands) == 1:
                    ja = at[operands[0]]
                    last[ja] = i
                    ids = (shape_ids[ja],)
                elif not operands:
                    ids = ()
                    if op == "parameter":
                        self.param_positions.append(i)
                else:
                    ids = tuple([shape_ids[at[o]] for o in operands])
                    for o in operands:
                        last[at[o]] = i
            except KeyError:  # named before its definition, or never defined
                self.forward = True
                ids = None
                for o in operands:
                    j = at.get(o)
                    if j is not None:
                        last[j] = i
            attrs = ins.attrs_as_parsed()[0]  # metadata left undecoded: not in a signature
            if not attrs or attrs.keys() <= unread:
                akey = ()
            else:
                akey = attrs_key(attrs, unread)
                if not attrs.keys().isdisjoint(CALL_ATTRS):
                    calls = callees(ins)
                    if calls:
                        self.calling.append((i, ins, calls))
            shape = ins.shape
            key = (op, id(shape), ids, akey)
            s = numbers.get(key)
            if s is None:
                # a new signature; only whole keys are remembered (the others never match)
                s = len(self.reps)
                if op in keyed and akey is not None and ids is not None and shapeless not in ids:
                    numbers[key] = s
                else:
                    key = None
                self._add(i, ins, key)
            sig[i] = s
            if live[s] is None and operands:
                self.views[i] = self._view(operands)
            at[ins.name] = i
            shape_ids[i] = id(shape)
        # a view's last use is a last use of the buffers it lives in
        for v, bs in self.views.items():
            used = last[v]
            for b in bs:
                if last[b] < used:
                    last[b] = used
        if self.forward:
            self._sign_again()

    def _add(self, i: int, ins: ir.Instruction, key) -> None:
        self.reps.append(i)
        self.keys.append(key)
        shape = live_shape(ins)
        self.live.append(shape if shape is not None and array_leaves(shape) else None)

    def _view(self, operands) -> frozenset:
        """The buffers the values of `operands` live in (those defined so far)."""
        out: set = set()
        for o in operands:
            j = self.at.get(o)
            if j is None:
                continue
            if self.live[self.sig[j]] is not None:
                out.add(j)
            else:
                out.update(self.views.get(j, ()))
        return frozenset(out)

    def owner(self, k: int) -> frozenset:
        """The buffers the value of position k lives in: its own, or a view's operands'."""
        if self.live[self.sig[k]] is not None:
            return frozenset((k,))
        return self.views.get(k, _NO_OWNER)

    def _sign_again(self) -> None:
        """Signatures again, with every name of the computation known (an operand named before its
        definition has the shape of that definition; an undefined one makes a signature of its own)."""
        instrs = self.comp.instructions
        self.reps.clear()
        self.keys.clear()
        self.live.clear()
        numbers: dict[tuple, int] = {}
        for i, ins in enumerate(instrs):
            key = signature(ins, self)  # (every name is in the table now)
            s = None if key is None else numbers.get(key)
            if s is None:
                s = len(self.reps)
                if key is not None:
                    numbers[key] = s
                self._add(i, ins, key)
            self.sig[i] = s

    def get(self, name: str):
        """The instruction named `name` (its last definition), or None."""
        k = self.at.get(name)
        return None if k is None else self.comp.instructions[k]

    def __getitem__(self, name: str) -> ir.Instruction:
        """The instruction named `name` (its last definition); KeyError when there is none."""
        return self.comp.instructions[self.at[name]]

    def names(self) -> list[str]:
        """The instructions' names, by position (shared: do not change)."""
        if self._names is None:
            if len(self.at) == len(self.sig):
                self._names = list(self.at)  # each name defined once: the table's order is the positions'
            else:
                self._names = [i.name for i in self.comp.instructions]
        return self._names

    def named_at_most(self, bound: str) -> list[int]:
        """The positions of the instructions named `bound` or less (in string order), in order."""
        got, at = self._named
        if got is not None and bound <= got:
            if bound == got:
                return at
            names = self.names()
            return [p for p in at if names[p] <= bound]
        names = self.names()
        if len(self.at) == len(names):  # each name defined once
            table = self.at
            at = [table[n] for n in names if n <= bound]
        else:
            at = [p for p, n in enumerate(names) if n <= bound]
        self._named = (bound, at)
        return at

    def counts(self) -> list[int]:
        """How many instructions have each signature (shared: do not change)."""
        if self._counts is None:
            got = Counter(self.sig)
            self._counts = [got[s] for s in range(len(self.reps))]
        return self._counts

    def positions(self, signatures) -> list[int]:
        """The positions of the instructions of the given signature numbers, in order."""
        if len(signatures) == len(self.reps):
            return list(range(len(self.sig)))
        wanted = set(signatures)
        return list(compress(range(len(self.sig)), map(wanted.__contains__, self.sig)))


def signature(ins: ir.Instruction, table):
    """The signature key of `ins`, its operands looked up in `table` (a ComputationIndex, or a dict:
    name -> instruction); None when
    it has none of its own (a custom call, an unknown opcode, an undefined operand or one without a
    shape, an attribute value of a type no key holds)."""
    if ins.opcode not in _KEYED:
        return None
    ids = []
    for n in ins.operands:
        o = table.get(n)
        if o is None or o.shape is None:
            return None
        ids.append(id(o.shape))
    attrs = ins.attrs_as_parsed()[0]
    if not attrs or attrs.keys() <= SIGNATURE_UNREAD:
        akey = ()
    else:
        akey = attrs_key(attrs, SIGNATURE_UNREAD)
        if akey is None:
            return None
    return ins.opcode, id(ins.shape), tuple(ids), akey


class ModuleIndex:
    """Name tables of a module: computations by name, and a ComputationIndex of each computation
    (`of(comp)`: its instructions by name, get / [], and the rest of its one pass); who calls whom."""

    def __init__(self, m: ir.Module):
        self.m = m
        self.comps = {c.name: c for c in m.computations}
        self.callers: dict[str, list[tuple[ir.Instruction, str, str]]] = {c.name: [] for c in m.computations}
        self._index: dict[int, ComputationIndex] = {}
        for c in m.computations:
            x = self._index[id(c)] = ComputationIndex(c)
            for _k, ins, calls in x.calling:
                for _attr, n, role in calls:
                    if n in self.callers:
                        self.callers[n].append((ins, c.name, role))

    def of(self, comp: ir.Computation) -> ComputationIndex:
        got = self._index.get(id(comp))
        if got is None or got.comp is not comp:
            got = self._index[id(comp)] = ComputationIndex(comp)
        return got

    def parameters(self, comp: ir.Computation) -> list[ir.Instruction]:
        """The parameter instructions of `comp` by number (as comp.parameters())."""
        instrs = comp.instructions
        return sorted((instrs[k] for k in self.of(comp).param_positions), key=lambda i: i.parameter_number or 0)

    def calling(self, comp: ir.Computation) -> list:
        """(position, instruction, callees(instruction)) of the instructions of `comp` that call a
        computation, in order."""
        return self.of(comp).calling

    def operand_shapes(self, comp: ir.Computation, ins: ir.Instruction) -> list:
        x = self.of(comp)
        out = []
        for k, n in enumerate(ins.operands):
            o = x.get(n)
            if o is not None and o.shape is not None:
                out.append(o.shape)
            elif ins.operand_shapes and k < len(ins.operand_shapes) and ins.operand_shapes[k] is not None:
                out.append(ins.operand_shapes[k])
            else:
                raise located_error(ins, f"operand {n} of {ins.name} is not defined in computation {comp.name}")
        return out

    def comp(self, name: str, ins: ir.Instruction) -> ir.Computation:
        c = self.comps.get(name)
        if c is None:
            raise located_error(ins, f"{ins.name} calls computation {name}, which the module does not define")
        return c

    def kinds(self, name: str) -> str:
        if self.comps[name].is_entry:
            return "entry"
        roles = []
        for _ins, _c, role in self.callers[name]:
            if role not in roles:
                roles.append(role)
        return ",".join(roles) if roles else "unused"
