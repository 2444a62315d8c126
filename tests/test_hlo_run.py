"""`hlo-run` (hlo_interp/cli_run.py): inputs, outputs, printing, --compare, guards and exit codes.

Most cases use click's CliRunner (fast, in-process); a few run the real process (stdin, exit codes, no
traceback).  Expected values were computed by XLA:CPU (jaxlib 0.10.2) on the same HLO text and inputs.
"""
from __future__ import annotations

import io
import os
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest
from click.testing import CliRunner

from hlo_interp.cli_run import main
from hlo_interp.files import load_arrays as load_input_file, npy_bytes as _npy_bytes

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "samples"

# x*2, y+y (bf16), convert(x) to f8e5m2 and to s32: XLA:CPU gives, for x = [0.5, -1.5, 3e9] and
# y = [1.5, -0.75]: [1, -3, 6e9], [3, -1.5], [0.5, -1.5, inf] (overflow), [0, -1, 2147483647] (saturated).
CLI_HLO = """HloModule cli

ENTRY main {
  x = f32[3] parameter(0)
  y = bf16[2] parameter(1)
  two = f32[] constant(2)
  b = f32[3] broadcast(two), dimensions={}
  m = f32[3] multiply(x, b)
  c = bf16[2] add(y, y)
  f = f8e5m2[3] convert(x)
  i = s32[3] convert(x)
  inner = (bf16[2], f8e5m2[3]) tuple(c, f)
  ROOT r = (f32[3], (bf16[2], f8e5m2[3]), s32[3]) tuple(m, inner, i)
}
"""
X = np.array([0.5, -1.5, 3e9], np.float32)
Y = np.array([1.5, -0.75], ml_dtypes.bfloat16)
EXPECTED = [np.array([1, -3, 6e9], np.float32), np.array([3, -1.5], ml_dtypes.bfloat16),
            np.array([0.5, -1.5, np.inf], ml_dtypes.float8_e5m2), np.array([0, -1, 2147483647], np.int32)]


@pytest.fixture
def files(tmp_path):
    (tmp_path / "m.hlo").write_text(CLI_HLO)
    np.save(tmp_path / "x.npy", X)
    np.save(tmp_path / "y.npy", Y)  # np.save leaves bf16 as raw |V2 bytes
    np.savez(tmp_path / "args.npz", arg0=X, arg1=Y)
    np.savez(tmp_path / "named.npz", x=X, y=Y)
    return tmp_path


def invoke(*args, env=None):
    runner = CliRunner()
    return runner.invoke(main, [str(a) for a in args], env=env or {"NO_COLOR": "1"}, catch_exceptions=False)


def out(r):
    return r.stdout


def err(r):
    return r.stderr


def check_expected(leaves):
    assert len(leaves) == 4
    for got, want in zip(leaves, EXPECTED):
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_array_equal(got.astype(np.float64), want.astype(np.float64))


def load_npz(path):
    with np.load(path) as z:
        return [z[f"out{k}"] for k in range(len(z.files))], sorted(z.files)


# --------------------------------------------------------------------------------------------------
# inputs

@pytest.mark.parametrize("inputs", [["x.npy", "y.npy"], ["args.npz"], ["named.npz"]])
def test_input_forms_and_npz_output(files, inputs):
    r = invoke(files / "m.hlo", "--inputs", *[files / f for f in inputs], "-o", files / "out.npz")
    assert r.exit_code == 0, err(r)
    leaves, keys = load_npz(files / "out.npz")
    assert keys == ["out0", "out1", "out2", "out3"]
    check_expected(leaves)  # bf16 and f8e5m2 come back with their real dtypes
    assert [p.name for p in files.iterdir() if p.name.startswith(".")] == []  # no temporary files left


def test_repeated_inputs_flag(files):
    r = invoke(files / "m.hlo", "-i", files / "x.npy", "-i", files / "y.npy", "--print", "none")
    assert r.exit_code == 0, err(r)


