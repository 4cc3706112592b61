"""Writes to memories and projects. Each function is one transaction; embeddings are computed before it opens,
so a slow embedding call never holds locks."""

import logging
import re
import uuid
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import IntegrityError, connection, transaction
from django.utils import timezone
from django.utils.dateparse import parse_datetime
from pgvector import Vector
from simple_history.utils import bulk_create_with_history, bulk_update_with_history

from integrations import embeddings
from memories.models import HistoryAction, Memory, MemoryEvent, Project

logger = logging.getLogger(__name__)
Action = HistoryAction.Action

# Fields a client may set on a memory; everything else is managed here.
WRITABLE_FIELDS = (
    "project", "agent_id", "namespace", "key", "content", "metadata", "tags", "entities", "category", "subject",
    "importance", "confidence", "source", "source_ref", "links", "happened_at", "expires_at", "conversation",
    "message", "value", "ttl_minutes", "indexed",
)
# Items embedded together while the previous chunk is being written (see memory_batch_create).
EMBED_CHUNK = 200
# What a revert copies back from a version.
REVERTIBLE_FIELDS = tuple(f for f in WRITABLE_FIELDS if f not in ("conversation", "message")) + ("is_active",)


@dataclass(frozen=True)
class MemoryWrite:
    """What a create/upsert did: `created`, `updated` (same key: last write wins) or `duplicate` (nothing stored;
    `memory` is the existing near-identical one)."""

    memory: Memory
    outcome: str


# --- validation -----------------------------------------------------------------------------------------------


def validate_content(content: Any, field: str = "content") -> None:
    if not isinstance(content, str) or not content.strip():
        raise ValidationError({field: ["Content may not be blank."]})
    tokens = embeddings.count_tokens(content)
    if tokens > settings.MEMORY_MAX_TOKENS:
        raise ValidationError(
            {field: [f"Content is {tokens} tokens long; the limit is {settings.MEMORY_MAX_TOKENS}."]}
        )


def validate_namespace(namespace: Any) -> None:
    if not isinstance(namespace, list) or not namespace or any(
        not isinstance(part, str) or not part.strip() for part in namespace
    ):
        raise ValidationError({"namespace": ["Namespace must be a non-empty list of non-empty strings."]})


RELATED_FIELDS = ("project", "conversation", "message")  # the owner's own objects a memory may point to


def _check_ownership(memory: Memory) -> None:
    """Related objects must belong to the memory's owner: a user cannot attach to someone else's data."""
    for name in RELATED_FIELDS:
        related = getattr(memory, name)
        if related is not None and related.owner_id != memory.owner_id:
            raise ValidationError({name: [f"Unknown {name}."]})


# --- embedding ------------------------------------------------------------------------------------------------


def embed_or_pending(texts: list[str]) -> tuple[list[list[float] | None], str]:
    """Embeddings and the model name, or Nones and '' when the provider is down: stored as pending, embedded
    later by `manage.py reembed` or the periodic task."""
    try:
        return embeddings.embed_texts(texts), settings.EMBEDDING_MODEL
    except embeddings.EmbeddingError:
        logger.warning("embedding provider unavailable; %d memories stored with embedding pending", len(texts),
                       exc_info=True)
        return [None] * len(texts), ""


def _embed_indexed(items: list[dict[str, Any]]) -> tuple[list[list[float] | None], str]:
    """`embed_or_pending` for the items' contents, leaving out items stored with `indexed=False` (never embedded)."""
    wanted = [i for i, item in enumerate(items) if item.get("indexed", True)]
    vectors: list[list[float] | None] = [None] * len(items)
    if not wanted:
        return vectors, ""
    found, model_name = embed_or_pending([items[i]["content"] for i in wanted])
    for i, vector in zip(wanted, found, strict=True):
        vectors[i] = vector
    return vectors, model_name


