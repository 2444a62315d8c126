"""The evaluator core (hlo_interp/evaluator.py) and the control-flow kernels (hlo_interp/ops/control.py).

Expected values of the while/conditional/call/fusion modules below were computed by XLA:CPU (jaxlib 0.10.2:
the HLO text parsed by XLA's parser, converted to StableHLO, compiled and run) and are written down as
literals.  Bitcast cannot go through that route (XLA refuses bitcast before layout assignment), so its
expected values are derived from the definition: a bitcast reinterprets the physical buffer.
"""
from __future__ import annotations

import gc
import warnings
import weakref

import ml_dtypes
import numpy as np
import pytest

import hlo_interp
from hlo_interp import HloError
from hlo_interp import evaluator
from hlo_interp.ops import load_all
from hlo_interp.ops.registry import KERNELS

load_all()

f32 = np.float32


def run(text, *args, **kw):
    kw.setdefault("validate", True)
    return hlo_interp.run(hlo_interp.parse(text, "test.hlo"), *args, **kw)


# --------------------------------------------------------------------------------------------------
# while

FORI = """HloModule fori

body {
  p = (s32[], f32[4]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  x = f32[4] get-tuple-element(p), index=1
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  k = f32[] constant(1.5)
  kb = f32[4] broadcast(k), dimensions={}
  xm = f32[4] multiply(x, kb)
  fi = f32[] convert(i)
  fib = f32[4] broadcast(fi), dimensions={}
  x1 = f32[4] add(xm, fib)
  ROOT t = (s32[], f32[4]) tuple(i1, x1)
}

cond {
  p = (s32[], f32[4]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(7)
  ROOT lt = pred[] compare(i, n), direction=LT
}

ENTRY main {
  x = f32[4] parameter(0)
  start = s32[] parameter(1)
  init = (s32[], f32[4]) tuple(start, x)
  ROOT w = (s32[], f32[4]) while(init), condition=cond, body=body
}
"""


@pytest.mark.parametrize("start, expected", [
    (0, [67.42969, 16.171875, 54.615234, 101.60156]),
    (3, [37.6875, 22.5, 33.890625, 47.8125]),
    (9, [1.0, -2.0, 0.25, 3.0]),  # the condition is false at once: the init comes back
])
def test_while_fori_loop(start, expected):
    i, x = run(FORI, np.array([1, -2, 0.25, 3], f32), np.int32(start))
    assert i.dtype == np.int32 and int(i) == max(start, 7)
    assert x.dtype == np.float32
    np.testing.assert_array_equal(x, np.array(expected, f32))


NESTED = """HloModule nested

inner_body {
  p = (s32[], s32[]) parameter(0)
  j = s32[] get-tuple-element(p), index=0
  acc = s32[] get-tuple-element(p), index=1
  one = s32[] constant(1)
  j1 = s32[] add(j, one)
  acc1 = s32[] add(acc, j)
  ROOT t = (s32[], s32[]) tuple(j1, acc1)
}

inner_cond {
  p = (s32[], s32[]) parameter(0)
  j = s32[] get-tuple-element(p), index=0
  n = s32[] constant(4)
  ROOT lt = pred[] compare(j, n), direction=LT
}

outer_body {
  p = (s32[], s32[]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  acc = s32[] get-tuple-element(p), index=1
  zero = s32[] constant(0)
  init = (s32[], s32[]) tuple(zero, acc)
  w = (s32[], s32[]) while(init), condition=inner_cond, body=inner_body
  acc2 = s32[] get-tuple-element(w), index=1
  acc3 = s32[] multiply(acc2, i)
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  ROOT t = (s32[], s32[]) tuple(i1, acc3)
}

outer_cond {
  p = (s32[], s32[]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(5)
  ROOT lt = pred[] compare(i, n), direction=LT
}

ENTRY main {
  a = s32[] parameter(0)
  one = s32[] constant(1)
  init = (s32[], s32[]) tuple(one, a)
  w = (s32[], s32[]) while(init), condition=outer_cond, body=outer_body
  ROOT r = s32[] get-tuple-element(w), index=1
}
"""


def test_nested_while():
    (r,) = run(NESTED, np.int32(2))
    assert r.dtype == np.int32 and int(r) == 432  # XLA:CPU


