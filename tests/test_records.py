"""neurondoctor.records.dataclass gives the standard library's results (repr, eq, hash, frozen, fields, replace),
checked class by class against `dataclasses.dataclass` on the same declarations."""

from __future__ import annotations

import dataclasses
from dataclasses import field
from typing import Any, Callable, Optional

import pytest

from neurondoctor.records import dataclass as record


def _declare(decorate: Callable[..., Any], frozen: bool) -> tuple[type, type]:
    @decorate(frozen=frozen)
    class Base:
        name: str
        count: int = 0
        hidden: list[str] = field(default_factory=list, repr=False)
        ignored: Optional[str] = field(default=None, compare=False)

    @decorate(frozen=frozen)
    class Child(Base):
        extra: str = "x"

    return Base, Child


@pytest.mark.parametrize("frozen", [False, True])
def test_same_results_as_the_standard_decorator(frozen: bool) -> None:
    ours = _declare(record, frozen)
    theirs = _declare(dataclasses.dataclass, frozen)
    for mine, standard in zip(ours, theirs):
        a, b = mine("n", 1, ["h"], "i"), standard("n", 1, ["h"], "i")
        assert repr(a) == repr(b)
        assert (a == mine("n", 1, ["h"], "other")) is (b == standard("n", 1, ["h"], "other")) is True
        assert (a == mine("n", 2, ["h"], "i")) is (b == standard("n", 2, ["h"], "i")) is False
        assert a.__eq__(object()) is NotImplemented
        assert [item.name for item in dataclasses.fields(a)] == [item.name for item in dataclasses.fields(b)]
        assert dataclasses.asdict(a) == dataclasses.asdict(b)
        assert dataclasses.replace(a, count=5).count == 5
        if frozen:
            assert hash(mine("n", 1, (), "i")) == hash(standard("n", 1, (), "other"))  # `ignored` is not hashed
            assert {mine("n", 1, (), "i"), mine("n", 1, (), "j")} == {mine("n", 1, (), "k")}
            with pytest.raises(dataclasses.FrozenInstanceError):
                a.count = 3  # type: ignore[misc]
        else:
            assert type(a).__hash__ is None is type(b).__hash__
            with pytest.raises(TypeError):
                hash(a)
    base, child = ours
    assert base("n") != child("n")  # another class is never equal, as with the standard decorator
    assert repr(child("n")).startswith("_declare.<locals>.Child(name='n'")


def test_a_method_the_class_defines_is_kept() -> None:
    @record(frozen=True)
    class Own:
        value: int

        def __eq__(self, other: object) -> bool:
            return True

        def __hash__(self) -> int:
            return 7

        def __repr__(self) -> str:
            return "own"

    assert Own(1) == Own(2) and hash(Own(1)) == 7 and repr(Own(1)) == "own"


def test_a_self_referencing_record_prints() -> None:
    @record
    class Node:
        children: list[Any] = field(default_factory=list)

    node = Node()
    node.children.append(node)
    assert repr(node) == "test_a_self_referencing_record_prints.<locals>.Node(children=[...])"


def test_the_bare_decorator_and_the_called_one_agree() -> None:
    @record
    class Bare:
        value: int

    @record()
    class Called:
        value: int

    assert repr(Bare(1)).endswith("Bare(value=1)") and repr(Called(1)).endswith("Called(value=1)")
    assert Bare(1) == Bare(1) and Called(1) != Called(2)
