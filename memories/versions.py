"""Saving a memory as a new version: the one place a write's history row gets its action, reason and actor."""

from django.utils import timezone

from core import events
from memories.models import HistoryAction, Memory

Action = HistoryAction.Action
# which event each kind of version announces (core.events; an embedding alone announces nothing)
EVENT_OF = {Action.CREATE: events.MEMORY_CREATED, Action.UPDATE: events.MEMORY_UPDATED,
            Action.RESTORE: events.MEMORY_UPDATED, Action.REVERT: events.MEMORY_UPDATED,
            Action.SUPERSEDE: events.MEMORY_SUPERSEDED, Action.DELETE: events.MEMORY_DELETED}

# Bookkeeping that changes with every version; shown in a version's changes, it would bury the real ones.
BOOKKEEPING_FIELDS = ("version", "updated_at", "embedding_model")


def save_version(memory: Memory, *, action: str, reason: str, actor=None) -> Memory:
    memory._history_action = action
    memory._change_reason = reason
    if actor is not None:
        memory._history_user = actor
    memory.updated_at = timezone.now()
    memory.full_clean(exclude=["search_vector"])
    memory.save()
    if action in EVENT_OF:
        events.emit(EVENT_OF[action], owner_id=memory.owner_id, payload=events.memory_payload(memory))
    return memory


