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