SPEC_WHILE = """HloModule spec_while

body {
  p = (s32[], f32[10]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  v = f32[10] get-tuple-element(p), index=1
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  c = f32[10] constant({1, 1, 1, 1, 1, 1, 1, 1, 1, 1})
  v1 = f32[10] add(v, c)
  ROOT t = (s32[], f32[10]) tuple(i1, v1)
}

cond {
  p = (s32[], f32[10]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(1000)
  ROOT lt = pred[] compare(i, n), direction=LT
}

ENTRY main {
  zero = s32[] constant(0)
  z = f32[] constant(0)
  zeros = f32[10] broadcast(z), dimensions={}
  init = (s32[], f32[10]) tuple(zero, zeros)
  ROOT w = (s32[], f32[10]) while(init), condition=cond, body=body
}
"""


def test_while_spec_example_ex43():
    # the While worked example of XLA's operation semantics (EX-43): (0, zeros) -> (1000, 1000 * constant_vector); XLA:CPU agrees.
    i, v = run(SPEC_WHILE)
    assert int(i) == 1000
    np.testing.assert_array_equal(v, np.full(10, 1000, f32))


def test_while_max_iterations_guard():
    with pytest.raises(HloError) as e:
        run(SPEC_WHILE, max_iterations=10)
    assert "while loop still running after 10 iterations" in e.value.message
    assert e.value.line == 26 and e.value.filename == "test.hlo"
    # exactly the limit is fine
    i, _ = run(SPEC_WHILE, max_iterations=1000)
    assert int(i) == 1000


# --------------------------------------------------------------------------------------------------
# conditional

COND = """HloModule cond

b0 {
  p = (f32[3], s32[]) parameter(0)
  x = f32[3] get-tuple-element(p), index=0
  ROOT n = f32[3] negate(x)
}

b1 {
  p = f32[3] parameter(0)
  two = f32[] constant(2)
  t = f32[3] broadcast(two), dimensions={}
  ROOT m = f32[3] multiply(p, t)
}

b2 {
  p = f32[] parameter(0)
  ROOT b = f32[3] broadcast(p), dimensions={}
}

tb {
  p = f32[3] parameter(0)
  e = f32[3] exponential(p)
  ROOT t = (f32[3], f32[3]) tuple(e, p)
}

fb {
  p = f32[3] parameter(0)
  f = f32[3] floor(p)
  ROOT t = (f32[3], f32[3]) tuple(p, f)
}

ENTRY main {
  idx = s32[] parameter(0)
  x = f32[3] parameter(1)
  pr = pred[] parameter(2)
  s = f32[] constant(7.25)
  tp = (f32[3], s32[]) tuple(x, idx)
  c1 = f32[3] conditional(idx, tp, x, s), branch_computations={b0, b1, b2}
  c2 = (f32[3], f32[3]) conditional(pr, x, x), true_computation=tb, false_computation=fb
  ROOT r = (f32[3], (f32[3], f32[3])) tuple(c1, c2)
}
"""

_X3 = np.array([0.5, -1.25, 2], f32)


@pytest.mark.parametrize("idx, expected", [
    (0, [-0.5, 1.25, -2.0]),
    (1, [1.0, -2.5, 4.0]),
    (2, [7.25, 7.25, 7.25]),
    (3, [7.25, 7.25, 7.25]),     # out of range: the last branch (XLA:CPU)
    (100, [7.25, 7.25, 7.25]),
    (-3, [7.25, 7.25, 7.25]),    # negative: the last branch too
])
def test_conditional_index_form(idx, expected):
    c1, _, _ = run(COND, np.int32(idx), _X3, np.bool_(True))
    np.testing.assert_array_equal(c1, np.array(expected, f32))


def test_conditional_pred_form_tuple_result():
    _, a, b = run(COND, np.int32(0), _X3, np.bool_(True))
    # exp: XLA:CPU's own approximation; 1 ulp tolerance in f32
    np.testing.assert_allclose(a, np.array([1.6487212, 0.2865048, 7.389056], f32), rtol=2e-7)
    np.testing.assert_array_equal(b, _X3)
    _, a, b = run(COND, np.int32(0), _X3, np.bool_(False))
    np.testing.assert_array_equal(a, _X3)
    np.testing.assert_array_equal(b, np.array([0, -2, 2], f32))


