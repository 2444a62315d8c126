"""contraction: XLA:CPU's floating-point contraction of a multiply into the add or subtract that uses it
(one fused multiply-add), on cancellation-prone inputs where a separately rounded product gives another
value in nearly every element; and the patterns XLA:CPU does NOT contract (see
hlo_interp/ops/contraction.py for the rule).  Both texts of each case are run: the hand-written one and
XLA's optimized one (`after`, with XLA's own fusions).  Compared byte for byte.

    python -m tools.oracle regen contraction
"""
from __future__ import annotations

import ml_dtypes
import numpy as np

from ..core import Decl

FAMILY = "contraction"
N = 512
rng = np.random.default_rng(2026)
CASES: list[Decl] = []
_TYPES = {"f16": np.float16, "f32": np.float32, "f64": np.float64, "bf16": ml_dtypes.bfloat16}


def case(name, text, *args, known=None, note=""):
    extra = {"known": known} if known else {}
    CASES.append(Decl(FAMILY, name, args, hlo=text, compare="bits", note=note, extra=extra))


def cancelling(t, n=N, shape=None):
    """a, b, c of type t with c within a few ulps of -(a*b): a*b + c cancels to a few bits of c."""
    dt = _TYPES[t]
    a = rng.standard_normal(n).astype(dt)
    b = rng.standard_normal(n).astype(dt)
    p = (a.astype(np.float64) * b.astype(np.float64)).astype(dt)
    eps = float(ml_dtypes.finfo(dt).eps)
    c = (-(p.astype(np.float64)) * (1 + rng.integers(-4, 5, n) * eps)).astype(dt)
    if shape is not None:
        a, b, c = a.reshape(shape), b.reshape(shape), c.reshape(shape)
    return a, b, c


def _abc(t, n=N):
    return f"""HloModule m
ENTRY e {{
  a = {t}[{n}] parameter(0)
  b = {t}[{n}] parameter(1)
  c = {t}[{n}] parameter(2)
"""


_FORMS = {  # the four contracted forms
    "add_mc": "  m = {t}[{n}] multiply(a, b)\n  ROOT r = {t}[{n}] add(m, c)\n}}",
    "add_cm": "  m = {t}[{n}] multiply(a, b)\n  ROOT r = {t}[{n}] add(c, m)\n}}",
    "sub_mc": "  m = {t}[{n}] multiply(a, b)\n  ROOT r = {t}[{n}] subtract(m, c)\n}}",
    "sub_cm": "  m = {t}[{n}] multiply(a, b)\n  ROOT r = {t}[{n}] subtract(c, m)\n}}",
}
for t in ("f32", "f64", "f16", "bf16"):
    for form, body in _FORMS.items():
        a, b, c = cancelling(t)
        if form.startswith("sub_mc"):
            c = -c
        if form == "sub_cm":
            a = -a
        case(f"{form}_{t}", _abc(t) + body.format(t=t, n=N), a, b, c,
             note="bf16: not contracted (XLA rounds the product to bf16 first)" if t == "bf16" else "")

# both operands products: the first one is fused
for t in ("f32", "f64"):
    a, b, c = cancelling(t)
    one = np.ones(N, _TYPES[t])
    text = _abc(t).replace("  c = ", "  d = {t}[{n}] parameter(3)\n  c = ".format(t=t, n=N))
    case(f"add_two_products_{t}", text + f"""  m1 = {t}[{N}] multiply(a, b)
  m2 = {t}[{N}] multiply(c, d)
  ROOT r = {t}[{N}] add(m1, m2)
}}""", a, b, c, one)
    case(f"sub_two_products_{t}", text + f"""  m1 = {t}[{N}] multiply(a, b)
  m2 = {t}[{N}] multiply(c, d)
  ROOT r = {t}[{N}] subtract(m1, m2)
}}""", a, b, -c, one)

