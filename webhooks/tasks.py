from celery import shared_task
from celery.utils.time import get_exponential_backoff_interval
from django.conf import settings

from core.tasks import RetryingTask
from webhooks import services


class DeliveryTask(RetryingTask):
    """A delivery's retries: the project's backoff policy, at the webhook settings' pace."""

    max_retries = settings.WEBHOOKS_MAX_RETRIES
    retry_backoff = settings.WEBHOOKS_RETRY_BACKOFF
    retry_backoff_max = settings.WEBHOOKS_RETRY_BACKOFF_MAX

    def mark_failed(self, delivery_id: str, *, error: str) -> None:
        services.delivery_mark_failed(delivery_id=delivery_id, error=error)

    def backoff(self, retries: int) -> float:
        """Seconds before retry number `retries` + 1: exponential, capped, jittered."""
        return get_exponential_backoff_interval(factor=self.retry_backoff, retries=retries,
                                                maximum=self.retry_backoff_max, full_jitter=self.retry_jitter)


@shared_task(base=DeliveryTask, bind=True)
def deliver(self, delivery_id: str) -> str:
    """POST one delivery; a failed attempt with retries left is tried again after the backoff the service
    recorded on the delivery (its retries are counted on the row, not by this task)."""
    outcome = services.delivery_attempt(delivery_id=delivery_id, backoff=self.backoff)
    if outcome.retry_in is not None:
        raise self.retry(countdown=outcome.retry_in)
    return outcome.status


@shared_task
def purge_old_deliveries() -> int:
    """Periodic: finished deliveries past WEBHOOKS_LOG_DAYS leave the log (services.deliveries_purge)."""
    return services.deliveries_purge()


@shared_task
def requeue_stale_deliveries() -> int:
    """Periodic: deliveries whose task was lost are sent again (services.deliveries_requeue_stale)."""
    return services.deliveries_requeue_stale()
