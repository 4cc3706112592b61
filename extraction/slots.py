"""What a kept dialogue sentence is about: its update slot (`attribute`), category, importance, tags and entities.

Slots are few and only where they are obvious (location, employer, occupation, name, preferred name, diet,
allergy:<x>, age, marital status, favourite:<x>, language:<x>, relation:<x>): the dialogue extractor uses them to
say some statements better ("{name}'s preferred name is Bob.", one memory per allergy) and they name the memory
when no attribute frame does. Whether a statement updates another is decided by its attribute frame
(extraction.attributes), not by these patterns. Everything else is a plain statement with category and tags from
a few word patterns.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from core import calendar_words
from extraction.candidates import slug

MONTHS = [month.title() for month in (*calendar_words.MONTHS, *calendar_words.MONTH_ABBREVIATIONS)]
DAYS = [day.title() for day in calendar_words.WEEKDAYS]
RELATIONS = set("""
wife husband partner spouse boyfriend girlfriend fiance fiancé fiancee fiancée son daughter kid child baby stepson
stepdaughter mother father mom mum dad brother sister sibling twin grandmother grandfather grandma grandpa grandson
granddaughter aunt uncle cousin niece nephew boss manager colleague coworker mentor friend roommate neighbor
neighbour dog cat puppy kitten horse rabbit parrot hamster pet gran granny nan nana nanna grandad granddad gramps bf
gf hubby bestie bff sis bro stepmom stepmum stepdad stepfather stepmother flatmate housemate teammate workmate
classmate hire intern tenant landlord landlady mentee trainee apprentice buddy mate pal eldest youngest oldest
godmother godfather godson goddaughter stepsister stepbrother nanny babysitter carer assistant secretary lad lass missus
""".split())
UNIQUE_RELATIONS = set("wife husband partner spouse boyfriend girlfriend fiance fiancé fiancee fiancée mother "
                       "father mom mum dad boss bf gf hubby".split())
OCCUPATIONS = set("""
engineer developer programmer designer teacher professor nurse doctor physician surgeon dentist pharmacist therapist
psychologist counselor counsellor lawyer attorney accountant architect scientist researcher analyst consultant
manager director founder entrepreneur writer author journalist editor artist musician photographer chef cook baker
barista student intern pilot firefighter officer mechanic electrician plumber carpenter farmer driver librarian
paramedic veterinarian vet banker freelancer coach trainer instructor tutor actor actress dancer singer producer
strategist specialist coordinator administrator executive copywriter marketer recruiter auditor technician
supervisor assistant receptionist cashier clerk lead
""".split())
DIETS = (r"vegan|vegetarian|veggie|pescatarian|pescetarian|keto|paleo|kosher|halal|gluten[- ]free|dairy[- ]free|"
         r"plant[- ]based")
CAP = r"[A-Z][\w.'&\-]*"
PROPER = rf"(?:[Tt]he )?{CAP}(?:,? (?:(?:of|de|la|upon|on|am|van|von|and) )?{CAP})*"
NAME = r"[A-Z][a-z'\-]+(?: [A-Z][a-z'\-]+)?"
_ADV = r"(?:(?:just|recently|finally|now|currently|still|also|actually|really|officially) )*"
_I = r"(?:^|\b(?:and|so|but) )"  # a slot statement starts a sentence or a clause

CATEGORY_WORDS = (
    ("restriction", 0.85, re.compile(
        r"(?i)\b(?:allerg\w*|intoleran\w*|can't eat|cannot eat|don't eat|never eat|diabet\w*|celiac|coeliac|"
        rf"{DIETS})\b")),
    ("goal", 0.6, re.compile(
        r"(?i)\b(?:plan(?:s|ning)?|gonna|going to|want to|wanna|hope to|hoping to|dream(?:ing)? (?:of|about|is)|"
        r"goal|aim(?:ing)? to|intend\w*|looking forward|can't wait to|thinking (?:of|about)|about to|will|'ll|"
        r"would love to|'d love to|next (?:week|month|year))\b")),
    ("preference", 0.5, re.compile(
        r"(?i)\b(?:love|loves|like|likes|enjoy|enjoys|prefer|prefers|hate|hates|dislike|dislikes|favou?rite|"
        r"fan of|into|can't stand|keen on|passionate about|obsessed with)\b")),
    ("skill", 0.55, re.compile(
        r"(?i)\b(?:speak|speaks|fluent|learn(?:ed|t)? (?:to|how)|learning|know how to|good at|skilled|certified|"
        r"play the)\b")),
    ("relationship", 0.6, re.compile(rf"(?i)\b(?:my|our) (?:\w+ )?(?:{'|'.join(sorted(RELATIONS))})s?\b")),
)
_PAST_HINT = re.compile(r"(?i)\b(?:was|were|had|did|went|got|made|took|ago|yesterday|last \w+|\w+ed)\b")


@dataclass
class Slot:
    """An obvious update slot found in a sentence, with how to say it when the sentence would say it badly."""

    attribute: str
    category: str
    importance: float
    content: str = ""  # a template over {name}: "{name}'s preferred name is Bob."
    subject: str = "user"
    entities: dict[str, list[str]] = field(default_factory=dict)
    tags: tuple[str, ...] = ()


def _title(value: str) -> str:
    return " ".join(w[:1].upper() + w[1:] for w in value.split()) if value.islower() else value


def _place(words: str) -> str:
    """A place as said after "live in", "home is": without a trailing joint word ("Leeds for us" -> "Leeds")."""
    return _title(re.sub(r"\s+(?:and|with|since|for|now|because)$", "", words))


def _relation(rel: str, name: str) -> Slot:
    rel = rel.lower()
    attribute = f"relation:{rel}" if rel in UNIQUE_RELATIONS else f"relation:{rel}:{name.lower()}"
    kind = "things" if rel in ("dog", "cat", "puppy", "kitten", "horse", "rabbit", "parrot", "hamster", "pet") \
        else "people"
    return Slot(attribute, "relationship", 0.7, "", name, {kind: [name]},
                ("family" if kind == "people" else "pets",))


EMAIL = r"[\w.+\-]+@[\w\-]+(?:\.[\w\-]+)+"
PHONE = r"(?:\+|\()?\d[\d ().\-]{5,}\d"
# a contact detail is recognised by its shape and a word that says it is one, in a sentence about the speaker's own
# ("reach me at", "my new email:", "please use ... for email"); another person's ("my sister's number", "his
# email") is left to the frames, which know whose it is
_CONTACT_WORDS = {"email": r"e-?mails?|g?mail|inbox|address|id|reach|contact|write|use|send|go|goes|sent|put|list|sign|"
                           r"forget|set up|created?|opened",
                  "phone": r"number|phone|mobile|cell|reach|call|text|ring|whatsapp|contact|line|put|list|sign|"
                           r"landline|telephone|tel"}
_SPEAKERS_OWN = re.compile(r"(?i)^(?:.*\b(?:me|my|i)\b|.*[,;]\s+(?:(?:please|pls|just|so)\s+)*use\b"
                           r"|(?:please |so |and )?(?:you can |feel free to )?"
                           r"(?:use|try|reach|call|text|email|e-mail|"
                           r"mail|ring|contact|message|whatsapp|write)\b"
                           # "emails to ravi.k@gmail.com from now on please"
                           r"|(?:please )?(?:send )?(?:e-?mails?|mail|texts|calls) to\b"
                           # a label: "New phone number: ...", "Updated mobile - ..."
                           r"|(?:(?:my |our )?(?:new|updated|current|changed) )?(?:phone|mobile|cell|e-?mail)"
                           r"(?: number| address)?\s*[:\-\u2013]"
                           # a label typed without its colon at the start: "cell 303-481-7726, put it on the form"
                           r"|(?:my |new )?(?:cell|mobile|phone|e-?mail)(?: number| address| no\.?)?\s+(?=[+(\d]|"
                           r"[\w.+\-]+@)"
                           # "New number: ...": a bare "number" is the speaker's only when said to be a new one
                           # (after a label of its own: "Small correction for all the forms: new number, ...")
                           r"|(?:[^:]*:\s*)?(?:my |our )?(?:new|updated|current|changed) (?:number|address)"
                           r"\s*[:,\-\u2013]"
                           # "New phone, new number: ...": labels said one after another
                           r"|(?:new|updated) (?:phone|mobile|cell|e-?mail),? (?:new |updated )?(?:number|address)"
                           r"\s*[:\-\u2013]"
                           # where things for the speaker go: "send the weekly summary to ...", "everything should
                           # go to ... now"
                           r"|(?:now |please |pls |just )*(?:send|forward) (?:it|them|this|that|everything|stuff|"
                           r"the [\w ]{1,30}?|(?:my |all )?[\w-]+s) to(?= [\w.+\-]+@)"
                           # "drafts go to x@y.com": things of the speaker's, sent to the address
                           r"|(?:the )?(?:[\w-]+ ){0,2}[\w-]+s (?:should |can |will |must )?(?:go|be sent) to"
                           r"(?= [\w.+\-]+@)"
                           r"|(?:.*(?:,|\bso|\band|\bbut)\s+)?(?:everything|all|(?:all (?:my |the |of my )?)?"
                           r"(?:[\w-]+ ){0,2}(?:stuff|things|mail|e-?mails?|newsletters?|correspondence|messages))"
                           r" (?:should |can |will |must )?"
                           r"(?:go|goes|be sent) to\b"
                           # "it's 07700 900987 now, the old line got cut off": the number (the address) changed
                           rf"|(?:.*[,;]\s*)?it(?:'s|s| is) (?=(?:{PHONE}|{EMAIL})\s+now\b)"
                           rf"|(?:please )?forget {EMAIL},? it(?:'s| is) (?={EMAIL}\s+now\b)"
                           # "Personal email for reservations and receipts: ..."
                           r"|(?:personal |private |home )?(?:e-?mail|phone|mobile|cell|landline)(?: address| number)?"
                           r" for [\w ,&]{1,40}:"
                           # the speaker's own papers filled in anew: "put x@y.com on the form instead", "swap the
                           # number to ..."
                           r"|(?:so |and |but )?(?:please |pls |just |(?:can|could) (?:you|u) )?(?:(?:put|list|sign "
                           r"(?:it|this|them) off with)\b(?=.*\b(?:instead|now|from now on|going forward)\b)"
                           r"|(?:swap|switch|change|update) (?:the |my )?(?:number|phone|mobile|cell|e-?mail|address)"
                           r"(?: [\w ]{1,30}?)? (?:to|for)\b)"
                           # "contact email should be hello@dan.io from now on"
                           r"|(?:(?:my|the) )?(?:(?:contact|personal|main|primary|preferred) )?(?:e-?mail|phone|mobile|"
                           r"number)(?: address| number)? (?:should be|is now|will be|becomes)\b)")
# "switched to ciara@byrne.ie for everything now": an address the holder changed to
SWITCHED_TO_ADDRESS = re.compile(r"(?i)\b(?:switch(?:ed|ing)?|mov(?:ed|ing)(?: over)?|chang(?:ed|ing)|"
                                 r"migrat(?:ed|ing)) to [\w.+\-]+@")
SOMEONE_ELSES = re.compile(r"(?i)\b(?:my (?:\w+ (?:of )?)?(?!(?:number|phone|mobile|cell|e-?mail|address)'s)\w+'s"
                            # "its x@y.com now": "it's" typed without its apostrophe
                            r"|his|her|their|its(?!\s+(?:[\w.+\-]+@|[+(]?\d))|(?-i:[A-Z][a-z]+)'s)\b"
                            # "Number for the rota is 086 447 2210, that's Gary from the mobile team": his
                            r"|\bthat(?:'s| is) (?-i:[A-Z][a-z]+)\b(?!'s)(?! (?:number|phone|mobile))"
                            # "can you call 0612 ... and book a table?": whom the assistant is to reach
                            r"|\b(?:can|could|would|will) (?:you|u) (?:please |pls )?(?:call|ring|dial|text|phone|"
                            r"e-?mail|message|contact|write to) (?!me\b|us\b)"
                            # whose address is given: "send the invoice to my boss at ...", "the address of my friend"
                            r"|\b(?:to|for|of) (?:my|our) (?!(?:new|own|personal|private|work|other|old|main|usual|"
                            r"institute|university|uni|college|school|office|official) )"
                            r"(?!(?:e-?mail|address|inbox|g?mail|number|phone|mobile|cell)\b)\w+"
                            # "call the restaurant at ...", "text Anna on ...": the number of whom is called
                            r"|\b(?:call|text|ring|reach|contact|e-?mail|mail|message|whatsapp|write to) (?!me\b|us\b)"
                            r"(?:the|a|an|my|our|your|(?-i:[A-Z][a-z]+))\b"
                            # "add Duarte below me, he's my colleague: +351 ...": the colleague's
                            r"|\b(?:he|she)(?:'s| is) (?:my|our)\b")

# "add my brother Diego as emergency contact: ...": a relation's number, unless the speaker calls one theirs or says
# themselves ("my grandson set me up with an email address, ...")
_RELATION_NAMED = re.compile(rf"(?i)\b(?:my|our) (?:{'|'.join(sorted(RELATIONS, key=len, reverse=True))})\b")
_OWN_CONTACT = re.compile(r"(?i)\bmy (?:own |new |personal |private |work |main |usual )?(?:number|phone|mobile|cell|"
                          r"e-?mail|address|landline|line|contact details)\b|\b(?:me|I|I'm|I've)\b")
# a place of study's address is kept beside the speaker's own as a workplace's is ("my uni email")
_AT_WORK = re.compile(r"(?i)\b(?:(?<!not )(?<!n't )work(?! anymore| any more)|office|business|company|desk|direct line|"
                      r"extension)\b"
                      r"|\b(?:school|work|job|business|office)-related\b"  # "for anything school-related, use ..."
                      r"|\b(?:uni|university|school|college|student|campus|project|lab|board) "
                      r"(?:e-?mail|address|account|number|phone)\b")
_OWN = re.compile(r"(?i)\b(?:personal|private|home|my (?:mobile|cell)(?: number)? is)\b")  # "my mobile is": theirs


def at_work(text: str) -> bool:
    """A contact detail said to be for work ("my office line"), not the speaker's own ("work mobile aside, my
    personal number is ...")."""
    text = re.sub(r"\S+@\S+", "", text)  # not the words of an address ("amy@work.co.uk")
    return bool(_AT_WORK.search(text)) and not _OWN.search(text)


