"""Small owners' search in the web process: each owner's filtered rows held in memory, as arrays, while the owner's
memory stamp (memories.models.MemoryStamp) is the one they were read at.

An owner with up to SEARCH_EXACT_MAX_MEMORIES memories is searched by an exact scan anyway; what a search cost
there was the statement (planning the filtered row source four times, reading 600 vectors out of line) and the
round trips, not the arithmetic (600 cosines and BM25 over a few hundred rows take well under a millisecond in
numpy). So the rows are read once, and each search asks the database only for the query's words and the owner's
stamp, in one round trip. The snapshot gives what `sql.candidates` and `ranking.with_context` give for the same
rows: the same halfvec cosines, the same BM25 (memories.search.formula's, float8 arithmetic, the same N, the same top
k per signal), the same neighbours; tests/memories/search/test_snapshot.py holds the two side by side.

The rows are read as the user (row-level security on), through the same compiled row source as the SQL path, so
a snapshot holds nothing the user could not read. It is current while:
- the stamp is unchanged: every insert, delete or update of a memory but for `accessed_at` takes a new stamp
  (a trigger), and a stamp is never reused;
- no row it holds has expired: `expires_at` and TTL deadlines are read with the rows, and the earliest one ends
  the snapshot (a read since may have pushed a TTL later: then it is only read again sooner than needed).

After a change, only the rows stamped since the snapshot's stamp are read (each row carries the stamp of its last
change) and patched in; the owner's row count and the sum of their stamps, read in the same statement, must then
equal the snapshot's. A delete, or rows it saw in a transaction that rolled back, make them differ: then every row
is read again. Owners who write between their searches (an agent storing what it learns) keep their snapshot, and
a patch touches only the changed rows' entries (new rows go at the end, edited ones stay where they are); a row
leaving the filtered set or moving in the order has the arrays built again from what is held.

This module is the process's cache of snapshots; snapshot_search.py holds a snapshot and searches it,
snapshot_rows.py reads, builds and patches one.
"""

import threading
import time
from collections import OrderedDict

from django.conf import settings

from memories.search.snapshot_rows import FIELDS, read
from memories.search.snapshot_search import Snapshot
from memories.search.sql import MAX_QUERY_LEXEMES, QUERY_LEXEMES

__all__ = ["FIELDS", "Snapshot", "SnapshotCache", "snapshots", "start"]

MAX_TRACKED = 10_000  # owners whose misses are counted (then the count starts again)


def start(cursor, owner_id: int, query: str, unweighted: str = "") -> tuple[list[str], int | None]:
    """One round trip: the query's distinct stemmed words but those of `unweighted` (as `sql.search_start`) and the
    owner's memory stamp."""
    cursor.execute(f"SELECT {QUERY_LEXEMES}, (SELECT stamp FROM memories_memorystamp WHERE owner_id = %s)",
                   [query, unweighted, owner_id])
    lexemes, stamp = cursor.fetchone()
    return lexemes[:MAX_QUERY_LEXEMES], stamp


class SnapshotCache:
    """The process's snapshots by (owner, filters), least recently used out first, at most SEARCH_SNAPSHOT_ROWS
    rows in all (a row is ~2.1 kB: its half-precision vector, words and bookkeeping). Web threads share it.

    Reading all of an owner's rows costs several SQL searches (a few hundred rows: 5-8 ms of this process's CPU),
    so the searches that find no snapshot go the SQL way until the SEARCH_SNAPSHOT_AFTER-th, which reads the rows:
    an owner who searches once in a while costs what the SQL path costs. A held snapshot that is out of date reads
    only the rows changed since."""

    def __init__(self):
        self._lock = threading.Lock()
        self._snapshots: OrderedDict[tuple, Snapshot] = OrderedDict()
        self._rows = 0
        self._misses: dict[tuple, int] = {}  # searches that found no current snapshot since the last read

    def get(self, cursor, key: tuple, owner_id: int, rows: tuple[str, tuple], stamp: int, *,
            model: str = "") -> Snapshot | None:
        """The current snapshot for `key` (which names `model`: its vectors are of that model only): the one held,
        the one held with the rows changed since patched in, or all rows read now if it is this search's turn to
        read them; else None."""
        with self._lock:
            held = self._snapshots.get(key)
            if held is not None and time.time() >= held.valid_until:
                held = None  # a row expired: only reading them all again drops it
            if held is not None and held.stamp == stamp:
                self._snapshots.move_to_end(key)
                return held
            if held is None:
                misses = self._misses.pop(key, 0) + 1
                if misses < settings.SEARCH_SNAPSHOT_AFTER:
                    if len(self._misses) >= MAX_TRACKED:
                        self._misses.clear()
                    self._misses[key] = misses
                    return None
        snapshot = read(cursor, owner_id, rows, held, model=model) if held is not None else None
        if snapshot is None:
            snapshot = read(cursor, owner_id, rows, model=model)
            if snapshot is None:
                return None
        with self._lock:
            old = self._snapshots.pop(key, None)
            self._rows -= len(old.ids) if old is not None else 0
            self._snapshots[key] = snapshot
            self._rows += len(snapshot.ids)
            while self._rows > settings.SEARCH_SNAPSHOT_ROWS and len(self._snapshots) > 1:
                _, evicted = self._snapshots.popitem(last=False)
                self._rows -= len(evicted.ids)
        return snapshot

    def clear(self) -> None:
        with self._lock:
            self._snapshots.clear()
            self._misses.clear()
            self._rows = 0


snapshots = SnapshotCache()
