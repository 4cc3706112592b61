"""The figures: what each records, under which labels, and that no user or content becomes a label."""

import pytest
from celery import shared_task
from django.test import Client

from integrations import embeddings
from observability import metrics
from tests.factories import MemoryFactory, token_for


def value(name: str, **labels) -> float:
    return metrics.REGISTRY.get_sample_value(name, labels) or 0.0


def scraped() -> str:
    return Client().get("/metrics").content.decode()


@pytest.mark.django_db
def test_requests_are_timed_under_their_route_name_not_their_path(api, user):
    memory = MemoryFactory(owner=user)
    before = value("memento_http_request_duration_seconds_count", view="memory-detail", method="GET", status="200")
    assert api.get(f"/api/memories/{memory.pk}/").status_code == 200
    assert api.get("/api/no-such-page/").status_code == 404
    after = value("memento_http_request_duration_seconds_count", view="memory-detail", method="GET", status="200")
    assert after == before + 1
    assert value("memento_http_request_duration_seconds_count", view="unmatched", method="GET", status="404") >= 1
    assert str(memory.pk) not in scraped()


@pytest.mark.django_db
def test_an_unknown_method_is_counted_as_other(api):
    api.generic("BREW", "/api/memories/")
    assert value("memento_http_request_duration_seconds_count", view="memory-list", method="other",
                 status="405") >= 1


@pytest.mark.django_db
def test_search_is_timed_by_mode_and_path_and_no_content_reaches_a_label(api, user):
    api.post("/api/memories/", {"content": "Zanzibarian marmalade recipe from aunt Philippa"}, format="json")

    def searches(mode):
        text = scraped()
        return sum(float(line.rsplit(" ", 1)[1]) for line in text.splitlines()
                   if line.startswith("memento_search_duration_seconds_count{") and f'mode="{mode}"' in line)

    before = {mode: searches(mode) for mode in ("hybrid", "keyword")}
    for mode in ("hybrid", "keyword"):
        response = api.post("/api/memories/search/", {"query": "Philippa marmalade", "mode": mode}, format="json")
        assert response.status_code == 200 and response.json()["results"]
    text = scraped()
    assert {mode: searches(mode) for mode in ("hybrid", "keyword")} == {m: n + 1 for m, n in before.items()}
    paths = {line.split('path="')[1].split('"')[0] for line in text.splitlines()
             if line.startswith("memento_search_duration_seconds_count{")}
    assert paths <= {"snapshot", "exact", "own", "shared"}
    for private in ("Philippa", "marmalade", "Zanzibarian", user.username, f'"{user.pk}"'):
        assert private not in text


def test_embedding_calls_are_counted_with_their_texts_and_time():
    provider = type(embeddings.get_provider()).__name__.removesuffix("Provider").lower()
    calls = value("memento_embedding_calls_total", provider=provider, outcome="ok")
    texts = value("memento_embedding_texts_total", provider=provider)
    embeddings.get_provider().embed(["one text", "another text"])
    assert value("memento_embedding_calls_total", provider=provider, outcome="ok") == calls + 1
    assert value("memento_embedding_texts_total", provider=provider) == texts + 2
    assert value("memento_embedding_duration_seconds_count", provider=provider) >= 1


def test_a_failing_remote_provider_is_counted_as_an_error(openai_server):
    """The fake OpenAI-compatible endpoint (tests/fakes) answering 500s: the call is an error."""
    openai_server.fail(500, times=None)
    provider = embeddings.OpenAIProvider(
        model_name="m", dimensions=384, base_url=openai_server.base_url, api_key="", timeout=5, batch_size=8,
        send_dimensions=False)
    errors = value("memento_embedding_calls_total", provider="openai", outcome="error")
    with pytest.raises(embeddings.EmbeddingError):
        provider.embed(["a text"])
    assert value("memento_embedding_calls_total", provider="openai", outcome="error") == errors + 1


@shared_task(name="tests.observability.works")
def works() -> int:
    return 1


@shared_task(name="tests.observability.breaks")
def breaks() -> int:
    raise RuntimeError("broken on purpose")


def test_tasks_are_timed_by_name_and_state_and_failures_counted(eager):
    ok = value("memento_task_duration_seconds_count", task="tests.observability.works", state="SUCCESS")
    failed = value("memento_task_failures_total", task="tests.observability.breaks")
    works.delay()
    assert breaks.apply(throw=False).failed()  # a worker's run: the error is recorded, not raised to the caller
    assert value("memento_task_duration_seconds_count", task="tests.observability.works", state="SUCCESS") == ok + 1
    assert value("memento_task_failures_total", task="tests.observability.breaks") == failed + 1
    assert value("memento_task_duration_seconds_count", task="tests.observability.breaks", state="FAILURE") >= 1


@pytest.mark.django_db
def test_database_connections_are_shown_by_role_and_state():
    from django.db import connection

    connection.ensure_connection()
    lines = [line for line in scraped().splitlines() if line.startswith("memento_db_connections{")]
    assert any('role="maintenance"' in line and 'state="active"' in line for line in lines), lines
    assert any(line.startswith("memento_db_max_connections ") for line in scraped().splitlines())


@pytest.mark.django_db
def test_metrics_add_no_database_statement_to_a_request(user, settings):
    """Database figures are read when scraped (DatabaseConnections), never while answering: a request runs as many
    statements with metrics on as off. Per-request database work is what would make metrics cost more than the
    microseconds bench/metrics_overhead.py measures."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext
    from rest_framework.test import APIClient

    settings.SEARCH_SNAPSHOT_AFTER = 1  # the warming search holds the owner's rows: both ways search the same path
    memory = MemoryFactory(owner=user)
    token = token_for(user)

    def statements(enabled: bool) -> int:
        settings.METRICS_ENABLED = enabled
        client = APIClient(HTTP_AUTHORIZATION=f"Token {token}")  # its handler is built at its first request
        client.post("/api/memories/search/", {"query": "anything"}, format="json")
        with CaptureQueriesContext(connection) as queries:
            assert client.get(f"/api/memories/{memory.pk}/").status_code == 200
            assert client.get("/api/memories/", {"page_size": 20}).status_code == 200
            assert client.post("/api/memories/search/", {"query": "anything"}, format="json").status_code == 200
        return len(queries)

    timed = value("memento_http_request_duration_seconds_count", view="memory-detail", method="GET", status="200")
    on = statements(True)
    assert value("memento_http_request_duration_seconds_count", view="memory-detail", method="GET",
                 status="200") == timed + 1  # the middleware was there
    assert on == statements(False)
