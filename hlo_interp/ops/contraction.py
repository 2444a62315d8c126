"""XLA:CPU's floating-point contraction: a multiply whose only use is an add or a subtract is computed,
with it, as one fused multiply-add (one rounding instead of two).

Why XLA:CPU does it: it compiles every kernel with LLVM's TargetOptions.AllowFPOpFusion = Fast
(xla/service/cpu/cpu_aot_loader.cc, CompilerTargetOptions, used by the JIT too), so LLVM's instruction
selection fuses an fmul into the fadd/fsub that uses it wherever the target has an fma instruction
(x86-64 with FMA3, which XLA:CPU targets on any machine of the last decade).  LLVM does it inside one
function and only for an fmul with ONE use; for XLA:CPU a function is one kernel, i.e. one fusion.

The rule below was measured against XLA:CPU (jaxlib 0.10.2, on cancellation-prone inputs where the two
roundings differ in nearly every element: tests/golden/contraction/, tools/oracle/families/contraction.py),
on the texts hlo-run is given (pre-optimization modules, which XLA fuses itself, and the fused
computations of optimized dumps alike):
  * add(m, c), add(c, m), subtract(m, c) -> fma(a, b, c), fma(a, b, c), fma(a, b, -c), and
    subtract(c, m) -> fma(-a, b, c), where m = multiply(a, b) of the same element type, f16, f32 or f64.
    bf16 and the f8 types are not contracted: XLA computes them in f32 with a rounding convert after
    every instruction, and a convert stands between the multiply and the add.  f16 is contracted (an
    f16 fma is an f32 fma rounded to f16).  Complex products are always fma-contracted (numerics).
  * add(m1, m2) where both could be contracted: the first operand's product is fused,
    fma(a1, b1, m2); the same for subtract: fma(a1, b1, -m2).
  * m must have exactly one use in its computation (an operand position once; being the root counts
    as a use): a product that is also an output, or used twice in one fusion, is materialized first
    (then XLA rounds it).  One use through a chain of single-use reshape, bitcast, transpose, copy,
    slice or negate instructions still contracts (they emit no arithmetic in a fused loop); a negate
    negates the fma's a.  Measured: not through a reverse, nor through a broadcast that adds elements
    (unless the add's other operand is a broadcast of the same dimensions from the same shape: XLA's
    simplifier adds first, then broadcasts the sum).
  * In a while body, a product of loop-invariant values (constants, tuple elements the body passes
    through unchanged, and foldable ops of those) is hoisted out of the loop by XLA's
    WhileLoopInvariantCodeMotion and materialized: not contracted with an add that is not itself
    loop-invariant.
  * A multiply of two constants is folded by XLA before codegen (HloConstantFolding rounds it): not
    contracted.  (The evaluator knows which operands are plan-time constants.)
  * An f16 reduce with an add reducer whose operand is a single-use product, over dimensions of at
    most 32 elements: XLA fuses the product into the reduction loop, which accumulates
    acc = fma(a, b, acc) (an f16 fma: f32, rounded to f16) in XLA:CPU's order (ops/reduce.py).  A
    longer reduce is first rewritten into reduce-windows (TreeReductionRewriter) and the product is
    then materialized: not contracted.
  * Complex (c64/c128) products are always contracted (numerics.complex_multiply); two placements are
    measured apart: a multiply whose second operand is a broadcast constant along the result's innermost
    dimension fuses the other product into the imaginary part (InvariantComplexMultiply; a broadcast
    constant with equal parts contracts nothing: its products have two uses each), and an add-reduce
    of a single-use complex product over dimensions of at most 32 elements accumulates both parts with
    fmas (ComplexReduceContraction): the forms XLA makes of complex dots with K = 1 and of vector . vector.
  * One rewrite of XLA's that changes a complex dot's order: transpose(dot(a, b)) of the last two
    dimensions is computed as dot(b, a) (SwappedDot, the algebraic simplifier's transpose-of-dot rule).
Not modelled (known gaps, the first two with strict-xfail cases): XLA inlines `call`s and fuses across
them (a multiply passed to a called computation's add is contracted there); a product with several
users that XLA duplicates into each user's fusion (then every copy with one use contracts); an f32/f64
reduce of a fused product (measured on row sums: f32[64,32] one fma per step in a sequential loop,
f32[64,8] rounded products), where our f32/f64 sums are not in XLA's order anyway (ops/reduce.py).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional

import numpy as np

from .. import ir
from ..opcodes import OPCODES
from . import numerics as nx
from .reduce import TREE_WINDOW, reduce_simple
from .reducers import recognize_reducer
from .registry import KERNELS

_CONTRACTED_TYPES = frozenset({"f16", "f32", "f64"})
# single-use instructions between the product and the add that emit no arithmetic in a fused loop
# (measured: reverse is not one of them)
_MOVES = frozenset({"reshape", "bitcast", "transpose", "broadcast", "copy", "slice"})


@dataclass(frozen=True)
class Contraction:
    """add/subtract `ins` computed as one fma of `multiply`'s operands (through `chain`, the instructions
    between the product and operand `position` of ins, product first)."""
    ins: ir.Instruction
    position: int
    multiply: ir.Instruction
    chain: tuple[ir.Instruction, ...]

    @property
    def operands(self) -> tuple[str, str, str]:
        """The fma's operands: the product's two factors and the add's other operand."""
        return (self.multiply.operands[0], self.multiply.operands[1], self.ins.operands[1 - self.position])

    def kernel(self, ctx) -> Callable:
        """f(a, b, c): the add's value, with one rounding."""
        moves = []
        negate_a = self.ins.opcode == "subtract" and self.position == 1
        negate_c = self.ins.opcode == "subtract" and self.position == 0
        for x in self.chain:
            if x.opcode == "negate":
                negate_a = not negate_a
            else:
                moves.append(KERNELS[x.opcode](x, ctx))
        fma = nx.fma_of(self.multiply.shape.element_type.dtype)  # (kernels run under errstate ignore)

        def run(a, b, c):
            for f in moves:
                a, b = f(a), f(b)
            if negate_a:
                a = np.negative(a)
            if negate_c:
                c = np.negative(c)
            return fma(a, b, c)
        return run


