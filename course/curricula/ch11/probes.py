"""Chapter 11's differential probes: seeded inputs for every lab and how to call its functions.

The grader draws the cases (``cases``: ``course.curricula.ch11.strategies`` by seed, and a seeded
generator) and ``evaluate``s each with the reference outside any sandbox and with the learner's
package inside one; the JSON answers must be equal. ``evaluate`` imports only the standard
library and reads answers through the public types' attributes, so it serves both sides."""

from __future__ import annotations

import copy
import importlib
import json
import marshal
import operator
import random
import re
import tempfile
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

from course.locale import N_
from course.locale import gettext as _
from course.locale.refusals import in_edition
from course.sandboxed.probecases import ONCE

Case = dict[str, Any]
Json = Any
Entries = list[dict[str, Any]]
Estimate = Callable[[dict[str, Any]], float]

SUMMARY_KEYS = ("constraints", "completed", "decisions", "changedFiles", "unresolved", "next")
SUMMARY_ATTRIBUTES = tuple(key.replace("changedFiles", "changed_files") for key in SUMMARY_KEYS)
TOKEN_FIELDS: tuple[str, ...] = ("max_tokens", "system", "messages", "reserved_output")
TOKEN_FIELDS += ("safety_margin", "available_for_messages", "total")
COMPACTION_FIELDS: tuple[str, ...] = ("type", "id", "parent_id", "timestamp", "summary")
COMPACTION_FIELDS += ("first_kept_entry_id", "tokens_before")
SHARES_LISTS = N_("shares a list with its input")
SHARES_MESSAGES = N_("shares a message with the path")
PATH_AFTER = N_("the caller's path afterwards")
PATH_KEPT = N_("the caller's path left as it was")
INPUT_KEPT = N_("the input left as it was")
INPUT_CHANGED = N_("changes the messages it is given")
GROUPS_KEPT = N_("the caller's groups left as they were")
RETURNS_THE_PATH = N_("returns the caller's own list")
THE_PATHS_OWN = N_("holds the path's own entries")
ENTRIES_KEPT = N_("the entries given left as they were")
SUMMARY_KEPT = N_("the summary left as it was")
A_NEW_MESSAGE = N_("a new message on each call")
KINDS = N_("the numbers' types")
ASKED_TWICE = N_("entries estimated more than once")
ASKED_ELSEWHERE = N_("messages estimated that the call was not given")
"""An answer's facts that are no attribute of a result, as its key names them (a phrase the
edition translates where a difference shows it: ``probecases.first_difference``); a result's
own attributes keep their names (``kept_entry_ids``)."""
FIXTURE = "$fixture"
"""``{"$fixture": name}`` in a case stands for the chapter's data: ``fixtures.<name>``."""
SPLICE = "$splice"
"""``{"$splice": name}`` inside a list stands for the items of the list ``fixtures.<name>``."""

PARSE_SUMMARY, PARSE_ENTRY = "summary.parse_summary", "summary.parse_compaction_entry"
SPLIT, PAIRS = "groups.split_interactions", "groups.check_tool_pairs"
GROUP, SELECT = "groups.group_interactions", "context.select_groups"
BUILD, REPORT = "context.build_context", "context.budget_report"
CREATE, MESSAGE = "compaction.create_compaction_entry", "compaction.summary_message"
LATEST, RESUME = "compaction.latest_compaction", "compaction.resume_suffix"
OPEN = "context.open_context"
"""The chapter functions a case can call, as ``module.function``."""


class Implementation:
    """The modules of one package (the reference or the learner's), imported on first use."""

    def __init__(self, package: str) -> None:
        self.package = package

    def __getattr__(self, module: str) -> ModuleType:
        found = importlib.import_module(f"{self.package}.{module}")
        setattr(self, module, found)  # asked again, it is an attribute
        return found

    def data(self, name: str) -> Json:
        """A fresh copy of the chapter's data ``fixtures.<name>`` (called if a function)."""
        found = getattr(self.fixtures, name)
        return copy.deepcopy(found() if callable(found) else found)

    def fixture(self, value: Json) -> Json:
        """``value`` with the chapter's data in place of every ``$fixture`` and ``$splice``."""
        try:  # most cases name no fixture: then a copy made in C is the answer
            data: bytes | None = marshal.dumps(value, 2)  # version 2 shares no object twice
        except ValueError:  # not plain data
            data = None
        if data is not None and FIXTURE.encode() not in data and SPLICE.encode() not in data:
            return marshal.loads(data)
        return self._substituted(value)

    def _substituted(self, value: Json) -> Json:
        if isinstance(value, dict):
            if len(value) == 1 and FIXTURE in value:
                return self.data(value[FIXTURE])
            return {key: self._substituted(item) for key, item in value.items()}
        if isinstance(value, list):
            items: list[Json] = []
            for item in value:
                if isinstance(item, dict) and len(item) == 1 and SPLICE in item:
                    items += self.data(item[SPLICE])
                else:
                    items.append(self._substituted(item))
            return items
        return value


def evaluate(package: str, case: Mapping[str, Any]) -> Json:
    """The JSON answer of ``package`` to one case; exceptions propagate to the caller (a
    refusal that leaves out what the case's ``names`` list as ``RefusalMissesNames``)."""
    impl = Implementation(package)
    args = impl.fixture(case["args"])
    try:
        if CONTRACT in args:  # a case about one class of the contract (see CONTRACTS)
            return CONTRACTS[args[CONTRACT]](impl, str(case["function"]), args)
        return CALLS[case["function"]](impl, args)
    except ValueError as error:
        unnamed = [name for name in args.get(NAMES, ()) if not names(str(error), name)]
        if unnamed:
            said = _("{error} (a refusal that should name {names})")
            shown, refusal = _(", ").join(unnamed), in_edition(str(error))
            raise RefusalMissesNames(said.format(error=refusal, names=shown)) from None
        raise


NAMES = "names"
"""The key of a refusal case's ``args`` listing what its error promises to name: the entry,
the call or JSON key, ``available``... (each case holds one fault, so the names are sure)."""


class RefusalMissesNames(Exception):
    """A refusal whose message leaves out something its contract says it names: not a
    ``ValueError``, so the case's answer differs from the reference's refusal."""


def names(said: str, name: str) -> bool:
    """Whether an error message names ``name`` as a whole id or key (``u1`` is not named by
    ``u10``, nor ``read-1`` by ``read-1-0``)."""
    return re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", said) is not None


def length_estimate(message: Mapping[str, Any]) -> int:
    """A test estimator: one token per six characters of the message's JSON content, plus one."""
    return 1 + len(json.dumps(message.get("content"), ensure_ascii=False, sort_keys=True)) // 6


def scribbling_estimate(message: dict[str, Any]) -> int:
    """``length_estimate``, then a scribble on the message handed over (returned if reused)."""
    cost = length_estimate(message)
    message["scribbled"] = True
    return cost


def half_estimate(message: Mapping[str, Any]) -> float:
    """``length_estimate`` halved: costs that are not whole numbers (``3.5``)."""
    return length_estimate(message) / 2


HUGE = 1e308
"""An answer two of which sum past the largest float: totals that overflow."""


def estimator(impl: Implementation, name: str) -> Estimate:
    """The case's estimator by name: ``chapter`` (the chapter's own), ``scribble``, ``length``,
    ``half``, one of ``BAD_ANSWERS`` (a bad answer for every message but the prompt; ``huge``
    is a good one, too large to add up), or ``prompt-nan`` (NaN for the prompt alone)."""
    if name in BAD_ANSWERS:
        return bad_for_messages(BAD_ANSWERS[name])
    if name == "chapter":
        chapter: Estimate = impl.fixtures.chapter_estimator
        return chapter
    if name == "prompt-nan":
        return lambda message: float("nan") if message.get("role") == "system" else 1
    if name == "zero":
        return lambda message: length_estimate(message) if message.get("role") == "system" else 0
    named: dict[str, Estimate] = {"scribble": scribbling_estimate, "half": half_estimate}
    return named.get(name, length_estimate)


def asked_form(message: object) -> str:
    """A message the estimator was handed as canonical JSON, a scribble left out."""
    if isinstance(message, Mapping):
        message = {key: item for key, item in message.items() if key != "scribbled"}
    return json.dumps(message, ensure_ascii=False, sort_keys=True, default=repr)


class Asking:
    """An estimator that counts the messages it is asked about, then answers as ``estimate``.

    The chapter leaves open when and in what order messages are estimated; the bound kept is
    that each message is estimated at most once, and only messages the call was given (plus
    the prompt and the summary that open a request)."""

    def __init__(self, estimate: Estimate, entries: Sequence[Any]) -> None:
        self.estimate = estimate
        self.asked: Counter[str] = Counter()
        # each message entry's id and form, taken before the call
        self.known = [(e.id, asked_form(e.message)) for e in entries if hasattr(e, "message")]

    def __call__(self, message: dict[str, Any]) -> float:
        self.asked[asked_form(message)] += 1
        return self.estimate(message)

    def beyond_bound(self, openers: Sequence[object] = ()) -> dict[str, Json]:
        """The questions the bound forbids: the ids of entries asked about more than once, and
        how many questions were about a message neither given nor among ``openers``."""
        allowed = Counter(form for _, form in self.known)
        allowed.update(asked_form(message) for message in openers)
        over = {form for form, count in self.asked.items() if count > allowed[form]}
        return {
            ASKED_TWICE: [i for i, form in self.known if form in over],
            ASKED_ELSEWHERE: sum(n for form, n in self.asked.items() if not allowed[form]),
        }


def summary_object(impl: Implementation, value: Mapping[str, Any], as_given: bool = False) -> Any:
    """A ``CompactionSummary`` built with the public type's constructor (no parser involved):
    fresh lists, or (``as_given``) the values as they are, a string where a list belongs too."""
    fields = zip(SUMMARY_ATTRIBUTES, SUMMARY_KEYS, strict=True)
    lists = {a: value[k] if as_given else list(value[k]) for a, k in fields}
    return impl.session.CompactionSummary(goal=value["goal"], **lists)


UNCHECKED = "$unchecked"
"""``{"$unchecked": entry}`` in a path stands for a message entry built with the public type's
constructor and never parsed: an invalid one, which only a checked copy refuses."""


def path_entries(impl: Implementation, values: Sequence[Mapping[str, Any]]) -> list[Any]:
    """Entries from JSON: messages and metadata through the given parser, compactions (and
    ``UNCHECKED`` messages) built from the public types, so a path reaches only the lab code
    the case is about."""
    return [path_entry(impl, value) for value in values]


def path_entry(impl: Implementation, value: Mapping[str, Any]) -> Any:
    if UNCHECKED in value:
        raw = value[UNCHECKED]
        return impl.session.MessageEntry(
            id=raw["id"],
            parent_id=raw["parentId"],
            timestamp=raw["timestamp"],
            message=raw["message"],
        )
    if value.get("type") == "compaction":
        return impl.session.CompactionEntry(
            id=value["id"],
            parent_id=value["parentId"],
            timestamp=value["timestamp"],
            summary=summary_object(impl, value["summary"]),
            first_kept_entry_id=value["firstKeptEntryId"],
            tokens_before=value["tokensBefore"],
        )
    return impl.session.parse_session_entry(value)


def summary_data(summary: Any) -> dict[str, Json]:
    return {"goal": summary.goal} | {attr: getattr(summary, attr) for attr in SUMMARY_ATTRIBUTES}


def shares_lists(summary: Any, given: object) -> bool:
    """Whether a parsed summary holds any list object of the summary it was given (a JSON
    object or a ``CompactionSummary``)."""
    if isinstance(given, Mapping):
        theirs = [id(given.get(key)) for key in SUMMARY_KEYS]
    else:
        theirs = [id(getattr(given, attr, None)) for attr in SUMMARY_ATTRIBUTES]
    return any(id(getattr(summary, attr)) in theirs for attr in SUMMARY_ATTRIBUTES)


