"""Reads of documents and chunks that take more than one step: derived memories and chunk search.

Chunk search answers in the same modes as memory search and with the same scope rule (seed 004):

- semantic: cosine similarity of the query's embedding to each chunk's; only chunks at or above `threshold`
  (default 0.3: a short query against a 254-word-piece passage scores lower than against a one-sentence memory,
  hence a lower default than memory search's 0.7).
- keyword: BM25 over the stored tsvector (term frequencies from the vector's positions), as a share of the
  query's total IDF; any query word may match.
- hybrid: the nearest vectors and the best full-text matches, fused: 0.5 x calibrated cosine (0.1 unrelated, 0.6
  on topic) + 0.5 x BM25 share. A `threshold` here (and in keyword mode) is a minimum score.

The search itself is passage search's, shared with messages (memories.search.passages.passage_hits; CHUNKS says
what is particular to chunks): small owners by an exact scan, larger ones through the half-precision HNSW index
with a bounded keyword side.

Scope: no project -> chunks of documents without a project; a project -> those plus the project's documents;
`all_projects` -> every document. Every statement names `owner_id` itself (row-level security is the second
layer). When the embedding provider fails, semantic and hybrid answer from full text with `degraded=True`.
"""

from dataclasses import dataclass
from datetime import datetime

from django.db.models import Q

from documents.models import Chunk, Document
from memories.models import Memory
from memories.search.passages import PassageKind, Passages, passage_hits, passages_loaded
from memories.search.sql import PASSAGE_FIELDS, rows_source
from memories.spaces import Name

CHUNKS = PassageKind(
    table=Chunk._meta.db_table, space=Name.CHUNKS, what="chunk search", candidates=200, ef_search=200, k1=1.2,
    b=0.75, semantic_threshold=0.3, semantic_weight=0.5,
    floor=0.1, ceiling=0.6, capped=True,  # query-to-passage cosines: ~0.1 unrelated, ~0.6 on topic
    at="m.created_at", position="m.chunk_index", container="m.document_id",
)


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
                 query_vector: list[float] | None = None) -> Passages:
    """Search `owner`'s document chunks; returns ScoredPassage(passage=the chunk) best first (see the module
    docstring for modes, scores and scope)."""
    owner_id = getattr(owner, "pk", owner)
    filters = ChunkFilters(project=project, all_projects=all_projects, document=document,
                           created_after=created_after, created_before=created_before)
    rows = rows_source(chunk_queryset(owner=owner_id, filters=filters), PASSAGE_FIELDS)
    hits = passage_hits(CHUNKS, owner_id=owner_id, rows=rows, query=query, mode=mode, limit=limit,
                        threshold=threshold, query_vector=query_vector)
    return passages_loaded(hits, Chunk.objects.filter(owner_id=owner_id).select_related("document")
                           .defer("embedding"))


def chunks_for_memory_search(*, owner, query: str, mode: str, limit: int, threshold: float | None, filters,
                             query_vector: list[float] | None = None) -> Passages:
    """Chunks to return beside memories (`include_chunks=true`): same query, mode, limit and scope as the memory
    search's `filters` (a memories.selectors.MemoryFilters); an explicit threshold applies to both."""
    return chunk_search(
        owner=owner, query=query, mode=mode, limit=limit, threshold=threshold, project=filters.project,
        all_projects=filters.all_projects, created_after=filters.created_after,
        created_before=filters.created_before, query_vector=query_vector,
    )
