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


@worker_init.connect
def _poll_the_database_broker_often(**kwargs) -> None:
    """kombu's SQLAlchemy transport (the default broker, on PostgreSQL) polls once a second and cannot take the
    interval as a transport option (those go to create_engine()), so set it where the transport reads it. Each
    poll is one indexed SELECT per worker. (At worker start, not at import: importing this module must not load
    the settings.)"""
    from django.conf import settings
    from kombu.transport import sqlalchemy

    sqlalchemy.Transport.polling_interval = settings.CELERY_POLLING_INTERVAL
