"""Structural and control-flow kernels: parameter, constant, tuple, get-tuple-element, call, fusion,
while, conditional, scan, opt-barrier, after-all, add-dependency, copy, domain, bitcast.

Several of these cost nothing at run time: the evaluator inlines a kernel that carries an `inline`
attribute (a function of the operand expressions giving a Python expression: `t[2]`, `(a, b,)`, `a`)
and binds a kernel's `const` attribute once instead of calling it.
"""
from __future__ import annotations

import zlib
from typing import Any

import numpy as np

from .. import ir
from .registry import TOKEN, error_at, kernel, unsupported


def _identity_inline(args):
    return args[0]


def _identity(x, *rest):
    return x


def _with(fn, **attrs):
    for k, v in attrs.items():
        setattr(fn, k, v)
    return fn


# --------------------------------------------------------------------------------------------------
# Values: parameter, constant, tuple, get-tuple-element

@kernel("parameter")
def _parameter(ins, ctx):
    return None  # the evaluator binds parameters to the plan's arguments itself


def literal_value(lit: ir.Literal) -> Any:
    """The evaluator's value of a literal: a read-only array, or a tuple of values."""
    if isinstance(lit.value, tuple):
        return tuple(literal_value(x) for x in lit.value)
    if isinstance(lit.shape, ir.ArrayShape) and lit.shape.element_type.dtype is None:
        return TOKEN
    a = np.array(lit.value, dtype=lit.shape.element_type.dtype, copy=True)
    a = a.reshape(tuple(lit.shape.dims))
    a.flags.writeable = False
    return a


def _has_elided(lit: ir.Literal) -> bool:
    if lit.value is None:
        return True
    return isinstance(lit.value, tuple) and any(_has_elided(x) for x in lit.value)


def _fake(shape: ir.Shape, lit, rng) -> Any:
    """Deterministic stand-in values for an elided literal (its known parts are kept)."""
    from .random_values import random_value
    if lit is not None and lit.value is not None and not isinstance(lit.value, tuple):
        return literal_value(lit)
    if isinstance(shape, ir.TupleShape):
        parts = lit.value if (lit is not None and isinstance(lit.value, tuple)) else (None,) * len(shape.elements)
        return tuple(_fake(s, p, rng) for s, p in zip(shape.elements, parts))
    v = random_value(shape, rng)
    if isinstance(v, np.ndarray):
        v.flags.writeable = False
    return v


@kernel("constant")
def _constant(ins, ctx):
    lit = ins.literal
    if lit is None:
        raise error_at(ins, "constant without a value")
    if _has_elided(lit):
        if not ctx.options.fake_constants:
            raise error_at(ins, "the value of this constant was elided as {...} when the text was printed; "
                                "rerun with --fake-constants (fake_constants=True) to use deterministic random "
                                "values instead, or dump the HLO with its large constants")
        rng = np.random.default_rng(zlib.crc32(ins.name.encode()))
        value = _fake(lit.shape if lit.shape is not None else ins.shape, lit, rng)
    else:
        value = literal_value(lit)

    def run():
        return value
    return _with(run, const=value)


@kernel("tuple")
def _tuple(ins, ctx):
    def run(*xs):
        return xs
    return _with(run, inline=lambda args: "(" + "".join(a + ", " for a in args) + ")")


@kernel("get-tuple-element")
def _gte(ins, ctx):
    idx = ins.attrs.get("index")
    if not isinstance(idx, int):
        raise error_at(ins, "get-tuple-element needs index=")
    (shape,) = ctx.operand_shapes(ins)
    if isinstance(shape, ir.TupleShape) and not 0 <= idx < len(shape.elements):
        raise error_at(ins, f"index={idx} is out of range for a tuple of {len(shape.elements)} elements")

    def run(t):
        return t[idx]
    return _with(run, inline=lambda args: f"{args[0]}[{idx}]")


# --------------------------------------------------------------------------------------------------
# Identities

@kernel("copy", "opt-barrier", "domain")
def _copy(ins, ctx):
    # Values are logical arrays and never mutated, so a copy (even one changing the layout) is the value.
    return _with(_identity, inline=_identity_inline)


@kernel("add-dependency")
def _add_dependency(ins, ctx):
    return _with(_identity, inline=_identity_inline)


@kernel("after-all")
def _after_all(ins, ctx):
    def run(*tokens):
        return TOKEN
    return _with(run, const=TOKEN)


# --------------------------------------------------------------------------------------------------
# Calls

def _callee(ins, ctx, attr: str, nargs: int):
    name = ins.attrs.get(attr)
    if not isinstance(name, str):
        raise error_at(ins, f"{ins.opcode} needs {attr}=")
    n = ctx.num_parameters(name, ins)
    if n != nargs:
        raise error_at(ins, f"{attr}={name} takes {n} parameter(s), given {nargs}")
    return ctx.call(name, ins)


def _callee_maybe_in_place(ins, ctx, attr: str):
    fn = _callee(ins, ctx, attr, len(ins.operands))
    params = getattr(ctx, "in_place", {}).get(ins.name)
    if params:  # on an in-place chain of a while body (hlo_interp.in_place)
        return ctx.callee_in_place(ins.attrs[attr], params, ins)
    return fn


