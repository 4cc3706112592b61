"""Supersession chains in valid time: which memory replaces which, when the old one stopped being true, an older
statement entering a chain as its past, and undoing a supersession. Used inside the caller's transaction by
memories.services (writes, revert) and memories.reconcile."""

from typing import Any

from django.core.exceptions import ValidationError
from django.utils import timezone

from memories.models import HistoryAction, Memory
from memories.versions import save_version

Action = HistoryAction.Action


def resolve_supersedes(owner, target, new_id) -> Memory:
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


def valid_from_of(item: dict[str, Any]):
    """When what an item says became true: as given, else the event time, else the message's send time, else
    now (valid time: Memory.valid_from)."""
    message = item.get("message")
    return (item.get("valid_from") or item.get("happened_at")
            or (message.sent_at if message is not None and hasattr(message, "sent_at") else None) or timezone.now())


def link_supersession(new: Memory, old: Memory, *, actor, reason: str = "") -> None:
    """`new` replaces `old` (locked, inside the caller's transaction): `old` stops being current when `new` became
    true, a SUPERSEDE version with `reason`."""
    old.superseded_by = new
    old.valid_to = max(new.valid_from, old.valid_from)
    old.version += 1
    save_version(old, action=Action.SUPERSEDE, reason=reason or f"superseded by {new.pk}", actor=actor)


def link_past(memory: Memory, current: Memory, *, actor, reason: str) -> None:
    """`memory` says what was true before `current` (its valid time is older): it enters `current`'s chain as the
    past, at its place by valid time, already superseded."""
    successor = current
    predecessor = Memory.objects.select_for_update().filter(pk=successor.supersedes_id).first()
    while predecessor is not None and predecessor.valid_from > memory.valid_from:
        successor = predecessor
        predecessor = Memory.objects.select_for_update().filter(pk=successor.supersedes_id).first()
    memory.superseded_by, memory.valid_to = successor, max(successor.valid_from, memory.valid_from)
    memory.supersedes = predecessor
    memory.version += 1
    save_version(memory, action=Action.SUPERSEDE, reason=f"{reason}; older than {successor.pk}, kept as the past",
                 actor=actor)
    successor.supersedes = memory
    successor.version += 1
    save_version(successor, action=Action.UPDATE, reason=f"{reason}: the older {memory.pk} entered its chain",
                 actor=actor)
    if predecessor is not None:
        # replaced by what came after it (said later, true before `successor`): no "older" one
        link_supersession(memory, predecessor, actor=actor,
                          reason=f"{reason}: superseded by {memory.pk}, true before {successor.pk}")


def undo_supersession(memory: Memory, *, actor) -> None:
    successor = Memory.objects.select_for_update().filter(pk=memory.superseded_by_id).first()
    memory.superseded_by, memory.valid_to = None, None
    if successor is not None and successor.supersedes_id == memory.pk:
        successor.supersedes = None
        successor.version += 1
        save_version(successor, action=Action.UPDATE, reason=f"supersession of {memory.pk} undone", actor=actor)
