from celery import shared_task
from django.conf import settings

from core.tasks import RetryingTask
from documents import processing, services


class DocumentTask(RetryingTask):
    def mark_failed(self, document_id: str, *, error: str) -> None:
        services.document_mark_failed(document_id=document_id, error=error)


# The hard backstop of DOCUMENT_WORK_SECONDS (documents.processing checks it between bounded steps): a step that
# overruns it anyway is interrupted (the document fails saying so), and a worker stuck in native code is replaced.
@shared_task(base=DocumentTask, soft_time_limit=settings.DOCUMENT_WORK_SECONDS + 30,
             time_limit=settings.DOCUMENT_WORK_SECONDS + 90)
def process_document(document_id: str) -> str:
    """Parse, chunk, embed and extract one document, resuming where an earlier attempt stopped, a bounded share
    per task (the rest is queued again behind other users' work); transient failures retry with backoff, and
    the last failure is recorded on the document (core.tasks)."""
    document = processing.document_process_share(document_id=document_id)
    return document.processing_status if document is not None else "deleted"


@shared_task
def requeue_stale_documents() -> int:
    """Periodic: documents left pending or processing without progress are queued again."""
    return processing.documents_requeue_stale()
