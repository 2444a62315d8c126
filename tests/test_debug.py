"""Debugging numbers (hlo_interp/debug.py, hlo-run --trace / --dump-intermediates / --profile / progress)
and the evaluator's observer hook they ride on.

The planted NaN: XLA:CPU's optimized HLO of a transformer block's gradient (tests/corpus/jax/
grad_transformer_block.after.hlo, 49 fusions) with the second layer norm's epsilon (constant.73, 1e-05)
replaced by -1e6, so that rsqrt(variance + eps) gets negative operands deep inside fused_computation.31.
Expected facts are read off the text (metadata stack frame 46 -> make_corpus.py:855 in _layernorm) or
computed independently with NumPy.
"""
from __future__ import annotations

import json
import math
import os
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

import hlo_interp
from hlo_interp import debug
from hlo_interp.cli_run import main
from hlo_interp.evaluator import Observer, compile as build

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "tests" / "corpus" / "jax"
SAMPLES = ROOT / "samples"


def _parse(text, name="m.hlo"):
    return hlo_interp.parse(text, name)


@pytest.fixture(scope="module")
def transformer():
    text = (CORPUS / "grad_transformer_block.after.hlo").read_text()
    planted = text.replace("%constant.73 = f32[] constant(1e-05)", "%constant.73 = f32[] constant(-1e6)")
    assert planted != text
    clean = _parse(text, "grad_transformer_block.after.hlo")
    bad = _parse(planted, "planted.hlo")
    rng = np.random.default_rng(0)
    args = [rng.standard_normal(p.shape.dims).astype(np.float32) * 0.5
            for p in sorted((i for i in clean.entry.instructions if i.opcode == "parameter"),
                            key=lambda i: i.parameter_number)]
    return clean, bad, args, planted


# --------------------------------------------------------------------------------------------------
# --trace

def test_trace_finds_planted_nan_deep_in_a_transformer(transformer):
    clean, bad, args, _ = transformer
    rep = debug.trace(bad, *args)
    assert rep.found
    f = rep.finding
    assert (f.kind, f.instruction, f.opcode, f.computation) == ("nan", "rsqrt.1", "rsqrt", "fused_computation.31")
    # 2x8 rows, every variance - 1e6 < 0: 16 NaN from an operand with none
    assert "16 NaN" in f.message
    assert f.operands[0]["name"] == "copy.21" and f.operands[0]["nan"] == 0 and f.operands[0]["inf"] == 0
    assert "max -9" in f.operands[0]["summary"]  # every operand value is about -1e6
    assert f.source["source_file"] == "make_corpus.py" and f.source["source_line"] == 855
    assert f.source["function"] == "_layernorm"
    assert f.source["op_name"] == "jit(grad_transformer_block)/jvp()/rsqrt"
    assert f.hlo_location == "planted.hlo:650:8"
    assert [(c["computation"], c["called_by"]) for c in f.context] == [
        ("main.25", None), ("fused_computation.31", "copy_rsqrt_fusion")]
    assert [p["name"] for p in f.path] == ["x.1", "multiply_reduce_fusion.6", "param_0.83", "multiply.37",
                                          "add.28", "bitcast.84", "copy.21", "rsqrt.1"]
    assert [p["computation"] for p in f.path][:2] == ["main.25", "main.25"]
    assert rep.checked > 100  # deep: many clean results before it
    text = rep.render()
    assert "make_corpus.py:855 (_layernorm)" in text and "<- %copy_rsqrt_fusion (fusion) in main.25" in text
    # the unplanted module is clean and gives the plain run's results
    ok = debug.trace(clean, *args)
    assert not ok.found and ok.checked > rep.checked
    plain = hlo_interp.run(clean, *args)
    assert len(plain) == len(ok.results) == 8  # the gradients of the 8 weights
    for a, b in zip(ok.results, plain):
        np.testing.assert_array_equal(a, b)


FORI = (CORPUS / "fori_loop_static.after.hlo")


