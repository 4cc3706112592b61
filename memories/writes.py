"""The write path every new or changed memory takes, inside its caller's transaction: the checks of an item
(content, namespace, ownership of what it points to), one item's create or upsert (`write_one`) and many at once
(`write_prepared`: one bulk INSERT for the plain ones). Used by the single writes (memories.services), batches
(memories.batch), reconciliation (memories.reconcile), reminders and imports."""

import uuid
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from simple_history.utils import bulk_create_with_history

from core import events, rls
from core.text import namespace_problem, nfc, nfc_path
from integrations import embeddings
from memories.models import HistoryAction, Memory
from memories.supersession import link_past, link_supersession, resolve_supersedes, valid_from_of
from memories.vectors import duplicates_for
from memories.versions import save_version

Action = HistoryAction.Action

# Fields a client may set on a memory; everything else is managed here.
WRITABLE_FIELDS = (
    "project", "agent_id", "namespace", "key", "content", "metadata", "tags", "entities", "category", "subject",
    "importance", "confidence", "source", "source_ref", "links", "happened_at", "expires_at", "conversation",
    "message", "value", "ttl_minutes", "indexed", "valid_from",
)


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
    if len(content) > settings.MEMORY_MAX_CHARS:  # before counting: a long "word" is one word piece
        raise ValidationError(
            {field: [f"Content is {len(content):,} characters long; the limit is {settings.MEMORY_MAX_CHARS:,}."]}
        )
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


def check_ownership(memory: Memory) -> None:
    """Related objects must belong to the memory's owner: a user cannot attach to someone else's data; a token
    bound to a project or agent writes there (rls.fit_to_scope)."""
    for name in RELATED_FIELDS:
        related = getattr(memory, name)
        if related is not None and related.owner_id != memory.owner_id:
            raise ValidationError({name: [f"Unknown {name}."]})
    rls.fit_to_scope(memory)


# --- saving ---------------------------------------------------------------------------------------------------


def apply_fields(memory: Memory, data: dict[str, Any]) -> None:
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
        apply_fields(existing, item)
        if not existing.indexed:
            existing.embedding, existing.embedding_model = None, ""
        elif content_changed or (existing.embedding is None and vector is not None):
            existing.embedding, existing.embedding_model = vector, model_name if vector is not None else ""
        existing.version += 1
        check_ownership(existing)
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
    check_ownership(memory)
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
            check_ownership(memory)
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
