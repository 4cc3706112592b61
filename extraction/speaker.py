"""How the speaker figures in a chat sentence, from the words alone: as its written subject ("I", "we", "my
daughter", "Last week I ..."), as an implied one ("Just got back from Peru", "Gonna continue my studies"), as an
object ("The group made me feel accepted"), or not at all. `with_implied_subject` writes the implied "I" in."""

from __future__ import annotations

import re

from extraction import nlp, talk
from extraction.attribute_kinds import FAVOURITE_WORDS, MAKES, ROLE_KINDS, ROLES
from extraction.english import NOWADAYS, PAST, SINGULAR, is_first_person
from extraction.slots import DIETS, OCCUPATIONS

# past participles that are not also past forms: a sentence led by one has an implied "I've"
PARTICIPLES = set("gone become begun grown taken given done seen written chosen driven eaten fallen forgotten gotten "
                  "ridden risen shown spoken sworn thrown worn".split())
_FINITE = set("is are was were 's 're has have had does did do can could will would should must might may makes "
              "made helps helped gives gave keeps kept brings brought reminds reminded means meant looks looked "
              "sounds seems feels felt gets got".split())
_IMPLIED = re.compile(
    r"(?i)^(?P<adv>(?:(?:just|finally|recently|also|still|really|totally|actually|currently|always|never)\s+)*)"
    r"(?P<verb>gonna|going to|been|can't wait|cannot wait|wish|hoping|planning|thinking|[a-z]+ed|[a-z]+ing|"
    + "|".join(sorted(PAST | PARTICIPLES, key=len, reverse=True)) + r")\b(?!')")
_NOT_IMPLIED = set("""
thing things everything nothing something anything king ring spring string sing during morning evening wedding
building ceiling according including regarding following amazing interesting exciting inspiring boring
interesting awesome red bed need feed seed speed weed shed hundred sacred wicked naked beloved
""".split())
_IMPLIED_IT = set("gives makes helps keeps reminds brings means lets shows takes feels looks sounds seems "
                  "gave made helped kept reminded brought meant let showed took".split())
_OBJECT_VERBS = set("keep make help give let bring remind take get drive inspire motivate push teach show "
                    "tell".split())
_FEELING_ED = set("excited interested tired thrilled stoked pumped amazed blessed scared worried bored surprised "
                  "impressed inspired obsessed relieved pleased delighted overwhelmed exhausted swamped".split())
_CLAUSE_BREAK = re.compile(r",\s+|;\s+|\s+(?:so|and|but)\s+")
_NOW_FRONT = re.compile(rf"(?i)^(?:{'|'.join(NOWADAYS)}|these past (?:few )?(?:weeks|months|years)),?\s+")


