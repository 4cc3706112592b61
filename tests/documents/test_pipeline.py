"""The processing pipeline, run in this process (the Celery task's body): status and progress, failures,
resuming after a killed worker, idempotent reprocessing, provenance and erasure, scoping."""

import pytest
from django.core.files.storage import default_storage

from documents import processing, services
from documents.models import Chunk, Document
from documents.selectors import chunk_search
from documents.tasks import process_document
from integrations import embeddings
from memories import reconcile
from memories import search as memory_search_package
from memories import selectors as memory_selectors
from memories import services as memory_services
from memories.models import Memory
from tests.documents import files
from tests.documents.conftest import close, upload
from tests.factories import ProjectFactory, UserFactory

pytestmark = pytest.mark.django_db


def _upload(owner, name="notes.md", data=None, **kwargs) -> Document:
    data = files.as_markdown(files.sample_sections(1)) if data is None else data
    return services.document_upload(owner=owner, file=upload(name, data), **kwargs)


def _process(document) -> Document:
    result = processing.document_process(document_id=document.pk)
    return Document.objects.get(pk=document.pk) if result is not None else None


def _chunks(document):
    return list(Chunk.objects.filter(document=document).order_by("chunk_index"))


def _live_memories(document):
    return list(services.derived_memories(document).order_by("content"))


def test_a_document_goes_from_pending_to_completed_with_chunks_and_memories(user):
    document = _upload(user, title="Plan")
    assert document.processing_status == Document.Status.PENDING
    assert default_storage.exists(document.file.name)

    document = _process(document)

    assert document.processing_status == Document.Status.COMPLETED
    assert document.processed_at is not None and document.error_message == ""
    chunks = _chunks(document)
    assert document.chunks_total == document.chunks_done == len(chunks) > 1
    assert document.word_count > 2000 and document.page_count is None
    assert all(c.embedding is not None and c.embedding_model for c in chunks)
    assert all(c.token_count <= embeddings.WINDOW_TOKENS for c in chunks)
    memories = _live_memories(document)
    assert memories
    for memory in memories:
        assert memory.source == Memory.Source.DOCUMENT
        assert memory.source_ref["document_id"] == str(document.pk)
        assert memory.source_ref["chunk_id"] in {str(c.pk) for c in chunks}
        assert memory.project is None
        assert memory.embedding is not None
        assert "document" in memory.tags


def test_progress_is_visible_while_it_runs(user, settings, monkeypatch, api):
    """Each batch commits its chunks_done; the API shows status processing and the progress in between."""
    settings.DOCUMENT_BATCH_SIZE = 3
    document = _upload(user)
    seen = []

    def observe(doc, chunks):
        body = api.get(f"/api/documents/{doc.pk}/").json()
        seen.append((body["status"], body["progress"]["done"], body["progress"]["total"]))

    monkeypatch.setattr(processing, "batch_done", observe)
    document = _process(document)
    total = document.chunks_total
    assert seen[0] == ("processing", 3, total)
    assert [done for _, done, _ in seen] == [min(3 * i, total) for i in range(1, len(seen) + 1)]
    assert all(status == "processing" for status, _, _ in seen)
    body = api.get(f"/api/documents/{document.pk}/").json()
    assert body["status"] == "completed"
    assert body["progress"] == {"done": total, "total": total, "percent": 100.0}
    assert body["processed_at"]


class Killed(BaseException):
    """Stands for SIGKILL: nothing after it runs, and no `except Exception` sees it."""


def _snapshot(document):
    chunks = [(c.chunk_index, c.content, c.page_number, c.token_count, c.metadata) for c in _chunks(document)]
    memories = sorted((m.content, m.category, m.source_ref["chunk_index"], tuple(m.tags))
                      for m in _live_memories(document))
    return chunks, memories


def _same_vectors(a, b) -> bool:
    first, second = _chunks(a), _chunks(b)
    return len(first) == len(second) and all(
        close(x.embedding, y.embedding) for x, y in zip(first, second, strict=True))


