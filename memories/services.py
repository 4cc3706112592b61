"""Writes to one memory at a time, and to projects. Each function is one transaction; embeddings are computed
before it opens (memories.vectors), so a slow embedding call never holds locks. The write path they share with
batches and reconciliation (checks, create or upsert) is memories.writes; batches, re-embedding and the periodic
sweeps are in memories.batch, reconciliation of extracted candidates in memories.reconcile, import and export in
memories.portability."""

from collections.abc import Iterable
from typing import Any

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import connection, transaction
from django.utils import timezone

from core import events
from memories.models import HistoryAction, Memory, MemoryEvent, Project, SearchDay
from memories.supersession import undo_supersession
from memories.vectors import embed_indexed, embed_or_pending
from memories.versions import save_version
from memories.writes import (
    WRITABLE_FIELDS,
    MemoryWrite,
    apply_fields,
    atomic_writes,
    check_ownership,
    identity,
    prepare_item,
    validate_content,
    validate_namespace,
    write_prepared,
)

Action = HistoryAction.Action

# What a revert copies back from a version.
REVERTIBLE_FIELDS = tuple(f for f in WRITABLE_FIELDS if f not in ("conversation", "message")) + ("is_active",)


def memory_create(*, owner, content: str, actor=None, reason: str = "created", allow_duplicate: bool = False,
                  **fields: Any) -> MemoryWrite:
    """Store a memory. Same (namespace, key) as a live memory: that memory is updated (last write wins).
    `supersedes=<id>`: the new memory replaces that one, linked both ways. A near-identical live memory in the
    same scope (cosine >= MEMORY_DUPLICATE_THRESHOLD): nothing is stored unless `allow_duplicate`."""
    item = prepare_item({"content": content, "allow_duplicate": allow_duplicate, **fields})
    vectors, model_name = embed_indexed([item])
    with atomic_writes():
        return write_prepared(owner, [item], vectors, model_name, actor=actor, reason=reason)[0]


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
        apply_fields(locked, data)
        if not locked.indexed:
            locked.embedding, locked.embedding_model = None, ""
        elif content_changed:
            locked.embedding, locked.embedding_model = vector[0], model_name
        locked.version += 1
        check_ownership(locked)
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
