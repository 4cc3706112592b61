"""Reads of documents and chunks that take more than one step: derived memories and chunk search.

Chunk search answers in the same modes as memory search and with the same scope rule (seed 004):

- semantic: cosine similarity of the query's embedding to each chunk's (an exact scan for small owners, else the
  half-precision HNSW index, ordered by the indexed expression: memories.search.passages); only chunks at or
  above `threshold` (default CHUNK_THRESHOLD) come back. A short query against a 254-word-piece passage scores
  lower than against a one-sentence memory, hence a lower default than memory search's 0.7.
- keyword: BM25 over the stored tsvector (term frequencies from the vector's positions), as a share of the
  query's total IDF; any query word may match.
- hybrid: the nearest vectors and the best full-text matches, fused: SEMANTIC_WEIGHT x calibrated cosine +
  (1 - SEMANTIC_WEIGHT) x BM25 share. A `threshold` here (and in keyword mode) is a minimum score.

Scope: no project -> chunks of documents without a project; a project -> those plus the project's documents;
`all_projects` -> every document. Every statement names `owner_id` itself (row-level security is the second
layer). When the embedding provider fails, semantic and hybrid answer from full text with `degraded=True`.
"""

from dataclasses import dataclass
from datetime import datetime
from typing import NamedTuple

from django.db.models import Q

from documents.models import Chunk, Document
from memories.models import Memory
from memories.search import calibrated_similarity, embed_query, score_passages
from memories.search.passages import passage_search_candidates
from memories.search.sql import PASSAGE_FIELDS, rows_source

SEARCH_MODES = ("semantic", "keyword", "hybrid")
MAX_LIMIT = 200
CANDIDATES = 200  # per signal
HNSW_EF_SEARCH = 200
CHUNK_THRESHOLD = 0.3  # semantic mode: minimum cosine similarity of query and passage
SEMANTIC_WEIGHT = 0.5
SEMANTIC_FLOOR, SEMANTIC_CEILING = 0.1, 0.6  # query-to-passage cosines: ~0.1 unrelated, ~0.6 on topic
BM25_K1, BM25_B = 1.2, 0.75


class ScoredChunk(NamedTuple):
    chunk: Chunk
    score: float
    parts: dict[str, float]  # what the score is made of; they add up to it


class ChunkResults(list):
    """The scored chunks, best first (a list of ScoredChunk), with the mode asked for and whether the answer
    was degraded to full text."""

    def __init__(self, items=(), *, mode: str = "hybrid", degraded: bool = False):
        super().__init__(items)
        self.mode = mode
        self.degraded = degraded


@dataclass(frozen=True)
class ChunkFilters:
    project: object | None = None  # a Project
    all_projects: bool = False
    document: object | None = None  # a Document or its id
    created_after: datetime | None = None
    created_before: datetime | None = None


def chunk_queryset(*, owner, filters: ChunkFilters = ChunkFilters()):
    qs = Chunk.objects.filter(owner=owner)
    if not filters.all_projects:
        if filters.project is None:
            qs = qs.filter(document__project__isnull=True)
        else:
            qs = qs.filter(Q(document__project__isnull=True) | Q(document__project=filters.project))
    if filters.document is not None:
        qs = qs.filter(document_id=getattr(filters.document, "pk", filters.document))
    if filters.created_after is not None:
        qs = qs.filter(created_at__gte=filters.created_after)
    if filters.created_before is not None:
        qs = qs.filter(created_at__lt=filters.created_before)
    return qs


def document_chunks(*, document: Document):
    """The document's chunks in order (vectors not loaded)."""
    return Chunk.objects.filter(document=document, owner_id=document.owner_id).defer(
        "embedding", "search_vector").order_by("chunk_index")


def document_memories(*, document: Document):
    """Live memories derived from the document (source_ref names it), in the order of the chunks they came
    from."""
    return (Memory.objects.owned_by(document.owner_id).filter(source_ref__document_id=str(document.pk),
                                                              is_active=True)
            .select_related("project").order_by("source_ref__chunk_index", "created_at", "pk"))


def chunk_search(*, owner, query: str, mode: str = "hybrid", limit: int = 20, threshold: float | None = None,
                 project=None, all_projects: bool = False, document=None, created_after=None, created_before=None,
                 query_vector: list[float] | None = None) -> ChunkResults:
    """Search `owner`'s document chunks; returns ScoredChunk(chunk, score, parts) best first (see the module
    docstring for modes, scores and scope)."""
    if mode not in SEARCH_MODES:
        raise ValueError(f"mode must be one of {SEARCH_MODES}, not {mode!r}")
    if not 1 <= limit <= MAX_LIMIT:
        raise ValueError(f"limit must be between 1 and {MAX_LIMIT}")
    degraded = False
    vector = None
    if mode != "keyword" and query.strip():
        vector, degraded = embed_query(query, query_vector, what="chunk search", space="chunks")
    if mode == "semantic" and vector is None and not degraded:
        return ChunkResults(mode=mode)
    use_keyword = mode != "semantic" or degraded
    owner_id = getattr(owner, "pk", owner)
    filters = ChunkFilters(project=project, all_projects=all_projects, document=document,
                           created_after=created_after, created_before=created_before)
    # small owners by an exact scan, larger ones through the HNSW index with a bounded keyword side
    rows = rows_source(chunk_queryset(owner=owner_id, filters=filters), PASSAGE_FIELDS)
    found = passage_search_candidates(table=Chunk._meta.db_table, owner_id=owner_id, rows=rows,
                                      keyword_query=query if use_keyword else "", vector=vector,
                                      k=max(CANDIDATES, limit), k1=BM25_K1, b=BM25_B, ef_search=HNSW_EF_SEARCH)

    def hybrid(chunk_id, similarity, keyword):
        semantic = SEMANTIC_WEIGHT * min(1.0, calibrated_similarity(similarity, SEMANTIC_FLOOR, SEMANTIC_CEILING))
        parts = {"semantic": semantic, "keyword": (1 - SEMANTIC_WEIGHT) * keyword}
        return None if parts["semantic"] <= 0 and parts["keyword"] <= 0 else parts

    scored = score_passages(found, mode=mode, degraded=degraded, has_vector=vector is not None,
                            threshold=threshold, semantic_threshold=CHUNK_THRESHOLD, hybrid=hybrid)
    scored.sort(key=lambda item: (-item[1], str(item[0])))
    scored = scored[:limit]
    chunks = (Chunk.objects.filter(owner_id=owner_id).select_related("document").defer("embedding")
              .in_bulk([chunk_id for chunk_id, _, _ in scored]))
    return ChunkResults(
        [ScoredChunk(chunks[chunk_id], score, parts) for chunk_id, score, parts in scored if chunk_id in chunks],
        mode=mode, degraded=degraded,
    )


def chunks_for_memory_search(*, owner, query: str, mode: str, limit: int, threshold: float | None, filters,
                             query_vector: list[float] | None = None) -> ChunkResults:
    """Chunks to return beside memories (`include_chunks=true`): same query, mode, limit and scope as the memory
    search's `filters` (a memories.selectors.MemoryFilters); an explicit threshold applies to both."""
    return chunk_search(
        owner=owner, query=query, mode=mode, limit=limit, threshold=threshold, project=filters.project,
        all_projects=filters.all_projects, created_after=filters.created_after,
        created_before=filters.created_before, query_vector=query_vector,
    )
