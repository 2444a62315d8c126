"""custom-call: a registry of targets, and the targets XLA and JAX emit in real CPU dumps.

The `custom-call` kernel looks up `custom_call_target` in two tables:
  * built-in targets, registered with `@target("name", ...)` by a builder `(ins, ctx) -> closure`
    exactly like kernels (see registry.py): the builder decodes attributes once, the closure gets the
    operand values;
  * user targets, registered with `register(name, fn)` (exported as
    `hlo_interp.register_custom_call`): `fn(*arrays, backend_config=..., shape=...)` returns an array
    (or a tuple of arrays / nested tuples for a tuple shape).  `backend_config` is the attribute's raw
    text (None when absent), `shape` the instruction's declared ir shape.  The result is checked
    against the declared shape (dimensions) and converted to its element types.  A user target
    overrides a built-in one of the same name.
An unknown target fails (when the plan is built, located at the instruction) with a message naming the
target and saying how to register a Python implementation: never a silently wrong answer.

Built-in targets (on one device):
  * TopK: (values, s32 indices) of the k largest along the last dimension, k = the result's last
    dimension.  For f32, XLA:CPU runs its runtime TopK, which ignores the comparator: total order
    (+NaN largest, -0 < +0), lower index first on ties.  For other types XLA decomposes TopK into a
    sort by the comparator (2 parameters: values; 4: values and s32 indices), then a slice: the same
    here (stable sort by the comparator, the first k).
  * Sharding, SPMDFullToShardShape, SPMDShardToFullShape, xla.sdy.FuncResultSharding: sharding
    annotations; on one device the value itself.  A shard/full shape change (a program partitioned
    over several devices) is refused: it needs a multi-device run.
  * __cublas$gemm, __cublas$lt$matmul (XLA:GPU dumps): alpha·dot + beta·c with the
    GemmBackendConfig's dimension numbers, epilogues DEFAULT/RELU/BIAS/BIAS_RELU (others refused).
  * LAPACK FFI targets JAX's linalg emits on CPU (lapack.py): lapack_?potrf_ffi, ?trsm, ?getrf,
    ?geqrf, ?orgqr/?ungqr, ?geqp3, ?gehrd, ?sytrd/?hetrd, ?gtsv, ?syevd/?heevd, ?geev (left vectors too),
    ?gees, ?gesdd, ?gesvd,
    and what JAX lowers lu/qr/cholesky/eigh/svd/eig/tridiagonal to for CUDA and ROCm: cusolver_/
    hipsolver_ potrf, syevd, getrf, geqrf, orgqr, sytrd, gesvdj (_ffi), cu_/hip_lu_pivots_to_permutation,
    cuhybrid_/hiphybrid_ eig_real, eig_comp, geqp3, cusparse_/hipsparse_gtsv2_ffi.
  * SliceToDynamic / PadToStatic (XLA's dynamic padder): between static arrays and dynamic ones.
  * the cuDNN convolutions of XLA:GPU dumps: __cudnn$convForward, __cudnn$convBackwardInput,
    __cudnn$convBackwardFilter, __cudnn$convBiasActivationForward (see _t_cudnn_conv).
  * identities on XLA:CPU: MoveToHost, MoveToDevice, ShardBarrierFrom/To, annotate_device_placement,
    LayoutConstraint, SetBound; AllocateBuffer (zeros: XLA leaves it uninitialized); GetRngSeed (a u64
    from the module's rng counter: XLA's differs every run); Qr (LAPACK ?geqrf's packed result).
Everything else (e.g. TPU's Eigh, __onednn$layernorm) is unknown.  This module also holds the kernel of the scaled-dot
opcode (XLA's ScaledDotRewriter lowering; see _k_scaled_dot), which belongs with ops/dot.py.  (shard_map's xla.sdy.GlobalToLocalShape / LocalToGlobalShape are rewritten by
hlo_interp/spmd.py before a multi-device run.)
"""
from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import ml_dtypes
import numpy as np

from .. import ir
from .registry import error_at, kernel, unsupported

TARGETS: dict[str, Callable] = {}   # built-in: name -> builder (ins, ctx) -> closure
USER_TARGETS: dict[str, Callable] = {}  # register(): name -> fn(*arrays, backend_config=, shape=)


def target(*names: str) -> Callable[[Callable], Callable]:
    """Register a built-in custom-call target builder `(ins, ctx) -> closure` under one or more names."""
    def deco(fn: Callable) -> Callable:
        for n in names:
            if n in TARGETS and TARGETS[n] is not fn:
                raise RuntimeError(f"two builders registered for custom-call target {n!r}")
            TARGETS[n] = fn
        return fn
    return deco


def register(name: str, fn: Callable | None) -> None:
    """Register a Python implementation of custom-call target `name` (None removes it):
    `fn(*arrays, backend_config=str|None, shape=ir.Shape)` -> array, or a tuple for a tuple shape."""
    if not isinstance(name, str) or not name:
        raise TypeError("register(name, fn): name must be a non-empty string")
    if fn is None:
        USER_TARGETS.pop(name, None)
        return
    if not callable(fn):
        raise TypeError(f"register({name!r}, fn): fn must be callable")
    USER_TARGETS[name] = fn


def registered_targets() -> list[str]:
    """The names of every target that runs (built-in and user)."""
    return sorted(set(TARGETS) | set(USER_TARGETS))


# --------------------------------------------------------------------------------------------------
# attribute helpers (for builders)

