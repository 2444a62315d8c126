#!/usr/bin/env python3
"""Write one LARGE real HLO text printed by XLA (dev-only; input for the parse-speed benchmark).

This script is a developer tool.  It needs JAX, which is NOT a dependency of hlo-interp, and its
output is not meant to be committed.

It builds a training step (loss + grad + SGD update) of a deep transformer whose layers are written
as a Python loop, so every layer is unrolled into the HLO, and prints

    --kind after   (default)  jax.jit(step).lower(...).compile().as_text()     XLA:CPU optimized,
                              with metadata (op_name, source stack frames)
    --kind before             jax.jit(step).lower(...).as_text(dialect="hlo", debug_info=True)

The number of layers is chosen so the text is at least --min-mb megabytes: small probes measure how
the size grows with depth (about quadratically for the optimized text, since XLA's fusions grow),
the program is built with the extrapolated depth, and deepened if still short.

    python3 tools/make_big_dump.py --out /tmp/big.hlo --min-mb 10
    python3 tools/make_big_dump.py --out /tmp/big_before.hlo --min-mb 10 --kind before
    python3 tools/make_big_dump.py --out /tmp/small.hlo --min-mb 1
"""
from __future__ import annotations

import os

os.environ.setdefault("JAX_PLATFORMS", "cpu")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import argparse  # noqa: E402
import math  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Optional  # noqa: E402

import numpy as np  # noqa: E402

try:
    import jax  # noqa: E402
    import jax.numpy as jnp  # noqa: E402
    from jax import lax  # noqa: E402
except ImportError:  # pragma: no cover
    sys.exit("make_big_dump.py needs JAX (dev-only tool): pip install jax")

jax.config.update("jax_hlo_source_file_canonicalization_regex", r".*/")

D, F, H, T, B, V = 32, 64, 4, 16, 2, 50  # model width, MLP width, heads, sequence, batch, vocab


def _layernorm(x, g, b):
    m = x.mean(-1, keepdims=True)
    v = ((x - m) ** 2).mean(-1, keepdims=True)
    return (x - m) * lax.rsqrt(v + 1e-5) * g + b


def _block(p, x):
    h = _layernorm(x, p["ln1_g"], p["ln1_b"])
    q, k, v = jnp.split(h @ p["wqkv"], 3, -1)

    def heads(t):
        return t.reshape(B, T, H, D // H).transpose(0, 2, 1, 3)

    q, k, v = heads(q), heads(k), heads(v)
    s = jnp.einsum("bhqd,bhkd->bhqk", q, k) / math.sqrt(D // H)
    s = jnp.where(jnp.tril(jnp.ones((T, T), bool)), s, -1e9)
    a = jnp.einsum("bhqk,bhkd->bhqd", jax.nn.softmax(s, -1), v)
    x = x + a.transpose(0, 2, 1, 3).reshape(B, T, D) @ p["wo"]
    h = _layernorm(x, p["ln2_g"], p["ln2_b"])
    return x + jax.nn.gelu(h @ p["w1"] + p["b1"]) @ p["w2"]


def _model(params, tokens):
    x = params["embed"][tokens]
    for p in params["layers"]:  # Python loop: every layer is unrolled into the HLO
        x = _block(p, x)
    x = _layernorm(x, params["lnf_g"], params["lnf_b"])
    return x @ params["embed"].T


def _loss(params, tokens, targets):
    logits = jax.nn.log_softmax(_model(params, tokens))
    return -jnp.take_along_axis(logits, targets[..., None], -1).mean()


def train_step(params, tokens, targets):
    loss, grads = jax.value_and_grad(_loss)(params, tokens, targets)
    params = jax.tree.map(lambda p, g: p - 1e-3 * g, params, grads)
    return params, loss


def _params(layers: int):
    S = jax.ShapeDtypeStruct
    f = jnp.float32
    layer = {"ln1_g": S((D,), f), "ln1_b": S((D,), f), "wqkv": S((D, 3 * D), f),
             "wo": S((D, D), f), "ln2_g": S((D,), f), "ln2_b": S((D,), f), "w1": S((D, F), f),
             "b1": S((F,), f), "w2": S((F, D), f)}
    return {"embed": S((V, D), f), "layers": [dict(layer) for _ in range(layers)],
            "lnf_g": S((D,), f), "lnf_b": S((D,), f)}


def hlo_text(layers: int, kind: str) -> str:
    S = jax.ShapeDtypeStruct
    args = (_params(layers), S((B, T), jnp.int32), S((B, T), jnp.int32))
    lowered = jax.jit(train_step, donate_argnums=(0,)).lower(*args)
    if kind == "before":
        return lowered.as_text(dialect="hlo", debug_info=True)
    return lowered.compile().as_text()


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--min-mb", type=float, default=10.0, help="minimum size in MB (10**6 bytes)")
    ap.add_argument("--kind", choices=("after", "before"), default="after")
    ap.add_argument("--layers", type=int, help="fixed number of layers (skips the size search)")
    a = ap.parse_args(argv)
    t0 = time.time()
    want = int(a.min_mb * 1e6)
    if a.layers:
        layers = a.layers
        text = hlo_text(layers, a.kind)
    else:
        # The optimized text grows about quadratically with depth (XLA's fusions get bigger), the
        # unoptimized one linearly: fit size = c0 + c1*L + c2*L**2 through small probes, solve
        # for the depth, and refit with each new measurement until the text is big enough.
        pts: dict[int, int] = {}
        best: Optional[tuple[int, str]] = None  # smallest depth found whose text is big enough

        def measure(n: int) -> None:
            nonlocal best
            t = hlo_text(n, a.kind)
            pts[n] = len(t)
            if len(t) >= want and (best is None or n < best[0]):
                best = (n, t)

        for probe in (2, 4, 8):
            measure(probe)
            if best:
                break
        while not (best and pts[best[0]] <= 1.5 * want):
            xs = sorted(pts)[-3:]
            if len(xs) >= 3:
                c2, c1, c0 = np.polyfit(xs, [pts[x] for x in xs], 2)
            else:
                c2, (c1, c0) = 0.0, np.polyfit(xs, [pts[x] for x in xs], 1)
            target = want * 1.02
            if c2 > 1e-9:
                guess = (-c1 + math.sqrt(max(c1 * c1 - 4 * c2 * (c0 - target), 0.0))) / (2 * c2)
            else:
                guess = (target - c0) / max(c1, 1.0)
            short = [x for x in pts if pts[x] < want]
            n = max(math.ceil(guess), max(short) + 1 if short else 1)
            if best:
                n = min(n, best[0] - 1)
            if n in pts or n < 1:
                break
            print(f"size(L) ~ {c0:.0f} + {c1:.0f}*L + {c2:.1f}*L^2; trying L={n} layers",
                  file=sys.stderr)
            measure(n)
        assert best is not None
        layers, text = best
    a.out.parent.mkdir(parents=True, exist_ok=True)
    a.out.write_text(text)
    size = a.out.stat().st_size
    print(f"wrote {a.out}: {size} bytes ({size / 1e6:.2f} MB), {text.count(chr(10))} lines, "
          f"{layers} layers, kind={a.kind}, {time.time() - t0:.0f}s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
