"""`dataclass`, as the standard library's, with `__repr__`, `__eq__` and `__hash__` made without compiling code.

The standard decorator writes each generated method as source text and compiles it with `exec`: on CPython 3.11
that is three to six compilations per class, and `check` imports about seventy classes before it reads a file, a
tenth of its run on a 2-core machine (docs/measured.md). Here only `__init__` (and a frozen class's
`__setattr__`/`__delattr__`) are compiled by `dataclasses`; `__repr__`, `__eq__` and `__hash__` are closures
over the class's field names, with the same results: the repr `Name(field=value, …)` of the fields shown
(`field(repr=False)` left out, recursion cut), equality on the compared fields of two instances of the same
class, a frozen class hashable on them, a mutable one unhashable. A method the class defines itself is kept.
The result is a real dataclass: `fields`, `asdict`, `replace` and pytest's comparisons work on it.
"""

from __future__ import annotations

import dataclasses
import reprlib
from typing import TYPE_CHECKING, Any, Callable, Optional, TypeVar, Union

_Class = TypeVar("_Class", bound=type)


def _values(instance: object, names: tuple[str, ...]) -> tuple[Any, ...]:
    return tuple([getattr(instance, name) for name in names])


def _add_methods(cls: _Class, frozen: bool) -> _Class:
    fields = dataclasses.fields(cls)
    shown = tuple(item.name for item in fields if item.repr)
    compared = tuple(item.name for item in fields if item.compare)
    hashed = tuple(item.name for item in fields if (item.compare if item.hash is None else item.hash))

    @reprlib.recursive_repr()
    def __repr__(self: object) -> str:
        shown_values = ", ".join(f"{name}={getattr(self, name)!r}" for name in shown)
        return f"{self.__class__.__qualname__}({shown_values})"

    def __eq__(self: object, other: object) -> bool:
        if other.__class__ is self.__class__:
            return _values(self, compared) == _values(other, compared)
        return NotImplemented

    def __hash__(self: object) -> int:
        return hash(_values(self, hashed))

    methods: dict[str, Optional[Callable[..., Any]]] = {"__repr__": __repr__, "__eq__": __eq__}
    if "__hash__" not in cls.__dict__ or cls.__dict__["__hash__"] is None:
        methods["__hash__"] = __hash__ if frozen else None
    for name, method in methods.items():
        if name in cls.__dict__ and cls.__dict__[name] is not None:
            continue
        if method is not None:
            method.__qualname__ = f"{cls.__qualname__}.{name}"
        setattr(cls, name, method)
    return cls


if TYPE_CHECKING:
    from dataclasses import dataclass as dataclass
else:
    def dataclass(cls: Optional[type] = None, /, *, frozen: bool = False) -> Union[type, Callable[[type], type]]:
        """`@dataclass` or `@dataclass(frozen=True)`: the standard decorator's class, its repr, eq and hash
        made without `exec` (module docstring)."""
        def wrap(target: type) -> type:
            made = dataclasses.dataclass(target, repr=False, eq=False, frozen=frozen)
            return _add_methods(made, frozen)

        return wrap if cls is None else wrap(cls)
