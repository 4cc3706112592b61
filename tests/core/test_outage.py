"""Database outages: 503 JSON (or a page) with Retry-After while PostgreSQL cannot be reached, one warning line
instead of a traceback, and recovery without a restart. In this process (a connection to a closed port, a
connection whose server process was terminated) and served by gunicorn through a TCP proxy that goes down and up
like a restarted database server."""

import logging
import socket
import threading
from urllib.parse import parse_qs, urlsplit

import psycopg
import pytest
import requests
from django.db import DataError, close_old_connections, connection
from rest_framework.test import APIClient

from core.outage import RETRY_AFTER_SECONDS, outage_error
from tests import web
from tests.factories import UserFactory, token_for
from tests.web import database_url, free_port, start_gunicorn, stop


@pytest.fixture
def client(transactional_db):
    """An API client whose user and token are committed (the test breaks and restores the connection), and
    which returns the 500 handler's answer instead of raising what the view raised."""
    user = UserFactory()
    api = APIClient(raise_request_exception=False)
    api.credentials(HTTP_AUTHORIZATION=f"Token {token_for(user)}")
    return api


def _assert_outage(response, caplog) -> None:
    assert response.status_code == 503
    assert response["Retry-After"] == str(RETRY_AFTER_SECONDS)
    assert response["Content-Type"] == "application/json"
    assert response.json() == {"detail": "The database is unavailable; try again in a few seconds."}
    outage_lines = [r for r in caplog.records if r.name == "core.outage"]
    assert len(outage_lines) == 1 and outage_lines[0].levelno == logging.WARNING
    assert outage_lines[0].exc_info is None  # one line, no traceback
    assert not [r for r in caplog.records if r.name == "django.request"]  # no "Internal Server Error" + traceback


def test_an_unreachable_database_is_a_503_with_retry_after_and_the_next_request_recovers(client, caplog):
    saved = dict(connection.settings_dict)
    connection.close()
    connection.settings_dict.update(HOST="127.0.0.1", PORT=str(free_port()))  # nothing listens there
    try:
        with caplog.at_level(logging.WARNING):
            # the first query is core.rls's middleware binding the session, before any view
            _assert_outage(client.get("/api/memories/"), caplog)
            caplog.clear()
            page = client.get("/", HTTP_ACCEPT="text/html")
        assert page.status_code == 503 and page["Retry-After"] == str(RETRY_AFTER_SECONDS)
        assert page["Content-Type"].startswith("text/html") and b"Service unavailable" in page.content
    finally:
        connection.close()
        connection.settings_dict.clear()
        connection.settings_dict.update(saved)
    assert client.get("/api/memories/").status_code == 200


def test_a_connection_lost_mid_request_is_a_503_and_the_next_request_recovers(client, caplog, monkeypatch):
    assert client.get("/api/memories/").status_code == 200  # the connection is open and kept
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        pid = cursor.fetchone()[0]
    with psycopg.connect(database_url(), autocommit=True) as admin:  # what a server restart does to it
        admin.execute("SELECT pg_terminate_backend(%s)", [pid])
    monkeypatch.setattr(connection, "health_check_enabled", False)  # the next query finds out, mid-request
    try:
        with caplog.at_level(logging.WARNING):
            _assert_outage(client.get("/api/memories/"), caplog)
        close_old_connections()  # what the WSGI handler does when a response has gone
    except BaseException:
        connection.close()
        raise
    assert client.get("/api/memories/").status_code == 200


def test_only_connection_level_errors_count_as_an_outage():
    assert outage_error(psycopg.OperationalError("connection failed: Connection refused")) is not None
    assert outage_error(psycopg.errors.AdminShutdown("terminating connection")) is not None
    assert outage_error(psycopg.errors.CannotConnectNow("the database system is starting up")) is not None
    assert outage_error(psycopg.InterfaceError("the connection is closed")) is not None
    assert outage_error(psycopg.errors.QueryCanceled("statement timeout")) is None
    assert outage_error(psycopg.errors.DeadlockDetected("deadlock detected")) is None
    assert outage_error(DataError("NaN not allowed in vector")) is None
    try:  # raised while handling an outage (e.g. a `finally` that queries): still the outage
        try:
            raise psycopg.OperationalError("server closed the connection unexpectedly")
        except psycopg.OperationalError:
            raise RuntimeError("cleanup failed")  # noqa: B904 - the implicit context is what is tested
    except RuntimeError as exc:
        assert outage_error(exc) is not None


