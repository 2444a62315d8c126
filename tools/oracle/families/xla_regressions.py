"""xla_regressions: XLA:CPU's results for the regression cases where hlo-run once differed from XLA:CPU (c128 bitcast-convert, complex dots and FMA-contracted complex products,
complex power/sine, f64 erf, FFT, non-tuple scan, pred dots, rounding max reducers, complex division with
inf/NaN parts, scalar bitcasts, 1-tuple reduces, zero-element iotas, dynamic sizes, custom-calls, ...).

Dev-only (needs jax/jaxlib); the tests (tests/test_ops_xla_regressions.py) only read the committed files.
Each case is hand-written HLO, parsed by XLA's parser, converted to StableHLO, compiled and run by the
XLA:CPU client JAX uses. `ref`: an equivalent text XLA:CPU can run when it cannot run the case itself
(XLA:CPU's layout assignment refuses a scalar `bitcast` at the entry); XLA's outputs are then `ref`'s.

Each case is one case directory (tools/oracle/writer.py; tests/golden/README.md).

    python -m tools.oracle regen xla_regressions [--opcode OPCODE]
"""
from __future__ import annotations

import numpy as np

from .. import runner  # noqa: F401  (sets up XLA:CPU before JAX is imported)
from ..core import Decl

import jax  # noqa: E402

jax.config.update("jax_enable_x64", True)
FAMILY = "xla_regressions"  # tests/golden/xla_regressions/
rng = np.random.default_rng(13)
CASES = []


def case(cid, item, text, *args, compare="exact", ref=None):
    CASES.append({"id": cid, "item": item, "text": text, "args": args, "compare": compare, "ref": ref})


def c(shape, dt, scale=1.0):
    return ((rng.standard_normal(shape) + 1j * rng.standard_normal(shape)) * scale).astype(dt)


def f(shape, dt, scale=1.0):
    return (rng.standard_normal(shape) * scale).astype(dt)


# ---- item 8: bitcast-convert of 16-byte types
for T, dt in (("c128", np.complex128), ("c64", np.complex64)):
    case(f"bitcast_convert_{T}", 8, f"""HloModule m
ENTRY e {{ p = {T}[4] parameter(0)  ROOT r = {T}[4] bitcast-convert(p) }}""",
         np.array([1 + 2j, complex(-0.0, np.nan), complex(np.inf, -0.0), 5e-310j], dt))

# ---- item 13: scan with a single non-tuple result
_SCAN_MUL = """HloModule m
body {
  x = f32[4] parameter(0)
  c = f32[4] parameter(1)
  ROOT n = f32[4] multiply(c, x)
}
"""
for rev in ("false", "true"):
    case(f"scan_single_carry_reverse_{rev}", 13, _SCAN_MUL + f"""ENTRY e {{
  arg = f32[5,4] parameter(0)
  init = f32[4] parameter(1)
  ROOT scan = f32[4] scan(arg, init), dimensions={{0}}, to_apply=body, num_carries=1, is_reverse={rev}
}}""", f((5, 4), np.float32), f((4,), np.float32))
case("scan_single_output", 13, """HloModule m
body {
  x = f32[4] parameter(0)
  ROOT n = f32[4] negate(x)
}
ENTRY e {
  arg = f32[3,4] parameter(0)
  ROOT scan = f32[3,4] scan(arg), dimensions={0}, to_apply=body, num_carries=0
}""", f((3, 4), np.float32))

# ---- item 19: dot with a pred result: the dot in the operands' type, then != 0
_PD = """HloModule m
ENTRY e {{ a = {T}[{m},2] parameter(0)  b = {T}[2,1] parameter(1)
  ROOT r = pred[{m},1] dot(a, b), lhs_contracting_dims={{1}}, rhs_contracting_dims={{0}} }}"""
case("pred_dot_f32", 19, _PD.format(T="f32", m=5),
     np.array([[.5, .25], [1, -1], [1e-30, 1e-30], [np.nan, 0], [0, -0.0]], np.float32),
     np.array([[.5], [2]], np.float32) * np.array([[1], [1]], np.float32))
