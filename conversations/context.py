"""The context an agent puts in front of its model (seed 000's retrieveMemories): the best memories and the best
excerpts of what was said, within a token budget.

Memories are what is true now; a superseded one (valid time ended) appears only when the query asks about the past
or a change (`asks_about_past`) or when `as_of` asks what was true at a moment, and then marked with its validity.
Every memory line says when it became true (valid time), every excerpt is headed by the day its turns were said."""

import re
from dataclasses import dataclass
from datetime import date, datetime

from django.conf import settings
from lemminflect import getAllLemmas

from conversations.excerpts import WORD, ContextItem, excerpts, said_on
from conversations.models import Conversation, Message
from conversations.selectors import message_hits
from integrations.embeddings import count_tokens
from memories.search import ScoredMemory, embed_query, memory_search, query_periods
from memories.search.passages import ScoredPassage
from memories.selectors import MemoryFilters
from observability import hooks
from profiles.context import profile_block

MEMORY_SHARE = 0.35  # of the budget, for memories first; excerpts get the rest, then memories any leftover
EXCERPT_HITS = 20  # matching messages considered for excerpts
# a matching message scoring under this share of the best match brings no excerpt: a lone "Enjoy the view!" (no
# shared word, a cosine just over message search's floor; ~0.05 of the best) otherwise takes budget from better
# items. Relative, as hybrid scores have no fixed scale across queries. The highest share that costs nothing:
# LoCoMo --set first (every 2nd question) evidence recall at 1,000 tokens 0.793 at 0, 0.2 and 0.3; LongMemEval
# oracle tuning set (bench/longmemeval_context.py --limit 20) knowledge-update recall 0.950 at 0 and 0.2, 0.925
# at 0.3, 0.900 at 0.5
EXCERPT_FLOOR = 0.2
MEMORIES_HEADER = "Memories (most relevant first):"
EXCERPTS_HEADER = "Conversation excerpts:"

# Words that make a query ask about the past or a change, compared as lemmas (lemminflect: "moved", "moving" ->
# move; "switched" -> switch), so that superseded memories come too, marked as past. A word list rather than a
# meaning test: the local model places "where do I live?" and "where did I live before?" at cosine ~0.8, it
# does not tell tense. Past-tense auxiliaries count: a question about what happened may need what was then true.
PAST_LEMMAS = frozenset({
    "before", "previous", "previously", "former", "formerly", "earlier", "originally", "prior", "past", "ex",
    "first", "history", "anymore", "until", "still", "change", "switch", "move", "relocate", "leave",
    "quit", "replace", "upgrade", "swap",
})
PAST_FORMS = frozenset({"did", "was", "were", "had", "used"})  # "used" as in "used to"
PAST_PHRASES = re.compile(r"\b(?:how long|no longer|any more|since when)\b")


def asks_about_past(query: str) -> bool:
    """Whether `query` asks about the past or a change ("where did I live before?", "when did I move?", "how long
    was I at Acme?", "what car did I use to drive?", "my address in 2021"), not only about what is true now."""
    text = query.lower()
    if PAST_PHRASES.search(text):
        return True
    today = date.today().toordinal()
    if any(period[0] == "range" and period[2] <= today for period in query_periods(query)):
        return True  # it names a day, month or year that is over
    for word in WORD.findall(text):
        if word in PAST_FORMS or word in PAST_LEMMAS:
            return True
        if any(lemma in PAST_LEMMAS for lemmas in getAllLemmas(word).values() for lemma in lemmas):
            return True
    return False


@dataclass(frozen=True)
class Context:
    """What to put in front of the model for its next turn, within `budget` tokens of the local tokenizer,
    headers included. `past`: superseded memories were allowed in (the query asked about the past, or `as_of`)."""

    query: str
    budget: int
    used_tokens: int
    items: list[ContextItem]
    text: str
    degraded: bool
    as_of: datetime | None = None
    past: bool = False

    @property
    def memories(self) -> list[ScoredMemory]:
        return [ScoredMemory(i.memory, i.score, {}) for i in self.items if i.type == "memory"]


def memory_line(memory, as_of: datetime | None = None) -> str:
    """A memory as the model reads it, with when it became true (valid time, not when it was said or stored); one
    that is no longer true says so, with the span it held: "- Lives in Paris [no longer true: 2 March 2023 to
    20 June 2024]"; one that was still true at `as_of` says that first ("[true then: ...; no longer true now]")."""
    since = memory.valid_from or memory.happened_at
    if memory.valid_to is not None:
        # a span within one day ("Lives in Paris", written by hand today and replaced today) says only its end
        held = since and said_on(since) != said_on(memory.valid_to)
        span = f"{said_on(since)} to {said_on(memory.valid_to)}" if held else f"until {said_on(memory.valid_to)}"
        if as_of is not None and memory.valid_to > as_of:
            return f"- {memory.content} [true then: {span}; no longer true now]"
        return f"- {memory.content} [no longer true: {span}]"
    if memory.superseded_by_id is not None:  # superseded before valid time was recorded
        return f"- {memory.content} [no longer true]"
    return f"- {memory.content} ({said_on(since)})" if since else f"- {memory.content}"


def _memory_item(scored: ScoredMemory, as_of: datetime | None = None) -> ContextItem:
    text = memory_line(scored.memory, as_of)
    return ContextItem("memory", text, scored.score, count_tokens(text) + 1, memory=scored.memory,
                       parts=scored.parts)


