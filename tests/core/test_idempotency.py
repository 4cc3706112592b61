"""Idempotency-Key on every creating write: a retry with the same key and request gets the first answer and writes
nothing; the same key with another request, or while the first is in progress, is a 409 (IETF draft)."""

import threading
from datetime import timedelta

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import DatabaseError, connection, transaction
from django.utils import timezone

from conversations.models import Conversation, Message
from core import rls
from core.idempotency import HEADER, idempotency_keys_purge
from core.models import IdempotencyKey
from documents.models import Document
from imports.models import Import
from memories import services as memory_services
from memories.models import Memory
from tests.factories import ConversationFactory, api_client
from tests.imports.samples import raw

pytestmark = pytest.mark.django_db


def _memories(user, other):
    return ("post", "/api/memories/", {"content": f"Ana likes {other}"}, "json",
            lambda: Memory.objects.filter(owner=user).count())


def _batch(user, other):
    return ("post", "/api/memories/batch/", {"items": [{"content": f"Ben plays {other}"}, {"content": "Cleo sings"}]},
            "json", lambda: Memory.objects.filter(owner=user).count())


def _conversation(user, other):
    return ("post", "/api/conversations/", {"title": f"chat about {other}"}, "json",
            lambda: Conversation.objects.filter(owner=user).count())


def _messages(user, other):
    conversation = ConversationFactory(owner=user)
    return ("post", f"/api/conversations/{conversation.pk}/messages/",
            {"messages": [{"role": "user", "content": f"I like {other}"}]}, "json",
            lambda: Message.objects.filter(owner=user).count())


def _document(user, other):
    return ("post", "/api/documents/",
            {"file": SimpleUploadedFile("notes.md", f"# Notes\n\nAna likes {other}.\n".encode())}, "multipart",
            lambda: Document.objects.filter(owner=user).count())


def _store_put(user, other):
    # a put is an upsert: a second write would be a new version of the item's memory
    return ("put", "/api/store/items", {"namespace": ["prefs"], "key": "drink", "value": {"text": other}}, "json",
            lambda: Memory.history.filter(owner=user).count())


def _store_batch(user, other):
    return ("post", "/api/store/batch", {"ops": [{"op": "put", "namespace": ["prefs"], "key": "food",
                                                  "value": {"text": other}}]}, "json",
            lambda: Memory.history.filter(owner=user).count())


def _import(user, other):
    data = raw("mem0") if other == "tea" else raw("langgraph")
    return ("post", "/api/imports/", {"file": SimpleUploadedFile("export.json", data)}, "multipart",
            lambda: Import.objects.filter(owner=user).count())


KINDS = [_memories, _batch, _conversation, _messages, _document, _store_put, _store_batch, _import]


def send(api, method, path, body, format, key="key-1"):
    if format == "multipart":  # a file is read once: a fresh upload of the same bytes each time
        body = {name: SimpleUploadedFile(value.name, (value.seek(0), value.read())[1])
                if hasattr(value, "read") else value for name, value in body.items()}
    return getattr(api, method)(path, body, format=format, **({f"HTTP_{HEADER.upper().replace('-', '_')}": key}
                                                               if key else {}))


@pytest.mark.parametrize("kind", KINDS, ids=lambda kind: kind.__name__.strip("_"))
def test_a_retry_gets_the_first_answer_and_another_body_is_a_409(api, user, kind):
    method, path, body, format, count = kind(user, "tea")
    first = send(api, method, path, body, format)
    assert first.status_code < 300, first.content
    written = count()

    again = send(api, method, path, body, format)
    assert again.status_code == first.status_code
    assert again.content == first.content
    assert again["Idempotent-Replayed"] == "true" and not first.has_header("Idempotent-Replayed")
    assert count() == written

    other_body = kind(user, "coffee")[2]
    conflict = send(api, method, path, other_body, format)
    assert conflict.status_code == 409 and "another request" in conflict.json()["detail"]
    assert count() == written

    fresh = send(api, method, path, other_body, format, key="key-2")
    assert fresh.status_code < 300 and not fresh.has_header("Idempotent-Replayed")


@pytest.mark.parametrize("kind", KINDS, ids=lambda kind: kind.__name__.strip("_"))
def test_a_request_still_in_progress_is_a_409_and_writes_nothing(api, user, kind):
    method, path, body, format, count = kind(user, "tea")
    IdempotencyKey.objects.create(owner=user, key="key-1", fingerprint="0" * 64, method="POST", path=path)
    IdempotencyKey.objects.filter(owner=user).update(fingerprint=_print(api, method, path, body, format))
    written = count()
    response = send(api, method, path, body, format)
    assert response.status_code == 409 and "still in progress" in response.json()["detail"]
    assert count() == written


def _print(api, method, path, body, format) -> str:
    """The fingerprint a request gets: sent once under a throw-away key, read back, that row removed."""
    send(api, method, path, body, format, key="probe")
    row = IdempotencyKey.objects.get(key="probe")
    row.delete()
    return row.fingerprint


