from django.apps import AppConfig


class ImportsConfig(AppConfig):
    name = "imports"
    default_auto_field = "django.db.models.BigAutoField"
