"""The `hlo` command, run as a user would (a subprocess), with its exit codes."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "samples"
SAMPLE = SAMPLES / "mlp.after_optimizations.hlo"
BAD = "HloModule m\nENTRY e {\n  p = f32[4] parameter(0)\n  ROOT a = f32[4] add(p p)\n}\n"


def hlo(*args, input=None, cwd=None, env=None):
    e = dict(os.environ)
    e.pop("FORCE_COLOR", None)
    e.update(env or {})
    return subprocess.run([sys.executable, "-m", "hlo_interp", *args], input=input, capture_output=True,
                          text=True, cwd=cwd, env=e)


def test_fmt_prints_xla_printed_text_unchanged():
    r = hlo("fmt", str(SAMPLE))
    assert r.returncode == 0, r.stderr
    assert r.stdout == SAMPLE.read_text()


def test_fmt_stdin_and_check():
    before = (ROOT / "samples" / "mlp.before_optimizations.hlo").read_text()
    r = hlo("fmt", "-", input=before)
    assert r.returncode == 0
    assert "ENTRY %main" in r.stdout and r.stdout != before
    r2 = hlo("fmt", "--check", "-", input=r.stdout)
    assert r2.returncode == 0
    r3 = hlo("fmt", "--check", "-", input=before)
    assert r3.returncode == 1
    assert "not formatted" in r3.stderr


def test_fmt_strip_options():
    r = hlo("fmt", "--strip-metadata", "--strip-backend-config", str(SAMPLE))
    assert r.returncode == 0
    assert "metadata=" not in r.stdout and "backend_config=" not in r.stdout
    assert "StackFrames" not in r.stdout


def test_fmt_syntax_error_is_located_and_exit_2():
    r = hlo("fmt", "-", input=BAD)
    assert r.returncode == 2
    assert r.stderr.startswith("<stdin>:4:25: error: ")
    assert "Traceback" not in r.stderr
    assert r.stderr.splitlines()[2].strip() == "^"


def test_fmt_in_place_is_atomic_and_idempotent(tmp_path):
    f = tmp_path / "m.hlo"
    f.write_text((ROOT / "samples" / "mlp.before_optimizations.hlo").read_text())
    assert hlo("fmt", "-i", str(f)).returncode == 0
    first = f.read_text()
    assert hlo("fmt", "--check", str(f)).returncode == 0
    assert hlo("fmt", "-i", str(f)).returncode == 0
    assert f.read_text() == first
    assert [p.name for p in tmp_path.iterdir()] == ["m.hlo"]  # no temporary files left


def test_fmt_in_place_leaves_bad_file_untouched(tmp_path):
    f = tmp_path / "bad.hlo"
    f.write_text(BAD)
    r = hlo("fmt", "-i", str(f))
    assert r.returncode == 2
    assert f.read_text() == BAD


def test_usage_errors_exit_2(tmp_path):
    assert hlo("fmt").returncode == 2
    assert hlo("fmt", str(SAMPLE), str(SAMPLE)).returncode == 2  # several files need --check/-i
    assert hlo("fmt", "-i", "-").returncode == 2
    r = hlo("fmt", str(tmp_path / "missing.hlo"))
    assert r.returncode == 2 and "no such file" in r.stderr
    binary = tmp_path / "b.hlo"
    binary.write_bytes(b"\xff\xfe\x00")
    r = hlo("fmt", str(binary))
    assert r.returncode == 2 and "not a text file" in r.stderr


def test_no_color_when_not_a_terminal_and_with_NO_COLOR():
    r = hlo("fmt", str(SAMPLE), env={"NO_COLOR": "1"})
    assert "\x1b[" not in r.stdout
    r = hlo("fmt", "--color", "always", str(SAMPLE))
    assert "\x1b[" in r.stdout
    r = hlo("fmt", "--color", "always", str(SAMPLE), env={"NO_COLOR": "1"})
    assert "\x1b[" in r.stdout  # an explicit --color always wins


def test_check_directory_and_json(tmp_path):
    (tmp_path / "good.hlo").write_text(SAMPLE.read_text())
    (tmp_path / "bad.txt").write_text(BAD)
    (tmp_path / "odd.hlo").write_text(
        "HloModule m\nENTRY e {\n  p = f32[4]{0} parameter(0)\n  ROOT a = f32[4]{0} frobnicate(p), wibble=1\n}\n")
    r = hlo("check", "--format", "json", str(tmp_path))
    assert r.returncode == 1
    data = json.loads(r.stdout)
    assert data["files"] == 3
    msgs = sorted((Path(f["file"]).name, f["line"], f["code"]) for f in data["findings"])
    assert msgs == [("bad.txt", 4, "E001"), ("odd.hlo", 4, "E100"), ("odd.hlo", 4, "E104")]
    assert hlo("check", str(tmp_path / "good.hlo")).returncode == 0


def test_help_explains():
    r = hlo("--help")
    assert r.returncode == 0 and "fmt" in r.stdout and "Exit status" in r.stdout
    r = hlo("fmt", "--help")
    assert "--strip-metadata" in r.stdout and "Examples" in r.stdout


def test_hlo_run_subcommand_runs_the_sample_like_xla():
    r = hlo("run", str(SAMPLES / "mlp.before_optimizations.hlo"), "--inputs", str(SAMPLES / "mlp.inputs.npz"),
            "--compare", str(SAMPLES / "mlp.expected.npz"), "--print", "none")
    assert r.returncode == 0, r.stderr
    assert "ok" in r.stdout + r.stderr


# --------------------------------------------------------------------------------------------------
# Closed pipes, several modules in one file, control characters in excerpts

_PIPE_MODULE = "HloModule s\nENTRY e {\n  ROOT p = f32[4] parameter(0)\n}\n"


@pytest.mark.parametrize("argv", [
    ["-m", "hlo_interp", "fmt", "M"],
    ["-m", "hlo_interp", "info", "M"],
    ["-m", "hlo_interp", "graph", "M"],
    ["-m", "hlo_interp", "check", "--format", "json", "M"],
    ["-m", "hlo_interp", "diff", "M", "SAMPLE"],
    ["-c", "from hlo_interp.cli_run import main; main()", "M", "--random-inputs", "--print", "full"],
], ids=["fmt", "info", "graph", "check", "diff", "hlo-run"])
def test_closed_pipe_ends_quietly_with_141(tmp_path, argv):
    """`hlo ... | head`: the reader has gone before we write; status 141 (as if killed by SIGPIPE),
    nothing on stderr (click alone would exit 1, which means "findings" here; rich would exit 1)."""
    m = tmp_path / "m.hlo"
    m.write_text(_PIPE_MODULE)
    argv = [str(m) if a == "M" else str(SAMPLE) if a == "SAMPLE" else a for a in argv]
    p = subprocess.Popen([sys.executable, *argv], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    p.stdout.close()
    err = p.stderr.read()
    assert p.wait() == 141, err
    assert err == b""


def test_several_modules_where_one_is_expected(tmp_path):
    two = tmp_path / "two.hlo"
    two.write_text(_PIPE_MODULE + "// -----\n" + _PIPE_MODULE.replace("HloModule s", "HloModule t"))
    for args in (["info", str(two)], ["graph", str(two)], ["diff", str(two), str(two)]):
        r = hlo(*args)
        assert r.returncode == 2, args
        assert r.stderr.startswith(f"{two}:5:1: error: this text holds 2 modules separated by '// -----'")
        assert "// -----\n  ^" in r.stderr
    # the commands that read every module still do
    assert hlo("check", str(two)).returncode == 0
    r = hlo("fmt", str(two))
    assert r.returncode == 0 and r.stdout.count("HloModule") == 2 and "\n// -----\n" in r.stdout
    # a syntax error inside one of them is reported as itself
    bad = tmp_path / "bad.hlo"
    bad.write_text(_PIPE_MODULE + "// -----\n" + BAD)
    r = hlo("info", str(bad))
    assert r.returncode == 2 and "holds" not in r.stderr and "expected" in r.stderr


def test_control_characters_in_excerpt_are_not_printed_raw(tmp_path):
    f = tmp_path / "nul.hlo"
    f.write_bytes(b"HloModule m\x00\x1b[31m\nENTRY e {\n}\n")
    r = hlo("fmt", str(f))
    assert r.returncode == 2
    assert r.stderr.splitlines() == [f"{f}:1:12: error: unexpected character U+0000",
                                     "  HloModule m\ufffd\ufffd[31m", "             ^"]


def test_every_subcommand_has_short_help():
    for cmd in ("fmt", "check", "diff", "info", "graph"):
        r = hlo(cmd, "-h")
        assert r.returncode == 0 and r.stdout.startswith(f"Usage: python -m hlo_interp {cmd}"), (cmd, r.stderr)


@pytest.mark.parametrize("argv", [["-m", "hlo_interp", "--help"], ["-m", "hlo_interp", "--version"],
                                  ["-c", "from hlo_interp.cli_run import main; main()", "--help"]],
                         ids=["hlo-help", "hlo-version", "hlo-run-help"])
def test_closed_pipe_during_help_is_141_too(argv):
    """--help and --version print while the arguments are parsed, before the command runs."""
    p = subprocess.Popen([sys.executable, *argv], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    p.stdout.close()
    err = p.stderr.read()
    assert p.wait() == 141, err
    assert err == b""


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
@pytest.mark.parametrize("args", [["fmt", "M"], ["info", "M"], ["check", "--format", "json", "M"],
                                  ["diff", "M", "SAMPLE"], ["--help"]])
def test_full_disk_on_stdout_is_one_line_and_exit_2(tmp_path, args):
    m = tmp_path / "m.hlo"
    m.write_text(_PIPE_MODULE)
    args = [str(m) if a == "M" else str(SAMPLE) if a == "SAMPLE" else a for a in args]
    with open("/dev/full", "w") as full:
        r = subprocess.run([sys.executable, "-m", "hlo_interp", *args], stdout=full, stderr=subprocess.PIPE,
                           text=True)
    assert r.returncode == 2
    assert r.stderr == "error: cannot write the output: No space left on device\n"


def test_fmt_in_place_reports_and_diff_writes_nothing(tmp_path):
    before = (ROOT / "samples" / "mlp.before_optimizations.hlo").read_text()
    a, b = tmp_path / "a.hlo", tmp_path / "b.hlo"
    a.write_text(before)
    b.write_text(SAMPLE.read_text())  # already formatted
    # --diff: a unified diff on stdout, nothing written, exit 0 (1 with --check, like black)
    r = hlo("fmt", "--diff", str(a), str(b))
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0] == f"--- {a}\t(original)" and lines[1] == f"+++ {a}\t(formatted)"
    assert "-relu.1 {" in lines and "+%relu.1 (Arg_0.1: f32[8,32]) -> f32[8,32] {" in lines
    assert str(b) not in r.stdout and a.read_text() == before
    import difflib
    assert r.stdout == "".join(difflib.unified_diff(before.splitlines(True), hlo("fmt", str(a)).stdout.splitlines(True),
                                                    f"{a}\t(original)", f"{a}\t(formatted)"))
    r = hlo("fmt", "--diff", "--check", str(a), str(b))
    assert r.returncode == 1 and f"{a}: not formatted" in r.stderr and r.stdout.startswith("--- ")
    assert hlo("fmt", "--diff", "-", input=before).stdout.startswith("--- <stdin>\t(original)")
    assert hlo("fmt", "--diff", "-i", str(a)).returncode == 2
    # -i: "reformatted X" per rewritten file on stderr, and a count
    r = hlo("fmt", "-i", str(a), str(b))
    assert r.returncode == 0 and r.stdout == ""
    assert r.stderr.splitlines() == [f"reformatted {a}", "1 file reformatted, 1 left unchanged"]
    assert a.read_text() == hlo("fmt", "-", input=before).stdout
    r = hlo("fmt", "-i", str(a), str(b))
    assert r.stderr.splitlines() == ["0 files reformatted, 2 left unchanged"]


def test_pre_commit_fmt_hook_rewrites_like_black(tmp_path):
    import re
    text = (ROOT / ".pre-commit-hooks.yaml").read_text()
    hooks = {}
    for block in text.split("\n- ")[1:]:
        h = dict(re.findall(r"^\s*(\w+): (.*)$", block, re.M))
        hooks[h["id"]] = h
    assert hooks["hlo-fmt"]["entry"] == "hlo fmt --in-place"
    assert hooks["hlo-fmt-check"]["entry"] == "hlo fmt --check"
    # what pre-commit does: the entry with the staged files appended; it fails the run when files changed
    f = tmp_path / "m.before_optimizations.txt"
    f.write_text((ROOT / "samples" / "mlp.before_optimizations.hlo").read_text())
    assert re.search(hooks["hlo-fmt"]["files"].strip("'"), f.name)
    before = f.read_text()
    assert hlo(*hooks["hlo-fmt-check"]["entry"].split()[1:], str(f)).returncode == 1
    r = hlo(*hooks["hlo-fmt"]["entry"].split()[1:], str(f))
    assert r.returncode == 0 and r.stderr.startswith(f"reformatted {f}\n")
    assert f.read_text() != before and f.read_text() == hlo("fmt", "-", input=before).stdout
    assert hlo(*hooks["hlo-fmt-check"]["entry"].split()[1:], str(f)).returncode == 0
