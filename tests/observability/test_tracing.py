"""Traces: spans with figures and no content in-process, nothing at all without an endpoint, and spans reaching
an OTLP/HTTP receiver (a small fake one on 127.0.0.1: the network edge)."""

import gzip
import os
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from django.conf import settings
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from observability import tracing
from tests.worker import wait_for

PRIVATE = ("Zanzibarian", "marmalade", "Philippa", "tangerine")  # words only the memory and the query hold


@pytest.fixture
def spans():
    exporter = InMemorySpanExporter()
    assert tracing.setup(exporter=exporter)
    yield exporter
    tracing.shutdown()


def by_name(exporter, name: str) -> list:
    return [span for span in exporter.get_finished_spans() if span.name == name]


def all_values(exporter) -> str:
    return " ".join(f"{span.name} {dict(span.attributes)} {[dict(e.attributes) for e in span.events]}"
                    for span in exporter.get_finished_spans())


@pytest.mark.django_db(transaction=True)
def test_search_context_embedding_and_request_spans_carry_figures_and_no_content(spans, api, user):
    from django.db import connection

    connection.close()  # opened before tracing was set up; a process sets it up before its first connection
    api.post("/api/memories/", {"content": "Zanzibarian marmalade recipe from aunt Philippa"}, format="json")
    conversation = api.post("/api/conversations/", {"title": "kitchen"}, format="json").json()
    spans.clear()
    response = api.post("/api/memories/search/", {"query": "Philippa marmalade tangerine", "mode": "hybrid"},
                        format="json")
    assert response.status_code == 200 and response.json()["results"]
    response = api.get(f"/api/conversations/{conversation['id']}/context/", {"query": "Philippa tangerine"})
    assert response.status_code == 200

    (search, *_) = by_name(spans, "search_memory memories")
    assert search.attributes["gen_ai.operation.name"] == "search_memory"
    assert search.attributes["memento.search.mode"] == "hybrid"
    assert search.attributes["memento.search.path"] in {"snapshot", "exact", "own", "shared"}
    assert search.attributes["memento.search.candidates"] >= 1
    assert search.attributes["gen_ai.memory.record.count"] >= 1
    assert "gen_ai.memory.query.text" not in search.attributes
    (context,) = by_name(spans, "memento.context")
    assert context.attributes["memento.context.items"] >= 1
    embedding = [s for s in spans.get_finished_spans() if s.name.startswith("embeddings ")]
    assert embedding and embedding[0].attributes["gen_ai.operation.name"] == "embeddings"
    assert embedding[0].attributes["gen_ai.request.model"] == settings.EMBEDDING_MODEL
    requests = [s for s in spans.get_finished_spans() if s.name == "POST api/memories/search/"]
    assert requests and search.parent.span_id == requests[0].context.span_id  # the search inside its request
    assert any(s.attributes.get("db.system") == "postgresql" for s in spans.get_finished_spans())  # psycopg
    text = all_values(spans)
    for word in PRIVATE:
        assert word not in text  # not in a URL's query string, a SQL statement or any span of ours


@pytest.mark.django_db
def test_content_goes_into_attributes_only_when_enabled(spans, api, settings):
    settings.TRACE_CONTENT = True
    api.post("/api/memories/search/", {"query": "Philippa marmalade"}, format="json")
    (search,) = by_name(spans, "search_memory memories")
    assert search.attributes["gen_ai.memory.query.text"] == "Philippa marmalade"


def test_extraction_spans_count_candidates(spans):
    from extraction.dialogue import extract_local

    found = extract_local("I moved to Lisbon last year and I work as a nurse.")
    (span,) = by_name(spans, "memento.extraction.local")
    assert span.attributes["memento.extraction.candidates"] == len(found) >= 1
    assert "Lisbon" not in all_values(spans)


def test_without_an_endpoint_nothing_is_set_up():
    """In a fresh process (as a web or worker process starts): no SDK, no exporter, no instrumentation."""
    env = {key: value for key, value in os.environ.items() if not key.startswith("OTEL_")}
    script = ("import django, sys; django.setup(); from observability import tracing; "
              "from opentelemetry.instrumentation.django import DjangoInstrumentor; "
              "print(tracing.enabled(), DjangoInstrumentor().is_instrumented_by_opentelemetry, "
              "any(m.startswith(('opentelemetry.sdk', 'opentelemetry.exporter')) for m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", script], cwd=settings.BASE_DIR, env=env, capture_output=True,
                         text=True, timeout=300, check=True).stdout.split()
    assert out == ["False", "False", "False"]


