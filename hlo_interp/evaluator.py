"""The evaluator: each computation is turned ONCE into a plan, then run as often as needed.

A plan is a list of steps `(kernel, operand slots, result slot, instruction)` in dependency order, with
each operand resolved to a slot index ahead of time and, per step, the slots whose value dies there (their
last use).  The plan is then compiled to one small Python function (generated source, one line per
step), so that running it costs one closure call per instruction and nothing else: no dictionary
lookups, no per-step type tests.  Values are freed (`del`) right after their last use.

Called computations (to_apply=, calls=, condition=, body=, branches) are compiled on demand through
`ctx.call(name)` and cached by name; everything reachable from the entry is compiled before anything
runs, so an unsupported opcode anywhere fails before a single instruction executes.

    exe = compile(module)                  # build every plan once
    outs = exe(x, w)                       # -> list of arrays: the result's leaves, depth-first
    outs = run(module, x, w)               # the same in one call (plans are cached on the module)
"""
from __future__ import annotations

import builtins
import functools
import os
import warnings
from typing import Any, Callable, Optional

import numpy as np

from . import ir
from .diagnostics import HloError, format_bytes
from .records import record
from .in_place import callee_marks, in_place_elements
from .opcodes import called_computation_attrs, opcodes_where
from .ops import dead_code, excess_precision, load_all
from .ops.contraction import Plan as Contractions
from .ops.dynamic import adapt_dynamic, entry_result_buffers, has_bounded_dynamic, module_has_dynamic
from .ops.numerics import flush_denormals as _flush_denormals
from .ops.registry import KERNELS, TOKEN, error_at, unsupported

__all__ = ["RunOptions", "EvalContext", "Executable", "compile", "run", "default_max_bytes",
           "flatten_result", "describe_value", "Observer", "StopRun", "make_options", "ordered_parameters",
           "execution_order", "value_mismatch", "COMPUTATION_ATTRS"]

DEFAULT_MAX_ITERATIONS = 1_000_000  # loop iterations per run, all loops together
# In-place dynamic-update-slice in while loops (hlo_interp.in_place).  Read when plans are built;
# HLO_INTERP_IN_PLACE=0 turns it off (A/B benchmarks, bisecting a suspected aliasing bug).
IN_PLACE_LOOPS = os.environ.get("HLO_INTERP_IN_PLACE", "1") != "0"

# Opcodes that allocate nothing new (their result is, or is made of, existing values).
_NO_ALLOC = opcodes_where(lambda o: not o.allocates)
# Attributes that name called computations (the table's `comp`/`comps` attributes).
COMPUTATION_ATTRS = called_computation_attrs()
# Opcodes evaluated while a plan is built when their operands are constants (the table's `foldable`,
# an allow-list: effects, randomness, calls that may loop for long are not; nor the SPMD pass's
# spmd-global-to-local/spmd-local-to-global, which are no opcodes of the table).
_FOLDABLE = opcodes_where(lambda o: o.foldable)
_FOLD_MAX_BYTES = 1 << 20
# Opcodes with effects beyond their value: kept in a plan even when nothing uses their result, so that
# an unsupported one fails instead of being skipped.
_SIDE_EFFECTS = opcodes_where(lambda o: o.side_effect)


@functools.lru_cache(maxsize=None)
def default_max_bytes() -> int:
    """Half of the machine's memory (MemTotal), or 8 GiB when it cannot be read."""
    from .files import half_of_memory
    return half_of_memory()


@record(frozen=True)
class RunOptions:
    max_bytes: int
    max_iterations: int = DEFAULT_MAX_ITERATIONS
    fake_constants: bool = False
    validate: bool = False  # check every result's shape and dtype against its instruction (tests, debugging)
    flush_denormals: bool = True  # XLA:CPU's FTZ+DAZ for f32/f64 (and bf16/f8 computed in f32)
    # An object watching every step (hlo_interp.debug: trace, dump, profile, progress); None = the fast
    # path, whose generated code has no trace of it.  See Observer.
    observer: Any = None


class Observer:
    """RunOptions.observer: plans compiled with an observer call its methods around every step, in
    every computation (loop bodies, called computations, fusions).  Override what you need: only the
    methods a subclass overrides are called (objects not derived from Observer: those they have).

      enter(comp, args)           a computation's plan starts, on its parameter values
      before(ins, operands)       an instruction is about to run
      after(ins, value, operands) it ran: its value and its operands' values (parameters: after
                                  enter, operands (); constants and constant-folded instructions: once
                                  per plan, at their place, with their constant operands)
      leave(comp)                 the plan ends (also when it fails or stops)

    Raise StopRun(payload) from a method to end the run at once (Executable.execute re-raises it).
    Vectorized fast paths (reduce, sort, scatter comparators on whole arrays) may call a computation
    on arrays, or not at all.

    allows_in_place: False (the default) turns off the in-place update of while-loop buffers for the
    run (see hlo_interp.in_place), so that every value and operand an observer is shown stays what
    it was (it may keep them, dump them later, compare operands with results).  An observer that keeps
    no value past the call and reads no operand of a step after the step ran may set it to True."""

    allows_in_place = False

    def enter(self, comp: ir.Computation, args: tuple) -> None:
        pass

    def before(self, ins: ir.Instruction, operands: tuple) -> None:
        pass

    def after(self, ins: ir.Instruction, value: Any, operands: tuple) -> None:
        pass

    def leave(self, comp: ir.Computation) -> None:
        pass