def backend_config_text(ins) -> str | None:
    """The backend_config attribute's text (JSON, MLIR dictionary or plain string), or None."""
    bc = ins.attrs.get("backend_config")
    if bc is None:
        return None
    if isinstance(bc, str):
        return bc
    text = getattr(bc, "text", None)
    return text if isinstance(text, str) else str(bc)


def _split_top(body: str) -> list[str]:
    """Split at commas outside quotes and brackets."""
    parts, depth, cur, quote, esc = [], 0, [], False, False
    for ch in body:
        if quote:
            cur.append(ch)
            if esc:
                esc = False
            elif ch == "\\":
                esc = True
            elif ch == '"':
                quote = False
            continue
        if ch == '"':
            quote = True
        elif ch in "([{<":
            depth += 1
        elif ch in ")]}>":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append("".join(cur))
            cur = []
            continue
        cur.append(ch)
    if "".join(cur).strip():
        parts.append("".join(cur))
    return parts


def _mlir_value(val: str) -> Any:
    if val.startswith('"') and val.endswith('"') and len(val) >= 2:
        return val[1:-1]
    head = val.rsplit(":", 1)[0].strip() if ":" in val and not val.startswith(("[", "{", "array", "dense")) else val
    if head in ("true", "false"):
        return head == "true"
    for conv in (int, float):
        try:
            return conv(head)
        except ValueError:
            pass
    return val  # arrays, nested dictionaries, ...: the text as written


def backend_config_dict(ins) -> dict[str, Any]:
    """The backend_config as a dict: JSON objects, or the MLIR dictionary form JAX's FFI calls print
    (`{diag = 85 : ui8, side = 76 : ui8, flag = true, s = "x"}`: integers and floats with their type
    dropped; arrays and nested dictionaries kept as their text)."""
    text = backend_config_text(ins)
    if text is None:
        return {}
    text = text.strip()
    if not text or text == "{}":
        return {}
    try:
        import json
        v = json.loads(text)
        return v if isinstance(v, dict) else {}
    except ValueError:
        pass
    body = text[1:-1] if text.startswith("{") and text.endswith("}") else text
    out: dict[str, Any] = {}
    for item in _split_top(body):
        key, eq, val = item.partition("=")
        key = key.strip().strip('"')
        if not eq or not re.fullmatch(r"[A-Za-z_][\w.$-]*", key):
            raise error_at(ins, f"cannot read backend_config {text!r}")
        out[key] = _mlir_value(val.strip())
    return out


def called(ins) -> tuple[str, ...]:
    cc = ins.attrs.get("called_computations")
    if cc:
        return tuple(cc)
    ta = ins.attrs.get("to_apply")
    return (ta,) if ta else ()


def _shape_str(shape) -> str:
    return "?" if shape is None else shape.text(layouts=False)


# --------------------------------------------------------------------------------------------------
# the custom-call kernel

def _unknown_message(name: str) -> str:
    return (f"unknown custom-call target {name!r}: no implementation is registered. Register a Python "
            f"one with hlo_interp.register_custom_call({name!r}, fn), where fn(*arrays, backend_config=..., "
            f"shape=...) returns the result array (a tuple of arrays for a tuple shape)")


def _convert_result(ins, name, value, shape, where=""):
    if shape.is_tuple:
        if not isinstance(value, (tuple, list)) or len(value) != len(shape.elements):
            raise error_at(ins, f"custom-call target {name!r} returned {type(value).__name__}{where}; "
                                f"the instruction's shape is {_shape_str(shape)}")
        return tuple(_convert_result(ins, name, v, s, f"{where}[{i}]")
                     for i, (v, s) in enumerate(zip(value, shape.elements)))
    if shape.is_token:
        from .registry import TOKEN
        return TOKEN
    try:
        arr = np.asarray(value)
        dt = shape.element_type.dtype
        with np.errstate(all="ignore"):
            arr = arr.astype(dt, copy=False)
    except Exception as e:  # noqa: BLE001 - a user value NumPy cannot convert
        raise error_at(ins, f"custom-call target {name!r} returned a value{where} that is not an array of "
                            f"{shape.element_type.name}: {e}") from None
    if tuple(arr.shape) != tuple(shape.dims):
        raise error_at(ins, f"custom-call target {name!r} returned shape {list(arr.shape)}{where}; the "
                            f"instruction declares {_shape_str(shape)}")
    return arr


def _user_builder(name: str, fn: Callable, ins):
    bc = backend_config_text(ins)
    shape = ins.shape

    def run(*args):
        try:
            r = fn(*args, backend_config=bc, shape=shape)
        except Exception as e:  # noqa: BLE001 - the user's code: report it located, no traceback
            raise error_at(ins, f"custom-call target {name!r} (Python implementation) raised "
                                f"{type(e).__name__}: {e}") from None
        return _convert_result(ins, name, r, shape)
    return run


@kernel("custom-call")
def _k_custom_call(ins, ctx):
    name = ins.attrs.get("custom_call_target")
    if name in USER_TARGETS:
        return _user_builder(name, USER_TARGETS[name], ins)
    builder = TARGETS.get(name)
    if builder is None:
        raise unsupported(ins, _unknown_message(name))
    return builder(ins, ctx)


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
            raise unsupported(ins, f"custom-call {name} changes the shape {_shape_str(s)} -> "
                                   f"{_shape_str(out)}: a program partitioned over several devices "
                                   f"needs a multi-device run")
        if s.element_type != out.element_type:
            raise error_at(ins, f"custom-call {name} changes the element type {_shape_str(s)} -> "
                                f"{_shape_str(out)}")

    def run(x):
        return x
    run.inline = lambda args: args[0]
    return run


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
        raise error_at(ins, f"custom-call {name} returns its operand: the result shape {_shape_str(out)} "
                            f"differs from the operand's {_shape_str(s)}")

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
    from .rng import _module_state
    out = ins.shape
    if ins.operands or out is None or out.is_tuple or out.element_type.name != "u64" or tuple(out.dims):
        raise error_at(ins, "custom-call GetRngSeed takes no operand and returns u64[]")
    st = _module_state(ctx)

    def run():
        return np.uint64(st.get_and_add(1)[0])
    return run


