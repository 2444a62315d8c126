"""shuffle: XLA's own test modules (shuffle_expander_test.cc: their HLO texts and the values their
lowerings compute; shuffle_test.cc: NormalizeShift and GetMultiRotatePermuteIndices), hand-derived
cases (np.roll for rotate, explicit permutations), every element type bit for bit,
parse -> print -> parse, and located errors.

jaxlib 0.10.2 cannot parse shuffle ("Unknown opcode: shuffle"), so no XLA-run golden data exists; the
expected values below come from XLA's sources and tests, or are derived by hand (see each case).
"""
import re

import numpy as np
import pytest

import hlo_interp
import hlo_interp.ops
from hlo_interp import HloError
from hlo_interp.ops import registry
from hlo_interp.ops import shuffle as sh
from hlo_interp.syntax.literals import format_literal
from hlo_interp.syntax.printer import shape_text
from hlo_interp.types import PRIMITIVE_TYPES

def test_loaded_with_the_other_families():
    assert registry.KERNELS.get("shuffle") is sh._k_shuffle


def _module(body: str, shape: str = "f32[3,2]{1,0}") -> str:
    return (f"HloModule m\n\nENTRY main {{\n  p0 = {shape} parameter(0)\n"
            f"  ROOT s = {shape} shuffle(p0), {body}\n}}\n")


def _run(text: str, x) -> np.ndarray:
    (out,) = hlo_interp.run(text, x, validate=True)
    return out


def _shuffle_line(text: str) -> str:
    line = next(ln for ln in hlo_interp.to_text(hlo_interp.parse(text)).splitlines() if " shuffle(" in ln)
    return line.split("shuffle(%p0), ", 1)[1]


# --------------------------------------------------------------------------------------------------
# XLA's shuffle_expander_test.cc: the modules (parsed and verified there with
# ParseAndReturnVerifiedModule) and the values of the slices/concatenates/gathers they expand to.

X32 = np.arange(6, dtype=np.float32).reshape(3, 2)   # [[0,1],[2,3],[4,5]]
X23 = np.arange(6, dtype=np.float32).reshape(2, 3)   # [[0,1,2],[3,4,5]]
X222 = np.arange(8, dtype=np.float32).reshape(2, 2, 2)
IDX_3x2x2 = "{ { {2,0}, {0,1} }, { {0,0}, {2,1} }, { {1,0}, {1,1} } }"

