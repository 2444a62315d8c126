"""The custom-call target registry and the `custom-call` kernel.

The kernel looks up `custom_call_target` in two tables:
  * built-in targets, registered with `@target("name", ...)` by a builder `(ins, ctx) -> closure`
    exactly like kernels (see ops/registry.py): the builder decodes attributes once, the closure gets
    the operand values (the families of targets are the modules beside this one);
  * user targets, registered with `register(name, fn)` (exported as
    `hlo_interp.register_custom_call`): `fn(*arrays, backend_config=..., shape=...)` returns an array
    (or a tuple of arrays / nested tuples for a tuple shape).  `backend_config` is the attribute's raw
    text (None when absent), `shape` the instruction's declared ir shape.  The result is checked
    against the declared shape (dimensions) and converted to its element types.  A user target
    overrides a built-in one of the same name.
An unknown target fails (when the plan is built, located at the instruction) with a message naming the
target and saying how to register a Python implementation: never a silently wrong answer.
"""
from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import numpy as np

from ..registry import error_at, kernel, unsupported

TARGETS: dict[str, Callable] = {}   # built-in: name -> builder (ins, ctx) -> closure
USER_TARGETS: dict[str, Callable] = {}  # register(): name -> fn(*arrays, backend_config=, shape=)


def target(*names: str) -> Callable[[Callable], Callable]:
    """Register a built-in custom-call target builder `(ins, ctx) -> closure` under one or more names."""
    def deco(fn: Callable) -> Callable:
        for n in names:
            if n in TARGETS and TARGETS[n] is not fn:
                raise RuntimeError(f"two builders registered for custom-call target {n!r}")
            TARGETS[n] = fn
        return fn
    return deco


def register(name: str, fn: Callable | None) -> None:
    """Register a Python implementation of custom-call target `name` (None removes it):
    `fn(*arrays, backend_config=str|None, shape=ir.Shape)` -> array, or a tuple for a tuple shape."""
    if not isinstance(name, str) or not name:
        raise TypeError("register(name, fn): name must be a non-empty string")
    if fn is None:
        USER_TARGETS.pop(name, None)
        return
    if not callable(fn):
        raise TypeError(f"register({name!r}, fn): fn must be callable")
    USER_TARGETS[name] = fn


def registered_targets() -> list[str]:
    """The names of every target that runs (built-in and user)."""
    return sorted(set(TARGETS) | set(USER_TARGETS))


# --------------------------------------------------------------------------------------------------
# attribute helpers (for builders)

def backend_config_text(ins) -> str | None:
    """The backend_config attribute's text (JSON, MLIR dictionary or plain string), or None."""
    bc = ins.attrs.get("backend_config")
    if bc is None:
        return None
    if isinstance(bc, str):
        return bc
    text = getattr(bc, "text", None)
    return text if isinstance(text, str) else str(bc)


def _split_top(body: str) -> list[str]:
    """Split at commas outside quotes and brackets."""
    parts, depth, cur, quote, esc = [], 0, [], False, False
    for ch in body:
        if quote:
            cur.append(ch)
            if esc:
                esc = False
            elif ch == "\\":
                esc = True
            elif ch == '"':
                quote = False
            continue
        if ch == '"':
            quote = True
        elif ch in "([{<":
            depth += 1
        elif ch in ")]}>":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append("".join(cur))
            cur = []
            continue
        cur.append(ch)
    if "".join(cur).strip():
        parts.append("".join(cur))
    return parts


def _mlir_value(val: str) -> Any:
    if val.startswith('"') and val.endswith('"') and len(val) >= 2:
        return val[1:-1]
    head = val.rsplit(":", 1)[0].strip() if ":" in val and not val.startswith(("[", "{", "array", "dense")) else val
    if head in ("true", "false"):
        return head == "true"
    for conv in (int, float):
        try:
            return conv(head)
        except ValueError:
            pass
    return val  # arrays, nested dictionaries, ...: the text as written


