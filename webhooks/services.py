"""Writes of webhook endpoints and deliveries. Each function is one transaction; the HTTP call of an attempt
happens outside any (webhooks.sending), and its outcome is written after."""

from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import F, Q
from django.utils import timezone

from core.claims import ClaimKind, claim, unclaimed
from core.events import EVENTS
from webhooks import addresses, sending, signing, tasks
from webhooks.models import Delivery, Endpoint

WRITABLE = ("url", "events", "description", "active")
FINISHED = (Delivery.Status.DELIVERED, Delivery.Status.FAILED)
EARLY = timedelta(seconds=2)  # a task this much before its delivery's next attempt is a copy, not the retry
STALE = timedelta(minutes=5)  # due this long ago and not attempted: its task was lost
REQUEUE_LIMIT = 1000  # deliveries sent again per sweep


def _check_events(events: list[str]) -> list[str]:
    unknown = [name for name in events if name not in EVENTS]
    if unknown:
        raise ValidationError({"events": [f"Unknown event(s): {', '.join(unknown)}. Known: {', '.join(EVENTS)}."]})
    return list(dict.fromkeys(events))


def check_room(owner) -> None:
    """A user has at most WEBHOOKS_MAX_ENDPOINTS endpoints (each event is one delivery per endpoint)."""
    if Endpoint.objects.filter(owner=owner).count() >= settings.WEBHOOKS_MAX_ENDPOINTS:
        raise ValidationError({"url": [f"At most {settings.WEBHOOKS_MAX_ENDPOINTS} endpoints per user."]})


def endpoint_create(*, owner, url: str, events: list[str] | None = None, description: str = "") -> Endpoint:
    """Register an endpoint (its URL checked: http(s), public addresses only) with a new secret."""
    addresses.check_url(url)
    events = _check_events(events or [])
    with transaction.atomic():
        check_room(owner)
        endpoint = Endpoint(owner=owner, url=url, events=events, description=description,
                            secret=signing.new_secret())
        endpoint.full_clean()
        endpoint.save()
    return endpoint


def endpoint_update(*, endpoint: Endpoint, data: dict[str, Any]) -> Endpoint:
    """Change an endpoint; switching it on again clears its failures and why it was switched off."""
    if "url" in data:
        addresses.check_url(data["url"])
    if "events" in data:
        data = {**data, "events": _check_events(data["events"])}
    with transaction.atomic():
        locked = Endpoint.objects.select_for_update().get(pk=endpoint.pk)
        switched_on = data.get("active") is True and not locked.active
        for name, value in data.items():
            if name not in WRITABLE:
                raise ValidationError({name: ["This field cannot be changed."]})
            setattr(locked, name, value)
        if switched_on:
            locked.failure_count, locked.disabled_reason, locked.disabled_at = 0, "", None
        locked.full_clean()
        locked.save()
    return locked


def endpoint_rotate_secret(*, endpoint: Endpoint) -> Endpoint:
    with transaction.atomic():
        locked = Endpoint.objects.select_for_update().get(pk=endpoint.pk)
        locked.secret = signing.new_secret()
        locked.save(update_fields=["secret", "updated_at"])
    return locked


def endpoint_delete(*, endpoint: Endpoint) -> None:
    """Remove an endpoint and its delivery log (deliveries still queued find nothing and stop)."""
    with transaction.atomic():
        endpoint.delete()


def deliveries_create(*, owner_id: int, event: str, payloads: list[dict[str, Any]]) -> list[Delivery]:
    """One delivery per payload and active endpoint of the owner subscribed to `event`, each queued on commit."""
    with transaction.atomic():
        endpoints = [e for e in Endpoint.objects.filter(owner_id=owner_id, active=True).only("pk", "events")
                     if not e.events or event in e.events]
        deliveries = Delivery.objects.bulk_create(
            [Delivery(endpoint=e, owner_id=owner_id, event=event, payload=p) for p in payloads for e in endpoints])
        _send_on_commit([d.pk for d in deliveries])
    return deliveries


def _send_on_commit(ids) -> None:
    ids = [str(pk) for pk in ids]
    if ids:
        transaction.on_commit(lambda: [tasks.deliver.delay(pk) for pk in ids])


@dataclass(frozen=True)
class Outcome:
    """What an attempt left: the delivery's status, and when a failed one is tried again (None: it is not)."""

    status: str
    retry_in: float | None = None


def delivery_attempt(*, delivery_id, backoff: Callable[[int], float]) -> Outcome:
    """POST the delivery once, under its claim (a second copy of the task meanwhile does nothing). A 2xx answer:
    delivered. Else, while it has had at most WEBHOOKS_MAX_RETRIES retries: `retrying`, due in `backoff(n)`
    seconds for the n-th retry (the count is the row's, so a task sent again by the sweep keeps to it); after
    that, or when the URL is refused: `failed`, counted against the endpoint."""
    with claim(ClaimKind.DELIVERY, delivery_id) as mine:
        if not mine:
            return Outcome("claimed")
        return _attempt(delivery_id, backoff)


