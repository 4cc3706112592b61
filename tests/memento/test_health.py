"""/healthz (liveness, no database) and /readyz (readiness: the database, and Redis when it is the broker)."""

import logging

import pytest
from django.db import connection
from django.test import Client

from core import rls
from tests.web import free_port, stop


@pytest.fixture(autouse=True)
def web_process(monkeypatch):
    """As in a web process (memento/wsgi.py: enforce_by_default): an anonymous request binds nobody, which a
    fresh connection already is, so the middleware sends no query."""
    monkeypatch.setattr(rls, "_process_default_bypass", False)


@pytest.fixture
def unreachable_database(transactional_db):
    """The default connection points at a closed port until the test ends (as in tests/core/test_outage.py)."""
    saved = dict(connection.settings_dict)
    connection.close()
    connection.settings_dict.update(HOST="127.0.0.1", PORT=str(free_port()))  # nothing listens there
    yield
    connection.close()
    connection.settings_dict.clear()
    connection.settings_dict.update(saved)


def test_healthz_answers_without_touching_the_database(django_db_blocker):
    with django_db_blocker.block():  # any database access raises
        response = Client().get("/healthz")
    assert response.status_code == 200
    assert response.json() == {"status": "ok"}
    assert "no-cache" in response["Cache-Control"]


def test_healthz_answers_while_the_database_is_unreachable(unreachable_database):
    response = Client(raise_request_exception=False).get("/healthz")
    assert response.status_code == 200 and response.json() == {"status": "ok"}


def test_readyz_is_200_when_the_database_answers(db, settings):
    settings.CELERY_BROKER_URL = "sqla+postgresql+psycopg://nobody@/memento"  # the database transport
    response = Client().get("/readyz")
    assert response.status_code == 200
    assert response.json() == {"status": "ok", "checks": {"database": "ok"}}


def test_readyz_is_503_naming_the_database_when_it_is_unreachable(unreachable_database, settings, caplog):
    settings.CELERY_BROKER_URL = "sqla+postgresql+psycopg://nobody@/memento"
    with caplog.at_level(logging.WARNING, logger="memento.health"):
        response = Client(raise_request_exception=False).get("/readyz")
    assert response.status_code == 503
    assert response.json() == {"status": "unavailable", "checks": {"database": "failed"}}
    assert "database:" in caplog.text  # why, in the log; not in the anonymous answer
    assert "127.0.0.1" not in response.content.decode()


def test_readyz_pings_a_redis_broker(db, settings, redis_url):
    if redis_url is None:
        pytest.skip("redis-server is not installed (CI installs it)")
    settings.CELERY_BROKER_URL = redis_url
    response = Client().get("/readyz")
    assert response.status_code == 200
    assert response.json() == {"status": "ok", "checks": {"database": "ok", "broker": "ok"}}


def test_readyz_is_503_naming_the_broker_when_redis_is_unreachable(db, settings):
    settings.CELERY_BROKER_URL = f"redis://127.0.0.1:{free_port()}/0"  # nothing listens there
    response = Client().get("/readyz")
    assert response.status_code == 503
    assert response.json() == {"status": "unavailable", "checks": {"database": "ok", "broker": "failed"}}


def test_probes_are_not_throttled_and_need_no_credentials(db, settings, monkeypatch):
    from rest_framework.throttling import AnonRateThrottle

    # one anonymous API request a minute: a throttled probe would fail its second call
    monkeypatch.setattr(AnonRateThrottle, "THROTTLE_RATES", {**AnonRateThrottle.THROTTLE_RATES, "anon": "1/minute"})
    settings.CELERY_BROKER_URL = "sqla+postgresql+psycopg://nobody@/memento"
    client = Client()
    assert client.get("/api/schema/").status_code == 200
    assert client.get("/api/schema/").status_code == 429  # the lowered rate is in force for the API
    for _ in range(3):
        assert client.get("/healthz").status_code == 200
        assert client.get("/readyz").status_code == 200


def test_probes_refuse_unsafe_methods(db):
    assert Client().post("/healthz").status_code == 405
    assert Client().post("/readyz").status_code == 405


@pytest.mark.slow
def test_served_probes_while_the_database_goes_down_and_comes_back(transactional_db, monkeypatch):
    """gunicorn (the app role, RLS enforced as in production) through a TCP proxy to the database: while the
    proxy is down /healthz stays 200 and /readyz is 503 naming the database; both are 200 again once it is up,
    in the same process."""
    from urllib.parse import parse_qs, urlsplit

    import requests

    from tests import web
    from tests.core.test_outage import DatabaseProxy

    query = {k: v[0] for k, v in parse_qs(urlsplit(web.database_url()).query).items()}
    proxy = DatabaseProxy(f"{query['host']}/.s.PGSQL.{query['port']}")
    proxy.up()

    def via_proxy(url: str) -> str:
        parts = urlsplit(url)
        return f"postgresql://{parts.username}@127.0.0.1:{proxy.port}{parts.path}"

    for name in ("database_url", "app_database_url"):  # the URLs tests.web gives gunicorn
        original = getattr(web, name)
        monkeypatch.setattr(web, name, lambda original=original: via_proxy(original()))
    monkeypatch.setenv("CELERY_BROKER_URL", "sqla+postgresql+psycopg://nobody@/memento")  # the database transport
    port = free_port()
    server = web.start_gunicorn(port)
    base = f"http://127.0.0.1:{port}"
    try:
        assert requests.get(f"{base}/readyz", timeout=30).json() == {"status": "ok", "checks": {"database": "ok"}}
        proxy.down()
        for _ in range(3):  # the kept connection cut, new ones refused
            assert requests.get(f"{base}/healthz", timeout=30).json() == {"status": "ok"}
            down = requests.get(f"{base}/readyz", timeout=30)
            assert down.status_code == 503, down.text
            assert down.json() == {"status": "unavailable", "checks": {"database": "failed"}}
        proxy.up()
        assert requests.get(f"{base}/readyz", timeout=30).status_code == 200
        assert requests.get(f"{base}/healthz", timeout=30).status_code == 200
        assert server.poll() is None
    finally:
        stop(server)
        proxy.down()
    assert "Traceback" not in "".join(server.log)
