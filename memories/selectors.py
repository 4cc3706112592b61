"""Reads of memories that take more than one step: filtering by the API's filters, search, chains, history."""

import json
import logging
import re
import uuid
from dataclasses import dataclass, field
from datetime import UTC, date, datetime

from django.core.cache import cache
from django.db import connection, transaction
from django.utils import timezone
from pgvector import HalfVector

from memories.models import EMBEDDING_DIMENSIONS, Memory, MemoryQuerySet, Project

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class MemoryFilters:
    """What list and search may be narrowed by. `project=None` with `all_projects=False` is seed 004's rule:
    user-scoped memories only; a project gives user-scoped memories plus that project's."""

    project: Project | None = None
    all_projects: bool = False
    agent_id: str | None = None
    namespace: list[str] = field(default_factory=list)  # prefix
    tags: list[str] = field(default_factory=list)
    tags_mode: str = "any"  # any | all
    category: str | None = None
    subject: str | None = None
    source: str | None = None
    created_after: datetime | None = None
    created_before: datetime | None = None
    happened_after: datetime | None = None
    happened_before: datetime | None = None
    include_superseded: bool = False
    include_inactive: bool = False
    include_expired: bool = False


def filter_memories(queryset: MemoryQuerySet, filters: MemoryFilters) -> MemoryQuerySet:
    qs = queryset
    if not filters.include_inactive:
        qs = qs.filter(is_active=True)
    if not filters.include_superseded:
        qs = qs.filter(superseded_by__isnull=True)
    if not filters.include_expired:
        qs = qs.unexpired()
    if not filters.all_projects:
        qs = qs.in_scope(filters.project)
    if filters.agent_id is not None:
        qs = qs.filter(agent_id=filters.agent_id)
    if filters.namespace:
        qs = qs.in_namespace(filters.namespace)
    if filters.tags:
        qs = qs.filter(tags__contains=filters.tags) if filters.tags_mode == "all" else qs.filter(
            tags__overlap=filters.tags
        )
    for name in ("category", "subject", "source"):
        value = getattr(filters, name)
        if value is not None:
            qs = qs.filter(**{name: value})
    ranges = {
        "created_at__gte": filters.created_after,
        "created_at__lt": filters.created_before,
        "happened_at__gte": filters.happened_after,
        "happened_at__lt": filters.happened_before,
    }
    qs = qs.filter(**{lookup: value for lookup, value in ranges.items() if value is not None})
    return qs


def memory_list(*, owner, filters: MemoryFilters) -> MemoryQuerySet:
    return filter_memories(Memory.objects.owned_by(owner), filters).select_related("project")


def memory_chain(*, memory: Memory) -> list[Memory]:
    """The supersession chain `memory` belongs to, oldest to newest (same owner only)."""
    owner_qs = Memory.objects.owned_by(memory.owner_id)
    oldest = memory
    seen = {oldest.pk}
    while oldest.supersedes_id and oldest.supersedes_id not in seen:
        previous = owner_qs.filter(pk=oldest.supersedes_id).first()
        if previous is None:
            break
        seen.add(previous.pk)
        oldest = previous
    chain = [oldest]
    seen = {oldest.pk}
    current = oldest
    while current.superseded_by_id and current.superseded_by_id not in seen:
        following = owner_qs.filter(pk=current.superseded_by_id).first()
        if following is None:
            break
        seen.add(following.pk)
        chain.append(following)
        current = following
    return chain


def memory_history(*, memory: Memory):
    """Versions of `memory`, newest first, with the fields each one changed."""
    records = list(memory.history.select_related("history_user").order_by("-history_date", "-history_id"))
    rows = []
    for index, record in enumerate(records):
        previous = records[index + 1] if index + 1 < len(records) else None
        changed = (
            sorted(change.field for change in record.diff_against(previous).changes) if previous else []
        )
        rows.append((record, changed))
    return rows


# --- export ---------------------------------------------------------------------------------------------------

EXPORT_FORMAT = "memento.memory/1"
EXPORT_FIELDS = (
    "id", "agent_id", "namespace", "key", "content", "metadata", "tags", "entities", "category", "subject",
    "importance", "confidence", "source", "source_ref", "links", "version", "supersedes", "superseded_by",
    "is_active", "created_at", "updated_at", "happened_at", "expires_at", "conversation", "message",
    "embedding_model", "value", "ttl_minutes", "indexed",
)
VERSION_FIELDS = (
    "agent_id", "namespace", "key", "content", "metadata", "tags", "entities", "category", "subject", "importance",
    "confidence", "source", "source_ref", "links", "version", "supersedes", "superseded_by", "is_active",
    "created_at", "updated_at", "happened_at", "expires_at", "embedding_model", "value", "ttl_minutes", "indexed",
)


