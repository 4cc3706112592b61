"""Deterministic extraction of memories from document text.

Documents are rarely first-person, so the dialogue extractor finds little in them. These rules pick sentences
that state something an agent should remember about the work the document describes, and nothing else:

- decisions: "We decided to use PostgreSQL.", "The board approved the budget."
- dates and deadlines: "The report is due on Tuesday.", "The launch is scheduled for 3 March 2025."
- people and roles: "Alice Smith leads the design team.", "Bob is the product owner."
- requirements: "All services must support TLS 1.3."

Precision over recall: a sentence must be a plain statement (no question, condition or hedge, no pronoun for a
subject), 4-60 words long; at most `limit` (default 5) per chunk, the most important first. Each candidate
carries its kind and the section title as tags.
"""

import re

from core import calendar_words
from extraction.candidates import Candidate, slug
from extraction.sentences import split_sentences
from observability import hooks

MIN_WORDS, MAX_WORDS = 4, 60
DEFAULT_LIMIT = 5

_ABBREVIATED = calendar_words.alternation(calendar_words.MONTH_ABBREVIATIONS, suffix=r"\.?")
_MONTHS = f"(?:{calendar_words.alternation(calendar_words.MONTHS)}|{_ABBREVIATED})"
_WEEKDAYS = f"(?:{calendar_words.alternation(calendar_words.WEEKDAYS)})"
_DATE = re.compile(
    rf"\b(?:{_WEEKDAYS}(?:,?\s+{_MONTHS}\s+\d{{1,2}}(?:st|nd|rd|th)?)?"
    rf"|\d{{1,2}}(?:st|nd|rd|th)?\s+(?:of\s+)?{_MONTHS}(?:,?\s+\d{{4}})?"
    rf"|{_MONTHS}\s+\d{{1,2}}(?:st|nd|rd|th)?(?:,?\s+\d{{4}})?"
    rf"|{_MONTHS}\s+\d{{4}}"
    r"|\d{4}-\d{2}-\d{2}"
    r"|Q[1-4]\s+\d{4}"
    r"|(?:the\s+)?end\s+of\s+(?:the\s+)?(?:week|month|quarter|year|Q[1-4])"
    r"|(?:tomorrow|next\s+(?:week|month|quarter|year)))\b"
)
_SCHEDULED = re.compile(
    r"\b(?:(?:is|are|was|were|will\s+be)\s+(?:due|scheduled|planned|set|expected|booked|postponed|moved)"
    r"|due|deadline|(?:takes|will\s+take)\s+place|(?:starts|begins|ends|launches|opens|closes|expires|ships|"
    r"kicks\s+off|goes\s+live)|will\s+(?:start|begin|end|launch|open|close|ship|expire|be\s+released|be\s+held|"
    r"happen|go\s+live))\b",
    re.IGNORECASE,
)
_DEADLINE = re.compile(r"\b(?:due|deadline)\b", re.IGNORECASE)
_DECISION = re.compile(
    r"^(?:(?:On|In|At|After|During|Following)\b[^,]{0,60},\s*)?"
    r"(?P<subject>We|The\s+(?:[a-z-]+\s+){0,2}(?:team|board|committee|group|company|council|client|customer|"
    r"management|leadership|panel|steering\s+committee)|[A-Z][a-z]+(?:\s+[A-Z][a-z]+)?)\s+"
    r"(?:have\s+|has\s+|had\s+)?(?:finally\s+|unanimously\s+|formally\s+|jointly\s+)?"
    r"(?:decided|agreed|chose|opted|resolved|approved|selected|settled\s+on|committed\s+to|signed\s+off)\b"
    r"|^(?:It\s+was|It\s+has\s+been)\s+(?:decided|agreed)\s+(?:that|to)\b"
    r"|^The\s+decision\s+(?:was|has\s+been)\s+(?:made|taken)\s+to\b"
    r"|^Decision:\s+"
)
_ROLE_TITLES = (
    r"(?:lead|manager|head|director|owner|engineer|designer|developer|architect|officer|chair|chairperson|"
    r"president|founder|co-founder|CEO|CTO|CFO|COO|contact|sponsor|analyst|scientist|consultant|coordinator|"
    r"administrator|specialist|editor|author|reviewer|maintainer|advisor|adviser|secretary|treasurer)"
)
_WORD = r"[A-Z][a-z]+(?:[-'][A-Z]?[a-z]+)?"
_NAME = rf"(?P<name>(?:(?:Dr|Mr|Mrs|Ms|Prof)\.\s+)?{_WORD}(?:\s+{_WORD}){{0,2}})"
_ROLE = re.compile(
    rf"^{_NAME}\s+(?:(?:now|currently|still)\s+)?"
    r"(?:leads|manages|heads|runs|owns|oversees|chairs|coordinates|supervises|maintains|"
    r"is\s+responsible\s+for|is\s+in\s+charge\s+of|reports\s+to|joined|founded|co-founded|"
    r"works\s+(?:as|on|for|at|in)|"
    rf"is\s+(?:the|our|a|an|their)\s+(?:[A-Za-z-]+\s+){{0,3}}{_ROLE_TITLES}s?)\b"
)
_REQUIREMENT = re.compile(
    r"^(?P<subject>(?:The|All|Every|Each|Our|Any|No)\s+[^,;:]{1,60}?|[A-Z][a-z]+(?:\s+[A-Z][a-z]+)?)\s+"
    r"(?:must|shall|(?:is|are)\s+required\s+to|needs\s+to|need\s+to|has\s+to|have\s+to|"
    r"(?:is|are)\s+(?:required|mandatory))\b"
)
# words that begin a sentence but are not a name
_NOT_NAMES = {
    "The", "This", "That", "These", "Those", "It", "Its", "We", "They", "Our", "Their", "A", "An", "In", "On", "At",
    "If", "When", "While", "After", "Before", "During", "For", "From", "To", "With", "As", "He", "She", "His", "Her",
    "There", "Here", "Each", "Every", "All", "Some", "Any", "No", "One", "Everyone", "Nobody", "Someone", "Who",
    "What", "Which", "Why", "How", "Please", "Note", "Also", "Then", "So", "But", "And", "Or", "Yet", "Today",
    "Tomorrow", "Yesterday", *(day.title() for day in calendar_words.WEEKDAYS),
    "Everybody", "Anyone", "Nothing", "Such", "Many", "Most", "Both", "Either", "Neither", "Your", "My", "You", "I",
}
_PRONOUN_START = re.compile(r"^(?:It|This|That|These|Those|He|She|They|Its|His|Her|Their|Such|Both)\b")
_CONDITIONAL = re.compile(r"^(?:If|When|Whenever|Unless|Whether|Should|Could|Would|Suppose|Imagine|Perhaps|Maybe)\b")
_HEDGE = re.compile(r"\b(?:might|may|could|would|perhaps|maybe|possibly|probably|unless|whether|if)\b")
_NOT_PROSE = re.compile(r"[|{}<>=#@\\]|^\W|https?://")


