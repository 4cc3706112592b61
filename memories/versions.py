"""Saving a memory as a new version: the one place a write's history row gets its action, reason and actor."""

from django.utils import timezone

from memories.models import Memory

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
    return memory