EXPANDER_CASES = [
    # ExpandsRotate1D: concatenate(slice [1:4], slice [0:1])
    ("rotate_1d", "f32[4]{0}", "dimensions={0}, mode=rotate, shifts={1}",
     np.arange(4, dtype=np.float32), [1, 2, 3, 0]),
    # ExpandsRotate2D: dimension 0 by 1 (slices [1:2,0:3] ++ [0:1,0:3]), then dimension 1 by 2
    # (slices [0:2,2:3] ++ [0:2,0:2])
    ("rotate_2d", "f32[2,3]{1,0}", "dimensions={0,1}, mode=rotate, shifts={1,2}", X23,
     [[5, 3, 4], [2, 0, 1]]),
    # SimplifiesZeroShiftRotate: the parameter itself
    ("rotate_zero", "f32[4]{0}", "dimensions={0}, mode=rotate, shifts={0}",
     np.arange(4, dtype=np.float32), [0, 1, 2, 3]),
    # ExpandsPermuteOfOneDimension: gather rows 2, 0, 1 (the coordinate shared along dimension 1)
    ("permute_one_dim", "f32[3,2]{1,0}",
     "dimensions={0}, mode=permute, indices=s32[3,1]{1,0} { {2}, {0}, {1} }", X32, [[4, 5], [0, 1], [2, 3]]),
    # ExpandsPermuteOfEveryDimensionInOrder: result[i,j] = x[indices[i,j,0], indices[i,j,1]]
    ("permute_every_dim", "f32[3,2]{1,0}",
     f"dimensions={{0,1}}, mode=permute, indices=s32[3,2,2]{{2,1,0}} {IDX_3x2x2}", X32,
     [[4, 1], [0, 5], [2, 3]]),
    # ExpandsPermuteOfRank1
    ("permute_rank1", "f32[4]{0}", "dimensions={0}, mode=permute, indices=s32[4]{0} {3, 1, 0, 2}",
     np.arange(4, dtype=np.float32), [3, 1, 0, 2]),
    # ExpandsPermuteOfEveryDimensionOutOfOrder: coordinate k belongs to dimensions[k] (here
    # coordinate 0 to dimension 1): the same element moves as in the in-order case
    ("permute_out_of_order", "f32[3,2]{1,0}",
     ("dimensions={1,0}, mode=permute, indices=s32[3,2,2]{2,1,0} "
      "{ { {0,2}, {1,0} }, { {0,0}, {1,2} }, { {0,1}, {1,1} } }"), X32, [[4, 1], [0, 5], [2, 3]]),
    # ExpandsPermuteOfNonAdjacentDimensions: coordinates shared along dimension 1; this permutation
    # reverses dimensions 0 and 2
    ("permute_non_adjacent", "f32[2,2,2]{2,1,0}",
     ("dimensions={0,2}, mode=permute, indices=s32[2,1,2,2]{3,2,1,0} "
      "{ { { {1,1}, {1,0} } }, { { {0,1}, {0,0} } } }"), X222, [[[5, 4], [7, 6]], [[1, 0], [3, 2]]]),
    # ExpandsPermuteWithNarrowIndices: s8 indices, converted to s32 by the expander
    ("permute_narrow_indices", "f32[3,2]{1,0}",
     f"dimensions={{0,1}}, mode=permute, indices=s8[3,2,2]{{2,1,0}} {IDX_3x2x2}", X32,
     [[4, 1], [0, 5], [2, 3]]),
]


@pytest.mark.parametrize("name,shape,body,x,want", EXPANDER_CASES, ids=[c[0] for c in EXPANDER_CASES])
def test_xla_expander_modules(name, shape, body, x, want):
    text = _module(body, shape)
    m = hlo_interp.parse(text)
    assert hlo_interp.check(m) == []  # XLA's test verifies these modules
    got = _run(m, x)
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got, np.array(want, np.float32))


# The texts as XLA's tests write them, where that is already XLA's printed form: printed back
# byte for byte.  (Indices of rank 3 and 4 print with XLA's spacing: `{ { { 2, 0 }, ...`.)
@pytest.mark.parametrize("body", [
    "dimensions={0}, mode=rotate, shifts={1}",
    "dimensions={0,1}, mode=rotate, shifts={1,2}",
    "dimensions={0}, mode=permute, indices=s32[3,1]{1,0} { {2}, {0}, {1} }",
    "dimensions={0}, mode=permute, indices=s32[4]{0} {3, 1, 0, 2}",
])
def test_xla_text_is_printed_back_exactly(body):
    shape = "f32[4]{0}" if "s32[4]" in body or body.endswith("shifts={1}") else (
        "f32[2,3]{1,0}" if "{1,2}" in body else "f32[3,2]{1,0}")
    assert _shuffle_line(_module(body, shape)) == body


def test_literal_attributes_print_in_xla_literal_format():
    body = f"dimensions={{0,1}}, mode=permute, indices=s8[3,2,2]{{2,1,0}} {IDX_3x2x2}"
    assert _shuffle_line(_module(body)) == (
        "dimensions={0,1}, mode=permute, indices=s8[3,2,2]{2,1,0} "
        "{ { { 2, 0 }, { 0, 1 } }, { { 0, 0 }, { 2, 1 } }, { { 1, 0 }, { 1, 1 } } }")
    assert _shuffle_line(_module("dimensions={0}, mode=permute, indices=u8[3]{0} {2,0,1}")) == (
        "dimensions={0}, mode=permute, indices=u8[3]{0} {2, 0, 1}")
    # without a layout, XLA's ParseShape reads `{2,0,1}` as the layout of u8[3] (a `{` followed by an
    # integer after a shape is a layout, whitespace or not): XLA refuses `literal=s32[3] {1,2,3}` so
    with pytest.raises(hlo_interp.HloError, match="layout has 3 dimensions, but the shape has 1"):
        _shuffle_line(_module("dimensions={0}, mode=permute, indices=u8[3] {2,0,1}"))


