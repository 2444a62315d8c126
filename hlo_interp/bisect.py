"""Which compiler pass changed the numbers?  Bisect a per-pass dump (XLA_FLAGS=--xla_dump_hlo_pass_re=.*).

XLA writes the module after every pass that changed it (module_N.NAME.NNNN.PIPELINE.after_PASS[.before_NEXT].txt),
between its before_optimizations and after_optimizations texts.  `bisect_passes` runs the first text (the
reference) and the last; when their results differ beyond tolerance it bisects the pass sequence for the
first text whose results leave tolerance (assuming that, once out, they stay out), then says what that
pass changed (a structural diff against the text before it) and where the values first part: the first
instruction of the entry computation, in execution order, present in both texts with the same shape,
whose value differs beyond tolerance.

No command-line code here: the judge (what "within tolerance" means) and the inputs come from the caller.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Optional

from .diagnostics import HloError
from .dumps import AFTER, BEFORE, DumpFile, DumpModule, load
from .evaluator import Observer

# judge(got leaves, reference leaves) -> (ok, one line per leaf)
Judge = Callable[[list, list], "tuple[bool, list[str]]"]


def pass_sequence(mod: DumpModule) -> list[DumpFile]:
    """before_optimizations, the per-pass texts in order, after_optimizations (those present)."""
    seq = []
    if BEFORE in mod.stages():
        seq.append(mod.file_for(BEFORE))
    seq += list(mod.passes)
    after = [s for s in mod.stages() if s.endswith(AFTER)]
    if after:
        seq.append(mod.file_for(after[0]))
    return seq


def label(f: DumpFile) -> str:
    if f.pass_number is not None:
        return f"{f.pass_number:04d} {f.pipeline}/after_{f.after_pass}"
    return f.stage_label


@dataclass
class Step:
    index: int
    file: DumpFile
    ok: Optional[bool] = None
    lines: list = field(default_factory=list)
    error: Optional[str] = None


@dataclass
class Divergence:
    instruction: Any            # ir.Instruction of the later text
    before: Any                 # its value in the earlier text
    after: Any                  # its value in the later text
    lines: list                 # the judge's lines
    new_operands: list          # operand names that the earlier text's entry does not have


@dataclass
class BisectResult:
    sequence: list              # DumpFiles
    steps: list                 # Steps run, in the order run
    culprit: Optional[int] = None   # index in sequence of the first text out of tolerance
    diff: Any = None            # diff.DiffResult of sequence[culprit - 1] -> sequence[culprit]
    divergence: Optional[Divergence] = None

    @property
    def pass_name(self) -> Optional[str]:
        if self.culprit is None:
            return None
        f = self.sequence[self.culprit]
        return f.after_pass if f.pass_number is not None else label(f)


class _Recorder(Observer):
    """Values of the entry computation's instructions (not those inside fusions, loops or calls)."""

    def __init__(self):
        self.depth = 0
        self.values: dict = {}
        self.order: list = []

    def enter(self, comp, args):
        self.depth += 1

    def leave(self, comp):
        self.depth -= 1

    def after(self, ins, value, operands):
        if self.depth == 1 and ins.name not in self.values:
            self.values[ins.name] = value
            self.order.append(ins)


def run_file(f: DumpFile, make_args: Callable, record: bool = False):
    """(result leaves, recorder or None) of one text on the arguments make_args(params) gives."""
    from .evaluator import compile as build
    mod = load(f).module
    rec = _Recorder() if record else None
    exe = build(mod, observer=rec)
    leaves = exe(*make_args(exe.params))
    return leaves, rec, mod


def bisect_passes(sequence: list, make_args: Callable, judge: Judge, value_judge: Callable,
                  progress: Optional[Callable] = None) -> BisectResult:
    """Find the first text of `sequence` whose results leave tolerance of the first's (see the module doc)."""
    if len(sequence) < 2:
        raise HloError("a per-pass dump needs at least two texts of the module (XLA_FLAGS=--xla_dump_to=DIR "
                       "--xla_dump_hlo_pass_re=.*)")
    res = BisectResult(sequence, [])
    ref, _, _ = run_file(sequence[0], make_args)

    def check(i: int) -> bool:
        st = Step(i, sequence[i])
        try:
            leaves, _, _ = run_file(sequence[i], make_args)
            st.ok, st.lines = judge(leaves, ref)
        except HloError as e:
            st.ok, st.error = False, e.message
        res.steps.append(st)
        if progress is not None:
            progress(st)
        return bool(st.ok)

    lo, hi = 0, len(sequence) - 1
    if check(hi):
        return res
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if check(mid):
            lo = mid
        else:
            hi = mid
    res.culprit = hi
    from .diff import diff_modules
    a, b = load(sequence[lo]).module, load(sequence[hi]).module
    res.diff = diff_modules(a, b, frozenset({"metadata"}), a_name=str(sequence[lo].path),
                            b_name=str(sequence[hi].path))
    res.divergence = first_divergence(sequence[lo], sequence[hi], make_args, value_judge)
    return res


def first_divergence(f_lo: DumpFile, f_hi: DumpFile, make_args: Callable, value_judge: Callable):
    """The first instruction of f_hi's entry (execution order) whose value differs beyond tolerance from
    the same-named, same-shaped instruction of f_lo's entry."""
    try:
        _, rec_lo, _ = run_file(f_lo, make_args, record=True)
        _, rec_hi, _ = run_file(f_hi, make_args, record=True)
    except HloError:
        return None
    lo_names = set(rec_lo.values)
    for ins in rec_hi.order:
        if ins.opcode in ("parameter", "tuple", "get-tuple-element") or ins.name not in rec_lo.values:
            continue
        a, b = rec_lo.values[ins.name], rec_hi.values[ins.name]
        if isinstance(a, tuple) or isinstance(b, tuple) or getattr(a, "shape", None) != getattr(b, "shape", None):
            continue
        ok, lines = value_judge(b, a)
        if not ok:
            return Divergence(ins, a, b, lines, [o for o in ins.operands if o not in lo_names])
    return None
