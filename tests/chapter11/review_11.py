"""Chapter 11's closing review on your package: run by ``checkpoint 11 --review``.

The chapter's acceptance asks, after 14/14, for four explanations and two demonstrations on
the nine-entry transcript. Each ``test_review_shows_*`` records what your code returns for one
of the four data flows (the review prints it under its question); each of the other two makes
one demonstration on your code and fails when it does not hold. The file is named so that a
plain pytest run does not collect it.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

from test_11_context_compaction import build, chapter_json, chapter_path, snapshot

from course.locale import gettext as _

Show = Callable[[str, object], None]

KEEPS_FROM_U3 = ["u3", "calls", "r-test", "r-read", "a3", "u4", "a4"]
TOKENS_BEFORE = {"compact-1": 29, "compact-2": 50}


def ids(values: list[str]) -> str:
    return _(", ").join(values)


def create(impl: Any, path: list[Any], entry_id: str, summary: Any, first_kept: str) -> Any:
    """A compaction record made by your ``create_compaction_entry``."""
    return impl.compaction.create_compaction_entry(
        path,
        id=entry_id,
        timestamp=100 if entry_id == "compact-1" else 200,
        summary=copy.deepcopy(summary),
        first_kept_entry_id=first_kept,
        tokens_before=TOKENS_BEFORE[entry_id],
    )


def summary_count(result: Any) -> int:
    """Messages in a build's result that are not session entries (the rendered summaries)."""
    return len(result.messages) - len(result.kept_entry_ids)


# --------------------------------------------------------------------------- the four flows


def test_review_shows_the_groups(impl: Any, record_property: Show) -> None:
    groups = impl.groups.group_interactions(chapter_path(impl))
    cost = impl.fixtures.chapter_estimator
    costs = [sum(cost(entry.message) for entry in group.entries) for group in groups]
    shown = "  ".join(f"[{ids(group.entry_ids)}]" for group in groups)
    record_property("shown", _("your group_interactions: {groups}").format(groups=shown))
    record_property(
        "shown",
        _("costing {costs} tokens").format(costs=_(", ").join(str(c) for c in costs)),
    )


def test_review_shows_the_budget(impl: Any, record_property: Show) -> None:
    budget = impl.fixtures.CHAPTER_BUDGET
    result = build(impl, chapter_path(impl), budget.max_tokens)
    tokens = result.tokens
    record_property(
        "shown",
        _(
            "your build_context: {max_tokens} − system {system} − reserved_output "
            "{reserved_output} − safety_margin {safety_margin} = {available} for messages"
        ).format(
            max_tokens=f"{tokens.max_tokens:g}",
            system=f"{tokens.system:g}",
            reserved_output=f"{tokens.reserved_output:g}",
            safety_margin=f"{tokens.safety_margin:g}",
            available=f"{tokens.available_for_messages:g}",
        ),
    )
    record_property(
        "shown",
        _("kept {kept} ({tokens} tokens), reason {reason}").format(
            kept=ids(result.kept_entry_ids), tokens=f"{tokens.messages:g}", reason=result.reason
        ),
    )


def test_review_shows_compact_1(impl: Any, record_property: Show) -> None:
    path = chapter_path(impl)
    before = snapshot(impl, path)
    record = create(impl, path, "compact-1", impl.fixtures.COMPACT_1_SUMMARY, "u2")
    shown = (
        _(
            "your create_compaction_entry: parentId {parent}, firstKeptEntryId {first_kept}, "
            "tokensBefore {tokens}; the nine entries unchanged"
        )
        if snapshot(impl, path) == before
        else _(
            "your create_compaction_entry: parentId {parent}, firstKeptEntryId {first_kept}, "
            "tokensBefore {tokens}; the nine entries CHANGED"
        )
    )
    record_property(
        "shown",
        shown.format(
            parent=record.parent_id,
            first_kept=record.first_kept_entry_id,
            tokens=f"{record.tokens_before:g}",
        ),
    )


