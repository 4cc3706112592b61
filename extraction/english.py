"""Small English grammar for the dialogue extractor: a first-person sentence rewritten in the third person.

"I love horses and my daughter rides them" -> "Caroline loves horses and their daughter rides them". The first
mention of the speaker is their name ("The user" when unknown) with the verb agreeing ("I am" -> "is", "I have"
-> "has", "I love" -> "loves", "I was" -> "was", "I've been" -> "has been", "I'd" -> "would"/"had"); later
mentions are the singular "they"/"them"/"their"/"themselves", whose verbs need no change. "We"/"us" are the
speaker with the companion the conversation named ("Ana and Tom", "Ana and their wife"), else the speaker alone,
verbs agreeing ("we live" -> "Ana lives"); "our" is the speaker's.

Word lists, not a parser: the word after "I" (past any adverbs) is its verb in nearly every chat sentence, and
only its present tense changes.
"""

from __future__ import annotations

import re

MODALS = set("can can't cannot could couldn't would wouldn't should shouldn't must mustn't might mightn't may "
             "will won't shall need'nt gonna".split())
# past forms that are not "-ed", and present forms identical to their past (left as they are: "I read" -> "read")
PAST = set("""
went grew got had was were spent took left began became made met bought ran saw wrote taught learnt built quit
came did found lost won sold drove flew gave knew said told thought broke fell felt kept put set sat stood swam
spoke understood caught brought fought chose ate drank forgot held hurt led lent let meant paid rode rose sang
shot shut slept stole struck threw wore woke dealt dreamt burnt spelt hid hit cut cost beat bit blew dug drew
froze hung lay lit overcame sent shook sank spun tore underwent withdrew read spread bet upset snuck split
""".split())
PARTICIPLES = PAST | set("""
been gone done seen taken given known written heard thought become come run begun grown won eaten fallen
forgotten broken chosen driven flown ridden spoken stolen sung swum worn woken gotten shown drawn
""".split())
NOT_PAST_ED = set("need feed bleed breed speed seed proceed succeed exceed embed shred wed weed heed".split())
ADVERBS = set("""
really absolutely totally just also actually still truly genuinely honestly definitely seriously personally
kinda kind sorta quite generally usually always now currently never recently finally mostly mainly primarily
often sometimes even already almost nearly probably maybe once ever rarely hardly barely luckily finally
then soon again last first
""".split())
_NOT_ADVERB_LY = {"fly", "apply", "reply", "rely", "supply", "ally", "bully", "rally", "tally", "multiply", "imply",
                  "family", "assembly", "butterfly", "dragonfly", "firefly", "anomaly", "monopoly", "jelly", "belly",
                  "italy", "july", "lily", "holly", "sally", "emily", "molly", "kelly", "polly", "dolly"}

_PART = re.compile(r"^([^\w']*)([\w'\-]*\w|\w?)([^\w]*)$")
# the present said as a span of time ("these days I drive a Toyota"): a time, never a subject or a stay's dates
NOWADAYS = ("these days", "nowadays", "lately", "recently")
# the speaker's own words for themselves, alone and with others
SINGULAR = frozenset({"i", "i'm", "im", "i've", "ive", "i'd", "i'll", "me", "my", "mine", "myself"})
PLURAL = frozenset({"we", "we're", "we've", "we'd", "we'll", "us", "our", "ours", "ourselves"})
_FIRST = SINGULAR | PLURAL


def is_first_person(word: str) -> bool:
    """`word` (as written, apostrophes normalised) is one of the speaker's own pronouns ("US" is a country)."""
    return word.lower() in _FIRST and word != "US"


def is_adverb(word: str) -> bool:
    low = word.lower()
    return low in ADVERBS or (low.endswith("ly") and len(low) > 4 and low not in _NOT_ADVERB_LY)


def is_past(word: str) -> bool:
    """A past tense or a past participle ("moved", "went", "been")."""
    low = word.lower()
    return low in PARTICIPLES or (low.endswith("ed") and low not in NOT_PAST_ED)


def is_past_tense(word: str) -> bool:
    """A past tense ("moved", "went", "split"); not a participle that is also a present ("come", "run")."""
    low = word.lower()
    return low in PAST or (low.endswith("ed") and low not in NOT_PAST_ED)


