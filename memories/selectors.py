"""Reads of memories that take more than one step: filtering by the API's filters, lists, chains, history.
Search is in memories.search, export in memories.portability."""

import functools
from dataclasses import dataclass, field
from datetime import datetime

from django.db import connection
from django.db.models import prefetch_related_objects

from core import rls
from core.text import nfc_path
from memories.models import Memory, MemoryQuerySet, Project


@dataclass(frozen=True)
class MemoryFilters:
    """What list and search may be narrowed by. `project=None` with `all_projects=False` is seed 004's rule:
    user-scoped memories only; a project gives user-scoped memories plus that project's."""

    project: Project | None = None
    all_projects: bool = False
    agent_id: str | None = None
    namespace: list[str] = field(default_factory=list)  # prefix
    tags: list[str] = field(default_factory=list)
    tags_mode: str = "any"  # any | all
    category: str | None = None
    subject: str | None = None
    source: str | None = None
    created_after: datetime | None = None
    created_before: datetime | None = None
    happened_after: datetime | None = None
    happened_before: datetime | None = None
    include_superseded: bool = False
    include_inactive: bool = False
    include_expired: bool = False
    as_of: datetime | None = None  # valid time: what was true then, superseded memories included


def filter_memories(queryset: MemoryQuerySet, filters: MemoryFilters) -> MemoryQuerySet:
    qs = queryset
    if not filters.include_inactive:
        qs = qs.filter(is_active=True)
    if filters.as_of is not None:
        qs = qs.valid_at(filters.as_of)
    elif not filters.include_superseded:
        qs = qs.filter(superseded_by__isnull=True)
    if not filters.include_expired:
        qs = qs.unexpired()
    if not filters.all_projects and rls.bound().project_id is None:
        qs = qs.in_scope(filters.project)  # a project-bound token's rows are its project's (owned_by): no rule left
    if filters.agent_id is not None:
        qs = qs.filter(agent_id=filters.agent_id)
    if filters.namespace:
        qs = qs.in_namespace(nfc_path(list(filters.namespace)))
    if filters.tags:
        qs = qs.filter(tags__contains=filters.tags) if filters.tags_mode == "all" else qs.filter(
            tags__overlap=filters.tags
        )
    for name in ("category", "subject", "source"):
        value = getattr(filters, name)
        if value is not None:
            qs = qs.filter(**{name: value})
    ranges = {
        "created_at__gte": filters.created_after,
        "created_at__lt": filters.created_before,
        "happened_at__gte": filters.happened_after,
        "happened_at__lt": filters.happened_before,
    }
    qs = qs.filter(**{lookup: value for lookup, value in ranges.items() if value is not None})
    return qs


@functools.cache
def _display_fields() -> tuple[list[str], list, str]:
    """What for_display() loads (no vector, no tsvector): the fields' attribute names, (position, converter) of
    those the database value needs converting for, and the statement that reads them by id."""
    fields = [f for f in Memory._meta.concrete_fields if f.name not in ("embedding", "search_vector")]
    columns = ", ".join(f'"{f.column}"' for f in fields)
    return ([f.attname for f in fields],
            [(i, f.from_db_value) for i, f in enumerate(fields) if hasattr(f, "from_db_value")],
            f"SELECT {columns}, embedding IS NOT NULL AS has_embedding FROM {Memory._meta.db_table} "
            f"WHERE owner_id = %s AND id = ANY(%s::uuid[])")


def memories_by_id(*, owner_id: int, ids: list) -> dict:
    """The owner's memories with these ids, by id, as for_display() loads them (no vector, no tsvector;
    `has_embedding` set) and with their projects. One fixed statement, and the models made from its rows directly:
    compiling the equivalent queryset cost more than the rest of a small owner's search, and a raw queryset's
    machinery half of what remained (bench/search_profile.py)."""
    if not ids:
        return {}
    names, converters, sql = _display_fields()
    with connection.cursor() as cursor:
        cursor.execute(sql, [owner_id, [str(pk) for pk in ids]])
        rows = cursor.fetchall()
    memories = []
    for row in rows:
        values = list(row[:-1])
        for i, convert in converters:
            values[i] = convert(values[i], None, connection)
        memory = Memory.from_db(connection.alias, names, values)
        memory.has_embedding = row[-1]
        memories.append(memory)
    prefetch_related_objects([m for m in memories if m.project_id], "project")
    return {m.pk: m for m in memories}


def memory_list(*, owner, filters: MemoryFilters) -> MemoryQuerySet:
    return filter_memories(Memory.objects.owned_by(owner), filters).select_related("project").for_display()


def memory_chain(*, memory: Memory) -> list[Memory]:
    """The supersession chain `memory` belongs to, oldest to newest (same owner only)."""
    owner_qs = Memory.objects.owned_by(memory.owner_id)
    oldest = memory
    seen = {oldest.pk}
    while oldest.supersedes_id and oldest.supersedes_id not in seen:
        previous = owner_qs.filter(pk=oldest.supersedes_id).first()
        if previous is None:
            break
        seen.add(previous.pk)
        oldest = previous
    chain = [oldest]
    seen = {oldest.pk}
    current = oldest
    while current.superseded_by_id and current.superseded_by_id not in seen:
        following = owner_qs.filter(pk=current.superseded_by_id).first()
        if following is None:
            break
        seen.add(following.pk)
        chain.append(following)
        current = following
    return chain


def memory_history(*, memory: Memory):
    """Versions of `memory`, newest first, with the fields each one changed."""
    records = list(memory.history.select_related("history_user").order_by("-history_date", "-history_id"))
    rows = []
    for index, record in enumerate(records):
        previous = records[index + 1] if index + 1 < len(records) else None
        changed = (
            sorted(change.field for change in record.diff_against(previous).changes) if previous else []
        )
        rows.append((record, changed))
    return rows
