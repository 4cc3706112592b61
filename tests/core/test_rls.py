"""Row-level security: the database itself hides other users' rows, whatever the ORM query says."""

import json
import os
import re

import pytest
from django.db import connection

from core import rls
from memento.embedded_db import OWNER_LEXEMES, TS_MATCH
from memories import selectors
from memories.models import Memory
from memories.selectors import MemoryFilters
from tests.factories import MemoryFactory, UserFactory


@pytest.fixture
def two_owners(user, other_user):
    mine = MemoryFactory(owner=user, content="my secret")
    theirs = MemoryFactory(owner=other_user, content="their secret")
    return mine, theirs


def test_app_role_is_not_allowed_to_bypass_policies(db):
    with connection.cursor() as cursor:
        cursor.execute("SELECT rolsuper, rolbypassrls FROM pg_roles WHERE rolname = current_user")
        assert cursor.fetchone() == (False, False)


def test_unfiltered_orm_query_returns_only_the_current_users_rows(two_owners, user):
    mine, theirs = two_owners
    with rls.as_user(user.pk):
        assert list(Memory.objects.all()) == [mine]
        assert Memory.objects.filter(pk=theirs.pk).count() == 0
        assert Memory.history.model.objects.filter(id=theirs.pk).count() == 0


@pytest.fixture
def web_role_cursor(transactional_db):
    """A cursor on the test database as web processes connect (DATABASE_URL's role), outside this test's
    connection: what a SQL injection in a web request could run."""
    import psycopg

    from tests.web import app_database_url

    with psycopg.connect(app_database_url(), autocommit=True) as conn:
        yield conn.cursor()


def test_a_web_connection_cannot_turn_the_bypass_on(web_role_cursor, user, other_user):
    mine = MemoryFactory(owner=user, content="my secret")
    MemoryFactory(owner=other_user, content="their secret")
    cursor = web_role_cursor
    cursor.execute("SELECT set_config('memento.user_id', %s, false)", [str(user.pk)])
    cursor.execute("SET memento.rls_bypass = 'on'")
    cursor.execute("SELECT id FROM memories_memory")
    assert [row[0] for row in cursor.fetchall()] == [mine.pk]
    cursor.execute("SET memento.user_id = ''")
    for table in ("memories_memory", "memories_memoryhistory", "memories_project", "conversations_message",
                  "documents_chunk", "store_itemvector"):
        cursor.execute(f"SELECT count(*) FROM {table}")
        assert cursor.fetchone()[0] == 0, table


@pytest.mark.parametrize("statement", [
    "SET ROLE memento_maintenance",
    "ALTER TABLE memories_memory NO FORCE ROW LEVEL SECURITY",
    "ALTER TABLE memories_memory DISABLE ROW LEVEL SECURITY",
    "DROP POLICY owner_only ON memories_memory",
    "ALTER POLICY owner_only ON memories_memory USING (true)",
    "CREATE TABLE escape (id int)",
    "CREATE OR REPLACE FUNCTION memento_owner_visible(owner bigint) RETURNS boolean LANGUAGE sql AS 'SELECT true'",
])
def test_the_web_role_cannot_get_around_the_policies(web_role_cursor, statement):
    import psycopg

    with pytest.raises(psycopg.errors.InsufficientPrivilege):
        web_role_cursor.execute(statement)


def test_the_web_role_reads_and_writes_rows_and_asks_which_ids_are_taken(web_role_cursor, user, other_user):
    theirs = MemoryFactory(owner=other_user)
    cursor = web_role_cursor
    cursor.execute("SELECT set_config('memento.user_id', %s, false)", [str(user.pk)])
    cursor.execute("UPDATE memories_project SET name = name")  # privileges on the rows, none visible to change
    cursor.execute("SELECT * FROM memento_taken_memory_ids(ARRAY[%s]::uuid[])", [theirs.pk])
    assert [row[0] for row in cursor.fetchall()] == [theirs.pk]
    cursor.execute("SELECT current_setting('memento.rls_bypass', true)")
    assert cursor.fetchone()[0] in (None, "", "off")


def test_no_user_means_no_rows(two_owners):
    rls.activate(None)
    try:
        assert Memory.objects.count() == 0
    finally:
        rls.reset()


def test_writing_a_row_for_another_user_is_refused(two_owners, user, other_user):
    from django.db import DatabaseError, transaction

    with rls.as_user(user.pk):
        with pytest.raises(DatabaseError, match="row-level security"):
            with transaction.atomic():
                MemoryFactory(owner=other_user)


def test_system_processes_bypass_and_see_everything(two_owners):
    # Outside a request, workers and commands run as the system (scoping in code).
    assert Memory.objects.count() == 2


def test_a_streamed_api_response_is_read_as_its_user(two_owners, api, monkeypatch):
    """As in a gunicorn process, where a connection outside a request sees nothing: the export is streamed after
    the middleware has left the request, and must still see the caller's rows (and only those)."""
    import json

    mine, _ = two_owners
    monkeypatch.setattr(rls, "_process_default_bypass", False)
    rls.reset()
    try:
        response = api.get("/api/memories/export/")
        assert response.status_code == 200
        lines = b"".join(response.streaming_content).decode().splitlines()
        assert [json.loads(line)["id"] for line in lines] == [str(mine.pk)]
        assert Memory.objects.count() == 0  # and the session is unbound again once the body is read
    finally:
        monkeypatch.undo()
        rls.reset()