def test_a_worker_killed_mid_document_leaves_it_resumable(user, other_user, settings, monkeypatch):
    """Killed after the second batch: the chunks and memories committed so far stay, the retry embeds only the
    rest, and the result equals a clean run of the same file."""
    settings.DOCUMENT_BATCH_SIZE = 4
    data = files.as_markdown(files.sample_sections(11, sections=5))
    clean = _process(_upload(other_user, data=data))

    document = _upload(user, data=data)
    batches = []

    def kill_after_two(doc, chunks):
        batches.append([c.chunk_index for c in chunks])
        if len(batches) == 2:
            raise Killed

    monkeypatch.setattr(processing, "batch_done", kill_after_two)
    with pytest.raises(Killed):
        processing.document_process(document_id=document.pk)
    document.refresh_from_db()
    assert document.processing_status == Document.Status.PROCESSING
    assert document.chunks_done == 8 < document.chunks_total
    before = {c.pk for c in _chunks(document)}
    memories_before = {m.pk for m in _live_memories(document)}

    embedded = []
    monkeypatch.setattr(processing, "batch_done", lambda doc, chunks: embedded.extend(c.chunk_index for c in chunks))
    document = _process(document)

    assert document.processing_status == Document.Status.COMPLETED
    assert embedded[0] == 8  # resumed after the committed batches
    assert {c.pk for c in _chunks(document)} == before  # the same rows, not a new parse
    assert memories_before <= {m.pk for m in _live_memories(document)}
    assert _snapshot(document) == _snapshot(clean)
    assert _same_vectors(document, clean)


def test_a_worker_killed_while_writing_chunks_leaves_it_resumable(user, monkeypatch):
    document = _upload(user)
    real = processing._store_chunks

    def die(*args, **kwargs):
        raise Killed

    monkeypatch.setattr(processing, "_store_chunks", die)
    with pytest.raises(Killed):
        processing.document_process(document_id=document.pk)
    assert Chunk.objects.filter(document=document).count() == 0
    monkeypatch.setattr(processing, "_store_chunks", real)
    assert _process(document).processing_status == Document.Status.COMPLETED


def test_reprocessing_replaces_chunks_and_memories_without_duplicates(user):
    document = _process(_upload(user))
    chunks, memories = _snapshot(document)
    old_memory_ids = {m.pk for m in _live_memories(document)}
    old_chunk_ids = {c.pk for c in _chunks(document)}

    document = services.document_reprocess(document=document)
    assert document.processing_status == Document.Status.PENDING
    assert document.chunks_total == document.chunks_done == 0 and document.processed_at is None
    assert not Chunk.objects.filter(document=document).exists()
    document = _process(document)

    assert document.processing_status == Document.Status.COMPLETED
    assert _snapshot(document) == (chunks, memories)
    assert not old_chunk_ids & {c.pk for c in _chunks(document)}
    live = Memory.objects.filter(owner=user, is_active=True)
    assert live.count() == len(memories)  # no duplicates
    assert not old_memory_ids & set(live.values_list("pk", flat=True))
    retired = Memory.objects.filter(pk__in=old_memory_ids)
    assert all(not m.is_active for m in retired)
    assert all(m.history.first().history_change_reason == f"document {document.pk} processed again"
               for m in retired)

    # and once more: still the same number of live memories
    _process(services.document_reprocess(document=document))
    assert Memory.objects.filter(owner=user, is_active=True).count() == len(memories)


def test_a_run_overtaken_by_reprocessing_stops_without_writing(user, settings, monkeypatch):
    settings.DOCUMENT_BATCH_SIZE = 2
    document = _upload(user)
    calls = []

    def reprocess_midway(doc, chunks):
        calls.append(1)
        if len(calls) == 1:
            services.document_reprocess(document=doc)

    monkeypatch.setattr(processing, "batch_done", reprocess_midway)
    result = processing.document_process(document_id=document.pk)
    assert result.processing_status == Document.Status.PENDING  # stopped; the new run is queued
    assert len(calls) == 1
    monkeypatch.setattr(processing, "batch_done", lambda doc, chunks: None)
    document = _process(document)
    assert document.processing_status == Document.Status.COMPLETED
    contents = [m.content for m in Memory.objects.filter(owner=user, is_active=True)]
    assert len(contents) == len(set(contents))


