"""Relative time words made absolute against the send time, where cheap and unambiguous."""

from datetime import date, datetime

import pytest

from extraction.timewords import resolve

MONDAY = datetime(2023, 5, 8, 13, 56)


@pytest.mark.parametrize(("text", "resolved"), [
    ("I went there yesterday", "I went there on 7 May 2023"),
    ("Yesterday I went there", "on 7 May 2023 I went there"),
    ("I've been sick since yesterday", "I've been sick since 7 May 2023"),
    ("I ran today", "I ran on 8 May 2023"),
    ("I fly out tomorrow", "I fly out on 9 May 2023"),
    ("We hiked last Saturday", "We hiked on Saturday, 6 May 2023"),
    ("We met last Monday", "We met on Monday, 1 May 2023"),
    ("The party is next Friday", "The party is on Friday, 12 May 2023"),
    ("I joined last weekend", "I joined on the weekend of 6 May 2023"),
    ("I graduated last week", "I graduated in the week before 8 May 2023"),
    ("I start next month", "I start in June 2023"),
    ("I moved last month", "I moved in April 2023"),
    ("I painted it last year", "I painted it in 2022"),
    ("We marry next year", "We marry in 2024"),
    ("I got it two days ago", "I got it on 6 May 2023"),
    ("I moved here 3 years ago", "I moved here in 2020"),
    ("We swam a lot last summer", "We swam a lot in summer 2022"),
    ("I ran this morning", "I ran on the morning of 8 May 2023"),
])
def test_relative_dates_become_absolute(text, resolved):
    assert resolve(text, MONDAY) == resolved


@pytest.mark.parametrize("text", ["I went there recently", "a few years ago", "I work on Friday",
                                  "in the last week"])
def test_vague_or_ambiguous_words_stay_as_said(text):
    assert resolve(text, MONDAY) == text


def test_without_a_send_time_nothing_changes_and_a_date_works_too():
    assert resolve("I went yesterday", None) == "I went yesterday"
    assert resolve("I went yesterday", date(2024, 1, 1)) == "I went on 31 December 2023"
