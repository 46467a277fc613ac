"""The pure pieces behind the messages: stack dumps, verdicts, diffs and the flood cut."""

from __future__ import annotations

from pathlib import Path

from course.sandboxed.diffs import explain_case, explain_equality
from course.sandboxed.frames import Frame, dumped_frames, parse_dump
from course.sandboxed.verdicts import MESSAGE_LINES, NOT_RUN, bounded, verdict


def test_a_dump_yields_the_thread_that_ran_the_package_outermost_first(tmp_path: Path) -> None:
    package = tmp_path / "pi_course"
    package.mkdir()
    (package / "compaction.py").write_text("def f():\n    while True:\n        pass\n")
    dump = f"""Timeout (0:00:01.500000)!
Thread 0x00007f00000001 (most recent call first):
  File "/usr/lib/python3.11/threading.py", line 320 in wait
  File "/kit/course/sandboxed/plugin.py", line 70 in watch

Current thread 0x00007f00000002 (most recent call first):
  File "{package}/compaction.py", line 2 in latest_compaction
  File "{package}/context.py", line 186 in build_context
  File "/kit/tests/chapter11/test_11_context_compaction.py", line 47 in build
"""
    assert len(parse_dump(dump)) == 2
    frames = dumped_frames(dump, package, tmp_path)
    assert [f.function for f in frames] == ["build_context", "latest_compaction"]
    assert frames[-1] == Frame("pi_course/compaction.py", 2, "latest_compaction", "while True:")
    assert frames[-1].module == "compaction"


def test_an_exit_in_module_code_during_setup_stops_the_run() -> None:
    frames = [Frame("pi_course/context.py", 9, "<module>", "sys.exit(3)")]
    at_import = verdict("setup", SystemExit(3), frames)
    assert at_import.fatal and at_import.status == "error"
    assert at_import.message.startswith(
        f"{NOT_RUN}the package exited at import: sys.exit(3) (pi_course/context.py:9)"
    )
    in_call = verdict("call", SystemExit(3), [Frame("pi_course/context.py", 9, "f", "")])
    assert not in_call.fatal and in_call.status == "error"
    assert in_call.message.startswith("the code under test called sys.exit(3)")


def test_a_stub_is_pending_and_a_failed_check_keeps_every_line() -> None:
    stub = NotImplementedError("Lab 11.2 interaction groups not implemented yet (f): todo")
    stub.lab_id = "11.2"  # type: ignore[attr-defined]
    assert verdict("call", stub, []).status == "pending"
    text = "Regex pattern did not match.\n  Expected regex: 'read-1'\n  Actual message: 'other'"
    assert verdict("call", AssertionError(text), []).message == text


def test_only_a_flood_is_cut_and_the_cut_says_how_much() -> None:
    whole = "\n".join(f"line {n}" for n in range(MESSAGE_LINES))
    assert bounded(whole) == whole
    flood = "\n".join(f"line {n}" for n in range(MESSAGE_LINES + 50))
    cut = bounded(flood).splitlines()
    assert len(cut) == MESSAGE_LINES
    assert cut[-1] == "[51 more lines of this message not shown]"


def test_short_sides_are_shown_on_a_line_each_long_ones_as_a_whole_diff() -> None:
    assert explain_equality(["u2", "a2"], ["u3"]) == [
        "the values differ:",
        "expected: ['u3']",
        "got:      ['u2', 'a2']",
    ]
    got = {f"key {n}": list(range(n)) for n in range(12)}
    expected = dict(got) | {"key 5": [0]}
    lines = explain_equality(got, expected)
    assert lines[0].startswith("the values differ (- expected, + got")
    assert any(x.startswith("- ") and "'key 5': [0]" in x for x in lines)
    assert any(x.startswith("+ ") and "'key 5': [0, 1, 2, 3, 4]" in x for x in lines)
    assert any("'key 11': [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10]" in x for x in lines), "all shown"


def test_a_named_comparison_leads_with_its_case_and_shows_text_as_text() -> None:
    said = explain_case("summary of u1: content", "检查 session", "确认 JSONL")
    assert said.splitlines() == [
        "summary of u1: content: the values differ:",
        "  expected: '确认 JSONL'",
        "  got:      '检查 session'",
    ]
    long = explain_case("kept_entry_ids", [f"entry-{n}" for n in range(30)], ["u1"])
    first, *rest = long.splitlines()
    assert first.startswith("kept_entry_ids: the values differ (- expected, + got")
    assert all(line.startswith("  ") for line in rest) and "\\u" not in long
    failed = verdict("call", AssertionError(said), [])
    assert (failed.status, failed.message) == ("failed", said)


def _long_answer_message() -> str:
    """A test's message where a 2,000-line answer differs from the expected in one line."""
    expected = [f"entry {n}" for n in range(2000)]
    got = [*expected[:1500], "entry 1500 (changed)", *expected[1501:]]
    try:
        assert got == expected, explain_case("the suffix", got, expected)
    except AssertionError as error:
        return verdict("call", error, []).message
    raise AssertionError("unreachable")


def test_a_long_diff_shows_its_first_differing_line_near_the_top() -> None:
    """Issue 55: the one differing line of a 2,000-line answer was past the message's cut
    (``[1984 more lines … not shown]``); each change now shows with a few lines around it."""
    lines = _long_answer_message().splitlines()
    changed = [n for n, line in enumerate(lines) if line.lstrip().startswith(("- ", "+ "))]
    assert changed and changed[0] < 8, lines[:12]  # within a notebook's shown lines, too
    assert lines[changed[0]].endswith("'entry 1500',") and "(changed)" in lines[changed[1]]
    # what pytest adds below (its own explanation of ==) grows with its verbosity and with CI
    ours = next((n for n, line in enumerate(lines) if line.lstrip().startswith("assert ")), None)
    assert lines[1] == "      … 1497 lines the same in both" and (ours or len(lines)) < 20, lines
    assert "not shown" not in "\n".join(lines[:ours])


def test_a_long_diff_says_what_it_skips_in_chinese(zh: None) -> None:
    lines = _long_answer_message().splitlines()
    assert lines[1] == "      … 1497 行两边相同", lines[:3]
    assert any("(changed)" in line for line in lines[:10]), lines[:10]
