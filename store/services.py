"""Executing store operations. A batch runs in order, in one transaction: puts are upserts through
`memories.batch.memory_batch_create` (never merged with near-duplicates), deletes are soft deletes; every text
a batch needs embedded (contents, indexed fields, search queries) is embedded in one go before the transaction."""

import json
from collections import defaultdict
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import connection, transaction

from integrations import embeddings
from memories import batch as memory_batch
from memories import services as memory_services
from memories import spaces
from memories.models import Memory, MemoryEvent
from store import ops, selectors
from store.items import content_for, indexed_texts
from store.models import ItemVector


@dataclass
class _PreparedPut:
    op: ops.Put
    content: str
    fields: list[tuple[str, str, str]]  # (field, path, text)


def _token_counts(texts: list[str]) -> dict[str, int]:
    distinct = list(dict.fromkeys(texts))
    encodings = embeddings.tokenizer().encode_batch(distinct, add_special_tokens=False) if distinct else []
    return {text: len(encoding.ids) for text, encoding in zip(distinct, encodings, strict=True)}


def _embed_exact(texts: list[str], counts: dict[str, int] | None = None,
                 model: str | None = None) -> dict[str, list[float]]:
    """Vectors of distinct texts, embedded in groups of equal length: padding a text to the longest one in its
    batch moves its vector in the 7th decimal, and the same text must score the same whatever it was put with.
    An unavailable provider is a 503 (nothing was written)."""
    counts = counts or _token_counts(texts)
    by_length: dict[int, list[str]] = defaultdict(list)
    for text in dict.fromkeys(texts):
        by_length[counts[text]].append(text)
    vectors: dict[str, list[float]] = {}
    try:
        for group in by_length.values():
            vectors.update(zip(group, (embeddings.ModelVector(v, embeddings.model_of(None) if model is None else model)
                                       for v in embeddings.embed_texts(group, model)), strict=True))
    except embeddings.EmbeddingError as exc:
        raise StoreUnavailable("The embedding provider is unavailable; nothing was written.") from exc
    return vectors


class StoreUnavailable(Exception):
    """A slow dependency (the embedding provider) failed before anything was written."""


def _prepare(op: ops.Put) -> _PreparedPut:
    fields = indexed_texts(op.value, op.index)
    if len(fields) > settings.STORE_MAX_FIELDS:
        raise ValidationError({"index": [f"The item has {len(fields)} texts to index; the limit is "
                                         f"{settings.STORE_MAX_FIELDS}."]})
    return _PreparedPut(op=op, content=content_for(op.value, fields), fields=fields)


def _texts(put: _PreparedPut) -> list[str]:
    """What a put has embedded: its content (unless it is not indexed) and its indexed texts."""
    return ([put.content] if put.op.index is not False else []) + [text for _, _, text in put.fields]


def check_embedding_budget(batch: list[ops.Op], prepared: dict[int, _PreparedPut]) -> dict[str, int]:
    """The embedding work a request may cause is bounded, because it runs on the request's thread (8 puts of a
    200 KB value held another user's request for a minute): a put may have at most STORE_VALUE_MAX_TOKENS word
    pieces embedded, a batch STORE_BATCH_MAX_TOKENS in all (its puts' and its searches' queries). Over either, a
    400 naming the value (`value`, or `ops[3].value` in a batch) or `ops`, before any embedding. Returns the
    texts' token counts."""
    texts = [text for p in prepared.values() for text in _texts(p)]
    texts += [op.query for op in batch if isinstance(op, ops.Search) and op.query]
    counts = _token_counts(texts)
    for index, put in prepared.items():
        tokens = sum(counts[text] for text in set(_texts(put)))  # a text is embedded once
        if tokens > settings.STORE_VALUE_MAX_TOKENS:
            field = "value" if len(batch) == 1 else f"ops[{index}].value"
            raise ValidationError({field: [
                f"Has {tokens:,} word pieces to embed (its content and indexed fields); the limit is "
                f"{settings.STORE_VALUE_MAX_TOKENS:,}. Index fewer fields (`index`) or store a smaller value."]})
    total = sum(counts.values())
    if total > settings.STORE_BATCH_MAX_TOKENS:
        raise ValidationError({"ops": [
            f"The batch has {total:,} word pieces to embed; the limit is {settings.STORE_BATCH_MAX_TOKENS:,}. "
            "Send it as several batches."]})
    return counts