@target("Qr")
def _t_qr(ins, ctx):
    """XLA's Qr (QrExpander's input): (a [..., m, n], taus [..., min(m, n)]) with R above the diagonal
    and the Householder vectors below it, LAPACK ?geqrf's packing (which XLA:CPU's values match to
    rounding)."""
    from .lapack import lapack_geqrf
    (s,) = ctx.operand_shapes(ins)
    if s is None or s.is_tuple or s.rank < 2 or s.element_type.name not in ("f32", "f64", "c64", "c128"):
        raise error_at(ins, "custom-call Qr takes one f32/f64/c64/c128 array of rank >= 2")

    def run(a):
        return lapack_geqrf(np.asarray(a))
    return run


# --------------------------------------------------------------------------------------------------
# TopK

@target("TopK")
def _t_topk(ins, ctx):
    from .sort import _CmpError, comparator_topk, topk
    if len(ins.operands) != 1:
        raise error_at(ins, f"custom-call TopK takes one operand, got {len(ins.operands)}")
    (s,) = ctx.operand_shapes(ins)
    out = ins.shape
    if s is None or s.is_tuple or not s.dims:
        raise error_at(ins, "custom-call TopK: the operand must be an array of rank >= 1")
    if out is None or not out.is_tuple or len(out.elements) != 2 or out.elements[0].is_tuple or \
            out.elements[1].is_tuple:
        raise error_at(ins, f"custom-call TopK: the result must be (values, indices), got {_shape_str(out)}")
    vs, ix = out.elements
    k = vs.dims[-1] if vs.dims else -1
    if tuple(vs.dims) != tuple(s.dims[:-1]) + (k,) or tuple(ix.dims) != tuple(vs.dims) or \
            not 0 <= k <= s.dims[-1] or vs.element_type != s.element_type:
        raise error_at(ins, f"custom-call TopK: result {_shape_str(out)} does not fit operand {_shape_str(s)}")
    idx_dt = ix.element_type.dtype
    comps = called(ins)
    if s.element_type.name == "f32" or not comps:
        # XLA:CPU's runtime TopK (f32): total order, lower index first; the comparator is not called
        if s.element_type.name != "f32":
            raise error_at(ins, "custom-call TopK needs a comparator (called_computations) for "
                                f"{s.element_type.name}")

        def run(x):
            try:
                v, i = topk(x, k, True)
            except _CmpError as e:
                raise error_at(ins, f"TopK: {e}") from None
            return (v, i.astype(idx_dt))
        return run

    return comparator_topk(ins, ctx, comps[0], k, idx_dt, "custom-call TopK")


# --------------------------------------------------------------------------------------------------
# cuBLAS GEMM targets of XLA:GPU dumps

_GEMM_EPILOGUES = ("DEFAULT", "RELU", "BIAS", "BIAS_RELU")


def _ints(v) -> tuple[int, ...]:
    return tuple(int(x) for x in (v or ()))


@target("__cublas$gemm", "__cublas$lt$matmul")
def _t_gemm(ins, ctx):
    """XLA:GPU's GEMM: result = alpha·dot(a, b) + beta·c (c: the third operand when beta != 0), then the
    epilogue (cublasLt: BIAS adds a bias vector along the last result dimension, RELU max(·, 0)).  The
    backend_config is a GemmBackendConfig (at the top level or under "gemm_backend_config").  The result
    is the array or (array, s8 workspace) (the workspace is zeros).  Computed as XLA:CPU computes dot
    (f16/bf16 in f32, one rounding at the end)."""
    from .dot import dot_general
    name = ins.attrs.get("custom_call_target")
    cfg = backend_config_dict(ins)
    g = cfg.get("gemm_backend_config", cfg)
    if not isinstance(g, dict) or "dot_dimension_numbers" not in g:
        raise error_at(ins, f"custom-call {name}: backend_config has no gemm_backend_config with "
                            f"dot_dimension_numbers")
    dn = g["dot_dimension_numbers"]
    lb, rb = _ints(dn.get("lhs_batch_dimensions")), _ints(dn.get("rhs_batch_dimensions"))
    lc, rc = _ints(dn.get("lhs_contracting_dimensions")), _ints(dn.get("rhs_contracting_dimensions"))
    alpha = complex(float(g.get("alpha_real", 1)), float(g.get("alpha_imag", 0)))
    beta = float(g.get("beta", 0))
    epilogue = str(g.get("epilogue", "DEFAULT"))
    if epilogue not in _GEMM_EPILOGUES or (name == "__cublas$gemm" and epilogue != "DEFAULT"):
        raise unsupported(ins, f"{name} with epilogue {epilogue}")
    if g.get("damax_output"):
        raise unsupported(ins, f"{name} with damax_output")
    out = ins.shape
    ws = None
    if out is not None and out.is_tuple:
        if len(out.elements) != 2 or out.elements[0].is_tuple:
            raise unsupported(ins, f"{name} with result {_shape_str(out)} (auxiliary outputs)")
        out, ws = out.elements
    n_expected = 2 + (beta != 0) + ("BIAS" in epilogue)
    if len(ins.operands) != n_expected:
        raise error_at(ins, f"custom-call {name}: {len(ins.operands)} operands; beta={beta:g} and epilogue "
                            f"{epilogue} need {n_expected}")
    odt = np.dtype(out.element_type.dtype)
    cdt = np.dtype(np.complex128 if odt.kind == "c" and odt.itemsize == 16 else np.complex64 if odt.kind == "c"
                   else np.float64 if odt == np.float64 else np.float32) if odt.kind in "fcV" or \
        out.element_type.name in ("bf16", "f16") else None
    if cdt is None:
        raise unsupported(ins, f"{name} with result type {out.element_type.name}")

    def run(a, b, *rest):
        rest = list(rest)
        r = dot_general(np.asarray(a), np.asarray(b), cdt, lhs_batch=lb, rhs_batch=rb, lhs_contracting=lc,
                        rhs_contracting=rc)
        if tuple(r.shape) != tuple(out.dims):
            raise error_at(ins, f"custom-call {name}: the product has shape {list(r.shape)}, the instruction "
                                f"declares {_shape_str(out)}")
        with np.errstate(all="ignore"):
            if alpha != 1:
                r = r * (alpha if cdt.kind == "c" else alpha.real)
            if beta != 0:
                r = r + np.asarray(rest.pop(0)).astype(cdt) * beta
            if "BIAS" in epilogue:
                r = r + np.asarray(rest.pop(0)).astype(cdt)
            if "RELU" in epilogue:
                r = np.maximum(r, 0)
            r = np.asarray(r).astype(odt)
        if ws is not None:
            return (r, np.zeros(tuple(ws.dims), ws.element_type.dtype))
        return r
    return run


