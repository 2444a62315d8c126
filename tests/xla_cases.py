"""Shared by the per-family test files that replay XLA:CPU-computed cases stored as
tests/data/<family>/cases.json + arrays.npz (written by the tools/make_*_vectors.py scripts)."""
from __future__ import annotations

import json
from pathlib import Path

import ml_dtypes
import numpy as np


class CaseData:
    """cases.json and the arrays of one family; arrays stored as raw bits (`stored_as`) are viewed
    back as their ml_dtypes type."""

    def __init__(self, family: str):
        self.dir = Path(__file__).parent / "data" / family
        self.cases = json.loads((self.dir / "cases.json").read_text())
        self._arrays = None

    def arrays(self) -> dict:
        if self._arrays is None:
            with np.load(self.dir / "arrays.npz") as z:
                self._arrays = {k: z[k] for k in z.files}
        return self._arrays

    def load(self, key: str, meta: dict) -> np.ndarray:
        a = self.arrays()[key]
        if "stored_as" in meta:
            a = a.view(getattr(ml_dtypes, meta["dtype"]))
        return a.reshape(meta["shape"])

    def run_and_check(self, case: dict) -> None:
        """Run one case's text on its stored arguments and compare every output with XLA:CPU's, by the
        case's own comparison rule."""
        import hlo_interp

        args = [self.load(f"{case['id']}/arg{k}", m) for k, m in enumerate(case["inputs"])]
        outs = hlo_interp.run(case["text"], *args)
        wants = [self.load(f"{case['id']}/out{k}", m) for k, m in enumerate(case["outputs"])]
        assert len(outs) == len(wants)
        for k, (g, w) in enumerate(zip(outs, wants)):
            check(np.asarray(g), w, case["compare"], f"{case['id']} out{k}")


def bits_equal(got, want) -> bool:
    """Equal bit for bit, except that any NaN matches any NaN; -0 and +0 differ."""
    if want.dtype.kind in "biu":
        return np.array_equal(got, want)
    g, w = np.asarray(got), np.asarray(want)
    if w.dtype.kind == "c":
        return bits_equal(g.real, w.real) and bits_equal(g.imag, w.imag)
    g, w = g.astype(np.float64), w.astype(np.float64)
    nan = np.isnan(w)
    if not np.array_equal(np.isnan(g), nan):
        return False
    return np.array_equal(g[~nan], w[~nan]) and np.array_equal(np.signbit(g[~nan]), np.signbit(w[~nan]))


def check(got, want, compare, what) -> None:
    """Assert `got` matches XLA's `want` by the case's rule: "exact" (bits), or {"rtol", "atol"} with
    NaN positions equal.  Integer and pred results are always exact."""
    assert got.shape == want.shape, (what, got.shape, want.shape)
    assert got.dtype == want.dtype, (what, got.dtype, want.dtype)
    if compare == "exact" or want.dtype.kind in "biu":
        assert bits_equal(got, want), (what, got, want)
        return
    wide = np.complex128 if want.dtype.kind == "c" else np.float64
    g = np.asarray(got).astype(wide)
    w = np.asarray(want).astype(wide)
    assert np.array_equal(np.isnan(g), np.isnan(w)), what
    ok = ~np.isnan(w)
    np.testing.assert_allclose(g[ok], w[ok], rtol=compare["rtol"], atol=compare["atol"], err_msg=what)
