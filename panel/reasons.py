"""Why a memory changed, as people read it. A version's reason is stored as the pipeline writes it (the reconciler's
decision with its rule, values, frame cosine and evidence message ids: memories.reconcile, memories.planning), and
the API and tests read it so; the panel shows it as a sentence instead: "Replaced: home changed from Acme to Lisbon
(said in “Moving” on 27 Nov 2026)", with the evidence as links to the messages and the stored text under a
collapsed "details". Ids the text names (memories, messages, conversations) become links to what they name, read
in a few queries per page and only among the owner's rows.

Nothing here writes: a reason this module does not recognise is shown as written, its ids linked."""

import re
from dataclasses import dataclass, field

from django.template.defaultfilters import date as date_filter
from django.template.defaultfilters import truncatechars
from django.urls import reverse

from conversations.models import Conversation, Message
from documents.models import Document
from extraction.attribute_kinds import BY_NAME
from memories.models import Memory

DAY_FORMAT = "j M Y"  # "27 Nov 2026", in a sentence
SNIPPET = 80  # characters of a message quoted as evidence
TRANSCRIPT_PAGE = 100  # messages a page of the conversation page shows (panel.views.conversation_detail)
UUID = re.compile(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b")
# memories.reconcile's note: "<source>: <ACTION> (<why>[; evidence messages <ids>])", and what a write adds after it
DECISION = re.compile(r"^(?P<source>.*?): (?P<action>ADD|UPDATE|NOOP|KEEP) \((?P<why>.*)\)(?P<tail>[^()]*)$", re.S)
EVIDENCE = re.compile(r"^evidence messages (?P<ids>.*)$")
EXTRACTED = re.compile(rf"^extracted from message (?P<message>{UUID.pattern}) of conversation "
                       rf"(?P<conversation>{UUID.pattern})$")
DOCUMENT = re.compile(rf"^document (?P<document>{UUID.pattern}|\d+) chunk (?P<chunk>\d+)$")
IMPORTED = re.compile(r"^imported from (?P<format>[\w-]+) \(import [^)]*\)$")
SUPERSEDED_BY = re.compile(rf"; superseded by {UUID.pattern}$")  # memories.writes / reconcile: the link's reason
COSINE = re.compile(r"^(?:frame )?cosine [\d.]+$")
ISO_DAY = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b")
MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")
HEADLINES = {"UPDATE": "Replaced", "ADD": "Learnt", "KEEP": "Kept beside what was known", "NOOP": "Said again"}


@dataclass(frozen=True)
class Part:
    """A piece of the sentence: text, or a link to what it names."""

    text: str
    url: str = ""


@dataclass(frozen=True)
class Evidence:
    """A message the decision rests on: a quote of it, linked to it in its conversation, and when it was said."""

    quote: str
    url: str
    conversation: str
    day: str


@dataclass
class Reading:
    """A reason as the panel shows it: a headline ("Replaced"), the sentence, the evidence, and the stored text
    (shown collapsed when the sentence says it otherwise)."""

    raw: str
    headline: str = ""
    parts: list[Part] = field(default_factory=list)
    evidence: list[Evidence] = field(default_factory=list)

    @property
    def text(self) -> str:
        return (f"{self.headline}: " if self.headline else "") + "".join(p.text for p in self.parts)

    @property
    def rewritten(self) -> bool:
        return self.text != self.raw


class Names:
    """The owner's rows that a page's reasons name by id, read once per page."""

    def __init__(self, owner, reasons):
        ids = {match for reason in reasons for match in UUID.findall(reason or "")}
        owner_id = getattr(owner, "pk", owner)
        messages = (Message.objects.filter(owner_id=owner_id, pk__in=ids).select_related("conversation")
                    .only("id", "content", "sent_at", "sequence", "conversation__id", "conversation__title"))
        self.messages = {str(m.pk): m for m in messages} if ids else {}
        self.memories = {str(m.pk): m for m in Memory.objects.owned_by(owner_id).filter(pk__in=ids)
                         .only("id", "content")} if ids else {}
        self.conversations = {str(c.pk): c for c in Conversation.objects.filter(owner_id=owner_id, pk__in=ids)
                              .only("id", "title")} if ids else {}
        self.documents = {str(d.pk): d for d in Document.objects.filter(owner_id=owner_id, pk__in=ids)
                          .only("id", "filename")} if ids else {}

    def texts(self) -> list[str]:
        """What the rows say: where a value's own spelling is found ("acme" -> "Acme")."""
        return [m.content for m in self.messages.values()] + [m.content for m in self.memories.values()]

    def link(self, pk: str) -> Part:
        if pk in self.memories:
            memory = self.memories[pk]
            return Part(f"“{truncatechars(memory.content, SNIPPET)}”", reverse("panel:memory_detail", args=[pk]))
        if pk in self.messages:
            message = self.messages[pk]
            return Part(f"“{truncatechars(message.content, SNIPPET)}”", message_url(message))
        if pk in self.conversations:
            conversation = self.conversations[pk]
            return Part(conversation_name(conversation),
                        reverse("panel:conversation_detail", args=[conversation.pk]))
        if pk in self.documents:
            document = self.documents[pk]
            return Part(f"“{document.filename}”", reverse("panel:document_detail", args=[document.pk]))
        return Part("something since deleted")


def message_url(message: Message) -> str:
    """The message in its conversation's transcript, on the page that shows it."""
    page = (message.sequence - 1) // TRANSCRIPT_PAGE + 1 if message.sequence else 1
    query = f"?page={page}" if page > 1 else ""
    return f"{reverse('panel:conversation_detail', args=[message.conversation_id])}{query}#message-{message.pk}"


def conversation_name(conversation: Conversation) -> str:
    return f"“{conversation.title}”" if conversation.title else "untitled conversation"


def said_on(moment) -> str:
    return date_filter(moment, DAY_FORMAT)


def linked(text: str, names: Names) -> list[Part]:
    """Text with each id it names replaced by a link to that row (its words, not its id)."""
    parts, at = [], 0
    for match in UUID.finditer(text):
        if match.start() > at:
            parts.append(Part(text[at:match.start()]))
        parts.append(names.link(match.group(0)))
        at = match.end()
    if at < len(text):
        parts.append(Part(text[at:]))
    return parts


def spelled(value: str, texts: list[str]) -> str:
    """A frame's value (stored lower-case: "acme") as the texts spell it ("Acme"), else as it is."""
    value = value.strip()
    if not value or value == "?":
        return "an unknown value" if value == "?" else value
    pattern = re.compile(r"(?<!\w)" + r"\s+".join(map(re.escape, value.split())) + r"(?!\w)", re.I)
    for text in texts:
        found = pattern.search(text or "")
        if found:
            return found.group(0)
    return value


def labelled(label: str, texts: list[str]) -> str:
    """A frame's label (holder and attribute: "brother employer") as people say it ("brother's employer")."""
    label = label.strip()
    for name in sorted(BY_NAME, key=len, reverse=True):
        if label == name:
            return name
        if label.endswith(" " + name):
            holder = spelled(label[: -len(name) - 1], texts)
            return f"{holder}'s {name}"
    return label


def _day(match: re.Match) -> str:
    year, month, day = (int(g) for g in match.groups())
    return f"{day} {MONTHS[month - 1]} {year}" if 1 <= month <= 12 else match.group(0)


def why_sentence(why: str, texts: list[str]) -> str:
    """The planner's rule (memories.planning: "home: acme -> lisbon; frame cosine 0.91") as a clause: "home
    changed from Acme to Lisbon". Cosines are left to the details; a rule not recognised is kept as written."""
    clauses = []
    for piece in (p.strip() for p in why.split("; ")):
        if not piece or COSINE.match(piece):
            continue
        clauses.append(_clause(piece, texts))
    return "; ".join(c for c in clauses if c)


def _clause(piece: str, texts: list[str]) -> str:
    def v(value: str) -> str:
        return spelled(value, texts)

    if m := re.fullmatch(r"already known \(cosine [\d.]+\)", piece):
        return "already known"
    if m := re.fullmatch(r"new information \(no attribute recognised\)", piece):
        return "new information"
    if m := re.fullmatch(r"new information \((?P<label>[^:]+): (?P<value>.*)\)", piece):
        return f"{labelled(m['label'], texts)} is {v(m['value'])}"
    if m := re.fullmatch(r"(?P<label>[^:]+): (?P<old>.*) -> (?P<new>.*)", piece):
        olds = " and ".join(v(o) for o in m["old"].split(", "))
        return f"{labelled(m['label'], texts)} changed from {olds} to {v(m['new'])}"
    if m := re.fullmatch(r"(?P<label>[^:]+): (?P<old>.*) ended, (?P<new>.*) is current", piece):
        return f"{labelled(m['label'], texts)} {v(m['old'])} ended while {v(m['new'])} is current"
    if m := re.fullmatch(r"(?P<label>[^:]+): (?P<value>.*) ended", piece):
        return f"{labelled(m['label'], texts)} {v(m['value'])} ended"
    if m := re.fullmatch(r"(?P<label>[^:]+): (?P<value>.*) still holds", piece):  # reconcile._carry
        return f"{labelled(m['label'], texts)} {v(m['value'])} still holds"
    if m := re.fullmatch(r"(?P<label>[^:]+): same value \((?P<value>.*)\)", piece):
        return f"{labelled(m['label'], texts)} is still {v(m['value'])}"
    if m := re.fullmatch(r"(?P<label>[^:]+): another value beside (?P<n>\d+) stored \((?:accumulates|kept)\)",
                         piece):
        known = "the one known" if m["n"] == "1" else f"the {m['n']} known"
        return f"another {labelled(m['label'], texts)} beside {known}"
    if m := re.fullmatch(r"(?P<old>.+) replaced by (?P<new>.+)", piece):
        return f"{v(m['old'])} replaced by {v(m['new'])}"
    if piece == "kept as the past":
        return "kept as the past"
    if m := re.fullmatch(r"said of (?P<said>\S+), before the current memory's (?P<current>\S+)", piece):
        return f"said of {ISO_DAY.sub(_day, m['said'])}, before the current memory's {ISO_DAY.sub(_day, m['current'])}"
    return ISO_DAY.sub(_day, piece)


def _worded(text: str) -> str:
    """Days as a sentence writes them, "supersedes <id>" (memories.writes) as "replaces"."""
    return ISO_DAY.sub(_day, re.sub(rf"\bsupersedes (?={UUID.pattern})", "replaces ", text))


def read(reason: str, names: Names, *, replaced: bool = False, texts: list[str] = ()) -> Reading:
    """One stored reason as a Reading. `replaced`: shown on the memory this decision superseded (its headline is
    "Replaced"); else on the memory it wrote. `texts`: what the page's memory says (a value's spelling)."""
    reason = reason or ""
    reading = Reading(raw=reason)
    # on the memory it superseded, its successor is named beside the reason already (the banner, the change)
    said = SUPERSEDED_BY.sub("", reason) if replaced else reason
    decision = DECISION.match(said)
    if decision is None:
        reading.parts = linked(_worded(said), names)
        return reading
    pieces = [p.strip() for p in decision["why"].split("; ")]
    evidence_ids: list[str] = []
    for piece in pieces:
        if found := EVIDENCE.match(piece):
            evidence_ids += UUID.findall(found["ids"])
    why = "; ".join(p for p in pieces if not EVIDENCE.match(p))
    all_texts = [*texts, *names.texts()]
    action = decision["action"]
    past = "kept as the past" in why or "the older" in decision["tail"] or "older than" in decision["tail"]
    if action == "UPDATE":
        reading.headline = ("Entered as the past" if past else "Replaced" if replaced else "Replaces an older memory")
    else:
        reading.headline = HEADLINES[action]
    sentence = why_sentence(why, all_texts) or "new information"
    reading.parts = [Part(sentence[0].upper() + sentence[1:] if not reading.headline else sentence)]
    reading.parts += _source(decision["source"], names)
    tail = decision["tail"].strip().lstrip(";:").strip()
    if tail:
        reading.parts += [Part("; ")] + linked(_worded(tail), names)
    for pk in dict.fromkeys(evidence_ids):
        message = names.messages.get(pk)
        if message is not None:
            reading.evidence.append(Evidence(f"“{truncatechars(message.content, SNIPPET)}”", message_url(message),
                                             conversation_name(message.conversation), said_on(message.sent_at)))
    return reading


def _source(source: str, names: Names) -> list[Part]:
    """Where the statement was made, as a parenthesis after the sentence."""
    if found := EXTRACTED.match(source):
        message = names.messages.get(found["message"])
        if message is None:
            return [Part(" (said in a message since deleted)")]
        title = message.conversation.title
        return [Part(" (said in conversation " if title else " (said in "),
                Part(f"“{title}”" if title else "a conversation", message_url(message)),
                Part(f" on {said_on(message.sent_at)})")]
    if found := DOCUMENT.match(source):
        document = names.documents.get(found["document"])
        passage = int(found["chunk"]) + 1
        if document is None:
            return [Part(f" (passage {passage} of a document since deleted)")]
        url = f"{reverse('panel:document_detail', args=[document.pk])}#chunk-{found['chunk']}"
        return [Part(f" (passage {passage} of "), Part(f"“{document.filename}”", url), Part(")")]
    if found := IMPORTED.match(source):
        return [Part(f" (imported from {found['format']})")]
    return [Part(" ("), *linked(source, names), Part(")")] if source else []


def readings(owner, reasons: list[str], *, replaced: list[bool] | None = None, texts=()) -> list[Reading]:
    """Readings of several reasons of one page, their ids looked up together."""
    names = Names(owner, reasons)
    flags = replaced or [False] * len(reasons)
    return [read(r, names, replaced=f, texts=texts) for r, f in zip(reasons, flags, strict=True)]


def frames_of(memory: Memory, *, texts=()) -> list[str]:
    """The attribute frames extraction read in the memory (`metadata["frames"]`: holder, attribute, value, ended,
    score ...) as people say them: "home: Lisbon", "brother's employer: Siemens (ended)"; [] without any."""
    meta = memory.metadata if isinstance(memory.metadata, dict) else {}
    frames = meta.get("frames")
    if not isinstance(frames, list):
        return []
    texts = [*texts, memory.content]
    lines = []
    for frame in (f for f in frames if isinstance(f, dict)):
        holder, attribute = str(frame.get("holder") or ""), str(frame.get("attribute") or "")
        value, replaces = str(frame.get("value") or ""), str(frame.get("replaces") or "")
        label = labelled(f"{holder} {attribute}".strip(), texts) if attribute else "what it has"
        line = f"{label}: {spelled(value, texts)}" if value else label
        if replaces:
            line += f", replacing {spelled(replaces, texts)}"
        if frame.get("ended") is True:
            line += " (ended)"
        lines.append(line)
    return lines
