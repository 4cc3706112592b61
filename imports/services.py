"""Writes of imports: upload (read and check the whole export, then store its items as the work list), dispatch
(one import per owner in the queue), marking one failed. Writing the items is `imports.processing`."""

import hashlib
import re

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from core.turns import dispatch_next
from imports import formats, tasks
from imports.models import Import, ImportItem

PROBLEMS_SHOWN = 50  # bad items named in one 400 (the count says how many more)
UNFINISHED = (Import.Status.PENDING, Import.Status.PROCESSING)


class FileTooLarge(Exception):
    """Over IMPORT_MAX_BYTES (HTTP 413)."""


def _filename(name: str) -> str:
    return re.sub(r"[^\w.\- ]+", "_", name.rsplit("/", 1)[-1].rsplit("\\", 1)[-1]).strip()[:255]


def read_export(*, raw: bytes, filename: str = "", format: str = "auto", skip_bad: bool = False) -> formats.Parsed:
    """The export's items, checked whole. Empty, unreadable, nothing to import, or (unless `skip_bad`) any bad
    item: ValidationError naming the file or each bad item's position and field."""
    if not raw:
        raise ValidationError({"file": ["The file is empty."]})
    if len(raw) > settings.IMPORT_MAX_BYTES:
        raise FileTooLarge(f"The file is {len(raw):,} bytes; the limit is {settings.IMPORT_MAX_BYTES:,}.")
    try:
        parsed = formats.read(raw, filename=filename, format=format)
    except formats.Unreadable as exc:
        raise ValidationError({"file": [str(exc)]}) from None
    return check_parsed(parsed, skip_bad=skip_bad)


def check_parsed(parsed: formats.Parsed, *, skip_bad: bool) -> formats.Parsed:
    if parsed.problems and not skip_bad:
        shown = [str(problem) for problem in parsed.problems[:PROBLEMS_SHOWN]]
        more = len(parsed.problems) - len(shown)
        if more:
            shown.append(f"... and {more} more bad {parsed.unit}s.")
        shown.append("Nothing was imported. Fix these, or import again skipping bad items (skip_bad).")
        raise ValidationError({"items": shown})
    if not parsed.items:
        raise ValidationError({"file": ["The export holds nothing to import."]})
    return parsed


def import_create(*, owner, parsed: formats.Parsed, filename: str = "", sha256: str = "",
                  skip_bad: bool = False) -> Import:
    """Store a checked export's items as an import's work list (one transaction) and queue it."""
    job = Import(owner=owner, format=parsed.format, filename=_filename(filename), file_sha256=sha256,
                 skip_bad=skip_bad, items_total=len(parsed.items),
                 problems=[problem.as_dict() for problem in parsed.problems][:1000])
    with transaction.atomic():
        job.full_clean()
        job.save()
        ImportItem.objects.bulk_create([
            ImportItem(job=job, owner=owner, position=position, kind=item["kind"],
                       fingerprint=formats.fingerprint(item), payload=item,
                       weight=max(1, len(item.get("messages", ()))))
            for position, item in parsed.items
        ], batch_size=500)
        dispatch_on_commit(owner.pk)
    return job


def import_upload(*, owner, raw: bytes, filename: str = "", format: str = "auto", skip_bad: bool = False) -> Import:
    """Read, check and store an uploaded export (see `read_export` and `import_create`)."""
    parsed = read_export(raw=raw, filename=filename, format=format, skip_bad=skip_bad)
    return import_create(owner=owner, parsed=parsed, filename=filename, sha256=hashlib.sha256(raw).hexdigest(),
                         skip_bad=skip_bad)


def dispatch_on_commit(owner_id) -> None:
    transaction.on_commit(lambda: imports_dispatch(owner_id=owner_id))


def imports_dispatch(*, owner_id) -> Import | None:
    """Hand the owner's oldest waiting import to the worker unless one of theirs is in the queue already (each
    task writes a share and queues the import again behind everyone else's work: documents do the same)."""
    return dispatch_next(Import.objects.filter(status__in=UNFINISHED), owner_id=owner_id,
                         lock=f"imports:{owner_id}", send=tasks.process_import.delay)


def import_mark_failed(*, import_id, error: str) -> Import | None:
    """Processing stopped for good: the import ends failed with the reason; the owner's next import goes on."""
    with transaction.atomic():
        job = Import.objects.select_for_update().filter(pk=import_id).first()
        if job is None:
            return None
        if job.status in UNFINISHED:
            job.status = Import.Status.FAILED
            job.error_message = error[:2000]
            job.finished_at = timezone.now()
            job.save()
            dispatch_on_commit(job.owner_id)
    return job
