"""bitcast over physical (tiled, padded, packed) layouts and the byte sizes of layouts (layout.py),
send/recv within a module, infeed/outfeed (and hlo-run's --infeed / --outfeed).

Expected values: the tiled-layout cases follow XLA's tiling rules (shapes-and-layout / tiled layout docs:
the minor-most dims are split into tiles, padded to a tile multiple, tile counts before tile contents,
later tiles apply within the previous one, `*` combines a dim with the next minor one), derived by hand
below; XLA:CPU rejects these modules (tests/data/io_layout/xla_verdicts.json, made by
tools/make_io_layout_vectors.py).  The JAX programs (before and after optimization, with layout-changing
bitcasts and copies) are compared with XLA:CPU's outputs stored in tests/data/io_layout/*.npz.
The packed (E(n)), sub-byte and tail-padded (L(n)) cases and the byte sizes are derived by hand next
to each case (XLA's ShapeUtil::ByteSizeOf / ArraySize rules); the packing order was checked on XLA:CPU.
"""
from __future__ import annotations

import json
import re
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest
from click.testing import CliRunner

import hlo_interp
from casedata import cases
from hlo_interp import ir, layout
from hlo_interp.diagnostics import HloError
from hlo_interp.ops import io as hio

DATA = Path(__file__).parent / "data" / "io_layout"


def _mod(src: str, dst: str) -> str:
    return f"HloModule m\nENTRY e {{\n  p = {src} parameter(0)\n  ROOT b = {dst} bitcast(p)\n}}\n"


_X35 = np.arange(15, dtype=np.float32).reshape(3, 5)
# f32[3,5] in 2x4 tiles: 2x2 tiles, row-major; each tile row-major, padding (zeros here) at the edges
_P35 = np.array([0, 1, 2, 3, 5, 6, 7, 8, 4, 0, 0, 0, 9, 0, 0, 0,
                 10, 11, 12, 13, 0, 0, 0, 0, 14, 0, 0, 0, 0, 0, 0, 0], np.float32)
_X44 = np.arange(16, dtype=np.float32).astype(ml_dtypes.bfloat16).reshape(4, 4)
_X34 = np.arange(12, dtype=np.float32).reshape(3, 4)
_X233 = np.arange(18, dtype=np.int32).reshape(2, 3, 3)

TILED_CASES = {
    # name: (module, input, expected)
    "tile_2x4_to_rowmajor": (_mod("f32[3,5]{1,0:T(2,4)}", "f32[2,2,2,4]{3,2,1,0}"), _X35,
                             _P35.reshape(2, 2, 2, 4)),
    "rowmajor_to_tile_2x4": (_mod("f32[2,2,2,4]{3,2,1,0}", "f32[3,5]{1,0:T(2,4)}"), _P35.reshape(2, 2, 2, 4),
                             _X35),
    # (2,2) tiles, then (2,1) within each tile: each 2x2 tile is stored column by column
    "two_level_bf16": (_mod("bf16[4,4]{1,0:T(2,2)(2,1)}", "bf16[16]{0}"), _X44,
                       np.array([0, 4, 1, 5, 2, 6, 3, 7, 8, 12, 9, 13, 10, 14, 11, 15],
                                np.float32).astype(ml_dtypes.bfloat16)),
    # column-major, the minor dim (3 rows) padded to a tile of 2
    "colmajor_tile_2": (_mod("f32[3,4]{0,1:T(2)}", "f32[16]{0}"), _X34,
                        np.array([0, 4, 8, 0, 1, 5, 9, 0, 2, 6, 10, 0, 3, 7, 11, 0], np.float32)),
    # `*`: rows and columns combined (6 elements) before a tile of 4
    "combine_dim": (_mod("f32[2,3]{1,0:T(*,4)}", "f32[8]{0}"), np.arange(6, dtype=np.float32).reshape(2, 3),
                    np.array([0, 1, 2, 3, 4, 5, 0, 0], np.float32)),
    # a tile of lower rank than the shape tiles the minor-most dims only
    "tile_minor_only": (_mod("s32[2,3,3]{2,1,0:T(2)}", "s32[2,3,4]{2,1,0}"), _X233,
                        np.pad(_X233, [(0, 0), (0, 0), (0, 1)])),
    # element type changes too: the tiled buffer's bytes
    "tile_f32_to_u8": (_mod("f32[3,5]{1,0:T(2,4)}", "u8[2,2,2,16]{3,2,1,0}"), _X35,
                       _P35.view(np.uint8).reshape(2, 2, 2, 16)),
}


