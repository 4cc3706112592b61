"""Reads of conversations that take more than one step: message search (what was said, as episodes) and the
context an agent puts in front of its model (the best memories and the best conversation excerpts)."""

import uuid
from dataclasses import dataclass, field
from datetime import datetime

from django.conf import settings
from django.db import connection, transaction
from django.db.models import Q

from conversations.models import Conversation, Message
from integrations.embeddings import count_tokens
from memories.models import Project
from memories.search import (
    DATE_BONUS,
    ScoredMemory,
    calibrated_similarity,
    embed_query,
    memory_search,
    passage_candidates,
    query_periods,
    score_passages,
    search_start,
    within_periods,
)
from memories.selectors import MemoryFilters

SEARCH_MODES = ("semantic", "keyword", "hybrid")
MAX_LIMIT = 200
CANDIDATES = 100  # per signal
HNSW_EF_SEARCH = 100
MESSAGE_THRESHOLD = 0.5  # semantic mode: minimum cosine similarity (turns are short, like memories)
SEMANTIC_WEIGHT = 0.3  # as memory search's fused ranking: turns are as short as memories
BM25_K1, BM25_B = 1.2, 0.4
# hybrid: a message with none of the query's words must be at least this similar to be related at all
MIN_SIMILARITY = 0.25


@dataclass(frozen=True)
class ScoredMessage:
    message: Message
    score: float
    parts: dict[str, float]  # what the score is made of; they add up to it


@dataclass(frozen=True)
class MessageResults:
    results: list[ScoredMessage]
    mode: str
    degraded: bool  # the embedding provider failed: answered from full text alone


def message_queryset(*, owner, project: Project | None = None, all_projects: bool = False,
                     conversation: Conversation | None = None):
    """The owner's messages in scope (seed 004's rule, as for memories: no project -> conversations without
    one; a project -> those plus the project's; `all_projects` -> every conversation), or one conversation's."""
    qs = Message.objects.filter(owner=owner)
    if conversation is not None:
        return qs.filter(conversation=conversation)
    if not all_projects:
        scope = Q(conversation__project__isnull=True)
        if project is not None:
            scope |= Q(conversation__project=project)
        qs = qs.filter(scope)
    return qs


def message_search(*, owner, query: str, mode: str = "hybrid", limit: int = 20, threshold: float | None = None,
                   project: Project | None = None, all_projects: bool = False,
                   conversation: Conversation | None = None,
                   query_vector: list[float] | None = None) -> MessageResults:
    """Search what was said in the owner's conversations, in memory search's modes: semantic (cosine >=
    `threshold`, default MESSAGE_THRESHOLD), keyword (BM25 over the stored tsvector) or hybrid (0.3 x calibrated
    cosine + 0.7 x BM25 share, + DATE_BONUS when the message was sent within a date the query names; a message
    with none of the query's words and a cosine under MIN_SIMILARITY is not related and never returned).
    Messages not embedded yet are found by words. `query_vector` skips embedding the query."""
    if mode not in SEARCH_MODES:
        raise ValueError(f"mode must be one of {SEARCH_MODES}, not {mode!r}")
    if not 1 <= limit <= MAX_LIMIT:
        raise ValueError(f"limit must be between 1 and {MAX_LIMIT}")
    degraded, vector = False, None
    if mode != "keyword" and query.strip():
        vector, degraded = embed_query(query, query_vector, what="message search")
    if mode == "semantic" and vector is None and not degraded:
        return MessageResults([], mode, False)
    owner_id = getattr(owner, "pk", owner)
    base = message_queryset(owner=owner_id, project=project, all_projects=all_projects, conversation=conversation)
    with transaction.atomic(), connection.cursor() as cursor:
        lexemes = search_start(cursor, query if mode != "semantic" or degraded else "",
                               ef_search=HNSW_EF_SEARCH if vector is not None else None)
        found = passage_candidates(cursor, base=base, table="conversations_message", owner_id=owner_id,
                                   vector=vector, lexemes=lexemes, k=max(CANDIDATES, limit), k1=BM25_K1, b=BM25_B)
    messages = (Message.objects.filter(owner_id=owner_id).select_related("conversation")
                .defer("embedding", "search_vector").in_bulk([row[0] for row in found]))
    periods = query_periods(query) if mode == "hybrid" else []

    def hybrid(message_id, similarity, keyword):
        if keyword <= 0 and (similarity is None or similarity < MIN_SIMILARITY):
            return None
        sent_at = messages[message_id].sent_at.timestamp()
        return {"semantic": SEMANTIC_WEIGHT * calibrated_similarity(similarity),
                "keyword": (1 - SEMANTIC_WEIGHT) * keyword,
                "date": DATE_BONUS if periods and within_periods(sent_at, periods) else 0.0}

    scored = [
        ScoredMessage(messages[message_id], score, parts)
        for message_id, score, parts in score_passages(
            [row for row in found if row[0] in messages], mode=mode, degraded=degraded,
            has_vector=vector is not None, threshold=threshold, semantic_threshold=MESSAGE_THRESHOLD,
            hybrid=hybrid,
        )
    ]
    scored.sort(key=lambda s: (-s.score, s.message.sent_at, s.message.sequence))
    return MessageResults(scored[:limit], mode, degraded)


