"""The memory REST API: status codes, shapes, filters, history, revert, chain, batch, export/import."""

import json
from datetime import timedelta

import pytest
from django.utils import timezone

from memories import services
from memories.models import Memory
from tests.factories import ProjectFactory


def post(api, url, body):
    return api.post(url, body, format="json")


def test_create_then_upsert_then_duplicate(api):
    created = post(api, "/api/memories/", {"content": "Lives in Paris", "key": "home", "tags": ["place"]})
    assert created.status_code == 201
    body = created.json()
    assert body["version"] == 1 and body["duplicate"] is False and body["embedding_pending"] is False

    upserted = post(api, "/api/memories/", {"content": "Lives in Berlin", "key": "home"})
    assert upserted.status_code == 200
    assert upserted.json()["id"] == body["id"] and upserted.json()["version"] == 2

    duplicate = post(api, "/api/memories/", {"content": "Lives in Berlin."})
    assert duplicate.status_code == 200
    assert duplicate.json()["duplicate"] is True and duplicate.json()["id"] == body["id"]

    forced = post(api, "/api/memories/", {"content": "Lives in Berlin.", "allow_duplicate": True})
    assert forced.status_code == 201


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"content": ""}, "content"),
        ({"content": "x " * 3000}, "content"),
        ({}, "content"),
        ({"content": "ok", "namespace": []}, "namespace"),
        ({"content": "ok", "namespace": ["memories", ""]}, "namespace"),
        ({"content": "ok", "namespace": "memories"}, "namespace"),
        ({"content": "ok", "colour": "blue"}, "colour"),
        ({"content": "ok", "importance": "high"}, "importance"),
        ({"content": "ok", "importance": 2}, "importance"),
        ({"content": "ok", "tags": "a,b"}, "tags"),
        ({"content": "ok", "supersedes": "not-a-uuid"}, "supersedes"),
        ({"content": "ok", "happened_at": "yesterday"}, "happened_at"),
        ({"content": "ok", "source": "gossip"}, "source"),
    ],
)
def test_bad_input_is_a_400_naming_the_field(api, body, field):
    response = post(api, "/api/memories/", body)
    assert response.status_code == 400
    assert field in response.json()
    assert not Memory.objects.exists()


@pytest.mark.parametrize("content", [
    "x" * 2_000_000,  # one "word" is one word piece: 2 MB passed the token limit
    " ".join(["y" * 1000] * 1500),  # 1,500 word pieces, 1.5 MB
], ids=["one-word", "long-words"])
def test_content_over_the_character_limit_is_a_400_naming_content(api, content, settings):
    response = post(api, "/api/memories/", {"content": content})
    assert response.status_code == 400
    assert f"the limit is {settings.MEMORY_MAX_CHARS:,}" in response.json()["content"][0]
    assert not Memory.objects.exists()


def test_content_at_the_character_limit_is_stored_and_one_over_is_refused(api, settings):
    settings.MEMORY_MAX_CHARS = 300
    assert post(api, "/api/memories/", {"content": "z" * 300}).status_code == 201
    refused = post(api, "/api/memories/", {"content": "w" * 301})
    assert refused.status_code == 400 and "301 characters" in refused.json()["content"][0]
    memory = Memory.objects.get()
    patched = api.patch(f"/api/memories/{memory.pk}/", {"content": "v" * 301}, format="json")
    assert patched.status_code == 400 and "content" in patched.json()
    batch = post(api, "/api/memories/batch/", {"items": [{"content": "fine"}, {"content": "u" * 301}]})
    assert batch.status_code == 400 and batch.json()["items"][0].startswith("item 1: content:")
    tool = post(api, "/api/tools/call/", {"name": "add_memory", "arguments": {"content": "t" * 301}})
    assert tool.status_code == 400 and "content" in json.dumps(tool.json())
    assert Memory.objects.count() == 1 and Memory.objects.get().content == "z" * 300


@pytest.mark.parametrize("value", ["last-tuesday", "2023-02-30", "30/06/2023"])
def test_a_bad_as_of_says_a_date_or_a_datetime_is_wanted(api, value):
    for response in (api.get("/api/memories/", {"as_of": value}),
                     post(api, "/api/memories/search/", {"query": "where", "as_of": value})):
        assert response.status_code == 400
        message = response.json()["as_of"][0]
        assert "YYYY-MM-DD" in message and "date" in message and "datetime" in message
        assert message.startswith("Must be a date (YYYY-MM-DD")


