import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from integrations import embeddings
from memories import services
from memories.models import Memory
from memories.vectors import find_duplicates, nearest_of_owner


@pytest.mark.parametrize("exact_max", [0, 2000], ids=["hnsw", "exact"])
def test_a_duplicate_is_found_behind_other_users_copies(user, other_user, settings, exact_max):
    settings.SEARCH_EXACT_MAX_MEMORIES = exact_max
    settings.SEARCH_EXACT_MAX_SHARE = 0.0  # the count alone decides here
    mine = services.memory_create(owner=user, content="I am allergic to peanuts.", actor=user).memory
    text = "I am allergic to peanuts"
    for _ in range(60):
        services.memory_create(owner=other_user, content=text, actor=other_user, allow_duplicate=True)
    assert find_duplicates(owner_id=user.pk, project_id=None, vectors=[embeddings.embed_text(text)]) == [mine]
    assert services.memory_create(owner=user, content=text, actor=user).outcome == "duplicate"


def test_small_owners_are_compared_exactly_large_ones_scan_the_index_until_found(user, settings):
    """A plain HNSW scan filtered by owner hands over its ef_search nearest entries of any owner, dead ones
    included, and the filter may leave none: in the full suite's table, full of rolled-back writes, users' exact
    duplicates went unfound. Small owners' rows are compared exactly (an order no index serves: the owner's
    B-tree); large owners' lookups scan the index on (iterative scan) until the owner's nearest is found."""
    vector = embeddings.embed_text("I am allergic to peanuts")
    with CaptureQueriesContext(connection) as small:
        find_duplicates(owner_id=user.pk, project_id=None, vectors=[vector])
    assert any(") + 0" in q["sql"] for q in small.captured_queries)
    assert not any("iterative_scan" in q["sql"] for q in small.captured_queries)
    settings.SEARCH_EXACT_MAX_MEMORIES = -1
    settings.SEARCH_EXACT_MAX_SHARE = 0.0  # the count alone decides here
    with CaptureQueriesContext(connection) as large:
        find_duplicates(owner_id=user.pk, project_id=None, vectors=[vector])
    assert any("'hnsw.iterative_scan', 'strict_order'" in q["sql"] for q in large.captured_queries)
    assert not any(") + 0" in q["sql"] for q in large.captured_queries)


def test_a_small_owners_nearest_are_found_behind_other_users_nearer_entries(user, other_user):
    """Reconciliation's and consolidation's neighbours: in CI's full suite a plain filtered index scan gave a small
    owner's nearest as none (the index's ef_search entries, all of them other owners' or dead ones), and a
    hand-written "Lives in Bordeaux" was never seen, nor superseded, by a move. Small owners' rows are compared by
    their true distance; large owners' go through the index as find_duplicates' do."""
    mine = services.memory_create(owner=user, content="Lives in Bordeaux", actor=user).memory
    for year in range(1960, 2020):  # nearer to the question than mine
        services.memory_create(owner=other_user, content=f"We relocated to Bordeaux in {year}", actor=other_user)
    vector = embeddings.embed_text("We've relocated to Bordeaux")
    with connection.cursor() as cursor:  # a planner that takes the index, handing over one entry at a time
        cursor.execute("SET LOCAL enable_sort = off")
        cursor.execute("SET LOCAL hnsw.ef_search = 1")
    with CaptureQueriesContext(connection) as queries:
        found = nearest_of_owner(Memory.objects.filter(owner=user), owner_id=user.pk, vector=vector, limit=8)
    assert [m.pk for m in found] == [mine.pk] and 0 < found[0].distance < 0.5
    assert ") + 0" in queries.captured_queries[-1]["sql"]


def test_figures_keep_their_sign_and_dates_their_parts():
    from memories.vectors import numbers_in

    assert numbers_in("ttl test -5 zz") != numbers_in("ttl test 5 zz")
    assert numbers_in("on 2024-06-12 at 10:30, code 1234") == ["2024", "06", "12", "10:30", "1234"]
    assert numbers_in("from -3.5 to +2") == ["-3.5", "+2"]
