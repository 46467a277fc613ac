"""The notebooks' walk through compaction: the record, its creation, resume, broken inputs."""

from __future__ import annotations

import copy
import math
import tempfile
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from typing import Any

from .budget_view import fmt
from .notebook import Implementation
from .views import (
    TONE_MARKS,
    View,
    attempt,
    expect_rejection,
    message,
    preformatted,
    stack,
    table,
    verdict,
)
from .walkthrough import build, ids_of, message_text

SUMMARY_KEYS = (
    "goal",
    "constraints",
    "completed",
    "decisions",
    "changedFiles",
    "unresolved",
    "next",
)
"""The seven summary fields, in their fixed order (JSON names)."""


def compact_1_json(impl: Implementation) -> dict[str, Any]:
    """``compact-1`` as stored: after a3, keeping from u2, 29 tokens before."""
    result: dict[str, Any] = impl.fixtures.compact_1_json()
    return result


def create(
    impl: Implementation,
    path: Sequence[Any],
    *,
    entry_id: str = "compact-1",
    first_kept: str = "u2",
    summary: dict[str, Any] | None = None,
    tokens_before: float = 29,
    timestamp: float = 100,
) -> Any:
    """``create_compaction_entry`` with the chapter's arguments unless told otherwise."""
    return impl.context.create_compaction_entry(
        path,
        id=entry_id,
        timestamp=timestamp,
        summary=summary if summary is not None else impl.fixtures.COMPACT_1_SUMMARY,
        first_kept_entry_id=first_kept,
        tokens_before=tokens_before,
    )


def resumed_path(impl: Implementation) -> list[Any]:
    """u1 … a3 → compact-1 (created by the implementation, keeps u2) → u4 → a4."""
    path = impl.chapter_path()
    return path + [create(impl, path)] + impl.parse(impl.fixtures.continuation_json())


def with_compact_2(impl: Implementation) -> list[Any]:
    """The resumed path with ``compact-2`` (keeps u3) appended after a4."""
    path = resumed_path(impl)
    second = create(
        impl,
        path,
        entry_id="compact-2",
        first_kept="u3",
        summary=impl.fixtures.COMPACT_2_SUMMARY,
        tokens_before=50,
        timestamp=200,
    )
    return path + [second]


def _check(ok: bool, text: str) -> View:
    return message(text if ok else f"not so: {text}", "ok" if ok else "error")


def _steps(*steps: Callable[[], View]) -> View:
    """Run steps in order; the first one that raises ends the list with its message."""
    views: list[View] = []
    for step in steps:
        done = attempt(step)
        if not done.ok:
            views.append(done.view())
            break
        views.append(done.get())
    return stack(views)


# --------------------------------------------------------------------------- Lab 11.1


def summary_fields_view(summary: dict[str, Any]) -> View:
    """The seven summary fields and what a summary holds in each."""
    rows = []
    for key in SUMMARY_KEYS:
        value = summary.get(key)
        shown = value if isinstance(value, str) else "; ".join(value or []) or "(empty)"
        rows.append((key, "string" if key == "goal" else "list of strings", shown))
    return table(["field", "type", "compact-1"], rows)


def parse_view(impl: Implementation) -> View:
    """Parse ``compact-1`` strictly; show the fields and that the result shares nothing."""
    raw = compact_1_json(impl)
    holder: dict[str, Any] = {}

    def parse() -> View:
        entry = impl.session.parse_session_entry(raw)
        holder["entry"] = entry
        return preformatted(
            f"type {entry.type}, id {entry.id}, parent {entry.parent_id}, "
            f"first kept {entry.first_kept_entry_id}, tokens before {fmt(entry.tokens_before)}\n"
            f"goal: {entry.summary.goal}"
        )

    def round_trip() -> View:
        back = impl.session.entry_to_json(holder["entry"])
        return _check(back == compact_1_json(impl), "entry_to_json gives back the same object")

    def isolated() -> View:
        raw["summary"]["completed"].append("added to the input after parsing")
        entry = holder["entry"]
        same = entry.summary.completed == impl.fixtures.COMPACT_1_SUMMARY["completed"]
        return _check(same, "changing the input afterwards leaves the parsed entry alone")

    return _steps(parse, round_trip, isolated)


