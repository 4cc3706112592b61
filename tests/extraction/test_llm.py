"""The LLM's replies, each read by one declaration (extraction.llm): defaults fill what the model leaves out, text
is trimmed, and a reply that does not fit is a ValueError naming each bad field (chat_json quotes it back to the
model). The calls themselves are tested against a fake server in tests/conversations/test_llm.py."""

import pytest

from extraction.llm import Decision, _check_memories, _checked


def test_a_sparse_memory_gets_the_defaults():
    [memory] = _check_memories({"memories": [{"content": "  Likes tea ", "category": None, "scope": "",
                                              "entities": None, "subject": "", "model_note": "ignored"}]})
    assert (memory.content, memory.category, memory.subject, memory.scope, memory.importance) == (
        "Likes tea", "fact", "user", "user", 0.5)
    assert memory.entities == {} and memory.tags == [] and memory.explicit is False


def test_a_memory_is_normalised():
    [memory] = _check_memories({"memories": [{
        "content": "Daughter Emma", "category": "Preferences", "attribute": "School:Emma", "scope": "Project",
        "tags": ["Family", "family ", " "], "entities": {"people": [" Emma", ""]}, "importance": 1}]})
    assert (memory.category, memory.attribute, memory.scope) == ("preference", "school:emma", "project")
    assert memory.tags == ["family"] and memory.entities == {"people": ["Emma"]} and memory.importance == 1.0


def test_every_bad_field_is_named():
    with pytest.raises(ValueError) as caught:
        _check_memories({"memories": [{"content": " ", "category": "gossip", "importance": "0.7",
                                       "explicit": "yes", "tags": "family"}, 5]})
    problem = str(caught.value)
    for field in ("memories[0].content", "memories[0].category", "memories[0].importance", "memories[0].explicit",
                  "memories[0].tags", "memories[1]"):
        assert field in problem
    assert "not 'gossip'" in problem


@pytest.mark.parametrize(("reply", "expected"), [
    ({"action": " update ", "target_id": 2, "reason": " moved "}, ("UPDATE", "2", "moved")),
    ({"action": "KEEP", "target_id": 9, "reason": None}, ("KEEP", None, "")),  # an unlisted id is dropped
    ({"action": "keep", "target_id": "1"}, ("KEEP", "1", "")),
    ({"action": "ADD", "target_id": "1"}, ("ADD", None, "")),
])
def test_a_decision_is_read(reply, expected):
    decision = _checked(Decision, reply, {"ids": ["1", "2"]})
    assert (decision.action, decision.target_id, decision.reason) == expected


@pytest.mark.parametrize(("reply", "problem"), [
    ({"action": "UPDATE", "target_id": "x"}, "target_id must be one of the listed ids (1, 2) for UPDATE, not 'x'"),
    ({"action": "NOOP", "target_id": True}, "target_id must be one of the listed ids"),
    ({"action": "REPLACE"}, "action: "),
    ({"action": "ADD", "reason": 5}, "reason: "),
])
def test_an_unusable_decision_says_why(reply, problem):
    with pytest.raises(ValueError, match=problem.replace("(", r"\(").replace(")", r"\)")):
        _checked(Decision, reply, {"ids": ["1", "2"]})
