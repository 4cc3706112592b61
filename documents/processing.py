"""The processing pipeline of a document: parse -> chunk -> embed -> extract memories (queued by the services).

Processing runs in steps that each commit, so that a worker killed at any point leaves a document that the next
attempt finishes with the same result as a clean run:

1. parse + chunk (no transaction), then one transaction: retire what an earlier run derived (old chunks, memories
   derived only from this document), insert every chunk (no embedding yet), set `chunks_total`.
2. in chunk order, embed and extract outside any transaction (DOCUMENT_EMBED_BATCH_SIZE chunks per embedding
   call; the next call runs in a thread while the current chunks are written), then one transaction per
   DOCUMENT_BATCH_SIZE chunks: store their embeddings, fold their candidates into memories (`memories_reconcile`:
   ADD / NOOP) and set `chunks_done`. A chunk with an embedding is done: its memories were written with it, so a
   retry skips it.
3. one transaction: status `completed`, `processed_at`; the owner's next document goes to the worker.

A task does at most DOCUMENT_TASK_CHUNKS chunks, or DOCUMENT_TASK_SECONDS of them (documents.shares: its calls are
sized to fit), and then queues the document again, behind the work queued
meanwhile, and each owner has one document in the queue at a time (services.documents_dispatch): the worker's
time goes round the users with work, a slice each, so a small upload is not stuck behind someone's book.

A run holds the document's claim (core.claims) throughout: a second delivery of its task while it runs returns at
once, and a worker killed mid-way leaves the document unclaimed, which the sweep sends again at the worker's
next start or within DOCUMENT_STALE_SECONDS.

A document that cannot be read (damaged, encrypted, no text) ends `failed` with a reason for people; nothing else
changes. Memory writes go through the memories services only.
"""

import dataclasses
import time
from datetime import timedelta

from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from core import events
from core.ahead import ahead_until
from core.claims import ClaimKind, claim
from core.turns import requeue_stale
from documents import chunking, parsing, services, tasks
from documents.extracting import ExtractionFailed, chunk_candidates
from documents.models import Chunk, Document
from documents.shares import Share
from extraction.attributes import statement_frames
from integrations import embeddings, llm
from memories import spaces
from memories.models import Memory
from memories.reconcile import memories_reconcile


def batch_size() -> int:
    return max(1, settings.DOCUMENT_BATCH_SIZE)


def embed_batch_size() -> int:
    """Chunks embedded per call (several commit batches): bigger calls use the model better."""
    return max(batch_size(), settings.DOCUMENT_EMBED_BATCH_SIZE)


def task_chunks() -> int:
    """Chunks one task processes before the document goes to the back of the queue."""
    return max(1, settings.DOCUMENT_TASK_CHUNKS)


class _Stop(Exception):
    """The document was deleted or reprocessed while this run worked on it: stop quietly."""


def _start(document_id) -> Document | None:
    with transaction.atomic():
        document = (Document.objects.select_for_update(of=("self",)).select_related("owner", "project")
                    .filter(pk=document_id).first())
        if document is None or document.processing_status not in (Document.Status.PENDING,
                                                                  Document.Status.PROCESSING):
            return None
        if document.processing_status != Document.Status.PROCESSING:
            document.processing_status = Document.Status.PROCESSING
            document.save(update_fields=["processing_status", "updated_at"])
    return document


def _chunks_ready(document: Document) -> bool:
    return document.chunks_total > 0 and Chunk.objects.filter(document=document).count() == document.chunks_total


def read_file(document: Document) -> bytes:
    try:
        with document.file.open("rb") as handle:
            return handle.read()
    except (FileNotFoundError, OSError, ValueError) as exc:
        raise parsing.ParseError("The stored file is missing; upload the document again.") from exc


def kind_of(document: Document) -> str:
    by_mime = {mime: kind for kind, mime in parsing.MIME_TYPES.items()}
    kind = by_mime.get(document.content_type)
    if kind is None:
        with document.file.open("rb") as handle:
            kind = parsing.detect_kind(document.filename, handle)
    return kind


