"""The one retry policy of the background tasks, and how their last failure is recorded.

A task that uses `RetryingTask` as its base retries transient errors (the embedding provider or the LLM endpoint
down or busy, a database hiccup) with exponential backoff and jitter. When it fails for good (retries used up, or
an error a retry cannot cure: a bug, bad data), it records why on the object it worked on through the app's
`*_mark_failed` service (`mark_failed`), then the error propagates so that Celery marks the task failed and the
worker logs the traceback. A task whose object would otherwise stay pending is never left so: the periodic
sweeps would queue it again for ever.

`integrations` is a library floor (no models, no app), so its two error types may be named here.
"""

from celery import Task, shared_task
from django.db import OperationalError

from integrations.embeddings import EmbeddingError
from integrations.llm import LLMUnavailable

TRANSIENT = (EmbeddingError, LLMUnavailable, OperationalError)


class RetryingTask(Task):
    """Base class of the tasks: transient errors retry with backoff; the last failure is recorded and raised."""

    acks_late = True  # a worker killed mid-task leaves the message for another
    autoretry_for = TRANSIENT
    max_retries = 6
    retry_backoff = 2
    retry_backoff_max = 120
    retry_jitter = True

    def mark_failed(self, *args, error: str, **kwargs) -> None:
        """Record on the task's object (the task's arguments name it) why it failed for good. Tasks that work on
        no single object (periodic sweeps, batches the sweeps pick up again) have nothing to record."""

    def on_failure(self, exc, task_id, args, kwargs, einfo) -> None:
        if isinstance(exc, self.autoretry_for):
            error = f"Gave up after {self.max_retries} retries ({type(exc).__name__}: {exc})."
        else:
            error = f"Stopped by an internal error ({type(exc).__name__}: {exc})."
        self.mark_failed(*args, error=error, **kwargs)


@shared_task
def purge_idempotency_keys() -> int:
    """Periodic: Idempotency-Key records past IDEMPOTENCY_TTL_HOURS are deleted."""
    from core.idempotency import idempotency_keys_purge  # models load after the app registry; this module before

    return idempotency_keys_purge()