@pytest.mark.django_db(transaction=True)
def test_a_retry_while_the_first_is_being_answered_is_a_409(user, monkeypatch):
    """Two clients at once: the second meets the first's claim (committed before its write began)."""
    entered, release, answers = threading.Event(), threading.Event(), {}
    real = memory_services.memory_create

    def slow(**kwargs):
        entered.set()
        release.wait(60)
        return real(**kwargs)

    monkeypatch.setattr(memory_services, "memory_create", slow)
    body = {"content": "Ana likes tea"}

    def first():
        try:
            answers["first"] = send(api_client(user), "post", "/api/memories/", body, "json")
        finally:
            connection.close()

    thread = threading.Thread(target=first)
    thread.start()
    try:
        assert entered.wait(60)
        second = send(api_client(user), "post", "/api/memories/", body, "json")
        assert second.status_code == 409 and "still in progress" in second.json()["detail"]
    finally:
        release.set()
        thread.join(60)
    assert answers["first"].status_code == 201
    third = send(api_client(user), "post", "/api/memories/", body, "json")
    assert third.status_code == 201 and third["Idempotent-Replayed"] == "true"
    assert Memory.objects.filter(owner=user).count() == 1


def test_without_the_header_every_request_writes(api, user):
    for _ in range(2):
        assert send(api, "post", "/api/conversations/", {}, "json", key=None).status_code == 201
    assert Conversation.objects.filter(owner=user).count() == 2
    assert not IdempotencyKey.objects.exists()


def test_a_key_is_the_users_own(api, other_api, user, other_user):
    assert send(api, "post", "/api/memories/", {"content": "Ana likes tea"}, "json").status_code == 201
    response = send(other_api, "post", "/api/memories/", {"content": "Ana likes tea"}, "json")
    assert response.status_code == 201 and not response.has_header("Idempotent-Replayed")
    assert Memory.objects.filter(owner=other_user).count() == 1
    with rls.as_user(user.pk):
        assert list(IdempotencyKey.objects.values_list("owner_id", flat=True)) == [user.pk]
        with pytest.raises(DatabaseError, match="row-level security"), transaction.atomic():
            IdempotencyKey.objects.create(owner=other_user, key="x", fingerprint="f", method="POST", path="/")


def test_an_answer_older_than_the_ttl_is_forgotten(api, user):
    body = {"content": "Ana likes tea"}
    assert send(api, "post", "/api/conversations/", body, "json").status_code == 400  # refused: no such field
    IdempotencyKey.objects.update(created_at=timezone.now() - timedelta(hours=25))
    assert send(api, "post", "/api/conversations/", {}, "json").status_code == 201  # not a 409: expired
    assert IdempotencyKey.objects.get().response_status == 201


def test_a_refusal_is_replayed_too(api, user):
    first = send(api, "post", "/api/memories/", {"content": ""}, "json")
    assert first.status_code == 400
    again = send(api, "post", "/api/memories/", {"content": ""}, "json")
    assert (again.status_code, again.json(), again["Idempotent-Replayed"]) == (400, first.json(), "true")


def test_a_server_error_releases_the_key(api, user, monkeypatch):
    def broken(**kwargs):
        raise RuntimeError("boom")

    monkeypatch.setattr(memory_services, "memory_create", broken)
    api.raise_request_exception = False
    assert send(api, "post", "/api/memories/", {"content": "Ana likes tea"}, "json").status_code == 500
    assert not IdempotencyKey.objects.exists()
    monkeypatch.undo()
    assert send(api, "post", "/api/memories/", {"content": "Ana likes tea"}, "json").status_code == 201


@pytest.mark.parametrize("key", ["", "x" * 256, "clé", "a\tb"])
def test_a_bad_key_is_a_400_naming_the_header(api, user, key):
    response = send(api, "post", "/api/memories/", {"content": "Ana likes tea"}, "json", key=key or " ")
    assert response.status_code == 400 and list(response.json()) == [HEADER]
    assert not Memory.objects.exists()


def test_a_quoted_key_is_the_same_key(api, user):
    assert send(api, "post", "/api/conversations/", {}, "json", key='"k-1"').status_code == 201
    assert send(api, "post", "/api/conversations/", {}, "json", key="k-1")["Idempotent-Replayed"] == "true"


def test_other_methods_ignore_the_header(api, user):
    conversation = ConversationFactory(owner=user)
    for _ in range(2):
        response = api.get(f"/api/conversations/{conversation.pk}/messages/", HTTP_IDEMPOTENCY_KEY="k")
        assert response.status_code == 200
    assert not IdempotencyKey.objects.exists()


def test_the_purge_deletes_only_expired_records(user):
    old = IdempotencyKey.objects.create(owner=user, key="old", fingerprint="f", method="POST", path="/")
    IdempotencyKey.objects.create(owner=user, key="new", fingerprint="f", method="POST", path="/")
    IdempotencyKey.objects.filter(pk=old.pk).update(created_at=timezone.now() - timedelta(hours=25))
    assert idempotency_keys_purge() == 1
    assert list(IdempotencyKey.objects.values_list("key", flat=True)) == ["new"]
