"""Reads of the profile: its entries by section and its text within a token budget (pinned entries first, then by
importance and evidence), as the API, the tools, the panel and the context show it."""

import json
import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import NamedTuple

from django.db import connection
from django.db.models import F

from integrations.embeddings import count_tokens
from memories.models import MemoryStamp
from profiles.models import Profile, ProfileEntry, Reminder, Section, UserSettings
from profiles.sections import ORDER
from profiles.services import entry_score, profile_current, settings_for

PROFILE_HEADER = "About the user (profile):"


@dataclass(frozen=True)
class ProfileView:
    """A profile as read: every visible entry by section (`shown`: those the text has room for), the text and
    its size in tokens."""

    sections: list[tuple[Section, list[ProfileEntry]]]
    shown: set
    text: str
    tokens: int
    budget: int
    built_at: object


def _line(entry: ProfileEntry) -> str:
    return f"- {entry.text}"


def packed(entries: list[ProfileEntry], budget: int, prefer: dict | None = None) -> tuple[list[ProfileEntry], str, int]:
    """The entries that fit in `budget` tokens (header and section titles included), pinned first, then those
    whose memories `prefer` ranks (memory id -> rank: what a question found), then by score; the text lists them
    by section. Returns (chosen, text, tokens)."""
    prefer = prefer or {}
    last = len(prefer)
    ranked = sorted(entries, key=lambda e: (not e.pinned, min((prefer.get(m, last) for m in e.memory_ids),
                                                              default=last), -entry_score(e), e.key))
    used = count_tokens(PROFILE_HEADER) + 1
    chosen, titled = [], set()
    for entry in ranked:
        cost = count_tokens(_line(entry)) + 1
        if entry.section not in titled:
            cost += count_tokens(Section(entry.section).label + ":") + 1
        if used + cost > budget and not (entry.pinned and not chosen):
            continue
        chosen.append(entry)
        titled.add(entry.section)
        used += cost
    if not chosen:
        return [], "", 0
    lines = [PROFILE_HEADER]
    for section in ORDER:
        mine = [e for e in chosen if e.section == section]
        if mine:
            lines.append(f"{section.label}:")
            lines += [_line(e) for e in mine]
    text = "\n".join(lines)
    return chosen, text, count_tokens(text)


def visible_entries(profile) -> list[ProfileEntry]:
    return list(ProfileEntry.objects.filter(profile=profile, hidden=False, current=True))


class Line(NamedTuple):
    """A visible entry as `packed` and the context read it (no model instance: a context reads about a hundred
    at every turn)."""

    pk: int
    section: str
    text: str
    pinned: bool
    importance: float
    evidence_count: int
    key: str
    memory_ids: list


def visible_lines(profile) -> list[Line]:
    return [Line(*row) for row in ProfileEntry.objects.filter(profile=profile, hidden=False, current=True)
            .values_list(*Line._fields)]


@dataclass(frozen=True)
class HeadRows:
    """What the context's head (profiles.context) reads, in one round trip: the user's settings, whether the
    profile is current (built at the owner's memory stamp), its visible entries and the open reminders due."""

    time_zone: str | None  # None: no settings row yet
    profile_budget: int | None
    current: bool  # False: no profile yet, or the memories changed since it was built
    lines: list[Line]
    reminders: list[tuple[str, datetime]]  # (task, due_at), soonest first


_DUE = (f"FROM {Reminder._meta.db_table} AS r WHERE r.owner_id = %(owner)s AND r.status = %(open)s "
        f"AND r.due_at <= %(until)s ORDER BY r.due_at, r.id LIMIT %(reminders)s")
HEAD = (
    f"SELECT s.time_zone, s.profile_budget, p.id IS NOT NULL AND p.built_stamp IS NOT DISTINCT FROM "
    f"(SELECT t.stamp FROM {MemoryStamp._meta.db_table} AS t WHERE t.owner_id = %(owner)s), "
    f"(SELECT json_agg(json_build_array({', '.join('e.id' if name == 'pk' else f'e.{name}' for name in Line._fields)}))"
    f" FROM {ProfileEntry._meta.db_table} AS e WHERE e.profile_id = p.id AND e.owner_id = %(owner)s "
    f"AND NOT e.hidden AND e.current), "
    f"ARRAY(SELECT r.task {_DUE}), ARRAY(SELECT r.due_at {_DUE}) "
    f"FROM (SELECT 1) AS one "
    f"LEFT JOIN {UserSettings._meta.db_table} AS s ON s.owner_id = %(owner)s "
    f"LEFT JOIN {Profile._meta.db_table} AS p ON p.owner_id = %(owner)s AND p.project_id IS NOT DISTINCT FROM "
    f"%(project)s::bigint"
)


def head_rows(*, owner, project=None, until: datetime, reminders: int) -> HeadRows:
    """The context head's rows (HeadRows), reminders open and due by `until`, at most `reminders` of them."""
    owner_id = getattr(owner, "pk", owner)
    with connection.cursor() as cursor:
        cursor.execute(HEAD, {"owner": owner_id, "project": getattr(project, "pk", project), "until": until,
                              "open": Reminder.Status.OPEN, "reminders": reminders})
        time_zone, budget, current, lines, tasks, due = cursor.fetchone()
    if isinstance(lines, str):
        lines = json.loads(lines)
    return HeadRows(time_zone, budget, current,
                    [Line(*line[:-1], [uuid.UUID(m) for m in line[-1]]) for line in lines or []] if current else [],
                    list(zip(tasks, due, strict=True)))


def profile_view(*, owner, project=None, budget: int | None = None, include_hidden: bool = False) -> ProfileView:
    """The owner's profile in the scope, rebuilt first if the memories changed; `budget` defaults to the user's
    setting (300 tokens)."""
    budget = budget or settings_for(owner).profile_budget
    profile = profile_current(owner=owner, project=project)
    entries = visible_entries(profile)
    chosen, text, tokens = packed(entries, budget)
    listed = entries if not include_hidden else list(ProfileEntry.objects.filter(profile=profile))
    sections = [(s, sorted([e for e in listed if e.section == s],
                           key=lambda e: (not e.pinned, -entry_score(e), e.key))) for s in ORDER]
    return ProfileView(sections=[(s, es) for s, es in sections if es], shown={e.pk for e in chosen}, text=text,
                       tokens=tokens, budget=budget, built_at=profile.built_at)


def reminders_list(*, owner, status: str = "open", due_before=None):
    """The owner's reminders, soonest first (those without a time last); `status` 'all' for every one."""
    queryset = Reminder.objects.filter(owner=owner).select_related("memory")
    if status != "all":
        queryset = queryset.filter(status=status)
    if due_before is not None:
        queryset = queryset.filter(due_at__lte=due_before)
    return queryset.order_by(F("due_at").asc(nulls_last=True), "created_at")
