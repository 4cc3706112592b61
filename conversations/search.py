"""The statement of message search: an owner's messages in scope as a compiled row source, and the candidates
read from them the way memory search reads memories (memories.search.paths):

- small owners (up to SEARCH_EXACT_MAX_MEMORIES messages, or a small share of the table): the nearest vectors by
  an exact scan of the owner's rows, and full text over every row holding a query word, N counted in the
  statement: no HNSW settings, so no transaction of its own;
- larger owners: the filtered HNSW index (iterative scan), and a bounded keyword side: at most
  SEARCH_KEYWORD_MAX_ROWS of the rows holding a query word are read and scored, those with every word and the
  rarest words first (memories.search.sql.bounded_tiers), with the words' document frequencies estimated and
  N from the owner's cached figures. A common word in 100,000 messages otherwise had its thousands of rows
  scored at every search.

The single place a message's vector meets the query's is `memories.search.sql.candidates`, called from
`message_candidates`."""

from contextlib import nullcontext

from django.conf import settings
from django.core.cache import cache
from django.db import connection, transaction
from django.db.models import Q

from conversations.models import Message
from memories.search.paths import OWNER_FIGURES_CACHE_SECONDS, OwnerFigures, vector_path
from memories.search.sql import (
    MAX_BOUNDED_LEXEMES,
    PASSAGE_FIELDS,
    passage_candidates,
    rows_source,
    search_start,
    word_frequencies,
)

CANDIDATES = 100  # per signal
HNSW_EF_SEARCH = 100
BM25_K1, BM25_B = 1.2, 0.4
TABLE = Message._meta.db_table
ROWS_CACHE_SIZE = 4096  # compiled row sources: a few hundred bytes of SQL each
# what each candidate brings besides its scores: ranking needs when it was said, the context where it is
CANDIDATE_COLUMNS = ("m.sent_at", "m.sequence", "m.conversation_id")


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
        scope = Q(conversation__project__isnull=True)
        if project is not None:
            scope |= Q(conversation__project=project)
        qs = qs.filter(scope)
    return qs


_rows_cache: dict[tuple, tuple[str, tuple]] = {}


def message_rows(owner_id: int, *, project=None, all_projects: bool = False, conversation=None,
                 sent_before=None) -> tuple[str, tuple]:
    """`message_queryset` as SQL and parameters to select from, compiled once per process for each scope
    (building and compiling the queryset was ~1 ms of every search)."""
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


def message_figures(cursor, owner_id: int) -> OwnerFigures:
    """The owner's messages and the table's (the planner's estimate), reused for OWNER_FIGURES_CACHE_SECONDS: a
    few more or fewer barely move an IDF or the choice of path. Messages have no owner index of their own."""
    key = f"conversations:owner-figures:{owner_id}"
    figures = cache.get(key)
    if figures is None:
        cursor.execute(
            f"SELECT (SELECT count(*) FROM {TABLE} WHERE owner_id = %s), "
            f"(SELECT greatest(reltuples, 0)::bigint FROM pg_class WHERE oid = %s::regclass)", [owner_id, TABLE])
        total, table = cursor.fetchone()
        figures = OwnerFigures(total=total, table=max(table, total), own_index=False)
        cache.set(key, figures, OWNER_FIGURES_CACHE_SECONDS)
    return figures


def message_candidates(owner_id: int, rows: tuple[str, tuple], keyword_query: str, vector, *, k: int) -> list:
    """(id, cosine or None, BM25 share, sent_at, sequence, conversation_id) of the nearest and best full-text
    matches among `rows` (see the module's docstring); `keyword_query` empty: no full text."""
    with connection.cursor() as cursor:
        figures = message_figures(cursor, owner_id)
        large = vector_path(figures) != "exact"
        with transaction.atomic() if large else nullcontext():
            lexemes = search_start(cursor, keyword_query, ef_search=HNSW_EF_SEARCH if large and vector is not None
                                   else None, serial=large)
            bounded = None
            if large and settings.SEARCH_KEYWORD_MAX_ROWS and 0 < len(lexemes) <= MAX_BOUNDED_LEXEMES:
                frequencies = word_frequencies(cursor, owner_id, lexemes, total=figures.total, table=TABLE,
                                               newest=False)
                if sum(frequencies) > settings.SEARCH_KEYWORD_MAX_ROWS:
                    bounded = (frequencies, settings.SEARCH_KEYWORD_MAX_ROWS)
            return passage_candidates(
                cursor, rows=rows, table=TABLE, owner_id=owner_id, vector=vector, lexemes=lexemes, k=k, k1=BM25_K1,
                b=BM25_B, columns=CANDIDATE_COLUMNS, exact=not large, total=figures.total if large else None,
                bounded=bounded)
