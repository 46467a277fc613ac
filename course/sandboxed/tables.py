"""Strict readers over one table of TOML or JSON: every error names the source, table and key."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from .status import GRADED, Status
from .untrusted import safe_name

MISSING: Any = object()


class TableReader:
    """Typed readers over one table that raise ``error_type("<source>: <where>.<key>: …")``."""

    def __init__(
        self, table: object, where: str, source: str, error_type: type[ValueError] = ValueError
    ) -> None:
        self.source, self.where, self.error_type = source, where, error_type
        if not isinstance(table, Mapping):
            raise self.error("", f"must be a table, got {type(table).__name__}")
        self.table: Mapping[str, Any] = table
        self.used: set[str] = set()

    def error(self, key: str, problem: str) -> ValueError:
        name = safe_name(".".join(part for part in (self.where, key) if part))  # a file's keys
        return self.error_type(f"{self.source}: {name or 'top level'}: {problem}")

    def raw(self, key: str, default: object = MISSING) -> Any:
        self.used.add(key)
        if key not in self.table:
            if default is MISSING:
                raise self.error(key, "missing field")
            return default
        return self.table[key]

    def text(self, key: str, default: str | None = None, *, allow_empty: bool = False) -> str:
        value = self.raw(key, MISSING if default is None else default)
        if not isinstance(value, str) or not (allow_empty or value.strip()):
            raise self.error(key, f"must be a non-empty string, got {value!r}")
        return value

    def optional_text(self, key: str) -> str | None:
        value = self.raw(key, None)
        return None if value is None else self.text(key)

    def texts(self, key: str, *, allow_empty: bool = False) -> tuple[str, ...]:
        value = self.raw(key, [] if allow_empty else MISSING)
        if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
            raise self.error(key, f"must be a list of non-empty strings, got {value!r}")
        if not value and not allow_empty:
            raise self.error(key, "must not be empty")
        return tuple(value)

    def count(self, key: str, *, minimum: int = 0) -> int:
        value = self.raw(key)
        if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
            raise self.error(key, f"must be a whole number of at least {minimum}, got {value!r}")
        return value

    def number(self, key: str) -> float:
        value = self.raw(key)
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise self.error(key, f"must be a number, got {value!r}")
        if not math.isfinite(value) or value < 0:
            raise self.error(key, f"must be a non-negative finite number, got {value!r}")
        return float(value)

    def flag(self, key: str, default: bool = False) -> bool:
        value = self.raw(key, default)
        if not isinstance(value, bool):
            raise self.error(key, f"must be true or false, got {value!r}")
        return value

    def status(self, key: str) -> Status:
        value = self.raw(key)
        if not isinstance(value, str) or value not in GRADED:
            words = ", ".join(status for status in Status if status in GRADED)
            raise self.error(key, f"must be one of {words}, got {value!r}")
        return Status(value)

    def tables(self, key: str, *, allow_empty: bool = False) -> list[object]:
        value = self.raw(key, [] if allow_empty else MISSING)
        if not isinstance(value, list) or not (value or allow_empty):
            raise self.error(key, "must be a non-empty array of tables")
        return value

    def finish(self) -> None:
        """Refuse keys nobody read: a typo should not silently drop a field."""
        for key in self.table:
            if key not in self.used:
                raise self.error(str(key), "unknown field")