@pytest.mark.parametrize("make", [
    lambda: files.encrypt_pdf(files.make_pdf([["Secret merger plans for Tuesday."]])),
    lambda: files.make_pdf([["Some text on a page that is fine."]] * 3)[:300],
    lambda: files.make_pdf([[], []]),
], ids=["encrypted", "corrupt", "no-text"])
def test_an_unreadable_pdf_fails_with_a_reason_and_nothing_else_changes(user, make):
    good = _process(_upload(user))
    memories = Memory.objects.filter(owner=user).count()
    bad = _upload(user, name="bad.pdf", data=make())
    bad = _process(bad)
    assert bad.processing_status == Document.Status.FAILED
    assert bad.error_message and bad.error_message[0].isupper() and bad.error_message.endswith(".")
    assert any(word in bad.error_message for word in ("encrypted", "damaged", "no text"))
    assert bad.processed_at is not None
    assert not Chunk.objects.filter(document=bad).exists()
    assert Memory.objects.filter(owner=user).count() == memories
    good.refresh_from_db()
    assert good.processing_status == Document.Status.COMPLETED
    # a failed document is not processed again by a stray retry
    assert _process(bad).processing_status == Document.Status.FAILED


def test_a_missing_file_fails_with_a_reason(user):
    document = _upload(user, name="notes.txt", data=b"The audit is due on Friday.")
    default_storage.delete(document.file.name)
    document = _process(document)
    assert document.processing_status == Document.Status.FAILED
    assert "missing" in document.error_message


def test_a_zip_bomb_stored_before_the_limit_fails_at_once_with_the_reason(user):
    document = _upload(user, name="notes.docx", data=files.make_docx([("p", "The audit is due on Friday.")]))
    with default_storage.open(document.file.name, "wb") as handle:  # stored by a version without the check
        handle.write(files.zip_bomb_docx())
    document = _process(document)
    assert document.processing_status == Document.Status.FAILED
    assert "unpacks from" in document.error_message and "zip bomb" in document.error_message
    assert document.chunks_total == 0 and not Chunk.objects.filter(document=document).exists()


@pytest.mark.parametrize(("setting", "value", "reason"), [
    ("DOCUMENT_MAX_CHUNKS", 3, "passages to index; the most one document may make is 3."),
    ("DOCUMENT_MAX_TEXT_CHARS", 5000, "more than 5,000 characters of text"),
], ids=["chunks", "text"])
def test_a_document_over_a_limit_fails_with_the_reason_and_queues_no_chunks(user, settings, setting, value,
                                                                              reason):
    data = files.as_docx(files.sample_sections(2))
    assert _process(_upload(user, name="plan.docx", data=data)).processing_status == Document.Status.COMPLETED
    setattr(settings, setting, value)
    document = _process(_upload(user, name="plan.docx", data=data))
    assert document.processing_status == Document.Status.FAILED
    assert reason in document.error_message, document.error_message
    assert document.chunks_total == 0 and not _chunks(document) and not _live_memories(document)


def test_a_document_over_the_work_budget_fails_with_the_reason(user, settings):
    settings.DOCUMENT_WORK_SECONDS = -1  # spent before it starts: the first check between steps stops it
    document = _process(_upload(user, name="notes.txt", data=b"The audit is due on Friday. " * 50))
    assert document.processing_status == Document.Status.FAILED
    assert "took longer than the -1 seconds one step may take" in document.error_message
    assert not _chunks(document)


def _one_long_paragraph(words: int) -> bytes:
    return " ".join(f"word{i}" for i in range(words)).encode()


@pytest.mark.parametrize("action", ["delete", "reprocess"])
def test_deleting_or_reprocessing_a_document_stops_its_running_chunking(user, monkeypatch, action):
    document = _upload(user, name="long.txt", data=_one_long_paragraph(60_000))  # ~140 spans
    monkeypatch.setattr(processing.parsing.Deadline, "poll_seconds", 0)
    monkeypatch.setattr(processing.chunking, "ENCODE_BATCH", 4)
    encoded, real = [], processing.chunking._encoded

    def encode_then_act(*args):
        encoded.append(1)
        if len(encoded) == 2:
            if action == "delete":
                services.document_delete(document=Document.objects.get(pk=document.pk))
            else:
                services.document_reprocess(document=document)
        return real(*args)

    monkeypatch.setattr(processing.chunking, "_encoded", encode_then_act)
    result = processing.document_process(document_id=document.pk)
    assert len(encoded) == 2  # the next bounded step saw it and stopped, ~35 steps before the end
    assert (result is None) if action == "delete" else (result.processing_status == Document.Status.PENDING)
    assert not Chunk.objects.filter(document_id=document.pk).exists()


