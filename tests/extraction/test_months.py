"""Dates said without a year get the year the sentence means, against the send time; recurring dates do not."""

from datetime import date

import pytest

from extraction.months import complete, stated

SENT = date(2024, 6, 20)  # a Thursday


@pytest.mark.parametrize(("text", "completed"), [
    ("we are living in Porto since May", "we are living in Porto since May 2024"),
    ("I moved to Lyon in March", "I moved to Lyon in March 2024"),
    ("I quit my job in early March", "I quit my job in early March 2024"),
    ("we met back in October", "we met back in October 2023"),  # the most recent October not after June 2024
    ("Since last December I work at Bosch", "Since December 2023 I work at Bosch"),
    ("Mia starts school in September", "Mia starts school in September 2024"),  # a plan: the next one
    ("I'll start at Doctolib in May", "I'll start at Doctolib in May 2025"),
    ("I got married on June 14th", "I got married on 14 June 2024"),
    ("the exam is on the 3rd of July", "the exam is on 3 July 2024"),
    ("I moved out at the end of May", "I moved out at the end of May 2024"),
    ("I started mid-April", "I started mid-April 2024"),
    ("I was in Peru from March to May", "I was in Peru from March 2024 to May 2024"),
    ("I arrived here in June", "I arrived here in June 2024"),  # the send month is this year's either way
    ("I'm off from Dec 20 to Jan 3", "I'm off from 20 December 2024 to 3 January 2025"),
    ("Hannah and I split in May", "Hannah and I split in May 2024"),  # a past tense that is no "-ed"
    ("we broke up in March", "we broke up in March 2024"),
    ("they come to stay in August", "they come to stay in August 2024"),  # "come" is a participle, no past
    ("vegetarian since january", "vegetarian since January 2024"),  # chat's lower case
    ("we march in june", "we march in June 2024"),
])
def test_a_month_without_a_year_gets_the_year_the_sentence_means(text, completed):
    assert complete(text, SENT, []) == completed


@pytest.mark.parametrize(("text", "completed"), [
    ("she turns 7 on June 14", "she turns 7 on 14 June"),
    ("my birthday is on March 3", "my birthday is on 3 March"),
    ("our anniversary is in October", "our anniversary is in October"),
    ("my birthday is on the 3rd of March", "my birthday is on the 3rd of March"),
])
def test_a_recurring_date_gets_day_month_order_and_no_year(text, completed):
    assert complete(text, SENT, []) == completed


@pytest.mark.parametrize("text", ["May I ask something", "I may go", "I'm going to May's party",
                                  "I moved to Lyon in March 2023", "Mia was born on May 3, 2017", "March is cold here",
                                  "I report to Jan now after the reorg", "I gave the keys to Jan"])
def test_dates_with_a_year_and_words_that_are_no_date_stay(text):
    assert complete(text, SENT, []) == text


def test_completed_dates_are_reported_with_their_preposition():
    starts: list = []
    complete("living in Porto since May", SENT, starts)
    assert [(prep, day) for _, prep, day in starts] == [("since", date(2024, 5, 1))]


def test_dates_written_in_full_are_read():
    assert [(prep, day) for _, prep, day in stated("I joined in March 2023 and left on 3 May 2024, in 2019")] == [
        ("in", date(2023, 3, 1)), ("on", date(2024, 5, 3)), ("in", date(2019, 1, 1))]
