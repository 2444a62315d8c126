"""Comparing results with expected values (hlo-run --compare) by a rule that knows floating point.

Two correct evaluations of the same module rarely agree bit for bit: XLA:CPU and NumPy add the terms
of a dot, a convolution or a reduce in different orders, and each order rounds differently.  Those
differences scale with the type's epsilon, with the magnitude of the values summed and with the number
of terms, not with each element's own magnitude (an element near zero produced by cancellation carries
the rounding error of its large terms).  The default rule therefore bounds every element's error by

    |got - expected| <= rtol * |expected| + atol
    rtol = min(4 * eps, 1/8)
    atol = A * eps * max|expected|,   A = min(2 * sqrt(max(K, 16)), 1 / (8 * eps))

    eps   the epsilon (2^-mantissa bits) of the leaf's element type, or of the lowest-precision float
          type the leaf is computed from when that is coarser (a bf16 model's f32 loss carries bf16
          rounding); a complex type uses its component type's
    K     the longest reduction the leaf depends on: the largest number of terms summed into one value
          by a dot (contracting dimensions), a convolution (kernel window x input features), a reduce
          (reduced dimensions), a reduce-window (window) or an fft (its length), in the instructions the leaf is computed
          from and every computation they call (1 when none)
    max|expected|  the largest finite magnitude of the expected leaf

sqrt(K) is how rounding errors of K-term sums grow (they are about as often up as down); the factor 2
and the floor K >= 16 leave room for the errors of the ops around them.  The caps keep f8/f4 types
(eps 1/8 and coarser) within 1/8 of |expected| + 1/8 of max|expected|.  NaN must match NaN and infinities must be equal;
integers and pred compare exactly.  `--rtol` / `--atol` replace their part of the rule.

Reported per leaf: the largest error, as a multiple of eps * max|expected| ("eps·max") and, at the
element where it is largest in those terms, in ulps of the expected value there; and the bound.

    from hlo_interp.compare import compare_leaf, leaf_numerics
    nums = leaf_numerics(module)                          # one per result leaf
    res = compare_leaf(got[0], expected[0], numerics=nums[0])   # Comparison: res.ok, res.line, res.ulps
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Optional

import numpy as np

from . import ir
from .opcodes import opcodes_where

__all__ = ["Comparison", "ModuleNumerics", "Rule", "compare_leaf", "leaf_numerics", "module_numerics", "rule_for"]

# Opcodes whose float results are not computed in their type (data movement, conversions, calls whose
# insides are looked at anyway): they do not say which precision the module computes in.
# ("optimization-barrier" is no opcode (XLA writes opt-barrier): kept as it was.)
_NOT_ARITHMETIC = opcodes_where(lambda o: not o.arithmetic) | {"optimization-barrier"}

R_ULPS = 4.0
K_FLOOR = 16
A_FACTOR = 2.0


@dataclass(frozen=True)
class ModuleNumerics:
    """What the module says about its rounding: the coarsest float type it computes in (its HLO name,
    None when it does no float arithmetic) and its longest reduction K."""
    compute_type: Optional[str]
    reduction_length: int


@dataclass(frozen=True)
class Rule:
    eps: float
    eps_type: str  # the type whose epsilon is used
    rtol: float
    atol: float
    scale: float  # max|expected|
    factor: float  # A
    reduction_length: int
    overridden: bool  # --rtol or --atol given

    def text(self) -> str:
        if self.overridden:
            return f"rtol {self.rtol:g}, atol {self.atol:g}"
        return (f"bound {self.factor:.3g} eps·max + {R_ULPS:g} eps·|expected| ({self.eps_type} eps {self.eps:.3g}, "
                f"reduction length {self.reduction_length}; atol {self.atol:.3g})")


@dataclass
class Comparison:
    ok: bool
    line: str
    differ: int = 0
    size: int = 0
    max_abs: float = 0.0  # largest |got - expected| (finite)
    max_rel_scale: float = 0.0  # max_abs / max|expected|
    eps_scale: float = 0.0  # max_abs / (eps * max|expected|)
    ulps: float = 0.0  # at the worst element (by eps·max), its error in ulps of the expected value
    rule: Optional[Rule] = None


# --------------------------------------------------------------------------------------------------
# What the module computes in

def _float_eps(name: str) -> Optional[float]:
    from .types import primitive_type
    try:
        t = primitive_type(name)
    except KeyError:
        return None
    if t.dtype is None or t.kind not in ("float", "complex"):
        return None
    dt = t.dtype
    if t.kind == "complex":
        dt = np.dtype(np.float32 if dt == np.complex64 else np.float64)
    import ml_dtypes
    try:
        return float(ml_dtypes.finfo(dt).eps)
    except (ValueError, TypeError):
        return None


def _array_types(shape) -> list[str]:
    if isinstance(shape, ir.TupleShape):
        out = []
        for s in shape.elements:
            out.extend(_array_types(s))
        return out
    if isinstance(shape, ir.ArrayShape):
        return [shape.element_type.name]
    return []


def _dims(shape) -> tuple:
    return shape.dims if isinstance(shape, ir.ArrayShape) else ()


def _terms(ins: ir.Instruction, shapes: dict) -> int:
    """How many terms the instruction sums into one value (1 when it sums none)."""
    a = ins.attrs
    op = ins.opcode
    try:
        if op == "dot":
            lhs = _dims(shapes.get(ins.operands[0]))
            return math.prod(lhs[d] for d in a.get("lhs_contracting_dims", ()))
        if op == "convolution":
            k = _dims(shapes.get(ins.operands[1]))
            cd = a.get("dim_labels")
            if not k or cd is None:
                return 1
            return math.prod(n for d, n in enumerate(k) if d != cd.kernel_output_feature)
        if op == "reduce":
            x = _dims(shapes.get(ins.operands[0]))
            return math.prod(x[d] for d in a.get("dimensions", ()))
        if op == "fft":
            return math.prod(a.get("fft_length", ()) or (1,))
        if op == "reduce-window":
            w = a.get("window")
            return math.prod(d.size for d in w.dims) if w is not None else 1
    except (IndexError, TypeError, AttributeError):
        return 1
    return 1


def _scan(comps: list, k: int, coarsest: Optional[str], coarsest_eps: float, instrs=None):
    """Fold the instructions of `comps` (or only `instrs` of comps[0]) into (K, coarsest type, its eps)."""
    for comp in comps:
        shapes = {i.name: i.shape for i in comp.instructions}
        for ins in (instrs if instrs is not None else comp.instructions):
            k = max(k, _terms(ins, shapes))
            if ins.opcode in _NOT_ARITHMETIC:
                continue
            for name in _array_types(ins.shape):
                e = _float_eps(name)
                if e is not None and e > coarsest_eps:
                    coarsest, coarsest_eps = name, e
        instrs = None
    return k, coarsest, coarsest_eps


def _called(module: ir.Module, instrs) -> list:
    """Every computation the instructions call, transitively."""
    from .evaluator import COMPUTATION_ATTRS
    by_name = {c.name: c for c in module.computations}
    out, seen = [], set()
    todo = list(instrs)
    while todo:
        ins = todo.pop()
        for key in COMPUTATION_ATTRS:
            v = ins.attrs.get(key)
            for name in (v if isinstance(v, (tuple, list)) else (v,)):
                if isinstance(name, str) and name in by_name and name not in seen:
                    seen.add(name)
                    out.append(by_name[name])
                    todo.extend(by_name[name].instructions)
    return out


def module_numerics(module: ir.Module) -> ModuleNumerics:
    """The whole module's numerics (every computation)."""
    k, coarsest, _ = _scan(module.computations, 1, None, 0.0)
    return ModuleNumerics(coarsest, int(k))


