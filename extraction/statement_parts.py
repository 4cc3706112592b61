"""What a parsed statement holds, read from its spaCy parse for extraction.attributes: its values (names, numbers,
e-mail addresses, phone numbers, the predicate's words), whether its verb ends something, and the statement masked
for comparison with the attribute kinds' prototype frames. Whom it is about is extraction.holders'."""

from __future__ import annotations

import re

from core.number_words import in_digits
from extraction.attribute_kinds import BY_NAME, MASKS
from extraction.english import third_person
from extraction.naming import NAME_ROLES, names, time_word
from extraction.nlp import known_word, number_end, number_value
from extraction.slots import EMAIL, PHONE
from extraction.statement_roles import left_thing, received

STATES = {"live", "work", "be", "drive", "study", "date", "own", "use", "report", "eat", "stay", "rent"}
INTENTS = {"learn", "want", "plan", "hope", "try", "wish", "consider", "need", "intend", "dream", "think", "daydream",
           "imagine", "fantasise", "fantasize", "wonder"}
_MULLING = {"talk", "toy", "mull", "debate", "chat"}  # "talking about moving", "toying with going vegan"
_SEARCHING = {"look", "hunt", "browse", "search", "view", "scout", "tour"}
_DWELLINGS = {"house", "flat", "apartment", "home", "place", "property", "condo", "rental", "bungalow"}
_MAYBE = {"might", "may", "could", "would", "should"}
_SPEAKING = {"i", "we", "they", "user"}  # the extractor says "they" for the user
_TAKEN = {"accept", "take", "sign"}
ENDING = {"leave", "quit", "sell", "resign", "stop", "divorce", "retire", "lose", "drop", "ditch", "cancel", "end",
          "dump", "die", "flog", "scrap", "conclude", "separate"}
_PHONE = re.compile(rf"(?<![\w@]){PHONE}(?![\w@])")
_EMAIL = re.compile(EMAIL)
_NUMBER = {"CARDINAL", "QUANTITY"}
TIME_LABELS = {"DATE", "TIME"}
_AGE = re.compile(r"(?i)^\d{1,3} (?:years?|yrs?) old$")
_AGE_UNITS = {"year", "yr", "years", "yrs"}
_FILLER = {"now", "just", "again", "currently", "recently", "finally", "officially", "still", "also", "really",
           "new", "old", "today", "yesterday", "ago", "since", "anymore", "longer", "day", "days", "lately", "used"}


def said_age(doc) -> str:
    """A number said as an age ("a 34 year old nurse", "29 years old"), else ""."""
    return next((number_value(t) for t in doc if t.like_num and _AGE.match(doc[t.i:t.i + 3].text)), "")


def main_verbs(doc) -> list:
    """The verbs that say what happened: the root, its conjuncts, and a "so" clause or one with a subject of its
    own ("the Civic died so I bought a Mazda", "I dropped paleo, these days I follow ...")."""
    return [t for t in doc if t.pos_ in ("VERB", "AUX") and (t.dep_ in ("ROOT", "conj") or (
        t.dep_ == "advcl" and any(c.lower_ == "so" or c.dep_ in ("nsubj", "nsubjpass") for c in t.children)))]


def governing_verb(token):
    while token.head.i != token.i and token.pos_ not in ("VERB", "AUX"):
        token = token.head
    return token