@pytest.mark.parametrize("value", ["0001-01-01", "9999-12-31"])
def test_an_as_of_day_out_of_range_is_refused_by_name(api, value):
    for response in (api.get("/api/memories/", {"as_of": value}),
                     post(api, "/api/memories/search/", {"query": "where", "as_of": value})):
        assert response.status_code == 400 and response.json()["as_of"][0].startswith("Must be between")


@pytest.mark.parametrize("query", ["namespace=%00", "namespace=a%00/b", "tags=a,b%00"])
def test_a_nul_in_a_list_filter_is_a_400_naming_it(api, query):
    response = api.get(f"/api/memories/?{query}")
    assert response.status_code == 400
    assert response.json()[query.split("=")[0]] == ["May not contain NUL characters (\\u0000)."]


def test_bad_id_is_a_404(api):
    assert api.get("/api/memories/not-a-uuid/").status_code == 404


def test_supersession_over_the_api(api, user, other_user):
    old = post(api, "/api/memories/", {"content": "Liam struggles with calculus"}).json()
    new = post(api, "/api/memories/", {"content": "Liam mastered integration", "supersedes": old["id"]})
    assert new.status_code == 201
    assert new.json()["supersedes"] == old["id"]
    listed = [m["id"] for m in api.get("/api/memories/").json()["results"]]
    assert listed == [new.json()["id"]]
    with_old = [m["id"] for m in api.get("/api/memories/?include_superseded=true").json()["results"]]
    assert set(with_old) == {old["id"], new.json()["id"]}
    chain = api.get(f"/api/memories/{new.json()['id']}/chain/").json()
    assert [m["id"] for m in chain] == [old["id"], new.json()["id"]]

    theirs = services.memory_create(owner=other_user, content="their fact").memory
    refused = post(api, "/api/memories/", {"content": "mine", "supersedes": str(theirs.pk)})
    assert refused.status_code == 400 and "supersedes" in refused.json()


def test_list_filters(api, user):
    project = ProjectFactory(owner=user)
    other_project = ProjectFactory(owner=user)
    now = timezone.now()
    make = lambda content, **f: services.memory_create(owner=user, content=content, allow_duplicate=True, **f).memory  # noqa: E731
    user_scoped = make("likes tea", tags=["drink", "morning"], category="preference", namespace=["memories", "prefs"])
    in_project = make("deadline is Friday", project=project, tags=["work"])
    make("client wants three sections", project=other_project)
    expired = make("parking spot 42", expires_at=now - timedelta(hours=1))
    old_event = make("moved house", happened_at=now - timedelta(days=400), agent_id="coach")

    def ids(query=""):
        response = api.get(f"/api/memories/{query}")
        assert response.status_code == 200, response.json()
        return {m["id"] for m in response.json()["results"]}

    assert ids() == {str(user_scoped.pk), str(old_event.pk)}
    assert ids(f"?project={project.pk}") == {str(user_scoped.pk), str(old_event.pk), str(in_project.pk)}
    assert len(ids("?all_projects=true")) == 4
    assert ids("?include_expired=true") == {str(user_scoped.pk), str(old_event.pk), str(expired.pk)}
    assert ids("?tags=drink,work") == {str(user_scoped.pk)}
    assert ids("?all_projects=true&tags=drink,work") == {str(user_scoped.pk), str(in_project.pk)}
    assert ids("?tags=drink,work&tags_mode=all") == set()
    assert ids("?namespace=memories/prefs") == {str(user_scoped.pk)}
    assert ids("?category=preference") == {str(user_scoped.pk)}
    assert ids("?agent_id=coach") == {str(old_event.pk)}
    happened_before = (now - timedelta(days=30)).isoformat().replace("+00:00", "Z")
    assert ids(f"?happened_before={happened_before}") == {str(old_event.pk)}
    assert api.get("/api/memories/?project=999999").status_code == 400
    assert api.get("/api/memories/?include_superseded=maybe").status_code == 400
    assert api.get("/api/memories/?unknown=1").status_code == 400


def test_delete_is_soft_and_restore_brings_it_back(api):
    memory = post(api, "/api/memories/", {"content": "Has a dog"}).json()
    assert api.delete(f"/api/memories/{memory['id']}/").status_code == 204
    assert api.get("/api/memories/").json()["count"] == 0
    assert api.get("/api/memories/?include_inactive=true").json()["count"] == 1
    restored = post(api, f"/api/memories/{memory['id']}/restore/", {})
    assert restored.status_code == 200 and restored.json()["is_active"] is True


