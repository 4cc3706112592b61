"""The memory tools an agent calls, each defined once (name, description, JSON Schema of its arguments, hints,
handler): add, search, read, list, correct, forget a memory and read its history. conversations/tools.py adds
get_context and serves them all twice: as OpenAI function-calling tools at /api/tools/ and as MCP tools at /mcp
(conversations/mcp.py). Handlers call the memory services and selectors. No tool takes a user: identity is the
caller's token. Seed 000's upsertMemory / searchMemory / deleteMemory stay callable at /api/tools/call/ as aliases
of add_memory / search_memories / delete_memory and answer in the seed's shape (ALIASES)."""

import functools
import json
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.core.exceptions import ValidationError
from jsonschema import Draft202012Validator
from rest_framework.exceptions import ValidationError as ShapeError
from rest_framework.utils.encoders import JSONEncoder

from core.text import nfc
from memories import search, selectors, services
from memories.bookkeeping import touch_after_response
from memories.models import Memory, MemoryEvent
from memories.serializers import AsOfField, MemorySerializer


@dataclass(frozen=True)
class ToolResult:
    """What a tool answers: text for the model to read, and the same facts as data (ids, scores, versions)."""

    text: str
    data: dict[str, Any]


@dataclass(frozen=True)
class MemoryTool:
    """One tool. `read_only` / `destructive` / `idempotent` become MCP's tool annotation hints."""

    name: str
    title: str
    description: str
    parameters: dict[str, Any]  # JSON Schema of the arguments object
    run: Callable[[Any, dict[str, Any]], ToolResult]
    read_only: bool = False
    destructive: bool = False
    idempotent: bool = False

    @functools.cached_property
    def validator(self) -> Draft202012Validator:
        return Draft202012Validator(self.parameters)


class NoSuchMemory(ValidationError):
    """The id or key names none of the caller's memories (another user's memory is reported the same way)."""


def tool(registry: dict[str, MemoryTool], name: str, *, title: str, description: str, properties: dict[str, Any],
         required: tuple[str, ...] = (), read_only: bool = False, destructive: bool = False, idempotent: bool = False):
    """Decorator: the function becomes the handler of tool `name`, registered in `registry`."""
    parameters = {"type": "object", "properties": properties, "required": list(required),
                  "additionalProperties": False}

    def register(run):
        registry[name] = MemoryTool(name, title, description, parameters, run, read_only, destructive, idempotent)
        return run

    return register


TOOLS: dict[str, MemoryTool] = {}


# --- argument schemas -----------------------------------------------------------------------------------------------

QUERY = {"type": "string", "minLength": 1, "maxLength": 4000,
         "description": "What to look for, in natural language or as exact words."}
MEMORY_ID = {"type": "string", "maxLength": 100,
             "description": "The memory's id, as add_memory, search_memories or list_memories gave it."}
KEY = {"type": "string", "minLength": 1, "maxLength": 255,
       "description": "A stable key of your choosing; storing again under the same key updates that memory."}
TARGET = {"memory_id": MEMORY_ID, "key": {**KEY, "description": "Or the key the live memory was stored under."}}
ATTRIBUTES = {
    "category": {"type": "string", "maxLength": 100, "description": "Kind, e.g. preference, fact, event, goal."},
    "tags": {"type": "array", "maxItems": 50, "items": {"type": "string", "minLength": 1, "maxLength": 100},
             "description": "Short labels."},
    "importance": {"type": "number", "minimum": 0, "maximum": 1, "description": "0..1, default 0.5."},
    "metadata": {"type": "object", "description": "Extra context as a JSON object."},
}
CONTENT = {"type": "string", "minLength": 1, "maxLength": settings.MEMORY_MAX_CHARS,
           "description": "The memory as one self-contained sentence, e.g. 'Is allergic to peanuts' "
                          f"(at most {settings.MEMORY_MAX_TOKENS} word pieces)."}
LIMIT = {"type": "integer", "minimum": 1, "maximum": 100}
AS_OF = {"type": "string", "maxLength": 64, "description": (
    "An ISO date or datetime: what was true then (memories valid at that moment, those no longer true marked so). "
    "Omit it for what is true now.")}


def as_of_arg(args: dict[str, Any]):
    """The `as_of` argument as a moment (an ISO date means the end of that day, UTC), or None."""
    if "as_of" not in args:
        return None
    try:
        return AsOfField().run_validation(args["as_of"])
    except ShapeError as exc:
        raise ValidationError({"as_of": [str(m) for m in exc.detail]}) from None


SUMMARY_FIELDS = ("id", "key", "content", "version", "is_active", "category", "tags", "importance", "supersedes",
                  "superseded_by", "created_at", "updated_at")


def summary(memory: Memory) -> dict[str, Any]:
    data = MemorySerializer(memory).data
    return json.loads(json.dumps({name: data[name] for name in SUMMARY_FIELDS}, cls=JSONEncoder))


