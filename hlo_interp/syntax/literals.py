"""Literals: the text inside `constant(...)` -> ir.Literal (NumPy arrays), and back to XLA's text.

Parsing follows the `literal` rule of grammar/hlo.lark.  Dense numeric arrays (the common, and the
large, case) take a fast path: one regex pass extracts the numbers and NumPy converts them; the brace
structure is still checked against the shape, exactly as the grammar and XLA require.  Anything
else (tuples, complex pairs, NaN payloads, comments) goes through the grammar.

Values are converted the way XLA's parser does: a decimal is read as a double and then cast to the
element type (round to nearest even); integers must fit the type's range.

Dense integer, f16, f32 and f64 literals without inf/NaN are converted and printed without NumPy
(Python ints; `struct` rounds doubles to f32/f16 as a C cast does): the ir.Literal keeps the flat
values and makes its ndarray only when a kernel asks, so `hlo fmt` and `hlo check` never import NumPy
for them.  Everything else goes through NumPy/ml_dtypes, imported then.
"""
from __future__ import annotations

import functools
import math
import re
import struct
from typing import Any

from .. import ir
from ..diagnostics import HloError, SourceText

class _Lazy:
    """`np` and `ml_dtypes`, imported on first use."""

    def __getattr__(self, name):
        import ml_dtypes
        import numpy
        g = globals()
        g["np"], g["ml_dtypes"] = numpy, ml_dtypes
        return getattr(g[self._name], name)

    def __init__(self, name):
        self._name = name


np = _Lazy("np")  # replaced by the module itself on first use
ml_dtypes = _Lazy("ml_dtypes")

_SIMPLE_NUMERIC = re.compile(r"[\s{},0-9eE.+\-infa]*")
_NUMBER = re.compile(r"-?(?:nan|inf)|[-+]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]+)?")
_WS = re.compile(r"\s+")
_NUMBER_SPLIT = re.compile(f"({_NUMBER.pattern})")  # split() with it: [structure, number, structure, ...]
# Number texts that float() does not read as XLA does: integers, which XLA lexes as such, whose
# value as a double differs from the text's: -0 (+0.0), and integers too large for a double.
_NEG_ZERO_INT = re.compile(r"(?<![eE])-0+(?![0-9.eE])")
_INT_TEXT = re.compile(r"[-+]?[0-9]+")


@functools.lru_cache(maxsize=256)
def _skeleton(dims: tuple[int, ...]) -> str:
    """A dense literal of these dimensions with each number written '#': [2,2] -> '{{#,#},{#,#}}'."""
    if not dims:
        return "#"
    if dims[0] == 0:
        return "{}"
    return "{" + ",".join([_skeleton(dims[1:])] * dims[0]) + "}"


def _range_error(source, pos, value, et):
    lo, hi = int_range(et)
    return HloError.at(source, pos, f"value {value} is out of range for literal's primitive type "
                                    f"{et.name} namely [{lo}, {hi}]")


def int_range(et) -> tuple[int, int]:
    """The integers a literal of this type accepts.  64-bit types take the union of the s64 and u64
    ranges, bit-cast (XLA's lexer reads integers as int64 and accepts the uint64 range)."""
    if et.bits == 64 and et.kind in ("sint", "uint"):
        return -(1 << 63), (1 << 64) - 1
    if et.kind == "sint":
        return -(1 << (et.bits - 1)), (1 << (et.bits - 1)) - 1
    if et.kind == "uint":
        return 0, (1 << et.bits) - 1
    return 0, 1