def test_history_and_revert(api):
    memory = post(api, "/api/memories/", {"content": "Favourite colour is blue"}).json()
    api.patch(f"/api/memories/{memory['id']}/", {"content": "Favourite colour is green"}, format="json")
    history = api.get(f"/api/memories/{memory['id']}/history/").json()
    assert [h["action"] for h in history] == ["UPDATE", "CREATE"]
    assert history[0]["changed_fields"] == ["content", "embedding_model", "updated_at", "version"] or \
        "content" in history[0]["changed_fields"]
    assert history[0]["actor"] is not None and history[0]["version"] == 2

    reverted = post(api, f"/api/memories/{memory['id']}/revert/", {"version": 1})
    assert reverted.status_code == 200
    assert reverted.json()["content"] == "Favourite colour is blue" and reverted.json()["version"] == 3
    by_history_id = post(api, f"/api/memories/{memory['id']}/revert/", {"history_id": history[0]["history_id"]})
    assert by_history_id.json()["content"] == "Favourite colour is green"

    assert post(api, f"/api/memories/{memory['id']}/revert/", {}).status_code == 400
    assert post(api, f"/api/memories/{memory['id']}/revert/", {"version": 99}).status_code == 400


def test_forget_erases_for_good(api):
    memory = post(api, "/api/memories/", {"content": "My passport number is X123"}).json()
    assert post(api, f"/api/memories/{memory['id']}/forget/", {}).status_code == 204
    assert not Memory.objects.filter(pk=memory["id"]).exists()
    assert not Memory.history.filter(id=memory["id"]).exists()
    assert api.get(f"/api/memories/{memory['id']}/").status_code == 404


def test_another_users_memory_cannot_be_forgotten_reverted_or_chained(api, other_user):
    theirs = services.memory_create(owner=other_user, content="their fact").memory
    for verb, url in (("post", "forget/"), ("post", "restore/"), ("get", "history/"), ("get", "chain/")):
        assert getattr(api, verb)(f"/api/memories/{theirs.pk}/{url}").status_code == 404
    assert post(api, f"/api/memories/{theirs.pk}/revert/", {"version": 1}).status_code == 404
    assert Memory.objects.filter(pk=theirs.pk).exists()


def test_batch(api):
    items = [{"content": f"Fact {i}: the number {i} is lucky", "key": f"fact-{i}"} for i in range(20)]
    response = post(api, "/api/memories/batch/", {"items": items})
    assert response.status_code == 201
    assert [r["outcome"] for r in response.json()] == ["created"] * 20
    assert set(response.json()[0]) == {"outcome", "id", "key", "version"}
    assert Memory.objects.count() == 20


def test_batch_errors_store_nothing(api):
    bad = [{"content": "fine"}, {"content": "fine too"}, {"content": "", "key": "x"}]
    response = post(api, "/api/memories/batch/", {"items": bad})
    assert response.status_code == 400
    assert "2" in response.json()["items"]
    too_many = post(api, "/api/memories/batch/", {"items": [{"content": "x"}] * 1001})
    assert too_many.status_code == 400 and "items" in too_many.json()
    assert post(api, "/api/memories/batch/", {"items": []}).status_code == 400
    assert not Memory.objects.exists()


def test_export_import_round_trip_is_lossless_and_idempotent(api, user):
    project = ProjectFactory(owner=user, name="thesis")
    old = post(api, "/api/memories/", {"content": "Works at Acme", "tags": ["job"], "project": project.pk}).json()
    post(api, "/api/memories/", {"content": "Works at Globex", "supersedes": old["id"], "project": project.pk})
    gone = post(api, "/api/memories/", {"content": "Owns a red bike"}).json()
    api.delete(f"/api/memories/{gone['id']}/")

    first = b"".join(api.get("/api/memories/export/").streaming_content).decode()
    lines = [json.loads(line) for line in first.splitlines()]
    assert len(lines) == 3 and all(line["versions"] for line in lines)

    for memory in Memory.objects.all():
        services.memory_forget(memory=memory)
    imported = api.post("/api/memories/import/", first, content_type="application/jsonl")
    assert imported.status_code == 200, imported.json()
    assert imported.json()["imported"] == 3

    second = b"".join(api.get("/api/memories/export/").streaming_content).decode()
    assert second == first

    again = api.post("/api/memories/import/", first, content_type="application/jsonl")
    assert again.json() == {"imported": 0, "skipped": 3, "versions": 0}
    assert Memory.objects.count() == 3
    assert all(m.embedding is not None for m in Memory.objects.all())


