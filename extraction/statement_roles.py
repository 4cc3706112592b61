"""The roles and occupations a parsed statement names, for extraction.attributes: the speaker's roles named in
passing ("their wife Hana"), an occupation said of the holder and where ("a backend developer at Spotify"), and a
name said as a place or a thing rather than a person ("a Mini Cooper"), a diet said of the holder ("so
pescatarian now", not "a vegan cake"), a make
said as a thing the holder has ("a secondhand Skoda"); and what makes a place, an employer or a car no attribute of
the holder's: a stay ("in Rome for the weekend"), where they grew up, a thing left somewhere, a trip, a work
vehicle."""

from __future__ import annotations

import re

from extraction.attribute_kinds import ROLES
from extraction.english import NOWADAYS
from extraction.naming import speakers
from extraction.slots import DIETS, OCCUPATIONS, RELATIONS
from extraction.talk import TITLE_WORDS

_DIET = re.compile(rf"(?i)(?:{DIETS})")


_FORMER = {"old", "former", "previous", "ex", "ex-", "last"}


def named_roles(doc) -> list[tuple[str, str]]:
    """(role, name) for each of the speaker's roles named in passing: "my wife Hana", "their boss, Tom"."""
    found = []
    for t in doc:
        if any(c.lower_ in _FORMER for c in t.children) or (t.dep_ == "compound" and any(
                c.lower_ in _FORMER for c in t.head.children)):
            continue  # "my old boss Tom", "my ex-girlfriend Chloe": a role that was theirs
        if t.lower_ in ROLES and any(c.dep_ == "poss" and c.lower_ in ("my", "our", "their", "user")
                                     for c in t.children):
            names = [c for c in t.children if c.dep_ == "appos" and c.pos_ == "PROPN"]
            if not names and t.i + 1 < len(doc) and doc[t.i + 1].pos_ == "PROPN":
                names = [doc[t.i + 1]]  # the small parser hangs "Hana" elsewhere in "their wife Hana love hiking"
            names = names or ([t.head] if t.dep_ == "appos" and t.head.pos_ == "PROPN" else [])  # "Gloria, my boss,"
            if not names and t.dep_ == "pobj" and t.head.lower_ == "as":  # "Desmond took over as my manager"
                names = [c for c in t.head.head.children if c.dep_ in ("nsubj", "nsubjpass") and c.pos_ == "PROPN"]
            found += [(t.lower_, n.text.lower()) for n in names[:1]]
        elif t.lower_ in ROLES and t.dep_ == "compound" and t.head.pos_ == "PROPN" and any(
                c.dep_ == "poss" and c.lower_ in ("my", "our", "their", "user") for c in t.head.children):
            found.append((t.lower_, t.head.text.lower()))  # "my girlfriend Chloe": the role a compound of the name
    return found


def introduced(token) -> str:
    """The name the holder introduces themselves by ("The user is Maya", "I'm Maya Patel"): the name in lower case,
    else "" (not "is Canadian", "is Maya's friend", "is a Maya fan")."""
    verb = token.head if token is not None and token.dep_ == "nsubj" else None
    attrs = [c for c in verb.children if c.dep_ == "attr"] if verb is not None and verb.lemma_ == "be" else []
    if len(attrs) != 1 or attrs[0].pos_ != "PROPN" or attrs[0].ent_type_ in ("NORP", "GPE", "ORG", "LOC", "DATE"):
        return ""
    name = attrs[0]
    if any(c.dep_ in ("det", "poss", "amod", "case", "prep") for c in name.children) or any(
            c.dep_ not in ("nsubj", "attr", "punct", "advmod") for c in verb.children) or any(
            t.lower_ in OCCUPATIONS or t.lower_ in TITLE_WORDS for t in name.subtree):
        return ""  # "The user is Chief Operating Officer": a title
    return " ".join(t.lower_ for t in name.subtree)


