"""How to call the kit's commands from the user's shell: by name when PATH finds them, else by path.

The kit usually lives in a virtual environment (``.venv``) that nobody activated, so a printed
``checkpoint 11 --lab 11.2`` would not be found; the commands printed are then the ones in
that environment's ``bin`` folder, written out in full.
"""

from __future__ import annotations

import os
import shlex
import shutil
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ..locale import N_, gettext


@dataclass(frozen=True)
class Commands:
    """The words that start each kit command in a printed instruction."""

    checkpoint: str = "checkpoint"
    practice: str = "practice"
    python: str = "python3"


BY_NAME = Commands()
"""The commands by their plain names (an activated environment, or text for any shell)."""


def in_shell(command: str, commands: Commands) -> str:
    """``command``, written with a kit command's plain name (``python3 -m pytest …``,
    ``checkpoint 11``), in ``commands``' form: what this shell runs as printed."""
    word, space, rest = command.partition(" ")
    forms = {
        BY_NAME.checkpoint: commands.checkpoint,
        BY_NAME.practice: commands.practice,
        BY_NAME.python: commands.python,
    }
    return forms.get(word, word) + space + rest


WATCH_KEYS = {"h": N_("hint"), "n": N_("next lab"), "r": N_("re-run"), "q": N_("quit")}
"""The keys ``checkpoint --watch`` takes, and what each does (translated where shown)."""


def key_legend(translate: Callable[[str], str] = gettext) -> str:
    """``h hint · n next lab · r re-run · q quit``, in the current edition (or ``translate``'s)."""
    return " · ".join(f"{key} {translate(what)}" for key, what in WATCH_KEYS.items())


def resolve(
    tool: str, *, executable: str, search_path: str | None, in_venv: bool, name: str | None = None
) -> str:
    """``tool`` when the shell finds this installation's one by that name, else its full path.

    ``name`` is the file in the interpreter's folder (``python`` for ``python3``, say).
    """
    folder = Path(executable).parent
    here = folder / (name or tool)
    found = shutil.which(tool, path=search_path)
    if found is not None and (not in_venv or Path(found).parent == folder):
        return tool
    if here.exists():
        return shlex.quote(str(here))
    return tool


def shell_commands() -> Commands:
    """The commands as the current shell can run them (see the module's docstring)."""

    def find(tool: str, name: str | None = None) -> str:
        return resolve(
            tool,
            executable=sys.executable,
            search_path=os.environ.get("PATH"),
            in_venv=sys.prefix != sys.base_prefix,
            name=name,
        )

    return Commands(
        find("checkpoint"), find("practice"), find("python3", Path(sys.executable).name)
    )
