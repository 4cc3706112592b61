"""Small owners' search from the web process's snapshot of their rows: the same results as the SQL path, and never
a stale one (real PostgreSQL, real local model, the stamp trigger of migration memories 0012)."""

import time
from datetime import timedelta

import numpy as np
import pytest
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from core import rls
from memories import batch, bookkeeping, services
from memories.models import Memory, MemoryStamp
from memories.search import memory_search
from memories.search.snapshot import snapshots
from memories.selectors import MemoryFilters

DIALOGUE = [
    ("Caroline", "I went to the LGBTQ support group yesterday and it was so powerful"),
    ("Melanie", "That sounds wonderful, what did you talk about there?"),
    ("Caroline", "Mostly about my transition and the adoption agencies I am looking at"),
    ("Melanie", "I painted a sunrise over the lake last week"),
    ("Caroline", "Your painting of the lake is beautiful, you should sell it"),
    ("Melanie", "My kids and I went camping in the mountains in June"),
    ("Caroline", "I am researching counseling careers in mental health"),
    ("Melanie", "We ran a charity race for mental health awareness on Saturday"),
]
FACTS = [
    ("Caroline", "Caroline is allergic to peanuts and carries an EpiPen", 0.9),
    ("Melanie", "Melanie plays the clarinet in a community band", 0.3),
    ("", "The user prefers short answers in the morning", 0.5),
    ("Caroline", "Caroline moved from Sweden four years ago", 0.6),
]
CATEGORIES = {"Caroline is allergic to peanuts and carries an EpiPen": "restriction"}  # the others have none
QUERIES = [
    "When did Caroline go to the LGBTQ support group?",
    "What did Melanie paint?",
    "what is caroline allergic to",
    "Where did Melanie go camping in June?",
    "mental health",
    "Which instrument does Melanie play?",
    "completely unrelated quantum chromodynamics",
    "what should I not cook for them?",  # a need: the intent part (by category and by meaning)
    "what would the user enjoy as a present?",  # and "user" left out of the words
]
CASES = [("hybrid", None), ("hybrid", "blend"), ("hybrid", "weighted"), ("hybrid", "rrf"), ("semantic", None),
         ("keyword", None), ("semantic", "fused")]


@pytest.fixture(autouse=True)
def read_at_once(settings):
    """Snapshots read at the first search that needs one (the rule that delays reading has a test of its own)."""
    settings.SEARCH_SNAPSHOT_AFTER = 1
    snapshots.clear()


@pytest.fixture
def memories(user):
    # one at a time, so that the conversation's turns are stored in order (context goes to the turns around a hit)
    turns = [services.memory_create(owner=user, content=f"{name}: {text}", subject=name, actor=user,
                                    source_ref={"conversation_id": "c-1"}, allow_duplicate=True).memory
             for name, text in DIALOGUE]
    items = [{"content": text, "subject": name, "importance": importance, "allow_duplicate": True,
              "category": CATEGORIES.get(text, "")} for name, text, importance in FACTS]
    return turns + [w.memory for w in batch.memory_batch_create(owner=user, items=items, actor=user)]


def outcome(result):
    return [r.memory.pk for r in result.results]


def search(user, query, **kwargs):
    kwargs.setdefault("limit", 10)
    with rls.as_user(user.pk):
        return memory_search(owner=user, query=query, **kwargs)


@pytest.mark.parametrize(("mode", "ranking"), CASES)
def test_the_snapshot_ranks_as_the_sql_path_does(user, memories, settings, mode, ranking):
    threshold = 0.0 if mode == "semantic" else None
    for query in QUERIES:
        settings.SEARCH_SNAPSHOT_ROWS = 0
        expected = search(user, query, mode=mode, ranking=ranking, threshold=threshold)
        settings.SEARCH_SNAPSHOT_ROWS = 50_000
        with CaptureQueriesContext(connection) as queries:
            held = search(user, query, mode=mode, ranking=ranking, threshold=threshold)
        assert not any("LIMIT" in q["sql"] for q in queries.captured_queries[1:])  # no candidates' statement
        assert outcome(held) == outcome(expected), query
        for got, want in zip(held.results, expected.results, strict=True):
            assert got.score == pytest.approx(want.score, abs=1e-6)
            assert got.parts == pytest.approx(want.parts, abs=1e-6)
    assert any(outcome(search(user, q)) for q in QUERIES)  # the comparison compared something
    needs = [search(user, q) for q in QUERIES[-2:]]
    assert all(any(r.parts.get("intent", 0) > 0 for r in result.results) for result in needs)


