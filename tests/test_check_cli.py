"""`hlo check`, run as a user (or a CI job) would: formats, exit codes, parallel runs, shards, stdin."""
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "tests" / "corpus"
BAD = "HloModule m\nENTRY e {\n  p = f32[4] parameter(0)\n  ROOT n = f32[4] negate(p, p)\n}\n"
SYNTAX = "HloModule m\nENTRY e {\n  p = f32[4] parameter(0)\n  ROOT a = f32[4] add(p p)\n}\n"
WARN = "HloModule m\nENTRY e (p: s32[4]) -> f32[4] {\n  p = f32[4] parameter(0)\n  ROOT n = f32[4] negate(p)\n}\n"
ELIDED = CORPUS / "jax" / "constant_large.after.hlo"


def hlo(*args, input=None, cwd=None):
    env = dict(os.environ)
    env.pop("FORCE_COLOR", None)
    env["NO_COLOR"] = "1"
    return subprocess.run([sys.executable, "-m", "hlo_interp", "check", *map(str, args)], input=input,
                          capture_output=True, text=True, cwd=cwd or ROOT, env=env)


@pytest.fixture()
def dump_dir(tmp_path):
    """A small XLA-dump-like directory: 12 real modules (some nested), one invalid, one non-HLO report."""
    d = tmp_path / "dump"
    (d / "sub").mkdir(parents=True)
    files = sorted((CORPUS / "jax").glob("binary_*.before.hlo"))[:12]
    for i, f in enumerate(files):
        target = d / ("sub" if i % 3 == 0 else ".") / f"module_{i:04d}.{f.stem}.txt"
        shutil.copy(f, target)
    (d / "module_9999.bad.before_optimizations.txt").write_text(BAD)
    (d / "module_0001.jit_f.cpu_after_optimizations-buffer-assignment.txt").write_text(
        "BufferAssignment:\nallocation 0: size 16, parameter 0, shape |f32[4]| at ShapeIndex {}:\n")
    return d


def test_text_format_locates_the_finding(tmp_path):
    f = tmp_path / "m.hlo"
    f.write_text(BAD)
    r = hlo(f)
    assert r.returncode == 1
    assert r.stdout == (f"{f}:4:8: error[E103]: negate expects 1 operand(s), but has 2\n"
                        "    ROOT n = f32[4] negate(p, p)\n"
                        "         ^\n")
    assert r.stderr.strip() == "1 file(s) checked: 1 error(s), 0 warning(s), 0 note(s); 1 file(s) failing"


def test_valid_files_exit_0_and_notes_do_not_fail():
    files = [ELIDED, CORPUS / "jax" / "dot_matmul.before.hlo", CORPUS / "handwritten" / "async_syntax_sugar.hlo"]
    r = hlo(*files)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "note[N001]: constant constant.1 has an elided value {...}" in r.stdout
    assert r.stderr.startswith("3 file(s) checked: 0 error(s), 0 warning(s), 1 note(s)")
    r = hlo("--no-notes", *files)
    assert r.returncode == 0 and r.stdout == ""


def test_json_format(tmp_path):
    (tmp_path / "bad.hlo").write_text(BAD)
    (tmp_path / "syntax.txt").write_text(SYNTAX)
    shutil.copy(ELIDED, tmp_path / "good.hlo")
    r = hlo("--format", "json", tmp_path)
    assert r.returncode == 1
    data = json.loads(r.stdout)
    assert data["files"] == 3
    assert data["summary"] == {"checked": 3, "errors": 2, "warnings": 0, "notes": 1, "unreadable": 0,
                               "skipped": 0, "exit_status": 1}
    got = sorted((Path(f["file"]).name, f["line"], f["column"], f["code"], f["name"], f["severity"])
                 for f in data["findings"])
    assert got == [("bad.hlo", 4, 8, "E103", "operand-count", "error"),
                   ("good.hlo", 36, 3, "N001", "elided-constant", "note"),
                   ("syntax.txt", 4, 25, "E001", "syntax", "error")]
    bad = next(f for f in data["findings"] if f["code"] == "E103")
    assert bad["computation"] == "e" and bad["instruction"] == "n"


def test_github_annotations(tmp_path):
    (tmp_path / "bad.hlo").write_text(BAD)
    shutil.copy(ELIDED, tmp_path / "elided.hlo")
    r = hlo("--format", "github", tmp_path / "bad.hlo", tmp_path / "elided.hlo")
    assert r.returncode == 1
    lines = r.stdout.splitlines()
    assert lines[0] == (f"::error file={tmp_path / 'bad.hlo'},line=4,col=8,title=E103 operand-count::"
                        "negate expects 1 operand(s), but has 2")
    assert lines[1].startswith(f"::notice file={tmp_path / 'elided.hlo'},line=36,col=3,title=N001 elided-constant::")
    assert len(lines) == 2


def test_stdin_and_ignore():
    r = hlo("-", input=BAD)
    assert r.returncode == 1 and r.stdout.startswith("<stdin>:4:8: error[E103]")
    assert hlo("--ignore", "E103", "-", input=BAD).returncode == 0
    assert hlo("--ignore", "N001,operand-count", "-", input=BAD).returncode == 0
    r = hlo("--ignore", "E999", "-", input=BAD)
    assert r.returncode == 2 and "unknown code 'E999'" in r.stderr


