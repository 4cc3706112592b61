"""Reads of conversations that take more than one step: message search (what was said, as episodes; its statement
is in conversations.search, its ranking is passage search's: memories.search.passages). The context an agent puts
in front of its model is in conversations.context."""

from datetime import datetime

from conversations.models import Conversation, Message
from conversations.search import MESSAGES, message_rows
from memories.models import Project
from memories.search.passages import Passages, passage_hits, passages_loaded


def message_search(*, owner, query: str, mode: str = "hybrid", limit: int = 20, threshold: float | None = None,
                   project: Project | None = None, all_projects: bool = False,
                   conversation: Conversation | None = None, sent_before: datetime | None = None,
                   query_vector: list[float] | None = None) -> Passages:
    """Search what was said in the owner's conversations (`message_hits`), the hits loaded as messages."""
    owner_id = getattr(owner, "pk", owner)
    hits = message_hits(owner=owner_id, query=query, mode=mode, limit=limit, threshold=threshold, project=project,
                        all_projects=all_projects, conversation=conversation, sent_before=sent_before,
                        query_vector=query_vector)
    # the vector comes along: a message's answer says whether it is embedded yet (deferred, that was a query each)
    return passages_loaded(hits, Message.objects.filter(owner_id=owner_id).select_related("conversation")
                           .defer("search_vector"))


def message_hits(*, owner, query: str, mode: str = "hybrid", limit: int = 20, threshold: float | None = None,
                 project: Project | None = None, all_projects: bool = False,
                 conversation: Conversation | None = None, sent_before: datetime | None = None,
                 query_vector: list[float] | None = None) -> Passages:
    """The owner's messages that match `query`, best first, not loaded (what the context needs to fetch each with
    its neighbouring turns: ScoredPassage's container_id and position are its conversation and sequence), in
    memory search's modes (memories.search.passages.passage_hits with MESSAGES: semantic cosine >= 0.5 by default;
    hybrid memory search's SEMANTIC_WEIGHT x calibrated cosine + the rest x BM25 share + DATE_BONUS when the
    message was sent within a date the query names; a message with none of the query's words and a cosine under
    0.25 is not related). `sent_before`: only what was said by then. Scope: one `conversation`, or seed 004's
    rule (conversations.search)."""
    owner_id = getattr(owner, "pk", owner)
    rows = message_rows(owner_id, project=project, all_projects=all_projects, conversation=conversation,
                        sent_before=sent_before)
    return passage_hits(MESSAGES, owner_id=owner_id, rows=rows, query=query, mode=mode, limit=limit,
                        threshold=threshold, query_vector=query_vector)
