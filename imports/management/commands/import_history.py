"""`manage.py import_history FILE --user NAME [--format auto|chatgpt|claude|mem0|langgraph|jsonl] [--skip-bad]`:
import an export for a user here, with a progress bar (the same checks and writes as `POST /api/imports/`; the
items are written by this process, a share at a time, and the pipeline embeds and extracts them in the worker).
A LangGraph PostgresStore is read directly with `--format langgraph FILE=postgresql://...` (a DSN)."""

from pathlib import Path

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError
from tqdm import tqdm

from imports import formats, processing, selectors, services
from imports.formats import langgraph


class Command(BaseCommand):
    help = "Import chat history or memories (ChatGPT, Claude, Mem0, LangGraph store, JSON Lines) for a user."

    def add_arguments(self, parser):
        parser.add_argument("file", help="The export (conversations.json, an export zip, JSON, JSON Lines), or a "
                                         "PostgresStore DSN (postgresql://...) with --format langgraph.")
        parser.add_argument("--user", required=True, help="The username to import for.")
        parser.add_argument("--format", default="auto", choices=formats.FORMATS)
        parser.add_argument("--skip-bad", action="store_true", help="Skip bad items instead of refusing the file.")
        parser.add_argument("--no-progress", action="store_true", help="No progress bar.")

    def handle(self, *args, file, user, format, skip_bad, no_progress, **options):
        owner = get_user_model().objects.filter(username=user).first()
        if owner is None:
            raise CommandError(f"No user {user!r}.")
        try:
            parsed, raw_name = self._read(file, format, skip_bad)
            job = services.import_create(owner=owner, parsed=parsed, filename=raw_name, skip_bad=skip_bad)
        except ValidationError as exc:
            raise CommandError("\n".join(f"{field}: {message}" for field, messages in exc.message_dict.items()
                                         for message in messages)) from None
        except services.FileTooLarge as exc:
            raise CommandError(str(exc)) from None
        for problem in job.problems:
            self.stderr.write(f"skipped {formats.Problem.from_dict(problem)}")
        with tqdm(total=job.items_total, unit="item", disable=no_progress, file=self.stderr) as bar:
            job = processing.import_process(import_id=job.pk, progress=bar.update)
        summary = selectors.import_summary(job)
        counts = summary["counts"]
        self.stdout.write(
            f"Import {job.pk} {job.status}: {counts['conversations']} conversations ({counts['messages']} "
            f"messages), {counts['memories']} memories, {counts['duplicates']} already imported, "
            f"{counts['skipped']} bad items skipped.")

    def _read(self, file: str, format: str, skip_bad: bool):
        if file.startswith(("postgresql://", "postgres://")):
            if format not in ("auto", "langgraph"):
                raise CommandError("A database DSN is read as a LangGraph PostgresStore (--format langgraph).")
            try:
                parsed = langgraph.read_database(file, limit=settings.IMPORT_MAX_ITEMS)
            except Exception as exc:  # psycopg's errors, a missing `store` table: said plainly, no traceback
                raise CommandError(f"Could not read the LangGraph store: {exc}") from None
            if len(parsed.items) + len(parsed.problems) > settings.IMPORT_MAX_ITEMS:
                raise CommandError(f"The store holds more than {settings.IMPORT_MAX_ITEMS:,} items.")
            return services.check_parsed(parsed, skip_bad=skip_bad), "PostgresStore"
        path = Path(file)
        if not path.is_file():
            raise CommandError(f"No file {file}.")
        if path.stat().st_size > settings.IMPORT_MAX_BYTES:
            raise CommandError(f"{file} is larger than IMPORT_MAX_BYTES ({settings.IMPORT_MAX_BYTES:,} bytes).")
        return services.read_export(raw=path.read_bytes(), filename=path.name, format=format,
                                    skip_bad=skip_bad), path.name
