from celery import shared_task

from core.tasks import RetryingTask
from memento import reembed
from memento.backlog import backlog_figures
from observability import metrics


@shared_task
def observe_backlog() -> dict:
    """Periodic (METRICS_BACKLOG_SECONDS): the backlog gauges, which every scrape of /metrics then reads."""
    figures = backlog_figures()
    metrics.backlog_observed(figures)
    return figures


@shared_task(base=RetryingTask)
def reembed_everything(everything: bool = False, batch_size: int = 256) -> dict:
    """`manage.py reembed` in the worker (the staff API queues it): a provider failure retries with backoff and
    continues where the run stopped; a run already going (ReembedBusy) makes this one a no-op."""
    try:
        return reembed.reembed_all(batch_size=batch_size, everything=everything)
    except reembed.ReembedBusy:
        return {}
