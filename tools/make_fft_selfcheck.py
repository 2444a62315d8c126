"""Print the XLA:CPU digests of hlo_interp/ops/fft.py's ducc0 self-check (dev-only: needs jax/jaxlib).

    python tools/make_fft_selfcheck.py

XLA:CPU's FFT is DUCC (ducc0::c2c/r2c/c2r) built without -ffast-math and without FMA contraction, with
AVX vectors.  hlo_interp uses an installed `ducc0` package only when it reproduces XLA:CPU on these
transforms bit for bit (the PyPI wheels do not: see ops/fft.py); this script computes the expected
outputs with XLA:CPU and prints the digests to paste into ops/fft.py's _SELF_CHECK.
"""
from __future__ import annotations

import hashlib
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tools"))

from hlo_interp.ops.fft import SELF_CHECK_CASES, self_check_input  # noqa: E402
from oracle import runner  # noqa: E402


def main():
    for kind, dtype, shape, lens in SELF_CHECK_CASES:
        x = self_check_input(dtype, shape)
        text = f"""HloModule fft_self_check
ENTRY e {{ x = {_hlo_type(x.dtype)}[{','.join(map(str, shape))}] parameter(0)
  ROOT r = {_out_type(kind, x.dtype)}[{','.join(map(str, _out_shape(kind, shape, lens)))}] fft(x), fft_type={kind}, fft_length={{{','.join(map(str, lens))}}} }}"""
        _, outs = runner.run_hlo(text, [x])
        digest = hashlib.sha256(np.ascontiguousarray(outs[0]).tobytes()).hexdigest()[:16]
        print(f'    "{digest}",  # {kind} {x.dtype} {list(shape)} fft_length={list(lens)}')


def _hlo_type(dt):
    return {"complex64": "c64", "complex128": "c128", "float32": "f32", "float64": "f64"}[np.dtype(dt).name]


def _out_type(kind, dt):
    if kind == "RFFT":
        return "c64" if np.dtype(dt) == np.float32 else "c128"
    if kind == "IRFFT":
        return "f32" if np.dtype(dt) == np.complex64 else "f64"
    return _hlo_type(dt)


def _out_shape(kind, shape, lens):
    if kind == "RFFT":
        return tuple(shape[:-1]) + (lens[-1] // 2 + 1,)
    if kind == "IRFFT":
        return tuple(shape[:-1]) + (lens[-1],)
    return tuple(shape)


if __name__ == "__main__":
    main()
