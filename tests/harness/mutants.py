"""Curated wrong versions of the reference: each must fail at least one focused test.

A mutant is a text patch on one module of a copy of the reference package. ``lab`` is the lab
whose tests are expected to catch it; a mutant that survives means a focused test is missing.
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
    ),
    Mutant(
        "forgets_the_safety_margin",
        "context.py",
        "    available = max(0, max_tokens - system - reserved_output - safety_margin)\n",
        "    available = max(0, max_tokens - system - reserved_output)\n",
        "11.3",
        "the safety margin is never deducted",
    ),
    Mutant(
        "strict_less_at_the_edge",
        "context.py",
        "if used + cost > available:",
        "if used + cost >= available:",
        "11.3",
        "a group that fits exactly is dropped",
    ),
    Mutant(
        "overflow_drops_the_newest_group",
        "context.py",
        'return Selection(copies, cost, "single_group_overflow", 1)',
        'return Selection([], 0, "single_group_overflow", 0)',
        "11.3",
        "an overflowing newest group is dropped instead of kept whole",
    ),
    Mutant(
        "splits_a_group_at_the_budget_edge",
        "context.py",
        REASON,
        FILL_WITH_OLDER_MESSAGES + REASON,
        "11.3",
        "leftover budget is filled with the tail of an older group",
    ),
    Mutant(
        "groups_share_entries_with_the_path",
        "groups.py",
        "InteractionGroup([parse_message_entry(entry) for entry in group])",
        "InteractionGroup(list(group))",
        "11.2",
        "groups hold the path's own entries",
    ),
    Mutant(
        "results_share_messages_with_the_path",
        "context.py",
        "copies = [parse_message_entry(entry) for entry in group]",
        "copies = list(group)",
        "11.3",
        "the projection returns the path's own message objects",
    ),
    Mutant(
        "estimator_sees_the_returned_messages",
        "context.py",
        "estimate_tokens(copy_json(message))",
        "estimate_tokens(message)",
        "11.3",
        "the estimator may rewrite the messages that are returned",
    ),
    Mutant(
        "accepts_an_in_group_first_kept_id",
        "compaction.py",
        "starts = [group[0].id for group in split_interactions(path)]",
        "starts = [entry.id for entry in path]",
        "11.4",
        "first kept may point inside an interaction",
    ),
    Mutant(
        "renders_every_summary",
        "context.py",
        "opening = [summary_message(compaction.summary)]",
        "opening = [summary_message(e.summary) for e in path if isinstance(e, CompactionEntry)]",
        "11.5",
        "every compaction on the path becomes a summary message",
    ),
    Mutant(
        "resumes_from_the_oldest_compaction",
        "compaction.py",
        "for index in range(len(path) - 1, -1, -1):",
        "for index in range(len(path)):",
        "11.5",
        "the first compaction on the path wins over the latest",
    ),
    Mutant(
        "parent_from_the_last_message",
        "compaction.py",
        PARENT_FROM_LEAF,
        '            "parentId": [e for e in path if isinstance(e, MessageEntry)][-1].id,\n',
        "11.4",
        "the parent skips a trailing metadata entry",
    ),
    Mutant(
        "parent_is_the_first_kept_entry",
        "compaction.py",
        PARENT_FROM_LEAF,
        '            "parentId": first_kept_entry_id,\n',
        "11.4",
        "the parent is taken from first kept instead of the leaf",
    ),
    Mutant(
        "drops_the_summary_cost_from_selection",
        "context.py",
        "split_interactions(suffix), max(0, available - summary_cost), estimate_tokens",
        "split_interactions(suffix), available, estimate_tokens",
        "11.5",
        "groups are chosen as if the summary were free",
    ),
    Mutant(
        "drops_the_summary_cost_from_the_total",
        "context.py",
        "check_amount(summary_cost + chosen.tokens,",
        "check_amount(chosen.tokens,",
        "11.5",
        "the summary message is not counted in the tokens",
    ),
    Mutant(
        "accepts_a_non_user_first_kept_on_resume",
        "compaction.py",
        'if not (isinstance(kept, MessageEntry) and kept.message.get("role") == "user"):',
        "if not isinstance(kept, MessageEntry):",
        "11.5",
        "resume starts from the middle of an interaction",
    ),
    Mutant(
        "accepts_a_call_without_result",
        "groups.py",
        "        if call_id not in results:\n",
        "        if call_id not in results and not calls:\n",
        "11.2",
        "a tool call may end its interaction unanswered",
    ),
    Mutant(
        "summary_shares_lists_with_its_input",
        "summary.py",
        'lists = {attr: r.string_list(s[key], f"{path}.{key}")',
        "lists = {attr: s[key]",
        "11.1",
        "the parsed summary keeps (and does not check) the caller's lists",
    ),
    Mutant(
        "compaction_parent_may_be_empty",
        "summary.py",
        'parent = r.parent_id(e["parentId"], nullable=False)',
        'parent = e["parentId"]',
        "11.1",
        "a compaction with an empty parentId is accepted",
    ),
    Mutant(
        "report_keeps_every_group",
        "context.py",
        'status: GroupStatus = "trimmed" if index < first else "kept"',
        'status: GroupStatus = "kept"',
        "11.opt",
        "the optional budget report ignores the selection",
    ),
)


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