def _store_chunks(document: Document, parsed: parsing.ParsedDocument, specs: list[chunking.ChunkSpec]) -> Document:
    """Step 1's transaction. Another run that stored chunks meanwhile wins (its chunks are the same)."""
    with transaction.atomic():
        locked = Document.objects.select_for_update().filter(pk=document.pk).first()
        if locked is None or locked.processing_status != Document.Status.PROCESSING:
            raise _Stop
        if _chunks_ready(locked):
            return locked
        services.retire_derived(locked, reason=f"document {locked.pk} processed again")
        Chunk.objects.filter(document=locked).delete()
        Chunk.objects.bulk_create([
            Chunk(document=locked, owner_id=locked.owner_id, content=spec.content, chunk_index=index,
                  page_number=spec.page_number, metadata=spec.metadata, token_count=spec.token_count)
            for index, spec in enumerate(specs)
        ], batch_size=500)
        locked.chunks_total = len(specs)
        locked.chunks_done = 0
        locked.page_count = parsed.page_count
        locked.word_count = parsed.word_count
        if not locked.title and parsed.title:
            locked.title = parsed.title[:300]
        locked.save()
    return locked


def _prepare(document: Document, chunks: list[Chunk], use_llm: bool, share: Share):
    """Outside any transaction (and in a worker thread): the batch's candidates, and in one embedding call the
    chunks' vectors and the candidates' vectors (so that reconciling them embeds nothing in the writing thread).
    Once the task's share of time is used, the chunks not yet extracted are left for the next task: returns the
    chunks it prepared (at least one) with their vectors and candidates."""
    started = time.monotonic()
    candidates = []
    for chunk in chunks:
        if candidates and share.over():
            break
        candidates.append(chunk_candidates(document, chunk, use_llm))
    chunks = chunks[: len(candidates)]
    texts = [chunk.content for chunk in chunks]
    statements = [c.content for found in candidates for c in found]
    chunk_model, memory_model = spaces.active_model(spaces.Name.CHUNKS), spaces.active_model(spaces.Name.MEMORIES)
    if chunk_model == memory_model:
        vectors = embeddings.embed_texts(texts + statements, chunk_model)
    else:  # one of the two tables is being switched to another model
        vectors = embeddings.embed_texts(texts, chunk_model) + embeddings.embed_texts(statements, memory_model)
    rest = iter(vectors[len(texts):])
    candidate_vectors = [[next(rest) for _ in found] for found in candidates]
    # the candidates' attribute frames (a parse and an embedding each) are kept by statement_frames: reconciling
    # them in the writing transaction then reads them back instead of computing them there
    statement_frames([(c.content, c.subject) for found in candidates for c in found])
    share.paced(time.monotonic() - started, len(chunks))
    candidate_vectors = [[embeddings.ModelVector(v, memory_model) for v in found] for found in candidate_vectors]
    chunk_vectors = [embeddings.ModelVector(v, chunk_model) for v in vectors[: len(texts)]]
    return chunks, chunk_vectors, candidates, candidate_vectors




def _store_batch(document: Document, chunks: list[Chunk], vectors, candidates, candidate_vectors) -> int:
    """Step 2's transaction for one batch; returns chunks_done."""
    with transaction.atomic():
        locked = (Document.objects.select_for_update(of=("self",)).select_related("owner", "project")
                  .filter(pk=document.pk).first())
        if locked is None or locked.processing_status != Document.Status.PROCESSING:
            raise _Stop
        ids = [chunk.pk for chunk in chunks]
        rows = {c.pk: c for c in Chunk.objects.select_for_update().filter(document=locked, pk__in=ids)
                .only("pk", "chunk_index", "embedding")}
        if len(rows) != len(ids):
            raise _Stop  # the chunks were replaced
        pending = [
            (chunk, vector, list(zip(found, found_vectors, strict=True)))
            for chunk, vector, found, found_vectors in zip(chunks, vectors, candidates, candidate_vectors, strict=True)
            if rows[chunk.pk].embedding is None
        ]
        for chunk, vector, _ in pending:
            chunk.embedding, chunk.embedding_model = vector, vector.model
        Chunk.objects.bulk_update([chunk for chunk, _, _ in pending], ["embedding", "embedding_model"])
        # a statement the document already made (a repeated sentence) is not news: only its first mention is
        # reconciled
        said = set(services.derived_memories(locked).filter(
            content__in=[c.content for _, _, found in pending for c, _ in found]).values_list("content", flat=True))
        for chunk, _, found in pending:
            found = [(c, v) for c, v in found if c.content not in said]
            said.update(c.content for c, _ in found)
            if not found:
                continue
            memories_reconcile(
                owner=locked.owner, candidates=[c for c, _ in found], project=locked.project,
                reason=f"document {locked.pk} chunk {chunk.chunk_index}",
                source_ref={"document_id": str(locked.pk), "chunk_id": str(chunk.pk),
                            "chunk_index": chunk.chunk_index},
                source=Memory.Source.DOCUMENT, vectors=[v for _, v in found], frames=statement_frames,
            )
        locked.chunks_done = Chunk.objects.filter(document=locked, embedding__isnull=False).count()
        locked.save(update_fields=["chunks_done", "updated_at"])
        return locked.chunks_done


