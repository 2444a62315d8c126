"""DEV-ONLY: golden data for multi-device programs (tests/test_spmd.py), computed by XLA:CPU through JAX
with 8 simulated host devices.

Two sources:
  * JAX programs with `jax.shard_map` over a device mesh (psum, pmax, pmin, all_gather, psum_scatter,
    all_to_all, ppermute, axis_index, a data-parallel training step): the HLO saved is the per-device
    SPMD module the compiled program runs (`compile().as_text()`, num_partitions = mesh size), with
    every device's inputs and outputs (partition p = mesh device p); and, as `<case>_global`, the
    global-view module JAX emits before optimization (`lower().as_text("hlo")`, xla.sdy custom calls
    around the manual computation) with the plain global inputs and outputs;
  * jax.jit with NamedShardings (XLA's partitioner: mesh-form replica groups);
  * hand-written HLO modules with replica_count=N (cross-replica groups, channel ids, the tuple form
    of all-to-all, collective-broadcast, async start/done pairs, a reducer that is not recognized):
    parsed by XLA, compiled with num_replicas=N and run on N devices.

Output: one case directory per case, tests/golden/spmd/<case>/ (tools/oracle/writer.py): inputs and outputs
stacked along a leading device axis; case.json gives replicas, partitions, whether the text is the global
view, and the tolerance.  Run: python3 tools/make_spmd_vectors.py [smap|jit|hlo ...]
"""
from __future__ import annotations

import os
import sys
from pathlib import Path

os.environ["XLA_FLAGS"] = os.environ.get("XLA_FLAGS", "") + " --xla_force_host_platform_device_count=8"

import jax  # noqa: E402
import ml_dtypes  # noqa: E402
import numpy as np  # noqa: E402

jax.config.update("jax_enable_x64", True)
import jax.numpy as jnp  # noqa: E402
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from oracle import runner  # noqa: E402
from oracle.writer import write_case  # noqa: E402

FAMILY = "spmd"  # tests/golden/spmd/
RNG = np.random.default_rng(55)


SOURCE = ("XLA:CPU on 8 host devices (tools/make_spmd_vectors.py); inputs and outputs stacked along a leading "
          "device axis")


def save(name, text, replicas, partitions, args, outs, tol=None, note="", global_view=False):
    """args / outs: lists (per argument / result leaf) of lists (per device) of arrays."""
    extra = {"note": note} if note else {}
    # run by tests/test_spmd.py (on `replicas` x `partitions` devices), not by the single-device runner
    extra.update({"check": "spmd", "replicas": replicas, "partitions": partitions, "global": global_view})
    write_case(FAMILY, name, {"before": text}, [np.stack([np.asarray(x) for x in d]) for d in args],
               [np.stack([np.asarray(x) for x in d]) for d in outs], source=SOURCE,
               compare="bits" if tol is None else {"rtol": tol, "atol": tol}, extra=extra)
    print(f"{name}: {replicas}x{partitions}, {len(args)} arg(s), {len(outs)} out(s)")


# --------------------------------------------------------------------------------------------------
# shard_map programs

def mesh_of(shape, names):
    devs = np.array(jax.devices()[: int(np.prod(shape))]).reshape(shape)
    return Mesh(devs, names)


def _per_device(arr, mesh):
    by_dev = {s.device: np.asarray(s.data) for s in arr.addressable_shards}
    return [by_dev[d] for d in mesh.devices.flat]


def smap_case(name, fn, mesh, in_specs, out_specs, args, tol=None, note="", gspmd=False):
    f = jax.jit(jax.shard_map(fn, mesh=mesh, in_specs=in_specs, out_specs=out_specs,
                              check_vma=False))
    placed = [jax.device_put(a, NamedSharding(mesh, s)) for a, s in zip(args, in_specs)]
    if gspmd:  # the GSPMD partitioner: Sharding / SPMDFullToShardShape custom calls in the global view
        jax.config.update("jax_use_shardy_partitioner", False)
    try:
        text = f.lower(*placed).compile().as_text()
        out = f(*placed)
        before = f.lower(*placed).as_text(dialect="hlo")
    finally:
        jax.config.update("jax_use_shardy_partitioner", True)
    leaves = jax.tree_util.tree_leaves(out)
    ins = [_per_device(a, mesh) for a in placed]
    outs = [_per_device(o, mesh) for o in leaves]
    save(name, text, 1, mesh.devices.size, ins, outs, tol, note)
    # the global view JAX emits before optimization: plain global inputs and outputs
    save(name + "_global", before, 1, 1, [[np.asarray(a)] for a in args], [[np.asarray(o)] for o in leaves],
         tol, note, global_view=True)


