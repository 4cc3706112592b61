"""Memory search through the service and the API, with the real local embedding model and real PostgreSQL."""

from datetime import UTC, datetime, timedelta

import numpy as np
import pytest
from django.core.cache import cache
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from memories import batch, search, services
from memories.models import Memory, MemoryEvent
from memories.search import memory_search
from memories.search.formula import FILL_TO
from memories.selectors import MemoryFilters
from tests.factories import ProjectFactory, memories_with_random_vectors

FACTS = [
    "I'm allergic to peanuts and carry an EpiPen",
    "My favourite colour is dark green",
    "I work as a nurse at the hospital in Lyon",
    "My daughter Emma starts school in May",
    "I switched from Java to Python last year",
]


def store(user, contents, **extra):
    items = [{"content": c, **extra} for c in contents]
    return [w.memory for w in batch.memory_batch_create(owner=user, items=items, actor=user)]


def ids(result):
    return [r.memory.pk for r in result.results]


def test_hybrid_puts_the_relevant_memory_first_and_explains_its_score(user):
    memories = store(user, FACTS)
    result = memory_search(owner=user, query="which foods is the user allergic to?")
    assert result.mode == "hybrid" and result.ranking == "fused" and not result.degraded
    assert result.results[0].memory.pk == memories[0].pk
    related = [r for r in result.results if r.score > 0]  # the rest fill a short list at score 0
    assert related and all(r.score == 0 for r in result.results[len(related):])
    for scored in related:
        assert scored.score == pytest.approx(sum(scored.parts.values()))
    scores = [r.score for r in result.results]
    assert scores == sorted(scores, reverse=True)


def test_hybrid_finds_by_meaning_when_no_word_matches(user):
    memories = store(user, FACTS)
    result = memory_search(owner=user, query="What is her job?")
    assert result.results[0].memory.pk == memories[2].pk


def test_semantic_returns_only_what_reaches_the_threshold(user):
    memories = store(user, FACTS)
    close = memory_search(owner=user, query="I am allergic to peanuts", mode="semantic")
    assert ids(close) == [memories[0].pk]
    assert close.results[0].parts["semantic"] >= 0.7

    everything = memory_search(owner=user, query="I am allergic to peanuts", mode="semantic", threshold=0.0)
    similarities = [r.parts["semantic"] for r in everything.results]
    assert len(similarities) >= 3 and min(similarities) >= 0.0
    assert similarities == sorted(similarities, reverse=True)

    limited = memory_search(owner=user, query="I am allergic to peanuts", mode="semantic", threshold=0.0, limit=2)
    assert ids(limited) == ids(everything)[:2]


def test_semantic_mode_lets_through_what_the_model_calls_related(user):
    memories = store(user, FACTS)
    result = memory_search(owner=user, query="What is her job?", mode="semantic")
    assert ids(result)[0] == memories[2].pk
    assert search.DEFAULT_THRESHOLD <= result.results[0].parts["semantic"] < 0.7  # seed 001's 0.7 found nothing
    assert all(r.parts["semantic"] >= search.DEFAULT_THRESHOLD for r in result.results)
    assert memory_search(owner=user, query="how do I change a bike tyre", mode="semantic").results == []


def test_keyword_matches_words_only(user):
    memories = store(user, FACTS)
    result = memory_search(owner=user, query="Python", mode="keyword")
    assert ids(result) == [memories[4].pk]
    assert memory_search(owner=user, query="programming language", mode="keyword").results == []


def test_seed_weighted_ranking_is_similarity_and_importance(user):
    low, high = store(user, ["Likes hiking in the Alps"], importance=0.1)[0], store(
        user, ["Likes hiking in the Alps in summer"], importance=0.9, allow_duplicate=True)[0]
    result = memory_search(owner=user, query="hiking", ranking="weighted", threshold=0.0)
    assert ids(result)[:2] == [high.pk, low.pk]
    top = result.results[0]
    assert top.parts["importance"] == pytest.approx(0.3 * 0.9)
    assert top.score == pytest.approx(top.parts["similarity"] + top.parts["importance"])


