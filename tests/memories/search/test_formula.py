"""One ranking, computed three ways: Python floats (ranking.rank), SQL in the real PostgreSQL (the relevance
`with_context` picks hits by, the BM25 of `sql.candidates`) and numpy (a snapshot's BM25) give the same scores and
the same order for random candidates (seeded). A weight or constant changed in one of them, and not taken from
memories.search.formula, fails here."""

import random
import uuid
from datetime import UTC, datetime

import numpy as np
import pytest
from django.db import connection

from core import rls
from memories.models import Memory
from memories.search import formula, ranking
from memories.search.algebra import Arrays, Floats, Sql
from memories.search.dates import query_periods, within_periods
from memories.search.query import memory_rows
from memories.search.snapshot_rows import FIELDS, read
from memories.search.sql import candidates, search_start
from memories.selectors import MemoryFilters
from tests.factories import MemoryFactory

NOW = datetime(2023, 9, 1, 12, tzinfo=UTC)
QUERY = "what did they do in July 2023?"  # a date: the fused ranking's date part takes part
COLUMNS = ("similarity", "keyword", "semantic_rank", "keyword_rank", "importance", "updated", "context", "intent",
           "dated")


def random_candidates(seed: int, count: int = 300) -> list[ranking.SearchCandidate]:
    """Candidates as `sql.candidates` rows give them (some without a cosine, most without a word), ranked by
    ranking.candidates_from_rows, with context, intent and relevance as memory search adds them."""
    rng = random.Random(seed)
    day = 86400.0
    rows = [(uuid.UUID(int=rng.getrandbits(128)),
             None if rng.random() < 0.2 else rng.uniform(-0.1, 0.95),
             0.0 if rng.random() < 0.5 else rng.uniform(0.0, 1.4),
             rng.random(),
             None if rng.random() < 0.1 else NOW.timestamp() - rng.uniform(-day, 400 * day),
             datetime(2023, 1, 1, tzinfo=UTC).timestamp() + rng.uniform(0, 365 * day),
             "c-1")
            for _ in range(count)]
    found = ranking.candidates_from_rows(rows)
    for c in found:
        c.context = rng.uniform(0.0, 0.4) if rng.random() < 0.3 else 0.0
        c.intent = rng.uniform(0.0, formula.INTENT_WEIGHT) if rng.random() < 0.2 else 0.0
    ranking.relevance(found)
    return found


def inputs(found: list[ranking.SearchCandidate]) -> dict[str, list]:
    """Each formula operand of the candidates, column by column (None: missing)."""
    periods = query_periods(QUERY)
    return {
        "similarity": [c.similarity for c in found], "keyword": [c.keyword for c in found],
        "semantic_rank": [c.semantic_rank for c in found], "keyword_rank": [c.keyword_rank for c in found],
        "importance": [c.importance for c in found], "updated": [c.updated_at for c in found],
        "context": [c.context for c in found], "intent": [c.intent for c in found],
        # what rank() dates: a memory related to the query (or lent context) that happened within its dates
        "dated": [(c.relevance > 0 or c.context > 0) and within_periods(c.when, periods) for c in found],
    }


def order(ids, scores, importance, fresh) -> list:
    """Best first, ties as rank() breaks them: the more important, the more recent, then by id."""
    return [pk for *_, pk in sorted(zip((-s for s in scores), (-i for i in importance), (-f for f in fresh), ids,
                                        strict=True))]


def sql_scores(name: str, found: list[ranking.SearchCandidate]) -> tuple[list, list, list]:
    """(ids in the statement's order, their scores, their relevance) computed by PostgreSQL from the formula's
    SQL and ranking.RELEVANCE_SQL (what with_context picks hits by)."""
    columns = {column: Sql(column) for column in COLUMNS if column not in ("updated", "dated")}
    fresh = formula.recency(Sql, Sql("updated"), NOW.timestamp())
    score = formula.score(Sql, formula.PARTS[name](Sql, **columns, dated=Sql("dated"), fresh=fresh))
    values = inputs(found)
    casts = ["uuid[]"] + ["boolean[]" if column == "dated" else "float8[]" for column in COLUMNS]
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT id, {score}, {ranking.RELEVANCE_SQL} FROM unnest("
            + ", ".join(f"%s::{cast}" for cast in casts) + f") AS c(id, {', '.join(COLUMNS)}) "
            f"ORDER BY {score} DESC, importance DESC, {fresh} DESC, id",
            [[c.id for c in found], *(values[column] for column in COLUMNS)])
        rows = cursor.fetchall()
    return [row[0] for row in rows], [row[1] for row in rows], [row[2] for row in rows]


def numpy_scores(name: str, found: list[ranking.SearchCandidate]) -> tuple[list, list, list]:
    """(ids in order, scores, relevance) computed on arrays from the formula (NaN: missing)."""
    values = {column: np.array([np.nan if v is None else v for v in column_values], dtype=np.float64)
              for column, column_values in inputs(found).items() if column != "dated"}
    fresh = formula.recency(Arrays, values.pop("updated"), NOW.timestamp())
    parts = formula.PARTS[name](Arrays, **values, dated=np.array(inputs(found)["dated"]), fresh=fresh)
    scores = np.broadcast_to(formula.score(Arrays, parts), len(found)).tolist()
    relevance = formula.relevance(Arrays, values["similarity"], values["keyword"]).tolist()
    ids = [c.id for c in found]
    ranked = order(ids, scores, values["importance"].tolist(), fresh.tolist())
    at = {pk: i for i, pk in enumerate(ids)}
    return ranked, [scores[at[pk]] for pk in ranked], [relevance[at[pk]] for pk in ranked]