def joined_with(token) -> str:
    """The person the speaker is said together with ("Paul and I are divorced now": "paul"), else ""."""
    if token is None or token.pos_ != "PROPN" or token.ent_type_ not in ("PERSON", ""):
        return ""
    joined = any(c.dep_ == "conj" and c.lower_ in ("i", "me", "user", "we") for c in token.subtree)
    return token.lower_ if joined else ""


def changed_from(doc, value: str) -> bool:
    """The value is what the holder changed from ("switched from Android", "moved over from the Galaxy"): the old
    one, when no new one is said beside it."""
    words = set(value.split())
    return bool(words) and any(
        t.dep_ == "prep" and t.lower_ == "from" and t.head.lemma_.lower() in _CHANGES
        and not any(w.lower_ in ("to", "into") for w in t.head.subtree)  # "from vegetarian to vegan": a swap
        and words <= {w.lower_ for w in t.subtree} | {w.lemma_.lower() for w in t.subtree} for t in doc)


_CHANGES = {"switch", "move", "upgrade", "change", "convert", "migrate", "go", "swap", "transition"}


def no_person(doc, value: str, in_passing: bool) -> bool:
    """The name `value` is no person: a place or a thing ("living in Lille with my partner", "has a Mini Cooper"),
    a job ("Senior Content Strategist"), a nationality ("is Canadian", not the tagger's "Priya"), or a place said
    in passing ("off to Strasbourg")."""
    return said_of_a_thing(doc, value) or bool(value.split()[-1:] and value.split()[-1] in OCCUPATIONS) or any(
        (e.label_ == "NORP" and e.root.pos_ == "ADJ" or in_passing and e.label_ in ("GPE", "LOC"))
        and e.text.lower() == value for e in doc.ents)


def said_of_a_thing(doc, value: str) -> bool:
    """The name `value` is said as a place or a thing, not a person: after "in"/"near" ("living in Lille with my
    partner") or an article ("has a Mini Cooper", "a 2015 Subaru Forester")."""
    first = value.split()[0] if value else ""
    return any(t.lower_ == first and t.i > 0 and (
        _article_before(doc, t.i) or (t.dep_ == "pobj" and t.head.lower_ in ("in", "near"))) for t in doc)


def origin(doc) -> bool:
    """Where the holder grew up, was born or raised ("I grew up in Munich"): a fact of its own that stays true
    beside the home they have now, no home."""
    return any((t.lemma_.lower() == "grow" and any(c.dep_ == "prt" and c.lower_ == "up" for c in t.children))
               or (t.lower_ in ("born", "raised") and any(c.dep_ == "auxpass" for c in t.children)) for t in doc)


# what is left together with its place: "left my job at Acme" ends Acme, "left my umbrella in Paris" does not
_TIES = {"job", "position", "role", "post", "company", "firm", "team", "flat", "house", "apartment", "home", "place",
         "city", "country", "town", "office", "school", "course", "program", "programme", "partner", "wife",
         "husband", "boyfriend", "girlfriend"}


def left_thing(verb) -> bool:
    """`verb` leaves or loses a thing of its own ("left my umbrella", "lost my keys"), not a place or a tie."""
    return verb.lemma_.lower() in ("leave", "forget", "lose", "drop") and any(
        c.dep_ == "dobj" and c.pos_ in ("NOUN", "PRON") and c.lemma_.lower() not in _TIES for c in verb.children)


def left_behind(doc) -> bool:
    """Something left or lost at a place ("I left my umbrella in Paris", "lost my keys at Google"): the thing's
    whereabouts, not the place ended."""
    return any(left_thing(t) and any(p.dep_ == "prep" and p.lower_ in ("in", "at", "on") for p in [*t.children, *(
        g for c in t.children if c.dep_ == "dobj" for g in c.children)]) for t in doc)  # "left us the shack at X"


