"""Parsing Python source from any thread: the one lock around ``ast.parse`` in the process.

CPython 3.11 keeps the AST converter's recursion depth per interpreter, so two threads parsing
at once can fail (``SystemError: AST constructor recursion depth mismatch``). Doors grade in
threads, where hypothesis parses too, so on 3.11 the lock goes around ``ast.parse`` itself.
"""

from __future__ import annotations

import ast
import sys
import threading
from typing import Any

_PARSING = threading.RLock()
_unlocked_parse = ast.parse


def _locked_parse(source: Any, filename: Any = "<unknown>", mode: str = "exec", **more: Any) -> Any:
    with _PARSING:
        return _unlocked_parse(source, filename, mode, **more)


def parse(source: str | bytes, filename: str = "<unknown>") -> ast.Module:
    """``ast.parse(source, filename)``, one thread at a time; its errors propagate."""
    with _PARSING:
        return _unlocked_parse(source, filename)


if sys.version_info < (3, 12) and ast.parse is _unlocked_parse:
    ast.parse = _locked_parse  # the same call, under the lock
