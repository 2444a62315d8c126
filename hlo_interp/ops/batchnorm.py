"""batch-norm-training, batch-norm-inference, batch-norm-grad.

XLA never runs these ops as such: its BatchNormExpander pass rewrites each one into plain HLO
(broadcasts, reduces with an add computation, multiply/subtract/divide, rsqrt) before code generation,
and XLA:CPU then computes that expansion like any other HLO.  This module does the same: when the plan
is built, each batch-norm instruction is expanded into an HLO module of the same shapes, step for step
as BatchNormExpander writes it (the formulas below), parsed and compiled by this evaluator, and run on
the operand values.  XLA's algebraic simplifier then rewrites the expansion, and XLA:CPU computes the
rewritten form, so the expansion is written here in that form: divisions by N become multiplications
by the constant 1/N (rounded to the type), the grad's division by (var + eps) a multiplication by
1/(var + eps) computed per feature (except for a rank-1 operand, where no broadcast is left to rewrite),
rsqrt(var + eps) is computed per feature and broadcast.  f16, f32,
f64: every intermediate is of the operand's type (f16 rounds after every step and its sums follow
XLA:CPU's order, hlo_interp/ops/reduce.py).  bf16: XLA:CPU's float normalization runs the op in f32
between converts, and so does this module (operands converted to f32, results rounded to bf16 once);
8-bit and smaller floats (f8*, f4e2m1fn) likewise in f16, f8e8m0fnu (whose range f16 lacks) in f32: all
measured against XLA:CPU.

With N the number of elements per feature (the product of the operand's dimensions other than
feature_index, converted to the element type) and eps the epsilon attribute (an f32, converted to
the element type):

  training(x, scale, offset) -> (y, mean, var)
      c = 1 / N;  mean = sum(x) * c;  var = sum(x*x) * c - mean*mean   (biased variance, E[x²] - E[x]²)
      y = (x - mean) * rsqrt(var + eps) * scale + offset
  inference(x, scale, offset, mean, var) -> y
      true_scale = scale * rsqrt(var + eps);  true_shift = offset - mean * true_scale
      y = x * true_scale + true_shift
  grad(x, scale, mean, var, dy) -> (dx, dscale, doffset)
      doffset = sum(dy);  s = sum(dy * (x - mean));  dscale = s * rsqrt(var + eps)
      dx = (scale * rsqrt(var + eps) * c) * ((dy * N - doffset) - (s * (x - mean)) * (1 / (var + eps)))

Sums are over every dimension but feature_index.  Results agree with XLA:CPU to a few ulps in f32/f64
(the sums' order differs: see reduce.py; tests: rtol 2e-5), and bit for bit in every bf16, f16 and
f8 case tested (tests/golden/batch_norm/, tests/test_ops_batch_norm.py).
"""
from __future__ import annotations

import math

import numpy as np

from .. import ir
from .registry import error_at, kernel, unsupported


def _dims(dims) -> str:
    return ",".join(str(d) for d in dims)


def _float_text(v: float) -> str:
    if math.isnan(v):
        return "nan"
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    return repr(float(v))


def _head(t: str, eps: float, n: int, dims: tuple, fi: int) -> tuple[str, list[str]]:
    S = f"{t}[{_dims(dims)}]"
    F = f"{t}[{dims[fi]}]"
    eps32 = float(np.float32(eps))
    lines = [
        f"  zero = {t}[] constant(0)",
        f"  eps32 = f32[] constant({_float_text(eps32)})",
        f"  eps0 = {t}[] convert(eps32)",
        f"  n32 = s32[] constant({n})",
        f"  n = {t}[] convert(n32)",
        f"  one = {t}[] constant(1)",
        f"  c0 = {t}[] divide(one, n)",
        f"  c = {F} broadcast(c0), dimensions={{}}",
    ]
    return S, F, lines


def _module(t: str, params: list[str], body: list[str]) -> str:
    add = (f"scalar_add {{\n  a = {t}[] parameter(0)\n  b = {t}[] parameter(1)\n"
           f"  ROOT s = {t}[] add(a, b)\n}}\n")
    return "HloModule batch_norm_expansion\n\n" + add + "\nENTRY expansion {\n" + "\n".join(params + body) + "\n}\n"


