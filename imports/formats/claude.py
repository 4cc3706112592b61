"""The Claude data export's `conversations.json`: a list of conversations (`uuid`, `name`, `created_at`,
`chat_messages`), each message with `uuid`, `sender` (human or assistant), `created_at` (ISO 8601) and its text
(`content` blocks of type text, or `text`). Tool use, thinking and attachments are left out."""

from typing import Any

from imports.formats.common import Bad, Parsed, conversation, message, obj, text, timestamp

SOURCE = "claude"
ROLES = {"human": "user", "user": "user", "assistant": "assistant"}


def looks_like(entry: Any) -> bool:
    return isinstance(entry, dict) and "chat_messages" in entry


def read(data: Any) -> Parsed:
    if isinstance(data, dict) and isinstance(data.get("conversations"), list):
        data = data["conversations"]
    if not isinstance(data, list):
        raise Bad("$", "A Claude export's conversations.json is a JSON list of conversations.")
    return Parsed(SOURCE).read(data, _conversation)


def _text(found: dict, field: str) -> str:
    blocks = found.get("content")
    if isinstance(blocks, list) and blocks:
        parts = []
        for i, block in enumerate(blocks):
            block = obj(block, f"{field}.content[{i}]")
            if block.get("type") == "text":
                parts.append(text(block.get("text"), f"{field}.content[{i}].text"))
        return "\n".join(parts).strip()
    return text(found.get("text"), f"{field}.text").strip()


def _conversation(entry: Any) -> dict[str, Any] | None:
    entry = obj(entry, "$")
    chat = entry.get("chat_messages")
    if not isinstance(chat, list):
        raise Bad("chat_messages", "Must be a list.")
    created = timestamp(entry.get("created_at"), "created_at")
    original_id = text(entry.get("uuid"), "uuid")
    messages, last_time = [], created
    for i, found in enumerate(chat):
        field = f"chat_messages[{i}]"
        found = obj(found, field)
        sender = found.get("sender")
        if sender not in ROLES:
            raise Bad(f"{field}.sender", f"{sender!r} is not one of human, assistant.")
        sent_at = timestamp(found.get("created_at"), f"{field}.created_at") or last_time
        last_time = sent_at or last_time
        content = _text(found, field)
        if content:
            messages.append(message(role=ROLES[sender], content=content, sent_at=sent_at,
                                    client_id=text(found.get("uuid") or f"{i}", f"{field}.uuid")))
    return conversation(source=SOURCE, original_id=original_id, title=text(entry.get("name"), "name"),
                        created_at=created, messages=messages, metadata={"original_id": original_id})
