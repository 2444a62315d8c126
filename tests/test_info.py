"""`hlo info` and hlo_interp.info: computations, opcode counts, signatures, XLA's cost counts, and the
memory report from physical layouts.

Expected values:
- byte sizes of tiled / packed / memory-space layouts: worked out by hand below (XLA:CPU refuses tiled
  modules, so nothing runs them), from the layout rules of XLA's "Shapes and layout" document and
  XLA's ShapeUtil::ByteSizeOf / ArraySize;
- FLOPs, transcendentals and bytes accessed: XLA:CPU's own HloCostAnalysis of the same module text,
  recorded with jax 0.10.2 (dev only) by
      from jax._src.lib import _jax, hlo; from tools.oracle.runner import cpu_backend
      _jax.hlo_module_cost_analysis(cpu_backend(), hlo.hlo_module_from_text(text))
  on 2026-11-23; that run matched all 1432 corpus modules XLA accepts (1341 JAX dumps, 91
  handwritten), of which a cross-section of 55 is kept here.  XLA adds -1 (flops and bytes)
  per custom call, whose cost it does not know; info counts them 0 and lists them, so the comparison
  adds -1 per listed call back.  XLA sums in float32: large totals are compared to 1e-6.
- for one real dump (mlp_forward) the opcode counts come from a regex over the text and the FLOPs and
  bytes from hand arithmetic, independently of both the parser and XLA.
"""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

import hlo_interp
from hlo_interp import info as I
from hlo_interp.analysis import cost as C
from hlo_interp.cli import main as cli
from hlo_interp.diagnostics import HloError

CORPUS = Path(__file__).parent / "corpus" / "jax"
HAND = Path(__file__).parent / "corpus" / "handwritten"

# --------------------------------------------------------------------------------------------------
# memory report on tiled, packed and memory-space layouts, by hand

TPU_LIKE = """HloModule tpu_like

ENTRY main {
  a = bf16[8,1,1280,16384]{3,2,0,1:T(8,128)(2,1)} parameter(0)
  b = bf16[3,300]{1,0:T(8,128)(2,1)} parameter(1)
  s = s32[]{:T(128)} parameter(2)
  q = s4[1000]{0:E(4)} parameter(3)
  v = f32[100,100]{1,0:T(8,128)S(1)} parameter(4)
  h = f32[1024]{0:T(1024)S(5)} parameter(5)
  e = bf16[8,1,1280,16384]{3,2,0,1:T(8,128)(2,1)} exponential(a)
  c = f32[100,100]{1,0:T(8,128)S(1)} copy(v)
  u = s4[1000]{0} copy(q)
  bc = bf16[8,1280,16384]{2,1,0:T(8,128)(2,1)} bitcast(e)
  ROOT t = (bf16[8,1280,16384]{2,1,0:T(8,128)(2,1)}, bf16[3,300]{1,0:T(8,128)(2,1)}, s32[]{:T(128)}, f32[100,100]{1,0:T(8,128)S(1)}, s4[1000]{0}, f32[1024]{0:T(1024)S(5)}) tuple(bc, b, s, c, u, h)
}
"""

# (logical bytes, physical bytes) of each buffer:
HAND_BUFFERS = {
    # the spec's example: minor_to_major 3,2,0,1 -> major-to-minor dims (1, 8, 1280, 16384); T(8,128)
    # tiles the two minor dims: 1280 = 160 x 8 and 16384 = 128 x 128, no padding; the (2,1) sub-tiles
    # divide (8,128): none either.  8 x 1 x 1280 x 16384 = 167,772,160 elements x 2 B = 335,544,320 B
    "a": (335_544_320, 335_544_320),
    "e": (335_544_320, 335_544_320),
    # bf16[3,300] in (8,128) tiles: rows 3 -> 8, columns 300 -> 384: 3,072 elements x 2 B = 6,144 B;
    # logical 900 x 2 = 1,800 B
    "b": (1_800, 6_144),
    # a scalar with T(128): one tile of 128 s32 = 512 B for 4 B of data
    "s": (4, 512),
    # s4 packed by E(4): 1000 x 4 bits = 500 B either way
    "q": (500, 500),
    # s4 without E(n): XLA stores a sub-byte element in a whole byte: 1,000 B for 500 B of data
    "u": (500, 1_000),
    # f32[100,100] in (8,128) tiles in S(1): rows 100 -> 104, columns 100 -> 128: 13,312 x 4 = 53,248 B;
    # logical 10,000 x 4 = 40,000 B
    "v": (40_000, 53_248),
    "c": (40_000, 53_248),
    # f32[1024] T(1024) in S(5) (host): exactly one tile
    "h": (4_096, 4_096),
    # bitcast (a view of e) and tuple (pointers to its operands) define no buffer
}


