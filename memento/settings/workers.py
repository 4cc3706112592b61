"""Celery: the broker, delivery guarantees, the workers' priority and the periodic sweeps (beat)."""

from memento.settings.base import env
from memento.settings.database import PROCESS_DATABASE_URL
from memento.settings.observability import METRICS_BACKLOG_SECONDS, METRICS_ENABLED

# --- Celery. -------------------------------------------------------------------------------------------------
CELERY_BROKER_URL = env.str(
    "CELERY_BROKER_URL",
    default="sqla+" + PROCESS_DATABASE_URL.replace("postgresql://", "postgresql+psycopg://", 1),
)
CELERY_RESULT_BACKEND = None
CELERY_TASK_ALWAYS_EAGER = env.bool("CELERY_TASK_ALWAYS_EAGER", default=False)
CELERY_TASK_ACKS_LATE = True  # a task killed mid-way is delivered again
CELERY_TASK_REJECT_ON_WORKER_LOST = True
# One task ahead: a polling transport answers "nothing" while the worker holds as many unacknowledged tasks as it
# may, then sleeps CELERY_POLLING_INTERVAL, so with 1 each task waited up to that long after the one before (about
# 5 tasks a second: under bench/load.py's appends extraction fell 6 minutes behind in 10). Work a killed worker had
# taken is sent again from the database's state at the next start (memento/celery.py), however many it held.
CELERY_WORKER_PREFETCH_MULTIPLIER = 2
# Celery's Django fixup closes every database connection before and after every task unless this is set, so each
# task connected afresh: ~10 new PostgreSQL sessions a second under bench/load.py, each a forked backend that warms
# its caches again. Connections now last CONN_MAX_AGE, as in the web processes (memento/celery.py), and are
# renewed after this many tasks at the latest.
CELERY_DB_REUSE_MAX = env.int("CELERY_DB_REUSE_MAX", default=1000)
# Workers run at this lower CPU priority (nice): where they share cores with the web processes, requests go first
# and background work (extraction, documents, embedding batches) takes the CPU they leave, catching up when the
# load drops. With equal priority the worker keeping up with bench/load.py's appends doubled search p95.
WORKER_NICENESS = env.int("WORKER_NICENESS", default=10)
# Polling transports: a short interval keeps "POST message -> memory searchable" quick. kombu's SQLAlchemy
# transport hands every transport option to create_engine(), which rejects this one, so memento/celery.py sets
# it on that transport's class instead.
CELERY_POLLING_INTERVAL = env.float("CELERY_POLLING_INTERVAL", default=0.2)
CELERY_BROKER_TRANSPORT_OPTIONS = (
    {} if CELERY_BROKER_URL.startswith("sqla+")
    else {"polling_interval": CELERY_POLLING_INTERVAL}
)
# Work a killed worker held is sent again when a worker starts (memento/celery.py), and by these sweeps when
# others live on: every 30 s, only what no live worker claims (core/claims.py).
CELERY_BEAT_SCHEDULE = {
    "deactivate-expired-memories": {"task": "memories.tasks.deactivate_expired", "schedule": 300.0},
    "embed-pending-memories": {"task": "memories.tasks.embed_pending", "schedule": 60.0},
    "requeue-stale-extractions": {"task": "conversations.tasks.requeue_stale_extractions", "schedule": 30.0},
    "embed-pending-messages": {"task": "conversations.tasks.embed_pending_messages", "schedule": 120.0},
    "requeue-stale-documents": {"task": "documents.tasks.requeue_stale_documents", "schedule": 30.0},
    "requeue-stale-imports": {"task": "imports.tasks.requeue_stale_imports", "schedule": 30.0},
    "purge-expired-rows": {"task": "memories.tasks.purge_expired", "schedule": 3600.0},
    # large owners' own HNSW indexes made or dropped (memories.owner_indexes; a no-op when nothing changed)
    "sync-owner-indexes": {"task": "memories.tasks.sync_owner_indexes", "schedule": 900.0},
    # consolidation runs for owners with CONSOLIDATION_AFTER new memories, or anything new for a day (profiles)
    "consolidate-due": {"task": "profiles.tasks.consolidate_due", "schedule": 600.0},
    "purge-idempotency-keys": {"task": "core.tasks.purge_idempotency_keys", "schedule": 3600.0},
    "requeue-stale-deliveries": {"task": "webhooks.tasks.requeue_stale_deliveries", "schedule": 60.0},
    "purge-old-deliveries": {"task": "webhooks.tasks.purge_old_deliveries", "schedule": 3600.0},
}
if METRICS_ENABLED:
    CELERY_BEAT_SCHEDULE["observe-backlog"] = {"task": "memento.tasks.observe_backlog",
                                               "schedule": METRICS_BACKLOG_SECONDS}
