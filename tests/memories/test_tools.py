"""The memory tools an agent calls (memories/tools.py), run directly; over MCP in tests/conversations/test_mcp.py."""

from memories import batch
from memories.tools import search_memories


def test_search_marks_the_memories_that_only_fill_a_short_list(user):
    facts = ["Is claustrophobic and avoids lifts", "Can't handle very spicy food", "Lives in Edinburgh",
             "Takes the tram to work", "Her niece Poppy is turning 5 in January"]
    batch.memory_batch_create(owner=user, items=[{"content": fact} for fact in facts], actor=user)
    result = search_memories(user, {"query": "Should we meet in the basement escape room?", "limit": 5})
    scores = [r["score"] for r in result.data["results"]]
    assert 0 in scores and scores == sorted(scores, reverse=True)  # the related first, then the near at 0
    lines = result.text.splitlines()[1:]
    assert all(("only near" in line) == (score == 0) for line, score in zip(lines, scores, strict=True))
