"""The JSONL store: open/recover against a bare json.loads loop, appends and peak memory."""

from __future__ import annotations

import contextlib
import json
import os
import time
import tracemalloc
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, cast

import course.jsonl
from bench.timing import interleave
from course.session import JsonlSessionStore, encode_entry, parse_session_entry, recover_jsonl


def write_log(path: Path, entries: Sequence[dict[str, Any]]) -> int:
    """Write ``entries`` as the store writes them; returns the file size in bytes."""
    with open(path, "wb") as handle:
        for entry in entries:
            handle.write(encode_entry(parse_session_entry(entry)))
    return path.stat().st_size


def open_store(path: Path) -> int:
    """Open (and so recover and validate) the log with the kit's store; entries read."""
    store = JsonlSessionStore(path)
    try:
        return len(store)
    finally:
        store.close()


def bare_json_loads(path: Path) -> list[Any]:
    """The practical limit: one ``json.loads`` per line, no checks."""
    with open(path, encoding="utf-8") as handle:
        return [json.loads(line) for line in handle]


@contextlib.contextmanager
def json_only() -> Iterator[None]:
    """Read lines with the standard ``json`` module even when orjson is installed."""
    saved = course.jsonl._orjson_loads
    course.jsonl._orjson_loads = None
    try:
        yield
    finally:
        course.jsonl._orjson_loads = saved


def fast_json_available() -> bool:
    return course.jsonl._orjson_loads is not None


def open_vs_json_loads(path: Path, entries: int, runs: int) -> dict[str, Any]:
    """Interleaved medians: store open, recover_jsonl on bytes, json-only open, bare loop."""
    data = path.read_bytes()

    def open_json_only() -> int:
        with json_only():
            return open_store(path)

    contenders: list[Callable[[], object]] = [
        lambda: open_store(path),
        lambda: bare_json_loads(path),
        lambda: recover_jsonl(data),
        open_json_only,
    ]
    samples, results = interleave(contenders, runs)
    if results[0] != entries or len(cast(list[Any], results[1])) != entries:
        raise RuntimeError("the store and the bare loop read different numbers of lines")
    kit, bare, recover, kit_json = (s.summary() for s in samples)
    paused, _ = interleave(contenders[:2], runs, gc_paused=True)
    kit_paused, bare_paused = (s.summary() for s in paused)
    return {
        "entries": entries,
        "file_bytes": len(data),
        "fast_json": fast_json_available(),
        "ratio": bare["cpu_s"] / kit["cpu_s"],
        "ratio_gc_paused": bare_paused["cpu_s"] / kit_paused["cpu_s"],
        "ratio_json_only": bare["cpu_s"] / kit_json["cpu_s"],
        "ratio_recover_bytes": bare["cpu_s"] / recover["cpu_s"],
        "kit_open": kit,
        "kit_open_json_only": kit_json,
        "recover_jsonl_bytes": recover,
        "bare_json_loads": bare,
        "gc_paused": {"kit_open": kit_paused, "bare_json_loads": bare_paused},
        "kit_entries_per_s": entries / kit["cpu_s"],
        "bare_lines_per_s": entries / bare["cpu_s"],
    }


def peak_memory(path: Path) -> dict[str, float]:
    """Peak traced Python memory (MB) of opening the store and of the bare loop."""
    out: dict[str, float] = {}
    for label, fn in (("kit_open_mb", open_store), ("bare_json_loads_mb", bare_json_loads)):
        tracemalloc.start()
        try:
            fn(path)
            out[label] = tracemalloc.get_traced_memory()[1] / 1e6
        finally:
            tracemalloc.stop()
    out["file_mb"] = path.stat().st_size / 1e6
    return out


def append_rate(
    directory: Path, entries: Sequence[dict[str, Any]], *, fsync: bool
) -> dict[str, Any]:
    """Append ``entries`` to a new log one by one; entries per wall-clock second."""
    path = directory / f"append-{'fsync' if fsync else 'plain'}.jsonl"
    with JsonlSessionStore(path, fsync=fsync) as store:
        wall = time.perf_counter()
        cpu = time.process_time()
        for entry in entries:
            store.append(entry)
        cpu = time.process_time() - cpu
        wall = time.perf_counter() - wall
    path.unlink()
    return {
        "fsync": fsync,
        "entries": len(entries),
        "wall_s": wall,
        "cpu_s": cpu,
        "entries_per_s": len(entries) / wall,
    }


def filesystem_of(path: Path) -> str:
    """The file system type holding ``path`` (from /proc/mounts), or ``unknown``."""
    best, kind = "", "unknown"
    target = os.path.realpath(path)
    with contextlib.suppress(OSError), open("/proc/mounts", encoding="utf-8") as mounts:
        for line in mounts:
            fields = line.split()
            if len(fields) < 3:
                continue
            point = fields[1]
            inside = target == point or target.startswith(point.rstrip("/") + "/")
            if inside and len(point) > len(best):
                best, kind = point, fields[2]
    return kind