def test_conditional_runs_only_the_chosen_branch(monkeypatch):
    calls = []

    def counting_negate(ins, ctx):
        def run_(x):
            calls.append(ins.name)
            return np.negative(x)
        return run_
    monkeypatch.setitem(KERNELS, "negate", counting_negate)
    run(COND, np.int32(1), _X3, np.bool_(True))
    assert calls == []
    run(COND, np.int32(0), _X3, np.bool_(True))
    assert calls == ["n"]


# --------------------------------------------------------------------------------------------------
# call, fusion, opt-barrier, after-all, add-dependency

CALLFUSE = """HloModule callfuse

sq {
  a = f32[2,3] parameter(0)
  b = f32[2,3] parameter(1)
  m = f32[2,3] multiply(a, b)
  ROOT s = f32[2,3] subtract(m, a)
}

fused {
  p0 = f32[2,3] parameter(0)
  p1 = f32[] parameter(1)
  bb = f32[2,3] broadcast(p1), dimensions={}
  ROOT mx = f32[2,3] maximum(p0, bb)
}

noargs {
  ROOT c = s32[2] constant({3, -4})
}

ENTRY main {
  x = f32[2,3] parameter(0)
  y = f32[2,3] parameter(1)
  c = f32[2,3] call(x, y), to_apply=sq
  z = f32[] constant(-0.1)
  f = f32[2,3] fusion(c, z), kind=kLoop, calls=fused
  k = s32[2] call(), to_apply=noargs
  fk = (f32[2,3], s32[2]) tuple(f, k)
  ob = (f32[2,3], s32[2]) opt-barrier(fk)
  ob0 = f32[2,3] get-tuple-element(ob), index=0
  ob1 = s32[2] get-tuple-element(ob), index=1
  tok = token[] after-all()
  dep = f32[2,3] add-dependency(x, tok)
  ROOT r = (f32[2,3], s32[2], f32[2,3]) tuple(ob0, ob1, dep)
}
"""


def test_call_fusion_barrier_token():
    x = np.arange(6, dtype=f32).reshape(2, 3) - 2
    y = np.full((2, 3), 0.75, f32)
    f, k, dep = run(CALLFUSE, x, y)
    np.testing.assert_array_equal(f, np.array([[0.5, 0.25, 0.0], [-0.1, -0.1, -0.1]], f32))
    np.testing.assert_array_equal(k, np.array([3, -4], np.int32))
    np.testing.assert_array_equal(dep, x)


def test_fusion_of_optimized_sample():
    # after-optimization text (fusions, kind=kLoop/kOutput) and before-optimization text must agree
    with open("samples/mlp.after_optimizations.hlo") as f:
        after = hlo_interp.parse(f.read())
    with open("samples/mlp.before_optimizations.hlo") as f:
        before = hlo_interp.parse(f.read())
    rng = np.random.default_rng(0)
    args = [rng.standard_normal(tuple(p.shape.dims)).astype(f32) for p in before.entry.parameters()]
    (a,) = hlo_interp.run(after, *args)
    (b,) = hlo_interp.run(before, *args)
    assert a.shape == (8, 10) and a.dtype == np.float32
    np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(a.sum(axis=1), np.ones(8, f32), rtol=1e-5)  # softmax rows


# --------------------------------------------------------------------------------------------------
# constants, tuples, bitcast

def test_constants_every_kind():
    text = """HloModule consts
ENTRY main {
  a = bf16[3] constant({1.5, -0.0, inf})
  b = f8e4m3fn[2] constant({448, -0.5})
  c = s4[3] constant({-8, 7, 1})
  d = pred[2] constant({true, false})
  e = c64[2] constant({(1, -2), (0.5, 3)})
  t = (s32[], (f16[], u8[2])) constant((7, (0.5, {255, 1})))
  f = f32[2,0] constant({ {}, {} })
  ROOT r = (bf16[3], f8e4m3fn[2], s4[3], pred[2], c64[2], (s32[], (f16[], u8[2])), f32[2,0]) tuple(a, b, c, d, e, t, f)
}
"""
    a, b, c, d, e, t0, t1, t2, f = run(text)
    assert a.dtype == ml_dtypes.bfloat16 and a.tolist() == [1.5, 0.0, float("inf")]
    assert np.signbit(a[1].astype(f32))
    assert b.dtype == ml_dtypes.float8_e4m3fn and b.astype(f32).tolist() == [448.0, -0.5]
    assert c.dtype == ml_dtypes.int4 and c.astype(np.int32).tolist() == [-8, 7, 1]
    assert d.dtype == np.bool_ and d.tolist() == [True, False]
    assert e.dtype == np.complex64 and e.tolist() == [1 - 2j, 0.5 + 3j]
    assert t0.dtype == np.int32 and int(t0) == 7
    assert t1.dtype == np.float16 and float(t1) == 0.5
    assert t2.dtype == np.uint8 and t2.tolist() == [255, 1]
    assert f.shape == (2, 0) and f.dtype == np.float32


