"""What a statement says about whom: its attribute frame. Used by memories_reconcile (through its callers) on
new candidates and on stored memories of any source, so that "we just settled in Lisbon now" updates a
hand-written "Lives in Paris".

A statement is parsed with spaCy (`en_core_web_sm`): its holder (the speaker, or another person: "the user's
brother", "Emma"), its values (places, organisations, people, numbers, e-mail addresses, phone numbers, the
predicate's words) and whether it ends something ("left", "sold", "no longer"). Its values are masked
(attribute_kinds.MASKS), and the masked statement is compared by meaning, with the embedding model, with the
prototype frames of every attribute kind (attribute_kinds.KINDS, embedded once per process). No rule per
sentence shape: unseen phrasings land near the frame whose sense they share.
"""

from __future__ import annotations

import functools
import re
import threading
from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np

from extraction import attribute_kinds, clauses, holders, nlp, replacements, talk, vehicles
from extraction import statement_parts as parts
from extraction import statement_roles as roles
from extraction.attribute_kinds import BY_NAME, EXAMPLES, FAVOURITE_WORDS, KINDS, MAKES, MASKS, NAMED, ROLE_KINDS
from extraction.naming import beside_names, names, nested_names, said_plainly
from extraction.slots import SWITCHED_TO_ADDRESS, at_work
from integrations import embeddings

MIN_SCORE = 0.45  # below this cosine to the nearest prototype a statement fills no attribute
MASK_PENALTY = 0.08  # a masked statement is short and generic: its cosines run higher than said ones
MARGIN = 0.03  # the best single-valued kind must beat the best accumulating one by this much
COMPANION = 0.1  # a second single-valued frame within this much of the best is said too
CLAUSE_SCORE = 0.6  # the least score of a clause's frame: a clause is short, and many near no frame score 0.5
OCCUPATION_SCORE = 0.6  # the least score of the job title of a holder said to be an occupation
MAKE_SCORE = 0.7  # the least score of the car or phone of a holder said to have one of its makes (MAKES)
_LABELS = {"place": {"GPE", "LOC", "FAC"}, "org": {"ORG"}, "person": {"PERSON"}}
_NEEDED = {"place": "name", "org": "name", "person": "name", "number": "number"}  # kind of value -> what is said
SHAPED_SCORE = 0.35  # an e-mail address in a statement this near the e-mail frames is the holder's address
# a statement that fills a contact attribute without its value still names the contact ("text me on my new number")
_CONTACT = re.compile(r"(?i)\b(?:number|phone|mobile|cell|e-?mail|address|reach|contact)\b")


@dataclass(frozen=True)
class Frame:
    """What a statement says: `holder` ("" for the speaker, else who: "brother", "emma") has `attribute`
    (a KINDS name; "favourite colour" for favourites) with `value` (normalised words, "" when unsaid). `single`:
    the attribute holds one value at a time. `ended`: the statement says the value stopped ("left Acme").
    `score`: cosine of the masked statement to the nearest prototype frame."""

    attribute: str
    single: bool
    value: str
    holder: str
    ended: bool
    score: float
    replaces: str = ""  # what a replacement said outright retires ("swapped the Prius for ..."), its kind unread
    # the speaker's fact alone, in the statement's words for its holder ("The user works at Acme."): what still
    # holds when the statement is superseded for another of its attributes ("moved to Lyon for work at Acme")
    restated: str = ""
    # ended only by a denial in the present ("I'm not going vegan"): a fact that holds now, whatever else is current
    denied: bool = False


_lock = threading.Lock()


@functools.cache
def _prototypes(model: str) -> tuple[np.ndarray, np.ndarray, tuple[str, ...]]:
    """Every prototype frame embedded by `model` once per process, masked as statements are and with example
    values: (masked vectors, example vectors, kind of each)."""
    frames = [(kind.name, frame) for kind in KINDS for frame in kind.frames]
    vectors = np.asarray(embeddings.embed_texts([f.format(**MASKS) for _, f in frames]
                                                + [f.format(**EXAMPLES) for _, f in frames], model),
                         dtype=np.float32)
    return vectors[:len(frames)], vectors[len(frames):], tuple(name for name, _ in frames)


@functools.cache
def _frame_words(kind_name: str) -> frozenset[str]:
    """Words of a kind's own prototypes: frame words, never part of a value."""
    with _lock:
        docs = [nlp.pipeline()(frame.format(**MASKS)) for frame in BY_NAME[kind_name].frames]
    # and the words for the thing itself ("First phone I've bought myself": no model)
    return frozenset(t.lemma_.lower() for doc in docs for t in doc if t.pos_ in ("VERB", "AUX", "ADP")) | {
        *FAVOURITE_WORDS, "new", "phone", "handset", "smartphone", "device", "car", "vehicle", "title"}


