"""Memory extractors for the conversation pipeline: message text in, `Candidate` memories out.

- `extract_local()`: deterministic rules (regular expressions and small word lists, no model, no network). It
  only reads the user's own first-person statements and explicit "remember that ..." requests, and prefers
  missing a memory to inventing one.
- `extract_llm()` / `reconcile_llm()`: the same through the LLM configured in integrations.llm.

Every candidate carries an `attribute`, a stable slot ("location", "employer", "allergy:peanuts", ...): a later
candidate with the same subject and attribute is an update of the earlier one ("I moved to Berlin" after "I live
in Paris").
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

CATEGORIES = ("preference", "restriction", "fact", "skill", "relationship", "goal", "history", "context")
ENTITY_KINDS = ("people", "places", "organizations", "things")
SCOPES = ("user", "project")


@dataclass(frozen=True)
class Candidate:
    """A memory proposed by an extractor, before reconciliation with the stored ones."""

    content: str  # self-contained, third person or neutral: "Is allergic to peanuts"
    category: str  # one of CATEGORIES
    subject: str  # "user" for the speaker, else the person it is about ("Emma")
    attribute: str  # stable slot for updates: "location", "allergy:peanuts", "" when none
    tags: list[str]
    entities: dict[str, list[str]]  # {"people": [...], "places": [...], "organizations": [...], "things": [...]}
    importance: float  # 0..1
    scope: str = "user"  # user | project
    explicit: bool = False  # the user asked to remember it


# =============================================================================================================
# Word lists
# =============================================================================================================

MONTHS = ("january february march april may june july august september october november december "
          "jan feb mar apr jun jul aug sep sept oct nov dec").split()
DAYS = "monday tuesday wednesday thursday friday saturday sunday".split()

LANGUAGES = set("""
english spanish french german italian portuguese dutch russian mandarin chinese cantonese japanese korean arabic
hindi urdu bengali punjabi turkish polish swedish norwegian danish finnish greek hebrew czech hungarian romanian
ukrainian vietnamese thai indonesian malay tagalog swahili persian farsi catalan tamil telugu marathi gujarati
irish welsh latin esperanto afrikaans bulgarian croatian serbian slovak slovenian lithuanian latvian estonian
icelandic basque galician yiddish amharic somali yoruba zulu
""".split()) | {"sign language", "asl", "bsl"}

PROGRAMMING = set("""
python java javascript typescript go golang rust c c++ c# ruby php kotlin swift scala haskell elixir erlang
clojure r julia perl lua dart sql bash matlab fortran cobol ocaml f# zig nim objective-c assembly solidity groovy
elm lisp scheme prolog powershell html css
""".split())

TECH = set("""
react django vue angular rails flask fastapi spring node node.js nodejs .net svelte next.js nextjs laravel
tensorflow pytorch kubernetes docker terraform aws gcp azure linux postgres postgresql mysql mongodb redis excel
figma photoshop vim emacs neovim
""".split())

NATIONALITIES = set("""
american british english scottish welsh irish canadian australian german french spanish italian portuguese dutch
belgian swiss austrian swedish norwegian danish finnish polish czech slovak russian ukrainian greek turkish
israeli indian pakistani bangladeshi chinese japanese korean vietnamese thai filipino indonesian malaysian
singaporean brazilian mexican argentinian argentine chilean colombian peruvian venezuelan cuban nigerian kenyan
egyptian moroccan ethiopian ghanaian iranian iraqi lebanese saudi hungarian romanian bulgarian serbian croatian
icelandic estonian latvian lithuanian
""".split()) | {"south african", "new zealander"}

OCCUPATIONS = set("""
engineer developer programmer designer teacher professor lecturer nurse doctor physician surgeon dentist
pharmacist therapist psychologist psychiatrist lawyer attorney accountant architect scientist researcher analyst
consultant manager director ceo cto cfo coo founder cofounder co-founder entrepreneur writer author journalist
editor artist musician photographer chef cook baker waiter waitress bartender barista student intern pilot
firefighter officer soldier mechanic electrician plumber carpenter farmer driver salesperson marketer recruiter
librarian paramedic veterinarian vet economist banker trader freelancer contractor administrator sysadmin
technician translator interpreter coach trainer instructor tutor actor actress dancer singer producer biologist
chemist physicist mathematician statistician pm specialist assistant clerk cashier receptionist secretary
caregiver nanny homemaker pastor priest rabbi imam counselor counsellor worker lead devops sre illustrator
animator programmer webmaster copywriter realtor broker investor midwife optometrist physiotherapist
""".split())

CONDITIONS = set("""
diabetes asthma epilepsy adhd autism migraines migraine hypertension arthritis ibs anxiety depression ptsd ocd
dyslexia insomnia tinnitus cancer lupus psoriasis eczema celiac coeliac fibromyalgia gout glaucoma anemia
anaemia endometriosis pcos scoliosis
""".split()) | {
    "type 1 diabetes", "type 2 diabetes", "celiac disease", "coeliac disease", "high blood pressure",
    "a heart condition", "heart disease", "a bad back", "back pain", "long covid", "multiple sclerosis",
    "sleep apnea", "sleep apnoea", "hearing loss", "crohn's", "crohn's disease", "a pacemaker", "color blindness",
    "colour blindness", "chronic pain", "a bad knee", "bipolar disorder", "kidney disease",
}

HEALTH_STATES = ("diabetic", "asthmatic", "epileptic", "celiac", "coeliac", "colorblind", "colourblind",
                 "color blind", "colour blind", "deaf", "blind", "hard of hearing", "dyslexic", "pregnant",
                 "anemic", "anaemic", "autistic", "immunocompromised", "in a wheelchair", "a wheelchair user")

DIETS = ("vegetarian", "vegan", "pescatarian", "pescetarian", "keto", "paleo", "kosher", "halal", "gluten-free",
         "gluten free", "dairy-free", "dairy free", "plant-based", "plant based", "low-carb", "low carb",
         "teetotal", "teetotaler", "teetotaller", "sober", "flexitarian", "raw vegan", "carnivore",
         "lactose-free", "lactose free", "sugar-free", "sugar free", "nut-free", "nut free")

FOODS = set("""
dairy gluten sugar caffeine alcohol meat pork beef chicken fish shellfish seafood nuts peanuts eggs egg soy wheat
lactose garlic onions onion spicy red wine beer coffee milk cheese sesame mushrooms tomatoes fruit carbs
""".split())

PETS = ("dog", "dogs", "cat", "cats", "puppy", "kitten", "rabbit", "bunny", "hamster", "guinea pig", "parrot",
        "bird", "horse", "fish", "turtle", "tortoise", "snake", "lizard", "ferret", "gecko", "chinchilla", "pony")

INSTRUMENTS = ("piano", "guitar", "bass", "drums", "violin", "cello", "viola", "flute", "clarinet", "saxophone",
               "sax", "trumpet", "trombone", "ukulele", "harp", "banjo", "accordion", "keyboard", "harmonica",
               "oboe", "mandolin")
GAMES = ("tennis", "chess", "football", "soccer", "basketball", "golf", "volleyball", "baseball", "hockey",
         "rugby", "cricket", "badminton", "squash", "table tennis", "ping pong", "poker", "bridge", "go",
         "padel", "pickleball", "water polo", "handball", "bowls", "darts", "pool", "snooker")

# relation word -> (the slot's name for it, the group it belongs to)
RELATIONS: dict[str, tuple[str, str]] = {
    **{w: (w, "family") for w in (
        "wife husband partner spouse boyfriend girlfriend son daughter kid child baby stepson stepdaughter "
        "stepmother stepfather mother father brother sister sibling twin grandmother grandfather grandson "
        "granddaughter grandchild aunt uncle cousin niece nephew mother-in-law father-in-law sister-in-law "
        "brother-in-law son-in-law daughter-in-law"
    ).split()},
    "fiance": ("fiance", "family"), "fiancé": ("fiance", "family"), "fiancee": ("fiancee", "family"),
    "fiancée": ("fiancee", "family"), "hubby": ("husband", "family"),
    "mom": ("mother", "family"), "mum": ("mother", "family"), "mommy": ("mother", "family"),
    "mama": ("mother", "family"), "dad": ("father", "family"), "daddy": ("father", "family"),
    "papa": ("father", "family"), "grandma": ("grandmother", "family"), "granny": ("grandmother", "family"),
    "nana": ("grandmother", "family"), "grandpa": ("grandfather", "family"), "granddad": ("grandfather", "family"),
    "auntie": ("aunt", "family"),
    **{w: (w, "work") for w in "boss manager colleague teammate mentor assistant cofounder co-founder".split()},
    "coworker": ("colleague", "work"), "co-worker": ("colleague", "work"),
    **{w: (w, "friends") for w in "friend roommate flatmate housemate neighbour landlord".split()},
    "neighbor": ("neighbour", "friends"),
    **{w: (w, "health") for w in "doctor therapist dentist physiotherapist".split()},
    **{w: (w, "pet") for w in "dog cat horse rabbit hamster parrot".split()},
    "puppy": ("dog", "pet"), "kitten": ("cat", "pet"), "bunny": ("rabbit", "pet"),
}

PAST_IRREGULAR = set("""
went grew got had was were spent took left began became made met bought ran saw wrote taught learnt built quit
came did found lost won sold drove flew gave knew said told thought broke fell felt kept put set sat stood swam
spoke understood caught brought fought chose ate drank forgot held hurt led lent let meant paid rode rose sang
shot shut slept stole struck threw wore woke dealt dreamt burnt spelt hid hit cut cost beat bit blew dug drew
froze hung lay lit overcame sent shook sank spun tore underwent withdrew used
""".split())
NOT_PAST_ED = set("need feed bleed breed speed seed proceed succeed exceed embed shred wed weed heed".split())
MODALS = set("can can't cannot could couldn't would wouldn't should shouldn't must mustn't might may will won't "
             "shall".split())
ADVERBS = set("really absolutely totally just also actually still truly genuinely honestly definitely seriously "
              "personally do kinda quite generally usually always now currently never recently finally mostly "
              "mainly primarily".split())

# topic tags added to any candidate whose content mentions one of the words
TOPICS: tuple[tuple[str, re.Pattern], ...] = tuple((tag, re.compile(rf"\b(?:{words})\b", re.I)) for tag, words in (
    ("health", r"allerg\w*|intoleran\w*|diabet\w*|asthma\w*|doctor|medic\w*|health\w*|pregnan\w*|surgery"),
    ("food", r"eat\w*|food|foods|cook\w*|diet|meat|vegan|vegetarian|gluten|dairy|peanuts?|nuts|shellfish|"
             r"sushi|pizza|pasta|restaurant\w*|coffee|tea|wine|beer|alcohol"),
    ("travel", r"travel\w*|trip|flight|flights|passport|visa|vacation|holiday|abroad"),
    ("work", r"work\w*|job|jobs|career|employer|office|boss|colleague\w*|client\w*|company|startup"),
    ("family", r"wife|husband|partner|son|daughter|kids?|children|mother|father|mom|mum|dad|brother|sister|"
               r"family|baby|parents?"),
    ("programming", r"python|java|javascript|typescript|rust|golang|code|coding|programming|software|developer"),
    ("languages", r"speaks?|spanish|french|german|italian|japanese|mandarin|fluent|language"),
    ("education", r"school|college|university|degree|studied|studying|graduated"),
))


# =============================================================================================================
# Text helpers
# =============================================================================================================

def _words(options) -> str:
    """A regex alternation of `options`, longest first, spaces/hyphens matching either."""
    parts = sorted({re.escape(o).replace(r"\ ", r"[\s-]").replace(r"\-", r"[\s-]") for o in options},
                   key=len, reverse=True)
    return "(?:" + "|".join(parts) + ")"


I_AM = r"i(?:'m|\s+am|m)"
I_HAVE = r"i(?:'ve|\s+have)"
ADV = r"(?:(?:really|absolutely|totally|just|also|actually|still|truly|genuinely|honestly|definitely|" \
      r"seriously|personally|do|kinda|kind of|sort of|quite|generally|usually|always|now|currently|recently|" \
      r"finally|mostly|mainly|primarily)\s+)*"
YEAR = r"(?:19|20)\d{2}"
LONG_PAST = re.compile(
    rf"\b(?:(?:in|back in|around|during|since) {YEAR}|\d+ years ago|(?:a few|a couple of|several|many|some|two|"
    r"three|four|five|ten) years ago|years ago|last (?:year|summer|winter|spring|fall|autumn)|"
    r"as an? (?:kid|child|teen|teenager|student)|growing up|when i was (?:young|little|an? \w+|in \w+(?: \w+)?|"
    r"\d+)|in (?:college|high school|university|uni|grad school))\b", re.I)
LONG_PAST_FRONT = (
    rf"(?:back )?in {YEAR}|\d+ years ago|(?:a few|a couple of|several|many|some) years ago|years ago|"
    r"last (?:year|summer|winter|spring|fall|autumn)|as an? (?:kid|child|teen|teenager|student)|growing up|"
    r"when i was (?:young|little|an? \w+|in \w+(?: \w+)?|\d+)|in (?:college|high school|university|grad school)"
)

# where the "core" of an object ends: "peanuts since I was a kid" -> "peanuts"
_TAIL = re.compile(
    r"\s*(?:[,;(]|\s-\s|\b(?:since|because|cause|cuz|as|for|when|whenever|while|if|unless|but|though|although|so|"
    r"which|who|that|ever|from|until|till|after|before|during|last|next|this|these|every|each|now|nowadays|"
    r"currently|lately|recently|anymore|any more|already|yet|again|too|also|as well|a lot|lots|so much|"
    r"very much|really|at the moment|right now|these days|at all|either|tbh|lol|haha|then|today|tomorrow|"
    r"yesterday|tonight|in general|in particular|over|rather than|instead of|than|by|with|at|on|and stuff|"
    rf"or so|in {YEAR}|in (?:{'|'.join(MONTHS)})|\d+ (?:days?|weeks?|months?|years?)|years? ago)\b).*$",
    re.I,
)
_LEADING_DET = re.compile(r"^(?:(?:the|a|an|some|any|all|most|certain|really|very|super|pretty)\s+)+", re.I)
_VAGUE = re.compile(
    r"^(?:it|its|it's|that|that's|this|these|those|them|they|he|she|him|her|his|we|us|our|me|myself|there|here|"
    r"how|what|when|where|why|who|which|whatever|anything|everything|something|nothing|none|both|either|neither|"
    r"one|ones|lot|much|many|more|less|so|very|too|not|no|yes|if|whether|because|though|the idea|the way|"
    r"the fact|my|to|for|about|with|of|in|on|at|and|or|but|ok|okay|fine|good|well|sure)\b", re.I)
_YOU = re.compile(r"\b(?:you|your|yours|u|ur)\b", re.I)
_UK = {"favorite": "favourite", "favorites": "favourites", "color": "colour", "colors": "colours",
       "flavor": "flavour", "flavors": "flavours", "neighbor": "neighbour", "theater": "theatre"}


def _slug(text: str) -> str:
    """A slot piece: lower case, UK spelling, no articles or punctuation. "The Color" -> "colour"."""
    text = _LEADING_DET.sub("", text.strip().lower())
    text = re.sub(r"[^\w+#.'\- ]+", " ", text).replace("_", " ")
    return " ".join(_UK.get(word, word) for word in text.split()).strip(" .'-")


def _core(text: str) -> str:
    """The head of an object phrase: determiners and trailing clauses removed."""
    text = _LEADING_DET.sub("", text.strip())
    return _TAIL.sub("", text).strip(" .,'\"!")


def _lcfirst(text: str) -> str:
    return text[:1].lower() + text[1:] if text[:2] != text[:2].upper() else text


def _ucfirst(text: str) -> str:
    return text[:1].upper() + text[1:]


def _conjugate(verb: str) -> str:
    """First-person verb -> third person: love -> loves, study -> studies; past tense and modals unchanged."""
    low = verb.lower()
    if low in MODALS or low in PAST_IRREGULAR or (low.endswith("ed") and low not in NOT_PAST_ED):
        return verb
    special = {"have": "has", "am": "is", "do": "does", "don't": "doesn't", "haven't": "hasn't",
               "go": "goes", "'m": "is", "'ve": "has"}
    if low in special:
        return special[low]
    if re.search(r"(?:s|sh|ch|x|z|o)$", low):
        return verb + "es"
    if re.search(r"[^aeiou]y$", low):
        return verb[:-1] + "ies"
    return verb + "s"


_INNER = (
    (re.compile(r"\bI(?:'m| am)\b", re.I), "they're"), (re.compile(r"\bI was\b", re.I), "they were"),
    (re.compile(r"\bI've\b", re.I), "they've"), (re.compile(r"\bI'd\b", re.I), "they'd"),
    (re.compile(r"\bI'll\b", re.I), "they'll"), (re.compile(r"\bI\b", re.I), "they"),
    (re.compile(r"\bmyself\b", re.I), "themselves"), (re.compile(r"\bmy\b", re.I), "their"),
    (re.compile(r"\bmine\b", re.I), "theirs"), (re.compile(r"\bme\b", re.I), "them"),
)


def _inner(text: str) -> str:
    """First-person words inside a sentence -> singular "they": "since I was a kid" -> "since they were a kid"."""
    for pattern, replacement in _INNER:
        text = pattern.sub(replacement, text)
    return text


def _neutral(clause: str) -> str:
    """A first-person clause as memory content without the subject: "I really love sushi" -> "Really loves
    sushi", "I'm allergic to nuts" -> "Is allergic to nuts", "My favourite colour is blue" -> "Favourite colour is
    blue"."""
    clause = clause.strip().rstrip(".!,;")
    lead = [
        (rf"^{I_AM}\s+", "is "), (r"^i've got\s+", "has "), (r"^i have got\s+", "has "),
        (rf"^{I_HAVE}(?=\s+(?:been|\w+ed|\w+en|got|gone|done|had|made|lived|always|never|just|also)\b)\s+", "has "),
        (r"^i have\s+", "has "), (r"^i've\s+", "has "), (r"^i'd\s+", "would "), (r"^i'll\s+", "will "),
        (r"^i was\s+", "was "), (r"^i don't\s+", "doesn't "), (r"^i do not\s+", "does not "),
        (r"^i haven't\s+", "hasn't "), (r"^my\s+", ""),
    ]
    for pattern, replacement in lead:
        new = re.sub(pattern, replacement, clause, count=1, flags=re.I)
        if new != clause:
            return _ucfirst(_inner(new))
    match = re.match(r"^i\s+((?:\w+\s+)*?)([\w']+)(\b.*)$", clause, re.I)
    if match:
        adverbs, verb, rest = match.groups()
        if all(word.lower() in ADVERBS for word in adverbs.split()):
            if verb.lower() in ADVERBS:  # "I never" alone
                return _ucfirst(_inner(clause[2:]))
            return _ucfirst(adverbs + _conjugate(verb) + _inner(rest))
    return _ucfirst(_inner(clause))