class StopRun(BaseException):
    """Raised by an observer to stop a run (a BaseException: kernels that catch Exception to try
    another evaluation path must not swallow it)."""

    def __init__(self, payload: Any = None):
        super().__init__(payload)
        self.payload = payload


def _observed(obs: Any, name: str) -> bool:
    """Whether the generated plan should call obs.<name>."""
    fn = getattr(type(obs), name, None)
    if fn is None:
        return callable(getattr(obs, name, None))
    return fn is not getattr(Observer, name)


def shape_bytes(shape: ir.Shape) -> int:
    """Bytes a value of this shape takes as NumPy arrays (sub-byte types take one byte per element)."""
    if isinstance(shape, ir.TupleShape):
        return sum(shape_bytes(s) for s in shape.elements)
    if isinstance(shape, ir.ArrayShape) and shape.element_type.dtype is not None:
        return shape.num_elements() * shape.element_type.dtype.itemsize
    return 0


# --------------------------------------------------------------------------------------------------
# The context kernels see

class EvalContext:
    """What kernel builders get (see ops/registry.py): the module, options, called computations."""

    def __init__(self, module: ir.Module, options: RunOptions):
        self.module = module
        self.options = options
        self._comps = {c.name: c for c in module.computations}
        self._plans: dict[str, Callable] = {}
        self._building: set[str] = set()
        self._scopes: list[dict[str, ir.Instruction]] = []  # name -> instruction, computations being built
        self.plan_steps: dict[str, list] = {}  # computation name -> its plan (for tests and tools)
        self.plan_sources: dict[str, str] = {}  # computation name -> the generated Python source
        # In-place loop buffers: the marks of each computation being built (instruction name -> how it
        # updates in place; empty for every ordinary plan), the in-place variants of plans, and which
        # while loops got one (while instruction name -> the tuple elements updated in place).
        self._in_place_stack: list[dict] = []
        self._variants: dict[tuple, Callable] = {}
        self.in_place_loops: dict[str, tuple[int, ...]] = {}
        # The simulated device this context runs on (hlo_interp.spmd.Device: replica, partition, and
        # the communicator collectives meet at); None on a plain single-device run.
        self.device: Any = None
        # Loop iterations left in this run (the while kernels count down; Executable.execute resets it).
        self.loop_budget = [options.max_iterations]
        # Compiled plan code by a digest of its generated source (compile()'s plan_code): the code of a
        # source seen before is reused instead of compiled again.  None: compile every plan.
        self.plan_code: Optional[dict] = None
        self.has_dynamic = module_has_dynamic(module)  # any dynamic dimension: kernels get adapt_dynamic

    def computation(self, name: str, ins: Optional[ir.Instruction] = None) -> ir.Computation:
        comp = self._comps.get(name)
        if comp is None:
            msg = f"no computation named '{name}' in the module"
            raise error_at(ins, msg) if ins is not None else HloError(msg)
        return comp

    def call(self, name: str, ins: Optional[ir.Instruction] = None) -> Callable:
        """The compiled plan of computation `name`: f(*values) -> value (built once, cached)."""
        fn = self._plans.get(name)
        if fn is None:
            fn = self._plans[name] = self._build(name, ins, {})  # an ordinary plan never writes in place
        return fn

    def _build(self, name: str, ins: Optional[ir.Instruction], marks: dict,
               label: Optional[str] = None) -> Callable:
        """Compile computation `name` with the in-place `marks` (refusing recursion)."""
        comp = self.computation(name, ins)
        if name in self._building:
            raise (error_at(ins, f"computation '{name}' calls itself") if ins is not None
                   else HloError(f"computation '{name}' calls itself"))
        self._building.add(name)
        self._in_place_stack.append(marks)
        try:
            return _compile_computation(comp, self, label)
        finally:
            self._in_place_stack.pop()
            self._building.discard(name)

    @property
    def in_place(self) -> dict:
        """For kernel builders: the marks of the computation being built (instruction name -> DUS for a
        dynamic-update-slice that may write into its operand 0, or the parameter numbers (a tuple) of a
        call/fusion whose callee's in-place variant to use); {} for every ordinary plan."""
        return self._in_place_stack[-1] if self._in_place_stack else {}

    def _call_variant(self, name: str, marks: dict, label: str, ins: Optional[ir.Instruction]) -> Callable:
        key = (name, tuple(sorted(marks.items())))
        fn = self._variants.get(key)
        if fn is None:
            fn = self._variants[key] = self._build(name, ins, marks, f"{name} [{label}]")
        return fn

    def while_body_in_place(self, ins: ir.Instruction) -> Optional[tuple[Callable, tuple[int, ...]]]:
        """For the while kernel: (the in-place variant of the body's plan, the tuple elements it updates
        in place), or None when no element qualifies or in-place updates are off (IN_PLACE_LOOPS, an
        observer that does not allow them).  The caller must give the variant a tuple whose elements
        listed are its own copies (see hlo_interp.in_place)."""
        obs = self.options.observer
        if not IN_PLACE_LOOPS or (obs is not None and getattr(obs, "allows_in_place", False) is not True):
            return None
        name = ins.attrs.get("body")
        if not isinstance(name, str) or name not in self._comps:
            return None
        found = in_place_elements(self.computation(name), self._comps)
        if found is None:
            return None
        marks, elements = found
        fn = self._call_variant(name, marks, "in place: elements " + ",".join(map(str, elements)), ins)
        self.in_place_loops[ins.name] = elements
        return fn, elements

    def callee_in_place(self, name: str, params: tuple, ins: Optional[ir.Instruction] = None) -> Callable:
        """For the call/fusion kernels in an in-place plan: the variant of `name` that updates its
        parameters `params` in place (in_place_elements verified the chains before marking the caller)."""
        marks = callee_marks(self.computation(name, ins), params, self._comps)
        return self._call_variant(name, marks, "in place: parameters " + ",".join(map(str, params)), ins)

    def module_plan(self, module: ir.Module) -> Callable:
        """For kernels that run a module of their own (batch norm's expansion): the plan of its entry
        computation, built (with every computation it calls) under this context's options."""
        exe = Executable(module, self.options)
        return exe.ctx.call(exe.entry.name)

    def operand_shapes(self, ins: ir.Instruction) -> list:
        """The shapes of an instruction's operands (while its computation's plan is being built)."""
        scope = self._scopes[-1] if self._scopes else {}
        out = []
        for name in ins.operands:
            op = scope.get(name)
            if op is None:
                raise error_at(ins, f"operand '{name}' is not defined")
            out.append(op.shape)
        return out

    def num_parameters(self, name: str, ins: Optional[ir.Instruction] = None) -> int:
        return len(ordered_parameters(self.computation(name, ins)))

    def check_alloc(self, ins: ir.Instruction, shape: Optional[ir.Shape] = None) -> None:
        """Raise a located HloError if a value of `shape` would exceed max_bytes."""
        shape = ins.shape if shape is None else shape
        if shape is None:
            return
        need = shape_bytes(shape)
        if need > self.options.max_bytes:
            need_text, limit_text = format_bytes(need, "bytes"), format_bytes(self.options.max_bytes, "bytes")
            raise error_at(ins, f"result {shape.text(layouts=False)} needs {need_text}, above the "
                                f"limit of {limit_text} (max_bytes / --max-bytes)")


