"""The container image's commands (Dockerfile, deploy/entrypoint.sh) run here as they would in the image: the
entry points it names exist, `migrate` and `worker` start, and its health check tells a live web process from none.
(No docker on the test machines: the image itself is not built.)"""

import importlib
import os
import re
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from django.conf import settings

from tests.web import database_env, free_port, start_gunicorn, stop

ROOT = Path(settings.BASE_DIR)
ENTRYPOINT = ROOT / "deploy" / "entrypoint.sh"


def _path() -> str:
    """PATH with this interpreter first: `python` is the one with the requirements, as in the image."""
    return f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"


def _entrypoint(*args: str, env: dict | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    """The script as a fresh container runs it (its own /tmp: no process type recorded by an earlier call)."""
    with tempfile.TemporaryDirectory() as tmp:
        return subprocess.run([str(ENTRYPOINT), *args], cwd=ROOT, capture_output=True, text=True, timeout=timeout,
                              env={**os.environ, "TMPDIR": tmp, **(env or {}), "PATH": _path()})


def test_the_dockerfile_runs_the_entrypoint_and_its_process_types():
    dockerfile = (ROOT / "Dockerfile").read_text()
    assert "\nFROM python:3.11-slim\n" in dockerfile
    assert "pip install -r requirements.txt" in dockerfile
    assert "manage.py collectstatic --noinput" in dockerfile
    assert 'ENTRYPOINT ["deploy/entrypoint.sh"]' in dockerfile
    assert re.search(r'HEALTHCHECK .*CMD \["deploy/entrypoint.sh", "healthcheck"\]', dockerfile)
    assert os.access(ENTRYPOINT, os.X_OK)
    script = ENTRYPOINT.read_text()
    for process in ("web)", "worker)", "beat)", "migrate)", "healthcheck)"):
        assert f"  {process}" in script


def test_the_entry_points_the_entrypoint_names_are_importable():
    script = ENTRYPOINT.read_text()
    module, attribute = re.search(r"gunicorn (\S+):(\S+)", script).groups()
    assert module == "memento.wsgi" and importlib.util.find_spec(module) is not None
    assert (ROOT / "memento" / "wsgi.py").read_text().count(f"\n{attribute} = ") == 1
    app = re.search(r"celery -A (\S+) worker", script).group(1)
    assert importlib.import_module(app).celery_app.main == "memento"
    assert importlib.util.find_spec("gunicorn.app.wsgiapp") is not None


def test_migrate_runs_against_the_database_from_the_environment(transactional_db):
    # DATABASE_URL / MAINTENANCE_DATABASE_URL as the container gets them; everything is applied already
    result = _entrypoint("migrate", "--check", env=database_env())
    assert result.returncode == 0, result.stdout + result.stderr


def test_worker_starts_with_the_entrypoints_arguments():
    result = _entrypoint("worker", "--help", timeout=180)
    assert result.returncode == 0, result.stderr
    assert "--concurrency" in result.stdout


def test_healthcheck_fails_when_nothing_answers():
    result = _entrypoint("healthcheck", env={"PORT": str(free_port()), "DJANGO_ALLOWED_HOSTS": "127.0.0.1"})
    assert result.returncode == 1
    assert "healthz" in result.stderr


@pytest.mark.slow
def test_healthcheck_passes_against_a_served_web_process(transactional_db):
    port = free_port()
    server = start_gunicorn(port)
    try:
        # the first of DJANGO_ALLOWED_HOSTS as the Host header, as the image's check sends it
        result = _entrypoint("healthcheck", env={"PORT": str(port), "DJANGO_ALLOWED_HOSTS": "127.0.0.1,example.com"})
        assert result.returncode == 0, result.stderr
        refused = _entrypoint("healthcheck", env={"PORT": str(port), "DJANGO_ALLOWED_HOSTS": "memento.invalid"})
        assert refused.returncode == 1  # a Host Django refuses is a 400: the check does not pass by accident
    finally:
        stop(server)


def _instructions() -> list[tuple[str, str]]:
    """The Dockerfile's instructions as (keyword, arguments), continuation lines joined and comments dropped."""
    lines = [line for line in (ROOT / "Dockerfile").read_text().splitlines() if not line.lstrip().startswith("#")]
    joined = re.sub(r"\\\n", " ", "\n".join(lines))
    return [(line.split(None, 1)[0], line.split(None, 1)[1]) for line in joined.splitlines() if line.strip()]


@pytest.mark.slow
def test_the_images_build_step_runs_as_written(tmp_path):
    """The RUN that builds static files and exports the local model, with the image's ENV (paths moved under a
    temporary directory): it needs no database and no broker."""
    env = {}
    for keyword, arguments in _instructions():
        if keyword == "ENV":
            env.update(pair.split("=", 1) for pair in shlex.split(arguments))
    build = next(arguments for keyword, arguments in _instructions()
                 if keyword == "RUN" and "collectstatic" in arguments)
    env |= {"STATIC_ROOT": str(tmp_path / "static"), "EMBEDDING_ONNX_DIR": str(tmp_path / "onnx"),
            "MEDIA_ROOT": str(tmp_path / "media")}
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "DATABASE_", "CELERY_"))}
    result = subprocess.run(["sh", "-c", build.replace("chmod +x", "test -x")], cwd=ROOT, capture_output=True,
                            text=True, timeout=600, env={**clean, **env, "PATH": _path()})
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-4000:]
    assert (tmp_path / "static" / "admin").is_dir()
    assert list((tmp_path / "onnx").glob("*.onnx"))
