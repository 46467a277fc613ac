"""How to call the kit's commands from the user's shell: by name when PATH finds them, else by path
(the kit usually lives in a ``.venv`` nobody activated)."""

from __future__ import annotations

import functools
import os
import shlex
import shutil
import sys
from collections.abc import Callable
from dataclasses import astuple, dataclass
from pathlib import Path

from ..locale import N_, gettext


@dataclass(frozen=True)
class Commands:
    """The words that start each kit command in a printed instruction."""

    checkpoint: str = "checkpoint"
    practice: str = "practice"
    python: str = "python3"


BY_NAME = Commands()  # by their plain names: an activated environment, or text for any shell


def in_shell(command: str, commands: Commands) -> str:
    """``command`` (``checkpoint 11``, ``python3 -m pytest …``) in ``commands``' form."""
    word, space, rest = command.partition(" ")
    forms: dict[str, str] = dict(zip(astuple(BY_NAME), astuple(commands), strict=True))
    return forms.get(word, word) + space + rest


WATCH_KEYS = {"h": N_("hint"), "n": N_("next lab"), "r": N_("re-run"), "q": N_("quit")}


def key_legend(translate: Callable[[str], str] = gettext) -> str:
    """``h hint · n next lab · r re-run · q quit``, in the current edition (or ``translate``'s)."""
    return " · ".join(f"{key} {translate(what)}" for key, what in WATCH_KEYS.items())


def resolve(
    tool: str, *, executable: str, search_path: str | None, in_venv: bool, name: str | None = None
) -> str:
    """``tool`` if the shell finds this installation's by that name, else the path of ``name``."""
    folder = Path(executable).parent
    here = folder / (name or tool)
    found = shutil.which(tool, path=search_path)
    if found is not None and (not in_venv or Path(found).parent == folder):
        return tool
    return shlex.quote(str(here)) if here.exists() else tool


def shell_commands() -> Commands:
    """The commands as the current shell can run them (see the module's docstring)."""
    find = functools.partial(
        resolve,
        executable=sys.executable,
        search_path=os.environ.get("PATH"),
        in_venv=sys.prefix != sys.base_prefix,
    )
    python = find("python3", name=Path(sys.executable).name)
    return Commands(find("checkpoint"), find("practice"), python)
