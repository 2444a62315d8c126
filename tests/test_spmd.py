"""Multi-device programs (hlo_interp/spmd.py, ops/collectives.py, hlo-run --replicas/--partitions).

Golden cases (tests/golden/spmd/, made by tools/make_spmd_vectors.py): XLA:CPU through JAX with 8 host
devices, per-device inputs and outputs:
  * shard_map programs (psum / pmax / pmin in 8 element types, all_gather, psum_scatter, all_to_all,
    ppermute, axis_index, 2x4 meshes, a data-parallel training step): the per-device SPMD module the
    compiled program runs (after optimization);
    and, as `<case>_global`, the global-view module JAX emits before optimization (Shardy's
    xla.sdy.GlobalToLocalShape / LocalToGlobalShape, or GSPMD's SPMDFullToShardShape /
    SPMDShardToFullShape around the manual computation), run on plain global inputs;
  * jax.jit with NamedShardings: XLA's partitioner writes the collectives (mesh-form replica groups,
    device_ids with sub-axes);
  * hand-written modules run by XLA with replica_count=N (and 2 replicas x 4 partitions): replica-group
    forms, every CollectiveOpGroupMode, the tuple all-to-all, async start/done, a collective in a loop,
    all-reduce / reduce-scatter in every element type (XLA:CPU computes bf16 in f32 and f8 in f16).
What XLA:CPU cannot run (an all-reduce with a reducer it does not recognize, collective-broadcast,
the cross-partition all-reduce mode, which its StableHLO round trip turns into another) is checked
against values worked out by hand from the operation semantics.
"""
from __future__ import annotations


import numpy as np
import pytest
from click.testing import CliRunner

import hlo_interp
from hlo_interp import HloError
from hlo_interp.cli_run import main as run_main
from hlo_interp.spmd import is_global_view, run_global, run_spmd

from casedata import cases

SPMD = cases("spmd")  # XLA:CPU on 8 host devices (tools/make_spmd_vectors.py), device axis first
CASES = {c.short: c for c in SPMD}


def _path(name):
    return CASES[name].dir / "before.hlo"


def _load(name):
    c = CASES[name]
    return c, c.inputs, c.expected


def _run_case(c):
    """Every device's result leaves stacked along a leading device axis, as the case stores them."""
    nd = c.info["replicas"] * c.info["partitions"]
    mod = hlo_interp.parse(c.text(), c.short)
    args = c.inputs
    if c.info["global"]:  # the global view (before optimization): plain global inputs, one result
        assert is_global_view(mod) and nd == 1
        got = [run_global(mod, *[a[0] for a in args], timeout=20)]
    else:
        got = run_spmd(mod, [[a[d] for a in args] for d in range(nd)], c.info["replicas"], c.info["partitions"],
                       timeout=20)
    assert len(got) == nd and all(len(g) == len(c.expected) for g in got)
    return [np.stack([got[d][k] for d in range(nd)]) for k in range(len(c.expected))]


@pytest.mark.parametrize("case", [pytest.param(c, id=c.id) for c in SPMD])
def test_golden(case):
    case.check(_run_case(case), "before")


def test_golden_set_is_broad():
    ops = set()
    for c in SPMD:
        ops.update(w for w in ("all-reduce", "all-gather", "reduce-scatter", "all-to-all", "collective-permute",
                               "partition-id", "replica-id", "all-reduce-start", "all-gather-start",
                               "collective-permute-start", "while")
                   if w + "(" in c.text())
    assert len(ops) == 11, ops
    assert any(c.info["partitions"] > 1 and c.info["replicas"] > 1 for c in SPMD)
    assert len(CASES) >= 80
    assert sum(bool(c.info["global"]) for c in SPMD) >= 25


# --------------------------------------------------------------------------------------------------
# Worked by hand

ADD = """%add (a: s32[], b: s32[]) -> s32[] {
  %a = s32[] parameter(0)
  %b = s32[] parameter(1)
  ROOT %r = s32[] add(%a, %b)
}
"""


def _run(text, per_dev, replicas, partitions, **kw):
    return run_spmd(hlo_interp.parse(text), per_dev, replicas, partitions, **kw)


