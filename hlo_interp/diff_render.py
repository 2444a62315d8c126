"""The text, JSON and unified-diff renderings of a structural diff (a diff.DiffResult).  The matching
and the comparison are diff.py's; this module only writes them out (the HTML page is diff_html.py's).

    >>> from hlo_interp.diff_render import to_text, to_json, unified
    >>> print(to_text(result)), to_json(result)["summary"], print(unified(result, 3))

`text_lines` and `instruction_lines` give the same text as (piece, style) pairs, for a terminal that
colours them (style names: head, add, remove, change, dim, same, diff; "" for plain).
"""
from __future__ import annotations

import difflib
import json
import re

from . import ir
from .syntax import printer as P

SCHEMA = "hlo-diff/1"

# A shape's layout braces (`f32[2,3]{1,0}` -> `f32[2,3]`), for texts compared without layouts.
_LAYOUT = re.compile(r"((?:\b(?:pred|[suf]\d+|bf16|c64|c128|f8e\w+|f4e2m1fn|token)\[[^\]]*\]))"
                     r"\{[^{}]*(?:\([^()]*\)[^{}]*)*\}")


def to_json(result) -> dict:
    """The diff as JSON-ready data: verdict, counts, module changes and per computation what was
    added, removed, changed, moved and (unless names are ignored) renamed."""
    names = "names" not in result.ignore

    def ins(i: ir.Instruction) -> dict:
        return {"name": i.name, "opcode": i.opcode, "shape": _shape(i.shape, True),
                "text": instruction_text(i, result.ignore)}

    comps = []
    for c in result.computations:
        entry = {"status": c.status, "a": c.a.name if c.a else None, "b": c.b.name if c.b else None,
                 "matched_instructions": c.matched,
                 "added": [ins(i) for i in c.added], "removed": [ins(i) for i in c.removed],
                 "changed": [{"a": x.a.name, "b": x.b.name, "opcode": x.b.opcode,
                              "changes": [ch.to_json() for ch in x.changes]} for x in c.changed],
                 "attribute_changes": [ch.to_json() for ch in c.attr_changes],
                 "moved_out": [{"name": x.name, "opcode": x.opcode, "to_computation": comp, "to": y.name}
                               for x, y, comp in c.moved_out],
                 "moved_in": [{"name": x.name, "opcode": x.opcode, "from_computation": comp,
                               "from": y.name} for x, y, comp in c.moved_in]}
        if names:
            entry["renamed"] = [{"a": x, "b": y} for x, y in c.renamed]
        comps.append(entry)
    return {"schema": SCHEMA, "same": result.same,
            "a": {"file": result.a_name, "module": result.a.name},
            "b": {"file": result.b_name, "module": result.b.name},
            "ignore": sorted(result.ignore), "summary": result.summary(),
            "module_changes": [ch.to_json() for ch in result.module_changes],
            "computations": comps}


def to_json_text(result) -> str:
    return json.dumps(to_json(result), indent=2) + "\n"


def to_text(result, *, verbose: bool = False) -> str:
    """A plain-text report: header, counts, then each computation that differs (every one when
    verbose)."""
    return "".join(t for t, _ in text_lines(result, verbose))


def text_lines(result, verbose: bool = False):
    """The report of `to_text` as (text, style) pieces."""
    s = result.summary()
    yield f"--- {result.a_name}  (module {result.a.name})\n", "remove"
    yield f"+++ {result.b_name}  (module {result.b.name})\n", "add"
    if result.ignore:
        yield f"ignoring: {', '.join(sorted(result.ignore))}\n", "dim"
    for key in ("computations", "instructions"):
        c = s[key]
        line = (f"{key}: {c['matched']} matched" +
                ("" if "names" in result.ignore else f" ({c['renamed']} renamed)") +
                f", {c['added']} added, {c['removed']} removed, {c['changed']} changed" +
                (f", {c['moved']} moved" if c.get("moved") else "") + "\n")
        yield line, "head"
    for ch in result.module_changes:
        yield f"~ module {ch.text()}\n", "change"
    for c in result.computations:
        st = c.status
        if st == "same" and not verbose:
            continue
        yield "\n", ""
        if st == "added":
            yield f"+ computation {c.title} ({len(c.b.instructions)} instructions)\n", "add"
        elif st == "removed":
            yield f"- computation {c.title} ({len(c.a.instructions)} instructions)\n", "remove"
        else:
            yield (f"{'~' if st == 'changed' else '='} computation {c.title}: {len(c.added)} added, "
                   f"{len(c.removed)} removed, {len(c.changed)} changed" +
                   (f", {len(c.moved_in)} moved in" if c.moved_in else "") +
                   (f", {len(c.moved_out)} moved out" if c.moved_out else "") + "\n"), \
                ("change" if st == "changed" else "same")
        for ch in c.attr_changes:
            yield f"    ~ {ch.text()}\n", "change"
        for line, style in instruction_lines(result, c):
            yield f"    {line}\n", style
    yield "\n", ""
    yield ("same\n", "same") if result.same else ("different\n", "diff")


