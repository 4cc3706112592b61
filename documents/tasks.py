import logging

from celery import shared_task
from django.db import OperationalError

from documents import services
from integrations.embeddings import EmbeddingError
from integrations.llm import LLMUnavailable

logger = logging.getLogger(__name__)
TRANSIENT = (EmbeddingError, LLMUnavailable, OperationalError)


@shared_task(
    bind=True, acks_late=True, autoretry_for=TRANSIENT, retry_backoff=2, retry_backoff_max=120, retry_jitter=True,
    max_retries=6,
)
def process_document(self, document_id: str) -> str:
    """Parse, chunk, embed and extract one document, resuming where an earlier attempt stopped; transient
    failures retry with backoff, and the last one is recorded on the document."""
    try:
        document = services.document_process(document_id=document_id)
    except TRANSIENT as exc:
        if self.request.retries >= self.max_retries:
            services.document_mark_failed(
                document_id=document_id,
                error=f"Processing gave up after {self.max_retries} retries: {exc.__class__.__name__}: {exc}",
            )
            return "failed"
        raise
    except Exception as exc:
        logger.exception("processing document %s failed", document_id)
        services.document_mark_failed(
            document_id=document_id,
            error=f"Processing stopped because of an internal error ({exc.__class__.__name__}: {exc}).",
        )
        return "failed"
    return document.processing_status if document is not None else "deleted"


@shared_task
def requeue_stale_documents() -> int:
    """Periodic: documents left pending or processing without progress are queued again."""
    return services.documents_requeue_stale()