def ends(verb) -> bool:
    """The value under this verb no longer holds: an ending verb ("left", "sold"), a negation, or a past state
    ("worked at", "used to live in", "was a waitress": a state verb in the past tense, not a change)."""
    # "before" alone or "before that", not "in the week before 3 July" (a date the extractor wrote)
    words = {c.lower_ for c in verb.children if c.dep_ in ("advmod", "neg") or (
        c.dep_ == "prep" and {g.lower_ for g in c.children} & {"that", "then", "this"})}
    past_state = (verb.tag_ == "VBD" and verb.lemma_.lower() in STATES  # not "drove home a Kia": it came
                  and not any(c.dep_ == "auxpass" or c.lower_ == "home" for c in verb.children)
                  # "my first day at Asda was in 2019": when it began, not that it ended
                  and not any(c.dep_ == "nsubj" and any(g.lower_ in ("first", "1st") for g in c.children)
                              for c in verb.children))
    used_to = verb.head.lemma_ == "use" and verb.dep_ == "xcomp"
    broke_up = verb.lemma_.lower() in ("break", "split") and any(c.dep_ == "prt" and c.lower_ == "up"
                                                                for c in verb.children) or (
        verb.lemma_.lower() == "split" and not any(c.dep_ == "dobj" for c in verb.children)) or (  # "Chloe and I split"
        verb.lemma_.lower() == "call" and any(c.dep_ == "prt" and c.lower_ == "off" for c in verb.children)) or (
        verb.lemma_.lower() == "trade" and any(c.dep_ in ("prt", "prep") and c.lower_ in ("in", "off")
                                               for c in verb.children)
        and not any(c.lower_ == "for" for c in verb.children)) or (  # "traded in my Civic for a Mazda": a swap
        verb.lemma_.lower() == "chuck" and any(c.lower_ in ("in", "out") for c in verb.children)) or (
        verb.lemma_.lower() == "hand" and any(c.dep_ == "prt" and c.lower_ in ("in", "back") for c in verb.children)
        and any(c.dep_ == "prep" and c.lower_ == "at" for c in verb.children))  # "handed my badge back at Rolls"
    # "Tom and I are done" (parsed as a passive "done"), "we're over"
    over = (verb.lower_ == "done" and any(c.dep_ == "auxpass" for c in verb.children)) or (
        verb.lemma_ == "be" and any(c.dep_ in ("acomp", "advmod") and c.lower_ in ("done", "over", "through", "gone")
                                    and c.i == verb.i + 1 for c in verb.children)) or (
        verb.lemma_ == "be" and any(c.dep_ == "attr" and re.match(r"ex\b|ex-", c.lower_) for c in verb.children)) or (
        verb.lemma_ == "be" and any(c.lower_ == "behind" and any(g.lower_ in ("us", "me", "user") for g in c.subtree)
                                    for c in verb.children))  # "Oslo is behind us"
    # "I don't eat meat": what they avoid holds; "I don't eat meat anymore" ends (the words above)
    avoids = verb.lemma_.lower() in ("eat", "drink")
    if received(verb) or (verb.lemma_.lower() == "end" and any(c.dep_ == "prt" for c in verb.children)):
        return False  # "my uncle sold me his old Honda Jazz": the speaker's now; "ended up getting a Tucson"
    habitual = verb.tag_ == "VBZ" and not any(c.dep_ == "aux" for c in verb.children)  # "the battery dies by noon"
    return ((verb.lemma_.lower() in ENDING and not habitual) or broke_up or over
            or (any(c.dep_ == "neg" for c in verb.children) and not avoids)
            or past_state or used_to
            or bool(words & {"anymore", "longer", "before", "previously", "formerly"})
            or verb.lower_ in ("left", "sold", "quit"))


def _last_day(token) -> bool:
    """A name after "my last (final) day at": the value it ends."""
    at = token.head
    day = at.head if at.head.lemma_ == "day" else token.doc[at.i - 1] if at.i else at  # "last day at X is ..."
    return token.dep_ == "pobj" and at.lower_ == "at" and day.lower_ in ("day", "days") and any(
        c.lower_ in ("last", "final") for c in day.children)


def intended(doc) -> bool:
    """The statement says what the speaker wants, learns or plans, not what holds ("learning to drive a truck",
    "thinking about moving to Portland", "considering a move to Leuven")."""
    root = next((t for t in doc if t.dep_ == "ROOT"), None)
    wishes = [t for t in doc if t.lemma_.lower() in ("love", "like") and any(c.dep_ == "xcomp" for c in t.children)]
    if any(c.dep_ == "aux" and c.lower_ in _MAYBE for t in [root] * (root is not None) + wishes for c in t.children):
        return True  # "we might move to Bergen one day", "I would love to live there one day, maybe when I retire"
    if any(t.dep_ == "mark" and t.lower_ == "if" and t.head.dep_ == "advcl" and any(
            c.dep_ == "nsubj" and c.lower_ in _SPEAKING for c in t.head.children) and any(
            c.dep_ == "aux" and c.lower_ in _MAYBE for c in t.head.head.children) for t in doc):
        return True  # "what would happen if we moved to Kelsey Harbour": the speaker's what-if
    if any(t.lemma_.lower() == "offer" and t.pos_ == "NOUN" and any(c.lower_ in ("from", "at") for c in t.children)
           and t.head.lemma_.lower() not in _TAKEN for t in doc):
        return True  # "I received an offer from Coldridge Group": no job until it is taken
    if any(t.pos_ == "VERB" and t.lemma_.lower() in (*INTENTS, *_MULLING) and any(
            c.dep_ == "prep" and any(g.dep_ == "pcomp" and g.pos_ == "VERB" for g in c.children) for c in t.children)
           for t in doc):
        return True  # "we keep talking about moving to Whitby one day, the kids love the beach": wherever it is said
    if any(t.pos_ == "VERB" and (t.lemma_.lower() in _SEARCHING and any(
            g.lemma_.lower() in _DWELLINGS for c in t.children if c.dep_ in ("prep", "dobj") for g in (c, *c.children))
            or (t.lemma_.lower() == "take" and any(c.lower_ == "out" and c.dep_ in ("prt", "advmod", "prep")
                                                  for c in t.children))) for t in doc):
        return True  # "been looking at houses in Lennox Head", "took a Volvo XC40 out": a search, a try
    return root is not None and root.lemma_.lower() in INTENTS and any(
        c.dep_ in ("xcomp", "dobj") or (c.dep_ == "prep" and any(g.dep_ == "pcomp" and g.pos_ == "VERB"
                                                                  for g in c.children))
        for c in root.children)


