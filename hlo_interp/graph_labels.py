"""What a node of `hlo graph` says, shared by the DOT and HTML views: the label lines (opcode line,
constant value, called computations, name, shape), short shapes, fusion kinds, fill colours, and the
instruction text shown on hover.  Works on graph_model.Node (any object with .ins, .comp, .kind,
.is_root, .hidden_operands, .hidden_users)."""
from __future__ import annotations

import re
from typing import Optional

from . import ir
from .opcodes import OPCODES, opcodes_where, schema_for
from .syntax.literals import format_literal
from .syntax.printer import instruction_text as _instruction_text

_TEXT_LIMIT = 3000  # characters of instruction text kept for hover/tooltips


def fused_name(ins: ir.Instruction) -> Optional[str]:
    v = ins.attrs.get("calls")
    return v if isinstance(v, str) else None


def fused_computation(module: ir.Module, ins: ir.Instruction) -> Optional[ir.Computation]:
    name = fused_name(ins)
    if name is None:
        return None
    for c in module.computations:
        if c.name == name:
            return c
    return None


def short_shape(shape, limit: int = 3) -> str:
    """`f32[16,32]` (no layout); tuples as `(f32[2], s32[])`, long ones cut: `(f32[2], s32[], … +4)`."""
    if shape is None:
        return ""
    if isinstance(shape, ir.TupleShape):
        parts = [short_shape(s, limit) for s in shape.elements[:limit]]
        if len(shape.elements) > limit:
            parts.append(f"… +{len(shape.elements) - limit}")
        return "(" + ", ".join(parts) + ")"
    if isinstance(shape, ir.BufferShape):
        return f"b({short_shape(shape.element, limit)})"
    return shape.text(layouts=False)


_TRIVIAL = opcodes_where(lambda o: o.plumbing)


def summarize(comp: ir.Computation, limit: int = 4) -> str:
    """The opcodes a computation computes, most frequent first: `multiply×3, add, exponential`."""
    counts: dict = {}
    for i in comp.instructions:
        if i.opcode not in _TRIVIAL:
            counts[i.opcode] = counts.get(i.opcode, 0) + 1
    if not counts:
        return comp.root.opcode
    items = sorted(counts.items(), key=lambda kv: -kv[1])
    text = ", ".join(f"{k}×{v}" if v > 1 else k for k, v in items[:limit])
    if len(items) > limit:
        text += f", … +{len(items) - limit}"
    return text


def fusion_kind(ins: ir.Instruction) -> str:
    kind = ins.attrs.get("kind")
    kind = getattr(kind, "text", kind) or "fusion"
    bc = ins.attrs.get("backend_config")
    text = getattr(bc, "text", bc) if bc is not None else None
    if isinstance(text, str):
        m = re.search(r'"fusion_config"\s*:\s*\{[^}]*"kind"\s*:\s*"([^"]+)"', text)
        if m:
            kind = f"{kind} {m.group(1)}"
    return str(kind)


def called_computations(ins: ir.Instruction):
    """[(attr, computation name)] for the computations an instruction calls."""
    specs, _ = schema_for(ins.opcode)
    out = []
    for s in specs:
        v = ins.attrs.get(s.name)
        if v is None:
            continue
        if s.kind == "comp" and isinstance(v, str):
            out.append((s.name, v))
        elif s.kind == "comps":
            out += [(f"{s.name}[{k}]", x) for k, x in enumerate(v)
                    if isinstance(x, str)]
    return out


def _scalar_text(lit: Optional[ir.Literal]) -> Optional[str]:
    if lit is None or lit.value is None or isinstance(lit.value, tuple):
        return None
    if lit.value.size > 4:
        return None
    t = format_literal(lit)
    return t if len(t) <= 40 else None


# (a parameter's label is its number, see label_head)
_SHORT_ATTR = {n: o.label_attrs for n, o in OPCODES.items() if o.label_attrs}


