"""`serve`'s demo login and local secret key: only on loopback, a random password shown once, never a fixed one.
(The processes it starts are tested through tests/web.py; this covers what it prepares before them.)"""

import os
import stat

import pytest
from django.contrib.auth import authenticate, get_user_model
from django.core.management import call_command
from django.core.management.base import SystemCheckError
from django.test import RequestFactory

from memento.management.commands import serve


@pytest.mark.parametrize(("host", "local"), [
    ("127.0.0.1", True), ("localhost", True), ("::1", True), ("127.0.0.2", True),
    ("0.0.0.0", False), ("", False), ("::", False), ("192.168.1.10", False), ("memento.example.com", False),
])
def test_loopback_addresses(host, local):
    assert serve.is_loopback(host) is local


def test_the_demo_login_is_made_on_loopback_with_a_random_password_shown_once(db):
    banner = serve.login_lines("127.0.0.1", "http://127.0.0.1:8000")
    user = get_user_model().objects.get(username="demo")
    assert user.is_superuser
    password = banner.split("login demo / ")[1].split()[0]
    assert password != "memento-demo" and len(password) >= 16
    request = RequestFactory().post("/accounts/login/")
    assert authenticate(request, username="demo", password=password) == user
    again = serve.login_lines("127.0.0.1", "http://127.0.0.1:8000")
    assert password not in again and "login demo " in again
    from rest_framework.test import APIClient

    keys = [text.split("'Authorization: Token ")[1].split("'")[0] for text in (banner, again)]
    for key in keys:  # a new hashed token each start; the one printed before keeps working
        assert APIClient(HTTP_AUTHORIZATION=f"Token {key}").get("/api/memories/").status_code == 200


def test_two_checkouts_get_different_demo_passwords(db):
    _, _, first = serve.ensure_demo_user("demo")
    get_user_model().objects.all().delete()
    _, _, second = serve.ensure_demo_user("demo")
    assert first and second and first != second


@pytest.mark.parametrize("host", ["0.0.0.0", "192.168.1.10", ""])
def test_no_demo_login_off_loopback(db, host):
    banner = serve.login_lines(host, f"http://{host}:8000")
    assert not get_user_model().objects.exists()
    assert "createsuperuser" in banner and "Token" not in banner


def test_a_local_secret_key_is_made_once_and_kept_private(settings, tmp_path, monkeypatch):
    monkeypatch.delenv("DJANGO_SECRET_KEY")
    settings.LOCAL_SECRET_KEY_FILE = tmp_path / "secret_key"
    serve.ensure_local_secret_key()
    key = settings.LOCAL_SECRET_KEY_FILE.read_text()
    assert settings.SECRET_KEY == key and key != settings.INSECURE_SECRET_KEY and len(key) >= 50
    assert stat.S_IMODE(settings.LOCAL_SECRET_KEY_FILE.stat().st_mode) == 0o600
    serve.ensure_local_secret_key()
    assert settings.LOCAL_SECRET_KEY_FILE.read_text() == key


def test_the_media_folder_is_for_the_server_user_only(settings, tmp_path):
    settings.MEDIA_ROOT = str(tmp_path / "state" / "media")
    serve.ensure_private_media_root()
    assert stat.S_IMODE((tmp_path / "state" / "media").stat().st_mode) == 0o700
    (tmp_path / "state" / "media").chmod(0o755)  # made by an earlier version
    serve.ensure_private_media_root()
    assert stat.S_IMODE((tmp_path / "state" / "media").stat().st_mode) == 0o700


def test_an_explicit_secret_key_wins(settings, tmp_path):
    settings.LOCAL_SECRET_KEY_FILE = tmp_path / "secret_key"
    serve.ensure_local_secret_key()
    assert not settings.LOCAL_SECRET_KEY_FILE.exists()


def test_serve_off_loopback_refuses_the_public_secret_key_before_starting_anything(db, settings, monkeypatch):
    settings.SECRET_KEY = settings.INSECURE_SECRET_KEY
    monkeypatch.delenv("DJANGO_SECRET_KEY")
    monkeypatch.setattr(serve, "acquire_lock", lambda path: None)
    monkeypatch.setattr(serve, "login_lines", lambda *a: pytest.fail("went on to start the app"))
    with pytest.raises(SystemCheckError, match="memento.E002"):
        call_command("serve", host="0.0.0.0", port=8000)
    assert not get_user_model().objects.exists()
    # and it runs the checks itself, after making the local key: Django's own run before handle() would refuse
    assert serve.Command.requires_system_checks == []


def test_serve_on_a_port_in_use_says_so_and_how_to_pick_another_before_starting_anything(db, monkeypatch):
    import socket

    from django.core.management.base import CommandError

    monkeypatch.setattr(serve, "acquire_lock", lambda path: None)
    monkeypatch.setattr(serve, "login_lines", lambda *a: pytest.fail("went on to start the app"))
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        assert serve.port_taken("127.0.0.1", port)
        with pytest.raises(CommandError, match=rf"Port {port} on 127.0.0.1 is in use.*PORT={port + 1} ./dev.sh serve"):
            call_command("serve", host="127.0.0.1", port=port)
    assert not serve.port_taken("127.0.0.1", port)


