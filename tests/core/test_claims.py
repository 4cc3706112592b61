"""Claims: work another session (another worker) is doing is neither done twice nor sent again, and a session that
goes away (a killed worker) releases its claims at once. The other worker is a real second PostgreSQL session."""

import time
from datetime import timedelta

import psycopg
import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.utils import timezone

from conversations import processing as conversation_processing
from conversations import services as conversation_services
from conversations.models import Message
from core.claims import ClaimKind, claim, unclaimed
from documents import processing
from documents import services as document_services
from documents.models import Chunk, Document
from memories.models import Memory
from tests.documents import files
from tests.factories import ConversationFactory
from tests.web import database_url

pytestmark = pytest.mark.django_db(transaction=True)


def other_worker(kind: int, object_id) -> psycopg.Connection:
    """A second session holding the claim on `object_id`, as a worker busy with it would; close() to kill it."""
    session = psycopg.connect(database_url(), autocommit=True)
    assert session.execute("SELECT pg_try_advisory_lock(%s, hashtext(%s))", [kind, str(object_id)]).fetchone()[0]
    return session


def kill(session: psycopg.Connection) -> None:
    """Close the session and wait until its server process has gone (and its locks with it): PostgreSQL notices a
    closed connection at once, but in its own time."""
    pid = session.info.backend_pid
    session.close()
    with psycopg.connect(database_url(), autocommit=True) as watcher:
        deadline = time.monotonic() + 10
        while watcher.execute("SELECT 1 FROM pg_stat_activity WHERE pid = %s", [pid]).fetchone():
            assert time.monotonic() < deadline
            time.sleep(0.01)


def test_a_claim_held_elsewhere_is_refused_and_released_when_its_session_dies():
    busy = other_worker(7, "abc")
    with claim(7, "abc") as mine:
        assert mine is False
    assert unclaimed(7, ["abc", "def"]) == ["def"]
    kill(busy)  # SIGKILL does the same to a worker's connection
    assert unclaimed(7, ["abc", "def"]) == ["abc", "def"]
    with claim(7, "abc") as mine:
        assert mine is True
        assert unclaimed(7, ["abc"]) == ["abc"]  # this session's own claim does not hide it from itself
        elsewhere = psycopg.connect(database_url(), autocommit=True)
        assert not elsewhere.execute("SELECT pg_try_advisory_lock(7, hashtext('abc'))").fetchone()[0]
    assert elsewhere.execute("SELECT pg_try_advisory_lock(7, hashtext('abc'))").fetchone()[0]  # released
    elsewhere.close()


def _document(user) -> Document:
    data = files.as_markdown(files.sample_sections(1))
    return document_services.document_upload(owner=user, file=SimpleUploadedFile("notes.md", data))


def test_a_document_another_worker_processes_is_left_to_it_and_not_sent_again(user, monkeypatch):
    sent = []
    monkeypatch.setattr(processing.tasks.process_document, "delay", sent.append)
    document = _document(user)
    sent.clear()  # the upload's own task
    busy = other_worker(ClaimKind.DOCUMENT, document.pk)
    try:
        assert processing.document_process(document_id=document.pk).processing_status == Document.Status.PENDING
        assert not Chunk.objects.filter(document=document).exists()
        assert processing.documents_requeue_stale(older_than_seconds=0) == 0 and sent == []
    finally:
        kill(busy)  # the worker dies
    assert processing.documents_requeue_stale(older_than_seconds=0) == 1 and sent == [str(document.pk)]
    assert processing.document_process(document_id=document.pk).processing_status == Document.Status.COMPLETED


def test_an_unclaimed_queued_document_is_sent_again_after_a_minute_a_pending_one_after_ten(user, other_user,
                                                                                        monkeypatch):
    sent = []
    monkeypatch.setattr(processing.tasks.process_document, "delay", sent.append)
    started, waiting = _document(user), _document(other_user)  # each owner's first: both in the queue
    sent.clear()  # the uploads' own tasks
    minute_ago = timezone.now() - timedelta(seconds=61)
    Document.objects.filter(pk=started.pk).update(processing_status=Document.Status.PROCESSING,
                                                  updated_at=minute_ago, queued_at=minute_ago)
    Document.objects.filter(pk=waiting.pk).update(updated_at=minute_ago, queued_at=minute_ago)
    assert processing.documents_requeue_stale() == 1 and sent == [str(started.pk)]
    assert processing.documents_requeue_stale() == 0 and len(sent) == 1  # stamped: not sent once per sweep
    long_ago = timezone.now() - timedelta(minutes=11)
    Document.objects.filter(pk__in=[started.pk, waiting.pk]).update(updated_at=long_ago, queued_at=long_ago)
    assert processing.documents_requeue_stale() == 2 and sorted(sent[1:]) == sorted([str(started.pk), str(waiting.pk)])


def test_a_message_another_worker_extracts_is_left_to_it(user):
    conversation = ConversationFactory(owner=user)
    message = Message.objects.create(conversation=conversation, owner=user, role="user", sequence=1,
                                     content="I'm vegetarian.", extraction_queued_at=timezone.now())
    busy = other_worker(ClaimKind.MESSAGE, message.pk)
    try:
        assert conversation_processing.message_extract(message_id=message.pk).extraction_status == "pending"
        assert not Memory.objects.filter(owner=user).exists()
    finally:
        kill(busy)
    assert conversation_processing.message_extract(message_id=message.pk).extraction_status == "done"
    assert Memory.objects.filter(owner=user).count() == 1


def test_an_owner_another_worker_extracts_for_is_left_to_it_and_not_sent_again(user, monkeypatch):
    sent = []
    monkeypatch.setattr(conversation_services.tasks.extract_pending, "delay", sent.append)
    conversation = ConversationFactory(owner=user)
    message = Message.objects.create(conversation=conversation, owner=user, role="user", sequence=1,
                                     content="I'm vegetarian.", extraction_queued_at=timezone.now())
    busy = other_worker(ClaimKind.EXTRACTION_OWNER, user.pk)
    try:
        assert conversation_processing.messages_extract_share(owner_id=user.pk) == 0
        assert Message.objects.get(pk=message.pk).extraction_status == "pending"
        assert conversation_services.messages_requeue_stale(older_than=timedelta(0)) == 0 and sent == []
    finally:
        kill(busy)  # the worker dies
    assert conversation_services.messages_requeue_stale(older_than=timedelta(0)) == 1 and sent == [str(user.pk)]
    assert conversation_processing.messages_extract_share(owner_id=user.pk) == 1
    assert Message.objects.get(pk=message.pk).extraction_status == "done"
    assert Memory.objects.filter(owner=user).count() == 1
