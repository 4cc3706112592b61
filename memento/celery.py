"""The Celery app. Workers start in row-level-security bypass (system code) and refuse a configuration the
system checks reject."""

import os

from celery import Celery
from celery.signals import worker_init

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memento.settings")

app = Celery("memento")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


@worker_init.connect
def _check_configuration(**kwargs) -> None:
    from memento.startup import run_startup_checks

    run_startup_checks()
