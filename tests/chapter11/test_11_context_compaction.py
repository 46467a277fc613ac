"""Chapter 11's focused tests: 3/3 → 3/3 → 3/3 → 2/2 → 3/3 across Labs 11.1 to 11.5.

Each test names its lab (``lab_11_N`` in the name, ``@pytest.mark.lab("11.N")``) and reaches
the implementation only through the ``impl`` fixture, so the same tests grade the reference
and a learner's workspace.
"""

from __future__ import annotations

import copy
import json
import math
import re
from collections.abc import Callable
from typing import Any

import pytest

from course.locale import gettext as _
from course.sandboxed.diffs import explain_case

CHAPTER_IDS = ["u1", "a1", "u2", "a2", "u3", "calls", "r-test", "r-read", "a3"]
THIRD_GROUP = ["u3", "calls", "r-test", "r-read", "a3"]


# --------------------------------------------------------------------------- helpers


def chapter_json(impl: Any) -> list[dict[str, Any]]:
    return impl.fixtures.chapter_path_json()


def chapter_path(impl: Any) -> list[Any]:
    return [impl.session.parse_session_entry(value) for value in chapter_json(impl)]


def snapshot(impl: Any, path: list[Any]) -> list[dict[str, Any]]:
    return [impl.session.entry_to_json(entry) for entry in path]


def compact_1_json(impl: Any) -> dict[str, Any]:
    return {
        "type": "compaction",
        "id": "compact-1",
        "parentId": "a3",
        "timestamp": 100,
        "summary": copy.deepcopy(impl.fixtures.COMPACT_1_SUMMARY),
        "firstKeptEntryId": "u2",
        "tokensBefore": 29,
    }


def build(impl: Any, path: list[Any], max_tokens: float, estimator: Any = None) -> Any:
    options = impl.fixtures.CHAPTER_BUDGET.options() | {"max_tokens": max_tokens}
    return impl.context.build_context(
        path, **options, estimate_tokens=estimator or impl.fixtures.chapter_estimator
    )


def messages_by_id(impl: Any, ids: list[str]) -> list[dict[str, Any]]:
    by_id = {
        value["id"]: value["message"]
        for value in chapter_json(impl) + impl.fixtures.continuation_json()
    }
    return [by_id[i] for i in ids]


def compaction_record(impl: Any, raw: dict[str, Any]) -> Any:
    """A ``CompactionEntry`` built from the public types alone (no parser, no Lab 11.4 code).

    Lab 11.5's tests start from such a record so that they reach resume code first.
    """
    summary = copy.deepcopy(raw["summary"])
    return impl.session.CompactionEntry(
        id=raw["id"],
        parent_id=raw["parentId"],
        timestamp=raw["timestamp"],
        summary=impl.session.CompactionSummary(
            goal=summary["goal"],
            constraints=summary["constraints"],
            completed=summary["completed"],
            decisions=summary["decisions"],
            changed_files=summary["changedFiles"],
            unresolved=summary["unresolved"],
            next=summary["next"],
        ),
        first_kept_entry_id=raw["firstKeptEntryId"],
        tokens_before=raw["tokensBefore"],
    )


def resumed_path(impl: Any, first_kept: str = "u2") -> list[Any]:
    """u1 … a3 → compact-1 (keeps u2) → u4 → a4."""
    continuation = [impl.session.parse_session_entry(v) for v in impl.fixtures.continuation_json()]
    record = compaction_record(impl, compact_1_json(impl) | {"firstKeptEntryId": first_kept})
    return chapter_path(impl) + [record] + continuation


def summary_text(result: Any) -> str:
    holds(
        _("the first message after a compaction"),
        bool(result.messages) and result.messages[0].get("role") == "user",
        (
            _("the summary must open the messages as a user message, got {message}").format(
                message=shown(result.messages[0])
            )
            if result.messages
            else _("the summary must open the messages as a user message, got no messages at all")
        ),
    )
    content = result.messages[0]["content"]
    holds(
        _("the summary message"),
        isinstance(content, str),
        _("content must be a string, got {value}").format(value=shown(content)),
    )
    return str(content)


def shown(value: object, limit: int = 0) -> str:
    """A value as a learner reads it: text stays text (never ``\\u`` escapes); cut at ``limit``."""
    text = repr(value)
    if limit and len(text) > limit:
        return _("{start}… ({kind}, {length} characters)").format(
            start=text[: limit - 1], kind=type(value).__name__, length=len(text)
        )
    return text


def returned(value: object) -> str:
    """What a call that should have refused returned, named by ids: a session entry as its type
    and id, groups by their entry ids, a build by its kept ids; anything else ``shown``."""
    if isinstance(value, list) and value and all(hasattr(v, "entry_ids") for v in value):
        return shown([v.entry_ids for v in value], 160)
    if isinstance(value, list):
        return "[" + ", ".join(returned(v) for v in value[:12]) + (", …]" if value[12:] else "]")
    if hasattr(value, "kept_entry_ids"):
        return f"{type(value).__name__} kept_entry_ids={shown(value.kept_entry_ids, 160)}"
    entry_id, kind = getattr(value, "id", None), getattr(value, "type", None)
    if isinstance(entry_id, str) and isinstance(kind, str):
        return f"{type(value).__name__} {entry_id}"
    return shown(value, 160)


def same(case: str, got: object, expected: object) -> None:
    """Fail naming ``case`` (and the field in it) unless ``got == expected``; both shown whole."""
    if got != expected:
        pytest.fail(explain_case(case, got, expected), pytrace=False)


def of(case: str, field: str) -> str:
    """``case: field``, a field of a case, as the edition writes it."""
    return _("{case}: {detail}").format(case=case, detail=field)


def holds(case: str, condition: bool, detail: str) -> None:
    """Fail with ``case: detail`` unless ``condition``."""
    if not condition:
        pytest.fail(_("{case}: {detail}").format(case=case, detail=detail), pytrace=False)


def same_tokens(case: str, tokens: Any, expected: dict[str, float]) -> None:
    """Compare the named fields of a ``ContextTokens``; the message names each that differs."""
    wrong = [
        "  "
        + _("tokens.{name}: got {got}, expected {expected}").format(
            name=name,
            got=shown(getattr(tokens, name, _("(missing)"))),
            expected=repr(value),
        )
        for name, value in expected.items()
        if getattr(tokens, name, None) != value
    ]
    if wrong:
        pytest.fail(_("{case}:").format(case=case) + "\n" + "\n".join(wrong), pytrace=False)


def should_name(name: str, error: str) -> str:
    """The detail of a refusal that does not name what it should."""
    return _("refused, but the error should name {name}; it says: {error}").format(
        name=name, error=error
    )