def test_rrf_and_blend_rankings_are_available(user):
    memories = store(user, FACTS)
    for ranking in ("rrf", "blend"):
        result = memory_search(owner=user, query="peanut allergy", ranking=ranking)
        assert result.ranking == ranking and result.results[0].memory.pk == memories[0].pk


def test_superseded_inactive_and_expired_memories_are_left_out_unless_asked_for(user):
    old = store(user, ["Lives in Paris"])[0]
    new = services.memory_create(owner=user, content="Moved to Berlin", supersedes=old.pk, actor=user).memory
    gone = store(user, ["Lives in a flat near Paris"])[0]
    services.memory_soft_delete(memory=gone, actor=user)
    expired = store(user, ["Staying in a Paris hotel this week"],
                    expires_at=timezone.now() - timedelta(days=1))[0]

    found = set(ids(memory_search(owner=user, query="Paris", mode="keyword")))
    assert found == set()
    found = set(ids(memory_search(owner=user, query="Paris Berlin", mode="keyword",
                                  filters=MemoryFilters(include_superseded=True, include_inactive=True,
                                                        include_expired=True))))
    assert found == {old.pk, new.pk, gone.pk, expired.pk}


def test_project_scope_rule_and_other_users_are_never_seen(user, other_user):
    project = ProjectFactory(owner=user)
    mine = store(user, ["Prefers tea over coffee"])[0]
    in_project = store(user, ["The project uses tea-stained paper"], project=project)[0]
    store(other_user, ["Prefers tea, always tea"])

    user_scoped = ids(memory_search(owner=user, query="tea", threshold=0.0))
    assert user_scoped == [mine.pk]
    with_project = set(ids(memory_search(owner=user, query="tea", filters=MemoryFilters(project=project))))
    assert with_project == {mine.pk, in_project.pk}


def test_filters_narrow_search(user):
    tagged = store(user, ["Plays the violin on Sundays"], tags=["music"], category="hobby")[0]
    store(user, ["Plays football on Sundays"], tags=["sport"], category="hobby")
    result = memory_search(owner=user, query="Sundays", filters=MemoryFilters(tags=["music"]))
    assert ids(result) == [tagged.pk]


def test_dates_in_the_query_favour_memories_from_then(user):
    june = store(user, ["We went to the lake"], happened_at=datetime(2023, 6, 10, tzinfo=UTC))[0]
    july = store(user, ["We went to the lake again"], happened_at=datetime(2023, 7, 8, tzinfo=UTC),
                 allow_duplicate=True)[0]
    result = memory_search(owner=user, query="Where did we go in July 2023?")
    assert ids(result)[0] == july.pk
    assert result.results[0].parts["date"] > 0
    assert june.pk in ids(result)


def test_degraded_search_answers_from_full_text(openai_embeddings, user):
    memory = services.memory_create(owner=user, content="Allergic to penicillin", actor=user).memory
    openai_embeddings.fail(500, times=None)
    for mode in ("hybrid", "semantic"):
        result = memory_search(owner=user, query="penicillin", mode=mode)
        assert result.degraded is True
        assert ids(result) == [memory.pk]


def test_memories_stored_while_the_provider_was_down_are_embedded_later(openai_embeddings, user):
    openai_embeddings.fail(500, times=None)
    memory = services.memory_create(owner=user, content="Allergic to penicillin", actor=user).memory
    assert Memory.objects.get(pk=memory.pk).embedding is None
    openai_embeddings.reset()
    assert batch.memories_embed_pending() == 1
    memory = Memory.objects.get(pk=memory.pk)
    assert memory.embedding is not None and memory.embedding_model == "fake-embed"
    assert memory.history.first().history_action == "EMBED"
    assert batch.memories_embed_pending() == 0


# --- over HTTP ------------------------------------------------------------------------------------------------


