"""Memory extraction from document passages through the configured LLM (the fake OpenAI-compatible server on
127.0.0.1): what it is asked, what becomes of its answers, and what happens when it fails."""

import json

import pytest

from documents import processing, services
from documents.models import Document
from integrations import llm
from tests.documents import files
from tests.documents.conftest import upload
from tests.factories import ProjectFactory

pytestmark = pytest.mark.django_db

LEADER = "Xavier Quillfeather leads the zeppelin restoration team."


@pytest.fixture
def chat(settings, openai_server):
    settings.MEMORY_LLM_API_BASE = openai_server.base_url
    settings.MEMORY_LLM_API_KEY = "test-key"
    settings.MEMORY_LLM_MODEL = "fake-chat"
    settings.MEMORY_LLM_TIMEOUT = 2.0
    llm._client.cache_clear()
    yield openai_server
    llm._client.cache_clear()


def _document(user, **kwargs):
    sections = files.sample_sections(41, sections=2)
    sections[1][1][0] = "Xavier Quillfeather runs the restoration of our zeppelin. " + sections[1][1][0]
    return services.document_upload(owner=user, file=upload("zeppelin.md", files.as_markdown(sections)), **kwargs)


def _user_message(request) -> str:
    return next(m["content"] for m in request.json["messages"] if m["role"] == "user")


def test_each_passage_is_sent_to_the_llm_and_its_memories_are_stored_with_provenance(user, chat):
    def answer(body):
        passage = next(m["content"] for m in body["messages"] if m["role"] == "user")
        if "Quillfeather" not in passage:
            return json.dumps({"memories": []})
        return json.dumps({"memories": [{
            "content": LEADER, "category": "relationship", "subject": "Xavier Quillfeather", "scope": "user",
            "tags": ["Zeppelin"], "entities": {"people": ["Xavier Quillfeather"]}, "importance": 0.8,
        }]})

    chat.default_reply = answer
    project = ProjectFactory(owner=user)
    document = _document(user, project=project)
    processing.document_process(document_id=document.pk)
    document.refresh_from_db()

    assert document.processing_status == Document.Status.COMPLETED
    asked = [r for r in chat.requests if r.path.endswith("/chat/completions")]
    assert len(asked) == document.chunks_total  # one extraction per passage
    assert all("zeppelin.md" in _user_message(r) for r in asked)  # the passage is named as part of a document
    memory = services.derived_memories(document).get(content=LEADER)
    chunk = document.chunks.get(pk=memory.source_ref["chunk_id"])
    assert "Quillfeather" in chunk.content
    assert memory.source == "document" and memory.source_ref["document_id"] == str(document.pk)
    assert memory.project == project  # the document's project, whatever scope the model proposed
    assert memory.category == "relationship" and {"zeppelin", "document"} <= set(memory.tags)
    assert f"document {document.pk} chunk {chunk.chunk_index}" in memory.history.first().history_change_reason


def test_an_unusable_llm_answer_fails_the_document_with_the_reason(user, chat):
    chat.default_reply = "this is not JSON"
    document = _document(user)
    processing.document_process(document_id=document.pk)
    document.refresh_from_db()
    assert document.processing_status == Document.Status.FAILED
    assert document.error_message.startswith("Memory extraction failed on passage 1: ")
    assert "unusable after one retry" in document.error_message and document.error_message.endswith(".")


def test_an_llm_outage_is_left_to_the_task_to_retry(user, chat):
    chat.fail(503, times=None)
    document = _document(user)
    with pytest.raises(llm.LLMUnavailable):
        processing.document_process(document_id=document.pk)
    document.refresh_from_db()
    assert document.processing_status == Document.Status.PROCESSING and document.chunks_done == 0

    chat.reset()
    chat.default_reply = json.dumps({"memories": []})
    processing.document_process(document_id=document.pk)
    document.refresh_from_db()
    assert document.processing_status == Document.Status.COMPLETED
