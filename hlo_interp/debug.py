"""Debugging numbers: watch every instruction of a run (hlo-run --trace, --dump-intermediates,
--profile, and the progress display).

All of it rides on one hook of the evaluator, RunOptions.observer (evaluator.Observer): a plan
compiled with an observer calls it around each step, in every computation (loop bodies, called
computations, fusions); without one the plans are the plain fast ones.  `Session` is the observer
here: it follows the computations being run (which while loop, which iteration) and hands every
result to what is switched on:

    trace        stop at the first instruction that CREATED a NaN or an Inf (one whose operands had
                 none: an instruction fed NaN is not the origin; nor is a fusion, call or loop whose
                 instructions, all checked as they ran, created none: its NaN/Inf came from a constant
                 inside, like a causal mask's -inf), and say where it is: the instruction,
                 its computation and loop iteration, its source location (metadata), its operands'
                 summaries and the shortest path from the entry's parameters to it.  trace_range adds
                 overflow checks: a convert to f16/bf16/f8/f4 whose result reaches the type's largest
                 finite magnitude (saturated) or becomes Inf/NaN from finite values.
    dump         every (or every selected) value as .npy in a directory, plus index.json (order, name,
                 opcode, computation, iteration, shape, file), like StableHLO's probe.
    profile      wall time (self time: a while/call/fusion's own time excludes what its computations'
                 instructions took) and bytes allocated per instruction and per opcode.
    progress     instructions executed and while-loop iterations, for a live display.

Python API:

    rep = debug.trace(module, x, w)              # TraceReport: rep.found, rep.finding, print(rep.render())
    d = debug.dump(module, x, w, directory="out", only="dot|fusion.*")   # DumpResult: d.entries
    p = debug.profile(module, x, w)              # Profile: p.by_opcode(), p.table(), p.to_json()
    r = debug.run(module, x, w, trace=True, profile=True)   # all at once: DebugRun

Constants and constant-folded instructions are seen once per plan.  Vectorized fast paths (reduce,
sort and scatter comparators evaluated on whole arrays) are not looked into.
"""
from __future__ import annotations

import json
import os
import re
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Any, Optional

import numpy as np

from . import ir
from .diagnostics import HloError, format_bytes
from .evaluator import Observer, StopRun, describe_value
from .opcodes import opcodes_where
from .sources import source_location

__all__ = ["DEFAULT_DUMP_MAX_BYTES", "DebugRun", "DumpResult", "Profile", "ProgressObserver", "Session",
           "TraceFinding", "TraceReport", "blas_threads", "dump", "execute", "live_progress", "profile", "run",
           "source_location", "thread_limit", "trace", "value_summary"]

DEFAULT_DUMP_MAX_BYTES = 1 << 30


# --------------------------------------------------------------------------------------------------
# Values

def _leaves(v: Any, prefix: str = "") -> list[tuple[str, np.ndarray]]:
    """(leaf path like '0.1' or '' for a plain array, array) for the array leaves of a value."""
    if isinstance(v, tuple):
        out = []
        for k, x in enumerate(v):
            out.extend(_leaves(x, f"{prefix}.{k}" if prefix else str(k)))
        return out
    if isinstance(v, (np.ndarray, np.generic)):
        return [(prefix, np.asarray(v))]
    return []  # tokens


def _is_float(a: np.ndarray) -> bool:
    k = a.dtype.kind
    return k in "fc" or (k == "V" and "float" in a.dtype.name)


def _nonfinite(a: np.ndarray) -> tuple[int, int]:
    """(NaN count, Inf count) of a float or complex array; (0, 0) for anything else."""
    if not _is_float(a) or a.size == 0:
        return 0, 0
    if a.dtype.kind == "c":
        if np.isfinite(a).all():
            return 0, 0
        nan = np.isnan(a.real) | np.isnan(a.imag)
        inf = (np.isinf(a.real) | np.isinf(a.imag)) & ~nan
        return int(nan.sum()), int(inf.sum())
    if np.isfinite(a).all():
        return 0, 0
    return int(np.isnan(a).sum()), int(np.isinf(a).sum())


def _counts(v: Any) -> tuple[int, int]:
    nan = inf = 0
    for _, a in _leaves(v):
        n, i = _nonfinite(a)
        nan += n
        inf += i
    return nan, inf


def array_type_text(a: np.ndarray) -> str:
    """`f32[2,3]`: an array's HLO element type and dimensions."""
    return describe_value(a)


def _g(x: float) -> str:
    return f"{x:.6g}"