def denies(verb) -> bool:
    """The verb denies its value in the present, and no more ("I'm not going vegan", "isn't a manager"): not "not
    vegan anymore", "didn't", "used to"."""
    return any(c.dep_ == "neg" for c in verb.children) and verb.tag_ not in ("VBD", "VBN") and not any(
        c.lower_ in ("anymore", "longer", "more", "did", "was", "were", "had") for c in verb.children)


def a_meal(doc) -> bool:
    """The statement tells of something eaten or drunk once ("he ate butter with a spoon yesterday"): an event, no
    diet ("used to eat meat", "doesn't eat pork" say how someone eats)."""
    root = next((t for t in doc if t.dep_ == "ROOT"), None)
    return root is not None and root.lemma_.lower() in ("eat", "drink") and root.tag_ == "VBD" and not any(
        c.dep_ == "neg" or c.lower_ in ("never", "always", "usually") for c in root.children)


def _ages(doc) -> set[int]:
    """Where the tagger took an age for a time: "40 years old", a bare "46", a number after "turned" ("turned
    seventy-one last week"): its tokens' indices."""
    found = {t.i for ent in doc.ents if ent.label_ in TIME_LABELS and (
        _AGE.match(text := ent.text.strip()) or (text.isdigit() and len(text) <= 3) or (
            re.fullmatch(r"[a-z]+(?:[ -][a-z]+)?", text.lower()) and in_digits(text))) for t in ent}
    for t in doc:
        if t.like_num and t.i and doc[t.i - 1].lower_ in ("turned", "turning", "turn"):
            found.update(range(t.i, number_end(t)))
    return found


def values_of(doc, text: str) -> dict[str, list[tuple[str, bool]]]:
    """Values by kind ("name", "number", "email", "phone"), each with whether it ended (2: its verb ends it, 1:
    it follows "from", the old value when a new one is said: "moved from Paris to Lyon")."""
    found: dict[str, list[tuple[str, bool]]] = {}
    for span in names(doc):
        verb = governing_verb(span.root)
        behind = span.root.dep_ == "pobj" and left_thing(verb)  # "left my umbrella in Paris": Paris holds
        out_of = span.root.head.lower_ == "of" and span.root.head.head.lower_ == "out"  # "moved out of Leeds"
        # "not at Ikea anymore, I'm at Lidl now": the place denied, whatever verb the parse hangs it on
        denied = re.search(rf"(?i)\b(?:not|no longer) (?:\w+ )?(?:at|in|with|for) {re.escape(span.text)}\b", text)
        ended = 2 if (ends(verb) and not behind) or _last_day(span.root) or out_of or denied else 1 if (
            span.root.head.lower_ == "from" and span.root.dep_ == "pobj") else 0
        found.setdefault("name", []).append((span.text.strip().lower(), ended))
    for match in _EMAIL.finditer(text):
        # "I don't check a@b.cz anymore": an address its verb ends (2)
        token = next((t for t in doc if t.idx <= match.start() < t.idx + len(t.text)), None)
        ended = 2 if token is not None and len(text) == len(doc.text) and _denied(governing_verb(token)) else 0
        found.setdefault("email", []).append((match.group(0).lower(), ended))
    for match in _PHONE.finditer(text):
        digits = re.sub(r"\D", "", match.group(0))
        if len(digits) >= 6:
            found.setdefault("phone", []).append((digits, False))
    ages = _ages(doc)  # "turned 35 on Tuesday": the tagger may read the age into the date
    nums = [t for t in doc if t.like_num and (t.ent_type_ not in TIME_LABELS or t.i in ages)
            and not _PHONE.search(t.text) and not (t.lower_ == "one" and t.i not in ages)  # "how to run one"
            and not (t.dep_ == "nummod" and t.head.lemma_.lower() not in _AGE_UNITS)  # "two kids" counts kids
            and not (t.dep_ == "pobj" and t.head.lower_ in _CLOCK)]  # "put the kids to bed at 8": a time
    if nums:  # the first that holds: "turned 35, so I'm no longer 34"
        # as a name's: 2 when denied ("no longer 34"); 1 under a verb that ends it ("it was my 35th birthday":
        # the number still says the age, as "from" does a name)
        said = [(number_value(t), 2 if _denied(verb := governing_verb(t)) else 1 if ends(verb) else 0) for t in nums]
        found["number"] = [next((value for value in said if not value[1]), said[0])]
    return found


