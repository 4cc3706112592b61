"""Writes of profiles and settings: a profile rebuilt from the owner's current memories, and the user's own edits
of its entries. Each function is one transaction; every change of an entry is a history row with its reason."""

import math
from dataclasses import dataclass, field
from typing import Any

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from memories.models import Memory, MemoryStamp
from profiles.models import Profile, ProfileEntry, Section, UserSettings
from profiles.sections import entry_key, section_of

REBUILD_MEMORIES = 5000  # newest live memories a rebuild reads: a profile is about what is current


def evidence_of(memory: Memory) -> int:
    """How many statements a memory stands for: 1, or what consolidation merged into it (metadata)."""
    meta = memory.metadata if isinstance(memory.metadata, dict) else {}
    count = meta.get("evidence_count", 1)
    return count if isinstance(count, int) and count > 0 else 1


def entry_score(entry) -> float:
    """Order within the budget: importance, then how often it was said (a log: the fifth mention adds little)."""
    return entry.importance + 0.1 * math.log2(1 + entry.evidence_count)


@dataclass
class Built:
    """An entry as the memories say it, before it is compared with the stored one."""

    section: Section
    key: str
    memories: list = field(default_factory=list)

    @property
    def newest(self) -> Memory:
        return max(self.memories, key=lambda m: (m.valid_from, m.created_at))

    def values(self) -> dict[str, Any]:
        return {"section": self.section, "text": self.newest.content,
                "memory_ids": [m.pk for m in sorted(self.memories, key=lambda m: m.created_at)],
                "evidence_count": sum(evidence_of(m) for m in self.memories),
                "last_confirmed": max(m.updated_at for m in self.memories),
                "importance": max(m.importance for m in self.memories)}


def _id(owner) -> int:
    return getattr(owner, "pk", owner)


def settings_for(owner) -> UserSettings:
    found = UserSettings.objects.filter(owner_id=_id(owner)).first()
    if found is not None:
        return found
    with transaction.atomic():
        settings, _ = UserSettings.objects.get_or_create(owner_id=_id(owner))
        return settings


def settings_update(*, owner, data: dict[str, Any]) -> UserSettings:
    with transaction.atomic():
        settings, _ = UserSettings.objects.select_for_update().get_or_create(owner_id=_id(owner))
        for name in ("time_zone", "profile_budget"):
            if name in data:
                setattr(settings, name, data[name])
        settings.full_clean()
        settings.save()
    return settings


def memory_stamp(owner) -> int | None:
    return MemoryStamp.objects.filter(owner_id=getattr(owner, "pk", owner)).values_list("stamp", flat=True).first()


def built_entries(owner, project) -> dict[str, Built]:
    """The entries the owner's current memories in the scope make, by key."""
    memories = (Memory.objects.owned_by(owner).active().in_scope(project)
                .defer("embedding", "search_vector").order_by("-created_at")[:REBUILD_MEMORIES])
    found: dict[str, Built] = {}
    for memory in memories:
        section = section_of(memory)
        if section is None:
            continue
        key = entry_key(memory)
        found.setdefault(key, Built(section, key)).memories.append(memory)
    return found


def profile_rebuild(*, owner, project=None, reason: str = "rebuilt from memories") -> Profile:
    """Rebuild the profile of `owner` in `project`'s scope from the current memories. Automatic entries follow the
    memories (one that lost its last live memory is kept, marked not current); an entry the user edited, hid or
    wrote keeps the user's text and state, and only its evidence follows. Unchanged entries get no history row."""
    stamp = memory_stamp(owner)
    built = built_entries(owner, project)
    with transaction.atomic():
        profile, _ = Profile.objects.select_for_update().get_or_create(owner_id=_id(owner), project=project)
        stored = {e.key: e for e in ProfileEntry.objects.select_for_update().filter(profile=profile)}
        _follow_renames(built, stored)
        for key, entry in built.items():
            values = {**entry.values(), "current": True}
            existing = stored.get(key)
            if existing is None:
                new = ProfileEntry(owner_id=_id(owner), profile=profile, key=key, **values)
                new._change_reason = reason
                new.save()
                continue
            if existing.user_edited or existing.origin == ProfileEntry.Origin.USER:
                values.pop("text")  # the user's words (and placement) win
                values.pop("section")
            _save_if_changed(existing, {**values, "key": key}, reason)
        for key, existing in stored.items():
            if key not in built and existing.origin == ProfileEntry.Origin.AUTO and existing.current:
                _save_if_changed(existing, {"current": False}, f"{reason}: no live memory supports it any more")
        profile.built_at, profile.built_stamp = timezone.now(), stamp
        profile.save()
    return profile


