"""WSGI entry point for gunicorn. Web processes connect as the app role, which cannot bypass row-level security,
enforce it by default, and refuse to start with a configuration the system checks reject (e.g. embedding
dimensions that do not fit the database)."""

import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memento.settings")
# the app role: row-level security binds it, whatever SQL it runs (memento/roles.py)
os.environ["MEMENTO_DATABASE_ROLE"] = "app"

application = get_wsgi_application()

from core import rls  # noqa: E402
from memento.startup import run_startup_checks  # noqa: E402
from memories import bookkeeping  # noqa: E402

rls.enforce_by_default()
# what reads and searches leave behind is written by a thread of its own, not before the kept-alive connection's
# next request (memories.bookkeeping)
bookkeeping.write_in_background()
run_startup_checks()

from django.conf import settings  # noqa: E402

if settings.EMBEDDING_PROVIDER == "local":
    # the local model loaded before the first request, not by the first few at once: under load, a web process
    # loading it while serving missed gunicorn's heartbeat and was killed (BENCHMARKS.md, "Mixed load")
    from integrations.embeddings import embed_text  # noqa: E402

    embed_text("ready")

import gc  # noqa: E402

# Everything loaded so far (Django, the model, torch: ~200k objects) lives as long as the process: out of the
# collector's full passes, which walked all of it inside whichever request they fell in (~90 ms at 1M, BENCHMARKS.md)
gc.freeze()
