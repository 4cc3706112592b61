"""Read replicas (core/db_routing.py) against a real hot standby of the test server (tests/standby.py): reads go
there, a user's fresh write is read back at once from the primary, and row-level security holds on the standby."""

import logging
from contextlib import contextmanager

import pytest
import requests
from django.core.cache import cache
from django.db import DEFAULT_DB_ALIAS, connections
from django.test.utils import CaptureQueriesContext

from core import db_routing
from tests.factories import UserFactory, token_for
from tests.standby import start_standby, stop_standby
from tests.web import two_nodes

ALIAS = "replica_0"


DOWN = "replica_down"
UNREACHABLE_URL = "postgresql://nobody@/nowhere?host=/nonexistent-memento-socket&port=1"
# the replica aliases a test may connect to (Django's test case refuses the others); writes go to the primary
ON_REPLICA = pytest.mark.django_db(transaction=True, databases=[DEFAULT_DB_ALIAS, ALIAS])
ON_DOWN_REPLICA = pytest.mark.django_db(transaction=True, databases=[DEFAULT_DB_ALIAS, DOWN])


@contextmanager
def replica_alias(alias: str, url: str):
    """`alias` defined as memento/settings/database.py defines a replica of DATABASE_REPLICA_URLS (a test mirror of the
    default database: never flushed or created), for the length of the block. Module-scoped fixtures use it so
    that the alias exists before Django's test case checks which databases a test may use."""
    from memento.settings import _database

    configured = connections.configure_settings({
        DEFAULT_DB_ALIAS: connections.settings[DEFAULT_DB_ALIAS],
        alias: {**_database(url), "TEST": {"MIRROR": DEFAULT_DB_ALIAS}}})
    connections.settings[alias] = configured[alias]
    try:
        yield
    finally:
        db_routing.use_primary()
        connections[alias].close()
        try:
            del connections[alias]
        except AttributeError:  # never opened on this thread
            pass
        connections.settings.pop(alias, None)


@pytest.fixture(scope="module")
def standby(django_db_setup, django_db_blocker):
    """One standby for this module's tests, made once the test database exists (it streams every later commit),
    configured as the replica ALIAS."""
    with django_db_blocker.unblock():
        made = start_standby()
    try:
        with replica_alias(ALIAS, made.url()):
            yield made
    finally:
        stop_standby(made)


@pytest.fixture
def replica(settings, standby):
    """The standby as this process's replica (`DATABASE_REPLICA_URLS`)."""
    settings.DATABASE_REPLICAS = [ALIAS]
    yield connections[ALIAS]
    db_routing.use_primary()


@pytest.fixture(scope="module")
def _down_alias():
    with replica_alias(DOWN, UNREACHABLE_URL):
        yield


@pytest.fixture
def down_replica(settings, _down_alias):
    """A configured replica that cannot be reached."""
    settings.DATABASE_REPLICAS = [DOWN]


def replica_queries(context: CaptureQueriesContext) -> list[str]:
    """The statements a request ran on the replica but for the binding (which every request routed there runs)."""
    return [q["sql"] for q in context.captured_queries if "pg_last_wal_replay_lsn" not in q["sql"]]


@pytest.mark.slow
@ON_REPLICA
def test_the_replica_is_a_streaming_standby_reached_as_the_app_role(replica, settings):
    with replica.cursor() as cursor:
        cursor.execute("SELECT pg_is_in_recovery(), current_user")
        assert cursor.fetchone() == (True, settings.DATABASE_APP_ROLE)


@pytest.mark.slow
@ON_REPLICA
def test_reads_go_to_the_replica(replica, standby, api):
    created = api.post("/api/memories/", {"content": "Prefers green tea in the morning"}, format="json")
    assert created.status_code == 201, created.content
    standby.wait_replayed()

    with CaptureQueriesContext(replica) as on_replica:
        listed = api.get("/api/memories/")
        got = api.get(f"/api/memories/{created.json()['id']}/")
        found = api.post("/api/memories/search/", {"query": "green tea"}, format="json")
    assert listed.status_code == 200 and listed.json()["count"] == 1
    assert got.status_code == 200 and got.json()["content"] == "Prefers green tea in the morning"
    assert found.status_code == 200, found.content
    assert [r["memory"]["id"] for r in found.json()["results"]] == [created.json()["id"]]
    assert sum("memories_memory" in sql for sql in replica_queries(on_replica)) >= 3
    # every request went back to the primary when it ended
    assert db_routing.serving_replica() is None and connections[DEFAULT_DB_ALIAS].alias == DEFAULT_DB_ALIAS