def rejections_view(impl: Implementation) -> View:
    """Broken variants of ``compact-1`` and what the parser says about each."""

    def variant(change: Callable[[dict[str, Any]], None]) -> dict[str, Any]:
        value = compact_1_json(impl)
        change(value)
        return value

    def files_alias(v: dict[str, Any]) -> None:
        v["summary"]["files"] = v["summary"].pop("changedFiles")

    cases: list[tuple[str, dict[str, Any]]] = [
        ("summary.changedFiles renamed to files", variant(files_alias)),
        ("summary.goal empty", variant(lambda v: v["summary"].update(goal=""))),
        ("summary.next holds a number", variant(lambda v: v["summary"].update(next=["ok", 3]))),
        ("parentId empty", variant(lambda v: v.update(parentId=""))),
        ("tokensBefore -1", variant(lambda v: v.update(tokensBefore=-1))),
        ("tokensBefore NaN", variant(lambda v: v.update(tokensBefore=math.nan))),
        ("tokensBefore true", variant(lambda v: v.update(tokensBefore=True))),
    ]
    rows = []
    for label, value in cases:
        tone, text = verdict(partial(impl.session.parse_session_entry, value))
        rows.append((label, f"{TONE_MARKS[tone]} {text}"))
    return table(["change to compact-1", "what the parser says"], rows)


def stores_view(impl: Implementation) -> View:
    """Both stores keep compact-1 through their parser; the JSONL log reopens with it."""
    entries = impl.fixtures.chapter_path_json() + [compact_1_json(impl)]
    expected = [e["id"] for e in entries]

    def memory() -> View:
        store = impl.session.InMemorySessionStore()
        for value in entries:
            store.append(value)
        stored = store.entries()
        same = impl.session.entry_to_json(stored[-1]) == compact_1_json(impl)
        ids = [e.id for e in stored]
        return _check(
            ids == expected and same,
            f"in-memory store holds {len(ids)} entries ending with {ids[-1]}",
        )

    def jsonl() -> View:
        with tempfile.TemporaryDirectory() as folder:
            log = Path(folder) / "session.jsonl"
            store = impl.session.JsonlSessionStore(log)
            for value in entries:
                store.append(value)
            store.close()
            lines = log.read_text(encoding="utf-8").count("\n")
            reopened = impl.session.JsonlSessionStore(log)
            try:
                back = [impl.session.entry_to_json(e) for e in reopened.entries()]
            finally:
                reopened.close()
        return stack(
            [
                _check(lines == len(entries), f"the JSONL log has {lines} committed lines"),
                _check(back == entries, "reopening the log gives back all entries, compact-1 too"),
            ]
        )

    return _steps(memory, jsonl)


# --------------------------------------------------------------------------- Lab 11.4


def create_view(impl: Implementation) -> View:
    """Create compact-1 after a3; the path is left as it was and no store is touched."""
    holder: dict[str, Any] = {}

    def created() -> View:
        path = impl.chapter_path()
        before = [impl.session.entry_to_json(e) for e in path]
        entry = create(impl, path)
        holder["entry"] = entry
        after = [impl.session.entry_to_json(e) for e in path]
        return stack(
            [
                preformatted(
                    f"id {entry.id}\nparentId {entry.parent_id}\n"
                    f"firstKeptEntryId {entry.first_kept_entry_id}\n"
                    f"tokensBefore {fmt(entry.tokens_before)}"
                ),
                _check(
                    entry.parent_id == path[-1].id,
                    f"the parent is the path's last entry, {path[-1].id}",
                ),
                _check(before == after, "the active path is unchanged"),
            ]
        )

    def appended() -> View:
        store = impl.session.InMemorySessionStore()
        for value in impl.fixtures.chapter_path_json():
            store.append(value)
        count = len(store.entries())
        store.append(holder["entry"])
        return _check(
            len(store.entries()) == count + 1,
            f"the caller appends it explicitly: the store grows from {count} to "
            f"{len(store.entries())} entries",
        )

    return _steps(created, appended)


