"""Memory tools in OpenAI function-calling form (seed 000's upsertMemory, plus search and delete), and running a
model's tool call unchanged on behalf of the authenticated user."""

import json
from typing import Any

from django.core.exceptions import ValidationError

from memories import selectors, services
from memories.models import Memory

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "upsertMemory",
            "description": "Store a fact, preference or event about the user for future conversations. Give a key "
                           "to update that memory later (last write wins).",
            "parameters": {
                "type": "object",
                "properties": {
                    "content": {"type": "string", "description": "The memory, as one self-contained sentence."},
                    "metadata": {"type": "object", "description": "Optional extra context as JSON."},
                    "key": {"type": "string", "description": "Optional stable key; generated when missing."},
                },
                "required": ["content"],
                "additionalProperties": False,
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "searchMemory",
            "description": "Find what is known about the user that is relevant to a question.",
            "parameters": {
                "type": "object",
                "properties": {
                    "query": {"type": "string", "description": "What to look for."},
                    "limit": {"type": "integer", "minimum": 1, "maximum": 100, "default": 10},
                },
                "required": ["query"],
                "additionalProperties": False,
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "deleteMemory",
            "description": "Forget a memory that is wrong or no longer true (it stays in the audit history).",
            "parameters": {
                "type": "object",
                "properties": {
                    "memoryId": {"type": "string", "description": "Id of the memory."},
                    "key": {"type": "string", "description": "Or its key."},
                },
                "additionalProperties": False,
            },
        },
    },
]
ARGUMENTS = {tool["function"]["name"]: tool["function"]["parameters"] for tool in TOOLS}


def _arguments(name: str, raw: Any) -> dict[str, Any]:
    if isinstance(raw, str):
        try:
            raw = json.loads(raw or "{}")
        except json.JSONDecodeError as exc:
            raise ValidationError({"arguments": [f"Not valid JSON: {exc.msg}."]}) from None
    if not isinstance(raw, dict):
        raise ValidationError({"arguments": ["Must be a JSON object."]})
    schema = ARGUMENTS[name]
    unknown = set(raw) - set(schema["properties"])
    missing = set(schema.get("required", [])) - set(raw)
    if unknown or missing:
        raise ValidationError({"arguments": [f"Unknown: {sorted(unknown)}; missing: {sorted(missing)}."]})
    for field, spec in schema["properties"].items():
        expected = {"string": str, "object": dict, "integer": int}[spec["type"]]
        if field in raw and (not isinstance(raw[field], expected) or isinstance(raw[field], bool)):
            raise ValidationError({"arguments": [f"{field} must be a {spec['type']}."]})
    return raw


def tool_call(*, user, name: str, arguments: Any) -> dict[str, Any]:
    """Run one tool call for `user`. Bad arguments raise ValidationError (a 400 for the caller)."""
    args = _arguments(name, arguments)
    if name == "upsertMemory":
        write = services.memory_create(owner=user, actor=user, reason="upsertMemory tool call",
                                       content=args["content"], metadata=args.get("metadata") or {},
                                       key=args.get("key"))
        verb = {"created": "Stored", "updated": "Updated", "duplicate": "Already known"}[write.outcome]
        return {"success": True, "memoryId": str(write.memory.pk), "message": f"{verb}: {write.memory.content}"}
    if name == "searchMemory":
        limit = args.get("limit", 10)
        if not 1 <= limit <= 100:
            raise ValidationError({"arguments": ["limit must be between 1 and 100."]})
        result = selectors.memory_search(owner=user, query=args["query"], limit=limit)
        services.memories_touch(memory_ids=[r.memory.pk for r in result.results], owner_id=user.pk,
                                action="SEARCH", query=args["query"])
        return {"success": True, "results": [
            {"memoryId": str(r.memory.pk), "content": r.memory.content, "score": round(r.score, 4)}
            for r in result.results
        ]}
    # deleteMemory
    memories = Memory.objects.owned_by(user).filter(is_active=True)
    if args.get("memoryId"):
        memory = memories.filter(pk=args["memoryId"]).first() if _is_uuid(args["memoryId"]) else None
    elif args.get("key"):
        memory = memories.filter(key=args["key"]).order_by("-updated_at").first()
    else:
        raise ValidationError({"arguments": ["Give memoryId or key."]})
    if memory is None:
        return {"success": False, "memoryId": None, "message": "No such memory."}
    services.memory_soft_delete(memory=memory, actor=user, reason="deleteMemory tool call")
    return {"success": True, "memoryId": str(memory.pk), "message": f"Forgot: {memory.content}"}


def _is_uuid(value: str) -> bool:
    import uuid

    try:
        uuid.UUID(value)
    except ValueError:
        return False
    return True