def third_singular(verb: str) -> str:
    """The verb after a first-person subject, for a third-person one: love -> loves, am -> is, go -> goes;
    past tense, modals and anything that is no present verb unchanged."""
    low = verb.lower()
    special = {"am": "is", "have": "has", "do": "does", "don't": "doesn't", "dont": "doesn't", "haven't": "hasn't",
               "havent": "hasn't", "go": "goes", "wanna": "wants to", "gotta": "has to", "be": "is", "are": "is",
               "were": "was", "aren't": "isn't", "weren't": "wasn't"}
    if low in special:
        return special[low]
    if low in MODALS or is_past_tense(low) or not re.fullmatch(r"[a-z]+(?:-[a-z]+)?", low) or len(low) < 2:
        return verb
    if low.endswith("ing") and _progressive(low):
        return f"is {verb}"  # chat's "I trying to fit workouts in", "feeling ancient": is, not "tryings"
    if re.search(r"(?:s|sh|ch|x|z|o)$", low):
        return verb + "es"
    if re.search(r"[^aeiou]y$", low):
        return verb[:-1] + "ies"
    return verb + "s"


def _progressive(word: str) -> bool:
    """A verb's -ing form ("trying"), not a verb whose own form ends so ("bring", "sing")."""
    from lemminflect import getAllLemmas

    return any(lemma != word for lemma in getAllLemmas(word).get("VERB", ()))


def _parts(token: str) -> tuple[str, str, str]:
    match = _PART.match(token)
    return (match[1], match[2], match[3]) if match else ("", token, "")


def _next_verb(words: list[str], start: int) -> int | None:
    """Index of the verb that follows a subject at words[start - 1]: past up to three adverbs, None when a comma,
    a conjunction or the sentence's end comes first."""
    for index in range(start, min(start + 4, len(words))):
        pre, core, post = _parts(words[index])
        if pre or not core:
            return None
        if core.lower() in ("and", "or", "too", "myself", "alone", "both", "who", "that"):
            return None
        if is_adverb(core) and index < len(words) - 1 and not post:
            continue
        return index
    return None


# "we" words read as the speaker alone when the conversation named no companion
_WE_ALONE = {"we": "i", "we're": "i'm", "we've": "i've", "we'd": "i'd", "we'll": "i'll", "us": "me", "our": "my",
             "ours": "mine", "ourselves": "myself"}


_TOGETHER = re.compile(r"(?i)\b(?:we|we're|we've|we'd|we'll|us) (?:\w+ )?(?:all|both)\b|\btogether\b|\beach other\b|"
                       r"\bone another\b|\bas a (?:team|group|family|couple)\b")


def third_person(sentence: str, name: str = "The user", *, companion: str | None = None) -> str:
    """`sentence`, written by the speaker, with the speaker as `name` (first mention) and "they" after; "we" is
    `name` and `companion` ("Tom", "their wife") when given, else `name` alone."""
    # "my kids and I painted" -> "I and my kids painted" -> "Ana and their kids painted"
    sentence = re.sub(r"\b([Mm]y|[Oo]ur)((?: [\w'\-]+){1,3}?) and I\b(?!')",
                      lambda m: f"I and {m[1].lower()}{m[2]}", sentence)
    if companion and re.search(rf"(?i)\bwith (?:my|our)\b[^,.;]*\b{re.escape(companion.split()[-1])}\b", sentence):
        companion = None  # "we moved with my husband Piet": the speaker, and Piet said where he belongs
    words = sentence.split(" ")
    plural = companion is None and _TOGETHER.search(sentence)  # "we both", "we all": not the speaker alone
    if plural:
        companion = "others"
    group = f"{name} and {companion}" if companion else name
    named = False
    agreed: int | None = None  # where in `out` a verb was made to agree with the speaker's name
    out: list[str] = []
    i = 0
    while i < len(words):
        pre, core, post = _parts(words[i])
        low = core.lower().replace("\u2019", "'")
        if not core or not is_first_person(core):
            out.append(words[i])
            i += 1
            continue
        if companion is None:
            low = _WE_ALONE.get(low, low)
        here = _name_here(name, first=not out) if not named else None
        group_here = _name_here(group, first=not out) if not named else None
        replacement = low
        follow: tuple[int, str] | None = None  # (index, new word) for the verb after the pronoun
        if low == "i":
            compound = i > 0 and words[i - 1].lower() == "and" or (i + 1 < len(words) and words[i + 1] == "and")
            if here:
                replacement = here
                verb = _next_verb(words, i + 1)
                if verb is not None and not post and not compound:
                    follow = (verb, third_singular(_parts(words[verb])[1]))
            else:
                replacement = "they"
                verb = _next_verb(words, i + 1)
                if verb is not None and not post:
                    be = {"am": "are", "was": "were", "wasn't": "weren't", "wasnt": "weren't"}
                    core_verb = _parts(words[verb])[1]
                    follow = (verb, be.get(core_verb.lower(), core_verb))
        elif low in ("i'm", "im"):
            replacement = f"{here} is" if here else "they're"
        elif low in ("i've", "ive"):
            replacement = f"{here} has" if here else "they've"
        elif low == "i'll":
            replacement = f"{here} will" if here else "they'll"
        elif low == "i'd":
            verb = _next_verb(words, i + 1)
            had = verb is not None and _parts(words[verb])[1].lower() in PARTICIPLES | {"never", "already"}
            replacement = (f"{here} had" if had else f"{here} would") if here else "they'd"
        elif low in ("me",):
            replacement = here or "them"
        elif low in ("my", "our"):
            replacement = f"{here}'s" if here else "their"
        elif low in ("mine", "ours"):
            replacement = f"{here}'s" if here else "theirs"
        elif low in ("myself", "ourselves"):
            replacement = "themselves"
        elif low in ("we", "us"):
            replacement = group_here or ("they" if low == "we" else "them")
        elif low in ("we're", "we've", "we'd", "we'll"):
            verb = {"we're": "are", "we've": "have", "we'd": "would", "we'll": "will"}[low]
            replacement = f"{group_here} {verb}" if group_here else "they" + low[2:]
        if low not in ("myself", "ourselves"):
            named = True
        out.append(pre + replacement + post)
        i += 1
        if follow is not None:
            index, new = follow
            while i < index:
                out.append(words[i])
                i += 1
            vpre, vcore, vpost = _parts(words[index])
            if low == "i" and here:
                agreed = len(out)
            out.append(vpre + _same_case(vcore, new) + vpost)
            i += 1
    if agreed is not None:
        _agree_coordinated(out, agreed)
    return " ".join(out)


