"""The reference's refusal messages, read back in the reader's edition where the kit shows them.

The reference's lab functions raise English (in a workspace those functions are the learner's
to write, and the starters carry no catalog). A notebook run on the reference shows their
refusals, so ``in_edition`` recognises each one by its English shape and says it again through
the catalog; any other message (a learner's own wording) is shown as it was raised.
"""

from __future__ import annotations

import re
from functools import cache

from . import N_
from . import gettext as _

LISTS = frozenset({"starts"})
"""Placeholders that hold a ``", "``-joined list, joined again the edition's way."""

SHAPES = (
    N_("{entry}: system message inside the history; pass the prompt as system_prompt instead"),
    N_("{entry}: {role} message before any user message; an interaction starts at a user message"),
    N_("{entry}: a tool call without a string id"),
    N_(
        "{entry}: tool call {call} is declared twice in the interaction starting at {start} "
        "(first in {first})"
    ),
    N_("{entry}: a tool result without a string toolCallId"),
    N_(
        "{entry}: second result for tool call {call} in the interaction starting at {start} "
        "(first is {first})"
    ),
    N_(
        "{entry}: result for tool call {call}, which no assistant message in the interaction "
        "starting at {start} declares"
    ),
    N_("{entry}: tool call {call} has no result before the interaction starting at {start} ends"),
    N_("{id}: cannot compact an empty path (no leaf to append after)"),
    N_("{id}: id is already used on the active path"),
    N_(
        "{id}.firstKeptEntryId: {kept} is not the first message of an interaction on the path "
        "(allowed: {starts})"
    ),
    N_("{id}.firstKeptEntryId: {kept} is not on the path before {id}"),
    N_("{id}.firstKeptEntryId: {kept} is not a user message, so it does not start an interaction"),
    N_("system_prompt: must be a string, got {kind}"),
)
"""Each message the reference's lab functions raise, as an f-string of theirs writes it."""

PLACEHOLDER = re.compile(r"\{(\w+)\}")


@cache
def _pattern(shape: str) -> re.Pattern[str]:
    parts: list[str] = []
    seen: set[str] = set()
    at = 0
    for found in PLACEHOLDER.finditer(shape):
        parts.append(re.escape(shape[at : found.start()]))
        name = found.group(1)
        parts.append(f"(?P={name})" if name in seen else f"(?P<{name}>.+?)")
        seen.add(name)
        at = found.end()
    parts.append(re.escape(shape[at:]))
    return re.compile("".join(parts), re.DOTALL)


def in_edition(message: str) -> str:
    """``message`` in the current edition when it is one of the reference's refusals, else
    itself."""
    for shape in SHAPES:
        matched = _pattern(shape).fullmatch(message)
        if matched is None:
            continue
        values = matched.groupdict()
        for name in LISTS & values.keys():
            values[name] = _(", ").join(values[name].split(", "))
        return _(shape).format(**values)
    return message
