"""Mem0's memories as `get_all` returns them (`{"results": [...]}`, or a bare list in older versions) or as an
export lists them: each with `id`, `memory` (the text), `metadata`, `categories`, `created_at`, `updated_at` (ISO
8601, usually with an offset) and the ids it was stored under (`user_id`, `agent_id`, `run_id`)."""

from typing import Any

from django.core.exceptions import ValidationError

from imports.formats.common import Bad, Parsed, memory, obj, storable_json, text, timestamp
from memories.writes import validate_content

SOURCE = "mem0"
NAMESPACE = ["memories", "mem0"]
SCOPE_IDS = ("user_id", "agent_id", "run_id", "hash")


def looks_like(entry: Any) -> bool:
    return isinstance(entry, dict) and "memory" in entry and "id" in entry


def read(data: Any) -> Parsed:
    if isinstance(data, dict):
        data = data.get("results", data.get("memories"))
    if not isinstance(data, list):
        raise Bad("results", "Mem0 memories are a JSON list, or an object whose `results` is one.")
    return Parsed(SOURCE).read(data, _memory)


def _memory(entry: Any) -> dict[str, Any]:
    entry = obj(entry, "$")
    original_id = text(entry.get("id"), "id", required=True, limit=200)
    content = text(entry.get("memory"), "memory", required=True)
    try:  # the memory's own limits (MEMORY_MAX_CHARS, MEMORY_MAX_TOKENS), here: a bad item, not a failed import
        validate_content(content.strip(), "memory")
    except ValidationError as exc:
        raise Bad("memory", " ".join(exc.message_dict["memory"])) from None
    metadata = entry.get("metadata") or {}
    metadata = storable_json(obj(metadata, "metadata"), "metadata")
    categories = entry.get("categories") or []
    if not isinstance(categories, list):
        raise Bad("categories", "Must be a list of strings.")
    tags = [text(c, f"categories[{i}]", limit=100) for i, c in enumerate(categories)][:20]
    scope = {name: entry[name] for name in SCOPE_IDS if isinstance(entry.get(name), str)}
    return memory(
        source=SOURCE, original_id=original_id, content=content.strip(), namespace=NAMESPACE,
        key=f"mem0-{original_id}", created_at=timestamp(entry.get("created_at"), "created_at"),
        updated_at=timestamp(entry.get("updated_at"), "updated_at"), tags=tags,
        metadata={**metadata, "mem0": scope} if scope else metadata,
    )
