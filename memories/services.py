"""Writes to one memory at a time, and to projects. Each function is one transaction; embeddings are computed
before it opens (memories.vectors), so a slow embedding call never holds locks. Batches, re-embedding and the
periodic sweeps are in memories.batch, reconciliation of extracted candidates in memories.reconcile, import and
export in memories.portability."""

import logging
import uuid
from collections.abc import Iterable
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import IntegrityError, connection, transaction
from django.utils import timezone
from simple_history.utils import bulk_create_with_history

from core import events, rls
from core.text import namespace_problem, nfc, nfc_path
from integrations import embeddings
from memories.models import HistoryAction, Memory, MemoryEvent, Project, SearchDay
from memories.supersession import link_past, link_supersession, resolve_supersedes, undo_supersession, valid_from_of
from memories.vectors import duplicates_for, embed_indexed, embed_or_pending
from memories.versions import save_version

logger = logging.getLogger(__name__)
Action = HistoryAction.Action

# Fields a client may set on a memory; everything else is managed here.
WRITABLE_FIELDS = (
    "project", "agent_id", "namespace", "key", "content", "metadata", "tags", "entities", "category", "subject",
    "importance", "confidence", "source", "source_ref", "links", "happened_at", "expires_at", "conversation",
    "message", "value", "ttl_minutes", "indexed", "valid_from",
)
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
    problem = namespace_problem(namespace)
    if problem:
        raise ValidationError({"namespace": [problem]})


RELATED_FIELDS = ("project", "conversation", "message")  # the owner's own objects a memory may point to


def _check_ownership(memory: Memory) -> None:
    """Related objects must belong to the memory's owner: a user cannot attach to someone else's data; a token
    bound to a project or agent writes there (rls.fit_to_scope)."""
    for name in RELATED_FIELDS:
        related = getattr(memory, name)
        if related is not None and related.owner_id != memory.owner_id:
            raise ValidationError({name: [f"Unknown {name}."]})
    rls.fit_to_scope(memory)


# --- saving ---------------------------------------------------------------------------------------------------


def _apply(memory: Memory, data: dict[str, Any]) -> None:
    for name, value in data.items():
        if name not in WRITABLE_FIELDS:
            raise ValidationError({name: ["This field cannot be changed."]})
        setattr(memory, name, value)


def write_one(*, owner, item: dict[str, Any], vector, model_name: str, duplicate: Memory | None, actor,
               reason: str) -> MemoryWrite:
    """Create or upsert one prepared item inside the caller's transaction."""
    item = dict(item)
    supersedes = item.pop("supersedes", None)
    past_of = item.pop("past_of", None)
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
            old = resolve_supersedes(owner, supersedes, existing.pk)
            existing.supersedes = old
        save_version(existing, action=Action.UPDATE, reason=f"{reason}: upsert of key {existing.key!r}", actor=actor)
        if supersedes is not None:
            link_supersession(existing, old, actor=actor)
        return MemoryWrite(existing, "updated")
    if duplicate is not None and supersedes is None and past_of is None:
        return MemoryWrite(_keyed(duplicate, item, actor=actor, reason=reason), "duplicate")
    item["valid_from"] = valid_from_of(item)
    memory = Memory(owner=owner, embedding=vector, embedding_model=model_name if vector is not None else "", **item)
    _check_ownership(memory)
    old = resolve_supersedes(owner, supersedes, memory.pk) if supersedes is not None else None
    memory.supersedes = old
    if old is not None and memory.source == Memory.Source.EXPLICIT and "source" not in item:
        memory.source = Memory.Source.UPDATED
    save_version(memory, action=Action.CREATE, reason=reason if old is None else f"{reason}; supersedes {old.pk}",
                 actor=actor)
    if old is not None:
        link_supersession(memory, old, actor=actor, reason=f"{reason}; superseded by {memory.pk}")
    if past_of is not None:
        current = Memory.objects.owned_by(owner).select_for_update().get(pk=getattr(past_of, "pk", past_of))
        link_past(memory, current, actor=actor, reason=reason)
    return MemoryWrite(memory, "created")


