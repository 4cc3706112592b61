"""The LangGraph store API over HTTP: items are the caller's memories, with LangGraph's store semantics."""

from datetime import timedelta

import pytest
from django.utils import timezone
from rest_framework.test import APIClient

from memories import batch as memory_batch
from memories.models import Memory
from store.models import ItemVector
from tests.factories import token_for

pytestmark = pytest.mark.django_db


def memory_at(namespace, key) -> Memory:
    return Memory.objects.get(namespace=namespace, key=key, is_active=True)


# --- items ----------------------------------------------------------------------------------------------------


def test_put_then_get_returns_the_value_as_it_was_put(api, put):
    value = {"content": "Likes green tea", "tags": ["drink"], "nested": {"n": 1.5, "ok": True, "none": None}}
    put(["prefs", "drinks"], "tea", value)

    response = api.get("/api/store/items", {"namespace": "prefs.drinks", "key": "tea"})

    assert response.status_code == 200
    item = response.json()
    assert item["namespace"] == ["prefs", "drinks"]
    assert item["key"] == "tea"
    assert item["value"] == value
    assert item["created_at"] and item["updated_at"]


def test_a_missing_item_is_null(api):
    response = api.get("/api/store/items", {"namespace": "nothing.here", "key": "k"})

    assert response.status_code == 200
    assert response.content == b"null"


def test_put_is_an_upsert_that_keeps_created_at_and_versions_the_memory(api, put):
    put(["notes"], "n1", {"content": "first"})
    first = api.get("/api/store/items", {"namespace": "notes", "key": "n1"}).json()
    put(["notes"], "n1", {"content": "second"})
    second = api.get("/api/store/items", {"namespace": "notes", "key": "n1"}).json()

    assert second["value"] == {"content": "second"}
    assert second["created_at"] == first["created_at"]
    assert second["updated_at"] > first["updated_at"]
    memory = memory_at(["notes"], "n1")
    assert memory.version == 2
    assert Memory.objects.filter(namespace=["notes"], key="n1").count() == 1
    history = api.get(f"/api/memories/{memory.pk}/history/").json()
    assert [h["content"] for h in history] == ["second", "first"]


def test_delete_is_a_soft_delete_and_the_item_reads_as_missing(api, put):
    put(["notes"], "gone", {"content": "to delete"})
    memory = memory_at(["notes"], "gone")

    response = api.delete("/api/store/items", {"namespace": ["notes"], "key": "gone"}, format="json")

    assert response.status_code == 204
    assert api.get("/api/store/items", {"namespace": "notes", "key": "gone"}).content == b"null"
    memory.refresh_from_db()
    assert memory.is_active is False
    assert memory.history.first().history_action == "DELETE"


def test_a_store_item_is_a_memory_with_content_from_its_value(api, put):
    put(["profile"], "city", {"content": "Lives in Lyon", "since": 2020})
    put(["profile"], "pets", {"pets": ["cat", "dog"]}, index=["pets[*]"])

    memories = {m["key"]: m for m in api.get("/api/memories/").json()["results"]}

    assert memories["city"]["content"] == "Lives in Lyon"
    assert memories["city"]["value"] == {"content": "Lives in Lyon", "since": 2020}
    assert memories["city"]["namespace"] == ["profile"]
    assert memories["pets"]["content"] == "cat\ndog"  # no text content: the indexed texts


def test_an_items_content_is_cut_to_the_memory_limits_and_its_value_kept_whole(api, put, settings):
    huge = "x" * 100_000  # one word piece: the token limit alone kept all of it as the memory's content
    put(["notes"], "huge", {"content": huge})
    memory = memory_at(["notes"], "huge")
    assert memory.content == "x" * settings.MEMORY_MAX_CHARS and memory.value == {"content": huge}
    settings.MEMORY_MAX_CHARS = 50
    put(["notes"], "prose", {"text": "The user likes tea. " * 20}, index=["text"])
    assert memory_at(["notes"], "prose").content == ("The user likes tea. " * 20)[:50]


def test_a_memory_written_through_the_memory_api_is_an_item(api, search):
    created = api.post("/api/memories/", {"content": "Allergic to peanuts", "key": "allergy"}, format="json")
    assert created.status_code == 201

    item = api.get("/api/store/items", {"namespace": "memories", "key": "allergy"}).json()
    found = search(["memories"], query="food allergy")

    assert item["value"] == {"content": "Allergic to peanuts"}
    assert found[0]["key"] == "allergy"
    assert found[0]["score"] > 0.3


def test_store_writes_never_merge_near_duplicates(put, user):
    put(["facts"], "a", {"content": "The user likes green tea"})
    put(["facts"], "b", {"content": "The user likes green tea."})

    assert Memory.objects.filter(owner=user, namespace=["facts"], is_active=True).count() == 2