# --------------------------------------------------------------------------------------------------
# XLA's shuffle_test.cc

@pytest.mark.parametrize("shift,size,want", [
    (0, 4, 0), (1, 4, 1), (3, 4, 3),             # NormalizeShiftKeepsShiftsThatAreAlreadyInRange
    (4, 4, 0), (5, 4, 1), (9, 4, 1),             # NormalizeShiftWrapsShiftsAround
    (-1, 4, 3), (-4, 4, 0), (-5, 4, 3),          # NormalizeShiftWrapsNegativeShiftsAround
    (3, 1, 0), (-3, 1, 0),                       # NormalizeShiftOfADimensionOfSizeOneIsANoOp
    (0, 0, 0), (3, 0, 0), (-3, 0, 0),            # NormalizeShiftOfAnEmptyDimensionIsANoOp
])
def test_xla_normalize_shift(shift, size, want):
    assert sh.normalize_shift(shift, size) == want


@pytest.mark.parametrize("shifts,dtype,dim,size,want", [
    ([[1, 2]], np.int32, 0, 3, [[1, 2], [2, 0], [0, 1]]),    # RotatesEverySliceByItsShift
    ([[-1, 5]], np.int32, 0, 3, [[2, 2], [0, 0], [1, 1]]),   # WrapsShiftsAround
    ([[1]], np.int32, 0, 3, [[1], [2], [0]]),                # KeepsASharedShiftShared
    ([[[1], [2]]], np.int32, 2, 4, [[[1, 2, 3, 0], [2, 3, 0, 1]]]),  # WithBroadcastDimension
    ([[1, 2]], np.int32, 0, 1, [[0, 0]]),                    # OfADimensionOfSizeOneAreZero
])
def test_xla_multi_rotate_permute_indices(shifts, dtype, dim, size, want):
    got = sh.multi_rotate_sources(size, dim, np.array(shifts, dtype))
    np.testing.assert_array_equal(got, np.array(want))


def test_xla_multi_rotate_indices_of_empty_and_large_dimensions():
    # OfAnEmptyDimensionAreEmpty: shape [0, 2]
    assert sh.multi_rotate_sources(0, 0, np.array([[1, 2]], np.int32)).shape == (0, 2)
    # TakeATypeThatHoldsEveryIndex: s8 shifts, a dimension of 300: index [299, 1] is 1
    got = sh.multi_rotate_sources(300, 0, np.array([[1, 2]], np.int8))
    assert got.shape == (300, 2) and got[299, 1] == 1 and got[299, 0] == 0


def test_multi_rotate_module():
    # shuffle_test.cc's {{1, 2}} on a [3,2] operand, rotating dimension 0: the sources are
    # [[1,2],[2,0],[0,1]], so result[i,j] = x[src[i,j], j]
    text = _module("dimensions={0}, mode=multi_rotate, multi_shifts=s32[1,2]{1,0} { {1, 2} }")
    m = hlo_interp.parse(text)
    assert hlo_interp.check(m) == []
    np.testing.assert_array_equal(_run(m, X32), np.array([[2, 5], [4, 1], [0, 3]], np.float32))
    assert _shuffle_line(text) == "dimensions={0}, mode=multi_rotate, multi_shifts=s32[1,2]{1,0} { { 1, 2 } }"


# --------------------------------------------------------------------------------------------------
# Hand-derived: rotate is np.roll to the left; permutations move what they name.

@pytest.mark.parametrize("shift", [0, 1, 3, 4, 5, 9, -1, -4, -7, 2**40 + 3, -(2**40) - 3, 2**63 - 1, -(2**63)])
@pytest.mark.parametrize("dim", [0, 1])
def test_rotate_is_np_roll(shift, dim):
    x = np.arange(20, dtype=np.float32).reshape(4, 5)
    got = _run(_module(f"dimensions={{{dim}}}, mode=rotate, shifts={{{shift}}}", "f32[4,5]{1,0}"), x)
    np.testing.assert_array_equal(got, np.roll(x, -shift, axis=dim))