def _plain(value):
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, uuid.UUID):
        return str(value)
    return value


def _value(obj, name: str):
    if name in ("supersedes", "superseded_by", "conversation", "message"):
        return _plain(getattr(obj, f"{name}_id"))
    return _plain(getattr(obj, name))


def memory_export_lines(*, owner, batch_size: int = 500):
    """Every memory of `owner` (inactive and superseded included) as JSON Lines, each with all its versions,
    oldest first. Streams in keyset-paginated batches."""
    last = None
    while True:
        page = Memory.objects.owned_by(owner).select_related("project").order_by("id")
        if last is not None:
            page = page.filter(id__gt=last)
        memories = list(page[:batch_size])
        if not memories:
            return
        versions: dict = {}
        records = (Memory.history.filter(id__in=[m.pk for m in memories]).select_related("history_user")
                   .order_by("history_date", "history_id"))
        for record in records:
            versions.setdefault(record.id, []).append({
                "at": record.history_date.isoformat(),
                "type": record.history_type,
                "action": record.history_action,
                "reason": record.history_change_reason,
                "actor": record.history_user.get_username() if record.history_user else None,
                "project": record.project.name if record.project_id and record.project else None,
                **{name: _value(record, name) for name in VERSION_FIELDS},
            })
        for memory in memories:
            line = {"format": EXPORT_FORMAT, **{name: _value(memory, name) for name in EXPORT_FIELDS},
                    "project": memory.project.name if memory.project else None,
                    "versions": versions.get(memory.pk, [])}
            yield json.dumps(line, ensure_ascii=False, sort_keys=True) + "\n"
        last = memories[-1].pk


# --- search ---------------------------------------------------------------------------------------------------
#
# Every read below is one of the owner's rows: the filtered queryset (owner first) is compiled once and used as
# the row source of each raw statement, which also names `owner_id = %s` itself. Row-level security is the
# second layer. Raw SQL because the shapes the planner needs (a MATERIALIZED nearest-neighbour CTE ordered by the
# indexed expression, BM25 over the stored tsvector, LATERAL neighbour lookups) are not expressible in the ORM.

SEARCH_MODES = ("semantic", "keyword", "hybrid")
DEFAULT_THRESHOLD = 0.7  # semantic mode: minimum cosine similarity (seed 001)
MAX_LIMIT = 200
# per signal: the nearest vectors and the best full-text matches that get re-ranked (LoCoMo R@10 is the same
# with 100 as with 200: 0.745)
CANDIDATES = 100
# with iterative scans, enough for a filtered top-100 of a large owner: recall@10 0.99 against an exact scan at
# 20k memories (bench/search_latency.py); 200 costs ~2 ms more per search for no measurable gain there
HNSW_EF_SEARCH = 100
MAX_QUERY_LEXEMES = 32
OWNER_TOTAL_CACHE_FROM, OWNER_TOTAL_CACHE_SECONDS = 1000, 60

# The default ("fused") ranking. Weights chosen on LoCoMo (bench/locomo_recall.py); see RANKINGS.
SEMANTIC_WEIGHT = 0.3  # share of the calibrated cosine similarity; full text gets the rest
SEMANTIC_FLOOR, SEMANTIC_CEILING = 0.2, 0.7  # all-MiniLM-L6-v2 cosines: ~0.2 unrelated, ~0.7 a paraphrase
BM25_K1, BM25_B = 1.2, 0.4
SUBJECT_TF = 2  # a query word in the subject (weight A) counts like two occurrences
CONTEXT_SHARES = (0.5, 0.45)  # of a hit's relevance, lent to the memories 1 and 2 steps from it
CONTEXT_HITS = 30  # how many of the best hits lend to their neighbours
DATE_BONUS = 0.15  # the memory happened within a date the query names
IMPORTANCE_WEIGHT = 0.1
RECENCY_WEIGHT = 0.05
RECENCY_HALF_LIFE_DAYS = 30.0
RRF_K = 60
# hybrid: a memory with none of the query's words (and no lent context) must be at least this similar to be
# related at all, so that a search with nothing related returns nothing rather than the nearest noise
# (all-MiniLM-L6-v2 between a question and unrelated short texts: ~0.0-0.2; "What is her job?" to "I work as a
# nurse": 0.34)
MIN_SIMILARITY = 0.25

