"""Reading a snapshot (memories.search.snapshot_search.Snapshot) of an owner's filtered rows: all of them, or the
rows changed since an earlier snapshot patched into it (see memories.search.snapshot for when each happens)."""

import numpy as np

from memories.models import EMBEDDING_DIMENSIONS, ttl_deadline_sql
from memories.search.ranking import THREAD
from memories.search.snapshot_search import Row, Snapshot
from memories.search.sql import EPOCH, VECTOR

# what the snapshot reads of each filtered row besides ranking.ROW_FIELDS: when it expires, its category and the
# attribute it records (the intent boost: memories.search.intent)
FIELDS = ("expires_at", "accessed_at", "ttl_minutes", "category", "metadata")
# The owner's stamp row, joined to each of their rows changed since (all of them, or those stamped after a stamp:
# found by the (owner, stamp) index) and, where the row is in the filtered source, what the snapshot holds of it:
# one statement, so the counts, the sums and the rows agree.
_ROWS = (
    "SELECT s.stamp, s.rows, s.stamps, d.id, coalesce(d.stamp, 0), m.id IS NOT NULL, "
    "CASE WHEN m.embedding IS NULL THEN NULL ELSE halfvec_send(m.embedding::{vector}) END, "
    "tsvector_to_array(m.search_vector), "
    "ARRAY(SELECT u.lexeme FROM unnest(m.search_vector) AS u WHERE u.weights IS NULL OR 'A' = ANY(u.weights)), "
    "m.importance, {updated}, {when}, {thread}, {created}, m.created_at, "
    "extract(epoch FROM least(m.expires_at, " + ttl_deadline_sql("m") + "))::float8, m.category, "
    "coalesce(m.metadata->>'attribute', ''), m.embedding_model "
    "FROM memories_memorystamp s LEFT JOIN (memories_memory d LEFT JOIN {rows} AS m ON m.id = d.id) "
    "ON d.owner_id = s.owner_id AND {changed} "
    "WHERE s.owner_id = %s"
)


def read(cursor, owner_id: int, rows: tuple[str, tuple], after: Snapshot | None = None, *,
         model: str = "") -> Snapshot | None:
    """The snapshot of the owner's rows of `rows` (`sql.rows_source` with ranking.ROW_FIELDS and FIELDS): all of
    them, or `after` with the rows changed since its stamp patched in. Only vectors of `model` are held (the
    query's: memories.spaces), as if the others were pending. None when the patched rows are not what the
    table holds (their count or stamps differ from the owner's): then they must all be read."""
    rows_sql, rows_params = rows
    cursor.execute(_ROWS.format(
        vector=VECTOR, rows=rows_sql, thread=THREAD, updated=EPOCH.format("m.updated_at"),
        when=EPOCH.format("COALESCE(m.happened_at, m.created_at)"), created=EPOCH.format("m.created_at"),
        changed="TRUE" if after is None else "d.stamp > %s",  # rows never stamped since 0014 are no change
    ), [*rows_params, *([] if after is None else [after.stamp]), owner_id])
    fetched = cursor.fetchall()
    if not fetched:
        return None  # no stamp row (visible): nothing to hold
    stamp, count, total = fetched[0][:3]
    stamps = dict(after.stamps) if after is not None else {}
    held = dict(after.held) if after is not None else {}
    vectors = {}
    left = False
    for row in fetched:
        pk = row[3]
        if pk is None:
            continue  # the stamp row alone: no row changed since
        stamps[pk] = row[4]
        if not row[5]:
            left |= held.pop(pk, None) is not None  # left the filtered rows (or never was in them)
            continue
        # halfvec_send: int16 dimensions, int16 unused, then big-endian half floats
        vectors[pk] = (np.frombuffer(row[6], dtype=">f2", offset=4) if row[6] is not None and row[18] == model
                       else None)
        held[pk] = Row(words=row[7], subject_words=row[8], columns=row[9:13], created=row[13],
                       order=(row[14], pk.int), deadline=row[15], category=row[16], attribute=row[17])
    if after is not None and (len(stamps) != count or sum(stamps.values()) != total):
        return None
    if after is not None and not left:
        patched = _patch(after, stamp, stamps, held, vectors)
        if patched is not None:
            return patched
    return _build(stamp, stamps, held, vectors, after)


def _norms(vectors: np.ndarray) -> np.ndarray:
    """Each row's squared norm as pgvector sums it for halfvec: the products in single precision."""
    single = vectors.astype(np.float32)
    return np.einsum("ij,ij->i", single, single).astype(np.float64)


