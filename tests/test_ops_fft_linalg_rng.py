"""fft, triangular-solve, cholesky, rng-bit-generator, rng and rng-get-and-update-state
(hlo_interp/ops/fft.py, linalg.py, rng.py).

  * known-answer vectors of Threefry-2x32-20 and Philox-4x32-10 (Random123's published KATs), the
    spec's worked examples (EX-27 fft shapes; the Cholesky example), and properties of the plain
    functions (ifft(fft(x)) = x, L·Lᴴ = a, op(a)·x = b);
  * XLA:CPU cases in tests/golden/fft_linalg_rng/ (written by tools/make_fft_linalg_rng_vectors.py,
    dev-only): hand-written HLO and real JAX programs, each run from its pre-optimization text AND from
    XLA:CPU's optimized text through hlo_interp.run and compared with XLA's outputs; the JAX linalg
    programs (`jaxtpu_*`: cholesky, triangular_solve, cho_solve, solve_triangular) are lowered for TPU,
    where they keep the HLO ops (on CPU JAX emits LAPACK custom calls), and run by XLA:CPU:
      - rng-bit-generator (three_fry, philox, default; u64[2]/u64[3] states; 2..64-bit integer
        outputs, signed, float bit patterns incl. bf16/f8/f4, scalars, empty): bit for bit, new
        state included;
      - rng uniform (f32/f16/bf16/s32/u32/s64/u64 bit for bit; f64 within 1 ulp) and normal (within a
        few ulps: XLA's sin/cos/log are not NumPy's), rng-get-and-update-state exactly;
      - fft: |got - want| <= s·max|want| with s = 2e-6·(number of transformed dims) in single
        precision, 1e-13 in double (XLA:CPU's DUCC and NumPy's pocketfft sum in different orders);
      - triangular-solve, cholesky: rtol = atol = 2e-5 (f32/c64), 1e-11 (f64/c128), NaN and inf
        positions equal (singular matrices, non-positive-definite input); f16/bf16 exactly.
Regenerate the data (dev-only, needs jax):  python3 tools/make_fft_linalg_rng_vectors.py
"""
from __future__ import annotations

import numpy as np
import pytest

import hlo_interp
from hlo_interp.diagnostics import HloError
from hlo_interp.ops import fft as fft_mod
from hlo_interp.ops import linalg, rng

from casedata import cases


pytestmark = pytest.mark.filterwarnings("error::RuntimeWarning")  # no NumPy warning may leak


# --------------------------------------------------------------------------------------------------
# known answers and worked examples

def test_threefry2x32_known_answers():
    # Random123 kat_vectors, threefry2x32_20
    y = rng.threefry2x32(np.array([0], np.uint32), np.array([0], np.uint32), 0, 0)
    assert (int(y[0][0]), int(y[1][0])) == (0x6B200159, 0x99BA4EFE)
    y = rng.threefry2x32(np.array([0xFFFFFFFF], np.uint32), np.array([0xFFFFFFFF], np.uint32), 0xFFFFFFFF, 0xFFFFFFFF)
    assert (int(y[0][0]), int(y[1][0])) == (0x1CB996FC, 0xBB002BE7)
    y = rng.threefry2x32(np.array([0x243F6A88], np.uint32), np.array([0x85A308D3], np.uint32), 0x13198A2E, 0x03707344)
    assert (int(y[0][0]), int(y[1][0])) == (0xC4923A9C, 0x483DF7A0)


def test_philox4x32_known_answers():
    # Random123 kat_vectors, philox4x32_10
    z = [np.array([0], np.uint32)] * 4
    assert [int(v[0]) for v in rng.philox4x32(z, 0, 0)] == [0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8]
    f = [np.array([0xFFFFFFFF], np.uint32)] * 4
    assert [int(v[0]) for v in rng.philox4x32(f, 0xFFFFFFFF, 0xFFFFFFFF)] == \
        [0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD]
    pi = [np.array([v], np.uint32) for v in (0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344)]
    assert [int(v[0]) for v in rng.philox4x32(pi, 0xA4093822, 0x299F31D0)] == \
        [0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1]


