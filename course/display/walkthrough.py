"""The notebooks' walk through the nine entries: groups, cut points and the budget."""

from __future__ import annotations

import copy
from collections.abc import Iterable, Sequence
from functools import partial
from typing import Any

from .budget_view import DASH, fmt
from .notebook import Implementation
from .views import View, attempt, preformatted, table

BUDGET: dict[str, Any] = {"system_prompt": "sys", "reserved_output": 4, "safety_margin": 2}
"""The chapter's fixed costs besides max_tokens (the system prompt "sys" costs 3)."""

GLOSSES: dict[str, str] = {
    "u1": "check the session-resume logic",
    "a1": "the active path restores only the selected branch",
    "u2": "confirm the JSONL write boundary",
    "a2": "commit at the newline; an uncommitted tail is recovered read-only",
    "u3": "read the implementation and run the focused tests",
    "calls": "call read-1 and test-1",
    "r-test": "(result of test-1)",
    "r-read": "(result of read-1)",
    "a3": "the implementation agrees with the tests",
    "u4": "continue: after resuming from the summary, add the resume tests",
    "a4": "picked up the kept suffix from u2",
}
"""English glosses of the fixture's Chinese message texts."""


def message_text(message: dict[str, Any]) -> str:
    """The text blocks of a message (or its string content)."""
    content = message.get("content")
    if isinstance(content, str):
        return content
    return " ".join(b.get("text", "") for b in content or [] if b.get("type") == "text")


def role_of(message: dict[str, Any]) -> str:
    """'user', 'assistant', 'assistant → read-1, test-1' or 'toolResult(test-1)'."""
    role = str(message.get("role"))
    if role == "toolResult":
        return f"toolResult({message.get('toolCallId')})"
    content = message.get("content")
    calls = (
        [str(b.get("id")) for b in content if b.get("type") == "toolCall"]
        if isinstance(content, list)
        else []
    )
    return f"{role} → {', '.join(calls)}" if calls else role


def build(impl: Implementation, path: Sequence[Any], max_tokens: float) -> Any:
    """``build_context`` with the chapter's fixed costs."""
    return impl.context.build_context(
        path, max_tokens=max_tokens, estimate_tokens=impl.estimator(), **BUDGET
    )


def fixed_costs(impl: Implementation) -> float:
    """System prompt, reserved output and safety margin: what max_tokens loses before messages."""
    system = impl.estimator()({"role": "system", "content": BUDGET["system_prompt"]})
    return float(system) + float(BUDGET["reserved_output"]) + float(BUDGET["safety_margin"])


def reordered_path(impl: Implementation, order: Sequence[str]) -> list[Any]:
    """The nine entries in another order (parent links as they were), parsed."""
    by_id = {value["id"]: value for value in impl.fixtures.chapter_path_json()}
    return impl.parse([by_id[entry_id] for entry_id in order])


def group_costs(impl: Implementation, groups: Iterable[Any]) -> list[float]:
    """Each group's summed estimate."""
    estimate = impl.estimator()
    return [
        float(sum(estimate(copy.deepcopy(e.message)) for e in group.entries)) for group in groups
    ]


def ids_of(group: Any) -> list[str]:
    return [str(entry.id) for entry in group.entries]


def short_ids(ids: Sequence[str]) -> str:
    """'u2, a2' or 'u3 … a3' for longer runs."""
    return ", ".join(ids) if len(ids) <= 2 else f"{ids[0]} … {ids[-1]}"


# --------------------------------------------------------------------------- the nine entries


def entries_view(impl: Implementation) -> View:
    """The nine entries: id, role, the message text, an English gloss and the estimate."""
    parsed = attempt(impl.chapter_path)
    if not parsed.ok:
        return parsed.view()
    estimate = impl.estimator()
    rows = [
        (
            entry.id,
            role_of(entry.message),
            message_text(entry.message),
            GLOSSES.get(entry.id, ""),
            fmt(estimate(copy.deepcopy(entry.message))),
        )
        for entry in parsed.get()
    ]
    return table(["id", "role", "text", "gloss", "tokens"], rows)