def find_duplicates(*, owner_id: int, project_id, vectors: list[list[float] | None]) -> list[Memory | None]:
    """For each vector, the live memory of the same owner and scope at cosine >= MEMORY_DUPLICATE_THRESHOLD
    (callers also compare the figures of the two texts, see `_numbers`).
    One round trip for the whole batch (a LATERAL nearest-neighbour lookup per vector)."""
    wanted = [(i, v) for i, v in enumerate(vectors) if v is not None]
    found: list[Memory | None] = [None] * len(vectors)
    if not wanted:
        return found
    max_distance = 1.0 - settings.MEMORY_DUPLICATE_THRESHOLD
    with connection.cursor() as cursor:
        cursor.execute(
            """
            SELECT q.idx, m.id
            FROM unnest(%s::int[], %s::text[]::vector(384)[]) AS q(idx, v)
            CROSS JOIN LATERAL (
                SELECT id, (embedding::halfvec(384) <=> q.v::halfvec(384)) AS distance
                FROM memories_memory
                WHERE owner_id = %s AND project_id IS NOT DISTINCT FROM %s
                  AND is_active AND superseded_by_id IS NULL AND embedding IS NOT NULL
                  AND (expires_at IS NULL OR expires_at > now())
                  AND (ttl_minutes IS NULL
                       OR greatest(updated_at, accessed_at) + ttl_minutes * interval '1 minute' > now())
                ORDER BY embedding::halfvec(384) <=> q.v::halfvec(384)
                LIMIT 1
            ) AS m
            WHERE m.distance <= %s
            """,
            [[i for i, _ in wanted], [Vector(v).to_text() for _, v in wanted], owner_id, project_id, max_distance],
        )
        hits = dict(cursor.fetchall())
    if hits:
        memories = Memory.objects.in_bulk(list(hits.values()))
        for idx, memory_id in hits.items():
            found[idx] = memories[memory_id]
    return found


# --- saving ---------------------------------------------------------------------------------------------------


def _save(memory: Memory, *, action: str, reason: str, actor=None) -> Memory:
    memory._history_action = action
    memory._change_reason = reason
    if actor is not None:
        memory._history_user = actor
    memory.updated_at = timezone.now()
    memory.full_clean(exclude=["search_vector"])
    memory.save()
    return memory


def _resolve_supersedes(owner, target, new_id) -> Memory:
    """The memory to supersede, locked; it must be the owner's, live, not already superseded, and not create a
    cycle with the new memory."""
    target_id = getattr(target, "pk", target)
    old = Memory.objects.owned_by(owner).select_for_update().filter(pk=target_id).first()
    if old is None:
        raise ValidationError({"supersedes": ["Unknown memory."]})
    if old.pk == new_id:
        raise ValidationError({"supersedes": ["A memory cannot supersede itself."]})
    if old.superseded_by_id and old.superseded_by_id != new_id:
        raise ValidationError({"supersedes": [f"Memory {old.pk} is already superseded by {old.superseded_by_id}."]})
    # walking back from `old` must never reach the new memory, or the chain would loop
    cursor, seen = old, {old.pk}
    while cursor.supersedes_id:
        if cursor.supersedes_id == new_id:
            raise ValidationError({"supersedes": ["That would make a supersession cycle."]})
        if cursor.supersedes_id in seen:
            break
        seen.add(cursor.supersedes_id)
        cursor = Memory.objects.filter(pk=cursor.supersedes_id).only("pk", "supersedes_id").first()
        if cursor is None:
            break
    return old


def _link_supersession(new: Memory, old: Memory, *, actor) -> None:
    old.superseded_by = new
    old.version += 1
    _save(old, action=Action.SUPERSEDE, reason=f"superseded by {new.pk}", actor=actor)


def _apply(memory: Memory, data: dict[str, Any]) -> None:
    for name, value in data.items():
        if name not in WRITABLE_FIELDS:
            raise ValidationError({name: ["This field cannot be changed."]})
        setattr(memory, name, value)