def contact(s: str) -> Slot | None:
    """The speaker's email address or phone number, when `s` gives one."""
    if not _SPEAKERS_OWN.match(s) or SOMEONE_ELSES.search(s) or (
            _RELATION_NAMED.search(s) and not _OWN_CONTACT.search(s)):
        return None
    work = "work " if at_work(s) else ""  # a work number is kept beside the speaker's own
    for attribute, what, shape in (("email", "email address", EMAIL), ("phone", "phone number", PHONE)):
        found = [m for m in re.finditer(shape, s) if not _OLD_BEFORE.search(s[:m.start()])
                 and not _DEAD_AFTER.match(s[m.end():]) and not (_ROLE_MAILBOX.match(m[0]) and not _MINE.search(s))]
        if found and re.search(rf"(?i)\b(?:{_CONTACT_WORDS[attribute]})\b", s):
            return Slot(work + attribute, "fact", 0.7, f"{{name}}'s {work}{what} is {found[-1][0].strip()}.",
                        tags=("contact",))
    return None


# an organisation's mailbox ("send the invoices to billing@acme.com"), unless the speaker calls it theirs
_ROLE_MAILBOX = re.compile(r"(?i)(?:billing|invoices?|accounts?|info|support|help|sales|admin|hr|team|hello|contact|"
                           r"office|enquiries|inquiries|no-?reply|orders|bookings?|reception|press|jobs|careers)@")
