"""How search scores what it found: candidates, relevance, context lent by neighbouring hits, the rankings applied
(their weights and formulas are memories.search.formula's), and the scoring loop that document chunk and
conversation message search share."""

import uuid
from collections.abc import Callable
from dataclasses import dataclass

from django.utils import timezone
from pgvector import HalfVector

from integrations.embeddings import model_of
from memories.search import formula
from memories.search.algebra import Floats, Sql
from memories.search.dates import query_periods, within_periods
from memories.search.formula import (  # noqa: F401 (RANKINGS: the panel reads it from here)
    CONTEXT_HITS,
    CONTEXT_SHARES,
    FILL_FLOOR,
    FILL_TO,
    MIN_SIMILARITY,
    NEAR_BAND,
    NEAR_BEST,
    NEAR_FLOOR,
    RANKINGS,
    SEMANTIC_CEILING,
    SEMANTIC_FLOOR,
)
from memories.search.sql import EPOCH, VECTOR

# the conversation (or document) a memory came from: context is lent only within one
THREAD = ("COALESCE(m.conversation_id::text, m.source_ref->>'conversation_id', m.source_ref->>'conversation', "
          "m.source_ref->>'document_id')")
ROW_FIELDS = ("id", "owner_id", "embedding", "embedding_model", "search_vector", "importance", "created_at",
              "updated_at", "happened_at", "conversation_id", "source_ref")
# `relevance()` over columns `similarity` and `keyword`: how `with_context` picks the hits in SQL
RELEVANCE_SQL = formula.relevance(Sql, Sql("similarity"), Sql("keyword"))
# what memory candidates carry besides id, cosine and BM25 (see SearchCandidate)
CANDIDATE_COLUMNS = ("m.importance", EPOCH.format("m.updated_at"),
                     EPOCH.format("COALESCE(m.happened_at, m.created_at)"), THREAD)


@dataclass
class SearchCandidate:
    """A memory search has read and is ranking: its cosine and keyword score, ranks and ranking inputs (the
    memory proposed by an extractor is extraction.Candidate)."""

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
    intent: float = 0.0  # memories.search.intent.boost
    kin: float | None = None  # its cosine with the kind of memory the query asks for, when nearest (intent.kin)
    clear: bool = False  # the query asks for that kind clearly (intent strength > 0), not as one of a near tie


def candidates_from_rows(rows) -> list[SearchCandidate]:
    """Candidates from `sql.candidates` rows (with CANDIDATE_COLUMNS), with their semantic and full-text ranks."""
    found = [
        SearchCandidate(id=row[0], similarity=row[1], keyword=float(row[2] or 0.0), importance=row[3],
                  updated_at=row[4], when=row[5], thread=row[6])
        for row in rows
    ]
    # ties by id: the rows come in no particular order
    by_similarity = sorted((c for c in found if c.similarity is not None), key=lambda c: (-c.similarity, c.id))
    for rank, c in enumerate(by_similarity, start=1):
        c.semantic_rank = rank
    by_keyword = sorted((c for c in found if c.keyword > 0), key=lambda c: (-c.keyword, c.id))
    for rank, c in enumerate(by_keyword, start=1):
        c.keyword_rank = rank
    return found


def calibrated_similarity(similarity: float | None, floor: float = SEMANTIC_FLOOR,
                          ceiling: float = SEMANTIC_CEILING) -> float:
    """`formula.calibrated` of one cosine (None: 0), with another model's `floor` and `ceiling` if need be."""
    return formula.calibrated(Floats, similarity, floor, ceiling)


def relevance(candidates: list[SearchCandidate]) -> None:
    for c in candidates:
        c.relevance = formula.relevance(Floats, c.similarity, c.keyword)


