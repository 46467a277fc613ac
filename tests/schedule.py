"""The order the suite's scopes reach xdist's workers: the costly ones first.

With ``--dist loadscope`` a class, or else a module, runs whole on one worker (its fixtures are
built once). xdist hands the scopes out in the order it gets them; left to itself it puts the
scopes with most tests first, so a scope of a few slow tests (a documented benchmark, every
door on half the states) came last and ran alone while the other workers had nothing left.
A scope marked ``costly`` is handed out first; the rest follow, most tests first, as xdist
would order them (``--no-loadscope-reorder`` leaves the order to this module).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

COSTLY = "costly"
"""The marker of a module or class whose tests together take far longer than most scopes."""

T = TypeVar("T")


def scope_of(nodeid: str) -> str:
    """xdist's unit of ``loadscope``: what a node id names before its last ``::`` (a test's
    class, else its module; a notebook for an nbval cell)."""
    return nodeid.rsplit("::", 1)[0]


def costly_first(
    items: Sequence[T], nodeid: Callable[[T], str], costly: Callable[[T], bool]
) -> list[T]:
    """``items`` scope by scope: the costly scopes first in the order they came, then the
    others, most items first (ties in the order they came). Items keep their order within a
    scope, so a notebook's cells still run top to bottom."""
    scopes: dict[str, list[T]] = {}
    for item in items:
        scopes.setdefault(scope_of(nodeid(item)), []).append(item)

    def rank(members: list[T]) -> tuple[bool, int]:
        marked = any(costly(item) for item in members)
        return (not marked, 0 if marked else -len(members))

    return [item for members in sorted(scopes.values(), key=rank) for item in members]