def test_review_shows_the_resume(impl: Any, record_property: Show) -> None:
    path = chapter_path(impl)
    path.append(create(impl, path, "compact-1", impl.fixtures.COMPACT_1_SUMMARY, "u2"))
    path += [impl.session.parse_session_entry(v) for v in impl.fixtures.continuation_json()]
    result = build(impl, path, 1000)
    record_property(
        "shown",
        _(
            "your build_context after compact-1, u4 and a4: {count} summary message(s), then {kept}"
        ).format(count=summary_count(result), kept=ids(result.kept_entry_ids)),
    )


# --------------------------------------------------------------------------- demonstrations


def test_review_returned_copies_are_isolated(impl: Any, record_property: Show) -> None:
    path = chapter_path(impl)
    before = snapshot(impl, path)
    result = build(impl, path, impl.fixtures.CHAPTER_BUDGET.max_tokens)
    calls = [
        block
        for message in result.messages
        if message["role"] == "assistant" and isinstance(message["content"], list)
        for block in message["content"]
        if block.get("type") == "toolCall" and block.get("arguments")
    ]
    assert calls, _("the returned messages should include the tool call of the third group")
    call = calls[0]
    old = copy.deepcopy(call["arguments"])
    for key in call["arguments"]:
        call["arguments"][key] = _("changed by the review")
    record_property(
        "shown",
        _("changed {tool} {old} → {new} in the result").format(
            tool=call["name"], old=old, new=call["arguments"]
        ),
    )
    assert snapshot(impl, path) == before, _(
        "changing a returned tool argument changed the active path: build_context returned "
        "the path's own message objects"
    )
    again = build(impl, path, impl.fixtures.CHAPTER_BUDGET.max_tokens)
    assert old in [b.get("arguments") for m in again.messages for b in _blocks(m)], _(
        "a later build saw the change made to an earlier result"
    )
    record_property(
        "shown", _("the active path and a new build still say {arguments}").format(arguments=old)
    )


def _blocks(message: dict[str, Any]) -> list[dict[str, Any]]:
    content = message["content"]
    return [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []


def test_review_second_compaction_resumes_from_the_latest(impl: Any, record_property: Show) -> None:
    store = impl.session.InMemorySessionStore()
    for value in chapter_json(impl):
        store.append(value)
    path = impl.session.path_to(store.entries(), "a3")
    compact_1 = create(impl, path, "compact-1", impl.fixtures.COMPACT_1_SUMMARY, "u2")
    store.append(impl.session.entry_to_json(compact_1))
    for value in impl.fixtures.continuation_json():
        store.append(value)
    path = impl.session.path_to(store.entries(), "a4")
    compact_2 = create(impl, path, "compact-2", impl.fixtures.COMPACT_2_SUMMARY, "u3")
    parent = compact_2.parent_id
    assert parent == "a4", _("compact-2's parent should be the leaf a4, not {parent}").format(
        parent=parent
    )
    store.append(impl.session.entry_to_json(compact_2))
    path = impl.session.path_to(store.entries(), "compact-2")
    record_property(
        "shown", _("the active path: {ids}").format(ids=ids([entry.id for entry in path]))
    )

    result = build(impl, path, 1000)
    record_property(
        "shown",
        _("your next build: {count} summary message(s), then {kept}").format(
            count=summary_count(result), kept=ids(result.kept_entry_ids)
        ),
    )
    assert summary_count(result) == 1, _("exactly one summary message: the latest one")
    text = str(result.messages[0]["content"])
    first, second = impl.fixtures.COMPACT_1_SUMMARY, impl.fixtures.COMPACT_2_SUMMARY
    only_first = [i for key in first if key != "goal" for i in first[key] if i not in second[key]]
    only_second = [i for key in second if key != "goal" for i in second[key] if i not in first[key]]
    assert all(item in text for item in only_second), _("the summary shown should be compact-2's")
    assert not any(item in text for item in only_first), _("compact-1's summary should be gone")
    assert result.kept_entry_ids == KEEPS_FROM_U3, _(
        "resume should keep from compact-2's first kept u3: {ids}"
    ).format(ids=ids(KEEPS_FROM_U3))
