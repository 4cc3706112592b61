"""The LLM extractor and LLM reconciliation against an OpenAI-compatible HTTP server on 127.0.0.1 (the only fake:
the network edge). Embeddings stay the real local model."""

import json

import pytest

import extraction
from conversations import processing, services
from conversations.models import Message
from conversations.tasks import extract_message
from integrations.llm import LLMUnavailable
from memories import services as memory_services
from memories.models import Memory
from tests.factories import ConversationFactory

EMMA = {
    "content": "Daughter Emma starts school in May", "category": "fact", "subject": "Emma",
    "attribute": "school:emma", "scope": "user", "tags": ["family", "school"],
    "entities": {"people": ["Emma"], "places": [], "organizations": [], "things": []}, "importance": 0.7,
    "explicit": False,
}


@pytest.fixture
def llm(settings, openai_server):
    settings.MEMORY_LLM_API_BASE = openai_server.base_url
    settings.MEMORY_LLM_MODEL = "fake-chat"
    settings.MEMORY_LLM_API_KEY = "test-key"
    settings.MEMORY_LLM_TIMEOUT = 30.0  # a loaded machine can stall a local answer; the timeout tests set their own
    return openai_server


def said(user, text, project=None):
    conversation = ConversationFactory(owner=user, project=project)
    [(message, _)] = services.messages_append(conversation=conversation, messages=[{"role": "user", "content": text}])
    return message


def chats(server):
    return [r.json for r in server.requests_to("/chat/completions")]


def test_good_json_becomes_memories(user, llm):
    llm.reply(json.dumps({"memories": [EMMA]}))
    message = said(user, "My daughter Emma starts school in May.")
    assert processing.message_extract(message_id=message.pk).extraction_status == "done"
    memory = Memory.objects.get(owner=user)
    assert (memory.content, memory.category, memory.subject, memory.importance) == (
        EMMA["content"], "fact", "Emma", 0.7)
    assert memory.tags == ["family", "school"] and memory.entities["people"] == ["Emma"]
    assert memory.metadata["attribute"] == "school:emma"
    assert memory.message_id == message.pk and memory.source == Memory.Source.EXTRACTED
    [request] = chats(llm)
    assert request["model"] == "fake-chat" and request["response_format"] == {"type": "json_object"}
    assert request["messages"][0]["content"] == extraction.EXTRACTION_PROMPT
    assert "My daughter Emma starts school in May." in request["messages"][1]["content"]
    assert llm.requests_to("/chat/completions")[0].bearer == "test-key"


def test_project_scope_follows_the_reply(user, llm):
    from tests.factories import ProjectFactory

    project = ProjectFactory(owner=user)
    llm.reply(json.dumps({"memories": [
        {"content": "Report due Tuesday", "scope": "project", "category": "context"},
        {"content": "Prefers bullet points", "scope": "user", "category": "preference"},
    ]}))
    message = said(user, "The report is due Tuesday, and I like bullet points.", project=project)
    processing.message_extract(message_id=message.pk)
    scopes = dict(Memory.objects.filter(owner=user).values_list("content", "project_id"))
    assert scopes == {"Report due Tuesday": project.pk, "Prefers bullet points": None}


def test_nothing_to_remember(user, llm):
    llm.reply('{"memories": []}')
    message = said(user, "Thanks!")
    assert processing.message_extract(message_id=message.pk).extraction_status == "done"
    assert not Memory.objects.exists()


def test_bad_json_is_retried_once_then_the_message_fails(user, llm):
    llm.reply("Sure! Here are the memories: Emma starts school", "{\"memories\": [")
    message = said(user, "My daughter Emma starts school in May.")
    result = processing.message_extract(message_id=message.pk)
    assert result.extraction_status == "failed"
    assert "invalid JSON" in result.extraction_error and "after one retry" in result.extraction_error
    first, second = chats(llm)
    assert "could not be used: invalid JSON" in second["messages"][-1]["content"]
    assert not Memory.objects.exists()
    assert Message.objects.get(pk=message.pk).extraction_error == result.extraction_error