def _attempt(delivery_id, backoff: Callable[[int], float]) -> Outcome:
    delivery = Delivery.objects.select_related("endpoint").filter(pk=delivery_id).first()
    if delivery is None:
        return Outcome("deleted")
    if delivery.status in FINISHED:
        return Outcome(delivery.status)  # a task delivered twice
    if delivery.next_attempt_at is not None and delivery.next_attempt_at > timezone.now() + EARLY:
        return Outcome(delivery.status)  # a copy sent by the sweep after this one's retry was scheduled
    endpoint = delivery.endpoint
    if not endpoint.active:
        return _finish(delivery, attempted=False, error="The endpoint was switched off.", status=None)
    result = sending.post(url=endpoint.url, secret=endpoint.secret, body=sending.body_of(delivery),
                          headers={"Memento-Event": delivery.event, "Memento-Delivery": str(delivery.pk)})
    if result.ok:  # the last failed attempt's error stays in the log beside `delivered`
        return _finish(delivery, attempted=True, error=delivery.last_error, status=result.status, delivered=True)
    if result.final or delivery.attempts >= settings.WEBHOOKS_MAX_RETRIES:
        return _finish(delivery, attempted=True, error=result.error, status=result.status)
    retry_in = backoff(delivery.attempts)
    with transaction.atomic():
        locked = Delivery.objects.select_for_update().get(pk=delivery.pk)
        locked.attempts += 1
        locked.status, locked.response_status = Delivery.Status.RETRYING, result.status
        locked.last_error = result.error
        locked.last_attempt_at = timezone.now()
        locked.next_attempt_at = locked.last_attempt_at + timedelta(seconds=retry_in)
        locked.save()
    return Outcome(Delivery.Status.RETRYING, retry_in=retry_in)


def deliveries_purge(*, batch_size: int = 5000) -> int:
    """Periodic: the log's finished deliveries older than WEBHOOKS_LOG_DAYS are deleted, in batches (the log
    only grows otherwise; 0 keeps them all). Deliveries still under way are kept whatever their age."""
    if settings.WEBHOOKS_LOG_DAYS <= 0:
        return 0
    cutoff, purged = timezone.now() - timedelta(days=settings.WEBHOOKS_LOG_DAYS), 0
    while True:
        ids = list(Delivery.objects.filter(status__in=FINISHED, finished_at__lt=cutoff)
                   .values_list("pk", flat=True)[:batch_size])
        if not ids:
            return purged
        purged += Delivery.objects.filter(pk__in=ids).delete()[0]


def deliveries_requeue_stale() -> int:
    """Periodic: deliveries whose task was lost (a worker killed while it held them, or their retry's timer)
    are sent again: pending or retrying, due more than STALE ago, to an active endpoint, and claimed by nobody.
    Each is marked due now, so that it is sent again at most once per STALE."""
    now = timezone.now()
    stale = (Delivery.objects.filter(status__in=(Delivery.Status.PENDING, Delivery.Status.RETRYING),
                                     endpoint__active=True)
             .filter(Q(next_attempt_at__lt=now - STALE) | Q(next_attempt_at__isnull=True, created_at__lt=now - STALE))
             .order_by("created_at").values_list("pk", flat=True)[:REQUEUE_LIMIT])
    ids = unclaimed(ClaimKind.DELIVERY, list(stale))
    with transaction.atomic():
        Delivery.objects.filter(pk__in=ids).update(next_attempt_at=now)
        _send_on_commit(ids)
    return len(ids)


def _finish(delivery: Delivery, *, attempted: bool, error: str, status: int | None,
            delivered: bool = False) -> Outcome:
    """A delivery's end, and the endpoint's tally: a success clears it; a failure adds one, and the last of
    WEBHOOKS_DISABLE_AFTER in a row switches the endpoint off (recorded with the reason). Conditional UPDATEs,
    no reads first: this is every delivery's last step."""
    now = timezone.now()
    final = Delivery.Status.DELIVERED if delivered else Delivery.Status.FAILED
    with transaction.atomic():
        changed = Delivery.objects.filter(pk=delivery.pk).exclude(status__in=FINISHED).update(
            status=final, attempts=F("attempts") + int(attempted), response_status=status, last_error=error,
            last_attempt_at=now if attempted else F("last_attempt_at"), next_attempt_at=None, finished_at=now)
        if not changed:  # finished meanwhile (or gone)
            return Outcome(Delivery.objects.filter(pk=delivery.pk).values_list("status", flat=True).first()
                           or "deleted")
        if attempted and delivered:
            Endpoint.objects.filter(pk=delivery.endpoint_id, failure_count__gt=0).update(failure_count=0,
                                                                                         updated_at=now)
        elif attempted:
            _count_failure(delivery.endpoint_id, error=error, now=now)
    return Outcome(final)


def _count_failure(endpoint_id, *, error: str, now) -> None:
    endpoint = Endpoint.objects.select_for_update().get(pk=endpoint_id)
    endpoint.failure_count += 1
    if endpoint.active and endpoint.failure_count >= settings.WEBHOOKS_DISABLE_AFTER:
        endpoint.active, endpoint.disabled_at = False, now
        endpoint.disabled_reason = f"Switched off after {endpoint.failure_count} failed deliveries in a row; the " \
                                   f"last: {error}"
    endpoint.save(update_fields=["failure_count", "active", "disabled_at", "disabled_reason", "updated_at"])


def delivery_mark_failed(*, delivery_id, error: str) -> None:
    """The task stopped for good on an internal error: the delivery ends failed (not counted against the
    endpoint: the receiver was not at fault)."""
    delivery = Delivery.objects.filter(pk=delivery_id).first()
    if delivery is not None:
        _finish(delivery, attempted=False, error=error[:sending.ERROR_MAX], status=None)
