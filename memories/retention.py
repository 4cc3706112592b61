"""Bounded growth: the periodic cleanup of rows that only accumulate. Each kind is deleted in batches of
RETENTION_BATCH rows, one short statement each (no long lock, no huge transaction):

- READ / SEARCH events (MemoryEvent) older than MEMORY_EVENT_RETENTION_DAYS;
- expired sign-in sessions;
- django-axes sign-in attempt rows older than LOGIN_ATTEMPT_RETENTION_DAYS (a lockout only looks back
  LOGIN_COOLOFF_MINUTES);
- messages kombu's PostgreSQL transport (the default broker) has delivered: it keeps every one with
  `visible = false`; delivered longer ago than BROKER_MESSAGE_RETENTION_DAYS, they go. (Redis keeps nothing.)

Versions (the history tables) are the audit trail and are never deleted here; nor are memories.
"""

from datetime import datetime, timedelta

from axes.models import AccessAttempt, AccessFailureLog, AccessLog
from django.conf import settings
from django.contrib.sessions.models import Session
from django.db import connection, transaction
from django.utils import timezone

from memories.models import MemoryEvent

RETENTION_BATCH = 5000  # rows per DELETE: ~50 ms each, so other writers never wait long


def _delete_in_batches(queryset) -> int:
    """Delete the rows of `queryset` RETENTION_BATCH at a time, each batch its own transaction."""
    deleted = 0
    model = queryset.model
    while True:
        with transaction.atomic():
            keys = list(queryset.order_by().values_list("pk", flat=True)[:RETENTION_BATCH])
            if keys:
                model.objects.filter(pk__in=keys).delete()  # one DELETE (axes' attempts: with their expiry rows)
        deleted += len(keys)
        if len(keys) < RETENTION_BATCH:
            return deleted


def _broker_messages(days: int) -> int:
    """Delivered messages of kombu's SQLAlchemy transport, when it keeps them in this database."""
    if not settings.CELERY_BROKER_URL.startswith("sqla+"):
        return 0
    with connection.cursor() as cursor:
        cursor.execute("SELECT to_regclass('kombu_message') IS NOT NULL")
        if not cursor.fetchone()[0]:
            return 0  # a broker on another database, or none used yet
    # kombu stamps `timestamp` with the local time, without a zone, when it sends and when it delivers
    cutoff = datetime.now() - timedelta(days=days)
    deleted = 0
    while True:
        with connection.cursor() as cursor:
            cursor.execute(
                'DELETE FROM kombu_message WHERE id IN (SELECT id FROM kombu_message WHERE NOT visible '
                'AND "timestamp" < %s ORDER BY id LIMIT %s)', [cutoff, RETENTION_BATCH])
            count = cursor.rowcount
        deleted += count
        if count < RETENTION_BATCH:
            return deleted


def purge_expired() -> dict[str, int]:
    """Delete what the retention settings no longer keep; returns how many rows of each kind went."""
    now = timezone.now()
    events_before = now - timedelta(days=settings.MEMORY_EVENT_RETENTION_DAYS)
    attempts_before = now - max(timedelta(days=settings.LOGIN_ATTEMPT_RETENTION_DAYS), settings.AXES_COOLOFF_TIME)
    return {
        "memory_events": _delete_in_batches(MemoryEvent.objects.filter(at__lt=events_before)),
        "sessions": _delete_in_batches(Session.objects.filter(expire_date__lt=now)),
        "login_attempts": sum(_delete_in_batches(model.objects.filter(attempt_time__lt=attempts_before))
                              for model in (AccessAttempt, AccessFailureLog, AccessLog)),
        "broker_messages": _broker_messages(settings.BROKER_MESSAGE_RETENTION_DAYS),
    }
