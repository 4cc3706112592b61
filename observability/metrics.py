"""The Prometheus figures, defined once, and what records them.

Labels are bounded sets only: a route's name (never its path with ids), a method, a status code, a search mode and
path, a provider, a task's name, a queue. No user, owner, query or content ever becomes a label.

Several processes (gunicorn's workers, Celery's pool processes) each count their own: with PROMETHEUS_MULTIPROC_DIR
set (`manage.py serve` and the Docker entrypoint set it) prometheus_client writes each process's figures to files
there, and a scrape of any web process adds them up (`exposition`). The variable must be set before this module is
first imported, which is why the launchers set it and not the settings.
"""

import os
import threading
import time

from django.conf import settings
from django.core.exceptions import MiddlewareNotUsed
from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram
from prometheus_client.core import GaugeMetricFamily

if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):  # each figure below opens its file there as it is defined
    os.makedirs(os.environ["PROMETHEUS_MULTIPROC_DIR"], exist_ok=True)

# figures of this process when it runs alone (no PROMETHEUS_MULTIPROC_DIR); with it, the files are the registry
REGISTRY = CollectorRegistry(auto_describe=True)

LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)
TASK_BUCKETS = (0.01, 0.05, 0.1, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 300.0, 900.0)
METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})

REQUEST_SECONDS = Histogram(
    "memento_http_request_duration_seconds", "Time to answer an HTTP request, by route name, method and status.",
    ["view", "method", "status"], buckets=LATENCY_BUCKETS, registry=REGISTRY)
SEARCH_SECONDS = Histogram(
    "memento_search_duration_seconds", "Memory search time by mode and by the way the owner's rows were read "
    "(snapshot: held by the web process; exact, own, shared: memories.search.paths).", ["mode", "path"],
    buckets=LATENCY_BUCKETS, registry=REGISTRY)
OPERATION_SECONDS = Histogram(
    "memento_operation_duration_seconds", "Time of one context build or extraction.", ["operation"],
    buckets=TASK_BUCKETS, registry=REGISTRY)
EMBEDDING_CALLS = Counter(
    "memento_embedding_calls_total", "Calls to the embedding provider by outcome (ok, error).",
    ["provider", "outcome"], registry=REGISTRY)
EMBEDDING_TEXTS = Counter(
    "memento_embedding_texts_total", "Texts sent to the embedding provider.", ["provider"], registry=REGISTRY)
EMBEDDING_SECONDS = Histogram(
    "memento_embedding_duration_seconds", "Time of one call to the embedding provider.", ["provider"],
    buckets=LATENCY_BUCKETS, registry=REGISTRY)
TASK_SECONDS = Histogram(
    "memento_task_duration_seconds", "Celery task run time by task name and final state of the run.",
    ["task", "state"], buckets=TASK_BUCKETS, registry=REGISTRY)
TASK_FAILURES = Counter(
    "memento_task_failures_total", "Celery task runs that raised, by task name.", ["task"], registry=REGISTRY)
TASK_RETRIES = Counter(
    "memento_task_retries_total", "Celery task retries, by task name.", ["task"], registry=REGISTRY)
DB_CONNECTIONS_OPENED = Counter(
    "memento_db_connections_opened_total", "Database connections opened, by database role (app, maintenance).",
    ["role"], registry=REGISTRY)
# written by the worker's periodic `memento.tasks.observe_backlog`, read by every scrape: the latest value wins
BACKLOG_ITEMS = Gauge(
    "memento_backlog_items", "Work waiting for the worker, by queue (extraction: messages due; message_embedding, "
    "memory_embedding: rows without a vector; documents: pending or processing).", ["queue"],
    multiprocess_mode="mostrecent", registry=REGISTRY)
BACKLOG_OLDEST = Gauge(
    "memento_backlog_oldest_age_seconds", "Age of the oldest waiting item, by queue (0: none waiting).",
    ["queue"], multiprocess_mode="mostrecent", registry=REGISTRY)
BACKLOG_UPDATED = Gauge(
    "memento_backlog_updated_timestamp_seconds", "When the backlog figures were last computed (Unix time).",
    multiprocess_mode="mostrecent", registry=REGISTRY)


def enabled() -> bool:
    return settings.METRICS_ENABLED