def _first_person(predicate: str) -> str:
    """A third-person predicate as a first-person clause, to run the first-person rules on what someone else
    does: "is allergic to nuts" -> "I'm allergic to nuts", "loves horses" -> "I love horses"."""
    match = re.match(r"([\w']+)(.*)$", predicate.strip())
    if not match:
        return ""
    verb, rest = match.groups()
    low = verb.lower()
    mapping = {"is": "I'm", "'s": "I'm", "has": "I have", "was": "I was", "doesn't": "I don't", "does": "I do",
               "hasn't": "I haven't", "isn't": "I'm not"}
    if low in mapping:
        return mapping[low] + rest
    if low in MODALS or low in PAST_IRREGULAR or low in ADVERBS or low.endswith("ed"):
        return f"I {verb}{rest}" if low not in ADVERBS else f"I {verb} " + _first_person(rest)[2:]
    if low.endswith("ies"):
        return f"I {verb[:-3]}y{rest}"
    if re.search(r"(?:sh|ch|x|z|ss|o)es$", low):
        return f"I {verb[:-2]}{rest}"
    if low.endswith("s") and not low.endswith("ss"):
        return f"I {verb[:-1]}{rest}"
    return ""


# =============================================================================================================
# Group cleaners: each takes the raw text a rule captured and whether the whole message is lower case, and
# returns the cleaned value (or a list of values for list groups), or None to reject the match.
# =============================================================================================================

