"""A token's scope holds on every way in (REST, the LangGraph store, tool calls, MCP): a read-only token writes
nothing, a project-bound token sees and writes that project's memories only, an agent-bound one that agent's."""

import json

import pytest
from rest_framework.test import APIClient

from memories import services as memory_services
from memories.models import Memory
from tests.factories import ProjectFactory, token_for


def client(key: str) -> APIClient:
    return APIClient(HTTP_AUTHORIZATION=f"Token {key}")


def mcp_call(api: APIClient, name: str, arguments: dict) -> dict:
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": name, "arguments": arguments}}
    response = api.post("/mcp", data=json.dumps(body), content_type="application/json",
                        HTTP_ACCEPT="application/json, text/event-stream", HTTP_MCP_PROTOCOL_VERSION="2025-11-25")
    assert response.status_code == 200, response.content
    return response.json()["result"]


@pytest.fixture
def world(user):
    """The user's memories: one user-scoped, one in each of two projects, one of an agent in the first."""
    garden, work = ProjectFactory(owner=user, name="Garden"), ProjectFactory(owner=user, name="Work")
    made = {
        "user": memory_services.memory_create(owner=user, content="Ana is vegetarian").memory,
        "garden": memory_services.memory_create(owner=user, content="The tomatoes need watering on Fridays",
                                                project=garden).memory,
        "work": memory_services.memory_create(owner=user, content="The quarterly report is due on Fridays",
                                              project=work).memory,
        "coder": memory_services.memory_create(owner=user, content="The garden repository uses Python on Fridays",
                                               project=garden, agent_id="coder").memory,
    }
    return garden, work, made


def test_a_read_only_token_reads_but_cannot_write_through_rest(user, world):
    garden, _, made = world
    api = client(token_for(user, read_only=True))
    assert api.get("/api/memories/?all_projects=true").json()["count"] == 4
    assert api.post("/api/memories/search/", {"query": "Fridays", "all_projects": True},
                    format="json").status_code == 200
    refused = [
        api.post("/api/memories/", {"content": "Ana likes tea"}, format="json"),
        api.patch(f"/api/memories/{made['user'].pk}/", {"content": "Ana eats fish"}, format="json"),
        api.delete(f"/api/memories/{made['user'].pk}/"),
        api.post("/api/memories/batch/", {"items": [{"content": "x"}]}, format="json"),
        api.post("/api/projects/", {"name": "New"}, format="json"),
        api.post("/api/conversations/", {"title": "chat"}, format="json"),
        api.post("/api/tokens/", {"name": "wider"}, format="json"),
    ]
    assert [r.status_code for r in refused] == [403] * len(refused)
    assert "read-only" in refused[0].json()["detail"]
    assert Memory.objects.filter(owner=user, is_active=True).count() == 4
    assert Memory.objects.get(pk=made["user"].pk).content == "Ana is vegetarian"


def test_a_read_only_token_cannot_write_through_the_store_tools_or_mcp(user, world):
    api = client(token_for(user, read_only=True))
    put = {"namespace": ["prefs"], "key": "drink", "value": {"content": "Ana likes tea"}}
    assert api.put("/api/store/items", put, format="json").status_code == 403
    assert api.post("/api/store/batch", {"ops": [{"op": "search", "namespace_prefix": ["prefs"]},
                                                 {"op": "put", **put}]}, format="json").status_code == 403
    assert api.post("/api/store/batch", {"ops": [{"op": "search", "namespace_prefix": ["prefs"]}]},
                    format="json").status_code == 200
    assert api.post("/api/store/items/search", {"namespace_prefix": ["memories"]}, format="json").status_code == 200
    called = api.post("/api/tools/call/", {"name": "add_memory", "arguments": {"content": "Ana likes tea"}},
                      format="json")
    assert called.status_code == 403 and "read-only" in called.json()["detail"]
    assert api.post("/api/tools/call/", {"name": "search_memories", "arguments": {"query": "Fridays"}},
                    format="json").status_code == 200
    result = mcp_call(api, "add_memory", {"content": "Ana likes tea"})
    assert result["isError"] and "read-only" in result["content"][0]["text"]
    assert not mcp_call(api, "search_memories", {"query": "vegetarian"})["isError"]
    assert not Memory.objects.filter(owner=user, content__contains="tea").exists()


def _contents(found) -> set[str]:
    return {m["content"] for m in found}


