#!/bin/sh
# The container's process types (Dockerfile): `exec`, so the process is PID 1's child no more - it IS PID 1 and
# gets the SIGTERM of `docker stop` / Kubernetes itself (gunicorn and Celery both stop gracefully on it).
set -eu
cd "$(dirname "$0")/.."
# which process this container runs, for `healthcheck` (Docker runs it beside the process, with the image's
# environment, not this script's)
MARKER="${TMPDIR:-/tmp}/memento-process-type"
case "${1:-web}" in web|worker|beat|migrate) echo "${1:-web}" >"$MARKER" 2>/dev/null || true ;; esac
# Prometheus: this container's processes (gunicorn's workers, Celery's pool) write their figures here, emptied at
# each start; the web container serves them at /metrics, a worker container on METRICS_WORKER_PORT (docs/deploy.md)
case "${1:-web}" in web|worker)
  export PROMETHEUS_MULTIPROC_DIR="${PROMETHEUS_MULTIPROC_DIR:-${TMPDIR:-/tmp}/memento-metrics}"
  mkdir -p "$PROMETHEUS_MULTIPROC_DIR" && find "$PROMETHEUS_MULTIPROC_DIR" -name '*.db' -delete ;;
esac

case "${1:-web}" in
  web)
    shift || true
    # one intra-op thread per web process: requests are the parallelism (memento/management/commands/serve.py)
    export OMP_NUM_THREADS="${OMP_NUM_THREADS:-1}"
    exec python -m gunicorn memento.wsgi:application \
      --bind "0.0.0.0:${PORT:-8000}" \
      --workers "${WEB_WORKERS:-2}" --threads "${WEB_THREADS:-2}" \
      --access-logfile - \
      --graceful-timeout "${WEB_GRACEFUL_TIMEOUT:-25}" \
      --keep-alive 10 --limit-request-line 8190 \
      "$@"
    ;;
  worker)
    shift || true
    # one queue per deployment unless told otherwise: run a second `worker -Q documents` for documents
    exec python -m celery -A memento worker --loglevel INFO --concurrency "${WORKER_CONCURRENCY:-1}" "$@"
    ;;
  beat)
    shift || true
    # exactly one beat per deployment (two would send every periodic task twice); its schedule state is local
    exec python -m celery -A memento beat --loglevel INFO --schedule /tmp/celerybeat-schedule "$@"
    ;;
  migrate)
    shift || true
    exec python manage.py migrate --noinput "$@"
    ;;
  healthcheck)
    # only the web process answers HTTP; a worker or beat that dies exits, and the container with it
    if [ -f "$MARKER" ] && [ "$(cat "$MARKER")" != web ]; then exit 0; fi
    # GET /healthz as a client in front would: a Host from DJANGO_ALLOWED_HOSTS (Django refuses others), and
    # behind a TLS-terminating proxy its X-Forwarded-Proto (else DJANGO_SECURE_SSL_REDIRECT answers a redirect)
    exec python - <<'PY'
import os, sys, urllib.request
host = (os.environ.get("DJANGO_ALLOWED_HOSTS") or "127.0.0.1").split(",")[0].strip().lstrip(".") or "127.0.0.1"
host = "127.0.0.1" if host == "*" else host
request = urllib.request.Request(f"http://127.0.0.1:{os.environ.get('PORT', '8000')}/healthz",
                                 headers={"Host": host, "X-Forwarded-Proto": "https"})
try:
    with urllib.request.urlopen(request, timeout=4) as response:
        sys.exit(0 if response.status == 200 else 1)
except Exception as exc:
    print(f"healthz: {exc}", file=sys.stderr)
    sys.exit(1)
PY
    ;;
  *)
    exec "$@"  # anything else, e.g. `python manage.py createsuperuser`
    ;;
esac
