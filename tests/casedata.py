"""The one loader and the one comparator of the XLA:CPU-computed cases (tests/golden/<family>/<case>/,
written by tools/oracle; the format is described in tests/golden/README.md).

    "exact"                  bit-for-bit (a NaN matches any NaN; -0 and +0 differ)
    "bits"                   byte-for-byte, NaN payloads and signs included
    {"rtol": r, "atol": a}   |got - want| <= a + r*|want| (floats/complex; NaN matches NaN, infinities
                             must be equal)
    {"ulp": n}               at most n units in the last place of the element type (same NaN/inf rule)
    {"scaled": s}            |got - want| <= s * max|want| (the largest finite expected magnitude; FFTs)

Integer and pred leaves are always compared exactly, whatever the rule.  An output's own "compare" in
case.json (with its "compare_reason") overrides the case's rule for that leaf; "compare_variants"
({variant: rule}, with "compare_variants_reason") overrides it for one text of the case.

An output's "defined" (with "defined_reason") is the number of its leading elements, in row-major
order, that XLA defines (an entry result of a dynamic shape: its bound-sized buffer starts with the
elements of the dynamic sizes, the rest is uninitialized memory): only those are compared, after the
shapes.

A case's "xla_artifact" ({variant: reason}) marks a text whose XLA result is an artefact of XLA's
compiler, not the semantics of that text; "known" ({variant: reason}) a named difference of ours.  Both
make that variant a strict xfail showing the reason (if it ever passes, the mark is stale).
"""
from __future__ import annotations

import json
from functools import cached_property
from pathlib import Path
from typing import Any, Iterable, Optional

import numpy as np

GOLDEN = Path(__file__).resolve().parent / "golden"

_NATIVE = {"bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float16",
           "float32", "float64", "complex64", "complex128"}
_UINT = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


def dtype_of(name: str) -> np.dtype:
    if name in _NATIVE:
        return np.dtype(name)
    import ml_dtypes
    return np.dtype(getattr(ml_dtypes, name))


def load_arrays(npz_path: Path, metas: list) -> list[np.ndarray]:
    """The arrays of an inputs/expected file, with their real dtypes (raw bits viewed back)."""
    out = []
    with np.load(npz_path) as z:
        for m in metas:
            a = z[m["key"]]
            if "stored_as" in m:
                a = a.view(dtype_of(m["dtype"]))
            out.append(a.reshape(m["shape"]))
    return out


# ------------------------------------------------------------------------------------------------
# the cases

class Case:
    """One case directory."""

    def __init__(self, path: Path):
        self.dir = Path(path)
        self.info = json.loads((self.dir / "case.json").read_text())
        self.family = self.info["family"]
        self.id = self.dir.relative_to(GOLDEN).as_posix() if self.dir.is_relative_to(GOLDEN) else self.dir.name
        self.short = self.dir.name

    def __repr__(self) -> str:
        return f"Case({self.id})"

    @property
    def variants(self) -> list[str]:
        return self.info.get("variants", ["before", "after"])

    def text(self, variant: str = "before") -> str:
        return (self.dir / f"{variant}.hlo").read_text()

    @cached_property
    def inputs(self) -> list[np.ndarray]:
        return load_arrays(self.dir / "inputs.npz", self.info["inputs"])

    @cached_property
    def expected(self) -> list[np.ndarray]:
        return load_arrays(self.dir / "expected.npz", self.info["outputs"])

    def rule(self, k: int, variant: str) -> Any:
        """The comparison rule of output k in one variant."""
        m = self.info["outputs"][k]
        if "compare" in m:
            return m["compare"]
        return self.info.get("compare_variants", {}).get(variant, self.info["compare"])

    def xfail_reason(self, variant: str) -> Optional[str]:
        art = self.info.get("xla_artifact", {}).get(variant)
        if art:
            return f"XLA artefact: {art}"
        return self.info.get("known", {}).get(variant)

    def check(self, got: list, variant: str) -> None:
        """Assert `got` (the run's result leaves) matches XLA's outputs by the case's rules."""
        want = self.expected
        assert len(got) == len(want), f"{len(got)} result leaves, expected {len(want)}"
        errors = []
        for k, (g, w, m) in enumerate(zip(got, want, self.info["outputs"])):
            if self.info.get("same_bits_types") and isinstance(g, np.ndarray) and g.dtype != w.dtype \
                    and g.dtype.itemsize == w.dtype.itemsize:
                g = g.view(w.dtype)
            n = m.get("defined")
            if n is not None and isinstance(g, np.ndarray) and g.shape == w.shape:
                g, w = g.reshape(-1)[:n], w.reshape(-1)[:n]  # the rest is XLA's uninitialized memory
            msg = compare_leaf(g, w, self.rule(k, variant))
            if msg:
                label = f" ({m['label']})" if "label" in m else ""
                errors.append(f"out{k}{label} {m.get('hlo_type', m['dtype'])}{m['shape']}: {msg}")
        assert not errors, "\n".join(errors)

    def run_and_check(self, variant: str) -> None:
        import hlo_interp
        path = self.dir / f"{variant}.hlo"
        module = hlo_interp.parse(path.read_text(), str(path))
        self.check(hlo_interp.run(module, *self.inputs), variant)


