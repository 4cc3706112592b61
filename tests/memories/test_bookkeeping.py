"""A search's bookkeeping (accessed_at, SEARCH events) is written after its response, not before it."""

from contextlib import contextmanager

from django.core.signals import request_finished, request_started
from django.db import close_old_connections
from rest_framework.test import APIRequestFactory, force_authenticate

from memento.search import MemorySearchView
from memories import batch
from memories.bookkeeping import touch_after_response
from memories.models import Memory, MemoryEvent


@contextmanager
def serving():
    """A request's lifecycle as a WSGI server drives it: request_started, the view, then request_finished when
    the server closes the sent response (without closing the test's connection, as Django's test client does)."""
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    try:
        request_started.send(sender=None)
        yield
    finally:
        request_finished.send(sender=None)  # the request is over, whatever the test did
        request_started.connect(close_old_connections)
        request_finished.connect(close_old_connections)


def test_search_response_is_built_before_its_bookkeeping_is_written(user):
    memory = batch.memory_batch_create(owner=user, items=[{"content": "Allergic to peanuts"}], actor=user)[0].memory
    with serving():
        request = APIRequestFactory().post("/api/memories/search/", {"query": "peanut allergy"}, format="json")
        force_authenticate(request, user)
        response = MemorySearchView.as_view()(request)
        response.render()
        assert [r["memory"]["id"] for r in response.data["results"]] == [str(memory.pk)]
        # the response is complete and nothing is written yet
        assert not MemoryEvent.objects.filter(action="SEARCH").exists()
        assert Memory.objects.get(pk=memory.pk).accessed_at is None
        response.close()  # the server has sent it
    event = MemoryEvent.objects.get(action="SEARCH")
    assert (event.memory_id, event.action, event.query) == (memory.pk, "SEARCH", "peanut allergy")
    assert Memory.objects.get(pk=memory.pk).accessed_at is not None


def test_outside_a_request_the_touch_is_written_at_once(user):
    memory = batch.memory_batch_create(owner=user, items=[{"content": "Lives in Lyon"}], actor=user)[0].memory
    touch_after_response(memory_ids=[memory.pk], owner_id=user.pk, action="READ")
    assert MemoryEvent.objects.filter(memory=memory, action="READ").count() == 1


def test_each_request_records_only_its_own_reads(user):
    first, second = (w.memory for w in batch.memory_batch_create(
        owner=user, items=[{"content": "Plays the cello"}, {"content": "Runs marathons"}], actor=user))
    with serving():
        touch_after_response(memory_ids=[first.pk], owner_id=user.pk, action="SEARCH", query="one")
        request_finished.send(sender=None)
        request_started.send(sender=None)
        touch_after_response(memory_ids=[second.pk], owner_id=user.pk, action="SEARCH", query="two")
        request_finished.send(sender=None)
    assert sorted(MemoryEvent.objects.filter(action="SEARCH").values_list("query", "memory_id")) == sorted(
        [("one", first.pk), ("two", second.pk)])


def test_the_search_tool_records_after_the_response_too(user):
    from memories.tools import search_memories

    memory = batch.memory_batch_create(owner=user, items=[{"content": "Allergic to peanuts"}], actor=user)[0].memory
    with serving():
        result = search_memories(user, {"query": "peanut allergy"})
        assert [r["id"] for r in result.data["results"]] == [str(memory.pk)]
        assert not MemoryEvent.objects.filter(action="SEARCH").exists()
        request_finished.send(sender=None)
    assert MemoryEvent.objects.filter(action="SEARCH", memory=memory).count() == 1
