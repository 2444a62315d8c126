"""Small real JAX models (dev-only: needs JAX; never imported by hlo_interp or its tests).

Shared by tools/make_golden.py (the golden family `models`) and bench/run.py (the `cnn_train` and
`tf_train` programs), so that the benchmarked programs are the ones whose results are checked.

    CNN          conv NHWC + bias + relu, max pool (reduce_window), conv, batch norm in training mode,
                 relu, avg pool, dense head; softmax cross-entropy; one SGD step of jax.value_and_grad
    transformer  embedding gather + positions, pre-LN block: causal multi-head attention, GELU MLP,
                 residuals, final layer norm, head; cross-entropy on next tokens; one Adam step
                 (`bf16=True`: matmul operands in bf16, f32 accumulation)
    GRU          a GRU cell scanned over time (lax.scan)

Parameters are nested dicts of NumPy arrays; `flat_fn` turns a function of such a tree into a
function of its flattened leaves (HLO entry parameters are flat).
"""
from __future__ import annotations

import jax
import jax.numpy as jnp
import ml_dtypes
import numpy as np
from jax import lax

F32 = np.dtype(np.float32)
BF16 = np.dtype(ml_dtypes.bfloat16)


def flat_fn(f, tree):
    """(g, leaves): g(*leaves, *rest) = f(tree rebuilt from leaves, *rest)."""
    leaves, treedef = jax.tree_util.tree_flatten(tree)
    n = len(leaves)

    def g(*args):
        return f(jax.tree_util.tree_unflatten(treedef, list(args[:n])), *args[n:])
    return g, [np.asarray(a) for a in leaves]


# --------------------------------------------------------------------------------------------------
# CNN