def test_rotate_several_dimensions_in_any_order():
    x = np.arange(60, dtype=np.int32).reshape(3, 4, 5)
    got = _run(_module("dimensions={2,0}, mode=rotate, shifts={-2,7}", "s32[3,4,5]{2,1,0}"), x)
    np.testing.assert_array_equal(got, np.roll(np.roll(x, 2, axis=2), -7, axis=0))
    # no dimensions: the operand unchanged (shuffle_test.cc: RotateWithoutShiftsIsStillInRotateMode)
    got = _run(_module("dimensions={}, mode=rotate, shifts={}", "s32[3,4,5]{2,1,0}"), x)
    np.testing.assert_array_equal(got, x)


def test_rotate_of_an_empty_dimension():
    x = np.zeros((0, 3), np.float32)
    got = _run(_module("dimensions={0,1}, mode=rotate, shifts={5,-1}", "f32[0,3]{1,0}"), x)
    assert got.shape == (0, 3)


def test_permute_rows_both_index_forms():
    rng = np.random.default_rng(1)
    perm = rng.permutation(5)
    x = rng.standard_normal((5, 4)).astype(np.float32)
    lit = ", ".join(f"{{{p}}}" for p in perm)
    # the coordinate held directly (rank 2 = the operand's) or in a trailing dimension of size 1
    for idx in (f"s32[5,1]{{1,0}} {{ {lit} }}", f"s64[5,1,1]{{2,1,0}} {{ {', '.join('{' + s + '}' for s in lit.split(', '))} }}"):
        got = _run(_module(f"dimensions={{0}}, mode=permute, indices={idx}", "f32[5,4]{1,0}"), x)
        np.testing.assert_array_equal(got, x[perm])


def test_permute_columns_with_per_row_permutations():
    # indices of the operand's full shape: each row permuted on its own along dimension 1
    x = np.arange(12, dtype=np.int16).reshape(3, 4)
    rows = [[3, 2, 1, 0], [1, 2, 3, 0], [0, 1, 2, 3]]
    text = _module("dimensions={1}, mode=permute, indices=u16[3,4]{1,0} "
                   "{ { 3, 2, 1, 0 }, { 1, 2, 3, 0 }, { 0, 1, 2, 3 } }", "s16[3,4]{1,0}")
    np.testing.assert_array_equal(_run(text, x), np.take_along_axis(x, np.array(rows), axis=1))


def test_permute_of_every_element():
    rng = np.random.default_rng(2)
    x = rng.integers(-1000, 1000, (4, 5)).astype(np.int64)
    perm = rng.permutation(20)
    coords = np.stack(np.unravel_index(perm, (4, 5)), axis=-1).reshape(4, 5, 2)
    lit = "{ " + ", ".join("{ " + ", ".join(f"{{{a},{b}}}" for a, b in row) + " }" for row in coords) + " }"
    got = _run(_module(f"dimensions={{0,1}}, mode=permute, indices=s32[4,5,2]{{2,1,0}} {lit}",
                       "s64[4,5]{1,0}"), x)
    np.testing.assert_array_equal(got, x.reshape(-1)[perm].reshape(4, 5))


def test_permute_out_of_range_coordinates_clamp_as_gather():
    # The expander lowers permute to a gather (start indices converted to s32), and gather clamps a
    # start index into [0, n-1]: -3 -> 0, 7 -> 3; u32 4294967295 converts to s32 -1 -> 0.
    x = np.array([10, 11, 12, 13], np.float32)
    got = _run(_module("dimensions={0}, mode=permute, indices=s32[4]{0} {-3, 7, 1, 3}", "f32[4]{0}"), x)
    np.testing.assert_array_equal(got, [10, 13, 11, 13])
    got = _run(_module("dimensions={0}, mode=permute, indices=u32[4]{0} {4294967295, 2, 2, 1}",
                       "f32[4]{0}"), x)
    np.testing.assert_array_equal(got, [10, 12, 12, 11])


