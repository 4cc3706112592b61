"""Observability (observability/; README, "Metrics and tracing"): Prometheus figures and OpenTelemetry traces. The
app and its middleware are listed in base.py, the backlog gauges' periodic task in workers.py."""

from memento.settings.base import env

# Prometheus figures at /metrics, for loopback peers and, when set, `Authorization: Bearer <METRICS_TOKEN>`; 404 to
# anyone else. Processes add up through PROMETHEUS_MULTIPROC_DIR (set by `serve` and the Docker entrypoint); a
# worker in a container of its own answers on METRICS_WORKER_PORT (0: not at all).
METRICS_ENABLED = env.bool("METRICS_ENABLED", default=True)
METRICS_TOKEN = env.str("METRICS_TOKEN", default="")
METRICS_WORKER_PORT = env.int("METRICS_WORKER_PORT", default=0)
# the worker computes the backlog gauges (waiting extractions, embeddings, documents; oldest age) this often
METRICS_BACKLOG_SECONDS = env.float("METRICS_BACKLOG_SECONDS", default=30.0)
# OpenTelemetry traces: off unless an OTLP/HTTP endpoint is set (the standard variables; OTEL_EXPORTER_OTLP_HEADERS
# and the other OTEL_* exporter variables apply as usual). What people wrote (queries, memories, messages) goes into
# span attributes only with MEMENTO_TRACE_CONTENT=1.
OTEL_EXPORTER_OTLP_ENDPOINT = env.str("OTEL_EXPORTER_OTLP_ENDPOINT", default="")
OTEL_EXPORTER_OTLP_TRACES_ENDPOINT = env.str("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", default="")
OTEL_SERVICE_NAME = env.str("OTEL_SERVICE_NAME", default="memento")
TRACE_CONTENT = env.bool("MEMENTO_TRACE_CONTENT", default=False)