@pytest.mark.slow
def test_serve_exports_the_onnx_model_before_the_web_processes_start(settings, tmp_path, monkeypatch):
    settings.EMBEDDING_RUNTIME = "onnx"
    settings.EMBEDDING_ONNX_DIR = tmp_path / "onnx"
    monkeypatch.setenv("EMBEDDING_ONNX_DIR", str(tmp_path / "onnx"))  # the exporting process reads its own settings
    serve.export_onnx_model()
    assert [p.suffix for p in (tmp_path / "onnx").iterdir()] == [".onnx"]
    settings.EMBEDDING_RUNTIME = "torch"
    settings.EMBEDDING_ONNX_DIR = tmp_path / "other"
    serve.export_onnx_model()
    assert not (tmp_path / "other").exists()


def _wait_for(predicate, supervisor, timeout: float = 60.0):
    import time

    deadline = time.monotonic() + timeout
    while not predicate():
        assert supervisor.check(), "the web server ended"
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


def test_a_dead_worker_is_started_again_and_the_web_server_keeps_running(tmp_path, monkeypatch):
    import os
    import signal
    import sys

    pids = tmp_path / "workers"
    # stand-ins for gunicorn and the Celery worker: the worker appends its pid, then waits to be stopped
    web = [sys.executable, "-c", "import time; time.sleep(600)"]
    worker = [sys.executable, "-c", f"import os, time; open({str(pids)!r}, 'a').write(f'{{os.getpid()}}\\n'); "
                                    "time.sleep(600)"]
    monkeypatch.setattr(serve.Supervisor, "RESTART_FIRST_PAUSE", 0.1)
    said = []
    supervisor = serve.Supervisor(web=web, env=dict(os.environ), workers=[worker], say=said.append)
    supervisor.start()
    try:
        _wait_for(lambda: pids.exists() and len(pids.read_text().split()) == 1, supervisor)
        first = int(pids.read_text().split()[0])
        os.kill(first, signal.SIGKILL)
        _wait_for(lambda: len(pids.read_text().split()) == 2, supervisor)
        [current] = supervisor.workers
        assert supervisor.web.poll() is None and current.poll() is None
        assert current.pid != first and supervisor.restarts == 1
        assert "starting it again" in said[0] and "web server keeps running" in said[0]
        supervisor.web.kill()
        supervisor.web.wait()
        assert supervisor.check() is False  # the web server's end ends serve
    finally:
        supervisor.stop()
    assert all(worker.poll() is not None for worker in supervisor.workers)


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_ctrl_c_stops_serve_without_false_alarms(tmp_path):
    """A terminal's Ctrl-C reaches the whole foreground process group: serve, gunicorn and its workers alike.
    Serve alone must take it and stop its children gracefully, so the log says nothing alarming (gunicorn's
    "SIGKILL! Perhaps out of memory?" for workers its master killed), nor repeats a start-up line per process."""
    import os
    import signal
    import subprocess
    import sys
    import threading

    import requests
    from django.conf import settings

    from tests.web import database_env, free_port

    port = free_port()
    env = {**os.environ, **database_env(), "STATIC_ROOT": str(tmp_path / "static"),
           "DJANGO_ALLOWED_HOSTS": "127.0.0.1"}
    process = subprocess.Popen(
        [sys.executable, "manage.py", "serve", "--port", str(port), "--no-worker", "--web-workers", "2"],
        cwd=settings.BASE_DIR, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        start_new_session=True,  # its own process group, as a shell gives a foreground job
    )
    log: list[str] = []
    reader = threading.Thread(target=lambda: log.extend(process.stdout), daemon=True)
    reader.start()
    try:
        for _ in range(600):
            try:
                if requests.get(f"http://127.0.0.1:{port}/api/schema/", timeout=5).status_code == 200:
                    break
            except requests.RequestException:
                pass
            assert process.poll() is None, "".join(log)
            threading.Event().wait(0.5)
        os.killpg(process.pid, signal.SIGINT)
        assert process.wait(timeout=120) == 0, "".join(log)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
    reader.join(timeout=10)
    output = "".join(log)
    assert "Memento is starting" in output
    assert "SIGKILL" not in output and "out of memory" not in output, output
    assert "AXES: BEGIN" not in output, output


def test_serve_gives_its_processes_one_metrics_folder_emptied_at_each_start(settings, tmp_path, monkeypatch):
    monkeypatch.setenv("PROMETHEUS_MULTIPROC_DIR", "set, so that the test's end removes it")
    monkeypatch.delenv("PROMETHEUS_MULTIPROC_DIR")
    settings.STATE_DIR = tmp_path
    serve.prepare_metrics_dir()
    folder = tmp_path / "prometheus"
    assert os.environ["PROMETHEUS_MULTIPROC_DIR"] == str(folder) and folder.is_dir()
    (folder / "counter_4242.db").write_bytes(b"a process of the last run")
    serve.prepare_metrics_dir()
    assert list(folder.iterdir()) == []