def _next_batch(document: Document, after: int, limit: int) -> list[Chunk]:
    return list(
        Chunk.objects.filter(document=document, embedding__isnull=True, chunk_index__gt=after)
        .defer("embedding", "search_vector").order_by("chunk_index")[:limit]
    )


def _finish(document: Document) -> Document:
    with transaction.atomic():
        locked = Document.objects.select_for_update().filter(pk=document.pk).first()
        if locked is None or locked.processing_status != Document.Status.PROCESSING:
            raise _Stop
        if not _chunks_ready(locked) or Chunk.objects.filter(document=locked, embedding__isnull=True).exists():
            raise _Stop  # not ours to finish (replaced meanwhile)
        locked.processing_status = Document.Status.COMPLETED
        locked.chunks_done = locked.chunks_total
        locked.processed_at = timezone.now()
        locked.error_message = ""
        locked.save()
        services.dispatch_on_commit(locked.owner_id)
        events.emit(events.DOCUMENT_PROCESSED, owner_id=locked.owner_id, payload=services.document_payload(locked))
    return locked


def _call_size(left: int) -> int:
    """Chunks of the next embedding call when `left` remain in a task's share: full calls, and a small last one,
    because the last call's writes overlap no embedding (256 chunks' writes take ~2 s, 32 chunks' ~0.3 s)."""
    if left <= batch_size():
        return left
    return min(embed_batch_size(), left - batch_size())


def document_process(*, document_id, max_chunks: int | None = None) -> Document | None:
    """Run (or resume) the pipeline for one document; see the module docstring. With `max_chunks`, stop once
    that many chunks are done and leave the document `processing` (the task queues it again). Returns the
    document as it stands afterwards (None when it was deleted). Transient failures (embedding provider, LLM
    endpoint, database) propagate for the task to retry; an unreadable file marks the document failed. A
    document another worker is processing is left to it."""
    with claim(ClaimKind.DOCUMENT, document_id) as mine:
        if not mine:
            return Document.objects.filter(pk=document_id).first()
        return _process(document_id, max_chunks)


