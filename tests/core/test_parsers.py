"""The JSON reader every endpoint shares: nesting past API_JSON_MAX_DEPTH is a 400 before parsing (1,000+ levels
used to be a RecursionError, a 500), on REST, the store, the JSONL import, tool calls and /mcp."""

import json

import pytest

from core.parsers import nesting

DEEP = "[" * 5000 + "]" * 5000


def deep_object(levels: int) -> str:
    return '{"a": ' * levels + "1" + "}" * levels


@pytest.mark.parametrize(("method", "url", "body", "content_type"), [
    ("post", "/api/memories/", '{"content": "x", "metadata": ' + deep_object(3000) + "}", "application/json"),
    ("post", "/api/memories/search/", DEEP, "application/json"),
    ("post", "/api/conversations/", '{"metadata": ' + deep_object(1000) + "}", "application/json"),
    ("put", "/api/store/items", '{"namespace": ["a"], "key": "k", "value": ' + deep_object(2000) + "}",
     "application/json"),
    ("post", "/api/store/batch", '{"ops": ' + DEEP + "}", "application/json"),
    ("post", "/api/memories/import/", '{"format": "memento.memory/1", "metadata": ' + deep_object(1500) + "}\n",
     "application/jsonl"),
    ("post", "/api/memories/import/", DEEP, "application/json"),
    ("post", "/api/tools/call/", '{"name": "add_memory", "arguments": ' + deep_object(1200) + "}",
     "application/json"),
    ("post", "/api/tools/call/", json.dumps({"name": "add_memory", "arguments": '{"content": "x", "metadata": '
                                             + deep_object(3000) + "}"}), "application/json"),
    ("post", "/mcp", '{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": ' + deep_object(1000) + "}",
     "application/json"),
], ids=["memory", "search", "conversation", "store-put", "store-batch", "import-jsonl", "import-json", "tool-body",
        "tool-arguments-text", "mcp"])
def test_json_nested_past_the_limit_is_a_400_everywhere(api, method, url, body, content_type):
    response = getattr(api, method)(url, body, content_type=content_type,
                                    HTTP_ACCEPT="application/json, text/event-stream")
    assert response.status_code == 400
    assert "nested more than 64 levels" in response.content.decode()


def test_nesting_within_the_limit_is_accepted(api):
    metadata = json.loads(deep_object(60))
    response = api.post("/api/memories/", {"content": "Deep but fine", "metadata": metadata}, format="json")
    assert response.status_code == 201
    assert response.json()["metadata"] == metadata


@pytest.mark.parametrize(("text", "depth"), [
    ("{}", 1), ('{"a": [1, {"b": []}]}', 4), ('["[[[[", "{{{{"]', 1), ('"\\"[[[["', 0),
    ("[" * 70 + "]" * 70, 70), ('{"k": "' + "[" * 100 + '"}', 1),
])
def test_nesting_ignores_brackets_inside_strings(text, depth):
    assert nesting(text) == depth


# --- numbers: finite only (1e400 became Infinity: a 500 on 11 endpoints; NaN over MCP reached PostgreSQL) --------

NON_FINITE = ["1e400", "-1e400", "NaN", "Infinity", "-Infinity", "1" * 400]


def non_finite_bodies(number: str, conversation) -> list[tuple[str, str, str, str]]:
    return [
        ("post", "/api/memories/", '{"content": "x", "importance": ' + number + "}", "application/json"),
        ("post", "/api/memories/", '{"content": "x", "metadata": {"n": ' + number + "}}", "application/json"),
        ("post", "/api/memories/search/", '{"query": "x", "min_score": ' + number + "}", "application/json"),
        ("post", "/api/conversations/", '{"metadata": {"n": [' + number + "]}}", "application/json"),
        ("post", f"/api/conversations/{conversation.pk}/messages/",
         '{"messages": [{"role": "user", "content": "hi", "metadata": {"n": ' + number + "}}]}",
         "application/json"),
        ("put", "/api/store/items", '{"namespace": ["a"], "key": "k", "value": {"n": ' + number + "}}",
         "application/json"),
        ("post", "/api/store/items/search", '{"namespace_prefix": ["a"], "limit": ' + number + "}",
         "application/json"),
        ("post", "/api/store/batch", '{"ops": [{"namespace": ["a"], "key": "k", "value": {"n": ' + number + "}}]}",
         "application/json"),
        ("post", "/api/memories/import/", '{"format": "memento.memory/1", "importance": ' + number + "}\n",
         "application/jsonl"),
        ("post", "/api/tools/call/", '{"name": "add_memory", "arguments": {"content": "x", "importance": '
         + number + "}}", "application/json"),
        ("post", "/api/tools/call/", json.dumps({"name": "add_memory", "arguments": '{"content": "x", "metadata": '
                                                 '{"n": ' + number + "}}"}), "application/json"),
        ("post", "/mcp", '{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "add_memory", '
         '"arguments": {"content": "x", "metadata": {"n": ' + number + "}}}}", "application/json"),
    ]


@pytest.mark.parametrize("number", NON_FINITE, ids=["1e400", "-1e400", "NaN", "Infinity", "-Infinity", "int400"])
def test_a_number_that_is_not_finite_is_a_400_everywhere(api, user, number):
    from conversations.models import Message
    from memories.models import Memory
    from tests.factories import ConversationFactory

    conversation = ConversationFactory(owner=user)
    for method, url, body, content_type in non_finite_bodies(number, conversation):
        response = getattr(api, method)(url, body, content_type=content_type,
                                        HTTP_ACCEPT="application/json, text/event-stream")
        assert response.status_code == 400, (url, body[:80], response.status_code, response.content[:300])
        assert "range" in response.content.decode() or "not a JSON number" in response.content.decode(), url
    assert not Memory.objects.exists() and not Message.objects.exists()


def test_large_finite_numbers_are_still_numbers(api):
    response = api.post("/api/memories/", '{"content": "Big", "metadata": {"n": 1e300, "i": ' + "9" * 300 + "}}",
                        content_type="application/json")
    assert response.status_code == 201, response.content
    assert response.json()["metadata"] == {"n": 1e300, "i": int("9" * 300)}


def test_a_non_finite_value_that_reaches_a_json_field_is_refused_by_the_storable_check():
    from core.text import NON_FINITE as message
    from core.text import unstorable

    assert unstorable({"a": [1.0, {"b": float("nan")}]}) == message
    assert unstorable({"a": [1.0, {"b": float("inf")}]}) == message
    assert unstorable({"a": 1e308}) is None
