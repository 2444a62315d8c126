"""scan: hand-written scan modules (the spec's EX-45, reverse, two inputs and two carries along dimension 1,
scalar outputs, no carry), run by XLA:CPU; compared byte for byte."""
from __future__ import annotations

import ml_dtypes
import numpy as np

from ..core import Decl

FAMILY = "scan"

_ADD_C = """add_c {
  x = s32[] parameter(0)
  c = s32[] parameter(1)
  s = s32[] add(x, c)
  ROOT t = (s32[], s32[]) tuple(s, s)
}
"""

SCAN_CASES = {
    # name: (module, inputs)
    "ex45": ("HloModule m\n" + _ADD_C + """ENTRY e {
  p = s32[3] parameter(0)
  z = s32[] constant(0)
  ROOT r = (s32[3], s32[]) scan(p, z), dimensions={0}, num_carries=1, to_apply=add_c
}
""", [np.array([1, 2, 3], np.int32)]),
    "ex45_reverse": ("HloModule m\n" + _ADD_C + """ENTRY e {
  p = s32[3] parameter(0)
  z = s32[] constant(0)
  ROOT r = (s32[3], s32[]) scan(p, z), dimensions={0}, num_carries=1, is_reverse=true, to_apply=add_c
}
""", [np.array([1, 2, 3], np.int32)]),
    "two_inputs_two_carries_dim1": ("""HloModule m
body {
  x = f32[2] parameter(0)
  y = u8[2] parameter(1)
  c = f32[2] parameter(2)
  n = u8[] parameter(3)
  yf = f32[2] convert(y)
  m = f32[2] multiply(x, c)
  o = f32[2] add(m, yf)
  nb = u8[2] broadcast(n), dimensions={}
  w = u8[2] add(y, nb)
  one = u8[] constant(100)
  n2 = u8[] add(n, one)
  ROOT t = (f32[2], u8[2], f32[2], u8[]) tuple(o, w, o, n2)
}
ENTRY e {
  x = f32[2,4] parameter(0)
  y = u8[2,4] parameter(1)
  c = f32[2] parameter(2)
  n = u8[] constant(7)
  ROOT r = (f32[2,4], u8[2,4], f32[2], u8[]) scan(x, y, c, n), dimensions={1}, num_carries=2, to_apply=body
}
""", [np.array([[0.5, -1, 2, 3], [1.25, 0, -2, 4]], np.float32),
      np.array([[1, 200, 3, 255], [9, 8, 7, 250]], np.uint8), np.array([1, -3], np.float32)]),
    "scalar_outputs_f64": ("""HloModule m
plus {
  a = f64[] parameter(0)
  b = f64[] parameter(1)
  ROOT s = f64[] add(a, b)
}
body {
  x = f64[2] parameter(0)
  c = f64[] parameter(1)
  z = f64[] constant(0)
  s = f64[] reduce(x, z), dimensions={0}, to_apply=plus
  c2 = f64[] multiply(c, s)
  ROOT t = (f64[], f64[]) tuple(s, c2)
}
ENTRY e {
  x = f64[3,2] parameter(0)
  one = f64[] constant(1)
  ROOT r = (f64[3], f64[]) scan(x, one), dimensions={0}, num_carries=1, is_reverse=true, to_apply=body
}
""", [np.array([[0.1, 0.2], [1e300, 1e10], [-3, 0.5]], np.float64)]),
    "bf16_no_carry": ("""HloModule m
body {
  x = bf16[] parameter(0)
  e = bf16[] exponential(x)
  ROOT t = (bf16[]) tuple(e)
}
ENTRY e {
  x = bf16[5] parameter(0)
  ROOT r = (bf16[5]) scan(x), dimensions={0}, num_carries=0, to_apply=body
}
""", [np.array([0, 1, -1, 10, 100], np.float32).astype(ml_dtypes.bfloat16)]),
}


def declare() -> list[Decl]:
    return [Decl(FAMILY, name, args, hlo=text, compare="bits", keep_after=False)
            for name, (text, args) in sorted(SCAN_CASES.items())]