@dataclass(frozen=True)
class ReduceContraction:
    """An f16 add-reduce `ins` of a single-use product `multiply`: acc = fma(a, b, acc) per step."""
    ins: ir.Instruction
    multiply: ir.Instruction
    chain = ()

    @property
    def operands(self) -> tuple[str, str, str]:
        return (self.multiply.operands[0], self.multiply.operands[1], self.ins.operands[1])

    def kernel(self, ctx) -> Callable:
        dims = tuple(self.ins.attrs["dimensions"])
        f32, f16 = np.dtype(np.float32), np.dtype(np.float16)

        def run(a, b, init):
            with np.errstate(all="ignore"):
                x = np.multiply(a, b, dtype=f32)  # exact: 22 significant bits
                return np.asarray(reduce_simple(x, np.asarray(init).astype(f32), dims, "add",
                                                round_dtype=f16)).astype(f16)
        return run


@dataclass(frozen=True)
class ComplexReduceContraction(ReduceContraction):
    """A c64/c128 add-reduce `ins` of a single-use product `multiply` over dimensions of at most 32
    elements: XLA fuses the product into the reduction loop, which accumulates in order from the init
    value with re += fma(ar, br, -ai*bi) and im = fma(ai, br, fma(ar, bi, im)) (measured: the dot of a
    vector by a vector, which XLA rewrites into this reduce)."""

    def kernel(self, ctx) -> Callable:
        dims = tuple(sorted(self.ins.attrs["dimensions"]))
        dtype = self.ins.shape.element_type.dtype

        def run(a, b, init):
            a, b = np.broadcast_arrays(np.asarray(a), np.asarray(b))
            keep = [d for d in range(a.ndim) if d not in dims]
            shape = tuple(a.shape[d] for d in keep)
            a = a.transpose(keep + list(dims)).reshape(shape + (-1,))  # reduced dims last, row-major
            b = b.transpose(keep + list(dims)).reshape(shape + (-1,))
            init = np.asarray(init, dtype)
            re = np.full(shape, init.real)
            im = np.full(shape, init.imag)
            fma = nx.fma_of(re.dtype)
            ar, ai, br, bi = a.real, a.imag, b.real, b.imag
            with np.errstate(all="ignore"):
                for k in range(a.shape[-1]):
                    re = re + fma(ar[..., k], br[..., k], -(ai[..., k] * bi[..., k]))
                    im = fma(ai[..., k], br[..., k], fma(ar[..., k], bi[..., k], im))
            out = np.empty(shape, dtype)
            out.real = re
            out.imag = im
            return out
        return run