def _write_one(*, owner, item: dict[str, Any], vector, model_name: str, duplicate: Memory | None, actor,
               reason: str) -> MemoryWrite:
    """Create or upsert one prepared item inside the caller's transaction."""
    item = dict(item)
    supersedes = item.pop("supersedes", None)
    item.pop("allow_duplicate", None)
    existing = (
        Memory.objects.owned_by(owner).select_for_update()
        .filter(namespace=item["namespace"], key=item["key"], is_active=True).first()
    )
    if existing is not None:
        content_changed = item["content"] != existing.content
        _apply(existing, item)
        if not existing.indexed:
            existing.embedding, existing.embedding_model = None, ""
        elif content_changed or (existing.embedding is None and vector is not None):
            existing.embedding, existing.embedding_model = vector, model_name if vector is not None else ""
        existing.version += 1
        _check_ownership(existing)
        if supersedes is not None:
            old = _resolve_supersedes(owner, supersedes, existing.pk)
            existing.supersedes = old
        _save(existing, action=Action.UPDATE, reason=f"{reason}: upsert of key {existing.key!r}", actor=actor)
        if supersedes is not None:
            _link_supersession(existing, old, actor=actor)
        return MemoryWrite(existing, "updated")
    if duplicate is not None and supersedes is None:
        return MemoryWrite(duplicate, "duplicate")
    memory = Memory(owner=owner, embedding=vector, embedding_model=model_name if vector is not None else "", **item)
    _check_ownership(memory)
    old = _resolve_supersedes(owner, supersedes, memory.pk) if supersedes is not None else None
    memory.supersedes = old
    if old is not None and memory.source == Memory.Source.EXPLICIT and "source" not in item:
        memory.source = Memory.Source.UPDATED
    _save(memory, action=Action.CREATE, reason=reason if old is None else f"{reason}; supersedes {old.pk}",
          actor=actor)
    if old is not None:
        _link_supersession(memory, old, actor=actor)
    return MemoryWrite(memory, "created")


def _prepare(item: dict[str, Any]) -> dict[str, Any]:
    item = dict(item)
    validate_content(item.get("content"))
    for name in ("importance", "confidence"):
        value = item.get(name)
        if value is not None and not 0 <= value <= 1:
            raise ValidationError({name: ["Must be between 0 and 1."]})
    item["namespace"] = item.get("namespace") or ["memories"]
    validate_namespace(item["namespace"])
    item["key"] = item.get("key") or str(uuid.uuid4())
    return item


def memory_create(*, owner, content: str, actor=None, reason: str = "created", allow_duplicate: bool = False,
                  **fields: Any) -> MemoryWrite:
    """Store a memory. Same (namespace, key) as a live memory: that memory is updated (last write wins).
    `supersedes=<id>`: the new memory replaces that one, linked both ways. A near-identical live memory in the
    same scope (cosine >= MEMORY_DUPLICATE_THRESHOLD): nothing is stored unless `allow_duplicate`."""
    return memory_batch_create(
        owner=owner, items=[{"content": content, "allow_duplicate": allow_duplicate, **fields}], actor=actor,
        reason=reason,
    )[0]


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
            prepared.append(_prepare(item))
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
            return _write_batch(owner, prepared, vectors, settings.EMBEDDING_MODEL, actor=actor, reason=reason)
    chunks = [prepared[i : i + EMBED_CHUNK] for i in range(0, len(prepared), EMBED_CHUNK)]
    with ThreadPoolExecutor(max_workers=1) as pool:
        futures = [pool.submit(_embed_indexed, chunk) for chunk in chunks]
        futures[0].result()
        try:
            with transaction.atomic():
                results: list[MemoryWrite] = []
                for chunk, future in zip(chunks, futures, strict=True):
                    vectors, model_name = future.result()
                    results += _write_batch(owner, chunk, vectors, model_name, actor=actor, reason=reason)
                return results
        except IntegrityError as exc:
            raise ValidationError({"items": [f"The batch conflicts with stored memories: {exc}"]}) from exc
        finally:
            for future in futures:
                future.cancel()


