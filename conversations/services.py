"""Writes to conversations and messages, and the extraction step that turns a message into memories."""

import logging
import re
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Exists, Max, OuterRef, Q
from django.db.models.functions import Lower, StrIndex
from django.utils import timezone

import extraction
from conversations import tasks
from conversations.excerpts import outline
from conversations.models import Conversation, Message
from core import events, rls
from core.claims import claim, serialize, unclaimed
from core.tasks import TRANSIENT
from extraction.attributes import statement_frames
from integrations import embeddings, llm
from memories import services as memory_services
from memories import spaces
from memories.models import Memory, MemoryEvent
from memories.reconcile import memories_reconcile, reconcile_frames
from memories.vectors import embed_or_pending
from profiles.reminder_services import reminders_apply, reminders_prepare

logger = logging.getLogger(__name__)

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


def messages_embed(*, message_ids) -> int:
    """Embed the given messages that have no vector yet, in batches, the next batch embedded while the last one
    is written (the model outside any transaction). Provider down: they stay without a vector (still found by
    words) and the periodic sweep embeds them later. Returns how many were embedded."""
    todo = list(Message.objects.filter(pk__in=list(message_ids), embedding__isnull=True)
                .order_by("sent_at", "sequence").only("id", "name", "content"))
    if not todo:
        return 0
    size = settings.EMBEDDING_BATCH_SIZE
    groups = [todo[i:i + size] for i in range(0, len(todo), size)]
    done = 0
    model = spaces.active_model(spaces.Name.MESSAGES)

    def vectors_for(group):
        return embeddings.embed_texts([m.embedding_text() for m in group], model)

    with ThreadPoolExecutor(max_workers=1) as pool:
        future = pool.submit(vectors_for, groups[0])
        for index, group in enumerate(groups):
            try:
                vectors = future.result()
            except embeddings.EmbeddingError:
                logger.warning("embedding provider unavailable; %d messages left for the sweep",
                               len(todo) - done, exc_info=True)
                return done
            if index + 1 < len(groups):
                future = pool.submit(vectors_for, groups[index + 1])
            for message, vector in zip(group, vectors, strict=True):
                message.embedding = vector
                message.embedding_model = model
                message.outline = outline(message.content)  # what the context would otherwise work out each time
            with transaction.atomic():
                Message.objects.bulk_update(group, ["embedding", "embedding_model", "outline"])
            done += len(group)
    return done


def messages_embed_pending(*, limit: int = 2000) -> int:
    """Periodic: embed messages stored while the provider was down or whose task was lost, oldest first."""
    cutoff = timezone.now() - timedelta(seconds=60)  # younger ones are most likely in a queued task
    ids = list(Message.objects.filter(embedding__isnull=True, created_at__lt=cutoff)
               .order_by("created_at").values_list("pk", flat=True)[:limit])
    return messages_embed(message_ids=ids)


# --- extraction queueing: a share per owner -------------------------------------------------------------------
#
# Messages due for extraction are stamped `extraction_queued_at`; the worker takes them a share at a time, per
# owner: one `extract_pending` task per owner with due messages is in the queue, it extracts up to EXTRACT_SHARE
# of them (oldest first) and, if more are due, queues itself again behind everyone else's work. So a user who
# imports 50,000 messages has one task in the queue, not 50,000, and another user's message waits for at most
# one share of each busy user's. The owner's advisory lock orders "is a task out for this owner?" (an append)
# against "anything left?" (a task's end), so that due messages never wait without one.

EXTRACT_SHARE = 16  # messages per task: ~1 s with the local rules, ~30 s with an LLM


def _due(owner_id):
    """The owner's messages stamped for extraction and not yet extracted, in the order the tasks take them."""
    return Message.objects.filter(owner_id=owner_id, extraction_status=Message.Extraction.PENDING,
                                  extraction_queued_at__isnull=False).order_by("created_at", "pk")


def _lock_owner(owner_id) -> None:
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
    _lock_owner(conversation.owner_id)
    running = _due(conversation.owner_id).exists()  # its task takes these too
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


OWNER_CLAIM = 3  # core.claims kind of an owner whose extraction share is being worked on
CLAIM = 2  # core.claims kind of a message being extracted


def messages_extract_share(*, owner_id) -> int:
    """One task's share of the owner's due messages: up to EXTRACT_SHARE extracted, then, if more are due, the
    owner's task is queued again (behind the work queued meanwhile) and the next share stamped, which tells the
    sweep the task is alive. A message that fails for good is marked failed and the share goes on; a transient
    failure (provider, LLM endpoint, database) propagates for the task to retry. The owner's claim is held
    throughout: a second delivery while a share runs leaves the owner to it. Returns how many were taken."""
    with claim(OWNER_CLAIM, owner_id) as mine:
        return _extract_share(owner_id) if mine else 0


def _extract_share(owner_id) -> int:
    share = [str(pk) for pk in _due(owner_id).values_list("pk", flat=True)[:EXTRACT_SHARE]]
    for message_id in share:
        try:
            message_extract(message_id=message_id)
        except TRANSIENT:
            raise
        except Exception as exc:  # a bug or bad data: recorded on the message, the others still get their turn
            logger.exception("extraction of message %s failed", message_id)
            message_mark_failed(message_id=message_id,
                                error=f"Stopped by an internal error ({type(exc).__name__}: {exc}).")
    with transaction.atomic():
        _lock_owner(owner_id)
        following = [pk for pk in _due(owner_id).values_list("pk", flat=True)[:EXTRACT_SHARE]]
        if following:
            Message.objects.filter(pk__in=following).update(extraction_queued_at=timezone.now())
            transaction.on_commit(lambda: tasks.extract_pending.delay(str(owner_id)))
    return len(share)


def message_extract(*, message_id) -> Message | None:
    """Turn one message into memories. Idempotent: a message already done is left alone, and the memories and
    the `done` status are written in one transaction, so a worker that dies mid-way leaves it pending. The
    message's claim is held throughout: a second delivery while it runs leaves it to the first."""
    with claim(CLAIM, message_id) as mine:
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
        return message_mark_failed(message_id=message.pk, error=str(exc))
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
        return message_mark_failed(message_id=message.pk, error=str(exc))
    return locked


CONTEXT_TURNS = 6  # earlier turns of the conversation given to the extractor as context


def _extract_local(message: Message, earlier: list[str]):
    """The local extractor, with the earlier turns as "Speaker: text" (the speaker's own turns name who "we" are;
    an unnamed user turn is "User:", an unnamed assistant's "Assistant:")."""
    return extraction.extract_local(message.content, role=message.role, speaker=message.name or None,
                                    when=message.sent_at, context=earlier)


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
    first = _due(owner_id).values_list("pk", flat=True).first()
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
    owners = unclaimed(OWNER_CLAIM, [owner_id for owner_id, queued_at in heads if queued_at <= cutoff][:REQUEUE_LIMIT])
    for owner_id in owners:
        with transaction.atomic():
            _lock_owner(owner_id)
            share = list(_due(owner_id).values_list("pk", flat=True)[:EXTRACT_SHARE])
            # stamped again, so that a task merely waiting behind a long queue is not sent once per sweep
            Message.objects.filter(pk__in=share).update(extraction_queued_at=timezone.now())
            transaction.on_commit(lambda owner_id=owner_id: tasks.extract_pending.delay(str(owner_id)))
    return len(owners)