def refused(case: str, call: Callable[[], object], naming: str | None = None) -> str:
    """Run ``call``; fail with ``case`` unless it raises a ValueError (one naming ``naming``)."""
    try:
        got = call()
    except ValueError as error:
        if naming is not None and not re.search(naming, str(error)):
            either = _(" or ").join(naming.strip("()").split("|"))  # (a|b): either may be named
            pytest.fail(
                _("{case}: refused, but the error should name {naming}; it says: {error}").format(
                    case=case, naming=either, error=error
                ),
                pytrace=False,
            )
        return str(error)
    except NotImplementedError:
        raise  # a lab's stub: the run reports the test as pending
    except Exception as error:
        pytest.fail(
            _("{case}: refused with {kind}, expected a ValueError: {error}").format(
                case=case, kind=type(error).__name__, error=error
            ),
            pytrace=False,
        )
    pytest.fail(
        _("{case}: wrongly accepted (expected a ValueError); it returned {value}").format(
            case=case, value=returned(got)
        ),
        pytrace=False,
    )


def accepted(case: str, call: Callable[[], Any]) -> Any:
    """Run ``call`` on valid input and return its result; fail with ``case`` if it refuses."""
    try:
        return call()
    except ValueError as error:
        pytest.fail(
            _("{case}: wrongly refused (the input is valid); the error says: {error}").format(
                case=case, error=error
            ),
            pytrace=False,
        )


def completes(case: str, call: Callable[[], Any]) -> Any:
    """Run ``call`` on valid input; fail with ``case`` if it refuses or runs out of stack."""
    try:
        return accepted(case, call)
    except RecursionError:
        pass  # failed below, outside the handler: the message is not chained to the error
    pytest.fail(
        _(
            "{case}: RecursionError: the path is walked by a call per entry; a loop has no "
            "such limit"
        ).format(case=case),
        pytrace=False,
    )


class Counting:
    """An estimator that counts its calls, then answers as ``estimate``."""

    def __init__(self, estimate: Callable[[dict[str, Any]], Any]) -> None:
        self.estimate = estimate
        self.calls = 0

    def __call__(self, message: dict[str, Any]) -> Any:
        self.calls += 1
        return self.estimate(message)


def one_per_message(case: str, counting: Counting, messages: int) -> None:
    """Fail with ``case`` when the estimator was called more than ``messages`` times."""
    holds(
        case,
        counting.calls <= messages,
        _(
            "the estimator was called {calls} times for {messages} messages (each at most once)"
        ).format(calls=counting.calls, messages=messages),
    )


def long_path_json(interactions: int, compact_at: tuple[int, ...] = ()) -> list[dict[str, Any]]:
    """A long valid history: per interaction a user message, a tool call and its result (the
    call ids reused in every interaction), and before each interaction of ``compact_at`` a
    compaction record ``c<n>`` keeping from the interaction before it."""
    path: list[dict[str, Any]] = []
    for n in range(interactions):
        if n in compact_at:
            path.append(
                {
                    "type": "compaction",
                    "id": f"c{n}",
                    "parentId": path[-1]["id"],
                    "timestamp": n,
                    "summary": {"goal": f"goal {n}"} | {key: [] for key in LIST_KEYS},
                    "firstKeptEntryId": f"u{n - 1}",
                    "tokensBefore": n,
                }
            )
        call = {"type": "toolCall", "id": "read-1", "name": "read", "arguments": {"n": n}}
        result = {"role": "toolResult", "toolCallId": "read-1", "toolName": "read"}
        result |= {"content": [{"type": "text", "text": f"line {n}"}], "isError": False}
        path += [
            message_json(f"u{n}", path[-1]["id"] if path else "", "user", f"question {n}"),
            message_json(f"a{n}", f"u{n}", "assistant", [call]),
            {**message_json(f"r{n}", f"a{n}", "toolResult", None), "message": result},
        ]
    path[0]["parentId"] = None
    return path


LIST_KEYS = ("constraints", "completed", "decisions", "changedFiles", "unresolved", "next")


def entries_of(impl: Any, values: list[dict[str, Any]]) -> list[Any]:
    """Entries from JSON: compactions built from the public types (no Lab 11.1 or 11.4 code)."""
    return [
        compaction_record(impl, v)
        if v["type"] == "compaction"
        else impl.session.parse_session_entry(v)
        for v in values
    ]


# --------------------------------------------------------------------------- Lab 11.1


@pytest.mark.lab("11.1")
def test_lab_11_1_parses_a_compaction_entry_strictly(impl: Any) -> None:
    raw = compact_1_json(impl)
    entry = impl.session.parse_session_entry(raw)
    case = _("parsing compact-1")
    same(of(case, "id"), entry.id, "compact-1")
    same(of(case, "parent_id"), entry.parent_id, "a3")
    same(of(case, "first_kept_entry_id"), entry.first_kept_entry_id, "u2")
    same(of(case, "tokens_before"), entry.tokens_before, 29)
    same(of(case, "summary.goal"), entry.summary.goal, raw["summary"]["goal"])
    same(of(case, "summary.changed_files"), entry.summary.changed_files, ["course/session.py"])
    same(
        _("entry_to_json(parse_session_entry(compact-1)), the parser inverted"),
        impl.session.entry_to_json(entry),
        raw,
    )

    raw["summary"]["completed"].append(_("added after parsing"))
    raw["summary"]["goal"] = _("changed")
    same(
        _("summary.completed after the input's list was changed (it must not be shared)"),
        entry.summary.completed,
        impl.fixtures.COMPACT_1_SUMMARY["completed"],
    )
    entry.summary.decisions.append("changed through the result")
    same(
        _("the input's summary.decisions after the parsed list was changed (not shared)"),
        raw["summary"]["decisions"],
        impl.fixtures.COMPACT_1_SUMMARY["decisions"],
    )

    def broken(change: Any) -> dict[str, Any]:
        value = compact_1_json(impl)
        change(value)
        return value

    def legacy_files(v: dict[str, Any]) -> None:
        v["summary"]["files"] = v["summary"].pop("changedFiles")

    # One fault an input, so what the error names is sure; the chapter's own example replaces
    # changedFiles with files (two faults: either may be named, the contract orders none).
    cases = {
        _("summary key 'files' instead of 'changedFiles'"): (
            broken(legacy_files),
            ("files", "changedFiles"),
        ),
        _("an extra summary key 'files' beside 'changedFiles'"): (
            broken(lambda v: v["summary"].update(files=["context.ts"])),
            "files",
        ),
        _("empty goal"): (broken(lambda v: v["summary"].update(goal="")), "goal"),
        _("a whitespace-only goal"): (
            broken(lambda v: v["summary"].update(goal=" \t\n ")),
            "goal",
        ),
        _("empty parentId"): (broken(lambda v: v.update(parentId="")), "parentId"),
        _("empty firstKeptEntryId"): (
            broken(lambda v: v.update(firstKeptEntryId="")),
            "firstKeptEntryId",
        ),
        "tokensBefore -1": (broken(lambda v: v.update(tokensBefore=-1)), "tokensBefore"),
        "tokensBefore NaN": (broken(lambda v: v.update(tokensBefore=math.nan)), "tokensBefore"),
        "tokensBefore True": (broken(lambda v: v.update(tokensBefore=True)), "tokensBefore"),
        _("a number in summary.next"): (
            broken(lambda v: v["summary"].update(next=["ok", 3])),
            "next",
        ),
        _("summary without constraints"): (
            broken(lambda v: v["summary"].pop("constraints")),
            "constraints",
        ),
        _("summary.constraints given as a string (a list is never made from it)"): (
            broken(lambda v: v["summary"].update(constraints="History is append-only")),
            "constraints",
        ),
        "tokensBefore Infinity": (
            broken(lambda v: v.update(tokensBefore=math.inf)),
            "tokensBefore",
        ),
        _("an unknown key 'note' in the record"): (broken(lambda v: v.update(note="x")), "note"),
        "timestamp -5": (broken(lambda v: v.update(timestamp=-5)), "timestamp"),
        _("a null parentId (a compaction always has a parent)"): (
            broken(lambda v: v.update(parentId=None)),
            "parentId",
        ),
    }
    for case, (value, fields) in cases.items():
        error = refused(case, lambda v=value: impl.session.parse_session_entry(v), "compact-1")
        either = (fields,) if isinstance(fields, str) else fields
        named = any(re.search(rf"\b{field}\b", error) for field in either)
        holds(case, named, should_name(" / ".join(either), error))

    # the record's boundary: numbers and strings kept as given, ids in any script
    given = compact_1_json(impl) | {"timestamp": 0, "id": "压缩-1", "parentId": "助手-3"}
    given |= {"firstKeptEntryId": "用户-2"}
    given["summary"]["goal"] = "  Fix resume  "
    before = copy.deepcopy(given)
    case = _(
        "a record with timestamp 0, ids 压缩-1 / 助手-3 / 用户-2 and a goal with spaces around it"
    )
    entry = accepted(case, lambda: impl.session.parse_session_entry(given))
    same(
        of(case, "(timestamp, tokens_before) and their types"),
        [(v, type(v).__name__) for v in (entry.timestamp, entry.tokens_before)],
        [(0, "int"), (29, "int")],
    )
    same(
        of(case, "(id, parent_id, first_kept_entry_id)"),
        (entry.id, entry.parent_id, entry.first_kept_entry_id),
        ("压缩-1", "助手-3", "用户-2"),
    )
    same(of(case, "summary.goal (kept as given)"), entry.summary.goal, "  Fix resume  ")
    same(_("the object given to the parser, after parsing (left as it was)"), given, before)
    for bad in (True, "100", math.nan, 10**400):
        case = _("timestamp {value}").format(value=shown(bad, 40))
        error = refused(
            case,
            lambda b=bad: impl.session.parse_session_entry(compact_1_json(impl) | {"timestamp": b}),
        )
        holds(case, "timestamp" in error, should_name("timestamp", error))


