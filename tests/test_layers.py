"""The package's layers, checked on its source with `ast`: imports go down only, no import cycles, no
private (`_name`) imports across modules.

Layers, lowest first (a module may import its own layer and those below it):

    types -> ir -> syntax -> shapes -> ops -> evaluator -> tools -> cli -> api

Imports inside functions (lazy ones) count like the others: a lazy import only hides a dependency.
Imports under `if TYPE_CHECKING:` do not count (they never run).  Exceptions are listed below, each
with its reason, and the known violations still to remove are listed per owner; an entry that no
longer matches anything fails too, so that the lists only shrink.
"""
from __future__ import annotations

import ast
import functools
from pathlib import Path

PKG = Path(__file__).resolve().parents[1] / "hlo_interp"

LAYERS = ("types", "ir", "syntax", "shapes", "ops", "evaluator", "tools", "cli", "api")

# Module (name inside the package; a package by its own name) -> layer.  A prefix ending in "." covers
# a subpackage.  Every module of the package must be covered (a new module fails until it is placed).
LAYER_OF = {
    "types": "types",
    "version": "types",  # the version string, read by the CLIs and by pyproject.toml
    "records": "types",  # the data-class decorator the layers above use (dataclass, made cheaply)
    "ir": "ir",
    "opcodes": "ir",  # the opcode table: plain data about opcodes, imports nothing of the package
    "diagnostics": "ir",  # errors with source locations, SourceText; used by every layer above
    "layout": "ir",  # physical layouts of ir shapes (bytes <-> arrays): a property of the IR's shapes
    "files": "ir",  # array files and atomic writes: needs only diagnostics; ops.io and the evaluator use it
    "syntax": "syntax",
    "syntax.": "syntax",
    "shapes": "shapes",
    "shapes.": "shapes",
    "frontend": "shapes",  # text -> module: the syntax, then the shape rules fill omitted shapes
    "ops": "ops",
    "ops.": "ops",
    "evaluator": "evaluator",
    "in_place": "evaluator",  # the in-place loop-buffer analysis the evaluator runs when it builds plans
    "info": "tools", "info_text": "tools", "analysis": "tools", "analysis.": "tools",
    "graph": "tools", "graph_model": "tools", "graph_labels": "tools", "graph_dot": "tools",
    "graph_layout": "tools", "graph_view": "tools", "diff": "tools", "diff_html": "tools",
    "diff_render": "tools", "debug": "tools", "sources": "tools", "spmd": "tools", "compare": "tools",
    "dumps": "tools", "bisect": "tools", "hloproto": "tools",
    "cache": "tools",  # parsed modules and compiled plans kept between hlo-run's runs
    "cli": "cli", "cli_": "cli", "__main__": "cli",
    "": "api",  # hlo_interp/__init__.py: the public API on top of everything
}

# Upward imports that are right, with the reason.  (importer, imported)
ALLOWED_UP = {
    ("ir", "syntax.printer"):
        "Module.__str__ is the printer's text (lazy import); the printer needs the IR classes",
}

# Known violations still to remove, by owner (the helper whose files they are).  (importer, imported)
KNOWN_UP = {
    # run: hlo-run reads the version from the package on top
}

# Import cycles still to break, by owner: each as the set of modules in one strongly connected
# component (computed without the upward imports listed above).
KNOWN_CYCLES: dict = {}

# `from X import _name` across modules, still to remove, by owner: (importer, imported, name)
KNOWN_PRIVATE: dict = {}


# --------------------------------------------------------------------------------------------------
# The scan

def _modules() -> dict[str, Path]:
    out = {}
    for p in sorted(PKG.rglob("*.py")):
        parts = p.relative_to(PKG).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = p
    return out


MODULES = _modules()


def _type_checking_lines(tree: ast.AST) -> set[int]:
    lines: set[int] = set()
    for n in ast.walk(tree):
        if isinstance(n, ast.If) and "TYPE_CHECKING" in ast.unparse(n.test):
            for m in n.body:
                lines.update(range(m.lineno, (m.end_lineno or m.lineno) + 1))
    return lines