# --------------------------------------------------------------------------------------------------
# Building plans

def ordered_parameters(comp: ir.Computation) -> list[ir.Instruction]:
    """A computation's parameter instructions in number order (numbers must be 0..n-1: a located error
    otherwise)."""
    ps = [i for i in comp.instructions if i.opcode == "parameter"]
    ps.sort(key=lambda i: i.parameter_number or 0)
    for k, p in enumerate(ps):
        if p.parameter_number != k:
            raise error_at(p, f"computation '{comp.name}' has parameters numbered "
                              f"{sorted(q.parameter_number for q in ps)}; expected 0..{len(ps) - 1}")
    return ps


def _deps(ins: ir.Instruction):
    preds = ins.attrs.get("control-predecessors")
    return ins.operands if not preds else list(ins.operands) + list(preds)


def execution_order(comp: ir.Computation) -> list[ir.Instruction]:
    """Instructions reachable from the root (plus effectful ones), operands before users."""
    by_name = {i.name: i for i in comp.instructions}
    root = comp.root
    # Effectful instructions first, in text order (a `send` nothing uses still runs before the
    # `recv-done` the root needs), then the root.  Control predecessors order like operands.
    seeds = [i for i in comp.instructions if i is not root and i.opcode in _SIDE_EFFECTS and (
        i.opcode != "custom-call" or i.attrs.get("custom_call_has_side_effect") is True)] + [root]
    seen: dict[str, int] = {}  # 1 = on stack, 2 = done
    order: list[ir.Instruction] = []
    for seed in seeds:
        if seed.name in seen:
            continue
        stack = [(seed, 0)]
        seen[seed.name] = 1
        while stack:
            ins, k = stack[-1]
            deps = _deps(ins)
            if k < len(deps):
                stack[-1] = (ins, k + 1)
                name = deps[k]
                op = by_name.get(name)
                if op is None:
                    raise error_at(ins, f"operand '{name}' is not defined in computation '{comp.name}'")
                state = seen.get(name)
                if state == 1:
                    raise error_at(ins, f"instruction '{ins.name}' depends on itself (a cycle)")
                if state is None:
                    seen[name] = 1
                    stack.append((op, 0))
            else:
                stack.pop()
                seen[ins.name] = 2
                order.append(ins)
    # Parameters first, in number order, even unused ones (the signature needs them all).
    params = ordered_parameters(comp)
    rest = [i for i in order if i.opcode != "parameter"]
    return params + rest