# --------------------------------------------------------------------------- Lab 11.2


def groups_view(impl: Implementation, order: Sequence[str] | None = None) -> View:
    """``group_interactions`` on the nine entries (optionally reordered): ids and cost."""
    chosen = attempt(
        lambda: reordered_path(impl, order) if order is not None else impl.chapter_path()
    )
    if not chosen.ok:
        return chosen.view()
    grouped = attempt(lambda: list(impl.context.group_interactions(chosen.get())))
    if not grouped.ok:
        return grouped.view()
    groups = grouped.get()
    costs = attempt(lambda: group_costs(impl, groups))
    if not costs.ok:
        return costs.view()
    lines = [
        f"group {n} = [{', '.join(ids_of(g))}]  {fmt(cost)} tokens"
        for n, (g, cost) in enumerate(zip(groups, costs.get(), strict=True), start=1)
    ]
    return preformatted("\n".join(lines) if lines else "(no groups)")


def cut_points_view(impl: Implementation) -> View:
    """Every place between two neighbouring entries, and whether the budget may cut there."""
    path = attempt(impl.chapter_path)
    if not path.ok:
        return path.view()
    grouped = attempt(lambda: list(impl.context.group_interactions(path.get())))
    if not grouped.ok:
        return grouped.view()
    rows = []
    previous = ""
    for number, group in enumerate(grouped.get(), start=1):
        entries = list(group.entries)
        if number > 1:
            rows.append((f"{previous}/{entries[0].id}", "✓ allowed", "between two whole groups"))
        for cut in range(1, len(entries)):
            rows.append(
                (
                    f"{entries[cut - 1].id}/{entries[cut].id}",
                    "✗ inside a group",
                    _cut_damage(entries[:cut], entries[cut:], number),
                )
            )
        previous = entries[-1].id
    return table(["cut", "verdict", "what keeping only the newer side would do"], rows)


def _cut_damage(older: Sequence[Any], newer: Sequence[Any], number: int) -> str:
    declared = {
        block["id"]: entry.id
        for entry in older
        if entry.message.get("role") == "assistant"
        for block in entry.message["content"]
        if block.get("type") == "toolCall"
    }
    orphans = [
        e.id
        for e in newer
        if e.message.get("role") == "toolResult" and e.message.get("toolCallId") in declared
    ]
    if orphans:
        calls = sorted({declared[e.message["toolCallId"]] for e in newer if e.id in orphans})
        whose = "their tool calls" if len(orphans) > 1 else "its tool call"
        return f"{', '.join(orphans)} would lose {', '.join(calls)}, which declares {whose}"
    return (
        f"group {number} would start at {newer[0].id} ({newer[0].message.get('role')}), "
        f"without {older[0].id}, the user message that opens it"
    )


# --------------------------------------------------------------------------- Lab 11.3


def result_view(result: Any) -> View:
    """A ``build_context`` result in the chapter's camelCase shape (messages left out)."""
    t = result.tokens
    tokens = {
        "maxTokens": t.max_tokens,
        "system": t.system,
        "messages": t.messages,
        "reservedOutput": t.reserved_output,
        "safetyMargin": t.safety_margin,
        "availableForMessages": t.available_for_messages,
        "total": t.total,
    }
    ids = ", ".join(f'"{i}"' for i in result.kept_entry_ids)
    lines = [
        "{",
        f'  systemPrompt: "{result.system_prompt}",',
        f"  keptEntryIds: [{ids}],",
        f'  reason: "{result.reason}",',
        "  tokens: {",
        *(f"    {key}: {fmt(value)}," for key, value in tokens.items()),
        "  },",
        "}",
    ]
    return preformatted("\n".join(lines))


def projection_view(impl: Implementation, max_tokens: float = 31) -> View:
    """``build_context`` on the nine entries with the chapter's fixed costs."""
    built = attempt(lambda: build(impl, impl.chapter_path(), max_tokens))
    return result_view(built.get()) if built.ok else built.view()


