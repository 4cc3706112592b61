"""The conversation so far: where "here"/"there" is and who "we" are."""

import pytest

from extraction.context import Setting

PORTO = Setting(["User: We just moved to Porto!", "Assistant: How exciting, how is it going?"])


@pytest.mark.parametrize(("sentence", "resolved"), [
    ("My daughter starts school here in September", "My daughter starts school in Porto in September"),
    ("I moved here in June", "I moved to Porto in June"),
    ("I've been there twice", "I've been to Porto twice"),
    ("I like it here", "I like it in Porto"),
    ("I opened a bakery over here", "I opened a bakery in Porto"),
    ("I work here in Braga now", "I work in Braga now"),  # the place is named: the word goes
])
def test_here_and_there_become_the_place_named_earlier(sentence, resolved):
    assert PORTO.resolve_places(sentence) == resolved


@pytest.mark.parametrize(("before", "sentence", "resolved"), [
    ("The bus from Kelby takes ages.", "I live out there because it's cheap", "I live out in Kelby because it's cheap"),
    ("Early shift at Brewhaus Coffee again.", "I work there on weekends", "I work at Brewhaus Coffee on weekends"),
    ("The truth about Kelby.", "It's out there", "It's out there"),
])
def test_where_someone_lives_or_works_out_there(before, sentence, resolved):
    assert Setting([]).resolve_places(sentence, before) == resolved


def test_the_message_itself_names_the_place_first():
    assert PORTO.resolve_places("I love it there", "I spent May in Kyoto.") == "I love it in Kyoto"


@pytest.mark.parametrize(("sentence", "resolved"), [
    ("My daughter starts school here in September", "My daughter starts school in September"),
    ("I was born there", "I was born"),
])
def test_with_no_place_named_the_word_is_dropped(sentence, resolved):
    assert Setting(["Assistant: Hi! How can I help?"]).resolve_places(sentence) == resolved


@pytest.mark.parametrize("sentence", [
    "There is a park near my flat", "My family has been there for me", "I'm hanging in there",
    "I'm here to help", "Here's my new number", "It took me there in an hour",
])
def test_idioms_and_existential_there_stay(sentence):
    assert PORTO.resolve_places(sentence) == sentence


@pytest.mark.parametrize(("turns", "message", "companion"), [
    (["User: My wife Ana got a job in Lyon."], "", "Ana"),
    (["Me: my husband is a chef"], "", "their husband"),
    ([], "My boyfriend, Luca, and I bought a flat.", "Luca"),
    (["User: the kids are loud today"], "", None),  # "the kids" names nobody's
    (["User: my kids start school soon"], "", "their family"),
    (["User: I live alone.", "Assistant: Nice!"], "", None),
    # no longer the two of them
    (["User: My girlfriend Lena and I love Dresden."], "Lena and I broke up. We're off to Rome.", None),
])
def test_who_we_are(turns, message, companion):
    assert Setting(turns).companion(message) == companion


def test_only_the_speakers_own_turns_name_their_companion():
    turns = ["Melanie: my husband and kids went camping", "Caroline: I went to a support group"]
    assert Setting(turns, "Caroline").companion() is None
    assert Setting(turns, "Melanie").companion() == "their husband"
    assert Setting(["Assistant: my wife Ana says hi"]).companion() is None
