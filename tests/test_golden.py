"""Every case computed by XLA:CPU (tests/golden/<family>/<case>/, written by tools/oracle; see
tests/golden/README.md), run through hlo_interp.run from each of its texts (`before.hlo`: hand-written or
JAX's pre-optimization module; `after.hlo`: XLA:CPU's optimized module, when kept) and compared with
XLA's outputs by the case's rule (tests/casedata.py: one loader, one comparator).

Test ids are `family/case-variant`; `pytest -k OPCODE` also selects every case whose texts use OPCODE
(tests/conftest.py adds a case's opcodes to its keywords).  A case with a `check` (results that are unique
only up to signs or orders: LAPACK decompositions, unstable sorts) is run by its family's test file.
"""
from __future__ import annotations

import numpy as np
import pytest

from pathlib import Path

from casedata import Case, cases, compare_leaf, dtype_of, params, valid_rule

TESTS = Path(__file__).resolve().parent

# ------------------------------------------------------------------------------------------------
# the cases

CASES = cases()
FAMILIES = sorted({c.family for c in CASES})


def test_case_data_is_complete():
    """The case set exists, is large, and every case's files load with their declared dtypes."""
    assert len(CASES) >= 3000, f"only {len(CASES)} cases"
    for c in CASES:
        info = c.info
        assert info["family"] == c.dir.parent.name, c
        assert c.variants[0] == "before" and set(c.variants) <= {"before", "after"}, c
        for v in c.variants:
            assert (c.dir / f"{v}.hlo").stat().st_size > 0, (c, v)
        for a, m in zip(c.inputs + c.expected, info["inputs"] + info["outputs"]):
            assert a.dtype == dtype_of(m["dtype"]), (c, m)
        assert c.expected, c
        assert valid_rule(info["compare"]), c
        for v, rule in info.get("compare_variants", {}).items():
            assert v in c.variants and valid_rule(rule) and info.get("compare_variants_reason"), c
        for m in info["outputs"]:
            if "compare" in m:
                assert valid_rule(m["compare"]) and m.get("compare_reason"), (c, m)
        texts = "".join(c.text(v) for v in c.variants)
        assert all(f"{op}(" in texts for op in info["opcodes"]), c  # the recorded opcodes are the texts'
        for key in ("xla_artifact", "known"):
            for variant, reason in info.get(key, {}).items():
                assert variant in c.variants and isinstance(reason, str) and len(reason) > 40, c
    assert {"elementwise", "convert", "movement", "reduce", "dot", "control", "examples", "models",
            "gather_scatter", "sort", "window", "sweep", "fft_linalg_rng", "custom_call"} <= set(FAMILIES)


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

    assert compare_leaf(np.array([np.nan], np.float32), np.array([-np.nan], np.float32), "bits") is not None
    assert compare_leaf(np.array([1.5, 102.0]), np.array([1.0, 102.0]), {"scaled": 0.01}) is None  # 1% of 102
    assert compare_leaf(np.array([1.0, 2.0]), np.array([3.0, 102.0]), {"scaled": 0.01}) is not None


@pytest.mark.parametrize("case,variant", params([c for c in CASES if "check" not in c.info]))
def test_case(case: Case, variant: str):
    case.run_and_check(variant)


# ------------------------------------------------------------------------------------------------
# every opcode of the table has an XLA:CPU-computed case

# Opcodes no XLA:CPU run can give values for, and the tests that cover them instead (spec semantics,
# XLA's own test modules, hand-derived values).  An entry goes when the opcode gets a case.
NO_XLA_CPU_CASE = {
    "collective-broadcast": ("XLA:CPU does not implement it", "test_spmd.py::test_collective_broadcast_and_async_sugar"),
    "ragged-all-to-all": ("XLA:CPU does not implement it", "test_spmd.py::test_ragged_all_to_all_documented_example"),
    "collective-reduce": ("an XLA:GPU-only opcode", "test_ops_collective_reduce.py::test_collective_reduce"),
    "infeed": ("a host transfer the XLA:CPU client JAX uses cannot feed", "test_ops_io_layout.py::test_infeed_outfeed_in_order"),
    "outfeed": ("a host transfer the XLA:CPU client JAX uses cannot drain", "test_ops_io_layout.py::test_infeed_outfeed_in_order"),
    "send": ("a channel transfer between programs", "test_ops_io_layout.py::test_send_recv_by_channel"),
    "send-done": ("a channel transfer between programs", "test_ops_io_layout.py::test_send_recv_by_channel"),
    "recv": ("a channel transfer between programs", "test_ops_io_layout.py::test_send_recv_by_channel"),
    "recv-done": ("a channel transfer between programs", "test_ops_io_layout.py::test_send_recv_by_channel"),
    "shuffle": ("jaxlib 0.10.2's parser does not know it", "test_ops_shuffle.py::test_xla_expander_modules"),
}


def test_every_opcode_has_an_xla_case():
    """Every opcode of hlo_interp.opcodes.OPCODES is used by at least one committed XLA:CPU-computed case
    (or is exempt above, naming the test that covers it)."""
    from hlo_interp.opcodes import OPCODES
    used = set()
    for c in CASES:
        used |= set(c.info["opcodes"])
    lacking = sorted(set(OPCODES) - used - set(NO_XLA_CPU_CASE))
    assert not lacking, (f"{len(lacking)} opcode(s) of the table have no XLA:CPU-computed case in "
                         f"tests/golden/: {', '.join(lacking)}")
    stale = sorted(op for op in NO_XLA_CPU_CASE if op in used or op not in OPCODES)
    assert not stale, f"NO_XLA_CPU_CASE entries with a case now (or not in the table): {stale}"
    for op, (why, test) in NO_XLA_CPU_CASE.items():
        file, name = test.split("::")
        assert f"def {name}(" in (TESTS / file).read_text(), (op, test)
        assert f"{op}(" in (TESTS / file).read_text() or op in ("send-done", "recv-done"), (op, test)
