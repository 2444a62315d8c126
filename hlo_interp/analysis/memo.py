"""A memo of a function of one shape, shared by the analyses (cost, memory, the report)."""
from __future__ import annotations


def by_shape(fn):
    """fn(shape), remembered per shape object: the parser hands the same object to every instruction
    written with the same shape text, and a module repeats a few shapes thousands of times.  (By
    identity: hashing a shape dataclass costs about as much as the functions cached here.)"""
    cache: dict = {}

    def cached(shape):
        got = cache.get(id(shape))
        if got is not None and got[0] is shape:
            return got[1]
        if len(cache) > 65536:
            cache.clear()
        v = fn(shape)
        cache[id(shape)] = (shape, v)  # holding the shape keeps its id from being reused
        return v
    cached.__doc__ = fn.__doc__
    cached.__wrapped__ = fn
    return cached