def parse_literal_body(body: str, offset: int, shape: ir.Shape, source: SourceText, parse_tree) -> ir.Literal:
    """The literal of `shape` written as `body` (at `offset` in `source`).  Plain dense numeric bodies
    are read here; others are parsed by `parse_tree(source, start, end)` (the parser's `literal` rule)."""
    if body.count("{") > 500 and re.search(r"\{{501}", body.replace(" ", "")):
        raise HloError.at(source, offset, "literal nested deeper than 500 levels")
    stripped = body.strip()
    if stripped in ("{...}", "..."):
        return ir.Literal(shape, None)
    if isinstance(shape, ir.ArrayShape) and stripped.startswith("{") and shape.rank:
        # Every element takes at least one character: a body too short for its shape is refused
        # before anything of the declared size is built (`f32[100000000] constant({1})`).
        n = shape.num_elements()
        if n > len(body):
            raise HloError.at(source, offset, f"the literal has fewer values than its shape "
                                              f"{shape.element_type.name}[{','.join(map(str, shape.dims))}] "
                                              f"holds ({n} elements)")
    if isinstance(shape, ir.ArrayShape) and shape.element_type.is_array_type and \
            shape.element_type.kind in ("sint", "uint", "float") and _SIMPLE_NUMERIC.fullmatch(body):
        fast = _fast_dense(body, offset, shape, source)
        if fast is not None:
            return fast
    tree = parse_tree(source, offset, offset + len(body))
    return _to_literal(tree, shape, source, offset)


def _fast_dense(body: str, offset: int, shape: ir.ArrayShape, source: SourceText):
    if shape.num_elements() > len(body):
        return None  # too short for the shape (each number takes a character): never build the skeleton
    compact = "".join(body.split())  # what _WS.sub("", body) gives, faster
    parts = _NUMBER_SPLIT.split(compact)  # one pass: the numbers and the structure between them
    if "#".join(parts[0::2]) != _skeleton(shape.dims):
        return None  # let the grammar path report exactly where it goes wrong
    flat = _convert_py(parts[1::2], shape.element_type, compact)
    if flat is not None:
        return ir.Literal.from_flat(shape, flat)
    return ir.Literal(shape, _convert(parts[1::2], shape, source, offset, compact))


_PACK = {"f32": "f", "f16": "e"}


def _convert_py(nums: list[str], et, compact: str):
    """The values of a dense literal as Python numbers of the element type's value set, when that
    takes no NumPy (integers; f16/f32/f64 without inf/NaN and without the texts that need care);
    None otherwise, and whenever a value is refused (the NumPy path then gives the message)."""
    kind = et.kind
    if kind in ("sint", "uint"):
        try:
            vals = list(map(int, nums))
        except ValueError:
            return None
        lo, hi = int_range(et)
        if vals and (min(vals) < lo or max(vals) > hi):
            return None
        if et.bits == 64:  # bit-cast into the type's own range, as the array will hold them
            vals = [v & 0xFFFFFFFFFFFFFFFF for v in vals]
            if kind == "sint":
                vals = [v - (1 << 64) if v >= (1 << 63) else v for v in vals]
        return vals
    if et.name not in ("f32", "f64", "f16") or ("-0" in compact and _NEG_ZERO_INT.search(compact)) \
            or max(map(len, nums), default=0) >= 19:
        return None
    vals = list(map(float, nums))
    if vals and max(map(abs, vals)) == math.inf and \
            any(v in (math.inf, -math.inf) and "inf" not in t for v, t in zip(vals, nums)):
        return None  # a decimal beyond the double range
    code = _PACK.get(et.name)
    if code is not None and vals:
        fmt = f"<{len(vals)}{code}"
        try:  # rounds as a C cast does; OverflowError when a finite value becomes infinite
            vals = list(struct.unpack(fmt, struct.pack(fmt, *vals)))
        except OverflowError:
            return None
    return vals


def _round_to(x: float, code: str) -> float:
    """x rounded to f32 ("f") or f16 ("e"), +/-inf when out of that range."""
    try:
        return struct.unpack("<" + code, struct.pack("<" + code, x))[0]
    except OverflowError:
        return math.copysign(math.inf, x)


