"""Pi's Markdown compaction summary split into the chapter's seven summary fields."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Literal, TypeAlias

from course.locale import gettext as _
from course.summary import SUMMARY_LIST_FIELDS, CompactionSummary

FIELD_KEYS = {"goal": "goal", **dict(SUMMARY_LIST_FIELDS)}
"""Summary attribute → the chapter's JSON key, for messages."""

FALLBACK_FIELD = "constraints"
"""Where a section with no field of its own goes, each item prefixed by its heading."""

NO_GOAL = "(the Pi summary states no goal)"

_FIELD_WORDS: tuple[tuple[str, str], ...] = (
    ("goal", r"goals?|objectives?"),
    ("next", r"next|in progress|todo|to do|remaining|current task|plan|original request"),
    ("unresolved", r"blocked|blockers?|unresolved|open questions?|issues?|problems?|risks?"),
    ("decisions", r"decisions?|decided|agreed"),
    ("changed_files", r"modified-files|modified|changed|created|edited"),
    (
        "completed",
        r"done|completed|progress|accomplished|finished|committed|current state|status",
    ),
    ("constraints", r"constraints?|preferences?|requirements?|rules?|conventions?"),
)
"""The first row whose words occur in a heading (as whole words) names its field: Pi's summary
and turn-prefix templates and older headings. ``Key Files``, ``<read-files>`` (``-`` binds
words), ``Critical Context`` name none; ``<modified-files>`` lines are changed files."""

TURN_CONTEXT = re.compile(r"^[ \t]*[*_]{0,2}turn context \(split turn\):?[*_]{0,2}:?[ \t]*$", re.I)
"""The line Pi puts between a split turn's history summary and its turn-prefix summary."""
TURN_PREFIX = "split turn"
"""What every item from the turn-prefix summary starts with."""

_FIELD_PATTERNS = tuple(
    (name, re.compile(rf"(?<![\w-])(?:{words})(?![\w-])")) for name, words in _FIELD_WORDS
)
_HEADING = re.compile(r"^ {0,3}(#{1,6})[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$")
_RULE = re.compile(r"^ {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*$")
_FENCE = re.compile(r"^[ \t]*(`{3,}|~{3,})")
_BULLET = re.compile(r"^[ \t]*(?:[-*+]|\d{1,9}[.)])[ \t]+(.*)$")
_OPEN_TAG = re.compile(r"^[ \t]*<([A-Za-z][\w-]*)>[ \t]*$")
_CLOSE_TAG = re.compile(r"^[ \t]*</([A-Za-z][\w-]*)>[ \t]*$")


def heading_field(heading: str) -> str | None:
    """The summary field a heading names on its own, or None."""
    text = heading.lower()
    return next((name for name, pattern in _FIELD_PATTERNS if pattern.search(text)), None)


Origin: TypeAlias = Literal["named", "inherited", "fallback"]
"""How a section got its field: its heading names it, a heading above names it, or neither."""


@dataclass
class _Section:
    level: int
    heading: str
    target: str
    """The summary attribute its items go to."""
    origin: Origin
    line_items: bool = False
    turn: bool = False
    """Part of a split turn's turn-prefix summary."""
    items: list[str] = field(default_factory=list)
    paragraphs: set[int] = field(default_factory=set)
    """Which items are prose paragraphs (the goal may be one of them)."""

    @property
    def prefix(self) -> str | None:
        """What its items start with: the split turn, the heading unless it names the field."""
        parts = [TURN_PREFIX] if self.turn else []
        if self.origin != "named" and self.heading:
            parts.append(self.heading)
        return " — ".join(parts) or None

    @property
    def states_work(self) -> bool:
        """A paragraph here can state the session's goal: the top, a title, or progress."""
        if self.turn:
            return False
        if self.origin == "fallback":
            return self.level <= 1
        return self.target in ("completed", "next")


@dataclass(frozen=True)
class SummaryMapping:
    """A Markdown summary as seven fields, and which heading went to which field."""

    summary: CompactionSummary
    named: tuple[tuple[str, str], ...]
    """(heading, summary attribute) for every heading that names its field."""
    unnamed: tuple[str, ...]
    """Headings that name no field: their items went to ``constraints``, prefixed."""

    def describe(self) -> str:
        """One line: each field and the headings that went there."""
        by_field: dict[str, list[str]] = {}
        for heading, name in self.named:
            by_field.setdefault(FIELD_KEYS[name], []).append(heading)
        parts = [f"{key}: {', '.join(headings)}" for key, headings in by_field.items()]
        if self.unnamed:
            parts.append(
                _("{field} (prefixed): {headings}").format(
                    field=FIELD_KEYS[FALLBACK_FIELD], headings=", ".join(self.unnamed)
                )
            )
        return "; ".join(parts) if parts else _("no headings")


