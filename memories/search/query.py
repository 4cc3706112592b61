"""Memory search: the query embedded (or not), candidates gathered in one transaction, ranked."""

import functools
import logging
from contextlib import nullcontext
from dataclasses import dataclass, fields

from django.conf import settings
from django.db import connection, transaction
from django.db.models import F

from integrations import embeddings
from memories import spaces
from memories.models import Memory
from memories.search import snapshot
from memories.search.formula import (
    BM25_B,
    BM25_K1,
    DEFAULT_RANKING,
    MODE_RANKINGS,
    RANKINGS,
    SEMANTIC_FLOOR,
    SUBJECT_TF,
)
from memories.search.intent import boost, kin, query_intent
from memories.search.paths import owner_figures, vector_path
from memories.search.ranking import (
    CANDIDATE_COLUMNS,
    ROW_FIELDS,
    add_context,
    calibrated_similarity,
    candidates_from_rows,
    context_hits,
    lend_context,
    rank,
    relevance,
    split_context_rows,
    with_context,
)
from memories.search.selfwords import embedded_text, idiom_words, owner_words, speaker_name
from memories.search.sql import (
    MAX_BOUNDED_LEXEMES,
    candidates,
    kind_similarities,
    rows_source,
    search_start,
    word_frequencies,
)
from memories.selectors import MemoryFilters, filter_memories, memories_by_id
from observability import hooks

logger = logging.getLogger(__name__)

SEARCH_MODES = ("semantic", "keyword", "hybrid")
# semantic mode's minimum cosine similarity: the local model's "unrelated" level. Seed 001's 0.7 returned nothing for
# needs phrased as questions, whose cosines with the fact they need are ~0.1-0.6 (median 0.42); at 0.2, 56 of
# bench/paraphrase_needs.py's 60 questions find it in the top 5, at 0.25 51, at 0.3 45
DEFAULT_THRESHOLD = SEMANTIC_FLOOR
MAX_LIMIT = 200
# per signal: the nearest vectors and the best full-text matches that get re-ranked (LoCoMo R@10 is the same
# with 100 as with 200: 0.745)
CANDIDATES = 100
# with iterative scans, enough for a filtered top-100 of a large owner: recall@10 0.99 against an exact scan at
# 20k memories (bench/search_latency.py); 200 costs ~2 ms more per search for no measurable gain there
HNSW_EF_SEARCH = 100
# an owner's own index (memories.search.paths): 100 left recall@10 at 0.953 against an exact scan for the 1M bench's
# heavy user (50k near-copies in clusters of ~17), 200 gives 0.997 for ~0.5 ms (BENCHMARKS.md, 1M)
OWN_INDEX_EF_SEARCH = 200
# recent query vectors per process: agents repeat their questions, and a cached vector saves the ~12 ms of CPU the
# model takes per query (1024 vectors of 384 floats are ~12 MB)
QUERY_CACHE_SIZE = 1024
ROWS_CACHE_SIZE = 4096  # compiled row sources (owner, filters): a few hundred bytes of SQL each


@functools.lru_cache(maxsize=QUERY_CACHE_SIZE)
def _query_vector(provider, owner_id, query: str) -> tuple[float, ...]:
    # keyed by the provider object too, so that a provider built for other settings never answers from this
    # cache; a failure raises and is not cached. Keyed by the owner: a shared entry answered faster (13.7 vs
    # 26.5 ms), which told a user that someone else had searched the same text recently.
    return tuple(provider.embed([query])[0])


def _searcher() -> int | None:
    """Whose search this is: the user the database session is bound to (core.rls), as every search runs as its
    owner under row-level security."""
    binding = getattr(connection, "memento_rls", None)
    return binding[0] if binding else None


def _speaker(owner_id: int | None) -> str:
    """The name the searcher's own memories open with (selfwords.speaker_name), "" for no bound searcher."""
    if owner_id is None:
        return ""
    with connection.cursor() as cursor:
        return speaker_name(cursor, owner_id)


