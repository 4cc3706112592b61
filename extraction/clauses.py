"""Clauses a kept sentence holds, read from its parse (extraction.nlp) rather than from patterns:

- coordinated verb phrases that share the subject but say different things are cut apart, each with the
  subject: "I'm allergic to nuts and have to carry an EpiPen" -> "I'm allergic to nuts" + "I have to carry an
  EpiPen" (not "allergic to ... carry an EpiPen"); "I live in Lyon and work at Doctolib" -> two statements.
  Cut only when one side fills an update slot: "I love horses and ride them" stays whole, its second half
  needs the first (and the small model's parse of a long chat sentence is not worth the risk);
- a participle clause after a comma that fills an update slot is a statement of its own: "we moved again, now
  living in Porto" -> "we moved again" + "we are now living in Porto";
- a clause led by "he"/"she" takes the person just named: "My daughter Mia starts school; she turns 7 on June 14"
  -> "... ; my daughter Mia turns 7 on June 14" (`attach_pronoun`).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from extraction import nlp
from extraction.attribute_kinds import FAVOURITE_WORDS, ROLES
from extraction.context import PERSON_NAME
from extraction.slots import RELATIONS

FEMALE = set("wife mother mom mum sister daughter girlfriend fiancee fiancée grandmother grandma aunt niece "
             "stepdaughter granddaughter".split())
MALE = set("husband father dad brother son boyfriend fiance fiancé grandfather grandpa uncle nephew stepson "
           "grandson".split())
_RELS = "|".join(sorted(RELATIONS | {"parent", "grandparent", "in-law", "folk"}, key=len, reverse=True))
_PERSON = re.compile(rf"\b(?i:my|our|a|an) (?:(?:little|big|older|younger|eldest|oldest|youngest|baby|new|best|"
                     rf"\d+[- ]year[- ]old) )*(?P<rel>(?i:{_RELS}))(?P<plural>s)?"
                     rf"(?:(?:,|'s name is| is called| is named)? (?P<name>{PERSON_NAME}))?\b")
_LEADING = re.compile(r"^(?P<lead>(?:(?:and|but|so|also|then|now|plus)\s+)*)(?P<pronoun>he|she|they)"
                      r"(?P<verb>'s|'ll|'d|'re|'ve)?\b", re.IGNORECASE)
_ARGS = {"dobj", "xcomp", "prep", "ccomp", "attr", "acomp", "advmod", "npadvmod", "dative", "oprd"}
# a clause of its own after "and", worth parsing for: "... and I live in Bristol", "... and my wife is a doctor"
_OWN_CLAUSE = re.compile(r"(?i)\band (?:I|I'm|I've|we|we're|we've|my|our|he|she)\b")
# words of a second clause that point back at the first: "I love horses and I ride them"
_BACK = {"it", "its", "them", "they", "their", "that", "those", "this", "these", "there", "one", "ones", "both"}
_BE = {"I": "am", "i": "am", "we": "are", "We": "are", "they": "are", "They": "are", "you": "are"}


def antecedent(text: str) -> tuple[str, str] | None:
    """The last person of the speaker's named in `text` ("my daughter Mia"), with the pronoun that fits them
    ("she", "he", or "" when either does)."""
    found = None
    for match in _PERSON.finditer(text):
        rel = match["rel"].lower()
        if match.group(0).split()[0].lower() in ("a", "an") and not match["name"]:
            continue  # "a friend": nobody in particular
        if match["plural"]:
            if not match["name"]:
                found = (f"my {match['rel']}s", "they")  # "my parents ...; they live in Valencia"
            continue
        words = f"my {match['rel']} {match['name']}" if match["name"] else f"my {match['rel']}"
        found = (words, "she" if rel in FEMALE else "he" if rel in MALE else "")
    return found


def attach_pronoun(clause: str, person: tuple[str, str] | None) -> str:
    """A clause led by "he"/"she" about `person` with the person in its place: "she turns 7" -> "my daughter
    Mia turns 7"; unchanged when there is nobody or the pronoun does not fit."""
    match = _LEADING.match(clause)
    if not match or person is None:
        return clause
    words, fits = person
    pronoun = match["pronoun"].lower()
    if (fits or pronoun == "they") and fits != pronoun:
        return clause  # a singular "they" for someone named is too often someone else
    verb = {"'s": " is", "'ll": " will", "'d": " would", "'re": " are", "'ve": " have", None: ""}[
        match["verb"] and match["verb"].lower()]
    following = clause[match.end():].split()[:1]
    if verb == " is" and following and following[0].lower() in ("been", "got", "gotten", "had", "done", "gone"):
        verb = " has"  # "she's been" is "she has been"
    return f"{match['lead']}{words[:1].lower()}{words[1:]}{verb}{clause[match.end():]}"