# --------------------------------------------------------------------------------------------------
# dynamic shapes: SliceToDynamic, PadToStatic (what XLA's dynamic padder leaves at the boundaries)

@target("SliceToDynamic")
def _t_slice_to_dynamic(ins, ctx):
    """SliceToDynamic(x, size_0, ..., size_{r-1}) -> x with dynamic sizes: the leading size_d entries of
    each dimension d (XLA's runtime compacts them into the dynamic layout: xla/service/gpu's
    EmitSliceToDynamic; values are logical arrays here, so it is the slice x[:size_0, ...]).  A size
    outside [0, the result's bound] is refused, as set-dimension-size does; a static result dimension
    keeps its size."""
    shapes = ctx.operand_shapes(ins)
    out = ins.shape
    if out is None or out.is_tuple or not shapes or shapes[0].is_tuple:
        raise error_at(ins, "custom-call SliceToDynamic takes an array and returns an array")
    r = len(shapes[0].dims)
    if len(shapes) != r + 1 or any(s.is_tuple or s.dims for s in shapes[1:]):
        raise error_at(ins, f"custom-call SliceToDynamic takes the array and {r} scalar sizes, got "
                            f"{len(shapes) - 1} more operand(s)")
    if tuple(out.dims) != tuple(shapes[0].dims):
        raise error_at(ins, f"custom-call SliceToDynamic: the result's bounds {list(out.dims)} are not the "
                            f"operand's dimensions {list(shapes[0].dims)}")
    dyn = tuple(out.dynamic) if out.dynamic else (False,) * r

    def run(x, *sizes):
        idx = []
        for d, (n, sz) in enumerate(zip(x.shape, sizes)):
            k = int(np.asarray(sz))
            if not dyn[d]:
                idx.append(slice(None))
                continue
            if not 0 <= k <= n:
                raise unsupported(ins, f"SliceToDynamic size {k} for dimension {d} outside [0, {n}]")
            idx.append(slice(0, k))
        return np.ascontiguousarray(x[tuple(idx)])
    return run


@target("PadToStatic")
def _t_pad_to_static(ins, ctx):
    """PadToStatic(x) -> (x in an array of the static bounds, s32 size of each dimension): the inverse of
    SliceToDynamic (xla/service/gpu's EmitPadToStatic: the dynamic data spread into the padded layout).
    XLA leaves the padding unspecified; it is zeros here."""
    (s,) = ctx.operand_shapes(ins)
    out = ins.shape
    if s is None or s.is_tuple or out is None or not out.is_tuple or len(out.elements) != len(s.dims) + 1:
        raise error_at(ins, f"custom-call PadToStatic: the result must be (array, one s32 per dimension), got "
                            f"{_shape_str(out)}")
    data, sizes = out.elements[0], out.elements[1:]
    if data.is_tuple or tuple(data.dims) != tuple(s.dims) or any(z.is_tuple or z.dims for z in sizes):
        raise error_at(ins, f"custom-call PadToStatic: result {_shape_str(out)} does not fit operand {_shape_str(s)}")
    bounds = tuple(data.dims)
    odt = data.element_type.dtype

    def run(x):
        x = np.asarray(x)
        if x.ndim != len(bounds) or any(a > b for a, b in zip(x.shape, bounds)):
            raise error_at(ins, f"custom-call PadToStatic: operand {list(x.shape)} exceeds the bounds {list(bounds)}")
        full = np.zeros(bounds, odt)
        full[tuple(slice(0, a) for a in x.shape)] = x
        return (full,) + tuple(np.asarray(a, z.element_type.dtype) for a, z in zip(x.shape, sizes))
    return run


# --------------------------------------------------------------------------------------------------
# cuDNN convolution targets of XLA:GPU dumps

_CUDNN_TARGETS = ("__cudnn$convForward", "__cudnn$convBackwardInput", "__cudnn$convBackwardFilter",
                  "__cudnn$convBiasActivationForward")