def compaction_data(entry: Any) -> dict[str, Json]:
    data = {name: getattr(entry, name) for name in COMPACTION_FIELDS}
    return data | {"summary": summary_data(entry.summary)}


def ids(entries: Sequence[Any]) -> list[str]:
    return [entry.id for entry in entries]


def given_ids(path: Sequence[Any]) -> list[Json]:
    """The ids of the entries in the caller's own list (objects or JSON) after a call."""
    return [item.get("id") if isinstance(item, Mapping) else item.id for item in path]


def containers(value: object) -> list[object]:
    """Every list and dict inside a message (itself included): what a copy may not share."""
    found: list[object] = []
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            found.append(item)
            stack += item.values()
        elif isinstance(item, list):
            found.append(item)
            stack += item
    return found


def shares_messages(entries: Sequence[Any], inputs: Sequence[Any]) -> bool:
    """Whether any returned entry, message or content block (any list or dict inside a
    message) is one of the input path's."""
    theirs = {id(e) for e in inputs}
    theirs |= {id(c) for e in inputs for c in containers(getattr(e, "message", None))}
    return any(
        id(entry) in theirs or any(id(c) in theirs for c in containers(entry.message))
        for entry in entries
    )


def _parse_summary(impl: Implementation, args: dict[str, Any]) -> Json:
    value = args["value"]
    if args.get("summary_object"):  # a CompactionSummary, its fields as given
        value = summary_object(impl, value, as_given=True)
    before = copy.deepcopy(value)
    where = {"entry_id": args["entry_id"]} if "entry_id" in args else {}
    summary = impl.summary.parse_summary(value, **where)
    return {
        "summary": summary_data(summary),
        SHARES_LISTS: shares_lists(summary, value),
        INPUT_KEPT: value == before,
    }


def _parse_compaction_entry(impl: Implementation, args: dict[str, Any]) -> Json:
    value = args["value"]
    entry = impl.summary.parse_compaction_entry(value)
    given = value.get("summary") if isinstance(value, Mapping) else None
    return {"entry": compaction_data(entry), SHARES_LISTS: shares_lists(entry.summary, given)}


def _split_interactions(impl: Implementation, args: dict[str, Any]) -> Json:
    raw = bool(args.get("raw"))
    path = args["path"] if raw else path_entries(impl, args["path"])
    groups = impl.groups.split_interactions(path)
    answer: dict[str, Json] = {"groups": [ids(g) for g in groups], PATH_AFTER: given_ids(path)}
    if not raw:  # "not copied": each interaction holds the path's own entries
        own = {id(entry) for entry in path}
        answer[THE_PATHS_OWN] = all(id(entry) in own for group in groups for entry in group)
    return answer


def _check_tool_pairs(impl: Implementation, args: dict[str, Any]) -> Json:
    entries = path_entries(impl, args["entries"])
    given = list(entries)
    returned = impl.groups.check_tool_pairs(entries)
    return {
        "entries": ids(returned),
        RETURNS_THE_PATH: returned is entries,
        ENTRIES_KEPT: len(entries) == len(given) and all(map(operator.is_, entries, given)),
    }


def _group_interactions(impl: Implementation, args: dict[str, Any]) -> Json:
    path = path_entries(impl, args["path"])
    groups = impl.groups.group_interactions(path)
    return {
        "groups": [list(group.entry_ids) for group in groups],
        SHARES_MESSAGES: any(shares_messages(group.entries, path) for group in groups),
        PATH_AFTER: given_ids(path),
    }


def _select_groups(impl: Implementation, args: dict[str, Any]) -> Json:
    groups = [path_entries(impl, group) for group in args["groups"]]
    entries = [entry for group in groups for entry in group]
    asking = Asking(estimator(impl, args["estimator"]), entries)
    chosen = impl.context.select_groups(groups, args["available"], asking)
    return {
        "entries": ids(chosen.entries),
        "tokens": chosen.tokens,
        "reason": chosen.reason,
        "groups": chosen.groups,
        SHARES_MESSAGES: shares_messages(chosen.entries, entries),
    } | asking.beyond_bound()


def _build_context(impl: Implementation, args: dict[str, Any]) -> Json:
    path = path_entries(impl, args["path"])
    before = [copy.deepcopy(getattr(entry, "message", None)) for entry in path]
    asking = Asking(estimator(impl, args["estimator"]), path)
    context: Any = impl.context  # the package's module, read by name
    given_seam = context.open_context
    if "opening" in args:  # what Lab 11.5 would put first, without Lab 11.5's code
        opening = args["opening"]
        context.open_context = lambda entries, estimate_tokens: context.Opening(
            copy.deepcopy(opening["messages"]),
            opening["tokens"],
            list(entries),
            opening["compaction_id"],
        )
    try:
        result = context.build_context(path, **args["budget"], estimate_tokens=asking)
    finally:
        context.open_context = given_seam
    given = [getattr(entry, "message", None) for entry in path]
    return {
        "system_prompt": result.system_prompt,
        "messages": result.messages,
        "kept_entry_ids": result.kept_entry_ids,
        "reason": result.reason,
        "compaction_id": result.compaction_id,
        "tokens": {name: getattr(result.tokens, name) for name in TOKEN_FIELDS},
        SHARES_MESSAGES: any(id(m) in {id(g) for g in given} for m in result.messages),
        INPUT_CHANGED: before != given,
    } | asking.beyond_bound(openers(args["budget"], result))


def openers(budget: Mapping[str, Any], result: Any) -> list[Json]:
    """The messages that open a request besides the path's: the prompt, and the summary."""
    prompt = {"role": "system", "content": budget["system_prompt"]}
    return [prompt] + (result.messages[:1] if result.compaction_id is not None else [])


def _create_compaction_entry(impl: Implementation, args: dict[str, Any]) -> Json:
    path = path_entries(impl, args["path"])
    summary = args["summary"]
    given = summary_object(impl, summary, as_given=True) if args["summary_object"] else summary
    entry = impl.compaction.create_compaction_entry(
        path,
        id=args["id"],
        timestamp=args["timestamp"],
        summary=given,
        first_kept_entry_id=args["first_kept"],
        tokens_before=args["tokens_before"],
    )
    return {
        "entry": compaction_data(entry),
        SHARES_LISTS: shares_lists(entry.summary, given),
        PATH_AFTER: given_ids(path),
    }


def _summary_message(impl: Implementation, args: dict[str, Any]) -> Json:
    summary = summary_object(impl, args["summary"])
    before = summary_data(copy.deepcopy(summary))
    message = impl.compaction.summary_message(summary)
    again = impl.compaction.summary_message(summary)
    return {
        "message": message,
        A_NEW_MESSAGE: again is not message
        and not set(map(id, containers(message))) & set(map(id, containers(again))),
        SUMMARY_KEPT: summary_data(summary) == before,
    }


def _latest_compaction(impl: Implementation, args: dict[str, Any]) -> Json:
    return impl.compaction.latest_compaction(path_entries(impl, args["path"]))


def _resume_suffix(impl: Implementation, args: dict[str, Any]) -> Json:
    path = path_entries(impl, args["path"])
    compaction, suffix = impl.compaction.resume_suffix(path)
    own = {id(entry) for entry in path}
    return {
        "compaction": None if compaction is None else compaction.id,
        "suffix": ids(suffix),
        THE_PATHS_OWN: all(id(entry) in own for entry in suffix),
    }


def _open_context(impl: Implementation, args: dict[str, Any]) -> Json:
    """The given seam with Lab 11.5's functions: what opens a request, and what is left."""
    path = path_entries(impl, args["path"])
    opening = impl.context.open_context(path, estimator(impl, args["estimator"]))
    return {
        "messages": opening.messages,
        "tokens": opening.tokens,
        "entries": ids(opening.entries),
        "compaction_id": opening.compaction_id,
    }


def _budget_report(impl: Implementation, args: dict[str, Any]) -> Json:
    groups = [impl.groups.InteractionGroup(path_entries(impl, g)) for g in args["groups"]]
    before = [[impl.session.entry_to_json(e) for e in g.entries] for g in groups]
    rows = impl.context.budget_report(
        groups, estimate_tokens=estimator(impl, args["estimator"]), available=args["available"]
    )
    after = [[impl.session.entry_to_json(e) for e in g.entries] for g in groups]
    return {
        "rows": [
            {"ids": row.entry_ids, "tokens": row.tokens, "status": row.status} for row in rows
        ],
        GROUPS_KEPT: after == before,
    }


CALLS: dict[str, Callable[[Implementation, dict[str, Any]], Json]] = {
    PARSE_SUMMARY: _parse_summary, PARSE_ENTRY: _parse_compaction_entry,
    SPLIT: _split_interactions, PAIRS: _check_tool_pairs, GROUP: _group_interactions,
    SELECT: _select_groups, BUILD: _build_context, REPORT: _budget_report,
    CREATE: _create_compaction_entry, MESSAGE: _summary_message,
    LATEST: _latest_compaction, RESUME: _resume_suffix, OPEN: _open_context,
}  # fmt: skip


PATH_KEYS = ("path", "entries")
ROW_WIDTH = 64
"""Width past which an interaction's entries continue on the next line."""
SHOWN_JSON = 160
"""Longest JSON value an input line shows (the rest is cut, marked with an ellipsis)."""


def _shown_json(value: Json) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= SHOWN_JSON else text[: SHOWN_JSON - 1] + "…"


def _role_words(message: Mapping[str, Any]) -> str:
    """``assistant(read-0,read-1)``, ``toolResult(read-0)``, ``toolResult(read-1 isError)``:
    a message's role with the call ids it declares or answers (and a result's error flag)."""
    role = str(message.get("role"))
    calls = [str(block.get("id")) for block in call_blocks(message)]
    if calls:
        return f"{role}({','.join(calls)})"
    if role == "toolResult":
        flag = " isError" if message.get("isError") is True else ""
        return f"{role}({message.get('toolCallId')}{flag})"
    return role


def _entry_words(value: Json, estimate: Callable[[dict[str, Any]], float]) -> str:
    """``u1 user 4``: an entry's id, its role (or type) and what the case's estimator says
    it costs; a compaction names the entry it keeps from, a tool call or result its ids."""
    value = unwrapped(value)
    if not isinstance(value, dict) or "id" not in value:
        return _shown_json(value)
    kind = value.get("type")
    message = value.get("message")
    if kind == "message" and isinstance(message, dict):
        try:
            cost = f"{estimate(copy.deepcopy(message)):g}"
        except Exception:  # a malformed message on purpose: it has no cost
            cost = "?"
        return f"{value['id']} {_role_words(message)} {cost}"
    if kind == "compaction":
        return f"{value['id']} compaction→{value.get('firstKeptEntryId')}"
    return f"{value['id']} {kind}"


def unwrapped(value: Json) -> Json:
    """An entry as its path picture shows it: an ``UNCHECKED`` one as the entry it holds."""
    return value[UNCHECKED] if isinstance(value, dict) and UNCHECKED in value else value