def _sides(rows: tuple[str, tuple], owner_id, vector) -> tuple[str, list]:
    """The CONTEXT_SHARES memories stored right before and right after a hit `h` (a relation with `id` and
    `created_at`) among the filtered rows, as (id, direction, created, similarity, importance, updated, happened,
    thread): a LATERAL subquery and its parameters."""
    rows_sql, rows_params = rows
    similarity = (f"CASE WHEN m.embedding_model = %s THEN 1 - (m.embedding::{VECTOR} <=> %s::{VECTOR}) END"
                  if vector is not None else "NULL::float")
    side = (
        f"(SELECT m.id, %s AS direction, {EPOCH.format('m.created_at')} AS created, {similarity} AS similarity, "
        f"m.importance, "
        f"{EPOCH.format('m.updated_at')} AS updated, {EPOCH.format('COALESCE(m.happened_at, m.created_at)')} "
        f"AS happened, {THREAD} AS thread "
        f"FROM {rows_sql} AS m WHERE m.owner_id = %s AND m.created_at {{cmp}}= h.created_at "
        f"AND (m.created_at, m.id) {{cmp}} (h.created_at, h.id) "
        f"ORDER BY m.created_at {{order}}, m.id {{order}} LIMIT %s)"
    )
    vector_params = [model_of(vector), HalfVector(vector).to_text()] if vector is not None else []
    side_params = [*vector_params, *rows_params, owner_id, len(CONTEXT_SHARES)]
    return (f"({side.format(cmp='<', order='DESC')} UNION ALL {side.format(cmp='>', order='ASC')})",
            [-1, *side_params, 1, *side_params])


def context_hits(candidates: list[SearchCandidate]) -> list[SearchCandidate]:
    """The best hits (by relevance) that may lend context: CONTEXT_HITS of them, those from a conversation."""
    hits = sorted((c for c in candidates if c.relevance > 0), key=lambda c: -c.relevance)[:CONTEXT_HITS]
    return [c for c in hits if c.thread is not None]


def add_context(cursor, rows: tuple[str, tuple], owner_id, candidates: list[SearchCandidate],
                vector) -> list[SearchCandidate]:
    """Let the best hits lend part of their relevance to the memories stored right before and after them in
    the same conversation: the question is often in one turn and the answer in the next. Neighbours that were
    not candidates join with their own similarity (their full-text score is below the candidates'). `rows` is the
    filtered rows' SQL and parameters (`sql.rows_source` of ROW_FIELDS). A round trip of its own: `with_context`
    gets the same neighbours in the candidates' statement."""
    hits = context_hits(candidates)
    if not hits:
        return candidates
    sides, side_params = _sides(rows, owner_id, vector)
    cursor.execute(
        f"SELECT h.id, n.id, n.direction, n.created, n.similarity, n.importance, n.updated, n.happened, n.thread "
        f"FROM memories_memory AS h CROSS JOIN LATERAL {sides} AS n WHERE h.owner_id = %s AND h.id = ANY(%s::uuid[])",
        [*side_params, owner_id, [c.id for c in hits]],
    )
    return lend_context(candidates, hits, cursor.fetchall())


def with_context(rows: tuple[str, tuple], owner_id, vector):
    """A `then` for `sql.candidates` with CANDIDATE_COLUMNS and `m.created_at`: the candidates (kind 0:
    CANDIDATE_COLUMNS rows) and, in the same statement,
    the neighbours of the best hits (kind 1: `_sides` rows after their hit's id), the hits chosen in SQL by the
    same relevance as `relevance()` (formula.relevance written as SQL: the same float8 arithmetic). One round
    trip instead of two (bench/search_profile.py)."""
    sides, side_params = _sides(rows, owner_id, vector)
    names = "id, similarity, keyword, importance, updated, happened, thread, created_at"

    def then(ctes, select, params):
        ctes = [*ctes, f"c({names}) AS MATERIALIZED ({select})",
                f"hits AS (SELECT id, created_at FROM (SELECT id, created_at, thread FROM c "
                f"WHERE {RELEVANCE_SQL} > 0 ORDER BY {RELEVANCE_SQL} DESC LIMIT %s) AS t WHERE thread IS NOT NULL)"]
        final = (f"SELECT 0, id, similarity, keyword, importance, updated, happened, thread, NULL::uuid, NULL::int, "
                 f"NULL::float8 FROM c UNION ALL SELECT 1, n.id, n.similarity, NULL, n.importance, n.updated, "
                 f"n.happened, n.thread, h.id, n.direction, n.created FROM hits AS h CROSS JOIN LATERAL {sides} AS n")
        return ctes, final, [*params, CONTEXT_HITS, *side_params]

    return then


