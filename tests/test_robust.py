"""Untrusted dumps: every command, given a hostile input, ends with a located error or a
one-line message and exit 0/1/2 (141 for a closed pipe): no traceback, no runaway memory or time, no
wrong answer, nothing half-written.  Each test uses the exact input of the finding it pins."""
import os
import resource
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import hlo_interp
from hlo_interp import cli

ROOT = Path(__file__).resolve().parents[1]


def _limit_memory(gb: float = 4):
    def pre():
        n = int(gb * (1 << 30))
        resource.setrlimit(resource.RLIMIT_AS, (n, n))
    return pre


def run(*argv, input=None, env=None, timeout=120, mem_gb=4, cwd=None):
    """A command as a user runs it, under an address-space limit (an allocation past it is a
    MemoryError, so a missing guard shows up as an error here instead of swapping the machine)."""
    e = dict(os.environ, NO_COLOR="1", PYTHONPATH=str(ROOT))
    e.pop("HLO_INTERP_DEBUG", None)
    e.update(env or {})
    module = "hlo_interp.cli_run" if argv[0] == "hlo-run" else "hlo_interp"
    args = argv[1:] if argv[0] == "hlo-run" else argv
    return subprocess.run([sys.executable, "-m", module, *map(str, args)], input=input, capture_output=True,
                          text=isinstance(input, str) or input is None, env=e, timeout=timeout,
                          preexec_fn=_limit_memory(mem_gb), cwd=cwd)


def module(tmp_path, text: str, name: str = "m.hlo") -> Path:
    p = tmp_path / name
    p.write_text(text)
    return p


def assert_located_error(r, path, line=None, needle=None):
    err = r.stderr if isinstance(r.stderr, str) else r.stderr.decode()
    assert r.returncode == 2, (r.returncode, err)
    assert "Traceback" not in err, err
    assert f"{path}:" in err, err
    if line is not None:
        assert f"{path}:{line}:" in err, err
    if needle is not None:
        assert needle in err, err


def one_line(body: str) -> str:
    return f"HloModule m\nENTRY e {{\n  {body}\n}}\n"


ALL_TEXT_COMMANDS = [("fmt",), ("diff", "SELF"), ("info",), ("graph", "-o", "OUT.dot"), ("check",)]


def every_command(tmp_path, path):
    for cmd in ALL_TEXT_COMMANDS:
        args = [tmp_path / "out.dot" if a == "OUT.dot" else path if a == "SELF" else a for a in cmd]
        yield cmd[0], run(*args, path)


# --------------------------------------------------------------------------------------------------
# 1-4: tracebacks become located errors (exit 2)

def test_1_bool_where_a_float_literal_is_expected(tmp_path):
    p = module(tmp_path, one_line("ROOT c = f32[] constant(true)"))
    for name, r in every_command(tmp_path, p):
        if name == "check":
            assert r.returncode == 1 and "E001" in r.stdout and "found true" in r.stdout, r.stdout
        else:
            assert_located_error(r, p, 3, "expected a number for f32, found true")
    # and in the other literal kinds XLA takes true/false for pred only
    with pytest.raises(hlo_interp.HloError, match="expected an integer for s32, found true"):
        hlo_interp.parse(one_line("ROOT c = s32[2] constant({true, 1})"))
    assert hlo_interp.run(one_line("ROOT c = pred[2] constant({true, 0})"))[0].tolist() == [True, False]


@pytest.mark.parametrize("body", [
    "ROOT c = f32[{N}] constant(1)",            # a dimension
    "ROOT c = f32[] parameter({N})",            # a parameter number
    "ROOT c = f32[] constant({N})",             # a literal
    "ROOT c = f32[] constant(-{N})",            # negative
    "ROOT c = s64[] constant(-{N})",            # s64 (was StopIteration)
    "ROOT c = s64[2] constant({{1, {N}}})",
    "p = f32[4] parameter(0)\n  ROOT s = f32[2] slice(p), slice={{[0:{N}]}}",  # an attribute
])
def test_2_integer_tokens_of_more_than_4300_digits(tmp_path, body):
    p = module(tmp_path, one_line(body.replace("{N}", "9" * 5000)))
    for name, r in every_command(tmp_path, p):
        if name == "check":
            assert r.returncode == 1 and "out of range: integers are int64 or uint64" in r.stdout, r.stdout
        else:
            assert_located_error(r, p, None, "out of range: integers are int64 or uint64")


