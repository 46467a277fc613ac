"""A probe case as a learner sees it: its answer's canonical form, where it parts, how to replay it.

One definition for every door (grader, probe driver, a workspace's probe cases, ``--replay``)."""

from __future__ import annotations

import contextlib
import dataclasses
import json
import math
import os
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ..locale import gettext as _
from ..locale import ngettext, unquoted
from ..locale.refusals import in_edition
from .commands import BY_NAME, Commands
from .status import Status
from .untrusted import clip, safe_text
from .verdicts import is_pending

MAX_DEPTH = 40
MAX_NODES = 200_000
MESSAGE_LIMIT = 300
SHOWN_VALUE = 80  # longest value shown on either side of a difference (cut around it)
LINE_LIMIT = 320  # longest line of a described case
REPLAY_OPTION = "--replay"
ONCE = "once"
"""A case marked ``{"once": true}`` (a costly one) is asked in draw order only; every other case
is asked a second time, in reverse order after the first pass (``AGAIN``), so an answer that
depends on the cases asked before it shows."""
AGAIN = "again"
"""An answer's second answer, given in the reverse pass, when it differs from the first."""

Case = Mapping[str, Any]
"""One drawn case: ``id``, ``lab``, ``function``, ``args``, ``label`` and ``label_args``."""
Answer = dict[str, Any]
"""``{"value": data}`` or ``{"raised": category, "message": text}``; the grader adds
``{"missing": status, "message": text}`` for a case that got no answer."""


class TooLarge(Exception):
    """An answer is nested too deep or holds too many values to compare (never a refusal)."""


def to_data(value: object) -> Any:
    """``value`` as the plain JSON data answers are compared as (``7.0`` equals ``7``)."""
    budget = [MAX_NODES]

    def convert(item: object, depth: int) -> Any:
        budget[0] -= 1
        if budget[0] < 0 or depth > MAX_DEPTH:
            raise TooLarge(f"an answer larger than {MAX_NODES} values or {MAX_DEPTH} levels")
        if item is None or isinstance(item, bool):
            return item
        if isinstance(item, int):
            return int(item)
        if isinstance(item, float):
            if math.isnan(item):
                return "NaN"
            if math.isinf(item):
                return "Infinity" if item > 0 else "-Infinity"
            return int(item) if item.is_integer() and abs(item) < 2**53 else float(item)
        if isinstance(item, str):
            return str.__str__(item)
        if isinstance(item, Mapping):
            return {str(key): convert(inner, depth + 1) for key, inner in item.items()}
        if isinstance(item, list | tuple):
            return [convert(inner, depth + 1) for inner in item]
        if dataclasses.is_dataclass(item) and not isinstance(item, type):
            fields = dataclasses.fields(item)
            return {f.name: convert(getattr(item, f.name), depth + 1) for f in fields}
        return {"object": type(item).__name__}

    return convert(value, 0)


def first_line(text: str, limit: int = MESSAGE_LIMIT) -> str:
    return clip(next((line.strip() for line in text.splitlines() if line.strip()), ""), limit)


def raised(error: BaseException) -> Answer:
    """An exception as an answer: ``pending`` for a lab stub, ``ValueError`` for any refusal
    (the chapter's errors all derive from it), else the exception's type name."""
    if is_pending(error):
        category: str = Status.PENDING
    elif isinstance(error, ValueError):
        category = "ValueError"
    else:
        category = type(error).__name__
    return {"raised": category, "message": first_line(f"{type(error).__name__}: {error}")}


Evaluate = Callable[[str, Case], Any]


def answer(evaluate: Evaluate, package: str, case: Case) -> Answer:
    """One case's answer; whatever the code under test raises becomes part of the answer."""
    try:
        return {"value": to_data(evaluate(package, case))}
    except BaseException as error:  # learner code may raise anything
        return raised(error)


def agreement(expected: Answer, actual: Answer) -> Status:
    """``passed`` when the answers agree; otherwise how the learner's answer went wrong."""
    if "missing" in actual:
        return Status.TIMEOUT if actual["missing"] == Status.TIMEOUT else Status.ERROR
    if actual.get("raised") == Status.PENDING:
        return Status.PENDING
    first = Status.FAILED
    for key in ("value", "raised"):
        if key in expected and key in actual:
            first = Status.PASSED if expected[key] == actual[key] else Status.FAILED
            break
    if first == Status.PASSED and isinstance(actual.get(AGAIN), dict):
        return agreement(expected, actual[AGAIN])
    return first