def _arities() -> dict:
    from .opcodes import OPCODES
    return {name: op.arity for name, op in OPCODES.items()}


def _rank(shape) -> int:
    if isinstance(shape, ir.TupleShape):
        return max((_rank(s) for s in shape.elements), default=0)
    return len(shape.dims) if isinstance(shape, ir.ArrayShape) else 0


_MAX_RANK = 64  # NumPy's NPY_MAXDIMS
_ARITY = _arities()  # opcode -> operand count (-1: variadic): checked before any kernel is built


def build_plan(comp: ir.Computation, ctx: EvalContext) -> list[tuple]:
    """The plan of a computation: [(kernel, operand slots, result slot, instruction, slots to free)]."""
    instrs = execution_order(comp)
    slot_of = {ins.name: k for k, ins in enumerate(instrs)}
    nparams = sum(1 for i in instrs if i.opcode == "parameter")
    steps: list[tuple] = []
    consts: dict[int, Any] = {}  # slot -> value known when the plan is built
    fma = Contractions(comp, ctx)  # XLA:CPU's fused multiply-adds (ops/contraction.py)
    ctx._scopes.append({i.name: i for i in comp.instructions})
    try:
        for k, ins in enumerate(instrs):
            if _rank(ins.shape) > _MAX_RANK:
                raise error_at(ins, f"rank {_rank(ins.shape)}: NumPy arrays have at most {_MAX_RANK} dimensions, "
                                    f"so hlo-run cannot hold this value (XLA itself has no limit)")
            if ins.opcode == "parameter":
                steps.append((None, (), k, ins))
                continue
            builder = KERNELS.get(ins.opcode)
            if builder is None:
                raise unsupported(ins)
            want = _ARITY.get(ins.opcode, -1)
            if want >= 0 and len(ins.operands) != want:  # a kernel given too few or too many operands
                raise error_at(ins, f"{ins.opcode} takes {want} operand{'s' * (want != 1)}, given "
                                    f"{len(ins.operands)}")
            if ins.opcode not in _NO_ALLOC:
                ctx.check_alloc(ins)
            try:
                fn, names = fma.step(ins, builder, ctx, lambda o: slot_of[o] in consts)
            except HloError:
                raise
            except Exception as e:  # a kernel builder's bug: still a located message
                raise error_at(ins, f"internal error preparing '{ins.opcode}': {type(e).__name__}: {e}") from e
            if ctx.has_dynamic and tuple(names) == tuple(ins.operands):
                fn = adapt_dynamic(ins, ctx, fn)  # XLA's dynamic-size rules (ops/dynamic.py)
            ops = tuple(slot_of[o] for o in names)
            if ins.opcode in _FOLDABLE and all(o in consts for o in ops) and \
                    shape_bytes(ins.shape) <= _FOLD_MAX_BYTES:
                fn = _fold(fn, [consts[o] for o in ops], ins, ctx)
            if hasattr(fn, "const"):
                consts[k] = fn.const
            steps.append((fn, ops, k, ins))
    finally:
        ctx._scopes.pop()
    # Free each value after the step that reads it last (the root is returned, never freed).
    root_slot = slot_of[comp.root.name]
    last_use: dict[int, int] = {}
    for k, (_, ops, _, _) in enumerate(steps):
        for s in ops:
            last_use[s] = k
    frees: dict[int, set[int]] = {}
    for s in range(len(steps)):
        if s == root_slot:
            continue
        at = last_use.get(s, s if s >= nparams else None)  # unused non-parameters die at once
        if at is not None:
            frees.setdefault(at, set()).add(s)
    return [(fn, ops, out, ins, tuple(sorted(frees.get(k, ())))) for k, (fn, ops, out, ins) in enumerate(steps)]


def _fold(fn: Callable, args: list, ins: ir.Instruction, ctx: EvalContext) -> Callable:
    """Constant folding: an instruction whose operands are all constants is evaluated once, now.  On any
    failure the instruction is left to run (and fail, located) at run time."""
    try:
        with np.errstate(all="ignore"), warnings.catch_warnings(), _denormal_mode(ctx.options):
            warnings.simplefilter("ignore")
            value = fn(*args)
    except Exception:
        return fn
    if ctx.options.validate and value_mismatch(value, ins.shape):
        return fn
    if isinstance(value, np.ndarray):
        value.flags.writeable = False
    elif isinstance(value, np.generic):
        value = np.asarray(value)
        value.flags.writeable = False

    def folded(*xs):
        return value
    folded.const = value
    return folded


_LINES_KEY = "__hlo_plan_lines__"  # in a generated function's globals: line -> instruction (error locations)


