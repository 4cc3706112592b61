"""The local dialogue extractor: one message in, the speaker's salient statements out, each a memory in the third
person. No network; rules, with the packaged spaCy model where a parse helps (hundreds of messages a second).

Design (a filter and a rewrite, not a rule per kind of fact):
1. Only the user's own turns count. The message is split into sentences (extraction.sentences).
2. Greetings, interjections and vocatives are stripped from the front ("Hey Mel! Wow,", "Thanks, Maria!").
3. A sentence is kept when it is a statement by the speaker about themselves or their life: its subject is the
   speaker ("I", "we", "my daughter", "Last week I ..."), or it opens with an implied "I" ("Just got back from
   Peru", "Gonna continue my studies"), or it says what something did to them ("The group made me feel
   accepted"); or it is an explicit "remember that ..." / "note that ...".
4. It is dropped when it is a question, about the other person ("you", "your"), a thanks, a greeting or sign-off,
   a pronoun-led comment ("That's awesome!", "It was so fun"), an opinion about what was said ("I think so",
   "I agree") or has no content word ("I'm so happy!", "I love it!"). Missing a trivial memory beats storing chatter.
5. Discourse markers and chatter tails come off (extraction.cleanup); "here"/"there" become the place the
   conversation named and "we" the speaker with the companion it named (extraction.context, from `context`); a
   "he"/"she" clause takes the person just named and joined statements are cut apart (extraction.clauses).
6. The kept sentence is rewritten in the third person (extraction.english) with relative and partial dates made
   absolute against the send time and the date it became true as `valid_from` (extraction.timewords,
   extraction.months); extraction.slots adds the update slot, category and entities.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime

from extraction import asks, chat_text, clauses, nlp, spoken, talk
from extraction.candidates import Candidate, clean_tags, merge_entities
from extraction.cleanup import strip_chatter, strip_discourse
from extraction.context import Setting
from extraction.english import PLURAL, SINGULAR, has_verb, is_adverb, is_first_person, is_past_tense, third_person
from extraction.entities import entities_in
from extraction.sentences import split_sentences
from extraction.slots import DIETS, OCCUPATIONS, RELATIONS, SOMEONE_ELSES, category_of, contact, find_slots
from extraction.speaker import (
    LED,
    bare_subject,
    described,
    headed,
    implied_be,
    own_parts,
    role_named,
    speaker_in,
    splices,
    with_implied_subject,
)
from extraction.timewords import resolve_dated
from extraction.topics import topic_tags
from observability import hooks


def _strip_front(sentence: str) -> str:
    """Interjections, greetings and a vocative name off the front; a vocative off the end."""
    previous = None
    while previous != sentence:
        previous = sentence
        sentence = talk.MARKER.sub("", sentence, count=1).strip()
        match = talk.VOCATIVE.match(sentence)
        if match and match["w"].lower() not in talk.OPENERS and not match["w"].endswith("ly"):
            sentence = sentence[match.end():].strip()
    vocative = talk.TRAILING_VOCATIVE.search(sentence)
    if vocative and (talk.NAMED_PLACE.search(sentence[:vocative.start()])
                     or talk.NAMED_PERSON.search(sentence[:vocative.start()])):
        return sentence  # "I work for a private clinic, Bupa", "seeing someone new, Ben": named, not called
    return talk.TRAILING_VOCATIVE.sub(r"\1", sentence).strip()




def _content_words(sentence: str) -> int:
    words = re.findall(r"[A-Za-z][A-Za-z'\-]*|\d+", sentence)
    return sum(1 for w in words if w.isdigit() or (len(w) > 2 and w.lower() not in talk.STOP and not is_adverb(w)))


_TOLD = {"tell", "ask", "inform", "remind", "say"}  # "I was told ...": what someone said, not what happened to them


def _is_chatter(sentence: str, anchor: str) -> bool:
    """An opinion about what was said, a hortative "we" ("We can do it!", "Our impact will last"), a remark about
    "it"/"that" with nearly no content, or no content word at all."""
    own = {w.strip(".,!?;:\"()").lower() for w in sentence.split()}
    if own & PLURAL and not own & SINGULAR and own & talk.MODAL_WORDS:
        return True
    if talk.REFERENCE.search(sentence) and _content_words(sentence) < 2:
        return True
    if talk.VERDICT.search(sentence) and _content_words(talk.VERDICT.sub("", sentence)) < 2:
        return True
    if anchor != "implied" and (match := talk.OPINION.match(sentence)):
        rest = match["rest"]
        placed = match["be"] and talk.NAMED.search(rest)  # "I was in Chicago" says where, not what they think
        # "I was made head nurse", "I was promoted": what was done to them, not what they think
        done = match["be"] and any(t.dep_ == "auxpass" and t.head.lemma_ not in _TOLD for t in nlp.parse(sentence))
        if not placed and not done and (not any(is_first_person(w.strip(".,!?;:\"()")) for w in rest.split())
                           or _content_words(rest) == 0):
            return True
    words = sentence.split()
    if anchor == "implied" and not own & (SINGULAR | PLURAL) - {"i", "i'm", "i've"}:
        # "I mixed emotions" was "Mixed emotions."; "dating Noor now" names someone ("missing Tom" is a feeling)
        named = re.search(r"\s(?!I\b)[A-Z]", sentence) and not re.match(
            r"(?i)I'm (?:\w+ )?(?:missing|loving|enjoying|hating|craving|adoring|wishing)\b", sentence)
        diet = re.search(rf"(?i)\b(?:{DIETS})\b", sentence)  # "doing keto rn": a diet is content enough
        return (len(words) < 5 and not named and not diet) or (_content_words(sentence) < 2 and not diet)
    if not has_verb(sentence):
        return True  # "My full support.", "A reminder to follow my passions."
    return _content_words(sentence) < 1


def _finish(text: str) -> str:
    text = re.sub(r"\s+", " ", text).strip(" ,;:-")
    if text.count("(") > text.count(")"):  # an aside whose end went with the chatter: "(rents were insane lol)"
        text = text[:text.rfind("(")]
    elif text.count(")") > text.count("("):  # the end of an aside whose start was cut off: "... tragic.)"
        text = text.replace(")", "")
    text = re.sub(r"[.!?\u2026]*$", "", text).rstrip(" ,;:-") + "."
    text = re.sub(r"!+", "!", text)
    return text[:1].upper() + text[1:]


def _subject_of(sentence: str) -> str:
    """A statement about a named person in the speaker's life is about them: "My daughter Lily turned seven"."""
    rels = "|".join(sorted(RELATIONS, key=len, reverse=True))
    match = re.match(rf"(?i:my|our) (?:\w+ )?(?i:{rels}),? (?P<n>[A-Z][a-z]+)\b(?! and (?:I|me)\b)", sentence)
    return match["n"] if match and match["n"] not in ("I",) else "user"  # "my girlfriend Lea and I": both