def test_a_search_asks_only_for_its_words_the_stamp_and_the_rows_shown(user, memories):
    search(user, QUERIES[0])  # reads the rows
    with CaptureQueriesContext(connection) as queries:
        result = search(user, QUERIES[0])
    assert result.results
    statements = [q["sql"] for q in queries.captured_queries if not q["sql"].startswith(("SELECT set_config",))]
    assert len(statements) == 2
    assert "memories_memorystamp" in statements[0]


def test_every_change_is_seen_by_the_next_search(user, memories):
    assert not search(user, "kayak", mode="keyword").results
    made = services.memory_create(owner=user, content="Melanie bought a kayak", actor=user).memory
    assert search(user, "kayak").results[0].memory.pk == made.pk
    services.memory_update(memory=made, data={"content": "Melanie bought a canoe"}, actor=user)
    assert not search(user, "kayak", mode="keyword").results
    assert search(user, "canoe").results[0].memory.pk == made.pk
    services.memory_soft_delete(memory=Memory.objects.get(pk=made.pk), actor=user)
    assert made.pk not in {r.memory.pk for r in search(user, "canoe").results}
    services.memory_restore(memory=Memory.objects.get(pk=made.pk), actor=user)
    assert [r.memory.pk for r in search(user, "canoe", mode="keyword").results] == [made.pk]
    services.memory_forget(memory=Memory.objects.get(pk=made.pk), actor=user)
    assert not search(user, "canoe", mode="keyword").results


def test_reads_do_not_take_a_new_stamp_and_writes_do(user, memories):
    stamp = MemoryStamp.objects.get(owner_id=user.pk).stamp
    bookkeeping.touch_after_response(memory_ids=[m.pk for m in memories], owner_id=user.pk, action="SEARCH",
                                     query="q")  # outside a request: written at once
    assert Memory.objects.filter(owner=user, accessed_at__isnull=False).count() == len(memories)
    assert MemoryStamp.objects.get(owner_id=user.pk).stamp == stamp
    services.memory_update(memory=memories[0], data={"importance": 0.8}, actor=user)
    assert MemoryStamp.objects.get(owner_id=user.pk).stamp != stamp


def test_a_rolled_back_change_is_not_served_afterwards(user, memories):
    with pytest.raises(RuntimeError), transaction.atomic():
        services.memory_create(owner=user, content="Caroline adopted a parrot named Kiwi", actor=user)
        assert search(user, "parrot", mode="keyword").results  # seen inside, so the snapshot held it
        raise RuntimeError("roll back")
    assert not search(user, "parrot", mode="keyword").results


def test_an_expiring_memory_leaves_the_results_at_its_deadline(user, memories):
    deadline = timezone.now() + timedelta(seconds=5)  # room for a stalled machine between the write and the search
    services.memory_create(owner=user, content="The boarding pass code is ZX81", actor=user, expires_at=deadline)
    assert search(user, "boarding pass", mode="keyword").results
    time.sleep(max(0.0, (deadline - timezone.now()).total_seconds()) + 0.1)  # until the deadline has passed
    assert not search(user, "boarding pass", mode="keyword").results


def test_filters_get_snapshots_of_their_own(user, memories):
    narrowed = MemoryFilters(subject="Melanie")
    assert {r.memory.subject for r in search(user, "mental health", filters=narrowed).results} == {"Melanie"}
    assert "Caroline" in {r.memory.subject for r in search(user, "mental health").results}


def test_only_the_owners_rows_are_held_and_only_within_the_budget(user, other_user, memories, settings):
    batch.memory_batch_create(owner=other_user, items=[{"content": "Caroline has a secret twin"}], actor=other_user)
    snapshots.clear()
    search(user, "twin")
    assert not search(user, "twin", mode="keyword").results
    settings.SEARCH_SNAPSHOT_ROWS = 1
    search(other_user, "twin")
    held = list(snapshots._snapshots)
    assert [key[0] for key in held] == [other_user.pk]  # the least recently used one went


