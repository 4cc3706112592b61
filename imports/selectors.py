"""Reads of imports: what an import has written so far (progress and counts, from its items)."""

from django.db.models import Count, Q, Sum

from imports import formats
from imports.models import Import, ImportItem


def import_summary(job: Import) -> dict:
    """Progress (items done of total) and counts: conversations, messages and memories written, items that were
    already imported (duplicates), bad items skipped at upload."""
    done_status = Q(status=ImportItem.Status.DONE)
    figures = job.items.aggregate(
        done=Count("pk", filter=~Q(status=ImportItem.Status.PENDING)),
        conversations=Count("pk", filter=done_status & Q(kind=formats.CONVERSATION)),
        messages=Sum("written", filter=Q(kind=formats.CONVERSATION), default=0),
        memories=Sum("written", filter=Q(kind=formats.MEMORY), default=0),
        duplicates=Count("pk", filter=Q(status=ImportItem.Status.DUPLICATE)),
    )
    total = job.items_total
    done = figures.pop("done")
    percent = 100.0 if job.status == Import.Status.COMPLETED else (round(100.0 * done / total, 1) if total else 0.0)
    return {"progress": {"done": done, "total": total, "percent": percent},
            "counts": {**figures, "skipped": len(job.problems)}}