def test_ex27_fft_shapes():
    x16 = np.arange(16, dtype=np.float32)
    x17 = np.arange(17, dtype=np.float32)
    assert fft_mod.fft(x16, "RFFT", (16,)).shape == (9,)
    assert fft_mod.fft(x17, "RFFT", (17,)).shape == (9,)
    c = fft_mod.fft(x16, "RFFT", (16,))
    assert fft_mod.fft(c, "IRFFT", (16,)).dtype == np.float32
    assert fft_mod.fft(c, "IRFFT", (16,)).shape == (16,)
    assert fft_mod.fft(fft_mod.fft(x17, "RFFT", (17,)), "IRFFT", (17,)).shape == (17,)
    np.testing.assert_allclose(fft_mod.fft(c, "IRFFT", (16,)), x16, atol=2e-5)


def test_fft_values_and_roundtrip():
    x = np.array([1, 2, 3, 4], np.complex64)
    np.testing.assert_allclose(fft_mod.fft(x, "FFT", (4,)), [10, -2 + 2j, -2, -2 - 2j], atol=1e-6)
    y = np.random.default_rng(0).normal(size=(3, 4, 5)).astype(np.complex128)
    np.testing.assert_allclose(fft_mod.fft(fft_mod.fft(y, "FFT", (4, 5)), "IFFT", (4, 5)), y, atol=1e-14)
    assert fft_mod.fft(np.zeros((2, 0), np.complex64), "FFT", (0,)).shape == (2, 0)


def test_cholesky_worked_example():
    a = np.array([[4, 12, -16], [12, 37, -43], [-16, -43, 98]], np.float64)
    lo = linalg.cholesky(a, lower=True)
    np.testing.assert_allclose(lo, [[2, 0, 0], [6, 1, 0], [-8, 5, 3]], atol=1e-12)
    up = linalg.cholesky(a, lower=False)
    np.testing.assert_allclose(up, [[2, 6, -8], [0, 1, 5], [0, 0, 3]], atol=1e-12)
    bad = a.copy()
    bad[2, 2] = -1
    assert np.isnan(linalg.cholesky(bad, lower=True)).all()


def test_potrf_lapack_semantics():
    a = np.array([[4, 12, -16], [12, 37, -43], [-16, -43, 98]], np.float64)
    f, info = linalg.potrf(a, lower=True)
    assert info == 0
    assert f.tolist() == [[2, 12, -16], [6, 1, -43], [-8, 5, 3]]  # the upper triangle is untouched
    f, info = linalg.potrf(a, lower=False)
    assert info == 0 and f.tolist() == [[2, 6, -8], [12, 1, 5], [-16, -43, 3]]
    bad = np.stack([a, a])
    bad[0, 2, 2] = -1  # the leading minor of order 3 is not positive definite
    bad[1, 1, 1] = 1  # order 2
    assert linalg.potrf(bad)[1].tolist() == [3, 2]
    c = np.array([[4, 1 + 1j], [1 - 1j, 3]], np.complex128)
    u = np.triu(linalg.potrf(c, lower=False)[0])
    np.testing.assert_allclose(np.conj(u).T @ u, c, atol=1e-14)


@pytest.mark.parametrize("left", [True, False])
@pytest.mark.parametrize("lower", [True, False])
@pytest.mark.parametrize("trans", ["NO_TRANSPOSE", "TRANSPOSE", "ADJOINT"])
def test_triangular_solve_solves(left, lower, trans):
    r = np.random.default_rng(1)
    n, k = 6, 3
    a = (r.normal(size=(2, n, n)) + 1j * r.normal(size=(2, n, n))) * 0.2 + 3 * np.eye(n)
    b = r.normal(size=(2, n, k) if left else (2, k, n)) + 0j
    x = linalg.triangular_solve(a, b, left_side=left, lower=lower, transpose_a=trans)
    t = np.tril(a) if lower else np.triu(a)
    op = {"NO_TRANSPOSE": t, "TRANSPOSE": np.swapaxes(t, -1, -2), "ADJOINT": np.conj(np.swapaxes(t, -1, -2))}[trans]
    np.testing.assert_allclose(op @ x if left else x @ op, b, atol=1e-12)


def test_triangular_solve_singular_gives_inf_nan():
    a = np.array([[1, 0], [1, 0]], np.float32)
    x = linalg.triangular_solve(a, np.array([[1], [1]], np.float32), left_side=True, lower=True)
    assert x[0, 0] == 1 and not np.isfinite(x[1, 0])