Cleaner = Callable[[str, bool], Any]

_CAP_WORD = r"(?!I\b)[A-Z][\w'&.\-]*"
_CONNECT = r"(?:of|de|del|da|di|do|dos|la|le|upon|on|am|im|der|den|van|von|y|and)"
_PROPER = re.compile(rf"(?:[Tt]he\s+)?{_CAP_WORD}(?:\s+(?:{_CONNECT}\s+)?{_CAP_WORD})*(?:,\s*{_CAP_WORD}"
                     rf"(?:\s+{_CAP_WORD})*)?")
_STOP_PROPER = set(MONTHS) | set(DAYS) | LANGUAGES | PROGRAMMING | TECH | {"i", "christmas", "easter"}
_LOWER_PLACE_STOP = re.compile(
    r"^(?:a|an|the|my|our|his|her|their|this|that|here|there|town|the city|city|home|bed|work|school|church|"
    r"the gym|gym|the office|office|it|them|me|you|him|her|us|the store|store|the shop|shop|hospital|"
    r"the suburbs|suburbs|the countryside|countryside|the area|downtown|uptown|a\b)\b", re.I)
_LOWER_PLACE_END = re.compile(
    r"\s+(?:and|with|for|since|because|but|now|last|next|this|in|at|on|from|to|when|where|which|who|as|so|"
    r"a|the|about|ago|\d+)\b.*$", re.I)


def _proper(text: str, lower: bool) -> str | None:
    """A proper noun phrase at the start of `text` ("Berlin", "New York City", "the Netherlands"); in a message
    typed all in lower case, up to three words before a function word, title-cased ("new york" -> "New York")."""
    text = text.strip()
    if lower:
        head = _LOWER_PLACE_END.sub("", _TAIL.sub("", text)).strip(" ,.")
        if not head or _LOWER_PLACE_STOP.match(head) or len(head.split()) > 3 or _YOU.search(head):
            return None
        if head.lower() in _STOP_PROPER or not re.fullmatch(r"[a-z][a-z'.\- ]*", head):
            return None
        return " ".join(w if len(w) <= 2 and w in ("uk", "us", "usa") else w.capitalize()
                        for w in head.split()).replace("Uk", "UK").replace("Usa", "USA").replace("Us", "US")
    match = _PROPER.match(text)
    if not match:
        return None
    value = match.group(0).rstrip(",.")
    if value.lower().removeprefix("the ").strip() in _STOP_PROPER:
        return None
    return value


def _place(text: str, lower: bool) -> str | None:
    return _proper(text, lower)


def _org(text: str, lower: bool) -> str | None:
    """An organisation: a proper name ("Google") or a described one ("a small startup")."""
    found = _proper(text, lower) if not re.match(r"(?i)(?:a|an|the)\s", text) or lower is False else None
    if found:
        return found
    match = re.match(r"(?i)((?:a|an|the)\s+[\w'\-]+(?:\s+[\w'\-]+){0,3})", text.strip())
    if match:
        value = _TAIL.sub("", match.group(1)).strip()
        value = re.sub(r"(?i)\s+(?:as|and|in|where|doing|for|since|with)\b.*$", "", value)
        if len(value.split()) >= 2 and not _YOU.search(value):
            return value
    return None


def _org_proper(text: str, lower: bool) -> str | None:
    """Only a named organisation ("I joined Stripe"; "I joined a gym" is no employer)."""
    if re.match(r"(?i)(?:a|an|my|our|the)\s", text.strip()) and not re.match(r"The\s+[A-Z]", text.strip()):
        return None
    return _proper(text, lower)


def _thing(text: str, lower: bool, *, max_words: int = 6) -> str | None:
    """An object phrase ("sushi", "hiking in the Alps"): its core, at most `max_words`, nothing vague."""
    text = re.sub(r"(?i)^(?:to|being)\s+", "", text.strip())
    if _VAGUE.match(text) or _YOU.search(text):
        return None
    value = _core(text)
    if not value or _VAGUE.match(value) or len(value.split()) > max_words:
        return None
    return value


def _things(text: str, lower: bool) -> list[str] | None:
    """A list: "peanuts, tree nuts and shellfish" -> ["peanuts", "tree nuts", "shellfish"]."""
    core = _core(re.sub(r"(?i)\b(?:and|or)\s+(?:also\s+)?(?=\w)", ", ", text))
    items = [_thing(part, lower) for part in re.split(r"\s*,\s*", core) if part.strip()]
    items = [item for item in items if item]
    return items or None


def _languages(text: str, lower: bool) -> list[str] | None:
    """Known language names in "fluent French, some German and a little Italian"."""
    text = re.sub(r"(?i)\b(?:fluently|natively|well|very well|a bit|a little|pretty well|okay|ok|badly|poorly)"
                  r"\s*$", "", text.strip())
    items = []
    for part in re.split(r"(?i)\s*,\s*|\s+and\s+|\s+or\s+|\s+as well as\s+", text):
        words = re.sub(r"(?i)^(?:(?:fluent|native|conversational|basic|some|a little|a little bit of|a bit of|"
                       r"decent|good|bad|broken|rusty|beginner|intermediate|advanced|passable)\s+)+", "",
                       part.strip()).strip(" .")
        words = re.sub(r"(?i)\s+(?:fluently|natively|well|too|as well|at home|at work)$", "", words)
        if words.lower() in LANGUAGES or words.lower() in PROGRAMMING:
            items.append(words.title() if words.islower() else words)
        elif words:
            return None  # "I speak my mind", "I speak to my mum daily"
    return items or None


def _skill(text: str, lower: bool) -> str | None:
    text = re.sub(r"(?i)^(?:how to|to)\s+", "", text.strip())
    if re.match(r"(?i)(?:for|about|with|on)\b", text):
        return None  # "studying for an exam"
    value = _thing(text, lower, max_words=5)
    if value and value.lower() in LANGUAGES | PROGRAMMING | TECH and value.islower():
        value = value.title() if value.lower() not in PROGRAMMING else value
    return value


def _tech(text: str, lower: bool) -> str | None:
    """A programming language or a well-known tool."""
    value = _core(text)
    return value if value.lower() in PROGRAMMING | TECH | LANGUAGES else None


def _in(words) -> Cleaner:
    words = {w.lower() for w in words}

    def check(text: str, lower: bool) -> str | None:
        value = _core(text) or text.strip()
        return value if value.lower() in words else None
    return check


def _occupation(text: str, lower: bool) -> str | None:
    value = re.sub(r"(?i)\s+(?:at|for|in|with|from|by|and|who|since|working|based)\b.*$", "", text.strip())
    value = _core(value)
    words = value.split()
    if not words or len(words) > 4 or _YOU.search(value):
        return None
    return value if words[-1].lower().strip(".") in OCCUPATIONS else None


def _job_title(text: str, lower: bool) -> str | None:
    value = re.sub(r"(?i)\s+(?:at|for|in|with|from|and|since|based)\b.*$", "", text.strip())
    value = _core(value)
    return value if value and len(value.split()) <= 4 and not _VAGUE.match(value) else None


def _name(text: str, lower: bool) -> str | None:
    """A person's name written with capitals ("Kevin", "Mary Ann")."""
    value = text.strip().rstrip(".,!")
    if not re.fullmatch(r"[A-Z][a-z'\-]+(?:\s[A-Z][a-z'\-]+){0,2}", value):
        return None
    first = value.split()[0].lower()
    if first in _STOP_NAME or first in NATIONALITIES or first in LANGUAGES or re.search(r"(?:ing|ed|ly)$", first):
        return None
    return value


def _any_name(text: str, lower: bool) -> str | None:
    """After "my name is": any one to three words of letters, title-cased when typed in lower case."""
    value = text.strip().rstrip(".,!")
    value = re.split(r"(?i)\s+(?:and|but|by the way|btw|though)\b|,", value)[0].strip()
    if not re.fullmatch(r"[A-Za-z][A-Za-z'\-]*(?:\s[A-Za-z][A-Za-z'\-]*){0,2}", value):
        return None
    if value.split()[0].lower() in {"not", "none", "secret", "private", "irrelevant", "unimportant", "a", "the"}:
        return None
    return " ".join(w if not w.islower() else w.capitalize() for w in value.split())


def _age(text: str, lower: bool) -> str | None:
    return text if 1 <= int(text) <= 120 else None


def _date(text: str, lower: bool) -> str | None:
    value = re.sub(r"(?i)\s+(?:and|but|so)\b.*$", "", text.strip())
    if re.search(rf"(?i)\b(?:{'|'.join(MONTHS)})\b|\d", value) and len(value.split()) <= 5:
        return value
    return None


_STOP_NAME = set(MONTHS) | set(DAYS) | {
    "i", "the", "and", "but", "is", "was", "has", "who", "which", "that", "this", "also", "just", "still", "sorry",
    "fine", "good", "ok", "okay", "sure", "here", "back", "done", "ready", "not", "so", "very", "really", "happy",
    "sad", "tired", "busy", "glad", "afraid", "new", "old", "jewish", "muslim", "christian", "catholic", "hindu",
    "buddhist", "atheist", "agnostic", "mormon", "sikh", "gay", "straight", "bi", "trans", "vegan", "vegetarian",
    "retired", "single", "married", "later", "tomorrow", "today", "maybe", "please", "anytime", "crazy",
    "home", "there", "now", "soon", "mom", "dad", "mum", "sir", "madam", "boss", "buddy", "dude", "bro",
}


# =============================================================================================================
# The rule table: first-person statements, tried in order, first match wins.
# =============================================================================================================