def value_summary(v: Any) -> str:
    """One line per leaf: type, min/max/mean of the finite values, NaN and Inf counts."""
    parts = []
    for path, a in _leaves(v):
        head = (f"{{{path}}} " if path else "") + array_type_text(a)
        if a.size == 0:
            parts.append(f"{head} empty")
            continue
        if a.dtype == np.bool_:
            parts.append(f"{head} true {int(a.sum())} of {a.size}")
            continue
        if not _is_float(a):
            parts.append(f"{head} min {int(a.min())} max {int(a.max())} "
                         f"mean {_g(float(a.astype(np.float64).mean()))}")
            continue
        nan, inf = _nonfinite(a)
        if a.dtype.kind == "c":
            z = a.astype(np.complex128).ravel()
            ok = np.isfinite(z)
            s = (f"max|x| {_g(float(np.abs(z[ok]).max()))} mean {complex(z[ok].mean()):.6g}" if ok.any()
                 else "no finite values")
        else:
            f = a.astype(np.float64).ravel()
            fin = f[np.isfinite(f)]
            s = (f"min {_g(float(fin.min()))} max {_g(float(fin.max()))} mean {_g(float(fin.mean()))}"
                 if fin.size else "no finite values")
        parts.append(f"{head} {s}  NaN {nan}  Inf {inf}")
    return "; ".join(parts) if parts else "token"


_LOW_PRECISION = ("f16", "bf16")


def _low_precision_max(a: np.ndarray) -> Optional[float]:
    """The largest finite magnitude of a 16-bit-or-narrower float type (None for other types)."""
    if not _is_float(a) or a.dtype.kind == "c" or a.dtype.itemsize > 2:
        return None
    import ml_dtypes
    try:
        return float(ml_dtypes.finfo(a.dtype).max)
    except (ValueError, TypeError):
        return None


# --------------------------------------------------------------------------------------------------
# Source locations from metadata (sources.py finds them)

def _location_text(src: dict) -> str:
    parts = []
    if src.get("source_file"):
        where = f"{src['source_file']}:{src['source_line']}" if src.get("source_line") is not None \
            else src["source_file"]
        if src.get("function"):
            where += f" ({src['function']})"
        parts.append(where)
    if src.get("op_name"):
        parts.append(f"op_name \"{src['op_name']}\"")
    if parts and src.get("via"):
        parts.append(f"(the metadata of its caller %{src['via']})")
    return ", ".join(parts) if parts else "(no metadata)"


# --------------------------------------------------------------------------------------------------
# Frames: which computation is running, called by what, in which loop iteration

class _Frame:
    __slots__ = ("comp", "caller", "iteration", "current", "bodies", "looked_inside")

    def __init__(self, comp, caller, iteration):
        self.comp = comp
        self.caller = caller  # the instruction of the parent frame that called this computation
        self.iteration = iteration  # while body/condition: the iteration number (0-based)
        self.current = None  # the instruction of this frame now running
        self.bodies = 0  # body runs of the `current` while so far
        self.looked_inside = None  # `current`, once a computation it calls has run under the observer


@dataclass
class TraceFinding:
    """Where the first NaN/Inf (or overflow) came from."""
    kind: str  # "nan", "inf", "input" (an entry parameter holds NaN/Inf), "overflow", "saturated"
    message: str
    instruction: str
    opcode: str
    computation: str
    text: str  # the instruction as HLO text
    hlo_location: Optional[str]  # file:line:col of the instruction in the HLO text
    source: dict  # source_location(...)
    context: list  # [{"computation", "called_by", "opcode", "iteration"}] outermost first
    result: str  # value_summary of the result
    operands: list  # [{"name", "summary", "nan", "inf"}]
    path: Optional[list]  # [{"computation", "name", "opcode"}] from an entry parameter to the instruction

    @property
    def iterations(self) -> list[int]:
        return [c["iteration"] for c in self.context if c.get("iteration") is not None]

    def to_dict(self) -> dict:
        return {k: getattr(self, k) for k in self.__dataclass_fields__}


@dataclass
class TraceReport:
    found: bool
    finding: Optional[TraceFinding]
    checked: int  # instructions whose results were checked
    results: Optional[list] = None  # the run's result leaves when it ran to the end

    def render(self) -> str:
        if not self.found:
            return f"trace: no NaN or Inf ({self.checked} instruction results checked)"
        return render_finding(self.finding, self.checked)

    def to_dict(self) -> dict:
        return {"found": self.found, "checked": self.checked,
                "finding": self.finding.to_dict() if self.finding else None}


def render_finding(f: TraceFinding, checked: int = 0) -> str:
    lines = [f"trace: {f.message}"]
    if checked:
        lines[0] += f" (after {checked} instruction results)"
    lines.append(f"  instruction  {f.text}")
    where = f"computation {f.computation}"
    if f.hlo_location:
        where += f" (at {f.hlo_location})"
    lines.append(f"  where        {where}")
    for k in range(len(f.context) - 1, 0, -1):
        c = f.context[k]
        line = f"               <- %{c['called_by']} ({c['opcode']}) in {f.context[k - 1]['computation']}"
        if c.get("iteration") is not None:
            line += f", iteration {c['iteration']}"
        lines.append(line)
    lines.append(f"  source       {_location_text(f.source)}")
    lines.append(f"  result       {f.result}")
    for k, o in enumerate(f.operands):
        lines.append(f"  operand {k}    %{o['name']}: {o['summary']}")
    if f.path is None:
        lines.append("  path         no parameter reaches it (constants only)")
    else:
        parts = []
        comp = None
        for p in f.path:
            head = f"[{p['computation']}] " if p["computation"] != comp else ""
            comp = p["computation"]
            parts.append(f"{head}%{p['name']} ({p['opcode']})")
        lines.append("  path         " + " -> ".join(parts))
    return "\n".join(lines)


