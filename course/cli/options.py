"""Options read before parsing: the edition must be chosen before the parser's help is built."""

from __future__ import annotations

from collections.abc import Sequence


def given(argv: Sequence[str], option: str) -> str | None:
    """The last value given to ``option`` (``--lang zh`` or ``--lang=zh``), as argparse takes it."""
    value = None
    for index, word in enumerate(argv):
        if word == "--":
            break
        if word == option and index + 1 < len(argv):
            value = argv[index + 1]
        elif word.startswith(option + "="):
            value = word.partition("=")[2]
    return value
