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
