"""Small owners' search in the web process: each owner's filtered rows held in memory, as arrays, while the owner's
memory stamp (memories.models.MemoryStamp) is the one they were read at.

An owner with up to SEARCH_EXACT_MAX_MEMORIES memories is searched by an exact scan anyway; what a search cost
there was the statement (planning the filtered row source four times, reading 600 vectors out of line) and the
round trips, not the arithmetic (600 cosines and BM25 over a few hundred rows take well under a millisecond in
numpy). So the rows are read once, and each search asks the database only for the query's words and the owner's
stamp, in one round trip. The snapshot gives what `sql.candidates` and `ranking.with_context` give for the same
rows: the same halfvec cosines, the same BM25 (float8 arithmetic, the same N, the same top k per signal), the same
neighbours; tests/memories/test_snapshot.py holds the two side by side.

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
"""

import threading
import time
from collections import OrderedDict
from dataclasses import dataclass

import numpy as np
from django.conf import settings

from memories.models import EMBEDDING_DIMENSIONS
from memories.search.ranking import CONTEXT_SHARES, THREAD
from memories.search.sql import EPOCH, MAX_QUERY_LEXEMES, QUERY_LEXEMES, VECTOR

MAX_TRACKED = 10_000  # owners whose misses are counted (then the count starts again)
# what the snapshot reads of each filtered row besides ranking.ROW_FIELDS: when it expires, its category (the
# intent boost: memories.search.intent)
FIELDS = ("expires_at", "accessed_at", "ttl_minutes", "category")
# The owner's stamp row, joined to each of their rows changed since (all of them, or those stamped after a stamp:
# found by the (owner, stamp) index) and, where the row is in the filtered source, what the snapshot holds of it:
# one statement, so the counts, the sums and the rows agree.
_ROWS = (
    "SELECT s.stamp, s.rows, s.stamps, d.id, coalesce(d.stamp, 0), m.id IS NOT NULL, "
    "CASE WHEN m.embedding IS NULL THEN NULL ELSE halfvec_send(m.embedding::{vector}) END, "
    "tsvector_to_array(m.search_vector), "
    "ARRAY(SELECT u.lexeme FROM unnest(m.search_vector) AS u WHERE u.weights IS NULL OR 'A' = ANY(u.weights)), "
    "m.importance, {updated}, {when}, {thread}, {created}, m.created_at, "
    "extract(epoch FROM least(m.expires_at, greatest(m.updated_at, m.accessed_at) "
    "+ m.ttl_minutes * interval '1 minute'))::float8, m.category, m.embedding_model "
    "FROM memories_memorystamp s LEFT JOIN (memories_memory d LEFT JOIN {rows} AS m ON m.id = d.id) "
    "ON d.owner_id = s.owner_id AND {changed} "
    "WHERE s.owner_id = %s"
)


@dataclass(frozen=True)
class Row:
    """What a snapshot holds of one filtered row besides its vector."""

    words: list  # tsvector_to_array(search_vector)
    subject_words: list  # its words in the subject (weight A)
    columns: tuple  # (importance, updated epoch, happened-or-created epoch, thread)
    created: float  # created_at epoch
    order: tuple  # (created_at, id as an integer): SQL's ORDER BY created_at, id
    deadline: float | None  # when it expires (expires_at or its TTL), None: never
    category: str = ""