def test_import_into_another_account_gets_new_ids(api, other_api):
    old = post(api, "/api/memories/", {"content": "Works at Acme"}).json()
    post(api, "/api/memories/", {"content": "Works at Globex", "supersedes": old["id"]})
    exported = b"".join(api.get("/api/memories/export/").streaming_content).decode()
    response = other_api.post("/api/memories/import/", exported, content_type="application/jsonl")
    assert response.status_code == 200, response.json()
    assert response.json()["imported"] == 2
    theirs = other_api.get("/api/memories/?include_superseded=true").json()["results"]
    assert old["id"] not in {m["id"] for m in theirs}
    newest = next(m for m in theirs if m["supersedes"])
    chain = other_api.get(f"/api/memories/{newest['id']}/chain/").json()
    assert [m["content"] for m in chain] == ["Works at Acme", "Works at Globex"]


def test_import_rejects_bad_lines(api):
    response = api.post("/api/memories/import/", '{"format": "memento.memory/1"}\nnot json\n',
                        content_type="application/jsonl")
    assert response.status_code == 400 and "Line 2" in response.json()["detail"]
    response = api.post("/api/memories/import/", '{"format": "memento.memory/1", "id": "x"}\n',
                        content_type="application/jsonl")
    assert response.status_code == 400 and "line 1" in str(response.json())
    assert not Memory.objects.exists()


def test_projects_crud(api, other_api):
    created = post(api, "/api/projects/", {"name": "thesis"})
    assert created.status_code == 201
    assert post(api, "/api/projects/", {"name": "thesis"}).status_code == 400
    assert post(other_api, "/api/projects/", {"name": "thesis"}).status_code == 201
    pid = created.json()["id"]
    assert api.patch(f"/api/projects/{pid}/", {"name": "dissertation"}, format="json").json()["name"] == "dissertation"
    memory = post(api, "/api/memories/", {"content": "Chapter 2 is due in May", "project": pid}).json()
    assert api.delete(f"/api/projects/{pid}/").status_code == 204
    assert not Memory.objects.filter(pk=memory["id"]).exists()


def test_as_of_lists_and_searches_what_was_true_then(api, user):
    paris = post(api, "/api/memories/", {"content": "Lives in Paris", "valid_from": "2020-01-01T00:00:00Z"}).json()
    grenoble = post(api, "/api/memories/", {"content": "Lives in Grenoble", "valid_from": "2024-05-01T00:00:00Z",
                                            "supersedes": paris["id"]}).json()
    assert grenoble["valid_from"].startswith("2024-05-01") and grenoble["valid_to"] is None
    listed = api.get("/api/memories/").json()["results"]
    assert [m["content"] for m in listed] == ["Lives in Grenoble"]
    then = api.get("/api/memories/?as_of=2023-06-30").json()["results"]
    assert [(m["content"], m["valid_to"][:10]) for m in then] == [("Lives in Paris", "2024-05-01")]
    now = api.get("/api/memories/?as_of=2024-05-02T08:00:00Z").json()["results"]
    assert [m["content"] for m in now] == ["Lives in Grenoble"]
    before = api.get("/api/memories/?as_of=2019-12-31").json()["results"]
    assert before == []
    found = post(api, "/api/memories/search/", {"query": "where does the user live?", "as_of": "2022-02-02"}).json()
    assert [r["memory"]["content"] for r in found["results"]] == ["Lives in Paris"]
    bad = api.get("/api/memories/?as_of=last-tuesday")
    assert bad.status_code == 400 and "as_of" in bad.json()
    tool = post(api, "/api/tools/call/", {"name": "list_memories", "arguments": {"as_of": "2023-06-30"}}).json()
    assert [m["content"] for m in tool["data"]["memories"]] == ["Lives in Paris"]
    current = post(api, "/api/tools/call/", {"name": "list_memories", "arguments": {}}).json()
    assert [m["content"] for m in current["data"]["memories"]] == ["Lives in Grenoble"]
    refused = post(api, "/api/tools/call/", {"name": "list_memories", "arguments": {"as_of": "a while ago"}})
    assert refused.status_code == 400 and "as_of" in json.dumps(refused.json())
