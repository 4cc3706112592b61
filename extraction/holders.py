"""Whom a parsed statement is about: the speaker ("I", "we", their name, "the user"), or someone else, and the
subject's head token, for extraction.attributes (statement_parts reads the rest of what it holds)."""

from __future__ import annotations

import re
from dataclasses import replace

from extraction.attribute_kinds import FAVOURITE_WORDS, ROLES
from extraction.naming import RELATIONS, SPEAKERS_OWN, speakers
from extraction.slots import OCCUPATIONS
from extraction.statement_parts import TIME_LABELS
from extraction.statement_roles import received

SELF_WORDS = {"", "user", "the user", "i", "me", "we", "us", "myself"}
_STAND_INS = ("it", "that", "this")
_CONTACTS = {"number", "email", "address", "phone", "mobile", "cell"}
_GROUPS = {"team", "company", "department", "group", "club", "shared", "joint"}
_NOT_PEOPLE = _GROUPS | _CONTACTS | {"firm", "employer", "car", "phone", "flat", "house", "band", "shop", "business",
                                     "school", "office", "brand", "startup", "restaurant", "cafe", "bar", "app"}
_THINGS = {"ORG", "GPE", "LOC", "FAC", "PRODUCT", "WORK_OF_ART", "EVENT", "NORP"}  # entity labels of no person


def _names_a_relation(head) -> bool:
    """A subject said to be the speaker's relation of a kind that is theirs (attribute_kinds.ROLES): "Oluwaseun is
    my boss", "Greta is the user's manager"."""
    return head.head.lemma_ == "be" and any(
        c.dep_ == "attr" and (c.lemma_.lower() in ROLES or c.lower_ in ROLES) and speakers(c)
        for c in head.head.children)


def _relation_named(head) -> bool:
    """The speaker's relation of a kind that is theirs said to be a name: "my boss is Gary"."""
    return (head.lemma_.lower() in ROLES or head.lower_ in ROLES) and head.head.lemma_ == "be" and any(
        p.dep_ == "poss" and p.lower_ in ("my", "our", "user", "their") for p in head.children) and any(
        c.dep_ in ("attr", "acomp") and (c.pos_ == "PROPN" or c.is_title) for c in head.head.children)


def _is_self(token, self_names: set[str]) -> bool:
    """The speaker as a subject: "I", "we", their name, "the user" (not "the user's ...")."""
    return token.lower_ in ("i", "we") or token.lower_ in self_names or (
        token.lower_ == "user" and not any(c.dep_ == "poss" for c in token.children))


