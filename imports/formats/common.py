"""What every export reader shares: the items it produces (one shape whatever the source), the problems it reports
(item position + field + message), and the checks of times and texts.

An item is plain JSON (it is stored as the import's work list and fingerprinted): times are ISO 8601 strings in
UTC, already checked to lie within years 1..9999 after conversion to UTC (PostgreSQL and Python agree there).
"""

import hashlib
import json
import math
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from django.conf import settings

from core.text import unstorable

CONVERSATION = "conversation"
MEMORY = "memory"
ROLES = ("user", "assistant", "system", "tool")  # conversations.models.Message.Role's values
TITLE_MAX = 300  # Conversation.title
NAME_MAX = 200  # Message.name, Message.client_message_id


class Bad(Exception):
    """One field of one item is wrong: `field` is its path inside the item (e.g. `chat_messages[2].created_at`)."""

    def __init__(self, field: str, message: str):
        super().__init__(f"{field}: {message}")
        self.field, self.message = field, message


@dataclass(frozen=True)
class Problem:
    """A bad item, by its 1-based position in the export (`item 3` is the third conversation or memory)."""

    position: int
    field: str
    message: str
    unit: str = "item"

    def as_dict(self) -> dict[str, Any]:
        return {self.unit: self.position, "field": self.field, "message": self.message}

    def __str__(self) -> str:
        return f"{self.unit} {self.position}: {self.field}: {self.message}"

    @classmethod
    def from_dict(cls, stored: dict[str, Any]) -> "Problem":
        """A problem as `as_dict` stored it (on the import)."""
        unit = "line" if "line" in stored else "item"
        return cls(stored[unit], stored["field"], stored["message"], unit)


@dataclass
class Parsed:
    """What a reader made of an export: the good items in order (each with its position) and the bad ones."""

    format: str
    items: list[tuple[int, dict[str, Any]]] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    unit: str = "item"  # what a position counts: items of the export, or lines (JSON Lines)

    def read(self, entries, one) -> "Parsed":
        """Run `one(entry)` over the export's entries: None (nothing to import, e.g. an empty chat) is left out,
        a `Bad` is recorded against the entry's position."""
        for position, entry in enumerate(entries, start=1):
            try:
                item = one(entry)
            except Bad as bad:
                self.problems.append(Problem(position, bad.field, bad.message, self.unit))
                continue
            if item is not None:
                self.items.append((position, item))
        return self


def fingerprint(item: dict[str, Any]) -> str:
    """The item's identity for idempotency: the same conversation or memory imported twice has the same one."""
    return hashlib.sha256(json.dumps(item, sort_keys=True, ensure_ascii=False).encode()).hexdigest()


def timestamp(value: Any, field: str) -> str | None:
    """A time as ISO 8601 in UTC: Unix seconds (ChatGPT), or ISO 8601 text with or without an offset (no offset:
    UTC). Missing -> None. Outside years 1..9999 once in UTC -> Bad naming `field`."""
    if value is None or value == "":
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise Bad(field, "Must be Unix seconds or an ISO 8601 time.")
    if isinstance(value, str):
        try:
            moment = datetime.fromisoformat(value.strip())
        except ValueError:
            raise Bad(field, f"{value[:40]!r} is not an ISO 8601 time.") from None
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=UTC)
    else:
        if not math.isfinite(value):
            raise Bad(field, "Must be a finite number of seconds.")
        try:
            moment = datetime.fromtimestamp(value, tz=UTC)
        except (OverflowError, OSError, ValueError):
            raise Bad(field, f"{value} seconds is outside the years 1 to 9999.") from None
    try:
        moment = moment.astimezone(UTC)
    except OverflowError:
        raise Bad(field, f"{value!r} is outside the years 1 to 9999 in UTC.") from None
    return moment.isoformat()


def text(value: Any, field: str, *, required: bool = False, limit: int | None = None) -> str:
    """A storable string (no NUL, no lone surrogate); None -> "" unless `required`; cut to `limit` characters."""
    if value is None:
        value = ""
    if not isinstance(value, str):
        raise Bad(field, "Must be a string.")
    problem = unstorable(value)
    if problem:
        raise Bad(field, problem)
    if required and not value.strip():
        raise Bad(field, "May not be blank.")
    return value[:limit] if limit else value


def obj(value: Any, field: str) -> dict:
    if not isinstance(value, dict):
        raise Bad(field, "Must be a JSON object.")
    return value


def storable_json(value: Any, field: str) -> Any:
    problem = unstorable(value)
    if problem:
        raise Bad(field, problem)
    return value


def message(*, role: str, content: str, sent_at: str | None, client_id: str, name: str = "",
            metadata: dict | None = None) -> dict[str, Any]:
    """One message of a conversation; its content cut to MESSAGE_MAX_CHARS, the bound the API refuses beyond (an
    export is taken whole rather than refused for one long paste)."""
    return {"role": role, "content": content[:settings.MESSAGE_MAX_CHARS], "sent_at": sent_at,
            "client_message_id": client_id[:NAME_MAX], "name": name[:NAME_MAX], "metadata": metadata or {}}


def conversation(*, source: str, original_id: str, title: str, created_at: str | None, messages: list[dict],
                 metadata: dict | None = None) -> dict[str, Any] | None:
    """A conversation item, or None when it has no message with text (nothing to import)."""
    if not messages:
        return None
    return {"kind": CONVERSATION, "source": source, "original_id": original_id, "title": title[:TITLE_MAX],
            "created_at": created_at, "messages": messages, "metadata": metadata or {}}


def memory(*, source: str, original_id: str, content: str, namespace: list[str], key: str,
           created_at: str | None, updated_at: str | None, metadata: dict | None = None,
           value: dict | None = None, tags: list[str] | None = None) -> dict[str, Any]:
    item = {"kind": MEMORY, "source": source, "original_id": original_id, "content": content,
            "namespace": namespace, "key": key, "created_at": created_at, "updated_at": updated_at,
            "metadata": metadata or {}, "tags": tags or []}
    if value is not None:
        item["value"] = value
    return item
