"""Writes of many memories at once: up to MEMORY_BATCH_MAX items, all or nothing, embedded in chunks while the
previous chunk is being written."""

from concurrent.futures import ThreadPoolExecutor
from typing import Any

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import transaction

from memories.services import MemoryWrite, atomic_writes, embed_indexed, prepare_item, write_prepared

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
    # embedded in a worker thread. The first chunk is embedded before the transaction opens.
    if vectors is not None:
        with transaction.atomic():
            return write_prepared(owner, prepared, vectors, settings.EMBEDDING_MODEL, actor=actor, reason=reason)
    chunks = [prepared[i : i + EMBED_CHUNK] for i in range(0, len(prepared), EMBED_CHUNK)]
    with ThreadPoolExecutor(max_workers=1) as pool:
        futures = [pool.submit(embed_indexed, chunk) for chunk in chunks]
        futures[0].result()
        try:
            with atomic_writes():
                results: list[MemoryWrite] = []
                for chunk, future in zip(chunks, futures, strict=True):
                    vectors, model_name = future.result()
                    results += write_prepared(owner, chunk, vectors, model_name, actor=actor, reason=reason)
                return results
        finally:
            for future in futures:
                future.cancel()