def test_unreadable_input_exits_2(tmp_path):
    (tmp_path / "bin.hlo").write_bytes(b"\xff\xfe\x00HloModule")
    r = hlo(tmp_path / "missing.hlo", ELIDED)
    assert r.returncode == 2
    assert "missing.hlo: error: cannot read: No such file or directory" in r.stderr
    assert "1 unreadable" in r.stderr and "note[N001]" in r.stdout  # the other file is still checked
    r = hlo(tmp_path / "bin.hlo")
    assert r.returncode == 2 and "not a text file (invalid UTF-8 at byte 0)" in r.stderr
    r = hlo(tmp_path / "nothing*.hlo")
    assert r.returncode == 2 and "no file matches this pattern" in r.stderr


def test_directory_recursion_parallel_and_skips_reports(dump_dir):
    r1 = hlo("--format", "json", dump_dir)
    r2 = hlo("--format", "json", "-j", "2", dump_dir)
    assert r1.returncode == r2.returncode == 1
    d1, d2 = json.loads(r1.stdout), json.loads(r2.stdout)
    assert d1 == d2  # same findings in the same order, whatever the number of processes
    assert d1["summary"]["checked"] == 13 and d1["summary"]["skipped"] == 1
    assert [Path(f["file"]).name for f in d1["findings"]] == ["module_9999.bad.before_optimizations.txt"]


def test_shards_split_the_sorted_file_list(dump_dir):
    def files(*extra):
        r = hlo("--format", "json", *extra, dump_dir)
        data = json.loads(r.stdout)
        return r.returncode, data["checked"] + data["skipped"]

    rc_all, everything = files()
    assert rc_all == 1 and len(everything) == 14
    parts = [files("--shard", f"{k}/3") for k in (1, 2, 3)]
    assert [len(f) for _, f in parts] == [5, 5, 4]
    ordered = sorted(everything)
    for k, (_, got) in enumerate(parts):
        assert sorted(got) == ordered[k::3]  # round-robin over the sorted list
    assert sorted(rc for rc, _ in parts) == [0, 0, 1]  # the bad file fails exactly one shard
    assert files("--shard", "2/3") == parts[1]  # deterministic
    for bad in ("0/3", "4/3", "x"):
        r = hlo("--shard", bad, dump_dir)
        assert r.returncode == 2 and "--shard" in r.stderr


def test_syntax_only_and_strict(tmp_path):
    (tmp_path / "bad.hlo").write_text(BAD)
    (tmp_path / "warn.hlo").write_text(WARN)
    assert hlo("--syntax-only", tmp_path / "bad.hlo").returncode == 0
    r = hlo("--syntax-only", "-", input=SYNTAX)
    assert r.returncode == 1 and "error[E001]: expected '(', ')' or ','" in r.stdout
    r = hlo(tmp_path / "warn.hlo")
    assert r.returncode == 0 and "warning[W201]" in r.stdout
    assert hlo("--strict", tmp_path / "warn.hlo").returncode == 1


def test_glob_patterns(tmp_path):
    for name in ("a.hlo", "b.hlo", "c.txt"):
        (tmp_path / name).write_text(BAD)
    r = hlo("--format", "json", str(tmp_path / "*.hlo"))
    assert sorted(Path(f["file"]).name for f in json.loads(r.stdout)["findings"]) == ["a.hlo", "b.hlo"]


def test_pre_commit_hook_definition():
    import re
    # A minimal reader of this flat YAML list (PyYAML is not a test dependency).
    text = (ROOT / ".pre-commit-hooks.yaml").read_text()
    hooks = []
    for line in text.splitlines():
        m = re.match(r"^(- )?\s*(\w+): (.*)$", line)
        if not m:
            continue
        if m.group(1):
            hooks.append({})
        hooks[-1][m.group(2)] = m.group(3).strip().strip("'")
    hook = next(h for h in hooks if h["id"] == "hlo-check")
    assert hook["entry"].split()[:2] == ["hlo", "check"]
    assert hook["language"] == "python"
    pat = re.compile(hook["files"])
    assert pat.search("dumps/module_0001.jit_f.before_optimizations.txt")
    assert pat.search("model.hlo")
    assert not pat.search("README.md")


def test_a_process_ends_with_all_its_output_as_called_in_python(tmp_path):
    """Run as the `hlo` process, check and info end without the interpreter's teardown (files.end_process);
    what they write, past a pipe's buffer, and their exit status are those of the same command called
    in Python (click's CliRunner, which ends as usual)."""
    from click.testing import CliRunner

    from hlo_interp.cli import main
    lines = ["HloModule many", "", "ENTRY e {", "  p = f32[4] parameter(0)"]
    lines += [f"  n{i} = f32[5] negate(p)" for i in range(3000)]  # 3000 E101 findings
    lines += ["  ROOT r = f32[4] negate(p)", "}", ""]
    f = tmp_path / "many.hlo"
    f.write_text("\n".join(lines))
    for args in (["check", f], ["check", "--format", "json", f], ["check", "-j", "2", f, CORPUS / "jax"],
                 ["info", "--json", "--top", "0", f], ["info", f]):
        args = [str(a) for a in args]
        env = dict(os.environ, NO_COLOR="1", HLO_INTERP_CACHE="0")
        env.pop("FORCE_COLOR", None)
        p = subprocess.run([sys.executable, "-m", "hlo_interp", *args], capture_output=True, text=True,
                           cwd=ROOT, env=env)
        r = CliRunner().invoke(main, args, env={"NO_COLOR": "1", "HLO_INTERP_CACHE": "0"})
        assert (p.returncode, p.stdout) == (r.exit_code, r.stdout), args
        assert len(p.stdout) > 65536 or args[0] == "info" and "--json" not in args, args
