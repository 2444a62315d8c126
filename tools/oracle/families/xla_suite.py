"""xla_suite: XLA:CPU's results for the classes of difference the differential run over XLA's own test
suite found (tools/xla_testsuite.py run; tests/golden/README.md, "XLA's own test suite").

Dev-only (needs jax/jaxlib); the tests (tests/test_golden.py, tests/test_xla_suite.py) only read the
committed files.  Each case is a minimal hand-written text of one class (the XLA test source where it was
found is named), parsed by XLA's parser, converted to StableHLO, compiled and run by the XLA:CPU client
JAX uses (tools/oracle/runner.py).

Each case is one case directory (tools/oracle/writer.py; tests/golden/README.md).

    python -m tools.oracle regen xla_suite
"""
from __future__ import annotations

import numpy as np

from ..core import Decl

FAMILY = "xla_suite"  # tests/golden/xla_suite/
R = np.random.default_rng(29)
CASES = []


def case(cid, source, text, *args, compare="bits"):
    CASES.append((cid, source, text, args, compare))


def _f32(*shape):
    return R.standard_normal(shape).astype(np.float32)


# A reduce-window of scalars is its operands (XLA:CPU's algebraic simplifier): the init value is not
# applied (xla/hlo/parser/hlo_parser_test.cc, reduce_window_variadic)
_RW2 = """HloModule m
r {
  a1 = f32[] parameter(0)  a2 = f32[] parameter(1)  b1 = f32[] parameter(2)  b2 = f32[] parameter(3)
  v1 = f32[] add(a1, b1)  v2 = f32[] multiply(a2, b2)
  ROOT t = (f32[], f32[]) tuple(v1, v2)
}
ENTRY e {
  x = f32[] parameter(0)  y = f32[] parameter(1)  i = f32[] constant(1)  j = f32[] constant(3)
  ROOT w = (f32[], f32[]) reduce-window(x, y, i, j), to_apply=r
}"""
case("reduce_window_scalar_variadic", "xla/hlo/parser/hlo_parser_test.cc", _RW2,
     np.float32(42), np.float32(-2.5))
case("reduce_window_scalar", "xla/hlo/parser/hlo_parser_test.cc", """HloModule m
r { a = s32[] parameter(0)  b = s32[] parameter(1)  ROOT s = s32[] add(a, b) }
ENTRY e { x = s32[] parameter(0)  i = s32[] constant(5)
  ROOT w = s32[] reduce-window(x, i), to_apply=r }""", np.int32(7))


def declare() -> list[Decl]:
    return [Decl(FAMILY, cid, args, hlo=text, compare=compare, keep_after=False, extra={"xla_test_source": source})
            for cid, source, text, args, compare in CASES]
