"""Memento settings, driven by environment variables: production differs by env vars only. One module per concern,
all read through `memento.settings` (DJANGO_SETTINGS_MODULE everywhere):

  base.py           paths, secret key, hosts, apps, middleware, templates, static/media files, logging
  database.py       PostgreSQL (the app and maintenance roles), read replicas, the cache
  security.py       sign-in, API tokens, OAuth 2.1, DRF (auth, throttles, parsers), schema, sessions, headers
  search.py         embeddings, memory limits, the search paths' knobs, the LangGraph store's bounds
  pipelines.py      extraction, documents, imports, retention, consolidation, idempotency, webhooks
  observability.py  Prometheus metrics and OpenTelemetry tracing
  workers.py        Celery: broker, delivery, workers' priority, the periodic sweeps

Every variable is listed with its default in README.md ("Configuration").
"""

from memento.settings.base import *  # noqa: F403
from memento.settings.database import *  # noqa: F403
from memento.settings.database import _database  # noqa: F401  (tests build a replica's alias the same way)
from memento.settings.observability import *  # noqa: F403
from memento.settings.pipelines import *  # noqa: F403
from memento.settings.search import *  # noqa: F403
from memento.settings.security import *  # noqa: F403
from memento.settings.workers import *  # noqa: F403
