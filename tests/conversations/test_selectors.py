"""Message search and the context an agent gets: memories and conversation excerpts (real model, real
PostgreSQL; embedding tasks run eagerly here, with a real worker in test_pipeline.py)."""

from datetime import UTC, datetime, timedelta

import pytest

from conversations import selectors, services
from conversations.models import Message
from memories import services as memory_services
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
    assert "painted a lake" in hybrid.results[0].message.content
    by_meaning = selectors.message_search(owner=user, query="artwork of water at dawn", mode="semantic",
                                          threshold=0.2)
    assert "painted a lake" in by_meaning.results[0].message.content
    by_word = selectors.message_search(owner=user, query="counseling", mode="keyword")
    assert [r.message.sequence for r in by_word.results] == [7]


def test_message_search_returns_nothing_unrelated(said, user):
    assert selectors.message_search(owner=user, query="quarterly tax filing deadline").results == []


def test_a_date_in_the_query_lifts_what_was_said_then(user, eager, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        converse(user, [("user", "", "We went hiking in the mountains.")], start=START)
        converse(user, [("user", "", "We went hiking by the sea.")], start=START + timedelta(days=60))
    result = selectors.message_search(owner=user, query="Where did we go hiking in July 2023?")
    assert "sea" in result.results[0].message.content and result.results[0].parts["date"] > 0


def test_messages_are_only_their_owners(said, user):
    stranger = UserFactory()
    assert selectors.message_search(owner=stranger, query="support group").results == []


def test_project_scope_follows_seed_004(user, eager, django_capture_on_commit_callbacks):
    project = ProjectFactory(owner=user)
    with django_capture_on_commit_callbacks(execute=True):
        converse(user, [("user", "", "The staging database password rotates monthly.")], project=project)
    assert selectors.message_search(owner=user, query="staging database password").results == []
    assert selectors.message_search(owner=user, query="staging database password", project=project).results


def test_context_carries_the_evidence_with_speaker_date_and_source(said, user):
    memory_services.memory_create(owner=user, content="Caroline is thinking about studying counseling")
    context = selectors.context_for(owner=user, query="Where did I go yesterday?", budget=400)
    excerpts = [i for i in context.items if i.type == "excerpt"]
    assert excerpts, context.text
    best = excerpts[0]
    # the matching turn with its neighbours, in order, each with its speaker, under the day it was said
    sequences = [m.sequence for m in best.messages]
    assert sequences == list(range(sequences[0], sequences[-1] + 1)) and {2, 3, 4} <= set(sequences)
    assert best.text.startswith("[8 May 2023")
    assert "Caroline: I went to a support group" in best.text and "\nMelanie: Wow" in best.text
    source = best.source()
    assert source["conversation_id"] == str(said.pk) and len(source["message_ids"]) == len(sequences)
    third = Message.objects.get(conversation=said, sequence=3)
    assert str(third.pk) in source["hit_message_ids"]
    assert context.used_tokens <= 400 and best.text in context.text


def test_context_memories_name_their_origin(said, user):
    memory = memory_services.memory_create(owner=user, content="Caroline is thinking about studying counseling",
                                           conversation=said).memory
    context = selectors.context_for(owner=user, query="what will Caroline study?", budget=300)
    first = context.items[0]
    assert first.type == "memory" and first.memory.pk == memory.pk
    assert first.source() == {"memory_id": str(memory.pk), "conversation_id": str(said.pk), "message_id": None,
                              "document_id": None}
    assert context.text.startswith("Memories (most relevant first):\n- Caroline is thinking about")


def test_context_stays_within_the_budget_and_packs_whole_items(said, user):
    for budget in (40, 120, 400):
        context = selectors.context_for(owner=user, query="support group stories", budget=budget)
        assert context.used_tokens <= budget
        for item in context.items:
            assert item.text in context.text


def test_context_can_stay_in_one_conversation(said, user, eager, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        other = converse(user, [("user", "", "My support group meets on Tuesdays at the library.")])
    everywhere = selectors.context_for(owner=user, query="When does the support group meet?")
    assert any(i.type == "excerpt" and i.conversation.pk == other.pk for i in everywhere.items)
    here = selectors.context_for(owner=user, query="When does the support group meet?", conversation=said,
                                 stay_in_conversation=True)
    assert all(i.conversation.pk == said.pk for i in here.items if i.type == "excerpt")


def test_context_asks_a_failing_provider_once_and_answers_from_words(openai_embeddings, user):
    conversation = ConversationFactory(owner=user)
    services.messages_append(conversation=conversation, messages=[
        {"role": "assistant", "content": "Your locker at the gym is number 318."}])
    openai_embeddings.reset()
    openai_embeddings.fail(500, times=None)
    context = selectors.context_for(owner=user, query="gym locker")
    assert context.degraded and "locker at the gym is number 318" in context.text
    asked = [r for r in openai_embeddings.requests if r.path.endswith("/embeddings")]
    assert 1 <= len(asked) <= 2  # one question to the provider (its client retries once), not one per search
