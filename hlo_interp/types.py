"""XLA's primitive (element) types as data: text name, bit width, kind and NumPy dtype.

The names are the lowercase spelling of xla_data.proto's PrimitiveType enum, as HLO text writes them.
ml_dtypes supplies the NumPy types NumPy lacks (bf16, the f8/f4 variants, s1/s2/s4, u1/u2/u4).
NumPy and ml_dtypes are imported the first time a dtype is asked for: parsing, printing and checking
work on names, and `hlo fmt`/`hlo check` start faster without them.
"""
from __future__ import annotations

from functools import cached_property
from typing import Any, Optional

from .records import record

_DTYPES: dict[str, Any] = {}  # type name -> np.dtype, filled on first use


def _load_dtypes() -> dict[str, Any]:
    import ml_dtypes
    import numpy as np
    for t in _ALL:
        if t.dtype_name is not None:
            mod, attr = t.dtype_name.split(".")
            _DTYPES[t.name] = np.dtype(getattr(np if mod == "np" else ml_dtypes, attr))
    return _DTYPES


@record(frozen=True)
class PrimitiveType:
    name: str
    bits: int
    kind: str  # "pred", "sint", "uint", "float", "complex", "token", "opaque"
    dtype_name: Optional[str]  # "np.float32", "ml_dtypes.bfloat16"; None for token/opaque

    @cached_property  # after the first use, a plain attribute read
    def dtype(self):
        """The NumPy dtype (None for token and opaque); imports NumPy on first use."""
        if self.dtype_name is None:
            return None
        return (_DTYPES or _load_dtypes())[self.name]

    @property
    def is_integral(self) -> bool:
        return self.kind in ("sint", "uint")

    @property
    def is_float(self) -> bool:
        return self.kind == "float"

    @property
    def is_complex(self) -> bool:
        return self.kind == "complex"

    @property
    def is_array_type(self) -> bool:
        """Types that can be the element type of an array (not token/opaque)."""
        return self.dtype_name is not None

    def __repr__(self) -> str:
        return self.name


def _t(name: str, bits: int, kind: str, dtype: Optional[str]) -> PrimitiveType:
    return PrimitiveType(name, bits, kind, dtype)


_ALL = [
    _t("pred", 8, "pred", "np.bool_"),
    _t("s1", 1, "sint", "ml_dtypes.int1"),
    _t("s2", 2, "sint", "ml_dtypes.int2"),
    _t("s4", 4, "sint", "ml_dtypes.int4"),
    _t("s8", 8, "sint", "np.int8"),
    _t("s16", 16, "sint", "np.int16"),
    _t("s32", 32, "sint", "np.int32"),
    _t("s64", 64, "sint", "np.int64"),
    _t("u1", 1, "uint", "ml_dtypes.uint1"),
    _t("u2", 2, "uint", "ml_dtypes.uint2"),
    _t("u4", 4, "uint", "ml_dtypes.uint4"),
    _t("u8", 8, "uint", "np.uint8"),
    _t("u16", 16, "uint", "np.uint16"),
    _t("u32", 32, "uint", "np.uint32"),
    _t("u64", 64, "uint", "np.uint64"),
    _t("f16", 16, "float", "np.float16"),
    _t("f32", 32, "float", "np.float32"),
    _t("f64", 64, "float", "np.float64"),
    _t("bf16", 16, "float", "ml_dtypes.bfloat16"),
    _t("f8e5m2", 8, "float", "ml_dtypes.float8_e5m2"),
    _t("f8e4m3", 8, "float", "ml_dtypes.float8_e4m3"),
    _t("f8e4m3fn", 8, "float", "ml_dtypes.float8_e4m3fn"),
    _t("f8e4m3b11fnuz", 8, "float", "ml_dtypes.float8_e4m3b11fnuz"),
    _t("f8e3m4", 8, "float", "ml_dtypes.float8_e3m4"),
    _t("f8e5m2fnuz", 8, "float", "ml_dtypes.float8_e5m2fnuz"),
    _t("f8e4m3fnuz", 8, "float", "ml_dtypes.float8_e4m3fnuz"),
    _t("f4e2m1fn", 4, "float", "ml_dtypes.float4_e2m1fn"),
    _t("f8e8m0fnu", 8, "float", "ml_dtypes.float8_e8m0fnu"),
    _t("c64", 64, "complex", "np.complex64"),
    _t("c128", 128, "complex", "np.complex128"),
    _t("token", 0, "token", None),
    _t("opaque", 0, "opaque", None),
]

PRIMITIVE_TYPES: dict[str, PrimitiveType] = {t.name: t for t in _ALL}

PRED = PRIMITIVE_TYPES["pred"]
S32 = PRIMITIVE_TYPES["s32"]
F32 = PRIMITIVE_TYPES["f32"]
TOKEN = PRIMITIVE_TYPES["token"]

_BY_DTYPE: dict = {}


def primitive_type(name: str) -> PrimitiveType:
    return PRIMITIVE_TYPES[name]


def from_dtype(dtype) -> PrimitiveType:
    """The primitive type of a NumPy dtype (KeyError if HLO has no such type)."""
    import numpy as np
    if not _BY_DTYPE:
        _BY_DTYPE.update({t.dtype: t for t in _ALL if t.dtype is not None})
    return _BY_DTYPE[np.dtype(dtype)]


def dtype_kind(dtype) -> str:
    """'pred', 'sint', 'uint', 'float', 'complex' (or 'other') for a NumPy/ml_dtypes dtype."""
    import numpy as np
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return "pred"
    try:
        return from_dtype(dtype).kind
    except KeyError:
        return {"i": "sint", "u": "uint", "f": "float", "c": "complex"}.get(dtype.kind, "other")