RANKINGS = {
    "fused": (
        "Default for hybrid. Cosine similarity (calibrated: 0.2 -> 0, 0.7 -> 1) x 0.3 plus BM25 full-text "
        "relevance over the stored tsvector (as a share of the query's total IDF) x 0.7; each of the 30 best hits "
        "lends 50% / 45% of that to the memories stored 1 / 2 places before and after it in the same conversation "
        "(context); +0.15 when the memory happened within a date the query names; + importance x 0.1 + recency "
        "x 0.05 (half-life 30 days since the last change)."
    ),
    "blend": "The fused score without context and dates: 0.3 x calibrated cosine + 0.7 x BM25, plus the same "
             "importance and recency tie-breakers.",
    "weighted": "Seed 004: cosine similarity x 0.7 + importance x 0.3 (in keyword mode or when degraded, the "
                "full-text relevance stands in for the similarity).",
    "rrf": f"Reciprocal-rank fusion: 1/({RRF_K} + semantic rank) + 1/({RRF_K} + full-text rank).",
    "similarity": "Cosine similarity alone (default for semantic mode).",
    "keyword": "BM25 full-text relevance alone, as a share of the query's total IDF (default for keyword mode).",
}
DEFAULT_RANKING = "fused"
MODE_RANKINGS = {"semantic": "similarity", "keyword": "keyword", "hybrid": DEFAULT_RANKING}


@dataclass(frozen=True)
class ScoredMemory:
    memory: Memory
    score: float
    parts: dict[str, float]  # what the score is made of; the parts add up to the score


@dataclass(frozen=True)
class SearchResult:
    results: list[ScoredMemory]
    mode: str  # the mode asked for
    ranking: str  # the ranking used
    degraded: bool  # the embedding provider failed: answered from full text alone


@dataclass
class _Candidate:
    id: uuid.UUID
    similarity: float | None = None  # cosine, None without a query vector or a stored embedding
    keyword: float = 0.0  # BM25 / total query IDF
    semantic_rank: int | None = None
    keyword_rank: int | None = None
    importance: float = 0.5
    updated_at: float | None = None  # epoch seconds (a float loads ~10x faster than a timestamp)
    when: float | None = None  # happened_at, else created_at, in epoch seconds
    thread: str | None = None  # conversation (or document) it came from
    relevance: float = 0.0
    context: float = 0.0


def memory_search(*, owner, query: str, mode: str = "hybrid", threshold: float | None = None, limit: int = 20,
                  filters: MemoryFilters = MemoryFilters(), ranking: str | None = None,
                  query_vector: list[float] | None = None) -> SearchResult:
    """Search `owner`'s memories (filtered as `filters` says, seed 004's scope rule by default).

    - semantic: cosine similarity to the query's embedding; only memories at or above `threshold` (default 0.7)
      come back, best first, up to `limit`.
    - keyword: PostgreSQL full text over the stored tsvector (subject weighted above content): any of the
      query's words may match, ranked by BM25.
    - hybrid: the nearest vectors and the best full-text matches, fused by `ranking` (default "fused", see
      RANKINGS). A `threshold` here (and in keyword mode) is a minimum score.

    `query_vector` skips embedding the query. When the embedding provider fails, semantic and hybrid answer
    from full text alone with `degraded=True`. Reads only: the caller records what was returned."""
    from integrations import embeddings

    if mode not in SEARCH_MODES:
        raise ValueError(f"mode must be one of {SEARCH_MODES}, not {mode!r}")
    if ranking is not None and ranking not in RANKINGS:
        raise ValueError(f"ranking must be one of {sorted(RANKINGS)}, not {ranking!r}")
    if not 1 <= limit <= MAX_LIMIT:
        raise ValueError(f"limit must be between 1 and {MAX_LIMIT}")
    ranking = ranking or MODE_RANKINGS[mode]
    degraded = False
    vector = None
    if mode != "keyword":
        if query_vector is not None:
            vector = list(query_vector)
        elif query.strip():
            try:
                vector = embeddings.embed_text(query)
            except embeddings.EmbeddingError:
                logger.warning("embedding provider unavailable; search answered from full text", exc_info=True)
                degraded = True
    if mode == "semantic" and vector is None and not degraded:
        return SearchResult([], mode, ranking, False)
    if degraded and ranking in ("similarity", "rrf"):
        ranking = "keyword" if mode == "semantic" else DEFAULT_RANKING
    use_semantic = vector is not None
    use_keyword = mode != "semantic" or degraded
    owner_id = getattr(owner, "pk", owner)
    base = filter_memories(Memory.objects.owned_by(owner), filters)

    with transaction.atomic(), connection.cursor() as cursor:
        lexemes = search_start(cursor, query if use_keyword else "",
                               ef_search=HNSW_EF_SEARCH if use_semantic else None)
        candidates = _candidates(cursor, base, owner_id, vector if use_semantic else None, lexemes,
                                 max(CANDIDATES, limit))
        if mode == "semantic" and not degraded:
            floor = DEFAULT_THRESHOLD if threshold is None else threshold
            candidates = [c for c in candidates if c.similarity is not None and c.similarity >= floor - 1e-9]
        if ranking == "fused" and candidates:
            _relevance(candidates)
            candidates = _add_context(cursor, base, owner_id, candidates, vector)
    scored = _rank(candidates, ranking, query)
    if threshold is not None and (mode != "semantic" or degraded):
        scored = [s for s in scored if s[1] >= threshold]
    scored = scored[:limit]
    memories = Memory.objects.owned_by(owner).select_related("project").in_bulk([c.id for c, _, _ in scored])
    results = [ScoredMemory(memories[c.id], score, parts) for c, score, parts in scored if c.id in memories]
    return SearchResult(results, mode, ranking, degraded)


