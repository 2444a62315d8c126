"""custom-call: the target registry, user targets, TopK, sharding annotations, the LAPACK targets and
the cuDNN convolutions of XLA:GPU dumps.

Expected values: XLA:CPU through JAX (tests/golden/custom_call/, made by
tools/make_custom_call_vectors.py), before- and after-optimization HLO of real JAX programs; for the
cuDNN targets, `before` is the GPU form and the expected values (and `after`) the same computation as
plain JAX convolutions / their VJPs on XLA:CPU.
"""
from __future__ import annotations

import re

import ml_dtypes
import numpy as np
import pytest

import hlo_interp
import hlo_interp.ops.custom_calls as cc
from hlo_interp import HloError

from casedata import cases, params

CASES = cases("custom_call")
SIGNS = [c for c in CASES if c.short.startswith("signs_")]


def _close(got, want, compare, what=""):
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape, what
    assert got.dtype == want.dtype, f"{what}: {got.dtype} != {want.dtype}"
    if compare == "exact" or want.dtype.kind in "iub":
        if want.dtype.kind in "fc" or want.dtype.name in ("bfloat16",):
            g, w = got.astype(np.complex128 if want.dtype.kind == "c" else np.float64), \
                want.astype(np.complex128 if want.dtype.kind == "c" else np.float64)
            assert np.array_equal(np.isnan(g), np.isnan(w)), what
            m = ~np.isnan(g)
            assert np.array_equal(g[m], w[m]), what
            if want.dtype.kind == "f":
                assert np.array_equal(np.signbit(g[m]), np.signbit(w[m])), what
        else:
            assert np.array_equal(got, want), what
        return
    assert np.array_equal(np.isnan(got), np.isnan(want)), what
    m = ~np.isnan(want)
    np.testing.assert_allclose(got[m], want[m], rtol=compare["rtol"], atol=compare["atol"], err_msg=what)


def _eye_like(x, n):
    return np.broadcast_to(np.eye(n, dtype=x.dtype), x.shape[:-2] + (n, n))


def _ct(x):
    return np.conj(np.swapaxes(x, -1, -2))


def _check_determined(check, args, got, want, compare):
    """What LAPACK determines uniquely, for results that are unique only up to signs/phases."""
    rt = compare["rtol"] * 20
    a = args[0].astype(np.complex128)
    if check == "qr":
        q, r = (np.asarray(g).astype(np.complex128) for g in got)
        np.testing.assert_allclose(q @ r, a, rtol=rt, atol=rt)                     # Q·R = A
        np.testing.assert_allclose(_ct(q) @ q, _eye_like(q, q.shape[-1]), atol=rt)  # orthonormal columns
        assert np.allclose(np.tril(r, -1), 0)                                        # R upper triangular
        # |R| is determined (the signs of its rows are LAPACK's convention): equal to XLA's
        np.testing.assert_allclose(np.abs(r), np.abs(want[1]), rtol=rt, atol=rt)
        # our Householder QR follows LAPACK's conventions: the values themselves equal XLA's
        _close(got[0], want[0], compare, "q")
        _close(got[1], want[1], compare, "r")
    elif check == "eigh":
        iv = 0 if np.ndim(got[0]) == a.ndim else 1  # (v, w) from lax.linalg.eigh, (w, v) from jnp.linalg.eigh
        v, w = np.asarray(got[iv]), np.asarray(got[1 - iv])
        want = [want[iv], want[1 - iv]]
        _close(w, want[1], compare, "eigenvalues")
        vc = v.astype(np.complex128)
        herm = (a + _ct(a)) / 2
        np.testing.assert_allclose(herm @ vc, vc * w[..., None, :], atol=rt * 10 * np.abs(w).max())
        np.testing.assert_allclose(_ct(vc) @ vc, _eye_like(vc, vc.shape[-1]), atol=rt)
        # each eigenvector equals XLA's up to a phase: |<v_xla, v>| = 1
        dots = np.abs(np.sum(np.conj(want[0].astype(np.complex128)) * vc, axis=-2))
        np.testing.assert_allclose(dots, 1, atol=rt)
    elif check == "svd":
        u, s, vt = (np.asarray(g) for g in got)
        _close(s, want[1], compare, "singular values")
        k = s.shape[-1]
        uc, vc = u.astype(np.complex128)[..., :, :k], vt.astype(np.complex128)[..., :k, :]
        wu, wvt = want[0].astype(np.complex128)[..., :, :k], want[2].astype(np.complex128)[..., :k, :]
        a_xla = (wu * want[1][..., None, :]) @ wvt  # the matrix XLA decomposed
        np.testing.assert_allclose((uc * s[..., None, :]) @ vc, a_xla, rtol=rt, atol=rt)
        np.testing.assert_allclose(_ct(u.astype(np.complex128)) @ u, _eye_like(u, u.shape[-1]), atol=rt)
        np.testing.assert_allclose(vt @ _ct(vt.astype(np.complex128)), _eye_like(vt, vt.shape[-2]), atol=rt)
    elif check in ("eig", "eigvals"):
        # geev: the order of the eigenvalues and the signs/phases of the vectors depend on LAPACK's build;
        # determined: the eigenvalues as a set, A·v = λ·v, unit vectors, each equal to XLA's up to a phase
        w = np.asarray(got[0]).astype(np.complex128)
        ww = want[0].astype(np.complex128)
        order = np.argsort(np.round(w, 3).real + 1e-3 * np.round(w, 3).imag, axis=-1)
        worder = np.argsort(np.round(ww, 3).real + 1e-3 * np.round(ww, 3).imag, axis=-1)
        np.testing.assert_allclose(np.take_along_axis(w, order, -1), np.take_along_axis(ww, worder, -1),
                                   rtol=rt, atol=rt)
        if check == "eig":
            v = np.asarray(got[1]).astype(np.complex128)
            assert got[1].dtype == want[1].dtype
            np.testing.assert_allclose(a @ v, v * w[..., None, :], atol=rt * 10 * np.abs(w).max())
            np.testing.assert_allclose(np.linalg.norm(v, axis=-2), 1, atol=rt)
            vs = np.take_along_axis(v, order[..., None, :], -1)
            wv = np.take_along_axis(want[1].astype(np.complex128), worder[..., None, :], -1)
            np.testing.assert_allclose(np.abs(np.sum(np.conj(wv) * vs, axis=-2)), 1, atol=rt)
    elif check in ("schur", "schur_t"):
        _check_schur(a, got, want, rt)
    elif check == "eig_left":
        # left eigenvectors: u^H A = lambda u^H, unit norm, XLA's up to a sign/phase (complex matrices: equal,
        # ?geev's normalization makes the largest component real and positive); eigenvalues equal
        _close(got[0], want[0], compare, "eigenvalues")
        w = np.asarray(got[0]).astype(np.complex128)
        u = np.asarray(got[1]).astype(np.complex128)
        assert got[1].dtype == want[1].dtype
        np.testing.assert_allclose(_ct(u) @ a, w[..., :, None] * _ct(u), atol=rt * 10 * np.abs(w).max())
        np.testing.assert_allclose(np.linalg.norm(u, axis=-2), 1, atol=rt)
        np.testing.assert_allclose(np.abs(np.sum(np.conj(want[1].astype(np.complex128)) * u, axis=-2)), 1, atol=rt)
        if a.dtype.kind == "c" and args[0].dtype.kind == "c":
            _close(got[1], want[1], {"rtol": rt, "atol": rt}, "left eigenvectors")
        if len(got) > 2:  # right eigenvectors: XLA's up to a phase
            v = np.asarray(got[2]).astype(np.complex128)
            np.testing.assert_allclose(a @ v, v * w[..., None, :], atol=rt * 10 * np.abs(w).max())
            np.testing.assert_allclose(np.abs(np.sum(np.conj(want[2].astype(np.complex128)) * v, axis=-2)), 1,
                                       atol=rt)
    else:
        raise AssertionError(f"unknown check {check}")