@pytest.mark.lab("11.1")
def test_lab_11_1_memory_store_snapshots_a_compaction(impl: Any) -> None:
    store = impl.session.InMemorySessionStore()
    for value in chapter_json(impl):
        store.append(value)
    raw = compact_1_json(impl)
    store.append(raw)
    raw["summary"]["next"].append(_("mutated after append"))

    entries = store.entries()
    same(
        _("the memory store's ids after appending compact-1"),
        [e.id for e in entries],
        CHAPTER_IDS + ["compact-1"],
    )
    stored = entries[-1]
    same(
        _("compact-1 read back after its input was changed (the store keeps its own copy)"),
        impl.session.entry_to_json(stored),
        compact_1_json(impl),
    )
    stored.summary.next.append("mutated through entries()")
    same(
        _("compact-1 read back after a returned entry was changed (entries() returns copies)"),
        impl.session.entry_to_json(store.entries()[-1]),
        compact_1_json(impl),
    )
    refused(
        _("appending compact-1 a second time"),
        lambda: store.append(compact_1_json(impl)),
        "compact-1",
    )
    orphan = compact_1_json(impl) | {"id": "compact-x", "parentId": "missing"}
    refused(
        _("appending compact-x whose parentId 'missing' is not in the store"),
        lambda: store.append(orphan),
        "missing",
    )
    same(_("the number of entries after two refused appends"), len(store.entries()), 10)


@pytest.mark.lab("11.1")
def test_lab_11_1_jsonl_store_reopens_a_compaction(impl: Any, tmp_path: Any) -> None:
    log = tmp_path / "session.jsonl"
    store = impl.session.JsonlSessionStore(log)
    for value in chapter_json(impl) + [compact_1_json(impl)]:
        store.append(value)
    store.close()

    text = log.read_text(encoding="utf-8")
    lines = text.split("\n")
    holds(
        _("the JSONL log"), text.endswith("\n"), _("every committed line must end with a newline")
    )
    same(_("the number of lines in the JSONL log"), len(lines) - 1, 10)
    same(_("the log's last line, read as JSON"), json.loads(lines[-2]), compact_1_json(impl))

    with impl.session.JsonlSessionStore(log) as reopened:
        entries = reopened.entries()
        same(_("the reopened log's ids"), [e.id for e in entries], CHAPTER_IDS + ["compact-1"])
        same(
            _("the reopened log's entries as JSON"),
            snapshot(impl, entries),
            chapter_json(impl) + [compact_1_json(impl)],
        )
        reopened.append(
            {
                "type": "message",
                "id": "u4",
                "parentId": "compact-1",
                "timestamp": 101,
                "message": {"role": "user", "content": "next"},
            }
        )
    with impl.session.JsonlSessionStore(log) as again:
        same(
            _("the last two ids after appending u4 to the reopened log"),
            [e.id for e in again.entries()][-2:],
            ["compact-1", "u4"],
        )


# --------------------------------------------------------------------------- Lab 11.2


def message_json(entry_id: str, parent: str, role: str, content: Any) -> dict[str, Any]:
    return {
        "type": "message",
        "id": entry_id,
        "parentId": parent,
        "timestamp": 50,
        "message": {"role": role, "content": content},
    }