def rand(shape, dtype):
    dtype = np.dtype(dtype)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return RNG.integers(max(info.min, -100), min(info.max, 100), size=shape).astype(dtype)
    if dtype.kind == "c":
        return (RNG.standard_normal(shape) + 1j * RNG.standard_normal(shape)).astype(dtype)
    if dtype.kind == "b":
        return RNG.integers(0, 2, size=shape).astype(bool)
    return RNG.standard_normal(shape).astype(np.float32).astype(dtype)


def gen_smap():
    lax = jax.lax
    m8 = mesh_of((8,), ("i",))
    m24 = mesh_of((2, 4), ("a", "b"))
    for dt in (np.float32, np.float64, np.int32, np.uint8, np.int64, ml_dtypes.bfloat16, np.float16,
               np.complex64):
        dtn = np.dtype(dt).name
        tol = None if np.dtype(dt).kind in "iu" else 1e-6 if np.dtype(dt) in (np.float32, np.complex64) \
            else None if np.dtype(dt) == np.float64 else 1e-2
        smap_case(f"psum_{dtn}", lambda x: lax.psum(x, "i"), m8, (P("i"),), P(), [rand((8, 5), dt)], tol)
    smap_case("psum_int8_wrap", lambda x: lax.psum(x, "i"), m8, (P("i"),), P(),
              [np.full((8, 3), 100, np.int8)])
    for dt in (np.float32, np.int32, ml_dtypes.bfloat16):
        dtn = np.dtype(dt).name
        smap_case(f"pmax_{dtn}", lambda x: lax.pmax(x, "i"), m8, (P("i"),), P(), [rand((8, 4), dt)])
        smap_case(f"pmin_{dtn}", lambda x: lax.pmin(x, "i"), m8, (P("i"),), P(), [rand((8, 4), dt)])
    x = rand((8, 4), np.float32)
    x[0, 0] = np.nan
    x[:, 1] = -0.0
    x[3, 1] = 0.0
    smap_case("pmax_nan_zero", lambda x: lax.pmax(x, "i"), m8, (P("i"),), P(), [x],
              note="XLA:CPU's max is std::max: NaN skipped, first zero kept")
    smap_case("pmin_nan_zero", lambda x: lax.pmin(x, "i"), m8, (P("i"),), P(), [x])
    smap_case("psum_negzero", lambda x: lax.psum(x, "i"), m8, (P("i"),), P(),
              [np.array([[-0.0, 1.0, np.inf, np.nan]] * 8, np.float32)], note="+0 start: -0 sums to +0")
    smap_case("all_gather_tiled", lambda x: lax.all_gather(x, "i", tiled=True), m8, (P("i"),), P(),
              [rand((16, 3), np.float32)])
    smap_case("all_gather_axis1", lambda x: lax.all_gather(x, "i", axis=1, tiled=True), m8, (P(None, "i"),),
              P(), [rand((3, 16), np.int32)])
    smap_case("all_gather_stack", lambda x: lax.all_gather(x, "i"), m8, (P("i"),), P(None),
              [rand((8, 2), np.float32)])
    smap_case("psum_scatter", lambda x: lax.psum_scatter(x, "i", scatter_dimension=0, tiled=True), m8, (P(),),
              P("i"), [rand((16, 3), np.float32)], 1e-6)
    smap_case("psum_scatter_int_dim1",
              lambda x: lax.psum_scatter(x[0], "i", scatter_dimension=1, tiled=True)[None], m8, (P("i"),),
              P("i"), [rand((8, 2, 16), np.int32)])
    smap_case("all_to_all", lambda x: lax.all_to_all(x, "i", 0, 0, tiled=True), m8, (P("i"),), P("i"),
              [rand((64, 2), np.float32)])
    smap_case("all_to_all_split1_concat0", lambda x: lax.all_to_all(x, "i", 1, 0, tiled=True), m8, (P("i"),),
              P("i"), [rand((16, 16), np.int32)])
    smap_case("ppermute_shift", lambda x: lax.ppermute(x, "i", [(k, (k + 1) % 8) for k in range(8)]), m8,
              (P("i"),), P("i"), [rand((8, 3), np.float32)])
    smap_case("ppermute_partial", lambda x: lax.ppermute(x, "i", [(0, 3), (3, 5), (6, 1)]), m8,
              (P("i"),), P("i"), [rand((8, 3), np.int32)])
    smap_case("axis_index", lambda x: x * lax.axis_index("i").astype(x.dtype) + lax.axis_index("i"), m8,
              (P("i"),), P("i"), [rand((8, 2), np.int32)])
    smap_case("axis_index_f32", lambda x: x * lax.axis_index("i").astype(x.dtype) + lax.axis_index("i"), m8,
              (P("i"),), P("i"), [rand((8, 2), np.float32)], 1e-6,
              "XLA:CPU contracts the multiply-add into an FMA: not bit-exact")
    # 2-D mesh: groups over one axis (several groups)
    smap_case("mesh2x4_psum_b", lambda x: lax.psum(x, "b"), m24, (P(("a", "b")),), P("a"),
              [rand((8, 3), np.float32)], 1e-6)
    smap_case("mesh2x4_psum_a", lambda x: lax.psum(x, "a"), m24, (P(("a", "b")),), P("b"),
              [rand((8, 3), np.int32)])
    smap_case("mesh2x4_gather_b_index_a",
              lambda x: lax.all_gather(x, "b", tiled=True) * (1 + lax.axis_index("a")).astype(x.dtype), m24,
              (P(("a", "b")),), P("a"), [rand((8, 3), np.float32)])
    smap_case("mesh2x4_ppermute_a", lambda x: lax.ppermute(x, "a", [(0, 1), (1, 0)]), m24,
              (P(("a", "b")),), P(("a", "b")), [rand((8, 3), np.float32)])

    # the same programs through the GSPMD partitioner
    smap_case("gspmd_psum", lambda x: lax.psum(x, "i"), m8, (P("i"),), P(), [rand((8, 5), np.int32)], gspmd=True)
    smap_case("gspmd_all_to_all", lambda x: lax.all_to_all(x, "i", 0, 0, tiled=True), m8, (P("i"),), P("i"),
              [rand((64, 2), np.float32)], gspmd=True)
    smap_case("gspmd_ppermute_shift", lambda x: lax.ppermute(x, "i", [(k, (k + 1) % 8) for k in range(8)]), m8,
              (P("i"),), P("i"), [rand((8, 3), np.float32)], gspmd=True)
    smap_case("gspmd_mesh2x4_psum_b", lambda x: lax.psum(x, "b"), m24, (P("a", "b"),), P("a", "b"),
              [rand((4, 8), np.int32)], gspmd=True)
    smap_case("gspmd_all_gather_tiled", lambda x: lax.all_gather(x, "i", tiled=True), m8, (P("i"),), P(),
              [rand((16, 3), np.float32)], gspmd=True)

    # a data-parallel training step: mean gradient across devices
    def step(w, x, y):
        def loss(w):
            return jnp.mean((jnp.tanh(x @ w) - y) ** 2)
        g = jax.grad(loss)(w)
        g = lax.pmean(g, "i")
        return w - 0.1 * g, lax.pmean(loss(w), "i")
    smap_case("train_step", step, m8, (P(), P("i"), P("i")), (P(), P()),
              [rand((4, 2), np.float32), rand((32, 4), np.float32), rand((32, 2), np.float32)], 1e-5)