def _line(memory: Memory) -> str:
    state = "" if memory.is_active else ", deleted"
    return f"{memory.content} [id {memory.pk}, version {memory.version}{state}]"


def _memory(user, args: dict[str, Any]) -> Memory:
    """The caller's memory named by `memory_id` (any state) or by `key` (the live one)."""
    memories = Memory.objects.owned_by(user)
    if "memory_id" in args:
        try:
            memory_id = uuid.UUID(args["memory_id"])
        except ValueError:
            raise NoSuchMemory({"memory_id": ["No such memory (ids look like 0b8e5c1e-...)."]}) from None
        memory = memories.filter(pk=memory_id).first()
        field = "memory_id"
    elif "key" in args:
        memory = memories.filter(key=nfc(args["key"]), is_active=True).order_by("-updated_at").first()
        field = "key"
    else:
        raise ValidationError({"memory_id": ["Give memory_id (or key)."]})
    if memory is None:
        raise NoSuchMemory({field: ["No such memory."]})
    return memory


# --- the tools ------------------------------------------------------------------------------------------------------


@tool(TOOLS, "add_memory", title="Remember something", required=("content",), properties={
    "content": CONTENT, "key": KEY, **ATTRIBUTES,
    "supersedes": {**MEMORY_ID, "description": "Id of an older memory this one replaces (e.g. a changed fact)."},
}, description=(
    "Store a fact, preference, event or instruction about the user so it is remembered in future conversations. "
    "Call it when the user tells you something lasting about themselves or asks you to remember something. Store "
    "one self-contained sentence per memory. A near-identical memory is not stored twice; give `key` to update "
    "that memory later, or `supersedes` to replace an outdated one."))
def add_memory(user, args):
    fields = {name: args[name] for name in ("key", "category", "tags", "importance", "metadata") if name in args}
    if "supersedes" in args:
        try:
            fields["supersedes"] = uuid.UUID(args["supersedes"])
        except ValueError:
            raise ValidationError({"supersedes": ["Unknown memory."]}) from None
    write = services.memory_create(owner=user, actor=user, reason="add_memory tool call", content=args["content"],
                                   **fields)
    verb = {"created": "Stored", "updated": "Updated (same key)", "duplicate": "Already known, nothing stored"}
    return ToolResult(f"{verb[write.outcome]}: {_line(write.memory)}",
                      {"outcome": write.outcome, "memory": summary(write.memory)})


@tool(TOOLS, "search_memories", title="Search memories", required=("query",), read_only=True, properties={
    "query": QUERY,
    "limit": {**LIMIT, "default": 10, "description": "How many results at most (default 10)."},
    "mode": {"type": "string", "enum": ["hybrid", "semantic", "keyword"], "default": "hybrid",
             "description": "hybrid (default): meaning and exact words; semantic: meaning only; keyword: words."},
    "as_of": AS_OF,
}, description=(
    "Search what is remembered about the user, by meaning and by exact words, best match first with a score; "
    "when few memories match, the nearest others follow at score 0, marked as only near. "
    "Call it before answering anything that may depend on the user's preferences, history, people, plans or "
    "earlier conversations, and before add_memory to check what is already known."))
def search_memories(user, args):
    query = args["query"]
    result = search.memory_search(owner=user, query=query, mode=args.get("mode", "hybrid"),
                                  limit=args.get("limit", 10), filters=selectors.MemoryFilters(as_of=as_of_arg(args)))
    touch_after_response(memory_ids=[r.memory.pk for r in result.results], owner_id=user.pk,
                         action=MemoryEvent.Action.SEARCH, query=query)
    lines = [f"{i}. (score {r.score:.3f}{'' if r.score else ', only near'}) {_line(r.memory)}"
             for i, r in enumerate(result.results, 1)]
    text = "\n".join([f"{len(lines)} memories match {query!r}:", *lines]) if lines else f"No memory matches {query!r}."
    if result.degraded:
        text += "\n(Matched by words only: the embedding service is unavailable.)"
    return ToolResult(text, {"query": query, "mode": result.mode, "degraded": result.degraded, "results": [
        {**summary(r.memory), "score": round(r.score, 4)} for r in result.results]})


@tool(TOOLS, "get_memory", title="Read one memory", read_only=True, properties=TARGET, description=(
    "Read one memory by its id (or key): its content, version and whether it is still active. Call it to check a "
    "memory before updating or deleting it."))
def get_memory(user, args):
    memory = _memory(user, args)
    touch_after_response(memory_ids=[memory.pk], owner_id=user.pk, action=MemoryEvent.Action.READ)
    return ToolResult(_line(memory), {"memory": summary(memory)})


