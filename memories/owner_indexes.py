"""Large owners' own HNSW indexes: a partial index per owner (`WHERE owner_id = <id>`) over the same expression and
with the same parameters as the shared one (memories.models.hnsw_index), so their nearest vectors come from an
unfiltered scan of their rows alone instead of a filtered scan of everyone's (memories.search.paths).

An owner gets one at SEARCH_OWNER_INDEX_MIN_MEMORIES memories (the largest SEARCH_OWNER_INDEX_MAX owners), unless
it holds more than OWN_INDEX_MAX_SHARE of the table (then the shared index is nearly its own already, and a second
graph would only double the cost of its writes). An index is dropped when its owner falls below half the minimum
or out of the largest (the half: an owner around the line is not rebuilt and dropped by turns), or is gone.

`owner_indexes_sync` is run by the periodic task memories.tasks.sync_owner_indexes and by `manage.py
owner_indexes --sync`; `owner_indexes_status` is what `manage.py owner_indexes` prints. Indexes are made and dropped
CONCURRENTLY (writes to the table go on meanwhile), which PostgreSQL refuses inside a transaction: the DDL runs in
autocommit, one statement per index, and the work is serialised by a session advisory lock instead."""

import logging
from dataclasses import dataclass

from django.conf import settings
from django.db import connection
from django.db.models import Q

from core.claims import ClaimKind, claim
from memories.models import Memory, hnsw_index
from memories.search.paths import OWNER_INDEX_PREFIX, owner_index_name, owner_of_index

logger = logging.getLogger(__name__)

# above this share of the table the shared index serves the owner nearly as its own would (a filtered scan visits
# about k / share entries: 200 for 100 rows at one half)
OWN_INDEX_MAX_SHARE = 0.5


@dataclass(frozen=True)
class OwnerIndex:
    """One owner's index as the sync sees it."""

    owner_id: int
    memories: int  # the owner's rows now (0: gone)
    name: str
    state: str  # "ready", "invalid" (a build that failed or is under way), "missing" (wanted, not there)
    wanted: bool  # the owner qualifies (see the module's docstring)
    size_bytes: int = 0

    @property
    def action(self) -> str:
        """What a sync does: "create", "rebuild" (invalid), "drop" or "" (nothing)."""
        if self.wanted:
            return {"missing": "create", "invalid": "rebuild"}.get(self.state, "")
        return "drop" if self.state != "missing" else ""


def _owner_index(owner_id: int) -> object:
    return hnsw_index(owner_index_name(owner_id), condition=Q(owner_id=owner_id))


def owner_indexes_status() -> list[OwnerIndex]:
    """Every owner index there is or should be, largest owner first (reads only; row-level security bypassed, as
    workers and commands run)."""
    minimum = settings.SEARCH_OWNER_INDEX_MIN_MEMORIES
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT c.relname, x.indisvalid AND x.indisready, pg_relation_size(c.oid) FROM pg_index x "
            "JOIN pg_class c ON c.oid = x.indexrelid WHERE x.indrelid = 'memories_memory'::regclass "
            "AND c.relname LIKE %s",
            [OWNER_INDEX_PREFIX.replace("_", r"\_") + "%"],
        )
        existing = {owner_of_index(name): (name, valid, size) for name, valid, size in cursor.fetchall()
                    if owner_of_index(name) is not None}
        # every owner's count (one pass over the owner B-tree, ~0.1 s at 1M rows): the table's size with them
        cursor.execute("SELECT owner_id, count(*) FROM memories_memory GROUP BY owner_id "
                       "ORDER BY count(*) DESC, owner_id")
        every = cursor.fetchall()
    table = sum(n for _, n in every)
    # owners at half the minimum or more: those that may keep an index, and those that may get one
    counts = [(owner, n) for owner, n in every if n >= minimum / 2]
    ranked = [owner for owner, n in counts if n <= OWN_INDEX_MAX_SHARE * table][:settings.SEARCH_OWNER_INDEX_MAX]
    largest = set(ranked)
    found = []
    for owner_id, n in counts:
        keeps = owner_id in existing and owner_id in largest
        wanted = keeps or (owner_id in largest and n >= minimum)
        if owner_id in existing or wanted:
            name, valid, size = existing.get(owner_id, (owner_index_name(owner_id), None, 0))
            state = "missing" if valid is None else ("ready" if valid else "invalid")
            found.append(OwnerIndex(owner_id, n, name, state, wanted, size))
    listed = {entry.owner_id for entry in found}
    for owner_id, (name, valid, size) in existing.items():  # owners below half the minimum, or gone
        if owner_id not in listed:
            found.append(OwnerIndex(owner_id, dict(every).get(owner_id, 0), name,
                                    "ready" if valid else "invalid", False, size))
    return found


def owner_indexes_sync(*, dry_run: bool = False, builds: int | None = None) -> list[OwnerIndex]:
    """Drop the owner indexes no longer wanted, then create the missing ones and rebuild invalid ones, largest
    owner first, at most `builds` of them (None: all); returns the entries acted on (or that would be, with
    `dry_run`). Returns [] at once when another sync is running. A build takes about a second per thousand rows
    on two cores (the 1M bench's heavy user, 50,000 rows: ~1 minute); the periodic task builds one per run and
    queues itself again, so that the worker takes turns with other work."""
    with claim(ClaimKind.OWNER_INDEXES, "owner-indexes") as mine:
        if not mine:
            logger.info("owner index sync skipped: another one is running")
            return []
        entries = [entry for entry in owner_indexes_status() if entry.action]
        drops = [entry for entry in entries if entry.action == "drop"]
        made = [entry for entry in entries if entry.action != "drop"][:builds]
        if dry_run:
            return drops + made
        with connection.schema_editor(atomic=False) as editor:
            for entry in drops + made:
                index = _owner_index(entry.owner_id)
                if entry.action in ("drop", "rebuild"):
                    # an invalid index (a failed or killed build) is not used by the planner but still updated by
                    # every write: it goes before it is made again
                    editor.remove_index(Memory, index, concurrently=True)
                if entry.action in ("create", "rebuild"):
                    editor.add_index(Memory, index, concurrently=True)
                logger.info("owner index %s: %s (%d memories)", entry.name, entry.action, entry.memories)
        return drops + made


def owner_indexes_pending() -> int:
    """How many owner indexes a sync would still create or rebuild."""
    return sum(1 for entry in owner_indexes_status() if entry.action in ("create", "rebuild"))
