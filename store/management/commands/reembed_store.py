"""`manage.py reembed_store`: the store's field vectors made by another model than EMBEDDING_MODEL (the model was
changed; run it beside `manage.py reembed`, which does memories and chunks) are embedded again from the items'
values, a batch of items at a time, in item order; `--all` redoes every item. An interrupted run continues where
it stopped: only stale items are picked up again."""

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from integrations import embeddings
from store.models import ItemVector
from store.services import StoreUnavailable, item_vectors_reembed


class Command(BaseCommand):
    help = "Re-embed the LangGraph store's field vectors made by another model than EMBEDDING_MODEL (--all: every one)."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--batch-size", type=int, default=100, help="Items per embedding call and transaction.")
        parser.add_argument("--all", action="store_true", help="Re-embed every item's fields, not only stale ones.")

    def handle(self, *args, **options) -> None:
        if options["batch_size"] < 1:
            raise CommandError("--batch-size must be at least 1.")
        rows = ItemVector.objects.all()
        if not options["all"]:
            rows = rows.exclude(embedding_model=settings.EMBEDDING_MODEL)
        done, last = 0, None
        try:
            while True:
                page = rows.order_by("memory_id").values_list("memory_id", flat=True).distinct()
                if last is not None:
                    page = page.filter(memory_id__gt=last)
                ids = list(page[: options["batch_size"]])
                if not ids:
                    break
                done += item_vectors_reembed(memory_ids=ids)
                last = ids[-1]
        except (StoreUnavailable, embeddings.EmbeddingError) as exc:
            raise CommandError(f"The embedding provider failed after {done} vectors: {exc}. Run the command "
                               f"again to continue where it stopped.") from exc
        self.stdout.write(f"Re-embedded {done} store field vectors with {settings.EMBEDDING_MODEL}.")