def embed_query(query: str, query_vector: list[float] | None, *, what: str,
                space: str = spaces.Name.MEMORIES, owner_id: int | None = None) -> tuple[list[float] | None, bool]:
    """(vector, degraded) for a search of `space`'s table, as a ModelVector of the table's model (memories.spaces):
    `query_vector` when it is of that model, else the query's embedding by it (None for a blank query);
    (None, True) when the embedding provider fails, so that `what` answers from full text. `owner_id` (default:
    the user the session is bound to) is whose words name the memories' subject (selfwords.embedded_text)."""
    model = spaces.active_model(space, cached=True)
    if query_vector is not None and (embeddings.model_of(query_vector) == model or not query.strip()):
        return embeddings.ModelVector(query_vector, embeddings.model_of(query_vector)), False
    if not query.strip():
        return None, False
    try:
        searcher = _searcher() if owner_id is None else owner_id
        vector = _query_vector(embeddings.provider_for(model), searcher, embedded_text(query, _speaker(searcher)))
        return embeddings.ModelVector(vector, model), False
    except embeddings.EmbeddingError:
        logger.warning("embedding provider unavailable; %s answered from full text", what, exc_info=True)
        return None, True


def _filters_key(filters: MemoryFilters) -> tuple:
    return tuple(
        (f.name, getattr(value, "pk", value) if not isinstance(value, list) else tuple(value))
        for f in fields(filters) for value in [getattr(filters, f.name)]
    )


_rows_cache: dict[tuple, tuple[str, tuple]] = {}


def memory_rows(owner_id: int, filters: MemoryFilters, fields: tuple[str, ...] = ROW_FIELDS, *,
                owner_indexed: bool = True) -> tuple[str, tuple]:
    """The owner's rows that `filters` let through, as SQL and parameters to select from. Building and compiling
    the queryset cost ~1 ms of Python per search (twice: candidates and context); the SQL depends only on the owner
    and the filters (times are the database's own `now()`), so it is compiled once per process for each.

    `owner_indexed=False` names the owner as `owner_id + 0`, the same rows by a condition no B-tree serves: for a
    statement that reaches them through the owner-prefixed full-text index, where the planner otherwise ANDs a
    large owner's tens of thousands of B-tree entries into the index's bitmap for nothing (BENCHMARKS.md, 1M)."""
    key = (owner_id, _filters_key(filters), fields, owner_indexed)
    compiled = _rows_cache.get(key)
    if compiled is None:
        if len(_rows_cache) >= ROWS_CACHE_SIZE:
            _rows_cache.clear()
        owned = (Memory.objects.owned_by(owner_id) if owner_indexed
                 else Memory.objects.alias(owner_unindexed=F("owner_id") + 0).filter(owner_unindexed=owner_id))
        compiled = rows_source(filter_memories(owned, filters), fields)
        _rows_cache[key] = compiled
    return compiled


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


