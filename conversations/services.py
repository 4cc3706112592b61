"""Writes to conversations and messages, each one transaction: create, update, end, delete, forget (erasure),
append messages; which messages are due for extraction and when their owner's task is sent; marking them failed;
the sweep that sends lost extraction tasks again. The slow work (embedding, extraction) is
`conversations.processing`, queued on commit (`conversations.tasks`)."""

import re
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Exists, Max, OuterRef, Q
from django.db.models.functions import Lower, StrIndex
from django.utils import timezone

from conversations import tasks
from conversations.models import Conversation, Message
from core import rls
from core.claims import ClaimKind, serialize, unclaimed
from memories import services as memory_services
from memories.models import Memory, MemoryEvent

EMBED_TASK_SIZE = 256  # messages per embedding task: a long import is spread over tasks other users' work can join
CONVERSATION_FIELDS = ("title", "agent_id", "project", "status", "summary", "metadata", "ended_at")


def _check_project(conversation: Conversation) -> None:
    if conversation.project is not None and conversation.project.owner_id != conversation.owner_id:
        raise ValidationError({"project": ["Unknown project."]})
    rls.fit_to_scope(conversation)  # a token bound to a project or agent keeps its conversations there


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


def conversation_forget(*, conversation: Conversation, actor=None) -> int:
    """Erase a conversation for good: its messages and every memory extracted from it, with their history
    (a right-to-be-forgotten request); nothing of it stays findable, not even as search texts in the event log
    (`_forget_queries`). Returns how many memories were erased."""
    with transaction.atomic():
        memories = list(Memory.objects.owned_by(conversation.owner_id).filter(conversation=conversation)
                        .select_for_update())
        for memory in memories:
            memory_services.memory_forget(memory=memory, actor=actor)
        _forget_queries(conversation)
        conversation.delete()
    return len(memories)


def _forget_queries(conversation: Conversation) -> int:
    """Blank the search texts the owner's event log recorded from the conversation. Events carry no conversation,
    so a query recorded since the conversation began is taken as coming from it when every word of it was said
    there, or it contains one of its messages whole (case aside): an agent searches with what the user said."""
    events = MemoryEvent.objects.filter(owner_id=conversation.owner_id, at__gte=conversation.created_at).exclude(
        query="")
    said: set[str] = set()
    for content in Message.objects.filter(conversation=conversation).values_list("content", flat=True).iterator():
        said.update(_WORD.findall(content.lower()))
    worded = [query for query in events.values_list("query", flat=True).distinct()
              if (words := set(_WORD.findall(query.lower()))) and words <= said]
    whole = Message.objects.filter(conversation=conversation).annotate(
        at=StrIndex(Lower(OuterRef("query")), Lower("content"))).filter(at__gt=0)
    return events.filter(Q(query__in=worded) | Q(Exists(whole))).update(query="")


_WORD = re.compile(r"\w+")


def messages_append(*, conversation: Conversation, messages: list[dict[str, Any]]) -> list[tuple[Message, bool]]:
    """Append messages (up to 500 in one call): in order of their `sent_at` (the client's original time, default
    now; equal times keep the order given). A message whose `client_message_id` the conversation already has is
    not added again (the stored one is returned with created=False). Once the transaction commits, the new
    messages are embedded in the background (searchable by meaning; by words at once) and then user messages
    are extracted into memories according to MEMORY_EXTRACTION_TRIGGER."""
    now = timezone.now()
    ordered = sorted(messages, key=lambda data: data.get("sent_at") or now)  # stable: ties keep the given order
    results: list[tuple[Message, bool]] = []
    new: list[Message] = []
    with transaction.atomic():
        locked = Conversation.objects.select_for_update().get(pk=conversation.pk)
        if locked.status in (Conversation.Status.COMPLETED, Conversation.Status.ARCHIVED):
            raise ValidationError({"conversation": [f"The conversation is {locked.status}; start a new one."]})
        sequence = locked.messages.aggregate(top=Max("sequence"))["top"] or 0
        client_ids = [data["client_message_id"] for data in ordered if data.get("client_message_id")]
        known = {m.client_message_id: m for m in locked.messages.filter(client_message_id__in=client_ids)}
        for data in ordered:
            client_id = data.get("client_message_id") or ""
            if client_id and client_id in known:
                results.append((known[client_id], False))
                continue
            sequence += 1
            role = data["role"]
            message = Message(
                conversation=locked, owner_id=locked.owner_id, role=role, name=data.get("name") or "",
                content=data["content"], client_message_id=client_id, metadata=data.get("metadata") or {},
                sequence=sequence, sent_at=data.get("sent_at") or now,
                extraction_status=Message.Extraction.PENDING if role == Message.Role.USER
                else Message.Extraction.SKIPPED,
            )
            # uniqueness is the lock's and the lookup's job above; one INSERT for the whole list below
            message.full_clean(exclude=["conversation", "owner"], validate_unique=False, validate_constraints=False)
            new.append(message)
            results.append((message, True))
            if client_id:
                known[client_id] = message
        Message.objects.bulk_create(new)
        locked.save(update_fields=["updated_at"])
        extract = _queue_pending(locked, trigger="message", send=False)
        new_ids = [str(m.pk) for m in new]
        if new_ids:
            transaction.on_commit(lambda: _send_embedding(new_ids, extract))
        elif extract:
            transaction.on_commit(lambda: messages_send_extraction(extract))
    return results


