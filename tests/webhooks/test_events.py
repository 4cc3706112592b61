"""Events leave the apps that write on commit (core.events) and become one delivery per subscribed endpoint."""

import pytest
from django.db import transaction

from conversations import processing as conversation_processing
from conversations import services as conversation_services
from core import events
from documents import processing
from documents import services as document_services
from memories import services as memory_services
from memories.batch import memory_batch_create
from profiles import consolidation
from tests.documents.conftest import upload
from tests.factories import ConversationFactory
from webhooks import tasks
from webhooks.models import Delivery, Endpoint

pytestmark = pytest.mark.django_db


@pytest.fixture
def queued(monkeypatch):
    """Delivery ids handed to the worker (not sent: these tests are about which deliveries are made)."""
    sent: list[str] = []
    monkeypatch.setattr(tasks.deliver, "delay", sent.append)
    return sent


@pytest.fixture
def endpoint(user):
    return Endpoint.objects.create(owner=user, url="https://1.1.1.1/hook", secret="whsec_x")


def made() -> list[str]:
    return list(Delivery.objects.order_by("created_at").values_list("event", flat=True))


def test_each_memory_write_sends_its_event(user, endpoint, queued, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        old = memory_services.memory_create(owner=user, content="Ana lives in Porto").memory
    with django_capture_on_commit_callbacks(execute=True):
        new = memory_services.memory_create(owner=user, content="Ana lives in Lisbon", supersedes=old.pk).memory
    with django_capture_on_commit_callbacks(execute=True):
        memory_services.memory_update(memory=new, data={"content": "Ana lives in Lisbon, Portugal"})
    with django_capture_on_commit_callbacks(execute=True):
        memory_services.memory_soft_delete(memory=new)
    with django_capture_on_commit_callbacks(execute=True):
        memory_services.memory_forget(memory=old)
    with django_capture_on_commit_callbacks(execute=True):
        memory_batch_create(owner=user, items=[{"content": "Ben plays chess"}, {"content": "Cleo sings"}])

    assert made() == ["memory.created", "memory.created", "memory.superseded", "memory.updated", "memory.deleted",
                      "memory.updated", "memory.forgotten", "memory.created", "memory.created"]  # the forgotten
    # memory's successor lost its link (an update of its own)
    assert sorted(queued) == sorted(str(pk) for pk in Delivery.objects.values_list("pk", flat=True))
    superseded = Delivery.objects.get(event="memory.superseded").payload
    assert superseded["id"] == str(old.pk) and superseded["superseded_by"] == str(new.pk)
    assert Delivery.objects.get(event="memory.forgotten").payload == {"id": str(old.pk)}  # erased: no content
    assert {d.owner_id for d in Delivery.objects.all()} == {user.pk}


def test_a_rolled_back_write_sends_nothing(user, endpoint, queued, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True), pytest.raises(RuntimeError), transaction.atomic():
        memory_services.memory_create(owner=user, content="Ana lives in Porto")
        raise RuntimeError
    assert not Delivery.objects.exists() and queued == []


def test_endpoints_get_only_the_events_they_subscribe_to_and_only_their_owners(
        user, other_user, endpoint, queued, django_capture_on_commit_callbacks):
    deletes = Endpoint.objects.create(owner=user, url="https://1.1.1.1/d", secret="s", events=["memory.deleted"])
    Endpoint.objects.create(owner=user, url="https://1.1.1.1/off", secret="s", active=False)
    Endpoint.objects.create(owner=other_user, url="https://1.1.1.1/other", secret="s")
    with django_capture_on_commit_callbacks(execute=True):
        memory = memory_services.memory_create(owner=user, content="Ana likes tea").memory
    with django_capture_on_commit_callbacks(execute=True):
        memory_services.memory_soft_delete(memory=memory)
    assert sorted(Delivery.objects.values_list("endpoint__url", "event")) == [
        (deletes.url, "memory.deleted"), (endpoint.url, "memory.created"), (endpoint.url, "memory.deleted")]


def test_documents_announce_processed_and_failed(user, endpoint, queued, eager, django_capture_on_commit_callbacks):
    bad = document_services.document_upload(owner=user, file=upload("bad.md", b"# Bad\n\nnothing\n"))
    good = document_services.document_upload(owner=user, file=upload("plan.md", b"# Plan\n\nAna moves in May.\n"))
    with django_capture_on_commit_callbacks(execute=True):  # the owner's next document is processed (eager)
        document_services.document_mark_failed(document_id=bad.pk, error="Stopped by an internal error.")
    with django_capture_on_commit_callbacks(execute=True):
        processing.document_process(document_id=good.pk)
    documents = {d.event: d.payload for d in Delivery.objects.filter(event__startswith="document.")}
    assert documents["document.processed"]["id"] == str(good.pk)
    assert documents["document.processed"]["status"] == "completed"
    assert documents["document.failed"] == {**documents["document.failed"], "id": str(bad.pk), "status": "failed",
                                            "error": "Stopped by an internal error."}


def test_an_extracted_message_and_a_consolidation_run_are_announced(user, endpoint, queued, eager,
                                                                   django_capture_on_commit_callbacks):
    conversation = ConversationFactory(owner=user)
    [(message, _)] = conversation_services.messages_append(
        conversation=conversation, messages=[{"role": "user", "content": "I am allergic to peanuts."}])
    with django_capture_on_commit_callbacks(execute=True):
        conversation_processing.message_extract(message_id=message.pk)
    assert Delivery.objects.get(event="conversation.extracted").payload == {
        "conversation_id": str(conversation.pk), "message_id": str(message.pk)}
    with django_capture_on_commit_callbacks(execute=True):
        run = consolidation.consolidation_start(owner=user)
    assert Delivery.objects.get(event="consolidation.run").payload["id"] == run.pk


def test_every_event_is_known_once():
    assert len(set(events.EVENTS)) == len(events.EVENTS) == 9
    with pytest.raises(ValueError):
        events.emit("memory.eaten", owner_id=1, payload={})
