"""`GET /metrics` in Prometheus' text format, off the public surface: it answers a loopback peer, or a request
with `Authorization: Bearer <METRICS_TOKEN>` when that setting is set; anyone else gets a 404, as if it did not
exist. Behind a reverse proxy (DJANGO_BEHIND_PROXY) a request the proxy forwarded (X-Forwarded-For) is not a
loopback peer, even though the proxy itself connects from loopback.

With PROMETHEUS_MULTIPROC_DIR (`manage.py serve`, the Docker entrypoint) one scrape adds up every process that
writes there: all gunicorn workers and, under `serve`, the Celery workers too. A worker in a container of its own
answers on METRICS_WORKER_PORT instead (`worker_server`), with the same rule.
"""

import hmac
import ipaddress
import logging
import os
import threading
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

from django.conf import settings
from django.http import Http404, HttpResponse
from django.views.decorators.cache import never_cache
from prometheus_client import CONTENT_TYPE_PLAIN_0_0_4, CollectorRegistry, generate_latest, multiprocess

from observability import metrics

logger = logging.getLogger(__name__)

_scrape_time = CollectorRegistry(auto_describe=False)
_scrape_time.register(metrics.DatabaseConnections())


def multiprocess_dir() -> str:
    return os.environ.get("PROMETHEUS_MULTIPROC_DIR", "")


def allowed(*, peer: str, authorization: str, forwarded: bool) -> bool:
    """Whether a scrape from `peer` with that Authorization header may read the figures."""
    token = settings.METRICS_TOKEN
    if token and hmac.compare_digest(authorization.encode(), f"Bearer {token}".encode()):
        return True
    if forwarded and settings.BEHIND_PROXY:
        return False
    try:
        return ipaddress.ip_address(peer).is_loopback
    except ValueError:
        return False


def exposition(*, with_database: bool) -> bytes:
    """Every process's figures (or this one's alone), then the scrape-time ones."""
    if multiprocess_dir():
        registry = CollectorRegistry(auto_describe=False)
        multiprocess.MultiProcessCollector(registry)
    else:
        registry = metrics.REGISTRY
    text = generate_latest(registry)
    return text + generate_latest(_scrape_time) if with_database else text


@never_cache
def metrics_view(request):
    if not metrics.enabled() or not allowed(
            peer=request.META.get("REMOTE_ADDR", ""), authorization=request.headers.get("Authorization", ""),
            forwarded="HTTP_X_FORWARDED_FOR" in request.META):
        raise Http404
    return HttpResponse(exposition(with_database=True), content_type=CONTENT_TYPE_PLAIN_0_0_4)


def _worker_app(environ, start_response):
    ok = environ.get("PATH_INFO") == "/metrics" and allowed(
        peer=environ.get("REMOTE_ADDR", ""), authorization=environ.get("HTTP_AUTHORIZATION", ""), forwarded=False)
    if not ok:
        start_response("404 Not Found", [("Content-Type", "text/plain")])
        return [b"Not Found\n"]
    start_response("200 OK", [("Content-Type", CONTENT_TYPE_PLAIN_0_0_4)])
    return [exposition(with_database=False)]


class _QuietHandler(WSGIRequestHandler):
    def log_message(self, format, *args):  # noqa: A002 - one line per scrape would drown the worker's log
        pass


def worker_server(port: int, host: str = "0.0.0.0") -> WSGIServer:  # noqa: S104 - a container's own port
    """Serve the worker's figures on `port` from a daemon thread (Celery's main process; the pool processes
    write theirs to PROMETHEUS_MULTIPROC_DIR)."""
    server = make_server(host, port, _worker_app, handler_class=_QuietHandler)
    threading.Thread(target=server.serve_forever, name="metrics", daemon=True).start()
    logger.info("worker metrics on port %s", server.server_port)
    return server


def start_worker_server(**kwargs) -> None:
    """Celery's worker_init: the worker's own /metrics when METRICS_WORKER_PORT is set."""
    if metrics.enabled() and settings.METRICS_WORKER_PORT:
        worker_server(settings.METRICS_WORKER_PORT)
