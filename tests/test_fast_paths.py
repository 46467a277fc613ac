"""The parser's fast path and the optional orjson line reader change nothing but speed.

Each property runs the same input twice, once as shipped and once with the shortcut switched
off, and asks for the same result (down to the type of every scalar) or the same error.
"""

from __future__ import annotations

import contextlib
import json
import types
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from json_strategies import ANY_JSON

from course import entries, jsonl
from course.session import MessageEntry, entry_to_json, parse_session_entry, recover_jsonl


class Text(str):
    """A str subclass: the reader accepts it, the fast path leaves it to the reader."""


class Object(dict[str, Any]):
    """A dict subclass, likewise."""


@contextlib.contextmanager
def reader_only() -> Iterator[None]:
    saved = entries._fast
    entries._fast = lambda value: None  # type: ignore[assignment]
    try:
        yield
    finally:
        entries._fast = saved  # type: ignore[assignment]


@contextlib.contextmanager
def json_module_only() -> Iterator[None]:
    saved = jsonl._orjson_loads
    jsonl._orjson_loads = None
    try:
        yield
    finally:
        jsonl._orjson_loads = saved


def typed(value: Any) -> Any:
    """``value`` with the exact type of every scalar spelled out."""
    if isinstance(value, dict):
        return ("dict", [(typed(k), typed(v)) for k, v in value.items()])
    if isinstance(value, list):
        return ("list", [typed(v) for v in value])
    return (type(value).__name__, repr(value))


def outcome(run: Callable[[], Any]) -> tuple[str, Any]:
    try:
        result = run()
    except Exception as error:  # whichever it is, both runs must raise the same
        return type(error).__name__, str(error)
    if isinstance(result, list):
        return "ok", [typed(entry_to_json(e)) for e in result]
    if hasattr(result, "entries"):
        return "ok", ([typed(entry_to_json(e)) for e in result.entries], result.warnings)
    return "ok", (type(result).__name__, typed(entry_to_json(result)))


# --------------------------------------------------------------------------- the parser

NAME = st.sampled_from(["a", "u1", "call-1", "é"])
TEXTS = st.text(max_size=6)
SPECIAL = st.sampled_from(
    [
        "",
        "text",
        "toolCall",
        "user",
        Text("user"),
        Text("text"),
        0,
        -1,
        1.5,
        -0.0,
        float("nan"),
        float("inf"),
        10**30,
        True,
        None,
        [],
        {},
        ("tuple",),
        Object(type="text", text="t"),
        types.MappingProxyType({"type": "text", "text": "t"}),
    ]
)
JUNK = SPECIAL | ANY_JSON


@st.composite
def messages(draw: st.DrawFn) -> dict[str, Any]:
    role = draw(st.sampled_from(["system", "user", "user-blocks", "assistant", "toolResult"]))
    if role in ("system", "user"):
        return {"role": role, "content": draw(TEXTS)}
    blocks = st.lists(st.builds(lambda t: {"type": "text", "text": t}, TEXTS), max_size=2)
    if role == "user-blocks":
        return {"role": "user", "content": draw(blocks)}
    if role == "toolResult":
        return {
            "role": "toolResult",
            "toolCallId": draw(NAME),
            "toolName": draw(NAME),
            "content": draw(blocks),
            "isError": draw(st.booleans()),
        }
    calls = st.builds(
        lambda i, n, a: {"type": "toolCall", "id": i, "name": n, "arguments": a},
        NAME,
        NAME,
        st.dictionaries(TEXTS, JUNK, max_size=3),
    )
    return {
        "role": "assistant",
        "content": draw(
            st.lists(
                st.one_of(blocks.map(lambda b: b[0] if b else {"type": "text", "text": ""}), calls),
                max_size=3,
            )
        ),
    }