def jit_case(name, fn, mesh, in_specs, args, out_spec=None, tol=None, note="", gspmd=False):
    """jax.jit with NamedShardings: XLA's partitioner writes the collectives (mesh-form groups)."""
    kw = {}
    if out_spec is not None:
        kw["out_shardings"] = NamedSharding(mesh, out_spec)
    f = jax.jit(fn, **kw)
    placed = [jax.device_put(a, NamedSharding(mesh, s)) for a, s in zip(args, in_specs)]
    if gspmd:
        jax.config.update("jax_use_shardy_partitioner", False)
    try:
        text = f.lower(*placed).compile().as_text()
        out = f(*placed)
    finally:
        jax.config.update("jax_use_shardy_partitioner", True)
    leaves = jax.tree_util.tree_leaves(out)
    save(name, text, 1, mesh.devices.size, [_per_device(a, mesh) for a in placed],
         [_per_device(o, mesh) for o in leaves], tol, note)


def gen_jit():
    lax = jax.lax
    m8 = mesh_of((8,), ("x",))
    m42 = mesh_of((4, 2), ("data", "model"))
    jit_case("jit_contracting", lambda x, w: x @ w, m8, (P(None, "x"), P("x", None)),
             [rand((16, 32), np.float32), rand((32, 16), np.float32)], tol=1e-5)
    jit_case("jit_reduce", lambda x: x.sum(0), m8, (P("x"),), [rand((64, 8), np.float32)], tol=1e-5)
    jit_case("jit_constraint_transpose", lambda x: lax.with_sharding_constraint(
        jnp.sin(x), NamedSharding(m8, P(None, "x"))).T, m8, (P("x"),), [rand((16, 16), np.float32)], tol=1e-6)
    jit_case("jit_2d_mlp", lambda x, w1, w2: jax.nn.relu(x @ w1) @ w2, m42,
             (P("data", None), P(None, "model"), P("model", None)),
             [rand((8, 16), np.float32), rand((16, 32), np.float32), rand((32, 16), np.float32)], tol=1e-5)
    jit_case("jit_replicated_out_cumsum", jnp.cumsum, m8, (P("x"),), [rand((64,), np.int32)], out_spec=P())
    jit_case("jit_grad_mlp", jax.grad(lambda w, x: jnp.tanh(x @ w).sum()), m8, (P(None, "x"), P("x", None)),
             [rand((8, 8), np.float32), rand((16, 8), np.float32)], tol=1e-5)
    jit_case("gspmd_2d_constraint", lambda x: lax.with_sharding_constraint(
        x * 2, NamedSharding(m42, P("model", "data"))), m42, (P("data", "model"),), [rand((8, 8), np.float32)],
        gspmd=True)
    jit_case("gspmd_matmul", lambda x, w: x @ w, m8, (P("x", None), P(None, "x")),
             [rand((16, 32), np.float32), rand((32, 16), np.float32)], tol=1e-5, gspmd=True)


