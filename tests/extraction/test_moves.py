"""Where the speaker lives, said in news of a move (extraction.moves)."""

import pytest

from extraction.moves import said


@pytest.mark.parametrize(("text", "read"), [
    ("Left Coimbra for good, now we are in Ericeira and the surf is right there.",
     "Left Coimbra for good, we live in Ericeira and the surf is right there."),
    ("We shifted house on Saturday so its Te Atatu for us now.",
     "We shifted house on Saturday so we live in Te Atatu now."),
    ("Moved at last, so the new flat is in Kirkstall now.", "Moved at last, so I live in Kirkstall now."),
    ("Signed a lease in Brookhaven with two friends!", "Moved to Brookhaven with two friends!"),
    ("Got the keys yesterday, we're in Otley now.", "Got the keys yesterday, we live in Otley now."),
    ("Last boxes unpacked in Tavira! Loving the terrace.", "I moved to Tavira! Loving the terrace."),
])
def test_where_they_live_after_news_of_a_move(text, read):
    assert said(text) == read


@pytest.mark.parametrize("text", [
    "We're in Lisbon now for the conference, back Friday.",  # no move: a stay
    "Now we are in Kraków for the weekend.",
    "It's Bristol for us now, the match I mean.",
])
def test_without_news_of_a_move_nothing_is_a_home(text):
    assert said(text) == text