def _convert(nums: list[str], shape: ir.ArrayShape, source: SourceText, offset: int,
             compact: str | None = None) -> np.ndarray:
    """The numbers (texts) of a dense literal of this shape; `compact`, when given, is the
    literal's text without whitespace (to see at once whether any number needs care)."""
    et = shape.element_type
    if et.kind in ("sint", "uint"):
        try:
            vals = list(map(int, nums))
        except ValueError:
            bad = next(s for s in nums if not re.fullmatch(r"[-+]?\d+", s))
            raise HloError.at(source, offset, f"expected an integer for {et.name}, found {bad}") from None
        lo, hi = int_range(et)
        if vals and (min(vals) < lo or max(vals) > hi):
            v = next(v for v in vals if v < lo or v > hi)
            raise _range_error(source, offset, v, et)
        arr = _int_array(vals, et)
    else:
        # XLA lexes `-0` and other integer tokens as integers: -0 becomes +0.0.
        # An integer token is an int64 (a uint64 above 2^63 - 1 wraps, as XLA's lexer reads it);
        # beyond those ranges XLA's lexer makes no number of it at all.
        if compact is not None and not ("-0" in compact and _NEG_ZERO_INT.search(compact)) \
                and max(map(len, nums), default=0) < 19:
            arr = np.array(list(map(float, nums)), dtype=np.float64)  # the same values, at C speed
        else:
            arr = np.array([_float_of_int_token(int(s), source, offset) if _INT_TEXT.fullmatch(s)
                            else float(s) for s in nums], dtype=np.float64)
        with np.errstate(over="ignore", invalid="ignore"):
            cast = _cast_float(arr, et.dtype)
        _check_float_range(arr, cast, nums, et, source, offset)
        arr = cast
    return arr.reshape(shape.dims)


def _float_of_int_token(v: int, source: SourceText, offset: int) -> float:
    if not -(1 << 63) <= v < (1 << 64):
        raise HloError.at(source, offset, "unexpected token type in a literal (an integer beyond the "
                                          "int64 and uint64 ranges)")
    return float(v - (1 << 64) if v >= (1 << 63) else v)


def _int_array(vals: list[int], et) -> np.ndarray:
    if et.bits == 64:
        vals = [v & 0xFFFFFFFFFFFFFFFF for v in vals]
        return np.array(vals, dtype=np.uint64).view(et.dtype)
    return np.array(vals, dtype=np.int64).astype(et.dtype)


def _cast_float(arr: np.ndarray, dtype: np.dtype) -> np.ndarray:
    with np.errstate(over="ignore", invalid="ignore"):
        return arr.astype(dtype)


def _float_limits(et) -> tuple[float, float]:
    fi = np.finfo(et.dtype) if et.name in ("f16", "f32", "f64") else ml_dtypes.finfo(et.dtype)
    return float(fi.min), float(fi.max)


def _check_float_range(doubles: np.ndarray, cast: np.ndarray, texts, et, source, offset,
                       strict: bool = False, what: str = "value", type_name: str | None = None) -> None:
    """XLA's parser reads a number as a double (a decimal beyond the double range does not parse:
    "Constant is out of range for double"), then range-checks it (CheckParsedValueIsInRange):
    a finite value whose conversion to the element type is not finite is out of range (values
    that round to the largest finite value are taken); `strict` (the parts of a complex constant)
    compares the double itself with the part type's largest finite value, without rounding."""
    fin = np.isfinite(doubles)
    if not fin.all():
        for i in np.flatnonzero(np.isinf(doubles)):
            t = str(texts[i])
            if "inf" not in t:
                raise HloError.at(source, offset, f"constant {t} is out of range for double "
                                                  f"(+/-1.79769e+308) and so is unparsable")
    lo, hi = _float_limits(et)
    if strict:
        with np.errstate(invalid="ignore"):
            bad = fin & ((doubles > hi) | (doubles < lo))
    else:
        bad = fin & ~np.isfinite(cast)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise HloError.at(source, offset, f"{what} {texts[i]} is out of range for literal's primitive "
                                          f"type {type_name or et.name} namely [{lo:g}, {hi:g}]")


# --------------------------------------------------------------------------------------------------
# The grammar path: the tree of `literal` rule callbacks -> arrays

class ElidedMark:
    pass


ELIDED = ElidedMark()


class LitTuple(tuple):
    """A parenthesised group: a tuple literal or a complex (re, im) pair."""


