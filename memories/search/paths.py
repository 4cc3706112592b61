"""Which way a memory search (and the duplicate lookup of a write) reads an owner's nearest vectors, and the owner
figures that choice rests on.

Three ways:
- "exact": the owner's rows by their true distance (from the web process's snapshot, or a statement over the owner's
  B-tree). Its cost grows with the owner's rows.
- "own": the owner's own partial HNSW index (`WHERE owner_id = <id>`, made for large owners by
  memories.owner_indexes): an unfiltered scan of a graph of the owner's rows alone.
- "shared": the one HNSW index over every owner's rows, filtered to the owner. To find k of the owner's rows it
  visits about k / (the owner's share of the table) index entries, each a row visit to check its owner: ~2,000 for
  100 of a 5% owner's rows at 1M memories; for a 0.2% owner it stops at pgvector's `hnsw.max_scan_tuples` (20,000)
  and loses recall (BENCHMARKS.md, 1M).

So the boundary between exact and shared follows the owner's share of the table, not only a count: below
SEARCH_EXACT_MAX_SHARE the owner's rows are fewer than the entries the filtered scan would visit."""

import re
from dataclasses import dataclass

from django.conf import settings
from django.core.cache import cache

OWNER_INDEX_PREFIX = "memory_owner_hnsw_"
OWNER_INDEX_NAME = re.compile(rf"^{OWNER_INDEX_PREFIX}(\d+)$")
OWNER_FIGURES_CACHE_SECONDS = 60


def owner_index_name(owner_id: int) -> str:
    """The name of `owner_id`'s own partial HNSW index: derived from the id alone, so the search, the sync and
    anyone reading `\\di` agree on it without a registry."""
    return f"{OWNER_INDEX_PREFIX}{int(owner_id)}"


def owner_of_index(name: str) -> int | None:
    """The owner an index of that name is for (None: not an owner index)."""
    match = OWNER_INDEX_NAME.match(name)
    return int(match.group(1)) if match else None


@dataclass(frozen=True)
class OwnerFigures:
    total: int  # the owner's memories (all rows: what a filtered scan and the exact scan pay for)
    table: int  # memories in the table (the planner's estimate, pg_class.reltuples; at least `total`)
    own_index: bool  # the owner's own HNSW index exists and is valid (usable by the planner)


def owner_figures(cursor, owner_id: int) -> OwnerFigures:
    """The owner's figures, one round trip. The count is the one the owner's stamp row keeps (memories.models
    MemoryStamp, exact, maintained by the table's trigger): counting the rows cost ~17 ms for the 1M bench's heavy
    user of 50k, once a minute in every web process, inside a request. Only an owner without a stamp row (none of
    their memories ever written since migration 0014: none, as a rule) is counted. Figures are still reused for a
    minute (a round trip saved; a few more or fewer rows barely move an IDF or the choice of path): a new own index
    is taken up within a minute, and one dropped meanwhile only sends the statement to the shared index (the
    planner never uses an index that is gone or not valid)."""
    key = f"memories:owner-figures:{owner_id}"
    figures = cache.get(key)
    if figures is None:
        # COALESCE evaluates its second subquery only when the first is NULL: no stamp row
        cursor.execute(
            "SELECT coalesce((SELECT rows FROM memories_memorystamp WHERE owner_id = %s), "
            "(SELECT count(*) FROM memories_memory WHERE owner_id = %s)), "
            "(SELECT greatest(reltuples, 0)::bigint FROM pg_class WHERE oid = 'memories_memory'::regclass), "
            "EXISTS (SELECT 1 FROM pg_index WHERE indexrelid = to_regclass(%s) AND indisvalid AND indisready)",
            [owner_id, owner_id, owner_index_name(owner_id)],
        )
        total, table, own = cursor.fetchone()
        figures = OwnerFigures(total=total, table=max(table, total), own_index=own)
        cache.set(key, figures, OWNER_FIGURES_CACHE_SECONDS)
    return figures


def vector_path(figures: OwnerFigures) -> str:
    """"exact", "own" or "shared" (see the module's docstring) for an owner with these figures."""
    if figures.total <= settings.SEARCH_EXACT_MAX_MEMORIES:
        return "exact"
    if figures.own_index:
        return "own"
    if figures.total < settings.SEARCH_EXACT_MAX_SHARE * figures.table:
        return "exact"
    return "shared"
