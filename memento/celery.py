"""The Celery app. Workers start in row-level-security bypass (system code) and refuse a configuration the
system checks reject."""

import logging
import os
import threading
import time

from celery import Celery
from celery.signals import task_postrun, task_prerun, worker_init, worker_process_init, worker_ready

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


@worker_init.connect
def _yield_the_cpu_to_requests(**kwargs) -> None:
    """Lower this worker's CPU priority (its pool's processes inherit it): see WORKER_NICENESS."""
    from django.conf import settings

    if settings.WORKER_NICENESS > 0:
        os.nice(settings.WORKER_NICENESS)


@worker_process_init.connect
def _warm_up(**kwargs) -> None:
    """Load the local models a pool process needs (the embedding model, spaCy, the attribute frames) in the
    background as it starts, so that the first message's extraction does not wait for them (a minute on a busy
    machine). A thread: the pool process must report itself up within seconds; a task that comes first loads what
    it needs itself, as before."""
    threading.Thread(target=warm_up, name="warm-up", daemon=True).start()


@worker_init.connect
def _warm_up_without_a_pool(sender=None, **kwargs) -> None:
    """A worker that runs tasks in its own process (`--pool solo` or threads) has no pool process to start."""
    if "prefork" not in str(getattr(sender, "pool_cls", "prefork")):
        _warm_up()


def warm_up() -> None:
    from django.conf import settings

    from extraction.attributes import statement_frames
    from extraction.dialogue import extract_local
    from integrations import embeddings

    log = logging.getLogger(__name__)
    try:
        if settings.EMBEDDING_PROVIDER == "local":  # a remote endpoint is not called for nothing
            started = time.monotonic()
            embeddings.get_provider().embed(["warm up"])
            found = extract_local("We moved to Lyon last month and I work at a bakery now.")
            statement_frames([(c.content, c.subject) for c in found])
            log.info("warmed up: models loaded in %.1f s", time.monotonic() - started)
    except Exception:  # noqa: BLE001 - a failed warm-up only costs the first task the time it saves
        log.warning("warm-up failed", exc_info=True)


# A task's database connection is treated as a request's: kept for CONN_MAX_AGE and dropped when it broke or fails
# its health check (Celery's Django fixup closes it only every CELERY_DB_REUSE_MAX tasks, settings/workers.py). What a
# closed connection used to undo between tasks is undone by hand: a task starts with the worker's own RLS binding
# and ends holding no session-level lock (core.claims). A task run inline (eager) shares its caller's connection
# and transaction, and is left alone.

def _inline(task) -> bool:
    return task is not None and getattr(task.request, "is_eager", False)


@task_prerun.connect
def _before_task(task=None, **kwargs) -> None:
    from django.db import close_old_connections, connection

    from core import rls

    if _inline(task):
        return
    close_old_connections()
    if connection.connection is not None:
        rls.reset()  # no round trip when the binding is already the default


@task_postrun.connect
def _after_task(task=None, **kwargs) -> None:
    from django.db import DatabaseError, close_old_connections, connection

    if _inline(task):
        return
    if connection.connection is not None and not connection.in_atomic_block:
        try:
            with connection.cursor() as cursor:
                cursor.execute("SELECT pg_advisory_unlock_all()")  # a claim left behind would outlive its task
        except DatabaseError:  # the connection is gone, and its locks with it; closed below
            pass
    close_old_connections()


@worker_ready.connect
def _send_lost_work_again(**kwargs) -> None:
    """A worker killed outright (SIGKILL, out of memory, power loss) takes along the tasks it had taken from the
    broker: kombu's PostgreSQL transport never hands them out again, Redis only after its visibility timeout
    (an hour). So a starting worker sends again, before it takes any task, the documents, imports and queued
    extractions that nobody is working on (core/claims.py: a live worker's claims keep its work from being sent
    twice), and
    the messages still waiting for a vector. Duplicates are harmless: every task is idempotent."""
    from datetime import timedelta

    from django.db import connection

    from conversations.services import messages_requeue_stale
    from conversations.tasks import embed_pending_messages
    from documents.processing import documents_requeue_stale
    from imports.processing import imports_requeue_stale

    try:
        documents_requeue_stale(older_than_seconds=0)
        imports_requeue_stale(older_than_seconds=0)
        messages_requeue_stale(older_than=timedelta(0))
        embed_pending_messages.delay()
    finally:
        connection.close()  # the main process runs no tasks: no connection kept idle in it
