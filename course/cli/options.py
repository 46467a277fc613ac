"""The command line around argparse: options read before parsing (the edition must be chosen
before the parser's help is built) and help wrapped by terminal columns."""

from __future__ import annotations

import argparse
import re
from collections.abc import Iterable, Sequence

from ..harness.manifest import ManifestError, available_chapters
from ..locale import N_, gettext, ngettext
from ..sandboxed.columns import columns, wide, wrap

ARGPARSE_WORDS = (
    N_("usage: "),
    N_("options"),
    N_("positional arguments"),
    N_("show this help message and exit"),
    N_("%(prog)s: error: %(message)s\n"),
    N_("argument %(argument_name)s: %(message)s"),
    N_("the following arguments are required: %s"),
    N_("one of the arguments %s is required"),
    N_("unrecognized arguments: %s"),
    N_("not allowed with argument %s"),
    N_("ambiguous option: %(option)s could match %(matches)s"),
    N_("invalid choice: %(value)r (choose from %(choices)s)"),
    N_("invalid %(type)s value: %(value)r"),
    N_("expected one argument"),
    N_("expected at least one argument"),
    N_("expected at most one argument"),
    N_("ignored explicit argument %r"),
)
"""argparse's own words a learner meets (its help, its usage errors), in the kit's catalog."""
ngettext("expected %s argument", "expected %s arguments", 2)  # extracted for argparse too

# argparse looks its words up with the module's ``_`` and ``ngettext``: through the kit's
# catalog, in the edition this process speaks, they read like every other line of a door.
setattr(argparse, "_", gettext)  # noqa: B010 (the stub does not declare the name)
setattr(argparse, "ngettext", ngettext)  # noqa: B010


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


HEADING = re.compile(r"^(\S[^\n]*[\u4e00-\u9fff]):$", re.MULTILINE)


class HelpFormatter(argparse.HelpFormatter):
    """argparse's help with Chinese descriptions wrapped by columns (a wide character takes two)."""

    def format_help(self) -> str:
        """argparse's help, a Chinese section heading ending in a full-width colon."""
        return HEADING.sub("\\1\uff1a", super().format_help())

    def _format_usage(
        self,
        usage: str | None,
        actions: Iterable[argparse.Action],
        groups: Iterable[argparse._MutuallyExclusiveGroup],
        prefix: str | None,
    ) -> str:
        """argparse's usage, its later lines under the first option by columns: argparse indents
        them by the characters of a Chinese prefix, whose characters take two columns each."""
        text = super()._format_usage(usage, actions, groups, prefix)
        first, *rest = text.split("\n")
        at = first.find(self._prog)
        extra = columns(first[:at]) - at if at > 0 else 0
        if extra <= 0 or not rest:
            return text
        rest = [" " * extra + line if line.startswith(" ") else line for line in rest]
        return "\n".join([first, *rest])

    def _split_lines(self, text: str, width: int) -> list[str]:
        if not wide(text):
            return super()._split_lines(text, width)
        return wrap(" ".join(text.split()), width)

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        if not wide(text):
            return super()._fill_text(text, width, indent)
        return "\n".join(wrap(" ".join(text.split()), width, indent, indent))


def chapter_help() -> str:
    """The help of a command's chapter argument: the chapters the kit finds, by id."""
    try:
        chapters = gettext(", ").join(available_chapters())
    except ManifestError as error:  # the command says so when it loads the chapter
        chapters = str(error)
    return gettext("chapter id ({chapters})").format(chapters=chapters)
