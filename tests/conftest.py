import atexit
import os
import shutil
import tempfile
from pathlib import Path

# The module cache (hlo_interp/cache.py) is on by default for large texts: the suite's commands (and their
# subprocesses, which inherit this) write to a folder of their own, removed at exit, never the user's.
_CACHE_HOME = tempfile.mkdtemp(prefix="hlo-interp-tests-cache-")
os.environ["XDG_CACHE_HOME"] = _CACHE_HOME
atexit.register(shutil.rmtree, _CACHE_HOME, True)

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
