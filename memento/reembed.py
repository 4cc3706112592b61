"""Re-embedding every vector with EMBEDDING_MODEL without downtime: memories, conversation messages, document
chunks and the store's field vectors (it joins four apps, so it lives in the wiring floor).

Each table is switched on its own (memories.spaces, one `EmbeddingSpace` row a table, which is also the run's
status). While a table is switched its search keeps using its current model: the new model's vectors are written
beside the old ones (`embedding_next`), a batch at a time, in primary-key order, each batch embedded outside any
transaction; a row whose text changed meanwhile keeps none (its next vector would be of the old text). When every
row has one, one transaction, holding the table's switch lock (writers of vectors wait for it, readers do not),
moves them into `embedding`, records the new model as the table's, and makes any row still of the old model (written
since the pass) pending; the pass runs again for those. An interrupted run continues where it stopped: rows that
already have their next vector are not embedded again."""

import json
from collections.abc import Callable
from dataclasses import dataclass

from django.conf import settings
from django.db import connection, transaction
from django.db.models import F
from django.utils import timezone
from pgvector import Vector

from integrations import embeddings
from memories import spaces
from memories.models import EmbeddingSpace
from store.items import indexed_texts

# the passes a table gets at most: the first, then one for rows written while it ran (a busy table always has
# some; what the last switch leaves pending is embedded by the sweeps or the next run)
PASSES = 3


@dataclass(frozen=True)
class Table:
    """One embedded table: its space (and so its name), its key type, what is embedded of a row (SQL over alias `t`) and
    which rows are never embedded."""

    space: str
    key: str
    text: str
    never: str = "FALSE"

    @property
    def table(self) -> str:
        return spaces.TABLES[self.space]


TABLES = (
    Table(spaces.Name.MEMORIES, "uuid", "t.content", never="NOT t.indexed"),
    Table(spaces.Name.MESSAGES, "uuid",
          # as Message.embedding_text: the speaker's name first when there is one
          "CASE WHEN t.name <> '' THEN t.name || ': ' || t.content ELSE t.content END"),
    Table(spaces.Name.CHUNKS, "uuid", "t.content"),
    # a field's text is taken from the item's value in Python (store.items): the row's `field` and `path` stand in
    Table(spaces.Name.STORE, "bigint", "t.field || '|' || t.path"),
)


class ReembedBusy(Exception):
    """Another re-embedding holds the run lock."""


def _stale(table: Table, everything: bool) -> str:
    """The rows that need a vector of the target model (%s: the target)."""
    wanted = "TRUE" if everything else "(t.embedding IS NULL OR t.embedding_model <> %s)"
    return f"{wanted} AND NOT ({table.never}) AND t.embedding_next IS NULL"


def _params(everything: bool, target: str) -> list:
    return [] if everything else [target]


def stale_count(table: Table, target: str, everything: bool = False) -> int:
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT count(*) FROM {table.table} AS t WHERE {_stale(table, everything)}",
                       _params(everything, target))
        return cursor.fetchone()[0]