def _to_literal(tree, shape: ir.Shape, source: SourceText, offset: int) -> ir.Literal:
    if tree is ELIDED or (isinstance(tree, list) and len(tree) == 1 and tree[0] is ELIDED):
        return ir.Literal(shape, None)
    if isinstance(tree, tuple) and len(tree) == 3 and tree[0] == "shaped":
        _, sub_shape, value = tree
        tree = value
    if isinstance(shape, ir.TupleShape):
        if not isinstance(tree, LitTuple):
            raise HloError.at(source, offset, f"expected a tuple literal ( ... ) for shape with "
                                              f"{len(shape.elements)} elements")
        if len(tree) != len(shape.elements):
            raise HloError.at(source, offset, f"expects {len(shape.elements)} tuple elements, "
                                              f"but sees {len(tree)}")
        return ir.Literal(shape, tuple(_to_literal(t, s, source, offset)
                                       for t, s in zip(tree, shape.elements)))
    if not isinstance(shape, ir.ArrayShape) or shape.element_type.dtype is None:
        if shape.element_type.kind == "token" if isinstance(shape, ir.ArrayShape) else False:
            return ir.Literal(shape, np.zeros((), dtype=np.uint8))
        raise HloError.at(source, offset, f"a constant cannot have shape {shape}")
    if len(shape.dims) > MAX_ARRAY_RANK:
        raise HloError.at(source, offset, f"a constant of rank {len(shape.dims)} is not supported: arrays have at "
                                          f"most {MAX_ARRAY_RANK} dimensions here (NumPy's limit)")
    if shape.dims and not isinstance(tree, (list, LitTuple)):
        return _scalar_for_array(tree, shape, source, offset)
    flat: list[Any] = []
    _flatten(tree, shape.dims, 0, flat, source, offset)
    return ir.Literal(shape, _values_to_array(flat, shape, source, offset))


MAX_ARRAY_RANK = 64  # NumPy's largest number of dimensions


def _scalar_for_array(tree, shape: ir.ArrayShape, source: SourceText, offset: int) -> ir.Literal:
    """A scalar written for an array constant, `f32[3] constant(7)`.  XLA's parser takes it (its
    dense-literal loop ignores the nesting check for a number at level 0) and stores the value at
    linear index 0 of a zero-filled array: XLA:CPU runs `f32[3] constant(7)` as {7, 0, 0}, not as a
    broadcast.  With no element to hold it the text is refused, as XLA refuses it; a complex (re, im)
    pair goes through the checked path, where XLA refuses it too."""
    n = 1
    for d in shape.dims:
        n *= d
    if n == 0:
        raise HloError.at(source, offset, f"expects nested array in rank {len(shape.dims)}, but sees 0 "
                                          f"(a scalar for an array of no elements)")
    first = _values_to_array([tree], ir.ArrayShape(shape.element_type, ()), source, offset)
    out = np.zeros(shape.dims, dtype=shape.element_type.dtype)
    out.reshape(-1)[0] = first.reshape(-1)[0]
    return ir.Literal(shape, out)


def _flatten(tree, dims, level, out, source, offset):
    if level == len(dims):
        if isinstance(tree, list):
            raise HloError.at(source, offset, f"expects a scalar at nesting level {level}, but sees "
                                              f"a list of {len(tree)} elements")
        out.append(tree)
        return
    if not isinstance(tree, list):
        if len(dims) - level == len(dims) and level == 0 and False:
            pass
        raise HloError.at(source, offset, f"expects nested array literal of rank {len(dims)} "
                                          f"(dimensions {list(dims)}), but sees a scalar at level {level}")
    if len(tree) != dims[level]:
        raise HloError.at(source, offset, f"expects {dims[level]} elements at nesting level {level} "
                                          f"(dimensions {list(dims)}), but sees {len(tree)}")
    for t in tree:
        _flatten(t, dims, level + 1, out, source, offset)


_PAYLOAD = re.compile(r"(-?)nan\(0x([0-9a-fA-F]+)\)")


def _float_bits(et) -> tuple[int, int]:
    """(exponent bits, mantissa bits) of a float type."""
    fi = ml_dtypes.finfo(et.dtype) if et.dtype.itemsize <= 2 and et.name != "f16" else np.finfo(et.dtype)
    return fi.nexp, fi.nmant


