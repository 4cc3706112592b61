"""Reads of the profile: its entries by section and its text within a token budget (pinned entries first, then by
importance and evidence), as the API, the tools, the panel and the context show it."""

from dataclasses import dataclass

from django.db.models import F

from integrations.embeddings import count_tokens
from profiles.models import ProfileEntry, Reminder, Section
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


def packed(entries: list[ProfileEntry], budget: int) -> tuple[list[ProfileEntry], str, int]:
    """The entries that fit in `budget` tokens (header and section titles included), pinned first, then by score;
    the text lists them by section. Returns (chosen, text, tokens)."""
    ranked = sorted(entries, key=lambda e: (not e.pinned, -entry_score(e), e.key))
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


def visible_lines(profile) -> list:
    """The visible entries as light rows with what `packed` and the context read (no model instances: building
    ~100 of them at every context was ~5 ms)."""
    return list(ProfileEntry.objects.filter(profile=profile, hidden=False, current=True).values_list(
        "pk", "section", "text", "pinned", "importance", "evidence_count", "key", "memory_ids", named=True))


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
