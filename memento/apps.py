from django.apps import AppConfig


class MementoConfig(AppConfig):
    name = "memento"
    verbose_name = "Memento wiring"

    def ready(self) -> None:
        # the deployment checks and the sign-in signal receivers register on import
        from django.db.models.signals import post_migrate

        from memento import checks, roles, signin  # noqa: F401
        from memories import spaces

        # once per migrate (and per flush): the signal goes to each app with models, after every migration ran
        post_migrate.connect(roles.grant_app_role, sender=self.apps.get_app_config("memories"))
        post_migrate.connect(spaces.record_models, sender=self.apps.get_app_config("memories"))
