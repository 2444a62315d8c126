"""topk with a comparator (to_apply): XLA:CPU runs the same computation as TopK's decomposition (stable
sort of (x, iota) by the comparator, then the first k): tests/golden/topk/ (each case's `ref` is the
decomposed module XLA ran; tools/make_topk_comparator_vectors.py), run by tests/test_golden.py; jaxlib
0.10.2 does not parse the topk form itself."""
from __future__ import annotations


import numpy as np
import pytest

import hlo_interp
from hlo_interp import HloError

from casedata import cases



# --------------------------------------------------------------------------------------------------
# topk with a comparator

TOPK = cases("topk")  # run by tests/test_golden.py


@pytest.mark.parametrize("case", [pytest.param(c, id=c.short) for c in TOPK])
def test_topk_decomposition_xla_ran(case):
    """The decomposed module XLA:CPU ran (case.json's `ref`) gives XLA's values through hlo_interp too."""
    case.check(hlo_interp.run(case.info["ref"], *case.inputs), "before")


def test_topk_general_comparator_long_rows_use_the_tournament(monkeypatch):
    # rows of 333 with k=7 by a comparator the recognizer does not know: the tournament, not a full sort
    import hlo_interp.ops.sort as sort_mod
    calls = []
    real = sort_mod.tournament_topk_order
    monkeypatch.setattr(sort_mod, "tournament_topk_order", lambda *a: calls.append(1) or real(*a))
    monkeypatch.setattr(sort_mod, "merge_sort_order", None)   # a full sort would fail
    big = [c for c in TOPK if c.info["comparator"] == "diff" and c.info["k"] == 7]
    assert len(big) >= 3
    for case in big:
        case.check(hlo_interp.run(case.text(), *case.inputs), "before")
    assert len(calls) == len(big)


def test_topk_comparator_types_covered():
    assert {c.info["element_type"] for c in TOPK} >= {"pred", "s4", "u4", "s8", "s16", "s32", "s64", "u8", "u16", "u32", "u64",
                                        "f8e4m3fn", "f8e5m2", "bf16", "f16", "f32", "f64"}
    assert {c.info["comparator"] for c in TOPK} >= {"GT", "LT", "GT_TOTALORDER", "abs", "diff", "index_tiebreak"}


def test_topk_comparator_spec_example():
    # in the style of the operation-semantics worked examples: k=3 of [1, 5, 3, 5, 2, 0] by `a > b`: 5 (index 1), 5 (3), 3 (2)
    text = """HloModule m
cmp {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT c = pred[] compare(a, b), direction=GT
}
ENTRY e {
  x = s32[6] parameter(0)
  ROOT t = (s32[3], s32[3]) topk(x), k=3, largest=true, to_apply=cmp
}"""
    v, i = hlo_interp.run(text, np.array([1, 5, 3, 5, 2, 0], np.int32))
    np.testing.assert_array_equal(v, [5, 5, 3])
    np.testing.assert_array_equal(i, [1, 3, 2])
    with pytest.raises(HloError, match="largest=false and a comparator"):
        hlo_interp.run(text.replace("largest=true", "largest=false"), np.zeros(6, np.int32))