def test_f8_npy_saved_by_numpy_is_read_as_raw_bytes(files, tmp_path):
    # np.save writes f8e5m2 with descr '<f1', which np.load cannot read back: we read the bytes and view
    # them as the parameter's type
    text = "HloModule f8\nENTRY main {\n  p = f8e5m2[2] parameter(0)\n  ROOT n = f8e5m2[2] negate(p)\n}\n"
    (tmp_path / "f8.hlo").write_text(text)
    a = np.array([1.5, -0.25], ml_dtypes.float8_e5m2)
    np.save(tmp_path / "a.npy", a)
    with pytest.raises(ValueError):
        np.load(tmp_path / "a.npy")
    r = invoke(tmp_path / "f8.hlo", "-i", tmp_path / "a.npy", "-o", tmp_path / "o.npy")
    assert r.exit_code == 0, err(r)
    got = np.load(tmp_path / "o.npy")
    assert got.dtype == ml_dtypes.float8_e5m2 and got.astype(np.float32).tolist() == [-1.5, 0.25]


@pytest.mark.parametrize("args, message", [
    (["-i", "x.npy"], "the computation has 2 parameter(s) (x, y); got 1 .npy file(s)"),
    (["-i", "y.npy", "x.npy"], "argument 0 for parameter 'x': expected element type f32"),
    (["-i", "missing.npy", "y.npy"], "missing.npy: no such file"),
    (["-i", "bad.npz"], "no array for parameter 1 'y': give 'arg1' or 'y'; the file has: arg0"),
    (["-i", "extra.npz"], "arrays junk match no parameter"),
    (["-i", "m.hlo", "y.npy"], "m.hlo: not a NumPy .npy or .npz file"),
    (["-i", "short.npy", "y.npy"], "expected shape f32[3], got f32[2]"),
])
def test_bad_inputs_exit_2_with_a_message(files, args, message):
    np.savez(files / "bad.npz", arg0=X)
    np.savez(files / "extra.npz", arg0=X, arg1=Y, junk=X)
    np.save(files / "short.npy", X[:2])
    r = invoke(files / "m.hlo", *[files / a if not a.startswith("-") else a for a in args])
    assert r.exit_code == 2
    assert message in err(r)
    assert "Traceback" not in err(r)


def test_located_input_error(files):
    np.save(files / "short.npy", X[:2])
    r = invoke(files / "m.hlo", "-i", files / "short.npy", files / "y.npy")
    assert err(r).startswith(f"{files / 'm.hlo'}:4:3: error: argument 0 for parameter 'x'")


def test_random_inputs_are_seeded(files):
    a = invoke(files / "m.hlo", "--random-inputs", "--seed", "3", "-o", files / "a.npz")
    b = invoke(files / "m.hlo", "--random-inputs", "--seed", "3", "-o", files / "b.npz")
    c = invoke(files / "m.hlo", "--random-inputs", "--seed", "4", "-o", files / "c.npz")
    assert a.exit_code == b.exit_code == c.exit_code == 0
    la, _ = load_npz(files / "a.npz")
    lb, _ = load_npz(files / "b.npz")
    lc, _ = load_npz(files / "c.npz")
    assert all(np.array_equal(x, y) for x, y in zip(la, lb))
    assert not np.array_equal(la[0], lc[0])


def test_usage_errors(files):
    r = invoke(files / "m.hlo")
    assert r.exit_code == 2 and "give --inputs or --random-inputs" in err(r)
    r = invoke(files / "m.hlo", "--random-inputs", "-i", files / "args.npz")
    assert r.exit_code == 2 and "not both" in err(r)
    r = invoke(files / "m.hlo", "--random-inputs", "-o", files / "out.txt")
    assert r.exit_code == 2 and "must end in .npz or .npy" in err(r)
    r = invoke(files / "m.hlo", "--random-inputs", "-o", files / "one.npy")
    assert r.exit_code == 2 and "the result has 4 leaves: save it as .npz" in err(r)
    assert not (files / "one.npy").exists()
    r = invoke(files / "nope.hlo", "--random-inputs")
    assert r.exit_code == 2 and "nope.hlo: error: no such file" in err(r)


# --------------------------------------------------------------------------------------------------
# outputs and printing