def test_search_endpoint_returns_scores_and_marks_what_it_returned(api, user, settings):
    memories = store(user, FACTS)
    response = api.post("/api/memories/search/", {"query": "peanut allergy", "limit": 3}, format="json")
    assert response.status_code == 200
    body = response.json()
    # only the related memory: hybrid search does not pad with unrelated ones
    assert body["mode"] == "hybrid" and body["degraded"] is False and len(body["results"]) == 1
    top = body["results"][0]
    assert top["memory"]["id"] == str(memories[0].pk) and set(top["parts"]) >= {"semantic", "keyword"}
    returned = [r["memory"]["id"] for r in body["results"]]
    touched = Memory.objects.filter(owner=user, accessed_at__isnull=False)
    assert sorted(str(pk) for pk in touched.values_list("pk", flat=True)) == sorted(returned)
    events = MemoryEvent.objects.filter(action="SEARCH")
    assert events.count() == 1 and events.first().query == "peanut allergy"

    settings.MEMORY_LOG_READS = False
    api.post("/api/memories/search/", {"query": "peanut allergy"}, format="json")
    assert MemoryEvent.objects.filter(action="SEARCH").count() == 1


def test_hybrid_returns_nothing_unrelated(user):
    allergy, _ = store(user, ["Is allergic to peanuts", "Lives in Berlin"])
    # "allergy" and "Lives in Berlin": 0.11, not even near enough to fill the short list (formula.FILL_FLOOR)
    assert ids(memory_search(owner=user, query="allergy")) == [allergy.pk]
    assert ids(memory_search(owner=user, query="how do I change a bike tyre")) == []
    # "favourite football team" to "Lives in Berlin" is 0.22: just past the model's unrelated level (0.2)
    # the floor is hybrid's: semantic mode keeps its own threshold, which a caller may lower
    assert len(ids(memory_search(owner=user, query="allergy", mode="semantic", threshold=0))) == 2


def test_common_words_shared_with_unrelated_memories_do_not_outrank_the_needed_fact(user):
    birthday, dogs, passport = store(user, ["The user's birthday is on 14 March.", "Is scared of big dogs",
                                            "Renewed the passport last year"])
    # "big" and "year" are all the dogs and the passport share with the question (cosines < 0.1)
    assert ids(memory_search(owner=user, query="When is the user's big day each year?"))[0] == birthday.pk
    # a keyword match with meaning behind it counts in full
    assert ids(memory_search(owner=user, query="is she afraid of big dogs?"))[0] == dogs.pk


def test_memories_just_below_the_floor_are_related_when_the_nearest_passes_it(user):
    anniversary, jazz, _ = store(user, ["Wedding anniversary: 2 September", "The user loves jazz, especially Miles "
                                        "Davis.", "The user's internet provider is Free."])
    # the nearest memory (0.31) passes the floor, jazz (0.19) is near it, the provider (< 0.1) is not
    assert ids(memory_search(owner=user, query="Which concert tickets would the user appreciate?")) == [
        anniversary.pk, jazz.pk]
    # with nothing past the floor, nothing near it counts either
    assert ids(memory_search(owner=user, query="how do I change a bike tyre")) == []


def test_search_endpoint_degrades_instead_of_failing(openai_embeddings, api, user):
    services.memory_create(owner=user, content="Allergic to penicillin", actor=user)
    openai_embeddings.fail(500, times=None)
    response = api.post("/api/memories/search/", {"query": "penicillin"}, format="json")
    assert response.status_code == 200
    assert response.json()["degraded"] is True and len(response.json()["results"]) == 1


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({}, "query"),
        ({"query": "x", "threshold": 1.5}, "threshold"),
        ({"query": "x", "threshold": -0.1}, "threshold"),
        ({"query": "x", "limit": 0}, "limit"),
        ({"query": "x", "limit": 101}, "limit"),
        ({"query": "x", "mode": "fuzzy"}, "mode"),
        ({"query": "x", "ranking": "magic"}, "ranking"),
        ({"query": "x", "tags": "a"}, "tags"),
        ({"query": "x", "project": 999999}, "project"),
        ({"query": "x", "colour": "blue"}, "colour"),
    ],
)
def test_bad_search_input_is_a_400_naming_the_field(api, body, field):
    response = api.post("/api/memories/search/", body, format="json")
    assert response.status_code == 400
    assert field in response.json()


def test_every_ranking_is_documented():
    assert set(search.MODE_RANKINGS.values()) <= set(search.RANKINGS)


# --- exact path for small owners, filtered HNSW for large ones ------------------------------------------------




def exact_top(stored, vectors, query, k=10):
    return [stored[i] for i in np.argsort(-(vectors @ query))[:k]]


