"""Relative time words resolved against the moment a message was sent, where that is cheap and unambiguous:
"yesterday" said on 8 May 2023 -> "on 7 May 2023", "last Saturday" -> "on Saturday, 6 May 2023", "last week" ->
"in the week before 8 May 2023", "next month" -> "in June 2023", "last year" -> "in 2022", "two days ago" ->
"on 6 May 2023". A memory read months later ("When did Caroline go to the support group?") then still says when.
Months without a year and weekdays in a plain past or future sentence are completed by extraction.months; anything
vaguer ("recently", "a few years ago") is left as it was said.
"""

from __future__ import annotations

import re
from datetime import date, datetime, timedelta

from core.calendar_words import WEEKDAYS
from core.number_words import NUMBER_WORDS
from extraction import months, nlp

_NUMBERS = {"a": 1, "an": 1, **NUMBER_WORDS, "a couple of": 2, "a couple": 2}
_SEASONS = ("spring", "summer", "fall", "autumn", "winter")
# a preposition already in front of the phrase: "since yesterday" -> "since 7 May 2023", not "since on ..."
_LEAD = r"(?:(?P<prep>\b(?:since|until|till|by|before|after|from|for|as of|of)\s+))?"


def _day(d: date) -> str:
    return f"{d.day} {d:%B} {d.year}"


def _weekday(d: date) -> str:
    return f"{d:%A}, {_day(d)}"


