"""A replacement said outright, for extraction.attributes: "swapped the Prius for an electric Polestar 2", "upgraded
from the corsa to a golf gti", "ramen has overtaken sushi as my favourite"."""

from __future__ import annotations

import re

import lemminflect

_SWAPS = {"swap", "trade", "replace", "exchange", "switch", "upgrade", "change", "downgrade"}
_OVERTAKES = {"overtake", "replace", "displace", "dethrone", "surpass", "supplant", "oust", "knock"}  # subject: new


def replaced(doc) -> tuple[str, str] | None:
    """(old, new) of a replacement said outright: "swapped the Prius for an electric Polestar 2" -> ("prius",
    "electric polestar 2"), "upgraded from the corsa to a golf gti", "replaced my iPhone with a Pixel", "ramen
    has overtaken sushi as my favourite"."""
    for verb in (t for t in doc if t.lemma_.lower() in _SWAPS | _OVERTAKES and t.pos_ == "VERB"):
        old = next((c for c in verb.children if c.dep_ == "dobj"), None) or _object_of(verb, ("from",))
        new = _object_of(verb, ("for", "with", "to", "into"))
        if new is None and verb.lemma_.lower() in _OVERTAKES:
            # a person (or a name tagged so) takes another's place only as something: "Sarah replaced Tom as my boss"
            as_what = any(c.dep_ == "prep" and c.lower_ in ("as", "off") for c in verb.children)
            new = next((c for c in verb.children if c.dep_ == "nsubj" and c.pos_ in ("NOUN", "PROPN")
                        and (c.ent_type_ != "PERSON" or as_what) and c.lower_ != "user"), None)
        if old is not None and old.lower_ in ("it", "them", "that") and old.i > 0:
            # "the polo got written off, the user replaced it with ...": what "it" stands for, said before
            old = next((t for t in reversed(doc[:verb.i]) if t.dep_ in ("nsubj", "nsubjpass")
                        and t.pos_ in ("NOUN", "PROPN") and t.lower_ != "user"), None)
        if old is not None and new is not None:
            return _words(old), _words(new)
    if rise := _RISE.search(doc.text) or _OVERTAKEN.search(doc.text):  # "to team lead" is read "to lead"
        return rise["old"].lower(), rise["new"].lower()
    return None


# the overtaking verbs' past participles, for a statement whose parse hides the verb
_PARTICIPLES = "|".join(lemminflect.getInflection(verb, "VBN")[0] for verb in sorted(_OVERTAKES))
# "these days pav bhaji has overtaken masala dosa as my favourite", wherever the parser hangs "overtaken"
_OVERTAKEN = re.compile(r"(?i)(?:^|[,;:]\s*)(?:(?:these days|nowadays|lately|now),?\s+)?(?P<new>[\w' -]+?) "
                        rf"(?:has|have) (?:\w+ )?(?:{_PARTICIPLES}) "
                        r"(?P<old>[\w' -]+?) as (?:my|the user's|their) ")


# a move up from one role to another: "bumped from junior analyst to team lead"
_RISE = re.compile(r"(?i)\b(?:promoted|bumped|moved|stepped|went|graduated)(?: up)? from (?:an? |the )?"
                   r"(?P<old>[\w -]+?) to (?:an? |the )?(?P<new>[\w -]+?)(?= (?:on|in|at|last|this|today|yesterday)\b"
                   r"|\s*[,.;!?]|$)")


def _object_of(verb, prepositions: tuple[str, ...]):
    return next((g for c in verb.children if c.dep_ == "prep" and c.lower_ in prepositions
                 for g in c.children if g.dep_ == "pobj"), None)


def _words(token) -> str:
    return " ".join(t.lower_ for t in token.subtree if t.dep_ not in ("det", "poss", "punct", "case"))