# --------------------------------------------------------------------------------------------------
# the evaluator: rng state, determinism, errors

RBG = """HloModule m
ENTRY main {
  s = u64[2] parameter(0)
  ROOT r = (u64[2], u32[4]) rng-bit-generator(s), algorithm=rng_three_fry
}"""


def test_rng_bit_generator_chains_state():
    s = np.array([7, 0], np.uint64)
    s1, a = hlo_interp.run(hlo_interp.parse(RBG), s)
    s2, b = hlo_interp.run(hlo_interp.parse(RBG), s1)
    assert s1.tolist() == [7, 2] and s2.tolist() == [7, 4]  # u32[4]: 2 counters of 2 words
    assert not np.array_equal(a, b)
    words, c = rng.three_fry_bits(7, 0, (8,), 32)
    assert c == 4 and np.array_equal(np.concatenate([a, b]), words)


RNG = """HloModule m
ENTRY main {
  a = f32[] constant(-1)
  b = f32[] constant(1)
  u = f32[4000] rng(a, b), distribution=rng_uniform
  n = f32[4000] rng(a, b), distribution=rng_normal
  g = u64[2] rng-get-and-update-state(), delta=3
  ROOT t = (f32[4000], f32[4000], u64[2]) tuple(u, n, g)
}"""


def test_rng_distributions_deterministic_and_state_advances():
    m = hlo_interp.parse(RNG)
    u, n, g = hlo_interp.run(m, )
    assert u.dtype == np.float32 and u.shape == (4000,)
    assert u.min() >= -1 and u.max() < 1 and abs(float(u.mean())) < 0.05
    assert abs(float(n.mean()) + 1) < 0.1 and abs(float(n.std()) - 1) < 0.1  # N(mu=-1, sigma=1)
    assert g.tolist() == [rng.RNG_STATE0 + 8000, 0]
    u2, _, g2 = hlo_interp.run(m)  # the module's state persists, as an XLA executable's does
    assert g2.tolist() == [rng.RNG_STATE0 + 16003, 0] and not np.array_equal(u, u2)
    u3, _, _ = hlo_interp.run(hlo_interp.parse(RNG))  # a fresh module starts over: reproducible
    assert np.array_equal(u, u3)


_HDR = "HloModule m\nENTRY e {\n"


@pytest.mark.parametrize(("text", "arg", "fragment"), [
    (_HDR + "  s = u64[2] parameter(0)\n  ROOT r = (u64[2], pred[3]) rng-bit-generator(s), algorithm=rng_philox\n}",
     np.zeros(2, np.uint64), "output element type pred"),
    (_HDR + "  s = u64[2] parameter(0)\n  ROOT r = (u64[2], c64[3]) rng-bit-generator(s), algorithm=rng_philox\n}",
     np.zeros(2, np.uint64), "output element type c64"),
    (_HDR + "  a = s8[] constant(0)\n  ROOT r = s8[3] rng(a, a), distribution=rng_uniform\n}", None,
     "rng_uniform of s8"),
    (_HDR + "  a = s32[] constant(0)\n  ROOT r = s32[3] rng(a, a), distribution=rng_normal\n}", None,
     "rng_normal of s32"),
    (_HDR + "  a = s32[2,2] parameter(0)\n  ROOT r = s32[2,2] cholesky(a), lower=true\n}",
     np.zeros((2, 2), np.int32), "element type s32"),
], ids=["rbg-pred", "rbg-c64", "rng-uniform-s8", "rng-normal-s32", "cholesky-s32"])
def test_unsupported_variants_raise_located_errors(text, arg, fragment):
    with pytest.raises(HloError) as ei:
        hlo_interp.run(hlo_interp.parse(text), *([] if arg is None else [arg]))
    msg = str(ei.value)
    assert fragment in msg and "unsupported opcode" in msg and "<string>:4:" in msg  # located at the ROOT line


def test_three_fry_state_too_long_is_an_error():
    text = ("HloModule m\nENTRY e {\n  s = u64[3] parameter(0)\n  ROOT r = (u64[3], u32[3]) rng-bit-generator(s), "
            "algorithm=rng_three_fry\n}")
    with pytest.raises(HloError):
        hlo_interp.run(hlo_interp.parse(text), np.zeros(3, np.uint64))