case("pred_dot_f32_cancel", 19, _PD.format(T="f32", m=2),
     np.array([[1, -1], [1e-30, 1e-30]], np.float32), np.array([[1], [1]], np.float32))
case("pred_dot_s8_wraps", 19, _PD.format(T="s8", m=3),
     np.array([[16, 0], [2, 0], [1, -1]], np.int8), np.array([[16], [1]], np.int8))
case("pred_dot_s32", 19, _PD.format(T="s32", m=2),
     np.array([[1, -1], [2, 0]], np.int32), np.array([[1], [1]], np.int32))
case("pred_dot_f16", 19, _PD.format(T="f16", m=2),
     np.array([[300, 0], [1e-4, 0]], np.float16), np.array([[300], [1]], np.float16))

# ---- item 20: a maximum/minimum reducer followed by a rounding to bf16 (recognized: must round)
_MAXR = """HloModule m
m {{
  lhs = f32[] parameter(0)  rhs = f32[] parameter(1)
  mx = f32[] {op}(lhs, rhs)
  c = bf16[] convert(mx)
  ROOT r = f32[] convert(c)
}}
"""
case("reduce_max_bf16_rounding_2", 20, _MAXR.format(op="maximum") + """ENTRY e { p = f32[2] parameter(0)
  i = f32[] constant(-inf)
  ROOT r = f32[] reduce(p, i), dimensions={0}, to_apply=m }""", np.array([2.805772, 1], np.float32))
case("reduce_max_bf16_rounding", 20, _MAXR.format(op="maximum") + """ENTRY e { p = f32[6,10] parameter(0)
  i = f32[] constant(-inf)
  ROOT r = f32[6] reduce(p, i), dimensions={1}, to_apply=m }""", f((6, 10), np.float32))
case("reduce_window_max_bf16_rounding", 20, _MAXR.format(op="maximum") + """ENTRY e {
  p = f32[6,10] parameter(0)
  i = f32[] constant(-inf)
  ROOT r = f32[6,8] reduce-window(p, i), window={size=1x3}, to_apply=m }""", f((6, 10), np.float32))
case("reduce_window_min_bf16_rounding", 20, _MAXR.format(op="minimum") + """ENTRY e {
  p = f32[6,10] parameter(0)
  i = f32[] constant(0.3)
  ROOT r = f32[6,8] reduce-window(p, i), window={size=1x3}, to_apply=m }""", f((6, 10), np.float32))

# ---- item 22: internal errors on valid modules
_BC = """HloModule m
ENTRY e {{ p = {S}[] parameter(0)  ROOT r = {D}[] {op}(p) }}"""
for S, D, x in (("f32", "s32", np.float32(1.5)), ("s32", "f32", np.int32(1069547520)),
                ("f64", "u64", np.float64(-2.5)), ("f16", "s16", np.float16(-0.0))):
    case(f"bitcast_scalar_{S}_{D}", 22, _BC.format(S=S, D=D, op="bitcast"), x,
         ref=_BC.format(S=S, D=D, op="bitcast-convert"))
case("reduce_one_tuple_add", 22, """HloModule m
add {
  a = f32[] parameter(0)  b = f32[] parameter(1)
  s = f32[] add(a, b)
  ROOT t = (f32[]) tuple(s)
}
ENTRY e { p = f32[3,4] parameter(0)  i = f32[] constant(0)
  ROOT r = (f32[3]) reduce(p, i), dimensions={1}, to_apply=add }""", np.arange(12, dtype=np.float32).reshape(3, 4))
case("reduce_one_tuple_general", 22, """HloModule m
add {
  a = f32[] parameter(0)  b = f32[] parameter(1)
  s = f32[] add(a, b)
  q = f32[] multiply(s, a)
  ROOT t = (f32[]) tuple(q)
}
ENTRY e { p = f32[3,4] parameter(0)  i = f32[] constant(1)
  ROOT r = (f32[3]) reduce(p, i), dimensions={1}, to_apply=add }""", np.arange(12, dtype=np.float32).reshape(3, 4))
