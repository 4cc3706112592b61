from django.apps import AppConfig


class ObservabilityConfig(AppConfig):
    """Prometheus metrics and OpenTelemetry traces; no models. Every process (web, worker, command) counts its
    Celery tasks and database connections, and sets tracing up when an OTLP endpoint is configured."""

    name = "observability"
    verbose_name = "Memento observability"

    def ready(self) -> None:
        from celery.signals import worker_init

        from observability import exposition, metrics, tracing

        metrics.connect_signals()
        worker_init.connect(exposition.start_worker_server, weak=False, dispatch_uid="metrics-worker-server")
        tracing.setup()
