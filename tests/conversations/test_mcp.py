"""The MCP server, driven by the official `mcp` client library against a real gunicorn process (row-level
security enforced by default, as in production): over streamable HTTP at /mcp, and over stdio through
`python -m memento_client.mcp`, which forwards to /mcp."""

import asyncio
import json
import os
import sys
from contextlib import asynccontextmanager

import httpx2
import pytest
import requests
from django.conf import settings
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from memories import services as memory_services
from memories.models import Memory
from tests.factories import UserFactory, token_for
from tests.web import free_port, start_gunicorn, stop

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

CLIENT_PACKAGE = str(settings.BASE_DIR / "clients" / "python")
TOOL_NAMES = {"add_memory", "search_memories", "get_memory", "list_memories", "update_memory", "delete_memory",
              "memory_history", "get_context", "get_profile", "list_reminders", "update_reminder"}


@pytest.fixture(scope="module")
def server(django_db_setup):
    """Base URL of a gunicorn process serving the test database."""
    port = free_port()
    process = start_gunicorn(port, threads=4)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        stop(process)


@asynccontextmanager
async def over_http(base: str, token: str | None, *, scheme: str = "Bearer", mode: str = "auto"):
    headers = {"Authorization": f"{scheme} {token}"} if token else {}
    async with httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30, read=120)) as http:
        async with Client(streamable_http_client(f"{base}/mcp", http_client=http), mode=mode) as client:
            yield client


def over_stdio(base: str, token: str) -> Client:
    env = {**os.environ, "MEMENTO_URL": base, "MEMENTO_TOKEN": token,
           "PYTHONPATH": os.pathsep.join(filter(None, [CLIENT_PACKAGE, os.environ.get("PYTHONPATH")]))}
    return Client(StdioServerParameters(command=sys.executable, args=["-m", "memento_client.mcp"], env=env))


def connect(transport: str, base: str, token: str):
    return over_http(base, token) if transport == "http" else over_stdio(base, token)


async def call(client: Client, name: str, **arguments) -> dict:
    result = await client.call_tool(name, arguments)
    assert not result.is_error, result.content[0].text
    return result.structured_content


def leaves(error: BaseException) -> list[BaseException]:
    if isinstance(error, BaseExceptionGroup):
        return [leaf for inner in error.exceptions for leaf in leaves(inner)]
    return [error]


def rpc(base: str, headers: dict) -> requests.Response:
    body = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}
    return requests.post(f"{base}/mcp", json=body, timeout=60,
                         headers={"Accept": "application/json, text/event-stream", **headers})


@pytest.mark.parametrize("mode", ["legacy", "auto"])  # today's clients (initialize handshake) and 2026-07-28
def test_tools_are_listed_with_their_hints(server, mode):
    token = token_for(UserFactory())

    async def scenario():
        async with over_http(server, token, mode=mode) as client:
            return (await client.list_tools()).tools

    tools = {tool.name: tool for tool in asyncio.run(scenario())}
    assert set(tools) == TOOL_NAMES
    read_only = {name for name, tool in tools.items() if tool.annotations.read_only_hint}
    assert read_only == {"search_memories", "get_memory", "list_memories", "memory_history", "get_context",
                         "get_profile", "list_reminders"}
    destructive = {name for name, tool in tools.items() if tool.annotations.destructive_hint}
    assert destructive == {"delete_memory"}
    for tool in tools.values():
        assert tool.description and tool.input_schema["type"] == "object"
        assert not any("user" in name or "owner" in name for name in tool.input_schema["properties"])
    assert tools["search_memories"].input_schema["properties"]["query"]["maxLength"] == 4000


