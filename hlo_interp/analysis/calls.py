"""The call graph of a module as the analyses need it: which computations an instruction calls and
in which role (fusion, async, while-body/condition, conditional-branch, reduce-apply, comparator,
call, ...).  (Who calls whom in a module: index.ModuleIndex.)"""
from __future__ import annotations

from .. import ir
from ..diagnostics import HloError
from ..opcodes import ASYNC_SUFFIXES, OPCODES, called_computation_attrs

# The attributes that name called computations (the table's `comp`/`comps` attributes).  The role of
# the computation `to_apply` names is its caller's (the table's `callee_role`: reduce-apply, comparator,
# ...); `calls` names a fusion's or an async wrapper's; the other attributes say the role themselves.
CALL_ATTRS = called_computation_attrs()
_ROLE_BY_ATTR = {"condition": "while-condition", "body": "while-body",
                 "true_computation": "conditional-branch", "false_computation": "conditional-branch",
                 "branch_computations": "conditional-branch", "select": "select",
                 "scatter": "scatter-apply", "called_computations": "custom-call"}
# roles whose computation runs as a sequence of real instructions (its results are buffers); an
# async computation's result is the buffer its *-start holds, counted there
SEQUENTIAL_ROLES = {"entry", "while-body", "while-condition", "conditional-branch", "call"}


def callees(ins: ir.Instruction):
    """(attribute, computation name, role) for every computation `ins` calls."""
    if ins.attrs.keys().isdisjoint(CALL_ATTRS):
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
        if attr not in CALL_ATTRS or v is None:
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
