#!/usr/bin/env python3
"""Write the README's opcode table (between the `<!-- opcode-table -->` markers) from the code itself:
the opcode table (hlo_interp/opcodes.py), the shape rules (hlo_interp/shapes/infer.py) and the evaluator's
kernels (hlo_interp/ops/).  `--check` exits 1 when the README is out of date (tests/test_readme.py).

    python3 tools/opcode_table.py [--check]
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

BEGIN, END = "<!-- opcode-table -->", "<!-- /opcode-table -->"

ALL = "all"
FLOAT = "f8*, bf16, f16, f32, f64, c64, c128"
REAL_FLOAT = "f8*, bf16, f16, f32, f64"
INT = "pred, s2-s64, u2-u64"
NUM = "s2-s64, u2-u64, f8*, bf16, f16, f32, f64, c64, c128"

# element types per opcode (default: what XLA's shape rules accept for the family) and notes
TYPES = {
    "and": INT, "or": INT, "xor": INT, "not": INT, "popcnt": "s2-s64, u2-u64",
    "count-leading-zeros": "s2-s64, u2-u64", "shift-left": "s2-s64, u2-u64",
    "shift-right-arithmetic": "s2-s64, u2-u64", "shift-right-logical": "s2-s64, u2-u64",
    "mulhi": "s8-s64, u8-u64",
    "floor": REAL_FLOAT, "ceil": REAL_FLOAT, "round-nearest-afz": REAL_FLOAT,
    "round-nearest-even": REAL_FLOAT, "is-finite": REAL_FLOAT, "atan2": FLOAT, "erf": REAL_FLOAT,
    "cbrt": REAL_FLOAT, "logistic": FLOAT, "reduce-precision": REAL_FLOAT,
    "real": "c64, c128 (and real types)", "imag": "c64, c128 (and real types)", "complex": "f32, f64",
    "stochastic-convert": "f32/f16/bf16 -> s8-s64, f8*", "fft": "c64, c128, f32, f64",
    "triangular-solve": "f16, bf16, f32, f64, c64, c128", "cholesky": "f16, bf16, f32, f64, c64, c128",
    "rng-bit-generator": "2-64-bit ints, all floats (as bits)", "rng": "f16, bf16, f32, f64, s32, u32, s64, u64",
    "rng-get-and-update-state": "u64[2]", "replica-id": "u32", "partition-id": "u32",
    "after-all": "token", "add-dependency": ALL, "get-dimension-size": "s32",
}
for _op in ("abs", "negate", "sign", "exponential", "exponential-minus-one", "log", "log-plus-one", "sqrt",
            "rsqrt", "tanh", "tan", "sine", "cosine", "acos", "acosh", "asin", "asinh", "atan", "atanh",
            "cosh", "sinh", "power", "divide", "remainder"):
    TYPES.setdefault(_op, FLOAT if _op not in ("divide", "remainder", "power", "abs", "negate", "sign")
                     else NUM)
FAMILY_TYPES = {"collective": ALL, "async": ALL, "window": ALL, "elementwise": NUM, "movement": ALL, "control": ALL, "reduce": ALL, "dot": NUM,
                "gather_scatter": ALL, "sort": ALL, "batchnorm": REAL_FLOAT}

NOTES = {
    "divide": "x/0 = -1 (signed) or all ones, INT_MIN/-1 = INT_MIN, as XLA",
    "remainder": "x%0 = x, INT_MIN%-1 = 0",
    "shift-left": "shift >= width or negative gives 0",
    "shift-right-arithmetic": "unsigned types shift in the sign bit, as XLA:CPU",
    "maximum": "NaN propagates; max(-0, +0) = +0", "minimum": "NaN propagates; min(-0, +0) = -0",
    "convert": "float->int saturates, NaN -> 0; f64 -> bf16/f16 through f32 (XLA rounds twice)",
    "bitcast-convert": "size-changing too", "compare": "all directions, TOTALORDER",
    "power": "integer exponents: low 6 bits, negative -> 0 unless |base| = 1 (XLA:CPU)",
    "dynamic-slice": "start indices clamped (signed/unsigned per index type)",
    "dynamic-update-slice": "start indices clamped", "pad": "negative and interior padding",
    "reduce": "add/mul/max/min/and/or/xor run as NumPy reductions; low-precision sums in XLA:CPU's order",
    "conditional": "out-of-range index runs the last branch",
    "dot": "batch dims, preferred type; bf16/f8 computed in f32, rounded once",
    "rng-bit-generator": "three_fry, philox bit-exact; rng_default = philox (XLA:CPU)",
    "rng": "XLA's method with its first-process key: reproducible",
    "fft": "FFT, IFFT, RFFT, IRFFT over 1-3 dims",
    "cholesky": "not positive definite -> NaN per matrix", "triangular-solve": "singular -> inf/NaN",
    "while": "--max-iterations guard",
    "convolution": "im2col + dot; any dim_labels, padding, dilations, groups; f8 rounded through f16 (XLA:CPU)",
    "reduce-window": "XLA:CPU's window order; padded bf16/f16/f8 sums may differ by 1-2 ulp",
    "select-and-scatter": "ties keep the first; dilated windows not yet",
    "batch-norm-training": "XLA's expansion; bf16 in f32, f8/f4 in f16 (XLA:CPU)",
    "batch-norm-inference": "XLA's expansion; bf16 in f32, f8/f4 in f16 (XLA:CPU)",
    "batch-norm-grad": "XLA's expansion; bf16 in f32, f8/f4 in f16 (XLA:CPU)",
    "ragged-dot": "all 3 modes, as JAX's masked-dot lowering",
    "set-dimension-size": "size outside [0, bound] refused",
    "async-start": "wrapped computation evaluated at start",
    "gather": "start indices clamped; batching dims",
    "scatter": "variadic, any computation; out-of-bounds windows skipped; ufunc.at fast paths",
    "sort": "any comparator, stable; XLA's comparator forms run as argsort/lexsort",
    "topk": "ties -> lower index; with to_apply the comparator orders (stable)",
    "all-reduce": "XLA:CPU order: fold from +0/1 in group order; max/min skip NaN; bf16 in f32, f8 in f16",
    "collective-permute": "non-targets get zeros; in-place form (buffers, offsets, slice sizes)",
    "collective-reduce": "result on each group's first device, zeros elsewhere (XLA leaves them unwritten)",
    "scaled-dot": "XLA's ScaledDotRewriter lowering: scale, then dot",
    "shuffle": "rotate, permute (out-of-range coordinates clamp, as its gather lowering), multi_rotate; "
               "from XLA's sources and tests (jaxlib 0.10.2 has no shuffle)",
    "ragged-all-to-all": "documented semantics (XLA:CPU does not run it)",
    "bitcast": "physical layouts: tiles T(..)(..), *, packed E(n), sub-byte tiles, L(n) padding; M(n)/sparse refused",
    "send": "within one module by channel_id; is_host_transfer: host queues (--host-send)",
    "recv": "within one module by channel_id; is_host_transfer: host queues (--host-recv)",
    "infeed": "hlo-run --infeed FILE.npz", "outfeed": "hlo-run --outfeed OUT.npz",
    "scan": "is_reverse, several inputs and carries",
    "custom-call": "registry: TopK, sharding markers, LAPACK (incl. gees, geev left vectors) and cuSOLVER "
                   "linalg, cuBLAS GEMM, cuDNN convolutions, SliceToDynamic/PadToStatic; "
                   "hlo_interp.register_custom_call for others",
}


def rows() -> list[str]:
    from hlo_interp.opcodes import OPCODES
    from hlo_interp.ops import load_all
    from hlo_interp.ops.registry import KERNELS
    from hlo_interp.shapes.infer import RULES
    load_all()
    out = ["| opcode | family | runs | shape rule | element types | notes |", "|---|---|---|---|---|---|"]
    for name in sorted(OPCODES):
        op = OPCODES[name]
        runs = "yes" if name in KERNELS else "not yet"
        types = TYPES.get(name) or FAMILY_TYPES.get(op.family, "")
        out.append(f"| `{name}` | {op.family} | {runs} | {'yes' if name in RULES else 'no'} | "
                   f"{types if name in KERNELS else ''} | {NOTES.get(name, '')} |")
    n = sum(1 for x in OPCODES if x in KERNELS)
    out.append("")
    out.append(f"{n} of {len(OPCODES)} opcodes run; every one has a shape rule and is checked by `hlo check`. "
               "`f8*` = every f8 variant (and f4e2m1fn where XLA allows it).")
    return out


def render(readme: str) -> str:
    a, b = readme.index(BEGIN) + len(BEGIN), readme.index(END)
    return readme[:a] + "\n" + "\n".join(rows()) + "\n" + readme[b:]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--check", action="store_true")
    args = ap.parse_args(argv)
    path = ROOT / "README.md"
    text = path.read_text()
    new = render(text)
    if args.check:
        if new != text:
            print("README.md's opcode table is out of date: run python3 tools/opcode_table.py")
            return 1
        return 0
    path.write_text(new)
    return 0


if __name__ == "__main__":
    sys.exit(main())
