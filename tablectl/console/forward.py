"""An attribute forwarded to a part of the object: how :class:`tablectl.table.Table`
keeps its public attributes (``table.state``, ``table.consoles`` ...) while they live on
the core and the flows that own them.
"""

from __future__ import annotations

from typing import Generic, TypeVar, overload

T = TypeVar("T")


class Forward(Generic[T]):
    """A public attribute of a class that lives on one of its parts (``part``, an
    attribute of the instance, under ``name``, by default the attribute's own): read and
    set through the instance."""

    def __init__(self, part: str, name: str | None = None) -> None:
        self.part = part
        self.name = name or ""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = self.name or name

    @overload
    def __get__(self, obj: None, owner: type) -> Forward[T]: ...
    @overload
    def __get__(self, obj: object, owner: type) -> T: ...
    def __get__(self, obj: object | None, owner: type) -> Forward[T] | T:
        if obj is None:
            return self
        value: T = getattr(getattr(obj, self.part), self.name)
        return value

    def __set__(self, obj: object, value: T) -> None:
        setattr(getattr(obj, self.part), self.name, value)
