# Memento's production image: one image, four process types chosen by the first argument (deploy/entrypoint.sh):
#   web      gunicorn memento.wsgi (the app role; row-level security enforced)
#   worker   celery -A memento worker (the maintenance role)
#   beat     celery -A memento beat (exactly one per deployment)
#   migrate  manage.py migrate, then exits (a release job, run before new web/worker code: docs/deploy.md)
# Configuration comes from the environment only (DATABASE_URL, MAINTENANCE_DATABASE_URL, CELERY_BROKER_URL,
# DJANGO_SECRET_KEY, ...): docs/deploy.md lists them. Nothing here starts a database.
FROM python:3.11-slim

# PIP_EXTRA_INDEX_URL: the CPU build of torch (PyPI's default wheel brings CUDA, gigabytes the app never uses)
ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PIP_EXTRA_INDEX_URL=https://download.pytorch.org/whl/cpu \
    DJANGO_SETTINGS_MODULE=memento.settings \
    HF_HUB_OFFLINE=1 \
    PORT=8000 \
    STATIC_ROOT=/app/staticfiles \
    MEDIA_ROOT=/data/media \
    EMBEDDING_ONNX_DIR=/app/onnx

# libpq is not needed (psycopg[binary] bundles it); curl is not needed either (the health check is Python)
RUN useradd --system --uid 10001 --home-dir /app --shell /usr/sbin/nologin memento \
    && mkdir -p /app /data/media && chown memento /data/media
WORKDIR /app

# requirements first: the dependency layer is rebuilt only when they change (the client package is installed
# editable from ./clients/python, so it comes with them)
COPY requirements.txt ./
COPY clients/python ./clients/python
RUN pip install -r requirements.txt

COPY . .
# Static files are built into the image (WhiteNoise serves them); settings load without a database for this.
# The local embedding model is exported for ONNX Runtime once, here, not by each container's first search.
RUN DJANGO_SECRET_KEY=build-only-not-a-secret-0123456789abcdefghijklmnopqrstuvwxyz0123456789 \
    DATABASE_URL=postgresql://build@build.invalid/build CELERY_BROKER_URL=redis://build.invalid:6379/0 \
    sh -c 'python manage.py collectstatic --noinput \
      && python -c "import django; django.setup(); from integrations.embeddings import get_provider; \
get_provider().embed([\"ready\"])"' \
    && chmod +x deploy/entrypoint.sh

USER memento
EXPOSE 8000
# Liveness only (no database): a database outage must not get every web container restarted at once. Readiness
# (/readyz) is for the load balancer or orchestrator, which sends it its own probe.
HEALTHCHECK --interval=30s --timeout=5s --start-period=120s --retries=3 CMD ["deploy/entrypoint.sh", "healthcheck"]
# exec form: the process gets SIGTERM from `docker stop` directly (graceful shutdown: docs/deploy.md)
ENTRYPOINT ["deploy/entrypoint.sh"]
CMD ["web"]
