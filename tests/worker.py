"""A real Celery worker process for pipeline tests, on the PostgreSQL transport and (when redis-server is
installed, as in CI) on a real Redis broker. Its fixtures reach every test through `pytest_plugins` in
tests/conftest.py; its helpers are imported from here."""

import os
import subprocess
import sys
import threading
import time
from contextlib import contextmanager

import kombu.pools
import pytest
from django.conf import settings

from memento.celery import app as celery_app
from tests.redis_server import redis_server
from tests.web import database_env, database_url, stop


@pytest.fixture
def eager():
    """Tasks run inline, in this process (`.delay()` returns an EagerResult)."""
    celery_app.conf.task_always_eager = True
    yield
    celery_app.conf.task_always_eager = False


@pytest.fixture(scope="session")
def redis_url():
    """A throw-away redis-server on a free port, or None when Redis is not installed (CI requires it)."""
    with redis_server() as url:
        if url is None and os.environ.get("CI"):
            pytest.fail("CI must run the pipeline tests against Redis: install redis-server (.ci/run does).")
        yield url


def use_broker(url: str) -> tuple[str, dict]:
    """Point this process's Celery app at `url`, so that `.delay()` from the code under test reaches the worker
    started on it. Returns the previous (broker_url, broker_transport_options) for `use_broker(*previous)`.

    kombu keeps connection and producer pools in process-wide registries keyed by the broker URL; closing one
    and later pointing back at that URL hands out the closed pool ("Acquire on closed pool"). `kombu.pools.reset()`
    closes *and forgets* them, and the app's own caches are dropped, so the next publish opens a fresh connection.
    """
    previous = (celery_app.conf.broker_url, dict(celery_app.conf.broker_transport_options or {}))
    celery_app.conf.broker_url = url
    # kombu's SQLAlchemy transport passes every transport option to create_engine(), which rejects the rest
    celery_app.conf.broker_transport_options = {} if url.startswith("sqla+") else previous[1]
    kombu.pools.reset()
    celery_app._pool = None
    celery_app.amqp._producer_pool = None
    return previous


def restore_broker(previous: tuple[str, dict]) -> None:
    url, options = previous
    use_broker(url)
    celery_app.conf.broker_transport_options = options
    # the SQLAlchemy transport caches one engine per URL for the whole process; its idle connections to the
    # test database would stop pytest from dropping it
    from kombu.transport.sqlalchemy import Channel

    for engine, _ in Channel._engines.values():
        engine.dispose()
    Channel._engines.clear()


def broker_for(kind: str, redis: str | None) -> str:
    """The broker URL of a `celery_worker` param: Redis, or kombu's SQLAlchemy transport on the test database."""
    if kind == "redis":
        return redis
    return "sqla+" + database_url().replace("postgresql://", "postgresql+psycopg://", 1)


def start_celery_worker(broker: str, *, extra_args: tuple[str, ...] = (), ready_timeout: float = 120.0):
    """Start `celery -A memento worker` on the test database and `broker`; returns the process once the worker
    says it is ready. Its output is drained into `process.log` (a full pipe would block its logging)."""
    env = {**os.environ, **database_env(), "CELERY_BROKER_URL": broker}
    process = subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "memento", "worker", "--pool", "solo", "--loglevel", "INFO",
         "--without-gossip", "--without-mingle", "--without-heartbeat", *extra_args],
        cwd=settings.BASE_DIR, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )
    log: list[str] = []
    deadline = time.monotonic() + ready_timeout
    while time.monotonic() < deadline:
        line = process.stdout.readline()
        if not line and process.poll() is not None:
            raise AssertionError("the worker exited:\n" + "".join(log))
        log.append(line)
        if " ready." in line:
            break
    else:
        stop(process)
        raise AssertionError("the worker did not become ready:\n" + "".join(log))
    threading.Thread(target=lambda: [log.append(line) for line in process.stdout], daemon=True).start()
    process.log = log
    return process


@pytest.fixture(params=["postgres", "redis"])
def celery_worker(request, transactional_db, redis_url):
    """A real `celery -A memento worker` process on the test database and the chosen broker (kombu's SQLAlchemy
    transport on PostgreSQL, or Redis), with this process's Celery app pointed at the same broker."""
    if request.param == "redis" and redis_url is None:
        pytest.skip("redis-server is not installed")
    with running_worker(request.param, redis_url) as process:
        yield process


@contextmanager
def running_worker(kind: str, redis: str | None = None):
    """A worker process on broker `kind` for the length of the block, with this process's Celery app on it too."""
    broker = broker_for(kind, redis)
    previous = use_broker(broker)
    try:
        process = start_celery_worker(broker)
    except BaseException:
        restore_broker(previous)
        raise
    try:
        yield process
    finally:
        stop(process)
        restore_broker(previous)


def wait_for(predicate, timeout: float = 600.0, interval: float = 0.2, worker=None):
    """Poll until `predicate()` is truthy (the worker is another process: there is nothing to join). With
    `worker`, a timeout shows the end of its log. A worker's first extraction loads the parser and the attribute
    frames (about a minute on a loaded 2-core machine, several when other work shares it), hence the generous
    timeout."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(interval)
    tail = "".join(getattr(worker, "log", [])[-60:]) if worker is not None else ""
    raise AssertionError("timed out waiting for the worker" + (f"; its log ends:\n{tail}" if tail else ""))
