"""Golden cases computed by XLA:CPU (tests/golden/, written by tools/make_golden.py; see its README).

Each case is run twice, from the pre-optimization text (`before.hlo`) and from XLA:CPU's optimized
text (`after.hlo`), and every result leaf is compared with XLA's by the case's rule:

    "exact"                  bit-for-bit (a NaN matches any NaN; -0 and +0 differ)
    {"rtol": r, "atol": a}   |got - want| <= a + r*|want| (floats/complex parts; NaN matches NaN,
                             infinities must be equal)
    {"ulp": n}               at most n units in the last place of the element type (same NaN/inf rule)

Integer and pred leaves are always compared exactly, whatever the case's rule.  An output's own
"compare" in case.json (with its "compare_reason", e.g. a transcendental among exact ops) overrides the
case's rule for that leaf.

A case's "xla_artifact" ({"before"|"after": reason}) marks a variant whose XLA result is an artefact
of XLA's compiler (LLVM folding float operations as IEEE arithmetic while XLA:CPU flushes denormals),
not the semantics of that text: the evaluator follows the text, and the variant is a strict xfail that
shows the reason (it must fail: if it ever passes, the mark is stale).
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Optional

import numpy as np

try:  # the tools/make_golden.py import path does not need pytest
    import pytest
except ImportError:  # pragma: no cover
    pytest = None

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
    return bad | (fin & ~ok)


def _complex_mismatch(got: np.ndarray, want: np.ndarray, rule: dict) -> np.ndarray:
    g, w = got.astype(np.complex128), want.astype(np.complex128)
    gn, wn = np.isnan(g.real) | np.isnan(g.imag), np.isnan(w.real) | np.isnan(w.imag)
    gi, wi = np.isinf(g.real) | np.isinf(g.imag), np.isinf(w.real) | np.isinf(w.imag)
    bad = (gn != wn) | (~gn & ~wn & (gi | wi) & (g != w))
    fin = ~gn & ~wn & ~gi & ~wi
    with np.errstate(all="ignore"):
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
    if k in "bi":
        bad = got.astype(np.int64) != want.astype(np.int64) if want.dtype != np.uint64 else got != want
    elif k == "f":
        bad = _float_mismatch(got, want, rule)
    elif rule == "exact" or "rtol" not in rule:
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


# ------------------------------------------------------------------------------------------------
# the cases

def golden_cases() -> list[Path]:
    return sorted(p.parent for p in GOLDEN.rglob("case.json"))


def _case_id(d: Path) -> str:
    return d.relative_to(GOLDEN).as_posix()


def _valid_rule(rule: Any) -> bool:
    return rule == "exact" or (isinstance(rule, dict) and bool(rule) and set(rule) <= {"rtol", "atol", "ulp"})


def _artifact(d: Path, variant: str) -> Optional[str]:
    """The documented reason why XLA's result for this variant is a compiler artefact, if any."""
    return json.loads((d / "case.json").read_text()).get("xla_artifact", {}).get(variant)


