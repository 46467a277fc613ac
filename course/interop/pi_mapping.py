"""Pi entries (format v3) mapped one by one onto the chapter's message, metadata, compaction."""

from __future__ import annotations

import math
from collections.abc import Callable, Collection, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, cast

from course.fields import kind_of, plain_number
from course.locale import gettext as _
from course.locale import ngettext
from course.session import SessionEntry, SessionEntryError, parse_session_entry, summary_to_json

from ..sandboxed.untrusted import clip
from .pi_format import PiFormatError, PiLine, PiSession, json_kind
from .pi_report import ReportItem
from .pi_summary import summary_from_markdown

COMMON = ("type", "id", "parentId", "timestamp")
"""The fields every entry has, in Pi and in the chapter."""

HEADER_KEY = "pi.session"
SUMMARY_KEY = "pi.compaction.summary"
MESSAGE_KEY = "pi.message"
"""Metadata keys: the header, a compaction's Markdown, a Pi message that is data only."""

COMPACTION_PREFIX = (
    "The conversation history before this point was compacted into the following summary:"
    "\n\n<summary>\n"
)
COMPACTION_SUFFIX = "\n</summary>"
BRANCH_PREFIX = (
    "The following is a summary of a branch that this conversation came back from:\n\n<summary>\n"
)
BRANCH_SUFFIX = "</summary>"
"""The wrappers Pi puts around summaries it sends as user messages."""
WRAPPERS = {
    "branchSummary": (BRANCH_PREFIX, BRANCH_SUFFIX),
    "compactionSummary": (COMPACTION_PREFIX, COMPACTION_SUFFIX),
}


@dataclass(frozen=True)
class Draft:
    """A chapter entry (as its JSON object) and the Pi line it stands for."""

    line: int
    entry: dict[str, Any]
    source: dict[str, Any] | None = None
    """The Pi entry behind it; None for entries the import adds."""
    stop_reason: str = ""
    """An assistant message's ``stopReason`` (aborted, error, ...), for report messages."""

    @property
    def id(self) -> str:
        return cast(str, self.entry["id"])

    @property
    def parent_id(self) -> str | None:
        return cast(str | None, self.entry["parentId"])

    @property
    def role(self) -> str:
        """The message role, or "" for metadata and compaction entries."""
        return cast(str, self.entry["message"]["role"]) if self.entry["type"] == "message" else ""


FAILED_STOPS = ("aborted", "error")
"""The ``stopReason`` values whose assistant messages Pi drops before every model call."""
NORMAL_STOPS = ("stop", "toolUse")


def map_session(
    session: PiSession, *, keep_failed: bool = False
) -> tuple[list[Draft], list[ReportItem]]:
    """The drafts of a migrated (v3) session in file order (the header's metadata first) and the
    lossy items; ``keep_failed`` keeps failed assistant messages as messages, not data."""
    header = session.header
    header_id: str = header.data["id"]
    used = {header_id} | {record.data["id"] for record in session.entries}
    items: list[ReportItem] = []
    value = {**_uncommon(header.data), "sourceVersion": session.source_version}
    drafts = [_Mapper(header, None, items).metadata(HEADER_KEY, value)]
    requests: dict[str, str] = {}
    for record in session.entries:
        parent = record.data.get("parentId") or header_id
        mapper = _Mapper(record, parent, items, keep_failed, requests.get(parent, ""))
        mapped = mapper.map_entry(used)
        requests[mapper.id] = mapper.request or _user_text(mapped[-1])
        drafts.extend(mapped)
    return drafts, items


def _user_text(draft: Draft) -> str:
    content = draft.entry["message"]["content"] if draft.role == "user" else ""
    if isinstance(content, str):
        return content
    return "\n".join(block["text"] for block in content if block["type"] == "text")


def chapter_entry(entry: dict[str, Any], line: int) -> SessionEntry:
    """The entry as the chapter's parser reads it; its error names the Pi ``line``."""
    try:
        return parse_session_entry(entry)
    except SessionEntryError as error:
        raise PiFormatError(str(error), line=line) from None