# --- search ---------------------------------------------------------------------------------------------------


def test_prefixes_match_whole_labels_and_wildcard_characters_are_literal(put, search):
    for namespace in (["foo"], ["foo", "child"], ["foobar"], ["user_1"], ["userX1"], ["a%b"], ["axxb"]):
        put(namespace, "k", {"v": 1})

    def namespaces(prefix):
        return sorted(tuple(item["namespace"]) for item in search(prefix, limit=100))

    assert namespaces(["foo"]) == [("foo",), ("foo", "child")]
    assert namespaces(["fo"]) == []
    assert namespaces(["user_1"]) == [("user_1",)]
    assert namespaces(["a%b"]) == [("a%b",)]
    assert len(search([], limit=100)) == 7


def test_without_a_query_newest_update_comes_first_unscored_and_pages(put, search):
    for key in ("one", "two", "three"):
        put(["list"], key, {"n": key})
    put(["list"], "one", {"n": "one again"})

    items = search(["list"])

    assert [i["key"] for i in items] == ["one", "three", "two"]
    assert all(i["score"] is None for i in items)
    assert [i["key"] for i in search(["list"], limit=2, offset=1)] == ["three", "two"]


def test_filters_compare_numbers_as_numbers(put, search):
    put(["f"], "nine", {"n": 9, "color": "red"})
    put(["f"], "ten", {"n": 10, "color": "blue"})
    put(["f"], "text", {"n": "10", "color": "red"})

    def keys(filter_):
        return sorted(i["key"] for i in search(["f"], filter=filter_))

    assert keys({"n": {"$gt": 9}}) == ["ten"]  # as text, "10" < "9"; and the string "10" is not a number
    assert keys({"n": {"$gte": 9, "$lt": 10}}) == ["nine"]
    assert keys({"n": {"$lte": 9.5}}) == ["nine"]
    assert keys({"n": 10}) == ["ten"]
    assert keys({"n": "10"}) == ["text"]
    assert keys({"color": {"$ne": "red"}}) == ["ten"]
    assert keys({"color": "red", "n": {"$eq": 9}}) == ["nine"]


def test_a_query_scores_by_cosine_of_the_best_indexed_field(put, search):
    put(["docs"], "paris", {"title": "Travel notes", "body": {"text": "The Eiffel tower in Paris"}},
        index=["title", "body.text"])
    put(["docs"], "cooking", {"sections": [{"x": "A recipe for lasagne"}, {"x": "Baking sourdough bread"}]},
        index=["sections[*].x"])

    found = search(["docs"], query="bread baking")

    assert [i["key"] for i in found] == ["cooking", "paris"]
    assert found[0]["score"] > found[1]["score"]
    paths = set(ItemVector.objects.filter(memory__key="cooking").values_list("path", flat=True))
    assert paths == {"sections[*].x.0", "sections[*].x.1"}
    assert set(ItemVector.objects.filter(memory__key="paris").values_list("path", flat=True)) == {
        "title", "body.text"}


def test_index_false_stores_no_vector_and_nothing_embeds_it_later(put, search, user):
    put(["docs"], "plain", {"text": "Sourdough starter feeding schedule"}, index=False)
    put(["docs"], "indexed", {"text": "Bread recipes"})
    memory = memory_at(["docs"], "plain")

    memory_batch.memories_embed_pending()

    memory.refresh_from_db()
    assert memory.embedding is None and memory.indexed is False
    assert not ItemVector.objects.filter(memory=memory).exists()
    found = search(["docs"], query="sourdough")
    assert [(i["key"], i["score"] is None) for i in found] == [("indexed", False), ("plain", True)]


def test_a_threshold_is_opt_in(put, search):
    put(["t"], "near", {"content": "I love my golden retriever"}, index=["content"])
    put(["t"], "far", {"content": "Quarterly tax filing deadlines"}, index=["content"])

    assert len(search(["t"], query="my dog")) == 2
    assert [i["key"] for i in search(["t"], query="my dog", threshold=0.5)] == ["near"]


# --- namespaces -----------------------------------------------------------------------------------------------


def test_list_namespaces_with_prefix_suffix_wildcards_depth_and_pages(api, put):
    for namespace in (["a", "b", "c"], ["a", "b", "d", "e"], ["a", "c", "f"], ["b", "a", "f"], ["users", "1"]):
        put(namespace, "k", {"v": 1})

    def listed(**body):
        response = api.post("/api/store/namespaces", body, format="json")
        assert response.status_code == 200, response.content
        return [tuple(ns) for ns in response.json()["namespaces"]]

    assert listed(prefix=["a", "b"]) == [("a", "b", "c"), ("a", "b", "d", "e")]
    assert listed(suffix=["f"]) == [("a", "c", "f"), ("b", "a", "f")]
    assert listed(prefix=["a", "*", "f"]) == [("a", "c", "f")]
    assert listed(prefix=["a"], max_depth=2) == [("a", "b"), ("a", "c")]
    assert listed(limit=2, offset=1) == [("a", "b", "d", "e"), ("a", "c", "f")]


