"""The corpus: real HLO texts XLA printed (tests/corpus/jax, made by tools/make_corpus.py) and
hand-written texts for what JAX does not emit (tests/corpus/handwritten).  Every one parses, prints
back to text that parses to the same module, and printing is idempotent.  Texts that XLA itself
printed with its default options come back byte for byte."""
import re

import pytest

import hlo_interp
from conftest import CORPUS, corpus_files

ALL = corpus_files()
# xla_rejects/: texts XLA's parser of today refuses (older or newer syntax); we may accept them.
FILES = [p for p in ALL if "xla_rejects" not in p.parts]
REJECTED = [p for p in ALL if "xla_rejects" in p.parts]
IDS = [str(p.relative_to(CORPUS)) for p in FILES]


def test_corpus_is_big_enough():
    assert len(FILES) >= 300, f"only {len(FILES)} corpus files; run tools/make_corpus.py"


@pytest.mark.parametrize("path", FILES, ids=IDS)
def test_parse_print_parse(path):
    text = path.read_text()
    modules = hlo_interp.parse_all(text, str(path))
    out = hlo_interp.format_text(text)
    assert hlo_interp.parse_all(out, "printed") == modules
    assert hlo_interp.format_text(out) == out  # idempotent


@pytest.mark.parametrize("path", REJECTED, ids=[str(p.relative_to(CORPUS)) for p in REJECTED])
def test_syntax_xla_rejects_parses_or_fails_cleanly(path):
    try:
        m = hlo_interp.parse(path.read_text(), str(path))
    except hlo_interp.HloError as e:
        assert e.line is not None
        return
    assert hlo_interp.parse(hlo_interp.to_text(m)) == m


def _printed_by_xla(path) -> bool:
    # compile().as_text() and --xla_dump_to after-optimization files use XLA's default printer.
    name = path.name
    return name.endswith(".after.hlo") or "after_optimizations" in name


XLA_PRINTED = [p for p in FILES if _printed_by_xla(p)]


@pytest.mark.parametrize("path", XLA_PRINTED, ids=[str(p.relative_to(CORPUS)) for p in XLA_PRINTED])
def test_xla_printed_text_is_reproduced_exactly(path):
    text = path.read_text()
    out = hlo_interp.to_text(hlo_interp.parse(text))
    # The one deliberate difference: XLA prints a float -0.0 as "-0" and reads "-0" back as the
    # integer 0, i.e. +0.0; what the text means is +0.0, which we print as "0".
    expected = re.sub(r"(?<=[({ ,])-0(?=[,} )])", "0", text) if "-0" in text else text
    assert out == expected