@dataclass(frozen=True)
class InvariantComplexMultiply:
    """A c64/c128 multiply whose second operand is a broadcast that does not vary along the innermost
    (non-degenerate) dimension of the result: LLVM contracts the imaginary part the other way round
    (numerics.complex_multiply's y_invariant; measured on the multiplies XLA makes of dots with K = 1)."""
    ins: ir.Instruction
    constant: bool  # the broadcast's source is a constant: LLVM sees its value
    chain = ()

    @property
    def multiply(self) -> ir.Instruction:
        return self.ins

    @property
    def operands(self) -> tuple[str, ...]:
        return tuple(self.ins.operands)

    def kernel(self, ctx) -> Callable:
        constant = self.constant

        def run(x, y):
            y = np.asarray(y)
            if constant and y.size and np.array_equal(y.real, y.imag):
                # a constant with equal parts: xr*yr is xr*yi (and xi*yi is xi*yr), so each product has
                # two uses and LLVM contracts none (measured: multiply by (3, 3))
                x = np.asarray(x)
                xr, xi, yr, yi = x.real, x.imag, y.real, y.imag
                out = np.empty(np.broadcast_shapes(x.shape, y.shape), np.result_type(x, y))
                out.real = xr * yr - xi * yi
                out.imag = xr * yi + xi * yr
                return out
            return nx.complex_multiply(x, y, y_invariant=True)
        return run


@dataclass(frozen=True)
class SwappedDot:
    """transpose(dot(a, b)) swapping the result's last two dimensions, computed as XLA's algebraic
    simplifier rewrites it: dot(b, a) with the contracting dimensions swapped (when the dot has that one
    user, both operands one free dimension, and the same leading batch dimensions; not when one of the
    two dimensions is 1: that transpose is a reshape).  Only for complex
    dots, whose order hlo-run follows (ops/complex_dot.py): the kernel then runs on the other operand
    order, as XLA:CPU's does."""
    ins: ir.Instruction  # the transpose
    multiply: ir.Instruction  # the dot
    chain = ()

    @property
    def operands(self) -> tuple[str, str]:
        return (self.multiply.operands[1], self.multiply.operands[0])

    def kernel(self, ctx) -> Callable:
        a = dict(self.multiply.attrs)
        a["lhs_contracting_dims"], a["rhs_contracting_dims"] = (a.get("rhs_contracting_dims", ()),
                                                                a.get("lhs_contracting_dims", ()))
        dot = ir.Instruction(name=self.ins.name, opcode="dot", shape=self.ins.shape, operands=list(self.operands),
                             attrs=a, loc=self.ins.loc)
        return KERNELS["dot"](dot, ctx)


def _swapped_dot(t: ir.Instruction, by_name: dict, uses: dict) -> Optional[ir.Instruction]:
    """The dot that transpose `t` makes XLA swap (SwappedDot), or None."""
    d = by_name.get(t.operands[0]) if len(t.operands) == 1 else None
    if d is None or d.opcode != "dot" or len(d.operands) != 2 or uses.get(d.name) != 1 or \
            _complex_type(d) is None or _complex_type(t) is None:
        return None
    a, b = by_name.get(d.operands[0]), by_name.get(d.operands[1])
    if a is None or b is None or not isinstance(a.shape, ir.ArrayShape) or not isinstance(b.shape, ir.ArrayShape):
        return None
    lb, rb = tuple(d.attrs.get("lhs_batch_dims", ())), tuple(d.attrs.get("rhs_batch_dims", ()))
    lc, rc = tuple(d.attrs.get("lhs_contracting_dims", ())), tuple(d.attrs.get("rhs_contracting_dims", ()))
    rank = len(d.shape.dims)
    perm = list(range(rank))
    if rank >= 2:
        perm[-1], perm[-2] = perm[-2], perm[-1]
    if lb != rb or lb != tuple(range(len(lb))) or not lc or not rc or d.attrs.get("sparsity") is not None or \
            len(lc) + len(lb) + 1 != len(a.shape.dims) or len(rc) + len(rb) + 1 != len(b.shape.dims) or \
            rank < 2 or tuple(t.attrs.get("dimensions", ())) != tuple(perm) or min(d.shape.dims[-2:]) < 2:
        return None  # (moving a dimension of 1 is a reshape: XLA's simplifier makes it one first)
    return d


