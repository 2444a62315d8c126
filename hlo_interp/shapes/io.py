"""Shape rules of feeds and channels: infeed, outfeed, send, recv and their -done."""
from __future__ import annotations

from typing import Optional

from .. import ir
from .infer import (TOKEN_SHAPE, U32_SCALAR, Ctx, Shape, ShapeError, compatible, human, is_token, kept,
                   register, tuple_of)


def _infeed(c: Ctx) -> Optional[Shape]:
    c.arity(1)
    if not is_token(c.ops[0]):
        raise ShapeError(f"the operand of infeed must be a token, got {human(c.ops[0])}")
    d = c.declared_tuple(2)
    if d is None:
        return None
    return tuple_of([kept(d.elements[0]), TOKEN_SHAPE])


def _outfeed(c: Ctx) -> Shape:
    c.arity(2)
    if not is_token(c.ops[1]):
        raise ShapeError(f"the second operand of outfeed must be a token, got {human(c.ops[1])}")
    osh = c.attr("outfeed_shape")
    if osh is not None and not compatible(osh, c.ops[0]):
        raise ShapeError(f"outfeed_shape {human(osh)} is not compatible with the operand shape "
                         f"{human(c.ops[0])}")
    return TOKEN_SHAPE


def _send(c: Ctx) -> Shape:
    c.arity(2)
    if not is_token(c.ops[1]):
        raise ShapeError(f"the second operand of send must be a token, got {human(c.ops[1])}")
    return tuple_of([kept(c.ops[0]), U32_SCALAR, TOKEN_SHAPE])


def _recv(c: Ctx) -> Optional[Shape]:
    c.arity(1)
    if not is_token(c.ops[0]):
        raise ShapeError(f"the operand of recv must be a token, got {human(c.ops[0])}")
    d = c.declared_tuple(3)
    if d is None:
        return None
    return tuple_of([kept(d.elements[0]), U32_SCALAR, TOKEN_SHAPE])


def _channel_context(c: Ctx) -> ir.TupleShape:
    c.arity(1)
    s = c.ops[0]
    if not isinstance(s, ir.TupleShape) or len(s.elements) != 3:
        raise ShapeError(f"the operand of {c.opcode} must be the (data, u32[], token[]) tuple of a "
                         f"{c.opcode[:-5]}, got {human(s)}")
    return s


def _send_done(c: Ctx) -> Shape:
    _channel_context(c)
    return TOKEN_SHAPE


def _recv_done(c: Ctx) -> Shape:
    s = _channel_context(c)
    return tuple_of([kept(s.elements[0]), TOKEN_SHAPE])


register("infeed", _infeed)
register("outfeed", _outfeed)
register("send", _send)
register("recv", _recv)
register("send-done", _send_done)
register("recv-done", _recv_done)
