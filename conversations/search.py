"""The statement of message search: what sets messages apart as passages (MESSAGES), an owner's messages in scope
as a compiled row source, and the candidates read from them the way memory search reads memories
(memories.search.passages: small owners by an exact scan, larger ones through the HNSW index with a bounded keyword
side)."""

from django.db.models import Exists, Q

from conversations.models import Conversation, Message
from memories.search import formula
from memories.search.passages import PassageKind, passage_search_candidates
from memories.search.sql import PASSAGE_FIELDS, rows_source
from memories.spaces import Name

TABLE = Message._meta.db_table
ROWS_CACHE_SIZE = 4096  # compiled row sources: a few hundred bytes of SQL each
MESSAGES = PassageKind(
    # turns are as short as memories: memory search's BM25 and fused weights
    table=TABLE, space=Name.MESSAGES, what="message search", candidates=100, ef_search=100, k1=formula.BM25_K1,
    b=formula.BM25_B, semantic_weight=formula.SEMANTIC_WEIGHT,
    semantic_threshold=0.5,  # turns are short, like memories
    min_similarity=0.25,  # hybrid: a message with none of the query's words must be this similar to be related
    dates=True,
    # when it was said ranks ties, where it is finds its neighbouring turns (the context)
    at="m.sent_at", position="m.sequence", container="m.conversation_id",
)


def message_queryset(*, owner, project=None, all_projects: bool = False, conversation=None, sent_before=None):
    """The owner's messages in scope (seed 004's rule, as for memories: no project -> conversations without
    one; a project -> those plus the project's; `all_projects` -> every conversation), or one conversation's;
    with `sent_before`, only those said by then."""
    qs = Message.objects.filter(owner=owner)
    if sent_before is not None:
        qs = qs.filter(sent_at__lte=sent_before)
    if conversation is not None:
        return qs.filter(conversation=conversation)
    if not all_projects:
        inside = Q(project__isnull=True)
        if project is not None:
            inside |= Q(project=project)
        conversations = Conversation.objects.filter(owner=owner)
        # Not a join to conversations: under a large owner's bounded keyword side the planner (estimating one
        # matching row) joined every matching message to a scan of all the owner's conversations. Under an OR the
        # membership test stays a hashed subplan (built once, one probe a row), and the NOT EXISTS, evaluated
        # once, spares even that when no conversation of the owner is out of scope (an owner without projects).
        qs = qs.filter(~Exists(conversations.exclude(inside))
                       | Q(conversation__in=conversations.filter(inside).values("pk")))
    return qs


_rows_cache: dict[tuple, tuple[str, tuple]] = {}


def message_rows(owner_id: int, *, project=None, all_projects: bool = False, conversation=None,
                 sent_before=None) -> tuple[str, tuple]:
    """`message_queryset` as SQL and parameters to select from, compiled once per process for each scope
    (building and compiling the queryset is Python work every search would otherwise repeat)."""
    key = (owner_id, getattr(project, "pk", project), all_projects, getattr(conversation, "pk", conversation),
           sent_before)
    compiled = _rows_cache.get(key)
    if compiled is None:
        if len(_rows_cache) >= ROWS_CACHE_SIZE:
            _rows_cache.clear()
        compiled = rows_source(message_queryset(owner=owner_id, project=project, all_projects=all_projects,
                                                conversation=conversation, sent_before=sent_before), PASSAGE_FIELDS)
        _rows_cache[key] = compiled
    return compiled


def message_candidates(owner_id: int, rows: tuple[str, tuple], keyword_query: str, vector, *, k: int) -> list:
    """(id, cosine or None, BM25 share, sent_at, sequence, conversation_id) of the nearest and best full-text
    matches among `rows` (`message_rows`), as message search reads them (memories.search.passages); `keyword_query`
    empty: no full text."""
    return passage_search_candidates(table=TABLE, owner_id=owner_id, rows=rows, keyword_query=keyword_query,
                                     vector=vector, k=k, k1=MESSAGES.k1, b=MESSAGES.b, ef_search=MESSAGES.ef_search,
                                     columns=MESSAGES.columns)
