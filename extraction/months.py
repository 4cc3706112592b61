"""Dates said without a year (or a week), completed against the send time: "since May" said on 20 June 2024 ->
"since May 2024" (the most recent May not after it), "starts school in September" -> "in September 2024" (the next one),
"on June 14" -> "on 14 June 2024". A recurring date ("her birthday is on June 14", "turns 7 on June 14") gets
the day-month order but no year. A bare weekday is dated only when the tense says which way: "I turned 35 on
Tuesday" -> the last Tuesday, "I'm seeing her on Friday" is left as said (now or next week?), "I'll call on
Friday" -> the next Friday. dateparser picks the year (past or future by the sentence's tense) and reads
dates written in full ("in March 2023", "on 3 May 2023", "in 2019").
"""

from __future__ import annotations

import re
from datetime import date, datetime

from core import calendar_words
from extraction import english

MONTHS = [month.title() for month in calendar_words.MONTHS]
_MONTH_NAMES = calendar_words.alternation(calendar_words.MONTHS)
_MONTH = rf"(?P<month>{_MONTH_NAMES}|{calendar_words.alternation(calendar_words.MONTH_ABBREVIATIONS)})\.?"
_ORD = r"(?:st|nd|rd|th)?"
# a month without a year, after a preposition or with a day: "since May", "in early March", "June 14th"
_PARTIAL = re.compile(
    rf"\b(?P<prep>(?i:back |sometime |around |starting |ever since |since |in |from |until |till |by |before |"
    rf"after |on |during |of |to |through |at |last |next |this past |this coming |this |as of )+)?"
    rf"(?P<mod>(?:early|late|mid|the end of|the beginning of|the start of|the middle of)[\s-]+)?"
    rf"(?:(?P<the>the\s+)?(?P<d1>\d{{1,2}}){_ORD}\s+(?:of\s+)?)?{_MONTH}(?!\s+\d{{1,2}}{_ORD},?\s+\d{{4}})(?:\s+(?P<d2>\d{{1,2}}){_ORD}(?![\d:]))?"
    rf"(?!\w)(?!,?\s+\d{{4}})")
_FULL = re.compile(
    rf"\b(?P<prep>since|in|from|on|until|till|by|before|after|as of)\s+"
    rf"(?P<date>(?:\d{{1,2}}{_ORD}\s+(?:of\s+)?)?(?:{_MONTH_NAMES})(?:\s+\d{{1,2}}{_ORD})?,?\s+(?P<year>\d{{4}})"
    rf"|(?P<only>(?:19|20)\d{{2}}))\b")
RECURRING = re.compile(r"(?i)\b(?:birthday|bday|anniversary|name day|every|each|annual\w*|yearly|turns? \d+|"
                       r"turning \d+)\b")
_PAST = re.compile(r"(?i)\b(?:ago|last|since|back|this past)\b")
# words that say a statement is a plan (not "plant-based", not "planet")
PLAN_WORDS = r"will|'ll|going to|gonna|plan(?:s|ned|ning)?|hop(?:e|ing) to|about to"
_FUTURE = re.compile(rf"(?i)\b(?:{PLAN_WORDS}|next|this coming|want to|upcoming|soon)\b")
_DIRECTIONS = {"last": "past", "this past": "past", "since": "past", "ever since": "past", "back": "past",
               "next": "future", "this coming": "future"}


def _parse(text: str, settings: dict) -> datetime | None:
    import dateparser  # on first use: importing it costs every process a quarter of a second

    return dateparser.parse(text, languages=["en"], settings=settings)


def _direction(text: str, prep: str) -> str:
    for word, direction in _DIRECTIONS.items():
        if re.search(rf"\b{word}\b", prep):
            return direction
    if _FUTURE.search(text):
        return "future"
    return "past" if _PAST.search(text) or past_tense(text) else "future"


def past_tense(text: str) -> bool:
    """A verb in the past tense ("moved", "broke", "split"), by the grammar's one list."""
    return any(english.is_past_tense(word) for word in re.findall(r"[A-Za-z]+", text))


# a month chat writes in lower case, after a word for time ("since january"); not "may" or "march" (verbs)
_LOWER_MONTH = re.compile(r"\b(?P<prep>(?:since|in|from|until|till|by|before|after|last|next|early|late|mid|"
                          r"end of|start of|beginning of)[\s-]+)(?P<month>" + "|".join(
                              m for m in calendar_words.MONTHS if m not in ("may", "march")) + r")\b"
                          # "in march", "since may": after these, no verb
                          r"|\b(?P<prep2>(?:in|since|until|till)\s+)(?P<month2>may|march)\b")


