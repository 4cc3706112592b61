"""A real Celery worker process for pipeline tests, on the PostgreSQL transport and (when redis-server is
installed, as in CI) on a real Redis broker."""

import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from urllib.parse import quote

import pytest
from django.conf import settings
from django.db import connection

from memento.celery import app as celery_app


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_database_url() -> str:
    db = connection.settings_dict
    return (
        f"postgresql://{quote(db['USER'])}:{quote(db['PASSWORD'] or '')}@/{db['NAME']}"
        f"?host={quote(db['HOST'], safe='')}&port={db['PORT'] or 5432}"
    )


@pytest.fixture(scope="session")
def redis_url():
    """A throw-away redis-server on a free port, or None when Redis is not installed (CI requires it)."""
    binary = shutil.which("redis-server")
    if binary is None:
        if os.environ.get("CI"):
            pytest.fail("CI must run the pipeline tests against Redis: install redis-server (.ci/run does).")
        yield None
        return
    port = _free_port()
    workdir = tempfile.mkdtemp(prefix="memento-redis-")
    process = subprocess.Popen([binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly",
                                "no", "--dir", workdir], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            break
        except OSError:
            time.sleep(0.05)
    yield f"redis://127.0.0.1:{port}/0"
    process.terminate()
    process.wait(timeout=10)
    shutil.rmtree(workdir, ignore_errors=True)


@pytest.fixture(params=["postgres", "redis"])
def celery_worker(request, transactional_db, redis_url):
    """Start `celery -A memento worker` against the test database and the chosen broker; point this process's
    Celery app at the same broker so that `.delay()` from the code under test reaches it."""
    if request.param == "redis" and redis_url is None:
        pytest.skip("redis-server is not installed")
    database_url = test_database_url()
    broker = redis_url if request.param == "redis" else (
        "sqla+" + database_url.replace("postgresql://", "postgresql+psycopg://", 1)
    )
    previous = celery_app.conf.broker_url
    celery_app.conf.broker_url = broker
    celery_app.pool.force_close_all()
    celery_app._pool = None
    env = {**os.environ, "DATABASE_URL": database_url, "CELERY_BROKER_URL": broker}
    process = subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "memento", "worker", "--pool", "solo", "--loglevel", "INFO",
         "--without-gossip", "--without-mingle", "--without-heartbeat"],
        cwd=settings.BASE_DIR, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )
    log: list[str] = []
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        line = process.stdout.readline()
        if not line and process.poll() is not None:
            raise AssertionError("the worker exited:\n" + "".join(log))
        log.append(line)
        if " ready." in line:
            break
    else:
        raise AssertionError("the worker did not become ready:\n" + "".join(log))
    # keep draining its output, or a full pipe would block the worker's logging
    threading.Thread(target=lambda: [log.append(line) for line in process.stdout], daemon=True).start()
    process.log = log
    yield process
    process.terminate()
    try:
        process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        process.kill()
    celery_app.conf.broker_url = previous
    celery_app.pool.force_close_all()
    celery_app._pool = None


def wait_for(predicate, timeout: float = 60.0, interval: float = 0.2):
    """Poll until `predicate()` is truthy (the worker is another process: there is nothing to join)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(interval)
    raise AssertionError("timed out waiting for the worker")
