"""The module cache (hlo_interp/cache.py): hlo-run reuses the parsed, verified module and its compiled
plans of a text it ran before, with the same results and the same messages; damaged entries are
ignored and rebuilt; the folder is bounded, private, and off when asked."""
from __future__ import annotations

import os
import pickle
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

import hlo_interp
from hlo_interp import cache as C
from hlo_interp import types
from hlo_interp.cli_run import main
from hlo_interp.evaluator import compile as build

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "samples" / "mlp.before_optimizations.hlo"
INPUTS = ROOT / "samples" / "mlp.inputs.npz"
EXPECTED = ROOT / "samples" / "mlp.expected.npz"

# A module the verifier rejects (an add of f32[2] and f32[3]), located at line 4, column 7.
INVALID = """HloModule bad

ENTRY main {
  a = f32[2] parameter(0)
  b = f32[3] parameter(1)
  ROOT c = f32[2] add(a, b)
}
"""


@pytest.fixture
def cache_home(tmp_path, monkeypatch):
    home = tmp_path / "xdg"
    monkeypatch.setenv("XDG_CACHE_HOME", str(home))
    monkeypatch.delenv(C.ENV, raising=False)
    return home / "hlo-interp" / "modules"


def run(*args):
    r = CliRunner().invoke(main, [str(a) for a in args], env={"NO_COLOR": "1"}, catch_exceptions=False)
    return r


def entries(d: Path, kind: str = "pickle") -> list:
    return sorted(d.glob(f"*.{kind}")) if d.exists() else []


def no_parsing(monkeypatch):
    """Make parsing fail loudly: a run that still works read its module from the cache."""
    import hlo_interp.dumps

    def refuse(*a, **k):
        raise AssertionError("parsed although the module is in the cache")
    monkeypatch.setattr(hlo_interp.dumps, "load_path", refuse)


def test_second_run_reads_the_cache_and_gives_the_same_result(cache_home, tmp_path, monkeypatch):
    hlo = tmp_path / "mlp.hlo"
    hlo.write_text(SAMPLE.read_text())
    r1 = run(hlo, "-i", INPUTS, "-o", tmp_path / "a.npz", "--compare", EXPECTED, "--cache")
    assert r1.exit_code == 0, r1.output
    assert len(entries(cache_home)) == 1 and len(entries(cache_home, "plans")) == 1
    no_parsing(monkeypatch)
    r2 = run(hlo, "-i", INPUTS, "-o", tmp_path / "b.npz", "--compare", EXPECTED, "--cache")
    assert r2.exit_code == 0, r2.output
    assert r2.stdout == r1.stdout
    a, b = np.load(tmp_path / "a.npz"), np.load(tmp_path / "b.npz")
    assert a.files == b.files and all(np.array_equal(a[k], b[k]) for k in a.files)
    assert len(entries(cache_home)) == 1


def test_small_texts_are_not_cached_unless_asked(cache_home, tmp_path, monkeypatch):
    assert SAMPLE.stat().st_size < C.MIN_BYTES
    assert run(SAMPLE, "-i", INPUTS, "--print", "none").exit_code == 0
    assert entries(cache_home) == []
    monkeypatch.setenv(C.ENV, "1")
    assert run(SAMPLE, "-i", INPUTS, "--print", "none").exit_code == 0
    assert len(entries(cache_home)) == 1


def test_off_by_option_or_environment(cache_home, tmp_path, monkeypatch):
    assert run(SAMPLE, "-i", INPUTS, "--print", "none", "--no-cache").exit_code == 0
    monkeypatch.setenv(C.ENV, "0")
    assert run(SAMPLE, "-i", INPUTS, "--print", "none").exit_code == 0
    assert entries(cache_home) == []
    assert not C.wanted(10 * C.MIN_BYTES) and C.wanted(1, True)
    monkeypatch.delenv(C.ENV)
    assert C.wanted(C.MIN_BYTES) and not C.wanted(C.MIN_BYTES - 1) and not C.wanted(C.MIN_BYTES, False)