def test_hand_checked_buffers():
    mi = I.module_info(hlo_interp.parse(TPU_LIKE))
    got = {b.name: (b.logical_bytes, b.physical_bytes) for b in mi.buffers}
    assert got == HAND_BUFFERS
    # largest physical first; ties by logical size then name
    assert [b.name for b in mi.buffers] == ["a", "e", "c", "v", "b", "h", "u", "s", "q"]
    assert {b.name: b.memory_space for b in mi.buffers}["v"] == 1


def test_hand_checked_memory_spaces():
    mi = I.module_info(hlo_interp.parse(TPU_LIKE))
    spaces = {s.memory_space: (s.name, s.buffers, s.logical_bytes, s.physical_bytes) for s in mi.memory_spaces}
    # S(0): a, e, b, s, q, u
    #   logical  335,544,320 x 2 + 1,800 + 4 + 500 + 500 = 671,091,444
    #   physical 335,544,320 x 2 + 6,144 + 512 + 500 + 1,000 = 671,096,796
    # S(1): v, c: 2 x 40,000 = 80,000 logical, 2 x 53,248 = 106,496 physical
    # S(5): h: 4,096 both
    assert spaces == {0: ("S(0) HBM (default)", 6, 671_091_444, 671_096_796),
                      1: ("S(1) VMEM (fast)", 2, 80_000, 106_496),
                      5: ("S(5) host", 1, 4_096, 4_096)}
    assert mi.physical_bytes == 671_096_796 + 106_496 + 4_096
    assert mi.logical_bytes == 671_091_444 + 80_000 + 4_096


def test_hand_checked_signature_and_cost():
    mi = I.module_info(hlo_interp.parse(TPU_LIKE))
    assert [(p.number, p.name, p.logical_bytes, p.physical_bytes, p.memory_spaces) for p in mi.parameters] == [
        (0, "a", 335_544_320, 335_544_320, [0]), (1, "b", 1_800, 6_144, [0]), (2, "s", 4, 512, [0]),
        (3, "q", 500, 500, [0]), (4, "v", 40_000, 53_248, [1]), (5, "h", 4_096, 4_096, [5])]
    assert mi.parameters[0].shape == "bf16[8,1,1280,16384]{3,2,0,1:T(8,128)(2,1)}"
    # the result tuple's arrays: 335,544,320 + 6,144 + 512 + 53,248 + 1,000 + 4,096 physical
    assert mi.result.physical_bytes == 335_609_320
    assert mi.result.memory_spaces == [0, 1, 5]
    # cost: exp is a transcendental per element; copies no flops.  Bytes accessed (XLA's shape sizes,
    # no tiles): exp 2 x 335,544,320; copy v 2 x 40,000; copy q->u 500 + 1,000; tuple its 6 pointers;
    # parameters and bitcast nothing: 671,170,188.  (XLA:CPU says 671,170,176 = the same in float32.)
    assert (mi.cost.flops, mi.cost.transcendentals, mi.cost.bytes_accessed) == (0, 167_772_160, 671_170_188)
    assert abs(mi.cost.bytes_accessed - 671_170_176) / 671_170_176 < 1e-7


def test_packed_sub_byte_parameters_in_a_real_dump():
    # XLA:CPU packs s4 with E(4): s4[8] is 4 bytes
    mi = I.module_info(hlo_interp.parse((CORPUS / "arith_s4.after.hlo").read_text()))
    assert [(p.shape, p.logical_bytes, p.physical_bytes) for p in mi.parameters] == [
        ("s4[8]{0:E(4)}", 4, 4), ("s4[8]{0:E(4)}", 4, 4)]


def test_handwritten_tpu_dump():
    m = hlo_interp.parse((HAND / "layout_tiled_tpu.hlo").read_text())
    mi = I.module_info(m)
    spaces = {s.memory_space: s for s in mi.memory_spaces}
    # S(1): copy.32 bf16[32,32,8192] (16 MiB) and fusion.3 bf16[32,32,4096] (8 MiB); tiles divide them
    assert spaces[1].buffers == 2 and spaces[1].physical_bytes == 2 * 32 * 32 * 8192 + 2 * 32 * 32 * 4096
    # S(5): the host parameter f32[1024]; S(2): copy-start's u32[] context (its source is the operand)
    assert (spaces[5].buffers, spaces[5].physical_bytes) == (1, 4096)
    assert (spaces[2].buffers, spaces[2].physical_bytes) == (1, 4)
    assert {c.name: c.kind for c in mi.computations} == {
        "fused_exp_add": "fusion", "add.clone": "reduce-apply", "all-reduce-scatter.3": "fusion",
        "fused_scale": "fusion", "main.42_spmd": "entry"}


CHAIN = """HloModule chain, is_scheduled=true

ENTRY e {
  p = f32[1024]{0} parameter(0)
  a = f32[1024]{0} negate(p)
  b = f32[1024]{0} exponential(a)
  c = f32[1024]{0} negate(b)
  ROOT d = f32[1024]{0} add(c, p)
}
"""


