"""The client package's tests run against a live Memento server (pytest-django's `live_server`: the app in a
thread of this process, on the test database). The package itself never imports Django; these fixtures do, to
make users and tokens."""

import uuid

import pytest


def _new_token() -> str:
    from django.contrib.auth import get_user_model

    from accounts.services import token_create

    user = get_user_model().objects.create_user(username=f"client-{uuid.uuid4().hex[:10]}", password="x")
    return token_create(user=user, name="client tests").key


@pytest.fixture
def server_url(live_server) -> str:
    return live_server.url


@pytest.fixture
def token(transactional_db) -> str:
    return _new_token()


@pytest.fixture
def other_token(transactional_db) -> str:
    return _new_token()
