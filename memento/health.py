"""Probes for orchestrators and load balancers. Plain Django views, not DRF: no authentication, no throttle (a
probe every few seconds from each balancer would use up the anonymous rate), and no session (a probe sends no
cookie, so the middleware touches nothing either).

`/healthz` (liveness): the process answers. It reads no database, so a database outage does not make an
orchestrator restart every web process at once. `/readyz` (readiness): this process can serve, i.e. PostgreSQL
answers `SELECT 1` and, when Celery's broker is Redis, Redis answers PING. A failed check is a 503 naming it, so a
balancer stops sending requests here until it passes again."""

import logging

import redis
from django.conf import settings
from django.db import DatabaseError, connection
from django.http import JsonResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_safe

logger = logging.getLogger(__name__)

# A probe's own limit on waiting for Redis: orchestrators time a probe out after a few seconds (Kubernetes: 1 s by
# default), and a hung check must read as "not ready", not as a hung process
REDIS_PROBE_TIMEOUT_SECONDS = 2.0


@never_cache
@require_safe
def healthz(request):
    """Liveness: 200 while the process serves requests, whatever the database's state."""
    return JsonResponse({"status": "ok"})


def _database() -> str | None:
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
            cursor.fetchone()
    except DatabaseError as exc:
        # the connection is not kept: Django closes a connection whose query failed after the response
        return f"{type(exc).__name__}: {exc}".strip().splitlines()[0]
    return None


def _redis_broker() -> bool:
    return settings.CELERY_BROKER_URL.startswith(("redis://", "rediss://"))


def _broker() -> str | None:
    try:
        client = redis.Redis.from_url(settings.CELERY_BROKER_URL, socket_timeout=REDIS_PROBE_TIMEOUT_SECONDS,
                                      socket_connect_timeout=REDIS_PROBE_TIMEOUT_SECONDS)
        try:
            client.ping()
        finally:
            client.close()
    except redis.RedisError as exc:
        return f"{type(exc).__name__}: {exc}".strip().splitlines()[0]
    return None


@never_cache
@require_safe
def readyz(request):
    """Readiness: 200 when every check passes, else 503 naming the checks that failed. Why a check failed goes to
    the log, not to the anonymous caller (it can name hosts and ports)."""
    checks = {"database": _database}
    if _redis_broker():  # the PostgreSQL transport is the database, checked already
        checks["broker"] = _broker
    errors = {name: check() for name, check in checks.items()}
    failed = [name for name, error in errors.items() if error]
    if failed:
        logger.warning("not ready: %s", "; ".join(f"{name}: {errors[name]}" for name in failed))
    body = {"status": "unavailable" if failed else "ok",
            "checks": {name: "failed" if error else "ok" for name, error in errors.items()}}
    return JsonResponse(body, status=503 if failed else 200)