def _store_texts(rows: list[tuple]) -> list[tuple]:
    """(id, text, key text) of store field rows (id, 'field|path'): the text at that path of the item's value."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT v.id, v.field, v.path, m.value FROM store_itemvector AS v JOIN memories_memory AS m "
                       "ON m.id = v.memory_id WHERE v.id = ANY(%s)", [[row[0] for row in rows]])
        found = []
        for pk, field, path, value in cursor.fetchall():
            value = json.loads(value) if isinstance(value, str) else value  # Django reads jsonb as text
            texts = {p: text for _, p, text in indexed_texts(value or {}, [field])}
            if path in texts:
                found.append((pk, texts[path], f"{field}|{path}"))
        return found


def _embed_batch(table: Table, target: str, rows: list[tuple]) -> int:
    """Embed the rows' texts with `target` (no transaction open) and write them as next vectors where the row's
    text is still the one embedded. Returns how many rows got one."""
    if table.space == spaces.Name.STORE:
        rows = _store_texts(rows)
        texts, guards = [row[1] for row in rows], [row[2] for row in rows]
    else:
        texts = guards = [row[1] for row in rows]
    if not rows:
        return 0
    vectors = embeddings.embed_texts(texts, target)
    with connection.cursor() as cursor:
        cursor.execute(
            f"UPDATE {table.table} AS t SET embedding_next = v.e FROM unnest(%s::{table.key}[], %s::text[], "
            f"%s::vector[]) AS v(id, txt, e) WHERE t.id = v.id AND {table.text} = v.txt AND t.embedding_next IS NULL",
            [[row[0] for row in rows], guards, [Vector(vector).to_text() for vector in vectors]],
        )
        return cursor.rowcount


def _progress(space: str, **fields) -> None:
    EmbeddingSpace.objects.filter(name=space).update(updated_at=timezone.now(), **fields)


def _pass(table: Table, target: str, batch_size: int, everything: bool, advance: Callable[[int], None]) -> int:
    """Next vectors for every stale row, in key order (keyset pagination), a batch at a time."""
    done, last = 0, None
    while True:
        after = "" if last is None else "AND t.id > %s"
        with connection.cursor() as cursor:
            cursor.execute(
                f"SELECT t.id, {table.text} FROM {table.table} AS t WHERE {_stale(table, everything)} {after} "
                f"ORDER BY t.id LIMIT %s",
                [*_params(everything, target), *([] if last is None else [last]), batch_size],
            )
            rows = cursor.fetchall()
        if not rows:
            return done
        written = _embed_batch(table, target, rows)
        done += written
        last = rows[-1][0]
        EmbeddingSpace.objects.filter(name=table.space).update(rows_done=F("rows_done") + written,
                                                               updated_at=timezone.now())
        advance(len(rows))


def switch(table: Table, target: str, dimensions: int) -> int:
    """Move the next vectors in and make `target` the table's model, in one transaction under the table's switch
    lock. Rows still of another model (written during the pass) become pending. Returns how many did."""
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))", [spaces.lock_name(table.space)])
        EmbeddingSpace.objects.filter(name=table.space).update(model=target, dimensions=dimensions)
        cursor.execute(f"UPDATE {table.table} SET embedding = embedding_next, embedding_model = %s, "
                       f"embedding_next = NULL WHERE embedding_next IS NOT NULL", [target])
        cursor.execute(f"UPDATE {table.table} SET embedding = NULL, embedding_model = '' "
                       f"WHERE embedding IS NOT NULL AND embedding_model <> %s", [target])
        pending = cursor.rowcount
    spaces.forget()
    return pending


def _start(table: Table, target: str, everything: bool) -> None:
    """Record the run in the table's row (made with the model its vectors are in when it has none yet); a run to
    another target than the interrupted one drops that one's next vectors."""
    with transaction.atomic():
        space, _ = EmbeddingSpace.objects.select_for_update().get_or_create(
            name=table.space, defaults={"model": spaces.current_model(table.space) or target})
        if space.target_model and space.target_model != target:
            with connection.cursor() as cursor:
                cursor.execute(f"UPDATE {table.table} SET embedding_next = NULL WHERE embedding_next IS NOT NULL")
        resumed = space.target_model == target and space.state != EmbeddingSpace.State.DONE
        space.target_model, space.state, space.error = target, EmbeddingSpace.State.RUNNING, ""
        if not resumed:
            space.rows_done, space.started_at, space.finished_at = 0, timezone.now(), None
        space.rows_total = space.rows_done + stale_count(table, target, everything)
        space.updated_at = timezone.now()
        space.save()


def reembed_table(table: Table, *, batch_size: int = 256, everything: bool = False,
                  advance: Callable[[int], None] = lambda n: None) -> int:
    """Switch one table to EMBEDDING_MODEL (see the module's docstring). Returns the rows embedded."""
    target, dimensions = settings.EMBEDDING_MODEL, settings.EMBEDDING_DIMENSIONS
    _start(table, target, everything)
    done = 0
    if not everything and spaces.active_model(table.space) == target and not stale_count(table, target):
        # nothing to do: no switch (its lock and its two scans of the table)
        _progress(table.space, state=EmbeddingSpace.State.DONE, target_model="", finished_at=timezone.now())
        return 0
    try:
        for _ in range(PASSES):
            done += _pass(table, target, batch_size, everything, advance)
            everything = False  # later passes: only what is still of another model
            if not switch(table, target, dimensions) or not stale_count(table, target):
                break
    except Exception as exc:
        _progress(table.space, state=EmbeddingSpace.State.FAILED, error=str(exc)[:2000])
        raise
    _progress(table.space, state=EmbeddingSpace.State.DONE, target_model="", finished_at=timezone.now())
    return done


def reembed_all(*, batch_size: int = 256, everything: bool = False,
                advance: Callable[[Table, int], None] = lambda table, n: None,
                begin: Callable[[Table, int], None] = lambda table, total: None) -> dict[str, int]:
    """Every table in turn, under one run lock (a second run at the same time raises ReembedBusy)."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_try_advisory_lock(hashtextextended('memento reembed', 0))")
        if not cursor.fetchone()[0]:
            raise ReembedBusy("Another re-embedding is running.")
    try:
        spaces.record_models()  # every table keeps its model until its own turn
        done = {}
        for table in TABLES:
            begin(table, stale_count(table, settings.EMBEDDING_MODEL, everything))
            done[table.space] = reembed_table(table, batch_size=batch_size, everything=everything,
                                              advance=lambda n, table=table: advance(table, n))
        return done
    finally:
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_unlock(hashtextextended('memento reembed', 0))")