@pytest.mark.slow
@ON_REPLICA
def test_a_fresh_write_is_read_back_at_once_from_the_primary(replica, standby, api, other_api):
    standby.pause()  # the replica falls behind every write from now on
    try:
        created = api.post("/api/memories/", {"content": "Moved to Lisbon in May"}, format="json")
        assert created.status_code == 201, created.content
        memory_id = created.json()["id"]
        with standby.superuser() as conn:  # the replica really does not have it
            assert conn.execute("SELECT count(*) FROM memories_memory WHERE id = %s", [memory_id]).fetchone() == (0,)

        with CaptureQueriesContext(replica) as on_replica:
            got = api.get(f"/api/memories/{memory_id}/")
            found = api.post("/api/memories/search/", {"query": "Lisbon"}, format="json")
        assert got.status_code == 200 and got.json()["content"] == "Moved to Lisbon in May"
        assert [r["memory"]["id"] for r in found.json()["results"]] == [memory_id]
        assert replica_queries(on_replica) == []  # the writer read from the primary

        # a user who wrote nothing since is served by the replica all the same
        with CaptureQueriesContext(replica) as on_replica:
            assert other_api.get("/api/memories/").json()["count"] == 0
        assert replica_queries(on_replica)
    finally:
        standby.resume()
    standby.wait_replayed()
    with CaptureQueriesContext(replica) as on_replica:  # caught up: the writer reads from the replica again
        assert api.get(f"/api/memories/{memory_id}/").status_code == 200
    assert replica_queries(on_replica)


@pytest.mark.slow
@ON_REPLICA
def test_row_level_security_holds_on_the_replica(replica, standby, api, other_api):
    mine = api.post("/api/memories/", {"content": "Allergic to peanuts"}, format="json").json()["id"]
    theirs = other_api.post("/api/memories/", {"content": "Allergic to shellfish"}, format="json").json()["id"]
    standby.wait_replayed()

    with CaptureQueriesContext(replica) as on_replica:
        assert other_api.get(f"/api/memories/{mine}/").status_code == 404
        assert [m["id"] for m in other_api.get("/api/memories/").json()["results"]] == [theirs]
        found = other_api.post("/api/memories/search/", {"query": "allergic peanuts"}, format="json").json()
        assert [r["memory"]["id"] for r in found["results"]] == [theirs]
    assert sum("memories_memory" in sql for sql in replica_queries(on_replica)) >= 3

    # the policies themselves, not only the code's owner filter: a raw count on the replica connection as the
    # binding leaves it after the other user's request sees their row alone
    with replica.cursor() as cursor:
        cursor.execute("SELECT array_agg(id::text) FROM memories_memory")
        assert cursor.fetchone()[0] == [theirs]


@pytest.mark.slow
@ON_REPLICA
def test_other_reads_run_on_the_replica_without_writing(replica, standby, api):
    """Every routed read answers from the standby (a write there would fail: it is read-only)."""
    memory = api.post("/api/memories/", {"content": "Works at Acme as a data engineer"}, format="json").json()
    conversation = api.post("/api/conversations/", {"title": "Work"}, format="json").json()
    put = api.put("/api/store/items", {"namespace": ["notes"], "key": "k1", "value": {"text": "likes jazz"}},
                  format="json")
    assert put.status_code == 204, put.content
    standby.wait_replayed()

    with CaptureQueriesContext(replica) as on_replica:
        answers = [
            api.get(f"/api/memories/{memory['id']}/history/"),
            api.get(f"/api/memories/{memory['id']}/chain/"),
            api.get("/api/conversations/"),
            api.get(f"/api/conversations/{conversation['id']}/messages/"),
            api.post("/api/chunks/search/", {"query": "engineer"}, format="json"),
            api.get("/api/store/items", {"namespace": "notes", "key": "k1", "refresh_ttl": "false"}),
            api.post("/api/store/items/search", {"namespace_prefix": ["notes"], "query": "jazz",
                                                 "refresh_ttl": False}, format="json"),
            api.post("/api/store/namespaces", {}, format="json"),
        ]
    assert [a.status_code for a in answers] == [200] * len(answers), [a.content[:200] for a in answers]
    assert answers[6].json()["items"][0]["key"] == "k1"
    assert len(replica_queries(on_replica)) >= len(answers)


@pytest.mark.slow
@ON_REPLICA
def test_reads_that_write_stay_on_the_primary(replica, standby, api):
    """A store read that refreshes TTLs writes `accessed_at`, and the context may rebuild the profile: neither
    is sent to the read-only standby."""
    assert api.put("/api/store/items", {"namespace": ["notes"], "key": "k2", "value": {"text": "likes tea"}},
                   format="json").status_code == 204
    conversation = api.post("/api/conversations/", {"title": "Tea"}, format="json").json()
    standby.wait_replayed()

    with CaptureQueriesContext(replica) as on_replica:
        answers = [
            api.get("/api/store/items", {"namespace": "notes", "key": "k2"}),
            api.post("/api/store/items/search", {"namespace_prefix": ["notes"], "query": "tea"}, format="json"),
            api.get(f"/api/conversations/{conversation['id']}/context/", {"query": "tea"}),
        ]
    assert [a.status_code for a in answers] == [200] * len(answers), [a.content[:200] for a in answers]
    assert on_replica.captured_queries == []


