"""Where an instruction came from, as its metadata says: op_name, source file and line, and the call
stack from the module's stack frame tables (`hlo run --trace`, the graph and diff pages)."""
from __future__ import annotations

from typing import Any, Optional

from . import ir


def brace_fields(v: Any) -> dict:
    """The fields of a stack frame table entry: a dict, or the `{key=value, ...}` braces the parser
    keeps as they are."""
    items = getattr(v, "items", None)
    if isinstance(v, dict):
        return v
    if isinstance(items, (tuple, list)):
        return {getattr(it, "key", None): getattr(it, "value", None) for it in items}
    return {}


def source_location(ins: ir.Instruction, module: Optional[ir.Module] = None) -> dict:
    """What the instruction's metadata says of where it came from: op_name, source_file, source_line,
    function, and (from the module's stack frame tables) the call stack, innermost first."""
    md = ins.attrs.get("metadata")
    md = md if isinstance(md, dict) else {}
    out: dict[str, Any] = {}
    if md.get("op_name"):
        out["op_name"] = md["op_name"]
    if md.get("source_file"):
        out["source_file"] = md["source_file"]
    if md.get("source_line") is not None:
        out["source_line"] = md["source_line"]
    fid = md.get("stack_frame_id")
    if module is not None and isinstance(fid, int) and module.stack_frames:
        t = module.stack_frames
        files, funcs = dict(t.file_names), dict(t.function_names)
        locs = {k: brace_fields(v) for k, v in t.file_locations}
        frames = {k: brace_fields(v) for k, v in t.stack_frames}
        stack = []
        seen = set()
        while isinstance(fid, int) and fid in frames and fid not in seen:
            seen.add(fid)
            fr = frames[fid]
            loc = locs.get(fr.get("file_location_id"), {})
            stack.append({"file": files.get(loc.get("file_name_id"), "?"),
                          "line": loc.get("line"), "function": funcs.get(loc.get("function_name_id"), "?")})
            parent = fr.get("parent_frame_id")
            fid = parent if parent != fid else None
        if stack:
            out["stack"] = stack
            out.setdefault("source_file", stack[0]["file"])
            out.setdefault("source_line", stack[0]["line"])
            out["function"] = stack[0]["function"]
    return out


class SourceLocations:
    """op_name and file:line of an instruction's metadata (stack frame tables resolved once)."""

    def __init__(self, module: ir.Module):
        t = module.stack_frames
        self.frames = None
        if t:
            self.files, self.funcs = dict(t.file_names), dict(t.function_names)
            self.locs = {k: brace_fields(v) for k, v in t.file_locations}
            self.frames = {k: brace_fields(v) for k, v in t.stack_frames}

    def __call__(self, ins: ir.Instruction) -> tuple:
        md = ins.attrs.get("metadata")
        if not isinstance(md, dict):
            return None, None
        src = None
        if md.get("source_file"):
            src = str(md["source_file"]) + (f":{md['source_line']}" if md.get("source_line") is not None else "")
        fid = md.get("stack_frame_id")
        if src is None and self.frames and isinstance(fid, int) and fid in self.frames:
            loc = self.locs.get(self.frames[fid].get("file_location_id"), {})
            f = self.files.get(loc.get("file_name_id"))
            if f:
                src = f"{f}:{loc.get('line')}"
                fn = self.funcs.get(loc.get("function_name_id"))
                if fn:
                    src += f" ({fn})"
        return md.get("op_name"), src
