"""Sharding markers: Sharding, SPMDFullToShardShape, SPMDShardToFullShape, xla.sdy.FuncResultSharding.
On one device each is the value itself; a shard/full shape change (a program partitioned over several
devices) is refused: it needs a multi-device run.  (shard_map's xla.sdy.GlobalToLocalShape /
LocalToGlobalShape are rewritten by hlo_interp/spmd.py before a multi-device run.)
"""
from __future__ import annotations

from ..registry import error_at, unsupported
from .registry import shape_text, target

# --------------------------------------------------------------------------------------------------
# sharding annotations (one device)

@target("Sharding", "SPMDFullToShardShape", "SPMDShardToFullShape", "xla.sdy.FuncResultSharding")
def _t_sharding(ins, ctx):
    name = ins.attrs.get("custom_call_target")
    if len(ins.operands) != 1:
        raise error_at(ins, f"custom-call {name} takes one operand, got {len(ins.operands)}")
    (s,) = ctx.operand_shapes(ins)
    out = ins.shape
    if s is not None and out is not None and not s.is_tuple and not out.is_tuple:
        if tuple(s.dims) != tuple(out.dims):
            raise unsupported(ins, f"custom-call {name} changes the shape {shape_text(s)} -> "
                                   f"{shape_text(out)}: a program partitioned over several devices "
                                   f"needs a multi-device run")
        if s.element_type != out.element_type:
            raise error_at(ins, f"custom-call {name} changes the element type {shape_text(s)} -> "
                                f"{shape_text(out)}")

    def run(x):
        return x
    run.inline = lambda args: args[0]
    return run