# CudnnConvBackendConfig's activation_mode (xla/service/gpu/backend_configs.proto, ActivationMode in
# xla/stream_executor/dnn.proto): names and the old numeric strings
_ACTIVATIONS = {"0": "kNone", "1": "kSigmoid", "2": "kRelu", "3": "kRelu6", "4": "kReluX", "5": "kTanh",
                "6": "kBandPass", "7": "kElu", "8": "kLeakyRelu", "9": "kGeluExact"}
_ACT_FNS = {
    "kNone": lambda r, a: r,
    "kRelu": lambda r, a: np.maximum(r, 0),
    "kRelu6": lambda r, a: np.minimum(np.maximum(r, 0), 6),
    "kElu": lambda r, a: np.where(r > 0, r, np.expm1(np.minimum(r, 0))),
    "kLeakyRelu": lambda r, a: np.where(r > 0, r, r * a),
    "kSigmoid": lambda r, a: 0.5 * np.tanh(0.5 * r) + 0.5,
    "kTanh": lambda r, a: np.tanh(r),
}


def _cudnn_config(ins) -> dict:
    """The CudnnConvBackendConfig: under "cudnn_conv_backend_config" (GpuBackendConfig, current XLA) or
    at the top level (older dumps, snake_case or camelCase keys, or `{conv_result_scale:1}` without
    quotes); missing keys take the proto defaults."""
    try:
        cfg = backend_config_dict(ins)
    except Exception:  # noqa: BLE001 - not JSON nor an MLIR dictionary: read key:value pairs
        text = backend_config_text(ins) or ""
        cfg = {k: v.strip('"') for k, v in re.findall(r'"?([A-Za-z_]\w*)"?\s*:\s*("[^"]*"|[-+\w.]+)', text)}
    inner = cfg.get("cudnn_conv_backend_config")
    if isinstance(inner, dict):
        cfg = inner
    camel = {"convResultScale": "conv_result_scale", "sideInputScale": "side_input_scale",
             "activationMode": "activation_mode", "leakyreluAlpha": "leakyrelu_alpha"}
    out = {}
    for k, v in cfg.items():
        out[camel.get(k, k)] = v

    def num(key, default):
        try:
            return float(out.get(key, default))
        except (TypeError, ValueError):
            raise error_at(ins, f"custom-call {ins.attrs.get('custom_call_target')}: backend_config {key}="
                                f"{out.get(key)!r} is not a number") from None
    mode = str(out.get("activation_mode", "kNone"))
    mode = _ACTIVATIONS.get(mode, mode)
    return {"conv_result_scale": num("conv_result_scale", 1), "side_input_scale": num("side_input_scale", 0),
            "leakyrelu_alpha": num("leakyrelu_alpha", 0), "activation_mode": mode}


def _compute_dtype(dt) -> np.dtype | None:
    dt = np.dtype(dt)
    if dt == np.float64:
        return dt
    if dt.kind == "f" or dt.name in ("bfloat16", "float16") or (dt.kind == "V" and dt.itemsize <= 4):
        return np.dtype(np.float32)
    return None


def _canon_conv(ins, dl, window, k):
    """The window dims (checked for cuDNN: no base dilation) and the canonical transposes."""
    dims = tuple(window.dims) if window is not None else ()
    if not dims:
        dims = tuple(ir.WindowDim() for _ in range(k))
    if len(dims) != k:
        raise error_at(ins, f"custom-call {ins.attrs.get('custom_call_target')}: window has {len(dims)} "
                            f"dimensions, dim_labels {dl.text} have {k} spatial ones")
    for d in dims:
        if d.lhs_dilate != 1:
            raise unsupported(ins, f"{ins.attrs.get('custom_call_target')} with base (lhs) dilation")
        if d.size < 1 or d.stride < 1 or d.rhs_dilate < 1:
            raise error_at(ins, f"custom-call {ins.attrs.get('custom_call_target')}: invalid window dimension")
    return dims


def _pad_spatial(x, dims, k):
    """x (N, C, S...) with each spatial dim padded low/high (negative: cropped)."""
    for j, d in enumerate(dims):
        ax = 2 + j
        lo, hi = d.pad_low, d.pad_high
        n = x.shape[ax]
        start, stop = max(-lo, 0), n - max(-hi, 0)
        if stop < start:
            raise ValueError("padding gives a negative dimension")
        sl = [slice(None)] * x.ndim
        sl[ax] = slice(start, stop)
        x = x[tuple(sl)]
        widths = [(0, 0)] * x.ndim
        widths[ax] = (max(lo, 0), max(hi, 0))
        x = np.pad(x, widths)
    return x


def _kernel_offsets(dims, wshape):
    return np.ndindex(*wshape[2:]) if wshape[2:] else [()]


