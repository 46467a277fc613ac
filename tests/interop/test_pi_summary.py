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
    assert mapping.summary.goal == "Title"  # no goal section: the first heading naming no field
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
        ("## Goal\n\n## Done\n- x", "x"),
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
        if re.fullmatch(r"</?[\w-]+>", stripped):
            continue
        lines.append(BULLET.sub("", stripped).strip())
    return [line for line in lines if line]


def test_no_body_line_of_the_real_summaries_is_lost() -> None:
    path = pi_session_files()["before-compaction"]
    with gzip.open(path, "rt") as lines:
        records = [json.loads(line) for line in lines]
    summaries = [r["summary"] for r in records if r["type"] == "compaction"]
    assert len(summaries) == 2
    for markdown in summaries:
        text = all_text(markdown)
        missing = [line for line in body_lines(markdown) if line not in text]
        assert missing == []


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