@pytest.mark.parametrize("name", sorted(TILED_CASES))
def test_tiled_bitcast(name):
    text, x, expected = TILED_CASES[name]
    (got,) = hlo_interp.run(text, x)
    assert got.dtype == expected.dtype
    assert got.shape == expected.shape
    np.testing.assert_array_equal(np.ascontiguousarray(got).view(np.uint8), np.ascontiguousarray(expected).view(np.uint8))


def test_xla_rejects_tiled_modules_recorded():
    verdicts = json.loads((DATA / "xla_verdicts.json").read_text())
    assert set(verdicts) == set(TILED_CASES)
    for v in verdicts.values():
        assert v["accepted"] is False and v["error"]


def _shape(text: str) -> ir.ArrayShape:
    return hlo_interp.parse(_mod(text, text)).entry.root.shape


@pytest.mark.parametrize("text,dims", [
    ("f32[3,5]{1,0:T(2,4)}", (2, 2, 2, 4)),
    ("f32[3,5]{0,1:T(2,4)}", (3, 1, 2, 4)),
    ("bf16[5,9]{1,0:T(4,8)(2,1)}", (2, 2, 2, 8, 2, 1)),
    ("s8[2,3,5]{0,2,1:T(2,2)}", (3, 3, 1, 2, 2)),
    ("f32[7]{0:T(4)}", (2, 4)),
    ("f32[2,3]{1,0:T(*,4)}", (2, 4)),
])
def test_layout_roundtrip(text, dims):
    shape = _shape(text)
    assert layout.tiled_dims(shape) == dims
    rng = np.random.default_rng(0)
    x = rng.integers(1, 100, shape.dims).astype(shape.element_type.dtype)
    flat = layout.to_physical(x, shape)
    assert flat.shape == (layout.physical_size(shape),)
    assert np.count_nonzero(flat.astype(np.float32)) == x.size  # every element once, padding zero
    np.testing.assert_array_equal(layout.from_physical(flat, shape), x)


def test_plain_layouts_match_transposes():
    shape = _shape("f32[2,3,4]{0,2,1}")
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    np.testing.assert_array_equal(layout.to_physical(x, shape), x.transpose(1, 2, 0).reshape(-1))


def test_tiled_bitcast_size_mismatch_is_located():
    with pytest.raises(HloError, match=r"physical size in bytes.*128 -> 60") as e:
        hlo_interp.run(_mod("f32[3,5]{1,0:T(2,4)}", "f32[15]{0}"), _X35)
    assert ":4:" in str(e.value)


# --------------------------------------------------------------------------------------------------
# packed (E(n)) and sub-byte layouts, tail padding L(n): bitcast through the physical bytes.
# Packing order: the first element in the low-order bits of its byte.  XLA:CPU confirms it:
# `u8[4] bitcast-convert(s4[4,2]{1,0:E(4)})` of [[1,2],[3,4],[5,6],[7,-8]] gives [33, 67, 101, 135]
# (0x21, 0x43, 0x65, 0x87), run with jax 0.10.2's XLA:CPU (tools/oracle/runner.run_hlo) on 2026-11-23.

_S4 = np.array([1, 2, 3, 4, 5, 6, 7, -8], ml_dtypes.int4)
_V35 = (np.arange(15) - 7).reshape(3, 5)  # -7..7: fits s4
# the physical order of f32[3,5]{1,0:T(2,4)} (see _P35): logical flat indices, -1 = padding
_ORDER35 = [0, 1, 2, 3, 5, 6, 7, 8, 4, -1, -1, -1, 9, -1, -1, -1,
            10, 11, 12, 13, -1, -1, -1, -1, 14, -1, -1, -1, -1, -1, -1, -1]