@dataclass(frozen=True)
class Rule:
    """`pattern` must match the whole clause (case-insensitive). Each named group it captured is cleaned by
    `groups[name]` (`_thing` when not listed); a cleaner answering None rejects the match. The attribute is a
    template over the cleaned groups (slugged) or a function of them; `split` names a list group that yields one
    candidate per item; `entities` maps an entity kind to the group holding it; `requires` must also be found
    somewhere in the clause; `self_only` rules are not tried on what another person does."""

    category: str
    pattern: str
    attribute: str | Callable[[dict[str, str]], str]
    importance: float
    tags: tuple[str, ...] = ()
    groups: dict[str, Cleaner] = field(default_factory=dict)
    entities: dict[str, str] = field(default_factory=dict)
    split: str | None = None
    content: str | None = None
    requires: re.Pattern | None = None
    defaults: dict[str, str] = field(default_factory=dict)
    self_only: bool = False

    @property
    def regex(self) -> re.Pattern:
        return _compiled(self.pattern)


_COMPILED: dict[str, re.Pattern] = {}


def _compiled(pattern: str) -> re.Pattern:
    if pattern not in _COMPILED:
        _COMPILED[pattern] = re.compile(pattern, re.I)
    return _COMPILED[pattern]


def _language_or_skill(values: dict[str, str]) -> str:
    value = _slug(values.get("skill") or values.get("lang") or "")
    if value in LANGUAGES or value in PROGRAMMING:
        return f"language:{value}"
    if value in TECH:
        return f"tool:{value}"
    return "skill:" + re.sub(r"^(?:play|speak|do)\s+", "", value)


def _goal_slot(values: dict[str, str]) -> str:
    return "goal:" + _slug(values["goal"])


_GOAL_TRIVIAL = (r"ask|know|see|check|say|tell|talk|mention|clarify|confirm|understand|hear|thank|find out|try|"
                 r"share|show|add|do|make sure|get back|continue|go back|follow up|double|note|use|go with|stick|"
                 r"keep|leave|skip|stop|wait|call|email|send|reply|respond|look|order|book|fix|change|update|"
                 r"delete|remove|rename|run this|test|debug|create|make|get|have|be|go|start over|discuss|compare|"
                 r"explain|summari[sz]e|review|finish this|read this|write this|sleep|eat|watch")
# weak goal phrases ("I want to ...") count only with a life-goal verb phrase
_GOAL_PHRASES = (r"learn|become|visit|travel|retire|lose (?:weight|\d+)|run (?:a|an|the|my first)|"
                 r"move to|move abroad|start (?:a|an|my own) (?:business|company|family|startup|podcast|blog)|"
                 r"quit (?:smoking|drinking|my job|vaping|sugar)|get (?:fit|married|promoted|a (?:job|degree|"
                 r"dog|cat|master's|phd)|certified|in shape|better at|my (?:degree|license|licence|driver's))|"
                 r"buy (?:a|an|my own) (?:house|home|car|flat|apartment|boat)|save (?:money|up|for)|"
                 r"write (?:a|my) (?:book|novel|memoir)|study abroad|master|graduate|climb|hike|speak|"
                 r"improve my|earn|open (?:a|an|my own)|have (?:kids|a baby|children)|go back to school|"
                 r"switch careers|change careers|publish|compete|finish (?:a|an|my) (?:marathon|degree|phd|book)")

PLACE = {"place": _place}
LOC = "location"