def _invariant_multiply(ins: ir.Instruction, by_name: dict) -> Optional[InvariantComplexMultiply]:
    """InvariantComplexMultiply if complex multiply `ins`'s operand 1 is a broadcast constant along the
    result's innermost dimension of more than one element (a result of one element: no loop, the usual
    contraction)."""
    y = by_name.get(ins.operands[1]) if len(ins.operands) == 2 else None
    s = ins.shape
    if y is None or y.opcode != "broadcast" or not isinstance(s, ir.ArrayShape):
        return None
    inner = [d for d in range(len(s.dims)) if s.dims[d] > 1]
    if not inner or inner[-1] in tuple(y.attrs.get("dimensions", ())):
        return None
    src = by_name.get(y.operands[0]) if y.operands else None
    return InvariantComplexMultiply(ins, src is not None and src.opcode == "constant")


def _float_type(ins: ir.Instruction) -> Optional[str]:
    s = ins.shape
    if not isinstance(s, ir.ArrayShape) or any(s.dynamic):
        return None
    name = s.element_type.name
    return name if name in _CONTRACTED_TYPES else None


def _complex_type(ins: ir.Instruction) -> Optional[str]:
    s = ins.shape
    if not isinstance(s, ir.ArrayShape) or any(s.dynamic):
        return None
    name = s.element_type.name
    return name if name in ("c64", "c128") else None


def _size(shape) -> int:
    n = 1
    for d in shape.dims:
        n *= d
    return n


def _transparent(x: ir.Instruction, ins: ir.Instruction, position: int, by_name: dict) -> bool:
    """Whether chain link x keeps the product in the add's fused loop.  A broadcast that adds elements
    does not (measured: the product is computed apart), except when the add's other operand is a
    broadcast of the same dimensions from the same shape: XLA's simplifier then adds first and
    broadcasts the sum (add(broadcast(m), broadcast(c)) -> broadcast(add(m, c)))."""
    if x.opcode != "broadcast":
        return True
    src = by_name.get(x.operands[0])
    if src is None or not isinstance(src.shape, ir.ArrayShape) or _size(src.shape) == _size(x.shape):
        return src is not None
    other = by_name.get(ins.operands[1 - position])
    if other is None or other.opcode != "broadcast" or ins.operands[position] != x.name:
        return False
    osrc = by_name.get(other.operands[0])
    return osrc is not None and isinstance(osrc.shape, ir.ArrayShape) and osrc.shape.dims == src.shape.dims \
        and tuple(other.attrs.get("dimensions", ())) == tuple(x.attrs.get("dimensions", ()))


def contractions(comp: ir.Computation, module: Optional[ir.Module] = None) -> dict[str, Contraction]:
    """The adds and subtracts of `comp` that XLA:CPU computes as an fma: instruction name -> Contraction
    (XLA also folds a product of two constants first: Plan checks that)."""
    by_name = {i.name: i for i in comp.instructions}
    uses: dict[str, int] = {}
    candidates = []
    for ins in comp.instructions:
        for o in ins.operands:
            uses[o] = uses.get(o, 0) + 1
        if (ins.opcode in ("add", "subtract") and len(ins.operands) == 2) or \
                (ins.opcode in ("reduce", "multiply") and len(ins.operands) == 2) or ins.opcode == "transpose":
            candidates.append(ins)
    if not candidates:
        return {}
    root = comp.root
    uses[root.name] = uses.get(root.name, 0) + 1
    invariant = _loop_invariance(comp, by_name)
    found: dict[str, Contraction] = {}
    complex_multiplies = []
    for ins in candidates:
        if ins.opcode == "transpose":
            d = _swapped_dot(ins, by_name, uses)
            if d is not None:
                found[ins.name] = SwappedDot(ins, d)
            continue
        ct = _complex_type(ins)
        if ct is not None:
            if ins.opcode == "reduce":
                x = by_name.get(ins.operands[0])
                if x is not None and x.opcode == "multiply" and uses.get(x.name) == 1 and \
                        _complex_type(x) == ct and not invariant(x) and _adds(module, ins) and \
                        all(d < len(x.shape.dims) and x.shape.dims[d] <= TREE_WINDOW
                            for d in ins.attrs.get("dimensions", ())):
                    found[ins.name] = ComplexReduceContraction(ins, x)
            elif ins.opcode == "multiply":
                complex_multiplies.append(ins)
            continue
        if ins.opcode == "multiply":
            continue
        t = _float_type(ins)
        if t is None:
            continue
        if ins.opcode == "reduce":
            x = by_name.get(ins.operands[0])
            if t == "f16" and x is not None and x.opcode == "multiply" and uses.get(x.name) == 1 and \
                    _float_type(x) == t and not invariant(x) and _adds(module, ins) and \
                    all(d < len(x.shape.dims) and x.shape.dims[d] <= TREE_WINDOW for d in ins.attrs.get("dimensions", ())):
                found[ins.name] = ReduceContraction(ins, x)
            continue
        for position in (0, 1):
            chain = []
            x = by_name.get(ins.operands[position])
            while x is not None and uses.get(x.name) == 1 and _float_type(x) == t and \
                    (x.opcode in _MOVES or x.opcode == "negate") and len(x.operands) == 1 and \
                    _transparent(x, ins, position, by_name):
                chain.append(x)
                x = by_name.get(x.operands[0])
            if x is not None and x.opcode == "multiply" and uses.get(x.name) == 1 and \
                    _float_type(x) == t and len(x.operands) == 2:
                if invariant(x) and not invariant(ins):
                    break  # hoisted out of the loop on its own
                found[ins.name] = Contraction(ins, position, x, tuple(reversed(chain)))
                break
    fused_products = {c.multiply.name for c in found.values()}
    for ins in complex_multiplies:
        inv = None if ins.name in fused_products else _invariant_multiply(ins, by_name)
        if inv is not None:
            found[ins.name] = inv
    return found