def _subject(words: str) -> str:
    subject = re.sub(r"^(?:The|All|Every|Each|Our|Any|No)\s+", "", words.strip())
    return subject[:200] if subject not in ("We",) else ""


def _plain_statement(sentence: str) -> bool:
    words = sentence.split()
    if not MIN_WORDS <= len(words) <= MAX_WORDS:
        return False
    if "?" in sentence or not sentence[0].isupper():
        return False
    if sentence[-1] not in ".!" and not sentence[-1].isalnum() and sentence[-1] not in ")\"'”’":
        return False
    if _NOT_PROSE.search(sentence) or _CONDITIONAL.match(sentence):
        return False
    return True


def classify(sentence: str) -> Candidate | None:
    """The candidate a sentence makes, or None."""
    if not _plain_statement(sentence):
        return None
    hedged = bool(_HEDGE.search(sentence))
    content = sentence if sentence[-1] in ".!" else sentence + "."
    dates = [m.group(0) for m in _DATE.finditer(sentence)]

    match = _DECISION.search(sentence)
    if match and not hedged:
        subject = _subject(match.group("subject") or "") if match.groupdict().get("subject") else ""
        if subject and subject.split()[0] in _NOT_NAMES - {"We"}:
            subject = ""
        if not _PRONOUN_START.match(sentence) or sentence.startswith("It was") or sentence.startswith("It has"):
            entities = {"dates": dates} if dates else {}
            return Candidate(content, "context", subject=subject, tags=("decision",), entities=entities,
                                     importance=0.65, kind="decision")
    if _PRONOUN_START.match(sentence) or hedged:
        return None
    if dates and _SCHEDULED.search(sentence):
        verb = _SCHEDULED.search(sentence)
        subject = _subject(sentence[: verb.start()]) if verb.start() > 0 else ""
        if len(subject.split()) > 8:
            subject = ""
        deadline = bool(_DEADLINE.search(sentence))
        return Candidate(content, "fact", subject=subject, tags=("deadline" if deadline else "date",),
                                 entities={"dates": dates}, importance=0.7 if deadline else 0.6,
                                 kind="deadline" if deadline else "date")
    match = _ROLE.match(sentence)
    if match:
        name = match.group("name")
        if name.split()[0].rstrip(".") not in _NOT_NAMES and name.split()[-1] not in _NOT_NAMES:
            return Candidate(content, "fact", subject=name, tags=("people",), entities={"people": [name]},
                                     importance=0.6, kind="role")
    match = _REQUIREMENT.match(sentence)
    if match:
        words = match.group("subject")
        if words.split()[0] in _NOT_NAMES - {"The", "All", "Every", "Each", "Our", "Any", "No"}:
            return None
        return Candidate(content, "context", subject=_subject(words), tags=("requirement",),
                                 importance=0.6, kind="requirement")
    return None


@hooks.extraction("document")
def extract_document(text: str, *, section_title: str = "", limit: int = DEFAULT_LIMIT) -> list[Candidate]:
    """At most `limit` candidates from a chunk's text, the most important first (ties in reading order), each
    tagged with its kind and the section's title."""
    found: list[tuple[int, Candidate]] = []
    seen: set[str] = set()
    section_tag = slug(section_title)
    for position, sentence in enumerate(split_sentences(text)):
        candidate = classify(sentence)
        if candidate is None:
            continue
        key = re.sub(r"\W+", " ", candidate.content.lower()).strip()
        if key in seen:
            continue
        seen.add(key)
        tags = tuple(dict.fromkeys([*candidate.tags, *([section_tag] if section_tag else [])]))
        found.append((position, Candidate(
            candidate.content, candidate.category, subject=candidate.subject, tags=tags,
            entities=candidate.entities, importance=candidate.importance, kind=candidate.kind,
        )))
    found.sort(key=lambda item: (-item[1].importance, item[0]))
    return [candidate for _, candidate in found[:limit]]
