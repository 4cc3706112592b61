"""Naming idioms said plainly before a statement's frames are read."""

import pytest

from extraction import nlp
from extraction.naming import said_plainly, time_word


@pytest.mark.parametrize(("text", "plain"), [
    ("The user's boss is a guy called Henrik.", "The user's boss is Henrik."),
    ("The user's husband's name is Victor.", "The user's husband is Victor."),
    ("The user is seeing a guy called Ben now.", "The user is seeing Ben now."),
    ("The user is seeing someone new, Ben.", "The user is seeing Ben."),
    ("The user's name is Ann.", "The user's name is Ann."),  # the speaker's own name stays as said
])
def test_a_naming_idiom_is_said_plainly(text, plain):
    assert said_plainly(text) == plain


@pytest.mark.parametrize(("text", "word", "timely"), [
    ("The user is based in Manchester these days.", "Manchester", False),  # one DATE to the tagger
    ("The user is based in Manchester these days.", "days", True),
    ("The user split with Hannah in June 2024.", "June", True),
    ("The user is in Paris at Christmas.", "Christmas", True),
])
def test_a_place_the_tagger_folded_into_a_date_is_no_time_word(text, word, timely):
    doc = nlp.pipeline()(text)
    assert time_word(next(t for t in doc if t.text == word)) is timely


def test_a_place_typed_in_lower_case_is_capitalised_and_a_word_is_not():
    from extraction.nlp import capitalise_places

    assert capitalise_places("raining again in leeds, six years living here") == (
        "raining again in Leeds, six years living here")
    assert capitalise_places("went to the shops in town, then to reading group") == (
        "went to the shops in town, then to reading group")


@pytest.mark.parametrize(("text", "cased"), [
    ("i work at fernbrook logistics if that matters", "i work at Fernbrook Logistics if that matters"),
    ("im not at fernbrook anymore", "im not at Fernbrook anymore"),
    ("deb left so my new manager is ravi okonkwo and i dont know him", "deb left so my new manager is Ravi Okonkwo and "
                                                                        "i dont know him"),
    ("im seeing someone named tobias now", "im seeing someone named Tobias now"),
    ("i love ravioli, my manager is ravi", "i love ravioli, my manager is Ravi"),  # the name in its place
    ("i work at home with my kids", "i work at home with my kids"),
    ("had lunch with friends at the park", "had lunch with friends at the park"),
    ("I work at fernbrook logistics", "I work at Fernbrook Logistics"),  # a phone capitalises "I" for them
    ("I work at fernbrook with Anna", "I work at fernbrook with Anna"),  # the writer capitalises: as typed
    ("My boss is ravi at Acme", "My boss is ravi at Acme"),
])
def test_names_in_a_message_typed_in_lower_case_are_capitalised(text, cased):
    assert nlp.capitalise_names(text) == cased


def test_a_name_cut_at_its_hyphen_is_one_name():
    from extraction.naming import names

    assert [span.text for span in names(nlp.pipeline()("She works at the Croix-Rousse hospital."))] == [
        "Croix-Rousse"]
