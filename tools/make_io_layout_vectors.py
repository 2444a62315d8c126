"""DEV ONLY: regenerate tests/golden/layout/, tests/golden/scan/ and tests/data/io_layout/xla_verdicts.json
(XLA:CPU through JAX; never a runtime or test dependency).

1. Real JAX programs whose optimized HLO has layout-changing bitcasts and copies: case directories
   tests/golden/layout/<name>/ (tools/oracle/writer.py).
2. The hand-written tiled-layout bitcast modules of tests/test_ops_io_layout.py are offered to XLA:CPU
   (hlo_module_from_text -> hlo_to_stablehlo -> compile): its verdict is written to xla_verdicts.json.
   XLA rejects them (the StableHLO conversion refuses bitcasts whose layouts do not fit the logical
   shapes), so their expected values come from XLA's tiling rules (see hlo_interp/layout.py).
3. The scan modules (tools/oracle/families/scan.py) run on XLA:CPU -> tests/golden/scan/.

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

OUT = Path(__file__).resolve().parent.parent / "tests" / "data" / "io_layout"  # xla_verdicts.json
sys.path.insert(0, str(Path(__file__).resolve().parent))
from oracle import runner  # noqa: E402
from oracle.writer import write_case  # noqa: E402

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
    return runner.run_hlo(text, args)[1]


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    for name, (f, args) in PROGRAMS.items():
        before, after, outs = runner.run_jax(f, args, keep_unused=False)
        write_case("layout", name, {"before": before, "after": after}, args, outs, source="jax.jit", compare="bits")
        print(name, "ok", "bitcast" in after)
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
    from oracle.families import scan
    for d in scan.declare():  # tests/golden/scan/
        d.write()
        print(d.name, "ok")

if __name__ == "__main__":
    main()
