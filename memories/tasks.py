from celery import shared_task

from core.tasks import RetryingTask
from memories import batch, owner_indexes, retention


@shared_task
def deactivate_expired() -> int:
    """Periodic: memories past `expires_at` are soft-deleted, each with a history row."""
    return batch.memories_deactivate_expired()


# a provider that is down stays down for a while: longer waits than a task's default, and the next run of this
# periodic task picks up whatever is still pending anyway
@shared_task(base=RetryingTask, retry_backoff=30, retry_backoff_max=600, max_retries=5)
def embed_pending() -> int:
    """Periodic: memories written while the embedding provider was down get their embedding."""
    return batch.memories_embed_pending()


@shared_task
def purge_expired() -> dict[str, int]:
    """Periodic: rows that only accumulate (read and search events, expired sessions, old sign-in attempts,
    delivered broker messages) are deleted past their retention (memories.retention); versions stay."""
    return retention.purge_expired()


@shared_task
def sync_owner_indexes() -> list[str]:
    """Periodic: large owners get their own HNSW index, owners that shrank or left lose theirs
    (memories.owner_indexes), one build per run: while builds remain the task queues itself again, behind the
    work already waiting. Returns what was done, as "action name" lines."""
    done = owner_indexes.owner_indexes_sync(builds=1)
    if done and owner_indexes.owner_indexes_pending():
        sync_owner_indexes.delay()
    return [f"{entry.action} {entry.name}" for entry in done]
