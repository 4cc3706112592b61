"""The ChatGPT data export's `conversations.json`: a list of conversations, each a tree of messages (`mapping`:
node id -> {message, parent, children}), edits and regenerations being branches. Only the branch the user kept is
imported: from `current_node` up through the parents, read top down. Times are Unix seconds.

Imported: the visible text of user, assistant and system turns (`content_type` text or multimodal_text, string
parts); left out: hidden turns (system prompts, memory notes), tool calls and results, images."""

from typing import Any

from imports.formats.common import Bad, Parsed, conversation, message, obj, text, timestamp

SOURCE = "chatgpt"
TEXT_TYPES = ("text", "multimodal_text")
KEPT_ROLES = ("user", "assistant", "system")


def looks_like(entry: Any) -> bool:
    return isinstance(entry, dict) and "mapping" in entry


def read(data: Any) -> Parsed:
    if isinstance(data, dict) and looks_like(data):
        data = [data]
    if not isinstance(data, list):
        raise Bad("$", "A ChatGPT export's conversations.json is a JSON list of conversations.")
    return Parsed(SOURCE).read(data, _conversation)


def _branch(mapping: dict, current: Any) -> list[str]:
    """Node ids of the kept branch, root first. Without `current_node`, the last child at every step."""
    if current is None:
        roots = [key for key, node in mapping.items() if isinstance(node, dict) and node.get("parent") is None]
        if not roots:
            return []
        path, node_id = [], roots[0]
        while node_id is not None and node_id not in path:
            path.append(node_id)
            children = obj(mapping.get(node_id), f"mapping.{node_id}").get("children") or []
            node_id = children[-1] if isinstance(children, list) and children else None
        return path
    if not isinstance(current, str) or current not in mapping:
        raise Bad("current_node", "Names no node of `mapping`.")
    path, seen, node_id = [], set(), current
    while node_id is not None:
        if node_id in seen or len(path) > len(mapping):
            raise Bad(f"mapping.{node_id}.parent", "The parents form a loop.")
        seen.add(node_id)
        node = obj(mapping.get(node_id), f"mapping.{node_id}")
        path.append(node_id)
        node_id = node.get("parent")
        if node_id is not None and (not isinstance(node_id, str) or node_id not in mapping):
            raise Bad(f"mapping.{path[-1]}.parent", "Names no node of `mapping`.")
    return path[::-1]


def _text(content: dict, field: str) -> str:
    if content.get("content_type") not in TEXT_TYPES:
        return ""
    parts = content.get("parts") or []
    if not isinstance(parts, list):
        raise Bad(f"{field}.parts", "Must be a list.")
    return "\n".join(text(part, f"{field}.parts[{i}]") for i, part in enumerate(parts) if isinstance(part, str)).strip()


def _conversation(entry: Any) -> dict[str, Any] | None:
    entry = obj(entry, "$")
    mapping = obj(entry.get("mapping"), "mapping")
    created = timestamp(entry.get("create_time"), "create_time")
    original_id = text(entry.get("conversation_id") or entry.get("id"), "id")
    messages, last_time = [], created
    for node_id in _branch(mapping, entry.get("current_node")):
        node = mapping[node_id]
        found = node.get("message")
        if found is None:
            continue
        field = f"mapping.{node_id}.message"
        found = obj(found, field)
        author = obj(found.get("author"), f"{field}.author")
        role = author.get("role")
        sent_at = timestamp(found.get("create_time"), f"{field}.create_time") or last_time
        last_time = sent_at or last_time
        if role not in KEPT_ROLES and role != "tool":
            raise Bad(f"{field}.author.role", f"{role!r} is not one of user, assistant, system, tool.")
        metadata = found.get("metadata") if isinstance(found.get("metadata"), dict) else {}
        if (role not in KEPT_ROLES or metadata.get("is_visually_hidden_from_conversation")
                or found.get("recipient", "all") != "all"):
            continue
        content = _text(obj(found.get("content"), f"{field}.content"), f"{field}.content")
        if not content:
            continue
        model = metadata.get("model_slug")
        messages.append(message(
            role=role, content=content, sent_at=sent_at, client_id=text(found.get("id") or node_id, f"{field}.id"),
            metadata={"model": model} if isinstance(model, str) else {},
        ))
    return conversation(source=SOURCE, original_id=original_id, title=text(entry.get("title"), "title"),
                        created_at=created, messages=messages, metadata={"original_id": original_id})
