"""Reconciliation: extracted candidate memories folded into the owner's memories (add, update by supersession,
or nothing when already known), each decision in the history reason."""

from dataclasses import dataclass

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from memories.models import HistoryAction, Memory
from memories.services import prepare_item, save_version, write_one
from memories.vectors import embed_or_pending, numbers_in

Action = HistoryAction.Action


@dataclass(frozen=True)
class Decision:
    """What reconciliation did with one extracted candidate: ADD, UPDATE (superseding `memory`'s predecessor) or
    NOOP (`memory` is the existing one that already says it)."""

    action: str
    memory: Memory
    reason: str


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
                    and numbers_in(similar[0][0].content) == numbers_in(candidate.content)):
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
        save_version(memory, action=Action.UPDATE, reason=note)
        return Decision("NOOP", memory, note)
    item = prepare_item({
        "content": candidate.content, "category": candidate.category, "subject": candidate.subject,
        "tags": list(candidate.tags), "entities": dict(candidate.entities), "importance": candidate.importance,
        "metadata": {"attribute": candidate.attribute} if getattr(candidate, "attribute", "") else {},
        "project": scope, "conversation": conversation, "message": message, "source_ref": source_ref,
        "source": Memory.Source.EXPLICIT if getattr(candidate, "explicit", False) else source,
        "supersedes": target.pk if action == "UPDATE" else None, "happened_at": happened_at,
    })
    write = write_one(owner=owner, item=item, vector=vector, model_name=model_name, duplicate=None, actor=None,
                       reason=note)
    return Decision(action, write.memory, note)
