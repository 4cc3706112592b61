"""Names in a statement: naming idioms said plainly before it is parsed for its frames ("is a woman named Clara"
-> "is Clara", "my husband's name is Victor" -> "my husband is Victor", "seeing a guy called Ben" -> "seeing Ben"),
and the names its parse holds, the tagger's misses included (a name in lower case, a place folded into a date)."""

from __future__ import annotations

import re

from core.calendar_words import HOLIDAYS, MONTH_ABBREVIATIONS, MONTHS, WEEKDAYS
from extraction.slots import RELATIONS as _RELATIONS

# a person said without their name ("a guy called Ben", "someone new, Ben")
PERSON_WORDS = ("guy", "man", "woman", "lady", "girl", "boy", "person", "bloke", "chap", "fellow", "lad", "lass")
_PERSON = rf"(?:{'|'.join(PERSON_WORDS)})"
# "my boss is (a guy) called Henrik" says "my boss is Henrik" (not that the speaker is called Henrik)
_CALLED = re.compile(rf"\b(is|was|'s) (?:(?:a|an) {_PERSON} )?(?:called|named) (?=[A-Z])")
# "seeing a guy called Ben" says "seeing Ben"
_A_NAMED = re.compile(rf"\b(?:a|an|this|some) (?:\w+ )?{_PERSON} (?:called|named) (?=[A-Z])")
# "seeing someone new, Ben" says "seeing Ben"
_SOMEONE_NAMED = re.compile(r"\b(?:someone|somebody)(?: new)?, (?=[A-Z][a-z]+\b)")
_NAME_IS = re.compile(r"(?i)\b(?P<who>\w+)'s (?:first |full )?name (?P<verb>is|was) (?=[A-Z])")

# the possessives that make a thing the speaker's ("the user's" as extraction writes "my")
SPEAKERS_OWN = ("my", "our", "user")


def said_plainly(content: str) -> str:
    """`content` with its naming idioms said plainly."""
    return _NAME_IS.sub(lambda m: f"{m['who']} {m['verb']} " if m["who"].lower() != "user" else m[0],
                        _SOMEONE_NAMED.sub("", _A_NAMED.sub("", _CALLED.sub(r"\1 ", content))))


_TIME = ("DATE", "TIME")
_NOT_NAMES = {"CARDINAL", "QUANTITY", *_TIME, "ORDINAL", "PERCENT", "MONEY", "LANGUAGE"}
NAME_ROLES = {"attr", "acomp", "pobj", "dobj", "appos", "oprd"}  # a capitalised word there is a name the tagger missed
# person and pet words: a statement whose subject is "my brother", "the user's wife" is about them
RELATIONS = _RELATIONS | {"parent", "parents", "kids", "children"}
_PLACE_BEFORE = ("in", "to", "from", "at", "near")
_CALENDAR = frozenset(MONTHS + MONTH_ABBREVIATIONS + WEEKDAYS)


def time_word(token) -> bool:
    """A word of a date or a time, unless it is a place the tagger folded into the time after it ("based in
    Manchester these days": one DATE) or called a date on its own ("I'm at Lidl now"). A feast stays a time ("at
    Christmas")."""
    if token.ent_type_ not in _TIME:
        return False
    entity = next((e for e in token.doc.ents if e.start <= token.i < e.end), None)
    return not (entity is not None and token.i == entity.start and token.pos_ == "PROPN"
                and token.text[:1].isupper() and token.lower_ not in _CALENDAR and token.dep_ == "pobj"
                and token.head.lower_ in _PLACE_BEFORE and not any(t.pos_ == "PROPN" for t in entity[1:])
                and (len(entity) > 1 or token.lower_ not in HOLIDAYS))


def names(doc) -> list:
    """Proper names as spans: the model's entities of any kind (its small model often calls a city an
    organisation), and runs of proper nouns it missed."""
    spans = [ent for ent in doc.ents if ent.label_ not in _NOT_NAMES]
    taken = {t.i for span in spans for t in span}
    run: list = []
    for token in [*doc, None]:
        if (token is not None and token.i not in taken and (token.ent_type_ not in _NOT_NAMES or (
                token.ent_type_ in _TIME and not time_word(token)))
                and (_lower_name(token) or token.text[:1].isupper() and (
                    token.pos_ == "PROPN" or (token.i > 0 and token.dep_ in NAME_ROLES)))):
            run.append(token)
            continue
        if run and not (len(run) == 1 and run[0].i == 0 and run[0].lower_ in ("the", "i")):
            spans.append(doc[run[0].i:run[-1].i + 1])
        run = []
    merged: list = []
    for span in sorted(spans, key=lambda span: span.start):
        # one name joined by a hyphen, however the model cut it: "Croix-Rousse", "Stratford-upon-Avon"
        if merged and span.start == merged[-1].end + 1 and doc[merged[-1].end].text == "-" and not (
                doc[merged[-1].end - 1].whitespace_ or doc[merged[-1].end].whitespace_):
            merged[-1] = doc[merged[-1].start:span.end]
        else:
            merged.append(span)
    return merged


_SETTLING = frozenset({"live", "move", "relocate", "settle", "base", "rent"})
# common nouns said of a place without an article ("moved to town", "living in halls")
_BARE_PLACES = frozenset("town city country home abroad school college uni university work halls campus hospital "
                         "care sin hope fear peace".split())


def _lower_name(token) -> bool:
    """A name chat wrote in lower case ("moved to york", "chloe dumped me"): a proper noun where a place or a
    person goes; the tagger calls some dishes proper nouns too ("hates cilantro"), never after "at"/"to"."""
    if token.lower_ in _CALENDAR:
        return False  # "moved in may"
    if token.text.isalpha() and token.dep_ == "conj" and token.head.lower_ in ("user", "i", "me") and not any(
            c.dep_ in ("det", "poss") for c in token.children) and token.lower_ not in RELATIONS:
        return True  # "me and luca are over": a bare word said with the speaker is somebody
    if token.pos_ == "NOUN" and token.text.isalpha() and token.dep_ == "pobj" and token.head.lower_ in (
            "in", "to") and token.head.head.lemma_ in _SETTLING and not any(
            c.dep_ in ("det", "poss", "amod", "compound", "nummod") for c in token.children) and (
            token.lower_ not in _BARE_PLACES):
        return True  # "living in glasgow": a town the tagger took for a common noun
    return token.pos_ == "PROPN" and token.text.isalpha() and (
        token.ent_type_ == "PERSON" and token.dep_ == "nsubj"
        or token.dep_ == "pobj" and token.head.lower_ in ("at", "to", "in", "from", "near", "with", "for"))


def beside_names(doc) -> set[str]:
    """Names said as what a place is beside ("lives in Dunedin just off george street"): no place of the verb's."""
    return {span.text.strip().lower() for span in names(doc) if span.root.head.lower_ in ("off", "near", "behind")}


def nested_names(doc) -> set[str]:
    """Names said of a thing rather than of the verb ("moved to Lyon for work at Acme": Acme is where the work
    is, Lyon where the speaker moved)."""
    return {span.text.strip().lower() for span in names(doc)
            if span.root.dep_ == "pobj" and span.root.head.head.pos_ in ("NOUN", "PROPN")}


def speakers(token) -> bool:
    """`token` is said with the speaker's possessive: "my boss", "the user's car"."""
    return any(c.dep_ == "poss" and c.lower_ in SPEAKERS_OWN for c in token.children)