def _process(document_id, max_chunks: int | None) -> Document | None:
    document = _start(document_id)
    if document is None:
        return Document.objects.filter(pk=document_id).first()
    share = Share(document.pk, sliced=max_chunks is not None)
    try:
        if not _chunks_ready(document):
            try:
                limits = dataclasses.replace(services.limits(), deadline=share.deadline)
                parsed = parsing.parse(read_file(document), kind_of(document), limits)
            except parsing.UnsupportedFileType as exc:
                raise parsing.ParseError(str(exc)) from exc
            specs = chunking.chunk_blocks(parsed.blocks, deadline=share.deadline,
                                          max_chunks=settings.DOCUMENT_MAX_CHUNKS)
            if not specs:
                raise parsing.ParseError("The file contains no text to index.")
            document = _store_chunks(document, parsed, specs)
        use_llm = llm.llm_configured()
        size = batch_size()
        left = max_chunks if max_chunks is not None else document.chunks_total
        first = share.sized(size if document.chunks_done == 0 or max_chunks is None else _call_size(left))

        def following(_group, prepared) -> list[Chunk] | None:
            nonlocal left
            group = prepared[0]  # the chunks the call managed within the share's time
            left -= len(group)
            if left <= 0 or share.over():
                return None
            return _next_batch(document, group[-1].chunk_index, share.sized(
                embed_batch_size() if max_chunks is None else _call_size(left))) or None

        group = _next_batch(document, -1, min(first, left))  # a small first call: progress shows early
        with ahead_until(lambda chunks: _prepare(document, chunks, use_llm, share), group or None,
                         following) as prepared:
            for _, (group, vectors, candidates, candidate_vectors) in prepared:
                for start in range(0, len(group), size):
                    share.deadline.check()  # over the hard budget, or deleted / reprocessed meanwhile
                    part = slice(start, start + size)
                    _store_batch(document, group[part], vectors[part], candidates[part], candidate_vectors[part])
                    batch_done(document, group[part])
        if (left <= 0 or share.over()) and _next_batch(document, -1, 1):
            return Document.objects.filter(pk=document.pk).first()  # this task's share is done; more to do
        return _finish(document)
    except (parsing.ParseError, ExtractionFailed) as exc:
        return services.document_mark_failed(document_id=document.pk, error=str(exc))
    except SoftTimeLimitExceeded:
        return services.document_mark_failed(document_id=document.pk, error=parsing.WorkBudgetExceeded(
            f"Processing this document took longer than the {settings.DOCUMENT_WORK_SECONDS:g} seconds one task "
            "may take; split it into smaller documents.").args[0])
    except (_Stop, parsing.Cancelled):
        return Document.objects.filter(pk=document.pk).first()


def document_process_share(*, document_id) -> Document | None:
    """One task's share of a document: up to DOCUMENT_TASK_CHUNKS chunks; if more is left, the document is
    queued again, behind the work other users queued meanwhile."""
    document = document_process(document_id=document_id, max_chunks=task_chunks())
    if document is not None and document.processing_status == Document.Status.PROCESSING:
        tasks.process_document.delay(str(document.pk))
    return document


def batch_done(document: Document, chunks: list[Chunk]) -> None:
    """Called after each committed batch (a seam for tests and progress hooks)."""


# a pending document's task may be waiting behind a long queue: sent again only after this long (or when a
# worker starts)
PENDING_STALE_SECONDS = 600


def documents_requeue_stale(*, older_than_seconds: int | None = None) -> int:
    """Periodic, and at every worker's start: the database, not the broker, records what is left to do. A
    document in the queue that nobody is processing (no claim: its worker died, the broker lost the task) is sent
    again once it has made no progress for DOCUMENT_STALE_SECONDS (processing) or PENDING_STALE_SECONDS (pending:
    its task may be waiting behind a long queue), or at once when a worker starts (`older_than_seconds=0`: a
    worker killed outright took the tasks it held along); it is stamped so that the next sweep does not send it
    once more. A live worker's document is never sent again, however slow its progress. An owner whose documents
    wait with none of theirs in the queue (the dispatch was lost) gets the next one sent. Returns how many were
    sent."""
    now = timezone.now()
    if older_than_seconds is None:
        processing_cutoff = now - timedelta(seconds=settings.DOCUMENT_STALE_SECONDS)
        pending_cutoff = now - timedelta(seconds=max(PENDING_STALE_SECONDS, settings.DOCUMENT_STALE_SECONDS))
    else:
        processing_cutoff = pending_cutoff = now - timedelta(seconds=older_than_seconds)
    return requeue_stale(
        Document.objects.filter(processing_status__in=services.UNFINISHED),
        Q(processing_status=Document.Status.PROCESSING, updated_at__lte=processing_cutoff,
          queued_at__lte=processing_cutoff)
        | Q(processing_status=Document.Status.PENDING, updated_at__lte=pending_cutoff, queued_at__lte=pending_cutoff),
        kind=ClaimKind.DOCUMENT, send=tasks.process_document.delay,
        dispatch=lambda owner_id: services.documents_dispatch(owner_id=owner_id), now=now)