def test_custom_reducer_folds_in_group_order():
    # f(a, b) = 2a + b is neither associative nor commutative: the fold order shows.
    text = """HloModule m, replica_count=3
%f (a: s32[], b: s32[]) -> s32[] {
  %a = s32[] parameter(0)
  %b = s32[] parameter(1)
  %two = s32[] constant(2)
  %a2 = s32[] multiply(%a, %two)
  ROOT %r = s32[] add(%a2, %b)
}
ENTRY e (p: s32[2]) -> s32[2] {
  %p = s32[2] parameter(0)
  ROOT %x = s32[2] all-reduce(%p), replica_groups={{2,0,1}}, to_apply=%f
}"""
    v = [np.array([1, 10], np.int32), np.array([2, 20], np.int32), np.array([3, 30], np.int32)]
    out = _run(text, [[x] for x in v], 3, 1)
    # group order 2, 0, 1: f(f(v2, v0), v1) = 2*(2*v2 + v0) + v1
    want = 2 * (2 * v[2] + v[0]) + v[1]
    for d in range(3):
        np.testing.assert_array_equal(out[d][0], want)


def test_custom_reducer_tuple_refusing_vectors_goes_elementwise():
    # a reducer with a conditional (not elementwise): called per element
    text = """HloModule m, replica_count=2
%t (a: s32[]) -> s32[] {
  %a = s32[] parameter(0)
  ROOT %n = s32[] negate(%a)
}
%f_ (a: s32[]) -> s32[] {
  ROOT %a = s32[] parameter(0)
}
%f (a: s32[], b: s32[]) -> s32[] {
  %a = s32[] parameter(0)
  %b = s32[] parameter(1)
  %s = s32[] add(%a, %b)
  %z = s32[] constant(0)
  %c = pred[] compare(%s, %z), direction=LT
  ROOT %r = s32[] conditional(%c, %s, %s), true_computation=%t, false_computation=%f_
}
ENTRY e (p: s32[3]) -> s32[3] {
  %p = s32[3] parameter(0)
  ROOT %x = s32[3] all-reduce(%p), replica_groups={}, to_apply=%f
}"""
    out = _run(text, [[np.array([1, -5, 2], np.int32)], [np.array([1, 2, -9], np.int32)]], 2, 1)
    np.testing.assert_array_equal(out[0][0], [2, 3, 7])  # |a + b|
    np.testing.assert_array_equal(out[1][0], [2, 3, 7])


def test_cross_partition_mode_and_permute_start():
    # channel_id without use_global_device_ids: groups of partition ids within each replica
    text = "HloModule m, replica_count=2, num_partitions=2\n" + ADD + """
ENTRY e (p: s32[2]) -> (s32[2], s32[2], s32[2]) {
  %p = s32[2] parameter(0)
  %x = s32[2] all-reduce(%p), channel_id=1, replica_groups={{0,1}}, to_apply=%add
  %s = (s32[2], s32[2], u32[], u32[]) collective-permute-start(%p), channel_id=2, source_target_pairs={{1,0}}
  %d = s32[2] collective-permute-done(%s)
  %y = s32[2] all-reduce(%p), replica_groups={{0,1}}, to_apply=%add
  ROOT %t = (s32[2], s32[2], s32[2]) tuple(%x, %d, %y)
}"""
    v = [np.array([1, 2], np.int32) * 10 ** d for d in range(4)]  # device d = replica*2 + partition
    out = _run(text, [[x] for x in v], 2, 2)
    np.testing.assert_array_equal(out[0][0], v[0] + v[1])
    np.testing.assert_array_equal(out[3][0], v[2] + v[3])
    np.testing.assert_array_equal(out[0][1], v[1])        # partition 1 -> 0, same replica
    np.testing.assert_array_equal(out[2][1], v[3])
    np.testing.assert_array_equal(out[1][1], [0, 0])      # no source: zeros
    np.testing.assert_array_equal(out[0][2], v[0] + v[2])  # cross-replica, same partition
    np.testing.assert_array_equal(out[1][2], v[1] + v[3])


def test_collective_broadcast_and_async_sugar():
    text = "HloModule m, replica_count=4\n" + ADD + """
ENTRY e (p: s32[4]) -> (s32[4], s32[2]) {
  %p = s32[4] parameter(0)
  %b = s32[4] collective-broadcast(%p), replica_groups={{2,0},{1,3}}
  %s = ((s32[4]), s32[2]) reduce-scatter-start(%p), replica_groups={{0,1},{2,3}}, dimensions={0}, to_apply=%add
  %d = s32[2] reduce-scatter-done(%s)
  ROOT %t = (s32[4], s32[2]) tuple(%b, %d)
}"""
    v = [np.arange(4, dtype=np.int32) + 100 * d for d in range(4)]
    out = _run(text, [[x] for x in v], 4, 1)
    for d, root in ((0, 2), (2, 2), (1, 1), (3, 1)):
        np.testing.assert_array_equal(out[d][0], v[root])
    np.testing.assert_array_equal(out[0][1], (v[0] + v[1])[:2])
    np.testing.assert_array_equal(out[1][1], (v[0] + v[1])[2:])
    np.testing.assert_array_equal(out[3][1], (v[2] + v[3])[2:])


