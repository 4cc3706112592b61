"""The words that name whom an owner's memories are about: "the user", the owner's own name, the name the owner
speaks under in conversations. Every memory about the owner may say them, so in a query they tell memories apart by
nothing but length; worse, they ranked every memory that says them above the one that answers ("what pet does the
user have?" put the allergies before the cat). They carry no keyword weight against the owner's memories (the
query's words leave them out: sql.QUERY_LEXEMES), and "the user" is embedded as "someone" ("she" and "he" as
"they"). The memories' texts keep them. So does the word of an idiom that says nothing of its own ("for a living").
"""

import re

from django.core.cache import cache

# extracted memories say "The user ..." (subject "user") when the speaker has no name
SELF_WORDS = "user"
# "the user" in a query drew it towards every memory that says "The user" and away from those written without it
# ("Hopes to buy a house": bench/paraphrase_needs.py)
_SELF_PHRASE = re.compile(rf"(?i)\bthe {SELF_WORDS}\b")
# a speaker's name opens the memories extracted from what they said ("Ana is allergic to peanuts.", subject
# "user"); the name that opens at least SPEAKER_SHARE of the owner's SPEAKER_SAMPLE newest such memories is theirs
# (an account that imports two people's chats has no one such name, and keeps both as words)
SPEAKER_SAMPLE = 200
SPEAKER_SHARE = 0.5
SPEAKER_CACHE_SECONDS = 600


# "she", "he" and their forms in a query mostly mean the owner, and a small model finds them alike whatever else is
# said: "What is she training for?" was 0.37 from "Grows tomatoes and herbs on her allotment" and 0.16 from "Wants to
# run the Berlin marathon next year" (0.10 and 0.20 as "they"). Embedded as "they", they draw nothing.
_THEY = {"she": "they", "he": "they", "him": "them", "his": "their", "hers": "theirs", "herself": "themselves",
         "himself": "themselves", "her": "their"}
_THEY_WORD = re.compile(r"(?i)\b(" + "|".join(_THEY) + r")\b")
# "her" is "them" where no noun follows ("get her a gift", "lend her?"), else "their" ("her birthday")
_HER_AS_OBJECT = re.compile(r"(?i)\bher\b(?=\s*(?:$|[^\w\s]|(?:a|an|the|some|something|anything|to|for|with|at|in|"
                            r"on|up|out|back|off|about|from|into|if|when|that|this|and|or|but)\b))")


def embedded_text(query: str, name: str = "") -> str:
    """What is embedded of a query: "the user" and the speaker's own `name` said as "someone", "she" and "he" as
    "they". A name draws a small model towards every memory that says it ("a bottle of wine for Imogen?" put
    "Imogen went to Lisbon" before "Doesn't drink alcohol")."""
    query = _SELF_PHRASE.sub("someone", query)
    if name:
        query = re.sub(rf"\b{re.escape(name)}\b", "someone", query)
    query = _HER_AS_OBJECT.sub("them", query)
    return _THEY_WORD.sub(lambda match: _THEY[match.group(1).lower()], query)


def speaker_name(cursor, owner_id: int) -> str:
    """The name the owner's own extracted memories open with, or "" (kept SPEAKER_CACHE_SECONDS per owner: one
    statement over at most SPEAKER_SAMPLE rows, found by the (owner, subject) index)."""
    key = f"memories:speaker:{owner_id}"
    name = cache.get(key)
    if name is None:
        cursor.execute(
            "SELECT substring(m.content FROM '^([[:upper:]][[:alpha:]''-]+)[ '']') AS name, count(*) OVER () "
            "FROM (SELECT content FROM memories_memory WHERE owner_id = %s AND subject = %s "
            "ORDER BY created_at DESC LIMIT %s) AS m", [owner_id, SELF_WORDS, SPEAKER_SAMPLE])
        rows = cursor.fetchall()
        counts: dict[str, int] = {}
        for found, _ in rows:
            found = re.sub(r"['’]s$", "", found or "")  # "Imogen's son Rory ..." opens with Imogen too
            if found and found.lower() != "the":
                counts[found] = counts.get(found, 0) + 1
        best = max(counts.items(), key=lambda item: item[1], default=("", 0))
        name = best[0] if rows and best[1] >= SPEAKER_SHARE * rows[0][1] else ""
        cache.set(key, name, SPEAKER_CACHE_SECONDS)
    return name


# idioms whose word says nothing of its own: "what does she do for a living?" is stemmed to "live" and ranked "Lives
# in Paris" and "Loves live jazz" above the job; the word carries no keyword weight either
IDIOMS = {"for a living": "living"}


def idiom_words(query: str) -> str:
    """The words of IDIOMS the query says as part of their idiom."""
    lowered = query.lower()
    return " ".join(word for phrase, word in IDIOMS.items() if phrase in lowered)


def owner_words(cursor, owner) -> str:
    """The words a query's full-text side leaves out for `owner` (a user or an id): SELF_WORDS, the account's own
    name when it has one, and the name its extracted memories open with."""
    names = [getattr(owner, "first_name", ""), getattr(owner, "last_name", ""),
             speaker_name(cursor, getattr(owner, "pk", owner))]
    return " ".join([SELF_WORDS, *(name for name in names if name)])