def _write_batch(owner, prepared, vectors, model_name, *, actor, reason) -> list[MemoryWrite]:
    """Plain new memories go in with one bulk INSERT (plus one for their history rows); upserts, supersessions
    and keys repeated within the batch take the one-by-one path afterwards, in order."""
    live = {
        (tuple(m.namespace), m.key)
        for m in Memory.objects.owned_by(owner).filter(is_active=True, key__in=[i["key"] for i in prepared])
        .only("namespace", "key")
    }
    duplicates = _duplicates_for(owner, prepared, vectors)
    results: list[MemoryWrite | None] = [None] * len(prepared)
    fresh, slow, seen = [], [], set()
    vectors = [vector if item.get("indexed", True) else None for item, vector in zip(prepared, vectors, strict=True)]
    for index, (item, vector, duplicate) in enumerate(zip(prepared, vectors, duplicates, strict=True)):
        identity = (tuple(item["namespace"]), item["key"])
        if identity in live or identity in seen or item.get("supersedes") is not None:
            slow.append(index)
        elif duplicate is not None:
            results[index] = MemoryWrite(duplicate, "duplicate")
        else:
            fields = {k: v for k, v in item.items() if k != "allow_duplicate"}
            memory = Memory(owner=owner, embedding=vector, embedding_model=model_name if vector is not None else "",
                            **fields)
            _check_ownership(memory)
            # field validation here; uniqueness and check constraints are enforced by the database itself, and
            # the related objects are loaded instances checked above (their existence queries cost a query each)
            memory.clean_fields(exclude=["search_vector", "owner", *RELATED_FIELDS])
            fresh.append((index, memory))
        seen.add(identity)
    if fresh:
        bulk_create_with_history(
            [m for _, m in fresh], Memory, batch_size=500, default_user=actor, default_change_reason=reason,
            custom_historical_attrs={"history_action": Action.CREATE},
        )
        for index, memory in fresh:
            results[index] = MemoryWrite(memory, "created")
    for index in slow:
        results[index] = _write_one(owner=owner, item=prepared[index], vector=vectors[index],
                                    model_name=model_name, duplicate=duplicates[index], actor=actor, reason=reason)
    return results


def _duplicates_for(owner, prepared, vectors) -> list[Memory | None]:
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
            if hit is not None and _numbers(hit.content) == _numbers(prepared[i]["content"]):
                found[i] = hit
    return found


def memory_update(*, memory: Memory, data: dict[str, Any], actor=None, reason: str = "updated") -> Memory:
    if "content" in data:
        validate_content(data["content"])
    if "namespace" in data:
        validate_namespace(data["namespace"])
    content_changed = "content" in data and data["content"] != memory.content
    indexed = data.get("indexed", memory.indexed)
    vector, model_name = embed_or_pending([data["content"]]) if content_changed and indexed else ([None], "")
    with transaction.atomic():
        locked = Memory.objects.select_for_update().get(pk=memory.pk)
        _apply(locked, data)
        if not locked.indexed:
            locked.embedding, locked.embedding_model = None, ""
        elif content_changed:
            locked.embedding, locked.embedding_model = vector[0], model_name
        locked.version += 1
        _check_ownership(locked)
        return _save(locked, action=Action.UPDATE, reason=reason, actor=actor)


def memory_soft_delete(*, memory: Memory, actor=None, reason: str = "deleted") -> Memory:
    with transaction.atomic():
        locked = Memory.objects.select_for_update().get(pk=memory.pk)
        if not locked.is_active:
            return locked
        locked.is_active = False
        locked.version += 1
        return _save(locked, action=Action.DELETE, reason=reason, actor=actor)


def _key_clash(memory: Memory) -> bool:
    return Memory.objects.filter(
        owner_id=memory.owner_id, namespace=memory.namespace, key=memory.key, is_active=True
    ).exclude(pk=memory.pk).exists()


def memory_restore(*, memory: Memory, actor=None, reason: str = "restored") -> Memory:
    with transaction.atomic():
        locked = Memory.objects.select_for_update().get(pk=memory.pk)
        if locked.is_active:
            return locked
        if _key_clash(locked):
            raise ValidationError({"key": [f"A live memory already uses key {locked.key!r} in this namespace."]})
        locked.is_active = True
        locked.version += 1
        return _save(locked, action=Action.RESTORE, reason=reason, actor=actor)


