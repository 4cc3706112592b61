from django.apps import AppConfig


class WebhooksConfig(AppConfig):
    """Users' HTTP endpoints told about changes to their data (core.events), signed, retried and logged."""

    name = "webhooks"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # every process (web, worker, commands) turns its events into deliveries
        from webhooks import receivers  # noqa: F401