# a product that is also an output: materialized (rounded) first, not contracted
a, b, c = cancelling("f32")
case("product_also_output_f32", _abc("f32") + f"""  m = f32[{N}] multiply(a, b)
  s = f32[{N}] add(m, c)
  ROOT r = (f32[{N}], f32[{N}]) tuple(s, m)
}}""", a, b, c)
# a product used twice inside one fusion: one rounded product, not contracted
a, b, c = cancelling("f32")
case("product_used_twice_f32", _abc("f32") + f"""  m = f32[{N}] multiply(a, b)
  s = f32[{N}] add(m, c)
  d = f32[{N}] subtract(m, c)
  ROOT r = f32[{N}] multiply(s, d)
}}""", a, b, c)
# add(m, m): one product, two uses
case("product_added_to_itself_f32", _abc("f32") + f"""  m = f32[{N}] multiply(a, b)
  ROOT r = f32[{N}] add(m, m)
}}""", a, b, c)
# a product whose two users land in two fusions: XLA duplicates it into each, where it contracts
a, b, c = cancelling("f32")
case("product_duplicated_into_two_fusions_f32", _abc("f32") + f"""  m = f32[{N}] multiply(a, b)
  s = f32[{N}] add(m, c)
  p = f32[{N}] multiply(m, c)
  ROOT r = (f32[{N}], f32[{N}]) tuple(s, p)
}}""", a, b, c, known={"before": "a product with several users is never contracted here; XLA:CPU duplicates "
                                  "it into each user's fusion (`after`), where this add contracts it"})

# single-use chains between the product and the add
_CHAINS = {
    "reshape": ("f32[16,32] reshape(m)", "f32[16,32] reshape(c)", "f32[16,32]"),
    "copy": ("f32[512] copy(m)", "f32[512] copy(c)", "f32[512]"),
    "reverse": ("f32[512] reverse(m), dimensions={0}", "f32[512] copy(c)", "f32[512]"),
    "slice": ("f32[256] slice(m), slice={[100:356]}", "f32[256] slice(c), slice={[0:256]}", "f32[256]"),
    "negate": ("f32[512] negate(m)", "f32[512] negate(c)", "f32[512]"),
    "broadcast": ("f32[3,512] broadcast(m), dimensions={1}", "f32[3,512] broadcast(c), dimensions={1}",
                  "f32[3,512]"),
}
for nm, (xm, xc, rt) in _CHAINS.items():
    a, b, c = cancelling("f32")
    if nm == "slice":
        c = np.concatenate([c[100:356], c[:256]])
    if nm == "reverse":
        c = c[::-1].copy()
    case(f"chain_{nm}_f32", _abc("f32") + f"""  m = f32[{N}] multiply(a, b)
  x = {xm}
  y = {xc}
  ROOT r = {rt} add(x, y)
}}""", a, b, c)
# a broadcast that adds elements: the product is computed apart (measured on most shapes: f32[256] to
# f32[3,256] here; XLA:CPU does contract f32[512] to f32[3,512], a known gap)
for n, known in ((256, None), (512, {"before": "XLA:CPU contracts through this broadcast (f32[512] to [3,512]; "
                                              "not f32[256] to [3,256]): a codegen detail not modelled",
                                   "after": "the same fused computation as `before`, the same gap"})):
    a, b, c = cancelling("f32", n=n)
    x = np.broadcast_to(-c, (3, n)) * np.float32(1 + 2 ** -22)
    case(f"broadcast_expanding_{n}_f32", f"""HloModule m
ENTRY e {{
  a = f32[{n}] parameter(0)
  b = f32[{n}] parameter(1)
  x = f32[3,{n}] parameter(2)
  m = f32[{n}] multiply(a, b)
  y = f32[3,{n}] broadcast(m), dimensions={{1}}
  ROOT r = f32[3,{n}] add(x, y)
}}""", a, b, x.astype(np.float32), known=known)
a, b, c = cancelling("f32", shape=(16, 32))
case("chain_transpose_f32", """HloModule m
ENTRY e {
  a = f32[16,32] parameter(0)
  b = f32[16,32] parameter(1)
  c = f32[16,32] parameter(2)
  m = f32[16,32] multiply(a, b)
  x = f32[32,16] transpose(m), dimensions={1,0}
  y = f32[32,16] transpose(c), dimensions={1,0}
  ROOT r = f32[32,16] add(x, y)
}""", a, b, c)
# a convert between them: not contracted
a, b, c = cancelling("f32")
case("convert_between_f32_f64", _abc("f32").replace("c = f32", "c = f64") + f"""  m = f32[{N}] multiply(a, b)
  x = f64[{N}] convert(m)
  ROOT r = f64[{N}] add(x, c)
}}""", a, b, c.astype(np.float64))
# a scalar factor broadcast, and a constant factor: contracted; a product of two constants: folded first
a, b, c = cancelling("f32")
case("broadcast_scalar_factor_f32", _abc("f32") + f"""  k = f32[] constant(1.3)
  kb = f32[{N}] broadcast(k), dimensions={{}}
  m = f32[{N}] multiply(a, kb)
  ROOT r = f32[{N}] add(m, c)
}}""", a, b, (-(a.astype(np.float64) * np.float32(1.3))).astype(np.float32))
_K = rng.standard_normal(8).astype(np.float32)
_K2 = rng.standard_normal(8).astype(np.float32)