@pytest.mark.lab("11.2")
def test_lab_11_2_groups_the_chapter_path_into_three_interactions(impl: Any) -> None:
    path = chapter_path(impl)
    before = snapshot(impl, path)
    groups = impl.groups.group_interactions(path)

    # nothing is kept between calls: a second path with the same ids is its own
    other = chapter_json(impl)
    other[0]["message"]["content"] = "另一个问题"
    later = impl.groups.group_interactions(entries_of(impl, other))
    same(
        _(
            "group_interactions of a second path with the same ids, u1 asking something else, "
            "called after the chapter path's: u1's message (nothing is kept between calls)"
        ),
        later[0].entries[0].message,
        other[0]["message"],
    )

    same(
        _("the chapter path's groups (entry_ids)"),
        [g.entry_ids for g in groups],
        [["u1", "a1"], ["u2", "a2"], THIRD_GROUP],
    )
    same(_("the third group's entries' ids"), [e.id for e in groups[2].entries], THIRD_GROUP)

    calls = groups[2].entries[1]
    holds(
        _("the group's entry 'calls'"),
        calls is not path[5],
        _("groups must hold copies, not the path's entries"),
    )
    calls.message["content"][1]["arguments"]["path"] = "changed.ts"
    same(
        _("the path after a group's message was changed (groups hold copies)"),
        snapshot(impl, path),
        before,
    )

    metadata = impl.session.parse_session_entry(
        {
            "type": "metadata",
            "id": "m1",
            "parentId": "u1",
            "timestamp": 1.5,
            "key": "model",
            "value": {"name": "test"},
        }
    )
    with_metadata = path[:1] + [metadata] + path[1:]
    same(
        _("groups of the chapter path with metadata m1 after u1 (skipped)"),
        [g.entry_ids for g in impl.groups.group_interactions(with_metadata)],
        [["u1", "a1"], ["u2", "a2"], THIRD_GROUP],
    )
    same(
        _("the caller's path list after grouping it (metadata m1 stays on it)"),
        [entry.id for entry in with_metadata],
        CHAPTER_IDS[:1] + ["m1"] + CHAPTER_IDS[1:],
    )
    impl.groups.split_interactions(with_metadata)
    same(
        _("the caller's path list after split_interactions (metadata m1 stays on it)"),
        [entry.id for entry in with_metadata],
        CHAPTER_IDS[:1] + ["m1"] + CHAPTER_IDS[1:],
    )

    failed_tool = chapter_json(impl)
    failed_tool[6]["message"]["isError"] = True
    case = _("the chapter path with r-test an error result (isError: true)")
    groups = accepted(
        case,
        lambda: impl.groups.group_interactions(
            [impl.session.parse_session_entry(v) for v in failed_tool]
        ),
    )
    same(
        _("{case}: groups (an error result stays in its group)").format(case=case),
        [g.entry_ids for g in groups],
        [["u1", "a1"], ["u2", "a2"], THIRD_GROUP],
    )
    same(
        _("{case}: the message of r-test in the third group").format(case=case),
        groups[2].entries[2].message,
        failed_tool[6]["message"],
    )
    same(_("groups of an empty path"), impl.groups.group_interactions([]), [])

    # an assistant message without tool calls does not end an interaction: only a user does
    follow_up = message_json("a1b", "a1", "assistant", [{"type": "text", "text": "再补充一句"}])
    two_answers = path[:2] + [impl.session.parse_session_entry(follow_up)]
    same(
        _("groups of [u1, a1, a1b] (a1b: a second assistant message without tool calls)"),
        [g.entry_ids for g in impl.groups.group_interactions(two_answers)],
        [["u1", "a1", "a1b"]],
    )

    # ids in any script; a long path; one call after another on paths sharing ids
    renamed = chapter_json(impl)
    names = {"u1": "用户-1", "a1": "助手-1"}
    for value in renamed:
        value["id"] = names.get(value["id"], value["id"])
        value["parentId"] = names.get(value["parentId"], value["parentId"])
    case = _("groups of the chapter path with u1 and a1 renamed 用户-1 and 助手-1")
    groups = accepted(case, lambda: impl.groups.group_interactions(entries_of(impl, renamed)))
    same(case, [g.entry_ids for g in groups][:1], [["用户-1", "助手-1"]])

    long = entries_of(impl, long_path_json(700))
    ids = [entry.id for entry in long]
    case = _("split_interactions of a path of 2,100 entries (700 interactions)")
    split = completes(case, lambda: impl.groups.split_interactions(long))
    same(of(case, "how many interactions"), len(split), 700)
    same(_("{case}: the caller's list afterwards").format(case=case), [e.id for e in long], ids)
    case = _("group_interactions of a path of 2,100 entries (700 interactions)")
    same(
        of(case, "how many groups"),
        len(completes(case, lambda: impl.groups.group_interactions(long))),
        700,
    )


@pytest.mark.lab("11.2")
def test_lab_11_2_pairs_results_by_call_id_not_position(impl: Any) -> None:
    values = chapter_json(impl)
    by_id = {v["id"]: v for v in values}
    # r-test moved in front of calls: still one interaction, still in path order.
    moved = [by_id[i] for i in ["u1", "a1", "u2", "a2", "u3", "r-test", "calls", "r-read", "a3"]]
    path = [impl.session.parse_session_entry(v) for v in moved]
    groups = impl.groups.group_interactions(path)
    same(
        _("groups with r-test moved in front of calls"),
        [g.entry_ids for g in groups],
        [["u1", "a1"], ["u2", "a2"], ["u3", "r-test", "calls", "r-read", "a3"]],
    )
    # results in declaration order are just as valid as the fixture's reversed order
    ordered = [by_id[i] for i in ["u3", "calls", "r-read", "r-test", "a3"]]
    groups = impl.groups.group_interactions([impl.session.parse_session_entry(v) for v in ordered])
    same(
        _("groups of [u3, calls, r-read, r-test, a3] (results in declaration order)"),
        [g.entry_ids for g in groups],
        [["u3", "calls", "r-read", "r-test", "a3"]],
    )
    # call ids are unique within an interaction only: a later one may use read-1 again
    later = [
        message_json("u4", "a3", "user", "再读一次"),
        message_json(
            "c4",
            "u4",
            "assistant",
            [{"type": "toolCall", "id": "read-1", "name": "read", "arguments": {"path": "a"}}],
        ),
        message_json("r4", "c4", "toolResult", [{"type": "text", "text": "loaded again"}]),
        message_json("a4", "r4", "assistant", [{"type": "text", "text": "一致"}]),
    ]
    later[2]["message"] |= {"toolCallId": "read-1", "toolName": "read", "isError": False}
    case = _("the chapter path, then u4 → c4 → r4 → a4 reusing call id read-1")
    reused = [impl.session.parse_session_entry(v) for v in values + later]
    groups = accepted(case, lambda: impl.groups.group_interactions(reused))
    same(
        _("{case}: groups").format(case=case),
        [g.entry_ids for g in groups],
        [["u1", "a1"], ["u2", "a2"], THIRD_GROUP, ["u4", "c4", "r4", "a4"]],
    )


@pytest.mark.lab("11.2")
def test_lab_11_2_rejects_broken_tool_facts(impl: Any) -> None:
    def path_with(change: Any, drop: tuple[str, ...] = ()) -> list[Any]:
        values = [v for v in chapter_json(impl) if v["id"] not in drop]
        change({v["id"]: v for v in values})
        return [impl.session.parse_session_entry(v) for v in values]

    def unchanged(by_id: dict[str, Any]) -> None:
        pass

    def unknown_call(by_id: dict[str, Any]) -> None:
        by_id["r-test"]["message"]["toolCallId"] = "unknown-1"

    def duplicate_result(by_id: dict[str, Any]) -> None:
        by_id["r-read"]["message"]["toolCallId"] = "test-1"

    def duplicate_call(by_id: dict[str, Any]) -> None:
        by_id["calls"]["message"]["content"][2]["id"] = "read-1"

    def result_in_next_group(by_id: dict[str, Any]) -> None:
        by_id["a3"]["message"] = {"role": "user", "content": "interrupt"}

    cases = {
        # the chapter's example: unknown-1 answers no call, and test-1 is left unanswered
        _("a result for an unknown call"): (path_with(unknown_call), "(unknown-1|test-1)"),
        _("a call without its result"): (path_with(unchanged, drop=("r-read",)), "read-1"),
        _("two results for one call"): (path_with(duplicate_result), "(test-1|read-1|r-read)"),
        _("one call id declared twice"): (path_with(duplicate_call), "(read-1|test-1|calls)"),
    }
    interrupted = path_with(unchanged)
    interrupted.insert(
        6,
        impl.session.parse_session_entry(message_json("u-mid", "calls", "user", "interrupt")),
    )
    cases[_("a user message between calls and their results")] = (
        interrupted,
        "(test-1|read-1|r-test|r-read|calls)",
    )
    with_system = path_with(unchanged)
    with_system.insert(
        1, impl.session.parse_session_entry(message_json("s1", "u1", "system", "简短"))
    )
    cases[_("a system message s1 in the path (the prompt is passed as system_prompt)")] = (
        with_system,
        "s1",
    )
    orphan = impl.session.parse_session_entry(message_json("a0", "u1", "assistant", []))
    cases[_("an assistant message a0 before any user message")] = (
        [orphan] + path_with(unchanged),
        "a0",
    )
    for case, (path, named) in cases.items():
        refused(case, lambda p=path: impl.groups.group_interactions(p), named)


