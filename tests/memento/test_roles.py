"""What `migrate` leaves for the app role and the broker (memento/roles.py)."""

from django.db import connection

from memento.roles import BROKER_WAITING_INDEX, grant_app_role


def test_the_workers_poll_for_waiting_messages_can_use_the_partial_index(db, settings):
    """kombu's poll (its SQL as PostgreSQL logs it) finds waiting messages through the index of waiting ones,
    not by walking past every delivered message kept in the table."""
    settings.CELERY_BROKER_URL = "sqla+postgresql+psycopg://unused"  # the default broker: its tables and index
    with connection.cursor() as cursor:  # kombu's table, as far as the poll reads it (rolled back with the test)
        cursor.execute('CREATE TABLE IF NOT EXISTS kombu_message (id serial PRIMARY KEY, queue_id integer, '
                       'visible boolean, "timestamp" timestamp, payload text)')
    grant_app_role()
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL enable_seqscan = off")  # a near-empty table: make the planner show its options
        cursor.execute(
            "EXPLAIN SELECT kombu_message.id FROM kombu_message WHERE kombu_message.queue_id = 1 "
            "AND kombu_message.visible != false ORDER BY kombu_message.timestamp, kombu_message.id LIMIT 1 FOR UPDATE")
        plan = "\n".join(row[0] for row in cursor.fetchall())
    assert BROKER_WAITING_INDEX in plan
