"""The context an agent puts in front of its model (seed 000's retrieveMemories): the best memories and the best
excerpts of what was said, within a token budget.

Memories are what is true now; a superseded one (valid time ended) appears only when the query asks about the past
or a change (`asks_about_past`) or when `as_of` asks what was true at a moment, and then marked with its validity.
Every memory line says when it became true (valid time), every excerpt is headed by the day its turns were said."""

import re
import uuid
from dataclasses import dataclass, field
from datetime import date, datetime

from django.conf import settings
from django.db.models import Q
from lemminflect import getAllLemmas
from spacy.lang.en.stop_words import STOP_WORDS

from conversations.models import Conversation, Message
from conversations.selectors import ScoredMessage, message_search
from extraction.sentences import split_sentences
from integrations.embeddings import count_tokens
from memories.models import Memory
from memories.search import ScoredMemory, embed_query, memory_search, query_periods
from memories.selectors import MemoryFilters
from observability import hooks
from profiles.context import profile_block

NEIGHBOURS = 1  # turns on each side of a matching message in an excerpt: the answer is often the next turn
MEMORY_SHARE = 0.35  # of the budget, for memories first; excerpts get the rest, then memories any leftover
EXCERPT_HITS = 20  # matching messages considered for excerpts
# a matching message scoring under this share of the best match brings no excerpt: a lone "Enjoy the view!" (no
# shared word, a cosine just over message search's floor; ~0.05 of the best) otherwise takes budget from better
# items. Relative, as hybrid scores have no fixed scale across queries. The highest share that costs nothing:
# LoCoMo --set first (every 2nd question) evidence recall at 1,000 tokens 0.793 at 0, 0.2 and 0.3; LongMemEval
# oracle tuning set (bench/longmemeval_context.py --limit 20) knowledge-update recall 0.950 at 0 and 0.2, 0.925
# at 0.3, 0.900 at 0.5
EXCERPT_FLOOR = 0.2
# a turn longer than this (word pieces) is shown by its sentences that share most words with the query, in order,
# with "…" for what is left out: a 700-token reply next to a hit otherwise fills an excerpt budget alone
# (LongMemEval's assistant turns; bench/longmemeval_context.py)
TURN_TOKENS = 100
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
_WORD = re.compile(r"[a-z]+")


def asks_about_past(query: str) -> bool:
    """Whether `query` asks about the past or a change ("where did I live before?", "when did I move?", "how long
    was I at Acme?", "what car did I use to drive?", "my address in 2021"), not only about what is true now."""
    text = query.lower()
    if PAST_PHRASES.search(text):
        return True
    today = date.today().toordinal()
    if any(period[0] == "range" and period[2] <= today for period in query_periods(query)):
        return True  # it names a day, month or year that is over
    for word in _WORD.findall(text):
        if word in PAST_FORMS or word in PAST_LEMMAS:
            return True
        if any(lemma in PAST_LEMMAS for lemmas in getAllLemmas(word).values() for lemma in lemmas):
            return True
    return False


@dataclass
class ContextItem:
    """One thing in the context: the profile (with due reminders), a memory, or an excerpt of a conversation
    (matching messages with their neighbouring turns, all said on one day). `text` is what the model reads."""

    type: str  # profile | memory | excerpt
    text: str
    score: float
    tokens: int
    memory: object = None  # the Memory, for a memory item
    conversation: Conversation | None = None
    messages: list[Message] = field(default_factory=list)  # an excerpt's turns, in order
    hits: list[uuid.UUID] = field(default_factory=list)  # the excerpt's matching messages
    outdated: list[uuid.UUID] = field(default_factory=list)  # its turns marked as saying what is no longer true
    memory_ids: tuple = ()  # the profile's: the memories behind its entries
    parts: dict = field(default_factory=dict)  # a memory's: its score's parts, as search gives them

    def source(self) -> dict:
        if self.type == "profile":
            return {"memory_ids": [str(m) for m in self.memory_ids]}
        if self.type == "memory":
            m = self.memory
            return {"memory_id": str(m.pk), "conversation_id": str(m.conversation_id) if m.conversation_id else None,
                    "message_id": str(m.message_id) if m.message_id else None,
                    "document_id": (m.source_ref or {}).get("document_id"),
                    "valid_from": m.valid_from.isoformat() if m.valid_from else None,
                    "valid_to": m.valid_to.isoformat() if m.valid_to else None}
        return {"conversation_id": str(self.conversation.pk), "conversation_title": self.conversation.title,
                "message_ids": [str(m.pk) for m in self.messages], "hit_message_ids": [str(h) for h in self.hits],
                "sent_at": self.messages[0].sent_at.isoformat()}


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


def _day(moment: datetime) -> str:
    return f"{moment.day} {moment:%B %Y}"


def _speaker(message: Message) -> str:
    return message.name or message.role


