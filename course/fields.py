"""Strict field readers for untrusted JSON objects: every error names the entry and the field."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from gc import is_tracked
from typing import Any, TypeAlias

from course.locale import N_
from course.locale import gettext as _

JsonValue: TypeAlias = Any
"""A value made of dict (str keys), list, str, int, float, bool and None."""

MAX_JSON_DEPTH = 64
"""Nesting deeper than this inside tool arguments or metadata values is refused."""


def escape_surrogates(text: str) -> str:
    """``text`` with every lone surrogate written as ``\\udXXX``, so it encodes as UTF-8."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


class PrintableError(ValueError):
    """A ``ValueError`` whose message holds no lone surrogate, so printing it never fails."""

    def __init__(self, message: str) -> None:
        super().__init__(escape_surrogates(message))


class SessionEntryError(PrintableError):
    """An object is not a valid session entry; the message names the entry and field."""


def kind_of(value: object) -> str:
    """The JSON name of a value's type, for error messages."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, Mapping):
        return "object"
    if isinstance(value, list):
        return "array"
    return type(value).__name__


KIND_NAMES = {
    "boolean": N_("boolean"),
    "number": N_("number"),
    "string": N_("string"),
    "object": N_("object"),
    "array": N_("array"),
}
"""The JSON kinds as a message names them; ``null`` and Python type names stay as they are."""


def kind_name(value: object) -> str:
    """``kind_of(value)`` as the current edition says it in a message (``数组`` for an array)."""
    kind = kind_of(value)
    return _(KIND_NAMES[kind]) if kind in KIND_NAMES else kind


def plain_number(value: object) -> int | float | None:
    """``value`` as an exact ``int`` or ``float``; None for anything else (``bool`` included).

    A subclass is read through the base type's own method, so its ``__int__``, ``__float__``
    or comparisons cannot change the number it stands for.
    """
    if type(value) is int or type(value) is float:
        return value
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return int.__int__(value)
    if isinstance(value, float):
        return float.__float__(value)
    return None


class FieldReader:
    """Readers over one entry's fields that raise ``SessionEntryError("<id><path>: …")``."""

    def __init__(self, entry_id: str | None) -> None:
        self.entry_id = entry_id

    @classmethod
    def of(cls, value: Mapping[str, Any]) -> FieldReader:
        """A reader named after ``value["id"]`` when that is a usable id."""
        raw_id = value.get("id")
        return cls(raw_id if isinstance(raw_id, str) and raw_id else None)

    def fail(self, path: str, problem: str) -> SessionEntryError:
        where = self.entry_id if self.entry_id else "entry"
        return SessionEntryError(
            _("{where}: {problem}").format(where=f"{where}{path}", problem=problem)
        )

    def mapping(
        self, value: object, path: str, required: Iterable[str], optional: Iterable[str] = ()
    ) -> Mapping[str, Any]:
        """An object with exactly the ``required`` keys (and maybe some ``optional`` ones).

        Anything but a mapping (a list, say) is an error; so is an unknown key
        (``<id><path>.note: unknown field``) and a missing one (``...: missing field``).
        """
        if not isinstance(value, Mapping):
            raise self.fail(path, _("must be an object, got {kind}").format(kind=kind_name(value)))
        required = tuple(required)
        allowed = set(required) | set(optional)
        for key in value:
            if key not in allowed:
                raise self.fail(f"{path}.{key}", _("unknown field"))
        for key in required:
            if key not in value:
                raise self.fail(f"{path}.{key}", _("missing field"))
        return value

    def string(
        self, value: object, path: str, *, non_empty: bool = False, non_blank: bool = False
    ) -> str:
        """A string; ``non_empty``: not ``""``; ``non_blank``: not only white space either."""
        if not isinstance(value, str):
            raise self.fail(path, _("must be a string, got {kind}").format(kind=kind_name(value)))
        if (non_empty or non_blank) and not value:
            raise self.fail(path, _("must be a non-empty string"))
        if non_blank and not value.strip():
            raise self.fail(path, _("must not be blank (only white space)"))
        return str.__str__(value)

    def number(self, value: object, path: str) -> int | float:
        """A non-negative finite number, as a plain one: an ``int`` stays an ``int``.

        ``True`` (a ``bool`` is not a number here), ``"29"``, ``-1``, ``NaN`` and
        ``Infinity`` are errors.
        """
        number = plain_number(value)
        if number is None:
            raise self.fail(
                path,
                _("must be a non-negative finite number, got {kind}").format(kind=kind_name(value)),
            )
        try:
            as_float = float(number)
        except OverflowError:
            raise self.fail(
                path, _("must be a non-negative finite number, got a huge integer")
            ) from None
        if not math.isfinite(as_float) or as_float < 0:
            raise self.fail(
                path,
                _("must be a non-negative finite number, got {number}").format(number=repr(number)),
            )
        return number if type(number) is int else as_float

    def string_list(self, value: object, path: str) -> list[str]:
        """A list of strings, copied: a new list.

        Anything but a list is an error, a string too (``"one item"`` is never read as
        ``["one item"]``); so is an item that is not a string (``<path>[1]``).
        """
        if not isinstance(value, list):
            raise self.fail(
                path, _("must be a list of strings, got {kind}").format(kind=kind_name(value))
            )
        return [self.string(v, f"{path}[{i}]") for i, v in enumerate(value)]

    def parent_id(self, value: object, *, nullable: bool) -> str | None:
        """A ``parentId``: a non-empty id, or null where the entry may be a root."""
        if value is None and nullable:
            return None
        return self.string(value, ".parentId", non_empty=True)

    def json(self, value: object, path: str, depth: int = 0) -> JsonValue:
        """Validate plain JSON data and return an unshared copy."""
        if depth > MAX_JSON_DEPTH:
            raise self.fail(
                path, _("nested deeper than {depth} levels").format(depth=MAX_JSON_DEPTH)
            )
        if value is None or isinstance(value, (str, bool)):
            return value
        number = plain_number(value)
        if type(number) is int:
            return number
        if type(number) is float:
            if not math.isfinite(number):
                raise self.fail(
                    path, _("must be a finite number, got {number}").format(number=repr(number))
                )
            return number
        if isinstance(value, list):
            return [self.json(item, f"{path}[{i}]", depth + 1) for i, item in enumerate(value)]
        if isinstance(value, Mapping):
            copied: dict[str, JsonValue] = {}
            for key, item in value.items():
                if not isinstance(key, str):
                    raise self.fail(
                        path,
                        _("object keys must be strings, got {kind}").format(kind=kind_name(key)),
                    )
                copied[key] = self.json(item, f"{path}.{key}", depth + 1)
            return copied
        raise self.fail(path, _("must be JSON data, got {kind}").format(kind=kind_name(value)))


def copy_json(value: JsonValue) -> JsonValue:
    """A deep copy of already-valid JSON data."""
    # Scalars are returned as they are, so only containers are worth a recursive call.
    if type(value) is dict:
        copied = value.copy()
        # CPython's collector leaves a dict untracked while it holds only scalars (see
        # ``gc.is_tracked``); then this shallow copy is already a deep one.
        if is_tracked(value):
            for key, item in copied.items():
                if isinstance(item, (dict, list)):
                    copied[key] = copy_json(item)
        return copied
    if isinstance(value, dict):
        return {k: copy_json(v) if isinstance(v, (dict, list)) else v for k, v in value.items()}
    if isinstance(value, list):
        return [copy_json(v) if isinstance(v, (dict, list)) else v for v in value]
    return value