def test_all_to_all_worked_example():
    # XLA's operation semantics: 4 participants, split_dimension = concat_dimension = 1 in the array
    # form: participant i's result is the concatenation of block i of every participant.
    text = """HloModule m, replica_count=4
ENTRY e (p: s32[1,4]) -> s32[1,4] {
  %p = s32[1,4] parameter(0)
  ROOT %r = s32[1,4] all-to-all(%p), replica_groups={{0,1,2,3}}, dimensions={1}
}"""
    v = [np.array([[10 * d + k for k in range(4)]], np.int32) for d in range(4)]
    out = _run(text, [[x] for x in v], 4, 1)
    for i in range(4):
        np.testing.assert_array_equal(out[i][0], [[10 * d + i for d in range(4)]])


def test_ragged_all_to_all_documented_example():
    # JAX's documented example (axis of size 2); XLA:CPU does not run ragged-all-to-all
    text = """HloModule m, replica_count=2
ENTRY e (x: s32[3], o: s32[4], io: s32[2], ss: s32[2], oo: s32[2], rs: s32[2]) -> s32[4] {
  %x = s32[3] parameter(0)
  %o = s32[4] parameter(1)
  %io = s32[2] parameter(2)
  %ss = s32[2] parameter(3)
  %oo = s32[2] parameter(4)
  %rs = s32[2] parameter(5)
  ROOT %r = s32[4] ragged-all-to-all(%x, %o, %io, %ss, %oo, %rs), replica_groups={{0,1}}
}"""
    a = lambda *v: np.array(v, np.int32)  # noqa: E731
    dev0 = [a(1, 2, 2), a(0, 0, 0, 0), a(0, 1), a(1, 2), a(0, 0), a(1, 1)]
    dev1 = [a(3, 4, 0), a(0, 0, 0, 0), a(0, 1), a(1, 1), a(1, 2), a(2, 1)]
    out = _run(text, [dev0, dev1], 2, 1)
    np.testing.assert_array_equal(out[0][0], [1, 3, 0, 0])
    np.testing.assert_array_equal(out[1][0], [2, 2, 4, 0])
    bad = list(dev1)
    bad[5] = a(1, 1)  # recv_sizes disagree with what device 0 sends
    with pytest.raises(HloError) as e:
        _run(text, [dev0, bad], 2, 1)
    assert "recv_sizes" in e.value.message and e.value.line is not None


def test_single_device_run():
    text = """HloModule m
%add (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %r = f32[] add(%a, %b)
}
ENTRY e (p: f32[2]) -> (u32[], u32[], f32[2], f32[2]) {
  %p = f32[2] parameter(0)
  %r = u32[] replica-id()
  %q = u32[] partition-id()
  %x = f32[2] all-reduce(%p), replica_groups={{0}}, to_apply=%add
  %g = f32[2] all-gather(%p), replica_groups={}, dimensions={0}
  ROOT %t = (u32[], u32[], f32[2], f32[2]) tuple(%r, %q, %x, %g)
}"""
    r, q, x, g = hlo_interp.run(hlo_interp.parse(text), np.array([1.5, -2], np.float32))
    assert r.dtype == np.uint32 and r == 0 and q == 0
    np.testing.assert_array_equal(x, [1.5, -2])
    np.testing.assert_array_equal(g, [1.5, -2])


def test_single_device_run_of_multi_device_module_fails_located():
    mod = hlo_interp.parse(_path("psum_float32").read_text(), "psum.hlo")
    with pytest.raises(HloError) as e:
        hlo_interp.run(mod, np.zeros((1, 5), np.float32))
    assert e.value.line is not None and "all-reduce" in e.value.message and "single-device run" in e.value.message \
        and "--partitions" in e.value.message


