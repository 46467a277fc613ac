"""A failed ``==`` shaped for a terminal: both sides as a line-by-line diff, whole unless long
(then each change with a few lines around it, so the first difference is always in sight)."""

from __future__ import annotations

import difflib
import pprint

from ..locale import N_, gettext, ngettext
from .columns import columns, pad

WIDTH = 84  # of the pretty-printed sides (the report indents them)
SHORT = 70
INDENT = "  "  # the lines under a named comparison, as pytest indents its own
CONTEXT = 3  # unchanged lines shown each side of a change, in a long diff
WHOLE = 24  # a diff of at most this many lines is shown whole
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
    return lines + around_changes([line for line in diff if not line.startswith("? ")])


def around_changes(diff: list[str]) -> list[str]:
    """``diff`` whole when it has at most ``WHOLE`` lines; else its changed lines with
    ``CONTEXT`` lines each side, a longer run of unchanged lines one line saying how many, so the
    first difference of a long value (a 2,000-line answer) is near the top, never cut off
    below a message's last shown line."""
    if len(diff) <= WHOLE:
        return diff
    changed = [index for index, line in enumerate(diff) if line[:2] in ("- ", "+ ")]
    near = {i for index in changed for i in range(index - CONTEXT, index + CONTEXT + 1)}
    shown: list[str] = []
    skipped: list[str] = []
    for index, line in enumerate([*diff, None]):
        if line is not None and index not in near:
            skipped.append(line)
            continue
        shown += skipped if len(skipped) == 1 else [_skipped(len(skipped))] if skipped else []
        skipped = []
        if line is not None:
            shown.append(line)
    return shown


def _skipped(count: int) -> str:
    said = ngettext("… {count} line the same in both", "… {count} lines the same in both", count)
    return "  " + said.format(count=count)


def explain_case(case: str, got: object, expected: object) -> str:
    """A failed comparison named by its case (and field): ``case: the values differ…``."""
    first, *rest = explain_equality(got, expected)
    named = gettext("{case}: {detail}").format(case=case, detail=first)
    return "\n".join([named, *(f"{INDENT}{line}" for line in rest)])