def leaf_numerics(module: ir.Module) -> list:
    """One ModuleNumerics per result leaf of the entry (depth-first), from the instructions that leaf
    depends on when the entry's root is a tuple instruction (its operands, recursively), else from the
    whole module: a bf16 branch does not loosen an f32 leaf computed beside it."""
    entry = module.entry
    by_name = {i.name: i for i in entry.instructions}

    def leaves(ins) -> list:
        if ins.opcode == "tuple":
            out = []
            for o in ins.operands:
                sub = by_name.get(o)
                out.extend(leaves(sub) if sub is not None else [None])
            return out
        if isinstance(ins.shape, ir.TupleShape):
            return [None] * len(_array_types(ins.shape))  # the whole module for each of its leaves
        return [ins]

    whole = None
    out = []
    for top in leaves(entry.root):
        if top is None:
            whole = whole or module_numerics(module)
            out.append(whole)
            continue
        deps, todo = {}, [top]
        while todo:
            i = todo.pop()
            if i.name in deps:
                continue
            deps[i.name] = i
            todo.extend(by_name[o] for o in i.operands if o in by_name)
        instrs = list(deps.values())
        k, coarsest, _ = _scan([entry] + _called(module, instrs), 1, None, 0.0, instrs)
        out.append(ModuleNumerics(coarsest, int(k)))
    return out