_AWAY = re.compile(r"(?i)(?<!moved )(?<!moving )(?<!move )\b(?:back|returned|home) from\b|\b(?:off|headed|heading) to\b"
                   # a place kept for holidays or to let: "sold our holiday flat in Whitby"
                   r"|\b(?:holiday|vacation|weekend|summer|second) (?:flat|home|house|cottage|apartment|cabin|villa)\b"
                   r"|\bbuy-to-let\b|\brental propert"
                   r"|\b(?:doing|spending|taking|having|booked|planning) (?:a|the|our|my) (?:long )?(?:weekend|week|"
                   r"night|fortnight|holiday|trip|break|getaway|city break) (?:in|to|at|away in)\b")


def a_stay(doc) -> bool:
    """The holder is in a place for a while, not living or working there: "in Rome for the weekend", "in Berlin
    today", "in Paris for a conference this week", "renting a cabin in Montana for August" (being, staying or
    renting in a place, with a time or a purpose; time spent there), or was and is back from it ("just back from
    three weeks living out of a flat in Lisbon"), on the way to it ("off to Strasbourg") or on a trip there ("doing a
    weekend in Dresden")."""
    if _AWAY.search(doc.text):
        return True
    for verb in (t for t in doc if t.lemma_ in ("be", "stay", "rent", "live", "spend") and t.dep_ in ("ROOT", "conj")):
        places = [g for p in verb.subtree if p.dep_ == "prep" and p.lower_ == "in"
                  for g in p.children if g.dep_ == "pobj" and g.ent_type_ in ("GPE", "LOC")]
        # not "since March" (a start), not "for three years" (a home), not "for good"
        dated = any(e.label_ == "DATE" and doc[e.start - 1 if e.start else 0].lower_ not in ("since", "from")
                    and e[0].lower_ not in ("since", "now") and "year" not in e.text.lower()
                    and e.text.lower() not in NOWADAYS for e in doc.ents)
        purpose = any(c.dep_ == "prep" and c.lower_ == "for" and not any(
            g.lower_ in ("good", "now") or g.ent_type_ == "DATE" for g in c.children) for c in verb.children)
        if places and (dated or purpose or verb.lemma_ == "spend"):  # "spent all of January in Bicheno"
            return True
    return False


def _article_before(doc, i: int) -> bool:
    """An article before the word at `i`, past any numbers and adjectives ("a 2015 Subaru", "an old Nokia")."""
    j = i - 1
    while j > 0 and (doc[j].like_num or doc[j].pos_ == "ADJ"):
        j -= 1
    return doc[j].lower_ in ("a", "an", "the")


def says_occupation(doc, token) -> bool:
    """The holder is said to be an occupation (slots.OCCUPATIONS): "the user is head chef at the bistro now" (not
    "Dana is my accountant"), or made one ("got bumped up to sous chef", "was hired as a nurse")."""
    verb = token.head if token is not None else next((t for t in doc if t.dep_ == "ROOT"), None)
    if verb is None:
        return False
    if verb.lemma_ == "be":
        return any(c.dep_ == "attr" and c.lemma_.lower() in OCCUPATIONS and not speakers(c) for c in verb.children)
    # "got a job as a store manager", "took a position as head chef"
    if any(t.lemma_.lower() in ("job", "position", "role", "post", "gig") and any(
            p.lower_ == "as" and any(g.dep_ == "pobj" and g.lemma_.lower() in OCCUPATIONS for g in p.children)
            for p in t.children) for t in doc):
        return True
    made = any(c.dep_ == "auxpass" for c in verb.children) or verb.lemma_.lower() in ("move", "step", "start", "work")
    if made and any(c.dep_ == "oprd" and c.lemma_.lower() in OCCUPATIONS for c in verb.children):
        return True  # "was made head chef", "got named captain"
    # "to" a title has no article ("bumped up to sous chef", not "sent to a doctor"); "as" may ("hired as a nurse")
    return made and any(p.dep_ == "prep" and p.lower_ in ("to", "as") and any(
        g.dep_ == "pobj" and g.lemma_.lower() in OCCUPATIONS
        and (p.lower_ == "as" or not any(c.dep_ in ("det", "poss") for c in g.children))
        for g in p.children) for p in verb.children)