def speaker_in(sentence: str) -> str | None:
    """How the speaker is in the sentence: "implied" (no subject written), "subject", "object", or None."""
    words = sentence.split()
    if not words:
        return None
    if (front := _NOW_FRONT.match(sentence)) and sentence[front.end():].strip():
        # "These days Arctic Monkeys are my favourite band": the time said first is no subject ("these" is)
        return speaker_in(sentence[front.end():])
    if talk.STATE_LEAD.match(sentence):
        return "implied"
    implied = _IMPLIED.match(sentence)
    if implied and not is_first_person(words[0]):
        verb = implied["verb"].lower()
        gerund_subject = verb.split()[0].endswith("ing") and re.search(
            r"(?i)\b(?:is|isn't|are|was|wasn't|were|'s|has|makes|helps|keeps|gives|brings|can|will|reminds|means|"
            r"must|could|would|should|might|takes|feels|seems)\b|\b(?:\w+s|\w+ed|let|make|help|made|gave|give|keep|"
            r"kept) (?:me|my|us|our)\b", sentence)
        been_it = verb == "been" and re.match(
            r"(?i)(?:\w+\s+)*?been\s+(?:a|an|the|such|so|quite|too|ages|forever|hectic|crazy|tough|rough|great|good|"
            r"fun|nice|awesome|amazing|hard|wild|ok|okay|fine|alright|a while)\b", sentence)
        own = {w.strip(".,!?;:\"()").lower() for w in words}
        no_self = not any(is_first_person(w.strip(".,!?;:\"()")) for w in words)
        if gerund_subject and not own & SINGULAR:
            return None  # "Showing off our true selves is the best": a saying, not a statement about the speaker
        # a bare "-ing" phrase is mostly a wish or a feeling ("Looking forward to it!"; talk.CHATTER drops
        # "Sending hugs to Mel" before); one that names someone or something and has no verb of its own says what
        # the speaker is doing ("Seeing a guy named Omar", "Working at Tesco now")
        where_now = _FRAGMENT_NOW.search(sentence) and re.match(r"\s+(?:in|at|for|with|near|from)\s", sentence[
            implied.end():])
        # "doing keto rn", "seeing someone new now": what the speaker does these days
        # (not where they are heading: "looking forward to the weekend now", "heading home now")
        lately = _FRAGMENT_NOW.search(sentence) and not re.match(
            r"\s+(?:to|forward|for|at|in|on|back|out|off|up|home|over)\b", sentence[implied.end():]) and not nlp.finite(
            sentence)
        named = (re.search(r"\s(?!I\b)[A-Z]", sentence) or where_now or lately) and not re.search(
            r"(?i)\b(?:is|are|was|were|has|have|had|will|would|can|could)\b", sentence)
        if verb.endswith("ing") and no_self and not implied["adv"] and not named:
            gerund_subject = True
        if been_it or (verb in PARTICIPLES and re.match(r"\s+(?:are|is|was|were)\b", sentence[implied.end():])):
            return None  # "Been a busy week": it has been; "Gone are the days": inverted
        # "Founded in 1999, the company ...": a participle of the subject after the comma; but a past tense is the
        # speaker's own ("switched to a Samsung, the iPhone died")
        participial = no_self and re.search(r"(?:ed|ing|en)$", verb) and (after := re.search(
            r",\s+(?:[A-Z]\w*|the|a|an)\b", sentence)) and _has_verb(sentence[after.start() + 1:]) and not any(
            t.lower_ == verb and (t.tag_ == "VBD" or t.nbor(1).lower_ in ("to", "into", "over"))
            for t in nlp.parse(sentence)[:-1])
        if not gerund_subject and not been_it and not participial and verb not in _NOT_IMPLIED:
            return "implied"
    for index, word in enumerate(words):
        core = word.strip(".,!?;:\"()").lower()
        if not is_first_person(word.strip(".,!?;:\"()")):
            continue
        prefix = [w.strip(".,!?;:\"()").lower() for w in words[:index]]
        subject_form = core in ("i", "i'm", "im", "i've", "ive", "i'd", "i'll", "we", "we're", "we've", "we'd",
                                "we'll", "my", "our") or (core == "me" and index == 0)
        if not prefix or (subject_form and (words[index - 1].endswith(",") or not (set(prefix) & _FINITE))):
            return "subject" if subject_form or not prefix else None
        verb_before = (set(prefix) & _FINITE or any(re.fullmatch(r"[a-z]+(?:s|ed)", w) for w in prefix[1:])
                       or any(w.endswith("'s") for w in prefix)
                       or prefix[-1] in _OBJECT_VERBS)
        if core in ("me", "my", "myself") and verb_before and prefix[0] not in _IMPLIED_IT and prefix[0] not in (
                "it", "that", "this", "these", "those", "they", "he", "she", "there", "what", "which", "so"):
            return "object"
        break
    # "Keto wasn't for me, I'm fasting now", "Oskar got promoted so Ingrid leads our team": a later clause's
    return next(("subject" for m in _CLAUSE_BREAK.finditer(sentence) if _subject_in(sentence[m.end():])), None)


def _subject_in(clause: str) -> bool:
    return not _IMPLIED.match(clause) and speaker_in(clause.strip()) == "subject"


def with_implied_subject(sentence: str) -> str:
    if talk.STATE_LEAD.match(sentence):
        return f"I {sentence[0].lower()}{sentence[1:]}"
    match = _IMPLIED.match(sentence)
    adverbs, verb, rest = match["adv"].lower(), match["verb"], sentence[match.end():]
    low = verb.lower()
    if low in ("gonna", "going to"):
        return f"I'm {adverbs}going to{rest}"
    if low == "having" and re.match(r"\s+(?:just |now |finally )?\w+(?:ed|en|ne|wn|pt|nt|lt|ght|un|ung)\b", rest):
        return f"I've {adverbs}{rest.lstrip()}"  # "Having spent forty years in the Midlands": I've spent them
    if low == "been" or low in PARTICIPLES:  # "gone full veggie now": "I've gone ..."
        return f"I've {adverbs}{low}{rest}"
    if low.endswith("ing") or low in _FEELING_ED:
        return f"I'm {adverbs}{low}{rest}"
    if low in _DONE_TO:  # "promoted to tech lead today": I got promoted
        return f"I {adverbs}got {low}{rest}"
    return f"I {adverbs}{low}{rest}"


