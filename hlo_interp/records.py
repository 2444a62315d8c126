"""`record`: `dataclasses.dataclass` made cheaply, for the package's data classes.

Python 3.11's dataclass compiles each method it generates with its own `exec` (six for a frozen class:
__init__, __repr__, __eq__, __hash__, __setattr__, __delattr__; ~0.4 ms a class).  A process of
`hlo-run` creates about fifty data classes at import, 15-20 ms of its start-up.  `record` compiles only
__init__ (one `exec`); __repr__, __eq__, __hash__ and the frozen __setattr__/__delattr__ are closures
over the field names, which behave as the generated ones do.  The fields themselves are still worked
out by `dataclasses` (with nothing to generate), so that `dataclasses.fields`, `replace`, `asdict`,
`is_dataclass` and `__dataclass_fields__`/`__dataclass_params__` are those of a dataclass.

    @record(frozen=True)
    class SliceDim:
        start: int
        limit: int
        stride: int = 1

Options: `frozen` and `eq` as in dataclass (init and repr always on; no order, unsafe_hash, slots,
kw_only or InitVar; a data class may not derive from another).  A class's own __repr__/__eq__ is kept,
and __hash__ follows dataclass's rules.
"""
from __future__ import annotations

import dataclasses
from dataclasses import MISSING, FrozenInstanceError
from operator import attrgetter

__all__ = ["record"]


def record(cls=None, /, *, frozen: bool = False, eq: bool = True):
    """The class decorator (`@record`, `@record(frozen=True)`, `@record(eq=False)`)."""
    def wrap(c):
        return _make(c, frozen, eq)
    return wrap if cls is None else wrap(cls)


_PARAMS: dict = {}  # (frozen, eq) -> the __dataclass_params__ a dataclass with those options has


def _params(frozen: bool, eq: bool):
    """What `dataclasses.dataclass(frozen=frozen, eq=eq)` records as __dataclass_params__ (taken from
    a real one, made once per process and option set)."""
    got = _PARAMS.get((frozen, eq))
    if got is None:
        got = _PARAMS[frozen, eq] = dataclasses.dataclass(type("_Template", (), {}), frozen=frozen,
                                                          eq=eq).__dataclass_params__
    return got


class _Factory:
    """The default of a field made by a default_factory (as dataclass's _HAS_DEFAULT_FACTORY)."""

    def __repr__(self) -> str:
        return "<factory>"


_HAS_FACTORY = _Factory()


def _make(cls, frozen: bool, eq: bool):
    own = cls.__dict__
    for b in cls.__mro__[1:-1]:
        if "__dataclass_fields__" in b.__dict__:
            raise TypeError(f"{cls.__name__}: a record may not derive from a data class")
    annotations = own.get("__annotations__", {})
    if any("InitVar" in str(t) for t in annotations.values()):
        raise TypeError(f"{cls.__name__}: InitVar is not supported by record")
    if frozen and ("__setattr__" in own or "__delattr__" in own):
        raise TypeError(f"Cannot overwrite attribute __setattr__ in class {cls.__name__}")
    class_hash = own.get("__hash__", MISSING)
    explicit_hash = not (class_hash is MISSING or (class_hash is None and "__eq__" in own))
    if not own.get("__doc__"):
        # dataclass would write the signature with inspect (slow); the same information
        cls.__doc__ = f"{cls.__name__}({', '.join(f'{n}: {t}' for n, t in annotations.items())})"
    # the fields, as dataclass reads them (ClassVars left out, Field defaults resolved), nothing generated
    dataclasses.dataclass(cls, init=False, repr=False, eq=False, frozen=False)
    fields = dataclasses.fields(cls)
    names = tuple(f.name for f in fields)

    cls.__init__ = _init(cls, fields, frozen)
    if "__repr__" not in own:
        cls.__repr__ = _repr(tuple(f.name for f in fields if f.repr))
    if eq:
        if "__eq__" not in own:
            cls.__eq__ = _eq(_key(tuple(f.name for f in fields if f.compare)))
        if not explicit_hash:
            # dataclass: a frozen class hashes its compared fields; a mutable one is unhashable
            cls.__hash__ = _hash(_key(tuple(f.name for f in fields if (f.compare if f.hash is None else f.hash)))) \
                if frozen else None
    if frozen:
        cls.__setattr__, cls.__delattr__ = _frozen(cls, names)
    cls.__dataclass_params__ = _params(frozen, eq)
    return cls


