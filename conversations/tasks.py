from celery import shared_task

from conversations import processing, services
from core.tasks import RetryingTask


class MessageTask(RetryingTask):
    def mark_failed(self, message_id: str, *, error: str) -> None:
        services.message_mark_failed(message_id=message_id, error=error)


@shared_task(base=MessageTask)
def extract_message(message_id: str) -> str:
    """Extract memories from one message (idempotent); transient failures retry with backoff, and the last
    failure is recorded on the message (core.tasks). (Appends queue `extract_pending` per owner instead; this
    one serves tasks already queued and single messages.)"""
    message = processing.message_extract(message_id=message_id)
    return message.extraction_status if message is not None else "gone"


class ShareTask(RetryingTask):
    def mark_failed(self, owner_id: str, *, error: str) -> None:
        """Retries used up: the message the share was on when they ran out (its first pending one) fails; the
        periodic sweep sends the owner's task again for the rest."""
        services.messages_mark_first_failed(owner_id=owner_id, error=error)


@shared_task(base=ShareTask)
def extract_pending(owner_id: str) -> int:
    """Extract a share of one owner's due messages, then queue the next share behind everyone else's work
    (conversations.processing); transient failures retry with backoff."""
    return processing.messages_extract_share(owner_id=owner_id)


@shared_task(base=RetryingTask)
def embed_messages(message_ids: list[str], extract: list[str]) -> int:
    """Embed new messages (idempotent: only those without a vector), then queue the extraction the append
    decided on. A provider failure leaves them to the periodic sweep and extraction goes ahead; if the task
    itself is lost, the extraction sweep re-sends what was stamped queued."""
    done = processing.messages_embed(message_ids=message_ids)
    if extract:
        services.messages_send_extraction(extract)
    return done


@shared_task
def embed_pending_messages() -> int:
    """Periodic: messages still without a vector (provider was down, a task was lost) are embedded."""
    return processing.messages_embed_pending()


@shared_task
def requeue_stale_extractions() -> int:
    """Periodic: owners whose extraction task was lost get it queued again."""
    return services.messages_requeue_stale()