def test_a_share_ends_once_its_time_is_used(user, settings, monkeypatch):
    """DOCUMENT_TASK_SECONDS: past it a task extracts no further chunk; the rest goes to the back of the queue."""
    settings.DOCUMENT_TASK_SECONDS = 0  # every share ends after its first chunk
    document = _upload(user, data=files.as_markdown(files.sample_sections(1, sections=6)))
    shares = 0
    while True:
        shares += 1
        result = processing.document_process(document_id=document.pk, max_chunks=256)
        if result.processing_status != Document.Status.PROCESSING:
            break
        assert result.chunks_done == shares
    assert result.processing_status == Document.Status.COMPLETED
    assert shares == result.chunks_total > 3


def test_embedding_outage_is_retried_then_recorded(user, monkeypatch):
    document = _upload(user)

    def down(texts, model=None):
        raise embeddings.EmbeddingError("connection refused")

    monkeypatch.setattr(embeddings, "embed_texts", down)
    with pytest.raises(embeddings.EmbeddingError):
        processing.document_process(document_id=document.pk)  # the task retries this
    document.refresh_from_db()
    assert document.processing_status == Document.Status.PROCESSING and document.chunks_total > 0

    outcome = process_document.apply(args=[str(document.pk)], retries=process_document.max_retries)
    assert outcome.failed() and isinstance(outcome.result, embeddings.EmbeddingError)
    document.refresh_from_db()
    assert document.processing_status == Document.Status.FAILED
    assert "Gave up after 6 retries" in document.error_message and "connection refused" in document.error_message


def test_the_task_records_an_unexpected_error(user, monkeypatch):
    document = _upload(user)
    monkeypatch.setattr(processing.chunking, "chunk_blocks", lambda blocks, **kwargs: 1 / 0)
    outcome = process_document.apply(args=[str(document.pk)])
    assert outcome.failed() and isinstance(outcome.result, ZeroDivisionError)  # recorded, then raised
    document.refresh_from_db()
    assert document.processing_status == Document.Status.FAILED
    assert "internal error (ZeroDivisionError" in document.error_message