def memory_revert(*, memory: Memory, history_id: int | None = None, version: int | None = None, actor=None,
                  reason: str = "") -> Memory:
    """Make a new version whose content and attributes equal an earlier version's."""
    records = memory.history.all()
    record = (records.filter(history_id=history_id) if history_id is not None else
              records.filter(version=version).order_by("-history_date")).first()
    if record is None:
        field = "history_id" if history_id is not None else "version"
        raise ValidationError({field: ["No such version of this memory."]})
    current_content = Memory.objects.filter(pk=memory.pk).values_list("content", flat=True).get()
    content_changed = record.content != current_content
    vector, model_name = embed_or_pending([record.content]) if content_changed and record.indexed else ([None], "")
    with transaction.atomic():
        locked = Memory.objects.select_for_update().get(pk=memory.pk)
        for name in REVERTIBLE_FIELDS:
            setattr(locked, _attname(name), getattr(record, _attname(name)))
        if not locked.indexed:
            locked.embedding, locked.embedding_model = None, ""
        elif content_changed:
            locked.embedding, locked.embedding_model = vector[0], model_name
        if locked.is_active and _key_clash(locked):
            raise ValidationError({"key": [f"A live memory already uses key {locked.key!r} in this namespace."]})
        locked.version += 1
        return _save(locked, action=Action.REVERT, reason=reason or f"reverted to version {record.version}",
                     actor=actor)


def _attname(name: str) -> str:
    return f"{name}_id" if name == "project" else name


def memory_forget(*, memory: Memory, actor=None) -> None:
    """Erase a memory and its whole history for good (right to erasure). Neighbours in its supersession chain
    lose the link, and that is recorded in their own history."""
    with transaction.atomic():
        locked = Memory.objects.select_for_update().get(pk=memory.pk)
        neighbours = Memory.objects.select_for_update().filter(pk__in=[
            pk for pk in (locked.supersedes_id, locked.superseded_by_id) if pk
        ])
        for neighbour in neighbours:
            if neighbour.supersedes_id == locked.pk:
                neighbour.supersedes = None
            if neighbour.superseded_by_id == locked.pk:
                neighbour.superseded_by = None
            neighbour.version += 1
            _save(neighbour, action=Action.UPDATE, reason="a linked memory was forgotten", actor=actor)
        memory_id = locked.pk
        locked.delete()
        Memory.history.filter(id=memory_id).delete()


def memory_reembed_batch(*, memories: list[Memory], reason: str = "re-embedded", actor=None) -> int:
    """Give these memories fresh embeddings from the configured model, with one history row each. The rows are
    read again, locked, after embedding: a memory edited meanwhile (its edit embedded it) or forgotten is skipped,
    and each history row snapshots the memory as stored, not as it was read before embedding. Returns how many
    memories were re-embedded."""
    if not memories:
        return 0
    contents = {m.pk: m.content for m in memories}
    vectors = dict(zip(contents, embeddings.embed_texts(list(contents.values())), strict=True))
    now = timezone.now()
    with transaction.atomic():
        current = [
            m for m in Memory.objects.select_for_update().defer("embedding", "search_vector")
            .filter(pk__in=list(contents)).order_by("pk")
            if m.content == contents[m.pk] and m.indexed  # index=False: never embedded
        ]
        for memory in current:
            memory.embedding = vectors[memory.pk]
            memory.embedding_model = settings.EMBEDDING_MODEL
            memory.updated_at = now
        if current:
            bulk_update_with_history(
                current, Memory, ["embedding", "embedding_model", "updated_at"], default_change_reason=reason,
                default_user=actor, custom_historical_attrs={"history_action": Action.EMBED},
            )
    return len(current)


def memories_touch(*, memory_ids: Iterable, owner_id: int, action: str, query: str = "") -> None:
    """Mark memories as just returned by a read or search: `accessed_at` in one UPDATE (accessed_at is not
    versioned, so no history is skipped) and, unless MEMORY_LOG_READS is off, one multi-row event INSERT."""
    ids = list(memory_ids)
    if not ids:
        return
    now = timezone.now()
    # inside a caller's transaction no savepoint: a failure fails the caller's transaction anyway
    with transaction.atomic(savepoint=False):
        Memory.objects.filter(owner_id=owner_id, pk__in=ids).update(accessed_at=now)
        if settings.MEMORY_LOG_READS:
            MemoryEvent.objects.bulk_create(
                [MemoryEvent(owner_id=owner_id, memory_id=pk, action=action, query=query[:1000]) for pk in ids]
            )


# --- projects -------------------------------------------------------------------------------------------------