def _blocks(t):
    """The diagonal blocks of a quasi-triangular matrix: [(start, size)]."""
    n, k, out = t.shape[-1], 0, []
    while k < n:
        size = 2 if k + 1 < n and t[k + 1, k] != 0 else 1
        out.append((k, size))
        k += size
    return out


def _canon_sort(w):
    w = np.round(np.asarray(w, np.complex128), 6)
    return w[np.lexsort((w.imag, w.real))]


def args_is_double(x):
    return x.dtype in (np.float64, np.complex128)


def _check_schur(a, got, want, rt):
    """A Schur form is unique up to a unitary (orthogonal) change of basis inside each diagonal block,
    given the order of the eigenvalues: checked are a = z t z^H, z unitary, t (quasi) triangular in
    LAPACK's standard form, the eigenvalues XLA's; in double precision also XLA's order, and then the
    norms of t's blocks equal to XLA's (single precision: NumPy's LAPACK may order them otherwise)."""
    t = np.asarray(got[0])
    wt = np.asarray(want[0])
    assert t.dtype == wt.dtype
    real = t.dtype.kind == "f"
    for i in np.ndindex(t.shape[:-2]):
        ti, wi = t[i].astype(np.complex128), wt[i].astype(np.complex128)
        bl, wbl = _blocks(t[i]), _blocks(wt[i])
        for (s0, n0) in bl:  # (quasi) triangular; LAPACK's standard form of 2x2 blocks: a = d, b*c < 0
            assert np.all(ti[s0 + n0:, s0:s0 + n0] == 0)
            if real and n0 == 2:
                assert ti[s0, s0] == ti[s0 + 1, s0 + 1] and (ti[s0, s0 + 1] * ti[s0 + 1, s0]).real < 0
        ev = [np.linalg.eigvals(ti[s0:s0 + n0, s0:s0 + n0]) for s0, n0 in bl]
        wev = [np.linalg.eigvals(wi[s0:s0 + n0, s0:s0 + n0]) for s0, n0 in wbl]
        # the eigenvalues: XLA's as a set
        np.testing.assert_allclose(_canon_sort(np.concatenate(ev)), _canon_sort(np.concatenate(wev)), rtol=rt, atol=rt)
        same_order = bl == wbl and all(np.allclose([e.sum(), e.prod()], [f.sum(), f.prod()], rtol=rt, atol=rt)
                                       for e, f in zip(ev, wev))
        if args_is_double(wt):
            assert same_order, "the eigenvalue order differs from XLA's"
        if same_order:  # then t is XLA's up to a unitary change of basis inside each block
            for (s0, n0) in bl:
                for (s1, n1) in bl:
                    if s1 >= s0:
                        np.testing.assert_allclose(np.linalg.norm(ti[s0:s0 + n0, s1:s1 + n1]),
                                                   np.linalg.norm(wi[s0:s0 + n0, s1:s1 + n1]), rtol=rt * 10,
                                                   atol=rt * 10)
    if len(got) > 1:
        z = np.asarray(got[1]).astype(np.complex128)
        tc = t.astype(np.complex128)
        np.testing.assert_allclose(z @ tc @ _ct(z), a, atol=rt * 10 * max(1, np.abs(a).max()))
        np.testing.assert_allclose(_ct(z) @ z, _eye_like(z, z.shape[-1]), atol=rt * 10)