def _scalar(v, et, source, offset):
    kind = et.kind
    if kind == "pred":
        if isinstance(v, bool):
            return v
        if isinstance(v, tuple) and v[0] == "i" and int(v[1]) in (0, 1):
            return bool(int(v[1]))
        raise HloError.at(source, offset, f"expected true, false, 0 or 1 for pred, found {_show(v)}")
    if kind in ("sint", "uint"):
        if isinstance(v, tuple) and v[0] == "i":
            n = int(v[1])
            lo, hi = int_range(et)
            if not lo <= n <= hi:
                raise _range_error(source, offset, n, et)
            return n
        raise HloError.at(source, offset, f"expected an integer for {et.name}, found {_show(v)}")
    if kind == "float":
        if isinstance(v, tuple) and v[0] == "i":
            return str(_float_of_int_token(int(v[1]), source, offset))
        if isinstance(v, tuple) and v[0] == "f":
            return v[1]
        raise HloError.at(source, offset, f"expected a number for {et.name}, found {_show(v)}")
    if kind == "complex":
        if isinstance(v, LitTuple) and len(v) == 2:
            return (_scalar(v[0], _REAL_OF[et.name], source, offset),
                    _scalar(v[1], _REAL_OF[et.name], source, offset))
        raise HloError.at(source, offset, f"expected a complex value (re, im) for {et.name}")
    raise HloError.at(source, offset, f"unsupported literal type {et.name}")


def _show(v) -> str:
    if isinstance(v, tuple) and len(v) == 2 and isinstance(v[1], str):
        return v[1]
    if isinstance(v, bool):
        return "true" if v else "false"  # XLA takes true and false for pred only
    if isinstance(v, LitTuple):
        return "a tuple"
    if isinstance(v, list):
        return "a list"
    return str(v)


class _RealOf(dict):
    pass


from ..types import PRIMITIVE_TYPES as _PT  # noqa: E402

_REAL_OF = {"c64": _PT["f32"], "c128": _PT["f64"]}


def _float_value(text: str, et, source, offset) -> tuple[float, int | None]:
    """(double value, NaN payload or None)."""
    m = _PAYLOAD.fullmatch(text)
    if m:
        return (-math.nan if m.group(1) else math.nan), int(m.group(2), 16)
    return float(text), None


def _values_to_array(flat: list, shape: ir.ArrayShape, source, offset) -> np.ndarray:
    et = shape.element_type
    vals = [_scalar(v, et, source, offset) for v in flat]
    if et.kind == "pred":
        return np.array(vals, dtype=np.bool_).reshape(shape.dims)
    if et.kind in ("sint", "uint"):
        return _int_array(vals, et).reshape(shape.dims)
    if et.kind == "float":
        return _floats(vals, et, source, offset).reshape(shape.dims)
    real_et = _REAL_OF[et.name]
    re_ = _floats([v[0] for v in vals], real_et, source, offset, strict=True, what="real part",
                  type_name=et.name)
    im_ = _floats([v[1] for v in vals], real_et, source, offset, strict=True, what="imaginary part",
                  type_name=et.name)
    out = np.empty(len(vals), dtype=et.dtype)
    out.real = re_
    out.imag = im_
    return out.reshape(shape.dims)


def _floats(texts: list[str], et, source, offset, strict: bool = False, what: str = "value",
            type_name: str | None = None) -> np.ndarray:
    doubles = []
    payloads = []
    for i, t in enumerate(texts):
        d, p = _float_value(t, et, source, offset)
        doubles.append(d)
        if p is not None:
            payloads.append((i, p))
    as_doubles = np.array(doubles, dtype=np.float64)
    arr = _cast_float(as_doubles, et.dtype)
    _check_float_range(as_doubles, arr, texts, et, source, offset, strict, what, type_name)
    if payloads:
        nbits = arr.dtype.itemsize * 8
        uint = {8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.uint64}[nbits]
        _, mant = _mantissa_bits(et)
        if mant == 0 or not _has_payload(et):
            raise HloError.at(source, offset, f"NaN payloads are not supported for {et.name}")
        bits = arr.view(uint)
        for i, p in payloads:
            if p == 0 or p >= (1 << mant):
                raise HloError.at(source, offset, f"NaN payload 0x{p:x} is out of range for {et.name}")
            sign = int(bits[i]) & (1 << (nbits - 1))
            exp_mask = ((1 << nbits) - 1) ^ ((1 << mant) - 1) ^ (1 << (nbits - 1))
            bits[i] = sign | exp_mask | p
    return arr