def _lit(x):
    return "{" + ", ".join(repr(float(v)) for v in x) + "}"


case("constant_factor_f32", f"""HloModule m
ENTRY e {{
  b = f32[8] parameter(0)
  c = f32[8] parameter(1)
  k = f32[8] constant({_lit(_K)})
  m = f32[8] multiply(k, b)
  ROOT r = f32[8] add(m, c)
}}""", _K2, (-(_K.astype(np.float64) * _K2)).astype(np.float32) * np.float32(1 + 2 ** -22))
case("constant_product_folded_f32", f"""HloModule m
ENTRY e {{
  c = f32[8] parameter(0)
  k = f32[8] constant({_lit(_K)})
  k2 = f32[8] constant({_lit(_K2)})
  m = f32[8] multiply(k, k2)
  ROOT r = f32[8] add(m, c)
}}""", (-(_K.astype(np.float64) * _K2)).astype(np.float32) * np.float32(1 + 2 ** -22))

# inside a while body (a loop that accumulates a*b into c three times) and a Horner polynomial
a, b, c = cancelling("f32")
case("while_body_accumulate_f32", f"""HloModule m
cond {{
  p = (s32[], f32[{N}], f32[{N}], f32[{N}]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  k = s32[] constant(3)
  ROOT lt = pred[] compare(i, k), direction=LT
}}
body {{
  p = (s32[], f32[{N}], f32[{N}], f32[{N}]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  a = f32[{N}] get-tuple-element(p), index=1
  b = f32[{N}] get-tuple-element(p), index=2
  c = f32[{N}] get-tuple-element(p), index=3
  m = f32[{N}] multiply(a, b)
  s = f32[{N}] add(m, c)
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  ROOT t = (s32[], f32[{N}], f32[{N}], f32[{N}]) tuple(i1, a, b, s)
}}
ENTRY e {{
  a = f32[{N}] parameter(0)
  b = f32[{N}] parameter(1)
  c = f32[{N}] parameter(2)
  z = s32[] constant(0)
  t = (s32[], f32[{N}], f32[{N}], f32[{N}]) tuple(z, a, b, c)
  w = (s32[], f32[{N}], f32[{N}], f32[{N}]) while(t), condition=cond, body=body
  ROOT r = f32[{N}] get-tuple-element(w), index=3
}}""", a, b, c)
# ... and a carried value times an invariant one: not hoisted, contracted (x <- x*b + a, three times)
a, b, c = cancelling("f32")
case("while_body_carried_product_f32", f"""HloModule m
cond {{
  p = (s32[], f32[{N}], f32[{N}], f32[{N}]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  k = s32[] constant(3)
  ROOT lt = pred[] compare(i, k), direction=LT
}}
body {{
  p = (s32[], f32[{N}], f32[{N}], f32[{N}]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  a = f32[{N}] get-tuple-element(p), index=1
  b = f32[{N}] get-tuple-element(p), index=2
  x = f32[{N}] get-tuple-element(p), index=3
  m = f32[{N}] multiply(x, b)
  s = f32[{N}] add(m, a)
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  ROOT t = (s32[], f32[{N}], f32[{N}], f32[{N}]) tuple(i1, a, b, s)
}}
ENTRY e {{
  a = f32[{N}] parameter(0)
  b = f32[{N}] parameter(1)
  x = f32[{N}] parameter(2)
  z = s32[] constant(0)
  t = (s32[], f32[{N}], f32[{N}], f32[{N}]) tuple(z, a, b, x)
  w = (s32[], f32[{N}], f32[{N}], f32[{N}]) while(t), condition=cond, body=body
  ROOT r = f32[{N}] get-tuple-element(w), index=3
}}""", c, np.ones(N, np.float32) * np.float32(1 - 2 ** -10), a * b / c)
x = rng.uniform(-2, 2, N).astype(np.float32)
case("horner_polynomial_f32", f"""HloModule m
ENTRY e {{
  x = f32[{N}] parameter(0)
  c3 = f32[] constant(0.3333333)
  c2 = f32[] constant(-0.5)
  c1 = f32[] constant(1)
  c0 = f32[] constant(-0.75)
  b3 = f32[{N}] broadcast(c3), dimensions={{}}
  b2 = f32[{N}] broadcast(c2), dimensions={{}}
  b1 = f32[{N}] broadcast(c1), dimensions={{}}
  b0 = f32[{N}] broadcast(c0), dimensions={{}}
  m3 = f32[{N}] multiply(b3, x)
  q2 = f32[{N}] add(m3, b2)
  m2 = f32[{N}] multiply(q2, x)
  q1 = f32[{N}] add(m2, b1)
  m1 = f32[{N}] multiply(q1, x)
  ROOT q0 = f32[{N}] add(m1, b0)
}}""", x)
# f16 reduces of a product: XLA fuses the product into the loop, one f16 fma per step; not a reduce
# that the tree rewrite splits into windows first (more than 32 elements); f16[64,8] rows: known gap
_RED = """HloModule m
add {{
  x = f16[] parameter(0)
  y = f16[] parameter(1)
  ROOT s = f16[] add(x, y)
}}
ENTRY e {{
  a = f16[{s}] parameter(0)
  b = f16[{s}] parameter(1)
  m = f16[{s}] multiply(a, b)
  z = f16[] constant(0)
  ROOT r = f16[{o}] reduce(m, z), dimensions={{{d}}}, to_apply=add
}}"""
for shape, dims in (((64, 16), (1,)), ((64, 24), (1,)), ((32, 64), (0,)), ((2, 3, 4, 5), (0, 1, 2)),
                    ((16, 100), (1,)), ((64, 8), (1,))):
    out = [k for i, k in enumerate(shape) if i not in dims]
    a = rng.standard_normal(shape).astype(np.float16)
    b = rng.standard_normal(shape).astype(np.float16)
    known = None
    if shape == (64, 8):
        known = {v: "XLA:CPU sums eight-element rows of rounded products (one 8-wide vector), not fmas: "
                    "a codegen detail not modelled" for v in ("before", "after")}
    case(f"reduce_product_f16_{'x'.join(map(str, shape))}_d{''.join(map(str, dims))}",
         _RED.format(s=",".join(map(str, shape)), o=",".join(map(str, out)), d=",".join(map(str, dims))),
         a, b, known=known)

