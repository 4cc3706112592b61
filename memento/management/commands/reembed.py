"""`manage.py reembed`: every vector (memories, conversation messages, document chunks, store fields) embedded
with EMBEDDING_MODEL, table by table, without downtime (memento.reembed): the new vectors are written beside the
old ones and each table switches when it has them all; pending rows (the provider was down) are embedded too.
`--all` redoes every row. Interrupted runs continue where they stopped."""

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError
from tqdm import tqdm

from integrations import embeddings
from memento import reembed


class _ProgressStream:
    """tqdm writes carriage-return updates; Django's OutputWrapper would add a newline to each."""

    def __init__(self, wrapper):
        self.wrapper = wrapper

    def write(self, text: str) -> None:
        self.wrapper.write(text, ending="")

    def flush(self) -> None:
        self.wrapper.flush()


class Command(BaseCommand):
    help = ("Embed every vector (memories, messages, document chunks, store fields) with EMBEDDING_MODEL, switching "
            "each table when it is complete (--all: every row, not only those of another model or pending).")

    def add_arguments(self, parser) -> None:
        parser.add_argument("--batch-size", type=int, default=256, help="Rows per embedding call.")
        parser.add_argument("--all", action="store_true", help="Re-embed every row, not only stale ones.")
        parser.add_argument("--dry-run", action="store_true", help="Only count what would be re-embedded.")

    def handle(self, *args, **options) -> None:
        if options["batch_size"] < 1:
            raise CommandError("--batch-size must be at least 1.")
        model = settings.EMBEDDING_MODEL
        if options["dry_run"]:
            counts = ", ".join(f"{reembed.stale_count(table, model, options['all'])} {table.space}"
                               for table in reembed.TABLES)
            self.stdout.write(f"Would re-embed {counts} with {model} (dry run: nothing changed).")
            return
        show = options["verbosity"] > 0
        bars = {}

        def begin(table, total):
            bars[table.space] = tqdm(total=total, desc=table.space, unit=" rows", file=_ProgressStream(self.stderr),
                                     disable=not show)

        try:
            done = reembed.reembed_all(batch_size=options["batch_size"], everything=options["all"], begin=begin,
                                       advance=lambda table, n: bars[table.space].update(n))
        except reembed.ReembedBusy as exc:
            raise CommandError(str(exc)) from exc
        except embeddings.EmbeddingError as exc:
            raise CommandError(f"The embedding provider failed: {exc}. Run the command again to continue where "
                               f"it stopped.") from exc
        finally:
            for bar in bars.values():
                bar.close()
        counts = ", ".join(f"{count} {space}" for space, count in done.items())
        self.stdout.write(f"Re-embedded {counts} with {model}; every table now uses it.")
