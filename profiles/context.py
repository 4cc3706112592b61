"""What the context (conversations.context) shows first: the profile and the reminders due soon or overdue, within
PROFILE_SHARE of the context's budget (and never more than the user's profile budget)."""

from dataclasses import dataclass
from datetime import datetime
from zoneinfo import ZoneInfo

from django.utils import timezone

from integrations.embeddings import count_tokens
from profiles.reminder_services import DUE_SOON
from profiles.selectors import head_rows, packed, visible_lines
from profiles.services import profile_current, settings_for

PROFILE_SHARE = 0.15  # of a context's budget, for the profile and due reminders, before memories and excerpts
REMINDERS_HEADER = "Reminders due:"
DUE_SHOWN = 20  # reminders considered for the context, soonest due first


@dataclass(frozen=True)
class Head:
    """The text a context starts with, and its size in tokens."""

    text: str
    tokens: int
    memory_ids: tuple = ()  # the memories behind the profile entries shown


def _reminder_line(task: str, due_at: datetime, now: datetime, zone: str) -> str:
    due = due_at.astimezone(ZoneInfo(zone))
    state = "overdue since" if due_at < now else "due"
    return f"- {task} ({state} {due:%a} {due.day} {due:%b %Y} {due:%H:%M})"


def profile_block(*, owner, project=None, budget: int, as_of: datetime | None = None,
                  found: tuple = ()) -> Head:
    """The profile and due reminders (open, due within DUE_SOON or overdue, the DUE_SHOWN soonest) for a context
    of `budget` tokens, in PROFILE_SHARE of it; when not all entries fit, those about what the question `found`
    (memory ids, best first) go first. A context about another moment (`as_of`) gets none: the profile says what
    is true now. One round trip while the profile is current (profiles.selectors.head_rows); after the memories
    changed, the profile is rebuilt first."""
    if as_of is not None:
        return Head("", 0)
    now = timezone.now()
    rows = head_rows(owner=owner, project=project, until=now + DUE_SOON, reminders=DUE_SHOWN)
    if rows.time_zone is None:  # no settings row yet: made with the defaults
        made = settings_for(owner)
        time_zone, profile_budget = made.time_zone, made.profile_budget
    else:
        time_zone, profile_budget = rows.time_zone, rows.profile_budget
    room = min(int(budget * PROFILE_SHARE), profile_budget)
    lines = [_reminder_line(task, due_at, now, time_zone) for task, due_at in rows.reminders]
    reminders = ""
    for end in range(len(lines), 0, -1):  # the most urgent that fit
        reminders = "\n".join([REMINDERS_HEADER, *lines[:end]])
        if count_tokens(reminders) <= room // 2:
            break
        reminders = ""
    left = room - (count_tokens(reminders) + 1 if reminders else 0)
    entries = rows.lines if rows.current else visible_lines(profile_current(owner=owner, project=project))
    shown, profile, _ = packed(entries, left, prefer={memory_id: rank for rank, memory_id in enumerate(found)})
    text = "\n".join(part for part in (profile, reminders) if part)
    memory_ids = tuple(dict.fromkeys(m for entry in shown for m in entry.memory_ids))
    return Head(text, count_tokens(text) if text else 0, memory_ids)