def test_summary_print(files):
    r = invoke(files / "m.hlo", "-i", files / "args.npz")
    assert r.exit_code == 0
    text = out(r)
    assert "out0 f32[3]  min -3  max 6e+09  mean 2e+09  NaN 0  Inf 0" in text
    assert "out1 bf16[2]  min -1.5  max 3  mean 0.75  NaN 0  Inf 0" in text
    assert "out2 f8e5m2[3]  min -1.5  max 0.5  mean -0.5  NaN 0  Inf 1" in text
    assert "out3 s32[3]  min -1  max 2147483647" in text
    assert "\x1b[" not in text  # NO_COLOR


def test_print_full_and_none(tmp_path):
    text = "HloModule io\nENTRY main {\n  ROOT i = s32[100] iota(), iota_dimension=0\n}\n"
    (tmp_path / "io.hlo").write_text(text)
    r = invoke(tmp_path / "io.hlo", "--print", "full")
    assert r.exit_code == 0 and " 50 " in out(r) and "..." not in out(r)
    r = invoke(tmp_path / "io.hlo")
    assert "..." in out(r) and " 50 " not in out(r)
    r = invoke(tmp_path / "io.hlo", "--print", "none", "-o", tmp_path / "o.npy")
    assert r.exit_code == 0 and out(r) == ""
    np.testing.assert_array_equal(np.load(tmp_path / "o.npy"), np.arange(100, dtype=np.int32))


def test_color_always_and_no_color(files):
    r = invoke(files / "m.hlo", "-i", files / "args.npz", "--color", "always", env={"NO_COLOR": None})
    assert "\x1b[" in out(r)
    r = invoke(files / "m.hlo", "-i", files / "args.npz", env={"NO_COLOR": "1"})
    assert "\x1b[" not in out(r)


def test_npy_bytes_roundtrip_every_type():
    for dt in (ml_dtypes.bfloat16, ml_dtypes.float8_e4m3fn, ml_dtypes.float8_e5m2, ml_dtypes.int4,
               ml_dtypes.uint2, ml_dtypes.float4_e2m1fn, np.float16, np.complex64, np.bool_, np.uint64):
        a = np.array([[1, 0], [1, 1]]).astype(dt)
        b = np.load(io.BytesIO(_npy_bytes(a)))
        assert b.dtype == a.dtype and b.shape == a.shape and b.tobytes() == a.tobytes()


def test_failed_run_writes_nothing(files):
    r = invoke(files / "m.hlo", "--random-inputs", "-o", files / "o.npz", "--max-bytes", "8")
    assert r.exit_code == 2 and "above the limit of 8 bytes" in err(r)
    assert not (files / "o.npz").exists()


# --------------------------------------------------------------------------------------------------
# --compare

def _save_expected(path, leaves):
    with zipfile.ZipFile(path, "w") as z:
        for k, a in enumerate(leaves):
            z.writestr(f"out{k}.npy", _npy_bytes(a))


def test_compare_ok_and_mismatch(files):
    _save_expected(files / "exp.npz", EXPECTED)
    r = invoke(files / "m.hlo", "-i", files / "args.npz", "--compare", files / "exp.npz", "--print", "none")
    assert r.exit_code == 0, out(r) + err(r)
    assert out(r).count("ok ") == 4
    wrong = [EXPECTED[0] * np.float32(1.001)] + EXPECTED[1:3] + [EXPECTED[3] - np.int32(1)]
    _save_expected(files / "bad.npz", wrong)
    r = invoke(files / "m.hlo", "-i", files / "args.npz", "--compare", files / "bad.npz", "--print", "none")
    assert r.exit_code == 1
    lines = out(r).splitlines()
    # the bound scales with max|expected| (6e9): 1 and -3 off by 0.1% pass, 6e9 off by 6e6 does not
    assert lines[0].startswith("MISMATCH out0 f32[3]: 1 of 3 differ; max |error| 6e+06, max rel. error 0.000999; "
                               "= 8.38e+03 eps·max (max|expected| 6.01e+09)")
    assert lines[1].startswith("ok       out1") and lines[2].startswith("ok       out2")
    assert lines[3].startswith("MISMATCH out3 s32[3]: 3 of 3 differ (max |error| 1)")
    # a looser tolerance accepts the f32 leaf (integers stay exact)
    r = invoke(files / "m.hlo", "-i", files / "args.npz", "--compare", files / "bad.npz", "--print", "none",
               "--rtol", "1e-2")
    assert r.exit_code == 1 and out(r).splitlines()[0].startswith("ok       out0")


