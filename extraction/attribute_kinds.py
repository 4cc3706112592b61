"""Which attributes a statement can fill, declared once: whether each holds one value at a time (a new value
replaces the old: home, employer ...) or accumulates (allergies, pets, places visited ...), what kind of value
it takes, and a few prototype frames that say it. extraction.attributes compares a statement, its value masked,
with these frames by meaning; the frames only have to cover the sense, not every phrasing.

Prototype slots: {place} {org} {person} {number}; the statement's own names and numbers are masked with the same
words (MASKS), so that "we just settled in Lisbon" and "I live in {place}" differ only in their frame words.
Kinds whose values are common words (a job, a diet, a car) are written with example values, which statements
keep too.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# what a masked value is replaced with, in statements and prototypes alike: every proper name is one word (the
# small model's entity labels are unreliable: a city is often an organisation), so the frame words decide
NAME_MASK = "Xyz"
MASKS = {"name": NAME_MASK, "place": NAME_MASK, "org": NAME_MASK, "person": NAME_MASK, "number": "42",
         "thing": "something"}
# the same frames with example values, compared with the statement as said (names kept): a brand or a language
# says more than its mask ("switched to a Samsung", "speaks Italian")
EXAMPLES = {"place": "Lisbon", "org": "Siemens", "person": "Sarah", "number": "42", "thing": "something"}
_NAMING = r"(?i)\b(?:name[ds]?|call|called|go(?:es)? by|i'm|i am|known as)\b"
# the words that say a favourite ("my fav food", "my go-to comfort food")
FAVOURITE_WORDS = ("favourite", "favorite", "fav", "fave", "go-to")
NAMED = ("place", "org", "person", "number", "email", "phone")  # kinds also compared masked


@dataclass(frozen=True)
class Kind:
    """One attribute: `single` holds one value at a time (a different value supersedes), else values accumulate
    (a different value is kept beside the old). `value` is the kind of value it takes (a MASKS key, or "email",
    "phone" for values recognised by their shape)."""

    name: str
    single: bool
    value: str
    frames: tuple[str, ...]
    brands: bool = False  # its values are often names (a car, a phone): also compared masked
    cue: str = ""  # a pattern the statement must match: a name is never changed without a word for naming


KINDS = (
    # --- one value at a time ---
    Kind("home", True, "place", (
        "I live in {place}", "I moved to {place}", "we relocated to {place}", "I'm based in {place} now",
        "we settled in {place}", "our new home is in {place}", "we bought a flat in {place}",
        "we closed on a house in {place}", "I moved out of my old place to {place}",
        "we now live in {place}", "my address is in {place}", "I'm living in {place} these days",
        "my apartment is in {place}", "our house is in {place}", "we got the keys to our new place in {place}",
        "we finished unpacking after our move to {place}", "we unpacked the last boxes at the new place in {place}",
        "I moved into a share house in {place} with friends",
        # a stay of years is a home, a stay of a week a visit
        "I've been in {place} for about three years now", "I've lived in {place} for years")),
    Kind("employer", True, "org", (
        "I work at {org}", "I joined {org}", "I got a job at {org}", "I'm employed by {org}",
        "I started working for {org}", "I left my job and joined {org}", "I'm now at {org}",
        "I accepted an offer from {org}", "I accepted a position at {org}",
        "I work for {org} now", "I'm an engineer at {org}", "I've been at {org} since the spring",
        "I'm a nurse at {org}", "I'm a teacher at {org}", "I joined {org} as a designer", "on Monday I start at {org}",
        "I handed in my notice and signed with {org}", "I do three shifts a week at {org}", "{org} has taken me on",
        "today was my last day at {org}", "I handed in my badge at {org}", "I got poached by {org}",
        "I just finished my first week at {org}",
        # where, without the name: no value to update with, and no job title either (attributes._frames)
        "I got a job at a clinic in town", "I started working at a local school")),
    Kind("job title", True, "thing", (
        "I work as a software engineer", "I got promoted to senior manager", "my job title is data analyst",
        "my title is vice president", "they bumped me up to principal engineer",
        "my new role is head of design", "I'm a nurse by profession", "I became a teacher", "I'm a lawyer",
        "I was made team lead", "I'm now working as an accountant", "I switched careers to product design",
        "I'm a product designer at {org}", "I'm now a senior analyst at {org}",
        "as of this month I'm the head of sales", "the board confirmed my appointment as chief financial officer")),
    # where the speaker works is no home ("my office is in Boulder")
    Kind("workplace", True, "place", (
        "my office is in {place}", "our office is located in {place}", "my workplace is in {place}",
        "we moved our office to {place}")),
    Kind("manager", True, "person", (
        "my manager is {person}", "my boss is {person}", "I report to {person}", "my new supervisor is {person}",
        "I now report to {person}", "{person} became my manager", "my team lead is {person}",
        "my line manager is {person}", "{person} supervises me now", "{person} manages our team",
        "I answer to {person} now")),
    Kind("partner", True, "person", (
        "my partner is {person}", "I'm dating {person}", "my wife is {person}", "my husband is {person}",
        "my boyfriend is {person}",
        "I'm married to {person}", "my girlfriend is {person}", "I'm seeing someone new, {person}",
        "I broke up with {person}", "{person} and I got divorced", "{person} and I split up", "{person} and I are done",
        "{person} and I are over",
        "my fiancee is {person}", "my fiance is {person}", "my gf is {person}", "my bf is {person}",
        "I'm with {person} now", "{person} and I called off the engagement", "{person} dumped me",
        "I'm seeing {person} now", "{person} is my ex now",
        "I've been seeing someone called {person} since the spring")),
    Kind("relationship status", True, "thing", (
        "I'm single", "I got married", "I'm engaged", "we got divorced", "I'm in a relationship",
        "I broke up with my partner", "I'm a widower")),
    Kind("phone", True, "phone", (
        "my phone number is {number}", "call me at {number}", "you can reach me at {number}",
        "my new number is {number}", "text me on my new number", "my mobile is {number}")),
    Kind("work phone", True, "phone", (
        "my work number is {number}", "my office line is {number}", "my desk phone at work is {number}",
        "call me at the office on {number}", "my business phone is {number}")),
    Kind("work email", True, "email", (
        "my work email is something", "my office email address is something", "email me at work at something",
        "my business email changed")),
    Kind("email", True, "email", (
        "my email is something", "email me at something", "my email address changed",
        "write to my new email address", "my new email address is something",
        "I moved my email over to a new provider")),
    Kind("car", True, "thing", (
        "I drive a {thing}", "I drive a Honda Civic", "my car is a Volkswagen Golf", "I bought a new car",
        "I sold my car and got a Tesla", "these days I drive a Toyota", "I replaced my car with a Ford",
        "I traded in my car for an SUV", "my daily driver is an electric hatchback",
        "I get around in a Ford Fiesta", "we swapped our Renault for a Kia", "I drive to work in my Volvo",
        "I'm driving a Hyundai now", "I picked up a used Toyota"),
         brands=True),
    Kind("phone model", True, "thing", (
        "my phone is an iPhone", "I switched to an Android phone", "I got a new Pixel smartphone",
        "I use a Samsung Galaxy", "I upgraded my phone to the latest iPhone", "I switched to a Samsung phone",
        "I got a new phone"), brands=True),
    Kind("diet", True, "thing", (
        "I'm vegetarian", "I follow a keto diet", "I went vegan", "I stopped eating meat", "I eat low carb now",
        "I'm pescatarian these days", "I gave up dairy and meat", "my diet is plant-based", "I'm gluten-free",
        "I eat everything, no restrictions")),
    Kind("age", True, "number", (
        "I am {number} years old", "I turned {number}", "I'm {number} now", "my age is {number}",
        "I just had my {number}th birthday")),
    Kind("favourite", True, "thing", (
        "my favourite colour is blue", "my favorite food these days is sushi", "jazz is my favourite music",
        "my new favourite movie is Dune", "my favorite book is a novel",
        "ramen has overtaken pizza as my favourite food", "Dune replaced Alien as my favorite film",
        "Coldplay is my fave now")),
    Kind("name", True, "person", ("my name is {person}", "I'm called {person}", "I changed my name to {person}"),
         cue=_NAMING),
    Kind("preferred name", True, "person", (
        "call me {person}", "I go by {person}", "please call me {person}", "I prefer to be called {person}"),
         cue=_NAMING),
    Kind("school", True, "org", (
        "I study at {org}", "I'm a student at {org}", "I transferred to {org}", "I enrolled at {org}",
        "I go to {org} university", "I moved to {org} University for my master's",
        "I'm doing my PhD at {org}", "I moved my PhD to {org}", "I'm doing a master's degree at {org}")),
    # --- values accumulate ---
    Kind("allergy", False, "thing", (
        "I'm allergic to peanuts", "I have a gluten allergy", "shellfish gives me an allergic reaction",
        "I'm allergic to cats", "I'm lactose intolerant", "I have a gluten intolerance",
        # what they do not eat, said as it holds, is one more restriction beside a diet ("I don't eat fish")
        "I don't eat pork", "I never drink alcohol")),
    Kind("language", False, "thing", (
        "I speak French", "I'm learning Japanese", "I'm fluent in Spanish", "I can speak some German")),
    Kind("pet", False, "thing", (
        "I have a dog named {person}", "we adopted a cat", "my dog {person}", "we got a puppy", "our cat {person}")),
    Kind("child", False, "person", (
        "my daughter {person}", "I have a son", "we had a baby", "my kid {person} started school")),
    Kind("sibling", False, "person", ("my brother {person}", "I have a sister", "my sister {person}")),
    Kind("friend", False, "person", ("my friend {person}", "I met up with my friend {person}")),
    # someone the speaker knows in a role is no attribute of theirs ("my landlord is Ahmed" is no home)
    Kind("acquaintance", False, "person", (
        "my landlord is {person}", "my dentist is {person}", "my doctor is {person}", "my neighbour is {person}",
        "my coach is {person}", "my GP is Dr {person}", "my therapist is {person}",
        "I'm seeing a physio called {person}", "I've been seeing a therapist called {person} since the spring")),
    Kind("visit", False, "place", (
        "I went to {place}", "I visited {place}", "I traveled to {place}", "we took a trip to {place}",
        "I spent a week in {place}", "I flew to {place} for vacation", "I'm going to {place} next month",
        "I spent the weekend at my parents' place in {place}", "I stayed with friends in {place}")),
    Kind("purchase", False, "thing", (
        "I bought a laptop", "I ordered a new bike", "I purchased concert tickets", "I picked up a new camera",
        "I bought a pair of running shoes")),
    Kind("hobby", False, "thing", (
        "I enjoy hiking", "I play the guitar", "I love painting", "my hobby is photography", "I took up pottery",
        "I like cycling on weekends", "I play tennis")),
    Kind("skill", False, "thing", ("I can code in Python", "I know how to sew", "I learned to swim",
                                   "I'm good at chess")),
    Kind("health", False, "thing", ("I have asthma", "I was diagnosed with diabetes", "I take medication daily",
                                    "I broke my leg")),
    Kind("event", False, "thing", (
        "I attended a conference", "I ran a marathon", "I met {person}", "I had dinner with {person}",
        "I went to a concert", "I finished my project", "I started a course", "I watched a movie",
        "I had a job interview at {org}", "I rented a car for the trip", "I borrowed a friend's car",
        "I visited the {org} office", "I applied for a job at {org}",
        "I applied for a position at {org}",
        # a dish that fits a diet is no diet ("made a dairy-free cake", "tried a vegan cheese")
        "I baked a vegan cake", "I tried a vegetarian burger at a restaurant", "I cooked a gluten-free dinner",
        "I ordered a keto meal", "I made a dessert for the party", "I grilled sausages for the kids",
        # someone the speaker works with, in a role, is no job title of theirs ("mentoring a junior designer")
        "I'm mentoring a new intern", "I'm training a new colleague", "I interviewed a designer for my team",
        # a mood about someone or something is nobody's partner ("I'm so tired of Coldplay")
        "I'm so tired of {org}", "I'm fed up with {org}", "I'm sick of {person} lately"),
        brands=True),
)
BY_NAME = {kind.name: kind for kind in KINDS}
# makes the small model does not know for what they are ("a secondhand Skoda"): a make said as a thing the holder
# has names the kind's attribute, however unlike its frames the rest of the statement is
MAKES = {
    "car": frozenset("""audi bmw byd chevrolet chevy citroen citroën cupra dacia fiat ford honda hyundai jaguar jeep kia
        lexus mazda mercedes mini mitsubishi nissan opel peugeot polestar porsche renault rivian seat skoda subaru
        suzuki tesla toyota vauxhall volkswagen vw volvo dodge chrysler cadillac buick gmc acura infiniti isuzu saab
        lancia alfa maruti tata mahindra holden lada proton perodua""".split()),
    "phone model": frozenset("""iphone pixel galaxy samsung xiaomi oneplus nokia motorola huawei oppo fairphone
        redmi moto xperia realme poco""".split()),
}
# the relations that are an attribute of the speaker's ("my boss is Tom": the manager), by the frames above; "my
# landlord is Ahmed", "my cat is Miso" name someone of the speaker's, no attribute of theirs
ROLE_KINDS = {frame.split()[-3]: kind.name for kind in KINDS if kind.single and kind.value == "person"
              for frame in kind.frames if frame.startswith("my ") and frame.endswith(" is {person}")
              and kind.name != "name"} | {"fiancé": "partner", "fiancée": "partner"}
ROLES = frozenset(ROLE_KINDS)


def same_value(a: str, b: str) -> bool:
    """Two values of one attribute say the same (the same words, in any order); an unsaid value never does. A
    near miss ("vegan" and "strict vegan") counts as different: superseding a restatement loses nothing."""
    return bool(a and b) and set(a.split()) == set(b.split())


# "favourite X" names its attribute: "my favourite band right now", "fav thing to eat"
FAVOURITE = re.compile(
    rf"(?i)\b(?:{'|'.join(FAVOURITE_WORDS)})\s+(?!(?:now|these|currently|lately|ever|right now|by far)\b)"
    r"(?P<what>[a-z][a-z0-9\- ]{1,30}?)"
    r"(?:\s+(?:is|are|was|has|these|now|right now|currently|at the moment|by far|lately|of|used|became|changed|"
    r"ever)\b"
    r"|\s*[.!,;]|$)")
# "Phoebe Bridgers is my fav now": a favourite said without what it is of
BARE_FAVOURITE = re.compile(rf"(?i)\b(?:my|user's) (?:new |all-time )?(?:{'|'.join(FAVOURITE_WORDS)})"
                            r"(?:\s+(?:now|these days|at the moment|right now|lately))?\s*(?:[.!,;]|$)")


_NAMED_AFTER = re.compile(r"\s+(?:is|are)\s+(?:now\s+)?(?:[Tt]he\s+)?"
                          r"(?P<v>[A-Z][\w'&\-]*(?:\s+(?:(?:of|the|and|&|de)\s+)?[A-Z0-9][\w'&\-]*)*)")


def favourite_named(content: str, at: int) -> str:
    """The name said as the favourite after "is" at `at` ("favourite band is The Cockatoo Sessions, been ..." ->
    "cockatoo sessions"), lower case; "" when no name follows."""
    said = _NAMED_AFTER.match(content, at)
    return said["v"].lower() if said else ""


def favourite_of(what: str) -> str:
    """What a favourite is of, by its last word: "TV show" and "show", "comfort food" and "food" are one
    attribute; "sport to watch" is "sport"."""
    what = what.strip().lower()
    if thing := re.fullmatch(r"(?:thing|things|stuff) to (\w+)", what):  # "fav thing to eat": food
        return _THING_TO.get(thing[1], what)
    # "scent in the whole lineup", "scent we make": the thing before what is said of it
    words = re.split(r"\s+(?:to|of|for|in|at|on|that|which|we|i|you|they|he|she)\s+", f"{what} ")[0].split()
    if words and words[-1] in _ANY_THING:  # "my new favourite place": of whatever kind the holder has one of
        return ""
    return _SAME_THING.get(words[-1], words[-1]) if words else what


# words for one kind of favourite: "my favourite album" and "my new favourite record" are one attribute
_SAME_THING = {"record": "album", "lp": "album", "film": "movie", "flick": "movie", "track": "song", "tune": "song",
               "novel": "book", "programme": "show", "program": "show", "series": "show", "dish": "food",
               "meal": "food", "cuisine": "food"}
_ANY_THING = {"place", "spot", "one", "thing", "pick"}
_THING_TO = {"eat": "food", "cook": "food", "drink": "drink", "read": "book"}