def test_2_header_attribute_of_more_than_4300_digits(tmp_path):
    p = module(tmp_path, "HloModule m, replica_count=" + "9" * 5000 + "\nENTRY e {\n  ROOT p = f32[] parameter(0)\n}\n")
    assert_located_error(run("fmt", p), p, 1, "out of range")


def test_2_long_digit_runs_that_are_not_integers_still_parse():
    # in a string, a comment, a name, a float: not integer tokens
    text = ('HloModule m\nENTRY e {\n  // ' + "1" * 5000 + '\n  ROOT c.' + "2" * 30 + ' = f32[] constant(1.'
            + "5" * 5000 + '), metadata={op_name="' + "3" * 5000 + '"}\n}\n')
    m = hlo_interp.parse(text)
    assert hlo_interp.run(m)[0] == np.float32(1.5555556)
    # the limits themselves: uint64 max and int64 min are integers XLA's lexer takes
    assert hlo_interp.run(one_line("ROOT c = u64[] constant(18446744073709551615)"))[0] == 2 ** 64 - 1
    assert hlo_interp.run(one_line("ROOT c = s64[] constant(-9223372036854775808)"))[0] == -2 ** 63
    with pytest.raises(hlo_interp.HloError, match="out of range"):
        hlo_interp.parse(one_line("ROOT c = u64[] constant(18446744073709551616)"))
    with pytest.raises(hlo_interp.HloError, match="out of range"):
        hlo_interp.parse(one_line("ROOT c = s64[] constant(-9223372036854775809)"))


def test_3_dimension_beyond_int64_in_fmt_and_diff(tmp_path):
    p = module(tmp_path, one_line("ROOT c = f32[2,99999999999999999999] constant({{1},{2}})"))
    for name, r in every_command(tmp_path, p):
        if name == "check":
            assert r.returncode == 1 and "out of range" in r.stdout
        else:
            assert_located_error(r, p, 3, "out of range")
    p = module(tmp_path, one_line("ROOT c = f32[2,9223372036854775807] constant({{1},{2}})"), "b.hlo")
    assert_located_error(run("fmt", p), p, 3, "dimensions overflow")


def test_4_memory_error_in_fmt_and_diff_is_a_message(tmp_path, monkeypatch):
    from click.testing import CliRunner
    import hlo_interp.syntax.parser as parser
    p = module(tmp_path, one_line("ROOT c = f32[] constant(1)"))

    def no_memory(*a, **k):  # what a big enough input does under a memory limit, deterministically
        raise MemoryError()
    monkeypatch.setattr(parser, "_parse", no_memory)
    for cmd in (["fmt", p], ["diff", p, p], ["info", p], ["graph", p, "-o", tmp_path / "g.dot"]):
        r = CliRunner().invoke(cli.main, [str(x) for x in cmd], catch_exceptions=False)
        assert r.exit_code == 2, (cmd, r.exit_code, r.stderr)
        assert "out of memory" in r.stderr and "Traceback" not in r.stderr


def test_4_and_6_internal_errors_are_one_line_and_exit_2(tmp_path, monkeypatch):
    from click.testing import CliRunner
    import hlo_interp.syntax.printer as printer
    p = module(tmp_path, one_line("ROOT c = f32[] constant(1)"))

    def broken(*a, **k):
        raise KeyError("simulated bug")
    monkeypatch.setattr(printer, "to_text", broken)
    r = CliRunner().invoke(cli.main, ["fmt", str(p)], catch_exceptions=False)
    assert r.exit_code == 2
    assert "internal error: KeyError" in r.stderr and "Traceback" not in r.stderr


