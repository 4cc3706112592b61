"""Idempotency-Key with the real worker: a retried creating write queues its background work once."""

import pytest

from conversations.models import Message
from core.idempotency import HEADER
from memories.models import Memory
from tests.factories import UserFactory, api_client
from tests.worker import wait_for

pytestmark = pytest.mark.slow

KEY = {f"HTTP_{HEADER.upper().replace('-', '_')}": "append-1"}


def test_a_retried_append_is_stored_and_extracted_once(celery_worker):
    user = UserFactory()
    api = api_client(user)
    cid = api.post("/api/conversations/", {"title": "chat"}, format="json").json()["id"]
    body = {"messages": [{"role": "user", "content": "My sister Noor lives in Leeds."}]}

    first = api.post(f"/api/conversations/{cid}/messages/", body, format="json", **KEY)
    again = api.post(f"/api/conversations/{cid}/messages/", body, format="json", **KEY)

    assert first.status_code == 201 and again.status_code == 201
    assert again["Idempotent-Replayed"] == "true" and again.json() == first.json()
    wait_for(lambda: Message.objects.filter(owner=user, extraction_status="done").exists(), worker=celery_worker)
    assert Message.objects.filter(owner=user).count() == 1
    assert [m.content for m in Memory.objects.filter(owner=user)] == ["The user's sister Noor lives in Leeds."]
