"""Parsing Python source from any thread: the one lock around ``ast.parse`` in the process.

CPython 3.11 keeps the AST converter's recursion depth per interpreter, not per thread, so two
threads parsing at once can fail with ``SystemError: AST constructor recursion depth
mismatch``. Doors grade workspaces in threads (the roster, ``check()`` called from a thread),
and what runs there parses source in more places than the kit's own: hypothesis, drawing the
probe cases, parses to describe its strategies. So on 3.11 this module puts the lock around
``ast.parse`` itself, for every caller in the process (CPython 3.12 converts per thread).
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
    tree: ast.Module = _locked_parse(source, filename)
    return tree


if sys.version_info < (3, 12) and ast.parse is _unlocked_parse:
    ast.parse = _locked_parse  # the same call, under the lock
