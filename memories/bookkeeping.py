"""What a read or search leaves behind (`accessed_at`, READ/SEARCH events), written after its response is sent.

Inside a request, `touch_after_response` queues the touch on the request's thread; when the server has written
the response it closes it (Django's `request_finished`), and the queue is written then, through the same
`memories_touch` statement as before, bound to the owner for row-level security. The client no longer waits for
the write (a statement of 1-4 ms, more under load: bench/search_profile.py), the worker still does it before its
next request, and nothing is lost or merged: each search records exactly what it returned. Outside a request
(workers, commands, tests calling services) the touch is written at once.
"""

import logging
import threading
from collections.abc import Iterable

from django.core.signals import request_finished, request_started
from django.dispatch import receiver

from core import rls
from memories import services

logger = logging.getLogger(__name__)
_local = threading.local()


def touch_after_response(*, memory_ids: Iterable, owner_id: int, action: str, query: str = "") -> None:
    """`services.memories_touch`, after the response when called while serving a request."""
    touch = {"memory_ids": list(memory_ids), "owner_id": owner_id, "action": action, "query": query}
    if not touch["memory_ids"]:
        return
    pending = getattr(_local, "pending", None)
    if pending is None:
        services.memories_touch(**touch)
    else:
        pending.append(touch)
        # the session stays bound to the request's user until the touch below, which resets it: the same user is
        # not unbound by the middleware and bound again here (two round trips per read or search)
        rls.reset_after_response()


@receiver(request_started)
def _start(sender, **kwargs) -> None:
    _local.pending = []


@receiver(request_finished)
def _write_pending(sender, **kwargs) -> None:
    pending, _local.pending = getattr(_local, "pending", None), None
    for touch in pending or ():
        try:
            with rls.as_user(touch["owner_id"]):
                services.memories_touch(**touch)
        except Exception:  # the response is gone: log it, never fail the server's close()
            logger.exception("could not record what a request read (owner %s)", touch["owner_id"])
