from django.apps import AppConfig


class CoreConfig(AppConfig):
    """Shared plumbing every app may use: row-level security, API errors, strict serializers, task retries.
    It imports no other project app."""

    name = "core"
    verbose_name = "Memento core"

    def ready(self) -> None:
        # every process, not only web ones, must set its row-level-security default on each new connection
        from core import rls  # noqa: F401
