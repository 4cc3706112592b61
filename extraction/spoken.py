"""Speech typed as it is said.

A message dictated to the assistant, or typed the way it would be said, has fillers ("um", "so like") and no full
stops between its sentences: "it was my birthday yesterday um im 30 now so redo the numbers". Read whole, no
attribute reads through such a run. `plain` takes the fillers out; `runs` cuts the run where the parse finds a
clause that starts with its own subject and no word joining it to the one before, so each clause is read as the
sentence it was said as.
"""

from __future__ import annotations

import re

from extraction import nlp

# hesitation sounds, never words of a statement ("um", "uhh", "erm", "hmm", "ugh")
_HESITATION = re.compile(r"(?i)(?:,\s*)?\b(?:u+m+|u+h+|uhm+|erm+|hm+|ugh+)\b(?:\s*,)?(?=\s|$|[.!?])")
# "like" as a filler after a word that leads a clause ("so like", "and like")
_LIKE = re.compile(r"(?i)\b(so|and|but|or|because|cause|yeah|ok|okay)\s+like\b(?!\s+(?:it|that|this|them)\b)")
# pronoun subjects that may start a sentence said without a stop before it ("... yesterday im 30 now")
_SUBJECTS = {"i", "we", "he", "she", "they", "you"}

# adverbs that end the clause before them, never open the next one
_CLOSING = {"anymore", "too", "either", "though", "tho", "yet"}

# verbs that say something to someone: "she told me i was right" is one sentence
_TOLD = {"tell", "ask", "show", "promise", "warn", "remind", "inform", "convince", "assure", "teach", "bet"}


def plain(text: str) -> str:
    """`text` without hesitation sounds and filler "like"s ("like on the weekend", "like hes my boss"; not "would
    like a coffee", "looks like rain")."""
    text = _LIKE.sub(r"\1", _HESITATION.sub("", text))
    if re.search(r"(?i)\blike\b", text):
        doc = nlp.parse(text)
        text = "".join(t.text_with_ws for t in doc if not (t.lower_ == "like" and _filler(t)))
    return re.sub(r"\s{2,}", " ", text).strip()


def _filler(like) -> bool:
    after = like.doc[like.i + 1] if like.i + 1 < len(like.doc) else None
    return like.tag_ == "UH" or (like.pos_ == "ADP" and after is not None and (
        after.pos_ in ("ADV", "ADP", "SCONJ", "NUM") or after.dep_ == "nsubj"))


def runs(sentence: str) -> list[str]:
    """`sentence` cut where a clause starts with a pronoun subject (or "so" before it) that nothing joins to what
    came before; whole when no such clause starts in it, or when it is punctuated inside (a writer who uses commas
    uses full stops)."""
    if re.search(r"[,;:]", sentence.rstrip(".!?")) or len(sentence.split()) < 6:
        return [sentence]
    doc = nlp.parse(sentence)
    cuts = []
    for token in doc:
        verb = token.head
        if not (token.dep_ in ("nsubj", "nsubjpass") and token.lower_ in _SUBJECTS and verb.i > token.i):
            continue
        # a clause said after one already whole ("it was a big week we got the keys") is no complement of it, as in
        # "i think im 30", "let you know i moved"; nor is one said before the verb the parse hangs it on
        told = _TOLD & set(nlp.lemmas(verb.head.lower_).get("VERB", ()))
        whole = verb.head.pos_ not in ("VERB", "AUX") or not told and any(
            c.dep_ in ("dobj", "attr") and c.i < token.i for c in verb.head.children)
        # a clause with no relative word right after its noun ("the car i drive"), not after more ("the keys on
        # friday we live in Harrogate")
        related = verb.dep_ == "relcl" and verb.head.i == token.i - 1
        complement = verb.dep_ == "ccomp" and not whole and verb.head.i < verb.i
        if related or complement or verb.dep_ in ("xcomp", "acl", "pcomp") or any(
                c.dep_ in ("mark", "cc", "aux") or c.tag_ in ("WDT", "WP", "WRB") for c in verb.children
                if c.i < token.i):
            continue  # "the car i drive", "i think im 30", "because we moved", "what i drive", "can you call"
        start = token.i
        while start > 0 and doc[start - 1].head == verb and doc[start - 1].dep_ in ("advmod", "npadvmod", "intj") \
                and doc[start - 1].lower_ not in _CLOSING:
            start -= 1  # "now im at google": "now" goes with its clause; "... anymore i started at X": not "anymore"
        if start > 0 and doc[start - 1].lower_ == "so":
            start -= 1
        if any(t.dep_ == "advcl" and t.head.i >= start for t in doc[:start]):
            continue  # "when i was young we lived in Paris": the first clause says when the second held
        before = doc[start - 1] if start else None
        if before is None or before.pos_ in ("CCONJ", "SCONJ", "PART") or before.dep_ == "prep" or before.tag_ in (
                "WDT", "WP", "WRB"):
            continue
        cuts.append(start)
    # "... so redo the numbers", "... so if you need my location", "... so the menu might look different": what
    # follows "so" is said of it, in a clause of its own
    cuts += [t.i for t in doc if t.lower_ == "so" and 0 < t.i and (after := _after_so(doc, t.i)) is not None and (
        after.pos_ in ("PRON", "DET", "SCONJ") or after.tag_ == "VB"
        or after.lower_ in nlp.lemmas(after.lower_).get("VERB", ()))]
    pieces, start = [], 0
    for cut in sorted(set(cuts)):
        if any(t.pos_ in ("VERB", "AUX") for t in doc[start:cut]):  # "ok so i got ...": "ok" is no sentence
            pieces.append(doc[start:cut].text)
            start = cut
    return [*pieces, doc[start:].text]


def _after_so(doc, i: int):
    """The word that says what follows "so", past "now", "then", "yeah" ("so now im driving a Kia"), or None."""
    i += 1
    while i < len(doc) and doc[i].lower_ in ("now", "then", "yeah", "anyway", "basically", "obviously"):
        i += 1
    return doc[i] if i < len(doc) else None
