from django.apps import AppConfig


class StoreConfig(AppConfig):
    """The LangGraph store API: a view of the owner's memories as LangGraph store items (ARCHITECTURE.md, "The
    LangGraph store"). It sits above `memories` and writes only through memories' services."""

    name = "store"
    default_auto_field = "django.db.models.BigAutoField"
