"""Writes to documents and chunks: upload, reprocess, delete (erasure) and marking a document failed. The
processing pipeline (parse -> chunk -> embed -> extract memories) is in `documents.processing`; processing is
queued on commit (`documents.tasks`)."""

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.files.storage import default_storage
from django.db import transaction
from django.utils import timezone

from core import events
from core.turns import dispatch_next
from documents import parsing, tasks
from documents.models import Chunk, Document
from memories import services as memory_services
from memories.models import Memory

# Reasons stay short enough to read in a history list; each names the document's id (erasure looks for it).
REASON_MAX = 100


def max_bytes() -> int:
    return settings.DOCUMENT_MAX_BYTES


class FileTooLarge(Exception):
    """The upload is over DOCUMENT_MAX_BYTES, or a DOCX unpacks to too much (HTTP 413)."""


UnsupportedFileType = parsing.UnsupportedFileType  # HTTP 415


def limits() -> parsing.Limits:
    """What reading one document may cost (DOCUMENT_MAX_UNPACKED_BYTES, DOCUMENT_MAX_TEXT_CHARS)."""
    return parsing.Limits(unpacked_bytes=settings.DOCUMENT_MAX_UNPACKED_BYTES,
                          text_chars=settings.DOCUMENT_MAX_TEXT_CHARS)


def check_size(size: int | None) -> None:
    """Empty -> ValidationError (400); over the limit -> FileTooLarge (413)."""
    if not size:
        raise ValidationError({"file": ["The file is empty."]})
    if size > max_bytes():
        raise FileTooLarge(
            f"The file is {parsing.human_size(size)}; the limit is {parsing.human_size(max_bytes())}.")


# --- upload, reprocess, delete --------------------------------------------------------------------------------


UNFINISHED = (Document.Status.PENDING, Document.Status.PROCESSING)


def dispatch_on_commit(owner_id) -> None:
    """Once the current transaction commits, give the worker the owner's next document if it has none of theirs."""
    transaction.on_commit(lambda: documents_dispatch(owner_id=owner_id))


def documents_dispatch(*, owner_id) -> Document | None:
    """Hand the owner's oldest waiting document to the worker, unless one of theirs is in the queue already: each
    owner has one document in the queue at a time, and each task does a bounded share of it before queueing it
    again behind everyone else's (documents.processing), so one user's big upload cannot hold up the others.
    Called when a document is uploaded, reprocessed, finished, failed or deleted, and by the periodic sweep
    (core.turns)."""
    return dispatch_next(Document.objects.filter(processing_status__in=UNFINISHED), owner_id=owner_id,
                         lock=f"documents:{owner_id}", send=tasks.process_document.delay)


def document_upload(*, owner, file, project=None, title: str = "") -> Document:
    """Store an uploaded file under a generated name and queue its processing. Checks, in order: size (empty:
    400, over DOCUMENT_MAX_BYTES: 413), project ownership, kind by extension and content (415), what a DOCX
    unpacks to (413: over DOCUMENT_MAX_UNPACKED_BYTES, or packed like a zip bomb)."""
    check_size(getattr(file, "size", None))
    if project is not None and project.owner_id != owner.pk:
        raise ValidationError({"project": ["Unknown project."]})
    filename = parsing.sanitize_filename(getattr(file, "name", "") or "")
    kind = parsing.detect_kind(filename, file)
    if kind == parsing.DOCX:
        try:
            parsing.check_archive(file, limits())
        except parsing.TooLarge as exc:
            raise FileTooLarge(str(exc)) from None
    document = Document(
        owner=owner, project=project, title=(title or "").strip()[:300], filename=filename,
        content_type=parsing.MIME_TYPES[kind], file_size=file.size,
    )
    file.seek(0)
    document.file.save(f"upload.{parsing.STORED_SUFFIX[kind]}", file, save=False)
    try:
        with transaction.atomic():
            document.full_clean()
            document.save()
            dispatch_on_commit(owner.pk)
    except Exception:
        default_storage.delete(document.file.name)
        raise
    return document