# --- search: candidates ---------------------------------------------------------------------------------------

VECTOR = f"halfvec({EMBEDDING_DIMENSIONS})"
EPOCH = "extract(epoch FROM {})::float8"
THREAD = ("COALESCE(m.conversation_id::text, m.source_ref->>'conversation_id', m.source_ref->>'conversation', "
          "m.source_ref->>'document_id')")
ROW_FIELDS = ("id", "owner_id", "embedding", "search_vector", "importance", "created_at", "updated_at",
              "happened_at", "conversation_id", "source_ref")


def _rows(base: MemoryQuerySet) -> tuple[str, tuple]:
    """The filtered rows as SQL to select from (PostgreSQL pulls the subquery up into the outer query, so the
    indexes on the table still serve the outer WHERE and ORDER BY)."""
    sql, params = base.order_by().values(*ROW_FIELDS).query.sql_with_params()
    return f"({sql})", tuple(params)


def search_start(cursor, query: str, *, ef_search: int | None) -> list[str]:
    """One round trip at the start of a search transaction (memories and document chunks): the query's distinct
    stemmed words, stop words left out (same 'english' configuration as the indexes), and with `ef_search` the
    HNSW settings of this transaction (filtered nearest neighbours: iterative index scans return enough rows for
    large owners too)."""
    settings = (", set_config('hnsw.iterative_scan', 'relaxed_order', true), set_config('hnsw.ef_search', %s, true)"
                if ef_search else "")
    cursor.execute(
        f"SELECT ARRAY(SELECT lexeme FROM unnest(to_tsvector('english', %s)) ORDER BY positions[1]){settings}",
        [query, str(ef_search)] if ef_search else [query],
    )
    return cursor.fetchone()[0][:MAX_QUERY_LEXEMES]


def tsquery_term(lexeme: str, weight: str = "") -> str:
    """One lexeme as tsquery text, quoted (no re-parsing or re-stemming), optionally restricted to a weight."""
    quoted = "'" + lexeme.replace("\\", "\\\\").replace("'", "''") + "'"
    return f"{quoted}:{weight}" if weight else quoted


def _owner_total(cursor, owner_id: int) -> int:
    """How many memories the owner has: BM25's N. Counting a large owner's rows costs milliseconds on every
    search while a few more or fewer barely move an IDF, so large owners' counts are reused for a while."""
    key = f"memories:owner-total:{owner_id}"
    total = cache.get(key)
    if total is None:
        cursor.execute("SELECT count(*) FROM memories_memory WHERE owner_id = %s", [owner_id])
        total = cursor.fetchone()[0]
        if total >= OWNER_TOTAL_CACHE_FROM:
            cache.set(key, total, OWNER_TOTAL_CACHE_SECONDS)
    return total