# --------------------------------------------------------------------------------------------------
# Dump

@dataclass
class DumpResult:
    directory: str
    entries: list  # the index.json records
    bytes: int
    complete: bool
    results: Optional[list] = None


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.\-]", "_", name)


def _npy_write(path: str, a: np.ndarray) -> None:
    from .files import npy_bytes, write_atomic
    write_atomic(path, npy_bytes(a))


# --------------------------------------------------------------------------------------------------
# Profile

@dataclass
class Profile:
    """Per instruction: [computation, name, opcode, count, self seconds, bytes allocated].  A profile of
    several runs (Profile.median) holds each instruction's median time and the median wall time."""
    rows: list = field(default_factory=list)
    wall: float = 0.0  # the run's wall time (seconds), observer overhead included
    runs: int = 1
    blas: list = field(default_factory=list)  # [(library, threads)] of the BLAS libraries loaded (blas_threads)

    @classmethod
    def median(cls, profiles: list) -> "Profile":
        """One profile of several runs of the same plan: per instruction the median self time (counts and
        bytes of the first run), the median wall time."""
        import statistics
        first = profiles[0]
        times: dict[tuple, list] = {}
        for p in profiles:
            for r in p.rows:
                times.setdefault((r[0], r[1], r[2]), []).append(r[4])
        rows = [[c, n, o, k, statistics.median(times[(c, n, o)]), b] for c, n, o, k, _, b in first.rows]
        return cls(rows=rows, wall=statistics.median(p.wall for p in profiles), runs=len(profiles),
                   blas=list(first.blas))

    @property
    def threads_text(self) -> str:
        if not self.blas:
            return "BLAS threads: unknown (threadpoolctl found no BLAS library)"
        seen = sorted(set(self.blas))
        return "BLAS threads: " + ", ".join(f"{n} ({lib})" for lib, n in seen)

    @property
    def total_time(self) -> float:
        return sum(r[4] for r in self.rows)

    @property
    def total_bytes(self) -> int:
        return sum(r[5] for r in self.rows)

    @property
    def executed(self) -> int:
        return sum(r[3] for r in self.rows)

    def by_instruction(self, top: Optional[int] = None) -> list[dict]:
        rows = sorted(self.rows, key=lambda r: (-r[4], r[0], r[1]))
        out = [{"computation": c, "name": n, "opcode": o, "count": k, "seconds": t, "bytes": b}
               for c, n, o, k, t, b in rows]
        return out[:top] if top else out

    def by_opcode(self, top: Optional[int] = None) -> list[dict]:
        agg: dict[str, list] = {}
        for _, _, o, k, t, b in self.rows:
            a = agg.setdefault(o, [0, 0, 0.0, 0])
            a[0] += 1
            a[1] += k
            a[2] += t
            a[3] += b
        rows = sorted(agg.items(), key=lambda kv: (-kv[1][2], kv[0]))
        out = [{"opcode": o, "instructions": a[0], "count": a[1], "seconds": a[2], "bytes": a[3]}
               for o, a in rows]
        return out[:top] if top else out

    def to_json(self) -> dict:
        return {"wall_seconds": self.wall, "total_seconds": self.total_time, "total_bytes": self.total_bytes,
                "executed": self.executed, "runs": self.runs,
                "blas_threads": [{"library": lib, "threads": n} for lib, n in self.blas],
                "by_opcode": self.by_opcode(), "by_instruction": self.by_instruction()}

    @property
    def headline(self) -> str:
        runs = f", median of {self.runs} runs" if self.runs > 1 else ""
        return (f"profile: {self.executed} instructions executed, {format_ms(self.total_time)} in instructions "
                f"(wall {format_ms(self.wall)}{runs}), {format_bytes(self.total_bytes)} allocated; {self.threads_text}")

    def table(self, top: int = 20) -> str:
        """Plain-text tables (the CLI draws the same with rich on a terminal)."""
        tot = self.total_time or 1e-300
        out = [self.headline]
        out.append("")
        out.append(f"{'opcode':<24} {'instrs':>7} {'runs':>9} {'time':>11} {'%':>6} {'bytes':>11}")
        for r in self.by_opcode(top):
            out.append(f"{r['opcode']:<24} {r['instructions']:>7} {r['count']:>9} {format_ms(r['seconds']):>11} "
                       f"{100 * r['seconds'] / tot:>5.1f}% {format_bytes(r['bytes']):>11}")
        out.append(f"{'total':<24} {len(self.rows):>7} {self.executed:>9} {format_ms(self.total_time):>11} "
                   f"{100.0 if self.rows else 0.0:>5.1f}% {format_bytes(self.total_bytes):>11}")
        out.append("")
        out.append(f"{'instruction':<40} {'opcode':<20} {'runs':>7} {'time':>11} {'%':>6} {'bytes':>11}")
        for r in self.by_instruction(top):
            name = f"{r['computation']}/{r['name']}"
            if len(name) > 40:
                name = "..." + name[-37:]
            out.append(f"{name:<40} {r['opcode']:<20} {r['count']:>7} {format_ms(r['seconds']):>11} "
                       f"{100 * r['seconds'] / tot:>5.1f}% {format_bytes(r['bytes']):>11}")
        return "\n".join(out)


