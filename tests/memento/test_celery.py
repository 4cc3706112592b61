"""The Celery app's worker-side setup (memento/celery.py), on a real worker process."""

import os

from django.conf import settings

from tests.worker import running_worker


def test_a_worker_runs_at_a_lower_cpu_priority_than_the_processes_that_serve_requests(transactional_db):
    assert settings.WORKER_NICENESS > 0
    with running_worker("postgres") as process:
        expected = min(os.getpriority(os.PRIO_PROCESS, 0) + settings.WORKER_NICENESS, 19)
        assert os.getpriority(os.PRIO_PROCESS, process.pid) == expected
