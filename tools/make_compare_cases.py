#!/usr/bin/env python3
"""Regenerate tests/data/compare/ (dev-only: needs JAX; never imported by hlo_interp or its tests).

    tf2_causal/          a 2-layer causal transformer decoder (pre-LN, multi-head attention with a
                         constant(-inf) causal mask, GELU MLP), f32, logits [2, 32, 100] (6,400 values):
        before.hlo       jax.jit(f).lower(*args).as_text(dialect="hlo")
        after.hlo        XLA:CPU's optimized module (compiled.as_text())
        inputs.npz       arg0, arg1, ...
        expected.npz     out0: XLA:CPU's result
        reference_f64.npz out0: the same program run by XLA:CPU in f64 (x64), for measuring the noise
    linalg_fft/          an f32 program mixing FFT, a dense layer and a linear solve (LAPACK):
                         s = irfft(rfft(x) * filt); h = s @ w; z = solve(a @ a.T + 16 I, h.T)
    random_mlp/          jax.random (threefry) initialising and running a 2-layer MLP with dropout:
                         w1, w2 ~ normal, keep ~ bernoulli(0.9); y = relu(x @ w1) * keep / 0.9 @ w2
                         (both with before.hlo, after.hlo, inputs.npz, expected.npz)
    backend_config/      one compilation, printed twice (backend_config compared as JSON):
        compiled.hlo     jax.jit(f).lower(x).compile().as_text()
        dump.cpu_after_optimizations.txt   what --xla_dump_to wrote for that same compilation

Usage: python3 tools/make_compare_cases.py [--out DIR]
"""
from __future__ import annotations

import os
import sys
import tempfile

_DUMP = tempfile.mkdtemp(prefix="hlo_compare_dump_")
os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") + f" --xla_dump_to={_DUMP}").strip()
os.environ.setdefault("JAX_PLATFORMS", "cpu")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import argparse  # noqa: E402
import glob  # noqa: E402
import shutil  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
from jax import lax  # noqa: E402

jax.config.update("jax_traceback_in_locations_limit", 0)
REPO = Path(__file__).resolve().parent.parent

B, T, V, D, H, F, LAYERS = 2, 32, 100, 32, 4, 64, 2


def params(r, dt):
    def w(*shape, scale=None):
        return (r.standard_normal(shape) * (scale if scale is not None else 1 / np.sqrt(shape[0]))).astype(dt)
    layers = []
    for _ in range(LAYERS):
        layers.append({"ln1_g": np.ones(D, dt) + w(D, scale=0.05), "ln1_b": w(D, scale=0.05),
                       "wqkv": w(D, 3 * D), "wo": w(D, D), "ln2_g": np.ones(D, dt) + w(D, scale=0.05),
                       "ln2_b": w(D, scale=0.05), "w1": w(D, F), "b1": w(F, scale=0.05), "w2": w(F, D)})
    return {"emb": w(V, D, scale=0.5), "pos": w(T, D, scale=0.1), "layers": layers, "head": w(D, V)}


def layer_norm(x, g, b):
    mean = jnp.mean(x, axis=-1, keepdims=True)
    var = jnp.mean(jnp.square(x - mean), axis=-1, keepdims=True)
    return (x - mean) * lax.rsqrt(var + 1e-5) * g + b


def decoder(p, tokens):
    x = p["emb"][tokens] + p["pos"][:T]
    hd = D // H
    mask = jnp.tril(jnp.ones((T, T), bool))
    for lp in p["layers"]:
        h = layer_norm(x, lp["ln1_g"], lp["ln1_b"])
        q, k, v = jnp.split(h @ lp["wqkv"], 3, axis=-1)
        q, k, v = (t.reshape(B, T, H, hd) for t in (q, k, v))
        s = jnp.einsum("bthd,bshd->bhts", q, k) / np.sqrt(hd).astype(x.dtype)
        s = jnp.where(mask, s, -jnp.inf)  # the causal mask: constant(-inf) in the HLO
        a = jax.nn.softmax(s, axis=-1)
        o = jnp.einsum("bhts,bshd->bthd", a, v).reshape(B, T, D)
        x = x + o @ lp["wo"]
        h = layer_norm(x, lp["ln2_g"], lp["ln2_b"])
        x = x + jax.nn.gelu(h @ lp["w1"] + lp["b1"]) @ lp["w2"]
    return x @ p["head"]