# --------------------------------------------------------------------------- Lab 11.3


@pytest.mark.lab("11.3")
def test_lab_11_3_deducts_fixed_costs_before_choosing_groups(impl: Any, monkeypatch: Any) -> None:
    path = chapter_path(impl)
    # nothing is kept between calls: a second path with the same ids is its own
    other = chapter_json(impl)
    other[7]["message"]["content"][0]["text"] = "另一份文件"
    build(impl, path, 31)
    later = build(impl, entries_of(impl, other), 31)
    same(
        _(
            "build_context of a second path with the same ids, r-read saying something else, "
            "called after the chapter path's: the message of r-read"
        ),
        later.messages[later.kept_entry_ids.index("r-read")],
        other[7]["message"],
    )

    before = snapshot(impl, path)
    result = build(impl, path, 31)
    kept = ["u2", "a2"] + THIRD_GROUP
    case = _("build_context with max_tokens=31")
    same(of(case, "system_prompt"), result.system_prompt, "sys")
    same(of(case, "kept_entry_ids"), result.kept_entry_ids, kept)
    same(of(case, "reason"), result.reason, "trimmed")
    same_tokens(
        case,
        result.tokens,
        {
            "max_tokens": 31,
            "system": 3,
            "messages": 22,
            "reserved_output": 4,
            "safety_margin": 2,
            "available_for_messages": 22,
            "total": 31,
        },
    )
    same(of(case, "messages"), result.messages, messages_by_id(impl, kept))
    result.messages[3]["content"][1]["arguments"]["path"] = "changed.ts"
    same(
        _("{case}: the path after a returned message was changed (must be copies)").format(
            case=case
        ),
        snapshot(impl, path),
        before,
    )

    everything = build(impl, path, 40)
    case = _("build_context with max_tokens=40")
    same(
        of(case, "(kept_entry_ids, reason)"),
        (everything.kept_entry_ids, everything.reason),
        (CHAPTER_IDS, "within_budget"),
    )
    same_tokens(case, everything.tokens, {"messages": 29, "total": 38})

    starved = build(impl, path, 5)
    case = _("build_context with max_tokens=5 (fixed costs never make the budget negative)")
    same_tokens(case, starved.tokens, {"available_for_messages": 0})
    same(of(case, "kept_entry_ids"), starved.kept_entry_ids, THIRD_GROUP)

    for bad in (
        {"max_tokens": math.nan},
        {"max_tokens": -1},
        {"max_tokens": True},
        {"reserved_output": math.inf},
        {"safety_margin": -0.5},
        {"system_prompt": 7},
    ):
        options = impl.fixtures.CHAPTER_BUDGET.options() | bad
        refused(
            _("build_context with {options}").format(options=bad),
            lambda o=options: impl.context.build_context(
                path, estimate_tokens=impl.fixtures.chapter_estimator, **o
            ),
            next(iter(bad)),
        )
    for answer in (math.nan, -1, True, "3"):
        refused(
            _("an estimator answering {answer}").format(answer=repr(answer)),
            lambda a=answer: build(impl, path, 31, estimator=lambda message: a),
        )

    def system_costs_5(message: dict[str, Any]) -> int:
        cost = 5 if message.get("role") == "system" else impl.fixtures.chapter_estimator(message)
        return int(cost)

    options = impl.fixtures.CHAPTER_BUDGET.options() | {"system_prompt": ""}
    empty = impl.context.build_context(path, **options, estimate_tokens=system_costs_5)
    case = _(
        "build_context with system_prompt '' and an estimator that prices any system message "
        "at 5 (an empty prompt is estimated too)"
    )
    same_tokens(case, empty.tokens, {"system": 5, "available_for_messages": 20})

    # What opens the messages (Lab 11.5's summary) comes from the given open_context; its
    # cost comes off the budget first. Here a stand-in opening costs 5 of the 22 tokens.
    opening = {"role": "user", "content": "摘要：先前的消息"}
    monkeypatch.setattr(
        impl.context,
        "open_context",
        lambda entries, estimate_tokens: impl.context.Opening(
            [copy.deepcopy(opening)], 5, list(entries), "compact-9"
        ),
    )
    opened = build(impl, path, 31)
    case = _("build_context after an opening message that costs 5 (22 - 5 = 17 left for groups)")
    same(of(case, "kept_entry_ids"), opened.kept_entry_ids, THIRD_GROUP)
    same(_("{case}: messages[0], the opening").format(case=case), opened.messages[:1], [opening])
    same(
        _("{case}: messages after the opening").format(case=case),
        opened.messages[1:],
        messages_by_id(impl, THIRD_GROUP),
    )
    same_tokens(case, opened.tokens, {"messages": 20, "available_for_messages": 22, "total": 29})
    same(of(case, "compaction_id"), opened.compaction_id, "compact-9")


@pytest.mark.lab("11.3")
def test_lab_11_3_keeps_an_overflowing_newest_group_whole(impl: Any) -> None:
    result = build(impl, chapter_path(impl), 19)
    case = _("build_context with max_tokens=19 (10 left for a newest group of 15)")
    same_tokens(case, result.tokens, {"available_for_messages": 10})
    same(
        _("{case}: kept_entry_ids (the newest group comes back whole)").format(case=case),
        result.kept_entry_ids,
        THIRD_GROUP,
    )
    same(
        _("{case}: the messages' roles").format(case=case),
        [m["role"] for m in result.messages],
        ["user", "assistant", "toolResult", "toolResult", "assistant"],
    )
    same(of(case, "reason"), result.reason, "single_group_overflow")
    same_tokens(case, result.tokens, {"messages": 15, "total": 24})


