"""The two database roles, and what `migrate` grants the app role.

- The **app role** (`memento`, DATABASE_URL) is what web processes log in as. It owns nothing: it reads and writes
  rows (the grants below) and row-level security always binds it. It cannot turn the policies' bypass on (they ask
  for membership of the maintenance role), cannot alter or drop a policy, table or function, and cannot become
  the maintenance role. A SQL injection in a web process therefore still sees one user's rows at most.
- The **maintenance role** (`memento_maintenance`, MAINTENANCE_DATABASE_URL) is what workers, beat, management
  commands (migrate included) and the test runner log in as. It owns the database and every table, so it runs
  migrations; the policies let it see every owner's rows when its session sets `memento.rls_bypass` (core/rls.py).

Which one a process uses is settings.DATABASE_ROLE: memento/wsgi.py chooses the app role before the settings
load; everything else is system code. This module imports nothing from Django at import time (the settings import
it through memento/embedded_db.py).
"""

APP_ROLE = "memento"
MAINTENANCE_ROLE = "memento_maintenance"


def grant_app_role_sql(app_role: str) -> list[str]:
    """Statements the tables' owner runs so that `app_role` may read and write rows of every table it has made
    and will make (kombu's broker tables too), and nothing more."""
    return [
        f"GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO {app_role}",
        f"GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA public TO {app_role}",
        f"ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT SELECT, INSERT, UPDATE, DELETE ON TABLES TO {app_role}",
        f"ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT USAGE, SELECT ON SEQUENCES TO {app_role}",
    ]


BROKER_WAITING_INDEX = "kombu_message_waiting"


def grant_app_role(using: str = "default", **kwargs) -> None:
    """post_migrate: kombu's broker tables exist (made by the owner: the app role may not create tables), and the
    app role may use every table. Nothing to do where both URLs name one role (see memento.W003)."""
    from django.conf import settings
    from django.db import connections

    connection = connections[using]
    with connection.cursor() as cursor:
        cursor.execute("SELECT current_user")
        if cursor.fetchone()[0] == settings.DATABASE_APP_ROLE:
            return
        if settings.CELERY_BROKER_URL.startswith("sqla+"):
            cursor.execute("SELECT to_regclass('kombu_message')")
            if cursor.fetchone()[0] is None:
                _create_broker_tables(connection.settings_dict)
            # A worker's poll asks for the oldest message still waiting (`visible != false ORDER BY timestamp, id`).
            # Delivered messages stay in the table (memories.retention deletes them after some days), and kombu's
            # own indexes made that poll walk past all of them: 5.7 ms a poll after a 10-minute load, longer as
            # the table grows.
            cursor.execute("DO $$ BEGIN IF to_regclass('kombu_message') IS NOT NULL THEN "
                           f"CREATE INDEX IF NOT EXISTS {BROKER_WAITING_INDEX} "
                           'ON kombu_message ("timestamp", id) WHERE visible; END IF; END $$')
        for statement in grant_app_role_sql(settings.DATABASE_APP_ROLE):
            cursor.execute(statement)


def _create_broker_tables(db: dict) -> None:
    """kombu's SQLAlchemy transport makes its tables on first use; use it once, as this connection's role."""
    from urllib.parse import quote

    from kombu import Connection
    from kombu.transport.sqlalchemy import Channel

    url = (f"postgresql+psycopg://{quote(db['USER'])}:{quote(db['PASSWORD'] or '')}@/{db['NAME']}"
           f"?host={quote(db['HOST'], safe='')}&port={db['PORT'] or 5432}")
    with Connection("sqla+" + url) as broker:
        broker.default_channel  # noqa: B018 (opening the channel is what makes the tables)
    engine, _ = Channel._engines.pop(url, (None, None))
    if engine is not None:  # an idle connection kept in kombu's cache would stop the database being dropped
        engine.dispose()