def test_mismatched_program_fails_located():
    # devices take different branches: only device 0 reaches the all-reduce
    text = "HloModule m, replica_count=2\n" + ADD + """
%t (a: s32[2]) -> s32[2] {
  %a = s32[2] parameter(0)
  ROOT %x = s32[2] all-reduce(%a), replica_groups={}, to_apply=%add
}
%f (a: s32[2]) -> s32[2] {
  ROOT %a = s32[2] parameter(0)
}
ENTRY e (p: s32[2]) -> s32[2] {
  %p = s32[2] parameter(0)
  %r = u32[] replica-id()
  %z = u32[] constant(0)
  %c = pred[] compare(%r, %z), direction=EQ
  ROOT %o = s32[2] conditional(%c, %p, %p), true_computation=%t, false_computation=%f
}"""
    with pytest.raises(HloError) as e:
        _run(text, [[np.ones(2, np.int32)]] * 2, 2, 1)  # no timeout: the deadlock is detected
    msg = e.value.message
    assert e.value.line == 10 and msg.startswith("device 0 (replica 0, partition 0): 'all-reduce': deadlock: "
                                                 "device 0 waits for device(s) 1 of the group [0, 1]")
    assert "device 1 has finished" in msg
    # the backstop timeout
    with pytest.raises(HloError) as e:
        _run(text, [[np.ones(2, np.int32)]] * 2, 2, 1, timeout=0.0)
    assert "waited 0 s" in e.value.message or "deadlock" in e.value.message


def test_deadlock_between_two_collectives():
    # device 0 waits at %x for device 1, which waits at %y for device 0
    text = "HloModule m, replica_count=2\n" + ADD + """
%t (a: s32[2]) -> s32[2] {
  %a = s32[2] parameter(0)
  ROOT %x = s32[2] all-reduce(%a), replica_groups={}, to_apply=%add
}
%f (a: s32[2]) -> s32[2] {
  %a = s32[2] parameter(0)
  ROOT %y = s32[2] all-reduce(%a), replica_groups={}, to_apply=%add
}
ENTRY e (p: s32[2]) -> s32[2] {
  %p = s32[2] parameter(0)
  %r = u32[] replica-id()
  %z = u32[] constant(0)
  %c = pred[] compare(%r, %z), direction=EQ
  ROOT %o = s32[2] conditional(%c, %p, %p), true_computation=%t, false_computation=%f
}"""
    with pytest.raises(HloError) as e:
        _run(text, [[np.ones(2, np.int32)]] * 2, 2, 1)
    assert "deadlock" in e.value.message and "waits at '" in e.value.message


def test_one_failing_device_reported_and_others_stop():
    # replica 1 loops 100 times (above max_iterations=10) before the all-reduce; replica 0 waits there
    text = "HloModule m, replica_count=2\n" + ADD + """
%cond (s: s32[]) -> pred[] {
  %s = s32[] parameter(0)
  %r = u32[] replica-id()
  %rs = s32[] convert(%r)
  %h = s32[] constant(100)
  %n = s32[] multiply(%rs, %h)
  ROOT %lt = pred[] compare(%s, %n), direction=LT
}
%body (s: s32[]) -> s32[] {
  %s = s32[] parameter(0)
  %one = s32[] constant(1)
  ROOT %t = s32[] add(%s, %one)
}
ENTRY e (p: s32[]) -> s32[] {
  %p = s32[] parameter(0)
  %w = s32[] while(%p), condition=%cond, body=%body
  ROOT %x = s32[] all-reduce(%w), replica_groups={}, to_apply=%add
}"""
    with pytest.raises(HloError) as e:
        _run(text, [[np.int32(0)]] * 2, 2, 1, timeout=30, max_iterations=10)
    assert e.value.message.startswith("device 1 (replica 1, partition 0): ") and e.value.line is not None
    out = _run(text, [[np.int32(0)]] * 2, 2, 1, max_iterations=1000)
    assert out[0][0] == 100 and out[1][0] == 100


def test_group_errors_are_located():
    text = "HloModule m, replica_count=2\n" + ADD + """
ENTRY e (p: s32[2]) -> s32[2] {
  %p = s32[2] parameter(0)
  ROOT %x = s32[2] all-reduce(%p), replica_groups={{0,1,2}}, to_apply=%add
}"""
    with pytest.raises(HloError) as e:
        _run(text, [[np.ones(2, np.int32)]] * 2, 2, 1)
    assert "replica 2" in e.value.message and e.value.line == 10
    with pytest.raises(HloError) as e:
        _run(text, [[np.ones(2, np.int32)]] * 3, 2, 1)
    assert "inputs were given for 3" in e.value.message