def test_each_owner_has_one_document_in_the_queue_and_a_task_does_a_share_of_it(
        user, other_user, settings, monkeypatch, django_capture_on_commit_callbacks):
    settings.DOCUMENT_TASK_CHUNKS = 4
    queued = []
    monkeypatch.setattr(process_document, "delay", lambda pk: queued.append(pk))
    with django_capture_on_commit_callbacks(execute=True):
        big = _upload(user, name="big.md")
        small = _upload(user, name="small.txt", data=b"Bruno Tanaka leads the data team.")
        other = _upload(other_user, name="other.txt", data=b"Chiara Okafor leads the design team.")
    assert queued == [str(big.pk), str(other.pk)]  # the owner's second document waits for the first
    assert Document.objects.get(pk=small.pk).queued_at is None

    shares = []
    while queued:
        pk = queued.pop(0)
        with django_capture_on_commit_callbacks(execute=True):
            process_document.apply(args=[pk])
        document = Document.objects.get(pk=pk)
        shares.append((pk, document.processing_status, document.chunks_done))
    big.refresh_from_db()
    assert big.chunks_total > 8
    # big: 4 chunks a task, each time queued again behind the others' work; small: sent once big was done
    assert shares[:3] == [(str(big.pk), "processing", 4), (str(other.pk), "completed", 1),
                          (str(big.pk), "processing", 8)]
    assert [pk for pk, _, _ in shares] == [str(big.pk), str(other.pk)] + [str(big.pk)] * (
        (big.chunks_total + 3) // 4 - 1) + [str(small.pk)]
    assert Document.objects.filter(processing_status="completed").count() == 3


def test_a_share_ends_with_a_small_embedding_call(user, settings, monkeypatch):
    """The last call's writes overlap no embedding: a share makes full calls and ends with a small one."""
    settings.DOCUMENT_TASK_CHUNKS, settings.DOCUMENT_BATCH_SIZE, settings.DOCUMENT_EMBED_BATCH_SIZE = 10, 2, 4
    calls = []
    prepare = processing._prepare
    monkeypatch.setattr(processing, "_prepare", lambda d, chunks, *rest: calls.append(len(chunks)) or prepare(
        d, chunks, *rest))
    document = _upload(user, data=files.as_markdown(files.sample_sections(1, sections=12)))
    processing.document_process(document_id=document.pk, max_chunks=10)
    assert Document.objects.get(pk=document.pk).chunks_total > 20
    assert calls == [2, 4, 2, 2]  # the first share starts small too: progress shows early
    calls.clear()
    processing.document_process(document_id=document.pk, max_chunks=10)
    assert calls == [4, 4, 2]
    assert Document.objects.get(pk=document.pk).chunks_done == 20


def test_stale_documents_are_queued_again(user, monkeypatch, django_capture_on_commit_callbacks):
    queued = []
    monkeypatch.setattr(process_document, "delay", lambda pk: queued.append(pk))
    pending = _upload(user)  # its dispatch was lost (the on-commit callbacks of these uploads do not run)
    done = _process(_upload(user))
    with django_capture_on_commit_callbacks(execute=True):
        assert processing.documents_requeue_stale(older_than_seconds=0) == 1
    assert queued == [str(pending.pk)]
    with django_capture_on_commit_callbacks(execute=True):
        assert processing.documents_requeue_stale(older_than_seconds=3600) == 0
    assert str(done.pk) not in queued
    # in the queue and no progress since: sent again, and not again by the next sweep
    with django_capture_on_commit_callbacks(execute=True):
        assert processing.documents_requeue_stale(older_than_seconds=0) == 1
        assert processing.documents_requeue_stale(older_than_seconds=60) == 0
    assert queued == [str(pending.pk)] * 2


# --- provenance, erasure, scope -------------------------------------------------------------------------------

SECRET = ("Xavier Quillfeather leads the zeppelin restoration team. The zeppelin audit is due on Thursday, "
          "October 9. We decided to use helium from Quillfeather Gas. ")


def _secret_document(user, **kwargs):
    sections = files.sample_sections(12, sections=2)
    sections[0][1][0] = SECRET + sections[0][1][0]
    return _process(_upload(user, data=files.as_markdown(sections), **kwargs))


def _findable(user, query, project=None) -> list[str]:
    found = []
    for mode in ("semantic", "keyword", "hybrid"):
        filters = memory_selectors.MemoryFilters(project=project, all_projects=project is None)
        result = memory_search_package.memory_search(owner=user, query=query, mode=mode, threshold=0.0, filters=filters)
        found += [r.memory.content for r in result.results]
        found += [r.passage.content for r in chunk_search(owner=user, query=query, mode=mode, threshold=0.0,
                                                        all_projects=True)]
    return found


def test_deleting_a_document_erases_its_content_from_every_search_mode(user, django_capture_on_commit_callbacks):
    document = _secret_document(user)
    derived = _live_memories(document)
    assert {m.content for m in derived} >= {
        "Xavier Quillfeather leads the zeppelin restoration team.",
        "The zeppelin audit is due on Thursday, October 9.",
        "We decided to use helium from Quillfeather Gas.",
    }
    queries = ["Who leads the zeppelin restoration team?", "zeppelin audit deadline", "Quillfeather helium"]
    assert all(any("Quillfeather" in text or "zeppelin" in text for text in _findable(user, q)) for q in queries)
    stored = document.file.name

    with django_capture_on_commit_callbacks(execute=True):
        services.document_delete(document=document, actor=user)

    assert not Document.objects.filter(pk=document.pk).exists()
    assert not Chunk.objects.filter(document_id=document.pk).exists()
    assert not default_storage.exists(stored)
    for memory in Memory.objects.filter(pk__in=[m.pk for m in derived]):
        assert not memory.is_active
        record = memory.history.first()
        assert record.history_action == "DELETE" and record.history_user == user
        assert record.history_change_reason == f"document {document.pk} deleted (notes.md)"
    for query in queries + ["Xavier Quillfeather", "zeppelin", "helium"]:
        leaked = [text for text in _findable(user, query) if "Quillfeather" in text or "zeppelin" in text]
        assert leaked == [], query


def test_erasure_leaves_memories_another_source_also_holds(user):
    # stated in a conversation first: the document only confirms it (NOOP), so it is not "derived only from it"
    elsewhere = memory_services.memory_create(
        owner=user, content="Xavier Quillfeather leads the zeppelin restoration team.", source="extracted").memory
    document = _secret_document(user)
    assert elsewhere.pk not in {m.pk for m in _live_memories(document)}
    assert "NOOP" in Memory.objects.get(pk=elsewhere.pk).history.first().history_change_reason

    # derived from the document first, then confirmed by a conversation: kept too, with the link noted
    from extraction import Candidate

    derived = next(m for m in _live_memories(document) if "audit" in m.content)
    reconcile.memories_reconcile(
        owner=user, reason="message 1 of conversation 2",
        candidates=[Candidate(content=derived.content, category="fact", subject="", attribute="", tags=[],
                              entities={}, importance=0.5)],
    )
    services.document_delete(document=document)

    assert Memory.objects.get(pk=elsewhere.pk).is_active
    kept = Memory.objects.get(pk=derived.pk)
    assert kept.is_active and kept.source_ref["document_deleted"] is True and "chunk_id" not in kept.source_ref
    assert "kept: confirmed elsewhere" in kept.history.first().history_change_reason
    assert Memory.objects.filter(owner=user, is_active=True, content__contains="helium").count() == 0


def test_derived_memories_reuse_the_vectors_embedded_with_the_chunks(user, monkeypatch):
    """Candidates are embedded in the same call as their chunks (the embedding thread); reconciling them must not
    embed them again in the writing thread."""
    def embedded_again(texts):
        raise AssertionError(f"embedded again while writing: {texts[:1]}")

    monkeypatch.setattr(reconcile, "embed_or_pending", embedded_again)  # the name the reconciler calls
    document = _secret_document(user)
    assert document.processing_status == Document.Status.COMPLETED, document.error_message
    memories = _live_memories(document)
    assert memories and all(m.embedding is not None for m in memories)


def test_a_project_document_gives_project_scoped_memories(user):
    project = ProjectFactory(owner=user)
    document = _secret_document(user, project=project)
    memories = _live_memories(document)
    assert memories and all(m.project_id == project.pk for m in memories)
    query = "Who leads the zeppelin restoration team?"

    def memory_hits(project):
        filters = memory_selectors.MemoryFilters(project=project)
        return [r.memory.content for r in memory_search_package.memory_search(
            owner=user, query=query, mode="keyword", filters=filters).results]

    assert memory_hits(None) == []  # user scope only: project memories stay in their project
    assert "Xavier Quillfeather leads the zeppelin restoration team." in memory_hits(project)
    assert chunk_search(owner=user, query=query, mode="keyword") == []
    assert chunk_search(owner=user, query=query, mode="keyword", project=project)
    assert chunk_search(owner=user, query=query, mode="keyword", all_projects=True)
    other = ProjectFactory(owner=user)
    assert chunk_search(owner=user, query=query, mode="keyword", project=other) == []


def test_another_users_documents_are_never_found(user):
    _secret_document(user)
    stranger = UserFactory()
    for mode in ("semantic", "keyword", "hybrid"):
        assert chunk_search(owner=stranger, query="zeppelin restoration", mode=mode, threshold=0.0,
                            all_projects=True) == []


def test_the_periodic_sweep_for_stale_documents_is_scheduled(settings):
    from documents.tasks import requeue_stale_documents
    from memento.celery import app

    entry = settings.CELERY_BEAT_SCHEDULE["requeue-stale-documents"]
    assert entry["task"] == requeue_stale_documents.name and entry["task"] in app.tasks
    assert entry["schedule"] < settings.DOCUMENT_STALE_SECONDS


@pytest.mark.django_db(transaction=True)
def test_the_candidates_frames_are_read_before_the_writing_transaction(monkeypatch):
    from django.db import connection

    from extraction import attributes

    owner = UserFactory()
    inside = []
    classify = attributes._classify

    def recording(statements, names, model):
        inside.extend(connection.in_atomic_block for _ in statements)
        return classify(statements, names, model)

    monkeypatch.setattr(attributes, "_classify", recording)
    attributes._cache.clear()
    document = _process(_upload(owner, name="me.md", data=b"# About me\n\nI live in Lyon and I work at Acme as a "
                                                            b"nurse. I am allergic to peanuts."))
    assert document.processing_status == Document.Status.COMPLETED and _live_memories(document)
    assert inside and not any(inside)