# --------------------------------------------------------------------------------------------------
# The rule

def _type_name(a: np.ndarray) -> str:
    from .types import from_dtype
    try:
        return from_dtype(a.dtype).name
    except KeyError:
        return str(a.dtype)


def rule_for(expected: np.ndarray, numerics: Optional[ModuleNumerics] = None, rtol: Optional[float] = None,
             atol: Optional[float] = None) -> Rule:
    """The tolerance for a float leaf (see the module doc)."""
    name = _type_name(expected)
    eps = _float_eps(name) or float(np.finfo(np.float64).eps)
    eps_type = name
    k = numerics.reduction_length if numerics is not None else 1
    if numerics is not None and numerics.compute_type is not None:
        ce = _float_eps(numerics.compute_type)
        if ce is not None and ce > eps:
            eps, eps_type = ce, numerics.compute_type
    with np.errstate(all="ignore"):
        mag = np.abs(expected.astype(np.complex128 if expected.dtype.kind == "c" else np.float64))
        fin = mag[np.isfinite(mag)]
    scale = float(fin.max()) if fin.size else 0.0
    factor = min(A_FACTOR * math.sqrt(max(k, K_FLOOR)), 1.0 / (8.0 * eps))
    d_rtol, d_atol = min(R_ULPS * eps, 0.125), factor * eps * scale
    return Rule(eps=eps, eps_type=eps_type, rtol=d_rtol if rtol is None else rtol,
                atol=d_atol if atol is None else atol, scale=scale, factor=factor, reduction_length=k,
                overridden=rtol is not None or atol is not None)


def _spacing(y: np.ndarray, dtype) -> np.ndarray:
    """ulp of each |y| in the element type (y as float64; dtype: a real float dtype)."""
    import ml_dtypes
    fi = ml_dtypes.finfo(dtype)
    tiny = float(fi.smallest_subnormal) if hasattr(fi, "smallest_subnormal") else float(fi.tiny)
    with np.errstate(all="ignore"):
        e = np.floor(np.log2(np.maximum(np.abs(y), float(fi.tiny))))
        return np.maximum(np.exp2(e - int(fi.nmant)), tiny)