class _Splitter:
    """Walks the Markdown line by line, collecting items under the current section."""

    def __init__(self) -> None:
        self.sections: list[_Section] = [_Section(0, "", FALLBACK_FIELD, "fallback")]
        self.stack: list[_Section] = []
        self.block: list[str] = []
        self.block_kind = ""
        """What the open block is (paragraph, bullet, table, fence, line), "" if none is."""
        self.fence = ""
        self.turn = False

    @property
    def current(self) -> _Section:
        return self.sections[-1]

    def end_block(self) -> None:
        text = "\n".join(self.block).strip("\n")
        if text.strip():
            if self.block_kind == "paragraph":
                self.current.paragraphs.add(len(self.current.items))
            self.current.items.append(text)
        self.block, self.block_kind = [], ""

    def start_block(self, kind: str, first: str) -> None:
        self.end_block()
        self.block = [first]
        self.block_kind = kind

    def open_section(self, level: int, heading: str, *, line_items: bool = False) -> None:
        self.end_block()
        while self.stack and self.stack[-1].level >= level:
            self.stack.pop()
        own = heading_field(heading)
        if self.turn and own == "goal":
            own = "next"  # a split turn's request is the work at hand, not the session's goal
        named = next((s for s in reversed(self.stack) if s.origin == "named"), None)
        origin: Origin = "named" if own else "inherited" if named else "fallback"
        target = own or (named.target if named else FALLBACK_FIELD)
        section = _Section(level, heading, target, origin, line_items, self.turn)
        self.stack.append(section)
        self.sections.append(section)

    def close_tag(self) -> None:
        self.end_block()
        self.stack.clear()
        self.sections.append(_Section(0, "", FALLBACK_FIELD, "fallback", turn=self.turn))

    def feed(self, line: str) -> None:
        if self.block_kind == "fence":
            self.block.append(line)
            if line.strip().startswith(self.fence) and not line.strip().strip(self.fence[0]):
                self.end_block()
            return
        if (fence := _FENCE.match(line)) is not None:
            self.fence = fence.group(1)
            self.start_block("fence", line)
            return
        if (heading := _HEADING.match(line)) is not None:
            self.open_section(len(heading.group(1)), heading.group(2).strip())
        elif (tag := _OPEN_TAG.match(line)) is not None:
            self.turn = False  # Pi appends its file lists after the whole summary, turn context too
            self.open_section(1, tag.group(1), line_items=True)
        elif _CLOSE_TAG.match(line) is not None:
            self.close_tag()
        elif TURN_CONTEXT.match(line) is not None:  # the split turn's turn-prefix summary follows
            self.turn = True
            self.close_tag()
        elif not line.strip() or _RULE.match(line):
            self.end_block()
        elif self.current.line_items:
            self.start_block("line", line.strip())
        elif (bullet := _BULLET.match(line)) is not None:
            self.start_block("bullet", bullet.group(1).strip())
        elif line.lstrip().startswith("|"):
            if self.block_kind != "table":
                self.start_block("table", line.strip())
            else:
                self.block.append(line.strip())
        elif self.block_kind == "paragraph" or (self.block_kind == "bullet" and line[:1].isspace()):
            self.block.append(line.strip())
        else:
            self.start_block("paragraph", line.strip())


def summary_from_markdown(markdown: str, *, session_goal: str = "") -> SummaryMapping:
    """Split a Markdown summary into the seven fields; every body line lands in a field.

    A heading chooses the field (``_FIELD_WORDS``), else inherits the nearest named one above,
    else goes to ``constraints`` prefixed with its text. Items (list entries, paragraphs, tables,
    fences, each line inside Pi's file-list tags) are kept verbatim; after ``Turn Context (split
    turn)`` each starts with ``split turn``. The goal: the goal sections' text, else the first
    paragraph stating the work, else ``session_goal`` (the session's first request), else
    ``NO_GOAL``.
    """
    splitter = _Splitter()
    for line in markdown.replace("\r\n", "\n").split("\n"):
        splitter.feed(line)
    splitter.end_block()
    sections = splitter.sections
    goal = _goal(sections, session_goal)
    fields: dict[str, list[str]] = {name: [] for name in FIELD_KEYS}
    for section in sections:
        items = section.items
        if not items and section.origin == "inherited":
            fields[section.target].append(section.heading)  # an empty step is still a step
            continue
        prefix = section.prefix
        fields[section.target].extend(f"{prefix} — {item}" if prefix else item for item in items)
    stated = "\n".join(fields.pop("goal")).strip()
    if goal and stated:  # goal headings with no text of their own, kept all the same
        fields[FALLBACK_FIELD].append(f"goal — {stated}")
    summary = CompactionSummary(goal=goal or stated, **fields)
    named = tuple((s.heading, s.target) for s in sections if s.origin == "named")
    unnamed = tuple(s.heading for s in sections if s.origin == "fallback" and s.heading and s.items)
    return SummaryMapping(summary, named, unnamed)


def _goal(sections: list[_Section], session_goal: str) -> str:
    """The goal when no goal section has text (its paragraph is taken out of its section)."""
    stated = [s for s in sections if s.target == "goal" and not s.turn]
    if any(item.strip() for s in stated for item in s.items):
        return ""
    for section in sections:
        if section.states_work and section.paragraphs:
            index = min(section.paragraphs)
            section.paragraphs = {i - 1 for i in section.paragraphs if i != index}
            return section.items.pop(index)
    return session_goal.strip() or NO_GOAL
