"""Writes to memories and projects. Each function is one transaction; embeddings are computed before it opens."""

import logging
import uuid
from typing import Any

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from integrations import embeddings
from memories.models import HistoryAction, Memory, Project

logger = logging.getLogger(__name__)

# Fields a client may set on a memory; everything else is managed here.
WRITABLE_FIELDS = (
    "project", "agent_id", "namespace", "key", "content", "metadata", "tags", "entities", "category", "subject",
    "importance", "confidence", "source", "source_ref", "links", "happened_at", "expires_at", "conversation",
    "message",
)


def validate_content(content: str) -> None:
    if not content or not content.strip():
        raise ValidationError({"content": ["Content may not be blank."]})
    tokens = embeddings.count_tokens(content)
    if tokens > settings.MEMORY_MAX_TOKENS:
        raise ValidationError(
            {"content": [f"Content is {tokens} tokens long; the limit is {settings.MEMORY_MAX_TOKENS}."]}
        )


def validate_namespace(namespace: list[str]) -> None:
    if not isinstance(namespace, list) or not namespace or any(
        not isinstance(part, str) or not part.strip() for part in namespace
    ):
        raise ValidationError({"namespace": ["Namespace must be a non-empty list of non-empty strings."]})


def _check_ownership(memory: Memory) -> None:
    """Related objects must belong to the memory's owner: a user cannot attach to someone else's data."""
    for field in ("project", "conversation", "message"):
        related = getattr(memory, field)
        if related is not None and related.owner_id != memory.owner_id:
            raise ValidationError({field: [f"Unknown {field}."]})


def _embed(content: str) -> tuple[list[float] | None, str]:
    """The content's embedding and model name, or (None, '') when the provider is down: stored as pending."""
    try:
        return embeddings.embed_text(content), settings.EMBEDDING_MODEL
    except embeddings.EmbeddingError:
        logger.warning("embedding provider unavailable; memory stored with its embedding pending", exc_info=True)
        return None, ""


def _save(memory: Memory, *, action: str, reason: str, actor=None) -> Memory:
    memory._history_action = action
    memory._change_reason = reason
    if actor is not None:
        memory._history_user = actor
    memory.full_clean(exclude=["search_vector"])
    memory.save()
    return memory


def project_create(*, owner, name: str, description: str = "") -> Project:
    project = Project(owner=owner, name=name, description=description)
    with transaction.atomic():
        project.full_clean()
        project.save()
    return project


def project_update(*, project: Project, data: dict[str, Any]) -> Project:
    for field in ("name", "description"):
        if field in data:
            setattr(project, field, data[field])
    with transaction.atomic():
        project.full_clean()
        project.save()
    return project


def memory_create(*, owner, content: str, actor=None, reason: str = "created", **fields: Any) -> Memory:
    """Store a new memory, or update the live one with the same (namespace, key): last write wins."""
    validate_content(content)
    namespace = fields.pop("namespace", None) or ["memories"]
    validate_namespace(namespace)
    key = fields.pop("key", None) or str(uuid.uuid4())
    vector, model_name = _embed(content)
    with transaction.atomic():
        existing = (
            Memory.objects.owned_by(owner).select_for_update()
            .filter(namespace=namespace, key=key, is_active=True).first()
        )
        if existing is not None:
            return _apply_update(existing, {"content": content, **fields}, vector, model_name, actor=actor,
                                 reason=f"upsert of key {key!r}")
        memory = Memory(owner=owner, namespace=namespace, key=key, content=content, embedding=vector,
                        embedding_model=model_name, **fields)
        _check_ownership(memory)
        return _save(memory, action=HistoryAction.Action.CREATE, reason=reason, actor=actor)


def _apply_update(memory: Memory, data: dict[str, Any], vector, model_name: str, *, actor, reason: str) -> Memory:
    for field, value in data.items():
        if field not in WRITABLE_FIELDS:
            raise ValidationError({field: ["This field cannot be changed."]})
        setattr(memory, field, value)
    if vector is not None or "content" in data:
        memory.embedding = vector
        memory.embedding_model = model_name
    memory.version += 1
    _check_ownership(memory)
    return _save(memory, action=HistoryAction.Action.UPDATE, reason=reason, actor=actor)


def memory_update(*, memory: Memory, data: dict[str, Any], actor=None, reason: str = "updated") -> Memory:
    if "content" in data:
        validate_content(data["content"])
    if "namespace" in data:
        validate_namespace(data["namespace"])
    vector, model_name = (None, "")
    if "content" in data and data["content"] != memory.content:
        vector, model_name = _embed(data["content"])
    else:
        data = {k: v for k, v in data.items() if k != "content"}
    with transaction.atomic():
        locked = Memory.objects.select_for_update().get(pk=memory.pk)
        return _apply_update(locked, data, vector, model_name, actor=actor, reason=reason)


def memory_soft_delete(*, memory: Memory, actor=None, reason: str = "deleted") -> Memory:
    with transaction.atomic():
        locked = Memory.objects.select_for_update().get(pk=memory.pk)
        if not locked.is_active:
            return locked
        locked.is_active = False
        locked.version += 1
        return _save(locked, action=HistoryAction.Action.DELETE, reason=reason, actor=actor)


def memory_restore(*, memory: Memory, actor=None, reason: str = "restored") -> Memory:
    with transaction.atomic():
        locked = Memory.objects.select_for_update().get(pk=memory.pk)
        if locked.is_active:
            return locked
        clash = Memory.objects.filter(
            owner_id=locked.owner_id, namespace=locked.namespace, key=locked.key, is_active=True
        ).exists()
        if clash:
            raise ValidationError({"key": [f"A live memory already uses key {locked.key!r} in this namespace."]})
        locked.is_active = True
        locked.version += 1
        return _save(locked, action=HistoryAction.Action.RESTORE, reason=reason, actor=actor)


def memory_reembed_batch(*, memories: list[Memory], reason: str = "re-embedded") -> int:
    """Give these memories fresh embeddings from the configured model, with one history row each."""
    from simple_history.utils import bulk_update_with_history

    vectors = embeddings.embed_texts([m.content for m in memories])
    for memory, vector in zip(memories, vectors, strict=True):
        memory.embedding = vector
        memory.embedding_model = settings.EMBEDDING_MODEL
        memory.updated_at = timezone.now()
    with transaction.atomic():
        bulk_update_with_history(
            memories, Memory, ["embedding", "embedding_model", "updated_at"], default_change_reason=reason
        )
    return len(memories)
