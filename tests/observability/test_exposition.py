"""GET /metrics: who may read it, and what it shows."""

import pytest
from django.test import Client

from observability import metrics

OUTSIDER = "203.0.113.7"  # a documentation address: not loopback


def scrape(**extra):
    return Client().get("/metrics", **extra)


@pytest.mark.django_db
def test_a_loopback_peer_reads_the_figures_in_prometheus_text_format():
    response = scrape()
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/plain; version=0.0.4")
    text = response.content.decode()
    for name in ("memento_http_request_duration_seconds", "memento_search_duration_seconds",
                 "memento_embedding_calls_total", "memento_task_duration_seconds", "memento_backlog_items",
                 "memento_db_connections", "memento_db_max_connections"):
        assert f"# TYPE {name}" in text, name


@pytest.mark.django_db
def test_anyone_else_gets_a_404_as_if_there_were_no_such_page():
    assert scrape(REMOTE_ADDR=OUTSIDER).status_code == 404
    assert scrape(REMOTE_ADDR=OUTSIDER, HTTP_AUTHORIZATION="Bearer anything").status_code == 404


@pytest.mark.django_db
def test_the_bearer_token_opens_it_to_other_addresses(settings):
    settings.METRICS_TOKEN = "s3cret-scrape-token"
    assert scrape(REMOTE_ADDR=OUTSIDER, HTTP_AUTHORIZATION="Bearer s3cret-scrape-token").status_code == 200
    assert scrape(REMOTE_ADDR=OUTSIDER, HTTP_AUTHORIZATION="Bearer s3cret-scrape-toke").status_code == 404
    assert scrape(REMOTE_ADDR=OUTSIDER, HTTP_AUTHORIZATION="s3cret-scrape-token").status_code == 404
    assert scrape(REMOTE_ADDR=OUTSIDER).status_code == 404


@pytest.mark.django_db
def test_behind_a_proxy_a_forwarded_request_is_not_loopback(settings):
    """The proxy connects from loopback; the client it forwards for is somewhere else."""
    settings.BEHIND_PROXY = True
    assert scrape(HTTP_X_FORWARDED_FOR=OUTSIDER).status_code == 404
    assert scrape().status_code == 200  # a scrape on the host itself, not through the proxy


@pytest.mark.django_db
def test_metrics_switched_off_is_a_404(settings):
    settings.METRICS_ENABLED = False
    assert scrape().status_code == 404


@pytest.mark.django_db
def test_the_worker_port_answers_with_the_same_rule(settings):
    import requests

    from observability.exposition import worker_server

    server = worker_server(0, host="127.0.0.1")
    try:
        base = f"http://127.0.0.1:{server.server_port}"
        metrics.TASK_FAILURES.labels("tests.some_task").inc()
        response = requests.get(f"{base}/metrics", timeout=10)
        assert response.status_code == 200
        assert 'memento_task_failures_total{task="tests.some_task"}' in response.text
        assert requests.get(f"{base}/other", timeout=10).status_code == 404
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_a_worker_with_metrics_worker_port_serves_its_own_figures(monkeypatch, tmp_path):
    """A worker in a container of its own (docs/deploy.md): its tasks' figures and the backlog it computes, on its
    own port, from the files its processes write to PROMETHEUS_MULTIPROC_DIR."""
    import requests

    from memento.tasks import observe_backlog
    from tests.web import free_port
    from tests.worker import running_worker, wait_for

    port = free_port()
    monkeypatch.setenv("METRICS_WORKER_PORT", str(port))
    monkeypatch.setenv("PROMETHEUS_MULTIPROC_DIR", str(tmp_path / "multiproc"))

    def figures() -> str:
        try:
            return requests.get(f"http://127.0.0.1:{port}/metrics", timeout=5).text
        except requests.RequestException:
            return ""

    with running_worker("postgres") as worker:
        observe_backlog.delay()
        text = wait_for(lambda: 'task="memento.tasks.observe_backlog"' in figures() and figures(), worker=worker)
    assert 'memento_task_duration_seconds_count{state="SUCCESS",task="memento.tasks.observe_backlog"} 1.0' in text
    assert 'memento_backlog_items{queue="documents"} 0.0' in text