def _candidates(cursor, base, owner_id, vector, lexemes, k) -> list[_Candidate]:
    rows_sql, rows_params = _rows(base)
    ctes, params, sources = [], [], []
    if vector is not None:
        vector_text = HalfVector(vector).to_text()
        ctes.append(
            f"sem AS MATERIALIZED (SELECT m.id FROM {rows_sql} AS m WHERE m.owner_id = %s AND m.embedding IS NOT NULL "
            f"ORDER BY m.embedding::{VECTOR} <=> %s::{VECTOR} LIMIT %s)"
        )
        params += [*rows_params, owner_id, vector_text, k]
        sources.append("SELECT id FROM sem")
    if lexemes:
        any_word = " | ".join(tsquery_term(lexeme) for lexeme in lexemes)
        # each row's matches are worked out once: per query word, in the memory at all (h) and in its subject (a)
        flags = ", ".join(f"m.search_vector @@ %s::tsquery AS h{i}, m.search_vector @@ %s::tsquery AS a{i}"
                          for i in range(len(lexemes)))
        ctes.append(
            f"kwm AS MATERIALIZED (SELECT m.id, length(m.search_vector)::float8 AS dl, {flags} "
            f"FROM {rows_sql} AS m WHERE m.owner_id = %s AND m.search_vector @@ %s::tsquery)"
        )
        for lexeme in lexemes:
            params += [tsquery_term(lexeme), tsquery_term(lexeme, "A")]
        params += [*rows_params, owner_id, any_word]
        # document frequencies among the owner's memories (every memory with any query word is in kwm), turned
        # into IDFs once per query; float8 throughout (numeric arithmetic per row cost more than the matching)
        counts = ", ".join(f"count(*) FILTER (WHERE h{i})::float8 AS n{i}" for i in range(len(lexemes)))
        ctes.append(
            f"stats AS (SELECT {counts}, greatest(avg(dl), 1)::float8 AS avgdl, "
            f"%s::float8 AS total FROM kwm)"
        )
        params.append(_owner_total(cursor, owner_id))
        idfs = ", ".join(f"ln(1 + (total - n{i} + 0.5) / (n{i} + 0.5)) AS i{i}" for i in range(len(lexemes)))
        total_idf = " + ".join(f"i{i}" for i in range(len(lexemes)))
        ctes.append(f"idf AS (SELECT *, greatest({total_idf}, 1e-9) AS total_idf "
                    f"FROM (SELECT {idfs}, avgdl FROM stats) AS t)")
        terms = []
        for i in range(len(lexemes)):
            tf = f"(CASE WHEN x.a{i} THEN {SUBJECT_TF}::float8 ELSE 1::float8 END)"
            terms.append(f"CASE WHEN x.h{i} THEN s.i{i} * {tf} * {BM25_K1 + 1} / ({tf} + x.norm) ELSE 0 END")
        # relevance as a share of the query's total IDF: 1 ~ every query word matched in an average memory
        ctes.append(
            f"kw AS MATERIALIZED (SELECT x.id, ({' + '.join(terms)}) / s.total_idf AS score "
            f"FROM (SELECT kwm.*, {BM25_K1} * (1 - {BM25_B} + {BM25_B} * kwm.dl / idf.avgdl) AS norm "
            f"FROM kwm, idf) AS x, idf AS s ORDER BY score DESC LIMIT %s)"
        )
        params.append(k)
        sources.append("SELECT id FROM kw")
    if not sources:
        return []
    similarity = f"1 - (m.embedding::{VECTOR} <=> %s::{VECTOR})" if vector is not None else "NULL::float"
    keyword = "kw.score" if lexemes else "0::float"
    join_kw = "LEFT JOIN kw ON kw.id = c.id" if lexemes else ""
    sql = (
        f"WITH {', '.join(ctes)}, cand AS ({' UNION '.join(sources)}) "
        f"SELECT m.id, {similarity}, {keyword}, m.importance, {EPOCH.format('m.updated_at')}, "
        f"{EPOCH.format('COALESCE(m.happened_at, m.created_at)')}, {THREAD} "
        f"FROM cand AS c JOIN memories_memory AS m ON m.id = c.id {join_kw} WHERE m.owner_id = %s"
    )
    if vector is not None:
        params.append(vector_text)
    params.append(owner_id)
    cursor.execute(sql, params)
    found = [
        _Candidate(id=row[0], similarity=row[1], keyword=float(row[2] or 0.0), importance=row[3],
                   updated_at=row[4], when=row[5], thread=row[6])
        for row in cursor.fetchall()
    ]
    by_similarity = sorted((c for c in found if c.similarity is not None), key=lambda c: -c.similarity)
    for rank, c in enumerate(by_similarity, start=1):
        c.semantic_rank = rank
    for rank, c in enumerate(sorted((c for c in found if c.keyword > 0), key=lambda c: -c.keyword), start=1):
        c.keyword_rank = rank
    return found


