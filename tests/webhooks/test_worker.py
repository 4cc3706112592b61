"""Webhooks end to end: a memory written through the API reaches a real receiver on 127.0.0.1, signed, from a
real Celery worker; failures are retried with backoff and logged, and repeated failures switch the endpoint off."""

import json

import pytest

from memories import services as memory_services
from tests.webhooks.receiver import receiver  # noqa: F401 -- the fixture
from tests.worker import running_worker, wait_for
from webhooks import signing
from webhooks.models import Delivery, Endpoint

pytestmark = pytest.mark.slow


@pytest.fixture
def worker(transactional_db, redis_url, monkeypatch, receiver):  # noqa: F811
    """A worker that may send to loopback, retrying after a second or two (its settings come from env)."""
    for name, value in {"WEBHOOKS_ALLOW_PRIVATE": "1", "WEBHOOKS_RETRY_BACKOFF": "1",
                        "WEBHOOKS_RETRY_BACKOFF_MAX": "2", "WEBHOOKS_MAX_RETRIES": "2",
                        "WEBHOOKS_DISABLE_AFTER": "2"}.items():
        monkeypatch.setenv(name, value)
    with running_worker("redis" if redis_url else "postgres", redis_url) as process:
        yield process


def _register(api, url: str, events=("memory.created",)) -> dict:
    response = api.post("/api/webhooks/", {"url": url, "events": list(events)}, format="json")
    assert response.status_code == 201, response.content
    return response.json()


def test_a_new_memory_is_delivered_signed_to_the_receiver(worker, receiver, api, user):  # noqa: F811
    endpoint = _register(api, receiver.url)
    response = api.post("/api/memories/", {"content": "Ana is allergic to peanuts"}, format="json")
    assert response.status_code == 201, response.content

    wait_for(lambda: receiver.received, worker=worker)
    [request] = receiver.received
    assert request.path == "/hook"
    assert signing.verify(endpoint["secret"], request.body, request.headers["Memento-Signature"])
    body = json.loads(request.body)
    assert body["event"] == "memory.created" == request.headers["Memento-Event"]
    assert body["data"]["id"] == response.json()["id"] and body["data"]["content"] == "Ana is allergic to peanuts"
    assert body["id"] == request.headers["Memento-Delivery"]
    delivery = wait_for(lambda: Delivery.objects.filter(pk=body["id"], status="delivered").first(), worker=worker)
    assert (delivery.attempts, delivery.response_status, delivery.owner_id) == (1, 200, user.pk)


def test_a_failing_receiver_is_retried_until_it_answers_and_the_retries_are_logged(worker, receiver, api):  # noqa: F811
    receiver.answers = [503, 500]
    secret = _register(api, receiver.url)["secret"]
    api.post("/api/memories/", {"content": "Ana moved to Lisbon"}, format="json")

    delivery = wait_for(lambda: Delivery.objects.filter(status="delivered").first(), worker=worker)
    assert delivery.attempts == 3
    assert delivery.last_error == "HTTP 500: an error status."  # the last failure, kept beside the success
    assert [r.status for r in receiver.received] == [503, 500, 200]
    assert len({r.headers["Memento-Delivery"] for r in receiver.received}) == 1  # one delivery, three attempts
    assert all(signing.verify(secret, r.body, r.headers["Memento-Signature"]) for r in receiver.received)
    assert Endpoint.objects.get().failure_count == 0


def test_repeated_failures_switch_the_endpoint_off(worker, receiver, api, user):  # noqa: F811
    receiver.default = 500
    endpoint = _register(api, receiver.url)
    for content in ("Ana likes tea", "Ben plays chess"):
        memory_services.memory_create(owner=user, content=content)
    wait_for(lambda: Delivery.objects.filter(status="failed").count() == 2, worker=worker)
    assert [d.attempts for d in Delivery.objects.all()] == [3, 3]  # the first try and two retries each
    assert len(receiver.received) == 6

    switched = Endpoint.objects.get(pk=endpoint["id"])
    assert not switched.active and switched.failure_count == 2
    assert switched.disabled_reason.startswith("Switched off after 2 failed deliveries in a row")
    memory_services.memory_create(owner=user, content="Cleo runs marathons")
    assert Delivery.objects.count() == 2  # an endpoint switched off gets nothing
    assert api.get(f"/api/webhooks/{endpoint['id']}/").json()["disabled_reason"] == switched.disabled_reason
