from celery import shared_task

from core.tasks import RetryingTask
from imports import processing, services


class ImportTask(RetryingTask):
    def mark_failed(self, import_id: str, *, error: str) -> None:
        services.import_mark_failed(import_id=import_id, error=error)


@shared_task(base=ImportTask)
def process_import(import_id: str) -> str:
    """Write a share of an import's items (IMPORT_TASK_MESSAGES), then queue it again behind other users' work;
    transient failures retry with backoff, the last failure is recorded on the import (core.tasks)."""
    job = processing.import_process_share(import_id=import_id)
    return job.status if job is not None else "deleted"


@shared_task
def requeue_stale_imports() -> int:
    """Periodic: imports left unfinished without progress, that nobody is working on, are queued again."""
    return processing.imports_requeue_stale()
