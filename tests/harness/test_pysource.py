"""Parsing from threads: CPython 3.11's AST converter is not thread-safe, so the kit parses
under one lock, and on 3.11 so does every other ``ast.parse`` in the process (hypothesis's)."""

from __future__ import annotations

import ast
import sys
import threading
import time
from typing import Any

import pytest

from course.harness import pysource


@pytest.mark.skipif(sys.version_info >= (3, 12), reason="3.12 converts per thread")
def test_every_ast_parse_in_the_process_takes_the_lock() -> None:
    assert ast.parse is not pysource._unlocked_parse, "importing the harness guards ast.parse"


def test_two_threads_never_parse_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    inside, most = 0, 0
    count = threading.Lock()
    unlocked = pysource._unlocked_parse

    def slow(*args: Any, **kwargs: Any) -> Any:
        nonlocal inside, most
        with count:
            inside += 1
            most = max(most, inside)
        time.sleep(0.01)  # a thread switch here is what the 3.11 converter cannot survive
        try:
            return unlocked(*args, **kwargs)
        finally:
            with count:
                inside -= 1

    monkeypatch.setattr(pysource, "_unlocked_parse", slow)
    calls = [lambda: pysource.parse("x = [[1]]"), lambda: ast.parse("y = {'a': (1,)}")]
    threads = [threading.Thread(target=calls[n % 2]) for n in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if sys.version_info < (3, 12):
        assert most == 1, "the kit's parses and ast.parse elsewhere take turns"
    else:
        assert most >= 1
