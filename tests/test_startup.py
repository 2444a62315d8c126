"""Start-up: `hlo fmt` and `hlo check` import neither NumPy, ml_dtypes, SciPy, rich, Lark nor
the evaluator; the precomputed LALR table is that of grammar/hlo.lark and parses exactly as Lark's own
analysis; the NumPy-free literal path gives the values and texts of the NumPy path."""
import math
import os
import random
import struct
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import corpus_files

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))

SAMPLE = ROOT / "samples" / "mlp.before_optimizations.hlo"
AFTER = ROOT / "samples" / "mlp.after_optimizations.hlo"
HEAVY = ("numpy", "scipy", "ml_dtypes", "rich", "lark", "hlo_interp.evaluator", "hlo_interp.ops")


def _imported(*args) -> set[str]:
    env = dict(os.environ)
    env.pop("NO_COLOR", None)
    r = subprocess.run([sys.executable, "-X", "importtime", "-m", "hlo_interp", *args], capture_output=True,
                       text=True, env=env, cwd=str(ROOT))
    assert r.returncode in (0, 1), r.stderr[-2000:]
    names = set()
    for line in r.stderr.splitlines():
        if line.startswith("import time:") and line.count("|") == 2:
            name = line.rsplit("|", 1)[1].strip()
            if name != "imported package":
                names.add(name)
    assert "hlo_interp.cli" in names  # the measurement itself works
    return names


@pytest.mark.parametrize("args", [("fmt", str(SAMPLE)), ("fmt", str(AFTER)), ("check", str(SAMPLE)),
                                  ("check", str(AFTER)), ("fmt", "--check", str(SAMPLE), str(AFTER))])
def test_fmt_and_check_import_nothing_heavy(args):
    names = _imported(*args)
    heavy = sorted(n for n in names if n.split(".")[0] in HEAVY or any(n.startswith(h) for h in HEAVY))
    assert heavy == [], f"`hlo {' '.join(args)}` imports {heavy}"


@pytest.mark.parametrize("args", [("check", str(AFTER)), ("info", str(AFTER))])
def test_check_and_info_import_no_file_writers(args):
    """They write nothing and read no .npz: tempfile and zipfile (about 4 ms with what they pull in)
    stay out, also at the end of the process (files.end_process)."""
    names = _imported(*args)
    assert "hlo_interp.files" in names  # (the end of the process went through it)
    assert not names & {"tempfile", "zipfile"}, f"`hlo {' '.join(args)}` imports {sorted(names & {'tempfile', 'zipfile'})}"


def test_error_message_imports_nothing_heavy(tmp_path):
    bad = tmp_path / "bad.hlo"
    bad.write_text("HloModule m\nENTRY e {\n  ROOT x = f32[] add(%a, )\n}\n")
    env = dict(os.environ)
    r = subprocess.run([sys.executable, "-X", "importtime", "-m", "hlo_interp", "fmt", str(bad)],
                       capture_output=True, text=True, env=env)
    assert r.returncode == 2 and "bad.hlo:3:" in r.stderr
    assert not any(f"| {m}" in r.stderr for m in ("numpy", "rich", "lark"))


# --------------------------------------------------------------------------------------------------
# The precomputed LALR table

def test_lalr_table_matches_the_grammar():
    """Fails when grammar/hlo.lark changed and tools/make_lalr_table.py was not run again."""
    import zlib

    import lark

    import make_lalr_table
    from hlo_interp.syntax import lalr_table
    from hlo_interp.syntax.parser import grammar_text
    text = grammar_text()
    hint = "grammar/hlo.lark changed: run python tools/make_lalr_table.py and commit the table"
    assert (zlib.crc32(text.encode()), len(text)) == (lalr_table.GRAMMAR_CRC32, lalr_table.GRAMMAR_LENGTH), hint
    fresh = make_lalr_table.table_text()
    if lark.__version__ == lalr_table.LARK_VERSION:
        assert fresh == Path(lalr_table.__file__).read_text(encoding="utf-8"), hint
    else:  # another Lark may number the states differently; the rules and terminals are the grammar's
        ns: dict = {}
        exec(fresh, ns)
        assert ns["RULES"] == lalr_table.RULES and ns["TERMINALS"] == lalr_table.TERMINALS, hint
        assert len(ns["STATES"]) == len(lalr_table.STATES), hint


def test_parser_uses_the_table():
    from hlo_interp.syntax import parser as P
    assert P._table() is not None


def _parse_both(files):
    """Printed text (or error) of each file with the precomputed table, then with Lark's analysis."""
    import hlo_interp
    from hlo_interp.syntax import parser as P

    def run():
        out = []
        for f in files:
            try:
                out.append(hlo_interp.format_text(f.read_text(encoding="utf-8"), f.name))
            except hlo_interp.HloError as e:
                out.append("error: " + e.render())
        return out

    P._driver.cache_clear()
    with_table = run()
    saved = P._table
    try:
        P._table = lambda: None
        P._driver.cache_clear()
        P._terminal_strings.cache_clear()
        with_lark = run()
    finally:
        P._table = saved
        P._driver.cache_clear()
        P._terminal_strings.cache_clear()
    return with_table, with_lark


def test_table_parses_as_lark_analysis():
    files = corpus_files()[::7] + [SAMPLE, AFTER]
    bad = [ROOT / "tests" / "data" / n for n in ()]
    a, b = _parse_both(files + bad)
    assert len(a) > 100
    assert a == b
    assert sum(x.startswith("error") for x in a) < len(a) // 2