def linalg_fft(x, filt, w, a):
    s = jnp.fft.irfft(jnp.fft.rfft(x, axis=-1) * filt, n=x.shape[-1], axis=-1)
    h = s @ w
    spd = a @ a.T + 16 * jnp.eye(a.shape[0], dtype=a.dtype)
    return jnp.linalg.solve(spd, h.T), s


def random_mlp(key, x):
    k1, k2, k3 = jax.random.split(key, 3)
    w1 = jax.random.normal(k1, (32, 64), jnp.float32) / np.float32(np.sqrt(32))
    keep = jax.random.bernoulli(k2, 0.9, (16, 64))
    w2 = jax.random.normal(k3, (64, 10), jnp.float32) * np.float32(0.1)
    h = jnp.where(keep, jax.nn.relu(x @ w1), 0) / np.float32(0.9)
    return h @ w2, w1


def write_case(d: Path, fn, args):
    jf = jax.jit(fn)
    lowered = jf.lower(*args)
    compiled = lowered.compile()
    d.mkdir(parents=True, exist_ok=True)
    (d / "before.hlo").write_text(lowered.as_text(dialect="hlo"))
    (d / "after.hlo").write_text(compiled.as_text())
    save(d / "inputs.npz", **{f"arg{k}": np.asarray(a) for k, a in enumerate(args)})
    outs = jax.tree_util.tree_leaves(compiled(*args))
    save(d / "expected.npz", **{f"out{k}": np.asarray(o) for k, o in enumerate(outs)})


def save(path: Path, **arrays):
    path.parent.mkdir(parents=True, exist_ok=True)
    np.savez(path, **arrays)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=str(REPO / "tests" / "data" / "compare"))
    out = Path(ap.parse_args().out)
    r = np.random.default_rng(11)
    p = params(r, np.float32)
    tokens = r.integers(0, V, (B, T)).astype(np.int32)
    leaves, treedef = jax.tree_util.tree_flatten(p)
    leaves = [np.asarray(a) for a in leaves]

    def flat(*args):
        return decoder(jax.tree_util.tree_unflatten(treedef, list(args[:-1])), args[-1])
    args = leaves + [tokens]
    jf = jax.jit(flat)
    lowered = jf.lower(*args)
    compiled = lowered.compile()
    d = out / "tf2_causal"
    d.mkdir(parents=True, exist_ok=True)
    (d / "before.hlo").write_text(lowered.as_text(dialect="hlo"))
    (d / "after.hlo").write_text(compiled.as_text())
    save(d / "inputs.npz", **{f"arg{k}": a for k, a in enumerate(args)})
    save(d / "expected.npz", out0=np.asarray(compiled(*args)))

    # the diff pair: the dump's text of the compilation above, and compiled.as_text()
    dumped = sorted(glob.glob(os.path.join(_DUMP, "*jit_flat*cpu_after_optimizations.txt")))
    if len(dumped) != 1:
        sys.exit(f"expected one jit_flat after-optimizations dump in {_DUMP}, found {dumped}")
    bc = out / "backend_config"
    bc.mkdir(parents=True, exist_ok=True)
    (bc / "compiled.hlo").write_text(compiled.as_text())
    shutil.copyfile(dumped[0], bc / "dump.cpu_after_optimizations.txt")

    r2 = np.random.default_rng(12)
    f32 = np.float32
    write_case(out / "linalg_fft", linalg_fft,
               [r2.standard_normal((8, 64)).astype(f32), r2.random(33).astype(f32),
                (r2.standard_normal((64, 16)) / 8).astype(f32), r2.standard_normal((16, 16)).astype(f32)])
    write_case(out / "random_mlp", random_mlp,
               [np.asarray(jax.random.key_data(jax.random.PRNGKey(7))), r2.standard_normal((16, 32)).astype(f32)])

    # the f64 reference (same program, same inputs, x64)
    jax.config.update("jax_enable_x64", True)
    args64 = [a.astype(np.float64) if a.dtype == np.float32 else a for a in args]
    save(d / "reference_f64.npz", out0=np.asarray(jax.jit(flat)(*args64)))
    shutil.rmtree(_DUMP, ignore_errors=True)
    print(f"wrote {d} and {bc}")


if __name__ == "__main__":
    main()
