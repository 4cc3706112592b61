"""Memories in and out of Memento: the export format (JSON Lines, each memory with all its versions) and the
import that reads it back."""

import json
import uuid
from datetime import datetime
from typing import Any

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import IntegrityError, connection, transaction
from django.utils.dateparse import parse_datetime

from memories.models import Memory, Project
from memories.services import project_create, validate_content, validate_namespace
from memories.vectors import embed_indexed

EXPORT_FORMAT = "memento.memory/1"
EXPORT_FIELDS = (
    "id", "agent_id", "namespace", "key", "content", "metadata", "tags", "entities", "category", "subject",
    "importance", "confidence", "source", "source_ref", "links", "version", "supersedes", "superseded_by",
    "is_active", "created_at", "updated_at", "happened_at", "expires_at", "conversation", "message",
    "embedding_model", "value", "ttl_minutes", "indexed",
)
VERSION_FIELDS = (
    "agent_id", "namespace", "key", "content", "metadata", "tags", "entities", "category", "subject", "importance",
    "confidence", "source", "source_ref", "links", "version", "supersedes", "superseded_by", "is_active",
    "created_at", "updated_at", "happened_at", "expires_at", "embedding_model", "value", "ttl_minutes", "indexed",
)


def _plain(value):
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, uuid.UUID):
        return str(value)
    return value


def _value(obj, name: str):
    if name in ("supersedes", "superseded_by", "conversation", "message"):
        return _plain(getattr(obj, f"{name}_id"))
    return _plain(getattr(obj, name))


def memory_export_lines(*, owner, batch_size: int = 500):
    """Every memory of `owner` (inactive and superseded included) as JSON Lines, each with all its versions,
    oldest first. Streams in keyset-paginated batches."""
    last = None
    while True:
        page = Memory.objects.owned_by(owner).select_related("project").order_by("id")
        if last is not None:
            page = page.filter(id__gt=last)
        memories = list(page[:batch_size])
        if not memories:
            return
        versions: dict = {}
        records = (Memory.history.filter(id__in=[m.pk for m in memories]).select_related("history_user")
                   .order_by("history_date", "history_id"))
        for record in records:
            versions.setdefault(record.id, []).append({
                "at": record.history_date.isoformat(),
                "type": record.history_type,
                "action": record.history_action,
                "reason": record.history_change_reason,
                "actor": record.history_user.get_username() if record.history_user else None,
                "project": record.project.name if record.project_id and record.project else None,
                **{name: _value(record, name) for name in VERSION_FIELDS},
            })
        for memory in memories:
            line = {"format": EXPORT_FORMAT, **{name: _value(memory, name) for name in EXPORT_FIELDS},
                    "project": memory.project.name if memory.project else None,
                    "versions": versions.get(memory.pk, [])}
            yield json.dumps(line, ensure_ascii=False, sort_keys=True) + "\n"
        last = memories[-1].pk


# --- import ---------------------------------------------------------------------------------------------------


def _owned_link_targets(owner, names) -> list[set[str]]:
    """For each of Memory's foreign keys `names`, the ids (as text) of the owner's rows it may point to. The
    target models come from the field (memories imports nothing from the apps those rows belong to)."""
    return [
        {str(pk) for pk in Memory._meta.get_field(name).related_model.objects.filter(owner=owner)
         .values_list("pk", flat=True)}
        for name in names
    ]



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
    vectors, model_name = embed_indexed([r for _, r in todo])
    owned_ids = set(Memory.objects.owned_by(owner).values_list("pk", flat=True))
    conversations, messages = _owned_link_targets(owner, ("conversation", "message"))

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
