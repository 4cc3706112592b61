"""Message search: what was said, by meaning and by words (real model, real PostgreSQL; embedding tasks run
eagerly here, with a real worker in test_pipeline.py). The context is tested in test_context.py."""

from datetime import UTC, datetime, timedelta

import pytest

from conversations import selectors, services
from conversations.models import Message
from tests.factories import ConversationFactory, ProjectFactory, UserFactory

START = datetime(2023, 5, 8, 13, 56, tzinfo=UTC)
DIALOGUE = [
    ("user", "Caroline", "Hey Mel! Good to see you! How have you been?"),
    ("assistant", "Melanie", "Hey Caroline! I'm swamped with the kids and work. What's up with you?"),
    ("user", "Caroline", "I went to a support group for trans people yesterday and it was so powerful."),
    ("assistant", "Melanie", "Wow, that's cool! What happened that was so awesome?"),
    ("user", "Caroline", "The stories were so inspiring! I felt accepted for the first time."),
    ("assistant", "Melanie", "That's great. I painted a lake at sunrise last year, it helps me relax."),
    ("user", "Caroline", "I'd love to see it! I'm thinking about studying counseling next year."),
    ("assistant", "Melanie", "You'd be great at that. Gotta run, swimming with the kids!"),
]


def converse(owner, turns=DIALOGUE, *, start=START, **conversation):
    conv = ConversationFactory(owner=owner, **conversation)
    services.messages_append(conversation=conv, messages=[
        {"role": role, "name": name, "content": text, "sent_at": start + timedelta(minutes=i)}
        for i, (role, name, text) in enumerate(turns)
    ])
    return conv


@pytest.fixture
def said(user, eager, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        return converse(user)


def test_every_turn_is_embedded_and_findable_by_meaning_and_by_words(said, user):
    assert not Message.objects.filter(conversation=said, embedding__isnull=True).exists()
    hybrid = selectors.message_search(owner=user, query="What did Melanie paint?")
    assert "painted a lake" in hybrid.results[0].passage.content
    by_meaning = selectors.message_search(owner=user, query="artwork of water at dawn", mode="semantic",
                                          threshold=0.2)
    assert "painted a lake" in by_meaning.results[0].passage.content
    by_word = selectors.message_search(owner=user, query="counseling", mode="keyword")
    assert [r.passage.sequence for r in by_word.results] == [7]


def test_message_search_returns_nothing_unrelated(said, user):
    assert selectors.message_search(owner=user, query="quarterly tax filing deadline").results == []


def test_a_date_in_the_query_lifts_what_was_said_then(user, eager, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        converse(user, [("user", "", "We went hiking in the mountains.")], start=START)
        converse(user, [("user", "", "We went hiking by the sea.")], start=START + timedelta(days=60))
    result = selectors.message_search(owner=user, query="Where did we go hiking in July 2023?")
    assert "sea" in result.results[0].passage.content and result.results[0].parts["date"] > 0


def test_messages_are_only_their_owners(said, user):
    stranger = UserFactory()
    assert selectors.message_search(owner=stranger, query="support group").results == []


def test_project_scope_follows_seed_004(user, eager, django_capture_on_commit_callbacks):
    project = ProjectFactory(owner=user)
    with django_capture_on_commit_callbacks(execute=True):
        converse(user, [("user", "", "The staging database password rotates monthly.")], project=project)
    assert selectors.message_search(owner=user, query="staging database password").results == []
    assert selectors.message_search(owner=user, query="staging database password", project=project).results
