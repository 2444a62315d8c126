"""Survey: complex dots run by hlo-run against XLA:CPU (dev-only: needs jax), element by element, bit for bit.

    python tools/complex_dot_survey.py [--seed N] [--quick]

Random c64/c128 operands (also real and integer operands converted to complex first) over a grid of shapes:
matrix x matrix with M and N off the kernel's blocks, K in {1, 2, 7, 300, 301, 500, 1000, 3000}, vector x
matrix, matrix x vector, vector . vector, batch dimensions, several contracting and free dimensions, and
transposed operands.  Each dot is one HLO text run through hlo_interp and through XLA:CPU (jax.jit of the
same lax.dot_general); prints per group the shapes and elements that agree in both components' bits."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import jax  # noqa: E402
from jax import lax  # noqa: E402

jax.config.update("jax_enable_x64", True)

import ml_dtypes  # noqa: E402

import hlo_interp  # noqa: E402
from tools.oracle.dot_text import dot_module  # noqa: E402

_T = {"c64": np.complex64, "c128": np.complex128, "f32": np.float32, "f64": np.float64,
      "bf16": ml_dtypes.bfloat16, "s32": np.int32}


def operand(rng, shape, t):
    if t in ("c64", "c128"):
        return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(_T[t])
    if t == "s32":
        return rng.integers(-50, 50, shape).astype(np.int32)
    return rng.standard_normal(shape).astype(_T[t])


def text(ashape, at, bshape, bt, ct, dn, out_shape):
    lb, rb, lc, rc = dn
    dims = ", ".join(f"{k}={{{','.join(map(str, v))}}}" for k, v in (
        ("lhs_batch_dims", lb), ("rhs_batch_dims", rb), ("lhs_contracting_dims", lc),
        ("rhs_contracting_dims", rc)) if v)
    return dot_module(at, ashape, bt, bshape, ct, out_shape, dims) + "\n"


def run_one(rng, ashape, at, bshape, bt, ct, dn):
    a, b = operand(rng, ashape, at), operand(rng, bshape, bt)
    lb, rb, lc, rc = dn

    def f(x, y):
        x = x.astype(_T[ct]) if at != ct else x
        y = y.astype(_T[ct]) if bt != ct else y
        return lax.dot_general(x, y, ((lc, rc), (lb, rb)))
    want = np.asarray(jax.jit(f)(a, b))
    got = np.asarray(hlo_interp.run(hlo_interp.parse(text(ashape, at, bshape, bt, ct, dn, want.shape)), a, b)[0])
    assert got.shape == want.shape, (got.shape, want.shape)
    fl = np.float32 if ct == "c64" else np.float64
    want, got = want.reshape(-1), got.reshape(-1)
    same = (want.view(fl) == got.view(fl)).reshape(want.shape + (2,)).all(-1)
    return int(same.sum()), same.size


def groups(quick: bool):
    ks = (1, 2, 7, 300, 301, 500, 1000, 3000)
    mn = ((2, 2), (3, 3), (5, 3), (13, 15), (9, 11), (7, 31), (6, 2), (16, 16), (12, 13), (40, 37)) if not quick \
        else ((5, 3), (13, 15))
    out = {}
    for t in ("c64", "c128"):
        g = out.setdefault(f"matrix x matrix {t}", [])
        for m, n in mn:
            for k in ks if not quick else (2, 301):
                g.append(((m, k), t, (k, n), t, t, ((), (), (1,), (0,))))
        g = out.setdefault(f"vector x matrix / matrix x vector / vector . vector {t}", [])
        for k in ks:
            g.append(((1, k), t, (k, 17), t, t, ((), (), (1,), (0,))))
            g.append(((k,), t, (k, 9), t, t, ((), (), (0,), (0,))))
            g.append(((19, k), t, (k, 1), t, t, ((), (), (1,), (0,))))
            g.append(((6, k), t, (k,), t, t, ((), (), (1,), (0,))))
            g.append(((k,), t, (k,), t, t, ((), (), (0,), (0,))))
            g.append(((1, k), t, (k, 1), t, t, ((), (), (1,), (0,))))
        g = out.setdefault(f"batch, several dimensions, transposed {t}", [])
        g += [((3, 8, 16), t, (3, 16, 8), t, t, ((0,), (0,), (2,), (1,))),
              ((4, 5, 33), t, (4, 33, 7), t, t, ((0,), (0,), (2,), (1,))),
              ((2, 3, 1, 40), t, (2, 3, 40, 6), t, t, ((0, 1), (0, 1), (3,), (2,))),
              ((4, 9, 9), t, (4, 9, 1), t, t, ((0,), (0,), (2,), (1,))),
              ((4, 1, 9), t, (4, 9, 1), t, t, ((0,), (0,), (2,), (1,))),
              ((4, 1, 100), t, (4, 100, 1), t, t, ((0,), (0,), (2,), (1,))),
              ((4, 3, 5), t, (3, 5, 6), t, t, ((), (), (1, 2), (0, 1))),
              ((2, 3, 8), t, (8, 5), t, t, ((), (), (2,), (0,))),
              ((20, 8), t, (16, 20), t, t, ((), (), (0,), (1,))),
              ((5, 2, 30), t, (30, 2, 7), t, t, ((1,), (1,), (2,), (0,)))]
        g = out.setdefault(f"operands converted to {t}", [])
        reals = ("f32", "bf16", "s32") if t == "c64" else ("f64", "f32", "s32")
        for r in reals:
            g += [((8, 24), r, (24, 16), t, t, ((), (), (1,), (0,))),
                  ((7, 40), r, (40, 13), r, t, ((), (), (1,), (0,))),
                  ((1, 50), t, (50, 9), r, t, ((), (), (1,), (0,)))]
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--quick", action="store_true")
    a = ap.parse_args(argv)
    rng = np.random.default_rng(a.seed)
    total = [0, 0, 0, 0]
    for name, cases in groups(a.quick).items():
        shapes_ok = elems_ok = elems = 0
        bad = []
        for c in cases:
            ok, n = run_one(rng, *c)
            shapes_ok += ok == n
            elems_ok += ok
            elems += n
            if ok != n:
                bad.append(f"{c[0]}{c[1]} x {c[2]}{c[3]}: {ok}/{n}")
        print(f"{name}: {shapes_ok}/{len(cases)} shapes, {elems_ok}/{elems} elements bit-exact")
        for line in bad:
            print("   differs:", line)
        total = [total[0] + shapes_ok, total[1] + len(cases), total[2] + elems_ok, total[3] + elems]
    print(f"total: {total[0]}/{total[1]} shapes, {total[2]}/{total[3]} elements bit-exact")
    return 0 if total[0] == total[1] else 1


if __name__ == "__main__":
    sys.exit(main())