_MINE = re.compile(r"(?i)\b(?:my|mine|me)\b")


# "my old number X is dead, use Y": the old one is no value of the speaker's now
_OLD_BEFORE = re.compile(r"(?i)\b(?:old|former|previous)\s+(?:\w+\s+){0,2}$"
                         # "I've stopped checking a@b.com", "I don't use a@b.com any more"
                         r"|\b(?:stopped|quit|no longer|don't|do not|never|can't|cannot)\s+(?:using|checking|use|check|"
                         r"reading|read|answering|answer)\s+$")
_DEAD_AFTER = re.compile(r"(?i)\s*(?:is|has been|was)\s+(?:now\s+)?(?:dead|closed|gone|deleted|cancelled|canceled|"
                         r"disconnected|off|no longer)\b")


def find_slots(sentence: str, *, explicit: bool = False) -> list[Slot]:
    """The slots a first-person `sentence` fills (several for "I'm allergic to peanuts and shellfish")."""
    s = sentence.strip().rstrip(".!")
    lower = s == s.lower()
    # said without a first-person subject: "reach me at the new number 555-0199", "41 since yesterday"
    if contact_slot := contact(s):
        return [contact_slot]
    if m := re.fullmatch(r"(?i)(?:(?:just|finally|officially) )*(?:turned (?P<a>\d{1,3})|(?P<b>\d{1,3}) (?:years old )?"
                         r"(?:(?:since|as of|from) (?:yesterday|today|last \w+|this \w+|\w+day)|now\b"
                         # "34 and only starting to run": an age said first, then what goes with it
                         r"|and (?:only|still|just|never|already|finally|feeling|i'm|i|have|counting)\b)"
                         r"|(?P<d>\d{1,3}) years old\b(?= *(?:,|;|$|now\b|today\b))"
                         # "I'm 34, so not exactly a spring chicken", "I'm 46 and have never run": the age, without
                         # the remark
                         r"|(?:i'm|i am) (?P<c>\d{1,2}|1[01]\d)(?: now)?"
                         r"(?= *(?:,|;|$| years old\b| and\b(?! an? (?:half|quarter)\b))))\b.*", s):
        age = m["a"] or m["b"] or m["c"] or m["d"]
        return [Slot("age", "fact", 0.6, f"{{name}} is {age} years old.", tags=("age",))]
    if m := re.fullmatch(r"(?i)(?:please |you can |just |everyone |my friends )*(?:call me|address me as|refer to me "
                         r"as) (?P<v>[a-z][\w'\-]*(?: (?!(?:in|on|for|from|at|when|please)\b)[a-z][\w'\-]*)?)"
                         r"(?: (?:in|on|for|from now on|when)\b.*)?", s):
        value = _title(m["v"])
        return [Slot("preferred name", "preference", 0.7, f"{{name}}'s preferred name is {value}.",
                     entities={"people": [value]}, tags=("name",))]
    if m := re.fullmatch(r"(?i)my (?:first |full |given )?name is (?P<v>[a-z][\w'\-]*(?: [a-z][\w'\-]*){0,2})", s):
        value = _title(m["v"])
        return [Slot("name", "fact", 0.8, f"{{name}}'s name is {value}.", entities={"people": [value]},
                     tags=("name", "identity"))]
    flags = re.IGNORECASE if lower else 0
    place = r"[a-z]+(?: [a-z]+)?" if lower else PROPER
    # said without the speaker: "Home is Austin now", "since May home is Leeds for us", "home for me is Leeds"
    if (m := re.search(rf"(?i:(?<!\w)(?<!my )(?<!our )(?<!the )(?<!a )(?<!his )(?<!her )(?<!their )(?<!'s )"
                       rf"home(?: base)?(?: for (?:me|us))? (?:these days |now |nowadays )?is "
                       rf"(?:now |officially )?)(?P<p>{place})", s, flags)) and m["p"].split()[0].lower() not in (
            "the", "a", "an", "where", "what", "not", "so", "very", "my", "our", "your", "here", "there", "sweet"):
        value = _place(m["p"])
        return [Slot("location", "fact", 0.7, f"{{name}} lives in {value}.", entities={"places": [value]},
                     tags=("location", "home"))]
    # "Edinburgh is home now", "Leeds is our home these days"
    if (m := re.search(rf"(?P<p>{PROPER}) (?i:is (?:now )?(?:my |our )?(?:new )?home)\b(?! (?:to|of|for)\b)", s)) \
            and m["p"].split()[0].lower() not in ("it", "this", "that", "there", "here", "what"):
        value = _place(m["p"])
        return [Slot("location", "fact", 0.7, f"{{name}} lives in {value}.", entities={"places": [value]},
                     tags=("location", "home"))]
    for pattern in (rf"{_I}(?i:i(?:'ve| have)? {_ADV}(?:moved|relocated)(?: back| over| out)? to) (?P<p>{place})",
                    rf"{_I}(?i:(?:i|we) {_ADV}live in) (?P<p>{place})",
                    rf"{_I}(?i:(?:i'm|i am|we're|we are) {_ADV}(?:living|based|located) in) (?P<p>{place})"):
        if (m := re.search(pattern, s, flags)) and m["p"].lower() not in ("the", "a", "an", "my", "our", "town"):
            value = _place(m["p"])
            return [Slot("location", "fact", 0.7, entities={"places": [value]}, tags=("location", "home"))]
    for pattern in (rf"{_I}(?i:(?:i|i'm|i am) {_ADV}work(?:ing)? (?:at|for)) (?P<o>{PROPER})",
                    rf"{_I}(?i:i(?:'ve| have)? {_ADV}(?:joined|started (?:working |a new job )?at|"
                    rf"got a job (?:at|with)|got hired (?:at|by)|took a job at)) (?P<o>{PROPER})"):
        if m := re.search(pattern, s):
            return [Slot("employer", "fact", 0.7, entities={"organizations": [m["o"]]}, tags=("work", "employer"))]
    if m := re.search(rf"(?i){_I}(?:i work as|(?:i'm|i am) {_ADV}an?) (?P<j>(?:[\w\-]+ ){{0,2}}(?P<w>[\w\-]+))\b", s):
        if m["w"].lower() in OCCUPATIONS:
            return [Slot("occupation", "fact", 0.7, tags=("work", "occupation"))]
    if re.search(rf"(?i){_I}(?:i'm|i am|we're|we are|i've been|we've been) {_ADV}(?:(?:a|an|strictly|strict|fully|"
                 rf"mostly|all|both) )*(?:{DIETS})\b", s):
        return [Slot("diet", "restriction", 0.8, tags=("diet", "food"))]
    if m := re.search(rf"(?i){_I}(?:i'm|i am|i've been|i have been) {_ADV}(?:(?:very|severely|highly|deathly|mildly|"
                      r"seriously) )?allergic to (?P<t>[^.;!?]+)", s):
        things = re.split(r"\s*,\s*(?:and\s+)?|\s+and\s+|\s+or\s+", re.split(
            r"(?i)\s+(?:since|because|so|but|which|ever)\b", m["t"])[0])
        things = [re.sub(r"(?i)^(?:the|all|any|some)\s+", "", t).strip() for t in things if t.strip()]
        verb = "has been" if re.search(r"(?i)\bbeen\b", s[:m.start("t")]) else "is"
        return [Slot(f"allergy:{slug(t).replace('-', ' ')}", "restriction", 0.9,
                     f"{{name}} {verb} allergic to {t}." if len(things) > 1 else "",
                     entities={"things": [t]}, tags=("allergy", "health"))
                for t in things]
    if m := re.search(r"(?i)\bi have an? (?P<t>[\w\- ]{2,30}?) allergy\b", s):
        return [Slot(f"allergy:{m['t'].lower()}", "restriction", 0.9, entities={"things": [m["t"]]},
                     tags=("allergy", "health"))]
    if re.fullmatch(r"(?i)(?:i'm|i am) (?P<a>\d{1,3})(?: years old| yrs old| y/o)?", s) or re.fullmatch(
            rf"(?i)i {_ADV}turned (?P<a>\d{{1,3}})\b.*", s):
        return [Slot("age", "fact", 0.6, tags=("age",))]
    if re.search(rf"(?i){_I}(?:i'm|i am|i got|i just got|i recently got) {_ADV}(?:happily )?(?:married|single|divorced|"
                 r"engaged|widowed|separated)\b", s):
        return [Slot("marital status", "relationship", 0.6, tags=("family", "relationship"))]
    rels = "|".join(sorted(RELATIONS, key=len, reverse=True))
    for pattern in (rf"(?i:my (?:\w+ )?(?P<rel>{rels})(?:'s name is| is called| is named)) (?P<n>{NAME})",
                    rf"(?P<n>{NAME}) (?i:is my (?:\w+ )?(?P<rel>{rels}))",
                    rf"(?i:i (?:have|'ve got|got) an? (?:\w+ )?(?P<rel>{rels}),? (?:named|called)) (?P<n>{NAME})"):
        if m := re.fullmatch(pattern, s):
            return [_relation(m["rel"], m["n"])]
    if m := re.fullmatch(r"(?i)my (?:all[- ]time |absolute )?favou?rite (?P<w>[\w\- ]{2,30}?) (?:is|are) .+", s):
        return [Slot(f"favourite:{m['w'].lower()}", "preference", 0.5, tags=("favourite",))]
    if m := re.fullmatch(r"(?i)i (?:can )?speak (?P<l>[a-z]+)(?: fluently)?", s):
        return [Slot(f"language:{m['l'].lower()}", "skill", 0.6, tags=("languages",))]
    if explicit and (m := re.match(r"(?i)(?:my|our)\s+([a-z][a-z0-9' -]{0,40}?)\s+(?:is|are|was|were)\s+\S", s)):
        return [Slot(re.sub(r"[^\w' -]+", " ", m[1].lower()).strip(), "fact", 0.8)]
    return []


def category_of(sentence: str) -> tuple[str, float]:
    """The category and importance of a plain first-person statement."""
    for category, importance, pattern in CATEGORY_WORDS:
        if category == "relationship" and _PAST_HINT.search(sentence):
            return "history", 0.5
        if pattern.search(sentence):
            return category, importance
    if _PAST_HINT.search(sentence):
        return "history", 0.5
    return "fact", 0.5
