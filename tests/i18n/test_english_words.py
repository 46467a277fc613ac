"""What counts as English prose in a translation: code, ids and literal text do not."""

from __future__ import annotations

from course.locale.english import english_sentences, english_words, without_literal_blocks

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


def test_an_english_sentence_is_three_prose_words_joined_by_spaces_and_punctuation() -> None:
    said = "测试报告 ok。Not graded: empty submission；the test report says 3/3 tests passed"
    found = english_sentences(said)
    assert found == ["Not graded: empty submission", "the test report says"], found
    assert "tests passed" not in found, "two prose words are no sentence; 3/3 ended the first"


def test_code_ids_data_and_the_chapters_words_are_no_sentence() -> None:
    for text in (
        "path: e0 user 1 · m1 metadata",
        'value: {"goal": "0", "constraints": [], "completed": []}',
        'goal="  Fix resume  " · contract="kinds"',
        "`the code shown here` 和 split_interactions_is_code",
        "Lab 11.1 compaction entry 尚未实现：user message 开始一个 interaction",
        "/tmp/some/path/with/many/words 和 compact-0.firstKeptEntryId",
    ):
        assert english_sentences(text) == [], text


def test_code_ends_a_sentence() -> None:
    assert english_sentences("began from abc123; the kit's is now") == ["the kit's is now"]
