"""hlo_interp.records.record against dataclasses.dataclass: the same class behaviour, made cheaper."""
from __future__ import annotations

import copy
import dataclasses
import pickle
from dataclasses import field
from typing import Optional

import pytest

from hlo_interp.records import record


def _pair(frozen: bool, eq: bool = True):
    """The same class body made by record and by dataclass."""
    def body():
        class Point:
            x: int
            y: Optional[float] = None
            tags: list = field(default_factory=list)
            quote: str = field(default='"', compare=False)
            hidden: int = field(default=7, repr=False)

            def norm(self):
                return abs(self.x)
        return Point
    return record(body(), frozen=frozen, eq=eq), dataclasses.dataclass(body(), frozen=frozen, eq=eq)


@pytest.mark.parametrize("frozen,eq", [(True, True), (False, True), (False, False), (True, False)])
def test_behaves_as_dataclass(frozen, eq):
    R, D = _pair(frozen, eq)
    for args, kw in [((1,), {}), ((1, 2.5), {}), ((3,), {"tags": [1], "quote": "'"}), ((), {"x": -1, "hidden": 2})]:
        r, d = R(*args, **kw), D(*args, **kw)
        assert repr(r) == repr(d)
        assert r.__dict__ == d.__dict__
        assert [f.name for f in dataclasses.fields(r)] == [f.name for f in dataclasses.fields(d)]
        assert dataclasses.asdict(r) == dataclasses.asdict(d)
        assert dataclasses.astuple(r) == dataclasses.astuple(d)
        r2, d2 = dataclasses.replace(r, x=5), dataclasses.replace(d, x=5)
        assert repr(r2) == repr(d2)
        assert (r == R(*args, **kw)) == (d == D(*args, **kw))
        assert (r == r2) == (d == d2)
        other = R(*args, **{**kw, "quote": "x"})  # a field that is not compared
        assert (r == other) == (d == D(*args, **{**kw, "quote": "x"}))
        assert (r.__eq__(1)) is (d.__eq__(1))
        assert dataclasses.is_dataclass(r) and R.__match_args__ == D.__match_args__
        assert R.__dataclass_params__.frozen == D.__dataclass_params__.frozen == frozen
        assert R.__dataclass_params__.eq == D.__dataclass_params__.eq == eq
        assert (R.__hash__ is None) == (D.__hash__ is None)
        if frozen and eq:
            assert hash(dataclasses.replace(r, tags=())) == hash(dataclasses.replace(d, tags=()))
        assert copy.deepcopy(r).__dict__ == r.__dict__
        if frozen:
            for obj in (r, d):
                with pytest.raises(dataclasses.FrozenInstanceError, match="cannot assign to field 'x'"):
                    obj.x = 2
                with pytest.raises(dataclasses.FrozenInstanceError, match="cannot delete field 'y'"):
                    del obj.y
        else:
            r.x = d.x = 9
            assert repr(r) == repr(d)
    with pytest.raises(TypeError):
        R()
    with pytest.raises(TypeError):
        D()
    assert R(1).tags is not R(1).tags  # a fresh default per instance


@record(frozen=True)
class Frozen:
    a: int
    b: tuple = ()


@record
class Mutable:
    a: int
    b: list = field(default_factory=list)


def test_pickle_and_copy():
    for obj in (Frozen(1, (2,)), Mutable(1, [2])):
        for got in (pickle.loads(pickle.dumps(obj)), copy.deepcopy(obj), copy.copy(obj)):
            assert type(got) is type(obj) and got == obj and got.__dict__ == obj.__dict__
    assert hash(pickle.loads(pickle.dumps(Frozen(1)))) == hash(Frozen(1))


def test_own_methods_kept_and_hash_rules():
    @record(frozen=True)
    class A:
        v: int

        def __repr__(self):
            return "A!"

    assert repr(A(1)) == "A!" and A(1) == A(1) and hash(A(1)) == hash((1,))

    @record(eq=False)
    class B:
        v: int

        def __eq__(self, other):
            return True

        __hash__ = None

    assert B(1) == B(2) and B.__hash__ is None

    @record
    class C:
        v: int

    assert C.__hash__ is None and C(1) == C(1) and C(1) != C(2)

    @record(frozen=True)
    class Empty:
        pass

    assert Empty() == Empty() and hash(Empty()) == hash(())


def test_properties_and_post_init():
    @record
    class P:
        a: int
        self: int = 0

        def __post_init__(self):
            self.seen = True

    p = P(1, self=2)
    assert p.a == 1 and p.self == 2 and p.seen

    @record
    class Q:
        v: int

    Q.v = property(lambda s: s.__dict__["_v"], lambda s, x: s.__dict__.__setitem__("_v", x * 2))
    assert Q(3).v == 6  # set through a property added after the class was made, as dataclass does


def test_refuses_what_it_does_not_make():
    @dataclasses.dataclass
    class Base:
        a: int

    with pytest.raises(TypeError):
        @record
        class Sub(Base):
            b: int
    with pytest.raises(TypeError):
        @record(frozen=True)
        class S:
            a: int

            def __setattr__(self, k, v):
                pass