def backend_config_dict(ins) -> dict[str, Any]:
    """The backend_config as a dict: JSON objects, or the MLIR dictionary form JAX's FFI calls print
    (`{diag = 85 : ui8, side = 76 : ui8, flag = true, s = "x"}`: integers and floats with their type
    dropped; arrays and nested dictionaries kept as their text)."""
    text = backend_config_text(ins)
    if text is None:
        return {}
    text = text.strip()
    if not text or text == "{}":
        return {}
    try:
        import json
        v = json.loads(text)
        return v if isinstance(v, dict) else {}
    except ValueError:
        pass
    body = text[1:-1] if text.startswith("{") and text.endswith("}") else text
    out: dict[str, Any] = {}
    for item in _split_top(body):
        key, eq, val = item.partition("=")
        key = key.strip().strip('"')
        if not eq or not re.fullmatch(r"[A-Za-z_][\w.$-]*", key):
            raise error_at(ins, f"cannot read backend_config {text!r}")
        out[key] = _mlir_value(val.strip())
    return out


def called(ins) -> tuple[str, ...]:
    cc = ins.attrs.get("called_computations")
    if cc:
        return tuple(cc)
    ta = ins.attrs.get("to_apply")
    return (ta,) if ta else ()


def shape_text(shape) -> str:
    """A shape in messages: `f32[4,<=3]` (no layout), `?` when unknown."""
    return "?" if shape is None else shape.text(layouts=False)


# --------------------------------------------------------------------------------------------------
# the custom-call kernel

def _unknown_message(name: str) -> str:
    return (f"unknown custom-call target {name!r}: no implementation is registered. Register a Python "
            f"one with hlo_interp.register_custom_call({name!r}, fn), where fn(*arrays, backend_config=..., "
            f"shape=...) returns the result array (a tuple of arrays for a tuple shape)")


def _convert_result(ins, name, value, shape, where=""):
    if shape.is_tuple:
        if not isinstance(value, (tuple, list)) or len(value) != len(shape.elements):
            raise error_at(ins, f"custom-call target {name!r} returned {type(value).__name__}{where}; "
                                f"the instruction's shape is {shape_text(shape)}")
        return tuple(_convert_result(ins, name, v, s, f"{where}[{i}]")
                     for i, (v, s) in enumerate(zip(value, shape.elements)))
    if shape.is_token:
        from ..registry import TOKEN
        return TOKEN
    try:
        arr = np.asarray(value)
        dt = shape.element_type.dtype
        with np.errstate(all="ignore"):
            arr = arr.astype(dt, copy=False)
    except Exception as e:  # noqa: BLE001 - a user value NumPy cannot convert
        raise error_at(ins, f"custom-call target {name!r} returned a value{where} that is not an array of "
                            f"{shape.element_type.name}: {e}") from None
    if tuple(arr.shape) != tuple(shape.dims):
        raise error_at(ins, f"custom-call target {name!r} returned shape {list(arr.shape)}{where}; the "
                            f"instruction declares {shape_text(shape)}")
    return arr


def _user_builder(name: str, fn: Callable, ins):
    bc = backend_config_text(ins)
    shape = ins.shape

    def run(*args):
        try:
            r = fn(*args, backend_config=bc, shape=shape)
        except Exception as e:  # noqa: BLE001 - the user's code: report it located, no traceback
            raise error_at(ins, f"custom-call target {name!r} (Python implementation) raised "
                                f"{type(e).__name__}: {e}") from None
        return _convert_result(ins, name, r, shape)
    return run


@kernel("custom-call")
def _k_custom_call(ins, ctx):
    name = ins.attrs.get("custom_call_target")
    if name in USER_TARGETS:
        return _user_builder(name, USER_TARGETS[name], ins)
    builder = TARGETS.get(name)
    if builder is None:
        shape = ins.shape
        if (shape is not None and not shape.is_tuple and not shape.is_token and shape.element_type.dtype is not None
                and 0 in shape.dims and ins.attrs.get("custom_call_has_side_effect") is not True):
            # XLA's ZeroSizedHloElimination replaces an instruction without side effects whose result
            # has no elements by an empty constant before anything runs: no target is called
            empty = np.zeros(tuple(shape.dims), shape.element_type.dtype)
            return lambda *args: empty
        raise unsupported(ins, _unknown_message(name))
    return builder(ins, ctx)