@pytest.mark.parametrize("name", sorted(formula.PARTS))
def test_every_ranking_scores_and_orders_the_same_in_python_sql_and_numpy(db, monkeypatch, name):
    monkeypatch.setattr(ranking.timezone, "now", lambda: NOW)
    for seed in range(3):
        python = ranking.rank(random_candidates(seed), name, QUERY)
        assert len(python) > 50  # most candidates are related to the query, and are scored
        kept = [c for c, _, _ in python]
        by_id = {c.id: (score, c.relevance) for c, score, _ in python}
        for ids, scores, relevance in (sql_scores(name, kept), numpy_scores(name, kept)):
            assert ids == [c.id for c in kept]  # the same order
            assert scores == pytest.approx([by_id[pk][0] for pk in ids], abs=1e-6)
            assert relevance == pytest.approx([by_id[pk][1] for pk in ids], abs=1e-6)
    if name == "fused":  # every part took part
        parts = {part for _, _, found in python for part, value in found.items() if value}
        assert parts == {"semantic", "keyword", "context", "intent", "date", "importance", "recency"}


# --- BM25 over real memories: sql.candidates (PostgreSQL), a snapshot (numpy), the formula on floats ------------

WORDS = ["garden", "violin", "marathon", "pottery", "camping", "lake", "sunrise", "adoption", "counsel", "museum",
         "recipe", "kayak", "festival", "library", "puppy"]


@pytest.fixture
def rows(user):
    """Memories of random words (seeded), some in the subject; subjects weigh a word more."""
    rng = random.Random(30)
    for _ in range(80):
        words = rng.sample(WORDS, rng.randint(1, 6)) + rng.choices(WORDS, k=rng.randint(0, 4))
        MemoryFactory(owner=user, content=" ".join(words), subject=rng.choice(["", "", *WORDS]))
    return user


def float_bm25(held, lexemes: list[str], total: int) -> dict:
    """The formula on Python floats, row by row, from the words each row holds."""
    matching = [row for row in held.values() if set(row.words) & set(lexemes)]
    average = formula.bm25_average(Floats, sum(len(row.words) for row in matching) / len(matching))
    corpus = float(max(total, len(matching)))
    idfs = [formula.bm25_idf(Floats, corpus, float(sum(lexeme in row.words for row in matching)))
            for lexeme in lexemes]
    total_idf = formula.bm25_total_idf(Floats, idfs)
    scores = {}
    for pk, row in held.items():
        norm = formula.bm25_norm(Floats, float(len(row.words)), average, formula.BM25_K1, formula.BM25_B)
        terms = [formula.subject_weighted_term(Floats, lexeme in row.words, lexeme in row.subject_words, idf, norm,
                                               formula.BM25_K1) for lexeme, idf in zip(lexemes, idfs, strict=True)]
        scores[pk] = formula.bm25_share(Floats, terms, total_idf)
    return {pk: score for pk, score in scores.items() if score > 0}


@pytest.mark.parametrize("query", ["violin lake", "kayak festival museum puppy", "garden", "recipe camping library"])
def test_bm25_scores_and_orders_the_same_in_sql_numpy_and_python(rows, query):
    owner = rows.pk
    total = Memory.objects.filter(owner=owner).count()
    with rls.as_user(owner), connection.cursor() as cursor:
        lexemes = search_start(cursor, query, ef_search=None)
        found = candidates(cursor, rows=memory_rows(owner, MemoryFilters()), table="memories_memory", owner_id=owner,
                           vector=None, lexemes=lexemes, k=total, k1=formula.BM25_K1, b=formula.BM25_B,
                           subject_tf=formula.SUBJECT_TF, total=total)
        snapshot = read(cursor, owner, memory_rows(owner, MemoryFilters(), ranking.ROW_FIELDS + FIELDS))
    in_sql = {row[0]: row[2] for row in found}
    arrays = snapshot.bm25(lexemes, k1=formula.BM25_K1, b=formula.BM25_B, subject_tf=formula.SUBJECT_TF, total=total)
    in_numpy = {pk: score for pk, score in zip(snapshot.ids, arrays.tolist(), strict=True) if score > 0}
    in_floats = float_bm25(snapshot.held, lexemes, total)
    assert len(in_sql) > 10 and any(len(set(lexemes) & set(row.subject_words)) for row in snapshot.held.values())
    best_first = [sorted(scores, key=lambda pk: (-scores[pk], pk)) for scores in (in_sql, in_numpy, in_floats)]
    assert best_first[0] == best_first[1] == best_first[2]
    for scores in (in_numpy, in_floats):
        assert [scores[pk] for pk in best_first[0]] == pytest.approx([in_sql[pk] for pk in best_first[0]], abs=1e-6)