RULES: tuple[Rule, ...] = (
    # --- restrictions: health and diet ----------------------------------------------------------------------
    Rule("restriction", rf"{I_AM} {ADV}(?:severely |highly |very |deathly |mildly |seriously )?allergic to (?P<thing>.+)",
         "allergy:{thing}", 0.9, ("allergy", "health"), {"thing": _things}, {"things": "thing"}, split="thing"),
    Rule("restriction", rf"{I_HAVE} (?:got )?(?:a |an )?(?:severe |mild |serious |bad )?allerg(?:y|ies) to (?P<thing>.+)",
         "allergy:{thing}", 0.9, ("allergy", "health"), {"thing": _things}, {"things": "thing"}, split="thing"),
    Rule("restriction", rf"{I_HAVE} (?:got )?(?:a |an )?(?:severe |mild |serious |bad )?(?P<thing>[\w\- ]+?) allerg(?:y|ies)\b.*",
         "allergy:{thing}", 0.9, ("allergy", "health"), {"thing": _things}, {"things": "thing"}, split="thing"),
    Rule("restriction", rf"{I_AM} {ADV}(?:very |severely |slightly )?(?P<thing>lactose|gluten|dairy|fructose|histamine|"
         r"caffeine|wheat|soy|egg) intolerant\b.*",
         "intolerance:{thing}", 0.85, ("intolerance", "health"), {"thing": _in(FOODS | {"histamine", "fructose"})}),
    Rule("restriction", rf"{I_AM} {ADV}intolerant to (?P<thing>.+)",
         "intolerance:{thing}", 0.85, ("intolerance", "health"), {"thing": _things}, split="thing"),
    Rule("restriction", rf"{I_AM} {ADV}(?:an? )?(?P<state>{_words(HEALTH_STATES)})\b(?:[ ,].*)?",
         "health:{state}", 0.9, ("health",), {"state": _in(HEALTH_STATES)}),
    Rule("restriction", rf"i {ADV}(?:have|'ve got|suffer from|was diagnosed with|'ve been diagnosed with|"
         r"have been diagnosed with|live with) (?P<cond>.+)",
         "health:{cond}", 0.9, ("health",), {"cond": _in(CONDITIONS)}),
    Rule("restriction", rf"{I_AM} {ADV}(?:a |an |strictly |strict |fully |mostly |mainly |100% )*"
         rf"(?P<diet>{_words(DIETS)})(?: diet)?\b(?:[ ,].*)?",
         "diet", 0.8, ("diet", "food"), {"diet": _in(DIETS)}),
    Rule("restriction", rf"i {ADV}(?:follow|eat|keep|stick to|am on|'m on|m on) (?:a |an |strict )?"
         rf"(?P<diet>{_words(DIETS)})(?: diet)?\b(?:[ ,].*)?",
         "diet", 0.8, ("diet", "food"), {"diet": _in(DIETS)}),
    Rule("restriction", rf"{I_AM} {ADV}on an? (?P<diet>[\w\- ]{{3,30}}?) diet\b.*",
         "diet", 0.7, ("diet", "food"), {"diet": lambda t, lower: t if not _VAGUE.match(t) else None}),
    Rule("restriction", rf"i {ADV}(?:can't|cannot|can not|don't|do not|never|won't|mustn't|must not|shouldn't|"
         r"should not|am not allowed to|'m not allowed to|m not allowed to|no longer) eat (?P<thing>.+)",
         "diet:{thing}", 0.8, ("diet", "food"), {"thing": _thing}, {"things": "thing"}),
    Rule("restriction", rf"i {ADV}(?:can't|cannot|can not) (?:have|tolerate|digest|handle) (?P<thing>.+)",
         "diet:{thing}", 0.8, ("diet", "food"), {"thing": _in(FOODS)}, {"things": "thing"}),
    Rule("restriction", rf"i {ADV}(?:avoid|avoid eating|stay away from) (?P<thing>.+)",
         "diet:{thing}", 0.7, ("diet", "food"), {"thing": _in(FOODS)}, {"things": "thing"}),
    Rule("restriction", rf"i {ADV}(?:can't|cannot|can not|don't|do not|never|no longer) drink(?: (?P<thing>.+))?",
         "diet:{thing}", 0.8, ("diet", "drinks"), {"thing": _thing}, defaults={"thing": "alcohol"}),

    # --- preferences ----------------------------------------------------------------------------------------
    Rule("preference", r"my (?:all[- ]time |absolute |very |personal )?favou?rite (?P<what>[\w\- ]{2,30}?) "
         r"(?:is|are|has to be|would have to be|would be) (?P<value>.+)",
         "favourite:{what}", 0.5, ("favourite",), {"what": _thing, "value": _thing}, {"things": "value"},
         content="Favourite {what} is {value}"),
    Rule("preference", r"(?P<value>[\w'\- ]{2,40}?) (?:is|are) my (?:all[- ]time |absolute |very |personal )?"
         r"favou?rite (?P<what>[\w\- ]{2,30})",
         "favourite:{what}", 0.5, ("favourite",), {"what": _thing, "value": _thing}, {"things": "value"},
         content="Favourite {what} is {value}"),
    Rule("preference", rf"i {ADV}(?:love|like|enjoy|adore|prefer|hate|dislike|detest|loathe|despise|can't stand|"
         r"cannot stand|can not stand|don't like|do not like|don't enjoy|do not enjoy|don't care for|"
         r"am obsessed with|'m obsessed with|m obsessed with|am a (?:big |huge |massive )?fan of|"
         r"'m a (?:big |huge |massive )?fan of|m a (?:big |huge |massive )?fan of|am not a (?:big )?fan of|"
         r"'m not a (?:big )?fan of|am into|'m into|m into|am not into|'m not into) (?P<thing>.+)",
         "preference:{thing}", 0.5, ("preference",), {"thing": _thing}),
    Rule("preference", rf"{I_AM} {ADV}(?:a |more of a |more a |definitely a )?(?P<kind>morning|night|early|evening) "
         r"(?:person|owl|bird)\b.*",
         "chronotype", 0.5, ("routine",), {"kind": _thing}),
    Rule("preference", r"(?:please |you can |just |everyone |people |my friends )?call(?:s)? me (?P<name>.+)",
         "preferred name", 0.7, ("name",), {"name": _name}, content="Prefers to be called {name}", self_only=True),

    # --- facts: identity, home, work ------------------------------------------------------------------------
    Rule("fact", r"my (?:first |full |given )?name is (?P<name>.+)",
         "name", 0.8, ("name", "identity"), {"name": _any_name}, {"people": "name"}, content="Name is {name}",
         self_only=True),
    Rule("fact", rf"{I_AM} (?:an? )?(?P<nat>{_words(NATIONALITIES)})(?: citizen)?(?:[ ,].*)?",
         "nationality", 0.6, ("identity",), {"nat": _in(NATIONALITIES)}),
    Rule("fact", rf"{I_AM} (?P<age>\d{{1,3}})(?: (?:years?|yrs?) old| ?y/?o)?",
         "age", 0.6, ("age",), {"age": _age}),
    Rule("fact", rf"i {ADV}turned (?P<age>\d{{1,3}})\b.*", "age", 0.6, ("age",), {"age": _age}),
    # programming switches come before moves: "I moved to Python" is no relocation
    Rule("skill", rf"(?:{I_HAVE} |i )?{ADV}(?:switched|moved|migrated|changed|transitioned|converted)(?: over)?"
         r"(?: from (?P<old>[\w+#.\- ]+?))? to (?P<skill>[\w+#.\-]+(?: [\w+#.\-]+)?)(?:[ ,].*)?",
         _language_or_skill, 0.6, ("programming",), {"skill": _tech, "old": _tech}, {"things": "skill"}),
    Rule("fact", rf"i {ADV}(?:live|reside) in (?P<place>.+)", LOC, 0.7, ("location", "home"), PLACE,
         {"places": "place"}),
    Rule("fact", rf"{I_AM} {ADV}(?:living|based|located|residing|settled) in (?P<place>.+)", LOC, 0.7,
         ("location", "home"), PLACE, {"places": "place"}),
    Rule("fact", rf"{I_HAVE} (?:been )?(?:living|lived) in (?P<place>.+)", LOC, 0.7, ("location", "home"), PLACE,
         {"places": "place"}),
    Rule("fact", rf"(?:{I_HAVE} |i )?{ADV}(?:moved|relocated)(?: back| over| out| here)? to (?P<place>.+)", LOC, 0.7,
         ("location", "home", "move"), PLACE, {"places": "place"}),
    Rule("context", rf"{I_AM} {ADV}(?:moving|relocating) (?:back )?to (?P<place>.+)", "planned move", 0.6,
         ("move", "plans"), PLACE, {"places": "place"}),
    Rule("fact", rf"(?:{I_AM} {ADV}(?:originally )?from|i {ADV}(?:originally )?come from|"
         r"i was born and raised in) (?P<place>.+)",
         "origin", 0.6, ("origin",), PLACE, {"places": "place"}),
    Rule("history", r"i (?:grew up|was raised) in (?P<place>.+)", "origin", 0.6, ("origin", "childhood"), PLACE,
         {"places": "place"}),
    Rule("fact", rf"i was born in (?P<year>{YEAR})\b.*", "birth year", 0.6, ("birthday",),
         {"year": lambda t, lower: t}),
    Rule("fact", r"i was born (?:in|at) (?P<place>.+)", "birthplace", 0.6, ("origin",), PLACE,
         {"places": "place"}),
    Rule("fact", r"(?:i was born on|my (?:birthday|bday|date of birth|birth date) is(?: on)?) (?P<date>.+)",
         "birthday", 0.7, ("birthday",), {"date": _date}),
    Rule("fact", rf"i {ADV}(?:work|am working|'m working|m working) (?:at|for) (?P<org>.+)",
         "employer", 0.7, ("work", "employer"), {"org": _org}, {"organizations": "org"}),
    Rule("fact", rf"{I_AM} {ADV}(?:employed|working) (?:at|by|with) (?P<org>.+)",
         "employer", 0.7, ("work", "employer"), {"org": _org}, {"organizations": "org"}),
    Rule("fact", rf"(?:{I_HAVE} |i )?{ADV}(?:joined|started at|started working at|started working for|"
         r"got a job at|got a job with|got hired at|got hired by|took a job at|accepted an offer from|"
         r"accepted a job at) (?P<org>.+)",
         "employer", 0.7, ("work", "employer"), {"org": _org_proper}, {"organizations": "org"}),
    Rule("fact", rf"i {ADV}work as (?P<job>(?:an?|the) .+)", "occupation", 0.7, ("work", "occupation"),
         {"job": _job_title}),
    Rule("fact", rf"{I_AM} {ADV}(?:an? )(?P<job>.+)", "occupation", 0.7, ("work", "occupation"),
         {"job": _occupation}),
    Rule("fact", rf"{I_AM} {ADV}(?P<job>retired|unemployed|self[- ]employed|freelancing|between jobs|"
         r"a stay[- ]at[- ]home (?:mom|mum|dad|parent)|on parental leave)\b.*",
         "occupation", 0.7, ("work", "occupation"), {"job": lambda t, lower: t}),
    Rule("fact", rf"i {ADV}work (?P<how>from home|remotely|remote|hybrid|in an office|on[- ]site|part[- ]time|"
         r"full[- ]time|night shifts?|nights|weekends)\b.*",
         "work arrangement", 0.5, ("work",), {"how": lambda t, lower: t}),
    Rule("fact", rf"{I_HAVE} (?:got )?(?:an? )?(?P<degree>phd|doctorate|master's|masters|bachelor's|bachelors|"
         r"mba|md|law degree|degree)\b.*",
         "education", 0.6, ("education",), {"degree": lambda t, lower: t}),
    Rule("fact", r"i (?:have|'ve got|own) (?:a |an |one |two |three |\d+ )(?P<animal>"
         + _words(PETS) + r")(?:,)? (?:named|called) (?P<pet>.+)",
         "pet:{pet}", 0.6, ("pet",), {"animal": _in(PETS), "pet": _name}, {"things": "pet"}),
    Rule("fact", r"i (?:have|'ve got|own) (?P<count>a|an|one|two|three|four|\d+) (?P<animal>" + _words(PETS)
         + r")\b(?:[ ,].*)?",
         "pet:{animal}", 0.5, ("pet",), {"animal": _in(PETS), "count": lambda t, lower: t}),
    Rule("relationship", r"i (?:have|'ve got) (?P<count>a|an|one|two|three|four|five|six|\d) (?P<rel>kids?|"
         r"children|child|sons?|daughters?|brothers?|sisters?|siblings?|grandchildren|grandkids|"
         r"stepchildren|stepkids)\b(?:[ ,].*)?",
         "relationship:{rel}", 0.6, ("family",), {"rel": lambda t, lower: t, "count": lambda t, lower: t}),
    Rule("relationship", rf"{I_AM} {ADV}(?P<status>married|single|divorced|widowed|engaged|separated|"
         r"in a relationship)\b(?: to (?P<partner>[A-Z][a-z'\-]+(?: [A-Z][a-z'\-]+)?))?(?:[ ,].*)?",
         "marital status", 0.6, ("family", "relationship"), {"status": lambda t, lower: t, "partner": _name},
         {"people": "partner"}),
    Rule("relationship", r"i (?:just |recently )?got (?P<status>married|engaged|divorced)\b.*",
         "marital status", 0.6, ("family", "relationship"), {"status": lambda t, lower: t}),

    # --- skills ---------------------------------------------------------------------------------------------
    Rule("skill", rf"i {ADV}(?:speak|can speak|understand|read and write|read and speak) (?P<lang>.+)",
         "language:{lang}", 0.6, ("languages",), {"lang": _languages}, split="lang"),
    Rule("skill", rf"{I_AM} {ADV}(?:fluent|native|conversational|proficient|bilingual) in (?P<lang>.+)",
         "language:{lang}", 0.6, ("languages",), {"lang": _languages}, split="lang"),
    Rule("skill", r"my (?:native|first|mother) (?:language|tongue) is (?P<lang>.+)",
         "language:{lang}", 0.6, ("languages",), {"lang": _languages}, split="lang"),
    Rule("skill", rf"(?:{I_AM} {ADV}(?:learning|studying|practicing|practising|taking (?:lessons|classes|a course) in)"
         rf"|{I_HAVE} been (?:learning|studying|practicing|practising)|"
         r"i (?:just |recently )?(?:started|began) (?:learning|studying|to learn|to study|practicing|practising))"
         r" (?P<skill>.+)",
         _language_or_skill, 0.6, ("learning",), {"skill": _skill}),
    Rule("skill", rf"i {ADV}know how to (?P<skill>.+)", _language_or_skill, 0.6, ("skill",), {"skill": _skill}),
    Rule("skill", rf"i {ADV}(?:can|am able to|'m able to) (?P<skill>(?:play|cook|code|program|drive|swim|ski|"
         r"snowboard|surf|knit|sew|paint|draw|sing|dance|juggle|sail|fly a plane)\b.*)",
         _language_or_skill, 0.6, ("skill",), {"skill": _skill}),
    Rule("skill", rf"i {ADV}play (?:the )?(?P<skill>{_words(INSTRUMENTS + GAMES)})\b.*",
         _language_or_skill, 0.5, ("hobby",), {"skill": _in(INSTRUMENTS + GAMES)}, {"things": "skill"}),
    Rule("skill", rf"{I_AM} {ADV}(?:very |really |pretty |quite )?(?:good|great|decent|bad|terrible|experienced|"
         r"an expert|expert|skilled|proficient|a beginner|new|comfortable|an intermediate) (?:at|in|with|to) "
         r"(?P<skill>.+)",
         _language_or_skill, 0.6, ("skill",), {"skill": _skill}),
    Rule("skill", rf"i {ADV}(?:code|program|develop|write code|build things|build stuff)(?: mostly| mainly)? "
         r"(?:in|with) (?P<skill>.+)",
         _language_or_skill, 0.6, ("programming",), {"skill": _tech}, {"things": "skill"}),
    Rule("skill", rf"i {ADV}(?:write|use|code in) (?P<skill>[\w+#.\-]+)(?:[ ,].*)?",
         _language_or_skill, 0.5, ("programming",), {"skill": _in(PROGRAMMING)}, {"things": "skill"}),
    Rule("skill", rf"{I_HAVE} been (?:programming|coding|developing|writing|using|working with|working in) "
         r"(?:in |with )?(?P<skill>[\w+#.\-]+)\b.*",
         _language_or_skill, 0.6, ("programming",), {"skill": _tech}, {"things": "skill"}),

    # --- goals ----------------------------------------------------------------------------------------------
    Rule("goal", rf"(?:i {ADV}(?:plan|intend|aim|hope|am planning|'m planning|m planning|am hoping|'m hoping|"
         r"m hoping|am aiming|'m aiming|m aiming|have decided|'ve decided|decided|am determined|'m determined|"
         r"m determined)|my (?:main |big |biggest |long[- ]term |ultimate |personal |new year'?s? )?(?:goal|dream|"
         r"plan|ambition|aim|resolution)(?: for (?:this|next) year| this year)? is) to "
         rf"(?!(?:{_GOAL_TRIVIAL})\b)(?P<goal>.+)",
         _goal_slot, 0.6, ("goal",), {"goal": lambda t, lower: _core(t) or None}),
    Rule("goal", rf"(?:i {ADV}(?:want|would like|'d like|would love|'d love|am going|'m going|m going|am gonna|"
         r"'m gonna|m gonna|am trying|'m trying|m trying|wanna|hope)|(?:one day|someday|eventually),? i "
         rf"(?:want|would like|'d like|'d love|hope)) to (?P<goal>(?:{_GOAL_PHRASES})\b.*)",
         _goal_slot, 0.6, ("goal",), {"goal": lambda t, lower: _core(t) or None}),
    Rule("goal", rf"{I_AM} {ADV}saving (?:up )?(?:for|to buy) (?P<goal>.+)", "goal:save for {goal}", 0.6,
         ("goal", "finance"), {"goal": _thing}),

    # --- context: the situation right now -------------------------------------------------------------------
    Rule("context", rf"{I_AM} {ADV}(?:going|traveling|travelling|flying|heading|driving) to (?P<place>.+)",
         "trip:{place}", 0.5, ("travel", "plans"), PLACE, {"places": "place"}),
    Rule("context", rf"{I_AM} {ADV}(?:on|taking|going on) (?:a |an |my )?(?P<leave>vacation|holiday|parental leave|"
         r"maternity leave|paternity leave|sick leave|sabbatical|leave|a break)\b.*",
         "availability", 0.5, ("availability",), {"leave": lambda t, lower: t}),
    Rule("context", rf"{I_AM} {ADV}(?:working on|building|preparing for|writing) (?P<what>(?:a|an|my) .+)",
         "", 0.4, ("project",), {"what": lambda t, lower: t if len(t.split()) <= 12 and not _YOU.search(t) else None}),

    # --- history --------------------------------------------------------------------------------------------
    Rule("history", rf"i {ADV}used to (?!(?:think|believe|say|know|wonder)\b)(?P<what>.+)", "", 0.5, ("past",),
         {"what": lambda t, lower: t if not _YOU.search(t) else None}),
    Rule("history", r"i (?:graduated from|got my (?:[\w']+ )?(?:degree|diploma|bachelor'?s|master'?s|phd|"
         r"doctorate|mba)(?: in [\w ]+?)? (?:from|at)|studied(?: [\w ]+?)? at|went to (?:school|college|"
         r"university|uni|grad school|law school|med school|high school|business school) at) (?P<org>.+)",
         "education", 0.6, ("education",), {"org": _org_proper}, {"organizations": "org"}),
    Rule("history", r"i (?:went|traveled|travelled|flew|moved|backpacked|emigrated) (?:to|through|around) "
         r"(?P<place>.+)",
         "", 0.5, ("travel", "past"), PLACE, {"places": "place"}, requires=LONG_PAST),
    Rule("history", r"i (?:visited|toured|explored|backpacked through|backpacked around|studied in) (?P<place>.+)",
         "", 0.5, ("travel", "past"), PLACE, {"places": "place"}, requires=LONG_PAST),
    Rule("history", r"i (?:lived|spent (?:\w+ )?(?:years?|months?|summers?)) in (?P<place>.+)",
         "", 0.5, ("past",), PLACE, {"places": "place"}),
    Rule("history", r"i (?:worked|interned) (?:at|for) (?P<org>.+)", "", 0.5, ("work", "past"),
         {"org": _org_proper}, {"organizations": "org"}),
    Rule("history", r"i (?:quit|stopped|gave up) (?P<habit>smoking|drinking|vaping|alcohol|caffeine|coffee|sugar|"
         r"meat|gambling)\b.*",
         "habit:{habit}", 0.6, ("health", "habit"), {"habit": lambda t, lower: t}),
    # anything else in the past tense with a clear long-past time: "I broke my leg in 2019"
    Rule("history", r"i (?!(?:thought|said|asked|told|wondered|mentioned|read|saw|heard|meant|wanted|tried|forgot|"
         r"remembered|noticed|guessed|figured|realized|realised|found|was wondering|was thinking|was asking|"
         r"was just|had a question)\b)(?P<verb>[a-z]+) (?!\w+ing\b)(?P<what>.+)",
         "", 0.5, ("past",),
         {"verb": lambda t, lower: t if t.lower() in PAST_IRREGULAR or (t.lower().endswith("ed") and t.lower()
                                                                      not in NOT_PAST_ED) else None,
          "what": lambda t, lower: t if not _YOU.search(t) else None},
         requires=LONG_PAST),
)