@pytest.mark.parametrize("case,stage", params([c for c in CASES if "check" in c.info]))
def test_xla_vectors_determined(case, stage):
    """Results LAPACK determines only up to signs/phases/orders: checked on what is determined (the other
    XLA:CPU cases of this family are run by tests/test_golden.py)."""
    got = hlo_interp.run(case.text(stage), *case.inputs)
    assert len(got) == len(case.expected)
    _check_determined(case.info["check"], case.inputs, got, case.expected, case.info["compare"])


def test_vectors_present():
    names = ("TopK", "potrf", "trsm", "getrf", "geqrf", "orgqr", "ungqr", "syevd", "heevd", "gesdd", "geev",
             "gehrd", "gtsv", "sytrd", "hetrd", "geqp3", "cusolver_potrf", "cusolver_syevd", "cusolver_getrf",
             "cu_lu_pivots_to_permutation", "cusolver_geqrf", "cusolver_orgqr", "cusolver_sytrd", "hipsolver_potrf",
             "hipsolver_syevd", "hipsolver_getrf", "hip_lu_pivots_to_permutation", "hipsolver_geqrf",
             "hipsolver_orgqr", "hipsolver_sytrd", "gesvd", "cusolver_gesvdj", "hipsolver_gesvdj", "cuhybrid_eig_real",
             "cuhybrid_eig_comp", "hiphybrid_eig_real", "cuhybrid_geqp3", "hiphybrid_geqp3", "cusparse_gtsv2",
             "hipsparse_gtsv2", "gees", "__cudnn$convForward", "__cudnn$convBackwardInput",
             "__cudnn$convBackwardFilter", "__cudnn$convBiasActivationForward")
    assert len(CASES) >= 100
    after_targets = set()
    for c in CASES:
        text = c.text("before") + c.text("after")
        after_targets.update(t for t in names if f'custom_call_target="{t}' in text or
                             re.search(f'custom_call_target="lapack_[sdcz]{t}_ffi"', text))
    assert after_targets == set(names)


# --------------------------------------------------------------------------------------------------
# the registry: unknown targets, user targets


def _module(body: str, params: str = "x = f32[2,3] parameter(0)") -> str:
    return f"HloModule m\n\nENTRY main {{\n  {params}\n  {body}\n}}\n"


def test_unknown_target_message():
    text = _module('ROOT c = f32[2,3] custom-call(x), custom_call_target="my_op"')
    with pytest.raises(HloError) as e:
        hlo_interp.run(text, np.zeros((2, 3), np.float32))
    msg = str(e.value)
    assert "'my_op'" in msg and "register_custom_call('my_op', fn)" in msg
    assert msg.startswith("<string>:5:")  # located at the instruction (line 5)


def test_unknown_target_with_unused_result_still_fails():
    # a custom call is kept even when nothing uses it: an unknown one never vanishes silently
    text = _module('c = f32[2,3] custom-call(x), custom_call_target="no_such", custom_call_has_side_effect=true\n'
                   '  ROOT n = f32[2,3] negate(x)')
    with pytest.raises(HloError, match="no_such"):
        hlo_interp.run(text, np.zeros((2, 3), np.float32))


def test_user_target_array_and_backend_config():
    seen = {}

    def fn(x, y, *, backend_config, shape):
        seen["bc"], seen["shape"] = backend_config, shape
        return x * 2 + y  # float64 result: converted to the declared f32
    cc.register("scale_add", fn)
    try:
        text = _module('ROOT c = f32[2,3] custom-call(x, y), custom_call_target="scale_add", '
                       'backend_config="{\\"k\\": 2}"', "x = f32[2,3] parameter(0)\n  y = f32[2,3] parameter(1)")
        x = np.arange(6, dtype=np.float32).reshape(2, 3)
        (r,) = hlo_interp.run(text, x, np.ones((2, 3), np.float32))
        assert r.dtype == np.float32
        np.testing.assert_array_equal(r, [[1, 3, 5], [7, 9, 11]])
        assert seen["bc"] == '{"k": 2}' and tuple(seen["shape"].dims) == (2, 3)
    finally:
        cc.register("scale_add", None)
    with pytest.raises(HloError, match="scale_add"):
        hlo_interp.run(text, x, np.ones((2, 3), np.float32))


def test_user_target_tuple_result_and_errors():
    def split(x, *, backend_config, shape):
        return (x[:, :1], x.sum(axis=1).astype(np.int64))
    cc.register("split", split)
    cc.register("bad_shape", lambda x, **kw: x.T)
    cc.register("raises", lambda x, **kw: 1 / 0)
    try:
        text = _module('ROOT c = (f32[2,1], s32[2]) custom-call(x), custom_call_target="split"')
        r = hlo_interp.run(text, np.array([[1, 2, 3], [4, 5, 6]], np.float32))
        np.testing.assert_array_equal(r[0], [[1], [4]])
        assert r[1].dtype == np.int32
        np.testing.assert_array_equal(r[1], [6, 15])
        with pytest.raises(HloError, match=r"'bad_shape' returned shape \[3, 2\]"):
            hlo_interp.run(_module('ROOT c = f32[2,3] custom-call(x), custom_call_target="bad_shape"'),
                           np.zeros((2, 3), np.float32))
        with pytest.raises(HloError, match="'raises' .*raised ZeroDivisionError"):
            hlo_interp.run(_module('ROOT c = f32[2,3] custom-call(x), custom_call_target="raises"'),
                           np.zeros((2, 3), np.float32))
    finally:
        for n in ("split", "bad_shape", "raises"):
            cc.register(n, None)


def test_user_target_overrides_builtin():
    cc.register("Sharding", lambda x, **kw: x + 1)
    try:
        (r,) = hlo_interp.run(_module('ROOT c = f32[2,3] custom-call(x), custom_call_target="Sharding"'),
                              np.zeros((2, 3), np.float32))
        np.testing.assert_array_equal(r, np.ones((2, 3)))
    finally:
        cc.register("Sharding", None)
    (r,) = hlo_interp.run(_module('ROOT c = f32[2,3] custom-call(x), custom_call_target="Sharding"'),
                          np.zeros((2, 3), np.float32))
    np.testing.assert_array_equal(r, np.zeros((2, 3)))


