import pytest
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from tests.factories import UserFactory

# fixtures of modules that are not conftests, for every test package: the fake OpenAI server, the Celery worker
pytest_plugins = ["tests.fakes.openai_server", "tests.worker"]


@pytest.fixture
def user(db):
    return UserFactory()


@pytest.fixture
def other_user(db):
    return UserFactory()


def _client_for(user) -> APIClient:
    client = APIClient()
    token, _ = Token.objects.get_or_create(user=user)
    client.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")
    return client


@pytest.fixture
def api(user) -> APIClient:
    """An API client authenticated with `user`'s token."""
    return _client_for(user)


@pytest.fixture
def other_api(other_user) -> APIClient:
    return _client_for(other_user)


@pytest.fixture(autouse=True)
def media_root(settings, tmp_path, monkeypatch):
    """Uploads go to a throw-away MEDIA_ROOT (also for worker processes a test starts)."""
    root = tmp_path / "media"
    root.mkdir()
    settings.MEDIA_ROOT = str(root)
    monkeypatch.setenv("MEDIA_ROOT", str(root))
    return root
