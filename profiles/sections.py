"""Which profile section a memory belongs to, from what extraction already says about it: its attribute (the frame
kinds of extraction.attribute_kinds and the slots of extraction.slots, stored in `metadata["attribute"]`), else
its category and topic tags (extraction.slots' categories and TOPICS). Memories of events, visits and purchases,
past episodes ("history") and reminders are not part of a profile: an agent finds those by search."""

import re

from extraction.attribute_kinds import BY_NAME
from extraction.slots import topic_tags
from profiles.models import Section

# attribute (its name before ":", e.g. "allergy:peanuts" -> "allergy") -> section; None: not a profile fact
ATTRIBUTE_SECTIONS: dict[str, Section | None] = {
    # frame kinds (extraction.attribute_kinds)
    "name": Section.IDENTITY, "preferred name": Section.IDENTITY, "age": Section.IDENTITY,
    "phone": Section.IDENTITY, "email": Section.IDENTITY, "language": Section.IDENTITY,
    "home": Section.HOME, "car": Section.PREFERENCES, "phone model": Section.PREFERENCES,
    "employer": Section.WORK, "job title": Section.WORK, "manager": Section.WORK, "school": Section.WORK,
    "skill": Section.WORK,
    "partner": Section.FAMILY, "relationship status": Section.FAMILY, "child": Section.FAMILY,
    "sibling": Section.FAMILY, "friend": Section.FAMILY, "pet": Section.FAMILY,
    "allergy": Section.HEALTH, "diet": Section.HEALTH, "health": Section.HEALTH,
    "favourite": Section.PREFERENCES, "hobby": Section.PREFERENCES,
    "event": None, "visit": None, "purchase": None,
    # slots of extraction.slots that are not frame kinds
    "location": Section.HOME, "occupation": Section.WORK, "marital status": Section.FAMILY,
    "relation": Section.FAMILY,
}
# attributes whose values accumulate (one entry per value) are the frame kinds that say so, and the slots that
# carry their value in the name ("allergy:peanuts", "relation:sister:ana")
ACCUMULATING = {name for name, kind in BY_NAME.items() if not kind.single}

CATEGORY_SECTIONS: dict[str, Section | None] = {
    "restriction": Section.HEALTH, "goal": Section.GOALS, "preference": Section.PREFERENCES,
    "skill": Section.WORK, "relationship": Section.FAMILY, "routine": Section.ROUTINES,
    "history": None, "event": None, "reminder": None,
}
# a plain fact goes by its first topic tag (extraction.slots.TOPICS); one without any is about who the person is
TAG_SECTIONS: dict[str, Section] = {
    "health": Section.HEALTH, "work": Section.WORK, "education": Section.WORK, "family": Section.FAMILY,
    "pets": Section.FAMILY, "hobby": Section.PREFERENCES, "food": Section.PREFERENCES, "home": Section.HOME,
    "location": Section.HOME,
}
# what makes a statement a routine: it says how often (the one pattern of its kind in the code base)
ROUTINE = re.compile(r"(?i)\b(?:every (?:day|morning|evening|night|week|weekend|month|monday|tuesday|wednesday|"
                     r"thursday|friday|saturday|sunday)|each (?:morning|evening|day|week)|daily|weekly|nightly|"
                     r"usually|on weekends|twice a (?:day|week))\b")
ORDER = list(Section)


def attribute_of(memory) -> str:
    meta = memory.metadata if isinstance(memory.metadata, dict) else {}
    attribute = meta.get("attribute")
    return attribute if isinstance(attribute, str) else ""


def section_of(memory) -> Section | None:
    """The section a live memory belongs to, or None when it is no profile fact."""
    category = (memory.category or "").lower()
    if category in ("relationship", "reminder"):  # about someone close (their job is no work of the user's)
        return CATEGORY_SECTIONS[category]
    attribute = attribute_of(memory)
    base = attribute.split(":", 1)[0]
    if base in ATTRIBUTE_SECTIONS:
        return ATTRIBUTE_SECTIONS[base]
    if category in ("fact", "preference", "") and ROUTINE.search(memory.content):
        return Section.ROUTINES
    if category in CATEGORY_SECTIONS:
        return CATEGORY_SECTIONS[category]
    # its tags, else the topics its words name (a memory written by hand often has neither category nor tags)
    for tag in [*(memory.tags or ()), *topic_tags(memory.content)]:
        if tag in TAG_SECTIONS:
            return TAG_SECTIONS[tag]
    return Section.IDENTITY if category == "fact" else None


_NON_WORD = re.compile(r"[^\w]+")


def entry_key(memory) -> str:
    """What an entry is about, stable across rebuilds: subject and attribute for an attribute that holds one value,
    with the value too for one that accumulates; otherwise the statement's words."""
    subject = (memory.subject or "user").lower()
    attribute = attribute_of(memory)
    if attribute:
        meta = memory.metadata if isinstance(memory.metadata, dict) else {}
        value = meta.get("value") if isinstance(meta.get("value"), str) else ""
        if attribute.split(":", 1)[0] in ACCUMULATING or ":" in attribute:
            return f"{subject}|{attribute}|{value.lower() or _words(memory.content)}"[:300]
        return f"{subject}|{attribute}"[:300]
    return f"{subject}|{_words(memory.content)}"[:300]


def _words(text: str) -> str:
    return _NON_WORD.sub(" ", text.lower()).strip()