def cnn_params(r, dt=F32, hw=8, c_in=3, c=8, classes=10):
    """Two 3x3 convolutions of c channels on hw x hw images; the dense head sees (hw/4)^2 * c features."""
    def w(*shape, scale):
        return (r.standard_normal(shape) * scale).astype(dt)
    return {"conv1": {"w": w(3, 3, c_in, c, scale=0.3), "b": w(c, scale=0.1)},
            "conv2": {"w": w(3, 3, c, c, scale=0.2), "b": w(c, scale=0.1)},
            "bn": {"gamma": (1 + w(c, scale=0.1)).astype(dt), "beta": w(c, scale=0.1)},
            "dense": {"w": w((hw // 4) ** 2 * c, classes, scale=0.3), "b": w(classes, scale=0.1)}}


def cnn_logits(p, x):
    dn = ("NHWC", "HWIO", "NHWC")
    h = lax.conv_general_dilated(x, p["conv1"]["w"], (1, 1), "SAME", dimension_numbers=dn) + p["conv1"]["b"]
    h = jax.nn.relu(h)
    h = lax.reduce_window(h, np.array(-np.inf, h.dtype), lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")
    h = lax.conv_general_dilated(h, p["conv2"]["w"], (1, 1), ((1, 1), (1, 1)), dimension_numbers=dn) \
        + p["conv2"]["b"]
    # batch norm, training mode: statistics of this batch over N, H, W
    mean = jnp.mean(h, axis=(0, 1, 2))
    var = jnp.mean(jnp.square(h - mean), axis=(0, 1, 2))
    h = (h - mean) * lax.rsqrt(var + np.array(1e-5, h.dtype)) * p["bn"]["gamma"] + p["bn"]["beta"]
    h = jax.nn.relu(h)
    h = lax.reduce_window(h, np.array(0, h.dtype), lax.add, (1, 2, 2, 1), (1, 2, 2, 1), "VALID") / \
        np.array(4, h.dtype)
    h = h.reshape(h.shape[0], -1)
    return h @ p["dense"]["w"] + p["dense"]["b"]


def xent(logits, labels):
    """Mean softmax cross-entropy (in f32) of integer labels."""
    logp = jax.nn.log_softmax(logits.astype(F32), axis=-1)
    return -jnp.mean(jnp.take_along_axis(logp, labels[:, None].astype(np.int32), axis=-1))


def cnn_loss(p, x, y):
    return xent(cnn_logits(p, x), y)


def cnn_train_step(p, x, y, lr=0.1):
    """(updated parameters, loss): one SGD step."""
    loss, g = jax.value_and_grad(cnn_loss)(p, x, y)
    return jax.tree_util.tree_map(lambda a, b: a - np.float32(lr) * b, p, g), loss


# --------------------------------------------------------------------------------------------------
# transformer

def tf_params(r, V=16, d=16, f=32, T=8):
    def w(*shape, scale=None):
        return (r.standard_normal(shape) * (scale if scale is not None else 1 / np.sqrt(shape[0]))).astype(F32)
    return {"emb": w(V, d, scale=0.5), "pos": w(T, d, scale=0.1),
            "ln1": {"g": np.ones(d, F32) + w(d, scale=0.05), "b": w(d, scale=0.05)},
            "wqkv": w(d, 3 * d), "bqkv": w(3 * d, scale=0.05), "wo": w(d, d), "bo": w(d, scale=0.05),
            "ln2": {"g": np.ones(d, F32) + w(d, scale=0.05), "b": w(d, scale=0.05)},
            "w1": w(d, f), "b1": w(f, scale=0.05), "w2": w(f, d), "b2": w(d, scale=0.05),
            "lnf": {"g": np.ones(d, F32), "b": np.zeros(d, F32)}, "head": w(d, V)}


def layer_norm(x, p):
    mean = jnp.mean(x, axis=-1, keepdims=True)
    var = jnp.mean(jnp.square(x - mean), axis=-1, keepdims=True)
    return (x - mean) * lax.rsqrt(var + 1e-5).astype(x.dtype) * p["g"] + p["b"]


def _mm(a, b, bf16):
    if not bf16:
        return a @ b
    # mixed precision: bf16 operands, f32 accumulation and result
    return lax.dot_general(a.astype(BF16), b.astype(BF16), (((a.ndim - 1,), (0,)), ((), ())),
                           preferred_element_type=F32)


def tf_logits(p, tokens, bf16=False, heads=2, approximate_gelu=False):
    B, T = tokens.shape
    x = p["emb"][tokens] + p["pos"][:T]
    d = x.shape[-1]
    hd = d // heads
    h = layer_norm(x, p["ln1"])
    qkv = _mm(h, p["wqkv"], bf16) + p["bqkv"]
    q, k, v = jnp.split(qkv, 3, axis=-1)
    q, k, v = (t.reshape(B, T, heads, hd) for t in (q, k, v))
    if bf16:
        s = jnp.einsum("bthd,bshd->bhts", q.astype(BF16), k.astype(BF16), preferred_element_type=F32)
    else:
        s = jnp.einsum("bthd,bshd->bhts", q, k)
    s = s / np.float32(np.sqrt(hd))
    mask = jnp.tril(jnp.ones((T, T), bool))
    s = jnp.where(mask, s, np.float32(-1e9))
    a = jax.nn.softmax(s, axis=-1)
    if bf16:
        o = jnp.einsum("bhts,bshd->bthd", a.astype(BF16), v.astype(BF16), preferred_element_type=F32)
    else:
        o = jnp.einsum("bhts,bshd->bthd", a, v)
    o = o.reshape(B, T, d)
    x = x + _mm(o, p["wo"], bf16) + p["bo"]
    h = layer_norm(x, p["ln2"])
    h = jax.nn.gelu(_mm(h, p["w1"], bf16) + p["b1"], approximate=approximate_gelu)
    x = x + _mm(h, p["w2"], bf16) + p["b2"]
    x = layer_norm(x, p["lnf"])
    return _mm(x, p["head"], bf16)


def tf_loss(p, tokens, targets, bf16=False, approximate_gelu=False):
    """(loss, logits)."""
    logits = tf_logits(p, tokens, bf16, approximate_gelu=approximate_gelu)
    return xent(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1)), logits


def adam_step(p, g, m, v, step, lr=1e-2, b1=0.9, b2=0.999, eps=1e-8):
    step = step + 1
    t = step.astype(F32)
    m = jax.tree_util.tree_map(lambda m_, g_: b1 * m_ + (1 - b1) * g_, m, g)
    v = jax.tree_util.tree_map(lambda v_, g_: b2 * v_ + (1 - b2) * g_ * g_, v, g)
    c1 = 1 - b1 ** t
    c2 = 1 - b2 ** t
    p = jax.tree_util.tree_map(lambda p_, m_, v_: p_ - lr * (m_ / c1) / (jnp.sqrt(v_ / c2) + eps), p, m, v)
    return p, m, v, step


def tf_train_step(state, tokens, targets):
    """state = {"p", "m", "v", "step"} -> (loss, p, m, v, step): value_and_grad + one Adam step."""
    (loss, _), g = jax.value_and_grad(tf_loss, has_aux=True)(state["p"], tokens, targets)
    p, m, v, step = adam_step(state["p"], g, state["m"], state["v"], state["step"])
    return loss, p, m, v, step


def tf_train_state(r, p):
    """Adam state for parameters p: small random first moments, small positive second moments, step 3."""
    m0 = jax.tree_util.tree_map(lambda a: (r.standard_normal(a.shape) * 0.01).astype(F32), p)
    v0 = jax.tree_util.tree_map(lambda a: (r.random(a.shape) * 1e-3).astype(F32), p)
    return {"p": p, "m": m0, "v": v0, "step": np.int32(3)}


# --------------------------------------------------------------------------------------------------
# GRU over time

def gru_params(r, n_in=3, n_h=4):
    def w(*shape):
        return (r.standard_normal(shape) / np.sqrt(shape[0])).astype(F32)
    return {"wz": w(n_in, n_h), "uz": w(n_h, n_h), "bz": w(n_h) * 0.1,
            "wr": w(n_in, n_h), "ur": w(n_h, n_h), "br": w(n_h) * 0.1,
            "wh": w(n_in, n_h), "uh": w(n_h, n_h), "bh": w(n_h) * 0.1,
            "out": w(n_h, 2)}


def gru_run(p, xs, h0):
    """(final state, outputs per step): lax.scan of a GRU cell over the leading (time) axis of xs."""
    def cell(h, x):
        z = jax.nn.sigmoid(x @ p["wz"] + h @ p["uz"] + p["bz"])
        r_ = jax.nn.sigmoid(x @ p["wr"] + h @ p["ur"] + p["br"])
        hh = jnp.tanh(x @ p["wh"] + (r_ * h) @ p["uh"] + p["bh"])
        h = (1 - z) * h + z * hh
        return h, h @ p["out"]
    return lax.scan(cell, h0, xs)
