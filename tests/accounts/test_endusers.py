"""End users of an app: a service token acts for the end user its request names (X-Memento-End-User), made on
first use; two end users never see each other's memories, messages or context (REST, store, tools, MCP), the
app account sees neither's, and the app lists and erases them."""

import json

import pytest
from rest_framework.test import APIClient

from accounts.models import AuthEvent, EndUser
from accounts.services import token_create
from core import rls
from memories.models import Memory
from tests.accounts.test_scopes import mcp_call
from tests.factories import token_for


@pytest.fixture
def service_key(user):
    return token_create(user=user, name="my app", for_end_users=True).key


def as_end_user(key: str, external_id: str) -> APIClient:
    return APIClient(HTTP_AUTHORIZATION=f"Token {key}", HTTP_X_MEMENTO_END_USER=external_id)


def remember(api: APIClient, who: str, fact: str) -> None:
    """`fact` stored through every way in: REST, the store, the tool call, MCP; and said in a conversation."""
    assert api.post("/api/memories/", {"content": f"{who} {fact} (rest)"}, format="json").status_code == 201
    put = {"namespace": ["prefs"], "key": "fact", "value": {"content": f"{who} {fact} (store)"}}
    assert api.put("/api/store/items", put, format="json").status_code == 204
    assert api.post("/api/tools/call/", {"name": "add_memory", "arguments": {"content": f"{who} {fact} (tool)"}},
                    format="json").status_code == 200
    assert not mcp_call(api, "add_memory", {"content": f"{who} {fact} (mcp)"})["isError"]
    conversation = api.post("/api/conversations/", {"title": "chat"}, format="json").json()["id"]
    said = api.post(f"/api/conversations/{conversation}/messages/",
                    {"messages": [{"role": "user", "content": f"I am {who} and I {fact} (message)"}]}, format="json")
    assert said.status_code == 201


def seen_by(api: APIClient, query: str) -> str:
    """Everything `api` can read about `query`, as one text."""
    seen = [
        api.get("/api/memories/?all_projects=true").json(),
        api.post("/api/memories/search/", {"query": query, "include_messages": True}, format="json").json(),
        api.post("/api/store/items/search", {"namespace_prefix": ["prefs"]}, format="json").json(),
        api.post("/api/tools/call/", {"name": "search_memories", "arguments": {"query": query}},
                 format="json").json(),
        api.post("/api/tools/call/", {"name": "get_context", "arguments": {"query": query}}, format="json").json(),
        mcp_call(api, "search_memories", {"query": query}),
        mcp_call(api, "get_context", {"query": query}),
        api.get("/api/conversations/").json(),
    ]
    for conversation in seen[-1]["results"]:
        seen.append(api.get(f"/api/conversations/{conversation['id']}/messages/").json())
    return json.dumps(seen)


def test_two_end_users_never_see_each_others_memories_messages_or_context(user, service_key):
    alice, bob = as_end_user(service_key, "alice-17"), as_end_user(service_key, "bob-42")
    remember(alice, "Alice", "keep bees in the garden")
    remember(bob, "Bob", "collect vinyl records")
    alices_view, bobs_view = seen_by(alice, "what is my hobby?"), seen_by(bob, "what is my hobby?")
    for way in ("rest", "store", "tool", "mcp", "message"):
        assert f"keep bees in the garden ({way})" in alices_view
        assert f"collect vinyl records ({way})" in bobs_view
    assert "vinyl" not in alices_view and "bees" not in bobs_view
    own = seen_by(APIClient(HTTP_AUTHORIZATION=f"Token {token_for(user)}"), "what is my hobby?")
    assert "bees" not in own and "vinyl" not in own  # the app account's own data holds neither
    end_users = EndUser.objects.filter(owner=user)
    assert sorted(end_users.values_list("external_id", flat=True)) == ["alice-17", "bob-42"]
    assert Memory.objects.filter(owner=end_users.get(external_id="alice-17").user).count() == 4