def _follow_renames(built: dict[str, Built], stored: dict[str, ProfileEntry]) -> None:
    """An entry whose key the memories no longer make, but whose memory (edited: same id) or whose memory's
    successor (superseded: `supersedes`) makes a new key, moves to that key: the user's edit follows the fact."""
    orphans = {pk: e for e in stored.values() if e.key not in built for pk in e.memory_ids}
    for key, entry in built.items():
        if key in stored:
            continue
        for memory in entry.memories:
            old = orphans.get(memory.pk) or orphans.get(memory.supersedes_id)
            if old is not None and old.key not in built and stored.get(old.key) is old:
                del stored[old.key]
                old.key = key
                stored[key] = old
                break


def _save_if_changed(entry: ProfileEntry, values: dict[str, Any], reason: str) -> None:
    changed = False
    for name, value in values.items():
        if getattr(entry, name) != value:
            setattr(entry, name, value)
            changed = True
    if changed:
        entry._change_reason = reason
        entry.save()


def profile_current(*, owner, project=None) -> Profile:
    """The profile, rebuilt first when the owner's memories changed since the last build (their stamp moved)."""
    profile = Profile.objects.filter(owner_id=_id(owner), project=project).first()
    if profile is None or profile.built_stamp != memory_stamp(owner):
        profile = profile_rebuild(owner=owner, project=project)
    return profile


EDITABLE = ("text", "section", "pinned", "hidden")


def entry_update(*, entry: ProfileEntry, data: dict[str, Any], actor=None) -> ProfileEntry:
    """The user's change of an entry: new text or section (it then keeps the user's version over rebuilds), pin,
    hide (a deletion that rebuilds respect), or `user_edited: false` to hand it back to the memories."""
    with transaction.atomic():
        locked = ProfileEntry.objects.select_for_update().get(pk=entry.pk)
        for name in EDITABLE:
            if name in data:
                setattr(locked, name, data[name])
        if "text" in data or "section" in data:
            locked.user_edited = True
        if data.get("user_edited") is False:
            locked.user_edited = False
            if locked.memory_ids:
                newest = (Memory.objects.filter(owner=locked.owner_id, pk__in=locked.memory_ids).active()
                          .order_by("-valid_from").values_list("content", flat=True).first())
                locked.text = newest or locked.text
        if not (locked.text or "").strip():
            raise ValidationError({"text": ["An entry's text may not be blank."]})
        locked.full_clean(exclude=["profile", "owner"])
        locked._change_reason = "edited by the user: " + ", ".join(sorted(data))
        locked._history_user = actor
        locked.save()
    return locked


def entry_create(*, owner, project=None, section: str, text: str, actor=None) -> ProfileEntry:
    """An entry the user writes (no memory behind it): kept as written by every rebuild."""
    if not (text or "").strip():
        raise ValidationError({"text": ["An entry's text may not be blank."]})
    with transaction.atomic():
        profile, _ = Profile.objects.get_or_create(owner_id=_id(owner), project=project)
        entry = ProfileEntry(owner_id=_id(owner), profile=profile, section=section, text=text.strip(),
                             key=f"user|{timezone.now().timestamp():.6f}", origin=ProfileEntry.Origin.USER,
                             user_edited=True, importance=0.8, last_confirmed=timezone.now(),
                             evidence_count=0)
        entry.full_clean(exclude=["profile", "owner"])
        entry._change_reason = "written by the user"
        entry._history_user = actor
        entry.save()
    return entry