def occupation_place(doc, token) -> str:
    """The named place of an occupation said of the holder ("a backend developer at Spotify": "spotify"), else
    ""."""
    verb = token.head if token is not None else next((t for t in doc if t.dep_ == "ROOT"), None)
    for job in (c for c in verb.children if c.dep_ == "attr" and c.lemma_.lower() in OCCUPATIONS) if verb else ():
        for place in (g for p in job.children if p.dep_ == "prep" and p.lower_ in ("at", "for", "with")
                      for g in p.children if g.dep_ == "pobj" and g.pos_ == "PROPN"):
            return _named_place(doc, place)
    return ""


_WORK_NOUNS = {"work", "job", "position", "role", "gig", "post", "internship", "placement"}
_TAKING_UP = {"move", "relocate", "come", "get", "land", "take", "accept", "start", "begin", "have", "find"}


def work_place(doc) -> str:
    """The named place of work said in passing of taking it up ("moved to Lyon for work at Acme", "landed a job
    with Bolt"), else ""."""
    for noun in (t for t in doc if t.pos_ == "NOUN" and t.lower_ in _WORK_NOUNS):
        verb = noun.head.head if noun.head.dep_ == "prep" else noun.head
        if verb.pos_ not in ("VERB", "AUX") or verb.lemma_.lower() not in _TAKING_UP:
            continue  # "an interview for a job at Google", "applied for a role at Bolt": not held
        for place in (g for p in noun.children if p.dep_ == "prep" and p.lower_ in ("at", "for", "with")
                      for g in p.children if g.dep_ == "pobj" and g.pos_ == "PROPN"):
            return _named_place(doc, place)
    # "works at Deloitte as an auditor": the place, beside the job the statement is read as
    for verb in (t for t in doc if t.pos_ == "VERB" and t.lemma_.lower() == "work"
                 and any(p.dep_ == "prep" and p.lower_ == "as" for p in t.children)):
        jobs = [g for p in verb.children if p.dep_ == "prep" and p.lower_ == "as" for g in p.children]
        for place in (g for p in [*verb.children, *(c for j in jobs for c in j.children)]
                      if p.dep_ == "prep" and p.lower_ in ("at", "for")
                      for g in p.children if g.dep_ == "pobj" and g.pos_ == "PROPN"):
            return _named_place(doc, place)  # "as an auditor at Deloitte" too
    return _started_at(doc)


def _named_place(doc, place) -> str:
    """The place's name as said, without its article ("the Red Lion" -> "red lion")."""
    words = [t for t in place.subtree if t.dep_ != "det"]
    return doc[words[0].i:words[-1].i + 1].text.lower()


def _started_at(doc) -> str:
    """A place of work said as where the holder started, with when or as what ("started at Northwind Bank last
    week", "just started at Monzo as a backend engineer"); not where an outing began ("we started at Nando's and
    then went bowling", "started the day at Pret")."""
    for verb in (t for t in doc if t.pos_ == "VERB" and t.lemma_.lower() == "start"):
        if any(c.dep_ == "dobj" or (c.dep_ == "conj" and c.pos_ == "VERB") for c in verb.children):
            continue
        if not (any(t.ent_type_ in ("DATE", "TIME") for t in verb.subtree)
                or any(c.dep_ == "prep" and c.lower_ == "as" for c in verb.children)):
            continue
        for place in (g for p in verb.children if p.dep_ == "prep" and p.lower_ == "at"
                      for g in p.children if g.dep_ == "pobj" and g.pos_ == "PROPN"):
            return _named_place(doc, place)
    return ""


_STATUSES = {"married": "married", "marry": "married", "engaged": "engaged", "engage": "engaged",
             "divorced": "divorced", "divorce": "divorced", "separated": "separated", "widowed": "widowed",
             "single": "single"}


