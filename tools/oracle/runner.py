"""The oracle's runner: the ONLY code of the project that touches jax / jax._src (dev-only; never imported
by hlo_interp or its tests).  It compiles HLO text (or a JAX function) for XLA:CPU and runs it."""
from __future__ import annotations

import os

import numpy as np

os.environ.setdefault("JAX_PLATFORMS", "cpu")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

_BACKEND = None


def cpu_backend():
    global _BACKEND
    if _BACKEND is None:
        import jax
        jax.config.update("jax_enable_x64", True)
        from jax._src import xla_bridge
        _BACKEND = xla_bridge.get_backend("cpu")
    return _BACKEND


def run_hlo(text: str, args) -> tuple[str, list[np.ndarray]]:
    """Compile HLO text with XLA:CPU (XLA's parser -> StableHLO -> PJRT) and run it on one device:
    (XLA's optimized module text, result leaves)."""
    import jax
    from jax._src.lib import _jax, hlo, xla_client
    be = cpu_backend()
    m = hlo.hlo_module_from_text(text)
    mlir = _jax.mlir.hlo_to_stablehlo(m.as_serialized_hlo_module_proto())
    devs = _jax.DeviceList(tuple(be.local_devices()[:1]))
    exe = be.compile_and_load(mlir, devs, xla_client.CompileOptions())
    res = exe.execute_sharded([jax.device_put(a, be.local_devices()[0]) for a in args])
    leaves = [np.asarray(x[0]) for x in res.disassemble_into_single_device_arrays()]
    return exe.hlo_modules()[0].to_string(), leaves


def run_jax(fn, args, x64: bool = True, keep_unused: bool = True) -> tuple[str, str, list[np.ndarray]]:
    """jax.jit(fn) lowered and compiled for XLA:CPU and run: (pre-optimization HLO text, XLA's optimized
    text, result leaves flattened depth-first)."""
    import jax
    cpu_backend()
    jf = jax.jit(fn, keep_unused=keep_unused)
    jax.config.update("jax_enable_x64", x64)
    try:
        lowered = jf.lower(*args)
    finally:
        jax.config.update("jax_enable_x64", True)
    before = lowered.as_text(dialect="hlo")
    compiled = lowered.compile()
    after = compiled.as_text()
    out = compiled(*args)
    return before, after, [np.asarray(v) for v in jax.tree_util.tree_leaves(out)]


def lower(fn, args):
    """jax.jit(fn) lowered for XLA:CPU (for declarations that need the Lowered object itself)."""
    import jax
    cpu_backend()
    return jax.jit(fn).lower(*args)


def lower_for_platform(fn, args, platform: str) -> str:
    """The pre-optimization HLO text of jax.jit(fn) lowered for another platform (e.g. "tpu", where some
    ops stay HLO ops that the CPU lowering turns into custom calls)."""
    import jax
    cpu_backend()
    return jax.jit(fn).trace(*args).lower(lowering_platforms=(platform,)).as_text(dialect="hlo")


def parse_hlo(text: str):
    """XLA's own HLO parser (no verifier): the parsed module; raises on a text XLA refuses."""
    from jax._src.lib import hlo
    return hlo.hlo_module_from_text(text)


def compile_hlo(text: str):
    """Compile HLO text for XLA:CPU without running it, through the path run_hlo takes (XLA's parser ->
    StableHLO -> PJRT compile, which runs XLA's verifier); raises on a text XLA refuses."""
    from jax._src.lib import _jax, xla_client
    be = cpu_backend()
    mlir = _jax.mlir.hlo_to_stablehlo(parse_hlo(text).as_serialized_hlo_module_proto())
    return be.compile_and_load(mlir, _jax.DeviceList(tuple(be.local_devices()[:1])), xla_client.CompileOptions())


def run_hlo_spmd(text: str, args, replicas: int, partitions: int = 1) -> list[list[np.ndarray]]:
    """Compile HLO text for replicas x partitions XLA:CPU devices (the process needs
    --xla_force_host_platform_device_count) and run it; `args`: per argument, its per-device arrays.
    Returns, per result leaf, its per-device arrays (device d = replica d // partitions, partition
    d % partitions)."""
    import jax
    from jax._src.lib import _jax, xla_client
    from jax.sharding import Mesh, NamedSharding, PartitionSpec
    be = cpu_backend()
    mlir = _jax.mlir.hlo_to_stablehlo(parse_hlo(text).as_serialized_hlo_module_proto())
    nd = replicas * partitions
    devs = be.local_devices()[:nd]
    opts = xla_client.CompileOptions()
    opts.num_replicas = replicas
    opts.num_partitions = partitions
    if partitions > 1:  # (every instruction is sharding={manual}: the partitioner leaves it alone)
        opts.executable_build_options.use_spmd_partitioning = True
    opts.device_assignment = xla_client.DeviceAssignment.create(np.arange(nd).reshape(replicas, partitions))
    exe = be.compile_and_load(mlir, _jax.DeviceList(tuple(devs)), opts)
    mesh = Mesh(np.array(devs), ("d",))
    arrs = []
    for per_dev in args:
        shards = [jax.device_put(np.asarray(x)[None], d) for x, d in zip(per_dev, devs)]
        shape = (nd,) + np.asarray(per_dev[0]).shape
        arrs.append(jax.make_array_from_single_device_arrays(shape, NamedSharding(mesh, PartitionSpec("d")), shards))
    res = exe.execute_sharded(arrs)
    outs = []
    for leaf in res.disassemble_into_single_device_arrays():
        by_dev = {next(iter(s.devices())): np.asarray(s) for s in leaf}
        outs.append([by_dev[d] for d in devs])
    return outs