# --------------------------------------------------------------------------------------------------
# Hand-written multi-replica modules

def hlo_case(name, text, replicas, args, tol=None, note="", partitions=1):
    """args: per argument, a list of per-device arrays."""
    outs = runner.run_hlo_spmd(text, args, replicas, partitions)
    save(name, text, replicas, partitions, args, outs, tol, note)


ADD = """%add (a: {t}[], b: {t}[]) -> {t}[] {{
  %a = {t}[] parameter(0)
  %b = {t}[] parameter(1)
  ROOT %r = {t}[] add(%a, %b)
}}
"""


def per_dev(n, shape, dtype):
    return [rand(shape, dtype) for _ in range(n)]


def gen_hlo():
    hlo_case("rep_allreduce_groups", "HloModule m, replica_count=8\n" + ADD.format(t="f32") + """
ENTRY e (p: f32[3]) -> (f32[3], u32[], u32[]) {
  %p = f32[3] parameter(0)
  %x = f32[3] all-reduce(%p), replica_groups={{0,2,4,6},{1,3,5,7}}, to_apply=%add
  %r = u32[] replica-id()
  %q = u32[] partition-id()
  ROOT %t = (f32[3], u32[], u32[]) tuple(%x, %r, %q)
}""", 8, [per_dev(8, (3,), np.float32)], 1e-6)
    hlo_case("rep_allreduce_iota_groups", "HloModule m, replica_count=8\n" + ADD.format(t="s32") + """
ENTRY e (p: s32[2,2]) -> s32[2,2] {
  %p = s32[2,2] parameter(0)
  ROOT %x = s32[2,2] all-reduce(%p), replica_groups=[2,4]<=[4,2]T(1,0), to_apply=%add
}""", 8, [per_dev(8, (2, 2), np.int32)])
    hlo_case("rep_allreduce_variadic_empty_groups", "HloModule m, replica_count=4\n" + ADD.format(t="s32")
             + ADD.format(t="f32").replace("%add", "%addf") + """
ENTRY e (p: s32[2], q: f32[3]) -> (s32[2], f32[3]) {
  %p = s32[2] parameter(0)
  %q = f32[3] parameter(1)
  %x = s32[2] all-reduce(%p), replica_groups={}, to_apply=%add
  %y = f32[3] all-reduce(%q), replica_groups={}, to_apply=%addf
  ROOT %t = (s32[2], f32[3]) tuple(%x, %y)
}""", 4, [per_dev(4, (2,), np.int32), per_dev(4, (3,), np.float32)], 1e-6)
    # (XLA:CPU refuses an all-reduce whose reducer is not one of its kinds: "Unsupported reduction
    # computation"; tests/test_spmd.py checks a custom reducer against values worked by hand.)
    hlo_case("rep_allreduce_pred_or", """HloModule m, replica_count=4
%f (a: pred[], b: pred[]) -> pred[] {
  %a = pred[] parameter(0)
  %b = pred[] parameter(1)
  ROOT %r = pred[] or(%a, %b)
}
ENTRY e (p: pred[6]) -> pred[6] {
  %p = pred[6] parameter(0)
  ROOT %x = pred[6] all-reduce(%p), replica_groups={{0,1},{2,3}}, to_apply=%f
}""", 4, [[np.array([0, 0, 1, 1, 0, 1], bool), np.array([0, 1, 0, 1, 0, 0], bool),
           np.array([0, 0, 0, 0, 0, 0], bool), np.array([1, 0, 0, 1, 0, 0], bool)]])
    hlo_case("rep_allreduce_async", "HloModule m, replica_count=4\n" + ADD.format(t="f32") + """
ENTRY e (p: f32[4]) -> f32[4] {
  %p = f32[4] parameter(0)
  %s = f32[4] all-reduce-start(%p), replica_groups={{0,3},{1,2}}, to_apply=%add
  ROOT %d = f32[4] all-reduce-done(%s)
}""", 4, [per_dev(4, (4,), np.float32)], 1e-6)
    hlo_case("rep_all_gather", """HloModule m, replica_count=4
ENTRY e (p: f32[2,3]) -> (f32[4,3], f32[2,6]) {
  %p = f32[2,3] parameter(0)
  %g = f32[4,3] all-gather(%p), replica_groups={{0,2},{3,1}}, dimensions={0}
  %s = (f32[2,3], f32[2,6]) all-gather-start(%p), replica_groups={{1,0},{2,3}}, dimensions={1}
  %d = f32[2,6] all-gather-done(%s)
  ROOT %t = (f32[4,3], f32[2,6]) tuple(%g, %d)
}""", 4, [per_dev(4, (2, 3), np.float32)])
    hlo_case("rep_reduce_scatter", "HloModule m, replica_count=4\n" + ADD.format(t="s32") + """
ENTRY e (p: s32[8,2]) -> s32[2,2] {
  %p = s32[8,2] parameter(0)
  ROOT %r = s32[2,2] reduce-scatter(%p), replica_groups={{3,2,1,0}}, dimensions={0}, to_apply=%add
}""", 4, [per_dev(4, (8, 2), np.int32)])
    hlo_case("rep_all_to_all_array", """HloModule m, replica_count=4
ENTRY e (p: s32[2,8]) -> s32[2,8] {
  %p = s32[2,8] parameter(0)
  ROOT %r = s32[2,8] all-to-all(%p), replica_groups={{0,1,2,3}}, dimensions={1}
}""", 4, [per_dev(4, (2, 8), np.int32)])
    hlo_case("rep_all_to_all_tuple", """HloModule m, replica_count=4
ENTRY e (p: f32[2], q: f32[2]) -> (f32[2], f32[2]) {
  %p = f32[2] parameter(0)
  %q = f32[2] parameter(1)
  ROOT %r = (f32[2], f32[2]) all-to-all(%p, %q), replica_groups={{0,3},{2,1}}
}""", 4, [per_dev(4, (2,), np.float32), per_dev(4, (2,), np.float32)])
    hlo_case("rep_collective_permute", """HloModule m, replica_count=4
ENTRY e (p: f32[3]) -> (f32[3], f32[3]) {
  %p = f32[3] parameter(0)
  %a = f32[3] collective-permute(%p), source_target_pairs={{0,2},{2,1},{1,0}}
  %s = (f32[3], f32[3], u32[], u32[]) collective-permute-start(%p), source_target_pairs={{3,0},{0,3}}
  %d = f32[3] collective-permute-done(%s)
  ROOT %t = (f32[3], f32[3]) tuple(%a, %d)
}""", 4, [per_dev(4, (3,), np.float32)])
    # (collective-broadcast: "not supported by XLA:CPU ThunkEmitter"; tests/test_spmd.py checks it by hand.)
    hlo_case("rep_allreduce_bf16_max", """HloModule m, replica_count=4
%f (a: bf16[], b: bf16[]) -> bf16[] {
  %a = bf16[] parameter(0)
  %b = bf16[] parameter(1)
  ROOT %r = bf16[] maximum(%a, %b)
}
ENTRY e (p: bf16[4]) -> bf16[4] {
  %p = bf16[4] parameter(0)
  ROOT %x = bf16[4] all-reduce(%p), replica_groups={}, to_apply=%f
}""", 4, [per_dev(4, (4,), ml_dtypes.bfloat16)])
    hlo_case("rep_allreduce_in_loop", "HloModule m, replica_count=4\n" + ADD.format(t="f32") + """
%cond (s: (s32[], f32[2])) -> pred[] {
  %s = (s32[], f32[2]) parameter(0)
  %i = s32[] get-tuple-element(%s), index=0
  %n = s32[] constant(3)
  ROOT %lt = pred[] compare(%i, %n), direction=LT
}
%body (s: (s32[], f32[2])) -> (s32[], f32[2]) {
  %s = (s32[], f32[2]) parameter(0)
  %i = s32[] get-tuple-element(%s), index=0
  %x = f32[2] get-tuple-element(%s), index=1
  %one = s32[] constant(1)
  %i2 = s32[] add(%i, %one)
  %h = f32[2] constant({0.5, 0.25})
  %y = f32[2] multiply(%x, %h)
  %z = f32[2] all-reduce(%y), replica_groups={{0,1},{2,3}}, to_apply=%add
  ROOT %t = (s32[], f32[2]) tuple(%i2, %z)
}
ENTRY e (p: f32[2]) -> f32[2] {
  %p = f32[2] parameter(0)
  %z = s32[] constant(0)
  %t = (s32[], f32[2]) tuple(%z, %p)
  %w = (s32[], f32[2]) while(%t), condition=%cond, body=%body
  ROOT %r = f32[2] get-tuple-element(%w), index=1
}""", 4, [per_dev(4, (2,), np.float32)], 1e-6)