def _build(stamp: int, stamps: dict, held: dict, changed: dict, before: Snapshot | None) -> Snapshot:
    """The snapshot of `held`: vectors from `changed` (id -> vector or None) or else from `before`."""
    ids = sorted(held, key=lambda pk: held[pk].order)
    n = len(ids)
    vectors = np.zeros((n, EMBEDDING_DIMENSIONS), dtype=np.float16)
    has_vector = np.zeros(n, dtype=bool)
    kept, kept_from = [], []
    postings: dict[str, list[int]] = {}
    subject_postings: dict[str, list[int]] = {}
    for i, pk in enumerate(ids):
        if pk in changed:
            if changed[pk] is not None:
                vectors[i] = changed[pk]
                has_vector[i] = True
        else:
            kept.append(i)
            kept_from.append(before.position[pk])
        row = held[pk]
        for lexeme in row.words:
            postings.setdefault(lexeme, []).append(i)
        for lexeme in row.subject_words:
            subject_postings.setdefault(lexeme, []).append(i)
    if kept:
        vectors[kept] = before.vectors[kept_from]
        has_vector[kept] = before.has_vector[kept_from]
    rows = [held[pk] for pk in ids]
    keys = np.array([pk.bytes for pk in ids], dtype="S16")
    return Snapshot(
        stamp=stamp, stamps=stamps, held=held, ids=ids,
        valid_until=min((row.deadline for row in rows if row.deadline is not None), default=float("inf")),
        position={pk: i for i, pk in enumerate(ids)}, id_keys=keys, id_order=_id_order(keys),
        vectors=vectors, norms=_norms(vectors), has_vector=has_vector,
        postings={k: np.array(v) for k, v in postings.items()},
        subject_postings={k: np.array(v) for k, v in subject_postings.items()},
        lengths=np.array([len(row.words) for row in rows], dtype=np.float64),
        columns=[row.columns for row in rows], created=[row.created for row in rows],
    )


def _patch(before: Snapshot, stamp: int, stamps: dict, held: dict, changed: dict) -> Snapshot | None:
    """`before` with the rows of `changed` (id -> vector or None) replaced where they are and the new ones added at
    the end, touching only what they hold: the common change (a memory stored or edited) costs its own words, not
    every row's. None when that would break the order (a new row sorting before a held one, an edit that moved a
    row): then `_build` orders them all."""
    new = sorted((pk for pk in changed if pk not in before.position), key=lambda pk: held[pk].order)
    if new and before.ids and held[new[0]].order < before.held[before.ids[-1]].order:
        return None
    if any(held[pk].order != before.held[pk].order for pk in changed if pk in before.position):
        return None
    ids = before.ids + new
    start = len(before.ids)
    position = dict(before.position)
    position.update((pk, start + j) for j, pk in enumerate(new))
    vectors = np.concatenate([before.vectors, np.zeros((len(new), EMBEDDING_DIMENSIONS), dtype=np.float16)])
    has_vector = np.concatenate([before.has_vector, np.zeros(len(new), dtype=bool)])
    norms = np.concatenate([before.norms, np.zeros(len(new))])
    lengths = np.concatenate([before.lengths, np.zeros(len(new))])
    columns, created = before.columns + [None] * len(new), before.created + [None] * len(new)
    postings, subject_postings = dict(before.postings), dict(before.subject_postings)
    for pk, vector in changed.items():
        i, row, old = position[pk], held[pk], before.held.get(pk)
        vectors[i] = 0 if vector is None else vector
        has_vector[i] = vector is not None
        _move(postings, i, old.words if old else (), row.words)
        _move(subject_postings, i, old.subject_words if old else (), row.subject_words)
        lengths[i], columns[i], created[i] = len(row.words), row.columns, row.created
    at = [position[pk] for pk in changed]
    norms[at] = _norms(vectors[at])
    keys = np.concatenate([before.id_keys, np.array([pk.bytes for pk in new], dtype="S16")])
    # an edit may have put a deadline later: the old one then only ends the snapshot early
    deadlines = [held[pk].deadline for pk in changed if held[pk].deadline is not None]
    return Snapshot(
        stamp=stamp, stamps=stamps, held=held, ids=ids, valid_until=min([before.valid_until, *deadlines]),
        position=position, id_keys=keys, id_order=_id_order(keys), vectors=vectors, norms=norms,
        has_vector=has_vector, postings=postings, subject_postings=subject_postings, lengths=lengths,
        columns=columns, created=created,
    )


def _move(postings: dict, i: int, old: tuple | list, new: tuple | list) -> None:
    """Row `i`'s entries in `postings` from the lexemes `old` to `new`, replacing the arrays it changes (the ones
    in `postings` may be shared with a snapshot other threads are reading)."""
    old, new = set(old), set(new)
    for lexeme in old - new:
        kept = postings[lexeme][postings[lexeme] != i]
        if len(kept):
            postings[lexeme] = kept
        else:
            del postings[lexeme]
    for lexeme in new - old:
        postings[lexeme] = np.append(postings[lexeme], i) if lexeme in postings else np.array([i])


def _id_order(keys: np.ndarray) -> np.ndarray:
    """Each row's place among the ids in sorted order (`keys`: the ids' big-endian bytes, which sort as they do)."""
    return np.argsort(np.argsort(keys, kind="stable"), kind="stable")
