"""What a read or search leaves behind (`accessed_at`, READ/SEARCH events), written after its response is sent.

Inside a request, `touch_after_response` queues the touch on the request's thread; when the server has written
the response it closes it (Django's `request_finished`), and the queue is written then, through the same
`memories_touch` statement as before, bound to the owner for row-level security. The client no longer waits for
the write (a statement of 1-4 ms, more under load: bench/search_profile.py), and nothing is lost or merged: each
search records exactly what it returned. Outside a request (workers, commands, tests calling services) the touch is
written at once.

Web processes (`memento.wsgi`) go one step further and hand the touches to a writer thread of their own
(`write_in_background`). A gunicorn thread closes the response before it gives the kept-alive connection back to
its poller, so a touch written there delays the client's next request on that connection; at 1M memories one in
five touches of a large owner's rows cost 7-140 ms (an update without room on its page adds an entry to every
index, two HNSW graphs among them: BENCHMARKS.md, 1M), and those were the one-client tail.
"""

import atexit
import logging
import os
import queue
import threading
from collections.abc import Iterable

from django.core.signals import request_finished, request_started
from django.db import connection
from django.dispatch import receiver

from core import rls
from memories import services
from memories.models import MemoryEvent

logger = logging.getLogger(__name__)
_local = threading.local()
# touches waiting for the writer thread; when it falls this far behind, requests write their own again
BACKGROUND_QUEUE_MAX = 1000
_background = False  # set by write_in_background()
_writer: tuple[int, queue.Queue, threading.Thread] | None = None  # (pid, its queue, its thread)
_writer_lock = threading.Lock()


def touch_after_response(*, memory_ids: Iterable, owner_id: int, action: str, query: str = "") -> None:
    """`services.memories_touch`, after the response when called while serving a request."""
    touch = {"memory_ids": list(memory_ids), "owner_id": owner_id, "action": action, "query": query}
    if not touch["memory_ids"] and action != MemoryEvent.Action.SEARCH:  # a search is counted even when empty
        return
    pending = getattr(_local, "pending", None)
    if pending is None:
        services.memories_touch(**touch)
    else:
        pending.append(touch)
        # the session stays bound to the request's user until the touch below, which resets it: the same user is
        # not unbound by the middleware and bound again here (two round trips per read or search)
        rls.reset_after_response()


def write_in_background() -> None:
    """From now on this process's requests hand their touches to a writer thread (web processes)."""
    global _background
    _background = True


def _write(touch: dict, *, stay_bound: bool = False) -> None:
    rls.activate(touch["owner_id"])
    try:
        services.memories_touch(**touch)
    finally:
        if not stay_bound:
            rls.reset()


def _write_queued(jobs: queue.Queue) -> None:
    """The writer thread: touches in the order they came, until None. Its connection serves nothing else, so it
    stays bound to the last touch's owner: one owner's touches in a row bind once and none unbinds (binding and
    unbinding each touch were two more round trips for every read, list and search under load)."""
    while (touch := jobs.get()) is not None:
        try:
            _write(touch, stay_bound=True)
        except Exception:
            logger.exception("could not record what a request read (owner %s)", touch["owner_id"])
            connection.close()  # a broken connection is not reused: the next touch connects again
        finally:
            jobs.task_done()
    connection.close()
    jobs.task_done()


def _queue() -> queue.Queue:
    """This process's writer queue, its thread started on first use (a process forked from one that had it gets
    a thread of its own)."""
    global _writer
    with _writer_lock:
        if _writer is None or _writer[0] != os.getpid():
            jobs = queue.Queue(maxsize=BACKGROUND_QUEUE_MAX)
            thread = threading.Thread(target=_write_queued, args=(jobs,), name="memento-touches", daemon=True)
            thread.start()
            _writer = (os.getpid(), jobs, thread)
        return _writer[1]


def wait_written() -> None:
    """Block until every touch handed to the writer thread is written (tests, shutdown)."""
    if _writer is not None and _writer[0] == os.getpid():
        _writer[1].join()


@atexit.register
def stop_writer() -> None:
    """Write what is queued and end the writer thread (at exit: a stopping web process loses no touch)."""
    global _writer
    with _writer_lock:
        writer, _writer = _writer, None
    if writer is not None and writer[0] == os.getpid():
        writer[1].put(None)
        writer[2].join(timeout=10)


@receiver(request_started)
def _start(sender, **kwargs) -> None:
    _local.pending = []


@receiver(request_finished)
def _write_pending(sender, **kwargs) -> None:
    pending, _local.pending = getattr(_local, "pending", None), None
    if not pending:
        return
    if _background:
        jobs = _queue()
        for i, touch in enumerate(pending):
            try:
                jobs.put_nowait(touch)
            except queue.Full:  # the writer is behind: this request writes the rest itself, as before
                _write_here(pending[i:])
                return
        try:
            rls.reset()  # the session was left bound for the touch (reset_after_response); nothing uses it now
        except Exception:
            logger.exception("could not unbind the session after a request")
        return
    _write_here(pending)


def _write_here(touches: list[dict]) -> None:
    for touch in touches:
        try:
            _write(touch)
        except Exception:  # the response is gone: log it, never fail the server's close()
            logger.exception("could not record what a request read (owner %s)", touch["owner_id"])