class RequestMetricsMiddleware:
    """Times every request (first in MIDDLEWARE, so the whole stack counts) under its route's name."""

    def __init__(self, get_response):
        if not enabled():
            raise MiddlewareNotUsed
        self.get_response = get_response

    def __call__(self, request):
        started = time.perf_counter()
        response = self.get_response(request)
        match = getattr(request, "resolver_match", None)
        view = (match.view_name or "unnamed") if match is not None else "unmatched"
        method = request.method if request.method in METHODS else "other"
        REQUEST_SECONDS.labels(view, method, str(response.status_code)).observe(time.perf_counter() - started)
        return response


def search_observed(*, mode: str, path: str, seconds: float) -> None:
    if not enabled():
        return
    SEARCH_SECONDS.labels(mode, path).observe(seconds)


def operation_observed(*, operation: str, seconds: float) -> None:
    if not enabled():
        return
    OPERATION_SECONDS.labels(operation).observe(seconds)


def embedding_observed(*, provider: str, texts: int, seconds: float, ok: bool) -> None:
    if not enabled():
        return
    EMBEDDING_CALLS.labels(provider, "ok" if ok else "error").inc()
    EMBEDDING_TEXTS.labels(provider).inc(texts)
    EMBEDDING_SECONDS.labels(provider).observe(seconds)


def backlog_observed(figures: dict[str, tuple[int, float]]) -> None:
    """`figures`: queue -> (items waiting, age in seconds of the oldest)."""
    for queue, (items, oldest) in figures.items():
        BACKLOG_ITEMS.labels(queue).set(items)
        BACKLOG_OLDEST.labels(queue).set(oldest)
    BACKLOG_UPDATED.set(time.time())


# --- Celery tasks and database connections, through signals (every process). -------------------------------------
_started: dict[str, float] = {}
_started_lock = threading.Lock()


def _task_started(task_id=None, **kwargs) -> None:
    with _started_lock:
        _started[task_id] = time.perf_counter()


def _task_ended(task_id=None, task=None, state=None, **kwargs) -> None:
    with _started_lock:
        started = _started.pop(task_id, None)
    if started is not None and task is not None:
        TASK_SECONDS.labels(task.name, state or "UNKNOWN").observe(time.perf_counter() - started)


def _task_failed(sender=None, **kwargs) -> None:
    TASK_FAILURES.labels(getattr(sender, "name", "unknown")).inc()


def _task_retried(sender=None, **kwargs) -> None:
    TASK_RETRIES.labels(getattr(sender, "name", "unknown")).inc()


def _connection_opened(**kwargs) -> None:
    DB_CONNECTIONS_OPENED.labels(settings.DATABASE_ROLE).inc()


def connect_signals() -> None:
    if not enabled():
        return
    from celery import signals
    from django.db.backends.signals import connection_created

    signals.task_prerun.connect(_task_started, weak=False, dispatch_uid="metrics-task-started")
    signals.task_postrun.connect(_task_ended, weak=False, dispatch_uid="metrics-task-ended")
    signals.task_failure.connect(_task_failed, weak=False, dispatch_uid="metrics-task-failed")
    signals.task_retry.connect(_task_retried, weak=False, dispatch_uid="metrics-task-retried")
    connection_created.connect(_connection_opened, weak=False, dispatch_uid="metrics-connection-opened")


class DatabaseConnections:
    """At scrape time: the server's connections to this database by role and state (pg_stat_activity, one cheap
    query) and its max_connections. Sessions of another role may show no state to this one: "unknown"."""

    def collect(self):
        from django.db import DatabaseError, connection

        try:
            with connection.cursor() as cursor:
                cursor.execute(
                    "SELECT usename = current_user, coalesce(state, 'unknown'), count(*) FROM pg_stat_activity "
                    "WHERE datname = current_database() AND backend_type = 'client backend' GROUP BY 1, 2")
                rows = cursor.fetchall()
                cursor.execute("SELECT current_setting('max_connections')::int")
                (limit,) = cursor.fetchone()
        except DatabaseError:
            return  # the database is down: /readyz says so; the other figures still answer
        in_use = GaugeMetricFamily("memento_db_connections", "Connections to the database by role (this process's "
                                   "or other) and state.", labels=["role", "state"])
        for mine, state, count in rows:
            in_use.add_metric([settings.DATABASE_ROLE if mine else "other", state], count)
        yield in_use
        yield GaugeMetricFamily("memento_db_max_connections", "The server's max_connections.", value=limit)
