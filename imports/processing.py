"""Writing an import's items, a share at a time, resumable and idempotent.

Each item is written in its own transaction together with its status (`done`, or `duplicate` when the owner
imported the same item before: same fingerprint), so a worker killed at any point leaves the import to be resumed
where it stopped, and importing the same file twice adds nothing. A conversation goes through the conversations
services (created, its messages appended with their original `sent_at`, then ended: the normal pipeline embeds
them and extracts memories); memories (Mem0, LangGraph store items) through `memory_batch_create`, embedded first,
outside the transaction, with their provenance (`source` import, `source_ref`: import, source, original id,
position) and original times.

A task writes about IMPORT_TASK_MESSAGES messages or memories, embeds the messages it wrote (large batches: an
import is searchable sooner than through one small embedding task per conversation), and queues the import again
behind the work queued meanwhile; each owner has one import in the queue (services.imports_dispatch). The task
holds the import's claim (core.claims) throughout; a second delivery returns at once, and the sweep sends an
unclaimed import that made no progress again."""

from collections.abc import Callable
from datetime import datetime, timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from conversations import processing as conversation_processing
from conversations import services as conversation_services
from conversations.models import Message
from conversations.services import messages_append
from core.claims import ClaimKind, claim, serialize
from core.turns import requeue_stale
from imports import formats, services, tasks
from imports.models import Import, ImportItem
from memories.batch import memory_batch_create
from memories.models import Memory
from memories.vectors import embed_indexed

APPEND_MAX = 500  # messages per messages_append call
MEMORY_GROUP = 200  # memories embedded and written together


def _when(value: str | None) -> datetime | None:
    return datetime.fromisoformat(value) if value else None


def _start(import_id) -> Import | None:
    with transaction.atomic():
        job = Import.objects.select_for_update(of=("self",)).select_related("owner").filter(pk=import_id).first()
        if job is None or job.status not in services.UNFINISHED:
            return None
        if job.status != Import.Status.PROCESSING:
            job.status = Import.Status.PROCESSING
            job.save(update_fields=["status", "updated_at"])
    return job


def _pending(job: Import, limit: int) -> list[ImportItem]:
    return list(job.items.filter(status=ImportItem.Status.PENDING).order_by("position")[:limit])


def _claim_item(job: Import, item: ImportItem) -> ImportItem | None:
    """Inside the item's transaction: the item locked, or None when it is no longer pending; an item the owner
    imported before is recorded as a duplicate here (None too). The owner's lock orders two imports' checks."""
    serialize(f"imports:{job.owner_id}:write")
    locked = ImportItem.objects.select_for_update().filter(pk=item.pk, status=ImportItem.Status.PENDING).first()
    if locked is None:
        return None
    seen = (ImportItem.objects.filter(owner_id=job.owner_id, fingerprint=locked.fingerprint,
                                      status=ImportItem.Status.DONE).exclude(pk=locked.pk).first())
    if seen is not None:
        locked.status = ImportItem.Status.DUPLICATE
        locked.result = {**seen.result, "duplicate_of": {"import": str(seen.job_id), "position": seen.position}}
        locked.save(update_fields=["status", "result"])
        return None
    return locked


def _write_conversation(job: Import, item: ImportItem) -> str | None:
    """Write one conversation; returns its id (None: nothing written, e.g. a duplicate)."""
    payload = item.payload
    with transaction.atomic():
        locked = _claim_item(job, item)
        if locked is None:
            return None
        provenance = {"import_id": str(job.pk), "source": payload["source"], "position": item.position,
                      "original_id": payload["original_id"], "created_at": payload["created_at"]}
        conversation = conversation_services.conversation_create(
            owner=job.owner, title=payload["title"], metadata={**payload["metadata"], "import": provenance},
        )
        messages = [{**m, "sent_at": _when(m["sent_at"])} for m in payload["messages"]]
        for start in range(0, len(messages), APPEND_MAX):
            messages_append(conversation=conversation, messages=messages[start:start + APPEND_MAX])
        conversation_services.conversation_end(conversation=conversation)
        locked.status = ImportItem.Status.DONE
        locked.written = len(messages)
        locked.result = {"conversation_id": str(conversation.pk)}
        locked.save(update_fields=["status", "written", "result"])
        Import.objects.filter(pk=job.pk).update(updated_at=timezone.now())
    return str(conversation.pk)


def _embed(conversation_ids: list[str]) -> None:
    """The written conversations' messages embedded here, in large batches (the model outside any transaction),
    rather than by the small tasks their appends queued, one per conversation (those then find nothing left to
    do and send extraction as usual): an import is searchable sooner. Provider down: the sweep embeds them."""
    if conversation_ids:
        ids = list(Message.objects.filter(conversation_id__in=conversation_ids, embedding__isnull=True)
                   .values_list("pk", flat=True))
        conversation_processing.messages_embed(message_ids=ids)


