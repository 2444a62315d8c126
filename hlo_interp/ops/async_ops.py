"""Asynchronous wrappers: async-start / async-update / async-done, the `<op>-start / -update / -done`
sugar, copy-start / copy-done.

Evaluation is sequential, so an asynchronous pair computes its result when it starts:

  * async-start(operands), calls=comp: the value of the declared tuple shape
    ((operands...), result, context...) — the operands as given, the result of calling `comp` on them,
    and each context element (XLA's `u32[]`/`s32[]` handles, whatever the text declares) zero;
  * async-update(start): its operand, unchanged;
  * async-done(start or update): the result (element 1);
  * `<op>-start(operands)` (sugar for async-start wrapping a single `<op>` instruction: the parser keeps
    the sugared opcode and the wrapped op's attributes): the `<op>` kernel is built for an instruction
    of the result shape (element 1), same operands and attributes; `<op>-update` / `<op>-done` as
    above.  Opcodes that are real ops of their own (all-reduce-start, copy-start, send-done, ...) are
    not sugar, and the sugar of collectives and send/recv (reduce-scatter-start, all-to-all-start, ...)
    is left to the collectives' kernels;
  * copy-start(x): (destination, source, u32[] context) = (x, x, 0) — layouts and memory spaces do
    not change values; copy-done gives the destination (element 0).
"""
from __future__ import annotations

import numpy as np

from .. import ir
from ..opcodes import ASYNC_SUFFIXES, OPCODES
from .registry import KERNELS, TOKEN, error_at, kernel, unsupported


def zero_value(shape):
    """A value of `shape` holding zeros (tokens for token shapes)."""
    if isinstance(shape, ir.TupleShape):
        return tuple(zero_value(s) for s in shape.elements)
    if not isinstance(shape, ir.ArrayShape) or shape.element_type.dtype is None:
        return TOKEN
    return np.zeros(tuple(max(d, 0) for d in shape.dims), shape.element_type.dtype)


def _bundle_parts(ins):
    """The declared ((operands...), result, context...) shape of an async-start-like instruction."""
    s = ins.shape
    if not isinstance(s, ir.TupleShape) or len(s.elements) < 2:
        raise error_at(ins, f"'{ins.opcode}' must have the shape ((operands...), result, context...); "
                            f"got {s.text(layouts=False) if s is not None else 'none'}")
    return s.elements[1], s.elements[2:]


def _start(ins, ctx, compute):
    """The start closure: compute(*operands) -> result, packed with operands and context."""
    _, context = _bundle_parts(ins)
    ctx_vals = tuple(zero_value(c) for c in context)
    for v in ctx_vals:
        if isinstance(v, np.ndarray):
            v.flags.writeable = False

    packed = isinstance(ins.shape.elements[0], ir.TupleShape)  # else a lone operand, unwrapped

    def run(*xs):
        return (tuple(xs) if packed or len(xs) != 1 else xs[0], compute(*xs)) + ctx_vals
    return run


def _check_bundle(ins, v):
    if not isinstance(v, tuple) or len(v) < 2:
        raise error_at(ins, f"'{ins.opcode}': the operand is not the value of an async start")


@kernel("async-start")
def _k_async_start(ins, ctx):
    comp = ins.attrs.get("calls")
    if not isinstance(comp, str):
        raise error_at(ins, "async-start needs calls=<computation>")
    nparams = ctx.num_parameters(comp, ins)
    if nparams != len(ins.operands):
        raise error_at(ins, f"async-start passes {len(ins.operands)} operand(s) to '{comp}', which takes "
                            f"{nparams}")
    fn = ctx.call(comp, ins)
    return _start(ins, ctx, fn)


def _update(ins, ctx):
    if len(ins.operands) != 1:
        raise error_at(ins, f"'{ins.opcode}' takes one operand (the start), got {len(ins.operands)}")

    def run(v):
        _check_bundle(ins, v)
        return v
    return run


def _done(ins, ctx):
    if len(ins.operands) != 1:
        raise error_at(ins, f"'{ins.opcode}' takes one operand (the start), got {len(ins.operands)}")

    def run(v):
        _check_bundle(ins, v)
        return v[1]
    return run


kernel("async-update")(_update)
kernel("async-done")(_done)


# Attributes of the async wrapper itself, not of the wrapped instruction.
_WRAPPER_ATTRS = frozenset(("async_execution_thread", "output_to_operand_aliasing", "calls"))


def _sugar_start(ins, ctx):
    base = ins.opcode[: -len("-start")]
    result, _ = _bundle_parts(ins)
    builder = KERNELS.get(base)
    if builder is None:
        raise unsupported(ins, f"the wrapped opcode '{base}' has no kernel")
    wrapped = ir.Instruction(name=ins.name, opcode=base, shape=result, operands=list(ins.operands),
                             attrs={k: v for k, v in ins.attrs.items() if k not in _WRAPPER_ATTRS},
                             loc=ins.loc, attr_locs=dict(ins.attr_locs))
    return _start(ins, ctx, builder(wrapped, ctx))




def _register_sugar() -> None:
    """`<op>-start/-update/-done` for every opcode whose entry allows it (`async_sugar`): not the async
    ops, collectives and feeds (their async forms are their own kernels' business), nor the stateful
    rng ops (left unsupported)."""
    for base, op in OPCODES.items():
        if not op.async_sugar or any(base.endswith(s) for s in ASYNC_SUFFIXES):
            continue
        for suf, fn in (("-start", _sugar_start), ("-update", _update), ("-done", _done)):
            name = base + suf
            if name in OPCODES or name in KERNELS:
                continue
            KERNELS[name] = fn


_register_sugar()


def add_async_sugar(base: str) -> None:
    """Give opcode `base` the async sugar `<base>-start/-update/-done` (where no kernel is registered
    under those names yet): for families that opt in, like the collectives with no -start of their own."""
    for suf, fn in (("-start", _sugar_start), ("-update", _update), ("-done", _done)):
        KERNELS.setdefault(base + suf, fn)


@kernel("copy-start")
def _k_copy_start(ins, ctx):
    s = ins.shape
    if not isinstance(s, ir.TupleShape) or len(s.elements) < 2:
        raise error_at(ins, "copy-start must have the shape (destination, source, context)")
    ctx_vals = tuple(zero_value(c) for c in s.elements[2:])

    def run(x):
        return (x, x) + ctx_vals
    return run


@kernel("copy-done")
def _k_copy_done(ins, ctx):
    def run(v):
        if not isinstance(v, tuple) or len(v) < 2:
            raise error_at(ins, "copy-done: the operand is not the value of a copy-start")
        return v[0]
    return run
