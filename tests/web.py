"""Real gunicorn web processes on the test database, for tests that need the app served as in production
(row-level security enforced by default, several threads, nothing shared with the test process)."""

import os
import socket
import subprocess
import sys
import threading
import time
from contextlib import contextmanager
from urllib.parse import quote, urlsplit, urlunsplit

import requests
from django.conf import settings
from django.db import connection


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def database_url() -> str:
    """The test database, as this process connects to it (the maintenance role)."""
    db = connection.settings_dict
    return (
        f"postgresql://{quote(db['USER'])}:{quote(db['PASSWORD'] or '')}@/{db['NAME']}"
        f"?host={quote(db['HOST'], safe='')}&port={db['PORT'] or 5432}"
    )


def app_database_url() -> str:
    """The test database as web processes connect to it: DATABASE_URL's role (the app role)."""
    return urlunsplit(urlsplit(settings.DATABASE_URL)._replace(path=f"/{connection.settings_dict['NAME']}"))


def database_env() -> dict[str, str]:
    """The environment of a process the tests start: both roles' URLs, on the test database."""
    return {"DATABASE_URL": app_database_url(), "MAINTENANCE_DATABASE_URL": database_url()}


def start_gunicorn(port: int, *, threads: int = 2, env: dict[str, str] | None = None) -> subprocess.Popen:
    """`gunicorn memento.wsgi` on 127.0.0.1:`port`, serving the test database (with `env` added to its
    environment); returns once it answers. Its error log is drained into `process.log` (a full pipe would block
    it)."""
    env = {**os.environ, **database_env(), "DJANGO_ALLOWED_HOSTS": "127.0.0.1", **(env or {})}
    process = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", "memento.wsgi:application", "--bind", f"127.0.0.1:{port}",
         "--workers", "1", "--threads", str(threads)],
        cwd=settings.BASE_DIR, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )
    process.log = []
    threading.Thread(target=lambda: process.log.extend(process.stderr), daemon=True).start()
    try:
        wait_until_up(f"http://127.0.0.1:{port}", process)
    except BaseException:
        stop(process)
        raise
    return process


def wait_until_up(base: str, process: subprocess.Popen) -> None:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if process.poll() is not None:
            time.sleep(0.5)  # let the drain thread read the last lines
            raise AssertionError("gunicorn exited:\n" + "".join(process.log[-60:]))
        try:
            requests.get(f"{base}/api/schema/", timeout=5)
            return
        except (requests.ConnectionError, requests.Timeout):  # not listening yet, or still loading the app
            time.sleep(0.3)
    raise AssertionError(f"{base} did not come up")


def stop(process: subprocess.Popen) -> None:
    process.terminate()
    try:
        process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=10)


@contextmanager
def two_nodes(env: dict[str, str]):
    """Two gunicorn web processes with the same environment added (two nodes of one service); yields their base
    URLs."""
    ports, processes = [free_port(), free_port()], []
    try:
        for port in ports:
            processes.append(start_gunicorn(port, env=env))
        yield [f"http://127.0.0.1:{port}" for port in ports]
    finally:
        for process in processes:
            stop(process)