def test_multi_rotate_slices_by_their_own_shifts():
    rng = np.random.default_rng(3)
    x = rng.standard_normal((2, 5, 3)).astype(np.float64)
    shifts = np.array([[[1, -2, 7]], [[0, 5, -11]]])  # [2,1,3]: one shift per slice along dim 1
    lit = "{ " + ", ".join("{ {" + ", ".join(map(str, s[0])) + "} }" for s in shifts) + " }"
    got = _run(_module(f"dimensions={{1}}, mode=multi_rotate, multi_shifts=s8[2,1,3]{{2,1,0}} {lit}",
                       "f64[2,5,3]{2,1,0}"), x)
    want = np.empty_like(x)
    for i in range(2):
        for k in range(3):
            want[i, :, k] = np.roll(x[i, :, k], -shifts[i, 0, k])
    np.testing.assert_array_equal(got, want)
    # a shift shared by every slice (size 1 everywhere) is a plain rotate
    got = _run(_module("dimensions={1}, mode=multi_rotate, multi_shifts=s32[1,1,1]{2,1,0} { { {-3} } }",
                       "f64[2,5,3]{2,1,0}"), x)
    np.testing.assert_array_equal(got, np.roll(x, 3, axis=1))


def _reference_permute(x, dims, idx):
    """Element by element, as the gather the expander builds: coordinate k of the result element
    (taken from idx, dimensions of size 1 shared) is the source along dims[k], clamped."""
    out = np.empty_like(x)
    for pos in np.ndindex(*x.shape):
        at = tuple(0 if idx.shape[a] == 1 else p for a, p in enumerate(pos))
        coords = idx[at]  # one coordinate per shuffled dimension
        src = list(pos)
        for k, d in enumerate(dims):
            src[d] = min(max(int(coords[k]), 0), x.shape[d] - 1)
        out[pos] = x[tuple(src)]
    return out


@pytest.mark.parametrize("seed", range(12))
def test_permute_matches_an_element_by_element_gather(seed):
    # random shapes (with dimensions of size 1), shuffled dimensions, shared index dimensions and
    # out-of-range coordinates; the Python API and the HLO path against a plain loop
    rng = np.random.default_rng(100 + seed)
    rank = int(rng.integers(1, 4))
    shape = tuple(int(n) for n in rng.integers(1, 5, rank))
    x = rng.standard_normal(shape).astype(np.float32)
    dims = tuple(int(d) for d in rng.permutation(rank)[: int(rng.integers(1, rank + 1))])
    lead = tuple(n if rng.random() < 0.6 else 1 for n in shape)
    idx = rng.integers(-1, max(shape) + 1, lead + (len(dims),)).astype(np.int32)
    if len(dims) == 1 and seed % 2:
        idx = idx[..., 0]  # the coordinate held directly
    want = _reference_permute(x, dims, idx if idx.ndim == rank + 1 else idx[..., None])
    np.testing.assert_array_equal(sh.shuffle(x, dimensions=dims, mode="permute", indices=idx), want)
    lit = hlo_interp.ir.Literal(hlo_interp.ir.ArrayShape(PRIMITIVE_TYPES["s32"], idx.shape), idx)
    ty = f"f32[{','.join(map(str, shape))}]"
    body = (f"dimensions={{{','.join(map(str, dims))}}}, mode=permute, "
            f"indices={shape_text(hlo_interp.ir.with_default_layouts(lit.shape))} {format_literal(lit)}")
    np.testing.assert_array_equal(_run(_module(body, ty), x), want)


# --------------------------------------------------------------------------------------------------
# Every element type moves bit for bit (NaN payloads, -0, denormals, sub-byte values)

_TYPES = [t for t in PRIMITIVE_TYPES.values() if t.dtype is not None]