def _imports(mod: str, path: Path) -> list[tuple[str, str, int]]:
    """[(imported module, name or "", line)] of every package import in `mod`, lazy ones included."""
    return _imports_of(mod, str(path), path.stat().st_mtime_ns)


@functools.lru_cache(maxsize=None)
def _imports_of(mod: str, path_text: str, _mtime: int) -> list[tuple[str, str, int]]:
    path = Path(path_text)
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skip = _type_checking_lines(tree)
    is_pkg = path.name == "__init__.py"
    here = mod.split(".") if mod else []
    pkg = here if is_pkg else here[:-1]
    out = []
    for n in ast.walk(tree):
        if getattr(n, "lineno", None) in skip:
            continue
        if isinstance(n, ast.ImportFrom):
            if n.level:
                base = pkg[:len(pkg) - (n.level - 1)] if n.level > 1 else pkg
                target = ".".join(base + ([n.module] if n.module else []))
            elif n.module == "hlo_interp" or (n.module or "").startswith("hlo_interp."):
                target = n.module[len("hlo_interp."):] if n.module != "hlo_interp" else ""
            else:
                continue
            for a in n.names:
                sub = f"{target}.{a.name}" if target else a.name
                if sub in MODULES:
                    out.append((sub, "", n.lineno))
                else:
                    out.append((target, a.name, n.lineno))
        elif isinstance(n, ast.Import):
            for a in n.names:
                if a.name == "hlo_interp" or a.name.startswith("hlo_interp."):
                    out.append((a.name[len("hlo_interp."):] if a.name != "hlo_interp" else "", "", n.lineno))
    return out


def layer_of(mod: str) -> str:
    if mod in LAYER_OF:
        return LAYER_OF[mod]
    best = None
    for prefix, layer in LAYER_OF.items():
        if prefix and prefix.endswith((".", "_")) and mod.startswith(prefix):
            if best is None or len(prefix) > len(best[0]):
                best = (prefix, layer)
    if best is None:
        raise AssertionError(f"hlo_interp.{mod} has no layer: add it to LAYER_OF in tests/test_layers.py")
    return best[1]


def _name(mod: str) -> str:
    return f"hlo_interp.{mod}" if mod else "hlo_interp"


def _edges() -> dict[tuple[str, str], int]:
    """(importer, imported module) -> first line, self-imports left out."""
    edges: dict[tuple[str, str], int] = {}
    for mod, path in MODULES.items():
        for target, _, line in _imports(mod, path):
            if target != mod:
                edges.setdefault((mod, target), line)
    return edges


def upward_imports() -> dict[tuple[str, str], int]:
    rank = {name: i for i, name in enumerate(LAYERS)}
    return {(a, b): line for (a, b), line in _edges().items() if rank[layer_of(b)] > rank[layer_of(a)]}