def memory_line(memory) -> str:
    """A memory as the model reads it, with when it became true (valid time, not when it was said or stored); one
    that is no longer true says so, with the span it held: "- Lives in Paris [no longer true: 2 March 2023 to
    20 June 2024]"."""
    since = memory.valid_from or memory.happened_at
    if memory.valid_to is not None:
        span = f"{_day(since)} to {_day(memory.valid_to)}" if since else f"until {_day(memory.valid_to)}"
        return f"- {memory.content} [no longer true: {span}]"
    if memory.superseded_by_id is not None:  # superseded before valid time was recorded
        return f"- {memory.content} [no longer true]"
    return f"- {memory.content} ({_day(since)})" if since else f"- {memory.content}"


def _memory_item(scored: ScoredMemory) -> ContextItem:
    text = memory_line(scored.memory)
    return ContextItem("memory", text, scored.score, count_tokens(text) + 1, memory=scored.memory,
                       parts=scored.parts)


def _lemmas(text: str) -> set[str]:
    """The words of `text` that carry meaning (spaCy's English stop words left out), as lemmas."""
    found = set()
    for word in _WORD.findall(text.lower()):
        if word not in STOP_WORDS:
            found.update(lemma for lemmas in getAllLemmas(word).values() for lemma in lemmas)
            found.add(word)
    return found


