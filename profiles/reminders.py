"""Reminders said in a message: "remind me to call mom on Friday", "my dentist appointment is on 3 March at 10".
The due time is read by dateparser against the message's send time in the user's time zone (dates in the future
preferred: "Friday" is the next one); a date without a time of day is due at DEFAULT_HOUR. A later message that
says the task was done ("I called mom") or cancelled closes it. Pure functions: the writes are in
profiles.reminder_services."""

import re
from calendar import monthrange
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from zoneinfo import ZoneInfo

from dateparser.search import search_dates
from lemminflect import getAllLemmas
from spacy.lang.en.stop_words import STOP_WORDS

from extraction.slots import MONTHS

DEFAULT_HOUR = 9  # a reminder for a day without a time is due that morning

# "remind me" asked of the assistant, not said of something else ("I need the sea to remind me how small ...")
REQUEST = re.compile(r"(?i)\b(?:(?:(?<=you to )|(?<!to ))remind me|don'?t let me forget|do not let me forget|"
                     r"i need to remember|note that i need)\s+(?:to |that |about |of )?"
                     # "remind me what a p value is": a question to answer now
                     r"(?!(?:what|how|who|which|why|whether)\b)(?P<rest>[^.!?\n]{3,300})")
# the task said first, the request after it: "I need to pick up the dry cleaning tomorrow, can you remind me?"
REQUEST_AFTER = re.compile(r"(?i)(?:^|[.!?]\s+)(?:i (?:need|have|got|must|should) to |i'?ve got to |i must )?"
                           r"(?P<rest>[^.!?\n]{3,300}?)(?<!\bto)[,;:]?\s+"
                           r"(?:(?:can|could|would|will) you |please |pls )?remind me(?: about it| of it| to do it)?\b"
                           r"(?!\s+(?:what|how|who|which|why|whether)\b)")
APPOINTMENT = re.compile(
    r"(?i)\b(?:my|our|the|i have an?|i've got an?|there'?s an?|we have an?)\s+(?P<what>(?:[\w'-]+ ){0,3}?"
    r"(?:appointment|meeting|interview|exam|flight|deadline|reservation|check-?up|surgery|class|presentation))\b(?P<rest>[^.!?\n]{3,200})")
CANCEL = re.compile(r"(?i)\b(?:cancel(?:l?ed)?|call(?:ed)? off|no longer need|never ?mind|forget about)\b")
BARE_HOUR = re.compile(r"(?i)\b(at|by|around) (\d{1,2})\b(?![:.]?\d|\s*(?:am|pm|h\b|o'clock))")
TIME_SAID = re.compile(r"(?i)\d{1,2}(?::\d{2})?\s*(?:am|pm)|\d{1,2}:\d{2}|\bnoon\b|\bmidnight\b|\bo'clock\b|\bin \d+ "
                       r"(?:minutes?|hours?)\b|\bhours?\b|\bminutes?\b|\btonight\b|\bmorning\b|\bevening\b")
NOT_YET = re.compile(r"(?i)\b(?:need to|needs to|have to|has to|must|will|'ll|going to|gonna|should|want to|plan to|"
                     r"forgot to|forget to|didn'?t|did not|haven'?t|have not|not yet|still)\b")
_WORD = re.compile(r"[a-z]+")
_MONTH = "|".join(MONTHS)
# where an explicit date starts ("on May 10", "3 March"): read from there, so that words before it ("Mother's Day")
# are not taken for a date
DATE_START = re.compile(rf"(?i)\b(?:on )?(?:the )?(?:\d{{1,2}}(?:st|nd|rd|th)? (?:of )?(?:{_MONTH})\b|(?:{_MONTH})\.? "
                        r"\d{1,2}(?:st|nd|rd|th)?\b)")
# "on the 5th" without a month: the next 5th
DAY_ONLY = re.compile(rf"(?i)\b(?:on )?the (\d{{1,2}})(?:st|nd|rd|th)\b(?! (?:of )?(?:{_MONTH})\b)")
_FILLER = re.compile(r"(?i)^(?:to|that|about|is|are|was|'s)\s+|\s+(?:on|at|by|in|for|this|next|is)$")


@dataclass(frozen=True)
class Found:
    """A reminder read from a text: what (`task`), when (`due_at`, aware, or None) and how it was said."""

    task: str
    due_at: datetime | None
    kind: str  # request | appointment


