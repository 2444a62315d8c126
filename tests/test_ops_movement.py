"""Data-movement kernels (hlo_interp/ops/movement.py): iota, broadcast, reshape, transpose, slice,
dynamic-slice, dynamic-update-slice, concatenate, pad, reverse.

Three kinds of tests:
  * the operation-semantics documents' worked examples (EX-10..EX-22) on the plain functions;
  * XLA golden cases: HLO texts run by XLA:CPU (through JAX, dev-only) with the inputs and outputs
    committed in tests/golden/movement_hlo/; run here through the kernels with a tiny
    stand-alone interpreter (so these tests do not depend on hlo_interp/evaluator.py), and end to
    end through hlo_interp.run;
  * located errors for bad operands.

Regenerate the golden data (dev-only, needs jax):  python -m tools.oracle regen movement_hlo
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
from casedata import cases  # noqa: E402
from hlo_interp.ops import movement as mv  # noqa: E402
from hlo_interp.ops.registry import KERNELS  # noqa: E402

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


def golden_cases(family="movement_hlo"):
    """[(name, text, inputs, expected outputs)] of a family of hand-written XLA:CPU cases."""
    return [(c.short, c.text(), c.inputs, c.expected) for c in cases(family)]


# --------------------------------------------------------------------------------------------------
# The operation-semantics documents' worked examples

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
    assert len(GOLDEN) >= 40, "tests/golden/movement_hlo/ is missing or incomplete"


@pytest.mark.parametrize("case", [pytest.param(c, id=c.short) for c in cases("movement_hlo")])
def test_golden_kernels(case):
    """Through the kernels alone, byte for byte (tests/test_golden.py runs the same cases end to end)."""
    case.check(mini_run(case.text(), *case.inputs), "before")


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
