"""The backlog gauges: waiting work per queue and the age of its oldest item, computed by the worker's task."""

from datetime import timedelta

import pytest
from django.utils import timezone

from conversations.models import Message
from documents.models import Document
from memento.tasks import observe_backlog
from memories.models import Memory
from observability import metrics
from tests.factories import DocumentFactory, MemoryFactory, MessageFactory


def gauge(name: str, queue: str) -> float:
    return metrics.REGISTRY.get_sample_value(name, {"queue": queue})


@pytest.mark.django_db
def test_the_task_sets_waiting_items_and_the_oldest_age_per_queue(user):
    hour_ago = timezone.now() - timedelta(hours=1)
    waiting = MessageFactory(conversation__owner=user)  # no vector yet; queued for extraction below
    Message.objects.filter(pk=waiting.pk).update(created_at=hour_ago, extraction_queued_at=timezone.now())
    MessageFactory(conversation__owner=user, extraction_status=Message.Extraction.DONE)  # done, but no vector
    not_due = MessageFactory(conversation__owner=user)  # waiting for its trigger: not extraction backlog
    Message.objects.filter(pk=not_due.pk).update(extraction_queued_at=None)
    MemoryFactory(owner=user)  # no embedding
    document = DocumentFactory(owner=user)
    Document.objects.filter(pk=document.pk).update(created_at=hour_ago - timedelta(hours=1))
    DocumentFactory(owner=user, processing_status=Document.Status.COMPLETED)

    figures = observe_backlog()

    assert figures["extraction"][0] == 1
    assert figures["message_embedding"][0] == 3
    assert figures["memory_embedding"][0] == Memory.objects.filter(embedding__isnull=True).count() == 1
    assert figures["documents"][0] == 1
    assert gauge("memento_backlog_items", "extraction") == 1
    assert 3600 <= gauge("memento_backlog_oldest_age_seconds", "extraction") < 3 * 3600
    assert 2 * 3600 <= gauge("memento_backlog_oldest_age_seconds", "documents") < 4 * 3600
    assert metrics.REGISTRY.get_sample_value("memento_backlog_updated_timestamp_seconds") > hour_ago.timestamp()


@pytest.mark.django_db
def test_an_empty_queue_is_zero_items_and_zero_age():
    figures = observe_backlog()
    assert figures["documents"] == (0, 0.0)
    assert gauge("memento_backlog_items", "documents") == 0
    assert gauge("memento_backlog_oldest_age_seconds", "documents") == 0