_CLOCK = {"at", "by", "around", "until", "till", "before", "after"}
_REASONS = {"because", "cause", "cos", "coz", "cuz", "though", "although"}


def _denied(verb) -> bool:
    return any(c.dep_ == "neg" or (c.dep_ == "advmod" and c.lower_ in ("anymore", "longer")) for c in verb.children)


def masked(doc, holder_token, *, keep_names: bool = False) -> str:
    """The statement with its subject said as "I" ("the user's" as "my"), its values masked and its time words
    left out."""
    subject = set(holder_token.subtree) if holder_token is not None else set()
    name_starts = {t.i: span.start for span in names(doc) for t in span}
    ages = _ages(doc)
    self_they = holder_token is not None and holder_token.lower_ == "user"
    # a reason says why, not what: "relocated to Porto because my company opened an office there" is a move
    reason = reasons(doc) | remark(doc)
    # and a verbless tail after the last comma says where or how, not what: "I live in Szeged, near the university"
    comma = max((t.i for t in doc if t.text == ","), default=None)
    if comma is not None and comma >= 3 and comma + 1 < len(doc) and (
            doc[comma + 1].pos_ == "ADP" or doc[comma + 1].lower_ == "no") and not any(
            t.pos_ in ("VERB", "AUX") for t in doc[comma:]):
        reason |= set(doc[comma:])
    out = []
    for token in doc:
        if token in reason and len(doc) - len(reason) > 3:
            continue
        if token in subject:
            if token.i == holder_token.i:
                out.append("I")
            continue
        if token.lower_ == "user" and token.dep_ == "poss":
            out.append("my")
            continue
        if holder_token is None and token.lower_ == "user" and token.dep_ in ("dobj", "pobj"):
            out.append("me")  # "Sarah manages the user now": the speaker's, said as they would
            continue
        if self_they and token.lower_ in ("they", "their"):  # the extractor's "I" in a later clause
            out.append("I" if token.lower_ == "they" else "my")
            continue
        if (token.lower_ == "the" and token.head.lower_ == "user") or (
                token.lower_ == "'s" and token.head.lower_ == "user"):
            continue
        if (time_word(token) and token.i not in ages) or token.lower_ in ("now", "again"):
            continue
        if token.like_email:
            out.append(MASKS["thing"])
        elif _PHONE.fullmatch(token.text) or (token.like_num and token.ent_type_ not in ("ORDINAL",)):
            if not out or out[-1] != MASKS["number"]:
                out.append(MASKS["number"])
        elif token.i in name_starts and not keep_names:
            if name_starts[token.i] == token.i:
                out.append(MASKS["name"])
        else:
            out.append(token.text)
    return " ".join(out)


def reasons(doc) -> set:
    """The tokens of a clause that says why ("because my company opened an office there") or concedes something
    ("though she frets about the till"), or what someone else did since ("I report to Kevin now since Aisha
    moved to Singapore")."""
    return {t for token in doc if token.dep_ == "advcl" and any(
        c.dep_ == "mark" and (c.lower_ in _REASONS or c.lower_ == "since" and any(
            s.dep_ == "nsubj" and s.pos_ == "PROPN" for s in token.children)) for c in token.children)
        for t in token.subtree}


def whereabouts(doc) -> bool:
    """The statement says where the holder's thing is, not what it is: "my car is in the shop again", "the user's
    phone is at the repair place"."""
    root = next((t for t in doc if t.dep_ == "ROOT"), None)
    return root is not None and root.lemma_ == "be" and not any(
        c.dep_ in ("attr", "acomp") for c in root.children) and any(c.dep_ == "prep" for c in root.children) and any(
        c.dep_ == "nsubj" and c.pos_ == "NOUN" and any(p.dep_ == "poss" for p in c.children) for c in root.children)


