"""The large-owner (HNSW) path of memory search: its nearest vectors come from the HNSW index, whatever the planner
would rather do, and it gathers SEARCH_HNSW_CANDIDATES of them but never fewer than the search's limit."""

import numpy as np
from django.core.cache import cache
from django.db import connection

from core import rls
from memories import batch
from memories.search import memory_search


def store_vectors(user, count, seed):
    rng = np.random.default_rng(seed)
    vectors = rng.normal(size=(count, 384)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    batch.memory_batch_create(
        owner=user, items=[{"content": f"note number {i}", "allow_duplicate": True} for i in range(count)],
        vectors=vectors.tolist(), actor=user)
    return vectors


def candidates_plan(owner, vector) -> str:
    """The plan of the candidates' statement, explained inside the search's own transaction (where its HNSW
    settings are in force), as the owner's request runs it."""
    plans = []

    def explain(execute, statement, params, many, context):
        result = execute(statement, params, many, context)
        if statement.startswith("WITH") and "sem AS MATERIALIZED" in statement:  # not this EXPLAIN
            with connection.cursor() as cursor:  # the caller still fetches from its own cursor
                cursor.execute(f"EXPLAIN {statement}", params)
                plans.append("\n".join(row[0] for row in cursor.fetchall()))
        return result

    with rls.as_user(owner.pk), connection.execute_wrapper(explain):
        memory_search(owner=owner, query="note", mode="hybrid", limit=10, query_vector=vector)
    return plans[-1]


def test_the_hnsw_path_reads_the_nearest_vectors_from_the_index(user, other_user, settings):
    # the owner holds half of a small table: the planner prices reading all its rows by the owner's B-tree and
    # sorting them below the filtered index scan, which is the choice that cost 220+ ms for 50k of 1M memories
    settings.SEARCH_EXACT_MAX_MEMORIES = 0
    settings.SEARCH_EXACT_MAX_SHARE = 0.0  # the count alone decides here
    vectors = store_vectors(user, 300, seed=1)
    store_vectors(other_user, 300, seed=2)
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE memories_memory")
    cache.clear()
    plan = candidates_plan(user, vectors[0].tolist())
    assert "Index Scan using memory_embedding_hnsw" in plan, plan


def test_the_hnsw_path_gathers_at_least_the_limit(user, other_user, settings):
    settings.SEARCH_EXACT_MAX_MEMORIES = 0
    settings.SEARCH_EXACT_MAX_SHARE = 0.0  # the count alone decides here
    settings.SEARCH_HNSW_CANDIDATES = 5
    vectors = store_vectors(user, 60, seed=3)
    store_vectors(other_user, 60, seed=4)
    cache.clear()
    with rls.as_user(user.pk):
        few = memory_search(owner=user, query="q", mode="semantic", threshold=-1.0, limit=3,
                            query_vector=vectors[7].tolist())
        many = memory_search(owner=user, query="q", mode="semantic", threshold=-1.0, limit=20,
                             query_vector=vectors[7].tolist())
    assert len(few.results) == 3 and len(many.results) == 20
    assert few.results[0].memory.content == many.results[0].memory.content == "note number 7"