@pytest.mark.skipif("DATABASE_URL" in os.environ, reason="the app sets up only its embedded server")
@pytest.mark.parametrize("function", [TS_MATCH, OWNER_LEXEMES])
def test_the_embedded_server_marks_full_text_matching_leakproof(db, function):
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT proleakproof FROM pg_proc WHERE oid = '{function}'::regprocedure")
        assert cursor.fetchone()[0] is True


@pytest.mark.skipif("DATABASE_URL" in os.environ, reason="the app sets up only its embedded server")
def test_a_users_keyword_match_is_looked_up_in_the_full_text_index_under_rls(two_owners, user):
    """Without LEAKPROOF matching, PostgreSQL must apply the policy before `@@`, so the full-text index cannot
    answer the match and every visible row is read and matched instead."""
    from django.db import transaction

    with rls.as_user(user.pk), transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SET LOCAL enable_seqscan = off")  # a handful of rows would otherwise be read in full
        cursor.execute("SET LOCAL enable_indexscan = off")
        cursor.execute("EXPLAIN SELECT id FROM memories_memory "
                       "WHERE memento_owner_lexemes(owner_id, search_vector) @@ %s::tsquery", [f"'{user.pk}:secret'"])
        plan = "\n".join(row[0] for row in cursor.fetchall())
    assert "Index Cond: (memento_owner_lexemes(" in plan, plan


def _bound_user() -> str:
    with connection.cursor() as cursor:
        cursor.execute("SELECT current_setting('memento.user_id'), current_setting('memento.rls_bypass')")
        return cursor.fetchone()


# --- the binding's round trips ----------------------------------------------------------------------------------


def test_a_binding_already_in_force_is_not_sent_again_but_one_a_rollback_undid_is(transactional_db, user):
    from django.db import transaction
    from django.test.utils import CaptureQueriesContext

    rls.activate(None)
    with CaptureQueriesContext(connection) as sent:
        rls.activate(None)  # made outside any transaction on this connection: in force
    assert len(sent) == 0
    with pytest.raises(RuntimeError), transaction.atomic():
        rls.activate(user.pk)
        raise RuntimeError  # the rollback undoes the setting: PostgreSQL shows nobody again
    assert _bound_user()[0] == ""
    rls.activate(user.pk)
    assert _bound_user()[0] == str(user.pk)
    connection.close()  # a new connection starts from the process default (bypass, in the test process)
    rls.activate(user.pk)
    assert _bound_user() == (str(user.pk), "off")
    rls.reset()


def test_a_read_is_unbound_only_after_its_after_response_write(transactional_db, api, user, monkeypatch):
    """As in a gunicorn process: the middleware leaves the token's binding to the read's bookkeeping (written when
    the response is closed), which records the read as that user and then unbinds the session."""
    from memories.models import MemoryEvent

    memory = MemoryFactory(owner=user)
    monkeypatch.setattr(rls, "_process_default_bypass", False)
    rls.reset()
    try:
        assert api.get(f"/api/memories/{memory.pk}/").status_code == 200
        assert _bound_user() == ("", "off")
        assert Memory.objects.count() == 0  # outside a request: nothing
        with rls.as_user(user.pk):
            assert MemoryEvent.objects.filter(memory=memory, action=MemoryEvent.Action.READ).count() == 1
            assert Memory.objects.get(pk=memory.pk).accessed_at is not None
        assert api.get("/api/memories/").status_code == 200  # no bookkeeping: the middleware unbinds
        assert _bound_user() == ("", "off")
    finally:
        monkeypatch.undo()
        rls.reset()


def test_the_planner_does_not_count_the_owner_twice(user):
    """Every owner-scoped query says `owner_id = <id>` itself, and the policy says it again. Estimated as two
    equalities, the owner's share of the table counted twice: a user's 300 rows of 3,000 were expected to be ~30 (~8
    of ~900 in a table of 100k), and a list page could be planned as "read them all and sort" instead of reading 20
    in (owner, created_at) order (memories migration 0015)."""
    owners = UserFactory.create_batch(200)
    Memory.objects.bulk_create(
        [Memory(owner=owner, content="someone else's", key=f"k{owner.pk}-{i}") for owner in owners for i in range(14)]
        + [Memory(owner=user, content=f"mine {i}", key=f"mine-{i}") for i in range(300)])
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE memories_memory")
    with rls.as_user(user.pk):
        page = selectors.memory_list(owner=user, filters=MemoryFilters())[:20]
        sql, params = page.query.sql_with_params()
        with connection.cursor() as cursor:
            cursor.execute(f"EXPLAIN (FORMAT JSON) {sql}", params)
            plan = json.dumps(cursor.fetchone()[0])
    scans = [int(rows) for rows in re.findall(r'"Relation Name": "memories_memory".*?"Plan Rows": (\d+)', plan)]
    assert scans and scans[0] >= 60  # a third of 300 for the policy's call; a tenth when it was an equality
    assert '"Node Type": "Sort"' not in plan and "memory_owner_created" in plan


def test_an_anonymous_request_that_reads_nothing_never_touches_the_database(client, monkeypatch, django_db_blocker):
    """The API schema and docs need no database: built while PostgreSQL was down, the schema logged a traceback.
    A web process's connections start bound to nobody, so an anonymous request has nothing to bind."""
    from django.db import connection

    from core import rls

    monkeypatch.setattr(rls, "_process_default_bypass", False)  # as in a web process (enforce_by_default)
    connection.close()
    with django_db_blocker.block():  # any database access raises
        assert client.get("/api/schema/").status_code == 200
        assert client.get("/api/docs/").status_code == 200
