from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "tests" / "corpus"


def corpus_files():
    """Every HLO text of the corpus (tests/corpus/**/*.hlo|*.txt), sorted."""
    return sorted(p for p in CORPUS.rglob("*") if p.suffix in (".hlo", ".txt") and p.is_file())