@pytest.mark.parametrize(("exact_max", "snapshot_rows", "path"),
                         [(10_000, 50_000, "snapshot"), (10_000, 0, "exact"), (10, 50_000, "hnsw")])
def test_owner_size_picks_the_snapshot_the_exact_or_the_hnsw_path(user, settings, exact_max, snapshot_rows, path):
    settings.SEARCH_EXACT_MAX_MEMORIES = exact_max
    settings.SEARCH_EXACT_MAX_SHARE = 0.0  # the count alone decides here
    settings.SEARCH_SNAPSHOT_ROWS = snapshot_rows
    settings.SEARCH_SNAPSHOT_AFTER = 1
    stored, vectors = memories_with_random_vectors(user, 40)
    cache.clear()  # the owner's cached count
    with CaptureQueriesContext(connection) as queries:
        result = memory_search(owner=user, query="anything", mode="semantic", threshold=0.0, limit=10,
                               query_vector=vectors[3].tolist())
    sql = " ".join(q["sql"] for q in queries.captured_queries)
    assert ("hnsw.ef_search" in sql) is (path == "hnsw")  # HNSW settings only on the HNSW path
    # the exact path orders by an expression no index serves
    assert (") + 0, m.id LIMIT" in sql) is (path == "exact")
    assert ("halfvec_send" in sql) is (path == "snapshot")  # the rows read into the process
    assert ids(result)[0] == stored[3]


def test_the_exact_path_is_an_exact_scan(user, settings):
    settings.SEARCH_EXACT_MAX_MEMORIES = 10_000
    stored, vectors = memories_with_random_vectors(user, 300)
    rng = np.random.default_rng(1)
    for _ in range(5):
        query = vectors[rng.integers(300)] + rng.normal(scale=0.5, size=384).astype(np.float32)
        query /= np.linalg.norm(query)
        result = memory_search(owner=user, query="q", mode="semantic", threshold=-1.0, limit=10,
                               query_vector=query.tolist())
        assert ids(result) == exact_top(stored, vectors, query)


def test_the_hnsw_path_finds_what_an_exact_scan_finds(user, other_user, settings):
    settings.SEARCH_EXACT_MAX_MEMORIES = 0
    settings.SEARCH_EXACT_MAX_SHARE = 0.0  # the count alone decides here
    stored, vectors = memories_with_random_vectors(user, 300)
    memories_with_random_vectors(other_user, 300, seed=8)  # another owner's rows in the same index
    rng = np.random.default_rng(2)
    found = []
    for _ in range(10):
        query = vectors[rng.integers(300)] + rng.normal(scale=0.5, size=384).astype(np.float32)
        query /= np.linalg.norm(query)
        result = memory_search(owner=user, query="q", mode="semantic", threshold=-1.0, limit=10,
                               query_vector=query.tolist())
        found.append(len(set(ids(result)) & set(exact_top(stored, vectors, query))) / 10)
    assert sum(found) / len(found) >= 0.95


def test_the_query_vector_cache_is_per_owner(api, other_api, monkeypatch):
    """A cached query answered faster, so its time told a user whether someone else had searched the same text."""
    from integrations import embeddings
    from memories import spaces
    from memories.search import query as query_module

    query_module._query_vector.cache_clear()
    # the provider search embeds the memories' queries with (a test before may have built a named one)
    provider = embeddings.provider_for(spaces.active_model(spaces.Name.MEMORIES))
    asked, real = [], provider.embed
    monkeypatch.setattr(provider, "embed", lambda texts: asked.extend(texts) or real(texts))
    text = "where did my colleague say the offsite would be held"
    for client in (api, api, other_api, other_api):
        assert client.post("/api/memories/search/", {"query": text}, format="json").status_code == 200
    assert len(asked) == 2  # once per owner: each owner's second search is served from their own entry


# --- a new user's memories: a few written by hand, most extracted from one chat ------------------------------------

