"""movement_hlo: hand-written one-op modules of the data-movement kernels (iota, broadcast, reshape,
transpose, slice, dynamic-slice, dynamic-update-slice, concatenate, pad, reverse, and chains of them), run by
XLA:CPU; compared byte for byte.  tests/test_ops_movement.py also runs them through the kernels alone."""
from __future__ import annotations

import ml_dtypes
import numpy as np

from ..core import Decl

FAMILY = "movement_hlo"
# the operation-semantics documents' worked-example operands, also used by tests/test_ops_movement.py
V = np.array([[[10, 11, 12], [15, 16, 17]], [[20, 21, 22], [25, 26, 27]], [[30, 31, 32], [35, 36, 37]],
              [[40, 41, 42], [45, 46, 47]]], np.float32)
A5 = np.arange(5, dtype=np.float32)
B43 = np.arange(12, dtype=np.float32).reshape(4, 3)


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


def declare() -> list[Decl]:
    return [Decl(FAMILY, name, inputs, hlo=text, compare="bits", keep_after=False) for name, text, inputs in _cases()]