def places(value: Any, trail: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    yield trail
    if isinstance(value, dict):
        for key, item in value.items():
            yield from places(item, (*trail, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from places(item, (*trail, index))


def fresh(value: Any) -> Any:
    """A copy of the plain dicts and lists in ``value``; anything else is kept as it is."""
    if type(value) is dict:
        return {key: fresh(item) for key, item in value.items()}
    if type(value) is list:
        return [fresh(item) for item in value]
    return value


@st.composite
def mutated(draw: st.DrawFn, value: Any) -> Any:
    """``value`` unchanged, or with one value replaced, one key removed or one key added.

    Junk is copied before it goes in: ``SPECIAL`` holds one ``[]`` and one ``{}``, and putting
    those shared objects into values that are mutated later would build cycles.
    """
    value = fresh(value)
    action = draw(st.sampled_from(["keep", "replace", "replace", "remove", "add"]))
    if action == "keep":
        return value
    trail = draw(st.sampled_from(list(places(value))))
    if not trail:
        return fresh(draw(JUNK))
    parent = value
    for step in trail[:-1]:
        parent = parent[step]
    last = trail[-1]
    if action == "replace":
        parent[last] = fresh(draw(JUNK))
    elif action == "remove" and isinstance(parent, dict):
        del parent[last]
    elif isinstance(parent, dict):
        parent["extra"] = fresh(draw(JUNK))
    else:
        parent.append(fresh(draw(JUNK)))
    return value


@st.composite
def message_entries(draw: st.DrawFn) -> dict[str, Any]:
    return {
        "type": "message",
        "id": draw(NAME),
        "parentId": draw(st.none() | NAME),
        "timestamp": draw(st.integers(0, 10**15) | st.floats(0, 1e12)),
        "message": draw(messages()),
    }


@settings(max_examples=400, deadline=None)
@given(message_entries().flatmap(mutated))
def test_fast_path_matches_the_reader_on_objects(value: Any) -> None:
    fast = outcome(lambda: parse_session_entry(value))
    with reader_only():
        assert outcome(lambda: parse_session_entry(value)) == fast


@settings(max_examples=400, deadline=None)
@given(
    message_entries().flatmap(mutated).filter(lambda v: isinstance(v, dict)),
    st.sampled_from(["id", "parentId", "timestamp", "message", None]),
    JUNK,
)
def test_fast_path_matches_the_reader_on_entry_objects(
    value: dict[str, Any], field: str | None, junk: Any
) -> None:
    fields = {
        "id": value.get("id", "x"),
        "parent_id": value.get("parentId"),
        "timestamp": value.get("timestamp", 0),
        "message": value.get("message"),
    }
    if field is not None:
        fields[{"parentId": "parent_id"}.get(field, field)] = junk
    entry = MessageEntry(**fields)
    fast = outcome(lambda: parse_session_entry(entry))
    with reader_only():
        assert outcome(lambda: parse_session_entry(entry)) == fast


def call_with(arguments: Any) -> dict[str, Any]:
    block = {"type": "toolCall", "id": "k", "name": "n", "arguments": arguments}
    message = {"role": "assistant", "content": [block]}
    return {"type": "message", "id": "c", "parentId": None, "timestamp": 1, "message": message}


def nested(depth: int) -> Any:
    value: Any = 1
    for _ in range(depth):
        value = [value]
    return value


@pytest.mark.parametrize(
    "arguments",
    [
        {"a": float("nan")},
        {"a": [1, float("-inf")]},
        {"a": nested(63)},
        {"a": nested(64)},
        {"a": nested(70)},
        {1: "non-string key"},
        {Text("k"): "str-subclass key"},
        {"a": ("tuple",)},
        {"a": 10**400, "b": -0.0, "c": True},
        Object(a=1),
        {"a": Object(b=1)},
        {"a": {"b": types.MappingProxyType({"c": 1})}},
    ],
    ids=lambda a: repr(a)[:30],
)
def test_fast_path_matches_the_reader_on_named_arguments(arguments: Any) -> None:
    value = call_with(arguments)
    fast = outcome(lambda: parse_session_entry(value))
    with reader_only():
        assert outcome(lambda: parse_session_entry(value)) == fast


def test_fast_path_results_share_nothing_with_their_input() -> None:
    value = {
        "type": "message",
        "id": "c",
        "parentId": None,
        "timestamp": 1,
        "message": {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "t"},
                {"type": "toolCall", "id": "k", "name": "n", "arguments": {"a": [{"b": 1}]}},
            ],
        },
    }
    for source in (value, parse_session_entry(value)):
        parsed = parse_session_entry(source)
        message = source["message"] if isinstance(source, dict) else source.message
        inside = {id(c) for c in containers(message)}
        assert not inside & {id(c) for c in containers(parsed.message)}


def containers(value: Any) -> Iterator[Any]:
    if isinstance(value, (dict, list)):
        yield value
        for item in value.values() if isinstance(value, dict) else value:
            yield from containers(item)


def test_nesting_beyond_the_interpreter_limit_fails_as_before() -> None:
    deep = nested(5000)
    message = {
        "role": "assistant",
        "content": [{"type": "toolCall", "id": "k", "name": "n", "arguments": {"a": deep}}],
    }
    entry = MessageEntry("c", None, 1, message)
    fast = outcome(lambda: parse_session_entry(entry))
    with reader_only():
        assert outcome(lambda: parse_session_entry(entry))[0] == fast[0] == "RecursionError"


# --------------------------------------------------------------------------- the line reader

META = '{"type":"metadata","id":"m","parentId":null,"timestamp":0,"key":"k","value":%s}\n'
LINES = [
    *(
        META % v
        for v in [
            "NaN",
            "Infinity",
            "-Infinity",
            "1e400",
            "-1e400",
            "1e-400",
            "-0",
            "-0.0",
            "1E5",
            "0.1",
            "123456789.123456789123",
            "[1,]",
            "01",
            "1.",
            ".5",
            "+1",
            '"\\x"',
            '"\\u12"',
            '"a\\u0000b"',
            '"\x01"',
            '"\x7f"',
        ]
    ),
    *(
        META % n
        for n in [
            2**63 - 1,
            2**63,
            2**64 - 1,
            2**64,
            -(2**63),
            -(2**63) - 1,
            10**18,
            10**19,
            10**30,
            10**400,
            "1" * 5000,
        ]
    ),
    *(
        META % s
        for s in ['"\\ud800"', '"\\udc00\\ud800"', '"\\ud83d\\ude00"', '"12345678901234567890"']
    ),
    META.replace('"key":"k"', '"key":"k","key":"last"') % "1",
    META.replace('"timestamp":0', '"timestamp":1e999') % "1",
    META.replace('"timestamp":0', '"timestamp":123456789012345678901234') % "1",
    META % "1" + "\ufeff" + META % "2",
    META % ("[" * 3000 + "]" * 3000),
    META % "1" + "x",
]


@pytest.mark.parametrize("text", LINES)
def test_orjson_lines_read_like_json_lines(text: str) -> None:
    pytest.importorskip("orjson")
    raw = text.encode("utf-8", "surrogatepass")
    fast = outcome(lambda: recover_jsonl(raw))
    with json_module_only():
        assert outcome(lambda: recover_jsonl(raw)) == fast


@settings(max_examples=400, deadline=None)
@given(ANY_JSON | st.integers() | st.floats() | st.text())
def test_orjson_values_read_like_json_values(value: Any) -> None:
    pytest.importorskip("orjson")
    raw = (META % json.dumps(value, ensure_ascii=False)).encode("utf-8", "surrogatepass")
    fast = outcome(lambda: recover_jsonl(raw))
    with json_module_only():
        assert outcome(lambda: recover_jsonl(raw)) == fast