def test_5_a_dead_check_worker_loses_only_its_own_file(tmp_path, monkeypatch):
    good = module(tmp_path, one_line("ROOT p = f32[] parameter(0)"), "a.hlo")
    bad = module(tmp_path, one_line("p = f32[4] parameter(0)\n  ROOT n = f32[4] negate(p, p)"), "b.hlo")
    killer = module(tmp_path, one_line("ROOT p = f32[] parameter(0)"), "c_dies.hlo")
    others = [module(tmp_path, one_line("ROOT p = f32[] parameter(0)"), f"d{k}.hlo") for k in range(6)]
    real = cli._check_one

    def dies_on_c(job):  # the OOM killer, simulated: kill -9 of the worker that checks c_dies.hlo
        if job[0].endswith("c_dies.hlo"):
            import signal
            os.kill(os.getpid(), signal.SIGKILL)
        return real(job)
    dies_on_c.__qualname__ = dies_on_c.__name__ = "_check_one"
    dies_on_c.__module__ = cli.__name__
    monkeypatch.setattr(cli, "_check_one", dies_on_c)
    inputs = [(str(x), False) for x in [good, bad, killer, *others]]
    results = cli.run_checks(inputs, {"syntax_only": False, "ignore": (), "notes": True}, jobs=2)
    by_file = {r["file"]: r for r in results}
    assert "died" in by_file[str(killer)]["error"]
    assert [f.code for f in by_file[str(bad)]["findings"]] == ["E101"] or by_file[str(bad)]["findings"]
    assert all(not by_file[str(x)].get("error") and not by_file[str(x)]["findings"] for x in [good, *others])


def test_6_internal_error_findings_exit_2(tmp_path, monkeypatch):
    import hlo_interp.shapes.verify as verify
    p = module(tmp_path, one_line("ROOT c = f32[] constant(1)"))

    def broken(*a, **k):
        raise RuntimeError("simulated bug")
    monkeypatch.setattr(verify, "check", broken)
    results = cli.run_checks([(str(p), False)], {"syntax_only": False, "ignore": (), "notes": True})
    assert results[0]["findings"][0].code == "E000"
    with pytest.raises(SystemExit) as e:
        cli._present_check(results, "text", "never", False)
    assert e.value.code == 2


# --------------------------------------------------------------------------------------------------
# 14: dimensions (XLA's parser refuses negative sizes; ShapeUtil::ValidateShape an overflowing count)

@pytest.mark.parametrize("shape, message", [
    ("f32[-1]", "negative dimension size -1"),
    ("f32[4,-4]", "negative dimension size -4"),
    ("f32[9223372036854775808]", "is beyond int64"),
    ("f32[4294967296,4294967296]", "dimensions overflow"),
    ("f32[2305843009213693952]", "shape size may overflow int64"),  # 2^61 elements, 2^63 bytes
    ("s32[0,9223372036854775808]", "is beyond int64"),  # no elements, but a size XLA reads as negative
])
def test_14_dimensions_check_refuses(tmp_path, shape, message):
    for body in (f"ROOT p = {shape} parameter(0)",
                 f"ROOT p = {shape}{{0}} parameter(0)" if shape.count(",") == 0 else f"ROOT p = {shape}{{1,0}} parameter(0)",
                 f"p = {shape} parameter(0)\n  ROOT n = {shape} negate(p)"):
        p = module(tmp_path, one_line(body))
        r = run("check", p)
        assert r.returncode == 1 and message in r.stdout and "E001" in r.stdout, r.stdout
    # a dynamic dimension's bound may be the unbounded size
    hlo_interp.parse(one_line("ROOT p = f32[<=4,?] parameter(0)"))


# --------------------------------------------------------------------------------------------------
# 18: nothing to check is an error

def test_18_empty_directory_is_exit_2(tmp_path):
    d = tmp_path / "emptydir"
    d.mkdir()
    r = run("check", d)
    assert r.returncode == 2 and "no HLO module found" in r.stderr, r.stderr
    (d / "notes.txt").write_text("buffer assignment report\n")  # files, but no module
    r = run("check", d)
    assert r.returncode == 2 and "no HLO module found" in r.stderr, r.stderr
    (d / "module.pb").write_bytes(b"\x0a\x03abc")  # not a module either
    assert run("check", d).returncode == 2
    (d / "module.pb").unlink()
    (d / "m.hlo").write_text(one_line("ROOT p = f32[] parameter(0)"))
    assert run("check", d).returncode == 0


# --------------------------------------------------------------------------------------------------
# 7-10: memory from tiny inputs (the guard holds before the allocation)

def test_7_constant_shape_is_not_materialized_before_its_body_is_checked(tmp_path):
    p = module(tmp_path, one_line("ROOT c = f32[100000000] constant({1})"))
    assert len(p.read_bytes()) < 70
    for cmd in (("fmt", p), ("check", p), ("hlo-run", p)):
        r = run(*cmd, mem_gb=0.6)  # 400 MB would not even fit
        assert "fewer values than its shape f32[100000000] holds" in (r.stdout + r.stderr), r.stderr
        assert r.returncode in (1, 2) and "Traceback" not in r.stderr
    p = module(tmp_path, one_line("ROOT c = f32[40000,40000] constant({{1}})"), "b.hlo")
    r = run("hlo-run", "--max-bytes", "100M", p, mem_gb=0.6)
    assert_located_error(r, p, 3, "fewer values than its shape f32[40000,40000] holds (1600000000 elements)")


