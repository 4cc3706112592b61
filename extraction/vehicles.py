"""A car or a phone the holder has, as a statement says it: a make said as a thing someone has ("a secondhand
Skoda", "my Galaxy A52", "The new Subaru Outback"), a vehicle of their work or one hired for a while, and a drive
that is a trip rather than the car they have."""

from __future__ import annotations

import re

from extraction import nlp
from extraction.naming import speakers
from extraction.slots import RELATIONS

_WORK_VEHICLE = re.compile(r"(?i)\b(?:work|company|office|business|fleet|lease) (?:van|car|truck|vehicle|pickup)\b"
                           # "my work phone is a Samsung Galaxy" (not its number: "my work phone is 0207 ...")
                           r"|\b(?:work|company|office|business) (?:phone|mobile|handset)(?:'s| is) (?:an?|the)\b")


def work_vehicle(doc) -> bool:
    """A vehicle or a phone of the holder's work ("my work van is a Ford Transit", "a company car", "my work phone
    is a Galaxy"): beside their own."""
    return bool(_WORK_VEHICLE.search(doc.text))


def made_by(doc, makes: frozenset[str]) -> bool:
    """A make of `makes` said as a thing someone has ("a secondhand Skoda", "my Fiat"): after an article or a
    possessive, not "at Toyota" (an employer), not the subject ("the Mini went to my niece"), not a gift ("got my
    mum a Samsung")."""
    speaker = ("me", "us", "user", "them") if "user" in doc.text.lower() else ("me", "us")
    if any(t.dep_ == "dative" and t.lower_ not in speaker or (t.dep_ == "dobj" and t.lower_ in RELATIONS)
           or t.lower_ in ("test", "tests", "tested") for t in doc):
        return False
    return any(t.lower_ in makes and _as_a_name(t) and (_owned(t) or _new(t) or t.dep_ not in (
        "nsubj", "nsubjpass") and any(
        doc[j].lower_ in ("a", "an", "the", "my", "our", "his", "her", "their") for j in range(max(0, t.i - 5), t.i))
        and _governing(t).lemma_.lower() in _HAVING) for t in doc if t.i > 0)


def _as_a_name(token) -> bool:
    """A make said as a name: capitalised, or in lower case a word no dictionary knows ("mazda") or one before a
    model number ("galaxy a52", "pixel 8")."""
    following = token.nbor(1).text if token.i + 1 < len(token.doc) else ""
    return token.text[:1].isupper() or not nlp.known_word(token.lower_) or any(c.isdigit() for c in following)


def _new(token) -> bool:
    """A thing said as the holder's new one, wherever it stands: "The new Subaru Outback is much easier on fuel"."""
    return token.i > 1 and token.nbor(-1).lower_ == "new" and token.nbor(-2).lower_ in ("the", "my", "our")


def _owned(token) -> bool:
    """A thing said with the holder's possessive wherever it stands: "my Galaxy A52 keeps running out of storage"."""
    while token.dep_ in ("compound", "nmod") and token.head.i != token.i:  # "Galaxy" of "my Galaxy A52"
        token = token.head
    return speakers(token)


# verbs of having a thing or of ending that, not of using one for a while ("rented a Fiat", "test drove a BMW")
_HAVING = {"be", "have", "own", "buy", "get", "pick", "lease", "drive", "purchase", "order", "switch", "upgrade",
           "swap", "trade", "replace", "finance", "use", "sell", "scrap", "crash", "total", "wreck", "lose",
           "break", "ditch"}


def _governing(token):
    """The verb a token hangs on, past a model's name the tagger took for a verb ("a Cupra Born")."""
    while (token.pos_ not in ("VERB", "AUX") or token.dep_ in ("pobj", "dobj", "compound", "appos", "attr")) and (
            token.head.i != token.i):
        token = token.head
    return token


def hired(doc) -> bool:
    """A vehicle rented or borrowed for a while ("rented a Corolla for the road trip", "a hire car"): not the
    holder's own."""
    return any((t.lemma_.lower() in ("rent", "hire", "borrow") or t.lower_ in ("rented", "hired", "borrowed"))
               and t.pos_ == "VERB" for t in doc) or any(
        t.lower_ in ("rental", "loaner", "courtesy", "hire") and t.dep_ in ("compound", "amod") for t in doc)


_HEADING = {"to", "toward", "towards", "into", "up", "down", "over", "back", "home", "around", "across", "out"}


def drives_somewhere(doc) -> bool:
    """A drive said with where to and no vehicle ("driving to my mom's place now", "driving up to the lake"): a
    trip, not the car the holder has ("I drive to work in my Volvo" names one)."""
    return any(t.lemma_.lower() == "drive" and t.pos_ == "VERB" and not any(c.dep_ == "dobj" for c in t.children)
               and any(c.lower_ in _HEADING and c.dep_ in ("prep", "advmod", "prt") for c in t.children)
               and not any(p.lower_ == "in" and any(o.dep_ == "pobj" and (o.pos_ == "PROPN" or any(
                   g.dep_ == "poss" for g in o.children)) for o in p.children) for p in t.subtree)
               for t in doc)