@pytest.mark.slow
@ON_REPLICA
def test_a_view_that_fails_on_the_replica_leaves_the_thread_on_the_primary(replica, standby, api, monkeypatch):
    from memories.views import MemoryViewSet

    seen = []

    def failing_list(self, request, *args, **kwargs):
        seen.append(connections[DEFAULT_DB_ALIAS].alias)
        raise RuntimeError("a bug in a read")

    monkeypatch.setattr(MemoryViewSet, "list", failing_list)
    with pytest.raises(RuntimeError):
        api.get("/api/memories/")
    assert seen == [ALIAS]  # it ran on the replica...
    # ...and the next statement of this thread goes to the primary again
    assert db_routing.serving_replica() is None and connections[DEFAULT_DB_ALIAS].alias == DEFAULT_DB_ALIAS
    with connections[DEFAULT_DB_ALIAS].cursor() as cursor:
        cursor.execute("SELECT pg_is_in_recovery()")
        assert cursor.fetchone() == (False,)


@ON_DOWN_REPLICA
def test_an_unreachable_replica_leaves_reads_to_the_primary(down_replica, api, caplog):
    created = api.post("/api/memories/", {"content": "Plays the cello"}, format="json")
    with caplog.at_level(logging.WARNING, logger="core.db_routing"):
        got = api.get(f"/api/memories/{created.json()['id']}/")
    assert got.status_code == 200 and got.json()["content"] == "Plays the cello"
    assert f"replica {DOWN} not used" in caplog.text


@ON_DOWN_REPLICA
def test_a_write_remembers_the_primary_position_for_its_user(down_replica, user, api):
    assert api.post("/api/memories/", {"content": "Runs on Sundays"}, format="json").status_code == 201
    written = cache.get(f"memento:written-lsn:{user.pk}")
    with connections[DEFAULT_DB_ALIAS].cursor() as cursor:
        cursor.execute("SELECT pg_current_wal_lsn()::text")
        assert 0 < written <= db_routing.lsn_value(cursor.fetchone()[0])
    # a search is a read: it leaves the position as it was
    cache.delete(f"memento:written-lsn:{user.pk}")
    assert api.post("/api/memories/search/", {"query": "Sundays"}, format="json").status_code == 200
    assert cache.get(f"memento:written-lsn:{user.pk}") is None


def test_lsn_values_order_as_postgresql_does():
    assert db_routing.lsn_value("0/16B3748") < db_routing.lsn_value("0/16B3750") < db_routing.lsn_value("1/0")
    assert db_routing.lsn_value(None) is None


def _last_app_statements(standby, app_role: str) -> list[str]:
    """What the app role's sessions on the standby ran last (web processes keep their connections)."""
    with standby.superuser() as conn:
        return [query for (query,) in conn.execute(
            "SELECT query FROM pg_stat_activity WHERE usename = %s AND datname = current_database()", [app_role])]


@pytest.mark.slow
@ON_REPLICA
def test_web_nodes_read_from_the_replica_and_share_read_your_writes(standby, shared_cache, settings):
    """Two gunicorn nodes with DATABASE_REPLICA_URLS and one Redis cache: B reads from the standby, and a write
    through A is read back through B at once although the standby has not replayed it (the position is shared)."""
    headers = {"Authorization": f"Token {token_for(UserFactory())}"}
    other = {"Authorization": f"Token {token_for(UserFactory())}"}
    with two_nodes({"DATABASE_REPLICA_URLS": standby.url(), "CACHE_URL": shared_cache}) as (a, b):
        first = requests.post(f"{a}/api/memories/", json={"content": "Keeps bees"}, headers=headers, timeout=60)
        assert first.status_code == 201
        standby.wait_replayed()
        listed = requests.get(f"{b}/api/memories/", headers=headers, timeout=60)
        assert listed.json()["count"] == 1
        assert any("memories_memory" in q for q in _last_app_statements(standby, settings.DATABASE_APP_ROLE))
        assert requests.get(f"{b}/api/memories/{first.json()['id']}/", headers=other, timeout=60).status_code == 404

        standby.pause()
        try:
            fresh = requests.post(f"{a}/api/memories/", json={"content": "Sells honey"}, headers=headers, timeout=60)
            assert fresh.status_code == 201
            got = requests.get(f"{b}/api/memories/{fresh.json()['id']}/", headers=headers, timeout=60)
            assert got.status_code == 200 and got.json()["content"] == "Sells honey"
        finally:
            standby.resume()
