"""The Celery app's worker-side setup (memento/celery.py), on a real worker process."""

import os
import re

from django.conf import settings
from django.db import connection

from core import rls
from memento.celery import _after_task, _before_task
from memories.tasks import deactivate_expired
from tests.factories import UserFactory
from tests.worker import running_worker, wait_for


def test_a_worker_runs_at_a_lower_cpu_priority_than_the_processes_that_serve_requests(transactional_db):
    assert settings.WORKER_NICENESS > 0
    with running_worker("postgres") as process:
        expected = min(os.getpriority(os.PRIO_PROCESS, 0) + settings.WORKER_NICENESS, 19)
        assert os.getpriority(os.PRIO_PROCESS, process.pid) == expected


def test_a_worker_loads_its_models_as_it_starts_not_at_its_first_task(transactional_db):
    with running_worker("postgres") as process:
        wait_for(lambda: any("warmed up: models loaded" in line for line in list(process.log)), worker=process)
        assert not any("warm-up failed" in line for line in list(process.log))


def _sessions() -> int:
    """Sessions ever opened to the test database (PostgreSQL counts each at its start)."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_stat_clear_snapshot()")
        cursor.execute("SELECT sessions FROM pg_stat_database WHERE datname = current_database()")
        return cursor.fetchone()[0]


_TASK_LINE = re.compile(r"Task \S+\[([0-9a-f-]+)\] (received|succeeded in|raised)")


def _idle(process) -> bool:
    """Whether the worker has ended every task its log says it received, the sweeps it sends itself as it
    starts included (a task still running when its connection is cut would fail, as it should)."""
    received, ended = set(), set()
    for line in list(process.log):
        if found := _TASK_LINE.search(line):
            (received if found[2] == "received" else ended).add(found[1])
    return received <= ended


def _run_tasks(process, count: int) -> None:
    """Send `count` cheap tasks to the worker and wait until its log says each of them succeeded and nothing
    else it took is still running."""
    ids = [deactivate_expired.delay().id for _ in range(count)]
    wait_for(lambda: all(any(f"[{task_id}] succeeded in " in line for line in list(process.log)) for task_id in ids)
             and _idle(process), worker=process)


def test_a_worker_keeps_its_database_connection_from_task_to_task(transactional_db):
    # Celery's own Django fixup closes it around every task: one new PostgreSQL backend per task
    with running_worker("postgres") as process:
        _run_tasks(process, 1)
        before = _sessions()
        _run_tasks(process, 12)
        assert _sessions() - before <= 3


def test_a_task_after_the_database_dropped_the_workers_connection_connects_again(transactional_db):
    # what a database restart does to a kept connection: the next task's health check notices and reconnects
    with running_worker("postgres") as process:
        _run_tasks(process, 1)
        with connection.cursor() as cursor:
            # every other session: the worker's own and its broker's, as a restart of the server would
            cursor.execute("SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE pid <> "
                           "pg_backend_pid() AND datname = current_database() AND backend_type = 'client backend'")
            assert cursor.fetchone()[0] >= 2
        _run_tasks(process, 1)
        assert not [line for line in process.log if " raised " in line], "".join(process.log)


def test_each_task_starts_bound_to_the_workers_default_whatever_the_one_before_bound(transactional_db):
    user = UserFactory()
    rls.activate(user.pk)
    _before_task()
    assert connection.memento_rls == rls.Binding(None, True)  # a worker's process default: bypass, bound to nobody
    with connection.cursor() as cursor:
        cursor.execute("SELECT current_setting('memento.user_id'), current_setting('memento.rls_bypass')")
        assert cursor.fetchone() == ("", "on")


def test_a_task_ends_holding_no_session_lock(transactional_db):
    # a claim (core.claims) its task did not release would outlive it now that the connection stays open
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_lock(7, 7)")
    _after_task()
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND pid = pg_backend_pid()")
        assert cursor.fetchone()[0] == 0


def test_a_task_run_inline_keeps_its_callers_connection_and_transaction(db, eager):
    user = UserFactory()
    deactivate_expired.delay()
    assert type(user).objects.filter(pk=user.pk).exists()  # still inside the test's transaction
