"""Large owners' own HNSW indexes (memories.owner_indexes) and the choice of path (memories.search.paths): names
derived from the owner alone, made and dropped by the sync, taken by the planner for the owner's searches under
row-level security, and never shown to anyone else."""

import numpy as np
import pytest
from django.core.cache import cache
from django.core.management import call_command
from django.db import connection

from core import rls
from memories import owner_indexes, tasks
from memories.search import memory_search
from memories.search.paths import OwnerFigures, owner_figures, owner_index_name, owner_of_index, vector_path
from tests.factories import UserFactory, memories_with_random_vectors


def test_index_names_come_from_the_owner_alone():
    assert owner_index_name(42) == "memory_owner_hnsw_42"
    assert owner_of_index(owner_index_name(907)) == 907
    assert owner_of_index("memory_embedding_hnsw") is None
    assert owner_of_index("memory_owner_hnsw_12x") is None


@pytest.mark.parametrize(("total", "table", "own", "path"), [
    (2000, 1_000_000, False, "exact"),  # the count: the snapshot's owners
    (2000, 1_000_000, True, "exact"),
    (9000, 1_000_000, False, "exact"),  # 0.9% of the table: its rows are fewer than a filtered scan's visits
    (9000, 1_000_000, True, "own"),
    (50_000, 1_000_000, False, "shared"),
    (50_000, 1_000_000, True, "own"),
    (9000, 100_000, False, "shared"),
])
def test_the_path_follows_the_count_the_share_and_the_own_index(settings, total, table, own, path):
    settings.SEARCH_EXACT_MAX_MEMORIES = 2000
    settings.SEARCH_EXACT_MAX_SHARE = 0.01
    assert vector_path(OwnerFigures(total=total, table=table, own_index=own)) == path




def owner_indexes_now() -> dict[str, str]:
    with connection.cursor() as cursor:
        cursor.execute("SELECT indexname, indexdef FROM pg_indexes WHERE tablename = 'memories_memory' "
                       "AND indexname LIKE 'memory\\_owner\\_hnsw\\_%'")
        return dict(cursor.fetchall())


@pytest.fixture
def large_owners(settings, monkeypatch):
    """Owner indexes at 30 memories, whatever the owner's share of these small tables (but in the test of that
    rule); whatever a test made is dropped after it (DDL outlives the test's flush)."""
    settings.SEARCH_OWNER_INDEX_MIN_MEMORIES = 30
    settings.SEARCH_OWNER_INDEX_MAX = 10
    monkeypatch.setattr(owner_indexes, "OWN_INDEX_MAX_SHARE", 1.0)
    yield
    with connection.cursor() as cursor:
        for name in owner_indexes_now():
            cursor.execute(f'DROP INDEX IF EXISTS "{name}"')


@pytest.mark.django_db(transaction=True)
def test_the_sync_makes_indexes_for_large_owners_and_drops_them_when_they_shrink_or_go(large_owners, settings):
    big, small, shrinking = UserFactory(), UserFactory(), UserFactory()
    memories_with_random_vectors(big, 40, seed=1)
    memories_with_random_vectors(small, 10, seed=2)
    memories_with_random_vectors(shrinking, 35, seed=3)
    assert {e.action for e in owner_indexes.owner_indexes_sync(dry_run=True)} == {"create"}
    assert owner_indexes_now() == {}  # a dry run does nothing

    done = owner_indexes.owner_indexes_sync()
    assert {(e.owner_id, e.action) for e in done} == {(big.pk, "create"), (shrinking.pk, "create")}
    made = owner_indexes_now()
    assert set(made) == {owner_index_name(big.pk), owner_index_name(shrinking.pk)}
    definition = made[owner_index_name(big.pk)]
    assert "USING hnsw" in definition and "halfvec_cosine_ops" in definition
    assert f"WHERE (owner_id = {big.pk})" in definition
    assert {e.owner_id: e.state for e in owner_indexes.owner_indexes_status()} == {
        big.pk: "ready", shrinking.pk: "ready"}
    assert owner_indexes.owner_indexes_sync() == []  # nothing left to do

    # 35 and 40 stay at or above half the minimum when it rises to 60: kept (no rebuild-and-drop at the line)
    settings.SEARCH_OWNER_INDEX_MIN_MEMORIES = 60
    assert owner_indexes.owner_indexes_sync() == []
    settings.SEARCH_OWNER_INDEX_MIN_MEMORIES = 30
    gone = shrinking.pk
    shrinking.delete()  # a user who leaves takes their memories and their index with them
    assert [(e.owner_id, e.action) for e in owner_indexes.owner_indexes_sync()] == [(gone, "drop")]
    assert set(owner_indexes_now()) == {owner_index_name(big.pk)}
    settings.SEARCH_OWNER_INDEX_MIN_MEMORIES = 100
    assert [(e.owner_id, e.action) for e in owner_indexes.owner_indexes_sync()] == [(big.pk, "drop")]
    assert owner_indexes_now() == {}


