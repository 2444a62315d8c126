"""Targets XLA:CPU's runtime handles itself: identities (MoveToHost, MoveToDevice, ShardBarrierFrom/To,
annotate_device_placement, LayoutConstraint, SetBound), AllocateBuffer (zeros: XLA leaves it
uninitialized) and GetRngSeed (a u64 from the module's rng counter: XLA's differs every run).
"""
from __future__ import annotations

import numpy as np

from ..registry import error_at
from .registry import shape_text, target

# --------------------------------------------------------------------------------------------------
# identities on XLA:CPU: host offloading, shard barriers, placement and layout annotations, SetBound

_IDENTITY_TARGETS = ("MoveToHost", "MoveToDevice", "ShardBarrierFrom", "ShardBarrierTo",
                     "annotate_device_placement", "LayoutConstraint", "SetBound")


def _logical(shape):
    """A shape's element types and dimensions, without layouts (nested for tuples)."""
    if shape.is_tuple:
        return tuple(_logical(e) for e in shape.elements)
    if shape.is_token:
        return "token"
    return (shape.element_type.name, tuple(shape.dims))


@target(*_IDENTITY_TARGETS)
def _t_identity(ins, ctx):
    """The operand itself (a tuple operand: the tuple), as XLA:CPU runs them: MoveToHost/MoveToDevice
    (host offloading: the value is the same in either memory), ShardBarrierFrom/To (sharding
    propagation barriers), annotate_device_placement (a memory-space annotation), LayoutConstraint (the
    layout is the instruction's own; values are indexed logically here), SetBound (a bound for the
    dynamic-shape machinery; its `literal` does not change the value)."""
    name = ins.attrs.get("custom_call_target")
    if len(ins.operands) != 1:
        raise error_at(ins, f"custom-call {name} takes one operand, got {len(ins.operands)}")
    (s,) = ctx.operand_shapes(ins)
    out = ins.shape
    if s is not None and out is not None and _logical(s) != _logical(out):
        raise error_at(ins, f"custom-call {name} returns its operand: the result shape {shape_text(out)} "
                            f"differs from the operand's {shape_text(s)}")

    def run(x):
        return x
    run.inline = lambda args: args[0]
    return run


@target("AllocateBuffer")
def _t_allocate_buffer(ins, ctx):
    """An uninitialized buffer of the result shape (XLA leaves its contents undefined): zeros here."""
    if ins.operands:
        raise error_at(ins, f"custom-call AllocateBuffer takes no operand, got {len(ins.operands)}")
    out = ins.shape
    if out is None or out.is_tuple or out.element_type.dtype is None:
        raise error_at(ins, "custom-call AllocateBuffer needs an array result shape")
    ctx.check_alloc(ins, out)
    dt, dims = out.element_type.dtype, tuple(out.dims)

    def run():
        return np.zeros(dims, dt)
    return run


@target("GetRngSeed")
def _t_get_rng_seed(ins, ctx):
    """A u64[] seed.  XLA:CPU returns a different value in every execution (not reproducible); here the
    low word of the module's rng state (rng.py, the counter rng-get-and-update-state advances), advanced
    by one per execution: deterministic, and distinct from one execution to the next."""
    from ..rng import module_state
    out = ins.shape
    if ins.operands or out is None or out.is_tuple or out.element_type.name != "u64" or tuple(out.dims):
        raise error_at(ins, "custom-call GetRngSeed takes no operand and returns u64[]")
    st = module_state(ctx)

    def run():
        return np.uint64(st.get_and_add(1)[0])
    return run

