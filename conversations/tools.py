"""Every tool an agent calls, in one registry: the memory tools (memories/tools.py), the profile and reminder
tools (profiles/tools.py) and get_context, which packs memories and past conversation into a prompt's
background. Served twice: as OpenAI function-calling tools at
/api/tools/ and as MCP tools at /mcp (conversations/mcp.py). No tool takes a user: identity is the caller's
token."""

import uuid
from typing import Any

from django.conf import settings
from django.core.exceptions import ValidationError

from conversations.context import context_for
from conversations.models import Conversation
from core import grants
from memories import tools as memory_tools
from memories.tool_arguments import parsed, validated
from memories.tools import (
    ALIASES,
    AS_OF,
    QUERY,
    MemoryTool,
    NoSuchMemory,
    ToolResult,
    as_of_arg,
    summary,
    tool,
)
from profiles import tools as profile_tools

TOOLS: dict[str, MemoryTool] = {**memory_tools.TOOLS, **profile_tools.TOOLS}


@tool(TOOLS, "get_context", title="Relevant memories and past conversation for a prompt", required=("query",),
       read_only=True, properties={
    "query": {**QUERY, "description": "The user's latest message or the topic at hand."},
    "budget": {"type": "integer", "minimum": 16, "maximum": 32000,
               "description": f"Token budget of the text (default {settings.MEMORY_CONTEXT_BUDGET})."},
    "conversation_id": {"type": "string", "maxLength": 100,
                        "description": "A Memento conversation id, to include its project's memories."},
    "as_of": {**AS_OF, "description": AS_OF["description"].replace(
        "marked so)", "marked so) and what had been said by then")},
}, description=(
    "The memories and excerpts of past conversations relevant to a message, packed into a token budget as a text "
    "block ready to use as background; each item says where it came from and each memory when it became true. "
    "It gives what is true now; facts that are no longer true appear, marked, when the query asks about the past "
    "or a change, or with as_of. Call it at the start of a conversation or a new topic to recall what matters "
    "about the user."))
def get_context(user, args):
    conversation = None
    if "conversation_id" in args:
        try:
            conversation = Conversation.objects.filter(owner=user, pk=uuid.UUID(args["conversation_id"])).first()
        except ValueError:
            pass
        if conversation is None:
            raise ValidationError({"conversation_id": ["No such conversation."]})
    as_of = as_of_arg(args)
    context = context_for(owner=user, query=args["query"], budget=args.get("budget"), conversation=conversation,
                          as_of=as_of)
    return ToolResult(context.text or "No remembered facts are relevant to this.", {
        "query": context.query, "budget": context.budget, "used_tokens": context.used_tokens,
        "degraded": context.degraded, "text": context.text,
        "as_of": as_of.isoformat() if as_of else None, "past": context.past,
        "items": [{"type": i.type, "text": i.text, "score": round(i.score, 4), "source": i.source(),
                   **({"memory": summary(i.memory)} if i.type == "memory" else {})} for i in context.items],
    })


# --- calls ----------------------------------------------------------------------------------------------------------


def run_tool(*, user, name: str, arguments: Any) -> ToolResult:
    """Run tool `name` for `user`. An unknown name or bad arguments raise ValidationError naming the field."""
    if name not in TOOLS:
        raise ValidationError({"name": [f"Unknown tool {name[:100]!r}; the tools are: {', '.join(TOOLS)}."]})
    if not TOOLS[name].read_only:
        grants.require_write(f"call {name}")  # a read-only token calls read-only tools only (403)
    return TOOLS[name].run(user, validated(TOOLS[name], arguments))


def openai_tools() -> list[dict[str, Any]]:
    """The tools in OpenAI function-calling form (GET /api/tools/)."""
    return [{"type": "function", "function": {"name": t.name, "description": t.description,
                                              "parameters": t.parameters}} for t in TOOLS.values()]


TOOL_NAMES = [*TOOLS, *ALIASES]


def tool_call(*, user, name: str, arguments: Any) -> dict[str, Any]:
    """POST /api/tools/call/: a tool's text and data, or a seed alias's answer. Bad arguments raise
    ValidationError (a 400 naming the field)."""
    alias = ALIASES.get(name)
    if alias is None:
        result = run_tool(user=user, name=name, arguments=arguments)
        return {"text": result.text, "data": result.data}
    arguments = {alias.renamed.get(k, k): v for k, v in parsed(arguments).items()}
    back = {new: old for old, new in alias.renamed.items()}
    try:
        return alias.answer(run_tool(user=user, name=alias.tool, arguments=arguments))
    except NoSuchMemory:
        return {"success": False, "memoryId": None, "message": "No such memory."}
    except ValidationError as exc:
        raise ValidationError({back.get(f, f): m for f, m in exc.message_dict.items()}) from None