@pytest.mark.lab("11.3")
def test_lab_11_3_trims_only_at_group_boundaries(impl: Any) -> None:
    path = chapter_path(impl)
    expected = {
        15: (THIRD_GROUP, "trimmed"),
        21: (THIRD_GROUP, "trimmed"),
        22: (["u2", "a2"] + THIRD_GROUP, "trimmed"),
        28: (["u2", "a2"] + THIRD_GROUP, "trimmed"),
        29: (CHAPTER_IDS, "within_budget"),
    }
    for available, (kept, reason) in expected.items():
        result = build(impl, path, available + 9)
        same(
            _(
                "with {available} tokens for messages (max_tokens={max_tokens}): "
                "(kept_entry_ids, reason)"
            ).format(available=available, max_tokens=available + 9),
            (result.kept_entry_ids, result.reason),
            (kept, reason),
        )
    allowed = [CHAPTER_IDS, CHAPTER_IDS[2:], THIRD_GROUP]
    for max_tokens in range(0, 45):
        result = build(impl, path, max_tokens)
        case = _("build_context with max_tokens={max_tokens}").format(max_tokens=max_tokens)
        holds(
            case,
            result.kept_entry_ids in allowed,
            _(
                "kept_entry_ids {kept} cut inside a group; whole groups from the newest are "
                "one of {allowed}"
            ).format(kept=shown(result.kept_entry_ids), allowed=shown(allowed)),
        )
        holds(
            case,
            result.tokens.total <= max_tokens or result.reason == "single_group_overflow",
            _("tokens.total is {total} > max_tokens with reason {reason}").format(
                total=shown(result.tokens.total), reason=shown(result.reason)
            ),
        )

    older = messages_by_id(impl, ["u1", "a1"])

    def cheap_first(message: dict[str, Any]) -> int:
        return 1 if message in older else int(impl.fixtures.chapter_estimator(message))

    result = build(impl, path, 9 + 18, estimator=cheap_first)
    case = _(
        "18 tokens for groups costing 2, 7 and 15 (u1 and a1 cost 1 each): the walk stops at "
        "the group of 7 that does not fit; the older group of 2 is not taken"
    )
    same(
        of(case, "(kept_entry_ids, reason)"),
        (result.kept_entry_ids, result.reason),
        (THIRD_GROUP, "trimmed"),
    )

    asked: list[dict[str, Any]] = []

    def recording(message: dict[str, Any]) -> int:
        asked.append(copy.deepcopy(message))
        return int(impl.fixtures.chapter_estimator(message))

    # When and in what order messages are estimated is the learner's choice; the bound is
    # not: each message at most once, and only the prompt and the path's messages.
    build(impl, path, 9 + 15, estimator=recording)
    case = _(
        "build_context with 15 tokens for messages: each message is estimated at most once, "
        "and only the system prompt and the path's messages are estimated"
    )
    prompt = {"role": "system", "content": impl.fixtures.SYSTEM_PROMPT}
    allowed = [prompt, *messages_by_id(impl, CHAPTER_IDS)]
    repeated = [m for i, m in enumerate(asked) if m in asked[:i]]
    holds(
        case,
        not repeated,
        _("the estimator was asked twice about {messages}").format(messages=shown(repeated, 200)),
    )
    elsewhere = [m for m in asked if m not in allowed]
    holds(
        case,
        not elsewhere,
        _("the estimator was asked about {messages}, which the request does not hold").format(
            messages=shown(elsewhere, 200)
        ),
    )

    seen: list[dict[str, Any]] = []

    def meddling(message: dict[str, Any]) -> int:
        seen.append(message)
        cost = int(impl.fixtures.chapter_estimator(message))
        message["content"] = "overwritten by the estimator"
        return cost

    before = snapshot(impl, path)
    result = build(impl, path, 31, estimator=meddling)
    case = _("build_context with an estimator that overwrites what it is given")
    same(of(case, "kept_entry_ids"), result.kept_entry_ids, ["u2", "a2"] + THIRD_GROUP)
    same(
        _("{case}: the path afterwards (the estimator must get copies)").format(case=case),
        snapshot(impl, path),
        before,
    )
    same(
        _("{case}: messages (returned messages are not the ones estimated)").format(case=case),
        result.messages,
        messages_by_id(impl, result.kept_entry_ids),
    )
    holds(
        case,
        all(m is not r for m in seen for r in result.messages),
        _("a returned message is the very object the estimator was given"),
    )

    # every estimator answer is checked, a message's as well as the prompt's
    for answer in (-5, math.nan, "3"):

        def bad_for_u3(message: dict[str, Any], a: object = answer) -> Any:
            if message.get("content") == messages_by_id(impl, ["u3"])[0]["content"]:
                return a
            return impl.fixtures.chapter_estimator(message)

        refused(
            _("an estimator answering {answer} for u3 alone (the prompt's answer is fine)").format(
                answer=repr(answer)
            ),
            lambda e=bad_for_u3: build(impl, path, 31, estimator=e),
        )

    # a broken history is refused, never answered with fewer groups
    orphan = chapter_json(impl)
    orphan[6]["message"]["toolCallId"] = "unknown-1"
    refused(
        _("build_context of the chapter path whose r-test answers unknown-1 (a broken history)"),
        lambda: build(impl, entries_of(impl, orphan), 31),
        "(unknown-1|test-1)",
    )

    # the caller's groups stay as they were
    groups = [list(g.entries) for g in impl.groups.group_interactions(path)]
    order = [[e.id for e in g] for g in groups]
    impl.context.select_groups(groups, 22, impl.fixtures.chapter_estimator)
    same(
        _("the caller's list of groups after select_groups (left as it was)"),
        [[e.id for e in g] for g in groups],
        order,
    )

    # a long path: each message estimated at most once, and no limit of depth
    long = entries_of(impl, long_path_json(700))
    counting = Counting(impl.fixtures.chapter_estimator)
    case = _("build_context of a path of 2,100 entries (700 interactions) with max_tokens=1000")
    result = completes(case, lambda: build(impl, long, 1000, estimator=counting))
    one_per_message(case, counting, len(long) + 1)
    holds(
        case,
        result.reason == "trimmed" and result.kept_entry_ids[-1] == "r699",
        _("expected the newest groups kept and trimmed; got {reason}, {count} kept").format(
            reason=shown(result.reason), count=len(result.kept_entry_ids)
        ),
    )


# --------------------------------------------------------------------------- Lab 11.4


def create(
    impl: Any, on: list[Any], entry_id: str = "compact-1", first_kept: str = "u2", **fields: Any
) -> Any:
    options: dict[str, Any] = {
        "timestamp": 100,
        "summary": impl.fixtures.COMPACT_1_SUMMARY,
        "tokens_before": 29,
    } | fields
    return impl.compaction.create_compaction_entry(
        on, id=entry_id, first_kept_entry_id=first_kept, **options
    )


