"""Bounded growth: the periodic cleanup deletes old read/search events, expired sessions, old sign-in attempts
and delivered broker messages, in batches, and never a version."""

from datetime import timedelta

import kombu
import pytest
from axes.models import AccessAttempt
from django.contrib.sessions.models import Session
from django.db import connection
from django.utils import timezone

from memento.celery import app
from memories import retention, services
from memories.models import Memory, MemoryEvent
from memories.tasks import purge_expired
from tests.worker import broker_for, restore_broker, use_broker

pytestmark = pytest.mark.django_db


def _events(memory, *ages_in_days):
    for age in ages_in_days:
        event = MemoryEvent.objects.create(owner=memory.owner, memory=memory, action="SEARCH", query="q")
        MemoryEvent.objects.filter(pk=event.pk).update(at=timezone.now() - timedelta(days=age))


def test_old_read_and_search_events_go_in_batches_and_versions_stay(user, settings, monkeypatch):
    monkeypatch.setattr(retention, "RETENTION_BATCH", 2)
    memory = services.memory_create(owner=user, content="Is allergic to peanuts").memory
    services.memory_update(memory=memory, data={"content": "Is allergic to peanuts and cashews"})
    _events(memory, 400, 200, 100, 91, 30, 0)
    versions = Memory.history.filter(id=memory.pk).count()

    assert purge_expired.apply().get()["memory_events"] == 4  # three batches of at most 2
    assert sorted((timezone.now() - e.at).days for e in MemoryEvent.objects.all()) == [0, 30]
    assert Memory.history.filter(id=memory.pk).count() == versions == 2
    assert Memory.objects.filter(pk=memory.pk, is_active=True).exists()

    settings.MEMORY_EVENT_RETENTION_DAYS = 7
    assert retention.purge_expired()["memory_events"] == 1


def test_expired_sessions_and_old_sign_in_attempts_go(settings):
    now = timezone.now()
    Session.objects.create(session_key="expired", session_data="", expire_date=now - timedelta(minutes=1))
    Session.objects.create(session_key="live", session_data="", expire_date=now + timedelta(days=1))
    for username, age in (("old", timedelta(days=31)), ("recent", timedelta(days=2)), ("now", timedelta())):
        attempt = AccessAttempt.objects.create(username=username, ip_address="127.0.0.1", failures_since_start=5,
                                               user_agent="", path_info="/api/auth/token/")
        AccessAttempt.objects.filter(pk=attempt.pk).update(attempt_time=now - age)

    purged = retention.purge_expired()
    assert (purged["sessions"], purged["login_attempts"]) == (1, 1)
    assert list(Session.objects.values_list("session_key", flat=True)) == ["live"]
    assert sorted(AccessAttempt.objects.values_list("username", flat=True)) == ["now", "recent"]

    settings.LOGIN_ATTEMPT_RETENTION_DAYS = 0  # a lockout in progress is never cut short
    settings.AXES_COOLOFF_TIME = timedelta(hours=1)
    assert retention.purge_expired()["login_attempts"] == 1
    assert list(AccessAttempt.objects.values_list("username", flat=True)) == ["now"]


MINE = "WHERE queue_id = (SELECT id FROM kombu_queue WHERE name = 'retention-test')"


@pytest.mark.django_db(transaction=True)
def test_delivered_broker_messages_go_and_waiting_ones_stay(settings):
    url = broker_for("postgres", None)  # kombu's SQLAlchemy transport on the test database
    settings.CELERY_BROKER_URL = url
    previous = use_broker(url)
    try:
        with kombu.Connection(url) as broker:
            queue = broker.SimpleQueue("retention-test")
            for n in range(3):
                queue.put({"n": n})
            for _ in range(2):
                queue.get(timeout=5).ack()  # delivered: kept with visible = false
            queue.close()
        with connection.cursor() as cursor:
            cursor.execute(f"UPDATE kombu_message SET \"timestamp\" = \"timestamp\" - interval '10 days' {MINE}")
        assert retention.purge_expired()["broker_messages"] == 2
        with connection.cursor() as cursor:
            cursor.execute(f"SELECT visible FROM kombu_message {MINE}")
            assert cursor.fetchall() == [(True,)]  # the one not yet delivered
        settings.CELERY_BROKER_URL = "redis://127.0.0.1:1/0"
        assert retention.purge_expired()["broker_messages"] == 0
    finally:
        with connection.cursor() as cursor:
            cursor.execute(f"DELETE FROM kombu_message {MINE}")
        restore_broker(previous)


def test_the_cleanup_runs_every_hour(settings):
    entry = settings.CELERY_BEAT_SCHEDULE["purge-expired-rows"]
    assert entry["task"] == purge_expired.name and entry["task"] in app.tasks and entry["schedule"] == 3600
