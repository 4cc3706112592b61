"""The database (PostgreSQL with pgvector only), its roles and read replicas, and the cache."""

import os
from urllib.parse import parse_qs, unquote, urlsplit

from memento.settings.base import STATE_DIR, env

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