def first_kept_view(impl: Implementation) -> View:
    """Which entries may be firstKeptEntryId: only the first message of a group."""
    path = attempt(impl.chapter_path)
    if not path.ok:
        return path.view()
    rows = []
    for entry in path.get():
        made = attempt(partial(create, impl, path.get(), first_kept=entry.id))
        if made.pending:
            return made.view()
        verdict = "✓ accepted" if made.ok else f"✗ {made.problem}"
        rows.append((entry.id, verdict))
    return table(["firstKeptEntryId", "create_compaction_entry"], rows)


def path_diagram(ids: Sequence[str], compaction_id: str, first_kept: str) -> str:
    """The path as a chain of ids, with an arrow from the compaction back to its first kept."""
    chain = " → ".join(ids)
    starts: dict[str, int] = {}
    column = 0
    for entry_id in ids:
        starts[entry_id] = column
        column += len(entry_id) + 3
    left = starts[first_kept]
    right = starts[compaction_id] + len(compaction_id) // 2
    label = f" firstKeptEntryId = {first_kept} "
    inner = right - left - 1
    if inner < len(label) + 4:
        return f"{chain}\n{' ' * left}↑ {compaction_id}.firstKeptEntryId = {first_kept}"
    under = "└" + "────" + label + "─" * (inner - 4 - len(label)) + "┘"
    arrows = " " * left + "↑" + " " * (right - left - 1) + "│"
    return "\n".join([chain, arrows, " " * left + under])


def diagram_view(path: Sequence[Any]) -> View:
    """The diagram of a path, drawn for its newest compaction."""
    compactions = [e for e in path if getattr(e, "type", None) == "compaction"]
    ids = [str(e.id) for e in path]
    if not compactions:
        return preformatted(" → ".join(ids))
    newest = compactions[-1]
    return preformatted(path_diagram(ids, str(newest.id), str(newest.first_kept_entry_id)))


def compacted_diagram_view(impl: Implementation) -> View:
    """The nine entries with compact-1 appended, drawn."""
    path = attempt(lambda: _compacted(impl))
    return diagram_view(path.get()) if path.ok else path.view()


def _compacted(impl: Implementation) -> list[Any]:
    path = impl.chapter_path()
    return path + [create(impl, path)]


# --------------------------------------------------------------------------- Lab 11.5


def resumed_diagram_view(impl: Implementation) -> View:
    """The resumed path (compact-1, then u4 → a4), drawn."""
    path = attempt(lambda: resumed_path(impl))
    return diagram_view(path.get()) if path.ok else path.view()


def resume_view(impl: Implementation, max_tokens: float = 200) -> View:
    """Build on the resumed path: one synthetic summary message, then the kept originals."""
    built = attempt(lambda: build(impl, resumed_path(impl), max_tokens))
    if not built.ok:
        return built.view()
    result = built.get()
    opening = result.messages[0] if result.messages else {}
    summary_cost = impl.estimator()(copy.deepcopy(opening)) if opening else 0
    text = message_text(opening)
    return stack(
        [
            preformatted(
                f"messages[0] (role {opening.get('role')}, {fmt(summary_cost)} tokens):\n" + text
            ),
            preformatted(
                f"kept: {', '.join(result.kept_entry_ids)}\n"
                f"reason: {result.reason}\n"
                f"messages {fmt(result.tokens.messages)} = summary {fmt(summary_cost)} + groups "
                f"{fmt(result.tokens.messages - summary_cost)}"
            ),
            _check(
                "compact-1" not in result.kept_entry_ids
                and len(result.messages) == len(result.kept_entry_ids) + 1,
                "keptEntryIds lists original entries only: no id for the summary message",
            ),
        ]
    )


