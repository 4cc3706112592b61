"""Excerpts of what was said for the context (conversations.context): each matching message with its neighbouring
turns, fetched in one indexed statement with what each turn said that has since been superseded; turns said on the
same day next to each other read as one excerpt under one header; a long turn is shown by its sentences nearest
the query."""

import functools
import json
import re
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime

from django.db import connection
from lemminflect import getAllLemmas
from spacy.lang.en.stop_words import STOP_WORDS

from conversations.models import Conversation, Message
from extraction.sentences import split_sentences
from integrations.embeddings import count_tokens, count_tokens_many
from memories.models import Memory
from memories.search.passages import ScoredPassage

NEIGHBOURS = 1  # turns on each side of a matching message in an excerpt: the answer is often the next turn
# a turn longer than this (word pieces) is shown by its sentences that share most words with the query, in order,
# with "…" for what is left out: a 700-token reply next to a hit otherwise fills an excerpt budget alone
# (LongMemEval's assistant turns; bench/longmemeval_context.py)
TURN_TOKENS = 100
LONG_TURNS_CACHED = 1024  # long turns whose sentences a process keeps (a few kB each)
WORDS_CACHED = 65536  # words whose lemmas a process keeps
OUTDATED = " [no longer true: superseded]"  # a turn whose every statement was superseded, on no known day
OUTDATED_SINCE = " [no longer true since {day}]"  # ... since the day the first of them stopped being true
OUTDATED_SHOWN = 2  # superseded statements named beside a turn that also said things still true
WORD = re.compile(r"[a-z]+")  # a word, as the lemmas are looked up
# what an excerpt reads of a turn, in the model's field order (Model.from_db takes the values in that order)
TURN_FIELDS = tuple(f.attname for f in Message._meta.concrete_fields if f.attname in {
    "id", "conversation_id", "sequence", "role", "name", "content", "sent_at", "client_message_id", "outline"})
# The wanted turns by the (conversation, sequence) unique index, each with its conversation's title and the
# statements extracted from it (superseded or not, and their frames): one round trip for every excerpt
TURNS = (
    f"SELECT {', '.join(f'm.{name}' for name in TURN_FIELDS)}, c.title, "
    f"(SELECT coalesce(json_agg(json_build_array(d.superseded_by_id, d.content, d.metadata -> 'frames', d.valid_to) "
    f"ORDER BY d.created_at), '[]'::json) FROM {Memory._meta.db_table} AS d "
    f"WHERE d.owner_id = %s AND d.message_id = m.id AND d.is_active) "
    f"FROM {Message._meta.db_table} AS m JOIN {Conversation._meta.db_table} AS c ON c.id = m.conversation_id "
    f"WHERE m.owner_id = %s AND (m.conversation_id, m.sequence) IN (SELECT * FROM unnest(%s::uuid[], %s::integer[]))"
)


def said_on(moment: datetime) -> str:
    """A day as the context writes it: "2 March 2023"."""
    return f"{moment.day} {moment:%B %Y}"


def _speaker(message: Message) -> str:
    return message.name or message.role


@dataclass
class ContextItem:
    """One thing in the context: the profile (with due reminders), a memory, or an excerpt of a conversation
    (matching messages with their neighbouring turns, all said on one day). `text` is what the model reads."""

    type: str  # profile | memory | excerpt
    text: str
    score: float
    tokens: int
    memory: object = None  # the Memory, for a memory item
    conversation: Conversation | None = None
    messages: list[Message] = field(default_factory=list)  # an excerpt's turns, in order
    hits: list[uuid.UUID] = field(default_factory=list)  # the excerpt's matching messages
    outdated: list[uuid.UUID] = field(default_factory=list)  # its turns marked as saying what is no longer true
    memory_ids: tuple = ()  # the profile's: the memories behind its entries
    parts: dict = field(default_factory=dict)  # a memory's: its score's parts, as search gives them

    def source(self) -> dict:
        if self.type == "profile":
            return {"memory_ids": [str(m) for m in self.memory_ids]}
        if self.type == "memory":
            m = self.memory
            return {"memory_id": str(m.pk), "conversation_id": str(m.conversation_id) if m.conversation_id else None,
                    "message_id": str(m.message_id) if m.message_id else None,
                    "document_id": (m.source_ref or {}).get("document_id"),
                    "valid_from": m.valid_from.isoformat() if m.valid_from else None,
                    "valid_to": m.valid_to.isoformat() if m.valid_to else None}
        return {"conversation_id": str(self.conversation.pk), "conversation_title": self.conversation.title,
                "message_ids": [str(m.pk) for m in self.messages], "hit_message_ids": [str(h) for h in self.hits],
                "sent_at": self.messages[0].sent_at.isoformat()}


