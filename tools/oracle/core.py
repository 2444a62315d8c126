"""A case declaration and the one loop that runs it on XLA:CPU (runner.py) and writes its case directory
(writer.py)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Optional, Sequence

import numpy as np


@dataclass
class Decl:
    """One case: hand-written HLO text (`hlo`) or a JAX function (`fn`), its arguments and its rule."""
    family: str
    name: str
    args: Sequence
    hlo: Optional[str] = None
    fn: Optional[Callable] = None
    compare: Any = "exact"
    note: str = ""
    extra: dict = field(default_factory=dict)
    keep_after: bool = True  # store XLA's optimized text as after.hlo (a second variant)
    keep_unused: bool = True  # jax.jit(fn, keep_unused=...)
    ref: Optional[str] = None  # an equivalent text XLA:CPU runs instead of `hlo` (kept in case.json)
    out_compare: Optional[Callable] = None  # XLA's outputs -> {k: (rule, reason)} for outputs with their own rule

    def run(self) -> tuple[dict, list[np.ndarray], str]:
        from . import runner
        args = [np.asarray(a) for a in self.args]
        if self.hlo is not None:
            after, outs = runner.run_hlo(self.ref or self.hlo, args)
            texts, source = {"before": self.hlo, "after": after}, "hand-written HLO"
        else:
            before, after, outs = runner.run_jax(self.fn, args, keep_unused=self.keep_unused)
            texts, source = {"before": before, "after": after}, "jax.jit"
        if not self.keep_after:
            del texts["after"]
        return texts, outs, source

    def write(self):
        from .writer import write_case
        texts, outs, source = self.run()
        extra = dict(self.extra)
        if self.note:
            extra = {"note": self.note, **extra}
        if self.ref:
            extra["ref"] = self.ref
        oc = self.out_compare(outs) if self.out_compare else None
        return write_case(self.family, self.name, texts, self.args, outs, source=source, compare=self.compare,
                          out_compare=oc or None, extra=extra)