def test_backend_config_mlir_dict():
    m = hlo_interp.parse(_module('ROOT c = f32[2,3] custom-call(x), custom_call_target="t", '
                                 'backend_config={diag = 85 : ui8, flag = true, name = "a,b", f = 1.5 : f32, '
                                 'arr = array<i64: 1, 2>, n = -3 : i32}'))
    assert cc.backend_config_dict(m.entry.root) == {"diag": 85, "flag": True, "name": "a,b", "f": 1.5,
                                                    "arr": "array<i64: 1, 2>", "n": -3}


# --------------------------------------------------------------------------------------------------
# sharding annotations, TopK with a comparator


def test_sharding_targets_identity():
    for t in ("Sharding", "SPMDFullToShardShape", "SPMDShardToFullShape", "xla.sdy.FuncResultSharding"):
        x = np.array([[1, -2, 3], [4, 5, -6]], np.float32)
        (r,) = hlo_interp.run(_module(f'ROOT c = f32[2,3] custom-call(x), custom_call_target="{t}", '
                                      f'sharding={{replicated}}'), x)
        np.testing.assert_array_equal(r, x)


def test_sharding_shape_change_refused():
    text = _module('ROOT c = f32[1,3] custom-call(x), custom_call_target="SPMDFullToShardShape", sharding={manual}')
    with pytest.raises(HloError, match="multi-device run"):
        hlo_interp.run(text, np.zeros((2, 3), np.float32))


_TOPK_CMP = """HloModule m

cmp {{
  {params}
  ROOT c = pred[] compare(a, b), direction={dir}
}}

ENTRY main {{
  x = {t}[2,6] parameter(0)
  ROOT r = ({t}[2,3], s32[2,3]) custom-call(x), custom_call_target="TopK", called_computations={{cmp}}
}}
"""


@pytest.mark.parametrize("nparams", [2, 4])
@pytest.mark.parametrize("t,dtype", [("s32", np.int32), ("bf16", ml_dtypes.bfloat16), ("f64", np.float64),
                                     ("u8", np.uint8)])
def test_topk_comparator_non_f32(nparams, t, dtype):
    # XLA:CPU compiles TopK for f32 only; other types follow XLA's TopK decomposition: a stable sort by the
    # comparator, then the first k (lower index first among equal values).
    params = f"a = {t}[] parameter(0)\n  b = {t}[] parameter(1)"
    if nparams == 4:
        params += "\n  ia = s32[] parameter(2)\n  ib = s32[] parameter(3)"
    x = np.array([[3, 1, 3, 7, 0, 7], [2, 2, 2, 2, 2, 9]]).astype(dtype)
    v, i = hlo_interp.run(_TOPK_CMP.format(params=params, dir="GT", t=t), x)
    np.testing.assert_array_equal(i, [[3, 5, 0], [5, 0, 1]])
    np.testing.assert_array_equal(v.astype(np.float64), [[7, 7, 3], [9, 2, 2]])
    v, i = hlo_interp.run(_TOPK_CMP.format(params=params, dir="LT", t=t), x)   # a "smallest k" comparator
    np.testing.assert_array_equal(i, [[4, 1, 0], [0, 1, 2]])
    assert v.dtype == np.dtype(dtype)


def test_topk_f32_is_runtime_total_order():
    # f32: XLA:CPU's runtime TopK: total order (+NaN first, +0 before -0), whatever the comparator says
    x = np.array([[1, np.nan, -0.0, 0.0, 5, -np.nan]], np.float32)
    params = "a = f32[] parameter(0)\n  b = f32[] parameter(1)"
    v, i = hlo_interp.run(_TOPK_CMP.format(params=params, dir="LT", t="f32").replace("[2,", "[1,"), x)
    np.testing.assert_array_equal(i, [[1, 4, 0]])
    np.testing.assert_array_equal(v, [[np.nan, 5, 1]])


def test_topk_bad_shapes():
    text = ('HloModule m\n\nENTRY main {\n  x = f32[2,6] parameter(0)\n  ROOT r = (f32[2,7], s32[2,7]) '
            'custom-call(x), custom_call_target="TopK"\n}\n')
    with pytest.raises(HloError, match="does not fit"):
        hlo_interp.run(text, np.zeros((2, 6), np.float32))


# --------------------------------------------------------------------------------------------------
# LAPACK targets: worked examples and refusals


def _lapack(target, ret, params, cfg="{}", extra=""):
    return (f"HloModule m\n\nENTRY main {{\n  {params}\n  ROOT r = {ret} custom-call({extra}), "
            f"custom_call_target=\"{target}\", api_version=API_VERSION_TYPED_FFI, backend_config={cfg}\n}}\n")


def test_getrf_worked_example():
    # LAPACK: a = P·L·U; the pivot is the largest |a| in the column, the first one on ties
    a = np.array([[1, 2], [3, 4]], np.float64)
    lu, piv, info = hlo_interp.run(_lapack("lapack_dgetrf_ffi", "(f64[2,2], s32[2], s32[])",
                                           "a = f64[2,2] parameter(0)", extra="a"), a)
    np.testing.assert_allclose(lu, [[3, 4], [1 / 3, 2 / 3]], rtol=1e-15)
    np.testing.assert_array_equal(piv, [2, 2])
    assert info == 0
    lu, piv, info = hlo_interp.run(_lapack("lapack_dgetrf_ffi", "(f64[2,2], s32[2], s32[])",
                                           "a = f64[2,2] parameter(0)", extra="a"), np.zeros((2, 2)))
    assert info == 1 and list(piv) == [1, 2]


