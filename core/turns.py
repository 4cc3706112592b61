"""Users take turns (ARCHITECTURE.md, "Background work"): each owner has at most one job of a kind (a document, an
import) in the queue, each task does a share of it and sends it again behind everyone else's work, and the
database, not the broker, records what is left. A job's model has `owner_id`, `queued_at` (set while its task is
in the queue, empty while it waits for its turn), `created_at` and `updated_at` (its progress); `unfinished` is a
queryset of the kind's pending and processing jobs.
"""

from collections.abc import Callable
from datetime import datetime

from django.db import models, transaction
from django.utils import timezone

from core.claims import ClaimKind, serialize, unclaimed

SWEEP_LIMIT = 1000  # jobs (and owners) a sweep looks at


def dispatch_next(unfinished: models.QuerySet, *, owner_id, lock: str,
                  send: Callable[[str], object]) -> models.Model | None:
    """Hand the owner's oldest waiting job to the worker (`send(pk)` on commit), unless one of theirs is in the
    queue already. `lock` names the owner's dispatcher: one at a time (an upload against a finishing task)."""
    with transaction.atomic():
        serialize(lock)
        owned = unfinished.filter(owner_id=owner_id)
        if owned.filter(queued_at__isnull=False).exists():
            return None
        job = owned.filter(queued_at__isnull=True).order_by("created_at", "pk").first()
        if job is None:
            return None
        job.queued_at = timezone.now()
        job.save(update_fields=["queued_at", "updated_at"])
        transaction.on_commit(lambda pk=str(job.pk): send(pk))
    return job


def requeue_stale(unfinished: models.QuerySet, stale: models.Q, *, kind: ClaimKind, send: Callable[[str], object],
                  dispatch: Callable[[object], object], now: datetime | None = None) -> int:
    """The sweep: the jobs matching `stale` (in the queue without progress) that no worker claims are sent again
    and stamped `queued_at`, so that the next sweep does not send them once more (their `updated_at` still says
    when they progressed); an owner whose jobs wait with none of theirs in the queue (the dispatch was lost) gets
    `dispatch(owner_id)`, which returns None when it sent nothing. Returns how many jobs were sent."""
    candidates = list(unfinished.filter(stale).order_by("updated_at").values_list("pk", flat=True)[:SWEEP_LIMIT])
    idle = unclaimed(kind, candidates)
    with transaction.atomic():
        sent = [str(pk) for pk in unfinished.select_for_update(skip_locked=True).filter(pk__in=idle)
                .values_list("pk", flat=True)]
        unfinished.model.objects.filter(pk__in=sent).update(queued_at=now or timezone.now())
        transaction.on_commit(lambda: [send(pk) for pk in sent])
    in_queue = unfinished.filter(queued_at__isnull=False).values("owner_id")
    waiting = (unfinished.filter(queued_at__isnull=True).exclude(owner_id__in=in_queue).order_by()
               .values_list("owner_id", flat=True).distinct()[:SWEEP_LIMIT])
    dispatched = [owner_id for owner_id in waiting if dispatch(owner_id) is not None]
    return len(sent) + len(dispatched)
