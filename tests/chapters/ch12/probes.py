"""Chapter 12's differential probes: seeded messages, histories and budgets for both labs.

The grader draws the cases (``cases``, a seeded generator) and ``evaluate``s each with the
reference outside any sandbox and with the learner's package inside one; the JSON answers must
be equal. ``evaluate`` imports only the standard library and the package under test, so it
serves both sides; ``summarize`` describes a case's input in a line or two.
"""

from __future__ import annotations

import importlib
import json
import random
from collections.abc import Mapping, Sequence
from typing import Any

from course.locale import N_

Case = dict[str, Any]
Json = Any

ESTIMATE, CACHED, CONTEXT = "tokens.estimate_tokens", "tokens.cached", "tokens.estimated_context"
"""The chapter functions a case can call, as ``module.function``."""
ASCII = "abcdefghij klmnop.,:_-/()0123456789"
OTHER = "你好读取实现测试恢复摘要é—…"
BUDGET = {"system_prompt": "sys", "reserved_output": 4, "safety_margin": 2}


def module(package: str, name: str) -> Any:
    return importlib.import_module(f"{package}.{name}")


def evaluate(package: str, case: Mapping[str, Any]) -> Json:
    """The JSON answer of ``package`` to one case; exceptions propagate to the caller."""
    tokens, args = module(package, "tokens"), case["args"]
    function = case["function"]
    if function == ESTIMATE:
        return tokens.estimate_tokens(args["message"])
    if function == CACHED:
        asked: list[int] = []

        def counting(message: dict[str, Any]) -> int:
            asked.append(1)
            if message.get("content") == "refuse":
                raise ValueError("refused")
            return len(json.dumps(message, sort_keys=True))

        estimate = tokens.cached(counting)
        answers: list[Json] = []
        for message in args["messages"]:
            try:
                answers.append(estimate(message))
            except ValueError:
                answers.append("refused")
        return {"answers": answers, "asked": len(asked)}
    session = module(package, "session")
    path = [session.parse_session_entry(value) for value in args["path"]]
    result = tokens.estimated_context(path, max_tokens=args["max_tokens"], **BUDGET)
    return result.to_json()


def summarize(package: str, case: Mapping[str, Any]) -> list[str]:
    """A case's input in a line or two: the message, the messages, or the path's ids."""
    args = case["args"]
    if "path" in args:
        ids = " ".join(str(entry["id"]) for entry in args["path"])
        return [f"path: {ids}", f"max_tokens={args['max_tokens']}"]
    shown = json.dumps(args.get("message", args.get("messages")), ensure_ascii=False)
    return [shown if len(shown) <= 160 else shown[:157] + "..."]


def text(rng: random.Random, most: int) -> str:
    pool = ASCII if rng.random() < 0.6 else ASCII + OTHER
    return "".join(rng.choice(pool) for _ in range(rng.randint(0, most)))


def message(rng: random.Random) -> dict[str, Any]:
    """A well-formed message: string content, or text and tool-call blocks."""
    role = rng.choice(["user", "assistant"])
    if role == "user" or rng.random() < 0.3:
        return {"role": role, "content": text(rng, 40)}
    blocks: list[dict[str, Any]] = []
    for index in range(rng.randint(0, 3)):
        if rng.random() < 0.6:
            blocks.append({"type": "text", "text": text(rng, 30)})
        else:
            arguments = {text(rng, 6) or "k": rng.choice([1, "x", [2, 3], None, {"b": True}])}
            call = {"type": "toolCall", "id": f"c{index}", "name": text(rng, 8)}
            blocks.append(call | {"arguments": arguments})
    return {"role": role, "content": blocks}


BROKEN: list[tuple[str, Json]] = [
    (N_("refused: not an object"), ["user", "hi"]),
    (N_("refused: content a number"), {"role": "user", "content": 7}),
    (N_("refused: content missing"), {"role": "user"}),
    (N_("refused: a block not an object"), {"role": "assistant", "content": ["hi"]}),
    (N_("refused: a text not a string"), {"role": "assistant", "content": [{"type": "text"}]}),
    (N_("refused: another block type"), {"role": "user", "content": [{"type": "image"}]}),
]


class Cases:
    """Collects one lab's cases, numbering them."""

    def __init__(self, lab: str) -> None:
        self.lab = lab
        self.items: list[Case] = []

    def add(self, function: str, label: str, label_args: dict[str, Json], **args: Json) -> None:
        """A case; ``label`` is an English template (marked with ``N_``) filled by
        ``label_args`` where it is shown, in the edition that shows it."""
        case_id = f"{self.lab}#{len(self.items) + 1:03d}"
        self.items.append(
            {"id": case_id, "lab": self.lab, "function": function, "label": label}
            | {"label_args": label_args, "args": args}
        )


def lab_1(cases: Cases, rng: random.Random) -> None:
    for _ in range(16):
        drawn = message(rng)
        label = N_("a {role} message of {size} characters")
        size = len(json.dumps(drawn["content"], ensure_ascii=False))
        cases.add(ESTIMATE, label, {"role": drawn["role"], "size": size}, message=drawn)
    for label, broken in BROKEN:
        cases.add(ESTIMATE, label, {}, message=broken)


def linear_path(rng: random.Random, interactions: int) -> list[dict[str, Any]]:
    """A history of ``interactions`` user and assistant turns, each entry the last's child."""
    path: list[dict[str, Any]] = []
    for turn in range(1, interactions + 1):
        for role, prefix in (("user", "u"), ("assistant", "a")):
            parent = path[-1]["id"] if path else None
            content: Json = text(rng, 60)
            if role == "assistant":
                content = [{"type": "text", "text": content}]
            entry = {"type": "message", "id": f"{prefix}{turn}", "parentId": parent}
            entry |= {"timestamp": len(path) + 1, "message": {"role": role, "content": content}}
            path.append(entry)
    return path


def lab_2(cases: Cases, rng: random.Random) -> None:
    for _ in range(6):
        pool = [message(rng) for _ in range(rng.randint(1, 4))]
        if rng.random() < 0.3:
            pool.append({"role": "user", "content": "refuse"})
        messages = [rng.choice(pool) for _ in range(rng.randint(1, 8))]
        label = N_("{count} messages, {distinct} distinct")
        values = {"count": len(messages), "distinct": len(pool)}
        cases.add(CACHED, label, values, messages=messages)
    for _ in range(8):
        path = linear_path(rng, rng.randint(1, 5))
        max_tokens = rng.randint(0, 120)
        label = N_("{count} interactions, max_tokens={max_tokens}")
        values = {"count": len(path) // 2, "max_tokens": max_tokens}
        cases.add(CONTEXT, label, values, path=path, max_tokens=max_tokens)


LABS = {"12.1": lab_1, "12.2": lab_2}


def cases(seed: int, labs: Sequence[str]) -> list[Case]:
    """Every case of ``labs`` (all labs when empty), the same ones for the same seed."""
    found: list[Case] = []
    for lab in labs or list(LABS):
        collected = Cases(lab)
        LABS[lab](collected, random.Random(f"{seed}:{lab}"))
        found += collected.items
    return found