def statement_frames(statements: Sequence[tuple[str, str]], *,
                     self_names: Sequence[str] = ()) -> list[list[Frame]]:
    """The frames of each (content, subject) statement, best first, none when it fills no attribute;
    `self_names`: names the speaker goes by (their subject "user" or "" is the speaker too)."""
    if not statements:
        return []
    names = {n.strip().lower() for n in self_names if n and n.strip()}
    model = embeddings.model_of(None)  # the configured one: frames of another model's cosines are not these
    keys = [(content, subject, frozenset(names), model) for content, subject in statements]
    todo = list(dict.fromkeys(key for key in keys if key not in _cache))
    if todo:
        try:
            classified = _classify([(c, s) for c, s, _, _ in todo], names, model)
        except embeddings.EmbeddingError:  # the provider is down: no frames (and none cached), the reconciler adds
            return [[] for _ in statements]
        for key, frames in zip(todo, classified, strict=True):
            _cache[key] = frames
            if len(_cache) > CACHE_SIZE:
                _cache.pop(next(iter(_cache)))
    return [list(_cache[key]) for key in keys]


CACHE_SIZE = 4096  # statements whose frames a process keeps (stored memories are classified again and again)
_cache: dict[tuple, list[Frame]] = {}


def _classify(statements: list[tuple[str, str]], names: set[str], model: str) -> list[list[Frame]]:
    statements = [(said_plainly(content), subject) for content, subject in statements]
    with _lock:  # spaCy's pipeline is not shared across threads
        docs = [nlp.pipeline()(content) for content, _ in statements]
        # a statement of clauses with subjects of their own is read clause by clause too ("I said goodbye to
        # Spotify, I'm at Klarna now"): the whole's frame blurs two senses
        pieces = [clauses.frame_clauses(doc, they_is="the user" if any(t.lower_ == "user" for t in doc) else "")
                  for doc in docs]
        docs += [nlp.pipeline()(piece) for found in pieces for piece in found]
    # a clause's proper-noun subject is somebody, not the speaker's name ("Pedro left, so I report to Aisha")
    statements += [(piece, "" if subject == "user" else subject)
                   for found, (_, subject) in zip(pieces, statements, strict=True) for piece in found]
    read = _read(docs, statements, names, model)
    rest = iter(read[len(pieces):])
    merged = [_merged(whole, [next(rest) for _ in found]) for whole, found in zip(read, pieces, strict=False)]
    return [[replace(f, restated=parts.restated(f, content)) if len(frames) > 1 else f for f in frames]
            for frames, (content, _) in zip(merged, statements, strict=False)]


def _merged(whole: list[Frame], per_clause: list[list[Frame]]) -> list[Frame]:
    """One frame per holder and attribute (per value, for one that accumulates): a clause's over the whole's, a
    later clause's that holds over an earlier one's ("I dropped paleo, now I eat Mediterranean"); what holds
    first, the speaker's before others'."""
    chosen: dict[tuple, Frame] = {}
    said = {f.attribute for f in whole}
    # a clause's frame of an attribute the whole speaks of needs only the whole's floor: the clause says whose it is
    valued = {(f.holder, f.attribute) for f in whole if f.value}  # a clause with no value keeps the whole's
    for frame in (f for frames in per_clause for f in frames if (f.value or (f.holder, f.attribute) not in valued)
                  and f.score >= (MIN_SCORE if f.attribute in said else CLAUSE_SCORE)):
        if frame.ended and frame.attribute not in said:
            continue  # an ending the whole does not speak of ("sold the Clio" is no employer that ended)
        key = (frame.holder, frame.attribute, "" if frame.single else frame.value)
        if key not in chosen or not frame.ended:
            chosen[key] = frame
    held = {(f.value, f.holder) for f in chosen.values() if f.value}
    for frame in whole:
        if frame.value and any(v == frame.value and h != frame.holder for v, h in held) or frame.single and any(
                f.attribute == frame.attribute and f.holder != frame.holder and f.value for f in chosen.values()):
            # the whole blurs whose the value is ("... met someone new, his name is Ryan"; "my wife started at
            # Deloitte as an auditor, so our evenings ...": the job is hers, as its clause says)
            continue
        chosen.setdefault((frame.holder, frame.attribute, "" if frame.single else frame.value), frame)
    return holders.stood_in(sorted(chosen.values(), key=lambda f: (f.ended, bool(f.holder), -f.score))
                            if per_clause else whole)