def test_8_device_counts_are_refused_up_front(tmp_path):
    p = module(tmp_path, "HloModule m, replica_count=100000000\nENTRY e {\n  ROOT p = f32[4] parameter(0)\n}\n")
    assert len(p.read_bytes()) <= 87
    r = run("hlo-run", "--random-inputs", p, mem_gb=1)
    assert r.returncode == 2 and "100000000 devices: more than the 1024 devices" in r.stderr, r.stderr
    sdy = (ROOT / "tests/corpus/jax/smap_psum_multiplatform_cpu_cuda.before.hlo").read_text()
    assert '"x"=8' in sdy
    p = module(tmp_path, sdy.replace('"x"=8', '"x"=2147483648'), "mesh.hlo")
    r = run("hlo-run", "--random-inputs", p, mem_gb=1)
    assert r.returncode == 2 and "2147483648 devices: more than the 1024" in r.stderr, r.stderr
    # per-device state over --max-bytes, before any input is made
    p = module(tmp_path, "HloModule m, replica_count=1000\nENTRY e {\n  ROOT p = f32[100000] parameter(0)\n}\n",
               "big.hlo")
    r = run("hlo-run", "--random-inputs", "--max-bytes", "100M", p, mem_gb=1)
    assert r.returncode == 2 and "over the limit" in r.stderr, r.stderr
    # the Python API refuses them too
    with pytest.raises(hlo_interp.HloError, match="more than the 1024 devices"):
        hlo_interp.run_spmd(hlo_interp.parse(p.read_text()), [[np.zeros(100000, np.float32)]] * 2000,
                            replicas=2000)


def test_9_endless_streams_are_bounded(tmp_path, monkeypatch):
    p = module(tmp_path, one_line("ROOT p = f32[4] parameter(0)"))
    for cmd in (("fmt", "/dev/zero"), ("check", "/dev/zero"), ("info", "/dev/zero"), ("diff", "/dev/zero", p),
                ("hlo-run", "/dev/zero"), ("hlo-run", p, "-i", "/dev/zero")):
        r = run(*cmd, mem_gb=1, timeout=60)
        assert r.returncode == 2 and "Traceback" not in r.stderr, (cmd, r.stderr)
        assert "not a text file" in r.stderr or "larger than what the parameters need" in r.stderr, (cmd, r.stderr)
    r = run("fmt", "-", input=b"\0" * (1 << 20), mem_gb=1)
    assert r.returncode == 2 and b"not a text file" in r.stderr
    # an endless text stream stops at the limit (2 GB by default; small here)
    import io
    from hlo_interp import diagnostics

    class Endless(io.RawIOBase):
        def readable(self):
            return True

        def readinto(self, b):
            b[:] = b"x" * len(b)
            return len(b)
    monkeypatch.setattr(diagnostics, "MAX_MODULE_BYTES", 1 << 20)
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BufferedReader(Endless())))
    with pytest.raises(hlo_interp.HloError, match="larger than 1048576 bytes"):
        diagnostics.read_source("-")
    # and an input array is read up to --max-bytes only
    from hlo_interp.files import InputError, load_arrays
    with pytest.raises(InputError, match=r"larger than the limit \(1000 bytes"):
        load_arrays("/dev/zero", max_bytes=1000)


def test_10_random_inputs_respect_max_bytes(tmp_path):
    p = module(tmp_path, one_line("p = pred[300000000] parameter(0)\n  ROOT s = pred[4] slice(p), slice={[0:4]}"))
    r = run("hlo-run", "--random-inputs", "--max-bytes", "100M", p, mem_gb=1)
    assert r.returncode == 2 and "--random-inputs: parameter 'p'" in r.stderr and "over the limit" in r.stderr
    r = run("hlo-run", "--random-inputs", p, mem_gb=3)  # within the default limit: runs
    assert r.returncode == 0, r.stderr


