"""Shape rules of batch-norm-training, -inference and -grad."""
from __future__ import annotations

from typing import Sequence

from .. import ir
from .infer import (Ctx, Shape, ShapeError, array, human, kept, register, same_dims, same_type_ignoring_fp,
                   tuple_of, type_name)


def _bn_common(c: Ctx, names: Sequence[str]) -> tuple[ir.ArrayShape, int]:
    c.arity(len(names))
    x = c.array_op(0, names[0])
    fi = c.attr("feature_index", 0)
    if fi < 0 or fi >= x.rank:
        raise ShapeError(f"{c.opcode}: feature_index {fi} out of range for operand rank {x.rank}")
    if not x.element_type.is_float:
        raise ShapeError(f"the operand to {c.opcode} must have a floating-point element type, got "
                         f"{type_name(x.element_type)}")
    n = x.dims[fi]
    for i, name in enumerate(names[1:], 1):
        s = c.array_op(i, name)
        if name == "grad_output":
            if not same_dims(s, x):
                raise ShapeError(f"{c.opcode}: grad_output {human(s)} must have the operand's dimensions "
                                 f"{human(x)}")
        else:
            if s.rank != 1:
                raise ShapeError(f"{c.opcode}: {name} must have rank 1, but has rank {s.rank}")
            if s.dims[0] != n:
                raise ShapeError(f"{c.opcode}: the size of {name} ({s.dims[0]}) must equal the feature count {n}")
        if not same_type_ignoring_fp(s.element_type, x.element_type):
            raise ShapeError(f"{c.opcode}: the inputs should have the same element type, but {name} is "
                             f"{type_name(s.element_type)} and the operand is {type_name(x.element_type)}")
    return x, n


def _bn_training(c: Ctx) -> Shape:
    x, n = _bn_common(c, ("operand", "scale", "offset"))
    f = array(x.element_type, (n,))
    return tuple_of([kept(x), f, f])


def _bn_inference(c: Ctx) -> Shape:
    x, _ = _bn_common(c, ("operand", "scale", "offset", "mean", "variance"))
    return kept(x)


def _bn_grad(c: Ctx) -> Shape:
    x, n = _bn_common(c, ("operand", "scale", "mean", "variance", "grad_output"))
    f = array(x.element_type, (n,))
    return tuple_of([kept(x), f, f])


register("batch-norm-training", _bn_training)
register("batch-norm-inference", _bn_inference)
register("batch-norm-grad", _bn_grad)