def split(sentence: str, fills_slot: Callable[[str], bool],
          apart: Callable[[str, str], bool] | None = None) -> list[str]:
    """`sentence` as the statements it joins (itself alone when it joins none worth cutting). `apart(first,
    second)`: whether two clauses of the same subject say different things ("I work as a nurse and I love Ghibli
    films"), each then a statement of its own."""
    if " and " not in sentence and "," not in sentence:
        return [sentence]
    rest = re.split(r",\s+|\s+and\s+", sentence)[1:]  # parsing is slow: only when a slot or a clause is in sight
    if not fills_slot(sentence) and not _OWN_CLAUSE.search(sentence) and not any(
            fills_slot(f"{lead} {piece}") for piece in rest for lead in ("I", "I'm")):
        return [sentence]
    doc = nlp.parse(sentence)
    for head in doc:
        subjects = [child for child in head.children if child.dep_ in ("nsubj", "nsubjpass")]
        if len(subjects) != 1 or subjects[0].pos_ not in ("PRON", "NOUN", "PROPN"):
            continue
        subject = doc[subjects[0].left_edge.i:subjects[0].i + 1].text
        for child in head.children:
            if child.i < head.i or any(c.dep_ in ("expl", "mark") for c in child.children):
                continue
            own_subject = any(c.dep_ in ("nsubj", "nsubjpass") for c in child.children)
            if child.dep_ == "conj" and (own_subject or _verb_like(child)):
                # the "and" hangs on either verb: "I work as a nurse and I love Ghibli films" hangs it on "love"
                cc = [c for c in head.children if c.dep_ == "cc" and c.i < child.left_edge.i] or [
                    c for c in child.children if c.dep_ == "cc" and c.i == child.left_edge.i]
                if not cc:
                    continue
                first = doc[:cc[-1].i].text.rstrip(" ,")
                rest = doc[max(child.left_edge.i, cc[-1].i + 1):].text
                second = rest if own_subject else f"{subject} {rest}"
                if fills_slot(first) or fills_slot(second):
                    return [first, *split(second, fills_slot, apart)]
                if own_subject and cc[-1].lower_ == "and" and (
                        whole := _clause_of_its_own(doc, child, first, subject, apart)):
                    return [first, *split(whole, fills_slot, apart)]
            if child.dep_ == "advcl" and not own_subject and (cut := _participle(doc, child, subject, fills_slot)):
                return cut
        # "I'm Nadia, living in Lille": the participle hangs on the name
        for name in (c for c in head.children if c.dep_ == "attr" and c.pos_ == "PROPN" and head.lemma_ == "be"):
            for child in (c for c in name.children if c.dep_ == "acl"):
                if cut := _participle(doc, child, subject, fills_slot):
                    return cut
    # the small model sometimes parses "I'm a teacher at X and I live in Y" as two roots, the second holding
    # the "and": no conj to find above, and the same cut
    roots = [t for t in doc if t.dep_ == "ROOT"]
    for root in roots[1:]:
        cc = [c for c in root.children if c.dep_ == "cc" and c.i == root.left_edge.i and c.i > 0]
        if cc and any(c.dep_ in ("nsubj", "nsubjpass") for c in root.children):
            first, second = doc[:cc[0].i].text.rstrip(" ,"), doc[cc[0].i + 1:].text
            if fills_slot(first) or fills_slot(second):
                return [first, *split(second, fills_slot, apart)]
            if cc[0].lower_ == "and" and (
                    whole := _clause_of_its_own(doc, root, first, _subject_text(roots[0]), apart)):
                return [first, *split(whole, fills_slot, apart)]
    return [sentence]


def say_apart(first: str, second: str) -> bool:
    """Whether two clauses of the speaker's say different things: the attributes they fill differ."""
    from extraction.attributes import statement_frames  # which reads clauses with this module

    said = [{frame.attribute for frame in frames} for frames in statement_frames([(first, "user"), (second, "user")])]
    return bool(said[0] or said[1]) and not said[0] & said[1]


def _participle(doc, child, subject: str, fills_slot: Callable[[str], bool]) -> list[str] | None:
    """", now living in Porto" after a comma, as a statement of the subject's when it fills a slot."""
    if child.tag_ != "VBG" or child.left_edge.i == 0 or doc[child.left_edge.i - 1].text != ",":
        return None
    second = f"{subject} {_BE.get(subject, 'is')} {doc[child.left_edge.i:].text}".replace("I am ", "I'm ")
    return [doc[:child.left_edge.i - 1].text, second] if fills_slot(second) else None


