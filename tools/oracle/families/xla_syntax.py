"""xla_syntax: XLA:CPU's results for the texts of XLA's test suite that our parser used to refuse or
misread, found by tools/xla_testsuite.py.

Dev-only (needs jax/jaxlib); tests/test_xla_syntax.py only reads the committed files.  Each case is a
minimal hand-written text of one form seen in XLA's tests (the source is named), parsed by XLA's parser,
converted to StableHLO, compiled and run by the XLA:CPU client JAX uses (tools/oracle/runner.py).

Each case is one case directory (tools/oracle/writer.py; tests/golden/README.md).

    python -m tools.oracle regen xla_syntax
"""
from __future__ import annotations

import ml_dtypes
import numpy as np

from ..core import Decl

FAMILY = "xla_syntax"  # tests/golden/xla_syntax/

R = np.random.default_rng(13)


def _f32(*shape):
    return R.standard_normal(shape).astype(np.float32)


CASES = [
    # item 1: a scalar literal for an array constant (XLA:CPU: element 0 set, the rest zero)
    ("scalar_for_f32_array", "xla/backends/gpu/transforms/scatter_slice_simplifier_test.cc",
     "HloModule m\nENTRY e {\n  ROOT c = f32[9] constant(0.5)\n}\n", []),
    ("scalar_for_f32_matrix_col_major", "xla/service/gpu/*_test.cc (f32[8,2048] constant(1))",
     "HloModule m\nENTRY e {\n  ROOT c = f32[2,3]{0,1} constant(7)\n}\n", []),
    ("scalar_for_s32_array", "hlo_parser.cc ParseDenseLiteral",
     "HloModule m\nENTRY e {\n  ROOT c = s32[4] constant(-3)\n}\n", []),
    ("scalar_for_pred_array", "hlo_parser.cc ParseDenseLiteral",
     "HloModule m\nENTRY e {\n  ROOT c = pred[3] constant(true)\n}\n", []),
    ("scalar_for_bf16_array_added", "xla/backends/gpu/transforms/scatter_slice_simplifier_test.cc",
     "HloModule m\nENTRY e {\n  p = bf16[4] parameter(0)\n  c = bf16[4] constant(1.5)\n"
     "  ROOT a = bf16[4] add(p, c)\n}\n", [np.array([1, 2, 3, 4], dtype=ml_dtypes.bfloat16)]),
    # item 2: whitespace between a shape and its layout
    ("layout_after_space", "xla/service/gpu/*_test.cc (f32[3, 6, 128, 12288] {2, 1, 3, 0})",
     "HloModule m\nENTRY e {\n  p0 = f32[2,3]{1,0} parameter(0)\n"
     "  ROOT b = f32[3, 2] {0, 1} transpose(p0), dimensions={1, 0}\n}\n", [_f32(2, 3)]),
    # item 23: ENTRY main() -> shape{ with no space; HloModule name:
    ("entry_no_space_colon_name", "xla/hlo/parser/hlo_parser_test.cc",
     "HloModule TupleCreate_module:\nENTRY main() -> f32[2]{\n  ROOT c = f32[2] constant({1, 2})\n}\n", []),
    ("param_named_pred", "xla/service/*_test.cc",
     "HloModule m\nENTRY e (pred: pred[], x: f32[2]) -> f32[2] {\n  x = f32[2] parameter(1)\n"
     "  p = pred[] parameter(0)\n  n = f32[2] negate(x)\n  b = pred[2] broadcast(p), dimensions={}\n"
     "  ROOT s = f32[2] select(b, x, n)\n}\n", [np.array(False), _f32(2)]),
    # item 3: parameters without a colon, dense literals with commas left out
    ("param_without_colon", "xla/backends/gpu/transforms/conv_padding_legalization_test.cc",
     "HloModule m\nENTRY %c (input f32[2]{0}, kernel f32[2]{0}) -> f32[2] {\n"
     "  input = f32[2]{0} parameter(0)\n  kernel = f32[2]{0} parameter(1)\n"
     "  ROOT a = f32[2]{0} multiply(input, kernel)\n}\n", [_f32(2), _f32(2)]),
    ("literal_commas_left_out", "xla/backends/gpu/transforms/cudnn_simplify_padding_test.cc",
     "HloModule m\nENTRY e {\n  ROOT c = f32[3,2] constant({ /*i=0*/ {1, 2}, {3, 4} {5, 6} })\n}\n", []),
]


def declare() -> list[Decl]:
    return [Decl(FAMILY, cid, args, hlo=text, compare="bits", keep_after=False, extra={"xla_test_source": source})
            for cid, source, text, args in CASES]