def _read(docs, statements: list[tuple[str, str]], names: set[str], model: str) -> list[list[Frame]]:
    """The frames of each parsed statement, by its own words."""
    parsed = [(doc, *holders.holder(doc, subject, names)) for doc, (_, subject) in zip(docs, statements, strict=True)]
    # masked ("I live in Xyz") and with its names kept ("I switched to a Samsung": the brand says phone)
    texts = [parts.masked(doc, token) for doc, _, token in parsed] + [
        parts.masked(doc, token, keep_names=True) for doc, _, token in parsed]
    vectors = np.asarray(embeddings.embed_texts(texts, model), dtype=np.float32)
    masked, examples, owners = _prototypes(model)
    said = vectors[len(statements):] @ examples.T
    named = np.asarray([BY_NAME[name].value in NAMED or BY_NAME[name].brands for name in owners])
    scores = np.where(named, np.maximum(vectors[:len(statements)] @ masked.T - MASK_PENALTY, said), said)
    return [_frames(doc, content, holder, token, row, owners, names)
            for (doc, holder, token), (content, _), row in zip(parsed, statements, scores, strict=True)]


def _frames(doc, content: str, holder: str, token, row: np.ndarray, owners: tuple[str, ...],
            self_names: set[str] = frozenset()) -> list[Frame]:
    """The best frame, and beside a single-valued one any other single-valued frame nearly as close whose value
    differs ("a product manager at Doctolib": a job title and an employer)."""
    best: dict[str, float] = {}
    for score, name in zip(row.tolist(), owners, strict=True):
        best[name] = max(best.get(name, -1.0), score)
    if roles.says_occupation(doc, token):  # "a sous chef at a small bistro": a job title, however unlike the frames
        best["job title"] = max(best["job title"], OCCUPATION_SCORE)
    for kind_name, makes in MAKES.items():
        if vehicles.made_by(doc, makes):
            best[kind_name] = max(best[kind_name], MAKE_SCORE)
    # the speaker's own name is no value of theirs ("Saturday works for Ann"; "I'm Ann" says nothing new)
    values = {kind: [(v, e) for v, e in found if holder or kind != "name" or v not in self_names]
              for kind, found in parts.values_of(doc, content).items()}
    values = {kind: found for kind, found in values.items() if found}
    if not holder and (name := roles.introduced(token)):  # "The user is Maya": their name, no partner
        return [Frame("name", True, name, holder, False, round(best["name"], 3))]
    if attribute_kinds.FAVOURITE.search(content) or attribute_kinds.BARE_FAVOURITE.search(content):
        # "favourite X" names its attribute outright, whatever the rest says; "X is my fav now" names none
        frame = _with_value(BY_NAME["favourite"], "favourite", best["favourite"], holders.whose_favourite(doc, holder),
                            token, doc, content, values)
        if swap := replacements.replaced(doc):  # "X have overtaken Y as my fave band"
            frame = replace(frame, value=swap[1], replaces=swap[0])
        return [frame]
    ranked = [(n, s) for n, s in sorted(best.items(), key=lambda item: -item[1]) if s >= MIN_SCORE]
    top_many = max((s for n, s in ranked if not BY_NAME[n].single), default=-1.0)
    # a plan, a wish, a gift, a report of someone else, one more of a kind: not what holds instead
    not_held = (parts.intended(doc) or roles.for_someone(doc) or clauses.reported(doc) or parts.added(doc)
                or parts.a_meal(doc))
    # what the statement says in passing, read once: a work vehicle, a trip, a place that is no home or employer
    work_vehicle, trip = vehicles.work_vehicle(doc), vehicles.drives_somewhere(doc)
    in_passing = roles.a_stay(doc) or roles.origin(doc) or roles.left_behind(doc)
    found: list[Frame] = []
    unsaid = None  # the score of a single-valued kind passed over for want of its value
    for name, score in ranked[:4]:
        kind = BY_NAME[name]
        if found and (not found[0].single or not kind.single or score < found[0].score - COMPANION):
            break
        if kind.single and (score < top_many + MARGIN or not_held):
            continue
        if kind.value in ("email", "phone") and kind.value not in values and (found or not _CONTACT.search(content)):
            continue
        if kind.value == "thing" and kind.single and name != "favourite" and parts.whereabouts(doc):
            continue  # "my car is in the shop again": where it is, not which
        if kind.cue and not re.search(kind.cue, content):
            continue
        if kind.single and work_vehicle:
            continue  # "my work van is a Ford Transit": no car, employer or manager of the holder's
        if (name == "car" and (trip or vehicles.hired(doc))) or (
                kind.single and kind.value in ("place", "org") and in_passing):
            continue
        if name.startswith("work ") and not at_work(content):
            continue  # "I've moved over to priya@rao.dev": the speaker's own address, said without a word for work
        if kind.single and kind.value in _NEEDED and _NEEDED[kind.value] not in values:
            unsaid = score if unsaid is None else unsaid
            continue  # "we moved again": a change with no value says nothing to update with
        if unsaid is not None and kind.single and score < unsaid - MARGIN:
            break  # "my wife got a job at a clinic": where she works, unnamed; no job title "job clinic town"
        # a second frame needs a name of its own kind ("a product manager at Doctolib": an ORG), unless the first
        # has no value ("my girlfriend Chloe and I have been together two years": a relationship status, and Chloe)
        if found and found[0].value and kind.value in _LABELS and not any(
                e.label_ in _LABELS[kind.value] for e in doc.ents):
            continue
        frame = _with_value(kind, name, score, holder, token, doc, content, values)
        if kind.value == "person" and frame.holder and frame.holder in frame.value.split() and any(
                t.lower_ in ("my", "our", "user", "me", "us") for t in doc):
            frame = replace(frame, holder="")  # "Ingrid leads my team", "Chloe dumped me": of the speaker's
        if kind.value == "person" and roles.no_person(doc, frame.value, in_passing):
            continue
        if ("@" in frame.value and kind.value != "email") or (
                name in MAKES and frame.value and not parts.a_model(frame.value, content, MAKES[name])):
            continue  # an address is no phone or place; "... handing the old one across": no make or model in it
        # a companion is a value of its own: not "clinical nurse" of the job title "clinical nurse manager"
        if found and (not frame.value or any(set(frame.value.split()) <= set(f.value.split()) for f in found)):
            continue
        if not frame.value and talk.UNCHANGED.search(content):
            continue  # "my personal number hasn't changed": no change without a value
        found.append(frame)
    if found and found[0].attribute == "relationship status" and (person := roles.joined_with(token)) and not any(
            f.attribute == "partner" for f in found):
        # "Paul and I are divorced now": the status, and whom it is with (as sure as the status)
        found.append(Frame("partner", True, person, holder, found[0].ended,
                           round(max(best["partner"], found[0].score), 3)))
    shaped = _shaped(doc, content, holder, token, best, found, values) if not not_held else []
    if swap := replacements.replaced(doc):  # "swapped the Prius for a Polestar 2": the new value, and what it retires
        if found and found[0].single and BY_NAME[found[0].attribute].value in ("thing", "person"):
            found[0] = replace(found[0], value=swap[1], replaces=swap[0])
        elif not found and not shaped:  # the kind is the replaced thing's, known to the reconciler
            shaped.append(Frame("", True, swap[1], holder, False, 0.0, replaces=swap[0]))
    return found + shaped + _named(doc, best, found + shaped)


