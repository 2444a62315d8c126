"""DEV ONLY: regenerate tests/data/io_layout/ (XLA:CPU through JAX; never a runtime or test dependency).

1. Real JAX programs whose optimized HLO has layout-changing bitcasts and copies: before- and
   after-optimization HLO text, the inputs and XLA:CPU's outputs -> <name>.before.hlo, <name>.after.hlo,
   <name>.npz (arg0.., out0..).
2. The hand-written tiled-layout bitcast modules of tests/test_ops_io_layout.py are offered to XLA:CPU
   (hlo_module_from_text -> hlo_to_stablehlo -> compile): its verdict is written to xla_verdicts.json.
   XLA rejects them (the StableHLO conversion refuses bitcasts whose layouts do not fit the logical
   shapes), so their expected values come from XLA's tiling rules (see hlo_interp/layout.py).
3. The scan modules of the test file run on XLA:CPU -> scan.npz (<case>.out<k>) and scan.json (dtypes).

Usage: python3 tools/make_io_layout_vectors.py
"""
from __future__ import annotations

import json
import os
import sys
from pathlib import Path

os.environ.setdefault("JAX_PLATFORMS", "cpu")
import jax
import numpy as np

jax.config.update("jax_enable_x64", True)
import jax.numpy as jnp

OUT = Path(__file__).resolve().parent.parent / "tests" / "data" / "io_layout"

PROGRAMS = {
    "transpose_reshape": (lambda x: (jnp.transpose(x, (1, 0, 2)).reshape(6, 4) * 2).T.reshape(-1),
                          [np.arange(24, dtype=np.float32).reshape(2, 3, 4) - 7.5]),
    "bitcast_convert_t": (lambda x: jax.lax.bitcast_convert_type(x.T, jnp.int32),
                          [np.linspace(-3, 3, 12, dtype=np.float32).reshape(3, 4)]),
    "minor_reshape_bf16": (lambda x: jnp.swapaxes(x, 0, 2).reshape(4, -1) + 1,
                           [np.arange(24).reshape(2, 3, 4).astype(jnp.bfloat16)]),
    "s8_transpose_sum": (lambda x: jnp.transpose(x, (2, 0, 1)).reshape(4, 6).sum(axis=1, dtype=jnp.int8),
                         [(np.arange(24) * 37 % 251 - 125).astype(np.int8).reshape(2, 3, 4)]),
}


def _xla_hlo(text: str, *args):
    from jax._src.lib import _jax, hlo, xla_client
    be = jax.devices("cpu")[0].client
    m = hlo.hlo_module_from_text(text)
    mlir = _jax.mlir.hlo_to_stablehlo(m.as_serialized_hlo_module_proto())
    devs = _jax.DeviceList(tuple(be.local_devices()[:1]))
    exe = be.compile_and_load(mlir, devs, xla_client.CompileOptions())
    res = exe.execute_sharded([jax.device_put(a, be.local_devices()[0]) for a in args])
    return [np.asarray(x[0]) for x in res.disassemble_into_single_device_arrays()]


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    for name, (f, args) in PROGRAMS.items():
        lowered = jax.jit(f).lower(*args)
        compiled = lowered.compile()
        outs = jax.tree_util.tree_leaves(compiled(*args))
        (OUT / f"{name}.before.hlo").write_text(lowered.as_text(dialect="hlo"))
        (OUT / f"{name}.after.hlo").write_text(compiled.as_text())
        data = {f"arg{k}": np.asarray(a) for k, a in enumerate(args)}
        data.update({f"out{k}": np.asarray(o) for k, o in enumerate(outs)})
        # bf16 is stored as its uint16 bits (np.savez cannot store ml_dtypes); the test views it back
        store = {k: (v.view(np.uint16) if v.dtype.name == "bfloat16" else v) for k, v in data.items()}
        np.savez(OUT / f"{name}.npz", **store)
        print(name, "ok", "bitcast" in compiled.as_text())
    sys.path[:0] = [str(OUT.parent.parent), str(OUT.parent.parent.parent)]
    from test_ops_io_layout import TILED_CASES
    verdicts = {}
    for name, (text, x, _expected) in TILED_CASES.items():
        try:
            got = _xla_hlo(text, x)
            verdicts[name] = {"accepted": True, "out0": np.asarray(got[0]).tolist()}
        except Exception as e:  # noqa: BLE001 (XLA's rejection, recorded as is)
            verdicts[name] = {"accepted": False, "error": str(e).splitlines()[0][:300]}
    (OUT / "xla_verdicts.json").write_text(json.dumps(verdicts, indent=1) + "\n")
    print(json.dumps(verdicts, indent=1))
    from test_ops_io_layout import SCAN_CASES
    store, meta = {}, {}
    for name, (text, args) in SCAN_CASES.items():
        outs = _xla_hlo(text, *args)
        meta[name] = {"dtypes": [o.dtype.name for o in outs]}
        for k, o in enumerate(outs):
            store[f"{name}.out{k}"] = o.view(np.uint16) if o.dtype.name == "bfloat16" else o
        print(name, [o.tolist() for o in outs])
    np.savez(OUT / "scan.npz", **store)
    (OUT / "scan.json").write_text(json.dumps(meta, indent=1) + "\n")


if __name__ == "__main__":
    main()