def training_text(t: str, dims: tuple, fi: int, eps: float, n: int) -> str:
    S, F, head = _head(t, eps, n, dims, fi)
    red = _dims(d for d in range(len(dims)) if d != fi)
    params = [f"  x = {S} parameter(0)", f"  scale = {F} parameter(1)", f"  offset = {F} parameter(2)"]
    body = head + [
        f"  eps = {F} broadcast(eps0), dimensions={{}}",
        f"  scale_b = {S} broadcast(scale), dimensions={{{fi}}}",
        f"  offset_b = {S} broadcast(offset), dimensions={{{fi}}}",
        f"  x2 = {S} multiply(x, x)",
        f"  sum = {F} reduce(x, zero), dimensions={{{red}}}, to_apply=scalar_add",
        f"  sum2 = {F} reduce(x2, zero), dimensions={{{red}}}, to_apply=scalar_add",
        f"  mean = {F} multiply(sum, c)",
        f"  mean_b = {S} broadcast(mean), dimensions={{{fi}}}",
        f"  sqmean = {F} multiply(sum2, c)",
        f"  meansq = {F} multiply(mean, mean)",
        f"  var = {F} subtract(sqmean, meansq)",
        f"  vae = {F} add(var, eps)",
        f"  rs = {F} rsqrt(vae)",
        f"  rs_b = {S} broadcast(rs), dimensions={{{fi}}}",
        f"  xm = {S} subtract(x, mean_b)",
        f"  nrm = {S} multiply(xm, rs_b)",
        f"  scl = {S} multiply(nrm, scale_b)",
        f"  y = {S} add(scl, offset_b)",
        f"  ROOT out = ({S}, {F}, {F}) tuple(y, mean, var)",
    ]
    return _module(t, params, body)


def inference_text(t: str, dims: tuple, fi: int, eps: float, n: int) -> str:
    S, F, head = _head(t, eps, n, dims, fi)
    params = [f"  x = {S} parameter(0)", f"  scale = {F} parameter(1)", f"  offset = {F} parameter(2)",
              f"  mean = {F} parameter(3)", f"  var = {F} parameter(4)"]
    body = head[:3] + [
        f"  eps = {F} broadcast(eps0), dimensions={{}}",
        f"  vae = {F} add(var, eps)",
        f"  rs = {F} rsqrt(vae)",
        f"  tscale = {F} multiply(scale, rs)",
        f"  mts = {F} multiply(mean, tscale)",
        f"  tshift = {F} subtract(offset, mts)",
        f"  tscale_b = {S} broadcast(tscale), dimensions={{{fi}}}",
        f"  xs = {S} multiply(x, tscale_b)",
        f"  tshift_b = {S} broadcast(tshift), dimensions={{{fi}}}",
        f"  ROOT y = {S} add(xs, tshift_b)",
    ]
    return _module(t, params, body)


def grad_text(t: str, dims: tuple, fi: int, eps: float, n: int) -> str:
    S, F, head = _head(t, eps, n, dims, fi)
    red = _dims(d for d in range(len(dims)) if d != fi)
    params = [f"  x = {S} parameter(0)", f"  scale = {F} parameter(1)", f"  mean = {F} parameter(2)",
              f"  var = {F} parameter(3)", f"  dy = {S} parameter(4)"]
    body = head + [
        f"  eps_f = {F} broadcast(eps0), dimensions={{}}",
        f"  vae = {F} add(var, eps_f)",
        f"  rs = {F} rsqrt(vae)",
        f"  one_f = {F} broadcast(one), dimensions={{}}",
        f"  inv = {F} divide(one_f, vae)",
        f"  mean_b = {S} broadcast(mean), dimensions={{{fi}}}",
        f"  xm = {S} subtract(x, mean_b)",
        f"  dyxm = {S} multiply(dy, xm)",
        f"  s = {F} reduce(dyxm, zero), dimensions={{{red}}}, to_apply=scalar_add",
        f"  doffset = {F} reduce(dy, zero), dimensions={{{red}}}, to_apply=scalar_add",
        f"  dscale = {F} multiply(s, rs)",
        f"  srs = {F} multiply(scale, rs)",
        f"  k = {F} multiply(srs, c)",
        f"  k_b = {S} broadcast(k), dimensions={{{fi}}}",
        f"  ns = {S} broadcast(n), dimensions={{}}",
        f"  i1 = {S} multiply(dy, ns)",
        f"  i2 = {S} broadcast(doffset), dimensions={{{fi}}}",
        f"  i12 = {S} subtract(i1, i2)",
        f"  i3 = {S} broadcast(s), dimensions={{{fi}}}",
        f"  i4 = {S} multiply(i3, xm)",
        f"  inv_b = {S} broadcast(inv), dimensions={{{fi}}}",
        f"  vae_b = {S} broadcast(vae), dimensions={{{fi}}}",
        # XLA rewrites A / broadcast(B) as A * broadcast(1/B); a rank-1 operand has no broadcast left
        f"  i5 = {S} multiply(i4, inv_b)" if len(dims) > 1 else f"  i5 = {S} divide(i4, vae_b)",
        f"  i6 = {S} subtract(i12, i5)",
        f"  dx = {S} multiply(k_b, i6)",
        f"  ROOT out = ({S}, {F}, {F}) tuple(dx, dscale, doffset)",
    ]
    return _module(t, params, body)


