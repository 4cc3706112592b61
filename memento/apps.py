from django.apps import AppConfig


class MementoConfig(AppConfig):
    name = "memento"
    verbose_name = "Memento wiring"