def _has_payload(et) -> bool:
    # Types with an all-ones exponent NaN encoding carry payloads; fn/fnuz/e8m0 types do not.
    return et.name in ("f16", "f32", "f64", "bf16", "f8e5m2", "f8e4m3", "f8e3m4")


def _mantissa_bits(et) -> tuple[int, int]:
    fi = ml_dtypes.finfo(et.dtype)
    return fi.nexp, fi.nmant


# --------------------------------------------------------------------------------------------------
# Printing: XLA's formats (xla/literal.cc DenseArrayPrintHelper, one-line mode; xla/util.cc
# RoundTripFpToString)

_MAX_DIGITS10 = {"f16": 5, "bf16": 4, "f8e5m2": 2, "f8e4m3": 3, "f8e4m3fn": 3, "f8e4m3b11fnuz": 3,
                 "f8e3m4": 3, "f8e5m2fnuz": 2, "f8e4m3fnuz": 3, "f4e2m1fn": 2, "f8e8m0fnu": 2}


def _fmt_g(v: float, digits: int) -> str:
    s = "%.*g" % (digits, v)
    return s


def format_float(v, type_name: str) -> str:
    """One element of a floating-point literal, as XLA prints it -- except negative zero, which XLA
    prints as `-0` but reads back as the integer 0 (+0.0); we print `-0.0`, which both read as -0.0."""
    if type_name == "f32":
        f = float(v)
        if math.isnan(f):
            return _nan_text(v, type_name)
        if math.isinf(f):
            return "inf" if f > 0 else "-inf"
        if f == 0 and math.copysign(1, f) < 0:
            return "-0.0"
        s = _fmt_g(f, 6)
        if _round_to(float(s), "f") != f:
            s = _fmt_g(f, 9)
        return s
    if type_name == "f64":
        f = float(v)
        if math.isnan(f):
            return _nan_text(v, type_name)
        if math.isinf(f):
            return "inf" if f > 0 else "-inf"
        if f == 0 and math.copysign(1, f) < 0:
            return "-0.0"
        s = _fmt_g(f, 15)
        if float(s) != f:
            s = _fmt_g(f, 17)
        return s
    f = float(v)
    if math.isnan(f):
        return _nan_text(v, type_name)
    if math.isinf(f):
        return "inf" if f > 0 else "-inf"
    if f == 0 and math.copysign(1, f) < 0:
        return "-0.0"
    s = _fmt_g(f, _MAX_DIGITS10.get(type_name, 9))
    if type_name == "f16":
        if _round_to(float(s), "e") != f:
            for digits in range(_MAX_DIGITS10["f16"] + 1, 18):
                s = _fmt_g(f, digits)
                if _round_to(float(s), "e") == f:
                    break
        return s
    # XLA's max_digits10 format does not always read back to the same value (f8e8m0fnu's 2^-127);
    # then use as many digits as it takes.
    dtype = _DTYPES[type_name]
    want = np.asarray(v, dtype=dtype).tobytes()
    if np.array(float(s)).astype(dtype).tobytes() != want:
        for digits in range(_MAX_DIGITS10.get(type_name, 9) + 1, 18):
            s = _fmt_g(f, digits)
            if np.array(float(s)).astype(dtype).tobytes() == want:
                break
    return s


class _FloatDtypes(dict):
    def __missing__(self, name):
        return self.setdefault(name, _PT[name].dtype)


_DTYPES = _FloatDtypes()