def test_a_project_bound_token_sees_only_that_project_everywhere(user, world):
    garden, work, made = world
    api = client(token_for(user, project=garden))
    in_garden = {made["garden"].content, made["coder"].content}
    assert _contents(api.get("/api/memories/?all_projects=true").json()["results"]) == in_garden
    assert _contents(api.get("/api/memories/").json()["results"]) == in_garden
    for outside in ("user", "work"):
        assert api.get(f"/api/memories/{made[outside].pk}/").status_code == 404
    searched = api.post("/api/memories/search/", {"query": "Fridays vegetarian report", "all_projects": True},
                        format="json").json()
    assert _contents(r["memory"] for r in searched["results"]) == in_garden
    assert [p["name"] for p in api.get("/api/projects/").json()["results"]] == ["Garden"]
    store = api.post("/api/store/items/search", {"namespace_prefix": ["memories"], "limit": 50}, format="json")
    assert {item["value"].get("content") for item in store.json()["items"]} <= in_garden
    tool = api.post("/api/tools/call/", {"name": "search_memories", "arguments": {"query": "Fridays report diet"}},
                    format="json").json()
    assert _contents(tool["data"]["results"]) == in_garden
    context = api.post("/api/tools/call/", {"name": "get_context", "arguments": {"query": "what happens on Fridays?"}},
                       format="json").json()["text"]
    assert "tomatoes" in context and "quarterly" not in context and "vegetarian" not in context
    listed = mcp_call(api, "list_memories", {})
    shown = json.dumps(listed)
    assert not listed["isError"] and "tomatoes" in shown and "quarterly" not in shown and "vegetarian" not in shown


def test_a_project_bound_token_writes_into_its_project_only(user, world):
    garden, work, _ = world
    api = client(token_for(user, project=garden))
    made = api.post("/api/memories/", {"content": "Basil grows by the window"}, format="json")
    assert made.status_code == 201 and made.json()["project"] == garden.pk
    elsewhere = api.post("/api/memories/", {"content": "The budget is approved", "project": work.pk}, format="json")
    assert elsewhere.status_code == 400 and "project" in elsewhere.json()
    put = api.put("/api/store/items", {"namespace": ["notes"], "key": "k", "value": {"content": "Mulch in May"}},
                  format="json")
    assert put.status_code == 204
    assert Memory.objects.get(owner=user, key="k").project == garden
    assert not Memory.objects.filter(owner=user, content="The budget is approved").exists()


def test_an_agent_bound_token_sees_and_writes_only_that_agents_memories(user, world):
    _, _, made = world
    api = client(token_for(user, agent_id="coder"))
    assert _contents(api.get("/api/memories/?all_projects=true").json()["results"]) == {made["coder"].content}
    written = api.post("/api/memories/", {"content": "Tests run with pytest"}, format="json").json()
    assert Memory.objects.get(pk=written["id"]).agent_id == "coder"


def test_the_database_itself_confines_a_bound_session(user, world):
    """Row-level security, not only the code: raw SQL in a session bound to a project (or an agent) sees and
    writes that scope's rows only; messages follow their conversation, chunks their document."""
    from django.db import DatabaseError, connection, transaction

    from conversations import services as conversation_services
    from core import rls
    from tests.factories import ConversationFactory, DocumentFactory

    garden, work, made = world
    chat = ConversationFactory(owner=user, project=work)
    conversation_services.messages_append(conversation=chat, messages=[{"role": "user", "content": "Budget talk"}])
    DocumentFactory(owner=user, project=work, title="Budget")

    def visible(sql: str) -> list:
        with connection.cursor() as cursor:
            cursor.execute(sql)
            return [row[0] for row in cursor.fetchall()]

    rls.activate(user.pk, project_id=garden.pk)
    try:
        assert set(visible("SELECT content FROM memories_memory")) == {made["garden"].content, made["coder"].content}
        assert visible("SELECT content FROM conversations_message") == []
        assert visible("SELECT title FROM documents_document") == []
        with pytest.raises(DatabaseError, match="row-level security"), transaction.atomic():
            with connection.cursor() as cursor:
                cursor.execute("UPDATE memories_memory SET project_id = %s WHERE id = %s", [work.pk, made["garden"].pk])
        rls.activate(user.pk, agent_id="coder")
        assert visible("SELECT content FROM memories_memory") == [made["coder"].content]
        rls.activate(user.pk)
        assert len(visible("SELECT content FROM memories_memory")) == 4
        assert visible("SELECT content FROM conversations_message") == ["Budget talk"]
    finally:
        rls.reset()
