"""The calendar's words are the calendar's: the names Python's own calendar gives, in order, and the short forms
are the months' first letters."""

import calendar

from core.calendar_words import MONTH_ABBREVIATIONS, MONTHS, WEEKDAYS


def test_month_and_weekday_names_are_the_calendars_in_order():
    assert MONTHS == tuple(name.lower() for name in calendar.month_name[1:])
    assert WEEKDAYS == tuple(name.lower() for name in calendar.day_name)


def test_each_short_form_starts_one_month_and_every_month_but_may_has_one():
    starts = {next(month for month in MONTHS if month.startswith(short)) for short in MONTH_ABBREVIATIONS}
    assert starts == set(MONTHS) - {"may"}