@tool(TOOLS, "list_memories", title="List memories", read_only=True, properties={
    "limit": {**LIMIT, "default": 20, "description": "Page size (default 20)."},
    "offset": {"type": "integer", "minimum": 0, "maximum": 1_000_000, "default": 0,
               "description": "How many to skip (for the next page)."},
    "category": ATTRIBUTES["category"],
    "tags": {**ATTRIBUTES["tags"], "description": "Only memories with any of these tags."},
    "include_deleted": {"type": "boolean", "default": False, "description": "Also list deleted memories."},
    "as_of": AS_OF,
}, description=(
    "List the user's memories, newest first, optionally of one category or with some tags. Call it to review or "
    "tidy up what is remembered; to find something specific, search_memories is better."))
def list_memories(user, args):
    filters = selectors.MemoryFilters(category=args.get("category"), tags=args.get("tags", []),
                                      include_inactive=args.get("include_deleted", False), as_of=as_of_arg(args))
    memories = selectors.memory_list(owner=user, filters=filters).order_by("-created_at", "-pk")
    offset, limit = args.get("offset", 0), args.get("limit", 20)
    page = list(memories[offset:offset + limit])
    total = memories.count()
    lines = [f"- {_line(memory)}" for memory in page]
    text = "\n".join([f"Memories {offset + 1}-{offset + len(page)} of {total}:", *lines]) if page else (
        f"No memories here (there are {total}).")
    return ToolResult(text, {"total": total, "offset": offset, "memories": [summary(m) for m in page]})


@tool(TOOLS, "update_memory", title="Correct a memory", properties={**TARGET, "content": CONTENT, **ATTRIBUTES},
       description=(
    "Change a memory that is wrong or out of date; it gets a new version and the old one stays in its history. "
    "Call it when the user corrects something that was remembered. Give the memory's id (or key) and the new "
    "content or attributes."))
def update_memory(user, args):
    memory = _memory(user, args)
    changes = {name: args[name] for name in ("content", *ATTRIBUTES) if name in args}
    if not changes:
        raise ValidationError({"content": ["Give the new content (or category, tags, importance, metadata)."]})
    if not memory.is_active:
        raise ValidationError({"memory_id": ["This memory is deleted; restore it in the panel before changing it."]})
    memory = services.memory_update(memory=memory, data=changes, actor=user, reason="update_memory tool call")
    return ToolResult(f"Updated to version {memory.version}: {_line(memory)}", {"memory": summary(memory)})


@tool(TOOLS, "delete_memory", title="Forget a memory", properties=TARGET, destructive=True, idempotent=True,
       description=(
    "Forget one memory that is wrong or no longer true, by its id (or key). It leaves search and lists but stays "
    "in its history, so the user can restore it. Call it only when the user asks to forget something or a memory "
    "is plainly wrong; to correct a memory, use update_memory instead."))
def delete_memory(user, args):
    memory = _memory(user, args)
    if not memory.is_active:
        return ToolResult(f"Already deleted: {_line(memory)}", {"outcome": "already_deleted",
                                                                "memory": summary(memory)})
    memory = services.memory_soft_delete(memory=memory, actor=user, reason="delete_memory tool call")
    return ToolResult(f"Deleted (restorable): {_line(memory)}", {"outcome": "deleted", "memory": summary(memory)})


@tool(TOOLS, "memory_history", title="History of a memory", read_only=True, properties=TARGET, description=(
    "Every version of one memory, newest first: what it said, when, why it changed and whether it was deleted. "
    "Call it when the user asks how or when something remembered changed."))
def memory_history(user, args):
    memory = _memory(user, args)
    versions = [{
        "version": record.version, "action": record.history_action, "at": record.history_date.isoformat(),
        "reason": record.history_change_reason, "content": record.content, "is_active": record.is_active,
        "changed_fields": changed,
    } for record, changed in selectors.memory_history(memory=memory)]
    lines = [f"- version {v['version']} ({v['action']}, {v['at']}, {v['reason'] or 'no reason'})"
             f"{'' if v['is_active'] else ' deleted'}: {v['content']}" for v in versions]
    return ToolResult("\n".join([f"History of memory {memory.pk}:", *lines]),
                      {"memory_id": str(memory.pk), "versions": versions})


# --- seed 000's names -----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Alias:
    """A seed tool name kept for callers of /api/tools/call/: a tool under another name, with renamed arguments
    and the seed's answer shape."""

    tool: str
    renamed: dict[str, str]  # seed argument -> tool argument
    answer: Callable[[ToolResult], dict[str, Any]]


ALIASES = {
    "upsertMemory": Alias("add_memory", {}, lambda r: {
        "success": True, "memoryId": r.data["memory"]["id"], "message": r.text}),
    "searchMemory": Alias("search_memories", {}, lambda r: {"success": True, "results": [
        {"memoryId": m["id"], "content": m["content"], "score": m["score"]} for m in r.data["results"]]}),
    "deleteMemory": Alias("delete_memory", {"memoryId": "memory_id"}, lambda r: {
        "success": r.data["outcome"] == "deleted", "memoryId": r.data["memory"]["id"], "message": r.text}),
}
