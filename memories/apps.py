from django.apps import AppConfig


class MemoriesConfig(AppConfig):
    name = "memories"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from memories import bookkeeping, checks, signals  # noqa: F401  (registers checks and signal hooks)