# what is done to the speaker, said without "got": "promoted to tech lead", "hired as a designer"
_DONE_TO = set("promoted hired fired diagnosed transferred appointed elected laid dumped".split())


def _has_verb(text: str) -> bool:
    return any(t.tag_ in ("VBZ", "VBP", "VBD", "MD") for t in nlp.parse(text))


# a chat fragment with no subject and no verb of its own that says where or what the speaker is now: "on an
# iPhone now", "back to eating meat", "45 today", "still at Google": an implied "I'm"
_FRAGMENT_LEAD = set("on at in with into onto off over out back still now officially finally".split())
_FRAGMENT_NOW = re.compile(r"(?i)\b(?:now|today|anymore|any more|these days|nowadays|again|officially|as of|"
                           r"since \w+|atm|at the moment|currently|rn|no longer)\b")
_STATES = set("single married engaged divorced separated widowed retired unemployed sober pregnant freelance "
              "self-employed".split())
_DIET = re.compile(rf"(?i)(?:{DIETS})")
_AGE_AFTER = set("today now yesterday since as years yrs".split())


def implied_be(sentence: str) -> bool:
    """Whether `sentence` (in which the speaker is not written) opens with such a fragment."""
    head = re.split(r"\s*[,;:]\s+|\s+[-\u2013\u2014]+\s+", sentence.strip(), maxsplit=1)[0]
    doc = nlp.parse(head)
    if len(doc) < 2 or any(t.tag_ in ("VBZ", "VBP", "VBD", "MD") or t.dep_ in ("nsubj", "expl") for t in doc):
        return False
    # "fully vegetarian since january", "not vegan anymore"
    state = next((t for t in doc if t.pos_ != "ADV" and t.lower_ not in ("not", "no")), None)
    if state is not None and state.i <= 2 and (state.lower_ in _STATES or _DIET.fullmatch(state.text)):
        return bool(_FRAGMENT_NOW.search(head))
    first = doc[0]
    if first.lower_ in ("currently", "still", "now") and doc[1].lower_ in ("a", "an"):  # "currently a junior dev"
        return True
    if first.like_num:  # "45 today", "thirty now": an age
        return doc[1].lower_ in _AGE_AFTER
    return first.lower_ in _FRAGMENT_LEAD and (first.lower_ in ("back", "still") or bool(_FRAGMENT_NOW.search(head)))


# what a speaker calls themselves in passing: a job, a diet, being a parent ("as a nurse, what should I pack?")
_SELF_NOUNS = OCCUPATIONS | {"vegan", "vegetarian", "pescatarian", "mom", "mum", "dad", "parent", "mother",
                             "father"}


_DESCRIBED = re.compile(r"(?i)\bas an?\b|^\W*being\b")


def described(sentence: str) -> str:
    """What the speaker says they are in passing, inside a question or a remark that is not itself a statement:
    "is it normal that as a junior data analyst i spend ...?" -> "I'm a junior data analyst"; "being 29 and still
    no clue how taxes work is embarrassing" -> "I'm 29". A past ("as a kid I loved ...") says nothing now; else ""."""
    if not _DESCRIBED.search(sentence):  # parsed only when the words are there (every clause passes here)
        return ""
    doc = nlp.parse(sentence)
    for token in doc:
        if token.lower_ == "as" and token.dep_ == "prep" and (noun := _self_noun(token)) is not None:
            verb = token.head
            speaker = any(c.dep_ == "nsubj" and c.lower_ in ("i", "we") for c in verb.children)
            if speaker and verb.tag_ != "VBD" and not any(c.tag_ == "VBD" for c in verb.children):
                return f"I'm {' '.join(t.text for t in noun.subtree)}"
        if token.lower_ == "being" and token.i == doc[0].i and token.dep_ in ("csubj", "advcl"):
            said = next((c for c in token.children if c.dep_ in ("acomp", "attr")), None)
            if said is not None and (said.like_num or said.lower_ in _SELF_NOUNS):
                return f"I'm {' '.join(t.text for t in said.subtree)}"
    return ""


def _self_noun(preposition):
    noun = next((c for c in preposition.children if c.dep_ == "pobj"), None)
    if noun is None or noun.lower_ not in _SELF_NOUNS or not any(
            c.dep_ == "det" and c.lower_ in ("a", "an") for c in noun.children):
        return None
    return noun