# =============================================================================================================
# Relationships: "my daughter Emma starts school in May", "Emma is my daughter", "my wife is allergic to nuts"
# =============================================================================================================

_MOD = r"(?:(?:older|younger|little|big|baby|twin|eldest|oldest|youngest|best|step|half|ex|late|new|old)[- ]?)*"
_RELS = _words(RELATIONS)
_NAME = r"[A-Z][a-z\-]+(?: [A-Z][a-z\-]+)?"
_REL_PATTERNS = {  # compiled without IGNORECASE: names must be capitalised
    "named": re.compile(rf"(?i:my (?P<mod>{_MOD})(?P<rel>{_RELS})(?:'s name is| is (?:called|named)| is)) "
                        rf"(?P<name>{_NAME})"),
    "is_my": re.compile(rf"(?P<name>{_NAME}) (?i:is my (?P<mod>{_MOD})(?P<rel>{_RELS}))"),
    "have": re.compile(rf"(?i:i (?:have|'ve got) (?:a|an) (?P<mod>{_MOD})(?P<rel>{_RELS})),? "
                       rf"(?:(?i:named|called) )?(?P<name>{_NAME})(?:,? (?P<rest>.+))?"),
    "my_rel_name": re.compile(rf"(?i:my (?P<mod>{_MOD})(?P<rel>{_RELS})),? (?P<name>{_NAME})(?:,? (?P<rest>.+))?"),
    "name_my_rel": re.compile(rf"(?P<name>{_NAME}), (?i:my (?P<mod>{_MOD})(?P<rel>{_RELS})),? (?P<rest>.+)"),
    "my_rel": re.compile(rf"(?i:my (?P<mod>{_MOD})(?P<rel>{_RELS})) (?P<rest>.+)"),
}
# what follows a name without saying anything lasting about them
_REST_SKIP = re.compile(
    r"(?i)^(?:and|or|but|who|whom|whose|which|that|said|says|told|tells|asked|asks|thinks|thought|think|"
    r"mentioned|suggested|recommended|called|calls|texted|texts|emailed|messaged|wants me|wanted me|just said|"
    r"is here|was here|says hi|drives me|is driving me|is being|was being|keeps)\b")
# a lasting fact about someone else, when no first-person rule recognised it
_DURABLE = re.compile(
    r"(?i)\b(?:starts?|started|starting|goes to|attends|studies|plays|graduated|graduates|was born|turned|turns|"
    r"is getting|got|is having|is expecting|just started|began|begins|joined|works|lives|moved|retired|"
    r"is turning|passed away|died)\b"
    r"|\b(?:in|on|by|since|until|next|this|every) (?:" + "|".join(MONTHS + DAYS) + r"|week|month|year|summer|"
    r"winter|spring|fall|autumn|weekend|morning)\b"
    rf"|\b(?:in|since) {YEAR}\b")


def _relation(rel_word: str, mod: str) -> tuple[str, str, str]:
    """("Older brother", "older brother", "family") for mod "older ", rel "brother"; the slot keeps "ex"."""
    slot, group = RELATIONS[rel_word.lower()]
    mod = mod.strip().lower()
    phrase = f"{mod} {rel_word}".strip() if mod else rel_word
    slot = f"ex-{slot}" if re.search(r"\bex\b", mod) else slot
    return _ucfirst(phrase.lower()), slot, group


def _relationship_candidates(clause: str, lower: bool) -> list[Candidate] | None:
    """Candidates for a clause about a related person, or None when the clause is not about one."""
    for kind, pattern in _REL_PATTERNS.items():
        match = pattern.fullmatch(clause)
        if not match:
            continue
        groups = match.groupdict()
        phrase, slot, group = _relation(groups["rel"], groups.get("mod") or "")
        name = _name(groups["name"], lower) if groups.get("name") else None
        if kind != "my_rel" and not name:
            continue
        kind_key = "things" if group == "pet" else "people"
        tags = [group, slot] if group != "pet" else ["pet", slot]
        rest = (groups.get("rest") or "").strip()
        if kind == "my_rel":  # "my wife is allergic to shellfish": only what a rule recognises
            subject = f"user's {phrase.lower()}"
            return [_with_subject(c, subject, f"{phrase}", tags) for c in _rule_candidates(_first_person(rest), lower,
                                                                                        other=True)] or None
        if rest and not _REST_SKIP.match(rest):
            found = _rule_candidates(_first_person(rest), lower, other=True)
            if found:
                return [_with_subject(c, name, f"{phrase} {name}", tags, {kind_key: [name]}) for c in found]
            if _DURABLE.search(rest):
                content = f"{phrase} {name} {_inner(rest)}"
                return [_candidate(content, "fact", name, "", tags, {kind_key: [name]} | _scan(rest), 0.6)]
        content = (_neutral(clause) if kind == "have" and not rest
                   else f"{phrase}'s name is {name}")
        return [_candidate(content, "relationship", name, f"relationship:{slot}:{_slug(name)}", tags,
                           {kind_key: [name]}, 0.7)]
    return None


def _with_subject(candidate: Candidate, subject: str, prefix: str, tags: list[str],
                  entities: dict[str, list[str]] | None = None) -> Candidate:
    return _candidate(f"{prefix} {_lcfirst(candidate.content)}", candidate.category, subject, candidate.attribute,
                      [*tags, *candidate.tags], _merge(candidate.entities, entities or {}), candidate.importance)


# =============================================================================================================
# Building candidates
# =============================================================================================================

_SCAN = (
    ("places", re.compile(rf"\b(?i:live[sd]?|living|moved|moving|relocated|born|raised|grew up|went|travell?ed|trip|"
                          rf"flew|flying|visit(?:ed|ing)?|vacation|holiday|based|stud(?:y|ied|ying))\s+"
                          rf"(?i:in|to|from|at|around|through)?\s*({_PROPER.pattern})")),
    ("organizations", re.compile(rf"\b(?i:work(?:s|ed|ing)?|job|intern(?:ed|ing)?|employed|hired)\s+(?i:at|for|by)\s+"
                                 rf"({_PROPER.pattern})|\b(?i:joined|graduated from|studied at|studying at)\s+"
                                 rf"({_PROPER.pattern})")),
    ("people", re.compile(rf"\b(?i:my)\s+(?i:{_MOD}){_RELS}\s+({_NAME})\b")),
)