@kernel("call")
def _call(ins, ctx):
    return _callee_maybe_in_place(ins, ctx, "to_apply")


@kernel("fusion")
def _fusion(ins, ctx):
    return _callee_maybe_in_place(ins, ctx, "calls")


def _own_copies(x: tuple, elements: tuple) -> tuple:
    """x with the listed elements replaced by new arrays of their own (the in-place body writes them)."""
    parts = list(x)
    for k in elements:
        parts[k] = np.array(parts[k], copy=True)
    return tuple(parts)


@kernel("while")
def _while(ins, ctx):
    cond = _callee(ins, ctx, "condition", 1)
    body = _callee(ins, ctx, "body", 1)
    limit = ctx.options.max_iterations
    in_place = ctx.while_body_in_place(ins) if hasattr(ctx, "while_body_in_place") else None
    owned: tuple = ()
    if in_place is not None:
        # The body's in-place variant writes elements `owned` of the carried tuple: they start as copies
        # made here, once per run of the loop, so that no array of the caller is ever written.
        body, owned = in_place

    budget = ctx.loop_budget  # [iterations left]: one budget for all the loops of a run, nested or not

    def run(x):
        if owned:
            x = _own_copies(x, owned)
        while cond(x):
            if budget[0] <= 0:
                raise error_at(ins, f"while loop still running after {limit} iterations of the run's loops "
                                    f"(max_iterations / --max-iterations: a budget for the whole run)")
            budget[0] -= 1
            x = body(x)
        return x
    return run


@kernel("conditional")
def _conditional(ins, ctx):
    a = ins.attrs
    nops = len(ins.operands)
    if "branch_computations" in a:
        names = a["branch_computations"]
        if not names:
            raise error_at(ins, "conditional needs at least one branch")
        if nops != len(names) + 1:
            raise error_at(ins, f"conditional with {len(names)} branches takes {len(names) + 1} operands "
                                f"(the branch index, then one per branch), given {nops}")
        branches = []
        for k, name in enumerate(names):
            if ctx.num_parameters(name, ins) != 1:
                raise error_at(ins, f"branch computation {name} must take exactly 1 parameter")
            branches.append(ctx.call(name, ins))
        last = len(branches) - 1
        branches = tuple(branches)

        def run(index, *args):
            i = int(index)
            if i < 0 or i > last:
                i = last  # XLA: an out-of-range index runs the last branch
            return branches[i](args[i])
        return run
    if "true_computation" in a and "false_computation" in a:
        if nops != 3:
            raise error_at(ins, f"conditional with true/false computations takes 3 operands "
                                f"(pred, true operand, false operand), given {nops}")
        t = _callee(ins, ctx, "true_computation", 1)
        f = _callee(ins, ctx, "false_computation", 1)

        def run(p, x, y):
            return t(x) if p else f(y)
        return run
    raise error_at(ins, "conditional needs branch_computations= or true_computation= and false_computation=")


# --------------------------------------------------------------------------------------------------
# bitcast: a reinterpretation of the physical buffer

def _major_to_minor(shape: ir.ArrayShape) -> tuple[int, ...]:
    lay = shape.layout
    if lay is None or (not lay.minor_to_major and shape.rank):
        return tuple(range(shape.rank))
    return tuple(reversed(lay.minor_to_major))


def _plain_layout(shape: ir.ArrayShape) -> bool:
    """No tiles, tail padding, packing change, sparsity or metadata prefix (layout.is_plain)."""
    from ..layout import is_plain
    return is_plain(shape)


def bitcast(x: np.ndarray, in_order: tuple[int, ...], out_dims: tuple[int, ...], out_order: tuple[int, ...],
            out_dtype: np.dtype) -> np.ndarray:
    """Reinterpret the row-major physical buffer of `x` (stored in `in_order`, its dimensions from major
    to minor) as an array of `out_dims` stored in `out_order`, of element type `out_dtype`."""
    phys = x if in_order == tuple(range(x.ndim)) else x.transpose(in_order)
    if out_dtype != x.dtype:
        phys = np.ascontiguousarray(phys).reshape(-1).view(np.uint8).view(out_dtype)
    phys = phys.reshape(tuple(out_dims[d] for d in out_order))
    if out_order == tuple(range(len(out_dims))):
        return phys
    return phys.transpose(np.argsort(out_order))


