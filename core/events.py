"""What happened to a user's data, announced to whoever listens (webhooks), without the apps that write knowing who.

Lower apps (memories, documents, conversations, profiles) call `emit()` inside their write's transaction; the
`happened` signal is sent only once that transaction commits (`transaction.on_commit`), so a rolled-back write
announces nothing. Listeners live on higher floors (webhooks/ connects in its AppConfig.ready), so no app imports
upward. A listener's error is logged, never raised into the writer (`send_robust`): announcing is not the write.
"""

import logging
from typing import Any

from django.db import transaction
from django.dispatch import Signal

logger = logging.getLogger(__name__)

MEMORY_CREATED = "memory.created"
MEMORY_UPDATED = "memory.updated"
MEMORY_SUPERSEDED = "memory.superseded"
MEMORY_DELETED = "memory.deleted"
MEMORY_FORGOTTEN = "memory.forgotten"
DOCUMENT_PROCESSED = "document.processed"
DOCUMENT_FAILED = "document.failed"
CONVERSATION_EXTRACTED = "conversation.extracted"
CONSOLIDATION_RUN = "consolidation.run"

# every event a listener may subscribe to, in the order the API and the panel list them
EVENTS = (MEMORY_CREATED, MEMORY_UPDATED, MEMORY_SUPERSEDED, MEMORY_DELETED, MEMORY_FORGOTTEN, DOCUMENT_PROCESSED,
          DOCUMENT_FAILED, CONVERSATION_EXTRACTED, CONSOLIDATION_RUN)

# sent with owner_id (int), event (one of EVENTS) and payloads (JSON-ready dicts, no secrets: one per object)
happened = Signal()


def emit(event: str, *, owner_id: int, payload: dict[str, Any]) -> None:
    """Announce `event` about `owner_id`'s data when the current transaction commits (at once outside one)."""
    emit_many(event, owner_id=owner_id, payloads=[payload])


def emit_many(event: str, *, owner_id: int, payloads: list[dict[str, Any]]) -> None:
    """The same event about several objects (a batch's memories): one signal, so listeners work once per batch."""
    if event not in EVENTS:
        raise ValueError(f"unknown event {event!r}")
    if payloads:
        transaction.on_commit(lambda: _send(event, owner_id, payloads))


def _send(event: str, owner_id: int, payloads: list[dict[str, Any]]) -> None:
    for receiver, result in happened.send_robust(sender=event, owner_id=owner_id, event=event, payloads=payloads):
        if isinstance(result, Exception):
            logger.error("event %s for owner %s: listener %r failed", event, owner_id, receiver,
                         exc_info=(type(result), result, result.__traceback__))


def memory_payload(memory) -> dict[str, Any]:
    """What a memory event tells about the memory (the same shape for every memory event but `forgotten`)."""
    return {
        "id": str(memory.pk), "namespace": list(memory.namespace), "key": memory.key, "content": memory.content,
        "category": memory.category, "version": memory.version, "is_active": memory.is_active,
        "project_id": memory.project_id, "agent_id": memory.agent_id or None,
        "superseded_by": str(memory.superseded_by_id) if memory.superseded_by_id else None,
    }
