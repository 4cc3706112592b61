"""The OpenAPI schema is built once per process, one build at a time: two builds at once raced inside
drf-spectacular (a 500 with a traceback when a busy machine's readiness probe asked twice), and it needs no
database."""

import threading

import pytest
from django.test import Client

from core import rls
from memento import schema


@pytest.fixture
def counted(monkeypatch):
    """Schema builds, each slow enough for the requests below to overlap."""
    builds = []
    base = schema.SchemaView.generator_class

    class Counting(base):
        def get_schema(self, **kwargs):
            builds.append(threading.get_ident())
            threading.Event().wait(0.2)
            return super().get_schema(**kwargs)

    monkeypatch.setattr(schema.SchemaView, "generator_class", Counting)
    monkeypatch.setattr(rls, "_process_default_bypass", False)  # as in a web process: anonymous needs no database
    schema._built.clear()
    yield builds
    schema._built.clear()


def test_concurrent_first_requests_share_one_build(counted, django_db_blocker):
    answers = []

    def ask():
        answers.append(Client().get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json"))

    with django_db_blocker.block():
        threads = [threading.Thread(target=ask) for _ in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    assert [a.status_code for a in answers] == [200] * 4
    assert len({a.content for a in answers}) == 1
    assert len(counted) == 1
