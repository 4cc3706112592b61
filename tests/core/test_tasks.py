"""The retrying task base: transient errors retry with backoff, the last failure is recorded on the object the task
worked on (through the app's *_mark_failed service) and then raised. Real documents and messages; the only fake
is the OpenAI-compatible server at the network edge."""

import pytest

from conversations import services as conversation_services
from conversations.models import Message
from conversations.tasks import extract_message
from core.tasks import TRANSIENT, RetryingTask
from documents import processing
from documents import services as document_services
from documents.models import Document
from documents.tasks import process_document
from integrations.embeddings import EmbeddingError
from integrations.llm import LLMUnavailable
from memories.tasks import embed_pending
from tests.documents import files
from tests.documents.conftest import upload
from tests.factories import ConversationFactory

pytestmark = pytest.mark.django_db


def _document(owner) -> Document:
    data = files.as_markdown(files.sample_sections(1))
    return document_services.document_upload(owner=owner, file=upload("notes.md", data))


def test_the_tasks_share_one_retry_policy():
    for task in (process_document, extract_message):
        assert isinstance(task, RetryingTask)
        assert task.autoretry_for == TRANSIENT and task.max_retries == 6 and task.acks_late
    assert isinstance(embed_pending, RetryingTask) and embed_pending.retry_backoff == 30


def test_a_transient_error_is_retried_and_the_retry_finishes_the_document(user, openai_embeddings):
    document = _document(user)
    openai_embeddings.fail(503, times=2, endpoint="/embeddings")  # the client's own retry fails too
    outcome = process_document.apply(args=[str(document.pk)])
    assert outcome.successful() and outcome.result == "completed"
    document.refresh_from_db()
    assert document.processing_status == Document.Status.COMPLETED and document.error_message == ""
    assert len(openai_embeddings.requests_to("/embeddings")) > 2  # the failed attempt, then the retry's calls


def test_retries_used_up_mark_the_document_failed_and_the_task_fails(user, openai_embeddings, settings):
    document = _document(user)
    openai_embeddings.fail(503, times=None, endpoint="/embeddings")
    outcome = process_document.apply(args=[str(document.pk)])
    assert outcome.failed() and isinstance(outcome.result, EmbeddingError)
    document.refresh_from_db()
    assert document.processing_status == Document.Status.FAILED
    assert document.error_message.startswith("Gave up after 6 retries (EmbeddingError: ")
    # the first attempt and six retries; the provider's circuit opened after five failed calls (each tried twice),
    # so the last two attempts failed without calling it
    assert settings.EMBEDDING_CIRCUIT_FAILURES == 5
    assert len(openai_embeddings.requests_to("/embeddings")) == 2 * 5


def test_an_error_a_retry_cannot_cure_is_recorded_at_once_and_raised(user, openai_embeddings, monkeypatch):
    document = _document(user)
    monkeypatch.setattr(processing.chunking, "chunk_blocks", lambda blocks, **kwargs: 1 / 0)
    outcome = process_document.apply(args=[str(document.pk)])
    assert outcome.failed() and isinstance(outcome.result, ZeroDivisionError)
    document.refresh_from_db()
    assert document.processing_status == Document.Status.FAILED
    assert document.error_message == "Stopped by an internal error (ZeroDivisionError: division by zero)."
    assert openai_embeddings.requests_to("/embeddings") == []  # no retry


def test_a_message_whose_llm_stays_down_ends_failed(user, settings, openai_server):
    settings.MEMORY_LLM_API_BASE = openai_server.base_url
    settings.MEMORY_LLM_MODEL = "fake-chat"
    openai_server.fail(503, times=None, endpoint="/chat/completions")
    conversation = ConversationFactory(owner=user)
    [(message, _)] = conversation_services.messages_append(
        conversation=conversation, messages=[{"role": "user", "content": "I live in Paris."}])
    outcome = extract_message.apply(args=[str(message.pk)])
    assert outcome.failed() and isinstance(outcome.result, LLMUnavailable)
    message.refresh_from_db()
    assert message.extraction_status == Message.Extraction.FAILED
    assert message.extraction_error.startswith("Gave up after 6 retries (LLMUnavailable: ")
