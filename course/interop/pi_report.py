"""The import report: one item per lossy mapping or repair, each with its line, id and kind."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from typing import Any, Literal, TypeAlias

from course.locale import gettext as _
from course.locale import ngettext

Policy: TypeAlias = Literal["strict", "synthesize", "drop"]
POLICIES: tuple[Policy, ...] = ("strict", "synthesize", "drop")

SplitTurn: TypeAlias = Literal["turn-start", "next-user"]
SPLIT_TURNS: tuple[SplitTurn, ...] = ("turn-start", "next-user")
"""Where a split turn's kept range starts: its user message, or the next one (docs/pi-import.md)."""

REPAIR_KINDS = (
    "damaged_line",
    "unknown_type",
    "missing_parent",
    "unanswered_call",
    "orphan_result",
    "duplicate_call",
    "before_user",
    "compaction_cut",
)
"""What the chapter's rules reject: ``strict`` stops at the first; the others repair each."""
MAPPING_KINDS = (
    "thinking",
    "image",
    "converted",
    "summary",
    "fields",
    "failed_message",
    "stop_reason",
    "split_turn",
)
"""What the mapping itself changes, under every policy."""
KINDS = (*REPAIR_KINDS, *MAPPING_KINDS)
"""Every report item's kind, in the order docs/pi-import.md's tables describe them."""


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
    items: tuple[ReportItem, ...] = ()
    split_turn: SplitTurn = "turn-start"
    keep_failed: bool = False

    def of_kind(self, *kinds: str) -> list[ReportItem]:
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
        more = len(self.items) - 1
        text = (
            ngettext(
                "{item} (and {more} more); strict refuses this session as it is: import it "
                "with {option} 'synthesize' or 'drop'",
                "{item} (and {more} more); strict refuses this session as it is: import it "
                "with {option} 'synthesize' or 'drop'",
                more,
            )
            if more
            else _(
                "{item}; strict refuses this session as it is: import it with {option} "
                "'synthesize' or 'drop'"
            )
        )
        return text.format(item=self.items[0], more=more, option=option)
