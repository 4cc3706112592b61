"""Signing in: per-IP throttle on the token endpoint, the lockout per username + IP address shared by the API,
the panel and the admin (429 with Retry-After, lifted after the cool-off), and tokens revoked with the password."""

from datetime import timedelta

from axes.models import AccessAttempt
from django.conf import settings
from django.urls import reverse
from django.utils import timezone
from rest_framework.settings import api_settings
from rest_framework.test import APIClient

from accounts.models import ApiToken
from tests.factories import token_for

PASSWORD = "correct horse battery staple"  # tests.factories.UserFactory's


def get_token(user, password: str, ip: str = "10.0.0.1"):
    return APIClient(REMOTE_ADDR=ip).post("/api/auth/token/", {"username": user.username, "password": password})


def fail_until_locked_out(user, ip: str = "10.0.0.1"):
    responses = [get_token(user, "wrong", ip) for _ in range(settings.AXES_FAILURE_LIMIT)]
    assert [r.status_code for r in responses[:-1]] == [400] * (settings.AXES_FAILURE_LIMIT - 1)
    return responses[-1]


def test_token_requests_are_throttled_per_ip_address(db):
    allowed = int(api_settings.DEFAULT_THROTTLE_RATES["auth"].split("/")[0])
    client = APIClient(REMOTE_ADDR="10.0.0.2")
    # a new username each time: the throttle counts every try from the address, not one account's
    statuses = [client.post("/api/auth/token/", {"username": f"nobody{i}", "password": "x"}).status_code
                for i in range(allowed + 1)]
    assert statuses == [400] * allowed + [429]
    response = client.post("/api/auth/token/", {"username": "nobody", "password": "x"})
    assert response.status_code == 429 and int(response["Retry-After"]) > 0
    other_address = APIClient(REMOTE_ADDR="10.0.0.3")
    assert other_address.post("/api/auth/token/", {"username": "a", "password": "b"}).status_code == 400


def test_wrong_passwords_lock_the_token_endpoint_for_that_user_and_address(user):
    locked = fail_until_locked_out(user)
    assert locked.status_code == 429
    assert int(locked["Retry-After"]) == settings.AXES_COOLOFF_TIME.total_seconds()
    assert "too many login attempts" in locked.json()["detail"]
    # even the right password is refused while locked out, and that try does not extend the lockout
    assert get_token(user, PASSWORD).status_code == 429
    # the real user elsewhere is not locked out
    assert get_token(user, PASSWORD, ip="10.0.0.9").status_code == 200


def test_the_lockout_is_lifted_after_the_cool_off(user):
    assert fail_until_locked_out(user).status_code == 429
    AccessAttempt.objects.update(attempt_time=timezone.now() - settings.AXES_COOLOFF_TIME - timedelta(seconds=1))
    assert get_token(user, PASSWORD).status_code == 200


def test_a_panel_lockout_shows_a_page_and_also_locks_the_admin_and_the_api(client, user):
    login = reverse("panel:login")
    statuses = [client.post(login, {"username": user.username, "password": "wrong"}).status_code
                for _ in range(settings.AXES_FAILURE_LIMIT)]
    assert statuses == [200] * (settings.AXES_FAILURE_LIMIT - 1) + [429]
    response = client.post(login, {"username": user.username, "password": PASSWORD})
    assert response.status_code == 429 and int(response["Retry-After"]) > 0
    assert "Too many failed log-ins" in response.content.decode()
    assert "_auth_user_id" not in client.session
    response = client.post(reverse("admin:login"), {"username": user.username, "password": PASSWORD})
    assert response.status_code == 429
    assert get_token(user, PASSWORD, ip="127.0.0.1").status_code == 429


def test_admin_login_failures_lock_out_too(client, admin_user):
    url = reverse("admin:login")
    statuses = [client.post(url, {"username": admin_user.username, "password": "wrong"}).status_code
                for _ in range(settings.AXES_FAILURE_LIMIT)]
    assert statuses[-1] == 429


def test_a_password_change_revokes_the_api_tokens(user):
    tokens = [token_for(user, name=name) for name in ("one", "two")]
    user.first_name = "Ana"
    user.save()
    assert ApiToken.objects.filter(user=user, revoked_at__isnull=True).count() == 2  # other changes keep them
    user.set_password("a much longer secret 42")
    user.save()
    assert not ApiToken.objects.filter(user=user, revoked_at__isnull=True).exists()
    assert all(APIClient(HTTP_AUTHORIZATION=f"Token {key}").get("/api/memories/").status_code == 401
               for key in tokens)


def test_changing_the_password_in_the_panel_revokes_the_api_token(client, user):
    key = token_for(user)
    client.force_login(user)
    new = "a much longer secret 42"
    response = client.post(reverse("panel:password_change"),
                           {"old_password": PASSWORD, "new_password1": new, "new_password2": new})
    assert response.status_code == 302
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    assert api.get("/api/memories/").status_code == 401


def test_an_overlong_username_is_a_400_not_a_server_error(db):
    response = APIClient().post("/api/auth/token/", {"username": "x" * 300, "password": "x"})
    assert response.status_code == 400
    assert "username" in response.json()


def test_a_forged_forwarded_for_header_does_not_escape_the_throttle(db):
    allowed = int(api_settings.DEFAULT_THROTTLE_RATES["auth"].split("/")[0])
    statuses = [APIClient(REMOTE_ADDR="10.0.0.4", HTTP_X_FORWARDED_FOR=f"192.0.2.{i}")
                .post("/api/auth/token/", {"username": "nobody", "password": "x"}).status_code
                for i in range(allowed + 1)]
    assert statuses[-1] == 429


def test_behind_a_proxy_the_address_it_forwards_is_the_one_locked_out(settings, user):
    settings.REST_FRAMEWORK = {**settings.REST_FRAMEWORK, "NUM_PROXIES": 1}

    def from_client(address: str, password: str):
        client = APIClient(REMOTE_ADDR="10.0.0.100", HTTP_X_FORWARDED_FOR=f"spoofed, {address}")
        return client.post("/api/auth/token/", {"username": user.username, "password": password})

    statuses = [from_client("192.0.2.1", "wrong").status_code for _ in range(settings.AXES_FAILURE_LIMIT)]
    assert statuses[-1] == 429
    assert from_client("192.0.2.2", PASSWORD).status_code == 200
    assert AccessAttempt.objects.get().ip_address == "192.0.2.1"


def test_signing_in_makes_a_new_hashed_token_each_time_and_earlier_ones_keep_working(settings, user):
    settings.API_TOKEN_TTL_DAYS = 30
    first = get_token(user, PASSWORD).json()
    second = get_token(user, PASSWORD, ip="10.0.0.9").json()
    assert first["token"] != second["token"] and first["expires_at"]
    assert ApiToken.objects.filter(user=user, name="sign-in").count() == 2
    assert not ApiToken.objects.filter(digest__in=[first["token"], second["token"]]).exists()  # digests only
    for key in (first["token"], second["token"]):
        assert APIClient(HTTP_AUTHORIZATION=f"Token {key}").get("/api/memories/").status_code == 200
