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


def _errors(make: Callable[[type], Any], cls: type) -> str:
    with pytest.raises(TypeError) as caught:
        make(cls)
    return str(caught.value).split(".__init__()")[-1]


def test_init_takes_and_refuses_arguments_as_the_standard_one_does() -> None:
    def declare(decorate: Callable[..., Any]) -> type:
        @decorate
        class Row:
            name: str
            size: int
            tags: list[str] = field(default_factory=list)
            kind: str = "file"
            seen: int = field(default=0, init=False)

            def __post_init__(self) -> None:
                self.seen += 1

        return Row

    mine, standard = declare(record), declare(dataclasses.dataclass)
    for call in (lambda row: row("a", 1), lambda row: row("a", size=1, kind="dir"), lambda row: row(size=2, name="b")):
        assert repr(call(mine)).split("Row")[-1] == repr(call(standard)).split("Row")[-1]
        assert call(mine).seen == 1 == call(standard).seen
    assert mine("a", 1).tags is not mine("a", 1).tags  # a factory per instance
    for bad in (lambda row: row(), lambda row: row("a"), lambda row: row("a", 1, [], "k", 9),
                lambda row: row("a", 1, name="b"), lambda row: row("a", 1, colour="red"),
                lambda row: row("a", 1, seen=3)):
        assert _errors(bad, mine) == _errors(bad, standard)
    assert mine.__match_args__ == standard.__match_args__ == ("name", "size", "tags", "kind")


def test_declarations_the_standard_decorator_refuses_are_refused() -> None:
    with pytest.raises(ValueError, match="mutable default"):
        @record
        class Mutable:
            items: list[str] = []  # noqa: RUF012

    with pytest.raises(TypeError, match="follows default argument"):
        @record
        class Order:
            first: int = 0
            second: int  # type: ignore[misc]


def test_check_imports_neither_dataclasses_nor_inspect_nor_subprocess() -> None:
    """What `check` no longer pays for at start-up (docs/measured.md): a module that pulls one of them back in
    shows here, not only in scripts/bench_check.py."""
    import subprocess
    import sys

    code = ("import sys\nimport neurondoctor.actions.check.check_run\n"
            "print(sorted(m for m in ('dataclasses', 'inspect', 'subprocess', 'socket', 'datetime', 'secrets')"
            " if m in sys.modules))")
    shown = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert shown.stdout.strip() == "[]"