def _shaped(doc, content: str, holder: str, token, best: dict[str, float], found: list[Frame],
            values) -> list[Frame]:
    """Values known by their shape that no frame took: an age beside another attribute ("a 34 year old nurse"),
    an e-mail address said with words the frames do not know ("I've moved over to priya@rao.dev"), the job and
    the employer of "a backend developer at Spotify" (the tagger may call Spotify a place)."""
    shaped = []
    if roles.says_occupation(doc, token):
        if not any(f.attribute == "job title" for f in found):
            shaped.append(_with_value(BY_NAME["job title"], "job title", max(best["job title"], OCCUPATION_SCORE),
                                      holder, token, doc, content, values))
        if (org := roles.occupation_place(doc, token)) and not any(f.attribute == "employer" for f in found):
            shaped.append(Frame("employer", True, org, holder, False, round(best["employer"], 3)))
    if (org := roles.work_place(doc)) and not any(f.attribute == "employer" for f in found + shaped):
        shaped.append(Frame("employer", True, org, holder, False, round(best["employer"], 3)))
    if (status := roles.said_status(doc)) and any(f.attribute == "partner" for f in found) and not any(
            f.attribute == "relationship status" for f in found + shaped):  # "married Lukas": the partner, and how
        shaped.append(Frame("relationship status", True, status, holder, False, round(best["relationship status"], 3)))
    if (diet := roles.said_diet(doc)) is not None and not any(f.attribute == "diet" for f in found):
        shaped.append(Frame("diet", True, diet.lower_, holder, parts.ends(parts.governing_verb(diet)),
                            round(best["diet"], 3)))
    if found and best.get("age", -1.0) >= MIN_SCORE and (age := parts.said_age(doc)) and not any(
            f.attribute == "age" for f in found):
        shaped.append(Frame("age", True, age, holder, False, round(best["age"], 3)))
    if "email" in values and not any(BY_NAME.get(f.attribute) and BY_NAME[f.attribute].value == "email"
                                     for f in found):
        name = "work email" if at_work(content) else "email"
        live = [v for v, ended in values["email"] if not ended]
        given_up = bool(verbs := parts.main_verbs(doc)) and all(map(parts.ends, verbs))  # "stopped using x@y.com"
        # one address given up and another given: a change of address, however the rest reads
        if live and (best[name] >= SHAPED_SCORE or len(live) < len(values["email"]) or given_up
                     or SWITCHED_TO_ADDRESS.search(content)):
            shaped.append(Frame(name, True, live[-1], holder, given_up, round(best[name], 3)))
    return shaped


