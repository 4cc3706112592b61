"""Work as chat says it (extraction.jobs): whom the speaker reports to, a department, a title to sign with."""

import pytest

from extraction.jobs import said


@pytest.mark.parametrize(("text", "read"), [
    ("Anke moved to the Hamburg office, so the person I report to now is Lars Petersen.",
     "Anke moved to the Hamburg office, so I report to Lars Petersen."),
    ("The new regional manager I answer to is Mia Novak.", "I answer to Mia Novak."),
    ("Gwen's on leave so it's a woman called Ffion I report to now.", "Gwen's on leave so I report to Ffion now."),
    ("Promoted! Sign all my emails as Head of Partnerships please.",
     "Promoted! My title is Head of Partnerships please."),
    ("I'm in finance at Halden Group now.", "I work in finance at Halden Group now."),
    ("It went through, so it's Senior Data Engineer on my badge now.",
     "It went through, so My title is Senior Data Engineer now."),
    ("My email signature now says Head of Design.", "My title is Head of Design."),
])
def test_work_said_as_statements(text, read):
    assert said(text) == read


@pytest.mark.parametrize("text", [
    "The person I report to is on holiday.",  # no name: nothing to say
    "Please sign the card as Auntie Jo.",  # a card, not the speaker's emails
])
def test_what_names_no_manager_or_title_is_left(text):
    assert said(text) == text
