"""Memories in and out of Memento: the export format (JSON Lines, each memory with all its versions) and the
import that reads it back."""

import json
import math
import uuid
from datetime import datetime
from typing import Any

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import DataError, IntegrityError, connection, transaction
from django.utils.crypto import constant_time_compare, salted_hmac
from django.utils.dateparse import parse_datetime

from core.text import unstorable
from core.times import unreadable
from memories.models import MAX_TTL_MINUTES, Memory, Project
from memories.services import identity, project_create, validate_content, validate_namespace
from memories.vectors import embed_indexed

EXPORT_FORMAT = "memento.memory/1"
EXPORT_FIELDS = (
    "id", "agent_id", "namespace", "key", "content", "metadata", "tags", "entities", "category", "subject",
    "importance", "confidence", "source", "source_ref", "links", "version", "supersedes", "superseded_by",
    "is_active", "created_at", "updated_at", "happened_at", "valid_from", "valid_to", "expires_at", "conversation",
    "message", "embedding_model", "value", "ttl_minutes", "indexed",
)
VERSION_FIELDS = (
    "agent_id", "namespace", "key", "content", "metadata", "tags", "entities", "category", "subject", "importance",
    "confidence", "source", "source_ref", "links", "version", "supersedes", "superseded_by", "is_active",
    "created_at", "updated_at", "happened_at", "valid_from", "valid_to", "expires_at", "embedding_model", "value",
    "ttl_minutes", "indexed",
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


def _signature(owner, memory_id: str) -> str:
    """Proof that `memory_id` was exported from `owner`'s account (an HMAC with the secret key): an import keeps
    only such ids."""
    return salted_hmac("memento.memories.export-id", f"{owner.pk}:{memory_id}", algorithm="sha256").hexdigest()


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
                    "signature": _signature(owner, str(memory.pk)), "versions": versions.get(memory.pk, [])}
            yield json.dumps(line, ensure_ascii=False, sort_keys=True) + "\n"
        last = memories[-1].pk


# --- import ---------------------------------------------------------------------------------------------------
#
# Which id an imported memory gets must not depend on other users' data, or the answer would tell whether some
# id exists in another account. A line's id is kept only when its signature shows the owner exported it;
# every other id X becomes uuid5(HMAC(owner, X)): new, the same on every import of the file (so importing twice
# still skips), whether or not X exists anywhere.

COPIED = ("agent_id", "namespace", "key", "content", "metadata", "tags", "entities", "category", "subject",
          "importance", "confidence", "source", "source_ref", "links", "version", "is_active", "value",
          "ttl_minutes", "indexed")
TIMES = ("created_at", "updated_at", "happened_at", "valid_from", "valid_to", "expires_at")
OBJECTS = ("metadata", "entities", "source_ref", "links")  # JSON objects (value may also be null)
TEXTS = ("agent_id", "key", "content", "category", "subject", "source")
NUMBERS = ("importance", "confidence", "ttl_minutes")
LINKS = ("supersedes", "superseded_by", "conversation", "message")  # checked here, not one query a row


def _fail(line: int, field: str, message: str) -> ValidationError:
    return ValidationError({"records": [f"line {line}: {field}: {message}"]})


def _parse_time(value, field: str, line: int):
    if value in (None, ""):
        return None
    try:
        parsed = parse_datetime(value) if isinstance(value, str) and len(value) <= 64 else None
    except ValueError:  # well formed, but no such date (month 13)
        parsed = None
    if parsed is None:
        raise _fail(line, field, "not an ISO 8601 date-time.")
    problem = unreadable(parsed)
    if problem:
        raise _fail(line, field, problem)
    return parsed


def _uuid(value, field: str, line: int, *, required: bool = False) -> uuid.UUID | None:
    if value is None and not required:
        return None
    try:
        if isinstance(value, str) and len(value) <= 64:
            return uuid.UUID(value)
    except ValueError:
        pass
    raise _fail(line, field, "must be a UUID." if required else "must be a UUID or null.")