def headed(sentence: str) -> str:
    """A sentence after a heading said as the speaker's statement: "Quick context: I'm based in Tampere" without
    its heading, "role: Associate PM" as "My role is Associate PM"; any other sentence as it is."""
    heading = talk.LABEL.match(sentence)
    if heading is None or len(heading["label"].split()) > 6 or (
            talk.NEW_LABEL.match(sentence) or speaker_in(heading["label"]) or talk.YOU.search(heading["label"])):
        return sentence
    if speaker_in(heading["rest"]) is not None:
        return heading["rest"]
    if talk.LABEL_ATTRIBUTE.search(heading["label"]) and not nlp.finite(heading["rest"].split(",")[0]):
        return f"My {heading['label'].lower()} is {heading['rest']}"
    return sentence


_ROLE_NAMED = re.compile(rf"(?i:\bmy (?:new )?(?P<role>{'|'.join(sorted(ROLE_KINDS, key=len, reverse=True))}))"
                         r",? (?P<name>[A-Z][a-z]+(?: [A-Z][a-z]+)?)\b")


def role_named(clause: str) -> str:
    """The speaker's partner or manager named in passing in a request ("help me plan a surprise for my husband
    Marco"), said as a statement ("My husband is Marco"); their car or phone named so ("how do I stop my Pixel 7
    killing the sync?": "My phone is a Pixel 7"), else ""."""
    if match := _ROLE_NAMED.search(clause):
        return f"My {match['role'].lower()} is {match['name']}"
    for match in _MODEL_NAMED.finditer(clause):
        kind = next((k for k, makes in MAKES.items() if match["make"].lower() in makes), None)
        if kind and (match["number"] or len(match["model"].split()) > 1):  # a model, not only a make ("my Ford")
            article = "an" if match["model"][0].lower() in "aeiou" else "a"
            return f"My {'car' if kind == 'car' else 'phone'} is {article} {match['model']}"
    return ""


_MODEL_NAMED = re.compile(r"\bmy (?:new )?(?P<model>(?P<number>(?:19|20)\d\d )?(?P<make>[A-Za-z]+)"
                          r"(?: (?:[A-Z0-9][\w+\-]*|mini|pro|max|plus|ultra|lite)){0,3})")


# words that describe something as one's own when chat leaves out whose ("new boss is ...", "fav food is ...")
_OWN_WORDS = {"new", "current", "old", "usual", "former", "latest", *FAVOURITE_WORDS}
# the subject of "is" said bare is the speaker's when it names what a person has one of: "boss is Greg Haller",
# "title's ops manager now"
_OWN_BARE = ROLES | {"title", "job", "car", "phone", "number", "email", "address", "diet"}
_BARE_IS = re.compile(r"(?i)^(title|number|email|address|diet)'s\b")  # words that rarely own something
_WHOSE = re.compile(r"\bthat(?:'s| is) (?:[A-Z][a-z]+)\b(?!'s)(?! (?:number|phone|mobile))")
_NOT_OWNED = {"year", "years", "day", "week", "month", "morning", "era", "chapter", "beginning", "start", "me",
              "normal"}


def bare_subject(sentence: str) -> str:
    """`sentence` with "my" before a subject said bare in chat, a described thing with no article or owner ("fav
    food is pizza", "gary got sacked, new boss is Priti": the speaker's), else ""."""
    if not (_OWN_WORDS | _OWN_BARE) & set(re.findall(r"[\w-]+", sentence.lower())):
        return ""  # parsed only when one of the words is said
    if _WHOSE.search(sentence):
        return ""  # "Number for the rota is 086 447 2210, that's Gary": whose it is, said
    sentence = _BARE_IS.sub(lambda m: f"{m[1]} is", sentence)  # "title's ops manager now": is, not a possessive
    doc = nlp.parse(sentence)
    for token in doc:
        start = token.left_edge
        # the subject of "is", or any noun the sentence opens with ("new boss starting monday")
        # "the new flat in Gdansk has a tiny kitchen": said of one's own as well
        the_new = start.i == 0 and start.lower_ == "the" and any(c.lower_ == "new" for c in token.children)
        if (token.tag_ == "NN" and (token.dep_ == "nsubj" and token.head.lemma_ in ("be", "'s") or start.i == 0
                                    or the_new)
                and token.lower_ not in _NOT_OWNED and (start.i == 0 or doc[start.i - 1].text in (",", ";"))
                and (the_new or not any(c.dep_ in ("det", "poss") for c in token.children))
                and (any(c.dep_ in ("amod", "compound") and c.lower_ in _OWN_WORDS for c in token.children)
                     or (token.lower_ in _OWN_BARE and token.i == 0 and token.dep_ == "nsubj"))):
            rest = sentence[start.idx + 4:] if the_new else sentence[start.idx:]
            if token.lower_ in _OWN_BARE and token.i == 0:  # "Number is ...": a word, not a name
                rest = rest[0].lower() + rest[1:]
            return f"{sentence[:start.idx]}my {rest}"
    return ""


