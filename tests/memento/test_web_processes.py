"""Two independent gunicorn processes serve the same data: web processes keep no state of their own."""

import os
import socket
import subprocess
import sys
import time
from urllib.parse import quote

import pytest
import requests
from django.conf import settings
from django.db import connection
from rest_framework.authtoken.models import Token

from tests.factories import UserFactory


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _database_url() -> str:
    db = connection.settings_dict
    return (
        f"postgresql://{quote(db['USER'])}:{quote(db['PASSWORD'] or '')}@/{db['NAME']}"
        f"?host={quote(db['HOST'], safe='')}&port={db['PORT'] or 5432}"
    )


def _start_gunicorn(port: int) -> subprocess.Popen:
    env = {**os.environ, "DATABASE_URL": _database_url(), "DJANGO_ALLOWED_HOSTS": "127.0.0.1"}
    return subprocess.Popen(
        [sys.executable, "-m", "gunicorn", "memento.wsgi:application", "--bind", f"127.0.0.1:{port}",
         "--workers", "1", "--threads", "2"],
        cwd=settings.BASE_DIR, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )


def _wait_until_up(base: str, process: subprocess.Popen) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        assert process.poll() is None, process.stderr.read().decode()
        try:
            requests.get(f"{base}/api/schema/", timeout=2)
            return
        except requests.ConnectionError:
            time.sleep(0.3)
    raise AssertionError(f"{base} did not come up")


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_two_gunicorn_processes_serve_the_same_data():
    user = UserFactory()
    other = UserFactory()
    headers = {"Authorization": f"Token {Token.objects.create(user=user).key}"}
    other_headers = {"Authorization": f"Token {Token.objects.create(user=other).key}"}
    ports = [_free_port(), _free_port()]
    processes = [_start_gunicorn(port) for port in ports]
    try:
        a, b = (f"http://127.0.0.1:{port}" for port in ports)
        for base, process in zip((a, b), processes, strict=True):
            _wait_until_up(base, process)

        created = requests.post(f"{a}/api/memories/", json={"content": "Prefers tea over coffee"}, headers=headers)
        assert created.status_code == 201, created.text
        memory_id = created.json()["id"]

        seen = requests.get(f"{b}/api/memories/{memory_id}/", headers=headers)
        assert seen.status_code == 200
        assert seen.json()["content"] == "Prefers tea over coffee"

        patched = requests.patch(f"{b}/api/memories/{memory_id}/", json={"content": "Prefers green tea"},
                                 headers=headers)
        assert patched.status_code == 200
        assert requests.get(f"{a}/api/memories/{memory_id}/", headers=headers).json()["version"] == 2

        # and each process still keeps users apart
        assert requests.get(f"{a}/api/memories/{memory_id}/", headers=other_headers).status_code == 404
        assert requests.get(f"{b}/api/memories/", headers=other_headers).json()["count"] == 0
    finally:
        for process in processes:
            process.terminate()
            process.wait(timeout=30)