def test_a_snapshot_is_read_at_the_third_search_that_finds_it_missing_or_out_of_date(user, memories, settings):
    settings.SEARCH_SNAPSHOT_AFTER = 3

    assert [path(user) for _ in range(5)] == ["sql", "sql", "read", "held", "held"]
    services.memory_create(owner=user, content="Melanie bought a kayak", actor=user)
    assert [path(user) for _ in range(2)] == ["patched", "held"]  # a held one is brought up to date at once
    snapshots.clear()
    assert [path(user) for _ in range(3)] == ["sql", "sql", "read"]


def path(user, query=QUERIES[1]):
    """How a search found its candidates: from the SQL path, by reading all rows, by reading the changed ones
    into the held snapshot, or from the held snapshot alone."""
    with CaptureQueriesContext(connection) as queries:
        search(user, query)
    statements = [q["sql"] for q in queries.captured_queries]
    reads = [sql for sql in statements if "halfvec_send" in sql]
    if reads:
        return "read" if any("d.stamp >" not in sql for sql in reads) else "patched"
    return "sql" if any("LIMIT" in sql for sql in statements) else "held"


def test_a_change_reads_only_the_rows_changed_since(user, memories):
    search(user, QUERIES[0])
    made = services.memory_create(owner=user, content="Melanie bought a kayak", actor=user).memory
    with CaptureQueriesContext(connection) as queries:
        assert search(user, "kayak").results[0].memory.pk == made.pk
    patch = [q["sql"] for q in queries.captured_queries if "halfvec_send" in q["sql"]]
    assert len(patch) == 1 and "d.stamp >" in patch[0]
    services.memory_update(memory=Memory.objects.get(pk=made.pk), data={"subject": "Melanie"}, actor=user)
    assert path(user, "kayak") == "patched"
    narrowed = search(user, "kayak", filters=MemoryFilters(subject="Caroline"))  # a snapshot of its own
    assert made.pk not in outcome(narrowed)


def test_a_delete_or_a_rolled_back_row_makes_it_read_every_row_again(user, memories):
    search(user, QUERIES[0])
    services.memory_forget(memory=memories[0], actor=user)  # deleted: no row left to say so
    assert path(user, "support group") == "read"
    assert memories[0].pk not in outcome(search(user, "support group"))
    with pytest.raises(RuntimeError), transaction.atomic():
        services.memory_create(owner=user, content="Caroline adopted a parrot named Kiwi", actor=user)
        assert search(user, "parrot", mode="keyword").results  # held, with the parrot, inside the transaction
        raise RuntimeError("roll back")
    kayak = services.memory_create(owner=user, content="Melanie bought a kayak", actor=user).memory  # stamped later
    assert outcome(search(user, "parrot kayak", mode="keyword")) == [kayak.pk]  # the sums disagreed: all read


def test_a_held_snapshot_is_never_served_to_another_users_session(user, other_user, memories):
    assert search(user, "allergic").results  # user's rows held by this process
    with rls.as_user(other_user.pk):  # a bug that searched user's memories in other_user's request
        assert not memory_search(owner=user, query="allergic", limit=10).results  # the stamp is not visible


def test_the_stamp_trigger_watches_every_column_but_accessed_at(db):
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT array_agg(a.attname ORDER BY a.attname) FROM pg_trigger t "
            "JOIN pg_attribute a ON a.attrelid = t.tgrelid AND a.attnum = ANY(t.tgattr) "
            "WHERE t.tgname = 'memory_stamp'")
        watched = set(cursor.fetchone()[0])
    columns = {f.column for f in Memory._meta.concrete_fields if not f.generated}
    # embedding_next: a re-embedding's vector, no search reads it (the switch then changes `embedding`, stamped);
    # embedding_dimensions: set by the database from `embedding`
    assert watched == columns - {"accessed_at", "stamp", "embedding_next", "embedding_dimensions"}


