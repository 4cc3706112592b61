"""The background pipelines' knobs: extraction, documents, imports, retention, consolidation, idempotency keys and
webhooks."""

from memento.settings.base import env

# --- Extraction pipeline (conversations). ----------------------------------------------------------------------
# When messages are turned into memories: after every user "message", "every_n" user messages, or at "end".
MEMORY_EXTRACTION_TRIGGER = env.str("MEMORY_EXTRACTION_TRIGGER", default="message")
MEMORY_EXTRACTION_EVERY_N = env.int("MEMORY_EXTRACTION_EVERY_N", default=5)
# An OpenAI-compatible chat endpoint for extraction and reconciliation; without it the local rules decide.
MEMORY_LLM_API_BASE = env.str("MEMORY_LLM_API_BASE", default="")
MEMORY_LLM_API_KEY = env.str("MEMORY_LLM_API_KEY", default="")
MEMORY_LLM_MODEL = env.str("MEMORY_LLM_MODEL", default="")
MEMORY_LLM_TIMEOUT = env.float("MEMORY_LLM_TIMEOUT", default=30.0)
MEMORY_CONTEXT_BUDGET = env.int("MEMORY_CONTEXT_BUDGET", default=1000)

# --- Documents pipeline. -------------------------------------------------------------------------------------
DOCUMENT_MAX_BYTES = env.int("DOCUMENT_MAX_BYTES", default=20 * 1024 * 1024)  # larger uploads: 413
# What one document may cost the worker, whatever its file's size (a 179 KB DOCX can unpack to 52 MB of XML):
# a DOCX's unpacked members (413 at upload) and each PDF stream; its extracted text; its chunks (~28 a second on
# two cores: 5000 take ~3 minutes). Over a limit, the document ends `failed` saying which.
DOCUMENT_MAX_UNPACKED_BYTES = env.int("DOCUMENT_MAX_UNPACKED_BYTES", default=50 * 1024 * 1024)
DOCUMENT_MAX_TEXT_CHARS = env.int("DOCUMENT_MAX_TEXT_CHARS", default=5_000_000)
DOCUMENT_MAX_CHUNKS = env.int("DOCUMENT_MAX_CHUNKS", default=5000)
DOCUMENT_BATCH_SIZE = env.int("DOCUMENT_BATCH_SIZE", default=32)  # chunks per commit (progress step)
DOCUMENT_EMBED_BATCH_SIZE = env.int("DOCUMENT_EMBED_BATCH_SIZE", default=256)  # chunks per embedding call
DOCUMENT_MEMORIES_PER_CHUNK = env.int("DOCUMENT_MEMORIES_PER_CHUNK", default=5)  # 0: chunks only, no memories
# a document nobody is processing (its worker died) with no progress this long is queued again; it covers a task
# waiting between two retries (retry_backoff_max 120 s, core/tasks.py) at the cost of one early extra attempt
DOCUMENT_STALE_SECONDS = env.int("DOCUMENT_STALE_SECONDS", default=60)
# Chunks one task processes (~10 s on two cores) before the document goes to the back of the queue; with one
# document per owner in the queue, the worker takes turns between the users with work.
DOCUMENT_TASK_CHUNKS = env.int("DOCUMENT_TASK_CHUNKS", default=256)
# ... or this many seconds, whichever comes first: a share ends after the chunk that passes it, so another user's
# message waits for one short share, not for a whole book's worth of chunks.
DOCUMENT_TASK_SECONDS = env.float("DOCUMENT_TASK_SECONDS", default=3.0)
# A queue of their own for document tasks (empty: the default queue), which a worker of their own consumes:
# `serve` runs two workers so (a message's extraction never waits for someone's book); see README, "Workers"
DOCUMENT_TASK_QUEUE = env.str("DOCUMENT_TASK_QUEUE", default="")
CELERY_TASK_ROUTES = {"documents.tasks.process_document": {"queue": DOCUMENT_TASK_QUEUE}} if DOCUMENT_TASK_QUEUE \
    else {}
# The hard budget of one task (reading and cutting up a document is one task): past it the document ends `failed`
# saying so; deleting or reprocessing a document stops its running task within a second.
DOCUMENT_WORK_SECONDS = env.float("DOCUMENT_WORK_SECONDS", default=300.0)

