"""What the conversation so far tells about a message: the place "here"/"there" means and who "we" are.

`Setting(turns)` reads the earlier turns (oldest first, "Speaker: text" or plain text) lazily: a message with no
"here", "there" or "we" costs nothing, and parses are cached across messages (extraction.nlp).
- place: the last place named (spaCy GPE/LOC), in the message before the word, else in the turns, newest first;
- companion: the last partner or family the speaker named in their own turns ("my wife Ana" -> "Ana", "my
  husband" -> "their husband", "my kids" -> "their family"; the other party's "my husband" is theirs); None when
  the conversation named nobody, and "we" is then the speaker.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import cached_property

from extraction import nlp
from extraction.slots import DAYS, MONTHS

# a first name, accents allowed ("Inês", "Zoë"), one more for a double name ("Anne-Marie", "Mary Jo")
PERSON_NAME = r"[A-Z\u00C0-\u00DE][^\W\d_]+(?:[-'][^\W\d_]+)?(?: [A-Z\u00C0-\u00DE][^\W\d_]+)?"
_PARTNERS = ("wife|husband|partner|spouse|boyfriend|girlfriend|fiance|fiancé|fiancee|fiancée|hubby|bf|gf")
_FAMILY = ("family|kids|children|parents|son|daughter|sons|daughters|baby|twins")
_COMPANION = re.compile(rf"\b(?i:my|our) (?:(?:new|dear|lovely|amazing) )?(?:(?P<partner>(?i:{_PARTNERS}))"
                        rf"(?:,? (?P<name>{PERSON_NAME}))?|(?P<family>(?i:{_FAMILY})))\b")
_PARTED = re.compile(r"(?i)\b(?:broke up|split(?: up)?|separated|divorced|parted ways|ended things|dumped)\b")
_CALENDAR = {*MONTHS, *DAYS, "May"}
_SPEAKER = re.compile(r"^[\w .'\-]{1,40}:\s+")
# "here"/"there" as a place: not "there is", "here's", "hang in there", "there for me", "take me there" or "I'm
# here to help" (idioms that name no place)
_LOCATIVE = re.compile(
    # "out there" only where one lives ("I live out there"), not "it's out there"
    r"(?i)(?<!\bin )(?:(?<=\blive out )|(?<=\blives out )|(?<=\bliving out )|(?<!\bout ))"
    r"(?<!\bfrom )(?<!\bup )(?<!\bget )(?<!\bme )(?<!\bus )(?<!\bhim )(?<!\bher )"
    r"(?<!\bthem )(?<!\byou )"
    r"(?<!'m )(?<!'re )(?<!\bam )(?<!\bare )(?<!\bis )(?<!\bbe )"
    r"(?P<lead>\b(?:over|back|down|right)\s+)?\b(?P<word>here|there)\b"
    r"(?!'|\s+(?:is|are|was|were|isn't|aren't|wasn't|weren't|will|won't|would|has|have|had|hasn't|haven't|must|"
    r"might|may|can|could|should|seems?|seemed|used|goes|comes|you go|and (?:here|there)|for (?:me|you|us|him|"
    r"her|them|each other|one another))\b)")
_MOTION = re.compile(r"(?i)\b(?:been|mov\w*|went|go|goes|going|gone|came|come|coming|flew|fly\w*|travel\w*|drove|"
                     r"driv\w*|relocat\w*|get|got|getting|arriv\w*|head\w*|back|return\w*|trip|visit\w*)\s+$")


class Setting:
    """The earlier turns of a conversation, asked about only when a sentence needs them."""

    def __init__(self, turns: Sequence[str] = (), speaker: str | None = None):
        self.turns = [_SPEAKER.sub("", turn or "") for turn in turns]
        # whose turns can name the speaker's companion: their own, a "User:" turn, or a turn with no name
        own = {(speaker or "").strip().lower(), "user", "me", ""}
        self.own_turns = [text for turn, text in zip(turns, self.turns, strict=True)
                          if (_SPEAKER.match(turn or "") or [""])[0].rstrip(": \t").lower() in own]

    @cached_property
    def _places(self) -> list[str]:
        return [place for turn in self.turns for place in nlp.places(turn)]

    def place(self, before: str = "") -> str | None:
        """The place last named in `before` (the message up to the word), else in the turns."""
        here = nlp.places(before) if before.strip() else []
        found = here or self._places
        return found[-1] if found else None

    def companion(self, message: str = "") -> str | None:
        """Who "we" adds to the speaker, as the rewrite says it: "Ana", "their wife", "their family"; or None."""
        found = None
        for text in [*self.own_turns, message]:
            for match in _COMPANION.finditer(text):
                if match["partner"]:
                    found = match["name"] or f"their {match['partner'].lower()}"
                else:
                    found = "their family"
            if found and _PARTED.search(text) and re.search(rf"\b{re.escape(found)}\b", text):
                found = None  # "Lena and I broke up in April": "we" is no longer the two of them
        return found

    def resolve_places(self, sentence: str, before: str = "") -> str:
        """"here"/"there" as the place they stand for ("moved here" -> "moved to Porto", "school here" ->
        "school in Porto"), or dropped when no place was named; "here in Porto" keeps only the name."""
        if not re.search(r"(?i)\b(?:here|there)\b", sentence):
            return sentence

        def replace(m: re.Match) -> str:
            after = sentence[m.end():]
            named = re.match(r"\s*,?\s*(?:in|at|to)\s+(?P<w>[A-Z]\w+)", after)
            if named and named["w"] not in _CALENDAR:
                return ""  # "here in Lisbon": the name is already there
            said = before + " " + sentence[:m.start()]
            if re.search(r"(?i)\bwork(?:s|ed|ing)?\s+$", sentence[:m.start()]) and (
                    workplace := re.findall(r"\bat ((?:the )?[A-Z][\w&'-]*(?: [A-Z][\w&'-]*)*)", said)):
                return f"at {workplace[-1]}"  # "a shift at Brewhaus Coffee ... I work there on weekends"
            place = self.place(said)
            if place is None:
                return ""
            lead = "back " if (m["lead"] or "").strip().lower() == "back" else ""
            if re.search(r"(?i)\b(?:from|in|to|at|near|of|around|outside|across|through|leaving|left)\s+$",
                         sentence[:m.start()]):
                return place
            return f"{lead}to {place}" if _MOTION.search(sentence[:m.start()]) else f"{lead}in {place}"

        out = _LOCATIVE.sub(replace, sentence)
        return re.sub(r"\s{2,}", " ", re.sub(r"\s+([,.;!?])", r"\1", out)).strip()
