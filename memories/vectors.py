"""Vectors for memories being written: their contents embedded before any transaction opens (pending when the
provider is down), and the near-duplicates those vectors find among the owner's live memories."""

import logging
import re
from typing import Any

from django.conf import settings
from django.db import connection, transaction
from pgvector import Vector

from integrations import embeddings
from memories import spaces
from memories.models import Memory, ttl_deadline_sql
from memories.search.paths import owner_figures, vector_path

logger = logging.getLogger(__name__)


def embed_or_pending(texts: list[str]) -> tuple[list[list[float] | None], str]:
    """Embeddings and the model name, or Nones and '' when the provider is down: stored as pending, embedded
    later by `manage.py reembed` or the periodic task."""
    model = spaces.active_model(spaces.Name.MEMORIES)
    try:
        return [embeddings.ModelVector(v, model) for v in embeddings.embed_texts(texts, model)], model
    except embeddings.EmbeddingError:
        logger.warning("embedding provider unavailable; %d memories stored with embedding pending", len(texts),
                       exc_info=True)
        return [None] * len(texts), ""


def embed_indexed(items: list[dict[str, Any]]) -> tuple[list[list[float] | None], str]:
    """`embed_or_pending` for the items' contents, leaving out items stored with `indexed=False` (never embedded)."""
    wanted = [i for i, item in enumerate(items) if item.get("indexed", True)]
    vectors: list[list[float] | None] = [None] * len(items)
    if not wanted:
        return vectors, ""
    found, model_name = embed_or_pending([items[i]["content"] for i in wanted])
    for i, vector in zip(wanted, found, strict=True):
        vectors[i] = vector
    return vectors, model_name


def _owner_scan(cursor, owner_id: int) -> bool:
    """How this transaction reads one owner's nearest vectors: True, by their true distance (small owners); False,
    through the HNSW index, scanning on (iterative scan) past other owners' entries and dead ones until the owner's
    nearest are found."""
    exact = vector_path(owner_figures(cursor, owner_id)) == "exact"
    if not exact:
        cursor.execute("SELECT set_config('hnsw.iterative_scan', 'strict_order', true)")
    return exact


def find_duplicates(*, owner_id: int, project_id, vectors: list[list[float] | None]) -> list[Memory | None]:
    """For each vector, the live memory of the same owner and scope at cosine >= MEMORY_DUPLICATE_THRESHOLD
    (callers also compare the figures of the two texts, see `numbers_in`).
    One round trip for the whole batch (a LATERAL nearest-neighbour lookup per vector)."""
    wanted = [(i, v) for i, v in enumerate(vectors) if v is not None]
    found: list[Memory | None] = [None] * len(vectors)
    if not wanted:
        return found
    max_distance = 1.0 - settings.MEMORY_DUPLICATE_THRESHOLD
    # Small owners: the exact distance over their rows (owner B-tree; "+ 0" is an order no index serves), as search
    # does. Large owners: their own HNSW index when they have one (memories.search.paths; the owner is a constant in
    # the statement, so the planner can take the partial index), else the shared one, scanning on past other owners'
    # entries (and dead ones: a table that has seen many rolled-back writes hid duplicates behind them) until the
    # owner's nearest is found.
    with transaction.atomic(savepoint=False), connection.cursor() as cursor:
        exact = _owner_scan(cursor, owner_id)
        distance = "embedding::halfvec(384) <=> q.v::halfvec(384)"
        order = f"({distance}) + 0" if exact else distance
        cursor.execute(
            f"""
            SELECT q.idx, m.id
            FROM unnest(%s::int[], %s::text[]::vector(384)[]) AS q(idx, v)
            CROSS JOIN LATERAL (
                SELECT id, (embedding::halfvec(384) <=> q.v::halfvec(384)) AS distance
                FROM memories_memory
                WHERE owner_id = %s AND project_id IS NOT DISTINCT FROM %s
                  AND is_active AND superseded_by_id IS NULL AND embedding IS NOT NULL AND embedding_model = %s
                  AND (expires_at IS NULL OR expires_at > now())
                  AND (ttl_minutes IS NULL OR {ttl_deadline_sql()} > now())
                ORDER BY {order}
                LIMIT 1
            ) AS m
            WHERE m.distance <= %s
            """,
            [[i for i, _ in wanted], [Vector(v).to_text() for _, v in wanted], owner_id, project_id,
             embeddings.model_of(wanted[0][1]), max_distance],
        )
        hits = dict(cursor.fetchall())
    if hits:
        memories = Memory.objects.in_bulk(list(hits.values()))
        for idx, memory_id in hits.items():
            found[idx] = memories[memory_id]
    return found


def nearest_of_owner(queryset, *, owner_id: int, vector, model: str | None = None, limit: int) -> list[Memory]:
    """The `limit` rows of `queryset` (one owner's memories) nearest to `vector`, each with its `distance`: by the
    true distance for small owners, else through the HNSW index scanning on past other owners' entries and dead
    ones (as `find_duplicates`): a plain filtered index scan stops after `hnsw.ef_search` entries and can return
    none of the owner's rows."""
    with transaction.atomic(savepoint=False), connection.cursor() as cursor:
        return list(queryset.nearest(vector, model, exact=_owner_scan(cursor, owner_id))[:limit])


def numbers_in(text: str) -> list[str]:
    """The figures in a text: sentence embeddings barely see them ("code 1234" ~ "code 5678" at cosine 0.97),
    so near-identical texts whose figures differ are different facts, not duplicates."""
    return re.findall(r"(?<![\w.])[-+\u2212]?\d+(?:[.,:]\d+)*|\d+(?:[.,:]\d+)*", text)  # a sign is part of it


def duplicates_for(owner, prepared, vectors) -> list[Memory | None]:
    """Duplicate lookups only for items that are plain creates and did not opt out."""
    by_scope: dict[Any, list[int]] = {}
    for i, item in enumerate(prepared):
        if not item.get("allow_duplicate") and item.get("supersedes") is None:
            project = item.get("project")
            by_scope.setdefault(getattr(project, "pk", project), []).append(i)
    found: list[Memory | None] = [None] * len(prepared)
    for project_id, indexes in by_scope.items():
        hits = find_duplicates(owner_id=owner.pk, project_id=project_id, vectors=[vectors[i] for i in indexes])
        for i, hit in zip(indexes, hits, strict=True):
            if hit is not None and numbers_in(hit.content) == numbers_in(prepared[i]["content"]):
                found[i] = hit
    return found