def passage_candidates(cursor, *, base, table: str, owner_id: int, vector, lexemes: list[str], k: int, k1: float,
                       b: float) -> list[tuple[uuid.UUID, float | None, float]]:
    """(id, cosine or None, BM25 share) for the k nearest and the k best full-text matches among `base`'s rows
    of `table` (document chunks, conversation messages: passages with `embedding` and `search_vector` columns).
    BM25 counts each word's occurrences from the tsvector's positions; the result is a share of the query's
    total IDF (1 ~ every query word matched in an average passage)."""
    rows_sql, rows_params = base.order_by().values("id", "owner_id", "embedding", "search_vector").query \
        .sql_with_params()
    rows_sql = f"({rows_sql})"
    ctes, params, sources = [], [], []
    if vector is not None:
        vector_text = HalfVector(vector).to_text()
        ctes.append(
            f"sem AS MATERIALIZED (SELECT c.id FROM {rows_sql} AS c WHERE c.owner_id = %s AND c.embedding IS NOT "
            f"NULL ORDER BY c.embedding::{VECTOR} <=> %s::{VECTOR} LIMIT %s)"
        )
        params += [*rows_params, owner_id, vector_text, k]
        sources.append("SELECT id FROM sem")
    if lexemes:
        any_word = " | ".join(tsquery_term(lexeme) for lexeme in lexemes)
        ctes.append(
            f"kwm AS MATERIALIZED (SELECT c.id, c.search_vector AS v, length(c.search_vector) AS dl "
            f"FROM {rows_sql} AS c WHERE c.owner_id = %s AND c.search_vector @@ %s::tsquery)"
        )
        params += [*rows_params, owner_id, any_word]
        # float8, not numeric: the per-row arithmetic below is the bulk of a keyword search's time
        counts = ", ".join(f"count(*) FILTER (WHERE v @@ %s::tsquery)::float8 AS n{i}" for i in range(len(lexemes)))
        ctes.append(
            f"stats AS (SELECT {counts}, greatest(avg(dl), 1)::float8 AS avgdl, "
            f"(SELECT count(*) FROM {table} WHERE owner_id = %s)::float8 AS total FROM kwm)"
        )
        params += [tsquery_term(lexeme) for lexeme in lexemes] + [owner_id]
        idf = [f"ln(1 + (s.total - s.n{i} + 0.5) / (s.n{i} + 0.5))" for i in range(len(lexemes))]
        norm = f"{k1} * (1 - {b} + {b} * x.dl / s.avgdl)"
        terms = []
        for i in range(len(lexemes)):
            tf = ("(SELECT coalesce(sum(cardinality(u.positions)), 0)::float8 FROM unnest(x.v) AS u "
                  "WHERE u.lexeme = %s)")
            terms.append(f"(SELECT {idf[i]} * t.tf * {k1 + 1} / (t.tf + {norm}) FROM (SELECT {tf} AS tf) AS t)")
            params.append(lexemes[i])
        ctes.append(
            f"kw AS MATERIALIZED (SELECT x.id, ({' + '.join(terms)}) / greatest({' + '.join(idf)}, 1e-9) AS score "
            f"FROM kwm AS x, stats AS s ORDER BY score DESC LIMIT %s)"
        )
        params.append(k)
        sources.append("SELECT id FROM kw")
    if not sources:
        return []
    similarity = f"1 - (c.embedding::{VECTOR} <=> %s::{VECTOR})" if vector is not None else "NULL::float"
    keyword = "coalesce(kw.score, 0)" if lexemes else "0::float"
    join_kw = "LEFT JOIN kw ON kw.id = c.id" if lexemes else ""
    sql = (
        f"WITH {', '.join(ctes)}, cand AS ({' UNION '.join(sources)}) "
        f"SELECT c.id, {similarity}, {keyword} FROM cand JOIN {table} AS c ON c.id = cand.id {join_kw} "
        f"WHERE c.owner_id = %s"
    )
    if vector is not None:
        params.append(vector_text)
    params.append(owner_id)
    cursor.execute(sql, params)
    return [(row[0], row[1], float(row[2] or 0.0)) for row in cursor.fetchall()]


# --- search: ranking ------------------------------------------------------------------------------------------


def calibrated_similarity(similarity: float | None) -> float:
    """all-MiniLM-L6-v2's cosine between short texts on 0..1: SEMANTIC_FLOOR (unrelated) -> 0, SEMANTIC_CEILING
    (a paraphrase) -> 1, more is more."""
    if similarity is None:
        return 0.0
    return max(0.0, (similarity - SEMANTIC_FLOOR) / (SEMANTIC_CEILING - SEMANTIC_FLOOR))


def _relevance(candidates: list[_Candidate]) -> None:
    for c in candidates:
        c.relevance = SEMANTIC_WEIGHT * calibrated_similarity(c.similarity) + (1 - SEMANTIC_WEIGHT) * c.keyword


