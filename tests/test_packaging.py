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
