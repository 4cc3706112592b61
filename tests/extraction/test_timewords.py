"""Relative time words made absolute against the send time, where cheap and unambiguous."""

from datetime import UTC, date, datetime

import pytest

from extraction.timewords import resolve, resolve_dated

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
    ("I met Anna during yesterday's yoga class", "I met Anna during 7 May 2023's yoga class"),
    ("Today's lecture was dull", "8 May 2023's lecture was dull"),
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


# --- when a statement became true -----------------------------------------------------------------------------

THURSDAY = datetime(2024, 6, 20, 10, 30)


@pytest.mark.parametrize(("text", "start"), [
    ("I moved to Lyon in March for a new job", datetime(2024, 3, 1)),
    ("we've been living in Porto since May", datetime(2024, 5, 1)),
    ("last week we moved again", datetime(2024, 6, 13, 10, 30)),  # the send time minus a week
    ("I'm 41 since yesterday", datetime(2024, 6, 19)),
    ("I bought a Skoda two weeks ago", datetime(2024, 6, 6, 10, 30)),
    ("I started a pottery class last month", datetime(2024, 5, 1)),
    ("I joined Siemens in March 2023", datetime(2023, 3, 1)),
    ("I've been vegan since 2019", datetime(2019, 1, 1)),
    ("we split up last summer", datetime(2023, 6, 1)),
    ("I changed my number last Tuesday", datetime(2024, 6, 18)),
    ("I turned 35 on Tuesday", datetime(2024, 6, 18)),  # a bare weekday in a past sentence: the last one
])
def test_the_date_a_statement_became_true(text, start):
    assert resolve_dated(text, THURSDAY)[1] == start


@pytest.mark.parametrize("text", [
    "I live in Grenoble",  # no date: the caller uses the send time
    "I'm flying to Rome next Friday",  # a plan
    "I'll start at Doctolib in May",
    "I lived in Paris until May",  # when it stopped, not when it began
    "my daughter turns 7 on June 14",  # a recurring date
    "I have to renew my passport by March",
])
def test_no_start_without_one_said_or_for_plans_deadlines_and_recurring_dates(text):
    assert resolve_dated(text, THURSDAY)[1] is None


def test_the_start_keeps_the_send_times_zone():
    sent = datetime(2024, 6, 20, 10, 30, tzinfo=UTC)
    assert resolve_dated("I moved to Lyon in March", sent) == ("I moved to Lyon in March 2024",
                                                              datetime(2024, 3, 1, tzinfo=UTC))
    assert resolve_dated("I moved to Lyon in March", None) == ("I moved to Lyon in March", None)


@pytest.mark.parametrize(("text", "resolved"), [
    ("I turned 35 on Tuesday", "I turned 35 on Tuesday, 18 June 2024"),
    ("I'll call the plumber on Monday", "I'll call the plumber on Monday, 24 June 2024"),
    ("I'm seeing her on Friday", "I'm seeing her on Friday"),  # this week or next: left as said
    ("Monday was my last day at Zalando", "Monday, 17 June 2024 was my last day at Zalando"),  # the day is the subject
])
def test_a_bare_weekday_is_dated_when_the_tense_says_which_way(text, resolved):
    assert resolve_dated(text, THURSDAY)[0] == resolved


@pytest.mark.parametrize(("text", "when", "resolved", "start"), [
    ("We moved to Leeds in the spring", THURSDAY, "We moved to Leeds in spring 2024", datetime(2024, 3, 1)),
    ("I got married in the autumn", THURSDAY, "I got married in autumn 2023", datetime(2023, 9, 1)),
    ("We left Paris in early spring", THURSDAY, "We left Paris in early spring 2024", datetime(2024, 3, 1)),
    ("I'll start at Google in the autumn", THURSDAY, "I'll start at Google in autumn 2024", None),  # a plan
    ("I broke my wrist in the winter", datetime(2024, 1, 10), "I broke my wrist in the winter of 2023-2024",
     datetime(2023, 12, 1)),
    ("I swim in the sea in summer", THURSDAY, "I swim in the sea in summer", None),  # a habit
    ("We're getting married in the autumn", THURSDAY, "We're getting married in autumn 2024", None),  # arranged
    ("I've been living in Leeds since the spring", THURSDAY, "I've been living in Leeds since spring 2024",
     datetime(2024, 3, 1)),
    ("The garden is amazing in the spring", THURSDAY, "The garden is amazing in the spring", None),
    ("We met in the spring of 2019", THURSDAY, "We met in the spring of 2019", datetime(2019, 3, 1)),
])
def test_a_season_said_without_a_year_is_dated_when_the_tense_says_which_way(text, when, resolved, start):
    assert resolve_dated(text, when) == (resolved, start)


@pytest.mark.parametrize(("text", "resolved", "start"), [
    ("I went to Kyoto this winter", "I went to Kyoto in the winter of 2023-2024", datetime(2023, 12, 1)),
    ("We were in Lisbon this spring", "We were in Lisbon in spring 2024", datetime(2024, 3, 1)),
    ("I'm off to Kyoto this winter", "I'm off to Kyoto in the winter of 2024-2025", None),
    ("I'll go skiing this winter", "I'll go skiing in the winter of 2024-2025", None),
])
def test_this_season_is_the_one_just_gone_when_said_in_the_past_tense(text, resolved, start):
    assert resolve_dated(text, THURSDAY) == (resolved, start)


def test_a_word_that_starts_like_plan_says_no_plan():
    # "plant-based" is no "plan": the month is the one just gone, and it is when the diet began
    assert resolve_dated("Dropped dairy in January, so it's fully plant-based for me now.", THURSDAY) == (
        "Dropped dairy in January 2024, so it's fully plant-based for me now.", datetime(2024, 1, 1))


def test_a_weekday_after_by_or_until_keeps_its_preposition():
    when = datetime(2024, 6, 20, 12, tzinfo=UTC)
    assert resolve_dated("I'll be back by Monday", when)[0] == "I'll be back by Monday, 24 June 2024"
    assert resolve_dated("I was there until Friday", when) == ("I was there until Friday, 14 June 2024", None)


def test_march_and_may_in_lower_case_after_in_or_since_are_months():
    when = datetime(2024, 6, 20, 12, tzinfo=UTC)
    assert resolve_dated("we split up in march", when)[0] == "we split up in March 2024"
    assert resolve_dated("vegan since may", when)[0] == "vegan since May 2024"
    assert resolve_dated("I may go", when) == ("I may go", None)