def _adds(module: Optional[ir.Module], ins: ir.Instruction) -> bool:
    """Whether reduce `ins` applies a plain add (no converts around it)."""
    name = ins.attrs.get("to_apply")
    if module is None or not isinstance(name, str):
        return False
    return recognize_reducer(module, name, 1) == [("add", None)]


def _loop_invariance(comp: ir.Computation, by_name: dict) -> Callable[[ir.Instruction], bool]:
    """invariant(ins): whether `ins` is a loop-invariant value, if `comp` is a while body (one tuple
    parameter, a root tuple of as many elements); always False for other computations."""
    params = [i for i in comp.instructions if i.opcode == "parameter"]
    root = comp.root
    if len(params) != 1 or not isinstance(params[0].shape, ir.TupleShape) or root.opcode != "tuple" or \
            len(root.operands) != len(params[0].shape.elements):
        return lambda ins: False
    param = params[0].name

    def passed_through(k: int) -> bool:
        g = by_name.get(root.operands[k])
        return g is not None and g.opcode == "get-tuple-element" and g.operands == [param] and \
            g.attrs.get("index") == k
    memo: dict[str, bool] = {}

    def invariant(ins: ir.Instruction) -> bool:
        v = memo.get(ins.name)
        if v is None:
            memo[ins.name] = False  # (no cycles in HLO; a guard all the same)
            if ins.opcode in ("constant", "iota"):
                v = True
            elif ins.opcode == "get-tuple-element" and ins.operands == [param]:
                k = ins.attrs.get("index")
                v = isinstance(k, int) and 0 <= k < len(root.operands) and passed_through(k)
            else:
                spec = OPCODES.get(ins.opcode)
                v = spec is not None and spec.foldable and bool(ins.operands) and \
                    all(o in by_name and invariant(by_name[o]) for o in ins.operands)
            memo[ins.name] = v
        return v
    return invariant


def _unused(*_):
    return None


_unused.inline = lambda args: "None"  # (registry.py: an inline kernel costs nothing per run)


class Plan:
    """The evaluator's view of one computation's contractions, while its plan is built:
    `step(ins, ...)` gives each instruction's kernel and operand names.  An add/subtract that contracts
    gets the fma kernel of (a, b, c); the product and the chain it absorbed compute nothing (their
    values have no other use), unless an observer or validation (ctx.options) wants every value."""

    def __init__(self, comp: ir.Computation, ctx):
        self.fused = contractions(comp, ctx.module)
        keep = ctx.options.observer is not None or ctx.options.validate
        self.absorbed = {} if keep else {x.name: c for c in self.fused.values() for x in (c.multiply,) + c.chain}

    def step(self, ins: ir.Instruction, builder: Callable, ctx, is_const: Callable[[str], bool]):
        """(kernel, operand names) of `ins`; is_const(name): whether a value is a plan-time constant."""
        con = self.fused.get(ins.name) or self.absorbed.get(ins.name)
        if con is None or all(is_const(o) for o in con.multiply.operands):
            return builder(ins, ctx), ins.operands  # (a product of constants: XLA folds it first)
        if con.ins is ins:
            return con.kernel(ctx), con.operands
        return _unused, ins.operands