@pytest.mark.parametrize("transport", ["http", "stdio"])
def test_memories_round_trip(server, transport):
    user = UserFactory()
    token = token_for(user)

    async def scenario():
        async with connect(transport, server, token) as client:
            names = {tool.name for tool in (await client.list_tools()).tools}
            added = await call(client, "add_memory", content="Is allergic to peanuts", category="restriction",
                               tags=["health"], importance=0.9)
            await call(client, "add_memory", content="Keeps a pet axolotl named Quetzal")
            await call(client, "add_memory", content="Works as a nurse in Leeds")
            by_meaning = await call(client, "search_memories", query="does the user have a food allergy?")
            by_word = await call(client, "search_memories", query="Quetzal", mode="keyword")
            memory_id = added["memory"]["id"]
            got = await call(client, "get_memory", memory_id=memory_id)
            updated = await call(client, "update_memory", memory_id=memory_id,
                                 content="Is allergic to peanuts and cashews")
            history = await call(client, "memory_history", memory_id=memory_id)
            context = await call(client, "get_context", query="Can you suggest a snack with nuts?")
            listed = await call(client, "list_memories")
            deleted = await call(client, "delete_memory", memory_id=memory_id)
            after = await call(client, "search_memories", query="peanut allergy")
            text = (await client.call_tool("get_memory", {"memory_id": memory_id})).content[0].text
            return (names, added, by_meaning, by_word, got, updated, history, context, listed, deleted, after,
                    text)

    names, added, by_meaning, by_word, got, updated, history, context, listed, deleted, after, text = (
        asyncio.run(scenario()))
    memory_id = added["memory"]["id"]
    assert names == TOOL_NAMES
    assert added["outcome"] == "created" and added["memory"]["version"] == 1
    assert by_meaning["results"][0]["id"] == memory_id and by_meaning["results"][0]["score"] > 0
    assert [r["content"] for r in by_word["results"]] == ["Keeps a pet axolotl named Quetzal"]
    assert got["memory"]["content"] == "Is allergic to peanuts" and got["memory"]["tags"] == ["health"]
    assert updated["memory"]["version"] == 2 and updated["memory"]["id"] == memory_id
    assert [v["version"] for v in history["versions"]] == [2, 1]
    assert [v["content"] for v in history["versions"]] == ["Is allergic to peanuts and cashews",
                                                            "Is allergic to peanuts"]
    # an allergy is a profile fact: the profile (first) says it, and it is not repeated among the memories
    assert "peanuts and cashews" in context["text"] and memory_id in context["items"][0]["source"]["memory_ids"]
    assert context["used_tokens"] <= context["budget"]
    assert listed["total"] == 3
    assert deleted["outcome"] == "deleted" and deleted["memory"]["is_active"] is False
    assert memory_id not in [r["id"] for r in after["results"]]
    assert "deleted" in text and memory_id in text
    memory = Memory.objects.get(pk=memory_id)  # soft: restorable, with its history
    assert memory.owner == user and not memory.is_active and memory.history.count() == 3

    # what MCP wrote is what the REST API shows, to the same token
    rest = requests.get(f"{server}/api/memories/", headers={"Authorization": f"Token {token}"}, timeout=60).json()
    assert {m["content"] for m in rest["results"]} == {"Keeps a pet axolotl named Quetzal",
                                                        "Works as a nurse in Leeds"}


def test_users_never_see_each_others_memories(server):
    alice, bob = UserFactory(), UserFactory()
    secret = memory_services.memory_create(owner=alice, content="Alice's bank PIN hint is her cat's name",
                                           key="pin").memory

    bob_token = token_for(bob)

    async def scenario():
        async with over_http(server, bob_token) as client:
            searched = await call(client, "search_memories", query="bank PIN hint cat")
            listed = await call(client, "list_memories", include_deleted=True)
            context = await call(client, "get_context", query="What is the bank PIN hint?")
            probes = [await client.call_tool(name, arguments) for name, arguments in [
                ("get_memory", {"memory_id": str(secret.pk)}), ("get_memory", {"key": "pin"}),
                ("memory_history", {"memory_id": str(secret.pk)}),
                ("update_memory", {"memory_id": str(secret.pk), "content": "hacked"}),
                ("delete_memory", {"memory_id": str(secret.pk)}),
                ("add_memory", {"content": "Bob likes chess", "supersedes": str(secret.pk)}),
            ]]
            return searched, listed, context, probes

    searched, listed, context, probes = asyncio.run(scenario())
    assert searched["results"] == [] and listed["total"] == 0 and context["items"] == []
    for probe in probes:
        assert probe.is_error and "Alice" not in probe.content[0].text
    secret.refresh_from_db()
    assert secret.is_active and secret.version == 1 and secret.content.startswith("Alice's")
    assert not Memory.objects.filter(owner=bob).exists()


def test_a_missing_or_bad_token_is_refused(server):
    token = token_for(UserFactory())
    for headers in ({}, {"Authorization": "Bearer not-a-token"}, {"Authorization": "Token not-a-token"},
                    {"Authorization": f"Basic {token}"}):
        refused = rpc(server, headers)
        assert refused.status_code == 401, headers
        assert refused.headers["WWW-Authenticate"].startswith("Bearer")
        assert "Authorization: Bearer <token>" in refused.json()["error"]["message"]  # what MCP clients show
        assert "result" not in refused.json()  # refused before the MCP message is read
    for scheme in ("Bearer", "Token"):
        accepted = rpc(server, {"Authorization": f"{scheme} {token}"})
        assert accepted.status_code == 200 and accepted.json()["result"]["serverInfo"]["name"] == "memento"

    async def connect_with(bad: str | None):
        async with over_http(server, bad) as client:
            await client.list_tools()

    for bad, reason in ((None, "Authentication credentials were not provided."), ("not-a-token", "Invalid token.")):
        with pytest.raises(BaseExceptionGroup) as refused:  # from the client's task group
            asyncio.run(connect_with(bad))
        assert [str(e) for e in leaves(refused.value)] == [
            f"{reason} Send your Memento API token as 'Authorization: Bearer <token>'."]
        assert all(isinstance(e, MCPError) for e in leaves(refused.value))