def _memory_fields(job: Import, item: ImportItem) -> dict:
    payload = item.payload
    created = _when(payload["created_at"])
    updated = _when(payload["updated_at"]) or created
    fields = {
        "content": payload["content"], "namespace": payload["namespace"], "key": payload["key"],
        "metadata": payload["metadata"], "tags": payload["tags"], "source": Memory.Source.IMPORT,
        "source_ref": {"import_id": str(job.pk), "source": payload["source"],
                       "original_id": payload["original_id"], "position": item.position},
        # a store item is never merged with a near-duplicate (as the store API puts it); a Mem0 memory may be
        "allow_duplicate": "value" in payload,
    }
    if "value" in payload:
        fields["value"] = payload["value"]
    if created is not None:
        fields.update(created_at=created, valid_from=created)
    if updated is not None:
        fields["updated_at"] = updated
    return fields


def _write_memories(job: Import, items: list[ImportItem]) -> None:
    fields = [_memory_fields(job, item) for item in items]
    vectors, _ = embed_indexed(fields)  # the model, before any lock (pending when the provider is down)
    with transaction.atomic():
        locked = [(_claim_item(job, item), item_fields, vector)
                  for item, item_fields, vector in zip(items, fields, vectors, strict=True)]
        fresh = [(item, item_fields, vector) for item, item_fields, vector in locked if item is not None]
        if fresh:
            writes = memory_batch_create(
                owner=job.owner, items=[f for _, f, _ in fresh], vectors=[v for _, _, v in fresh],
                reason=f"imported from {job.format} (import {job.pk})",
            )
            for (item, _, _), write in zip(fresh, writes, strict=True):
                item.status = ImportItem.Status.DONE
                item.written = 1 if write.outcome != "duplicate" else 0
                item.result = {"memory_id": str(write.memory.pk), "outcome": write.outcome}
            ImportItem.objects.bulk_update([item for item, _, _ in fresh], ["status", "written", "result"])
        Import.objects.filter(pk=job.pk).update(updated_at=timezone.now())


def _finish(job: Import) -> Import:
    with transaction.atomic():
        locked = Import.objects.select_for_update().get(pk=job.pk)
        if locked.status == Import.Status.PROCESSING and not locked.items.filter(
                status=ImportItem.Status.PENDING).exists():
            locked.status = Import.Status.COMPLETED
            locked.finished_at = timezone.now()
            locked.error_message = ""
            locked.save()
            services.dispatch_on_commit(locked.owner_id)
    return locked


def import_process(*, import_id, max_weight: int | None = None,
                   progress: Callable[[int], None] | None = None) -> Import | None:
    """Write (or resume writing) an import's pending items, in order; with `max_weight`, stop once about that many
    messages or memories were written and leave it `processing` (the task queues it again). `progress(n)` is
    told of every n items written (the command's progress bar). An import another worker holds is left to it."""
    with claim(ClaimKind.IMPORT, import_id) as mine:
        if not mine:
            return Import.objects.filter(pk=import_id).first()
        job = _start(import_id)
        if job is None:
            return Import.objects.filter(pk=import_id).first()
        weight, unembedded, unembedded_weight = 0, [], 0
        while max_weight is None or weight < max_weight:
            batch = _pending(job, MEMORY_GROUP)
            if not batch:
                _embed(unembedded)
                return _finish(job)
            if batch[0].kind == formats.CONVERSATION:
                group = batch[:1]
                written = _write_conversation(job, group[0])
                if written is not None:
                    unembedded.append(written)
                    unembedded_weight += group[0].weight
                else:  # a duplicate costs a lookup, not its messages' writes: it counts as one
                    weight -= group[0].weight - 1
                if unembedded_weight >= settings.IMPORT_TASK_MESSAGES:
                    _embed(unembedded)
                    unembedded, unembedded_weight = [], 0
            else:
                group = []
                for item in batch:
                    if item.kind != formats.MEMORY:
                        break
                    group.append(item)
                _write_memories(job, group)
            weight += sum(item.weight for item in group)
            if progress is not None:
                progress(len(group))
        _embed(unembedded)
        return Import.objects.get(pk=job.pk)


def import_process_share(*, import_id) -> Import | None:
    """One task's share; if more is left, the import is queued again behind the work others queued meanwhile."""
    job = import_process(import_id=import_id, max_weight=max(1, settings.IMPORT_TASK_MESSAGES))
    if job is not None and job.status == Import.Status.PROCESSING:
        tasks.process_import.delay(str(job.pk))
    return job


def imports_requeue_stale(*, older_than_seconds: int | None = None) -> int:
    """Periodic, and at a worker's start (`older_than_seconds=0`): an unfinished import in the queue that nobody
    holds and that made no progress for IMPORT_STALE_SECONDS is sent again (stamped, so that the next sweep does
    not send it once more); an owner whose imports wait with none in the queue gets the next one sent."""
    seconds = settings.IMPORT_STALE_SECONDS if older_than_seconds is None else older_than_seconds
    cutoff = timezone.now() - timedelta(seconds=seconds)
    return requeue_stale(Import.objects.filter(status__in=services.UNFINISHED),
                         Q(queued_at__lte=cutoff, updated_at__lte=cutoff), kind=ClaimKind.IMPORT,
                         send=tasks.process_import.delay,
                         dispatch=lambda owner_id: services.imports_dispatch(owner_id=owner_id))