def _scan(text: str) -> dict[str, list[str]]:
    """Named things in free text ("moved to Lisbon", "worked at IBM", "my sister Ana")."""
    found: dict[str, list[str]] = {}
    for kind, pattern in _SCAN:
        for match in pattern.finditer(text):
            value = next((g for g in match.groups() if g), "").rstrip(",.")
            if value and value.lower().removeprefix("the ") not in _STOP_PROPER:
                found.setdefault(kind, []).append(value)
    return found


def _merge(*parts: dict[str, list[str]]) -> dict[str, list[str]]:
    merged: dict[str, list[str]] = {kind: [] for kind in ENTITY_KINDS}
    for part in parts:
        for kind, values in part.items():
            bucket = merged.setdefault(kind, [])
            for value in values:
                if value and value.lower() not in {v.lower() for v in bucket}:
                    bucket.append(value)
    return merged


def _candidate(content: str, category: str, subject: str, attribute: str, tags, entities, importance: float,
               explicit: bool = False) -> Candidate:
    content = re.sub(r"\s+", " ", content).strip(" ,;")
    topic_tags = [tag for tag, pattern in TOPICS if pattern.search(content)]
    clean_tags: list[str] = []
    for tag in [*tags, *topic_tags]:
        tag = re.sub(r"[^a-z0-9+#]+", "-", tag.lower()).strip("-")
        if tag and tag not in clean_tags:
            clean_tags.append(tag)
    return Candidate(content=_ucfirst(content), category=category, subject=subject, attribute=attribute,
                     tags=clean_tags[:5], entities=_merge(entities), importance=importance, explicit=explicit)


def _rule_candidates(clause: str, lower: bool, *, other: bool = False) -> list[Candidate]:
    """Candidates from the first rule of RULES that matches the whole first-person `clause`."""
    if not clause:
        return []
    for rule in RULES:
        if other and rule.self_only:
            continue
        match = rule.regex.fullmatch(clause)
        if not match or (rule.requires is not None and not rule.requires.search(clause)):
            continue
        values: dict[str, Any] = dict(rule.defaults)
        for name, raw in match.groupdict().items():
            if raw is None:
                continue
            value = rule.groups.get(name, _thing)(raw, lower)
            if value is None:
                break
            values[name] = value
        else:
            return _build(rule, clause, match, values)
    return []


def _build(rule: Rule, clause: str, match: re.Match, values: dict[str, Any]) -> list[Candidate]:
    items = values[rule.split] if rule.split else [None]
    candidates = []
    for item in items:
        vals = {**values, rule.split: item} if rule.split else values
        if callable(rule.attribute):
            attribute = rule.attribute(vals)
        else:
            attribute = rule.attribute.format(**{k: _slug(v) for k, v in vals.items() if isinstance(v, str)})
        if rule.content:
            content = rule.content.format(**vals)
        elif rule.split and len(items) > 1:
            content = _neutral(clause[: match.start(rule.split)] + item)
        else:
            content = _neutral(clause)
        entities = {kind: [vals[group]] for kind, group in rule.entities.items() if vals.get(group)}
        tags = [*rule.tags]
        if rule.split and item:
            tags.append(_slug(item))
        candidates.append(_candidate(content, rule.category, "user", attribute, tags,
                                     _merge(entities, _scan(clause)), rule.importance))
    return candidates


# =============================================================================================================
# Explicit requests, questions, sentences
# =============================================================================================================

_EXPLICIT = re.compile(
    r"(?i)^(?:(?:(?:can|could|would|will) you|i (?:want|need|would like|'d like) you to|i'd like you to|"
    r"make sure (?:you|to)|be sure to|try to)\s+)?(?:please\s+|always\s+|pls\s+)*"
    r"(?:remember|memori[sz]e|don't forget|do not forget|never forget|note|take note|make a note|keep in mind|"
    r"bear in mind|for future reference|for the future)"
    r"(?:\s+this|\s+the fact)?(?:\s*(?:that\b|:|,|-)\s*|\s+(?=(?:i|i'm|i've|im|my|our)\b)|"
    r"\s+to\s+(?=(?:always|never)\b))(?P<rest>.+)$")
_QUESTION_START = re.compile(
    r"(?i)^(?:what|who|whom|whose|where|when|why|how|which|do|does|did|can|could|would|will|should|shall|is|are|"
    r"am|was|were|have|has|had|may|might|isn't|aren't|doesn't|didn't|won't|wouldn't|couldn't|shouldn't|"
    r"any idea|i wonder|i was wondering|wondering|tell me|remind me|explain|help me)\b")
_MARKERS = re.compile(
    r"(?i)^(?:hi|hello|hey|hiya|yo|so|well|oh|ah|ok|okay|alright|also|and|but|btw|by the way|actually|anyway|"
    r"anyways|fyi|just so you know|for context|for the record|for what it's worth|honestly|basically|"
    r"to be honest|tbh|fun fact|quick note|heads up|as you know|like i said|as i said|as i mentioned|yeah|yes|"
    r"yep|no|nope|sure|oh and|plus|now|these days|nowadays|currently|right|um|uh|hmm|lol)"
    r"(?:\s+there)?\s*(?:[,:;!\-–—]+\s*|\s+)")
_EMOJI = re.compile(r"(?:\s*(?::-?\)|:-?D|;-?\)|:-?\(|<3|xD|\blol\b|\blmao\b|\bhaha+\b|[\U0001F300-\U0001FAFF"
                    r"\u2600-\u27BF]))+\s*$", re.I)
_CLAUSES = re.compile(
    r"\s*;\s*|,?\s+but\s+|,?\s+(?:and|so|plus)\s+(?=(?:i|i'm|i've|i'd|im|my)\b)|,\s*(?=(?:i|i'm|i've|i'd|im|my)\b)",
    re.I)
_ABBREVIATIONS = ("dr.", "mr.", "mrs.", "ms.", "st.", "e.g.", "i.e.", "vs.", "etc.", "jr.", "sr.", "prof.", "mt.",
                  "approx.", "no.")
_GENERIC_CATEGORY = (
    ("restriction", re.compile(r"(?i)\b(?:allerg\w*|intoleran\w*|can't eat|cannot eat|don't eat|never eat|avoid\w*|"
                               r"vegan|vegetarian|gluten|must not|mustn't|not allowed|can't have)\b")),
    ("preference", re.compile(r"(?i)\b(?:prefers?|preferred|likes?|loves?|hates?|dislikes?|favou?rite|rather|"
                              r"always|never)\b")),
    ("goal", re.compile(r"(?i)\b(?:wants? to|plans? to|planning|goal|hopes? to|aims? to|aiming|dream|intends?)\b")),
    ("skill", re.compile(r"(?i)\b(?:speaks?|fluent|knows? how|learning|expert|proficient)\b")),
    ("relationship", re.compile(r"(?i)\b(?:wife|husband|partner|son|daughter|mother|father|mom|mum|dad|brother|"
                                r"sister|friend|boss|colleague|married)\b")),
    ("history", re.compile(rf"(?i)\bused to\b|\bago\b|{LONG_PAST.pattern}")),
    ("context", re.compile(r"(?i)\b(?:deadline|due|meeting|appointment|tomorrow|next week|this week|schedule\w*|"
                           r"currently|right now|at the moment)\b")),
)


def _sentences(text: str) -> list[str]:
    pieces: list[str] = []
    for line in re.split(r"\n+", text):
        line = re.sub(r"^\s*(?:[-*•]|\d+[.)])\s+", "", line)
        for piece in re.split(r"(?<=[.!?])\s+", line):
            if pieces and pieces[-1].lower().endswith(_ABBREVIATIONS) and not piece.startswith("\n"):
                pieces[-1] += " " + piece
            elif piece.strip():
                pieces.append(piece.strip())
    return pieces


def _strip_markers(text: str) -> str:
    previous = None
    while previous != text:
        previous = text
        text = _MARKERS.sub("", text, count=1).strip()
    return text


def _normalise(sentence: str) -> str:
    sentence = sentence.replace("’", "'").replace("‘", "'").replace("´", "'").replace("“", '"').replace("”", '"')
    sentence = re.sub(r"\s+", " ", sentence).strip()
    sentence = _EMOJI.sub("", sentence)
    sentence = re.sub(r"[.!…]+$", "", sentence).strip()
    return _strip_markers(sentence)


def _clause_candidates(clause: str, lower: bool) -> list[Candidate]:
    clause = _strip_markers(clause.strip(" ,;-")).rstrip(".!")
    if not clause:
        return []
    front = re.fullmatch(rf"(?i)(?P<when>{LONG_PAST_FRONT}),?\s+(?P<rest>i\b.+)", clause)
    if front:  # "Last year I moved to Berlin" -> "I moved to Berlin last year"
        return _clause_candidates(f"{front['rest']} {front['when'].lower().replace(' i ', ' I ')}", lower)
    if _QUESTION_START.match(clause):
        return []
    related = _relationship_candidates(clause, lower)
    if related is not None:
        return related
    return _rule_candidates(clause, lower)


def _explicit_candidates(rest: str, lower: bool) -> list[Candidate]:
    """What follows "remember that": as the rules read it when every clause is recognised, else as said."""
    rest = rest.strip().rstrip(".!")
    if not rest or rest.endswith("?") or _QUESTION_START.match(rest) or _VAGUE.fullmatch(rest):
        return []
    clauses = [c for c in _CLAUSES.split(rest) if c and c.strip()]
    found = [_clause_candidates(clause, lower) for clause in clauses]
    if clauses and all(found):
        return [_as_explicit(c) for group in found for c in group]
    content = _neutral(rest) if re.match(r"(?i)(?:i|i'm|im|i've|my)\b", rest) else _inner(rest)
    content = re.sub(r"^to\s+", "", content, flags=re.I)
    category = next((name for name, pattern in _GENERIC_CATEGORY if pattern.search(rest)), "fact")
    # "my locker code is 4411": the thing named is the attribute, so a later code supersedes this one
    owned = re.match(r"(?i)my\s+([a-z][a-z0-9' -]{0,40}?)\s+(?:is|are|was|were)\s+\S", rest)
    attribute = _slug(owned[1]) if owned else ""
    return [_candidate(content, category, "user", attribute, [category if category != "fact" else "note"],
                       _scan(rest), 0.8, explicit=True)]