_NIB35 = [(int(_V35.reshape(-1)[i]) & 0xF) if i >= 0 else 0 for i in _ORDER35]
_X24 = np.array([[1.5, -2.0, 3.0, 0.25], [7.0, -0.5, 96.0, 1.0]], ml_dtypes.bfloat16)
_B24 = _X24.view(np.uint16).astype(np.uint32)

PACKED_CASES = {
    # 2 elements per byte, element 2k in bits 0-3, element 2k+1 in bits 4-7 (-8 = 0b1000)
    "s4_packed_to_u8": (_mod("s4[8]{0:E(4)}", "u8[4]{0}"), _S4, np.array([0x21, 0x43, 0x65, 0x87], np.uint8)),
    "u8_to_s4_packed": (_mod("u8[4]{0}", "s4[8]{0:E(4)}"), np.array([0x21, 0x43, 0x65, 0x87], np.uint8), _S4),
    # without E(n) a sub-byte element takes a whole byte (XLA's ByteSizeOfPrimitiveType(s4) = 1), its
    # bits in the low nibble: -1 -> 0x0f, -8 -> 0x08
    "s4_unpacked_to_u8": (_mod("s4[8]{0}", "u8[8]{0}"), _S4, np.array([1, 2, 3, 4, 5, 6, 7, 8], np.uint8)),
    # E(2): 4 per byte: [1,2,3,0] -> 1 | 2<<2 | 3<<4 | 0<<6 = 57; then [1] -> 1 (ceil(5*2/8) = 2 bytes)
    "u2_packed_to_u8": (_mod("u2[5]{0:E(2)}", "u8[2]{0}"), np.array([1, 2, 3, 0, 1], ml_dtypes.uint2),
                        np.array([57, 1], np.uint8)),
    # f4e2m1fn codes: 0.5 = 0b0001, 1.0 = 0b0010, -6.0 = 0b1111, 0 = 0 -> bytes 0x21, 0x0f
    "f4_packed_to_u8": (_mod("f4e2m1fn[4]{0:E(4)}", "u8[2]{0}"),
                        np.array([0.5, 1.0, -6.0, 0.0], ml_dtypes.float4_e2m1fn), np.array([0x21, 0x0F], np.uint8)),
    # tiled and packed: the 32 physical elements of T(2,4) (as for f32 above), then 2 per byte
    "s4_tiled_packed_to_u8": (_mod("s4[3,5]{1,0:T(2,4)E(4)}", "u8[16]{0}"), _V35.astype(ml_dtypes.int4),
                              np.array([_NIB35[2 * k] | (_NIB35[2 * k + 1] << 4) for k in range(16)], np.uint8)),
    "u8_to_s4_tiled_packed": (_mod("u8[16]{0}", "s4[3,5]{1,0:T(2,4)E(4)}"),
                              np.array([_NIB35[2 * k] | (_NIB35[2 * k + 1] << 4) for k in range(16)], np.uint8),
                              _V35.astype(ml_dtypes.int4)),
    # TPU-style bf16 T(2,4)(2,1): within the 2x4 tile, (2,1) sub-tiles put rows 0 and 1 of a column
    # next to each other, so each 32-bit word holds x[0,c] (low half, little-endian) and x[1,c]
    "bf16_row_pairs_to_u32": (_mod("bf16[2,4]{1,0:T(2,4)(2,1)}", "u32[4]{0}"), _X24,
                              _B24[0] | (_B24[1] << 16)),
    # tail padding only: L(8) rounds 5 elements up to 8 (zeros)
    "tail_padding_L8": (_mod("f32[5]{0:L(8)}", "f32[8]{0}"), np.arange(1, 6, dtype=np.float32),
                        np.array([1, 2, 3, 4, 5, 0, 0, 0], np.float32)),
    # column-major, then L(4): [[0,1,2],[3,4,5]] -> 0 3 1 4 2 5 + 2 zeros
    "colmajor_L4": (_mod("f32[2,3]{0,1:L(4)}", "f32[8]{0}"), np.arange(6, dtype=np.float32).reshape(2, 3),
                    np.array([0, 3, 1, 4, 2, 5, 0, 0], np.float32)),
    "unpad_L8": (_mod("f32[8]{0}", "f32[5]{0:L(8)}"), np.arange(8, dtype=np.float32),
                 np.arange(5, dtype=np.float32)),
}


