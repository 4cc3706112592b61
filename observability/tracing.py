"""OpenTelemetry traces, off unless an OTLP endpoint is configured (OTEL_EXPORTER_OTLP_ENDPOINT or
OTEL_EXPORTER_OTLP_TRACES_ENDPOINT): then each process sends its spans over OTLP/HTTP (protobuf) in batches:
requests (Django), tasks and their queueing (Celery), SQL statements (psycopg), and the project's own spans for
search, context building, extraction and embedding (`hooks`), with the GenAI semantic conventions' attributes
where they fit (gen_ai.operation.name search_memory / embeddings, gen_ai.memory.record.count, gen_ai.request.model).

What people wrote never goes into an attribute: no query, memory or message text, and request URLs without their
query string, unless MEMENTO_TRACE_CONTENT=1 (then the query goes into gen_ai.memory.query.text and URLs keep
their query string). SQL statements are recorded with their placeholders, never their parameters.
"""

import logging
from contextlib import contextmanager, nullcontext

from django.conf import settings

logger = logging.getLogger(__name__)

_provider = None  # the SDK's TracerProvider once set up; None: tracing is off in this process
_tracer = None
_instrumentors: list = []
EXCLUDED_URLS = "metrics,healthz,readyz"  # probes and scrapes: many, and nothing to learn from their traces


def enabled() -> bool:
    return _tracer is not None


def traces_endpoint() -> str:
    """Where spans are sent ("" when tracing is off): the traces endpoint itself, or the OTLP base URL's
    /v1/traces, as the OpenTelemetry exporters read these variables."""
    if settings.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT:
        return settings.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT
    if settings.OTEL_EXPORTER_OTLP_ENDPOINT:
        return settings.OTEL_EXPORTER_OTLP_ENDPOINT.rstrip("/") + "/v1/traces"
    return ""


def setup(*, exporter=None) -> bool:
    """Set tracing up in this process when an endpoint is configured, or with `exporter` (tests). Nothing is
    imported, instrumented or started otherwise. Returns whether tracing is on."""
    global _provider, _tracer
    if _provider is not None:
        return True
    endpoint = traces_endpoint()
    if exporter is None and not endpoint:
        return False
    from opentelemetry import trace
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor

    provider = TracerProvider(resource=Resource.create({"service.name": settings.OTEL_SERVICE_NAME}))
    if exporter is None:
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

        # headers, timeout and compression from the standard OTEL_EXPORTER_OTLP_* variables
        provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(endpoint=endpoint)))
        trace.set_tracer_provider(provider)  # for libraries that trace through the API (the MCP SDK)
    else:
        provider.add_span_processor(SimpleSpanProcessor(exporter))
    _instrument(provider)
    _provider, _tracer = provider, provider.get_tracer("memento")
    logger.info("tracing on: spans go to %s", endpoint or type(exporter).__name__)
    return True


def _instrument(provider) -> None:
    from opentelemetry.instrumentation.celery import CeleryInstrumentor
    from opentelemetry.instrumentation.django import DjangoInstrumentor
    from opentelemetry.instrumentation.psycopg import PsycopgInstrumentor

    DjangoInstrumentor().instrument(tracer_provider=provider, request_hook=_request_hook,
                                    excluded_urls=EXCLUDED_URLS, is_sql_commentor_enabled=False)
    CeleryInstrumentor().instrument(tracer_provider=provider)
    PsycopgInstrumentor().instrument(tracer_provider=provider, enable_commenter=False, skip_dep_check=True)
    _instrumentors[:] = [DjangoInstrumentor(), CeleryInstrumentor(), PsycopgInstrumentor()]


def shutdown() -> None:
    """Flush, stop and undo the instrumentation (tests; a process's exit flushes by itself)."""
    global _provider, _tracer
    for instrumentor in _instrumentors:
        instrumentor.uninstrument()
    _instrumentors.clear()
    if _provider is not None:
        _provider.shutdown()
    _provider = _tracer = None


def flush() -> None:
    if _provider is not None:
        _provider.force_flush()


def _request_hook(span, request) -> None:
    """A request's URL without its query string (search words travel there: GET ...?query=)."""
    if settings.TRACE_CONTENT or not span.is_recording():
        return
    from opentelemetry.instrumentation._semconv import (
        _OpenTelemetrySemanticConventionStability,
        _OpenTelemetryStabilitySignalType,
        _report_new,
        _report_old,
    )

    # the attribute names the instrumentation writes (OTEL_SEMCONV_STABILITY_OPT_IN: older, newer or both)
    mode = _OpenTelemetrySemanticConventionStability._get_opentelemetry_stability_opt_in_mode(
        _OpenTelemetryStabilitySignalType.HTTP)
    url = request.build_absolute_uri(request.path)
    if _report_new(mode):
        span.set_attributes({"url.full": url, "url.query": ""})
    if _report_old(mode):
        span.set_attributes({"http.target": request.path, "http.url": url})


def content(attributes: dict, key: str, text: str) -> None:
    """Put `text` (what someone wrote) under `key` only when MEMENTO_TRACE_CONTENT is on."""
    if settings.TRACE_CONTENT:
        attributes[key] = text


def span(name: str, attributes: dict, *, client: bool = False):
    """A span named `name` around the block (None inside when tracing is off: nothing is recorded)."""
    if _tracer is None:
        return nullcontext(None)
    return _span(name, attributes, client)


@contextmanager
def _span(name: str, attributes: dict, client: bool):
    from opentelemetry.trace import SpanKind

    with _tracer.start_as_current_span(name, kind=SpanKind.CLIENT if client else SpanKind.INTERNAL,
                                       attributes=attributes) as current:
        yield current
