"""The profile and reminder tools an agent calls, declared like the memory tools (memories.tools.tool) and served
with them by conversations/tools.py (OpenAI function-calling tools and MCP)."""

from memories.tools import MemoryTool, ToolResult, tool
from profiles import selectors

TOOLS: dict[str, MemoryTool] = {}


@tool(TOOLS, "get_profile", title="What is known about the user, in short", read_only=True, properties={
    "budget": {"type": "integer", "minimum": 16, "maximum": 4000,
               "description": "Token budget of the text (default: the user's setting, 300)."},
}, description=(
    "A short structured profile of the user built from their current memories: identity and contact, home, work "
    "and study, family and relationships, health and restrictions, preferences and interests, goals, routines. "
    "Each entry names the memories that support it. Call it at the start of a conversation."))
def get_profile(user, args):
    view = selectors.profile_view(owner=user, budget=args.get("budget"))
    return ToolResult(view.text or "Nothing is known about the user yet.", {
        "text": view.text, "tokens": view.tokens, "budget": view.budget,
        "sections": [{"section": s.value, "title": s.label, "entries": [
            {"id": e.pk, "text": e.text, "evidence_count": e.evidence_count, "shown": e.pk in view.shown,
             "memory_ids": [str(m) for m in e.memory_ids], "pinned": e.pinned,
             "last_confirmed": e.last_confirmed.isoformat() if e.last_confirmed else None} for e in entries]}
            for s, entries in view.sections],
    })