def _made_up(key: str) -> bool:
    try:
        uuid.UUID(key)
    except ValueError:
        return False
    return True


def _keyed(duplicate: Memory, item: dict[str, Any], *, actor, reason: str) -> Memory:
    """A write with a key of its own choosing that meets a near-identical memory: that memory takes the key when
    its own was made up (a UUID), so the client can address it by the key it chose; a memory whose key was chosen
    keeps it (the answer's `key` says which)."""
    if _made_up(item["key"]) or not _made_up(duplicate.key):
        return duplicate
    locked = Memory.objects.select_for_update().get(pk=duplicate.pk)
    locked.key, locked.namespace = item["key"], item["namespace"]
    locked.version += 1
    save_version(locked, action=Action.UPDATE, reason=f"{reason}: near-identical memory takes key {item['key']!r}",
                 actor=actor)
    duplicate.key, duplicate.namespace, duplicate.version = locked.key, locked.namespace, locked.version
    return duplicate


def identity(item: dict[str, Any]) -> dict[str, Any]:
    """The item with namespace labels and key in NFC: two spellings of one name are one memory."""
    return {**item, **{name: normal(item[name]) for name, normal in (("namespace", nfc_path), ("key", nfc))
                       if name in item}}


def prepare_item(item: dict[str, Any]) -> dict[str, Any]:
    item = identity(item)
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
    item = prepare_item({"content": content, "allow_duplicate": allow_duplicate, **fields})
    vectors, model_name = embed_indexed([item])
    with atomic_writes():
        return write_prepared(owner, [item], vectors, model_name, actor=actor, reason=reason)[0]


@contextmanager
def atomic_writes():
    """One transaction for writes of new memories; a clash with stored ones (a key taken meanwhile) is the
    caller's input error, not a server error."""
    try:
        with transaction.atomic():
            yield
    except IntegrityError as exc:
        raise ValidationError({"items": [f"The batch conflicts with stored memories: {exc}"]}) from exc


def write_prepared(owner, prepared, vectors, model_name, *, actor, reason) -> list[MemoryWrite]:
    """Write items checked by `prepare_item`, inside the caller's transaction: plain new memories go in with one
    bulk INSERT (plus one for their history rows); upserts, supersessions and keys repeated within the items take
    the one-by-one path (`write_one`) afterwards, in order."""
    live = {
        (tuple(m.namespace), m.key)
        for m in Memory.objects.owned_by(owner).filter(is_active=True, key__in=[i["key"] for i in prepared])
        .only("namespace", "key")
    }
    duplicates = duplicates_for(owner, prepared, vectors)
    results: list[MemoryWrite | None] = [None] * len(prepared)
    fresh, slow, seen = [], [], set()
    vectors = [vector if item.get("indexed", True) else None for item, vector in zip(prepared, vectors, strict=True)]
    for index, (item, vector, duplicate) in enumerate(zip(prepared, vectors, duplicates, strict=True)):
        identity = (tuple(item["namespace"]), item["key"])
        if identity in live or identity in seen or item.get("supersedes") is not None or item.get("past_of"):
            slow.append(index)
        elif duplicate is not None:
            results[index] = MemoryWrite(_keyed(duplicate, item, actor=actor, reason=reason), "duplicate")
        else:
            fields = {k: v for k, v in item.items() if k != "allow_duplicate"}
            fields["valid_from"] = valid_from_of(fields)
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
        events.emit_many(events.MEMORY_CREATED, owner_id=owner.pk,
                         payloads=[events.memory_payload(memory) for _, memory in fresh])
    for index in slow:
        results[index] = write_one(owner=owner, item=prepared[index], vector=vectors[index],
                                    model_name=model_name, duplicate=duplicates[index], actor=actor, reason=reason)
    return results