def test_10_npz_zip_bomb_is_refused_before_inflating(tmp_path):
    import io
    import zipfile
    p = module(tmp_path, one_line("p = pred[300000000] parameter(0)\n  ROOT s = pred[4] slice(p), slice={[0:4]}"))
    hdr = io.BytesIO()
    np.lib.format.write_array_header_1_0(hdr, {"descr": "|b1", "fortran_order": False, "shape": (3 << 30,)})
    bomb = tmp_path / "bomb.npz"
    with zipfile.ZipFile(bomb, "w", compression=zipfile.ZIP_DEFLATED) as z:
        with z.open("arg0.npy", "w", force_zip64=True) as f:
            f.write(hdr.getvalue())
            chunk = bytes(1 << 24)
            for _ in range(3 << 6):
                f.write(chunk)
    assert bomb.stat().st_size < 4 << 20
    r = run("hlo-run", "-i", bomb, p, mem_gb=1, timeout=60)
    assert r.returncode == 2 and "refused before inflating it" in r.stderr, r.stderr


def test_10_convolution_temporaries_are_bounded(tmp_path):
    # 600x600 by 60x60: the result is 1.2 MB; the whole im2col copy would be 4.2 GB
    p = module(tmp_path, "HloModule m\nENTRY e {\n  x = f32[1,1,600,600] parameter(0)\n"
                         "  w = f32[1,1,60,60] parameter(1)\n  ROOT c = f32[1,1,541,541] convolution(x, w), "
                         "window={size=60x60}, dim_labels=bf01_oi01->bf01\n}\n")
    r = run("hlo-run", "--random-inputs", "-o", tmp_path / "c.npy", "--print", "none", p, mem_gb=1.5, timeout=300)
    assert r.returncode == 0, r.stderr
    from hlo_interp.ops import window
    rng = np.random.default_rng(0)
    x = rng.standard_normal((1, 1, 40, 30)).astype(np.float32)
    w = rng.standard_normal((1, 1, 7, 5)).astype(np.float32)
    text = p.read_text().replace("600,600", "40,30").replace("60,60", "7,5").replace("60x60", "7x5") \
        .replace("541,541", "34,26")
    whole = hlo_interp.run(text, x, w)[0]
    old = window.IM2COL_BYTES
    try:
        window.IM2COL_BYTES = 4096  # many slabs
        slabs = hlo_interp.run(text, x, w)[0]
    finally:
        window.IM2COL_BYTES = old
    from scipy.signal import correlate2d
    np.testing.assert_allclose(whole[0, 0], correlate2d(x[0, 0], w[0, 0], mode="valid"), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(slabs, whole, rtol=1e-5, atol=1e-5)


# --------------------------------------------------------------------------------------------------
# 11-12: time

class _CountingList(list):
    """A list that counts the full passes over it (for the ROOT lookups of a plan build)."""
    passes = 0

    def __iter__(self):
        type(self).passes += 1
        return super().__iter__()


def test_11_plan_building_looks_the_root_up_once():
    n = 3000
    body = "\n".join(f"  v{i} = f32[8] negate(v{i - 1})" for i in range(1, n))
    # the ROOT is not the last instruction: a lookup by scanning would pass over the whole list
    text = (f"HloModule m\nENTRY e {{\n  v0 = f32[8] parameter(0)\n{body}\n  ROOT r = f32[8] negate(v{n - 1})\n"
            f"  dead = f32[8] negate(v0)\n}}\n")
    m = hlo_interp.parse(text)
    comp = m.entry
    comp.instructions = _CountingList(comp.instructions)
    _CountingList.passes = 0
    from hlo_interp.evaluator import compile
    exe = compile(m)
    assert _CountingList.passes < 50, _CountingList.passes  # was one pass per instruction (quadratic)
    x = np.arange(8, dtype=np.float32)
    np.testing.assert_array_equal(exe(x)[0], x if n % 2 == 0 else -x)
    assert comp.root.name == "r"
    comp.instructions = list(comp.instructions[:-2]) + [comp.instructions[-1]]  # the list changed: found again
    assert comp.root.name == "dead" and comp.root is comp.instructions[-1]


def test_12_max_iterations_is_a_budget_for_the_whole_run(tmp_path):
    nested = ROOT / "tests/data/robust_nested_loops.hlo"  # 1000 outer x 1000 inner iterations
    r = run("hlo-run", nested, "--max-iterations", "1000")
    assert r.returncode == 2 and "after 1000 iterations of the run's loops" in r.stderr, r.stderr
    assert ":33:" in r.stderr  # the inner loop, where the budget ran out
    small = nested.read_text().replace("constant(1000)", "constant(30)")
    m = hlo_interp.parse(small)
    assert hlo_interp.run(m, max_iterations=30 * 30 + 30)[0] == 900  # exactly the budget is fine
    with pytest.raises(hlo_interp.HloError, match="after 929 iterations"):
        hlo_interp.run(m, max_iterations=929)
    exe = hlo_interp.evaluator.compile(m, max_iterations=930)
    assert exe()[0] == 900 and exe()[0] == 900  # the budget is per run, not per executable
    # a trivial runaway loop stops at the default (1,000,000 iterations in all)
    r = run("hlo-run", ROOT / "tests/data/robust_runaway_loop.hlo", timeout=300)
    assert r.returncode == 2 and "after 1000000 iterations" in r.stderr, r.stderr
    r = run("hlo-run", "--help")
    assert "budget for the whole run" in r.stdout


# --------------------------------------------------------------------------------------------------
# 13: hlo-run runs only what verifies

def test_13_hlo_run_refuses_what_check_rejects(tmp_path):
    p = module(tmp_path, one_line("p = f32[4] parameter(0)\n  c = f32[4] constant({1, 2, 3, 4})\n"
                                  "  n = f32[4] exponential(p, c)\n  ROOT t = (f32[4], f32[4]) tuple(n, c)"))
    assert run("check", p).returncode == 1
    r = run("hlo-run", "--random-inputs", p)
    assert_located_error(r, p, 5, "exponential expects 1 operand(s), but has 2 (E103")
    assert "--no-verify" in r.stderr
    # without the verifier, the kernels are still protected: never c overwritten, never exit 0
    r = run("hlo-run", "--no-verify", "--random-inputs", p)
    assert_located_error(r, p, 5, "exponential takes 1 operand, given 2")
    with pytest.raises(hlo_interp.HloError, match="exponential takes 1 operand, given 2"):
        hlo_interp.run(p.read_text(), np.zeros(4, np.float32))
    # shapes and attributes too
    p = module(tmp_path, one_line("p = f32[4] parameter(0)\n  ROOT s = f32[4] slice(p), slice={[0:8]}"), "s.hlo")
    r = run("hlo-run", "--random-inputs", p)
    assert r.returncode == 2 and "s.hlo:4:" in r.stderr and "Traceback" not in r.stderr, r.stderr


def test_14_rank_beyond_numpy_is_a_located_error(tmp_path):
    dims = ",".join(["1"] * 70)
    p = module(tmp_path, one_line(f"p = f32[{dims}] parameter(0)\n  ROOT n = f32[{dims}] negate(p)"))
    r = run("check", p)
    assert r.returncode == 0, r.stdout  # XLA has no rank limit
    r = run("hlo-run", "--random-inputs", p)
    assert_located_error(r, p, 3, "rank 70")



def test_constant_of_rank_beyond_numpy_is_a_located_error(tmp_path):
    # found by the fuzz test: a scalar written for a rank-70 constant was a bare ValueError in every command
    dims = ",".join(["1"] * 70)
    p = module(tmp_path, one_line(f"ROOT c = u8[{dims}] constant(255)"))
    for cmd in (("check", p), ("hlo-run", p)):
        r = run(*cmd)
        assert r.returncode in (1, 2) and "Traceback" not in r.stderr + r.stdout, (cmd, r.stderr)
        assert "rank 70" in r.stdout + r.stderr and ":3:" in r.stdout + r.stderr, (cmd, r.stdout, r.stderr)

# --------------------------------------------------------------------------------------------------
# 15-17: data safety

def _big_module(tmp_path) -> Path:
    n = 20000
    body = "\n".join(f"  v{i} = f32[8]{{0}} negate(v{i - 1})" for i in range(1, n))
    return module(tmp_path, f"HloModule big\n\nENTRY e {{\n  v0 = f32[8]{{0}} parameter(0)\n{body}\n"
                            f"  ROOT r = f32[8]{{0}} negate(v{n - 1})\n}}\n", "big.hlo")


def test_15_short_writes_are_errors_with_unbuffered_output(tmp_path):
    big = _big_module(tmp_path)
    env = dict(os.environ, NO_COLOR="1", PYTHONPATH=str(ROOT), PYTHONUNBUFFERED="1")
    out = tmp_path / "out.hlo"

    def fsize_limit():
        resource.setrlimit(resource.RLIMIT_FSIZE, (100000, 100000))
    with open(out, "wb") as f:
        r = subprocess.run([sys.executable, "-m", "hlo_interp", "fmt", str(big)], stdout=f, stderr=subprocess.PIPE,
                           env=env, preexec_fn=fsize_limit, text=True, timeout=300)
    assert r.returncode == 2 and "cannot write the output: File too large" in r.stderr, r.stderr
    assert out.stat().st_size == 100000
    # `hlo fmt big.hlo | head -1`: the reader leaves: 141, not 0
    p = subprocess.Popen([sys.executable, "-m", "hlo_interp", "fmt", str(big)], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, env=env)
    first = p.stdout.readline()
    p.stdout.close()
    assert p.wait(timeout=300) == 141 and first.startswith(b"HloModule big")
    assert b"Traceback" not in p.stderr.read()
    # and with the whole output read, every byte arrives
    r = subprocess.run([sys.executable, "-m", "hlo_interp", "fmt", str(big)], capture_output=True, env=env,
                       timeout=300)
    assert r.returncode == 0 and r.stdout.decode() == hlo_interp.format_text(big.read_text())


def test_16_symlinks_and_hard_links_are_written_through(tmp_path):
    target = module(tmp_path, "HloModule m\nENTRY e {\nROOT p = f32[] parameter(0)\n}\n", "target.hlo")
    link = tmp_path / "link.hlo"
    link.symlink_to(target.name)
    hard = tmp_path / "hard.hlo"
    os.link(target, hard)
    r = run("fmt", "-i", link)
    assert r.returncode == 0, r.stderr
    assert link.is_symlink() and os.readlink(link) == target.name
    formatted = target.read_text()
    assert "ROOT %p = f32[] parameter(0)" in formatted and formatted.startswith("HloModule m, entry_computation")
    assert hard.read_text() == formatted and os.stat(hard).st_ino == os.stat(target).st_ino  # the hard link too
    assert sorted(p.name for p in tmp_path.iterdir()) == ["hard.hlo", "link.hlo", "target.hlo"]  # no temp left
    # hlo-run -o through a symlink: the target is updated
    npy_target = tmp_path / "result.npy"
    np.save(npy_target, np.zeros(3))
    npy_link = tmp_path / "out.npy"
    npy_link.symlink_to(npy_target)
    p = module(tmp_path, one_line("ROOT c = f32[2] constant({1.5, 2.5})"), "c.hlo")
    r = run("hlo-run", p, "-o", npy_link)
    assert r.returncode == 0, r.stderr
    assert npy_link.is_symlink() and np.load(npy_target).tolist() == [1.5, 2.5]
    # a failing write leaves the original and no temporary file
    from hlo_interp.files import write_atomic

    def boom(f):
        f.write(b"partial")
        raise OSError(28, "No space left on device")
    with pytest.raises(hlo_interp.HloError, match="No space left on device"):
        write_atomic(link, boom)
    assert target.read_text() == formatted
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


def test_17_npz_outputs_are_byte_identical(tmp_path):
    import hashlib
    import time
    p = module(tmp_path, one_line("p = f32[4] parameter(0)\n  ROOT t = (f32[4], f32[4]) tuple(p, p)"))
    digests = []
    for k in range(2):
        out = tmp_path / f"o{k}.npz"
        r = run("hlo-run", p, "--random-inputs", "--seed", "3", "-o", out)
        assert r.returncode == 0, r.stderr
        digests.append(hashlib.sha256(out.read_bytes()).hexdigest())
        time.sleep(2.1)  # zip time stamps have a 2-second resolution
    assert digests[0] == digests[1]
    got = np.load(tmp_path / "o0.npz")
    assert sorted(got.files) == ["out0", "out1"] and got["out0"].shape == (4,)


# --------------------------------------------------------------------------------------------------
# Fuzz: every command's code path on mutated modules ends in a located error or a result
# (tools/fuzz_robust.py runs the same, longer, with the real commands in subprocesses too)

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

_SEEDS = sorted(p for p in (ROOT / "tests" / "corpus").rglob("*.hlo") if p.stat().st_size <= 2500)[::9][:80]
_NUMBERS = ["0", "1", "-1", "3", "64", "65", "2147483648", "4294967296", "9223372036854775807",
            "9223372036854775808", "18446744073709551615", "99999999999999999999", "9" * 5000]
_OPCODES = ["add", "negate", "exponential", "tuple", "get-tuple-element", "broadcast", "reshape", "transpose",
            "slice", "concatenate", "dot", "convolution", "reduce", "pad", "iota", "while", "call", "select",
            "compare", "convert", "bitcast", "gather", "scatter", "sort", "dynamic-slice", "all-reduce", "rng"]


@st.composite
def hostile_module(draw):
    import re
    original = draw(st.sampled_from(_SEEDS)).read_text()
    text = original
    for _ in range(draw(st.integers(1, 3))):
        kind = draw(st.sampled_from(["number", "opcode", "operand", "dims", "line"]))
        if kind == "number":
            pat = r"(?<![\w.])-?\d+(?![\w.])"
            new = draw(st.sampled_from(_NUMBERS))
        elif kind == "opcode":
            pat = r"(?<=[ =])[a-z][a-z0-9-]*(?=\()"
            new = draw(st.sampled_from(_OPCODES))
        elif kind == "operand":
            pat = r"\((%?[\w.-]+)(?=[,)])"
            new = None
        elif kind == "dims":
            pat = r"(?<=\[)[0-9,]*(?=\])"
            new = draw(st.sampled_from(["", "0", "1,1", "-1", "4294967296,4294967296", ",".join(["1"] * 70),
                                        "2305843009213693952"]))
        else:
            lines = text.split("\n")
            i = draw(st.integers(0, len(lines) - 1))
            j = draw(st.integers(0, len(lines) - 1))
            lines[i] = lines[j]
            text = "\n".join(lines)
            continue
        ms = list(re.finditer(pat, text))
        if not ms:
            continue
        m = ms[draw(st.integers(0, len(ms) - 1))]
        if new is None:
            new = f"({m.group(1)}, {m.group(1)}"  # one operand more
        text = text[:m.start()] + new + text[m.end():]
    return text, original


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                  HealthCheck.filter_too_much])
@given(hostile_module())
def test_fuzz_every_command_fails_only_with_located_errors(case):
    from hlo_interp import graph
    from hlo_interp.cli_run import _random_args, verify_for_run
    from hlo_interp.evaluator import compile as build
    from hlo_interp.files import InputError
    text, original = case
    try:
        mods = hlo_interp.parse_all(text, "fuzz.hlo")
    except hlo_interp.HloError as e:
        assert e.render().startswith("fuzz.hlo")
        return
    m = mods[0]
    steps = [
        lambda: hlo_interp.parse_all(hlo_interp.format_text(text, "fuzz.hlo")),            # fmt
        lambda: hlo_interp.check(m),                                                        # check
        lambda: hlo_interp.module_info(m).to_json(),                                        # info
        lambda: hlo_interp.diff_modules(m, hlo_interp.parse(original)).to_text(),           # diff
        lambda: graph.graph_to_dot(graph.build(m)),                                         # graph
    ]

    def run():                                                                              # hlo-run
        verify_for_run(m)
        exe = build(m, max_bytes=64 << 20, max_iterations=2000)
        exe(*_random_args(exe.params, np.random.default_rng(0), 64 << 20))
    for step in steps + [run]:
        try:
            step()
        except (hlo_interp.HloError, InputError):
            pass


def test_fuzz_finding_operand_layout_constraints_on_a_non_custom_call():
    # tools/fuzz_robust.py (seed 2, mutant 3013): a custom-call became a tuple, its attributes kept
    text = (ROOT / "tests/data/robust_fuzz_olc_on_tuple.hlo").read_text()
    findings = hlo_interp.check(hlo_interp.parse(text))
    assert findings and all(f.code != "E000" for f in findings), [f.render() for f in findings]


def test_fuzz_finding_info_on_a_convolution_whose_kernel_disagrees_with_its_window(tmp_path):
    # tools/fuzz_robust.py (seed 2, mutant 18698): kernel f32[100000000,3,1,4], window 3x3: info
    # allocated one entry per kernel tap (763 MB)
    p = ROOT / "tests/data/robust_fuzz_conv_kernel_dims.hlo"
    r = run("info", p, mem_gb=1)
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr
    assert run("check", p).returncode == 1
