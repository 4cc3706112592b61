"""Database outages: while PostgreSQL cannot be reached, requests are answered 503 with `Retry-After` (JSON
`{"detail": ...}` for the API and /mcp, a short page for the panel and the admin), logged as one warning line
each, and the app recovers by itself when the database is back.

Django turns an exception into a response at every middleware layer (`convert_exception_to_response`), so a
middleware placed first never sees what an inner one raises (core.rls's binds the database session before any
view runs, so an outage shows there first): the one place every uncaught exception of a request passes, from a
middleware or a view, is the 500 handler. memento/urls.py names `server_error` as `handler500`; it answers 503
for a connection-level database error and leaves every other error to Django's own 500 page and traceback log.

Recovery needs nothing from us: Django closes a connection that had errors when the request ends (and checks a
kept one before reuse, CONN_HEALTH_CHECKS), so the next request connects afresh.
"""

import logging
import sys

import psycopg
from django.db import InterfaceError, OperationalError
from django.http import HttpResponse, JsonResponse
from django.views import defaults

logger = logging.getLogger(__name__)

# how long clients are asked to wait: a restart of PostgreSQL takes a few seconds
RETRY_AFTER_SECONDS = 5
# server-side states that mean "not reachable now" rather than "this statement failed": connection exceptions
# (class 08), the server shutting down or starting up (57P01-57P03), too many connections (53300)
OUTAGE_STATES = ("08", "57P01", "57P02", "57P03", "53300")
DETAIL = "The database is unavailable; try again in a few seconds."


def outage_error(exc: BaseException | None) -> BaseException | None:
    """The connection-level database error in `exc`'s chain (what it was raised from or while handling), if any.
    psycopg's errors raised before the server answered (refused, closed, lost) carry no SQLSTATE."""
    seen = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        if isinstance(exc, psycopg.InterfaceError | InterfaceError):
            return exc
        if isinstance(exc, psycopg.OperationalError):
            state = exc.sqlstate or ""
            if not state or state.startswith(OUTAGE_STATES):
                return exc
        elif isinstance(exc, OperationalError) and not isinstance(exc.__cause__, psycopg.Error):
            return exc  # raised by Django itself, e.g. a connection that could not be opened
        exc = exc.__cause__ or exc.__context__
    return None


def wants_json(request) -> bool:
    return request.path.startswith(("/api/", "/mcp")) or "application/json" in request.headers.get("Accept", "")


def server_error(request, template_name: str = defaults.ERROR_500_TEMPLATE_NAME):
    """handler500: 503 + Retry-After when the database is unreachable; Django's 500 otherwise."""
    error = outage_error(sys.exc_info()[1])
    if error is None:
        return defaults.server_error(request, template_name)
    first_line = (str(error).strip().splitlines() or [type(error).__name__])[0]
    logger.warning("database unavailable (%s): 503 for %s %s", first_line, request.method, request.path)
    if wants_json(request):
        response = JsonResponse({"detail": DETAIL}, status=503)
    else:
        response = HttpResponse(
            "<!doctype html><title>Service unavailable</title><h1>Service unavailable</h1>"
            f"<p>{DETAIL}</p>", status=503, content_type="text/html; charset=utf-8",
        )
    response["Retry-After"] = str(RETRY_AFTER_SECONDS)
    response._has_been_logged = True  # Django's own "Service Unavailable" error line and traceback: not needed
    return response
