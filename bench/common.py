"""Helpers shared by the benchmarks: a dedicated database on the app's server, Django set up against it, wiping
benchmark users, the app under gunicorn on a free port, and latency percentiles.

Benchmark data never mixes with development data: every bench works in its own database (default
`memento_bench`) on the same PostgreSQL server the app uses (the embedded one, or DATABASE_URL's server). The
maintenance role owns it (the role has CREATEDB), as it owns the app's, and the `vector` extension comes from
template1.
"""

import os
import secrets
import socket
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

ROOT = Path(__file__).resolve().parents[1]
BENCH_DATABASE = "memento_bench"


def _server_urls() -> tuple[str, str]:
    """The app role's and the maintenance role's URLs of the app's server (memento/roles.py)."""
    if "DATABASE_URL" in os.environ:
        return os.environ["DATABASE_URL"], os.environ.get("MAINTENANCE_DATABASE_URL", os.environ["DATABASE_URL"])
    from memento.embedded_db import database_urls

    return database_urls(ROOT / ".memento" / "pgdata")


def bench_database_url(name: str = BENCH_DATABASE, *, role: str = "maintenance") -> str:
    """URL of database `name` on the app's server as `role` (app or maintenance), created (owned by the
    maintenance role) when missing."""
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    import psycopg

    app, maintenance = _server_urls()
    with psycopg.connect(maintenance, autocommit=True) as conn:
        if not conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone():
            conn.execute(f'CREATE DATABASE "{name}"')
    return urlunsplit(urlsplit(app if role == "app" else maintenance)._replace(path=f"/{name}"))


def setup_django(name: str = BENCH_DATABASE, *, migrate: bool = True) -> str:
    """Point the settings at the bench database `name` (before Django is set up), set Django up and migrate.
    Returns the database URL web processes use (the app role's; this process is the maintenance role)."""
    os.environ["MAINTENANCE_DATABASE_URL"] = bench_database_url(name)
    url = os.environ["DATABASE_URL"] = bench_database_url(name, role="app")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memento.settings")
    # The servers and workers a bench starts refuse the public default key (memento.E002); a bench needs no
    # stable one, so a checkout where `serve` never made its key gets a throwaway key for this run.
    os.environ.setdefault("DJANGO_SECRET_KEY", secrets.token_urlsafe(50))
    import django

    django.setup()
    if migrate:
        from django.core.management import call_command

        call_command("migrate", verbosity=0)
    return url


def wipe_users(prefix: str) -> int:
    """Delete the bench users whose username starts with `prefix`, with all their rows. Raw deletes (this is a
    bench database; no history rows are wanted for the wipe). Returns how many users went."""
    from django.contrib.auth import get_user_model
    from django.db import connection, transaction

    from core import rls

    User = get_user_model()
    ids = list(User.objects.filter(username__startswith=prefix).values_list("pk", flat=True))
    if not ids:
        return 0
    rls.activate(None, bypass=True)
    with transaction.atomic(), connection.cursor() as cursor:
        for table in ("store_itemvector", "memories_memoryevent", "memories_memoryhistory", "memories_memory"):
            cursor.execute(f"DELETE FROM {table} WHERE owner_id = ANY(%s)", [ids])
        User.objects.filter(pk__in=ids).delete()
    return len(ids)


def progress(iterable=None, **kwargs):
    """tqdm on stderr (figures go to stdout)."""
    from tqdm import tqdm

    return tqdm(iterable, file=sys.stderr, dynamic_ncols=True, **kwargs)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_until_up(url: str, process: subprocess.Popen) -> None:
    """A read timeout counts as not up yet, like a refused connection."""
    import requests

    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise SystemExit(f"the server exited with {process.returncode}")
        try:
            requests.get(f"{url}/api/schema/", timeout=2)
            return
        except (requests.ConnectionError, requests.Timeout):
            time.sleep(0.25)
    raise SystemExit(f"{url} did not come up")


@contextmanager
def gunicorn(database_url: str, *, workers: int, threads: int, extra_args: tuple[str, ...] = (),
             env: dict[str, str] | None = None):
    """The app under gunicorn on a free port and `database_url`, up (its schema answers) for the length of the
    block; yields its base URL."""
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", "memento.wsgi:application", "--bind", f"127.0.0.1:{port}",
         "--workers", str(workers), "--threads", str(threads), *extra_args],
        cwd=ROOT, env={**os.environ, "DATABASE_URL": database_url, **(env or {})},
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        wait_until_up(url, server)
        yield url
    finally:
        server.terminate()
        server.wait(timeout=30)


def percentile(values: list[float], q: float) -> float:
    """The nearest-rank `q`th percentile (0-100) of `values`."""
    values = sorted(values)
    return values[min(len(values) - 1, int(round(q / 100 * (len(values) - 1))))]


def describe(samples: list[float]) -> str:
    """Latency samples in seconds as p50/p95/p99 in milliseconds."""
    ms = [s * 1000 for s in samples]
    return (f"p50 {percentile(ms, 50):6.1f} ms  p95 {percentile(ms, 95):6.1f} ms  p99 {percentile(ms, 99):6.1f} ms"
            f"  (n={len(ms)})")