@dataclass(frozen=True)
class Snapshot:
    """One owner's filtered rows at one stamp, ordered by (created_at, id): the order neighbours are taken in."""

    stamp: int
    valid_until: float  # epoch seconds: the earliest expiry among the rows (inf: none expires)
    stamps: dict  # id -> stamp of every row of the owner's (filtered or not): what the count and sum check
    held: dict  # id -> Row of the filtered rows
    ids: list
    vectors: np.ndarray  # the stored halfvecs as float16 (exact), zero rows where there is none
    norms: np.ndarray  # float64; 0 where there is no vector
    has_vector: np.ndarray  # bool
    postings: dict  # lexeme -> row indices holding it
    subject_postings: dict  # lexeme -> row indices holding it in the subject (weight A)
    lengths: np.ndarray  # distinct lexemes per row (length(tsvector))
    columns: list  # (importance, updated epoch, happened-or-created epoch, thread) per row
    created: list  # created_at epoch per row
    position: dict  # id -> row index
    id_keys: np.ndarray  # each id's 16 bytes (S16), which sort as the ids do
    id_order: np.ndarray  # each row's place among the ids in sorted order: ties are broken by id, as in SQL

    def similarities(self, vector, at=None) -> np.ndarray:
        """Cosine similarity of every row (or of the rows at the indices `at`) to `vector`, as pgvector computes
        halfvec's (the query rounded to half precision, sums in float32, the quotient in float8); NaN where a row
        has no vector."""
        rows = slice(None) if at is None else at
        query = np.asarray(vector, dtype=np.float16).astype(np.float32)
        # held in half precision (half the memory), multiplied in single precision as pgvector does
        dots = (self.vectors[rows].astype(np.float32) @ query).astype(np.float64)
        query_norm = float(np.dot(query, query))
        with np.errstate(invalid="ignore", divide="ignore"):
            similarity = np.clip(dots / np.sqrt(self.norms[rows] * query_norm), -1.0, 1.0)
        return np.where(self.has_vector[rows], 1.0 - (1.0 - similarity), np.nan)

    def kinds(self, ids, direction) -> dict:
        """id -> (category, cosine with `direction` or None) of the held rows among `ids`: what
        `sql.kind_similarities` gives for them."""
        ids = [pk for pk in ids if pk in self.position]
        if not ids:
            return {}
        cosines = self.similarities(direction, np.array([self.position[pk] for pk in ids])).tolist()
        return {pk: (self.held[pk].category, None if value != value else value)
                for pk, value in zip(ids, cosines, strict=True)}

    def _similarity_list(self, vector, similarity: np.ndarray | None) -> list:
        """`similarity` as Python floats, None where a row has no vector (or there is no query vector)."""
        if vector is None:
            return [None] * len(self.ids)
        return [None if value != value else value for value in similarity.tolist()]  # NaN: no vector

    def bm25(self, lexemes: list[str], *, k1: float, b: float, subject_tf: float, total: int) -> np.ndarray:
        """`sql._subject_weighted_bm25`'s score of every row (0 where no query word is in it)."""
        n = len(self.ids)
        has = np.zeros((len(lexemes), n), dtype=bool)
        subject = np.zeros((len(lexemes), n), dtype=bool)
        for i, lexeme in enumerate(lexemes):
            has[i, self.postings.get(lexeme, [])] = True
            subject[i, self.subject_postings.get(lexeme, [])] = True
        matched = has.any(axis=0)
        count = int(matched.sum())
        if not count:
            return np.zeros(n)
        counts = has.sum(axis=1).astype(np.float64)
        average = max(float(self.lengths[matched].mean()), 1.0)
        corpus = float(max(total, count))
        idf = np.log(1 + (corpus - counts + 0.5) / (counts + 0.5))
        tf = np.where(subject, float(subject_tf), 1.0)
        norm = k1 * (1 - b + b * self.lengths / average)
        terms = np.where(has, idf[:, None] * tf * (k1 + 1) / (tf + norm), 0.0)
        return terms.sum(axis=0) / max(float(idf.sum()), 1e-9)

    def candidates(self, *, vector, lexemes: list[str], k: int, k1: float, b: float, subject_tf: float,
                   total: int) -> tuple[list[tuple], list]:
        """`sql.candidates`' rows with ranking.CANDIDATE_COLUMNS: (id, cosine or None, BM25 share, importance,
        updated, happened, thread) for the k nearest and the k best full-text matches; and every row's cosine (or
        None), for `neighbours`."""
        chosen: dict[int, float] = {}
        similarity = None
        if vector is not None:
            similarity = self.similarities(vector)
            with_vector = np.flatnonzero(self.has_vector)
            for i in self._top(with_vector, -similarity[with_vector], k).tolist():
                chosen[i] = 0.0
        if lexemes:
            scores = self.bm25(lexemes, k1=k1, b=b, subject_tf=subject_tf, total=total)
            matched = np.flatnonzero(scores > 0)
            for i in self._top(matched, -scores[matched], k).tolist():
                chosen[i] = float(scores[i])
        similarities = self._similarity_list(vector, similarity)
        return [(self.ids[i], similarities[i], score, *self.columns[i]) for i, score in chosen.items()], similarities

    def _top(self, indices: np.ndarray, keys: np.ndarray, k: int) -> np.ndarray:
        """`indices` of the k smallest `keys`, smallest first, ties by id."""
        return indices[np.lexsort((self.id_order[indices], keys))[:k]]

    def neighbours(self, hits, similarities: list) -> list[tuple]:
        """`ranking.add_context`'s rows for `hits`: the rows right before and after each (hit id, id, direction,
        created, similarity, importance, updated, happened, thread), with `candidates`' cosines."""
        rows = []
        for hit in hits:
            at = self.position.get(hit.id)
            if at is None:
                continue
            for direction, step in ((-1, -1), (1, 1)):
                for j in range(1, len(CONTEXT_SHARES) + 1):
                    i = at + step * j
                    if not 0 <= i < len(self.ids):
                        break
                    rows.append((hit.id, self.ids[i], direction, self.created[i], similarities[i], *self.columns[i]))
        return rows


def start(cursor, owner_id: int, query: str, unweighted: str = "") -> tuple[list[str], int | None]:
    """One round trip: the query's distinct stemmed words but those of `unweighted` (as `sql.search_start`) and the
    owner's memory stamp."""
    cursor.execute(f"SELECT {QUERY_LEXEMES}, (SELECT stamp FROM memories_memorystamp WHERE owner_id = %s)",
                   [query, unweighted, owner_id])
    lexemes, stamp = cursor.fetchone()
    return lexemes[:MAX_QUERY_LEXEMES], stamp


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
        vectors[pk] = (np.frombuffer(row[6], dtype=">f2", offset=4) if row[6] is not None and row[17] == model
                       else None)
        held[pk] = Row(words=row[7], subject_words=row[8], columns=row[9:13], created=row[13],
                       order=(row[14], pk.int), deadline=row[15], category=row[16])
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