def _as_explicit(candidate: Candidate) -> Candidate:
    return Candidate(content=candidate.content, category=candidate.category, subject=candidate.subject,
                     attribute=candidate.attribute, tags=candidate.tags, entities=candidate.entities,
                     importance=max(candidate.importance, 0.8), scope=candidate.scope, explicit=True)


def extract_local(text: str, *, role: str = "user") -> list[Candidate]:
    """Memories in one message, by rules: only the user's own statements and explicit requests; questions,
    small talk and anything said by the assistant, system or a tool give none."""
    if (role or "").lower() != "user" or not text or not text.strip():
        return []
    lower = text == text.lower()
    candidates: list[Candidate] = []
    for sentence in _sentences(text):
        sentence = _normalise(sentence)
        if not sentence:
            continue
        explicit = _EXPLICIT.match(sentence.rstrip("?").strip())
        if explicit:
            candidates += _explicit_candidates(explicit["rest"], lower)
            continue
        if sentence.endswith("?"):
            continue
        for clause in _CLAUSES.split(sentence):
            if clause:
                candidates += _clause_candidates(clause, lower)
    return _dedupe(candidates)


def _dedupe(candidates: list[Candidate]) -> list[Candidate]:
    """One candidate per content, and per subject + attribute the last one said."""
    kept: dict[tuple[str, str], Candidate] = {}
    for candidate in candidates:
        key = (candidate.subject.lower(), candidate.attribute or candidate.content.lower())
        kept.pop(key, None)
        kept[key] = candidate
    return list(kept.values())


# =============================================================================================================
# The LLM path
# =============================================================================================================

EXTRACTION_PROMPT = """Analyze this content and extract distinct memories.

The content is one message the user wrote in a conversation with an AI assistant. Extract only what the user
states about themselves or about people and things in their life that is worth remembering in future
conversations. Earlier messages, when given, are context only: do not extract from them. Questions, greetings,
small talk, thanks and requests for help hold no memories. Do not guess: when in doubt, leave it out, and return
{"memories": []} when there is nothing to remember.

For each memory:
1. content: The specific fact, insight, preference, or information, short and self-contained. Leave out the
   user as subject ("Is allergic to peanuts", "Works at Acme Corp") and name anyone else ("Daughter Emma starts
   school in May").
2. category: one of preference (likes, dislikes, choices), restriction (limitations, allergies, constraints),
   fact (objective information), skill (abilities, knowledge level), relationship (connections between
   people), goal (objectives, plans), history (past events, experiences), context (situational information)
3. subject: who the memory is about: "user" for the user, otherwise the person's name ("Emma")
4. attribute: a short, stable slot name for what the memory describes, so that a later memory with the same
   subject and attribute replaces it: "location", "employer", "occupation", "diet", "allergy:peanuts",
   "favourite:colour", "language:python", "relationship:daughter:emma"; "" when no slot fits
5. scope: "user" (true across all projects) or "project" (specific to this work)
6. tags: 2-5 descriptive tags (lowercase, no spaces)
7. entities: People, places, organizations and things mentioned
8. importance: 0.0-1.0 (how critical is this information?): health and safety restrictions about 0.9, small
   preferences about 0.5
9. explicit: true when the user asked for it to be remembered ("remember that ..."), else false

Examples of SCOPE classification:
- "Prefers bullet points" → user (style preference, applies everywhere)
- "Report due Tuesday" → project (specific deadline for this work)
- "Works at Acme Corp" → user (fact about the person)
- "Client wants 3 sections" → project (requirement for this deliverable)

Return JSON:
{
  "memories": [
    {
      "content": "...",
      "category": "preference" | "restriction" | "fact" | "skill" | "relationship" | "goal" | "history" | "context",
      "subject": "user",
      "attribute": "location",
      "scope": "user" | "project",
      "tags": ["tag1", "tag2"],
      "entities": {"people": [], "places": [], "organizations": [], "things": []},
      "importance": 0.7,
      "explicit": false
    }
  ]
}
"""

RECONCILE_PROMPT = """You maintain a user's long-term memory. A new memory was just extracted from a conversation.
Decide how it relates to the most similar memories already stored (each with its id):

- ADD: it is new information, even if it is related to a stored memory. target_id: null.
- UPDATE: it replaces, corrects or changes one stored memory about the same thing (the user moved, changed
  jobs, changed their mind, a date moved). The stored memory will be superseded. target_id: its id.
- NOOP: a stored memory already says the same thing. target_id: its id.

Return JSON: {"action": "ADD" | "UPDATE" | "NOOP", "target_id": "<an id from the list>" | null,
"reason": "<one short sentence>"}
"""


def _check_memory(item: Any, where: str) -> Candidate:
    if not isinstance(item, dict):
        raise ValueError(f"{where} must be an object")

    def text(name: str, default: str | None = None, limit: int = 200) -> str:
        value = item.get(name, default)
        if value is None:
            value = default
        if not isinstance(value, str):
            raise ValueError(f"{where}.{name} must be a string")
        return value.strip()[:limit]

    content = text("content", limit=10_000)
    if not content:
        raise ValueError(f"{where}.content must be a non-empty string")
    category = text("category", "fact", 100).lower() or "fact"
    if category not in CATEGORIES and category.rstrip("s") in CATEGORIES:
        category = category.rstrip("s")
    if category not in CATEGORIES:
        raise ValueError(f"{where}.category must be one of {', '.join(CATEGORIES)}, not {category!r}")
    scope = text("scope", "user").lower() or "user"
    if scope not in SCOPES:
        raise ValueError(f"{where}.scope must be \"user\" or \"project\", not {scope!r}")
    tags = item.get("tags", [])
    if not isinstance(tags, list) or not all(isinstance(tag, str) for tag in tags):
        raise ValueError(f"{where}.tags must be a list of strings")
    entities = item.get("entities", {}) or {}
    if not isinstance(entities, dict) or not all(
        isinstance(key, str) and isinstance(values, list) and all(isinstance(v, str) for v in values)
        for key, values in entities.items()
    ):
        raise ValueError(f"{where}.entities must be an object whose values are lists of strings")
    importance = item.get("importance", 0.5)
    if isinstance(importance, bool) or not isinstance(importance, int | float) or not 0 <= importance <= 1:
        raise ValueError(f"{where}.importance must be a number between 0 and 1, not {importance!r}")
    explicit = item.get("explicit", False)
    if not isinstance(explicit, bool):
        raise ValueError(f"{where}.explicit must be true or false")
    return Candidate(
        content=content, category=category, subject=text("subject", "user") or "user",
        attribute=text("attribute", "").lower(),
        tags=list(dict.fromkeys(t.strip().lower()[:100] for t in tags if t.strip())),
        entities={key: [v.strip() for v in values if v.strip()] for key, values in entities.items()},
        importance=float(importance), scope=scope, explicit=explicit,
    )


def _check_memories(data: Any) -> list[Candidate]:
    if not isinstance(data, dict) or not isinstance(data.get("memories"), list):
        raise ValueError('the reply must be an object with a "memories" list')
    return [_check_memory(item, f"memories[{i}]") for i, item in enumerate(data["memories"])]


def extract_llm(text: str, *, role: str = "user", context: Sequence[str] = ()) -> list[Candidate]:
    """Memories in one message, by the configured LLM (integrations.llm.chat_json: one retry on an unusable
    reply, then LLMError; LLMUnavailable when the endpoint is down)."""
    from integrations.llm import chat_json

    if (role or "").lower() != "user" or not text or not text.strip():
        return []
    parts = []
    if context:
        parts.append("Earlier messages (context only, extract nothing from them):\n"
                     + "\n".join(f"- {line}" for line in context if line))
    parts.append(f"The user's message:\n{text.strip()}")
    return chat_json(system=EXTRACTION_PROMPT, user="\n\n".join(parts), schema_check=_check_memories)


def reconcile_llm(candidate: Candidate, similar: list[tuple[str, str]]) -> tuple[str, str | None, str]:
    """Let the LLM decide ADD / UPDATE / NOOP for `candidate` against the stored `similar` (id, content) pairs.
    Returns (action, target_id, reason); target_id is one of the given ids for UPDATE and NOOP, None for ADD."""
    from integrations.llm import chat_json

    if not similar:
        return "ADD", None, "no similar memory stored"
    ids = [str(memory_id) for memory_id, _ in similar]

    def check(data: Any) -> tuple[str, str | None, str]:
        if not isinstance(data, dict):
            raise ValueError("the reply must be a JSON object")
        action = data.get("action")
        if not isinstance(action, str) or action.strip().upper() not in ("ADD", "UPDATE", "NOOP"):
            raise ValueError(f'action must be "ADD", "UPDATE" or "NOOP", not {action!r}')
        action = action.strip().upper()
        reason = data.get("reason") or ""
        if not isinstance(reason, str):
            raise ValueError("reason must be a string")
        if action == "ADD":
            return action, None, reason.strip()
        target = data.get("target_id")
        target = str(target) if isinstance(target, str | int) and not isinstance(target, bool) else None
        if target not in ids:
            raise ValueError(f"target_id must be one of the listed ids ({', '.join(ids)}) for {action}, "
                             f"not {data.get('target_id')!r}")
        return action, target, reason.strip()

    payload = {
        "new_memory": {"content": candidate.content, "category": candidate.category, "subject": candidate.subject,
                       "attribute": candidate.attribute},
        "stored_memories": [{"id": memory_id, "content": content} for memory_id, content in zip(
            ids, (content for _, content in similar), strict=True)],
    }
    return chat_json(system=RECONCILE_PROMPT, user=json.dumps(payload, ensure_ascii=False), schema_check=check)