# verbs that often follow "and" with the same subject: "I joined a band and have been practising"
COORDINATED = set("""
have haven't do don't am love like enjoy want need hope plan try work live play go make take get feel spend teach
run keep use write cook bake paint draw sing dance train volunteer study watch visit practice practise miss think
know believe appreciate
""".split())
_NEW_SUBJECT = {"they", "he", "she", "it", "we", "you", "there", "that", "which", "who", "when", "because", "so",
                "if", "while", "since", "they're", "it's", "he's", "she's", "we're", "i"}


def _agree_coordinated(out: list[str], start: int) -> None:
    """After "<name> loves ...", a verb joined by "and"/"but"/"or" with no subject of its own agrees too (not
    past a comma, an infinitive's "to" or a new subject)."""
    index = start + 1
    while index < len(out) - 1:
        core = _parts(out[index])[1].lower()
        if core in _NEW_SUBJECT or core[:1].isupper() or core == "to" or out[index].endswith((",", ";", ":")):
            return
        if core in ("and", "but", "or"):
            verb = _next_verb(out, index + 1)
            if verb is not None:
                vpre, vcore, vpost = _parts(out[verb])
                if vcore.lower() in COORDINATED:
                    out[verb] = vpre + third_singular(vcore) + vpost
        index += 1


def _name_here(name: str, *, first: bool) -> str:
    """The name as it reads at this place: "The user" opens a sentence, "the user" inside one."""
    if name.startswith("The user"):
        return name if first else "t" + name[1:]
    return name


def _same_case(old: str, new: str) -> str:
    return new.upper() if old.isupper() and len(old) > 1 else new


def has_verb(sentence: str) -> bool:
    """A clause rather than a fragment ("My full support."): a subject pronoun, an auxiliary or modal, a past
    form, a third-person "-s" form after the first word, or a common verb."""
    words = [_parts(w)[1].lower() for w in sentence.split()]
    for index, word in enumerate(words):
        if word in ("i", "i'm", "im", "i've", "i'd", "i'll", "we", "we're", "we've", "we'd", "we'll") or "'s" in word:
            return True
        if word in MODALS or word in PAST or word in _AUXILIARIES or is_past(word):
            return True
        if word in COORDINATED and (not index or words[index - 1] != "to"):
            return True
        if (index and re.fullmatch(r"[a-z]+[^s]s", word) and word not in _NOT_VERBS
                and words[index - 1] not in _BEFORE_NOUN):
            return True
    return False


_AUXILIARIES = set("is are was were be been has have had do does did isn't aren't wasn't weren't hasn't doesn't "
                   "didn't".split())
_BEFORE_NOUN = set("my our their the a an his her your its some many all these those to of for with and in on at "
                   "new old few more other off about from into like by up out over".split())
_NOT_VERBS = set("this his its as us yes less unless always sometimes perhaps ones others parents friends kids "
                 "things days years thanks news series class glass business process".split())
