"""Issue 13's regression cases ("Running what XLA runs, with XLA's numbers"): XLA:CPU-computed
(tests/data/issue13/, written by tools/make_issue13_vectors.py), plus the checks no data file holds."""
from __future__ import annotations

import numpy as np
import pytest

import hlo_interp
from xla_cases import CaseData, check

_DATA = CaseData("issue13")
CASES = _DATA.cases
load = _DATA.load


@pytest.mark.parametrize("case", [pytest.param(c, id=f"item{c['item']}-{c['id']}") for c in CASES])
def test_xla_case(case):
    args = [load(f"{case['id']}/arg{k}", m) for k, m in enumerate(case["inputs"])]
    outs = hlo_interp.run(case["text"], *args)
    wants = [load(f"{case['id']}/out{k}", m) for k, m in enumerate(case["outputs"])]
    assert len(outs) == len(wants)
    for k, (g, w) in enumerate(zip(outs, wants)):
        check(np.asarray(g), w, case["compare"], f"{case['id']} out{k}")


def test_cases_cover_the_items():
    assert {8, 13, 19, 20, 22} <= {c["item"] for c in CASES}


# --------------------------------------------------------------------------------------------------
# What XLA:CPU cannot give a reproducible value for

def test_allocate_buffer_is_zeros():
    # XLA leaves the buffer uninitialized (XLA:CPU refuses AllocateBuffer at the entry): zeros here
    text = """HloModule m
ENTRY e { p = f32[2,3] parameter(0)  b = f32[2,3] custom-call(), custom_call_target="AllocateBuffer"
  ROOT r = f32[2,3] add(b, p) }"""
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    np.testing.assert_array_equal(hlo_interp.run(text, x)[0], x)


def test_get_rng_seed_is_u64_and_advances():
    # XLA:CPU returns another u64 on every execution; ours comes from the module's rng counter
    m = hlo_interp.parse("""HloModule m
ENTRY e { ROOT r = u64[] custom-call(), custom_call_target="GetRngSeed" }""")
    a = hlo_interp.run(m)[0]
    b = hlo_interp.run(m)[0]
    assert a.dtype == np.uint64 and a.shape == () and a != b
