"""Naming idioms said plainly before a statement's frames are read."""

import pytest

from extraction.naming import said_plainly


@pytest.mark.parametrize(("text", "plain"), [
    ("The user's boss is a guy called Henrik.", "The user's boss is Henrik."),
    ("The user's husband's name is Victor.", "The user's husband is Victor."),
    ("The user is seeing a guy called Ben now.", "The user is seeing Ben now."),
    ("The user's name is Ann.", "The user's name is Ann."),  # the speaker's own name stays as said
])
def test_a_naming_idiom_is_said_plainly(text, plain):
    assert said_plainly(text) == plain