def project_create(*, owner, name: str, description: str = "") -> Project:
    project = Project(owner=owner, name=name, description=description)
    with transaction.atomic():
        project.full_clean()
        project.save()
    return project


def project_update(*, project: Project, data: dict[str, Any]) -> Project:
    for name in ("name", "description"):
        if name in data:
            setattr(project, name, data[name])
    with transaction.atomic():
        project.full_clean()
        project.save()
    return project


def project_delete(*, project: Project) -> None:
    """Delete a project and, with it, its project-scoped memories (user-scoped memories are untouched)."""
    with transaction.atomic():
        for memory in Memory.objects.filter(project=project).select_for_update():
            memory_forget(memory=memory)
        project.delete()


# --- import ---------------------------------------------------------------------------------------------------


def _parse_time(value, field: str, line: int):
    if value in (None, ""):
        return None
    parsed = parse_datetime(value) if isinstance(value, str) else None
    if parsed is None:
        raise ValidationError({"records": [f"line {line}: {field} is not an ISO 8601 date-time."]})
    return parsed


def memory_import(*, owner, records: list[dict[str, Any]], actor=None) -> dict[str, int]:
    """Load memories in the export format, with their versions, all or nothing. A memory whose id the owner
    already has is skipped, so importing a file twice changes nothing; an id taken by another user gets a new
    id (and links between imported memories follow it). Embeddings are recomputed."""
    from memories.selectors import EXPORT_FORMAT, VERSION_FIELDS

    if len(records) > settings.MEMORY_IMPORT_MAX:
        raise ValidationError({"records": [f"At most {settings.MEMORY_IMPORT_MAX} memories per import."]})
    ids: dict[str, uuid.UUID] = {}
    for line, record in enumerate(records, start=1):
        if record.get("format") != EXPORT_FORMAT:
            raise ValidationError({"records": [f"line {line}: format must be {EXPORT_FORMAT!r}."]})
        try:
            ids[str(record["id"])] = uuid.UUID(str(record["id"]))
        except (KeyError, ValueError):
            raise ValidationError({"records": [f"line {line}: id must be a UUID."]}) from None
        try:
            validate_content(record.get("content"))
            validate_namespace(record.get("namespace"))
        except ValidationError as exc:
            raise ValidationError({"records": [f"line {line}: {f}: {' '.join(m)}"
                                               for f, m in exc.message_dict.items()]}) from None
    mine = set(Memory.objects.owned_by(owner).filter(pk__in=list(ids.values())).values_list("pk", flat=True))
    with connection.cursor() as cursor:
        cursor.execute("SELECT memento_taken_memory_ids(%s::uuid[])", [list(ids.values())])
        taken = {row[0] for row in cursor.fetchall()}
    skipped = {key for key, pk in ids.items() if pk in mine}
    remap = {key: (uuid.uuid4() if pk in taken and pk not in mine else pk) for key, pk in ids.items()}
    todo = [(line, r) for line, r in enumerate(records, start=1) if str(r["id"]) not in skipped]
    vectors, model_name = _embed_indexed([r for _, r in todo])
    owned_ids = set(Memory.objects.owned_by(owner).values_list("pk", flat=True))
    from conversations.models import Conversation, Message

    conversations = {str(pk) for pk in Conversation.objects.filter(owner=owner).values_list("pk", flat=True)}
    messages = {str(pk) for pk in Message.objects.filter(owner=owner).values_list("pk", flat=True)}

    def link(value):
        if value is None:
            return None
        target = remap.get(str(value))
        return target if target is not None or uuid.UUID(str(value)) in owned_ids else None

    with transaction.atomic():
        projects: dict[str, Project] = {}

        def project_for(name):
            if not name:
                return None
            if name not in projects:
                projects[name] = (Project.objects.filter(owner=owner, name=name).first()
                                  or project_create(owner=owner, name=name))
            return projects[name]

        memories, versions = [], []
        for (line, record), vector in zip(todo, vectors, strict=True):
            memory = Memory(
                id=remap[str(record["id"])], owner=owner, project=project_for(record.get("project")),
                embedding=vector, embedding_model=model_name if vector is not None else "",
                supersedes_id=link(record.get("supersedes")), superseded_by_id=link(record.get("superseded_by")),
                conversation_id=record.get("conversation") if record.get("conversation") in conversations else None,
                message_id=record.get("message") if record.get("message") in messages else None,
                **{name: record[name] for name in (
                    "agent_id", "namespace", "key", "content", "metadata", "tags", "entities", "category", "subject",
                    "importance", "confidence", "source", "source_ref", "links", "version", "is_active", "value",
                    "ttl_minutes", "indexed",
                ) if name in record},
                **{name: _parse_time(record.get(name), name, line) for name in (
                    "created_at", "updated_at", "happened_at", "expires_at")},
            )
            try:
                # related ids were checked above; the linked memories may be later in this same file
                memory.clean_fields(exclude=["search_vector", "embedding", "supersedes", "superseded_by",
                                             "project", "conversation", "message"])
            except ValidationError as exc:
                raise ValidationError({"records": [f"line {line}: {f}: {' '.join(m)}"
                                                   for f, m in exc.message_dict.items()]}) from None
            memories.append(memory)
            for version in record.get("versions") or []:
                snapshot = {name: version[name] for name in VERSION_FIELDS if name in version
                            and name not in ("supersedes", "superseded_by")}
                for name in ("created_at", "updated_at", "happened_at", "expires_at"):
                    snapshot[name] = _parse_time(version.get(name), name, line)
                versions.append(Memory.history.model(
                    id=memory.pk, owner_id=owner.pk, project_id=memory.project_id,
                    supersedes_id=link(version.get("supersedes")), superseded_by_id=link(version.get("superseded_by")),
                    history_date=_parse_time(version.get("at"), "at", line), history_type=version.get("type", "~"),
                    history_action=version.get("action", ""), history_change_reason=version.get("reason"),
                    history_user=actor if actor and version.get("actor") == actor.get_username() else None,
                    **snapshot,
                ))
        try:
            with transaction.atomic():
                # the versions come from the file itself, so the rows go in without new history of their own
                Memory.objects.bulk_create(memories, batch_size=500)
                Memory.history.model.objects.bulk_create(versions, batch_size=500)
        except IntegrityError as exc:
            raise ValidationError({"records": [f"The import conflicts with stored memories: {exc}"]}) from exc
    return {"imported": len(memories), "skipped": len(skipped), "versions": len(versions)}


