"""Generic JSON Lines of messages, one object a line: `conversation` (an id grouping the lines into
conversations, in order of first appearance), `role` (user, assistant, system, tool), `content`, and optionally
`sent_at` (Unix seconds or ISO 8601), `title`, `name` and `id` (the message's own id). Positions are line
numbers."""

from typing import Any

from core.parsers import loads
from imports.formats.common import ROLES, Bad, Parsed, Problem, conversation, message, obj, text, timestamp

SOURCE = "jsonl"


def read(raw: str) -> Parsed:
    parsed = Parsed(SOURCE, unit="line")
    groups: dict[str, dict[str, Any]] = {}
    for number, line in enumerate(raw.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            entry = obj(_load(line), "$")
            key = text(entry.get("conversation"), "conversation", required=True, limit=200)
            role = entry.get("role")
            if role not in ROLES:
                raise Bad("role", f"{role!r} is not one of {', '.join(ROLES)}.")
            found = message(role=role, content=text(entry.get("content"), "content", required=True),
                            sent_at=timestamp(entry.get("sent_at"), "sent_at"),
                            client_id=text(entry.get("id"), "id") or f"line-{number}",
                            name=text(entry.get("name"), "name"))
            title = text(entry.get("title"), "title")
        except Bad as bad:
            parsed.problems.append(Problem(number, bad.field, bad.message, "line"))
            continue
        group = groups.setdefault(key, {"position": number, "title": "", "messages": []})
        group["title"] = group["title"] or title
        group["messages"].append(found)
    for key, group in groups.items():
        parsed.items.append((group["position"], conversation(
            source=SOURCE, original_id=key, title=group["title"] or key, created_at=None,
            messages=group["messages"], metadata={"original_id": key})))
    return parsed


def _load(line: str) -> Any:
    try:
        return loads(line)
    except ValueError as exc:
        raise Bad("$", f"Not valid JSON: {getattr(exc, 'msg', exc)}.") from None
