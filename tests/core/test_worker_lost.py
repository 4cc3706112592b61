"""A Celery worker killed outright (SIGKILL) in the middle of an extraction: the message's task went with it, and
the worker sends the work again as it starts; the message is extracted once (one LLM answer used, one memory)."""

import json
import os
import signal

import pytest

from conversations import services
from conversations.models import Message
from memories.models import Memory
from tests.factories import ConversationFactory, UserFactory
from tests.web import stop
from tests.worker import broker_for, restore_broker, start_celery_worker, use_broker, wait_for

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

MEMORY = {"content": "The user is vegetarian", "category": "preference", "subject": "The user",
          "attribute": "diet", "scope": "user", "tags": ["food"], "importance": 0.7, "explicit": False,
          "entities": {"people": [], "places": [], "organizations": [], "things": []}}


def test_a_worker_killed_mid_extraction_resumes_when_it_starts_again(openai_server, monkeypatch):
    for name, value in {"MEMORY_LLM_API_BASE": openai_server.base_url, "MEMORY_LLM_MODEL": "fake-chat",
                        "MEMORY_LLM_API_KEY": "k", "MEMORY_LLM_TIMEOUT": "60"}.items():
        monkeypatch.setenv(name, value)
    openai_server.default_reply = lambda request: json.dumps({"memories": [MEMORY]})
    openai_server.delay(60, times=1, endpoint="/chat/completions")  # the first extraction hangs: killed there
    user = UserFactory()
    broker = broker_for("postgres", None)
    previous = use_broker(broker)
    worker = start_celery_worker(broker)
    try:
        [(message, _)] = services.messages_append(conversation=ConversationFactory(owner=user),
                                                  messages=[{"role": "user", "content": "I'm vegetarian."}])
        wait_for(lambda: openai_server.requests_to("/chat/completions"), worker=worker)
        os.kill(worker.pid, signal.SIGKILL)
        worker.wait(timeout=30)
        assert Message.objects.get(pk=message.pk).extraction_status == "pending"

        worker = start_celery_worker(broker)
        wait_for(lambda: Message.objects.get(pk=message.pk).extraction_status != "pending", timeout=60,
                 worker=worker)
    finally:
        stop(worker)
        restore_broker(previous)
    assert Message.objects.get(pk=message.pk).extraction_status == "done"
    assert [m.content for m in Memory.objects.filter(owner=user)] == ["The user is vegetarian"]
    assert len(openai_server.requests_to("/chat/completions")) == 2  # the killed call, then one more