def test_the_owners_count_and_sum_of_stamps_follow_every_change(user, other_user, memories):
    def sums(owner):
        row = MemoryStamp.objects.get(owner_id=owner.pk)
        stamps = list(Memory.objects.filter(owner=owner).values_list("stamp", flat=True))
        return (row.rows, row.stamps), (len(stamps), sum(stamps)), row.stamp

    held, actual, stamp = sums(user)
    assert held == actual and stamp == max(Memory.objects.filter(owner=user).values_list("stamp", flat=True))
    services.memory_update(memory=memories[1], data={"importance": 0.9}, actor=user)
    services.memory_forget(memory=memories[2], actor=user)
    held, actual, _ = sums(user)
    assert held == actual and held[0] == len(memories) - 1
    services.memory_create(owner=other_user, content="Another user's note", actor=other_user)
    assert sums(user)[0] == held  # another owner's change is not this owner's


def held_snapshot():
    (snapshot,) = snapshots._snapshots.values()
    return snapshot


def assert_same_snapshot(got, want):
    assert (got.stamp, got.ids, got.position, got.stamps, got.held) == (want.stamp, want.ids, want.position,
                                                                         want.stamps, want.held)
    for name in ("vectors", "norms", "has_vector", "lengths", "id_keys", "id_order"):
        assert np.array_equal(getattr(got, name), getattr(want, name)), name
    for name in ("postings", "subject_postings"):
        assert ({k: sorted(v.tolist()) for k, v in getattr(got, name).items()}
                == {k: sorted(v.tolist()) for k, v in getattr(want, name).items()}), name
    assert (got.columns, got.created, got.valid_until) == (want.columns, want.created, want.valid_until)


def read_in_full(user):
    snapshots.clear()
    search(user, QUERIES[1])
    return held_snapshot()


def test_a_patched_snapshot_holds_what_reading_every_row_gives(user, memories):
    search(user, QUERIES[0])
    services.memory_create(owner=user, content="Melanie bought a kayak", actor=user,
                           expires_at=timezone.now() + timedelta(days=1))  # a new row, at the end
    services.memory_update(memory=memories[3], data={"content": "Melanie painted the harbour at dusk",
                                                     "importance": 0.8}, actor=user)  # words and vector, in place
    services.memory_update(memory=memories[9], data={"subject": "Melanie"}, actor=user)  # subject words
    assert path(user) == "patched"
    patched = held_snapshot()
    assert patched.valid_until < float("inf")  # the new row's deadline
    assert_same_snapshot(patched, read_in_full(user))


def test_a_row_that_moves_in_the_order_is_patched_by_ordering_every_row(user, memories):
    search(user, QUERIES[0])
    moved = Memory.objects.get(pk=memories[-1].pk)
    moved.created_at = memories[0].created_at - timedelta(minutes=1)  # now the oldest: neighbours change
    moved.save(update_fields=["created_at"])
    assert path(user) == "patched"
    patched = held_snapshot()
    assert patched.ids[0] == moved.pk
    assert_same_snapshot(patched, read_in_full(user))


def test_the_snapshot_gives_each_memorys_kind_as_sql_does(user, memories):
    from integrations.embeddings import get_provider
    from memories.search.intent import _anchors
    from memories.search.sql import kind_similarities

    Memory.objects.filter(pk=memories[1].pk).update(metadata={"attribute": "employer"})
    search(user, QUERIES[0])  # reads the rows
    prototypes = _anchors(get_provider())[3]["restriction"]
    ids = [m.pk for m in memories]
    groups = [prototypes[:2], prototypes[2:]]  # each group's best, as the asked kind and its rivals are read
    with rls.as_user(user.pk), connection.cursor() as cursor:
        want = kind_similarities(cursor, user.pk, ids, groups)
    got = held_snapshot().kinds(ids, groups)
    assert got.keys() == want.keys() == set(ids)
    for pk, (category, attribute, cosines) in want.items():
        assert got[pk][:2] == (category, attribute)
        assert got[pk][2] == pytest.approx(cosines, abs=1e-6)  # as the ranking parity test: halfvec sums
    assert {category for category, *_ in want.values()} == {"", "restriction"}
    assert {attribute for _, attribute, _ in want.values()} == {"", "employer"}
