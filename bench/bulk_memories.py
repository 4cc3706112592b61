"""Bulk load of benchmark memories with binary COPY, indexes built after the load (bench/search_latency.py).

Creating a million memories through the service costs hours here (an HNSW insert is ~2.5-4 ms a row, plus a
history row each); COPY into a table without its secondary indexes takes minutes, and building each index once
over the loaded rows is far cheaper than maintaining it row by row (notes: HNSW ~10 min per 1M rows).

What stays identical to the migrations' schema: the indexes are dropped and re-created from their own
definitions (`pg_get_indexdef`, read just before the drop), and all of it (the drop, the COPY, the builds, and
row-level security forced again) is one transaction, so a run that fails leaves the table as it was. The
primary key stays (other tables' foreign keys need it). Every column the app expects of a row gets what the
model would give it (`Memory`'s own defaults); `search_vector` is a stored generated column PostgreSQL fills.
History rows are not written: searches never read them.

Row-level security is FORCEd on the table (migration memories 0002), and PostgreSQL refuses COPY FROM into a
table whose policies apply to the caller; the table's owner (the maintenance role, which this bench runs as)
lifts FORCE for the length of the load's transaction and restores it before the commit."""

import struct
import sys
import threading
import time
import uuid
from datetime import timedelta

import numpy as np

from bench.common import progress

TABLE = "memories_memory"
BYTEA_OID = 17
CHUNK = 20_000
INDEX_MAINTENANCE_WORK_MEM = "2GB"  # the 1M-row HNSW graph (~1.1 GB as halfvec) is built in memory


def _vector_binary(rows: np.ndarray) -> list[bytes]:
    """pgvector's binary input (vector_recv): dimensions and an unused int16, then big-endian float4s."""
    header = struct.pack(">hh", rows.shape[1], 0)
    big_endian = rows.astype(">f4")
    return [header + row.tobytes() for row in big_endian]


def _columns(cursor) -> list[tuple[str, int]]:
    """(name, type oid) of every column COPY must fill: all but the generated ones."""
    cursor.execute(
        "SELECT attname, atttypid FROM pg_attribute WHERE attrelid = %s::regclass AND attnum > 0 "
        "AND NOT attisdropped AND attgenerated = '' ORDER BY attnum", [TABLE],
    )
    return cursor.fetchall()


def _secondary_indexes(cursor) -> list[tuple[str, str]]:
    """(name, definition) of the table's indexes that back no constraint (all but the primary key)."""
    cursor.execute(
        "SELECT i.relname, pg_get_indexdef(i.oid) FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid "
        "WHERE x.indrelid = %s::regclass AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = i.oid) "
        "ORDER BY i.relname", [TABLE],
    )
    return cursor.fetchall()


def _template_values(columns, owner_id: int) -> list:
    """A row as the model would store it, from the model's own defaults (one unsaved Memory)."""
    from django.db import connection

    from memories.models import Memory

    template = Memory(owner_id=owner_id, content="x")
    by_column = {f.column: f for f in Memory._meta.concrete_fields}
    return [by_column[name].get_db_prep_save(getattr(template, by_column[name].attname), connection)
            for name, _ in columns]


class _IndexProgress:
    """A bar fed by pg_stat_progress_create_index (from a connection of its own) while an index builds."""

    def __init__(self, database_url: str, name: str):
        self.url, self.name, self.stop = database_url, name, threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        import psycopg

        bar = progress(desc=f"index {self.name}", unit=" rows")
        with psycopg.connect(self.url, autocommit=True) as conn:
            while not self.stop.wait(2):
                row = conn.execute("SELECT phase, tuples_done, tuples_total FROM pg_stat_progress_create_index "
                                   "WHERE relid = %s::regclass", [TABLE]).fetchone()
                if row:
                    bar.set_postfix_str(row[0], refresh=False)
                    bar.total = row[2] or None
                    bar.n = row[1] or 0
                    bar.refresh()
        bar.close()

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.stop.set()
        self.thread.join()


def copy_load(*, owners: list[int], texts: list[str], base: np.ndarray, picks: np.ndarray, noise: float,
              rng: np.random.Generator, database_url: str) -> None:
    """Insert len(owners) memories: row i belongs to owners[i], its text is texts[i] and its vector the real
    embedding base[picks[i]] plus Gaussian noise of size `noise`, normalised (made chunk by chunk: a million
    384-d vectors at once would take gigabytes). Importance uniform in 0.2..0.9, created within the last year."""
    from django.conf import settings
    from django.db import connection, transaction
    from django.utils import timezone

    now = timezone.now()
    total = len(owners)
    with transaction.atomic(), connection.cursor() as cursor:
        columns = _columns(cursor)
        names = [name for name, _ in columns]
        template = _template_values(columns, owners[0])
        at = {name: i for i, name in enumerate(names)}
        indexes = _secondary_indexes(cursor)
        cursor.execute(f"ALTER TABLE {TABLE} NO FORCE ROW LEVEL SECURITY")
        # Django's foreign keys are DEFERRABLE INITIALLY DEFERRED: checked row by row during the COPY instead of
        # queued (a million queued checks per key) and pending, which CREATE INDEX refuses
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
        for name, _ in indexes:
            cursor.execute(f'DROP INDEX "{name}"')
        # vectors go as pre-encoded binary (psycopg has no binary dumper for pgvector's type oid)
        types = [BYTEA_OID if name == "embedding" else oid for name, oid in columns]
        bar = progress(total=total, desc="COPY memories", unit=" rows")
        started = time.perf_counter()
        with cursor.copy(f"COPY {TABLE} ({', '.join(names)}) FROM STDIN (FORMAT BINARY)") as copy:
            copy.set_types(types)
            for start in range(0, total, CHUNK):
                stop = min(start + CHUNK, total)
                vectors = base[picks[start:stop]] + rng.normal(0, noise, size=(stop - start, base.shape[1]))
                vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
                encoded = _vector_binary(vectors.astype(np.float32))
                importance = rng.uniform(0.2, 0.9, size=stop - start)
                age = rng.uniform(0, 365 * 86400, size=stop - start)
                for j, i in enumerate(range(start, stop)):
                    row = list(template)
                    created = now - timedelta(seconds=float(age[j]))
                    row[at["id"]] = uuid.uuid4()
                    row[at["key"]] = str(uuid.uuid4())
                    row[at["owner_id"]] = owners[i]
                    row[at["content"]] = texts[i]
                    row[at["embedding"]] = encoded[j]
                    row[at["embedding_model"]] = settings.EMBEDDING_MODEL
                    row[at["importance"]] = float(importance[j])
                    row[at["created_at"]] = row[at["updated_at"]] = created
                    copy.write_row(row)
                bar.update(stop - start)
        bar.close()
        print(f"COPY of {total} rows: {time.perf_counter() - started:.0f} s", file=sys.stderr)
        cursor.execute(f"SET LOCAL maintenance_work_mem = '{INDEX_MAINTENANCE_WORK_MEM}'")
        for name, definition in indexes:
            started = time.perf_counter()
            with _IndexProgress(database_url, name):
                cursor.execute(definition)
            print(f"index {name}: {time.perf_counter() - started:.0f} s", file=sys.stderr)
        cursor.execute(f"ALTER TABLE {TABLE} FORCE ROW LEVEL SECURITY")
    # as autovacuum leaves a table that has settled: statistics and the visibility map (index-only scans) set
    with connection.cursor() as cursor:
        cursor.execute(f"VACUUM (ANALYZE) {TABLE}")
