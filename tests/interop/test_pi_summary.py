"""Pi's Markdown summaries split into the seven fields, with no body line left behind."""

from __future__ import annotations

import gzip
import json
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from course.interop import pi_session_files, summary_from_markdown
from course.interop.pi_summary import NO_GOAL, heading_field

PI_TEMPLATE = """## Goal
Refactor the parser.

## Constraints & Preferences
- Keep the public API

## Progress
### Done
- [x] Split the module

### In Progress
- [ ] Port the tests

### Blocked
- CI is red on main

## Key Decisions
- **One reader**: fewer paths

## Next Steps
1. Fix CI
2. Release

## Critical Context
- Error text must name the line

<read-files>
src/a.ts
</read-files>

<modified-files>
src/b.ts
src/c.ts
</modified-files>"""


def all_text(markdown: str) -> str:
    summary = summary_from_markdown(markdown).summary
    fields = [
        summary.constraints,
        summary.completed,
        summary.decisions,
        summary.changed_files,
        summary.unresolved,
        summary.next,
    ]
    return "\n".join([summary.goal, *(item for items in fields for item in items)])


def test_pis_own_template_lands_field_by_field() -> None:
    summary = summary_from_markdown(PI_TEMPLATE).summary
    assert summary.goal == "Refactor the parser."
    assert summary.constraints == [
        "Keep the public API",
        "Critical Context — Error text must name the line",
        "read-files — src/a.ts",
    ]
    assert summary.completed == ["[x] Split the module"]
    assert summary.next == ["[ ] Port the tests", "Fix CI", "Release"]
    assert summary.unresolved == ["CI is red on main"]
    assert summary.decisions == ["**One reader**: fewer paths"]
    assert summary.changed_files == ["src/b.ts", "src/c.ts"]


@pytest.mark.parametrize(
    ("heading", "field"),
    [
        ("Goal", "goal"),
        ("Constraints & Preferences", "constraints"),
        ("User Preferences", "constraints"),
        ("Progress", "completed"),
        ("Done", "completed"),
        ("Completed Work (WP1-WP16)", "completed"),
        ("In Progress", "next"),
        ("Next Steps (WP14-WP20)", "next"),
        ("Current Task: File Reorganization", "next"),
        ("Blocked", "unresolved"),
        ("Open questions", "unresolved"),
        ("Key Decisions Made", "decisions"),
        ("Agreed Structure", "decisions"),
        ("Files Created/Modified", "changed_files"),
        ("modified-files", "changed_files"),
        ("read-files", None),
        ("Key Files", None),
        ("Important Files", None),
        ("Current State", "completed"),
        ("Original Request", "next"),
        ("Early Progress", "completed"),
        ("Context for Suffix", None),
        ("Critical Context", None),
        ("Branch", None),
        ("Abandoned ideas", None),
    ],
)
def test_headings_name_fields_by_whole_words(heading: str, field: str | None) -> None:
    assert heading_field(heading) == field


def test_a_heading_that_names_no_field_inherits_or_falls_back_with_a_prefix() -> None:
    markdown = "# Title\n## Next Steps\n### WP1: parser\n- split\n### WP2: docs\n## Branch\n`main`"
    mapping = summary_from_markdown(markdown)
    assert mapping.summary.next == ["WP1: parser — split", "WP2: docs"]
    assert mapping.summary.constraints == ["Branch — `main`"]
    assert mapping.summary.goal == NO_GOAL  # never a heading, such as the title
    assert summary_from_markdown(markdown, session_goal=" tidy up ").summary.goal == "tidy up"
    assert mapping.unnamed == ("Branch",)
    assert "next: Next Steps" in mapping.describe()


def test_fences_tables_and_paragraphs_stay_whole() -> None:
    markdown = "## Decisions\n```ts\n# not a heading\nx()\n```\n| a | b |\n|---|---|\ntwo\nlines"
    assert summary_from_markdown(markdown).summary.decisions == [
        "```ts\n# not a heading\nx()\n```",
        "| a | b |\n|---|---|",
        "two\nlines",
    ]


