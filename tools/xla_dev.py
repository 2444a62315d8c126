"""Helpers of the dev-only generators of XLA-computed test data (needs JAX; never imported by
hlo_interp or its tests): run hand-written HLO text on XLA:CPU, and store arrays NumPy cannot save."""
from __future__ import annotations

import numpy as np

# dtypes np.save writes and np.load reads back; others (bf16, f8, int4, ...) are stored as raw bits
NATIVE = {"bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float16",
          "float32", "float64", "complex64", "complex128"}


def cpu_backend():
    from jax._src import xla_bridge
    return xla_bridge.get_backend("cpu")


def run_hlo(text, args):
    """Compile HLO text with XLA:CPU and run it: (XLA's optimized module text, result leaves)."""
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


def store(arr):
    """(array np.savez can write, metadata): ml_dtypes arrays become their raw bits (`stored_as`)."""
    arr = np.asarray(arr)
    meta = {"dtype": arr.dtype.name, "shape": list(arr.shape)}
    if arr.dtype.name in NATIVE:
        return arr, meta
    raw = arr.view({1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[arr.dtype.itemsize])
    meta["stored_as"] = raw.dtype.name
    return raw, meta
