"""Moments the whole stack can read back. PostgreSQL stores years 4713 BC to 294276 AD, but Python's datetime
(and psycopg reading a row, Django showing it in a time zone) only years 1 to 9999: a stored
`9999-12-31T23:59:59-12:00` (year 10000 in UTC) made every read of its owner's memories fail, and the periodic
expiry with them. Every moment a client sends is checked against this range, with a day's margin on each side so
that it can be shown in any time zone (UTC-12 to UTC+14)."""

import datetime

from django.core.exceptions import ValidationError

EARLIEST = datetime.datetime(1, 1, 2, tzinfo=datetime.UTC)
LATEST = datetime.datetime(9999, 12, 30, tzinfo=datetime.UTC)
OUT_OF_RANGE = "Must be between 0001-01-02 and 9999-12-30 (UTC)."


def unreadable(value: datetime.datetime) -> str | None:
    """Why `value` cannot be stored and read back, or None if it can. A naive value is taken as UTC (the widest
    reading: the check is on the moment, not on the zone it was written in)."""
    if value.tzinfo is None or value.utcoffset() is None:
        value = value.replace(tzinfo=datetime.UTC)
    try:
        utc = value.astimezone(datetime.UTC)
    except OverflowError:
        return OUT_OF_RANGE
    if not EARLIEST <= utc <= LATEST:
        return OUT_OF_RANGE
    return None


def check_moment(value) -> None:
    """A field validator (Django and DRF both take it): ValidationError for a moment outside the readable range."""
    if isinstance(value, datetime.datetime):
        problem = unreadable(value)
        if problem:
            raise ValidationError(problem)