def compare_leaf(actual, expected, rtol: Optional[float] = None, atol: Optional[float] = None, *,
                 numerics: Optional[ModuleNumerics] = None) -> Comparison:
    """Compare one result leaf with its expected value.  Integers and pred exactly; floats by the rule
    (rule_for), NaN matching NaN and infinities matching by sign."""
    if actual.shape != expected.shape:
        return Comparison(False, f"shape differs: got {_text(actual)}, expected {_text(expected)}")
    if expected.dtype.type is np.void and expected.dtype.fields is None and \
            expected.dtype.itemsize == actual.dtype.itemsize:  # raw bytes (np.save of bf16/f8)
        expected = expected.view(actual.dtype)
    if actual.dtype != expected.dtype:
        return Comparison(False, f"element type differs: got {_text(actual)}, expected {_text(expected)}")
    if actual.size == 0:
        return Comparison(True, "empty, equal")
    kind = actual.dtype.kind
    floaty = kind in "fc" or (kind == "V" and "float" in actual.dtype.name)
    if not floaty:
        w = actual.astype(np.int64) if actual.dtype != np.uint64 else actual
        e = expected.astype(np.int64) if expected.dtype != np.uint64 else expected
        diff = w != e
        n = int(diff.sum())
        if n == 0:
            return Comparison(True, "exact", size=actual.size)
        idx = np.unravel_index(int(np.argmax(diff)), diff.shape)
        maxerr = int(np.max(np.abs(w[diff].astype(np.float64) - e[diff].astype(np.float64))))
        return Comparison(False, f"{n} of {actual.size} differ (max |error| {maxerr}); first at "
                                 f"{tuple(int(i) for i in idx)}: got {w[idx]}, expected {e[idx]}",
                          differ=n, size=actual.size, max_abs=float(maxerr))
    rule = rule_for(expected, numerics, rtol, atol)
    ctype = np.complex128 if kind == "c" else np.float64
    x = actual.astype(ctype)
    y = expected.astype(ctype)
    with np.errstate(all="ignore"):
        err = np.abs(x - y)
        same_special = (np.isnan(x) & np.isnan(y)) | (x == y)  # NaN == NaN, equal infinities, equal values
        # a NaN or an infinity matches only itself (an infinite bound would let +inf pass for -inf)
        bad = ~same_special & (~np.isfinite(x) | ~np.isfinite(y) | ~(err <= rule.atol + rule.rtol * np.abs(y)))
        finite = np.isfinite(err)
        errf = np.where(finite, err, 0.0)
        maxabs = float(errf.max())
        rel = err / np.abs(y)
        relf = np.isfinite(rel)
        maxrel = float(rel[relf].max()) if relf.any() else 0.0
        real_dt = expected.real.dtype if kind == "c" else expected.dtype
        ulp_at = _spacing(np.abs(y).astype(np.float64), real_dt)
        k = int(np.argmax(errf))
        ulps = float(errf.ravel()[k] / ulp_at.ravel()[k]) if maxabs > 0 else 0.0
    scale = rule.scale
    unit = rule.eps * scale  # 0 also when eps * a subnormal max|expected| underflows
    eps_scale = maxabs / unit if unit > 0 else (0.0 if maxabs == 0 else math.inf)
    n = int(bad.sum())
    special = int((bad & ~finite).sum())  # NaN or an infinity where another value was expected
    summary = (f"{special} NaN/Inf mismatch(es); " if special else "") + (
        f"max |error| {maxabs:.3g}, max rel. error {maxrel:.3g}; = {eps_scale:.3g} eps·max "
        f"(max|expected| {scale:.3g}), {ulps:.3g} ulp where largest; {rule.text()}")
    res = Comparison(n == 0, summary, differ=n, size=actual.size, max_abs=maxabs,
                     max_rel_scale=maxabs / scale if scale > 0 else 0.0, eps_scale=eps_scale, ulps=ulps, rule=rule)
    if n:
        idx = np.unravel_index(int(np.argmax(bad)), bad.shape)
        res.line = (f"{n} of {actual.size} differ; {summary}; first at {tuple(int(i) for i in idx)}: "
                    f"got {actual[idx]}, expected {expected[idx]}")
    return res


def _text(a) -> str:
    return f"{_type_name(a)}[{','.join(str(d) for d in a.shape)}]"