def test_trace_nan_inside_a_while_body_names_the_iteration():
    m = _parse(FORI.read_text(), "fori.hlo")
    x = np.array([1e37, 1, 2, 3], np.float32)
    # independently: x <- x + i*x for i in 0..4, in float32; the first i where i*x overflows
    y, first = x.copy(), None
    with np.errstate(over="ignore"):
        for i in range(5):
            prod = np.float32(i) * y
            if first is None and not np.isfinite(prod).all():
                first = i
            y = y + prod
    assert first == 4
    rep = debug.trace(m, x)
    f = rep.finding
    assert (f.kind, f.instruction, f.computation) == ("inf", "mul.10", "fused_computation")
    assert f.iterations == [first]
    assert f"iteration {first} of %while.2" in f.message
    assert [c["called_by"] for c in f.context] == [None, "call", "while.2", "multiply_add_fusion"]
    assert [p["name"] for p in f.path] == ["x.1", "copy.6", "tuple.12", "tuple.15", "arg_tuple.6",
                                          "get-tuple-element.42", "param_0", "mul.10"]
    assert f.source["source_line"] == 785
    assert not debug.trace(m, np.ones(4, np.float32)).found


MASKED = """HloModule masked

ENTRY e {
  x = f32[4] parameter(0)
  mask = pred[4] parameter(1)
  ninf = f32[] constant(-inf)
  b = f32[4] broadcast(ninf), dimensions={}
  s = f32[4] select(mask, x, b)
  e = f32[4] exponential(s)
  d = f32[4] subtract(s, s)
  ROOT t = (f32[4], f32[4]) tuple(e, d)
}
"""


def test_trace_infinities_from_constants_are_not_origins_but_nan_from_them_is():
    m = _parse(MASKED)
    x = np.array([0.5, 1, 2, 3], np.float32)
    mask = np.array([True, False, True, True])
    f = debug.trace(m, x, mask).finding
    # b and s hold -inf (from the constant): not origins; -inf - -inf = NaN in d is
    assert (f.instruction, f.kind) == ("d", "nan")
    assert f.operands[0]["inf"] == 1 and "no NaN (2 Inf)" in f.message  # s, twice
    assert [p["name"] for p in f.path] == ["x", "s", "d"]
    assert not debug.trace(m, x, np.ones(4, bool)).found


def test_trace_input_holding_nan_complex_and_tuples():
    m = _parse(MASKED)
    f = debug.trace(m, np.array([np.nan, 1, 2, 3], np.float32), np.ones(4, bool)).finding
    assert (f.kind, f.instruction) == ("input", "x") and f.path == [
        {"computation": "e", "name": "x", "opcode": "parameter"}]
    c = _parse("""HloModule c
ENTRY e {
  z = c64[2] parameter(0)
  m = c64[2] multiply(z, z)
  ROOT t = (c64[2], c64[2]) tuple(z, m)
}
""")
    f = debug.trace(c, np.array([1 + 1j, 3e30 + 0j], np.complex64)).finding
    assert (f.instruction, f.kind) == ("m", "inf")
    assert not debug.trace(c, np.array([1 + 1j, 3 + 0j], np.complex64)).found


CONVERTS = """HloModule conv

ENTRY e {
  x = f32[3] parameter(0)
  h = f16[3] convert(x)
  b = bf16[3] convert(x)
  ROOT t = (f16[3], bf16[3]) tuple(h, b)
}
"""


def test_trace_range_saturation_and_overflow_of_converts():
    m = _parse(CONVERTS)
    sat = np.array([1, 65504, -2], np.float32)  # f16's largest finite magnitude, exactly
    assert not debug.trace(m, sat).found
    f = debug.trace(m, sat, trace_range=True).finding
    assert (f.kind, f.instruction) == ("saturated", "h") and "1 of 3 values at f16's largest finite magnitude 65504" \
        in f.message
    over = np.array([1, 70000, -2], np.float32)  # f16 overflows to inf; bf16 does not
    f = debug.trace(m, over, trace_range=True).finding
    assert (f.kind, f.instruction) == ("overflow", "h")
    assert debug.trace(m, over).finding.kind == "inf"
    assert not debug.trace(m, np.array([1, 2, 3], np.float32), trace_range=True).found
    # f8e4m3fn has no Inf: XLA:CPU converts 1000 to NaN and rounds 460 down to 448, its largest value
    f8 = _parse("HloModule f8\nENTRY e {\n  x = f32[3] parameter(0)\n  ROOT f = f8e4m3fn[3] convert(x)\n}\n")
    f = debug.trace(f8, np.array([1, 460, 2], np.float32), trace_range=True).finding
    assert f.kind == "saturated" and "1 of 3 values at f8e4m3fn's largest finite magnitude 448" in f.message
    f = debug.trace(f8, np.array([1, 460, 1000], np.float32), trace_range=True).finding
    assert (f.kind, f.message) == ("overflow", "%f (convert) overflowed: 1 NaN from finite values")


