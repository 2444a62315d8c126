"""collective-permute's in-place form (input, output, input offsets, output offsets, slice_sizes) and its
-start/-done pair: hand-derived cases (no XLA in jaxlib 0.10.2 runs this form: its StableHLO round trip
refuses 4 operands), the semantics from XLA's sources (see ops/collectives.py)."""
from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import hlo_interp
from hlo_interp import HloError
from hlo_interp.spmd import run_spmd

from casedata import small_values


# --------------------------------------------------------------------------------------------------
# in-place collective-permute

_CP = """HloModule m, replica_count=4
ENTRY e {{
  input = {t}[4,2] parameter(0)
  output = {t}[6,2] parameter(1)
  z = s32[] constant(0)
  one = s32[] constant(1)
  two = s32[] constant(2)
  t1 = (s32[], s32[]) tuple(one, z)
  t2 = (s32[], s32[]) tuple(two, z)
  ROOT cp = {t}[6,2] collective-permute(input, output, t1, t2), source_target_pairs={{{{0,1}},{{1,2}},{{2,3}}}}, slice_sizes={{{{2,2}}}}
}}
"""

_TYPES = [("pred", np.bool_), ("s4", ml_dtypes.int4), ("s8", np.int8), ("u16", np.uint16), ("s32", np.int32),
          ("u64", np.uint64), ("f8e4m3fn", ml_dtypes.float8_e4m3fn), ("bf16", ml_dtypes.bfloat16),
          ("f16", np.float16), ("f32", np.float32), ("f64", np.float64), ("c64", np.complex64),
          ("c128", np.complex128)]


@pytest.mark.parametrize("t,dtype", _TYPES, ids=[t for t, _ in _TYPES])
def test_in_place_permute_every_type(t, dtype):
    # pairs 0->1->2->3: device d+1's output rows [2,4) get device d's input rows [1,3); device 0 (no
    # source) keeps its output buffer; every other row of every output is untouched
    ins = [[small_values(dtype, (4, 2), 10 + d), small_values(dtype, (6, 2), 20 + d)] for d in range(4)]
    got = run_spmd(hlo_interp.parse(_CP.format(t=t)), ins, 4, 1, timeout=20)
    for d in range(4):
        want = ins[d][1].copy()
        if d > 0:
            want[2:4] = ins[d - 1][0][1:3]
        assert got[d][0].dtype == np.dtype(dtype)
        np.testing.assert_array_equal(got[d][0].view(np.uint8), want.view(np.uint8))


_CP_TUPLE = """HloModule m, replica_count=4
ENTRY e {
  rid = u32[] replica-id()
  b0 = u32[2,3] broadcast(rid), dimensions={}
  inp = (u32[2,3], u32[2,3]) tuple(b0, b0)
  k = u32[] constant(1000)
  o0 = u32[2,3] broadcast(k), dimensions={}
  o1 = u32[4,3] broadcast(k), dimensions={}
  out = (u32[2,3], u32[4,3]) tuple(o0, o1)
  z = s32[] constant(0)
  one = s32[] constant(1)
  two = s32[] constant(2)
  a = (s32[], s32[]) tuple(z, z)
  b = (s32[], s32[]) tuple(one, z)
  c = (s32[], s32[]) tuple(two, z)
  ab = ((s32[], s32[]), (s32[], s32[])) tuple(a, b)
  aa = ((s32[], s32[]), (s32[], s32[])) tuple(a, a)
  ac = ((s32[], s32[]), (s32[], s32[])) tuple(a, c)
  ioff = (((s32[], s32[]), (s32[], s32[])), ((s32[], s32[]), (s32[], s32[]))) tuple(ab, aa)
  ooff = (((s32[], s32[]), (s32[], s32[])), ((s32[], s32[]), (s32[], s32[]))) tuple(ab, ac)
  ROOT cp = (u32[2,3], u32[4,3]) collective-permute(inp, out, ioff, ooff), source_target_pairs={{0,1},{1,2},{2,3},{3,0},{0,3},{3,2},{2,1},{1,0}}, slice_sizes={{1,3},{1,3},{2,3},{2,3}}
}
"""