def _path_lines(name: str, path: Json, estimate: Callable[[dict[str, Any]], float]) -> list[str]:
    """A path as entry ids with roles and costs, a line per interaction (at a user message)."""
    if not isinstance(path, list):
        return [f"{name}: {_shown_json(path)}"]
    if not path:
        return [f"{name}: []"]
    rows: list[list[str]] = [[]]
    for value in map(unwrapped, path):
        role = value.get("message", {}).get("role") if isinstance(value, dict) else None
        if role == "user" and rows[-1]:
            rows.append([])
        rows[-1].append(_entry_words(value, estimate))
    head = f"{name}: "
    lines: list[str] = []
    for row in rows:  # an interaction a line, wrapped where it runs long
        line = ""
        for words in row:
            if line and len(line) + len(words) > ROW_WIDTH:
                lines.append(line + " ·")
                line = ""
            line = f"{line} · {words}" if line else words
        lines.append(line)
    return [(head if i == 0 else " " * len(head)) + line for i, line in enumerate(lines)]


SAID_BY_THE_CASE = ("contract", "estimator", "interactions", "compact_at", "change", "goal")
"""A case's arguments its input lines never show as themselves: its class (the label says it),
its estimator (the costs line says it), a long path's size (the label), and the changes a
contract case makes to its value (shown on the value's line)."""
PARAMETERS = {"first_kept": "first_kept_entry_id"}
"""A case's arguments under the names of the function's own parameters."""
SAID_WHEN_TRUE: dict[str, str] = {
    "raw": N_("the path holds unparsed JSON objects, not entries"),
    "summary_object": N_("the summary is passed as a CompactionSummary, not as its JSON"),
}
"""Flags of a case said in a sentence (a catalog message) when they are set."""


def summarize(package: str, case: Mapping[str, Any]) -> list[str]:
    """A case's input in a few lines, as the function is called: every path as entry ids with
    roles and costs (by the case's estimator), the chapter's data by its name in ``fixtures``
    (with a contract case's change, as Python), the other arguments as ``name=JSON`` under the
    function's parameter names; a flag in a sentence."""
    impl = Implementation(package)
    raw = case["args"]
    args = impl.fixture(raw)
    if args.get(CONTRACT) == "orphan":  # the path as the case calls the function with it
        args["path"] = orphaned(args["path"])
    name = str(args.get("estimator", "length"))
    estimate = estimator(impl, name)
    lines: list[str] = []
    plain: list[str] = []
    said: list[str] = []
    pictured = 0  # where the path pictures end: their costs' source is said there
    for key, value in args.items():
        if key in SAID_BY_THE_CASE:
            continue
        if key in SAID_WHEN_TRUE:
            said += [SAID_WHEN_TRUE[key]] if value is True else []
        elif key in PATH_KEYS:
            lines += _path_lines(key, value, estimate)
            pictured = len(lines)
        elif key == "groups" and isinstance(value, list):
            for index, group in enumerate(value):
                lines += _path_lines(f"groups[{index}]", group, estimate)
            if not value:
                lines.append("groups: []")
            pictured = len(lines)
        elif key == "budget" and isinstance(value, dict):  # build_context's keyword arguments
            plain = [f"{k}={_shown_json(v)}" for k, v in value.items()] + plain
        elif key == "value" and "change" in args:  # a contract case: the chapter's record changed
            lines.append(f"value: {shown_data(impl, raw[key])} | {_shown_json(args['change'])}")
        elif isinstance(value, dict | list):
            lines.append(f"{key}: {shown_data(impl, raw.get(key, value))}")
        else:
            plain.append(f"{PARAMETERS.get(key, key)}={_shown_json(value)}")
    if "goal" in args:
        lines.append(f'value["summary"]["goal"] = {_shown_json(args["goal"])}')
    if pictured:
        lines.insert(pictured, costs_source(name))
    if plain:
        lines.append(" · ".join(plain))
    return lines + said


NAMED_DATA = ("COMPACT_1_SUMMARY", "COMPACT_2_SUMMARY", "compact_1_json")
"""The chapter's records and summaries an input line names rather than prints: the same line
in every edition, and the learner finds them in ``fixtures``."""


def data_name(impl: Implementation, name: str) -> str:
    """``fixtures.COMPACT_1_SUMMARY``, or ``fixtures.compact_1_json()`` for a function."""
    return f"fixtures.{name}()" if callable(getattr(impl.fixtures, name)) else f"fixtures.{name}"


def shown_data(impl: Implementation, value: Json) -> str:
    """An argument as its input line shows it: the chapter's data by its name in ``fixtures``
    (with the keys a case changed), anything else as JSON."""
    if isinstance(value, dict) and set(value) == {FIXTURE}:
        return data_name(impl, str(value[FIXTURE]))
    if isinstance(value, dict):
        for name in NAMED_DATA:
            near = _changed_from(impl, name, value)
            if near is not None:
                return near
    return _shown_json(value)


def _changed_from(impl: Implementation, name: str, value: dict[str, Json]) -> str | None:
    """``value`` as ``fixtures.NAME`` with its changes, written as Python (a dict's ``|``, a
    comprehension for keys left out), when it keeps most of that data."""
    data, resolved = impl.data(name), impl.fixture(value)
    if not isinstance(data, dict) or not isinstance(resolved, dict):
        return None
    kept = [key for key in data if key in resolved and resolved[key] == data[key]]
    if len(kept) * 2 <= len(data):
        return None
    shown = data_name(impl, name)
    gone = [key for key in data if key not in value]
    if gone:  # as Python: the data without those keys
        unwanted = " not in " + json.dumps(gone) if len(gone) > 1 else " != " + json.dumps(gone[0])
        shown = f"{{k: v for k, v in {shown}.items() if k{unwanted}}}"
    changed = {key: item for key, item in value.items() if key not in kept}
    if changed:  # as Python: the data with those keys set
        shown = f"{shown} | {_shown_json(changed)}"
    return shown


def costs_source(name: str) -> str:
    """One line saying where a path picture's numbers come from: the estimator and its rule.

    An English message kept as it is (an input line is stored with the case); ``describe``
    shows it in the edition that shows the case."""
    return COSTS.get(name, COSTS["length"])


COSTS: dict[str, str] = {
    "chapter": N_(
        "costs: the chapter's estimator, its table for the chapter's messages (u1 3, a1 4 …) "
        "and one token per 40 characters of text, rounded up, for any other"
    ),
    "length": N_(
        "costs: the test estimator 'length', 1 + (characters of the message's content as "
        "JSON) // 6, not the chapter's table"
    ),
    "scribble": N_(
        "costs: the test estimator 'scribble', 1 + (characters of the message's content as "
        "JSON) // 6, not the chapter's table; it also writes on the message it is handed"
    ),
    "negative": N_("costs: an estimator answering -5 for every message but the system prompt"),
    "nan": N_("costs: an estimator answering nan for every message but the system prompt"),
    "text": N_("costs: an estimator answering '3' for every message but the system prompt"),
    "huge": N_(
        "costs: an estimator answering 1e308 for every message but the system prompt (two "
        "such costs add up past the largest float)"
    ),
    "half": N_(
        "costs: the test estimator 'half', (1 + (characters of the message's content as "
        "JSON) // 6) / 2, not the chapter's table"
    ),
    "zero": N_("costs: an estimator answering 0 for every message but the system prompt"),
    "prompt-nan": N_(
        "costs: an estimator answering nan for the system prompt and 1 for any message"
    ),
}
"""Where a path picture's costs come from, by the case's estimator."""


def role_of(entry: Mapping[str, Any]) -> Any:
    return entry.get("message", {}).get("role")


def indexes(path: Sequence[Mapping[str, Any]], role: str) -> list[int]:
    return [i for i, entry in enumerate(path) if role_of(entry) == role]


