"""Regenerate tests/data/dumps/: real XLA dump directories of small JAX programs (dev-only: needs JAX).

    python tools/make_dump_fixtures.py            # all programs
    python tools/make_dump_fixtures.py cnn rng    # some

For each program P, two dump folders written by XLA itself (XLA_FLAGS=--xla_dump_to=... with text,
protos and snapshots):

    tests/data/dumps/P/a/       the program as is
    tests/data/dumps/P/b/       the same program with one layer size changed (for `hlo diff a b`)
    tests/data/dumps/P/args.npz       the arguments of the user's module (arg0, arg1, ...: flat leaves)
    tests/data/dumps/P/expected.npz   what XLA:CPU computed (out0, out1, ...)

(b/ and bisect/ keep no .pb files: the tests read texts there) and tests/data/dumps/bisect/ : a per-pass dump (--xla_dump_hlo_pass_re=.*) of a quantizer
floor(x / 0.1), whose `A / const => A * (1 / const)` rewrite in the algebraic simplifier changes
some bins, with args.npz and expected.npz.

Only what the tests need is kept: HLO texts, .pb protos, the first snapshot of each module, the
non-HLO reports (small) and debug_options; LLVM IR (.ll) and object files (.o) are dropped, and so
is the per-module folder except its module.mlir (StableHLO, for the "this is MLIR" message).
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "tests" / "data" / "dumps"
FLAGS = "--xla_dump_hlo_as_text --xla_dump_hlo_as_proto --xla_dump_hlo_snapshots"


# --------------------------------------------------------------------------------------------------
# The programs (run in a child process, with XLA_FLAGS set before JAX starts)

def program(name: str, variant: str):
    """(jitted function, args tuple).  variant 'b' changes one layer size."""
    import jax
    import jax.numpy as jnp
    import numpy as np
    sys.path.insert(0, str(ROOT / "tools"))
    import jax_models as jm
    r = np.random.default_rng(11)
    big = variant == "b"
    if name == "cnn":
        p = jm.cnn_params(r, hw=8, c_in=1, c=6 if big else 4, classes=3)
        x = r.standard_normal((2, 8, 8, 1)).astype(np.float32)
        y = np.array([0, 2], np.int32)

        def cnn_train_step(p, x, y):
            return jm.cnn_train_step(p, x, y)
        return jax.jit(cnn_train_step), (p, x, y)
    if name == "transformer":
        p = jm.tf_params(r, V=16, d=16, f=48 if big else 32, T=8)
        tokens = r.integers(0, 16, (2, 8)).astype(np.int32)
        targets = np.roll(tokens, -1, axis=1)

        def decoder_loss(p, tokens, targets):
            return jm.tf_loss(p, tokens, targets)
        return jax.jit(decoder_loss), (p, tokens, targets)
    if name == "rnn":
        p = jm.gru_params(r, n_in=3, n_h=6 if big else 4)
        xs = r.standard_normal((5, 2, 3)).astype(np.float32)
        h0 = np.zeros((2, 6 if big else 4), np.float32)

        def gru_scan(p, xs, h0):
            return jm.gru_run(p, xs, h0)
        return jax.jit(gru_scan), (p, xs, h0)
    if name == "linalg_fft":
        n = 6 if big else 5
        a = r.standard_normal((n, n)).astype(np.float32)
        b = r.standard_normal((n, 2)).astype(np.float32)

        def solve_spectrum(a, b):
            spd = a @ a.T + n * jnp.eye(n, dtype=a.dtype)
            chol = jnp.linalg.cholesky(spd)
            x = jax.scipy.linalg.cho_solve((chol, True), b)
            q, _ = jnp.linalg.qr(a)
            spec = jnp.fft.rfft(x, axis=0)
            return x, jnp.abs(spec), q @ x
        return jax.jit(solve_spectrum), (a, b)
    if name == "rng":
        key = jax.random.key(7)  # a helper module of JAX's own (jit__threefry_seed) is dumped too
        x = r.standard_normal((4, 6 if big else 5)).astype(np.float32)

        def dropout_noise(key, x):
            k1, k2, k3 = jax.random.split(key, 3)
            noisy = x + 0.1 * jax.random.normal(k1, x.shape)
            keep = jax.random.bernoulli(k2, 0.8, x.shape)
            pick = jax.random.categorical(k3, x, axis=-1)
            return jnp.where(keep, noisy / 0.8, 0.0), pick, jax.random.uniform(k3, (3,))
        return jax.jit(dropout_noise), (key, x)
    if name == "bisect":
        x = quantizer_inputs()

        def quantize(x):
            return jnp.floor(x / np.float32(0.1)).astype(jnp.int32), jnp.sum(jnp.tanh(x))
        return jax.jit(quantize), (x,)
    raise SystemExit(f"unknown program {name}")


def quantizer_inputs():
    """Values where floor(x / 0.1f) and floor(x * (1 / 0.1f)) differ (a few), among ordinary ones."""
    import numpy as np
    cand = np.array([k / 10 for k in range(1, 400)], dtype=np.float32)  # 0.1, ..., 39.9 as written
    with np.errstate(all="ignore"):
        a = np.floor(cand / np.float32(0.1))
        b = np.floor(cand * (np.float32(1) / np.float32(0.1)))
    differ = cand[a != b]
    same = cand[a == b]
    return np.concatenate([same[:12], differ[:4]]).astype(np.float32)


def child(name: str, variant: str, where: str) -> None:
    import jax
    import numpy as np
    fn, args = program(name, variant)
    out = fn(*args)
    if variant == "a":
        leaves = jax.tree_util.tree_leaves(args)
        leaves = [np.asarray(jax.random.key_data(a)) if jax.dtypes.issubdtype(a.dtype, jax.dtypes.prng_key)
                  else np.asarray(a) for a in leaves]
        np.savez(Path(where) / "args.npz", **{f"arg{k}": a for k, a in enumerate(leaves)})
        outs = [np.asarray(a) for a in jax.tree_util.tree_leaves(out)]
        np.savez(Path(where) / "expected.npz", **{f"out{k}": a for k, a in enumerate(outs)})


# --------------------------------------------------------------------------------------------------
# Running and pruning

KEEP_IN_FOLDER = {"module.mlir"}


def prune(src: Path, dst: Path, texts_only: bool = False) -> None:
    """Copy what the tests need from XLA's dump folder src to dst (texts_only: no .pb files)."""
    dst.mkdir(parents=True, exist_ok=True)
    seen_snapshot = set()
    for f in sorted(src.iterdir(), key=lambda p: p.name):
        if f.is_dir():
            for g in f.iterdir():
                if g.name in KEEP_IN_FOLDER:
                    (dst / f.name).mkdir(exist_ok=True)
                    shutil.copy2(g, dst / f.name / g.name)
            continue
        if f.suffix in (".ll", ".o") or ".obj-file." in f.name or (texts_only and f.suffix == ".pb"):
            continue
        m = re.match(r"(module_\d+\.[^.]+)\.snapshot\.", f.name)
        if m:
            if m.group(1) in seen_snapshot:
                continue
            seen_snapshot.add(m.group(1))
        if f.name.endswith("-buffer-assignment-values.txt") or f.name.endswith("-live-range.txt"):
            if f.stat().st_size > 4000:
                continue
        shutil.copy2(f, dst / f.name)


def dump(name: str, variant: str, extra_flags: str = "") -> None:
    dest = OUT / name / variant if name != "bisect" else OUT / name / "dump"
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, XLA_FLAGS=f"--xla_dump_to={tmp}/d {FLAGS} {extra_flags}".strip(),
                   JAX_PLATFORMS="cpu")
        (OUT / name).mkdir(parents=True, exist_ok=True)
        subprocess.run([sys.executable, __file__, "--child", name, variant, str(OUT / name)], env=env,
                       check=True)
        if dest.exists():
            shutil.rmtree(dest)
        prune(Path(tmp) / "d", dest, texts_only=variant == "b" or name == "bisect")


def main(argv) -> None:
    if argv[:1] == ["--child"]:
        child(*argv[1:4])
        return
    names = argv or ["cnn", "transformer", "rnn", "linalg_fft", "rng", "bisect"]
    for name in names:
        if name == "bisect":
            dump("bisect", "a", "--xla_dump_hlo_pass_re=.*")
            continue
        for variant in ("a", "b"):
            dump(name, variant)
        print(f"{name}: done")


if __name__ == "__main__":
    main(sys.argv[1:])