def instruction_lines(result, c):
    """(line, style) of one computation pair's (a diff.ComputationDiff) instruction differences."""
    for i in c.removed:
        yield f"- {instruction_text(i, result.ignore)}", "remove"
    for x, y, comp in c.moved_out:
        yield f"< %{x.name} ({x.opcode}) moved to %{comp}" + ("" if y.name == x.name else f" as %{y.name}"), "dim"
    for i in c.added:
        yield f"+ {instruction_text(i, result.ignore)}", "add"
    for x, y, comp in c.moved_in:
        yield f"> %{x.name} ({x.opcode}) moved from %{comp}" + ("" if y.name == x.name else f" as %{y.name}"), "dim"
    for x in c.changed:
        name = f"%{x.a.name}" if x.a.name == x.b.name else f"%{x.a.name} -> %{x.b.name}"
        yield f"~ {name} ({x.b.opcode})", "change"
        for ch in x.changes:
            yield f"    {ch.text()}", ""


def unified(result, context: int = 3) -> str:
    """A plain unified diff of the canonical texts (ignored parts left out).  B's matched
    computations and instructions are printed under A's names, so renumbering shows no lines."""
    ta = _canonical_text(result.a, result.ignore, None)
    tb = _canonical_text(result.b, result.ignore, _b_names_as_a(result))
    return "".join(difflib.unified_diff(ta.splitlines(True), tb.splitlines(True),
                                        fromfile=result.a_name, tofile=result.b_name, n=context))


def _b_names_as_a(result):
    """The printer's renaming of module B: matched computations and instructions take A's names, an
    unmatched one whose name A also uses gets `.new`."""
    comps: dict[str, str] = {}
    instrs: dict[str, dict[str, str]] = {}
    a_comp_names = {c.name for c in result.a.computations}
    for c in result.computations:
        if c.a is not None and c.b is not None:
            comps[c.b.name] = c.a.name
            m = {y: x for x, y in c.pairs}
            used = {i.name for i in c.a.instructions}
            for i in c.b.instructions:  # an unmatched B name that clashes with an A name
                if i.name not in m and i.name in used:
                    m[i.name] = i.name + ".new"
            instrs[c.b.name] = m
        elif c.b is not None and c.b.name in a_comp_names:
            comps[c.b.name] = c.b.name + ".new"
    return P.Names(comps, instrs)


def _canonical_text(m: ir.Module, ignore: frozenset, names) -> str:
    opts = _print_options(ignore)
    out = [P.header_text(m), ""]
    if m.stack_frames and not opts.strip_metadata:
        out += [P.tables_text(m.stack_frames), "", ""]
    for comp in m.computations:
        out += [P.computation_text(comp, opts, names), ""]
    text = "\n".join(out) + "\n"
    if "layouts" in ignore:
        text = strip_layouts(text)
    return text


def _print_options(ignore: frozenset) -> P.PrintOptions:
    return P.PrintOptions(strip_metadata="metadata" in ignore,
                          strip_backend_config="backend_config" in ignore)


def strip_layouts(text: str) -> str:
    """`text` with every shape's layout braces removed."""
    return _LAYOUT.sub(r"\1", text)


def instruction_text(i: ir.Instruction, ignore: frozenset) -> str:
    """An instruction's canonical text without the ignored parts."""
    t = P.instruction_text(i, _print_options(ignore))
    return strip_layouts(t) if "layouts" in ignore else t


def _shape(shape, layouts: bool) -> str:
    return "" if shape is None else ir.shape_text(shape, layouts)
