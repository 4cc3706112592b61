"""Writes to conversations and messages, and the extraction step that turns a message into memories."""

import logging
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Max
from django.utils import timezone

from conversations.models import Conversation, Message
from memories import services as memory_services
from memories.models import Memory

logger = logging.getLogger(__name__)

CONVERSATION_FIELDS = ("title", "agent_id", "project", "status", "summary", "metadata", "ended_at")


def _check_project(conversation: Conversation) -> None:
    if conversation.project is not None and conversation.project.owner_id != conversation.owner_id:
        raise ValidationError({"project": ["Unknown project."]})


def conversation_create(*, owner, **fields: Any) -> Conversation:
    conversation = Conversation(owner=owner, **{k: v for k, v in fields.items() if k in CONVERSATION_FIELDS})
    _check_project(conversation)
    with transaction.atomic():
        conversation.full_clean()
        conversation.save()
    return conversation


def conversation_update(*, conversation: Conversation, data: dict[str, Any]) -> Conversation:
    """Change a conversation; moving it to `completed` ends it (sets ended_at, runs end-of-conversation work)."""
    ending = data.get("status") == Conversation.Status.COMPLETED and conversation.status != data["status"]
    with transaction.atomic():
        locked = Conversation.objects.select_for_update().get(pk=conversation.pk)
        for name, value in data.items():
            if name in CONVERSATION_FIELDS:
                setattr(locked, name, value)
        if ending and locked.ended_at is None:
            locked.ended_at = timezone.now()
        _check_project(locked)
        locked.full_clean()
        locked.save()
        if ending:
            _queue_pending(locked, trigger="end")
    return locked


def conversation_end(*, conversation: Conversation) -> Conversation:
    return conversation_update(conversation=conversation, data={"status": Conversation.Status.COMPLETED})


def conversation_delete(*, conversation: Conversation) -> None:
    """Delete a conversation and its messages. Memories extracted from it stay (they are the user's knowledge);
    they lose the link, recorded in their history, and keep the ids in `source_ref`."""
    with transaction.atomic():
        for memory in Memory.objects.filter(conversation=conversation).select_for_update():
            memory_services.memory_update(
                memory=memory, data={"conversation": None, "message": None}, reason="its conversation was deleted"
            )
        conversation.delete()


def messages_append(*, conversation: Conversation, messages: list[dict[str, Any]]) -> list[tuple[Message, bool]]:
    """Append messages in order. A message whose `client_message_id` the conversation already has is not added
    again (the stored one is returned with created=False). User messages are queued for memory extraction
    according to MEMORY_EXTRACTION_TRIGGER once the transaction commits."""
    results: list[tuple[Message, bool]] = []
    with transaction.atomic():
        locked = Conversation.objects.select_for_update().get(pk=conversation.pk)
        if locked.status in (Conversation.Status.COMPLETED, Conversation.Status.ARCHIVED):
            raise ValidationError({"conversation": [f"The conversation is {locked.status}; start a new one."]})
        sequence = locked.messages.aggregate(top=Max("sequence"))["top"] or 0
        for data in messages:
            client_id = data.get("client_message_id") or ""
            if client_id:
                existing = locked.messages.filter(client_message_id=client_id).first()
                if existing is not None:
                    results.append((existing, False))
                    continue
            sequence += 1
            role = data["role"]
            message = Message(
                conversation=locked, owner_id=locked.owner_id, role=role, content=data["content"],
                client_message_id=client_id, metadata=data.get("metadata") or {}, sequence=sequence,
                extraction_status=Message.Extraction.PENDING if role == Message.Role.USER
                else Message.Extraction.SKIPPED,
            )
            message.full_clean()
            message.save()
            results.append((message, True))
        locked.save(update_fields=["updated_at"])
        _queue_pending(locked, trigger="message")
    return results


