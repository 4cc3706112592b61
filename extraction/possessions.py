"""What the speaker has, said the way chat says it, rewritten as a statement the parser reads (for
extraction.chat_text.normalise): a phone named by what it is used for ("typing this from my Redmi Note 10",
"the app keeps crashing on my Galaxy A54"), a replacement ("Replacement's a Pixel 8"), a contact detail given
"from now on", and whose a number is when the next sentence says it ("... 0278. That's Dana")."""

from __future__ import annotations

import re

from extraction.attribute_kinds import MAKES
from extraction.slots import EMAIL, PHONE

# a number said to be someone else's: "my dad's number ... It's 07845 226 019" is his
OTHERS_NUMBER = re.compile(r"(?i)\b(?:my|our) \w+'s\b|\b(?:his|her|their) (?:new )?(?:number|phone|mobile|cell)\b"
                           r"|(?-i:[A-Z][a-z]+)'s (?:new )?(?:number|phone|mobile|cell)\b")
# the makes of cars and phones, as one pattern (extraction.chat_text uses it too)
MAKE_WORDS = "|".join(sorted(MAKES["car"] | MAKES["phone model"]))
_PHONES = "|".join(sorted(MAKES["phone model"]))
_FROM_NOW = re.compile(rf"(?i)(^|[.!?;]\s+|\s[-\u2013\u2014]\s+)(?:(?:so|and|ok|okay|anyway),?\s+)?"
                       r"(?:(?:going forward|from now on),?\s+)?"
                       rf"(?:(?:kindly|please|pls) )?(?:use )?(?P<v>{PHONE}|{EMAIL})"
                       r"(?P<rest>(?: for [\w ]{1,30}?)?,? (?:from now(?: on)?|from here on(?: out)?|going forward|"
                       r"henceforth|from today|is the (?:address|number|one) to use)\b)")
# "testing the PWA on my Pixel 6": a phone the speaker uses, named with its model; not one changed from or to
_USED_ON = re.compile(rf"(?i)\b(?P<prep>on|using|with) my (?:current |trusty |old )?"
                      rf"(?P<phone>(?:{_PHONES})(?: (?:[A-Z0-9][\w+]*|Pro|Max|Plus|Ultra|Mini|Note|mini|Lite)){{0,3}})"
                      r"(?=\s*(?:[,.!?;]|and\b|but\b|is\b|keeps\b|has\b|won't\b|doesn't\b|$))")
_CHANGED = re.compile(r"(?i)\b(?:switch|upgrad|replac|swap|sold|sell|bought|buy|got|new|trade|died|broke|dropped|"
                      r"lost|stolen|cracked)")


def said(text: str) -> str:
    """`text` with what the speaker has said as statements of it."""
    # "New number to save: (614) 555-0278. That's Dana": whose it is, said in the next sentence, is said of it
    text = re.sub(rf"(?P<v>{PHONE}|{EMAIL})[.!,]?\s+(?:That|It|This)(?:'s| is) (?P<who>(?:(?:my|our) \w+ )?"
                  r"[A-Z][a-z]+)\b(?:'s)?",
                  lambda m: f"{m['v']} is {m['who']}'s {'email' if '@' in m['v'] else 'number'}", text)
    # "0438 901 264 from now.", "use x@y.in for all forms henceforth": the speaker's own, from now on
    text = _FROM_NOW.sub(lambda m: m[0] if OTHERS_NUMBER.search(m.string[:m.start()]) else
                         f"{m[1]}My {'email' if '@' in m['v'] else 'number'} is {m['v']}"
                         + ("" if m["rest"].endswith("to use") else m["rest"]), text)
    # "from now on all client mail should go through hello@studio.ca": the speaker's address
    # ("Correspondence from now on to heinrich@posteo.de")
    text = re.sub(rf"(?i)\b(?:all )?(?:[\w-]+ )?(?:(?:e-?)?mail|correspondence) (?:(?:should|will|can|must) (?:now )?"
                  rf"(?:go|come|be sent) (?:through|to|via)|(?:from now on|henceforth),? (?:goes )?to) (?={EMAIL})",
                  "my email is ", text)
    # "Dropped the Samsung in the milk jug. Replacement's a Pixel 8": the speaker's new one
    text = re.sub(rf"(?i)(^|[.!?]\s+|,\s+)(?:the |my |a |its )?replacement(?: phone| car)?(?:'s| is| was| will be) "
                  rf"(?:now )?(?=an? (?:new |used |second-hand |refurbished )?(?P<make>{MAKE_WORDS})\b)",
                  lambda m: m[1] + ("My new car is " if m["make"].lower() in MAKES["car"] else "My new phone is "),
                  text)
    # "Samsung Galaxy A54 finally here!": the speaker's new phone, arrived
    text = re.sub(rf"(?i)(^|[.!?]\s+)(?:my |the )?(?:new )?(?P<p>(?:{_PHONES})(?: [\w+]+){{0,3}}?) (?:is )?"
                  r"(?:finally |at last )?(?:here|arrived|came)\b", lambda m: f"{m[1]}My new phone is a {m['p']}", text)
    # "The iPhone 15 I switched to lasts all day": what the speaker switched to
    text = re.sub(rf"(?i)\b[Tt]he (?P<p>(?:{_PHONES})(?: [\w+]+){{0,3}}?) (?:I|we)(?:'ve)? (?:switched|changed|moved|"
                  r"upgraded) to\b", r"I switched to the \g<p> and it", text)
    # "Since the move the line is 06422 91 56 03": the speaker's number, said as the line
    text = re.sub(rf"(?i)\bthe (?:new )?line is (?={PHONE})",
                  lambda m: m[0] if OTHERS_NUMBER.search(m.string[:m.start()]) else "my number is ", text)
    # "typing this from my Redmi Note 10": the speaker's phone
    text = re.sub(rf"(?i)\b(?:I'm |I am )?(?:typing|texting|writing|messaging) (?:this |to you )?(?:from|on) "
                  rf"(?:my |a |an )(?:new )?(?=(?:{_PHONES})\b)", "my phone is a ", text)
    if not _CHANGED.search(text) and (used := _USED_ON.search(text)):
        text = f"{text[:used.start()]}{used['prep']} my phone{text[used.end():]}".rstrip()
        article = "an" if used["phone"][:1].lower() in "aeiou" else "a"
        text = f"{text}{'' if text[-1:] in '.!?' else '.'} My phone is {article} {used['phone']}."
    return text