def _init(cls, fields, frozen: bool):
    """__init__(self, <fields in order, with their defaults>): the one generated (exec'd) method."""
    names = [f.name for f in fields]
    self_name = "__record_self__" if "self" in names else "self"
    glob = {"_HAS_FACTORY": _HAS_FACTORY, "_object_setattr": object.__setattr__}
    params, values = [], []
    for f in fields:
        n = f.name
        if f.default_factory is not MISSING:
            glob[f"_factory_{n}"] = f.default_factory
            if f.init:
                params.append(f"{n}=_HAS_FACTORY")
                values.append(f"_factory_{n}() if {n} is _HAS_FACTORY else {n}")
            else:
                values.append(f"_factory_{n}()")
        elif f.default is not MISSING:
            if f.init:
                glob[f"_default_{n}"] = f.default
                params.append(f"{n}=_default_{n}")
                values.append(n)
            else:
                glob[f"_default_{n}"] = f.default
                values.append(f"_default_{n}")
        elif f.init:
            params.append(n)
            values.append(n)
        else:
            values.append(None)  # init=False without a default: left unset, as dataclass does
    body = []
    if frozen:
        # straight into the instance dict in one step, except fields that a class attribute with
        # __set__ (a property) stands for: those through object.__setattr__, as dataclass does
        through = {n for n in names if hasattr(type(cls.__dict__.get(n)), "__set__")}
        direct = [(n, v) for n, v in zip(names, values) if v is not None and n not in through]
        if direct:
            body.append(f"{self_name}.__dict__.update({{{', '.join(f'{n!r}: {v}' for n, v in direct)}}})")
        body += [f"_object_setattr({self_name}, {n!r}, {v})" for n, v in zip(names, values)
                 if v is not None and n in through]
    else:
        # `self.name = value`, as dataclass does (a property added to the class later is used)
        body += [f"{self_name}.{n} = {v}" for n, v in zip(names, values) if v is not None]
    if hasattr(cls, "__post_init__"):
        body.append(f"{self_name}.__post_init__()")
    src = f"def __init__({', '.join([self_name] + params)}):\n    " + ("\n    ".join(body) or "pass") + "\n"
    exec(src, glob)  # noqa: S102 (the source is made above from field names)
    fn = glob["__init__"]
    fn.__qualname__ = f"{cls.__qualname__}.__init__"
    fn.__module__ = cls.__module__
    return fn


def _key(names: tuple):
    """A function giving the tuple of these attributes of an object (what dataclass compares)."""
    if len(names) > 1:
        return attrgetter(*names)
    if len(names) == 1:
        one = attrgetter(names[0])
        return lambda obj: (one(obj),)
    return lambda obj: ()


def _repr(names: tuple):
    def __repr__(self):
        return self.__class__.__qualname__ + "(" + ", ".join(f"{n}={getattr(self, n)!r}" for n in names) + ")"
    return __repr__


def _eq(key):
    def __eq__(self, other):
        if other.__class__ is self.__class__:
            return key(self) == key(other)
        return NotImplemented
    return __eq__


def _hash(key):
    def __hash__(self):
        return hash(key(self))
    return __hash__


def _frozen(cls, names: tuple):
    def __setattr__(self, name, value):
        if type(self) is cls or name in names:
            raise FrozenInstanceError(f"cannot assign to field {name!r}")
        super(cls, self).__setattr__(name, value)

    def __delattr__(self, name):
        if type(self) is cls or name in names:
            raise FrozenInstanceError(f"cannot delete field {name!r}")
        super(cls, self).__delattr__(name)
    return __setattr__, __delattr__