def _compile_computation(comp: ir.Computation, ctx: EvalContext, label: Optional[str] = None) -> Callable:
    """The plan of `comp` as a Python function.  label: the key of plan_steps/plan_sources (default the
    computation's name; in-place variants use "NAME [in place: ...]", which no HLO name can be).

    The generated source has one line per step that computes something (`v7 = k7(v3, v5)`, or the
    kernel's inline expression); constants (and constant-folded steps) are globals used in place, with
    no statement at all; `del` after each value's last use.  With an observer (RunOptions.observer) the
    same code is wrapped in calls to the methods it overrides: enter/leave around the whole plan,
    before/after around each step; without one the code has no trace of it, so the fast path pays
    nothing.  validate adds a check after every step."""
    label = comp.name if label is None else label
    steps = build_plan(comp, ctx)
    ctx.plan_steps[label] = steps
    obs = ctx.options.observer
    validate = ctx.options.validate
    want = {m: obs is not None and _observed(obs, m) for m in ("enter", "before", "after", "leave")}
    glb: dict[str, Any] = {} if obs is None else {"_o": obs, "_comp": comp, "_done": set()}
    root_slot = next(out for _, _, out, ins, _ in steps if ins is comp.root)
    params = "".join(f"v{out}, " for fn, _, out, ins, _ in steps if ins.opcode == "parameter")
    lines = [f"def plan({params}):"]
    pad = "    "
    if want["enter"]:
        lines.append(f"    _o.enter(_comp, ({params}))")
    if want["leave"]:
        lines.append("    try:")
        pad = "        "
    line_ins: dict[int, ir.Instruction] = {}  # line number -> instruction (errors are located by it)

    def emit(text: str, ins: ir.Instruction) -> None:
        lines.append(pad + text)
        line_ins[len(lines)] = ins

    ref = {out: f"v{out}" for _, _, out, _, _ in steps}  # how a step's value is spelled in the code
    for fn, ops, out, ins, free in steps:
        if validate or obs is not None:
            glb[f"s{out}"] = ins
        if fn is None:  # a parameter
            if want["after"]:
                emit(f"_o.after(s{out}, v{out}, ())", ins)
            continue
        args = [ref[s] for s in ops]
        if obs is not None:
            seen = "(" + "".join(a + ", " for a in args) + ")"  # the operands, as observers are shown them
        const = hasattr(fn, "const")
        if const:
            glb[f"c{out}"] = fn.const
            ref[out] = f"c{out}"  # used in place
            if want["after"]:  # constants and folded instructions: reported once (they never change)
                emit(f"if {out} not in _done: _done.add({out}); _o.after(s{out}, c{out}, {seen})", ins)
            if out != root_slot and not validate:
                continue
            expr = f"c{out}"
        else:
            if hasattr(fn, "inline"):
                expr = fn.inline(args)
            else:
                glb[f"k{out}"] = fn
                expr = f"k{out}({', '.join(args)})"
            if want["before"]:
                emit(f"_o.before(s{out}, {seen})", ins)
        stmt = f"v{out} = {expr}"
        if validate:
            stmt += f"; _check(v{out}, s{out})"
        emit(stmt, ins)
        if want["after"] and not const:
            emit(f"_o.after(s{out}, v{out}, {seen})", ins)
        ref[out] = f"v{out}"
        free = [s for s in free if ref[s].startswith("v")]
        if free:
            lines.append(f"{pad}del " + ", ".join(f"v{s}" for s in free))
    lines.append(f"{pad}return v{root_slot}")
    if want["leave"]:
        lines.append("    finally:")
        lines.append("        _o.leave(_comp)")
    glb[_LINES_KEY] = line_ins
    if validate:
        pshapes = [ins.shape for _, _, _, ins, _ in steps if ins.opcode == "parameter"]
        scalar_comp = bool(pshapes) and all(isinstance(p, ir.ArrayShape) and not p.dims for p in pshapes)
        glb["_check"] = _check_value_lenient if scalar_comp else _check_value
    # Generated and compiled in one function: the lines stay alive during compile().  (Freeing the
    # ~300k strings of a 100k-step plan first made compile() about 10% slower: allocator free lists.)
    source = "\n".join(lines) + "\n"
    ctx.plan_sources[label] = source
    filename = f"<hlo-plan {comp.name}>"
    store = ctx.plan_code
    if store is None:
        code = builtins.compile(source, filename, "exec")
    else:
        import hashlib
        digest = hashlib.blake2b(f"{filename}\n{source}".encode("utf-8", "surrogatepass"), digest_size=20).digest()
        code = store.get(digest)
        if code is None:
            code = store[digest] = builtins.compile(source, filename, "exec")
    exec(code, glb)
    fn = glb["plan"]
    fn.__qualname__ = fn.__name__ = f"plan_{comp.name}"
    return fn


# --------------------------------------------------------------------------------------------------
# Values against shapes

