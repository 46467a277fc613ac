"""What counts as English prose in a translation: code, ids and literal text do not."""

from __future__ import annotations

from course.locale.english import english_words, without_literal_blocks

LAYOUT = "写出来是::\n\n    [Compaction summary of earlier messages]\n    Goal: Fix resume\n"


def test_prose_english_is_found() -> None:
    assert english_words("摘要 keeps the history") == ["keeps", "the", "history"]


def test_a_literal_block_after_double_colon_is_program_output_not_prose() -> None:
    assert english_words(LAYOUT) == []


def test_prose_after_a_literal_block_is_read_again() -> None:
    text = LAYOUT + "\n然后 resume 它。"
    assert english_words(text) == ["resume"]


def test_a_line_ending_in_double_colon_opens_no_block_for_an_unindented_line() -> None:
    text = "例如::\nnext line"
    assert without_literal_blocks(text) == text
    assert english_words(text) == ["next", "line"]


def test_a_literal_block_keeps_the_text_lines_in_place() -> None:
    blanked = without_literal_blocks(LAYOUT)
    assert blanked.split("\n") == ["写出来是::", "", "", "", ""]


def test_an_inline_literal_wrapped_onto_the_next_line_is_code() -> None:
    text = '它的 call 是 ``{"type":\n"toolCall", "id": ...}`` 块'
    assert english_words(text) == []


def test_an_inline_literal_does_not_run_over_two_line_breaks() -> None:
    text = "一个 ``open\nprose here\nclose`` 结尾"
    assert "prose" in english_words(text)
