"""The slow work on messages, outside any transaction: embedding them (the next batch embedded while the last
is written) and extracting them into memories, a share of an owner's due messages per task, each message's
memories and status written in one transaction. What is due and when its task is sent are the services' writes
(conversations.services); the Celery entry points are conversations.tasks."""

import logging
from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.utils import timezone

import extraction
from conversations import services, tasks
from conversations.excerpts import outline
from conversations.models import Message
from core import events
from core.ahead import ahead
from core.claims import ClaimKind, claim
from core.tasks import TRANSIENT
from extraction.attributes import statement_frames
from integrations import embeddings, llm
from memories import spaces
from memories.reconcile import memories_reconcile, reconcile_frames
from memories.vectors import embed_or_pending
from profiles.reminder_services import reminders_apply, reminders_prepare

logger = logging.getLogger(__name__)


def messages_embed(*, message_ids) -> int:
    """Embed the given messages that have no vector yet, in batches, the next batch embedded while the last one
    is written (the model outside any transaction). Provider down: they stay without a vector (still found by
    words) and the periodic sweep embeds them later. Returns how many were embedded."""
    todo = list(Message.objects.filter(pk__in=list(message_ids), embedding__isnull=True)
                .order_by("sent_at", "sequence").only("id", "name", "content"))
    size = settings.EMBEDDING_BATCH_SIZE
    model = spaces.active_model(spaces.Name.MESSAGES) if todo else None
    done = 0
    try:
        with ahead(lambda group: embeddings.embed_texts([m.embedding_text() for m in group], model),
                   [todo[i:i + size] for i in range(0, len(todo), size)]) as embedded:
            for group, vectors in embedded:
                for message, vector in zip(group, vectors, strict=True):
                    message.embedding = vector
                    message.embedding_model = model
                    message.outline = outline(message.content)  # what the context would otherwise work out each time
                with transaction.atomic():
                    Message.objects.bulk_update(group, ["embedding", "embedding_model", "outline"])
                done += len(group)
    except embeddings.EmbeddingError:
        logger.warning("embedding provider unavailable; %d messages left for the sweep", len(todo) - done,
                       exc_info=True)
    return done


def messages_embed_pending(*, limit: int = 2000) -> int:
    """Periodic: embed messages stored while the provider was down or whose task was lost, oldest first."""
    cutoff = timezone.now() - timedelta(seconds=60)  # younger ones are most likely in a queued task
    ids = list(Message.objects.filter(embedding__isnull=True, created_at__lt=cutoff)
               .order_by("created_at").values_list("pk", flat=True)[:limit])
    return messages_embed(message_ids=ids)


def messages_extract_share(*, owner_id) -> int:
    """One task's share of the owner's due messages: up to EXTRACT_SHARE extracted, then, if more are due, the
    owner's task is queued again (behind the work queued meanwhile) and the next share stamped, which tells the
    sweep the task is alive. A message that fails for good is marked failed and the share goes on; a transient
    failure (provider, LLM endpoint, database) propagates for the task to retry. The owner's claim is held
    throughout: a second delivery while a share runs leaves the owner to it. Returns how many were taken."""
    with claim(ClaimKind.EXTRACTION_OWNER, owner_id) as mine:
        return _extract_share(owner_id) if mine else 0


def _extract_share(owner_id) -> int:
    due = services.due_messages(owner_id).values_list("pk", flat=True)
    share = [str(pk) for pk in due[:services.EXTRACT_SHARE]]
    for message_id in share:
        try:
            message_extract(message_id=message_id)
        except TRANSIENT:
            raise
        except Exception as exc:  # a bug or bad data: recorded on the message, the others still get their turn
            logger.exception("extraction of message %s failed", message_id)
            services.message_mark_failed(message_id=message_id,
                                         error=f"Stopped by an internal error ({type(exc).__name__}: {exc}).")
    with transaction.atomic():
        services.lock_owner(owner_id)
        following = list(services.due_messages(owner_id).values_list("pk", flat=True)[:services.EXTRACT_SHARE])
        if following:
            Message.objects.filter(pk__in=following).update(extraction_queued_at=timezone.now())
            transaction.on_commit(lambda: tasks.extract_pending.delay(str(owner_id)))
    return len(share)