def _random_values(t, shape, rng):
    n = int(np.prod(shape))
    if t.kind == "pred":
        return rng.integers(0, 2, n).astype(bool).reshape(shape)
    if t.bits < 8:
        if t.kind == "float":  # f4e2m1fn: all 16 codes
            return rng.integers(0, 16, n).astype(np.uint8).view(t.dtype).reshape(shape)
        info_lo = -(1 << (t.bits - 1)) if t.kind == "sint" else 0
        info_hi = (1 << (t.bits - 1)) if t.kind == "sint" else (1 << t.bits)
        return rng.integers(info_lo, info_hi, n).astype(t.dtype).reshape(shape)
    raw = rng.integers(0, 256, n * t.dtype.itemsize, dtype=np.uint8)
    return raw.view(t.dtype).reshape(shape)


@pytest.mark.parametrize("t", _TYPES, ids=[t.name for t in _TYPES])
def test_every_element_type_bit_exact(t):
    rng = np.random.default_rng(len(t.name) * 7 + t.bits)
    x = _random_values(t, (4, 6), rng)
    shape = f"{t.name}[4,6]{{1,0}}"
    cases = [
        ("dimensions={1,0}, mode=rotate, shifts={-2,3}", np.roll(np.roll(x, 2, axis=1), -3, axis=0)),
        ("dimensions={0}, mode=permute, indices=s32[4,1]{1,0} { {3}, {0}, {2}, {1} }", x[[3, 0, 2, 1]]),
        ("dimensions={1}, mode=multi_rotate, multi_shifts=s32[4,1]{1,0} { {1}, {2}, {-1}, {6} }",
         np.stack([np.roll(x[i], -s) for i, s in enumerate([1, 2, -1, 6])])),
    ]
    for body, want in cases:
        got = _run(_module(body, shape), x)
        assert got.dtype == x.dtype and got.shape == want.shape, body
        assert got.tobytes() == want.tobytes(), body


# --------------------------------------------------------------------------------------------------
# parse -> print -> parse

ROUND_TRIP = [
    "dimensions={0}, mode=rotate, shifts={-9}",
    "dimensions={}, mode=rotate, shifts={}",
    "dimensions={1,0}, mode=permute, indices=s64[3,2,2]{2,1,0} { { {0,2}, {1,0} }, { {0,0}, {1,2} }, { {0,1}, {1,1} } }",
    "dimensions={0}, mode=permute, indices=s4[3,1]{1,0} { {2}, {0}, {1} }",
    "dimensions={1}, mode=permute, indices=u64[1,2]{1,0} { {1, 0} }",
    "dimensions={0}, mode=multi_rotate, multi_shifts=s16[1,2]{0,1} { {-1, 5} }",
    "dimensions={0}, mode=rotate, shifts={1}, metadata={op_name=\"roll\"}",
]


@pytest.mark.parametrize("body", ROUND_TRIP)
def test_parse_print_parse(body):
    text = _module(body)
    m = hlo_interp.parse(text)
    printed = hlo_interp.to_text(m)
    m2 = hlo_interp.parse(printed)
    assert m2 == m
    assert hlo_interp.to_text(m2) == printed
    lit = m.entry.root.attrs.get("indices") or m.entry.root.attrs.get("multi_shifts")
    if lit is not None:  # the decoded literal holds the values, in the literal's element type
        assert lit.value.dtype == lit.shape.element_type.dtype


def test_decoded_attributes():
    m = hlo_interp.parse(_module("dimensions={0}, mode=permute, indices=s8[3,1]{1,0} { {2}, {0}, {1} }"))
    a = m.entry.root.attrs
    assert a["dimensions"] == (0,) and a["mode"] == "permute"
    np.testing.assert_array_equal(a["indices"].value, np.array([[2], [0], [1]], np.int8))
    assert a["indices"].value.dtype == np.int8


# --------------------------------------------------------------------------------------------------
# Errors: located, never a traceback

