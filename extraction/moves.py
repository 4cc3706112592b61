"""Where the speaker lives, said in news of a move (for extraction.chat_text.normalise): "here in Malton", "we're in
Alstonville now", "it's Potsdam now instead of Kreuzberg", "now we are in Matosinhos", "so its Mount Albert for us
now"."""

from __future__ import annotations

import re

CAPITALISED = r"(?-i:[A-Z])[\w'-]+(?: (?-i:[A-Z])[\w'-]+)?"  # a name: one or two capitalised words
# news of a move: what makes "we're in X now" a home, not a visit
_MOVED = re.compile(r"(?i)\b(?:unpacked|moved|the move|new (?:house|place|flat|home)|got the keys|shifted house|"
                    r"relocated|signed a lease)\b|\b(?-i:[Ll]eft [A-Z])\w+ for good\b")


def said(text: str) -> str:
    """`text` with where the speaker lives now said as "I live in X", when it is news of a move."""
    if not _MOVED.search(text):
        return text
    # "here in Malton": where the speaker lives now
    if here := re.search(rf"\bhere in (?P<place>{CAPITALISED})", text):
        text = f"{text.rstrip()} I live in {here['place']} now."
    # "we're in Alstonville now", "so it's Potsdam now instead of Kreuzberg": where they live, after the move
    text = re.sub(rf"\b(?:we're|we are|I'm|I am|it's|it is) (?:in )?(?P<new>{CAPITALISED}) now,? instead of "
                  rf"(?P<old>{CAPITALISED})", r"I moved from \g<old> to \g<new>", text)
    text = re.sub(rf"\b(?:(?P<we>we're|we are)|I'm|I am|(?P<it>it's|it is)) (?P<in>in )?(?={CAPITALISED} now\b)",
                  lambda m: "we live in " if m["we"] else "I live in " if m["in"] or m["it"] else m[0], text)
    # "Boxes finally unpacked in Porto!": the move done
    text = re.sub(rf"(?i)\b(?:the )?(?:boxes|last box(?:es)?|everything) (?:are |is )?(?:finally |all )?unpacked in "
                  rf"(?={CAPITALISED})", "I moved to ", text)
    # "signed a lease in Dellmont": where they live now
    text = re.sub(rf"(?i)\bsigned a lease (?:on (?:a|an|the) \w+ )?in (?={CAPITALISED})",
                  lambda m: "Moved to " if m[0][0] == "S" else "moved to ", text)
    # "so the new home is in Pozuelo de Alarcón now"
    text = re.sub(rf"(?i)\b(?:the |my |our )?new (?:home|place|house|flat|apartment) is (?:now )?in (?={CAPITALISED})",
                  "I live in ", text)
    # "now we are in Matosinhos", "so its Mount Albert for us now"
    text = re.sub(rf"(?i)\bnow (?:(?P<we>we're|we are)|I'm|I am) (?:living )?in (?={CAPITALISED})",
                  lambda m: "we live in " if m["we"] else "I live in ", text)
    text = re.sub(rf"(?i)\b(?:it's|its|it is) (?P<new>{CAPITALISED}) for (?P<who>us|me) now\b",
                  lambda m: f"{'we' if m['who'].lower() == 'us' else 'I'} live in {m['new']} now", text)
    return text
