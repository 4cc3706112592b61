from celery import shared_task

from core.tasks import RetryingTask
from profiles import consolidation


class RunTask(RetryingTask):
    def mark_failed(self, run_id: int, *, error: str) -> None:
        consolidation.consolidation_mark_failed(run_id=run_id, error=error)


@shared_task(base=RunTask)
def consolidate(run_id: int) -> bool:
    """One share of a consolidation run (profiles.consolidation); while more is left, the run's next share is
    queued behind the work waiting meanwhile. Transient failures retry with backoff."""
    more = consolidation.consolidation_step(run_id=run_id)
    if more:
        consolidate.delay(run_id)
    return more


@shared_task
def consolidate_due() -> int:
    """Periodic: runs for owners with enough new memories, or a day's worth of anything new."""
    return consolidation.consolidation_sweep()