def conv_backward_input(dy, w, dims, in_spatial, G, cdt):
    """dx of y = conv(x, w) (canonical layouts: dy (N, O, T...), w (O, I, K...), result (N, I*G, S...)),
    window dims without base dilation: the adjoint of the forward map, accumulated in `cdt`."""
    N, O = dy.shape[:2]
    I = w.shape[1]
    Og = O // G
    padded = tuple(n + d.pad_low + d.pad_high for n, d in zip(in_spatial, dims))
    if any(p < 0 for p in padded):
        raise ValueError("padding gives a negative dimension")
    dxp = np.zeros((N, I * G) + padded, cdt)
    dyc = dy.astype(cdt, copy=False)
    wc = w.astype(cdt, copy=False)
    T = dy.shape[2:]
    for kk in _kernel_offsets(dims, w.shape):
        wk = wc[(slice(None), slice(None)) + tuple(kk)]                      # (O, I)
        sl = tuple(slice(k_ * d.rhs_dilate, k_ * d.rhs_dilate + (t - 1) * d.stride + 1, d.stride) if t else slice(0, 0)
                   for k_, d, t in zip(kk, dims, T))
        for g in range(G):
            part = np.einsum("no...,oi->ni...", dyc[:, g * Og:(g + 1) * Og], wk[g * Og:(g + 1) * Og])
            dxp[(slice(None), slice(g * I, (g + 1) * I)) + sl] += part
    # back to x's coordinates: x[i] sits at padded position i + pad_low (cropped inputs get zero gradient)
    out = np.zeros((N, I * G) + tuple(in_spatial), cdt)
    src, dst = [slice(None), slice(None)], [slice(None), slice(None)]
    for n, d, p in zip(in_spatial, dims, padded):
        lo = d.pad_low
        i0, i1 = max(0, -lo), min(n, p - lo)
        i1 = max(i0, i1)
        dst.append(slice(i0, i1))
        src.append(slice(i0 + lo, i1 + lo))
    out[tuple(dst)] = dxp[tuple(src)]
    return out


def conv_backward_filter(x, dy, dims, kshape, G, cdt):
    """dw of y = conv(x, w) (canonical: x (N, C, S...), dy (N, O, T...), result (O, C/G, K...))."""
    C = x.shape[1]
    O = dy.shape[1]
    I, Og = C // G, O // G
    xp = _pad_spatial(x.astype(cdt, copy=False), dims, len(dims))
    dyc = dy.astype(cdt, copy=False)
    T = dy.shape[2:]
    dw = np.zeros((O, I) + tuple(kshape), cdt)
    for kk in (np.ndindex(*kshape) if kshape else [()]):
        sl = []
        for k_, d, t in zip(kk, dims, T):
            a = k_ * d.rhs_dilate
            sl.append(slice(a, a + (t - 1) * d.stride + 1, d.stride) if t else slice(0, 0))
        xs = xp[(slice(None), slice(None)) + tuple(sl)]                      # (N, C, T...)
        if xs.shape[2:] != T:
            raise ValueError("the window does not fit the input")
        for g in range(G):
            red = [0] + list(range(2, 2 + len(T)))
            dw[(slice(g * Og, (g + 1) * Og), slice(None)) + tuple(kk)] = np.tensordot(
                dyc[:, g * Og:(g + 1) * Og], xs[:, g * I:(g + 1) * I], axes=(red, red))
    return dw