def test_table_gives_lark_errors(tmp_path):
    texts = ["HloModule m\nENTRY e {\n  ROOT x = f32[] add(%a, )\n}\n",
             "HloModule m\nENTRY e {\n  ROOT x = f32[2 parameter(0)\n}\n",
             "HloModule m\nENTRY e {\n  ROOT x = f32[] constant({1, 2)\n}\n",
             "HloModule m\nENTRY e {\n  ROOT x = f32[] parameter(0), sharding={\n",
             "HloModule m, entry_computation_layout={(f32[])->f32[]\n"]
    files = []
    for i, t in enumerate(texts):
        f = tmp_path / f"e{i}.hlo"
        f.write_text(t)
        files.append(f)
    a, b = _parse_both(files)
    assert all(x.startswith("error") for x in a)
    assert a == b


# --------------------------------------------------------------------------------------------------
# Shapes and literals without NumPy

def test_float_formats_are_ml_dtypes():
    import ml_dtypes

    from hlo_interp.shapes.infer import FLOAT_FORMATS
    from hlo_interp.types import PRIMITIVE_TYPES
    floats = {n: t for n, t in PRIMITIVE_TYPES.items() if t.kind == "float"}
    assert set(FLOAT_FORMATS) == set(floats)
    for n, t in floats.items():
        fi = ml_dtypes.finfo(t.dtype)
        assert FLOAT_FORMATS[n] == (int(fi.maxexp), int(fi.nmant) + 1), n


def _texts(rng, et):
    if et.kind != "float":
        b = et.bits
        return [str(rng.randint(-2**b, 2**b) >> rng.choice([0, 1, 2, b // 2, b - 1])) for _ in range(20)]
    out = []
    for _ in range(40):
        x = rng.uniform(-10, 10) * 10.0 ** rng.choice([-320, -46, -40, -30, -8, -5, 0, 3, 4, 5, 30, 38, 39, 300])
        t = repr(x) if rng.random() < 0.5 else "%.*g" % (rng.randint(1, 17), x)
        out.append(rng.choice([t, t, t, "inf", "-inf", "nan", "-nan", "0", "1", "-0.0", "65504", "65520"]))
    return out


@pytest.mark.parametrize("type_name", ["f16", "f32", "f64", "s8", "s16", "s32", "s64", "u8", "u32", "u64"])
def test_python_literal_path_is_the_numpy_path(type_name):
    """Each dense literal parsed without NumPy has the array and the printed text of the NumPy path."""
    import numpy as np

    from hlo_interp import HloError, ir
    from hlo_interp.diagnostics import SourceText
    from hlo_interp.syntax import literals as L
    from hlo_interp.types import PRIMITIVE_TYPES
    et = PRIMITIVE_TYPES[type_name]
    rng = random.Random(16)
    took = 0
    for _ in range(60):
        texts = _texts(rng, et)
        texts = [t for t in texts if len(t) < 19][:rng.randint(1, 6)]
        body = "{" + ", ".join(texts) + "}"
        shape = ir.ArrayShape(et, (len(texts),), (False,) * 1, ir.Layout((0,)))
        src = SourceText(body, "x")
        try:
            ref = ir.Literal(shape, L._convert(texts, shape, src, 0, "".join(body.split())))
        except HloError:
            ref = None
        flat = L._convert_py(texts, et, "".join(body.split()))
        if flat is None:
            continue
        assert ref is not None, (type_name, texts)
        took += 1
        lit = ir.Literal.from_flat(shape, flat)
        text = L.format_literal(lit)  # printed from the Python values
        assert lit.flat is not None
        arr = lit.value
        assert isinstance(arr, np.ndarray) and arr.dtype == et.dtype
        assert arr.tobytes() == ref.value.tobytes(), (type_name, texts)
        assert text == L.format_literal(ref), (type_name, texts)
    assert took > 10


def test_struct_rounds_as_a_c_cast():
    """The f32/f16 conversions behind the Python path: nearest even, overflow only when the rounded
    value is infinite (65519.99 -> 65504 in f16; 3.4028235e38 -> FLT_MAX)."""
    import numpy as np
    for code, dt in (("f", np.float32), ("e", np.float16)):
        for x in (65519.99, 65520.0, 3.4028235e38, 3.4028236e38, 1e-8, 6e-8, -2.98e-8, 1 / 3, math.pi):
            try:
                got = struct.unpack("<" + code, struct.pack("<" + code, x))[0]
            except OverflowError:
                got = math.copysign(math.inf, x)
            with np.errstate(over="ignore"):
                want = float(np.float64(x).astype(dt))
            assert got == want or (math.isnan(got) and math.isnan(want)), (code, x)


def test_hlo_run_imports_no_presentation_or_grammar_machinery(tmp_path):
    """A plain `hlo-run` (no --trace/--profile/--progress) needs NumPy and the evaluator, not rich, Lark,
    SciPy or hlo_interp.debug."""
    r = subprocess.run([sys.executable, "-X", "importtime", "-m", "hlo_interp.cli_run", str(SAMPLE),
                        "--inputs", str(ROOT / "samples" / "mlp.inputs.npz"), "--output", str(tmp_path / "o.npz"),
                        "--print", "none"], capture_output=True, text=True, cwd=str(ROOT))
    assert r.returncode == 0, r.stderr[-2000:]
    names = {line.rsplit("|", 1)[1].strip() for line in r.stderr.splitlines()
             if line.startswith("import time:") and line.count("|") == 2}
    assert "numpy" in names and "hlo_interp.evaluator" in names
    assert not names & {"rich", "lark", "scipy", "hlo_interp.debug"}, sorted(names & {"rich", "lark", "scipy",
                                                                                        "hlo_interp.debug"})
