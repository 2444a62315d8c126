"""Run speed: hlo_interp against hand-written NumPy and against XLA:CPU (through JAX, dev-only).

    python3 bench/run.py [--rounds 10] [--process-rounds 5] [--models mlp,transformer,train,loop]
                         [--after] [--out bench/out/run.json]
    python3 bench/run.py --after --models cnn_train,tf_train --out bench/out/run_models.json
    python3 bench/run.py --cache-gain bench/out/dump_10mb.hlo [--process-rounds 5]

Programs (written in JAX; their HLO text is what hlo_interp runs):
  mlp          3-layer MLP, batch 256, hidden 1024 (1024 -> 1024 -> 1024 -> 10), relu
  transformer  2 pre-LN transformer blocks, seq 128, d_model 256, 4 heads, MLP 1024, gelu(tanh)
  train        one SGD step of the MLP with softmax cross-entropy (forward + backward + update)
  loop         a 10,000-iteration fori_loop of small vector work (f32[16])
  sort_gather  argsort of f32[65536] keys, then gather of f32[65536,4] rows in that order
  bf16_matmul  bf16[512,512] x bf16[512,512] (ml_dtypes.bfloat16; f32 accumulation, bf16 result)
  cnn          CNN forward, batch 32, 32x32x3 images: 3x3 conv (16 ch, SAME) + relu, 2x2 average
               pool, dense to 10
  cnn_train    one SGD step of a CNN (tools/jax_models.py; the golden case models/cnn_train_step_f32
               at batch 32, 16x16x3 images, 16 channels): conv, max/avg pooling, batch norm, dense,
               softmax cross-entropy, value_and_grad
  tf_train     one Adam step of a transformer block (tools/jax_models.py; models/transformer_train_step_f32
               at batch 4, seq 32, d_model 64, 2 heads, MLP 256, vocab 64)
cnn_train and tf_train have no hand-written NumPy version (their backward passes would be a second
implementation to trust): their figures are against XLA only.

Each program also has a hand-written NumPy version (the same arithmetic, written as a NumPy user
would).  Two figures per system:
  engine     in-process time of one call (hlo_interp.run with plans cached / the NumPy function /
             the jitted JAX function with block_until_ready);
  process    the whole process with the same .npz input and output: `python -m hlo_interp.cli_run
             MODULE --inputs in.npz --output out.npz --print none` (= hlo-run), a NumPy script, and a
             JAX script (import + jit compile + run + save).
Rounds interleave the systems; figures are medians, ratios are medians of per-round (paired) ratios.
BLAS runs on one thread (set below before NumPy is imported): 2-thread BLAS is too noisy on shared
machines.  `--after` runs XLA's optimized HLO (fusions) instead of the pre-optimization HLO.

--cache-gain MODULE: the module cache (hlo_interp/cache.py) on one text, whole processes of
`hlo-run MODULE --random-inputs --print none`: the first run (which writes the entry), then rounds of
a cold run (--no-cache) and a warm one (--cache) interleaved; CPU time (user + system) and wall time,
medians, in a temporary cache folder.
"""
from __future__ import annotations

import os

for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "BLIS_NUM_THREADS"):
    os.environ[_v] = "1"
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ.setdefault("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false")

import argparse  # noqa: E402
import json  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tools"))

LOOP_ITERS = 10_000
DEFAULT_OUT = ROOT / "bench" / "out" / "run.json"

# --------------------------------------------------------------------------------------------------
# Inputs (shared by the three systems)