def test_bad_json_then_good_json_succeeds(user, llm):
    llm.reply("not json at all", "```json\n" + json.dumps({"memories": [EMMA]}) + "\n```")
    message = said(user, "My daughter Emma starts school in May.")
    assert processing.message_extract(message_id=message.pk).extraction_status == "done"
    assert Memory.objects.get(owner=user).subject == "Emma"
    assert len(chats(llm)) == 2


@pytest.mark.parametrize(("memory", "problem"), [
    ({**EMMA, "importance": 7}, "memories[0].importance"),
    ({**EMMA, "category": "gossip"}, "memories[0].category"),
    ({**EMMA, "content": ""}, "memories[0].content"),
    ({**EMMA, "tags": "family"}, "memories[0].tags"),
])
def test_schema_mismatch_is_retried_once_then_the_message_fails(user, llm, memory, problem):
    llm.reply(json.dumps({"memories": [memory]}), json.dumps({"memories": [memory]}))
    message = said(user, "My daughter Emma starts school in May.")
    result = processing.message_extract(message_id=message.pk)
    assert result.extraction_status == "failed"
    assert "schema mismatch" in result.extraction_error and problem in result.extraction_error
    assert len(chats(llm)) == 2


def test_a_wrong_key_fails_the_message_without_retrying(user, llm):
    llm.require_api_key("another-key")
    message = said(user, "I live in Paris.")
    result = processing.message_extract(message_id=message.pk)
    assert result.extraction_status == "failed" and "401" in result.extraction_error
    assert len(chats(llm)) == 1


def test_a_timeout_is_transient_and_the_task_retries(user, llm, eager, settings):
    settings.MEMORY_LLM_TIMEOUT = 0.5
    llm.delay(5.0, times=None)
    message = said(user, "I live in Paris.")
    with pytest.raises(LLMUnavailable, match="timed out"):
        processing.message_extract(message_id=message.pk)
    assert Message.objects.get(pk=message.pk).extraction_status == "pending"  # left for a retry
    with pytest.raises(LLMUnavailable):  # recorded on the message, then raised: Celery marks the task failed
        extract_message.delay(str(message.pk)).get()
    failed = Message.objects.get(pk=message.pk)
    assert failed.extraction_status == "failed"
    assert failed.extraction_error.startswith("Gave up after 6 retries (LLMUnavailable: LLM endpoint timed out")
    assert len(chats(llm)) == 1 + 1 + extract_message.max_retries


def test_a_timeout_then_an_answer_finishes_the_message(user, llm, eager, settings):
    settings.MEMORY_LLM_TIMEOUT = 0.5
    llm.delay(5.0, times=1)
    llm.reply(json.dumps({"memories": [{"content": "Lives in Paris", "attribute": "location"}]}))
    message = said(user, "I live in Paris.")
    assert extract_message.delay(str(message.pk)).get() == "done"
    assert Memory.objects.get(owner=user).content == "Lives in Paris"


def _decide(action, reason="the user said so"):
    """A reconciliation reply that picks the first stored memory the request lists."""
    def reply(request):
        stored = json.loads(request["messages"][-1]["content"])["stored_memories"]
        return json.dumps({"action": action, "target_id": stored[0]["id"] if action != "ADD" else None,
                           "reason": reason})
    return reply


def test_the_llm_decides_update(user, llm):
    paris = memory_services.memory_create(owner=user, content="Lives in Paris").memory
    llm.reply(json.dumps({"memories": [{"content": "Lives in Berlin now", "attribute": "location"}]}),
              _decide("UPDATE", "the user moved"))
    message = said(user, "I've moved to Berlin.")
    assert processing.message_extract(message_id=message.pk).extraction_status == "done"
    berlin = Memory.objects.get(owner=user, supersedes=paris)
    paris.refresh_from_db()
    assert paris.superseded_by_id == berlin.pk
    reason = berlin.history.earliest("history_date").history_change_reason
    assert "UPDATE (the user moved; evidence messages" in reason and str(message.pk) in reason
    reconcile = chats(llm)[1]
    assert reconcile["messages"][0]["content"] == extraction.RECONCILE_PROMPT
    assert json.loads(reconcile["messages"][1]["content"])["new_memory"]["content"] == "Lives in Berlin now"


