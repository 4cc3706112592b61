"""A snapshot of one owner's filtered rows (memories.search.snapshot) and search over it: what `sql.candidates`,
`ranking.add_context` and `sql.kind_similarities` give for the same rows, computed in numpy (the same halfvec
cosines, the same BM25: formula's, on arrays; the same neighbours)."""

from dataclasses import dataclass

import numpy as np

from memories.search import formula
from memories.search.algebra import Arrays, Floats


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
    attribute: str = ""  # the attribute it records (metadata "attribute"), "" for none


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
        return self._cosines(dots, self.norms[rows] * float(np.dot(query, query)), self.has_vector[rows])

    @staticmethod
    def _cosines(dots: np.ndarray, norms: np.ndarray, has_vector: np.ndarray) -> np.ndarray:
        """pgvector's halfvec cosine from the float32 dot products and the products of squared norms (the quotient
        in float8); NaN where a row has no vector."""
        with np.errstate(invalid="ignore", divide="ignore"):
            similarity = np.clip(dots / np.sqrt(norms), -1.0, 1.0)
        return np.where(has_vector, 1.0 - (1.0 - similarity), np.nan)

    def kinds(self, ids, groups) -> dict:
        """id -> (category, recorded attribute, each group's best cosine, or None) of the held rows among `ids`: what
        `sql.kind_similarities` gives for them (every direction in one product, each cosine as `similarities`)."""
        ids = [pk for pk in ids if pk in self.position]
        if not ids:
            return {}
        at = np.array([self.position[pk] for pk in ids])
        directions = np.asarray(np.concatenate(groups), dtype=np.float16).astype(np.float32)
        dots = (self.vectors[at].astype(np.float32) @ directions.T).astype(np.float64)
        norms = np.outer(self.norms[at], np.einsum("ij,ij->i", directions, directions).astype(np.float64))
        cosines = self._cosines(dots, norms, self.has_vector[at][:, None])
        ends = np.cumsum([len(group) for group in groups])
        best = np.stack([part.max(axis=1) for part in np.split(cosines, ends[:-1], axis=1)], axis=1)
        return {pk: (self.held[pk].category, self.held[pk].attribute, None if np.isnan(row[0]) else tuple(row.tolist()))
                for pk, row in zip(ids, best, strict=True)}

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
        average = formula.bm25_average(Floats, float(self.lengths[matched].mean()))
        corpus = float(max(total, count))
        idf = formula.bm25_idf(Arrays, corpus, counts)
        norm = formula.bm25_norm(Arrays, self.lengths, average, k1, b)
        terms = [formula.subject_weighted_term(Arrays, has[i], subject[i], idf[i], norm, k1, subject_tf)
                 for i in range(len(lexemes))]
        return formula.bm25_share(Arrays, terms, formula.bm25_total_idf(Arrays, list(idf)))

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
                for j in range(1, len(formula.CONTEXT_SHARES) + 1):
                    i = at + step * j
                    if not 0 <= i < len(self.ids):
                        break
                    rows.append((hit.id, self.ids[i], direction, self.created[i], similarities[i], *self.columns[i]))
        return rows
