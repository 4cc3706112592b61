"""First person to third person: the first mention is the name with an agreeing verb, later ones "they"."""

import pytest

from extraction.english import has_verb, third_person, third_singular


@pytest.mark.parametrize(("verb", "third"), [
    ("love", "loves"), ("am", "is"), ("have", "has"), ("do", "does"), ("don't", "doesn't"), ("go", "goes"),
    ("study", "studies"), ("watch", "watches"), ("play", "plays"), ("was", "was"), ("went", "went"),
    ("painted", "painted"), ("can", "can"), ("read", "read"), ("need", "needs"),
])
def test_present_verbs_agree_and_everything_else_stays(verb, third):
    assert third_singular(verb) == third


@pytest.mark.parametrize(("sentence", "rewritten"), [
    ("I love horses", "Ana loves horses"),
    ("I really love horses and I ride them", "Ana really loves horses and they ride them"),
    ("I'm tired and I was sick", "Ana is tired and they were sick"),
    ("I've been busy", "Ana has been busy"),
    ("I'd go again", "Ana would go again"),
    ("I'd already left", "Ana had already left"),
    ("I'll be there", "Ana will be there"),
    ("My dog loves me", "Ana's dog loves them"),
    ("The class made me proud of myself", "The class made Ana proud of themselves"),
    ("We love our new flat", "Ana loves their new flat"),  # nobody named: "we" is the speaker alone
    ("We're moving house", "Ana is moving house"),
    ("Me and my wife went", "Ana and their wife went"),
    ("My kids and I love it", "Ana and their kids love it"),
    ("Anthony and I love trivia", "Anthony and Ana love trivia"),
    ("I joined a band and have been practising", "Ana joined a band and has been practising"),
    ("I love painting and do it every day", "Ana loves painting and does it every day"),
    ("I love dogs and they love me", "Ana loves dogs and they love them"),
    ("I went out to make friends and take photos", "Ana went out to make friends and take photos"),
    ("I don't surf, but reading helps me relax and feel free",
     "Ana doesn't surf, but reading helps them relax and feel free"),
])
def test_third_person(sentence, rewritten):
    assert third_person(sentence, "Ana") == rewritten


def test_without_a_name_the_user_opens_the_sentence_and_is_lower_case_inside_it():
    assert third_person("I love horses") == "The user loves horses"
    assert third_person("Yesterday I ran") == "Yesterday the user ran"
    assert third_person("Is US trade mine", "Ana") == "Is US trade Ana's"


@pytest.mark.parametrize(("sentence", "verb"), [
    ("My full support.", False), ("A reminder to follow my passions.", False), ("My kids love horses.", True),
    ("My daughter turned seven.", True), ("Our anniversary is in May.", True), ("Pottery calms me.", True),
])
def test_a_clause_has_a_verb_and_a_fragment_has_none(sentence, verb):
    assert has_verb(sentence) is verb