def test_potrf_worked_example_and_info():
    a = np.array([[4, 2], [2, 5]], np.float32)
    f, info = hlo_interp.run(_lapack("lapack_spotrf_ffi", "(f32[2,2], s32[])", "a = f32[2,2] parameter(0)",
                                     "{uplo = 76 : ui8}", "a"), a)
    np.testing.assert_array_equal(f, [[2, 2], [1, 2]])  # the upper triangle keeps a's values
    assert info == 0
    f, info = hlo_interp.run(_lapack("lapack_spotrf_ffi", "(f32[2,2], s32[])", "a = f32[2,2] parameter(0)",
                                     "{uplo = 85 : ui8}", "a"), np.array([[1, 2], [2, 1]], np.float32))
    assert info == 2


def test_lapack_refusals():
    with pytest.raises(HloError, match="must be f32"):
        hlo_interp.run(_lapack("lapack_spotrf_ffi", "(f64[2,2], s32[])", "a = f64[2,2] parameter(0)",
                               "{uplo = 76 : ui8}", "a"), np.eye(2))
    with pytest.raises(HloError, match="uplo='X'"):
        hlo_interp.run(_lapack("lapack_spotrf_ffi", "(f32[2,2], s32[])", "a = f32[2,2] parameter(0)",
                               "{uplo = 88 : ui8}", "a"), np.eye(2, dtype=np.float32))
    with pytest.raises(HloError, match="lapack_sgtsv_ffi"):  # not implemented: the unknown-target message
        hlo_interp.run(_lapack("lapack_sgtsv_ffi", "f32[2,2]", "a = f32[2,2] parameter(0)", "{}", "a"),
                       np.eye(2, dtype=np.float32))


# --------------------------------------------------------------------------------------------------
# cuBLAS GEMM targets (XLA:GPU dumps; no GPU here: expected values from the GemmBackendConfig semantics,
# alpha·dot + beta·c, then the epilogue)

_GEMM_DN = ('"dot_dimension_numbers":{{"lhs_contracting_dimensions":["{lc}"],"rhs_contracting_dimensions":["{rc}"],'
            '"lhs_batch_dimensions":[{lb}],"rhs_batch_dimensions":[{rb}]}}')


def _gemm_cfg(alpha=1, beta=0, epilogue="DEFAULT", lc=1, rc=0, lb="", rb="", nested=True):
    body = (f'"alpha_real":{alpha},"alpha_imag":0,"beta":{beta},' + _GEMM_DN.format(lc=lc, rc=rc, lb=lb, rb=rb) +
            f',"precision_config":{{"operand_precision":["DEFAULT","DEFAULT"]}},"epilogue":"{epilogue}"')
    if nested:
        return '{"operation_queue_id":"0","wait_on_operation_queues":[],"gemm_backend_config":{' + body + '}}'
    return "{" + body + "}"


def test_cublas_gemm_alpha_beta_workspace():
    text = ("HloModule m\n\nENTRY e {\n  a = f32[2,3] parameter(0)\n  b = f32[3,4] parameter(1)\n"
            "  c = f32[2,4] parameter(2)\n  g = (f32[2,4], s8[16]{0}) custom-call(a, b, c), "
            f'custom_call_target="__cublas$gemm", backend_config={_gemm_cfg(2, 0.5)}\n'
            "  ROOT r = f32[2,4] get-tuple-element(g), index=0\n}\n")
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    b = np.arange(12, dtype=np.float32).reshape(3, 4)
    (r,) = hlo_interp.run(text, a, b, np.ones((2, 4), np.float32))
    np.testing.assert_array_equal(r, [[40.5, 46.5, 52.5, 58.5], [112.5, 136.5, 160.5, 184.5]])


def test_cublas_gemm_batch_bf16_old_config():
    text = ("HloModule m\n\nENTRY e {\n  a = bf16[2,3,2] parameter(0)\n  b = bf16[2,3,2] parameter(1)\n"
            "  ROOT g = bf16[2,2,2] custom-call(a, b), custom_call_target=\"__cublas$gemm\", "
            f"backend_config={_gemm_cfg(lc=1, rc=1, lb='0', rb='0', nested=False)}\n}}\n")
    a = np.arange(12).reshape(2, 3, 2).astype(ml_dtypes.bfloat16)
    b = (np.arange(12).reshape(2, 3, 2) - 5).astype(ml_dtypes.bfloat16)
    (r,) = hlo_interp.run(text, a, b)
    assert r.dtype == ml_dtypes.bfloat16
    want = np.einsum("bki,bkj->bij", a.astype(np.float32), b.astype(np.float32))
    np.testing.assert_array_equal(r.astype(np.float32), want)


def test_cublaslt_bias_relu_and_refusal():
    text = ("HloModule m\n\nENTRY e {\n  a = f32[2,2] parameter(0)\n  b = f32[2,3] parameter(1)\n"
            "  bias = f32[3] parameter(2)\n  ROOT g = f32[2,3] custom-call(a, b, bias), "
            f'custom_call_target="__cublas$lt$matmul", backend_config={_gemm_cfg(epilogue="BIAS_RELU")}\n}}\n')
    a = np.array([[1, 2], [-3, 1]], np.float32)
    b = np.array([[1, 0, 2], [0, 1, -1]], np.float32)
    (r,) = hlo_interp.run(text, a, b, np.array([0, -1, 10], np.float32))
    np.testing.assert_array_equal(r, [[1, 1, 10], [0, 0, 3]])
    with pytest.raises(HloError, match="epilogue GELU"):
        hlo_interp.run(text.replace("BIAS_RELU", "GELU").replace("a, b, bias", "a, b"), a, b,
                       np.zeros(3, np.float32))