# an aside between dashes before the sentence goes on: "traded in the Odyssey - 180,000 miles - and drove home a Kia"
_ASIDE = re.compile(r"\s+[-\u2013\u2014]+\s+[^-\u2013\u2014]{1,100}?\s+[-\u2013\u2014]+\s+(?=(?:and|but|then|so)\s)")
_CLAUSE_BREAK = re.compile(r"\s+[-\u2013\u2014]+\s+|(?<=\w)[-\u2013\u2014]{1,2}\s+|(?<=\w)\s*;\s+")
# a remark to the assistant before the speaker's statement: "Quick note since you asked again: I'm on an iPhone now"
_TO_YOU_FIRST = re.compile(r"(?P<remark>[^:]{3,120}):\s+(?=(?:I|I'm|I've|my|My|we|We|we're|our|Our)\s)")


def _clauses(sentence: str, person: tuple[str, str] | None) -> list[str]:
    """A sentence cut at dashes and semicolons into the statements it joins: "I finished my project - want to see
    it?" is a statement and a question. A piece led by "he"/"she" is about the person just named (`person`, or
    one named in the piece before): "...; she turns 7" -> "my daughter Mia turns 7". Any other piece without a
    subject of its own ("- come see!", "- it was great") is dropped: it is nearly always a remark."""
    sentence = _ASIDE.sub(" ", sentence)
    if (remark := _TO_YOU_FIRST.match(sentence)) and talk.YOU.search(remark["remark"]):
        sentence = sentence[remark.end():]
    pieces = [part.strip() for piece in _CLAUSE_BREAK.split(sentence) for part in splices(piece) if part.strip()]
    kept: list[str] = []
    for index, piece in enumerate(pieces):
        front = _strip_front(piece)
        if not talk.VERDICT.search(front):
            attached = clauses.attach_pronoun(front, person)
            piece = attached if attached != front else piece
        person = clauses.antecedent(piece) or person
        if (not index or speaker_in(_strip_front(piece)) is not None or talk.EXPLICIT.match(_strip_front(piece))
                or contact(_strip_front(piece))):  # "...; everything should go to lena@proton.me now"
            kept.append(piece)
    return kept


