"""Reads of conversations that take more than one step: message search (what was said, as episodes; its statement
is in conversations.search). The context an agent puts in front of its model is in conversations.context."""

import uuid
from dataclasses import dataclass
from datetime import datetime

from conversations.models import Conversation, Message
from conversations.search import CANDIDATES, message_candidates, message_rows
from memories.models import Project
from memories.search import (
    DATE_BONUS,
    calibrated_similarity,
    embed_query,
    query_periods,
    score_passages,
    within_periods,
)

SEARCH_MODES = ("semantic", "keyword", "hybrid")
MAX_LIMIT = 200
MESSAGE_THRESHOLD = 0.5  # semantic mode: minimum cosine similarity (turns are short, like memories)
SEMANTIC_WEIGHT = 0.3  # as memory search's fused ranking: turns are as short as memories
# hybrid: a message with none of the query's words must be at least this similar to be related at all
MIN_SIMILARITY = 0.25


@dataclass(frozen=True)
class ScoredMessage:
    message: Message
    score: float
    parts: dict[str, float]  # what the score is made of; they add up to it


@dataclass(frozen=True)
class MessageHit:
    """A matching message as ranked, before (or instead of) loading it: what the context needs to fetch the
    hit with its neighbouring turns."""

    id: uuid.UUID
    conversation_id: uuid.UUID
    sequence: int
    score: float
    parts: dict[str, float]


@dataclass(frozen=True)
class MessageResults:
    results: list[ScoredMessage]
    mode: str
    degraded: bool  # the embedding provider failed: answered from full text alone


def message_search(*, owner, query: str, mode: str = "hybrid", limit: int = 20, threshold: float | None = None,
                   project: Project | None = None, all_projects: bool = False,
                   conversation: Conversation | None = None, sent_before: datetime | None = None,
                   query_vector: list[float] | None = None) -> MessageResults:
    """Search what was said in the owner's conversations (`message_hits`), the hits loaded as messages."""
    owner_id = getattr(owner, "pk", owner)
    hits, degraded = message_hits(owner=owner_id, query=query, mode=mode, limit=limit, threshold=threshold,
                                  project=project, all_projects=all_projects, conversation=conversation,
                                  sent_before=sent_before, query_vector=query_vector)
    # the vector comes along: a message's answer says whether it is embedded yet (deferred, that was a query each)
    messages = (Message.objects.filter(owner_id=owner_id).select_related("conversation")
                .defer("search_vector").in_bulk([hit.id for hit in hits]))
    # a hit deleted since the candidates were read is left out
    return MessageResults([ScoredMessage(messages[hit.id], hit.score, hit.parts) for hit in hits
                           if hit.id in messages], mode, degraded)


def message_hits(*, owner, query: str, mode: str = "hybrid", limit: int = 20, threshold: float | None = None,
                 project: Project | None = None, all_projects: bool = False,
                 conversation: Conversation | None = None, sent_before: datetime | None = None,
                 query_vector: list[float] | None = None) -> tuple[list[MessageHit], bool]:
    """(hits best first, degraded): what was said in the owner's conversations that matches `query`, in memory
    search's modes: semantic (cosine >= `threshold`, default MESSAGE_THRESHOLD), keyword (BM25 over the stored
    tsvector) or hybrid (0.3 x calibrated cosine + 0.7 x BM25 share, + DATE_BONUS when the message was sent within
    a date the query names; a message with none of the query's words and a cosine under MIN_SIMILARITY is not
    related and never returned). Messages not embedded yet are found by words. `sent_before`: only what was said
    by then. `query_vector` skips embedding the query. `degraded`: the embedding provider failed, answered from
    full text alone. The candidates come as memory search's do (memories.search.paths): small owners by an exact
    scan, larger ones from the HNSW index and a bounded keyword side (conversations.search)."""
    if mode not in SEARCH_MODES:
        raise ValueError(f"mode must be one of {SEARCH_MODES}, not {mode!r}")
    if not 1 <= limit <= MAX_LIMIT:
        raise ValueError(f"limit must be between 1 and {MAX_LIMIT}")
    degraded, vector = False, None
    if mode != "keyword" and query.strip():
        vector, degraded = embed_query(query, query_vector, what="message search", space="messages")
    if mode == "semantic" and vector is None and not degraded:
        return [], False
    owner_id = getattr(owner, "pk", owner)
    rows = message_rows(owner_id, project=project, all_projects=all_projects, conversation=conversation,
                        sent_before=sent_before)
    found = message_candidates(owner_id, rows, query if mode != "semantic" or degraded else "", vector,
                               k=max(CANDIDATES, limit))
    said = {row[0]: (row[3], row[4], row[5]) for row in found}  # id -> (sent_at, sequence, conversation)
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
    ranked.sort(key=lambda r: (-r[1], *said[r[0]][:2]))
    return [MessageHit(message_id, said[message_id][2], said[message_id][1], score, parts)
            for message_id, score, parts in ranked[:limit]], degraded
