"""A real Prometheus (Debian's `prometheus` package; .ci/run installs it) scrapes /metrics of `manage.py serve`
and its query API shows series of the web processes and of the Celery workers (one scrape: they share
PROMETHEUS_MULTIPROC_DIR)."""

import os
import shutil
import signal
import subprocess
import sys
import threading

import pytest
import requests
from django.conf import settings

from tests.factories import token_for
from tests.web import database_env, free_port
from tests.worker import wait_for

pytestmark = pytest.mark.slow

PROMETHEUS = shutil.which("prometheus")


def series(prometheus: str, query: str) -> list[dict]:
    try:
        answer = requests.get(f"{prometheus}/api/v1/query", params={"query": query}, timeout=10).json()
    except requests.RequestException:
        return []
    return answer["data"]["result"] if answer.get("status") == "success" else []


def ready(url: str) -> bool:
    try:
        return requests.get(url, timeout=5).status_code == 200
    except requests.RequestException:
        return False


def started(command: list[str], *, env: dict | None = None, cwd=None) -> tuple[subprocess.Popen, list[str]]:
    process = subprocess.Popen(command, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               text=True, start_new_session=True)
    log: list[str] = []
    threading.Thread(target=lambda: log.extend(process.stdout), daemon=True).start()
    return process, log


def ended(process: subprocess.Popen, signum=signal.SIGTERM) -> None:
    if process.poll() is None:
        os.killpg(process.pid, signum)
        try:
            process.wait(timeout=120)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=10)


@pytest.mark.skipif(PROMETHEUS is None, reason="the prometheus binary is absent (apt-get install prometheus; CI "
                                                "installs it in .ci/run)")
@pytest.mark.django_db(transaction=True)
def test_prometheus_scrapes_web_and_worker_figures_of_serve(user, tmp_path):
    port, prometheus_port = free_port(), free_port()
    env = {**os.environ, **database_env(), "STATIC_ROOT": str(tmp_path / "static"),
           "DJANGO_ALLOWED_HOSTS": "127.0.0.1", "PROMETHEUS_MULTIPROC_DIR": str(tmp_path / "multiproc"),
           "METRICS_BACKLOG_SECONDS": "2"}
    serve, serve_log = started([sys.executable, "manage.py", "serve", "--port", str(port), "--web-workers", "2"],
                               env=env, cwd=settings.BASE_DIR)
    config = tmp_path / "prometheus.yml"
    config.write_text(
        "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n"
        f"scrape_configs:\n  - job_name: memento\n    static_configs:\n      - targets: ['127.0.0.1:{port}']\n")
    prometheus, prometheus_log = started(
        [PROMETHEUS, f"--config.file={config}", f"--storage.tsdb.path={tmp_path / 'tsdb'}",
         f"--web.listen-address=127.0.0.1:{prometheus_port}"])
    base, api = f"http://127.0.0.1:{port}", f"http://127.0.0.1:{prometheus_port}"
    try:
        wait_for(lambda: ready(f"{base}/healthz") or serve.poll() is not None)
        assert serve.poll() is None, "".join(serve_log[-60:])
        wait_for(lambda: ready(f"{api}/-/ready") or prometheus.poll() is not None)
        assert prometheus.poll() is None, "".join(prometheus_log[-30:])

        headers = {"Authorization": f"Token {token_for(user)}"}
        conversation = requests.post(f"{base}/api/conversations/", json={"title": "t"}, headers=headers,
                                     timeout=60).json()
        appended = requests.post(f"{base}/api/conversations/{conversation['id']}/messages/", headers=headers,
                                 json={"messages": [{"role": "user", "content": "I moved to Porto last May."}]},
                                 timeout=60)
        assert appended.status_code == 201, appended.text
        assert requests.post(f"{base}/api/memories/search/", json={"query": "where do I live?"}, headers=headers,
                             timeout=60).status_code == 200

        assert wait_for(lambda: series(api, 'up{job="memento"} == 1'))
        web = wait_for(lambda: series(api, 'memento_http_request_duration_seconds_count{view="memory-search"}'))
        assert web[0]["metric"]["method"] == "POST" and web[0]["metric"]["status"] == "200"
        assert wait_for(lambda: series(api, "memento_search_duration_seconds_count"))
        # the worker's: its tasks (embedding and extracting the message) and the backlog its beat task computes
        tasks = wait_for(lambda: series(api, 'memento_task_duration_seconds_count{task=~"conversations.tasks.*"}'),
                         worker=type("log", (), {"log": serve_log}))
        assert all(found["metric"]["state"] for found in tasks)
        backlog = wait_for(lambda: series(api, "memento_backlog_items"))
        assert {found["metric"]["queue"] for found in backlog} >= {"extraction", "documents"}
    finally:
        ended(prometheus)
        ended(serve, signal.SIGINT)