def _named(doc, best: dict[str, float], found: list[Frame]) -> list[Frame]:
    """The speaker's roles named in passing, whatever else the statement says (and of whom, and whether it is a
    plan): "the user and their wife Hana love hiking", "my fiancee Emma and I are planning the wedding"."""
    named: list[Frame] = []
    for role, name in roles.named_roles(doc):
        kind = ROLE_KINDS[role]
        if not any(f.attribute == kind and not f.holder for f in found + named):
            named.append(Frame(kind, True, name, "", False, round(best[kind], 3)))
    return named


def _with_value(kind, name, score, holder, token, doc, content, values) -> Frame:
    attribute, ended, denied = name, False, False
    if kind.value == "thing":
        value = parts.predicate_words(doc, token, _frame_words(name))
        if name == "favourite" and (m := attribute_kinds.FAVOURITE.search(content)):
            attribute = f"favourite {attribute_kinds.favourite_of(m['what'])}".strip()
            # "Padel is my favourite sport": the value may be the subject
            value = " ".join(w for w in parts.predicate_words(doc, None, _frame_words(name)).split()
                             if w not in m["what"].lower().split() and w not in ("user", "my"))
            # "favourite band is The Cockatoo Sessions, been flogging their album": the name said, when the
            # parse lost it
            value = value or attribute_kinds.favourite_named(content, m.end("what"))
        verbs = parts.main_verbs(doc)
        # "traded in the old car, now on a Kia EV6": what is said to hold now holds
        now = any(t.lower_ == "now" and any(w.lower_ in value.split() for w in doc[t.i + 1:t.i + 5]) for t in doc)
        ended = bool(verbs) and all(parts.ends(v) for v in verbs) and not now or roles.changed_from(doc, value)
        denied = ended and all(parts.denies(v) for v in verbs)
    else:
        found = values.get("name" if kind.value in ("place", "org", "person") else kind.value, [])
        # 0: holds; 1: after "from" (the old value beside a new one, else the value: "an offer from Otto");
        # 2: under a verb that ends it
        live = [v for v, e in found if not e] or [v for v, e in found if e == 1]
        # of several names, one of the kind's own ("an engineer at Rolls-Royce in Derby": the ORG)
        own = {e.text.lower() for e in doc.ents if e.label_ in _LABELS.get(kind.value, ())}
        live = [v for v in live if v in own] or live
        live = parts.beside_reasons(doc, live) or live  # "... now since Aisha moved to Singapore": not Aisha
        if kind.value == "place":  # "moved to Lyon for work at Acme": the place the verb says; not "just off" it
            elsewhere = nested_names(doc) | beside_names(doc)
            live = [v for v in live if v not in elsewhere] or live
        elif kind.value == "org":  # "a nurse at the Croix-Rousse hospital in Lyon", "for Acme in Berlin": no town
            towns = {span.text.strip().lower() for span in names(doc) if span.root.head.lower_ in ("in", "near")}
            live = [v for v in live if v not in towns] or live
        value = live[-1] if live else (found[-1][0] if found else "")
        ended = bool(found) and not live
    return Frame(attribute, kind.single, value, holder, ended, round(float(score), 3), denied=denied)
