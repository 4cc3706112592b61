from celery import shared_task

from memories import services


@shared_task
def deactivate_expired() -> int:
    """Periodic: memories past `expires_at` are soft-deleted, each with a history row."""
    return services.memories_deactivate_expired()