def test_collective_in_loop_meets_every_iteration_and_threads_are_cheap():
    c, args, outs = _load("rep_allreduce_in_loop")
    mod = hlo_interp.parse(_path("rep_allreduce_in_loop").read_text())
    for _ in range(3):  # the same module again: fresh communicators, same answer
        got = run_spmd(mod, [[a[d] for a in args] for d in range(4)], 4, 1)
        c.check([np.stack([g[0] for g in got])], "before")


# --------------------------------------------------------------------------------------------------
# hlo-run

def _cli(args):
    r = CliRunner().invoke(run_main, [str(a) for a in args])
    return r.exit_code, r.output


def test_cli_partitions_from_header(tmp_path):
    c, args, outs = _load("psum_int32")
    np.savez(tmp_path / "in.npz", arg0=args[0])
    np.savez(tmp_path / "want.npz", out0=outs[0])
    code, out = _cli([_path("psum_int32"), "-i", tmp_path / "in.npz", "-o", tmp_path / "o.npz",
                      "--compare", tmp_path / "want.npz"])
    assert code == 0, out
    np.testing.assert_array_equal(np.load(tmp_path / "o.npz")["out0"], outs[0])
    assert outs[0].shape[0] == 8


def test_cli_replicas_flag_and_same_inputs(tmp_path):
    text = "HloModule m\n" + ADD + """
ENTRY e (p: s32[2]) -> (s32[2], u32[]) {
  %p = s32[2] parameter(0)
  %x = s32[2] all-reduce(%p), replica_groups={}, to_apply=%add
  %r = u32[] replica-id()
  ROOT %t = (s32[2], u32[]) tuple(%x, %r)
}"""
    f = tmp_path / "m.hlo"
    f.write_text(text)
    np.save(tmp_path / "x.npy", np.array([1, 2], np.int32))
    code, out = _cli([f, "--replicas", "3", "--same-inputs", "-i", tmp_path / "x.npy", "-o", tmp_path / "o.npz"])
    assert code == 0, out
    o = np.load(tmp_path / "o.npz")
    np.testing.assert_array_equal(o["out0"], [[3, 6]] * 3)
    np.testing.assert_array_equal(o["out1"], [0, 1, 2])
    # without --same-inputs the leading axis must be the device count
    code, out = _cli([f, "--replicas", "3", "-i", tmp_path / "x.npy"])
    assert code == 2 and "leading device axis of length 3" in out
    # single device: unchanged
    code, out = _cli([f, "-i", tmp_path / "x.npy", "-o", tmp_path / "o1.npz"])
    assert code == 0, out
    np.testing.assert_array_equal(np.load(tmp_path / "o1.npz")["out0"], [1, 2])
    code, out = _cli([f, "--partitions", "0", "-i", tmp_path / "x.npy"])
    assert code == 2


def test_cli_random_inputs_per_device(tmp_path):
    code, out = _cli([_path("rp_modes"), "--random-inputs", "-o", tmp_path / "o.npz", "--print", "none"])
    assert code == 0, out
    o = np.load(tmp_path / "o.npz")
    np.testing.assert_array_equal(o["out3"], [0, 0, 0, 0, 1, 1, 1, 1])  # replica-id, 2 x 4 devices
    np.testing.assert_array_equal(o["out4"], [0, 1, 2, 3] * 2)          # partition-id


def test_cli_global_view_plain_inputs(tmp_path):
    c, args, outs = _load("mesh2x4_psum_b_global")
    np.save(tmp_path / "x.npy", args[0][0])
    code, out = _cli([_path("mesh2x4_psum_b_global"), "-i", tmp_path / "x.npy", "-o", tmp_path / "o.npy"])
    assert code == 0, out
    np.testing.assert_allclose(np.load(tmp_path / "o.npy"), outs[0][0], rtol=1e-6)