# --------------------------------------------------------------------------------------------------
# --dump-intermediates

def _mlp():
    m = hlo_interp.parse((SAMPLES / "mlp.after_optimizations.hlo").read_text())
    d = np.load(SAMPLES / "mlp.inputs.npz")
    return m, [d[f"arg{k}"] for k in range(5)]


def test_dump_values_and_index_match_independent_numpy(tmp_path):
    m, (x, w1, b1, w2, b2) = _mlp()
    out = tmp_path / "dump"
    res = debug.dump(m, x, w1, b1, w2, b2, directory=str(out), only="dot|broadcast_maximum_fusion|parameter")
    index = json.loads((out / "index.json").read_text())
    assert index["complete"] and index["entries"] == res.entries
    names = [(e["name"], e["opcode"], e["computation"]) for e in index["entries"]]
    # parameters of every computation run (fusion parameters too), the two dots, the relu fusion
    assert ("dot_general.1", "dot", "fused_computation.1") in names
    assert ("dot_general.0", "dot", "fused_computation") in names
    assert names.index(("dot_general.1", "dot", "fused_computation.1")) < names.index(
        ("broadcast_maximum_fusion", "fusion", "main.4")) < names.index(("dot_general.0", "dot", "fused_computation"))
    assert [e["order"] for e in index["entries"]] == list(range(len(names)))
    assert sorted(os.listdir(out)) == sorted([e["file"] for e in index["entries"]] + ["index.json"])
    by = {e["name"]: e for e in index["entries"]}
    h = x.astype(np.float64) @ w1
    np.testing.assert_allclose(np.load(out / by["dot_general.1"]["file"]), h, rtol=1e-5, atol=1e-6)
    relu = np.maximum(h + b1, 0)
    np.testing.assert_allclose(np.load(out / by["broadcast_maximum_fusion"]["file"]), relu, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(np.load(out / by["dot_general.0"]["file"]), relu @ w2, rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(np.load(out / by["x.1"]["file"]), x)
    assert by["dot_general.0"]["shape"] == "f32[8,10]" and by["dot_general.0"]["dtype"] == "float32"
    assert res.bytes == sum(np.load(out / e["file"]).nbytes for e in index["entries"])
    # no stray temporary files (atomic writes)
    assert not [f for f in os.listdir(out) if f.endswith(".tmp")]


def test_dump_in_a_loop_names_iterations_and_tuple_leaves(tmp_path):
    m = _parse(FORI.read_text())
    x = np.array([1, 2, 3, 4], np.float32)
    res = debug.dump(m, x, directory=str(tmp_path), only="add.17|tuple.14")
    adds = [e for e in res.entries if e["name"] == "add.17"]
    assert [e["iteration"] for e in adds] == [[0], [1], [2], [3], [4]]
    assert [e["file"] for e in adds][:2] == ["00000_add.17_it0.npy", "00003_add.17_it1.npy"]
    y = x.copy()
    for i, e in enumerate(adds):
        y = y + np.float32(i) * y
        np.testing.assert_array_equal(np.load(tmp_path / e["file"]), y)
    leaves = [e for e in res.entries if e["name"] == "tuple.14"]
    assert [(e["iteration"], e["leaf"], e["shape"]) for e in leaves[:2]] == [([0], "0", "s32[]"), ([0], "1", "f32[4]")]
    assert leaves[0]["file"] == "00001_tuple.14_it0_0.npy"
    assert [int(np.load(tmp_path / e["file"])) for e in leaves if e["leaf"] == "0"] == [1, 2, 3, 4, 5]


def test_dump_byte_guard_stops_and_keeps_the_index(tmp_path):
    m, args = _mlp()
    with pytest.raises(hlo_interp.HloError, match="limit of 2.0 KiB"):
        debug.dump(m, *args, directory=str(tmp_path), max_bytes_total=2048)
    index = json.loads((tmp_path / "index.json").read_text())
    assert index["complete"] is False and index["bytes"] <= 2048 and index["entries"]
    assert len(os.listdir(tmp_path)) == len(index["entries"]) + 1


# --------------------------------------------------------------------------------------------------
# --profile

def test_profile_counts_bytes_and_totals_add_up():
    m = _parse(FORI.read_text())
    p = debug.profile(m, np.ones(4, np.float32))
    rows = {(r["computation"], r["name"]): r for r in p.by_instruction()}
    mul = rows[("fused_computation", "mul.10")]
    assert (mul["opcode"], mul["count"], mul["bytes"]) == ("multiply", 5, 5 * 16)
    assert rows[("wrapped_compare_computation", "lt.3")]["count"] == 6  # the condition runs once more
    assert rows[("while.1_computation", "while.2")]["bytes"] == 0  # aliases, allocates nothing
    ops = {r["opcode"]: r for r in p.by_opcode()}
    assert ops["fusion"]["instructions"] == 3 and ops["fusion"]["count"] == 16
    assert math.isclose(sum(r["seconds"] for r in p.by_opcode()), p.total_time, rel_tol=1e-9)
    assert sum(r["count"] for r in p.by_opcode()) == p.executed == sum(r["count"] for r in p.by_instruction())
    assert sum(r["bytes"] for r in p.by_opcode()) == p.total_bytes == 5 * (4 + 16 + 16 + 16 + 4) + 6 * 1
    assert 0 < p.total_time <= p.wall
    assert all(r["seconds"] >= 0 for r in p.by_instruction())
    text = p.table()
    assert f"{p.executed} instructions executed" in text
    total_line = next(line for line in text.splitlines() if line.startswith("total"))
    assert total_line.split()[1:3] == [str(len(p.rows)), str(p.executed)]
    js = p.to_json()
    assert js["total_bytes"] == p.total_bytes and len(js["by_instruction"]) == len(p.rows)


# --------------------------------------------------------------------------------------------------
# The observer hook

class _Recorder(Observer):
    def __init__(self):
        self.events = []

    def enter(self, comp, args):
        self.events.append(("enter", comp.name))

    def after(self, ins, value, operands):
        self.events.append(("after", ins.name))


def test_observer_sees_every_step_folded_once_and_the_fast_path_is_untouched():
    m = _parse(FORI.read_text())
    plain = build(m)
    assert not any("_o." in src for src in plain.ctx.plan_sources.values())
    rec = _Recorder()
    exe = build(m, observer=rec)
    src = exe.ctx.plan_sources["region_0.2.clone.clone.clone"]
    assert "_o.after(" in src and "_o.enter(" in src and "_o.before" not in src and "try:" not in src
    out = exe(np.ones(4, np.float32))
    np.testing.assert_array_equal(out[0], plain(np.ones(4, np.float32))[0])
    names = [n for k, n in rec.events if k == "after"]
    assert names.count("mul.10") == 5 and names.count("lt.3") == 6
    assert names.count("constant.11") == 1  # a constant in the loop body: reported once
    assert [n for k, n in rec.events if k == "enter"].count("region_0.2.clone.clone.clone") == 5
    # hlo_interp.run with an observer builds afresh (never the cached plain plans)
    rec2 = _Recorder()
    hlo_interp.run(m, np.ones(4, np.float32))  # caches the plain executable on the module
    hlo_interp.run(m, np.ones(4, np.float32), observer=rec2)
    assert rec2.events == rec.events


def test_progress_observer_counts_instructions_and_iterations():
    m = _parse(FORI.read_text())
    obs = debug.ProgressObserver(m)
    build(m, observer=obs)(np.ones(4, np.float32))
    assert obs.loop_iterations == {"while.2": 5} and obs.current_loop == ("while.2", 4)
    rec = _Recorder()
    build(m, observer=rec)(np.ones(4, np.float32))
    # every instruction run but the parameters (constants once per run of their computation)
    ran = [n for k, n in rec.events if k == "after"]
    params = sum(1 for k, n in rec.events if k == "after" and n in {
        i.name for c in m.computations for i in c.instructions if i.opcode == "parameter"})
    # constant.11 (body, 5 runs) and constant.10 (condition, 6 runs) are reported once each
    assert obs.executed == len(ran) - params + 4 + 5 == 91
    text = str(debug._ProgressView(obs).__rich__())
    assert "91 instructions" in text and "while %while.2 iteration 4" in text
    with debug.live_progress(None):
        pass
    with debug.live_progress(obs, "never", delay=10):  # stopped before it shows: nothing printed
        pass


# --------------------------------------------------------------------------------------------------
# hlo-run

def _run(args, **kw):
    return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False, **kw)


def test_cli_trace_exit_codes_and_report(tmp_path, transformer):
    _, _, args, planted = transformer
    f = tmp_path / "planted.hlo"
    f.write_text(planted)
    np.savez(tmp_path / "args.npz", **{f"arg{k}": a for k, a in enumerate(args)})
    r = _run([f, "-i", tmp_path / "args.npz", "--trace", "--color", "never"])
    assert r.exit_code == 1, r.output
    assert "first NaN produced by %rsqrt.1 (rsqrt)" in r.output
    assert "make_corpus.py:855 (_layernorm)" in r.output
    assert "%x.1 (parameter) -> %multiply_reduce_fusion.6 (fusion) -> [fused_computation.31]" in r.output
    assert "out0" not in r.output  # stopped: no results
    r = _run([CORPUS / "grad_transformer_block.after.hlo", "-i", tmp_path / "args.npz", "--trace",
              "--print", "none"])
    assert r.exit_code == 0 and "trace: no NaN or Inf" in r.output


def test_cli_dump_profile_and_usage_errors(tmp_path):
    hlo = SAMPLES / "mlp.after_optimizations.hlo"
    inputs = SAMPLES / "mlp.inputs.npz"
    r = _run([hlo, "-i", inputs, "--dump-intermediates", tmp_path / "d", "--only", "dot", "--print", "none"])
    assert r.exit_code == 0
    index = json.loads((tmp_path / "d" / "index.json").read_text())
    assert [e["name"] for e in index["entries"]] == ["dot_general.1", "dot_general.0"]
    r = _run([hlo, "-i", inputs, "--dump-intermediates", tmp_path / "e", "--dump-max-bytes", "1K"])
    assert r.exit_code == 2 and "--dump-max-bytes" in r.output
    r = _run([hlo, "-i", inputs, "--only", "dot"])
    assert r.exit_code == 2 and "--dump-intermediates" in r.output
    r = _run([hlo, "-i", inputs, "--dump-intermediates", tmp_path / "f", "--only", "(["])
    assert r.exit_code == 2 and "regular expression" in r.output
    r = _run([hlo, "-i", inputs, "--profile", "--profile-json", tmp_path / "p.json", "--color", "never"])
    assert r.exit_code == 0
    lines = r.output.splitlines()
    assert lines[0].startswith("out0 f32[8,10]")  # results first, then the profile
    assert any(line.startswith("profile: 24 instructions executed") for line in lines)
    table = {line.split()[0]: line.split() for line in lines if line[:1].isalpha()}
    assert table["dot"][1:3] == ["2", "2"] and table["fusion"][1:3] == ["7", "7"]
    assert table["total"][1:3] == ["24", "24"]
    js = json.loads((tmp_path / "p.json").read_text())
    assert js["executed"] == 24 and {r["opcode"] for r in js["by_opcode"]} >= {"dot", "reduce", "exponential"}
    assert js["total_bytes"] == sum(r["bytes"] for r in js["by_opcode"])
    r = _run([hlo, "-i", inputs, "--trace", "--replicas", "2", "--same-inputs"])
    assert r.exit_code == 2 and "single-device" in r.output


def test_source_location_from_plain_metadata_and_value_summaries():
    m = _parse(MASKED.replace("d = f32[4] subtract(s, s)",
                              'd = f32[4] subtract(s, s), metadata={op_name="jit(f)/sub" source_file="model.py" '
                              'source_line=12}'))
    f = debug.trace(m, np.ones(4, np.float32), np.array([True, False, True, True])).finding
    assert f.source == {"op_name": "jit(f)/sub", "source_file": "model.py", "source_line": 12}
    assert '  source       model.py:12, op_name "jit(f)/sub"' in debug.render_finding(f).splitlines()
    import ml_dtypes
    assert debug.value_summary(np.array([-3, 2, 7], ml_dtypes.int4)) == "s4[3] min -3 max 7 mean 2"
    assert debug.value_summary(np.array([1, np.inf, np.nan], ml_dtypes.bfloat16)) == \
        "bf16[3] min 1 max 1 mean 1  NaN 1  Inf 1"
    assert debug.value_summary((np.array([True, False]), np.zeros((0,), np.float32))) == \
        "{0} pred[2] true 1 of 2; {1} f32[0] empty"


def test_real_process_reads_stdin_and_exits_1_without_traceback():
    import subprocess
    import sys
    p = subprocess.run([sys.executable, "-m", "hlo_interp.cli_run", "-", "--random-inputs", "--trace",
                        "--color", "never"], input=MASKED.replace("ROOT t", "ROOT t").encode(),
                       capture_output=True, cwd=ROOT, timeout=60,
                       env={**os.environ, "PYTHONPATH": str(ROOT)})
    out = p.stdout.decode() + p.stderr.decode()
    assert "Traceback" not in out
    # random pred mask and N(0,1) x: s holds -inf where the mask is false; d = s - s has NaN there
    assert p.returncode == 1 and "first NaN produced by %d (subtract)" in out and "<stdin>:" in out


def test_trace_inside_a_batch_norm_expansion_uses_the_callers_metadata():
    text = (ROOT / "tests" / "corpus" / "handwritten" / "batch_norm_ops.hlo").read_text()
    old = "infer = f32[2,2,2,2] batch-norm-inference(input, off, sc, mean, var), epsilon=1e-05, feature_index=0"
    assert old in text
    m = _parse(text.replace(old, old + ', metadata={op_name="bn" source_file="net.py" source_line=7}'))
    params = sorted((i for i in m.entry.instructions if i.opcode == "parameter"), key=lambda i: i.parameter_number)
    args = [np.ones(p.shape.dims, p.shape.element_type.dtype) for p in params]
    assert not debug.trace(m, *args).found
    args[7] = np.array([1.0, -2.0], np.float32)  # var: a negative variance, rsqrt(var + eps) -> NaN
    f = debug.trace(m, *args).finding
    assert (f.instruction, f.opcode, f.kind) == ("rs", "rsqrt", "nan") and "1 NaN" in f.message
    assert f.context[-1]["called_by"] == "infer" and f.hlo_location.startswith("<batch-norm expansion>:")
    assert f.source == {"op_name": "bn", "source_file": "net.py", "source_line": 7, "via": "infer"}
    assert [(p["computation"], p["name"]) for p in f.path][:2] == [("main", "var"), ("expansion", "var")]


# --------------------------------------------------------------------------------------------------
# Constants inside fusions: XLA:CPU's optimized causal transformer keeps the mask's
# constant(-inf) inside %broadcast_select_fusion

TF2 = ROOT / "tests" / "data" / "compare" / "tf2_causal"


def _tf2_args():
    with np.load(TF2 / "inputs.npz") as z:
        return [z[f"arg{k}"] for k in range(len(z.files))]


FUSED_MASK = """HloModule fused_mask

fused {
  p = f32[4] parameter(0)
  m = pred[4] parameter(1)
  c = f32[] constant(-inf)
  b = f32[4] broadcast(c), dimensions={}
  ROOT s = f32[4] select(m, p, b)
}

fused_div {
  q = f32[4] parameter(0)
  z = f32[] constant(0)
  bz = f32[4] broadcast(z), dimensions={}
  ROOT d = f32[4] divide(q, bz)
}

ENTRY main {
  x = f32[4] parameter(0)
  mask = pred[4] parameter(1)
  f = f32[4] fusion(x, mask), kind=kLoop, calls=fused
  e = f32[4] exponential(f)
  g = f32[4] fusion(e), kind=kLoop, calls=fused_div
  ROOT t = (f32[4], f32[4]) tuple(e, g)
}
"""


def test_trace_looks_inside_a_fusion_before_naming_it():
    m = _parse(FUSED_MASK)
    x = np.array([0.5, 1, 2, 3], np.float32)
    f = debug.trace(m, x, np.array([True, False, True, True])).finding
    # %f holds -inf from its constant: not an origin; the division by zero inside %g is, named there
    # (exp(-inf) / 0 = NaN beside three x / 0 = inf)
    assert (f.instruction, f.opcode, f.computation, f.kind) == ("d", "divide", "fused_div", "nan")
    assert f.message.startswith("first NaN produced by %d (divide): 1 NaN and 3 Inf")
    assert [c["called_by"] for c in f.context] == [None, "g"]
    # the real transformer: the mask's -inf inside %broadcast_select_fusion is no finding (was one)
    mod = hlo_interp.parse((TF2 / "after.hlo").read_text())
    rep = debug.trace(mod, *_tf2_args())
    assert not rep.found and rep.checked == 307
    # with the constant planted as +inf the row maxima are inf, exp gives 0 and a division by zero
    # inside %broadcast_divide_fusion.1 makes the first Inf
    bad = (TF2 / "after.hlo").read_text().replace("%constant.25 = f32[] constant(-inf)",
                                                  "%constant.25 = f32[] constant(inf)")
    f = debug.trace(hlo_interp.parse(bad), *_tf2_args()).finding
    assert (f.instruction, f.opcode, f.computation) == ("divide.3", "divide", "fused_computation.38")
    assert f.context[-1]["called_by"] == "broadcast_divide_fusion.1" and "256 Inf" in f.message


def test_cli_trace_with_compare_reports_both(tmp_path):
    bad = (TF2 / "after.hlo").read_text().replace("%constant.25 = f32[] constant(-inf)",
                                                  "%constant.25 = f32[] constant(inf)")
    (tmp_path / "bad.hlo").write_text(bad)
    r = _run([tmp_path / "bad.hlo", "-i", TF2 / "inputs.npz", "--trace", "--compare", TF2 / "expected.npz",
              "--print", "none", "--color", "never"])
    assert r.exit_code == 1, r.output
    assert "MISMATCH out0 f32[2,32,100]: 6400 of 6400 differ; 6400 NaN/Inf mismatch(es)" in r.output
    assert "trace: first Inf produced by %divide.3 (divide): 256 Inf" in r.output
    # the clean module: compare ok, trace finds nothing, exit 0
    r = _run([TF2 / "after.hlo", "-i", TF2 / "inputs.npz", "--trace", "--compare", TF2 / "expected.npz",
              "--print", "none", "--color", "never"])
    assert r.exit_code == 0 and "ok       out0" in r.output and "trace: no NaN or Inf" in r.output
    # a finding and a passing compare: exit 1, both printed
    np.save(tmp_path / "x.npy", np.array([0.5, 1, 2, 3], np.float32))
    (tmp_path / "m.hlo").write_text(FUSED_MASK)
    np.save(tmp_path / "mask.npy", np.array([True, False, True, True]))
    exp = debug.run(_parse(FUSED_MASK), np.array([0.5, 1, 2, 3], np.float32),
                    np.array([True, False, True, True])).results
    np.savez(tmp_path / "e.npz", out0=exp[0], out1=exp[1])
    r = _run([tmp_path / "m.hlo", "-i", tmp_path / "x.npy", tmp_path / "mask.npy", "--trace", "--compare",
              tmp_path / "e.npz", "--print", "none", "--color", "never"])
    assert r.exit_code == 1 and r.output.count("ok       out") == 2 and "first NaN produced by %d" in r.output


# --------------------------------------------------------------------------------------------------
# --profile --repeat N, --threads N

def test_profile_median_of_runs():
    a = debug.Profile(rows=[["c", "x", "dot", 1, 3.0, 8], ["c", "y", "add", 2, 1.0, 4]], wall=10.0,
                      blas=[("openblas", 2)])
    b = debug.Profile(rows=[["c", "y", "add", 2, 5.0, 4], ["c", "x", "dot", 1, 1.0, 8]], wall=30.0)
    c = debug.Profile(rows=[["c", "x", "dot", 1, 2.0, 8], ["c", "y", "add", 2, 2.0, 4]], wall=20.0)
    m = debug.Profile.median([a, b, c])
    assert m.rows == [["c", "x", "dot", 1, 2.0, 8], ["c", "y", "add", 2, 2.0, 4]]
    assert (m.wall, m.runs, m.blas) == (20.0, 3, [("openblas", 2)])
    assert m.headline.startswith("profile: 3 instructions executed, 4000.000 ms in instructions (wall 20000.000 ms, "
                                 "median of 3 runs), 12 B allocated; BLAS threads: 2 (openblas)")
    js = m.to_json()
    assert js["runs"] == 3 and js["blas_threads"] == [{"library": "openblas", "threads": 2}]
    # a real loop, three runs: the same instructions, counts and bytes as one run
    mod = _parse(FORI.read_text())
    one = debug.profile(mod, np.ones(4, np.float32))
    three = debug.profile(mod, np.ones(4, np.float32), repeat=3)
    assert three.runs == 3 and one.runs == 1
    assert [r[:4] + r[5:] for r in three.rows] == [r[:4] + r[5:] for r in one.rows]
    with pytest.raises(ValueError):
        debug.profile(mod, np.ones(4, np.float32), repeat=0)


def test_threads_limit_blas_and_the_profile_says_so():
    import scipy.linalg  # noqa: F401  (SciPy's BLAS loaded, as --threads does)
    import threadpoolctl
    before = debug.blas_threads()
    assert before and all(lib == "openblas" for lib, _ in before)  # NumPy's and SciPy's
    with debug.thread_limit(1):
        assert {n for _, n in debug.blas_threads()} == {1}
    assert debug.blas_threads() == before
    mod = _parse(FORI.read_text())
    p = debug.profile(mod, np.ones(4, np.float32), threads=1)
    assert {n for _, n in p.blas} == {1} and "BLAS threads: 1 (openblas)" in p.table()
    p = debug.profile(mod, np.ones(4, np.float32))
    assert p.blas == before == [(i["internal_api"], i["num_threads"]) for i in threadpoolctl.threadpool_info()
                                if i["user_api"] == "blas"]


def test_cli_profile_repeat_and_threads(tmp_path):
    np.save(tmp_path / "x.npy", np.ones(4, np.float32))
    r = _run([FORI, "-i", tmp_path / "x.npy", "--profile", "--repeat", "3", "--threads", "1", "--print", "none",
              "--color", "never", "--profile-json", tmp_path / "p.json"])
    assert r.exit_code == 0, r.output
    head = r.output.splitlines()[0]
    assert "median of 3 runs" in head and head.endswith("BLAS threads: 1 (openblas)")
    js = json.loads((tmp_path / "p.json").read_text())
    assert js["runs"] == 3 and {t["threads"] for t in js["blas_threads"]} == {1}
    assert sum(r["count"] for r in js["by_opcode"]) == js["executed"]
    r = _run([FORI, "-i", tmp_path / "x.npy", "--profile", "--print", "none", "--color", "never"])
    n = max(t for _, t in debug.blas_threads())
    assert "median of" not in r.output and f"BLAS threads: {n} (openblas)" in r.output
    for bad, msg in ((["--repeat", "3"], "give --profile"), (["--profile", "--repeat", "0"], "--repeat must be"),
                     (["--threads", "0"], "--threads must be"),
                     (["--profile", "--trace", "--repeat", "2"], "--profile alone")):
        r = _run([FORI, "-i", tmp_path / "x.npy", "--print", "none", *bad])
        assert r.exit_code == 2 and msg in r.output, (bad, r.output)
