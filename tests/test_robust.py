"""Untrusted dumps (issue 12): every command, given a hostile input, ends with a located error or a
one-line message and exit 0/1/2 (141 for a closed pipe): no traceback, no runaway memory or time, no
wrong answer, nothing half-written.  Each test uses the exact input the issue describes."""
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
    ("f32[9223372036854775808]", "dimensions overflow"),
    ("f32[4294967296,4294967296]", "dimensions overflow"),
    ("f32[2305843009213693952]", "shape size may overflow int64"),  # 2^61 elements, 2^63 bytes
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
    (d / "module.pb").write_bytes(b"\x0a\x03abc")  # a dump of protos only
    (d / "notes.txt").write_text("buffer assignment report\n")
    r = run("check", d)
    assert r.returncode == 2 and "no HLO module found" in r.stderr, r.stderr
    (d / "m.hlo").write_text(one_line("ROOT p = f32[] parameter(0)"))
    assert run("check", d).returncode == 0
