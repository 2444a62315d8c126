"""Issue 13's op x dtype sweep: every opcode of tools/make_sweep_vectors.py over every element type
XLA:CPU accepts for it, on edge values (signed zeros, infinities, NaN payloads, subnormals, extremes,
integer minima/maxima, cancellation-prone complex values), against XLA:CPU's results
(tests/data/sweep/).  A failure either is fixed or is named below with its reason (xfail, strict: it
becomes an error when it starts to pass)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from xla_cases import CaseData

_DATA = CaseData("sweep")
CASES = _DATA.cases
load = _DATA.load

# case id -> why we differ from XLA:CPU there (each measured on the sweep; see the summary in
# tests/golden/README.md)
_ORDER = ("XLA's HLO emitter has no ordering of complex numbers (EmitComplexBinaryOp: only EQ/NE); what "
          "XLA:CPU returns through StableHLO is not one consistent order (LT/GT nearly lexicographic, "
          "LE/GE nearly real parts only, NaN/inf cases neither): refused here")
_NAN_SORT = ("a LT comparator with NaNs is not a strict weak order: where NaNs and -0/+0 end up is an "
             "artifact of XLA:CPU's sort algorithm; we place NaNs as the total order does")
_CPLX_EDGE = ("inf/NaN/subnormal parts of a complex {op}: XLA's formula (ElementalIrEmitter) differs from "
              "NumPy's C99 handling on {n} of the 217 edge values; finite values agree within tolerance")
_SUBNORMAL_IN = ("XLA:CPU's {op} reads a subnormal input unflushed (its own implementation works on the bits) "
                 "while every other op sees it as zero (DAZ); we flush it like the rest")
KNOWN: dict[str, str] = {
    **{f"compare_{d}_{t}": _ORDER for d in ("LT", "LE", "GT", "GE") for t in ("c64", "c128")},
    **{f"{op}_{t}": _ORDER for op in ("maximum", "minimum") for t in ("c64", "c128")},
    **{f"atan2_{t}": "complex atan2 (XLA: -i log((x+iy)/sqrt(x^2+y^2)) through its complex sqrt/log/divide) "
                     "is not implemented: refused here" for t in ("c64", "c128")},
    **{f"sort_{t}": _NAN_SORT for t in ("bf16", "f16", "f32", "f64")},
    **{f"{op}_{t}": _CPLX_EDGE.format(op=op, n="some")
       for op in ("sqrt", "rsqrt", "exponential", "exponential-minus-one", "log", "log-plus-one", "logistic")
       for t in ("c64", "c128")},
    "cbrt_f32": "XLA:CPU's f32 cbrt returns -5.6e-16 for subnormal inputs (and 0); NumPy's gives +-0",
    "cbrt_bf16": "XLA:CPU's cbrt (in f32) returns -5.6e-16 for subnormal inputs; NumPy's gives +-0",
    "power_f32": _SUBNORMAL_IN.format(op="power"),
    "power_f64": _SUBNORMAL_IN.format(op="power") + "; and 3 results 1 ulp off (libm pow vs NumPy's)",
    "power_bf16": _SUBNORMAL_IN.format(op="power") + "; and pow(1, NaN) is NaN in XLA's bf16 power",
    "power_c64": "x^100 of a c64 value: XLA's f32 steps and ours (f64-rounded parts) differ by 1.7e-6 relative",
    "power_c128": "x^y of c128 edge values (inf/NaN/huge parts): XLA's cutoffs and libm differ from ours",
    "dot_edges_f64": ("OpenBLAS's dgemm fuses multiply-adds: inf + max*(-3.5) stays inf (the exact product is "
                      "finite), where XLA:CPU's dot rounds the product to -inf first and gives NaN"),
}


def _param(c):
    marks = [pytest.mark.xfail(strict=True, reason=KNOWN[c["id"]])] if c["id"] in KNOWN else []
    return pytest.param(c, id=c["id"], marks=marks)


@pytest.mark.parametrize("case", [_param(c) for c in CASES])
def test_sweep_case(case):
    _DATA.run_and_check(case)


def test_sweep_covers_ops_and_types():
    ops = {c["op"] for c in CASES}
    types = {c["dtype"] for c in CASES}
    assert {"pred", "s8", "s16", "s32", "s64", "u8", "u16", "u32", "u64", "bf16", "f16", "f32", "f64", "c64",
            "c128"} <= types
    assert {"add", "multiply", "divide", "power", "compare", "convert", "bitcast-convert", "select", "clamp",
            "reduce", "dot", "sort", "sine", "erf", "shift-right-logical", "popcnt"} <= ops
    assert len(CASES) >= 800
    refused = json.loads((Path(__file__).parent / "data" / "sweep" / "refused.json").read_text())
    assert all(k not in {c["id"] for c in CASES} for k in refused)
    assert set(KNOWN) <= {c["id"] for c in CASES}