def label_head(node) -> list:
    """The first lines of a node's label, shared by the DOT and HTML views: the opcode line (ROOT,
    parameter number, fusion kind, the attribute that tells e.g. compares apart) and a small constant's
    value."""
    ins = node.ins
    op = ins.opcode
    head = op
    if op == "parameter":
        head = f"parameter {ins.parameter_number}"
    elif op == "fusion":
        head = f"fusion · {fusion_kind(ins)}"
    elif op in _SHORT_ATTR:
        vals = [ins.attrs.get(a) for a in _SHORT_ATTR[op]]
        vals = [getattr(v, "text", v) for v in vals if v is not None]
        if vals:
            head += " " + " ".join(str(v) for v in vals)
    if node.is_root:
        head = "ROOT " + head
    lines = [(head, "op")]
    if op == "constant":
        t = _scalar_text(ins.literal)
        if t is not None:
            lines.append((t, "detail"))
    return lines


def label_tail(node) -> list:
    """The last lines of a node's label, shared by the DOT and HTML views: name, shape, and how many
    operands/users the drawing leaves out."""
    ins = node.ins
    lines = [(ins.name, "name"), (short_shape(ins.shape), "shape")]
    hidden = []
    if node.hidden_operands:
        hidden.append(f"+{node.hidden_operands} operand{'s' if node.hidden_operands > 1 else ''}")
    if node.hidden_users:
        hidden.append(f"+{node.hidden_users} user{'s' if node.hidden_users > 1 else ''}")
    if hidden:
        lines.append((" ".join(hidden) + " hidden", "warn"))
    return lines


def label_lines(node, module: ir.Module, collapsed_fusion: bool = True) -> list:
    """[(text, style)] lines of a node's label; style is one of op, name, shape, detail, warn."""
    ins = node.ins
    op = ins.opcode
    lines = label_head(node)
    if op == "fusion" and collapsed_fusion:
        fc = fused_computation(module, ins)
        if fc is not None:
            lines.append((summarize(fc), "detail"))
    elif op != "fusion":
        called = called_computations(ins)
        if len(called) > 4:
            called = called[:3]
        for attr, cname in called:
            attr = {"true_computation": "true", "false_computation": "false"}.get(attr, attr)
            attr = re.sub(r"^branch_computations\[(\d+)\]$", r"branch \1", attr)
            try:
                c = module.computation(cname)
                lines.append((f"{attr}: {cname} [{summarize(c, 3)}]", "detail"))
            except KeyError:
                lines.append((f"{attr}: {cname}", "detail"))
        if len(called_computations(ins)) > 4:
            lines.append((f"… +{len(called_computations(ins)) - 3} more computations", "detail"))
    lines += label_tail(node)
    return [(t if len(t) <= 80 else t[:77] + "…", s) for t, s in lines]


def instruction_text(ins: ir.Instruction) -> str:
    t = _instruction_text(ins)
    return t if len(t) <= _TEXT_LIMIT else t[:_TEXT_LIMIT] + " …"


_FILL = {"parameter": "#d9f2d0", "constant": "#eeeeee", "fusion": "#dbe9fb", "control": "#fff1b8",
         "async": "#fff1b8", "reduce": "#fde0c5", "dot": "#e6d7f7", "linalg": "#e6d7f7",
         "gather_scatter": "#fbd6e6", "sort": "#fbd6e6", "collective": "#f8cfcf", "movement": "#f4f7fb",
         "rng": "#e0f4f4", "io": "#e0f4f4", "batchnorm": "#fde0c5", "elementwise": "#ffffff",
         "other": "#ffffff"}
_FUSION_FILL = {"kLoop": "#dbe9fb", "kInput": "#fde0c5", "kOutput": "#e6d7f7", "kCustom": "#e3dcf7"}


def fusion_fill(ins: ir.Instruction) -> str:
    """The fill colour of a fusion (node or cluster), by its kind."""
    return _FUSION_FILL.get(fusion_kind(ins).split()[0], _FILL["fusion"])


def fill_color(node) -> str:
    if node.ins.opcode == "fusion":
        return fusion_fill(node.ins)
    return _FILL.get(node.kind, "#ffffff")
