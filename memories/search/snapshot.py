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
# what the snapshot reads of each filtered row besides ranking.ROW_FIELDS: when it expires
FIELDS = ("expires_at", "accessed_at", "ttl_minutes")
_LOAD = (
    "SELECT m.id, CASE WHEN m.embedding IS NULL THEN NULL ELSE halfvec_send(m.embedding::{vector}) END, "
    "tsvector_to_array(m.search_vector), "
    "ARRAY(SELECT u.lexeme FROM unnest(m.search_vector) AS u WHERE u.weights IS NULL OR 'A' = ANY(u.weights)), "
    "m.importance, {updated}, {when}, {thread}, {created}, "
    "extract(epoch FROM least(m.expires_at, greatest(m.updated_at, m.accessed_at) "
    "+ m.ttl_minutes * interval '1 minute'))::float8 "
    "FROM {rows} AS m WHERE m.owner_id = %s ORDER BY m.created_at, m.id"
)


@dataclass(frozen=True)
class Snapshot:
    """One owner's filtered rows at one stamp, ordered by (created_at, id): the order neighbours are taken in."""

    stamp: int
    valid_until: float  # epoch seconds: the earliest expiry among the rows (inf: none expires)
    ids: list
    vectors: np.ndarray  # float32 copies of the stored halfvecs (exact), zero rows where there is none
    norms: np.ndarray  # float64; 0 where there is no vector
    has_vector: np.ndarray  # bool
    postings: dict  # lexeme -> row indices holding it
    subject_postings: dict  # lexeme -> row indices holding it in the subject (weight A)
    lengths: np.ndarray  # distinct lexemes per row (length(tsvector))
    columns: list  # (importance, updated epoch, happened-or-created epoch, thread) per row
    created: list  # created_at epoch per row
    position: dict  # id -> row index
    id_order: np.ndarray  # each row's place among the ids in sorted order: ties are broken by id, as in SQL

    def similarities(self, vector) -> np.ndarray:
        """Cosine similarity of every row to `vector`, as pgvector computes halfvec's (the query rounded to half
        precision, sums in float32, the quotient in float8); NaN where a row has no vector."""
        query = np.asarray(vector, dtype=np.float16).astype(np.float32)
        dots = (self.vectors @ query).astype(np.float64)
        query_norm = float(np.dot(query, query))
        with np.errstate(invalid="ignore", divide="ignore"):
            similarity = np.clip(dots / np.sqrt(self.norms * query_norm), -1.0, 1.0)
        return np.where(self.has_vector, 1.0 - (1.0 - similarity), np.nan)

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


def start(cursor, owner_id: int, query: str) -> tuple[list[str], int | None]:
    """One round trip: the query's distinct stemmed words (as `sql.search_start`) and the owner's memory stamp."""
    cursor.execute(f"SELECT {QUERY_LEXEMES}, (SELECT stamp FROM memories_memorystamp WHERE owner_id = %s)",
                   [query, owner_id])
    lexemes, stamp = cursor.fetchone()
    return lexemes[:MAX_QUERY_LEXEMES], stamp


def load(cursor, owner_id: int, rows: tuple[str, tuple], stamp: int) -> Snapshot:
    """The owner's rows of `rows` (`sql.rows_source` with ranking.ROW_FIELDS and FIELDS), read at `stamp` or later
    (the stamp was read first, so a change in between only makes the snapshot newer than its stamp)."""
    rows_sql, rows_params = rows
    cursor.execute(_LOAD.format(
        vector=VECTOR, rows=rows_sql, thread=THREAD, updated=EPOCH.format("m.updated_at"),
        when=EPOCH.format("COALESCE(m.happened_at, m.created_at)"), created=EPOCH.format("m.created_at"),
    ), [*rows_params, owner_id])
    fetched = cursor.fetchall()
    n = len(fetched)
    vectors = np.zeros((n, EMBEDDING_DIMENSIONS), dtype=np.float32)
    has_vector = np.zeros(n, dtype=bool)
    postings: dict[str, list[int]] = {}
    subject_postings: dict[str, list[int]] = {}
    lengths = np.zeros(n)
    deadlines = [row[9] for row in fetched if row[9] is not None]
    for i, row in enumerate(fetched):
        if row[1] is not None:
            # halfvec_send: int16 dimensions, int16 unused, then big-endian half floats
            vectors[i] = np.frombuffer(row[1], dtype=">f2", offset=4)
            has_vector[i] = True
        for lexeme in row[2]:
            postings.setdefault(lexeme, []).append(i)
        for lexeme in row[3]:
            subject_postings.setdefault(lexeme, []).append(i)
        lengths[i] = len(row[2])
    ids = [row[0] for row in fetched]
    return Snapshot(
        stamp=stamp, valid_until=min(deadlines, default=float("inf")), ids=ids,
        position={pk: i for i, pk in enumerate(ids)}, id_order=np.argsort(np.argsort([pk.int for pk in ids])),
        vectors=vectors, norms=np.einsum("ij,ij->i", vectors, vectors).astype(np.float64), has_vector=has_vector,
        postings={k: np.array(v) for k, v in postings.items()},
        subject_postings={k: np.array(v) for k, v in subject_postings.items()},
        lengths=lengths, columns=[row[4:8] for row in fetched], created=[row[8] for row in fetched],
    )


class SnapshotCache:
    """The process's snapshots by (owner, filters), least recently used out first, at most
    SEARCH_SNAPSHOT_ROWS rows in all (a row is ~1.6 kB: its vector and words). Web threads share it.

    Reading an owner's rows costs several SQL searches (a few hundred rows: 5-8 ms of this process's CPU), so the
    searches that find a snapshot missing or out of date go the SQL way until the SEARCH_SNAPSHOT_AFTER-th, which
    reads the rows: an owner whose memories change between most searches costs what the SQL path costs, one who
    searches more than writes gets the snapshot."""

    def __init__(self):
        self._lock = threading.Lock()
        self._snapshots: OrderedDict[tuple, Snapshot] = OrderedDict()
        self._rows = 0
        self._misses: dict[tuple, int] = {}  # searches that found no current snapshot since the last read

    def get(self, cursor, key: tuple, owner_id: int, rows: tuple[str, tuple], stamp: int) -> Snapshot | None:
        """The current snapshot for `key`, read now if it is this search's turn to read it, else None."""
        with self._lock:
            snapshot = self._snapshots.get(key)
            if snapshot is not None and snapshot.stamp == stamp and time.time() < snapshot.valid_until:
                self._snapshots.move_to_end(key)
                return snapshot
            misses = self._misses.pop(key, 0) + 1
            if misses < settings.SEARCH_SNAPSHOT_AFTER:
                if len(self._misses) >= MAX_TRACKED:
                    self._misses.clear()
                self._misses[key] = misses
                return None
        snapshot = load(cursor, owner_id, rows, stamp)
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
