"""Excerpts' turns come in one indexed statement with what is needed to show them, and a context embeds its query
once for every part (real model, real PostgreSQL)."""

import pytest

from conversations import context as ctx
from conversations import excerpts as exc
from conversations.models import Message
from integrations import embeddings
from integrations.embeddings import token_ids
from memories.search.query import _query_vector
from tests.conversations.test_selectors import converse


@pytest.fixture
def said(user, eager, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        return converse(user)


def test_a_hit_and_its_neighbours_come_in_one_statement_ready_to_show(said, user, django_assert_num_queries):
    hits = ctx.message_hits(owner=user, query="What did Melanie paint?")
    painted = next(h for h in hits if h.position == 6)
    turns = exc.turns_around(user.pk, [painted])
    with django_assert_num_queries(1):
        items, used = exc.excerpts(user.pk, [painted], 1000, "What did Melanie paint?")
        shown = [(m.sequence, m.name, m.conversation.title, m.sent_at) for item in items for m in item.messages]
    assert sorted(key[1] for key in turns) == [5, 6, 7]
    assert [s for s, *_ in shown] == [5, 6, 7] and {title for _, _, title, _ in shown} == {said.title}
    assert "Melanie: That's great. I painted a lake at sunrise" in items[0].text and used == items[0].tokens
    # sizes are summed from their parts' counts: the same as counting the whole text
    assert items[0].tokens == len(token_ids(items[0].text)) + 1


def test_a_contexts_size_is_its_texts_word_pieces(said, user):
    for query, budget in (("What did Melanie paint?", 1000), ("support group", 120), ("counseling", 60)):
        context = ctx.context_for(owner=user, query=query, budget=budget)
        assert context.used_tokens == len(token_ids(context.text)) <= budget
        assert all(i.tokens == len(token_ids(i.text)) + (i.type != "profile") for i in context.items)


def test_a_context_embeds_its_query_once_for_memories_messages_and_excerpts(said, user, monkeypatch):
    provider = embeddings.get_provider()
    calls = []
    real = provider.embed
    monkeypatch.setattr(provider, "embed", lambda texts: calls.append(list(texts)) or real(texts))
    ctx.context_for(owner=user, query="counseling", budget=500)  # what a process embeds once (intent directions)
    calls.clear()
    _query_vector.cache_clear()
    context = ctx.context_for(owner=user, query="What did Melanie paint?", budget=500)
    assert len(calls) == 1 and "painted a lake" in context.text


LONG_REPLY = " ".join(
    [f"Tip {i}: water the seedlings in the morning and keep the soil loose around them." for i in range(1, 15)]
    + ["- Your balcony gets the evening sun,\n  so tomatoes will do well there.", "1) Basil likes it too!"]
    + [f"Tip {i}: turn the pots   every week." for i in range(15, 30)])


def test_a_long_turns_outline_shows_it_as_working_it_out_would():
    outline = exc.outline(LONG_REPLY)
    assert outline["tokens"] == len(token_ids(LONG_REPLY)) > exc.TURN_TOKENS and outline["sentences"]
    assert exc.outline("Short and whole.") == {"tokens": len(token_ids("Short and whole."))}
    for query in ("will tomatoes grow on the balcony", "basil", "how often should I turn the pots?", ""):
        words = exc._lemmas(query)
        shown, tokens = exc.clip(LONG_REPLY, words, stored=outline)
        assert (shown, tokens) == exc.clip(LONG_REPLY, words) and tokens == len(token_ids(shown))
        assert tokens <= exc.TURN_TOKENS + 2 and shown != LONG_REPLY


def test_an_embedded_turn_keeps_its_outline_and_its_excerpt_reads_it(user, eager, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        converse(user, [("user", "Ana", "Which vegetables could grow on my balcony?"),
                        ("assistant", "", LONG_REPLY)])
    reply = Message.objects.get(owner=user, content=LONG_REPLY)
    assert reply.outline == exc.outline(LONG_REPLY)
    query = "will tomatoes grow on the balcony"
    excerpt = next(i for i in ctx.context_for(owner=user, query=query, budget=1000).items if i.type == "excerpt")
    assert "tomatoes will do well there" in excerpt.text and "Tip 29" not in excerpt.text
    # the stored outline is what the excerpt goes by: one saying the turn is short shows it whole
    Message.objects.filter(pk=reply.pk).update(outline={"tokens": 5})
    excerpt = next(i for i in ctx.context_for(owner=user, query=query, budget=1000).items if i.type == "excerpt")
    assert "Tip 29" in excerpt.text