@kernel("bitcast")
def _bitcast(ins, ctx):
    (src,) = ctx.operand_shapes(ins)
    dst = ins.shape
    if not (isinstance(src, ir.ArrayShape) and isinstance(dst, ir.ArrayShape)) or \
            src.element_type.dtype is None or dst.element_type.dtype is None:
        raise unsupported(ins, "bitcast of tuples or tokens")
    if any(src.dynamic) or any(dst.dynamic):
        raise unsupported(ins, "bitcast of dynamic shapes")
    sdt, ddt = src.element_type.dtype, dst.element_type.dtype
    sbits, dbits = src.element_type.bits, dst.element_type.bits
    if not (_plain_layout(src) and _plain_layout(dst)) or (
            sdt != ddt and (sbits % 8 or dbits % 8) and (src.rank or dst.rank or sbits != dbits)):
        return _tiled_bitcast(ins, src, dst)  # through the physical bytes (tiles, padding, packing)
    if src.num_elements() * sbits != dst.num_elements() * dbits:
        raise error_at(ins, f"bitcast changes the size in bits: {src.num_elements() * sbits} -> "
                            f"{dst.num_elements() * dbits}")
    if src.rank == 0 and dst.rank == 0 and sbits == dbits and "pred" not in (
            src.element_type.kind, dst.element_type.kind):
        # scalar reinterpretation (XLA:CPU's comparators: `s32[] bitcast(f32[])`); elementwise, so it
        # also serves computations that reduce/map/sort call on whole vectors
        if sdt == ddt:
            return lambda x: x
        from .numerics import same_width_bitcast
        from ..types import dtype_kind
        return same_width_bitcast(ddt, dbits, dtype_kind(ddt))
    if sdt != ddt and (src.element_type.kind == "pred" or dst.element_type.kind == "pred"):
        raise unsupported(ins, f"bitcast from {src.element_type.name} to {dst.element_type.name} "
                               "(pred element types)")
    in_order, out_order = _major_to_minor(src), _major_to_minor(dst)
    out_dims = tuple(dst.dims)
    if sdt == ddt and in_order == tuple(range(src.rank)) and out_order == tuple(range(dst.rank)):
        def run(x):
            return x.reshape(out_dims)
        return run

    def run(x):
        return bitcast(x, in_order, out_dims, out_order, ddt)
    return run


def _tiled_bitcast(ins, src: ir.ArrayShape, dst: ir.ArrayShape):
    """bitcast where a layout has tiles: the source's physical bytes read in the destination's layout."""
    from .. import layout as L
    for sh in (src, dst):
        why = L.is_supported(sh)
        if why is not None:
            raise unsupported(ins, f"bitcast with {why}")
    if "pred" in (src.element_type.kind, dst.element_type.kind) and src.element_type != dst.element_type:
        raise unsupported(ins, "bitcast between pred and another element type")
    sbytes, dbytes = L.physical_bytes(src), L.physical_bytes(dst)
    if sbytes != dbytes:
        raise error_at(ins, f"bitcast changes the physical size in bytes (tiles and padding included): "
                            f"{sbytes} -> {dbytes}")

    def run(x):
        return L.from_bytes(L.to_bytes(x, src), dst)
    return run


# --------------------------------------------------------------------------------------------------
# scan

@kernel("scan")
def _scan(ins, ctx):
    """scan(inputs..., inits...): to_apply(x_0..x_{m-1}, c_0..c_{k-1}) -> (y_0..y_{n-1}, c'_0..c'_{k-1})
    applied along the scan dimension, in order (or backwards with is_reverse); y_j of step t is stored
    at index t of output j (along the scan dimension, or last when y_j has lower rank); the result is
    (outputs..., final carries...).  A non-tuple result (XLA's scan expander): with num_carries=1 it is
    the final carry (no outputs), with num_carries=0 the one output; the body then returns that array
    itself, not a 1-tuple."""
    shapes = ctx.operand_shapes(ins)
    k = int(ins.attrs.get("num_carries") or 0)
    m = len(shapes) - k
    dims = tuple(ins.attrs.get("dimensions") or ())
    if len(dims) != 1 or m < 0:
        raise error_at(ins, "scan needs one scan dimension and at most as many carries as operands")
    d = dims[0]
    reverse = bool(ins.attrs.get("is_reverse"))
    res_shape = ins.shape
    single = not isinstance(res_shape, ir.TupleShape)
    elements = (res_shape,) if single else tuple(res_shape.elements)
    n_out = len(elements) - k
    if n_out < 0:
        raise error_at(ins, f"scan: num_carries={k} but the result has {len(elements)} element(s)")
    for s in list(shapes) + list(elements):
        if not (isinstance(s, ir.ArrayShape) and s.element_type.dtype is not None):
            raise unsupported(ins, "scan over tuple or token values")
        if any(s.dynamic):
            raise unsupported(ins, "scan over dynamic shapes")
    if m == 0:
        raise unsupported(ins, "scan without inputs")
    length = shapes[0].dims[d]
    fn = ctx.call(ins.attrs["to_apply"], ins)
    out_shapes = elements[:n_out]
    axes = [min(d, s.rank - 1) for s in out_shapes]

    def run(*vals):
        xs, carry = vals[:m], tuple(vals[m:])
        outs = [np.zeros(s.dims, s.element_type.dtype) for s in out_shapes]
        steps = range(length - 1, -1, -1) if reverse else range(length)
        for t in steps:
            r = fn(*[np.take(x, t, axis=d) for x in xs], *carry)
            r = r if isinstance(r, tuple) else (r,)
            for j in range(n_out):
                idx = (slice(None),) * axes[j] + (t,)
                outs[j][idx] = r[j]
            carry = tuple(r[n_out:])
        res = tuple(outs) + carry
        return res[0] if single else res
    return run