def test_compare_leaf_count_and_shape(files):
    np.savez(files / "few.npz", out0=EXPECTED[0])
    r = invoke(files / "m.hlo", "-i", files / "args.npz", "--compare", files / "few.npz", "--print", "none")
    assert r.exit_code == 1 and "the result has 4 leaves" in out(r)
    _save_expected(files / "shape.npz", [EXPECTED[0][:2]] + EXPECTED[1:])
    r = invoke(files / "m.hlo", "-i", files / "args.npz", "--compare", files / "shape.npz", "--print", "none")
    assert r.exit_code == 1 and "shape differs: got f32[3], expected f32[2]" in out(r)


def test_compare_nan_and_inf_match_exactly(tmp_path):
    text = "HloModule d\nENTRY main {\n  x = f32[4] parameter(0)\n  ROOT d = f32[4] divide(x, x)\n}\n"
    (tmp_path / "d.hlo").write_text(text)
    np.save(tmp_path / "x.npy", np.array([0, 1, np.inf, 2], np.float32))
    np.save(tmp_path / "e.npy", np.array([np.nan, 1, np.nan, 1], np.float32))
    r = invoke(tmp_path / "d.hlo", "-i", tmp_path / "x.npy", "--compare", tmp_path / "e.npy")
    assert r.exit_code == 0, out(r)
    np.save(tmp_path / "e2.npy", np.array([0, 1, np.nan, 1], np.float32))
    r = invoke(tmp_path / "d.hlo", "-i", tmp_path / "x.npy", "--compare", tmp_path / "e2.npy")
    assert r.exit_code == 1 and "1 of 4 differ" in out(r)


# --------------------------------------------------------------------------------------------------
# guards

LOOP = """HloModule loop

body {
  p = s32[] parameter(0)
  one = s32[] constant(1)
  ROOT n = s32[] add(p, one)
}

cond {
  p = s32[] parameter(0)
  lim = s32[] constant(1000)
  ROOT lt = pred[] compare(p, lim), direction=LT
}

ENTRY main {
  z = s32[] constant(0)
  ROOT w = s32[] while(z), condition=cond, body=body
}
"""


def test_max_iterations(tmp_path):
    (tmp_path / "loop.hlo").write_text(LOOP)
    r = invoke(tmp_path / "loop.hlo", "--max-iterations", "999")
    assert r.exit_code == 2
    assert err(r).startswith(f"{tmp_path / 'loop.hlo'}:17:8: error: while loop still running after 999")
    r = invoke(tmp_path / "loop.hlo", "--max-iterations", "1000", "-o", tmp_path / "o.npy")
    assert r.exit_code == 0 and int(np.load(tmp_path / "o.npy")) == 1000


def test_max_bytes_sizes(tmp_path):
    text = "HloModule b\nENTRY main {\n  ROOT i = s32[1024,1024] iota(), iota_dimension=1\n}\n"
    (tmp_path / "b.hlo").write_text(text)
    r = invoke(tmp_path / "b.hlo", "--max-bytes", "2M", "--print", "none")
    assert r.exit_code == 2 and "needs 4.0 MiB, above the limit of 2.0 MiB" in err(r)
    r = invoke(tmp_path / "b.hlo", "--max-bytes", "4MiB", "--print", "none")
    assert r.exit_code == 0
    r = invoke(tmp_path / "b.hlo", "--max-bytes", "lots")
    assert r.exit_code == 2 and "not a size" in err(r)


