"""`dataclass` and `field`, as the standard library's, made without compiling code or importing `dataclasses`.

The standard decorator writes each generated method as source text and compiles it with `exec`, and importing
`dataclasses` imports `inspect` (with `dis`, `tokenize`, `ast`): on CPython 3.11 that was a third of the time
`check` spent importing its modules, before it read a file (docs/measured.md). Here every method is a closure
over the class's field names, with the standard results: `__init__` takes the fields positionally or by name,
fills defaults and factories, calls `__post_init__` and raises the same `TypeError`s; the repr
`Name(field=value, …)` of the fields shown (`field(repr=False)` left out, recursion cut); equality on the compared
fields of two instances of the same class; a frozen class hashable on them and raising `FrozenInstanceError` on
assignment, a mutable one unhashable. A method the class defines itself is kept.

The result is still a dataclass for the standard library: `__dataclass_fields__` is made, with real
`dataclasses.Field` objects, the first time something asks for it (`dataclasses.fields`, `asdict`, `replace`,
pytest's comparisons), and only then is `dataclasses` imported. A declaration this module does not handle
(`InitVar`, a class with its own `__setattr__` or `__slots__`) goes to the standard decorator.
"""

from __future__ import annotations

import reprlib
from typing import TYPE_CHECKING, Any, Callable, ClassVar, Optional, TypeVar, Union, get_origin

_Class = TypeVar("_Class", bound=type)


class _Missing:
    def __repr__(self) -> str:
        return "MISSING"


MISSING: Any = _Missing()
_MUTABLE_DEFAULTS = (list, dict, set)


class RecordField:
    """What `field(...)` declares, and then the field's name and annotation."""

    __slots__ = ("compare", "default", "default_factory", "hash", "init", "name", "repr", "type")

    def __init__(self, default: Any = MISSING, default_factory: Any = MISSING, init: bool = True,
                 repr: bool = True, compare: bool = True, hash: Optional[bool] = None) -> None:
        if default is not MISSING and default_factory is not MISSING:
            raise ValueError("cannot specify both default and default_factory")
        self.name = ""
        self.type: Any = None
        self.default = default
        self.default_factory = default_factory
        self.init = init
        self.repr = repr
        self.compare = compare
        self.hash = hash

    def standard(self) -> Any:
        """This field as a `dataclasses.Field`, for the standard library's functions."""
        import dataclasses

        made: Any = dataclasses.field(default=self.default if self.default is not MISSING else dataclasses.MISSING,
                                 default_factory=(self.default_factory if self.default_factory is not MISSING
                                                  else dataclasses.MISSING),
                                 init=self.init, repr=self.repr, compare=self.compare, hash=self.hash)
        made.name, made.type = self.name, self.type
        made._field_type = dataclasses._FIELD  # type: ignore[attr-defined]  # what `fields()` selects on
        return made


def _is_class_var(annotation: Any) -> bool:
    if isinstance(annotation, str):
        return annotation.startswith(("ClassVar", "typing.ClassVar", "t.ClassVar"))
    return annotation is ClassVar or get_origin(annotation) is ClassVar


def _is_init_var(annotation: Any) -> bool:
    if isinstance(annotation, str):
        return annotation.startswith(("InitVar", "dataclasses.InitVar"))
    return type(annotation).__name__ == "InitVar"


class _StandardFields:
    """`__dataclass_fields__`, made from the record's fields when first read (importing `dataclasses` then)."""

    def __get__(self, instance: object, owner: type) -> dict[str, Any]:
        made = {item.name: item.standard() for item in owner.__dict__["__record_fields__"]}
        type.__setattr__(owner, "__dataclass_fields__", made)
        return made


def _from_standard(declared: Any) -> RecordField:
    """A `dataclasses.field(...)` declaration as a record field (`dataclasses` is imported when one exists)."""
    import dataclasses

    def given(value: Any) -> Any:
        return MISSING if value is dataclasses.MISSING else value

    return RecordField(given(declared.default), given(declared.default_factory), declared.init, declared.repr,
                       declared.compare, declared.hash)


