"""Reducer computations and the ufunc tables shared by every reducing kernel (reduce, reduce-window,
select-and-scatter, scatter, all-reduce, reduce-scatter): recognizing a computation as a plain
`op(acc, x)` reducer (recognize_reducer, see ops/reduce.py for the semantics), the NumPy ufunc of each
reducer op, its identity value, and XLA's signs of zero for maximum/minimum.
"""
from __future__ import annotations

import ml_dtypes
import numpy as np

from ..opcodes import opcodes_where
from ..types import dtype_kind, from_dtype

REDUCER_OPS = ("add", "multiply", "maximum", "minimum", "and", "or", "xor")
WIDE_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))

_kind = dtype_kind


def wide_int(dtype):
    return np.uint64 if _kind(dtype) == "uint" else np.int64


UFUNCS = {"add": np.add, "multiply": np.multiply, "maximum": np.maximum, "minimum": np.minimum,
           "and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor}
PRED_UFUNCS = {"add": np.logical_or, "or": np.logical_or, "maximum": np.logical_or,
                "multiply": np.logical_and, "and": np.logical_and, "minimum": np.logical_and,
                "xor": np.logical_xor}


def identity(op: str, dtype, orig_dtype):
    """A value that leaves every element unchanged under `op` (for the padding of XLA's tree)."""
    kind = _kind(dtype)
    if kind == "pred":
        return op in ("multiply", "and", "minimum")
    if kind in ("sint", "uint"):
        if op in ("add", "or", "xor"):
            return 0
        if op == "multiply":
            return 1
        if op == "and":
            return -1 if kind == "sint" else 2 ** 64 - 1
        bits = from_dtype(orig_dtype).bits
        ok = _kind(orig_dtype)
        lo, hi = ((-(2 ** (bits - 1)), 2 ** (bits - 1) - 1) if ok == "sint" else (0, 2 ** bits - 1))
        return lo if op == "maximum" else hi
    return _float_identity(op, dtype)


def _float_identity(op: str, dtype):
    """-0 for add (+0 where the type has no -0), 1 for multiply, -inf/+inf for maximum/minimum (the
    lowest/highest finite value where the type has no infinity, like f8e4m3fn)."""
    dtype = np.dtype(dtype)
    if op == "multiply":
        return 1.0
    if op == "add":
        return -0.0 if _has_negative_zero(dtype) else 0.0
    if _kind(dtype) == "complex" or dtype in WIDE_FLOATS or dtype == np.float16:
        return -np.inf if op == "maximum" else np.inf
    with np.errstate(all="ignore"):
        inf = np.asarray(np.inf).astype(dtype).astype(np.float32)
    if np.isinf(inf):
        return -np.inf if op == "maximum" else np.inf
    fi = ml_dtypes.finfo(dtype)
    return float(fi.min) if op == "maximum" else float(fi.max)


def _has_negative_zero(dtype) -> bool:
    dtype = np.dtype(dtype)
    if _kind(dtype) == "complex" or dtype in WIDE_FLOATS or dtype == np.float16:
        return True
    with np.errstate(all="ignore"):
        z = np.asarray(-0.0).astype(dtype).astype(np.float32)
    return bool(z == 0 and np.signbit(z))


def fix_zero_signs(r, x, init, dims, op):
    """XLA: maximum(-0, +0) = +0 and minimum(-0, +0) = -0 in either order (NumPy keeps the first)."""
    r = np.asarray(r)
    if not _has_negative_zero(r.dtype):
        return r
    z = r == 0
    if not z.any():
        return r
    x32 = x.astype(np.float32) if x.dtype.itemsize < 4 else x
    if op == "maximum":
        has = np.logical_or.reduce((x32 == 0) & ~np.signbit(x32), axis=dims) | bool(init == 0 and not np.signbit(init))
        want_neg = ~has
    else:
        has = np.logical_or.reduce((x32 == 0) & np.signbit(x32), axis=dims) | bool(init == 0 and np.signbit(init))
        want_neg = has
    out = np.array(r, copy=True)
    neg = np.asarray(-0.0).astype(r.dtype)
    pos = np.asarray(0.0).astype(r.dtype)
    out[z] = np.where(want_neg, neg, pos)[z]
    return out


# elementwise on scalars: the elementwise family and the table's `scalar_safe` opcodes (plumbing, opt-barrier)
ELEMENTWISE_SAFE_OPS = opcodes_where(lambda o: o.family == "elementwise" or o.scalar_safe)


def is_elementwise_computation(module, name: str, _seen=None) -> bool:
    """True when a computation only does elementwise work on scalars (so calling it on whole arrays
    gives the elementwise result)."""
    _seen = _seen if _seen is not None else set()
    if name in _seen:
        return True
    _seen.add(name)
    try:
        comp = module.computation(name)
    except KeyError:
        return False
    for ins in comp.instructions:
        if ins.opcode in ("call", "fusion"):
            callee = ins.attrs.get("to_apply") or ins.attrs.get("calls")
            if not isinstance(callee, str) or not is_elementwise_computation(module, callee, _seen):
                return False
            continue
        if ins.opcode not in ELEMENTWISE_SAFE_OPS:
            return False
        sh = ins.shape
        if ins.opcode == "constant" and (sh is None or sh.is_tuple or getattr(sh, "dims", ()) != ()):
            return False
        if ins.opcode == "parameter" and sh is not None and not sh.is_tuple and getattr(sh, "dims", ()) != ():
            return False
    return True


def strip_converts(comp, name):
    """Follow `convert` instructions from `name` down; returns (instruction, [convert dtypes, outermost
    first])."""
    chain = []
    ins = comp_lookup(comp, name)
    while ins is not None and ins.opcode == "convert":
        chain.append(ins.shape.element_type.dtype)
        ins = comp_lookup(comp, ins.operands[0])
    return ins, chain


def comp_lookup(comp, name):
    for ins in comp.instructions:
        if ins.name == name:
            return ins
    return None


def recognize_reducer(module, name: str, n: int):
    """[(op, round_dtype or None)] per output when the computation is a plain reducer, else None."""
    try:
        comp = module.computation(name)
    except KeyError:
        return None
    params = {}
    for ins in comp.instructions:
        if ins.opcode == "parameter":
            params[ins.name] = ins
    if len(params) != 2 * n:
        return None
    root = comp.root
    if n == 1 and root.opcode != "tuple":
        outs = [root.name]
    elif root.opcode == "tuple" and len(root.operands) == n:
        outs = list(root.operands)
    else:
        return None
    result = []
    for k, out in enumerate(outs):
        op_ins, post = strip_converts(comp, out)
        if op_ins is None or op_ins.opcode not in REDUCER_OPS or len(op_ins.operands) != 2:
            return None
        if op_ins.shape is None or op_ins.shape.is_tuple:
            return None
        pnums = []
        pre_types = []
        for o in op_ins.operands:
            leaf, pre = strip_converts(comp, o)
            if leaf is None or leaf.opcode != "parameter":
                return None
            pnums.append(leaf.parameter_number)
            pre_types.append((leaf.shape.element_type.dtype, pre))
        if sorted(pnums) != [k, n + k]:
            return None
        if op_ins.opcode == "multiply" and _kind(op_ins.shape.element_type.dtype) == "complex" and pnums[0] != k:
            return None  # XLA:CPU's complex product is not commutative bit for bit: the computation decides
        ptype = pre_types[0][0]
        op_t = op_ins.shape.element_type.dtype
        round_dtype = None
        if post or any(pre for _, pre in pre_types):
            # Only float rounding forms: param T -> (convert C) -> op in C -> converts ... -> T.
            all_types = [op_t, ptype] + post + [t for _, pre in pre_types for t in pre]
            if any(_kind(t) != "float" for t in all_types):
                return None
            if post and post[0] != ptype:
                return None  # the result type must be the accumulator's
            narrow = [t for t in all_types if t not in WIDE_FLOATS]
            if np.dtype(op_t) not in WIDE_FLOATS:
                return None
            if narrow:
                # the narrowest type every step is rounded through
                round_dtype = min(narrow, key=lambda t: (ml_dtypes.finfo(t).nmant, ml_dtypes.finfo(t).maxexp))
            if np.dtype(ptype) == np.float64 and np.dtype(op_t) == np.float32:
                return None
        elif np.dtype(op_t) != np.dtype(ptype):
            return None
        result.append((op_ins.opcode, round_dtype))
    return result