@pytest.mark.parametrize("damage", ["garbage", "truncated", "empty", "other key", "foreign class"])
def test_a_damaged_entry_is_ignored_and_rebuilt(cache_home, tmp_path, damage):
    hlo = tmp_path / "mlp.hlo"
    hlo.write_text(SAMPLE.read_text())
    assert run(hlo, "-i", INPUTS, "--print", "none", "--cache").exit_code == 0
    [entry] = entries(cache_home)
    good = entry.read_bytes()
    if damage == "garbage":
        entry.write_bytes(os.urandom(len(good)))
    elif damage == "truncated":
        entry.write_bytes(good[:len(good) // 2])
    elif damage == "empty":
        entry.write_bytes(b"")
    elif damage == "other key":
        entry.write_bytes(good.replace(entry.stem.encode(), b"0" * 64, 1))
    else:  # a pickle that would call something outside the package's own classes
        head = good[:good.index(b"\n", len(b"hlo-interp module cache 1\n")) + 1]
        entry.write_bytes(head + pickle.dumps((os.system, False)))  # a reference to os.system
    (cache_home / f"{entry.stem}.plans").write_bytes(b"not marshal data")
    r = run(hlo, "-i", INPUTS, "--compare", EXPECTED, "--cache")
    assert r.exit_code == 0, r.output
    assert entry.read_bytes()[:len(good) // 2] == good[:len(good) // 2]  # rewritten whole
    cache = C.ModuleCache(cache_home)
    assert cache.get(entry.stem) is not None and cache.get_plans(entry.stem)


def test_the_key_covers_text_name_and_package():
    text = SAMPLE.read_bytes()
    k = C.ModuleCache.key(text, "a.hlo")
    assert k == C.ModuleCache.key(text, "a.hlo")
    assert k != C.ModuleCache.key(text + b" ", "a.hlo")
    assert k != C.ModuleCache.key(text, "b.hlo")  # messages name the file
    saved = C._CODE_STAMP
    try:
        C._CODE_STAMP = b"another build of the package"
        assert k != C.ModuleCache.key(text, "a.hlo")
    finally:
        C._CODE_STAMP = saved


def test_an_invalid_module_is_refused_with_the_same_message_from_the_cache(cache_home, tmp_path):
    bad = tmp_path / "bad.hlo"
    bad.write_text(INVALID)
    a, b = np.zeros(2, np.float32), np.zeros(3, np.float32)
    np.savez(tmp_path / "in.npz", arg0=a, arg1=b)
    first = run(bad, "-i", tmp_path / "in.npz", "--cache")
    assert first.exit_code == 2 and "bad.hlo:6:" in first.stderr
    assert entries(cache_home) == []  # rejected modules are not kept
    # --no-verify keeps it (unverified); a verifying run still refuses it, with the same message
    run(bad, "-i", tmp_path / "in.npz", "--cache", "--no-verify")
    assert len(entries(cache_home)) == 1
    again = run(bad, "-i", tmp_path / "in.npz", "--cache")
    assert again.exit_code == 2 and again.stderr == first.stderr


def test_the_folder_stays_under_its_bound(tmp_path):
    cache = C.ModuleCache(tmp_path / "c", max_bytes=1)
    mod = hlo_interp.parse(SAMPLE.read_text())
    assert cache.put("a" * 64, mod, True)
    assert cache.put("b" * 64, mod, True)  # over the bound: the older entry goes, the newest stays
    assert [p.name for p in entries(tmp_path / "c")] == ["b" * 64 + ".pickle"]
    (tmp_path / "c" / ".entry.x.tmp").write_bytes(b"left by a writer that died")
    os.utime(tmp_path / "c" / ".entry.x.tmp", (0, 0))
    cache.trim()
    assert not (tmp_path / "c" / ".entry.x.tmp").exists()


def test_a_folder_others_may_write_to_is_not_used(tmp_path):
    d = tmp_path / "shared"
    d.mkdir(mode=0o777)
    os.chmod(d, 0o777)
    cache = C.ModuleCache(d)
    assert not cache.put("a" * 64, hlo_interp.parse(SAMPLE.read_text()), True)
    assert entries(d) == []


def test_round_trip_keeps_the_module_and_its_element_type_objects(tmp_path):
    paths = sorted((ROOT / "tests" / "corpus").rglob("*.hlo"))[::25] + [SAMPLE]
    cache = C.ModuleCache(tmp_path / "c")
    for p in paths:
        try:
            mod = hlo_interp.parse(p.read_text(), str(p))
        except hlo_interp.HloError:
            continue
        key = C.ModuleCache.key(p.read_bytes(), str(p))
        assert cache.put(key, mod, False), p
        back, verified = cache.get(key)
        assert verified is False
        assert back == mod and hlo_interp.to_text(back) == hlo_interp.to_text(mod), p
        for comp in back.computations:
            for ins in comp.instructions:
                et = getattr(ins.shape, "element_type", None)
                if et is not None:
                    assert et is types.primitive_type(et.name), p


def test_compiled_plan_code_is_reused():
    mod = hlo_interp.parse(SAMPLE.read_text())
    z = np.load(INPUTS)
    args = [z[k] for k in sorted(z.files, key=lambda k: int(k[3:]))]
    code: dict = {}
    first = build(mod, plan_code=code)
    assert code and all(type(c).__name__ == "code" for c in code.values())
    import marshal
    stored = marshal.loads(marshal.dumps(code))
    again = build(hlo_interp.parse(SAMPLE.read_text()), plan_code=stored)
    assert len(stored) == len(code)  # nothing compiled anew
    assert again.ctx.plan_sources == first.ctx.plan_sources
    for x, y in zip(first(*args), again(*args)):
        np.testing.assert_array_equal(x, y)


def test_a_process_under_a_memory_limit_reads_and_writes_the_cache(cache_home, tmp_path):
    """The whole process, as a user runs it, in 1 GB of address space: looking a text up allocates what
    the text needs, not the 2 GiB a module may have at most; the second run is a hit."""
    import resource
    import subprocess
    import sys

    def limit():
        resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))
    env = dict(os.environ, PYTHONPATH=str(ROOT), XDG_CACHE_HOME=str(cache_home.parent.parent), NO_COLOR="1")
    cmd = [sys.executable, "-m", "hlo_interp.cli_run", str(SAMPLE), "-i", str(INPUTS), "--compare", str(EXPECTED),
           "--cache"]
    for _ in range(2):
        r = subprocess.run(cmd, env=env, capture_output=True, text=True, preexec_fn=limit, timeout=120)
        assert r.returncode == 0, r.stderr
        assert "ok" in r.stdout and len(entries(cache_home)) == 1


# --------------------------------------------------------------------------------------------------
# hlo check: the findings of a text it checked before are read back (KEY.check)

# A module with an error (E101 at line 6), a warning-free rest and a note (no ROOT marked: N002).
FINDINGS = """HloModule findings

ENTRY main {
  a = f32[2] parameter(0)
  b = f32[2] parameter(1)
  c = f32[3] add(a, b)
  d = f32[2] multiply(a, b)
}
"""


def check(*args, env=None):
    from hlo_interp.cli import main as hlo
    return CliRunner().invoke(hlo, ["check", *[str(a) for a in args]], env={"NO_COLOR": "1", **(env or {})},
                              catch_exceptions=False)


def no_parsing_at_all(monkeypatch):
    """Make every parse fail loudly: a check that still works read its findings (or module) from the cache."""
    import hlo_interp.frontend

    def refuse(*a, **k):
        raise AssertionError("parsed although the cache holds the text's findings or module")
    monkeypatch.setattr(hlo_interp.frontend, "parse_all_text", refuse)
    monkeypatch.setattr(hlo_interp.frontend, "parse_text", refuse)


@pytest.mark.parametrize("args", [(), ("--format", "json"), ("--format", "github"), ("--ignore", "E101"),
                                  ("--ignore", "shape-mismatch,N002", "--strict"), ("--no-notes",)])
def test_check_reads_its_findings_back_with_the_same_output(cache_home, tmp_path, monkeypatch, args):
    f = tmp_path / "m.hlo"
    f.write_text(FINDINGS)
    fresh = check(f, "--no-cache", *args)
    assert check(f, "--cache").exit_code == 1  # (findings of the whole text kept, nothing ignored)
    assert len(entries(cache_home, "check")) == 1 and entries(cache_home) == []  # findings only: small
    no_parsing_at_all(monkeypatch)
    again = check(f, "--cache", *args)
    assert (again.exit_code, again.stdout, again.stderr) == (fresh.exit_code, fresh.stdout, fresh.stderr)
    assert ("E101" in fresh.stdout) == ("--ignore" not in args)


def test_check_of_a_changed_text_is_not_read_from_the_cache(cache_home, tmp_path):
    f = tmp_path / "m.hlo"
    f.write_text(FINDINGS)
    assert check(f, "--cache").exit_code == 1
    f.write_text(FINDINGS.replace("c = f32[3]", "c = f32[2]"))
    r = check(f, "--cache")
    assert "E101" not in r.stdout and len(entries(cache_home, "check")) == 2


def test_check_uses_a_module_hlo_run_kept(cache_home, tmp_path, monkeypatch):
    hlo = tmp_path / "mlp.hlo"
    hlo.write_text(SAMPLE.read_text())
    fresh = check(hlo, "--no-cache", "--format", "json")
    assert run(hlo, "-i", INPUTS, "--print", "none", "--cache").exit_code == 0
    assert len(entries(cache_home)) == 1 and entries(cache_home, "check") == []
    no_parsing_at_all(monkeypatch)
    r = check(hlo, "--cache", "--format", "json")
    assert (r.exit_code, r.stdout) == (fresh.exit_code, fresh.stdout)
    assert len(entries(cache_home, "check")) == 1


def test_check_cache_off_small_texts_and_syntax_only(cache_home, tmp_path, monkeypatch):
    f = tmp_path / "m.hlo"
    f.write_text(FINDINGS)
    assert check(f).exit_code == 1 and check(f, "--syntax-only", "--cache").exit_code == 0  # small; parse only
    assert check(f, "--no-cache").exit_code == 1
    monkeypatch.setenv(C.ENV, "0")
    assert check(f).exit_code == 1
    assert entries(cache_home, "check") == []
    monkeypatch.setenv(C.ENV, "1")
    assert check(f).exit_code == 1 and len(entries(cache_home, "check")) == 1


@pytest.mark.parametrize("damage", ["garbage", "empty", "other key", "not findings"])
def test_a_damaged_check_entry_is_ignored_and_rewritten(cache_home, tmp_path, damage):
    import marshal
    f = tmp_path / "m.hlo"
    f.write_text(FINDINGS)
    first = check(f, "--cache")
    [entry] = entries(cache_home, "check")
    good = entry.read_bytes()
    head = good[:good.index(b"\n", len(b"hlo-interp module cache 1\n")) + 1]
    entry.write_bytes({"garbage": os.urandom(len(good)), "empty": b"",
                       "other key": good.replace(entry.stem.encode(), b"0" * 64, 1),
                       "not findings": head + marshal.dumps([("E101", "error")])}[damage])
    again = check(f, "--cache")
    assert (again.exit_code, again.stdout) == (first.exit_code, first.stdout)
    assert entry.read_bytes() == good


# --------------------------------------------------------------------------------------------------
# hlo info: its reports on a text are kept per set of options (KEY.info)

def info(*args):
    from hlo_interp.cli import main as hlo
    return CliRunner().invoke(hlo, ["info", *[str(a) for a in args]], env={"NO_COLOR": "1"},
                              catch_exceptions=False)


@pytest.mark.parametrize("args", [(), ("--json",), ("--json", "--top", "0"), ("--top", "3"),
                                  ("-c", "region_0.2"), ("--json", "-c", "relu.1")])
def test_info_prints_its_report_back_with_the_same_output(cache_home, tmp_path, monkeypatch, args):
    f = tmp_path / "mlp.hlo"
    f.write_text(SAMPLE.read_text())
    fresh = info(f, "--no-cache", *args)
    assert fresh.exit_code == 0, fresh.output
    assert entries(cache_home, "info") == []
    first = info(f, "--cache", *args)
    info(f, "--cache", "--top", "1")  # another report kept beside it
    assert len(entries(cache_home, "info")) == 1
    no_parsing_at_all(monkeypatch)
    import hlo_interp.dumps
    monkeypatch.setattr(hlo_interp.dumps, "load_path", lambda *a, **k: pytest.fail("loaded a module"))
    again = info(f, "--cache", *args)
    assert (first.exit_code, first.stdout) == (again.exit_code, again.stdout) == (fresh.exit_code, fresh.stdout)


def test_info_of_a_changed_text_or_a_damaged_entry_is_made_again(cache_home, tmp_path):
    import marshal
    f = tmp_path / "mlp.hlo"
    f.write_text(SAMPLE.read_text())
    first = info(f, "--cache", "--json")
    [entry] = entries(cache_home, "info")
    head = entry.read_bytes()[:len(b"hlo-interp module cache 1\n") + 65]
    entry.write_bytes(head + marshal.dumps({"json 10 None": 7}))  # not a report
    assert info(f, "--cache", "--json").stdout == first.stdout
    f.write_text(SAMPLE.read_text().replace("HloModule ", "HloModule renamed_", 1))
    other = info(f, "--cache", "--json")
    assert other.exit_code == 0 and '"module": "renamed_' in other.stdout
    assert len(entries(cache_home, "info")) == 2


def test_info_errors_and_small_texts_are_not_kept(cache_home, tmp_path, monkeypatch):
    bad = tmp_path / "bad.hlo"
    bad.write_text("HloModule bad\nENTRY e {\n  ROOT a = f32[2] add(\n}\n")
    assert info(bad, "--cache").exit_code == 2 and entries(cache_home, "info") == []
    assert info(SAMPLE).exit_code == 0 and entries(cache_home, "info") == []  # below 256 KiB
    monkeypatch.setenv(C.ENV, "1")
    assert info(SAMPLE).exit_code == 0 and len(entries(cache_home, "info")) == 1


def test_check_reads_the_cache_policy_without_importing_the_cache():
    """`hlo check` of a small file does not import hlo_interp.cache (start-up time): its own copy of the
    size bound and the variable's name are the cache's."""
    from hlo_interp import cli
    assert (cli._CACHE_MIN_BYTES, cli._CACHE_ENV) == (C.MIN_BYTES, C.ENV)
