"""A failed ``==`` shaped for a terminal: both sides whole, never cut, as a line-by-line diff."""

from __future__ import annotations

import difflib
import pprint

from ..locale import N_, gettext
from .columns import columns, pad

WIDTH = 84  # of the pretty-printed sides (the report indents them)
SHORT = 70
INDENT = "  "  # the lines under a named comparison, as pytest indents its own
HEAD = N_("the values differ")  # follows ``assert`` in pytest's message


def head() -> str:
    return gettext(HEAD)


def _pretty(value: object) -> list[str]:
    return pprint.pformat(value, width=WIDTH).splitlines()


def explain_equality(left: object, right: object) -> list[str]:
    """Lines explaining why ``left == right`` failed; ``left`` is the value the code produced."""
    got, expected = repr(left), repr(right)
    if len(got) <= SHORT and len(expected) <= SHORT and "\n" not in got + expected:
        said, wanted = gettext("got:"), gettext("expected:")
        width = max(columns(said), columns(wanted))
        # a full-width colon (U+FF1A) carries its own space: no space follows it
        full_width = said.endswith("\uff1a") and wanted.endswith("\uff1a")
        gap = "" if columns(said) == columns(wanted) and full_width else " "
        return [  # one order at every door and in every edition: expected, then got
            gettext("{head}:").format(head=head()),
            pad(wanted, width) + gap + expected,
            pad(said, width) + gap + got,
        ]
    lines = [gettext("{head} (- expected, + got; unmarked lines are in both):").format(head=head())]
    diff = difflib.ndiff(_pretty(right), _pretty(left))
    return lines + [line for line in diff if not line.startswith("? ")]  # "? " hints: noise here


def explain_case(case: str, got: object, expected: object) -> str:
    """A failed comparison named by its case (and field): ``case: the values differ…``."""
    first, *rest = explain_equality(got, expected)
    named = gettext("{case}: {detail}").format(case=case, detail=first)
    return "\n".join([named, *(f"{INDENT}{line}" for line in rest)])
