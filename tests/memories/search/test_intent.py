"""What a query needs and which memories answer it (memories.search.intent), and the words that name the owner,
through memory search with the real local model and real PostgreSQL."""

import pytest

from memories import batch
from memories.search import memory_search
from memories.search.intent import query_intent

FACTS = [
    ("Is allergic to peanuts", "restriction"),
    ("Likes long hikes along the coast", "preference"),
    ("Works night shifts as a paramedic", "fact"),
    ("Has a grey rabbit called Pixel", "relationship"),
    ("Wants to visit Iceland next winter", "goal"),
    ("Collects vintage vinyl records", ""),
    ("Moved to Bordeaux two years ago", "fact"),
    ("Takes the tram to work", ""),
]


def store(user, facts, **extra):
    items = [{"content": content, "category": category, "allow_duplicate": True, **extra}
             for content, category in facts]
    return [w.memory for w in batch.memory_batch_create(owner=user, items=items, actor=user)]


def contents(result, k=5):
    return [r.memory.content for r in result.results[:k]]


@pytest.mark.parametrize("query", [
    "what should I not cook for them?",
    "is there any food I must keep away from him?",
    "what can't she eat?",
])
def test_a_need_phrased_as_a_question_finds_the_restriction_it_depends_on(user, query):
    store(user, FACTS)
    result = memory_search(owner=user, query=query, limit=5)
    assert contents(result)[0] == "Is allergic to peanuts"
    assert result.results[0].parts["intent"] > 0


def test_a_memory_without_the_category_is_of_its_kind_by_its_meaning(user):
    store(user, [*FACTS[1:], ("Cannot have anything with dairy in it", "")])
    result = memory_search(owner=user, query="what should I not cook for them?", limit=5)
    assert contents(result)[0] == "Cannot have anything with dairy in it"
    top = result.results[0].parts
    assert 0 < top["intent"] and top["keyword"] == 0


def test_a_gift_question_finds_what_they_enjoy(user):
    store(user, FACTS)
    result = memory_search(owner=user, query="what could I buy her as a present?", limit=3)
    assert {"Likes long hikes along the coast", "Collects vintage vinyl records"} & set(contents(result, 3))


def test_only_a_clear_need_has_an_intent(user):
    from integrations.embeddings import embed_text

    assert query_intent(embed_text("what should I not cook for them?")).kind == "restriction"
    assert query_intent(embed_text("what does she enjoy doing at the weekend?")).kind == "preference"
    for plain in ("When did Caroline move to Sweden?", "quarterly revenue of the Lyon office"):
        assert query_intent(embed_text(plain)) is None, plain
    # near two kinds (a preference 0.47, a restriction 0.41): neither clearly
    ambiguous = query_intent(embed_text("would a steak dinner be a good idea for them?"))
    assert ambiguous is None or ambiguous.strength < 0.25


def test_other_rankings_and_modes_have_no_intent_part(user):
    store(user, FACTS)
    for options in ({"ranking": "blend"}, {"mode": "semantic"}, {"mode": "keyword"}):
        result = memory_search(owner=user, query="what should I not cook for them?", **options)
        assert all("intent" not in r.parts for r in result.results)


EXTRACTED = [
    "The user is allergic to shellfish.",
    "The user has a cat named Miso.",
    "The user works as a nurse at the hospital.",
    "The user lives in Lyon.",
]


def test_the_word_user_carries_no_keyword_weight(user):
    store(user, [(c, "") for c in EXTRACTED], subject="user")
    result = memory_search(owner=user, query="what pet does the user have?", limit=5)
    assert contents(result)[0] == "The user has a cat named Miso."
    assert all(r.parts["keyword"] == 0 for r in result.results)  # no memory says "pet": none matched by "user"
    assert not memory_search(owner=user, query="user", mode="keyword").results
    # the memory texts keep the word: a memory about "users" written by hand is still found by it
    store(user, [("Manages the user accounts of the clinic's booking system", "")])
    assert contents(memory_search(owner=user, query="accounts of users", mode="keyword")) == [
        "Manages the user accounts of the clinic's booking system"]


def test_the_owners_own_name_carries_no_keyword_weight(user):
    user.first_name, user.last_name = "Dana", "Whitfield"
    user.save()
    store(user, [(c.replace("The user", "Dana"), "") for c in EXTRACTED])
    query = "what pet does Dana Whitfield have?"
    result = memory_search(owner=user, query=query, limit=5)
    assert len(result.results) == len(EXTRACTED) and all(r.parts["keyword"] == 0 for r in result.results)
    # searched by id (no name known), the name is an ordinary word, and every memory matched it
    by_id = memory_search(owner=user.pk, query=query, limit=5)
    assert len(by_id.results) == len(EXTRACTED) and all(r.parts["keyword"] > 0 for r in by_id.results)