# (content, category) in the order the chat said them; each extracted from a message of its own
CHAT_STATEMENTS = [
    ("The user lives in Lisbon.", "fact"),
    ("The user works at Bosch as an engineer.", "fact"),
    ("The user's brother works at Siemens.", "relationship"),
    ("The user is 41 years old.", "fact"),
    ("The user's phone number is +351 912 345 678.", "fact"),
    ("The user's work phone number is +49 170 1234567.", "fact"),
    ("The user has an iPhone 12.", "fact"),
    ("The user's wife has a Pixel 9.", "relationship"),
    ("The user got a promotion in October 2026.", "history"),
    ("The user hates cilantro.", "preference"),
    ("The user prefers tea.", "preference"),
    ("The user's favourite band is Radiohead.", "preference"),
    ("The user goes running every Sunday.", "fact"),
]
BY_HAND = ["Lives in Paris", "Prefers tea", "Is allergic to peanuts", "Loves Italian food"]


@pytest.fixture(params=["sql", "snapshot"])
def new_user(request, user, settings):
    """The memories of a new user who tried the API, searched by the SQL path or from a snapshot."""
    from tests.factories import ConversationFactory, MessageFactory

    if request.param == "sql":
        settings.SEARCH_SNAPSHOT_ROWS = 0
    else:
        settings.SEARCH_SNAPSHOT_AFTER = 1
    store(user, BY_HAND)
    conversation = ConversationFactory(owner=user)
    for content, category in CHAT_STATEMENTS:  # one at a time: stored in the order they were said
        message = MessageFactory(conversation=conversation, content=content.replace("The user", "I"))
        store(user, [content], category=category, source="extracted", conversation=conversation, message=message,
              source_ref={"conversation_id": str(conversation.pk), "message_id": str(message.pk)})
    return user


def contents(result):
    return [r.memory.content for r in result.results]


def test_a_need_ranks_what_is_related_and_fills_only_a_short_list(new_user):
    result = memory_search(owner=new_user, query="what does the user like?")
    related = [r.memory.content for r in result.results if r.score > 0]
    # preferences only: no phone number, no home, no phone model carried in by importance, recency or a neighbour
    assert set(related) <= {"The user's favourite band is Radiohead.", "The user prefers tea.", "Prefers tea",
                            "The user hates cilantro.", "Loves Italian food"}
    assert "Loves Italian food" in related
    # after them, at score 0, the nearly related fill the list up to five, and no further
    assert contents(result)[:len(related)] == related and len(result.results) == max(len(related), FILL_TO)
    assert all(r.score == 0 for r in result.results[len(related):])
    assert contents(memory_search(owner=new_user, query="what does the user like?", fill=False)) == related


def test_a_hit_lends_context_only_to_memories_related_in_their_own_right(new_user):
    # "phone" is in both phone numbers: they lend context to what was said right before and after them
    found = contents(memory_search(owner=new_user, query="what phone does the user have?", fill=False))
    assert "The user has an iPhone 12." in found
    # unrelated by words and meaning (cosines 0.07 and 0.2): never carried in by a neighbour's context
    assert not {"The user works at Bosch as an engineer.", "The user's brother works at Siemens."} & set(found)
    # only the memories holding the word "phone" come before the phone the user has
    iphone = found.index("The user has an iPhone 12.")
    assert all("phone" in content.split() for content in found[:iphone])

    home = contents(memory_search(owner=new_user, query="where do I live?", fill=False))
    assert set(home[:2]) == {"The user lives in Lisbon.", "Lives in Paris"}  # both homes first (none superseded here)
    # said right after "I live in Lisbon", but nothing to do with where the user lives
    assert not {"The user works at Bosch as an engineer.", "The user's brother works at Siemens."} & set(home)


def test_turns_beside_a_hit_gain_its_context(user):
    turns = ["Melanie: What did you paint last weekend?", "Caroline: I painted the lake at sunset, in oils.",
             "Caroline: The traffic on the bridge was awful this morning."]
    stored = []
    for turn in turns:  # one at a time: stored in the order they were said
        stored += store(user, [turn], source="import", source_ref={"conversation_id": "locomo/session_1"})
    result = memory_search(owner=user, query="what did Melanie paint?", fill=False)
    answer = next(r for r in result.results if r.memory.pk == stored[1].pk)
    assert answer.parts["context"] > 0
    assert stored[2].pk not in ids(result)  # beside the hit too, but unrelated to the question