@target(*_CUDNN_TARGETS)
def _t_cudnn_conv(ins, ctx):
    """XLA:GPU's cuDNN convolutions (xla/service/gpu/cublas_cudnn.h, the conv rewriters): window,
    dim_labels and feature_group_count describe the FORWARD convolution y = conv(x, w); the result is
    (array, u8[n] scratch) (the scratch is zeros here):
      * convForward(x, w) -> y, times conv_result_scale;
      * convBiasActivationForward(x, w, bias[, side_input]) -> activation(conv_result_scale * conv(x, w)
        + side_input_scale * side_input + bias), the bias along the output feature dimension,
        activation kNone / kRelu / kRelu6 / kElu / kLeakyRelu (leakyrelu_alpha) / kSigmoid / kTanh;
      * convBackwardInput(dy, w) -> dx: the gradient of the forward convolution with respect to x
        (dy laid out by the output labels, dx by the input labels);
      * convBackwardFilter(x, dy) -> dw (laid out by the kernel labels).
    Computed in f32 (f64 for f64) and rounded once to the result type.  s8 x s8 forward convolutions
    with a float result are XLA's int8 pattern (convert<f32>(conv<s32>(x, w)), then the epilogue);
    other integer convolutions (an s8 result: cuDNN's rounding and saturation), base dilation,
    batch_group_count and window reversal are refused."""
    from .window import WindowError, convolution
    name = ins.attrs.get("custom_call_target")
    dl = ins.attrs.get("dim_labels")
    if dl is None:
        raise error_at(ins, f"custom-call {name} needs dim_labels=")
    window = ins.attrs.get("window")
    k = len(dl.input_spatial)
    dims = _canon_conv(ins, dl, window, k)
    if any(d.reversal for d in dims):
        raise unsupported(ins, f"{name} with window reversal")
    G = int(ins.attrs.get("feature_group_count") or 1)
    if int(ins.attrs.get("batch_group_count") or 1) != 1:
        raise unsupported(ins, f"{name} with batch_group_count")
    out = ins.shape
    scratch = None
    if out is not None and out.is_tuple:
        if len(out.elements) != 2 or out.elements[0].is_tuple:
            raise error_at(ins, f"custom-call {name}: the result must be (array, u8 scratch), got {_shape_str(out)}")
        out, scratch = out.elements
    if out is None or out.is_tuple:
        raise error_at(ins, f"custom-call {name} needs an array result")
    odt = np.dtype(out.element_type.dtype)
    shapes = ctx.operand_shapes(ins)
    cdt = _compute_dtype(odt)
    in_names = [sh.element_type.name for sh in shapes[:2] if not sh.is_tuple]
    int8 = in_names == ["s8", "s8"] and name in ("__cudnn$convForward", "__cudnn$convBiasActivationForward")
    if cdt is None or (not int8 and any(_compute_dtype(sh.element_type.dtype) is None for sh in shapes[:2]
                                        if not sh.is_tuple)):
        raise unsupported(ins, f"{name} of {', '.join(in_names)} -> {out.element_type.name} (integer "
                               f"convolutions other than s8 x s8 -> float forward ones)")
    cfg = _cudnn_config(ins)
    fused = name == "__cudnn$convBiasActivationForward"
    act = cfg["activation_mode"]
    if fused and act not in _ACT_FNS:
        raise unsupported(ins, f"{name} with activation_mode {act}")
    nops = len(ins.operands)
    if (fused and nops not in (3, 4)) or (not fused and nops != 2):
        raise error_at(ins, f"custom-call {name} takes {'3 or 4' if fused else 2} operands, got {nops}")
    alpha, beta, leaky = cfg["conv_result_scale"], cfg["side_input_scale"], cfg["leakyrelu_alpha"]
    want = tuple(out.dims)
    in_order = (dl.input_batch, dl.input_feature) + tuple(dl.input_spatial)
    k_order = (dl.kernel_output_feature, dl.kernel_input_feature) + tuple(dl.kernel_spatial)
    o_order = (dl.output_batch, dl.output_feature) + tuple(dl.output_spatial)

    def back(r, order):  # canonical -> the labels' layout
        return r.transpose(np.argsort(order))

    def finish(r):
        with np.errstate(all="ignore"):
            r = np.asarray(r).astype(odt)
        if tuple(r.shape) != want:
            raise error_at(ins, f"custom-call {name}: the result has shape {list(r.shape)}, the instruction "
                                f"declares {_shape_str(out)}")
        if scratch is not None:
            return (r, np.zeros(tuple(scratch.dims), scratch.element_type.dtype))
        return r

    def checks(a, b, what_a, what_b, order_a, order_b):
        if a.ndim != k + 2 or b.ndim != k + 2:
            raise error_at(ins, f"custom-call {name}: dim_labels {dl.text} need rank-{k + 2} operands, got "
                                f"{what_a} {list(a.shape)} and {what_b} {list(b.shape)}")
        return a.transpose(order_a), b.transpose(order_b)

    if name == "__cudnn$convBackwardInput":
        def run_bi(dy, w):
            dyc, wc = checks(dy, w, "output gradient", "filter", o_order, k_order)
            O, I = wc.shape[:2]
            in_sp = tuple(want[a] for a in dl.input_spatial)
            if len(want) != k + 2 or want[dl.input_feature] != I * G or O % G or dyc.shape[1] != O or \
                    dyc.shape[0] != want[dl.input_batch] or tuple(wc.shape[2:]) != tuple(d.size for d in dims):
                raise error_at(ins, f"custom-call {name}: output gradient {list(dy.shape)}, filter {list(w.shape)} "
                                    f"and result {list(want)} do not fit dim_labels {dl.text} (feature_group_count {G})")
            from .window import out_sizes
            if tuple(dyc.shape[2:]) != out_sizes(in_sp, dims):
                raise error_at(ins, f"custom-call {name}: the output gradient's spatial sizes "
                                    f"{list(dyc.shape[2:])} are not those the forward convolution of a "
                                    f"{list(in_sp)} input gives")
            with np.errstate(all="ignore"):
                r = conv_backward_input(dyc, wc, dims, in_sp, G, cdt)
                if alpha != 1:
                    r = r * alpha
            return finish(back(r, in_order))
        return run_bi

    if name == "__cudnn$convBackwardFilter":
        def run_bf(x, dy):
            xc, dyc = checks(x, dy, "input", "output gradient", in_order, o_order)
            kshape = tuple(want[a] for a in dl.kernel_spatial) if len(want) == k + 2 else ()
            from .window import out_sizes
            if len(want) != k + 2 or xc.shape[1] % G or want[dl.kernel_input_feature] * G != xc.shape[1] or \
                    want[dl.kernel_output_feature] != dyc.shape[1] or dyc.shape[1] % G or \
                    xc.shape[0] != dyc.shape[0] or kshape != tuple(d.size for d in dims) or \
                    tuple(dyc.shape[2:]) != out_sizes(xc.shape[2:], dims):
                raise error_at(ins, f"custom-call {name}: input {list(x.shape)}, output gradient {list(dy.shape)} "
                                    f"and result {list(want)} do not fit dim_labels {dl.text} and the window "
                                    f"(feature_group_count {G})")
            with np.errstate(all="ignore"):
                r = conv_backward_filter(xc, dyc, dims, kshape, G, cdt)
                if alpha != 1:
                    r = r * alpha
            return finish(back(r, k_order))
        return run_bf

    act_fn = _ACT_FNS.get(act if fused else "kNone")

    def run_fwd(x, w, *rest):
        try:
            if int8:  # XLA's int8 pattern: convert<float>(conv<s32>(x, w)), then the float epilogue
                r = convolution(np.asarray(x), np.asarray(w), np.int32, window, dl, G, 1).astype(cdt)
            else:
                r = convolution(np.asarray(x), np.asarray(w), cdt, window, dl, G, 1)
        except WindowError as e:
            raise error_at(ins, f"custom-call {name}: {e}") from None
        with np.errstate(all="ignore"):
            if alpha != 1:
                r = r * cdt.type(alpha)
            if fused:
                bias = np.asarray(rest[0]).astype(cdt)
                if bias.ndim != 1 or bias.shape[0] != r.shape[dl.output_feature]:
                    raise error_at(ins, f"custom-call {name}: bias {list(bias.shape)} does not match the "
                                        f"{r.shape[dl.output_feature]} output features")
                if len(rest) > 1 and beta != 0:
                    side = np.asarray(rest[1]).astype(cdt)
                    if side.shape != r.shape:
                        raise error_at(ins, f"custom-call {name}: side input {list(side.shape)} does not match "
                                            f"the result {list(r.shape)}")
                    r = r + side * cdt.type(beta)
                shp = [1] * r.ndim
                shp[dl.output_feature] = bias.shape[0]
                r = r + bias.reshape(shp)
                r = act_fn(r, cdt.type(leaky))
        return finish(r)
    return run_fwd