def holder(doc, subject: str, self_names: set[str]) -> tuple[str, object]:
    """Whom the statement is about ("" = the speaker) and the subject's head token to say "I" in its place."""
    given = (subject or "").strip().lower()
    # a date is nobody ("Friday, 31 May was the user's last day at Zalando"), nor an adjective the parser made a
    # subject ("..., so pescatarian now they guess")
    every = [t for t in doc if t.dep_ in ("nsubj", "nsubjpass") and t.ent_type_ not in TIME_LABELS and t.pos_ != "ADJ"]
    subjects = [t for t in every if t.head.dep_ == "ROOT"] or every
    whose = next((p for t in doc if t.dep_ == "attr" and t.lower_ in _CONTACTS and t.head.lemma_ == "be"
                  for p in t.children if p.dep_ == "poss" and p.lower_ not in (*SPEAKERS_OWN, "user")), None)
    # "Put Gran's number on the babysitter sheet: 087 ...": Gran's, when the speaker names no contact of their own
    if whose is None and not any(t.lower_ in _CONTACTS and any(p.lower_ in ("my", "our") for p in t.children)
                                 for t in doc):
        whose = next((p for t in doc if t.lower_ in _CONTACTS for p in t.children
                      if p.dep_ == "poss" and p.lower_ not in (*SPEAKERS_OWN, "user", "their")), None)
    if whose is not None:
        return whose.lower_, whose  # "(614) 555-0278 is Dana's number": Dana's
    if subjects and subjects[0].lower_ in _STAND_INS and subjects[0].head.lemma_ == "be" and any(
            c.dep_ == "attr" and speakers(c) for c in subjects[0].head.children):
        return "", None  # "it was my 35th birthday": the speaker's
    if subjects and subjects[0].lower_ in _STAND_INS and subjects[0].head.lemma_ == "be" and any(
            t.lower_ == "for" and t.head.dep_ in ("ROOT", "conj", "acomp", "attr") and (
                t.head == subjects[0].head or t.head.head == subjects[0].head)
            and any(o.lower_ in ("me", "us", "them", "user") for o in t.children)
            for t in subjects[0].head.subtree):
        return "", None  # "it's fully plant-based for me now": the speaker's way
    if subjects and subjects[0].lower_ in _STAND_INS and subjects[0].head.lemma_ == "be":
        # "my office line changed, it's 0207 ...": "it" is the speaker's thing named before
        # and "The user quit low carb, it wasn't for them": a remark after the speaker's own clause
        subjects = [t for t in every if t.pos_ == "NOUN" and any(c.dep_ == "poss" for c in t.children)] or [
            t for t in every if t.i < subjects[0].i and t.head.dep_ != "advcl" and _is_self(t, self_names)] or subjects
        if subjects[0].lower_ in _STAND_INS and any(t.dep_ == "poss" and t.lower_ in SPEAKERS_OWN
                                                   for t in doc[:subjects[0].i]):
            return "", None  # "my favourite colour used to be blue but it's green now": the speaker's thing
    if subjects and subjects[0].lower_ not in ("i", "we", "user") and any(
            c.lower_ in ("himself", "herself") for c in subjects[0].head.children):
        return subjects[0].lower_, subjects[0]  # "Pete just bought himself a Dodge Ram": Pete's, never the speaker's
    if subjects and received(subjects[0].head):
        return "", None  # "my daughter gave me a Galaxy A54": the speaker's now
    if subjects and subjects[0].head.lemma_ == "be" and any(
            c.dep_ == "attr" and speakers(c) and (c.lower_ in FAVOURITE_WORDS or any(
                g.lower_ in FAVOURITE_WORDS for g in c.children))
            for c in subjects[0].head.children):
        return "", None  # "Bunny chow is my favourite dish of all time": the subject is the value
    if subjects and (_names_a_relation(subjects[0]) or _relation_named(subjects[0])):
        # "Greta is my manager", "my boss is Gary" (the extractor's subject: the name): the speaker's, named
        return "", None
    if given and given not in SELF_WORDS and given not in self_names:
        return given, subjects[0] if subjects else None
    if subjects and subjects[0].pos_ == "PROPN" and subjects[0].head.lemma_ not in ("call", "name") and any(
            c.dep_ == "dobj" and (c.lower_ == "me" or _is_self(c, self_names)) for c in subjects[0].head.children):
        return "", None  # "Sarah manages me now": said of the speaker, the name is the value ("Sarah called me": no)
    if not subjects:
        # the small model found no subject in "The user's mum works at IKEA" (a noun "works"): the relation named
        opening = re.match(r"(?i)(?:the user's|my|our) (\w+)\b", doc.text)
        if opening and opening[1].lower() in RELATIONS:
            return opening[1].lower(), None
        return "", None  # "Lives in Paris", "Got promoted to team lead": the speaker, implied
    head = subjects[0]
    # "my irmã Juliana got hired at ...", "the user's prima Beatriz": a named person of theirs, in any word
    # (a word the parser knows nothing of, in lower case, just before a name: no relation word nor a thing's)
    said_as = next((c for c in head.children if c.dep_ in ("appos", "compound") and abs(c.i - head.i) == 1 and (
        (word := min(c, head, key=lambda t: t.i)).is_lower and max(c, head, key=lambda t: t.i).is_title
        and word.lower_ not in _NOT_PEOPLE and word.lemma_.lower() not in RELATIONS and word.lower_ not in RELATIONS)),
        None)
    if said_as is not None and any(p.dep_ == "poss" and p.lower_ in (*SPEAKERS_OWN, "user")
                                   for p in (*head.children, *said_as.children)):
        return " ".join(t.lower_ for t in sorted((head, said_as), key=lambda t: t.i)), head
    if head.ent_type_ in _THINGS:
        # a thing is nobody: "The Civic died so the user bought a Mazda", "Ramen overtook pizza as my favourite"
        speaker = next((t for t in every + [c for t in every for c in t.children if c.dep_ == "conj"]
                        if _is_self(t, self_names)), None)
        if speaker is not None:
            return "", speaker
        if any(t.dep_ == "poss" and t.lower_ in SPEAKERS_OWN for t in doc):
            return "", None
    word = head.lower_
    if word in ("i", "we", "me") or word in self_names:
        return "", head
    if any(c.dep_ == "conj" and (_is_self(c, self_names) or (c.lower_ == "they" and "user" in doc.text.lower()))
           for c in head.children):
        return "", head  # "the kids and I are in Bergen now", "Tom and I are done": the speaker with others
    group = next((c for c in head.children if c.dep_ == "compound" and c.lower_ in _GROUPS), None)
    if group is not None:
        return group.lower_, head  # "our team inbox": the team's, not the speaker's own
    if word == "user":
        owner = [c for c in head.children if c.dep_ == "poss"]
        return ("", head) if not owner else ("user's", head)
    owned = any(t.dep_ == "poss" for t in head.subtree) or any(t.lower_ == "user" for t in head.subtree)
    if head.pos_ == "PROPN" and head.ent_type_ in ("PERSON", "") and not any(
            c.dep_ == "poss" for c in head.children):
        # the name is someone else when it does what it does with or to the speaker's own ("Tom works at Google with
        # my sister", "Dana got promoted out of our team"), or is the speaker's someone in a job ("Dana is my
        # accountant": Dana's job)
        attr = next((c for c in head.head.children if c.dep_ in ("attr", "oprd") and speakers(c)), None)
        other = (attr is not None and attr.lower_ in OCCUPATIONS and attr.lower_ not in ROLES and not any(
            c.lower_ in FAVOURITE_WORDS for c in attr.children)) or any(  # "Ishiguro is my favourite author"
            t.dep_ == "poss" and t.lower_ in SPEAKERS_OWN and t.head.dep_ == "pobj"
            and t.head.head.lower_ not in ("as", "like") and head.head in t.ancestors
            and head.left_edge.i not in (t.head.i + 1, t.head.i + 2) for t in doc)  # "with my boss, Mr. Ishida,"
        # a name in a statement that says nothing of the speaker ("Fiona Barrow has been appointed COO"), or that
        # takes a role of theirs ("Desmond took over as my manager": the manager is roles.named_roles'): theirs
        other = other or (head.ent_type_ == "PERSON" and not any(
            t.lower_ in ("i", "me", "my", "we", "us", "our", "user", "they", "them", "their") for t in doc)) or any(
            p.lower_ == "as" and any(g.lower_ in ROLES and speakers(g) for g in p.children) for p in head.head.children)
        return ("", head) if given == "user" and not other else (head.lower_, head)  # the extractor's name
    if head.pos_ == "PROPN" and head.ent_type_ == "PERSON" and any(
            c.dep_ == "compound" and c.lower_ in RELATIONS for c in head.children):
        return head.lower_, head  # "the user's teammate Ravi reports to Jonas": Ravi's manager
    if head.lower_ == "ex" and head.i + 2 < len(doc) and doc[head.i + 2].lower_ in RELATIONS:
        return f"ex-{doc[head.i + 2].lower_}", head  # "my ex-wife lives in Nice": hers, no partner of the speaker's
    if head.lemma_.lower() in RELATIONS or head.lower_ in RELATIONS:
        named = [c.text for c in head.children if c.dep_ in ("appos", "compound") and c.pos_ == "PROPN"]
        # "my boss's boss is Priyanka": the boss's ("my boss is Tom" is the speaker's: _relation_named)
        theirs = next((c for c in head.children if c.dep_ == "poss" and c.lemma_.lower() in RELATIONS), None)
        if theirs is not None:
            return theirs.lemma_.lower(), head
        return (f"{head.lemma_.lower()} {named[0].lower()}" if named else head.lemma_.lower()), head
    if word == "they" and any(t.lower_ == "user" for t in doc):
        return "", head  # the extractor's "I" in a later clause: "The user traded the Clio in, they drive ..."
    if head.pos_ in ("PRON",) and word in ("he", "she", "they", "it"):
        return word, head
    owner = next((c for c in head.children if c.dep_ == "poss"), None)
    if owner is not None and owner.lower_ in ("his", "her"):
        return {"his": "he", "her": "she"}[owner.lower_], head  # "his name is Ryan": his, not the speaker's
    if owner is not None and (owner.lemma_.lower() in RELATIONS or owner.lower_ in RELATIONS or (
            owner.pos_ in ("NOUN", "PROPN") and owner.lower_ != "user" and owner.lower_ not in self_names)):
        return owner.lemma_.lower(), head  # "the user's wife's number", "my landlord's number": theirs
    if owned or (given == "user" and head.pos_ == "NOUN"):
        # "my phone number is ...", "mail for the user goes to ...", and in the speaker's own statement a thing
        # with no owner ("home is Bergen these days"): the speaker's thing
        return "", None
    return head.lemma_.lower(), head