def split_context_rows(rows) -> tuple[list[tuple], list[tuple]]:
    """`with_context`'s rows as (candidate rows, neighbour rows in `add_context`'s shape)."""
    found, sides = [], []
    for row in rows:
        if row[0] == 0:
            found.append(row[1:8])
        else:
            sides.append((row[8], row[1], row[9], row[10], row[2], row[4], row[5], row[6], row[7]))
    return found, sides


def lend_context(candidates: list[SearchCandidate], hits: list[SearchCandidate], side_rows) -> list[SearchCandidate]:
    """`add_context`'s lending, given each hit's neighbour rows (hit id, id, direction, created, similarity,
    importance, updated, happened, thread). Only a hit related to the query in its own right (`related`) lends:
    one that merely ranks (a cosine below the floor) would carry in its neighbours with nothing of the query in
    either."""
    sides: dict[tuple, list] = {}
    for row in side_rows:
        sides.setdefault((row[0], row[2]), []).append(row)
    by_id = {c.id: c for c in candidates}
    floor = related_floor(candidates)
    for hit in hits:
        if not related(hit, floor):
            continue
        for direction in (-1, 1):
            rows = sorted(sides.get((hit.id, direction), []), key=lambda r: r[3], reverse=direction < 0)
            for share, row in zip(CONTEXT_SHARES, rows, strict=False):
                if row[8] != hit.thread:
                    break  # a memory from elsewhere ends the run
                neighbour = by_id.get(row[1])
                if neighbour is None:
                    neighbour = SearchCandidate(id=row[1], similarity=row[4], importance=row[5], updated_at=row[6],
                                          when=row[7], thread=row[8])
                    neighbour.relevance = formula.semantic_part(Floats, neighbour.similarity)
                    by_id[neighbour.id] = neighbour
                neighbour.context = max(neighbour.context, share * hit.relevance)
    return list(by_id.values())


def recency(c: SearchCandidate, now: float) -> float:
    return formula.recency(Floats, c.updated_at, now)


def related_floor(candidates: list[SearchCandidate]) -> float:
    """The cosine a candidate without a keyword match needs to be related at all: MIN_SIMILARITY, or less when the
    nearest candidate is clearly related (NEAR_BEST: formula.NEAR_BAND)."""
    best = max((c.similarity for c in candidates if c.similarity is not None), default=None)
    if best is None or best < NEAR_BEST:
        return MIN_SIMILARITY
    return max(NEAR_FLOOR, min(MIN_SIMILARITY, best - NEAR_BAND))


def related(c: SearchCandidate, floor: float) -> bool:
    """Whether a candidate is related to the query in its own right: it holds a query word, its cosine reaches
    `floor` (`related_floor`), or it is of the kind of memory the query asks for (intent). Context, importance and
    recency add to a related memory; they never make one related."""
    return c.keyword > 0 or c.intent > 0 or (c.similarity is not None and c.similarity >= floor)


def nearness(c: SearchCandidate) -> float:
    """How near an unrelated candidate is all the same: its cosine with the query, or with the kind of memory the
    query asks for (`kin`) when that is nearer (a sparse owner's "Loves Studio Ghibli films" for "what could I get
    her for her birthday?": 0.09 and 0.24)."""
    return max(c.similarity if c.similarity is not None else -1.0, c.kin if c.kin is not None else -1.0)


def near_only(c: SearchCandidate) -> bool:
    """Whether an unrelated candidate is near the query all the same (`nearness` from FILL_FLOOR: formula.FILL_TO)."""
    return nearness(c) >= FILL_FLOOR


