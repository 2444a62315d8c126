"""Data-movement kernels (hlo_interp/ops/movement.py): iota, broadcast, reshape, transpose, slice,
dynamic-slice, dynamic-update-slice, concatenate, pad, reverse.

Three kinds of tests:
  * the spec documents' worked examples (op-checklist.md §2, EX-10..EX-22) on the plain functions;
  * XLA golden cases: HLO texts run by XLA:CPU (through JAX, dev-only) with the inputs and outputs
    committed in tests/data/ops_movement_xla.npz; run here through the kernels with a tiny
    stand-alone interpreter (so these tests do not depend on hlo_interp/evaluator.py), and end to
    end through hlo_interp.run;
  * located errors for bad operands.

Regenerate the golden data (dev-only, needs jax):  python3 tests/test_ops_movement.py
"""
from __future__ import annotations

import sys
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import hlo_interp  # noqa: E402
from hlo_interp.ops import movement as mv  # noqa: E402
from hlo_interp.ops.registry import KERNELS  # noqa: E402

DATA = ROOT / "tests" / "data" / "ops_movement_xla.npz"
pytestmark = pytest.mark.filterwarnings("error::RuntimeWarning")  # no NumPy warning may leak

# --------------------------------------------------------------------------------------------------
# A minimal stand-alone interpreter over the registry's kernels (parameter/constant/tuple/gte inline)


class _Ctx:
    def __init__(self, module):
        self.module = module
        self.options = None

    def call(self, name):
        comp = self.module.computation(name)
        return lambda *args: _run_comp(self, comp, args)

    def check_alloc(self, ins, shape):
        pass


def _run_comp(ctx, comp, args):
    env = {}
    for ins in comp.instructions:
        ops = [env[o] for o in ins.operands]
        if ins.opcode == "parameter":
            v = args[ins.parameter_number]
        elif ins.opcode == "constant":
            v = ins.literal.value
        elif ins.opcode == "tuple":
            v = tuple(ops)
        elif ins.opcode == "get-tuple-element":
            v = ops[0][ins.attrs["index"]]
        else:
            v = KERNELS[ins.opcode](ins, ctx)(*ops)
        env[ins.name] = v
    return env[comp.root.name]


def mini_run(text, *args):
    from hlo_interp.ops import load_all
    load_all()  # registers every family's kernels (reducer bodies need the elementwise ones)
    m = hlo_interp.parse(text)
    out = _run_comp(_Ctx(m), m.entry, args)
    return list(out) if isinstance(out, tuple) else [out]


def _leaf_shapes(shape):
    return [s for e in shape.elements for s in _leaf_shapes(e)] if shape.is_tuple else [shape]


def _decode(raw, shape):
    dt = shape.element_type.dtype
    return np.frombuffer(raw.tobytes(), dtype=dt).reshape(shape.dims)


def golden_cases(path=DATA):
    """[(name, text, inputs, expected outputs)] from the committed npz."""
    if not path.exists():
        return []
    z = np.load(path)
    out = []
    for name in sorted({k.split(":")[0] for k in z.files}):
        text = bytes(z[f"{name}:text"]).decode()
        m = hlo_interp.parse(text)
        params = sorted((i for i in m.entry.instructions if i.opcode == "parameter"),
                        key=lambda i: i.parameter_number)
        ins = [_decode(z[f"{name}:in{i}"], p.shape) for i, p in enumerate(params)]
        outs = [_decode(z[f"{name}:out{j}"], s) for j, s in enumerate(_leaf_shapes(m.entry.root.shape))]
        out.append((name, text, ins, outs))
    return out


def _canon_nan(a):
    """NaNs with their sign and payload dropped (XLA:CPU's NaN sign after max/min is an artifact of its
    code generation: compare NaN positions only)."""
    if a.dtype.kind != "f" and not (a.dtype.kind == "V" and a.dtype.itemsize <= 2 and "float" in str(a.dtype)):
        return a
    f = a.astype(np.float32)
    if not np.isnan(f).any():
        return a
    return np.where(np.isnan(f), np.float32(np.nan), f).astype(a.dtype)