def test_geqp3_fixed_columns():
    # jpvt != 0 moves those columns to the front (in order) before the pivoted QR of the others
    text = ("HloModule m\n\nENTRY main {\n  a = f64[2,5,4] parameter(0)\n  p = s32[2,4] parameter(1)\n"
            "  ROOT r = (f64[2,5,4], s32[2,4], f64[2,4]) custom-call(a, p), custom_call_target=\"lapack_dgeqp3_ffi\", "
            "api_version=API_VERSION_TYPED_FFI, backend_config={}\n}\n")
    rng = np.random.default_rng(1)
    a = rng.standard_normal((2, 5, 4))
    a[:, :, 0] *= 10  # the largest column: first among the free ones
    qr, jp, tau = hlo_interp.run(text, a, np.array([[0, 1, 0, 1], [0, 0, 1, 0]], np.int32))
    assert jp[0, :2].tolist() == [2, 4] and jp[1, 0] == 3
    assert sorted(jp[0].tolist()) == [1, 2, 3, 4] and jp[0, 2] == 1 and jp[1, 1] == 1
    from hlo_interp.ops.custom_calls.lapack import orgqr
    q = orgqr(qr, tau)
    r = np.triu(qr)[:, :4, :]
    np.testing.assert_allclose(q @ r, np.take_along_axis(a, (jp - 1)[:, None, :], -1), atol=1e-12)


# --------------------------------------------------------------------------------------------------
# LAPACK: the vectors LAPACK alone decides (signs of singular vectors and eigenvectors, phases, Schur
# vectors) are XLA's.  hlo_interp calls SciPy's LAPACK with jaxlib's arguments (jaxlib's kernels are
# SciPy's LAPACK); NumPy's linalg, which computes f32 in f64, flipped some of these (tests/golden/custom_call/
# signs_*: batches chosen so that it did).

# per case kind: (result index, axis along which a vector runs) of the results holding vectors
_VECTORS = {"svd": [(0, -2), (2, -1)], "eigh": [(1, -2)], "eig": [(1, -2)], "gees": [(1, -2)]}


def test_sign_vectors_present():
    assert {c.short.split("_")[1] for c in SIGNS} == set(_VECTORS)
    assert any(c.short.endswith("float32") for c in SIGNS)


@pytest.mark.parametrize("case,stage", params(SIGNS))
def test_lapack_vector_signs_are_xlas(case, stage):
    want, meta = case.expected, case.info
    got = hlo_interp.run(case.text(stage), *case.inputs)
    assert len(got) == len(want)
    for idx, axis in _VECTORS[case.short.split("_")[1]]:
        g, w = np.asarray(got[idx]).astype(np.complex128), want[idx].astype(np.complex128)
        # every vector points XLA's way: <w, g> = |w|^2 (a flipped sign would give -|w|^2, a phase e^it·|w|^2)
        dots = np.sum(np.conj(w) * g, axis=axis)
        np.testing.assert_allclose(dots, np.sum(np.abs(w) ** 2, axis=axis), rtol=1e-4, atol=1e-4)
    for i, (g, w) in enumerate(zip(got, want)):  # and everything else equals XLA's (to f32 rounding)
        _close(g, w, meta["compare"], f"out{i}")


def _geev_module(dt, n, batch, left="N", right="V"):
    real = dt in ("f32", "f64")
    c = {"f32": "c64", "f64": "c128"}.get(dt, dt)
    b = f"{batch}," if batch else ""
    vals = f"{dt}[{b}{n}], {dt}[{b}{n}]" if real else f"{dt}[{b}{n}]"
    info = f"s32[{batch}]" if batch else "s32[]"
    ret = f"({vals}, {c}[{b}{n},{n}], {c}[{b}{n},{n}], {info})"
    t = {"f32": "s", "f64": "d", "c64": "c", "c128": "z"}[dt]
    return _lapack(f"lapack_{t}geev_ffi", ret, f"a = {dt}[{b}{n},{n}] parameter(0)",
                   f"{{compute_left = {ord(left)} : ui8, compute_right = {ord(right)} : ui8}}", "a")


def test_lapack_geev_nonfinite_matrix_and_left_vectors():
    # jaxlib does not give a non-finite matrix to ?geev: info -4 (NaN here); the others in the batch are fine
    rng = np.random.default_rng(3)
    a = rng.standard_normal((2, 4, 4)).astype(np.float32)
    a[1, 2, 0] = np.inf
    wr, wi, vl, vr, info = hlo_interp.run(_geev_module("f32", 4, 2, "V", "V"), a)
    assert info.tolist() == [0, -4]
    assert np.isnan(wr[1]).all() and np.isnan(vr[1]).all() and np.isnan(vl[1]).all()
    w = wr[0].astype(np.complex128) + 1j * wi[0]
    x = a[0].astype(np.complex128)
    np.testing.assert_allclose(x @ vr[0], vr[0] * w, atol=1e-4)                       # A v = λ v
    np.testing.assert_allclose(_ct(vl[0]) @ x, w[:, None] * _ct(vl[0]), atol=1e-4)   # uᴴ A = λ uᴴ
    np.testing.assert_allclose(np.linalg.norm(vl[0], axis=0), 1, rtol=1e-5)
    # complex conjugate pairs are unpacked into conjugate columns, as jaxlib does
    pairs = np.nonzero(wi[0] > 0)[0]
    for j in pairs:
        np.testing.assert_array_equal(vr[0][:, j + 1], np.conj(vr[0][:, j]))
    # compute_right = N: the right vectors are zeros
    *_, vr2, info2 = hlo_interp.run(_geev_module("f32", 4, 2, "N", "N"), a)
    assert not vr2[0].any() and info2.tolist() == [0, -4]


