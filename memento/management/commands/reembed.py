"""`manage.py reembed`: embed what is pending or was embedded by another model.

Memories and document chunks whose embedding is missing (the provider was down when they were written) or whose
`embedding_model` is not `EMBEDDING_MODEL` (the model was changed) get a fresh embedding, a batch at a time;
`--all` redoes every row. Memories get one history row each (action EMBED); chunks are not versioned. Rows are
walked in primary-key order (keyset pagination), so a long run neither skips nor repeats rows while others write.
Interrupted runs just continue where they stopped: only stale rows are picked up again.
"""

from collections.abc import Iterator

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError
from django.db import models, transaction
from django.db.models import Q
from tqdm import tqdm

from documents.models import Chunk
from integrations import embeddings
from memories.batch import memory_reembed_batch
from memories.models import Memory


class _ProgressStream:
    """tqdm writes carriage-return updates; Django's OutputWrapper would add a newline to each."""

    def __init__(self, wrapper):
        self.wrapper = wrapper

    def write(self, text: str) -> None:
        self.wrapper.write(text, ending="")

    def flush(self) -> None:
        self.wrapper.flush()


def keyset_batches(queryset: models.QuerySet, size: int) -> Iterator[list]:
    """`queryset` in primary-key order, `size` rows at a time, each page starting after the last key seen."""
    last = None
    while True:
        page = queryset.order_by("pk")
        if last is not None:
            page = page.filter(pk__gt=last)
        rows = list(page[:size])
        if not rows:
            return
        yield rows
        last = rows[-1].pk


class Command(BaseCommand):
    help = (
        "Re-embed memories and document chunks whose embedding is missing or was made by another model than "
        "EMBEDDING_MODEL (--all: every row)."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument("--batch-size", type=int, default=256, help="Rows per embedding call and transaction.")
        parser.add_argument("--all", action="store_true", help="Re-embed every row, not only stale ones.")
        parser.add_argument("--dry-run", action="store_true", help="Only count what would be re-embedded.")

    def handle(self, *args, **options) -> None:
        batch_size = options["batch_size"]
        if batch_size < 1:
            raise CommandError("--batch-size must be at least 1.")
        model_name = settings.EMBEDDING_MODEL
        stale = Q() if options["all"] else Q(embedding__isnull=True) | ~Q(embedding_model=model_name)
        memories = Memory.objects.filter(stale, indexed=True).only("id", "content")  # index=False: never
        chunks = Chunk.objects.filter(stale).only("id", "content")
        if options["dry_run"]:
            self.stdout.write(
                f"Would re-embed {memories.count()} memories and {chunks.count()} chunks with {model_name} "
                f"(dry run: nothing changed)."
            )
            return

        self.done = {"memories": 0, "chunks": 0}
        show = options["verbosity"] > 0
        try:
            self._run("memories", memories, batch_size, show, self._memories)
            self._run("chunks", chunks, batch_size, show, self._chunks)
        except embeddings.EmbeddingError as exc:
            raise CommandError(
                f"The embedding provider failed after {self.done['memories']} memories and {self.done['chunks']} "
                f"chunks: {exc}. Run the command again to continue where it stopped."
            ) from exc
        self.stdout.write(
            f"Re-embedded {self.done['memories']} memories and {self.done['chunks']} chunks with {model_name}."
        )

    def _run(self, label: str, queryset, batch_size: int, show: bool, reembed) -> None:
        total = queryset.count()
        if not total:
            return
        with tqdm(total=total, desc=label, unit=" rows", file=_ProgressStream(self.stderr), disable=not show) as bar:
            for rows in keyset_batches(queryset, batch_size):
                self.done[label] += reembed(rows)
                bar.update(len(rows))

    @staticmethod
    def _memories(rows: list[Memory]) -> int:
        return memory_reembed_batch(memories=rows, reason=f"re-embedded with {settings.EMBEDDING_MODEL}")

    @staticmethod
    def _chunks(rows: list[Chunk]) -> int:
        vectors = embeddings.embed_texts([chunk.content for chunk in rows])
        for chunk, vector in zip(rows, vectors, strict=True):
            chunk.embedding = vector
            chunk.embedding_model = settings.EMBEDDING_MODEL
        with transaction.atomic():
            return Chunk.objects.bulk_update(rows, ["embedding", "embedding_model"])
