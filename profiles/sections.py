"""Which profile section a memory belongs to, from what extraction already says about it: its attribute (the frame
kinds of extraction.attribute_kinds and the slots of extraction.slots, stored in `metadata["attribute"]`), else
its category and topic tags (extraction.slots' categories and extraction.topics). Memories of events, visits and
purchases, past episodes ("history") and reminders are not part of a profile: an agent finds those by search."""

import re

from extraction.attribute_kinds import BY_NAME
from extraction.topics import topic_tags
from profiles.models import Section

# attribute (its name before ":", e.g. "allergy:peanuts" -> "allergy") -> section; None: not a profile fact
ATTRIBUTE_SECTIONS: dict[str, Section | None] = {
    # frame kinds (extraction.attribute_kinds)
    "name": Section.IDENTITY, "preferred name": Section.IDENTITY, "age": Section.IDENTITY,
    "phone": Section.IDENTITY, "email": Section.IDENTITY, "language": Section.IDENTITY,
    "home": Section.HOME, "car": Section.PREFERENCES, "phone model": Section.PREFERENCES,
    "employer": Section.WORK, "job title": Section.WORK, "manager": Section.WORK, "school": Section.WORK,
    "skill": Section.WORK, "workplace": Section.WORK, "work phone": Section.WORK, "work email": Section.WORK,
    "partner": Section.FAMILY, "relationship status": Section.FAMILY, "child": Section.FAMILY,
    "sibling": Section.FAMILY, "friend": Section.FAMILY, "acquaintance": Section.FAMILY, "pet": Section.FAMILY,
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
# a plain fact goes by its first topic tag (extraction.topics.TOPICS); one without any is about who the person is
TAG_SECTIONS: dict[str, Section] = {
    "health": Section.HEALTH, "work": Section.WORK, "education": Section.WORK, "family": Section.FAMILY,
    "pets": Section.FAMILY, "hobby": Section.PREFERENCES, "food": Section.PREFERENCES, "home": Section.HOME,
    "location": Section.HOME,
}
# what makes a statement a routine: it says how often (the one pattern of its kind in the code base)
ROUTINE = re.compile(r"(?i)\b(?:every (?:day|morning|evening|night|week|weekday|weekend|month|monday|tuesday|wednesday|"
                     r"thursday|friday|saturday|sunday)|each (?:morning|evening|day|week)|daily|weekly|nightly|"
                     r"usually|on weekends|twice a (?:day|week)|(?:on )?(?:mon|tues|wednes|thurs|fri|satur|sun)days|"
                     r"(?:mon|tues|wednes|thurs|fri|satur|sun)day (?:nights|mornings|evenings|afternoons))\b")
# a goal worth a profile entry is a lasting aim, not any intention ("can't wait to", "gonna", "will" are plans
# of the moment: extraction files them as goals, search finds them, the profile leaves them out)
LASTING_GOAL = re.compile(r"(?i)\b(?:goals?|targets?|dreams? (?:of|about|is)|dreaming of|aim(?:s|ing)? to|"
                          r"hop(?:e|es|ing) to|"
                          r"wants? to (?:become|be an?|learn|start|open|buy|move|retire|run|write|finish|get into)|"
                          r"plan(?:s|ning)? to|(?:my|the) (?:big |main )?plan|"
                          r"saving (?:up )?(?:for|to)|working towards?|training for|studying (?:for|to))\b")
# a statement of the moment: what the person is about to do or feels right now, or what happens on one day
MOMENTARY = re.compile(r"(?i)\b(?:can't wait|cannot wait|gonna|going to|will|'ll|looking forward|about to|tonight|"
                       r"today|tomorrow|right now|now|craving|this (?:morning|afternoon|evening|weekend|week)|"
                       r"(?:night|morning|evening|weekend|afternoon|day) of|(?:on|for) (?:mon|tues|wednes|thurs|fri|"
                       r"satur|sun)day(?!s| nights| mornings| evenings| afternoons)|"
                       r"(?:\w*day|time|weekend|that|this|it) works for)\b")
# a plain fact about who someone is (else a plain fact with no section is a remark: "art gives them joy")
IDENTITY = re.compile(r"\b(?:is|am|are) (?:originally )?from\b|\bgrew up\b|\bwas born\b|\bidentif\w+ as\b|"
                      r"\bpronouns?\b|\bnationality\b|\breligio\w*|\b(?:is|am|are) (?:an? |now )?(?:[A-Z][a-z]+\b|"
                      r"left-handed|right-handed|trans\w*|non-?binary|gay|lesbian|bisexual|queer|retired|introvert\w*|"
                      r"extrovert\w*|an only child|a twin)")
# attributes a momentary statement does not make a profile fact of (a move, a new job or a diet stays one)
WEAK_ATTRIBUTES = {"", "hobby", "favourite", "skill", "event", "visit", "purchase"}
ORDER = list(Section)


def attribute_of(memory) -> str:
    meta = memory.metadata if isinstance(memory.metadata, dict) else {}
    attribute = meta.get("attribute")
    return attribute if isinstance(attribute, str) else ""


def meta_frames(memory) -> list:
    meta = memory.metadata if isinstance(memory.metadata, dict) else {}
    frames = meta.get("frames")
    return frames if isinstance(frames, list) else []


def holder_of(memory) -> str:
    """Whose attribute the memory states, beside its subject: "" for the subject themselves, else the other person
    its frame names ("The user's brother works at Siemens": "brother"), read from the frame of the memory's own
    attribute (and value) in `metadata["frames"]`."""
    attribute = attribute_of(memory)
    if not attribute:
        return ""
    meta = memory.metadata if isinstance(memory.metadata, dict) else {}
    value = meta.get("value")
    frames = [f for f in meta_frames(memory) if isinstance(f, dict) and f.get("attribute") == attribute]
    frame = next((f for f in frames if f.get("value") == value), frames[0] if frames else None)
    holder = frame.get("holder") if frame else ""
    return holder.strip().lower() if isinstance(holder, str) else ""


def section_of(memory) -> Section | None:
    """The section a live memory belongs to, or None when it is no profile fact: events and episodes, reminders,
    plans and feelings of the moment, and remarks about someone close that fill no attribute ("my dogs make me
    happy") are found by search instead."""
    category = (memory.category or "").lower()
    content = memory.content or ""
    attribute = attribute_of(memory)
    base = attribute.split(":", 1)[0]
    frames = [f for f in meta_frames(memory) if isinstance(f, dict)]
    if category == "reminder" or (frames and all(f.get("ended") for f in frames) and category != "restriction"):
        return None  # "I left Acme", "when I was small I lived in Rome": no longer so ("I don't eat pork" is)
    if category == "goal" or (category in ("fact", "") and LASTING_GOAL.search(content)):
        return Section.GOALS if LASTING_GOAL.search(content) else None
    if base in WEAK_ATTRIBUTES and MOMENTARY.search(content):
        return None
    if base == "manager":
        return Section.WORK
    if category == "relationship" and base and any(
            f.get("attribute") == base and not f.get("holder") for f in frames):
        return ATTRIBUTE_SECTIONS.get(base)  # the speaker's own ("been with Walgreens since March": work)
    if category == "relationship":  # about someone close (their job is no work of the user's)
        return Section.FAMILY if base and ATTRIBUTE_SECTIONS.get(base, Section.FAMILY) is not None else None
    if ROUTINE.search(content) and base in WEAK_ATTRIBUTES:
        return Section.ROUTINES
    if base in ATTRIBUTE_SECTIONS:
        return ATTRIBUTE_SECTIONS[base]
    if category in CATEGORY_SECTIONS:
        return CATEGORY_SECTIONS[category]
    # its tags, else the topics its words name (a memory written by hand often has neither category nor tags)
    for tag in [*(memory.tags or ()), *topic_tags(content)]:
        if tag in TAG_SECTIONS:
            return TAG_SECTIONS[tag]
    return Section.IDENTITY if category == "fact" and IDENTITY.search(content) else None


_NON_WORD = re.compile(r"[^\w]+")


def entry_key(memory) -> str:
    """What an entry is about, stable across rebuilds: subject and attribute for an attribute that holds one value,
    with the value too for one that accumulates; otherwise the statement's words. The subject is whose attribute
    it is: another person's ("the user's brother works at Siemens": "user>brother") is never evidence of the
    subject's own ("user|employer")."""
    subject = (memory.subject or "user").lower()
    holder = holder_of(memory)
    if holder:
        subject = f"{subject}>{holder}"
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