def _due(phrase: str, said_at: datetime, zone: str) -> tuple[datetime | None, str]:
    """The first date in `phrase` read against `said_at` in `zone`, and the phrase without it."""
    tz = ZoneInfo(zone)
    local = said_at.astimezone(tz)
    bare = bool(BARE_HOUR.search(phrase))
    text = BARE_HOUR.sub(lambda m: f"{m[1]} {m[2]}:00", phrase)  # "at 10" is 10:00, not the year 2010
    text = DAY_ONLY.sub(lambda m: _next_day_of_month(int(m[1]), local), text)
    settings = {"RELATIVE_BASE": local.replace(tzinfo=None), "PREFER_DATES_FROM": "future", "TIMEZONE": zone,
                "RETURN_AS_TIMEZONE_AWARE": True, "PREFER_DAY_OF_MONTH": "first"}
    start = DATE_START.search(text)
    found = (start and search_dates(text[start.start():], languages=["en"], settings=settings)) or search_dates(
        text, languages=["en"], settings=settings)
    if not found:
        return None, phrase
    words, when = found[0]
    if len(words.strip()) < 3 or words.strip().isdigit():  # "a" or a lone number is no date
        return None, phrase
    when = when.astimezone(tz)
    if not TIME_SAID.search(words) and when.time() == time(0, 0):
        when = when.replace(hour=DEFAULT_HOUR)
    if when < local and when.date() == local.date():  # a time of day already past: "at 7:00" is tomorrow's
        when += timedelta(hours=12) if bare and when + timedelta(hours=12) > local else timedelta(days=1)
    day_said = bool(re.search(r"[a-z]", re.sub(r"(?i)\b(?:at|by|around)\b", "", words), re.I))
    if bare and when.hour < 12 and not day_said:  # "at 4" said at 14:00 is 16:00 today rather than 4:00 tomorrow
        sooner = when.replace(hour=when.hour + 12) - timedelta(days=1)
        if local < sooner < when and sooner.date() == local.date():
            when = sooner
    elif bare and day_said and 1 <= when.hour <= 6:  # "Friday at 6": six in the evening
        when += timedelta(hours=12)
    rest = text.replace(words, " ")
    return when, rest


def _next_day_of_month(day: int, local: datetime) -> str:
    """The next date (today included) whose day of the month is `day`, said as "on <Month> <day> <year>"."""
    year, month = local.year, local.month
    for _ in range(13):
        if day <= monthrange(year, month)[1] and (year, month, day) >= (local.year, local.month, local.day):
            return f"on {date(year, month, day):%B} {day} {year}"
        year, month = (year + 1, 1) if month == 12 else (year, month + 1)
    return f"the {day}th"


def _task(text: str) -> str:
    task = " ".join(text.split()).strip(" ,;:-")
    for _ in range(3):
        task = _FILLER.sub("", task).strip(" ,;:-")
    return task


def reminder_in(text: str, *, said_at: datetime, zone: str = "UTC") -> Found | None:
    """The reminder `text` asks for or the appointment it mentions, or None."""
    if m := REQUEST.search(text) or REQUEST_AFTER.search(text):
        due, rest = _due(m["rest"], said_at, zone)
        task = _task(rest)
        return Found(task, due, "request") if task else None
    if m := APPOINTMENT.search(text):
        due, _ = _due(m["rest"], said_at, zone)
        if due is None:  # an appointment without a date is no reminder
            return None
        return Found(_task(m["what"]), due, "appointment")
    return None


def lemmas(text: str) -> set[str]:
    """The words of `text` that carry meaning, each as its lemmas ("called" -> call)."""
    found = set()
    for word in _WORD.findall(text.lower()):
        if word in STOP_WORDS or len(word) < 2:
            continue
        found.add(word)
        found.update(lemma for forms in getAllLemmas(word).values() for lemma in forms)
    return found


def closes(text: str, task: str) -> str | None:
    """Whether a later message says the task is done ("I called mom") or cancelled ("the dentist appointment is
    cancelled"): every meaning word of the task is in it, and it is a statement, not a question or a new request.
    Returns "done", "cancelled" or None."""
    if text.rstrip().endswith("?") or REQUEST.search(text) or REQUEST_AFTER.search(text) or NOT_YET.search(text):
        return None
    wanted = {w for w in _WORD.findall(task.lower()) if w not in STOP_WORDS and len(w) > 1}
    if not wanted:
        return None
    said = lemmas(text)
    if not all(w in said or any(lemma in said for forms in getAllLemmas(w).values() for lemma in forms)
               for w in wanted):
        return None
    return "cancelled" if CANCEL.search(text) else "done"