def test_an_indented_line_continues_its_list_item() -> None:
    markdown = "## Done\n- first\n  still first\n- second"
    assert summary_from_markdown(markdown).summary.completed == ["first\nstill first", "second"]


@pytest.mark.parametrize(
    ("markdown", "goal"),
    [
        ("", NO_GOAL),
        ("---\n\n", NO_GOAL),
        ("just text", "just text"),
        ("## Goal\n\n## Done\n- x", NO_GOAL),
        ("# Checkpoint\n## Progress\nPorting the parser.\n### Done\n- x", "Porting the parser."),
        ("## Branch\n`main`", NO_GOAL),
    ],
)
def test_the_goal_is_never_empty(markdown: str, goal: str) -> None:
    assert summary_from_markdown(markdown).summary.goal == goal


# --------------------------------------------------------------------------- no line lost

BULLET = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+")


def body_lines(markdown: str) -> list[str]:
    """Lines that carry text: not headings, rules, fence markers, tags or blank lines."""
    lines, fenced = [], False
    for line in markdown.split("\n"):
        stripped = line.strip()
        if stripped.startswith("```"):
            fenced = not fenced
            continue
        if fenced:
            if stripped:
                lines.append(stripped)
            continue
        if not stripped or stripped.startswith("#") or stripped == "---":
            continue
        if stripped.strip("*_: ").lower() == "turn context (split turn)":
            continue  # structure: the items after it say "split turn"
        if re.fullmatch(r"</?[\w-]+>", stripped):
            continue
        lines.append(BULLET.sub("", stripped).strip())
    return [line for line in lines if line]


def shipped_summaries() -> list[str]:
    """Every compaction summary in the shipped sessions, in file order."""
    found = []
    for path in pi_session_files().values():
        with gzip.open(path, "rt", encoding="utf-8") as lines:
            for line in lines:
                if '"type":"compaction"' in line:
                    found.append(json.loads(line)["summary"])
    return found


def test_no_body_line_of_the_real_summaries_is_lost() -> None:
    summaries = shipped_summaries()
    assert len(summaries) == 3
    for markdown in summaries:
        text = all_text(markdown)
        missing = [line for line in body_lines(markdown) if line not in text]
        assert missing == []


HEADING_LINE = re.compile(r"^\s*#{1,6}\s+(.*?)\s*$", re.M)


@pytest.mark.parametrize("index", range(3))
def test_each_real_goal_is_the_sessions_goal_never_a_heading(index: int) -> None:
    markdown = shipped_summaries()[index]
    goal = summary_from_markdown(markdown).summary.goal
    assert goal not in HEADING_LINE.findall(markdown) and goal != NO_GOAL
    assert goal in markdown and not goal.startswith(("#", "**"))


def test_the_split_turn_summary_lands_field_by_field() -> None:
    summary = summary_from_markdown(shipped_summaries()[2]).summary
    assert summary.goal == (
        "Reviewing and updating pi-coding-agent documentation to ensure it matches the actual "
        "source code implementation."
    )
    assert summary.next[-1].startswith("split turn — User asked to review `custom-tools.md`")
    turn_done = [item for item in summary.completed if item.startswith("split turn — ")]
    assert turn_done[-1].startswith("split turn — The custom-tools.md now has a proper intro")
    assert not any("Context Checkpoint Summary" in item for item in summary.constraints)
    assert summary.changed_files == []  # the summary names files it read and edited, in prose


def test_key_files_are_named_files_not_changed_ones() -> None:
    summary = summary_from_markdown(shipped_summaries()[1]).summary
    assert summary.changed_files == []
    assert next(i for i in summary.constraints if i.startswith("Key Files — ")).startswith(
        "Key Files — Plan: `/Users/badlogic/"
    )


def test_pis_turn_prefix_template_is_marked_as_the_split_turn() -> None:
    markdown = (
        "## Goal\nShip it.\n\n---\n\n**Turn Context (split turn):**\n\n"
        "## Original Request\nFix the parser.\n\n## Early Progress\n- read the code\n\n"
        "## Context for Suffix\n- the tests are red"
    )
    summary = summary_from_markdown(markdown).summary
    assert summary.goal == "Ship it."
    assert summary.next == ["split turn — Fix the parser."]
    assert summary.completed == ["split turn — read the code"]
    assert summary.constraints == ["split turn — Context for Suffix — the tests are red"]