def memories_deactivate_expired(*, batch_size: int = 500) -> int:
    """Soft-delete live memories past their `expires_at` or their TTL (one version each, reason 'expired')."""
    done = 0
    while True:
        expired = list(Memory.objects.filter(is_active=True).expired().order_by("pk")[:batch_size])
        for memory in expired:
            memory_soft_delete(memory=memory, reason="expired")
        done += len(expired)
        if len(expired) < batch_size:
            return done


def memories_embed_pending(*, batch_size: int = 200) -> int:
    """Embed live memories stored while the embedding provider was down (embedding pending), oldest first, one
    history row each. Stops at the first provider failure (EmbeddingError propagates: the caller retries later).
    Returns how many were embedded."""
    done = 0
    while True:
        pending = list(Memory.objects.filter(embedding__isnull=True, is_active=True, indexed=True)
                       .order_by("pk")[:batch_size])
        if not pending:
            return done
        done += memory_reembed_batch(memories=pending, reason="embedded after the provider recovered")
        if len(pending) < batch_size:
            return done


# --- reconciliation of extracted candidates -------------------------------------------------------------------


@dataclass(frozen=True)
class Decision:
    """What reconciliation did with one extracted candidate: ADD, UPDATE (superseding `memory`'s predecessor) or
    NOOP (`memory` is the existing one that already says it)."""

    action: str
    memory: Memory
    reason: str


def _numbers(text: str) -> list[str]:
    """The figures in a text: sentence embeddings barely see them ("code 1234" ~ "code 5678" at cosine 0.97),
    so near-identical texts whose figures differ are different facts, not duplicates."""
    return re.findall(r"\d+(?:[.,:]\d+)*", text)