def stood_in(frames: list) -> list:
    """A statement's frames with the value said of "it" after one of the speaker's values ended taken as that
    attribute's new value: "I don't report to Fiona anymore, it's Rajesh Menon now" (read alone, "it's Rajesh Menon
    now" named nobody's partner)."""
    ended = next((f for f in frames if f.ended and f.single and not f.holder), None)
    if ended is None:
        return frames
    return [replace(f, attribute=ended.attribute, holder="", ended=False, restated="")
            if f.holder in _STAND_INS and f.single and f.value else f for f in frames]


def whose_favourite(doc, holder: str) -> str:
    """Who holds the favourite a statement names: the one named before "favourite" ("Tomás's favourite cafe is
    Hazel & Rye, so the user is bringing him there": Tomás), else `holder`."""
    for token in (t for t in doc if t.lower_ in FAVOURITE_WORDS):
        owner = next((c for c in token.head.children if c.dep_ == "poss"), None)
        if owner is not None and owner.lower_ not in (*SPEAKERS_OWN, "their", "his", "her", "its"):
            return owner.lower_
        if owner is not None and owner.lower_ in ("his", "her") and (relation := next(
                (t for t in reversed(doc[:owner.i]) if t.lower_ in RELATIONS), None)) is not None:
            return relation.lower_  # "bought my dad beans for his birthday, it's his favourite coffee": the dad's
    return holder
