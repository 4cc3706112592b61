import os

import pytest
from django.conf import settings
from django.core.cache import cache
from rest_framework.test import APIClient

from memories import spaces
from tests.factories import UserFactory, api_client

# fixtures of modules that are not conftests, for every test package: the fake OpenAI server, the Celery worker
pytest_plugins = ["tests.fakes.openai_server", "tests.worker"]

# Tests run with DEBUG off, as production does, so they need a secret key other than the public default (the
# checks refuse it, memento.E002): this process and those the tests start (gunicorn, Celery, manage.py).
os.environ.setdefault("DJANGO_SECRET_KEY", "tests-only-secret-key-not-for-any-server-0123456789abcdefghij")
settings.SECRET_KEY = os.environ["DJANGO_SECRET_KEY"]


@pytest.fixture(autouse=True)
def fresh_cache():
    """Throttle counts live in the cache: one test's requests must not use up the next one's. Tables' embedding
    models too (memories.spaces): one test's switch, rolled back, must not be the next one's model."""
    cache.clear()
    spaces.forget()


@pytest.fixture
def user(db):
    return UserFactory()


@pytest.fixture
def other_user(db):
    return UserFactory()


@pytest.fixture
def api(user) -> APIClient:
    """An API client authenticated with `user`'s token."""
    return api_client(user)


@pytest.fixture
def other_api(other_user) -> APIClient:
    return api_client(other_user)


@pytest.fixture(autouse=True)
def media_root(settings, tmp_path, monkeypatch):
    """Uploads go to a throw-away MEDIA_ROOT (also for worker processes a test starts)."""
    root = tmp_path / "media"
    root.mkdir()
    settings.MEDIA_ROOT = str(root)
    monkeypatch.setenv("MEDIA_ROOT", str(root))
    return root