def test_the_llm_decides_noop(user, llm):
    tea = memory_services.memory_create(owner=user, content="Drinks green tea every morning").memory
    llm.reply(json.dumps({"memories": [{"content": "Has green tea each morning"}]}), _decide("NOOP", "same"))
    message = said(user, "Every morning I have green tea.")
    processing.message_extract(message_id=message.pk)
    assert list(Memory.objects.filter(owner=user)) == [tea]
    assert "NOOP (same; evidence messages" in tea.history.latest("history_date").history_change_reason


def test_the_llm_decides_add(user, llm):
    memory_services.memory_create(owner=user, content="Drinks green tea every morning")
    llm.reply(json.dumps({"memories": [{"content": "Drinks coffee after lunch"}]}), _decide("ADD", "different"))
    message = said(user, "After lunch I drink coffee.")
    processing.message_extract(message_id=message.pk)
    assert Memory.objects.filter(owner=user).count() == 2


def test_an_unusable_reconciliation_fails_the_message_and_writes_nothing(user, llm):
    memory_services.memory_create(owner=user, content="Lives in Paris")
    llm.reply(json.dumps({"memories": [{"content": "Lives in Berlin"}]}),
              '{"action": "REPLACE"}', '{"action": "UPDATE", "target_id": "not-a-listed-id"}')
    message = said(user, "I live in Berlin.")
    result = processing.message_extract(message_id=message.pk)
    assert result.extraction_status == "failed" and "target_id must be one of" in result.extraction_error
    assert Memory.objects.filter(owner=user).count() == 1


def test_the_llm_decides_keep(user, llm):
    """KEEP: the same kind of thing, both true (an accumulating attribute): a new memory beside the stored one."""
    kiwi = memory_services.memory_create(owner=user, content="Is allergic to kiwi").memory
    llm.reply(json.dumps({"memories": [{"content": "Is allergic to penicillin", "attribute": "allergy:penicillin"}]}),
              _decide("KEEP", "allergies accumulate"))
    message = said(user, "I'm also allergic to penicillin.")
    processing.message_extract(message_id=message.pk)
    kiwi.refresh_from_db()
    assert kiwi.superseded_by_id is None
    added = Memory.objects.get(owner=user, content="Is allergic to penicillin")
    assert added.metadata["attribute"] == "allergy:penicillin"
    assert "KEEP (allergies accumulate" in added.history.earliest("history_date").history_change_reason


def test_an_llm_update_about_an_older_time_enters_the_chain_as_the_past(user, llm):
    """The valid-time rule is the code's, after the LLM answers: a statement dated before the current memory
    never supersedes it."""
    current = memory_services.memory_create(owner=user, content="Lives in Grenoble").memory
    llm.reply(json.dumps({"memories": [{"content": "Lives in Paris", "attribute": "location"}]}),
              _decide("UPDATE", "the user moved"))
    conversation = ConversationFactory(owner=user)
    [(message, _)] = services.messages_append(conversation=conversation, messages=[
        {"role": "user", "content": "I live in Paris.", "sent_at": "2021-01-05T10:00:00Z"}])
    processing.message_extract(message_id=message.pk)
    current.refresh_from_db()
    assert current.superseded_by_id is None and current.valid_to is None
    paris = Memory.objects.get(owner=user, content="Lives in Paris")
    assert paris.superseded_by_id == current.pk and paris.valid_to is not None
    assert "before the current memory's" in paris.history.earliest("history_date").history_change_reason