def test_peak_live_of_a_chain():
    # 4 KiB each.  p (the input) lives throughout and d (the result) to the end; a lives from its
    # definition to its last use (b), b to c, c to d.  Live at a: p+a; at b: p+a+b; at c: p+b+c; at
    # d: p+c+d -> peak 3 x 4096 = 12,288 B, where adding all five buffers up gives 20,480 B
    mi = I.module_info(hlo_interp.parse(CHAIN))
    assert mi.physical_bytes == 5 * 4096
    assert mi.peak_bytes == 3 * 4096
    assert [(s.memory_space, s.physical_bytes, s.peak_bytes) for s in mi.memory_spaces] == [(0, 20480, 12288)]


WHILE = """HloModule loop, is_scheduled=true

body {
  s = (s32[], f32[256]{0}) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  x = f32[256]{0} get-tuple-element(s), index=1
  one = s32[] constant(1)
  j = s32[] add(i, one)
  y = f32[256]{0} exponential(x)
  ROOT t = (s32[], f32[256]{0}) tuple(j, y)
}

cond {
  s = (s32[], f32[256]{0}) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant(10)
  ROOT lt = pred[] compare(i, n), direction=LT
}

ENTRY e {
  x = f32[256]{0} parameter(0)
  z = s32[] constant(0)
  init = (s32[], f32[256]{0}) tuple(z, x)
  w = (s32[], f32[256]{0}) while(init), condition=cond, body=body
  ROOT r = f32[256]{0} get-tuple-element(w), index=1
}
"""


def test_peak_live_with_a_loop():
    # buffers: entry x 1024 + z 4 (tuple, while and get-tuple-element are views); body one 4, j 4,
    # y 1024 (s, i, x, t views); cond n 4, lt 1 (pred): 2,065 B added up.
    # The body's peak: j + y = 1,028 (one dies at j; its result j, y lives to its end); the
    # condition's: n + lt = 5; the loop adds the larger, 1,028, to what is live at the while: x + z
    # = 1,028 (the loop state is init's buffers) -> 2,056 B
    mi = I.module_info(hlo_interp.parse(WHILE))
    assert mi.physical_bytes == 2065
    assert mi.peak_bytes == 2056
    assert {b.name: b.computation for b in mi.buffers} == {
        "x": "e", "z": "e", "one": "body", "j": "body", "y": "body", "n": "cond", "lt": "cond"}


def test_operand_named_before_its_definition():
    # r names b, defined on the next line: its cost reads b's shape (add: 2 flops, 8 + 8 + 8 bytes;
    # b: negate, 2 flops, 16 bytes), while liveness counts a use only once the value exists (the
    # use by r comes before b): a (the input), r (the result) and b, 8 B each, are all live at b
    text = """HloModule fwd

ENTRY e {
  a = f32[2]{0} parameter(0)
  ROOT r = f32[2]{0} add(a, b)
  b = f32[2]{0} negate(a)
}
"""
    mi = I.module_info(hlo_interp.parse(text))
    assert (mi.cost.flops, mi.cost.bytes_accessed) == (4, 40)
    assert [(c.name, c.flops, c.bytes_accessed) for c in mi.instruction_costs] == [("r", 2, 24), ("b", 2, 16)]
    assert (len(mi.buffers), mi.physical_bytes, mi.peak_bytes) == (3, 24, 24)


# --------------------------------------------------------------------------------------------------
# a real dump, derived independently

def _regex_opcode_counts(text: str) -> dict:
    counts: dict = {}
    for line in text.splitlines():
        m = re.match(r"\s*(?:ROOT\s+)?%?[\w.-]+ = .*?\s([a-z][a-z0-9-]*)\(", line)
        if m:
            counts[m.group(1)] = counts.get(m.group(1), 0) + 1
    return counts


def test_mlp_forward_counts_flops_bytes():
    text = (CORPUS / "mlp_forward.after.hlo").read_text()
    mi = I.module_info(hlo_interp.parse(text))
    assert mi.opcode_counts == _regex_opcode_counts(text)
    assert mi.opcode_counts == {"parameter": 13, "broadcast": 4, "fusion": 4, "add": 2, "constant": 2,
                                "dot": 2, "maximum": 2}
    assert mi.instruction_count == 29
    # dots: [5,8]x[8,16]: 2*5*16*8 = 1280; [5,16]x[16,4]: 2*5*4*16 = 640; bias-add + relu fusions:
    # (add + max) on 5x16 = 160 and on 5x4 = 40: 2120
    assert mi.cost.flops == 1280 + 640 + 160 + 40
    assert mi.cost.transcendentals == 0
    # bytes: each fusion writes its result and reads each parameter once (f32 = 4 B):
    #   ynn_fusion.1: 5x16 out 320 + x 5x8 160 + w 8x16 512 = 992
    #   broadcast_maximum_fusion.1: 320 + 320 + bias 16x4 = 64 (read by a broadcast) = 704
    #   ynn_fusion: 5x4 out 80 + 320 + w 16x4 256 = 656;  broadcast_maximum_fusion: 80 + 80 + 16 = 176
    assert mi.cost.bytes_accessed == 992 + 704 + 656 + 176
    # per instruction, costliest first
    assert [(c.name, c.flops) for c in mi.instruction_costs] == [
        ("ynn_fusion.1", 1280), ("ynn_fusion", 640), ("broadcast_maximum_fusion.1", 160),
        ("broadcast_maximum_fusion", 40)]
    assert [p.shape for p in mi.parameters] == ["f32[8,16]{1,0}", "f32[16]{0}", "f32[16,4]{1,0}",
                                                "f32[4]{0}", "f32[5,8]{1,0}"]
    assert mi.result.shape == "f32[5,4]{1,0}" and mi.result.logical_bytes == 80


