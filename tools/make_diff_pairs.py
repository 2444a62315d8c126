"""Regenerate tests/data/diff/: pairs of real HLO dumps from XLA (through JAX) for `hlo diff`.

Dev-only (needs JAX); never imported by hlo_interp or its tests.  Run from the repository root:

    python3 tools/make_diff_pairs.py

Pairs (A, B):
  renamed.{a,b}.hlo     the same program compiled twice: `f` directly and `f` jitted inside another
                        jit (XLA inlines the call, so the instructions get new numbers: sin.0 -> sin.2)
                        and the metadata differs (op_name "jit(f)/sin" vs "jit(nested)/jit(f)/sin")
  reordered.{a,b}.hlo   before optimization: two independent sines traced in the other order, so
                        names swap (sin.2 <-> sin.3) and the instructions are reordered
  fusion.{a,b}.hlo      after optimization: the same program with XLA's fusion pass on and off
                        (XLA_FLAGS=--xla_disable_hlo_passes=fusion for B): a real fusion change
  constant.{a,b}.hlo    after optimization: `sin(x) * 2` vs `sin(x) * 3`
  added_op.{a,b}.hlo    before optimization: B adds `+ 1` to the second result
  opcode.{a,b}.hlo      before optimization: `sin(x) * 2` vs `sin(x) + 2` (an opcode change)
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

OUT = Path(__file__).resolve().parents[1] / "tests" / "data" / "diff"

PROGRAMS = r'''
import jax, jax.numpy as jnp

def f(x, y):
    a = jnp.sin(x) * 2.0
    b = jnp.exp(y) + a
    return jnp.sum(b * x, axis=0), jnp.tanh(b)

def f3(x, y):
    a = jnp.sin(x) * 3.0
    b = jnp.exp(y) + a
    return jnp.sum(b * x, axis=0), jnp.tanh(b)

def f_plus(x, y):
    a = jnp.sin(x) * 2.0
    b = jnp.exp(y) + a
    return jnp.sum(b * x, axis=0), jnp.tanh(b) + 1.0

def nested(x, y):
    return jax.jit(f)(x, y)

def h1(x, y):
    a = jnp.sin(x)
    b = jnp.sin(y)
    return a * 3.0 + b, jnp.cos(b) - a

def h2(x, y):
    b = jnp.sin(y)
    a = jnp.sin(x)
    return a * 3.0 + b, jnp.cos(b) - a

x = jnp.ones((8, 128), jnp.float32)
y = jnp.ones((8, 128), jnp.float32)

def before(fn):
    return jax.jit(fn).lower(x, y).as_text(dialect="hlo")

def after(fn):
    return jax.jit(fn).lower(x, y).compile().as_text()
'''


# Defined after PROGRAMS only where used, so that the other pairs' source lines (in their metadata)
# stay as they were.
F_ADD = r'''
def f_add(x, y):
    a = jnp.sin(x) + 2.0
    b = jnp.exp(y) + a
    return jnp.sum(b * x, axis=0), jnp.tanh(b)
'''


def _run(expr: str, env_extra: dict | None = None, extra: str = "") -> str:
    env = dict(os.environ, JAX_PLATFORMS="cpu")
    env.pop("XLA_FLAGS", None)
    env.update(env_extra or {})
    code = PROGRAMS + extra + f"\nimport sys\nsys.stdout.write({expr})\n"
    return subprocess.run([sys.executable, "-c", code], env=env, check=True, capture_output=True,
                          text=True).stdout


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    nofusion = {"XLA_FLAGS": "--xla_disable_hlo_passes=fusion"}
    pairs = {
        "renamed": (_run("after(f)"), _run("after(nested)")),
        "reordered": (_run("before(h1)"), _run("before(h2)")),
        "fusion": (_run("after(f)"), _run("after(f)", nofusion)),
        "constant": (_run("after(f)"), _run("after(f3)")),
        "added_op": (_run("before(f)"), _run("before(f_plus)")),
        "opcode": (_run("before(f)"), _run("before(f_add)", extra=F_ADD)),
    }
    for name, (a, b) in pairs.items():
        (OUT / f"{name}.a.hlo").write_text(a)
        (OUT / f"{name}.b.hlo").write_text(b)
        print(f"{name}: {len(a)} + {len(b)} bytes")


if __name__ == "__main__":
    main()
