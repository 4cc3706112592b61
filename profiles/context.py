"""What the context (conversations.context) shows first: the profile and the reminders due soon or overdue, within
PROFILE_SHARE of the context's budget (and never more than the user's profile budget)."""

from dataclasses import dataclass
from datetime import datetime
from zoneinfo import ZoneInfo

from django.utils import timezone

from integrations.embeddings import count_tokens
from profiles.models import Reminder
from profiles.reminder_services import DUE_SOON
from profiles.selectors import packed, visible_lines
from profiles.services import profile_current, settings_for

PROFILE_SHARE = 0.15  # of a context's budget, for the profile and due reminders, before memories and excerpts
REMINDERS_HEADER = "Reminders due:"


@dataclass(frozen=True)
class Head:
    """The text a context starts with, and its size in tokens."""

    text: str
    tokens: int
    memory_ids: tuple = ()  # the memories behind the profile entries shown


def due_reminders(*, owner, until: datetime | None = None) -> list[Reminder]:
    """Open reminders due by `until` (default: within DUE_SOON), overdue first."""
    until = until or timezone.now() + DUE_SOON
    return list(Reminder.objects.filter(owner=owner, status=Reminder.Status.OPEN, due_at__lte=until)
                .order_by("due_at")[:20])


def _reminder_line(reminder: Reminder, now: datetime, zone: str) -> str:
    due = reminder.due_at.astimezone(ZoneInfo(zone))
    state = "overdue since" if reminder.due_at < now else "due"
    return f"- {reminder.task} ({state} {due:%a} {due.day} {due:%b %Y} {due:%H:%M})"


def profile_block(*, owner, project=None, budget: int, as_of: datetime | None = None) -> Head:
    """The profile and due reminders for a context of `budget` tokens, in PROFILE_SHARE of it. A context about
    another moment (`as_of`) gets none: the profile says what is true now."""
    if as_of is not None:
        return Head("", 0)
    settings = settings_for(owner)
    room = min(int(budget * PROFILE_SHARE), settings.profile_budget)
    now = timezone.now()
    lines = [_reminder_line(r, now, settings.time_zone) for r in due_reminders(owner=owner)]
    reminders = ""
    for end in range(len(lines), 0, -1):  # the most urgent that fit
        reminders = "\n".join([REMINDERS_HEADER, *lines[:end]])
        if count_tokens(reminders) <= room // 2:
            break
        reminders = ""
    left = room - (count_tokens(reminders) + 1 if reminders else 0)
    shown, profile, _ = packed(visible_lines(profile_current(owner=owner, project=project)), left)
    text = "\n".join(part for part in (profile, reminders) if part)
    memory_ids = tuple(dict.fromkeys(m for entry in shown for m in entry.memory_ids))
    return Head(text, count_tokens(text) if text else 0, memory_ids)
