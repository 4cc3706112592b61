from celery import shared_task

from memento.backlog import backlog_figures
from observability import metrics


@shared_task
def observe_backlog() -> dict:
    """Periodic (METRICS_BACKLOG_SECONDS): the backlog gauges, which every scrape of /metrics then reads."""
    figures = backlog_figures()
    metrics.backlog_observed(figures)
    return figures