case("iota_zero_elements_huge", 22, """HloModule m
ENTRY e { ROOT r = f32[1000000000000,0] iota(), iota_dimension=0 }""")
case("iota_zero_elements_huge_dim1", 22, """HloModule m
ENTRY e { ROOT r = s32[0,1000000000000] iota(), iota_dimension=1 }""")


# ---- item 10: XLA:CPU's complex product is fma-contracted: re = fma(xr, yr, -(xi*yi)), im = fma(xi, yr, xr*yi)
def _cancelling(n, dt):
    x = c((n,), dt)
    s = rng.standard_normal(n)
    y_re = (x.imag * s * (1 + 1e-5 * rng.standard_normal(n)) + 1j * x.real * s).astype(dt)  # re cancels
    y_im = (-x.real * s * (1 + 1e-5 * rng.standard_normal(n)) + 1j * x.imag * s).astype(dt)  # im cancels
    return x, np.concatenate([y_re[: n // 2], y_im[n // 2:]])


def _unit(shape, dt):
    return (np.exp(1j * rng.uniform(0, 6.3, shape)) * (1 + 0.01 * rng.standard_normal(shape))).astype(dt)


_MUL = """HloModule m
mul {{ a = {T}[] parameter(0)  b = {T}[] parameter(1)  ROOT r = {T}[] multiply(a, b) }}
"""
for T, dt in (("c64", np.complex64), ("c128", np.complex128)):
    x, y = _cancelling(512, dt)
    case(f"complex_multiply_cancellation_{T}", 10, f"""HloModule m
ENTRY e {{ p = {T}[512] parameter(0)  q = {T}[512] parameter(1)  ROOT r = {T}[512] multiply(p, q) }}""", x, y)
    for shape, d in (((20,), 0), ((6, 30), 1), ((30, 6), 0), ((100,), 0), ((4, 100), 1), ((3, 50, 40), 1)):
        rs = [nn for i, nn in enumerate(shape) if i != d]
        case(f"reduce_multiply_{T}_{'x'.join(map(str, shape))}_d{d}", 10, _MUL.format(T=T) + f"""ENTRY e {{
  p = {T}{list(shape)} parameter(0)  i = {T}[] constant((1,0))
  ROOT r = {T}{rs} reduce(p, i), dimensions={{{d}}}, to_apply=mul }}""".replace(", ", ","), _unit(shape, dt))
    case(f"reduce_window_cumprod_{T}", 10, _MUL.format(T=T) + f"""ENTRY e {{
  p = {T}[64] parameter(0)  i = {T}[] constant((1,0))
  ROOT r = {T}[64] reduce-window(p, i), window={{size=64 pad=63_0}}, to_apply=mul }}""", _unit((64,), dt))
    case(f"reduce_window_multiply_{T}", 10, _MUL.format(T=T) + f"""ENTRY e {{
  p = {T}[9,7] parameter(0)  i = {T}[] constant((1,0))
  ROOT r = {T}[5,6] reduce-window(p, i), window={{size=3x2 stride=2x1 pad=1_1x0_0}}, to_apply=mul }}""",
         _unit((9, 7), dt))
    case(f"scatter_multiply_{T}", 10, _MUL.format(T=T) + f"""ENTRY e {{
  o = {T}[8] parameter(0)  i = s32[40,1] parameter(1)  u = {T}[40] parameter(2)
  ROOT r = {T}[8] scatter(o, i, u), update_window_dims={{}}, inserted_window_dims={{0}},
    scatter_dims_to_operand_dims={{0}}, index_vector_dim=1, to_apply=mul }}""",
         _unit((8,), dt), rng.integers(0, 8, (40, 1)).astype(np.int32), _unit((40,), dt))

# ---- item 10 (windows): cumulative reduce-windows longer than 16 are split by XLA's ReduceWindowRewriter
_RED = """HloModule m
r {{ a = {T}[] parameter(0)  b = {T}[] parameter(1)  ROOT r = {T}[] {op}(a, b) }}
"""
import ml_dtypes  # noqa: E402
for T, dt, op, init in (("f32", np.float32, "add", "0"), ("bf16", ml_dtypes.bfloat16, "add", "0"),
                        ("f16", np.float16, "add", "0"), ("c64", np.complex64, "multiply", "(1,0)"),
                        ("f64", np.float64, "multiply", "1")):
    for shape, win, oshape in (((100,), "size=100 pad=99_0", (100,)), ((3, 40), "size=1x40 pad=0_0x0_39", (3, 40)),
                               ((300, 2), "size=300x1 pad=300_0x0_0", (301, 2)), ((37,), "size=37 pad=0_37", (38,)),
                               ((50,), "size=50 pad=0_49", (50,))):
        if dt == np.complex64:
            xv = _unit(shape, dt)
        elif op == "multiply":
            xv = (1 + 0.01 * rng.standard_normal(shape)).astype(dt)
        else:
            xv = rng.standard_normal(shape).astype(dt)
        case(f"cumulative_{op}_{T}_{'x'.join(map(str, shape))}_{win.split('pad=')[1]}", 10,
             _RED.format(T=T, op=op) + f"""ENTRY e {{
  p = {T}{list(shape)} parameter(0)  i = {T}[] constant({init})
  ROOT o = {T}{list(oshape)} reduce-window(p, i), window={{{win}}}, to_apply=r }}""".replace(", ", ","), xv)


# ---- item 21: complex division, XLA's Smith algorithm and its inf/NaN corner cases
_E = [0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, 1e-30, 3e38, 2.5]
_EV = np.array([complex(r, i) for r in _E for i in _E])
for T, dt in (("c64", np.complex64), ("c128", np.complex128)):
    xv = np.concatenate([np.repeat(_EV, len(_EV)), c((500,), np.complex128)]).astype(dt)
    yv = np.concatenate([np.tile(_EV, len(_EV)), c((500,), np.complex128)]).astype(dt)
    n = len(xv)
    case(f"complex_divide_{T}", 21, f"""HloModule m
ENTRY e {{ p = {T}[{n}] parameter(0)  q = {T}[{n}] parameter(1)  ROOT r = {T}[{n}] divide(p, q) }}""", xv, yv)

# ---- item 11: complex power and sine/cosine by XLA's formulas; f64 erf is libm's
_TOL = {"c64": {"rtol": 2e-6, "atol": 1e-6}, "c128": {"rtol": 1e-13, "atol": 1e-14}}
_PE = [0, 1, -1, 2, np.inf, np.nan, 0.5]
_PEV = np.array([complex(r, i) for r in _PE for i in _PE])
for T, dt in (("c64", np.complex64), ("c128", np.complex128)):
    xv = np.concatenate([rng.uniform(-3, 3, 600) + 1j * rng.uniform(-3, 3, 600),
                         1 + 1e-4 * c((50,), np.complex128), np.repeat(_PEV, len(_PEV))]).astype(dt)
    yv = np.concatenate([rng.uniform(-3, 3, 600) + 1j * rng.uniform(-3, 3, 600),
                         rng.uniform(500, 3000, 50) + 0j, np.tile(_PEV, len(_PEV))]).astype(dt)
    n = len(xv)
    case(f"complex_power_{T}", 11, f"""HloModule m
ENTRY e {{ p = {T}[{n}] parameter(0)  q = {T}[{n}] parameter(1)  ROOT r = {T}[{n}] power(p, q) }}""",
         xv, yv, compare=_TOL[T])
    z = (rng.uniform(-10, 10, 1000) + 1j * rng.uniform(-5, 5, 1000)).astype(dt)
    for op in ("sine", "cosine"):
        case(f"complex_{op}_{T}", 11, f"""HloModule m
ENTRY e {{ p = {T}[1000] parameter(0)  ROOT r = {T}[1000] {op}(p) }}""", z,
             compare={"rtol": 1e-6, "atol": 0} if T == "c64" else _TOL[T])  # NumPy's c64 sin: 5.6e-6
_ERFX = np.concatenate([rng.standard_normal(1500), rng.uniform(-6, 6, 1500),
                        np.exp(rng.uniform(-700, 2, 1000)) * rng.choice([-1, 1], 1000),
                        [0.0, -0.0, np.inf, -np.inf, np.nan, 1e-310, 5.9, 6.0, 27.0]])
case("erf_f64_libm", 11, f"""HloModule m
ENTRY e {{ p = f64[{len(_ERFX)}] parameter(0)  ROOT r = f64[{len(_ERFX)}] erf(p) }}""", _ERFX)


# ---- item 16: custom-call targets XLA:CPU runs as identities, and Qr
for tgt, extra in (("MoveToHost", ""), ("MoveToDevice", ""),
                   ("ShardBarrierFrom", ", custom_call_has_side_effect=true"),
                   ("ShardBarrierTo", ", custom_call_has_side_effect=true"),
                   ("annotate_device_placement", ', frontend_attributes={_xla_buffer_placement="pinned_host"}'),
                   ("LayoutConstraint", ""), ("SetBound", ", literal=s32[] 1")):
    case(f"custom_call_{tgt}", 16, f"""HloModule m
ENTRY e {{ p = f32[2,3] parameter(0)  n = f32[2,3] negate(p)
  c = f32[2,3] custom-call(n), custom_call_target="{tgt}"{extra}
  ROOT r = f32[2,3] add(c, p) }}""", f((2, 3), np.float32))
case("custom_call_LayoutConstraint_layout", 16, """HloModule m
ENTRY e { input = f32[6,4,3]{2,1,0} parameter(0)
  ROOT output = f32[6,4,3]{0,1,2} custom-call(input), custom_call_target="LayoutConstraint" }""", f((6, 4, 3), np.float32))
case("custom_call_ShardBarrierFrom_tuple", 16, """HloModule m
ENTRY e { a = f32[2,3] parameter(0)  b = f32[3] parameter(1)  t = (f32[2,3], f32[3]) tuple(a, b)
  s = (f32[2,3], f32[3]) custom-call(t), custom_call_target="ShardBarrierFrom", custom_call_has_side_effect=true
  g = f32[3] get-tuple-element(s), index=1
  ROOT r = f32[3] negate(g) }""", f((2, 3), np.float32), f((3,), np.float32))
for T, dt in (("f32", np.float32), ("f64", np.float64)):
    case(f"custom_call_Qr_{T}", 16, f"""HloModule m
ENTRY e {{ p = {T}[2,5,3] parameter(0)
  ROOT r = ({T}[2,5,3], {T}[2,3]) custom-call(p), custom_call_target="Qr" }}""", f((2, 5, 3), dt),
         compare={"rtol": 1e-5, "atol": 1e-5} if T == "f32" else {"rtol": 1e-12, "atol": 1e-12})


# ---- item 18: dynamic dimension inference through elementwise ops (a dynamic and a static operand)
for res in ("s32[<=4]", "s32[4]"):
    for order in ("d, q", "q, d"):
        case(f"dynamic_add_{'dyn' if '<=' in res else 'static'}_{order.replace(', ', '')}", 18, f"""HloModule m
ENTRY e {{ p = s32[4] parameter(0)  n = s32[] parameter(1)
  d = s32[<=4] set-dimension-size(p, n), dimensions={{0}}
  q = s32[4] parameter(2)
  a = {res} add({order})
  ROOT g = s32[] get-dimension-size(a), dimensions={{0}} }}""", np.arange(4, dtype=np.int32), np.int32(2),
             np.arange(4, dtype=np.int32))
case("dynamic_add_reduce", 18, """HloModule m
add { a = f32[] parameter(0)  b = f32[] parameter(1)  ROOT s = f32[] add(a, b) }
ENTRY e { p = f32[6,3] parameter(0)  n = s32[] parameter(1)
  d = f32[<=6,3] set-dimension-size(p, n), dimensions={0}
  q = f32[6,3] parameter(2)
  a = f32[<=6,3] multiply(q, d)
  z = f32[] constant(0)
  ROOT r = f32[3] reduce(a, z), dimensions={0}, to_apply=add }""", f((6, 3), np.float32), np.int32(4),
     f((6, 3), np.float32))


# ---- item 14: how many times XLA:CPU applies a non-identity init value (zeros in: the result counts it)
_ADD = """HloModule m
r {{ a = {T}[] parameter(0)  b = {T}[] parameter(1)  ROOT r = {T}[] {op}(a, b) }}
"""
for T, dt, op, init in (("f32", np.float32, "add", "0.5"), ("f64", np.float64, "add", "0.5"),
                        ("s32", np.int32, "add", "1"), ("bf16", ml_dtypes.bfloat16, "add", "0.5"),
                        ("f32", np.float32, "multiply", "1.001")):
    for shape, dims in (((2, 1051), (1,)), ((13, 1051, 21), (1,)), ((4095,), (0,)), ((4096,), (0,)),
                        ((64, 64), (1,)), ((40, 4), (0,)), ((8, 8, 64), (0, 2))):
        rs = [nn for i, nn in enumerate(shape) if i not in dims]
        xv = (np.zeros if op == "add" else np.ones)(shape, dt)
        case(f"reduce_init_count_{op}_{T}_{'x'.join(map(str, shape))}_d{''.join(map(str, dims))}", 14,
             _ADD.format(T=T, op=op) + f"""ENTRY e {{ p = {T}{list(shape)} parameter(0)  i = {T}[] constant({init})
  ROOT o = {T}{rs} reduce(p, i), dimensions={{{",".join(map(str, dims))}}}, to_apply=r }}""".replace(", ", ","), xv)


# ---- item 24: comparators no fast path recognizes (GE, a `call`, a tuple inside) run vectorized
_SORTS = {
    "ge": """cmp { a = f32[] parameter(0)  b = f32[] parameter(1)  i = s32[] parameter(2)  j = s32[] parameter(3)
  ROOT c = pred[] compare(a, b), direction=GE }""",
    "call": """gt { x = f32[] parameter(0)  y = f32[] parameter(1)  ROOT c = pred[] compare(x, y), direction=GT }
cmp { a = f32[] parameter(0)  b = f32[] parameter(1)  i = s32[] parameter(2)  j = s32[] parameter(3)
  ROOT c = pred[] call(a, b), to_apply=gt }""",
    "call_tuple": """key { x = f32[] parameter(0)  n = f32[] negate(x)  a = f32[] abs(x)  ROOT t = (f32[], f32[]) tuple(a, n) }
cmp { a = f32[] parameter(0)  b = f32[] parameter(1)  i = s32[] parameter(2)  j = s32[] parameter(3)
  ka = (f32[], f32[]) call(a), to_apply=key  kb = (f32[], f32[]) call(b), to_apply=key
  a0 = f32[] get-tuple-element(ka), index=0  b0 = f32[] get-tuple-element(kb), index=0
  lt = pred[] compare(a0, b0), direction=LT  eq = pred[] compare(a0, b0), direction=EQ
  il = pred[] compare(i, j), direction=LT  t = pred[] and(eq, il)
  ROOT c = pred[] or(lt, t) }""",
}
_SX = rng.permutation(np.linspace(-3, 3, 64 * 300)).astype(np.float32).reshape(64, 300)  # distinct values
_SI = np.broadcast_to(np.arange(300, dtype=np.int32), (64, 300)).copy()
for nm, comp in _SORTS.items():
    case(f"sort_comparator_{nm}", 24, f"""HloModule m
{comp}
ENTRY e {{ p = f32[64,300] parameter(0)  q = s32[64,300] parameter(1)
  ROOT s = (f32[64,300], s32[64,300]) sort(p, q), dimensions={{1}}, is_stable=true, to_apply=cmp }}""", _SX, _SI)


def declare() -> list[Decl]:
    return [Decl(FAMILY, c["id"], c["args"], hlo=c["text"], ref=c["ref"], compare=c["compare"], keep_after=False,
                 extra={"item": c["item"]}) for c in CASES]
