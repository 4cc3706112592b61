"""`manage.py owner_indexes`: large owners' own HNSW indexes (memories.owner_indexes), one line per owner that has
or should have one: memories, index name, state (ready / invalid / missing), size, and what a sync would do.

    manage.py owner_indexes              # status only
    manage.py owner_indexes --sync       # drop, create and rebuild as the status says (all of it, now)
    manage.py owner_indexes --sync --dry-run
"""

from django.conf import settings
from django.core.management.base import BaseCommand

from memories.owner_indexes import owner_indexes_status, owner_indexes_sync


class Command(BaseCommand):
    help = "Show (and with --sync, make or drop) large owners' own HNSW indexes."

    def add_arguments(self, parser):
        parser.add_argument("--sync", action="store_true", help="create, rebuild and drop as needed")
        parser.add_argument("--dry-run", action="store_true", help="with --sync: say what would be done")

    def handle(self, *args, sync: bool, dry_run: bool, **options):
        if sync:
            done = owner_indexes_sync(dry_run=dry_run)
            verb = "would" if dry_run else "did"
            for entry in done:
                self.stdout.write(f"{verb} {entry.action} {entry.name} (owner {entry.owner_id}, "
                                  f"{entry.memories} memories)")
            if not done:
                self.stdout.write("nothing to do (or another sync is running)")
        entries = owner_indexes_status()
        self.stdout.write(f"owners with at least {settings.SEARCH_OWNER_INDEX_MIN_MEMORIES} memories get their own "
                          f"index (at most {settings.SEARCH_OWNER_INDEX_MAX}):")
        self.stdout.write(f"{'owner':>10} {'memories':>9}  {'state':8} {'size MB':>8}  {'next sync':10} index")
        for entry in entries:
            self.stdout.write(f"{entry.owner_id:>10} {entry.memories:>9}  {entry.state:8} "
                              f"{entry.size_bytes / 2**20:>8.1f}  {entry.action or '-':10} {entry.name}")
        if not entries:
            self.stdout.write("  (none)")