def assert_same(got, want, rtol=0.0, atol=0.0, nan_sign=True):
    got = np.asarray(got)
    assert got.shape == want.shape, (got.shape, want.shape)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    if not nan_sign:
        got, want = _canon_nan(got), _canon_nan(want)
    if rtol == 0 and atol == 0:
        assert got.tobytes() == want.tobytes(), f"\n got {got!r}\nwant {want!r}"
    else:
        np.testing.assert_allclose(got.astype(np.complex128 if got.dtype.kind == "c" else np.float64),
                                   want.astype(np.complex128 if want.dtype.kind == "c" else np.float64),
                                   rtol=rtol, atol=atol, equal_nan=True)


# --------------------------------------------------------------------------------------------------
# Spec worked examples (op-checklist.md §2)

V = np.array([[[10, 11, 12], [15, 16, 17]], [[20, 21, 22], [25, 26, 27]], [[30, 31, 32], [35, 36, 37]],
              [[40, 41, 42], [45, 46, 47]]], np.float32)
A5 = np.arange(5, dtype=np.float32)
B43 = np.arange(12, dtype=np.float32).reshape(4, 3)


def test_ex10_broadcast_scalar():
    r = mv.broadcast(np.float32(2.0), (2, 3), ())
    assert r.shape == (2, 3) and (r == 2.0).all()


def test_ex11_ex12_collapse_and_reshape():
    assert mv.reshape(V, (24,)).tolist() == [10, 11, 12, 15, 16, 17, 20, 21, 22, 25, 26, 27, 30, 31, 32, 35,
                                             36, 37, 40, 41, 42, 45, 46, 47]
    assert mv.reshape(V, (4, 6)).tolist() == [[10, 11, 12, 15, 16, 17], [20, 21, 22, 25, 26, 27],
                                              [30, 31, 32, 35, 36, 37], [40, 41, 42, 45, 46, 47]]
    assert mv.reshape(V, (8, 3)).tolist() == [[10, 11, 12], [15, 16, 17], [20, 21, 22], [25, 26, 27],
                                              [30, 31, 32], [35, 36, 37], [40, 41, 42], [45, 46, 47]]


def test_ex13_reshape_out_of_order_is_transpose_then_reshape():
    t = mv.transpose(V, (1, 2, 0))
    assert mv.reshape(t, (24,)).tolist() == [10, 20, 30, 40, 11, 21, 31, 41, 12, 22, 32, 42, 15, 25, 35, 45,
                                             16, 26, 36, 46, 17, 27, 37, 47]
    assert mv.reshape(t, (8, 3)).tolist() == [[10, 20, 30], [40, 11, 21], [31, 41, 12], [22, 32, 42],
                                              [15, 25, 35], [45, 16, 26], [36, 46, 17], [27, 37, 47]]
    assert mv.reshape(t, (2, 6, 2)).tolist() == [
        [[10, 20], [30, 40], [11, 21], [31, 41], [12, 22], [32, 42]],
        [[15, 25], [35, 45], [16, 26], [36, 46], [17, 27], [37, 47]]]


def test_ex14_reshape_scalar_and_single_element():
    assert mv.reshape(np.array([[5.0]], np.float32), ()).shape == ()
    assert mv.reshape(np.float32(5), (1, 1)).tolist() == [[5.0]]


def test_ex15_ex16_concatenate():
    a, b, c = (np.array(v, np.int32) for v in ([2, 3], [4, 5], [6, 7]))
    assert mv.concatenate([a, b, c], 0).tolist() == [2, 3, 4, 5, 6, 7]
    a = np.array([[1, 2], [3, 4], [5, 6]], np.int32)
    b = np.array([[7, 8]], np.int32)
    assert mv.concatenate([a, b], 0).tolist() == [[1, 2], [3, 4], [5, 6], [7, 8]]
    assert mv.concatenate([np.zeros((3, 2, 8)), np.zeros((3, 2, 4))], 2).shape == (3, 2, 12)