def messages_of(path: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    return [entry for entry in path if entry.get("type") == "message"]


def split_json(path: Sequence[Mapping[str, Any]]) -> list[Entries]:
    """A valid history's interactions (the generator's own bookkeeping, for budgets)."""
    groups: list[Entries] = []
    for entry in messages_of(path):
        if entry["message"]["role"] == "user" or not groups:
            groups.append([])
        groups[-1].append(dict(entry))
    return groups


def edge_budgets(rng: random.Random, groups: Sequence[Sequence[Mapping[str, Any]]]) -> list[float]:
    """Amounts around the newest groups' running costs: exact fits, one short, one over."""
    running: float = 0
    sums: list[float] = [0]
    for group in reversed(groups):
        running += sum(length_estimate(entry["message"]) for entry in group)
        sums.append(running)
    picks = {rng.choice(sums) + delta for delta in (-1, 0, 0, 1)}
    picks.add(rng.choice(sums) + 0.5)
    return sorted(p for p in picks if p >= 0)


def message_entry(entry_id: str, parent: str | None, message: Json) -> dict[str, Any]:
    entry = {"type": "message", "id": entry_id, "parentId": parent, "timestamp": 0}
    return entry | {"message": message}


PAIR_FAULTS = ("drop result", "second result", "after an error", "unknown call", "duplicate call")
"""The ways a history breaks a call/result relation (``check_tool_pairs`` refuses each)."""


def broken_history(
    rng: random.Random, path: Entries, ways: Sequence[str] = ("assistant first", "system")
) -> tuple[Entries, list[str]] | None:
    """``path`` made invalid in one way an interaction check must refuse, and what the refusal
    names (the entry, or the call id): one fault, so the names are sure. The ways are ``ways``
    and, where the path has a result, ``PAIR_FAULTS``; None if none can be made."""
    path = copy.deepcopy(path)
    results, users = indexes(path, "toolResult"), indexes(path, "user")
    way = rng.choice([*ways, *(PAIR_FAULTS if results else ())] or [None])
    if way is None:
        return None
    if way == "assistant first":
        assistant = {"role": "assistant", "content": [{"type": "text", "text": "early"}]}
        return [message_entry("early", None, assistant)] + path, ["early"]
    if way == "system":
        at = rng.choice(users) if users else 0
        system = {"role": "system", "content": "you are a grader"}
        return path[: at + 1] + [message_entry("sys", None, system)] + path[at + 1 :], ["sys"]
    index = rng.choice(results)
    answered = str(path[index]["message"]["toolCallId"])
    if way == "drop result":  # its call is left without a result
        return path[:index] + path[index + 1 :], [answered]
    if way in ("second result", "after an error"):  # an error result is a result too
        twin = copy.deepcopy(path[index]) | {"id": "twin"}
        if way == "after an error":
            path[index]["message"]["isError"] = True
            twin["message"]["isError"] = False
        return path[: index + 1] + [twin] + path[index + 1 :], [answered]
    if way == "unknown call":
        ghost = copy.deepcopy(path[index]) | {"id": "ghost-result"}
        ghost["message"]["toolCallId"] = "ghost"
        return path[: index + 1] + [ghost] + path[index + 1 :], ["ghost"]
    declaring = next(e["message"] for e in path if call_blocks(e.get("message", {})))
    call = call_blocks(declaring)[0]
    declaring["content"].append(copy.deepcopy(call))  # the same message declares it twice
    return path, [str(call["id"])]


def compaction_json(
    rng: random.Random, index: int, parent: str, first_kept: str, summary: Json
) -> dict[str, Any]:
    return {
        "type": "compaction",
        "id": f"compact-{index}",
        "parentId": parent,
        "timestamp": 1000 + index,
        "summary": summary,
        "firstKeptEntryId": first_kept,
        "tokensBefore": rng.randint(0, 500),
    }


def with_compactions(
    rng: random.Random, path: Entries, summaries: list[Json], broken: bool
) -> Entries:
    """``path`` with one to three compaction records appended at interaction boundaries (their
    timestamps rising, or falling: the newest record is the last on the path, whatever its
    timestamp)."""
    out: Entries = []
    count = 0
    backwards = rng.random() < 0.5
    for entry in path:
        starts = [e["id"] for e in out if role_of(e) == "user"]
        if role_of(entry) == "user" and starts and rng.random() < 0.5:
            count += 1
            keep = rng.choice(starts)
            out.append(compaction_json(rng, count, out[-1]["id"], keep, summaries[count % 3]))
        out.append(entry)
    starts = [e["id"] for e in out if role_of(e) == "user"]
    if out and (count == 0 or rng.random() < 0.5):
        count += 1
        keep = rng.choice(starts) if starts else out[0]["id"]
        out.append(compaction_json(rng, count, out[-1]["id"], keep, summaries[count % 3]))
    if backwards:
        for record in (e for e in out if e.get("type") == "compaction"):
            record["timestamp"] = 2000 - record["timestamp"]
    if broken and count:
        last = max(i for i, e in enumerate(out) if e.get("type") == "compaction")
        others = [e["id"] for e in out if role_of(e) != "user"]
        out[last]["firstKeptEntryId"] = rng.choice(others + ["nowhere"])
    return out


def latest_record(path: Entries) -> dict[str, Any]:
    return [entry for entry in path if entry.get("type") == "compaction"][-1]


def call_blocks(message: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The ``toolCall`` blocks of an assistant message (none for any other message)."""
    if message.get("role") != "assistant" or not isinstance(message.get("content"), list):
        return []
    return [b for b in message["content"] if isinstance(b, dict) and b.get("type") == "toolCall"]


def shared_call_ids(path: Entries) -> Entries | None:
    """``path`` with each interaction's calls renamed ``read-0``, ``read-1``, … (and their
    results with them), so later interactions reuse the ids of earlier ones: still valid.
    None when fewer than two interactions make calls (nothing would be reused)."""
    path = copy.deepcopy(path)
    calling = 0
    for group in split_json(path):  # its entries are copies holding the path's own messages
        messages = [entry["message"] for entry in group]
        names: dict[str, str] = {}
        for block in (b for m in messages for b in call_blocks(m)):
            names[block["id"]] = f"read-{len(names)}"
            block["id"] = names[block["id"]]
        for message in messages:
            if message["role"] == "toolResult":
                message["toolCallId"] = names[message["toolCallId"]]
        calling += bool(names)
    return path if calling >= 2 else None


def failed_results(path: Entries) -> Entries | None:
    """``path`` with every tool result an error (``"isError": true``): still valid, each
    result in its group. None when the path has no tool result."""
    path = copy.deepcopy(path)
    results = [e["message"] for e in messages_of(path) if e["message"]["role"] == "toolResult"]
    for message in results:
        message["isError"] = True
    return path if results else None


def second_answer(path: Entries, at: int) -> Entries:
    """``path`` with a second assistant message, without tool calls, after entry ``at``."""
    answer = {"role": "assistant", "content": [{"type": "text", "text": "One more thing"}]}
    return path[: at + 1] + [message_entry("more", path[at]["id"], answer)] + path[at + 1 :]


def budget_json(rng: random.Random, groups: Sequence[Sequence[Mapping[str, Any]]]) -> Json:
    """A budget around the groups' edges: a prompt (white space around it too, given as it
    is), the reserved output and safety margin, at times not whole numbers."""
    prompt = rng.choice(["", "sys", "You compact context.", "Be brief.", "  Be brief.\n"])
    reserved: float = rng.randint(0, 6)
    margin: float = rng.randint(0, 3)
    if rng.random() < 0.3:
        reserved, margin = reserved + 0.5, margin + 0.25
    system = length_estimate({"role": "system", "content": prompt})
    available = rng.choice(edge_budgets(rng, groups) or [0])
    return {
        # never below 0: a valid budget, so a case that breaks one number holds one fault
        "max_tokens": max(0, system + reserved + margin + available - rng.choice([0, 0, 0, 5])),
        "system_prompt": prompt,
        "reserved_output": reserved,
        "safety_margin": margin,
    }


BAD_BUDGETS: tuple[tuple[str, Json], ...] = (
    *(("max_tokens", bad) for bad in (-1, float("nan"), True, "31")),
    ("reserved_output", -2), ("safety_margin", float("inf")), ("system_prompt", 7),
    ("safety_margin", 10**400),  # no float holds it: not a finite number as a float
)  # fmt: skip

CHAPTER_PATH = {FIXTURE: "chapter_path_json"}
GAP: dict[str, Json] = {
    "groups": [
        [message_entry("u1", None, {"role": "user", "content": "hi"})],
        [message_entry("u2", "u1", {"role": "user", "content": "a long question " * 6})],
        [message_entry("u3", "u2", {"role": "user", "content": "hi"})],
    ],
    "available": 6,
    "estimator": "length",
}
"""Groups costing 2, 17 and 2 with 6 available: the newest is kept; the oldest would fit too,
but no group is kept past one that does not."""
CHAPTER_LABEL = {"type": "metadata", "id": "label", "parentId": "a3", "timestamp": 10}
CHAPTER_LABEL |= {"key": "k", "value": 1}
"""A metadata entry after the chapter path's leaf ``a3``."""
AFTER_METADATA = [{SPLICE: "chapter_path_json"}, CHAPTER_LABEL]
RESUMED = [{SPLICE: "chapter_path_json"}, {FIXTURE: "compact_1_json"}]
RESUMED += [{SPLICE: "continuation_json"}]
"""The chapter's path, its compaction ``compact-1``, and the turns after it."""
CHAPTER_BUDGET = {"system_prompt": "sys", "reserved_output": 4, "safety_margin": 2}
CHAPTER_U1 = message_entry("u1", None, {"role": "user", "content": "Fix resume"})
CHAPTER_A1 = message_entry(
    "a1", "compact-1", {"role": "assistant", "content": [{"type": "text", "text": "On it"}]}
)
"""A question and an answer, with a compaction between them in ``LATEST_PLACES``."""
COMPACT_1 = {FIXTURE: "COMPACT_1_SUMMARY"}
COMPACT_2 = {FIXTURE: "COMPACT_2_SUMMARY"}


RULE = "rule-"
"""A rule's case id is ``LAB#rule-NAME``: no number, no seed, so every draw holds it as is."""
RULES: dict[str, tuple[str, ...]] = {
    "11.1": (
        "compact-1-summary", "compact-1-record", "summary-missing-key", "summary-unknown-key",
        "record-empty-parent-id", "record-null-parent-id", "record-empty-first-kept",
        "record-negative-tokens-before", "record-string-tokens-before",
        "record-boolean-tokens-before", "record-infinite-tokens-before",
        "record-negative-timestamp", "record-unknown-key", "record-missing-summary",
    ),
    "11.2": (
        "chapter-split", "chapter-group", "empty-path", "orphan-result", "call-without-result",
        "call-id-reused-later", "call-id-declared-twice",
    ),
    "11.3": (
        "exact-fit", "one-over", "single-group-overflow", "everything-fits", "empty-path",
    ),
    "11.4": (
        "chapter-compact-1", "empty-path", "id-on-the-path", "first-kept-inside",
        "compact-1-stored", "compact-2-stored",
    ),
    "11.5": (
        "no-compaction", "resume-compact-1", "resume-compact-2", "resume-exact-fit",
        "resume-one-over", "build-after-compact-2", "compact-1-resumes", "compact-2-resumes",
    ),
    "11.opt": (),
}  # fmt: skip
"""The rules the chapter states, a case each in every draw (shipped and audit seeds alike)."""

COMPACT_1_RECORD = {
    "type": "compaction", "id": "compact-1", "parentId": "a3", "timestamp": 100,
    "summary": {FIXTURE: "COMPACT_1_SUMMARY"}, "firstKeptEntryId": "u2", "tokensBefore": 29,
}  # fmt: skip
"""``compact-1`` as the chapter stores it, with its summary as the chapter's data."""
COMPACT_2_RECORD = COMPACT_1_RECORD | {"id": "compact-2", "parentId": "a4", "timestamp": 200}
COMPACT_2_RECORD |= {"summary": {FIXTURE: "COMPACT_2_SUMMARY"}, "firstKeptEntryId": "u3"}
"""``compact-2``, appended after ``a4``, keeping from ``u3`` (the chapter's second compaction)."""
RESUMED_TWICE = [*RESUMED, COMPACT_2_RECORD]
EARLY = COMPACT_1_RECORD | {"parentId": "u1", "firstKeptEntryId": "u1"}
LATEST_PLACES: tuple[tuple[list[Json], str], ...] = (
    ([], N_("an empty path")),
    ([EARLY | {"parentId": "root"}], N_("a compaction alone")),
    ([CHAPTER_U1, EARLY], N_("a compaction second")),
    ([CHAPTER_U1, EARLY, CHAPTER_A1], N_("a compaction second of three")),
)
"""Paths whose newest compaction stands where a walk from the end is most easily cut short."""
RECORD_RULES = (
    "record-empty-parent-id", "record-null-parent-id", "record-empty-first-kept",
    "record-negative-tokens-before", "record-string-tokens-before",
    "record-boolean-tokens-before", "record-infinite-tokens-before", "record-negative-timestamp",
    "record-unknown-key",
)  # fmt: skip
"""The rule of each of ``BROKEN_RECORDS``, in its order."""


def chapter_data(name: str) -> Json:
    """A copy of the chapter's data ``fixtures.<name>`` of the reference (called if a function),
    where a rule's case needs it changed: drawing happens on the grader's side only."""
    return Implementation("course").data(name)


def chapter_path_changed(change: Callable[[Entries], None]) -> Entries:
    """The chapter's path as JSON, changed by ``change``."""
    path: Entries = chapter_data("chapter_path_json")
    change(path)
    return path


def orphan_result(path: Entries) -> None:
    """``r-test`` answers ``unknown-1``, a call nobody made (the chapter's broken example)."""
    next(e for e in path if e["id"] == "r-test")["message"]["toolCallId"] = "unknown-1"


def without_r_read(path: Entries) -> None:
    """``read-1``'s result left out: ``calls`` declares a call nobody answers."""
    at = next(i for i, e in enumerate(path) if e["id"] == "r-read")
    path[at + 1]["parentId"] = path[at]["parentId"]
    del path[at]


def declared_twice(path: Entries) -> None:
    """``calls`` declares ``read-1`` twice, each result answering it."""
    calls = next(e for e in path if e["id"] == "calls")
    blocks = list(call_blocks(calls["message"]))
    blocks[1]["id"] = blocks[0]["id"]
    next(e for e in path if e["id"] == "r-test")["message"]["toolCallId"] = blocks[0]["id"]


def unparsed(path: Entries) -> Entries:
    """``path`` with every message entry built without the parser: valid entries whose words
    are the case file's own strings (a role compared with ``is`` shows)."""
    return [{UNCHECKED: e} if e.get("type") == "message" else e for e in copy.deepcopy(path)]


def unchecked_calls() -> Entries:
    """The chapter's path whose ``calls`` is built without the parser, with timestamp -1: only
    a checked copy (``parse_message_entry``) refuses it."""
    path: Entries = chapter_data("chapter_path_json")
    at = next(i for i, e in enumerate(path) if e["id"] == "calls")
    path[at] = {UNCHECKED: path[at] | {"timestamp": -1}}
    return path


def reused_later(path: Entries) -> None:
    """A fourth interaction whose call reuses ``read-1``, an id an earlier one declared."""
    calls = copy.deepcopy(next(e for e in path if e["id"] == "calls"))
    result = copy.deepcopy(next(e for e in path if e["id"] == "r-read"))
    first = copy.deepcopy(path[0])
    first["id"], first["parentId"] = "u4", "a3"
    calls["id"], calls["parentId"] = "calls-4", "u4"
    calls["message"]["content"] = [
        b for b in calls["message"]["content"] if b.get("id") == "read-1"
    ]
    result["id"], result["parentId"] = "r-read-4", "calls-4"
    path += [first, calls, result]


