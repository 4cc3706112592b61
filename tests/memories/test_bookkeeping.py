"""A search's bookkeeping (accessed_at, SEARCH events) is written after its response, not before it."""

import threading
from contextlib import contextmanager

import pytest
from django.core.signals import request_finished, request_started
from django.db import close_old_connections, connection
from rest_framework.test import APIRequestFactory, force_authenticate

from core import rls
from memento.search import MemorySearchView
from memories import batch, bookkeeping, services
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


@pytest.fixture
def in_background(monkeypatch):
    """This process as a web process: touches go to the writer thread (ended after the test, its connection
    closed)."""
    monkeypatch.setattr(bookkeeping, "_background", True)
    yield
    bookkeeping.stop_writer()


@pytest.mark.django_db(transaction=True)  # the writer thread's connection sees only committed rows
def test_a_web_process_writes_the_touch_on_a_thread_of_its_own(user, in_background, monkeypatch):
    memory = batch.memory_batch_create(owner=user, items=[{"content": "Allergic to peanuts"}], actor=user)[0].memory
    writers = []
    touch = services.memories_touch
    monkeypatch.setattr(services, "memories_touch", lambda **kw: (writers.append(threading.current_thread()),
                                                                   touch(**kw)))
    with serving():
        rls.activate(user.pk)  # as the request's authentication left it
        touch_after_response(memory_ids=[memory.pk], owner_id=user.pk, action="SEARCH", query="peanut allergy")
        request_finished.send(sender=None)
        # the request's thread is done with the session: unbound (no touch waits on it)
        assert connection.memento_rls == rls.Binding(None, True)
    bookkeeping.wait_written()
    assert writers and threading.current_thread() not in writers
    event = MemoryEvent.objects.get(action="SEARCH")
    assert (event.memory_id, event.query) == (memory.pk, "peanut allergy")
    assert Memory.objects.get(pk=memory.pk).accessed_at is not None


@pytest.mark.django_db(transaction=True)
def test_when_the_writer_is_behind_the_request_writes_its_touch_itself(user, in_background, monkeypatch):
    memory = batch.memory_batch_create(owner=user, items=[{"content": "Lives in Lyon"}], actor=user)[0].memory
    monkeypatch.setattr(bookkeeping, "BACKGROUND_QUEUE_MAX", 1)
    write, blocked = bookkeeping._write, threading.Event()
    monkeypatch.setattr(bookkeeping, "_write",
                        lambda touch, **kw: blocked.wait(10) if "wait" in touch else write(touch, **kw))
    jobs = bookkeeping._queue()
    jobs.put({"wait": True})  # the writer takes it and waits ...
    jobs.put({"wait": True})  # ... so this one fills its queue
    with serving():
        touch_after_response(memory_ids=[memory.pk], owner_id=user.pk, action="READ")
    # written by the request's thread, before the writer got to it
    assert MemoryEvent.objects.filter(memory=memory, action="READ").count() == 1
    blocked.set()


@pytest.mark.django_db(transaction=True)
def test_the_writer_binds_each_owner_once_in_a_row_and_never_unbinds(user, other_user, in_background, monkeypatch):
    mine = batch.memory_batch_create(owner=user, items=[{"content": "Plays chess"}], actor=user)[0].memory
    theirs = batch.memory_batch_create(owner=other_user, items=[{"content": "Plays go"}], actor=other_user)[0].memory
    unbound = []
    reset = rls.reset
    monkeypatch.setattr(rls, "reset", lambda: (unbound.append(threading.current_thread()), reset()))
    for memory in (mine, mine, theirs):
        with serving():
            touch_after_response(memory_ids=[memory.pk], owner_id=memory.owner_id, action="READ")
    bookkeeping.wait_written()
    assert not [thread for thread in unbound if thread is not threading.current_thread()]
    # each touch was written as its owner (the policy refuses an event for anyone else's memory)
    assert sorted(MemoryEvent.objects.values_list("memory_id", flat=True)) == sorted([mine.pk, mine.pk, theirs.pk])
