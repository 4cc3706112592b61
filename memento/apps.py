from django.apps import AppConfig


class MementoConfig(AppConfig):
    name = "memento"
    verbose_name = "Memento wiring"

    def ready(self) -> None:
        # every process, not only web ones, must set its row-level-security default on each new connection; the
        # deployment checks and the sign-in signal receivers register on import
        from memento import checks, rls, signin  # noqa: F401