def _subject_text(head) -> str:
    subjects = [child for child in head.children if child.dep_ in ("nsubj", "nsubjpass")]
    if subjects and (joined := next((c for c in subjects[0].children if c.dep_ == "conj"
                                     and c.lower_ in ("i", "me", "user")), None)) is not None:
        return "the user" if joined.lower_ == "user" else "i"  # "Marco and I are over, seeing Luca now": mine
    return head.doc[subjects[0].left_edge.i:subjects[0].i + 1].text.lower() if subjects else ""


def _clause_of_its_own(doc, head, first: str, first_subject: str,
                       apart: Callable[[str, str], bool] | None = None) -> str:
    """The clause `head` leads (it has a subject of its own) as a statement about someone else that needs nothing
    of the first half, or "": "my wife is a doctor", "she works at Chanel" with the person the first half named in
    the place of "she"; not "I ride them", "it was great", nor "she" with nobody to be. The same subject's clauses
    stay together unless one fills a slot or, with the subject said again, `apart` tells them apart: "I dropped keto
    and I eat Mediterranean now" says one change of diet, "I work as a nurse and I love Ghibli films" two things."""
    start = head.left_edge.i + (doc[head.left_edge.i].dep_ == "cc")
    clause = doc[start:].text
    if any(t.lower_ in _BACK and t.dep_ != "expl" for t in doc[start:]):
        return ""
    if _subject_text(head) == first_subject.lower():
        said_again = any(c.dep_ in ("nsubj", "nsubjpass") for c in head.children)
        return clause if said_again and apart is not None and apart(first, clause) else ""
    if (leading := _LEADING.match(clause)) and leading["pronoun"].lower() in ("he", "she", "they"):
        attached = attach_pronoun(clause, antecedent(first))
        return attached if attached != clause else ""
    return clause


def _verb_like(token) -> bool:
    """A conjoined verb with something of its own (spaCy's small model sometimes tags "work at X" a noun)."""
    own = {child.dep_ for child in token.children}
    if token.pos_ in ("VERB", "AUX"):
        return bool(own & _ARGS)
    return token.pos_ == "NOUN" and token.head.pos_ in ("VERB", "AUX") and "prep" in own and not (
        own & {"det", "poss", "amod", "compound"})


_HEADS = {"ROOT", "conj", "advcl", "parataxis", "ccomp"}
_CONDITIONS = {"if", "unless", "whether", "once", "until", "though", "although", "because"}
# a clause these verbs report is what someone said or thought, not what holds ("I heard she moved to Oslo")
_REPORTING = {"say", "tell", "think", "hear", "know", "mention", "believe", "guess", "hope", "wish", "want", "feel",
              "realise", "realize", "read", "see", "find", "learn", "wonder", "doubt", "suppose", "expect"}
_WHEN = {"when", "while", "after", "before", "as", "since", "until", "till", "whenever"}
_CONTRACTED = {"'re": "is", "'ve": "has", "'s": "is", "'m": "is"}
_AUX_CONTRACTED = {"'ve": "has", "'re": "is", "'d": "had", "'ll": "will", "'m": "is", "'s": "has"}


_HEARSAY = {"say", "tell", "hear", "think", "know", "mention", "believe", "read", "learn", "guess", "suppose"}


def reported(doc) -> bool:
    """What the speaker heard or thinks of someone else: "I heard she moved to Oslo" says nothing of the speaker's
    own home."""
    return any(t.dep_ == "ccomp" and t.head.lemma_.lower() in _HEARSAY and not _after_so(t) and any(
        c.dep_ in ("nsubj", "nsubjpass") and c.lower_ not in ("i", "we", "user", "they") for c in t.children)
        for t in doc)


def _after_so(clause) -> bool:
    """A clause the parser hung under the verb after it, across ", so": "I've been at Rabobank for six years, so I
    know their process" reports nothing."""
    head = clause.head
    return head.i > clause.i and any(c.lower_ == "so" and c.dep_ in ("advmod", "mark") and c.i < head.i
                                     and c.i > clause.right_edge.i for c in head.children)


