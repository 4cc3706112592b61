"""Dates a search query names ("in July 2023", "7 July, 2023"), and whether a moment falls within them."""

import re
from datetime import UTC, date, datetime

from core.calendar_words import MONTH_ABBREVIATIONS, MONTHS

_MONTH = "(" + "|".join(MONTHS + MONTH_ABBREVIATIONS) + r")\.?"
_DAY = r"(\d{1,2})(?:st|nd|rd|th)?"
_YEAR = r"((?:19|20)\d\d)"
_DATE_PATTERNS = (
    ("day", re.compile(rf"\b{_DAY}\s+(?:of\s+)?{_MONTH},?\s+{_YEAR}\b")),  # 7 July, 2023
    ("day_us", re.compile(rf"\b{_MONTH}\s+{_DAY},?\s+{_YEAR}\b")),  # July 7, 2023
    ("iso", re.compile(r"\b((?:19|20)\d\d)-(\d{2})-(\d{2})\b")),  # 2023-07-07
    ("month_year", re.compile(rf"\b{_MONTH},?\s+{_YEAR}\b")),  # July 2023
    ("month", re.compile(rf"\b{_MONTH}(?=\W|$)")),  # July (any year)
    ("year", re.compile(rf"\b{_YEAR}\b")),  # 2023
)
# "may" is mostly a verb: a month only after a word that introduces a time
_MAY_AS_MONTH = re.compile(r"\b(?:in|of|during|since|until|till|before|after|by|early|late|mid|last|next|this)\s+may\b")


def _month(name: str) -> int:
    name = name.rstrip(".")
    return next(i for i, month in enumerate(MONTHS, start=1) if month.startswith(name[:3]))


def query_periods(query: str) -> list[tuple]:
    """Dates the query names, as ("range", first day, day after) in proleptic ordinals, or ("month", m) for a
    month of any year: '7 July, 2023' and 'July 7, 2023' name a day, 'July 2023' a month, '2023' a year, 'in
    July' July of any year."""
    text = query.lower()
    taken: list[tuple[int, int]] = []
    periods: list[tuple] = []

    def free(span):
        return all(span[1] <= a or span[0] >= b for a, b in taken)

    for kind, pattern in _DATE_PATTERNS:
        for match in pattern.finditer(text):
            if not free(match.span()):
                continue
            try:
                if kind in ("day", "day_us", "iso"):
                    if kind == "day":
                        day, month, year = int(match[1]), _month(match[2]), int(match[3])
                    elif kind == "day_us":
                        month, day, year = _month(match[1]), int(match[2]), int(match[3])
                    else:
                        year, month, day = int(match[1]), int(match[2]), int(match[3])
                    start = date(year, month, day).toordinal()
                    periods.append(("range", start, start + 1))
                elif kind == "month_year":
                    month, year = _month(match[1]), int(match[2])
                    start = date(year, month, 1).toordinal()
                    periods.append(("range", start, date(year + month // 12, month % 12 + 1, 1).toordinal()))
                elif kind == "month":
                    if match[1].startswith("may") and not _MAY_AS_MONTH.search(text):
                        continue
                    if len(match[1].rstrip(".")) == 3 and match[1] not in MONTHS and not match[0].endswith("."):
                        # "mar", "jan"... only as full words; short forms are ambiguous ("mar", "sep")
                        continue
                    periods.append(("month", _month(match[1])))
                else:
                    year = int(match[1])
                    periods.append(("range", date(year, 1, 1).toordinal(), date(year + 1, 1, 1).toordinal()))
            except ValueError:  # 31 February and the like
                continue
            taken.append(match.span())
    return periods


def within_periods(when: float | None, periods: list[tuple]) -> bool:
    if when is None:
        return False
    day = datetime.fromtimestamp(when, tz=UTC).date()
    for period in periods:
        if period[0] == "month":
            if day.month == period[1]:
                return True
        elif period[1] <= day.toordinal() < period[2]:
            return True
    return False