def test_constant_results_are_not_aliases():
    text = "HloModule c\nENTRY main {\n  ROOT c = s32[2] constant({1, 2})\n}\n"
    m = hlo_interp.parse(text)
    (r,) = hlo_interp.run(m)
    r[0] = 5  # the caller owns its results; the constant, shared by every run, is unchanged
    (r2,) = hlo_interp.run(m)
    assert r2.tolist() == [1, 2]
    assert m.entry.root.literal.value.tolist() == [1, 2]


ELIDED = """HloModule elided
ENTRY main {
  x = f32[4] parameter(0)
  c = f32[4] constant({...})
  ROOT a = f32[4] add(x, c)
}
"""


def test_elided_constant_refused_then_faked():
    with pytest.raises(HloError) as e:
        run(ELIDED, np.zeros(4, f32))
    assert "elided" in e.value.message and "--fake-constants" in e.value.message
    assert e.value.line == 4
    (a,) = run(ELIDED, np.zeros(4, f32), fake_constants=True)
    (b,) = run(ELIDED, np.zeros(4, f32), fake_constants=True)
    assert a.dtype == np.float32 and np.all(np.isfinite(a)) and np.any(a != 0)
    np.testing.assert_array_equal(a, b)  # deterministic


BITCAST = """HloModule bitcast
ENTRY main {
  x = f32[2,3]{1,0} parameter(0)
  r = f32[3,2]{1,0} bitcast(x)
  t = f32[3,2]{0,1} bitcast(x)
  c = f32[2,3]{0,1} copy(x)
  u = f32[6]{0} bitcast(c)
  i = s32[2,3]{1,0} bitcast(x)
  h = u16[2,3,2]{2,1,0} bitcast(x)
  ROOT out = (f32[3,2], f32[3,2], f32[6], s32[2,3], u16[2,3,2]) tuple(r, t, u, i, h)
}
"""


def test_bitcast_layouts():
    x = np.arange(6, dtype=f32).reshape(2, 3) + 0.5
    r, t, u, i, h = run(BITCAST, x)
    np.testing.assert_array_equal(r, x.reshape(3, 2))  # both row-major: a reshape
    np.testing.assert_array_equal(t, x.T)  # {0,1}: the same buffer read column-major
    np.testing.assert_array_equal(u, x.T.reshape(-1))  # copy to {0,1} reorders the buffer
    np.testing.assert_array_equal(i, x.view(np.int32))
    assert i[0, 0] == 0x3F000000  # 0.5f
    np.testing.assert_array_equal(h, x.view(np.uint16).reshape(2, 3, 2))  # little-endian halves


def test_bitcast_permuted_layouts_rank3():
    text = """HloModule b3
ENTRY main {
  x = f32[2,3,4]{2,1,0} parameter(0)
  a = f32[4,3,2]{0,1,2} bitcast(x)
  b = f32[6,4]{0,1} bitcast(x)
  y = f32[2,3,4]{0,2,1} parameter(1)
  c = f32[24]{0} bitcast(y)
  ROOT r = (f32[4,3,2], f32[6,4], f32[24]) tuple(a, b, c)
}
"""
    x = np.arange(24, dtype=f32).reshape(2, 3, 4)
    a, b, c = run(text, x, x)
    # {0,1,2}: element (i,j,k) sits at offset i + 4j + 12k of x's row-major buffer
    np.testing.assert_array_equal(a, x.transpose(2, 1, 0))
    np.testing.assert_array_equal(b, x.reshape(4, 6).T)
    # y's buffer is laid out major-to-minor as dims (1, 2, 0)
    np.testing.assert_array_equal(c, x.transpose(1, 2, 0).reshape(-1))


