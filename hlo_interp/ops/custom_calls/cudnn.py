"""The cuDNN convolution targets of XLA:GPU dumps: __cudnn$convForward, __cudnn$convBackwardInput,
__cudnn$convBackwardFilter, __cudnn$convBiasActivationForward (see _t_cudnn_conv).
"""
from __future__ import annotations

import re

import numpy as np

from ... import ir
from ..registry import error_at, unsupported
from .registry import backend_config_dict, backend_config_text, shape_text, target

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
    from ..window import WindowError, convolution
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
            raise error_at(ins, f"custom-call {name}: the result must be (array, u8 scratch), got {shape_text(out)}")
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
                                f"declares {shape_text(out)}")
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
            from ..window import out_sizes
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
            from ..window import out_sizes
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

