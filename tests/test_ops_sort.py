"""sort and topk (hlo_interp/ops/sort.py).

  * XLA golden cases (tests/golden/sort/, run by tests/test_golden.py; written by tools/make_gather_sort_vectors.py with JAX/XLA:CPU,
    dev-only): jnp.sort / argsort (ascending, descending, stable) / lax.top_k / multi-operand and
    two-key lax.sort / lexsort / median / unique in every element type with NaN, -NaN, ±0, ±inf,
    pre- AND post-optimization HLO (XLA:CPU's integer rewrite of the total-order comparator), plus
    hand-written comparators (GT TOTALORDER, reversed operands, a derived key, a two-level key that
    only the general path can do, u32 GT, topk largest=false); compared bit for bit;
  * the recognized fast path against the general merge sort and against per-comparison calls;
  * XLA's float total order on its own.
"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))


import hlo_interp
from hlo_interp.diagnostics import HloError
from hlo_interp.ops import sort as S

from casedata import cases, params  # noqa: E402

pytestmark = pytest.mark.filterwarnings("error::RuntimeWarning")


CASES = cases("sort")


@pytest.mark.parametrize("case,variant", params([c for c in CASES if c.info.get("check") == "unstable_sort"]))
def test_xla_unstable_sort(case, variant):
    """is_stable=false: XLA leaves the order of equal keys unspecified; we give the stable order.  Only the
    keys' order is checked (the comparator's key here is abs()).  The other XLA:CPU cases of
    tests/golden/sort/ are run by tests/test_golden.py."""
    got = hlo_interp.run(case.text(variant), *case.inputs)
    expected = case.expected
    assert len(got) == len(expected)
    assert np.array_equal(np.abs(got[0]), np.abs(expected[0]))
    assert sorted(got[0].tolist()) == sorted(expected[0].tolist())


def test_total_order():
    x = np.array([np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 1e-45, -1e-45], np.float32)
    order = np.argsort(S.total_order_key(x), kind="stable")
    got = x[order]
    assert np.isnan(got[0]) and np.signbit(got[0])
    assert got[1] == -np.inf and got[2] == -1.0 and got[3] == -1e-45
    assert got[4] == 0 and np.signbit(got[4]) and got[5] == 0 and not np.signbit(got[5])
    assert got[6] == 1e-45 and got[7] == 1 and got[8] == np.inf
    assert np.isnan(got[9]) and not np.signbit(got[9])


SORT_TEXT = """HloModule m
cmp {{ a = s32[] parameter(0)  b = s32[] parameter(1)  c = f32[] parameter(2)  d = f32[] parameter(3)
  {body} }}