class Cases:
    """Collects one lab's cases, numbering them; draws its examples with the lab's seed."""

    def __init__(self, lab: str, seed: int) -> None:
        from course.curricula.ch11 import (
            strategies,
        )  # on first use: answering a case needs no hypothesis

        self.lab, self.seed = lab, seed
        self.items: list[Case] = []
        self.numbered = 0
        self.s = strategies

    def add(
        self, function: str, label: str, label_args: dict[str, Json] | None = None, /, **args: Json
    ) -> None:
        """A case; ``label`` is an English template (marked with ``N_``) filled by
        ``label_args`` where it is shown, in the edition that shows it."""
        self.numbered += 1
        self._case(f"{self.lab}#{self.numbered:03d}", function, label, label_args, args)

    def rule(
        self,
        name: str,
        function: str,
        label: str,
        label_args: dict[str, Json] | None = None,
        /,
        **args: Json,
    ) -> None:
        """A case of a rule the chapter states: the same id and input in every draw."""
        assert name in RULES[self.lab], f"{self.lab}: {name} is not in RULES"
        self._case(f"{self.lab}#{RULE}{name}", function, label, label_args, args)

    def _case(
        self, case_id: str, function: str, label: str, label_args: Json, args: dict[str, Json]
    ) -> None:
        case: dict[str, Json] = {"id": case_id, "lab": self.lab, "function": function}
        case["label"] = label
        if args.get(CONTRACT) == "long":  # thousands of entries: asked in draw order only
            case[ONCE] = True
        self.items.append(case | {"label_args": label_args or {}, "args": args})

    def histories(self, least: int, most: int, count: int, shift: int = 0) -> list[Entries]:
        """``count`` valid histories of ``least`` to ``most`` interactions."""
        strategy = self.s.histories(min_groups=least, max_groups=most)
        return self.s.examples(strategy, count, self.seed + shift)

    def summaries(self, count: int) -> list[Json]:
        return self.s.examples(self.s.SUMMARIES, count, self.seed)

    def budgets(self, function: str, rng: random.Random, groups: list[Entries], name: str) -> None:
        """Two cases of ``function(groups, available, estimator)`` at the budget's edges."""
        for available in edge_budgets(rng, groups)[:2]:
            label = N_("{count} interactions, available={available}")
            values: dict[str, Json] = {"count": len(groups), "available": available}
            self.add(function, label, values, groups=groups, available=available, estimator=name)

    def chapter_budgets(self, label: str, path: Json, sizes: Sequence[int]) -> None:
        """``build_context`` on one of the chapter's paths at each ``max_tokens`` of ``sizes``."""
        for size in sizes:
            budget = CHAPTER_BUDGET | {"max_tokens": size}
            shown = {"max_tokens": size}
            self.add(BUILD, label, shown, path=path, budget=budget, estimator="chapter")


def broken_summaries(
    rng: random.Random, summary: dict[str, Any]
) -> list[tuple[str, Json, list[str]]]:
    """Summaries with one fault each, and the field the refusal names."""
    key = rng.choice(SUMMARY_KEYS)
    return [
        (N_("a missing key"), {k: v for k, v in summary.items() if k != key}, [key]),
        (N_("an unknown 'files' key"), summary | {"files": []}, ["files"]),
        (N_("a blank goal"), summary | {"goal": "   "}, ["goal"]),
        (N_("a goal that is a number"), summary | {"goal": 3}, ["goal"]),
        (N_("a list item that is a number"), summary | {key: [*summary[key], 7]}, [key]),
        *(
            (N_("a list that is a string"), summary | {name: "one item"}, [name])
            for name in SUMMARY_KEYS
        ),
        (N_("an array instead of an object"), [summary], ["summary"]),
    ]


BROKEN_RECORDS: tuple[tuple[str, dict[str, Json]], ...] = (
    (N_("an empty parentId"), {"parentId": ""}),
    (N_("a null parentId"), {"parentId": None}),
    (N_("an empty firstKeptEntryId"), {"firstKeptEntryId": ""}),
    (N_("a negative tokensBefore"), {"tokensBefore": -1}),
    (N_("a tokensBefore string"), {"tokensBefore": "29"}),
    (N_("a boolean tokensBefore"), {"tokensBefore": True}),
    (N_("an infinite tokensBefore"), {"tokensBefore": float("inf")}),
    (N_("a negative timestamp"), {"timestamp": -5}),
    (N_("an unknown key"), {"note": "x"}),
)
"""One change each that makes a compaction record invalid."""
MORE_BROKEN_RECORDS: tuple[tuple[str, dict[str, Json]], ...] = (
    (N_("an empty id"), {"id": ""}),
    (N_("a NaN tokensBefore"), {"tokensBefore": float("nan")}),
    (N_("an infinite timestamp"), {"timestamp": float("inf")}),
)
"""The other refusals the parser's contract lists, drawn but not rules."""


SUMMARY_OBJECT_FAULTS: tuple[tuple[str, dict[str, Json]], ...] = (
    (N_("a CompactionSummary object whose completed is 5"), {"completed": 5}),
    (N_("a CompactionSummary object whose goal is blank"), {"goal": "  "}),
)
"""A summary made with the public type's constructor that Lab 11.1's parser refuses."""


def faulty_key(change: Mapping[str, Json]) -> str:
    """The JSON key a record's one change breaks (``note``, ``tokensBefore``...)."""
    return next(iter(change))


def lab_1(cases: Cases, rng: random.Random) -> None:
    summaries = cases.summaries(8)
    cases.rule("compact-1-summary", PARSE_SUMMARY, N_("the chapter's compact-1"), value=COMPACT_1)
    chapter_summary: dict[str, Json] = chapter_data("COMPACT_1_SUMMARY")
    without = {k: v for k, v in chapter_summary.items() if k != "unresolved"}
    unknown_key = chapter_summary | {"files": []}
    for rule, label, value, key in (
        ("summary-missing-key", N_("a missing key"), without, "unresolved"),
        ("summary-unknown-key", N_("an unknown 'files' key"), unknown_key, "files"),
    ):
        names = ["compact-1", key]
        cases.rule(rule, PARSE_SUMMARY, label, value=value, entry_id="compact-1", names=names)
    record = N_("the chapter's compact-1")
    cases.rule("compact-1-record", PARSE_ENTRY, record, value={FIXTURE: "compact_1_json"})
    for name, (label, change) in zip(RECORD_RULES, BROKEN_RECORDS, strict=True):
        fault = ["compact-1", faulty_key(change)]
        cases.rule(name, PARSE_ENTRY, label, value=COMPACT_1_RECORD | change, names=fault)
    no_summary = {k: v for k, v in COMPACT_1_RECORD.items() if k != "summary"}
    label = N_("a missing summary")
    cases.rule(
        "record-missing-summary",
        PARSE_ENTRY,
        label,
        value=no_summary,
        names=["compact-1", "summary"],
    )
    for summary in summaries:
        cases.add(PARSE_SUMMARY, N_("a valid summary"), value=summary)
    label = N_("a CompactionSummary object")
    for summary in summaries[:2]:
        cases.add(PARSE_SUMMARY, label, value=summary, summary_object=True)
    label = N_("a CompactionSummary object whose constraints are a string")
    stringy = summaries[2] | {"constraints": "one item"}
    fields = ["compact-1", "constraints"]
    cases.add(
        PARSE_SUMMARY, label, value=stringy, summary_object=True, entry_id="compact-1", names=fields
    )
    for index, (label, value, fields) in enumerate(broken_summaries(rng, summaries[0])):
        entry_id = f"compact-{index}"  # what names the place in the error, with the field
        cases.add(PARSE_SUMMARY, label, value=value, entry_id=entry_id, names=[entry_id, *fields])
    for index, summary in enumerate(summaries[:5]):
        entry = compaction_json(rng, index, f"leaf-{index}", f"u-{index}", summary)
        entry["timestamp"] = rng.choice([0, 5, 2.5, 10**6])
        entry["tokensBefore"] = rng.choice([entry["tokensBefore"], 29.5, 0.25])
        cases.add(PARSE_ENTRY, N_("a valid record"), value=entry)
    base = compaction_json(rng, 9, "a3", "u2", summaries[1])
    for label, change in (*BROKEN_RECORDS, *MORE_BROKEN_RECORDS):
        fault = [faulty_key(change)] + (["compact-9"] if change.get("id") != "" else [])
        cases.add(PARSE_ENTRY, label, value=base | change, names=fault)
    unknown = {"summary": summaries[1] | {"files": []}}
    label = N_("a summary with an unknown key")
    cases.add(PARSE_ENTRY, label, value=base | unknown, names=["compact-9", "files"])
    missing = {k: v for k, v in base.items() if k != "summary"}
    cases.add(PARSE_ENTRY, N_("a missing summary"), value=missing, names=["compact-9", "summary"])
    contract_1(cases)


def lab_2(cases: Cases, rng: random.Random) -> None:
    histories = cases.histories(1, 5, 10)
    cases.rule("chapter-split", SPLIT, N_("the chapter's path"), path=CHAPTER_PATH)
    cases.rule("chapter-group", GROUP, N_("the chapter's path"), path=CHAPTER_PATH)
    cases.rule("empty-path", SPLIT, N_("an empty path"), path=[])
    orphan = chapter_path_changed(orphan_result)
    cases.rule("orphan-result", SPLIT, N_("a result of a call nobody made"), path=orphan)
    unanswered = chapter_path_changed(without_r_read)
    label = N_("a call without its result")
    cases.rule("call-without-result", SPLIT, label, path=unanswered)
    reused = chapter_path_changed(reused_later)
    label = N_("a call id an earlier interaction used")
    cases.rule("call-id-reused-later", GROUP, label, path=reused)
    twice = chapter_path_changed(declared_twice)
    cases.rule("call-id-declared-twice", SPLIT, N_("a call id declared twice"), path=twice)
    for index, path in enumerate(histories):
        cases.add(SPLIT, N_("a valid history"), path=path)
        cases.add(GROUP, N_("a valid history"), path=path)
        broken = broken_history(rng, path)
        if broken is not None:
            function = GROUP if index % 3 == 2 else SPLIT  # the same refusals
            cases.add(function, N_("a broken history"), path=broken[0], names=broken[1])
    cases.add(SPLIT, N_("unparsed JSON objects"), path=histories[0], raw=True)
    raw = copy.deepcopy(histories[1])
    raw[-1]["timestamp"] = -1
    label = N_("unparsed JSON objects, the last with timestamp -1")
    cases.add(SPLIT, label, path=raw, raw=True, names=[raw[-1]["id"], "timestamp"])
    cases.add(SPLIT, N_("the chapter's path with compact-1 and the turns after it"), path=RESUMED)
    shared = [path for path in map(shared_call_ids, histories) if path is not None]
    failed = [path for path in map(failed_results, histories) if path is not None]
    for function in (SPLIT, GROUP):
        cases.add(function, N_("the chapter's path ending in metadata"), path=AFTER_METADATA)
        for path in shared[:2] + failed[:2]:
            cases.add(function, N_("a valid history"), path=path)
    for path in histories[:4]:
        ends = indexes(path, "assistant")
        if ends:
            longer = second_answer(path, rng.choice(ends))
            cases.add(GROUP, N_("two answers in a row"), path=longer)
    for path in histories[:6]:
        group = rng.choice(split_json(path))
        calls_last = sorted(group, key=lambda e: e["message"]["role"] == "assistant")
        cases.add(PAIRS, N_("one interaction"), entries=group)
        cases.add(PAIRS, N_("results before their calls"), entries=calls_last)
        broken = broken_history(rng, group, ways=())
        if broken is not None:
            cases.add(PAIRS, N_("a broken interaction"), entries=broken[0], names=broken[1])
    label = N_("the chapter's path with 'calls' never parsed: its timestamp is -1")
    cases.add(GROUP, label, path=unchecked_calls())
    label = N_("a valid history whose entries were built without the parser")
    for path in histories[6:9]:
        cases.add(SPLIT, label, path=unparsed(path))
        cases.add(GROUP, label, path=unparsed(path))
        cases.add(PAIRS, label, entries=unparsed(rng.choice(split_json(path))))
    system = {"role": "system", "content": "be brief"}
    for path in histories[:2]:
        group = split_json(path)[0]
        inside = group[:1] + [message_entry("sys", group[0]["id"], system)] + group[1:]
        label = N_("one interaction with a system message inside: neither a call nor a result")
        cases.add(PAIRS, label, entries=inside)
        label = N_("a system message in a history whose entries were built without the parser")
        with_system = unparsed(path[:1] + [message_entry("sys", path[0]["id"], system)] + path[1:])
        cases.add(SPLIT, label, path=with_system, names=["sys"])
    contract_2(cases)


