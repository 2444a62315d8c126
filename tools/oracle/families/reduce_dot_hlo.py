"""reduce_dot_hlo: hand-written reduce, map and dot modules (every reducer JAX and XLA write, variadic
argmax, empty reductions, dot_general with batch/contracting dims, every numeric type), run by XLA:CPU.
Exact (bit for bit) except the sums and dots named *_tol (see `out_compare`).  tests/test_ops_reduce_dot.py
also runs them through the kernels alone."""
from __future__ import annotations

import ml_dtypes
import numpy as np

from ..core import Decl
from .movement_hlo import _np

FAMILY = "reduce_dot_hlo"
BF = ml_dtypes.bfloat16
TOL_REASON = ("XLA:CPU sums in another order (BLAS for dots, several reduced dimensions): relative 1e-5, "
              "absolute 1e-5 of the largest result")

# f32/c64 sums that XLA:CPU computes in exactly the order of reduce.EXACT_WIDE_FLOAT_ORDER
EXACT_IN_XLA_ORDER = ("reduce_add_f32_small", "reduce_variadic_add_add_long", "reduce_variadic_add_max",
                      "reduce_add_c64_tol", "reduce_mul_f32_tol")


def _tol(name, want):
    """Cases named *_tol: f32/f64/c64 sums and dots whose summation order in XLA:CPU is not ours
    (BLAS for dots, several reduced dimensions for sums: see reduce.py / dot.py): relative 1e-5, and
    absolute 1e-5 of the largest result (cancellation).  All others: bit-exact (NaN sign aside)."""
    if name.endswith("_tol") or name in EXACT_IN_XLA_ORDER:
        scale = float(np.max(np.abs(want.astype(np.complex128)))) if want.size else 1.0
        return 1e-5, 1e-5 * max(scale, 1.0)
    return 0.0, 0.0


_BIN = "{n} {{\n a = {t}[] parameter(0)\n b = {t}[] parameter(1)\n ROOT c = {t}[] {op}(a, b)\n}}\n"

_ARGMAX = """argmax {{
 av = {t}[] parameter(0)
 ai = s32[] parameter(1)
 bv = {t}[] parameter(2)
 bi = s32[] parameter(3)
 gt = pred[] compare(av, bv), direction={d}
 eq = pred[] compare(av, bv), direction=EQ
 lt = pred[] compare(ai, bi), direction=LT
 tie = pred[] and(eq, lt)
 keep = pred[] or(gt, tie)
 isn = pred[] compare(av, av), direction=NE
 keepa = pred[] or(keep, isn)
 v = {t}[] select(keepa, av, bv)
 i = s32[] select(keepa, ai, bi)
 ROOT r = ({t}[], s32[]) tuple(v, i)
}}
"""


def _shape(t, dims):
    return f"{t}[{','.join(map(str, dims))}]"


