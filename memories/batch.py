"""Writes of many memories at once: a batch of up to MEMORY_BATCH_MAX items, all or nothing, embedded in chunks
while the previous chunk is being written; re-embedding; the periodic sweeps (expired memories, pending
embeddings)."""

import itertools
import logging
from typing import Any

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import DatabaseError, transaction
from django.utils import timezone
from simple_history.utils import bulk_update_with_history

from core.ahead import ahead
from integrations import embeddings
from memories import spaces
from memories.models import HistoryAction, Memory
from memories.services import memory_soft_delete
from memories.vectors import embed_indexed
from memories.writes import MemoryWrite, atomic_writes, prepare_item, write_prepared

Action = HistoryAction.Action
logger = logging.getLogger(__name__)

# Items embedded together while the previous chunk is being written (see memory_batch_create).
EMBED_CHUNK = 200


def memory_batch_create(*, owner, items: list[dict[str, Any]], actor=None, reason: str = "created",
                        vectors: list[list[float]] | None = None) -> list[MemoryWrite]:
    """Create or upsert up to MEMORY_BATCH_MAX memories, all or nothing, with one embedding call for all.
    `vectors`: the items' embeddings, when the caller already has them from the configured model."""
    if len(items) > settings.MEMORY_BATCH_MAX:
        raise ValidationError({"items": [f"At most {settings.MEMORY_BATCH_MAX} items per batch, got {len(items)}."]})
    if not items:
        raise ValidationError({"items": ["Send at least one item."]})
    prepared, errors = [], []
    for index, item in enumerate(items):
        try:
            prepared.append(prepare_item(item))
        except ValidationError as exc:
            if len(items) == 1:
                raise
            errors += [f"item {index}: {field}: {' '.join(msgs)}" for field, msgs in exc.message_dict.items()]
    if errors:
        raise ValidationError({"items": errors})
    # Embedding and writing overlap: while chunk i is written (HNSW inserts cost ~2.5 ms a row), chunk i+1 is
    # embedded in a worker thread (core.ahead). The first chunk is embedded before the transaction opens.
    if vectors is not None:
        with transaction.atomic():
            model = embeddings.model_of(next((v for v in vectors if v is not None), None))  # the caller's model
            return write_prepared(owner, prepared, vectors, model, actor=actor, reason=reason)
    chunks = [prepared[i : i + EMBED_CHUNK] for i in range(0, len(prepared), EMBED_CHUNK)]
    with ahead(embed_indexed, chunks) as embedded:
        first = next(embedded)
        with atomic_writes():
            results: list[MemoryWrite] = []
            for chunk, (vectors, model_name) in itertools.chain([first], embedded):
                results += write_prepared(owner, chunk, vectors, model_name, actor=actor, reason=reason)
            return results


def memory_reembed_batch(*, memories: list[Memory], reason: str = "re-embedded", actor=None) -> int:
    """Give these memories fresh embeddings from the table's model (memories.spaces), with one history row each.
    The rows are read again, locked, after embedding: a memory edited meanwhile (its edit embedded it) or forgotten
    is skipped,
    and each history row snapshots the memory as stored, not as it was read before embedding. Returns how many
    memories were re-embedded."""
    if not memories:
        return 0
    contents = {m.pk: m.content for m in memories}
    model = spaces.active_model(spaces.Name.MEMORIES)
    vectors = dict(zip(contents, embeddings.embed_texts(list(contents.values()), model), strict=True))
    now = timezone.now()
    with transaction.atomic():
        current = [
            m for m in Memory.objects.select_for_update().defer("embedding", "search_vector")
            .filter(pk__in=list(contents)).order_by("pk")
            if m.content == contents[m.pk] and m.indexed  # index=False: never embedded
        ]
        for memory in current:
            memory.embedding = vectors[memory.pk]
            memory.embedding_model = model
            memory.updated_at = now
        if current:
            bulk_update_with_history(
                current, Memory, ["embedding", "embedding_model", "updated_at"], default_change_reason=reason,
                default_user=actor, custom_historical_attrs={"history_action": Action.EMBED},
            )
    return len(current)


# --- periodic sweeps (memories.tasks) -------------------------------------------------------------------------


def memories_deactivate_expired(*, batch_size: int = 500) -> int:
    """Soft-delete live memories past their `expires_at` or their TTL (one version each, reason 'expired'). A row
    that cannot be read or written (a moment stored before core.times checked them) is skipped and logged with
    its id and the error: one user's row never stops everyone's expiry."""
    done, after = 0, None
    while True:
        due = Memory.objects.filter(is_active=True).expired().order_by("pk")
        ids = list((due.filter(pk__gt=after) if after else due).values_list("pk", flat=True)[:batch_size])
        for pk in ids:
            try:
                with transaction.atomic():
                    memory_soft_delete(memory=Memory.objects.get(pk=pk), reason="expired")
                done += 1
            except (DatabaseError, ValueError, OverflowError, ValidationError) as exc:
                logger.warning("expiry skipped memory %s: %s: %s", pk, type(exc).__name__, exc)
        if len(ids) < batch_size:
            return done
        after = ids[-1]


def memories_embed_pending(*, batch_size: int = 200) -> int:
    """Embed live memories stored while the embedding provider was down (embedding pending), oldest first, one
    history row each. Stops at the first provider failure (EmbeddingError propagates: the caller retries later).
    A row that cannot be read is skipped and logged (`_readable`). Returns how many were embedded."""
    done, after = 0, None
    while True:
        due = Memory.objects.filter(embedding__isnull=True, is_active=True, indexed=True).order_by("pk")
        ids = list((due.filter(pk__gt=after) if after else due).values_list("pk", flat=True)[:batch_size])
        pending = _readable(ids, "embedding")
        if pending:
            done += memory_reembed_batch(memories=pending, reason="embedded after the provider recovered")
        if len(ids) < batch_size:
            return done
        after = ids[-1]


def _readable(ids: list, sweep: str) -> list[Memory]:
    """The memories of `ids` that can be read: a moment stored before core.times checked them (year 10000 in UTC)
    fails the whole read, so the batch is read again one row at a time and the unreadable rows are logged."""
    try:
        return list(Memory.objects.filter(pk__in=ids).order_by("pk"))
    except (DatabaseError, ValueError, OverflowError):
        rows = []
        for pk in ids:
            try:
                rows.append(Memory.objects.get(pk=pk))
            except (DatabaseError, ValueError, OverflowError) as exc:
                logger.warning("%s skipped memory %s: %s: %s", sweep, pk, type(exc).__name__, exc)
        return rows