def value_mismatch(v: Any, shape: ir.Shape, lenient: bool = False) -> Optional[str]:
    """None when v is a value of `shape`, else what is wrong.  `lenient`: a scalar shape accepts arrays
    (computations of scalars are called on whole arrays by vectorized reduce and map)."""
    if isinstance(shape, ir.TupleShape):
        if not isinstance(v, tuple) or len(v) != len(shape.elements):
            return f"expected a tuple of {len(shape.elements)}, got {describe_value(v)}"
        for k, (x, s) in enumerate(zip(v, shape.elements)):
            bad = value_mismatch(x, s, lenient)
            if bad:
                return f"element {k}: {bad}"
        return None
    if not isinstance(shape, ir.ArrayShape):
        return None
    if shape.element_type.dtype is None:  # token
        return None if v is TOKEN else f"expected a token, got {describe_value(v)}"
    if not isinstance(v, (np.ndarray, np.generic)):
        return f"expected an array, got {type(v).__name__}"
    if v.dtype != shape.element_type.dtype:
        return f"expected {shape.text(layouts=False)}, got {describe_value(v)}"
    if v.shape != tuple(shape.dims) and not (lenient and not shape.dims):
        dyn = shape.dynamic
        if not (dyn and len(v.shape) == len(shape.dims) and all(
                a == b or (d and (b == ir.UNBOUNDED or a <= b)) for a, b, d in zip(v.shape, shape.dims, dyn))):
            return f"expected {shape.text(layouts=False)}, got {describe_value(v)}"
    return None


def describe_value(v: Any) -> str:
    """A value's type as HLO writes it: `f32[2,3]` for an array, `(f32[2], s32[])` for a tuple, `token`."""
    if isinstance(v, tuple):
        return "(" + ", ".join(describe_value(x) for x in v) + ")"
    if isinstance(v, (np.ndarray, np.generic)):
        try:
            from .types import from_dtype
            name = from_dtype(v.dtype).name
        except KeyError:
            name = str(v.dtype)
        return f"{name}[{','.join(str(d) for d in v.shape)}]"
    if v is TOKEN:
        return "token"
    return type(v).__name__


def _check_value(v: Any, ins: ir.Instruction, lenient: bool = False) -> None:
    bad = value_mismatch(v, ins.shape, lenient)
    if bad:
        raise error_at(ins, f"internal error: '{ins.opcode}' produced a wrong value: {bad}")


def _check_value_lenient(v: Any, ins: ir.Instruction) -> None:
    _check_value(v, ins, True)


# --------------------------------------------------------------------------------------------------
# Inputs

def _to_dtype(x: Any, dtype: np.dtype, what: str, ins: ir.Instruction) -> np.ndarray:
    if isinstance(x, (np.ndarray, np.generic)):
        a = np.asarray(x)
        if a.dtype == dtype:
            return a
        if a.dtype.type is np.void and a.dtype.fields is None and a.dtype.itemsize == dtype.itemsize:
            return a.view(dtype)  # raw bytes (how np.save leaves bf16/f8), viewed as the parameter's type
        if a.dtype.kind in "biufc" and dtype.kind in "biufc" and np.can_cast(a.dtype, dtype, "safe"):
            return a.astype(dtype)
        raise error_at(ins, f"{what}: expected element type {_type_name(dtype)}, got "
                            f"{_type_name(a.dtype)} (convert it first; only value-preserving conversions "
                            f"are done automatically)")
    # Python scalars and (nested) lists: converted when the values survive the conversion.
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            src = np.asarray(x)
            if src.dtype == object or src.dtype.kind not in "biufc":
                raise ValueError
            a = src.astype(dtype)
            same = np.array_equal(a.astype(src.dtype), src, equal_nan=src.dtype.kind in "fc")
    except (ValueError, TypeError, OverflowError):
        raise error_at(ins, f"{what}: cannot use a {type(x).__name__} as {_type_name(dtype)}") from None
    if not same:
        raise error_at(ins, f"{what}: the values do not fit element type {_type_name(dtype)}")
    return a


def _type_name(dtype: np.dtype) -> str:
    from .types import from_dtype
    try:
        return f"{from_dtype(dtype).name} ({dtype.name})"
    except KeyError:
        return str(dtype)


def _prepare(x: Any, shape: ir.Shape, what: str, ins: ir.Instruction) -> Any:
    if isinstance(shape, ir.TupleShape):
        if not isinstance(x, (tuple, list)) or len(x) != len(shape.elements):
            raise error_at(ins, f"{what}: expected a tuple of {len(shape.elements)} values "
                                f"{shape.text(layouts=False)}, got {describe_value(x)}")
        return tuple(_prepare(v, s, f"{what} element {k}", ins) for k, (v, s) in enumerate(zip(x, shape.elements)))
    if not isinstance(shape, ir.ArrayShape) or shape.element_type.dtype is None:
        return TOKEN
    a = _to_dtype(x, shape.element_type.dtype, what, ins)
    dims = tuple(shape.dims)
    if a.shape != dims:
        dyn = shape.dynamic
        ok = dyn and a.ndim == len(dims) and all(
            s == d or (f and (d == ir.UNBOUNDED or s <= d)) for s, d, f in zip(a.shape, dims, dyn))
        if not ok:
            raise error_at(ins, f"{what}: expected shape {shape.text(layouts=False)}, got "
                                f"{describe_value(a)} (dimensions {list(a.shape)})")
    return a