def test_stdio_bridge_says_why_a_bad_token_is_refused(server):
    import subprocess

    env = {**os.environ, "MEMENTO_URL": server, "MEMENTO_TOKEN": "not-a-token", "PYTHONPATH": CLIENT_PACKAGE}
    done = subprocess.run([sys.executable, "-m", "memento_client.mcp"], env=env, input="", capture_output=True,
                          text=True, timeout=120)
    assert done.returncode != 0
    assert f"{server}/mcp" in done.stderr and "Invalid token" in done.stderr


@pytest.mark.parametrize(("name", "arguments", "field"), [
    ("add_memory", {}, "content"),
    ("add_memory", {"content": "   "}, "content"),
    ("add_memory", {"content": "word " * 5000}, "content"),
    ("add_memory", {"content": "x", "importance": 7}, "importance"),
    ("add_memory", {"content": "x", "user_id": 2}, "user_id"),
    ("search_memories", {"query": "q" * 4001}, "query"),
    ("search_memories", {"query": "tea", "limit": 0}, "limit"),
    ("search_memories", {"query": "tea", "mode": "psychic"}, "mode"),
    ("get_memory", {"memory_id": "not-an-id"}, "memory_id"),
    ("get_memory", {}, "memory_id"),
    ("update_memory", {"memory_id": "0b8e5c1e-0000-4000-8000-000000000000", "content": "x"}, "memory_id"),
    ("list_memories", {"limit": "ten"}, "limit"),
    ("get_context", {"query": "tea", "conversation_id": "nope"}, "conversation_id"),
    ("get_context", {"query": "tea", "as_of": "the spring before last"}, "as_of"),
    ("delete_everything", {}, "name"),
])
def test_bad_arguments_are_tool_errors_that_name_the_field(server, name, arguments, field):
    token = token_for(UserFactory())

    async def scenario():
        async with over_http(server, token) as client:
            return await client.call_tool(name, arguments)

    result = asyncio.run(scenario())
    assert result.is_error
    assert f"{field}:" in result.content[0].text
    assert len(result.content[0].text) < 1000  # what to fix, not the value echoed back


def test_each_post_is_answered_on_its_own(server):
    """Stateless JSON: any web process can answer any request; no session id is handed out."""
    token = token_for(UserFactory())
    headers = {"Authorization": f"Bearer {token}", "Accept": "application/json, text/event-stream",
               "MCP-Protocol-Version": "2025-11-25"}
    body = {"jsonrpc": "2.0", "id": 7, "method": "tools/call",
            "params": {"name": "add_memory", "arguments": {"content": "Prefers oat milk"}}}
    answer = requests.post(f"{server}/mcp", data=json.dumps(body), timeout=60,
                           headers={**headers, "Content-Type": "application/json"})
    assert answer.status_code == 200 and "mcp-session-id" not in answer.headers
    result = answer.json()["result"]
    assert result["structuredContent"]["outcome"] == "created" and "Prefers oat milk" in result["content"][0]["text"]


def test_no_stream_is_held_open(server):
    """Stateless: no standalone SSE stream to GET and no session to DELETE, so no web thread waits on a client."""
    token = token_for(UserFactory())
    headers = {"Authorization": f"Bearer {token}", "Accept": "text/event-stream"}
    for method in ("GET", "DELETE"):
        answer = requests.request(method, f"{server}/mcp", headers=headers, timeout=30)
        assert answer.status_code == 405 and answer.headers["Allow"].startswith("POST")
    assert requests.get(f"{server}/mcp", headers={"Accept": "text/event-stream"}, timeout=30).status_code == 401


def test_oversized_requests_are_refused(server):
    token = token_for(UserFactory())
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": "add_memory", "arguments": {"content": "x" * 5_000_000}}})
    answer = requests.post(f"{server}/mcp", data=body, timeout=60, headers={
        "Authorization": f"Bearer {token}", "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream"})
    assert answer.status_code in (400, 413)


@pytest.mark.django_db
def test_a_database_error_in_a_tool_never_reaches_the_client(api, monkeypatch):
    """The SDK answered a failing tool with the exception's text: PostgreSQL's message and a fragment of the SQL."""
    from django.db import DataError

    from conversations import tools as tool_registry

    def fail(**kwargs):
        raise DataError('invalid input syntax for type json\nLINE 1: ...INSERT INTO "memories_memory" ("metadata")')

    monkeypatch.setattr(tool_registry, "run_tool", fail)
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "add_memory", "arguments": {"content": "x"}}}
    response = api.post("/mcp", body, format="json", HTTP_ACCEPT="application/json, text/event-stream")
    assert response.status_code == 200
    result = response.json()["result"]
    assert result["isError"] is True
    text = json.dumps(result)
    assert "INSERT" not in text and "memories_memory" not in text and "syntax" not in text
    assert "failed on the server" in text
