"""The dump of a test that runs too long: written while the code runs on, never crashing it."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from course.sandboxed.frames import parse_dump

CHILD = """
import os, sys
from course.sandboxed.stackdump import StackDumper
dumper = StackDumper(os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT | os.O_TRUNC), 0.2)
dumper.arm()
def spin():
{body}
spin()
"""


def dump_of(tmp_path: Path, body: str, wait: float = 20.0) -> tuple[str, int | None]:
    """Start a child running ``body`` with a dump armed 0.2 s later; the dump, and whether
    the child had exited (its code) a second after the dump stopped growing."""
    dump = tmp_path / "dump.txt"
    script = tmp_path / "child.py"
    script.write_text(CHILD.format(body=textwrap.indent(textwrap.dedent(body), "    ")))
    child = subprocess.Popen([sys.executable, str(script), str(dump)])
    try:
        deadline = time.monotonic() + wait
        seen = ""
        while time.monotonic() < deadline and child.poll() is None:
            text = dump.read_text() if dump.exists() else ""
            if text and text == seen:
                break  # written, and no longer growing
            seen = text
            time.sleep(0.05)  # often: the child spins until its dump is seen, then a second more
        time.sleep(1.0)  # the child runs on after its dump
        return dump.read_text(), child.poll()
    finally:
        child.kill()
        child.wait()


def functions(text: str) -> list[str]:
    return [function for thread in parse_dump(text) for _, _, function in thread]


@pytest.mark.parametrize("attempt", range(5))
def test_an_endless_loop_of_generator_frames_is_dumped_and_keeps_running(
    tmp_path: Path, attempt: int
) -> None:
    text, exited = dump_of(
        tmp_path,
        """
        while any(x for x in range(3)):
            pass
        """,
    )
    assert exited is None, f"the child died (exit {exited}) while its stacks were dumped"
    assert "spin" in functions(text) and "<module>" in functions(text)
    # faulthandler's format, which the parent reads; faulthandler itself would open with
    # "Timeout (…)!", and it is the one that crashes here
    assert text.startswith("Thread 0x"), "written by the Python thread, not faulthandler"


def test_code_holding_the_interpreter_in_c_is_dumped_by_the_fallback(tmp_path: Path) -> None:
    text, exited = dump_of(tmp_path, "sum(range(10**12))\n")
    assert exited is None
    assert "spin" in functions(text)
    assert text.startswith("Timeout ("), "written by faulthandler's fallback"


def test_a_disarmed_dump_writes_nothing(tmp_path: Path) -> None:
    text, exited = dump_of(
        tmp_path,
        """
        import time
        dumper.disarm()
        time.sleep(30)
        """,
        wait=2.0,
    )
    assert exited is None and text == ""