def _cases():
    rs = np.random.RandomState(7)
    C = []

    def add(name, text, *inputs):
        C.append((name, "HloModule " + name + "\n\n" + text, list(inputs)))

    def data(t, dims, lo=-3, hi=3):
        d = _np(t)
        if d == np.bool_:
            return rs.rand(*dims) > 0.5
        if np.dtype(d).kind in "iu":
            return np.frombuffer(rs.bytes(int(np.prod(dims)) * np.dtype(d).itemsize), d).reshape(dims).copy()
        if t in ("s4", "u4", "s2", "u2"):
            info = np.iinfo(d) if np.dtype(d).kind in "iu" else ml_dtypes.iinfo(d)
            return rs.randint(int(info.min), int(info.max) + 1, size=dims, dtype=np.int64).astype(d)
        if t in ("c64", "c128"):
            return (rs.uniform(lo, hi, dims) + 1j * rs.uniform(lo, hi, dims)).astype(d)
        return rs.uniform(lo, hi, dims).astype(d)

    def red(name, t, dims, rdims, op, init, x=None):
        out = [n for i, n in enumerate(dims) if i not in rdims]
        add(name, _BIN.format(n="f", t=t, op=op) +
            f"ENTRY e {{\n x = {_shape(t, dims)} parameter(0)\n z = {t}[] constant({init})\n"
            f" ROOT r = {_shape(t, out)} reduce(x, z), dimensions={{{','.join(map(str, rdims))}}}, to_apply=f\n}}",
            data(t, dims) if x is None else x)

    # integers: exact, wrapping
    for t in ("s8", "s16", "s32", "s64", "u8", "u16", "u32", "u64"):
        for op, init in (("add", 0), ("multiply", 1), ("maximum", 0), ("minimum", 0), ("and", -1 if t[0] == "s" else 0),
                         ("or", 0), ("xor", 0)):
            if op == "and" and t[0] == "u":
                init = np.iinfo(_np(t)).max
            red(f"reduce_{op}_{t}", t, (6, 37), (1,), op, init)
    red("reduce_add_s32_overflow", "s32", (4,), (0,), "add", 5, np.array([2 ** 31 - 1, 2 ** 31 - 1, 7, 9], np.int32))
    for op, init in (("and", "true"), ("or", "false"), ("add", "false"), ("multiply", "true"),
                     ("maximum", "false"), ("minimum", "true"), ("xor", "false")):
        red(f"reduce_{op}_pred", "pred", (5, 9), (0,), op, init)
    # floats
    x = data("f32", (3, 40))
    x[0, 5] = np.nan
    x[1, 7] = np.inf
    red("reduce_max_f32_nan", "f32", (3, 40), (1,), "maximum", "-inf", x)
    red("reduce_min_f32_nan", "f32", (3, 40), (1,), "minimum", "inf", x)
    x = data("bf16", (4, 50))
    x[2, 3] = np.nan
    red("reduce_max_bf16_nan", "bf16", (4, 50), (1,), "maximum", "-inf", x)
    red("reduce_max_f64", "f64", (3, 5, 7), (0, 2), "maximum", "-inf")
    red("reduce_min_f16", "f16", (70,), (0,), "minimum", "inf")
    red("reduce_add_f32_small", "f32", (5, 20), (1,), "add", 0)  # ≤ 32 terms: exact
    red("reduce_add_f32_tol", "f32", (3, 2000), (1,), "add", 0)
    red("reduce_add_f32_multi_tol", "f32", (2, 40, 3, 35), (1, 3), "add", 0)
    red("reduce_add_f64_tol", "f64", (300, 10), (0,), "add", 0)
    red("reduce_add_c64_tol", "c64", (4, 100), (1,), "add", "(0, 0)")
    red("reduce_mul_f32_tol", "f32", (50,), (0,), "multiply", 1, (1 + rs.uniform(-.1, .1, 50)).astype(np.float32))
    for t in ("bf16", "f8e4m3fn", "f8e5m2"):
        red(f"reduce_add_{t}_ones", t, (2, 1000), (1,), "add", 0, np.ones((2, 1000), _np(t)))
        red(f"reduce_add_{t}", t, (2, 40, 3, 35), (1, 3), "add", 0, data(t, (2, 40, 3, 35), 0, 1))
        red(f"reduce_add_{t}_major", t, (300, 7), (0,), "add", 0, data(t, (300, 7), 0, 1))
        red(f"reduce_mul_{t}", t, (3, 100), (1,), "multiply", 1, data(t, (3, 100), 0.97, 1.03))
    red("reduce_add_f16_1d", "f16", (3000,), (0,), "add", 0, data("f16", (3000,), 0, 1))
    # padding of XLA's tree must not use -inf/-0 for types that have none (fn/fnuz f8)
    red("reduce_max_f8e4m3fn_pad", "f8e4m3fn", (3, 100), (1,), "maximum", "-448", data("f8e4m3fn", (3, 100), -400, -1))
    red("reduce_min_f8e4m3fnuz_pad", "f8e4m3fnuz", (3, 100), (1,), "minimum", "240",
        data("f8e4m3fnuz", (3, 100), 1, 200))
    red("reduce_add_f8e5m2fnuz_pad", "f8e5m2fnuz", (3, 100), (1,), "add", "0", data("f8e5m2fnuz", (3, 100), -1, 1))
    red("reduce_max_f32_signed_zeros", "f32", (4,), (0,), "maximum", "-inf",
        np.array([-0.0, 0.0, -0.0, -1], np.float32))
    red("reduce_min_f32_signed_zeros", "f32", (4,), (0,), "minimum", "inf", np.array([0.0, -0.0, 0.0, 1], np.float32))
    red("reduce_add_f16_rows", "f16", (7, 300), (1,), "add", 0, data("f16", (7, 300), 0, 1))
    red("reduce_add_bf16_100000", "bf16", (100000,), (0,), "add", 0, np.ones(100000, BF))
    red("reduce_no_dims", "s32", (3, 4), (), "add", 10)
    red("reduce_empty_dim", "f32", (0, 4), (0,), "add", "-0")
    red("reduce_all_dims_s32", "s32", (3, 4, 5), (0, 1, 2), "add", 0)
    red("reduce_nonidentity_init", "s32", (4, 40), (1,), "add", 1000)
    # XLA's normalized form: f32 reducer that rounds through bf16 at every step
    add("reduce_rounding_form", "f {\n a = f32[] parameter(0)\n b = f32[] parameter(1)\n c = f32[] add(a, b)\n"
        " d = bf16[] convert(c)\n ROOT e = f32[] convert(d)\n}\n"
        "ENTRY e {\n x = bf16[4,300] parameter(0)\n y = f32[4,300] convert(x)\n z = f32[] constant(0)\n"
        " ROOT r = f32[4] reduce(y, z), dimensions={1}, to_apply=f\n}", data("bf16", (4, 300), 0, 1))
    # variadic
    add("reduce_variadic_add_max", "f {\n a = f32[] parameter(0)\n b = s32[] parameter(1)\n c = f32[] parameter(2)\n"
        " d = s32[] parameter(3)\n s = f32[] add(a, c)\n m = s32[] maximum(b, d)\n"
        " ROOT t = (f32[], s32[]) tuple(s, m)\n}\n"
        "ENTRY e {\n x = f32[3,20] parameter(0)\n y = s32[3,20] parameter(1)\n z = f32[] constant(0)\n"
        " w = s32[] constant(-2147483648)\n"
        " ROOT r = (f32[3], s32[3]) reduce(x, y, z, w), dimensions={1}, to_apply=f\n}",
        data("f32", (3, 20)), data("s32", (3, 20)))
    add("reduce_variadic_add_add_long", "f {\n a = f32[] parameter(0)\n b = f32[] parameter(1)\n"
        " c = f32[] parameter(2)\n"
        " d = f32[] parameter(3)\n s = f32[] add(a, c)\n m = f32[] add(b, d)\n ROOT t = (f32[], f32[]) tuple(s, m)\n}\n"
        "ENTRY e {\n x = f32[3,500] parameter(0)\n y = f32[3,500] parameter(1)\n z = f32[] constant(0)\n"
        " ROOT r = (f32[3], f32[3]) reduce(x, y, z, z), dimensions={1}, to_apply=f\n}",
        data("f32", (3, 500)), data("f32", (3, 500)))
    for t, d, dims, rdim in (("f32", "GT", (4, 300), 1), ("s32", "LT", (5, 40), 1), ("bf16", "GT", (3, 1000), 1),
                             ("f32", "GT", (600, 3), 0), ("f32", "GT", (2, 7, 9), 2)):
        x = data(t, dims, -4, 4) if t != "s32" else rs.randint(-5, 5, size=dims).astype(np.int32)
        if t == "f32":
            x = np.round(x)  # ties
            x.flat[5] = np.nan
        k = np.broadcast_to(np.arange(dims[rdim], dtype=np.int32).reshape(
            [-1 if i == rdim else 1 for i in range(len(dims))]), dims).copy()
        out = [n for i, n in enumerate(dims) if i != rdim]
        init = "-inf" if d == "GT" and t != "s32" else ("2147483647" if t == "s32" else "inf")
        add(f"reduce_arg{'max' if d == 'GT' else 'min'}_{t}_{'x'.join(map(str, dims))}", _ARGMAX.format(t=t, d=d) +
            f"ENTRY e {{\n x = {_shape(t, dims)} parameter(0)\n k = {_shape('s32', dims)} parameter(1)\n"
            f" z = {t}[] constant({init})\n m = s32[] constant(-1)\n"
            f" ROOT r = ({_shape(t, out)}, {_shape('s32', out)}) reduce(x, k, z, m), dimensions={{{rdim}}}, "
            f"to_apply=argmax\n}}", x, k)
    # map
    add("map_fma", "f {\n a = f32[] parameter(0)\n b = f32[] parameter(1)\n c = f32[] constant(2)\n"
        " m = f32[] multiply(a, c)\n ROOT s = f32[] add(m, b)\n}\n"
        "ENTRY e {\n x = f32[4,5] parameter(0)\n y = f32[4,5] parameter(1)\n"
        " ROOT r = f32[4,5] map(x, y), dimensions={0,1}, to_apply=f\n}", data("f32", (4, 5)), data("f32", (4, 5)))
    add("map_convert_s32_to_bf16", "f {\n a = s32[] parameter(0)\n ROOT c = bf16[] convert(a)\n}\n"
        "ENTRY e {\n x = s32[300] parameter(0)\n ROOT r = bf16[300] map(x), dimensions={0}, to_apply=f\n}",
        rs.randint(-100000, 100000, 300).astype(np.int32))
    add("map_compare_select", "f {\n a = s8[] parameter(0)\n b = s8[] parameter(1)\n p = pred[] compare(a, b), "
        "direction=GT\n d = s8[] subtract(a, b)\n e = s8[] subtract(b, a)\n ROOT s = s8[] select(p, d, e)\n}\n"
        "ENTRY e {\n x = s8[50] parameter(0)\n y = s8[50] parameter(1)\n"
        " ROOT r = s8[50] map(x, y), dimensions={0}, to_apply=f\n}", data("s8", (50,)), data("s8", (50,)))

    # computations that are not elementwise: per-element calls
    add("map_not_elementwise", "f {\n a = f32[] parameter(0)\n r = f32[1] reshape(a)\n b = f32[1,2] broadcast(r), "
        "dimensions={0}\n s = f32[1,1] slice(b), slice={[0:1], [1:2]}\n t = f32[] reshape(s)\n"
        " ROOT m = f32[] multiply(t, a)\n}\n"
        "ENTRY e {\n x = f32[3,4] parameter(0)\n ROOT r = f32[3,4] map(x), dimensions={0,1}, to_apply=f\n}",
        data("f32", (3, 4)))
    add("reduce_not_elementwise", "f {\n a = s32[] parameter(0)\n b = s32[] parameter(1)\n r = s32[1] reshape(b)\n"
        " t = s32[] reshape(r)\n c = s32[] constant(3)\n m = s32[] multiply(a, c)\n ROOT s = s32[] add(m, t)\n}\n"
        "ENTRY e {\n x = s32[4,6] parameter(0)\n z = s32[] constant(1)\n"
        " ROOT r = s32[4] reduce(x, z), dimensions={1}, to_apply=f\n}", rs.randint(-9, 9, (4, 6)).astype(np.int32))
    add("reduce_sub_sequential", "f {\n a = s32[] parameter(0)\n b = s32[] parameter(1)\n"
        " ROOT s = s32[] subtract(a, b)\n}\n"
        "ENTRY e {\n x = s32[3,20] parameter(0)\n z = s32[] constant(100)\n"
        " ROOT r = s32[3] reduce(x, z), dimensions={1}, to_apply=f\n}", rs.randint(-9, 9, (3, 20)).astype(np.int32))

    # dot
    def dot(name, lt, ldims, rt, rdims, ot, odims, attrs, a=None, b=None, lo=-3, hi=3):
        add(name, f"ENTRY e {{\n a = {_shape(lt, ldims)} parameter(0)\n b = {_shape(rt, rdims)} parameter(1)\n"
                  f" ROOT d = {_shape(ot, odims)} dot(a, b){', ' + attrs if attrs else ''}\n}}",
            data(lt, ldims, lo, hi) if a is None else a, data(rt, rdims, lo, hi) if b is None else b)

    mm = "lhs_contracting_dims={1}, rhs_contracting_dims={0}"
    dot("dot_matmul_f32_tol", "f32", (8, 300), "f32", (300, 12), "f32", (8, 12), mm)
    dot("dot_matmul_f32_small", "f32", (3, 4), "f32", (4, 5), "f32", (3, 5), mm,
        rs.randint(-8, 8, (3, 4)).astype(np.float32), rs.randint(-8, 8, (4, 5)).astype(np.float32))
    dot("dot_f64_tol", "f64", (5, 50), "f64", (50, 6), "f64", (5, 6), mm)
    dot("dot_vec_vec_tol", "f32", (100,), "f32", (100,), "f32", (),
        "lhs_contracting_dims={0}, rhs_contracting_dims={0}")
    dot("dot_mat_vec_tol", "f32", (7, 100), "f32", (100,), "f32", (7,), mm)
    dot("dot_batch_tol", "f32", (2, 3, 4, 40), "f32", (2, 3, 40, 5), "f32", (2, 3, 4, 5),
        "lhs_batch_dims={0,1}, lhs_contracting_dims={3}, rhs_batch_dims={0,1}, rhs_contracting_dims={2}")
    dot("dot_batch_not_leading_tol", "f32", (4, 2, 30), "f32", (30, 5, 2), "f32", (2, 4, 5),
        "lhs_batch_dims={1}, lhs_contracting_dims={2}, rhs_batch_dims={2}, rhs_contracting_dims={0}")
    dot("dot_multi_contract_tol", "f32", (3, 4, 5, 6), "f32", (6, 7, 4), "f32", (3, 5, 7),
        "lhs_contracting_dims={1,3}, rhs_contracting_dims={2,0}")
    dot("dot_rhs_transposed_tol", "f32", (8, 64), "f32", (10, 64), "f32", (8, 10),
        "lhs_contracting_dims={1}, rhs_contracting_dims={1}")
    dot("dot_outer", "s32", (3,), "s32", (4,), "s32", (3, 4), "")
    dot("dot_precision_tol", "f32", (4, 64), "f32", (64, 3), "f32", (4, 3),
        mm + ", operand_precision={highest,highest}")
    dot("dot_algorithm_tol", "f32", (4, 64), "f32", (64, 3), "f32", (4, 3), mm + ", algorithm=dot_bf16_bf16_f32")
    for t in ("bf16", "f16", "f8e4m3fn", "f8e5m2"):
        dot(f"dot_{t}", t, (6, 64), t, (64, 5), t, (6, 5), mm)
        dot(f"dot_{t}_to_f32_tol", t, (6, 64), t, (64, 5), "f32", (6, 5), mm)
    dot("dot_bf16_f32_mixed_tol", "bf16", (6, 64), "f32", (64, 5), "f32", (6, 5), mm)
    dot("dot_s8_s32", "s8", (6, 300), "s8", (300, 5), "s32", (6, 5), mm)
    dot("dot_s8_s8_wrap", "s8", (6, 300), "s8", (300, 5), "s8", (6, 5), mm)
    dot("dot_s32_wrap", "s32", (4, 50), "s32", (50, 3), "s32", (4, 3), mm)
    dot("dot_s64_wrap", "s64", (4, 50), "s64", (50, 3), "s64", (4, 3), mm)
    dot("dot_u8", "u8", (4, 50), "u8", (50, 3), "u8", (4, 3), mm)
    dot("dot_u32", "u32", (4, 50), "u32", (50, 3), "u32", (4, 3), mm)
    dot("dot_s16_u8_mixed_s32", "s16", (4, 20), "u8", (20, 3), "s32", (4, 3), mm)
    dot("dot_s8_f32", "s8", (4, 20), "s8", (20, 3), "f32", (4, 3), mm)
    dot("dot_pred", "pred", (5, 8), "pred", (8, 4), "pred", (5, 4), mm)
    dot("dot_c64_tol", "c64", (4, 30), "c64", (30, 3), "c64", (4, 3), mm)
    dot("dot_c128_tol", "c128", (4, 30), "c128", (30, 3), "c128", (4, 3), mm)
    dot("dot_empty_contract", "f32", (3, 0), "f32", (0, 2), "f32", (3, 2), mm)
    x = data("f32", (3, 4))
    x[1, 2] = np.nan
    x[0, 0] = np.inf
    dot("dot_nan_inf", "f32", (3, 4), "f32", (4, 2), "f32", (3, 2), mm, x,
        rs.randint(-3, 3, (4, 2)).astype(np.float32))
    return C


def out_compare(name, outs):
    oc = {}
    for k, o in enumerate(outs):
        rt, at = _tol(name, o)
        if rt or at:
            oc[k] = ({"rtol": rt, "atol": at}, TOL_REASON)
    return oc


def declare() -> list[Decl]:
    return [Decl(FAMILY, name, inputs, hlo=text, keep_after=False, out_compare=lambda outs, n=name: out_compare(n, outs))
            for name, text, inputs in _cases()]