def _sentence_candidates(sentence: str, name: str, when: datetime | None, strict: bool, setting: Setting,
                         said: str, explicit: bool = False) -> list[Candidate]:
    sentence = talk.unsurprised(_strip_front(strip_discourse(sentence)))
    if not sentence:
        return []
    if strict and not {w.strip(".,!?;:\"()").lower() for w in sentence.split()} & SINGULAR:
        return []
    if match := talk.EXPLICIT.match(sentence):
        sentence, explicit = _strip_front(match["rest"]), True
    if sentence.endswith("?") or talk.QUESTION.match(sentence):
        # a statement with a question after it: "we've been in Haarlem since spring ..., any tips?"
        head, _, tail = sentence.rpartition(", ")
        if head and not talk.QUESTION.match(sentence) and (speaker_in(head) is not None or bare_subject(head)) and len(
                tail.split()) <= 8:
            return _sentence_candidates(head, name, when, strict, setting, said, explicit)
        return []
    if name and re.fullmatch(rf"(?i)(?:i'm|i am|my name is|it's|this is) {re.escape(name)}\W*", sentence):
        return []  # the speaker saying the name they are known by
    for pattern in talk.YOU_PHRASES:
        sentence = pattern.sub("", sentence).strip()
    sentence = setting.resolve_places(strip_chatter(sentence), said)
    sentence = headed(sentence)
    if (label := talk.NEW_LABEL.match(sentence) or talk.NEW_CONTACT.match(sentence)) and not SOMEONE_ELSES.search(
            sentence):
        sentence = f"My {label['new'].lower()} {label['what']} is {label['value'].rstrip('.!')}{label['when'] or ''}"
    elif swap := talk.SWAP.match(sentence):
        if nlp.places(swap["old"]):  # "bye London, hello Berlin"
            sentence = f"I moved from {swap['old']} to {swap['new']}"
        else:
            old = swap["old"] if re.match(r"(?i)(?:my|the|our|a|an)\b", swap["old"]) else f"my {swap['old']}"
            sentence = f"I swapped {old} for {swap['new']}"
    elif home := talk.home_said(sentence):
        sentence = home
    if called := talk.CALLED_ME.match(sentence):
        sentence = f"I go by {called['name']}{called['rest']}"
    done = talk.DONE_TO_ME.match(sentence)  # "They bumped me up to senior accountant": what was done to them
    if done and (done["verb"].lower() not in ("made", "named") or talk.ROLE_NOUN.match(done["rest"]) or {
            w.strip(".,!?;:").lower() for w in done["rest"].split()} & (OCCUPATIONS | talk.TITLE_WORDS)):
        # "they made me supervisor": "I was made" (a title after "got made" reads as no title at all)
        sentence = f"I {'was' if done['verb'].lower() in ('made', 'named') else 'got'} {done['verb']}{done['rest']}"
    pieces = clauses.split(sentence, lambda piece: bool(find_slots(piece)), clauses.say_apart)
    if len(pieces) > 1:
        return [candidate for piece in pieces
                for candidate in _sentence_candidates(piece, name, when, strict, setting, said, explicit)]
    slots = find_slots(sentence, explicit=explicit)
    if not slots and not explicit and asks.imperative(sentence) and not is_past_tense(sentence.split()[0]):
        # "Use that as my default location for weather": an order, whoever's things it names ("quit zalando, now
        # at Delivery Hero" may be a past tense)
        return []
    if not any(slot.content for slot in slots):
        own_day = talk.OWN_DAY.match(sentence)
        if not explicit and not own_day and (
                talk.CHATTER.match(sentence) or talk.YOU.search(sentence) or talk.PRONOUN_LED.match(sentence)
                or talk.CHATTER_ANYWHERE.search(sentence)):
            return [candidate for part in own_parts(sentence)
                    for candidate in _sentence_candidates(part, name, when, strict, setting, f"{said} {sentence}")]
        anchor = speaker_in(sentence) or ("object" if own_day else None)
        if anchor is None and (owned := bare_subject(sentence)):
            sentence, anchor = owned, "subject"
        elif anchor is None and implied_be(sentence):  # "45 today": turned 45 today
            verb = "I turned" if re.match(r"(?i)[\w-]+ today\b", sentence) else "I'm"
            sentence, anchor = f"{verb} {sentence[0].lower()}{sentence[1:]}", "subject"
        if anchor is None and not explicit or strict and anchor == "implied":
            return []
        if anchor == "implied":
            sentence = with_implied_subject(sentence)
        # "I am allergic to X" is no opinion
        if not explicit and not slots and not own_day and _is_chatter(sentence, anchor or ""):
            return [candidate for part in own_parts(sentence)
                    for candidate in _sentence_candidates(part, name, when, strict, setting, f"{said} {sentence}")]
        if explicit and (_content_words(sentence) == 0 or talk.YOU.search(sentence)):
            return []
    sentence = talk.TAIL.sub("", sentence).strip()
    dated, valid_from = resolve_dated(sentence, when)
    companion = setting.companion(f"{said} {sentence}") if talk.WE.search(sentence) else None
    rewritten = _finish(third_person(dated, name, companion=companion))
    category, importance = category_of(sentence)
    tags = [category] if category != "fact" else []
    entities = entities_in(sentence)
    named = {value for slot in slots for values in slot.entities.values() for value in values}
    entities = {kind: [v for v in values if v not in named] for kind, values in entities.items()}
    subject = _subject_of(sentence)
    if not slots:
        return [Candidate(content=rewritten, category=category, subject=subject, attribute="",
                          tags=clean_tags([*tags, *topic_tags(sentence)]), entities=merge_entities(entities),
                          importance=max(importance, 0.8) if explicit else importance, explicit=explicit,
                          valid_from=valid_from)]
    return [Candidate(
        content=_finish(slot.content.format(name=name)) if slot.content else rewritten,
        category=slot.category, subject=slot.subject if slot.subject != "user" else subject,
        attribute=slot.attribute, tags=clean_tags([*slot.tags, *topic_tags(sentence)]),
        entities=merge_entities(entities, slot.entities),
        importance=max(slot.importance, 0.8) if explicit else slot.importance, explicit=explicit,
        valid_from=valid_from,
    ) for slot in slots]