# --- TTL ------------------------------------------------------------------------------------------------------


def test_an_expired_item_is_never_returned_and_is_swept(api, put, search):
    put(["ttl"], "short", {"content": "temporary"}, ttl=1)
    memory = memory_at(["ttl"], "short")
    assert memory.ttl_minutes == 1
    past = timezone.now() - timedelta(minutes=2)
    Memory.objects.filter(pk=memory.pk).update(updated_at=past, accessed_at=past)  # as if two minutes passed

    assert api.get("/api/store/items", {"namespace": "ttl", "key": "short"}).content == b"null"
    assert search(["ttl"]) == []
    assert api.get("/api/memories/").json()["count"] == 0
    assert memory_batch.memories_deactivate_expired() == 1
    memory.refresh_from_db()
    assert memory.is_active is False


def test_reads_refresh_the_ttl_unless_asked_not_to(api, put, search):
    put(["ttl"], "kept", {"content": "kept alive by reads"}, ttl=10)
    memory = memory_at(["ttl"], "kept")
    almost = timezone.now() - timedelta(minutes=9)
    Memory.objects.filter(pk=memory.pk).update(updated_at=almost, accessed_at=almost)

    api.get("/api/store/items", {"namespace": "ttl", "key": "kept", "refresh_ttl": "false"})
    search(["ttl"], refresh_ttl=False)
    memory.refresh_from_db()
    assert memory.accessed_at == almost

    api.get("/api/store/items", {"namespace": "ttl", "key": "kept"})
    memory.refresh_from_db()
    assert memory.accessed_at > almost + timedelta(minutes=8)


# --- batch ----------------------------------------------------------------------------------------------------


def test_a_batch_runs_in_order_and_answers_in_order(api):
    response = api.post("/api/store/batch", {"ops": [
        {"op": "put", "namespace": ["b"], "key": "k", "value": {"content": "one"}},
        {"op": "get", "namespace": ["b"], "key": "k"},
        {"op": "put", "namespace": ["b"], "key": "k", "value": {"content": "two"}},
        {"op": "search", "namespace_prefix": ["b"]},
        {"op": "list_namespaces"},
        {"op": "delete", "namespace": ["b"], "key": "k"},
        {"op": "get", "namespace": ["b"], "key": "k"},
    ]}, format="json")

    assert response.status_code == 200, response.content
    results = response.json()["results"]
    assert results[0] is None and results[2] is None and results[5] is None
    assert results[1]["value"] == {"content": "one"}
    assert [i["value"] for i in results[3]] == [{"content": "two"}]
    assert results[4] == [["b"]]
    assert results[6] is None


# --- refusals -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("namespace, message", [
    (["a.b"], "'.'"), (["a", ""], "empty"), ([1], "strings"), ([], "at least one"), ("a", "list"),
])
def test_bad_namespaces_are_a_400_naming_the_field(api, namespace, message):
    response = api.put("/api/store/items", {"namespace": namespace, "key": "k", "value": {}}, format="json")

    assert response.status_code == 400
    assert message in " ".join(response.json()["namespace"])


def test_a_bad_op_in_a_batch_is_named_and_nothing_is_written(api, user):
    response = api.post("/api/store/batch", {"ops": [
        {"op": "put", "namespace": ["ok"], "key": "k", "value": {"content": "fine"}},
        {"op": "put", "namespace": ["no.dots"], "key": "k", "value": {}},
    ]}, format="json")

    assert response.status_code == 400
    assert "ops[1].namespace" in response.json()
    assert not Memory.objects.filter(owner=user).exists()


@pytest.mark.parametrize("body, field", [
    ({"filter": {"n": {"$regex": "x"}}}, "filter"),
    ({"filter": {"n": {"$gt": [1]}}}, "filter"),
    ({"limit": 0}, "limit"),
    ({"query": 5}, "query"),
    ({"namespace_prefix": ["x\x00"]}, "namespace_prefix"),
])
def test_bad_search_bodies_are_a_400_naming_the_field(api, body, field):
    response = api.post("/api/store/items/search", {"namespace_prefix": [], **body}, format="json")

    assert response.status_code == 400
    assert field in response.json()


def test_bad_values_and_oversized_requests_are_refused(api, settings):
    settings.STORE_VALUE_MAX_BYTES = 100
    settings.STORE_BATCH_MAX_OPS = 2

    def put(value, **extra):
        return api.put("/api/store/items", {"namespace": ["v"], "key": "k", "value": value, **extra}, format="json")

    assert "value" in put(["not", "an", "object"]).json()
    assert "value" in put({"text": "x" * 200}).json()
    assert "ttl" in put({"a": 1}, ttl=-1).json()
    assert "index" in put({"a": 1}, index="a").json()
    too_many = api.post("/api/store/batch", {"ops": [{"op": "list_namespaces"}] * 3}, format="json")
    assert too_many.status_code == 400 and "ops" in too_many.json()