def fills_first(c: SearchCandidate) -> bool:
    """Whether a filler is of the kind the query clearly asks for (`kin` from FILL_FLOOR): it fills before those
    only near the question's words ("Cuts hair in a salon", 0.18 from a generic job and nearer work than any other
    kind, before "Lives in a terraced house" for "what does she do for a living?"). A near tie fills by the
    question's words alone: either kind may be the one meant."""
    return c.clear and c.kin is not None and c.kin >= FILL_FLOOR


def rank(candidates: list[SearchCandidate], ranking: str, query: str,
         fill: bool = False) -> list[tuple[SearchCandidate, float, dict]]:
    """(candidate, score, parts) best first; ties go to the more important, then the more recent memory. With
    `fill`, fewer than FILL_TO related candidates are followed by nearly related ones (`near_only`), those of the kind
    clearly asked for first (`fills_first`), then nearest to the query, at score 0, up to FILL_TO in all."""
    now = timezone.now().timestamp()
    periods = query_periods(query) if ranking == "fused" else []
    parts_of = formula.PARTS[ranking]
    scored = []
    floor = related_floor(candidates)
    for c in candidates:
        fresh = recency(c, now)
        filler = ranking not in ("similarity", "keyword") and not related(c, floor)
        if filler and not (fill and near_only(c)):
            continue  # unrelated, and not filling: whatever its importance, recency or context
        if (ranking == "similarity" and c.similarity is None) or (ranking == "keyword" and c.keyword <= 0):
            continue  # nothing to rank it by
        # the date counts for a memory related to the query at all (not one that only ranks by importance)
        dated = bool(periods) and (c.relevance > 0 or c.context > 0) and within_periods(c.when, periods)
        parts = parts_of(Floats, similarity=c.similarity, keyword=c.keyword, semantic_rank=c.semantic_rank,
                         keyword_rank=c.keyword_rank, importance=c.importance, fresh=fresh, context=c.context,
                         intent=c.intent, dated=dated)
        score = 0.0 if filler else formula.score(Floats, parts)
        # ids last, as UUIDs: they order as their text does, without formatting each one
        order = (True, not fills_first(c), -(c.similarity or 0.0)) if filler else (False, False, -score)
        scored.append((c, score, parts, (*order, -c.importance, -fresh, c.id)))
    scored.sort(key=lambda item: item[3])
    room = max(0, FILL_TO - sum(1 for *_, order in scored if not order[0]))  # fillers sort last
    fillers = sum(1 for *_, order in scored if order[0])
    scored = scored[:len(scored) - fillers + min(room, fillers)]
    return [(c, score, parts) for c, score, parts, _ in scored]


# --- passages: document chunks and conversation messages --------------------------------------------------------


def score_passages(found, *, mode: str, degraded: bool, has_vector: bool, threshold: float | None,
                   semantic_threshold: float, hybrid: Callable) -> list[tuple]:
    """(id, score, parts) for `sql.passage_candidates` rows, in their order: semantic mode keeps cosines at or
    above `threshold` (default `semantic_threshold`); keyword mode, or no query vector, ranks by BM25 alone;
    hybrid takes `hybrid(id, similarity, keyword)`'s parts (None: not related). An explicit threshold outside
    semantic mode is a minimum score."""
    scored = []
    for passage_id, similarity, keyword in found:
        if mode == "semantic" and not degraded:
            floor = semantic_threshold if threshold is None else threshold
            if similarity is None or similarity < floor - 1e-9:
                continue
            parts = {"semantic": similarity}
        elif mode == "keyword" or not has_vector:
            if keyword <= 0:
                continue
            parts = {"keyword": keyword}
        else:
            parts = hybrid(passage_id, similarity, keyword)
            if parts is None:
                continue
        score = sum(parts.values())
        if threshold is not None and (mode != "semantic" or degraded) and score < threshold:
            continue
        scored.append((passage_id, score, parts))
    return scored