# edge values: infinities, NaN, overflowing products, signed zeros, subnormals (flushed by XLA:CPU)
_E = np.float32
ea = np.array([2 ** 100, 2 ** 100, np.inf, np.nan, 0.0, -0.0, 1e-20, 1e-39, 3.0, 1.5, 2 ** 64, -1.0], _E)
eb = np.array([2 ** 100, 2 ** 100, 0.0, 1.0, 1.0, 1.0, 1e-20, 1.0, 1e-39, 2 ** -130, 2 ** 64, 0.0], _E)
ec = np.array([-np.inf, -3e38, 1.0, 1.0, -0.0, 0.0, 0.0, 0.0, 0.0, 0.0, -3.4e38, -0.0], _E)
case("edge_values_f32", _abc("f32", 12) + "  m = f32[12] multiply(a, b)\n  ROOT r = f32[12] add(m, c)\n}", ea, eb, ec)
case("edge_values_f64", _abc("f64", 12) + "  m = f64[12] multiply(a, b)\n  ROOT r = f64[12] add(m, c)\n}",
     np.array([2.0 ** 600, 2.0 ** 600, np.inf, np.nan, 0.0, -0.0, 1e-160, 1e-300, 3.0, 1.5, 2.0 ** 512, -1.0]),
     np.array([2.0 ** 600, 2.0 ** 600, 0.0, 1.0, 1.0, 1.0, 1e-160, 1.0, 1e-310, 2.0 ** -1030, 2.0 ** 512, 0.0]),
     np.array([-np.inf, -1.7e308, 1.0, 1.0, -0.0, 0.0, 0.0, 0.0, 0.0, 0.0, -1.7e308, -0.0]))

# a product passed to a called computation's add: XLA inlines the call and contracts
a, b, c = cancelling("f32")
case("product_into_call_f32", f"""HloModule m
g {{
  x = f32[{N}] parameter(0)
  y = f32[{N}] parameter(1)
  ROOT s = f32[{N}] add(x, y)
}}
""" + _abc("f32").replace("HloModule m\n", "") + f"""  m = f32[{N}] multiply(a, b)
  ROOT r = f32[{N}] call(m, c), to_apply=g
}}""", a, b, c, known={"before": "a call is its own plan here; XLA:CPU inlines it and contracts the "
                                  "caller's product into the callee's add"})


def declare() -> list[Decl]:
    return list(CASES)
