"""The op x dtype sweep: every opcode of tools/make_sweep_vectors.py over every element type XLA:CPU
accepts for it, on edge values (signed zeros, infinities, NaN payloads, subnormals, extremes, integer
minima/maxima, cancellation-prone complex values), against XLA:CPU's results (tests/golden/sweep/, run by
tests/test_golden.py).  A failure either is fixed or is named in the generator's KNOWN table with its
reason, written into the case's case.json as `known` (xfail, strict: it becomes an error when it starts
to pass)."""
from __future__ import annotations

import json

from casedata import GOLDEN, cases

CASES = cases("sweep")


def test_sweep_covers_ops_and_types():
    ops = {c.info["op"] for c in CASES}
    types = {c.info["dtype"] for c in CASES}
    assert {"pred", "s8", "s16", "s32", "s64", "u8", "u16", "u32", "u64", "bf16", "f16", "f32", "f64", "c64",
            "c128"} <= types
    assert {"add", "multiply", "divide", "power", "compare", "convert", "bitcast-convert", "select", "clamp",
            "reduce", "dot", "sort", "sine", "erf", "shift-right-logical", "popcnt"} <= ops
    assert len(CASES) >= 800
    refused = json.loads((GOLDEN / "sweep" / "refused.json").read_text())
    assert all(k not in {c.short for c in CASES} for k in refused)
    assert sum("known" in c.info for c in CASES) == 40