@pytest.mark.parametrize("name", sorted(PACKED_CASES))
def test_packed_and_padded_bitcast(name):
    text, x, expected = PACKED_CASES[name]
    (got,) = hlo_interp.run(text, x)
    assert got.dtype == expected.dtype and got.shape == expected.shape
    np.testing.assert_array_equal(np.ascontiguousarray(got).view(np.uint8),
                                  np.ascontiguousarray(expected).view(np.uint8))


def test_packed_bitcast_size_mismatch_is_located():
    # s4[8] packed = 4 bytes, u8[8] = 8 bytes
    with pytest.raises(HloError, match=r"physical size in bytes.*4 -> 8") as e:
        hlo_interp.run(_mod("s4[8]{0:E(4)}", "u8[8]{0}"), _S4)
    assert ":4:" in str(e.value)


@pytest.mark.parametrize("src,why", [
    ("f32[4]{0:M(8)}", "metadata prefix M"),
    ("f32[4]{0:E(12)}", "element size E(12)"),
])
def test_layouts_bitcast_cannot_read_are_named(src, why):
    with pytest.raises(HloError, match=f"unsupported opcode 'bitcast'.*{re.escape(why)}"):
        hlo_interp.run(_mod(src, "f32[4]{0:L(4)}"), np.zeros(4, np.float32))


def test_same_type_sub_byte_reshape_ignores_packing():
    # the element type does not change: the elements keep their order whatever the packing says
    (got,) = hlo_interp.run(_mod("s4[8]{0:E(4)}", "s4[2,4]{1,0}"), _S4)
    np.testing.assert_array_equal(got.astype(np.int8), _S4.astype(np.int8).reshape(2, 4))


# byte sizes (XLA's ShapeUtil::ByteSizeOf / ArraySize), by hand
@pytest.mark.parametrize("text,elements,phys,logical", [
    # the spec's example: major-to-minor dims (1, 8, 1280, 16384); T(8,128) tiles the minor two:
    # 1280 = 160*8, 16384 = 128*128, no padding; (2,1) sub-tiles divide (8,128): none either.
    # 8*1*1280*16384 = 167,772,160 elements x 2 bytes = 335,544,320 bytes
    ("bf16[8,1,1280,16384]{3,2,0,1:T(8,128)(2,1)}", 167_772_160, 335_544_320, 335_544_320),
    # f32[3,5] in 2x4 tiles: 4 x 8 = 32 elements (15 real) = 128 bytes
    ("f32[3,5]{1,0:T(2,4)}", 32, 128, 60),
    # a scalar with T(128) (TPU): one tile of 128 elements: 512 bytes for 4 real ones
    ("s32[]{:T(128)}", 128, 512, 4),
    # bf16[3,300] in (8,128) tiles: 8 x 384 = 3072 elements = 6144 bytes (1800 real)
    ("bf16[3,300]{1,0:T(8,128)(2,1)}", 3072, 6144, 1800),
    # column-major f32[300,3]: the minor dim (rows, 300) tiled by 128, the major (3) by 8: 8 x 384
    ("f32[300,3]{0,1:T(8,128)}", 3072, 12288, 3600),
    # s4[123,456] T(2,128) E(4): 124 x 512 = 63,488 elements x 4 bits = 31,744 bytes; logical
    # 56,088 x 4 bits = 28,044 bytes
    ("s4[123,456]{1,0:T(2,128)E(4)}", 63_488, 31_744, 28_044),
    # s4 without E(n): a byte each
    ("s4[10]{0}", 10, 10, 5),
    ("u2[5]{0:E(2)}", 5, 2, 2),
    # tail padding L(1024) after the tiles: 2048 elements already a multiple; L(3000) -> 3000
    ("f32[10,10]{1,0:T(8,128)L(1024)}", 2048, 8192, 400),
    ("f32[10,10]{1,0:T(8,128)L(3000)}", 3000, 12000, 400),
    # M(16): 16 bytes of dynamic-shape metadata in front of the data
    ("f32[10]{0:M(16)}", 10, 56, 40),
    # memory space does not change the size
    ("bf16[32,32,4096]{2,1,0:T(8,128)(2,1)S(1)}", 4_194_304, 8_388_608, 8_388_608),
])
def test_byte_sizes(text, elements, phys, logical):
    shape = _shape(text)
    assert layout.physical_size(shape) == elements
    assert layout.physical_bytes(shape) == phys
    assert layout.logical_bytes(shape) == logical


