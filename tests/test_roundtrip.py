"""The corpus: real HLO texts XLA printed (tests/corpus/jax, made by tools/make_corpus.py) and
hand-written texts for what JAX does not emit (tests/corpus/handwritten).  Every one parses, prints
back to text that parses to the same module, and printing is idempotent.  Texts that XLA itself
printed with its default options come back byte for byte."""
import pytest

import hlo_interp
from conftest import CORPUS, corpus_files

FILES = corpus_files()
IDS = [str(p.relative_to(CORPUS)) for p in FILES]


def test_corpus_is_big_enough():
    assert len(FILES) >= 300, f"only {len(FILES)} corpus files; run tools/make_corpus.py"


@pytest.mark.parametrize("path", FILES, ids=IDS)
def test_parse_print_parse(path):
    text = path.read_text()
    m = hlo_interp.parse(text, str(path))
    out = hlo_interp.to_text(m)
    m2 = hlo_interp.parse(out, "printed")
    assert m2 == m
    assert hlo_interp.to_text(m2) == out  # idempotent


def _printed_by_xla(path) -> bool:
    # compile().as_text() and --xla_dump_to after-optimization files use XLA's default printer.
    name = path.name
    return name.endswith(".after.hlo") or "after_optimizations" in name


XLA_PRINTED = [p for p in FILES if _printed_by_xla(p)]


@pytest.mark.parametrize("path", XLA_PRINTED, ids=[str(p.relative_to(CORPUS)) for p in XLA_PRINTED])
def test_xla_printed_text_is_reproduced_exactly(path):
    text = path.read_text()
    out = hlo_interp.to_text(hlo_interp.parse(text))
    assert out == text