def cases(families: Optional[Iterable[str]] = None) -> list[Case]:
    """Every committed case (of the given families), sorted by id."""
    fams = None if families is None else set([families] if isinstance(families, str) else families)
    out = []
    for p in sorted(GOLDEN.glob("*/*/case.json")):
        if fams is None or p.parent.parent.name in fams:
            out.append(Case(p.parent))
    return out


def params(case_list: Iterable[Case], variants: Optional[Iterable[str]] = None) -> list:
    """pytest params (case, variant) with ids `family/case-variant`; xla_artifact/known variants are
    strict xfails with their reason."""
    import pytest
    out = []
    for c in case_list:
        for v in (c.variants if variants is None else [v for v in variants if v in c.variants]):
            reason = c.xfail_reason(v)
            marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
            out.append(pytest.param(c, v, id=f"{c.id}-{v}", marks=marks))
    return out


# ------------------------------------------------------------------------------------------------
# comparison

def _kind(dt: np.dtype) -> str:
    """'b' pred, 'i' integer, 'f' float (incl. ml_dtypes floats), 'c' complex."""
    if dt.kind == "b":
        return "b"
    if dt.kind in "iu":
        return "i"
    if dt.kind == "c":
        return "c"
    if dt.kind == "f":
        return "f"
    return "i" if "int" in dt.name else "f"


def _ordered(a: np.ndarray) -> np.ndarray:
    """Float bit patterns mapped to integers that are ordered like the values (+0 and -0 both 0)."""
    nbits = a.dtype.itemsize * 8
    u = a.view(_UINT[a.dtype.itemsize]).astype(np.uint64)
    if "e8m0" in a.dtype.name:  # no sign bit
        return u.astype(np.int64)
    if "float4" in a.dtype.name:
        nbits = 4
        u = u & np.uint64(0xF)
    sign = np.uint64(1) << np.uint64(nbits - 1)
    mag = (u & ~sign).astype(np.int64)
    return np.where((u & sign) != 0, -mag, mag)


def _scale(w: np.ndarray) -> float:
    a = np.abs(w[np.isfinite(w)]) if w.size else np.zeros(0)
    return max(float(a.max()) if a.size else 0.0, 1e-30)


def _float_mismatch(got: np.ndarray, want: np.ndarray, rule: Any) -> np.ndarray:
    """Boolean mask of mismatching elements of two real float arrays of the same dtype."""
    with np.errstate(all="ignore"):
        g64 = got.astype(np.float64)
        w64 = want.astype(np.float64)
    gn, wn = np.isnan(g64), np.isnan(w64)
    bad = gn != wn
    both = ~gn & ~wn
    if rule == "exact":
        ub = _UINT[got.dtype.itemsize]
        return bad | (both & (got.view(ub) != want.view(ub)))
    gi, wi = np.isinf(g64), np.isinf(w64)
    bad |= both & ((gi | wi) & (g64 != w64))
    fin = both & ~gi & ~wi
    ok = np.zeros(got.shape, bool)
    if "ulp" in rule:
        ok |= np.abs(_ordered(got) - _ordered(want)) <= int(rule["ulp"])
    if "rtol" in rule or "atol" in rule:
        with np.errstate(all="ignore"):
            ok |= np.abs(g64 - w64) <= float(rule.get("atol", 0.0)) + float(rule.get("rtol", 0.0)) * np.abs(w64)
    if "scaled" in rule:
        with np.errstate(all="ignore"):
            ok |= np.abs(g64 - w64) <= float(rule["scaled"]) * _scale(w64)
    return bad | (fin & ~ok)