def test_fake_constants(tmp_path):
    text = ("HloModule e\nENTRY main {\n  c = f32[3] constant({...})\n  ROOT n = f32[3] negate(c)\n}\n")
    (tmp_path / "e.hlo").write_text(text)
    r = invoke(tmp_path / "e.hlo")
    assert r.exit_code == 2 and "elided" in err(r) and ":3:3: error:" in err(r)
    r = invoke(tmp_path / "e.hlo", "--fake-constants", "-o", tmp_path / "a.npy")
    assert r.exit_code == 0
    invoke(tmp_path / "e.hlo", "--fake-constants", "-o", tmp_path / "b.npy")
    np.testing.assert_array_equal(np.load(tmp_path / "a.npy"), np.load(tmp_path / "b.npy"))


def test_unsupported_opcode_message(tmp_path, monkeypatch):
    text = "HloModule u\nENTRY main {\n  x = f32[2,2] parameter(0)\n  ROOT c = f32[2,2] cholesky(x)\n}\n"
    (tmp_path / "u.hlo").write_text(text)
    from hlo_interp.ops import load_all
    from hlo_interp.ops.registry import KERNELS
    load_all()
    monkeypatch.delitem(KERNELS, "cholesky", raising=False)  # as if it were not implemented
    r = invoke(tmp_path / "u.hlo", "--random-inputs")
    assert r.exit_code == 2 and "error: unsupported opcode 'cholesky' (line 4)" in err(r)


def test_run_one_computation(tmp_path):
    # --computation runs a called computation on its own (here the loop body: 41 + 1)
    (tmp_path / "loop.hlo").write_text(LOOP)
    np.save(tmp_path / "p.npy", np.int32(41))
    r = invoke(tmp_path / "loop.hlo", "--computation", "body", "-i", tmp_path / "p.npy", "-o", tmp_path / "o.npy")
    assert r.exit_code == 0, err(r)
    assert int(np.load(tmp_path / "o.npy")) == 42
    r = invoke(tmp_path / "loop.hlo", "--computation", "nope", "--random-inputs")
    assert r.exit_code == 2 and "no computation named 'nope' (the module has: body, cond, main)" in err(r)


def test_help_explains_with_an_example():
    r = invoke("--help")
    assert r.exit_code == 0
    assert "hlo-run model.hlo --inputs x.npy w.npy" in out(r)
    assert "--compare" in out(r) and "--random-inputs" in out(r)


# --------------------------------------------------------------------------------------------------
# the real process: the README's commands, stdin, exit codes, no traceback

def hlo_run(*args, input=None):
    env = dict(os.environ)
    env["NO_COLOR"] = "1"
    return subprocess.run([sys.executable, "-m", "hlo_interp.cli_run", *map(str, args)], input=input,
                          capture_output=True, text=True, cwd=ROOT, env=env)


def test_process_sample_matches_xla():
    # samples/mlp.expected.npz: XLA:CPU's result for samples/mlp.inputs.npz
    for module in ("mlp.before_optimizations.hlo", "mlp.after_optimizations.hlo"):
        r = hlo_run(f"samples/{module}", "--inputs", "samples/mlp.inputs.npz",
                    "--compare", "samples/mlp.expected.npz")
        assert r.returncode == 0, r.stdout + r.stderr
        assert "out0 f32[8,10]" in r.stdout and "ok       out0 f32[8,10]" in r.stdout


def test_process_stdin_and_errors(tmp_path):
    np.savez(tmp_path / "args.npz", arg0=X, arg1=Y)
    r = hlo_run("-", "-i", tmp_path / "args.npz", "-o", tmp_path / "o.npz", input=CLI_HLO)
    assert r.returncode == 0, r.stderr
    check_expected(load_npz(tmp_path / "o.npz")[0])
    r = hlo_run("-", "--random-inputs", input="HloModule x\nENTRY e {\n  ROOT a = f32[] add(\n}\n")
    assert r.returncode == 2 and r.stderr.startswith("<stdin>:4:1: error: ")
    assert "Traceback" not in r.stderr


def test_load_input_file_rejects_pickles(tmp_path):
    np.save(tmp_path / "o.npy", np.array([{"a": 1}], dtype=object), allow_pickle=True)
    from hlo_interp.files import InputError
    with pytest.raises(InputError, match="Python objects"):
        load_input_file(str(tmp_path / "o.npy"))