def test_ex17_slice():
    assert mv.slice_(A5, (2,), (4,), (1,)).tolist() == [2.0, 3.0]
    assert mv.slice_(B43, (2, 1), (4, 3), (1, 1)).tolist() == [[7, 8], [10, 11]]


def test_ex18_dynamic_slice_and_clamp():
    assert mv.dynamic_slice(A5, [np.int32(2)], (2,)).tolist() == [2.0, 3.0]
    assert mv.dynamic_slice(B43, [np.int32(2), np.int32(1)], (2, 2)).tolist() == [[7, 8], [10, 11]]
    assert mv.dynamic_slice(A5, [np.int32(4)], (2,)).tolist() == [3.0, 4.0]  # clamped to 3


def test_ex19_dynamic_update_slice():
    assert mv.dynamic_update_slice(A5, np.array([5, 6], np.float32), [np.int32(2)]).tolist() == [0, 1, 5, 6, 4]
    u = np.array([[12, 13], [14, 15], [16, 17]], np.float32)
    assert mv.dynamic_update_slice(B43, u, [np.int32(1), np.int32(1)]).tolist() == [
        [0, 1, 2], [3, 12, 13], [6, 14, 15], [9, 16, 17]]
    assert A5.tolist() == [0, 1, 2, 3, 4]  # the operand is not modified


def test_ex20_iota():
    assert mv.iota((4, 8), np.int32, 0).tolist() == [[i] * 8 for i in range(4)]
    assert mv.iota((4, 8), np.int32, 1).tolist() == [list(range(8))] * 4


@pytest.mark.parametrize("lo_hi_int, want", [
    (((0, 0, 1), (0, 0, 1)), [[1, 0, 2, 0, 3], [0, 0, 0, 0, 0], [4, 0, 5, 0, 6]]),
    (((0, 1, 0), (1, 2, 0)), [[0, 1, 2, 3, 0, 0], [0, 4, 5, 6, 0, 0], [0, 0, 0, 0, 0, 0]]),
    (((0, 1, 1), (1, 2, 1)), [[0, 1, 0, 2, 0, 3, 0, 0], [0, 0, 0, 0, 0, 0, 0, 0], [0, 4, 0, 5, 0, 6, 0, 0],
                              [0, 0, 0, 0, 0, 0, 0, 0]]),
    (((0, 0, 0), (-1, 0, 1)), [[0, 2, 0, 3], [0, 5, 0, 6]]),
])
def test_ex22_pad(lo_hi_int, want):
    x = np.array([[1, 2, 3], [4, 5, 6]], np.int32)
    lo, hi, it = zip(*lo_hi_int)
    assert mv.pad(x, np.int32(0), lo, hi, it).tolist() == want


def test_pad_negative_both_sides_with_interior():
    # interior-padded 0 _ 1 _ 2 _ 3 _ 4, then 3 cut from each side
    assert mv.pad(np.arange(5), 0, (-3,), (-3,), (1,)).tolist() == [0, 2, 0]
    assert mv.pad(np.arange(0), 7, (2,), (1,), (3,)).tolist() == [7, 7, 7]


def test_dynamic_slice_index_types():
    x = np.arange(10)
    assert mv.dynamic_slice(x, [np.uint32(4_000_000_000)], (3,)).tolist() == [7, 8, 9]
    assert mv.dynamic_slice(x, [np.int8(-128)], (3,)).tolist() == [0, 1, 2]
    assert mv.dynamic_slice(x, [np.uint64(2 ** 64 - 1)], (3,)).tolist() == [7, 8, 9]
    assert mv.dynamic_slice(x, [np.array(5, ml_dtypes.int4)], (3,)).tolist() == [5, 6, 7]


def test_iota_types():
    assert mv.iota((300,), ml_dtypes.bfloat16, 0)[257].astype(np.float32) == 256.0  # round to even
    assert mv.iota((20,), ml_dtypes.int4, 0).astype(np.int32).tolist()[6:10] == [6, 7, -8, -7]
    assert mv.iota((3,), np.complex64, 0).tolist() == [0j, 1 + 0j, 2 + 0j]