def _similar(owner, project, vector, limit: int = 5) -> list[tuple[Memory, float]]:
    queryset = Memory.objects.owned_by(owner).active().in_scope(project) if project else (
        Memory.objects.owned_by(owner).active().filter(project__isnull=True)
    )
    return [(m, 1.0 - m.distance) for m in queryset.nearest(vector)[:limit]]


def memories_reconcile(*, owner, candidates, project=None, reason: str, conversation=None, message=None,
                       source_ref: dict | None = None, source: str = Memory.Source.EXTRACTED,
                       llm_decide=None, vectors: list[list[float] | None] | None = None,
                       happened_at=None) -> list[Decision]:
    """Fold extracted candidates into the owner's memories, one by one (a later candidate sees an earlier one):
    near-identical to a live memory (cosine >= MEMORY_DUPLICATE_THRESHOLD) -> NOOP, the existing memory's
    confidence and accessed_at refreshed; same subject and attribute with new content -> UPDATE, a new memory
    superseding the old; otherwise ADD. `llm_decide(candidate, similar)` -> (action, target_id, why), when given,
    chooses instead of the rules (after the near-identical check). Each decision is in the history reason.
    `vectors`: the candidates' embeddings from the configured model, when the caller already has them (callers
    inside a transaction embed first: `embed_or_pending`). `happened_at`: when what they say was said."""
    if not candidates:
        return []
    if vectors is None:
        vectors, model_name = embed_or_pending([c.content for c in candidates])
    else:
        model_name = settings.EMBEDDING_MODEL
    decisions = []
    with transaction.atomic():
        for candidate, vector in zip(candidates, vectors, strict=True):
            scope = project if candidate.scope == "project" else None
            similar = _similar(owner, scope, vector) if vector is not None else []
            action, target, why = "ADD", None, "new information"
            if (similar and similar[0][1] >= settings.MEMORY_DUPLICATE_THRESHOLD
                    and _numbers(similar[0][0].content) == _numbers(candidate.content)):
                action, target, why = "NOOP", similar[0][0], f"already known (cosine {similar[0][1]:.2f})"
            elif llm_decide is not None:
                action, target_id, why = llm_decide(candidate, [(str(m.pk), m.content) for m, _ in similar])
                target = next((m for m, _ in similar if str(m.pk) == target_id), None)
                if action != "ADD" and target is None:
                    action = "ADD"
            elif getattr(candidate, "attribute", ""):
                target = (Memory.objects.owned_by(owner).active().in_scope(scope)
                          .filter(subject__iexact=candidate.subject, metadata__attribute=candidate.attribute)
                          .order_by("-created_at").first())
                if target is not None:
                    action, why = "UPDATE", f"same subject and attribute ({candidate.attribute}) with new content"
            decisions.append(_decide(owner, candidate, vector, model_name, action, target, why, scope=scope,
                                     reason=reason, conversation=conversation, message=message,
                                     source_ref=source_ref or {}, source=source, happened_at=happened_at))
    return decisions


def _decide(owner, candidate, vector, model_name, action, target, why, *, scope, reason, conversation, message,
            source_ref, source, happened_at) -> Decision:
    note = f"{reason}: {action} ({why})"
    if action == "NOOP":
        memory = Memory.objects.select_for_update().get(pk=target.pk)
        memory.confidence = min(1.0, max(memory.confidence, 0.5) + 0.1)
        memory.accessed_at = timezone.now()
        memory.version += 1
        _save(memory, action=Action.UPDATE, reason=note)
        return Decision("NOOP", memory, note)
    item = _prepare({
        "content": candidate.content, "category": candidate.category, "subject": candidate.subject,
        "tags": list(candidate.tags), "entities": dict(candidate.entities), "importance": candidate.importance,
        "metadata": {"attribute": candidate.attribute} if getattr(candidate, "attribute", "") else {},
        "project": scope, "conversation": conversation, "message": message, "source_ref": source_ref,
        "source": Memory.Source.EXPLICIT if getattr(candidate, "explicit", False) else source,
        "supersedes": target.pk if action == "UPDATE" else None, "happened_at": happened_at,
    })
    write = _write_one(owner=owner, item=item, vector=vector, model_name=model_name, duplicate=None, actor=None,
                       reason=note)
    return Decision(action, write.memory, note)
