"""Imports end to end in a real Celery worker: each format uploaded through the API is written in the background,
its conversations embedded and extracted by the normal pipeline so that their facts are found by search;
uploading every file again adds nothing."""

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from conversations.models import Conversation, Message
from imports.models import Import
from memories.models import Memory
from tests.factories import UserFactory, api_client
from tests.imports.samples import FILES, raw
from tests.worker import wait_for

pytestmark = pytest.mark.slow


def _upload_all(api) -> list[str]:
    ids = []
    for name, filename in FILES.items():
        response = api.post("/api/imports/", {"file": SimpleUploadedFile(filename, raw(name))}, format="multipart")
        assert response.status_code == 202, response.content
        ids.append(response.json()["id"])
    return ids


def _finished(ids) -> bool:
    return all(status in ("completed", "failed") for status in Import.objects.filter(pk__in=ids)
               .values_list("status", flat=True))


def _settled(owner) -> bool:
    """Every message embedded and every user turn extracted."""
    messages = Message.objects.filter(owner=owner)
    return (messages.exists() and not messages.filter(embedding__isnull=True).exists()
            and not messages.filter(extraction_status="pending").exists())


def _search(api, query: str) -> list[str]:
    response = api.post("/api/memories/search/", {"query": query, "limit": 5}, format="json")
    assert response.status_code == 200, response.content
    return [hit["memory"]["content"] for hit in response.json()["results"]]


def test_every_format_imports_through_the_worker_and_twice_adds_nothing(celery_worker):
    user = UserFactory()
    api = api_client(user)

    first = _upload_all(api)
    wait_for(lambda: _finished(first), timeout=300, worker=celery_worker)
    for job_id in first:
        body = api.get(f"/api/imports/{job_id}/").json()
        assert body["status"] == "completed", body
    wait_for(lambda: _settled(user), timeout=300, worker=celery_worker)

    assert Conversation.objects.filter(owner=user).count() == 2 + 2 + 2  # ChatGPT, Claude, JSON Lines
    assert any("peanut" in text for text in _search(api, "What is the user allergic to?"))
    assert any("Lisbon" in text for text in _search(api, "Where is the user moving?"))
    assert any("cartographer" in text for text in _search(api, "What is the user's job?"))
    assert any("window seats" in text for text in _search(api, "seat preference on flights"))
    assert any("bicycle repair" in text for text in _search(api, "employer"))
    assert not Message.objects.filter(owner=user, content__contains="trombone").exists()
    extracted = Memory.objects.filter(owner=user, source="extracted").count()
    assert extracted > 0
    before = (Conversation.objects.filter(owner=user).count(), Message.objects.filter(owner=user).count(),
              Memory.objects.filter(owner=user).count())

    second = _upload_all(api)
    wait_for(lambda: _finished(second), timeout=300, worker=celery_worker)
    for job_id in second:
        body = api.get(f"/api/imports/{job_id}/").json()
        assert body["status"] == "completed" and body["counts"]["duplicates"] == body["progress"]["total"], body
    assert (Conversation.objects.filter(owner=user).count(), Message.objects.filter(owner=user).count(),
            Memory.objects.filter(owner=user).count()) == before


@pytest.mark.django_db(transaction=True)
def test_a_small_import_is_not_stuck_behind_another_users_big_one(monkeypatch):
    monkeypatch.setenv("IMPORT_TASK_MESSAGES", "20")  # the worker's share per task
    from imports import services
    from tests.imports.samples import chatgpt_export, dumps
    from tests.worker import running_worker

    big_owner, small_owner = UserFactory(), UserFactory()
    with running_worker("postgres") as worker:
        big = services.import_upload(owner=big_owner, raw=dumps(chatgpt_export(30, 5)), filename="big.json")
        small = services.import_upload(owner=small_owner, raw=raw("claude"), filename="small.json")
        wait_for(lambda: _finished([big.pk, small.pk]), timeout=300, worker=worker)
    big.refresh_from_db()
    small.refresh_from_db()
    assert big.status == small.status == "completed"
    assert Message.objects.filter(owner=big_owner).count() == 300
    # the small import was queued behind the big one's first share, and the big one's next share behind it
    assert small.finished_at < big.finished_at


@pytest.mark.django_db(transaction=True)
def test_a_killed_worker_leaves_the_import_resumable(monkeypatch):
    """SIGKILL in the middle of an import: the next worker takes it up (its start sends unclaimed work again) and
    finishes it with every conversation written once."""
    import os
    import signal

    from imports import services
    from tests.imports.samples import chatgpt_export, dumps
    from tests.web import stop
    from tests.worker import broker_for, restore_broker, start_celery_worker, use_broker

    monkeypatch.setenv("IMPORT_TASK_MESSAGES", "10")
    owner = UserFactory()
    broker = broker_for("postgres", None)
    previous = use_broker(broker)
    try:
        worker = start_celery_worker(broker)
        try:
            job = services.import_upload(owner=owner, raw=dumps(chatgpt_export(40, 3)), filename="big.json")
            wait_for(lambda: job.items.filter(status="done").count() >= 3, timeout=300, worker=worker)
            os.kill(worker.pid, signal.SIGKILL)
            worker.wait(timeout=30)
        finally:
            stop(worker)
        assert Import.objects.get(pk=job.pk).status == "processing"
        worker = start_celery_worker(broker)
        try:
            wait_for(lambda: Import.objects.get(pk=job.pk).status == "completed", timeout=300, worker=worker)
        finally:
            stop(worker)
    finally:
        restore_broker(previous)
    assert Conversation.objects.filter(owner=owner).count() == 40
    assert Message.objects.filter(owner=owner).count() == 240
    assert sorted(Conversation.objects.filter(owner=owner).values_list("title", flat=True)) == sorted(
        f"Chat {i}" for i in range(40))