def _complex_mismatch(got: np.ndarray, want: np.ndarray, rule: dict) -> np.ndarray:
    g, w = got.astype(np.complex128), want.astype(np.complex128)
    gn, wn = np.isnan(g.real) | np.isnan(g.imag), np.isnan(w.real) | np.isnan(w.imag)
    gi, wi = np.isinf(g.real) | np.isinf(g.imag), np.isinf(w.real) | np.isinf(w.imag)
    bad = (gn != wn) | (~gn & ~wn & (gi | wi) & (g != w))
    fin = ~gn & ~wn & ~gi & ~wi
    with np.errstate(all="ignore"):
        if "scaled" in rule:
            ok = np.abs(g - w) <= float(rule["scaled"]) * _scale(np.abs(w))
        else:
            ok = np.abs(g - w) <= float(rule.get("atol", 0.0)) + float(rule["rtol"]) * np.abs(w)
    return bad | (fin & ~ok)


def compare_leaf(got: Any, want: np.ndarray, rule: Any) -> Optional[str]:
    """None when `got` matches `want` under `rule`, else a short description of the mismatch."""
    if not isinstance(got, np.ndarray) and not isinstance(got, np.generic):
        return f"expected an array, got {type(got).__name__}"
    got = np.asarray(got)
    if got.dtype != want.dtype:
        return f"dtype {got.dtype.name}, expected {want.dtype.name}"
    if got.shape != want.shape:
        return f"shape {got.shape}, expected {want.shape}"
    k = _kind(want.dtype)
    if rule == "bits":
        if got.tobytes() == want.tobytes():
            return None
        ub = _UINT.get(want.dtype.itemsize, np.uint8)
        bad = got.view(ub) != want.view(ub) if want.dtype.kind != "c" else \
            (got.real.view(_UINT[want.dtype.itemsize // 2]) != want.real.view(_UINT[want.dtype.itemsize // 2])) | \
            (got.imag.view(_UINT[want.dtype.itemsize // 2]) != want.imag.view(_UINT[want.dtype.itemsize // 2]))
    elif k in "bi":
        bad = got.astype(np.int64) != want.astype(np.int64) if want.dtype != np.uint64 else got != want
    elif k == "f":
        bad = _float_mismatch(got, want, rule)
    elif rule == "exact" or ("rtol" not in rule and "scaled" not in rule):
        bad = _float_mismatch(got.real, want.real, rule) | _float_mismatch(got.imag, want.imag, rule)
    else:  # complex with a relative tolerance: the error is relative to |want|, not per component
        bad = _complex_mismatch(got, want, rule)
    bad = np.asarray(bad)
    if not bad.any():
        return None
    idx = np.argwhere(bad) if bad.ndim else np.zeros((1, 0), int)
    shown = []
    for ix in idx[:6]:
        t = tuple(int(i) for i in ix)
        g, w = got[t], want[t]
        if k == "f":
            ub = _UINT[want.dtype.itemsize]
            shown.append(f"{list(t)}: got {g!r} (0x{int(np.asarray(g).view(ub)):x}), "
                         f"want {w!r} (0x{int(np.asarray(w).view(ub)):x})")
        else:
            shown.append(f"{list(t)}: got {g!r}, want {w!r}")
    return f"{int(bad.sum())} of {bad.size} elements differ ({rule}): " + "; ".join(shown)


def valid_rule(rule: Any) -> bool:
    return rule in ("exact", "bits") or (isinstance(rule, dict) and bool(rule)
                                         and set(rule) <= {"rtol", "atol", "ulp", "scaled"})


def small_values(dtype, shape, seed):
    """Seeded small integers in [-3, 3] as `dtype` (pred: > 0; unsigned: |r|; complex: r + i*reversed r),
    exact in every element type: inputs for hand-derived expected values."""
    r = np.random.default_rng(seed).integers(-3, 4, shape)
    if np.dtype(dtype) == np.bool_:
        return (r > 0)
    if np.dtype(dtype).kind == "u":
        r = np.abs(r)
    if np.dtype(dtype).kind == "c":
        return (r + 1j * r[::-1]).astype(dtype)
    return r.astype(dtype)