@pytest.mark.django_db(transaction=True)
def test_the_largest_owners_get_indexes_first_and_no_more_than_the_maximum(large_owners, settings):
    settings.SEARCH_OWNER_INDEX_MAX = 1
    first, second = UserFactory(), UserFactory()
    memories_with_random_vectors(first, 40, seed=4)
    memories_with_random_vectors(second, 50, seed=5)
    done = owner_indexes.owner_indexes_sync()
    assert [(e.owner_id, e.action) for e in done] == [(second.pk, "create")]
    assert first.pk not in {e.owner_id for e in owner_indexes.owner_indexes_status()}


@pytest.mark.django_db(transaction=True)
def test_an_owner_with_most_of_the_table_gets_no_index_of_its_own(large_owners, monkeypatch):
    monkeypatch.setattr(owner_indexes, "OWN_INDEX_MAX_SHARE", 0.5)
    most, some = UserFactory(), UserFactory()
    memories_with_random_vectors(most, 40, seed=4)
    memories_with_random_vectors(some, 35, seed=5)
    assert [(e.owner_id, e.action) for e in owner_indexes.owner_indexes_sync(dry_run=True)] == [(some.pk, "create")]


@pytest.mark.django_db(transaction=True)
def test_the_periodic_task_builds_one_index_a_run_and_queues_itself_while_more_remain(large_owners, monkeypatch):
    users = [UserFactory() for _ in range(3)]
    for i, user in enumerate(users):
        memories_with_random_vectors(user, 31 + i, seed=10 + i)
    queued = []
    monkeypatch.setattr(tasks.sync_owner_indexes, "delay", lambda: queued.append(1))
    assert tasks.sync_owner_indexes() == [f"create {owner_index_name(users[2].pk)}"]
    assert len(queued) == 1
    tasks.sync_owner_indexes()
    tasks.sync_owner_indexes()
    assert len(queued) == 2  # the third run built the last one and queued nothing
    assert set(owner_indexes_now()) == {owner_index_name(u.pk) for u in users}


@pytest.mark.django_db(transaction=True)
def test_the_command_shows_the_status_and_syncs(large_owners, capsys):
    user = UserFactory()
    memories_with_random_vectors(user, 40, seed=7)
    call_command("owner_indexes")
    shown = capsys.readouterr().out
    assert f"{user.pk:>10}        40  missing" in shown and "create" in shown
    call_command("owner_indexes", "--sync")
    shown = capsys.readouterr().out
    assert f"did create {owner_index_name(user.pk)}" in shown
    assert f"{user.pk:>10}        40  ready" in shown


def candidates_plan(owner, vector, as_user) -> tuple[str, list]:
    """The plan of the search's candidates statement, explained in the search's own transaction as `as_user`'s
    request runs it, and the search's results."""
    plans = []

    def explain(execute, statement, params, many, context):
        result = execute(statement, params, many, context)
        statements.append((statement, params))
        if statement.startswith("WITH") and "sem AS MATERIALIZED" in statement:
            with connection.cursor() as cursor:
                cursor.execute(f"EXPLAIN {statement}", params)
                plans.append("\n".join(row[0] for row in cursor.fetchall()))
        return result

    with rls.as_user(as_user.pk), connection.execute_wrapper(explain):
        found = memory_search(owner=owner, query="note", mode="semantic", threshold=-1.0, limit=10,
                              query_vector=vector)
    return plans[-1], [r.memory.pk for r in found.results]


statements: list[tuple] = []  # (SQL, parameters) of the last `candidates_plan`


@pytest.mark.django_db(transaction=True)
def test_an_owner_with_an_index_of_its_own_is_searched_through_it_and_only_by_itself(large_owners, settings):
    settings.SEARCH_EXACT_MAX_MEMORIES = 10
    settings.SEARCH_EXACT_MAX_SHARE = 0.0
    user, other = UserFactory(), UserFactory()
    stored, vectors = memories_with_random_vectors(user, 60, seed=8)
    memories_with_random_vectors(other, 20, seed=9)
    owner_indexes.owner_indexes_sync()
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE memories_memory")
    cache.clear()  # the owner's figures
    with connection.cursor() as cursor:
        assert vector_path(owner_figures(cursor, user.pk)) == "own"
    query = vectors[5] + np.random.default_rng(1).normal(scale=0.3, size=384).astype(np.float32)
    query /= np.linalg.norm(query)
    statements.clear()
    plan, found = candidates_plan(user, query.tolist(), as_user=user)
    assert f"Index Scan using {owner_index_name(user.pk)}" in plan, plan
    # the own index's scan is unfiltered: a wider search of its graph buys recall for little (BENCHMARKS.md, 1M)
    assert any("'hnsw.ef_search', %s" in statement and "200" in params for statement, params in statements)
    assert found == [stored[i] for i in np.argsort(-(vectors @ query))[:10]]
    # row-level security still applies: the same search run by someone else's request finds nothing
    plan, found = candidates_plan(user, query.tolist(), as_user=other)
    assert found == []