def clipped(text: str, words: set[str], limit: int | None = None) -> str:
    """`text`, or when it is longer than `limit` word pieces (default TURN_TOKENS), its sentences that share most
    of `words` (then the earliest), in their order, within `limit`; "…" marks what is left out."""
    limit = limit or TURN_TOKENS
    if count_tokens(text) <= limit:
        return text
    sentences = split_sentences(text, dialogue=True)
    ranked = sorted(range(len(sentences)), key=lambda i: (-len(words & _lemmas(sentences[i])), i))
    keep, used = [], 0
    for i in ranked:
        cost = count_tokens(sentences[i]) + 1
        if used + cost <= limit:
            keep.append(i)
            used += cost
    if not keep:  # one long sentence: its start
        return " ".join(text.split()[:limit // 2]) + " …"
    parts, previous = [], -1
    for i in sorted(keep):
        if i != previous + 1:
            parts.append("…")
        parts.append(sentences[i])
        previous = i
    if previous != len(sentences) - 1:
        parts.append("…")
    return " ".join(parts)


def _turn_line(message: Message, words: set[str]) -> str:
    return f"{_speaker(message)}: {clipped(message.content, words)}"


def _excerpt_header(message: Message) -> str:
    title = f', "{message.conversation.title}"' if message.conversation.title else ""
    return f"[{_day(message.sent_at)}{title}]"


def _runs(sequences, days: dict, conversation_id) -> list[list[int]]:
    """One conversation's shown turns as excerpts: consecutive turns said on the same day (a day's change starts
    a new excerpt, under its own header). `days`: (conversation, sequence) -> the day its turn was said."""
    runs: list[list[int]] = []
    for s in sorted(sequences):
        if runs and s == runs[-1][-1] + 1 and days[(conversation_id, s)] == days[(conversation_id, runs[-1][-1])]:
            runs[-1].append(s)
        else:
            runs.append([s])
    return runs


def _excerpts(owner_id: int, hits: list[ScoredMessage], room: int, query: str) -> tuple[list[ContextItem], int]:
    """Excerpts of what was said, within `room` tokens: each hit (best first) with NEIGHBOURS turns either side
    (just the hit when its window does not fit); a turn is shown once (a long one by its sentences nearest the
    query: `clipped`), and turns that end up next to each other in a conversation and were said on the same day
    read as one excerpt under one header (its score: its best hit's)."""
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
    words = _lemmas(query)
    outdated = _outdated({m.pk for m in turns.values()}, owner_id)
    lines = {key: _turn_line(m, words) + outdated.get(m.pk, "") for key, m in turns.items()}
    cost = {key: count_tokens(line) + 1 for key, line in lines.items()}
    days = {key: _day(m.sent_at) for key, m in turns.items()}  # worked out once: runs are redrawn for every hit
    header_cost: dict[tuple, int] = {}

    def headers(conversation_id, sequences) -> int:
        total = 0
        for run in _runs(sequences, days, conversation_id):
            key = (conversation_id, run[0])
            if key not in header_cost:
                header_cost[key] = count_tokens(_excerpt_header(turns[key])) + 1
            total += header_cost[key]
        return total

    shown: dict[tuple, float] = {}  # (conversation, sequence) -> score of the hit that brought it
    used = 0
    for hit in hits:
        conversation_id, seq = hit.message.conversation_id, hit.message.sequence
        for window in (range(seq - NEIGHBOURS, seq + NEIGHBOURS + 1), range(seq, seq + 1)):
            new = [(conversation_id, s) for s in window if (conversation_id, s) in turns
                   and (conversation_id, s) not in shown]
            if not new:
                break
            before = [s for c, s in shown if c == conversation_id]
            price = (sum(cost[key] for key in new) + headers(conversation_id, before + [s for _, s in new])
                     - headers(conversation_id, before))
            if used + price <= room:
                used += price
                for key in new:
                    shown[key] = max(shown.get(key, 0.0), hit.score)
                break
    hit_ids = {hit.message.pk for hit in hits}
    items = []
    for conversation_id in {key[0] for key in shown}:
        for run in _runs([s for c, s in shown if c == conversation_id], days, conversation_id):
            messages = [turns[(conversation_id, s)] for s in run]
            text = "\n".join([_excerpt_header(messages[0]), *(lines[(conversation_id, s)] for s in run)])
            items.append(ContextItem(
                "excerpt", text, max(shown[(conversation_id, s)] for s in run), count_tokens(text) + 1,
                conversation=messages[0].conversation, messages=messages,
                hits=[m.pk for m in messages if m.pk in hit_ids], outdated=[m.pk for m in messages if m.pk in outdated],
            ))
    items.sort(key=lambda i: -i.score)
    return items, sum(i.tokens for i in items)


OUTDATED = " [no longer true: since superseded]"
OUTDATED_SHOWN = 2  # superseded statements named beside a turn that also said things still true


def _outdated(message_ids: set, owner_id: int) -> dict:
    """What the excerpt says beside each turn that said something since superseded (an agent reads the newer fact
    among the memories): OUTDATED when everything it said was, else which of its statements ("[no longer true:
    The user drives a Corolla]")."""
    rows = Memory.objects.filter(owner_id=owner_id, message_id__in=message_ids, is_active=True).order_by(
        "created_at").values_list("message_id", "superseded_by_id", "content", "metadata__frames")
    current, past = set(), {}
    for message_id, superseded_by, content, frames in rows:
        # "I left Acme" is kept as the past of the Acme chain, yet what it says stays true
        if superseded_by is None or any(f.get("ended") for f in frames or [] if isinstance(f, dict)):
            current.add(message_id)
        else:
            past.setdefault(message_id, []).append(content.rstrip(". "))
    return {message_id: f" [no longer true: {'; '.join(said[:OUTDATED_SHOWN])}]" if message_id in current
            else OUTDATED for message_id, said in past.items()}


def _pack(items: list[ContextItem], room: int) -> tuple[list[ContextItem], int]:
    """Best first, each whole or not at all, within `room` tokens."""
    taken, used = [], 0
    for item in items:
        if used + item.tokens <= room:
            taken.append(item)
            used += item.tokens
    return taken, used


def worth_an_excerpt(hits: list[ScoredMessage]) -> list[ScoredMessage]:
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
    memories any room left. Memories are the current ones; superseded ones too (marked) when the query asks about
    the past or a change. `as_of`: what was true at that moment (valid time) and only what had been said by then.
    The query is embedded once for both searches. Scope follows `conversation`'s project (seed 004's rule).
    `query_vector` skips embedding the query."""
    budget = budget or settings.MEMORY_CONTEXT_BUDGET
    query = (query or "").strip()
    if not query:
        return Context(query="", budget=budget, used_tokens=0, items=[], text="", degraded=False, as_of=as_of)
    owner_id = getattr(owner, "pk", owner)
    project = conversation.project if conversation is not None else None
    past = as_of is not None or asks_about_past(query)
    vector, _ = embed_query(query, query_vector, what="context")
    # the provider is asked once: without a vector both searches answer from full text
    mode = "hybrid" if vector is not None else "keyword"
    filters = MemoryFilters(project=project, as_of=as_of, include_superseded=past)
    memories = memory_search(owner=owner_id, query=query, mode=mode, limit=limit, filters=filters,
                             query_vector=vector)
    messages = message_search(owner=owner_id, query=query, mode=mode, limit=EXCERPT_HITS, project=project,
                              conversation=conversation if stay_in_conversation else None, sent_before=as_of,
                              query_vector=vector)
    head = profile_block(owner=owner_id, project=project, budget=budget, as_of=as_of,  # the profile first
                         found=tuple(s.memory.pk for s in memories.results))
    shown = set(head.memory_ids)  # a memory the profile already says is not said twice
    memory_items = [_memory_item(s) for s in memories.results if s.memory.pk not in shown]
    fixed = count_tokens(MEMORIES_HEADER) + count_tokens(EXCERPTS_HEADER) + 2 + head.tokens
    room = max(0, budget - fixed)
    first, used_memories = _pack(memory_items, int(room * MEMORY_SHARE))
    excerpts, used_excerpts = _excerpts(owner_id, worth_an_excerpt(messages.results), room - used_memories, query)
    rest, _ = _pack([i for i in memory_items if i not in first], room - used_memories - used_excerpts)
    chosen_memories = sorted(first + rest, key=lambda i: -i.score)

    sections = [head.text] if head.text else []
    if chosen_memories:
        sections.append("\n".join([MEMORIES_HEADER, *(i.text for i in chosen_memories)]))
    if excerpts:
        sections.append("\n".join([EXCERPTS_HEADER, *(i.text for i in excerpts)]))
    text = "\n".join(sections)
    profile = [ContextItem("profile", head.text, 1.0, head.tokens, memory_ids=head.memory_ids)] if head.text else []
    items = profile + chosen_memories + excerpts
    return Context(query=query, budget=budget, used_tokens=count_tokens(text) if text else 0, items=items,
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
