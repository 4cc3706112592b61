"""A request typed in one sentence with a statement is cut from it, so that the statement is read on its own."""

import pytest

from extraction.asks import apart, asks
from extraction.dialogue import extract_local


@pytest.mark.parametrize(("piece", "asked"), [
    ("can you redo the meal plan", True),
    ("give me a 20 min routine with no equipment", True),
    ("need easy weeknight dinners", True),
    ("whats the easiest way to fit 3 car seats across the back", True),
    ("does the third row have car seat anchors or nah", True),
    ("how do i ask for flexible hours without sounding needy", True),
    ("redo my email signature with the new name", True),
    ("im vegetarian", False),
    ("love the new flat", False),
    ("I finished another pottery project - want to see a pic?", False),
    ("shellfish and kiwi.", False),
    ("started at Kestrel Dental Group in april", False),
])
def test_a_piece_asks_by_its_first_words_or_its_parse(piece, asked):
    assert asks(piece) is asked


def test_a_sentence_is_cut_where_a_request_meets_a_statement():
    assert apart("need easy weeknight dinners, im vegetarian but the kids eat chicken") == [
        ("need easy weeknight dinners", True), ("im vegetarian but the kids eat chicken", False)]
    assert apart("im 34 and trying to squeeze workouts into nap time, give me a 20 min routine") == [
        ("im 34 and trying to squeeze workouts into nap time", False), ("give me a 20 min routine", True)]
    # two requests stay one request
    assert apart("can you help, give me a routine, im vegetarian") == [
        ("can you help, give me a routine", True), ("im vegetarian", False)]
    # a fragment goes with what follows it
    assert apart("as a vegetarian, how do i get enough protein?") == [
        ("as a vegetarian, how do i get enough protein?", False)]
    assert apart("I'm allergic to peanuts, shellfish and kiwi.") == [("I'm allergic to peanuts, shellfish and kiwi.",
                                                                      False)]


@pytest.mark.parametrize(("text", "memories"), [
    ("whats the easiest way to fit 3 car seats across the back, i drive a 2014 mazda 5",
     ["The user drives a 2014 mazda 5."]),
    ("im 34 and trying to squeeze workouts into nap time, give me a 20 min routine with no equipment",
     ["The user is 34 years old.", "The user is trying to squeeze workouts into nap time."]),
    ("tbh my fav thing to eat these days is birria tacos, is there a slow cooker version i can start before pickup",
     ["The user's fav thing to eat is birria tacos."]),
    ("deb left so my new manager is ravi okonkwo and i dont know him yet, how do i ask for flexible hours",
     ["Deb left so the user's new manager is Ravi Okonkwo and they don't know him yet."]),
    ("btw im not at fernbrook anymore, started at kestrel dental group in april so can you redo my signature",
     ["The user is not at Fernbrook anymore.", "The user started at Kestrel Dental Group in April 2024."]),
])
def test_the_statement_in_a_request_is_a_memory_and_the_request_is_not(text, memories):
    from datetime import datetime

    assert [c.content for c in extract_local(text, when=datetime(2024, 6, 20, 12))] == memories
