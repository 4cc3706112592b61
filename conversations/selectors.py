"""Reads of conversations that take more than one step: message search (what was said, as episodes). The context
an agent puts in front of its model is in conversations.context."""

from dataclasses import dataclass
from datetime import datetime

from django.db import connection, transaction
from django.db.models import Q

from conversations.models import Conversation, Message
from memories.models import Project
from memories.search import (
    DATE_BONUS,
    calibrated_similarity,
    embed_query,
    passage_candidates,
    query_periods,
    score_passages,
    search_start,
    within_periods,
)

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
                     conversation: Conversation | None = None, sent_before: datetime | None = None):
    """The owner's messages in scope (seed 004's rule, as for memories: no project -> conversations without
    one; a project -> those plus the project's; `all_projects` -> every conversation), or one conversation's;
    with `sent_before`, only those said by then."""
    qs = Message.objects.filter(owner=owner)
    if sent_before is not None:
        qs = qs.filter(sent_at__lte=sent_before)
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
                   conversation: Conversation | None = None, sent_before: datetime | None = None,
                   query_vector: list[float] | None = None) -> MessageResults:
    """Search what was said in the owner's conversations, in memory search's modes: semantic (cosine >=
    `threshold`, default MESSAGE_THRESHOLD), keyword (BM25 over the stored tsvector) or hybrid (0.3 x calibrated
    cosine + 0.7 x BM25 share, + DATE_BONUS when the message was sent within a date the query names; a message
    with none of the query's words and a cosine under MIN_SIMILARITY is not related and never returned).
    Messages not embedded yet are found by words. `sent_before`: only what was said by then. `query_vector`
    skips embedding the query."""
    if mode not in SEARCH_MODES:
        raise ValueError(f"mode must be one of {SEARCH_MODES}, not {mode!r}")
    if not 1 <= limit <= MAX_LIMIT:
        raise ValueError(f"limit must be between 1 and {MAX_LIMIT}")
    degraded, vector = False, None
    if mode != "keyword" and query.strip():
        vector, degraded = embed_query(query, query_vector, what="message search", space="messages")
    if mode == "semantic" and vector is None and not degraded:
        return MessageResults([], mode, False)
    owner_id = getattr(owner, "pk", owner)
    base = message_queryset(owner=owner_id, project=project, all_projects=all_projects, conversation=conversation,
                            sent_before=sent_before)
    with transaction.atomic(), connection.cursor() as cursor:
        lexemes = search_start(cursor, query if mode != "semantic" or degraded else "",
                               ef_search=HNSW_EF_SEARCH if vector is not None else None)
        # when each was said comes with the candidates: ranking needs nothing else, and only the returned messages
        # are loaded as models (building ~170 of them was half of a search's time; bench/context_latency.py)
        found = passage_candidates(cursor, base=base, table="conversations_message", owner_id=owner_id,
                                   vector=vector, lexemes=lexemes, k=max(CANDIDATES, limit), k1=BM25_K1, b=BM25_B,
                                   columns=("m.sent_at", "m.sequence"))
    said = {row[0]: (row[3], row[4]) for row in found}
    periods = query_periods(query) if mode == "hybrid" else []

    def hybrid(message_id, similarity, keyword):
        if keyword <= 0 and (similarity is None or similarity < MIN_SIMILARITY):
            return None
        sent_at = said[message_id][0].timestamp()
        return {"semantic": SEMANTIC_WEIGHT * calibrated_similarity(similarity),
                "keyword": (1 - SEMANTIC_WEIGHT) * keyword,
                "date": DATE_BONUS if periods and within_periods(sent_at, periods) else 0.0}

    ranked = score_passages([row[:3] for row in found], mode=mode, degraded=degraded, has_vector=vector is not None,
                            threshold=threshold, semantic_threshold=MESSAGE_THRESHOLD, hybrid=hybrid)
    ranked.sort(key=lambda r: (-r[1], *said[r[0]]))
    scored: list[ScoredMessage] = []
    start = 0
    while len(scored) < limit and start < len(ranked):
        # the best `limit` as models; more only when some went since the candidates were read
        batch = ranked[start:start + limit - len(scored)]
        start += len(batch)
        messages = (Message.objects.filter(owner_id=owner_id).select_related("conversation")
                    .defer("embedding", "search_vector").in_bulk([message_id for message_id, _, _ in batch]))
        scored += [ScoredMessage(messages[message_id], score, parts) for message_id, score, parts in batch
                   if message_id in messages]
    return MessageResults(scored, mode, degraded)
