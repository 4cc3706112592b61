from celery import shared_task
from django.db import OperationalError

from conversations import services
from integrations.embeddings import EmbeddingError
from integrations.llm import LLMUnavailable

TRANSIENT = (EmbeddingError, LLMUnavailable, OperationalError)


@shared_task(
    bind=True, acks_late=True, autoretry_for=TRANSIENT,
    retry_backoff=2, retry_backoff_max=120, retry_jitter=True, max_retries=6,
)
def extract_message(self, message_id: str) -> str:
    """Extract memories from one message (idempotent); transient failures retry with backoff, and the last
    failure is recorded on the message."""
    try:
        message = services.message_extract(message_id=message_id)
        return message.extraction_status if message is not None else "gone"
    except TRANSIENT as exc:
        if self.request.retries >= self.max_retries:
            services.message_mark_failed(message_id=message_id, error=f"gave up after retries: {exc}")
            return "failed"
        raise
    except Exception as exc:
        # Not transient (bad candidate, a bug): retrying cannot help, and a message left pending would be
        # requeued by the sweep for ever. Record why; the traceback still reaches the worker log.
        services.message_mark_failed(message_id=message_id, error=f"{type(exc).__name__}: {exc}")
        raise


@shared_task(acks_late=True, autoretry_for=(OperationalError,), retry_backoff=2, max_retries=6)
def embed_messages(message_ids: list[str], extract: list[str]) -> int:
    """Embed new messages (idempotent: only those without a vector), then queue the extraction the append
    decided on. A provider failure leaves them to the periodic sweep and extraction goes ahead; if the task
    itself is lost, the extraction sweep re-sends what was stamped queued."""
    done = services.messages_embed(message_ids=message_ids)
    if extract:
        services.messages_send_extraction(extract)
    return done


@shared_task
def embed_pending_messages() -> int:
    """Periodic: messages still without a vector (provider was down, a task was lost) are embedded."""
    return services.messages_embed_pending()


@shared_task
def requeue_stale_extractions() -> int:
    """Periodic: pending messages whose task was lost are queued again."""
    return services.messages_requeue_stale()