def test_host_transfer_files(tmp_path):
    """--host-recv feeds recv(is_host_transfer) per channel; --host-send saves what send emits."""
    from tests.test_ops_io_layout import _HOST
    mod = tmp_path / "host.hlo"
    mod.write_text(_HOST)
    np.savez(tmp_path / "in.npz", ch1_0=np.array([1, 2, 3], np.float32), ch1_1=np.array([-5, 7], np.int8))
    r = invoke(str(mod), "--host-recv", str(tmp_path / "in.npz"), "--host-send", str(tmp_path / "out.npz"),
               "-o", str(tmp_path / "res.npy"))
    assert r.exit_code == 0, r.output
    np.testing.assert_array_equal(np.load(tmp_path / "res.npy"), np.array([-5, 7], np.int8))
    with np.load(tmp_path / "out.npz") as z:
        assert sorted(z.files) == ["ch2_0", "ch2_1"]
        np.testing.assert_array_equal(z["ch2_0"], [2, 3, 4])
        np.testing.assert_array_equal(z["ch2_1"], [1, 2, 3])
    np.savez(tmp_path / "bad.npz", x=np.zeros(3, np.float32))
    r = invoke(str(mod), "--host-recv", str(tmp_path / "bad.npz"))
    assert r.exit_code == 2 and "not ch<channel_id>_<k>" in r.output
    r = invoke(str(mod))  # nothing queued: a located error naming the channel
    assert r.exit_code == 2 and "channel 1" in r.output


_HOST_BF16 = """HloModule hb
ENTRY e {
  t = token[] after-all()
  r = (bf16[3], u32[], token[]) recv(t), channel_id=4, is_host_transfer=true
  rd = (bf16[3], token[]) recv-done(r), channel_id=4, is_host_transfer=true
  v = bf16[3] get-tuple-element(rd), index=0
  w = bf16[3] add(v, v)
  s = (bf16[3], u32[], token[]) send(w, t), channel_id=5, is_host_transfer=true
  sd = token[] send-done(s), channel_id=5, is_host_transfer=true
  ROOT o = bf16[3] copy(w)
}
"""