# --------------------------------------------------------------------------------------------------
# scaled-dot (an opcode, not a custom call: kept here because ops/dot.py belongs to another family)

def _scaled_target_type(t1, t2) -> np.dtype:
    """XLA's GetTargetType (xla/backends/gpu/transforms/scaled_dot_rewriter.cc): both narrower than 16
    bits -> bf16; equal -> that type; equal widths -> f32; else the wider one."""
    from ..types import from_dtype
    b1, b2 = from_dtype(t1).bits, from_dtype(t2).bits
    if b1 < 16 and b2 < 16:
        return np.dtype(ml_dtypes.bfloat16)
    if np.dtype(t1) == np.dtype(t2):
        return np.dtype(t1)
    if b1 == b2:
        return np.dtype(np.float32)
    return np.dtype(t1) if b1 > b2 else np.dtype(t2)


def _convert(x, dt):
    from .elementwise import convert
    return convert(x, dt)


def _dequantize(x, scale, side, err):
    """operand * scale, both first converted to their target type; a non-scalar scale must divide
    the operand's dimensions and each scale element covers a block of consecutive elements."""
    t = _scaled_target_type(x.dtype, scale.dtype)
    x, scale = _convert(x, t), _convert(scale, t)
    if scale.ndim:
        if scale.ndim != x.ndim or any(n % m for n, m in zip(x.shape, scale.shape)):
            raise err(f"scaled-dot: the {side} scale {list(scale.shape)} does not divide the {side} "
                      f"{list(x.shape)} dimension by dimension")
        for ax, (n, m) in enumerate(zip(x.shape, scale.shape)):
            if n != m:
                scale = np.repeat(scale, n // m, axis=ax)
    with np.errstate(all="ignore"):
        wide = np.complex128 if t.kind == "c" else np.float64 if t.kind in "fV" or t.name == "bfloat16" else None
        if wide is None:  # integers: the type's own (wrapping) product
            return (x * scale).astype(t)
        return (x.astype(wide) * scale.astype(wide)).astype(t)  # exact product, one rounding


@kernel("scaled-dot")
def _k_scaled_dot(ins, ctx):
    """scaled-dot(lhs, rhs, lhs_scale, rhs_scale), dot dimension numbers: XLA's own lowering
    (ScaledDotRewriter, xla/backends/gpu/transforms/scaled_dot_rewriter.cc: Dequantize(dot, 0, 2),
    Dequantize(dot, 1, 3), UpscaleBoth, a dot in GetTargetType(operand type, result type), then a
    convert to the result type): each operand times its scale (a scalar scale multiplies every
    element; a block scale is repeated over operand_dim / scale_dim consecutive elements), in the
    common type of operand and scale; both operands then converted to one type; the dot.  The NVFP4
    form with global scales (6 operands) is refused.  (Older XLA ordered the operands lhs, lhs_scale,
    rhs, rhs_scale and ignored scalar scales: this follows the current order, which hlo_interp's
    shape rule checks.)"""
    from .dot import dot_general
    if len(ins.operands) != 4:
        raise unsupported(ins, f"scaled-dot with {len(ins.operands)} operands (the global-scale form)")
    a = ins.attrs
    if a.get("sparsity") is not None:
        raise unsupported(ins, "sparse scaled-dot")
    lb, rb = tuple(a.get("lhs_batch_dims", ())), tuple(a.get("rhs_batch_dims", ()))
    lc, rc = tuple(a.get("lhs_contracting_dims", ())), tuple(a.get("rhs_contracting_dims", ()))
    sh = ins.shape
    if sh is None or sh.is_tuple:
        raise error_at(ins, "scaled-dot needs an array result shape")
    out_dt = np.dtype(sh.element_type.dtype)

    def err(msg):
        return error_at(ins, msg)

    def run(lhs, rhs, ls, rs):
        x = _dequantize(np.asarray(lhs), np.asarray(ls), "lhs", err)
        y = _dequantize(np.asarray(rhs), np.asarray(rs), "rhs", err)
        t = _scaled_target_type(x.dtype, y.dtype)
        x, y = _convert(x, t), _convert(y, t)
        for name, v, dims in (("lhs", x, lb + lc), ("rhs", y, rb + rc)):
            if len(set(dims)) != len(dims) or any(not 0 <= d < v.ndim for d in dims):
                raise err(f"scaled-dot: {name} dimensions {list(dims)} are invalid for rank {v.ndim}")
        if any(x.shape[i] != y.shape[j] for i, j in zip(lb + lc, rb + rc)):
            raise err(f"scaled-dot: batch/contracting sizes differ: lhs {list(x.shape)}, rhs {list(y.shape)}")
        dt = _scaled_target_type(t, out_dt)
        r = dot_general(x, y, dt, lhs_batch=lb, rhs_batch=rb, lhs_contracting=lc, rhs_contracting=rc)
        r = _convert(r, out_dt)
        if tuple(r.shape) != tuple(sh.dims):
            raise err(f"scaled-dot: result {list(r.shape)} does not match the instruction's {list(sh.dims)}")
        return r
    return run


from . import lapack  # noqa: E402, F401 - registers the LAPACK targets (after the registry above)