def test_memory_space_names():
    assert layout.memory_space(_shape("f32[4]{0:S(1)}")) == 1
    assert layout.memory_space(_shape("f32[4]{0}")) == 0
    assert layout.memory_space_name(0) == "S(0) HBM (default)"
    assert layout.memory_space_name(1) == "S(1) VMEM (fast)"
    assert layout.memory_space_name(5) == "S(5) host"
    assert layout.memory_space_name(3) == "S(3)"


def test_tuple_and_token_bytes():
    t = hlo_interp.parse("HloModule m\nENTRY e {\n  a = f32[3]{0} parameter(0)\n  b = s4[3]{0:E(4)} parameter(1)\n"
                         "  ROOT t = (f32[3]{0}, s4[3]{0:E(4)}) tuple(a, b)\n}\n").entry.root.shape
    assert layout.physical_bytes(t) == 12 + 2
    assert layout.physical_bytes(t, tuple_table=True) == 12 + 2 + 2 * 8
    assert layout.logical_bytes(t) == 12 + 2


# --------------------------------------------------------------------------------------------------
# real JAX programs: layout-changing bitcasts / copies after optimization

def test_jax_program_cases():
    """XLA:CPU's optimized texts of these programs (tests/golden/layout/, run by tests/test_golden.py byte for
    byte) hold layout-changing bitcasts."""
    progs = {c.short: c for c in cases("layout")}
    assert set(progs) == {"transpose_reshape", "bitcast_convert_t", "minor_reshape_bf16", "s8_transpose_sum"}
    for name in ("transpose_reshape", "minor_reshape_bf16"):
        assert " bitcast(" in progs[name].text("after")


# --------------------------------------------------------------------------------------------------
# send / recv, infeed / outfeed

SEND_RECV = """HloModule m
ENTRY e {
  p = f32[3] parameter(0)
  q = s8[2] parameter(1)
  tok = token[] after-all()
  s = (f32[3], u32[], token[]) send(p, tok), channel_id=5
  sq = (s8[2], u32[], token[]) send(q, tok), channel_id=7
  sd = token[] send-done(s), channel_id=5
  sd2 = token[] send-done(sq), channel_id=7
  tk = token[] after-all(sd, sd2)
  r2 = (s8[2], u32[], token[]) recv(tk), channel_id=7
  r = (f32[3], u32[], token[]) recv(tk), channel_id=5
  rd = (f32[3], token[]) recv-done(r), channel_id=5
  rd2 = (s8[2], token[]) recv-done(r2), channel_id=7
  d = f32[3] get-tuple-element(rd), index=0
  d2 = s8[2] get-tuple-element(rd2), index=0
  n = f32[3] negate(d)
  ROOT t = (f32[3], s8[2], token[]) tuple(n, d2, sd)
}
"""


def test_send_recv_by_channel():
    p = np.array([1.5, -2, 3], np.float32)
    q = np.array([-128, 127], np.int8)
    for _ in range(2):  # channels are emptied by each run
        got = hlo_interp.run(SEND_RECV, p, q)
        np.testing.assert_array_equal(got[0], -p)
        assert got[1].dtype == np.int8
        np.testing.assert_array_equal(got[1], q)


def test_recv_without_send_is_located():
    text = SEND_RECV.replace("channel_id=7\n  sd2", "channel_id=8\n  sd2").replace(
        "send(q, tok), channel_id=7", "send(q, tok), channel_id=8")
    with pytest.raises(HloError, match="nothing was sent on channel 7") as e:
        hlo_interp.run(text, np.zeros(3, np.float32), np.zeros(2, np.int8))
    assert ":14:" in str(e.value)


