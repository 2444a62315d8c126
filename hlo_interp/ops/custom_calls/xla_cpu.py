"""Targets XLA:CPU's runtime handles itself: identities (MoveToHost, MoveToDevice, ShardBarrierFrom/To,
annotate_device_placement, LayoutConstraint, SetBound), AllocateBuffer (zeros: XLA leaves it
uninitialized), GetRngSeed (a u64 from the module's rng counter: XLA's differs every run) and the
oneDNN layer norm `__onednn$layernorm` (see _t_onednn_layernorm).
"""
from __future__ import annotations

import struct

import numpy as np

from ..registry import error_at
from .registry import backend_config_dict, shape_text, target

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



# --------------------------------------------------------------------------------------------------
# oneDNN layer norm (XLA:CPU's onednn_ops_rewriter.cc writes it for the layer norms of Flax and
# TF-Keras; xla/service/cpu/onednn_layer_norm.cc runs it)


@target("__onednn$layernorm")
def _t_onednn_layernorm(ins, ctx):
    """custom-call(x, scale, shift), backend_config={"onednn_layer_norm_config": {"rescale":
    "SCALE_AND_SHIFT", "epsilon_typecast": "<the f32 epsilon's bits as an int32>"}}: oneDNN's
    forward-inference layer normalization over the last dimension, with scale and shift (XLA's runtime
    always passes both, whatever `rescale` says):
        y = scale * (x - mean) / sqrt(var + eps) + shift,  mean and (biased) var over the last dim,
    in f32 (a bf16/f16 x is widened, y rounded back to x's type; scale and shift are f32).  The
    statistics here are NumPy's f32 sums, the last step one fused multiply-add; oneDNN's JIT kernel
    sums in another order, so results agree with XLA:CPU's within a few ulp of the row's scale, not
    bit for bit: max |diff| <= 5e-7 * max |y| in f32 (measured up to 3.5e-7), 1 ulp in bf16
    (tests/golden/custom_call/onednn_layernorm_*)."""
    if len(ins.operands) != 3:
        raise error_at(ins, f"custom-call __onednn$layernorm takes (input, scale, shift), got {len(ins.operands)} "
                            "operand(s)")
    xs, gs, bs = ctx.operand_shapes(ins)
    out = ins.shape
    for what, sh in (("input", xs), ("scale", gs), ("shift", bs)):
        if sh is None or sh.is_tuple or sh.is_token:
            raise error_at(ins, f"custom-call __onednn$layernorm: the {what} must be an array")
    if not xs.dims or tuple(gs.dims) != (xs.dims[-1],) or tuple(bs.dims) != (xs.dims[-1],):
        raise error_at(ins, f"custom-call __onednn$layernorm: scale and shift must be [{xs.dims[-1] if xs.dims else '?'}] "
                            f"(the input's last dimension); got {shape_text(gs)} and {shape_text(bs)}")
    if out is None or out.is_tuple or _logical(out) != _logical(xs):
        raise error_at(ins, f"custom-call __onednn$layernorm returns the input's shape {shape_text(xs)}, "
                            f"declared {shape_text(out)}")
    cfg = backend_config_dict(ins).get("onednn_layer_norm_config")
    if not isinstance(cfg, dict) or "epsilon_typecast" not in cfg:
        raise error_at(ins, "custom-call __onednn$layernorm needs backend_config "
                            "{\"onednn_layer_norm_config\": {\"epsilon_typecast\": ...}}")
    try:
        bits = int(cfg["epsilon_typecast"])
        eps = np.float32(struct.unpack("<f", struct.pack("<i", bits))[0])
    except (ValueError, struct.error, OverflowError):
        raise error_at(ins, f"custom-call __onednn$layernorm: epsilon_typecast {cfg['epsilon_typecast']!r} is not "
                            "an int32 (the bits of an f32)") from None
    out_dt = out.element_type.dtype
    f32 = np.float32

    def run(x, g, b):
        xf = np.asarray(x).astype(f32)
        n = f32(xf.shape[-1])
        with np.errstate(all="ignore"):
            mean = (xf.sum(axis=-1, dtype=f32) / n).astype(f32)
            d = (xf - mean[..., None]).astype(f32)
            var = ((d * d).sum(axis=-1, dtype=f32) / n).astype(f32)
            inv = (f32(1) / np.sqrt((var + eps).astype(f32))).astype(f32)
            t = (d * inv[..., None]).astype(f32)
            y = (t.astype(np.float64) * np.asarray(g, f32) + np.asarray(b, f32)).astype(f32)  # one rounding: fma
        return y.astype(out_dt)
    return run
