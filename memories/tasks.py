from celery import shared_task

from integrations.embeddings import EmbeddingError
from memories import services


@shared_task
def deactivate_expired() -> int:
    """Periodic: memories past `expires_at` are soft-deleted, each with a history row."""
    return services.memories_deactivate_expired()


@shared_task(autoretry_for=(EmbeddingError,), retry_backoff=30, retry_backoff_max=600, max_retries=5)
def embed_pending() -> int:
    """Periodic: memories written while the embedding provider was down get their embedding."""
    return services.memories_embed_pending()