def _flatten_into(x: Any, out: list) -> None:
    if isinstance(x, tuple):
        for y in x:
            _flatten_into(y, out)
    elif x is not TOKEN:
        a = np.asarray(x)
        if not a.flags.writeable:  # constants (shared by every run) are read-only: give a copy
            a = a.copy()
        out.append(a)


def flatten_result(v: Any) -> list[np.ndarray]:
    """The leaves of a value, depth-first (tokens carry no data and are left out).  (No nested closure:
    one would form a reference cycle that keeps the result alive until the next garbage collection.)"""
    out: list[np.ndarray] = []
    _flatten_into(v, out)
    return out


# --------------------------------------------------------------------------------------------------
# Executables

class Executable:
    """A module whose plans are built: call it with the entry's arguments."""

    def __init__(self, module: ir.Module, options: RunOptions, computation: Optional[str] = None,
                 device: Any = None, plan_code: Optional[dict] = None):
        load_all()
        module = excess_precision.rewrite(module)  # XLA:CPU reads a bf16 result as f32 unrounded
        module = dead_code.rewrite(module)  # gte(tuple(...)) reads the operand: what XLA deletes never runs
        self.module = module
        self.options = options
        if computation is None:
            self.entry = module.entry
        else:
            try:
                self.entry = module.computation(computation)
            except KeyError:
                names = ", ".join(c.name for c in module.computations)
                raise HloError(f"no computation named '{computation}' (the module has: {names})",
                               filename=module.filename or None) from None
        self.ctx = EvalContext(module, options)
        self.ctx.device = device  # set before any plan is built: collective kernels read it
        self.ctx.plan_code = plan_code
        self.params = ordered_parameters(self.entry)
        self._fn = self.ctx.call(self.entry.name)
        self._build_called()

    def _build_called(self) -> None:
        """Build every computation that an instruction of a built plan names (to_apply=, select=, ...),
        even when its kernel asks for it only at run time: nothing unsupported is found mid-run."""
        ctx = self.ctx
        done: set[str] = set()
        while True:
            todo = [c for c in ctx.plan_steps if c not in done]
            if not todo:
                return
            for cname in todo:
                done.add(cname)
                for *_, ins, _ in ctx.plan_steps[cname]:
                    for key, val in ins.attrs.items():
                        if key in COMPUTATION_ATTRS:
                            for name in (val if isinstance(val, tuple) else (val,)):
                                if isinstance(name, str):
                                    ctx.call(name, ins)

    def prepare_inputs(self, *arrays: Any) -> list[Any]:
        params = self.params
        if len(arrays) != len(params):
            names = ", ".join(f"{p.name}: {p.shape.text(layouts=False)}" for p in params) or "none"
            raise HloError(f"computation '{self.entry.name}' takes {len(params)} argument(s) "
                           f"({names}); got {len(arrays)}", filename=self.module.filename or None)
        return [_prepare(a, p.shape, f"argument {k} for parameter '{p.name}'", p)
                for k, (a, p) in enumerate(zip(arrays, params))]

    def execute(self, *values: Any) -> Any:
        """Run on prepared values (see prepare_inputs); returns the entry's value (tuples nested)."""
        self.ctx.loop_budget[0] = self.options.max_iterations
        try:
            with np.errstate(all="ignore"), warnings.catch_warnings(), _denormal_mode(self.options):
                warnings.simplefilter("ignore")
                return self._fn(*values)
        except (HloError, StopRun):
            raise
        except RecursionError:
            raise HloError("calls nested too deeply to evaluate") from None
        except (KeyboardInterrupt, SystemExit):
            raise
        except BaseException as e:  # a kernel's failure: locate it at its instruction
            raise _locate(e) from e

    def __call__(self, *arrays: Any) -> list[np.ndarray]:
        return self.outputs(self.value(*arrays))

    def value(self, *arrays: Any) -> Any:
        """The root's value, checked against its declared shape (a dynamic dimension at its size)."""
        value = self.execute(*self.prepare_inputs(*arrays))
        root = self.entry.root
        bad = value_mismatch(value, root.shape) if root.shape is not None else None
        if bad:
            raise result_shape_error(self.module, root, bad)
        return value

    def outputs(self, value: Any) -> list[np.ndarray]:
        """The result leaves of the root's `value`, as XLA:CPU returns them (a dynamic dimension's bound-
        sized buffer: ops/dynamic.py entry_result_buffers)."""
        root = self.entry.root
        if root.shape is not None and has_bounded_dynamic(root.shape):
            value = entry_result_buffers(value, root.shape)
        return flatten_result(value)


