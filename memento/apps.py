from django.apps import AppConfig


class MementoConfig(AppConfig):
    name = "memento"
    verbose_name = "Memento wiring"

    def ready(self) -> None:
        # the deployment checks and the sign-in signal receivers register on import
        from memento import checks, signin  # noqa: F401