ENTRY e {{ x = s32[{r},{n}] parameter(0)  y = f32[{r},{n}] parameter(1)
  ROOT s = (s32[{r},{n}], f32[{r},{n}]) sort(x, y), dimensions={{1}}, is_stable=true, to_apply=cmp }}"""

# key ascending, ties broken by the second operand descending: the lexicographic form (recognized) and
# the same order written with a select (the general merge sort)
TWO_LEVEL = ("lt = pred[] compare(a, b), direction=LT  eq = pred[] compare(a, b), direction=EQ  "
             "gt = pred[] compare(c, d), direction=GT  t = pred[] and(eq, gt)  ROOT r = pred[] or(lt, t)")
TWO_LEVEL_SELECT = ("lt = pred[] compare(a, b), direction=LT  eq = pred[] compare(a, b), direction=EQ  "
                    "gt = pred[] compare(c, d), direction=GT  ROOT r = pred[] select(eq, gt, lt)")


def _comparator_is_recognized(body):
    m = hlo_interp.parse(SORT_TEXT.format(body=body, r=1, n=2))
    from hlo_interp.evaluator import EvalContext, make_options
    from hlo_interp.ops import load_all
    load_all()
    vc = S.VectorComputation(m.computation("cmp"), EvalContext(m, make_options()))
    return S.recognize_comparator(vc, 2)


def test_recognizer_forms():
    assert _comparator_is_recognized(TWO_LEVEL) == [(0, "a", False, None), (1, "c", True, None)]
    assert _comparator_is_recognized(TWO_LEVEL_SELECT) is None
    assert _comparator_is_recognized("ROOT r = pred[] compare(d, c), direction=LT") == [(1, "c", True, None)]
    assert _comparator_is_recognized("ROOT r = pred[] compare(a, b), direction=LE") is None
    assert _comparator_is_recognized("ROOT r = pred[] compare(a, d), direction=LT") is None


@pytest.mark.parametrize("body", [TWO_LEVEL, TWO_LEVEL_SELECT], ids=["lexicographic", "select"])
@pytest.mark.parametrize("n", [1, 2, 7, 64, 301])
def test_two_level_sort(n, body):
    rng = np.random.default_rng(n)
    x = rng.integers(0, 5, (3, n)).astype(np.int32)
    y = rng.integers(0, 4, (3, n)).astype(np.float32)
    got_x, got_y = hlo_interp.run(SORT_TEXT.format(body=body, r=3, n=n), x, y)
    for r in range(3):
        order = np.lexsort((np.arange(n), -y[r], x[r]))
        assert np.array_equal(got_x[r], x[r][order]) and np.array_equal(got_y[r], y[r][order])


def test_general_equals_per_comparison(monkeypatch):
    rng = np.random.default_rng(5)
    x = rng.integers(0, 4, (2, 40)).astype(np.int32)
    y = rng.integers(0, 4, (2, 40)).astype(np.float32)
    text = SORT_TEXT.format(body=TWO_LEVEL_SELECT, r=2, n=40)
    fast = hlo_interp.run(text, x, y)
    monkeypatch.setattr(S, "VectorComputation", None)  # forces per-comparison calls
    slow = hlo_interp.run(text, x, y)
    for f, s in zip(fast, slow):
        assert np.array_equal(f, s)


def test_recognized_equals_general():
    rng = np.random.default_rng(1)
    x = rng.integers(-50, 50, (4, 300)).astype(np.int32)
    y = rng.standard_normal((4, 300)).astype(np.float32)
    text = SORT_TEXT.format(body="ROOT r = pred[] compare(a, b), direction=GT", r=4, n=300)
    fast = hlo_interp.run(text, x, y)
    # the same order written so that it is not recognized
    text2 = SORT_TEXT.format(body="g = pred[] compare(a, b), direction=GT  t = pred[] constant(true)  "
                                  "ROOT r = pred[] and(g, t)", r=4, n=300)
    general = hlo_interp.run(text2, x, y)
    for f, g in zip(fast, general):
        assert np.array_equal(f, g)
    order = np.argsort(-x, axis=1, kind="stable")
    assert np.array_equal(fast[0], np.take_along_axis(x, order, 1))
    assert np.array_equal(fast[1], np.take_along_axis(y, order, 1))


def test_topk_ties_lower_index_first():
    vals, idx = S.topk(np.array([[1, 3, 3, 2, 3]], np.int32), 3, True)
    assert vals.tolist() == [[3, 3, 3]] and idx.tolist() == [[1, 2, 4]]
    vals, idx = S.topk(np.array([2.0, -0.0, 0.0, 2.0], np.float32), 3, False)
    assert idx.tolist() == [1, 2, 0]


def test_wrong_comparator_arity_is_located():
    text = """HloModule m