def test_convolution_flops_by_hand():
    # conv1d: lhs f32[2,16,3] (b0f), rhs f32[3,3,4] (0io), window size 3 pad 1_1 -> f32[2,16,4].
    # Kernel taps that land inside the input: tap 0 for outputs 1..15 (15), tap 1 all 16, tap 2 for
    # 0..14 (15): 46.  2 x in_features 3 x out_features 4 x batch 2 x 46 = 2208
    mi = I.module_info(hlo_interp.parse((CORPUS / "conv1d.after.hlo").read_text()))
    assert mi.cost.flops == 2208
    assert mi.cost.bytes_accessed == (2 * 16 * 3 + 3 * 3 * 4 + 2 * 16 * 4) * 4


def test_convolution_valid_positions_against_the_definition():
    # the closed form (intervals and congruences) against counting tap/output pairs one by one:
    # output o, tap k read input u = o*stride - pad_low + k*rhs_dilate of the base-dilated input,
    # which is a real element when u >= 0, u % lhs_dilate == 0 and u // lhs_dilate < input size
    import random

    from hlo_interp import ir
    rnd = random.Random(7)
    for _ in range(400):
        wd = ir.WindowDim(size=rnd.randint(1, 6), stride=rnd.randint(1, 4), pad_low=rnd.randint(-5, 6),
                          lhs_dilate=rnd.randint(1, 4), rhs_dilate=rnd.randint(1, 3))
        o_lim, i_lim = rnd.randint(1, 10), rnd.randint(1, 10)
        want = sum(1 for k in range(wd.size) for o in range(o_lim)
                   for u in [o * wd.stride - wd.pad_low + k * wd.rhs_dilate]
                   if u >= 0 and u % wd.lhs_dilate == 0 and u // wd.lhs_dilate < i_lim)
        assert C._valid_positions(wd.size, o_lim, i_lim, wd) == want, (wd, o_lim, i_lim)


# --------------------------------------------------------------------------------------------------
# against XLA:CPU's HloCostAnalysis (flops, transcendentals, bytes accessed)

XLA_COSTS = {
    "grad_transformer_block.after": (244816, 800, 186132),
    "transformer_block_bf16.after": (113344, 800, 77568),
    "transformer_block_bf16.before": (85473, 800, 112530),
    "grad_cnn.after": (35518, 20, 73388),
    "conv3d.after": (22528, 0, 4032),
    "conv2d_nhwc_strided_pad.after": (14976, 0, 4088),
    "conv2d_grad_grouped.after": (11616, 0, 13880),
    "conv2d_batch_group_count.after": (4608, 0, 5232),
    "fft_fft2_c64.after": (9216, 0, 2048),
    "fft_rfft2_f32.after": (4608, 0, 576),
    "fft_irfftn3d.after": (4096, 0, 896),
    "select_and_scatter_maxpool_grad.after": (8544, 0, 37196),
    "grad_attention.after": (7032, 72, 9440),
    "train_step_mlp_donated.after": (5604, 0, 9564),
    "mlp_forward.after": (2120, 0, 2528),
    "scan_rnn.after": (38, 4, 437),
    "fori_loop_static.after": (11, 0, 137),
    "nested_while_in_cond.after": (3, 0, 98),
    "cond_tuple_operands.after": (3, 0, 101),
    "while_loop_tuple_carry.after": (24, 0, 165),
    "scatter_at_add.after": (12, 0, 176),
    "scatter_lax_variadic.after": (8, 0, 136),
    "scatter_segment_max.before": (10, 0, 260),
    "gather_take_along_axis.after": (42, 0, 108),
    "sort_key_val.after": (48, 0, 192),
    "argsort_stable.after": (40, 0, 200),
    "top_k_2d_s32.after": (160, 0, 784),
    "reduce_window_variadic.before": (14, 0, 144),
    "reduce_window_maxpool_jvp.before": (576, 0, 1108),
    "reduce_variadic_tuple.before": (24, 0, 168),
    "rng_bit_generator_rng_philox.before": (6, 18, 240),
    "random_unsafe_rbg_uniform_split.before": (120, 100, 2560),
    "arith_s4.after": (32, 0, 12),
    "arith_s4_to_s8_dot.after": (176, 0, 152),
    "linalg_cholesky.after": (80, 0, 259),
    "linalg_qr.after": (19, 0, 470),
    "smap_all_to_all.after": (0, 0, 768),
    "smap_psum.after": (32, 0, 256),
    "smap_psum_scatter.after": (0, 0, 144),
    "optimization_barrier.before": (6, 0, 176),
    "unary_tan_f32.after": (0, 8, 64),
    "unary_erf_f32.after": (0, 8, 64),
    "associative_scan.after": (96, 0, 624),
    "partition.before": (14, 0, 352),
    "jit_sharding_constraint.before": (-1, 256, 2047),
    # handwritten modules (tests/corpus/handwritten/): rarer forms
    "handwritten/async_syntax_sugar": (10, 0, 459),  # `add-start` sugar costs the wrapped op
    "handwritten/async_collective_start_done": (16, 0, 1448),
    "handwritten/fusion_kinds_and_aliasing": (1158, 0, 5608),  # a tuple fusion parameter
    "handwritten/ragged_and_scaled_dot": (82944, 0, 23160),
    "handwritten/scan_op": (4, 0, 152),  # the body once
    "handwritten/shapes_dynamic": (128, 0, 2648),  # dynamic arrays carry 4 B of size per dimension
    "handwritten/elementwise_unary": (64, 80, 1452),  # cosh, asin, ... are transcendentals
    "handwritten/infeed_outfeed": (0, 0, 74),
    "handwritten/dynamic_shape_ops": (0, 0, 2704),
    "handwritten/reduce_window_select_scatter": (28973, 0, 96092),
}


def _corpus_file(name: str) -> Path:
    return HAND / f"{name.split('/', 1)[1]}.hlo" if name.startswith("handwritten/") else CORPUS / f"{name}.hlo"


@pytest.mark.parametrize("name", sorted(XLA_COSTS))
def test_cost_matches_xla(name):
    mi = I.module_info(hlo_interp.parse(_corpus_file(name).read_text(), name))
    unknown = len(mi.unknown_cost)
    flops, trans, nbytes = XLA_COSTS[name]
    assert mi.cost.flops - unknown == pytest.approx(flops, rel=1e-6, abs=0)
    assert mi.cost.transcendentals == pytest.approx(trans, rel=1e-6, abs=0)
    assert mi.cost.bytes_accessed - unknown == pytest.approx(nbytes, rel=1e-6, abs=0)


@pytest.mark.parametrize("src,dst,nbytes", [
    # XLA:CPU's cost analysis of these transposes (dimensions={1,0}): a transpose that keeps the
    # memory order is a bitcast (0 bytes); size-1 dimensions still count (XLA checks them too)
    ("f32[1,4]{1,0}", "f32[4,1]{1,0}", 32),
    ("f32[3,4]{1,0}", "f32[4,3]{0,1}", 0),
    ("f32[3,4]{1,0:T(2,2)}", "f32[4,3]{0,1:T(2,2)}", 0),
    ("f32[3,4]{1,0}", "f32[4,3]{1,0}", 96),
])
def test_transpose_bitcasts_cost_nothing(src, dst, nbytes):
    text = f"HloModule m\nENTRY e {{\n  a = {src} parameter(0)\n  ROOT t = {dst} transpose(a), dimensions={{1,0}}\n}}\n"
    assert I.cost_of(hlo_interp.parse(text)).bytes_accessed == nbytes


def test_async_buffers_are_counted_once():
    # all-gather-start's tuple is (operand, result): the operand is `input`'s own buffer; the done's
    # result is the start's; copy-start is (destination, source, context)
    text = """HloModule m
ENTRY e {
  input = f32[8]{0} parameter(0)
  ags = (f32[8]{0}, f32[32]{0}) all-gather-start(input), replica_groups={{0,1,2,3}}, dimensions={0}
  agd = f32[32]{0} all-gather-done(ags)
  cs = (f32[32]{0:S(1)}, f32[32]{0}, u32[]) copy-start(agd)
  ROOT cd = f32[32]{0:S(1)} copy-done(cs)
}
"""
    mi = I.module_info(hlo_interp.parse(text))
    assert {b.name: b.physical_bytes for b in mi.buffers} == {"input": 32, "ags": 128, "cs": 128 + 4}
    assert {s.memory_space: s.physical_bytes for s in mi.memory_spaces} == {0: 32 + 128 + 4, 1: 128}


def test_unused_computation_kind():
    text = ("HloModule m\nspare {\n  ROOT x = f32[] parameter(0)\n}\n"
            "ENTRY e {\n  ROOT p = f32[] parameter(0)\n}\n")
    assert [c.kind for c in I.module_info(hlo_interp.parse(text)).computations] == ["unused", "entry"]


NESTED_FUSIONS = {
    # fusions inside a fused computation: what the outer parameter costs follows the nested fusion's
    # users (slices of it read only the slice) or the nested parameter's own users.  Expected
    # (flops, bytes accessed): XLA:CPU's HloCostAnalysis of these texts.
    "by_slices": ("""HloModule nested

inner {
  a = f32[16]{0} parameter(0)
  b = f32[16]{0} parameter(1)
  ROOT m = f32[16]{0} multiply(a, b)
}

inner2 {
  x = f32[16]{0} parameter(0)
  ROOT n = f32[16]{0} negate(x)
}

outer {
  p0 = f32[16]{0} parameter(0)
  p1 = f32[16]{0} parameter(1)
  f = f32[16]{0} fusion(p0, p1), kind=kLoop, calls=inner
  g = f32[16]{0} fusion(p1), kind=kLoop, calls=inner2
  sla = f32[4]{0} slice(g), slice={[0:4]}
  slb = f32[4]{0} slice(f), slice={[2:6]}
  ROOT t = f32[4]{0} add(sla, slb)
}

ENTRY e {
  a = f32[16]{0} parameter(0)
  b = f32[16]{0} parameter(1)
  ROOT r = f32[4]{0} fusion(a, b), kind=kLoop, calls=outer
}
""", 36, 112),
    "not_simple": ("""HloModule nested2

inner {
  a = f32[16]{0} parameter(0)
  b = f32[16]{0} parameter(1)
  na = f32[16]{0} negate(a)
  ROOT m = f32[16]{0} multiply(na, b)
}

outer {
  p0 = f32[16]{0} parameter(0)
  p1 = f32[16]{0} parameter(1)
  i = s32[] parameter(2)
  f = f32[16]{0} fusion(p0, p1), kind=kLoop, calls=inner
  ds = f32[4]{0} dynamic-slice(f, i), dynamic_slice_sizes={4}
  sl = f32[8]{0} slice(f), slice={[0:8]}
  bc = f32[8]{0} negate(sl)
  ROOT t = f32[8]{0} dynamic-update-slice(bc, ds, i)
}

ENTRY e {
  a = f32[16]{0} parameter(0)
  b = f32[16]{0} parameter(1)
  i = s32[] parameter(2)
  ROOT r = f32[8]{0} fusion(a, b, i), kind=kLoop, calls=outer
}
""", 40, 148),
}


@pytest.mark.parametrize("name", sorted(NESTED_FUSIONS))
def test_nested_fusion_parameters(name):
    text, flops, nbytes = NESTED_FUSIONS[name]
    c = I.cost_of(hlo_interp.parse(text))
    assert (c.flops, c.bytes_accessed) == (flops, nbytes)


def test_custom_calls_listed_as_unknown():
    mi = I.module_info(hlo_interp.parse((CORPUS / "linalg_cholesky.after.hlo").read_text()))
    assert mi.unknown_cost and all(
        ins.opcode == "custom-call" for c in hlo_interp.parse((CORPUS / "linalg_cholesky.after.hlo").read_text())
        .computations for ins in c.instructions if ins.name in mi.unknown_cost)


def test_computation_kinds_and_callers():
    mi = I.module_info(hlo_interp.parse((CORPUS / "nested_while_in_cond.after.hlo").read_text()))
    kinds = {c.name: c.kind for c in mi.computations}
    assert kinds == {"region_0.1": "conditional-branch", "wrapped_add_computation": "fusion",
                     "region_2.2": "while-body", "wrapped_compare_computation": "fusion",
                     "region_3.3": "while-condition", "while.4_computation": "call",
                     "region_1.4": "conditional-branch", "wrapped_convert_computation": "fusion",
                     "main.5": "entry"}
    callers = {c.name: c.callers for c in mi.computations}
    assert callers["region_2.2"] == ["while.0 (while.4_computation)"]
    # buffers of loop bodies and branches count, those inside fusions do not
    comps = {b.computation for b in mi.buffers}
    assert {"main.5", "region_2.2", "region_1.4"} <= comps
    assert not comps & {"wrapped_add_computation", "wrapped_compare_computation"}


def test_scoped_to_one_computation():
    m = hlo_interp.parse((CORPUS / "mlp_forward.after.hlo").read_text())
    mi = I.module_info(m, "fused_computation.3")
    assert mi.computation == "fused_computation.3"
    assert mi.opcode_counts == {"broadcast": 2, "add": 1, "constant": 1, "maximum": 1, "parameter": 2}
    assert [p.name for p in mi.parameters] == ["param_0.6", "param_1.9"]
    assert mi.cost.flops == 160  # add and max on 5x16
    with pytest.raises(HloError, match="no computation named 'nope'"):
        I.module_info(m, "nope")


# --------------------------------------------------------------------------------------------------
# JSON

def test_json_schema():
    mi = I.module_info(hlo_interp.parse(TPU_LIKE))
    d = json.loads(mi.to_json(top=3))
    assert d["schema"] == "hlo-info/1"
    assert set(d) == {"schema", "module", "file", "computation", "computations", "instruction_count",
                      "opcode_counts", "parameters", "result", "cost", "memory"}
    assert d["module"] == "tpu_like" and d["computation"] == "main"
    assert d["computations"] == [{"name": "main", "kind": "entry", "instructions": 11, "callers": []}]
    assert set(d["parameters"][0]) == {"number", "name", "shape", "logical_bytes", "physical_bytes",
                                       "memory_spaces"}
    assert d["cost"]["transcendentals"] == 167_772_160 and isinstance(d["cost"]["flops"], int)
    assert set(d["cost"]) == {"flops", "transcendentals", "bytes_accessed", "unknown", "top"}
    assert [t["name"] for t in d["cost"]["top"]] == ["e", "c", "u"]
    mem = d["memory"]
    assert set(mem) == {"logical_bytes", "physical_bytes", "peak_bytes", "buffer_count", "memory_spaces",
                        "buffers"}
    assert mem["buffer_count"] == 9 and len(mem["buffers"]) == 3
    assert mem["buffers"][0] == {"name": "a", "computation": "main", "opcode": "parameter",
                                 "shape": "bf16[8,1,1280,16384]{3,2,0,1:T(8,128)(2,1)}",
                                 "logical_bytes": 335_544_320, "physical_bytes": 335_544_320, "memory_space": 0}
    # the copy c of v: both live at once (v is an input, c part of the result)
    assert mem["memory_spaces"][1] == {"memory_space": 1, "name": "S(1) VMEM (fast)", "buffers": 2,
                                       "logical_bytes": 80_000, "physical_bytes": 106_496,
                                       "peak_bytes": 106_496}
    assert len(json.loads(mi.to_json())["memory"]["buffers"]) == 9  # no top: all


def test_human_bytes():
    assert I.human_bytes(512) == "512 B"
    assert I.human_bytes(6144) == "6.0 KiB"
    assert I.human_bytes(335_544_320) == "320.0 MiB"
    assert I.human_bytes(3 * 2**30) == "3.0 GiB"


# --------------------------------------------------------------------------------------------------
# the command

def _run(args, input=None, env=None):
    return CliRunner().invoke(cli, ["info", *args], input=input, env=env or {})


def test_cli_text(tmp_path):
    f = tmp_path / "m.hlo"
    f.write_text(TPU_LIKE)
    r = _run([str(f), "--top", "2"])
    assert r.exit_code == 0, r.output
    out = r.output
    assert "\x1b[" not in out  # not a terminal: plain text
    assert out.startswith(f"module tpu_like  ({f})\n")
    assert "  S(1) VMEM (fast)    2        80,000 (78.1 KiB)        106,496 (104.0 KiB)" in out
    assert "  0  a     bf16[8,1,1280,16384]{3,2,0,1:T(8,128)(2,1)}  320.0 MiB  320.0 MiB  S(0)" in out
    assert "largest buffers (top 2 of 9)" in out
    assert "costliest instructions (top 2 of 4)" in out


def test_cli_text_top_zero_lists_everything():
    r = _run(["--top", "0", str(CORPUS / "nested_while_in_cond.after.hlo")])
    assert r.exit_code == 0, r.output
    assert ("computations (9: 2 conditional-branch, 3 fusion, 1 while-body, 1 while-condition, 1 call, "
            "1 entry)\n") in r.output
    r3 = _run(["--top", "3", str(CORPUS / "nested_while_in_cond.after.hlo")])
    assert ("1 entry), 3 shown\n  name        kind                instructions  called by\n"
            "  main.5      entry") in r3.output
    section = r.output.split("\n\n")[1].splitlines()
    assert len(section) == 2 + 9 and section[2].split() == ["main.5", "entry", "7"]


def test_cli_json_from_stdin():
    r = _run(["--json", "-"], input=(CORPUS / "mlp_forward.after.hlo").read_text())
    assert r.exit_code == 0, r.output
    d = json.loads(r.output)
    assert d["file"] == "<stdin>" and d["cost"]["flops"] == 2120 and d["cost"]["bytes_accessed"] == 2528
    assert len(d["memory"]["buffers"]) == 9  # 5 parameters + 4 fusions; --top 10 by default


def test_cli_computation_option():
    r = _run(["--json", "-c", "fused_computation", str(CORPUS / "mlp_forward.after.hlo")])
    assert r.exit_code == 0, r.output
    d = json.loads(r.output)
    assert d["computation"] == "fused_computation" and d["cost"]["flops"] == 640


def test_cli_colors():
    path = str(CORPUS / "mlp_forward.after.hlo")
    r = _run(["--color", "always", path])
    assert r.exit_code == 0 and "\x1b[" in r.output and "fused_computation.3" in r.output
    # rich tables: the same rows as the plain text
    assert re.search(r"ynn_fusion\.1\s+fusion\s+1,280", re.sub(r"\x1b\[[0-9;]*m", "", r.output))
    for args, env in ((["--color", "never", path], {}), ([path], {"NO_COLOR": "1"})):
        r = _run(args, env=env)
        assert r.exit_code == 0 and "\x1b[" not in r.output and "fused_computation.3" in r.output


@pytest.mark.parametrize("args,input,message", [
    (["/no/such/file.hlo"], None, "/no/such/file.hlo: error: no such file"),
    (["-"], "HloModule m\nENTRY e {\n  ROOT x = f32[] parameter(0\n}\n", "<stdin>:4:1: error:"),
    (["-c", "nope", "-"], "HloModule m\nENTRY e {\n  ROOT x = f32[] parameter(0)\n}\n",
     "no computation named 'nope'"),
])
def test_cli_input_errors_exit_2(args, input, message):
    r = CliRunner().invoke(cli, ["info", *args], input=input)
    assert r.exit_code == 2
    assert message in r.output
    assert "Traceback" not in r.output


def test_cli_syntax_error_has_caret():
    r = _run(["-"], input="HloModule m\nENTRY e {\n  ROOT x = f32[] parameter(0\n}\n")
    assert r.exit_code == 2
    lines = r.output.splitlines()
    i = next(k for k, line in enumerate(lines) if line.startswith("<stdin>:4:1:"))
    assert "error:" in lines[i] and lines[i + 2].strip() == "^"


def test_cli_usage_error_exit_2():
    r = _run(["--top", "-1", "-"], input="")
    assert r.exit_code == 2 and "--top" in r.output


def test_cost_error_is_located():
    # a dot whose contracting dimension does not exist: located, not a traceback
    text = ("HloModule m\nENTRY e {\n  a = f32[2,3]{1,0} parameter(0)\n  b = f32[3,4]{1,0} parameter(1)\n"
            "  ROOT d = f32[2,4]{1,0} dot(a, b), lhs_contracting_dims={5}, rhs_contracting_dims={0}\n}\n")
    with pytest.raises(HloError, match="cannot estimate the cost of d") as e:
        I.module_info(hlo_interp.parse(text, "m.hlo"))
    assert e.value.line == 5


def test_cli_internal_error_is_a_message(monkeypatch):
    def boom(*a, **k):
        raise RuntimeError("planted")
    monkeypatch.setattr(I, "module_info", boom)
    r = _run(["-"], input="HloModule m\nENTRY e {\n  ROOT p = f32[] parameter(0)\n}\n")
    assert r.exit_code == 2
    assert "<stdin>: error: internal error in hlo info: RuntimeError: planted" in r.output
    assert "Traceback" not in r.output


@pytest.mark.parametrize("count", [300, 5000])
def test_ranked_rows_are_the_full_sort(count):
    """instruction_costs and buffers are ordered on demand (the report shows the top few): any prefix
    is that of the full order (costliest / largest first, then by name, then in text order), also
    with equal costs across instruction signatures and equal names in several computations, and
    when the first rows are found from a sample of the names (thousands of instructions)."""
    import random
    rng = random.Random(7)
    lines = ["  p = f32[64]{0} parameter(0)", "  q = f32[8]{0} parameter(1)"]
    names = [f"v{k}" for k in range(count)]
    rng.shuffle(names)
    for k, name in enumerate(names):
        src, shape = ("p", "f32[64]{0}") if k % 3 else ("q", "f32[8]{0}")
        op = ("negate", "exponential", "abs", "copy")[k % 4]
        lines.append(f"  {name} = {shape} {op}({src})")
    lines.append("  w = (s32[], f32[256]{0}) while(init), condition=cond, body=body")
    text = WHILE.replace("  w = (s32[], f32[256]{0}) while(init), condition=cond, body=body", "\n".join(lines))
    module = hlo_interp.parse(text)
    mi = I.module_info(module)
    comp = module.entry
    analysis = C.CostAnalysis(I.ModuleIndex(module))
    rows = []
    for ins in comp.instructions:
        c = analysis.instruction(comp, ins)
        if c.flops or c.transcendentals or c.bytes_accessed:
            rows.append((-(c.flops + c.transcendentals), -c.bytes_accessed, ins.name, ins.opcode))
    expected = [(name, op) for *_k, name, op in sorted(rows, key=lambda r: r[:3])]
    assert len(mi.instruction_costs) == len(expected) > count
    for k in (0, 1, 5, 10, 150, len(expected)):
        assert [(c.name, c.opcode) for c in mi.instruction_costs[:k]] == expected[:k]
    assert [(c.name, c.opcode) for c in mi.instruction_costs] == expected
    assert (mi.instruction_costs[-1].name, mi.instruction_costs[-1].opcode) == expected[-1]
    buffers = list(mi.buffers)
    assert buffers == sorted(buffers, key=lambda b: (-b.physical_bytes, -b.logical_bytes, b.name))
    assert {b.computation for b in buffers} == {"e", "body", "cond"} and len(buffers) == len(mi.buffers)
    for k in (0, 3, 40, len(buffers)):
        assert I.module_info(module).buffers[:k] == buffers[:k]
        assert [(c.name, c.opcode) for c in I.module_info(module).instruction_costs[:k]] == expected[:k]
