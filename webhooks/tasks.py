from celery import shared_task
from celery.utils.time import get_exponential_backoff_interval
from django.conf import settings

from core.tasks import RetryingTask
from webhooks import services


class DeliveryTask(RetryingTask):
    """A delivery's retries: the project's backoff policy, with the webhook settings' count and pace."""

    max_retries = settings.WEBHOOKS_MAX_RETRIES
    retry_backoff = settings.WEBHOOKS_RETRY_BACKOFF
    retry_backoff_max = settings.WEBHOOKS_RETRY_BACKOFF_MAX

    def mark_failed(self, delivery_id: str, *, error: str) -> None:
        services.delivery_mark_failed(delivery_id=delivery_id, error=error)

    def retry_in(self) -> float | None:
        """Seconds until the next attempt (exponential, jittered), or None when this attempt is the last."""
        retries = self.request.retries
        if retries >= self.max_retries:
            return None
        return get_exponential_backoff_interval(factor=self.retry_backoff, retries=retries,
                                                maximum=self.retry_backoff_max, full_jitter=self.retry_jitter)


@shared_task(base=DeliveryTask, bind=True)
def deliver(self, delivery_id: str) -> str:
    """POST one delivery; a failed attempt with retries left is retried after the backoff (recorded on it)."""
    retry_in = self.retry_in()
    outcome = services.delivery_attempt(delivery_id=delivery_id, retry_in=retry_in)
    if outcome.retry:
        raise self.retry(countdown=retry_in)
    return outcome.status
