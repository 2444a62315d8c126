"""The grammar ships inside the package, and the installed copy is the repository's."""
from pathlib import Path

import hlo_interp
from hlo_interp.syntax.parser import grammar_path

ROOT = Path(__file__).resolve().parents[1]


def test_grammar_found_and_current():
    g = grammar_path()
    assert g.is_file()
    assert g.read_text() == (ROOT / "grammar" / "hlo.lark").read_text()


def test_installed_package_carries_its_grammar():
    pkg = Path(hlo_interp.__file__).resolve().parent
    if pkg.parent == ROOT:
        # running from the source tree (editable install or PYTHONPATH): the grammar is at the top
        assert (ROOT / "grammar" / "hlo.lark").is_file()
    else:
        # a real (wheel) install, as .ci/run does it: the grammar must be inside the package
        assert (pkg / "grammar" / "hlo.lark").is_file()
        assert grammar_path() == pkg / "grammar" / "hlo.lark"


def test_public_api():
    m = hlo_interp.parse("HloModule m\nENTRY e {\n  ROOT p = f32[] parameter(0)\n}\n")
    assert hlo_interp.format_text(hlo_interp.to_text(m)) == hlo_interp.to_text(m)
    assert str(m) == hlo_interp.to_text(m)
    assert set(hlo_interp.__all__) >= {"parse", "parse_file", "to_text", "HloError"}
    for name in hlo_interp.__all__:
        assert hasattr(hlo_interp, name), name


_DIV = """HloModule m
ENTRY e {
  x = f32[3] parameter(0)
  z = f32[3] constant({0, 1, 2})
  d = f32[3] divide(x, z)
  ROOT n = f32[3] negate(d)
}
"""


def test_top_level_tools_api():
    """The one-call forms of the tools: diff_modules, module_info, trace (each also takes text)."""
    import numpy as np
    renamed = _DIV.replace("d = ", "q = ").replace("(d)", "(q)")
    r = hlo_interp.diff_modules(_DIV, renamed)
    assert r.same
    changed = hlo_interp.diff_modules(_DIV, _DIV.replace("negate", "abs"))
    assert not changed.same
    info = hlo_interp.module_info(_DIV)
    assert info.to_dict()["cost"]["flops"] == 6  # divide and negate: one flop per element each
    rep = hlo_interp.trace(_DIV, np.array([0.0, 1.0, 2.0], np.float32))
    assert rep.found and rep.finding.instruction == "d" and rep.finding.opcode == "divide"  # 0/0 = NaN