def beside_reasons(doc, values: list[str]) -> list[str]:
    """The values not named only in a clause of why (`reasons`)."""
    why = {t.i for t in reasons(doc)}
    return [v for v in values if not any(t.i in why for t in doc if t.lower_ == v.split()[0])]


def remark(doc) -> set:
    """A clause said of the statement after a comma ("... fully vegan, which means no eggs or cheese any more"):
    a comment on what holds, not what holds."""
    return {t for token in doc if token.dep_ == "relcl" and token.i > 1 for t in token.subtree
            if any(c.lower_ == "which" and c.i == token.left_edge.i and doc[c.i - 1].text == ","
                   for c in token.children)}


def predicate_words(doc, holder_token, exclude: set[str]) -> str:
    """The predicate's content words ("product manager", "vegan", "team lead", "tesla model 3"): the value of a
    "thing" kind; words under a verb that ends something ("sold the Corolla") are left out when another verb
    says what holds now ("... and bought a Tesla")."""
    subject = set(holder_token.subtree) if holder_token is not None else set()
    verbs = main_verbs(doc)
    live_verb = any(not ends(v) for v in verbs)
    aside = remark(doc)
    words = []
    for token in doc:
        named = token.i > 0 and token.text[:1].isupper() and (token.pos_ == "PROPN" or token.dep_ in NAME_ROLES)
        if (token in subject or token in aside or (token.is_stop and not named) or  # a name may be a common word: "Go"
                token.is_punct or time_word(token)
                or any(c.dep_ == "neg" for c in token.children)  # "Go, not chess": chess is what it is not
                or (token.pos_ == "NUM" and not (token.dep_ == "nummod" and token.i > token.head.i))  # "iPhone 15"
                or token.pos_ in ("AUX", "ADP", "DET", "PRON", "CCONJ", "PART", "SCONJ")
                or (token.pos_ == "VERB" and token.dep_ in ("ROOT", "conj", "advcl", "relcl", "auxpass"))
                or token.lower_ in _FILLER or token.lower_ == "user" or (token.lemma_.lower() in exclude and not any(
                    c.dep_ == "compound" for c in token.children))):  # a frame's word naming a job: "tech lead"
            continue
        if live_verb and ends(governing_verb(token)):
            continue
        words.append(token.lemma_.lower())
    return " ".join(dict.fromkeys(words))


def a_model(value: str, content: str, makes: frozenset[str]) -> bool:
    """Whether a car's or phone's value names one: a make, or a word said capitalised, with a number or unknown to
    the dictionary ("Jazz", "S9", "mk4")."""
    for word in value.split():
        if word in makes or not known_word(word) or any(c.isdigit() for c in word):
            return True
        if any(m.start() and not m[0].islower() for m in re.finditer(rf"(?i)\b{re.escape(word)}", content)):
            return True
    return False


_RESTATED = ("place", "org", "person", "number")  # kinds whose value is a name or a number, said as it was


def restated(frame, content: str) -> str:
    """The fact a frame of a name or a number states alone ("The user works at Acme."), kept when the statement it
    came from is superseded for another attribute (memories.planning); "" for any other frame."""
    kind = BY_NAME.get(frame.attribute)
    if (kind is None or not kind.single or kind.value not in _RESTATED or kind.cue or frame.holder or frame.ended
            or not frame.value):
        return ""
    said = re.search(r"(?i)(?<!\w)" + r"\s+".join(map(re.escape, frame.value.split())) + r"(?!\w)", content)
    subject = re.match(r"The user|[A-Z][\w-]*(?='s\b|\s)", content)
    if not said or not subject:
        return ""
    # the speaker's, said after someone else's name: "Desmond Okafor took over as the user's manager"
    who = "The user" if re.search(r"(?i)\bthe user\b", content) else subject[0]
    return f"{third_person(kind.frames[0].format(**{kind.value: said[0]}), who)}."


def added(doc) -> bool:
    """The statement adds to what held ("passed the CKA exam too", "I also speak Dutch", "got a cat as well"): one
    more, not one instead."""
    root = next((t for t in doc if t.dep_ == "ROOT"), None)
    if root is None or any(c.dep_ == "prt" for c in root.children):
        return False  # "gave up fish too", "cut out sugar as well": one more thing given up, a change
    return any(c.dep_ == "advmod" and c.lower_ in ("too", "also") for c in root.children) or bool(
        re.search(r"(?i)\bas well\b(?! as)", doc.text))
