"""News told as the speaker's own and then given to someone else: "Just got a red Mazda CX-5! Okay, my roommate Priya
did", "Just joined Sahyadri Fintech as a data engineer - my elder brother, I mean". `retold` says the news of whom
it is about, so that nothing of the speaker's changes."""

from __future__ import annotations

import re

from extraction.slots import RELATIONS

# whom: a relation ("my sister Carla") or anyone of the speaker's described ("our head of maths")
_RELATIONS = "|".join(sorted(RELATIONS, key=len, reverse=True))
_RELATION = re.compile(rf"(?i)\b(?:{_RELATIONS})\b")
_WHO = rf"(?:my|our) (?:(?:\w+ )?(?:{_RELATIONS})(?: (?-i:[A-Z][a-z]+))?|(?:[\w-]+ ){{0,3}}[\w-]+)"
# the correction in the next sentence: "Well, my sister Carla did", "Okay, my roommate Priya did, but ..."
_AFTER = re.compile(rf"(?i)(?P<news>[^.!?]+)(?P<end>[.!]+)\s+(?:(?:well|okay|ok|oh|actually|wait|sorry|jk|lol|haha)"
                    rf",?\s+)*(?:not me,?\s+)?(?:it was\s+)?(?P<who>{_WHO}) did"
                    r"(?=\s*(?:[,.!;]|$|but\b|and\b))[,.!;]?\s*(?P<next>\w?)")
# the correction inside the sentence: "... as a data engineer - my elder brother, I mean"
_INSIDE = re.compile(rf"(?i)(?P<news>[^.!?]+?)\s*[-\u2013\u2014,]+\s*(?P<who>{_WHO}),? I mean\b(?P<end>[.!?]*)\s*")
_LED = re.compile(r"^(?P<lead>\s*(?:[\w' ]{1,25}:\s*)?)(?P<rest>.*)$", re.DOTALL)  # "Big news: started at ..."
_FIRST = {"I've": "has", "I'm": "is", "I'd": "had", "I": ""}


def _theirs(news: str, who: str) -> str:
    """`news` with `who` as its subject: in place of "I", or before a sentence said without one."""
    if mine := re.search(r"\b(?:I've|I'm|I'd|I)\b", news):
        verb = _FIRST[mine[0]]
        who = who[0].upper() + who[1:] if not news[:mine.start()].strip() else who
        return f"{news[:mine.start()]}{who}{' ' + verb if verb else ''}{news[mine.end():]}"
    led = _LED.match(news)
    rest = led["rest"]
    subject = who[0].upper() + who[1:] if not led["lead"].strip() else who
    return f"{led['lead']}{subject} {rest[:1].lower()}{rest[1:]}"


def _whom(who: str) -> str:
    """Whom the news is about: a relation as the speaker's ("my sister Carla"), anyone else described as no one of
    theirs ("our head of maths" is "the head of maths": their phone is not the speaker's)."""
    return who if _RELATION.search(who) else re.sub(r"(?i)^(?:my|our) ", "the ", who)


def retold(text: str) -> str:
    """`text` with news the speaker then gives to someone else said of them."""
    text = _INSIDE.sub(lambda m: f"{_theirs(m['news'], _whom(m['who']))}{m['end'] or '.'} ", text)
    return _AFTER.sub(lambda m: f"{_theirs(m['news'], _whom(m['who']))}{m['end']} {m['next'].upper()}", text).strip()
