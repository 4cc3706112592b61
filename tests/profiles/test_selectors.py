"""The profile's text within a budget: pinned entries first, then those about what a question found, then by
importance and evidence."""

import uuid

from profiles.models import ProfileEntry, Section
from profiles.selectors import packed


def entry(text, importance, *, pinned=False, section=Section.PREFERENCES):
    return ProfileEntry(key=text, text=text, section=section, importance=importance, evidence_count=1,
                        pinned=pinned, memory_ids=[uuid.uuid4()])


def test_entries_about_what_the_question_found_come_before_more_important_ones():
    pinned = entry("The user is vegan.", 0.2, pinned=True, section=Section.HEALTH)
    important = [entry(f"The user loves sport number {i}.", 0.9) for i in range(6)]
    asked = entry("The user collects vintage fountain pens.", 0.3)
    entries = [*important, asked, pinned]
    room = 40
    chosen, _, tokens = packed(entries, room)
    assert asked not in chosen and chosen[0] is pinned and tokens <= room
    chosen, text, tokens = packed(entries, room, prefer={asked.memory_ids[0]: 0})
    assert chosen[:2] == [pinned, asked] and "fountain pens" in text and tokens <= room