def document_reprocess(*, document: Document) -> Document:
    """Start over: the chunks go now; the memories derived from the old chunks are retired when the new chunks
    are written (one transaction), so reprocessing never leaves duplicates."""
    with transaction.atomic():
        locked = Document.objects.select_for_update().get(pk=document.pk)
        Chunk.objects.filter(document=locked).delete()
        locked.processing_status = Document.Status.PENDING
        locked.chunks_total = locked.chunks_done = 0
        locked.processed_at = locked.queued_at = None
        locked.error_message = ""
        locked.page_count = locked.word_count = None
        locked.save()
        dispatch_on_commit(locked.owner_id)
    return locked


def document_delete(*, document: Document, actor=None) -> None:
    """Delete a document, its chunks and its file. Memories derived only from it are soft-deleted, with the
    reason in their history; a derived memory another source has since confirmed stays (its source_ref records
    that the document is gone)."""
    with transaction.atomic():
        locked = Document.objects.select_for_update().filter(pk=document.pk).first()
        if locked is None:
            return
        retire_derived(locked, reason=_reason(f"document {locked.pk} deleted", str(locked)), actor=actor,
                        keep_confirmed_note=True)
        name = locked.file.name
        locked.delete()
        if name:
            transaction.on_commit(lambda: default_storage.delete(name))
        dispatch_on_commit(locked.owner_id)  # it may have been the owner's document in the queue


def _reason(text: str, name: str, limit: int = REASON_MAX) -> str:
    """`text (name)`, the name shortened to fit the history's reason column."""
    room = limit - len(text) - 3
    if room < 4:
        return text[:limit]
    return f"{text} ({name if len(name) <= room else name[: room - 1] + '…'})"


def derived_memories(document: Document):
    """The live memories derived from the document (source_ref names it)."""
    return Memory.objects.owned_by(document.owner_id).filter(
        source_ref__document_id=str(document.pk), is_active=True
    )


def retire_derived(document: Document, *, reason: str, actor=None, keep_confirmed_note: bool = False) -> int:
    """Soft-delete the live memories derived only from `document`. A memory that a later extraction from another
    source found again (a NOOP in its history whose reason does not name this document) is kept."""
    memories = list(derived_memories(document).select_for_update().order_by("created_at", "pk"))
    if not memories:
        return 0
    confirmed = set(
        Memory.history.filter(id__in=[m.pk for m in memories], history_change_reason__contains=": NOOP (")
        .exclude(history_change_reason__contains=str(document.pk)).values_list("id", flat=True)
    )
    retired = 0
    for memory in memories:
        if memory.pk in confirmed:
            if keep_confirmed_note:
                ref = {k: v for k, v in memory.source_ref.items() if k not in ("chunk_id", "chunk_index")}
                memory_services.memory_update(
                    memory=memory, data={"source_ref": {**ref, "document_deleted": True}}, actor=actor,
                    reason=f"document {document.pk} deleted; kept: confirmed elsewhere",
                )
            continue
        memory_services.memory_soft_delete(memory=memory, actor=actor, reason=reason)
        retired += 1
    return retired


# --- failure -------------------------------------------------------------------------------------------------


def document_mark_failed(*, document_id, error: str) -> Document | None:
    """Record why processing stopped for good: a document still pending or processing ends `failed`, and the
    owner's next document goes to the worker."""
    with transaction.atomic():
        document = Document.objects.select_for_update().filter(pk=document_id).first()
        if document is None:
            return None
        if document.processing_status in UNFINISHED:
            document.processing_status = Document.Status.FAILED
            document.error_message = error[:2000]
            document.processed_at = timezone.now()
            document.save()
            dispatch_on_commit(document.owner_id)
            events.emit(events.DOCUMENT_FAILED, owner_id=document.owner_id, payload=document_payload(document))
    return document


def document_payload(document: Document) -> dict:
    """What a document event tells (core.events)."""
    return {"id": str(document.pk), "title": document.title, "status": document.processing_status,
            "chunks": document.chunks_total, "error": document.error_message,
            "project_id": document.project_id}