def said_status(doc) -> str:
    """The relationship status said of the holder ("married Lukas in June", "I'm engaged to Tom"), not of
    others ("a married couple") or in a plan ("we want to get married"), else ""."""
    for token in doc:
        status = _STATUSES.get(token.lower_) or (_STATUSES.get(token.lemma_.lower()) if token.pos_ == "VERB" else None)
        if status and token.dep_ not in ("amod", "compound") and token.head.lemma_ not in ("want", "plan", "hope"):
            return status
    return ""


def said_diet(doc):
    """The diet word said of the holder ("so pescatarian now", "has been fully vegan"), not of a dish, else None."""
    return next((t for t in doc if _DIET.fullmatch(t.text) and (t.head.lower_ in ("diet", "lifestyle") or (
        t.dep_ not in ("amod", "compound") and (t.dep_ == "ROOT" or t.head.pos_ not in ("NOUN", "PROPN"))))), None)


def received(verb) -> bool:
    """The verb gives the speaker something: "my daughter gave me a Galaxy A54", "passed it down to me"."""
    speaker = ("me", "us", "them") if "user" in verb.doc.text.lower() else ("me", "us")  # "them": the user
    return verb.lemma_.lower() in ("give", "buy", "get", "send", "hand", "pass", "gift", "lend", "sell", "issue") and (
        any(c.dep_ in ("dative", "dobj") and c.lower_ in speaker for c in verb.children)
        or any(t.lower_ == "to" and verb in (t.head, t.head.head) and any(g.lower_ in speaker for g in t.children)
               for t in verb.subtree))


_ORDINAL = re.compile(r"\d+(?:st|nd|rd|th)|[a-z]*(?:first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth"
                      r"|eleventh|twelfth|teenth|ieth)")


def for_someone(doc) -> bool:
    """What the statement is about is for another person ("got my dad an iPhone", "bought a Tesla for my wife"):
    a gift, not the speaker's own thing."""
    root = next((t for t in doc if t.dep_ == "ROOT"), None)
    if root is None:
        return False
    objects = [c for c in root.children if c.dep_ == "dobj"]
    if len(objects) > 1 and (objects[0].lemma_.lower() in RELATIONS or objects[0].pos_ == "PROPN"):
        return True  # "bought their mum a tablet", parsed as two objects
    for person in objects:
        # "bought their mum a pixel 7", "got his sister an iphone 12": the thing, parsed as a modifier after them
        if person.lower_ in RELATIONS and any(
                t.i > person.i and t.dep_ in ("npadvmod", "appos") and t.pos_ in ("NOUN", "PROPN")
                and any(d.dep_ == "det" and d.lower_ in ("a", "an") for d in t.children)
                for t in (*root.children, *person.children)):
            return True
    if re.search(r"(?i)\bas an? (?:\w+ )?(?:present|gift)\b", doc.text):
        return True  # "ordered an iPhone 15, not for myself, but as a birthday present for my granddaughter"
    for child in root.children:
        if child.dep_ == "dative" and child.pos_ in ("NOUN", "PROPN"):
            return True
        # "for my wife", "for the kids", "for my dad's birthday"; not "works for Ubisoft"
        if child.dep_ in ("dative", "prep") and child.lower_ == "for" and any(
                g.dep_ == "pobj" and any(w.lemma_.lower() in RELATIONS or w.lower_ in RELATIONS for w in (g, *(
                    p for p in g.children if p.dep_ in ("poss", "amod")))) for g in child.children):
            return True
    # "an iPhone 15 for Jack's 16th birthday", "a Pixel 8 for Isla's sixteenth", "for my mãe's birthday": someone
    # else's day, wherever the parser hangs it
    return any(t.dep_ == "pobj" and t.head.lower_ == "for" and (
        t.lemma_.lower() in ("birthday", "anniversary", "graduation", "christmas") or _ORDINAL.fullmatch(t.lower_))
        and any(p.dep_ == "poss" and p.pos_ in ("PROPN", "NOUN") for p in t.children) for t in doc)