def lab_3(cases: Cases, rng: random.Random) -> None:
    label = N_("the chapter's path, max_tokens={max_tokens}")
    for name, size in (
        ("exact-fit", 31), ("one-over", 30), ("single-group-overflow", 19),
        ("everything-fits", 100),
    ):  # fmt: skip
        budget = CHAPTER_BUDGET | {"max_tokens": size}
        sized: dict[str, Json] = {"max_tokens": size}
        cases.rule(name, BUILD, label, sized, path=CHAPTER_PATH, budget=budget, estimator="chapter")
    budget = CHAPTER_BUDGET | {"max_tokens": 31}
    cases.rule(
        "empty-path", BUILD, N_("an empty path"), path=[], budget=budget, estimator="chapter"
    )
    cases.chapter_budgets(label, CHAPTER_PATH, (29, 9))
    for path in cases.histories(0, 6, 12):
        groups = split_json(path)
        name = rng.choice(["length", "length", "scribble", "half"])
        count: dict[str, Json] = {"count": len(groups)}
        budget = budget_json(rng, groups)
        cases.add(
            BUILD, N_("{count} interactions"), count, path=path, budget=budget, estimator=name
        )
        cases.budgets(SELECT, rng, groups, name)
    for path in cases.histories(1, 4, 4, shift=1):
        groups = split_json(path)
        summary = {
            "role": "user",
            "content": "[Compaction summary of earlier messages]\nGoal: go on",
        }
        tokens = length_estimate(summary)
        opening = {"messages": [summary], "tokens": tokens, "compaction_id": "compact-x"}
        budget = budget_json(rng, groups)
        budget["max_tokens"] += rng.choice([0, tokens])
        label = N_("{count} interactions after an opening message")
        shown: dict[str, Json] = {"count": len(groups)}
        cases.add(
            BUILD, label, shown, path=path, budget=budget, estimator="length", opening=opening
        )
    for path in cases.histories(2, 4, 2, shift=2):
        summary = {"role": "user", "content": "[Compaction summary of earlier messages]"}
        opening = {"messages": [summary], "tokens": 40, "compaction_id": "compact-x"}
        budget = CHAPTER_BUDGET | {"max_tokens": 20}
        label = N_("an opening of 40 tokens, more than is left; every message costs 0")
        cases.add(BUILD, label, path=path, budget=budget, estimator="zero", opening=opening)
    path = cases.histories(2, 3, 1)[0]
    for key, bad in BAD_BUDGETS:
        budget = budget_json(rng, split_json(path)) | {key: bad}
        shown = {"key": key, "value": repr(bad)}
        # no words to translate in the label
        cases.add(
            BUILD, "{key}={value}", shown, path=path, budget=budget, estimator="length", names=[key]
        )
    repeated = copy.deepcopy(messages_of(path)[0])
    budget = budget_json(rng, split_json(path))
    label = N_("a repeated id")
    twice = path + [repeated]
    cases.add(BUILD, label, path=twice, budget=budget, estimator="length", names=[repeated["id"]])
    budget = budget_json(rng, split_json(path))
    label = N_("an estimator answering nan for the system prompt alone")
    cases.add(BUILD, label, path=path, budget=budget, estimator="prompt-nan")
    # the newest group holds an entry never parsed (timestamp -1): only a checked copy refuses
    unchecked = copy.deepcopy(path)
    newest = max(i for i, entry in enumerate(path) if entry["type"] == "message")
    unchecked[newest] = {UNCHECKED: unchecked[newest] | {"timestamp": -1}}
    label = N_("the newest message never parsed: its timestamp is -1")
    groups = split_json(path)
    groups[-1][-1] = unchecked[newest]
    cases.add(SELECT, label, groups=groups, available=1000, estimator="length")
    cases.add(BUILD, label, path=unchecked, budget=budget, estimator="length")
    # an older group that would fit is not kept past a newer one that does not
    cases.add(SELECT, N_("an older group that fits behind one that does not"), **GAP)
    contract_3(cases)


def lab_4(cases: Cases, rng: random.Random) -> None:
    summaries = cases.summaries(4)
    for index, path in enumerate(cases.histories(1, 4, 8)):
        starts = [group[0]["id"] for group in split_json(path)]
        others = [e["id"] for e in path if e["id"] not in starts]
        summary = summaries[index % len(summaries)]
        base = {
            "path": path,
            "id": f"compact-{index}",
            "timestamp": rng.choice([100, 2.5]),
            "summary": summary,
            "summary_object": rng.random() < 0.5,
            "first_kept": rng.choice(starts),
            "tokens_before": rng.choice([rng.randint(0, 400), 12.5]),
        }
        record = base["id"]
        cases.add(CREATE, N_("a valid record"), **base)
        if others:
            inside = base | {"first_kept": rng.choice(others)}
            cases.add(CREATE, N_("first kept inside an interaction"), **inside, names=starts)
        taken = rng.choice(path)["id"]
        cases.add(CREATE, N_("an id already on the path"), **base | {"id": taken}, names=[taken])
        nowhere = base | {"first_kept": "nowhere"}
        cases.add(CREATE, N_("first kept not on the path"), **nowhere, names=starts)
        if index < 2:
            cases.add(CREATE, N_("an empty path"), **base | {"path": []})
            negative = base | {"tokens_before": -3}
            label = N_("a negative tokens_before")
            cases.add(CREATE, label, **negative, names=[record, "tokensBefore"])
            broken = {"summary": summary | {"files": []}, "summary_object": False}
            label = N_("a summary with an unknown key")
            cases.add(CREATE, label, **base | broken, names=[record, "files"])
            for label, change in SUMMARY_OBJECT_FAULTS:  # a record no store would take
                refused = {"summary": summary | change, "summary_object": True}
                cases.add(CREATE, label, **base | refused, names=[record, faulty_key(change)])
        if index < 4:
            budget_json(rng, split_json(path))  # drawn as before, so the later draws stay
            label = N_("a record appended to both stores and read back")
            made = {k: v for k, v in base.items() if k != "summary_object"}
            cases.add(CREATE, label, **made, contract="stores")
        faulty = broken_history(rng, path)
        if faulty is not None:
            cases.add(CREATE, N_("a broken history"), **base | {"path": faulty[0]})
    chapter = {"path": CHAPTER_PATH, "id": "compact-1", "timestamp": 100, "summary": COMPACT_1}
    chapter |= {"first_kept": "u2", "tokens_before": 29}
    made = dict(chapter)
    chapter["summary_object"] = False
    cases.rule("chapter-compact-1", CREATE, N_("the chapter's path"), **chapter)
    cases.rule("empty-path", CREATE, N_("an empty path"), **chapter | {"path": []})
    taken = N_("an id already on the path")
    cases.rule("id-on-the-path", CREATE, taken, **chapter | {"id": "a3"}, names=["a3"])
    within = N_("first kept inside an interaction")
    starts = ["u1", "u2", "u3"]
    cases.rule("first-kept-inside", CREATE, within, **chapter | {"first_kept": "a2"}, names=starts)
    label = N_("the chapter's path ending in metadata")
    cases.add(CREATE, label, **chapter | {"path": AFTER_METADATA})
    label = N_("compact-1 appended to both stores and read back")
    cases.rule("compact-1-stored", CREATE, label, **made, contract="stores")
    label = N_("compact-2 after compact-1, appended to both stores and read back")
    cases.rule("compact-2-stored", CREATE, label, **SECOND_RECORD, contract="stores")
    contract_4(cases)


RESUMES_BUDGET = CHAPTER_BUDGET | {"max_tokens": 40}
SECOND_RECORD: dict[str, Json] = {
    "path": RESUMED, "id": "compact-2", "timestamp": 200, "summary": COMPACT_2,
    "first_kept": "u3", "tokens_before": 50,
}  # fmt: skip
"""compact-2 as the chapter makes it, after compact-1 (Lab 11.4 stores it, Lab 11.5 resumes)."""


def lab_5(cases: Cases, rng: random.Random) -> None:
    summaries = cases.summaries(6)
    for summary in summaries[:4]:
        cases.add(MESSAGE, N_("a summary"), summary=summary)
    cases.add(MESSAGE, N_("the chapter's compact-1"), summary=COMPACT_1)
    for index, path in enumerate(cases.histories(1, 5, 10)):
        broken = index % 4 == 3
        resumed = with_compactions(rng, path, summaries, broken)
        groups = split_json(path)
        label = (
            N_("{count} interactions, a first kept that is not a user message")
            if broken
            else N_("{count} interactions")
        )
        count: dict[str, Json] = {"count": len(groups)}
        cases.add(LATEST, label, count, path=resumed)
        if broken:  # the refusal names the record and the id it keeps from
            record = latest_record(resumed)
            named = [record["id"], record["firstKeptEntryId"]]
            cases.add(RESUME, label, count, path=resumed, names=named)
        else:
            cases.add(RESUME, label, count, path=resumed)
        if not broken:
            budget = budget_json(rng, groups)
            budget["max_tokens"] += rng.choice([0, 8, 30])
            name = rng.choice(["length", "scribble"])
            cases.add(BUILD, label, count, path=resumed, budget=budget, estimator=name)
    cases.add(LATEST, N_("no compaction"), path=CHAPTER_PATH)
    for place, label in LATEST_PLACES:
        cases.add(LATEST, label, path=place)
    for chapter in (RESUMED, RESUMED_TWICE):  # without one, no Lab 11.5 code runs
        label = N_("what opens the request: the chapter's path, its compactions")
        cases.add(OPEN, label, path=chapter, estimator="chapter")
    label = N_("a valid history whose entries were built without the parser")
    for path in cases.histories(2, 4, 2, shift=14):
        built = unparsed(with_compactions(rng, path, summaries, False))
        cases.add(RESUME, label, path=built)
        cases.add(OPEN, label, path=built, estimator="length")
    cases.rule("no-compaction", RESUME, N_("no compaction"), path=CHAPTER_PATH)
    cases.rule("resume-compact-1", RESUME, N_("the chapter's resume"), path=RESUMED)
    second = N_("the chapter's second compaction")
    cases.rule("resume-compact-2", RESUME, second, path=RESUMED_TWICE)
    # 37: the summary message and u3 … a4 take the 28 tokens left exactly; 36: u4, a4 alone
    at_size = N_("the chapter's resume, max_tokens={max_tokens}")
    for name, size in (("resume-exact-fit", 37), ("resume-one-over", 36)):
        budget = CHAPTER_BUDGET | {"max_tokens": size}
        sized: dict[str, Json] = {"max_tokens": size}
        cases.rule(name, BUILD, at_size, sized, path=RESUMED, budget=budget, estimator="chapter")
    budget = CHAPTER_BUDGET | {"max_tokens": 38}  # after compact-2, u3 … a4 fit exactly
    twice = {"path": RESUMED_TWICE, "budget": budget, "estimator": "chapter"}
    cases.rule("build-after-compact-2", BUILD, second, **twice)
    cases.chapter_budgets(
        N_("the chapter's resume, max_tokens={max_tokens}"), RESUMED, (31, 19, 40)
    )
    # a record Lab 11.4 makes, resumed from here: a record no resume continues from fails this
    # lab, and per-lab credit charges Lab 11.4 when the reference's Lab 11.4 passes it
    first: dict[str, Json] = {
        "path": CHAPTER_PATH,
        "id": "compact-1",
        "timestamp": 100,
        "summary": COMPACT_1,
    }
    first |= {"first_kept": "u2", "tokens_before": 29, "budget": RESUMES_BUDGET}
    label = N_("compact-1 appended to both stores, then built and resumed from")
    cases.rule("compact-1-resumes", CREATE, label, **first, contract="resumes")
    label = N_("compact-2 after compact-1, appended to both stores, then built and resumed from")
    again: dict[str, Json] = SECOND_RECORD | {"budget": RESUMES_BUDGET}
    cases.rule("compact-2-resumes", CREATE, label, **again, contract="resumes")
    contract_5(cases)


