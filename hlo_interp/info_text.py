"""`hlo info`'s report (an info.ModuleInfo) as plain text and as table rows (the CLI draws the same
rows with rich)."""
from __future__ import annotations

from .diagnostics import format_bytes


def _count(x: float) -> str:
    return f"{int(x):,}" if float(x).is_integer() else f"{x:,.1f}"


def _space(v: int) -> str:
    return "mixed" if v < 0 else f"S({v})"


def sections(info, top: int | None = 10) -> list[tuple[str, list[str], list[list[str]], list[str]]]:
    """(title, column headers, rows, notes) for each part of the report; `top` (0 or None: all) cuts
    the lists of computations, costliest instructions and largest buffers."""
    top = top or None
    out = []
    kinds: dict[str, int] = {}
    for c in info.computations:
        kinds[c.kind] = kinds.get(c.kind, 0) + 1
    comps = sorted(info.computations, key=lambda c: (c.kind != "entry", -c.instructions))
    shown = comps[:top] if top else comps
    out.append((f"computations ({len(comps)}: " + ", ".join(f"{n} {k}" for k, n in kinds.items()) + ")"
                + (f", {len(shown)} shown" if len(shown) < len(comps) else ""),
                ["name", "kind", "instructions", "called by"],
                [[c.name, c.kind, str(c.instructions), ", ".join(c.callers[:3]) + (
                    f", ... ({len(c.callers)} callers)" if len(c.callers) > 3 else "")]
                 for c in shown], []))
    scope = "all computations" if info.computation == _entry_name(info) and not info.scoped else info.computation
    out.append((f"instructions per opcode ({scope}: {info.instruction_count})", ["opcode", "count"],
                [[k, str(v)] for k, v in info.opcode_counts.items()], []))
    out.append((f"parameters of {info.computation}", ["#", "name", "shape", "logical", "physical", "memory"],
                [[str(p.number), p.name, p.shape, format_bytes(p.logical_bytes), format_bytes(p.physical_bytes),
                  ",".join(f"S({m})" for m in p.memory_spaces)] for p in info.parameters], []))
    r = info.result
    out.append(("result", ["name", "shape", "logical", "physical", "memory"],
                [[r.name, r.shape, format_bytes(r.logical_bytes), format_bytes(r.physical_bytes),
                  ",".join(f"S({m})" for m in r.memory_spaces)]], []))
    notes = []
    if info.unknown_cost:
        shown = ", ".join(info.unknown_cost[:5]) + (", ..." if len(info.unknown_cost) > 5 else "")
        notes.append(f"not counted (custom calls, cost unknown to XLA): {len(info.unknown_cost)}: {shown}")
    out.append((f"cost of {info.computation} (XLA's HloCostAnalysis rules; a while loop counts one iteration)",
                ["flops", "transcendentals", "bytes accessed"],
                [[_count(info.cost.flops), _count(info.cost.transcendentals), _count(info.cost.bytes_accessed)
                  + f" ({format_bytes(info.cost.bytes_accessed)})"]], notes))
    if info.instruction_costs:
        title = f"costliest instructions (top {len(info.instruction_costs[:top])} of {len(info.instruction_costs)})"
        out.append((title, ["name", "opcode", "flops", "transcendentals", "bytes accessed"],
                    [[c.name, c.opcode, _count(c.flops), _count(c.transcendentals), _count(c.bytes_accessed)]
                     for c in info.instruction_costs[:top]], []))
    def both(n: int) -> str:
        return _count(n) + f" ({format_bytes(n)})"
    rows = [[s.name, str(s.buffers), both(s.logical_bytes), both(s.physical_bytes), both(s.peak_bytes)]
            for s in info.memory_spaces]
    if len(info.memory_spaces) > 1:
        rows.append(["total", str(sum(s.buffers for s in info.memory_spaces)), both(info.logical_bytes),
                     both(info.physical_bytes), both(info.peak_bytes)])
    out.append(("memory per space (physical layouts: tiles, padding, packing)",
                ["memory space", "buffers", "logical bytes", "physical bytes", "peak live"], rows,
                [("physical bytes: every buffer added up; peak live: the most live at once in the written "
                  "order (each buffer from its definition to its last use)")]))
    if info.buffers:
        out.append((f"largest buffers (top {len(info.buffers[:top])} of {len(info.buffers)})",
                    ["name", "opcode", "shape", "logical", "physical", "memory"],
                    [[b.name if b.computation == info.computation else f"{b.name} ({b.computation})", b.opcode,
                      b.shape, format_bytes(b.logical_bytes), format_bytes(b.physical_bytes), _space(b.memory_space)]
                     for b in info.buffers[:top]], []))
    return out


def _entry_name(info) -> str:
    for c in info.computations:
        if c.kind == "entry":
            return c.name
    return info.computation


def to_text(info, top: int | None = 10) -> str:
    """The report as plain text (aligned columns)."""
    lines = [f"module {info.module}" + (f"  ({info.filename})" if info.filename else "")]
    for title, head, rows, notes in sections(info, top):
        lines.append("")
        lines.append(title)
        table = [head] + rows
        widths = [max(len(r[i]) for r in table) for i in range(len(head))]
        for r in table:
            lines.append("  " + "  ".join(v.ljust(w) for v, w in zip(r, widths)).rstrip())
        for n in notes:
            lines.append("  " + n)
    return "\n".join(lines) + "\n"