def test_host_transfers_keep_bf16_and_refuse_damaged_files(tmp_path):
    """bf16 goes in and comes out as bf16 (np.savez would have written raw void bytes); a damaged or
    truncated .npz is an input error naming the file, not a traceback."""
    import ml_dtypes
    from hlo_interp.files import save_arrays
    mod = tmp_path / "hb.hlo"
    mod.write_text(_HOST_BF16)
    x = np.array([1.5, -2.25, 3.0], ml_dtypes.bfloat16)
    save_arrays(tmp_path / "in.npz", {"ch4_0": x})
    r = invoke(mod, "--host-recv", tmp_path / "in.npz", "--host-send", tmp_path / "out.npz")
    assert r.exit_code == 0, r.output
    with np.load(tmp_path / "out.npz") as z:
        sent = z["ch5_0"]
    assert sent.dtype == ml_dtypes.bfloat16
    np.testing.assert_array_equal(sent.astype(np.float32), [3.0, -4.5, 6.0])
    data = (tmp_path / "in.npz").read_bytes()
    for name, damaged in (("trunc.npz", data[: len(data) // 2]), ("garbage.npz", b"PK\x03\x04" + b"\xff" * 64)):
        (tmp_path / name).write_bytes(damaged)
        r = invoke(mod, "--host-recv", tmp_path / name)
        assert r.exit_code == 2, r.output
        assert f"{tmp_path / name}: damaged .npz file" in r.output and "internal error" not in r.output


def test_invalid_declared_shape_is_an_input_error(tmp_path):
    """A module that declares a shape its operands do not give (f32[9] for a pad that makes f32[10]):
    the result cannot match, and the message is the verifier's, at the instruction, not 'internal error'."""
    mod = tmp_path / "pad.hlo"
    mod.write_text("HloModule p\nENTRY e {\n  v = f32[3] parameter(0)\n  z = f32[] constant(0)\n"
                   "  ROOT i = f32[9] pad(v, z), padding=1_2_2\n}\n")
    for extra in ([], ["--trace"]):
        r = invoke(mod, "--random-inputs", *extra)  # refused by the verifier before running
        assert r.exit_code == 2, r.output
        assert r.stderr.startswith(f"{mod}:5:8: error: pad: expected f32[9], inferred f32[10] from the operands "
                                   "(E101")
        r = invoke(mod, "--random-inputs", "--no-verify", *extra)  # run anyway: the result cannot match
        assert r.exit_code == 2, r.output
        assert r.stderr.startswith(f"{mod}:5:8: error: the module is invalid, so its result cannot have the "
                                   "declared shape: pad: expected f32[9], inferred f32[10] from the operands (E101")


def _raw_npy(header: str, body: bytes) -> bytes:
    h = header + " " * (63 - len(header) % 64) + "\n"
    return b"\x93NUMPY\x01\x00" + len(h).to_bytes(2, "little") + h.encode() + body


@pytest.mark.parametrize("name,data,message", [
    ("float_shape.npy", _raw_npy("{'descr': '<f4', 'fortran_order': False, 'shape': (2.5,), }", b"\0" * 16),
     "damaged .npy header (shape (2.5,)"),
    ("neg_shape.npy", _raw_npy("{'descr': '<f4', 'fortran_order': False, 'shape': (-2,), }", b"\0" * 16),
     "damaged .npy header (shape (-2,)"),
    ("str_shape.npy", _raw_npy("{'descr': '<f1', 'fortran_order': False, 'shape': 'ab', }", b"\0" * 4),
     "damaged .npy header (shape ('a', 'b')"),
    ("short.npy", _raw_npy("{'descr': '<f1', 'fortran_order': False, 'shape': (8,), }", b"\0" * 4),
     "file is truncated"),
])
def test_damaged_npy_headers_are_input_errors(tmp_path, name, data, message):
    """NumPy refuses these (or, for a negative dimension, our fallback reader once took any count):
    each is an InputError naming the file, never a traceback or a wrongly shaped array."""
    from hlo_interp.files import InputError
    (tmp_path / name).write_bytes(data)
    with pytest.raises(InputError, match=re.escape(f"{tmp_path / name}: {message}")):
        load_input_file(str(tmp_path / name))


def test_corrupt_deflate_npz_is_an_input_error(tmp_path):
    np.savez_compressed(tmp_path / "c.npz", arg0=np.arange(1000, dtype=np.float32))
    d = bytearray((tmp_path / "c.npz").read_bytes())
    d[200:260] = b"\xff" * 60
    (tmp_path / "bad.npz").write_bytes(bytes(d))
    from hlo_interp.files import InputError
    with pytest.raises(InputError, match="bad.npz: damaged .npz file"):
        load_input_file(str(tmp_path / "bad.npz"))


def test_stored_npz_members_are_views_of_the_file_and_still_checked(tmp_path):
    """np.savez's uncompressed members come back as writable views of the bytes read (no copies), with
    the same values, dtypes, shapes and memory order as np.load gives; a member whose bytes do not match
    its CRC is the same input error as before."""
    arrays = {"a": np.arange(12, dtype=np.float32).reshape(3, 4), "f": np.asfortranarray(np.arange(6.0).reshape(2, 3)),
              "s": np.array(7, np.int64), "e": np.zeros((0, 3), np.int8), "b": Y}
    np.savez(tmp_path / "m.npz", **arrays)
    got = load_input_file(str(tmp_path / "m.npz"))
    want = np.load(tmp_path / "m.npz")
    for k in arrays:
        g, w = got[k], want[k]
        assert g.dtype == w.dtype and g.shape == w.shape and g.flags.f_contiguous == w.flags.f_contiguous, k
        np.testing.assert_array_equal(g, w)
        assert g.flags.writeable, k
    assert got["a"].base is not None  # a view, not a copy
    d = bytearray((tmp_path / "m.npz").read_bytes())
    at = d.index(np.arange(12, dtype=np.float32).tobytes())
    d[at + 4] ^= 0xFF
    (tmp_path / "bad.npz").write_bytes(bytes(d))
    from hlo_interp.files import InputError
    with pytest.raises(InputError, match="bad.npz: damaged .npz file"):
        load_input_file(str(tmp_path / "bad.npz"))