def deduction_view(impl: Implementation, max_tokens: float = 31) -> View:
    """The chapter's deduction table, read off the result's ``tokens``."""
    built = attempt(lambda: build(impl, impl.chapter_path(), max_tokens))
    if not built.ok:
        return built.view()
    t = built.get().tokens
    after_system = max(0.0, t.max_tokens - t.system)
    after_reserved = max(0.0, after_system - t.reserved_output)
    rows = [
        ("max_tokens", fmt(t.max_tokens), fmt(t.max_tokens)),
        ("system prompt", fmt(t.system), fmt(after_system)),
        ("reserved_output", fmt(t.reserved_output), fmt(after_reserved)),
        ("safety_margin", fmt(t.safety_margin), fmt(t.available_for_messages)),
    ]
    return table(["item", "tokens", "left for messages"], rows)


def selection_view(impl: Implementation, max_tokens: float = 31) -> View:
    """The newest-first walk over group costs, next to what ``build_context`` kept."""
    path = attempt(impl.chapter_path)
    if not path.ok:
        return path.view()
    built = attempt(lambda: build(impl, path.get(), max_tokens))
    grouped = attempt(lambda: list(impl.context.group_interactions(path.get())))
    if not grouped.ok:
        return grouped.view()
    if not built.ok:
        return built.view()
    result = built.get()
    available = result.tokens.available_for_messages
    groups = grouped.get()
    costs = group_costs(impl, groups)
    lines = [f"available for messages: {fmt(available)}"]
    used = 0.0
    for index in range(len(groups) - 1, -1, -1):
        label = f"group {index + 1} ({short_ids(ids_of(groups[index]))})"
        total = used + costs[index]
        if index == len(groups) - 1 and costs[index] > available:
            lines.append(f"{label}: {fmt(costs[index])} > {fmt(available)} → sent whole; stop")
            break
        if total > available:
            lines.append(
                f"{label}: {fmt(used)} + {fmt(costs[index])} = {fmt(total)} > "
                f"{fmt(available)} → stop"
            )
            break
        lines.append(
            f"{label}: {fmt(used)} + {fmt(costs[index])} = {fmt(total)} ≤ {fmt(available)} → keep"
        )
        used = total
    lines.append(f"build_context kept: {', '.join(result.kept_entry_ids)}")
    lines.append(f"reason: {result.reason}")
    return preformatted("\n".join(lines))


def overflow_view(impl: Implementation, max_tokens: float = 19) -> View:
    """The newest group alone is too big: it comes back whole, and the reason says so."""
    built = attempt(lambda: build(impl, impl.chapter_path(), max_tokens))
    if not built.ok:
        return built.view()
    result = built.get()
    t = result.tokens
    roles = [m["role"] for m in result.messages]
    lines = [
        f"available for messages: {fmt(t.available_for_messages)}",
        f"kept: {', '.join(result.kept_entry_ids)}",
        f"roles: {', '.join(roles)}",
        f"reason: {result.reason}",
        f"messages {fmt(t.messages)}, total {fmt(t.total)} "
        f"{'>' if t.total > t.max_tokens else '≤'} max_tokens {fmt(t.max_tokens)}",
    ]
    return preformatted("\n".join(lines))


def sweep_view(impl: Implementation, max_tokens: Iterable[int] = range(0, 45)) -> View:
    """Which groups are kept as max_tokens grows: one row per run of equal outcomes."""
    path = attempt(impl.chapter_path)
    if not path.ok:
        return path.view()
    runs: list[list[Any]] = []
    for value in max_tokens:
        built = attempt(partial(build, impl, path.get(), value))
        if not built.ok:
            return built.view()
        result = built.get()
        key = (short_ids([str(i) for i in result.kept_entry_ids]), str(result.reason))
        available = result.tokens.available_for_messages
        if runs and runs[-1][4] == key:
            runs[-1][1], runs[-1][3] = value, available
        else:
            runs.append([value, value, available, available, key])
    rows = [
        (_span(first, last), _span(a0, a1), key[0], key[1]) for first, last, a0, a1, key in runs
    ]
    return table(["max_tokens", "for messages", "kept", "reason"], rows)


def _span(first: float, last: float) -> str:
    return fmt(first) if first == last else f"{fmt(first)}{DASH}{fmt(last)}"