def _cut(text: str, at: int, limit: int = SHOWN_VALUE) -> str:
    """``text`` at most ``limit`` characters long, keeping a window around index ``at``."""
    if len(text) <= limit:
        return text
    start = max(0, min(at - limit // 3, len(text) - limit))
    end = start + limit
    return ("…" if start else "") + text[start:end] + ("…" if end < len(text) else "")


def shown_pair(expected: Any, actual: Any) -> tuple[str, str]:
    """Both values as JSON, each cut around the first character where they part."""
    mine, theirs = json.dumps(expected, ensure_ascii=False), json.dumps(actual, ensure_ascii=False)
    at = len(os.path.commonprefix([mine, theirs]))  # noqa: RUF071 - by character, as meant
    return _cut(mine, at), _cut(theirs, at)


def field_name(key: str) -> str:
    """An answer's key as the edition names it: a phrase (``shares a list with its input``, a
    fact of the answer) is a message of the chapter's catalog; a name from the code
    (``kept_entry_ids``, a result's attribute) stays as it is."""
    return _(key) if " " in key else key


def first_difference(expected: Any, actual: Any, where: str = "") -> str:
    """Where two JSON values first differ: ``kept_entry_ids[1]: expected "u3", got "a2"``; a
    fact of the answer by its phrase (``shares a list with its input: expected no, got yes``)."""
    here = where or _("the result")
    if isinstance(expected, dict) and isinstance(actual, dict):
        for key in sorted(set(expected) | set(actual)):
            field = f"{where}.{key}" if where else field_name(key)
            if key not in actual:
                return _("{field}: missing").format(field=field)
            if key not in expected:
                return _("{field}: not expected").format(field=field)
            mine, theirs = expected[key], actual[key]
            fact = " " in key and isinstance(mine, bool) and isinstance(theirs, bool)
            if mine != theirs and fact:
                yes_no = _("{field}: expected yes, got no"), _("{field}: expected no, got yes")
                return yes_no[0 if mine else 1].format(field=field)  # a fact of the answer
            if mine != theirs:
                return first_difference(mine, theirs, field)
    if isinstance(expected, list) and isinstance(actual, list):
        for index, (mine, theirs) in enumerate(zip(expected, actual, strict=False)):
            if mine != theirs:
                return first_difference(mine, theirs, f"{where}[{index}]")
        if len(expected) != len(actual) and not actual:
            said = ngettext(
                "{field}: expected {expected} item, got none",
                "{field}: expected {expected} items, got none",
                len(expected),
            )
            return said.format(field=here, expected=len(expected))
        if len(expected) != len(actual):
            got = shown_pair(expected, actual)[1]
            said = ngettext(
                "{field}: expected {expected} item, got {count}: {got}",
                "{field}: expected {expected} items, got {count}: {got}",
                len(expected),
            )
            return said.format(field=here, expected=len(expected), count=len(actual), got=got)
    wanted, got = shown_pair(expected, actual)
    return _("{field}: expected {expected}, got {got}").format(field=here, expected=wanted, got=got)


def difference(expected: Answer, actual: Answer) -> str:
    """Where the learner's answer parts from the reference's, in a line."""
    again = actual.get(AGAIN)
    if isinstance(again, dict) and agreement(expected, {**actual, AGAIN: None}) == Status.PASSED:
        said = _(
            "agrees when asked in turn; asked again after the cases drawn after it, "
            "{difference} — look for state kept between calls"
        )
        return said.format(difference=difference(expected, again))
    if "missing" in actual or actual.get("raised") == Status.PENDING:
        return str(actual.get("message", ""))
    if "value" in expected and "value" in actual:
        return first_difference(expected["value"], actual["value"])
    if "value" in expected:
        got = raised_text(actual.get("message") or actual.get("raised"))
        return _("expected a result, got {got}").format(got=got)
    if "value" in actual:
        return _("expected {error}, got a result").format(error=expected["raised"])
    got = raised_text(actual.get("message") or actual["raised"])
    return _("expected {error}, got {got}").format(error=expected["raised"], got=got)


RAISED = re.compile(r"(?s)([A-Za-z_][\w.]*): (.+)")
"""An answer's message as ``raised`` stores it: ``KeyError: 'a3'``."""


def raised_text(message: object) -> str:
    """A stored exception as the edition writes it (a full-width colon in zh; a refusal the
    reference raises in the edition's words, ``refusals.in_edition``); data as it is."""
    text = str(message)
    found = RAISED.fullmatch(text)
    if found is None:
        return text
    return _("{kind}: {error}").format(kind=found[1], error=in_edition(found[2]))


def case_label(case: Case) -> str:
    """``build_context: 3 interactions``: the function and the case, in the current edition."""
    label = str(case.get("label", case["id"]))
    values = case.get("label_args") or {}
    with contextlib.suppress(KeyError, IndexError, ValueError):
        label = _(label).format(**values)
    function = str(case.get("function", "")).partition(".")[2]
    return _("{function}: {case}").format(function=function, case=label) if function else label


def case_size(case: Case) -> int:
    """How large a case's input is as written (a ``$fixture`` counts as its name's length)."""
    return len(json.dumps(case.get("args", {}), ensure_ascii=False, sort_keys=True))


def replay_command(
    chapter: str, case_id: str, seed: int | None = None, commands: Commands = BY_NAME
) -> str:
    """``checkpoint 11 --replay 11.3#007`` (``--seed N`` for another seed), in ``commands``."""
    command = f"{commands.checkpoint} {chapter} {REPLAY_OPTION} {case_id}"
    return command if seed is None else f"{command} --seed {seed}"


def describe(
    case: Case, expected: Answer, actual: Answer, inputs: Sequence[str] = (), replay: str = ""
) -> str:
    """One disagreement in a few lines: the case, its input, where it parts, how to replay it."""
    said = _("{label} ({case}): {difference}")
    parted = difference(expected, actual)
    label = unquoted(case_label(case))  # plain text: a terminal, a feedback file, a traceback
    lines = [said.format(label=label, case=case["id"], difference=parted)]
    lines += [f"  {shown_input(line)}" for line in inputs]
    if replay:
        lines.append("  " + _("replay: {command}").format(command=replay))
    # the learner's answer is data as sent: escaped here, where it becomes text
    return "\n".join(safe_text(line, LINE_LIMIT, keep="") for line in lines)


NAMED_LINE = re.compile(r"([A-Za-z_][\w\[\]]*): (.*)")
"""An input line naming the argument it shows: ``path: u1 user 3 · a1 assistant 4``."""


def shown_input(line: str) -> str:
    """An input line as the edition shows it: a catalog message (a path picture's costs) in
    the edition's words, without Markdown backticks; an argument's name before its value with
    the edition's colon (a full-width one in zh); a line of data as it is."""
    shown = _(line)
    if shown != line:
        return unquoted(shown)
    named = NAMED_LINE.fullmatch(line)
    return _("{name}: {value}").format(name=named[1], value=named[2]) if named else line