@hooks.extraction("local")
def extract_local(text: str, *, role: str = "user", speaker: str | None = None, when: datetime | None = None,
                  strict: bool = False, context: Sequence[str] = ()) -> list[Candidate]:
    """The memories in one message: the salient statements the user made about themselves, in the third person
    with `speaker` (else "The user") as subject, relative dates resolved against `when` (the send time). Other
    roles, questions and small talk give none. `strict` (for document text): only sentences in which the writer
    says "I", "me" or "my" - in a document "we" is an organisation, and a sentence opening with a participle
    ("Founded in 1999, ...") has no implied "I". `context`: earlier turns of the same conversation, oldest first
    ("Speaker: text" or plain text), read for the place "here"/"there" means and who "we" are."""
    if (role or "").lower() != "user" or not text or not text.strip():
        return []
    name = (speaker or "").strip() or "The user"
    setting = Setting(context, speaker)
    found: list[Candidate] = []
    person = None  # the last person of the speaker's this message named, for a sentence led by "he"/"she"
    said = ""  # the message so far: where "here" is
    started = None  # the last start date the message gave
    parts = [(part, asked) for sentence in split_sentences(chat_text.normalise(spoken.plain(text)), dialogue=True)
             for part, asked in asks.pieces(spoken.runs(sentence))]
    for part, asked in parts:
        for clause in _clauses(strip_discourse(part), person):
            # "As a junior copywriter I mostly write ...": who they are, and what they do, apart
            led = LED.match(_strip_front(clause))
            aside = described(clause) if not strict else ""
            rest = _strip_front(clause)[led.end():] if led and aside else clause
            # a request cut from a statement ("..., give me a 20 min routine") says nothing of the speaker's
            made = [] if asked else _sentence_candidates(rest, name, when, strict, setting, said)
            # said in passing: "as a nurse, what should I pack?", "As a junior copywriter I mostly write ...", "can u
            # format my signature: ... mobile 07700 900 412"
            extra = aside if aside and (led or not made) else "" if made or strict else (
                _given_contact(clause) or role_named(clause))
            if extra:
                made += _sentence_candidates(extra, name, when, strict, setting, said)
            if started and talk.NOW.search(clause):  # "Last week we moved. We live in Grenoble now.": since then
                made = [replace(c, valid_from=c.valid_from or started) for c in made]
            started = next((c.valid_from for c in made if c.valid_from), started)
            found += made
            person = clauses.antecedent(clause) or person
            said = f"{said} {clause}"  # "our flat in Utrecht, we're living there": there is Utrecht
    return _dedupe(found)


def _given_contact(clause: str) -> str:
    """The speaker's own contact detail given inside a sentence that is no statement, said as one, else ""."""
    slot = contact(clause.strip().rstrip(".!?"))
    return "my " + slot.content.split("'s ", 1)[1] if slot else ""


def _dedupe(candidates: list[Candidate]) -> list[Candidate]:
    """One candidate per content, and per subject and attribute the last one said."""
    kept: dict[tuple[str, str], Candidate] = {}
    for candidate in (c for c in candidates if re.search(r"[^\W\d_]{2}", c.content)):  # never a bare "."
        key = (candidate.subject.lower(), candidate.attribute or candidate.content.lower())
        kept.pop(key, None)
        kept[key] = candidate
    return list(kept.values())