def _own_fields(cls: type) -> Optional[list[RecordField]]:
    """The fields the class declares itself, or None when the declaration needs the standard decorator."""
    # The class's own dictionary, not `inspect.get_annotations`: importing `inspect` is what this module avoids.
    annotations = cls.__dict__.get("__annotations__")  # noqa: RUF063
    if annotations is None:
        annotations = getattr(cls, "__annotations__", {}) if "__annotate__" in cls.__dict__ else {}
    declared: list[RecordField] = []
    for name, annotation in annotations.items():
        if _is_class_var(annotation):
            continue
        if _is_init_var(annotation):
            return None
        value = cls.__dict__.get(name, MISSING)
        if isinstance(value, RecordField) or type(value).__name__ == "Field":  # `field(...)`, ours or dataclasses'
            item = value if isinstance(value, RecordField) else _from_standard(value)
            if item.default is MISSING:
                delattr(cls, name)
            else:
                setattr(cls, name, item.default)
        else:
            item = RecordField(default=value)
        if isinstance(item.default, _MUTABLE_DEFAULTS):
            raise ValueError(f"mutable default {type(item.default)} for field {name} is not allowed: "
                             "use default_factory")
        item.name, item.type = name, annotation
        declared.append(item)
    return declared


def _values(instance: object, names: tuple[str, ...]) -> tuple[Any, ...]:
    return tuple([getattr(instance, name) for name in names])


def _make_init(cls: type, fields: tuple[RecordField, ...]) -> Callable[..., None]:
    qualname = cls.__qualname__
    names = tuple(item.name for item in fields if item.init)
    name_set = frozenset(names)
    count = len(names)
    required = tuple(item.name for item in fields
                     if item.init and item.default is MISSING and item.default_factory is MISSING)
    defaults = {item.name: item.default for item in fields if item.default is not MISSING}
    factories = {item.name: item.default_factory for item in fields if item.default_factory is not MISSING}
    # a field outside __init__ without a default or factory is set by __post_init__, if at all
    every = tuple(item.name for item in fields if item.init or item.name in defaults or item.name in factories)
    post_init = "__post_init__" in {name for klass in cls.__mro__ for name in vars(klass)}

    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        if args:
            if len(args) > count:
                least = len(required) + 1
                takes = f"{count + 1}" if least == count + 1 else f"from {least} to {count + 1}"
                raise TypeError(f"{qualname}.__init__() takes {takes} positional arguments but "
                                f"{len(args) + 1} were given")
            for name, value in zip(names, args):
                if name in kwargs:
                    raise TypeError(f"{qualname}.__init__() got multiple values for argument '{name}'")
                kwargs[name] = value
        if len(kwargs) != count or not name_set.issuperset(kwargs):
            for name in kwargs:
                if name not in name_set:
                    raise TypeError(f"{qualname}.__init__() got an unexpected keyword argument '{name}'")
            missing = [name for name in required if name not in kwargs]
            if missing:
                listed = " and ".join(", ".join(repr(name) for name in missing).rsplit(", ", 1))
                raise TypeError(f"{qualname}.__init__() missing {len(missing)} required positional "
                                f"argument{'s' if len(missing) > 1 else ''}: {listed}")
        state = self.__dict__
        for name in every:
            if name in kwargs:
                state[name] = kwargs[name]
            elif name in defaults:
                state[name] = defaults[name]
            else:
                state[name] = factories[name]()
        if post_init:
            self.__post_init__()

    __init__.__qualname__ = f"{qualname}.__init__"
    return __init__


