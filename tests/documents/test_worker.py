"""The pipeline in real Celery worker processes: an upload is processed in the background, a small upload is not
stuck behind another user's big one, and a worker killed (SIGKILL) in the middle of a document leaves it
resumable; the retry ends with the same chunks as a clean run."""

import os
import signal

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from documents import processing, services
from documents.models import Chunk, Document
from tests.documents import files
from tests.documents.conftest import close
from tests.factories import UserFactory, api_client
from tests.web import stop
from tests.worker import (
    broker_for,
    restore_broker,
    running_worker,
    start_celery_worker,
    use_broker,
    wait_for,
)

pytestmark = pytest.mark.slow


def _state(document_id):
    document = Document.objects.get(pk=document_id)
    return document.processing_status, document.chunks_done, document.chunks_total


def test_an_upload_is_processed_in_the_background(celery_worker):
    user = UserFactory()
    api = api_client(user)
    data = files.as_pdf(files.sample_sections(31, sections=3), title="Roadmap")
    response = api.post("/api/documents/", {"file": SimpleUploadedFile("roadmap.pdf", data)}, format="multipart")
    assert response.status_code == 202 and response.json()["status"] == "pending"
    document_id = response.json()["id"]

    wait_for(lambda: _state(document_id)[0] in ("completed", "failed"))
    body = api.get(f"/api/documents/{document_id}/").json()
    assert body["status"] == "completed", body["error_message"]
    assert body["title"] == "Roadmap" and body["page_count"] >= 1
    found = api.post("/api/chunks/search/", {"query": "customer feedback about onboarding"}, format="json").json()
    assert found["results"] and found["results"][0]["chunk"]["document"] == document_id
    assert api.get(f"/api/documents/{document_id}/memories/").json()["count"] > 0


@pytest.mark.django_db(transaction=True)
def test_a_small_upload_is_not_stuck_behind_another_users_big_one(monkeypatch):
    monkeypatch.setenv("DOCUMENT_TASK_CHUNKS", "32")  # the worker's share per task
    big = files.as_markdown(files.sample_sections(34, sections=40, paragraphs=5))
    small = files.as_markdown(files.sample_sections(35, sections=1, paragraphs=2))
    with running_worker("postgres") as worker:
        a = services.document_upload(owner=UserFactory(), file=SimpleUploadedFile("book.md", big))
        b = services.document_upload(owner=UserFactory(), file=SimpleUploadedFile("note.md", small))
        wait_for(lambda: _state(a.pk)[0] == _state(b.pk)[0] == "completed", timeout=300, worker=worker)
    a.refresh_from_db()
    b.refresh_from_db()
    assert a.chunks_total > 3 * 32 and b.chunks_total <= 32
    # B was queued behind A's first share, and A's next share behind B: B finished first
    assert b.processed_at < a.processed_at


def _snapshot(document):
    chunks = list(Chunk.objects.filter(document=document).order_by("chunk_index"))
    return (
        [(c.chunk_index, c.content, c.page_number, c.token_count, c.metadata) for c in chunks],
        [list(c.embedding) for c in chunks],
        sorted((m.content, m.source_ref["chunk_index"]) for m in services.derived_memories(document)),
    )


@pytest.mark.django_db(transaction=True)
def test_a_killed_worker_leaves_the_document_resumable():
    data = files.as_markdown(files.sample_sections(32, sections=40, paragraphs=5))
    clean = Document.objects.get(pk=processing.document_process(document_id=services.document_upload(
        owner=UserFactory(), file=SimpleUploadedFile("clean.md", data)).pk).pk)  # in this process, uninterrupted
    assert clean.processing_status == "completed" and clean.chunks_total > 3 * processing.batch_size()

    broker = broker_for("postgres", None)
    previous = use_broker(broker)
    worker = start_celery_worker(broker)
    try:
        document = services.document_upload(owner=UserFactory(), file=SimpleUploadedFile("notes.md", data))
        # a worker starting on a loaded machine may take minutes: wait_for's own generous timeout, not a shorter one
        wait_for(lambda: 0 < _state(document.pk)[1] < clean.chunks_total - processing.batch_size(), interval=0.05,
                 worker=worker)
        os.kill(worker.pid, signal.SIGKILL)
        worker.wait(timeout=30)
        log = worker.log
        status, done, total = _state(document.pk)
        assert status == "processing" and 0 < done < total

        worker = start_celery_worker(broker)
        # the killed worker's task is gone with it: the worker sends the unclaimed document again as it starts
        # (as it starts, not at the next stale-work sweep; the document is taken up where it stopped)
        wait_for(lambda: _state(document.pk)[0] != "processing", worker=worker)
        log = log + worker.log
    finally:
        stop(worker)
        restore_broker(previous)

    document.refresh_from_db()
    assert document.processing_status == "completed", document.error_message + "".join(log[-50:])
    structure, vectors, memories = _snapshot(document)
    clean_structure, clean_vectors, clean_memories = _snapshot(clean)
    assert structure == clean_structure
    assert memories == clean_memories
    assert all(close(a, b) for a, b in zip(vectors, clean_vectors, strict=True))