def _check_shape(line: int, fields: dict[str, Any], prefix: str = "") -> None:
    """JSON types the model would otherwise coerce or the database refuse (a 500): a number where text belongs,
    an array where an object does, NaN, a TTL PostgreSQL cannot add to a date."""
    def fail(name, message):
        return _fail(line, prefix + name, message)

    for name, value in fields.items():
        if value is None and name not in ("key", "content", "namespace"):
            continue
        if name in TEXTS and not isinstance(value, str):
            raise fail(name, "must be a string.")
        if name in OBJECTS and not isinstance(value, dict):
            raise fail(name, "must be a JSON object.")
        if name == "value" and not isinstance(value, dict):
            raise fail(name, "must be a JSON object or null.")
        if name in ("tags", "namespace") and (
                not isinstance(value, list) or not all(isinstance(t, str) for t in value)):
            raise fail(name, "must be a list of strings.")
        if name in ("is_active", "indexed") and not isinstance(value, bool):
            raise fail(name, "must be true or false.")
        if name == "version" and (isinstance(value, bool) or not isinstance(value, int)):
            raise fail(name, "must be an integer.")
        if name in NUMBERS and (isinstance(value, bool) or not isinstance(value, int | float)
                                or not math.isfinite(value)):
            raise fail(name, "must be a number.")
    ttl = fields.get("ttl_minutes")
    if ttl is not None and not 0 < ttl <= MAX_TTL_MINUTES:
        raise fail("ttl_minutes", f"must be more than 0 and at most {MAX_TTL_MINUTES}.")


def _checked(line: int, record: Any) -> dict[str, Any]:
    """One line's fields, each of a type it can be stored as; ValidationError naming line and field."""
    if not isinstance(record, dict):
        raise ValidationError({"records": [f"line {line}: must be a JSON object."]})
    if record.get("format") != EXPORT_FORMAT:
        raise ValidationError({"records": [f"line {line}: format must be {EXPORT_FORMAT!r}."]})
    for name, value in record.items():
        problem = unstorable(name) or unstorable(value)
        if problem:
            raise _fail(line, "a field name" if unstorable(name) else name[:100], problem)
    _uuid(record.get("id"), "id", line, required=True)
    try:
        validate_content(record.get("content"))
        validate_namespace(record.get("namespace"))
    except ValidationError as exc:
        raise ValidationError({"records": [f"line {line}: {f}: {' '.join(m)}"
                                           for f, m in exc.message_dict.items()]}) from None
    fields = identity({name: record[name] for name in COPIED if name in record})
    _check_shape(line, fields)
    for name in LINKS:
        _uuid(record.get(name), name, line)
    if record.get("project") is not None and not isinstance(record["project"], str):
        raise _fail(line, "project", "must be a project name or null.")
    versions = record.get("versions") or []
    if not isinstance(versions, list) or not all(isinstance(v, dict) for v in versions):
        raise _fail(line, "versions", "must be a list of objects.")
    for number, version in enumerate(versions):
        _check_shape(line, {k: v for k, v in version.items() if k in COPIED}, prefix=f"versions[{number}].")
        for name in ("supersedes", "superseded_by"):
            _uuid(version.get(name), f"versions[{number}].{name}", line)
        if not isinstance(version.get("type", "~"), str) or not isinstance(version.get("action", ""), str) \
                or not isinstance(version.get("reason") or "", str):
            raise _fail(line, f"versions[{number}]", "type, action and reason must be strings.")
    times = {n: _parse_time(record[n], n, line) for n in TIMES if record.get(n) not in (None, "")}
    return {"fields": fields, "times": times,
            "versions": [({n: v[n] for n in VERSION_FIELDS if n in v and n not in (*LINKS, *TIMES)},
                          {n: _parse_time(v[n], f"versions[{i}].{n}", line) for n in (*TIMES, "at")
                           if v.get(n) not in (None, "")})
                         for i, v in enumerate(versions)]}


def _target_id(owner, record: dict[str, Any]) -> uuid.UUID:
    """The id this line's memory gets in the owner's account (see above)."""
    given = str(record["id"])
    signature = record.get("signature")
    if isinstance(signature, str) and constant_time_compare(signature, _signature(owner, given)):
        return uuid.UUID(given)
    return _derived_id(owner, given)


def _derived_id(owner, given: str) -> uuid.UUID:
    return uuid.uuid5(uuid.NAMESPACE_URL, _signature(owner, f"import:{given}"))


def _owned_link_targets(owner, names) -> list[set[str]]:
    """For each of Memory's foreign keys `names`, the ids (as text) of the owner's rows it may point to. The
    target models come from the field (memories imports nothing from the apps those rows belong to)."""
    return [
        {str(pk) for pk in Memory._meta.get_field(name).related_model.objects.filter(owner=owner)
         .values_list("pk", flat=True)}
        for name in names
    ]