def _add_methods(cls: _Class, fields: tuple[RecordField, ...], frozen: bool) -> _Class:
    shown = tuple(item.name for item in fields if item.repr)
    compared = tuple(item.name for item in fields if item.compare)
    hashed = tuple(item.name for item in fields if (item.compare if item.hash is None else item.hash))
    field_names = frozenset(item.name for item in fields)
    owner: type = cls

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

    def _refuse(self: object, name: str) -> None:
        import dataclasses

        raise dataclasses.FrozenInstanceError(f"cannot assign to field {name!r}")

    def __setattr__(self: object, name: str, value: Any) -> None:
        if type(self) is cls or name in field_names:
            _refuse(self, name)
        super(owner, self).__setattr__(name, value)  # type: ignore[arg-type]

    def __delattr__(self: object, name: str) -> None:
        if type(self) is cls or name in field_names:
            _refuse(self, name)
        super(owner, self).__delattr__(name)  # type: ignore[arg-type]

    methods: dict[str, Optional[Callable[..., Any]]] = {
        "__init__": _make_init(cls, fields), "__repr__": __repr__, "__eq__": __eq__}
    if "__hash__" not in cls.__dict__ or cls.__dict__["__hash__"] is None:
        methods["__hash__"] = __hash__ if frozen else None
    if frozen:
        methods["__setattr__"], methods["__delattr__"] = __setattr__, __delattr__
    for name, method in methods.items():
        if name in cls.__dict__ and cls.__dict__[name] is not None:
            continue
        if method is not None:
            method.__qualname__ = f"{cls.__qualname__}.{name}"
        setattr(cls, name, method)
    return cls


def _record(cls: _Class, frozen: bool) -> _Class:
    standard_base = any("__dataclass_fields__" in vars(base) and "__record_fields__" not in vars(base)
                        for base in cls.__mro__[1:])
    unusual = standard_base or "__slots__" in cls.__dict__ or "__setattr__" in cls.__dict__
    own = None if unusual else _own_fields(cls)
    if own is None:
        import dataclasses

        return dataclasses.dataclass(cls, frozen=frozen)  # type: ignore[return-value]
    inherited: dict[str, RecordField] = {}
    for base in reversed(cls.__mro__[1:]):
        for item in base.__dict__.get("__record_fields__", ()):
            inherited[item.name] = item
    for item in own:
        inherited[item.name] = item
    fields = tuple(inherited.values())
    seen_default = False
    for item in fields:
        if not item.init:
            continue
        if item.default is not MISSING or item.default_factory is not MISSING:
            seen_default = True
        elif seen_default:
            raise TypeError(f"non-default argument {item.name!r} follows default argument")
    made = {"__record_fields__": fields, "__dataclass_fields__": _StandardFields(),
            "__match_args__": tuple(item.name for item in fields if item.init)}
    for name, value in made.items():
        setattr(cls, name, value)
    return _add_methods(cls, fields, frozen)


def record_field_names(cls: type) -> tuple[str, ...]:
    """The field names of a record class, in declaration order (without building the standard fields)."""
    return tuple(item.name for item in cls.__dict__["__record_fields__"])


def is_record(value: object) -> bool:
    """Whether `value` is an instance of a class made by this module's `dataclass`."""
    return "__record_fields__" in type(value).__dict__


if TYPE_CHECKING:
    from dataclasses import dataclass as dataclass
    from dataclasses import field as field
else:
    def dataclass(cls: Optional[type] = None, /, *, frozen: bool = False) -> Union[type, Callable[[type], type]]:
        """`@dataclass` or `@dataclass(frozen=True)`: the standard decorator's class, made without `exec`
        (module docstring)."""
        def wrap(target: type) -> type:
            return _record(target, frozen)

        return wrap if cls is None else wrap(cls)

    def field(*, default: Any = MISSING, default_factory: Any = MISSING, init: bool = True, repr: bool = True,
              compare: bool = True, hash: Optional[bool] = None) -> Any:
        """`dataclasses.field` for records: a default, a factory, and whether the field is in `__init__`,
        the repr, equality and the hash."""
        return RecordField(default, default_factory, init, repr, compare, hash)