if pytest is not None:
    _CASES = golden_cases()

    def _param(d: Path, v: str):
        reason = _artifact(d, v)
        marks = [pytest.mark.xfail(strict=True, reason=f"XLA artefact: {reason}")] if reason else []
        return pytest.param(d, v, id=f"{_case_id(d)}-{v}", marks=marks)

    _PARAMS = [_param(d, v) for d in _CASES for v in ("before", "after")]

    def test_golden_data_is_complete():
        """The golden set exists, is large, and every case's files load with their declared dtypes."""
        assert len(_CASES) >= 200, f"only {len(_CASES)} golden cases"
        families = set()
        for d in _CASES:
            info = json.loads((d / "case.json").read_text())
            families.add(info["family"])
            assert (d / "before.hlo").stat().st_size > 0 and (d / "after.hlo").stat().st_size > 0
            ins = load_arrays(d / "inputs.npz", info["inputs"])
            outs = load_arrays(d / "expected.npz", info["outputs"])
            for a, m in zip(ins + outs, info["inputs"] + info["outputs"]):
                assert a.dtype == dtype_of(m["dtype"]), (d, m)
            assert outs, d
            assert _valid_rule(info["compare"]), d
            for m in info["outputs"]:
                if "compare" in m:
                    assert _valid_rule(m["compare"]) and m.get("compare_reason"), (d, m)
            for variant, reason in info.get("xla_artifact", {}).items():
                assert variant in ("before", "after") and isinstance(reason, str) and len(reason) > 40, d
        assert {"elementwise", "convert", "movement", "reduce", "dot", "control", "examples", "models"} <= families

    def test_compare_leaf_rules():
        """The comparison itself: NaN matches NaN, -0 is not +0, tolerances bite."""
        import ml_dtypes
        f = np.array([np.nan, -0.0, 1.0], np.float32)
        assert compare_leaf(f, np.array([np.nan, -0.0, 1.0], np.float32), "exact") is None
        neg_nan = np.array([np.nan], np.float32).view(np.uint32) | np.uint32(0x80000001)
        assert compare_leaf(neg_nan.view(np.float32), np.array([np.nan], np.float32), "exact") is None
        assert compare_leaf(np.array([0.0], np.float32), np.array([-0.0], np.float32), "exact") is not None
        assert compare_leaf(np.array([np.nan], np.float32), np.array([1.0], np.float32), {"rtol": 1.0}) is not None
        assert compare_leaf(np.array([np.inf], np.float32), np.array([3e38], np.float32), {"rtol": 1.0}) is not None
        assert compare_leaf(np.array([1.0 + 1e-6], np.float32), np.array([1.0], np.float32),
                            {"rtol": 1e-5}) is None
        assert compare_leaf(np.array([1.001], np.float32), np.array([1.0], np.float32), {"rtol": 1e-5}) is not None
        bf = ml_dtypes.bfloat16
        one = np.array([1.0], bf)
        up1 = np.array([1.0078125], bf)  # one bf16 ulp above 1
        up2 = np.array([1.015625], bf)
        assert compare_leaf(up1, one, {"ulp": 1}) is None
        assert compare_leaf(up2, one, {"ulp": 1}) is not None
        assert compare_leaf(np.array([-0.0], bf), np.array([0.0], bf), {"ulp": 0}) is None
        assert compare_leaf(np.array([-1e-40], np.float32), np.array([1e-40], np.float32), {"ulp": 1}) is not None
        assert compare_leaf(np.array([1, 2], np.int32), np.array([1, 3], np.int32), {"rtol": 1.0}) is not None
        assert compare_leaf(np.array([1, 2], np.int64), np.array([1, 2], np.int32), "exact") is not None
        assert compare_leaf(np.array([1, 2], np.int32), np.array([[1, 2]], np.int32), "exact") is not None
        c = np.array([1 + 2j, np.nan + 0j], np.complex64)
        assert compare_leaf(c, c.copy(), "exact") is None
        assert compare_leaf(np.array([1 - 2j], np.complex64), np.array([1 + 2j], np.complex64), "exact") is not None
        # complex tolerances are relative to the magnitude: a 1e-8 real part next to an imaginary 1 is noise
        assert compare_leaf(np.array([-0.0 + 1j], np.complex64), np.array([4e-8 + 1j], np.complex64),
                            {"rtol": 1e-5}) is None
        assert compare_leaf(np.array([1e-3 + 1j], np.complex64), np.array([0 + 1j], np.complex64),
                            {"rtol": 1e-5}) is not None
        assert compare_leaf(np.array([np.inf + 0j], np.complex64), np.array([3e38 + 0j], np.complex64),
                            {"rtol": 1.0}) is not None
        i4 = ml_dtypes.int4
        assert compare_leaf(np.array([-8, 7], i4), np.array([-8, 7], i4), "exact") is None
        assert compare_leaf(np.array([-8, 7], i4), np.array([-8, 6], i4), "exact") is not None

    @pytest.mark.parametrize("case_dir,variant", _PARAMS)
    def test_golden(case_dir: Path, variant: str):
        import hlo_interp
        info = json.loads((case_dir / "case.json").read_text())
        inputs = load_arrays(case_dir / "inputs.npz", info["inputs"])
        expected = load_arrays(case_dir / "expected.npz", info["outputs"])
        text = (case_dir / f"{variant}.hlo").read_text()
        module = hlo_interp.parse(text, str(case_dir / f"{variant}.hlo"))
        got = hlo_interp.run(module, *inputs)
        assert len(got) == len(expected), f"{len(got)} result leaves, expected {len(expected)}"
        errors = []
        for k, (g, w, m) in enumerate(zip(got, expected, info["outputs"])):
            msg = compare_leaf(g, w, m.get("compare", info["compare"]))
            if msg:
                label = f" ({m['label']})" if "label" in m else ""
                errors.append(f"out{k}{label} {m['hlo_type']}{m['shape']}: {msg}")
        assert not errors, "\n".join(errors)