def memory_import(*, owner, records: list[dict[str, Any]], actor=None) -> dict[str, int]:
    """Load memories in the export format, with their versions, all or nothing; a bad line is a 400 naming the
    line and the field. A memory the owner already has is skipped, so importing a file twice changes nothing;
    links between imported memories follow their ids. Embeddings are recomputed."""
    if not isinstance(records, list) or len(records) > settings.MEMORY_IMPORT_MAX:
        raise ValidationError({"records": [f"A list of at most {settings.MEMORY_IMPORT_MAX} memories per import."]})
    checked = [_checked(line, record) for line, record in enumerate(records, start=1)]
    remap: dict[str, uuid.UUID] = {}
    for line, record in enumerate(records, start=1):
        if str(record["id"]) in remap:
            raise _fail(line, "id", "appears on an earlier line too.")
        remap[str(record["id"])] = _target_id(owner, record)
    targets = list(remap.values())
    mine = set(Memory.objects.owned_by(owner).filter(pk__in=targets).values_list("pk", flat=True))
    with connection.cursor() as cursor:  # only ids the owner exported can be taken: by nobody, in practice
        cursor.execute("SELECT memento_taken_memory_ids(%s::uuid[])", [targets])
        taken = {row[0] for row in cursor.fetchall()} - mine
    remap = {given: (_derived_id(owner, given) if pk in taken else pk) for given, pk in remap.items()}
    todo = [(line, r, c) for line, (r, c) in enumerate(zip(records, checked, strict=True), start=1)
            if remap[str(r["id"])] not in mine]
    vectors, model_name = embed_indexed([c["fields"] for _, _, c in todo])
    owned_ids = set(Memory.objects.owned_by(owner).values_list("pk", flat=True))
    conversations, messages = _owned_link_targets(owner, ("conversation", "message"))

    def link(value):
        if value is None:
            return None
        target = remap.get(str(value))
        return target if target is not None or uuid.UUID(str(value)) in owned_ids else None

    with transaction.atomic():
        projects: dict[str, Project] = {}

        def project_for(name, line):
            if not name:
                return None
            if name not in projects:
                try:
                    projects[name] = (Project.objects.filter(owner=owner, name=name).first()
                                      or project_create(owner=owner, name=name))
                except ValidationError as exc:
                    raise _fail(line, "project", " ".join(m for ms in exc.message_dict.values() for m in ms)) \
                        from None
            return projects[name]

        memories, versions = [], []
        for (line, record, check), vector in zip(todo, vectors, strict=True):
            memory = Memory(
                id=remap[str(record["id"])], owner=owner, project=project_for(record.get("project"), line),
                embedding=vector, embedding_model=model_name if vector is not None else "",
                supersedes_id=link(record.get("supersedes")), superseded_by_id=link(record.get("superseded_by")),
                conversation_id=record.get("conversation") if record.get("conversation") in conversations else None,
                message_id=record.get("message") if record.get("message") in messages else None,
                **check["fields"], **check["times"],
            )
            if "valid_from" not in check["times"]:  # a file from before valid time: the event time, else stored
                memory.valid_from = memory.happened_at or memory.created_at
            _clean(memory, line, exclude=["search_vector", "embedding", "owner", *LINKS, "project"])
            memories.append(memory)
            for (snapshot, times), raw in zip(check["versions"], record.get("versions") or [], strict=True):
                version = Memory.history.model(
                    id=memory.pk, owner_id=owner.pk, project_id=memory.project_id,
                    supersedes_id=link(raw.get("supersedes")), superseded_by_id=link(raw.get("superseded_by")),
                    history_date=times.pop("at", None) or memory.updated_at, history_type=raw.get("type", "~"),
                    history_action=raw.get("action", ""), history_change_reason=raw.get("reason"),
                    history_user=actor if actor and raw.get("actor") == actor.get_username() else None,
                    **identity(snapshot), **times,
                )
                _clean(version, line, exclude=["owner", *LINKS, "project", "history_user", "id", "history_id"])
                versions.append(version)
        try:
            with transaction.atomic():
                # the versions come from the file itself, so the rows go in without new history of their own
                Memory.objects.bulk_create(memories, batch_size=500)
                Memory.history.model.objects.bulk_create(versions, batch_size=500)
        except (IntegrityError, DataError):
            raise ValidationError({"records": [
                "The import conflicts with stored memories (a key already used by a live memory, or a memory "
                "that supersedes itself)."]}) from None
    return {"imported": len(memories), "skipped": len(records) - len(todo), "versions": len(versions)}


def _clean(row, line: int, exclude: list[str]) -> None:
    """The model's own field checks (lengths, choices, ranges), reported with the line."""
    try:
        row.clean_fields(exclude=exclude)
    except ValidationError as exc:
        raise ValidationError({"records": [f"line {line}: {f}: {' '.join(m)}"
                                           for f, m in exc.message_dict.items()]}) from None