# --- context --------------------------------------------------------------------------------------------------

NEIGHBOURS = 1  # turns on each side of a matching message in an excerpt: the answer is often the next turn
MEMORY_SHARE = 0.35  # of the budget, for memories first; excerpts get the rest, then memories any leftover
EXCERPT_HITS = 20  # matching messages considered for excerpts
MEMORIES_HEADER = "Memories (most relevant first):"
EXCERPTS_HEADER = "Conversation excerpts:"


@dataclass
class ContextItem:
    """One thing in the context: a memory, or an excerpt of a conversation (matching messages with their
    neighbouring turns). `text` is what the model reads."""

    type: str  # memory | excerpt
    text: str
    score: float
    tokens: int
    memory: object = None  # the Memory, for a memory item
    conversation: Conversation | None = None
    messages: list[Message] = field(default_factory=list)  # an excerpt's turns, in order
    hits: list[uuid.UUID] = field(default_factory=list)  # the excerpt's matching messages

    def source(self) -> dict:
        if self.type == "memory":
            m = self.memory
            return {"memory_id": str(m.pk), "conversation_id": str(m.conversation_id) if m.conversation_id else None,
                    "message_id": str(m.message_id) if m.message_id else None,
                    "document_id": (m.source_ref or {}).get("document_id")}
        return {"conversation_id": str(self.conversation.pk), "conversation_title": self.conversation.title,
                "message_ids": [str(m.pk) for m in self.messages], "hit_message_ids": [str(h) for h in self.hits],
                "sent_at": self.messages[0].sent_at.isoformat()}


@dataclass(frozen=True)
class Context:
    """What to put in front of the model for its next turn (seed 000's retrieveMemories), within `budget`
    tokens of the local tokenizer, headers included."""

    query: str
    budget: int
    used_tokens: int
    items: list[ContextItem]
    text: str
    degraded: bool

    @property
    def memories(self) -> list[ScoredMemory]:
        return [ScoredMemory(i.memory, i.score, {}) for i in self.items if i.type == "memory"]


def _day(moment: datetime) -> str:
    return f"{moment.day} {moment:%B %Y}"


def _speaker(message: Message) -> str:
    return message.name or message.role


def _memory_item(scored: ScoredMemory) -> ContextItem:
    memory = scored.memory
    when = f" ({_day(memory.happened_at)})" if memory.happened_at else ""
    text = f"- {memory.content}{when}"
    return ContextItem("memory", text, scored.score, count_tokens(text) + 1, memory=memory)


def _turn_line(message: Message) -> str:
    return f"{_speaker(message)}: {message.content}"


def _excerpt_header(message: Message) -> str:
    title = f', "{message.conversation.title}"' if message.conversation.title else ""
    return f"[{_day(message.sent_at)}{title}]"


def _excerpts(owner_id: int, hits: list[ScoredMessage], room: int) -> tuple[list[ContextItem], int]:
    """Excerpts of what was said, within `room` tokens: each hit (best first) with NEIGHBOURS turns either side
    (just the hit when its window does not fit); a turn is shown once, and turns that end up next to each
    other in a conversation read as one excerpt under one header (its score: its best hit's)."""
    if not hits or room <= 0:
        return [], 0
    wanted: dict[uuid.UUID, set[int]] = {}
    for hit in hits:
        seq = hit.message.sequence
        wanted.setdefault(hit.message.conversation_id, set()).update(range(seq - NEIGHBOURS, seq + NEIGHBOURS + 1))
    scope = Q()
    for conversation_id, sequences in wanted.items():
        scope |= Q(conversation_id=conversation_id, sequence__in=sorted(sequences))
    turns = {(m.conversation_id, m.sequence): m for m in Message.objects.filter(scope, owner_id=owner_id)
             .select_related("conversation").defer("embedding", "search_vector", "conversation__metadata")}
    cost = {key: count_tokens(_turn_line(m)) + 1 for key, m in turns.items()}
    shown: dict[tuple, float] = {}  # (conversation, sequence) -> score of the hit that brought it
    used = 0
    for hit in hits:
        conversation_id, seq = hit.message.conversation_id, hit.message.sequence
        for window in (range(seq - NEIGHBOURS, seq + NEIGHBOURS + 1), range(seq, seq + 1)):
            new = [(conversation_id, s) for s in window if (conversation_id, s) in turns
                   and (conversation_id, s) not in shown]
            if not new:
                break
            touches = any((conversation_id, s) in shown for s in range(window.start - 1, window.stop + 1))
            header = 0 if touches else count_tokens(_excerpt_header(hit.message)) + 1
            price = header + sum(cost[key] for key in new)
            if used + price <= room:
                used += price
                for key in new:
                    shown[key] = max(shown.get(key, 0.0), hit.score)
                break
    hit_ids = {hit.message.pk for hit in hits}
    items = []
    for conversation_id in {key[0] for key in shown}:
        sequences = sorted(s for c, s in shown if c == conversation_id)
        runs, run = [], [sequences[0]]
        for s in sequences[1:]:
            if s == run[-1] + 1:
                run.append(s)
            else:
                runs.append(run)
                run = [s]
        runs.append(run)
        for run in runs:
            messages = [turns[(conversation_id, s)] for s in run]
            text = "\n".join([_excerpt_header(messages[0]), *(_turn_line(m) for m in messages)])
            items.append(ContextItem(
                "excerpt", text, max(shown[(conversation_id, s)] for s in run), count_tokens(text) + 1,
                conversation=messages[0].conversation, messages=messages,
                hits=[m.pk for m in messages if m.pk in hit_ids],
            ))
    items.sort(key=lambda i: -i.score)
    return items, sum(i.tokens for i in items)