def test_dynamic_dimension_inputs():
    text = """HloModule dyn
ENTRY main {
  x = f32[<=4] parameter(0)
  ROOT n = f32[<=4] negate(x)
}
"""
    (n,) = run(text, np.array([1, 2], f32))
    # a dynamic entry result is its bound-sized buffer (XLA:CPU's convention; zeros past the size)
    np.testing.assert_array_equal(n, np.array([-1, -2, 0, 0], f32))
    with pytest.raises(HloError) as e:
        run(text, np.zeros(5, f32))
    assert "expected shape f32[<=4], got f32[5]" in e.value.message


def test_bitcast_tiled_layout():
    # one 8x128 tile covers the whole array: memory order is row-major, so the bitcast is a reshape
    text = """HloModule b
ENTRY main {
  x = f32[8,128]{1,0:T(8,128)} parameter(0)
  ROOT r = f32[1024]{0} bitcast(x)
}
"""
    x = np.arange(1024, dtype=f32).reshape(8, 128)
    np.testing.assert_array_equal(run(text, x)[0], x.reshape(-1))
    # a 3x5 array in 2x4 tiles takes 32 elements of memory (padding included): refused, located
    text = """HloModule b
ENTRY main {
  x = f32[3,5]{1,0:T(2,4)} parameter(0)
  ROOT r = f32[15]{0} bitcast(x)
}
"""
    with pytest.raises(HloError) as e:
        run(text, np.zeros((3, 5), f32))
    assert "physical size in bytes" in e.value.message and e.value.line == 4


# --------------------------------------------------------------------------------------------------
# plans: slots, freeing, dead code, unsupported opcodes, constant folding

def test_plan_resolves_slots_and_frees_after_last_use():
    exe = evaluator.compile(hlo_interp.parse(FORI))
    steps = exe.ctx.plan_steps["body"]
    by_name = {ins.name: (fn, ops, out, free) for fn, ops, out, ins, free in steps}
    slot = {name: v[2] for name, v in by_name.items()}
    # operands resolved to slots ahead of time (x1 = add(multiply(x, kb), fib) runs as one fma of x, kb
    # and fib, as XLA:CPU contracts it; the product xm computes nothing)
    assert by_name["x1"][1] == (slot["x"], slot["kb"], slot["fib"])
    # x, kb and fib die at x1, their last use; p dies at its last get-tuple-element
    assert set(by_name["x1"][3]) == {slot["x"], slot["kb"], slot["fib"]}
    assert slot["p"] in by_name["x"][3] or slot["p"] in by_name["i"][3]
    # the root is never freed
    assert all(slot["t"] not in v[3] for v in by_name.values())
    # the constant and the broadcast of a constant are folded: no code runs for them
    src = exe.ctx.plan_sources["body"]
    assert f"v{slot['k']} =" not in src and f"v{slot['kb']} =" not in src
    lo, hi = sorted((slot["x"], slot["fib"]))
    assert f"    del v{lo}, v{hi}\n" in src


def test_values_are_freed_after_last_use(monkeypatch):
    text = """HloModule chain
ENTRY main {
  p = f32[1000] parameter(0)
  a = f32[1000] negate(p)
  b = f32[1000] negate(a)
  c = f32[1000] negate(b)
  ROOT d = f32[1000] negate(c)
}
"""
    seen = []
    alive_at = {}

    def recording_negate(ins, ctx):
        def run_(x):
            gc.collect()
            alive_at[ins.name] = [w() is not None for w in seen]
            y = np.negative(x)
            seen.append(weakref.ref(y))
            return y
        return run_
    monkeypatch.setitem(KERNELS, "negate", recording_negate)
    run(text, np.ones(1000, f32), validate=False)
    # when c runs, a (seen[0]) is gone and b (seen[1]) is its operand; when d runs, only c lives
    assert alive_at["c"] == [False, True]
    assert alive_at["d"] == [False, False, True]


