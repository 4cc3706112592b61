"""An age as chat says it, rewritten as "I'm <n>" (for extraction.chat_text.normalise): "Birthday was on the weekend,
23 now", "at 52 I'm slower", "as a 27-year-old I ...", "celebrated the big 40", "big 4-0 last sat", "I have 41
years", "Thirty-three today!"."""

from __future__ import annotations

import re

# an age, in digits or words ("20", "forty three", "forty-three")
AGE = (r"(?:\d{2,3}|(?:twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety)"
       r"(?:[- ](?:one|two|three|four|five|six|seven|eight|nine)\b)?)")


def said(text: str) -> str:
    """`text` with an age said in passing said as "I'm <n>"."""
    # an age said as other languages say it: "I have now 43 years", "I have 41 years"
    text = re.sub(r"(?i)\bI have (now |already )?(\d{1,3}) years\b(?! (?:of|ago|in|at|with|experience))",
                  r"I am \1\2 years old", text)
    text = re.sub(r"(?i)\b(years?) of age\b", r"\1 old", text)  # "seventy-one years of age"
    # "Birthday was on the weekend, 23 now and feeling ancient": the age, said after the birthday
    text = re.sub(rf"(?i)(\b(?:birthday|bday|b-day)\b[^.!?]*?)(?:[,;]\s*(?:so )?(?:(?P<so>officially|finally) )?|"
                  rf"(?P<colon>:)\s*)(?P<n>{AGE})(?(so)\b|(?(colon)(?=\s*(?:[!.]|$|now\b|today\b))|\s+now\b))",
                  r"\1. I'm \g<n> now", text)
    # "Filling in the quote, I'm 38 if it asks": the age, a statement of its own
    text = re.sub(r"(?<=\w),\s+(?=I(?:'m| am) \d{1,3}(?: years old)?\s*(?:[,.!;]|$|if\b|now\b|and\b|so\b|btw\b))",
                  ". ", text)
    # "at 52 I'm slower than I used to be": the age the speaker is (not a time: "at 10 I'm off")
    text = re.sub(r"(?i)\bat (?P<n>1[6-9]|[2-9]\d)(?: years old)?,? (?=I(?:'m| am| feel| can| still)\b)",
                  r"I'm \g<n> now and ", text)
    # "As a 27-year-old I should know how to cook": the age, when what follows holds now ("as a 5-year-old I loved")
    text = re.sub(r"(?i)\bas an? (?P<n>\d{1,3})[- ]year[- ]old,? (?=I(?:'m| am| should| have| can| still| need| want|"
                  r" do| don't| feel| know)\b)", r"I'm \g<n> years old and ", text)
    # "took me down the pub for the big forty three", "celebrated the big 40": a milestone birthday, just had
    text = re.sub(rf"(?i)\b(?:for|celebrated|celebrating|hit|reached) the big (?P<n>{AGE})\b",
                  r"for my birthday. I'm \g<n> now",
                  text)
    # "Hoje é meu aniversário, 30 years old today": the age, a fragment of its own
    text = re.sub(rf"(?i)(^|[,.!?]\s+)(?P<n>{AGE}) years? old (?=today\b|now\b)", r"\1I'm \g<n> years old ", text)
    # "big 4-0 last sat!": the same milestone, said as news of its own
    text = re.sub(r"(?i)(^|[.!?]\s+)(?:(?:it was|it's) )?(?:the )?big (?P<n>[2-9])-0\b", r"\1I turned \g<n>0", text)
    return text