def _queue_pending(conversation: Conversation, *, trigger: str) -> None:
    """Queue extraction of the conversation's not-yet-queued pending messages when the configured trigger is
    met, and stamp them queued (the periodic sweep only re-sends what was queued and never finished)."""
    configured = settings.MEMORY_EXTRACTION_TRIGGER
    waiting = conversation.messages.filter(extraction_status=Message.Extraction.PENDING,
                                           extraction_queued_at__isnull=True)
    pending = [str(pk) for pk in waiting.values_list("pk", flat=True)]
    if not pending:
        return
    due = (
        trigger == "end"
        or configured == "message"
        or (configured == "every_n" and len(pending) >= settings.MEMORY_EXTRACTION_EVERY_N)
    )
    if not due:
        return
    Message.objects.filter(pk__in=pending).update(extraction_queued_at=timezone.now())
    transaction.on_commit(lambda: _send(pending))


def _send(message_ids: list[str]) -> None:
    from conversations.tasks import extract_message

    for message_id in message_ids:
        extract_message.delay(message_id)


def message_extract(*, message_id) -> Message | None:
    """Turn one message into memories. Idempotent: a message already done is left alone, and the memories and
    the `done` status are written in one transaction, so a worker that dies mid-way leaves it pending."""
    import extraction
    from integrations import llm

    message = Message.objects.select_related("conversation", "conversation__project").filter(pk=message_id).first()
    if message is None:  # its conversation was deleted after the task was queued
        return None
    if message.extraction_status != Message.Extraction.PENDING:
        return message
    use_llm = llm.llm_configured()
    try:
        if use_llm:
            context = list(
                message.conversation.messages.filter(sequence__lt=message.sequence)
                .order_by("-sequence").values_list("content", flat=True)[:4]
            )[::-1]
            candidates = extraction.extract_llm(message.content, role=message.role, context=context)
        else:
            candidates = extraction.extract_local(message.content, role=message.role, when=message.created_at)
    except llm.LLMUnavailable:
        raise  # transient: the task retries with backoff
    except llm.LLMError as exc:
        return message_mark_failed(message_id=message.pk, error=str(exc))
    conversation = message.conversation
    try:
        with transaction.atomic():
            locked = Message.objects.select_for_update().get(pk=message.pk)
            if locked.extraction_status != Message.Extraction.PENDING:
                return locked
            memory_services.memories_reconcile(
                owner=conversation.owner, candidates=candidates, project=conversation.project,
                reason=f"extracted from message {locked.pk} of conversation {conversation.pk}",
                conversation=conversation, message=locked,
                source_ref={"conversation_id": str(conversation.pk), "message_id": str(locked.pk)},
                llm_decide=extraction.reconcile_llm if use_llm else None,
            )
            locked.extraction_status = Message.Extraction.DONE
            locked.extraction_error = ""
            locked.full_clean()
            locked.save()
    except llm.LLMUnavailable:
        raise
    except llm.LLMError as exc:  # the whole reconciliation rolled back: nothing half-written
        return message_mark_failed(message_id=message.pk, error=str(exc))
    return locked


def message_mark_failed(*, message_id, error: str) -> Message | None:
    with transaction.atomic():
        message = Message.objects.select_for_update().filter(pk=message_id).first()
        if message is not None and message.extraction_status == Message.Extraction.PENDING:
            message.extraction_status = Message.Extraction.FAILED
            message.extraction_error = error[:2000]
            message.save()
    return message


def messages_requeue_stale(*, older_than_seconds: int = 300, limit: int = 1000) -> int:
    """Send again the extraction of messages queued a while ago and still pending (a worker died, a broker lost
    the task): the database, not the broker, is the record of what is left to do. Messages still waiting for
    their trigger (every N messages, end of conversation) were never queued and are left alone."""
    cutoff = timezone.now() - timedelta(seconds=older_than_seconds)
    with transaction.atomic():
        stale = [str(pk) for pk in Message.objects.select_for_update(skip_locked=True).filter(
            extraction_status=Message.Extraction.PENDING, extraction_queued_at__lt=cutoff,
        ).order_by("extraction_queued_at").values_list("pk", flat=True)[:limit]]
        # stamped again, so that a task merely waiting behind a long queue is not sent once per sweep
        Message.objects.filter(pk__in=stale).update(extraction_queued_at=timezone.now())
        transaction.on_commit(lambda: _send(stale))
    return len(stale)