def blas_threads() -> list:
    """[(library, threads)] for the BLAS libraries loaded in this process (NumPy's, SciPy's), from
    threadpoolctl; [] when it is not installed."""
    try:
        import threadpoolctl
    except ImportError:  # pragma: no cover - a dependency, but keep profiling without it
        return []
    return [(i.get("internal_api", "?"), int(i.get("num_threads", 0)))
            for i in threadpoolctl.threadpool_info() if i.get("user_api") == "blas"]


class thread_limit:
    """Context manager: at most n BLAS threads (threadpoolctl) inside; n None: no change."""

    def __init__(self, n: Optional[int]):
        self.n = n
        self._ctl = None

    def __enter__(self):
        if self.n is not None:
            import numpy  # noqa: F401  (load NumPy's and SciPy's BLAS first, so that both are limited)
            import scipy.linalg  # noqa: F401
            import threadpoolctl
            self._ctl = threadpoolctl.threadpool_limits(limits=self.n, user_api="blas")
        return self

    def __exit__(self, *exc):
        if self._ctl is not None:
            self._ctl.restore_original_limits()
            self._ctl = None
        return False


def format_ms(s: float) -> str:
    """Seconds as milliseconds for the profile tables: `12.345 ms`."""
    return f"{s * 1e3:.3f} ms"


# Opcodes whose result is, or is made of, existing values: they allocate nothing (the table's `allocates`).
_NO_ALLOC = opcodes_where(lambda o: not o.allocates)


def _value_bytes(v: Any) -> int:
    return sum(a.nbytes for _, a in _leaves(v))


# --------------------------------------------------------------------------------------------------
# The observer

class _Stop:
    """StopRun payloads."""

    def __init__(self, kind: str, data: Any):
        self.kind = kind
        self.data = data