def make_inputs(model: str) -> list[np.ndarray]:
    rs = np.random.RandomState(0)

    def w(i, o):
        return (rs.randn(i, o) / np.sqrt(i)).astype(np.float32)

    def b(o):
        return (rs.randn(o) * 0.1).astype(np.float32)

    if model in ("mlp", "train"):
        x = rs.randn(256, 1024).astype(np.float32)
        params = [w(1024, 1024), b(1024), w(1024, 1024), b(1024), w(1024, 10), b(10)]
        if model == "mlp":
            return [x] + params
        y = np.eye(10, dtype=np.float32)[rs.randint(0, 10, 256)]
        return [x, y] + params
    if model == "transformer":
        d, f = 256, 1024
        out = [rs.randn(128, d).astype(np.float32)]
        for _ in range(2):
            out += [np.ones(d, np.float32), np.zeros(d, np.float32),  # ln1
                    w(d, 3 * d), b(3 * d), w(d, d), b(d),  # qkv, proj
                    np.ones(d, np.float32), np.zeros(d, np.float32),  # ln2
                    w(d, f), b(f), w(f, d), b(d)]  # mlp
        return out
    if model == "loop":
        return [rs.randn(16).astype(np.float32), rs.randn(16).astype(np.float32)]
    if model == "sort_gather":
        return [rs.randn(65536).astype(np.float32), rs.randn(65536, 4).astype(np.float32)]
    if model == "bf16_matmul":
        import ml_dtypes
        return [rs.randn(512, 512).astype(ml_dtypes.bfloat16), rs.randn(512, 512).astype(ml_dtypes.bfloat16)]
    if model == "cnn":
        return [rs.randn(32, 32, 32, 3).astype(np.float32), (rs.randn(3, 3, 3, 16) / 5).astype(np.float32),
                b(16), w(16 * 16 * 16, 10), b(10)]
    if model in JAX_MODELS:
        return JAX_MODELS[model]()[1]
    raise ValueError(model)


def _jax_models():
    """name -> builder of (flat JAX function, flat inputs) for the models of tools/jax_models.py."""
    def cnn_train():
        import jax_models as jm
        r = np.random.default_rng(0)
        p = jm.cnn_params(r, hw=16, c=16)
        x = r.standard_normal((32, 16, 16, 3)).astype(np.float32)
        y = r.integers(0, 10, 32).astype(np.int32)
        fn, leaves = jm.flat_fn(jm.cnn_train_step, p)
        return fn, leaves + [x, y]

    def tf_train():
        import jax_models as jm
        r = np.random.default_rng(0)
        p = jm.tf_params(r, V=64, d=64, f=256, T=32)
        tokens = r.integers(0, 64, (4, 32)).astype(np.int32)
        targets = r.integers(0, 64, (4, 32)).astype(np.int32)
        fn, leaves = jm.flat_fn(jm.tf_train_step, jm.tf_train_state(r, p))
        return fn, leaves + [tokens, targets]
    return {"cnn_train": cnn_train, "tf_train": tf_train}


JAX_MODELS = _jax_models()


# --------------------------------------------------------------------------------------------------
# Hand-written NumPy


def np_mlp(x, w1, b1, w2, b2, w3, b3):
    h = np.maximum(x @ w1 + b1, 0)
    h = np.maximum(h @ w2 + b2, 0)
    return h @ w3 + b3


def np_train(x, y, w1, b1, w2, b2, w3, b3, lr=np.float32(0.01)):
    z1 = x @ w1 + b1
    h1 = np.maximum(z1, 0)
    z2 = h1 @ w2 + b2
    h2 = np.maximum(z2, 0)
    logits = h2 @ w3 + b3
    m = logits.max(axis=1, keepdims=True)
    e = np.exp(logits - m)
    s = e.sum(axis=1, keepdims=True)
    logp = logits - m - np.log(s)
    n = np.float32(x.shape[0])
    loss = -(y * logp).sum() / n
    g = (e / s - y) / n
    gw3, gb3 = h2.T @ g, g.sum(0)
    g = (g @ w3.T) * (z2 > 0)
    gw2, gb2 = h1.T @ g, g.sum(0)
    g = (g @ w2.T) * (z1 > 0)
    gw1, gb1 = x.T @ g, g.sum(0)
    return (np.float32(loss), w1 - lr * gw1, b1 - lr * gb1, w2 - lr * gw2, b2 - lr * gb2,
            w3 - lr * gw3, b3 - lr * gb3)


