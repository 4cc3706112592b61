"""Writes of reminders: made from a message (by the extraction pipeline, inside its transaction) or asked for through
the API, panel or a tool; closed by the user or by a later message that says it is done. A reminder is a memory
(category 'reminder') plus its Reminder row (due time, status); closing one soft-deletes its memory (restored if
it is opened again), each step a history row with its reason."""

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from memories.models import HistoryAction, Memory
from memories.services import memory_restore, memory_soft_delete, prepare_item, write_prepared
from memories.vectors import embed_or_pending
from memories.versions import save_version
from profiles.models import Reminder
from profiles.reminders import Found, closes, lemmas, reminder_in
from profiles.services import settings_for

DUE_SOON = timedelta(days=1)  # open reminders due within this show in the context, with every overdue one


@dataclass
class Prepared:
    """What a message says about reminders, worked out before the writing transaction (the embedding too)."""

    found: Found | None
    zone: str
    item: dict[str, Any] | None = None
    vectors: list | None = None
    model_name: str = ""


def reminder_content(found: Found, zone: str) -> str:
    if found.due_at is None:
        return f"Reminder: {found.task}."
    due = found.due_at
    return f"Reminder: {found.task}, due {due:%A} {due.day} {due:%B %Y} at {due:%H:%M} ({zone})."


def reminders_prepare(*, owner, text: str, said_at: datetime, subject: str = "user") -> Prepared:
    """Read a reminder from `text` (said at `said_at`, in the owner's time zone) and embed its memory."""
    zone = settings_for(owner).time_zone
    found = reminder_in(text, said_at=said_at, zone=zone)
    if found is None:
        return Prepared(None, zone)
    item = prepare_item({"content": reminder_content(found, zone), "category": "reminder", "tags": ["reminder"],
                         "subject": subject, "importance": 0.7,
                         "metadata": {"reminder": {"task": found.task, "due_at": found.due_at.isoformat()
                                                   if found.due_at else None}}})
    vectors, model_name = embed_or_pending([item["content"]])
    return Prepared(found, zone, item, vectors, model_name)


def reminders_apply(*, owner, prepared: Prepared, message=None, actor=None, said_at=None) -> Reminder | None:
    """Inside the caller's transaction: open reminders the message says are done are closed, then the new
    reminder is written (linked to the memory the extractor made of the same statement, when there is one)."""
    if message is not None and prepared.found is None:
        _close_by_message(owner, message)
    if prepared.found is None:
        return None
    found = prepared.found
    memory = _extracted(owner, message, found) if message is not None else None
    why = f"a reminder due {found.due_at.isoformat() if found.due_at else 'some time'}"
    if memory is not None:
        memory.category, memory.tags = "reminder", sorted({*memory.tags, "reminder"})
        memory.metadata = {**(memory.metadata or {}), **prepared.item["metadata"]}
        memory.version += 1
        save_version(memory, action=HistoryAction.Action.UPDATE, reason=why, actor=actor)
    else:
        item = dict(prepared.item)
        if message is not None:
            item.update(conversation=message.conversation, message=message, happened_at=message.sent_at,
                        source=Memory.Source.EXTRACTED, project=message.conversation.project,
                        source_ref={"conversation_id": str(message.conversation_id), "message_id": str(message.pk)})
        memory = write_prepared(owner, [item], prepared.vectors, prepared.model_name, actor=actor, reason=why)[0].memory
    reminder = Reminder(owner=owner, memory=memory, task=found.task[:500], due_at=found.due_at,
                        source_message_id=message.pk if message is not None else None,
                        said_at=message.sent_at if message is not None else said_at or timezone.now())
    reminder._change_reason = why
    reminder._history_user = actor
    reminder.save()
    return reminder


def _extracted(owner, message, found: Found) -> Memory | None:
    """The memory the extractor made of this message that says the same thing (every word of the task)."""
    wanted = lemmas(found.task)
    for memory in Memory.objects.owned_by(owner).select_for_update().filter(message=message).active():
        if wanted and wanted <= lemmas(memory.content):
            return memory
    return None


def _close_by_message(owner, message) -> None:
    if message.role != "user":
        return
    open_ = Reminder.objects.filter(owner=owner, status=Reminder.Status.OPEN, said_at__lt=message.sent_at
                                    ).exclude(source_message_id=message.pk).select_for_update()
    for reminder in open_:
        status = closes(message.content, reminder.task)
        if status:
            _close(reminder, status, f"said in message {message.pk}: {message.content[:200]!r}", None)


def _close(reminder: Reminder, status: str, reason: str, actor) -> Reminder:
    reminder.status, reminder.closed_at, reminder.closed_reason = status, timezone.now(), reason[:2000]
    reminder._change_reason = f"{status}: {reason}"
    reminder._history_user = actor
    reminder.save()
    memory_soft_delete(memory=reminder.memory, actor=actor, reason=f"reminder {status}: {reason}")
    return reminder


def reminder_create(*, owner, text: str, actor=None) -> Reminder:
    """A reminder asked for directly ("call mom on Friday at 5pm"), read against now in the owner's time zone."""
    text = (text or "").strip()
    phrase = text if text.lower().startswith("remind me") else f"remind me to {text}"
    prepared = reminders_prepare(owner=owner, text=phrase, said_at=timezone.now())
    if prepared.found is None or not prepared.found.task:
        raise ValidationError({"text": ["Say what to be reminded of, e.g. 'call mom on Friday at 5pm'."]})
    with transaction.atomic():
        return reminders_apply(owner=owner, prepared=prepared, actor=actor)


def reminder_set_status(*, reminder: Reminder, status: str, reason: str = "", actor=None) -> Reminder:
    """Done, cancelled or open again (its memory restored)."""
    if status not in Reminder.Status.values:
        raise ValidationError({"status": [f"Must be one of {', '.join(Reminder.Status.values)}."]})
    with transaction.atomic():
        locked = Reminder.objects.select_for_update().select_related("memory").get(pk=reminder.pk)
        if locked.status == status:
            return locked
        if status != Reminder.Status.OPEN:
            return _close(locked, status, reason or "by the user", actor)
        locked.status, locked.closed_at, locked.closed_reason = status, None, ""
        locked._change_reason = f"opened again: {reason or 'by the user'}"
        locked._history_user = actor
        locked.save()
        memory_restore(memory=locked.memory, actor=actor, reason="reminder opened again")
        return locked
