"""Clauses from the parse: coordinated verb phrases and participle clauses cut apart when a slot is at stake,
and a "he"/"she" clause attached to the person just named."""

import pytest

from extraction import nlp
from extraction.clauses import antecedent, attach_pronoun, frame_clauses, split
from extraction.slots import find_slots


def fills(sentence: str) -> bool:
    return bool(find_slots(sentence))


@pytest.mark.parametrize(("sentence", "pieces"), [
    ("I'm allergic to nuts and have to carry an EpiPen.", ["I'm allergic to nuts", "I have to carry an EpiPen."]),
    ("I am severely allergic to wasps and always carry adrenaline.",
     ["I am severely allergic to wasps", "I always carry adrenaline."]),
    ("I live in Lyon and work at Doctolib.", ["I live in Lyon", "I work at Doctolib."]),
    ("I moved to Lyon in March and started a new job at Doctolib.",
     ["I moved to Lyon in March", "I started a new job at Doctolib."]),
    ("we moved again, now living in Porto since May.", ["we moved again", "we are now living in Porto since May."]),
    ("I'm Nadia, living in Lille with my partner.", ["I'm Nadia", "I'm living in Lille with my partner."]),
])
def test_statements_joined_around_a_slot_are_cut_apart(sentence, pieces):
    assert split(sentence, fills) == pieces


@pytest.mark.parametrize("sentence", [
    "I'm allergic to peanuts and shellfish.",  # one slot statement with a list
    "I love horses and ride them every weekend.",  # the second half needs the first
    "Gonna continue my studies and look at careers in counseling",
    "I do pottery on weekends and I really love it.",  # a clause with its own subject
    "I'm working on my online store, growing the customer base.",
])
def test_everything_else_stays_whole(sentence):
    assert split(sentence, fills) == [sentence]


@pytest.mark.parametrize(("before", "clause", "attached"), [
    ("My daughter Mia starts school in September", "she turns 7 on June 14", "my daughter Mia turns 7 on June 14"),
    ("My brother Tom moved to Oslo", "he's a nurse there now", "my brother Tom is a nurse there now"),
    ("I visited my grandma last week", "She'll be 90 in May", "my grandma will be 90 in May"),
    ("My partner Sam got a new job", "and she starts on Monday", "and my partner Sam starts on Monday"),
    ("My dog Rex is twelve", "he's been deaf for a year", "my dog Rex has been deaf for a year"),
    ("My parents retired to Spain", "they're living in Valencia now", "my parents are living in Valencia now"),
])
def test_a_pronoun_led_clause_takes_the_person_just_named(before, clause, attached):
    assert attach_pronoun(clause, antecedent(before)) == attached


@pytest.mark.parametrize(("before", "clause"), [
    ("My daughter Mia starts school in September", "he turns 7 on June 14"),  # does not fit her
    ("I started a new job", "she turns 7 on June 14"),  # nobody named
    ("My son Leo is three", "it was raining"),
    ("My son Leo is three", "they love dinosaurs"),  # "they" is not one named person
])
def test_a_pronoun_with_nobody_that_fits_stays(before, clause):
    assert attach_pronoun(clause, antecedent(before)) == clause


def parsed(text: str):
    return nlp.pipeline()(text)  # with lemmas, as extraction.attributes parses


@pytest.mark.parametrize(("sentence", "pieces"), [
    ("After four years the user said goodbye to Spotify, they're at Klarna now.",
     ["After four years the user said goodbye to Spotify", "the user is at Klarna now"]),
    ("Pedro moved to another team, so the user reports to Aisha these days.",
     ["Pedro moved to another team", "the user reports to Aisha these days"]),
    ("The user sold the volvo, driving a Kia Niro now.",
     ["The user sold the volvo", "the user is driving a Kia Niro now"]),
    ("I moved again, now living in Porto.", ["I moved again", "I am now living in Porto"]),
    ("The user quit zalando, now at Delivery Hero.", ["The user quit zalando", "the user is now at Delivery Hero"]),
    ("Marco and the user are over, seeing Luca now.", ["Marco and the user are over", "the user is seeing Luca now"]),
    ("Oslo is behind the user, they've been in Trondheim since spring.",
     ["Oslo is behind the user", "the user has been in Trondheim since spring"]),
])
def test_clauses_with_subjects_of_their_own_are_read_apart_for_their_frames(sentence, pieces):
    assert frame_clauses(parsed(sentence), they_is="the user") == pieces


@pytest.mark.parametrize("sentence", [
    "If I get the job, I'll move to Berlin.",  # a condition
    "I heard my sister moved to Oslo.",  # a report
    "I live in Leeds.",  # one clause
    "When I turned ten, my dad signed me up for a local league.",  # a time clause says when, not what holds
])
def test_a_condition_a_report_or_one_clause_is_read_whole(sentence):
    assert frame_clauses(parsed(sentence)) == []


def test_the_same_subject_said_again_is_cut_when_the_clauses_say_different_things():
    from extraction.clauses import say_apart

    assert split("I work as a nurse at the city hospital and I love Studio Ghibli films.", fills, say_apart) == [
        "I work as a nurse at the city hospital", "I love Studio Ghibli films."]
    # one change of diet, said in two clauses
    assert split("I dropped keto and I eat Mediterranean now.", fills, say_apart) == [
        "I dropped keto and I eat Mediterranean now."]