def _add_context(cursor, base, owner_id, candidates: list[_Candidate], vector) -> list[_Candidate]:
    """Let the best hits lend part of their relevance to the memories stored right before and after them in
    the same conversation: the question is often in one turn and the answer in the next. Neighbours that were
    not candidates join with their own similarity (their full-text score is below the candidates')."""
    hits = sorted((c for c in candidates if c.relevance > 0), key=lambda c: -c.relevance)[:CONTEXT_HITS]
    hits = [c for c in hits if c.thread is not None]
    if not hits:
        return candidates
    rows_sql, rows_params = _rows(base)
    depth = len(CONTEXT_SHARES)
    similarity = f"1 - (m.embedding::{VECTOR} <=> %s::{VECTOR})" if vector is not None else "NULL::float"
    side = (
        f"(SELECT m.id, %s AS direction, m.created_at, {similarity} AS similarity, m.importance, "
        f"{EPOCH.format('m.updated_at')} AS updated, {EPOCH.format('COALESCE(m.happened_at, m.created_at)')} "
        f"AS happened, {THREAD} AS thread "
        f"FROM {rows_sql} AS m WHERE m.owner_id = %s AND m.created_at {{cmp}}= h.created_at "
        f"AND (m.created_at, m.id) {{cmp}} (h.created_at, h.id) "
        f"ORDER BY m.created_at {{order}}, m.id {{order}} LIMIT %s)"
    )
    vector_params = [HalfVector(vector).to_text()] if vector is not None else []
    side_params = [*vector_params, *rows_params, owner_id, depth]
    sql = (
        f"SELECT h.id, n.id, n.direction, n.created_at, n.similarity, n.importance, n.updated, n.happened, "
        f"n.thread FROM memories_memory AS h CROSS JOIN LATERAL ("
        f"{side.format(cmp='<', order='DESC')} UNION ALL {side.format(cmp='>', order='ASC')}) AS n "
        f"WHERE h.owner_id = %s AND h.id = ANY(%s::uuid[])"
    )
    cursor.execute(sql, [-1, *side_params, 1, *side_params, owner_id, [c.id for c in hits]])
    sides: dict[tuple, list] = {}
    for row in cursor.fetchall():
        sides.setdefault((row[0], row[2]), []).append(row)
    by_id = {c.id: c for c in candidates}
    for hit in hits:
        for direction in (-1, 1):
            rows = sorted(sides.get((hit.id, direction), []), key=lambda r: r[3], reverse=direction < 0)
            for share, row in zip(CONTEXT_SHARES, rows, strict=False):
                if row[8] != hit.thread:
                    break  # a memory from elsewhere ends the run
                neighbour = by_id.get(row[1])
                if neighbour is None:
                    neighbour = _Candidate(id=row[1], similarity=row[4], importance=row[5], updated_at=row[6],
                                           when=row[7], thread=row[8])
                    neighbour.relevance = SEMANTIC_WEIGHT * calibrated_similarity(neighbour.similarity)
                    by_id[neighbour.id] = neighbour
                neighbour.context = max(neighbour.context, share * hit.relevance)
    return list(by_id.values())


def _recency(c: _Candidate, now: float) -> float:
    if c.updated_at is None:
        return 0.0
    age_days = max(0.0, (now - c.updated_at) / 86400)
    return 0.5 ** (age_days / RECENCY_HALF_LIFE_DAYS)


def _rank(candidates: list[_Candidate], ranking: str, query: str) -> list[tuple[_Candidate, float, dict]]:
    """(candidate, score, parts) best first; ties go to the more important, then the more recent memory."""
    now = timezone.now().timestamp()
    periods = query_periods(query) if ranking == "fused" else []
    scored = []
    rrf_semantic = {c.id: c.semantic_rank for c in candidates}
    for c in candidates:
        recency = _recency(c, now)
        if (ranking not in ("similarity", "keyword") and c.keyword <= 0 and c.context <= 0
                and (c.similarity is None or c.similarity < MIN_SIMILARITY)):
            continue  # unrelated: no floor-less padding in hybrid search
        if ranking == "similarity":
            if c.similarity is None:
                continue
            parts = {"semantic": c.similarity}
        elif ranking == "keyword":
            if c.keyword <= 0:
                continue
            parts = {"keyword": c.keyword}
        elif ranking == "weighted":
            similarity = c.similarity if c.similarity is not None else min(c.keyword, 1.0)
            parts = {"similarity": 0.7 * similarity, "importance": 0.3 * c.importance}
        elif ranking == "rrf":
            parts = {
                "semantic": 1 / (RRF_K + rrf_semantic[c.id]) if rrf_semantic[c.id] else 0.0,
                "keyword": 1 / (RRF_K + c.keyword_rank) if c.keyword_rank else 0.0,
            }
        else:  # fused, blend
            parts = {
                "semantic": SEMANTIC_WEIGHT * calibrated_similarity(c.similarity),
                "keyword": (1 - SEMANTIC_WEIGHT) * c.keyword,
            }
            if ranking == "fused":
                parts["context"] = c.context
                relevant = c.relevance > 0 or c.context > 0
                parts["date"] = DATE_BONUS if relevant and periods and within_periods(c.when, periods) else 0.0
            parts["importance"] = IMPORTANCE_WEIGHT * c.importance
            parts["recency"] = RECENCY_WEIGHT * recency
        score = sum(parts.values())
        scored.append((c, score, parts, (-score, -c.importance, -recency, str(c.id))))
    scored.sort(key=lambda item: item[3])
    return [(c, score, parts) for c, score, parts, _ in scored]