_TEXTS = {"batch-norm-training": (training_text, 3), "batch-norm-inference": (inference_text, 5),
          "batch-norm-grad": (grad_text, 5)}


def _expansion(ins, ctx):
    """(text, callable) of the instruction's expansion, after checking its shapes."""
    make, nops = _TEXTS[ins.opcode]
    shapes = ctx.operand_shapes(ins)
    if len(shapes) != nops or not all(isinstance(s, ir.ArrayShape) for s in shapes):
        raise error_at(ins, f"{ins.opcode} takes {nops} array operands")
    x = shapes[0]
    et = x.element_type
    if not et.is_float:
        raise error_at(ins, f"{ins.opcode}: the operand must be of a floating-point type, not {et.name}")
    fi = ins.attrs.get("feature_index")
    eps = ins.attrs.get("epsilon")
    rank = len(x.dims)
    if not isinstance(fi, int) or not 0 <= fi < rank:
        raise error_at(ins, f"{ins.opcode}: feature_index={fi} is out of range for a rank-{rank} operand")
    if any(x.dynamic):
        raise unsupported(ins, "an operand with dynamic dimensions")
    nfeat = x.dims[fi]
    for k, s in enumerate(shapes[1:], 1):
        if s.element_type != et:
            raise error_at(ins, f"{ins.opcode}: operand {k} is {s.element_type.name}, the operand is {et.name}")
        want = (nfeat,) if not (ins.opcode == "batch-norm-grad" and k == 4) else tuple(x.dims)
        if tuple(s.dims) != want:
            raise error_at(ins, f"{ins.opcode}: operand {k} has dimensions {list(s.dims)}, expected {list(want)}")
    if isinstance(eps, bool) or not isinstance(eps, (int, float)):
        raise error_at(ins, f"{ins.opcode}: epsilon must be a floating-point number, not {eps!r}")
    n = math.prod(d for i, d in enumerate(x.dims) if i != fi)
    if n > 2**31 - 1:
        raise unsupported(ins, "more than 2^31-1 elements per feature")
    # XLA:CPU's float normalization runs a bf16 batch norm in f32, an 8-bit float one in f16 (f8e8m0fnu,
    # whose range f16 lacks, in f32), between converts.
    if et.name in ("f16", "f32", "f64"):
        compute = et.name
    elif et.bits <= 8 and et.name != "f8e8m0fnu":
        compute = "f16"
    else:
        compute = "f32"
    text = make(compute, tuple(x.dims), fi, eps, n)
    from ..diagnostics import HloError
    from ..frontend import parse_module
    try:
        fn = ctx.module_plan(parse_module(text, "<batch-norm expansion>"))
    except HloError as e:  # e.g. max_bytes exceeded by an intermediate: report it at the instruction
        raise error_at(ins, f"{ins.opcode} (expanded as XLA does): {getattr(e, 'message', e)}") from None
    return text, fn, (None if compute == et.name else (et.dtype, compute))


@kernel("batch-norm-training", "batch-norm-inference", "batch-norm-grad")
def _k_batch_norm(ins, ctx):
    _, fn, narrow = _expansion(ins, ctx)
    if narrow is None:
        return fn

    narrow, compute = narrow
    wide = np.float16 if compute == "f16" else np.float32

    def run(*xs):
        out = fn(*(x.astype(wide) for x in xs))
        if isinstance(out, tuple):
            return tuple(o.astype(narrow) for o in out)
        return out.astype(narrow)
    return run
