"""What the copy check takes out before fingerprinting (``course/grading/records/normalise.py``):
what a script can change without changing what the code does, and nothing else."""

from __future__ import annotations

import ast
import textwrap
import time

from hypothesis import given, settings
from hypothesis import strategies as st

from course.grading.records.normalise import normalised


def shape(source: str, keep: frozenset[str] = frozenset({"lab"})) -> str:
    """The module as normalised, without positions."""
    return ast.dump(normalised(ast.parse(textwrap.dedent(source)), keep))


PLAIN = """
def lab(items, limit):
    total = 0
    kept = []
    for item in items:
        total += len(item)
        if total > limit:
            break
        kept.append(item)
    return kept
"""


def test_padding_of_every_kind_is_taken_out() -> None:
    padded = """
    import sys

    def noop(*values):
        return None

    def lab(items, limit):
        '''A docstring.'''
        total = 0
        unused = 3 * 7 + 1
        chained = unused
        pass
        kept = []
        if 1 - 1:
            kept = None
        while False:
            total = -1
        print(total, kept)
        noop(items)
        sys.stdout.write("")
        len(items)
        items.copy()
        total = total
        for item in items:
            total += len(item)
            note = f"{item}"
            if total > limit:
                break
                total = 0
            kept.append(item)
        return kept
        kept = []
    """
    assert shape(padded) == shape("import sys\n\ndef noop(*values):\n    return None\n" + PLAIN)


def test_what_is_read_or_may_change_something_stays() -> None:
    """A store read anywhere (a nested function included), a ``global``, a call given the
    function's own names, and a call that changes an object are the code's own."""
    source = """
    import sys

    def lab(items, limit):
        global seen
        seen = limit
        total = helper(items)
        later = lambda: total
        sys.stderr.write(str(limit))
        items.append(limit)
        return later
    """
    kept = ast.unparse(normalised(ast.parse(textwrap.dedent(source)), frozenset({"lab"})))
    for line in ("seen = limit", "total = helper(items)", "later = lambda: total"):
        assert line in kept, kept
    assert "sys.stderr.write(str(limit))" in kept and "items.append(limit)" in kept, kept


def test_a_helper_called_once_is_put_back_and_one_called_twice_is_not() -> None:
    split = """
    def step(items, limit):
        kept = [item for item in items if len(item) <= limit]
        return kept

    def lab(items, limit):
        kept = step(items, limit)
        return kept
    """
    whole = """
    def lab(items, limit):
        kept = [item for item in items if len(item) <= limit]
        return kept
    """
    assert shape(split) == shape(whole)
    twice = split.replace("        return kept\n    ", "        return kept + step(kept, 0)\n    ")
    assert twice.count("step(") == 3
    kept = normalised(ast.parse(textwrap.dedent(twice)), frozenset({"lab"}))
    assert "def step" in ast.unparse(kept)
    lab_called = split.replace("def step", "def other").replace("step(", "other(")
    kept = normalised(ast.parse(textwrap.dedent(lab_called)), frozenset({"lab", "other"}))
    assert "def other" in ast.unparse(kept), "a lab function is never put back"


def test_folding_never_computes_a_huge_constant() -> None:
    source = "def lab(x):\n    a = 9 ** 9 ** 9\n    b = 'a' * 10 ** 9\n    return a, b, 2 ** 10\n"
    started = time.perf_counter()
    folded = ast.unparse(normalised(ast.parse(source), frozenset({"lab"})))
    assert time.perf_counter() - started < 5, "nothing huge was computed"
    assert "9 ** 387420489" in folded and "'a' * 1000000000" in folded, folded
    assert "1024" in folded, folded


def test_deep_nesting_never_recurses() -> None:
    source = "def lab(x):\n    return 1" + " + 1" * 900 + " + x\n"
    assert "901 + x" in ast.unparse(normalised(ast.parse(source), frozenset({"lab"})))


INDEPENDENT = [
    "first = items[0]",
    "size = len(items)",
    "label = f'{limit}'",
    "half = limit / 2",
    "empty = not items",
]


@settings(max_examples=25, deadline=None)
@given(st.permutations(INDEPENDENT))
def test_independent_statements_take_one_order_whatever_their_order(order: list[str]) -> None:
    def source(lines: list[str]) -> str:
        body = "".join(f"    {line}\n" for line in lines)
        return f"def lab(items, limit):\n{body}    return first, size, label, half, empty\n"

    assert shape(source(order)) == shape(source(INDEPENDENT))
