from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "tests" / "corpus"


def corpus_files():
    """Every HLO text of the corpus (tests/corpus/**/*.hlo|*.txt), sorted."""
    return sorted(p for p in CORPUS.rglob("*") if p.suffix in (".hlo", ".txt") and p.is_file())


def pytest_collection_modifyitems(items):
    """`pytest -k OPCODE` selects every XLA:CPU case whose texts use OPCODE: a case's opcodes are keywords
    of its tests (tests/casedata.py: Case)."""
    for item in items:
        callspec = getattr(item, "callspec", None)
        case = callspec.params.get("case") if callspec else None
        info = getattr(case, "info", None)
        if isinstance(info, dict) and "opcodes" in info:
            item.extra_keyword_matches.update(info["opcodes"])