# --------------------------------------------------------------------------------------------------
# XLA golden cases

GOLDEN = golden_cases()


def test_golden_data_present():
    assert len(GOLDEN) >= 40, "tests/data/ops_movement_xla.npz is missing or incomplete"


@pytest.mark.parametrize("name,text,inputs,expected", GOLDEN, ids=[c[0] for c in GOLDEN])
def test_golden_kernels(name, text, inputs, expected):
    got = mini_run(text, *inputs)
    assert len(got) == len(expected)
    for g, w in zip(got, expected):
        assert_same(g, w)


@pytest.mark.parametrize("name,text,inputs,expected", GOLDEN, ids=[c[0] for c in GOLDEN])
def test_golden_end_to_end(name, text, inputs, expected):
    got = hlo_interp.run(text, *inputs)
    assert len(got) == len(expected)
    for g, w in zip(got, expected):
        assert_same(g, w)


# --------------------------------------------------------------------------------------------------
# Located errors


@pytest.mark.parametrize("text, args, msg", [
    ("ENTRY e { x = f32[3] parameter(0)\n ROOT r = f32[2,4] broadcast(x), dimensions={1} }",
     (np.zeros(3, np.float32),), "sizes do not match"),
    ("ENTRY e { x = f32[3] parameter(0)\n ROOT r = f32[2] slice(x), slice={[2:4]} }",
     (np.zeros(3, np.float32),), "out of bounds"),
    ("ENTRY e { x = f32[3] parameter(0)\n v = f32[] parameter(1)\n ROOT r = f32[0] pad(x, v), padding=-3_-1 }",
     (np.zeros(3, np.float32), np.float32(0)), "negative dimension"),
    ("ENTRY e { x = f32[3] parameter(0)\n ROOT r = f32[4] reshape(x) }",
     (np.zeros(3, np.float32),), "reshape of 3 elements"),
])
def test_errors_are_located(text, args, msg):
    with pytest.raises(hlo_interp.HloError) as ei:
        mini_run(text, *args)
    rendered = ei.value.render()
    assert msg in rendered
    line = next(i for i, t in enumerate(text.splitlines(), 1) if "ROOT" in t)
    assert rendered.startswith(f"<string>:{line}:")  # located at the failing instruction


# --------------------------------------------------------------------------------------------------
# Golden-data generator (dev-only: runs XLA:CPU through jax)

