"""domain: XLA's sharding-domain marker; XLA:CPU passes the operand through (it keeps the instruction
in its optimized module)."""
from __future__ import annotations

import numpy as np

from ..core import Decl

FAMILY = "domain"


def declare() -> list[Decl]:
    x = np.array([1.5, -0.0, np.inf, -2.25], np.float32)
    s = np.array([[1, -2, 3], [4, 5, -6]], np.int32)
    return [
        Decl(FAMILY, "domain_sharding_f32", [x], hlo="""HloModule domain_sharding_f32

ENTRY main {
  v = f32[4] parameter(0)
  d = f32[4] domain(v), domain={kind="sharding", entry={maximal device=0}, exit={maximal device=0}}
  ROOT n = f32[4] negate(d)
}
"""),
        Decl(FAMILY, "domain_chain_s32", [s], hlo="""HloModule domain_chain_s32

ENTRY main {
  v = s32[2,3] parameter(0)
  d1 = s32[2,3] domain(v), domain={kind="sharding", entry={maximal device=0}, exit={replicated}}
  d2 = s32[2,3] domain(d1), domain={kind="sharding", entry={replicated}, exit={maximal device=0}}
  ROOT a = s32[2,3] add(d2, v)
}
"""),
    ]
