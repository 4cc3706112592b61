"""Slots of statements said without a first-person subject: contact details and age."""

import pytest

from extraction.slots import find_slots


@pytest.mark.parametrize(("sentence", "attribute", "content"), [
    ("Reach me at the new number 555-0199 from now on.", "phone", "{name}'s phone number is 555-0199."),
    ("You can call me on 07700 900 456 these days", "phone", "{name}'s phone number is 07700 900 456."),
    ("Text me at +1 (415) 555-0100 instead", "phone", "{name}'s phone number is +1 (415) 555-0100."),
    ("Drop the old address and email me at kim@north.dev", "email", "{name}'s email address is kim@north.dev."),
    ("Please use anna@kowalski.dev for email from now on", "email", "{name}'s email address is anna@kowalski.dev."),
    ("My new email: bob@new.org", "email", "{name}'s email address is bob@new.org."),
    ("Reach me at the new number, 07 9876 5432.", "phone", "{name}'s phone number is 07 9876 5432."),
    ("My sister's number is 0612345678", "", ""),
    ("His email is joe@example.com", "", ""),
    ("Please contact me via my new email kim@north.dev", "email", "{name}'s email address is kim@north.dev."),
    ("52 since Sunday!", "age", "{name} is 52 years old."),
    ("Finally turned 30 today", "age", "{name} is 30 years old."),
    ("My work number is 020 7946 0958", "work phone", "{name}'s work phone number is 020 7946 0958."),
    ("Home is Austin now", "location", "{name} lives in Austin."),
    ("Since last month home is Leeds for us", "location", "{name} lives in Leeds."),
    ("Reach me at the office on 0144 556 677", "work phone", "{name}'s work phone number is 0144 556 677."),
    ("New number: 0698 765 432.", "phone", "{name}'s phone number is 0698 765 432."),  # a label, no "phone"
    # after a label of its own, with a comma
    ("Update for the forms: new number, 0698 765 433.", "phone", "{name}'s phone number is 0698 765 433."),
    # "work" as a verb says nothing of a workplace
    ("Mail goes to kim@north.dev from now on, the old one doesn't work anymore", "email",
     "{name}'s email address is kim@north.dev."),
])
def test_statements_without_a_subject(sentence, attribute, content):
    slots = find_slots(sentence)
    assert [(s.attribute, s.content) for s in slots][:1] == ([(attribute, content)] if attribute else [])


@pytest.mark.parametrize("sentence", ["Call me Bob", "Turned the page on that", "30 since the start of the game",
                                      "I ran 10 000 meters today", "Call me when you land at 16:30",
                                      # someone else's: the one called, texted or written to
                                      "Call the restaurant at 555 987 6543 to book.",
                                      "Text Anna on 0612 345 678 if you're late",
                                      "You can reach my assistant at 020 7946 0958",
                                      "Email the landlord at rent@flat.example about it",
                                      "Number: 0698 765 432",  # a bare label: whose is not said
                                      "Put Omar under me on the list, he's my colleague: 0612 777 888"])
def test_look_alikes_are_no_contact_or_age(sentence):
    assert not [s for s in find_slots(sentence) if s.attribute in ("phone", "email", "age")]


@pytest.mark.parametrize("sentence", ["home is where the heart is", "Home is where the heart is", "My home is a mess"])
def test_sayings_about_home_name_no_home(sentence):
    assert not [s for s in find_slots(sentence) if s.content]


def test_a_personal_number_said_beside_a_work_one_is_the_speakers_own():
    assert [s.attribute for s in find_slots("Work mobile aside, my personal number is 0780 111 2222.")] == ["phone"]
    assert [s.attribute for s in find_slots("My office number is 0207 444 555.")] == ["work phone"]
    assert [s.attribute for s in find_slots("For anything school-related, use my board address, jo@board.ca.")] == [
        "work email"]


@pytest.mark.parametrize(("text", "value"), [
    ("my old number +44 7700 900111 is dead, use +44 7700 900222", "+44 7700 900222"),
    ("pete@aol.com is closed, write to pete.m@proton.me instead", "pete.m@proton.me"),
])
def test_of_two_contact_details_the_one_said_to_be_dead_is_not_the_speakers(text, value):
    slots = [slot for slot in find_slots(text) if slot.attribute in ("phone", "email")]
    assert len(slots) == 1 and value in slots[0].content