def test_lapack_eigh_svd_failure_is_nan_with_info():
    a = np.ones((2, 3, 3), np.float32)
    a[1, 0, 0] = np.nan
    v, w, info = hlo_interp.run(_lapack("lapack_ssyevd_ffi", "(f32[2,3,3], f32[2,3], s32[2])",
                                        "a = f32[2,3,3] parameter(0)", "{mode = 86 : ui8, uplo = 76 : ui8}", "a"), a)
    assert info[0] == 0 and info[1] != 0
    assert np.isnan(w[1]).all() and np.isnan(v[1]).all()
    np.testing.assert_allclose(w[0], [0, 0, 3], atol=1e-6)
    _, s, u, vt, info = hlo_interp.run(_lapack("lapack_sgesdd_ffi",
                                               "(f32[2,3,3], f32[2,3], f32[2,3,3], f32[2,3,3], s32[2])",
                                               "a = f32[2,3,3] parameter(0)", "{mode = 65 : ui8}", "a"), a)
    assert info[0] == 0 and info[1] != 0
    assert np.isnan(s[1]).all() and np.isnan(u[1]).all() and np.isnan(vt[1]).all()
    np.testing.assert_allclose(s[0], [3, 0, 0], atol=1e-6)


def test_lapack_gees_nonfinite_matrix():
    text = _lapack("lapack_dgees_ffi", "(f64[2,3,3], f64[2,3,3], f64[2,3], f64[2,3], s32[2], s32[2])",
                   "a = f64[2,3,3] parameter(0)", "{mode = 86 : ui8, sort = 78 : ui8}", "a")
    a = np.random.default_rng(4).standard_normal((2, 3, 3))
    a[0, 1, 1] = np.nan
    t, vs, wr, wi, sdim, info = hlo_interp.run(text, a)
    assert info.tolist() == [1, 0] and sdim.tolist() == [0, 0]
    assert np.isnan(t[0]).all() and np.isnan(vs[0]).all()
    np.testing.assert_allclose(vs[1] @ t[1] @ vs[1].T, a[1], atol=1e-12)
    np.testing.assert_allclose(vs[1].T @ vs[1], np.eye(3), atol=1e-12)


# --------------------------------------------------------------------------------------------------
# cuDNN: a module as XLA's own GPU tests write it (layouts, the unquoted old backend_config)

_XLA_BWD_INPUT = """HloModule TestModule

%TestComputation1 (param_0: f32[1,20,257], param_1: f32[31,257,136]) -> (f32[1,23,136], u8[0]) {
  %param_0 = f32[1,20,257]{2,1,0} parameter(0)
  %copy.3 = f32[1,20,257]{1,2,0} copy(f32[1,20,257]{2,1,0} %param_0)
  %param_1 = f32[31,257,136]{2,1,0} parameter(1)
  %copy.4 = f32[31,257,136]{0,2,1} copy(f32[31,257,136]{2,1,0} %param_1)
  %custom-call.1 = (f32[1,23,136]{1,2,0}, u8[0]{0}) custom-call(f32[1,20,257]{1,2,0} %copy.3, f32[31,257,136]{0,2,1} %copy.4), window={size=31 stride=2 pad=23_23}, dim_labels=b0f_0oi->b0f, custom_call_target="__cudnn$convBackwardInput", backend_config="{conv_result_scale:1}"
  %get-tuple-element.2 = f32[1,23,136]{1,2,0} get-tuple-element((f32[1,23,136]{1,2,0}, u8[0]{0}) %custom-call.1), index=0
  %copy.5 = f32[1,23,136]{2,1,0} copy(f32[1,23,136]{1,2,0} %get-tuple-element.2)
  %get-tuple-element.3 = u8[0]{0} get-tuple-element((f32[1,23,136]{1,2,0}, u8[0]{0}) %custom-call.1), index=1
  ROOT %tuple.1 = (f32[1,23,136]{2,1,0}, u8[0]{0}) tuple(f32[1,23,136]{2,1,0} %copy.5, u8[0]{0} %get-tuple-element.3)
}
"""

_FWD_1D = """HloModule fwd
ENTRY e {
  x = f32[1,23,136] parameter(0)
  w = f32[31,257,136] parameter(1)
  ROOT y = f32[1,20,257] convolution(x, w), window={size=31 stride=2 pad=23_23}, dim_labels=b0f_0oi->b0f
}
"""


def test_cudnn_backward_input_xla_test_module_is_the_adjoint():
    # XLA's gpu convolution regression test module: dx = convBackwardInput(dy, w) must be the adjoint of
    # the forward convolution (hlo_interp's, checked against XLA:CPU elsewhere): <conv(x, w), dy> = <x, dx>
    rng = np.random.default_rng(3)
    dy = rng.standard_normal((1, 20, 257)).astype(np.float32)
    w = rng.standard_normal((31, 257, 136)).astype(np.float32)
    x = rng.standard_normal((1, 23, 136)).astype(np.float32)
    dx, scratch = hlo_interp.run(_XLA_BWD_INPUT, dy, w)
    assert dx.shape == (1, 23, 136) and scratch.shape == (0,) and scratch.dtype == np.uint8
    (y,) = hlo_interp.run(_FWD_1D, x, w)
    lhs = float(np.sum(y.astype(np.float64) * dy))
    rhs = float(np.sum(x.astype(np.float64) * dx))
    assert abs(lhs - rhs) <= 1e-4 * max(1.0, abs(lhs))


# --------------------------------------------------------------------------------------------------
# SliceToDynamic / PadToStatic

_DYN = """HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = f32[] add(a, b)
}
ENTRY e {
  x = f32[3,4] parameter(0)
  n = s32[] parameter(1)
  m = s32[] parameter(2)
  d = f32[<=3,<=4] custom-call(x, n, m), custom_call_target="SliceToDynamic"
  z = f32[] constant(0)
  r = f32[<=3] reduce(d, z), dimensions={1}, to_apply=add
  g = s32[] get-dimension-size(d), dimensions={1}
  p = (f32[3,4], s32[], s32[]) custom-call(d), custom_call_target="PadToStatic"
  ROOT t = (f32[<=3], s32[], (f32[3,4], s32[], s32[])) tuple(r, g, p)
}"""