FEED = """HloModule m
ENTRY e {
  tok = token[] after-all()
  infd = ((s32[2], bf16[]), token[]) infeed(tok)
  id = (s32[2], bf16[]) get-tuple-element(infd), index=0
  i0 = s32[2] get-tuple-element(id), index=0
  t2 = token[] get-tuple-element(infd), index=1
  o = token[] outfeed(id, t2), outfeed_shape=(s32[2], bf16[])
  infd2 = (u8[3], token[]) infeed(o)
  j = u8[3] get-tuple-element(infd2), index=0
  t3 = token[] get-tuple-element(infd2), index=1
  o2 = token[] outfeed(j, t3), outfeed_shape=u8[3]
  a = s32[2] add(i0, i0)
  ROOT r = (s32[2], token[]) tuple(a, o2)
}
"""


def test_infeed_outfeed_in_order():
    hio.set_infeed([np.array([3, -4], np.int32), np.array(2.5, ml_dtypes.bfloat16),
                    np.array([1, 2, 255], np.uint8)])
    hio.take_outfeed()
    (got,) = hlo_interp.run(FEED)
    np.testing.assert_array_equal(got, [6, -8])
    out = hio.take_outfeed()
    assert [o.dtype for o in out] == [np.int32, ml_dtypes.bfloat16, np.uint8]
    np.testing.assert_array_equal(out[0], [3, -4])
    assert float(out[1]) == 2.5
    np.testing.assert_array_equal(out[2], [1, 2, 255])
    assert hio.infeed_remaining() == 0


def test_infeed_errors_are_located():
    hio.set_infeed([np.array([3, -4], np.int32)])
    with pytest.raises(HloError, match="no more infeed data") as e:
        hlo_interp.run(FEED)
    assert ":4:" in str(e.value)
    hio.set_infeed([np.array([3, -4, 5], np.int32), np.float32(1), np.zeros(3, np.uint8)])
    with pytest.raises(HloError, match=r"in0 has shape \[3\]"):
        hlo_interp.run(FEED)
    hio.set_infeed([])


def test_cli_infeed_outfeed(tmp_path):
    from hlo_interp.cli_run import main
    (tmp_path / "m.hlo").write_text(FEED)
    np.savez(tmp_path / "in.npz", in0=np.array([1, 2], np.int32), in1=np.float32(0.5),
             in2=np.array([7, 8, 9], np.uint8))
    r = CliRunner().invoke(main, [str(tmp_path / "m.hlo"), "--infeed", str(tmp_path / "in.npz"),
                                  "--outfeed", str(tmp_path / "out.npz"), "-o", str(tmp_path / "r.npz")])
    assert r.exit_code == 0, r.output
    np.testing.assert_array_equal(np.load(tmp_path / "r.npz")["out0"], [2, 4])
    out = np.load(tmp_path / "out.npz")
    np.testing.assert_array_equal(out["out0"], [1, 2])
    np.testing.assert_array_equal(out["out2"], [7, 8, 9])
    # no infeed file: a located error, exit status 2
    r = CliRunner().invoke(main, [str(tmp_path / "m.hlo")])
    assert r.exit_code == 2
    assert "no more infeed data" in r.output and "m.hlo:4:" in r.output
    # bad keys
    np.savez(tmp_path / "bad.npz", x=np.int32(1))
    r = CliRunner().invoke(main, [str(tmp_path / "m.hlo"), "--infeed", str(tmp_path / "bad.npz")])
    assert r.exit_code == 2 and "in0, in1" in r.output


# --------------------------------------------------------------------------------------------------
# scan: XLA:CPU-computed cases in tests/golden/scan/ (tools/oracle/families/scan.py), run by tests/test_golden.py


def test_scan_cases_present():
    assert {c.short for c in cases("scan")} >= {"ex45", "ex45_reverse", "two_inputs_two_carries_dim1",
                                                 "scalar_outputs_f64", "bf16_no_carry"}


