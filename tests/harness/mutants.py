"""Curated wrong versions of the reference: each must fail a focused test of its lab, legibly.

A mutant is a text patch on one module of a copy of the reference package: a mistake a learner
could plausibly make. ``lab`` is the lab whose tests are expected to catch it; a mutant that
survives means a focused test is missing. ``says`` is what the learner must read in the
failure: the case's name, the entry or field, expected against got.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

from course.harness.manifest import Manifest


@dataclass(frozen=True)
class Mutant:
    name: str
    module: str
    old: str
    new: str
    lab: str
    why: str
    says: tuple[str, ...] = ()
    """Fragments that one failure message of ``lab``'s tests must all contain."""
    caught_by: str | None = None
    """The later lab whose focused test catches it (``CAUGHT_LATER``); None: only its own lab's
    tests and cases do."""


KEEP_WHOLE_GROUPS = "    entries = [entry for group in reversed(kept) for entry in group]\n"
REASON = '    reason: Reason = "within_budget" if len(kept) == len(groups) else "trimmed"\n'
FILL_WITH_OLDER_MESSAGES = """\
    spare = available - used
    older = [parse_message_entry(e) for g in groups[: len(groups) - len(kept)] for e in g]
    tail: list[MessageEntry] = []
    for entry in reversed(older):
        cost = estimate(estimate_tokens, entry.message, entry.id)
        if cost > spare:
            break
        tail.insert(0, entry)
        spare -= cost
    if tail:
        kept.append(tail)
        used = available - spare
"""
PARENT_FROM_LEAF = '            "parentId": path[-1].id,\n'