# --- who may see what -----------------------------------------------------------------------------------------


def test_users_never_see_each_others_items_or_namespaces(api, other_api, put):
    put(["secret"], "k", {"content": "mine only"})

    assert other_api.get("/api/store/items", {"namespace": "secret", "key": "k"}).content == b"null"
    other_search = other_api.post("/api/store/items/search", {"namespace_prefix": []}, format="json")
    assert other_search.json()["items"] == []
    assert other_api.post("/api/store/namespaces", {}, format="json").json()["namespaces"] == []
    other_api.delete("/api/store/items", {"namespace": ["secret"], "key": "k"}, format="json")
    assert api.get("/api/store/items", {"namespace": "secret", "key": "k"}).json()["value"] == {
        "content": "mine only"}


def test_tokens_are_accepted_as_x_api_key_and_bearer_and_bad_ones_refused(user):
    key = token_for(user)
    for credentials in ({"HTTP_X_API_KEY": key}, {"HTTP_AUTHORIZATION": f"Bearer {key}"},
                        {"HTTP_AUTHORIZATION": f"Token {key}"}):
        client = APIClient()
        client.credentials(**credentials)
        assert client.post("/api/store/namespaces", {}, format="json").status_code == 200

    for credentials in ({"HTTP_X_API_KEY": "wrong"}, {"HTTP_AUTHORIZATION": "Bearer wrong"}, {}):
        client = APIClient()
        client.credentials(**credentials)
        assert client.post("/api/store/namespaces", {}, format="json").status_code in (401, 403)


def test_a_long_value_is_kept_whole_and_its_content_cut_to_the_limit(api, put, settings, search):
    settings.MEMORY_MAX_TOKENS = 50
    long_text = " ".join(f"word{i}" for i in range(400))
    put(["long"], "doc", {"text": long_text})

    assert api.get("/api/store/items", {"namespace": "long", "key": "doc"}).json()["value"] == {"text": long_text}
    content = memory_at(["long"], "doc").content
    assert content.startswith('{"text": "word0 word1 word2') and len(content) < len(long_text)
    assert search(["long"], query="word17", limit=1000)[0]["key"] == "doc"


# --- bounded embedding work per request (a 250 KB value held a web thread 36 s) -------------------------------


@pytest.fixture
def embedded(monkeypatch):
    """Texts sent to the embedding model by this process."""
    from integrations import embeddings

    sent, real = [], embeddings.embed_texts
    monkeypatch.setattr(embeddings, "embed_texts", lambda texts, model=None: sent.extend(texts) or real(texts, model))
    return sent


def _words(count: int, start: int = 0) -> str:
    return " ".join(f"w{i}" for i in range(start, start + count))  # two to four word pieces each


def test_a_put_over_its_embedding_budget_is_a_400_naming_the_value_before_anything_is_embedded(
        api, settings, embedded):
    settings.STORE_VALUE_MAX_TOKENS = 1000
    response = api.put("/api/store/items", {"namespace": ["big"], "key": "k", "value": {"content": _words(600)}},
                       format="json")  # the content and the whole value ("$") both indexed: ~2,400 pieces
    assert response.status_code == 400
    assert "value" in response.json() and "limit is 1,000" in response.json()["value"][0]
    not_indexed = api.put("/api/store/items", {"namespace": ["big"], "key": "k", "index": False,
                                               "value": {"content": _words(600)}}, format="json")
    assert not_indexed.status_code == 204  # nothing to embed: no budget used
    assert embedded == []


def test_a_batch_over_its_embedding_budget_is_a_400_naming_the_op_or_the_batch(api, settings, embedded):
    settings.STORE_VALUE_MAX_TOKENS, settings.STORE_BATCH_MAX_TOKENS = 1000, 2000

    def put(i, words):
        return {"op": "put", "namespace": ["b"], "key": f"k{i}", "value": {"t": _words(words, i * 1000)},
                "index": ["t"]}

    one_too_big = api.post("/api/store/batch", {"ops": [put(0, 10), put(1, 600)]}, format="json")
    assert one_too_big.status_code == 400 and "ops[1].value" in one_too_big.json()
    too_much = api.post("/api/store/batch", {"ops": [put(i, 200) for i in range(5)]}, format="json")
    assert too_much.status_code == 400 and "ops" in too_much.json()
    assert embedded == [] and not Memory.objects.exists()
    fits = api.post("/api/store/batch", {"ops": [put(i, 100) for i in range(5)]}, format="json")
    assert fits.status_code == 200 and Memory.objects.count() == 5