def complete(text: str, today: date, starts: list) -> str:
    """`text` with a year on each month said without one; each completed date's first day goes to `starts` as
    (position, preposition, date)."""
    recurring = bool(RECURRING.search(text))
    text = _LOWER_MONTH.sub(lambda m: f"{m['prep'] or m['prep2']}{(m['month'] or m['month2']).title()}", text)

    def replace(m: re.Match) -> str:
        prep, month = (m["prep"] or "").lower(), m["month"]
        if month == "May" and (not (prep or m["d1"] or m["d2"]) or re.match(
                r"\s+(?:I|we|you|he|she|they|it)\b", text[m.end():])) or m["month"].islower():
            return m.group(0)
        if (month.rstrip(".").lower() in calendar_words.MONTH_ABBREVIATIONS and not (m["d1"] or m["d2"])
                and prep.split()[-1:] in (["to"], ["at"], ["of"], ["on"], ["through"])):
            return m.group(0)  # "I report to Jan now": a short month without a day after to/at/of/on/through is a name
        if text[m.end():m.end() + 2] == "'s" or (m["the"] and recurring):
            return m.group(0)  # "to May's party"; "the 12th of October" needs nothing more when it recurs
        if not prep and not (m["d1"] or m["d2"] or m["mod"]):
            return m.group(0)  # a bare capitalised month: a name as often as a date
        day = m["d1"] or m["d2"]
        number = MONTHS.index(next(name for name in MONTHS if name.startswith(month[:3].title()))) + 1
        words = f"{int(day)} {MONTHS[number - 1]}" if day else MONTHS[number - 1]
        lead = re.sub(r"(?i)\b(?:last|next|this past|this coming|this)\s+", "", m["prep"] or "")
        if lead.strip().lower() in ("", "back", "sometime", "around", "starting"):
            lead = (lead + ("on " if day else "in ")) if (m["prep"] or "").strip().lower() in (
                "last", "next", "this past", "this coming", "this") else lead
        if recurring:
            return f"{lead}{m['mod'] or ''}{words}"
        parsed = _parse(f"{day or 1} {MONTHS[number - 1]}", {
            "RELATIVE_BASE": datetime(today.year, today.month, today.day),
            "PREFER_DATES_FROM": _direction(text, prep), "PREFER_DAY_OF_MONTH": "first"})
        if parsed is None:
            return m.group(0)
        year = parsed.year
        if not day and number == today.month:
            year = today.year  # "in June" said in June: this one, whichever way the sentence looks
        starts.append((m.start(), prep.split()[-1] if prep.split() else "", date(year, number, int(day or 1))))
        return f"{lead}{m['mod'] or ''}{words} {year}"

    return _PARTIAL.sub(replace, text)


def stated(text: str) -> list[tuple[int, str, date]]:
    """Dates written with their year, as (position, preposition, first day)."""
    found = []
    for m in _FULL.finditer(text):
        if m["only"]:
            found.append((m.start(), m["prep"].lower(), date(int(m["only"]), 1, 1)))
            continue
        parsed = _parse(m["date"], {"PREFER_DAY_OF_MONTH": "first"})
        if parsed is not None:
            found.append((m.start(), m["prep"].lower(), parsed.date()))
    return found


_DAYS = tuple(day.title() for day in calendar_words.WEEKDAYS)
_WEEKDAY = re.compile(rf"\b(?P<prep>(?i:on|since|last|this past|by|until|till|before|as of|from|after|starting) )?"
                      rf"(?P<day>{'|'.join(_DAYS)})\b(?!,? \d)")
_DAY_IS_SUBJECT = re.compile(r"\s+(?:was|is|were|will be)\b")
CLEARLY_FUTURE = re.compile(rf"(?i)\b(?:{PLAN_WORDS}|this coming)\b")


def weekdays(text: str, today: date, starts: list) -> str:
    """`text` with "on Tuesday" dated ("on Tuesday, 18 June 2024") when its tense is plain past or future."""
    if CLEARLY_FUTURE.search(text):
        direction = 1
    elif past_tense(text):
        direction = -1
    else:
        return text

    def replace(m: re.Match) -> str:
        target = _DAYS.index(m["day"])
        delta = ((today.weekday() - target) % 7 or 7) * -1 if direction < 0 else (target - today.weekday()) % 7 or 7
        day = date.fromordinal(today.toordinal() + delta)
        # a day that is the subject ("Friday was my last day") takes no preposition
        prep = (m["prep"] or ("" if _DAY_IS_SUBJECT.match(text, m.end()) else "on ")).lower()
        prep = "on " if prep.strip() in ("last", "this past") else prep
        starts.append((m.start(), prep.strip(), day))
        return f"{prep}{m['day']}, {day.day} {day:%B} {day.year}"

    return _WEEKDAY.sub(replace, text)