def memory_update(*, memory: Memory, data: dict[str, Any], actor=None, reason: str = "updated") -> Memory:
    data = identity(data)
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
        return save_version(locked, action=Action.UPDATE, reason=reason, actor=actor)


def memory_soft_delete(*, memory: Memory, actor=None, reason: str = "deleted") -> Memory:
    with transaction.atomic():
        locked = Memory.objects.select_for_update().get(pk=memory.pk)
        if not locked.is_active:
            return locked
        locked.is_active = False
        locked.version += 1
        return save_version(locked, action=Action.DELETE, reason=reason, actor=actor)


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
        return save_version(locked, action=Action.RESTORE, reason=reason, actor=actor)


def memory_revert(*, memory: Memory, history_id: int | None = None, version: int | None = None, actor=None,
                  reason: str = "") -> Memory:
    """Make a new version whose content and attributes equal an earlier version's. Reverting a superseded memory
    to a version from before its supersession undoes it: the memory is current again (`valid_to` empty) and its
    successor no longer replaces it (recorded in the successor's history too)."""
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
        if record.superseded_by_id is None and locked.superseded_by_id is not None:
            undo_supersession(locked, actor=actor)
        if not locked.indexed:
            locked.embedding, locked.embedding_model = None, ""
        elif content_changed:
            locked.embedding, locked.embedding_model = vector[0], model_name
        if locked.is_active and _key_clash(locked):
            raise ValidationError({"key": [f"A live memory already uses key {locked.key!r} in this namespace."]})
        locked.version += 1
        return save_version(locked, action=Action.REVERT, reason=reason or f"reverted to version {record.version}",
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
            save_version(neighbour, action=Action.UPDATE, reason="a linked memory was forgotten", actor=actor)
        memory_id = locked.pk
        locked.delete()
        Memory.history.filter(id=memory_id).delete()
        events.emit(events.MEMORY_FORGOTTEN, owner_id=locked.owner_id, payload={"id": str(memory_id)})


def memories_touch(*, memory_ids: Iterable, owner_id: int, action: str, query: str = "") -> None:
    """Mark memories as just returned by a read or search: `accessed_at` set (it is not versioned, so no history
    is skipped) and, unless MEMORY_LOG_READS is off, an event per memory, in one statement: every read and search
    pays for this, and one statement is one round trip where a transaction with two would be four."""
    ids = list(memory_ids)
    if action == MemoryEvent.Action.SEARCH:
        search_day_count(owner_id=owner_id)
    if not ids:
        return
    if not settings.MEMORY_LOG_READS:
        Memory.objects.filter(owner_id=owner_id, pk__in=ids).update(accessed_at=timezone.now())
        return
    with connection.cursor() as cursor:
        cursor.execute(
            f"WITH touched AS (UPDATE {Memory._meta.db_table} SET accessed_at = %(now)s"
            f" WHERE owner_id = %(owner)s AND id = ANY(%(ids)s::uuid[]) RETURNING id)"
            f" INSERT INTO {MemoryEvent._meta.db_table} (owner_id, memory_id, action, query, at)"
            f" SELECT %(owner)s, id, %(action)s, %(query)s, %(now)s FROM touched",
            {"now": timezone.now(), "owner": owner_id, "ids": [str(pk) for pk in ids], "action": action,
             "query": query[:1000]},
        )


def search_day_count(*, owner_id: int) -> None:
    """One more search today (UTC) for the owner's activity chart: one upsert."""
    with connection.cursor() as cursor:
        cursor.execute(
            f"INSERT INTO {SearchDay._meta.db_table} (owner_id, day, searches) VALUES (%s, (now() AT TIME ZONE 'UTC')"
            f"::date, 1) ON CONFLICT (owner_id, day) DO UPDATE SET searches = {SearchDay._meta.db_table}.searches + 1",
            [owner_id])


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