def _uncommon(source: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in source.items() if k not in COMMON}


def data_only(source: dict[str, Any], reason: str) -> dict[str, Any]:
    """The value of a metadata entry keeping a Pi entry as data: its fields and why."""
    return {**_uncommon(source), "reason": reason}


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def fresh_id(base: str, used: set[str]) -> str:
    """``base``, or ``base-2``, ``base-3``… whichever is free; the id is then taken."""
    candidate, number = base, 1
    while candidate in used:
        number += 1
        candidate = f"{base}-{number}"
    used.add(candidate)
    return candidate


def iso_to_millis(value: object) -> int | float:
    """An ISO 8601 timestamp (UTC without a zone) as Unix milliseconds, an int unless it has
    sub-millisecond digits; a number is taken to be milliseconds already."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        if not math.isfinite(value) or value < 0:
            raise ValueError(f"must be a non-negative number of milliseconds, got {value!r}")
        return value
    if not isinstance(value, str):
        raise ValueError(f"must be an ISO 8601 string, got {kind_of(value)}")
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        raise ValueError(f"must be an ISO 8601 timestamp, got {value!r}") from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    micros = (moment - datetime(1970, 1, 1, tzinfo=UTC)) // timedelta(microseconds=1)
    if micros < 0:
        raise ValueError(f"is before 1970, which the chapter's timestamps cannot hold: {value!r}")
    return micros // 1000 if micros % 1000 == 0 else micros / 1000


def bash_execution_text(message: dict[str, Any]) -> str:
    """The user text Pi sends the model for a ``bashExecution`` message."""
    text = f"Ran `{message['command']}`\n"
    output = message.get("output")
    text += f"```\n{output}\n```" if output else "(no output)"
    exit_code = message.get("exitCode")
    if message.get("cancelled"):
        text += "\n\n(command cancelled)"
    elif exit_code is not None and exit_code != 0:
        text += f"\n\nCommand exited with code {exit_code}"
    if message.get("truncated") and message.get("fullOutputPath"):
        text += f"\n\n[Output truncated. Full output: {message['fullOutputPath']}]"
    return text


class _Mapper:
    """Maps one Pi line; errors and report items name its line and entry id."""

    def __init__(
        self,
        record: PiLine,
        parent: str | None,
        items: list[ReportItem],
        keep_failed: bool = False,
        request: str = "",
    ) -> None:
        self.record = record
        self.data = record.data
        self.id: str = record.data["id"]
        self.parent = parent
        self.items = items
        self.keep_failed = keep_failed
        self.dropped: list[str] = []
        self.request = request
        """The first user message on the entry's path: the session's goal, in its own words."""

    def fail(self, field: str, problem: str) -> PiFormatError:
        return PiFormatError(problem, line=self.record.line, field=field)

    def note(self, kind: str, message: str) -> None:
        self.items.append(ReportItem(self.record.line, self.id, kind, message))

    def get(self, value: dict[str, Any], key: str, path: str, check: Callable[[Any], bool]) -> Any:
        if key not in value:
            raise self.fail(_join(path, key), _("missing field"))
        if not check(value[key]):
            wrong = _("has the wrong type ({kind})").format(kind=json_kind(value[key]))
            raise self.fail(_join(path, key), wrong)
        return value[key]

    def string(self, value: dict[str, Any], key: str, path: str) -> str:
        return cast(str, self.get(value, key, path, lambda v: isinstance(v, str)))

    def drop_fields(self, value: dict[str, Any], path: str, carried: Collection[str]) -> None:
        self.dropped.extend(_join(path, key) for key in value if key not in carried)

    def finish(self, entry: dict[str, Any], stop_reason: str = "") -> Draft:
        if self.dropped:
            self.note("fields", _("not carried: {fields}").format(fields=", ".join(self.dropped)))
        chapter_entry(entry, self.record.line)
        return Draft(self.record.line, entry, self.data, stop_reason)

    def common(self, kind: str, entry_id: str | None = None) -> dict[str, Any]:
        value = self.get(self.data, "timestamp", "", lambda v: True)
        try:
            timestamp = iso_to_millis(value)
        except ValueError as error:
            raise self.fail("timestamp", str(error)) from None
        return dict(type=kind, id=entry_id or self.id, parentId=self.parent, timestamp=timestamp)

    def metadata(self, key: str, value: Any) -> Draft:
        return self.finish({**self.common("metadata"), "key": key, "value": value})

    def as_data(self, reason: str) -> Draft:
        """The Pi message kept as data only (its fields all carried, so none is reported)."""
        self.dropped.clear()
        return self.metadata(MESSAGE_KEY, data_only(self.data, reason))

    def message_draft(self, message: dict[str, Any], stop_reason: str = "") -> Draft:
        return self.finish({**self.common("message"), "message": message}, stop_reason)

    def user(self, content: str | list[dict[str, Any]]) -> Draft:
        return self.message_draft({"role": "user", "content": content})

    def map_entry(self, used: set[str]) -> list[Draft]:
        kind = self.record.type
        rest = _uncommon(self.data)
        if kind == "message":
            return [self.message()]
        if kind == "compaction":
            return self.compaction(used)
        if kind in ("thinking_level_change", "model_change", "label", "session_info", "custom"):
            return [self.metadata(f"pi.{kind}", rest)]
        if kind == "branch_summary":
            summary = self.string(self.data, "summary", "")
            if not summary:
                return [self.metadata(f"pi.{kind}", rest)]
            self.drop_fields(rest, "", ("summary",))
            self.note("converted", _("branch_summary became the user message Pi sends for it"))
            return [self.user(_wrapped("branchSummary", summary))]
        if kind == "custom_message":
            content = self.user_content(self.data, "")
            self.drop_fields(rest, "", ("content",))
            self.note("converted", _("custom_message became the user message Pi sends for it"))
            return [self.user(content)]
        self.note(
            "unknown_type",
            _(
                "unknown entry type {kind!r} (Pi v3 knows message, thinking_level_change, "
                "model_change, compaction, branch_summary, custom, custom_message, label, "
                "session_info); kept as data (metadata key pi.{kind}), as Pi sends nothing for it"
            ).format(kind=kind),
        )
        return [self.metadata(f"pi.{kind}", rest)]

    def compaction(self, used: set[str]) -> list[Draft]:
        markdown = self.string(self.data, "summary", "")
        tokens = self.get(self.data, "tokensBefore", "", _is_amount)
        first_kept = self.data.get("firstKeptEntryId", "")
        if not isinstance(first_kept, str):
            wrong = _("must be a string, got {kind}").format(kind=json_kind(first_kept))
            raise self.fail("firstKeptEntryId", wrong)
        mapping = summary_from_markdown(markdown, session_goal=self.request)
        text_id = fresh_id(f"{self.id}~summary", used)
        kept = {k: v for k, v in self.data.items() if k not in COMMON + ("tokensBefore",)}
        value = {"compactionId": self.id, **kept}
        text = self.finish({**self.common("metadata", text_id), "key": SUMMARY_KEY, "value": value})
        self.parent = text_id
        entry = {
            **self.common("compaction"),
            "summary": summary_to_json(mapping.summary),
            "firstKeptEntryId": first_kept,
            "tokensBefore": tokens,
        }
        self.note(
            "summary",
            _(
                "Markdown summary ({count} characters) split into the seven fields "
                "({fields}); the text is kept in metadata entry {entry} (key {key})"
            ).format(
                count=f"{len(markdown):,}",
                fields=mapping.describe(),
                entry=text_id,
                key=SUMMARY_KEY,
            ),
        )
        # a missing first kept id is for the repair policies; everything else is checked here
        chapter_entry({**entry, "firstKeptEntryId": first_kept or "(missing)"}, self.record.line)
        return [text, Draft(self.record.line, entry, self.data)]

    def message(self) -> Draft:
        message = self.get(self.data, "message", "", lambda v: isinstance(v, dict))
        role = self.get(message, "role", "message", lambda v: isinstance(v, str))
        self.drop_fields(self.data, "", COMMON + ("message",))
        if role == "user":
            self.drop_fields(message, "message", ("role", "content"))
            return self.user(self.user_content(message, "message"))
        if role == "assistant":
            return self.assistant(message)
        if role == "toolResult":
            return self.tool_result(message)
        if role == "bashExecution":
            return self.bash_execution(message)
        if role == "custom" or role in WRAPPERS:
            return self.wrapped(role, message)
        self.note(
            "unknown_type",
            _(
                "unknown message role {role!r} (Pi v3 knows user, assistant, toolResult, "
                "bashExecution, custom, branchSummary, compactionSummary); kept as data (metadata "
                "key {key}), as Pi sends nothing for it"
            ).format(role=role, key=MESSAGE_KEY),
        )
        return self.as_data(f"unknown message role {role!r}")

    def assistant(self, message: dict[str, Any]) -> Draft:
        stop = message.get("stopReason")
        stop = stop if isinstance(stop, str) else ""
        if stop in FAILED_STOPS:
            error = message.get("errorMessage")
            said = isinstance(error, str) and error != ""
            if said and not self.keep_failed:
                text = _(
                    "assistant message stopped with {stop!r} ({error}); Pi drops it before "
                    "every model call, so it is kept as data (key {key})"
                )
            elif not self.keep_failed:
                text = _(
                    "assistant message stopped with {stop!r}; Pi drops it before every model "
                    "call, so it is kept as data (key {key})"
                )
            elif said:
                text = _(
                    "assistant message stopped with {stop!r} ({error}); Pi drops it before every "
                    "model call; kept as a message, as asked"
                )
            else:
                text = _(
                    "assistant message stopped with {stop!r}; Pi drops it before every model "
                    "call; kept as a message, as asked"
                )
            shown = clip(" ".join(error.split()), 160) if isinstance(error, str) else ""
            self.note("failed_message", text.format(stop=stop, error=shown, key=MESSAGE_KEY))
            if not self.keep_failed:
                return self.as_data(f"stopped with {stop!r}")
        elif stop and stop not in NORMAL_STOPS:
            self.note("stop_reason", _("assistant message stopped with {stop!r}").format(stop=stop))
        self.drop_fields(message, "message", ("role", "content"))
        blocks = self.get(message, "content", "message", lambda v: isinstance(v, list))
        content: list[dict[str, Any]] = []
        thinking: list[str] = []
        for path, kind, block in self.each_block(blocks, "message.content"):
            if kind == "text":
                content.append(self.text_block(block, path))
            elif kind == "toolCall":
                call_id, name = self.string(block, "id", path), self.string(block, "name", path)
                arguments = self.get(block, "arguments", path, lambda v: isinstance(v, dict))
                content.append(dict(type="toolCall", id=call_id, name=name, arguments=arguments))
                self.drop_fields(block, path, ("type", "id", "name", "arguments"))
            elif kind == "thinking":
                words = block.get("thinking")
                redacted = block.get("redacted") is True
                thinking.append(words if isinstance(words, str) and not redacted else "")
            else:
                raise self.fail(
                    f"{path}.type",
                    _(
                        "unknown assistant block {kind!r} (Pi knows text, thinking, toolCall)"
                    ).format(kind=kind),
                )
        sent = [text for text in thinking if text.strip()]
        if sent and not content:
            # a reply that is only thinking: Pi sends the thinking (as text to another model)
            content = [{"type": "text", "text": text} for text in sent]
            self.note(
                "thinking",
                ngettext(
                    "a reply that is only thinking: its {count} thinking block is sent as text, "
                    "as Pi sends it to a model other than the one that wrote it",
                    "a reply that is only thinking: its {count} thinking blocks are sent as text, "
                    "as Pi sends them to a model other than the one that wrote them",
                    len(sent),
                ).format(count=len(sent)),
            )
        elif thinking:
            self.note(
                "thinking",
                ngettext(
                    "{count} thinking block not carried (the chapter's assistant content is text "
                    "and tool calls)",
                    "{count} thinking blocks not carried (the chapter's assistant content is text "
                    "and tool calls)",
                    len(thinking),
                ).format(count=len(thinking)),
            )
        return self.message_draft({"role": "assistant", "content": content}, stop)

    def tool_result(self, message: dict[str, Any]) -> Draft:
        carried = ("role", "toolCallId", "toolName", "content", "isError")
        self.drop_fields(message, "message", carried)
        content = self.user_content(message, "message")
        if isinstance(content, str):
            content = [{"type": "text", "text": content}]
        is_error = self.get(message, "isError", "message", lambda v: isinstance(v, bool))
        result = {
            "role": "toolResult",
            "toolCallId": self.string(message, "toolCallId", "message"),
            "toolName": self.string(message, "toolName", "message"),
            "content": content,
            "isError": is_error,
        }
        return self.message_draft(result)

    def bash_execution(self, message: dict[str, Any]) -> Draft:
        self.string(message, "command", "message")
        if message.get("excludeFromContext") is True:
            self.note(
                "converted",
                _(
                    "bashExecution excluded from the model's context kept as data "
                    "(metadata key {key}), as Pi never sends it"
                ).format(key=MESSAGE_KEY),
            )
            return self.as_data("excluded from context")
        carried = ["role", "command", "output", "exitCode", "cancelled", "truncated"]
        if message.get("truncated"):
            carried.append("fullOutputPath")
        self.drop_fields(message, "message", carried)
        self.note("converted", _("bashExecution became the user text Pi sends the model for it"))
        return self.user([{"type": "text", "text": bash_execution_text(message)}])

    def wrapped(self, role: str, message: dict[str, Any]) -> Draft:
        if role == "custom":
            content, carried = self.user_content(message, "message"), "content"
        else:
            content, carried = _wrapped(role, self.string(message, "summary", "message")), "summary"
        self.drop_fields(message, "message", ("role", carried))
        text = _("{role} message became the user message Pi sends for it").format(role=role)
        self.note("converted", text)
        return self.user(content)

    def user_content(self, value: dict[str, Any], path: str) -> str | list[dict[str, Any]]:
        """Text stays text; an image becomes a text placeholder (reported)."""
        content = self.get(value, "content", path, lambda v: isinstance(v, (str, list)))
        if isinstance(content, str):
            return content
        blocks: list[dict[str, Any]] = []
        for where, kind, block in self.each_block(content, _join(path, "content")):
            if kind == "text":
                blocks.append(self.text_block(block, where))
            elif kind == "image":
                data = block.get("data")
                mime = block.get("mimeType", "image")
                size = f"{len(data):,} base64 characters" if isinstance(data, str) else "no data"
                text = f"[image omitted on import: {mime}, {size}]"
                blocks.append({"type": "text", "text": text})
                self.note(
                    "image",
                    _("{where}: image ({mime}) became the text {text!r}").format(
                        where=where, mime=mime, text=text
                    ),
                )
            else:
                raise self.fail(
                    f"{where}.type", _("unknown content block {kind!r}").format(kind=kind)
                )
        return blocks

    def each_block(self, blocks: list[Any], path: str) -> Iterator[tuple[str, str, dict[str, Any]]]:
        """(path, type, block) for each content block, each checked to be a typed object."""
        for index, block in enumerate(blocks):
            where = f"{path}[{index}]"
            if not isinstance(block, dict):
                wrong = _("must be an object, got {kind}").format(kind=json_kind(block))
                raise self.fail(where, wrong)
            kind = block.get("type")
            if not isinstance(kind, str):
                wrong = _("must be a string, got {kind}").format(kind=json_kind(kind))
                raise self.fail(f"{where}.type", wrong)
            yield where, kind, block

    def text_block(self, block: dict[str, Any], path: str) -> dict[str, Any]:
        self.drop_fields(block, path, ("type", "text"))
        return {"type": "text", "text": self.string(block, "text", path)}


def _wrapped(role: str, summary: str) -> list[dict[str, Any]]:
    prefix, suffix = WRAPPERS[role]
    return [{"type": "text", "text": prefix + summary + suffix}]


def _is_amount(value: object) -> bool:
    number = plain_number(value)
    return number is not None and math.isfinite(number) and number >= 0