@pytest.mark.lab("11.4")
def test_lab_11_4_creates_a_record_after_the_leaf_without_writing(impl: Any) -> None:
    path = chapter_path(impl)
    before = snapshot(impl, path)
    summary = copy.deepcopy(impl.fixtures.COMPACT_1_SUMMARY)
    entry = create(impl, path, summary=summary)
    same(
        _("the path's ids after create_compaction_entry (nothing is appended to it)"),
        [e.id for e in path],
        CHAPTER_IDS,
    )
    same(
        _("create_compaction_entry(compact-1, first kept u2) as JSON"),
        impl.session.entry_to_json(entry),
        compact_1_json(impl),
    )
    summary["completed"].append("mutated input")
    entry.summary.next.append("mutated record")
    same(
        _("the path after the input summary and the record were changed"),
        snapshot(impl, path),
        before,
    )
    again = create(impl, path)
    same(
        _("compact-1 created again from the fixture's summary, as JSON"),
        impl.session.entry_to_json(again),
        compact_1_json(impl),
    )

    metadata = impl.session.parse_session_entry(
        {
            "type": "metadata",
            "id": "m9",
            "parentId": "a3",
            "timestamp": 99,
            "key": "model",
            "value": "other",
        }
    )
    after_metadata = create(
        impl, path + [metadata], first_kept="u3", summary=summary, tokens_before=15
    )
    same(
        _(
            "parent_id of a record created on a path ending in metadata m9 "
            "(the leaf, whatever it is)"
        ),
        after_metadata.parent_id,
        "m9",
    )


@pytest.mark.lab("11.4")
def test_lab_11_4_rejects_empty_paths_duplicate_ids_and_in_group_cuts(impl: Any) -> None:
    path = chapter_path(impl)
    refused(_("an empty path"), lambda: create(impl, []))
    refused(_("an id already on the path (a3)"), lambda: create(impl, path, entry_id="a3"), "a3")
    for inside in ("a1", "a2", "calls", "r-test", "r-read", "a3", "nowhere"):
        refused(
            _("first kept {entry}").format(entry=inside),
            lambda i=inside: create(impl, path, first_kept=i),
            inside,
        )
    said = refused(
        _("first kept {entry}").format(entry="calls"),
        lambda: create(impl, path, first_kept="calls"),
    )
    unnamed = [start for start in ("u1", "u2", "u3") if not re.search(rf"\b{start}\b", said)]
    if unnamed:
        pytest.fail(
            _(
                "{case}: the error should say which ids are allowed ({ids}); it says: {error}"
            ).format(
                case=_("first kept {entry}").format(entry="calls"),
                ids=", ".join(unnamed),
                error=said,
            ),
            pytrace=False,
        )
    for start in ("u1", "u2", "u3"):
        same(
            _("first_kept_entry_id of a record keeping {entry}").format(entry=start),
            create(impl, path, first_kept=start).first_kept_entry_id,
            start,
        )
    bad_summary = copy.deepcopy(impl.fixtures.COMPACT_1_SUMMARY)
    bad_summary["files"] = bad_summary.pop("changedFiles")
    refused(
        _("a summary with 'files' instead of 'changedFiles'"),
        lambda: create(impl, path, summary=bad_summary),
        r"\b(files|changedFiles)\b",
    )
    refused("tokens_before -1", lambda: create(impl, path, tokens_before=-1), "tokensBefore")
    refused("timestamp -1", lambda: create(impl, path, timestamp=-1), "timestamp")
    for bad in (True, "100", math.nan):
        case = _("timestamp {value}").format(value=shown(bad))
        error = refused(case, lambda b=bad: create(impl, path, timestamp=b))
        holds(case, "timestamp" in error, should_name("timestamp", error))

    case = _("a record 压缩-1 with timestamp 0 and tokens_before 29")
    entry = accepted(case, lambda: create(impl, path, "压缩-1", timestamp=0))
    same(
        of(case, "(id, timestamp, tokens_before) and the numbers' types"),
        (entry.id, *[(v, type(v).__name__) for v in (entry.timestamp, entry.tokens_before)]),
        ("压缩-1", (0, "int"), (29, "int")),
    )
    long = entries_of(impl, long_path_json(700))
    case = _("create_compaction_entry on a path of 2,100 entries (700 interactions)")
    entry = completes(case, lambda: create(impl, long, first_kept="u350"))
    same(of(case, "parent_id"), entry.parent_id, "r699")


# --------------------------------------------------------------------------- Lab 11.5


@pytest.mark.lab("11.5")
def test_lab_11_5_resumes_from_the_latest_summary(impl: Any) -> None:
    path = resumed_path(impl)
    metadata = impl.session.parse_session_entry(
        {
            "type": "metadata",
            "id": "m2",
            "parentId": "a2",
            "timestamp": 4.5,
            "key": "model",
            "value": {"name": "other"},
        }
    )
    path.insert(4, metadata)
    kept = ["u2", "a2"] + THIRD_GROUP + ["u4", "a4"]

    result = build(impl, path, 200)
    case = _("resuming from compact-1 (first kept u2) with max_tokens=200")
    text = summary_text(result)
    summary = impl.fixtures.COMPACT_1_SUMMARY
    missing = [summary["goal"]] if summary["goal"] not in text else []
    missing += [
        item for key in summary if key != "goal" for item in summary[key] if item not in text
    ]
    holds(
        _("{case}: the summary message").format(case=case),
        not missing,
        _("it leaves out {missing}; it reads:\n{text}").format(missing=shown(missing), text=text),
    )
    same(
        _("{case}: kept_entry_ids (from first kept on, without metadata and compaction)").format(
            case=case
        ),
        result.kept_entry_ids,
        kept,
    )
    same(
        _("{case}: messages after the summary").format(case=case),
        result.messages[1:],
        messages_by_id(impl, kept),
    )
    same(of(case, "reason"), result.reason, "within_budget")
    cost = impl.fixtures.chapter_estimator(result.messages[0])
    same_tokens(
        _("{case} (the summary costs {cost})").format(case=case, cost=cost),
        result.tokens,
        {"messages": cost + 7 + 15 + 6},
    )

    # the summary's cost comes off the budget first: 27 left for groups of 7, 15 and 6
    tight = build(impl, path, 9 + cost + 27)
    case = _(
        "resuming with max_tokens={max_tokens}: 9 fixed, the summary's {cost}, so 27 left "
        "for groups of 7, 15 and 6 (the summary's cost must come off before groups are chosen)"
    ).format(max_tokens=9 + cost + 27, cost=cost)
    same(of(case, "kept_entry_ids"), tight.kept_entry_ids, THIRD_GROUP + ["u4", "a4"])
    same(of(case, "reason"), tight.reason, "trimmed")
    same_tokens(case, tight.tokens, {"messages": cost + 21})
    same(_("{case}: the summary message").format(case=case), summary_text(tight), text)

    # a record read back from a log may carry a first kept id that no creator would accept
    for first_kept in ("calls", "a2", "u4", "nowhere"):
        case = _("resuming from a record whose first kept is {entry}").format(entry=first_kept)
        error = refused(
            case,
            lambda f=first_kept: build(impl, resumed_path(impl, first_kept=f), 200),
            "compact-1",
        )
        holds(
            case,
            first_kept in error,
            should_name(first_kept, error),
        )

    compaction, suffix = impl.compaction.resume_suffix(path)
    same(
        _(
            "resume_suffix of u1 … a3 → compact-1 (first kept u2) → u4 → a4, with metadata m2 "
            "after a2: (compaction id, suffix ids without metadata)"
        ),
        (getattr(compaction, "id", compaction), [entry.id for entry in suffix]),
        ("compact-1", kept),
    )