def _send_embedding(message_ids: list[str], extract: list[str]) -> None:
    for start in range(0, len(message_ids), EMBED_TASK_SIZE):
        last = start + EMBED_TASK_SIZE >= len(message_ids)
        # extraction follows the last embedding task: the worker's CPU goes to making the conversation
        # searchable first (extraction embeds its own memories too)
        tasks.embed_messages.delay(message_ids[start:start + EMBED_TASK_SIZE], extract if last else [])


# --- extraction queueing: a share per owner -------------------------------------------------------------------
#
# Messages due for extraction are stamped `extraction_queued_at`; the worker takes them a share at a time, per
# owner: one `extract_pending` task per owner with due messages is in the queue, it extracts up to EXTRACT_SHARE
# of them (oldest first) and, if more are due, queues itself again behind everyone else's work. So a user who
# imports 50,000 messages has one task in the queue, not 50,000, and another user's message waits for at most
# one share of each busy user's. The owner's advisory lock orders "is a task out for this owner?" (an append)
# against "anything left?" (a task's end), so that due messages never wait without one.

EXTRACT_SHARE = 16  # messages per task: ~1 s with the local rules, ~30 s with an LLM


def due_messages(owner_id):
    """The owner's messages stamped for extraction and not yet extracted, in the order the tasks take them."""
    return Message.objects.filter(owner_id=owner_id, extraction_status=Message.Extraction.PENDING,
                                  extraction_queued_at__isnull=False).order_by("created_at", "pk")


def lock_owner(owner_id) -> None:
    serialize(f"extraction:{owner_id}")


def _queue_pending(conversation: Conversation, *, trigger: str, send: bool = True) -> list[str]:
    """Stamp the conversation's not-yet-queued pending messages due when the configured trigger is met (the
    periodic sweep only re-sends what was stamped and never finished). Returns their ids when the owner's
    extraction task has to be sent for them (none of the owner's messages was due: no task is out), else [];
    with `send=True` it is sent on commit, with `send=False` the caller sends it (after embedding)."""
    configured = settings.MEMORY_EXTRACTION_TRIGGER
    waiting = conversation.messages.filter(extraction_status=Message.Extraction.PENDING,
                                           extraction_queued_at__isnull=True)
    pending = [str(pk) for pk in waiting.values_list("pk", flat=True)]
    if not pending:
        return []
    due = (
        trigger == "end"
        or configured == "message"
        or (configured == "every_n" and len(pending) >= settings.MEMORY_EXTRACTION_EVERY_N)
    )
    if not due:
        return []
    lock_owner(conversation.owner_id)
    running = due_messages(conversation.owner_id).exists()  # its task takes these too
    Message.objects.filter(pk__in=pending).update(extraction_queued_at=timezone.now())
    if running:
        return []
    if send:
        transaction.on_commit(lambda: messages_send_extraction(pending))
    return pending


def messages_send_extraction(message_ids: list[str]) -> None:
    """Send the extraction task of the owner(s) of messages already stamped queued."""
    owners = Message.objects.filter(pk__in=list(message_ids)).order_by().values_list("owner_id", flat=True)
    for owner_id in sorted(set(owners)):
        tasks.extract_pending.delay(str(owner_id))


def message_mark_failed(*, message_id, error: str) -> Message | None:
    with transaction.atomic():
        message = Message.objects.select_for_update().filter(pk=message_id).first()
        if message is not None and message.extraction_status == Message.Extraction.PENDING:
            message.extraction_status = Message.Extraction.FAILED
            message.extraction_error = error[:2000]
            message.save()
    return message


def messages_mark_first_failed(*, owner_id, error: str) -> Message | None:
    """The owner's next due message fails (its extraction task gave up on it)."""
    first = due_messages(owner_id).values_list("pk", flat=True).first()
    return message_mark_failed(message_id=first, error=error) if first is not None else None


REQUEUE_AFTER = timedelta(minutes=5)  # the owner's next share not taken by then: its task is taken as lost
REQUEUE_LIMIT = 1000  # owners whose extraction is sent again per sweep


def messages_requeue_stale(*, older_than: timedelta = REQUEUE_AFTER) -> int:
    """Send again the extraction task of owners whose next share was stamped `older_than` ago, is still pending
    and that nobody is extracting (no claim: a worker died, a broker lost the task); a worker starting sends them
    all (`older_than=0`: a worker killed outright took the tasks it held along). The database, not the broker, is
    the record of what is left to do. Messages still waiting for their trigger (every N messages, end of
    conversation) were never stamped and are left alone. Returns how many owners' tasks were sent."""
    cutoff = timezone.now() - older_than
    heads = (Message.objects.filter(extraction_status=Message.Extraction.PENDING, extraction_queued_at__isnull=False)
             .order_by("owner_id", "created_at", "pk").distinct("owner_id")
             .values_list("owner_id", "extraction_queued_at"))
    stale = [owner_id for owner_id, queued_at in heads if queued_at <= cutoff][:REQUEUE_LIMIT]
    owners = unclaimed(ClaimKind.EXTRACTION_OWNER, stale)
    for owner_id in owners:
        with transaction.atomic():
            lock_owner(owner_id)
            share = list(due_messages(owner_id).values_list("pk", flat=True)[:EXTRACT_SHARE])
            # stamped again, so that a task merely waiting behind a long queue is not sent once per sweep
            Message.objects.filter(pk__in=share).update(extraction_queued_at=timezone.now())
            transaction.on_commit(lambda owner_id=owner_id: tasks.extract_pending.delay(str(owner_id)))
    return len(owners)