def result_shape_error(module: ir.Module, root: ir.Instruction, bad: str) -> HloError:
    """The error for a result that does not have the entry's declared shape.  Usually the module itself
    declares a shape its operands do not give (`f32[9] pad(f32[3] ...), padding=1_2_2`): then the
    verifier's first shape finding is the located input error.  Otherwise it is a bug of ours."""
    try:
        from .shapes.verify import check
        findings = [f for f in check(module, notes=False) if f.severity == "error"]
    except Exception:  # noqa: BLE001 - the verifier failing must not hide the original problem
        findings = []
    if findings:
        f = findings[0]
        return HloError(f"the module is invalid, so its result cannot have the declared shape: "
                        f"{f.message} ({f.code}; `hlo check` lists every finding)",
                        filename=f.filename or module.filename, line=f.line, column=f.column,
                        source_line=f.source_line)
    from .ops.collectives import implied_device_counts
    got = implied_device_counts(module)
    if got is not None:
        # a module written for several devices, run on one: say which run fits
        r, p, ins, why = got
        flag = f"--partitions {p}" if p > 1 else f"--replicas {r}"
        return error_at(ins, f"the result cannot have the entry's shape on one device: the module's header gives "
                             f"no replica_count/num_partitions, but {why}, so it runs on {r * p} devices: "
                             f"hlo-run {flag} (hlo_interp.run_spmd(module, per_device_inputs, "
                             f"{'partitions' if p > 1 else 'replicas'}={r * p}))")
    return error_at(root, f"internal error: the result does not match the entry's shape: {bad}")


def _locate(e: BaseException) -> HloError:
    ins = None
    tb = e.__traceback__
    while tb is not None:
        lines = tb.tb_frame.f_globals.get(_LINES_KEY)
        if lines is not None:
            ins = lines.get(tb.tb_lineno, ins)
        tb = tb.tb_next
    if isinstance(e, MemoryError):
        msg = "out of memory"
    else:
        msg = f"{type(e).__name__}: {e}"
    if ins is None:
        return HloError(f"internal error: {msg}")
    return error_at(ins, f"internal error evaluating '{ins.opcode}': {msg}")


def _denormal_mode(options: RunOptions):
    """XLA:CPU flushes f32/f64 denormals to zero (inputs and results); so do we, unless asked not to.
    (x86-64 only: elsewhere denormals are kept, as IEEE arithmetic does.)"""
    if options.flush_denormals:
        return _flush_denormals()
    import contextlib
    return contextlib.nullcontext()


def make_options(max_bytes=None, max_iterations=None, fake_constants=False, validate=False,
                 denormals="flush", observer=None) -> RunOptions:
    """RunOptions from run()/compile()'s keyword arguments (None: the defaults)."""
    if max_bytes is None:
        max_bytes = default_max_bytes()
    if max_iterations is None:
        max_iterations = DEFAULT_MAX_ITERATIONS
    if denormals not in ("flush", "keep"):
        raise ValueError(f"denormals must be 'flush' (XLA:CPU) or 'keep' (IEEE), not {denormals!r}")
    return RunOptions(int(max_bytes), int(max_iterations), bool(fake_constants), bool(validate),
                      denormals == "flush", observer)


def compile(module: ir.Module, *, max_bytes: Optional[int] = None, max_iterations: Optional[int] = None,
            fake_constants: bool = False, validate: bool = False, computation: Optional[str] = None,
            denormals: str = "flush", observer: Any = None, plan_code: Optional[dict] = None) -> Executable:
    """Build the plans of every computation reachable from the entry (or from `computation`, to run one
    computation of the module on its own, e.g. a fusion while bisecting); raises HloError, located.
    observer: see Observer (hlo_interp.debug builds the usual ones).  plan_code: a dict of compiled plan
    code by source digest, used and filled (a later build of the same module reuses it: the module
    cache keeps it between runs)."""
    return Executable(module, make_options(max_bytes, max_iterations, fake_constants, validate, denormals,
                                       observer), computation, plan_code=plan_code)


def _fingerprint(module: ir.Module) -> tuple:
    return tuple((id(c), len(c.instructions), id(c.instructions[-1]) if c.instructions else 0)
                 for c in module.computations)


def run(module: ir.Module, *arrays: Any, max_bytes: Optional[int] = None, max_iterations: Optional[int] = None,
        fake_constants: bool = False, validate: bool = False, computation: Optional[str] = None,
        denormals: str = "flush", observer: Any = None) -> list[np.ndarray]:
    """Execute the entry computation (or `computation`) on NumPy arrays; returns the leaves of the
    result, depth-first.  Plans are built once per module and options and cached on the module object.
    denormals="flush" (default) flushes f32/f64 denormals to zero as XLA:CPU does; "keep" keeps them.
    observer: see Observer; observed runs build their plans afresh (not cached)."""
    opts = make_options(max_bytes, max_iterations, fake_constants, validate, denormals, observer)
    if observer is not None:
        return Executable(module, opts, computation)(*arrays)
    cache = module.__dict__.setdefault("_hlo_interp_executables", {})
    fp = _fingerprint(module)
    key = (opts, computation)
    exe = cache.get(key)
    if exe is None or exe[0] != fp:
        exe = cache[key] = (fp, Executable(module, opts, computation))
    return exe[1](*arrays)