class Session(Observer):
    """One observer for every debugging feature; give it to evaluator.compile(..., observer=s), run,
    then read s.finding / s.dump_entries / s.profile_result()."""

    def __init__(self, module: ir.Module, *, trace: bool = False, trace_range: bool = False,
                 dump_dir: Optional[str] = None, only: Optional[str] = None,
                 dump_max_bytes: int = DEFAULT_DUMP_MAX_BYTES, profile: bool = False,
                 trace_continue: bool = False):
        self.module = module
        self.trace = trace or trace_range
        self.trace_range = trace_range
        # trace_continue: keep running after the finding (to the results, for --compare); later NaN/Inf
        # are not looked at
        self.trace_continue = trace_continue
        self.dump_dir = dump_dir
        try:
            self.only = re.compile(only) if only else None
        except re.error as e:
            raise ValueError(f"--only: not a regular expression: {only!r} ({e})") from None
        self.dump_max_bytes = int(dump_max_bytes)
        self.profiling = profile
        self.stack: list[_Frame] = []
        self.finding: Optional[TraceFinding] = None
        self.checked = 0
        self.executed = 0  # after() calls on executed instructions (not parameters/constants)
        self.dump_entries: list[dict] = []
        self.dump_bytes = 0
        self.dump_complete = True
        # profile: id(ins) -> [comp, name, opcode, count, seconds, bytes]
        self._prof: dict[int, list] = {}
        self._times: list[list] = []  # [ins, start, child seconds]
        self.loop_iterations: dict[str, int] = {}  # while instruction -> body runs (progress)
        self.current_loop: Optional[tuple[str, int]] = None
        self.t_start = time.perf_counter()
        self.t_end: Optional[float] = None
        # In-place updates of while-loop buffers (evaluator Observer.allows_in_place): trace reads a
        # step's operands (an in-place dynamic-update-slice's operand 0 would already hold the update)
        # and dump must show each value as it was; profile alone reads nothing of a value but its size,
        # and times the run as it runs without an observer.
        self.allows_in_place = not (self.trace or dump_dir is not None)
        if dump_dir is not None:
            os.makedirs(dump_dir, exist_ok=True)

    # -- frames --------------------------------------------------------------------------------
    def enter(self, comp, args):
        stack = self.stack
        parent = stack[-1] if stack else None
        caller = parent.current if parent is not None else None
        if parent is not None:
            parent.looked_inside = caller
        iteration = None
        if caller is not None and caller.opcode == "while":
            if comp.name == caller.attrs.get("body"):
                iteration = parent.bodies
                parent.bodies += 1
                self.loop_iterations[caller.name] = self.loop_iterations.get(caller.name, 0) + 1
                self.current_loop = (caller.name, iteration)
            else:
                iteration = parent.bodies
        stack.append(_Frame(comp, caller, iteration))

    def leave(self, comp):
        if self.stack:
            self.stack.pop()

    def before(self, ins, operands):
        if self.stack:
            fr = self.stack[-1]
            fr.current = ins
            fr.bodies = 0
            fr.looked_inside = None
        if self.profiling:
            self._times.append([ins, time.perf_counter(), 0.0])

    def after(self, ins, value, operands):
        t_after = time.perf_counter() if self.profiling else 0.0
        if self.profiling and self._times and self._times[-1][0] is ins:
            _, t0, child = self._times.pop()
            elapsed = t_after - t0
            if self._times:
                self._times[-1][2] += elapsed
            rec = self._prof.get(id(ins))
            if rec is None:
                rec = self._prof[id(ins)] = [self.stack[-1].comp.name if self.stack else "?", ins.name,
                                             ins.opcode, 0, 0.0, 0]
            rec[3] += 1
            rec[4] += elapsed - child
            # An operand handed back (an in-place dynamic-update-slice of a loop buffer, a copy that
            # is an identity here) allocates nothing.
            if ins.opcode not in _NO_ALLOC and not any(value is o for o in operands or ()):
                rec[5] += _value_bytes(value)
        if ins.opcode != "parameter" and ins.opcode != "constant":
            self.executed += 1
        if self.trace and self.finding is None:
            self._check(ins, value, operands)
        if self.dump_dir is not None:
            self._dump(ins, value)
        if self.profiling and self._times:  # the observer's own work is not the caller's
            self._times[-1][2] += time.perf_counter() - t_after

    # -- trace ---------------------------------------------------------------------------------
    def _check(self, ins, value, operands):
        op = ins.opcode
        if op == "constant":
            return
        if op == "parameter":
            if len(self.stack) > 1:
                return  # a called computation's parameter: its value was checked where it was made
            nan, inf = _counts(value)
            if nan or inf:
                self._found(ins, value, operands, "input",
                            f"the input %{ins.name} (parameter {ins.parameter_number}) holds "
                            f"{_nan_inf_text(nan, inf)}")
            self.checked += 1
            return
        self.checked += 1
        nan, inf = _counts(value)
        if nan or inf:
            onan = oinf = 0
            for x in operands:
                n, i = _counts(x)
                onan += n
                oinf += i
            new_nan = nan and not onan
            new_inf = inf and not (onan or oinf)
            if (new_nan or new_inf) and self.stack and self.stack[-1].looked_inside is ins:
                # a fusion, call, loop or branch whose instructions were all checked as they ran: none
                # created it, so it came from a constant inside (a causal mask's constant(-inf))
                return
            if new_nan or new_inf:
                what = "NaN" if new_nan else "Inf"
                kind = "nan" if new_nan else "inf"
                if new_nan:
                    had = "its operands had no NaN" + (f" ({oinf} Inf)" if oinf else "")
                else:
                    had = "its operands were finite"
                if self.trace_range and op == "convert" and not (onan or oinf) and _low_leaf(value):
                    kind = "overflow"
                    msg = f"%{ins.name} (convert) overflowed: {_nan_inf_text(nan, inf)} from finite values"
                else:
                    msg = f"first {what} produced by %{ins.name} ({op}): {_nan_inf_text(nan, inf)}; {had}"
                self._found(ins, value, operands, kind, msg)
            return
        if self.trace_range and op == "convert":
            for path, a in _leaves(value):
                top = _low_precision_max(a)
                if top is None or a.size == 0:
                    continue
                hit = int((np.abs(a.astype(np.float32)) >= top).sum())
                if hit:
                    from .types import from_dtype
                    try:
                        tname = from_dtype(a.dtype).name
                    except KeyError:
                        tname = str(a.dtype)
                    self._found(ins, value, operands, "saturated",
                                f"%{ins.name} (convert) saturated: {hit} of {a.size} values at {tname}'s "
                                f"largest finite magnitude {_g(top)}")

    def _found(self, ins, value, operands, kind, message):
        from .syntax.printer import instruction_text
        ctx = []
        for fr in self.stack:
            ctx.append({"computation": fr.comp.name,
                        "called_by": fr.caller.name if fr.caller is not None else None,
                        "opcode": fr.caller.opcode if fr.caller is not None else None,
                        "iteration": fr.iteration})
        ops = []
        for name, x in zip(ins.operands, operands):
            n, i = _counts(x)
            ops.append({"name": name, "summary": value_summary(x), "nan": n, "inf": i})
        loc = ins.loc
        hlo_loc = f"{loc.filename}:{loc.line}:{loc.column}" if loc is not None else None
        comp = self.stack[-1].comp.name if self.stack else "?"
        loops = [c for c in ctx if c["iteration"] is not None]
        if loops:
            message += f", in iteration {loops[-1]['iteration']} of %{loops[-1]['called_by']}"
        self.finding = TraceFinding(
            kind=kind, message=message, instruction=ins.name, opcode=ins.opcode, computation=comp,
            text=instruction_text(ins), hlo_location=hlo_loc, source=self._source(ins),
            context=ctx, result=value_summary(value), operands=ops, path=self._path(ins))
        if not self.trace_continue:
            raise StopRun(_Stop("trace", self.finding))

    def _source(self, ins) -> dict:
        """The instruction's metadata, else that of the nearest caller that has some ("via")."""
        src = source_location(ins, self.module)
        if src.get("source_file") or src.get("op_name"):
            return src
        for fr in reversed(self.stack):
            if fr.caller is not None:
                up = source_location(fr.caller, self.module)
                if up.get("source_file") or up.get("op_name"):
                    up["via"] = fr.caller.name
                    return up
        return src

    def _path(self, target) -> Optional[list]:
        """The shortest chain from an entry parameter to `target`, across the computations on the stack
        (a called computation's parameter k continues at its caller's operand k)."""
        stack = self.stack
        if not stack:
            return None
        by_name = [{i.name: i for i in fr.comp.instructions} for fr in stack]
        start = (len(stack) - 1, target.name)
        prev: dict[tuple, Optional[tuple]] = {start: None}
        queue = deque([start])
        found = None
        while queue:
            node = queue.popleft()
            level, name = node
            ins = by_name[level].get(name)
            if ins is None:
                continue
            if ins.opcode == "parameter":
                if level == 0:
                    found = node
                    break
                fr = stack[level]
                caller = fr.caller
                if caller is None:
                    continue
                nxt = _caller_operands(caller, fr.comp.name, ins.parameter_number or 0)
                nodes = [(level - 1, o) for o in nxt]
            else:  # data before predicates and indices: of equally short paths, the one values flow on
                scope = by_name[level]
                nodes = sorted(((level, o) for o in ins.operands), key=lambda n: not _carries(scope.get(n[1])))
            for n in nodes:
                if n not in prev:
                    prev[n] = node
                    queue.append(n)
        if found is None:
            return None
        out = []
        node = found
        while node is not None:
            level, name = node
            ins = by_name[level][name]
            out.append({"computation": stack[level].comp.name, "name": name, "opcode": ins.opcode})
            node = prev[node]
        return out

    # -- dump ----------------------------------------------------------------------------------
    def _selected(self, ins) -> bool:
        return self.only is None or bool(self.only.fullmatch(ins.name) or self.only.fullmatch(ins.opcode))

    def _dump(self, ins, value):
        if not self._selected(ins):
            return
        leaves = _leaves(value)
        if not leaves:
            return
        its = [fr.iteration for fr in self.stack if fr.iteration is not None]
        comp = self.stack[-1].comp.name if self.stack else "?"
        for path, a in leaves:
            if self.dump_bytes + a.nbytes > self.dump_max_bytes:
                self.dump_complete = False
                raise StopRun(_Stop("dump", f"the dump of %{ins.name} would pass the limit of "
                                            f"{format_bytes(self.dump_max_bytes)} ({len(self.dump_entries)} "
                                            f"files, {format_bytes(self.dump_bytes)} written); select values with "
                                            f"--only REGEX or raise --dump-max-bytes"))
            order = len(self.dump_entries)
            fname = f"{order:05d}_{_safe(ins.name)}"
            if its:
                fname += "_it" + "_".join(str(i) for i in its)
            if path:
                fname += "_" + path.replace(".", "_")
            fname += ".npy"
            try:
                _npy_write(os.path.join(self.dump_dir, fname), a)
            except OSError as e:
                self.dump_complete = False
                raise StopRun(_Stop("dump", f"cannot write {os.path.join(self.dump_dir, fname)}: "
                                            f"{e.strerror or e}")) from None
            self.dump_bytes += a.nbytes
            self.dump_entries.append({
                "order": order, "name": ins.name, "opcode": ins.opcode, "computation": comp,
                "iteration": its if its else None, "leaf": path or None,
                "shape": array_type_text(a), "dtype": a.dtype.name, "file": fname})

    def write_index(self) -> None:
        if self.dump_dir is None:
            return
        from .files import write_atomic
        doc = {"module": self.module.name, "complete": self.dump_complete, "bytes": self.dump_bytes,
               "entries": self.dump_entries}
        write_atomic(os.path.join(self.dump_dir, "index.json"), json.dumps(doc, indent=1) + "\n")

    # -- profile -------------------------------------------------------------------------------
    def profile_result(self) -> Profile:
        end = self.t_end if self.t_end is not None else time.perf_counter()
        return Profile(rows=[list(r) for r in self._prof.values()], wall=end - self.t_start, blas=blas_threads())

    def reset_run(self) -> None:
        """Forget what the last run's profile and progress counted (hlo-run --repeat runs a plan again)."""
        self._prof = {}
        self._times = []
        self.executed = 0
        self.loop_iterations = {}
        self.current_loop = None
        self.t_start = time.perf_counter()
        self.t_end = None