def _nan_text(v, type_name: str) -> str:
    arr = np.asarray(v)
    nbytes = arr.dtype.itemsize
    bits = int(arr.reshape(1).view({1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[nbytes])[0])
    sign = bits >> (nbytes * 8 - 1)
    s = "-nan" if sign else "nan"
    from ..types import PRIMITIVE_TYPES
    et = PRIMITIVE_TYPES[type_name]
    if _has_payload(et):
        mant = _mantissa_bits(et)[1]
        payload = bits & ((1 << mant) - 1)
        quiet = 1 << (mant - 1)
        if payload != quiet:
            s += f"(0x{payload:x})"
    return s


_F32_MAX = 3.4028234663852886e+38  # float(np.finfo(np.float32).max)


def _c64_part(x) -> str:
    """XLA prints a c64 part of magnitude FLT_MAX as 3.40282347e+38, which its own parser then refuses
    (it range-checks c64 parts as doubles); we print 17 digits there, which reads back exactly."""
    if abs(float(x)) == _F32_MAX:
        return repr(float(x))
    return format_float(x, "f32")


def format_element(v, et) -> str:
    kind = et.kind
    if kind == "float":
        return format_float(v, et.name)
    if kind == "complex":
        if et.name == "c64":
            return f"({_c64_part(v.real)}, {_c64_part(v.imag)})"
        return f"({format_float(v.real, 'f64')}, {format_float(v.imag, 'f64')})"
    if kind == "pred":
        return "true" if v else "false"
    return str(int(v))


def format_literal(lit: ir.Literal) -> str:
    """The text inside constant(...), in XLA's one-line format."""
    if lit.elided:
        return "{...}"
    shape = lit.shape
    flat = lit.flat
    if flat is not None:  # Python values: no NumPy needed
        et = shape.element_type
        dims = shape.dims
        rank = len(dims)
        if rank == 0:
            return str(flat[0]) if et.kind in ("sint", "uint") else _py_float_text(flat[0], et.name)
        if et.kind in ("sint", "uint"):
            strs = [str(x) for x in flat]
        else:
            strs = [_py_float_text(x, et.name) for x in flat]
        return _nest(strs, dims)
    if isinstance(lit.value, tuple):
        return "( " + ", ".join(format_literal(x) for x in lit.value) + " )"
    et = shape.element_type
    arr = lit.value
    rank = arr.ndim
    if rank == 0:
        return format_element(arr[()], et)
    if et.kind == "pred":
        strs = np.where(arr.reshape(-1), "1", "0").tolist()
    elif et.kind in ("sint", "uint"):
        strs = [str(x) for x in arr.reshape(-1).astype(np.int64 if et.kind == "sint" or et.bits < 64
                                                       else np.uint64).tolist()]
    else:
        flat = arr.reshape(-1)
        strs = [format_element(flat[i], et) for i in range(flat.size)]
    return _nest(strs, arr.shape)


def _py_float_text(x: float, type_name: str) -> str:
    """format_float of a Python float; its NaNs are float()'s, the quiet NaN without payload."""
    if x != x:
        return "-nan" if math.copysign(1.0, x) < 0 else "nan"
    return format_float(x, type_name)


def _nest(strs: list[str], dims: tuple) -> str:
    """The elements' texts in XLA's one-line nesting of braces."""
    rank = len(dims)
    out: list[str] = []
    it = iter(strs)

    def rec(level: int, accum: list[int]):
        n = dims[level]
        remaining = rank - level
        if remaining == 1:
            if rank == 1:
                out.append("{")
            else:
                out.append("{" + ("" if n <= 1 else " "))
            for i in range(n):
                out.append(next(it))
                if i < n - 1:
                    out.append(", ")
            if rank == 1:
                out.append("}")
            else:
                out.append(("" if n <= 1 else " ") + "}")
            return
        if rank > 3 and accum:
            out.append("{" + f" /*i{len(accum) - 1}={accum[-1]}*/" + (" " if n > 0 else ""))
        else:
            out.append("{ ")
        for i in range(n):
            accum.append(i)
            rec(level + 1, accum)
            accum.pop()
            if i < n - 1:
                out.append(", ")
        out.append(" }")

    rec(0, [])
    return "".join(out)