def gen_hlo_rp():
    """2 replicas x 4 partitions: the CollectiveOpGroupModes.  (An all-reduce with a channel_id and no
    use_global_device_ids -- cross-partition -- comes back from XLA's HLO -> StableHLO -> HLO round trip
    as cross-replica-and-partition, so that mode is checked by hand in tests/test_spmd.py.)"""
    hlo_case("rp_modes", "HloModule m, replica_count=2, num_partitions=4\n" + ADD.format(t="f32") + """
ENTRY e (p: f32[3]) -> (f32[3], f32[3], f32[12], u32[], u32[]) {
  %p = f32[3] parameter(0), sharding={manual}
  %crp = f32[3] all-reduce(%p), channel_id=1, replica_groups={{0},{1}}, use_global_device_ids=false, to_apply=%add, sharding={manual}
  %cr = f32[3] all-reduce(%p), replica_groups={}, to_apply=%add, sharding={manual}
  %g = f32[12] all-gather(%p), channel_id=3, replica_groups={{0,5,2,7},{4,1,6,3}}, use_global_device_ids=true, dimensions={0}, sharding={manual}
  %r = u32[] replica-id(), sharding={manual}
  %q = u32[] partition-id(), sharding={manual}
  ROOT %t = (f32[3], f32[3], f32[12], u32[], u32[]) tuple(%crp, %cr, %g, %r, %q), sharding={{manual},{manual},{manual},{manual},{manual}}
}""", 2, [per_dev(8, (3,), np.float32)], 1e-6, partitions=4)
    hlo_case("rp_permute_a2a_scatter", "HloModule m, replica_count=2, num_partitions=4\n" + ADD.format(t="s32") + """
ENTRY e (p: s32[4,2]) -> (s32[4,2], s32[4,2], s32[4,2], s32[1,2], s32[1,2]) {
  %p = s32[4,2] parameter(0), sharding={manual}
  %cpp = s32[4,2] collective-permute(%p), channel_id=1, source_target_pairs={{0,1},{1,2},{2,0}}, sharding={manual}
  %cpr = s32[4,2] collective-permute(%p), source_target_pairs={{1,0}}, sharding={manual}
  %a2a = s32[4,2] all-to-all(%p), channel_id=2, replica_groups={{0,1,2,3}}, dimensions={0}, sharding={manual}
  %rs = s32[1,2] reduce-scatter(%p), channel_id=3, replica_groups={{0,1,4,5},{2,3,6,7}}, use_global_device_ids=true, dimensions={0}, to_apply=%add, sharding={manual}
  %rs2 = s32[1,2] reduce-scatter(%p), channel_id=4, replica_groups={{1},{0}}, use_global_device_ids=false, dimensions={0}, to_apply=%add, sharding={manual}
  ROOT %t = (s32[4,2], s32[4,2], s32[4,2], s32[1,2], s32[1,2]) tuple(%cpp, %cpr, %a2a, %rs, %rs2), sharding={{manual},{manual},{manual},{manual},{manual}}
}""", 2, [per_dev(8, (4, 2), np.int32)], partitions=4)


