"""Naming idioms said plainly before a statement is parsed for its frames: "is a woman named Clara" -> "is
Clara", "my husband's name is Victor" -> "my husband is Victor", "seeing a guy called Ben" -> "seeing Ben"."""

from __future__ import annotations

import re

from core.calendar_words import MONTH_ABBREVIATIONS, MONTHS, WEEKDAYS

_PERSON = r"(?:guy|man|woman|lady|girl|boy|person|bloke|chap|fellow)"
# "my boss is (a guy) called Henrik" says "my boss is Henrik" (not that the speaker is called Henrik)
_CALLED = re.compile(rf"\b(is|was|'s) (?:(?:a|an) {_PERSON} )?(?:called|named) (?=[A-Z])")
# "seeing a guy called Ben" says "seeing Ben"
_A_NAMED = re.compile(rf"\b(?:a|an|this|some) (?:\w+ )?{_PERSON} (?:called|named) (?=[A-Z])")
_NAME_IS = re.compile(r"(?i)\b(?P<who>\w+)'s (?:first |full )?name (?P<verb>is|was) (?=[A-Z])")


def said_plainly(content: str) -> str:
    """`content` with its naming idioms said plainly."""
    return _NAME_IS.sub(lambda m: f"{m['who']} {m['verb']} " if m["who"].lower() != "user" else m[0],
                        _A_NAMED.sub("", _CALLED.sub(r"\1 ", content)))


_TIME = ("DATE", "TIME")
_PLACE_BEFORE = ("in", "to", "from", "at", "near")
_CALENDAR = frozenset(MONTHS + MONTH_ABBREVIATIONS + WEEKDAYS)


def time_word(token) -> bool:
    """A word of a date or a time, unless it is a place the tagger folded into the time after it ("based in
    Manchester these days": one DATE). A name alone in its date stays one ("at Christmas")."""
    if token.ent_type_ not in _TIME:
        return False
    entity = next((e for e in token.doc.ents if e.start <= token.i < e.end), None)
    return not (entity is not None and len(entity) > 1 and token.i == entity.start and token.pos_ == "PROPN"
                and token.text[:1].isupper() and token.lower_ not in _CALENDAR and token.dep_ == "pobj"
                and token.head.lower_ in _PLACE_BEFORE and not any(t.pos_ == "PROPN" for t in entity[1:]))
