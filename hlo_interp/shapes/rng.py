"""Shape rules of rng, rng-bit-generator and rng-get-and-update-state."""
from __future__ import annotations

from typing import Optional

from .infer import (PRED, U64, Ctx, Shape, ShapeError, array, dynamic_of, human, is_array, is_scalar, kept,
                   register, tuple_of, type_name)


def _rng(c: Ctx) -> Optional[Shape]:
    c.arity(2)
    a, b = c.array_op(0), c.array_op(1)
    dist = c.attr("distribution", "rng_uniform")
    for s in (a, b):
        if not is_scalar(s):
            raise ShapeError(f"rng parameters must be scalars, got {human(s)}")
    if a.element_type != b.element_type:
        raise ShapeError(f"rng parameters must have the same type, got {human(a)} and {human(b)}")
    t = a.element_type
    if dist == "rng_normal" and not t.is_float:
        raise ShapeError(f"rng_normal needs floating-point parameters, got {type_name(t)}")
    if dist == "rng_uniform" and not (t == PRED or t.is_integral or t.is_float):
        raise ShapeError(f"rng_uniform needs pred, integral or floating-point parameters, got {type_name(t)}")
    d = c.declared_array()
    if d is None:
        return None
    return array(t, d.dims, dynamic_of(d))


def _rng_bit_generator(c: Ctx) -> Optional[Shape]:
    c.arity(1)
    state = c.array_op(0, "state")
    d = c.declared
    if d is None:
        return None
    if is_array(d):  # the values alone (XLA's verifier accepts it; XLA:CPU gives the tuple form's values)
        if not d.element_type.is_integral:
            raise ShapeError(f"rng-bit-generator's output must be an integral array, got {human(d)}")
        return kept(d)
    d = c.declared_tuple(2)
    out = d.elements[1]
    if not is_array(out) or not out.element_type.is_integral:
        raise ShapeError(f"rng-bit-generator's output must be an integral array, got {human(out)}")
    return tuple_of([kept(state), kept(out)])


def _rng_get_and_update_state(c: Ctx) -> Shape:
    c.arity(0)
    return array(U64, (2,))


register("rng", _rng)
register("rng-bit-generator", _rng_bit_generator)
register("rng-get-and-update-state", _rng_get_and_update_state)