PARSE_ERRORS = [  # (attributes, column of the attribute, message)
    ("dimensions={0}, mode=permute, indices=f32[3]{0} {1, 2, 0}", 69, "expected an integer literal, got element type f32"),
    ("dimensions={0}, mode=permute, indices=s8[3]{0} {1, 2, 300}", 69, "value 300 is out of range for s8"),
    ("dimensions={0}, mode=permute, indices=s8[3]{0} { {1}, 2, 0}", 69, "expected an integer at nesting level 1"),
    ("dimensions={0}, mode=permute, indices=s8[3]{0} {1, 2}", 69, "expected 3 elements at nesting level 0"),
    ("dimensions={0}, mode=permute, indices={1, 2}", 69, "expected an integer array literal"),
    ("dimensions={0}, mode=rotate, shifts=7", 68, "expected a list of integers"),
    ("dimensions={0}, mode={rotate}, shifts={1}", 55, "attribute mode of shuffle: expected a name"),
]


@pytest.mark.parametrize("body,col,msg", PARSE_ERRORS, ids=[c[2][:30] for c in PARSE_ERRORS])
def test_bad_attribute_values_are_located(body, col, msg):
    with pytest.raises(HloError, match=msg) as e:
        hlo_interp.parse(_module(body))
    assert (e.value.line, e.value.column) == (5, col)


CHECK_ERRORS = [  # found by `hlo check` (E102/E105) and, the same, when run
    ("dimensions={0}, mode=rotate, shifts={1,2}", "shuffle rotate has 2 shifts for 1 dimensions"),
    ("dimensions={0}, mode=spin, shifts={1}", "unknown shuffle mode spin"),
    ("dimensions={0,0}, mode=rotate, shifts={1,2}", "repeat a dimension"),
    ("dimensions={2}, mode=rotate, shifts={1}", "shuffle dimension 2 is out of range"),
    ("dimensions={0}, mode=permute, indices=s8[2]{0} {1, 2}", "shuffle indices s8\\[2\\] do not fit"),
    ("dimensions={0,1}, mode=permute, indices=s8[3,2,1]{2,1,0} { { {0}, {0} }, { {0}, {0} }, { {0}, {0} } }",
     "do not fit the operand"),
    ("dimensions={0}, mode=permute, indices=s8[2,2]{1,0} { {0, 1}, {1, 0} }", "indices dimension 0 has size 2"),
    ("dimensions={0}, mode=permute", "needs indices="),
    ("dimensions={0}, mode=rotate, shifts={1}, indices=s8[3]{0} {1, 2, 0}", "takes shifts=, not indices="),
    ("dimensions={0,1}, mode=multi_rotate, multi_shifts=s32[1,2]{1,0} { {1, 2} }", "rotates one dimension, not 2"),
    ("dimensions={0}, mode=multi_rotate, multi_shifts=s32[3,2]{1,0} { {1, 2}, {1, 2}, {1, 2} }",
     "size 1 along the rotated dimension 0, not 3"),
    ("dimensions={0}, mode=multi_rotate, multi_shifts=s32[2]{0} {1, 2}", "must have the operand's rank 2"),
    ("dimensions={0}", "mode"),
    ("mode=rotate, shifts={1}", "dimensions"),
]


@pytest.mark.parametrize("body,msg", CHECK_ERRORS, ids=[c[1][:30] for c in CHECK_ERRORS])
def test_invalid_shuffles_are_reported_where_they_are(body, msg):
    m = hlo_interp.parse(_module(body))
    findings = hlo_interp.check(m)
    assert findings and all((f.line, f.column) == (5, 8) for f in findings), findings
    assert any(f.code in ("E102", "E105") for f in findings)
    assert any(re.search(msg, f.message) for f in findings), [f.message for f in findings]
    with pytest.raises(HloError) as e:
        hlo_interp.run(m, X32)
    assert (e.value.line, e.value.column) == (5, 8)
    assert "Traceback" not in str(e.value)


def test_cli_check_renders_a_located_error(tmp_path):
    from click.testing import CliRunner

    from hlo_interp.cli import main
    f = tmp_path / "bad.hlo"
    f.write_text(_module("dimensions={0}, mode=permute, indices=s8[3]{0} {1, 2, 300}"))
    res = CliRunner().invoke(main, ["check", str(f)])
    assert res.exit_code in (1, 2), res.output  # a finding (the file does not parse)
    assert f"{f}:5:69: error" in res.output
    assert "attribute indices of shuffle: value 300 is out of range for s8" in res.output
    assert "Traceback" not in res.output