@functools.lru_cache(maxsize=WORDS_CACHED)
def _word_lemmas(word: str) -> frozenset:
    return frozenset(lemma for lemmas in getAllLemmas(word).values() for lemma in lemmas) | {word}


def _lemmas(text: str) -> set[str]:
    """The words of `text` that carry meaning (spaCy's English stop words left out), as lemmas (each word's
    looked up once per process: a long reply's sentences repeat their words)."""
    found = set()
    for word in WORD.findall(text.lower()):
        if word not in STOP_WORDS:
            found |= _word_lemmas(word)
    return found


@functools.lru_cache(maxsize=LONG_TURNS_CACHED)
def _sentences(text: str) -> tuple[tuple[str, frozenset, int], ...]:
    """A long turn's sentences, each with its lemmas and its word pieces: for a turn without a stored outline,
    worked out once per process, as the same turns come back in excerpt after excerpt."""
    sentences = split_sentences(text, dialogue=True)
    return tuple((sentence, frozenset(_lemmas(sentence)), tokens)
                 for sentence, tokens in zip(sentences, count_tokens_many(sentences), strict=True))


def _collapsed(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()  # as split_sentences writes a sentence


def outline(text: str) -> dict:
    """What an excerpt needs of a turn, worked out once (Message.outline, when the message is embedded) instead of
    in every process that shows it: its size in word pieces and, when longer than TURN_TOKENS, its sentences as
    [start, end, word pieces, lemmas joined by spaces], `text[start:end]` with its white space collapsed being the
    sentence. LongMemEval's long replies made these most of a context's time in a process that had not seen them
    yet (bench/context_latency.py over HTTP)."""
    tokens = count_tokens(text)
    if tokens <= TURN_TOKENS:
        return {"tokens": tokens}
    sentences, at = [], 0
    for sentence, lemmas, size in _sentences(text):
        found = re.compile(r"\s+".join(map(re.escape, sentence.split(" ")))).search(text, at)
        if found is None or _collapsed(found.group()) != sentence:  # not found as it was split: no sentences kept
            return {"tokens": tokens}
        sentences.append([found.start(), found.end(), size, " ".join(sorted(lemmas))])
        at = found.end()
    return {"tokens": tokens, "sentences": sentences}


def _outlined(text: str, stored: dict | None) -> tuple[int, Callable]:
    """(word pieces, a function giving the sentences as (sentence, lemmas, word pieces)) of a turn, from its stored
    outline when it has one."""
    if stored is None:
        return count_tokens(text), lambda: _sentences(text)
    if "sentences" not in stored:  # a short turn's, or one a smaller limit asks to clip
        return stored["tokens"], lambda: _sentences(text)
    return stored["tokens"], lambda: _outline_sentences(text, stored["sentences"])


_read: dict[str, tuple] = {}  # long turns' sentences as read from their outlines, by text (a process's share)


def _outline_sentences(text: str, sentences: list) -> tuple[tuple[str, frozenset, int], ...]:
    """A long turn's sentences from its outline, kept for LONG_TURNS_CACHED turns: the same turns come back in
    excerpt after excerpt."""
    found = _read.get(text)
    if found is None:
        if len(_read) >= LONG_TURNS_CACHED:
            _read.clear()
        found = _read[text] = tuple((_collapsed(text[start:end]), frozenset(lemmas.split()), size)
                                    for start, end, size, lemmas in sentences)
    return found


def clip(text: str, words: set[str], limit: int | None = None, stored: dict | None = None) -> tuple[str, int]:
    """(`text`, or when it is longer than `limit` word pieces (default TURN_TOKENS) its sentences that share most
    of `words` (then the earliest), in their order, within `limit`, "…" marking what is left out; its size in word
    pieces). `stored`: the turn's outline. The size is the sum of its parts': word pieces never span white space
    (the tokenizer splits there first)."""
    limit = limit or TURN_TOKENS
    tokens, sentences_of = _outlined(text, stored)
    if tokens <= limit:
        return text, tokens
    parsed = sentences_of()
    ranked = sorted(range(len(parsed)), key=lambda i: (-len(words & parsed[i][1]), i))
    keep, used = [], 0
    for i in ranked:
        cost = parsed[i][2] + 1
        if used + cost <= limit:
            keep.append(i)
            used += cost
    if not keep:  # one long sentence: its start
        start = " ".join(text.split()[:limit // 2]) + " …"
        return start, count_tokens(start)
    parts, previous, size = [], -1, 0
    for i in sorted(keep):
        if i != previous + 1:
            parts.append("…")
        parts.append(parsed[i][0])
        size += parsed[i][2]
        previous = i
    if previous != len(parsed) - 1:
        parts.append("…")
    return " ".join(parts), size + (len(parts) - len(keep)) * count_tokens("…")


def clipped(text: str, words: set[str], limit: int | None = None) -> str:
    """`clip`'s text."""
    return clip(text, words, limit)[0]


def _turn_line(message: Message, words: set[str], note: str) -> tuple[str, int]:
    """The turn as the excerpt shows it, with `note` (`outdated_note`), and its size in word pieces (the sum of its
    parts', see `clip`)."""
    speaker = f"{_speaker(message)}:"
    shown, tokens = clip(message.content, words, stored=message.outline)
    return f"{speaker} {shown}{note}", count_tokens(speaker) + tokens + (count_tokens(note) if note else 0)


def _excerpt_header(message: Message) -> str:
    title = f', "{message.conversation.title}"' if message.conversation.title else ""
    return f"[{said_on(message.sent_at)}{title}]"


def _runs(sequences, days: dict, conversation_id) -> list[list[int]]:
    """One conversation's shown turns as excerpts: consecutive turns said on the same day (a day's change starts
    a new excerpt, under its own header). `days`: (conversation, sequence) -> the day its turn was said."""
    runs: list[list[int]] = []
    for s in sorted(sequences):
        if runs and s == runs[-1][-1] + 1 and days[(conversation_id, s)] == days[(conversation_id, runs[-1][-1])]:
            runs[-1].append(s)
        else:
            runs.append([s])
    return runs


def outdated_note(statements) -> str:
    """What an excerpt says beside a turn whose statements (superseded_by, content, frames, valid_to; oldest first)
    include some since superseded (an agent reads the newer fact among the memories): when everything it said was,
    since when ("[no longer true since 3 May 2024]": the day the first stopped being true; OUTDATED when one has no
    end recorded), else which of its statements ("[no longer true: The user drives a Corolla]"); "" when none was."""
    current, past, ends = False, [], []
    for superseded_by, content, frames, *rest in statements:
        # "I left Acme" is kept as the past of the Acme chain, yet what it says stays true
        if superseded_by is None or any(f.get("ended") for f in frames or [] if isinstance(f, dict)):
            current = True
        else:
            past.append(content.rstrip(". "))
            ends.append(_moment(rest[0] if rest else None))
    if not past:
        return ""
    if current:
        return f" [no longer true: {'; '.join(past[:OUTDATED_SHOWN])}]"
    if None in ends:
        return OUTDATED
    return OUTDATED_SINCE.format(day=said_on(min(ends)))


def _moment(value) -> datetime | None:
    """A timestamp as the statement's JSON gives it (ISO 8601), or None."""
    if isinstance(value, datetime):
        return value
    try:
        return datetime.fromisoformat(value) if isinstance(value, str) else None
    except ValueError:
        return None


def turns_around(owner_id: int, hits: list[ScoredPassage]) -> dict[tuple, tuple[Message, str]]:
    """(conversation, sequence) -> (turn, `outdated_note`) of each hit and its NEIGHBOURS turns either side, in
    one statement (TURNS). The turns are messages with only what an excerpt shows loaded."""
    wanted = sorted({(hit.container_id, s) for hit in hits
                     for s in range(hit.position - NEIGHBOURS, hit.position + NEIGHBOURS + 1) if s > 0})
    if not wanted:
        return {}
    with connection.cursor() as cursor:
        cursor.execute(TURNS, [owner_id, owner_id, [c for c, _ in wanted], [s for _, s in wanted]])
        rows = cursor.fetchall()
    conversations: dict[uuid.UUID, Conversation] = {}
    found = {}
    for row in rows:
        values, title, statements = row[:len(TURN_FIELDS)], row[-2], row[-1]
        message = Message.from_db(connection.alias, TURN_FIELDS, values)
        if isinstance(message.outline, str):  # raw rows skip the field's decoding
            message.outline = json.loads(message.outline)
        conversation = conversations.get(message.conversation_id)
        if conversation is None:
            conversation = Conversation.from_db(connection.alias, ("id", "title"), (message.conversation_id, title))
            conversations[conversation.pk] = conversation
        message.conversation = conversation
        if isinstance(statements, str):
            statements = json.loads(statements)
        found[(message.conversation_id, message.sequence)] = (message, outdated_note(statements))
    return found


def excerpts(owner_id: int, hits: list[ScoredPassage], room: int, query: str) -> tuple[list[ContextItem], int]:
    """Excerpts of what was said, within `room` tokens: each hit (best first) with NEIGHBOURS turns either side
    (just the hit when its window does not fit); a turn is shown once (a long one by its sentences nearest the
    query: `clipped`), and turns that end up next to each other in a conversation and were said on the same day
    read as one excerpt under one header (its score: its best hit's)."""
    if not hits or room <= 0:
        return [], 0
    fetched = turns_around(owner_id, hits)
    turns = {key: message for key, (message, _) in fetched.items()}
    outdated = {message.pk for message, note in fetched.values() if note}
    words = _lemmas(query)
    counted = {key: _turn_line(m, words, note) for key, (m, note) in fetched.items()}
    lines = {key: line for key, (line, _) in counted.items()}
    cost = {key: tokens + 1 for key, (_, tokens) in counted.items()}  # + its line break
    days = {key: said_on(m.sent_at) for key, m in turns.items()}  # worked out once: runs are redrawn for every hit
    header_cost: dict[tuple, int] = {}

    def header_tokens(key) -> int:  # a header opening a run at `key`, with its line break
        if key not in header_cost:
            header_cost[key] = count_tokens(_excerpt_header(turns[key])) + 1
        return header_cost[key]

    def headers(conversation_id, sequences) -> int:
        return sum(header_tokens((conversation_id, run[0])) for run in _runs(sequences, days, conversation_id))

    shown: dict[tuple, float] = {}  # (conversation, sequence) -> score of the hit that brought it
    used = 0
    for hit in hits:
        conversation_id, seq = hit.container_id, hit.position
        for window in (range(seq - NEIGHBOURS, seq + NEIGHBOURS + 1), range(seq, seq + 1)):
            new = [(conversation_id, s) for s in window if (conversation_id, s) in turns
                   and (conversation_id, s) not in shown]
            if not new:
                break
            before = [s for c, s in shown if c == conversation_id]
            price = (sum(cost[key] for key in new) + headers(conversation_id, before + [s for _, s in new])
                     - headers(conversation_id, before))
            if used + price <= room:
                used += price
                for key in new:
                    shown[key] = max(shown.get(key, 0.0), hit.score)
                break
    hit_ids = {hit.id for hit in hits}
    items = []
    for conversation_id in {key[0] for key in shown}:
        for run in _runs([s for c, s in shown if c == conversation_id], days, conversation_id):
            messages = [turns[(conversation_id, s)] for s in run]
            text = "\n".join([_excerpt_header(messages[0]), *(lines[(conversation_id, s)] for s in run)])
            # its header's and its lines' counts (see `_turn_line`), + 1 as every item: the text's own line break
            tokens = header_tokens((conversation_id, run[0])) + sum(cost[(conversation_id, s)] - 1 for s in run)
            items.append(ContextItem(
                "excerpt", text, max(shown[(conversation_id, s)] for s in run), tokens,
                conversation=messages[0].conversation, messages=messages,
                hits=[m.pk for m in messages if m.pk in hit_ids], outdated=[m.pk for m in messages if m.pk in outdated],
            ))
    items.sort(key=lambda i: -i.score)
    return items, sum(i.tokens for i in items)
