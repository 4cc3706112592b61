from celery import shared_task
from django.db import OperationalError

from conversations import services
from integrations.embeddings import EmbeddingError
from integrations.llm import LLMUnavailable


@shared_task(
    bind=True, acks_late=True, autoretry_for=(EmbeddingError, LLMUnavailable, OperationalError),
    retry_backoff=2, retry_backoff_max=120, retry_jitter=True, max_retries=6,
)
def extract_message(self, message_id: str) -> str:
    """Extract memories from one message (idempotent); transient failures retry with backoff, and the last
    failure is recorded on the message."""
    try:
        return services.message_extract(message_id=message_id).extraction_status
    except (EmbeddingError, LLMUnavailable, OperationalError) as exc:
        if self.request.retries >= self.max_retries:
            services.message_mark_failed(message_id=message_id, error=f"gave up after retries: {exc}")
            return "failed"
        raise


@shared_task
def requeue_stale_extractions() -> int:
    return services.messages_requeue_stale()
