"""The evaluator's registry: opcode -> kernel builder.

A kernel builder is called ONCE per instruction when a computation is turned into a plan, with the
instruction (decoded attributes in `ins.attrs`) and the evaluator context; it returns a closure that is
called each time the instruction executes, with the operand values in operand order:

    @kernel("pad")
    def _pad(ins: ir.Instruction, ctx: "EvalContext"):
        low, high, interior = ...            # decode attributes once
        def run(x, v):
            return pad(x, v, low=low, high=high, interior=interior)
        return run

Values are NumPy arrays (0-d for scalars, of the instruction's element type: ml_dtypes types for bf16/f8,
np.bool_ for pred), Python tuples of values for tuple shapes, and `TOKEN` for tokens.  The plain
functions that do the work (`pad(...)` above) live next to the builder, take arrays and decoded
attributes, and know nothing about instructions.

The context `ctx` (built by hlo_interp/evaluator.py) offers:
    ctx.module                      the ir.Module
    ctx.call(name) -> callable      the compiled plan of computation `name`: f(*values) -> value
                                    (use it for to_apply=, calls=, condition=, body=, branches)
    ctx.options                     run options: .max_bytes, .max_iterations, .fake_constants
    ctx.check_alloc(ins, shape)     raise a located HloError if `shape` would exceed max_bytes
    ctx.call(name, ins=None)        (ins: locates a missing-computation error)
    ctx.operand_shapes(ins)         the shapes of ins's operands (while building)
    ctx.num_parameters(name, ins)   parameter count of a called computation
    ctx.computation(name, ins)      the ir.Computation
    ctx.module_plan(module)         the entry plan of a module of the kernel's own (batch norm's expansion)
A closure may carry `inline` (a function of the operand expressions returning a Python expression)
or `const` (its value, bound once) to cost nothing per run.
Kernels raise `error_at(ins, message)` for run-time failures; never a bare exception.

An opcode with no kernel fails with `unsupported opcode 'X' (line N)` (`unsupported`), never silently.
"""
from __future__ import annotations

from typing import Any, Callable

from ..diagnostics import HloError

KERNELS: dict[str, Callable] = {}


class _Token:
    """The value of a token-typed instruction (after-all, parameter of type token, ...)."""
    __slots__ = ()

    def __repr__(self) -> str:
        return "TOKEN"


TOKEN = _Token()


def kernel(*opcodes: str) -> Callable[[Callable], Callable]:
    """Register a kernel builder for one or more opcodes."""
    def deco(fn: Callable) -> Callable:
        for op in opcodes:
            if op in KERNELS and KERNELS[op] is not fn:
                raise RuntimeError(f"two kernels registered for {op!r}")
            KERNELS[op] = fn
        return fn
    return deco


def unsupported(ins: Any, what: str = "") -> HloError:
    """The error for an opcode (or an opcode's variant) the evaluator does not implement."""
    line = ins.loc.line if getattr(ins, "loc", None) is not None else "?"
    msg = f"unsupported opcode '{ins.opcode}' (line {line})" + (f": {what}" if what else "")
    return error_at(ins, msg)


def error_at(ins: Any, message: str) -> HloError:
    """An HloError located at an instruction (for run-time failures: bad indices, guards, ...)."""
    loc = getattr(ins, "loc", None)
    if loc is not None:
        return HloError.at(loc.source, loc.offset, message)
    return HloError(message)