MUTANTS: tuple[Mutant, ...] = (
    Mutant(
        "slice_last_three_messages",
        "context.py",
        KEEP_WHOLE_GROUPS,
        "    entries = [parse_message_entry(e) for group in groups for e in group][-3:]\n",
        "11.3",
        "the chapter's expected failure: messages.slice(-3) instead of whole groups",
        ("build_context with max_tokens=31: kept_entry_ids", "got:", "expected:"),
    ),
    Mutant(
        "forgets_the_safety_margin",
        "context.py",
        "    available = max(0, max_tokens - system - reserved_output - safety_margin)\n",
        "    available = max(0, max_tokens - system - reserved_output)\n",
        "11.3",
        "the safety margin is never deducted",
        ("max_tokens=31", "tokens.available_for_messages: got 24, expected 22"),
    ),
    Mutant(
        "strict_less_at_the_edge",
        "context.py",
        "if used + cost > available:",
        "if used + cost >= available:",
        "11.3",
        "a group that fits exactly is dropped",
        ("max_tokens=31: kept_entry_ids", "got:", "expected:"),
    ),
    Mutant(
        "overflow_drops_the_newest_group",
        "context.py",
        'return Selection(copies, cost, "single_group_overflow", 1)',
        'return Selection([], 0, "single_group_overflow", 0)',
        "11.3",
        "an overflowing newest group is dropped instead of kept whole",
        ("max_tokens=19", "kept_entry_ids", "got:      []"),
    ),
    Mutant(
        "splits_a_group_at_the_budget_edge",
        "context.py",
        REASON,
        FILL_WITH_OLDER_MESSAGES + REASON,
        "11.3",
        "leftover budget is filled with the tail of an older group",
        ("with 21 tokens for messages", "kept_entry_ids", "got:", "expected:"),
    ),
    Mutant(
        "groups_share_entries_with_the_path",
        "groups.py",
        "InteractionGroup([parse_message_entry(entry) for entry in group])",
        "InteractionGroup(list(group))",
        "11.2",
        "groups hold the path's own entries",
        ("the group's entry 'calls'", "copies"),
    ),
    Mutant(
        "results_share_messages_with_the_path",
        "context.py",
        "copies = [parse_message_entry(entry) for entry in group]",
        "copies = list(group)",
        "11.3",
        "the projection returns the path's own message objects",
        ("max_tokens=31", "must be copies", "- expected, + got"),
    ),
    Mutant(
        "estimator_sees_the_returned_messages",
        "context.py",
        "estimate_tokens(copy_json(message))",
        "estimate_tokens(message)",
        "11.3",
        "the estimator may rewrite the messages that are returned",
        ("an estimator that overwrites", "messages", "- expected, + got"),
    ),
    Mutant(
        "accepts_an_in_group_first_kept_id",
        "compaction.py",
        "starts = [group[0].id for group in split_interactions(path)]",
        "starts = [entry.id for entry in path]",
        "11.4",
        "first kept may point inside an interaction",
        ("first kept a1", "wrongly accepted"),
    ),
    Mutant(
        "resumes_from_the_oldest_compaction",
        "compaction.py",
        "for index in range(len(path) - 1, -1, -1):",
        "for index in range(len(path)):",
        "11.5",
        "the first compaction on the path wins over the latest",
        ("resuming after compact-2", "compact-1's summary must not be rendered"),
    ),
    Mutant(
        "parent_from_the_last_message",
        "compaction.py",
        PARENT_FROM_LEAF,
        '            "parentId": [e for e in path if isinstance(e, MessageEntry)][-1].id,\n',
        "11.4",
        "the parent skips a trailing metadata entry",
        ("parent_id", "m9", "got:", "expected:"),
    ),
    Mutant(
        "parent_is_the_first_kept_entry",
        "compaction.py",
        PARENT_FROM_LEAF,
        '            "parentId": first_kept_entry_id,\n',
        "11.4",
        "the parent is taken from first kept instead of the leaf",
        ("create_compaction_entry(compact-1, first kept u2)", "'parentId'", "- expected, + got"),
    ),
    Mutant(
        "drops_the_summary_cost_from_selection",
        "context.py",
        "max(0, available - opening.tokens),",
        "available,",
        "11.3",
        "groups are chosen as if the summary were free",
        ("an opening message that costs 5", "kept_entry_ids", "got:", "expected:"),
    ),
    Mutant(
        "drops_the_summary_cost_from_the_total",
        "context.py",
        "check_amount(opening.tokens + chosen.tokens,",
        "check_amount(chosen.tokens,",
        "11.3",
        "the summary message is not counted in the tokens",
        ("an opening message that costs 5", "tokens.messages: got 15, expected 20"),
    ),
    Mutant(
        "accepts_a_non_user_first_kept_on_resume",
        "compaction.py",
        'if not (isinstance(kept, MessageEntry) and kept.message.get("role") == "user"):',
        "if not isinstance(kept, MessageEntry):",
        "11.5",
        "resume starts from the middle of an interaction",
        ("first kept is calls", "compact-1"),
    ),
    Mutant(
        "accepts_a_call_without_result",
        "groups.py",
        "        if call_id not in results:\n",
        "        if call_id not in results and not calls:\n",
        "11.2",
        "a tool call may end its interaction unanswered",
        ("a call without its result", "wrongly accepted"),
    ),
    Mutant(
        "summary_shares_lists_with_its_input",
        "summary.py",
        'lists = {attr: r.string_list(s[key], f"{path}.{key}")',
        "lists = {attr: s[key]",
        "11.1",
        "the parsed summary keeps (and does not check) the caller's lists",
        ("summary.completed", "must not be shared", "expected:"),
    ),
    Mutant(
        "compaction_parent_may_be_empty",
        "summary.py",
        'parent = r.parent_id(e["parentId"], nullable=False)',
        'parent = e["parentId"]',
        "11.1",
        "a compaction with an empty parentId is accepted",
        ("empty parentId", "wrongly accepted"),
    ),
    Mutant(
        "report_keeps_every_group",
        "context.py",
        'status: GroupStatus = "trimmed" if index < first else "kept"',
        'status: GroupStatus = "kept"',
        "11.opt",
        "the optional budget report ignores the selection",
        ("budget_report with available=22", "'trimmed'", "- expected, + got"),
    ),
    Mutant(
        "closes_a_group_at_an_answer_without_tool_calls",
        "groups.py",
        """        elif not current:
            raise InteractionError(
                f"{entry.id}: {role} message before any user message; an interaction starts "
                "at a user message"
            )
        else:
            current.append(entry)
""",
        """        elif not current and not groups:
            raise InteractionError(f"{entry.id}: {role} message before any user message")
        else:
            current.append(entry)
            blocks = entry.message.get("content")
            if role == "assistant" and not any(
                isinstance(b, Mapping) and b.get("type") == "toolCall" for b in blocks or []
            ):
                groups.append(check_tool_pairs(current))
                current = []
""",
        "11.2",
        "an assistant message without tool calls closes the interaction: [u1, a1, a1b] splits",
        ("[u1, a1, a1b]", "a1b", "got:", "expected:"),
    ),
    Mutant(
        "skips_a_system_message",
        "groups.py",
        """            raise InteractionError(
                f"{entry.id}: system message inside the history; pass the prompt as "
                "system_prompt instead"
            )
""",
        "            continue\n",
        "11.2",
        "a system message in the path is skipped silently",
        ("a system message s1 in the path", "wrongly accepted"),
    ),
    Mutant(
        "accepts_a_whitespace_only_goal",
        "summary.py",
        'r.string(s["goal"], f"{path}.goal", non_blank=True)',
        'r.string(s["goal"], f"{path}.goal", non_empty=True)',
        "11.1",
        "a goal of only white space is accepted",
        ("a whitespace-only goal", "wrongly accepted"),
    ),
    Mutant(
        "tokens_before_is_not_checked",
        "summary.py",
        'tokens_before=r.number(e["tokensBefore"], ".tokensBefore"),',
        'tokens_before=e["tokensBefore"],',
        "11.1",
        "tokensBefore is taken as given",
        ("tokensBefore -1", "wrongly accepted"),
    ),
    Mutant(
        "build_context_ignores_the_opening",
        "context.py",
        "messages=opening.messages + [entry.message for entry in chosen.entries],",
        "messages=[entry.message for entry in chosen.entries],",
        "11.3",
        "written from an older docstring: the summary that open_context gives is dropped",
        ("messages[0], the opening", "got:", "expected:"),
    ),
    Mutant(
        "forgets_the_system_prompt",
        "context.py",
        "    available = max(0, max_tokens - system - reserved_output - safety_margin)\n",
        "    available = max(0, max_tokens - reserved_output - safety_margin)\n",
        "11.3",
        "the system prompt's cost is not deducted",
        ("max_tokens=31", "tokens.available_for_messages", "expected 22"),
    ),
    Mutant(
        "total_leaves_out_the_reserved_output",
        "context.py",
        'system + messages_cost + reserved_output + safety_margin, "the request\'s total"',
        'system + messages_cost + safety_margin, "the request\'s total"',
        "11.3",
        "the request's total forgets the reserved output",
        ("max_tokens=31", "tokens.total", "expected 31"),
    ),
    Mutant(
        "keeps_the_oldest_groups",
        "context.py",
        "    for group in reversed(groups):\n",
        "    for group in groups:\n",
        "11.3",
        "groups are taken from the oldest instead of the newest",
        ("kept_entry_ids", "got:", "expected:"),
    ),
    Mutant(
        "resumes_after_the_compaction",
        "compaction.py",
        "[entry for entry in path[start:] if isinstance(entry, MessageEntry)]",
        "[entry for entry in path[index:] if isinstance(entry, MessageEntry)]",
        "11.5",
        "resume keeps only what follows the compaction, not from first kept on",
        ("resuming from compact-1", "kept_entry_ids", "'u2'"),
    ),
    Mutant(
        "summary_fields_in_reverse_order",
        "compaction.py",
        "    for attr, heading in SUMMARY_HEADINGS:\n",
        "    for attr, heading in reversed(SUMMARY_HEADINGS):\n",
        "11.5",
        "the summary's six lists are rendered in the wrong order",
        ("the order of the seven fields", "- expected, + got"),
    ),
    Mutant(
        "accepts_an_id_already_on_the_path",
        "compaction.py",
        "    if any(entry.id == id for entry in path):\n",
        "    if False:\n",
        "11.4",
        "a new record may reuse an id of the path",
        ("an id already on the path (a3)", "wrongly accepted"),
    ),
    Mutant(
        "wraps_a_string_constraints_into_a_list",
        "summary.py",
        'lists = {attr: r.string_list(s[key], f"{path}.{key}")',
        "lists = {attr: r.string_list("
        '[s[key]] if key == "constraints" and isinstance(s[key], str) else s[key], '
        'f"{path}.{key}")',
        "11.1",
        "constraints given as a string is silently wrapped into a list",
        ("summary.constraints given as a string", "wrongly accepted"),
    ),
    Mutant(
        "tokens_before_may_be_infinite",
        "summary.py",
        'tokens_before=r.number(e["tokensBefore"], ".tokensBefore"),',
        'tokens_before=e["tokensBefore"] if type(e["tokensBefore"]) in (int, float) '
        'and e["tokensBefore"] == e["tokensBefore"] and e["tokensBefore"] >= 0 '
        'else r.number(e["tokensBefore"], ".tokensBefore"),',
        "11.1",
        "an own check of tokensBefore refuses NaN and negatives but lets Infinity through",
        ("tokensBefore Infinity", "wrongly accepted"),
    ),
    Mutant(
        "ignores_an_unknown_key",
        "summary.py",
        'e = r.mapping(value, "", COMPACTION_KEYS)',
        'e = r.mapping(value, "", COMPACTION_KEYS, optional=value.keys())',
        "11.1",
        "a record with a key outside COMPACTION_KEYS is accepted",
        ("an unknown key 'note' in the record", "wrongly accepted"),
    ),
    Mutant(
        "timestamp_is_not_checked",
        "summary.py",
        'timestamp=r.number(e["timestamp"], ".timestamp"),',
        'timestamp=e["timestamp"] if isinstance(e["timestamp"], (int, float)) '
        'else r.number(e["timestamp"], ".timestamp"),',
        "11.1",
        "any number is taken as a timestamp, a negative one too",
        ("timestamp -5", "wrongly accepted"),
    ),
    Mutant(
        "drops_an_error_result",
        "groups.py",
        "        else:\n            current.append(entry)\n",
        '        elif not entry.message.get("isError"):\n            current.append(entry)\n',
        "11.2",
        "a tool result with isError: true is dropped from its group",
        ("r-test an error result (isError: true)", "wrongly refused"),
    ),
    Mutant(
        "call_ids_unique_across_the_path",
        "groups.py",
        "    if current:\n        groups.append(check_tool_pairs(current))\n    return groups\n",
        """    if current:
        groups.append(check_tool_pairs(current))
    declared = [
        block.get("id")
        for group in groups
        for entry in group
        if entry.message.get("role") == "assistant"
        for block in entry.message.get("content") or []
        if isinstance(block, Mapping) and block.get("type") == "toolCall"
    ]
    if len(set(declared)) != len(declared):
        raise InteractionError("a tool call id is declared twice on the path")
    return groups
""",
        "11.2",
        "call ids must be unique across the whole path, so a later interaction may not reuse one",
        ("reusing call id read-1", "wrongly refused"),
    ),
    Mutant(
        "removes_metadata_from_the_callers_path",
        "groups.py",
        "    groups: list[list[MessageEntry]] = []\n    current: list[MessageEntry] = []\n",
        "    groups: list[list[MessageEntry]] = []\n    current: list[MessageEntry] = []\n"
        '    path[:] = [e for e in path if getattr(e, "type", None) != "metadata"]\n',
        "11.2",
        "split_interactions removes the metadata entries from the caller's own list",
        ("the caller's path list after grouping it", "'m1'", "- expected, + got"),
    ),
    Mutant(
        "estimates_a_kept_group_twice",
        "context.py",
        "        used += cost\n",
        "        used += sum(estimate(estimate_tokens, e.message, e.id) for e in copies)\n",
        "11.3",
        "a kept group is estimated again to add it up, so each kept message is estimated twice",
        ("each message is estimated at most once", "the estimator was asked twice about"),
    ),
    Mutant(
        "skips_a_group_that_does_not_fit",
        "context.py",
        "            break\n",
        "            continue\n",
        "11.3",
        "a group that does not fit is skipped and older groups are still taken",
        ("the older group of 2 is not taken", "got:", "expected:"),
    ),
    Mutant(
        "empty_system_prompt_is_free",
        "context.py",
        '"system prompt"\n    )\n',
        '"system prompt"\n    ) if system_prompt else 0\n',
        "11.3",
        "an empty system prompt is taken as costing nothing, without asking the estimator",
        ("system_prompt ''", "tokens.system: got 0, expected 5"),
    ),
    Mutant(
        "non_string_prompt_is_a_type_error",
        "context.py",
        'raise BudgetError(f"system_prompt: must be a string',
        'raise TypeError(f"system_prompt: must be a string',
        "11.3",
        "a system_prompt that is not a string raises TypeError instead of a ValueError",
        ("{'system_prompt': 7}", "refused with TypeError, expected a ValueError"),
    ),
    Mutant(
        "appends_the_record_to_the_path",
        "compaction.py",
        "    assert isinstance(entry, CompactionEntry)\n    return entry\n",
        "    assert isinstance(entry, CompactionEntry)\n    path.append(entry)\n    return entry\n",
        "11.4",
        "create_compaction_entry appends the record to the caller's path",
        ("nothing is appended to it", "compact-1", "- expected, + got"),
    ),
    Mutant(
        "resume_suffix_keeps_metadata",
        "compaction.py",
        "[entry for entry in path[start:] if isinstance(entry, MessageEntry)]",
        '[entry for entry in path[start:] if entry.type != "compaction"]',
        "11.5",
        "the resumed suffix keeps the metadata entries",
        ("resume_suffix of u1", "'m2'", "- expected, + got"),
    ),
    Mutant(
        "resume_suffix_keeps_older_compactions",
        "compaction.py",
        "[entry for entry in path[start:] if isinstance(entry, MessageEntry)]",
        '[entry for entry in path[start:] if entry.type != "metadata" and entry is not compaction]',
        "11.5",
        "the resumed suffix keeps an older compaction entry that lies inside it",
        ("resume_suffix after compact-2", "compact-1", "- expected, + got"),
    ),
    Mutant(
        "tokens_before_becomes_a_float",
        "summary.py",
        'tokens_before=r.number(e["tokensBefore"], ".tokensBefore"),',
        'tokens_before=float(r.number(e["tokensBefore"], ".tokensBefore")),',
        "11.1",
        "tokensBefore 29 is read back as 29.0",
        ("(timestamp, tokens_before) and their types", "(29.0, 'float')"),
    ),
    Mutant(
        "strips_the_goal",
        "summary.py",
        'goal=r.string(s["goal"], f"{path}.goal", non_blank=True)',
        'goal=r.string(s["goal"], f"{path}.goal", non_blank=True).strip()',
        "11.1",
        "the goal is stripped instead of kept as given",
        ("summary.goal (kept as given)", "'Fix resume'"),
    ),
    Mutant(
        "replaces_a_zero_timestamp",
        "summary.py",
        'timestamp=r.number(e["timestamp"], ".timestamp"),',
        'timestamp=r.number(e["timestamp"], ".timestamp") or 1,',
        "11.1",
        "a timestamp of 0 is taken as missing and replaced",
        ("a record with timestamp 0", "(1, 'int')"),
    ),
    Mutant(
        "refuses_ids_outside_ascii",
        "groups.py",
        "        if not isinstance(entry, MessageEntry):\n            continue\n",
        "        if not isinstance(entry, MessageEntry):\n            continue\n"
        "        if not entry.id.isascii():\n"
        '            raise InteractionError(f"{entry.id}: an id must be ASCII")\n',
        "11.2",
        "entry ids outside ASCII are refused",
        ("用户-1", "wrongly refused"),
    ),
    Mutant(
        "walks_the_path_recursively",
        "groups.py",
        "    for item in path:\n        entry = item if",
        "    def walk(items: Sequence[SessionEntry]) -> Iterator[SessionEntry]:\n"
        "        if items:\n"
        "            yield items[0]\n"
        "            yield from walk(items[1:])\n"
        "\n"
        "    for item in walk(path):\n        entry = item if",
        "11.2",
        "the path is walked by a recursive call per entry: RecursionError past 1,000 entries",
        ("2,100 entries", "RecursionError"),
    ),
    Mutant(
        "caches_groups_by_ids",
        "groups.py",
        "    return [\n        InteractionGroup([parse_message_entry(entry) for entry in group])\n"
        "        for group in split_interactions(path)\n    ]\n",
        "    key = tuple(getattr(entry, 'id', None) for entry in path)\n"
        "    if key not in _GROUPED:\n"
        "        _GROUPED[key] = [\n"
        "            InteractionGroup([parse_message_entry(entry) for entry in group])\n"
        "            for group in split_interactions(path)\n        ]\n"
        "    return [\n"
        "        InteractionGroup([parse_message_entry(e) for e in g.entries]) "
        "for g in _GROUPED[key]\n    ]\n\n\n"
        "_GROUPED: dict[tuple[object, ...], list[InteractionGroup]] = {}\n",
        "11.2",
        "a module-level cache keyed by the path's ids answers a second path with the same ids",
        ("a second path with the same ids", "u1's message", "got:", "另一个问题"),
    ),
    Mutant(
        "swallows_a_broken_history",
        "context.py",
        "    chosen = select_groups(\n        split_interactions(opening.entries),\n",
        "    try:\n        interactions = split_interactions(opening.entries)\n"
        "    except ValueError:\n        interactions = []\n"
        "    chosen = select_groups(\n        interactions,\n",
        "11.3",
        "a broken history is answered with an empty within_budget request",
        ("r-test answers unknown-1", "wrongly accepted", "kept_entry_ids=[]"),
    ),
    Mutant(
        "checks_only_the_prompts_estimate",
        "context.py",
        "cost = sum(estimate(estimate_tokens, entry.message, entry.id) for entry in copies)",
        "cost = sum(\n"
        "            c if type(c) in (int, float) and c >= 0 else 0\n"
        "            for c in (estimate_tokens(copy_json(entry.message)) for entry in copies)\n"
        "        )",
        "11.3",
        "a message's estimate of -5, NaN or '3' is counted as 0; only the prompt's is checked",
        ("for u3 alone", "wrongly accepted"),
    ),
    Mutant(
        "reverses_the_callers_groups",
        "context.py",
        "    for group in reversed(groups):\n",
        "    groups.reverse()  # type: ignore[attr-defined]\n    for group in groups:\n",
        "11.3",
        "select_groups reverses the caller's list of groups in place",
        ("the caller's list of groups after select_groups", "- expected, + got"),
    ),
    Mutant(
        "caches_contexts_by_ids",
        "context.py",
        "        report.append(GroupBudget(group.entry_ids, cost, status))\n    return report\n",
        "        report.append(GroupBudget(group.entry_ids, cost, status))\n    return report\n"
        "\n\n_uncached_build = build_context\n"
        "_BUILT: dict[object, BuildContextResult] = {}\n\n\n"
        "def build_context(path: Sequence[SessionEntry], **options: Any) -> BuildContextResult:\n"
        "    key = (tuple(e.id for e in path), repr(sorted(\n"
        "        (k, v) for k, v in options.items() if k != 'estimate_tokens')))\n"
        "    if key not in _BUILT:\n"
        "        _BUILT[key] = _uncached_build(path, **options)\n"
        "    return __import__('copy').deepcopy(_BUILT[key])\n",
        "11.3",
        "a module-level cache keyed by the path's ids answers a second path with the same ids",
        ("a second path with the same ids", "the message of r-read", "- expected, + got"),
    ),
    Mutant(
        "replaces_a_zero_timestamp_on_create",
        "compaction.py",
        '            "timestamp": timestamp,\n',
        '            "timestamp": timestamp or 1,\n',
        "11.4",
        "a timestamp of 0 is taken as missing and replaced",
        ("a record 压缩-1 with timestamp 0", "(1, 'int')"),
    ),
    Mutant(
        "tokens_before_becomes_a_float_on_create",
        "compaction.py",
        '            "tokensBefore": tokens_before,\n',
        '            "tokensBefore": float(tokens_before),\n',
        "11.4",
        "tokens_before 29 is stored as 29.0",
        ("a record 压缩-1 with timestamp 0", "(29.0, 'float')"),
    ),
    Mutant(
        "returns_the_callers_list_as_the_suffix",
        "compaction.py",
        "        return None, list(path)\n",
        "        return None, path  # type: ignore[return-value]\n",
        "11.5",
        "without a compaction, resume_suffix hands back the caller's own list",
        ("resume_suffix of the chapter path (no compaction)", "the caller's own list"),
    ),
    Mutant(
        "finds_the_latest_compaction_recursively",
        "compaction.py",
        "    for index in range(len(path) - 1, -1, -1):\n"
        "        if isinstance(path[index], CompactionEntry):\n"
        "            return index\n    return None\n",
        "    def newest(index: int) -> int | None:\n"
        "        if index < 0:\n            return None\n"
        "        return index if isinstance(path[index], CompactionEntry) else newest(index - 1)\n"
        "\n    return newest(len(path) - 1)\n",
        "11.5",
        "the latest compaction is found by a recursive call per entry: RecursionError when long",
        ("2,102 entries", "RecursionError"),
    ),
    Mutant(
        "summary_headings_without_colons",
        "compaction.py",
        '        lines.append(f"{heading}:")\n',
        "        lines.append(heading)\n",
        "11.5",
        "the summary's headings are written without their colon",
        ("summary_message of the docstring's example", "- expected, + got"),
    ),
)


