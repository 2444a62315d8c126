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
