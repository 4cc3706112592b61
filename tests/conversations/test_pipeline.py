"""The extraction pipeline with a real Celery worker process, on PostgreSQL and on Redis brokers."""

from datetime import timedelta

import pytest
from django.db.models import Max
from django.utils import timezone

from conversations import services
from conversations.models import Message
from memories.models import Memory
from tests.factories import ConversationFactory, UserFactory, api_client
from tests.worker import wait_for

pytestmark = pytest.mark.slow


def test_posted_message_becomes_a_searchable_memory(celery_worker):
    user = UserFactory()
    api = api_client(user)
    cid = api.post("/api/conversations/", {"title": "chat"}, format="json").json()["id"]
    response = api.post(f"/api/conversations/{cid}/messages/", {"messages": [
        {"role": "user", "content": "My daughter Emma starts school in May."},
        {"role": "user", "content": "Thanks, that's all!"},
    ]}, format="json")
    assert response.status_code == 201
    ids = [m["id"] for m in response.json()]
    wait_for(lambda: all(m.extraction_status == "done" for m in Message.objects.filter(pk__in=ids)),
             worker=celery_worker)
    memory = Memory.objects.get(owner=user)
    assert "Emma" in memory.content and str(memory.message_id) == ids[0]
    found = api.post("/api/memories/search/", {"query": "when does Emma start school?"}, format="json").json()
    assert found["results"][0]["memory"]["id"] == str(memory.pk)


def test_appended_history_is_embedded_by_the_worker_then_extracted(celery_worker):
    user = UserFactory()
    api = api_client(user)
    cid = api.post("/api/conversations/", {}, format="json").json()["id"]
    turns = [{"role": "user" if i % 2 else "assistant", "content": f"Turn {i} mentions the word blueberry{i}.",
              "sent_at": f"2023-01-01T10:{i:02d}:00Z"} for i in range(40)]
    turns.append({"role": "user", "content": "I'm allergic to shellfish.", "sent_at": "2023-01-01T11:00:00Z"})
    response = api.post(f"/api/conversations/{cid}/messages/", {"messages": turns}, format="json")
    assert response.status_code == 201 and not any(m["embedded"] for m in response.json())  # never blocks
    wait_for(lambda: not Message.objects.filter(conversation_id=cid, embedding__isnull=True).exists(),
             worker=celery_worker)
    wait_for(lambda: not Message.objects.filter(conversation_id=cid, extraction_status="pending").exists(),
             worker=celery_worker)
    found = api.post("/api/memories/search/", {"query": "seafood allergy", "include_messages": True},
                     format="json").json()
    assert found["messages"][0]["message"]["content"] == "I'm allergic to shellfish."
    assert found["results"][0]["memory"]["content"] == "The user is allergic to shellfish."


def test_a_lost_task_is_picked_up_again(celery_worker):
    """The database, not the broker, records what is left: a pending message whose task was lost (a worker
    killed mid-task, a broker restarted) is queued again by the periodic sweep and finishes exactly once."""
    user = UserFactory()
    conversation = ConversationFactory(owner=user)
    # queued a while ago, but the task never reached a worker
    message = Message.objects.create(conversation=conversation, owner=user, role="user", sequence=1,
                                     content="I'm vegetarian.",
                                     extraction_queued_at=timezone.now() - timedelta(minutes=10))
    waiting = Message.objects.create(conversation=conversation, owner=user, role="user", sequence=2,
                                     content="I'm allergic to shellfish.")  # never queued: its trigger is not met
    assert services.messages_requeue_stale() == 1
    wait_for(lambda: Message.objects.get(pk=message.pk).extraction_status == "done", worker=celery_worker)
    assert [m.content for m in Memory.objects.filter(owner=user)] == ["The user is vegetarian."]
    assert services.messages_requeue_stale() == 0
    assert Message.objects.get(pk=waiting.pk).extraction_status == "pending"


def test_a_big_import_does_not_hold_up_another_users_extraction(celery_worker):
    """User A imports 200 messages, then user B sends one: B's is extracted after at most one share of A's (the
    broker's queue holds one extraction task per owner, not one per message)."""
    a, b = UserFactory(), UserFactory()
    turns = [{"role": "user", "content": f"I visited city number {i} on a trip with colleague Person{i}."}
             for i in range(200)]
    services.messages_append(conversation=ConversationFactory(owner=a), messages=turns)
    [(message, _)] = services.messages_append(conversation=ConversationFactory(owner=b), messages=[
        {"role": "user", "content": "I'm allergic to shellfish."}])
    wait_for(lambda: not Message.objects.filter(extraction_status="pending").exists(), timeout=300,
             worker=celery_worker)
    assert not Message.objects.filter(extraction_status="failed").exists()
    # every extraction leaves a version naming its message (ADD or NOOP)
    b_done = Memory.history.get(history_change_reason__contains=f"message {message.pk}").history_date
    a_done = Memory.history.filter(owner=a).aggregate(last=Max("history_date"))["last"]
    assert b_done < a_done