def cycles(edges) -> list[frozenset[str]]:
    graph: dict[str, set[str]] = {}
    for a, b in edges:
        graph.setdefault(a, set()).add(b)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out = []

    def visit(v: str) -> None:  # Tarjan's strongly connected components
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = set()
            while True:
                w = stack.pop()
                on.discard(w)
                comp.add(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(frozenset(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


@functools.lru_cache(maxsize=None)
def _private_attributes_of(mod: str, path_text: str, _mtime: int) -> list[tuple[str, str, int]]:
    """[(module, name, line)]: `alias._name` where alias is a package module imported into `mod`
    (`from ..syntax import printer as P` ... `P._Names`): a private use the import scan cannot see."""
    path = Path(path_text)
    tree = ast.parse(path.read_text(encoding="utf-8"))
    is_pkg = path.name == "__init__.py"
    here = mod.split(".") if mod else []
    pkg = here if is_pkg else here[:-1]
    aliases: dict[str, str] = {}
    for n in ast.walk(tree):
        if isinstance(n, ast.ImportFrom) and n.level:
            base = pkg[:len(pkg) - (n.level - 1)] if n.level > 1 else pkg
            target = ".".join(base + ([n.module] if n.module else []))
            for a in n.names:
                sub = f"{target}.{a.name}" if target else a.name
                if sub in MODULES:
                    aliases[a.asname or a.name] = sub
        elif isinstance(n, ast.Import):
            for a in n.names:
                if a.name.startswith("hlo_interp.") and a.asname:
                    aliases[a.asname] = a.name[len("hlo_interp."):]
    out = []
    for n in ast.walk(tree):
        if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id in aliases \
                and _private(n.attr) and aliases[n.value.id] != mod:
            out.append((aliases[n.value.id], n.attr, n.lineno))
    return out


def private_imports() -> dict[tuple[str, str, str], int]:
    """Private names of one module used by another: imported (`from X import _name`) or reached
    through an imported module (`X._name`)."""
    out = {}
    for mod, path in MODULES.items():
        for target, name, line in _imports(mod, path):
            if _private(name) and target != mod:
                out.setdefault((mod, target, name), line)
        for target, name, line in _private_attributes_of(mod, str(path), path.stat().st_mtime_ns):
            out.setdefault((mod, target, name), line)
    return out


# --------------------------------------------------------------------------------------------------
# The tests

def test_every_module_has_a_layer():
    for mod in MODULES:
        assert layer_of(mod) in LAYERS


def test_no_import_goes_up_a_layer():
    found = upward_imports()
    new = {k: v for k, v in found.items() if k not in ALLOWED_UP and k not in KNOWN_UP}
    assert not new, "imports that go up a layer (" + " -> ".join(LAYERS) + "):\n" + "\n".join(
        f"  {MODULES[a].relative_to(PKG.parent)}:{line}: {_name(a)} ({layer_of(a)}) imports {_name(b)} "
        f"({layer_of(b)})" for (a, b), line in sorted(new.items()))
    stale = sorted(k for k in list(ALLOWED_UP) + list(KNOWN_UP) if k not in found)
    assert not stale, f"listed upward imports that no longer exist (remove them from the lists): {stale}"


def test_no_import_cycles():
    edges = {e for e in _edges() if e not in ALLOWED_UP and e not in KNOWN_UP}
    found = cycles(edges)
    new = [c for c in found if c not in KNOWN_CYCLES]
    assert not new, "import cycles:\n" + "\n".join("  " + ", ".join(sorted(map(_name, c))) for c in new)
    stale = [sorted(c) for c in KNOWN_CYCLES if c not in found]
    assert not stale, f"listed cycles that no longer exist (remove them from KNOWN_CYCLES): {stale}"


def test_no_private_imports_across_modules():
    found = private_imports()
    new = {k: v for k, v in found.items() if k not in KNOWN_PRIVATE}
    assert not new, "private names imported from another module (make them public or move them):\n" + \
        "\n".join(f"  {MODULES[a].relative_to(PKG.parent)}:{line}: from {_name(b)} import {n}"
                  for (a, b, n), line in sorted(new.items()))
    stale = sorted(k for k in KNOWN_PRIVATE if k not in found)
    assert not stale, f"listed private imports that no longer exist (remove them from KNOWN_PRIVATE): {stale}"


def test_the_checks_see_a_bad_import(tmp_path):
    """The scan itself: an upward lazy import and a cycle made of it are found."""
    global MODULES
    saved = MODULES
    try:
        fake = tmp_path / "types.py"
        fake.write_text("def f():\n    from .evaluator import run\n")
        MODULES = dict(saved, types=fake)
        assert ("types", "evaluator") in upward_imports()
        assert any({"types", "evaluator"} <= c for c in cycles(_edges()))
        fake = tmp_path / "diff_render.py"
        fake.write_text("from .syntax import printer as P\n\ndef f(m):\n    return P._Names(m)\n")
        MODULES = dict(saved, diff_render=fake)
        assert ("diff_render", "syntax.printer", "_Names") in private_imports()
    finally:
        MODULES = saved