def gen_types():
    """all-reduce add / maximum / multiply in the element types the shard_map cases do not cover."""
    types = [("f8e4m3fn", ml_dtypes.float8_e4m3fn), ("f8e5m2", ml_dtypes.float8_e5m2), ("s4", ml_dtypes.int4),
             ("u4", ml_dtypes.uint4), ("s16", np.int16), ("u16", np.uint16), ("u64", np.uint64), ("s8", np.int8),
             ("c128", np.complex128), ("bf16", ml_dtypes.bfloat16), ("f16", np.float16), ("f32", np.float32)]
    for t, dt in types:
        for op in ("add", "maximum", "multiply"):
            if op == "maximum" and t == "c128":
                continue
            text = f"""HloModule m, replica_count=4
%f (a: {t}[], b: {t}[]) -> {t}[] {{
  %a = {t}[] parameter(0)
  %b = {t}[] parameter(1)
  ROOT %r = {t}[] {op}(%a, %b)
}}
ENTRY e (p: {t}[6]) -> {t}[6] {{
  %p = {t}[6] parameter(0)
  ROOT %x = {t}[6] all-reduce(%p), replica_groups={{}}, to_apply=%f
}}"""
            tol = 1e-12 if (t == "c128" and op == "multiply") else None
            hlo_case(f"rep_allreduce_{op}_{t}", text, 4, [per_dev(4, (6,), dt)], tol,
                     "complex products: XLA:CPU's formula, a few ulps" if tol else "")
    for t, dt in (("bf16", ml_dtypes.bfloat16), ("f8e4m3fn", ml_dtypes.float8_e4m3fn), ("f16", np.float16)):
        text = f"""HloModule m, replica_count=4
%f (a: {t}[], b: {t}[]) -> {t}[] {{
  %a = {t}[] parameter(0)
  %b = {t}[] parameter(1)
  ROOT %r = {t}[] add(%a, %b)
}}
ENTRY e (p: {t}[16]) -> {t}[4] {{
  %p = {t}[16] parameter(0)
  ROOT %x = {t}[4] reduce-scatter(%p), replica_groups={{}}, dimensions={{0}}, to_apply=%f
}}"""
        hlo_case(f"rep_reduce_scatter_add_{t}", text, 4, [per_dev(4, (16,), dt)])
    for op in ("and", "or"):
        text = f"""HloModule m, replica_count=4
%f (a: pred[], b: pred[]) -> pred[] {{
  %a = pred[] parameter(0)
  %b = pred[] parameter(1)
  ROOT %r = pred[] {op}(%a, %b)
}}
ENTRY e (p: pred[8]) -> pred[8] {{
  %p = pred[8] parameter(0)
  ROOT %x = pred[8] all-reduce(%p), replica_groups={{{{0,1,2,3}}}}, to_apply=%f
}}"""
        hlo_case(f"rep_allreduce_{op}_pred", text, 4, [per_dev(4, (8,), np.bool_)])


def main():
    only = sys.argv[1:]
    if not only or "smap" in only:
        gen_smap()
    if not only or "jit" in only:
        gen_jit()
    if not only or "hlo" in only:
        gen_hlo()
        gen_hlo_rp()
        gen_types()


if __name__ == "__main__":
    main()