# --- search: dates named in the query -------------------------------------------------------------------------

MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
          "november", "december")
_MONTH = "(" + "|".join(MONTHS) + r"|jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec)\.?"
_DAY = r"(\d{1,2})(?:st|nd|rd|th)?"
_YEAR = r"((?:19|20)\d\d)"
_DATE_PATTERNS = (
    ("day", re.compile(rf"\b{_DAY}\s+(?:of\s+)?{_MONTH},?\s+{_YEAR}\b")),  # 7 July, 2023
    ("day_us", re.compile(rf"\b{_MONTH}\s+{_DAY},?\s+{_YEAR}\b")),  # July 7, 2023
    ("iso", re.compile(r"\b((?:19|20)\d\d)-(\d{2})-(\d{2})\b")),  # 2023-07-07
    ("month_year", re.compile(rf"\b{_MONTH},?\s+{_YEAR}\b")),  # July 2023
    ("month", re.compile(rf"\b{_MONTH}(?=\W|$)")),  # July (any year)
    ("year", re.compile(rf"\b{_YEAR}\b")),  # 2023
)
# "may" is mostly a verb: a month only after a word that introduces a time
_MAY_AS_MONTH = re.compile(r"\b(?:in|of|during|since|until|till|before|after|by|early|late|mid|last|next|this)\s+may\b")


def _month(name: str) -> int:
    name = name.rstrip(".")
    return next(i for i, month in enumerate(MONTHS, start=1) if month.startswith(name[:3]))


def query_periods(query: str) -> list[tuple]:
    """Dates the query names, as ("range", first day, day after) in proleptic ordinals, or ("month", m) for a
    month of any year: '7 July, 2023' and 'July 7, 2023' name a day, 'July 2023' a month, '2023' a year, 'in
    July' July of any year."""
    text = query.lower()
    taken: list[tuple[int, int]] = []
    periods: list[tuple] = []

    def free(span):
        return all(span[1] <= a or span[0] >= b for a, b in taken)

    for kind, pattern in _DATE_PATTERNS:
        for match in pattern.finditer(text):
            if not free(match.span()):
                continue
            try:
                if kind in ("day", "day_us", "iso"):
                    if kind == "day":
                        day, month, year = int(match[1]), _month(match[2]), int(match[3])
                    elif kind == "day_us":
                        month, day, year = _month(match[1]), int(match[2]), int(match[3])
                    else:
                        year, month, day = int(match[1]), int(match[2]), int(match[3])
                    start = date(year, month, day).toordinal()
                    periods.append(("range", start, start + 1))
                elif kind == "month_year":
                    month, year = _month(match[1]), int(match[2])
                    start = date(year, month, 1).toordinal()
                    periods.append(("range", start, date(year + month // 12, month % 12 + 1, 1).toordinal()))
                elif kind == "month":
                    if match[1].startswith("may") and not _MAY_AS_MONTH.search(text):
                        continue
                    if len(match[1].rstrip(".")) == 3 and match[1] not in MONTHS and not match[0].endswith("."):
                        # "mar", "jan"... only as full words; short forms are ambiguous ("mar", "sep")
                        continue
                    periods.append(("month", _month(match[1])))
                else:
                    year = int(match[1])
                    periods.append(("range", date(year, 1, 1).toordinal(), date(year + 1, 1, 1).toordinal()))
            except ValueError:  # 31 February and the like
                continue
            taken.append(match.span())
    return periods


def within_periods(when: float | None, periods: list[tuple]) -> bool:
    if when is None:
        return False
    day = datetime.fromtimestamp(when, tz=UTC).date()
    for period in periods:
        if period[0] == "month":
            if day.month == period[1]:
                return True
        elif period[1] <= day.toordinal() < period[2]:
            return True
    return False