@hooks.search
def memory_search(*, owner, query: str, mode: str = "hybrid", threshold: float | None = None, limit: int = 20,
                  filters: MemoryFilters = MemoryFilters(),  # noqa: B008 (frozen: safe as a default)
                  ranking: str | None = None,
                  query_vector: list[float] | None = None, fill: bool = True) -> SearchResult:
    """Search `owner`'s memories (filtered as `filters` says, seed 004's scope rule by default).

    - semantic: cosine similarity to the query's embedding; only memories at or above `threshold` (default
      DEFAULT_THRESHOLD, 0.2) come back, best first, up to `limit`.
    - keyword: PostgreSQL full text over the stored tsvector (subject weighted above content): any of the
      query's words may match, ranked by BM25.
    - hybrid: the nearest vectors and the best full-text matches, fused by `ranking` (default "fused", see
      RANKINGS). A `threshold` here (and in keyword mode) is a minimum score. Only memories related to the query
      rank (ranking.related); with `fill`, when fewer than formula.FILL_TO are, the nearly related follow at score 0,
      nearest first (ranking.near_only), and a search with nothing near returns nothing.

    `query_vector` skips embedding the query. When the embedding provider fails, semantic and hybrid answer
    from full text alone with `degraded=True`. Reads only: the caller records what was returned."""
    if mode not in SEARCH_MODES:
        raise ValueError(f"mode must be one of {SEARCH_MODES}, not {mode!r}")
    if ranking is not None and ranking not in RANKINGS:
        raise ValueError(f"ranking must be one of {sorted(RANKINGS)}, not {ranking!r}")
    if not 1 <= limit <= MAX_LIMIT:
        raise ValueError(f"limit must be between 1 and {MAX_LIMIT}")
    ranking_name = ranking or MODE_RANKINGS[mode]
    owner_id = getattr(owner, "pk", owner)
    vector, degraded = embed_query(query, query_vector, what="search", owner_id=owner_id) if (
        mode != "keyword") else (None, False)
    if mode == "semantic" and vector is None and not degraded:
        return SearchResult([], mode, ranking_name, False)
    if degraded and ranking_name in ("similarity", "rrf"):
        ranking_name = "keyword" if mode == "semantic" else DEFAULT_RANKING
    use_semantic = vector is not None
    use_keyword = mode != "semantic" or degraded

    with connection.cursor() as cursor:
        unweighted = f"{owner_words(cursor, owner)} {idiom_words(query)}".strip() if use_keyword else ""
        figures = owner_figures(cursor, owner_id)
        total, path = figures.total, vector_path(figures)
        semantic_floor = (DEFAULT_THRESHOLD if threshold is None else threshold) if (
            mode == "semantic" and not degraded) else None
        held, lexemes = None, None  # a small owner's snapshot, when the process holds (or now reads) one
        if total <= settings.SEARCH_EXACT_MAX_MEMORIES and settings.SEARCH_SNAPSHOT_ROWS:
            lexemes, stamp = snapshot.start(cursor, owner_id, query if use_keyword else "", unweighted)
            if stamp is not None:  # an owner whose memories never changed has none
                model = embeddings.model_of(vector)
                held = snapshot.snapshots.get(cursor, (owner_id, _filters_key(filters), model), owner_id, memory_rows(
                    owner_id, filters, ROW_FIELDS + snapshot.FIELDS), stamp, model=model)
        if held is not None:
            context_now = False
            found_rows, held_similarities = held.candidates(
                vector=vector if use_semantic else None, lexemes=lexemes, k=max(CANDIDATES, limit), k1=BM25_K1,
                b=BM25_B, subject_tf=SUBJECT_TF, total=total)
        else:
            found_rows, context_now, side_rows = _candidate_rows(
                cursor, owner_id, filters, query, vector if use_semantic else None, use_keyword=use_keyword,
                total=total, path=path, limit=limit, fused=ranking_name == "fused" and semantic_floor is None,
                lexemes=lexemes, unweighted=unweighted)
        found = candidates_from_rows(found_rows)
        hooks.note(path="snapshot" if held is not None else path, candidates=len(found))
        if semantic_floor is not None:
            found = [c for c in found if c.similarity is not None and c.similarity >= semantic_floor - 1e-9]
        if ranking_name == "fused" and found and use_semantic:
            intent = query_intent(vector)
            if intent is not None:  # a need ("what should I not cook for them?"): its kind of memory gains
                ids = [c.id for c in found]
                model = embeddings.model_of(vector)
                groups = (intent.directions, intent.rivals)
                kinds = (held.kinds(ids, groups) if held is not None else kind_similarities(
                    cursor, owner_id, ids, [[embeddings.ModelVector(d.tolist(), model) for d in g] for g in groups]))
                best = calibrated_similarity(max((c.similarity for c in found if c.similarity is not None),
                                                 default=None))
                clear = intent.strength > 0  # the query's, lent to each candidate for ranking.fills_first
                for c in found:
                    category, attribute, cosines = kinds.get(c.id, ("", "", None))
                    similarity, rival = cosines or (None, None)
                    c.intent = boost(intent, category, similarity, best=min(best, 1.0), attribute=attribute)
                    c.kin = kin(similarity, rival)
                    c.clear = clear
        if ranking_name == "fused" and found:
            relevance(found)
            if context_now:
                hit_ids = {row[0] for row in side_rows}
                found = lend_context(found, [c for c in found if c.id in hit_ids], side_rows)  # SQL's hits
            elif held is not None:
                hits = context_hits(found)
                found = lend_context(found, hits, held.neighbours(hits, held_similarities))
            else:
                found = add_context(cursor, memory_rows(owner_id, filters), owner_id, found, vector)
    scored = rank(found, ranking_name, query, fill=fill)
    if threshold is not None and (mode != "semantic" or degraded):
        scored = [s for s in scored if s[1] >= threshold]
    scored = scored[:limit]
    memories = memories_by_id(owner_id=owner_id, ids=[c.id for c, _, _ in scored])
    results = [ScoredMemory(memories[c.id], score, parts) for c, score, parts in scored if c.id in memories]
    return SearchResult(results, mode, ranking_name, degraded)