def test_a_service_token_needs_the_end_user_header_except_to_manage_them(user, service_key):
    api = APIClient(HTTP_AUTHORIZATION=f"Token {service_key}")
    response = api.get("/api/memories/")
    assert response.status_code == 400 and "X-Memento-End-User" in response.json()
    for bad in ("", " ", "x" * 201, "tab\there"):
        response = as_end_user(service_key, bad).get("/api/memories/")
        assert response.status_code == 400 and "X-Memento-End-User" in response.json(), bad
    assert not EndUser.objects.exists()
    as_end_user(service_key, "carol").get("/api/memories/")
    assert [e["external_id"] for e in api.get("/api/end-users/").json()["results"]] == ["carol"]
    assert api.get("/api/end-users/?external_id=nobody").json()["count"] == 0
    assert as_end_user(service_key, "carol").get("/api/tokens/").status_code == 403  # not the account itself


def test_an_ordinary_token_names_no_end_user(user):
    api = APIClient(HTTP_AUTHORIZATION=f"Token {token_for(user)}", HTTP_X_MEMENTO_END_USER="alice")
    assert api.post("/api/memories/", {"content": "Mine"}, format="json").status_code == 201
    assert Memory.objects.get(content="Mine").owner == user and not EndUser.objects.exists()


def test_erasing_an_end_user_erases_their_data_and_no_one_elses(user, service_key):
    alice, bob = as_end_user(service_key, "alice"), as_end_user(service_key, "bob")
    remember(alice, "Alice", "keep bees")
    remember(bob, "Bob", "collect records")
    api = APIClient(HTTP_AUTHORIZATION=f"Token {service_key}")
    alice_id = api.get("/api/end-users/?external_id=alice").json()["results"][0]["id"]
    alice_user = EndUser.objects.get(pk=alice_id).user_id
    assert api.delete(f"/api/end-users/{alice_id}/").status_code == 204
    rls.activate(None, bypass=True)  # the test process's own view: every owner's rows
    assert not Memory.objects.filter(owner_id=alice_user).exists()
    assert not Memory.history.filter(owner_id=alice_user).exists()  # nor their versions
    assert Memory.history.filter(content__contains="collect records").exists()
    assert Memory.objects.filter(content__contains="collect records").count() == 4
    assert "collect records (rest)" in seen_by(bob, "records")
    assert AuthEvent.objects.filter(user=user, kind=AuthEvent.Kind.END_USER_ERASED, detail="alice").exists()
    fresh = seen_by(as_end_user(service_key, "alice"), "what do I do?")  # the same id later: a new end user
    assert "bees" not in fresh


def test_end_users_have_their_own_rate_limit_and_the_service_token_one_for_all(user, service_key, monkeypatch):
    from rest_framework.throttling import SimpleRateThrottle

    monkeypatch.setattr(SimpleRateThrottle, "THROTTLE_RATES",
                        {**SimpleRateThrottle.THROTTLE_RATES, "user": "2/minute", "token": "4/minute"})
    alice, bob = as_end_user(service_key, "alice"), as_end_user(service_key, "bob")
    assert [alice.get("/api/memories/").status_code for _ in range(3)] == [200, 200, 429]  # Alice's own quota
    assert bob.get("/api/memories/").status_code == 200  # Bob's is his
    assert bob.get("/api/memories/").status_code == 429  # the service token's: 4 a minute for all its users


def test_the_panel_shows_the_app_owner_counts_not_contents_and_erases(client, user, service_key):
    remember(as_end_user(service_key, "alice"), "Alice", "keep bees")
    client.force_login(user)
    page = client.get("/access/end-users/").content.decode()
    assert "alice" in page and "<td>4</td>" in page and "bees" not in page
    end_user = EndUser.objects.get(external_id="alice")
    assert client.post(f"/access/end-users/{end_user.pk}/erase/").status_code == 302
    assert not EndUser.objects.filter(pk=end_user.pk).exists()