def test_in_place_permute_tuple_two_slices():
    # XLA's parser-test module (tuple buffers, two slices): pairs in two groups, group k moves slice k;
    # slice_sizes buffer-major.  Shift right (slice 0) and left (slice 1): a halo exchange.
    got = run_spmd(hlo_interp.parse(_CP_TUPLE), [[] for _ in range(4)], 4, 1, timeout=20)
    for d in range(4):
        left, right = (d - 1) % 4, (d + 1) % 4
        b0, b1 = got[d][0], got[d][1]
        np.testing.assert_array_equal(b0[:, 0], [left, right])       # rows 0 <- left's row 0, 1 <- right's row 1
        np.testing.assert_array_equal(b1[:, 0], [left, left, right, right])
        assert b0.dtype == np.uint32 and b1.shape == (4, 3)


def test_in_place_permute_start_done_and_single_device():
    text = _CP.format(t="f32").replace(
        "ROOT cp = f32[6,2] collective-permute(", "s = (f32[4,2], f32[6,2], u32[], u32[]) collective-permute-start(") \
        .replace("slice_sizes={{2,2}}", "slice_sizes={{2,2}}\n  ROOT d = f32[6,2] collective-permute-done(s)")
    ins = [[np.full((4, 2), d + 1, np.float32) + np.arange(4, dtype=np.float32)[:, None], np.zeros((6, 2), np.float32)]
           for d in range(4)]
    got = run_spmd(hlo_interp.parse(text), ins, 4, 1, timeout=20)
    np.testing.assert_array_equal(got[3][0][:, 0], [0, 0, 4, 5, 0, 0])  # device 2's rows 1, 2 (values 3+1, 3+2)
    np.testing.assert_array_equal(got[0][0], 0)
    # one device, a pair to itself: the output buffer with the slice written
    one = text.replace("replica_count=4", "replica_count=1").replace("{{0,1},{1,2},{2,3}}", "{{0,0}}")
    (r,) = hlo_interp.run(one, ins[0][0], ins[0][1])
    np.testing.assert_array_equal(r[:, 0], [0, 0, 2, 3, 0, 0])


def test_in_place_permute_device_dependent_offsets():
    # the sender's input offsets apply (each device reads its own input at its own offsets)
    text = """HloModule m, replica_count=2
ENTRY e {
  input = s32[4] parameter(0)
  output = s32[3] parameter(1)
  rid = u32[] replica-id()
  r = s32[] convert(rid)
  z = s32[] constant(0)
  ti = (s32[]) tuple(r)
  to = (s32[]) tuple(z)
  ROOT cp = s32[3] collective-permute(input, output, ti, to), source_target_pairs={{0,1},{1,0}}, slice_sizes={{2}}
}
"""
    ins = [[np.array([10, 11, 12, 13], np.int32), np.full(3, -1, np.int32)],
           [np.array([20, 21, 22, 23], np.int32), np.full(3, -2, np.int32)]]
    got = run_spmd(hlo_interp.parse(text), ins, 2, 1, timeout=20)
    np.testing.assert_array_equal(got[0][0], [21, 22, -1])   # from device 1, its offset 1
    np.testing.assert_array_equal(got[1][0], [10, 11, -2])   # from device 0, its offset 0
    # output offsets that differ between sender and receiver: whose apply is not pinned down: refused
    bad = text.replace("ti = (s32[]) tuple(r)\n  to = (s32[]) tuple(z)", "ti = (s32[]) tuple(z)\n  to = (s32[]) tuple(r)")
    with pytest.raises(HloError, match="output offsets that differ"):
        run_spmd(hlo_interp.parse(bad), ins, 2, 1, timeout=20)


def test_in_place_permute_errors():
    ins = [[np.zeros((4, 2), np.float32), np.zeros((6, 2), np.float32)] for _ in range(4)]
    # a slice that does not fit the output buffer (offset 5 + size 2 > 6)
    text = _CP.format(t="f32").replace("two = s32[] constant(2)", "two = s32[] constant(5)")
    with pytest.raises(HloError, match="does not fit the output buffer"):
        run_spmd(hlo_interp.parse(text), ins, 4, 1, timeout=20)
    # one slice: a source may appear once (XLA's verifier)
    text = _CP.format(t="f32").replace("{{0,1},{1,2},{2,3}}", "{{0,1},{0,2}}")
    with pytest.raises(HloError, match="source 0 appears more than once"):
        run_spmd(hlo_interp.parse(text), ins, 4, 1, timeout=20)
    # slice_sizes entries must cover buffers x slices
    text = _CP.format(t="f32").replace("slice_sizes={{2,2}}", "slice_sizes={{2,2},{1,1}}")
    with pytest.raises(HloError, match="slice_sizes has 2 entries"):
        run_spmd(hlo_interp.parse(text), ins, 4, 1, timeout=20)
