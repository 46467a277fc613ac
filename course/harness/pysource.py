"""Parsing Python source from any thread: the one door to ``ast.parse`` in the kit.

CPython 3.11 keeps the AST converter's recursion depth per interpreter, not per thread, so two
threads parsing at once can fail with ``SystemError: AST constructor recursion depth
mismatch``. Doors grade workspaces in threads (the roster, ``check()`` called from a thread),
so every parse in the kit takes this one lock.
"""

from __future__ import annotations

import ast
import threading

_PARSING = threading.Lock()


def parse(source: str | bytes, filename: str = "<unknown>") -> ast.Module:
    """``ast.parse(source, filename)``, one thread at a time; its errors propagate."""
    with _PARSING:
        return ast.parse(source, filename=filename)