def _pack(items: list[ContextItem], room: int) -> tuple[list[ContextItem], int]:
    """Best first, each whole or not at all, within `room` tokens."""
    taken, used = [], 0
    for item in items:
        if used + item.tokens <= room:
            taken.append(item)
            used += item.tokens
    return taken, used


def worth_an_excerpt(hits: list[ScoredPassage]) -> list[ScoredPassage]:
    """The hits that may bring an excerpt: those scoring at least EXCERPT_FLOOR of the best one."""
    if not hits:
        return []
    floor = EXCERPT_FLOOR * max(h.score for h in hits)
    return [h for h in hits if h.score >= floor]


@hooks.context
def context_for(*, owner, query: str, budget: int | None = None, conversation: Conversation | None = None,
                stay_in_conversation: bool = False, limit: int = 20, as_of: datetime | None = None,
                query_vector: list[float] | None = None) -> Context:
    """The memories and conversation excerpts relevant to `query`, best first, packed into `budget` tokens.

    Memories get up to MEMORY_SHARE of the budget first (they are compact), excerpts of what was said (from all
    the owner's conversations in scope, or only `conversation` with `stay_in_conversation`) the rest, then
    memories any room left, and last the nearly related that top up a short list (memory_search's fill: a new
    owner's "Loves Studio Ghibli films" for "what could I get her for her birthday?"). Memories are the current
    ones; superseded ones too (marked) when the query asks about the past or a change. `as_of`: what was true at
    that moment (valid time) and only what had been said by then. The query is embedded once for both searches.
    Scope follows `conversation`'s project (seed 004's rule). `query_vector` skips embedding the query."""
    budget = budget or settings.MEMORY_CONTEXT_BUDGET
    query = (query or "").strip()
    if not query:
        return Context(query="", budget=budget, used_tokens=0, items=[], text="", degraded=False, as_of=as_of)
    owner_id = getattr(owner, "pk", owner)
    project = conversation.project if conversation is not None else None
    past = as_of is not None or asks_about_past(query)
    vector, _ = embed_query(query, query_vector, what="context", owner_id=owner_id)
    # the provider is asked once: without a vector both searches answer from full text
    mode = "hybrid" if vector is not None else "keyword"
    filters = MemoryFilters(project=project, as_of=as_of, include_superseded=past)
    memories = memory_search(owner=owner_id, query=query, mode=mode, limit=limit, filters=filters,
                             query_vector=vector)
    # a short list is topped up with the nearly related at score 0: they get only the room nothing related wants
    related = [s for s in memories.results if s.score > 0]
    hits = message_hits(owner=owner_id, query=query, mode=mode, limit=EXCERPT_HITS, project=project,
                        conversation=conversation if stay_in_conversation else None, sent_before=as_of,
                        query_vector=vector)
    head = profile_block(owner=owner_id, project=project, budget=budget, as_of=as_of,  # the profile first
                         found=tuple(s.memory.pk for s in related))
    in_profile = set(head.memory_ids)  # a memory the profile already says is not said twice
    memory_items = [_memory_item(s, as_of) for s in related if s.memory.pk not in in_profile]
    nearly = [_memory_item(s, as_of) for s in memories.results if s.score <= 0 and s.memory.pk not in in_profile]
    fixed = count_tokens(MEMORIES_HEADER) + count_tokens(EXCERPTS_HEADER) + 2 + head.tokens
    room = max(0, budget - fixed)
    first, used_memories = _pack(memory_items, int(room * MEMORY_SHARE))
    shown, used_excerpts = excerpts(owner_id, worth_an_excerpt(hits), room - used_memories, query)
    rest, _ = _pack([i for i in memory_items if i not in first] + nearly, room - used_memories - used_excerpts)
    chosen_memories = sorted(first + rest, key=lambda i: -i.score)  # stable: the nearly related in their order

    # the text's size is the sum of its parts' (word pieces never span the line breaks joining them; each item's
    # count has one for its own line break): a ~1,000-token text is not counted again
    sections, used = ([head.text], head.tokens) if head.text else ([], 0)
    for header, chosen in ((MEMORIES_HEADER, chosen_memories), (EXCERPTS_HEADER, shown)):
        if chosen:
            sections.append("\n".join([header, *(i.text for i in chosen)]))
            used += count_tokens(header) + sum(i.tokens - 1 for i in chosen)
    text = "\n".join(sections)
    profile = [ContextItem("profile", head.text, 1.0, head.tokens, memory_ids=head.memory_ids)] if head.text else []
    items = profile + chosen_memories + shown
    return Context(query=query, budget=budget, used_tokens=used, items=items,
                   text=text, degraded=vector is None, as_of=as_of, past=past)


def conversation_context(*, conversation: Conversation, query: str | None = None, budget: int | None = None,
                         limit: int = 20, stay_in_conversation: bool = False,
                         as_of: datetime | None = None) -> Context:
    """`context_for` the conversation's owner; the query defaults to the latest user message (else the title)."""
    if not query:
        latest = (conversation.messages.filter(role=Message.Role.USER).order_by("-sent_at", "-sequence")
                  .values_list("content", flat=True).first())
        query = latest or conversation.title or ""
    return context_for(owner=conversation.owner_id, query=query, budget=budget, conversation=conversation,
                       stay_in_conversation=stay_in_conversation, limit=limit, as_of=as_of)
