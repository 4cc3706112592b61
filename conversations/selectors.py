from dataclasses import dataclass

from django.conf import settings

from conversations.models import Conversation, Message
from integrations.embeddings import count_tokens
from memories.selectors import MemoryFilters, ScoredMemory, memory_search


@dataclass(frozen=True)
class Context:
    """What to put in front of the model for its next turn (seed 000's retrieveMemories)."""

    query: str
    budget: int
    used_tokens: int
    items: list[ScoredMemory]
    text: str
    degraded: bool


HEADER = "Relevant memories about the user (most relevant first):"


def conversation_context(*, conversation: Conversation, query: str | None = None, budget: int | None = None,
                         limit: int = 20) -> Context:
    """The memories relevant to `query` (default: the latest user message), best first, packed into `budget`
    tokens of the local tokenizer, header included; a memory that does not fit is left out whole."""
    budget = budget or settings.MEMORY_CONTEXT_BUDGET
    if not query:
        latest = (conversation.messages.filter(role=Message.Role.USER).order_by("-sequence")
                  .values_list("content", flat=True).first())
        query = latest or conversation.title or ""
    if not query.strip():
        return Context(query="", budget=budget, used_tokens=0, items=[], text="", degraded=False)
    result = memory_search(
        owner=conversation.owner, query=query, mode="hybrid", limit=limit,
        filters=MemoryFilters(project=conversation.project),
    )
    used = count_tokens(HEADER)
    lines, items = [HEADER], []
    for scored in result.results:
        line = f"- {scored.memory.content}"
        cost = count_tokens(line) + 1
        if used + cost > budget:
            continue
        used += cost
        lines.append(line)
        items.append(scored)
    text = "\n".join(lines) if items else ""
    return Context(query=query, budget=budget, used_tokens=used if items else 0, items=items, text=text,
                   degraded=result.degraded)


# placeholder: the lead's rewrite replaces this
def context_for(*, owner, query: str, budget: int | None = None, conversation=None) -> Context:
    """What to put in front of the model for `query`: in `conversation` when given (its project's memories too),
    otherwise from the user's own memories, packed into `budget` tokens as conversation_context packs them."""
    if conversation is None:
        if not (query or "").strip():
            return Context(query="", budget=budget or settings.MEMORY_CONTEXT_BUDGET, used_tokens=0, items=[],
                           text="", degraded=False)
        conversation = Conversation(owner=owner)  # unsaved stand-in: no project, no messages
    return conversation_context(conversation=conversation, query=query, budget=budget)
