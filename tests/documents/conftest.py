import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from tests.conversations.conftest import celery_worker, redis_url  # noqa: F401 - fixtures reused here


@pytest.fixture(autouse=True)
def media_root(settings, tmp_path, monkeypatch):
    """Uploads go to a throw-away MEDIA_ROOT (also for worker processes the test starts)."""
    root = tmp_path / "media"
    root.mkdir()
    settings.MEDIA_ROOT = str(root)
    monkeypatch.setenv("MEDIA_ROOT", str(root))
    return root


def close(a, b, tolerance: float = 1e-3) -> bool:
    """Two embeddings equal up to float noise (batch composition changes the last digits)."""
    return len(a) == len(b) and max(abs(x - y) for x, y in zip(a, b, strict=True)) < tolerance


def upload(name: str, data: bytes, content_type: str = "application/octet-stream") -> SimpleUploadedFile:
    return SimpleUploadedFile(name, data, content_type=content_type)


def start_worker(log: list[str]):
    """A `celery -A memento worker` process on the PostgreSQL transport against the test database, ready."""
    import os
    import subprocess
    import sys
    import threading
    import time

    from django.conf import settings

    from memento.celery import app as celery_app
    from tests.conversations.conftest import test_database_url

    database_url = test_database_url()
    broker = "sqla+" + database_url.replace("postgresql://", "postgresql+psycopg://", 1)
    celery_app.conf.broker_url = broker
    celery_app.pool.force_close_all()
    celery_app._pool = None
    env = {**os.environ, "DATABASE_URL": database_url, "CELERY_BROKER_URL": broker}
    process = subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "memento", "worker", "--pool", "solo", "--loglevel", "INFO",
         "--without-gossip", "--without-mingle", "--without-heartbeat"],
        cwd=settings.BASE_DIR, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )
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
    threading.Thread(target=lambda: [log.append(line) for line in process.stdout], daemon=True).start()
    return process
