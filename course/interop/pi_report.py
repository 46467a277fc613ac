"""The import report: one item per lossy mapping or repair, each with its line, id and kind."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from typing import Any, Literal, TypeAlias

from course.locale import gettext as _
from course.locale import ngettext

Policy: TypeAlias = Literal["strict", "synthesize", "drop"]
POLICIES: tuple[Policy, ...] = ("strict", "synthesize", "drop")

SplitTurn: TypeAlias = Literal["turn-start", "next-user"]
SPLIT_TURNS: tuple[SplitTurn, ...] = ("turn-start", "next-user")
"""Where a split turn's kept range starts: its user message, or the next one (docs/pi-import.md)."""

REPAIR_KINDS: dict[str, str] = {
    "damaged_line": "a line holds several JSON objects back to back, or something unreadable",
    "unknown_type": "an entry type or message role this importer does not know",
    "missing_parent": "an entry's parent is not in the file (a /fork leaves labels out)",
    "unanswered_call": "a tool call has no result before its interaction ends",
    "orphan_result": "a tool result answers no call of its interaction, or answers one twice",
    "duplicate_call": "a tool call id is declared twice in one interaction",
    "before_user": "an assistant message comes before any user message",
    "compaction_cut": "a compaction's first kept entry is not a user message before it",
}
"""What the chapter's rules reject: ``strict`` stops at the first; the others repair each."""

MAPPING_KINDS: dict[str, str] = {
    "thinking": "thinking blocks of an assistant message are not carried",
    "image": "an image block became a text placeholder",
    "converted": "a Pi-only message or entry became a user message, or data only",
    "summary": "a Markdown summary was split into the seven fields; the text is kept as data",
    "fields": "Pi fields the chapter's entry has no place for are not carried",
    "failed_message": "an aborted or failed assistant message, which Pi never sends",
    "stop_reason": "an assistant message stopped for another reason than stop or toolUse",
    "split_turn": "a compaction keeps an entry in the middle of a turn",
}
"""What the mapping itself changes, under every policy."""

KINDS = {**REPAIR_KINDS, **MAPPING_KINDS}


@dataclass(frozen=True)
class ReportItem:
    """One lossy or repaired item: the Pi ``line``, the chapter entry ``id``, ``kind``, text."""

    line: int
    id: str
    kind: str
    message: str

    def __str__(self) -> str:
        return _("line {line}: {id}: {kind}: {message}").format(**self.to_json())

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class ImportReport:
    """What an import changed: every item in line order, and where it came from."""

    source_version: int
    policy: Policy
    items: tuple[ReportItem, ...] = field(default=())
    split_turn: SplitTurn = "turn-start"
    keep_failed: bool = False

    def of_kind(self, *kinds: str) -> list[ReportItem]:
        """The items of the given kinds, in line order."""
        return [item for item in self.items if item.kind in kinds]

    @property
    def repairs(self) -> list[ReportItem]:
        """The items where a chapter rule was broken and the policy repaired it."""
        return self.of_kind(*REPAIR_KINDS)

    def counts(self) -> dict[str, int]:
        """How many items of each kind, in the documented order of kinds."""
        found = Counter(item.kind for item in self.items)
        return {kind: found[kind] for kind in KINDS if found[kind]}

    def to_json(self) -> dict[str, Any]:
        return {
            "sourceVersion": self.source_version,
            "policy": self.policy,
            "splitTurn": self.split_turn,
            "keepFailed": self.keep_failed,
            "counts": self.counts(),
            "items": [item.to_json() for item in self.items],
        }


def sorted_items(items: Iterable[ReportItem]) -> tuple[ReportItem, ...]:
    """Items by line, the order they were found kept within a line."""
    return tuple(sorted(items, key=lambda item: item.line))


class PiImportError(ValueError):
    """``strict`` met what the chapter's rules reject; ``items`` lists every such place."""

    def __init__(self, items: list[ReportItem]) -> None:
        self.items = items
        super().__init__(self.explain())

    def explain(self, option: str = "repair") -> str:
        """The error's text; ``option`` names the setting that chooses the repair."""
        first, more = self.items[0], len(self.items) - 1
        if more:
            text = ngettext(
                "{item} (and {more} more); strict refuses this session as it is: import it "
                "with {option} 'synthesize' or 'drop'",
                "{item} (and {more} more); strict refuses this session as it is: import it "
                "with {option} 'synthesize' or 'drop'",
                more,
            )
        else:
            text = _(
                "{item}; strict refuses this session as it is: import it with {option} "
                "'synthesize' or 'drop'"
            )
        return text.format(item=first, more=more, option=option)