def store_batch(*, owner, batch: list[ops.Op]) -> list[Any]:
    """Run the operations in order and return their results in order: an Item or None for a get, None for a
    put or delete, a list of Items for a search, a list of namespace tuples for a listing."""
    prepared = {i: _prepare(op) for i, op in enumerate(batch) if isinstance(op, ops.Put) and op.value is not None}
    counts = check_embedding_budget(batch, prepared)
    # contents are compared with memories' vectors, fields with the store's: each embedded with its table's model
    # (the two differ only while one is being switched to another, memories.spaces), a query with both
    memory_model, field_model = spaces.active_model(spaces.Name.MEMORIES), spaces.active_model(spaces.Name.STORE)
    queries = [op.query for op in batch if isinstance(op, ops.Search) and op.query]
    wanted: dict[str, list[str]] = defaultdict(list)
    wanted[memory_model] += [p.content for p in prepared.values() if p.op.index is not False] + queries
    wanted[field_model] += [text for p in prepared.values() for _, _, text in p.fields] + queries
    vectors = {model: _embed_exact(texts, counts, model) if texts else {} for model, texts in wanted.items()}
    results: list[Any] = [None] * len(batch)
    touched: dict[int, tuple[str, str]] = {}  # memory id -> (event action, query) for reads that refresh TTLs
    with transaction.atomic():
        _lock_keys(owner, [op for op in batch if isinstance(op, ops.Put) and op.namespace])
        index = 0
        while index < len(batch):
            op = batch[index]
            if isinstance(op, ops.Put) and op.value is not None:
                run = index
                while run < len(batch) and isinstance(batch[run], ops.Put) and batch[run].value is not None:
                    run += 1
                _put(owner, [prepared[i] for i in range(index, run)], vectors[memory_model], vectors[field_model])
                index = run
                continue
            if isinstance(op, ops.Put):
                _delete(owner, op)
            elif isinstance(op, ops.Get):
                results[index] = selectors.items_get(owner_id=owner.pk, gets=[op])[0]
                if results[index] is not None and op.refresh_ttl:
                    touched.setdefault(results[index].id, (MemoryEvent.Action.READ, ""))
            elif isinstance(op, ops.Search):
                found = selectors.items_search(
                    owner_id=owner.pk, search=op, vector=vectors[field_model].get(op.query) if op.query else None,
                    memory_vector=vectors[memory_model].get(op.query) if op.query else None)
                results[index] = found
                if op.refresh_ttl:
                    for item in found:
                        touched.setdefault(item.id, (MemoryEvent.Action.SEARCH, op.query or ""))
            else:
                results[index] = selectors.namespaces_list(owner_id=owner.pk, listing=op)
            index += 1
        # what a read returned gets `accessed_at` (which refreshes TTLs) and a READ/SEARCH event
        by_action: dict[tuple[str, str], list] = defaultdict(list)
        for memory_id, action in touched.items():
            by_action[action].append(memory_id)
        for (action, query), ids in by_action.items():
            memory_services.memories_touch(memory_ids=ids, owner_id=owner.pk, action=action, query=query)
    return results


def _lock_keys(owner, writes: list[ops.Put]) -> None:
    """Serialise concurrent writers of the same items (two upserts of a new key would both insert, and one
    would fail on the unique live key): a transaction-level advisory lock per (owner, namespace, key), taken
    in one sorted order for the whole batch so that two batches cannot deadlock."""
    identities = sorted({json.dumps([owner.pk, list(op.namespace), op.key]) for op in writes})
    if identities:
        with connection.cursor() as cursor:
            cursor.execute("SELECT count(pg_advisory_xact_lock(hashtextextended(k, 0))) "
                           "FROM (SELECT unnest(%s::text[]) AS k ORDER BY 1) AS ordered", [identities])


def _put(owner, puts: list[_PreparedPut], vectors: dict[str, list[float]],
         field_vectors: dict[str, list[float]]) -> None:
    """Upsert a run of consecutive puts (the last put of a key wins, as in LangGraph's batching) and replace
    their field vectors."""
    last: dict[tuple, _PreparedPut] = {}
    for put in puts:
        last.pop((put.op.namespace, put.op.key), None)
        last[(put.op.namespace, put.op.key)] = put
    puts = list(last.values())
    items = [{
        "namespace": list(p.op.namespace), "key": p.op.key, "content": p.content, "value": p.op.value,
        "ttl_minutes": p.op.ttl, "indexed": p.op.index is not False, "allow_duplicate": True,
    } for p in puts]
    content_vectors = [vectors.get(p.content) if p.op.index is not False else None for p in puts]
    writes = memory_batch.memory_batch_create(owner=owner, items=items, vectors=content_vectors,
                                                 reason="store put")
    ItemVector.objects.filter(owner=owner, memory__in=[w.memory.pk for w in writes]).delete()
    ItemVector.objects.bulk_create([
        ItemVector(memory_id=write.memory.pk, owner=owner, field=field, path=path, embedding=field_vectors[text],
                   embedding_model=field_vectors[text].model)
        for write, put in zip(writes, puts, strict=True) for field, path, text in put.fields
    ])


def _delete(owner, op: ops.Put) -> None:
    if not op.namespace:
        return
    memory = (Memory.objects.owned_by(owner)
              .filter(namespace=list(op.namespace), key=op.key, is_active=True).first())
    if memory is not None:
        memory_services.memory_soft_delete(memory=memory, reason="store delete")