class ProgressObserver(Observer):
    """The light observer behind the live display: instructions executed, while-loop iterations.
    It watches only computations starting (one call per computation run, not per instruction): a
    plan runs all its steps, so each start adds the computation's step count.  It keeps and reads no
    value, so while-loop buffers stay updated in place (evaluator Observer.allows_in_place)."""

    allows_in_place = True

    def __init__(self, module: ir.Module):
        from .evaluator import execution_order
        self.executed = 0
        self.loop_iterations: dict[str, int] = {}
        self.current_loop: Optional[tuple[str, int]] = None
        bodies: dict[str, str] = {}  # body computation -> a while instruction running it
        for c in module.computations:
            for i in c.instructions:
                if i.opcode == "while" and isinstance(i.attrs.get("body"), str):
                    bodies.setdefault(i.attrs["body"], i.name)
        self._info: dict[str, tuple[int, Optional[str]]] = {}  # computation -> (steps its plan runs, while)
        for c in module.computations:
            try:
                n = sum(1 for i in execution_order(c) if i.opcode != "parameter")
            except HloError:
                n = 0  # never built (the build reports it) or never run
            self._info[c.name] = (n, bodies.get(c.name))

    def enter(self, comp, args):
        info = self._info.get(comp.name)
        if info is None:  # a computation of another module (e.g. a batch norm's expansion)
            from .evaluator import execution_order
            info = self._info[comp.name] = (sum(1 for i in execution_order(comp) if i.opcode != "parameter"), None)
        n, w = info
        self.executed += n
        if w is not None:
            k = self.loop_iterations.get(w, 0)
            self.loop_iterations[w] = k + 1
            self.current_loop = (w, k)