def _cases():
    rs = np.random.RandomState(42)
    bf, f8 = ml_dtypes.bfloat16, ml_dtypes.float8_e4m3fn
    C = []

    def add(name, text, *inputs):
        C.append((name, "HloModule " + name.replace("-", "_") + "\n\n" + text, list(inputs)))

    def ds(name, ty, dims, sizes, idx_ty, idx):
        ps = "\n".join(f" i{k} = {idx_ty}[] parameter({k + 1})" for k in range(len(dims)))
        ops = ", ".join(f"i{k}" for k in range(len(dims)))
        add(name, f"ENTRY e {{\n x = {ty}[{','.join(map(str, dims))}] parameter(0)\n{ps}\n"
                  f" ROOT r = {ty}[{','.join(map(str, sizes))}] dynamic-slice(x, {ops}), "
                  f"dynamic_slice_sizes={{{','.join(map(str, sizes))}}}\n}}",
            np.arange(int(np.prod(dims))).reshape(dims).astype(_np(ty)),
            *[np.array(i).astype(_np(idx_ty)) for i in idx])

    def dus(name, ty, dims, udims, idx_ty, idx):
        ps = "\n".join(f" i{k} = {idx_ty}[] parameter({k + 2})" for k in range(len(dims)))
        ops = ", ".join(f"i{k}" for k in range(len(dims)))
        add(name, f"ENTRY e {{\n x = {ty}[{','.join(map(str, dims))}] parameter(0)\n"
                  f" u = {ty}[{','.join(map(str, udims))}] parameter(1)\n{ps}\n"
                  f" ROOT r = {ty}[{','.join(map(str, dims))}] dynamic-update-slice(x, u, {ops})\n}}",
            np.arange(int(np.prod(dims))).reshape(dims).astype(_np(ty)),
            (100 + np.arange(int(np.prod(udims)))).reshape(udims).astype(_np(ty)),
            *[np.array(i).astype(_np(idx_ty)) for i in idx])

    for ty, n in (("s32", 5), ("f32", 6), ("bf16", 300), ("f16", 2100), ("s8", 100), ("u4", 20), ("s4", 20),
                  ("f8e4m3fn", 40), ("c64", 3), ("s64", 4), ("u64", 4), ("f64", 4), ("u8", 300)):
        add(f"iota_{ty}_{n}", f"ENTRY e {{\n ROOT r = {ty}[{n}] iota(), iota_dimension=0\n}}")
    add("iota_s32_4x8_d0", "ENTRY e {\n ROOT r = s32[4,8] iota(), iota_dimension=0\n}")
    add("iota_f32_2x3x4_d2", "ENTRY e {\n ROOT r = f32[2,3,4] iota(), iota_dimension=2\n}")

    add("broadcast_scalar", "ENTRY e {\n x = f32[] parameter(0)\n ROOT r = f32[2,3] broadcast(x), dimensions={}\n}",
        np.float32(2.5))
    add("broadcast_minor", "ENTRY e {\n x = s32[3] parameter(0)\n ROOT r = s32[2,3] broadcast(x), dimensions={1}\n}",
        np.array([1, 2, 3], np.int32))
    add("broadcast_major", "ENTRY e {\n x = s32[2] parameter(0)\n ROOT r = s32[2,3] broadcast(x), dimensions={0}\n}",
        np.array([1, 2], np.int32))
    add("broadcast_4d_bf16", "ENTRY e {\n x = bf16[2,3] parameter(0)\n ROOT r = bf16[4,2,5,3] broadcast(x), "
        "dimensions={1,3}\n}", rs.randn(2, 3).astype(bf))
    add("broadcast_pred", "ENTRY e {\n x = pred[2] parameter(0)\n ROOT r = pred[2,2] broadcast(x), dimensions={1}\n}",
        np.array([True, False]))

    add("reshape_collapse", "ENTRY e {\n x = f32[4,2,3] parameter(0)\n ROOT r = f32[8,3] reshape(x)\n}", V)
    add("reshape_to_scalar", "ENTRY e {\n x = f32[1,1] parameter(0)\n ROOT r = f32[] reshape(x)\n}",
        np.array([[5]], np.float32))
    add("reshape_from_scalar", "ENTRY e {\n x = s8[] parameter(0)\n ROOT r = s8[1,1,1] reshape(x)\n}", np.int8(-7))
    add("reshape_f8", "ENTRY e {\n x = f8e4m3fn[2,6] parameter(0)\n ROOT r = f8e4m3fn[3,2,2] reshape(x)\n}",
        rs.randn(2, 6).astype(f8))
    add("reshape_empty", "ENTRY e {\n x = f32[0,3] parameter(0)\n ROOT r = f32[3,0] reshape(x)\n}",
        np.zeros((0, 3), np.float32))

    add("transpose_120", "ENTRY e {\n x = f32[4,2,3] parameter(0)\n ROOT r = f32[2,3,4] transpose(x), "
        "dimensions={1,2,0}\n}", V)
    add("transpose_201_c64", "ENTRY e {\n x = c64[2,3,4] parameter(0)\n ROOT r = c64[4,2,3] transpose(x), "
        "dimensions={2,0,1}\n}", (rs.randn(2, 3, 4) + 1j * rs.randn(2, 3, 4)).astype(np.complex64))
    add("transpose_layout", "ENTRY e {\n x = f32[3,5]{1,0} parameter(0)\n ROOT r = f32[5,3]{0,1} transpose(x), "
        "dimensions={1,0}\n}", rs.randn(3, 5).astype(np.float32))

    add("slice_1d", "ENTRY e {\n x = f32[5] parameter(0)\n ROOT r = f32[2] slice(x), slice={[2:4]}\n}", A5)
    add("slice_2d", "ENTRY e {\n x = f32[4,3] parameter(0)\n ROOT r = f32[2,2] slice(x), slice={[2:4], [1:3]}\n}", B43)
    add("slice_strided", "ENTRY e {\n x = s32[10,7] parameter(0)\n ROOT r = s32[3,2] slice(x), "
        "slice={[1:10:3], [0:7:4]}\n}", np.arange(70, dtype=np.int32).reshape(10, 7))
    add("slice_empty", "ENTRY e {\n x = s32[10] parameter(0)\n ROOT r = s32[0] slice(x), slice={[3:3]}\n}",
        np.arange(10, dtype=np.int32))
    add("slice_u4", "ENTRY e {\n x = u4[8] parameter(0)\n ROOT r = u4[4] slice(x), slice={[1:8:2]}\n}",
        np.arange(8).astype(ml_dtypes.uint4))

    ds("dynamic_slice_2d", "f32", (4, 3), (2, 2), "s32", (2, 1))
    ds("dynamic_slice_clamp_high", "f32", (5,), (2,), "s32", (4,))
    ds("dynamic_slice_clamp_negative", "s32", (6, 5), (2, 3), "s32", (-3, 100))
    ds("dynamic_slice_u32_huge", "s32", (10,), (3,), "u32", (4_000_000_000,))
    ds("dynamic_slice_s8_min", "bf16", (10,), (3,), "s8", (-128,))
    ds("dynamic_slice_u8", "s16", (300,), (4,), "u8", (255,))
    ds("dynamic_slice_s64", "f64", (7, 4), (3, 4), "s64", (2 ** 40, -(2 ** 40)))
    ds("dynamic_slice_u64", "u8", (9,), (2,), "u64", (2 ** 64 - 1,))
    ds("dynamic_slice_s16_3d", "f16", (3, 4, 5), (2, 2, 2), "s16", (1, 3, -1))
    dus("dus_1d", "f32", (5,), (2,), "s32", (2,))
    dus("dus_2d", "f32", (4, 3), (3, 2), "s32", (1, 1))
    dus("dus_clamp", "s32", (6, 5), (2, 3), "s32", (7, -2))
    dus("dus_u32_huge", "bf16", (10,), (4,), "u32", (3_000_000_000,))
    dus("dus_s8", "u8", (10, 3), (2, 3), "s8", (-100, 1))
    dus("dus_full", "s32", (3,), (3,), "s32", (1,))
    dus("dus_pred", "pred", (4,), (2,), "s32", (1,))

    add("concat_1d", "ENTRY e {\n a = s32[2] parameter(0)\n b = s32[2] parameter(1)\n c = s32[2] parameter(2)\n"
        " ROOT r = s32[6] concatenate(a, b, c), dimensions={0}\n}",
        np.array([2, 3], np.int32), np.array([4, 5], np.int32), np.array([6, 7], np.int32))
    add("concat_2d_dim0", "ENTRY e {\n a = s32[3,2] parameter(0)\n b = s32[1,2] parameter(1)\n"
        " ROOT r = s32[4,2] concatenate(a, b), dimensions={0}\n}",
        np.array([[1, 2], [3, 4], [5, 6]], np.int32), np.array([[7, 8]], np.int32))
    add("concat_dim1_bf16", "ENTRY e {\n a = bf16[2,3] parameter(0)\n b = bf16[2,1] parameter(1)\n"
        " c = bf16[2,0] parameter(2)\n ROOT r = bf16[2,4] concatenate(a, b, c), dimensions={1}\n}",
        rs.randn(2, 3).astype(bf), rs.randn(2, 1).astype(bf), np.zeros((2, 0), bf))
    add("concat_pred", "ENTRY e {\n a = pred[2] parameter(0)\n b = pred[1] parameter(1)\n"
        " ROOT r = pred[3] concatenate(a, b), dimensions={0}\n}", np.array([True, False]), np.array([True]))

    x23 = np.array([[1, 2, 3], [4, 5, 6]], np.int32)
    for tag, cfg, out in (("a", "0_0_1x0_0_1", "3,5"), ("b", "0_1x1_2", "3,6"), ("c", "0_1_1x1_2_1", "4,8"),
                          ("d", "0_0x-1_0_1", "2,4"), ("e", "-1_-1_2x-2_3_1", "2,6"), ("f", "2_-4_0x0_0", "0,3"),
                          ("g", "1_1_3x-2_-2_2", "7,3")):
        add(f"pad_{tag}", f"ENTRY e {{\n x = s32[2,3] parameter(0)\n v = s32[] parameter(1)\n"
                          f" ROOT r = s32[{out}] pad(x, v), padding={cfg}\n}}", x23, np.int32(-9))
    add("pad_bf16_nan", "ENTRY e {\n x = bf16[3] parameter(0)\n v = bf16[] parameter(1)\n"
        " ROOT r = bf16[8] pad(x, v), padding=1_2_1\n}", rs.randn(3).astype(bf), np.array(np.nan, bf))
    add("pad_empty_operand", "ENTRY e {\n x = f32[0] parameter(0)\n v = f32[] parameter(1)\n"
        " ROOT r = f32[3] pad(x, v), padding=2_1_3\n}", np.zeros(0, np.float32), np.float32(7))

    add("reverse_0", "ENTRY e {\n x = s32[2,3] parameter(0)\n ROOT r = s32[2,3] reverse(x), dimensions={0}\n}", x23)
    add("reverse_01", "ENTRY e {\n x = s32[2,3] parameter(0)\n ROOT r = s32[2,3] reverse(x), dimensions={0,1}\n}", x23)
    add("reverse_none", "ENTRY e {\n x = s32[2,3] parameter(0)\n ROOT r = s32[2,3] reverse(x), dimensions={}\n}", x23)
    add("reverse_3d_f16", "ENTRY e {\n x = f16[2,3,4] parameter(0)\n ROOT r = f16[2,3,4] reverse(x), "
        "dimensions={1}\n}", rs.randn(2, 3, 4).astype(np.float16))
    add("chain", "ENTRY e {\n x = f32[2,3] parameter(0)\n t = f32[3,2] transpose(x), dimensions={1,0}\n"
        " b = f32[4,3,2] broadcast(t), dimensions={1,2}\n s = f32[4,2,2] slice(b), slice={[0:4], [1:3], [0:2]}\n"
        " ROOT r = f32[16] reshape(s)\n}", rs.randn(2, 3).astype(np.float32))
    return C


