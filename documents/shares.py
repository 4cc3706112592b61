"""What one document task may spend: a hard budget (DOCUMENT_WORK_SECONDS: past it the document fails, saying so)
checked between bounded steps together with whether the work is still wanted (the document deleted or
reprocessed), and a share of time (DOCUMENT_TASK_SECONDS: past it the task starts no new chunk and the document
goes to the back of the queue), with embedding calls sized to fit what is left of it."""

import time

from django.conf import settings

from documents import parsing
from documents.models import Document


class Share:
    """What one task may spend: `deadline` (DOCUMENT_WORK_SECONDS, the hard budget: past it the document fails,
    and it is cancelled when the document is deleted or reprocessed) and, for a share, DOCUMENT_TASK_SECONDS
    (past it the task starts no new chunk and the document goes to the back of the queue)."""

    def __init__(self, document_id, sliced: bool):
        self.deadline = parsing.Deadline(settings.DOCUMENT_WORK_SECONDS, cancelled=lambda: cancelled(document_id))
        self.ends = time.monotonic() + settings.DOCUMENT_TASK_SECONDS if sliced else None

    def over(self) -> bool:
        return self.ends is not None and time.monotonic() > self.ends

    def paced(self, seconds: float, chunks: int) -> None:
        global _pace
        if chunks:
            _pace = seconds / chunks

    def sized(self, chunks: int) -> int:
        """At most `chunks` for the next call, fewer when the share's time left fits fewer at the pace of the last
        call (an embedding call cannot stop half-way: 224 chunks took 50 s on a loaded machine), at least one."""
        if self.ends is None or _pace is None:
            return chunks
        return max(1, min(chunks, int((self.ends - time.monotonic()) / _pace)))


_pace: float | None = None  # seconds per chunk of this worker process's last call (extraction and embedding)


def cancelled(document_id) -> bool:
    """True when the run's work is no longer wanted: the document was deleted, or reprocessed (sent back to
    pending: while this run holds the document's claim nobody else sets it processing)."""
    return not Document.objects.filter(pk=document_id, processing_status=Document.Status.PROCESSING).exists()
