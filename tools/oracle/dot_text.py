"""The HLO text of one dot of two parameters, each converted to the dot's type first when it is of
another: shared by the complex_dot family and tools/complex_dot_survey.py.  Imports nothing, so a tool
can use it without generating a family's cases."""
from __future__ import annotations


def dot_module(at: str, ashape, bt: str, bshape, ct: str, out_shape, dims: str) -> str:
    """`HloModule m` with `ENTRY e`: a (at[ashape]) and b (bt[bshape]) as parameters 0 and 1, and
    ROOT r = ct[out_shape] dot(a, b) with the dimension numbers `dims` (attribute text)."""
    def s(t, shape):
        return f"{t}[{','.join(map(str, shape))}]"
    lines = [f"  a = {s(at, ashape)} parameter(0)", f"  b = {s(bt, bshape)} parameter(1)"]
    x, y = "a", "b"
    if at != ct:
        lines.append(f"  ac = {s(ct, ashape)} convert(a)")
        x = "ac"
    if bt != ct:
        lines.append(f"  bc = {s(ct, bshape)} convert(b)")
        y = "bc"
    lines.append(f"  ROOT r = {s(ct, out_shape)} dot({x}, {y}), {dims}")
    return "HloModule m\nENTRY e {\n" + "\n".join(lines) + "\n}"
