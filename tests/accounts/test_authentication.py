"""API tokens: found by digest, bound to the session in one statement, refused at once when revoked or expired."""

from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone
from rest_framework.exceptions import AuthenticationFailed
from rest_framework.test import APIClient

from accounts import keys
from accounts.authentication import TokenAuthentication
from accounts.models import ApiToken, AuthEvent
from accounts.services import token_create, token_revoke
from core import rls
from tests.factories import token_for


def _bound() -> tuple[str, str, str, str]:
    with connection.cursor() as cursor:
        cursor.execute("SELECT current_setting('memento.user_id'), current_setting('memento.rls_bypass'), "
                       "current_setting('memento.project_id'), current_setting('memento.agent_id')")
        return cursor.fetchone()


def _expiring(user, days: float) -> str:
    issued = token_create(user=user, name="aged")
    ApiToken.objects.filter(pk=issued.token.pk).update(expires_at=timezone.now() + timedelta(days=days))
    return issued.key


@pytest.mark.parametrize("header", ["HTTP_AUTHORIZATION=Token", "HTTP_AUTHORIZATION=Bearer", "HTTP_X_API_KEY="])
def test_an_expired_token_is_refused_however_it_is_sent(user, header):
    name, prefix = header.split("=")
    fresh = APIClient(**{name: f"{prefix} {_expiring(user, 1)}".strip()}).get("/api/memories/")
    assert fresh.status_code == 200
    expired = APIClient(**{name: f"{prefix} {_expiring(user, -1 / 1440)}".strip()}).get("/api/memories/")
    assert expired.status_code == 401
    assert "expired" in expired.json()["detail"]


def test_new_tokens_expire_after_the_ttl_and_never_with_zero_days(settings, user):
    settings.API_TOKEN_TTL_DAYS = 30
    token = token_create(user=user, name="a").token
    assert timedelta(days=29.9) < token.expires_at - timezone.now() <= timedelta(days=30)
    settings.API_TOKEN_TTL_DAYS = 0
    key = token_create(user=user, name="b").key
    assert ApiToken.objects.get(digest=keys.digest(key)).expires_at is None
    assert APIClient(HTTP_AUTHORIZATION=f"Token {key}").get("/api/memories/").status_code == 200


def test_a_revoked_token_is_refused_by_the_next_request_and_the_others_still_work(user):
    first, second = token_create(user=user, name="one"), token_create(user=user, name="two")
    one, two = (APIClient(HTTP_AUTHORIZATION=f"Token {t.key}") for t in (first, second))
    assert one.get("/api/memories/").status_code == 200
    token_revoke(token=first.token)
    response = one.get("/api/memories/")
    assert response.status_code == 401 and "revoked" in response.json()["detail"]
    assert two.get("/api/memories/").status_code == 200


def test_an_inactive_users_token_is_refused(api, user):
    assert api.get("/api/memories/").status_code == 200
    user.is_active = False
    user.save(update_fields=["is_active"])
    response = api.get("/api/memories/")
    assert response.status_code == 401 and "inactive" in response.json()["detail"]


def test_a_good_token_binds_the_session_to_its_user_and_scope_and_a_bad_one_to_nobody(user):
    from tests.factories import ProjectFactory

    project = ProjectFactory(owner=user)
    auth = TokenAuthentication()
    auth.request = None
    found, token = auth.authenticate_credentials(token_for(user, project=project, agent_id="coder"))
    assert found == user and token.user == user and token.project_id == project.pk
    assert _bound() == (str(user.pk), "off", str(project.pk), "coder")
    rls.reset()
    with pytest.raises(AuthenticationFailed, match="expired"):
        auth.authenticate_credentials(_expiring(user, -1))
    assert _bound()[0] == ""  # the statement that found the expired token bound nobody
    with pytest.raises(AuthenticationFailed, match="Invalid"):
        auth.authenticate_credentials("mem_" + "0" * 43)
    assert _bound()[0] == ""


def test_last_use_is_recorded_with_the_address_and_refusals_are_audited(user):
    issued = token_create(user=user, name="agent")
    assert APIClient(HTTP_AUTHORIZATION=f"Token {issued.key}").get("/api/memories/").status_code == 200
    token = ApiToken.objects.get(pk=issued.token.pk)
    assert token.last_used_at is not None and token.last_used_from == "127.0.0.1"
    assert APIClient(HTTP_AUTHORIZATION="Token mem_not-a-token").get("/api/memories/").status_code == 401
    refused = AuthEvent.objects.filter(kind=AuthEvent.Kind.AUTH_FAILED).get()
    assert refused.token_prefix == "mem_not-a-to" and refused.address == "127.0.0.1" and refused.user is None
    kinds = set(AuthEvent.objects.filter(user=user).values_list("kind", flat=True))
    assert {AuthEvent.Kind.TOKEN_CREATED, AuthEvent.Kind.TOKEN_FIRST_USED} <= kinds


def test_only_a_digest_of_the_key_is_stored(user):
    issued = token_create(user=user, name="agent")
    row = ApiToken.objects.filter(pk=issued.token.pk).values().get()
    assert issued.key not in str(row) and row["digest"] == keys.digest(issued.key)
    assert issued.key.startswith(row["prefix"]) and len(row["prefix"]) < len(issued.key) // 3