def test_variadic_forms():
    text = "HloModule m, replica_count=2\n" + ADD + """
ENTRY e (p: s32[2], q: s32[4]) -> ((s32[2], s32[4]), (s32[4], s32[8]), (s32[2], s32[4]), (s32[2], s32[4])) {
  %p = s32[2] parameter(0)
  %q = s32[4] parameter(1)
  %ar = (s32[2], s32[4]) all-reduce(%p, %q), replica_groups={}, to_apply=%add
  %gs = ((s32[2], s32[4]), (s32[4], s32[8])) all-gather-start(%p, %q), replica_groups={}, dimensions={0}
  %gd = (s32[4], s32[8]) all-gather-done(%gs)
  %a2a = (s32[2], s32[4]) all-to-all(%p, %q), replica_groups={}, dimensions={0}
  %cp = (s32[2], s32[4]) collective-permute(%p, %q), source_target_pairs={{0,1},{1,0}}
  ROOT %t = ((s32[2], s32[4]), (s32[4], s32[8]), (s32[2], s32[4]), (s32[2], s32[4])) tuple(%ar, %gd, %a2a, %cp)
}"""
    p = [np.array([1, 2], np.int32), np.array([10, 20], np.int32)]
    q = [np.arange(4, dtype=np.int32), np.arange(4, dtype=np.int32) * 100]
    out = _run(text, [[p[0], q[0]], [p[1], q[1]]], 2, 1)
    for d in range(2):
        ar_p, ar_q, g_p, g_q, a_p, a_q, c_p, c_q = out[d]
        np.testing.assert_array_equal(ar_p, p[0] + p[1])
        np.testing.assert_array_equal(ar_q, q[0] + q[1])
        np.testing.assert_array_equal(g_p, np.concatenate(p))
        np.testing.assert_array_equal(g_q, np.concatenate(q))
        np.testing.assert_array_equal(a_p, [p[0][d], p[1][d]])
        np.testing.assert_array_equal(a_q, np.concatenate([q[0][2 * d:2 * d + 2], q[1][2 * d:2 * d + 2]]))
        np.testing.assert_array_equal(c_p, p[1 - d])
        np.testing.assert_array_equal(c_q, q[1 - d])


def test_xla_cpu_max_skips_nan_and_keeps_first_zero():
    # std::max semantics of XLA:CPU's in-process all-reduce (see pmax_nan_zero for XLA's own output)
    from hlo_interp.ops.collectives import xla_cpu_fold
    nan = np.float32(np.nan)
    vals = [np.array([nan, -0.0, 1], np.float32), np.array([2, 0.0, nan], np.float32)]
    r = xla_cpu_fold(vals, "maximum")
    np.testing.assert_array_equal(r, [2, 0, 1])
    assert np.signbit(r[1])  # the first zero (-0) is kept
    r = xla_cpu_fold([np.array([-0.0], np.float32)] * 3, "add")
    assert r[0] == 0 and not np.signbit(r[0])  # the sum starts from +0


def test_ragged_all_to_all_several_updates_per_participant():
    # K = 4 offsets for 2 participants: updates 0, 1 go to participant 0, updates 2, 3 to participant 1
    text = """HloModule m, replica_count=2
ENTRY e (x: s32[6,2], o: s32[8,2], io: s32[4], ss: s32[4], oo: s32[4], rs: s32[4]) -> s32[8,2] {
  %x = s32[6,2] parameter(0)
  %o = s32[8,2] parameter(1)
  %io = s32[4] parameter(2)
  %ss = s32[4] parameter(3)
  %oo = s32[4] parameter(4)
  %rs = s32[4] parameter(5)
  ROOT %r = s32[8,2] ragged-all-to-all(%x, %o, %io, %ss, %oo, %rs), replica_groups={{0,1}}
}"""
    a = lambda *v: np.array(v, np.int32)  # noqa: E731
    x = [np.arange(12, dtype=np.int32).reshape(6, 2) + 100 * d for d in range(2)]
    io = [a(0, 1, 3, 4), a(0, 2, 3, 5)]
    ss = [a(1, 2, 1, 1), a(2, 1, 2, 1)]
    oo = [a(0, 1, 0, 1), a(3, 5, 2, 4)]
    rs = [a(1, 2, 2, 1), a(1, 1, 2, 1)]  # rs[src*k + j] = what src's update (me*k + j) sends
    o = [np.full((8, 2), -1, np.int32)] * 2
    out = _run(text, [[x[d], o[d], io[d], ss[d], oo[d], rs[d]] for d in range(2)], 2, 1)
    want = [np.full((8, 2), -1, np.int32) for _ in range(2)]
    for src in range(2):
        for u in range(4):
            dst = u // 2
            rows = x[src][io[src][u]:io[src][u] + ss[src][u]]
            want[dst][oo[src][u]:oo[src][u] + len(rows)] = rows
    for d in range(2):
        np.testing.assert_array_equal(out[d][0], want[d])
    assert (want[0] != -1).any() and (want[1] != -1).any()