def lab_optional(cases: Cases, rng: random.Random) -> None:
    histories = cases.histories(1, 5, 8)
    for index, path in enumerate(histories):
        cases.budgets(REPORT, rng, split_json(path), "half" if index % 3 == 2 else "length")
    label = N_("a long path: {count} interactions, {entries} entries")
    shown: dict[str, Json] = {"count": MANY, "entries": 3 * MANY}
    cases.add(REPORT, label, shown, interactions=MANY, available=3, contract="long")
    groups = split_json(histories[0])
    for bad in (-1, float("nan"), True, "22"):
        shown = {"key": "available", "value": repr(bad)}
        # no words to translate in the label
        cases.add(
            REPORT,
            "{key}={value}",
            shown,
            groups=groups,
            available=bad,
            estimator="length",
            names=["available"],
        )


LABS: dict[str, Callable[[Cases, random.Random], None]] = {
    "11.1": lab_1, "11.2": lab_2, "11.3": lab_3, "11.4": lab_4, "11.5": lab_5,
    "11.opt": lab_optional,
}  # fmt: skip


def cases(seed: int, labs: Sequence[str]) -> list[Case]:
    """Every case of ``labs`` (all labs when empty), the same ones for the same seed."""
    found: list[Case] = []
    for lab in labs or list(LABS):
        collected = Cases(lab, seed)
        LABS[lab](collected, random.Random(f"{seed}:{lab}"))
        found += collected.items
    return found


# ---------------------------------------------------------------- the contract's classes
# Cases appended to each lab's list: the types at the record's boundary, errors raised rather
# than swallowed, arguments left as they were and results not aliased, every estimator answer
# checked, long paths within one estimate per message and without recursion, and calls made in
# turn (state kept between calls shows). A case names its class with ``args[CONTRACT]``.

CONTRACT = "contract"
"""The key of a case's ``args`` naming its ``CONTRACTS`` handler."""

BAD_ANSWERS: dict[str, Json] = {"negative": -5, "nan": float("nan"), "text": "3", "huge": HUGE}
"""Estimators by name that answer one value for every message but the system prompt: a bad
one, or ``huge``, a good one whose sums overflow."""


def bad_for_messages(bad: Json) -> Estimate:
    """An estimator answering ``bad`` for any message but the prompt (``length_estimate``'s)."""

    def answer(message: dict[str, Any]) -> Any:
        return length_estimate(message) if message.get("role") == "system" else bad

    return answer


def number_kinds(*numbers: object) -> list[str]:
    """Each number's type name: ``29`` and ``29.0`` are equal as data, not as kinds."""
    return [type(number).__name__ for number in numbers]


def long_path(interactions: int, compact_at: Sequence[int] = ()) -> Entries:
    """A long valid history: per interaction a user message, a tool call and its result (call
    ids reused in every interaction), and before each interaction of ``compact_at`` a record
    ``c<n>`` keeping from the interaction before it."""
    path: Entries = []
    for n in range(interactions):
        if n in compact_at:
            summary: Json = {"goal": f"goal {n}"} | {key: [] for key in SUMMARY_KEYS}
            record = compaction_json(random.Random(n), n, path[-1]["id"], f"u{n - 1}", summary)
            path.append(record | {"id": f"c{n}"})
        call = {"type": "toolCall", "id": "read-1", "name": "read", "arguments": {"n": n}}
        result: dict[str, Json] = {"role": "toolResult", "toolCallId": "read-1"}
        result |= {
            "toolName": "read",
            "content": [{"type": "text", "text": f"line {n}"}],
            "isError": False,
        }
        user = {"role": "user", "content": f"question {n}"}
        path += [
            message_entry(f"u{n}", path[-1]["id"] if path else None, user),
            message_entry(f"a{n}", f"u{n}", {"role": "assistant", "content": [call]}),
            message_entry(f"r{n}", f"a{n}", result),
        ]
    return path


def one_long_interaction(calls: int) -> Entries:
    """One interaction of ``2 * calls + 2`` entries: a question, ``calls`` assistant messages
    each calling ``read-<n>`` and its result, and an answer; past where a recursive walk of one
    interaction fails."""
    user = {"role": "user", "content": "read every file"}
    path = [message_entry("u0", None, user)]
    for n in range(calls):
        call = {"type": "toolCall", "id": f"read-{n}", "name": "read", "arguments": {"n": n}}
        result: dict[str, Json] = {"role": "toolResult", "toolCallId": f"read-{n}"}
        result |= {"toolName": "read", "content": [{"type": "text", "text": f"file {n}"}]}
        result["isError"] = n % 7 == 3
        path += [
            message_entry(f"a{n}", path[-1]["id"], {"role": "assistant", "content": [call]}),
            message_entry(f"r{n}", f"a{n}", result),
        ]
    answer = {"role": "assistant", "content": [{"type": "text", "text": "all read"}]}
    return path + [message_entry("done", path[-1]["id"], answer)]


def ends(values: Sequence[Any]) -> list[Any]:
    """A long list's length and its first and last items (an answer of a few values)."""
    return [len(values), *values[:1], *values[-1:]]


def _kinds(impl: Implementation, function: str, args: dict[str, Any]) -> Json:
    """A record parsed or created: its data, its numbers' kinds, and the input left as it was."""
    if function == PARSE_ENTRY:  # the chapter's record with ``change``'s fields in place
        args = args | {"value": args["value"] | args.get("change", {})}
        if "goal" in args:
            args["value"]["summary"]["goal"] = args["goal"]
    before = copy.deepcopy(args)
    make = _parse_compaction_entry if function == PARSE_ENTRY else _create_compaction_entry
    answer = make(impl, args)
    record = answer["entry"]
    kinds = number_kinds(record["timestamp"], record["tokens_before"])
    return answer | {KINDS: kinds, INPUT_KEPT: args == before}


def _in_turn(impl: Implementation, function: str, args: dict[str, Any]) -> Json:
    """``function`` called on each of ``args["calls"]`` in turn, in one process (groups
    answered with their messages, so a second path with the same ids shows as itself)."""
    if function not in (SPLIT, GROUP):
        return [CALLS[function](impl, call) for call in args["calls"]]
    split = getattr(impl.groups, function.partition(".")[2])
    answers = []
    for call in args["calls"]:
        groups = split(path_entries(impl, call["path"]))
        answers.append([[e.message for e in getattr(g, "entries", g)] for g in groups])
    return answers


def _long(impl: Implementation, function: str, args: dict[str, Any]) -> Json:
    """``function`` on a long path: a few values of its answer, the caller's list afterwards,
    and the estimator calls beyond the bound."""
    if "one_interaction" in args:
        values = one_long_interaction(args["one_interaction"])
    else:
        values = long_path(args["interactions"], args.get("compact_at", ()))
    path = path_entries(impl, values)
    given = ids(path)
    answer: dict[str, Json] = {}
    if function in (SPLIT, GROUP):
        groups = getattr(impl.groups, function.partition(".")[2])(path)
        answer["groups"] = ends([getattr(g, "entry_ids", None) or ids(g) for g in groups])
    elif function == LATEST:
        answer["latest"] = impl.compaction.latest_compaction(path)
    elif function == REPORT:
        groups = impl.groups.group_interactions(path)
        rows = impl.context.budget_report(
            groups, estimate_tokens=length_estimate, available=args["available"]
        )
        answer["statuses"] = dict(Counter(row.status for row in rows))
        answer["last"] = [rows[-1].entry_ids, rows[-1].status] if rows else None
    elif function == RESUME:
        compaction, suffix = impl.compaction.resume_suffix(path)
        answer["compaction"] = getattr(compaction, "id", None)
        answer["suffix"] = ends(ids(suffix))
    elif function == CREATE:
        entry = impl.compaction.create_compaction_entry(
            path,
            id="compact-long",
            timestamp=1,
            summary={"goal": "long"} | {key: [] for key in SUMMARY_KEYS},
            first_kept_entry_id=args["first_kept"],
            tokens_before=len(path),
        )
        answer["parent_id"] = entry.parent_id
    else:
        asking = Asking(length_estimate, path)
        result = impl.context.build_context(path, **args["budget"], estimate_tokens=asking)
        answer["kept_entry_ids"] = ends(result.kept_entry_ids)
        answer |= {"reason": result.reason, "compaction_id": result.compaction_id}
        answer["tokens"] = {"messages": result.tokens.messages}
        bound = asking.beyond_bound(openers(args["budget"], result))
        answer[ASKED_TWICE] = ends(bound[ASKED_TWICE])
        answer[ASKED_ELSEWHERE] = bound[ASKED_ELSEWHERE]
    return answer | {PATH_KEPT: ids(path) == given}


def orphaned(path: Entries) -> Entries:
    """The chapter's path (as JSON) with r-test answering ``unknown-1``: a broken history."""
    path = copy.deepcopy(path)
    path[6]["message"]["toolCallId"] = "unknown-1"
    return path


def _orphan(impl: Implementation, function: str, args: dict[str, Any]) -> Json:
    """``function`` on the chapter's path with r-test answering ``unknown-1``: refused."""
    return CALLS[function](impl, args | {"path": orphaned(args["path"])})


def _unaliased(impl: Implementation, function: str, args: dict[str, Any]) -> Json:
    """What ``function`` answers, with the caller's list afterwards and whether the result is
    that very list."""
    if function == SELECT:
        groups = [path_entries(impl, group) for group in args["groups"]]
        before = [ids(group) for group in groups]
        chosen = impl.context.select_groups(groups, args["available"], length_estimate)
        return {"entries": ids(chosen.entries), GROUPS_KEPT: [ids(g) for g in groups] == before}
    path = path_entries(impl, args["path"])
    given = ids(path)
    compaction, suffix = impl.compaction.resume_suffix(path)
    return {
        "compaction": getattr(compaction, "id", None),
        "suffix": ids(suffix),
        RETURNS_THE_PATH: suffix is path,
        PATH_KEPT: ids(path) == given,
    }


def _stores(impl: Implementation, function: str, args: dict[str, Any]) -> Json:
    """``_resumes`` without the request: what each store holds. Lab 11.4's, which asks no
    later lab's code."""
    return _resumes(impl, function, args, build=False)


