"""The chapter's worked data: the nine-entry path, its estimator, and the compaction summaries.

Everything here is plain JSON data or a pure function of a message dict, so the same module
serves the reference implementation and a learner's workspace alike (it imports no lab code).
"""

from __future__ import annotations

import copy
import math
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the data stays importable without any implementation of the labs
    from .session import SessionEntry

Message = dict[str, Any]

SYSTEM_PROMPT = "sys"


@dataclass(frozen=True)
class Budget:
    """The options ``build_context`` takes besides the path and the estimator."""

    max_tokens: float
    system_prompt: str
    reserved_output: float
    safety_margin: float

    def options(self) -> dict[str, Any]:
        """Keyword arguments for ``build_context(path, **budget.options(), estimate_tokens=…)``."""
        return asdict(self)


CHAPTER_BUDGET = Budget(
    max_tokens=31, system_prompt=SYSTEM_PROMPT, reserved_output=4, safety_margin=2
)
"""The chapter's example: 31 tokens, a 3-token system prompt, 4 reserved, a margin of 2."""

OVERFLOW_MAX_TOKENS = 19
"""With 19, only 10 tokens are left for messages: the newest group (15) overflows alone."""


def _user(entry_id: str, parent: str | None, ts: int, text: str) -> dict[str, Any]:
    return {
        "type": "message",
        "id": entry_id,
        "parentId": parent,
        "timestamp": ts,
        "message": {"role": "user", "content": text},
    }


def _assistant(
    entry_id: str, parent: str, ts: int, text: str, *calls: tuple[str, str, dict[str, Any]]
) -> dict[str, Any]:
    content: list[dict[str, Any]] = [{"type": "text", "text": text}]
    content += [
        {"type": "toolCall", "id": cid, "name": name, "arguments": args}
        for cid, name, args in calls
    ]
    return {
        "type": "message",
        "id": entry_id,
        "parentId": parent,
        "timestamp": ts,
        "message": {"role": "assistant", "content": content},
    }


def _result(
    entry_id: str, parent: str, ts: int, call_id: str, tool: str, text: str
) -> dict[str, Any]:
    return {
        "type": "message",
        "id": entry_id,
        "parentId": parent,
        "timestamp": ts,
        "message": {
            "role": "toolResult",
            "toolCallId": call_id,
            "toolName": tool,
            "content": [{"type": "text", "text": text}],
            "isError": False,
        },
    }


_CHAPTER_PATH: list[dict[str, Any]] = [
    _user("u1", None, 1, "检查 session 恢复逻辑"),
    _assistant("a1", "u1", 2, "活动路径只恢复选中分支"),
    _user("u2", "a1", 3, "确认 JSONL 写入边界"),
    _assistant("a2", "u2", 4, "换行提交，未提交尾部只读恢复"),
    _user("u3", "a2", 5, "读取实现并运行聚焦测试"),
    _assistant(
        "calls",
        "u3",
        6,
        "调用 read-1 和 test-1",
        ("read-1", "read", {"path": "context.ts"}),
        ("test-1", "test", {}),
    ),
    _result("r-test", "calls", 7, "test-1", "test", "14 tests passed"),
    _result("r-read", "r-test", 8, "read-1", "read", "context.ts loaded"),
    _assistant("a3", "r-read", 9, "实现与测试一致"),
]

_CONTINUATION: list[dict[str, Any]] = [
    _user("u4", "compact-1", 101, "继续：从摘要恢复后补上 resume 测试"),
    _assistant("a4", "u4", 102, "已从 u2 接上保留后缀"),
]

CHAPTER_TOKENS: dict[str, int] = {
    "u1": 3,
    "a1": 4,
    "u2": 3,
    "a2": 4,
    "u3": 3,
    "calls": 3,
    "r-test": 3,
    "r-read": 3,
    "a3": 3,
    "u4": 3,
    "a4": 3,
}
"""The test estimator's answer for each fixture message (the chapter's table, plus u4/a4)."""

COMPACT_1_SUMMARY: dict[str, Any] = {
    "goal": "确认 session 恢复与上下文投影一致",
    "constraints": ["历史只追加，从不改写任何记录"],
    "completed": [
        "活动路径只恢复选中分支",
        "JSONL 以换行提交，未提交尾部只读恢复",
    ],
    "decisions": ["只在 interaction 边界裁剪"],
    "changedFiles": ["course/session.py"],
    "unresolved": [],
    "next": ["读取实现并运行聚焦测试"],
}
"""The caller-written summary stored in ``compact-1`` (keeps from ``u2``)."""

COMPACT_2_SUMMARY: dict[str, Any] = {
    "goal": "确认 session 恢复与上下文投影一致",
    "constraints": ["历史只追加，从不改写任何记录"],
    "completed": [
        "JSONL 以换行提交，未提交尾部只读恢复",
        "compact-1 从 u2 恢复",
    ],
    "decisions": ["只在 interaction 边界裁剪", "只渲染最新摘要"],
    "changedFiles": ["course/session.py", "course/context.py"],
    "unresolved": ["补上 u4 的恢复测试"],
    "next": ["第二次 compaction 后从 u3 开始保留"],
}
"""The summary stored in ``compact-2`` (keeps from ``u3``)."""

_TEXT_COSTS: dict[str, int] = {}


def chapter_path_json() -> list[dict[str, Any]]:
    """The nine entries u1 … a3 as JSON objects (fresh copies)."""
    return copy.deepcopy(_CHAPTER_PATH)


def continuation_json() -> list[dict[str, Any]]:
    """``u4 → a4``, appended after ``compact-1`` in the resume example (fresh copies)."""
    return copy.deepcopy(_CONTINUATION)


def compact_1_json() -> dict[str, Any]:
    """``compact-1`` as stored: appended after a3, keeping from u2, 29 tokens before (a copy)."""
    return {
        "type": "compaction",
        "id": "compact-1",
        "parentId": "a3",
        "timestamp": 100,
        "summary": copy.deepcopy(COMPACT_1_SUMMARY),
        "firstKeptEntryId": "u2",
        "tokensBefore": 29,
    }


def chapter_path() -> list[SessionEntry]:
    """The nine entries, parsed by the reference parser."""
    from .session import parse_entries

    return parse_entries(chapter_path_json())


def message_text(message: Message) -> str:
    """All the text a message carries: content text, tool names and arguments."""
    content = message.get("content")
    if isinstance(content, str):
        return content
    parts: list[str] = []
    for block in content or []:
        if block.get("type") == "text":
            parts.append(block.get("text", ""))
        elif block.get("type") == "toolCall":
            parts.append(f"{block.get('name', '')}({block.get('arguments', {})})")
    return "".join(parts)


def _costs_by_text() -> dict[str, int]:
    if not _TEXT_COSTS:
        for entry in _CHAPTER_PATH + _CONTINUATION:
            _TEXT_COSTS[message_text(entry["message"])] = CHAPTER_TOKENS[entry["id"]]
        _TEXT_COSTS[SYSTEM_PROMPT] = 3
    return _TEXT_COSTS


def chapter_estimator(message: Message) -> int:
    """The chapter's test estimator (not a tokenizer).

    Fixture messages cost what the chapter's table says and the system prompt ``"sys"``
    costs 3; any other message (a summary, say) costs one token per 40 characters of
    text, rounded up.
    """
    text = message_text(message)
    known = _costs_by_text().get(text)
    return known if known is not None else math.ceil(len(text) / 40)
