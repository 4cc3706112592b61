"""Work as chat says it (for extraction.chat_text.normalise): whom the speaker reports to ("... and I report to
him", "so it's Phil Brennan I report to now", "the person I report to now is Tiago"), a department at an employer
("I'm in accounts at Pennine Freight") and a title to sign with ("Sign everything as Director of Marketing")."""

from __future__ import annotations

import re

_REPORT_TO = re.compile(r"[^.!?]*\b(?:report(?:s|ing)?|answer(?:s|ing)?) (?:directly )?to (?P<who>him|her)\b")


def _report_to(match: re.Match) -> str:
    """ "Declan Whitby is running our team now and I report to him": to the last one named before."""
    before = match[0][:match.start("who") - match.start()]
    named = [m[0] for m in re.finditer(r"\b[A-Z][a-z]+(?: [A-Z][a-z]+)*\b(?!'s)", before)
             if m[0] not in ("So", "And", "But", "Now", "Since", "Then")]
    return before + named[-1] if named else match[0]


def said(text: str) -> str:
    """`text` with the speaker's manager, department and title said as statements of them."""
    # "Declan Whitby is running our team now and I report to him": to whom, by name
    text = _REPORT_TO.sub(_report_to, text)
    # "I'm in accounts at Pennine Freight": a department at an employer, not a place
    text = re.sub(r"\b(?:I'm|I am|I've been|I was) (?:now |still |currently )?in "
                  r"(?=(?:accounts|finance|sales|marketing|HR|IT|"
                  r"payroll|legal|admin|operations|logistics|procurement|engineering|customer service|support|R&D|"
                  r"compliance|research) (?:at|for|with) (?-i:[A-Z]))", "I work in ", text)
    # "so it's Phil Brennan I report to now", "it's a fella called Colm I report to": whom, said as a cleft
    text = re.sub(r"(?i)\bit(?:'s| is) (?:a (?:fella|guy|bloke|man|woman|lady) (?:called|named) )?"
                  r"(?P<who>(?-i:(?:(?:Mr|Mrs|Ms|Dr)\.? )?[A-Z][a-z]+(?: [A-Z][a-z]+)?)) "
                  r"(?:that |who )?"
                  r"I (?P<verb>report to|work for|answer to)\b", r"I \g<verb> \g<who>", text)
    # "the person I report to now is Tiago Mourão": whom, said as what the person is
    text = re.sub(r"(?i)\bthe (?:new )?(?:\w+ )?(?:person|one|guy|woman|man|lady|manager|boss|supervisor) "
                  r"(?:that |who )?I (?:now )?(?P<verb>report to|answer to)"
                  r"(?: now)? is (?=(?-i:[A-Z]))", r"I \g<verb> ", text)
    # "so it's Lead UX Researcher on my badge now", "my badge says Clinical Team Leader now": the title
    text = re.sub(r"(?i)\b(?:it's|it is) (?P<t>(?-i:[A-Z][\w-]*(?: (?:of |for |and )?[A-Z][\w-]*)*)) on my "
                  r"(?:badge|business cards?|door|email signature)\b", r"My title is \g<t>", text)
    text = re.sub(r"(?i)\b(?:the|my) (?:badge|business card|door|email signature) (?:now )?says (?=(?-i:[A-Z]))",
                  "My title is ", text)
    # "Sign everything as Director of Marketing from now on": the title the speaker goes by
    text = re.sub(r"(?i)\bsign (?:everything|it all|all (?:my )?(?:e-?mails|mails|letters)|(?:my |the )?(?:e-?mails?|"
                  r"letters?)|off) as (?=(?-i:[A-Z]))", "My title is ", text)
    return text
