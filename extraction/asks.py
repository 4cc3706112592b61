"""What a sentence asks of the assistant, apart from what it says about the speaker.

People type a request and a fact as one run-on sentence: "need easy weeknight dinners, im vegetarian but the kids
eat chicken", "whats the easiest way to fit 3 car seats, i drive a 2014 mazda 5", "im 34 and trying to squeeze
workouts into nap time, give me a 20 min routine". Read whole, the fact is lost in the request (no attribute reads
through it) or the request is kept as a memory. `apart` cuts such a sentence where one side asks (a question, an
imperative to the assistant, a bare "need ..."), so that each side is read on its own: the statement as a statement,
the request dropped downstream like any question.
"""

from __future__ import annotations

import re

from extraction import nlp, talk
from extraction.english import has_verb
from extraction.slots import EMAIL, PHONE

# where a sentence may join a request and a statement: a comma, "so"/"but"/"and", laughter typed between them
# a colon before the speaker's own statement: "update my CV: I'm at Kalvera Health now"
_JOINS = re.compile(r"\s*,\s+|\s*:\s+(?=(?:I|I'm|I've|we|we're|we've|my|our)\s)"
                    r"|\s+(?=(?:so|but|and|then)\s+(?:can|could|would|will|pls|please|plz|how|what|"
                    r"help|give|tell|make|find)\b)|\s+(?:lol|haha+|lmao|tbh)\s+(?=\w)", re.IGNORECASE)
_LEAD = re.compile(r"(?i)^(?:(?:so|and|but|then|ok|okay|also|btw|anyway|now|pls|please|plz|kindly|just)\s+)+")
# a request to the assistant by its first words: "can you ...", "help me ...", "give me ...", "need a ...", "any tips"
_ASK = re.compile(
    r"(?i)^(?:(?:can|could|would|will)\s+(?:you|u|ya)\b"
    r"|(?:help|give|tell|show|make|write|draft|find|suggest|recommend|redo|format|send|remind|list|check|fix|"
    r"update|explain|book|create|sort|organi[sz]e|plan|translate|rewrite|word|compose|adjust|recheck|calculate|"
    r"convert|add|put|remove|swap|change|draw up|come up with|figure out|look up|lay out|set up)\s+"
    r"(?:me|us|a|an|the|my|our|this|that|these|those|some|it|them|him|her|what|how|out|up|with)\b"
    r"|need\s+(?:a|an|some|help|ideas?|tips|advice|easy|quick|new|recipes?|suggestions?)\b"
    r"|(?:got\s+)?any\s+(?:tips|ideas|suggestions|recs|recommendations|advice|thoughts)\b"
    # what talk.QUESTION does not already say: "whats ...", "does the ...", "where can ...", "ideas for ..."
    r"|whats\b|does\s+the\b|where\s+(?:can|do|should|is)\b|when\s+(?:can|should|do|is)\b|ideas?\s+for\b"
    r"|thoughts\?)")


def asks(piece: str) -> bool:
    """Whether `piece` (part of a sentence) asks something of the assistant rather than says something."""
    text = _LEAD.sub("", piece.strip()).strip()
    if not text:
        return False
    if talk.EXPLICIT.match(text):
        return False  # "remember that I live in Leslieville, Toronto": what to keep, not an order to do something
    if _RELATIVE.match(text) and not text.endswith("?"):
        return False  # "..., which is going to take some getting used to": said of what came before
    # a piece ending in "?" asks unless the speaker opens it ("I finished it - want to see?" says something first)
    # or it goes on from the subject before it ("My manager, Helen Cho, wants the report by Thursday - can you ...?")
    if talk.QUESTION.match(text) or _ASK.match(text):
        return True
    if text.endswith("?") and not _OWN_START.match(text) and nlp.parse(text)[0].tag_ not in ("VBZ", "VBD"):
        return True
    return imperative(text)


_RELATIVE = re.compile(r"(?i)(?:which|who|whose|whom|where|when)\b(?!\s+(?:do|does|did|can|could|should|would|will)\b)")


_OWN_START = re.compile(r"(?i)(?:i|i'm|im|i've|ive|we|we're|my|our)\b")


def imperative(text: str) -> bool:
    """A bare verb to the assistant ("redo the meal plan", "loop Jonas in"): the parse's root is a base-form verb
    with no subject, and the piece is no statement with its subject left out ("love the new flat")."""
    text = _LEAD.sub("", text.strip()) or text  # "Kindly amend my address ...": the order after its courtesy
    if talk.STATE_LEAD.match(text):
        return False
    doc = nlp.parse(text)
    root = next((t for t in doc if t.dep_ == "ROOT"), None)
    return bool(root is not None and root.i == 0 and root.tag_ == "VB" and root.pos_ == "VERB" and len(doc) > 2
                and root.lower_ not in _FEELINGS and root.lower_ in nlp.lemmas(root.lower_).get("VERB", ())
                and not any(c.dep_ in ("nsubj", "nsubjpass", "expl") for c in root.children))


# verbs whose bare form opens a statement about the speaker, not an order: "love the new flat", "miss Leeds"
_FEELINGS = {"love", "like", "hate", "miss", "need", "want", "wish", "hope", "enjoy", "prefer", "adore", "feel",
             "thank", "guess", "think", "bet", "reckon", "mean", "owe"}


_CONTACT = re.compile(f"{EMAIL}|{PHONE}")


def apart(sentence: str) -> list[tuple[str, bool]]:
    """`sentence` cut into its statements and what it asks, each with whether it asks ("need dinners, im
    vegetarian" -> ("need dinners", True), ("im vegetarian", False)); whole, asking nothing, when it does not join
    the two."""
    if _CONTACT.search(sentence):  # read with all its sentence says: "use X from now on, the old number is dead"
        return [(sentence, False)]
    pieces = [p.strip() for p in _JOINS.split(sentence) if p and p.strip()]
    asked = [asks(p) for p in pieces] if len(pieces) > 1 else []
    if all(asked) or not any(asked):
        return [(sentence, False)]
    for index in range(len(pieces) - 2, -1, -1):  # a fragment goes with what follows: "as a vegetarian, how do i ..."
        if not asked[index] and not has_verb(pieces[index]):
            asked[index] = asked[index + 1]
    if all(asked):
        return [(sentence, False)]  # "as a vegetarian, how do i ...?": one question, read whole as before
    out: list[tuple[str, bool]] = []
    for piece, ask in zip(pieces, asked, strict=True):
        if out and ask == out[-1][1]:  # parts of one kind stay together ("im vegetarian, the kids eat chicken")
            out[-1] = (f"{out[-1][0]}, {piece}", ask)
        else:
            out.append((piece, ask))
    return out


def pieces(runs: list[str]) -> list[tuple[str, bool]]:
    """The runs of one sentence (`extraction.spoken.runs`), each with whether it asks: a run cut from others asks or
    says as a whole ("... im 30 now", "so give me android steps"); a lone one as `apart` cuts it."""
    if len(runs) == 1:
        return apart(runs[0])
    out: list[tuple[str, bool]] = []
    for run in runs:
        # what follows "so" asks when it is said to the assistant ("so if you need my location ..."); said of the
        # speaker, it stays with what it follows ("my Galaxy's screen cracked so I got an iPhone 15 instead")
        led = re.match(r"(?i)so\b", run)
        ask = asks(run) or bool(led and talk.YOU.search(run))
        if led and out and not ask and not out[-1][1]:
            out[-1] = (f"{out[-1][0]} {run}", False)
        else:
            out.append((run, ask))
    return out