def test_unsupported_opcode_fails_when_the_plan_is_built(monkeypatch):
    text = """HloModule u

body {
  p = f32[2,2] parameter(0)
  ROOT c = f32[2,2] cholesky(p), lower=true
}

cond {
  p = f32[2,2] parameter(0)
  ROOT f = pred[] constant(false)
}

ENTRY main {
  x = f32[2,2] parameter(0)
  n = f32[2,2] negate(x)
  ROOT w = f32[2,2] while(n), condition=cond, body=body
}
"""
    if "cholesky" in KERNELS:
        monkeypatch.delitem(KERNELS, "cholesky")
    ran = []

    def recording_negate(ins, ctx):
        return lambda x: ran.append(1) or np.negative(x)
    monkeypatch.setitem(KERNELS, "negate", recording_negate)
    with pytest.raises(HloError) as e:
        run(text, np.eye(2, dtype=f32))
    assert e.value.message == "unsupported opcode 'cholesky' (line 5)"
    assert (e.value.line, e.value.column) == (5, 8)  # at the name, after ROOT
    assert ran == []  # nothing ran: the error came from building the plans


def test_called_computations_are_built_before_running(monkeypatch):
    # a reducer is built up front even if the reduce kernel only asks for it when it runs
    text = """HloModule r

weird {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  c = f32[] cholesky(a)
  ROOT s = f32[] add(c, b)
}

ENTRY main {
  x = f32[4] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[] reduce(x, z), dimensions={0}, to_apply=weird
}
"""
    if "cholesky" in KERNELS:
        monkeypatch.delitem(KERNELS, "cholesky")
    with pytest.raises(HloError) as e:
        evaluator.compile(hlo_interp.parse(text))
    assert e.value.message == "unsupported opcode 'cholesky' (line 6)"


def test_dead_code_is_not_run():
    text = """HloModule dead
ENTRY main {
  x = f32[2] parameter(0)
  unused = f32[2] negate(x)
  ROOT y = f32[2] add(x, x)
}
"""
    m = hlo_interp.parse(text)
    exe = evaluator.compile(m)
    names = [ins.name for *_, ins, _ in exe.ctx.plan_steps["main"]]
    assert names == ["x", "y"]
    np.testing.assert_array_equal(exe(np.array([1, 2], f32))[0], np.array([2, 4], f32))


def test_unused_parameters_are_kept():
    text = """HloModule p
ENTRY main {
  a = f32[] parameter(0)
  b = s32[3] parameter(1)
  ROOT r = f32[] negate(a)
}
"""
    with pytest.raises(HloError) as e:
        run(text, f32(1))
    assert "takes 2 argument(s)" in e.value.message
    (r,) = run(text, f32(1), np.zeros(3, np.int32))
    assert float(r) == -1.0


def test_kernel_failure_is_located(monkeypatch):
    def broken(ins, ctx):
        def run_(x, y):
            raise ValueError("boom")
        return run_
    monkeypatch.setitem(KERNELS, "multiply", broken)
    with pytest.raises(HloError) as e:
        run(FORI, np.zeros(4, f32), np.int32(0))
    assert e.value.line == 11  # xm = multiply(...) inside the loop body
    assert "internal error evaluating 'multiply': ValueError: boom" in e.value.message


def test_validate_catches_a_wrong_kernel_result(monkeypatch):
    def wrong(ins, ctx):
        return lambda x: np.negative(x).astype(np.float64)
    monkeypatch.setitem(KERNELS, "negate", wrong)
    text = "HloModule v\nENTRY main {\n  x = f32[2] parameter(0)\n  ROOT n = f32[2] negate(x)\n}\n"
    with pytest.raises(HloError) as e:
        run(text, np.zeros(2, f32), validate=True)
    assert "'negate' produced a wrong value" in e.value.message and e.value.line == 4
    with pytest.raises(HloError) as e:  # the entry's result is always checked
        run(text, np.zeros(2, f32), validate=False)
    assert "does not match the entry's shape" in e.value.message