def _np(ty):
    from hlo_interp.types import primitive_type
    return primitive_type(ty).dtype


def run_xla(text, *args):
    """Dev-only: run HLO text on XLA:CPU through jax/jaxlib."""
    import os
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    import jax
    jax.config.update("jax_enable_x64", True)
    import jaxlib._hlo as H
    from jax._src.lib import _jax
    from jax._src.lib import xla_client as xc
    mlir = _jax.mlir.hlo_to_stablehlo(H.hlo_module_from_text(text).as_serialized_hlo_module_proto())
    client = jax.devices("cpu")[0].client
    exe = client.compile_and_load(mlir, xc.DeviceList(tuple(client.devices()[:1])), xc.CompileOptions())
    return [np.asarray(o) for o in exe.execute([jax.device_put(a) for a in args])]


def regenerate(cases, path):
    store = {}
    for name, text, inputs in cases:
        try:
            outs = run_xla(text, *inputs)
        except Exception as e:  # noqa: BLE001
            print(f"skip {name}: XLA refuses: {str(e).splitlines()[0][:150]}")
            continue
        store[f"{name}:text"] = np.frombuffer(text.encode(), np.uint8)
        for i, a in enumerate(inputs):
            store[f"{name}:in{i}"] = np.frombuffer(np.ascontiguousarray(a).tobytes(), np.uint8)
        for j, a in enumerate(outs):
            store[f"{name}:out{j}"] = np.frombuffer(np.ascontiguousarray(a).tobytes(), np.uint8)
    path.parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(path, **store)
    print(f"wrote {path} ({len(cases)} cases)")


if __name__ == "__main__":
    regenerate(_cases(), DATA)