def frame_clauses(doc, *, they_is: str = "") -> list[str]:
    """The clauses of a parsed statement that have a verb and a subject of their own, each as a statement, for
    reading their attribute frames apart: "the user said goodbye to Spotify, they're at Klarna now" -> "the user
    said goodbye to Spotify" + "the user is at Klarna now" (`they_is`: who "they" is). None when there are fewer
    than two, or one is a condition ("if I get the job, I'll move to Berlin") or a report ("I heard she moved")."""
    heads = [t for t in doc if t.pos_ in ("VERB", "AUX") and t.dep_ in _HEADS
             and not (t.i > 0 and t.text[:1].isupper())  # a name the tagger took for a verb ("goodbye to Spotify")
             and any(c.dep_ in ("nsubj", "nsubjpass") for c in t.children)]
    # a participle after a comma is a clause of its head's subject: "sold the Volvo, driving a Kia now",
    participles = {t.i: _subject_text(t.head) for t in doc if t.tag_ == "VBG" and t.dep_ == "advcl"
                   and t.head in heads and _subject_text(t.head) and t.left_edge.i > 0
                   and doc[t.left_edge.i - 1].text == "," and not any(c.dep_ in ("nsubj", "mark") for c in t.children)}
    # and so is "now at Delivery Hero" after a comma: "quit Zalando, now at Delivery Hero"
    participles |= {t.i: _subject_text(t.head) for t in doc if t.dep_ == "prep" and t.lower_ in ("at", "in", "with")
                    and t.head in heads and _subject_text(t.head) and t.left_edge.i > 0
                    and doc[t.left_edge.i - 1].text == "," and doc[t.left_edge.i].lower_ in ("now", "currently")}
    # a verb in the present joined to the speaker's with "and" says a thing of its own: "the user lives in Denver and
    # loves hiking" (not a story told in the past: "started at the Red Lion and ended up at a club")
    shared = {t.i: _subject_text(t.head) for t in doc if t.dep_ == "conj" and t.pos_ == "VERB" and t.head in heads
              and t.tag_ in ("VBZ", "VBP") and t.head.tag_ in ("VBZ", "VBP")
              and _subject_text(t.head) in ("the user", "i")
              and not any(c.dep_ in ("nsubj", "nsubjpass") for c in t.children)}
    # what a clause reports stays inside it ("I heard she moved", "so the letter should say I'm employed there")
    heads = sorted([h for h in [*heads, *(doc[i] for i in (*participles, *shared))] if not (
        h.dep_ == "ccomp" and h.head.lemma_.lower() in _REPORTING and not _after_so(h))], key=lambda t: t.i)
    if len(heads) < 2 or any(any(c.dep_ == "mark" and c.lower_ in _CONDITIONS for c in h.children) for h in heads):
        return []
    own = {h.i for h in heads}
    # a time clause says when, not what holds now ("when John turned ten, ...", "since I moved to Leeds, ...")
    timed = {h.i for h in heads if h.dep_ == "advcl" and any(
        c.dep_ in ("mark", "advmod") and c.lower_ in _WHEN for c in h.children)}
    # who "he"/"she" is: the one person named before ("a new head of department, Beatriz, so she's my boss")
    people = [t for t in doc if t.pos_ == "PROPN" and (t.ent_type_ == "PERSON" or t.dep_ == "appos")]

    def clause_of(token):
        while token.i not in own and token.head.i != token.i:
            token = token.head
        return token.i

    found = []
    for head in (h for h in heads if h.i not in timed):
        subject = participles.get(head.i)
        words, said = ([subject.replace("i", "I") if subject == "i" else subject, _BE.get(subject, "is")]
                       if subject else []), False
        if head.i in shared:
            words = ["I" if shared[head.i] == "i" else shared[head.i]]
        for token in head.subtree:
            if clause_of(token) != head.i or (token.head.i == head.i and token.dep_ in ("cc", "mark", "punct")):
                continue
            subject = token.dep_ in ("nsubj", "nsubjpass") and token.head.i == head.i
            before = [p for p in people if p.i < token.i]
            joined = token.dep_ == "conj" and token.head.dep_ in ("nsubj", "nsubjpass") and token.head.head.i == head.i
            if (subject or joined) and they_is and token.lower_ == "they":  # "the kids and they are in Bergen"
                words.append(they_is)
            elif subject and token.lower_ in ("he", "she") and len({p.lower_ for p in before}) == 1:
                words.append(before[0].text)
            elif said and token.lower_ in _CONTRACTED and token.i == head.i:
                words.append(_CONTRACTED[token.lower_])
            elif said and token.lower_ in _AUX_CONTRACTED:  # "they've been in Trondheim": "the user has been"
                words.append(_AUX_CONTRACTED[token.lower_])
            elif they_is and token.lower_ == "their" and (token.head.lower_ in ROLES or any(
                    c.lower_ in FAVOURITE_WORDS for c in token.head.children)):
                # "their boss": the speaker's, as in named_roles; "decided Paddington 2 is their favourite film"
                words.append(f"{they_is}'s")
            else:
                words.append(token.text)
            said = len(words) > 0 and words[-1] != token.text
        text = re.sub(r" (?=[,.;!?]|'s\b|n't\b|'re\b|'ve\b|'m\b|'ll\b|'d\b)", "", " ".join(words)).strip(" ,;")
        if text:
            found.append(text)
    return found if len(found) > 1 else []
