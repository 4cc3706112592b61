"""One delivery attempt, run here against a real receiver: redirects are not followed, the address is checked
again when sending, and an endpoint switched off meanwhile is not sent to."""

import pytest

from tests.webhooks.receiver import receiver  # noqa: F401 -- the fixture
from webhooks import services
from webhooks.models import Delivery, Endpoint

pytestmark = pytest.mark.django_db


@pytest.fixture
def delivery(user, receiver):  # noqa: F811
    endpoint = services.endpoint_create(owner=user, url=receiver.url)
    return Delivery.objects.create(endpoint=endpoint, owner=user, event="memory.created", payload={"id": "m1"})


def test_a_redirect_is_not_followed_and_counts_as_a_failure(delivery, receiver):  # noqa: F811
    receiver.answers = [302]
    assert services.delivery_attempt(delivery_id=delivery.pk, retry_in=5) == services.Outcome("retrying", retry=True)
    assert [r.path for r in receiver.received] == ["/hook"]
    delivery.refresh_from_db()
    assert (delivery.status, delivery.attempts, delivery.response_status) == ("retrying", 1, 302)
    assert "redirect (not followed)" in delivery.last_error and delivery.next_attempt_at is not None


def test_the_address_is_checked_again_at_delivery(delivery, receiver, settings):  # noqa: F811
    settings.WEBHOOKS_ALLOW_PRIVATE = False  # registered while allowed; the check at sending refuses it
    assert services.delivery_attempt(delivery_id=delivery.pk, retry_in=5).status == "failed"  # no retry helps
    assert receiver.received == []
    delivery.refresh_from_db()
    assert delivery.last_error.startswith("Refused: ") and "127.0.0.1 is not a public address" in delivery.last_error
    assert Endpoint.objects.get().failure_count == 1


def test_the_last_attempt_fails_the_delivery_and_a_success_clears_the_tally(delivery, receiver, user):  # noqa: F811
    receiver.answers = [500]
    assert services.delivery_attempt(delivery_id=delivery.pk, retry_in=None).status == "failed"
    assert Endpoint.objects.get().failure_count == 1
    again = Delivery.objects.create(endpoint=delivery.endpoint, owner=user, event="memory.created", payload={})
    assert services.delivery_attempt(delivery_id=again.pk, retry_in=None).status == "delivered"
    assert Endpoint.objects.get().failure_count == 0
    assert services.delivery_attempt(delivery_id=again.pk, retry_in=None).status == "delivered"  # twice: no POST
    assert len(receiver.received) == 2


def test_an_endpoint_switched_off_meanwhile_is_not_sent_to(delivery, receiver):  # noqa: F811
    Endpoint.objects.update(active=False)
    assert services.delivery_attempt(delivery_id=delivery.pk, retry_in=5).status == "failed"
    assert receiver.received == []
    delivery.refresh_from_db()
    assert (delivery.attempts, delivery.last_error) == (0, "The endpoint was switched off.")
    assert Endpoint.objects.get().failure_count == 0


def test_an_unreachable_receiver_is_a_logged_failure(user, settings):
    settings.WEBHOOKS_ALLOW_PRIVATE = True
    settings.WEBHOOKS_TIMEOUT = 2
    endpoint = services.endpoint_create(owner=user, url="http://127.0.0.1:1/hook")  # nothing listens on port 1
    delivery = Delivery.objects.create(endpoint=endpoint, owner=user, event="memory.created", payload={})
    assert services.delivery_attempt(delivery_id=delivery.pk, retry_in=None).status == "failed"
    delivery.refresh_from_db()
    assert "Connection" in delivery.last_error or "refused" in delivery.last_error.lower()