def test_unused_send_runs_before_the_recv_that_the_root_needs():
    # no token links send and recv: effectful instructions run in text order, before the root's chain
    text = """HloModule m
ENTRY e {
  p = f32[2] parameter(0)
  tok = token[] after-all()
  s = (f32[2], u32[], token[]) send(p, tok), channel_id=3
  sd = token[] send-done(s), channel_id=3
  r = (f32[2], u32[], token[]) recv(tok), channel_id=3
  rd = (f32[2], token[]) recv-done(r), channel_id=3
  ROOT d = f32[2] get-tuple-element(rd), index=0
}
"""
    p = np.array([4, -5], np.float32)
    np.testing.assert_array_equal(hlo_interp.run(text, p)[0], p)


def test_control_predecessors_order_execution():
    text = """HloModule m
ENTRY e {
  p = f32[2] parameter(0)
  tok = token[] after-all()
  r = (f32[2], u32[], token[]) recv(tok), channel_id=3
  rd = (f32[2], token[]) recv-done(r), channel_id=3, control-predecessors={sd}
  s = (f32[2], u32[], token[]) send(p, tok), channel_id=3
  sd = token[] send-done(s), channel_id=3
  ROOT d = f32[2] get-tuple-element(rd), index=0
}
"""
    p = np.array([1, 2], np.float32)
    np.testing.assert_array_equal(hlo_interp.run(text, p)[0], p)


# --------------------------------------------------------------------------------------------------
# send / recv with the host (is_host_transfer=true)

_HOST = """HloModule m
ENTRY e {
  t0 = token[] after-all()
  r = ((f32[3], s8[2]), u32[], token[]) recv(t0), channel_id=1, is_host_transfer=true
  rd = ((f32[3], s8[2]), token[]) recv-done(r), channel_id=1, is_host_transfer=true
  v = (f32[3], s8[2]) get-tuple-element(rd), index=0
  x = f32[3] get-tuple-element(v), index=0
  one = f32[] constant(1)
  ones = f32[3] broadcast(one), dimensions={}
  y = f32[3] add(x, ones)
  t1 = token[] get-tuple-element(rd), index=1
  s = (f32[3], u32[], token[]) send(y, t1), channel_id=2, is_host_transfer=true
  sd = token[] send-done(s), channel_id=2, is_host_transfer=true
  snd = (f32[3], u32[], token[]) send(x, sd), channel_id=2, is_host_transfer=true
  sdn = token[] send-done(snd), channel_id=2, is_host_transfer=true
  ROOT k = s8[2] get-tuple-element(v), index=1
}
"""


def test_host_send_recv(tmp_path):
    from hlo_interp.ops import io
    np.savez(tmp_path / "in.npz", ch1_0=np.array([1, 2, 3], np.float32), ch1_1=np.array([-5, 7], np.int8))
    io.take_host_sends()
    installed = io.load_host_recv(tmp_path / "in.npz")
    assert sorted(installed) == [1] and len(installed[1]) == 2
    (k,) = hlo_interp.run(_HOST)
    np.testing.assert_array_equal(k, np.array([-5, 7], np.int8))
    assert io.host_recv_remaining() == {}
    sends = io.take_host_sends()
    assert list(sends) == [2]
    np.testing.assert_array_equal(sends[2][0], [2, 3, 4])      # y = x + 1, first
    np.testing.assert_array_equal(sends[2][1], [1, 2, 3])      # then x
    io.save_host_sends(tmp_path / "out.npz", sends)
    with np.load(tmp_path / "out.npz") as z:
        assert sorted(z.files) == ["ch2_0", "ch2_1"]
        np.testing.assert_array_equal(z["ch2_0"], [2, 3, 4])
    # nothing queued: a located error naming the channel
    io.set_host_recv({})
    with pytest.raises(HloError, match="the host sent nothing .more. on channel 1"):
        hlo_interp.run(_HOST)
    io.set_host_recv({1: [np.zeros(4, np.float32), np.zeros(2, np.int8)]})
    with pytest.raises(HloError, match=r"host value on channel 1 has shape \[4\]"):
        hlo_interp.run(_HOST)
    np.savez(tmp_path / "bad.npz", ch1_1=np.zeros(2))
    with pytest.raises(ValueError, match="no array ch1_0"):
        io.load_host_recv(tmp_path / "bad.npz")
    io.set_host_recv({})
    io.take_host_sends()