def test_max_bytes_guard_is_located_and_checked_before_running():
    text = """HloModule big
ENTRY main {
  x = f32[] parameter(0)
  ROOT b = f32[1000,1000] broadcast(x), dimensions={}
}
"""
    with pytest.raises(HloError) as e:
        run(text, f32(1), max_bytes=1_000_000)
    assert e.value.line == 4
    assert "f32[1000,1000] needs 3.8 MiB, above the limit of 976.6 KiB" in e.value.message
    (b,) = run(text, f32(2), max_bytes=4_000_000)
    assert b.shape == (1000, 1000) and float(b[999, 999]) == 2.0
    assert evaluator.default_max_bytes() > 0


def test_no_numpy_warnings_leak():
    text = """HloModule w
ENTRY main {
  x = f32[3] parameter(0)
  ROOT d = f32[3] divide(x, x)
}
"""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        (d,) = run(text, np.array([0, 1, np.inf], f32))
    assert np.isnan(d[0]) and d[1] == 1 and np.isnan(d[2])


def test_plans_are_cached_per_module():
    m = hlo_interp.parse(FORI)
    hlo_interp.run(m, np.zeros(4, f32), np.int32(0))
    cache = m.__dict__["_hlo_interp_executables"]
    exe = next(iter(cache.values()))[1]
    hlo_interp.run(m, np.zeros(4, f32), np.int32(0))
    assert next(iter(cache.values()))[1] is exe


# --------------------------------------------------------------------------------------------------
# inputs

IDENT = """HloModule ident
ENTRY main {
  x = bf16[3] parameter(0)
  t = (s32[], pred[2]) parameter(1)
  ROOT r = (bf16[3], (s32[], pred[2])) tuple(x, t)
}
"""


def test_inputs_checked_and_converted():
    bf = np.array([1.5, -2, 3], ml_dtypes.bfloat16)
    tup = (np.int32(4), np.array([True, False]))
    x, i, p = run(IDENT, bf, tup)
    assert x.dtype == ml_dtypes.bfloat16 and x.tolist() == [1.5, -2.0, 3.0]
    # raw bytes of the right width (how np.save leaves bf16) are viewed as bf16
    x, _, _ = run(IDENT, bf.view("V2"), tup)
    assert x.dtype == ml_dtypes.bfloat16 and x.tolist() == [1.5, -2.0, 3.0]
    # Python values: converted when exact
    x, i, p = run(IDENT, [1.5, -2, 3], (4, [1, 0]))
    assert x.dtype == ml_dtypes.bfloat16 and int(i) == 4 and p.tolist() == [True, False]
    with pytest.raises(HloError) as e:
        run(IDENT, np.array([1.5, -2, 3], f32), tup)  # f32 -> bf16 loses precision: refused
    assert "argument 0 for parameter 'x'" in e.value.message and "bf16" in e.value.message
    assert e.value.line == 3
    with pytest.raises(HloError) as e:  # same width, other type: never reinterpreted
        run(IDENT, bf.astype(np.float16), tup)
    assert "expected element type bf16 (bfloat16), got f16 (float16)" in e.value.message
    with pytest.raises(HloError) as e:
        run(IDENT, bf[:2], tup)
    assert "expected shape bf16[3], got bf16[2]" in e.value.message
    with pytest.raises(HloError) as e:
        run(IDENT, bf, np.int32(4))
    assert "expected a tuple of 2 values" in e.value.message and "'t'" in e.value.message
    with pytest.raises(HloError) as e:
        run(IDENT, bf, (4, [1, 2]))
    assert "do not fit element type pred" in e.value.message


def test_denormals_flush_like_xla_cpu_unless_kept():
    from hlo_interp.ops.numerics import denormal_flushing_available
    text = ("HloModule m\nENTRY e {\n  x = f32[2] parameter(0)\n  y = f32[2] parameter(1)\n"
            "  ROOT a = f32[2] add(x, y)\n}\n")
    x = np.array([1e-45, -1e-40], np.float32)
    y = np.zeros(2, np.float32)
    kept = hlo_interp.run(text, x, y, denormals="keep")[0]
    assert kept.tolist() == x.tolist()
    flushed = hlo_interp.run(text, x, y)[0]
    if denormal_flushing_available():  # XLA:CPU: 1e-45 + 0 = 0 (golden elementwise/subnormals_*)
        assert flushed.tolist() == [0.0, 0.0]  # -1e-40 reads as -0, and -0 + +0 = +0
    with pytest.raises(ValueError):
        hlo_interp.run(text, x, y, denormals="sometimes")
