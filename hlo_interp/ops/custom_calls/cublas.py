"""The cuBLAS GEMM targets of XLA:GPU dumps, __cublas$gemm and __cublas$lt$matmul: alpha·dot + beta·c
with the GemmBackendConfig's dimension numbers, epilogues DEFAULT/RELU/BIAS/BIAS_RELU (others refused).
"""
from __future__ import annotations

import numpy as np

from ..registry import error_at, unsupported
from .registry import backend_config_dict, shape_text, target

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
    from ..dot import dot_general
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
            raise unsupported(ins, f"{name} with result {shape_text(out)} (auxiliary outputs)")
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
                                f"declares {shape_text(out)}")
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