# --------------------------------------------------------------------------------------------------
# XLA:CPU cases: tests/golden/fft_linalg_rng/, run by tests/test_golden.py (the `rbg_*` cases compare
# results by their bits, `same_bits_types`; `rng_*` cases compare their optimized text within one ulp of
# the product, `compare_variants`: both explained in each case.json)

def test_cases_present():
    names = {c.short.split("_")[0] for c in cases("fft_linalg_rng")}
    assert {"rbg", "fft", "tsolve", "cholesky", "rng", "jax", "jaxtpu"} <= names
    assert len(cases("fft_linalg_rng")) > 100


# --------------------------------------------------------------------------------------------------
# ducc0 as the FFT kernel only when it is XLA:CPU's DUCC (ops/fft.py's self-check)


class _FakeDucc:
    """A stand-in for the ducc0 package computing with NumPy, recording the calls."""

    def __init__(self):
        self.calls = []
        fake = self

        class fft:
            @staticmethod
            def c2c(x, axes, forward=True, inorm=0):
                fake.calls.append(("c2c", axes, forward, inorm))
                if forward:
                    return np.fft.fftn(x, axes=axes)
                return np.fft.ifftn(x, axes=axes, norm="backward" if inorm == 2 else "forward")

            @staticmethod
            def r2c(x, axes, forward=True, inorm=0):
                fake.calls.append(("r2c", axes, forward, inorm))
                return np.fft.rfftn(x, axes=axes)

            @staticmethod
            def c2r(x, axes, lastsize, forward=False, inorm=0):
                fake.calls.append(("c2r", axes, lastsize, forward, inorm))
                s = [x.shape[a] for a in axes[:-1]] + [lastsize]
                return np.fft.irfftn(x, s=s, axes=axes)
        self.fft = fft


def _digests(module):
    """The self-check digests `module` produces (as ops/fft.py computes them)."""
    import hashlib
    out = []
    for kind, dt, sh, lens in fft_mod.SELF_CHECK_CASES:
        got = fft_mod._ducc_fft(module, fft_mod.self_check_input(dt, sh), kind, lens)
        out.append(hashlib.sha256(np.ascontiguousarray(got).tobytes()).hexdigest()[:16])
    return tuple(out)


def test_ducc_that_is_not_xlas_is_not_used(monkeypatch):
    """A ducc0 whose numbers are not XLA:CPU's (here NumPy's; the PyPI wheels' -ffast-math or FMA builds)
    fails the self-check: NumPy computes, within the stated tolerance."""
    import sys
    fake = _FakeDucc()
    monkeypatch.setitem(sys.modules, "ducc0", fake)
    monkeypatch.setattr(fft_mod, "_DUCC", [])
    assert fft_mod.ducc_backend() is None
    assert fake.calls  # it was tried


def test_ducc_that_passes_the_self_check_computes(monkeypatch):
    """A ducc0 that reproduces the self-check digests is the kernel, called as XLA's fft_thunk.cc calls
    DUCC: every transformed axis at once, scale 1 forward, 1/N inverse (inorm=2), c2r with the length."""
    import sys
    fake = _FakeDucc()
    monkeypatch.setitem(sys.modules, "ducc0", fake)
    monkeypatch.setattr(fft_mod, "_SELF_CHECK", _digests(fake))
    monkeypatch.setattr(fft_mod, "_DUCC", [])
    assert fft_mod.ducc_backend() is fake
    fake.calls.clear()
    x = (np.arange(24).reshape(2, 3, 4) % 5 - 2).astype(np.complex64)
    fft_mod.fft(x, "IFFT", (3, 4))
    fft_mod.fft(x.real.astype(np.float32), "RFFT", (3, 4))
    fft_mod.fft(x[..., :3], "IRFFT", (3, 4))
    assert fake.calls == [("c2c", (1, 2), False, 2), ("r2c", (1, 2), True, 0), ("c2r", (1, 2), 4, False, 2)]


def test_installed_ducc_is_exact_or_unused():
    """Whatever ducc0 is installed: either it passed the self-check (then golden FFT cases are compared as
    usual) or NumPy computes; the self-check data and the cases agree in length."""
    assert len(fft_mod._SELF_CHECK) == len(fft_mod.SELF_CHECK_CASES)
    b = fft_mod.ducc_backend()
    try:
        import ducc0
    except ImportError:
        assert b is None
        return
    assert b is None or b is ducc0