# --- Imports (imports/: ChatGPT, Claude, Mem0, LangGraph store, JSON Lines). ------------------------------------
IMPORT_MAX_BYTES = env.int("IMPORT_MAX_BYTES", default=100 * 1024 * 1024)  # an upload; larger: 413
IMPORT_MAX_UNPACKED_BYTES = env.int("IMPORT_MAX_UNPACKED_BYTES", default=300 * 1024 * 1024)  # what a zip unpacks to
IMPORT_ZIP_MAX_MEMBERS = env.int("IMPORT_ZIP_MAX_MEMBERS", default=20000)
IMPORT_MAX_ITEMS = env.int("IMPORT_MAX_ITEMS", default=50000)  # conversations + memories of one import
IMPORT_MAX_MESSAGES = env.int("IMPORT_MAX_MESSAGES", default=500000)
IMPORT_TASK_MESSAGES = env.int("IMPORT_TASK_MESSAGES", default=1000)  # messages/memories one task writes
IMPORT_STALE_SECONDS = env.int("IMPORT_STALE_SECONDS", default=120)  # no progress this long, unclaimed: sent again

# --- Retention: what the hourly cleanup (memories.retention) deletes, in batches. Versions are the audit trail
# and are never deleted by it; expired sessions always go.
MEMORY_EVENT_RETENTION_DAYS = env.int("MEMORY_EVENT_RETENTION_DAYS", default=90)  # READ / SEARCH events
LOGIN_ATTEMPT_RETENTION_DAYS = env.int("LOGIN_ATTEMPT_RETENTION_DAYS", default=30)  # django-axes rows
BROKER_MESSAGE_RETENTION_DAYS = env.int("BROKER_MESSAGE_RETENTION_DAYS", default=7)  # delivered (PostgreSQL broker)

# Consolidation (profiles.consolidation): near-duplicates (cosine at least this, same subject and attribute) are
# merged; a run starts after this many new memories or this many hours; a task compares this many memories.
CONSOLIDATION_THRESHOLD = env.float("CONSOLIDATION_THRESHOLD", default=0.9)
CONSOLIDATION_AFTER = env.int("CONSOLIDATION_AFTER", default=50)
CONSOLIDATION_PERIOD_HOURS = env.int("CONSOLIDATION_PERIOD_HOURS", default=24)
CONSOLIDATION_SHARE = env.int("CONSOLIDATION_SHARE", default=200)

# Idempotency-Key (core.idempotency): a retry with the same key and request gets the first answer this long
IDEMPOTENCY_TTL_HOURS = env.int("IDEMPOTENCY_TTL_HOURS", default=24)

# --- Webhooks (webhooks/, README "Webhooks"). ---------------------------------------------------------------
# Private, loopback and link-local receivers are refused (SSRF) unless this is on (development, tests).
WEBHOOKS_ALLOW_PRIVATE = env.bool("WEBHOOKS_ALLOW_PRIVATE", default=False)
WEBHOOKS_TIMEOUT = env.float("WEBHOOKS_TIMEOUT", default=10.0)  # seconds for one POST, connecting included
# a failed POST is tried again after ~BACKOFF * 2**n seconds (jittered, at most BACKOFF_MAX), MAX_RETRIES times
WEBHOOKS_MAX_RETRIES = env.int("WEBHOOKS_MAX_RETRIES", default=8)
WEBHOOKS_RETRY_BACKOFF = env.int("WEBHOOKS_RETRY_BACKOFF", default=30)
WEBHOOKS_RETRY_BACKOFF_MAX = env.int("WEBHOOKS_RETRY_BACKOFF_MAX", default=3600)
WEBHOOKS_DISABLE_AFTER = env.int("WEBHOOKS_DISABLE_AFTER", default=5)  # deliveries failed in a row switch it off
WEBHOOKS_MAX_ENDPOINTS = env.int("WEBHOOKS_MAX_ENDPOINTS", default=20)  # per user
WEBHOOKS_LOG_DAYS = env.int("WEBHOOKS_LOG_DAYS", default=30)  # finished deliveries kept in the log; 0: for ever