def _candidate_rows(cursor, owner_id: int, filters: MemoryFilters, query: str, vector, *, use_keyword: bool,
                    total: int, path: str, limit: int, fused: bool,
                    lexemes: list[str] | None, unweighted: str = "") -> tuple[list, bool, list]:
    """(candidate rows, whether the fused ranking's neighbours came with them, neighbour rows) from the database,
    the nearest vectors as `path` says (memories.search.paths): "exact" by the true distance over the owner's rows
    (owner B-tree), with no HNSW settings and so no transaction and no round trip unless full text needs the
    query's words (`lexemes`, when already asked for); "own" through the owner's own HNSW index (the planner picks
    it: the statement names the owner as a constant, Django's psycopg binds parameters client-side), "shared"
    through the filtered shared one."""
    rows = memory_rows(owner_id, filters)
    hnsw = vector is not None and path != "exact"
    large = path != "exact"  # a transaction of its own, for its settings (sql.search_start)
    with transaction.atomic() if large else nullcontext():
        if large or (lexemes is None and use_keyword):
            ef_search = (OWN_INDEX_EF_SEARCH if path == "own" else HNSW_EF_SEARCH) if hnsw else None
            lexemes = search_start(cursor, query if use_keyword else "", ef_search=ef_search, serial=large,
                                   unweighted=unweighted)
        lexemes = lexemes or []
        bounded = None
        if path != "exact" and settings.SEARCH_KEYWORD_MAX_ROWS and 0 < len(lexemes) <= MAX_BOUNDED_LEXEMES:
            # large owners: full text reads and scores a bounded number of the matching rows, rarest words first
            # (sql.bounded_tiers), when there are more of them than the bound; small owners' rankings stay exact
            frequencies = word_frequencies(cursor, owner_id, lexemes, total=total)
            if sum(frequencies) > settings.SEARCH_KEYWORD_MAX_ROWS:
                bounded = (frequencies, settings.SEARCH_KEYWORD_MAX_ROWS)
        # fused: the neighbours of the best hits come in the same statement, unless a semantic floor drops
        # candidates first (then they are looked up after it)
        found_rows = candidates(
            cursor, rows=rows, table="memories_memory", owner_id=owner_id, vector=vector, lexemes=lexemes,
            k=max(CANDIDATES, limit), k1=BM25_K1, b=BM25_B, subject_tf=SUBJECT_TF, total=total, exact=not hnsw,
            # the shared index's filtered scan pays for each nearest vector with 1 / share entries visited; the
            # owner's own index does not
            nearest=max(settings.SEARCH_HNSW_CANDIDATES if path == "shared" else CANDIDATES, limit) if hnsw else None,
            bounded=bounded, keyword_rows=memory_rows(owner_id, filters, owner_indexed=False) if bounded else None,
            columns=(*CANDIDATE_COLUMNS, "m.created_at") if fused else CANDIDATE_COLUMNS,
            then=with_context(rows, owner_id, vector) if fused else None,
        )
    if fused:
        found_rows, side_rows = split_context_rows(found_rows)
        return found_rows, True, side_rows
    return found_rows, False, []
