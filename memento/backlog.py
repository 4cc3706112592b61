"""How far behind the worker is: waiting work per queue and the age of its oldest item, for the Prometheus
gauges (observability.metrics). It reads four apps' tables, so it lives in the wiring floor; the worker computes
it periodically (`memento.tasks.observe_backlog`, as the maintenance role: every owner's rows), never a request.

Each figure is one aggregate: waiting messages through the (owner, extraction_status) index and the partial index
of unembedded messages, documents by status (a small table). Memories waiting for a vector have no index of their
own: that count reads the table as the periodic re-embedding sweep already does (memories.batch)."""

import logging

from django.db import DatabaseError, connection, transaction
from django.db.models import Count, Min
from django.utils import timezone

from conversations.models import Message
from documents.models import Document
from memories.models import Memory

logger = logging.getLogger(__name__)

STATEMENT_TIMEOUT = "5s"  # a figure is not worth holding the database: skipped past this, tried again next time


def _queues() -> dict:
    return {
        "extraction": Message.objects.filter(extraction_status=Message.Extraction.PENDING,
                                             extraction_queued_at__isnull=False),
        "message_embedding": Message.objects.filter(embedding__isnull=True),
        "memory_embedding": Memory.objects.filter(embedding__isnull=True, is_active=True, indexed=True),
        "documents": Document.objects.filter(
            processing_status__in=[Document.Status.PENDING, Document.Status.PROCESSING]),
    }


def backlog_figures() -> dict[str, tuple[int, float]]:
    """queue -> (items waiting, seconds since the oldest was created; 0 when none waits)."""
    now = timezone.now()
    figures = {}
    try:
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute(f"SET LOCAL statement_timeout = '{STATEMENT_TIMEOUT}'")
            for queue, waiting in _queues().items():
                found = waiting.aggregate(items=Count("pk"), oldest=Min("created_at"))
                oldest = found["oldest"]
                figures[queue] = (found["items"], (now - oldest).total_seconds() if oldest else 0.0)
    except DatabaseError:
        logger.warning("backlog figures not computed", exc_info=True)
        return {}
    return figures