# a comma splice: two statements with their own subjects joined by a comma ("I'm Lena, I just moved to Utrecht";
# "we have a cat called Pixel, she's so lazy"), unless the first is subordinate ("when I was small, I ...")
SPLICE = re.compile(r",\s+(?=(?:(?i:i|i'm|i've|i'd|im)|we|We|we're|we've|he|He|he's|she|She|she's|they|They|"
                     r"they're|my|My|our|Our)\s"
                     # or a name saying how it is: "we moved to Seattle, Denver got too expensive" (a reason, and
                     # not the speaker's: the piece is dropped, and its name is no value of the move)
                     r"|[A-Z][a-z]+ (?:is|was|got|gets|has|had|became|seemed|seems|felt|feels)\b"
                     # or the speaker's own act, said without "I", after what happened to a thing: "the polo got
                     # written off, replaced it with a Mazda 2"
                     r"|(?:bought|replaced|swapped|switched|traded|upgraded|got|picked up|went for|started|joined)\s)")
# "As a consultant I ..." is who the speaker is, no condition
SUBORDINATE = re.compile(r"(?i)^(?:if|when|whenever|because|although|though|since|while|as(?! an? )|after|before|"
                          r"once|unless|until|even if|even though|so that|now that)\b")


def splices(piece: str) -> list[str]:
    """A piece cut at its comma splices into statements that stand alone; a remark before one stays with it."""
    parts = SPLICE.split(piece)
    if len(parts) == 1 or SUBORDINATE.match(parts[0]):
        return [piece]
    if speaker_in(parts[0]) is None:  # a remark before ("it's great, I ..."): it stays with the statement after it
        if speaker_in(parts[1]) == "implied":  # what the speaker did about it: "..., replaced it with a Mazda 2"
            parts[1] = with_implied_subject(parts[1])
        return [f"{parts[0]}, {parts[1]}"] if len(parts) == 2 else [f"{parts[0]}, {parts[1]}", *parts[2:]]
    return parts


# the joints of a sentence whose parts may stand alone: ", maybe you'd like that", ", so I just joined ..."
JOINT = re.compile(r",\s+(?:(?:and|but|so|plus|maybe|though|anyway)\s+)?"
                    r"|\s+(?:and|but|so)\s+"
                    r"(?=(?:(?:now|then|also|since then|these days)\s+)?"
                    r"(?i:i|i'm|im|i've|i'd|my|our|we|we're|we've)\s)")


# "As a junior copywriter I mostly write ...", "being 29, I ...": who the speaker is, said before what they do
LED = re.compile(r"(?i)(?:as an?|being) [^,]*?(?:,\s*|\s+(?=(?:i|i'm|we)\s))")


def own_parts(sentence: str) -> list[str]:
    """The parts of a sentence dropped as a whole (a remark to the other person, a pronoun-led comment) that are the
    speaker's own statements: "I made a cake the other day, maybe you'd like it" keeps "I made a cake the other
    day"; "You mentioned the shelter, so I joined a fire brigade" keeps "I joined a fire brigade". A sentence
    opening with a condition ("If you want, I can ...") is left whole: its parts do not stand alone."""
    parts = [part.strip() for part in JOINT.split(sentence) if part and part.strip()]
    if len(parts) < 2 or SUBORDINATE.match(sentence):
        return []
    own = [part for part in parts if len(part.split()) > 2 and not SUBORDINATE.match(part)
           and speaker_in(part) not in (None, "implied") and not talk.YOU.search(part)]
    # "As a consultant I explain ..., and your analogy ...": who they are, and what they do, apart
    return [said for part in own for said in led_apart(part)]


def led_apart(part: str) -> list[str]:
    led, aside = LED.match(part), described(part)
    return [aside, part[led.end():]] if led and aside else [part]