class _ProgressView:
    """What rich's Live redraws (a few times a second, from its own thread)."""

    def __init__(self, obs: Any, t0: Optional[float] = None):
        self.obs = obs
        self.t0 = time.perf_counter() if t0 is None else t0

    def __rich__(self):
        from rich.text import Text
        o = self.obs
        t = Text()
        t.append("running ", style="bold")
        t.append(f"{time.perf_counter() - self.t0:.1f} s · {o.executed:,} instructions")
        loop = o.current_loop
        if loop is not None:
            t.append(f" · while %{loop[0]} iteration {loop[1]:,}")
            if len(o.loop_iterations) > 1:
                t.append(f" ({sum(o.loop_iterations.values()):,} iterations of {len(o.loop_iterations)} loops)")
        return t


class live_progress:
    """Context manager: a transient rich live line on stderr, shown only after `delay` seconds (short
    runs print nothing); a no-op when obs is None."""

    def __init__(self, obs: Any, color: str = "auto", delay: float = 0.5):
        self.obs = obs
        self.color = color
        self.delay = delay
        self._live = None
        self._timer = None
        self._lock = None

    def _start(self):
        from rich.console import Console
        from rich.live import Live
        with self._lock:
            if self._timer is None:
                return  # already stopped
            force = {"always": True, "never": False}.get(self.color)
            console = Console(stderr=True, force_terminal=force,
                              no_color=self.color == "never" or "NO_COLOR" in os.environ)
            self._live = Live(_ProgressView(self.obs, self._t0), console=console, refresh_per_second=4, transient=True)
            self._live.start()

    def __enter__(self):
        if self.obs is None:
            return self
        import threading
        self._t0 = time.perf_counter()
        self._lock = threading.Lock()
        self._timer = threading.Timer(self.delay, self._start)
        self._timer.daemon = True
        self._timer.start()
        return self

    def __exit__(self, *exc):
        if self.obs is None:
            return False
        with self._lock:
            timer, self._timer = self._timer, None
            if timer is not None:
                timer.cancel()
            if self._live is not None:
                self._live.stop()
                self._live = None
        return False


def _carries(ins: Optional[ir.Instruction]) -> bool:
    """Whether an instruction's value holds floats (or is a tuple): what a NaN can travel in."""
    shape = ins.shape if ins is not None else None
    if isinstance(shape, ir.TupleShape):
        return True
    return isinstance(shape, ir.ArrayShape) and shape.element_type.kind in ("float", "complex")


def _low_leaf(v: Any) -> bool:
    return any(_low_precision_max(a) is not None for _, a in _leaves(v))


def _nan_inf_text(nan: int, inf: int) -> str:
    parts = []
    if nan:
        parts.append(f"{nan} NaN")
    if inf:
        parts.append(f"{inf} Inf")
    return " and ".join(parts)


