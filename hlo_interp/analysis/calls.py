"""The call graph of a module as the analyses need it: which computations an instruction calls and
in which role (fusion, async, while-body/condition, conditional-branch, reduce-apply, comparator,
call, ...), and a module's name tables (computations, instructions per computation, callers)."""
from __future__ import annotations

from .. import ir
from ..diagnostics import HloError
from ..opcodes import ASYNC_SUFFIXES, OPCODES, called_computation_attrs

# The attributes that name called computations (the table's `comp`/`comps` attributes).  The role of
# the computation `to_apply` names is its caller's (the table's `callee_role`: reduce-apply, comparator,
# ...); `calls` names a fusion's or an async wrapper's; the other attributes say the role themselves.
_CALL_ATTRS = called_computation_attrs()
_ROLE_BY_ATTR = {"condition": "while-condition", "body": "while-body",
                 "true_computation": "conditional-branch", "false_computation": "conditional-branch",
                 "branch_computations": "conditional-branch", "select": "select",
                 "scatter": "scatter-apply", "called_computations": "custom-call"}
# roles whose computation runs as a sequence of real instructions (its results are buffers); an
# async computation's result is the buffer its *-start holds, counted there
SEQUENTIAL_ROLES = {"entry", "while-body", "while-condition", "conditional-branch", "call"}


def callees(ins: ir.Instruction):
    """(attribute, computation name, role) for every computation `ins` calls."""
    if ins.attrs.keys().isdisjoint(_CALL_ATTRS):
        return ()  # most instructions call nothing: no generator to start
    return list(_callees_of(ins))


def callee_role(opcode: str, attr: str) -> str:
    """The role of the computation that attribute `attr` of an `opcode` instruction names."""
    role = _ROLE_BY_ATTR.get(attr)
    if role is None:
        if attr == "calls":  # fusion's, or an async wrapper's (`fusion-start` too)
            return "fusion" if opcode == "fusion" else "async"
        role = _to_apply_role(opcode)
        if not role and opcode.endswith(ASYNC_SUFFIXES):  # `<op>-start` etc.: the wrapped op's
            role = _to_apply_role(opcode.rsplit("-", 1)[0])
    return role or "to-apply"


def _to_apply_role(opcode: str) -> str:
    spec = OPCODES.get(opcode)
    return spec.callee_role if spec is not None else ""


def _callees_of(ins: ir.Instruction):
    for attr, v in ins.attrs.items():
        if attr not in _CALL_ATTRS or v is None:
            continue
        role = callee_role(ins.opcode, attr)
        for n in (v if isinstance(v, tuple) else (v,)):
            if isinstance(n, str):
                yield attr, n, role


def located_error(where, message: str) -> HloError:
    loc = getattr(where, "loc", None)
    if loc is not None:
        return HloError(message, filename=loc.filename, line=loc.line, column=loc.column,
                        source_line=loc.source_line)
    return HloError(message)


class ModuleIndex:
    """Name tables of a module: computations by name, instructions by name per computation."""

    def __init__(self, m: ir.Module):
        self.m = m
        self.comps = {c.name: c for c in m.computations}
        self._by_name: dict[str, dict[str, ir.Instruction]] = {}
        self.callers: dict[str, list[tuple[ir.Instruction, str, str]]] = {c.name: [] for c in m.computations}
        self._calling: dict[int, list] = {}
        self._params: dict[int, list] = {}
        for c in m.computations:
            calling = self._calling[id(c)] = []
            params = self._params[id(c)] = []
            for k, ins in enumerate(c.instructions):
                if ins.opcode == "parameter":
                    params.append(ins)
                attrs = ins.attrs_as_parsed()[0]  # only the names are read here: metadata stays undecoded
                if not attrs or attrs.keys().isdisjoint(_CALL_ATTRS):
                    continue
                calls = list(_callees_of(ins))
                if calls:
                    calling.append((k, ins, calls))
                    for _attr, n, role in calls:
                        if n in self.callers:
                            self.callers[n].append((ins, c.name, role))

    def parameters(self, comp: ir.Computation) -> list[ir.Instruction]:
        """The parameter instructions of `comp` by number (as comp.parameters())."""
        got = self._params.get(id(comp))
        if got is None:
            return comp.parameters()
        return sorted(got, key=lambda i: i.parameter_number or 0)

    def calling(self, comp: ir.Computation) -> list:
        """(position, instruction, callees(instruction)) of the instructions of `comp` that call a
        computation, in order."""
        got = self._calling.get(id(comp))
        if got is None:
            got = self._calling[id(comp)] = [(k, ins, calls) for k, ins in enumerate(comp.instructions)
                                             if (calls := callees(ins))]
        return got

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