CAUGHT_LATER: tuple[Mutant, ...] = (
    Mutant(
        "split_refuses_a_compaction_entry",
        "groups.py",
        "        if not isinstance(entry, MessageEntry):\n            continue\n",
        '        if entry.type == "compaction":\n'
        '            raise InteractionError(f"{entry.id}: a compaction entry in the history")\n'
        "        if not isinstance(entry, MessageEntry):\n            continue\n",
        "11.2",
        "split_interactions refuses a compaction entry, so no second compaction can be made",
        ("compact-2", "compact-1: a compaction entry in the history"),
        caught_by="11.5",
    ),
)
"""Mistakes a later lab's focused test catches: per-lab credit charges the lab they are in
(``grading/verdict/isolated.py``), never the lab whose test caught them. Before issue 55 their own
lab's tests and cases missed them; its cases meet this one now too (11.2#033), as the mutation bench
found every single-point mistake its own lab notices, and the charge still stands."""


def reference_modules(manifest: Manifest) -> dict[str, str]:
    """Reference module file name → kit path, for every non-test workspace file."""
    return {
        Path(file.path).name: file.reference
        for file in manifest.files
        if file.role != "test" and file.path.startswith(f"{manifest.package}/")
    }


def build_mutant(manifest: Manifest, kit: Path, mutant: Mutant, into: Path) -> str:
    """Copy the reference package to ``into/<package>`` with the patch applied; its name."""
    package = f"mutant_{mutant.name}"
    folder = into / package
    folder.mkdir(parents=True)
    for name, source in reference_modules(manifest).items():
        shutil.copyfile(kit / source, folder / name)
    target = folder / mutant.module
    text = target.read_text(encoding="utf-8")
    count = text.count(mutant.old)
    if count != 1:
        raise AssertionError(
            f"mutant {mutant.name}: {mutant.old!r} occurs {count} times in the reference "
            f"{mutant.module}; update the mutant to the reference's current code"
        )
    patched = text.replace(mutant.old, mutant.new)
    compile(patched, str(target), "exec")
    target.write_text(patched, encoding="utf-8")
    return package


BROWSER_CHECKED = tuple(
    m
    for m in MUTANTS
    if m.name
    in ("summary_shares_lists_with_its_input", "skips_a_system_message", "keeps_the_oldest_groups")
)
"""One wrong version per graded lab of the first three: each way the browser grades (a Web
Worker, the kernel itself, and the real page) must give the command line's verdict on them."""