def message_extract(*, message_id) -> Message | None:
    """Turn one message into memories. Idempotent: a message already done is left alone, and the memories and
    the `done` status are written in one transaction, so a worker that dies mid-way leaves it pending. The
    message's claim is held throughout: a second delivery while it runs leaves it to the first."""
    with claim(ClaimKind.MESSAGE, message_id) as mine:
        if not mine:
            return Message.objects.filter(pk=message_id).first()
        return _extract(message_id)


def _extract(message_id) -> Message | None:
    message = Message.objects.select_related("conversation", "conversation__project").filter(pk=message_id).first()
    if message is None:  # its conversation was deleted after the task was queued
        return None
    if message.extraction_status != Message.Extraction.PENDING:
        return message
    use_llm = llm.llm_configured()
    # the turns before it (context for the extractor: "we" named earlier, "there", a pronoun's person)
    earlier = [
        f"{name or ('User' if role == Message.Role.USER else role.capitalize())}: {content}"
        for role, name, content in message.conversation.messages
        .filter(sent_at__lte=message.sent_at, sequence__lt=message.sequence)
        .order_by("-sent_at", "-sequence").values_list("role", "name", "content")[:CONTEXT_TURNS]
    ][::-1]
    try:
        if use_llm:
            candidates = extraction.extract_llm(message.content, role=message.role, context=earlier[-4:])
        else:
            candidates = _extract_local(message, earlier)
    except llm.LLMUnavailable:
        raise  # transient: the task retries with backoff
    except llm.LLMError as exc:
        return services.message_mark_failed(message_id=message.pk, error=str(exc))
    conversation = message.conversation
    vectors, _ = embed_or_pending([c.content for c in candidates])  # the model, before any lock
    self_names = [message.name] if message.name else []
    reminder = reminders_prepare(owner=conversation.owner, text=message.content, said_at=message.sent_at,
                                 subject=message.name or "user") if message.role == Message.Role.USER else None
    known = reconcile_frames(owner=conversation.owner, candidates=candidates, vectors=vectors,
                             project=conversation.project, frames=statement_frames, self_names=self_names)
    try:
        with transaction.atomic():
            locked = Message.objects.select_for_update().get(pk=message.pk)
            if locked.extraction_status != Message.Extraction.PENDING:
                return locked
            memories_reconcile(
                owner=conversation.owner, candidates=candidates, project=conversation.project,
                reason=f"extracted from message {locked.pk} of conversation {conversation.pk}",
                conversation=conversation, message=locked,
                source_ref={"conversation_id": str(conversation.pk), "message_id": str(locked.pk)},
                llm_decide=extraction.reconcile_llm if use_llm else None, vectors=vectors,
                happened_at=locked.sent_at, frames=statement_frames, self_names=self_names, known=known,
            )
            if reminder is not None:  # "remind me to call mom on Friday"; "I called mom" closes it
                reminders_apply(owner=conversation.owner, prepared=reminder, message=locked)
            locked.extraction_status = Message.Extraction.DONE
            locked.extraction_error = ""
            locked.full_clean()
            locked.save()
            events.emit(events.CONVERSATION_EXTRACTED, owner_id=conversation.owner_id,
                        payload={"conversation_id": str(conversation.pk), "message_id": str(locked.pk)})
    except llm.LLMUnavailable:
        raise
    except llm.LLMError as exc:  # the whole reconciliation rolled back: nothing half-written
        return services.message_mark_failed(message_id=message.pk, error=str(exc))
    return locked


CONTEXT_TURNS = 6  # earlier turns of the conversation given to the extractor as context


def _extract_local(message: Message, earlier: list[str]):
    """The local extractor, with the earlier turns as "Speaker: text" (the speaker's own turns name who "we" are;
    an unnamed user turn is "User:", an unnamed assistant's "Assistant:")."""
    return extraction.extract_local(message.content, role=message.role, speaker=message.name or None,
                                    when=message.sent_at, context=earlier)