def _caller_operands(caller: ir.Instruction, comp_name: str, k: int) -> list[str]:
    """The caller's operand(s) that computation `comp_name`'s parameter k receives."""
    ops = list(caller.operands)
    a = caller.attrs
    if caller.opcode == "while":
        return ops[:1]
    if caller.opcode == "conditional":
        names = a.get("branch_computations")
        if isinstance(names, tuple) and comp_name in names:
            return [ops[1 + names.index(comp_name)]]
        if a.get("true_computation") == comp_name:
            return ops[1:2]
        if a.get("false_computation") == comp_name:
            return ops[2:3]
        return ops[1:]
    if (caller.opcode in ("call", "fusion", "map", "async-start", "custom-call")
            or caller.opcode.startswith("batch-norm")) and k < len(ops):
        return [ops[k]]
    return ops  # reducers, comparators, scatter/select: any operand may feed them


# --------------------------------------------------------------------------------------------------
# Running

@dataclass
class DebugRun:
    results: Optional[list]
    trace: Optional[TraceReport] = None
    dump: Optional[DumpResult] = None
    profile: Optional[Profile] = None
    error: Optional[str] = None  # why the run stopped early (the dump's byte limit)


def execute(exe, session: Session, args: list) -> DebugRun:
    """Run a compiled Executable (built with observer=session) on prepared-or-raw arguments and
    collect what the session saw.  HloErrors propagate (after the dump's index is written)."""
    results = None
    error = None
    try:
        results = exe(*args)
    except StopRun as e:
        payload = e.payload
        if not isinstance(payload, _Stop):
            raise HloError(f"the run was stopped: {payload}") from None
        if payload.kind == "dump":
            error = payload.data
    finally:
        session.t_end = time.perf_counter()
        session.stack.clear()
        session.write_index()
    out = DebugRun(results=results, error=error)
    if session.trace:
        out.trace = TraceReport(found=session.finding is not None, finding=session.finding,
                                checked=session.checked, results=results)
    if session.dump_dir is not None:
        out.dump = DumpResult(directory=session.dump_dir, entries=list(session.dump_entries),
                              bytes=session.dump_bytes, complete=session.dump_complete, results=results)
    if session.profiling:
        out.profile = session.profile_result()
    return out


_RUN_KW = ("max_bytes", "max_iterations", "fake_constants", "validate", "computation", "denormals")


def run(module: ir.Module, *args: Any, trace: bool = False, trace_range: bool = False,
        dump_dir: Optional[str] = None, only: Optional[str] = None,
        dump_max_bytes: int = DEFAULT_DUMP_MAX_BYTES, profile: bool = False, **run_kw: Any) -> DebugRun:
    """Run `module` on `args` with the debugging features asked for (see the module doc);
    run_kw: max_bytes, max_iterations, fake_constants, validate, computation, denormals."""
    from .evaluator import compile as build
    bad = [k for k in run_kw if k not in _RUN_KW]
    if bad:
        raise TypeError(f"unexpected keyword argument {bad[0]!r}")
    session = Session(module, trace=trace, trace_range=trace_range, dump_dir=dump_dir, only=only,
                      dump_max_bytes=dump_max_bytes, profile=profile)
    exe = build(module, observer=session, **run_kw)
    session.t_start = time.perf_counter()
    return execute(exe, session, list(args))


def trace(module: ir.Module, *args: Any, trace_range: bool = False, **run_kw: Any) -> TraceReport:
    """Run and stop at the first instruction that produced a NaN or Inf: a TraceReport."""
    return run(module, *args, trace=True, trace_range=trace_range, **run_kw).trace


def dump(module: ir.Module, *args: Any, directory: str, only: Optional[str] = None,
         max_bytes_total: int = DEFAULT_DUMP_MAX_BYTES, **run_kw: Any) -> DumpResult:
    """Write every (or every `only`-selected: a regex matching the whole name or opcode) value as
    .npy in `directory`, with index.json.  Raises HloError when the dump would pass max_bytes_total
    (the index then lists what was written)."""
    r = run(module, *args, dump_dir=directory, only=only, dump_max_bytes=max_bytes_total, **run_kw)
    if r.error:
        raise HloError(r.error)
    return r.dump


def profile(module: ir.Module, *args: Any, repeat: int = 1, threads: Optional[int] = None,
            **run_kw: Any) -> Profile:
    """Time and bytes per instruction and per opcode (Profile); repeat > 1: the plan run that many times,
    each instruction's median time (Profile.median); threads: at most that many BLAS threads."""
    from .evaluator import compile as build
    if repeat < 1:
        raise ValueError("repeat must be >= 1")
    bad = [k for k in run_kw if k not in _RUN_KW]
    if bad:
        raise TypeError(f"unexpected keyword argument {bad[0]!r}")
    session = Session(module, profile=True)
    exe = build(module, observer=session, **run_kw)
    profiles = []
    with thread_limit(threads):
        for _ in range(repeat):
            session.reset_run()
            profiles.append(execute(exe, session, list(args)).profile)
    return profiles[0] if repeat == 1 else Profile.median(profiles)
