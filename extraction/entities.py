"""The named things of a sentence ("moved to Lisbon": a place, "work at Acme": an organisation, "my sister Ana":
a person, any other capitalised name a thing), by the words before them: a memory's `entities`."""

import re

from extraction.slots import CAP, DAYS, MONTHS, RELATIONS

_SKIP_PROPER = set(MONTHS) | set(DAYS) | set("""
I I'm I've I'd I'll The A An My Our OK During After Before When While Since On In At Last This Next Every Since
Yesterday Today Tomorrow Then So And But Also Just We We're
""".split())
_PROPER_RE = re.compile(rf"(?<![\w'])(?:{CAP})(?:\s+(?:(?:of|de|the|and)\s+)?{CAP})*")


def entities_in(sentence: str) -> dict[str, list[str]]:
    """Named things in a sentence, by the words before them: "moved to Lisbon" (place), "work at Acme" (an
    organisation), "my sister Ana" (a person); other capitalised names are things ("LGBTQ", "Home Alone")."""
    found: dict[str, list[str]] = {}
    for m in _PROPER_RE.finditer(sentence):
        value = m.group(0).rstrip(".,'")
        words = value.split()
        while words and words[0] in _SKIP_PROPER:
            words = words[1:]
        if not words or (m.start() == 0 and len(words) == 1 and not words[0].isupper()):
            continue  # a capital that only opens the sentence
        value = " ".join(words)
        before = sentence[max(0, m.start() - 40):m.start()].lower()
        if re.search(r"(?:work(?:s|ed|ing)? (?:at|for)|joined|job (?:at|with)|hired (?:at|by)|intern\w* at)\s+$",
                     before):
            kind = "organizations"
        elif re.search(r"\b(?:in|to|from|near|visit(?:ed|ing)?|around|through|across|at the|trip to)\s+(?:the\s+)?$",
                       before):
            kind = "places"
        elif re.search(rf"\b(?:{'|'.join(RELATIONS)})s?,?\s+$|\bwith\s+$|\bnamed\s+$|\bcalled\s+$", before):
            kind = "people"
        else:
            kind = "things"
        found.setdefault(kind, [])
        if value not in found[kind]:
            found[kind].append(value)
    return found