def test_other_server_errors_stay_500(client, monkeypatch):
    from memories import views

    monkeypatch.setattr(views.MemoryViewSet, "list", lambda self, request: 1 / 0)
    response = client.get("/api/memories/")
    assert response.status_code == 500 and "Retry-After" not in response


# --- served: gunicorn, and a database that goes away and comes back ---------------------------------------------


class DatabaseProxy:
    """127.0.0.1:`port` -> the test server's unix socket. `down()` refuses new connections and cuts open ones
    (what a stopped server does to its clients); `up()` listens again on the same port."""

    def __init__(self, target: str):
        self.target = target
        self.port = free_port()
        self._listener: socket.socket | None = None
        self._open: list[socket.socket] = []
        self._lock = threading.Lock()

    def up(self) -> None:
        listener = socket.socket()
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", self.port))
        listener.listen(64)
        self._listener = listener
        threading.Thread(target=self._accept, args=[listener], daemon=True).start()

    def down(self) -> None:
        try:
            self._listener.shutdown(socket.SHUT_RDWR)  # wakes the accepting thread (close() alone would not)
        except OSError:
            pass
        self._listener.close()
        with self._lock:
            for sock in self._open:
                try:
                    sock.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
                sock.close()
            self._open.clear()

    def _accept(self, listener: socket.socket) -> None:
        while True:
            try:
                client, _ = listener.accept()
            except OSError:
                return  # closed by down()
            server = socket.socket(socket.AF_UNIX)
            server.connect(self.target)
            with self._lock:
                self._open += [client, server]
            for a, b in ((client, server), (server, client)):
                threading.Thread(target=self._pump, args=[a, b], daemon=True).start()

    @staticmethod
    def _pump(source: socket.socket, sink: socket.socket) -> None:
        try:
            while data := source.recv(65536):
                sink.sendall(data)
        except OSError:
            pass
        finally:
            for sock in (source, sink):
                try:
                    sock.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass


@pytest.mark.slow
def test_served_app_answers_503_while_the_database_is_down_and_recovers_without_a_restart(transactional_db,
                                                                                         monkeypatch):
    user = UserFactory()
    token = token_for(user)
    query = {k: v[0] for k, v in parse_qs(urlsplit(database_url()).query).items()}
    proxy = DatabaseProxy(f"{query['host']}/.s.PGSQL.{query['port']}")
    proxy.up()

    def via_proxy(url: str) -> str:  # the same role and database, through the proxy
        parts = urlsplit(url)
        return f"postgresql://{parts.username}@127.0.0.1:{proxy.port}{parts.path}"

    # whichever URLs tests.web gives gunicorn (one role, or the app role and the maintenance role)
    for name in ("database_url", "app_database_url"):
        original = getattr(web, name, None)
        if original is not None:
            monkeypatch.setattr(web, name, lambda original=original: via_proxy(original()))
    port = free_port()
    server = start_gunicorn(port)
    base, auth = f"http://127.0.0.1:{port}", {"Authorization": f"Token {token}"}
    try:
        assert requests.get(f"{base}/api/memories/", headers=auth, timeout=30).status_code == 200
        browser = requests.Session()  # signed in to the panel: its pages read the session from the database
        browser.get(f"{base}/accounts/login/", timeout=30)
        signed_in = browser.post(f"{base}/accounts/login/", timeout=30, headers={"Referer": f"{base}/"}, data={
            "username": user.username, "password": "correct horse battery staple",
            "csrfmiddlewaretoken": browser.cookies["csrftoken"]})
        assert signed_in.ok and "sessionid" in browser.cookies
        proxy.down()
        for _ in range(3):  # kept connections cut, new ones refused
            down = requests.get(f"{base}/api/memories/", headers=auth, timeout=30)
            assert down.status_code == 503, down.text
            assert down.headers["Retry-After"] == str(RETRY_AFTER_SECONDS) and "detail" in down.json()
        page = browser.get(f"{base}/", timeout=30)
        assert page.status_code == 503 and page.headers["Content-Type"].startswith("text/html")
        # an anonymous page that reads nothing (the login form, the API schema) is served all the same
        assert requests.get(f"{base}/accounts/login/", timeout=30).status_code == 200
        proxy.up()
        back = requests.get(f"{base}/api/memories/", headers=auth, timeout=30)
        assert back.status_code == 200, back.text
        assert server.poll() is None  # the same process
    finally:
        stop(server)
        proxy.down()
    log = "".join(server.log)
    assert "database unavailable" in log and "Traceback" not in log