def _np_ln(x, g, b):
    m = x.mean(-1, keepdims=True)
    v = ((x - m) ** 2).mean(-1, keepdims=True)
    return (x - m) / np.sqrt(v + np.float32(1e-5)) * g + b


def _np_gelu(x):
    return np.float32(0.5) * x * (1 + np.tanh(np.float32(0.7978845608) * (x + np.float32(0.044715) * (x * x * x))))


def np_transformer(x, *p):
    s, d, h = 128, 256, 4
    for layer in range(2):
        g1, be1, wqkv, bqkv, wo, bo, g2, be2, w1, b1, w2, b2 = p[12 * layer:12 * layer + 12]
        y = _np_ln(x, g1, be1)
        qkv = (y @ wqkv + bqkv).reshape(s, 3, h, d // h).transpose(1, 2, 0, 3)
        q, k, v = qkv[0], qkv[1], qkv[2]
        a = q @ k.transpose(0, 2, 1) / np.float32(np.sqrt(d // h))
        a = np.exp(a - a.max(-1, keepdims=True))
        a = a / a.sum(-1, keepdims=True)
        o = (a @ v).transpose(1, 0, 2).reshape(s, d)
        x = x + o @ wo + bo
        y = _np_ln(x, g2, be2)
        x = x + _np_gelu(y @ w1 + b1) @ w2 + b2
    return x


def np_loop(x, c):
    for _ in range(LOOP_ITERS):
        x = np.sin(x) * np.float32(0.5) + x * np.float32(0.9) + c * np.float32(0.01)
    return x


def np_sort_gather(x, y):
    return y[np.argsort(x, kind="stable")]


def np_bf16_matmul(a, b):
    return (a.astype(np.float32) @ b.astype(np.float32)).astype(a.dtype)


def np_cnn(x, k, bk, w, bw):
    n, h, wd, c = x.shape
    xp = np.pad(x, ((0, 0), (1, 1), (1, 1), (0, 0)))
    win = np.lib.stride_tricks.sliding_window_view(xp, (3, 3), axis=(1, 2))  # n,h,w,c,3,3
    y = np.einsum("nhwcij,ijco->nhwo", win, k, optimize=True) + bk
    y = np.maximum(y, 0)
    y = y.reshape(n, h // 2, 2, wd // 2, 2, -1).mean(axis=(2, 4), dtype=np.float32)
    return y.reshape(n, -1) @ w + bw


NUMPY = {"mlp": np_mlp, "train": np_train, "transformer": np_transformer, "loop": np_loop,
         "sort_gather": np_sort_gather, "bf16_matmul": np_bf16_matmul, "cnn": np_cnn}

# --------------------------------------------------------------------------------------------------
# JAX versions (dev-only)


def jax_fn(model: str):
    if model in JAX_MODELS:
        return JAX_MODELS[model]()[0]
    import jax
    import jax.numpy as jnp

    def mlp(x, w1, b1, w2, b2, w3, b3):
        h = jax.nn.relu(x @ w1 + b1)
        h = jax.nn.relu(h @ w2 + b2)
        return h @ w3 + b3

    def train(x, y, w1, b1, w2, b2, w3, b3):
        def loss(params):
            logits = mlp(x, *params)
            return -jnp.mean(jnp.sum(y * jax.nn.log_softmax(logits), axis=1))
        params = (w1, b1, w2, b2, w3, b3)
        val, grads = jax.value_and_grad(loss)(params)
        return (val,) + tuple(p - 0.01 * g for p, g in zip(params, grads))

    def ln(x, g, b):
        m = x.mean(-1, keepdims=True)
        v = ((x - m) ** 2).mean(-1, keepdims=True)
        return (x - m) / jnp.sqrt(v + 1e-5) * g + b

    def transformer(x, *p):
        s, d, h = 128, 256, 4
        for layer in range(2):
            g1, be1, wqkv, bqkv, wo, bo, g2, be2, w1, b1, w2, b2 = p[12 * layer:12 * layer + 12]
            y = ln(x, g1, be1)
            qkv = (y @ wqkv + bqkv).reshape(s, 3, h, d // h).transpose(1, 2, 0, 3)
            q, k, v = qkv[0], qkv[1], qkv[2]
            a = jax.nn.softmax(q @ k.transpose(0, 2, 1) / jnp.sqrt(d // h).astype(jnp.float32), axis=-1)
            o = (a @ v).transpose(1, 0, 2).reshape(s, d)
            x = x + o @ wo + bo
            y = ln(x, g2, be2)
            x = x + jax.nn.gelu(y @ w1 + b1, approximate=True) @ w2 + b2
        return x

    def loop(x, c):
        return jax.lax.fori_loop(0, LOOP_ITERS, lambda i, x: jnp.sin(x) * 0.5 + x * 0.9 + c * 0.01, x)

    def sort_gather(x, y):
        return jnp.take(y, jnp.argsort(x, stable=True), axis=0)

    def bf16_matmul(a, b):
        return jnp.dot(a, b, preferred_element_type=jnp.float32).astype(jnp.bfloat16)

    def cnn(x, k, bk, w, bw):
        y = jax.lax.conv_general_dilated(x, k, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC")) + bk
        y = jax.nn.relu(y)
        n, h, wd, c = y.shape
        y = y.reshape(n, h // 2, 2, wd // 2, 2, c).mean(axis=(2, 4))
        return y.reshape(n, -1) @ w + bw

    return {"mlp": mlp, "train": train, "transformer": transformer, "loop": loop, "sort_gather": sort_gather,
            "bf16_matmul": bf16_matmul, "cnn": cnn}[model]


def hlo_text(model: str, inputs, after: bool) -> str:
    import jax
    lowered = jax.jit(jax_fn(model)).lower(*inputs)
    return lowered.compile().as_text() if after else lowered.as_text(dialect="hlo")


# --------------------------------------------------------------------------------------------------
# Workers for whole-process timing:  run.py --worker numpy|xla --model M --inputs in.npz --output out.npz


def _load_npz(path):
    z = np.load(path)
    out = [z[f"arg{i}"] for i in range(len(z.files))]
    if any(a.dtype.kind == "V" and a.dtype.itemsize == 2 for a in out):  # np.savez writes bf16 as V2
        import ml_dtypes
        out = [a.view(ml_dtypes.bfloat16) if a.dtype.kind == "V" and a.dtype.itemsize == 2 else a for a in out]
    return out


def _save_npz(path, outs):
    outs = outs if isinstance(outs, (tuple, list)) else [outs]
    np.savez(path, **{f"out{i}": np.asarray(o) for i, o in enumerate(outs)})


def worker(kind: str, model: str, inp: str, out: str) -> None:
    args = _load_npz(inp)
    if kind == "numpy":
        res = NUMPY[model](*args)
    else:
        import jax
        res = jax.jit(jax_fn(model))(*args)
        res = [np.asarray(r) for r in jax.tree_util.tree_leaves(jax.block_until_ready(res))]
    _save_npz(out, res)


# --------------------------------------------------------------------------------------------------
# Measurement


def _leaves(v):
    if isinstance(v, (tuple, list)):
        return [x for e in v for x in _leaves(e)]
    return [np.asarray(v)]


def max_rel_err(a, b) -> float:
    la, lb = _leaves(a), _leaves(b)
    if len(la) != len(lb):
        return float("inf")
    err = 0.0
    for x, y in zip(la, lb):
        x, y = np.asarray(x, np.float64), np.asarray(y, np.float64)
        if x.shape != y.shape:
            return float("inf")
        scale = max(float(np.max(np.abs(y))) if y.size else 0.0, 1e-30)
        err = max(err, float(np.max(np.abs(x - y))) / scale if y.size else 0.0)
    return err


def executed_per_iteration(module) -> int:
    """Instructions executed per iteration of the (first) while loop: its condition and body, counting
    the instructions of called computations (call/fusion) where they are called; parameters excluded."""
    def count(name, seen=()):
        comp = module.computation(name)
        n = 0
        for ins in comp.instructions:
            if ins.opcode == "parameter":
                continue
            n += 1
            for key in ("to_apply", "calls"):
                callee = ins.attrs.get(key)
                if ins.opcode in ("call", "fusion") and isinstance(callee, str) and callee not in seen:
                    n += count(callee, seen + (callee,))
        return n
    for comp in module.computations:
        for ins in comp.instructions:
            if ins.opcode == "while":
                return count(ins.attrs["condition"]) + count(ins.attrs["body"])
    return 0


def _timed(fn):
    t0 = time.perf_counter()
    r = fn()
    return time.perf_counter() - t0, r


def _median(xs):
    return statistics.median(xs) if xs else float("nan")


def bench_model(model: str, rounds: int, process_rounds: int, after: bool, have_jax: bool, tmp: Path) -> dict:
    import hlo_interp
    row: dict = {"model": model}
    if model in JAX_MODELS and not have_jax:
        row["error"] = "needs jax (the model and its inputs are built by tools/jax_models.py)"
        return row
    inputs = make_inputs(model)
    text_path = tmp / f"{model}.hlo"
    if have_jax:
        text = hlo_text(model, inputs, after)
        text_path.write_text(text)
    else:
        cached = ROOT / "bench" / "out" / f"{model}{'.after' if after else ''}.hlo"
        if not cached.exists():
            row["error"] = "needs jax once to produce the HLO text (or bench/out/<model>.hlo)"
            return row
        text = cached.read_text()
        text_path.write_text(text)
    try:
        (ROOT / "bench" / "out").mkdir(parents=True, exist_ok=True)
        (ROOT / "bench" / "out" / f"{model}{'.after' if after else ''}.hlo").write_text(text)
    except OSError:
        pass
    module = hlo_interp.parse(text)
    row["instructions"] = sum(len(c.instructions) for c in module.computations)

    npfn = NUMPY.get(model)
    xfn = None
    if have_jax:
        import jax
        jf = jax.jit(jax_fn(model))
        dev_inputs = [jax.device_put(a) for a in inputs]
        jax.block_until_ready(jf(*dev_inputs))

        def xfn():
            return jax.block_until_ready(jf(*dev_inputs))

    # first call (plan building) and correctness
    try:
        t_first, got = _timed(lambda: hlo_interp.run(module, *inputs))
    except hlo_interp.HloError as e:
        row["error"] = e.render().splitlines()[0] if hasattr(e, "render") else str(e)
        return row
    row["engine_first_call_s"] = t_first
    if npfn is not None:
        row["max_rel_err_vs_numpy"] = max_rel_err(got, npfn(*inputs))
    if xfn is not None:
        import jax
        row["max_rel_err_vs_xla"] = max_rel_err(got, [np.asarray(v) for v in jax.tree_util.tree_leaves(xfn())])

    eng, nump, xla = [], [], []
    for r in range(rounds):
        order = [0, 1, 2][r % 3:] + [0, 1, 2][:r % 3]  # rotate who goes first
        for k in order:
            if k == 0:
                eng.append(_timed(lambda: hlo_interp.run(module, *inputs))[0])
            elif k == 1:
                if npfn is not None:
                    nump.append(_timed(lambda: npfn(*inputs))[0])
            elif xfn is not None:
                xla.append(_timed(xfn)[0])
    row["engine_s"] = _median(eng)
    row["numpy_s"] = _median(nump) if nump else None
    row["xla_s"] = _median(xla) if xla else None
    if nump:
        row["engine_over_numpy"] = _median([a / b for a, b in zip(eng, nump)])
    if xla:
        row["engine_over_xla"] = _median([a / b for a, b in zip(eng, xla)])
        if nump:
            row["numpy_over_xla"] = _median([a / b for a, b in zip(nump, xla)])
    if model == "loop":
        per_iter = executed_per_iteration(module)
        row["instructions_per_iteration"] = per_iter
        if per_iter:
            row["engine_us_per_executed_instruction"] = row["engine_s"] / (LOOP_ITERS * per_iter) * 1e6

    # whole process
    if process_rounds > 0:
        # As a pip-installed package is (pip writes .pyc files at install), even where
        # PYTHONDONTWRITEBYTECODE is set: otherwise every process compiles our sources again.
        subprocess.run([sys.executable, "-m", "compileall", "-q", str(ROOT / "hlo_interp")],
                       capture_output=True)
        inp = tmp / f"{model}.in.npz"
        np.savez(inp, **{f"arg{i}": a for i, a in enumerate(inputs)})
        env = dict(os.environ)
        env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
        cmds = {
            "engine": [sys.executable, "-m", "hlo_interp.cli_run", str(text_path), "--inputs", str(inp),
                       "--output", str(tmp / f"{model}.eng.npz"), "--print", "none"],
        }
        if npfn is not None:
            cmds["numpy"] = [sys.executable, str(Path(__file__).resolve()), "--worker", "numpy", "--model", model,
                             "--inputs", str(inp), "--output", str(tmp / f"{model}.np.npz")]
        if have_jax:
            cmds["xla"] = [sys.executable, str(Path(__file__).resolve()), "--worker", "xla", "--model", model,
                           "--inputs", str(inp), "--output", str(tmp / f"{model}.xla.npz")]
        times: dict[str, list] = {k: [] for k in cmds}
        for r in range(process_rounds):
            for k, cmd in cmds.items():
                t, p = _timed(lambda: subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True))
                if p.returncode != 0:
                    row[f"process_{k}_error"] = (p.stderr or p.stdout).strip().splitlines()[-1:]
                    times[k] = []
                    break
                times[k].append(t)
        for k, ts in times.items():
            row[f"process_{k}_s"] = _median(ts) if ts else None
        if times["engine"] and times.get("numpy"):
            row["process_engine_over_numpy"] = _median([a / b for a, b in zip(times["engine"], times["numpy"])])
        if times.get("xla") and times["engine"]:
            row["process_engine_over_xla"] = _median([a / b for a, b in zip(times["engine"], times["xla"])])
    return row


def cache_gain(path: Path, rounds: int) -> dict:
    """Whole-process hlo-run of `path`, cold (--no-cache) against warm (--cache), interleaved."""
    import resource
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(ROOT / "hlo_interp")], capture_output=True)
    with tempfile.TemporaryDirectory() as d:
        env = dict(os.environ)
        env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
        env["XDG_CACHE_HOME"] = d
        env.pop("HLO_INTERP_CACHE", None)
        cmd = [sys.executable, "-m", "hlo_interp.cli_run", str(path), "--random-inputs", "--print", "none"]

        def one(flag):
            r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
            t0 = time.perf_counter()
            p = subprocess.run(cmd + [flag], env=env, cwd=ROOT, capture_output=True, text=True)
            wall = time.perf_counter() - t0
            r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
            if p.returncode != 0:
                raise SystemExit(f"hlo-run {path} failed: {p.stderr.strip()[-500:]}")
            return (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime), wall
        first = one("--cache")
        cold, warm = [], []
        for _ in range(rounds):
            cold.append(one("--no-cache"))
            warm.append(one("--cache"))
    row = {"module": str(path), "mb": round(path.stat().st_size / 1e6, 2), "rounds": rounds,
           "first_cpu_s": first[0], "first_wall_s": first[1],
           "cold_cpu_s": _median([c for c, _ in cold]), "cold_wall_s": _median([w for _, w in cold]),
           "warm_cpu_s": _median([c for c, _ in warm]), "warm_wall_s": _median([w for _, w in warm]),
           "warm_over_cold_cpu": _median([a[0] / b[0] for a, b in zip(warm, cold)])}
    print(f"{path.name} ({row['mb']} MB), medians of {rounds}: cold {row['cold_cpu_s']:.3f} s CPU "
          f"({row['cold_wall_s']:.3f} s wall), warm {row['warm_cpu_s']:.3f} s CPU ({row['warm_wall_s']:.3f} s wall), "
          f"warm/cold {row['warm_over_cold_cpu']:.2f}; the first run, writing the entry: {first[0]:.3f} s CPU")
    return row


def _fmt(v, unit=""):
    if v is None:
        return "-"
    if isinstance(v, float):
        if unit == "ms":
            return f"{v * 1e3:8.2f}"
        return f"{v:6.2f}"
    return str(v)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=10)
    ap.add_argument("--process-rounds", type=int, default=5)
    ap.add_argument("--models", default="mlp,transformer,train,loop")
    ap.add_argument("--after", action="store_true", help="run XLA's optimized HLO instead of the pre-optimization HLO")
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT)
    ap.add_argument("--cache-gain", type=Path, metavar="MODULE",
                    help="measure the module cache on MODULE instead (cold against warm hlo-run)")
    ap.add_argument("--worker", choices=["numpy", "xla"], help=argparse.SUPPRESS)
    ap.add_argument("--model", help=argparse.SUPPRESS)
    ap.add_argument("--inputs", help=argparse.SUPPRESS)
    ap.add_argument("--output", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        worker(args.worker, args.model, args.inputs, args.output)
        return 0
    if args.cache_gain is not None:
        row = cache_gain(args.cache_gain, args.process_rounds)
        out = args.out if args.out != DEFAULT_OUT else DEFAULT_OUT.with_name("cache_gain.json")
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps({"cache_gain": row}, indent=2))
        return 0
    try:
        import jax  # noqa: F401
        have_jax = True
    except ImportError:
        have_jax = False
        print("jax is not installed: XLA columns skipped (HLO texts read from bench/out/)", file=sys.stderr)
    rows = []
    with tempfile.TemporaryDirectory() as d:
        for model in args.models.split(","):
            row = bench_model(model.strip(), args.rounds, args.process_rounds, args.after, have_jax, Path(d))
            rows.append(row)
            print(json.dumps(row), file=sys.stderr)
    print(f"\nBLAS threads: 1   rounds: {args.rounds} in-process, {args.process_rounds} whole-process   "
          f"HLO: {'after' if args.after else 'before'} optimization")
    print(f"{'model':12} {'engine ms':>10} {'numpy ms':>10} {'xla ms':>10} {'eng/np':>7} {'eng/xla':>7} "
          f"{'np/xla':>7} | {'proc eng s':>10} {'proc np s':>10} {'proc xla s':>10} {'eng/np':>7} {'eng/xla':>7}")
    for r in rows:
        if "error" in r:
            print(f"{r['model']:12} error: {r['error']}")
            continue
        print(f"{r['model']:12} {_fmt(r.get('engine_s'), 'ms'):>10} {_fmt(r.get('numpy_s'), 'ms'):>10} "
              f"{_fmt(r.get('xla_s'), 'ms'):>10} {_fmt(r.get('engine_over_numpy')):>7} "
              f"{_fmt(r.get('engine_over_xla')):>7} {_fmt(r.get('numpy_over_xla')):>7} | "
              f"{_fmt(r.get('process_engine_s')):>10} {_fmt(r.get('process_numpy_s')):>10} "
              f"{_fmt(r.get('process_xla_s')):>10} {_fmt(r.get('process_engine_over_numpy')):>7} "
              f"{_fmt(r.get('process_engine_over_xla')):>7}")
        if "engine_us_per_executed_instruction" in r:
            print(f"{'':12} loop: {r['instructions_per_iteration']} instructions per iteration, "
                  f"{r['engine_us_per_executed_instruction']:.2f} us per executed instruction")
        print(f"{'':12} max relative error vs NumPy {r.get('max_rel_err_vs_numpy', float('nan')):.1e}, "
              f"vs XLA {r.get('max_rel_err_vs_xla', float('nan')):.1e}; first call "
              f"{r.get('engine_first_call_s', float('nan')) * 1e3:.1f} ms")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"rounds": args.rounds, "process_rounds": args.process_rounds,
                                    "after": args.after, "results": rows}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
