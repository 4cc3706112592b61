"""Token auth, per-user scoping of every API object, and the OpenAPI schema/docs pages."""

import pytest
from rest_framework.test import APIClient

from tests.factories import MemoryFactory, ProjectFactory


def test_token_is_issued_for_username_and_password(user):
    client = APIClient()
    response = client.post("/api/auth/token/", {"username": user.username, "password": "correct horse battery staple"})
    assert response.status_code == 200
    token = response.json()["token"]
    client.credentials(HTTP_AUTHORIZATION=f"Token {token}")
    assert client.get("/api/memories/").status_code == 200


def test_wrong_password_gets_no_token(user):
    response = APIClient().post("/api/auth/token/", {"username": user.username, "password": "nope"})
    assert response.status_code == 400


def test_anonymous_and_bad_token_are_refused(db):
    assert APIClient().get("/api/memories/").status_code == 401
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION="Token not-a-real-token")
    assert client.get("/api/memories/").status_code == 401


@pytest.mark.parametrize("method", ["get", "patch", "delete"])
def test_another_users_memory_is_a_404_like_a_missing_one(api, other_user, method):
    theirs = MemoryFactory(owner=other_user)
    response = getattr(api, method)(f"/api/memories/{theirs.pk}/", {}, format="json")
    missing = getattr(api, method)("/api/memories/00000000-0000-0000-0000-000000000000/", {}, format="json")
    assert response.status_code == missing.status_code == 404
    assert response.json() == missing.json()
    theirs.refresh_from_db()
    assert theirs.is_active


def test_list_shows_only_own_memories(api, user, other_user):
    mine = MemoryFactory(owner=user)
    MemoryFactory(owner=other_user)
    ids = [m["id"] for m in api.get("/api/memories/").json()["results"]]
    assert ids == [str(mine.pk)]


def test_another_users_project_is_a_404(api, other_user):
    project = ProjectFactory(owner=other_user)
    assert api.get(f"/api/projects/{project.pk}/").status_code == 404


def test_cannot_attach_a_memory_to_another_users_project(api, other_user):
    project = ProjectFactory(owner=other_user)
    response = api.post("/api/memories/", {"content": "hello", "project": project.pk}, format="json")
    assert response.status_code == 400
    assert "project" in response.json()


def test_schema_and_docs_are_served(db):
    client = APIClient()
    schema = client.get("/api/schema/")
    assert schema.status_code == 200
    assert b"/api/memories/" in schema.content
    docs = client.get("/api/docs/")
    assert docs.status_code == 200
    assert b"swagger" in docs.content.lower()


def test_throttling_is_on(settings):
    from rest_framework.settings import api_settings

    assert any("UserRateThrottle" in str(c) for c in api_settings.DEFAULT_THROTTLE_CLASSES)