@pytest.mark.lab("11.5")
def test_lab_11_5_repeated_builds_are_equal_and_isolated(impl: Any) -> None:
    path = resumed_path(impl)
    before = snapshot(impl, path)
    first = build(impl, path, 60)
    second = build(impl, path, 60)
    same(_("two builds of the resumed path with max_tokens=60"), first, second)
    first.messages[0]["content"] = "rewritten summary"
    with_calls = [
        m
        for m in first.messages
        if m["role"] == "assistant" and any(b["type"] == "toolCall" for b in m["content"])
    ]
    holds(
        _("a build of the resumed path with max_tokens=60"),
        bool(with_calls),
        _("its messages should hold the assistant message 'calls'; kept: {kept}").format(
            kept=first.kept_entry_ids
        ),
    )
    calls = with_calls[0]
    calls["content"][1]["arguments"]["path"] = "rewritten.ts"
    first.kept_entry_ids.append("bogus")
    same(
        _("a third build after the first result was changed (results share nothing)"),
        build(impl, path, 60),
        second,
    )
    same(_("the resumed path after building (never rewritten)"), snapshot(impl, path), before)

    plain = chapter_path(impl)
    compaction, suffix = impl.compaction.resume_suffix(plain)
    holds(
        _("resume_suffix of the chapter path (no compaction)"),
        compaction is None and suffix == plain and suffix is not plain,
        _("expected (None, a new list of the path's entries); got ({compaction}, {kind})").format(
            compaction=shown(compaction, 60),
            kind=_("the caller's own list") if suffix is plain else shown(returned(suffix), 120),
        ),
    )

    # a long path with a compaction every 100 interactions
    values = long_path_json(700, compact_at=(50, 100))
    long = entries_of(impl, values)
    ids = [entry.id for entry in long]
    case = _(
        "resume_suffix of a path of 2,102 entries (700 interactions, compactions c50 and c100)"
    )
    compaction, suffix = completes(case, lambda: impl.compaction.resume_suffix(long))
    same(
        of(case, "(compaction, first and last ids, length)"),
        (getattr(compaction, "id", compaction), suffix[0].id, suffix[-1].id, len(suffix)),
        ("c100", "u99", "r699", 1803),
    )
    same(_("{case}: the caller's list afterwards").format(case=case), [e.id for e in long], ids)
    counting = Counting(impl.fixtures.chapter_estimator)
    case = _("build_context of a path of 2,102 entries (compactions c50 and c100), max_tokens=1000")
    result = completes(case, lambda: build(impl, long, 1000, estimator=counting))
    one_per_message(case, counting, 1803 + 2)
    same(of(case, "compaction_id"), result.compaction_id, "c100")

    # nothing is kept between calls: a second path with the same ids is its own
    other = resumed_path(impl, first_kept="u3")
    impl.compaction.resume_suffix(resumed_path(impl))
    _compaction, suffix = impl.compaction.resume_suffix(other)
    same(
        _(
            "resume_suffix of a second path with the same ids, compact-1 keeping u3, called "
            "after the first's: the suffix's ids"
        ),
        [entry.id for entry in suffix],
        THIRD_GROUP + ["u4", "a4"],
    )


@pytest.mark.lab("11.5")
def test_lab_11_5_second_compaction_renders_only_the_latest_summary(impl: Any) -> None:
    path = resumed_path(impl)
    before = summary_text(build(impl, path, 200))
    first_only = impl.fixtures.COMPACT_1_SUMMARY["completed"][0]  # not in compact-2's summary
    holds(
        _("resuming before compact-2 exists"),
        first_only in before,
        _("compact-1's summary should open the messages; the summary reads:\n{text}").format(
            text=before
        ),
    )
    refused(
        _("compact-2 keeping 'calls' (inside an interaction)"),
        lambda: create(
            impl,
            path,
            "compact-2",
            "calls",
            summary=impl.fixtures.COMPACT_2_SUMMARY,
            timestamp=200,
            tokens_before=50,
        ),
        "calls",
    )
    compact_2 = create(
        impl,
        path,
        "compact-2",
        "u3",
        summary=impl.fixtures.COMPACT_2_SUMMARY,
        timestamp=200,
        tokens_before=50,
    )
    same(_("compact-2's parent_id (the leaf a4)"), compact_2.parent_id, "a4")
    path = path + [compact_2]

    result = build(impl, path, 200)
    case = _("resuming after compact-2 (first kept u3)")
    text = summary_text(result)
    goal = impl.fixtures.COMPACT_1_SUMMARY["goal"]  # compact-2's summary has the same goal
    summaries = [
        m for m in result.messages if isinstance(m["content"], str) and goal in m["content"]
    ]
    same(
        _("{case}: the number of summary messages (only the latest is rendered)").format(case=case),
        len(summaries),
        1,
    )
    holds(
        _("{case}: the summary message").format(case=case),
        first_only not in text,
        _(
            "compact-1's summary must not be rendered once compact-2 exists; it reads:\n{text}"
        ).format(text=text),
    )
    second = impl.fixtures.COMPACT_2_SUMMARY
    fields = ("goal", "constraints", "completed", "decisions", "changedFiles", "unresolved", "next")
    firsts = {key: second[key] if key == "goal" else second[key][0] for key in fields}
    missing = [key for key, item in firsts.items() if item not in text]
    holds(
        _("{case}: the summary message").format(case=case),
        not missing,
        _("it leaves out compact-2's {fields}; it reads:\n{text}").format(
            fields=", ".join(missing), text=text
        ),
    )
    order = sorted(fields, key=lambda key: text.index(firsts[key]))
    same(
        _("{case}: the order of the seven fields in the summary message").format(case=case),
        order,
        list(fields),
    )
    same(of(case, "kept_entry_ids"), result.kept_entry_ids, THIRD_GROUP + ["u4", "a4"])

    compaction, suffix = impl.compaction.resume_suffix(path)
    same(
        _(
            "resume_suffix after compact-2 (first kept u3; compact-1 lies between): "
            "(compaction id, suffix ids without compaction entries)"
        ),
        (getattr(compaction, "id", compaction), [entry.id for entry in suffix]),
        ("compact-2", THIRD_GROUP + ["u4", "a4"]),
    )

    summary = impl.session.CompactionSummary(
        goal="Fix resume",
        constraints=["Never rewrite an entry"],
        completed=["Parsed compact-1", "Grouped u2"],
        decisions=[],
        changed_files=[],
        unresolved=[],
        next=[],
    )
    layout = "\n".join(
        [
            "[Compaction summary of earlier messages]",
            "Goal: Fix resume",
            "Constraints:",
            "- Never rewrite an entry",
            "Completed:",
            "- Parsed compact-1",
            "- Grouped u2",
            "Decisions:",
            "- (none)",
            "Changed files:",
            "- (none)",
            "Unresolved:",
            "- (none)",
            "Next:",
            "- (none)",
        ]
    )
    same(
        _("summary_message of the docstring's example (goal 'Fix resume'), line by line"),
        impl.compaction.summary_message(summary),
        {"role": "user", "content": layout},
    )