def repeat_view(impl: Implementation, max_tokens: float = 60) -> View:
    """Two builds are equal; changing the first result changes neither the second nor the path."""

    def run() -> View:
        path = resumed_path(impl)
        before = [impl.session.entry_to_json(e) for e in path]
        first = build(impl, path, max_tokens)
        second = build(impl, path, max_tokens)
        first.messages[0]["content"] = "rewritten summary"
        for m in first.messages:
            for block in m.get("content") if isinstance(m.get("content"), list) else []:
                if block.get("type") == "toolCall":
                    block["arguments"]["path"] = "rewritten.ts"
        third = build(impl, path, max_tokens)
        after = [impl.session.entry_to_json(e) for e in path]
        return stack(
            [
                _check(third == second, "a build after editing the first result equals the second"),
                _check(before == after, "the session entries are unchanged"),
            ]
        )

    return _steps(run)


def compact_2_view(impl: Implementation, max_tokens: float = 200) -> View:
    """A second compaction: only the newest summary is rendered, originals from u3."""

    def inside() -> View:
        path = resumed_path(impl)
        return expect_rejection(
            lambda: create(
                impl,
                path,
                entry_id="compact-2",
                first_kept="calls",
                summary=impl.fixtures.COMPACT_2_SUMMARY,
            ),
            what="compact-2 keeping from calls",
        )

    def second() -> View:
        path = with_compact_2(impl)
        result = build(impl, path, max_tokens)
        first_goal = impl.fixtures.COMPACT_1_SUMMARY["completed"][0]
        summaries = [
            m
            for m in result.messages
            if isinstance(m.get("content"), str)
            and impl.fixtures.COMPACT_2_SUMMARY["goal"] in m["content"]
        ]
        return stack(
            [
                diagram_view(path),
                preformatted(f"kept: {', '.join(result.kept_entry_ids)}\nreason: {result.reason}"),
                _check(len(summaries) == 1, "exactly one summary message, from compact-2"),
                _check(
                    all(first_goal not in str(m.get("content")) for m in result.messages),
                    "compact-1's summary is not rendered any more",
                ),
            ]
        )

    return _steps(inside, second)


# --------------------------------------------------------------------------- broken inputs


def broken_inputs_view(impl: Implementation) -> View:
    """The chapter's three edits to otherwise valid input, and what each one does."""

    def files_alias() -> dict[str, Any]:
        value = compact_1_json(impl)
        value["summary"]["files"] = value["summary"].pop("changedFiles")
        return value

    def with_ids(order: Sequence[str], change: Callable[[dict[str, Any]], None]) -> list[Any]:
        by_id = {v["id"]: v for v in impl.fixtures.chapter_path_json()}
        change(by_id)
        return impl.parse([by_id[i] for i in order])

    def unknown(by_id: dict[str, Any]) -> None:
        by_id["r-test"]["message"]["toolCallId"] = "unknown-1"

    ids = [e["id"] for e in impl.fixtures.chapter_path_json()]
    moved = ids[:5] + ["r-test", "calls", "r-read", "a3"]

    def moved_groups() -> View:
        groups = impl.context.group_interactions(with_ids(moved, lambda _: None))
        return preformatted(
            "r-test moved in front of calls:\n"
            + "\n".join(
                f"group {n} = [{', '.join(ids_of(g))}]" for n, g in enumerate(groups, start=1)
            )
        )

    return stack(
        [
            expect_rejection(
                lambda: impl.session.parse_session_entry(files_alias()),
                what="compact-1 with summary.files instead of changedFiles",
            ),
            expect_rejection(
                lambda: impl.context.group_interactions(with_ids(ids, unknown)),
                what="r-test answering unknown-1",
            ),
            _steps(moved_groups),
        ]
    )
