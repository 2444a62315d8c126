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
    ?geqrf, ?orgqr/?ungqr, ?geqp3, ?gehrd, ?sytrd/?hetrd, ?gtsv, ?syevd/?heevd, ?geev, ?gesdd, ?gesvd,
    and what JAX lowers lu/qr/cholesky/eigh/svd/eig/tridiagonal to for CUDA and ROCm: cusolver_/
    hipsolver_ potrf, syevd, getrf, geqrf, orgqr, sytrd, gesvdj (_ffi), cu_/hip_lu_pivots_to_permutation,
    cuhybrid_/hiphybrid_ eig_real, eig_comp, geqp3, cusparse_/hipsparse_gtsv2_ffi.
Everything else (e.g. cuDNN convolutions, TPU's Qr/Eigh, lapack gees) is unknown.  (shard_map's xla.sdy.GlobalToLocalShape / LocalToGlobalShape are rewritten by
hlo_interp/spmd.py before a multi-device run.)
"""
from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import numpy as np

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
    if shape is None:
        return "?"
    if shape.is_tuple:
        return "(" + ", ".join(_shape_str(e) for e in shape.elements) + ")"
    return f"{shape.element_type.name}[{','.join(str(d) for d in shape.dims)}]"


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
# TopK

@target("TopK")
def _t_topk(ins, ctx):
    from .sort import ComparatorSort, _CmpError, sort_arrays, topk
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

    comp = ctx.computation(comps[0], ins)
    nparams = sum(1 for i in comp.instructions if i.opcode == "parameter")
    if nparams not in (2, 4):
        raise error_at(ins, f"custom-call TopK: the comparator {comps[0]} has {nparams} parameters "
                            f"(2 or 4 expected)")
    sorter = ComparatorSort(ctx, comps[0], nparams // 2, ins)

    def run(x):
        last = x.ndim - 1
        iota = np.broadcast_to(np.arange(x.shape[-1], dtype=np.int32), x.shape)
        if nparams == 4:
            v, i = sorter([x, iota], last)
        else:
            def order(flat):
                if sorter.recog is not None:
                    try:
                        return sorter.key_order(flat)
                    except Exception:  # noqa: BLE001 - as ComparatorSort: the next path
                        sorter.recog = None
                if sorter.vc is not None:
                    try:
                        return sorter.general_order(flat)
                    except Exception:  # noqa: BLE001
                        sorter.vc = None
                return sorter.scalar_order(flat)
            v, i = sort_arrays([x, iota], last, lambda flat: order(flat[:1]))
        return (np.ascontiguousarray(v[..., :k]), np.ascontiguousarray(i[..., :k]).astype(idx_dt))
    return run


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


from . import lapack  # noqa: F401 - registers the LAPACK targets
