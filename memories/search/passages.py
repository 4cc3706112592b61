"""Passage search's candidates (conversation messages, document chunks) read the way memory search reads memories
(memories.search.paths):

- small owners (up to SEARCH_EXACT_MAX_MEMORIES rows, or a small share of the table): the nearest vectors by an
  exact scan of the owner's rows, and full text over every row holding a query word, N counted in the statement:
  no HNSW settings, so no transaction of its own;
- larger owners: the filtered HNSW index (iterative scan), and a bounded keyword side: at most
  SEARCH_PASSAGE_KEYWORD_MAX_ROWS of the rows holding a query word are read and scored, those with every word
  and the rarest words first (sql.bounded_tiers), the words' document frequencies estimated (sql.word_frequencies) and N
  from the owner's cached figures. A common word in 100,000 messages otherwise had its thousands of rows scored
  at every search (bench/context_latency.py).

The vector comparison itself happens in one place, sql.candidates."""

from contextlib import nullcontext

from django.conf import settings
from django.core.cache import cache
from django.db import connection, transaction

from memories.search.paths import OWNER_FIGURES_CACHE_SECONDS, OwnerFigures, vector_path
from memories.search.sql import passage_candidates, search_start, word_frequencies


def passage_figures(cursor, table: str, owner_id: int) -> OwnerFigures:
    """The owner's rows in `table` and the table's (the planner's estimate), reused for
    OWNER_FIGURES_CACHE_SECONDS: a few more or fewer barely move an IDF or the choice of path. Passages have no
    owner index of their own."""
    key = f"{table}:owner-figures:{owner_id}"
    figures = cache.get(key)
    if figures is None:
        cursor.execute(
            f"SELECT (SELECT count(*) FROM {table} WHERE owner_id = %s), "
            f"(SELECT greatest(reltuples, 0)::bigint FROM pg_class WHERE oid = %s::regclass)", [owner_id, table])
        total, rows = cursor.fetchone()
        figures = OwnerFigures(total=total, table=max(rows, total), own_index=False)
        cache.set(key, figures, OWNER_FIGURES_CACHE_SECONDS)
    return figures


def passage_search_candidates(*, table: str, owner_id: int, rows: tuple[str, tuple], keyword_query: str, vector,
                              k: int, k1: float, b: float, ef_search: int,
                              columns: tuple[str, ...] = ()) -> list[tuple]:
    """(id, cosine or None, BM25 share, *columns) of the nearest and best full-text matches among `rows` (the
    owner's rows of `table` in scope, from sql.rows_source with sql.PASSAGE_FIELDS), by the path the owner's size
    calls for (see the module's docstring); `keyword_query` empty: no full text."""
    with connection.cursor() as cursor:
        figures = passage_figures(cursor, table, owner_id)
        large = vector_path(figures) != "exact"
        with transaction.atomic() if large else nullcontext():
            lexemes = search_start(cursor, keyword_query, ef_search=ef_search if large and vector is not None
                                   else None, serial=large)
            bounded = None
            # any number of words: a passage tier reads only ids and vectors (memories' tiers repeat every word's
            # flags, hence their MAX_BOUNDED_LEXEMES)
            most = min(settings.SEARCH_KEYWORD_MAX_ROWS, settings.SEARCH_PASSAGE_KEYWORD_MAX_ROWS)
            if large and most and lexemes:
                frequencies = word_frequencies(cursor, owner_id, lexemes, total=figures.total, table=table,
                                               newest=False)
                if sum(frequencies) > most:
                    bounded = (frequencies, most)
            return passage_candidates(
                cursor, rows=rows, table=table, owner_id=owner_id, vector=vector, lexemes=lexemes, k=k, k1=k1, b=b,
                columns=columns, exact=not large, total=figures.total if large else None, bounded=bounded)
