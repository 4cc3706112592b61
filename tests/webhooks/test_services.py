"""One delivery attempt, run here against a real receiver: redirects are not followed, the address is checked
again when sending, and an endpoint switched off meanwhile is not sent to."""

from datetime import timedelta

import pytest
from django.utils import timezone

from tests.webhooks.receiver import receiver  # noqa: F401 -- the fixture
from webhooks import services, tasks
from webhooks.models import Delivery, Endpoint

pytestmark = pytest.mark.django_db


def attempt(delivery) -> services.Outcome:
    return services.delivery_attempt(delivery_id=delivery.pk, backoff=lambda retries: 5.0)


@pytest.fixture
def delivery(user, receiver):  # noqa: F811
    endpoint = services.endpoint_create(owner=user, url=receiver.url)
    return Delivery.objects.create(endpoint=endpoint, owner=user, event="memory.created", payload={"id": "m1"})


def test_a_redirect_is_not_followed_and_counts_as_a_failure(delivery, receiver):  # noqa: F811
    receiver.answers = [302]
    assert attempt(delivery) == services.Outcome("retrying", retry_in=5.0)
    assert [r.path for r in receiver.received] == ["/hook"]
    delivery.refresh_from_db()
    assert (delivery.status, delivery.attempts, delivery.response_status) == ("retrying", 1, 302)
    assert "redirect (not followed)" in delivery.last_error and delivery.next_attempt_at is not None


def test_the_address_is_checked_again_at_delivery(delivery, receiver, settings):  # noqa: F811
    settings.WEBHOOKS_ALLOW_PRIVATE = False  # registered while allowed; the check at sending refuses it
    assert attempt(delivery).status == "failed"  # no retry helps
    assert receiver.received == []
    delivery.refresh_from_db()
    assert delivery.last_error.startswith("Refused: ") and "127.0.0.1 is not a public address" in delivery.last_error
    assert Endpoint.objects.get().failure_count == 1


def test_the_last_attempt_fails_the_delivery_and_a_success_clears_the_tally(delivery, receiver, user,  # noqa: F811
                                                                         settings):
    settings.WEBHOOKS_MAX_RETRIES = 0
    receiver.answers = [500]
    assert attempt(delivery).status == "failed"
    assert Endpoint.objects.get().failure_count == 1
    again = Delivery.objects.create(endpoint=delivery.endpoint, owner=user, event="memory.created", payload={})
    assert attempt(again).status == "delivered"
    assert Endpoint.objects.get().failure_count == 0
    assert attempt(again).status == "delivered"  # twice: no POST
    assert len(receiver.received) == 2


def test_an_endpoint_switched_off_meanwhile_is_not_sent_to(delivery, receiver):  # noqa: F811
    Endpoint.objects.update(active=False)
    assert attempt(delivery).status == "failed"
    assert receiver.received == []
    delivery.refresh_from_db()
    assert (delivery.attempts, delivery.last_error) == (0, "The endpoint was switched off.")
    assert Endpoint.objects.get().failure_count == 0


def test_an_unreachable_receiver_is_a_logged_failure(user, settings):
    settings.WEBHOOKS_ALLOW_PRIVATE = True
    settings.WEBHOOKS_MAX_RETRIES = 0
    settings.WEBHOOKS_TIMEOUT = 2
    endpoint = services.endpoint_create(owner=user, url="http://127.0.0.1:1/hook")  # nothing listens on port 1
    delivery = Delivery.objects.create(endpoint=endpoint, owner=user, event="memory.created", payload={})
    assert attempt(delivery).status == "failed"
    delivery.refresh_from_db()
    assert "Connection" in delivery.last_error or "refused" in delivery.last_error.lower()


def test_a_copy_of_the_task_before_the_retry_is_due_does_nothing(delivery, receiver):  # noqa: F811
    receiver.answers = [500]
    assert attempt(delivery).retry_in == 5.0
    assert attempt(delivery) == services.Outcome("retrying")  # due in 5 s: this copy leaves it to the retry
    assert len(receiver.received) == 1


def test_the_sweep_sends_again_what_was_lost_and_only_that(delivery, receiver, user, monkeypatch,  # noqa: F811
                                                            django_capture_on_commit_callbacks):
    sent = []
    monkeypatch.setattr(tasks.deliver, "delay", sent.append)
    fresh = Delivery.objects.create(endpoint=delivery.endpoint, owner=user, event="memory.created", payload={})
    done = Delivery.objects.create(endpoint=delivery.endpoint, owner=user, event="memory.created", payload={},
                                   status="delivered")
    late = timezone.now() - timedelta(minutes=6)
    Delivery.objects.filter(pk__in=[delivery.pk, done.pk]).update(created_at=late)
    with django_capture_on_commit_callbacks(execute=True):  # its tasks are sent on commit
        assert services.deliveries_requeue_stale() == 1
    assert sent == [str(delivery.pk)]
    delivery.refresh_from_db()
    assert delivery.next_attempt_at > late  # due now: not sent again by the next sweep
    assert services.deliveries_requeue_stale() == 0
    assert str(fresh.pk) not in sent  # created just now: its task is not lost


def test_the_log_keeps_finished_deliveries_for_the_configured_days(delivery, user, settings):
    settings.WEBHOOKS_LOG_DAYS = 30
    old = timezone.now() - timedelta(days=31)
    done = Delivery.objects.create(endpoint=delivery.endpoint, owner=user, event="memory.created", payload={},
                                   status="delivered", finished_at=old)
    Delivery.objects.filter(pk=delivery.pk).update(created_at=old)  # old but not finished: kept
    recent = Delivery.objects.create(endpoint=delivery.endpoint, owner=user, event="memory.created", payload={},
                                     status="failed", finished_at=timezone.now())
    assert services.deliveries_purge() == 1
    assert set(Delivery.objects.values_list("pk", flat=True)) == {delivery.pk, recent.pk}
    assert not Delivery.objects.filter(pk=done.pk).exists()
    settings.WEBHOOKS_LOG_DAYS = 0
    Delivery.objects.update(finished_at=old, status="delivered")
    assert services.deliveries_purge() == 0