def _pack(items: list[ContextItem], room: int) -> tuple[list[ContextItem], int]:
    """Best first, each whole or not at all, within `room` tokens."""
    taken, used = [], 0
    for item in items:
        if used + item.tokens <= room:
            taken.append(item)
            used += item.tokens
    return taken, used


def context_for(*, owner, query: str, budget: int | None = None, conversation: Conversation | None = None,
                stay_in_conversation: bool = False, limit: int = 20,
                query_vector: list[float] | None = None) -> Context:
    """The memories and conversation excerpts relevant to `query`, best first, packed into `budget` tokens.

    Memories get up to MEMORY_SHARE of the budget first (they are compact), excerpts of what was said (from all
    the owner's conversations in scope, or only `conversation` with `stay_in_conversation`) the rest, then
    memories any room left. The query is embedded once for both searches. Scope follows `conversation`'s project
    (seed 004's rule). `query_vector` skips embedding the query."""
    budget = budget or settings.MEMORY_CONTEXT_BUDGET
    query = (query or "").strip()
    if not query:
        return Context(query="", budget=budget, used_tokens=0, items=[], text="", degraded=False)
    owner_id = getattr(owner, "pk", owner)
    project = conversation.project if conversation is not None else None
    vector, _ = embed_query(query, query_vector, what="context")
    # the provider is asked once: without a vector both searches answer from full text
    mode = "hybrid" if vector is not None else "keyword"
    memories = memory_search(owner=owner_id, query=query, mode=mode, limit=limit,
                             filters=MemoryFilters(project=project), query_vector=vector)
    messages = message_search(owner=owner_id, query=query, mode=mode, limit=EXCERPT_HITS, project=project,
                              conversation=conversation if stay_in_conversation else None, query_vector=vector)
    memory_items = [_memory_item(s) for s in memories.results]

    fixed = count_tokens(MEMORIES_HEADER) + count_tokens(EXCERPTS_HEADER) + 2
    room = max(0, budget - fixed)
    first, used_memories = _pack(memory_items, int(room * MEMORY_SHARE))
    excerpts, used_excerpts = _excerpts(owner_id, messages.results, room - used_memories)
    rest, _ = _pack([i for i in memory_items if i not in first], room - used_memories - used_excerpts)
    chosen_memories = sorted(first + rest, key=lambda i: -i.score)

    sections = []
    if chosen_memories:
        sections.append("\n".join([MEMORIES_HEADER, *(i.text for i in chosen_memories)]))
    if excerpts:
        sections.append("\n".join([EXCERPTS_HEADER, *(i.text for i in excerpts)]))
    text = "\n".join(sections)
    items = chosen_memories + excerpts
    return Context(query=query, budget=budget, used_tokens=count_tokens(text) if text else 0, items=items,
                   text=text, degraded=vector is None)


def conversation_context(*, conversation: Conversation, query: str | None = None, budget: int | None = None,
                         limit: int = 20, stay_in_conversation: bool = False) -> Context:
    """`context_for` the conversation's owner; the query defaults to the latest user message (else the title)."""
    if not query:
        latest = (conversation.messages.filter(role=Message.Role.USER).order_by("-sent_at", "-sequence")
                  .values_list("content", flat=True).first())
        query = latest or conversation.title or ""
    return context_for(owner=conversation.owner_id, query=query, budget=budget, conversation=conversation,
                       stay_in_conversation=stay_in_conversation, limit=limit)