def test_in_this_process_nothing_is_set_up_either():
    assert not settings.OTEL_EXPORTER_OTLP_ENDPOINT and not settings.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT
    assert tracing.setup() is False and not tracing.enabled()
    assert not any("opentelemetry" in entry for entry in settings.MIDDLEWARE)


class Receiver(ThreadingHTTPServer):
    """OTLP/HTTP's trace endpoint: POST /v1/traces with an ExportTraceServiceRequest in protobuf."""

    def __init__(self):
        super().__init__(("127.0.0.1", 0), ReceiverHandler)
        self.spans: list = []
        self.paths: list[str] = []

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_port}"


class ReceiverHandler(BaseHTTPRequestHandler):
    def do_POST(self):  # noqa: N802
        body = self.rfile.read(int(self.headers["Content-Length"]))
        if self.headers.get("Content-Encoding") == "gzip":
            body = gzip.decompress(body)
        request = ExportTraceServiceRequest.FromString(body)
        self.server.paths.append(self.path)
        self.server.spans += [span for resource in request.resource_spans for scope in resource.scope_spans
                              for span in scope.spans]
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.end_headers()

    def log_message(self, format, *args):  # noqa: A002
        pass


@pytest.fixture
def receiver():
    server = Receiver()
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield server
    server.shutdown()
    server.server_close()


@pytest.mark.django_db
def test_spans_reach_an_otlp_receiver_when_an_endpoint_is_set(receiver, settings, monkeypatch, api):
    from opentelemetry import trace

    monkeypatch.setattr(trace, "set_tracer_provider", lambda provider: None)  # this test process's global stays
    settings.OTEL_EXPORTER_OTLP_ENDPOINT = receiver.url
    assert tracing.setup()
    try:
        assert api.post("/api/memories/search/", {"query": "anything at all"}, format="json").status_code == 200
        tracing.flush()
        names = wait_for(lambda: {span.name for span in receiver.spans} >= {"search_memory memories"} and
                         {span.name for span in receiver.spans}, timeout=60)
    finally:
        tracing.shutdown()
    assert "POST api/memories/search/" in names
    assert set(receiver.paths) == {"/v1/traces"}


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_served_web_and_worker_processes_send_their_spans(receiver, monkeypatch, user):
    """gunicorn and a Celery worker, each configured by the environment alone, as deployed."""
    import requests

    from memento.tasks import observe_backlog
    from tests.factories import token_for
    from tests.web import free_port, start_gunicorn, stop
    from tests.worker import running_worker

    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.url)
    monkeypatch.setenv("OTEL_BSP_SCHEDULE_DELAY", "100")  # milliseconds between exports
    port = free_port()
    web = start_gunicorn(port)
    try:
        headers = {"Authorization": f"Token {token_for(user)}"}
        assert requests.post(f"http://127.0.0.1:{port}/api/memories/search/", json={"query": "Philippa"},
                             headers=headers, timeout=60).status_code == 200
        wait_for(lambda: {"POST api/memories/search/", "search_memory memories"} <= {s.name for s in receiver.spans},
                 timeout=120)
    finally:
        stop(web)
    with running_worker("postgres") as worker:
        observe_backlog.delay()
        wait_for(lambda: any(s.name == "run/memento.tasks.observe_backlog" for s in receiver.spans), timeout=120,
                 worker=worker)
    assert not any("Philippa" in str(s) for s in receiver.spans)


@pytest.fixture
def conventions(request):
    """OTEL_SEMCONV_STABILITY_OPT_IN as the instrumentation reads it (once per process), restored after."""
    from opentelemetry.instrumentation._semconv import _OpenTelemetrySemanticConventionStability as stability

    name, before = "OTEL_SEMCONV_STABILITY_OPT_IN", os.environ.get("OTEL_SEMCONV_STABILITY_OPT_IN")
    os.environ[name] = request.param
    stability._initialized = False
    yield request.param
    if before is None:
        os.environ.pop(name)
    else:
        os.environ[name] = before
    stability._initialized = False
    stability._initialize()


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("conventions", ["", "http", "http/dup", "database,http"], indirect=True)
def test_no_query_string_under_either_http_conventions(conventions, api):
    """OTEL_SEMCONV_STABILITY_OPT_IN picks the older (http.target, http.url), the newer (url.full, url.query) or
    both attribute names for a request's URL: none of them keeps the query string."""
    exporter = InMemorySpanExporter()
    tracing.setup(exporter=exporter)
    try:
        api.get("/api/memories/", {"search": "tangerine"})
    finally:
        tracing.shutdown()
    (request,) = [s for s in exporter.get_finished_spans() if s.name.startswith("GET ")]
    assert "/api/memories/" in str(dict(request.attributes))
    assert "tangerine" not in str(dict(request.attributes))
