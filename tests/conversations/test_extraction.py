"""The local extractor, one rule family at a time: what a user says about themselves becomes a memory with a
category, a subject, a stable attribute (for updates) and an importance; questions, small talk and anything not
said by the user become nothing."""

import pytest

from conversations.extraction import extract_local


def only(text: str, **kwargs):
    candidates = extract_local(text, **kwargs)
    assert len(candidates) == 1, candidates
    return candidates[0]


@pytest.mark.parametrize(("text", "content"), [
    ("Remember that my passport expires in March 2027.", "Passport expires in March 2027"),
    ("Please remember I take my coffee black.", "Takes their coffee black"),
    ("remember that i'm allergic to peanuts", "Is allergic to peanuts"),
])
def test_explicit_requests(text, content):
    candidate = only(text)
    assert candidate.content == content
    assert candidate.explicit is True
    assert candidate.importance >= 0.8


def test_explicit_requests_about_something_of_mine_name_it_as_the_attribute():
    assert only("Remember that my locker code is 4411.").attribute == "locker code"
    assert only("Please remember: my wifi password is hunter2").attribute == "wifi password"
    assert only("Remember that the meeting moved to Friday.").attribute == ""


@pytest.mark.parametrize(("text", "content", "attribute"), [
    ("I love spicy Thai food.", "Loves spicy Thai food", "preference:spicy thai food"),
    ("I prefer bullet points over long paragraphs.", "Prefers bullet points over long paragraphs",
     "preference:bullet points"),
    ("I hate cilantro.", "Hates cilantro", "preference:cilantro"),
])
def test_preferences(text, content, attribute):
    candidate = only(text)
    assert (candidate.content, candidate.category, candidate.subject, candidate.attribute) == (
        content, "preference", "user", attribute)
    assert not candidate.explicit


@pytest.mark.parametrize(("text", "content", "attribute"), [
    ("I'm allergic to peanuts.", "Is allergic to peanuts", "allergy:peanuts"),
    ("I can't eat gluten.", "Can't eat gluten", "diet:gluten"),
    ("I'm vegetarian.", "Is vegetarian", "diet"),
])
def test_restrictions_are_important(text, content, attribute):
    candidate = only(text)
    assert (candidate.content, candidate.category, candidate.attribute) == (content, "restriction", attribute)
    assert candidate.importance >= 0.8
    assert "food" in candidate.tags or "health" in candidate.tags


@pytest.mark.parametrize(("text", "content", "attribute"), [
    ("I live in Paris.", "Lives in Paris", "location"),
    ("I moved to Berlin last month.", "Moved to Berlin last month", "location"),
    ("I work at Acme Corp as a nurse.", "Works at Acme Corp as a nurse", "employer"),
    ("I'm 34 years old.", "Is 34 years old", "age"),
    ("My name is Dana.", "Name is Dana", "name"),
])
def test_facts(text, content, attribute):
    candidate = only(text)
    assert (candidate.content, candidate.category, candidate.subject, candidate.attribute) == (
        content, "fact", "user", attribute)


def test_facts_carry_entities():
    assert "Paris" in only("I live in Paris.").entities["places"]
    assert "Acme Corp" in only("I work at Acme Corp as a nurse.").entities["organizations"]


def test_skills_one_memory_per_language():
    candidates = extract_local("I speak Portuguese and Spanish.")
    assert [(c.content, c.category, c.attribute) for c in candidates] == [
        ("Speaks Portuguese", "skill", "language:portuguese"), ("Speaks Spanish", "skill", "language:spanish")]
    assert only("I play the piano.").attribute == "skill:piano"
    assert only("I switched to Python last year.").attribute == "language:python"


@pytest.mark.parametrize(("text", "content", "subject"), [
    ("My wife is called Ana.", "Wife's name is Ana", "Ana"),
    ("I have a dog named Rex.", "Has a dog named Rex", "Rex"),
])
def test_relationships_are_about_the_other_person(text, content, subject):
    candidate = only(text)
    assert (candidate.content, candidate.category, candidate.subject) == (content, "relationship", subject)
    assert candidate.attribute.startswith("relationship:")


def test_statements_about_people_in_the_users_life():
    candidate = only("My daughter Emma starts school in May.")
    assert candidate.content == "Daughter Emma starts school in May"
    assert candidate.subject == "Emma"
    assert "Emma" in candidate.entities["people"]
    assert "family" in candidate.tags


@pytest.mark.parametrize(("text", "content"), [
    ("I want to learn German.", "Wants to learn German"),
    ("My goal is to run a marathon next year.", "Goal is to run a marathon next year"),
])
def test_goals(text, content):
    candidate = only(text)
    assert (candidate.content, candidate.category) == (content, "goal")


@pytest.mark.parametrize(("text", "content"), [
    ("I grew up in Lisbon.", "Grew up in Lisbon"),
    ("I studied physics in college.", "Studied physics in college"),
])
def test_history(text, content):
    candidate = only(text)
    assert (candidate.content, candidate.category) == (content, "history")


@pytest.mark.parametrize("text", [
    "What's the weather like?",
    "Am I allergic to peanuts?",
    "Hi there!",
    "Thanks, that's all!",
    "How are you?",
    "Can you help me with my code?",
    "lol ok",
    "",
    "   ",
])
def test_questions_and_small_talk_give_nothing(text):
    assert extract_local(text) == []


@pytest.mark.parametrize("role", ["assistant", "system", "tool"])
def test_only_the_user_is_listened_to(role):
    assert extract_local("I'm allergic to peanuts. Remember that I live in Paris.", role=role) == []


def test_several_statements_in_one_message_and_the_last_word_wins():
    candidates = extract_local("I live in Paris. Actually, I live in Lyon. I'm allergic to peanuts.")
    assert [c.content for c in candidates] == ["Lives in Lyon", "Is allergic to peanuts"]


def test_clauses_of_one_sentence_are_separate_memories():
    text = "I'm vegetarian, I live in Porto and my son Leo plays the violin."
    assert [c.content for c in extract_local(text)] == ["Is vegetarian", "Lives in Porto", "Son Leo plays the violin"]