def _month(d: date, months: int) -> date:
    index = d.year * 12 + d.month - 1 + months
    return date(index // 12, index % 12 + 1, 1)


def _season_year(season: str, today: date, which: str) -> tuple[str, date]:
    """"last summer" said in May 2023 is summer 2022, said in October 2023 it is summer 2023; "this winter" (or
    "in the winter", past or future) said in January 2024 is the winter of 2023-2024."""
    start = _SEASON_START[season]
    end = {"spring": 5, "summer": 8, "fall": 11, "autumn": 11, "winter": 2}[season]
    if which != "last" and (start <= today.month <= end or season == "winter" and today.month in (12, 1, 2)):
        year = today.year - 1 if season == "winter" and today.month < 12 else today.year
    elif which == "last":
        year = today.year if (today.month > end and season != "winter") else today.year - 1
        if season == "winter":
            year = today.year - 1 if today.month > 2 else today.year - 2
    else:  # next / this, not now
        year = today.year if today.month < start else today.year + 1
    phrase = f"the winter of {year}-{year + 1}" if season == "winter" else f"{season} {year}"
    return phrase, date(year, start, 1)


def _rules(now: datetime) -> list[tuple[str, object]]:
    today = now.date()
    weekday = "|".join(WEEKDAYS)
    number = "|".join(sorted(map(re.escape, _NUMBERS), key=len, reverse=True)) + r"|\d{1,2}"

    def on(d: date) -> tuple[str, str, date]:
        return "on ", _day(d), d

    def last_weekday(m: re.Match) -> tuple[str, str]:
        target = WEEKDAYS.index(m["day"].lower())
        back = (today.weekday() - target) % 7 or 7
        return "on ", _weekday(today - timedelta(days=back)), today - timedelta(days=back)

    def next_weekday(m: re.Match) -> tuple[str, str]:
        target = WEEKDAYS.index(m["day"].lower())
        ahead = (target - today.weekday()) % 7 or 7
        return "on ", _weekday(today + timedelta(days=ahead)), today + timedelta(days=ahead)

    def ago(m: re.Match) -> tuple[str, str] | None:
        count = int(m["n"]) if m["n"].isdigit() else _NUMBERS[m["n"].lower()]
        unit = m["unit"].lower().rstrip("s")
        if unit == "day":
            return "on ", _day(today - timedelta(days=count)), now - timedelta(days=count)
        if unit == "week":
            return "in ", f"the week of {_day(today - timedelta(weeks=count))}", now - timedelta(weeks=count)
        if unit == "month":
            return "in ", f"{_month(today, -count):%B %Y}", _month(today, -count)
        return "in ", str(today.year - count), date(today.year - count, 1, 1)

    def season(m: re.Match) -> tuple[str, str, date]:
        which, name = m["which"].lower(), m["season"].lower()
        phrase, start = _season_year(name, today, which)
        if which == "this" and start > today and months.past_tense(m.string) and not (
                months.CLEARLY_FUTURE.search(m.string)):  # "I went to Kyoto this winter", said in June
            phrase, start = _season_year(name, today, "last")
        return "in ", phrase, start

    def saturday_before() -> date:
        back = (today.weekday() - 5) % 7 or 7
        if today.weekday() == 6:  # on a Sunday, "last weekend" is the one before this one
            back += 7
        return today - timedelta(days=back)

    return [
        (r"(?:the day before yesterday)", lambda m: on(today - timedelta(days=2))),
        (r"yesterday", lambda m: on(today - timedelta(days=1))),
        (r"last night", lambda m: ("on ", f"the night of {_day(today - timedelta(days=1))}",
                                   today - timedelta(days=1))),
        (r"today", lambda m: on(today)),
        (r"tonight", lambda m: ("on ", f"the night of {_day(today)}", today)),
        (r"this (?P<part>morning|afternoon|evening)", lambda m: ("on ", f"the {m['part']} of {_day(today)}", today)),
        (r"(?:the day after tomorrow)", lambda m: on(today + timedelta(days=2))),
        (r"tomorrow", lambda m: on(today + timedelta(days=1))),
        (rf"last (?P<day>{weekday})", last_weekday),
        (rf"(?:next|this coming|this) (?P<day>{weekday})", next_weekday),
        (r"last weekend", lambda m: ("on ", f"the weekend of {_day(saturday_before())}", saturday_before())),
        (r"this weekend|next weekend", lambda m: (
            "on ", f"the weekend of {_day(today + timedelta(days=(5 - today.weekday()) % 7))}",
            today + timedelta(days=(5 - today.weekday()) % 7))),
        (r"last week", lambda m: ("in ", f"the week before {_day(today)}", now - timedelta(days=7))),
        (r"this week", lambda m: ("in ", f"the week of {_day(today)}", today - timedelta(days=today.weekday()))),
        (r"next week", lambda m: ("in ", f"the week after {_day(today)}", today + timedelta(days=7))),
        (r"last month", lambda m: ("in ", f"{_month(today, -1):%B %Y}", _month(today, -1))),
        (r"this month", lambda m: ("in ", f"{today:%B %Y}", _month(today, 0))),
        (r"next month", lambda m: ("in ", f"{_month(today, 1):%B %Y}", _month(today, 1))),
        (r"last year", lambda m: ("in ", str(today.year - 1), date(today.year - 1, 1, 1))),
        (r"this year", lambda m: ("in ", str(today.year), date(today.year, 1, 1))),
        (r"next year", lambda m: ("in ", str(today.year + 1), date(today.year + 1, 1, 1))),
        (rf"(?P<which>last|next|this) (?P<season>{'|'.join(_SEASONS)})", season),
        (rf"(?P<n>{number}) (?P<unit>days?|weeks?|months?|years?) ago", ago),
    ]


def resolve(text: str, when: datetime | date | None) -> str:
    """`text` with its relative time words made absolute for a message sent at `when` (unchanged without it)."""
    return resolve_dated(text, when)[0]


def resolve_dated(text: str, when: datetime | date | None) -> tuple[str, datetime | None]:
    """`resolve(text, when)` and when the statement became true, if it says so and that is not after `when`:
    "I moved to Lyon in March" -> 1 March; "since May" -> 1 May; "last week we moved" -> `when` minus a week;
    "41 since yesterday" -> yesterday. None for a plan, a deadline ("by June", "until May") or no date at all."""
    if when is None:
        return text, None
    now = when if isinstance(when, datetime) else datetime(when.year, when.month, when.day)
    starts: list[tuple[int, str, date | datetime]] = []
    stated = months.stated(text)  # dates written in full ("in March 2023") count when nothing relative does
    for pattern, make in _rules(now):
        regex = re.compile(rf"{_LEAD}(?:\b(?:on|in|during|at)\s+)?(?<!\bthe\s)\b(?P<phrase>{pattern})\b", re.IGNORECASE)

        def replace(m: re.Match, make=make) -> str:
            made = make(m)
            if made is None:
                return m.group(0)
            preposition, phrase, start = made
            starts.append((m.start(), (m["prep"] or "").strip().lower(), start))
            if not m.string[:m.start()].strip() and re.match(r"\s+(?:was|is|will be)\b", m.string[m.end():]):
                return phrase  # the date is the subject: "Last Friday was my final day" -> "Friday, 28 June ... was"
            if re.match(r"['’]s\b", m.string[m.end():]):  # "during yesterday's class": its own preposition
                return m.string[m.start():m.start("phrase")] + phrase
            return (m["prep"] or preposition) + phrase

        text = regex.sub(replace, text)
    text = months.weekdays(months.complete(text, now.date(), starts), now.date(), starts)
    text = _seasons(text, now.date(), starts)
    return text, _became_true(text, now, starts or stated)


# a season said without a year: "we moved in the spring", "I'm off to Peru in the summer"
_SEASON = re.compile(rf"(?i)\b(?P<prep>in|since|over|during|from|through|until|by)\s+(?:the\s+)?"
                     rf"(?P<mod>early |late |mid-?)?(?P<season>{'|'.join(_SEASONS)})\b"
                     r"(?:\s+(?:of\s+)?(?P<year>(?:19|20)\d\d)\b)?")
_SEASON_START = {"spring": 3, "summer": 6, "fall": 9, "autumn": 9, "winter": 12}


def _arranged(text: str) -> bool:
    """An arrangement in the present progressive: "I'm moving to Peru in the summer" (not "it is amazing")."""
    doc = nlp.parse(text)
    for token in doc:
        before = token.i - 1
        while before >= 0 and doc[before].tag_ == "RB":
            before -= 1
        if token.tag_ == "VBG" and before >= 0 and doc[before].lower_ in ("am", "is", "are", "'m", "'re") and (
                doc[before].dep_ in ("aux", "auxpass") or doc[before].head == token):
            return True
    return False


def _seasons(text: str, today: date, starts: list) -> str:
    """`text` with a year on a season said without one, when the tense says which way (past: the one now or just
    gone; future: the one now or next); a habit ("I swim in the summer") is left as said."""
    if months.RECURRING.search(text) or not _SEASON.search(text):
        return text
    way = "future" if months.CLEARLY_FUTURE.search(text) or _arranged(text) else (
        "past" if months.past_tense(text) else None)

    def replace(m: re.Match) -> str:
        season = m["season"].lower()
        if m["year"]:  # said in full: when it began, as written
            starts.append((m.start(), m["prep"].lower(), date(int(m["year"]), _SEASON_START[season], 1)))
            return m.group(0)
        since = m["prep"].lower() == "since"  # "living in Leeds since the spring": it began then
        if way is None and not since:
            return m.group(0)
        phrase, start = _season_year(season, today, "next")  # the one now, else the next
        if (way == "past" or since) and start > today:
            phrase, start = _season_year(season, today, "last")
        if way == "past" or since:  # a plan's season is no start of what holds
            starts.append((m.start(), m["prep"].lower(), start))
        return f"{m['prep']} {m['mod'] or ''}{phrase}"

    return _SEASON.sub(replace, text)


_NOT_A_START = {"until", "till", "by", "before"}
_PLAN = re.compile(rf"(?i)\b(?:{months.PLAN_WORDS}|want to|intend\w*|scheduled|due)\b")


def _became_true(text: str, now: datetime, starts: list[tuple[int, str, date | datetime]]) -> datetime | None:
    if _PLAN.search(text) or months.RECURRING.search(text):
        return None
    for _, prep, start in sorted(starts, key=lambda item: item[0]):
        if prep in _NOT_A_START:
            continue
        moment = start if isinstance(start, datetime) else datetime(start.year, start.month, start.day)
        if moment.tzinfo is None and now.tzinfo is not None:
            moment = moment.replace(tzinfo=now.tzinfo)
        elif moment.tzinfo is not None and now.tzinfo is None:
            moment = moment.replace(tzinfo=None)
        return moment if moment <= now else None
    return None