def _resumes(impl: Implementation, function: str, args: dict[str, Any], build: bool = True) -> Json:
    """A record ``create_compaction_entry`` made on a path, appended to both stores after the
    path and followed by a new turn: what each store holds (the JSONL one reopened), and
    (``build``) the request ``build_context`` and ``resume_suffix`` make of it. A record Lab
    11.1's parser takes but resume cannot continue from fails Lab 11.5's case, and per-lab credit
    charges the lab that made it."""
    path = path_entries(impl, args["path"])
    record = impl.compaction.create_compaction_entry(
        path,
        id=args["id"],
        timestamp=args["timestamp"],
        summary=args["summary"],
        first_kept_entry_id=args["first_kept"],
        tokens_before=args["tokens_before"],
    )
    question = message_entry("next-u", record.id, {"role": "user", "content": "go on"})
    answer = {"role": "assistant", "content": [{"type": "text", "text": "going on"}]}
    turn = [question, message_entry("next-a", "next-u", answer)]
    session = impl.session

    def request(entries: list[Any]) -> Json:
        if not build:
            return {}
        built = impl.context.build_context(
            entries, **args["budget"], estimate_tokens=length_estimate
        )
        compaction, suffix = impl.compaction.resume_suffix(entries)
        return {
            "kept_entry_ids": built.kept_entry_ids,
            "messages": built.messages,
            "compaction_id": built.compaction_id,
            "reason": built.reason,
            "resumed": [getattr(compaction, "id", None), ids(suffix)],
        }

    held = [*path, record, *map(session.parse_session_entry, turn)]
    found: dict[str, Json] = {"as_returned": request(held)} if build else {}  # no store
    with tempfile.TemporaryDirectory(prefix="probe-") as folder:
        log = Path(folder) / "session.jsonl"
        stores = {"memory": session.InMemorySessionStore(), "jsonl": session.JsonlSessionStore(log)}
        for store in stores.values():
            for entry in [*path, record, *turn]:
                store.append(entry)
        stores["jsonl"].close()
        stores["jsonl"] = session.JsonlSessionStore(log)  # reopened: read back from the file
        for name, store in stores.items():
            entries = store.entries()
            store.close()
            found[name] = {"entries": [session.entry_to_json(e) for e in entries]}
            found[name] |= request(entries)
    return found


CONTRACTS: dict[str, Callable[[Implementation, str, dict[str, Any]], Json]] = {
    "kinds": _kinds,
    "resumes": _resumes,
    "stores": _stores,
    "in_turn": _in_turn,
    "long": _long,
    "orphan": _orphan,
    "unaliased": _unaliased,
}


CONTRACT_RECORD = {"id": "压缩-1", "parentId": "助手-3", "firstKeptEntryId": "用户-2"}
"""A record's ids in another script: accepted as any id."""


def contract_1(cases: Cases) -> None:
    """The record's boundary: numbers kept as given (an int stays an int), a goal not stripped,
    ids in any script; a timestamp of True, "100", NaN or a huge integer refused."""
    record = {FIXTURE: "compact_1_json"}
    changes: list[dict[str, Json]] = [{"timestamp": 0}, {"tokensBefore": 0}, CONTRACT_RECORD]
    changes += [{"timestamp": bad} for bad in (True, "100", float("nan"), 10**400)]
    for change in changes:
        shown = {"change": _shown_json(change)}
        label = N_("compact-1 with {change}")
        cases.add(PARSE_ENTRY, label, shown, value=record, change=change, contract="kinds")
        names = ["compact-1", "timestamp"]  # asked of a refusal only: the valid ones pass
        cases.items[-1]["args"][NAMES] = names
    label = N_("compact-1 with a goal that has spaces around it")
    cases.add(PARSE_ENTRY, label, value=record, goal="  Fix resume  ", contract="kinds")


def renamed_ids(path: Entries, prefix: str = "编号-") -> Entries:
    """``path`` with every id (and each parent id) given a prefix in another script."""
    renamed = copy.deepcopy(path)
    for entry in renamed:
        entry["id"] = prefix + entry["id"]
        if entry.get("parentId"):
            entry["parentId"] = prefix + entry["parentId"]
    return renamed


def reworded(path: Entries) -> Entries:
    """``path`` with its newest user message asking something else: the same ids."""
    other = copy.deepcopy(path)
    newest = other[indexes(other, "user")[-1]]
    newest["message"]["content"] = "Another question entirely"
    return other


def in_turn(cases: Cases, function: str, label: str, first: Json, second: Json) -> None:
    """A case calling ``function`` on ``first``, ``second`` and ``first`` again, in turn."""
    calls = [first, second, first]
    cases.add(function, label, None, calls=calls, contract="in_turn")


LONG = 700
"""Interactions in a long path (three entries each): past where a recursive walk fails."""
LONG_CALLS = 520
"""Calls in one long interaction (two entries each, 1,042 in all): past where a recursive walk
of one interaction fails."""
MANY = 300
"""Interactions in a path where counts pass 256, past which CPython shares no int object (an
``is`` where ``==`` belongs shows); a shorter path than ``LONG``: every message is copied."""


def contract_2(cases: Cases) -> None:
    histories = cases.histories(2, 4, 2, shift=11)
    for path in histories:
        cases.add(SPLIT, N_("ids in another script"), path=renamed_ids(path))
    label = N_("a second path with the same ids, its newest question reworded, in turn")
    in_turn(cases, GROUP, label, {"path": histories[0]}, {"path": reworded(histories[0])})
    in_turn(cases, SPLIT, label, {"path": histories[1]}, {"path": reworded(histories[1])})
    shown: dict[str, Json] = {"count": LONG, "entries": 3 * LONG}
    for function in (SPLIT, GROUP):
        label = N_("a long path: {count} interactions, {entries} entries")
        cases.add(function, label, shown, interactions=LONG, contract="long")
    one: dict[str, Json] = {"entries": 2 * LONG_CALLS + 2}
    label = N_("one long interaction: {entries} entries")
    cases.add(SPLIT, label, one, one_interaction=LONG_CALLS, contract="long")


def contract_3(cases: Cases) -> None:
    budget = CHAPTER_BUDGET | {"max_tokens": 31}
    label = N_("the chapter's path with r-test answering unknown-1 (a broken history)")
    cases.add(
        BUILD, label, path=CHAPTER_PATH, budget=budget, estimator="chapter", contract="orphan"
    )
    path = cases.histories(2, 4, 1, shift=12)[0]
    groups = split_json(path)
    rng = random.Random(f"{cases.seed}:{cases.lab}:contract")
    for name in BAD_ANSWERS:
        shown: dict[str, Json] = {"answer": repr(BAD_ANSWERS[name])}
        label = N_("an estimator answering {answer} for each message (the prompt's is fine)")
        cases.add(BUILD, label, shown, path=path, budget=budget_json(rng, groups), estimator=name)
        if name != "huge":  # a sum past the largest float is build_context's to refuse
            cases.add(SELECT, label, shown, groups=groups, available=1000, estimator=name)
    overflowing = budget_json(rng, groups) | {"reserved_output": HUGE, "safety_margin": HUGE}
    overflowing["max_tokens"] = HUGE
    label = N_("a reserved output and a safety margin of 1e308 each: the total overflows")
    cases.add(BUILD, label, path=path, budget=overflowing, estimator="length")
    label = N_("the caller's list of groups afterwards")
    cases.add(
        SELECT, label, groups=groups, available=edge_budgets(rng, groups)[0], contract="unaliased"
    )
    budget = {"max_tokens": 1200, "system_prompt": "sys", "reserved_output": 4, "safety_margin": 2}
    label = N_("a long path: {count} interactions, {entries} entries")
    shown = {"count": LONG, "entries": 3 * LONG}
    cases.add(BUILD, label, shown, interactions=LONG, budget=budget, contract="long")
    one: dict[str, Json] = {"entries": 2 * LONG_CALLS + 2}
    label = N_("one long interaction: {entries} entries")
    cases.add(BUILD, label, one, one_interaction=LONG_CALLS, budget=budget, contract="long")
    roomy = budget | {"max_tokens": 10**6}
    label = N_("a long path: {count} interactions, {entries} entries, all within the budget")
    many: dict[str, Json] = {"count": MANY, "entries": 3 * MANY}
    cases.add(BUILD, label, many, interactions=MANY, budget=roomy, contract="long")
    label = N_("a second path with the same ids, its newest question reworded, in turn")
    first = {"path": path, "budget": budget_json(rng, groups), "estimator": "length"}
    in_turn(cases, BUILD, label, first, first | {"path": reworded(path)})


def contract_4(cases: Cases) -> None:
    chapter = {"path": CHAPTER_PATH, "id": "compact-1", "timestamp": 100, "summary": COMPACT_1}
    chapter |= {"summary_object": False, "first_kept": "u2", "tokens_before": 29}
    changes: list[dict[str, Json]] = [{"timestamp": 0}, {"tokens_before": 0}, {"id": "压缩-1"}]
    changes += [{"timestamp": bad} for bad in (True, "100", float("nan"))]
    for change in changes:
        shown: dict[str, Json] = {"change": _shown_json(change)}
        label = N_("the chapter's path, compact-1 with {change}")
        cases.add(CREATE, label, shown, **chapter | change, contract="kinds")
        cases.items[-1]["args"][NAMES] = ["compact-1", "timestamp"]  # asked of a refusal only
    label = N_("a long path: {count} interactions, {entries} entries")
    shown = {"count": LONG, "entries": 3 * LONG}
    cases.add(CREATE, label, shown, interactions=LONG, first_kept="u350", contract="long")


def contract_5(cases: Cases) -> None:
    label = N_("the caller's list afterwards, and a suffix that is not that list")
    for path in (CHAPTER_PATH, RESUMED):
        cases.add(RESUME, label, path=path, contract="unaliased")
    label = N_("a long path: {count} interactions, {entries} entries, compactions c50 and c100")
    shown: dict[str, Json] = {"count": LONG, "entries": 3 * LONG + 2}
    compact_at = [50, 100]
    for function in (LATEST, RESUME):
        cases.add(function, label, shown, interactions=LONG, compact_at=compact_at, contract="long")
    budget = {"max_tokens": 4000, "system_prompt": "sys", "reserved_output": 4, "safety_margin": 2}
    cases.add(
        BUILD,
        label,
        shown,
        interactions=LONG,
        compact_at=compact_at,
        budget=budget,
        contract="long",
    )
    path = cases.histories(2, 4, 1, shift=13)[0]
    starts = [group[0]["id"] for group in split_json(path)]
    summary = cases.summaries(1)[0]
    resumed = [
        path + [compaction_json(random.Random(0), 1, path[-1]["id"], start, summary)]
        for start in (starts[0], starts[-1])
    ]
    label = N_("a second path with the same ids, keeping from another interaction, in turn")
    in_turn(cases, RESUME, label, {"path": resumed[0]}, {"path": resumed[1]})
    after = [{SPLICE: "chapter_path_json"}, COMPACT_1_RECORD | {"firstKeptEntryId": "u4"}]
    after += [{SPLICE: "continuation_json"}]
    label = N_("the chapter's resume, compact-1 keeping u4, which comes after it")
    cases.add(RESUME, label, path=after, names=["compact-1", "u4"])
    for first_kept in ("calls", "a2", "r-read"):
        record: dict[str, Json] = {"type": "compaction", "id": "compact-1", "parentId": "a3"}
        record |= {
            "timestamp": 100,
            "summary": COMPACT_1,
            "firstKeptEntryId": first_kept,
            "tokensBefore": 29,
        }
        shown = {"entry": first_kept}
        label = N_("the chapter's path and compact-1 keeping {entry}, not a user message")
        kept_inside: list[Json] = [{SPLICE: "chapter_path_json"}, record]
        named = ["compact-1", first_kept]
        cases.add(RESUME, label, shown, path=kept_inside, names=named)
        budget = CHAPTER_BUDGET | {"max_tokens": 100}
        cases.add(
            BUILD, label, shown, path=kept_inside, budget=budget, estimator="chapter", names=named
        )