def test_file_lists_after_a_turn_context_are_plain_paths() -> None:
    markdown = (
        "## Goal\nShip it.\n\n---\n\n**Turn Context (split turn):**\n\n"
        "## Original Request\nFix the cart.\n\n"
        "<read-files>\nsrc/lib/money.ts\n</read-files>\n\n"
        "<modified-files>\nsrc/components/Cart.tsx\n</modified-files>"
    )
    summary = summary_from_markdown(markdown).summary
    assert summary.changed_files == ["src/components/Cart.tsx"]
    assert summary.constraints == ["read-files — src/lib/money.ts"]
    assert summary.next == ["split turn — Fix the cart."]


WORDS = st.sampled_from(
    ["goal", "next", "done", "files", "decisions", "blocked", "rules", "alpha", "beta", "x1"]
)
PHRASE = st.lists(WORDS, min_size=1, max_size=4).map(" ".join)
BLOCK = st.one_of(
    st.tuples(st.just("heading"), st.integers(1, 3), PHRASE).map(
        lambda t: ["#" * t[1] + " " + t[2]]
    ),
    PHRASE.map(lambda p: ["- " + p]),
    PHRASE.map(lambda p: ["3. " + p]),
    PHRASE.map(lambda p: [p]),
    st.lists(PHRASE, min_size=1, max_size=3).map(lambda rows: [f"| {r} |" for r in rows]),
    st.lists(st.one_of(PHRASE, PHRASE.map(lambda p: "# " + p)), min_size=1, max_size=3).map(
        lambda inner: ["```", *inner, "```"]
    ),
    st.just(["---"]),
    st.just([""]),
    st.tuples(st.sampled_from(["read-files", "modified-files"]), st.lists(PHRASE, max_size=3)).map(
        lambda t: [f"<{t[0]}>", *t[1], f"</{t[0]}>"]
    ),
)
MARKDOWN = st.lists(BLOCK, max_size=12).map(
    lambda blocks: "\n".join(line for block in blocks for line in block)
)


@settings(max_examples=200, deadline=None)
@given(MARKDOWN)
def test_every_body_line_lands_in_some_field(markdown: str) -> None:
    mapping = summary_from_markdown(markdown)
    assert mapping.summary.goal.strip()
    text = all_text(markdown)
    assert [line for line in body_lines(markdown) if line not in text] == []
    assert summary_from_markdown(markdown) == mapping


SHIPPED_HEADINGS = [
    (
        {
            "Goal": "goal",
            "Key Decisions Made": "decisions",
            "Completed Work Packages (WP1-WP13)": "completed",
            "Files Created/Modified": "changed_files",
            "Next Steps (WP14-WP20)": "next",
            "WP14: Create main-new.ts (NEXT)": "next",
        },
        ("Branch", "AgentSession Key API", "Testing", "Commands"),
    ),
    (
        {
            "Goal": "goal",
            "Completed Work (WP1-WP16)": "completed",
            "Current Task: File Reorganization": "next",
            "Agreed Structure": "decisions",
            "Next Steps": "next",
            "User Preferences": "constraints",
        },
        ("Branch", "Key Files", "Commands"),
    ),
    (
        {
            "Current Progress": "completed",
            "Completed": "completed",
            "Committed": "completed",
            "Remaining Work": "next",
            "User Preferences": "constraints",
            "Original Request": "next",
            "Work Completed": "completed",
            "Current State": "completed",
        },
        ("Key Patterns Established",),
    ),
]


@pytest.mark.parametrize(("index", "expected"), list(enumerate(SHIPPED_HEADINGS)))
def test_each_shipped_summary_lands_heading_by_heading(
    index: int, expected: tuple[dict[str, str], tuple[str, ...]]
) -> None:
    mapping = summary_from_markdown(shipped_summaries()[index])
    assert dict(mapping.named) == expected[0]
    assert mapping.unnamed == expected[1]
