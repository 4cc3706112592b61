"""The memory tools (memories/tools.py): arguments bounded before any work (a 2 MB `content` held a web thread 20 s
over MCP), and what the search tool tells an agent."""

import json

import pytest

from memories.models import Memory

pytestmark = pytest.mark.django_db


@pytest.fixture
def tokenized(monkeypatch):
    from integrations import embeddings

    calls, real = [], embeddings.count_tokens
    monkeypatch.setattr(embeddings, "count_tokens", lambda text: calls.append(len(text)) or real(text))
    return calls


def test_tool_arguments_over_the_limit_are_a_400_naming_arguments_over_rest_and_mcp(api, settings, tokenized):
    settings.TOOL_ARGUMENTS_MAX_BYTES = 10_000
    content = "The user likes tea. " * 1000  # 20 KB
    for arguments in ({"content": content}, json.dumps({"content": content})):  # an object, or its JSON text
        response = api.post("/api/tools/call/", {"name": "add_memory", "arguments": arguments}, format="json")
        assert response.status_code == 400
        assert "limit is 10,000" in response.json()["arguments"][0]
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "add_memory", "arguments": {"content": content}}}
    response = api.post("/mcp", body, format="json", HTTP_ACCEPT="application/json, text/event-stream")
    result = response.json()["result"]
    assert result["isError"] is True and "arguments" in result["content"][0]["text"]
    assert tokenized == [] and not Memory.objects.exists()
    fits = api.post("/api/tools/call/", {"name": "add_memory", "arguments": {"content": "The user likes tea."}},
                    format="json")
    assert fits.status_code == 200


def test_search_marks_the_memories_that_only_fill_a_short_list(user):
    from memories import batch
    from memories.tools import search_memories

    facts = ["Is claustrophobic and avoids lifts", "Can't handle very spicy food", "Lives in Edinburgh",
             "Takes the tram to work", "Her niece Poppy is turning 5 in January"]
    batch.memory_batch_create(owner=user, items=[{"content": fact} for fact in facts], actor=user)
    result = search_memories(user, {"query": "Should we meet in the basement escape room?", "limit": 5})
    scores = [r["score"] for r in result.data["results"]]
    assert 0 in scores and scores == sorted(scores, reverse=True)  # the related first, then the near at 0
    lines = result.text.splitlines()[1:]
    assert all(("only near" in line) == (score == 0) for line, score in zip(lines, scores, strict=True))
