"""Small Pi session files written for the tests: entry builders in Pi's own JSON shapes."""

from __future__ import annotations

import gzip
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from course.context import BuildContextResult, build_context
from course.session import SessionEntry

EPOCH_2025 = 1_735_689_600_000
"""2025-01-01T00:00:00Z in Unix milliseconds."""


def at(second: int) -> str:
    """Pi's entry timestamp (an ISO string) ``second`` seconds into 2025."""
    minutes, seconds = divmod(second, 60)
    return f"2025-01-01T00:{minutes:02d}:{seconds:02d}.000Z"


def ms(second: int) -> int:
    """The chapter timestamp the importer gives ``at(second)``."""
    return EPOCH_2025 + second * 1000


def header(version: int | None = None, **fields: Any) -> dict[str, Any]:
    line: dict[str, Any] = {"type": "session", "id": "sess-1", "timestamp": at(0), "cwd": "/w"}
    if version is not None:
        line["version"] = version
    return line | fields


def message(message: dict[str, Any], second: int = 1, **fields: Any) -> dict[str, Any]:
    return {"type": "message", "timestamp": at(second), "message": message} | fields


def user(text: str, second: int = 1, **fields: Any) -> dict[str, Any]:
    return message(
        {"role": "user", "content": [{"type": "text", "text": text}], "timestamp": 1},
        second,
        **fields,
    )


def call(call_id: str, name: str = "read", **arguments: Any) -> dict[str, Any]:
    return {"type": "toolCall", "id": call_id, "name": name, "arguments": arguments}


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


def assistant(
    *blocks: dict[str, Any], second: int = 2, stop: str = "toolUse", **fields: Any
) -> dict[str, Any]:
    body = {
        "role": "assistant",
        "content": list(blocks),
        "api": "anthropic-messages",
        "provider": "anthropic",
        "model": "claude",
        "usage": {"input": 1, "output": 1},
        "stopReason": stop,
        "timestamp": 2,
    }
    return message(body, second, **fields)


def result(
    call_id: str, name: str = "read", output: str = "ok", second: int = 3, **fields: Any
) -> dict[str, Any]:
    body = {
        "role": "toolResult",
        "toolCallId": call_id,
        "toolName": name,
        "content": [text(output)],
        "isError": False,
        "timestamp": 3,
    }
    return message(body, second, **fields)


def entry(kind: str, second: int = 4, **fields: Any) -> dict[str, Any]:
    return {"type": kind, "timestamp": at(second)} | fields


def tree(
    lines: list[dict[str, Any]], parents: dict[int, int | None] | None = None
) -> list[dict[str, Any]]:
    """v2/v3 entries: ids ``e1``, ``e2``… and each parent the previous entry unless given.

    ``parents`` maps an entry's position (1-based, header excluded) to its parent's position.
    """
    out = []
    for position, line in enumerate(lines, start=1):
        parent = (parents or {}).get(position, position - 1)
        out.append(line | {"id": f"e{position}", "parentId": f"e{parent}" if parent else None})
    return out


def jsonl(lines: list[dict[str, Any]]) -> bytes:
    return "".join(json.dumps(line) + "\n" for line in lines).encode("utf-8")


def write(path: Path, lines: list[dict[str, Any]], *, gz: bool = False) -> Path:
    data = jsonl(lines)
    path.write_bytes(gzip.compress(data) if gz else data)
    return path


def estimate(message: dict[str, Any]) -> int:
    """A test estimator: a token per four characters of the content's JSON, plus one."""
    return len(json.dumps(message["content"])) // 4 + 1


def project(path: Sequence[SessionEntry], max_tokens: int = 200_000) -> BuildContextResult:
    """The chapter's projection of ``path`` with a fixed small reserve and margin."""
    return build_context(
        path,
        max_tokens=max_tokens,
        system_prompt="You are a coding agent.",
        reserved_output=100,
        safety_margin=10,
        estimate_tokens=estimate,
    )
