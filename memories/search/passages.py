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

The vector comparison itself happens in one place, sql.candidates. On top of the candidates, `passage_hits` is
the one passage search both kinds share: its modes, scores and result type (ScoredPassage in Passages); a
PassageKind says what differs between chunks and messages."""

import uuid
from contextlib import nullcontext
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from django.conf import settings
from django.core.cache import cache
from django.db import connection, transaction

from memories.search.dates import query_periods, within_periods
from memories.search.formula import DATE_BONUS, SEMANTIC_CEILING, SEMANTIC_FLOOR
from memories.search.paths import OWNER_FIGURES_CACHE_SECONDS, OwnerFigures, vector_path
from memories.search.query import MAX_LIMIT, SEARCH_MODES, embed_query
from memories.search.ranking import calibrated_similarity, score_passages
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


@dataclass(frozen=True)
class PassageKind:
    """What differs between the passages searched (document chunks, conversation messages): their table and
    embedding space, the candidates' knobs, semantic mode's default floor and how hybrid mode weighs its two
    signals. `at`, `position` and `container` are the table's columns (alias `m`) saying when a passage was
    written, where it sits and in what (a message: sent_at, sequence, conversation): ties rank the earlier first,
    and the context fetches a message's neighbours by them."""

    table: str
    space: str  # memories.spaces' name of the table's vectors
    what: str  # the search, as a degraded answer's log line names it
    candidates: int  # per signal
    ef_search: int
    k1: float
    b: float
    semantic_threshold: float  # semantic mode: the default minimum cosine
    semantic_weight: float  # hybrid: the calibrated cosine's share; the BM25 share gets the rest
    at: str
    position: str
    container: str
    floor: float = SEMANTIC_FLOOR  # the cosine calibration (ranking.calibrated_similarity)
    ceiling: float = SEMANTIC_CEILING
    capped: bool = False  # a cosine over `ceiling` counts as `ceiling`
    min_similarity: float = 0.0  # hybrid: a passage with none of the query's words needs at least this cosine
    dates: bool = False  # hybrid: DATE_BONUS to a passage written within a date the query names

    @property
    def columns(self) -> tuple[str, ...]:
        return self.at, self.position, self.container


@dataclass(frozen=True)
class ScoredPassage:
    """A passage as passage search ranks it: its id, score (the sum of its `parts`), when it was written, where it
    sits and in what (see PassageKind), and the row itself (`passage`, a Chunk or a Message) once loaded."""

    id: uuid.UUID
    score: float
    parts: dict[str, float]
    at: datetime
    position: int
    container_id: uuid.UUID
    passage: Any = None


class Passages(list):
    """The scored passages, best first (a list of ScoredPassage), with the mode asked for and whether the answer
    was degraded to full text (the embedding provider failed)."""

    def __init__(self, items=(), *, mode: str = "hybrid", degraded: bool = False):
        super().__init__(items)
        self.mode = mode
        self.degraded = degraded

    @property
    def results(self) -> "Passages":
        return self


def passage_hits(kind: PassageKind, *, owner_id: int, rows: tuple[str, tuple], query: str, mode: str = "hybrid",
                 limit: int = 20, threshold: float | None = None,
                 query_vector: list[float] | None = None) -> Passages:
    """The passages among `rows` (the owner's rows of `kind.table` in scope, from sql.rows_source with
    sql.PASSAGE_FIELDS) that match `query`, best first, not loaded, in memory search's modes: semantic (cosine >=
    `threshold`, default `kind.semantic_threshold`), keyword (BM25 share over the stored tsvector) or hybrid
    (`kind.semantic_weight` x calibrated cosine + the rest x BM25 share, + DATE_BONUS with `kind.dates`; a passage
    with none of the query's words needs `kind.min_similarity`). A `threshold` outside semantic mode is a minimum
    score. Passages not embedded yet are found by words. `query_vector` skips embedding the query; when the
    provider fails, semantic and hybrid answer from full text (`degraded`)."""
    if mode not in SEARCH_MODES:
        raise ValueError(f"mode must be one of {SEARCH_MODES}, not {mode!r}")
    if not 1 <= limit <= MAX_LIMIT:
        raise ValueError(f"limit must be between 1 and {MAX_LIMIT}")
    degraded, vector = False, None
    if mode != "keyword" and query.strip():
        vector, degraded = embed_query(query, query_vector, what=kind.what, space=kind.space, owner_id=owner_id)
    if mode == "semantic" and vector is None and not degraded:
        return Passages(mode=mode)
    found = passage_search_candidates(
        table=kind.table, owner_id=owner_id, rows=rows, keyword_query=query if mode != "semantic" or degraded else "",
        vector=vector, k=max(kind.candidates, limit), k1=kind.k1, b=kind.b, ef_search=kind.ef_search,
        columns=kind.columns)
    where = {row[0]: row[3:] for row in found}  # id -> (at, position, container)
    periods = query_periods(query) if kind.dates and mode == "hybrid" else []

    def hybrid(passage_id, similarity, keyword):
        if keyword <= 0 and (similarity is None or similarity < kind.min_similarity):
            return None
        semantic = calibrated_similarity(similarity, kind.floor, kind.ceiling)
        parts = {"semantic": kind.semantic_weight * (min(1.0, semantic) if kind.capped else semantic),
                 "keyword": (1 - kind.semantic_weight) * keyword}
        if parts["semantic"] <= 0 and parts["keyword"] <= 0:
            return None
        if kind.dates:
            at = where[passage_id][0].timestamp()
            parts["date"] = DATE_BONUS if periods and within_periods(at, periods) else 0.0
        return parts

    ranked = score_passages([row[:3] for row in found], mode=mode, degraded=degraded, has_vector=vector is not None,
                            threshold=threshold, semantic_threshold=kind.semantic_threshold, hybrid=hybrid)
    ranked.sort(key=lambda r: (-r[1], *where[r[0]][:2]))
    return Passages([ScoredPassage(passage_id, score, parts, *where[passage_id])
                     for passage_id, score, parts in ranked[:limit]], mode=mode, degraded=degraded)


def passages_loaded(hits: Passages, queryset) -> Passages:
    """`hits` with their rows from `queryset` (the owner's, with what the answer shows); a hit deleted since its
    candidates were read is left out."""
    rows = queryset.in_bulk([hit.id for hit in hits])
    return Passages([replace(hit, passage=rows[hit.id]) for hit in hits if hit.id in rows],
                    mode=hits.mode, degraded=hits.degraded)