def test_slice_to_dynamic_pad_to_static():
    x = np.arange(1, 13, dtype=np.float32).reshape(3, 4)
    r, g, p, n0, n1 = hlo_interp.run(_DYN, x, np.int32(2), np.int32(3))
    # the reduce sees the 2x3 dynamic array; the f32[<=3] result comes back as its bound-sized buffer
    # (XLA:CPU's convention; the element past the dynamic size 2 is undefined in XLA, zero here)
    np.testing.assert_array_equal(r, [1 + 2 + 3, 5 + 6 + 7, 0])
    assert int(g) == 3 and int(n0) == 2 and int(n1) == 3
    np.testing.assert_array_equal(p, [[1, 2, 3, 0], [5, 6, 7, 0], [0, 0, 0, 0]])  # padding: zeros
    with pytest.raises(HloError, match="SliceToDynamic size 5"):
        hlo_interp.run(_DYN, x, np.int32(2), np.int32(5))




# --------------------------------------------------------------------------------------------------
# cuDNN: what is refused

def _cudnn(target="__cudnn$convForward", t="f32", cfg='{"cudnn_conv_backend_config":{"activation_mode":"kNone"}}',
           ops="x, w", extra="", out=None):
    out = out or t
    return f"""HloModule m
ENTRY e {{
  x = {t}[1,4,4,2] parameter(0)
  w = {t}[3,3,2,2] parameter(1)
  b = f32[2] parameter(2)
  c = ({out}[1,4,4,2], u8[0]) custom-call({ops}), window={{size=3x3 pad=1_1x1_1}}, dim_labels=b01f_01io->b01f{extra}, custom_call_target="{target}", backend_config={cfg}
  ROOT r = {out}[1,4,4,2] get-tuple-element(c), index=0
}}"""


def test_cudnn_refusals_and_worked_example():
    x = np.zeros((1, 4, 4, 2), np.float32)
    x[0, 1, 1, 0] = 1.0
    w = np.arange(36, dtype=np.float32).reshape(3, 3, 2, 2)
    b = np.array([0.5, -100.0], np.float32)
    # a single 1 at (1,1) feature 0: y[p, q, o] = w[1 - p + 1, 1 - q + 1, 0, o] (cross-correlation), + bias
    y = hlo_interp.run(_cudnn("__cudnn$convBiasActivationForward", ops="x, w, b",
                              cfg='{"cudnn_conv_backend_config":{"activation_mode":"kRelu","conv_result_scale":1}}'),
                       x, w, b)[0]
    want = np.zeros((1, 4, 4, 2), np.float32)
    for p in range(3):
        for q in range(3):
            want[0, p, q] = w[2 - p, 2 - q, 0]
    np.testing.assert_array_equal(y, np.maximum(want + b, 0))
    with pytest.raises(HloError, match="activation_mode kGeluExact"):
        hlo_interp.run(_cudnn("__cudnn$convBiasActivationForward", ops="x, w, b",
                              cfg='{"cudnn_conv_backend_config":{"activation_mode":"kGeluExact"}}'), x, w, b)
    # s8 x s8 -> f32 (XLA's int8 pattern: the convolution exact in s32): the single 1 picks w's entries
    (y8,) = hlo_interp.run(_cudnn(t="s8", out="f32"), x.astype(np.int8), w.astype(np.int8), b)
    np.testing.assert_array_equal(y8, want)
    with pytest.raises(HloError, match="integer convolutions"):     # an s8 result: cuDNN's rounding
        hlo_interp.run(_cudnn(t="s8", out="s8"), x.astype(np.int8), w.astype(np.int8), b)
    with pytest.raises(HloError, match="batch_group_count"):
        hlo_interp.run(_cudnn(extra=", batch_group_count=2"), x, w, b)


ONEDNN_LN = """HloModule m
ENTRY e {{ x = f32[2,3] parameter(0)  g = f32[3] parameter(1)  b = f32[3] parameter(2)
  ROOT r = f32[2,3] custom-call(x, g, b), custom_call_target="__onednn$layernorm", backend_config={cfg} }}"""


def test_onednn_layernorm_xla_thunk_test_values():
    """XLA's own expectation (onednn_op_thunk_test.cc, SimpleOneDnnLayerNormThunk): rows [1,2,3] and
    [4,5,6], scale 1, shift 0, eps 1e-5 give +-sqrt(3/2) and 0 within 1e-4.  The XLA:CPU-computed cases
    are tests/golden/custom_call/onednn_layernorm_*."""
    cfg = '{"onednn_layer_norm_config":{"rescale":"SCALE_AND_SHIFT","epsilon_typecast":"925353388"}}'
    x = np.array([[1, 2, 3], [4, 5, 6]], np.float32)
    got = hlo_interp.run(ONEDNN_LN.format(cfg=cfg), x, np.ones(3, np.float32), np.zeros(3, np.float32))[0]
    ref = np.float32(1.2247449)
    np.testing.assert_allclose(got, [[-ref, 0, ref], [-ref, 0, ref]], atol=1e-4)
    assert got[0, 1] == 0


def test_onednn_layernorm_needs_epsilon():
    with pytest.raises(HloError, match="epsilon_typecast") as e:
        hlo_interp.run(ONEDNN_LN.format(cfg='{"onednn_layer_norm_config":{"rescale":"SCALE_AND_SHIFT"}}'),
                       np.zeros((2, 3), np.float32), np.ones(3, np.float32), np.zeros(3, np.float32))
    assert ":3:" in str(e.value)
