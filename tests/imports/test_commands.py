"""`manage.py import_history FILE --user NAME`: the same checks and writes as the API, a progress bar, a summary;
a LangGraph PostgresStore read from its DSN."""

import io
import uuid

import psycopg
import pytest
from django.core.management import CommandError, call_command
from langgraph.store.postgres import PostgresStore

from conversations.models import Conversation
from memories.models import Memory
from tests.imports.samples import SAMPLES, data, dumps
from tests.web import database_url


def run(*args) -> str:
    out, err = io.StringIO(), io.StringIO()
    call_command("import_history", *args, stdout=out, stderr=err)
    return out.getvalue() + err.getvalue()


def test_an_export_file_is_imported_with_a_summary(user):
    output = run(str(SAMPLES / "chatgpt_conversations.json"), "--user", user.username)
    assert "completed: 2 conversations (6 messages), 0 memories, 0 already imported" in output
    assert "2/2" in output  # the progress bar
    again = run(str(SAMPLES / "chatgpt_conversations.json"), "--user", user.username, "--no-progress")
    assert "0 conversations (0 messages), 0 memories, 2 already imported" in again
    assert Conversation.objects.filter(owner=user).count() == 2


def test_a_bad_item_stops_the_command_and_writes_nothing(user, tmp_path):
    export = data("mem0")
    export["results"][1]["created_at"] = "0001-01-01T00:00:00+05:00"
    path = tmp_path / "mem0.json"
    path.write_bytes(dumps(export))
    with pytest.raises(CommandError, match=r"item 2: created_at: .* outside the years 1 to 9999 in UTC"):
        run(str(path), "--user", user.username)
    assert not Memory.objects.filter(owner=user).exists()
    output = run(str(path), "--user", user.username, "--skip-bad", "--no-progress")
    assert "1 memories" in output and "1 bad items skipped" in output and "skipped item 2: created_at" in output


def test_unknown_user_or_file(user):
    with pytest.raises(CommandError, match="No user 'nobody'"):
        run(str(SAMPLES / "mem0_memories.json"), "--user", "nobody")
    with pytest.raises(CommandError, match="No file"):
        run("/nonexistent/export.json", "--user", user.username)


@pytest.fixture
def postgres_store():
    """A real LangGraph PostgresStore in a schema of its own on the test server; yields its DSN."""
    schema = f"lgstore_{uuid.uuid4().hex[:8]}"
    admin = database_url()
    with psycopg.connect(admin, autocommit=True) as connection:
        connection.execute(f"CREATE SCHEMA {schema}")
    dsn = f"{admin}&options=-csearch_path%3D{schema}"
    try:
        with PostgresStore.from_conn_string(dsn) as store:
            store.setup()
            store.put(("users", "ana", "profile"), "employer", {"content": "Works at a lighthouse museum in Brest"})
            store.put(("users", "ana", "notes"), "n1", {"text": "Plays the bandoneon on Sundays"})
        yield dsn
    finally:
        with psycopg.connect(admin, autocommit=True) as connection:
            connection.execute(f"DROP SCHEMA {schema} CASCADE")


def test_a_langgraph_postgres_store_is_read_from_its_dsn(user, postgres_store):
    output = run(postgres_store, "--user", user.username, "--format", "langgraph", "--no-progress")
    assert "2 memories" in output
    employer = Memory.objects.get(owner=user, namespace=["users", "ana", "profile"], key="employer")
    assert employer.content == "Works at a lighthouse museum in Brest"
    assert employer.source == "import" and employer.source_ref["source"] == "langgraph"
    note = Memory.objects.get(owner=user, key="n1")
    assert note.value == {"text": "Plays the bandoneon on Sundays"} and note.created_at.year >= 2024
    again = run(postgres_store, "--user", user.username, "--no-progress")
    assert "2 already imported" in again


def test_a_dsn_that_cannot_be_read_is_said_plainly(user):
    with pytest.raises(CommandError, match="Could not read the LangGraph store"):
        run(f"{database_url()}&options=-csearch_path%3Dno_such_schema", "--user", user.username)