cmp { a = f32[] parameter(0)  b = f32[] parameter(1)  ROOT r = pred[] compare(a, b), direction=LT }
ENTRY e { x = f32[4] parameter(0)  y = f32[4] parameter(1)
  ROOT s = (f32[4], f32[4]) sort(x, y), dimensions={0}, to_apply=cmp }"""
    with pytest.raises(HloError) as e:
        hlo_interp.run(text, np.zeros(4, np.float32), np.zeros(4, np.float32))
    assert "comparator" in str(e.value) or "parameter" in str(e.value)


@pytest.mark.parametrize("ty,dt,lo,hi", [("s2", "int2", -2, 1), ("u2", "uint2", 0, 3), ("s4", "int4", -8, 7),
                                         ("u4", "uint4", 0, 15)])
def test_sort_narrow_ints(ty, dt, lo, hi):
    # XLA:CPU 0.10.2 returns s2/u2 sorts unsorted (not even a permutation of the input), so these are
    # checked against the definition: a stable ascending sort.
    import ml_dtypes
    rng = np.random.default_rng(3)
    x = rng.integers(lo, hi + 1, 30).astype(getattr(ml_dtypes, dt))
    text = f"""HloModule m
cmp {{ a = {ty}[] parameter(0)  b = {ty}[] parameter(1)  ROOT r = pred[] compare(a, b), direction=GT }}
ENTRY e {{ x = {ty}[30] parameter(0)
  ROOT s = {ty}[30] sort(x), dimensions={{0}}, is_stable=true, to_apply=cmp }}"""
    got = hlo_interp.run(text, x)[0]
    assert got.dtype == x.dtype
    assert got.astype(np.int64).tolist() == sorted(x.astype(np.int64).tolist(), reverse=True)


# XLA:CPU's optimized comparator of jnp.sort on f32 (sort_float32-after): JAX's NaN/-0 canonicalization,
# then the integer total-order compare of `s32[] bitcast(f32[])` values (its key lines are shared with
# the sort benchmarks: tests/data/sort/xla_f32_key_lines.txt)
_F32_KEY_LINES = "\n".join(
    line for line in (Path(__file__).parent / "data" / "sort" / "xla_f32_key_lines.txt").read_text().splitlines()
    if not line.startswith("#"))
XLA_CMP = """cmp {{
  p0 = f32[] parameter(0)  p1 = f32[] parameter(1)
  """ + _F32_KEY_LINES.replace("{", "{{").replace("}", "}}") + """
  {root}
}}
ENTRY e {{ x = f32[7,{n}] parameter(0)
  ROOT s = f32[7,{n}] sort(x), dimensions={{1}}, is_stable=true, to_apply=cmp }}"""


def test_xla_comparator_fast_equals_general():
    rng = np.random.default_rng(11)
    n = 257
    x = rng.integers(-4, 5, (7, n)).astype(np.float32) / 2
    specials = np.array([np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0], np.float32)
    x[rng.random((7, n)) < 0.2] = rng.choice(specials, 1)[0]
    x[rng.random((7, n)) < 0.1] = -0.0
    x[rng.random((7, n)) < 0.05] = -np.nan
    fast_text = "HloModule fast\n" + XLA_CMP.format(root="ROOT lt = pred[] compare(k0, k1), direction=LT", n=n)
    general_text = "HloModule general\n" + XLA_CMP.format(
        root="lt = pred[] compare(k0, k1), direction=LT  t = pred[] constant(true)  ROOT r = pred[] and(lt, t)", n=n)
    fast = hlo_interp.run(fast_text, x)[0]
    general = hlo_interp.run(general_text, x)[0]
    assert np.array_equal(fast.view(np.int32), general.view(np.int32))  # bit for bit (±0, NaN signs)
    # JAX's order: -0 and +0 equal (stable), every NaN equal and last
    for r in range(7):
        key = np.where(np.isnan(x[r]), np.inf, x[r])
        order = np.lexsort((np.arange(n), np.isnan(x[r]), key))
        assert np.array_equal(fast[r].view(np.int32), x[r][order].view(np.int32))


def test_every_golden_comparator_is_recognized():
    """The fast path covers every comparator JAX and XLA:CPU wrote in the golden cases (pre- and
    post-optimization), so none of them falls back to the merge sort."""

    from hlo_interp.evaluator import EvalContext, make_options
    from hlo_interp.ops import load_all
    load_all()
    seen = 0
    for c in CASES:
        for which in ("before", "after"):
            m = hlo_interp.parse(c.text(which))
            ctx = EvalContext(m, make_options())
            for comp in m.computations:
                for ins in comp.instructions:
                    if ins.opcode != "sort":
                        continue
                    vc = S.VectorComputation(m.computation(ins.attrs["to_apply"]), ctx)
                    assert S.recognize_comparator(vc, len(ins.operands)) is not None, (c.id, which)
                    seen += 1
    assert seen >= 100


# comparators the recognizer does not take (a no-op `and true`, |c| descending, a key mixing operands,
# a select-written two-level key): the guessed-order path and the merge sort must give the same
# result, equal to one comparator call per comparison
GENERAL_BODIES = {
    "noop_and": "g = pred[] compare(c, d), direction=LT  t = pred[] constant(true)  ROOT r = pred[] and(g, t)",
    "noop_total": ("g = pred[] compare(c, d), direction=GT, type=TOTALORDER  t = pred[] constant(true)  "
                   "ROOT r = pred[] and(g, t)"),
    "abs_desc": ("ac = f32[] abs(c)  ad = f32[] abs(d)  g = pred[] compare(ac, ad), direction=GT  "
                 "t = pred[] constant(true)  ROOT r = pred[] and(g, t)"),
    "mixed_key": ("ca = f32[] convert(a)  cb = f32[] convert(b)  x = f32[] add(ca, c)  y = f32[] add(cb, d)  "
                  "ROOT r = pred[] compare(x, y), direction=LT"),
    "select_swapped": ("lt = pred[] compare(c, d), direction=LT  eq = pred[] compare(c, d), direction=EQ  "
                       "gt = pred[] compare(a, b), direction=GT  ROOT r = pred[] select(eq, gt, lt)"),
    "le": "g = pred[] compare(c, d), direction=LE  t = pred[] constant(true)  ROOT r = pred[] and(g, t)",
}
GUESSED = {"noop_and", "noop_total", "select_swapped"}


@pytest.mark.parametrize("name", sorted(GENERAL_BODIES))
def test_guessed_order_equals_merge_sort(name, monkeypatch):
    rng = np.random.default_rng(len(name))
    n = 97
    x = rng.integers(-3, 4, (3, n)).astype(np.int32)
    y = rng.integers(-3, 4, (3, n)).astype(np.float32) / 2
    y[rng.random((3, n)) < 0.15] = -0.0
    text = SORT_TEXT.format(body=GENERAL_BODIES[name], r=3, n=n)
    taken = []
    real = S.candidate_order
    monkeypatch.setattr(S, "candidate_order", lambda *a, **k: taken.append(real(*a, **k)) or taken[-1])
    got = hlo_interp.run(text, x, y)
    assert len(taken) == 1 and (taken[0] is not None) == (name in GUESSED)
    monkeypatch.setattr(S, "candidate_order", lambda *a, **k: None)
    merged = hlo_interp.run(text, x, y)
    monkeypatch.setattr(S, "VectorComputation", None)  # one comparator call per comparison
    slow = hlo_interp.run(text, x, y)
    for g, m, s in zip(got, merged, slow):
        assert np.array_equal(g.view(np.int32), m.view(np.int32))
        if name != "le":  # LE is no strict weak order: the two algorithms may legitimately differ
            assert np.array_equal(g.view(np.int32), s.view(np.int32))


def test_guess_is_checked_on_every_row():
    """A guess right on the sampled row 0 but wrong on another row is rejected (no partial answer)."""
    x = np.array([[0, 1, 2, 3], [3, 2, 1, 0]], np.float32)

    def less(lhs, rhs):  # ascending on row 0, descending on row 1
        sign = np.array([[1.0], [-1.0]], np.float32)
        return lhs[0] * sign < rhs[0] * sign
    assert S.candidate_order([x], less) is None
    assert S.merge_sort_order([x], less).tolist() == [[0, 1, 2, 3], [0, 1, 2, 3]]
    assert S.candidate_order([x[::-1]], lambda lhs, rhs: lhs[0] > rhs[0]).tolist() == [[0, 1, 2, 3], [3, 2, 1, 0]]
